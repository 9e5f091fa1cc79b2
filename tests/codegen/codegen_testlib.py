"""Helpers for the codegen tests: compile once per source, IR text templates, bf16.

Programs are compiled through the public pipeline (`compile_to_spirv` runs
spirv-val on every module) and cached per source text, so a test module
that launches several kernels of one program pays the JIT once.
"""

from __future__ import annotations

import functools
import re

import numpy as np

import tinyc
from tinyc.compiler import CompileResult, check_source, compile_to_spirv
from tinyc.spirv.tools import disassemble

NUMPY = {
    "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "index": np.int64,
    "bf16": np.uint16, "f16": np.float16, "f32": np.float32, "f64": np.float64,
    "c32": np.complex64, "c64": np.complex128,
}
INT_TYPES = ["i8", "i16", "i32", "i64", "index"]
FLOAT_TYPES = ["bf16", "f16", "f32", "f64"]
COMPLEX_TYPES = ["c32", "c64"]


@functools.lru_cache(maxsize=None)
def compiled(source: str) -> CompileResult:
    """Source -> SPIR-V (validated by spirv-val) and kernel infos."""
    return compile_to_spirv(source, "<test>")


@functools.lru_cache(maxsize=None)
def checked(source: str):
    """The checked, unlowered IR of a source, parsed once (what the reference interpreter runs)."""
    return check_source(source)


@functools.lru_cache(maxsize=None)
def program(source: str) -> tinyc.Program:
    """A public-API program; kernels (and the JIT build) are cached in it."""
    return tinyc.compile(source)


def assembly(source: str) -> str:
    return disassemble(compiled(source).spirv)


def spmd_kernel(name: str, params: str, body: str, subgroup_size: int = 16,
                work_group_size: tuple[int, int] = (16, 1)) -> str:
    """A kernel whose parallel region sees `%i` = subgroup_local_id + group_id * X.

    `%gid` (index) and `%l` (lane as index) are defined too.
    """
    X, Y = work_group_size
    indented = "\n".join("    " + line.strip() for line in body.strip().splitlines())
    return f"""
func @{name}({params}) attributes {{subgroup_size={subgroup_size}, work_group_size=[{X}, {Y}]}} {{
  %gid = builtin.group_id : index
  parallel {{
    %lane = builtin.subgroup_local_id : i32
    %l = cast %lane : index
    %cX = constant {X} : index
    %goff = arith.mul %gid, %cX : index
    %i = arith.add %l, %goff : index
{indented}
  }}
}}
"""


def fortran(a: np.ndarray) -> np.ndarray:
    return np.asfortranarray(a)


# -- bf16 (uint16 bit patterns) -------------------------------------------------------------
def bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(x: np.ndarray) -> np.ndarray:
    """Round to nearest even; NaN stays a quiet NaN."""
    x = np.asarray(x, np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(x), np.uint16(0x7FC0), rounded).astype(np.uint16)


def random_values(t: str, n: int, rng: np.random.Generator, nonzero: bool = False) -> np.ndarray:
    """Random test data of type `t` (bf16 as bits), moderately sized floats."""
    if t in INT_TYPES:
        info = np.iinfo(NUMPY[t])
        out = rng.integers(info.min + 1, info.max, n, dtype=NUMPY[t], endpoint=True)
    elif t in COMPLEX_TYPES:
        out = (rng.uniform(-4, 4, n) + 1j * rng.uniform(-4, 4, n)).astype(NUMPY[t])
    else:
        vals = rng.uniform(-8, 8, n).astype(np.float32)
        out = f32_to_bf16(vals) if t == "bf16" else vals.astype(NUMPY[t])
    if nonzero:
        zero = as_float(t, out) == 0
        out[zero] = one(t)
    return out


def one(t: str):
    return f32_to_bf16(np.float32(1.0)) if t == "bf16" else NUMPY[t](1)


def as_float(t: str, x: np.ndarray) -> np.ndarray:
    """Values for comparisons: bf16 bits decoded to f32, others unchanged."""
    return bf16_to_f32(x) if t == "bf16" else x


def op_count(asm: str, opcode: str) -> int:
    return len(re.findall(rf"\b{opcode}\b", asm))
