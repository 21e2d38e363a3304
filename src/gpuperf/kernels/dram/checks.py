"""Chapter 3's exercise checkers and the data they are checked against.

``check_bank_queue``: the longest bank queue of a set of loads (the model).
``check_loads_needed``: Little's law, loads per thread to reach the ceiling.
``check_blocks_per_sm``: occupancy by hand, against the CUDA occupancy API's recorded answers.
``check_copy_in_flight``: a copy with few threads, which must keep loads in flight.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

from gpuperf import device
from gpuperf import exercises as _exercises

from .kernels import WARP
from .models import (
    COPY_READ_SHARE,
    TEXTBOOK,
    DramLayout,
    channel_gbps,
    channels_used,
    copy_loads_per_thread_needed,
    loads_per_thread_needed,
    step_latency_ns,
)


def _sample_layouts():
    return [TEXTBOOK, DramLayout(32, 8, 4), DramLayout(64, 6, 3), DramLayout(16, 5, 1),
            DramLayout(256, 16, 16)]


def _bank_queues(indices, element_bytes: int, layout: DramLayout) -> dict:
    """Accesses per (channel, bank) when concurrent threads load ``indices``: elements in one
    burst arrive in one access, so each burst counts once."""
    from collections import Counter

    bursts = {int(i) * element_bytes // layout.burst_bytes for i in indices}
    return Counter(layout.locate(b * layout.burst_bytes) for b in bursts)


def _bank_queue_cases(layout: DramLayout, element_bytes: int, rng) -> list[tuple[str, list]]:
    """Index sets that tell the wrong answers apart, each named so that a student can rebuild
    it: walks whose stride is one element, one burst, one round of the channels and one round
    of every bank; a tile's rows; random sets with repeats (listed whole); a single element."""
    per_burst = max(1, layout.burst_bytes // element_bytes)
    per_round = per_burst * layout.channels
    cases = []
    for name, stride in (("consecutive", 1), ("one burst apart", per_burst),
                         ("one round of the channels apart", per_round),
                         ("one round of every bank apart", per_round * layout.banks_per_channel),
                         ("a random stride", int(rng.integers(2, 3 * per_round)))):
        count = int(rng.integers(8, 40))
        start = int(rng.integers(0, 1000))
        cases.append((f"{count} loads from element {start}, {_plural(stride, 'element')} "
                      f"apart ({name})",
                      [start + k * stride for k in range(count)]))
    width = 4 * per_burst
    cases.append((f"a 4 x {width} tile at the start of a row-major array {3 * width} elements "
                  "wide", [r * 3 * width + c for r in range(4) for c in range(width)]))
    for _ in range(3):
        picks = rng.integers(0, 50 * per_round, int(rng.integers(5, 60)))
        indices = [int(i) for i in np.concatenate([picks, picks[:3]])]
        cases.append((f"the loads {indices}", indices))
    one = int(rng.integers(0, 10**6))
    cases.append((f"one load, element {one}", [one]))
    return cases


def _bank_queue_mistakes(indices, element_bytes: int, layout: DramLayout) -> list[tuple]:
    """(value, why) for each known mistake: what it returns for ``indices``, and the advice."""
    from collections import Counter

    queues = _bank_queues(indices, element_bytes, layout)
    bursts = {i * element_bytes // layout.burst_bytes for i in indices}
    ch, banks = layout.channels, layout.banks_per_channel

    def longest(keys):
        return max(Counter(keys).values())

    return [
        (longest(layout.locate(i * element_bytes) for i in indices),
         "that is what counting elements (or repeats) gives: elements in one burst arrive in "
         "one access, so count each burst once"),
        (longest(b % ch for b in bursts), "that is what counting per channel gives: a channel "
         "has several banks, and only accesses to the same bank wait for each other"),
        (longest((b // ch) % banks for b in bursts), "that is what counting per bank number "
         "gives: bank b of channel 0 and bank b of channel 1 are different banks; a bank is "
         "the pair (channel, bank)"),
        (len(queues), "that is how many banks are busy; the question is the longest queue, "
         "the most accesses any one bank serves"),
        (len(bursts), "that is how many bursts the loads touch, not how many one bank serves"),
        (longest(layout.locate(b * layout.burst_bytes)
                 for b in {i // layout.burst_bytes for i in indices}),
         "that is what taking the index for the byte address gives: element i starts at "
         "byte i * element_bytes"),
        (longest((b % ch, b // ch) for b in bursts), "that is what banks that never wrap "
         "give: after every bank of a channel has had a burst, the next round starts again "
         "at bank 0"),
    ]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


@_exercises.refuses_stubs
def check_bank_queue(fn):
    """Exercise: the longest bank queue of a set of loads.

    ``fn(indices, element_bytes, burst_bytes, channels, banks) -> int``: the most accesses
    any one (channel, bank) serves when concurrent threads load elements ``indices`` of an
    array that starts at address 0 (``banks`` per channel). A hint names a mistake only
    where that mistake gives every answer the student's code gave on a system."""
    import inspect

    from gpuperf import exercises as ex

    chk = ex.Checker("the longest bank queue of a set of loads")
    if not callable(fn):
        chk.fail(f"expected a function, got {type(fn).__name__}.")
        return chk.report()
    try:
        inspect.signature(fn).bind(0, 0, 0, 0, 0)
    except TypeError:
        chk.fail(f"{getattr(fn, '__name__', 'your function')} must take five arguments: "
                 "(indices, element_bytes, burst_bytes, channels, banks).")
        return chk.report()
    except ValueError:  # no signature to read (a builtin): let the calls tell
        pass
    rng = ex.case_rng(4)
    for layout in _sample_layouts():
        for element_bytes in (4, 8, 2):
            system = (f"{layout.burst_bytes}-byte bursts, {_plural(layout.channels, 'channel')} "
                      f"x {_plural(layout.banks_per_channel, 'bank')}, {element_bytes}-byte "
                      "elements")
            with chk.case(system):
                answers = []  # (what, got, want, mistakes)
                for what, indices in _bank_queue_cases(layout, element_bytes, rng):
                    got = fn(list(indices), element_bytes, layout.burst_bytes, layout.channels,
                             layout.banks_per_channel)
                    chk.record(got, max(_bank_queues(indices, element_bytes, layout).values()))
                    whole = isinstance(got, (int, np.integer)) or (
                        isinstance(got, (float, np.floating)) and float(got).is_integer())
                    if isinstance(got, bool) or not whole:
                        chk.fail(f"{what}: returned {got!r}; return the number of accesses, "
                                 "a whole number.")
                        break
                    answers.append((what, int(got),
                                    max(_bank_queues(indices, element_bytes, layout).values()),
                                    _bank_queue_mistakes(indices, element_bytes, layout)))
                else:
                    wrong = [a for a in answers if a[1] != a[2]]
                    if wrong:
                        what, got, want, _ = wrong[0]
                        # A mistake is named only if it explains every answer on this system:
                        # one coincidence on a single index set names nothing.
                        explains = [k for k in range(len(answers[0][3]))
                                    if all(a[1] == a[3][k][0] for a in answers)]
                        hint = f" ({answers[0][3][explains[0]][1]})" if len(explains) == 1 else ""
                        chk.fail(f"{what}: got {got}, expected {want}{hint}; "
                                 f"{len(wrong)} of {len(answers)} index sets wrong here.")
    return chk.report()


def _loads_cases():
    """Cases whose exact answer is far from a rounding boundary, and two whose quotient is
    exactly a whole number k: there a ceiling computed in floating point may give k or k + 1
    (through 1e9 and 1e-9 the bytes in flight come out a hair over), and both are accepted."""
    rng = _exercises.case_rng(12)
    cases = [(3350.0, 620.0, 8, 132, 4), (3350.0, 620.0, 64, 132, 4), (4200.0, 700.0, 16, 132, 4),
             (300.0, 450.0, 4, 40, 4), (300.0, 450.0, 32, 40, 16), (2000.0, 550.0, 2, 108, 8),
             (4096.0, 500.0, 8, 100, 4), (3200.0, 640.0, 16, 100, 4)]
    while len(cases) < 14:
        c = (float(rng.integers(200, 5000)), float(rng.integers(300, 900)),
             int(rng.choice([1, 2, 4, 8, 16, 32, 48, 64])), int(rng.integers(20, 150)),
             int(rng.choice([4, 8, 16])))
        q = c[0] * c[1] / (c[2] * c[3] * WARP * c[4])
        if q > 1 and abs(q - round(q)) > 1e-3:
            cases.append(c)
    return cases


# Quotients that are exactly a whole number k and that every usual way of computing them in
# floating point (GB/s x ns, or through 1e9 and 1e-9, or step by step) gives exactly: there a
# right ceiling is k. `int(x) + 1` answers k + 1 on every one of them (and the ceiling
# elsewhere), so the checker asks for k on at least one (float noise may push a few up).
_WHOLE_LOADS = [(3072.0, 400.0, 16, 100, 4), (2048.0, 640.0, 8, 80, 4), (6144.0, 400.0, 16, 100, 4)]
_WHOLE_COPY_LOADS = [(6144.0, 400.0, 16, 100, 4), (4096.0, 640.0, 8, 80, 4), (2048.0, 1250.0, 8, 125, 4)]


def _check_whole_quotients(chk, fn, cases, share: float) -> None:
    """One case: ``fn`` must not answer k + 1 at every whole-number quotient k of ``cases``."""
    with chk.case("loads that come out a whole number exactly"):
        got, want = [], []
        for c in cases:
            gbps, ns, warps, sms, nbytes = c
            got.append(fn(*c))
            want.append(round(share * gbps * ns / (warps * sms * WARP * nbytes)))
        if all(isinstance(g, (int, np.integer)) and not isinstance(g, bool) and g == w + 1
               for g, w in zip(got, want)):
            chk.fail(f"where the loads come out a whole number exactly ({', '.join(map(str, want))}) "
                     f"you answered one more ({', '.join(map(str, got))}): int(x) + 1 is not a "
                     "ceiling when x is whole; use math.ceil(x).")


@_exercises.refuses_stubs(solved_by=("gpuperf.kernels.dram:loads_per_thread_needed",))
def check_loads_needed(fn):
    """Exercise: ``fn(ceiling_gbps, latency_ns, warps_per_sm, sm_count, bytes_per_load) -> int``."""
    from gpuperf import exercises as ex

    chk = ex.Checker("Little's law: loads per thread to reach the ceiling")
    if not callable(fn):
        chk.fail(f"expected a function, got {type(fn).__name__}.")
        return chk.report()
    for c in _loads_cases():
        gbps, ns, warps, sms, nbytes = c
        with chk.case(f"{gbps:.0f} GB/s, {ns:.0f} ns, {warps} warps/SM, {sms} SMs, "
                      f"{nbytes}-byte loads"):
            got = fn(*c)
            want = loads_per_thread_needed(*c)
            exact = gbps * ns / (warps * sms * WARP * nbytes)
            chk.record(got, allowed={max(1, k) for k in ex.rounded_up(exact)})
            if isinstance(got, bool) or not isinstance(got, (int, np.integer)):
                if isinstance(got, (float, np.floating)) and float(got).is_integer():
                    chk.fail(f"returned {got!r}, a float; return an int (loads are whole).")
                else:
                    chk.fail(f"returned {got!r}; return a whole number of loads (an int): "
                             f"{exact:.3g} loads per thread is not enough, so round up.")
            elif got not in {max(1, k) for k in ex.rounded_up(exact)}:
                if got == math.floor(exact):
                    why = "that is rounded down, and falls short of the ceiling; round up."
                elif got == math.ceil(exact * WARP - 1e-9):
                    why = "each warp is 32 threads, and each thread has its own loads in flight."
                elif got == math.ceil(gbps * ns / (warps * WARP * nbytes) - 1e-9):
                    why = "the bytes in flight are spread over every SM, not one."
                else:
                    why = ("bytes in flight = bandwidth x latency, and GB/s x ns = bytes "
                           f"(exact answer before rounding: {exact:.3g}).")
                chk.fail(f"got {got}, expected {want}: {why}")
    _check_whole_quotients(chk, fn, _WHOLE_LOADS, 1.0)
    return chk.report()


def _copy_loads_cases():
    """Copies whose exact answer, and the answer with the copy's bandwidth taken for the reads
    (twice as many loads), are both far from a rounding boundary: the two always differ."""
    rng = _exercises.case_rng(13)
    cases = [(4240.0, 356.0, 64, 132, 4), (1696.0, 356.0, 4, 132, 4), (3350.0, 620.0, 8, 132, 4),
             (300.0, 450.0, 4, 40, 4), (2000.0, 550.0, 2, 108, 8), (4096.0, 700.0, 16, 100, 16)]
    while len(cases) < 14:
        c = (float(rng.integers(200, 5000)), float(rng.integers(300, 900)),
             int(rng.choice([1, 2, 4, 8, 16, 32, 48, 64])), int(rng.integers(20, 150)),
             int(rng.choice([4, 8, 16])))
        q = COPY_READ_SHARE * c[0] * c[1] / (c[2] * c[3] * WARP * c[4])
        if q > 1 and abs(q - round(q)) > 1e-3 and abs(2 * q - round(2 * q)) > 1e-3:
            cases.append(c)
    return cases


@_exercises.refuses_stubs(solved_by=("gpuperf.kernels.dram:copy_loads_per_thread_needed",))
def check_copy_loads_needed(fn):
    """Exercise: ``fn(copy_gbps, latency_ns, warps_per_sm, sm_count, bytes_per_load) -> int``, the
    loads in flight per thread a copy needs to move ``copy_gbps`` (bytes read plus written)."""
    from gpuperf import exercises as ex

    chk = ex.Checker("Little's law for a copy: loads in flight per thread")
    if not callable(fn):
        chk.fail(f"expected a function, got {type(fn).__name__}.")
        return chk.report()
    for c in _copy_loads_cases():
        gbps, ns, warps, sms, nbytes = c
        with chk.case(f"a copy at {gbps:.0f} GB/s, {ns:.0f} ns, {warps} warps/SM, {sms} SMs, "
                      f"{nbytes}-byte loads"):
            got = fn(*c)
            want = copy_loads_per_thread_needed(*c)
            threads_bytes = warps * sms * WARP * nbytes
            exact = COPY_READ_SHARE * gbps * ns / threads_bytes
            chk.record(got, allowed={max(1, k) for k in ex.rounded_up(exact)})
            if isinstance(got, bool) or not isinstance(got, (int, np.integer)):
                chk.fail(f"returned {got!r}; return a whole number of loads (an int), rounded up.")
            elif got not in {max(1, k) for k in ex.rounded_up(exact)}:
                if got in ex.rounded_up(gbps * ns / threads_bytes):
                    why = ("the copy's bandwidth counts bytes read plus written, but only the "
                           "reads are loads in flight: they flow at half of it.")
                elif got == math.floor(exact):
                    why = "that is rounded down, and falls short; round up."
                else:
                    why = ("bytes in flight = read bandwidth x latency, and GB/s x ns = bytes "
                           f"(exact answer before rounding: {exact:.3g}).")
                chk.fail(f"got {got}, expected {want}: {why}")
    _check_whole_quotients(chk, fn, _WHOLE_COPY_LOADS, COPY_READ_SHARE)
    return chk.report()


@_exercises.refuses_stubs(solved_by=("gpuperf.kernels.dram:step_latency_ns",))
def check_step_latency(fn):
    """Exercise: ``fn(ms_short, ms_long, steps) -> float``, ns per step of a pointer chase."""
    from gpuperf import exercises as ex

    chk = ex.Checker("latency per step from two chain lengths")
    if not callable(fn):
        chk.fail(f"expected a function, got {type(fn).__name__}.")
        return chk.report()
    rng = _exercises.case_rng(14)
    cases = [(0.0180, 0.0315, 4096), (0.0120, 0.0130, 2048), (1.50, 2.95, 4096), (0.0090, 0.0094, 256)]
    while len(cases) < 10:
        steps = int(rng.choice([256, 1024, 2048, 4096, 8192]))
        launch, step_ns = float(rng.uniform(0.004, 0.02)), float(rng.uniform(15, 700))
        cases.append((launch + steps * step_ns / 1e6, launch + 2 * steps * step_ns / 1e6, steps))
    for ms_short, ms_long, steps in cases:
        with chk.case(f"{steps} steps in {ms_short:.4g} ms, {2 * steps} in {ms_long:.4g} ms"):
            got = fn(ms_short, ms_long, steps)
            want = step_latency_ns(ms_short, ms_long, steps)
            chk.record(got, want, rtol=1e-6)
            if isinstance(got, bool) or not isinstance(got, (int, float, np.integer, np.floating)):
                chk.fail(f"returned {got!r}; return a number of nanoseconds.")
            elif not math.isclose(got, want, rel_tol=1e-6):
                g = float(got)
                if math.isclose(g, ms_long / (2 * steps) * 1e6, rel_tol=1e-6) or math.isclose(
                        g, ms_short / steps * 1e6, rel_tol=1e-6):
                    why = ("that is one chain's time per step, launch included; the difference "
                           "of the two chains cancels the launch.")
                elif math.isclose(g, want / 2, rel_tol=1e-6):
                    why = "the longer chain has `steps` more steps, not 2 x steps more."
                elif any(math.isclose(g, want * f, rel_tol=1e-6) for f in (1e-3, 1e3, 1e-6, 1e6)):
                    why = "check the units: 1 ms = 1,000,000 ns."
                else:
                    why = "(ms_long - ms_short) is the time of `steps` steps alone."
                chk.fail(f"got {g:.4g} ns, expected {want:.4g} ns: {why}")
    return chk.report()


@_exercises.refuses_stubs(solved_by=("gpuperf.kernels.dram:channel_gbps",
                                       "gpuperf.kernels.dram:bus_utilization",
                                       "gpuperf.kernels.dram:simulated_utilization",
                                       "gpuperf.kernels.dram:bank_schedule"))
def check_channel_gbps(fn):
    """Exercise: ``fn(ratio, banks, bus_gbps) -> float``, GB/s a channel delivers."""
    from gpuperf import exercises as ex

    chk = ex.Checker("what a channel delivers with B banks")
    if not callable(fn):
        chk.fail(f"expected a function, got {type(fn).__name__}.")
        return chk.report()
    cases = [(20, 1, 16.0), (20, 2, 16.0), (4, 2, 16.0), (4, 5, 16.0), (4, 8, 16.0), (20, 21, 16.0),
             (10, 3, 32.0), (0, 1, 25.6), (7.5, 4, 12.0), (3, 16, 8.0), (31, 16, 64.0)]
    # Two more drawn at random (while grading, from the hidden seed too): burst ratios with a
    # fraction, bank counts on either side of R + 1, bus rates not in the list above.
    rng = ex.case_rng(31)
    for _ in range(2):
        ratio = round(float(rng.uniform(0.5, 40.0)), 1)
        cases.append((ratio, int(rng.integers(1, 48)), round(float(rng.uniform(4.0, 80.0)), 1)))
    for ratio, banks, bus in cases:
        with chk.case(f"R = {ratio:g}, {banks} bank{'s' * (banks > 1)}, a {bus:g} GB/s bus"):
            got = fn(ratio, banks, bus)
            want = channel_gbps(ratio, banks, bus)
            chk.record(got, want, rtol=1e-9, atol=1e-12)
            if isinstance(got, bool) or not isinstance(got, (int, float, np.integer, np.floating)):
                chk.fail(f"returned {got!r}; return GB/s, a number.")
            elif not math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12):
                g = float(got)
                if g > bus * (1 + 1e-9):
                    why = "more than the bus carries: the bus is at most busy all the time."
                elif ratio and math.isclose(g, bus * min(1.0, banks / ratio), rel_tol=1e-9):
                    why = ("one bank delivers one burst per access *plus* its transfer: "
                           "R + 1 transfer times, not R.")
                else:
                    why = ("B banks deliver B bursts every R + 1 transfer times, until the bus "
                           "is full.")
                chk.fail(f"got {g:.4g} GB/s, expected {want:.4g}: {why}")
    return chk.report()


def _phase_channel_cases():
    """(width, tile, phase, burst_bytes, channels): the textbook's system, sizes that are not
    multiples of the tile, bursts of 8 to 64 bytes, channel counts that are not powers of two."""
    cases = [(8, 2, 0, 8, 4), (8, 2, 3, 8, 4), (4, 2, 1, 8, 4), (16, 4, 1, 8, 4), (16, 4, 2, 32, 4),
             (5, 2, 2, 8, 4), (7, 3, 1, 8, 3), (12, 4, 0, 16, 6), (10, 4, 2, 8, 5), (32, 8, 3, 64, 8),
             (9, 4, 0, 16, 3), (24, 8, 1, 32, 12)]
    rng = _exercises.case_rng(15)
    while len(cases) < 18:
        width, tile = int(rng.integers(3, 40)), int(rng.choice([2, 3, 4, 8]))
        phase = int(rng.integers(0, -(-width // tile)))
        cases.append((width, tile, phase, int(rng.choice([8, 16, 32, 64])),
                      int(rng.integers(2, 13))))
    return cases


@_exercises.refuses_stubs(solved_by=("gpuperf.kernels.dram:channels_used",
                                       "gpuperf.kernels.dram:phase_usage",
                                       "gpuperf.kernels.dram:tile_loads"))
def check_phase_channels(fn):
    """Exercise: ``fn(width, tile, phase, burst_bytes, channels) -> sorted channels`` that N's
    tiles reach in one phase of the tiled matrix product."""
    from gpuperf import exercises as ex

    chk = ex.Checker("the channels N's tiles reach in one phase")
    if not callable(fn):
        chk.fail(f"expected a function, got {type(fn).__name__}.")
        return chk.report()
    for width, tile, phase, burst, channels in _phase_channel_cases():
        layout = DramLayout(burst, channels, 1)
        with chk.case(f"{width}x{width}, {tile}x{tile} tiles, phase {phase}, {burst}-byte "
                      f"bursts, {channels} channels"):
            got = fn(width, tile, phase, burst, channels)
            want = channels_used(width, tile, phase, matrix="N", layout=layout)
            chk.record(got, want)
            if not isinstance(got, (list, tuple)) or not all(
                    isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in got):
                chk.fail(f"returned {got!r}; return a sorted list of channel numbers (ints).")
                continue
            got = [int(x) for x in got]
            if got == want:
                continue
            if sorted(set(got)) == want:
                why = "each channel once, in increasing order."
            elif got == channels_used(width, tile, phase, matrix="M", layout=layout):
                why = "those are M's tiles; N's tile of phase ph is rows ph*T .. ph*T + T - 1."
            elif got == sorted({(i // burst) % channels for r in range(phase * tile,
                                min(phase * tile + tile, width)) for i in
                                range(r * width, r * width + width)}):
                why = ("that divides an element's index by the burst size; a burst holds "
                       "burst_bytes / 4 float32 elements, so use the byte address (4 x index).")
            else:
                why = ("burst k of the matrix (bytes 4 x index) goes to channel k mod channels; "
                       "every block's columns count, and only rows inside the matrix.")
            chk.fail(f"got {got}, expected {want}: {why}")
    return chk.report()


# --------------------------------------------------------------------------- occupancy by hand

# Colab's GPU, from NVIDIA's specifications of compute capability 7.5 (not a record): a
# third set of facts for the occupancy exercise, with another per-SM block limit, no
# reserved shared memory and half the resident threads of a Hopper SM.
T4_SPEC_FACTS = {"name": "NVIDIA T4 (specification)", "compute_capability": (7, 5),
                 "max_threads_per_sm": 1024, "max_threads_per_block": 1024,
                 "registers_per_sm": 65536, "registers_per_block": 65536,
                 "shared_per_sm": 65536, "shared_per_block": 49152,
                 "shared_per_block_optin": 65536, "warp_size": 32}

_RESOURCE_EXPERIMENTS = ("matmul_resources", "matmul_coarsen_sweep", "matmul_regtile_sweep")


def _recorded_occupancy_cases() -> list[tuple]:
    """(threads, registers, shared_bytes, facts, blocks_per_sm) of every compiled kernel whose
    resources and occupancy a shipped record holds: the CUDA occupancy API's answers."""
    from gpuperf import records

    seen, cases = set(), []
    for path in records.available():
        exps = records.load(path)["experiments"]
        for name in _RESOURCE_EXPERIMENTS:
            entry = exps.get(name)
            if not entry:
                continue
            facts = entry["provenance"].get("device") or {}
            for r in entry["rows"]:
                if r.get("blocks_per_sm") is None or r.get("regs") is None:
                    continue
                threads = r.get("threads") or r["tile"] ** 2
                key = (threads, r["regs"], r["smem_bytes"], facts.get("name"))
                if key not in seen:
                    seen.add(key)
                    cases.append((threads, r["regs"], r["smem_bytes"], facts,
                                  r["blocks_per_sm"]))
    return cases


def _drawn_occupancy_cases(n: int = 24) -> list[tuple]:
    """Configurations drawn at random, on each recorded GPU's facts and the T4's, that each
    put another limit in charge; the answer is gp.device.occupancy's."""
    from gpuperf import records

    facts = [T4_SPEC_FACTS] + [records.load(p)["experiments"][_RESOURCE_EXPERIMENTS[0]]
                               ["provenance"]["device"] for p in records.available()
                               if _RESOURCE_EXPERIMENTS[0] in records.load(p)["experiments"]]
    rng = _exercises.case_rng(31)
    # Each of these puts one rule on the edge: registers' unit of 256 (640, 33), the register
    # file's 4 sub-partitions (160 and 96 threads at 40 registers: 9 and 16 blocks on an H200,
    # not 10 and 17), the reserved KiB (128, 116000 and 256, 58000), shared memory's unit of
    # 128 bytes (256, 45670) and of 256 before compute capability 8.0 (64 threads, 10,800 B:
    # 5 blocks on a T4, not 6), whole warps (680 threads), the per-SM block limit (32
    # threads), and more. The answers agree with cuda_occupancy.h's
    # cudaOccMaxActiveBlocksPerMultiprocessor on these facts.
    fixed = [(48, 40, 0), (1024, 64, 0), (96, 255, 100), (64, 24, 40000), (32, 16, 0),
             (640, 33, 12345), (200, 72, 3000), (128, 32, 116000), (256, 24, 58000),
             (256, 32, 45670), (680, 16, 0), (160, 40, 0), (96, 40, 0), (64, 32, 10800)]
    cases = []
    while len(cases) < n + len(fixed) * len(facts):
        if fixed:
            t, r, sh = fixed.pop()
            chosen = list(facts)
        else:
            t = int(rng.choice([32, 48, 64, 96, 128, 160, 192, 256, 384, 512, 768, 1000, 1024]))
            r = int(rng.integers(16, 256))
            sh = int(rng.choice([0, int(rng.integers(1, 48 * 1024)), int(rng.integers(1, 8192))]))
            chosen = [facts[int(rng.integers(len(facts)))]]
        for f in chosen:
            try:
                o = device.occupancy(t, r, sh, f)
            except ValueError:  # a block that cannot run at all: not a case
                continue
            cases.append((t, r, sh, f, o["blocks_per_sm"]))
    return cases


def _occupancy_variants(threads, registers, shared, facts) -> list[tuple[int, str]]:
    """What an answer that skips (or misapplies) one rule of the calculation gives, with the
    rule, for this configuration on this GPU."""
    cc = tuple(facts["compute_capability"])
    warps = -(-threads // WARP)
    max_warps = facts["max_threads_per_sm"] // WARP
    blocks_cap = device.MAX_BLOCKS_PER_SM[cc]
    reg_unit = -(-registers * WARP // device.REGISTER_UNIT) * device.REGISTER_UNIT
    parts = device.REGISTER_SUB_PARTITIONS
    reserved = 1024 if cc >= (8, 0) else 0
    unit = device.shared_unit(cc)
    other_unit = 384 - unit  # 128 where the unit is 256, and 256 where it is 128

    def rounded(n, u=unit):
        return -(-n // u) * u

    right_shared = rounded(shared + reserved)

    def blocks(warp_count=warps, per_warp=reg_unit, sh=right_shared, cap=blocks_cap,
               thread_limit=None, sub_partitions=parts):
        by_registers = (facts["registers_per_sm"] // sub_partitions // per_warp * sub_partitions
                        // warp_count)
        limits = [thread_limit if thread_limit is not None else max_warps // warp_count, cap,
                  by_registers]
        if sh:
            limits.append(facts["shared_per_sm"] // sh)
        return min(limits)

    o = device.occupancy(threads, registers, shared, facts)
    return [
        (blocks(per_warp=registers * WARP),
         "registers are given to a warp in units of 256: round registers x 32 up first"),
        (blocks(sub_partitions=1),
         "the register file is 4 sub-partitions of registers_per_sm / 4, each holding whole "
         "warps: count the warps one sub-partition holds, times 4, then divide by the block's warps"),
        (blocks(sh=rounded(shared)), "from compute capability 8.0 the system reserves 1 KiB of "
                                     "shared memory per block: add it"),
        (blocks(sh=rounded(shared + 1024)), "the 1 KiB of shared memory reserved per block starts "
                                            "with compute capability 8.0: a "
                                            f"{cc[0]}.{cc[1]} GPU reserves none"),
        (blocks(sh=rounded(shared + reserved, other_unit)),
         "shared memory is given to a block in units of 128 bytes from compute capability 8.0, "
         f"256 before: a {cc[0]}.{cc[1]} GPU's unit is {unit}"),
        (blocks(sh=shared + reserved), f"shared memory is given to a block in units of {unit} "
                                       "bytes on this GPU: round up first"),
        (blocks(cap=10**9), "an SM holds at most gp.device.MAX_BLOCKS_PER_SM[cc] blocks, whatever "
                            "else is free"),
        (blocks(thread_limit=facts["max_threads_per_sm"] // threads),
         "a block takes whole warps: count its threads rounded up to a multiple of 32"),
        (o["warps_per_sm"], "that is the warps per SM; return the blocks"),
    ]


def _occupancy_mistake(got, threads, registers, shared, facts) -> str | None:
    """Name the rule an answer skipped, if skipping exactly one rule gives it."""
    right = device.occupancy(threads, registers, shared, facts)["blocks_per_sm"]
    for value, why in _occupancy_variants(threads, registers, shared, facts):
        if got == value and value != right:
            return why
    return None


# The A100's limits from NVIDIA's specification (compute capability 8.0: 164 KiB of shared
# memory per SM, 1 KiB reserved per block, 32 blocks): a family between the T4 and Hopper,
# where a rule applied "from 9.0" instead of "from 8.0" shows.
A100_SPEC_FACTS = {"name": "NVIDIA A100 (specification)", "compute_capability": (8, 0),
                   "max_threads_per_sm": 2048, "max_threads_per_block": 1024,
                   "registers_per_sm": 65536, "registers_per_block": 65536,
                   "shared_per_sm": 167936, "shared_per_block": 49152,
                   "shared_per_block_optin": 166912, "warp_size": 32}


def _separating_occupancy_cases() -> list[tuple]:
    """For every GPU family the course names (T4, A100, and each recorded GPU) and every rule
    of ``_occupancy_variants``: one configuration where skipping that rule changes the answer
    (searched in a fixed order, so the same cases every run), where the family has one."""
    from gpuperf import records

    families = [T4_SPEC_FACTS, A100_SPEC_FACTS]
    for path in records.available():
        exps = records.load(path)["experiments"]
        if _RESOURCE_EXPERIMENTS[0] in exps:
            families.append(exps[_RESOURCE_EXPERIMENTS[0]]["provenance"]["device"])
    grid = [(t, r, sh)
            for sh in (0, 1000, 4000, 9000, 10800, 12345, 20000, 21800, 32768, 40000, 45670)
            for t in (32, 48, 64, 96, 128, 200, 256, 680, 1024)
            for r in (16, 24, 33, 40, 64, 100, 128, 200)]
    cases = []
    for facts in families:
        count = len(_occupancy_variants(32, 16, 0, facts))
        for k in range(count):
            for t, r, sh in grid:
                try:
                    right = device.occupancy(t, r, sh, facts)["blocks_per_sm"]
                except ValueError:
                    continue
                if _occupancy_variants(t, r, sh, facts)[k][0] != right:
                    cases.append((t, r, sh, facts, right))
                    break
    return cases


def occupancy_agreement() -> str:
    """Print how many recorded kernels' blocks per SM (the CUDA occupancy API's answer, from
    every shipped record that holds compiled resources) ``gp.device.occupancy`` reproduces."""
    cases = _recorded_occupancy_cases()
    gpus = sorted({c[3].get("name", "?") for c in cases})
    agree = sum(device.occupancy(t, r, sh, f)["blocks_per_sm"] == want
                for t, r, sh, f, want in cases)
    text = (f"{agree} of {len(cases)} kernel configurations of chapters 4 and 5 (threads, "
            f"registers, shared memory), recorded on {' and '.join(gpus)}: the calculation "
            "by hand gives the blocks per SM that the CUDA occupancy API reported")
    print(text)
    return text


@_exercises.refuses_stubs(solved_by=("gpuperf.device:occupancy", "gpuperf.device:show_occupancy"))
def check_blocks_per_sm(fn):
    """Exercise: ``fn(threads, registers, shared_bytes, facts) -> int``, blocks per SM."""
    from gpuperf import exercises as ex

    chk = ex.Checker("occupancy by hand: resident blocks per SM")
    if not callable(fn):
        chk.fail(f"expected a function, got {type(fn).__name__}.")
        return chk.report()
    recorded = _recorded_occupancy_cases()
    for origin, cases in (("the CUDA occupancy API, recorded", recorded),
                          ("the hardware's rules", _drawn_occupancy_cases()),
                          ("one rule on the edge", _separating_occupancy_cases())):
        for threads, registers, shared, facts, want in cases:
            with chk.case(f"{threads} threads, {registers} registers, {shared:,} B shared on "
                          f"{facts.get('name', 'a GPU')} ({origin})"):
                got = fn(threads, registers, shared, dict(facts))
                chk.record(got, want)
                if isinstance(got, bool) or not isinstance(got, (int, np.integer)):
                    chk.fail(f"returned {got!r}; return the number of resident blocks, an int.")
                elif got != want:
                    why = _occupancy_mistake(got, threads, registers, shared, facts)
                    chk.fail(f"got {got}, expected {want}"
                             + (f": {why}." if why else ": compute each resource's limit "
                                "(threads, blocks, registers, shared memory) and take the "
                                "smallest."))
    return chk.report()


# The performance exercise: a copy with one block of IN_FLIGHT_THREADS threads per SM (4 warps,
# 6% of an H100's or H200's warp slots) must reach IN_FLIGHT_SPEED_TARGET of the device-to-device
# copy measured in the same check, at IN_FLIGHT_SPEED_N float32. On an H100 (one run, best of
# three), a grid-stride copy with k loads in flight per thread at this launch read 12% (k = 1),
# 32% (4), 47% (8) and 63% (16) of the copy; each thread loading 4 consecutive elements, 34%.
IN_FLIGHT_THREADS = 128
IN_FLIGHT_SPEED_N = 2**26
IN_FLIGHT_SPEED_TARGET = 0.4
_IN_FLIGHT_SIMULATED = (2, 32)  # the simulator runs every thread in Python: a small launch


def in_flight_launch() -> tuple[int, int]:
    """``(blocks, threads)`` of the copy exercise: one block of ``IN_FLIGHT_THREADS`` threads
    per SM of this GPU (on the simulator, 2 blocks of 32)."""
    from gpuperf.mode import SIMULATOR

    if SIMULATOR:
        return _IN_FLIGHT_SIMULATED
    return device.sm_count(default=2), IN_FLIGHT_THREADS


_GUARD = 64  # elements after the end of dst that a correct copy never writes


def _only_partial_trips(missed, n: int, total: int) -> bool:
    """Whether the elements ``missed`` are exactly those that a grid-stride loop of batches
    of ``u`` loads (some u up to 64), with no loop for the rest, leaves out: the elements of
    each thread's last, partial batch."""
    if missed.size == 0:
        return False
    idx = np.arange(n)
    for u in range(2, 65):
        start = idx % total + (idx // total) // u * u * total  # the batch each element is in
        partial = idx[start + (u - 1) * total >= n]
        if partial.size == missed.size and np.array_equal(partial, missed):
            return True
    return False


# The fewest loads in flight per thread the copy exercise accepts in the emulator (every mode);
# how many reach the speed bar is the GPU's measurement.
IN_FLIGHT_MIN_LOADS = 2


@_exercises.refuses_stubs(solved_by=("gpuperf.kernels.dram:make_copy",
                                       "gpuperf.kernels.dram:make_sum_loads"))
def check_copy_in_flight(kernel):
    """Exercise: a copy with few threads, ``kernel(src, dst)``.

    The kernel copies float32 ``src`` into ``dst`` (same length, any length), launched with
    ``in_flight_launch()``: few threads, so it must keep several loads in flight per thread.
    Every element copied exactly, nothing written past the
    end of ``dst`` (guard cells after it), ``src`` untouched; sizes around multiples of the
    grid's thread count, so that whole trips and tails both run. On a GPU, also at least
    ``IN_FLIGHT_SPEED_TARGET`` of a device-to-device copy measured in the same check, at
    ``IN_FLIGHT_SPEED_N`` elements."""
    from gpuperf import exercises as ex
    from gpuperf.mode import SIMULATOR

    chk = ex.Checker("a copy with few threads: loads in flight")
    if not chk.is_kernel(kernel):
        return chk.report()
    blocks, threads = in_flight_launch()
    total = blocks * threads  # threads in the grid
    if not ex.preflight(chk, kernel, 2, 32, ex.random_array(200, 3), ex.poisoned(200)):
        return chk.report()
    sizes = sorted({1, 2, 31, 33, 100, total - 1, total, total + 1, 3 * total + 5,
                    8 * total - 1, 8 * total + 3, 16 * total, 17 * total + 1, 40 * total + 7,
                    *ex.hidden_sizes(1, 40 * total)})
    for seed in ex.seeds():
        for n in sizes if seed == 0 else sizes[::3]:
            with chk.case(f"n={n}, launch [{blocks}, {threads}]", seed=seed):
                src_host = ex.random_array(n, seed * 7919 + n)
                src = cuda.to_device(src_host)
                whole = cuda.to_device(ex.poisoned(n + _GUARD))
                kernel[blocks, threads](src, whole[:n])
                got = whole.copy_to_host()
                chk.record(got, np.concatenate([src_host, np.full(_GUARD, np.nan, np.float32)]))
                chk.record(src.copy_to_host(), src_host)
                missed = np.flatnonzero(got[:n] != src_host)
                if missed.size:
                    i = int(missed[0])
                    tail = _only_partial_trips(missed, n, total)
                    chk.fail(f"dst[{i}] is {float(got[i]):g}, expected src[{i}] = "
                             f"{float(src_host[i]):g} ({missed.size} of {n} elements wrong"
                             + ((", each in its thread's last, partial batch: the elements "
                                 "left over after the last whole trip need their own loop)"
                                 if missed.size < n else
                                 "; if your loop copies whole batches only, this n is smaller "
                                 "than one batch: the elements left over after the last whole "
                                 "trip need their own loop)") if tail else ")"))
                written = np.flatnonzero(~np.isnan(got[n:]))
                if written.size:
                    chk.fail(f"wrote past the end of dst (dst[{n + int(written[0])}] of a "
                             f"dst of {n} elements): test every index against n before "
                             "loading or storing.")
                if not np.array_equal(src.copy_to_host(), src_host):
                    chk.fail("src changed: the copy must only read it.")
    if chk.report_.ok:  # the pattern, in every mode: batches of loads, each coalesced
        n = 16 * 64 + 5  # two blocks of 32: whole trips of any batch up to 16, and a tail
        names = ex.emulator_param_names(kernel, 2)
        run = ex.recorded_run(chk, f"loads in flight, recorded in the emulator (n={n}, "
                                   "launch [2, 32])", kernel, 2, 32, ex.random_array(n, 8),
                              ex.poisoned(n))
        with chk.case("several coalesced loads in flight per thread (emulator)"):
            ex.expect_in_flight(chk, run, names[0], at_least=IN_FLIGHT_MIN_LOADS, advice=(
                "Load a batch of elements into registers (local variables) before storing "
                "any of them."))
            ex.expect_coalesced(chk, run, names[:2], advice=(
                "Within a batch, element k of a thread must be a grid's width from element "
                "k - 1 (i, i + s, i + 2s, ...), so that each warp's load is contiguous."))
    if SIMULATOR:
        ex.speed_not_measured(chk, f"{IN_FLIGHT_SPEED_TARGET:.0%} of a device-to-device copy "
                                   f"at 2^{IN_FLIGHT_SPEED_N.bit_length() - 1} elements, "
                                   f"launched with one block of {IN_FLIGHT_THREADS} threads "
                                   "per SM")
    elif chk.report_.ok:
        n = IN_FLIGHT_SPEED_N
        src = cuda.to_device(ex.random_array(n, 5))
        dst = cuda.device_array(n, np.float32)
        ex.speed_against_copy(
            chk, lambda: kernel[blocks, threads](src, dst), 8 * n,
            target=IN_FLIGHT_SPEED_TARGET,
            smaller=(lambda: kernel[blocks, threads](src[:n // 64], dst[:n // 64]), 64),
            what=f"your copy ({blocks} blocks of {threads} threads, n = 2^{n.bit_length() - 1})",
            advice="with this few threads, Little's law asks for several loads in flight per "
                   "thread: load a batch of elements (each a grid's width apart, so that each "
                   "warp's loads stay coalesced) into registers before storing any of them.")
    return chk.report()
