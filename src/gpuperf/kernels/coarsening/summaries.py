"""The chapter's readings of its experiments, printed from their rows: occupancy limits,
the vector add, the register-tiling sweeps, the unrolling and fast-path results, and the
table of every tuned configuration (``tuning_table``, ``show_tuning``)."""

from __future__ import annotations

import math

from gpuperf import validate
from gpuperf.kernels import matmul as mm

from .experiments import DOUBLE_CONFIGS, FAST_PARTS, NO_EDGE


def _share_recovered(capped: dict, rows: dict, warp: dict) -> str:
    # what the cap won back, as a share of what the uncapped warp tiles lost to block rows
    lost = rows["tflops"] - warp["tflops"]
    if lost <= 0:
        return ""
    return f" (recovers {100 * (capped['tflops'] - warp['tflops']) / lost:.0f}% of the gap)"


def unroll_summary(res) -> str:
    """What two k steps per loop body and warp tiles each change, per k-tile depth."""
    validate.result(res, "res")
    for c in ("version", "bk", "layout", "k_steps", "tflops", "spread", "regs", "blocks_per_sm"):
        validate.column(res, c, "res column")
    rows = [r for r in res.rows if r.get("layout") and r.get("tflops")]
    if not rows:
        raise ValueError(f"res ({res.label}) has no rows of the double-buffered kernel; pass "
                         "records.run('matmul_unroll').")
    by = {(r["bk"], r["layout"], r["k_steps"]): r for r in rows if not r.get("cap")}
    lines = []
    for bk in sorted({r["bk"] for r in rows}):
        for layout in ("block rows", "warp tiles"):
            one, two = by.get((bk, layout, 1)), by.get((bk, layout, 2))
            if one and two:
                lines.append(
                    f"BK = {bk}, {layout}: one k step per loop body {one['tflops']:.1f} TFLOP/s "
                    f"({one['regs']} regs, {one.get('sass_ffma') or '?'} FFMA), two steps "
                    f"{two['tflops']:.1f} ({two['regs']} regs, {two.get('sass_ffma') or '?'} "
                    f"FFMA): {100 * (two['tflops'] / one['tflops'] - 1):+.1f}%")
        for ks in (1, 2):
            rr, ww = by.get((bk, "block rows", ks)), by.get((bk, "warp tiles", ks))
            if rr and ww:
                noise = 100 * max(rr["spread"], ww["spread"])
                lines.append(f"BK = {bk}, {ks} k step(s): warp tiles against block rows "
                             f"{100 * (ww['tflops'] / rr['tflops'] - 1):+.1f}% ({ww['regs']} "
                             f"against {rr['regs']} registers, {ww['blocks_per_sm']} against "
                             f"{rr['blocks_per_sm']} block(s)/SM; spread within the run up to "
                             f"{noise:.2f}%)")
    capped = [r for r in rows if r.get("cap")]
    for r in capped:  # the ablation: the warp-tiled kernel given its second block back
        rr, ww = by.get((r["bk"], "block rows", r["k_steps"])), by.get((r["bk"], r["layout"],
                                                                       r["k_steps"]))
        if rr and ww:
            lines.append(f"BK = {r['bk']}, {r['k_steps']} k step(s), {r['layout']} capped at "
                         f"{r['cap']} registers: {r['tflops']:.1f} TFLOP/s ({r['regs']} regs, "
                         f"{r['blocks_per_sm']} block(s)/SM, {r.get('local_bytes', '?')} B "
                         f"local): {100 * (r['tflops'] / rr['tflops'] - 1):+.1f}% against block "
                         f"rows, {100 * (r['tflops'] / ww['tflops'] - 1):+.1f}% against the "
                         f"uncapped warp tiles{_share_recovered(r, rr, ww)}; spread within the "
                         f"run up to {100 * max(r['spread'], rr['spread']):.2f}%")
    if not capped:
        lines.append("(this record has no warp-tiled kernel with a register cap: the ablation "
                     "that gives it its second block back)")
    best = max(rows, key=lambda r: r["tflops"])
    cub = next((r for r in res.rows if r.get("version") == mm.CUBLAS and r.get("tflops")), None)
    share = (f" = {100 * best['tflops'] / cub['tflops']:.0f}% of this run's cuBLAS row "
             f"({cub['tflops']:.1f} TFLOP/s; the table's column divides by the ceiling)" if cub else "")
    lines.append(f"fastest: {best['version']}: {best['tflops']:.1f} TFLOP/s{share}, "
                 f"{best['blocks_per_sm']} block(s)/SM")
    lines.append(f"({res.label})")
    text = "\n".join(lines)
    print(text)
    return text


