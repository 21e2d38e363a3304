"""Each chapter's headline ratios, computed from one record file per GPU.

A ratio of two numbers measured in the same run on the same GPU travels between GPUs; an
absolute time does not. ``headline_rows()`` computes every chapter's headline ratios from each
shipped record (or the record files given), and ``show()`` prints them side by side: the
devices page of the book is built from it.
"""

from __future__ import annotations

import html
from dataclasses import replace
from pathlib import Path

from . import records


def _best(rows, key, lowest=False):
    rows = [r for r in rows if r.get(key) is not None]
    if not rows:
        raise LookupError(f"no rows with {key!r}")
    return (min if lowest else max)(rows, key=lambda r: r[key])


def _copy_over_peak(get):
    c = get("gridstride_ceilings").ceilings
    return c["copy_gbps"] / c["peak_gbps"]


def _column_major_slowdown(get):
    return _best(get("coalescing_traversal").rows, "slowdown")["slowdown"]


def _transpose_gain(get):
    res = get("coalescing_transpose")
    rows = res.select(kind="transpose")
    return _best(rows, "gbps")["gbps"] / res.one(version="naive")["gbps"]


def _dram_over_l1_latency(get):
    from .kernels import dram

    levels = dram.latency_levels(get("dram_latency"), "random")
    return levels["dram_ns"] / levels["l1_ns"]


def _littles_law_best_over_copy(get):
    res = get("dram_littles_law")
    return _best(res.rows, "gbps")["gbps"] / res.ceilings["copy_gbps"]


def _tiled_over_naive(get):
    res = get("matmul_naive_vs_tiled")
    n = max(r["n"] for r in res.rows if str(r["version"]).startswith("naive"))
    rows = res.select(n=n)
    tiled = _best([r for r in rows if str(r["version"]).startswith("tiled")], "tflops")
    naive = _best([r for r in rows if str(r["version"]).startswith("naive")], "tflops")
    return tiled["tflops"] / naive["tflops"]


def _coarsening_gain(get):
    res = get("matmul_coarsen_sweep")
    tile, n = max(res.values("tile")), max(res.values("n"))
    rows = res.select(tile=tile, n=n)
    return _best(rows, "tflops")["tflops"] / res.one(tile=tile, n=n, factor=1)["tflops"]


def _best_matmul_over_cublas(get):
    # cuBLAS measured in the same run as the kernels (the ladder's own row), not the ceiling
    # measured when the record started
    res = get("matmul_ladder")
    cublas = [r for r in res.rows if str(r["version"]).startswith("cuBLAS")]
    if not cublas:
        raise LookupError("the ladder has no cuBLAS row")
    best = _best([r for r in res.rows if r not in cublas], "tflops")
    return best["tflops"] / cublas[0]["tflops"]


def _v8_over_v0(get):
    res = get("reduce_ladder")
    return res.one(version="v0")["ms"] / res.one(version="v8")["ms"]


def _v8_over_cupy_gpu_time(get):
    # The GPU's own busy time per call at the largest size (reduce_timing_methods), not the
    # ladder's GB/s, whose gap to cupy.sum is within cupy.sum's host cost of a call.
    res = get("reduce_timing_methods")
    n = max(res.values("n"))
    at = dict(n=n, method="back to back")
    return res.one(version="cupy.sum", **at)["gpu_ms"] / res.one(version="v8", **at)["gpu_ms"]


def _pipeline_speedup(work):
    def ratio(get):
        res = get("streams_pipeline")
        rows = [r for r in res.rows if str(r["work"]).startswith(work)]
        return _best(rows, "speedup")["speedup"]
    return ratio


def _gdn_per_channel_over_shared(get):
    from .kernels import gdn

    res = get("gdn_algorithms")
    at = dict(n_ch=gdn.HEADLINE["n_ch"], side=gdn.HEADLINE["side"])
    return (res.one(method="per_channel", **at)["total_ms"]
            / res.one(method="shared", **at)["total_ms"])


def _privatization_gain(get):
    return get("privatization_histogram").one(distribution="skewed", version="private")["speedup"]


