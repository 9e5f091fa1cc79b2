"""Byte identity of the SPIR-V two checkouts produce: a guard for speed work on codegen.

    PYTHONPATH=TREE python benchmarks/spirv_identity.py dump OUT.json [--recorded R.jsonl] [--fuzz SEED:COUNT]
    python benchmarks/spirv_identity.py compare BEFORE.json AFTER.json

`dump` compiles, with the tinyc found on PYTHONPATH, every samples/*.ir and
tests/**/*.ir of this repository, the programs of a fuzz seed, and programs
recorded from a test run (JSON lines of {"source", options...}, e.g. written by
a pytest plugin wrapping `compile_to_spirv`), each with check_bounds off and on,
and writes the SHA-256 of each binary and of the rest of the result (kernel
infos with the launch analysis, stage texts, warnings), or of the error raised. `compare` lists
the cases whose bytes differ. Optimisations of the compiler must leave every
case byte-identical (benchmarks/compile_speed_warm.md reports the last check).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any, Iterator

REPO = Path(__file__).resolve().parent.parent


def _inputs(recorded: Path | None, fuzz: str | None) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(case name, source, options) of every program to compile."""
    for path in sorted(REPO.glob("samples/*.ir")) + sorted(REPO.glob("tests/**/*.ir")):
        yield str(path.relative_to(REPO)), path.read_text(), {}
    if fuzz:
        from tinyc.fuzz.programs import kernels

        seed, count = (int(x) for x in fuzz.split(":"))
        for i, kernel in enumerate(kernels(seed, count)):
            yield f"fuzz {seed}:{i}", kernel.text, {}
    if recorded is not None:
        seen: set[str] = set()
        for n, line in enumerate(recorded.read_text().splitlines()):
            entry = json.loads(line)
            source = entry.pop("source")
            entry.pop("check_bounds", None)
            key = json.dumps([source, entry], sort_keys=True)
            if key not in seen:
                seen.add(key)
                yield f"recorded {n}", source, entry


def _digest(source: str, options: dict[str, Any]) -> str:
    """SHA-256 of the binary, then of what else the compile gives (kernel infos with the
    launch analysis, stage texts, warnings)."""
    from tinyc.pipeline import compile_to_spirv

    try:
        result = compile_to_spirv(source, validate=False, **options)
    except Exception as exc:  # the same error on both sides is identity too
        return f"error {type(exc).__name__}: {hashlib.sha256(str(exc).encode()).hexdigest()[:16]}"
    rest = repr((result.kernels, result.stages, [str(w) for w in result.warnings])).encode()
    return f"{hashlib.sha256(result.spirv).hexdigest()} {hashlib.sha256(rest).hexdigest()[:16]}"


def dump(out: Path, recorded: Path | None, fuzz: str | None) -> None:
    """Write {case: digest} for every input, check_bounds off and on."""
    digests: dict[str, str] = {}
    for name, source, options in _inputs(recorded, fuzz):
        for checked in (False, True):
            digests[f"{name} check_bounds={checked}"] = _digest(source, {**options, "check_bounds": checked})
    out.write_text(json.dumps(digests, indent=0, sort_keys=True) + "\n")
    errors = sum(d.startswith("error") for d in digests.values())
    import tinyc

    print(f"{len(digests)} cases ({errors} raise) by {Path(tinyc.__file__).parent} -> {out}")


def compare(before: Path, after: Path) -> int:
    """Print the differing cases; exit status 1 if any."""
    old, new = json.loads(before.read_text()), json.loads(after.read_text())
    differ = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
    for key in differ:
        print(f"DIFFERS: {key}: {old.get(key)} -> {new.get(key)}")
    same = len(old.keys() & new.keys()) - sum(k in old and k in new for k in differ)
    print(f"{same} identical, {len(differ)} differ, "
          f"{sum(not v.startswith('error') for v in new.values())} binaries")
    return 1 if differ else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("out", type=Path)
    d.add_argument("--recorded", type=Path, help="JSON lines of recorded compile_to_spirv calls")
    d.add_argument("--fuzz", help="SEED:COUNT fuzz programs (tinyc.fuzz.programs)")
    c = sub.add_parser("compare")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    args = p.parse_args(argv)
    if args.command == "dump" and os.environ.get("PYTHONHASHSEED") != "0":  # reprs of sets: one order
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": "0"})
    if args.command == "dump":
        dump(args.out, args.recorded, args.fuzz)
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
