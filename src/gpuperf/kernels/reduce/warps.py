"""The reduce ladder from ``v4`` on: the last warp, warp shuffles, a block reduce and 16-byte loads.

``v4``    the last warp unrolled with no synchronization: a race since Volta.
``v4.1``  the last warp through a register, with ``syncwarp`` between reads and writes.
``v4.2``  the last warp with ``shfl_down_sync``: registers only.
``v5``    the whole tree unrolled for a block size fixed at compile time (a factory).
``v6``    many elements per thread, the number of blocks chosen by the host.
``v7``    a block reduce from two rounds of warp shuffles around one barrier.
``v8``    16-byte vector loads (``ld.global.v4.f32``), a grid of SMs x resident blocks.
"""

from __future__ import annotations

import functools

from numba import cuda, float32  # gpuperf/__init__ has already chosen the mode

from gpuperf import validate
from gpuperf.vector import load_float4

from .kernels import FULL_MASK, WARP, _check_block


@functools.lru_cache(maxsize=None, typed=True)
def make_v4(block: int):
    """v4: the last warp unrolled with no barrier. WRONG since Volta: kept to show the race.

    The study notes' CUDA marks the shared array ``volatile``; Numba has no volatile, so
    the compiler may also keep values in registers. Either way a lane may read a
    neighbour's slot before the neighbour has written it.
    """
    block = _check_block("v4", block)

    @cuda.jit
    def reduce_v4(x, partial, n):
        sdata = cuda.shared.array(block, float32)
        tid = cuda.threadIdx.x
        i = cuda.blockIdx.x * (2 * cuda.blockDim.x) + tid
        j = i + cuda.blockDim.x
        a = x[i] if i < n else float32(0.0)
        b = x[j] if j < n else float32(0.0)
        sdata[tid] = a + b
        cuda.syncthreads()
        s = cuda.blockDim.x // 2
        while s > 32:
            if tid < s:
                sdata[tid] += sdata[tid + s]
            cuda.syncthreads()
            s //= 2
        if tid < 32:
            # "A warp runs in lockstep" -- no longer true: nothing orders these steps
            # between lanes, so lane 0 may read sdata[16] before lane 16 updated it.
            sdata[tid] += sdata[tid + 32]
            sdata[tid] += sdata[tid + 16]
            sdata[tid] += sdata[tid + 8]
            sdata[tid] += sdata[tid + 4]
            sdata[tid] += sdata[tid + 2]
            sdata[tid] += sdata[tid + 1]
        if tid == 0:
            partial[cuda.blockIdx.x] = sdata[0]

    return reduce_v4


@functools.lru_cache(maxsize=None, typed=True)
def make_v4_1(block: int):
    """v4.1: the last warp through a register, ``syncwarp`` between every read and write."""
    block = _check_block("v4.1", block)

    @cuda.jit
    def reduce_v4_1(x, partial, n):
        sdata = cuda.shared.array(block, float32)
        tid = cuda.threadIdx.x
        i = cuda.blockIdx.x * (2 * cuda.blockDim.x) + tid
        j = i + cuda.blockDim.x
        a = x[i] if i < n else float32(0.0)
        b = x[j] if j < n else float32(0.0)
        sdata[tid] = a + b
        cuda.syncthreads()
        s = cuda.blockDim.x // 2
        while s > 32:
            if tid < s:
                sdata[tid] += sdata[tid + s]
            cuda.syncthreads()
            s //= 2
        if tid < 32:
            v = sdata[tid] + sdata[tid + 32]  # a float register (the notes' `int v` truncates)
            offset = 16
            while offset > 0:
                cuda.syncwarp(FULL_MASK)  # every lane has read before anyone writes
                sdata[tid] = v
                cuda.syncwarp(FULL_MASK)  # every lane has written before anyone reads
                v += sdata[tid + offset]
                offset //= 2
            if tid == 0:
                partial[cuda.blockIdx.x] = v

    return reduce_v4_1


@cuda.jit(device=True, inline=True)
def warp_sum(v):
    """Sum ``v`` over the 32 lanes of a warp with shuffles; lane 0 gets the total."""
    v += cuda.shfl_down_sync(FULL_MASK, v, 16)
    v += cuda.shfl_down_sync(FULL_MASK, v, 8)
    v += cuda.shfl_down_sync(FULL_MASK, v, 4)
    v += cuda.shfl_down_sync(FULL_MASK, v, 2)
    v += cuda.shfl_down_sync(FULL_MASK, v, 1)
    return v


