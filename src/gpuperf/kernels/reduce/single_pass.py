"""One launch instead of two: the single pass (the last block adds the partials) and the
warp atomics with their two controls (one atomic per block; atomics spread over many words).

Each factory's host side is here too: ``reduce_single_pass(x)`` and the ``*_calls`` helpers
that return ``(run, fetch, packed)`` for one call of a pattern (buffers allocated once).
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda, float32, int32  # gpuperf/__init__ has already chosen the mode

from gpuperf import device, simwarp, validate
from gpuperf.mode import SIMULATOR
from gpuperf.vector import load_float4

from .host import head_elements, resident_blocks_per_sm
from .kernels import DEFAULT_BLOCK, WARP, _check_block
from .warps import make_block_sum, warp_sum

# The single pass's Numba signature (for one_wave, PTX and resource queries).
_SIG_SINGLE_PASS = "void(float32[::1], float32[::1], int32[::1], float32[::1], int64, int64)"


@cuda.jit
def _read_by_atomic_zero(partial, out):
    """How an earlier version of the single pass read a partial: an atomic add of zero."""
    out[0] = cuda.atomic.add(partial, 0, float32(0.0))


@cuda.jit(device=True, inline=True)
def _vector_stride_sum(x, n, head, g, stride):
    """This thread's share of ``x`` as v8 reads it without unroll: the ``head`` elements one
    at a time, then 16-byte vectors, one per trip of a grid-stride loop, into four sums, then
    the (at most three) elements after the last vector."""
    s0 = float32(0.0)
    s1 = float32(0.0)
    s2 = float32(0.0)
    s3 = float32(0.0)
    if g < head:
        s0 = x[g]
    nvec = (n - head) // 4
    v = g
    while v < nvec:
        a = load_float4(x, head + 4 * v)
        s0 += a[0]
        s1 += a[1]
        s2 += a[2]
        s3 += a[3]
        v += stride
    t = head + 4 * nvec + g
    if t < n:
        s1 += x[t]
    return (s0 + s1) + (s2 + s3)


@functools.lru_cache(maxsize=None, typed=True)
def make_single_pass(block: int, width: int = 4):
    """v8's block reduce, and the second stage in the same launch.

    Every block writes its partial sum, makes it visible to the whole GPU (a memory fence),
    then takes a ticket from a counter in global memory. The block that draws the last
    ticket knows every other partial is written: it fences too (so that its own reads come
    after the ticket, and its SM's L1 holds no stale line), adds the partials with plain
    loads and writes the sum. This is the pattern of CUDA's threadFenceReduction sample: one
    launch instead of two, at the price of one atomic per block. The counter is reset by
    that last block, so the same ``ticket`` array serves the next call.

    ``width``: 4 reads v8's 16-byte vectors (``head`` elements one at a time first); 1 reads
    one float per trip of the grid-stride loop (to compare with a one-float argmax).
    """
    block = _check_block("v8", block)
    width = validate.choice(validate.positive_int(width, "width"), "width", (1, 4))
    block_sum = make_block_sum(block)

    @cuda.jit
    def reduce_single_pass(x, partial, ticket, out, n, head):
        warp_sums = cuda.shared.array(WARP, float32)
        is_last = cuda.shared.array(1, int32)
        tid = cuda.threadIdx.x
        g = cuda.blockIdx.x * block + tid
        stride = cuda.gridDim.x * block
        if width == 4:
            mine = _vector_stride_sum(x, n, head, g, stride)
        else:
            mine = float32(0.0)
            j = g
            while j < n:
                mine += x[j]
                j += stride
        total = block_sum(mine, warp_sums)
        if tid == 0:
            partial[cuda.blockIdx.x] = total
            cuda.threadfence()  # the partial reaches the whole GPU before the ticket is taken
            is_last[0] = int32(1) if cuda.atomic.add(ticket, 0, 1) == cuda.gridDim.x - 1 else int32(0)
        cuda.syncthreads()
        if is_last[0]:  # the same for the whole block: no thread skips the barriers below
            # The reading side's fence: no read below moves before the ticket, and on sm_70+
            # it compiles to MEMBAR.SC.GPU plus CCTL.IVALL, which empties this SM's L1.
            cuda.threadfence()
            acc = float32(0.0)
            for j in range(tid, cuda.gridDim.x, block):
                acc += partial[j]
            acc = block_sum(acc, warp_sums)
            if tid == 0:
                out[0] = acc
                ticket[0] = 0

    return reduce_single_pass


@functools.lru_cache(maxsize=None, typed=True)
def make_warp_atomic(block: int):
    """The other one-launch pattern: v8's loads, a shuffle reduce inside each warp, then one
    ``atomic.add`` per warp into the result, which must be zero before the launch. No barrier,
    no shared memory and no ticket, but ``block // 32`` atomics per block on one address, in
    whatever order the warps finish: the float sum is not the same from run to run."""
    block = _check_block("v8", block)

    @cuda.jit
    def reduce_warp_atomic(x, out, n, head):
        g = cuda.blockIdx.x * block + cuda.threadIdx.x
        total = warp_sum(_vector_stride_sum(x, n, head, g, cuda.gridDim.x * block))
        if cuda.threadIdx.x % WARP == 0:
            cuda.atomic.add(out, 0, total)

    return reduce_warp_atomic


@functools.lru_cache(maxsize=None, typed=True)
def make_per_block_atomic(block: int):
    """The warp atomics' ablation: the same loads and grid, v7's block reduce (two shuffle
    rounds, one barrier), then one ``atomic.add`` per block instead of one per warp:
    ``block // 32`` times fewer atomics on the one address, everything else the same."""
    block = _check_block("v8", block)
    block_sum = make_block_sum(block)

    @cuda.jit
    def reduce_per_block_atomic(x, out, n, head):
        warp_sums = cuda.shared.array(WARP, float32)
        g = cuda.blockIdx.x * block + cuda.threadIdx.x
        total = block_sum(_vector_stride_sum(x, n, head, g, cuda.gridDim.x * block), warp_sums)
        if cuda.threadIdx.x == 0:
            cuda.atomic.add(out, 0, total)

    return reduce_per_block_atomic


# The spread control's atomics land on SPREAD_WORDS words this far apart (in floats): 128
# bytes, so that no two of its words share an L2 line.
SPREAD_WORD_STRIDE = 32
SPREAD_WORDS = 16


@functools.lru_cache(maxsize=None, typed=True)
def make_spread_atomic(block: int, words: int = SPREAD_WORDS):
    """The warp atomics' other control: the same loads, grid and one atomic per warp, but warp
    ``w`` adds into word ``w % words`` of ``out``, the words 128 bytes apart
    (``SPREAD_WORD_STRIDE`` floats): as many atomics as ``make_warp_atomic``, on ``words``
    addresses instead of one. Not a finished sum: the words must be zero before the launch and
    added up after it (``out[::SPREAD_WORD_STRIDE].sum()``). ``out`` must hold at least
    ``words * SPREAD_WORD_STRIDE`` floats: the kernel does not check."""
    block = _check_block("v8", block)
    words = validate.positive_int(words, "words")

    @cuda.jit
    def reduce_spread_atomic(x, out, n, head):
        g = cuda.blockIdx.x * block + cuda.threadIdx.x
        total = warp_sum(_vector_stride_sum(x, n, head, g, cuda.gridDim.x * block))
        if cuda.threadIdx.x % WARP == 0:
            cuda.atomic.add(out, ((g // WARP) % words) * SPREAD_WORD_STRIDE, total)

    return reduce_spread_atomic


@cuda.jit
def _zero_all(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = float32(0.0)


def one_wave(kernel, signature: str, block: int) -> int:
    """The grid of one full wave of ``kernel`` (compiled for ``signature``) in blocks of
    ``block`` threads: SMs x the blocks one SM holds by the compiled kernel's registers and
    shared memory as well as its threads (``gp.device.occupancy``). A grid that counts
    threads alone can ask for more blocks than fit and run a second, partial wave. Under the
    simulator (nothing compiled) only the thread limit counts."""
    block = _check_block("v8", block)
    if SIMULATOR:
        return device.sm_count(default=2) * resident_blocks_per_sm(block)
    compiled = kernel.compile(signature)
    occ = device.occupancy(block, max(1, compiled.regs_per_thread), compiled.shared_mem_per_block)
    return device.sm_count(default=2) * occ["blocks_per_sm"]


def _one_launch_arguments(x, block, blocks, kernel_of, sig):
    """``(d_x, n, block, blocks)`` for the one-launch reductions, each argument checked; the
    default grid is one full wave of ``kernel_of(block)`` (``one_wave``)."""
    x = validate.array(x, name="x", dtype=np.float32, ndim=1, min_size=1)
    block = _check_block("v8", block)
    n = int(x.shape[0])
    if blocks is None:
        blocks = one_wave(kernel_of(block), sig, block)
    blocks = validate.positive_int(blocks, "blocks", maximum=simwarp.MAX_GRID_DIM[0])
    d_x = cuda.to_device(x) if isinstance(x, np.ndarray) and not SIMULATOR else x
    return d_x, n, block, blocks


def _one_launch(kernel, grid: int, block: int, *args):
    """``run()`` launching ``kernel[grid, block](*args)``: packed (one driver call, as a
    :class:`Plan`'s launches are) where it can be, through Numba otherwise (the simulator).
    The second value says which, so that a comparison with a Plan compares like with like."""
    from gpuperf.kernels.launch import NotPackable, PackedLaunch

    try:
        launch = PackedLaunch(kernel, grid, block, *args)
    except NotPackable:
        return (lambda: kernel[grid, block](*args)), False
    launch.keeps_alive = args  # it holds only the arrays' addresses: the arrays live with it
    return launch, True


def _single_pass_calls(d_x, n: int, grid: int, block: int, width: int = 4):
    """``(run, fetch, packed)``: one call of the single pass on ``d_x`` (its buffers allocated
    once, as a Plan's are), the sum of the last call, and whether the launch is packed."""
    partial = cuda.device_array(grid, dtype=np.float32)
    ticket = cuda.to_device(np.zeros(1, dtype=np.int32))
    out = cuda.device_array(1, dtype=np.float32)
    run, packed = _one_launch(make_single_pass(block, width), grid, block, d_x, partial, ticket,
                              out, n, head_elements(d_x, n))
    return run, lambda: float(out.copy_to_host()[0]), packed


def reduce_single_pass(x, *, block: int = DEFAULT_BLOCK, blocks: int | None = None) -> float:
    """Sum the float32 vector ``x`` (NumPy or device array) in one launch
    (``make_single_pass``): the last block to finish adds the partial sums.

    ``block``: threads per block (a multiple of 32, up to 1024). ``blocks``: the grid (by
    default one full wave: every SM gets as many blocks as it can hold). Returns a Python
    float.
    """
    d_x, n, block, blocks = _one_launch_arguments(x, block, blocks, make_single_pass,
                                                  _SIG_SINGLE_PASS)
    run, fetch, _ = _single_pass_calls(d_x, n, blocks, block)
    run()
    return fetch()


def _zeroing_launch(out):
    """``(run, packed)``: the launch that zeroes ``out`` before each call of an atomics
    pattern, the same kernel and block for all three, so that they differ only in their sums."""
    return _one_launch(_zero_all, (out.size + 255) // 256, 256, out)


def _warp_atomic_calls(d_x, n: int, grid: int, block: int, make=None):
    """``(run, fetch, packed)``: one call of ``make_warp_atomic`` (or another factory of the
    same signature, ``make``) on ``d_x``, a launch that zeroes the result first included (two
    launches per call, both packed where they can be)."""
    make = make or make_warp_atomic
    out = cuda.device_array(1, dtype=np.float32)
    zero, zero_packed = _zeroing_launch(out)
    add, add_packed = _one_launch(make(block), grid, block, d_x, out, n, head_elements(d_x, n))

    def run():
        zero()
        add()

    return run, lambda: float(out.copy_to_host()[0]), zero_packed and add_packed


def _block_atomic_calls(d_x, n: int, grid: int, block: int):
    """``(run, fetch, packed)``: as ``_warp_atomic_calls``, with one atomic per block."""
    return _warp_atomic_calls(d_x, n, grid, block, make_per_block_atomic)


def _spread_atomic_calls(d_x, n: int, grid: int, block: int, words: int = SPREAD_WORDS):
    """``(run, fetch, packed)``: as ``_warp_atomic_calls``, with ``make_spread_atomic``: a
    launch zeroes the ``words`` words, and ``fetch`` adds them up on the host (in float64; on
    integer input every partial and their sum are exact)."""
    kernel = make_spread_atomic(block, words)  # validates block and words first
    out = cuda.device_array(words * SPREAD_WORD_STRIDE, dtype=np.float32)
    zero, zero_packed = _zeroing_launch(out)
    add, add_packed = _one_launch(kernel, grid, block, d_x, out, n, head_elements(d_x, n))

    def run():
        zero()
        add()

    def fetch():
        return float(out.copy_to_host()[::SPREAD_WORD_STRIDE].sum(dtype=np.float64))

    return run, fetch, zero_packed and add_packed