def fast_path_summary(res) -> str:
    """What ``matmul_fast_path`` shows: at 4096, each kernel's share of cuBLAS, registers and
    inner loop; then, per size, the any-size call against chapter 5's kernel."""
    validate.result(res, "res")
    for c in ("version", "n", "tflops"):
        validate.column(res, c, "res column")
    by = {(r["version"], r["n"]): r for r in res.rows}
    need = [("chapter 5's kernel", 4096), ("fast path only, uint32", 4096), ("any size", 4096)]
    missing = [f"{v!r} at {n}" for v, n in need if (v, n) not in by]
    if missing:
        raise ValueError(f"res has no {', '.join(missing)} row: pass the result of "
                         "gp.records.run('matmul_fast_path').")
    lines = []
    labels = ("chapter 5's kernel", NO_EDGE, "fast path only, int64", "fast path only, uint32",
              "any size")
    for label in labels:
        r = by.get((label, 4096))
        if r is None:
            continue
        pct = f" = {r['pct_cublas']:.1f}% of cuBLAS" if r.get("pct_cublas") else ""
        loop = (f"; inner loop {r['loop_inst']} instructions per pass, {r['loop_ffma']} of them "
                f"FFMAs ({100 * r['loop_ffma'] / r['loop_inst']:.0f}%)"
                if r.get("loop_inst") else "")
        lines.append(f"4096^3 {label}: {r['tflops']:.2f} TFLOP/s{pct}; {r.get('regs')} "
                     f"registers{loop}")
    # Two k steps of an 8x8 thread tile: 128 FFMAs. Another count means the loop found is not
    # the inner loop (another GPU's compiler may lay it out differently).
    odd = [label for label in labels if by.get((label, 4096), {}).get("loop_ffma") not in (None, 128)]
    if odd:
        lines.append(f"the loop counted for {', '.join(odd)} does not hold the 128 FFMAs of two k steps: "
                     "this GPU's compiler laid the inner loop out differently, and its loop_inst "
                     "does not compare with the others'")
    fast, ch5 = by.get(("fast path only, int64", 4096)), by["chapter 5's kernel", 4096]
    if fast is None:
        lines.append("no 'fast path only, int64' row at 4096: no loop or ablation comparison "
                     "with chapter 5's kernel (both need its index type)")
    if fast and fast.get("loop_inst") and ch5.get("loop_inst"):  # the same index type as ch. 5's
        lines.append(f"chapter 5's inner loop has {100 * (ch5['loop_inst'] / fast['loop_inst'] - 1):.1f}% "
                     "more instructions than the fast path's; the fast path alone (int64) is "
                     f"{100 * (fast['tflops'] / ch5['tflops'] - 1):.1f}% faster")
    bare = by.get((NO_EDGE, 4096))
    if fast and bare:  # the ablation: the edge path out, nothing else
        gap = fast["tflops"] - ch5["tflops"]
        spread = max(r.get("spread") or 0 for r in (ch5, bare)) * ch5["tflops"]
        share = (f", {100 * (bare['tflops'] - ch5['tflops']) / gap:.0f}% of the fast path's gain"
                 if gap > 0 else "")
        loop = (f"; inner loop {ch5['loop_inst']} -> {bare['loop_inst']} instructions (the fast "
                f"path's: {fast['loop_inst']})" if bare.get("loop_inst") and ch5.get("loop_inst")
                and fast.get("loop_inst") else "")
        moved = abs(bare["tflops"] - ch5["tflops"]) > spread
        lines.append(f"the edge path alone compiled out of chapter 5's kernel: "
                     f"{100 * (bare['tflops'] / ch5['tflops'] - 1):+.1f}% speed{share}{loop}; "
                     + ("beyond" if moved else "within") + " the spread of the two rows "
                     f"({spread:.2f} TFLOP/s)")
    for n in sorted({r["n"] for r in res.rows if r["n"] != 4096}):
        whole, ch5 = by.get(("any size", n)), by.get(("chapter 5's kernel", n))
        if whole and ch5:
            cub = by.get((mm.CUBLAS, n))
            padded = f" (K and N padded to {-(-n // 4) * 4})" if n % 4 else ""
            lines.append(f"{n}^3: any size{padded} {whole['tflops']:.2f} TFLOP/s, chapter 5's kernel "
                         f"{ch5['tflops']:.2f}: {100 * whole['tflops'] / ch5['tflops']:.0f}% of it"
                         + (f" (cuBLAS {cub['tflops']:.2f} TFLOP/s at this size)" if cub else ""))
    for n in sorted({r["n"] for r in res.rows}):  # records made before these rows lack them
        call, inner, strips = [by.get((p, n)) for p in FAST_PARTS]
        if call and inner and strips and strips["ms"] > 0:
            margin = max(r["spread"] * r["ms"] for r in (call, inner, strips))
            verdict = ("the strips ran wholly beside the interior" if call["ms"] <= inner["ms"] + margin
                       else "no overlap beyond the spread (the strips may have run after the interior)"
                       if call["ms"] >= inner["ms"] + strips["ms"] - margin
                       else "the strips ran partly beside the interior, partly after it")
            lines.append(f"{n}^3: the call takes {call['ms']:.3f} ms, its interior alone "
                         f"{inner['ms']:.3f} and its strips alone {strips['ms']:.3f}: the call "
                         f"adds {100 * (call['ms'] - inner['ms']) / strips['ms']:.0f}% of the "
                         "strips' time to the interior's (100% would be strips after the "
                         f"interior, 0% strips wholly beside it; spread within the run up to "
                         f"{margin:.3f} ms): {verdict}")
    # records made before these columns lack them
    for label, covers in (("chapter 5's kernel", "over all of C"),
                          ("any size", "the fast kernel's, over the interior")):
        grids = [by[label, n] for n in sorted({r["n"] for r in res.rows})
                 if (label, n) in by and by[label, n].get("waves")]
        if grids:
            lines.append(f"{label}'s grid ({covers}): " + "; ".join(
                f"{r['n']}: {r['grid_blocks']} blocks, {r['waves']:.2f} waves of "
                f"{r['blocks_per_sm']} per SM ({math.ceil(r['waves'] - 1e-9)} rounds)"
                for r in grids))
    lines.append(f"({res.label})")
    text = "\n".join(lines)
    print(text)
    return text


