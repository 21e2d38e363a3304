"""The in-order pipeline with unlimited streams: forgets that a stream's next chunk waits."""
CHECKER = "check_predict"


def student(h2d_ms, kernel_ms, d2h_ms, n_streams):
    h = k = d = 0.0
    for th, tk, td in zip(h2d_ms, kernel_ms, d2h_ms):
        h = h + th
        k = max(k, h) + tk
        d = max(d, k) + td
    return d
