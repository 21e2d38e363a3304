"""Which of a submission's code the grader may run on its own: a CUDA kernel and what it needs.

The grader judges a kernel exercise a second time, apart from the student's notebook
(``grade.rejudge``): in a fresh kernel that runs the course's checker on the student's kernel
and nothing else of theirs. For that it needs the kernel's definition and the definitions it
uses (its device functions, its constants, the imports they name), and nothing that could reach
the grader's machinery from inside that kernel. ``kernel_definitions`` reads the student's
cells without running them and returns that code, rebuilt from the syntax tree statement by
statement, or says why it cannot:

- a kernel or device function is a ``def`` decorated with ``cuda.jit`` (keyword options of
  plain values, or a signature of Numba types), with plain parameters (no defaults, no
  annotations) and a body of assignments, ``if``, ``for``, ``while``, ``return`` and calls;
- what the body names is a parameter, a local, a safe builtin (``range``, ``min``...), the
  device API of ``numba.cuda`` (``cuda.threadIdx.x``, ``cuda.shared.array``,
  ``cuda.atomic.add``...), a function of ``math``, a NumPy ufunc or scalar type, a Numba type,
  a constant, or another such function; an attribute of an array is one of its shape, size,
  ndim, dtype (and ``.x``/``.y``/``.z`` of an index triple); no name starts with ``_``;
- a constant is an assignment of plain values: numbers, tuples, arithmetic, those same calls,
  and constants of the course's own modules (``dbg.SMOOTH_TILE``).

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
_MODULES = ("numpy", "math", "numba", "numba.cuda", "gpuperf")
_COURSE_MACHINERY = ("gpuperf.exercises", "gpuperf.grade", "gpuperf.sandbox",
                     "gpuperf.vetting", "gpuperf.records", "gpuperf.record", "gpuperf.selfcheck")

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
            if b.kind == "object" and not (_plain(b.value) or self._callable_ok(b.value)
                                           or _is_jit(b.value)):
                raise NotVetted(f"`{name}` is imported from a module, and the grader runs only "
                                f"constants, NumPy and Numba types and math functions from one")
            if b.kind == "object" and _is_jit(b.value):
                raise NotVetted(f"`{name}` is a kernel of the course's, not yours")
            self._emit_import(b, name)
        elif b.kind == "def":
            if b.node.name == self.factory:
                self._vet_factory(b.node)
            else:
                self._vet_function(b.node)
            self.functions.add(name)
            self.needed[b.position] = b.node
        elif b.kind == "assign":
            for value in _assigned_values(b.node):
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
            if self._callable_ok(value) or _numba_type(value):
                return
            raise NotVetted(f"`{where}` calls `{text}`: a kernel the grader runs on its own "
                            f"calls the device API, math functions, NumPy ufuncs and types, and "
                            f"its own device functions")
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


def _vet_signature(node) -> None:
    """A signature given to ``cuda.jit``: a string or an expression of Numba types only."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            node = ast.parse(node.value, mode="eval").body
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
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def kernel_definitions(cells, name: str) -> str:
    """The code that defines ``name`` (a ``cuda.jit`` kernel) and what it needs, from the code
    cells ``cells`` (their text, in notebook order, up to the checker), rebuilt statement by
    statement from what passes the whitelist. Raises ``NotVetted`` saying why not."""
    vetter = _Vetter(_cells_arg(cells))
    b = vetter.bindings.get(_name_arg(name))
    while b is not None and b.kind == "assign" and isinstance(b.node.value, ast.Name) \
            and len(b.node.targets) == 1 and isinstance(b.node.targets[0], ast.Name):
        b = vetter.bindings.get(b.node.value.id)  # smooth_fixed = kernel
    if b is None or b.kind != "def":
        raise NotVetted(f"`{name}` is not defined by a `def` decorated with `cuda.jit` in your "
                        f"notebook")
    if not b.node.decorator_list and _makes_a_kernel(b.node):
        vetter.factory = b.node.name
    vetter.need(name, "the kernel the checker is given")
    if not vetter.functions:
        raise NotVetted(f"`{name}` is not a kernel")
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


def is_kernel_definition(cells, name: str) -> bool:
    """Whether ``name``, as the cells ``cells`` leave it, is a ``def`` decorated with
    something named ``jit`` (possibly through an alias ``name = kernel``): what makes an
    exercise a kernel exercise, judged from the course's own notebook."""
    vetter = _Vetter(_cells_arg(cells))
    b = vetter.bindings.get(_name_arg(name))
    seen = set()
    while b is not None and b.kind == "assign" and isinstance(b.node.value, ast.Name) \
            and b.node.value.id not in seen:
        seen.add(b.node.value.id)
        b = vetter.bindings.get(b.node.value.id)
    if b is None or b.kind != "def":
        return False
    if not b.node.decorator_list:
        return _makes_a_kernel(b.node)
    return any(_jit_named(d) for d in b.node.decorator_list)


def kernel_checker_call(source_text: str):
    """``(module alias, checker name, argument name)`` of a checker cell that gives one kernel
    (or a function that makes one), by name, to a checker (``co.check_remap(scale_rows)``,
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
            and len(call.args) == 1 and isinstance(call.args[0], ast.Name)):
        return None
    return call.func.value.id, call.func.attr, call.args[0].id


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
