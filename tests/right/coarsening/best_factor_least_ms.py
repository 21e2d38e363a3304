"""Correct: the fastest factor as the row of least time (ms), rows filtered by hand, the blocks
of factor 16 at n = 1024 read from its row."""
from gpuperf import records

NOTEBOOK, LABEL = "05_coarsening", "ex-coarsening-best-factor"
sweep = records.run("matmul_coarsen_sweep")


def read_sweep(sweep):
    rows = [r for r in sweep.rows if r["tile"] == 32 and r["n"] == 4096]
    key = (lambda r: r["ms"]) if "ms" in rows[0] else (lambda r: -r["tflops"])
    best = min(rows, key=key)
    f16 = [r for r in sweep.rows if r["tile"] == 32 and r["n"] == 1024 and r["factor"] == 16][0]
    return {"best_factor": best["factor"], "blocks_per_sm": best["blocks_per_sm"],
            "occupancy": best["occupancy"], "blocks_at_1024": f16["blocks"],
            "blocks_per_sm_above": {r["factor"]: r["blocks_per_sm"] for r in rows
                                    if r["factor"] > best["factor"]}}
