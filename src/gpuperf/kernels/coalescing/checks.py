"""The chapter's exercise checkers: ``check_layout_bytes`` (with ``compare_layout_bytes``, its
predict-then-measure half), ``check_remap``, ``check_padded_transpose`` and
``check_inplace_transpose``, with their launches and the trace tests they share."""

from __future__ import annotations

import numpy as np
from numba import cuda  # safe: importing gpuperf.kernels.* runs gpuperf/__init__ (the mode) first

from gpuperf import emulator, validate
from gpuperf import exercises as ex
from gpuperf.mode import SIMULATOR

from .experiments import _time_launch, device_data
from .kernels import AOS_FIELDS, AOS_LAYOUTS, WARP, make_transpose, scale_rows_uncoalesced
from .models import SECTOR_BYTES, _layout_read_bytes
from .tracing import trace

# The chapter hands this wrong kernel to the remap checker to show what it rejects; a
# course example, so the checker judges it on its accesses, not on where it came from.
scale_rows_uncoalesced.course_example = True


REMAP_BLOCK = 128  # the launch the remap exercise uses: 1-D, ceil(rows * cols / 128) blocks


# The remap exercise's speed bar on a GPU: this share of a device-to-device copy measured in
# the same check. One element per thread and a division each keep even the right answer
# well below a plain copy: on an H100 the chapter's solution read 55% of the copy and the
# uncoalesced kernel 11% (one run, 2026-11-26); a GPU with more bandwidth per SM reads less.
REMAP_SPEED_TARGET = 0.35


