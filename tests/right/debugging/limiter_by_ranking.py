"""Right, computed another way: the busiest level of memory found by sorting, and "latency"
tested last, after asking whether either side crossed the line."""
from gpuperf import records

NOTEBOOK, LABEL = "09_profiling", "ex-profiling-limiter"

answer = {}
for r in records.run("profiling_speed_of_light", live=False).rows:
    levels = sorted([(r["dram_pct"], "dram"), (r["l2_pct"], "l2"), (r["l1_pct"], "l1")])
    busy = r["sm_pct"] >= 60 or r["memory_pct"] >= 60
    if busy and r["sm_pct"] > r["memory_pct"]:
        answer[r["kernel"]] = "COMPUTE"
    elif busy:
        answer[r["kernel"]] = levels[-1][1]
    else:
        answer[r["kernel"]] = "latency "
