"""Record every experiment on this GPU: ``python -m gpuperf.record``.

Runs the experiments the notebooks show (all of them, or ``--only`` some), prints
progress, and writes ``<user folder>/<gpu>.json`` (``$GPUPERF_HOME/records`` or
``~/.local/share/gpuperf/records``; ``--out`` picks another file) with provenance for
each experiment: the GPU, driver, versions, date, device facts and the two ceilings
measured in the same run. It prints the ``GPUPERF_RECORD=...`` line that replays it.
Results are saved (atomically) after each experiment, so an interrupted run keeps what
it finished. With ``--only``, the other experiments already in the file keep their own
provenance; an experiment whose re-record fails keeps its older rows, marked as such.
The records shipped inside the package are written only with ``--into-package``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from . import bench, records, store
from .mode import SIMULATOR


def _err(msg: str) -> int:
    print(f"error: {msg}", file=sys.stderr)
    return 2


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
        return True
    except ValueError:
        return False


def _check_out(out: Path, gpu: str, into_package: bool):
    """Refuse an output that cannot be written, is corrupt, holds another GPU's record,
    or is shipped with the package (without --into-package) -- before measuring."""
    if out.is_dir():
        return None, f"--out {out} is a folder; give a file name such as {out / 'my-gpu.json'}."
    if out.suffix.lower() != ".json":
        return None, f"--out {out} must end in .json (a record file)."
    if _inside(out, store.DATA_DIR) and not into_package:
        return None, (f"{out} is inside the installed package (its shipped records, which the "
                      "book replays). Write to your own folder (the default, or --out), or pass "
                      "--into-package if you really mean to change the package's records.")
    data = {"format": records.FORMAT, "gpu": gpu, "experiments": {}}
    if out.exists():
        try:
            data = records.load(out)
        except (ValueError, OSError) as err:
            return None, f"--out {out} exists but is not a readable record ({err}); " \
                         "move it away or choose another --out."
        if data.get("gpu") not in (None, gpu):
            return None, (f"{out} holds a record of {data.get('gpu')}, and this GPU is {gpu}: "
                          "merging would mix two GPUs in one file. Choose another --out "
                          "(the default is named after this GPU).")
    parent = out.parent
    probe = parent
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        return None, f"cannot write {out}: {probe} is a file, not a folder; choose another --out."
    if not os.access(probe, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
        return None, f"cannot write {out} (no write permission); choose another --out."
    return data, None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gpuperf.record",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="", help="comma-separated experiment names or prefixes "
                    "(e.g. reduce_ or gridstride_launch_sweep)")
    ap.add_argument("--skip", default="", help="comma-separated names or prefixes to leave out")
    ap.add_argument("--out", default=None, help="output file (default: "
                    "$GPUPERF_HOME/records/<gpu>.json or ~/.local/share/gpuperf/records/<gpu>.json)")
    ap.add_argument("--into-package", action="store_true",
                    help="write into the package's shipped records (src/gpuperf/data/<gpu>.json)")
    ap.add_argument("--list", action="store_true", help="list the experiments and exit")
    args = ap.parse_args(argv)

    exps = records.experiments()
    for mod, err in records.BROKEN.items():
        print(f"warning: chapter module {mod} failed to import, its experiments are missing: "
              f"{err}", file=sys.stderr)
    if args.list:
        for name, e in exps.items():
            print(f"{name:40s} {e.chapter:12s} {e.title}")
        return 0

    def picks(spec):
        return [s.strip() for s in spec.split(",") if s.strip()]

    only, skip = picks(args.only), picks(args.skip)
    for p in only + skip:
        if not any(n == p or n.startswith(p) for n in exps):
            return _err(f"no experiment is called or starts with {p!r}; "
                        "see `python -m gpuperf.record --list`.")
    chosen = [n for n in exps
              if (not only or any(n == p or n.startswith(p) for p in only))
              and not any(n == p or n.startswith(p) for p in skip)]
    if not chosen:
        return _err("--only/--skip leave no experiment to record.")

    if SIMULATOR:
        return _err("recording needs a GPU, and this session runs on Numba's CUDA simulator "
                    "(no GPU found). Run it on a GPU machine or a Colab GPU runtime.")

    prov = records.provenance()
    gpu = prov["gpu"]
    if args.out:
        out = Path(args.out).expanduser()
    elif args.into_package:
        out = store.DATA_DIR / f"{records.slug(gpu)}.json"
    else:
        out = records.user_dir() / f"{records.slug(gpu)}.json"
    data, problem = _check_out(out, gpu, args.into_package)
    if problem:
        return _err(problem)
    data["gpu"] = gpu

    print(f"Recording {len(chosen)} experiment(s) on {gpu} -> {out}", flush=True)
    t0 = time.perf_counter()
    ceil = bench.ceilings()
    print(f"ceilings: copy {ceil['copy_gbps']:.0f} GB/s, theoretical {ceil['peak_gbps'] or 0:.0f} "
          f"GB/s, cuBLAS FP32 {ceil['matmul_tflops'] or float('nan'):.1f} TFLOP/s", flush=True)
    entry_prov = {**prov, "ceilings": ceil}
    failed = []
    for i, name in enumerate(chosen, 1):
        print(f"== [{i}/{len(chosen)}] {name}: {exps[name].title}", flush=True)
        t = time.perf_counter()
        try:
            rows = exps[name].fn(lambda m: print("   " + m, flush=True))
            records._check_rows(name, rows)
        except Exception as err:  # keep recording the others; report at the end
            failed.append(name)
            print(f"   FAILED: {type(err).__name__}: {err}", flush=True)
            old = data["experiments"].get(name)
            if old is not None:
                # Keep the older rows under their own provenance, marked as not re-recorded.
                old["failed"] = {"gpu": gpu, "date": prov["date"],
                                 "error": f"{type(err).__name__}: {err}"[:500]}
                records.save(data, out)
                print(f"   kept the older rows ({old['provenance'].get('date')}), marked as "
                      "failed to re-record", flush=True)
            continue
        secs = time.perf_counter() - t
        # The code it ran (its function and the chapter modules it imports): a replay says
        # whether today's code is what was measured.
        data["experiments"][name] = {"provenance": {**entry_prov,
                                                    "code": records.code_fingerprint(name)},
                                     "meta": {"seconds": round(secs, 1)}, "rows": rows}
        records.save(data, out)
        print(f"   {len(rows)} rows in {secs:.1f} s", flush=True)
    print(f"done in {time.perf_counter() - t0:.0f} s; wrote {out}", flush=True)
    print(f"Replay it with:\n  GPUPERF_RECORD={out}", flush=True)
    if failed:
        print(f"FAILED: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
