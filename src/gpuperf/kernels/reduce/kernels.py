"""The reduce ladder's first rungs: summing a float32 vector, from one thread to a shared-memory tree.

Every rung turns ``n`` float32 values into one number, correct for every ``n >= 1``.

Prologue (the step-by-step post: one thread, then atomics, then shared memory)
-----------------------------------------------------------------------------
``single-thread``        one GPU thread walks the whole array.
``block-atomic``         one block, a grid-stride loop, one ``atomic.add`` per thread.
``grid-atomic``          many blocks, a grid-stride loop, one ``atomic.add`` per thread.
``shared-atomic``        many blocks, a shared-memory tree, one ``atomic.add`` per block.

The ladder (the reduce study notes, after NVIDIA's "Optimizing Parallel Reduction in CUDA")
-----------------------------------------------------------------------------------------
``v0``    interleaved addressing, ``tid % (2 * s) == 0`` picks the adding threads.
``v1``    strided index: thread ``t`` adds at ``2 * s * t`` (no divergence, bank conflicts).
``v1.5``  ``v0`` with the remainder replaced by a bit mask, ``tid & (2 * s - 1)``.
``v2``    sequential addressing: thread ``t`` adds ``t + s`` to ``t``; ``s`` halves.
``v3``    each thread adds two elements while loading (half the blocks).

The rungs from ``v4`` on (the last warp, warp shuffles, 16-byte loads) are in ``warps.py``.
A ladder rung writes one partial sum per block; a second stage turns the partials into one
number (``host.py``: ``reduce_sum``, ``plan``). The prologue rungs add into the result
with atomics instead.
"""

from __future__ import annotations

import functools

from numba import cuda, float32  # gpuperf/__init__ has already chosen the mode

from gpuperf import validate

FULL_MASK = 0xFFFFFFFF  # all 32 lanes take part in a shuffle or a syncwarp
WARP = 32  # threads per warp: the block reduce keeps one shared slot per warp

# The rungs by name, in the order the chapter climbs them (the docstring says what each does).
PROLOGUE = ("single-thread", "block-atomic", "grid-atomic", "shared-atomic")
LADDER = ("v0", "v1", "v1.5", "v2", "v3", "v4", "v4.1", "v4.2", "v5", "v6", "v7", "v8")
VERSIONS = PROLOGUE + LADDER
# Rungs whose grid the host chooses (each thread loops over many elements); the
# others launch one block per block-sized (or two-block-sized) slice of the data.
GRID_CHOSEN = ("grid-atomic", "shared-atomic", "v6", "v7", "v8")
# Rungs that are known to be wrong on GPUs with independent thread scheduling.
RACY = ("v4",)

# Smallest block each rung accepts: the v4 family reads sdata[tid + 32].
_MIN_BLOCK = {"v4": 64, "v4.1": 64, "v4.2": 64, "v5": 64, "v6": 64}
# Rungs built on a halving tree need a power-of-two block; the rest need whole warps.
_POWER_OF_TWO = ("shared-atomic", "v0", "v1", "v1.5", "v2", "v3", "v4", "v4.1", "v4.2", "v5", "v6")

DEFAULT_BLOCK = 256
# v8 alone defaults to bigger blocks: on an H200, 512-thread blocks with four loads in
# flight per thread reached 98-99% of cupy.sum, 256-thread blocks 95-97%.
DEFAULT_BLOCKS = {"v8": 512}
# Waves of resident blocks for the rungs whose grid the host chooses: the grid is
# SMs x (blocks one SM holds at once) x waves. v8 (a grid-stride loop) needs one wave;
# v6 and v7 give each block one contiguous slice of x, and on an H200 they ran best
# with 8 to 16 waves (short slices, 64 to 128 elements per thread): see the chapter.
DEFAULT_WAVES = {"v8": 1, "v7": 8, "v6": 8, "grid-atomic": 1, "shared-atomic": 1}
# 16-byte loads a v8 thread issues per loop trip (see make_v8), tuned on an H200.
V8_UNROLL = 4


