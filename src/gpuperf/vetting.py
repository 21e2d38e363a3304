"""Which of a submission's code the grader may run on its own: a function of the student's
(a CUDA kernel, or a host function that launches kernels) and what it needs.

The grader judges an exercise whose answer is one function a second time, apart from the
student's notebook (``grade.rejudge``): in a fresh kernel that runs the course's checker on the
student's function and nothing else of theirs. For that it needs the function's definition and
the definitions it uses (its kernels, device functions, constants, the imports they name), and
nothing that could reach the grader's machinery from inside that kernel. ``kernel_definitions``
(a kernel) and ``answer_definitions`` (a kernel or a host function) read the student's cells
without running them and return that code, rebuilt from the syntax tree statement by
statement, or say why they cannot:

- a kernel or device function is a ``def`` decorated with ``cuda.jit`` (keyword options of
  plain values, or a signature of Numba types), with plain parameters (no defaults, no
  annotations) and a body of assignments, ``if``, ``for``, ``while``, ``return`` and calls;
- what the body names is a parameter, a local, a safe builtin (``range``, ``min``...), the
  device API of ``numba.cuda`` (``cuda.threadIdx.x``, ``cuda.shared.array``,
  ``cuda.atomic.add``...), a function of ``math``, a NumPy ufunc or scalar type, a Numba type,
  a constant, or another such function; an attribute of an array is one of its shape, size,
  ndim, dtype (and ``.x``/``.y``/``.z`` of an index triple); no name starts with ``_``;
- a constant is an assignment of plain values: numbers, tuples, arithmetic, those same calls,
  and constants of the course's own modules (``dbg.SMOOTH_TILE``); a kernel may call the
  course's device functions (``red.load_float4``);
- a host function (``answer_definitions`` only: ``my_absmax(d_x)``, ``my_pipeline(...)``) is a
  plain ``def`` whose parameters' defaults are constants, with the statements above plus
  ``assert``, and expressions with comprehensions, lambdas, f-strings, dicts and sets, each in
  its own scope as Python has it. It may launch its own kernels (``k[grid, block, stream](...)``)
  and the course's, call its other functions, safe builtins (``sorted``, ``zip``...), numba.cuda's
  host API for memory, streams and events (``cuda.device_array``, ``cuda.stream``...), NumPy's
  array constructors and math, ``math``, and the public functions of the course's chapter
  packages and ``gpuperf.device`` (never a checker); of a value it reads the attributes and
  calls the methods of arrays, streams, dicts, lists, strings and records listed in
  ``HOST_ATTRS`` and ``HOST_METHODS``. It never sets an attribute, and a module-level value it
  keeps between calls (a cache of buffers) is a literal dict, list or set;

This is a whitelist: a right answer written the way the course teaches passes it (every right
answer under ``tests/right`` does, a test checks it), and code that could open a file,
import a module or walk to the grader's machinery does not. The kernel's body still runs as
Python under the simulator; the whitelist is what makes that safe there. On a GPU it is
compiled and never runs as Python at all.
"""

from __future__ import annotations

import ast
import importlib
import math
import threading

# CPython 3.11 keeps the AST converter's recursion depth in interpreter-wide state, so two
# threads parsing at once can fail with "AST constructor recursion depth mismatch"
# (python/cpython#106905). The grader reads notebooks and vets their code in threads: every
# parse of theirs goes through here.
_PARSE_LOCK = threading.Lock()


def parse_python(source: str, mode: str = "exec") -> ast.AST:
    """``ast.parse(source, mode=mode)``, one thread at a time (see ``_PARSE_LOCK``)."""
    if not isinstance(source, str):
        raise TypeError(f"source must be Python source text (a string), not "
                        f"{type(source).__name__}.")
    if mode not in ("exec", "eval", "single"):
        raise ValueError(f"mode must be 'exec', 'eval' or 'single' (as for ast.parse), not {mode!r}.")
    with _PARSE_LOCK:
        return ast.parse(source, mode=mode)


# Builtins a kernel may call or name.
SAFE_BUILTINS = frozenset({"range", "min", "max", "abs", "int", "float", "bool", "len", "round",
                           "divmod", "pow", "complex", "print"})
# numba.cuda's device API: cuda.<name>, and cuda.<name>.<member> where listed.
CUDA_API = {
    "threadIdx": {"x", "y", "z"}, "blockIdx": {"x", "y", "z"}, "blockDim": {"x", "y", "z"},
    "gridDim": {"x", "y", "z"}, "shared": {"array"}, "local": {"array"},
    "const": {"array_like"},
    "atomic": {"add", "sub", "and_", "or_", "xor", "max", "min", "nanmax", "nanmin", "exch",
               "inc", "dec", "cas", "compare_and_swap"},
}
CUDA_CALLS = frozenset({
    "grid", "gridsize", "syncthreads", "syncthreads_count", "syncthreads_and", "syncthreads_or",
    "syncwarp", "threadfence", "threadfence_block", "threadfence_system", "shfl_sync",
    "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync", "all_sync", "any_sync", "eq_sync",
    "ballot_sync", "match_any_sync", "match_all_sync", "activemask", "lanemask_lt", "popc",
    "brev", "clz", "ffs", "fma", "cbrt", "selp", "laneid", "warpsize"})
# The attributes of an array (or index triple) a kernel may read.
ARRAY_ATTRS = frozenset({"shape", "size", "ndim", "dtype", "itemsize", "x", "y", "z"})
# cuda.jit's options a submission may set, each to a plain value.
JIT_OPTIONS = frozenset({"device", "fastmath", "inline", "lineinfo", "debug", "opt",
                         "max_registers", "cache", "forceinline"})
# Modules whose names a submission's kernel may import; the course's own for their constants.
_MODULES = ("numpy", "math", "numba", "numba.cuda", "gpuperf", "re", "contextlib", "shlex")
_COURSE_MACHINERY = ("gpuperf.exercises", "gpuperf.grade", "gpuperf.sandbox",
                     "gpuperf.vetting", "gpuperf.records", "gpuperf.record", "gpuperf.selfcheck")

# Builtins a host function may call besides SAFE_BUILTINS: none of them reaches an object's
# attributes by name, a module, a frame or a file.
HOST_BUILTINS = SAFE_BUILTINS | frozenset({
    "list", "tuple", "dict", "set", "frozenset", "sorted", "enumerate", "zip", "sum", "any",
    "all", "reversed", "str", "isinstance", "map", "filter", "iter", "next", "slice", "repr",
    "format", "ord", "chr", "hex", "bin", "True", "False", "None"})
