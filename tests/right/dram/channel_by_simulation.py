"""Correct: simulates the banks taking turns on the bus, then measures the busy share exactly
(one period of the steady state: B bursts every max(B, R + 1) transfer times)."""
NOTEBOOK, LABEL = "03_dram", "ex-dram-channel-gbps"


def channel_delivers(ratio, banks, bus_gbps):
    period = max(banks, ratio + 1)  # a bank's turn comes back after R + 1, or after the others
    return bus_gbps * banks / period
