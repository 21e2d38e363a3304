"""Compiling a student's kernel for sm_75 and sm_90 from the simulator (gpuperf.targets)."""

import numpy as np
import pytest
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


class _Config:
    TILE = 32


@cuda.jit
def _shape_from_a_class(x):
    tile = cuda.shared.array(_Config.TILE, float32)
    tile[cuda.threadIdx.x] = x[0]


TABLE = np.arange(4, dtype=np.float32)
BIG_TABLE = np.arange(targets.MAX_CONSTANT_ELEMENTS + 1, dtype=np.float32)
SCRATCH = np.zeros(4, np.float32)


@cuda.jit
def _reads_a_global_array(x):
    x[0] = TABLE[1]


@cuda.jit
def _reads_a_big_global_array(x):
    x[0] = BIG_TABLE[1]


@cuda.jit
def _shape_from_block_and_a_table(x):
    tile = cuda.shared.array(cuda.blockDim.x, float32)
    tile[cuda.threadIdx.x] = x[0] * TABLE[1]


@cuda.jit
def _writes_a_global_array(x):
    SCRATCH[cuda.threadIdx.x] = x[0]


@cuda.jit
def _atomic_into_a_global_array(x):
    cuda.atomic.max(SCRATCH, 0, x[0])


def _plain_helper(a):
    return a + 1


@cuda.jit
def _calls_a_plain_function(x):
    x[0] = _plain_helper(x[0])


_LAMBDA = lambda a: a + 1  # noqa: E731


@cuda.jit
def _calls_a_lambda(x):
    x[0] = _LAMBDA(x[0])


ARGS = (np.zeros(8, np.float32), np.zeros(8, np.float32), 8)


def test_the_bundle_carries_closures_constants_and_device_functions():
    kernel = _make_scaled(3)
    text = targets.bundle(kernel)
    assert "factor = 3" in text and "LIMIT = np.float32(float('-inf'))" in text
    assert "_twice = cuda.jit(device=True)(_twice)" in text
    assert "@cuda.jit" not in text  # decorators are applied by the bundle, not copied
    assert targets.compile_for_targets(kernel, ARGS) == {"7.5": None, "9.0": None}


# A notebook variable named like an attribute the kernel uses (a result table called grid).
grid = {"a table": 1}