def _remap_launch(kernel, x, w, out):
    n = x.shape[0] * x.shape[1]
    kernel[-(-n // REMAP_BLOCK), REMAP_BLOCK](x, w, out)


def _time_on_gpu(kernel, grid, block, *args) -> float:
    ex.stop_if_slow(lambda: kernel[grid, block](*args))  # a slow wrong kernel: one launch
    return _time_launch(kernel, grid, block, *args, min_time=0.05).median_ms


_LAYOUT_MISTAKES = {  # (layout, fields, used, elem_bytes) -> a slip's answer, and its name
    "an array of structures is fetched in sectors, not in the bytes a warp uses: count the "
    "distinct 32-byte sectors that hold a field the warp reads":
        lambda lay, F, u, E: u * E if lay == "AoS" else None,
    "the sector model counts only the sectors that hold a field the warp reads: a struct "
    "larger than a sector is not read whole":
        lambda lay, F, u, E: F * E if lay == "AoS" else None,
    "a structure of arrays reads only the fields used, each one contiguous":
        lambda lay, F, u, E: F * E if lay == "SoA" else None,
    "that is the warp's bytes: divide by its 32 particles":
        lambda lay, F, u, E: WARP * _layout_read_bytes(lay, F, u, E),
    "lanes whose fields share a sector share its fetch: count each of the warp's sectors once":
        lambda lay, F, u, E: SECTOR_BYTES * len({(f * E) // SECTOR_BYTES for f in range(u)})
        if lay == "AoS" else None,
}


# Closed forms that agree with the sector model while every struct starts on a sector
# boundary (its size divides 32 or is a multiple of it), and not otherwise: the hidden cases
# hold a struct where each of them, and each slip above, gives another answer.
_LAYOUT_ALIGNED_FORMS = (
    lambda lay, F, u, E: (F * E if F * E <= SECTOR_BYTES
                          else -(-u * E // SECTOR_BYTES) * SECTOR_BYTES) if lay == "AoS" else None,
    lambda lay, F, u, E: (min(F * E, -(-u * E // SECTOR_BYTES) * SECTOR_BYTES) if F * E > SECTOR_BYTES
                          else F * E) if lay == "AoS" else None,
    lambda lay, F, u, E: (SECTOR_BYTES * -(-(F * E) * WARP // SECTOR_BYTES) // WARP
                          if F * E <= SECTOR_BYTES
                          else SECTOR_BYTES * -(-u * E // SECTOR_BYTES)) if lay == "AoS" else None,
)


def _separating_layout_cases() -> list[tuple]:
    """One case per slip of ``_LAYOUT_MISTAKES`` and per closed form of
    ``_LAYOUT_ALIGNED_FORMS`` where it differs from the sector model, searched in a fixed
    order over structs of every size (not only those that start on a sector boundary)."""
    grid = [("AoS", F, u, E) for E in (4, 8, 2, 1) for F in (3, 5, 6, 7, 9, 10, 12, 13, 20)
            for u in range(1, F + 1)]
    cases = []
    for form in (*_LAYOUT_MISTAKES.values(), *_LAYOUT_ALIGNED_FORMS):
        for case in grid:
            got = form(*case)
            if got is not None and got != _layout_read_bytes(*case):
                cases.append(case)
                break
    return cases


@ex.refuses_stubs(solved_by=("gpuperf.kernels.coalescing.models:_layout_read_bytes",
                             "gpuperf.kernels.coalescing.models:aos_model_bytes"))
def check_layout_bytes(fn) -> ex.Report:
    """Check ``fn(layout, fields, used, elem_bytes)``: the sector model's DRAM bytes per
    particle when a warp reads fields 0 to used - 1 of 32 consecutive particles stored as
    ``layout`` ("AoS" or "SoA"), for structs smaller than, equal to and larger than a sector."""
    chk = ex.Checker("bytes per particle that a layout moves, by the sector model")
    if not callable(fn):
        chk.fail(f"expected a function fn(layout, fields, used, elem_bytes), got "
                 f"{type(fn).__name__}.")
        return chk.report()
    rng = ex.case_rng(12)
    cases = [("AoS", 8, 1, 4), ("AoS", 8, 8, 4), ("SoA", 8, 3, 4), ("AoS", 16, 1, 4),
             ("AoS", 16, 9, 4), ("AoS", 2, 1, 4), ("AoS", 3, 2, 4), ("SoA", 4, 2, 8),
             ("AoS", 4, 3, 8), ("AoS", 64, 1, 2), ("SoA", 5, 5, 1), ("AoS", 5, 5, 1)]
    fields = int(rng.integers(1, 40))
    cases.append((str(rng.choice(AOS_LAYOUTS)), fields, int(rng.integers(1, fields + 1)),
                  int(rng.choice([1, 2, 4, 8]))))
    cases = list(dict.fromkeys([*cases, *_separating_layout_cases()]))
    for layout, F, u, E in cases:
        with chk.case(f'layout="{layout}", fields={F}, used={u}, elem_bytes={E}'):
            got = fn(layout, F, u, E)
            want = _layout_read_bytes(layout, F, u, E)
            chk.record(got, want, rtol=1e-9)
            if isinstance(got, (bool, np.bool_)) or not isinstance(
                    got, (int, float, np.integer, np.floating)):
                chk.fail(f"returned {type(got).__name__}; return a number of bytes.")
                continue
            if abs(got - want) > 1e-9 * want:
                named = [h for h, f in _LAYOUT_MISTAKES.items()
                         if f(layout, F, u, E) is not None and f(layout, F, u, E) != want
                         and abs(got - f(layout, F, u, E)) <= 1e-9 * want]
                hint = named[0] if len(named) == 1 else None
                chk.fail(f"got {got:g} bytes per particle, expected {want:g}"
                         + (f" (a slip that gives this answer: {hint})." if hint else
                            ". Count the sectors every lane's used fields fall in, wherever "
                            "its struct starts (a struct need not start on a sector)."))
    return chk.report()


def compare_layout_bytes(fn, res) -> list[dict]:
    """The predict-then-measure half of ``ex-coalescing-layout-bytes``: for every field
    count of ``res`` (``coalescing_aos_soa``), the AoS-to-SoA ratio of bytes per particle
    that ``fn(layout, fields, used, elem_bytes)`` predicts (plus the 4-byte output both
    write) beside the ratio of the times measured. Prints one line per count; returns the
    rows."""
    validate.function(fn, "fn", what="your model fn(layout, fields, used, elem_bytes)")
    validate.result(res, "res")
    for c in ("layout", "used", "ms"):
        validate.column(res, c, "res column")
    if ex.is_stub(fn):   # the student copy's placeholder: say so, as the checkers do
        print("not implemented yet: replace `raise NotImplementedError()` in "
              f"{getattr(fn, '__name__', 'your function')} with your model, then run this again.")
        return []
    print(f"AoS against SoA on {res.gpu}: the ratio your model predicts (bytes per particle, "
          "with the 4-byte output), and the ratio of the times")
    rows = []
    for used in res.values("used"):
        nbytes = {}
        for layout in AOS_LAYOUTS:
            got = fn(layout, AOS_FIELDS, used, 4)
            if isinstance(got, (bool, np.bool_)) or not isinstance(
                    got, (int, float, np.integer, np.floating)) or not got >= 0:
                raise ValueError(f'fn("{layout}", {AOS_FIELDS}, {used}, 4) returned {got!r}: '
                                 "return a number of bytes (check it with "
                                 "co.check_layout_bytes first).")
            nbytes[layout] = float(got) + 4
        predicted = nbytes["AoS"] / nbytes["SoA"]
        measured = res.one(layout="AoS", used=used)["ms"] / res.one(layout="SoA", used=used)["ms"]
        rows.append({"used": used, "predicted": predicted, "measured": measured})
        print(f"{used} of {AOS_FIELDS} fields: predicted {predicted:.2f}x, measured {measured:.2f}x "
              f"(measured / predicted {measured / predicted:.2f})")
    return rows


@ex.refuses_stubs
def check_remap(kernel) -> ex.Report:
    """Check a coalesced ``kernel(x, w, out)`` computing ``out[r, c] = x[r, c] * w[r]``.

    Launched like ``scale_rows_uncoalesced``: 1-D, ``REMAP_BLOCK`` threads per block, one
    thread per element. First a dry run in the thread emulator (a kernel that would fault
    is never launched), then correct at awkward shapes, then, traced warp by warp in the
    emulator (with or without a GPU), the loads of ``x`` and the stores to ``out`` must be
    coalesced: 4 sectors per warp request. On a GPU it also times the kernel at 4096 x 4096:
    clearly faster than the uncoalesced one, and at least ``REMAP_SPEED_TARGET`` of a
    device-to-device copy measured in the same check.
    """
    chk = ex.Checker("remap threads to data (scale rows, coalesced)")
    if not chk.is_kernel(kernel):
        return chk.report()
    x, w = ex.random_array((7, 40), 20), ex.random_array(7, 21)
    if not ex.preflight(chk, kernel, -(-7 * 40 // REMAP_BLOCK), REMAP_BLOCK, x, w,
                        ex.poisoned((7, 40))):
        return chk.report()
    shapes = [(1, 1), (1, 33), (31, 1), (7, 40), (33, 31), (3, 257)]
    shapes += [tuple(ex.hidden_sizes(1, 300))] if ex.grading() else []  # unseen, graded
    for seed in ex.seeds():
        for rows, cols in shapes if seed == 0 else shapes[3:5]:
            with chk.case(f"{rows} x {cols}", seed):
                x = ex.random_array((rows, cols), seed)
                w = ex.random_array(rows, seed + 10)
                out = ex.poisoned((rows, cols))
                _remap_launch(kernel, x, w, out)
                chk.compare(out, x.astype(np.float64) * w[:, None].astype(np.float64))
    names = emulator.param_names(kernel)
    if len(names) == 3:
        with chk.case("coalescing, traced warp by warp in the emulator (32 x 32)"):
            x, w, out = ex.random_array((32, 32), 3), ex.random_array(32, 4), ex.poisoned((32, 32))
            tr = trace(kernel, -(-1024 // REMAP_BLOCK), REMAP_BLOCK, x, w, out)
            for name, what in ((names[0], f"loads of {names[0]}"),
                               (names[2], f"stores to {names[2]}")):
                eff = tr.efficiency(array=name)
                if eff is None:
                    chk.fail(f"your kernel never touches {name}.")
                elif eff < 0.99:
                    chk.fail(f"your {what} touch {tr.sectors_per_request(array=name):.1f} "
                             f"sectors per warp request ({eff:.0%} of the bytes moved are "
                             "used); a coalesced warp touches 4. Number the threads along "
                             "the rows: consecutive i must be consecutive elements of a row.")
    if not SIMULATOR:
        with chk.case("speed on this GPU (4096 x 4096)"):
            x = cuda.to_device(ex.random_array((4096, 4096), 5))
            w = cuda.to_device(ex.random_array(4096, 6))
            out = cuda.device_array((4096, 4096), np.float32)
            grid = -(-4096 * 4096 // REMAP_BLOCK)
            # 256 rows first: a kernel far too slow is stopped there (issue 63)
            ex.stop_if_slow(lambda: _remap_launch(kernel, x[:256], w[:256], out[:256]),
                            what="your kernel", scale=16, launches=24)
            mine = _time_on_gpu(kernel, grid, REMAP_BLOCK, x, w, out)
            slow = _time_on_gpu(scale_rows_uncoalesced, grid, REMAP_BLOCK, x, w, out)
            chk.note(ex.bandwidth_line(mine, slow, 2 * 4 * 4096 * 4096,
                                       reference_name="the uncoalesced kernel"))
            chk.expect(mine < 0.6 * slow, "your kernel is not clearly faster than the "
                       "uncoalesced one: are consecutive threads reading consecutive elements?")
        if any("stopped" in why for _, why in chk.report_.failed):
            return chk.report()
        ex.speed_against_copy(
            chk, lambda: _remap_launch(kernel, x, w, out), 2 * 4 * 4096 * 4096,
            target=REMAP_SPEED_TARGET, what="your kernel (4096 x 4096)",
            advice="number the threads along the rows, and keep the index arithmetic per "
                   "element small (one division by the row length, no more).")
    else:
        ex.speed_not_measured(chk, f"a clear lead over the uncoalesced kernel and "
                                   f"{REMAP_SPEED_TARGET:.0%} of a device-to-device copy at "
                                   f"4096 x 4096")
    return chk.report()


EXERCISE_TILE = 32  # the padded-transpose exercise: 32 x 32 tiles,
EXERCISE_BLOCK_ROWS = 8  # blocks of 32 x 8 threads (4 elements per thread)


def _transpose_launch(kernel, a, out):
    rows, cols = a.shape
    t = EXERCISE_TILE
    kernel[(-(-cols // t), -(-rows // t)), (t, EXERCISE_BLOCK_ROWS)](a, out)


def _check_tile_trace(chk, tr, accesses) -> None:
    """What a tiled transpose's trace must show: every (array, what) of ``accesses``
    coalesced, a shared tile, no bank conflict, no race."""
    t = EXERCISE_TILE
    for name, what in accesses:
        eff = tr.efficiency(array=name)
        if eff is not None and eff < 0.99:
            chk.fail(f"your {what} touch {tr.sectors_per_request(array=name):.1f} "
                     f"sectors per warp request ({eff:.0%} of the bytes moved are "
                     "used): both the read and the write must go along rows, with "
                     "the turn made in shared memory.")
    if not tr.select(space="shared"):
        chk.fail("your kernel never uses shared memory: without a tile, either the "
                 "read or the write of a transpose is strided.")
    conflict = tr.max_bank_conflict()
    if conflict > 1:
        chk.fail(f"a warp's shared-memory access hits one bank {conflict} times "
                 f"({conflict}-way bank conflict): reading a column of a "
                 f"{t}-wide tile puts every lane on the same bank. Pad each row "
                 f"by one element: shape ({t}, {t} + 1).")
    races = tr.run.describe_races(1)
    if races:
        chk.fail(f"a data race: {races[0]} On a GPU these threads run at the same "
                 "time: fill the whole tile, cuda.syncthreads(), then read it.")


@ex.refuses_stubs
def check_padded_transpose(kernel) -> ex.Report:
    """Check a tiled, padded transpose ``kernel(a, out)`` (``out = a.T``).

    Launched with ``EXERCISE_TILE`` x ``EXERCISE_TILE`` tiles, blocks of
    ``(EXERCISE_TILE, EXERCISE_BLOCK_ROWS)`` threads and grid ``(ceil(cols / TILE),
    ceil(rows / TILE))``. First a dry run in the thread emulator at 3 x 33 (out-of-bounds
    stores and barriers that threads leaving early never reach are refused before any GPU
    launch), then correct at awkward shapes; then, traced in the emulator (with or without
    a GPU), coalesced global loads and stores, a shared tile, and no bank conflicts. On a
    GPU it also times the kernel.
    """
    chk = ex.Checker("tiled transpose with padding", race_note=True)
    if not chk.is_kernel(kernel):
        return chk.report()
    chk.calls(kernel, "numba.cuda:syncthreads",
              why="the kernel never calls cuda.syncthreads(): threads would read the tile "
                  "before the others have written it.")
    t = EXERCISE_TILE
    # 3 rows: most threads of the block are below the matrix; 33 columns: a second block
    # with one column. A kernel that returns early for them misses the barrier.
    if not ex.preflight(chk, kernel, (2, 1), (t, EXERCISE_BLOCK_ROWS),
                        ex.random_array((3, 33), 30), ex.poisoned((33, 3))):
        return chk.report()
    shapes = [(1, 1), (32, 32), (31, 33), (33, 64), (65, 40)]
    shapes += [tuple(ex.hidden_sizes(1, 100))[::-1]] if ex.grading() else []  # unseen
    for seed in ex.seeds():
        for rows, cols in shapes if seed == 0 else shapes[2:4]:
            with chk.case(f"{rows} x {cols}", seed):
                a = ex.random_array((rows, cols), seed)
                out = ex.poisoned((cols, rows))
                _transpose_launch(kernel, a, out)
                chk.compare(out, a.T.astype(np.float64))
    names = emulator.param_names(kernel)
    if len(names) == 2:
        with chk.case("memory behaviour, traced warp by warp in the emulator (64 x 64)"):
            a, out = ex.random_array((64, 64), 7), ex.poisoned((64, 64))
            tr = trace(kernel, (64 // t, 64 // t), (t, EXERCISE_BLOCK_ROWS), a, out)
            _check_tile_trace(chk, tr, ((names[0], f"loads of {names[0]}"),
                                        (names[1], f"stores to {names[1]}")))
    if not SIMULATOR:
        with chk.case("speed on this GPU (8192 x 8192)"):
            n = 8192
            a = device_data(n * n).reshape(n, n)
            out = cuda.device_array((n, n), np.float32)
            grid, block = (n // t, n // t), (t, EXERCISE_BLOCK_ROWS)
            mine = _time_on_gpu(kernel, grid, block, a, out)
            ref = _time_on_gpu(make_transpose(t, EXERCISE_BLOCK_ROWS, 1), grid, block, a, out)
            chk.note(ex.bandwidth_line(mine, ref, 8 * n * n,
                                       reference_name="the chapter's padded transpose"))
    return chk.report()


def _inplace_launch(kernel, a):
    t = EXERCISE_TILE
    n = a.shape[0]
    kernel[(-(-n // t), -(-n // t)), (t, EXERCISE_BLOCK_ROWS)](a)


@ex.refuses_stubs(solved_by=("gpuperf.kernels.coalescing.kernels:make_transpose",
                             "gpuperf.kernels.coalescing.host:transpose",
                             "gpuperf.kernels.coalescing.kernels:transpose_naive"))
def check_inplace_transpose(kernel) -> ex.Report:
    """Check an in-place tiled transpose ``kernel(a)`` of a square float32 matrix.

    Launched with blocks of ``(EXERCISE_TILE, EXERCISE_BLOCK_ROWS)`` threads and a grid of
    ``(ceil(n / TILE), ceil(n / TILE))``: block (bx, by) with bx > by swaps tiles (by, bx) and
    (bx, by), a block on the diagonal turns its own tile, the others do nothing. A dry run
    in the emulator at n = 33, then correct at awkward sizes, then traced (64 x 64):
    coalesced loads and stores, a shared tile, no bank conflicts, no races.
    """
    chk = ex.Checker("in-place tiled transpose", race_note=True)
    if not chk.is_kernel(kernel):
        return chk.report()
    if not ex.uses(kernel, "numba.cuda:syncthreads"):
        chk.fail("the kernel never calls cuda.syncthreads(): threads would write a tile "
                 "back before the others have read it.")
    t = EXERCISE_TILE
    if not ex.preflight(chk, kernel, (2, 2), (t, EXERCISE_BLOCK_ROWS), ex.random_array((33, 33), 30)):
        return chk.report()
    sizes = [1, 31, 32, 33, 64, 65, 100, *ex.hidden_sizes(2, 130)]
    for seed in ex.seeds():
        for n in sizes if seed == 0 else sizes[2:5]:
            with chk.case(f"{n} x {n}", seed):
                a = ex.random_array((n, n), seed)
                want = a.T.astype(np.float64)
                _inplace_launch(kernel, a)
                chk.compare(a, want)
    if len(emulator.param_names(kernel)) == 1:
        name = emulator.param_names(kernel)[0]
        with chk.case("memory behaviour, traced warp by warp in the emulator (64 x 64)"):
            a = ex.random_array((64, 64), 7)
            tr = trace(kernel, (64 // t, 64 // t), (t, EXERCISE_BLOCK_ROWS), a)
            _check_tile_trace(chk, tr, ((name, f"accesses to {name}"),))
    if not SIMULATOR and chk.report_.ok:
        with chk.case("speed on this GPU (8192 x 8192)"):
            n = 8192
            a = device_data(n * n).reshape(n, n)
            out = cuda.device_array((n, n), np.float32)
            grid, block = (n // t, n // t), (t, EXERCISE_BLOCK_ROWS)
            mine = _time_on_gpu(kernel, grid, block, a)
            ref = _time_on_gpu(make_transpose(t, EXERCISE_BLOCK_ROWS, 1), grid, block, a, out)
            chk.note(ex.bandwidth_line(mine, ref, 8 * n * n,
                                       reference_name="the chapter's padded transpose "
                                                      "(out of place)"))
    return chk.report()
