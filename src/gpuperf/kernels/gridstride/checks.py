"""Chapter 1's exercise checkers: the grid-stride SAXPY, its effective bandwidth, and the
time of one call."""

from __future__ import annotations

import numpy as np

from gpuperf import bench
from gpuperf import exercises as ex
from gpuperf.mode import SIMULATOR

from .experiments import _device_vectors
from .kernels import launch_config


def _launch_configs(n: int):
    """Grids that expose a kernel which only works when the grid covers the data."""
    return [(1, 1), (2, 4), (1, 32), (3, 64), ((n + 127) // 128, 128)]


# The SAXPY exercise's speed bar on a GPU: this share of the device-to-device copy measured in
# the same check, on 2^26 elements (768 MiB moved: beyond any L2). On an H100 the chapter's
# solution read 92% of the copy, and a correct kernel whose threads each walk a contiguous
# chunk 4% (one run, 2026-11-26); the grid-stride copy at the same launch reads 72-81% of
# the copy (gridstride_launch_sweep, H200 and H100).
SAXPY_SPEED_N = 2**26
SAXPY_SPEED_TARGET = 0.6


def _saxpy_speed(chk, kernel) -> None:
    n = SAXPY_SPEED_N
    x, y, out = _device_vectors(n, 3)
    y.copy_to_device(x)  # any finite numbers do
    grid, block = launch_config(n)
    a = np.float32(2.0)
    m = n // 64  # tried first: a kernel far too slow is stopped at this size
    small_grid, _ = launch_config(m)
    ex.speed_against_copy(
        chk, lambda: kernel[grid, block](a, x, y, out), 12 * n, target=SAXPY_SPEED_TARGET,
        smaller=(lambda: kernel[small_grid, block](a, x[:m], y[:m], out[:m]), 64),
        what=f"your SAXPY (n = 2^{n.bit_length() - 1}, launch [{grid}, {block}])",
        advice="in every pass of the loop, consecutive threads must touch consecutive "
               "elements (i = cuda.grid(1), then i += cuda.gridsize(1)), so that each warp's "
               "loads coalesce; a thread that walks its own contiguous chunk does not.")


@ex.refuses_stubs
def check_saxpy(kernel) -> ex.Report:
    """Check a grid-stride SAXPY kernel ``kernel(a, x, y, out)``: out = a * x + y.

    Correct under many launch configurations (``[1, 1]`` and grids much smaller than the
    data) at awkward sizes; on a GPU also at least ``SAXPY_SPEED_TARGET`` of the
    device-to-device copy's bandwidth, measured in the same check, at 2^26 elements."""
    chk = ex.Checker("grid-stride SAXPY")
    if not chk.is_kernel(kernel):
        return chk.report()
    # A grid smaller than the data and one larger: out-of-bounds indexing shows in either.
    if not ex.preflight(chk, kernel, 3, 32, np.float32(2.0), ex.random_array(100, 5),
                        ex.random_array(100, 6), ex.poisoned(100)):
        return chk.report()
    if not ex.preflight(chk, kernel, 4, 32, np.float32(2.0), ex.random_array(33, 5),
                        ex.random_array(33, 6), ex.poisoned(33),
                        what="a dry run with more threads than elements"):
        return chk.report()
    for seed in ex.seeds():
        for n in (1, 31, 32, 33, 100, 257, 1000, *ex.hidden_sizes(2, 3000)):
            for grid, block in _launch_configs(n)[: (5 if seed == 0 else 2)]:
                with chk.case(f"n={n}, launch [{grid}, {block}]", seed=seed):
                    rng = np.random.default_rng(seed * 1000 + n)
                    a = np.float32(rng.uniform(-3, 3))
                    x, y = ex.random_array(n, rng), ex.random_array(n, rng)
                    out = ex.poisoned(n)
                    kernel[grid, block](a, x, y, out)
                    ref = a * x.astype(np.float64) + y.astype(np.float64)
                    chk.compare(out, ref, rtol=1e-5, atol=1e-5)
    if chk.report_.ok:  # the access pattern, in every mode; the speed it gives, on a GPU
        names = ex.emulator_param_names(kernel, 4)
        run = ex.recorded_run(chk, "coalescing, recorded in the emulator (n=4096, launch [2, 64])",
                              kernel, 2, 64, np.float32(2.0), ex.random_array(4096, 5),
                              ex.random_array(4096, 6), ex.poisoned(4096))
        with chk.case("coalesced loads and stores (emulator)"):
            ex.expect_coalesced(chk, run, names[1:], advice=(
                "In every pass of the loop consecutive threads must touch consecutive "
                "elements (i = cuda.grid(1), then i += cuda.gridsize(1)); a thread that walks "
                "its own contiguous chunk does not."))
    if not SIMULATOR and chk.report_.ok:
        _saxpy_speed(chk, kernel)
    elif SIMULATOR:
        ex.speed_not_measured(chk, f"{SAXPY_SPEED_TARGET:.0%} of the device-to-device copy's "
                                   f"bandwidth at 2^{SAXPY_SPEED_N.bit_length() - 1} elements")
    return chk.report()


@ex.refuses_stubs
def check_bandwidth_formula(fn) -> ex.Report:
    """Check ``fn(n, ms)``: effective GB/s of SAXPY on ``n`` float32 taking ``ms`` milliseconds."""
    chk = ex.Checker("effective bandwidth of SAXPY")
    rng = ex.case_rng(7)
    for n, ms in [(2**20, 0.01), (2**28, 1.05), (1000, 0.003),
                  (int(rng.integers(1e5, 1e9)), float(rng.uniform(0.01, 5)))]:
        with chk.case(f"n={n}, {ms:.4g} ms"):
            got = fn(n, ms)
            want = bench.gbps(3 * 4 * n, ms)  # read x and y, write out: 12 bytes per element
            chk.record(got, want, rtol=1e-6)
            if not isinstance(got, (int, float, np.floating)):
                chk.fail(f"returned {type(got).__name__}; return the bandwidth as a number in GB/s.")
                continue
            ratio = got / want
            hints = {2 / 3: "you counted two arrays; SAXPY reads x and y and writes out",
                     1 / 3: "you counted one array; count every array read or written",
                     1e9 / 2**30: "you divided by 2**30; GB/s here means 1e9 bytes per second",
                     1e-3: "milliseconds must become seconds: multiply ms by 1e-3",
                     1e3: "milliseconds must become seconds: multiply ms by 1e-3"}
            if abs(ratio - 1) > 1e-6:
                hint = next((h for r, h in hints.items() if abs(ratio / r - 1) < 1e-3), None)
                chk.fail(f"got {got:.6g} GB/s, expected {want:.6g}"
                         + (f": {hint}." if hint else "."))
    return chk.report()


def _call_us(n, launch_us: float, gbps: float) -> float:
    """The model of ``ex-measuring-call-time``: one call of the copy of ``n`` float32 costs
    the launch, then its 8n bytes (read and written) at ``gbps``."""
    return launch_us + 8 * n / (gbps * 1e3)  # bytes / (GB/s) = ns; / 1e3 = us


# Mistakes the call-time exercise names, each as the answer it gives.
_CALL_MISTAKES = {
    "the copy also writes: count 8 bytes per element (4 read, 4 written)":
        lambda n, L, B: L + 4 * n / (B * 1e3),
    "the launch and the transfer follow each other: add them, do not take the larger":
        lambda n, L, B: max(L, 8 * n / (B * 1e3)),
    "GB/s here means 1e9 bytes per second, not 2**30":
        lambda n, L, B: L + 8 * n / (B * 2**30 / 1e6),
    "return microseconds: the launch is given in microseconds, and bytes / (GB/s) is in "
    "nanoseconds": lambda n, L, B: L + 8 * n / B,
    "return microseconds, not milliseconds": lambda n, L, B: (L + 8 * n / (B * 1e3)) / 1e3,
    "a call costs its launch too: add launch_us": lambda n, L, B: 8 * n / (B * 1e3),
}


@ex.refuses_stubs
def check_call_time(fn) -> ex.Report:
    """Check ``fn(n, launch_us, gbps)``: microseconds for one call of the copy of ``n`` float32."""
    chk = ex.Checker("the time of one call, predicted")
    if not callable(fn):
        chk.fail(f"expected a function fn(n, launch_us, gbps), got {type(fn).__name__}.")
        return chk.report()
    rng = ex.case_rng(11)
    cases = [(2**12, 9.5, 2500.0), (2**20, 9.5, 2500.0), (2**28, 9.5, 2500.0),
             (10**6, 20.0, 300.0), (1, 5.0, 1000.0), (3 * 10**7, 12.0, 700.0),
             (int(rng.integers(10**3, 10**9)), float(rng.uniform(2, 40)),
              float(rng.uniform(100, 5000)))]
    for n, launch_us, gbps in cases:
        with chk.case(f"n={n:,}, launch {launch_us:.4g} us, {gbps:.4g} GB/s"):
            got = fn(n, launch_us, gbps)
            want = _call_us(n, launch_us, gbps)
            chk.record(got, want, rtol=1e-6)
            if isinstance(got, bool) or not isinstance(got, (int, float, np.integer, np.floating)):
                chk.fail(f"returned {type(got).__name__}; return the time as a number of "
                         "microseconds.")
                continue
            if abs(got / want - 1) > 1e-6:
                # A mistake is named only where it alone gives this answer (at n = 1 several
                # mistakes differ from each other by less than a part in a million).
                named = [h for h, f in _CALL_MISTAKES.items()
                         if abs(got / f(n, launch_us, gbps) - 1) < 1e-9]
                hint = named[0] if len(named) == 1 else None
                chk.fail(f"got {got:.6g} us, expected {want:.6g}" + (f": {hint}." if hint else "."))
    return chk.report()