# (chapter, what the ratio compares, how it is shown: "x" a factor, "%" a share, function)
HEADLINES = [
    ("1", "device-to-device copy / theoretical DRAM peak", "%", _copy_over_peak),
    ("2", "column-major B / row-major B, naive matmul time (worst size)", "x",
     _column_major_slowdown),
    ("2.1", "best transpose / naive transpose, GB/s", "x", _transpose_gain),
    ("3.1", "DRAM latency / L1 latency (random pointer chase)", "x", _dram_over_l1_latency),
    ("3.1", "best bandwidth of the Little's-law sweep / copy ceiling", "%",
     _littles_law_best_over_copy),
    ("4", "best tiled / best naive matmul, TFLOP/s (largest size)", "x", _tiled_over_naive),
    ("5", "best coarsening factor / factor 1, TFLOP/s (largest tile and size)", "x",
     _coarsening_gain),
    ("5.1", "best Numba matmul / cuBLAS FP32 in the same run, TFLOP/s (4096^3)", "%",
     _best_matmul_over_cublas),
    ("6", "v8 / v0, reduce speed", "x", _v8_over_v0),
    ("6.2", "v8 / cupy.sum, speed in the GPU's busy time (2²⁸ floats)", "%",
     _v8_over_cupy_gpu_time),
    ("7", "best pipelined speedup, memory-bound work", "x", _pipeline_speedup("memory")),
    ("7", "best pipelined speedup, kernel-heavy work (relaxation)", "x", _pipeline_speedup("compute")),
    # The size is the chapter's headline one (gdn.HEADLINE, gdn.BATCH; a test checks): the
    # ratio depends strongly on it, and the GDN article's own size is another.
    ("8", "algorithm 2 (a launch per channel) / algorithm 3 (shared memory), whole-gradient "
     "time (reduction included), 64 channels, 128 x 128 images, batch of 4", "x",
     _gdn_per_channel_over_shared),
    ("10", "privatized / global-atomic histogram, skewed bytes", "x", _privatization_gain),
]


def _paths_arg(paths):
    if paths is None:
        return records.available()
    if isinstance(paths, (str, Path)) or not hasattr(paths, "__iter__"):
        raise TypeError(f"paths must be a list of record files, not {type(paths).__name__}.")
    out = [Path(p) for p in paths]
    missing = [str(p) for p in out if not p.is_file()]
    if missing:
        raise ValueError(f"paths={missing} are not files; pass record files written by "
                         "`python -m gpuperf.record` (or leave paths out for the shipped ones).")
    return out


