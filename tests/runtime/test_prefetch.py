"""tinyc.compile starts loading a stored device binary in the background
(program_cache.prefetch); the first launch then finds the program built."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import tinyc
from tinyc.runtime import binary_cache, program_cache


def source(scale: float) -> str:
    return f"""func @scale(%A: memref<f32x32x?>, %B: memref<f32x32x?>) {{
  %g = builtin.group_id : index
  %a = subview %A[:, %g] : memref<f32x32>
  %b = subview %B[:, %g] : memref<f32x32>
  %s = constant {scale} : f32
  %zero = constant 0.0 : f32
  axpby.n %s, %a, %zero, %b
}}
"""


@pytest.fixture
def fresh(tmp_path, monkeypatch, device):
    if not binary_cache.applies(tinyc.runtime.select_queue(device)):
        pytest.skip("the binary cache does not apply to this device")
    monkeypatch.setenv("TINYC_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TINYC_BINARY_CACHE", raising=False)
    return device


def prefetch_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "tinyc-prefetch"]


def run(program: tinyc.Program, scale: float) -> None:
    A = np.asfortranarray(np.random.default_rng(2).uniform(-1, 1, (32, 3)).astype(np.float32))
    B = np.zeros_like(A)
    program["scale"](A, B, batch=3)
    np.testing.assert_array_equal(B, np.float32(scale) * A)


def test_a_stored_binary_is_built_in_the_background_and_used(fresh, monkeypatch):
    run(tinyc.compile(source(1.5), device=fresh), 1.5)  # stores the binary
    program_cache.clear_program_cache()  # as in a new process
    built = []
    original = program_cache._build
    monkeypatch.setattr(program_cache, "_build", lambda queue, spirv: built.append(
        threading.current_thread().name) or original(queue, spirv))
    program = tinyc.compile(source(1.5), device=fresh)
    for thread in prefetch_threads():
        thread.join()
    assert built == ["tinyc-prefetch"]
    run(program, 1.5)
    assert built == ["tinyc-prefetch"], "the launch used the program built in the background"


def test_nothing_starts_without_a_stored_binary(fresh):
    program_cache.clear_program_cache()
    tinyc.compile(source(2.5), device=fresh)
    assert not prefetch_threads()


def test_a_failed_background_build_is_left_to_the_launch(fresh, monkeypatch):
    run(tinyc.compile(source(3.5), device=fresh), 3.5)
    program_cache.clear_program_cache()
    original = program_cache._build
    calls = []

    def failing_once(queue, spirv):
        calls.append(threading.current_thread().name)
        if len(calls) == 1:
            raise program_cache.BuildError("a driver hiccup", "")
        return original(queue, spirv)

    monkeypatch.setattr(program_cache, "_build", failing_once)
    program = tinyc.compile(source(3.5), device=fresh)
    for thread in prefetch_threads():
        thread.join()
    run(program, 3.5)
    assert calls == ["tinyc-prefetch", "MainThread"]
