"""The privatization kernels for tests/test_ptx.py: ``(kernel, signature)`` pairs it compiles
for sm_75 and sm_90 (``GPUPERF_MODE=compile``, no GPU needed)."""

from __future__ import annotations

from .experiments import _zero_kernel
from .kernels import histogram_global, histogram_global_stride, make_private

PTX_TARGETS = [
    (histogram_global, "void(uint8[::1], int32[::1])"),
    (histogram_global_stride, "void(uint8[::1], int32[::1])"),
    (make_private(256), "void(uint8[::1], int32[::1])"),
    (_zero_kernel(), "void(int32[::1])"),
]
