"""Correct: the three traffic counts from a table of (planes read, raw arrays moved)."""
NOTEBOOK, LABEL = "08_gdn_case_study", "ex-gdn-bytes"


def must_move(method, n_ch, n_samples):
    plane, raw = 4 * n_ch * n_samples, 4 * n_ch * n_ch * n_samples
    row = 4 * n_samples
    return {"replicate": 4 * plane + 9 * raw,
            "per_channel": n_ch * (plane + 2 * row) + raw}.get(method, 3 * plane + raw)
