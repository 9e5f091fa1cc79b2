"""What `tinyc check` says about a corpus, to compare two checkouts (a speed change must not
change a word of it).

    python -m benchmarks.check_outputs --baseline DIR [--seeds 600] [--mutants 3]

For each program of the corpus (every tests/**/*.ir and samples/*.ir file, the
IR strings of the tests' Python files, the fuzz campaign's programs of a few
seeds with mutated copies of each, the einsum corpus's contraction kernels,
random kernels of index arithmetic with bounded and unbounded accesses, and
benchmarks/parse_speed.py's generated function) one line per fact is written:
the diagnostics (errors, warnings and `tinyc check`'s launch-bounds notes)
rendered as text (plain and coloured) and as JSON, the printed
IR of a program that checks, and the whole launch-bounds analysis of each of
its functions (conditions, notes, the batch-split verdict). The checkout's own
`tinyc check` command is also run on the files and on the generated 40,002
instructions. Both checkouts write their dump from a fresh process (each with
its own PYTHONPATH); the dumps are compared line by line and the first
differences are shown. Exit 0 when identical.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def corpus(seeds: int, mutants: int) -> list[tuple[str, str]]:
    """(name, text) of every program compared."""
    from benchmarks.parse_speed import source
    from tinyc.fuzz.mutate import mutate
    from tinyc.fuzz.programs import program_kernel

    found: list[tuple[str, str]] = []
    files = sorted([*REPO.glob("tests/**/*.ir"), *REPO.glob("samples/*.ir")])
    found += [(str(p.relative_to(REPO)), p.read_text()) for p in files]
    for path in sorted(REPO.glob("tests/**/*.py")):
        try:
            tree = ast.parse(path.read_text())
        except SyntaxError:
            continue
        texts = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                 and "func @" in n.value]
        found += [(f"{path.relative_to(REPO)}#{k}", t) for k, t in enumerate(texts)]
    for i in range(seeds):
        text = program_kernel(20261127, i).text
        found.append((f"fuzz {i}", text))
        rng = random.Random(i)
        for m in range(mutants):
            found.append((f"fuzz {i} mutant {m}", mutate(text, rng)))
    for case, subscripts, shapes, dtype in _einsum_cases():
        found.append((f"einsum {case}", _einsum_kernel(subscripts, shapes, dtype)))
    found += [(f"indices {i}", index_program(random.Random(i))) for i in range(seeds)]
    found.append(("parse_speed 2000", source(2000)))
    return found


def _einsum_cases() -> list:
    sys.path.insert(0, str(REPO / "tests" / "contract"))
    from corpus import cases

    return [c for c in cases() if "complex" not in c[3]]


def _einsum_kernel(subscripts: str, shapes: list, dtype: str) -> str:
    """The contraction kernel tinyc writes for `subscripts` on C-order arrays."""
    import numpy as np

    from tinyc.contractions.compiled import Signature, analyse, kernel_spec
    from tinyc.contractions.emit import build_kernel

    sigs = []
    for shape in shapes:
        a = np.empty(shape, dtype)
        sigs.append(Signature("numpy", a.dtype, a.shape, a.strides))
    analysis = analyse(subscripts, sigs, None, None, None)
    if analysis.empty:
        return ""
    return build_kernel(kernel_spec(analysis, None, False)).checked_source()


def index_program(rng: random.Random) -> str:
    """A random kernel of index arithmetic, loops, guards, loads and stores: bounded and
    unbounded accesses (indices loaded from memory, loop bounds from arguments)."""
    lines = ["func @r(%A: memref<f32x?x?>, %B: memref<f32x8x16>, %I: memref<i32x?>, %n: index, "
             "%m: i32, %C: memref<f32x?>) {", "  %g = builtin.group_id : index"]
    ints, depth, count = ["%g", "%n"], 1, 0

    def fresh() -> str:
        nonlocal count
        count += 1
        return f"%v{count}"

    def emit(text: str) -> None:
        lines.append("  " * depth + text)

    opened: list[int] = []
    for _ in range(rng.randint(3, 25)):
        kind = rng.choice(("const", "arith", "arith", "size", "load", "access", "access", "for", "if",
                           "close", "cast"))
        v = fresh()
        if kind == "const":
            emit(f"{v} = constant {rng.choice((0, 1, 2, 4, 7, 8, 15, 16, -1))} : index")
        elif kind == "arith":
            op = rng.choice(("add", "sub", "mul", "min", "max", "div", "rem"))
            emit(f"{v} = arith.{op} {rng.choice(ints)}, {rng.choice(ints)} : index")
        elif kind == "size":
            emit(f"{v} = size %{rng.choice('AIC')}[0] : index")
        elif kind == "load":
            emit(f"{v}i = load %I[{rng.choice(ints)}] : i32")
            emit(f"{v} = cast {v}i : index")
        elif kind == "cast":
            emit(f"{v}i = cast {rng.choice(ints)} : i32")
            emit(f"{v} = cast {v}i : index")
        elif kind == "access":
            a, b = rng.choice(ints), rng.choice(ints)
            target = rng.choice(("%A[{a}, {b}]", "%B[{a}, {b}]", "%C[{a}]")).format(a=a, b=b)
            emit(f"{v} = load {target} : f32")
            emit(f"store {v}, {target}")
            continue
        elif kind == "for":
            emit(f"for {v} = {rng.choice(ints)}, {rng.choice(ints)} {{")
        elif kind == "if":
            emit(f"{v} = cmp.{rng.choice(('lt', 'le', 'gt', 'ge'))} {rng.choice(ints)}, "
                 f"{rng.choice(ints)} : bool")
            emit(f"if {v} {{")
        elif kind == "close":
            if opened:
                depth -= 1
                emit("}")
                ints = ints[:opened.pop()]
            continue
        if kind in ("for", "if"):
            opened.append(len(ints))
            depth += 1
        if kind != "if":
            ints.append(v)
    while opened:
        depth -= 1
        emit("}")
        opened.pop()
    return "\n".join(lines) + "\n}\n"


def dump(out: Path, seeds: int, mutants: int) -> None:
    """This process's checkout: one line per fact about every program of `corpus`."""
    from tinyc.analysis.launch_bounds import analyse, launch_notes
    from tinyc.diagnostics import CompilationError
    from tinyc.ir.printer import print_program
    from tinyc.pipeline import check_source

    with out.open("w") as f:
        for name, text in corpus(seeds, mutants):
            f.write(f"{_PROGRAM}{name}\n")
            try:
                program = check_source(text, "input.ir")
            except CompilationError as err:
                f.write(f"{name}: errors\n{err.render(False)}\n{err.render(True)}\n{err.to_json()}\n")
                continue
            except Exception as exc:  # the same crash on both sides is the same output
                f.write(f"{name}: crash {type(exc).__name__}: {exc}\n")
                continue
            f.write(f"{name}: checked\n{print_program(program)}\n")
            try:
                said = list(program.warnings) + launch_notes(program)
                f.write("".join(d.render(False) + "\n" + d.render(True) + "\n" for d in said))
                f.write(json.dumps([d.to_json() for d in said]) + "\n")
                for fn in program.functions:
                    bounds = analyse(fn)
                    f.write(f"{fn.name}: {bounds.conditions!r}\n{bounds.unbounded!r}\n"
                            f"{bounds.batch_split_problem!r} {sorted(map(repr, bounds.symbols))} "
                            f"{bounds.last_groups!r} {getattr(bounds, 'write_blocks', None)!r}\n")
            except Exception as exc:
                f.write(f"crash {type(exc).__name__}: {exc}\n")