def occupancy_limits(res, tile: int = 32, n: int = 4096) -> str:
    """Why coarsening can cost occupancy, printed from the sweep and the GPU's facts.

    The SM's thread and register limits (of the GPU behind ``res``), how many registers per
    thread let two ``tile`` x ``tile`` blocks fit, and, for every factor at size ``n``: the
    registers the compiler chose, the blocks per SM, the occupancy and the speed against
    factor 1.
    """
    from gpuperf import device

    validate.result(res, "res")
    tile = validate.integer(tile, "tile", minimum=1, maximum=32)
    n = validate.integer(n, "n", minimum=1)
    for c in ("tile", "n", "factor"):
        validate.column(res, c, "res column")
    facts, where = device.facts(res)
    threads = tile * tile
    lines = []
    max_threads, regs_sm = facts.get("max_threads_per_sm"), facts.get("registers_per_sm")
    if max_threads and regs_sm:
        by_threads = max_threads // threads
        line = (f"{where[0].upper()}{where[1:]}: {max_threads} threads and {regs_sm:,} registers "
                f"per SM, so at most {by_threads} block(s) of {threads} threads fit by threads")
        if by_threads >= 2:
            line += f"; two fit only with at most {regs_sm // (2 * threads)} registers per thread."
        else:
            line += "; one block fills the SM's threads whatever its registers."
        lines.append(line)
    rows = sorted(res.select(tile=tile, n=n), key=lambda r: r["factor"])
    base = next((r for r in rows if r["factor"] == 1), None)
    for r in rows:
        gain = f", {r['tflops'] / base['tflops']:.2f}x factor 1" if base else ""
        lines.append(f"  tile {tile}, factor {r['factor']:2d}, n={n}: {r['regs']} registers, "
                     f"{r['blocks_per_sm']} block(s)/SM, occupancy {r['occupancy']:.0%}: "
                     f"{r['tflops']:.2f} TFLOP/s{gain}")
    if base and rows:
        best = max(rows, key=lambda r: r["tflops"])
        lines.append(f"best factor {best['factor']}: {100 * (best['tflops'] / base['tflops'] - 1):+.0f}% "
                     f"against no coarsening ({res.label})")
    text = "\n".join(lines)
    print(text)
    return text


