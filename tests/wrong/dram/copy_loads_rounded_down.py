"""Halves the copy's bandwidth but rounds down: too few loads to reach it."""
CHECKER = "check_copy_loads_needed"


def student(copy_gbps, latency_ns, warps_per_sm, sm_count, bytes_per_load):
    return int(copy_gbps / 2 * latency_ns // (warps_per_sm * sm_count * 32 * bytes_per_load))
