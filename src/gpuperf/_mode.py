"""Choose between a real GPU and Numba's CUDA simulator, before ``numba.cuda`` loads.

Numba reads ``NUMBA_ENABLE_CUDASIM`` once, when its configuration is loaded, and
``numba.cuda`` picks the real target or the simulator when it is first imported.
So the choice has to be made here, before anything imports ``numba.cuda``.

Detection asks the CUDA driver directly through ctypes (``cuInit`` and
``cuDeviceGetCount``) so that it never has to import ``numba.cuda`` to find out.
"""

from __future__ import annotations

import ctypes
import os
import sys
import warnings

GPU = "gpu"
SIMULATOR = "simulator"
# The real CUDA target with no GPU needed: kernels compile (to PTX) but cannot launch.
COMPILE = "compile"
# What ``import gpuperf`` says on stderr when there is no GPU (the self-check expects it there).
SIMULATOR_BANNER = ("gpuperf: no GPU here, so Numba's CUDA simulator runs the kernels (for "
                    "correctness, at small sizes); timings and figures are replayed from a "
                    "recorded reference GPU.")
_ENV = "GPUPERF_MODE"


class ModeError(RuntimeError):
    """The requested mode cannot be honoured on this machine."""


def _driver_gpu_count() -> int:
    """Number of CUDA devices the driver reports, 0 if there is no usable driver."""
    for lib in ("libcuda.so.1", "libcuda.so", "nvcuda.dll", "libcuda.dylib"):
        try:
            cuda = ctypes.CDLL(lib)
        except OSError:
            continue
        try:
            if cuda.cuInit(0) != 0:
                return 0
            count = ctypes.c_int(0)
            if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
                return 0
            return int(count.value)
        except AttributeError:
            return 0
    return 0


def _requested_mode() -> str | None:
    raw = os.environ.get(_ENV, "").strip().lower()
    if not raw or raw == "auto":
        return None
    if raw in ("gpu", "cuda"):
        return GPU
    if raw in ("simulator", "sim", "cudasim", "cpu"):
        return SIMULATOR
    if raw in ("compile", "ptx"):
        return COMPILE
    raise ModeError(
        f"{_ENV}={os.environ[_ENV]!r} is not a mode I know. "
        f"Use {_ENV}=gpu, {_ENV}=simulator, {_ENV}=compile (compile kernels only), or "
        "leave it unset to detect the GPU."
    )


def quiet_small_launches() -> None:
    """Silence Numba's two warnings about deliberately small work ("Grid size N will likely
    result in GPU under-utilization", "Host array used in CUDA kernel").

    The course launches one block or a handful on purpose (to show a tail, a single warp's
    round, the checkers' awkward sizes), and on a GPU each such launch printed a
    ``NumbaPerformanceWarning`` to stderr: pages of it in every chapter, drowning the
    warnings that matter. This is the one place it is turned off; set
    ``NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS=1`` yourself to see it again.
    """
    os.environ.setdefault("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")
    # Likewise "Host array used in CUDA kernel will incur copy overhead": the correctness
    # demos and checkers pass small NumPy arrays on purpose (the copy is the point there);
    # every timed path passes device arrays. NUMBA_CUDA_WARN_ON_IMPLICIT_COPY=1 brings it back.
    os.environ.setdefault("NUMBA_CUDA_WARN_ON_IMPLICIT_COPY", "0")
    if "numba" in sys.modules:
        import numba

        numba.config.CUDA_LOW_OCCUPANCY_WARNINGS = int(os.environ["NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS"])
        numba.config.CUDA_WARN_ON_IMPLICIT_COPY = int(os.environ["NUMBA_CUDA_WARN_ON_IMPLICIT_COPY"])


def select_mode() -> str:
    """Decide the mode, configure Numba for it, and return ``"gpu"`` or ``"simulator"``."""
    requested = _requested_mode()
    sim_env = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")
    numba_cuda_loaded = "numba.cuda" in sys.modules

    if numba_cuda_loaded:
        quiet_small_launches()
        # Too late to change anything else: report what numba.cuda already is.
        import numba

        active = SIMULATOR if numba.config.ENABLE_CUDASIM else GPU
        if requested == COMPILE and active == GPU:
            return COMPILE
        if active == GPU and _driver_gpu_count() == 0:
            if requested == GPU:
                raise ModeError(
                    f"{_ENV}=gpu was asked for, but the CUDA driver reports no GPU here. "
                    "On Colab choose Runtime > Change runtime type > T4 GPU; elsewhere check "
                    f"`nvidia-smi`. Or unset {_ENV} to run on Numba's CUDA simulator.")
            # numba.cuda is already loaded for a real GPU that is not there: kernels cannot
            # launch, but recorded results replay and kernels still compile.
            warnings.warn(
                "gpuperf was imported after numba.cuda, and there is no GPU: numba.cuda was "
                "loaded for a real GPU, so kernels cannot run in this session (recorded results "
                "and figures still replay). To run kernels on Numba's CUDA simulator, restart "
                "the kernel (or the interpreter) and import gpuperf before numba.cuda.",
                RuntimeWarning,
                stacklevel=3,
            )
            return COMPILE
        if requested and requested != active:
            warnings.warn(
                f"gpuperf was imported after numba.cuda, which is already running on the "
                f"{active}; {_ENV}={requested} cannot take effect. Restart the kernel (or "
                f"the interpreter) and import gpuperf before numba.cuda.",
                RuntimeWarning,
                stacklevel=3,
            )
        return active

    if requested is None:
        if sim_env:
            mode = SIMULATOR
        else:
            mode = GPU if _driver_gpu_count() > 0 else SIMULATOR
    else:
        mode = requested
        if mode == GPU and _driver_gpu_count() == 0:
            raise ModeError(
                f"{_ENV}=gpu was asked for, but the CUDA driver reports no GPU here. "
                "On Colab choose Runtime > Change runtime type > T4 GPU; elsewhere check "
                f"`nvidia-smi`. Or unset {_ENV} to run on Numba's CUDA simulator."
            )

    os.environ["NUMBA_ENABLE_CUDASIM"] = "1" if mode == SIMULATOR else "0"
    quiet_small_launches()
    if "numba" in sys.modules:
        import numba

        numba.config.reload_config()
    return mode


STATIC_ENV = "GPUPERF_STATIC_BOOK"


def static_book() -> bool:
    """True while the book is built (``GPUPERF_STATIC_BOOK=1``, set by book/_ext/gpuperf_book.py
    for the kernels the build starts): what a page shows is read later, with no kernel."""
    return os.environ.get(STATIC_ENV, "").strip() == "1"
