"""Returns the exact quotient, not a whole number of loads."""
CHECKER = "check_loads_needed"


def student(ceiling_gbps, latency_ns, warps_per_sm, sm_count, bytes_per_load):
    return ceiling_gbps * latency_ns / (warps_per_sm * sm_count * 32 * bytes_per_load)
