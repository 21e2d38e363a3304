"""The streams chapter's kernels and the programs the book shows around them.

``add_kernel``: ``out = a + b``, grid-stride (memory-bound: the copies dominate).
``relax_kernel``: ``iters`` steps of ``z = 0.75 z + 0.25 (a + b)`` from ``z = a``, one
fused multiply-add per step (compute-bound for large ``iters``). ``iters`` sets the
arithmetic intensity: about ``2 iters / 12`` FLOP per byte copied.
``article_add``: the Numba article's kernel, one element per thread (kept to reproduce it).

``launch_chunk`` launches one chunk's kernel on a stream; ``plan_chunks`` splits ``n``
elements into chunks spread round-robin over streams. Then the Numba article's programs,
shown and run verbatim (``article_default_stream``, ``article_five_streams``), its shared
output buffer with pinned memory (``shared_buffer_pipeline``), the program fixed
(``fixed_five_streams``) and its serial program on pinned memory (``pinned_default_stream``).
The reusable pipeline (``Pipeline``, ``pipelined``, ``serial``) is in ``pipeline.py``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# gpuperf/__init__ (which picks GPU or simulator) has run before any module of the
# package, so numba.cuda is already in the right mode here.
from numba import cuda

from gpuperf import device, validate

RELAX_KEEP = np.float32(0.75)  # exact in binary, so z = t is an exact fixed point
RELAX_PULL = np.float32(0.25)


@cuda.jit
def add_kernel(a, b, out):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < out.size:
        out[i] = a[i] + b[i]
        i += stride


@cuda.jit
def relax_kernel(a, b, out, iters):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < out.size:
        pull = RELAX_PULL * (a[i] + b[i])
        z = a[i]
        for _ in range(iters):
            z = z * RELAX_KEEP + pull  # one fused multiply-add per step
        out[i] = z
        i += stride


@cuda.jit
def article_add(a, b, result, n):
    # The Numba article's kernel: one element per thread, a bounds test for the last block.
    idx = cuda.threadIdx.x + cuda.blockDim.x * cuda.blockIdx.x
    if idx < n:
        result[idx] = a[idx] + b[idx]


PTX_TARGETS = [
    (add_kernel, "void(float32[::1], float32[::1], float32[::1])"),
    (relax_kernel, "void(float32[::1], float32[::1], float32[::1], int64)"),
    (article_add, "void(int32[::1], int32[::1], float64[::1], int64)"),
]

# The grid-stride kernels' grid: at most this many blocks per SM, each looping over the rest.
BLOCKS_PER_SM = 8


def _launch(iters: int, block: int, m: int) -> tuple[int, int]:
    grid = min((m + block - 1) // block, BLOCKS_PER_SM * device.sm_count(default=2))
    return max(grid, 1), block


def launch_chunk(d_a, d_b, d_out, iters: int, block: int, stream=0) -> None:
    """Enqueue the kernel for one chunk (``iters=0``: the add) on ``stream``."""
    validate.integer(iters, "iters", minimum=0)  # cheap: this runs once per chunk
    validate.integer(block, "block", minimum=1, maximum=1024)
    grid, block = _launch(iters, block, d_out.size)
    if iters == 0:
        add_kernel[grid, block, stream](d_a, d_b, d_out)
    else:
        relax_kernel[grid, block, stream](d_a, d_b, d_out, iters)


@dataclass(frozen=True)
class Chunk:
    index: int
    stream: int
    lo: int
    hi: int

    def __post_init__(self):
        for name in ("index", "stream", "lo", "hi"):
            validate.integer(getattr(self, name), name, minimum=0)
        if self.hi <= self.lo:
            raise ValueError(f"a chunk must hold at least one element: hi={self.hi} <= "
                             f"lo={self.lo}.")

    @property
    def size(self) -> int:
        return self.hi - self.lo


def plan_chunks(n: int, n_chunks: int, n_streams: int) -> list[Chunk]:
    """Split ``n`` elements into ``min(n_chunks, n)`` chunks, round-robin over the streams.

    Chunk sizes differ by at most one (the first ``n % chunks`` get the extra element),
    so no element is dropped when ``n`` does not divide evenly, and no chunk is empty.
    """
    n = validate.positive_int(n, "n")
    n_chunks = min(validate.positive_int(n_chunks, "n_chunks"), n)
    n_streams = validate.positive_int(n_streams, "n_streams", maximum=64)
    base, extra = divmod(n, n_chunks)
    chunks, lo = [], 0
    for i in range(n_chunks):
        hi = lo + base + (1 if i < extra else 0)
        chunks.append(Chunk(i, i % n_streams, lo, hi))
        lo = hi
    return chunks


# A chunk's three stages, in the order its stream runs them.
KINDS = ("h2d", "kernel", "d2h")


# --------------------------------------------------------------------------- the article's programs

ARTICLE_STREAMS = 5  # the Numba article's stream count


def _article_launch(kernel, da, db, dout, n, stream=0):
    threads = 1024
    blocks = math.ceil(n / threads)
    kernel[blocks, threads, stream](da, db, dout, n)


def article_default_stream(kernel, x, y):
    """The article's first program: copies, one launch and a copy back, all on the default
    stream."""
    n = x.size
    x_device = cuda.to_device(x)
    y_device = cuda.to_device(y)
    out_device = cuda.device_array(n)  # float64, as in the article
    _article_launch(kernel, x_device, y_device, out_device, n)
    result = out_device.copy_to_host()
    cuda.synchronize()
    return result


def article_five_streams(kernel, x, y, n_streams: int = ARTICLE_STREAMS):
    """The article's multi-stream program, bugs included: pageable copies, one shared output
    buffer for all streams, and ``n // n_streams`` per segment (the remainder is dropped)."""
    n = x.size
    segment = n // n_streams
    streams = [cuda.stream() for _ in range(n_streams)]
    shared_out = cuda.device_array(segment)
    result = np.empty(n)
    for i in range(n_streams):
        sl = slice(i * segment, (i + 1) * segment)
        xd = cuda.to_device(x[sl], stream=streams[i])
        yd = cuda.to_device(y[sl], stream=streams[i])
        _article_launch(kernel, xd, yd, shared_out, segment, streams[i])
        result[sl] = shared_out.copy_to_host(stream=streams[i])
    cuda.synchronize()
    return result


