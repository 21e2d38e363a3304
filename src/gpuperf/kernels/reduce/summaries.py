"""What the reduce chapter prints from its experiments' results: one-line summaries, the
ladder beside the study notes' V100, and the study notes' own table."""

from __future__ import annotations

import math

from gpuperf import validate

from .ablation import ABLATION
from .experiments import ARGMAX_ROWS, BACK_TO_BACK, STUDY_NOTES_V100, V100_PEAK_GBPS, _at_posts_grid
from .kernels import LADDER, PROLOGUE, WARP


def prologue_grids_summary(res) -> list[str]:
    """The atomics of ``reduce_prologue``, one line per run: one block, then grid-wide and
    shared-memory atomics at the step-by-step post's grid and at ours, each with its atomic
    additions per call, its time per call and (where recorded) the GPU's own busy time."""
    validate.result(res, "res")
    for c in ("version", "n", "ms", "grid", "whose_grid", "atomics"):
        validate.column(res, c, "res column")
    lines = []
    for n in res.values("n"):
        chosen = [r for r in res.select(n=n)
                  if r["version"] in ("block-atomic", "grid-atomic", "shared-atomic")]
        chosen.sort(key=lambda r: (r["whose_grid"] == "ours", r["version"] == "shared-atomic"))
        if not any(_at_posts_grid(r) for r in chosen):
            continue
        lines.append(f"n = {n:,}: time per call, and the GPU's busy time")
        for r in chosen:
            whose = {"post's": "post's grid", "ours": "our grid"}.get(r["whose_grid"],
                                                                   "either grid")
            gpu = f"GPU {r['gpu_ms']:.4f} ms" if r.get("gpu_ms") else "GPU time not recorded"
            lines.append(f"  {r['version']} on {r['grid']}, {whose}: {r['atomics']:,} atomics, "
                         f"{r['ms']:.4f} ms, {gpu}")
    if not lines:
        raise ValueError(f"res ({res.name}) has no rows at the post's grid: give "
                         "reduce_prologue's result as recorded from this version of the package.")
    for line in lines:
        print(line)
    return lines


def prologue_vs_numpy(res, copies=None) -> list[str]:
    """Each GPU method of ``reduce_prologue`` against ``numpy.sum`` on the CPU, one line per
    size, method and grid (ours, and the step-by-step post's where it ran there): its time per
    call (with the GPU's own busy time in it, where recorded: a short call is mostly the host's
    work, so compare kernels by that) and how many times faster or slower than numpy. numpy
    sums data in host memory; the GPU methods sum data already in device memory. ``copies``
    (optional, ``streams_host_bandwidth``'s result) adds, per size, what copying the data to
    the GPU first costs, from pageable and from pinned host memory."""
    validate.result(res, "res")
    for c in ("version", "n", "ms"):
        validate.column(res, c, "res column")
    if copies is not None:
        validate.result(copies, "copies")
        for c in ("memory", "direction", "mib", "ms"):
            validate.column(copies, c, "copies column")
    lines = []
    for n in res.values("n"):
        at_n = res.select(n=n)
        cpu = next((r["ms"] for r in at_n if r["version"] == "numpy.sum (CPU)"), None)
        if cpu is None:
            continue
        lines.append(f"n = {n:,}: numpy.sum {cpu:.3f} ms per call on data in host memory")
        h2d = {r["memory"]: r["ms"] for r in (copies.rows if copies is not None else ())
               if r["direction"] == "h2d" and r["mib"] * 2**20 == 4 * n}
        if "pageable" in h2d and "pinned" in h2d:
            lines.append(f"  copying the {4 * n / 2**20:g} MiB to the GPU (chapter 7): "
                         f"{h2d['pageable']:.3f} ms from pageable memory, "
                         f"{h2d['pinned']:.3f} ms from pinned")
        lines.append("  each GPU method, on data already in device memory:")
        for v in PROLOGUE + ("v8", "cupy.sum"):
            for r in sorted((r for r in at_n if r["version"] == v), key=_at_posts_grid):
                whose = {"post's": "the post's grid", "both": "both grids"}.get(
                    r.get("whose_grid"), "our grid")
                grid = f" [{r['grid']}, {whose}]" if r.get("grid") else ""
                ms = r["ms"]
                than = (f"{cpu / ms:,.1f}x faster than numpy" if ms < cpu
                        else f"{ms / cpu:,.1f}x slower than numpy")
                busy = (f" (the GPU busy {r['gpu_ms']:.4f} ms of it)" if r.get("gpu_ms")
                        else "")
                lines.append(f"  {v}{grid}: {ms:.3f} ms per call{busy}, {than}")
    if not lines:
        raise ValueError(f"res ({res.name}) has no numpy.sum rows: give reduce_prologue's result.")
    for line in lines:
        print(line)
    return lines