@cuda.jit
def _copy_beside_a_global_named_grid(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        out[i] = x[i]


def test_a_global_named_like_an_attribute_stays_out_of_the_bundle():
    # cuda.grid is an attribute, not the global grid: the kernel compiles.
    text = targets.bundle(_copy_beside_a_global_named_grid)
    assert "grid =" not in text and "a table" not in text
    assert targets.compile_for_targets(_copy_beside_a_global_named_grid, ARGS[:2]) == {
        "7.5": None, "9.0": None}


def test_a_kernel_no_gpu_compiles_fails_in_plain_words():
    result = targets.compile_for_targets(_shape_from_block, (np.zeros(4, np.float32),))
    assert all(result.values())
    chk = ex.Checker("compile")
    assert not ex.check_compiles(chk, _shape_from_block, (np.zeros(4, np.float32),))
    report = chk.report(show=False)
    assert "must be known when the kernel compiles" in report.failed[0][1]
    assert " at 0x" not in report.failed[0][1]


def test_what_cannot_be_written_out_is_skipped_with_a_note():
    # Numba types a global array of any size (it becomes a constant), but the bundle writes
    # out only small ones: a larger one skips the compile, never fails it.
    chk = ex.Checker("compile")
    assert ex.check_compiles(chk, _reads_a_big_global_array, (np.zeros(4, np.float32),))
    report = chk.report(show=False)
    assert not report.failed and "BIG_TABLE is a ndarray" in report.notes[0]


def test_a_small_global_array_is_written_out_as_a_constant():
    # So a kernel that also reads a table is compiled, and its own mistakes are found.
    assert "TABLE = np.array([0, 1.0" in targets.bundle(_reads_a_global_array).replace(
        "float('0.0')", "0").replace("float('1.0')", "1.0")
    assert targets.compile_for_targets(_reads_a_global_array, (np.zeros(4, np.float32),)) == {
        "7.5": None, "9.0": None}
    result = targets.compile_for_targets(_shape_from_block_and_a_table, (np.zeros(4, np.float32),))
    assert all(result.values()) and "shared.array" in result["7.5"]


def test_writes_to_a_global_array_and_plain_python_calls_fail():
    # A global array is a read-only constant on a GPU; a plain Python function cannot be
    # called from a kernel: each fails the check, whatever the simulator makes of it.
    for kernel, words in ((_writes_a_global_array, "writes the global array SCRATCH"),
                          (_atomic_into_a_global_array, "writes the global array SCRATCH"),
                          (_calls_a_plain_function, "calls _plain_helper, a plain Python"),
                          (_calls_a_lambda, "calls _LAMBDA, a plain Python")):
        chk = ex.Checker("compile")
        assert not ex.check_compiles(chk, kernel, (np.zeros(4, np.float32),))
        why = chk.report(show=False).failed[0][1]
        assert words in why and "Atomics exist" not in why, why


def test_a_value_no_numba_target_can_type_fails_without_a_compile():
    # A class (a shared shape read from a class attribute) or a dict: every GPU compiler
    # refuses the kernel ("Untyped global name"), so the check fails rather than skips.
    for kernel, name, kind in ((_shape_from_a_class, "_Config", "a class"),
                               (_uses_a_dict, "SETTINGS", "a dict")):
        result = targets.compile_for_targets(kernel, (np.zeros(4, np.float32),))
        assert set(result) == {"7.5", "9.0"} and all(result.values())
        chk = ex.Checker("compile")
        assert not ex.check_compiles(chk, kernel, (np.zeros(4, np.float32),))
        why = chk.report(show=False).failed[0][1]
        assert f"uses {name}, {kind}" in why and "not Python objects" in why, why


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


def test_in_compiling_process_returns_json_and_names_a_failure():
    assert targets.in_compiling_process("json", "m.loads('[1, 2]')", what="a list") == [1, 2]
    with pytest.raises(RuntimeError, match="compiling the broken thing failed"):
        targets.in_compiling_process("json", "m.no_such_function()", what="the broken thing")


def test_compiles_ptx_checks_the_arguments_and_sends_the_call_to_a_compiling_process(
        monkeypatch):
    from gpuperf import validate

    sent = []
    monkeypatch.setattr(targets, "in_compiling_process",
                        lambda module, expr, *, what: sent.append((module, expr, what)) or "sent")

    @targets.compiles_ptx("the counting kernels", n=lambda n: validate.positive_int(n, "n"))
    def count(n=1, cc=(9, 0)):
        return {"n": n, "cc": cc}

    monkeypatch.setattr(targets, "SIMULATOR", True)
    assert count(3, [7, 5]) == "sent"
    assert count(cc=(9, 0)) == "sent"
    assert sent == [(__name__, "m.count(n=3, cc=(7, 5))", "the counting kernels"),
                    (__name__, "m.count(n=1, cc=(9, 0))", "the counting kernels")]
    with pytest.raises(ValueError, match="n"):
        count(0)
    with pytest.raises(TypeError, match="cc"):
        count(1, 9)
    assert len(sent) == 2, "a bad argument is refused here, before any process starts"

    monkeypatch.setattr(targets, "SIMULATOR", False)
    assert count(2, cc=[7, 5]) == {"n": 2, "cc": (7, 5)}, "where kernels compile, it runs here"


def test_compiles_ptx_refuses_a_function_it_cannot_serve():
    with pytest.raises(TypeError, match="no parameter cc"):
        targets.compiles_ptx("the kernels")(lambda n=1: n)
    with pytest.raises(TypeError, match="no parameter m"):
        targets.compiles_ptx("the kernels", m=int)(lambda n=1, cc=(9, 0): n)
    with pytest.raises(TypeError, match="the check for n"):
        targets.compiles_ptx("the kernels", n=3)
    with pytest.raises(ValueError, match="what"):
        targets.compiles_ptx(" ")


def test_compile_each_refuses_what_it_cannot_compile():
    with pytest.raises(TypeError, match="kernels"):
        targets.compile_each([], "void()", (9, 0))
    with pytest.raises(ValueError, match="kernels"):
        targets.compile_each({}, "void()", (9, 0))
    with pytest.raises(TypeError, match="signature"):
        targets.compile_each({"k": None}, None, (9, 0))
