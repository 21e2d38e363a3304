"""Rounds up with int(x) + 1: the ceiling wherever x is not whole, one too many where it is."""
CHECKER = "check_loads_needed"


def student(ceiling_gbps, latency_ns, warps_per_sm, sm_count, bytes_per_load):
    return int(ceiling_gbps * latency_ns / (warps_per_sm * sm_count * 32 * bytes_per_load)) + 1
