"""Wrong (issue 63, right only at the visible GPUs): every limit read from facts, and the 1 KiB
reserved per block added on every GPU, a T4 (7.5) included, which reserves none: right on the
A100 and Hopper, wrong on a T4 wherever shared memory sets the limit."""
CHECKER = "check_blocks_per_sm"


def student(threads, registers, shared_bytes, facts):
    cc = tuple(facts["compute_capability"])
    warps = -(-threads // 32)
    per_warp = -(-registers * 32 // 256) * 256
    limits = [facts["max_threads_per_sm"] // (warps * 32),
              {(7, 5): 16, (8, 0): 32, (8, 6): 16, (8, 9): 24}.get(cc, 32),
              facts["registers_per_sm"] // (warps * per_warp)]
    if shared_bytes:
        limits.append(facts["shared_per_sm"] // (-(-shared_bytes // 128) * 128 + 1024))
    return min(limits)
