"""Halves the copy's rate for the reads, then rounds up with int(x) + 1: one too many wherever
the loads come out a whole number."""
CHECKER = "check_copy_loads_needed"


def student(copy_gbps, latency_ns, warps_per_sm, sm_count, bytes_per_load):
    return int(copy_gbps / 2 * latency_ns / (warps_per_sm * sm_count * 32 * bytes_per_load)) + 1
