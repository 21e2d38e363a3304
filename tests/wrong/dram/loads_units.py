"""Converts GB/s to bytes per second but keeps the latency in ns: a factor 1e9 too many."""
import math

CHECKER = "check_loads_needed"


def student(ceiling_gbps, latency_ns, warps_per_sm, sm_count, bytes_per_load):
    return math.ceil(ceiling_gbps * 1e9 * latency_ns
                     / (warps_per_sm * sm_count * 32 * bytes_per_load))
