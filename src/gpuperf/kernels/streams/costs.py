"""The streams chapter's experiments on pinned memory, streams and what host calls cost,
and the tables read from them.

``streams_pinned_and_streams``: the article's program with an output allocated once, pinned
memory and five streams, each alone and together.
``streams_pageable_overlap``: which copies overlap a kernel, pageable against pinned.
``streams_copy_overhead``: one small pinned copy through Numba against the driver.
``streams_default_stream``: how a launch on the default stream blocks other streams, and a
stream waiting for another's event.
``streams_sync_calls``: which host calls (allocation, free, pinning, copies) wait for a kernel.
``streams_memory_kinds``: pinned copies against mapped and managed memory.
"""

from __future__ import annotations

import functools
import time

import numpy as np
from numba import cuda

from gpuperf import bench, device
from gpuperf import exercises as ex
from gpuperf.records import Result, experiment

from .experiments import ARTICLE_N, _check_res, _events_ms
from .kernels import (
    ARTICLE_STREAMS,
    BLOCKS_PER_SM,
    add_kernel,
    article_add,
    article_default_stream,
    fixed_five_streams,
    launch_chunk,
    pinned_default_stream,
    relax_kernel,
)
from .pinned import pinned_copy
from .pipeline import Pipeline

PIPELINE_STREAMS, PIPELINE_CHUNKS = 4, 8  # as the chapter's pipeline measurement


@experiment("streams_pinned_and_streams", chapter="streams",
            title="The article's vector addition (2e7 int32): an output allocated once, "
                  "pinned memory and five streams, each alone and together",
            units={"ms": "ms"})
def pinned_and_streams_experiment(progress):
    """What each change to the article's program gives, timed alike (CUDA events on the legacy
    default stream around the whole program, after a warm-up): the article's serial program
    (its ``copy_to_host()`` allocates the output on every call); the same copying into an
    output allocated once (``pinned_default_stream`` given pageable arrays); then pinned
    memory, five streams (``fixed_five_streams``), and both."""
    rng = np.random.default_rng(3)
    x = rng.integers(-2**20, 2**20, ARTICLE_N, dtype=np.int32)
    y = rng.integers(-2**20, 2**20, ARTICLE_N, dtype=np.int32)
    ref = x.astype(np.float64) + y
    px, py = pinned_copy(x), pinned_copy(y)
    out = np.empty(ARTICLE_N, np.float64)
    pout = cuda.pinned_array(ARTICLE_N, dtype=np.float64)
    fresh = {}

    def article():  # the article's serial program: copy_to_host() allocates the output
        fresh["out"] = article_default_stream(article_add, x, y)

    once, per_call = "allocated once", "new array per call (the article's)"
    variants = [
        ("pageable", per_call, 1, article, None),
        ("pageable", once, 1, lambda: pinned_default_stream(x, y, out), out),
        ("pinned", once, 1, lambda: pinned_default_stream(px, py, pout), pout),
        ("pageable", once, ARTICLE_STREAMS, lambda: fixed_five_streams(x, y, out), out),
        ("pinned", once, ARTICLE_STREAMS, lambda: fixed_five_streams(px, py, pout), pout),
    ]
    rows = []
    for memory, output, n_streams, run, result in variants:
        if result is not None:
            result[:] = np.nan
        ms = _events_ms(run, repeats=7)
        got = fresh["out"] if result is None else result
        rows.append({"host_memory": memory, "output": output, "n_streams": n_streams, "ms": ms,
                     "wrong_elements": int(np.count_nonzero(got != ref))})
        progress(f"{memory}, output {output}, {n_streams} stream(s): {ms:.2f} ms, "
                 f"{rows[-1]['wrong_elements']} wrong")
    return rows


OVERLAP_MIB = 256
OVERLAP_KERNEL_N = 2**22  # the kernel's elements; its steps set its duration


def _issue_in_streams(ops) -> dict:
    """Issue ``ops`` (callables taking a stream) in order, each in a stream of its own, and
    time them: every op's span from events recorded in its stream, the makespan from the
    first start to the last end, and how long each call held the host thread."""
    streams = [cuda.stream() for _ in ops]
    events = [(cuda.event(), cuda.event()) for _ in ops]
    held = []
    cuda.synchronize()
    for op, s, (e0, e1) in zip(ops, streams, events):
        e0.record(s)
        t = time.perf_counter()
        op(s)
        held.append(1e3 * (time.perf_counter() - t))
        e1.record(s)
    cuda.synchronize()
    first = events[0][0]
    spans = [(first.elapsed_time(e0), first.elapsed_time(e1)) for e0, e1 in events]
    return {"makespan_ms": max(e for _, e in spans) - min(s for s, _ in spans),
            "span_ms": [e - s for s, e in spans], "host_ms": held}


def _median_of(ops, repeats: int) -> dict:
    runs = [_issue_in_streams(ops) for _ in range(repeats + 1)][1:]  # the first warms up
    med = float(np.median([r["makespan_ms"] for r in runs]))
    return {"makespan_ms": med,
            "host_ms": [float(np.median([r["host_ms"][i] for r in runs]))
                        for i in range(len(ops))],
            "spread": bench.Timing([r["makespan_ms"] for r in runs]).spread}


@experiment("streams_pageable_overlap", chapter="streams",
            title="A 256 MiB copy beside a kernel in another stream, pageable against pinned "
                  "host memory",
            units={"first_ms": "ms", "second_ms": "ms", "makespan_ms": "ms",
                   "host_blocked_ms": "ms", "hidden_pct": "%"})
