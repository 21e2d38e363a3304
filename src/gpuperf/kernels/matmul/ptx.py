"""The kernels of chapter 4 that ``tests/test_ptx.py`` compiles for sm_75 and sm_90."""

from __future__ import annotations

from .kernels import TILES, make_tiled, make_tiled_article, make_tiled_early_return, naive_col_x, naive_row_x

_SIG = "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])"
PTX_TARGETS = [
    (naive_row_x, _SIG),
    (naive_col_x, _SIG),
    (make_tiled_article(16), _SIG),
    (make_tiled_early_return(16), _SIG),
] + [(make_tiled(t), _SIG) for t in TILES]
