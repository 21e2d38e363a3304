"""Forgot @cuda.jit."""

CHECKER = "check_padded_transpose"
kernel = None
