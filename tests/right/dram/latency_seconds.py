"""Correct: works in seconds, then converts to nanoseconds."""
NOTEBOOK, LABEL = "03_latency_hiding", "ex-dram-step-latency"


def step_latency(ms_short, ms_long, steps):
    seconds = (ms_long - ms_short) / 1000
    return seconds / steps * 1_000_000_000