def timing_methods_summary(res) -> list[str]:
    """For each version and size of ``reduce_timing_methods``: each method's time per call
    and how many times the GPU's own busy time (measured the same way) it is."""
    validate.result(res, "res")
    for c in ("version", "n", "method", "ms", "gpu_ms"):
        validate.column(res, c, "res column")
    lines = []
    for version in res.values("version"):
        for n in res.values("n"):
            rows = res.select(version=version, n=n)
            if not rows:
                continue
            lines.append(f"{version}, n = 2^{int(math.log2(n))}, time per call:")
            for r in rows:
                busy = r["gpu_ms"]
                gpu = (f"GPU busy {busy * 1e3:7.1f} us: {r['ms'] / busy:5.1f}x" if busy
                       else "GPU busy not recorded")
                lines.append(f"  {r['method']:24s} {r['ms'] * 1e3:7.1f} us   {gpu}")
    for line in lines:
        print(line)
    return lines


def show_host_cost(ladder) -> dict:
    """For v8 and ``cupy.sum`` in ``reduce_ladder``: the host's time to issue one call
    (``host_us``), the most of it the ladder's timing can count per call (the first of
    ``BACK_TO_BACK`` calls waits for its launch; the others' launches overlap the GPU's work),
    as a share of the call's time, and the timing's spread. Printed; returns ``host_us`` by
    version. A record made before the ladder timed the host says so and returns ``{}``."""
    validate.result(ladder, "ladder")
    validate.column(ladder, "version", "ladder column")
    rows = {r["version"]: r for r in ladder.rows if r["version"] in ("v8", "cupy.sum")}
    costs = {v: r["host_us"] for v, r in rows.items() if r.get("host_us") is not None}
    if len(costs) < len(rows) or not costs:
        print(f"This record ({ladder.gpu}) has no host time per call (host_us): it was made "
              "before the ladder measured it.")
        return {}
    for version, us in costs.items():
        r = rows[version]
        exposed = 100 * us / BACK_TO_BACK / (1e3 * r["ms"])
        spread = f" (spread {100 * r['host_spread']:.0f}%)" if r.get("host_spread") else ""
        print(f"{version:9s} issues a call in {us:5.1f} us{spread}: at most {exposed:.1f}% of its "
              f"time per call in the ladder; the ladder's own spread {100 * r['spread']:.1f}%")
    if len(rows) == 2:
        ratio = rows["cupy.sum"]["ms"] / rows["v8"]["ms"]
        print(f"v8 against cupy.sum in the ladder: {100 * ratio:.1f}%")
    return costs


def l2_resident_summary(res) -> str:
    """One line per size and version of ``reduce_l2_resident``: GB/s with the data left in L2
    and flushed, as a share of the copy ceiling, and their ratio; where the array fits in L2."""
    validate.result(res, "res")
    for c in ("version", "n", "state", "gbps", "pct_copy", "fits_l2"):
        validate.column(res, c, "res column")
    by = {(r["version"], r["n"], r["state"]): r for r in res.rows}
    lines = []
    for version in dict.fromkeys(r["version"] for r in res.rows):
        for n in sorted({r["n"] for r in res.rows if r["version"] == version}):
            hot, cold = by.get((version, n, "in L2")), by.get((version, n, "flushed"))
            if not (hot and cold):
                lines.append(f"{version} 2^{n.bit_length() - 1}: a state is missing (in L2 and "
                             "flushed are needed)")
                continue
            took = ""
            if hot.get("gpu_ms") is not None:
                took = f" in {hot['gpu_ms'] * 1e3:.1f} us"
            lines.append(f"{version}, {4 * n / 2**20:.0f} MiB ({'fits' if hot['fits_l2'] else 'over'}"
                         f" L2): in L2 {hot['gbps']:,.0f} GB/s{took} ({hot['pct_copy']:.0f}% of "
                         f"the copy ceiling), flushed {cold['gbps']:,.0f} GB/s "
                         f"({cold['pct_copy']:.0f}%): {hot['gbps'] / cold['gbps']:.2f}x")
    lines.append(f"({res.label})")
    text = "\n".join(lines)
    print(text)
    return text


