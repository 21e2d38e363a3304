"""Chapter 5's exercise checkers: the coarsened kernel (``check_coarsened``), register-tile
reuse (``check_tile_reuse``, ``compare_tile_reuse``) and the best factor of the sweep
(``check_best_factor``)."""

from __future__ import annotations

import numpy as np

from gpuperf import exercises as ex
from gpuperf import validate
from gpuperf.kernels import matmul as mm
from gpuperf.mode import SIMULATOR

from .kernels import _cdiv


@ex.refuses_stubs(solved_by=("gpuperf.kernels.coarsening:make_coarsened",
                             "gpuperf.kernels.coarsening:coarsened_variant",
                             "gpuperf.kernels.coarsening:variant", "gpuperf.kernels.coarsening:matmul"))
def check_coarsened(make_kernel, tile: int = 8, factor: int = 3, *,
                    along: str = "columns") -> ex.Report:
    """Check ``make_kernel(tile, factor)``: a coarsened tiled kernel ``k(A, B, C)``.

    Launched with (tile, tile) threads per block. ``along="columns"``: a grid of
    (ceil(N / (tile * factor)), ceil(M / tile)) blocks, each thread computing ``factor``
    outputs of one row, ``tile`` columns apart. ``along="rows"``: a grid of
    (ceil(N / tile), ceil(M / (tile * factor))) blocks, each thread computing ``factor``
    outputs of one column, ``tile`` rows apart. On a GPU, ``make_kernel(SPEED_TILE,
    SPEED_FACTOR)`` must also pass ``matmul.speed_bar``: a share of cuBLAS measured in the
    same check.
    """
    validate.function(make_kernel, "make_kernel", what="a function make_kernel(tile, factor)")
    mm.check_tile(tile)
    validate.positive_int(factor, "factor", maximum=64)
    validate.choice(along, "along", ("columns", "rows"))

    def make_launch():
        k = make_kernel(tile, factor)
        if not (hasattr(k, "__getitem__") and callable(k)):
            raise TypeError(f"make_kernel({tile}, {factor}) returned {type(k).__name__}, not a "
                            "@cuda.jit kernel.")

        def launch(A, B, C):
            M, N = C.shape
            if along == "columns":
                grid = (_cdiv(N, tile * factor), _cdiv(M, tile))
            else:
                grid = (_cdiv(N, tile), _cdiv(M, tile * factor))
            k[grid, (tile, tile)](A, B, C)

        return launch

    sizes = [(1, 1, 1), (9, 11, 25), (8, 8, 24), (17, 13, 50), (5, 20, 7)]
    if along == "rows":  # rows are what the coarsening spans here: tall sizes
        sizes = [(1, 1, 1), (25, 11, 9), (24, 8, 8), (50, 13, 17), (7, 20, 5)]
    chk = mm.check_matmul_kernel(
        make_launch, f"coarsened tiled matmul along {along} (tile {tile}, factor {factor})",
        sizes=sizes)
    if not mm.source_checks_apply(chk):
        return chk.report()
    chk.calls(make_kernel, "numba.cuda:syncthreads",
              why="the tiles in shared memory need cuda.syncthreads() between loading and "
                  "using them, and before they are overwritten.")
    chk.calls(make_kernel, "numba.cuda:local.array",
              why="keep the factor running sums in a cuda.local.array (registers).")
    _check_coarsened_reuse(chk, make_kernel, tile, factor, along)
    _check_other_factor(chk, make_kernel, tile, factor, along)
    if SIMULATOR:
        ex.speed_not_measured(chk, f"{mm.TILED_SPEED_TARGET:.0%} of cuBLAS at "
                                   f"{mm.TILED_SPEED_N}^3 with tile {SPEED_TILE}, factor "
                                   f"{SPEED_FACTOR}")
    elif chk.report_.ok:
        n, t, f = mm.TILED_SPEED_N, SPEED_TILE, SPEED_FACTOR
        grid = ((_cdiv(n, t * f), _cdiv(n, t)) if along == "columns"
                else (_cdiv(n, t), _cdiv(n, t * f)))
        mm.speed_bar(chk, make_kernel(t, f), grid, (t, t),
                     f"your kernel (along {along}, tile {t}, factor {f})")
    return chk.report()


# The coarsening exercise's speed bar on a GPU (mm.speed_bar): with these, the chapter's
# kernels read 15-16% of cuBLAS at 1024 and 4096 (matmul_coarsen_sweep, H200 and H100).
SPEED_TILE, SPEED_FACTOR = 16, 2