# numba.cuda's host API a host function may call: memory, streams, events, waiting.
CUDA_HOST_CALLS = frozenset({
    "device_array", "device_array_like", "to_device", "pinned_array", "pinned_array_like",
    "mapped_array", "mapped_array_like", "managed_array", "stream", "default_stream",
    "legacy_default_stream", "per_thread_default_stream", "event",
    "event_elapsed_time", "synchronize", "is_available", "current_context", "pinned", "mapped",
    "defer_cleanup", "get_current_device"})
# NumPy functions a host function may call, besides ufuncs and scalar types: constructors and
# reductions of arrays (no file, no pickle, no buffer of raw memory).
NUMPY_HOST_CALLS = frozenset({
    "zeros", "empty", "ones", "full", "zeros_like", "empty_like", "ones_like", "full_like",
    "arange", "linspace", "array", "asarray", "ascontiguousarray", "concatenate", "stack",
    "dtype", "prod", "cumsum", "argmax", "argmin", "argsort", "sort", "where", "isclose",
    "allclose", "array_equal", "nonzero", "flatnonzero", "unique", "clip", "searchsorted",
    "sum", "max", "min", "mean", "amax", "amin", "round", "ceil", "floor", "abs", "result_type",
    "iinfo", "finfo"})
# Other modules a host function may call into, and which of their functions.
OTHER_HOST_CALLS = {"re": frozenset({"escape"}), "contextlib": frozenset({"ExitStack"}),
                    "shlex": frozenset({"split", "quote", "join"})}
# The attributes of a value a host function may read, and the methods it may call: those of
# device and host arrays, streams and events, dicts, lists, strings, and the course's records.
HOST_ATTRS = ARRAY_ATTRS | frozenset({
    "nbytes", "T", "rows", "meta", "real", "imag", "max", "min", "bits", "eps",
    # of cuda.get_current_device(): numbers and a name
    "name", "compute_capability", "MULTIPROCESSOR_COUNT", "MAX_THREADS_PER_BLOCK",
    "MAX_BLOCK_DIM_X", "MAX_GRID_DIM_X", "WARP_SIZE", "MAX_SHARED_MEMORY_PER_BLOCK",
    "MAX_REGISTERS_PER_BLOCK", "MAX_THREADS_PER_MULTI_PROCESSOR", "ASYNC_ENGINE_COUNT",
    "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR", "MAX_REGISTERS_PER_MULTIPROCESSOR", "L2_CACHE_SIZE"})
HOST_METHODS = frozenset({
    "copy_to_host", "copy_to_device", "synchronize", "record", "query", "wait", "reshape",
    "ravel", "view", "astype", "copy", "fill", "sum", "max", "min", "mean", "argmax", "argmin",
    "item", "tolist", "get", "items", "keys", "values", "append", "extend", "insert", "pop",
    "index", "count", "setdefault", "update", "clear", "join", "split", "strip", "lstrip",
    "rstrip", "startswith", "endswith", "lower", "upper", "replace", "select", "one",
    "is_integer", "add", "discard", "remove", "auto_synchronize", "enter_context"})
# The course's modules whose public functions and kernels a host function may use: the chapter
# packages themselves (not their submodules: checks live there) and the device queries.
_COURSE_HOST_MODULES = ("gpuperf.device",)

_STATEMENTS = (ast.Assign, ast.AugAssign, ast.Expr, ast.If, ast.For, ast.While, ast.Break,
               ast.Continue, ast.Pass, ast.Return)
_EXPRESSIONS = (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Tuple, ast.List,
                ast.Constant, ast.Subscript, ast.Slice, ast.Name, ast.Attribute, ast.Call,
                ast.operator, ast.unaryop, ast.boolop, ast.cmpop, ast.expr_context,
                ast.keyword)


class NotVetted(Exception):
    """Why a definition cannot be run on its own (a sentence for the student and instructor)."""


def _module_allowed(name: str) -> bool:
    return (any(name == m or name.startswith(m + ".") for m in _MODULES)
            and not any(name == m or name.startswith(m + ".") for m in _COURSE_MACHINERY)
            and not any(part.startswith("_") for part in name.split(".")))


def _plain(value) -> bool:
    """A constant a kernel may hold: numbers, text, tuples of them, NumPy and Numba types."""
    import numpy as np

    if isinstance(value, (bool, int, float, complex, str, np.generic)) or value is None:
        return True
    if isinstance(value, tuple):
        return all(_plain(x) for x in value)
    if isinstance(value, type) and issubclass(value, np.generic):
        return True
    return _numba_type(value)


def _numba_type(value) -> bool:
    try:
        from numba.core import types
    except ImportError:  # pragma: no cover - numba is a requirement
        return False
    return isinstance(value, types.Type)


class _Binding:
    """What a top-level statement binds a name to: ``kind`` is "module" (an import or an alias
    of one: ``value`` the module's dotted name), "object" (a name imported from a module:
    ``value`` the object), "def" (a function definition), "assign" or "other"."""

    def __init__(self, kind, node, position, value=None):
        self.kind, self.node, self.position, self.value = kind, node, position, value


