"""Wrong: returns the resident warps per SM, not the blocks."""
import gpuperf as gp

CHECKER = "check_blocks_per_sm"


def student(threads, registers, shared_bytes, facts):
    cc = tuple(facts["compute_capability"])
    warps = -(-threads // 32)
    per_warp = -(-registers * 32 // 256) * 256
    per_block = -(-shared_bytes // 128) * 128 + (1024 if cc >= (8, 0) else 0)
    blocks = min(facts["max_threads_per_sm"] // 32 // warps, gp.device.MAX_BLOCKS_PER_SM[cc],
                 facts["registers_per_sm"] // (warps * per_warp),
                 facts["shared_per_sm"] // per_block if per_block else 10**6)
    return blocks * warps
