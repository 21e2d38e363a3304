"""16-byte loads and stores of four float32, for kernels that need wide memory accesses.

Indexing a float32 array four times gives four 4-byte loads; reading a float32x4
view element by element does too. These small Numba ``@intrinsic`` functions hand
LLVM one ``<4 x float>`` load or store with ``align 16``, which NVPTX emits as one
``ld.*.v4.f32`` / ``st.*.v4.f32`` (``ld.global.v4.f32`` for global arrays,
``ld.shared.v4.f32`` for shared ones). The address must be 16-byte aligned: fresh
allocations are, and so is every fourth float32 after them.

* ``load_float4(x, i)`` / ``store_float4(x, i, (a, b, c, d))``: ``x[i:i+4]`` of a
  C-contiguous float32 vector, ``i`` an element index.
* ``load4(m, i, j)`` / ``store4(m, i, j, a, b, c, d)``: ``m[i, j:j+4]`` of a float32
  matrix (global or shared), ``j`` and the row length multiples of 4.

Under the simulator they are plain Python: one slice each (so access tracers see one
16-byte access) that check what they can of the alignment rule, so that a misaligned use
fails there instead of faulting on a GPU (or, for a strided view, reading the wrong
floats). Every form needs consecutive floats. The matrix forms check the element's byte
offset from the start of its allocation (views such as ``m[1:, 4:]`` or ``m[:, :64]`` of a
64 x 66 matrix, whose start or row pitch breaks the rule) and the documented rule that the
row length is a multiple of 4. The vector forms do not check the start: in simulator mode
the course treats a NumPy view's own address as its device address (``x[1:]`` stands for a
device view one float in, and ``reduce.head_elements`` reads it), while the simulator
launches the kernel on a fresh copy; ``gpuperf.emulator`` checks the real address there.
"""

from __future__ import annotations

import ast
import pathlib
import textwrap

import numpy as np

from .mode import SIMULATOR


