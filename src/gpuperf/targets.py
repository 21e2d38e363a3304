"""Compile a student's kernel for real GPU targets, even where no GPU is attached.

The simulator runs a kernel as Python, so code that no GPU compiler accepts runs there
without complaint: a shared array whose shape is computed inside the kernel, atomics on
an ``int16`` array, a Python object the kernel cannot hold. :func:`gpuperf.exercises.check_compiles` compiles
the kernel to PTX for the course's targets (``TARGETS``: sm_75, Colab's T4, and sm_90, the
reference Hopper GPUs), with the argument types of a call the checker is about to make,
and turns a compiler error into one failed case in plain words.

On a GPU it compiles in this process. Under the simulator it writes the kernel's source,
with what the source refers to (modules, constants, device functions, closure values), to a
temporary module and compiles it in a fresh process on Numba's real CUDA target
(``GPUPERF_MODE=compile``: PTX needs the compiler, not a GPU). Where that module cannot be
written (an object that has no source form) or the compiler is missing, the check is
skipped with a note, never failed.
"""

from __future__ import annotations

import builtins
import dis
import inspect
import json
import sys
import textwrap
import types as pytypes

import numpy as np

from . import validate
from .mode import SIMULATOR

TARGETS = ((7, 5), (9, 0))  # Colab's T4 and the reference H100/H200

# Packages a fresh process imports as they are; everything else is written out as source.
IMPORTABLE = ("gpuperf", "numba", "numpy", "math", "cmath", "operator")
_CACHE: dict = {}  # (module source, argument types, targets) -> outcome


class Unbundlable(ValueError):
    """The kernel refers to something that cannot be written as source."""


class _Untypable(ValueError):
    """The kernel refers to a global or closure value that no Numba target can type (a
    class, a dict, an instance of a user's class): the real compile fails, whatever the
    GPU, so this is the answer, not a reason to skip the check."""


def _numba_types(value) -> bool:
    """True if Numba can type ``value`` as a kernel's global or closure constant.

    Asks the CPU target's typing context, which knows every registered function as
    well as ``typeof``; it accepts at least what the CUDA target does, so a value it
    refuses is refused on every GPU too."""
    from numba.core.registry import cpu_target

    try:
        return cpu_target.typing_context.resolve_value_type(value) is not None
    except Exception:  # noqa: BLE001  (TypingError, ValueError: cannot be typed)
        return False


def _kind_of(value) -> str:
    return "a class" if isinstance(value, type) else f"a {type(value).__name__}"


# --------------------------------------------------------------------------- arguments


def argument_types(args) -> list:
    """JSON-able types of a launch's arguments: arrays by dtype, dimensions and layout."""
    if not isinstance(args, (tuple, list)):
        raise TypeError(f"args must be the launch's arguments as a tuple or list, not "
                        f"{type(args).__name__}.")
    out = []
    for i, a in enumerate(args):
        if isinstance(a, (bool, np.bool_)):
            out.append(["scalar", "bool"])
        elif isinstance(a, int):
            out.append(["scalar", "int64"])
        elif isinstance(a, float):
            out.append(["scalar", "float64"])
        elif isinstance(a, np.generic):
            out.append(["scalar", a.dtype.name])
        elif hasattr(a, "dtype") and hasattr(a, "ndim") and hasattr(a, "shape"):
            host = getattr(a, "_ary", a)  # the simulator's device arrays wrap NumPy arrays
            flags = getattr(host, "flags", None)
            layout = ("C" if flags is None or flags.c_contiguous else
                      "F" if flags.f_contiguous else "A")
            out.append(["array", np.dtype(a.dtype).name, int(a.ndim), layout])
        else:
            raise Unbundlable(f"argument {i} ({type(a).__name__}) has no simple GPU type")
    return out


def _numba_type(spec):
    import numba
    from numba.core import types

    if spec[0] == "scalar":
        return types.boolean if spec[1] == "bool" else numba.from_dtype(np.dtype(spec[1]))
    return types.Array(numba.from_dtype(np.dtype(spec[1])), spec[2], spec[3])


# --------------------------------------------------------------------------- source bundle


