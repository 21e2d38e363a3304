"""The chapter's kernels for ``tests/test_ptx.py``: ``PTX_TARGETS``, ``(kernel, signature)``
pairs compiled to PTX for sm_75 and sm_90."""

from __future__ import annotations

from .ablations import make_transpose_unchecked
from .copies import make_copy_ilp, make_copy_strided, make_read_strided, write_strided
from .experiments import fill_pseudorandom
from .kernels import (
    make_copy_vec4,
    make_matmul_bcol,
    make_sum_fields,
    make_transpose,
    make_transpose_vec4,
    matmul_naive,
    matmul_naive_bcol,
    scale_rows_uncoalesced,
    transpose_naive,
)

_V = "float32[::1]"
_M = "float32[:, ::1]"
PTX_TARGETS = [
    (make_copy_ilp(4), f"void({_V}, {_V})"),
    (make_copy_strided(4), f"void({_V}, {_V}, int64, int64)"),
    (make_copy_strided(4, "float64"), "void(float64[::1], float64[::1], int64, int64)"),
    (make_read_strided(4), f"void({_V}, {_V}, int64, int64)"),
    (write_strided, f"void({_V}, int64, int64)"),
    (make_sum_fields("AoS", 4), f"void({_M}, {_V})"),
    (make_sum_fields("SoA", 4), f"void({_M}, {_V})"),
    (make_copy_vec4(2), f"void({_V}, {_V})"),
    (matmul_naive, f"void({_M}, {_M}, {_M})"),
    (matmul_naive_bcol, f"void({_M}, {_M}, {_M})"),
    (make_matmul_bcol(32, "rowmajor", 0), f"void({_M}, {_M}, {_M})"),
    (make_matmul_bcol(32, "uncoalesced", 0), f"void({_M}, {_M}, {_M})"),
    (make_matmul_bcol(32, "corner", 1), f"void({_M}, {_M}, {_M})"),
    (transpose_naive, f"void({_M}, {_M})"),
    (make_transpose(32, 32, 0), f"void({_M}, {_M})"),
    (make_transpose(32, 8, 1), f"void({_M}, {_M})"),
    (make_transpose(64, 4, 0, True, True), f"void({_M}, {_M})"),
    (make_transpose(32, 8, 1, staged=False), f"void({_M}, {_M})"),
    (make_transpose_unchecked(32, 8, 1), f"void({_M}, {_M})"),
    (make_transpose(64, 8, 1), f"void({_M}, {_M})"),
    (make_transpose_vec4(8), f"void({_M}, {_M})"),
    (make_transpose_vec4(8, False), f"void({_M}, {_M})"),
    (fill_pseudorandom, "void(float32[::1], int64)"),
    (fill_pseudorandom, "void(float64[::1], int64)"),
    (scale_rows_uncoalesced, "void(float32[:, ::1], float32[::1], float32[:, ::1])"),
]
