"""Wrong: int(q) + 1 in place of a ceiling: one load too many whenever the quotient is a whole
number (a reviewer playing a student; the checker's cases once avoided whole numbers)."""
CHECKER = "check_loads_needed"


def student(ceiling_gbps, latency_ns, warps_per_sm, sm_count, bytes_per_load):
    q = ceiling_gbps * latency_ns / (warps_per_sm * sm_count * 32 * bytes_per_load)
    return int(q) + 1