def pageable_overlap_experiment(progress):
    """Which copies overlap what. For each host memory (pageable, pinned): a copy in and a
    copy out of 256 MiB alone; each beside a kernel of about the pageable copies' duration
    in another stream, issued after the kernel and before it; and the copy in beside the
    copy out. Each row names the operation issued first and second (``first_ms`` and
    ``second_ms``: each alone); ``hidden_pct`` is how much of the shorter one the overlap
    hid (100: all of it, 0: one ran after the other); ``host_blocked_ms`` is how long the
    (first) copy's call held the host thread: nothing issued after it starts before."""
    n = OVERLAP_MIB * 2**20 // 4
    d_in, d_out = cuda.device_array(n, np.float32), cuda.device_array(n, np.float32)
    d_out[:] = 1.0
    hosts = {"pageable": (np.ones(n, np.float32), np.ones(n, np.float32)),
             "pinned": (cuda.pinned_array(n, np.float32), cuda.pinned_array(n, np.float32))}
    for src, dst in hosts.values():
        src[:] = 1.0
        dst[:] = 0.0  # touch every page before timing
    names = {"h2d": f"copy in ({OVERLAP_MIB} MiB)", "d2h": f"copy out ({OVERLAP_MIB} MiB)"}

    def copy(memory, direction):
        src, dst = hosts[memory]
        if direction == "h2d":
            return lambda s: d_in.copy_to_device(src, stream=s)
        return lambda s: d_out.copy_to_host(dst, stream=s)

    alone = {(m, d): _median_of([copy(m, d)], 5) for m in hosts for d in names}
    # A kernel about as long as the slower pageable copy, so that either order shows.
    kernel, _ = _long_kernel(max(alone[("pageable", d)]["makespan_ms"] for d in names))
    k_ms = _median_of([kernel], 5)["makespan_ms"]
    progress(f"kernel: {k_ms:.2f} ms")
    rows = []

    def add(memory, first, first_ms, second, second_ms, timed, copy_at):
        hidden = None
        if second is not None and min(first_ms, second_ms) > 0:
            hidden = 100 * (first_ms + second_ms - timed["makespan_ms"]) / min(first_ms,
                                                                              second_ms)
        rows.append({"memory": memory, "first": first, "second": second,
                     "first_ms": first_ms, "second_ms": second_ms,
                     "makespan_ms": timed["makespan_ms"],
                     "host_blocked_ms": timed["host_ms"][copy_at], "hidden_pct": hidden,
                     "spread": timed["spread"]})
        if hidden is not None:
            progress(f"{memory}: {first}, then {second}: {timed['makespan_ms']:.2f} ms "
                     f"(alone {first_ms:.2f} and {second_ms:.2f}), {hidden:.0f}% hidden, "
                     f"host held {rows[-1]['host_blocked_ms']:.2f} ms")

    for memory in hosts:
        for direction, name in names.items():
            c, c_ms = copy(memory, direction), alone[(memory, direction)]["makespan_ms"]
            add(memory, name, c_ms, None, None, alone[(memory, direction)], 0)
            add(memory, "kernel", k_ms, name, c_ms, _median_of([kernel, c], 3), 1)
            add(memory, name, c_ms, "kernel", k_ms, _median_of([c, kernel], 3), 0)
        add(memory, names["h2d"], alone[(memory, "h2d")]["makespan_ms"], names["d2h"],
            alone[(memory, "d2h")]["makespan_ms"],
            _median_of([copy(memory, "h2d"), copy(memory, "d2h")], 3), 0)
    return rows


PCIE_GT_PER_LANE = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0}  # GT/s, by generation


def pcie_link() -> dict:
    """The GPU's PCIe link as ``nvidia-smi`` reports it (generation and lanes, the most the
    GPU and its slot support), and its theoretical bandwidth per direction in GB/s: lanes
    x transfer rate x 128/130 (generations 3 to 5 encode 128 bits in 130; generation 6's
    FLIT encoding is counted the same way here) / 8 bits. Empty where nothing is reported."""
    import subprocess

    try:
        out = subprocess.run(["nvidia-smi", "--id=" + str(cuda.get_current_device().id),
                              "--query-gpu=pcie.link.gen.max,pcie.link.width.max",
                              "--format=csv,noheader,nounits"], capture_output=True, text=True,
                             timeout=20).stdout.strip().splitlines()[0]
        gen, width = (int(x) for x in out.split(","))
    except Exception:  # noqa: BLE001  (no nvidia-smi, or a field it does not report)
        return {}
    if gen not in PCIE_GT_PER_LANE or width <= 0:
        return {}
    return {"pcie_gen": gen, "pcie_lanes": width,
            "pcie_gbps": PCIE_GT_PER_LANE[gen] * width * 128 / 130 / 8}


OVERHEAD_KIB = (4, 64, 1024)
OVERHEAD_BATCHES, OVERHEAD_COPIES = 7, 40  # per size and call: the median batch is kept


def _driver_copy(d, h, stream):
    """``cuMemcpyHtoDAsync`` called directly, without Numba's host-side work, or None where
    this Numba has no driver binding to call."""
    try:
        from numba.cuda.cudadrv import driver as drv

        binding = drv.binding
        dptr = int(d.__cuda_array_interface__["data"][0])
        hptr, nbytes, handle = int(h.ctypes.data), int(h.nbytes), stream.handle
        success = binding.CUresult.CUDA_SUCCESS
    except Exception:  # noqa: BLE001
        return None

    def copy():
        (err,) = binding.cuMemcpyHtoDAsync(dptr, hptr, nbytes, handle)
        if err != success:
            raise RuntimeError(f"cuMemcpyHtoDAsync failed: {err}")
    return copy