class _Vetter:
    def __init__(self, cells):
        self.bindings: dict[str, _Binding] = {}
        for c, text in enumerate(cells):
            tree = _parse(text)
            if tree is None:
                continue
            for s, stmt in enumerate(tree.body):
                self._bind(stmt, (c, s))
        self.needed: dict[tuple, ast.stmt] = {}  # position -> the statement to emit
        self.done: set[str] = set()
        self.functions: set[str] = set()
        self.factory: str | None = None  # the function that makes the kernel, if it is one
        self.host = False  # whether host functions may come along (answer_definitions)

    # -- what each top-level statement binds
    def _bind(self, stmt, position):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            kind = "def" if isinstance(stmt, ast.FunctionDef) else "other"
            self.bindings[stmt.name] = _Binding(kind, stmt, position)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for alias in stmt.names:
                name = alias.asname or alias.name.split(".")[0]
                self.bindings[name] = self._import_binding(stmt, alias, position)
        elif isinstance(stmt, ast.Assign) and self._module_alias(stmt):
            self.bindings[stmt.targets[0].id] = _Binding(
                "module", stmt, position, self._module_alias(stmt))
        elif isinstance(stmt, ast.Assign) and all(_simple_target(t) for t in stmt.targets):
            for t in stmt.targets:
                for n in _target_names(t):
                    self.bindings[n] = _Binding("assign", stmt, position)
        else:
            for node in ast.walk(stmt):
                n = None
                if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                    n = node.id
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    n = node.name
                elif isinstance(node, ast.alias):
                    n = node.asname or node.name.split(".")[0]
                elif isinstance(node, ast.arg):
                    continue
                if n:
                    self.bindings[n] = _Binding("other", stmt, position)

    def _module_alias(self, stmt) -> str | None:
        """The module ``name = module.sub`` binds ``name`` to (``co = gp.coalescing``)."""
        if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name) \
                or not isinstance(stmt.value, ast.Attribute):
            return None
        chain = _chain(stmt.value)
        root = self.bindings.get(chain[0]) if chain else None
        if root is None or root.kind != "module":
            return None
        value = _resolve(root.value, chain[1:])
        if type(value).__name__ == "module" and _module_allowed(value.__name__):
            return value.__name__
        return None

    def _import_binding(self, stmt, alias, position):
        if isinstance(stmt, ast.Import):
            module = alias.name if alias.asname else alias.name.split(".")[0]
            if not _module_allowed(alias.name):
                return _Binding("other", stmt, position)
            return _Binding("module", stmt, position, module)
        if stmt.level or not stmt.module or alias.name == "*" or not _module_allowed(stmt.module):
            return _Binding("other", stmt, position)
        dotted = f"{stmt.module}.{alias.name}"
        try:
            importlib.import_module(dotted)
        except ImportError:
            pass
        else:
            if _module_allowed(dotted):
                return _Binding("module", stmt, position, dotted)
            return _Binding("other", stmt, position)
        try:
            value = getattr(importlib.import_module(stmt.module), alias.name)
        except (ImportError, AttributeError):
            return _Binding("other", stmt, position)
        return _Binding("object", stmt, position, value)

    # -- the closure of what a name needs
    def need(self, name: str, why: str):
        if name.startswith("__"):
            raise NotVetted(f"`{name}` ({why}) is a name the grader does not run")
        if name in self.done:
            return
        self.done.add(name)
        b = self.bindings.get(name)
        if b is None:
            if name in SAFE_BUILTINS:
                return
            raise NotVetted(f"`{name}` ({why}) is not defined by your notebook before the "
                            f"checker")
        if b.kind in ("module", "object"):
            owner = b.node.module if isinstance(b.node, ast.ImportFrom) else ""
            course = b.kind == "object" and (
                _course_function(owner, b.value, host=self.host)
                or (self.host and _host_api(owner, b.node.names, name)))
            if b.kind == "object" and not (_plain(b.value) or self._callable_ok(b.value)
                                           or _is_jit(b.value) or course):
                raise NotVetted(f"`{name}` is imported from a module, and the grader runs only "
                                f"constants, NumPy and Numba types and math functions from one"
                                + (", and the course's chapter functions" if self.host else ""))
            if b.kind == "object" and _is_jit(b.value) and not course:
                raise NotVetted(f"`{name}` is a kernel of the course's, not yours")
            self._emit_import(b, name)
        elif b.kind == "def":
            if b.node.name == self.factory or (
                    self.host and not b.node.decorator_list and _makes_a_kernel(b.node)):
                self._vet_factory(b.node)
            elif self.host and not b.node.decorator_list:
                self._vet_host_function(b.node)
            else:
                self._vet_function(b.node)
            self.functions.add(name)
            self.needed[b.position] = b.node
        elif b.kind == "assign":
            for value in _assigned_values(b.node):
                if self.host:
                    self._host_expr(value, frozenset(), "a value of your notebook")
                else:
                    self._vet_constant(value)
            self.needed[b.position] = b.node
        else:
            raise NotVetted(f"`{name}` is set by a statement the grader does not run on its own "
                            f"(line: {_first_line(b.node)!r})")

    def _emit_import(self, b, name):
        stmt = b.node
        if isinstance(stmt, ast.Assign):  # co = gp.coalescing: and the import of gp
            self.needed[b.position] = stmt
            self.need(_chain(stmt.value)[0], f"the module `{name}` is taken from")
            return
        keep = [a for a in stmt.names if (a.asname or a.name.split(".")[0]) == name]
        node = (ast.Import(names=keep) if isinstance(stmt, ast.Import)
                else ast.ImportFrom(module=stmt.module, names=keep, level=0))
        # Several names of one statement: one statement each, at the same place.
        self.needed[(*b.position, name)] = node

    @staticmethod
    def _callable_ok(value) -> bool:
        import numpy as np

        if isinstance(value, np.ufunc):
            return True
        if isinstance(value, type) and issubclass(value, np.generic):
            return True
        return getattr(value, "__module__", None) == "math" or value in vars(math).values()

    # -- a kernel or device function
    def _vet_function(self, fn: ast.FunctionDef, closure=frozenset()):
        if len(fn.decorator_list) != 1 or not self._is_jit_decorator(fn.decorator_list[0]):
            raise NotVetted(f"`{fn.name}` is not decorated with `cuda.jit` alone")
        local = _params(fn) | set(closure)
        for node in ast.walk(ast.Module(body=fn.body, type_ignores=[])):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                local.add(node.id)
        for stmt in fn.body:
            self._vet_statement(stmt, local, fn.name)

    def _vet_factory(self, fn: ast.FunctionDef):
        """A function that makes a kernel (``make_my_tiled_at(tile)``): plain parameters, then
        assignments of values computed from them, ``cuda.jit`` functions that use them, and
        ``return`` of one of those functions."""
        if fn.decorator_list:
            raise NotVetted(f"`{fn.name}` is decorated, and is neither a kernel nor a function "
                            f"that makes one")
        local, kernels = _params(fn), set()
        body = fn.body[1:] if _is_docstring(fn.body[0]) else fn.body
        for stmt in body[:-1]:
            if isinstance(stmt, ast.FunctionDef):
                self._vet_function(stmt, closure=local)
                kernels.add(stmt.name)
                local.add(stmt.name)
            elif isinstance(stmt, ast.Assign) and all(_simple_target(t) for t in stmt.targets):
                self._vet_expression(stmt.value, local, fn.name)
                for t in stmt.targets:
                    local.update(_target_names(t))
            else:
                raise NotVetted(f"`{fn.name}` holds `{_first_line(stmt)}`; a function that "
                                f"makes a kernel computes values, defines the kernel and "
                                f"returns it")
        last = body[-1] if body else None
        if not (isinstance(last, ast.Return) and isinstance(last.value, ast.Name)
                and last.value.id in kernels):
            raise NotVetted(f"`{fn.name}` does not end by returning the kernel it defines")

    def _vet_statement(self, stmt, local, where):
        if not isinstance(stmt, _STATEMENTS):
            raise NotVetted(f"`{where}` uses a `{type(stmt).__name__}` statement (line "
                            f"{stmt.lineno}), which a kernel does not need")
        for field, value in ast.iter_fields(stmt):
            items = value if isinstance(value, list) else [value]
            for item in items:
                if isinstance(item, ast.stmt):
                    self._vet_statement(item, local, where)
                elif isinstance(item, ast.expr):
                    if field == "targets" or (field == "target" and isinstance(
                            stmt, (ast.For, ast.AugAssign))):
                        self._vet_target(item, local, where)
                    else:
                        self._vet_expression(item, local, where)

    def _vet_target(self, node, local, where):
        if isinstance(node, ast.Name):
            return
        if isinstance(node, (ast.Tuple, ast.List)):
            for e in node.elts:
                self._vet_target(e, local, where)
            return
        if isinstance(node, ast.Subscript):  # a[i] = ..., a[i][j] = ...
            base = node
            while isinstance(base, ast.Subscript):
                self._vet_expression(base.slice, local, where)
                base = base.value
            if isinstance(base, ast.Name) and base.id in local:
                return
        raise NotVetted(f"`{where}` assigns to `{ast.unparse(node)}` (line {node.lineno}); a "
                        f"kernel writes its locals and the elements of its arrays")

    def _vet_expression(self, node, local, where):
        for sub in ast.walk(node):
            if not isinstance(sub, _EXPRESSIONS):
                raise NotVetted(f"`{where}` uses `{_snippet(sub)}` (a {type(sub).__name__}), "
                                f"which the grader does not run on its own")
            if isinstance(sub, ast.Constant) and isinstance(sub.value, bytes):
                raise NotVetted(f"`{where}` uses a bytes constant")
            if isinstance(sub, ast.Attribute):
                if sub.attr.startswith("_"):
                    raise NotVetted(f"`{where}` reads `{_snippet(sub)}`: a name starting "
                                    f"with `_`")
        self._vet_names(node, local, where)

    def _vet_names(self, node, local, where):
        """Every name and attribute chain ``node`` reads, against the whitelist."""
        if isinstance(node, ast.Attribute):
            chain = _chain(node)
            if chain is None:  # an attribute of something computed: (a + b).x
                if node.attr not in ARRAY_ATTRS:
                    raise NotVetted(f"`{where}` reads `{_snippet(node)}`")
                self._vet_names(node.value, local, where)
                return
            self._vet_chain(chain, local, where, node)
            return
        if isinstance(node, ast.Name):
            if node.id in local:
                return
            self.need(node.id, f"named in `{where}`")
            return
        if isinstance(node, ast.Call):
            self._vet_callee(node.func, local, where)
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                self._vet_names(arg, local, where)
            if any(k.arg is None for k in node.keywords):
                raise NotVetted(f"`{where}` passes `**` to a call")
            return
        for child in ast.iter_child_nodes(node):
            self._vet_names(child, local, where)

    def _vet_callee(self, func, local, where):
        if isinstance(func, ast.Name):
            if func.id in local:
                raise NotVetted(f"`{where}` calls its local `{func.id}`")
            if func.id in SAFE_BUILTINS and func.id not in self.bindings:
                return
            self.need(func.id, f"called in `{where}`")
            b = self.bindings[func.id]
            if b.kind == "assign":
                raise NotVetted(f"`{where}` calls `{func.id}`, a value, not a function")
            if b.kind == "module":
                raise NotVetted(f"`{where}` calls the module `{func.id}`")
            return
        if isinstance(func, ast.Attribute):
            chain = _chain(func)
            if chain is None:
                raise NotVetted(f"`{where}` calls `{_snippet(func)}`")
            self._vet_chain(chain, local, where, func, call=True)
            return
        raise NotVetted(f"`{where}` calls `{_snippet(func)}`")

    def _vet_chain(self, chain, local, where, node, call=False):
        root, *attrs = chain
        text = ".".join(chain)
        if root in local:
            if len(attrs) == 1 and attrs[0] in ARRAY_ATTRS and not call:
                return
            raise NotVetted(f"`{where}` uses `{text}`: of an array a kernel reads "
                            f"{', '.join(sorted(ARRAY_ATTRS))}")
        self.need(root, f"named in `{where}`")
        b = self.bindings[root]
        if b.kind != "module":
            raise NotVetted(f"`{where}` uses `{text}`: an attribute of `{root}`, which is not "
                            f"a module")
        module = b.value
        if module == "numba" and attrs[:1] == ["cuda"]:
            module, attrs = "numba.cuda", attrs[1:]
        if module == "numba.cuda":
            if attrs and attrs[0] in CUDA_API and (
                    (len(attrs) == 2 and attrs[1] in CUDA_API[attrs[0]]) or len(attrs) == 1):
                if call and len(attrs) == 1:
                    raise NotVetted(f"`{where}` calls `{text}`")
                return
            if len(attrs) == 1 and attrs[0] in CUDA_CALLS:
                return
            raise NotVetted(f"`{where}` uses `{text}`, which is not among the device functions "
                            f"of numba.cuda the grader runs on its own")
        value = _resolve(module, attrs)
        if value is _MISSING:
            raise NotVetted(f"`{where}` uses `{text}`, which does not exist")
        if call:
            if self._callable_ok(value) or _numba_type(value) or (
                    _is_device_function(value) and _course_function(
                        _owner(module, attrs), value, host=True)):
                return
            raise NotVetted(f"`{where}` calls `{text}`: a kernel the grader runs on its own "
                            f"calls the device API, math functions, NumPy ufuncs and types, the "
                            f"course's device functions and its own device functions")
        if _plain(value) or self._callable_ok(value):
            return
        raise NotVetted(f"`{where}` uses `{text}`, which is not a constant")

    # -- a host function
    def _vet_host_function(self, fn: ast.FunctionDef):
        """A plain function of the student's that the checker calls on the host (it launches
        kernels, allocates, copies, reads records): the module docstring says what it may do."""
        if fn.decorator_list:
            raise NotVetted(f"`{fn.name}` is decorated, and the grader runs plain functions and "
                            f"`cuda.jit` kernels")
        scope = self._host_arguments(fn.args, frozenset(), fn.name)
        body = fn.body[1:] if fn.body and _is_docstring(fn.body[0]) else fn.body
        # Python's rule: a name bound anywhere in the function (not in a comprehension or a
        # lambda, which have scopes of their own) is local to it everywhere in it.
        scope = scope | frozenset(_bound_names(body))
        for stmt in body:
            self._host_statement(stmt, scope, fn.name)

    def _host_arguments(self, args: ast.arguments, scope, where) -> frozenset:
        if args.vararg or args.kwarg or any(
                x.annotation for x in [*args.posonlyargs, *args.args, *args.kwonlyargs]):
            raise NotVetted(f"`{where}` has parameters with annotations, * or ** (the grader "
                            f"runs plain parameters, with constant defaults)")
        for default in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
            self._host_expr(default, scope, where)
        names = [x.arg for x in [*args.posonlyargs, *args.args, *args.kwonlyargs]]
        for n in names:
            if n.startswith("__"):
                raise NotVetted(f"`{where}` has a parameter named `{n}`")
        return frozenset(names)

    def _host_statement(self, stmt, scope, where):
        if isinstance(stmt, (ast.Break, ast.Continue, ast.Pass)):
            return
        if isinstance(stmt, ast.Expr):
            if not _is_docstring(stmt):
                self._host_expr(stmt.value, scope, where)
            return
        if isinstance(stmt, ast.Return):
            if stmt.value is not None:
                self._host_expr(stmt.value, scope, where)
            return
        if isinstance(stmt, ast.Assert):
            self._host_expr(stmt.test, scope, where)
            if stmt.msg is not None:
                self._host_expr(stmt.msg, scope, where)
            return
        if isinstance(stmt, (ast.Assign, ast.AugAssign)):
            self._host_expr(stmt.value, scope, where)
            for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]):
                self._host_target(t, scope, where)
            return
        if isinstance(stmt, (ast.If, ast.While)):
            self._host_expr(stmt.test, scope, where)
            for s in [*stmt.body, *stmt.orelse]:
                self._host_statement(s, scope, where)
            return
        if isinstance(stmt, ast.With):  # with s.auto_synchronize(), with ExitStack() as w
            for item in stmt.items:
                self._host_expr(item.context_expr, scope, where)
                if item.optional_vars is not None:
                    if not isinstance(item.optional_vars, ast.Name):
                        raise NotVetted(f"`{where}` binds `{_snippet(item.optional_vars)}` "
                                        f"in a `with`")
                    self._host_target(item.optional_vars, scope, where)
            for s in stmt.body:
                self._host_statement(s, scope, where)
            return
        if isinstance(stmt, ast.For):
            self._host_expr(stmt.iter, scope, where)
            self._host_target(stmt.target, scope, where)
            for s in [*stmt.body, *stmt.orelse]:
                self._host_statement(s, scope, where)
            return
        raise NotVetted(f"`{where}` uses a `{type(stmt).__name__}` statement (line "
                        f"{stmt.lineno}), which the grader does not run on its own")

    def _host_target(self, node, scope, where):
        if isinstance(node, ast.Name):
            if node.id in scope:
                return
            raise NotVetted(f"`{where}` assigns to `{node.id}`, which is not its own")
        if isinstance(node, (ast.Tuple, ast.List)):
            for e in node.elts:
                self._host_target(e, scope, where)
            return
        if isinstance(node, ast.Starred):
            self._host_target(node.value, scope, where)
            return
        if isinstance(node, ast.Subscript):  # out[lo:hi] = ..., cache[key] = ...
            self._host_expr(node.slice, scope, where)
            base = node.value
            if isinstance(base, ast.Subscript):
                self._host_target(base, scope, where)
                return
            if isinstance(base, ast.Name):
                if base.id in scope:
                    return
                self.need(base.id, f"written by `{where}`")
                if self.bindings[base.id].kind == "assign":
                    return
        raise NotVetted(f"`{where}` assigns to `{_snippet(node)}` (line {node.lineno}); a "
                        f"function the grader runs on its own writes its locals, the elements "
                        f"of arrays, dicts and lists, and never an attribute")

    def _host_expr(self, node, scope, where):
        """Check the expression ``node`` of host code, whose local names are ``scope``."""
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bytes):
                raise NotVetted(f"`{where}` uses a bytes constant")
            return
        if isinstance(node, ast.Name):
            self._host_name(node.id, scope, where)
            return
        if isinstance(node, ast.Attribute):
            self._host_attribute(node, scope, where, call=False)
            return
        if isinstance(node, ast.Call):
            self._host_callee(node.func, scope, where)
            for arg in node.args:
                self._host_expr(arg, scope, where)
            for k in node.keywords:
                self._host_expr(k.value, scope, where)
            return
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            inner = scope
            for k, gen in enumerate(node.generators):
                if gen.is_async:
                    raise NotVetted(f"`{where}` uses an async comprehension")
                # the first iterable is evaluated where the comprehension stands
                self._host_expr(gen.iter, scope if k == 0 else inner, where)
                inner = inner | frozenset(_target_names_any(gen.target))
                self._host_target(gen.target, inner, where)
                for cond in gen.ifs:
                    self._host_expr(cond, inner, where)
            parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            for part in parts:
                self._host_expr(part, inner, where)
            return
        if isinstance(node, ast.Lambda):
            inner = scope | self._host_arguments(node.args, scope, where)
            self._host_expr(node.body, inner, where)
            return
        if isinstance(node, ast.Dict):
            for part in [*node.keys, *node.values]:
                if part is not None:
                    self._host_expr(part, scope, where)
            return
        if isinstance(node, _HOST_PLAIN_NODES):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self._host_expr(child, scope, where)
                elif not isinstance(child, (ast.operator, ast.unaryop, ast.boolop, ast.cmpop,
                                            ast.expr_context)):
                    raise NotVetted(f"`{where}` uses `{_snippet(node)}`")
            return
        raise NotVetted(f"`{where}` uses `{_snippet(node)}` (a {type(node).__name__}), which "
                        f"the grader does not run on its own")

    def _host_attribute(self, node, scope, where, *, call: bool):
        """``x.attr`` read (``call`` false) or called in host code: of a module, what
        ``_host_module_chain`` allows; of a value, the attributes ``HOST_ATTRS`` or the methods
        ``HOST_METHODS``."""
        verb = "calls" if call else "reads"
        if node.attr.startswith("_"):
            raise NotVetted(f"`{where}` {verb} `{_snippet(node)}`: a name starting with `_`")
        chain = _chain(node)
        if chain and chain[0] not in scope and self._is_module_name(chain[0]):
            self._host_module_chain(chain, where, call=call)
            return
        allowed = HOST_METHODS if call else HOST_ATTRS
        if node.attr not in allowed:
            raise NotVetted(f"`{where}` {verb} `{_snippet(node)}`: of a value the grader "
                            f"{verb} {'the methods ' if call else ''}"
                            f"{', '.join(sorted(allowed))}")
        self._host_expr(node.value, scope, where)

    def _is_module_name(self, name) -> bool:
        b = self.bindings.get(name)
        return b is not None and b.kind == "module"

    def _host_name(self, name, scope, where):
        if name.startswith("__"):
            raise NotVetted(f"`{where}` names `{name}`")
        if name in scope:
            return
        if name in HOST_BUILTINS and name not in self.bindings:
            return
        self.need(name, f"named in `{where}`")
        if self.bindings[name].kind == "module":
            raise NotVetted(f"`{where}` uses the module `{name}` as a value; use its functions")

    def _host_callee(self, func, scope, where):
        if isinstance(func, ast.Name):
            self._host_name(func.id, scope, where)
            b = self.bindings.get(func.id)
            if func.id not in scope and b is not None and b.kind == "assign" \
                    and func.id not in HOST_BUILTINS:
                raise NotVetted(f"`{where}` calls `{func.id}`, a value, not a function")
            return
        if isinstance(func, ast.Attribute):
            self._host_attribute(func, scope, where, call=True)
            return
        if isinstance(func, ast.Subscript):  # a launch: kernel[grid, block(, stream)](...)
            self._host_expr(func.slice, scope, where)
            kernel = func.value
            if isinstance(kernel, ast.Attribute):
                chain = _chain(kernel)
                if not (chain and chain[0] not in scope and self._is_module_name(chain[0])):
                    raise NotVetted(f"`{where}` launches `{_snippet(kernel)}`")
                self._host_module_chain(chain, where, call=True, launch=True)
                return
            self._host_expr(kernel, scope, where)
            return
        if isinstance(func, (ast.Call, ast.Lambda)):
            self._host_expr(func, scope, where)
            return
        raise NotVetted(f"`{where}` calls `{_snippet(func)}`")

    def _host_module_chain(self, chain, where, *, call: bool, launch: bool = False):
        """``module.attr...`` read or called from host code: numba.cuda's host API, NumPy's
        constructors, math, ``re.escape``, and the course's chapter functions and kernels."""
        root, *attrs = chain
        text = ".".join(chain)
        self.need(root, f"named in `{where}`")
        module = self.bindings[root].value
        if module == "numba" and attrs[:1] == ["cuda"]:
            module, attrs = "numba.cuda", attrs[1:]
        if module == "numba.cuda":
            if call and not launch and len(attrs) == 1 and attrs[0] in CUDA_HOST_CALLS:
                return
            raise NotVetted(f"`{where}` uses `{text}`: of numba.cuda a host function the "
                            f"grader runs calls {', '.join(sorted(CUDA_HOST_CALLS))}")
        value = _resolve(module, attrs)
        if value is _MISSING:
            raise NotVetted(f"`{where}` uses `{text}`, which does not exist or is not open to "
                            f"the grader's run")
        owner = _owner(module, attrs)
        if _course_function(owner, value, host=True):
            return
        if launch:
            raise NotVetted(f"`{where}` launches `{text}`, which is no kernel of the course's "
                            f"chapters")
        if call:
            allowed = (NUMPY_HOST_CALLS if owner == "numpy"
                       else OTHER_HOST_CALLS.get(owner, frozenset()))
            if self._callable_ok(value) or _numba_type(value) or (
                    len(attrs) >= 1 and attrs[-1] in allowed):
                return
            raise NotVetted(f"`{where}` calls `{text}`, which the grader does not run on its "
                            f"own (numba.cuda's host API, NumPy's array functions and math, "
                            f"math, and the course's chapter functions)")
        if _plain(value) or self._callable_ok(value):
            return
        raise NotVetted(f"`{where}` uses `{text}`, which is not a constant")

    def _vet_constant(self, node):
        self._vet_expression(node, set(), "a constant")

    def _is_jit_decorator(self, node) -> bool:
        target, options = node, []
        if isinstance(node, ast.Call):
            target = node.func
            for k in node.keywords:
                if k.arg not in JIT_OPTIONS or not isinstance(k.value, ast.Constant):
                    raise NotVetted(f"`cuda.jit` is given `{_snippet(k)}`; the grader runs only "
                                    f"the options {', '.join(sorted(JIT_OPTIONS))} set to plain "
                                    f"values")
            options = node.args
        chain = _chain(target) if isinstance(target, ast.Attribute) else (
            [target.id] if isinstance(target, ast.Name) else None)
        if not chain:
            return False
        b = self.bindings.get(chain[0])
        if b is None:
            return False
        if b.kind == "module":
            full = ".".join([b.value, *chain[1:]])
        elif b.kind == "object" and len(chain) == 1:
            full = f"{b.node.module}.{chain[0]}" if isinstance(b.node, ast.ImportFrom) else ""
        else:
            return False
        if full not in ("numba.cuda.jit", "numba.cuda.decorators.jit"):
            return False
        self.done.add(chain[0])
        self._emit_import(b, chain[0])
        for sig in options:
            _vet_signature(sig)
        return True


