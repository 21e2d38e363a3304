"""The streams chapter's models: the float64 reference result, FLOP per byte, and the ideal
pipeline.

``ideal_schedule(h2d_ms, kernel_ms, d2h_ms, n_streams)`` predicts the best in-order
schedule from measured per-chunk stage times: one engine per stage (two copy engines,
one for each direction), each serving chunks in order, and a stream's next chunk
waiting for its previous chunk's copy back.
"""

from __future__ import annotations

import numpy as np

from gpuperf import validate

from .kernels import KINDS


def reference(a, b, iters: int = 0) -> np.ndarray:
    """The float64 result ``pipelined`` must match: ``a + b``, or the relaxation's closed form.

    After ``k`` steps of ``z = 0.75 z + 0.25 t`` from ``z = a``, ``z = t + 0.75^k (a - t)``
    with ``t = a + b``.
    """
    a = validate.array(a, name="a", dtype=None, ndim=None, contiguous=False)
    b = validate.array(b, name="b", dtype=None, ndim=None, contiguous=False)
    validate.same_shape(a, b, ("a", "b"))
    validate.positive_int(iters, "iters", minimum=0, maximum=2**24)
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    t = a64 + b64
    if iters == 0:
        return t
    return t + 0.75 ** iters * (a64 - t)


def flops_per_element(iters: int) -> int:
    """Floating-point operations per element: the add, then one FMA (2 FLOP) per step."""
    validate.positive_int(iters, "iters", minimum=0, maximum=2**24)
    return 1 if iters == 0 else 2 + 2 * iters


BYTES_PER_ELEMENT = 12  # two float32 inputs copied in, one float32 output copied back


def arithmetic_intensity(iters: int) -> float:
    """FLOP per byte crossing the host link."""
    validate.positive_int(iters, "iters", minimum=0, maximum=2**24)
    return flops_per_element(iters) / BYTES_PER_ELEMENT



# --------------------------------------------------------------------------- the ideal


def _stage_lists(h2d_ms, kernel_ms, d2h_ms):
    h, k, d = ([validate.nonnegative(t, f"{name}[{i}]")
                for i, t in enumerate(validate.sequence(x, name))]
               for x, name in ((h2d_ms, "h2d_ms"), (kernel_ms, "kernel_ms"), (d2h_ms, "d2h_ms")))
    if not (len(h) == len(k) == len(d)) or not h:
        raise ValueError("h2d_ms, kernel_ms and d2h_ms must be lists of the same, non-zero "
                         f"length (one time per chunk); got {len(h)}, {len(k)}, {len(d)}.")
    if min(h + k + d) < 0:
        raise ValueError("stage times must not be negative.")
    return h, k, d


def ideal_schedule(h2d_ms, kernel_ms, d2h_ms, n_streams: int) -> list[dict]:
    """The ideal in-order pipeline for per-chunk stage times, as timeline spans.

    Three engines (copy in, compute, copy out) each serve the chunks in order; a
    chunk's stage starts when the engine is free and its previous stage is done; and
    chunk ``i`` shares a stream with chunk ``i - n_streams``, so its copy in waits for
    that chunk's copy out. With one stream this is the serial sum; with enough
    streams and equal chunks it is ``h + k + d + (chunks - 1) * max(h, k, d)``.
    """
    h, k, d = _stage_lists(h2d_ms, kernel_ms, d2h_ms)
    n_streams = validate.positive_int(n_streams, "n_streams")
    fin = {kind: [0.0] * len(h) for kind in KINDS}
    spans = []
    for i in range(len(h)):
        stream_free = fin["d2h"][i - n_streams] if i >= n_streams else 0.0
        prev = {kind: (fin[kind][i - 1] if i else 0.0) for kind in KINDS}
        ready = max(prev["h2d"], stream_free)
        for kind, t in zip(KINDS, (h[i], k[i], d[i])):
            start = max(prev[kind], ready)
            fin[kind][i] = start + t
            spans.append({"stream": i % n_streams, "kind": kind, "start_ms": start,
                          "end_ms": start + t, "label": f"{kind} {i}", "chunk": i})
            ready = fin[kind][i]
    return spans


def ideal_ms(h2d_ms, kernel_ms, d2h_ms, n_streams: int) -> float:
    """The makespan of ``ideal_schedule``."""
    _stage_lists(h2d_ms, kernel_ms, d2h_ms)
    return max(s["end_ms"] for s in ideal_schedule(h2d_ms, kernel_ms, d2h_ms, n_streams))


def overlap_bound_ms(h2d_ms, kernel_ms, d2h_ms) -> float:
    """No pipeline beats its busiest engine: ``max(sum h2d, sum kernel, sum d2h)``."""
    h, k, d = _stage_lists(h2d_ms, kernel_ms, d2h_ms)
    return max(sum(h), sum(k), sum(d))


def issued_ideal_ms(h2d_ms, kernel_ms, d2h_ms, n_streams: int, issue_ms: float) -> float:
    """``ideal_ms`` with a host that takes ``issue_ms`` to issue each chunk (its copies and
    its launch), one chunk after another: chunk ``i``'s copy in cannot start before
    ``(i + 1) * issue_ms``. With ``issue_ms=0`` it is ``ideal_ms``."""
    h, k, d = _stage_lists(h2d_ms, kernel_ms, d2h_ms)
    n_streams = validate.positive_int(n_streams, "n_streams")
    issue_ms = validate.nonnegative(issue_ms, "issue_ms")
    h_end = k_end = d_end = 0.0
    done: list[float] = []
    for i in range(len(h)):
        stream_free = done[i - n_streams] if i >= n_streams else 0.0
        h_end = max(h_end, stream_free, (i + 1) * issue_ms) + h[i]
        k_end = max(k_end, h_end) + k[i]
        d_end = max(d_end, k_end) + d[i]
        done.append(d_end)
    return d_end


def chunked_ideal_ms(h2d_total_ms: float, kernel_total_ms: float, d2h_total_ms: float,
                     n_chunks: int, n_streams: int, issue_ms: float = 0.0) -> float:
    """``issued_ideal_ms`` for one array cut into ``n_chunks`` equal chunks: each stage's
    total split evenly, the host issuing one chunk per ``issue_ms``."""
    n_chunks = validate.positive_int(n_chunks, "n_chunks")
    per = [validate.nonnegative(t, name) / n_chunks for t, name in
           ((h2d_total_ms, "h2d_total_ms"), (kernel_total_ms, "kernel_total_ms"),
            (d2h_total_ms, "d2h_total_ms"))]
    return issued_ideal_ms(*([t] * n_chunks for t in per), n_streams, issue_ms)