def _check_block(version: str, block) -> int:
    """The block ``version`` runs with: its default for None, else ``block`` checked."""
    if version == "single-thread":
        if block not in (None, 1):
            raise ValueError("version='single-thread' runs exactly one thread; leave block=None.")
        return 1
    if block is None:
        return DEFAULT_BLOCKS.get(version, DEFAULT_BLOCK)
    minimum = _MIN_BLOCK.get(version, WARP)
    block = validate.block_size(block, power_of_two=version in _POWER_OF_TWO,
                                multiple_of=None if version in _POWER_OF_TWO else WARP)
    if block < minimum:
        why = "its last warp reads sdata[tid + 32]" if minimum == 64 else "whole warps"
        raise ValueError(f"version={version!r} needs block >= {minimum} ({why}); "
                         f"got block={block}. Use block=256.")
    return block


# Loops over the tree read cuda.blockDim.x at run time (as the study notes' kernels do);
# the block size fixed by the factory only sizes the shared array, except in v5 and
# later, where it is the point: the compiler unrolls the whole tree.


@cuda.jit
def _zero(out):
    if cuda.grid(1) == 0:
        out[0] = float32(0.0)


@cuda.jit
def reduce_single_thread(x, out, n):
    """One thread adds everything: no parallelism at all (the step-by-step post's first attempt)."""
    if cuda.grid(1) == 0:
        total = float32(0.0)
        for i in range(n):
            total += x[i]
        out[0] = total


@cuda.jit
def reduce_single_thread_global(x, out, n):
    """The step-by-step post's one thread as it wrote it: every addition reads and writes the
    result ``out[0]`` in global memory instead of a register."""
    if cuda.grid(1) == 0:
        for i in range(n):
            out[0] += x[i]  # a load and a store of out[0] per element


@cuda.jit
def reduce_block_atomic(x, out, n):
    """One block; each thread sums a strided slice, then one atomic add per thread."""
    i = cuda.threadIdx.x
    total = float32(0.0)
    while i < n:
        total += x[i]
        i += cuda.blockDim.x
    cuda.atomic.add(out, 0, total)


@cuda.jit
def reduce_grid_atomic(x, out, n):
    """Many blocks, a grid-stride loop, then one atomic add per thread."""
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    total = float32(0.0)
    while i < n:
        total += x[i]
        i += stride
    cuda.atomic.add(out, 0, total)


@functools.lru_cache(maxsize=None, typed=True)
def make_shared_atomic(block: int):
    """Grid-stride sums, a shared-memory tree per block, one atomic add per block."""
    block = _check_block("shared-atomic", block)

    @cuda.jit
    def reduce_shared_atomic(x, out, n):
        sdata = cuda.shared.array(block, float32)
        tid = cuda.threadIdx.x
        i = cuda.grid(1)
        stride = cuda.gridsize(1)
        total = float32(0.0)
        while i < n:
            total += x[i]
            i += stride
        sdata[tid] = total
        cuda.syncthreads()
        s = cuda.blockDim.x // 2
        while s > 0:
            if tid < s:
                sdata[tid] += sdata[tid + s]
            cuda.syncthreads()
            s //= 2
        if tid == 0:
            cuda.atomic.add(out, 0, sdata[0])

    return reduce_shared_atomic


@functools.lru_cache(maxsize=None, typed=True)
def make_v0(block: int):
    """v0: interleaved addressing; ``tid % (2 * s) == 0`` selects the adding threads."""
    block = _check_block("v0", block)

    @cuda.jit
    def reduce_v0(x, partial, n):
        sdata = cuda.shared.array(block, float32)
        tid = cuda.threadIdx.x
        i = cuda.blockIdx.x * cuda.blockDim.x + tid
        sdata[tid] = x[i] if i < n else float32(0.0)  # the last block hangs over the end
        cuda.syncthreads()
        s = 1
        while s < cuda.blockDim.x:
            if tid % (2 * s) == 0:  # a remainder per thread per step, and divergent warps
                sdata[tid] += sdata[tid + s]
            cuda.syncthreads()
            s *= 2
        if tid == 0:
            partial[cuda.blockIdx.x] = sdata[0]

    return reduce_v0


