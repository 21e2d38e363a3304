"""Correct: walks the bursts that N's tile rows span (first to last byte of each row), not the
elements, and returns the channels as a sorted list built from a set comprehension."""
NOTEBOOK, LABEL = "03_dram", "ex-dram-phase-channels"


def phase_channels(width, tile, phase, burst_bytes, channels):
    last_row = min(phase * tile + tile, width) - 1
    first = phase * tile * width * 4 // burst_bytes
    last = ((last_row + 1) * width * 4 - 1) // burst_bytes
    return sorted({k % channels for k in range(first, last + 1)})
