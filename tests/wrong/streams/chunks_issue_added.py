"""The issue time added after the pipeline, as if the host issued everything before the
engines started."""
CHECKER = "check_chunks"


def student(h2d_total_ms, kernel_total_ms, d2h_total_ms, n_chunks, n_streams, issue_ms):
    h, k, d = (t / n_chunks for t in (h2d_total_ms, kernel_total_ms, d2h_total_ms))
    h_end = k_end = d_end = 0.0
    done = []
    for i in range(n_chunks):
        free = done[i - n_streams] if i >= n_streams else 0.0
        h_end = max(h_end, free) + h
        k_end = max(k_end, h_end) + k
        d_end = max(d_end, k_end) + d
        done.append(d_end)
    return d_end + n_chunks * issue_ms
