"""Chapter 1's kernels for tests/test_ptx.py: ``(kernel, signature)`` pairs it compiles for
sm_75 and sm_90 (``GPUPERF_MODE=compile``, no GPU needed)."""

from __future__ import annotations

from .kernels import copy_grid_stride, copy_one_per_thread, saxpy_grid_stride
from .roofs import ONCHIP_READS, read_passes

_COPY_SIG = "void(float32[::1], float32[::1])"
_READ_SIG = "void(float32[::1], int64, int64, float32[::1])"
PTX_TARGETS = [
    (copy_one_per_thread, _COPY_SIG),
    (copy_grid_stride, _COPY_SIG),
    (saxpy_grid_stride, "void(float32, float32[::1], float32[::1], float32[::1])"),
    (read_passes, _READ_SIG),
] + [(kernel, _READ_SIG) for kernel, *_ in ONCHIP_READS.values()]
