"""Every kernel compiles to PTX for sm_75 (T4, Colab) and sm_90 (H100/H200), with no GPU.

The simulator replaces the real CUDA target for the whole process, so compilation runs in
a subprocess with GPUPERF_MODE=compile (the real target, no GPU needed). This catches typing
errors the simulator never sees (it runs kernels as Python).
"""

import json
import os
import subprocess
import sys

import pytest

# A module whose PTX_TARGETS could not be added when it was written, because the GPU
# self-check that ships with it ran before (adding them would change src/gpuperf/kernels after
# its self-check: tests/test_selfcheck.py): {module: [(kernel name, signature)]}, compiled
# from here until the module's next self-check moves the list into it.
PENDING: dict = {}

SCRIPT = r"""
import importlib, json, pkgutil, sys, traceback
import gpuperf
from gpuperf import kernels
from numba import cuda

results = []
for mod in pkgutil.iter_modules(kernels.__path__):
    if mod.name.startswith("_"):
        continue
    try:
        m = importlib.import_module(f"gpuperf.kernels.{mod.name}")
    except Exception as e:
        results.append({"module": mod.name, "kernel": "<import>", "cc": None,
                        "error": f"{type(e).__name__}: {e}"})
        continue
    targets = getattr(m, "PTX_TARGETS", None)
    if not targets and mod.name in PENDING:
        targets = [(getattr(m, name), sig) for name, sig in PENDING[mod.name]]
    if not targets:
        results.append({"module": mod.name, "kernel": "<PTX_TARGETS>", "cc": None,
                        "error": "the module defines no PTX_TARGETS"})
        continue
    for kernel, sig in targets:
        fn = getattr(kernel, "py_func", kernel)
        for cc in [(7, 5), (9, 0)]:
            row = {"module": mod.name, "kernel": fn.__name__, "sig": str(sig), "cc": list(cc)}
            try:
                ptx, _ = cuda.compile_ptx(fn, sig, cc=cc)
                row["ok"] = ".entry" in ptx or ".func" in ptx
                if not row["ok"]:
                    row["error"] = "no .entry in the PTX"
            except Exception as e:
                row["error"] = f"{type(e).__name__}: {str(e).strip().splitlines()[-1] if str(e).strip() else ''}"
            results.append(row)
# The timing tools' own kernels (gpuperf.bench): they run inside every measurement.
from gpuperf import bench
for kernel, sig in [(bench._hold_kernel(), "void(float32[::1], int64)"),
                    (bench._scribble_kernel(), "void(float32[::1], float32)"),
                    (bench._skim_kernel(), "void(float32[::1], float32[::1])")]:
    fn = kernel.py_func
    for cc in [(7, 5), (9, 0)]:
        row = {"module": "bench", "kernel": fn.__name__, "sig": sig, "cc": list(cc)}
        try:
            ptx, _ = cuda.compile_ptx(fn, sig, cc=cc)
            row["ok"] = ".entry" in ptx or ".func" in ptx
        except Exception as e:
            row["error"] = f"{type(e).__name__}: {e}"
        results.append(row)
print("PTXJSON" + json.dumps(results))
"""


def compile_mode(script: str, marker: str, timeout: int = 600):
    """Run ``script`` in a process of its own with GPUPERF_MODE=compile (the real CUDA target,
    no GPU needed) and return the JSON it printed after ``marker``."""
    env = {**os.environ, "GPUPERF_MODE": "compile"}
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                       timeout=timeout)
    line = next((ln for ln in r.stdout.splitlines() if ln.startswith(marker)), None)
    assert line, f"the compile-mode script did not run:\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}"
    return json.loads(line[len(marker):])


@pytest.fixture(scope="module")
def compiled():
    return compile_mode(f"PENDING = {PENDING!r}\n" + SCRIPT, "PTXJSON", timeout=1800)


def test_every_kernel_compiles_for_sm75_and_sm90(compiled):
    failures = [f"{r['module']}.{r['kernel']} {r.get('sig', '')} cc={r['cc']}: {r['error']}"
                for r in compiled if r.get("error")]
    assert not failures, "\n".join(failures)
    assert sum(1 for r in compiled if r.get("ok")) >= 6
    assert {tuple(r["cc"]) for r in compiled if r.get("ok")} == {(7, 5), (9, 0)}
    assert {r["kernel"] for r in compiled if r["module"] == "bench" and r.get("ok")} == {
        "hold", "scribble", "skim"}


ACCUMULATOR = r"""
import json, re
import gpuperf
from numba import cuda, float32

def double_acc(A, B, C):  # the Numba article's accumulator: tmp = 0. is a float64
    i, j = cuda.grid(2)
    if i < C.shape[0] and j < C.shape[1]:
        tmp = 0.
        for k in range(A.shape[1]):
            tmp += A[i, k] * B[k, j]
        C[i, j] = tmp

def float_acc(A, B, C):  # the course's: float32(0.0)
    i, j = cuda.grid(2)
    if i < C.shape[0] and j < C.shape[1]:
        tmp = float32(0.0)
        for k in range(A.shape[1]):
            tmp += A[i, k] * B[k, j]
        C[i, j] = tmp

ops = ("mul.f32", "fma.rn.f32", "cvt.f64.f32", "add.f64", "mul.f64", "fma.rn.f64")
out = {}
for fn in (double_acc, float_acc):
    ptx, _ = cuda.compile_ptx(fn, "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])",
                              cc=(7, 5))
    out[fn.__name__] = {op: len(re.findall(r"\b" + re.escape(op) + r"\b", ptx)) for op in ops}
print("OPS" + json.dumps(out))
"""