_MISSING = object()


def _resolve(module: str, attrs):
    """``module.attrs...`` (names without ``_``), imported and read, or _MISSING."""
    try:
        value = importlib.import_module(module)
    except ImportError:
        return _MISSING
    name = module
    for a in attrs:
        if a.startswith("_"):
            return _MISSING
        nxt = getattr(value, a, _MISSING)
        if nxt is _MISSING:
            return _MISSING
        name = f"{name}.{a}"
        if type(nxt).__name__ == "module":
            if not _module_allowed(getattr(nxt, "__name__", name)):
                return _MISSING
        value = nxt
    return value


# Expressions of host code whose children are all expressions checked the same way.
_HOST_PLAIN_NODES = (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Tuple,
                     ast.List, ast.Set, ast.Subscript, ast.Slice, ast.Starred, ast.JoinedStr,
                     ast.FormattedValue)


def _bound_names(body) -> set:
    """The names a function's statements bind, outside comprehensions and lambdas."""
    names: set = set()

    def visit(node):
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp,
                             ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef,
                             ast.ClassDef)):
            return  # a scope of its own (its first iterable binds nothing)
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        for child in ast.iter_child_nodes(node):
            visit(child)

    for stmt in body:
        visit(stmt)
    return names


def _target_names_any(t) -> list:
    return [n.id for n in ast.walk(t) if isinstance(n, ast.Name)]