def _check_other_factor(chk, make_kernel, tile: int, factor: int, along: str) -> None:
    """``make_kernel`` with a factor the exercise's checker cell does not show: a kernel that
    holds the visible factor as a constant (three accumulators, three tiles) fails here."""
    other = factor + 2
    span = 3 * tile * other + 1  # four blocks along the factor: more than factor-sized pieces cover
    M, N, K = ((tile + 1, span, 2 * tile + 1) if along == "columns"
               else (span, tile + 1, 2 * tile + 1))
    with chk.case(f"another factor: make_kernel({tile}, {other}) on A {M}x{K} @ B {K}x{N}"):
        k = make_kernel(tile, other)
        a, b = ex.random_array((M, K), 7), ex.random_array((K, N), 8)
        c = ex.poisoned((M, N), np.float32)
        grid = ((_cdiv(N, tile * other), _cdiv(M, tile)) if along == "columns"
                else (_cdiv(N, tile), _cdiv(M, tile * other)))
        k[grid, (tile, tile)](a, b, c)
        if not np.allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4):
            wrong = int(np.sum(~np.isclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)))
            chk.fail(f"with factor {other}, {wrong} of {M * N} outputs are wrong or unwritten: "
                     "use the factor make_kernel is given (the number of running sums, of "
                     "tiles and the grid all follow it), not the factor of the example.")


def _check_coarsened_reuse(chk, make_kernel, tile: int, factor: int, along: str) -> None:
    """Count, in the emulator, one block's global loads of A and B over two tiles of K. The
    block covers ``tile`` x ``tile * factor`` of C (``factor`` tiles along ``along``): it loads
    the shared operand's tile once per step of K and each of the ``factor`` other tiles once,
    ``tile * K * (1 + factor)`` loads in all. Reloading the shared tile for every output tile
    (no reuse across the factor), or reading A and B in the inner product, loads more."""
    from gpuperf import emulator

    if tile < 2:
        return
    K = 2 * tile
    M, N = (tile, tile * factor) if along == "columns" else (tile * factor, tile)
    with chk.case(f"global loads of A and B, one block of {M} x {N} outputs over K={K} "
                  "(emulator)"):
        k = make_kernel(tile, factor)
        a, b = emulator.param_names(k, 2)[:2]
        run = emulator.launch(k, (1, 1), (tile, tile), ex.random_array((M, K), 5),
                              ex.random_array((K, N), 6), np.zeros((M, N), np.float32))
        got = {name: sum(1 for e in run.events
                         if e.space == "global" and e.kind == "load" and e.array == name)
               for name in (a, b)}
        want = {a: M * K, b: K * N}  # every element of A's rows and B's columns, once
        extra = [name for name in (a, b) if got[name] > want[name] * 1.1]
        if extra:
            name = extra[0]
            chk.fail(f"the block made {got[name]:,} global loads of {name} for its {M} x {N} "
                     f"outputs over K={K}, where each element it needs loaded once is "
                     f"{want[name]:,}: "
                     + ("the inner product reads global memory instead of the shared tiles."
                        if got[name] >= M * N * K else  # each output reading K of them
                        f"a tile of {name} is loaded again for each of the {factor} output tiles; "
                        "load the shared operand's tile once per step of K and reuse it."))


