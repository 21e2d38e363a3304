"""The mode this session runs in, decided once, before anything imports ``numba.cuda``.

* ``MODE``: ``"gpu"`` (a CUDA GPU is present: kernels run on it, experiments measure live),
  ``"simulator"`` (no GPU: Numba's CUDA simulator runs kernels for correctness at small sizes,
  and experiments replay results recorded on a reference GPU) or ``"compile"`` (the real CUDA
  target with no GPU: kernels compile to PTX but cannot launch).
* ``SIMULATOR``: ``MODE == "simulator"``.

Every module of the package that touches ``numba.cuda`` imports this module first (``from
gpuperf.mode import SIMULATOR``); ``import gpuperf`` does too. ``GPUPERF_MODE=gpu``,
``=simulator`` or ``=compile`` forces a mode; the detection itself is in ``gpuperf._mode``.
"""

from __future__ import annotations

import sys

from . import _mode

GPU = _mode.GPU
COMPILE = _mode.COMPILE
ModeError = _mode.ModeError
SIMULATOR_BANNER = _mode.SIMULATOR_BANNER
STATIC_ENV = _mode.STATIC_ENV
static_book = _mode.static_book

MODE: str = _mode.select_mode()
SIMULATOR: bool = MODE == _mode.SIMULATOR

if SIMULATOR:
    from . import simwarp as _simwarp

    _simwarp.install()
    # Simulated threads hand the interpreter to each other at every barrier; a short
    # switch interval roughly halves the time a simulated launch takes.
    sys.setswitchinterval(1e-4)
    # To stderr: the reader of a notebook sees it, a program's output and the book do not.
    print(SIMULATOR_BANNER, file=sys.stderr)
