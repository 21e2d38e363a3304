"""Forgot @cuda.jit."""
kernel = None
