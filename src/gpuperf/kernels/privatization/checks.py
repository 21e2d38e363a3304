"""The privatization exercise's checker, and the data and ground truth histograms are checked on."""

from __future__ import annotations

import numpy as np

from gpuperf import exercises as ex
from gpuperf import validate as v

from .kernels import NBINS

DISTRIBUTIONS = ("uniform", "skewed")


def reference(data) -> np.ndarray:
    """Counts of each byte value, int64 (the ground truth)."""
    data = v.array(data, name="data", dtype=np.uint8, ndim=None, min_size=0, contiguous=False)
    if hasattr(data, "copy_to_host"):
        data = data.copy_to_host()
    return np.bincount(np.asarray(data).ravel(), minlength=NBINS)


def random_bytes(n: int, distribution: str = "uniform", seed: int = 0) -> np.ndarray:
    """``n`` random bytes: ``uniform`` over 0..255, or ``skewed`` (90% one random value)."""
    v.positive_int(n, "n", minimum=0)
    v.positive_int(seed, "seed", minimum=0)
    v.choice(distribution, "distribution", DISTRIBUTIONS)
    rng = np.random.default_rng(seed)
    data = rng.integers(0, NBINS, n, dtype=np.uint8)
    if distribution == "skewed":
        hot = np.uint8(rng.integers(0, NBINS))
        data[rng.random(n) < 0.9] = hot
    return data


def _check_counts_in_shared(chk, kernel, n: int = 2000, block: int = 64) -> None:
    """In the emulator's record of one block counting ``n`` bytes: the block updates the
    global histogram at most once per bin (the merge); every byte's count goes to shared
    memory. A kernel that counts into the global copy makes one global atomic per byte."""
    from gpuperf import emulator

    with chk.case(f"where one block counts {n:,} bytes, recorded in the emulator"):
        run = emulator.launch(kernel, 1, block, random_bytes(n, DISTRIBUTIONS[0], seed=3),
                              np.zeros(NBINS, np.int32))
        updates = sum(1 for e in run.events
                      if e.space == "global" and e.kind in ("atomic", "store"))
        if updates > NBINS:
            chk.fail(f"the block updated global memory {updates:,} times for {n:,} bytes: "
                     f"privatization counts every byte into the block's copy in shared "
                     f"memory and touches the global histogram at most once per bin "
                     f"({NBINS}), when merging. Is the counting loop adding to hist instead "
                     "of the private copy?")
            return
        # Every byte one atomic into the shared copy: counts first gathered in each thread's
        # own array (a local array of 256, in local memory on a GPU) do the exercise's counting
        # elsewhere, then hundreds of atomics per thread (found by a student review).
        shared = sum(1 for e in run.events if e.space == "shared" and e.kind == "atomic")
        if shared < n:
            chk.fail(f"the block made {shared:,} atomic additions to shared memory for {n:,} "
                     "bytes: count each byte with one cuda.atomic.add into the block's shared "
                     "copy, not into an array of each thread's own first.")


@ex.refuses_stubs
def check_private_histogram(kernel) -> ex.Report:
    """Check a privatized histogram ``kernel(data, hist)``: uint8 data, 256 int32 bins.

    ``hist`` starts at zero and the kernel adds its counts to it. The checker launches
    several grids, some far smaller than the data (so a grid-stride loop is needed).
    """
    chk = ex.Checker("privatized histogram", race_note=True)
    if not chk.is_kernel(kernel):
        return chk.report()
    chk.calls(kernel, "numba.cuda:shared.array",
              why="privatization keeps each block's copy of the histogram in shared memory "
                  "(cuda.shared.array).")
    chk.calls(kernel, "numba.cuda:atomic.add",
              why="threads of a block update the same private bins concurrently: use "
                  "cuda.atomic.add, on the shared copy and when merging into the global one.")
    chk.calls(kernel, "numba.cuda:syncthreads",
              why="the private copy must be zeroed before any thread counts into it, and "
                  "complete before it is merged: two cuda.syncthreads().")
    if not ex.preflight(chk, kernel, 3, 64, random_bytes(257, DISTRIBUTIONS[0], seed=2),
                        np.zeros(NBINS, np.int32)):
        return chk.report()
    _check_counts_in_shared(chk, kernel)
    launches = ((1, 32), (3, 64), (2, 256), (5, 32))
    for seed in ex.seeds():
        for dist in DISTRIBUTIONS:
            for n in (1, 31, 33, 257, 2000, *ex.hidden_sizes(2, 4000)):
                grid, block = launches[(n + seed) % len(launches)]
                with chk.case(f"{dist}, n={n}, launch [{grid}, {block}]", seed=seed):
                    data = random_bytes(n, dist, seed=seed * 1000 + n)
                    hist = np.zeros(NBINS, np.int32)
                    kernel[grid, block](data, hist)
                    ref = reference(data)
                    chk.record(hist, ref)
                    if int(hist.sum()) != n:
                        chk.fail(f"the counts add up to {int(hist.sum())}, not {n}: every byte "
                                 "must be counted exactly once (grid-stride loop, and a zeroed "
                                 "private copy merged exactly once).")
                    else:
                        chk.compare(hist, ref, rtol=0, atol=0, what="histogram")
    return chk.report()


