"""Device selection, the ICD path, the program cache and build logs."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from runtime_testlib import assemble
from tinyc.diagnostics import LaunchError
from tinyc.runtime import device as devmod
from tinyc.runtime.program_cache import BuildError, build_program

# Uses LocalInvocationIndex, which the CPU runtime's builtin library lacks
# (RUNTIME-NOTES §3): valid SPIR-V that fails at JIT link time.
BAD_KERNEL = """
               OpCapability Addresses
               OpCapability Kernel
               OpCapability Int64
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "bad" %lin
               OpDecorate %lin BuiltIn LocalInvocationIndex
               OpDecorate %lin Constant
       %void = OpTypeVoid
      %ulong = OpTypeInt 64 0
     %ptr_in = OpTypePointer Input %ulong
       %gptr = OpTypePointer CrossWorkgroup %ulong
       %fnty = OpTypeFunction %void %gptr
        %lin = OpVariable %ptr_in Input
          %k = OpFunction %void None %fnty
          %A = OpFunctionParameter %gptr
      %entry = OpLabel
          %v = OpLoad %ulong %lin
               OpStore %A %v
               OpReturn
               OpFunctionEnd
"""


def run_python(code: str, **env: str | None) -> str:
    """Run code in a fresh interpreter with tinyc importable; returns stdout."""
    environ = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    for key, value in env.items():
        if value is None:
            environ.pop(key, None)
        else:
            environ[key] = value
    done = subprocess.run([sys.executable, "-c", code], env=environ, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_import_does_not_load_dpctl_and_sets_icd():
    out = run_python(
        "import sys, os, tinyc.runtime, tinyc.runtime.kernel, tinyc.runtime.arguments\n"
        "print('dpctl' in sys.modules, os.environ.get('OCL_ICD_FILENAMES'))",
        OCL_ICD_FILENAMES=None,
    )
    loaded, icd = out.split(" ", 1)
    assert loaded == "False"
    if os.path.exists(devmod.icd_library()):
        assert icd == devmod.icd_library()


def test_user_icd_setting_is_kept():
    out = run_python(
        "import os, tinyc.runtime; print(os.environ['OCL_ICD_FILENAMES'])", OCL_ICD_FILENAMES="/x/libfoo.so"
    )
    assert out == "/x/libfoo.so"


def test_select_queue_forms(queue):
    device = queue.sycl_device
    assert devmod.select_queue(device) is queue
    assert devmod.select_queue(device.filter_string) is queue
    assert devmod.select_queue(queue) is queue
    assert devmod.select_device(queue) == device


def test_tinyc_device_variable(queue, monkeypatch):
    monkeypatch.setenv("TINYC_DEVICE", queue.sycl_device.filter_string)
    assert devmod.select_queue() is queue
    monkeypatch.setenv("TINYC_DEVICE", "level_zero:gpu:7")
    with pytest.raises(LaunchError, match=r"\$TINYC_DEVICE 'level_zero:gpu:7'"):
        devmod.select_queue()


@pytest.mark.parametrize("bad", ["opencl:accelerator:5", "nonsense", 3.5])
def test_bad_device(queue, bad):
    with pytest.raises(LaunchError):
        devmod.select_queue(bad)


def test_list_devices(queue):
    infos = devmod.list_devices()
    chosen = [i for i in infos if i.filter_string == queue.sycl_device.filter_string]
    assert chosen and chosen[0].spirv
    assert chosen[0].subgroup_sizes and chosen[0].local_mem_size > 0
    assert "SPIR-V: yes" in str(chosen[0])


def test_no_device_message_names_the_fix():
    text = devmod._no_device_message([])
    assert "no SYCL device accepts SPIR-V" in text and "OCL_ICD_FILENAMES" in text


def test_program_cache_hit(queue, spirv):
    first = build_program(queue, spirv)
    again = build_program(queue, bytes(bytearray(spirv)))  # equal bytes, other object
    assert again is first  # the cached program object: no second JIT build


def test_build_error_has_log(queue, tmp_path):
    module = assemble(BAD_KERNEL, tmp_path)
    with pytest.raises(BuildError) as info:
        build_program(queue, module)
    assert "Symbols not found" in info.value.log
    assert "does not build on" in str(info.value)


def test_invalid_module_error(queue):
    with pytest.raises(BuildError, match="does not build"):
        build_program(queue, b"\x03\x02\x23\x07 not really spir-v")


def test_kernel_name_missing(queue, spirv):
    from runtime_testlib import info
    from tinyc.runtime.kernel import Kernel
    from tinyc.signature import KernelInfo

    good = info("scale")
    with pytest.raises(KeyError, match="no kernel named 'nope'"):
        Kernel(spirv, KernelInfo("nope", good.params, good.work_group_size, 16), queue)


def test_signature_must_match_module(queue, spirv):
    from runtime_testlib import info
    from tinyc.runtime.kernel import Kernel
    from tinyc.signature import KernelInfo

    good = info("scale")
    with pytest.raises(ValueError, match="takes 5 OpenCL arguments but its signature packs 2"):
        Kernel(spirv, KernelInfo("scale", good.params[:1] * 2, good.work_group_size, 16), queue)
