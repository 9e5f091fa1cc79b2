"""Device binaries on disk (tinyc/runtime/binary_cache.py): stored, loaded, rebuilt, switched off.

Each test uses a private cache directory and a kernel of its own bytes (a
different scale constant), so the in-process program cache never hides the
path under test. Results are checked against NumPy every time.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tinyc
from tinyc.runtime import binary_cache

ROOT = Path(__file__).resolve().parents[2]


def source(scale: float) -> str:
    return f"""func @scale(%A: memref<f32x64x?>, %B: memref<f32x64x?>) {{
  %g = builtin.group_id : index
  %a = subview %A[:, %g] : memref<f32x64>
  %b = subview %B[:, %g] : memref<f32x64>
  %s = constant {scale} : f32
  %zero = constant 0.0 : f32
  axpby.n %s, %a, %zero, %b
}}
"""


def check(program: tinyc.Program, scale: float) -> None:
    A = np.asfortranarray(np.random.default_rng(1).uniform(-1, 1, (64, 7)).astype(np.float32))
    B = np.zeros_like(A)
    program["scale"](A, B, batch=7)
    np.testing.assert_array_equal(B, np.float32(scale) * A)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch, device) -> Path:
    if device.backend.name != "opencl":
        pytest.skip("the binary cache works on the OpenCL backend")
    monkeypatch.setenv("TINYC_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TINYC_BINARY_CACHE", raising=False)
    return tmp_path / "programs"


def test_a_built_program_is_stored_and_loaded_from_its_binary(cache_dir, device):
    from tinyc.runtime.device import select_queue

    program = tinyc.compile(source(1.25), device=device)
    check(program, 1.25)
    (stored,) = cache_dir.glob("*.bin")
    assert stored.stat().st_size > 0
    loaded = binary_cache.build(select_queue(device), program.spirv)  # a hit: no JIT
    assert loaded is not None and loaded.has_sycl_kernel("scale")
    assert list(cache_dir.glob("*.bin")) == [stored]


def test_a_damaged_binary_is_rebuilt_from_spirv(cache_dir, device):
    from tinyc.runtime.device import select_queue

    program = tinyc.compile(source(2.5), device=device)
    check(program, 2.5)
    (stored,) = cache_dir.glob("*.bin")
    stored.write_bytes(b"\x7fELF garbage")
    with pytest.warns(tinyc.TuningWarning, match="ignoring the program binary"):
        rebuilt = binary_cache.build(select_queue(device), program.spirv)
    assert rebuilt is not None and rebuilt.has_sycl_kernel("scale")
    assert stored.read_bytes() != b"\x7fELF garbage", "replaced by a fresh binary"


def test_switched_off_nothing_is_stored(cache_dir, device, monkeypatch):
    monkeypatch.setenv("TINYC_BINARY_CACHE", "0")
    check(tinyc.compile(source(3.75), device=device), 3.75)
    assert not cache_dir.exists() or not list(cache_dir.glob("*.bin"))


def test_a_second_process_runs_from_the_binary(cache_dir, device):
    env = {**os.environ, "TINYC_CACHE_DIR": str(cache_dir.parent),
           "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    sample = cache_dir.parent / "k.ir"
    sample.write_text(source(4.5))
    command = [sys.executable, "-m", "tinyc.cli", "run", str(sample), "--batch", "9", "--check",
               "--device", device.filter_string]
    first = subprocess.run(command, env=env, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    # the kernel and the bounds-checked variant that --check launches first
    stored = {path: path.stat().st_mtime_ns for path in cache_dir.glob("*.bin")}
    assert len(stored) == 2
    for path, before in stored.items():
        os.utime(path, ns=(before - 10**9, before - 10**9))
    second = subprocess.run(command, env=env, capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    assert "check: results match the NumPy reference" in second.stdout
    for path, before in stored.items():
        assert path.stat().st_mtime_ns > before - 10**9, "the second run loaded the binaries"
    assert sorted(cache_dir.glob("*.bin")) == sorted(stored), "and stored no other"


def test_the_runtimes_code_generation_settings_are_part_of_the_key(device, monkeypatch):
    """CL_CONFIG_CPU_TARGET_ARCH=core-avx2 makes the CPU runtime emit AVX2 code on an AVX-512
    host: a binary made under one setting must not be loaded under another (a shared cache
    directory, a user who tries the AVX2 path). The dump settings change no code."""
    from tinyc.runtime.device import select_queue

    queue = select_queue(device)
    monkeypatch.delenv("CL_CONFIG_CPU_TARGET_ARCH", raising=False)
    plain = binary_cache.cache_key(queue, b"spirv")
    monkeypatch.setenv("CL_CONFIG_CPU_TARGET_ARCH", "core-avx2")
    assert binary_cache.cache_key(queue, b"spirv") != plain
    monkeypatch.delenv("CL_CONFIG_CPU_TARGET_ARCH")
    monkeypatch.setenv("CL_CONFIG_DUMP_ASM", "True")
    assert binary_cache.cache_key(queue, b"spirv") == plain
