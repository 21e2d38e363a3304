"""The case study's exercise checkers: ``check_registers`` (algorithm 4), ``check_beta_grad``
(dL/dbeta, a tree reduction) and ``check_moved_bytes`` (the bytes each algorithm must move)."""

from __future__ import annotations

import math

import numpy as np

from gpuperf import exercises as ex

from .models import ALGORITHMS, moved_bytes
from .references import random_problem, reference_factor, reference_forward, reference_raw

# Shapes (N, S) that expose tail, row and channel mistakes; with blocks of 32 and 64
# threads they cover one partial block, exact blocks, and block + 1.
_CHECK_SHAPES = ((1, 1), (2, 31), (3, 32), (2, 33), (3, 65), (1, 100))
# Every seed also runs 5 channels (a loop over j that stops at 3 fails), and while grading a
# channel count above any the student's run used (the emulator run's 8 included): a kernel
# fitted to the visible channel counts meets one it was not fitted to.
_WIDE_SHAPE = (5, 33)
_MOST_VISIBLE_CHANNELS = 8


def _register_shapes(seed: int) -> tuple:
    shapes = _CHECK_SHAPES[: (6 if seed == 0 else 3)] + (_WIDE_SHAPE,)
    return shapes + tuple((n, 33) for n in ex.hidden_sizes(_MOST_VISIBLE_CHANNELS + 1, 16, 1))


def _check_problem(n_ch, n_s, seed):
    w, delta, gamma, beta = random_problem(n_ch, n_s, seed)
    _, d = reference_forward(w, gamma, beta)
    return w, delta, d.astype(np.float32)


@ex.refuses_stubs
def check_registers(kernel) -> ex.Report:
    """Check algorithm 4, ``kernel(delta, w, d, raw)`` on grid ``(ceil(S/block), N)``.

    ``raw[k*N + j, s]`` must equal ``-1/2 delta[k,s] w[k,s] d[k,s]**3 w[j,s]**2``, with the
    three row-k values held in registers (no shared memory, no barrier).
    """
    chk = ex.Checker("algorithm 4: a block row per row of gamma, values in registers")
    if not chk.is_kernel(kernel):
        return chk.report()
    chk.avoids(kernel, "numba.cuda:shared.array",
               why="the point of algorithm 4 is to keep delta_k, w_k and D_k in registers: "
                   "remove the shared arrays.")
    chk.avoids(kernel, "numba.cuda:syncthreads",
               why="with every thread reading only its own element, no barrier is needed: "
                   "remove cuda.syncthreads().")
    w, delta, d = _check_problem(3, 37, 5)
    if not ex.preflight(chk, kernel, (2, 3), 32, delta, w, d, ex.poisoned((9, 37))):
        return chk.report()
    for seed in ex.seeds():
        for block in (32, 64):
            for n_ch, n_s in _register_shapes(seed):
                with chk.case(f"N={n_ch}, S={n_s}, block={block}", seed=seed):
                    w, delta, d = _check_problem(n_ch, n_s, seed * 100 + n_s)
                    raw = ex.poisoned((n_ch * n_ch, n_s))
                    kernel[(math.ceil(n_s / block), n_ch), block](delta, w, d, raw)
                    chk.compare(raw, reference_raw(w, delta, d), rtol=1e-5, atol=1e-6,
                                what="raw")
    if chk.report_.ok:  # values held in registers: each thread reads an element once or so
        # 8 rows: a value read again in every pass of the loop over j is read 8 times; one
        # read twice in a statement (w[j, s] * w[j, s], which the compiler reads once) or once
        # more as w[j, s] at j = k stays at 4 or fewer.
        w, delta, d = _check_problem(_MOST_VISIBLE_CHANNELS, 40, 6)
        names = ex.emulator_param_names(kernel, 4)
        raw = ex.poisoned((_MOST_VISIBLE_CHANNELS ** 2, 40))
        run = ex.recorded_run(chk, "global loads per thread, recorded in the emulator "
                                   f"(N={_MOST_VISIBLE_CHANNELS}, S=40)", kernel,
                              (2, _MOST_VISIBLE_CHANNELS), 32, delta, w, d, raw)
        if run is not None:  # the run's outputs are judged too, not only its loads
            with chk.case(f"N={_MOST_VISIBLE_CHANNELS}, S=40, block=32 (emulator)",
                          kind="output"):
                chk.compare(raw, reference_raw(w, delta, d), rtol=1e-5, atol=1e-6, what="raw")
        with chk.case("row k's values read once, held in registers (emulator)"):
            ex.expect_loaded_once(chk, run, names[:3], most=4, advice=(
                "Read delta[k, s], w[k, s] and d[k, s] once, into local variables, before the "
                "loop over j: that is what holds them in registers."))
            ex.expect_coalesced(chk, run, names, advice=(
                "Consecutive threads must take consecutive samples s."))
    return chk.report()


