"""Counts each lane's sectors on its own, as if no two lanes shared a sector."""

CHECKER = "check_layout_bytes"

HINT = "count each of the warp's sectors once"


def kernel(layout, fields, used, elem_bytes):
    if layout == "SoA":
        return used * elem_bytes
    return 32 * len({f * elem_bytes // 32 for f in range(used)})
