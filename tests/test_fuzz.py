"""The differential fuzzer: a fixed-seed slice of the campaign, and its parts one by one."""

from __future__ import annotations

import io
import random
import re
import time

import numpy as np
import pytest

from tinyc.fuzz import campaign, chunks, mutate, runner
from tinyc.fuzz.facts import SCALARS
from tinyc.fuzz.programs import generate_kernel, kernels
from tinyc.fuzz.instructions import TABLE
from tinyc.fuzz.program import Kernel
from tinyc.fuzz.shrink import shrink

CI_SEED = 20261123
SUMMARY = re.compile(r"^programs (\d+) mismatches (\d+) internal-errors (\d+) hangs (\d+)$")


def test_fixed_seed_slice_of_the_campaign(device, capsys):
    """200 random programs on the device against the reference, and 1000 mutants."""
    code = campaign.main(["--programs", "200", "--seed", str(CI_SEED), "--mutants", "1000",
                          "--per-module", "25", "--quiet"])
    out, err = capsys.readouterr()
    last = out.strip().splitlines()[-1]
    assert SUMMARY.match(last), last
    assert last == "programs 200 mismatches 0 internal-errors 0 hangs 0", err[-4000:]
    assert code == 0


def test_programs_are_reproducible_and_cover_the_language():
    first = list(kernels(7, 200))
    again = list(kernels(7, 200))
    assert [k.text for k in first] == [k.text for k in again]
    assert {k.std for k in first} == {"seed", "newest"}
    used = set().union(*(k.features for k in first))
    assert {entry.name for entry in TABLE} <= used, {entry.name for entry in TABLE} - used
    text = "\n".join(k.text for k in first)
    for t in SCALARS:
        assert re.search(rf"\b{t}\b", text), t
    for word in ("coopmatrix", "group<", "strided<", "foreach", "parallel", ".atomic", ".t", "init("):
        assert word in text, word


def test_the_table_comes_from_the_classes_and_programs_use_every_class():
    """Every entry writes an instruction class; generated programs, parsed, hold an instance of
    every class of the language (those without an entry of their own are written inside
    another: yield, the coopmatrix chain of parallel regions, the builtins of subgroups)."""
    from tinyc.compiler import check_source
    from tinyc.ir.instructions import instruction_classes

    assert all(entry.cls in instruction_classes() for entry in TABLE)
    found: set[type] = set()
    for kernel in kernels(7, 200):
        found |= {type(inst) for inst in check_source(kernel.text)[kernel.name].walk()}
    missing = {cls.__name__ for cls in instruction_classes()} - {cls.__name__ for cls in found}
    assert missing == set()


def test_shared_accumulators_get_adds_only():
    """Every work-group adds into %acc; an atomic max or min there would not commute with the
    adds (a program of seed 12 did both: the result depended on the order)."""
    texts = [k.text for k in kernels(12, 300) if "%acc" in k.text]
    assert any("atomic_add" in t and "%acc[" in t for t in texts)
    for text in texts:
        for line in text.splitlines():
            assert not ("%acc[" in line and re.search(r"atomic_(max|min)", line)), line


def test_seed_programs_come_out_as_the_campaigns_drew_them():
    """A program that is not a newest one is drawn exactly as before the newest language's
    entries existed (their seeds in docs/fuzzing.md still reproduce them)."""
    kernel = generate_kernel(random.Random("9191:19070"), "k19070")
    assert kernel.std == "seed" and "; std:" not in kernel.text
    seed_table = [entry for entry in TABLE if not entry.newest]
    assert [(e.name, e.weight) for e in seed_table] == [  # the table of the campaigns before
        ("constant", 1.0), ("arith", 3.0), ("arith.bool", 0.5), ("arith.complex", 0.4), ("cast", 1.2),
        ("cmp", 0.8), ("math", 0.5), ("builtin", 0.8), ("load", 2.0), ("store", 2.0), ("size", 0.5),
        ("subview", 1.0), ("expand", 0.5), ("fuse", 0.5), ("alloca", 0.4), ("lifetime_stop", 0.6),
        ("for", 1.0), ("if", 1.0), ("foreach", 1.0), ("parallel", 1.0), ("barrier", 0.3), ("gemm", 1.0),
        ("gemv", 0.8), ("ger", 0.6), ("axpby", 0.8), ("sum", 0.6), ("cumsum", 0.6),
        ("hadamard_product", 0.6), ("subgroup_op", 0.8), ("subgroup_broadcast", 0.5)]
    assert [k.text for k in (generate_kernel(random.Random(f"7:{i}"), f"k{i}") for i in range(20))] \
        == [k.text for k in (generate_kernel(random.Random(f"7:{i}"), f"k{i}", seed_table)
                             for i in range(20))]


