"""Launch overhead of Kernel.__call__ against submitting through dpctl directly.

Run: PYTHONPATH=. python tests/runtime/bench_overhead.py [batch] [rows]
(not collected by pytest). Uses the `scale` test kernel, alpha * A[:, b]
with A of shape (rows, batch). Three comparisons, median of many calls:
  usm:    k(alpha, usm_array)      vs  q.submit(kernel, args, gS, lS)
  numpy:  k(alpha, numpy_array)    vs  memcpy in + submit + memcpy out by hand
  checks: the Python time of checking and packing alone (k.prepare minus copies)
"""

from __future__ import annotations

import ctypes
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from runtime_testlib import UsmArray, assemble, info  # noqa: E402
from tinyc.runtime.device import select_queue  # noqa: E402
from tinyc.runtime.kernel import Kernel  # noqa: E402


def paired(a, b, repeat: int) -> tuple[float, float]:
    """Medians of a and b, run alternately so that drift hits both alike."""
    sa, sb = [], []
    a(), b()
    for _ in range(repeat):
        for fn, samples in ((a, sa), (b, sb)):
            start = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - start)
    return statistics.median(sa), statistics.median(sb)


def main() -> None:
    import dpctl.memory

    batch = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    repeat = 200
    queue = select_queue()
    spirv = assemble((HERE / "kernels.spvasm").read_text(), Path(tempfile.mkdtemp()))
    kernel = Kernel(spirv, info("scale"), queue)
    sycl_kernel = kernel.sycl_kernel
    host = np.ones((rows, batch), dtype=np.float32, order="F")
    usm = UsmArray.from_host(queue, host)
    gs, ls = [batch, 1, 16], [1, 1, 16]

    raw_args = [ctypes.c_float(1.0), usm.memory, ctypes.c_int64(rows), ctypes.c_int64(batch), ctypes.c_int64(rows)]
    raw, ours = paired(lambda: queue.submit_async(sycl_kernel, raw_args, gs, ls).wait(),
                       lambda: kernel(1.0, usm, batch=batch), repeat)
    print(f"usm   batch={batch}: raw submit {raw * 1e3:.3f} ms, Kernel.__call__ {ours * 1e3:.3f} ms, "
          f"overhead {(ours - raw) * 1e6:.1f} us ({(ours / raw - 1) * 100:.1f}%)")

    def by_hand() -> None:
        memory = dpctl.memory.MemoryUSMDevice(host.nbytes, queue=queue)
        flat = host.reshape(-1, order="F").view(np.uint8)
        queue.memcpy(memory, flat, host.nbytes)
        args = [ctypes.c_float(1.0), memory, ctypes.c_int64(rows), ctypes.c_int64(batch), ctypes.c_int64(rows)]
        queue.submit_async(sycl_kernel, args, gs, ls).wait()
        queue.memcpy(flat, memory, host.nbytes)

    hand, ours_np = paired(by_hand, lambda: kernel(1.0, host, batch=batch), repeat // 4)
    print(f"numpy batch={batch}: by hand {hand * 1e3:.3f} ms, Kernel.__call__ {ours_np * 1e3:.3f} ms, "
          f"overhead {(ours_np - hand) * 1e6:.1f} us ({(ours_np / hand - 1) * 100:.1f}%)")

    small = np.ones((rows, 1), dtype=np.float32, order="F")
    usm_small = UsmArray.from_host(queue, small)
    raw_small = [ctypes.c_float(1.0), usm_small.memory, *map(ctypes.c_int64, (rows, 1, rows))]
    raw1, ours1 = paired(lambda: queue.submit_async(sycl_kernel, raw_small, [1, 1, 16], ls).wait(),
                         lambda: kernel(1.0, usm_small, batch=1), 2000)
    print(f"usm   batch=1: raw submit {raw1 * 1e6:.1f} us, Kernel.__call__ {ours1 * 1e6:.1f} us")


if __name__ == "__main__":
    main()
