"""Wrong: the limits of a Hopper SM typed in (2048 threads, 32 blocks, 228 KiB, 1 KiB
reserved) instead of read from facts: right on an H100 or H200, wrong on a T4."""
CHECKER = "check_blocks_per_sm"


def student(threads, registers, shared_bytes, facts):
    warps = -(-threads // 32)
    per_warp = -(-registers * 32 // 256) * 256
    per_block = -(-shared_bytes // 128) * 128 + 1024
    return min(64 // warps, 32, 65536 // (warps * per_warp), 233472 // per_block)
