"""Correct: Little's law in SI units (bytes per second times seconds), rounded up with
math.ceil. Where the exact quotient is a whole number, the conversions through 1e9 and 1e-9
leave it a hair over (4096 GB/s x 500 ns is 2,048,000.0000000005 bytes), and the ceiling is
one more: right up to floating point, and accepted."""
import math

NOTEBOOK, LABEL = "03_latency_hiding", "ex-dram-loads"


def loads_needed(ceiling_gbps, latency_ns, warps_per_sm, sm_count, bytes_per_load):
    bytes_per_second = ceiling_gbps * 1e9
    latency_s = latency_ns * 1e-9
    bytes_in_flight = bytes_per_second * latency_s
    threads = warps_per_sm * 32 * sm_count
    return math.ceil(bytes_in_flight / (threads * bytes_per_load))
