"""Compiling a student's kernel for sm_75 and sm_90 from the simulator (gpuperf.targets)."""

import numpy as np
from numba import cuda, float32

from gpuperf import exercises as ex
from gpuperf import targets

LIMIT = np.float32(-np.inf)
SETTINGS = {"block": 64}


@cuda.jit(device=True)
def _twice(v):
    return v + v


def _make_scaled(factor):
    @cuda.jit
    def scaled(x, out, n):
        tile = cuda.shared.array(32, float32)
        i = cuda.grid(1)
        tile[cuda.threadIdx.x % 32] = x[i] if i < n else LIMIT
        cuda.syncthreads()
        if i < n:
            out[i] = _twice(tile[cuda.threadIdx.x % 32]) * factor
    return scaled


@cuda.jit
def _shape_from_block(x):
    tile = cuda.shared.array(cuda.blockDim.x, float32)
    tile[cuda.threadIdx.x] = x[0]


@cuda.jit
def _uses_a_dict(x):
    x[0] = SETTINGS["block"]


ARGS = (np.zeros(8, np.float32), np.zeros(8, np.float32), 8)


def test_the_bundle_carries_closures_constants_and_device_functions():
    kernel = _make_scaled(3)
    text = targets.bundle(kernel)
    assert "factor = 3" in text and "LIMIT = np.float32(float('-inf'))" in text
    assert "_twice = cuda.jit(device=True)(_twice)" in text
    assert "@cuda.jit" not in text  # decorators are applied by the bundle, not copied
    assert targets.compile_for_targets(kernel, ARGS) == {"7.5": None, "9.0": None}


def test_a_kernel_no_gpu_compiles_fails_in_plain_words():
    result = targets.compile_for_targets(_shape_from_block, (np.zeros(4, np.float32),))
    assert all(result.values())
    chk = ex.Checker("compile")
    assert not targets.check_compiles(chk, _shape_from_block, (np.zeros(4, np.float32),))
    report = chk.report(show=False)
    assert "must be known when the kernel compiles" in report.failed[0][1]
    assert " at 0x" not in report.failed[0][1]


def test_what_cannot_be_written_out_is_skipped_with_a_note():
    chk = ex.Checker("compile")
    assert targets.check_compiles(chk, _uses_a_dict, (np.zeros(4, np.float32),))
    report = chk.report(show=False)
    assert not report.failed and "SETTINGS is a dict" in report.notes[0]


def test_argument_types_follow_numbas_typing():
    x = np.zeros((4, 6), np.float32)
    assert targets.argument_types((x, x[:, ::2], 3, 2.5, np.float32(1), True)) == [
        ["array", "float32", 2, "C"], ["array", "float32", 2, "A"], ["scalar", "int64"],
        ["scalar", "float64"], ["scalar", "float32"], ["scalar", "bool"]]
    assert targets.argument_types([cuda.to_device(x)]) == [["array", "float32", 2, "C"]]


def test_plain_words_names_the_usual_causes():
    assert "32- and 64-bit" in targets.plain_words("No implementation of atomic.add for int16")
    assert targets.plain_words("TypingError: x\nThere are 2 candidate implementations:\n y") == (
        "TypingError: x.")