def shared_buffer_pipeline(x, y, out, n_streams: int = ARTICLE_STREAMS, *,
                           breadth_first: bool = False):
    """The article's shared output buffer with pinned memory, where streams really overlap.

    ``breadth_first=True`` issues every copy in, then every kernel, then every copy
    back (a common way to write it): then every copy back reads the last kernel's
    result, even in the simulator. Depth-first, the race depends on timing.
    """
    n = x.size
    segment = n // n_streams
    streams = [cuda.stream() for _ in range(n_streams)]
    shared_out = cuda.device_array(segment, dtype=out.dtype)
    ins = []
    for i in range(n_streams):
        sl = slice(i * segment, (i + 1) * segment)
        ins.append((cuda.to_device(x[sl], stream=streams[i]),
                    cuda.to_device(y[sl], stream=streams[i]), sl))
        if not breadth_first:
            _article_launch(article_add, ins[i][0], ins[i][1], shared_out, segment, streams[i])
            shared_out.copy_to_host(out[sl], stream=streams[i])
    if breadth_first:
        for i, (xd, yd, _sl) in enumerate(ins):
            _article_launch(article_add, xd, yd, shared_out, segment, streams[i])
        for i, (_xd, _yd, sl) in enumerate(ins):
            shared_out.copy_to_host(out[sl], stream=streams[i])
    cuda.synchronize()
    return out


def fixed_five_streams(x, y, out, n_streams: int = ARTICLE_STREAMS):
    """The article's program fixed: pinned memory, one output slice per segment, every
    element covered (the last segment takes the remainder)."""
    n = x.size
    chunks = plan_chunks(n, n_streams, n_streams)
    streams = [cuda.stream() for _ in range(n_streams)]
    d_x = cuda.device_array(n, dtype=x.dtype)
    d_y = cuda.device_array(n, dtype=y.dtype)
    d_out = cuda.device_array(n, dtype=out.dtype)
    for c in chunks:
        s, sl = streams[c.stream], slice(c.lo, c.hi)
        d_x[sl].copy_to_device(x[sl], stream=s)
        d_y[sl].copy_to_device(y[sl], stream=s)
        _article_launch(article_add, d_x[sl], d_y[sl], d_out[sl], c.size, s)
        d_out[sl].copy_to_host(out[sl], stream=s)
    cuda.synchronize()
    return out



def _check_article_args(x, y, out=None, n_streams=ARTICLE_STREAMS, breadth_first=False,
                        kernel=None):
    if kernel is not None:
        validate.kernel(kernel)
    x = validate.array(x, name="x", dtype=None)
    y = validate.array(y, name="y", dtype=None)
    validate.same_shape(x, y, ("x", "y"))
    if out is not None:
        validate.same_shape(x, validate.array(out, name="out", dtype=None, writes=True), ("x", "out"))
    validate.positive_int(n_streams, "n_streams", maximum=64)
    validate.boolean(breadth_first, "breadth_first")


def _checked(fn, check):
    """``fn`` with its arguments checked first; its source (shown in the book, and run as a
    stand-alone script) stays the article's, since ``inspect.getsource`` unwraps it."""
    import functools

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        check(*args, **kwargs)
        return fn(*args, **kwargs)

    return checked


# The article's programs are shown and run verbatim; their checks wrap them.
article_default_stream = _checked(article_default_stream, lambda kernel, x, y:
                                  _check_article_args(x, y, kernel=kernel))
article_five_streams = _checked(
    article_five_streams, lambda kernel, x, y, n_streams=ARTICLE_STREAMS:
    _check_article_args(x, y, n_streams=n_streams, kernel=kernel))
shared_buffer_pipeline = _checked(
    shared_buffer_pipeline, lambda x, y, out, n_streams=ARTICLE_STREAMS, *, breadth_first=False:
    _check_article_args(x, y, out, n_streams, breadth_first))
fixed_five_streams = _checked(fixed_five_streams, lambda x, y, out, n_streams=ARTICLE_STREAMS:
                              _check_article_args(x, y, out, n_streams))


def pinned_default_stream(x, y, out):
    """The article's serial program with pinned host memory: ``x`` and ``y`` copied in, one
    launch and the copy back into the pinned ``out``, all on the default stream."""
    n = x.size
    d_x, d_y = cuda.to_device(x), cuda.to_device(y)
    d_out = cuda.device_array(n, dtype=out.dtype)
    _article_launch(article_add, d_x, d_y, d_out, n)
    d_out.copy_to_host(out)
    cuda.synchronize()
    return out


pinned_default_stream = _checked(pinned_default_stream, lambda x, y, out:
                                 _check_article_args(x, y, out))