def test_the_summary_line_and_exit_status(monkeypatch, capsys):
    def fake_run_module(kernels, seed):
        return [runner.Outcome(k, "mismatch" if k.name == "k1" else "ok") for k in kernels]

    monkeypatch.setattr(chunks, "run_module", fake_run_module)
    code = campaign.main(["--programs", "3", "--seed", "1", "--mutants", "0", "--no-shrink", "--quiet",
                          "--in-process"])
    out, err = capsys.readouterr()
    assert out.strip().splitlines()[-1] == "programs 3 mismatches 1 internal-errors 0 hangs 0"
    assert code == 1 and "--- mismatch: seed 1 program 1" in err


def test_the_oracle_catches_a_wrong_reference_collective(device, monkeypatch):
    """Break the reference's handling of gemm (alpha ignored; the product itself is the class's
    NumPy meaning, which the oracle shares): the NumPy check must notice."""
    import numpy as np

    import tinyc.reference.interpreter  # noqa: F401  (registers the evaluators: patched after)
    from tinyc.ir.instructions import Gemm
    from tinyc.reference.memory import read_array, write_array
    from tinyc.reference.scalars import compute_dtype
    from tinyc.reference.state import EVALUATORS

    def wrong_gemm(inst, st):
        if st.on_collective is not None:
            st.on_collective(inst, st)
        out = st.get(inst.output)
        dtype = compute_dtype(out.element)
        term = inst.evaluate([read_array(st.get(v), dtype, "gemm") for v in inst.inputs])
        beta = np.asarray(st.get(inst.beta)).astype(dtype)
        write_array(out, term + beta * read_array(out, dtype, "gemm"), "gemm")
        if st.after_collective is not None:
            st.after_collective(inst, st)

    monkeypatch.setitem(EVALUATORS, Gemm, wrong_gemm)
    kernel = _gemm_kernel()
    [outcome] = runner.run_module([kernel], 0)
    assert outcome.status == "mismatch" and "reference vs NumPy: gemm" in outcome.detail


def test_the_bounds_checked_run_must_match_the_plain_one(device, monkeypatch):
    """Every program also runs with check_bounds=True. Make the dry run write (the bug of issue
    21: it then accumulated the gemm's beta = 1 twice): the fuzzer must report it."""
    from tinyc.spirv.codegen import writes

    kernel = _gemm_kernel()
    [outcome] = runner.run_module([kernel], 0)
    assert outcome.status == "ok", outcome.detail
    monkeypatch.setenv("TINYC_COMPILE_CACHE", "0")  # compiled again, by the patched codegen
    monkeypatch.setattr(writes, "left_out", lambda ctx, memref: False)
    [outcome] = runner.run_module([kernel], 0)
    assert outcome.status == "mismatch" and "bounds-checked vs plain device run: %C" in outcome.detail


def test_device_and_reference_results_are_compared(device):
    kernel = _gemm_kernel()
    [outcome] = runner.run_module([kernel], 0)
    assert outcome.status == "ok" and outcome.checked_collectives == kernel.batch
    args = runner.build_arguments(kernel, 1)
    other = runner.copy_arguments(args)
    assert runner.compare(kernel, args, other) is None
    other[2][0, 0, 0] += 1.0
    assert "%C differs at (0, 0, 0)" in runner.compare(kernel, args, other)


def test_an_overflow_may_end_as_inf_or_nan(device):
    """Seed 6161 program 5115: a c32 gemm whose products overflow. The reference (complex64)
    got nan where NumPy (complex128, rounded) got inf, and the device nan-inf·j where the
    reference got -inf-inf·j: both right, as the order of operations decides."""
    kernel = generate_kernel(random.Random("6161:5115"), "k5115")
    [outcome] = runner.run_module([kernel], 6161)
    assert outcome.status == "ok", outcome.detail
    from tinyc.ir.types import c32, f32
    inf, nan = np.inf, np.nan
    got = np.array([complex(nan, -inf), 1 + 1j], np.complex64)
    assert runner._differs(c32, got, np.array([complex(-inf, -inf), 1 + 1j], np.complex64), False) is None
    assert runner._differs(c32, got, np.array([complex(-inf, -inf), 2 + 1j], np.complex64), False)
    assert runner._differs(f32, np.array([inf], np.float32), np.array([3.0], np.float32), False)


def test_a_float_remainder_takes_exact_operands_only(device):
    """Seed 9191 program 19070: fmod of an f16 square of a cumsum result (rounded within the
    tolerance) came out anywhere in [0, divisor). A float rem now draws exact operands."""
    kernel = generate_kernel(random.Random("9191:19070"), "k19070")
    [outcome] = runner.run_module([kernel], 9191)
    assert outcome.status == "ok", outcome.detail
    rems = [k for k in (generate_kernel(random.Random(f"5:{i}"), f"k{i}") for i in range(300))
            if re.search(r"arith\.rem %\w+, %\w+ : (f16|bf16|f32|f64)", k.text)]
    assert rems  # float remainders are still generated