def vecadd_summary(res) -> str:
    """How far apart the coarsening factors of the vector add are, and how close to the copy."""
    validate.result(res, "res")
    for c in ("factor", "gbps", "pct_copy"):
        validate.column(res, c, "res column")
    rows = [r for r in res.rows if r.get("gbps")]
    lo, hi = min(rows, key=lambda r: r["gbps"]), max(rows, key=lambda r: r["gbps"])
    text = (f"vector add: factors {', '.join(str(r['factor']) for r in rows)} span "
            f"{lo['gbps']:,.0f} to {hi['gbps']:,.0f} GB/s (the fastest {100 * (hi['gbps'] / lo['gbps'] - 1):.0f}% "
            f"above the slowest), {lo['pct_copy']:.0f}% to {hi['pct_copy']:.0f}% of the "
            f"device-to-device copy ({res.label})")
    print(text)
    return text


def regtile_summary(res) -> str:
    """The resources of the fastest register-tiled kernels, printed from the sweep."""
    validate.result(res, "res")
    for c in ("kind", "bm", "bn", "bk", "tile", "tflops"):
        validate.column(res, c, "res column")
    rows = sorted((r for r in res.rows if r.get("tflops")), key=lambda r: -r["tflops"])
    top = rows[:3]
    lines = []
    for r in top:
        tm, tn = (int(v) for v in str(r["tile"]).split("x"))
        threads = r["bm"] * r["bn"] // (tm * tn)
        lines.append(f"{r['kind']} {r['bm']}x{r['bn']}x{r['bk']} {r['tile']}: {r['tflops']:.1f} TFLOP/s, "
                     f"{r['regs']} registers per thread, {r['blocks_per_sm']} block(s) of {threads} "
                     f"threads per SM, occupancy {r['occupancy']:.1%}")
    lines.append(f"({res.label})")
    text = "\n".join(lines)
    print(text)
    return text


def cap_summary(res) -> str:
    """Each factor with and without the register cap, and the best against the tiled kernel."""
    validate.result(res, "res")
    for c in ("factor", "cap", "tflops", "regs", "blocks_per_sm", "local_bytes"):
        validate.column(res, c, "res column")
    by = {(r["factor"], r["cap"]): r for r in res.rows if r.get("tflops")}
    lines = []
    for f in sorted({f for f, _ in by}):
        free = by.get((f, 0))
        capped = [r for (ff, cap), r in sorted(by.items()) if ff == f and cap]
        if not free or not capped:
            continue
        c = capped[0]
        lines.append(f"factor {f}: {free['tflops']:.2f} -> {c['tflops']:.2f} TFLOP/s with a cap of "
                     f"{c['cap']} registers ({free['regs']} -> {c['regs']} registers, "
                     f"{free['blocks_per_sm']} -> {c['blocks_per_sm']} blocks/SM, "
                     f"{c['local_bytes']} B of local memory per thread)")
    base = by.get((1, 0))
    best = max(by.values(), key=lambda r: r["tflops"])
    if base:
        cap = f"capped at {best['cap']}" if best["cap"] else "no cap"
        lines.append(f"best: factor {best['factor']}, {cap}: {best['tflops']:.2f} TFLOP/s, "
                     f"{best['tflops'] / base['tflops'] - 1:+.0%} over the tiled kernel "
                     "(factor 1, no cap)")
    lines.append(f"({res.label})")
    text = "\n".join(lines)
    print(text)
    return text


