"""Kernels and helpers for the tests of batches split over devices.

Every kernel follows the group-id convention (work-group g touches entry g of
its batched arguments), so a launch split into slices must give exactly
what one launch gives; the tests compare with one launch on the whole
device and with NumPy.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]

SHARDED = """
func @scale_rows(%a: f32, %X: memref<f32x?x?>, %Y: memref<f32x?x?>) {
  %g = builtin.group_id : index
  %x = subview %X[%g, :] : memref<f32x?,strided<?>>
  %y = subview %Y[%g, :] : memref<f32x?,strided<?>>
  %zero = constant 0.0 : f32
  axpby.n %a, %x, %zero, %y
}

func @static_batch(%a: f32, %X: memref<f32x4x10>, %Y: memref<f32x4x10>) {
  %g = builtin.group_id : index
  %x = subview %X[:, %g] : memref<f32x4>
  %y = subview %Y[:, %g] : memref<f32x4>
  %one = constant 1.0 : f32
  axpby.n %a, %x, %one, %y
}

func @static_group(%A: group<memref<f32x4>x6>, %Y: memref<f32x4x?>) {
  %g = builtin.group_id : index
  %a = load %A[%g] : memref<f32x4>
  %y = subview %Y[:, %g] : memref<f32x4>
  %one = constant 1.0 : f32
  axpby.n %one, %a, %one, %y
}

func @ragged(%G: group<memref<f32x?>x?>, %s: memref<f32x?>) {
  %g = builtin.group_id : index
  %x = load %G[%g] : memref<f32x?>
  %t = subview %s[%g] : memref<f32>
  %one = constant 1.0 : f32
  %zero = constant 0.0 : f32
  sum.n %one, %x, %zero, %t
}

func @scale_members(%a: f32, %G: group<memref<f32x?>x?>) {
  %g = builtin.group_id : index
  %x = load %G[%g] : memref<f32x?>
  %zero = constant 0.0 : f32
  axpby.n %a, %x, %zero, %x
}

func @elements(%x: memref<f64x?>, %y: memref<i32x?>, %k: i32) {
  %g = builtin.group_id : index
  %v = load %x[%g] : f64
  %w = arith.mul %v, %v : f64
  store %w, %x[%g]
  %c = cast %g : i64
  %i = load %y[%g] : i32
  %j = arith.add %i, %k : i32
  store %j, %y[%g]
}
"""

NOT_SPLIT = """
func @sum_all(%X: memref<f32x8x?>, %s: memref<f32x8>) {
  %g = builtin.group_id : index
  %x = subview %X[:, %g] : memref<f32x8>
  %one = constant 1.0 : f32
  axpby.n.atomic %one, %x, %one, %s
}

func @uses_size(%X: memref<f32x?>) {
  %g = builtin.group_id : index
  %n = builtin.group_size : index
  %v = cast %n : f32
  store %v, %X[%g]
}

func @neighbour(%X: memref<f32x?>, %Y: memref<f32x?>) {
  %g = builtin.group_id : index
  %one = constant 1 : index
  %h = arith.add %g, %one : index
  %v = load %X[%h] : f32
  store %v, %Y[%g]
}

func @batch_size(%X: memref<f32x?>) {
  %g = builtin.group_id : index
  %n = size %X[0] : index
  %v = cast %n : f32
  store %v, %X[%g]
}

func @other_entry(%X: memref<f32x?>) {
  %g = builtin.group_id : index
  %z = constant 0 : index
  %v = load %X[%z] : f32
  store %v, %X[%g]
}

func @stores_id(%X: memref<i64x?>) {
  %g = builtin.group_id : index
  %v = cast %g : i64
  store %v, %X[%g]
}
"""


def sample(name: str) -> str:
    return (ROOT / "samples" / f"{name}.ir").read_text()


def fortran(rng: np.random.Generator, shape, dtype=np.float32) -> np.ndarray:
    return np.asfortranarray(rng.standard_normal(shape).astype(dtype))


class UsmArray:
    """A small USM-backed array with __sycl_usm_array_interface__ (dpctl 0.22 has no dpctl.tensor)."""

    def __init__(self, queue, host: np.ndarray):
        import dpctl.memory

        flat = np.asfortranarray(host)
        self.memory = dpctl.memory.MemoryUSMDevice(max(flat.nbytes, 1), queue=queue)
        queue.memcpy(self.memory, flat.reshape(-1, order="F").view(np.uint8), flat.nbytes)
        self.dtype, self.shape = flat.dtype, flat.shape
        self.strides = tuple(s // flat.itemsize for s in flat.strides)

    @property
    def __sycl_usm_array_interface__(self) -> dict:
        return {"data": (self.memory.__sycl_usm_array_interface__["data"][0], False), "shape": self.shape,
                "strides": self.strides, "typestr": self.dtype.str, "version": 1, "offset": 0,
                "syclobj": self.memory.sycl_queue}

    def to_host(self) -> np.ndarray:
        raw = np.empty(self.memory.nbytes, dtype=np.uint8)
        self.memory.sycl_queue.memcpy(raw, self.memory, self.memory.nbytes)
        return np.ndarray(self.shape, self.dtype, buffer=raw,
                          strides=tuple(s * self.dtype.itemsize for s in self.strides)).copy()
