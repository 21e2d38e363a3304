"""Readings of chapter 3's recorded experiments: the tables and sentences the chapter prints.

``latency_levels``, ``latency_index_summary``: the latency plateaus and the signed index's cost.
``launch_in_timing``: what counting the host's launch work does to ``dram_littles_law``.
``loaded_latency_summary`` / ``show_loaded_latency`` / ``loaded_latency_reading`` /
``loaded_littles_law``: ``dram_loaded_latency`` read against Little's law.
``verify_prediction``, ``one_load_per_thread``, ``occupancy_summary``: prose helpers.
``copy_loaded_reading``: ``dram_loaded_latency_copy`` read against Little's law.
"""

from __future__ import annotations

import math

import numpy as np

from gpuperf import validate
from gpuperf.records import Result

from .experiments import STREAM_ELEMENTS, _check_res
from .kernels import FLOAT_BYTES
from .models import COPY_READ_SHARE, copy_latency_covered_ns


def latency_index_summary(res) -> str:
    """Per level: signed and unsigned time per step, and the gap between them as a share of the
    signed figure (the gap differs by level: it is not a fixed cost of the extra instructions)."""
    _check_res(res, "level", "signed_ns", "unsigned_ns")
    lines = []
    for r in res.rows:
        s, u = r["signed_ns"], r["unsigned_ns"]
        if not (s and u):
            continue
        lines.append(f"{r['level']}: {s:.1f} ns per step with int32 indices, {u:.1f} ns unsigned: "
                     f"the signed chase {'slower' if s >= u else 'faster'} by {abs(s - u):.1f} ns "
                     f"({abs(s - u) / s:.0%} of its figure)")
    lines.append(f"({res.label})")
    text = "\n".join(lines)
    print(text)
    return text


# The words the two loaded-latency tables show for their columns.
_LOADED_HEADERS_ALL = {
    "ilp": "loads per thread", "warps_per_sm": "warps per SM",
    "in_flight_kib": "allowed bytes in flight (KiB)", "gbps": "bandwidth (GB/s)",
    "loaded_ns": "loaded latency (ns)", "x_idle": "loaded over idle latency",
    "little_gbps": "Little's law at loaded latency (GB/s)",
    "measured_over_little": "measured over Little's law",
    "in_flight_pct": "share of allowed bytes in flight (%)", "covered": "probe covered",
    "loaded_gbps": "Little's law at loaded latency, capped at the copy ceiling (GB/s)",
    "predicted_gbps": "predicted from one warp's round, capped at the copy ceiling (GB/s)",
    "measured_over_predicted": "measured over predicted", "agrees": "agrees"}


def _headers(rows: list[dict]) -> dict:
    return {k: w for k, w in _LOADED_HEADERS_ALL.items() if rows and k in rows[0]}


def loaded_latency_summary(res) -> list[dict]:
    """``dram_loaded_latency`` per point: measured GB/s, latency idle and loaded, Little's law
    with the loaded latency (``little_gbps``, and ``measured_over_little``), and the bytes in
    flight the measurement implies as a share of those the loads allow (``in_flight_pct``)."""
    _check_res(res, "ilp", "warps_per_sm", "gbps", "loaded_ns", "little_gbps",
               "implied_in_flight", "bytes_in_flight")
    return [{"ilp": r["ilp"], "warps_per_sm": r["warps_per_sm"],
             "in_flight_kib": r["bytes_in_flight"] / 1024, "gbps": r["gbps"],
             "loaded_ns": r["loaded_ns"], "x_idle": r["loaded_ns"] / r["idle_ns"],
             "little_gbps": r["little_gbps"], "measured_over_little": r["gbps"] / r["little_gbps"],
             "in_flight_pct": 100 * r["implied_in_flight"] / r["bytes_in_flight"],
             "covered": r["covered"]} for r in res.rows]


def show_loaded_latency(res) -> list[dict]:
    """Show :func:`loaded_latency_summary` as a table; return its rows."""
    rows = loaded_latency_summary(res)
    print(f"On {res.gpu}: the probe alone takes {res.rows[0]['idle_ns']:.0f} ns per step; "
          "beside the bandwidth kernel:")
    Result("dram_loaded_latency (summary)", rows, res.meta, res.source).show(
        headers=_headers(rows),
        note="Loaded over idle latency: the probe's latency beside the load over its latency "
             "alone. Little's law at loaded latency: the allowed bytes in flight (SMs x resident "
             "warps x 32 x loads per thread x 4 B) / loaded latency. Share of allowed bytes in "
             "flight: measured GB/s x loaded latency, as a share of the allowed bytes. Probe "
             "covered: the probe ran inside the load in every run.")
    return rows


