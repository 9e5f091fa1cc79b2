"""dpnp arrays (the `tinyc[dpnp]` extra) go to kernels without copies, results land in them.

"Without copies" is checked by watching the runtime's staging, the only
place where host data is copied to or from the device: with dpnp arguments
it must move no array data (the same launch with NumPy arguments does when
they are copied, which shows the watch works). Results are compared with NumPy.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tinyc
import tinyc.runtime.staging as staging

if os.environ.get("TINYC_REQUIRE_DEVICE") == "1":  # CI installs the extra: these must run
    import dpnp
else:
    dpnp = pytest.importorskip("dpnp", reason="the tinyc[dpnp] extra is not installed")

REPO = Path(__file__).resolve().parents[2]
N = 37  # batch


@pytest.fixture(scope="module")
def fused(device):
    return tinyc.compile((REPO / "samples" / "fused_kernel.ir").read_text(), device=device)


@pytest.fixture(scope="module")
def offset_gemv(device):
    return tinyc.compile((REPO / "samples" / "group_offset.ir").read_text(), device=device)


@pytest.fixture
def copies(monkeypatch) -> list[str]:
    """Names of the staging steps that move host array data during the test."""
    moved: list[str] = []
    for name in ("add", "add_many", "host_buffer", "send", "scatter_back"):
        original = getattr(staging.Staging, name)

        def spy(self, *args, _original=original, _name=name, **kwargs):
            moved.append(_name)
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(staging.Staging, name, spy)
    return moved


def _fused_inputs(rng):
    A = rng.standard_normal((16, 8, N)).astype(np.float32, order="F")
    B = np.asfortranarray(rng.standard_normal((8, 8)).astype(np.float32))
    C = np.asfortranarray(rng.standard_normal((8, 16)).astype(np.float32))
    D = np.asfortranarray(rng.standard_normal((16, 16, N)).astype(np.float32))
    want = D + 0.5 * np.einsum("ikn,jk,jl->iln", A, B, C)
    return A, B, C, D, want


def _on_device(array: np.ndarray, queue):
    return dpnp.asarray(array, order="F", sycl_queue=queue)


def _address(array) -> int:
    return array.__sycl_usm_array_interface__["data"][0]


def test_group_of_dpnp_arrays_in_place_without_copies(fused, copies):
    rng = np.random.default_rng(1)
    A, B, C, D, want = _fused_inputs(rng)
    queue = fused["fused_kernel"].queue
    members = [_on_device(np.asfortranarray(A[:, :, i]), queue) for i in range(N)]
    dB, dC, dD = (_on_device(x, queue) for x in (B, C, D))
    before = _address(dD)
    fused["fused_kernel"](np.float32(0.5), members, dB, dC, dD, batch=N)
    assert copies == []
    assert _address(dD) == before
    np.testing.assert_allclose(dpnp.asnumpy(dD), want, rtol=1e-5, atol=1e-5)
    # NumPy arrays are not copied either where the device reads host memory (this CPU) ...
    kernel = fused["fused_kernel"]
    assert kernel.host_pointers
    D1 = D.copy(order="F")
    kernel(np.float32(0.5), [np.asfortranarray(A[:, :, i]) for i in range(N)], B, C, D1, batch=N)
    assert copies == []
    np.testing.assert_allclose(D1, want, rtol=1e-5, atol=1e-5)
    # ... and are where it does not: the watch sees copies when there are some
    kernel.host_pointers = False
    try:
        kernel(np.float32(0.5), [np.asfortranarray(A[:, :, i]) for i in range(N)], B, C, D, batch=N)
    finally:
        kernel.host_pointers = True
    assert copies
    np.testing.assert_allclose(D, want, rtol=1e-5, atol=1e-5)


def test_stacked_dpnp_group(fused, copies):
    """One (16, 8, N) dpnp array holds the whole group, members stacked along its last mode."""
    rng = np.random.default_rng(2)
    A, B, C, D, want = _fused_inputs(rng)
    queue = fused["fused_kernel"].queue
    dA, dB, dC, dD = (_on_device(x, queue) for x in (A, B, C, D))
    fused["fused_kernel"](np.float32(0.5), dA, dB, dC, dD, batch=N)
    assert copies == []
    np.testing.assert_allclose(dpnp.asnumpy(dD), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(dpnp.asnumpy(dA), A)  # read only: untouched


def test_dpnp_group_with_an_offset(offset_gemv, copies):
    rng = np.random.default_rng(3)
    offset = 5
    storage = [rng.standard_normal(offset + 64).astype(np.float32) for _ in range(N)]
    x = np.asfortranarray(rng.standard_normal((8, N)).astype(np.float32))
    y = np.asfortranarray(rng.standard_normal((8, N)).astype(np.float32))
    want = y + np.stack([s[offset:].reshape(8, 8, order="F") @ x[:, i]
                         for i, s in enumerate(storage)], axis=1)
    queue = offset_gemv["group_offset"].queue
    members = [dpnp.asarray(s, sycl_queue=queue) for s in storage]
    dx, dy = _on_device(x, queue), _on_device(y, queue)
    offset_gemv["group_offset"](tinyc.Group(members, offset=offset), dx, dy, batch=N)
    assert copies == []
    np.testing.assert_allclose(dpnp.asnumpy(dy), want, rtol=1e-5, atol=1e-5)


def test_dpnp_and_numpy_arguments_mix(fused):
    rng = np.random.default_rng(4)
    A, B, C, D, want = _fused_inputs(rng)
    dD = _on_device(D, fused["fused_kernel"].queue)
    fused["fused_kernel"](np.float32(0.5), A, B, C, dD, batch=N)
    np.testing.assert_allclose(dpnp.asnumpy(dD), want, rtol=1e-5, atol=1e-5)


def test_import_tinyc_then_dpnp_finds_the_cpu_device():
    """`import tinyc` points the OpenCL loader at the pip CPU runtime before dpnp loads dpctl."""
    env = {k: v for k, v in os.environ.items() if k != "OCL_ICD_FILENAMES"}
    env["PYTHONPATH"] = str(REPO)
    code = ("import tinyc, dpnp\n"
            "x = dpnp.arange(4, dtype='f4', device='opencl:cpu')\n"
            "print(x.sycl_device.backend, x.sycl_device.device_type)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "backend_type.opencl device_type.cpu"


def test_readme_dpnp_example_runs(device, monkeypatch):
    readme = (REPO / "README.md").read_text()
    start = readme.index("import numpy as np, tinyc, dpnp")
    code = readme[start:readme.index("```", start)]
    monkeypatch.chdir(REPO)
    scope: dict = {}
    exec(compile(code, "README.md", "exec"), scope)
    A, D = dpnp.asnumpy(scope["A"]), dpnp.asnumpy(scope["D"])
    want = 0.5 * np.einsum("ikn,jk,jl->iln", A, np.ones((8, 8)), np.ones((8, 16)))
    np.testing.assert_allclose(D, want, rtol=1e-4)