@functools.lru_cache(maxsize=None, typed=True)
def make_v1(block: int):
    """v1: strided index; consecutive threads add, but at addresses 2*s apart."""
    block = _check_block("v1", block)

    @cuda.jit
    def reduce_v1(x, partial, n):
        sdata = cuda.shared.array(block, float32)
        tid = cuda.threadIdx.x
        i = cuda.blockIdx.x * cuda.blockDim.x + tid
        sdata[tid] = x[i] if i < n else float32(0.0)
        cuda.syncthreads()
        s = 1
        while s < cuda.blockDim.x:
            index = 2 * s * tid  # threads 0, 1, 2... work; their addresses collide in banks
            if index < cuda.blockDim.x:
                sdata[index] += sdata[index + s]
            cuda.syncthreads()
            s *= 2
        if tid == 0:
            partial[cuda.blockIdx.x] = sdata[0]

    return reduce_v1


@functools.lru_cache(maxsize=None, typed=True)
def make_v1_5(block: int):
    """v1.5: v0 with the remainder replaced by a mask (s is a power of two)."""
    block = _check_block("v1.5", block)

    @cuda.jit
    def reduce_v1_5(x, partial, n):
        sdata = cuda.shared.array(block, float32)
        tid = cuda.threadIdx.x
        i = cuda.blockIdx.x * cuda.blockDim.x + tid
        sdata[tid] = x[i] if i < n else float32(0.0)
        cuda.syncthreads()
        s = 1
        while s < cuda.blockDim.x:
            if (tid & (2 * s - 1)) == 0:  # same threads as v0, one AND instead of a division
                sdata[tid] += sdata[tid + s]
            cuda.syncthreads()
            s *= 2
        if tid == 0:
            partial[cuda.blockIdx.x] = sdata[0]

    return reduce_v1_5


@functools.lru_cache(maxsize=None, typed=True)
def make_v2(block: int):
    """v2: sequential addressing; thread t adds t + s, and s halves every step."""
    block = _check_block("v2", block)

    @cuda.jit
    def reduce_v2(x, partial, n):
        sdata = cuda.shared.array(block, float32)
        tid = cuda.threadIdx.x
        i = cuda.blockIdx.x * cuda.blockDim.x + tid
        sdata[tid] = x[i] if i < n else float32(0.0)
        cuda.syncthreads()
        s = cuda.blockDim.x // 2
        while s > 0:
            if tid < s:  # contiguous threads, contiguous addresses: no conflicts
                sdata[tid] += sdata[tid + s]
            cuda.syncthreads()
            s //= 2
        if tid == 0:
            partial[cuda.blockIdx.x] = sdata[0]

    return reduce_v2


@functools.lru_cache(maxsize=None, typed=True)
def make_v3(block: int):
    """v3: the first add happens during the load; each block covers 2 * block elements."""
    block = _check_block("v3", block)

    @cuda.jit
    def reduce_v3(x, partial, n):
        sdata = cuda.shared.array(block, float32)
        tid = cuda.threadIdx.x
        i = cuda.blockIdx.x * (2 * cuda.blockDim.x) + tid
        j = i + cuda.blockDim.x
        a = x[i] if i < n else float32(0.0)
        b = x[j] if j < n else float32(0.0)
        sdata[tid] = a + b
        cuda.syncthreads()
        s = cuda.blockDim.x // 2
        while s > 0:
            if tid < s:
                sdata[tid] += sdata[tid + s]
            cuda.syncthreads()
            s //= 2
        if tid == 0:
            partial[cuda.blockIdx.x] = sdata[0]

    return reduce_v3