def _referenced_names(code) -> set:
    """The global names ``code`` (and code nested in it) reads. Not ``co_names``: that also
    holds attribute names, so ``cuda.grid(1)`` would drag in a notebook variable that
    happens to be called ``grid``."""
    names = {ins.argval for ins in dis.get_instructions(code)
             if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            names |= _referenced_names(const)
    return names


def _importable(value) -> str | None:
    """``from module import name`` text if ``value`` is that module attribute, else None."""
    owner = getattr(value, "py_func", value)  # a kernel: where its Python function lives
    module = getattr(owner, "__module__", None)
    name = getattr(owner, "__qualname__", None) or getattr(owner, "__name__", None)
    if not module or not name or "." in name or module.split(".")[0] not in IMPORTABLE:
        return None
    mod = sys.modules.get(module)
    if mod is None:
        return None
    return f"from {module} import {name}" if getattr(mod, name, None) is value else None


def _def_source(py) -> str:
    """The ``def`` of ``py`` and its body, dedented, without its decorators (the bundle
    applies ``cuda.jit`` itself, so a decorator imported under another name needs no
    import)."""
    import ast

    try:
        src = textwrap.dedent(inspect.getsource(py))
        tree = ast.parse(src)
    except (OSError, TypeError, SyntaxError):
        raise Unbundlable(f"the source of {py.__name__} cannot be read") from None
    node = tree.body[0] if tree.body else None
    if not isinstance(node, ast.FunctionDef) or node.name != py.__name__:
        raise Unbundlable(f"the source of {py.__name__} cannot be read")
    return "\n".join(src.splitlines()[node.lineno - 1:]) + "\n"


MAX_CONSTANT_ELEMENTS = 65536  # a global array up to this size is written into the bundle


def _written_names(src: str) -> set:
    """Names whose elements the function's source stores to: ``name[i] = ...``,
    ``name[i] += ...``, ``name[i][j] = ...``, or the first argument of an atomic
    (``cuda.atomic.add(name, ...)``, ``atomic.max(name, ...)``)."""
    import ast

    def base(node):
        while isinstance(node, ast.Subscript):
            node = node.value
        return node.id if isinstance(node, ast.Name) else None

    out = set()
    for node in ast.walk(ast.parse(src)):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for t in targets:
            for sub in ast.walk(t):
                if isinstance(sub, ast.Subscript) and base(sub):
                    out.add(base(sub))
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, (ast.Attribute, ast.Name)) and node.args):
            owner = node.func.value
            owner_name = owner.attr if isinstance(owner, ast.Attribute) else owner.id
            if owner_name == "atomic" and base(node.args[0]):
                out.add(base(node.args[0]))
    return out


