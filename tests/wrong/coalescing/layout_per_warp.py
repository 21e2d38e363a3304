"""Right sectors, but the warp's bytes, not each particle's."""

CHECKER = "check_layout_bytes"

HINT = "divide by its 32 particles"


def kernel(layout, fields, used, elem_bytes):
    if layout == "SoA":
        return 32 * used * elem_bytes
    sectors = {(lane * fields + f) * elem_bytes // 32 for lane in range(32) for f in range(used)}
    return 32 * len(sectors)
