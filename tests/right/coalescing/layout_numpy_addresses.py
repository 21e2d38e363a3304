"""Correct: one rule for both layouts, on NumPy arrays of byte addresses (a structure of
arrays is fields arrays far apart, each starting on a sector), returning a NumPy integer."""
import numpy as np

NOTEBOOK, LABEL = "02_coalescing", "ex-coalescing-layout-bytes"


def bytes_per_particle(layout, fields, used, elem_bytes):
    lane = np.arange(32)[:, None]
    field = np.arange(used)[None, :]
    if layout == "AoS":
        element = lane * fields + field
    else:
        element = field * 32 * 1024 + lane  # field f's array starts 128 KiB * elem_bytes on
    touched = np.unique(element * elem_bytes // 32)
    return touched.size * 32 // 32