@functools.lru_cache(maxsize=None, typed=True)
def make_v4_2(block: int):
    """v4.2: the last warp with warp shuffles: registers, no shared memory, no race."""
    block = _check_block("v4.2", block)

    @cuda.jit
    def reduce_v4_2(x, partial, n):
        sdata = cuda.shared.array(block, float32)
        tid = cuda.threadIdx.x
        i = cuda.blockIdx.x * (2 * cuda.blockDim.x) + tid
        j = i + cuda.blockDim.x
        a = x[i] if i < n else float32(0.0)
        b = x[j] if j < n else float32(0.0)
        sdata[tid] = a + b
        cuda.syncthreads()
        s = cuda.blockDim.x // 2
        while s > 32:
            if tid < s:
                sdata[tid] += sdata[tid + s]
            cuda.syncthreads()
            s //= 2
        if tid < 32:
            v = warp_sum(sdata[tid] + sdata[tid + 32])
            if tid == 0:
                partial[cuda.blockIdx.x] = v

    return reduce_v4_2


@functools.lru_cache(maxsize=None, typed=True)
def make_v5(block: int):
    """v5: the whole tree unrolled: ``block`` is a compile-time constant, dead steps vanish."""
    block = _check_block("v5", block)

    @cuda.jit
    def reduce_v5(x, partial, n):
        sdata = cuda.shared.array(block, float32)
        tid = cuda.threadIdx.x
        i = cuda.blockIdx.x * (2 * block) + tid
        j = i + block
        a = x[i] if i < n else float32(0.0)
        b = x[j] if j < n else float32(0.0)
        sdata[tid] = a + b
        cuda.syncthreads()
        # `block` is a closure constant: the compiler folds each test and keeps only
        # the steps this block size needs -- C++'s template<unsigned blockSize>.
        if block >= 1024:
            if tid < 512:
                sdata[tid] += sdata[tid + 512]
            cuda.syncthreads()
        if block >= 512:
            if tid < 256:
                sdata[tid] += sdata[tid + 256]
            cuda.syncthreads()
        if block >= 256:
            if tid < 128:
                sdata[tid] += sdata[tid + 128]
            cuda.syncthreads()
        if block >= 128:
            if tid < 64:
                sdata[tid] += sdata[tid + 64]
            cuda.syncthreads()
        if tid < 32:
            v = warp_sum(sdata[tid] + sdata[tid + 32])
            if tid == 0:
                partial[cuda.blockIdx.x] = v

    return reduce_v5


@functools.lru_cache(maxsize=None, typed=True)
def make_v6(block: int):
    """v6: each thread first sums ``per_thread`` elements (a run-time count), then v5's tree."""
    block = _check_block("v6", block)

    @cuda.jit
    def reduce_v6(x, partial, n, per_thread):
        sdata = cuda.shared.array(block, float32)
        tid = cuda.threadIdx.x
        # Block b owns the slice [b * block * per_thread, (b + 1) * block * per_thread);
        # in each round its threads read `block` consecutive elements (coalesced).
        i = cuda.blockIdx.x * block * per_thread + tid
        total = float32(0.0)
        for _ in range(per_thread):
            if i < n:
                total += x[i]
            i += block
        sdata[tid] = total
        cuda.syncthreads()
        if block >= 1024:
            if tid < 512:
                sdata[tid] += sdata[tid + 512]
            cuda.syncthreads()
        if block >= 512:
            if tid < 256:
                sdata[tid] += sdata[tid + 256]
            cuda.syncthreads()
        if block >= 256:
            if tid < 128:
                sdata[tid] += sdata[tid + 128]
            cuda.syncthreads()
        if block >= 128:
            if tid < 64:
                sdata[tid] += sdata[tid + 64]
            cuda.syncthreads()
        if tid < 32:
            v = warp_sum(sdata[tid] + sdata[tid + 32])
            if tid == 0:
                partial[cuda.blockIdx.x] = v

    return reduce_v6