def _owner(module: str, attrs) -> str:
    """The dotted name of the last module ``module.attrs...`` passes through."""
    try:
        value = importlib.import_module(module)
    except ImportError:
        return module
    owner = module
    for a in attrs[:-1]:
        value = getattr(value, a, None)
        if type(value).__name__ != "module":
            break
        owner = value.__name__
    return owner


def _host_api(module: str, aliases, name: str) -> bool:
    """Whether ``from module import ...`` binds ``name`` to a function of the host API a host
    function may call (``from numba.cuda import device_array, stream``)."""
    alias = next((a for a in aliases if (a.asname or a.name) == name), None)
    if alias is None:
        return False
    allowed = (CUDA_HOST_CALLS if module == "numba.cuda" else NUMPY_HOST_CALLS
               if module == "numpy" else OTHER_HOST_CALLS.get(module, frozenset()))
    return alias.name in allowed


def _is_device_function(value) -> bool:
    """A ``cuda.jit(device=True)`` function, or one of ``gpuperf.vector``'s 16-byte loads and
    stores (an intrinsic on a GPU, a Python function under the simulator)."""
    if _is_jit(value) and bool(getattr(value, "targetoptions", {}).get("device")):
        return True
    from . import vector

    return any(value is getattr(vector, n) for n in dir(vector) if not n.startswith("_")
               and callable(getattr(vector, n)) and n.startswith(("load_", "store_")))


