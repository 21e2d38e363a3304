"""Counts a warp as one thread."""
import math

CHECKER = "check_loads_needed"


def student(ceiling_gbps, latency_ns, warps_per_sm, sm_count, bytes_per_load):
    return math.ceil(ceiling_gbps * latency_ns / (warps_per_sm * sm_count * bytes_per_load))
