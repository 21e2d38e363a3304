"""Wrong (issue 63, right only at the visible examples): a closed form that holds while every
struct starts on a sector boundary. A struct of a sector or less is read whole; a larger one
costs the sectors of its used bytes, ceil(used x elem_bytes / 32) x 32, as if it began on a
sector. A 36-byte struct does not: some particles' used fields straddle two sectors."""
import math

CHECKER = "check_layout_bytes"


def kernel(layout, fields, used, elem_bytes):
    if layout == "SoA":
        return used * elem_bytes
    size = fields * elem_bytes
    if size <= 32:
        return size
    return math.ceil(used * elem_bytes / 32) * 32
