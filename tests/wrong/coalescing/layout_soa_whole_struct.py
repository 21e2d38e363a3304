"""A structure of arrays charged for every field, as if it were read whole too."""

CHECKER = "check_layout_bytes"

HINT = "a structure of arrays reads only the fields used"


def kernel(layout, fields, used, elem_bytes):
    if layout == "SoA":
        return fields * elem_bytes
    sectors = {(lane * fields + f) * elem_bytes // 32 for lane in range(32) for f in range(used)}
    return len(sectors)
