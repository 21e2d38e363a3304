"""The chapter's kernels for ``tests/test_ptx.py``: ``PTX_TARGETS``, ``(kernel, signature)``
pairs compiled to PTX for sm_75 and sm_90."""

from __future__ import annotations

from .kernels import copy_unguarded, smooth, smooth_racy

_PAIR = "void(float32[::1], float32[::1])"
PTX_TARGETS = [(smooth_racy, _PAIR), (smooth, _PAIR), (copy_unguarded, _PAIR)]