class _Bundle:
    def __init__(self):
        self.lines: list[str] = ["import numpy as np", "import numba",
                                 "from numba import cuda"]
        self.defined: dict = {}  # name -> value defined at the module's top

    def define(self, name: str, value) -> None:
        if name in self.defined:
            if self.defined[name] is value or (type(value) is type(self.defined[name])
                                               and self._same(value, self.defined[name])):
                return
            raise Unbundlable(f"two different objects are called {name}")
        self.defined[name] = value
        self.lines.extend(self._text(name, value))

    @staticmethod
    def _same(a, b) -> bool:
        try:
            return bool(a == b)
        except Exception:  # noqa: BLE001  (arrays and odd objects: not the same)
            return False

    def _text(self, name, value) -> list[str]:
        from numba.core import types as nbtypes

        if isinstance(value, pytypes.ModuleType):
            module = value.__name__
            if module.startswith("numba.cuda"):
                module = "numba.cuda"
            if module.split(".")[0] not in IMPORTABLE:
                raise Unbundlable(f"{name} is the module {module}")
            return [f"import {module} as {name}"] if "." in module or module != name else [
                f"import {module}"]
        if isinstance(value, float) or (isinstance(value, np.generic)
                                        and np.issubdtype(value.dtype, np.floating)):
            text = f"float({str(float(value))!r})"  # inf and nan too
            if isinstance(value, np.generic):
                text = f"np.{value.dtype.name}({text})"
            return [f"{name} = {text}"]
        if value is None or isinstance(value, (bool, int, str)):
            return [f"{name} = {value!r}"]
        if isinstance(value, np.generic):
            return [f"{name} = np.{value.dtype.name}({value.item()!r})"]
        if isinstance(value, tuple) and all(isinstance(v, (bool, int, float)) for v in value):
            return [f"{name} = {value!r}"]
        if isinstance(value, nbtypes.Type):
            import numba

            if getattr(numba, str(value), None) == value:
                return [f"from numba import {value} as {name}"]
            raise Unbundlable(f"{name} is the Numba type {value}")
        if isinstance(value, type) and issubclass(value, np.generic):
            return [f"{name} = np.{value.__name__}"]
        if isinstance(value, np.ndarray):
            # Numba freezes a global array into the kernel as a read-only constant: written
            # out with its values, the compile sees what a GPU's does.
            if value.dtype.kind not in "biuf" or value.size > MAX_CONSTANT_ELEMENTS:
                raise Unbundlable(f"{name} is a ndarray")
            flat = [v.item() if value.dtype.kind == "f" else int(v) for v in value.ravel()]
            body = ", ".join(f"float({str(v)!r})" if isinstance(v, float) else str(v)
                             for v in flat)
            return [f"{name} = np.array([{body}], dtype=np.{value.dtype.name})"
                    f".reshape({value.shape!r})"]
        if isinstance(value, (list, dict, set, frozenset)):
            raise _Untypable(f"the kernel uses {name}, a {type(value).__name__}, which a kernel "
                             "cannot hold (use a tuple of numbers, or pass an array)")
        imported = _importable(value)
        if imported:
            return [imported + (f" as {name}" if name != imported.rsplit(" ", 1)[1] else "")]
        py = getattr(value, "py_func", None)
        if isinstance(py, pytypes.FunctionType):
            return self.function(value, name)
        if isinstance(value, pytypes.FunctionType):
            # A plain Python function (a def or a lambda, not @cuda.jit(device=True)): a
            # kernel cannot call it on any GPU ("Untyped global name").
            raise _Untypable(f"the kernel calls {name}, a plain Python function, which a kernel "
                             "cannot call (make it a @cuda.jit(device=True) function)")
        if not _numba_types(value):
            raise _Untypable(f"the kernel uses {name}, {_kind_of(value)}, which a kernel "
                             "cannot hold")
        raise Unbundlable(f"{name} is a {type(value).__name__}")

    def function(self, fn, name: str | None = None) -> list[str]:
        """The source of ``fn`` (a kernel or device function), after everything it refers to."""
        py = getattr(fn, "py_func", fn)
        src = _def_source(py)
        cells = dict(zip(py.__code__.co_freevars, py.__closure__ or ()))
        written = _written_names(src)
        for ref in sorted(_referenced_names(py.__code__) | set(cells)):
            if ref == py.__name__:
                continue
            if ref in cells:
                try:
                    value = cells[ref].cell_contents
                except ValueError:
                    raise Unbundlable(f"{ref} is not set yet") from None
            elif ref in py.__globals__:
                value = py.__globals__[ref]
            else:
                continue  # an attribute name (x.shape), or a builtin
            if ref in vars(builtins) and value is vars(builtins)[ref]:
                continue
            if isinstance(value, np.ndarray) and ref in written:
                raise _Untypable(f"the kernel writes the global array {ref}: on a GPU a global "
                                 "NumPy array is a read-only constant copy of it (a store does "
                                 "not compile, an atomic changes only the GPU's copy); pass the "
                                 "array to the kernel as an argument")
            self.define(ref, value)
        lines = [src]
        if fn is not py:  # a device function the kernel calls (the kernel itself: py_func)
            if name is None:
                raise Unbundlable(f"{py.__name__} is not a function")
            lines.append(f"{py.__name__} = cuda.jit(device=True)({py.__name__})")
        if name is not None and name != py.__name__:
            lines.append(f"{name} = {py.__name__}")
        return lines

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def bundle(kernel) -> str:
    """A module's source that defines ``kernel`` (by its own name) and all it refers to.

    Raises :class:`Unbundlable` where something has no source form."""
    if not isinstance(getattr(kernel, "py_func", None), pytypes.FunctionType):
        raise TypeError(f"kernel must be a @cuda.jit kernel, not {type(kernel).__name__}.")
    b = _Bundle()
    b.defined[kernel.py_func.__name__] = kernel
    b.lines.extend(b.function(kernel.py_func))
    return b.text()


# --------------------------------------------------------------------------- compiling


_SCRIPT = r"""
import json, sys, types
import numba.cuda.dispatcher as dispatcher
from gpuperf import targets
source, spec = sys.argv[1], json.loads(sys.argv[2])
out = {}
for cc in spec["ccs"]:
    # With no GPU, a device function compiles for "the current device": make that the target.
    dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=tuple(cc))
    ns = {"__name__": "gpuperf_student_bundle"}  # fresh dispatchers for each target
    exec(compile(open(source).read(), source, "exec"), ns)
    out.update(targets._compile_here(ns[spec["name"]], spec["args"], [cc]))
print(json.dumps(out))
"""


