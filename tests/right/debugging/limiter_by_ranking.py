"""Right, computed another way: the level nearest the memory figure found by sorting the
distances, and "latency" tested last, after asking whether either side crossed the line."""
from gpuperf import records

NOTEBOOK, LABEL = "09_profiling", "ex-profiling-limiter"

answer = {}
for r in records.run("profiling_speed_of_light", live=False).rows:
    nearest = sorted((abs(r[f"{lv}_pct"] - r["memory_pct"]), lv) for lv in ("dram", "l2", "l1"))
    busy = r["sm_pct"] >= 60 or r["memory_pct"] >= 60
    if busy and r["sm_pct"] > r["memory_pct"]:
        answer[r["kernel"]] = "COMPUTE"
    elif busy:
        answer[r["kernel"]] = nearest[0][1].upper()
    else:
        answer[r["kernel"]] = "latency "
