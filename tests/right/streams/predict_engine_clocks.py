"""Correct: the in-order pipeline as three engine clocks and, per stream, the time its last
copy back finished."""
NOTEBOOK, LABEL = "07_streams", "ex-streams-predict"


def predict_ms(h2d_ms, kernel_ms, d2h_ms, n_streams):
    copy_in = compute = copy_out = 0.0
    stream_done = [0.0] * n_streams
    for i, (h, k, d) in enumerate(zip(h2d_ms, kernel_ms, d2h_ms)):
        copy_in = max(copy_in, stream_done[i % n_streams]) + h
        compute = max(compute, copy_in) + k
        copy_out = max(copy_out, compute) + d
        stream_done[i % n_streams] = copy_out
    return copy_out