def loaded_latency_reading(res, little) -> str:
    """Two readings of ``dram_loaded_latency`` (``res``), printed and returned: how far the
    probe's latency rose at the highest bandwidth, and, per loads per thread, the share of the
    allowed bytes in flight at the lightest load against one load's latency over one warp's
    round of loads alone (``round_ns`` of ``dram_littles_law``, ``little``, same GPU)."""
    _check_res(res, "ilp", "gbps", "loaded_ns", "idle_ns", "implied_in_flight",
               "bytes_in_flight")
    _check_res(little, "ilp", "warps_per_sm", "round_ns")
    if little.gpu != res.gpu:
        raise ValueError(f"little was recorded on {little.gpu}, res on {res.gpu}: pass both "
                         "experiments of the same GPU.")
    top = max(res.rows, key=lambda r: r["gbps"])
    copy = res.ceilings.get("copy_gbps")
    share = f", {100 * top['gbps'] / copy:.0f}% of the device copy" if copy else ""
    lines = [f"the probe alone: {top['idle_ns']:.0f} ns per load; beside {top['gbps']:.0f} GB/s"
             f"{share}: {top['loaded_ns']:.0f} ns ({top['loaded_ns'] / top['idle_ns']:.1f}x)"]
    for ilp in sorted(res.values("ilp")):
        light = min(res.select(ilp=ilp), key=lambda r: r["gbps"])
        rounds = [r["round_ns"] for r in little.rows if r["ilp"] == ilp]
        pct = 100 * light["implied_in_flight"] / light["bytes_in_flight"]
        line = (f"{ilp} load{'s' if ilp > 1 else ''} per thread, lightest load: {pct:.0f}% "
                "of the allowed bytes in flight")
        if rounds:
            line += (f"; one load's latency over one warp's round alone: "
                     f"{100 * light['idle_ns'] / rounds[0]:.0f}%")
        lines.append(line)
    lines.append(f"({res.label})")
    text = "\n".join(lines)
    print(text)
    return text


def loaded_littles_law(res, little, *, within: float = 1.2) -> list[dict]:
    """Little's law at every point of ``dram_loaded_latency`` (``res``), with the latency
    measured under load, printed as a table and returned as rows.

    Two predictions, each capped at the device copy (``res.ceilings["copy_gbps"]``):

    * ``loaded_gbps``: the allowed bytes in flight over the probe's loaded latency, the
      textbook law with the loaded latency in it;
    * ``predicted_gbps``: the allowed bytes in flight over one warp's round of loads alone
      (``round_ns`` of ``dram_littles_law``, ``little``, same GPU, same loads per thread)
      stretched by the probe's loaded over idle latency. A thread waits for its whole batch
      of loads each round, so its round, not one load, is the time the law needs; under load
      every load of the batch waits longer, by the factor the probe measures.

    ``agrees``: the larger of ``predicted_gbps`` and the measured GB/s at most ``within``
    (1.2) times the smaller. A point of ``res`` with no round time for its loads per thread in
    ``little`` is refused.
    """
    _check_res(res, "ilp", "warps_per_sm", "gbps", "loaded_ns", "idle_ns", "bytes_in_flight")
    _check_res(little, "ilp", "round_ns")
    within = validate.number(within, "within", minimum=1.0, maximum=10.0)
    if little.gpu != res.gpu:
        raise ValueError(f"little was recorded on {little.gpu}, res on {res.gpu}: pass both "
                         "experiments of the same GPU.")
    rounds = {r["ilp"]: r["round_ns"] for r in little.rows}
    missing = sorted({r["ilp"] for r in res.rows} - set(rounds))
    if missing:
        raise ValueError(f"little has no round time for {missing} loads per thread: pass the "
                         "dram_littles_law record of the same GPU, which sweeps them.")
    copy = res.ceilings.get("copy_gbps") or math.inf
    out = []
    for r in sorted(res.rows, key=lambda r: (r["ilp"], r["warps_per_sm"])):
        stretch = r["loaded_ns"] / r["idle_ns"]
        predicted = min(r["bytes_in_flight"] / (rounds[r["ilp"]] * stretch), copy)
        out.append({"ilp": r["ilp"], "warps_per_sm": r["warps_per_sm"], "gbps": r["gbps"],
                    "x_idle": stretch,
                    "loaded_gbps": min(r["bytes_in_flight"] / r["loaded_ns"], copy),
                    "predicted_gbps": predicted, "measured_over_predicted": r["gbps"] / predicted,
                    "agrees": 1 / within <= predicted / r["gbps"] <= within})
    agree = sum(r["agrees"] for r in out)
    print(f"On {res.gpu}: {agree} of {len(out)} points agree with Little's law with the round "
          f"time stretched by the loaded latency (the larger at most {within:g} times the smaller)")
    Result("dram_loaded_latency (Little's law under load)", out, res.meta, res.source).show(
        headers=_headers(out),
        note="Little's law at loaded latency: min(allowed bytes in flight / probe's loaded "
             "latency, copy). Predicted: min(allowed bytes in flight / (one warp's round alone x "
             "loaded over idle latency), copy). Agrees: the larger of predicted and measured is at "
             f"most {within:g} times the smaller.")
    return out


