"""Chapter 4's readings of the profiled rooflines: each version at its FLOP per DRAM byte
(``dram_roofline_summary``, ``plot_dram_roofline``) and at its FLOP per byte of the SM's
L1/shared data pipe (``onchip_roofline_summary``, ``plot_onchip_roofline``), from the records
of ``profiling_matmul_roofline`` (measured in ``gpuperf.kernels.coarsening.profiling``, which
profiles chapter 5's ladder beside these) and ``profiling_onchip_roofs`` (``gpuperf.kernels.dram``).
Pure functions of the records: nothing here runs a kernel."""

from __future__ import annotations

import math

from gpuperf import records, validate
from gpuperf.kernels import dram as dram_chapter

ROOFLINE_CHAPTERS = {"tiling": "chapter 4's versions", "coarsening": "chapter 5's ladder"}


def _dram_roofline_arg(res, chapter: str = "tiling"):
    """``res`` with the rows of ``chapter`` only ("tiling": chapter 4's; "coarsening": chapter
    5's ladder beyond them; a record made before chapter 5's were added has no ``chapter``
    column: all its rows are chapter 4's)."""
    if not isinstance(res, records.Result) or res.name != "profiling_matmul_roofline":
        raise TypeError(f"res: give gp.records.run(\"profiling_matmul_roofline\"), not "
                        f"{getattr(res, 'name', type(res).__name__)!r}.")
    validate.choice(chapter, "chapter", tuple(ROOFLINE_CHAPTERS))
    rows = [r for r in res.rows if r.get("chapter", "tiling") == chapter]
    if not rows:
        raise ValueError(f"res has no row of {ROOFLINE_CHAPTERS[chapter]}: record "
                         "profiling_matmul_roofline again.")
    return records.Result(res.name, rows, res.meta, res.source)


def dram_roofline_summary(res) -> list[str]:
    """One line per version of ``profiling_matmul_roofline``: the DRAM bytes it moved as a
    fraction of the no-cache model's, its measured intensity, and its rate as a % of the lower
    roof at that intensity; then the roofs. Printed and returned."""
    res = _dram_roofline_arg(res)
    copy = res.ceilings["copy_gbps"]
    lines = []
    for r in res.rows:
        seconds = 2 * r["n"] ** 3 / (r["tflops"] * 1e12)

        def rate(nbytes, seconds=seconds):
            return nbytes / seconds / 1e9

        lines.append(f"{r['version']} DRAM moved {r['dram_bytes'] / 1e9:.2f} GB, "
                     f"{r['dram_bytes'] / r['model_bytes']:.1%} of the model's "
                     f"{r['model_bytes'] / 1e9:.1f} GB: {r['ai_measured']:.1f} FLOP/B "
                     f"(model {r['ai_model']:.2f}); {r['tflops']:.2f} TFLOP/s, "
                     f"{r['pct_of_roof']:.1f}% of its roof"
                     + (f"; L2 {rate(r['l2_bytes']):.0f} GB/s, L1 {rate(r['l1_bytes']):.0f} GB/s"
                        if r.get("l2_bytes") else ""))
    first = res.rows[0]
    peak = first.get("fp32_peak_tflops")
    roofs = f"Roofs: the copy bandwidth {copy:,.0f} GB/s"
    roofs += (f" and the FP32 peak {peak:.1f} TFLOP/s at the SMs' maximum clock "
              f"({first['sm_clock_khz'] / 1e3:.0f} MHz; an upper bound: under load the clock "
              "can be lower)" if peak else
              " (no FP32 peak: this GPU's lanes or clock are unknown; the plot's compute roof "
              "is cuBLAS's rate)")
    if first.get("cublas_tflops"):
        roofs += f"; cuBLAS reached {first['cublas_tflops']:.1f} TFLOP/s in the same run"
    lines.append(roofs + ".")
    for line in lines:
        print(line)
    return lines