def _compile_here(kernel, arg_types, ccs) -> dict:
    """{"7.5": None or the compiler's message, ...}, compiled in this process.

    Errors in the kernel (Numba's typing and lowering errors, NVVM rejecting its code) are
    the answer; a compiler that cannot run here (a missing libNVVM, an unknown target)
    raises ``RuntimeError``, since it says nothing about the kernel."""
    from numba import cuda
    from numba.core.errors import NumbaError
    from numba.cuda.cudadrv.error import NvvmError

    sig = tuple(_numba_type(t) for t in arg_types)
    out = {}
    for cc in ccs:
        try:
            cuda.compile_ptx(getattr(kernel, "py_func", kernel), sig, cc=tuple(cc))
            out[f"{cc[0]}.{cc[1]}"] = None
        except (NumbaError, NvvmError) as err:
            out[f"{cc[0]}.{cc[1]}"] = f"{type(err).__name__}: {err}"
        except Exception as err:  # noqa: BLE001  (the compiler itself could not run)
            raise RuntimeError(f"the compiler could not run ({type(err).__name__}: "
                               f"{str(err).strip().splitlines()[0] if str(err).strip() else ''})"
                               ) from None
    return out


def compile_for_targets(kernel, args, ccs=TARGETS) -> dict:
    """Compile ``kernel`` for each compute capability in ``ccs`` with the types of ``args``.

    Returns ``{"7.5": None, "9.0": "TypingError: ..."}`` (None: it compiled). Under the
    simulator, a kernel that uses a value no Numba target can type (a class, a dict) gets
    that answer for every target without a compile; :class:`Unbundlable` is raised where
    the kernel cannot be written out for a fresh process, and ``RuntimeError`` where the
    compiler cannot run.
    """
    import os
    import subprocess
    import tempfile

    if not isinstance(getattr(kernel, "py_func", None), pytypes.FunctionType):
        raise TypeError(f"kernel must be a @cuda.jit kernel, not {type(kernel).__name__}.")
    arg_types = argument_types(args)
    ccs = check_ccs(ccs)
    if not SIMULATOR:
        return _compile_here(kernel, arg_types, ccs)
    try:
        source = bundle(kernel)
    except _Untypable as err:
        return {f"{a}.{b}": f"TypingError: {err}" for a, b in ccs}
    key = (source, json.dumps(arg_types), json.dumps(ccs))
    if key in _CACHE:
        return _CACHE[key]
    name = kernel.py_func.__name__
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "student_kernel.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(source)
        env = {**os.environ, "GPUPERF_MODE": "compile", "NUMBA_ENABLE_CUDASIM": "0"}
        spec = json.dumps({"name": name, "args": arg_types, "ccs": ccs})
        try:
            run = subprocess.run([sys.executable, "-c", _SCRIPT, path, spec], env=env,
                                 capture_output=True, text=True, timeout=180)
        except subprocess.TimeoutExpired:
            raise RuntimeError("the compiler did not finish within 180 s") from None
    if run.returncode != 0:
        last = (run.stderr.strip().splitlines() or ["no message"])[-1]
        raise RuntimeError(f"the compiling process failed: {last}")
    result = json.loads(run.stdout.strip().splitlines()[-1])
    _CACHE[key] = result
    return result


def in_compiling_process(module: str, expr: str, *, what: str, timeout: int = 300):
    """The JSON value of ``expr``, evaluated in a separate Python process that compiles for real
    GPUs (``GPUPERF_MODE=compile``, no simulator, no GPU needed) with ``module`` imported as
    ``m``: how a chapter under the simulator shows the PTX of its kernels. RuntimeError naming
    ``what`` (e.g. "the summing kernels") if that process fails."""
    import os
    import subprocess

    for val, name in ((module, "module"), (expr, "expr"), (what, "what")):
        if not isinstance(val, str) or not val.strip():
            raise TypeError(f"{name} must be a non-empty string, not {val!r:.60}.")
    mark = "GPUPERF-JSON:"
    code = f"import json, {module} as m; print({mark!r} + json.dumps({expr}))"
    env = {**os.environ, "GPUPERF_MODE": "compile", "NUMBA_ENABLE_CUDASIM": "0"}
    try:
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"compiling {what} did not finish within {timeout} s") from None
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith(mark)), None)
    if out.returncode != 0 or line is None:
        raise RuntimeError(f"compiling {what} failed:\n{out.stderr[-2000:]}")
    return json.loads(line[len(mark):])