def make_block_sum(block: int):
    """A device function summing one value per thread over the block; thread 0 gets it.

    Two rounds of warp shuffles around one barrier (PyTorch's BlockReduceSum): every
    warp reduces its 32 values in registers, lane 0 of each warp parks the result in
    shared memory, and warp 0 reduces those. Only slots of warps that exist are read:
    shared memory is not zeroed, so reading all 32 slots would add garbage.
    """
    block = validate.block_size(block, multiple_of=WARP)  # whole warps: each parks one slot
    warps = block // WARP

    @cuda.jit(device=True, inline=True)
    def block_sum(v, warp_sums):
        lane = cuda.threadIdx.x % WARP
        wid = cuda.threadIdx.x // WARP
        v = warp_sum(v)
        if lane == 0:
            warp_sums[wid] = v
        cuda.syncthreads()
        total = float32(0.0)
        if wid == 0:
            total = warp_sums[lane] if lane < warps else float32(0.0)
            total = warp_sum(total)
        return total

    return block_sum


@functools.lru_cache(maxsize=None, typed=True)
def make_v7(block: int):
    """v7: v6's loads, then a block reduce of two warp-shuffle rounds and one barrier."""
    block = _check_block("v7", block)
    block_sum = make_block_sum(block)

    @cuda.jit
    def reduce_v7(x, partial, n, per_thread):
        warp_sums = cuda.shared.array(WARP, float32)
        tid = cuda.threadIdx.x
        i = cuda.blockIdx.x * block * per_thread + tid
        total = float32(0.0)
        for _ in range(per_thread):
            if i < n:
                total += x[i]
            i += block
        total = block_sum(total, warp_sums)
        if tid == 0:
            partial[cuda.blockIdx.x] = total

    return reduce_v7


@functools.lru_cache(maxsize=None, typed=True)
def make_v8(block: int, unroll: int = 1):
    """v8: a grid-stride loop of 16-byte loads, then v7's block reduce.

    ``head`` elements (0 to 3) come before the first 16-byte boundary and are read one
    by one, as are the last ``(n - head) % 4``: any ``n`` and any start address work.
    ``unroll`` (1, 2 or 4) is how many 16-byte loads a thread issues before it adds:
    more loads in flight per thread, for GPUs that need more bytes in flight than one
    load per resident thread provides.
    """
    block = _check_block("v8", block)
    if unroll not in (1, 2, 4):
        raise ValueError(f"unroll={unroll!r} must be 1, 2 or 4.")
    block_sum = make_block_sum(block)

    @cuda.jit
    def reduce_v8(x, partial, n, head):
        warp_sums = cuda.shared.array(WARP, float32)
        tid = cuda.threadIdx.x
        g = cuda.blockIdx.x * block + tid
        stride = cuda.gridDim.x * block
        # Four accumulators: one add chain per vector lane, summed at the end.
        s0 = float32(0.0)
        s1 = float32(0.0)
        s2 = float32(0.0)
        s3 = float32(0.0)
        if g < head:
            s0 = x[g]
        nvec = (n - head) // 4
        v = g
        if unroll == 4:  # a compile-time constant: the other branches vanish
            while v + 3 * stride < nvec:
                a = load_float4(x, head + 4 * v)
                b = load_float4(x, head + 4 * (v + stride))
                c = load_float4(x, head + 4 * (v + 2 * stride))
                d = load_float4(x, head + 4 * (v + 3 * stride))
                s0 += (a[0] + b[0]) + (c[0] + d[0])
                s1 += (a[1] + b[1]) + (c[1] + d[1])
                s2 += (a[2] + b[2]) + (c[2] + d[2])
                s3 += (a[3] + b[3]) + (c[3] + d[3])
                v += 4 * stride
        if unroll >= 2:
            while v + stride < nvec:
                a = load_float4(x, head + 4 * v)
                b = load_float4(x, head + 4 * (v + stride))
                s0 += a[0] + b[0]
                s1 += a[1] + b[1]
                s2 += a[2] + b[2]
                s3 += a[3] + b[3]
                v += 2 * stride
        while v < nvec:
            a = load_float4(x, head + 4 * v)
            s0 += a[0]
            s1 += a[1]
            s2 += a[2]
            s3 += a[3]
            v += stride
        t = head + 4 * nvec + g  # at most three elements left over
        if t < n:
            s1 += x[t]
        total = block_sum((s0 + s1) + (s2 + s3), warp_sums)
        if tid == 0:
            partial[cuda.blockIdx.x] = total

    return reduce_v8
