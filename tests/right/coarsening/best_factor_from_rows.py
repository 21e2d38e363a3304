"""Correct: the fastest factor found by sorting the sweep's rows (not max), its occupancy
taken as a plain float, and the block count at n = 1024 worked out from the launch's grid
(ceil(N / (tile * factor)) x ceil(M / tile)) instead of read from the sweep."""
import math

from gpuperf import records

NOTEBOOK, LABEL = "05_coarsening", "ex-coarsening-best-factor"


sweep = records.run("matmul_coarsen_sweep")  # what the chapter's sweep cell shows


def read_sweep(sweep):
    at_4096 = [row for row in sweep.select(tile=32) if row["n"] == 4096]
    fastest = sorted(at_4096, key=lambda row: -row["tflops"])[0]
    return {
        "best_factor": int(fastest["factor"]),
        "blocks_per_sm": int(fastest["blocks_per_sm"]),
        "occupancy": float(fastest["occupancy"]),
        "blocks_per_sm_above": {int(row["factor"]): int(row["blocks_per_sm"]) for row in at_4096
                                if row["factor"] > fastest["factor"]},
        "blocks_at_1024": math.ceil(1024 / (32 * 16)) * math.ceil(1024 / 32),
    }