def _tile_reuse(bm: int, bn: int, tm: int, tn: int) -> tuple[int, float, float]:
    return (bm // tm) * (bn // tn), bm * bn / (2 * (bm + bn)), tm * tn / (tm + tn)


TILE_REUSE_CASES = [(128, 128, 8, 8), (64, 64, 4, 4), (128, 64, 8, 4), (64, 32, 4, 2),
                    (256, 128, 8, 8), (32, 32, 2, 2)]


@ex.refuses_stubs(solved_by=("gpuperf.kernels.matmul:intensity",
                             "gpuperf.kernels.matmul:traffic_bytes"))
def check_tile_reuse(fn) -> ex.Report:
    """Check ``fn(bm, bn, tm, tn) -> (threads, flop_per_byte, fma_per_shared_load)`` for a
    block tile ``bm x bn`` of C and a thread tile ``tm x tn``: threads per block, FLOP per
    byte of global traffic for large matrices (C's write left out), and multiply-adds per
    shared-memory load at one step of the inner loop."""
    chk = ex.Checker("register tile reuse")
    if not callable(fn):
        chk.fail(f"expected a function, got {type(fn).__name__}.")
        return chk.report()
    cases = list(TILE_REUSE_CASES)
    if ex.grading():  # a tile the student never saw: powers of two, the thread tile inside
        rng = ex.case_rng(11)
        tm, tn = (int(2 ** rng.integers(1, 4)) for _ in range(2))
        cases.append((tm * int(2 ** rng.integers(2, 5)), tn * int(2 ** rng.integers(2, 5)), tm, tn))
    for bm, bn, tm, tn in cases:
        with chk.case(f"block tile {bm} x {bn}, thread tile {tm} x {tn}"):
            got = fn(bm, bn, tm, tn)
            chk.record(got, _tile_reuse(bm, bn, tm, tn), rtol=1e-6, atol=1e-6)
            if not (isinstance(got, (tuple, list)) and len(got) == 3):
                chk.fail(f"returned {got!r}; return a tuple (threads, flop_per_byte, "
                         "fma_per_shared_load).")
                continue
            threads, ai, reuse = _tile_reuse(bm, bn, tm, tn)
            g_threads, g_ai, g_reuse = got
            if g_threads != threads:
                why = (f"{bm} x {bn} outputs is {bm * bn} threads only at one output each; "
                       f"each thread computes {tm} x {tn}." if g_threads == bm * bn
                       else f"each thread computes {tm} x {tn} outputs of the {bm} x {bn} tile.")
                chk.fail(f"threads: got {g_threads!r}, expected {threads}: {why}")
            if not _close(g_ai, ai):
                if _close(g_ai, 2 * ai):
                    why = ("that counts 4-byte floats as 2 bytes, or each load twice over: per "
                           "step of k a block loads bm + bn floats of 4 bytes.")
                elif _close(g_ai, ai / 2):
                    why = "a multiply-add is 2 FLOP."
                elif _close(g_ai, 4 * ai):
                    why = "that is FLOP per float; a float is 4 bytes."
                else:
                    why = (f"per step of k a block loads {bm} + {bn} floats and does "
                           f"{bm} x {bn} multiply-adds.")
                chk.fail(f"FLOP per byte: got {g_ai!r}, expected {ai:.4g}: {why}")
            if not _close(g_reuse, reuse):
                why = ("a thread loads tm values of A and tn of B from shared memory per step and "
                       "does tm x tn multiply-adds with them.")
                chk.fail(f"multiply-adds per value read from shared memory: got {g_reuse!r}, expected "
                         f"{reuse:.4g}: {why}")
    return chk.report()


def _close(got, want) -> bool:
    return (isinstance(got, (int, float, np.integer, np.floating)) and not isinstance(got, bool)
            and abs(float(got) - want) <= 1e-6 * max(1.0, abs(want)))


_SWEEP_COLUMNS = ("tile", "n", "factor", "tflops", "blocks_per_sm", "occupancy", "blocks")
_BEST_FACTOR_KEYS = ("best_factor", "blocks_per_sm", "occupancy", "blocks_per_sm_above",
                     "blocks_at_1024")


def _best_factor_reading(res) -> dict:
    """What ``read_sweep`` must return for the sweep ``res``: the fastest factor for tile 32 at
    n = 4096, that row's blocks per SM and occupancy, the blocks per SM of each larger factor
    at n = 4096 (``{factor: blocks_per_sm}``), and factor 16's blocks at n = 1024."""
    rows = res.select(tile=32, n=4096)
    best = max(rows, key=lambda r: r["tflops"])
    return {"best_factor": best["factor"], "blocks_per_sm": best["blocks_per_sm"],
            "occupancy": best["occupancy"],
            "blocks_per_sm_above": {r["factor"]: r["blocks_per_sm"] for r in rows
                                    if r["factor"] > best["factor"]},
            "blocks_at_1024": res.one(tile=32, n=1024, factor=16)["blocks"]}


_SPEED_COLUMNS = ("tflops", "ms", "spread", "pct_cublas")  # what one measurement gives a row


def _other_sweep(res, seed: int):
    """A sweep of the same launches as ``res`` measured on a made-up GPU: the TFLOP/s of each
    (tile, n) shuffled among its factors so that the fastest factor for tile 32 at n = 4096 is
    the fastest of no other size or tile, and every row its own blocks per SM and occupancy.
    A reading taken at the wrong size, tile or row gives another answer here. (The blocks of a
    launch stay as its grid gives them: a student may work them out instead of reading them.)"""
    from gpuperf import records

    rng = ex.case_rng(seed)
    groups: dict = {}
    for row in res.rows:
        groups.setdefault((row["tile"], row["n"]), []).append(dict(row))
    for _ in range(200):
        for rows in groups.values():
            # the time and the share of cuBLAS move with the rate: "fastest" read as the least
            # ms or the largest share must give the same answer as the most TFLOP/s
            timing = [{k: r[k] for k in _SPEED_COLUMNS if k in r} for r in rows]
            for row, j in zip(rows, rng.permutation(len(rows))):
                row.update(timing[j])
        fastest = {key: max(rows, key=lambda r: r["tflops"])["factor"]
                   for key, rows in groups.items()}
        mine = fastest.pop((32, 4096))
        if mine not in fastest.values():
            break
    per_sm = rng.permutation(np.arange(1, len(res.rows) + 1))
    rows = []
    for r, bps in zip((r for rows in groups.values() for r in rows), per_sm):
        r["blocks_per_sm"] = int(bps)
        r["occupancy"] = round(float(rng.uniform(0.05, 1.0)), 3)
        rows.append(r)
    return records.Result(res.name, rows, {**res.meta, "gpu": "another GPU (made up)"},
                          res.source)


@ex.refuses_stubs(solved_by=("gpuperf.kernels.coarsening.checks:_best_factor_reading",),
                  judged_apart=True)
def check_best_factor(read_sweep, res=None) -> ex.Report:
    """Check ``read_sweep(sweep)``: from a factor sweep (``matmul_coarsen_sweep``), a dict with
    ``best_factor`` (the fastest factor for tile 32 at n = 4096), that factor's
    ``blocks_per_sm`` and ``occupancy``, ``blocks_per_sm_above`` (``{factor: blocks_per_sm}`` for
    every larger factor at n = 4096), and ``blocks_at_1024`` (the blocks factor 16 launches at
    n = 1024). Judged on ``res`` (the recorded sweep by default) and on sweeps of
    made-up GPUs where every other size, tile and row gives a different answer.
    """
    if res is not None:
        validate.result(res, "res")
        for _c in _SWEEP_COLUMNS:
            validate.column(res, _c, "res column")
    from gpuperf import records

    chk = ex.Checker("best coarsening factor, explained")
    if not callable(read_sweep):
        chk.fail(f"read_sweep: expected your function read_sweep(sweep) (def read_sweep(sweep): "
                 f"... return {{...}}), got {type(read_sweep).__name__}: the checker calls it "
                 "on other GPUs' sweeps too.")
        return chk.report()
    # Not recorded for the grader (Checker.record): ``res`` is the student's notebook's own
    # sweep (measured live on a GPU) and the made-up GPUs' sweeps are drawn from it, so the
    # expected answers are the student's run's. The grader judges this exercise again on
    # read_sweep alone, with the recorded sweep (judged_apart).
    res = res or records.run("matmul_coarsen_sweep", live=False)
    sweeps = [("your GPU's sweep", res)] + [
        (f"another GPU's sweep (seed {seed})", _other_sweep(res, seed)) for seed in ex.seeds()]
    for label, sweep in sweeps:
        want = _best_factor_reading(sweep)
        with chk.case(label):
            got = read_sweep(sweep)
            if not isinstance(got, dict) or set(_BEST_FACTOR_KEYS) - set(got):
                chk.fail(f"read_sweep(sweep) returned {got!r:.80}: return a dict with the keys "
                         f"{', '.join(_BEST_FACTOR_KEYS)}.")
                continue
            if not chk.expect(_close(got["best_factor"], want["best_factor"]),
                              f"the fastest factor for tile 32 at n = 4096 is "
                              f"{want['best_factor']}, not {got['best_factor']!r}: read the "
                              "rows of tile 32 at n = 4096 only."):
                continue
            chk.expect(_close(got["blocks_per_sm"], want["blocks_per_sm"]),
                       f"blocks_per_sm of factor {want['best_factor']} at n = 4096 is "
                       f"{want['blocks_per_sm']}, not {got['blocks_per_sm']!r} (read it from the "
                       "fastest row).")
            occ = got["occupancy"]
            chk.expect(isinstance(occ, (int, float, np.floating)) and not isinstance(occ, bool)
                       and abs(float(occ) - want["occupancy"]) < 0.02,
                       f"the occupancy of factor {want['best_factor']} at n = 4096 is "
                       f"{want['occupancy']:.3f}, not "
                       + (f"{float(occ):.4g}" if isinstance(occ, (int, float, np.floating))
                          else repr(occ))
                       + " (active warps over the SM's maximum, a fraction, read from the "
                       "fastest row).")
            above, want_above = got["blocks_per_sm_above"], want["blocks_per_sm_above"]
            chk.expect(isinstance(above, dict) and len(above) == len(want_above)
                       and all(any(_close(k, f) and _close(v, b) for k, v in above.items())
                               for f, b in want_above.items()),
                       f"the factors above {want['best_factor']} at n = 4096 keep "
                       f"{want_above} blocks per SM ({{factor: blocks_per_sm}}), not "
                       f"{above!r:.80}: one entry for each row of tile 32 at n = 4096 whose "
                       "factor is larger than the fastest one.")
            chk.expect(_close(got["blocks_at_1024"], want["blocks_at_1024"]),
                       f"factor 16 at n = 1024 launches ceil(1024/(32*16)) x ceil(1024/32) = "
                       f"{want['blocks_at_1024']} blocks, not {got['blocks_at_1024']!r}.")
    return chk.report()


def _tile_reuse_answer(fn, bm, bn, tm, tn) -> tuple[int, float, float]:
    """``fn(bm, bn, tm, tn)``, checked to be (a whole number of threads, two real numbers)."""
    answer = fn(bm, bn, tm, tn)
    call = f"fn({bm}, {bn}, {tm}, {tn})"
    if not isinstance(answer, (tuple, list)) or len(answer) != 3:
        raise TypeError(f"{call} returned {answer!r}: return three numbers, (threads, "
                        "FLOP per byte, multiply-adds per value read); check it with "
                        "co.check_tile_reuse first.")

    def real(value):  # the number, or None for anything that is not a finite real number
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
            return None
        return float(value) if np.isfinite(float(value)) else None

    threads, ai, reuse = answer
    if real(threads) is None or not real(threads).is_integer():
        raise ValueError(f"{call} gave threads = {threads!r}: a block has a whole number of "
                         "threads.")
    for name, value in (("FLOP per byte", ai), ("multiply-adds per value read", reuse)):
        if real(value) is None:
            raise ValueError(f"{call} gave {name} = {value!r}: give a finite number.")
    return int(real(threads)), real(ai), real(reuse)


def compare_tile_reuse(fn, res) -> list[dict]:
    """The predict-then-measure half of ``ex-coarsening-tile-reuse``: ``fn(bm, bn, tm, tn)``'s
    predictions for every configuration of the register-tiling sweep ``res``
    (``matmul_regtile_sweep``) beside the TFLOP/s it measured for each kernel form. Prints
    one line per configuration, then, for each form, in how many pairs of configurations with
    different multiply-adds per shared load the one with more was also faster. Returns the
    rows (the predictions and the measured TFLOP/s by form)."""
    validate.function(fn, "fn", what="your tile_reuse(bm, bn, tm, tn)")
    validate.result(res, "res")
    for c in ("kind", "bm", "bn", "tm", "tn", "tflops"):
        validate.column(res, c, "res column")
    if ex.is_stub(fn):   # the student copy's placeholder: say so, as the checkers do
        print("not implemented yet: replace `raise NotImplementedError()` in "
              f"{getattr(fn, '__name__', 'your function')} with your model, then run this again.")
        return []
    kinds = res.values("kind")
    configs = sorted({(r["bm"], r["bn"], r["tm"], r["tn"]) for r in res.rows})
    rows = []
    for bm, bn, tm, tn in configs:
        threads, ai, reuse = _tile_reuse_answer(fn, bm, bn, tm, tn)
        measured = {k: max((r["tflops"] for r in res.select(kind=k, bm=bm, bn=bn, tm=tm, tn=tn)),
                           default=None) for k in kinds}
        rows.append({"config": f"{bm}x{bn}, {tm}x{tn}", "threads": threads,
                     "flop_per_byte": float(ai), "fma_per_shared_load": float(reuse),
                     **{f"tflops {k}": v for k, v in measured.items()}})
    from gpuperf import records

    shown = [{"config": r["config"], "threads": r["threads"],
              "flop_per_byte": round(r["flop_per_byte"], 2),
              "fma_per_shared_load": round(r["fma_per_shared_load"], 2),
              **{f"tflops {k}": (None if r[f"tflops {k}"] is None else round(r[f"tflops {k}"], 2))
                 for k in kinds}} for r in rows]
    records.Result(res.name, shown, res.meta, res.source).show(
        headers={"config": "block tile, thread tile", "flop_per_byte": "your FLOP per byte",
                 "fma_per_shared_load": "your multiply\u2011adds per value read",
                 "threads": "your threads", **{f"tflops {k}": f"TFLOP/s, {k}" for k in kinds}},
        note="Your predictions beside the TFLOP/s measured for each kernel form (best BK of "
             "each).", fold_rest=False)
    for k in kinds:
        pairs = agree = 0
        for a in rows:
            for b in rows:
                ta, tb = a[f"tflops {k}"], b[f"tflops {k}"]
                if (a["fma_per_shared_load"] > b["fma_per_shared_load"] + 1e-9
                        and ta is not None and tb is not None):
                    pairs += 1
                    agree += ta > tb
        print(f"{k}: more multiply-adds per value read was also faster in {agree} of {pairs} "
              "pairs of configurations")
    return rows


# ex-unrolling-rounds: (M, N, bm, bn, SMs, blocks per SM). Exact multiples, one row and column
# over (chapter 5.2's 4097), a grid smaller than one round, and a round filled exactly.
GRID_ROUNDS_CASES = [(4096, 4096, 128, 128, 132, 2), (4097, 4097, 128, 128, 132, 2),
                     (4100, 4104, 128, 128, 132, 2), (1000, 300, 128, 64, 80, 1),
                     (100, 100, 128, 128, 132, 2), (1024, 1056, 128, 128, 33, 2),
                     (1024, 1024, 128, 128, 16, 2), (33, 47, 16, 16, 4, 3),
                     (896, 9664, 128, 64, 132, 8)]  # one block past 1,056 slots: int(x + 0.999) fails


def _grid_rounds(M: int, N: int, bm: int, bn: int, sms: int, blocks_per_sm: int):
    blocks = -(-M // bm) * -(-N // bn)
    slots = sms * blocks_per_sm
    rounds = -(-blocks // slots)
    return blocks, rounds, blocks - (rounds - 1) * slots


@ex.titled
def check_grid_rounds(fn) -> ex.Report:
    """Check ``fn(M, N, bm, bn, sms, blocks_per_sm) -> (blocks, rounds, last_round)``: the
    blocks of a grid of ``bm x bn`` output tiles over an ``M x N`` C (partial tiles count), the
    rounds a GPU of ``sms`` SMs holding ``blocks_per_sm`` blocks each needs to run them, and
    how many blocks run in the last round."""
    chk = ex.Checker("rounds of a grid")
    if not callable(fn):
        chk.fail(f"expected a function, got {type(fn).__name__}.")
        return chk.report()
    cases = list(GRID_ROUNDS_CASES)
    if ex.grading():  # a shape and a GPU the student never saw
        rng = ex.case_rng(13)
        cases.append((int(rng.integers(100, 5000)), int(rng.integers(100, 5000)), 128, 64,
                      int(rng.integers(20, 150)), int(rng.integers(1, 4))))
    for M, N, bm, bn, sms, per_sm in cases:
        with chk.case(f"C of {M} x {N}, tiles {bm} x {bn}, {sms} SMs x {per_sm} blocks"):
            got = fn(M, N, bm, bn, sms, per_sm)
            chk.record(got, _grid_rounds(M, N, bm, bn, sms, per_sm), rtol=1e-6, atol=1e-6)
            if not (isinstance(got, (tuple, list)) and len(got) == 3):
                chk.fail(f"returned {got!r}; return a tuple (blocks, rounds, last_round).")
                continue
            blocks, rounds, last = _grid_rounds(M, N, bm, bn, sms, per_sm)
            g_blocks, g_rounds, g_last = got
            slots = sms * per_sm
            if not _close(g_blocks, blocks):
                why = ("a partial tile at the edge is a block too: round up."
                       if _close(g_blocks, (M // bm) * (N // bn)) else
                       f"the grid is ceil({M} / {bm}) x ceil({N} / {bn}) blocks.")
                chk.fail(f"blocks: got {g_blocks!r}, expected {blocks}: {why}")
            if not _close(g_rounds, rounds):
                why = ("a round that is only partly full is still a round: round up."
                       if _close(g_rounds, blocks // slots) else
                       f"the GPU holds {sms} x {per_sm} = {slots} blocks at once.")
                chk.fail(f"rounds: got {g_rounds!r}, expected {rounds}: {why}")
            if not _close(g_last, last):
                why = ("when the blocks fill the rounds exactly, the last round is full, not "
                       "empty." if _close(g_last, blocks % slots) else
                       f"the rounds before the last run {slots} blocks each.")
                chk.fail(f"last round: got {g_last!r}, expected {last}: {why}")
    return chk.report()
