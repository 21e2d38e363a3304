"""Correct: the host as a fourth engine in front of the other three, each a clock, and a
ring of stream-free times."""
NOTEBOOK, LABEL = "07_streams", "ex-streams-chunks"


def chunked_ms(h2d_total_ms, kernel_total_ms, d2h_total_ms, n_chunks, n_streams, issue_ms):
    stages = [issue_ms, h2d_total_ms / n_chunks, kernel_total_ms / n_chunks,
              d2h_total_ms / n_chunks]
    clocks = [0.0] * 4
    ring = [0.0] * n_streams
    for i in range(n_chunks):
        clocks[0] += stages[0]                      # the host issues chunk i
        ready = max(clocks[0], ring[i % n_streams])
        for e in (1, 2, 3):
            clocks[e] = max(clocks[e], ready) + stages[e]
            ready = clocks[e]
        ring[i % n_streams] = ready
    return clocks[3]