def headline_rows(paths=None) -> list[dict]:
    """One row per headline ratio; one column per GPU (by the record's GPU name).

    A ratio that a record cannot give (an experiment it lacks, rows of another shape) is
    ``None`` for that GPU, never a guess. A GPU whose results came from other code than
    today's (``Result.code_status``) says so in its column's name.
    """
    files = _paths_arg(paths)
    if paths is None:   # the reference GPU first, as in the devices page's first table
        files = sorted(files, key=lambda f: f.stem != records.REFERENCE)
    # A "best version" ratio is compared across GPUs over the versions every record holds
    # (those of the records that have the experiment): a version one record lacks would make
    # the difference one of code, not of hardware.
    raw = {}

    def full(name, path):
        if (name, path) not in raw:
            try:
                raw[name, path] = records.recorded(name, path=path)
            except (LookupError, KeyError, ValueError) as exc:
                raw[name, path] = exc
        res = raw[name, path]
        if isinstance(res, Exception):
            raise res
        return res

    def common_versions(name):
        sets = []
        for path in files:
            try:
                res = full(name, path)
            except (LookupError, KeyError, ValueError):
                continue
            sets.append({r.get("version") for r in res.rows})
        return set.intersection(*sets) if sets else set()

    gpus = []
    for path in files:
        cache, whole = {}, {}

        def get_whole(name, path=path, whole=whole):
            if name not in whole:
                whole[name] = full(name, path)
            return whole[name]

        def get(name, path=path, cache=cache):
            if name not in cache:
                res = full(name, path)
                if len(files) > 1 and res.rows and all("version" in r for r in res.rows):
                    keep = common_versions(name)
                    dropped = [str(r["version"]) for r in res.rows if r["version"] not in keep]
                    if dropped:
                        res = replace(res, rows=[r for r in res.rows if r["version"] in keep],
                                      meta={**res.meta, "_left_out": dropped})
                cache[name] = res
            return cache[name]

        data = records.load(path)
        provs = [e.get("provenance", {}) for e in data["experiments"].values()]
        gpu = next((p.get("gpu") for p in provs if p.get("gpu")), path.stem)
        if paths is None and path.stem == records.REFERENCE:
            gpu += " (reference)"
        gpus.append([gpu, get, cache, get_whole])
    rows = []
    for chapter, what, kind, fn in HEADLINES:
        row = {"chapter": chapter, "ratio": what, "kind": kind}
        notes = []
        for gpu, get, cache, get_whole in gpus:
            before = set(cache)
            try:
                row[gpu] = float(fn(get))
            except (LookupError, KeyError, ValueError, ZeroDivisionError, TypeError):
                row[gpu] = None
            dropped = [v for name in sorted(set(cache) - before)
                       for v in cache[name].meta.get("_left_out", [])]
            if not dropped or row[gpu] is None:
                continue
            try:
                with_them = float(fn(get_whole))
            except (LookupError, KeyError, ValueError, ZeroDivisionError, TypeError):
                continue
            if abs(with_them - row[gpu]) > 1e-12 * abs(row[gpu]):
                # said in the row: how many kernels one record alone holds (by count: their
                # labels are the record's, not the book's words), and the ratio with them
                many = len(dropped) > 1
                notes.append(f"{gpu.split(' (')[0]} without {len(dropped)} "
                             + f"version{'s' if many else ''} that no other record holds "
                             + f"(with {'them' if many else 'it'}: {_fmt(with_them, kind)})")
        if notes:
            row["ratio"] = what + "; over the versions every record holds: " + "; ".join(notes)
        rows.append(row)
    # Name the GPUs whose ratios came (in part) from other code than today's.
    for entry in gpus:
        gpu, _, cache, _ = entry
        status = {res.code_status for res in cache.values()}
        note = ("" if status <= {"same"} else " (some with earlier code)" if "other" in status
                else " (code not fingerprinted)")
        if note:   # renamed in place: the columns keep the files' order
            rows[:] = [{(k + note if k == gpu else k): v for k, v in row.items()} for row in rows]
    return rows


def _fmt(value, kind):
    if value is None:
        return "-"
    return f"{100 * value:.0f}%" if kind == "%" else f"{value:.2f}x" if value < 10 else f"{value:.0f}x"


def show(paths=None) -> None:
    """The headline ratios side by side, one column per recorded GPU (HTML in Jupyter)."""
    rows = headline_rows(paths)
    gpus = [k for k in (rows[0] if rows else {}) if k not in ("chapter", "ratio", "kind")]
    if not gpus:
        print("No record files are shipped yet: run `python -m gpuperf.record` on a GPU.")
        return
    try:
        from IPython.display import HTML, display
    except ImportError:
        for r in rows:
            print(f"{r['chapter']:>4} {r['ratio']:<72} "
                  + "  ".join(_fmt(r[g], r["kind"]) for g in gpus))
        return
    head = ("<th>ch.</th><th class='t'>ratio (both measured in one run on one GPU)</th>"
            + "".join(f"<th>{html.escape(g)}</th>" for g in gpus))
    body = "".join(
        f"<tr><td class='t'>{html.escape(r['chapter'])}</td><td class='t'>{html.escape(r['ratio'])}</td>"
        + "".join(f"<td>{_fmt(r[g], r['kind'])}</td>" for g in gpus) + "</tr>" for r in rows)
    display(HTML(f"<table class='gp-table'><thead><tr>{head}</tr></thead>"
                 f"<tbody>{body}</tbody></table>"))
