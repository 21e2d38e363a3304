"""Correct: the units spelled out (GB/s to bytes per second, ns to seconds), then divided by the
threads and the bytes per load one after the other (float noise at a whole number is allowed)."""
import math

NOTEBOOK, LABEL = "03_latency_hiding", "ex-dram-loads"


def loads_needed(ceiling_gbps, latency_ns, warps_per_sm, sm_count, bytes_per_load):
    bytes_in_flight = (ceiling_gbps * 1e9) * (latency_ns * 1e-9)
    threads = warps_per_sm * 32 * sm_count
    return math.ceil(bytes_in_flight / threads / bytes_per_load)
