"""Right, computed another way: DRAM first if it crossed the line, else the busier level on
the chip found by sorting, and "latency" tested last, after asking whether either side crossed
the line."""
from gpuperf import records

NOTEBOOK, LABEL = "09_profiling", "ex-profiling-limiter"

answer = {}
for r in records.run("profiling_speed_of_light", live=False).rows:
    on_chip = sorted([(r["l2_pct"], "l2"), (r["l1_pct"], "l1")])
    busy = r["sm_pct"] >= 60 or r["memory_pct"] >= 60
    if busy and r["sm_pct"] > r["memory_pct"]:
        answer[r["kernel"]] = "COMPUTE"
    elif busy and r["dram_pct"] >= 60:
        answer[r["kernel"]] = "Dram"
    elif busy:
        answer[r["kernel"]] = on_chip[-1][1]
    else:
        answer[r["kernel"]] = "latency "
