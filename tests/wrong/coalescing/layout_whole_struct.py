"""An array of structures always costs its whole struct, even one larger than a sector."""

CHECKER = "check_layout_bytes"

HINT = "a struct larger than a sector is not read whole"


def kernel(layout, fields, used, elem_bytes):
    if layout == "SoA":
        return used * elem_bytes
    return fields * elem_bytes