def double_buffer_summary(res) -> str:
    """Pipelined -> double-buffered -> capped, per k-tile depth, and the k loop in the SASS."""
    validate.result(res, "res")
    for c in ("kind", "bk", "tile", "cap", "tflops", "regs", "blocks_per_sm", "local_bytes",
              "sass_ffma"):
        validate.column(res, c, "res column")
    lines = []
    for bk in sorted({r["bk"] for r in res.rows}):
        steps = []
        for kind, cap in (("pipelined", 0), ("pipelined", 128), ("double-buffered", 0),
                          ("double-buffered", 128)):
            r = next((r for r in res.rows if r["bk"] == bk and r["kind"] == kind
                      and r["cap"] == cap and r.get("tflops")), None)
            if r is None:
                continue
            name = kind + (f", cap {cap}" if cap else "")
            steps.append(f"{name} {r['tflops']:.1f} ({r['regs']} regs, {r['blocks_per_sm']} "
                         f"block(s)/SM, {r['local_bytes']} B local)")
        lines.append(f"BK = {bk}: " + "; ".join(steps))
    best = max((r for r in res.rows if r.get("tflops")), key=lambda r: r["tflops"])
    # No "% of cuBLAS" here: this experiment measures no cuBLAS of its own, and the ceiling
    # measured when the record started differs from the ladder's own cuBLAS row.
    lines.append(f"best: {best['kind']} BK = {best['bk']}"
                 + (f", cap {best['cap']}" if best["cap"] else "")
                 + f": {best['tflops']:.1f} TFLOP/s")
    for r in res.rows:
        if r["kind"] == "double-buffered" and r["cap"] == 0 and r.get("sass_ffma"):
            tm, tn = (int(v) for v in str(r["tile"]).split("x"))
            lines.append(f"BK = {r['bk']}, double-buffered: {r['sass_ffma']} FFMA instructions in "
                         f"the compiled kernel = {r['sass_ffma'] / (tm * tn):g} copies of one k "
                         f"step's {tm * tn} (the k loop runs {r['bk']} steps per tile)")
    lines.append(f"({res.label})")
    text = "\n".join(lines)
    print(text)
    return text


def regtile_1d_summary(res) -> str:
    """Each 1-D register-blocked kernel against the tiled kernel of the same run."""
    validate.result(res, "res")
    for c in ("version", "tm", "tflops", "fma_per_shared_load", "regs", "blocks_per_sm"):
        validate.column(res, c, "res column")
    rows = [r for r in res.rows if r.get("tflops")]
    base = next((r for r in rows if r["version"].startswith("tiled")), None)
    lines = []
    for r in rows:
        vs = f", {r['tflops'] / base['tflops']:.2f}x the tiled kernel" if base and r is not base else ""
        lines.append(f"{r['version']}: {r['tflops']:.2f} TFLOP/s, {r['fma_per_shared_load']:.2f} "
                     f"multiply-adds per value read from shared memory (the source's count), {r['regs']} registers, "
                     f"{r['blocks_per_sm']} block(s)/SM{vs}")
    lines.append(f"({res.label})")
    text = "\n".join(lines)
    print(text)
    return text


def _config_label(r: dict) -> str:
    bm, bn = r.get("bm"), r.get("bn")
    if bm is None:  # matmul_double_buffer's rows name the depth and thread tile only
        tm, tn = (int(v) for v in str(r.get("tile", "8x8")).split("x"))
        bm, bn = next(((c[0], c[1]) for c in DOUBLE_CONFIGS
                       if (c[2], c[3], c[4]) == (r["bk"], tm, tn)), ("?", "?"))
    cap = f", cap {r['cap']}" if r.get("cap") else ""
    return f"{r['kind']} {bm}x{bn}x{r['bk']} {r.get('tile', '')}{cap}"