def _attainable(intensity: float, peak_tflops: float, bandwidth_gbps: float) -> float:
    """The roofline: min(peak, intensity x bandwidth), in TFLOP/s (GB/s x FLOP/B = GFLOP/s)."""
    return min(peak_tflops, intensity * bandwidth_gbps / 1e3)


@ex.refuses_stubs
def check_attainable(fn) -> ex.Report:
    """Check ``fn(intensity, peak_tflops, bandwidth_gbps)``: the roofline's attainable rate in
    TFLOP/s and the roof that sets it, ``"memory"`` or ``"compute"``."""
    chk = ex.Checker("the roofline: attainable rate and its roof")
    rng = ex.case_rng(17)
    gpus = [(66.9, 4242.0), (8.1, 320.0), (19.5, 1555.0)]  # FP32 peak and copy: H200, T4, A100
    cases = []
    for peak, bw in gpus:
        ridge = peak * 1e3 / bw
        cases += [(ridge / 8, peak, bw), (ridge * 0.9, peak, bw), (ridge * 1.1, peak, bw),
                  (ridge * 20, peak, bw), (float(rng.uniform(0.01, 3 * ridge)), peak, bw)]
    cases.append((0.0, 66.9, 4242.0))  # a copy: no arithmetic at all
    for intensity, peak, bw in cases:
        with chk.case(f"I = {intensity:.3g} FLOP/B, peak {peak} TFLOP/s, {bw:,.0f} GB/s"):
            got = fn(intensity, peak, bw)
            memory = intensity * bw / 1e3
            chk.record(got, (_attainable(intensity, peak, bw),
                             "memory" if memory < peak else "compute"), rtol=1e-6, atol=1e-12)
            if not (isinstance(got, tuple) and len(got) == 2):
                chk.fail(f"returned {type(got).__name__}; return a pair (tflops, roof).")
                continue
            tflops, roof = got
            want = _attainable(intensity, peak, bw)
            memory = intensity * bw / 1e3
            if not isinstance(tflops, (int, float, np.integer, np.floating)):
                chk.fail(f"the rate is {type(tflops).__name__}; give a number in TFLOP/s.")
                continue
            if not np.isclose(tflops, want, rtol=1e-6, atol=1e-12):
                hint = ""
                if np.isclose(tflops, max(peak, memory), rtol=1e-6):
                    hint = ": the lower of the two roofs bounds the kernel (min, not max)"
                elif memory and np.isclose(tflops, min(peak, memory * 1e3), rtol=1e-6):
                    hint = (": GB/s times FLOP/B gives GFLOP/s; divide by 1000 for TFLOP/s")
                elif memory and np.isclose(tflops, min(peak, memory / 1e3), rtol=1e-6):
                    hint = ": GB/s times FLOP/B is already GFLOP/s; divide by 1000 once"
                chk.fail(f"got {tflops:.6g} TFLOP/s, expected {want:.6g}{hint}.")
                continue
            expected = "memory" if memory < peak else "compute"
            if roof not in ("memory", "compute"):
                chk.fail(f"the roof is {roof!r}; name it \"memory\" or \"compute\".")
            elif roof != expected:
                chk.fail(f"the roof is {roof!r}, but at {intensity:.3g} FLOP/B the "
                         f"{'memory roof' if expected == 'memory' else 'FP32 peak'} is the "
                         f"lower ({memory:.3g} against {peak} TFLOP/s).")
    return chk.report()