def _course_function(owner: str, value, *, host: bool) -> bool:
    """Whether ``value``, read from the module ``owner``, is a function of the course's that
    code the grader runs on its own may use: a device function (in a kernel too), or, for
    host code, a public function or kernel of a chapter package (``gpuperf.kernels.reduce``,
    not its submodules) or of ``gpuperf.device``/``gpuperf.vector``; never a checker, a class
    or anything of the grader's machinery."""
    import types

    if not isinstance(owner, str) or not _module_allowed(owner):
        return False
    parts = owner.split(".")
    if not (owner in _COURSE_HOST_MODULES or owner == "gpuperf.vector"
            or (len(parts) == 3 and parts[:2] == ["gpuperf", "kernels"])):
        return False
    if _is_device_function(value) and not _is_jit(value):
        return True  # gpuperf.vector's loads and stores
    name = getattr(value, "__name__", "") or ""
    where = getattr(value, "__module__", "") or ""
    if _is_jit(value):
        where = getattr(getattr(value, "py_func", None), "__module__", "") or where
        name = getattr(getattr(value, "py_func", None), "__name__", "") or name
    if name.startswith(("check_", "_")) or not where.startswith("gpuperf.") \
            or not _module_allowed(where):
        return False
    if _is_device_function(value):
        return True
    return host and (_is_jit(value) or isinstance(value, types.FunctionType))