def cli_outputs(checkout: Path, work: Path) -> str:
    """The checkout's `tinyc check` (text and JSON) of every .ir file and of 40,002 instructions."""
    from benchmarks.parse_speed import source

    big = work / "big.ir"
    if not big.exists():
        big.write_text(source(40000))
    files = sorted(str(p) for p in [*REPO.glob("tests/**/*.ir"), *REPO.glob("samples/*.ir")])
    env = dict(os.environ, PYTHONPATH=str(checkout))
    said = []
    for args in ([*files], ["--format", "json", *files], [str(big)], ["--format", "json", str(big)]):
        run = subprocess.run([sys.executable, "-m", "tinyc.cli", "check", *args], capture_output=True,
                             text=True, env=env, cwd=work)
        said.append(f"exit {run.returncode}\n{run.stdout}{run.stderr}")
    return "".join(said)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.check_outputs", description=__doc__.splitlines()[0])
    p.add_argument("--baseline", type=Path, help="another checkout (e.g. a copy of main)")
    p.add_argument("--seeds", type=int, default=600, help="fuzz programs in the corpus")
    p.add_argument("--mutants", type=int, default=3, help="mutated copies of each fuzz program")
    p.add_argument("--dump", type=Path, help=argparse.SUPPRESS)  # a child process's output file
    args = p.parse_args(argv)
    if args.dump is not None:
        dump(args.dump, args.seeds, args.mutants)
        return 0
    if args.baseline is None:
        p.error("--baseline DIR is required")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        dumps = []
        for label, checkout in (("before", args.baseline.resolve()), ("after", REPO)):
            out = work / f"{label}.txt"
            env = dict(os.environ, PYTHONPATH=str(checkout))  # (this file run by path: its tinyc)
            subprocess.run([sys.executable, __file__, "--dump", str(out),
                            "--seeds", str(args.seeds), "--mutants", str(args.mutants)],
                           check=True, env=env, cwd=REPO)
            found = _blocks(out.read_text())
            found["(the tinyc check commands)"] = cli_outputs(checkout, work)
            dumps.append(found)
    before, after = dumps
    differing = [name for name in before if before[name] != after.get(name)]
    differing += [name for name in after if name not in before]
    print(f"{len(before)} programs before, {len(after)} after, {len(differing)} differ"
          + "".join(f"\n  {name}" for name in differing[:20]))
    for name in differing[:3]:
        print("".join(difflib.unified_diff(before.get(name, "").splitlines(True),
                                           after.get(name, "").splitlines(True), "before", "after",
                                           n=1)))
    return 0 if not differing else 1


_PROGRAM = "\x00program "
"""Starts each program's lines in a dump."""


def _blocks(dumped: str) -> dict[str, str]:
    """A dump's lines per program."""
    found = {}
    for part in dumped.split(_PROGRAM)[1:]:
        name, _, rest = part.partition("\n")
        found[name] = rest
    return found


if __name__ == "__main__":
    sys.exit(main())
