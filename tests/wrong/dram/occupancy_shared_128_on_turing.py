"""Wrong: rounds shared memory to 128 bytes on every GPU; before compute capability 8.0 the
unit is 256 (a T4, 64 threads, 10,800 B: 5 blocks, not 6)."""
import gpuperf as gp

CHECKER = "check_blocks_per_sm"


def student(threads, registers, shared_bytes, facts):
    cc = tuple(facts["compute_capability"])
    warps = -(-threads // 32)
    per_warp = -(-registers * 32 // 256) * 256
    per_block = -(-(shared_bytes + (1024 if cc >= (8, 0) else 0)) // 128) * 128
    return min(facts["max_threads_per_sm"] // 32 // warps, gp.device.MAX_BLOCKS_PER_SM[cc],
               facts["registers_per_sm"] // 4 // per_warp * 4 // warps,
               facts["shared_per_sm"] // per_block if per_block else 10**6)