def _vet_signature(node) -> None:
    """A signature given to ``cuda.jit``: a string or an expression of Numba types only."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            node = parse_python(node.value, mode="eval").body
        except SyntaxError:
            raise NotVetted(f"`cuda.jit`'s signature {node.value!r} is not Numba types") from None
    from numba.core import types

    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            if not isinstance(getattr(types, sub.id, None), (types.Type, type)) \
                    or sub.id.startswith("_"):
                raise NotVetted(f"`cuda.jit`'s signature names `{sub.id}`, not a Numba type")
        elif not isinstance(sub, (ast.Call, ast.Subscript, ast.Slice, ast.Tuple, ast.List,
                                  ast.Constant, ast.expr_context, ast.Load)):
            raise NotVetted(f"`cuda.jit`'s signature holds `{_snippet(sub)}`")


def _params(fn: ast.FunctionDef) -> set:
    a = fn.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.defaults or a.kw_defaults or fn.returns \
            or any(x.annotation for x in [*a.posonlyargs, *a.args]):
        raise NotVetted(f"`{fn.name}` has parameters with defaults, annotations, * or ** "
                        f"(a kernel's are plain names)")
    return {x.arg for x in [*a.posonlyargs, *a.args]}


def _is_docstring(stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
        and isinstance(stmt.value.value, str)


def _jit_named(decorator) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (isinstance(target, ast.Attribute) and target.attr == "jit") or (
        isinstance(target, ast.Name) and target.id == "jit")


def _makes_a_kernel(fn) -> bool:
    """Whether the plain function ``fn`` defines a function decorated with ``jit`` and
    returns it."""
    inner = {s.name for s in fn.body if isinstance(s, ast.FunctionDef)
             and any(_jit_named(d) for d in s.decorator_list)}
    return any(isinstance(s, ast.Return) and isinstance(s.value, ast.Name)
               and s.value.id in inner for s in fn.body)


def _is_jit(value) -> bool:
    return hasattr(value, "py_func") and type(value).__module__.startswith("numba")


def _chain(node):
    """``a.b.c`` as ``["a", "b", "c"]``; None if it does not start at a name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(parts)]


def _simple_target(t) -> bool:
    return isinstance(t, ast.Name) or (isinstance(t, (ast.Tuple, ast.List))
                                       and all(isinstance(e, ast.Name) for e in t.elts))


def _target_names(t):
    return [t.id] if isinstance(t, ast.Name) else [e.id for e in t.elts]


def _assigned_values(stmt: ast.Assign):
    """The value expressions of an assignment, element by element where it unpacks a tuple."""
    t = stmt.targets[0]
    if len(stmt.targets) == 1 and isinstance(t, (ast.Tuple, ast.List)) \
            and isinstance(stmt.value, (ast.Tuple, ast.List)) \
            and len(t.elts) == len(stmt.value.elts):
        return list(stmt.value.elts)
    return [stmt.value]


def _first_line(node) -> str:
    return ast.unparse(node).splitlines()[0][:80]


def _snippet(node) -> str:
    try:
        return ast.unparse(node)[:60]
    except Exception:  # noqa: BLE001 - a description only
        return type(node).__name__


