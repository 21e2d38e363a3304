"""Lets the last phase's tile run past the matrix's last row (no bounds test)."""
CHECKER = "check_phase_channels"


def student(width, tile, phase, burst_bytes, channels):
    used = set()
    for row in range(phase * tile, phase * tile + tile):
        for col in range(width):
            used.add((row * width + col) * 4 // burst_bytes % channels)
    return sorted(used)