def test_a_float64_accumulator_adds_in_double_but_multiplies_in_float():
    """What chapter 4 says of the article's ``tmp = 0.``: the product of two float32 elements
    stays float32; each step converts it to double and adds in double (no fused multiply-add),
    where a float32 accumulator compiles to fused multiply-adds."""
    ops = compile_mode(ACCUMULATOR, "OPS")
    double, single = ops["double_acc"], ops["float_acc"]
    assert double["mul.f32"] > 0 and double["cvt.f64.f32"] == double["add.f64"] > 0
    assert double["mul.f64"] == double["fma.rn.f64"] == double["fma.rn.f32"] == 0
    assert single["fma.rn.f32"] > 0 and single["add.f64"] == single["cvt.f64.f32"] == 0


REMAINDER = r"""
import json
import gpuperf
from numba import cuda
from gpuperf.kernels import reduce as red
ptx, _ = cuda.compile_ptx(red.make_v0(256).py_func, "void(float32[::1], float32[::1], int64)",
                          cc=(9, 0))
print("PTX" + json.dumps(ptx))
"""


def test_v0s_remainder_takes_a_32_bit_path_when_its_operands_fit():
    """What chapter 6.2 says of v0's ``tid % (2 * s)``: computed on int64, and compiled to a
    test of the operands' high 32 bits (``and.b64 ..., -4294967296``) that picks ``rem.u32``
    when both fit (they do: thread indices), ``rem.s64`` otherwise, then the sign fix-up of
    Python's ``%`` (a result with the divisor's sign)."""
    ptx = compile_mode(REMAINDER, "PTX")
    guard, wide, narrow = (ptx.find(s) for s in ("-4294967296;", "rem.s64", "rem.u32"))
    assert 0 <= guard < wide < narrow, (guard, wide, narrow)
    assert "selp.b64" in ptx[narrow:]  # the sign fix-up after either path


TRANSPOSE_ORDER = r"""
import json, re
import gpuperf
from numba import cuda
from gpuperf.kernels import coalescing as co
from gpuperf.kernels.coalescing.ablations import make_transpose_unchecked
out = {}
for name, k in (("plain", co.make_transpose(32, 8, 1, False)),
                ("unchecked", make_transpose_unchecked(32, 8, 1)),
                ("staged", co.make_transpose(32, 8, 1, True))):
    ptx, _ = cuda.compile_ptx(k.py_func, "void(float32[:, ::1], float32[:, ::1])", cc=(9, 0))
    seq = ""
    for line in ptx.splitlines():
        if "bar.sync" in line:
            break
        seq += ("L" if "ld.global" in line else "S" if "st.shared" in line else
                "b" if re.search(r"\bbra\b", line) else "")
    out[name] = seq
print("ORDER" + json.dumps(out))
"""


def test_the_transposes_load_order_in_ptx_is_what_make_transposes_docstring_says():
    """What chapter 2.2 says of the transpose ladder's rungs 4 to 6 (and ``make_transpose``'s
    docstring): staged, every interior ``ld.global`` comes before the first ``st.shared``; the
    plain way keeps each load next to its shared store behind its own bounds test; without the
    tests (the ablation rung) the pairs stay interleaved, with no branch between them. So
    whether rung 5's loads overlap is ptxas's doing, which only the SASS shows."""
    order = compile_mode(TRANSPOSE_ORDER, "ORDER")
    assert "LLLLSSSS" in order["staged"]
    assert "LS" in order["plain"] and "LL" not in order["plain"]
    assert order["plain"].count("bLS") == 4
    assert "LSLSLSLS" in order["unchecked"]


COPY_ORDER = r"""
import json, re
import gpuperf
from numba import cuda
from gpuperf.kernels import gridstride as gs
ptx, _ = cuda.compile_ptx(gs.copy_grid_stride.py_func, "void(float32[::1], float32[::1])",
                          cc=(9, 0))
print("ORDER" + json.dumps("".join("L" if "ld.global" in line else "W" for line in ptx.splitlines()
                                   if "ld.global" in line or "st.global" in line)))
"""


def test_the_grid_stride_copy_keeps_each_load_before_its_store_in_ptx():
    """What chapter 2.2 says of chapter 1's grid-stride copy: in its PTX each load is followed
    by its store, four pairs to an unrolled round (aliasing: ``out`` may overlap ``x``)."""
    order = compile_mode(COPY_ORDER, "ORDER")
    assert "LWLWLWLW" in order and "LL" not in order