def _parse(text: str):
    """A code cell's syntax tree (IPython's magics turned into Python first); None if it does
    not parse."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        text = TransformerManager().transform_cell(text)
    except Exception:  # noqa: BLE001 - without IPython, the text as it is
        pass
    try:
        return parse_python(text)
    except (SyntaxError, ValueError):
        return None


def kernel_definitions(cells, name: str) -> str:
    """The code that defines ``name`` (a ``cuda.jit`` kernel) and what it needs, from the code
    cells ``cells`` (their text, in notebook order, up to the checker), rebuilt statement by
    statement from what passes the whitelist. Raises ``NotVetted`` saying why not."""
    return _definitions(cells, name, host=False)


def answer_definitions(cells, name: str) -> str:
    """As ``kernel_definitions``, for an answer that is a kernel, a function that makes one, or
    a host function (``my_absmax(d_x)``: it launches kernels, allocates, copies, reads
    records), with the kernels and functions it uses."""
    return _definitions(cells, name, host=True)


def _definitions(cells, name: str, *, host: bool) -> str:
    vetter = _Vetter(_cells_arg(cells))
    vetter.host = host
    b = _definition(vetter, _name_arg(name))
    if b is None:
        raise NotVetted(f"`{name}` is not defined by a `def` "
                        + ("" if host else "decorated with `cuda.jit` ") + "in your notebook")
    if not b.node.decorator_list and _makes_a_kernel(b.node):
        vetter.factory = b.node.name
    vetter.need(name, "the function the checker is given" if host
                else "the kernel the checker is given")
    if not vetter.functions:
        raise NotVetted(f"`{name}` is not " + ("a function" if host else "a kernel"))
    body = [vetter.needed[p] for p in sorted(vetter.needed, key=_order)]
    return "\n".join(ast.unparse(ast.fix_missing_locations(n)) for n in body) + "\n"


def _cells_arg(cells) -> list:
    if not isinstance(cells, (list, tuple)) or not all(isinstance(c, str) for c in cells):
        raise TypeError(f"cells must be a list of code cells' text, not {type(cells).__name__}.")
    return list(cells)


def _name_arg(name, what="name") -> str:
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"{what}={name!r} is not a Python name; pass the name as the checker "
                         f"cell writes it.")
    return name


def _order(position):
    return (position[0], position[1], position[2] if len(position) > 2 else "")


def is_answer_definition(cells, name: str) -> bool:
    """Whether ``name``, as the cells ``cells`` leave it, is a ``def`` (possibly through an
    alias ``name = function``): a kernel, a function that makes one, or a host function."""
    return _definition(_Vetter(_cells_arg(cells)), _name_arg(name)) is not None


def _definition(vetter, name: str):
    """The ``def`` binding that ``name`` leads to, through aliases ``name = other`` (``smooth_fixed
    = kernel``), or None."""
    b, seen = vetter.bindings.get(name), set()
    while b is not None and b.kind == "assign" and isinstance(b.node.value, ast.Name) \
            and len(b.node.targets) == 1 and isinstance(b.node.targets[0], ast.Name) \
            and b.node.value.id not in seen:
        seen.add(b.node.value.id)
        b = vetter.bindings.get(b.node.value.id)
    return b if b is not None and b.kind == "def" else None


def is_kernel_definition(cells, name: str) -> bool:
    """Whether ``name``, as the cells ``cells`` leave it, is a ``def`` decorated with
    something named ``jit`` (possibly through an alias ``name = kernel``): what makes an
    exercise a kernel exercise, judged from the course's own notebook."""
    b = _definition(_Vetter(_cells_arg(cells)), _name_arg(name))
    if b is None:
        return False
    if not b.node.decorator_list:
        return _makes_a_kernel(b.node)
    return any(_jit_named(d) for d in b.node.decorator_list)


def kernel_checker_call(source_text: str):
    """``(module alias, checker name, argument name)`` of a checker cell that gives one kernel
    (or a function that makes one), by name, to a checker (``co.check_remap(scale_rows)``,
    ``mm.check_tiled(make_my_tiled_at, tile=4)``); None for any other cell."""
    call = answer_checker_call(source_text)
    if call is None or call[3]:
        return None
    return call[:3]


def answer_checker_call(source_text: str):
    """``(module alias, checker name, answer's name, the names passed after it)`` of a checker
    cell that gives a checker one function of the student's by name, perhaps followed by
    other names and keyword constants (``co.check_best_factor(read_sweep, sweep)``,
    ``mm.check_tiled(make_my_tiled_at, tile=4)``); None for any other cell."""
    if not isinstance(source_text, str):
        raise TypeError(f"source_text must be a code cell's text, not "
                        f"{type(source_text).__name__}.")
    tree = _parse(source_text)
    if tree is None or len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        return None
    call = tree.body[0].value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and isinstance(call.func.value, ast.Name) and call.func.attr.startswith("check_")
            and call.args and all(isinstance(a, ast.Name) for a in call.args)
            and all(k.arg and isinstance(k.value, ast.Constant) for k in call.keywords)):
        return None
    return (call.func.value.id, call.func.attr, call.args[0].id,
            tuple(a.id for a in call.args[1:]))


def without_arguments(source_text: str, count: int) -> str:
    """The checker cell ``source_text`` (``answer_checker_call`` reads it) with its last
    ``count`` positional arguments left out, so that the checker takes their defaults."""
    if not isinstance(source_text, str) or answer_checker_call(source_text) is None:
        raise ValueError("source_text must be a checker cell that gives a checker one function "
                         "by name (answer_checker_call reads it).")
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise ValueError(f"count={count!r} must be a whole number of arguments, 0 or more.")
    if count == 0:
        return source_text
    tree = _parse(source_text)
    call = tree.body[0].value
    if count >= len(call.args):
        raise ValueError(f"count={count} would leave out the answer itself; the cell passes "
                         f"{len(call.args)} argument(s).")
    call.args = call.args[:len(call.args) - count]
    quiet = source_text.rstrip().endswith(";")
    return ast.unparse(tree) + (";" if quiet else "") + "\n"


def module_of_alias(cells, alias: str) -> str | None:
    """The dotted name of the ``gpuperf`` module that ``alias`` names after ``cells`` (the
    course's own notebook: ``co = gp.coalescing``, ``from gpuperf.kernels import dram as
    dr``), or None."""
    vetter = _Vetter(_cells_arg(cells))
    b = vetter.bindings.get(_name_arg(alias, "alias"))
    if b is None:
        return None
    if b.kind == "module":
        return b.value if b.value.startswith("gpuperf") else None
    return None
