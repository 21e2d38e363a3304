"""The case study's kernels for ``tests/test_ptx.py``: ``PTX_TARGETS``, ``(kernel, signature)``
pairs compiled to PTX for sm_75 and sm_90."""

from __future__ import annotations

from .experiments import _zero_kernel
from .host import make_factor, make_forward
from .kernels import (
    make_beta_grad,
    make_fused,
    make_fused_tiled,
    make_input_grad,
    make_multiply,
    make_per_channel,
    make_registers,
    make_replicate,
    make_row_sum,
    make_shared,
)

_SIG2 = "void(float32[:, ::1], float32[:, ::1], float32[:, ::1], float32[:, ::1])"
PTX_TARGETS = [
    (make_forward(256), "void(float32[:, ::1], float32[:, ::1], float32[::1], "
                        "float32[:, ::1], float32[:, ::1])"),
    (make_replicate(256)[0], "void(float32[::1], int64, int64, float32[::1])"),
    (make_replicate(256)[1], "void(float32[::1], int64, int64, float32[::1])"),
    (make_multiply(256), "void(float32[::1], float32[::1], float32[::1], float32[::1], "
                         "float32[::1])"),
    (make_per_channel(256), "void(float32[:, ::1], float32[:, ::1], float32[:, ::1], int64, "
                            "float32[:, ::1])"),
    (make_shared(256), _SIG2),
    (make_registers(256), _SIG2),
    (make_row_sum(256), "void(float32[:, ::1], float32[::1])"),
    (make_beta_grad(256), "void(float32[:, ::1], float32[:, ::1], float32[:, ::1], float32[::1])"),
    (make_fused(256, 8), "void(float32[:, ::1], float32[:, ::1], float32[:, ::1], "
                         "float32[:, ::1], float32[::1])"),
    (make_fused_tiled(16, 16), "void(float32[:, ::1], float32[:, ::1], float32[:, ::1], "
                               "float32[:, ::1], float32[::1], int64)"),
    (make_factor(256), _SIG2),
    (make_input_grad(256), "void(float32[:, ::1], float32[:, ::1], float32[:, ::1], "
                           "float32[:, ::1], float32[:, ::1], float32[:, ::1])"),
    (_zero_kernel(), "void(float32[::1], float32[::1])"),
]