def plot_dram_roofline(res, *, title: str = "Chapter 4's matmuls: intensity from measured "
                                            "DRAM bytes"):
    """``profiling_matmul_roofline`` on its GPU's roofline: measured intensity against the
    timed rate, under the copy bandwidth and the theoretical FP32 peak."""
    from gpuperf import plots

    res = _dram_roofline_arg(res)
    validate.string(title, "title")
    peak = res.rows[0].get("fp32_peak_tflops") or res.rows[0].get("cublas_tflops")
    points = [{"name": r["version"], "intensity": r["ai_measured"], "tflops": r["tflops"]}
              for r in res.rows]
    return plots.roofline(points, bw_gbps=res.ceilings["copy_gbps"], peak_tflops=peak,
                          label=res.label, title=title, xlim=(1 / 2, 64))


def _onchip_roofline_args(dram, onchip, chapter: str = "tiling"):
    """``chapter``'s rows of ``profiling_matmul_roofline`` with the data pipe's bytes, and the
    SM's read roof of the same GPU."""
    dram = _dram_roofline_arg(dram, chapter)
    roof = dram_chapter.onchip_roof_gbps(onchip)
    if dram.meta.get("gpu") is None or dram.gpu != onchip.gpu:
        raise ValueError(f"dram was recorded on {dram.gpu} and onchip on {onchip.gpu}: a "
                         "roofline takes its points and roofs from one GPU. Pass records of "
                         "the same GPU.")
    if any(not r.get("pipe_bytes") for r in dram.rows):
        raise ValueError(f"this record of profiling_matmul_roofline ({dram.label}) has no "
                         "pipe_bytes (the L1/shared data pipe's wavefronts): record it again "
                         "with python -m gpuperf.record --only profiling_matmul_roofline.")
    return dram, roof


BOUND_PCT = 85   # a kernel at this share of a roof or more is said to be bound by it


ALIKE_RATIO = 1.1   # two roofs whose shares are within this ratio are both named


def _dram_side_roof(r: dict) -> str:
    """The roof ``pct_of_roof`` is a share of: the DRAM roof left of the ridge, the FP32 peak
    right of it."""
    return ("the FP32 peak" if r.get("fp32_peak_tflops")
            and r["memory_roof_tflops"] > r["fp32_peak_tflops"] else "the DRAM roof")


def _nearest_roof(r: dict, roof_gbps: float) -> tuple[float, float, str]:
    """A row's rate as a % of its DRAM-or-FP32 roof and of the SM's read roof (at its FLOP per
    data-pipe byte), and which roof it is nearer to ("nearer the DRAM roof"; "as near the SM's
    read roof as the FP32 peak" where the larger share is less than ``ALIKE_RATIO`` times the
    smaller)."""
    flops = 2 * r["n"] ** 3
    onchip_bound = roof_gbps * (flops / r["pipe_bytes"]) / 1e3
    pct_onchip = 100 * r["tflops"] / onchip_bound
    other = _dram_side_roof(r)
    if max(pct_onchip, r["pct_of_roof"]) < ALIKE_RATIO * min(pct_onchip, r["pct_of_roof"]):
        # two roofs that cross at this point's rate: neither is the nearer one
        return r["pct_of_roof"], pct_onchip, f"as near the SM's read roof as {other}"
    nearer = "the SM's read roof" if pct_onchip > r["pct_of_roof"] else other
    return r["pct_of_roof"], pct_onchip, f"nearer {nearer}"