@experiment("streams_copy_overhead", chapter="streams",
            title="What one small pinned copy in costs: Numba's copy_to_device against the "
                  "driver's cuMemcpyHtoDAsync",
            units={"host_us": "µs", "gpu_us": "µs", "transfer_us": "µs", "kib": "KiB"})
def copy_overhead_experiment(progress):
    """Per copy of one size, the median over 7 batches of 40 back-to-back copies (a one-time
    cost in one batch does not move it): ``host_us``, the host's time to issue one, and
    ``host_spread``, its spread over the batches; ``gpu_us``, the stream's time per copy from
    an event before a batch's first copy to one after its last (when the host issues slower
    than the link moves, the host sets it);
    ``transfer_us``, the bytes over the link's bandwidth measured with one 256 MiB copy."""
    s = cuda.stream()
    big = OVERLAP_MIB * 2**20 // 4
    hb, db = cuda.pinned_array(big, np.float32), cuda.device_array(big, np.float32)
    hb[:] = 1.0
    link = bench.time_kernel(functools.partial(db.copy_to_device, hb, stream=s),
                             min_repeat=5, min_time=0.05, hide_launch=False)
    link_gbps = bench.gbps(hb.nbytes, link.median_ms)
    del hb, db
    pcie = pcie_link()
    progress(f"one {OVERLAP_MIB} MiB pinned copy in: {link_gbps:.1f} GB/s"
             + (f"; PCIe gen {pcie['pcie_gen']} x{pcie['pcie_lanes']}: "
                f"{pcie['pcie_gbps']:.1f} GB/s per direction in theory" if pcie else ""))
    rows = []
    for kib in OVERHEAD_KIB:
        n = kib * 1024 // 4
        h, d = cuda.pinned_array(n, np.float32), cuda.device_array(n, np.float32)
        h[:] = 1.0
        apis = {"Numba: d.copy_to_device(h, stream=s)": functools.partial(d.copy_to_device, h,
                                                                          stream=s),
                "driver: cuMemcpyHtoDAsync": _driver_copy(d, h, s)}
        for api, op in apis.items():
            if op is None:
                progress(f"{api}: no driver binding to call here, skipped")
                continue
            try:
                for _ in range(10):
                    op()
            except Exception as err:  # noqa: BLE001  (a binding this Numba calls differently)
                progress(f"{api}: failed here ({type(err).__name__}: {err}), skipped")
                continue
            s.synchronize()
            host_us, stream_us = [], []
            for _ in range(OVERHEAD_BATCHES):
                e0, e1 = cuda.event(), cuda.event()
                e0.record(s)
                t = time.perf_counter()
                for _ in range(OVERHEAD_COPIES):
                    op()
                host_us.append(1e6 * (time.perf_counter() - t) / OVERHEAD_COPIES)
                e1.record(s)
                e1.synchronize()
                stream_us.append(1e3 * e0.elapsed_time(e1) / OVERHEAD_COPIES)
            if not np.array_equal(d.copy_to_host()[:: max(1, n // 64)], h[:: max(1, n // 64)]):
                raise AssertionError(f"{api}: the copied data is wrong")
            rows.append({"api": api, "kib": kib,
                         "host_us": float(np.median(host_us)),
                         "gpu_us": float(np.median(stream_us)),
                         "host_spread": bench.Timing(host_us).spread,
                         "transfer_us": kib * 1024 / (link_gbps * 1e9) * 1e6,
                         "link_gbps": link_gbps, **pcie})
            progress(f"{kib:5d} KiB, {api}: host {rows[-1]['host_us']:.1f} µs, stream "
                     f"{rows[-1]['gpu_us']:.1f} µs per copy (the bytes alone "
                     f"{rows[-1]['transfer_us']:.1f} µs)")
    return rows


def pinned_and_streams_summary(res) -> dict:
    """The ``streams_pinned_and_streams`` rows as the chapter reads them: each program's time
    (``pageable_serial_ms``, ``pinned_serial_ms``, ``pageable_streams_ms``,
    ``pinned_streams_ms``, all with an output allocated once) and what each change gives, as
    speedups over the serial pageable program (``pinned_x``, ``streams_x``, ``both_x``) and
    streams on top of pinned memory (``streams_on_pinned_x``); the article's own serial
    program, which allocates its output on every call (``article_serial_ms``), and the
    speedup of allocating it once (``output_once_x``), both None in a record without it."""
    _check_res(res, "host_memory", "n_streams", "ms")
    many = max(res.values("n_streams"))
    once = [r for r in res.rows if r.get("output", "allocated once") == "allocated once"]

    def ms(memory, n):
        match = [r for r in once if r["host_memory"] == memory and r["n_streams"] == n]
        if len(match) != 1:
            raise ValueError(f"res: {len(match)} rows of {memory} memory, {n} stream(s) and an "
                             "output allocated once, expected one; pass the "
                             "streams_pinned_and_streams result.")
        return match[0]["ms"]

    out = {"n_streams": many,
           "pageable_serial_ms": ms("pageable", 1), "pinned_serial_ms": ms("pinned", 1),
           "pageable_streams_ms": ms("pageable", many), "pinned_streams_ms": ms("pinned", many)}
    base = out["pageable_serial_ms"]
    out.update(pinned_x=base / out["pinned_serial_ms"], streams_x=base / out["pageable_streams_ms"],
               both_x=base / out["pinned_streams_ms"],
               streams_on_pinned_x=out["pinned_serial_ms"] / out["pinned_streams_ms"])
    # The article's own serial program, whose copy_to_host() allocates the output on every
    # call (absent from records made before it was added)
    article = [r for r in res.rows if r.get("output", "allocated once") != "allocated once"]
    out["article_serial_ms"] = article[0]["ms"] if len(article) == 1 else None
    out["output_once_x"] = (None if out["article_serial_ms"] is None
                            else out["article_serial_ms"] / base)
    return out


def show_pinned_and_streams(res) -> None:
    """Print :func:`pinned_and_streams_summary`: what pinned memory and streams each give."""
    s = pinned_and_streams_summary(res)
    k = s["n_streams"]
    if s["article_serial_ms"] is not None:
        print(f"On {res.gpu}, the article's serial program, whose copy_to_host() allocates its "
              f"output on every call: {s['article_serial_ms']:.2f} ms; the same program copying "
              f"into an output allocated once: {s['pageable_serial_ms']:.2f} ms (allocating it "
              f"once is {s['output_once_x']:.2f}x faster).")
    print(f"On {res.gpu}, against the serial program on pageable memory, output allocated once "
          f"({s['pageable_serial_ms']:.2f} ms; the pinned rows' buffers were allocated and filled "
          "once, before the timing):")
    def speedup(x):
        return f"{x:.2f}x" + (" (slower)" if x < 1 else "")

    print(f"  pinned memory alone (one stream):   {s['pinned_serial_ms']:6.2f} ms, "
          f"{speedup(s['pinned_x'])}")
    print(f"  {k} streams alone (pageable memory): {s['pageable_streams_ms']:6.2f} ms, "
          f"{speedup(s['streams_x'])}")
    print(f"  both:                               {s['pinned_streams_ms']:6.2f} ms, "
          f"{speedup(s['both_x'])}")
    print(f"On pinned memory, {k} streams give {speedup(s['streams_on_pinned_x'])} over one.")


def pageable_overlap_summary(res) -> dict:
    """The ``streams_pageable_overlap`` rows by host memory (``"pageable"``, ``"pinned"``):
    each copy's time alone (``in_ms``, ``out_ms``) and the share of it its call held the host
    thread (``in_held_pct``, ``out_held_pct``); the share of the shorter operation hidden for
    a copy issued after the kernel (``in_after_kernel_pct``, ``out_after_kernel_pct``), before
    it (``in_before_kernel_pct``, ``out_before_kernel_pct``), and for a copy in issued with a
    copy out (``in_with_out_pct``); and the kernel's time alone (``kernel_ms``)."""
    _check_res(res, "memory", "first", "second", "first_ms", "makespan_ms", "host_blocked_ms",
               "hidden_pct")
    out = {}
    for memory in ("pageable", "pinned"):
        alone = {r["first"]: r for r in res.select(memory=memory, second=None)}
        names = {d: [n for n in alone if n.startswith(f"copy {d}")] for d in ("in", "out")}
        if any(len(v) != 1 for v in names.values()):
            raise ValueError(f"res: expected one copy in and one copy out alone for {memory} "
                             f"memory, found {sorted(alone)}; pass the streams_pageable_overlap "
                             "result.")
        c_in, c_out = names["in"][0], names["out"][0]

        def hidden(first, second, memory=memory):
            return res.one(memory=memory, first=first, second=second)["hidden_pct"]

        out[memory] = {
            "in_ms": alone[c_in]["makespan_ms"], "out_ms": alone[c_out]["makespan_ms"],
            "in_held_pct": 100 * alone[c_in]["host_blocked_ms"] / alone[c_in]["makespan_ms"],
            "out_held_pct": 100 * alone[c_out]["host_blocked_ms"] / alone[c_out]["makespan_ms"],
            "in_after_kernel_pct": hidden("kernel", c_in),
            "in_before_kernel_pct": hidden(c_in, "kernel"),
            "out_after_kernel_pct": hidden("kernel", c_out),
            "out_before_kernel_pct": hidden(c_out, "kernel"),
            "in_with_out_pct": hidden(c_in, c_out),
        }
    out["kernel_ms"] = res.select(first="kernel")[0]["first_ms"]
    return out


def show_pageable_overlap(res) -> None:
    """Show :func:`pageable_overlap_summary` as one table, pageable beside pinned."""
    s = pageable_overlap_summary(res)
    size = next(r["first"] for r in res.rows if r["first"].startswith("copy in"))
    size = size[size.find("(") + 1:size.rfind(")")]
    lines = [("copy in alone (ms)", "in_ms"),
             ("copy in: share of it the call held the host (%)", "in_held_pct"),
             ("copy out alone (ms)", "out_ms"),
             ("copy out: share of it the call held the host (%)", "out_held_pct"),
             ("copy in issued after the kernel: hidden (%)", "in_after_kernel_pct"),
             ("copy in issued before the kernel: hidden (%)", "in_before_kernel_pct"),
             ("copy out issued after the kernel: hidden (%)", "out_after_kernel_pct"),
             ("copy out issued before the kernel: hidden (%)", "out_before_kernel_pct"),
             ("copy in and copy out issued together: hidden (%)", "in_with_out_pct")]
    rows = [{"what": what, "pageable": s["pageable"][key], "pinned": s["pinned"][key]}
            for what, key in lines]
    capped = [f"{r['what'].split(':')[0]}, {m}: {r[m]:.0f}%" for r in rows
              for m in ("pageable", "pinned")
              if "hidden" in r["what"] and round(r[m]) > 100]
    for r in rows:
        if "hidden" in r["what"]:
            r["pageable"], r["pinned"] = min(r["pageable"], 100.0), min(r["pinned"], 100.0)
    note = (f"Copies of {size}, each alone, and beside a kernel of {s['kernel_ms']:.1f} ms in "
            "another stream. Hidden: the share of the shorter operation that the overlap hid "
            "(100%: the pair took only as long as the longer one alone; 0%: one after the "
            "other; below 0%: the pair took longer than the two one after the other).")
    if capped:
        note += (" Shown as 100, where the pair finished sooner than its longer operation's "
                 "median alone (run-to-run variation): " + "; ".join(capped) + ".")
    Result("streams_pageable_overlap (summary)", rows, res.meta, res.source).show(
        headers={"what": "what", "pageable": "pageable host memory",
                 "pinned": "pinned host memory"}, note=note)


def copy_overhead_summary(res) -> list[dict]:
    """Per copy size (KiB): the host's time to issue one copy through Numba and through the
    driver (``numba_host_us``, ``driver_host_us``; None where the driver was not called),
    the stream's time per copy through each, and the bytes' own time on the measured link."""
    _check_res(res, "api", "kib", "host_us", "gpu_us", "transfer_us")
    out = []
    for kib in sorted(set(res.values("kib"))):
        row = {"kib": kib}
        for prefix, who in (("numba", "Numba"), ("driver", "driver")):
            match = [r for r in res.select(kib=kib) if r["api"].startswith(who)]
            row[f"{prefix}_host_us"] = match[0]["host_us"] if match else None
            row[f"{prefix}_stream_us"] = match[0]["gpu_us"] if match else None
        row["transfer_us"] = res.select(kib=kib)[0]["transfer_us"]
        out.append(row)
    return out


def show_copy_overhead(res) -> None:
    """Show :func:`copy_overhead_summary` as a table, with the measured link against the
    PCIe link's theoretical bandwidth (where ``nvidia-smi`` reported it) and Numba's host time
    per copy as a multiple of the driver's in the note under it."""
    rows = copy_overhead_summary(res)
    r = res.rows[0]
    line = f"One {OVERLAP_MIB} MiB pinned copy in (this experiment's run): {r['link_gbps']:.1f} GB/s"
    if r.get("pcie_gbps"):
        line += (f"; the PCIe gen {r['pcie_gen']} x{r['pcie_lanes']} link moves at most "
                 f"{r['pcie_gbps']:.1f} GB/s per direction in theory, so the copy reaches "
                 f"{100 * r['link_gbps'] / r['pcie_gbps']:.0f}% of it.")
    else:
        line += "; nvidia-smi reported no PCIe link to compare with."
    ratios = [f"{row['kib']} KiB, {row['numba_host_us'] / row['driver_host_us']:.0f}x"
              for row in rows if row["numba_host_us"] and row["driver_host_us"]]
    if ratios:
        line += " Numba's host time per copy as a multiple of the driver's: " + "; ".join(
            ratios) + "."
    Result("streams_copy_overhead (summary)", rows, res.meta, res.source).show(
        headers={"kib": "copy (KiB)", "numba_host_us": "Numba, host (µs)",
                 "numba_stream_us": "Numba, stream (µs)", "driver_host_us": "driver, host (µs)",
                 "driver_stream_us": "driver, stream (µs)",
                 "transfer_us": "the bytes alone (µs)"}, note=line)


def _nonblocking_stream():
    """A stream created with CU_STREAM_NON_BLOCKING (Numba's cuda.stream() blocks), or None."""
    try:
        from numba.cuda.cudadrv import driver as drv

        binding = drv.binding
        err, handle = binding.cuStreamCreate(binding.CUstream_flags.CU_STREAM_NON_BLOCKING.value)
        if err != binding.CUresult.CUDA_SUCCESS:
            return None
        return cuda.external_stream(int(handle))
    except Exception:
        return None


WAIT_CASE = "stream 2 waits for an event of stream 1"
PER_THREAD_CASE = "a per-thread default-stream launch in between"


@experiment("streams_default_stream", chapter="streams",
            title="Two kernels in two streams, with and without a launch on the default stream",
            units={"start_ms": "ms", "end_ms": "ms", "makespan_ms": "ms"})
def default_stream_experiment(progress):
    sms = device.sm_count(default=2)
    # Each long kernel fills at most half of the SMs, so two of them can run together.
    blocks, threads = max(1, sms // 2), 256
    n = blocks * threads
    rng = np.random.default_rng(5)
    a = cuda.to_device(ex.random_array(n, rng))
    b = cuda.to_device(ex.random_array(n, rng))
    outs = [cuda.device_array(n, np.float32) for _ in range(2)]
    tiny = [cuda.device_array(1, np.float32) for _ in range(3)]
    probe = 2**14
    t = bench.time_kernel(lambda: relax_kernel[blocks, threads](a, b, outs[0], probe),
                          min_repeat=3, min_time=0.01)
    iters = int(min(2**24, max(probe, probe * 3.0 / t.median_ms)))  # about 3 ms each
    progress(f"long kernels: {blocks} blocks x {threads} threads, {iters} steps")
    legacy = cuda.legacy_default_stream()
    rows = []
    per_thread = cuda.per_thread_default_stream()
    # (case, the stream of the tiny launch in between or None, non-blocking streams, wait)
    cases = [("two streams", None, False, False),
             ("a default-stream launch in between", legacy, False, False),
             ("non-blocking streams, default-stream launch in between", legacy, True, False),
             (PER_THREAD_CASE, per_thread, False, False),
             (WAIT_CASE, None, False, True)]
    for case, middle, nonblocking, wait in cases:
        if nonblocking:
            streams = [_nonblocking_stream(), _nonblocking_stream()]
            if None in streams:
                progress(f"{case}: cannot create non-blocking streams here, skipped")
                continue
        else:
            streams = [cuda.stream(), cuda.stream()]
        for _attempt in range(2):  # the first pass warms up; the second is recorded
            ref = cuda.event()
            ref.record(legacy)
            ev = []
            for s, who in ((streams[0], 1), (middle, 0), (streams[1], 2)):
                if who == 0 and middle is None:
                    continue
                e0, e1 = cuda.event(), cuda.event()
                if wait and who == 2:
                    # stream 2 waits, on the GPU, for the event recorded after kernel 1
                    # (cudaStreamWaitEvent; Numba spells it on the event)
                    ev[0][2].wait(s)
                e0.record(s)
                if who == 0:
                    add_kernel[1, 32, s](tiny[0], tiny[1], tiny[2])
                else:
                    relax_kernel[blocks, threads, s](a, b, outs[who - 1], iters)
                e1.record(s)
                ev.append((who, e0, e1))
            cuda.synchronize()
        spans = [{"stream": who, "kind": "kernel",
                  "label": ("per-thread default-stream kernel" if middle is per_thread else
                            "default-stream kernel") if who == 0 else f"long kernel {who}",
                  "start_ms": ref.elapsed_time(e0), "end_ms": ref.elapsed_time(e1)}
                 for who, e0, e1 in ev]
        makespan = max(s["end_ms"] for s in spans)
        for s in spans:
            rows.append({"case": case, **s, "makespan_ms": makespan, "iters": iters})
        progress(f"{case}: makespan {makespan:.2f} ms")
    return rows


SYNC_MIB = 64  # the size of what each call below allocates, frees, pins or copies
SYNC_KERNEL_MS = 200.0  # ten times the slowest call's own time (about 20 ms for 64 MiB)


def _long_kernel(target_ms: float):
    """A launcher ``fn(stream)`` of a relaxation kernel taking about ``target_ms`` here, and
    its measured time (ms)."""
    n = OVERLAP_KERNEL_N
    rng = np.random.default_rng(13)
    ka, kb = (cuda.to_device(ex.random_array(n, rng)) for _ in range(2))
    kout = cuda.device_array(n, np.float32)
    probe = bench.time_kernel(lambda: launch_chunk(ka, kb, kout, 256, 256), min_repeat=3,
                              min_time=0.02)
    iters = int(min(2**24, max(64, round(256 * target_ms / probe.median_ms))))

    def launch(stream):
        launch_chunk(ka, kb, kout, iters, 256, stream)

    t = bench.time_kernel(lambda: launch(0), min_repeat=3, min_time=0.05)
    return launch, t.median_ms


def _sync_calls(n: int):
    """(name, setup, call) of each host call the experiment times while a kernel runs:
    ``setup()`` runs before the kernel is issued and returns what ``call(state)`` needs."""
    ctx = cuda.current_context()
    host = np.ones(n, np.float32)
    pinned = cuda.pinned_array(n, np.float32)
    pinned[:] = 1.0
    d = cuda.device_array(n, np.float32)
    other = cuda.stream()

    def free(holder):
        holder.pop()  # the last reference: Numba queues the free...
        ctx.deallocations.clear()  # ...and this runs it now (cuMemFree / cuMemFreeHost)

    def fill(arr):
        arr[:] = 0.0

    def register(arr):
        with cuda.pinned(arr):  # cuMemHostRegister on entry, cuMemHostUnregister on exit
            pass

    return [
        ("cuda.device_array: allocate device memory", lambda: None,
         lambda _: cuda.device_array(n, np.float32)),
        ("free device memory (the last reference dropped, deallocations run)",
         lambda: [cuda.device_array(n, np.float32)], free),
        ("cuda.pinned_array: allocate pinned host memory", lambda: None,
         lambda _: cuda.pinned_array(n, np.float32)),
        ("free pinned host memory", lambda: [cuda.pinned_array(n, np.float32)], free),
        ("cuda.pinned(x): pin an existing array, then unpin it", lambda: host, register),
        ("d[:] = 0: fill a device array", lambda: d, fill),
        ("d.copy_to_device(x) with no stream (pinned x)", lambda: None,
         lambda _: d.copy_to_device(pinned)),
        ("d.copy_to_device(x, stream=another) (pinned x)", lambda: None,
         lambda _: d.copy_to_device(pinned, stream=other)),
        ("a kernel launch with no stream", lambda: None,
         lambda _: add_kernel[1, 32](d, d, d)),
        ("cuda.synchronize()", lambda: None, lambda _: cuda.synchronize()),
    ]


@experiment("streams_sync_calls", chapter="streams",
            title="Which host calls wait for a kernel running in another stream",
            units={"host_ms": "ms", "idle_ms": "ms", "kernel_ms": "ms"})
def sync_calls_experiment(progress):
    """For each call of ``_sync_calls`` (64 MiB where it allocates, frees, pins or copies):
    time it on the host twice, with nothing pending on the GPU (``idle_ms``) and while a
    kernel of about 200 ms (``SYNC_KERNEL_MS``, far longer than any call takes alone) runs in
    a stream of its own (``host_ms``); then ask the kernel's end event whether the kernel had
    finished when the call returned. The median of 5 tries each (after one more that warms
    up); ``waited`` counts the tries in which the kernel had finished. A call that waits
    takes about the kernel's time longer with the kernel pending than without; a call that
    is only slow takes its own time either way."""
    n = SYNC_MIB * 2**20 // 4
    launch, k_ms = _long_kernel(SYNC_KERNEL_MS)
    progress(f"kernel alone: {k_ms:.2f} ms")
    s = cuda.stream()
    ctx = cuda.current_context()
    rows = []
    for name, setup, call in _sync_calls(n):
        held, idle, finished = [], [], 0
        for attempt in range(6):
            for pending in (False, True):
                state = setup()
                ctx.deallocations.clear()  # frees queued earlier must not run inside the call
                cuda.synchronize()
                done = cuda.event()
                if pending:
                    launch(s)
                done.record(s)
                t = time.perf_counter()
                call(state)
                ms = 1e3 * (time.perf_counter() - t)
                over = done.query()
                cuda.synchronize()
                if attempt:
                    (held if pending else idle).append(ms)
                    finished += bool(over) and pending
        rows.append({"call": name, "host_ms": float(np.median(held)),
                     "idle_ms": float(np.median(idle)), "kernel_ms": k_ms,
                     "waited": finished, "tries": len(held), "mib": SYNC_MIB})
        progress(f"{name}: host {rows[-1]['host_ms']:.3f} ms with the kernel pending, "
                 f"{rows[-1]['idle_ms']:.3f} ms without; kernel finished on return in "
                 f"{finished} of {len(held)}")
    return rows


WAITS, AT_ONCE, SLOW, VARIES, UNTOLD = ("waits for the kernel", "returns at once",
                                        "slow, but does not wait", "varies",
                                        "finished first (waiting not told from slowness)")


def sync_calls_summary(res) -> list[dict]:
    """The ``streams_sync_calls`` rows with ``extra_ms``, how much longer the call took with
    the kernel pending than without (``host_ms - idle_ms``), ``extra_pct``, that as a share
    of the kernel's time, and ``verdict``: "waits for the kernel" where the kernel had
    finished when the call returned every time and the call took at least half the
    kernel's time longer with it pending; "slow, but does not wait" where the kernel had
    finished every time but the call took about as long without it; "returns at once"
    where the kernel never had finished; "varies" otherwise. A record made before
    ``idle_ms`` was measured cannot tell the first two apart (its verdict says so)."""
    _check_res(res, "call", "host_ms", "kernel_ms", "waited", "tries", "mib")
    out = []
    for r in res.rows:
        idle = r.get("idle_ms")
        extra = None if idle is None else r["host_ms"] - idle
        if r["waited"] == 0:
            verdict = AT_ONCE
        elif r["waited"] < r["tries"]:
            verdict = VARIES
        elif extra is None:
            verdict = UNTOLD
        else:
            verdict = WAITS if extra >= 0.5 * r["kernel_ms"] else SLOW
        out.append({"call": r["call"], "idle_ms": idle, "host_ms": r["host_ms"],
                    "extra_ms": extra,
                    "extra_pct": None if extra is None else 100 * extra / r["kernel_ms"],
                    "verdict": verdict})
    return out


def show_sync_calls(res) -> list[dict]:
    """Show :func:`sync_calls_summary` as a table; return its rows."""
    rows = sync_calls_summary(res)
    k = res.rows[0]["kernel_ms"]
    waited = [r["call"].split(": ")[0] for r in rows if r["verdict"] == WAITS]
    note = (f"Each call made with nothing pending on the GPU, then while a kernel of {k:.0f} ms "
            f"ran in another stream ({res.rows[0]['mib']} MiB where it allocates, frees, pins "
            "or copies); host times, the median of the tries. Waited for the kernel every "
            f"time: {'; '.join(waited) if waited else 'none'}.")
    if any(r["verdict"] == VARIES for r in rows):
        note += (f" {VARIES}: the kernel had finished by the call's return in some tries and "
                 "not in others.")
    cols = ["call", "idle_ms", "host_ms", "verdict"]
    if all(r["idle_ms"] is None for r in rows):
        cols = ["call", "host_ms", "verdict"]
    words = {"call": "call", "idle_ms": "alone (ms)", "host_ms": "with a kernel pending (ms)",
             "verdict": "verdict"}
    Result("streams_sync_calls (summary)", rows, res.meta, res.source).show(
        cols, headers={c: words[c] for c in cols}, note=note)
    return rows


def memory_kinds_summary(res) -> dict:
    """``streams_memory_kinds`` by method (``"pinned"``, ``"mapped"``, ``"managed, first"``,
    ``"managed, again"``, and ``"pipelined"`` where the record has it): its row, with
    ``x_pinned``, its time as a multiple of the pinned version's, and ``x_pipelined``, as a
    multiple of the pipelined version's (None without that row)."""
    _check_res(res, "method", "n", "ms", "gbps")
    keys = {"pinned": "pinned:", "pipelined": "pinned, pipelined:", "mapped": "mapped:",
            "managed, first": "managed: first", "managed, again": "managed: the same"}
    out = {}
    for key, prefix in keys.items():
        match = [r for r in res.rows if r["method"].startswith(prefix)]
        if key == "pipelined" and not match:  # recorded before the pipelined row was added
            continue
        if len(match) != 1:
            raise ValueError(f"res: expected one row whose method starts with {prefix!r}, "
                             f"found {len(match)}; pass the streams_memory_kinds result.")
        out[key] = dict(match[0])
    for r in out.values():
        r["x_pinned"] = r["ms"] / out["pinned"]["ms"]
        r["x_pipelined"] = r["ms"] / out["pipelined"]["ms"] if "pipelined" in out else None
    return out


def show_memory_kinds(res) -> dict:
    """Show ``streams_memory_kinds`` as a table, each time against the pinned version's
    under it; return :func:`memory_kinds_summary`."""
    s = memory_kinds_summary(res)
    print(f"On {res.gpu}: out = a + b over {res.rows[0]['n']:,} float32 that start and end on "
          "the host:")
    # "managed, again" moves no data over the host link (its pages are already on the
    # device): it is the kernel alone, so it is named for what it measures, not compared.
    note = "; ".join(f"{key}: {r['x_pinned']:.2f}x the pinned version's time"
                     for key, r in s.items() if key not in ("pinned", "managed, again"))
    note += ("; managed, again: the kernel alone on pages already on the device (no data "
             "crosses the host link), so it is no way to move host data and is not compared.")
    res.show(["method", "ms", "gbps", "spread"], note=note)
    return s


MEMORY_KINDS_N = 2**24  # 64 MiB per float32 array


@experiment("streams_memory_kinds", chapter="streams",
            title="out = a + b over host data: pinned copies, mapped (zero-copy) memory and "
                  "managed memory (2^24 float32)",
            units={"ms": "ms", "gbps": "GB/s"})
def memory_kinds_experiment(progress):
    """The same addition over 2^24 float32 that start and end on the host, three ways:
    pinned arrays copied in and out around the kernel (one stream); the same as the chapter's
    pipeline (``PIPELINE_STREAMS`` streams, ``PIPELINE_CHUNKS`` chunks); the kernel reading and
    writing mapped host memory directly over the link (``cuda.mapped_array``, no copies);
    managed memory (``cuda.managed_array``), written on the host and then used by the
    kernel, which moves the pages on demand, the first kernel after the host wrote and a
    second one right after it. ``gbps``: the 12 bytes per element that start or end on the
    host (or, for the second managed kernel, that it touches) over the time. Medians of 5."""
    n = MEMORY_KINDS_N
    blocks = device.sm_count(default=2) * BLOCKS_PER_SM
    rng = np.random.default_rng(17)
    a0, b0 = ex.random_array(n, rng), ex.random_array(n, rng)
    want = a0.astype(np.float64) + b0
    rows = []

    def add(method, times, out):
        t = float(np.median(times))
        err = ex.compare(np.asarray(out), want, rtol=1e-6, atol=1e-6)
        if err:
            raise AssertionError(f"{method}: {err}")
        rows.append({"method": method, "n": n, "ms": t, "gbps": 12 * n / t / 1e6,
                     "spread": bench.Timing(times).spread})
        progress(f"{method}: {t:.2f} ms")

    # pinned: copy in, kernel, copy out; one stream, events around the whole.
    pa, pb, pout = pinned_copy(a0), pinned_copy(b0), cuda.pinned_array(n, np.float32)
    d_a, d_b, d_out = (cuda.device_array(n, np.float32) for _ in range(3))
    s = cuda.stream()

    def pinned_run():
        d_a.copy_to_device(pa, stream=s)
        d_b.copy_to_device(pb, stream=s)
        add_kernel[blocks, 256, s](d_a, d_b, d_out)
        d_out.copy_to_host(pout, stream=s)

    add("pinned: copy in, kernel, copy out", _stream_times(pinned_run, s), pout)

    # pinned, pipelined: the chapter's pipeline over the same arrays and device buffers.
    pipe = Pipeline(n, n_streams=PIPELINE_STREAMS, n_chunks=PIPELINE_CHUNKS,
                    buffers=[d_a, d_b, d_out])
    pout[:] = 0.0
    run = pipe.time(pa, pb, pout, repeats=5)
    add(f"pinned, pipelined: {PIPELINE_STREAMS} streams, {PIPELINE_CHUNKS} chunks",
        run.times_ms, pout)

    # mapped: the kernel reads and writes host memory over the link.
    ma, mb, mout = (cuda.mapped_array(n, np.float32) for _ in range(3))
    ma[:], mb[:] = a0, b0
    add("mapped: the kernel reads and writes host memory",
        _stream_times(lambda: add_kernel[blocks, 256, s](ma, mb, mout), s), mout)

    # managed: the host writes, the kernel's first touch moves the pages, then again.
    ua, ub, uout = (cuda.managed_array(n, np.float32) for _ in range(3))
    first, second = [], []
    for _ in range(6):
        ua[:], ub[:] = a0, b0  # the host writes: the pages are the host's again
        uout[:] = 0.0
        cuda.synchronize()
        first.append(_stream_times(lambda: add_kernel[blocks, 256, s](ua, ub, uout), s,
                                   repeats=1)[0])
        second.append(_stream_times(lambda: add_kernel[blocks, 256, s](ua, ub, uout), s,
                                    repeats=1)[0])
    add("managed: first kernel after the host wrote", first[1:], uout)
    add("managed: the same kernel again", second[1:], uout)
    return rows


def _stream_times(fn, stream, repeats: int = 5) -> list[float]:
    """``fn()`` issued in ``stream`` ``repeats`` times (after one warm-up unless
    ``repeats == 1``), each timed with events around it: ms."""
    times = []
    for i in range(repeats + (repeats > 1)):
        e0, e1 = cuda.event(), cuda.event()
        e0.record(stream)
        fn()
        e1.record(stream)
        e1.synchronize()
        if repeats == 1 or i:
            times.append(e0.elapsed_time(e1))
    return times