def tuning_table(*results) -> list[dict]:
    """Every configuration measured by the register-tiling experiments
    (``matmul_regtile_sweep``, ``matmul_double_buffer``), fastest first, with the run it
    comes from, its gap to the best and whether it ties with it: a tie when the gap is
    within the two measurements' spreads (interquartile ranges over the median) added."""
    if not results:
        raise TypeError("tuning_table needs at least one result (gp.records.run("
                        "'matmul_regtile_sweep') or 'matmul_double_buffer').")
    rows = []
    for i, res in enumerate(results):
        validate.result(res, f"results[{i}]")
        for c in ("kind", "bk", "tflops", "spread"):
            validate.column(res, c, f"results[{i}] column")
        rows += [{"config": _config_label(r), "run": res.name, "tflops": r["tflops"],
                  "spread": r["spread"], "regs": r.get("regs"),
                  "blocks_per_sm": r.get("blocks_per_sm")} for r in res.rows if r.get("tflops")]
    rows.sort(key=lambda r: -r["tflops"])
    best = rows[0]
    for rank, r in enumerate(rows, 1):
        gap = 1 - r["tflops"] / best["tflops"]
        r.update(rank=rank, gap_pct=100 * gap, tie=gap <= r["spread"] + best["spread"])
    return rows


# The register-tiling experiments, as the tuning table names them.
_RUN_WORDS = {"matmul_regtile_sweep": "register-tiling sweep",
              "matmul_double_buffer": "double buffering"}


def show_tuning(*results, top: int = 8) -> list[dict]:
    """Show the ``top`` rows of :func:`tuning_table`, how many tie with the best, and how far
    apart the configurations measured in two runs came out; return the whole table."""
    from gpuperf.records import Result

    validate.positive_int(top, "top")
    table = tuning_table(*results)
    ties = [r["config"] for r in table if r["tie"]]
    runs: dict[str, list[dict]] = {}
    for r in table:
        runs.setdefault(r["config"], []).append(r)
    twice = [(c, rs) for c, rs in runs.items() if len({r["run"] for r in rs}) > 1]
    note = (f"{len(table)} measurements; {len(ties)} within the noise of the best "
            f"({', '.join(ties)}).")
    if twice:
        worst = max(twice, key=lambda cr: max(r["tflops"] for r in cr[1]) /
                    min(r["tflops"] for r in cr[1]))
        hi, lo = max(r["tflops"] for r in worst[1]), min(r["tflops"] for r in worst[1])
        inside = max(r["spread"] for r in worst[1])
        note += (f" {len(twice)} configurations were measured in both runs; the furthest apart, "
                 f"{worst[0]}, gave {hi:.2f} and {lo:.2f} TFLOP/s ({100 * (hi / lo - 1):.1f}% "
                 f"apart, against a spread of at most {100 * inside:.1f}% in those two measurements).")
    note += " Runs: " + "; ".join(f"{_RUN_WORDS.get(res.name, res.name)}, {res.label}"
                                  for res in results) + "."
    first = results[0]
    shown = [dict(r, run=_RUN_WORDS.get(r["run"], r["run"]), tie="yes" if r["tie"] else "no")
             for r in table[:top]]
    Result("register-tiling configurations, fastest first", shown, first.meta,
           first.source).show(["rank", "config", "run", "tflops", "spread", "gap_pct", "tie",
                               "regs", "blocks_per_sm"], note=note,
                              headers={"config": "configuration", "run": "experiment",
                                       "tflops": "TFLOP/s", "spread": "spread within the run (%)",
                                       "gap_pct": "behind the best (%)",
                                       "tie": "within the noise of the best",
                                       "regs": "registers per thread",
                                       "blocks_per_sm": "blocks per SM"})
    return table
