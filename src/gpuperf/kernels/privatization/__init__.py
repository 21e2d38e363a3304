"""Privatization (chapter 10's checklist): a histogram with per-block private copies.

``gp.privatization`` (this package) re-exports every public name of its modules:

* ``kernels.py``: ``histogram_global``, ``histogram_global_stride``, ``make_private`` and
  their host side (``launch``, ``histogram``): the code the chapter shows.
* ``experiments.py``: ``privatization_histogram``, global atomics against per-block
  private copies on uniform and skewed bytes.
* ``checks.py``: ``check_private_histogram`` and ``check_attainable`` (the roofline
  exercise), with the data it counts (``random_bytes``)
  and the ground truth (``reference``).
* ``ptx.py``: ``PTX_TARGETS``, the kernels tests/test_ptx.py compiles.
"""

from .checks import (
    DISTRIBUTIONS,
    check_attainable,
    check_private_histogram,
    random_bytes,
    reference,
)
from .experiments import N_BYTES, histogram_experiment
from .kernels import (
    NBINS,
    VERSIONS,
    histogram,
    histogram_global,
    histogram_global_stride,
    launch,
    make_private,
)
from .ptx import PTX_TARGETS

__all__ = [
    "NBINS", "VERSIONS", "histogram_global", "histogram_global_stride", "make_private", "launch",
    "histogram", "DISTRIBUTIONS", "reference", "random_bytes", "check_private_histogram",
    "check_attainable",
    "N_BYTES", "histogram_experiment", "PTX_TARGETS",
]