# The one-launch patterns with atomics in reduce_single_pass: (row label, threads per atomic,
# None for a whole block) and how the ablation's lines call them.
_ATOMIC_ROWS = (("warp atomics", WARP, "one atomic per warp"),
                ("spread atomics", WARP, "one atomic per warp, spread"),
                ("block atomics", None, "one atomic per block"))


def _atomics_count(row) -> str:
    """How many atomics one call of an atomics row does, and on how many addresses ("" where
    the row lacks its grid)."""
    if not (row.get("blocks") and row.get("block")):
        return ""
    per = next(p for label, p, _ in _ATOMIC_ROWS if label == row["version"])
    count = row["blocks"] * (row["block"] // per if per else 1)
    addresses = row.get("addresses", 1)
    return f"{count:,} atomics on {'one address' if addresses == 1 else f'{addresses} addresses'}"


def single_pass_summary(res) -> str:
    """One line per size of ``reduce_single_pass``: the single pass's speed as a share of the
    two passes' (above 100%: faster), both launches' host cost, and whether both sums were
    exact on integer input; under it, one line per atomics pattern and control, with the
    GPU's busy time against the two passes' and how many atomics land on how many addresses."""
    validate.result(res, "res")
    for c in ("version", "n", "ms", "host_us", "correct"):
        validate.column(res, c, "res column")
    lines = []
    for n in sorted({r["n"] for r in res.rows}):
        two = next((r for r in res.rows if r["n"] == n and r["version"] == "two passes"), None)
        one = next((r for r in res.rows if r["n"] == n and r["version"] == "single pass"), None)
        if not (two and one):
            lines.append(f"n = {n}: a row is missing (two passes and single pass are needed)")
            continue
        gpu = ""
        if one.get("gpu_ms") is not None and two.get("gpu_ms") is not None:
            gpu = (f"; the GPU busy {one['gpu_ms'] * 1e3:.1f} against "
                   f"{two['gpu_ms'] * 1e3:.1f} us")
        lines.append(f"n = 2^{n.bit_length() - 1}: one launch {one['ms'] * 1e3:.1f} us, two "
                     f"{two['ms'] * 1e3:.1f} us per call: the single pass at "
                     f"{100 * two['ms'] / one['ms']:.0f}% of the two passes' speed; host "
                     f"{one['host_us']:.1f} against {two['host_us']:.1f} us per call{gpu}; "
                     f"exact: {'yes' if one['correct'] and two['correct'] else 'NO'}")
        for label, _, _ in _ATOMIC_ROWS:
            row = next((r for r in res.rows if r["n"] == n and r["version"] == label), None)
            if not row:
                continue
            busy = ""
            if row.get("gpu_ms") is not None and two.get("gpu_ms") is not None:
                busy = (f"; the GPU busy {row['gpu_ms'] * 1e3:.1f} us, "
                        f"{(row['gpu_ms'] - two['gpu_ms']) * 1e3:+.1f} us against two passes")
            if _atomics_count(row):
                busy += f"; {_atomics_count(row)}"
            lines.append(f"    {label}: {row['ms'] * 1e3:.1f} us, "
                         f"{100 * two['ms'] / row['ms']:.0f}% of the two passes' speed{busy}; "
                         f"exact: {'yes' if row['correct'] else 'NO'}"
                         + (" (a control: its words added on the host)"
                            if label == "spread atomics" else ""))
    battery = [r for r in res.rows if r.get("edge_cases") is not None]
    if battery:
        lines.append("edge battery (subnormal partials, signed zeros, integers, 4 alignments): "
                     + "; ".join(
            f"{r['version']} right" if not r["edge_cases"] else
            f"{r['version']} WRONG in {r['edge_cases']} (e.g. {r['edge_failures'].split(';')[0]})"
            for r in battery))
    lines.append(f"({res.label})")
    text = "\n".join(lines)
    print(text)
    return text


def _with_block_atomics(res):
    """``res`` if it has ``block atomics`` rows, else a shipped record of
    ``reduce_single_pass`` that has them (records made before the ablation existed have none):
    one with the spread control's rows too if there is one, the reference GPU's first; else
    None."""
    from gpuperf import records

    def has(r, version="block atomics"):
        return any(row.get("version") == version for row in r.rows)

    if has(res):
        return res
    found = []
    for path in sorted(records.available(), key=lambda p: p.stem != records.REFERENCE):
        try:
            other = records.recorded("reduce_single_pass", path=path)
        except records.NotRecorded:
            continue
        if has(other):
            found.append(other)
    return next((r for r in found if has(r, "spread atomics")), found[0] if found else None)


def atomics_ablation_summary(res) -> str:
    """The warp atomics' ablation in ``reduce_single_pass``, one line per size: the GPU's busy
    time per call with one atomic per warp, with one per warp spread over ``SPREAD_WORDS``
    words, and with one per block, each against the two passes', and how many atomics land on
    how many addresses. Without the GPU's busy time (a live run without CUPTI) the lines
    compare the time per call, and say so. A record made before the ablation existed has no
    ``block atomics`` rows: then the lines come from a shipped record that has them, and say
    so."""
    validate.result(res, "res")
    for c in ("version", "n"):
        validate.column(res, c, "res column")
    found = _with_block_atomics(res)
    if found is None:
        text = (f"The result shown ({res.label}) has no one-atomic-per-block rows, and no "
                "shipped record has them: measure them on a GPU with "
                "gp.records.run('reduce_single_pass', live=True)")
        print(text)
        return text
    lines = []
    if found is not res:
        lines.append(f"The result shown ({res.label}) predates this ablation; from the "
                     f"{found.gpu} record:")
    by = {(r["version"], r["n"]): r for r in found.rows}
    # the GPU's own busy time where every row has it; a live run without CUPTI has only the
    # time per call, which the host's launches can set (the lines say which they compare)
    busy = all(r.get("gpu_ms") is not None for r in found.rows
               if r["version"] in ("two passes", *(a for a, _, _ in _ATOMIC_ROWS)))
    key, what = ("gpu_ms", "the GPU busy per call") if busy else ("ms", "time per call (no GPU "
                                                                  "busy time in this result)")
    for n in sorted({r["n"] for r in found.rows}):
        two = by.get(("two passes", n))
        parts = []
        for label, _, name in _ATOMIC_ROWS:
            row = by.get((label, n))
            if not (two and row and row.get(key) is not None and two.get(key) is not None):
                continue
            count = _atomics_count(row)
            parts.append(f"{name} {(row[key] - two[key]) * 1e3:+.1f} us"
                         + (f" ({count})" if count else ""))
        if parts:
            lines.append(f"n = 2^{n.bit_length() - 1}: {what} against two passes: "
                         + ", ".join(parts))
    if not any(r["version"] == "spread atomics" for r in found.rows):
        lines.append("(no spread-atomics rows: this record was made before that control)")
    battery = [(per, r) for per, label in (("warp", "warp atomics"), ("block", "block atomics"))
               for r in found.rows if r["version"] == label and r.get("edge_cases") is not None]
    if battery:
        lines.append("edge battery: " + "; ".join(
            f"one atomic per {per} right" if not r["edge_cases"] else
            f"one atomic per {per} WRONG in {r['edge_cases']} "
            f"(e.g. {r['edge_failures'].split(';')[0]})" for per, r in battery))
    lines.append(f"({found.label})")
    text = "\n".join(lines)
    print(text)
    return text


def argmax_summary(res) -> str:
    """What ``reduce_argmax`` shows: each argmax's bandwidth against the single-pass sum that
    reads the same way (and ``cupy.argmax``'s, where it ran), whether each found NumPy's
    index, and the edge cases each kernel got wrong."""
    validate.result(res, "res")
    for c in ("version", "gbps", "correct"):
        validate.column(res, c, "res column")
    rows = {r["version"]: r for r in res.rows}
    missing = [v for v, _, _ in ARGMAX_ROWS if v not in rows]
    if missing:
        raise ValueError(f"res has no {', '.join(repr(m) for m in missing)} row: pass the "
                         "result of gp.records.run('reduce_argmax').")
    lines = []
    for label, kind, width in ARGMAX_ROWS:
        if kind != "argmax":
            continue
        r = rows[label]
        summed = rows[f"sum, {'4-byte' if width == 1 else '16-byte'} loads"]
        found = {True: "NumPy's index", False: "NOT NumPy's index"}.get(r["correct"], "unchecked")
        # Each kernel runs its own full wave: more registers, fewer blocks. Say so where the
        # grids differ, so that the two are not read as compared at one grid.
        grids = (f", on {r['blocks']:,} blocks against its {summed['blocks']:,} (each a full wave)"
                 if r.get("blocks") and summed.get("blocks") and r["blocks"] != summed["blocks"]
                 else "")
        lines.append(f"{label:22s} {r['gbps']:7,.0f} GB/s = {100 * r['gbps'] / summed['gbps']:3.0f}% "
                     f"of the sum with the same loads ({summed['gbps']:,.0f} GB/s{grids}); {found}")
    one, four = rows["argmax, 4-byte loads"], rows["argmax, 16-byte loads"]
    lines.append(f"16-byte loads with four pairs per thread: {four['gbps'] / one['gbps']:.2f}x "
                 f"the one-float loop")
    cupy = rows.get("cupy.argmax")
    if cupy:
        lines.append(f"against cupy.argmax: {100 * four['gbps'] / cupy['gbps']:.0f}% of its "
                     f"bandwidth")
    edges = [(label, rows[label].get("edge_cases")) for label, _, _ in ARGMAX_ROWS]
    if all(e is not None for _, e in edges):
        wrong = [f"{label}: {e}" for label, e in edges if e]
        lines.append("edge cases (subnormals, ties, NaNs, -inf, signed zeros, 4 alignments): "
                     + ("every kernel right" if not wrong else "WRONG in " + ", ".join(wrong)))
    lines.append(f"({res.label})")
    text = "\n".join(lines)
    print(text)
    return text


def ablation_summary(res) -> list[str]:
    """What each of v8's ingredients is worth in ``reduce_v8_ablation``: for each factor, the
    bandwidth ratio of its two values with the other two held fixed (every pair measured)."""
    validate.result(res, "res")
    for c in ABLATION + ("gbps",):
        validate.column(res, c, "res column")
    by = {(r["width"], r["unroll"], r["accumulators"]): r for r in res.rows
          if r["version"].startswith("(")}
    names = {"width": ("1 float", "4 floats"), "unroll": ("1 load", "4 loads"),
             "accumulators": ("1 sum", "4 sums")}
    lines = [f"{res.gpu}: bandwidth ratio when one ingredient changes, the other two fixed"]
    for k, factor in enumerate(ABLATION):
        lo, hi = names[factor]
        lines.append(f"  {factor}, {lo} -> {hi}:")
        for key, r in sorted(by.items()):
            if key[k] != 1:
                continue
            other = key[:k] + (4,) + key[k + 1:]
            if other in by:
                rest = ", ".join(f"{f} {key[j]}" for j, f in enumerate(ABLATION) if j != k)
                lines.append(f"    {by[other]['gbps'] / r['gbps']:.2f}x  with {rest}")
    for line in lines:
        print(line)
    return lines


def show_order_effects(res, others: bool = True) -> str:
    """What ``reduce_prologue``'s ``rel_error`` column says about the order of the additions:
    each method's relative error at each size, then (with ``others``) the methods with atomics
    (and v8) against the same inputs' errors on every other recorded GPU (marked where its
    code was not today's)."""
    from gpuperf import plots, records

    validate.result(res, "res")
    for c in ("version", "n", "rel_error"):
        validate.column(res, c, "res column")
    def label(r):  # the prologue runs two rungs at the post's grid as well as at ours
        return r["version"] + (" (post's grid)" if _at_posts_grid(r) else "")

    lines = []
    for n in res.values("n"):
        lines.append(f"n = {n:,}: " + ", ".join(f"{label(r)} {r['rel_error']:.1e}"
                                                for r in res.select(n=n)))
    validate.boolean(others, "others")
    for other in records.references(res.name, besides=res.gpu) if others else []:
        for version in ("grid-atomic", "shared-atomic", "v8"):
            for n in res.values("n"):
                theirs = {label(r): r for r in other.select(version=version, n=n)}
                for r in res.select(version=version, n=n):
                    if label(r) in theirs:
                        lines.append(f"{label(r)}, n = {n:,}: {r['rel_error']:.2e} on {res.gpu}, "
                                     f"{theirs[label(r)]['rel_error']:.2e} on "
                                     f"{plots.gpu_label(other)}")
    text = "\n".join(lines)
    print(text)
    return text


V100_SM_COUNT = 80  # the study notes' GPU: NVIDIA V100, 80 SMs (V100_PEAK_GBPS in experiments.py: 900 GB/s)


# The study notes' fourth column, "带宽利用率 (%)" (bandwidth utilization), as printed. It is
# not their GB/s over the V100's peak (v1: 268 GB/s is 30% of 900, printed as 90.72).
STUDY_NOTES_V100_UTILIZATION = {
    "v0": 40.97, "v1": 90.72, "v1.5": 82.54, "v2": 85.79, "v3": 81.72, "v4": 43.47,
    "v4.1": 70.28, "v4.2": 40.09, "v5": 44.06, "v6": 33.83, "v7": 33.73, "v8": 34.30,
}


def study_notes_table() -> list[dict]:
    """The study notes' V100 figures for every rung, as they give them (``notes_*``), beside
    their GB/s as a share of the V100's 900 GB/s, computed here (``gbps_over_v100_peak_pct``)."""
    return [{"version": v, "notes_us": us, "notes_gbps": gbps,
             "notes_utilization_pct": STUDY_NOTES_V100_UTILIZATION[v],
             "gbps_over_v100_peak_pct": 100 * gbps / V100_PEAK_GBPS, "notes_speedup": speedup}
            for v, (us, gbps, speedup) in STUDY_NOTES_V100.items()]


def show_study_notes() -> list[dict]:
    """Show :func:`study_notes_table`, with the two rungs that tell its utilization column
    apart from bandwidth under it; return the table."""
    from gpuperf.records import Result

    table = study_notes_table()
    by = {r["version"]: r for r in table}
    note = ("Every column but one as the study notes print them (V100, blocks of 256; 2^25 "
            "float32, inferred from their µs and GB/s: the notes do not state n); the column "
            f"computed here is their GB/s over the V100's {V100_PEAK_GBPS:.0f} GB/s. "
            + "; ".join(f"{v}: {by[v]['notes_gbps']:.0f} GB/s is "
                        f"{by[v]['gbps_over_v100_peak_pct']:.0f}% of the peak, printed as "
                        f"{by[v]['notes_utilization_pct']:.2f}% utilization" for v in ("v1", "v8"))
            + ".")
    Result("the reduce study notes' table", table,
           {"gpu": "the study notes' V100"}, "recorded").show(note=note, headers={
               "notes_us": "their time (µs)", "notes_gbps": "their GB/s",
               "notes_utilization_pct": "their bandwidth utilization (%)",
               "gbps_over_v100_peak_pct":
                   f"their GB/s as % of the V100's {V100_PEAK_GBPS:.0f} GB/s (computed here)",
               "notes_speedup": "their speedup over v0"})
    return table


# The study notes' v6 grid (their BLOCK_NUM, the best of the five they tried on the V100).
STUDY_NOTES_V6_BLOCKS = 2048


def versus_v100(res) -> str:
    """The ladder's comparisons with the study notes' V100, printed from the rows of ``res``.

    Each line gives our figure (on the GPU behind ``res``) and theirs: the mask against v2
    and v1, v0 and v2 as a share of the theoretical peak, the gain of v6 over v5, of v8 over v7.
    """
    from gpuperf import device

    validate.result(res, "res")
    validate.column(res, "version", "res column")
    rows = {r["version"]: r for r in res.rows}
    their_gbps = {v: t[1] for v, t in STUDY_NOTES_V100.items()}
    ours_gbps = {v: r["gbps"] for v, r in rows.items() if r.get("gbps")}
    facts, where = device.facts(res)
    peak = (res.ceilings or {}).get("peak_gbps") or facts.get("peak_gbps")

    def pair(a, b):
        o = (f"{100 * ours_gbps[a] / ours_gbps[b]:.0f}%" if a in ours_gbps and b in ours_gbps
             else "-")
        return o, f"{100 * their_gbps[a] / their_gbps[b]:.0f}%"

    lines = [f"ours: {res.gpu} ({facts.get('sm_count') or '?'} SMs"
             + (f", peak {peak:,.0f} GB/s" if peak else "")
             + f"); the reduce study notes: V100 ({V100_SM_COUNT} SMs, "
             f"peak {V100_PEAK_GBPS:,.0f} GB/s)"
             + (f", ours {peak / V100_PEAK_GBPS:.1f}x its peak" if peak else "")]
    v6_grid = (f"ours on {rows['v6']['blocks']:,} blocks, " if rows.get("v6", {}).get("blocks")
               else "")
    for a, b, what in (("v1.5", "v2", "v1.5 (mask) against v2"),
                       ("v1", "v1.5", "v1 (strided index) against v1.5"),
                       ("v6", "v5", f"v6 (many elements per thread; {v6_grid}theirs on "
                                    f"{STUDY_NOTES_V6_BLOCKS:,}) against v5"),
                       ("v8", "v7", "v8 (16-byte loads, one wave) against v7")):
        o, s = pair(a, b)
        lines.append(f"{what}, in bandwidth: ours {o}, their V100 {s}")
    for v in ("v0", "v2"):
        o = f"{100 * ours_gbps[v] / peak:.0f}%" if peak and v in ours_gbps else "-"
        lines.append(f"{v} as a share of the theoretical peak: ours {o}, "
                     f"their V100 {100 * their_gbps[v] / V100_PEAK_GBPS:.0f}%")
    text = "\n".join(lines)
    print(text)
    return text


def show_rung(res, version: str, against: str | None = None) -> str:
    """One rung's line from the ladder result ``res``: time, bandwidth, % of peak, speedup over
    v0 and over the rung ``against`` (by default the previous rung of the ladder; a section
    that changes another rung names it: v2 changes v1's addressing, not v1.5's), beside the
    study notes' V100 figures for the same rung."""
    validate.result(res, "res")
    validate.column(res, "version", "res column")
    rows = {r["version"]: r for r in res.rows}
    known = [v for v in LADDER if v in rows]
    for name, value in (("version", version), ("against", against)):
        if value is not None and value not in known:
            raise ValueError(f"{name}={value!r} is not a rung of this ladder result; "
                             f"choose one of {known}.")
    r = rows[version]
    i = LADDER.index(version)
    if against is None and i:
        against = LADDER[i - 1]
    prev = rows.get(against) if against not in (None, version, "v0") else None  # v0: above
    _v100_us, v100_gbps, v100_speedup = STUDY_NOTES_V100[version]
    text = (f"{version}: {r['ms'] * 1e3:,.0f} us, {r['gbps']:,.0f} GB/s "
            f"({r['pct_peak']:.0f}% of peak), {r['speedup_vs_v0']:.1f}x v0")
    if prev:
        text += f", {prev['ms'] / r['ms']:.2f}x {against}"
    text += f"   | study notes' V100: {v100_gbps:,.0f} GB/s, {v100_speedup:.2f}x v0"
    if not r.get("correct", True):
        text += "   | WRONG RESULT on this GPU"
    print(text)
    return text