@ex.refuses_stubs
def check_beta_grad(kernel) -> ex.Report:
    """Check ``kernel(delta, w, d, dbeta)`` launched ``[N, block]`` (block a power of two).

    ``dbeta[k] = sum_s -1/2 delta[k,s] w[k,s] d[k,s]**3``: one block per channel must
    cover all S samples (a block-stride loop) and reduce its threads' partial sums.
    """
    chk = ex.Checker("dL/dbeta: one block per channel, block-stride loop, tree reduction",
                     race_note=True)
    if not chk.is_kernel(kernel):
        return chk.report()
    chk.calls(kernel, "numba.cuda:syncthreads",
              why="a shared-memory tree needs cuda.syncthreads() between its steps (the "
                  "simulator may not show the race a GPU would).")
    w, delta, d = _check_problem(2, 37, 5)
    if not ex.preflight(chk, kernel, 2, 32, delta, w, d, ex.poisoned(2)):
        return chk.report()
    for seed in ex.seeds():
        for block in (32, 64):
            sizes = ex.sizes_around(block) if seed == 0 else (33, block + 1)
            shapes = [(3 if n_s < 500 else 1, n_s) for n_s in sizes]
            for n_ch, n_s in shapes + [s for s in _register_shapes(seed) if s[0] > 3]:
                with chk.case(f"N={n_ch}, S={n_s}, block={block}", seed=seed):
                    w, delta, d = _check_problem(n_ch, n_s, seed * 100 + n_s)
                    dbeta = ex.poisoned(n_ch)
                    kernel[n_ch, block](delta, w, d, dbeta)
                    ref = reference_factor(w, delta, d).sum(axis=1)
                    chk.compare(dbeta, ref, rtol=1e-4, atol=1e-4, what="dbeta")
    _check_beta_tree(chk, kernel)
    return chk.report()


def _check_beta_tree(chk, kernel, block: int = 64) -> None:
    """In the emulator, one block of ``block`` threads over a channel: its partial sums must
    meet in shared memory (a tree), and the block must write its channel's dbeta a few times
    at most, not once per thread (an atomic per thread into one address is no tree)."""
    from gpuperf import emulator

    w, delta, d = _check_problem(1, 3 * block + 5, 11)
    with chk.case(f"the block's reduction, one block of {block} threads (emulator)"):
        name = emulator.param_names(kernel, 4)[3]
        run = emulator.launch(kernel, 1, block, delta, w, d, ex.poisoned(1))
        writes = sum(1 for e in run.events if e.space == "global" and e.array == name
                     and e.kind in ("store", "atomic"))
        shared = sum(1 for e in run.events if e.space == "shared" and e.kind == "load")
        uses_shuffles = ex.uses(kernel, "numba.cuda:shfl_down_sync", "numba.cuda:shfl_xor_sync",
                                "numba.cuda:shfl_up_sync", "numba.cuda:shfl_sync")
        if writes <= 2 and shared and not uses_shuffles:
            ex.expect_tree(chk, run, block, advice=(
                "One thread summing the block's slots in a loop, or a tree that starts "
                "below half the block, leaves the block's threads idle."))
        if writes > 2:
            chk.fail(f"the block wrote `{name}` {writes} times (stores and atomics): each "
                     "thread adds its partial sum to the channel's result, one after another. "
                     "Reduce the partial sums in shared memory with a tree, then write once.")
        elif shared == 0:
            chk.fail("the partial sums never meet in shared memory: reduce them with a "
                     "shared-memory tree (chapter 6), then write the channel's result once.")


@ex.refuses_stubs(solved_by=("gpuperf.kernels.gdn.models:moved_bytes",
                             "gpuperf.kernels.gdn.models:memory_table"))
def check_moved_bytes(fn) -> ex.Report:
    """Check ``fn(method, n_ch, n_samples)``: the DRAM bytes each algorithm must move."""
    chk = ex.Checker("bytes each algorithm must move")
    rng = ex.case_rng(11)
    cases = [(m, 64, 65536) for m in ALGORITHMS] + [
        (m, int(rng.integers(2, 300)), int(rng.integers(1, 10**6))) for m in ALGORITHMS]
    for method, n_ch, n_s in cases:
        with chk.case(f"{method}, N={n_ch}, S={n_s}"):
            got = fn(method, n_ch, n_s)
            want = moved_bytes(method, n_ch, n_s)
            chk.record(got, want, rtol=1e-9)
            if not isinstance(got, (int, float, np.integer, np.floating)):
                chk.fail(f"returned {type(got).__name__}; return a number of bytes.")
                continue
            if abs(got - want) > 1e-9 * want:
                ratio = got / want
                hint = ""
                units = {1e-3: "kB", 1e-6: "MB", 1e-9: "GB", 2.0**-10: "KiB", 2.0**-20: "MiB",
                         2.0**-30: "GiB", 8.0: "bits"}
                unit = next((u for r, u in units.items() if abs(ratio / r - 1) < 1e-6), None)
                if unit:
                    hint = f": that is the count in {unit}; return bytes"
                elif abs(ratio - 0.25) < 1e-6 or abs(ratio - 4) < 1e-6:
                    hint = ": count bytes, not elements (float32 is 4 bytes)"
                elif method == "per_channel" and got < want:
                    hint = ": each of the N launches reads all of w again"
                elif method == "replicate" and got < want:
                    hint = (": the replicated matrices are written once and read once; "
                            "count both")
                chk.fail(f"got {got:.6g} bytes, expected {want:.6g} (x{ratio:.3g}){hint}.")
    return chk.report()
