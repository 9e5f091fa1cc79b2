"""Does reading CPython's list layout (tinyc/runtime/members.py) matter on a user's path?

    python -m benchmarks.member_ids [--rounds 5] [--members 100000] [--calls 15]

The user's path: the fused kernel of the README launched from Python with its
group argument as a *list* of NumPy arrays (one 16x8 matrix per batch entry,
100,000 of them), the same list passed again on every call, as a time-stepping
loop does. tinyc recognises a list it saw before by comparing the ids of its
members, read either from the list's item array (ctypes: one memcmp) or with
`map(id, ...)` (`TINYC_NO_CPYTHON_INTERNALS=1`, what remains if the CPython
internals go). The switch is read once per process, so each round starts one
process per setting (in alternating order); each process times `--calls`
calls after three untimed ones. Reported: the median per-call time of each
setting (median over rounds of each process's median) and their ratio.
Writes member_ids.md next to this file (or to --out).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OPT_OUT = "TINYC_NO_CPYTHON_INTERNALS"

CHILD = r"""
import json, sys, time
import numpy as np
import tinyc
members, calls = int(sys.argv[2]), int(sys.argv[3])
program = tinyc.compile(open(sys.argv[1]).read())
kernel = program["fused_kernel"]
rng = np.random.default_rng(0)
A = [np.asfortranarray(rng.standard_normal((16, 8), dtype=np.float32)) for _ in range(members)]
B = np.asfortranarray(rng.standard_normal((8, 8), dtype=np.float32))
C = np.asfortranarray(rng.standard_normal((8, 16), dtype=np.float32))
D = np.zeros((16, 16, members), np.float32, order="F")
for _ in range(3):
    kernel(np.float32(1.0), A, B, C, D, batch=members)
times = []
for _ in range(calls):
    start = time.perf_counter()
    kernel(np.float32(1.0), A, B, C, D, batch=members)
    times.append(time.perf_counter() - start)
want = np.einsum("ik,jk,jl->il", A[7].astype(np.float64), B.astype(np.float64), C.astype(np.float64))
ok = bool(np.allclose(D[:, :, 7], (3 + calls) * want, rtol=1e-3, atol=1e-3))
print(json.dumps({"median": statistics.median(times), "min": min(times), "correct": ok}))
""".replace("import json, sys, time", "import json, statistics, sys, time")


def one(tree: Path, opt_out: bool, members: int, calls: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    env.pop(OPT_OUT, None)
    if opt_out:
        env[OPT_OUT] = "1"
    done = subprocess.run([sys.executable, "-c", CHILD, str(REPO / "samples" / "fused_kernel.ir"),
                           str(members), str(calls)], env=env, cwd=tree, capture_output=True, text=True,
                          check=True)
    found = json.loads(done.stdout)
    if not found["correct"]:
        raise RuntimeError("wrong result")
    return found


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.member_ids", description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--members", type=int, default=100_000)
    p.add_argument("--calls", type=int, default=15)
    p.add_argument("--tree", type=Path, default=REPO, help="the checkout whose tinyc runs")
    p.add_argument("--out", type=Path, default=HERE)
    args = p.parse_args(argv)
    load = os.getloadavg()
    results: dict[str, list[dict]] = {"list layout (ctypes)": [], "map(id) (no internals)": []}
    for round_ in range(args.rounds):
        order = [False, True] if round_ % 2 == 0 else [True, False]
        for opt_out in order:
            key = "map(id) (no internals)" if opt_out else "list layout (ctypes)"
            results[key].append(one(args.tree.resolve(), opt_out, args.members, args.calls))
    medians = {k: statistics.median(r["median"] for r in v) for k, v in results.items()}
    fast, slow = medians["list layout (ctypes)"], medians["map(id) (no internals)"]
    lines = ["# Group members read from CPython's list layout, or with map(id)", "",
             " ".join(__doc__.split("\n\n")[2].split()), "",
             f"`python -m benchmarks.member_ids --rounds {args.rounds} --members {args.members} "
             f"--calls {args.calls}` on {args.tree.resolve().name}, {datetime.datetime.now():%Y-%m-%d %H:%M}, load average "
             f"{load[0]:.1f} before.", "",
             "| how member ids are read | ms per call (median) | min of the process medians |",
             "|---|---|---|"]
    for key, runs in results.items():
        lines.append(f"| {key} | {medians[key] * 1e3:.2f} | {min(r['median'] for r in runs) * 1e3:.2f} |")
    lines += ["", f"Without the list layout a call takes {slow / fast:.2f}x as long "
                  f"(+{(slow - fast) * 1e3:.2f} ms per call)."]
    text = "\n".join(lines) + "\n"
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "member_ids.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
