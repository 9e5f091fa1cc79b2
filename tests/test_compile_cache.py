"""Compiled modules on disk (tinyc/compile_cache.py): a hit gives what compiling gives; every
input of the compilation is in the key; a damaged entry is ignored with a warning."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import tinyc
from tinyc import compile_cache, compiler, disk_cache

SOURCE = """func @scale(%alpha: f32, %A: memref<f32x16x?>, %B: memref<f32x16x?>) {
  %g = builtin.group_id : index
  %a = subview %A[:, %g] : memref<f32x16>
  %b = subview %B[:, %g] : memref<f32x16>
  %zero = constant 0.0 : f32
  axpby.n %alpha, %a, %zero, %b
}
"""
OVERRIDDEN = "func @k(%a: f32) attributes {subgroup_size=8} {}\n"


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("TINYC_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(compile_cache.ENV, raising=False)
    return tmp_path / compile_cache.SUBDIRECTORY


def hit(program: tinyc.Program) -> bool:
    return set(program.timings) == {"cache"}


def no_compiling(monkeypatch) -> None:
    def fail(*args, **kwargs):
        raise AssertionError("compiled although the cache holds the module")

    monkeypatch.setattr(compiler, "compile_to_spirv", fail)


def test_a_second_compile_loads_what_the_first_made(cache, monkeypatch):
    first = tinyc.compile(SOURCE)
    assert not hit(first) and len(list(cache.glob("*.pickle"))) == 1
    no_compiling(monkeypatch)
    again = tinyc.compile(SOURCE)
    assert hit(again)
    assert again.spirv == first.spirv
    assert again.kernel_names == first.kernel_names
    assert again._result.kernels == first._result.kernels
    assert again.schedules == first.schedules and again.std == first.std
    for stage in compiler.STAGES:
        assert again.ir(stage) == first.ir(stage)


def test_the_bounds_checked_variant_is_kept_too(cache, device, monkeypatch):
    rng = np.random.default_rng(4)
    A = np.asfortranarray(rng.standard_normal((16, 3), dtype=np.float32))
    B = np.zeros_like(A)
    tinyc.compile(SOURCE, device=device)["scale"](np.float32(2.0), A, B, batch=3, check_bounds=True)
    assert len(list(cache.glob("*.pickle"))) == 2  # the program and its checked variant
    no_compiling(monkeypatch)
    B[:] = 0
    tinyc.compile(SOURCE, device=device)["scale"](np.float32(2.0), A, B, batch=3, check_bounds=True)
    np.testing.assert_allclose(B, np.float32(2.0) * A, rtol=1e-6)


def test_kernel_signatures_come_back_with_their_interned_types(cache):
    first = tinyc.compile(SOURCE)
    again = tinyc.compile(SOURCE)
    for a, b in zip(first._result.kernels["scale"].params, again._result.kernels["scale"].params):
        assert a.type is b.type


def test_a_loaded_module_runs_correctly(cache, device, monkeypatch):
    tinyc.compile(SOURCE, device=device)
    no_compiling(monkeypatch)
    program = tinyc.compile(SOURCE, device=device)
    assert hit(program)
    rng = np.random.default_rng(3)
    A = np.asfortranarray(rng.standard_normal((16, 5), dtype=np.float32))
    B = np.zeros_like(A)
    program["scale"](np.float32(1.5), A, B, batch=5)
    np.testing.assert_allclose(B, np.float32(1.5) * A, rtol=1e-6)


def test_warnings_are_issued_again_on_a_hit(cache):
    with pytest.warns(tinyc.CompilationWarning, match="overrides the requested subgroup size"):
        tinyc.compile(OVERRIDDEN, subgroup_size=16)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program = tinyc.compile(OVERRIDDEN, subgroup_size=16)
    assert hit(program)
    [w] = [c for c in caught if issubclass(c.category, tinyc.CompilationWarning)]
    assert "subgroup_size attribute (8) overrides the requested subgroup size 16" in str(w.message)
    assert program.warnings[0].severity == "warning"


@pytest.mark.parametrize("change", [
    {"source": SOURCE.replace("16", "32")},
    {"source": SOURCE + "; a comment\n"},
    {"name": "other.ir"},
    {"subgroup_size": 8},
    {"std": "newest"},
    {"defines": {"ty": "f64"}},
    {"warnings": "none"},
], ids=lambda change: next(iter(change)))
def test_every_input_is_in_the_key(cache, change):
    tinyc.compile(SOURCE)
    arguments = {"source": SOURCE, **change}
    program = tinyc.compile(arguments.pop("source"), **arguments)
    assert not hit(program)
    assert hit(tinyc.compile(SOURCE))


def test_another_device_misses(cache, monkeypatch):
    from tinyc.target.device_info import DeviceInfo

    found, info = compiler.target_device(None)
    tinyc.compile(SOURCE)
    smaller = DeviceInfo(subgroup_sizes=(8, 16), max_work_group_size=256, local_memory_size=32768)
    monkeypatch.setattr(compiler, "target_device", lambda device: (found, smaller))
    assert not hit(tinyc.compile(SOURCE))


def test_another_driver_misses(cache, device, monkeypatch):
    from types import SimpleNamespace

    tinyc.compile(SOURCE, device=device)
    info = compiler.target_device(device)[1]
    other = SimpleNamespace(name=device.name, driver_version=device.driver_version + ".1")
    monkeypatch.setattr(compiler, "target_device", lambda requested: (other, info))
    monkeypatch.setattr("tinyc.tune.cached_or_tuned", lambda *args: None)  # no tuning lookup
    assert not hit(tinyc.compile(SOURCE, device=device))


def test_another_tinyc_version_misses(cache, monkeypatch):
    tinyc.compile(SOURCE)
    monkeypatch.setattr(disk_cache, "_fingerprint", ["9.9.9+0000"])
    assert not hit(tinyc.compile(SOURCE))


def test_a_tuned_schedule_stored_later_misses(cache):
    tinyc.compile(SOURCE)
    schedules = cache.parent / compile_cache.SCHEDULES
    schedules.mkdir(parents=True, exist_ok=True)
    (schedules / "0123.json").write_text("{}")
    assert not hit(tinyc.compile(SOURCE))
    assert hit(tinyc.compile(SOURCE))


def test_every_parameter_of_compile_is_in_the_key_or_compiles_uncached():
    import inspect

    parameters = set(inspect.signature(tinyc.compile).parameters)
    assert parameters == set(compile_cache.KEYED) | set(compile_cache.UNCACHED)


def test_the_schedules_directory_is_the_tuners():
    from tinyc.tune.cache import schedules_dir

    assert schedules_dir() == disk_cache.cache_dir() / compile_cache.SCHEDULES


def test_a_given_schedule_or_tuning_is_not_cached(cache):
    tinyc.compile(SOURCE, schedule={"scale": {}})
    assert not cache.exists() or not list(cache.glob("*.pickle"))


def test_switched_off_nothing_is_stored(cache, monkeypatch):
    monkeypatch.setenv(compile_cache.ENV, "0")
    tinyc.compile(SOURCE)
    assert not hit(tinyc.compile(SOURCE))
    assert not cache.exists()


def damage(cache: Path, content: bytes) -> Path:
    (stored,) = cache.glob("*.pickle")
    stored.write_bytes(content)
    return stored


class NotTinycs:
    def __reduce__(self):
        return (print, ("this must never run",))


def call_through(module: bytes, name: bytes, argument: bytes) -> bytes:
    """A pickle (protocol 4) calling module.name(argument): a dotted name reaches what a tinyc
    module imports (`tinyc.runtime.device` `os.system`)."""
    def text(data: bytes) -> bytes:
        return b"\x8c" + bytes([len(data)]) + data

    return b"\x80\x04" + text(module) + text(name) + b"\x93" + text(argument) + b"\x85R."


@pytest.mark.parametrize("content", [
    b"", b"garbage", pickle.dumps([1, 2]), pickle.dumps({"key": {}, "result": None}),
    pickle.dumps({"key": {}, "result": NotTinycs()}),
    call_through(b"tinyc.runtime.device", b"os.system", b"echo this must never run"),
], ids=["empty", "garbage", "list", "other-key", "foreign-class", "through-a-tinyc-module"])
def test_a_damaged_entry_warns_and_is_replaced(cache, content, capfd):
    first = tinyc.compile(SOURCE)
    stored = damage(cache, content)
    with pytest.warns(disk_cache.TuningWarning, match="ignoring the cache entry"):
        program = tinyc.compile(SOURCE)
    assert not hit(program) and program.spirv == first.spirv
    assert "this must never run" not in capfd.readouterr().out
    assert hit(tinyc.compile(SOURCE))
    assert stored.exists()


def test_clear_removes_the_entries(cache):
    tinyc.compile(SOURCE)
    assert compile_cache.clear() == 1
    assert not list(cache.glob("*.pickle"))


def test_a_new_process_compiles_nothing(cache, tmp_path):
    """What the issue measures: a fresh process's compile of a program seen before loads
    neither the parser nor the passes nor codegen."""
    tinyc.compile(SOURCE)
    code = ("import sys, json, tinyc\n"
            "program = tinyc.compile(sys.stdin.read())\n"
            "print(json.dumps([sorted(program.timings), sorted(m for m in sys.modules if m.startswith("
            "('tinyc.parser', 'tinyc.passes', 'tinyc.spirv', 'tinyc.ir.verifier', 'tinyc.tune')))]))")
    import os

    # The same code as this process (the cache key holds a fingerprint of tinyc's files): under
    # `python -m pytest` in a checkout, this process imports the checkout, not site-packages.
    package_root = str(Path(tinyc.__file__).resolve().parent.parent)
    env = dict(os.environ, TINYC_CACHE_DIR=str(cache.parent),
               PYTHONPATH=os.pathsep.join([package_root, os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", code], input=SOURCE, env=env, cwd=tmp_path,
                          capture_output=True, text=True, check=True)
    stages, modules = json.loads(done.stdout)
    assert stages == ["cache"] and modules == []