def intrinsic_source(name: str) -> str:
    """The source of the ``@intrinsic`` ``name`` that a GPU compiles (``load_float4``,
    ``store_float4``, ``load4``, ``store4``), with the constants and helpers its code
    generation uses, read from this file, so that a page shows it whichever mode runs (under
    the simulator ``name`` is the plain-Python stand-in, whose source ``gp.show_source``
    would print)."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, the name of one of this module's intrinsics, not "
                        f"{type(name).__name__}; e.g. intrinsic_source('load_float4').")
    text = pathlib.Path(__file__).read_text(encoding="utf-8")
    lines = text.splitlines()
    branch = next(n for n in ast.parse(text).body if isinstance(n, ast.If)
                  and isinstance(n.test, ast.Name) and n.test.id == "SIMULATOR")
    defs = {}  # name -> its statement in the GPU branch: functions and constants (_V4)
    for node in branch.orelse:
        if isinstance(node, ast.FunctionDef):
            defs[node.name] = node
        elif isinstance(node, ast.Assign):
            defs.update({t.id: node for t in node.targets if isinstance(t, ast.Name)})
    intrinsics = [k for k, n in defs.items() if isinstance(n, ast.FunctionDef) and any(
        isinstance(d, ast.Name) and d.id == "intrinsic" for d in n.decorator_list)]
    if name not in intrinsics:
        raise ValueError(f"name={name!r} is not one of gpuperf.vector's intrinsics; choose one "
                         f"of {intrinsics}.")
    wanted, todo = {}, [name]
    while todo:  # the intrinsic, and what it uses from the branch, and what those use
        k = todo.pop()
        if k not in wanted:
            wanted[k] = defs[k]
            todo += [n.id for n in ast.walk(defs[k]) if isinstance(n, ast.Name) and n.id in defs]
    parts = []
    for node in sorted({id(n): n for n in wanted.values()}.values(), key=lambda n: n.lineno):
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        parts.append(textwrap.dedent("\n".join(lines[first - 1:node.end_lineno])))
    return "\n\n".join(parts)


def show_intrinsic(name: str = "load_float4") -> None:
    """Show ``intrinsic_source(name)``, headed by where it lives."""
    src = (f"# gpuperf/vector.py: {name}, the @intrinsic a GPU compiles (the simulator runs a "
           f"plain-Python slice instead)\n{intrinsic_source(name)}")
    try:
        from IPython.display import Code, display

        display(Code(src, language="python"))
    except ImportError:
        print(src)

if SIMULATOR:
    from .emulator import _host_offset  # a view's byte offset in its allocation: one home

    def _host_array(arr):
        """The NumPy array behind what a simulated kernel sees (a wrapper for device arrays)."""
        try:
            arr = object.__getattribute__(arr, "_item")  # the simulator's in-kernel wrapper
        except AttributeError:
            pass
        return getattr(arr, "_ary", arr)

    def _check_address(arr, index, where):
        a = _host_array(arr)
        if not isinstance(a, np.ndarray):
            return  # something else (an emulator array checks addresses itself)
        if a.strides[-1] != 4:
            raise ValueError(
                f"16-byte access at {where} of a view whose elements are {a.strides[-1]} bytes "
                "apart: a 16-byte access reads four consecutive floats, so a GPU would return "
                "the wrong ones. Pass a contiguous array (np.ascontiguousarray, or a fresh copy).")
        if len(index) == 1:  # the vector forms' start is not checked: see the module docstring
            return
        # bytes from the (aligned) start of the allocation, as a GPU would see the address
        offset = _host_offset(a) + sum(int(k) * s for k, s in zip(index, a.strides))
        if offset % 16:
            raise ValueError(
                f"16-byte access at {where}: the four floats start {offset} bytes into their "
                "allocation, not on a multiple of 16, so a GPU would fault with a misaligned "
                "address. Pass a fresh array, or a view whose start and row pitch are "
                "multiples of 4 floats.")

    def load_float4(x, i):
        """``x[i:i+4]`` as a tuple of four float32, in one 16-byte load."""
        _check_address(x, (i,), f"[{i}]")
        v = x[i:i + 4]  # one access, as gpuperf.kernels.coalescing.trace sees it
        return (v[0], v[1], v[2], v[3])

    def store_float4(x, i, values):
        """Store the tuple ``values`` to ``x[i:i+4]`` in one 16-byte store."""
        _check_address(x, (i,), f"[{i}]")
        x[i:i + 4] = np.array([values[0], values[1], values[2], values[3]], np.float32)

    def _check_aligned(arr, i, j):
        if j % 4 or arr.shape[1] % 4:
            raise ValueError(
                f"16-byte access at [{i}, {j}] of an array with rows of {arr.shape[1]} floats: "
                "the column and the row length must both be multiples of 4 (a GPU would fault "
                "with a misaligned address).")
        _check_address(arr, (i, j), f"[{i}, {j}]")

    def load4(arr, i, j):
        """Four consecutive floats ``arr[i, j:j+4]`` in one 16-byte load."""
        _check_aligned(arr, i, j)
        return arr[i, j], arr[i, j + 1], arr[i, j + 2], arr[i, j + 3]

    def store4(arr, i, j, a, b, c, d):
        """Store four floats at ``arr[i, j:j+4]`` in one 16-byte store."""
        _check_aligned(arr, i, j)
        arr[i, j], arr[i, j + 1], arr[i, j + 2], arr[i, j + 3] = a, b, c, d

else:
    from llvmlite import ir

    try:  # numba-cuda >= 0.2x carries its own copies of these
        from numba.cuda import types
        from numba.cuda.cgutils import get_item_pointer
        from numba.cuda.extending import intrinsic
    except ImportError:  # older numba-cuda (e.g. Colab's) uses numba's
        from numba.core import types
        from numba.core.cgutils import get_item_pointer
        from numba.cuda.extending import intrinsic

    _V4 = ir.VectorType(ir.FloatType(), 4)

    def _vec_pointer(context, builder, arrty, arr, indices):
        ary = context.make_array(arrty)(context, builder, arr)
        ptr = get_item_pointer(context, builder, arrty, ary, indices,
                               wraparound=False, boundscheck=False)
        return builder.bitcast(ptr, _V4.as_pointer())

    def _is_f32(arr, ndim):
        return isinstance(arr, types.Array) and arr.ndim == ndim and arr.dtype == types.float32

    def _load(builder, context, ptr, ret):
        vec = builder.load(ptr, align=16)
        parts = [builder.extract_element(vec, ir.Constant(ir.IntType(32), k)) for k in range(4)]
        return context.make_tuple(builder, ret, parts)

    def _store(builder, ptr, values):
        vec = ir.Constant(_V4, None)
        for k, v in enumerate(values):
            vec = builder.insert_element(vec, v, ir.Constant(ir.IntType(32), k))
        builder.store(vec, ptr, align=16)

    @intrinsic
    def load_float4(typingctx, x, i):
        """``x[i:i+4]`` as a tuple of four float32, in one 16-byte load."""
        if not (_is_f32(x, 1) and isinstance(i, types.Integer)):
            return None
        ret = types.UniTuple(types.float32, 4)

        def codegen(context, builder, sig, args):
            idx = context.cast(builder, args[1], sig.args[1], types.intp)
            return _load(builder, context, _vec_pointer(context, builder, sig.args[0], args[0],
                                                        [idx]), ret)

        return ret(x, i), codegen

    @intrinsic
    def store_float4(typingctx, x, i, values):
        """Store the tuple ``values`` to ``x[i:i+4]`` in one 16-byte store."""
        if not (_is_f32(x, 1) and isinstance(i, types.Integer)
                and isinstance(values, types.UniTuple) and values.count == 4
                and values.dtype == types.float32):
            return None

        def codegen(context, builder, sig, args):
            idx = context.cast(builder, args[1], sig.args[1], types.intp)
            ptr = _vec_pointer(context, builder, sig.args[0], args[0], [idx])
            _store(builder, ptr, [builder.extract_value(args[2], k) for k in range(4)])
            return context.get_dummy_value()

        return types.void(x, i, values), codegen

    @intrinsic
    def load4(typingctx, arr, i, j):
        """Four consecutive floats ``arr[i, j:j+4]`` in one 16-byte load."""
        if not _is_f32(arr, 2):
            return None
        ret = types.UniTuple(types.float32, 4)

        def codegen(context, builder, sig, args):
            return _load(builder, context,
                         _vec_pointer(context, builder, sig.args[0], args[0], args[1:3]), ret)

        return ret(arr, types.intp, types.intp), codegen

    @intrinsic
    def store4(typingctx, arr, i, j, a, b, c, d):
        """Store four floats at ``arr[i, j:j+4]`` in one 16-byte store."""
        if not _is_f32(arr, 2):
            return None
        f = types.float32

        def codegen(context, builder, sig, args):
            _store(builder, _vec_pointer(context, builder, sig.args[0], args[0], args[1:3]),
                   args[3:7])
            return context.get_dummy_value()

        return types.void(arr, types.intp, types.intp, f, f, f, f), codegen