def onchip_roofline_summary(dram, onchip, *, chapter: str = "tiling") -> list[str]:
    """One line per version of ``chapter`` ("tiling": chapter 4; "coarsening": chapter 5's
    ladder) in ``profiling_matmul_roofline`` (``dram``): its FLOP per byte DRAM moved and per
    byte the L1/shared data pipe processed (its wavefronts x 128 bytes), its rate as a % of
    the roof at each, the roof it is nearer to, and (where it uses shared memory) the
    shared-memory wavefronts per warp-level multiply-add; then the roofs (the SM's read roof
    from ``profiling_onchip_roofs``, ``onchip``) and which versions are at 85% or more of one.
    Printed and returned."""
    dram, roof = _onchip_roofline_args(dram, onchip, chapter)
    lines, bound, free = [], [], []
    for r in dram.rows:
        flops = 2 * r["n"] ** 3
        pct_dram, pct_onchip, nearer = _nearest_roof(r, roof)
        if max(pct_dram, pct_onchip) >= BOUND_PCT:
            bound.append(f"{r['version']} ({nearer})")
        else:
            free.append(r["version"])
        lines.append(f"{r['version']} {r['tflops']:.2f} TFLOP/s; DRAM {flops / r['dram_bytes']:.1f} "
                     f"FLOP/B, {pct_dram:.1f}% of {_dram_side_roof(r)}; data pipe "
                     f"{flops / r['pipe_bytes']:.2f} FLOP/B, {pct_onchip:.1f}% of the SM's "
                     f"read roof: {nearer}"
                     + (f"; {r['shared_pipe_bytes'] / dram_chapter.BANK_BYTES_PER_CLOCK / (r['n'] ** 3 / 32):.2f} "
                        "shared wavefronts per warp multiply-add"
                        if r.get("shared_bytes") and r.get("shared_pipe_bytes") is not None
                        else ""))
    wide = dram_chapter.onchip_reads(onchip)
    fastest = max(r["gbps"] for r in wide)
    lines.append(f"Roofs: the SM's read roof {roof:,.0f} GB/s ("
                 + (f"128 bytes per clock per SM at the maximum clock; a 16-byte read reached "
                    f"{100 * fastest / roof:.0f}% of it" if wide[0].get("bank_roof_gbps") else
                    "the faster 16-byte read: this GPU's clock is unknown")
                 + f"); the copy bandwidth {dram.ceilings['copy_gbps']:,.0f} GB/s; "
                 + (f"the FP32 peak {dram.rows[0]['fp32_peak_tflops']:.1f} TFLOP/s"
                    if dram.rows[0].get("fp32_peak_tflops") else "no FP32 peak for this GPU")
                 + f" ({dram.label}).")
    lines.append(f"At {BOUND_PCT}% or more of a roof: {', '.join(bound) or 'none'}. Below "
                 f"{BOUND_PCT}% of every roof: {', '.join(free) or 'none'}.")
    for line in lines:
        print(line)
    return lines


def plot_onchip_roofline(dram, onchip, *, chapter: str = "tiling", title: str | None = None):
    """``chapter``'s versions (as in ``onchip_roofline_summary``) twice on one roofline: at
    their FLOP per DRAM byte (filled, under the copy bandwidth) and at their FLOP per byte of
    the L1/shared data pipe (open, under the SM's read roof from ``profiling_onchip_roofs``),
    joined at their measured rate."""
    from gpuperf import plots

    dram, roof = _onchip_roofline_args(dram, onchip, chapter)
    if title is None:
        title = (f"{ROOFLINE_CHAPTERS[chapter][0].upper()}{ROOFLINE_CHAPTERS[chapter][1:]} "
                 "against DRAM and the SM's read roof")
    validate.string(title, "title")
    peak = dram.rows[0].get("fp32_peak_tflops") or dram.rows[0].get("cublas_tflops")
    flops = {r["version"]: 2 * r["n"] ** 3 for r in dram.rows}
    points = [{"name": r["version"], "intensity": r["ai_measured"], "tflops": r["tflops"]}
              for r in dram.rows]
    pipe = [{"name": r["version"], "intensity": flops[r["version"]] / r["pipe_bytes"],
             "tflops": r["tflops"]} for r in dram.rows]
    every = [p["intensity"] for p in points + pipe]
    # whole powers of two around every point, at least 1/64 to 64 FLOP/B
    xlim = (2.0 ** min(-6, math.floor(math.log2(min(every))) - 1),
            2.0 ** max(6, math.ceil(math.log2(max(every))) + 1))
    return plots.roofline(
        points, bw_gbps=dram.ceilings["copy_gbps"], peak_tflops=peak, label=dram.label,
        title=title, xlim=xlim,
        more_roofs=[("the SM's read roof (shared memory and L1, 128 B per clock per SM)", roof,
                     "GB/s")],
        second_intensity=("FLOP per byte of the L1/shared data pipe (wavefronts x 128 B)",
                          pipe))