def compiles_ptx(what: str, **checks):
    """Decorator for a module-level function that compiles some of a chapter's kernels to PTX
    for the compute capability ``cc`` (a parameter of it) and reads something off the text:
    the wrapper checks ``cc`` (``validate.compute_capability``) and each argument named in
    ``checks`` (``name=function(value) -> value``), then calls the function on a GPU or with
    ``GPUPERF_MODE=compile``; under the simulator, which compiles nothing, it evaluates the same
    call in a separate compiling process (``in_compiling_process``, ``what`` naming the kernels
    in its error), so its arguments must be literals and its result JSON."""
    import functools

    validate.string(what, "what")
    for name, check in checks.items():
        if not callable(check):
            raise TypeError(f"the check for {name} must be a function of its value, not "
                            f"{check!r:.60}.")

    def decorate(fn):
        signature = inspect.signature(fn)
        missing = sorted({"cc", *checks} - set(signature.parameters))
        if missing:
            raise TypeError(f"{fn.__name__} has no parameter {', '.join(missing)}: compiles_ptx "
                            f"checks cc and the arguments its checks name.")

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            values = bound.arguments
            for name, check in checks.items():
                values[name] = check(values[name])
            values["cc"] = tuple(validate.compute_capability(values["cc"]))
            if SIMULATOR:
                call = ", ".join(f"{name}={value!r}" for name, value in values.items())
                return in_compiling_process(fn.__module__, f"m.{fn.__name__}({call})",
                                            what=what)
            return fn(**values)
        return wrapper
    return decorate


def compile_each(kernels: dict, signature: str, cc) -> dict:
    """``{label: PTX text}`` of each of ``kernels`` (``{label: kernel}``, Numba CUDA kernels)
    compiled with ``signature`` for ``cc``; only where kernels compile (a GPU or
    ``GPUPERF_MODE=compile``: see ``compiles_ptx``)."""
    from numba import cuda

    validate.mapping(kernels, "kernels", empty=False)
    validate.string(signature, "signature")
    cc = validate.compute_capability(cc)
    return {label: cuda.compile_ptx(kernel.py_func, signature, cc=tuple(cc))[0]
            for label, kernel in kernels.items()}


def check_ccs(ccs) -> list:
    """``ccs`` as a list of [major, minor] pairs; ValueError unless it is a non-empty list of
    compute capabilities."""
    if isinstance(ccs, str) or not isinstance(ccs, (tuple, list)) or not ccs:
        raise ValueError(f"ccs must be compute capabilities such as ((7, 5), (9, 0)), not "
                         f"{ccs!r}.")
    if all(isinstance(x, int) for x in ccs):  # one capability, not a list of them
        raise ValueError(f"ccs must be a list of compute capabilities, not one: pass "
                         f"ccs=[{tuple(ccs)!r}] rather than ccs={ccs!r}.")
    return [list(validate.compute_capability(cc, f"ccs[{i}]")) for i, cc in enumerate(ccs)]


def plain_words(message: str) -> str:
    """A compiler error's first lines, with a hint for the mistakes students make most."""
    import re

    if not isinstance(message, str):
        raise TypeError(f"message must be the compiler's error text (a str), not "
                        f"{type(message).__name__}.")

    lines = [ln.strip() for ln in message.splitlines() if ln.strip()]
    head = re.split(r"\s*There (?:are|is) \d+ candidate implementation", " ".join(lines[:3]))[0]
    head = re.sub(r" at 0x[0-9a-f]+", "", head)
    if len(head) > 400:
        head = head[:400] + " ..."
    head = head.rstrip(" .:") + "."
    low = message.lower()
    hint = ""
    if "read-only constant copy" in low or "plain python function" in low:
        pass  # the course's own message already says what to do
    elif "shared.array" in low or "local.array" in low or "array(shape=" in low:
        hint = (" The shape of a cuda.shared.array or cuda.local.array must be known when the "
                "kernel compiles: a number, or a global or closure constant (a factory's "
                "argument), never a value computed inside the kernel.")
    elif "atomic" in low:
        hint = (" Atomics exist for 32- and 64-bit integers and floats (not int8 or int16):"
                " use an int32 or uint32 array for counters.")
    elif ("untyped global name" in low or "cannot determine numba type" in low
          or "which a kernel cannot hold" in low):
        hint = (" A kernel can use numbers, arrays, NumPy and math functions, and other "
                "@cuda.jit functions; not Python objects, lists or dicts.")
    return head + hint


__all__ = ["TARGETS", "argument_types", "bundle", "compile_for_targets",
           "plain_words"]
