"""Wrong (issue 63, right only at the visible GPUs): every limit read from facts, but the 1 KiB
of shared memory reserved per block added only from compute capability 9.0: right on a T4 and on
Hopper, wrong on an A100 (8.0) wherever shared memory sets the limit."""
CHECKER = "check_blocks_per_sm"


def student(threads, registers, shared_bytes, facts):
    warps = -(-threads // 32)
    per_warp = -(-registers * 32 // 256) * 256
    reserved = 1024 if tuple(facts["compute_capability"]) >= (9, 0) else 0
    limits = [facts["max_threads_per_sm"] // (warps * 32),
              {(7, 5): 16, (8, 0): 32, (8, 6): 16, (8, 9): 24}.get(
                  tuple(facts["compute_capability"]), 32),
              facts["registers_per_sm"] // (warps * per_warp)]
    if shared_bytes:
        limits.append(facts["shared_per_sm"] // (-(-shared_bytes // 128) * 128 + reserved))
    return min(limits)
