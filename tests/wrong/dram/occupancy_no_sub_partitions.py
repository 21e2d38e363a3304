"""Wrong: divides the whole register file by the block's registers, as if a block's warps could
share a sub-partition's leftover: 10 blocks of 160 threads at 40 registers on an H200, where
the register file's 4 sub-partitions hold 9."""
import gpuperf as gp

CHECKER = "check_blocks_per_sm"


def student(threads, registers, shared_bytes, facts):
    cc = tuple(facts["compute_capability"])
    warps = -(-threads // 32)
    per_warp = -(-registers * 32 // 256) * 256
    unit = 128 if cc >= (8, 0) else 256
    per_block = -(-(shared_bytes + (1024 if cc >= (8, 0) else 0)) // unit) * unit
    return min(facts["max_threads_per_sm"] // 32 // warps, gp.device.MAX_BLOCKS_PER_SM[cc],
               facts["registers_per_sm"] // (warps * per_warp),
               facts["shared_per_sm"] // per_block if per_block else 10**6)
