"""Chapter 3's kernels for tests/test_ptx.py: ``(kernel, signature)`` pairs it compiles for
sm_75 and sm_90 (``GPUPERF_MODE=compile``, no GPU needed)."""

from __future__ import annotations

from .experiments import COPY_ILPS, SUM_ILPS
from .kernels import make_copy, make_strided_chunks, make_sum_loads, pointer_chase, pointer_chase_unsigned

_COPY_SIG = "void(float32[::1], float32[::1])"
PTX_TARGETS = (
    [(pointer_chase, "void(int32[::1], int64, int32[::1])"),
     (pointer_chase_unsigned, "void(int32[::1], int64, int32[::1])")]
    + [(make_sum_loads(k), "void(float32[::1], float32[::1], int64)") for k in SUM_ILPS]
    + [(make_copy(k), _COPY_SIG) for k in COPY_ILPS]
    + [(make_strided_chunks(k), "void(float32[::1], float32[::1], int64, int64, int64)")
       for k in (1, 2, 8)]
)
