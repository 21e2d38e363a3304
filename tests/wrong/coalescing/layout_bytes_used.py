"""Counts the bytes of the fields read, as if an array of structures were read in bytes."""

CHECKER = "check_layout_bytes"

HINT = "fetched in sectors, not in the bytes a warp uses"


def kernel(layout, fields, used, elem_bytes):
    return used * elem_bytes
