"""The serial sum: right for one stream only."""
CHECKER = "check_predict"


def student(h2d_ms, kernel_ms, d2h_ms, n_streams):
    return sum(h2d_ms) + sum(kernel_ms) + sum(d2h_ms)
