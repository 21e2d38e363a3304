"""Takes the copy's bandwidth (bytes read plus written) for the rate of the loads: twice the
loads in flight that a copy needs (the chapter's own factor-two error before issue 60)."""
import math

CHECKER = "check_copy_loads_needed"


def student(copy_gbps, latency_ns, warps_per_sm, sm_count, bytes_per_load):
    return math.ceil(copy_gbps * latency_ns / (warps_per_sm * sm_count * 32 * bytes_per_load))
