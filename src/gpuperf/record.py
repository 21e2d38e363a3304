"""Record every experiment on this GPU: ``python -m gpuperf.record``.

Runs the experiments the notebooks show (all of them, or ``--only`` some), prints
progress, and writes ``src/gpuperf/data/<gpu>.json`` with provenance: the GPU,
driver, versions, date, and the two ceilings measured in the same run. Results are
saved after each experiment, so an interrupted run keeps what it finished. With
``--only``, the other experiments already in the file are kept.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from . import SIMULATOR, bench, records


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gpuperf.record", description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="", help="comma-separated experiment names or prefixes "
                    "(e.g. reduce_ or gridstride_launch_sweep)")
    ap.add_argument("--skip", default="", help="comma-separated names or prefixes to leave out")
    ap.add_argument("--out", default=None, help="output file (default: src/gpuperf/data/<gpu>.json)")
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
            print(f"error: no experiment is called or starts with {p!r}; "
                  "see `python -m gpuperf.record --list`.", file=sys.stderr)
            return 2
    chosen = [n for n in exps
              if (not only or any(n == p or n.startswith(p) for p in only))
              and not any(n == p or n.startswith(p) for p in skip)]

    if SIMULATOR:
        print("error: recording needs a GPU, and this session runs on Numba's CUDA simulator "
              "(no GPU found). Run it on a GPU machine or a Colab GPU runtime.", file=sys.stderr)
        return 2

    prov = records.provenance()
    out = Path(args.out) if args.out else records.DATA_DIR / f"{records.slug(prov['gpu'])}.json"
    data = records.load(out) if out.exists() else {"format": records.FORMAT, "experiments": {}}
    print(f"Recording {len(chosen)} experiment(s) on {prov['gpu']} -> {out}", flush=True)
    t0 = time.perf_counter()
    ceil = bench.ceilings()
    print(f"ceilings: copy {ceil['copy_gbps']:.0f} GB/s, theoretical {ceil['peak_gbps'] or 0:.0f} "
          f"GB/s, cuBLAS FP32 {ceil['matmul_tflops'] or float('nan'):.1f} TFLOP/s", flush=True)
    data["provenance"] = {**prov, "ceilings": ceil}
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
            continue
        secs = time.perf_counter() - t
        data["experiments"][name] = {
            "meta": {"date": prov["date"], "seconds": round(secs, 1), "ceilings": ceil},
            "rows": rows,
        }
        records.save(data, out)
        print(f"   {len(rows)} rows in {secs:.1f} s", flush=True)
    print(f"done in {time.perf_counter() - t0:.0f} s; wrote {out}", flush=True)
    if failed:
        print(f"FAILED: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
