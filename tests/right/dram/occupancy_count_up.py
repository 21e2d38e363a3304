"""Correct: adds blocks to the SM one at a time while every resource still fits, instead of
dividing; registers and shared memory rounded with math.ceil, registers counted per
sub-partition (a quarter of the register file holds whole warps)."""
import math

import gpuperf as gp

NOTEBOOK, LABEL = "03_latency_hiding", "ex-dram-occupancy"


def blocks_per_sm(threads, registers, shared_bytes, facts):
    cc = tuple(facts["compute_capability"])
    warps = math.ceil(threads / 32)
    per_warp = math.ceil(registers * 32 / 256) * 256
    warp_room = 4 * (facts["registers_per_sm"] // 4 // per_warp)   # warps the registers hold
    unit = 128 if cc >= (8, 0) else 256
    smem = math.ceil((shared_bytes + (1024 if cc >= (8, 0) else 0)) / unit) * unit
    n = 0
    while (n + 1 <= gp.device.MAX_BLOCKS_PER_SM[cc]
           and (n + 1) * warps * 32 <= facts["max_threads_per_sm"]
           and (n + 1) * warps <= warp_room
           and (n + 1) * smem <= facts["shared_per_sm"]):
        n += 1
    return n