def launch_in_timing(res) -> str:
    """What counting the host's launch work would do to ``dram_littles_law``: at its slowest
    and fastest points, the bandwidth timed with the launch left out (``gbps``) and with it
    inside the events (``gbps_launch_counted``). Prints and returns the lines."""
    _check_res(res, "ilp", "warps_per_sm", "gbps", "gbps_launch_counted")
    rows = sorted(res.rows, key=lambda r: r["gbps"])
    lines = []
    for r in (rows[0], rows[-1]):
        ms = STREAM_ELEMENTS * FLOAT_BYTES / (r["gbps"] * 1e6)
        lines.append(f"{r['warps_per_sm']} warps/SM x {r['ilp']} loads (a kernel of "
                     f"{ms:.2f} ms): {r['gbps']:.0f} GB/s with the launch left out, "
                     f"{r['gbps_launch_counted']:.0f} GB/s with it counted "
                     f"({r['gbps_launch_counted'] / r['gbps']:.2f}x)")
    lines.append(f"({res.label})")
    text = "\n".join(lines)
    print(text)
    return text


def latency_levels(res, order: str = "random") -> dict:
    """Typical latency (median of a plateau) at the smallest, a mid-L2 and the largest sizes."""
    _check_res(res, "order", "kib", "latency_ns")
    validate.choice(order, "order", res.values("order"))
    rows = sorted(res.select(order=order), key=lambda r: r["kib"])
    l2_kib = (res.meta.get("device") or {}).get("l2_bytes")
    l2_kib = l2_kib // 1024 if l2_kib else 50 * 1024
    small = [r["latency_ns"] for r in rows[:3]]
    mid = [r["latency_ns"] for r in rows if 2048 <= r["kib"] <= l2_kib // 4]
    big = [r["latency_ns"] for r in rows if r["kib"] >= 8 * l2_kib]
    med = lambda v: float(np.median(v)) if v else None  # noqa: E731
    return {"l1_ns": med(small), "l2_ns": med(mid), "dram_ns": med(big)}


def verify_prediction(loads: int, warps_per_sm: int, res=None) -> dict:
    """Look up the measured bandwidth at ``loads`` per thread and ``warps_per_sm`` warps/SM.

    Prints how close it comes to the best bandwidth measured, and what half as many loads
    reach. ``res`` defaults to ``records.run("dram_littles_law")`` (live on a GPU).
    """
    if res is not None:
        _check_res(res, "ilp", "warps_per_sm", "gbps")
    from gpuperf import records

    loads = validate.positive_int(loads, "loads")
    warps_per_sm = validate.positive_int(warps_per_sm, "warps_per_sm")
    res = res or records.run("dram_littles_law")
    rows = res.select(warps_per_sm=warps_per_sm)
    if not rows:
        raise ValueError(f"warps_per_sm={warps_per_sm} was not measured; choose one of "
                         f"{sorted(res.values('warps_per_sm'))}.")
    measured = sorted(r["ilp"] for r in rows)
    if loads > measured[-1]:
        raise ValueError(f"loads={loads} is above the most loads per thread measured "
                         f"({measured[-1]}); choose one of {measured}.")
    at = min(k for k in measured if k >= loads)
    plateau = max(r["gbps"] for r in res.rows)
    row = next(r for r in rows if r["ilp"] == at)
    below = [r for r in rows if r["ilp"] < at]
    half = max(below, key=lambda r: r["ilp"]) if below else None
    print(f"{warps_per_sm} warps/SM, {at} loads per thread"
          + (f" (the measured point at or above {loads})" if at != loads else "")
          + f": {row['gbps']:.0f} GB/s = {100 * row['gbps'] / plateau:.0f}% of the best "
          f"measured ({plateau:.0f} GB/s).")
    if half:
        print(f"  with {half['ilp']} loads per thread: {half['gbps']:.0f} GB/s = "
              f"{100 * half['gbps'] / plateau:.0f}%.")
    print(f"  ({res.label})")
    return {"ilp": at, "gbps": row["gbps"], "fraction": row["gbps"] / plateau,
            "fewer_fraction": half["gbps"] / plateau if half else None}


# --------------------------------------------------------------------------- prose helpers


def one_load_per_thread(res=None) -> str:
    """Little's law for a copy with one 4-byte load in flight per resident thread.

    From the device facts of the GPU behind ``res`` (``gp.device.facts``) and its measured copy
    ceiling: the bytes such a copy keeps in flight, and the longest load latency they can cover
    at the copy ceiling, whose reads are half its bytes (``copy_latency_covered_ns``). Prints the
    sentence and returns it.
    """
    from gpuperf import device

    if res is not None:
        validate.result(res, "res")
    values, where = device.facts(res)
    threads, sms = values.get("max_threads_per_sm"), values.get("sm_count")
    copy = (getattr(res, "ceilings", None) or {}).get("copy_gbps")
    if not (threads and sms):
        text = f"{where[0].upper()}{where[1:]}: the SM count and threads per SM are not known."
    else:
        per_sm = threads * FLOAT_BYTES
        total = per_sm * sms
        text = (f"{where[0].upper()}{where[1:]}: at most {threads} resident threads per SM x "
                f"{FLOAT_BYTES} bytes = {per_sm / 1024:.0f} KiB in flight per SM, "
                f"{total / 1e6:.2f} MB on {sms} SMs.")
        if copy:
            text += (f" The copy ceiling of {copy:,.0f} GB/s counts bytes read plus written; the "
                     f"loads carry the reads, {COPY_READ_SHARE * copy:,.0f} GB/s, so that many "
                     f"bytes cover a load latency of at most "
                     f"{copy_latency_covered_ns(total, copy):.0f} ns (bytes / (GB/s) = ns); a "
                     "load that takes longer leaves the copy short of the ceiling.")
    print(text)
    return text


def occupancy_summary(res) -> str:
    """What the occupancy experiment says, in three lines printed from its rows.

    The best copy with the fewest loads per thread; the lowest occupancy at which the most loads
    per thread do at least as well with the same block size (and, at that occupancy, a block size
    at which they do not); the best copy of all against the device-to-device copy.
    """
    _check_res(res, "ilp", "gbps", "occupancy", "block")
    ilps = sorted(res.values("ilp"))
    few, many = ilps[0], ilps[-1]
    gbps = lambda r: r["gbps"]  # noqa: E731
    base = max(res.select(ilp=few), key=gbps)
    lines = [f"{few} load(s) per thread: best {base['gbps']:,.0f} GB/s, at {base['occupancy']:.0f}% "
             f"occupancy (block {base['block']})."]
    # Compare at the block size of the best few-load copy: block size matters too.
    match = [r for r in res.select(ilp=many, block=base["block"]) if r["gbps"] >= base["gbps"]]
    if match:
        m = min(match, key=lambda r: (r["occupancy"], -r["gbps"]))
        line = (f"With blocks of {m['block']} threads, {many} loads per thread at "
                f"{m['occupancy']:.0f}% occupancy ({m['gbps']:,.0f} GB/s) beat {few} load(s) at "
                f"{base['occupancy']:.0f}% ({base['gbps']:,.0f} GB/s)")
        worse = [r for r in res.select(ilp=many) if r["occupancy"] == m["occupancy"]
                 and r["block"] != m["block"] and r["gbps"] < base["gbps"]]
        if worse:
            w = min(worse, key=gbps)
            line += (f"; with {w['block']}-thread blocks at {w['occupancy']:.0f}% they reach only "
                     f"{w['gbps']:,.0f} GB/s: at equal occupancy the block size counts too (below)")
        lines.append(line + ".")
    else:
        lines.append(f"{many} loads per thread never reach that with blocks of {base['block']} "
                     "threads, at any occupancy measured.")
    top = max(res.rows, key=gbps)
    lines.append(f"Best copy of all: {top['gbps']:,.0f} GB/s = {top['pct_copy']:.0f}% of the "
                 f"device-to-device copy ({top['ilp']} loads per thread, block {top['block']}, "
                 f"{top['occupancy']:.0f}% occupancy; {res.label}).")
    text = "\n".join(lines)
    print(text)
    return text


def strides_visible(res) -> dict:
    """Up to which stride ``dram_strides`` (``res``) tests what it means to test.

    The loads in flight at one moment are a window of consecutive chunks: blocks of 256 threads,
    at most 8 per SM (as the experiment launches them, fewer where the SM holds fewer threads),
    ``ilp`` chunks per warp. Chunk ``c`` sits in row ``c % rows``; while the window holds no more
    chunks than there are rows, every concurrent chunk is in a row of its own and concurrent
    addresses are one stride apart. With fewer rows (a large stride over the same 1 GiB) the
    window wraps into the next column: consecutive chunks of one row, contiguous runs, in flight
    together, and the experiment no longer sees the stride. The window is counted as if the
    registers let every block in, an upper bound, so the limit errs on the safe side. Returns
    ``chunks_in_flight`` and
    ``largest_stride_bytes``, the largest recorded stride whose rows hold the whole window
    (``None`` if no stride does).
    """
    _check_res(res, "stride_bytes", "rows", "ilp")
    facts = res.meta.get("device") or {}
    sms, threads = facts.get("sm_count"), facts.get("max_threads_per_sm")
    if not (sms and threads):
        raise ValueError(f"res.meta['device'] of {res.name} has no sm_count or "
                         "max_threads_per_sm: pass the Result of records.run('dram_strides').")
    warps_per_sm = min(8, threads // 256) * 256 // 32
    chunks = sms * warps_per_sm * max(r["ilp"] for r in res.rows)
    seen = [r["stride_bytes"] for r in res.rows if r["rows"] >= chunks]
    return {"chunks_in_flight": chunks, "warps_per_sm": warps_per_sm,
            "largest_stride_bytes": max(seen) if seen else None}


def copy_loaded_reading(copy_res, covered_ns: float) -> dict:
    """Chapter 1's one-load copy read against Little's law with the latency probed beside it
    (``dram_loaded_latency_copy``, its row with the most threads per SM among those where the
    probe ran inside the copy's span). ``covered_ns``: the
    latency that one load per resident thread covers at the copy ceiling's read rate. Returns
    the row's numbers and ``limited_by_latency``: whether the probe's latency exceeds
    ``covered_ns`` and the loads kept at least 90% of their allowed bytes in flight (then the
    copy's rate is consistent with Little's law at the latency under its own load: consistent
    accounting, not an ablation); ``text``: the sentence."""
    _check_res(copy_res, "threads_per_sm", "gbps", "loaded_ns", "in_flight_pct", "bytes_in_flight",
               "read_gbps")
    validate.positive(covered_ns, "covered_ns")
    inside = [q for q in copy_res.rows if q.get("covered", True)]  # the probe ran inside the copy
    if not inside:
        return {"limited_by_latency": None, "text": (
            "The probe did not run inside the copy's span at any launch of "
            "`dram_loaded_latency_copy`, so the latency under the copy's own load stays a "
            "hypothesis; record it again.")}
    r = max(inside, key=lambda q: q["threads_per_sm"])
    limited = r["loaded_ns"] > covered_ns and r["in_flight_pct"] >= 90
    where = (f"With the copy launched at {r['threads_per_sm']:,} threads per SM "
             f"({r['gbps']:,.0f} GB/s), so that the probe's one-thread block finds room, a load "
             f"of the probe beside it took {r['loaded_ns']:.0f} ns")
    allowed_gbps = r["bytes_in_flight"] / r["loaded_ns"]   # bytes / ns = GB/s of reads
    cover = (f"the {r['bytes_in_flight'] / 1e6:.2f} MB that the copy's loads allow then cover "
             f"{allowed_gbps:,.0f} GB/s of reads, and the copy read {r['read_gbps']:,.0f} GB/s, "
             f"{100 * r['read_gbps'] / allowed_gbps:.0f}% of that")
    text = (f"{where}; {cover}: Little's law at the copy's own loaded latency agrees."
            if limited
            else f"{where}; {cover}: Little's law with the latency under load does not account "
                 "for the gap. What keeps the rest of the threads' time free of loads is not "
                 "measured here.")
    return {**r, "limited_by_latency": limited, "text": text}
