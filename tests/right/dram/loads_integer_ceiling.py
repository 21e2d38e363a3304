"""Correct: Little's law with the ceiling taken by negated floor division, as an int."""
NOTEBOOK, LABEL = "03_latency_hiding", "ex-dram-loads"


def loads_needed(ceiling_gbps, latency_ns, warps_per_sm, sm_count, bytes_per_load):
    threads = warps_per_sm * 32 * sm_count
    bytes_in_flight = latency_ns * ceiling_gbps  # ns x GB/s = bytes
    return int(-(-bytes_in_flight // (threads * bytes_per_load)))
