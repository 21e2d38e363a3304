"""Correct: counts the bytes each thread moves per element (read and written, 2 x 4) against the
copy's bandwidth: the same quotient as halving the bandwidth, written the other way."""
import math

NOTEBOOK, LABEL = "03_latency_hiding", "ex-dram-copy-loads"


def copy_loads_needed(copy_gbps, latency_ns, warps_per_sm, sm_count, bytes_per_load):
    moved_per_load = 2 * bytes_per_load  # a load in flight stands for a read and a write
    threads = warps_per_sm * 32 * sm_count
    return math.ceil(copy_gbps * latency_ns / (threads * moved_per_load))