def _gemm_kernel() -> Kernel:
    from tinyc.fuzz.program import ArrayArg
    from tinyc.ir.types import f32

    text = """func @g(%A: memref<f32x4x3>, %B: memref<f32x3x5>, %C: memref<f32x4x5x?>) {
  %i = builtin.group_id : index
  %c = subview %C[:, :, %i] : memref<f32x4x5>
  %alpha = constant 0.5 : f32
  %beta = constant 1.0 : f32
  gemm.n.n %alpha, %A, %B, %beta, %c
}
"""
    args = [ArrayArg("A", f32, (4, 3), (1, 4), False), ArrayArg("B", f32, (3, 5), (1, 3), False),
            ArrayArg("C", f32, (4, 5, 2), (1, 4, 20), True)]
    return Kernel("g", text, 2, args, {"C": False}, {"C": 1e-5})


def test_the_shrinker_deletes_what_does_not_matter():
    text = """func @k(%a: f32) {
  %x = arith.add %a, %a : f32
  %y = arith.mul %x, %a : f32
  for %i = %z, %n {
    %q = arith.sub %a, %a : f32
  }
  %bad = arith.div %y, %a : f32
  %w = arith.neg %a : f32
}
"""
    kernel = Kernel("k", text, 1, [], {})

    def still_fails(k: Kernel) -> bool:  # "fails" while the division and what it needs remain
        return all(word in k.text for word in ("%bad = arith.div %y", "%y = arith.mul %x", "%x = arith"))

    small = shrink(kernel, still_fails)
    assert small.text.splitlines() == ["func @k(%a: f32) {", "  %x = arith.add %a, %a : f32",
                                       "  %y = arith.mul %x, %a : f32", "  %bad = arith.div %y, %a : f32",
                                       "}"]


def test_mutants_are_classified(monkeypatch):
    valid = "func @k(%a: f32) {\n  %x = arith.add %a, %a : f32\n}\n"
    assert mutate.check_mutant(valid).status == "compiled"
    assert mutate.check_mutant(valid.replace(": f32\n}", "\n}")).status == "rejected"
    rng = random.Random(3)
    for _ in range(200):  # every mutation keeps to text and the compiler never crashes on them
        outcome = mutate.check_mutant(mutate.mutate(valid, rng))
        assert outcome.status in ("compiled", "rejected"), outcome.detail

    import tinyc

    def crash(*args, **kwargs):
        raise KeyError("boom")

    monkeypatch.setattr(tinyc, "compile", crash)
    outcome = mutate.check_mutant(valid)
    assert outcome.status == "internal" and "KeyError" in outcome.detail

    def slow(*args, **kwargs):
        time.sleep(5)

    monkeypatch.setattr(tinyc, "compile", slow)
    assert mutate.check_mutant(valid, time_limit=0.5).status == "hang"


def test_strided_arguments_keep_their_layout():
    from tinyc.fuzz.program import ArrayArg
    from tinyc.ir.types import f32

    kernel = Kernel("k", "", 1, [ArrayArg("A", f32, (3, 4), (2, 7), False)], {})
    [a] = runner.build_arguments(kernel, 0)
    assert a.strides == (8, 28) and a.shape == (3, 4)
    [b] = runner.copy_arguments([a])
    assert b.strides == a.strides and np.array_equal(a, b)


def test_a_crash_of_the_device_compiler_is_counted_and_the_campaign_goes_on(monkeypatch):
    """Workers die on program 4 (alone too) and on programs 6 and 7 in one module."""
    from tinyc.fuzz import isolate

    class FakeWorker:
        def __init__(self, seed, indices, per_module, shrinking):
            self.indices, self.per_module, self.death = indices, per_module, ""

        def modules(self):
            for at in range(self.indices.start, self.indices.stop, self.per_module):
                part = range(at, min(at + self.per_module, self.indices.stop))
                if 4 in part or {6, 7} <= set(part):
                    self.death = "the worker process died (exit status -11)"
                    return
                tally = chunks.Tally(programs=len(part))
                tally.statuses["ok"] += len(part)
                yield {"stop": part.stop, "alive": True, "tally": tally.to_json(), "reports": ""}

    monkeypatch.setattr(isolate, "Worker", FakeWorker)
    tally, out = chunks.Tally(), io.StringIO()
    assert isolate.run_isolated(1, range(10), 3, tally, out, False, None)
    assert tally.programs == 10 and tally.statuses == {"ok": 9, "crash": 1, "module crash": 1}
    assert tally.summary() == "programs 10 mismatches 0 internal-errors 2 hangs 0"
    reports = out.getvalue()
    assert "--- crash: seed 1 program 4 (k4)" in reports and "exit status -11" in reports
    assert "--- crash: seed 1 programs 6..8 as one module (each alone runs)" in reports
