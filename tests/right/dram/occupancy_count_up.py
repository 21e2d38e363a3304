"""Correct: adds blocks to the SM one at a time while every resource still fits, instead of
dividing; registers and shared memory rounded with math.ceil."""
import math

import gpuperf as gp

NOTEBOOK, LABEL = "03_latency_hiding", "ex-dram-occupancy"


def blocks_per_sm(threads, registers, shared_bytes, facts):
    cc = tuple(facts["compute_capability"])
    warps = math.ceil(threads / 32)
    regs = warps * math.ceil(registers * 32 / 256) * 256
    smem = math.ceil(shared_bytes / 128) * 128 + (1024 if cc >= (8, 0) else 0)
    n = 0
    while (n + 1 <= gp.device.MAX_BLOCKS_PER_SM[cc]
           and (n + 1) * warps * 32 <= facts["max_threads_per_sm"]
           and (n + 1) * regs <= facts["registers_per_sm"]
           and (n + 1) * smem <= facts["shared_per_sm"]):
        n += 1
    return n
