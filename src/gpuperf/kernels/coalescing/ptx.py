"""The chapter's kernels for ``tests/test_ptx.py``: ``PTX_TARGETS``, ``(kernel, signature)``
pairs compiled to PTX for sm_75 and sm_90. ``transpose_ptx_order``: the transpose ladder's
rungs 4 to 6 in PTX, the longest run of global loads before a shared store."""

from __future__ import annotations

import re

from gpuperf import targets

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


@targets.compiles_ptx("the transposes")
def transpose_ptx_order(cc=(9, 0)) -> dict:
    """The longest run of ``ld.global`` before an ``st.shared`` in the PTX (before the barrier,
    branches skipped) of the transpose ladder's rungs 4 to 6 (32 x 32 tiles, 32 x 8 blocks,
    padded), for ``cc``: ``{"one at a time": ..., "no bounds tests inside": ..., "staged": ...}``.
    The chapter sets it beside the recorded SASS to tell which compiler stage moved the loads.
    Under the simulator it compiles in a separate process with ``GPUPERF_MODE=compile``."""
    texts = targets.compile_each({"one at a time": make_transpose(32, 8, 1, False),
                                  "no bounds tests inside": make_transpose_unchecked(32, 8, 1),
                                  "staged": make_transpose(32, 8, 1, True)},
                                 f"void({_M}, {_M})", cc)
    runs = {}
    for label, text in texts.items():
        seq = ""
        for line in text.splitlines():
            if "bar.sync" in line:
                break
            seq += "L" if "ld.global" in line else "S" if "st.shared" in line else ""
        runs[label] = max((len(r) for r in re.findall(r"L+", seq)), default=0)
    return runs
