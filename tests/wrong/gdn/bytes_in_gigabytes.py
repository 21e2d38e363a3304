"""Counts right, but returns GB (bytes / 1e9), not bytes."""

CHECKER = "check_moved_bytes"


def kernel(method, n_ch, n_samples):
    plane = 4 * n_ch * n_samples
    raw = 4 * n_ch * n_ch * n_samples
    if method == "replicate":
        nbytes = 4 * (plane + raw) + 5 * raw
    elif method == "per_channel":
        nbytes = n_ch * (plane + 2 * 4 * n_samples) + raw
    else:
        nbytes = 3 * plane + raw
    return nbytes / 1e9
