"""Takes the fastest row at n = 4096 over both tiles (16 and 32), not tile 32's."""

CHECKER = "check_best_factor"


def student(sweep):
    best = max((r for r in sweep.rows if r["n"] == 4096), key=lambda r: r["tflops"])
    return {"best_factor": best["factor"], "blocks_per_sm": best["blocks_per_sm"],
            "occupancy": best["occupancy"], "blocks_at_1024": 64,
            "blocks_per_sm_above": {r["factor"]: r["blocks_per_sm"] for r in sweep.select(tile=32, n=4096)
                                    if r["factor"] > best["factor"]}}
