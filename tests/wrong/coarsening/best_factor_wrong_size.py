"""Reads the fastest factor at n = 1024 instead of n = 4096 (on the recorded H200 sweep both
sizes have the same fastest factor, so the recorded sweep alone cannot tell)."""

CHECKER = "check_best_factor"


def student(sweep):
    best = max(sweep.select(tile=32, n=1024), key=lambda r: r["tflops"])
    return {"best_factor": best["factor"], "blocks_per_sm": best["blocks_per_sm"],
            "occupancy": best["occupancy"],
            "blocks_at_1024": sweep.one(tile=32, n=1024, factor=16)["blocks"],
            "blocks_per_sm_above": {r["factor"]: r["blocks_per_sm"] for r in sweep.select(tile=32, n=4096)
                                    if r["factor"] > best["factor"]}}
