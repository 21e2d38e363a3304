"""Counts w once for algorithm 2, though each of its N launches reads all of w again."""

CHECKER = "check_moved_bytes"


def kernel(method, n_ch, n_samples):
    plane, raw = 4 * n_ch * n_samples, 4 * n_ch * n_ch * n_samples
    return {"replicate": 9 * raw + 4 * plane, "per_channel": 3 * plane + raw,
            "shared": 3 * plane + raw, "registers": 3 * plane + raw}[method]
