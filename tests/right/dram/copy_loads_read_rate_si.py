"""Correct: the read rate in bytes per second, the latency in seconds, ceiling by negated floor
division."""
NOTEBOOK, LABEL = "03_latency_hiding", "ex-dram-copy-loads"


def copy_loads_needed(copy_gbps, latency_ns, warps_per_sm, sm_count, bytes_per_load):
    read_bytes_per_s = copy_gbps * 1e9 / 2
    in_flight = read_bytes_per_s * latency_ns * 1e-9
    return int(-(-in_flight // (warps_per_sm * 32 * sm_count * bytes_per_load)))
