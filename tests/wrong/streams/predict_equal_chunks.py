"""The textbook formula from the first chunk's times: wrong for uneven chunks and few streams."""
CHECKER = "check_predict"


def student(h2d_ms, kernel_ms, d2h_ms, n_streams):
    h, k, d = h2d_ms[0], kernel_ms[0], d2h_ms[0]
    return h + k + d + (len(h2d_ms) - 1) * max(h, k, d)
