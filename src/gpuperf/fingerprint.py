"""What code an experiment ran, as a short hash (recorded with each measurement).

The fingerprint follows the code by name from the experiment's function: every function,
kernel, class and constant of the chapters (``gpuperf.kernels``) that it reaches — through its
globals, the attributes it reads from a chapter module, the cells of a closure (a kernel built by
a factory), the values of a table such as ``{"v0": reduce_v0, ...}``, and ``"module:function"``
launch strings that an Nsight Compute experiment runs in another process. It hashes their
source without its comments and docstrings (a constant: its ``repr``). So an edit to a kernel
changes the fingerprints of exactly the experiments that run it; an edit to a checker, a figure or
another experiment of the same file changes none, and neither does a corrected comment or
docstring, which the GPU does not run. The shared layer (``bench``, ``nsight``...) is left out: its timing code is the
measurement protocol, versioned by the record's other provenance, not by each experiment.

This module imports nothing from ``gpuperf``, so that a tool can load it by path and fingerprint
an older checkout's experiments with today's rule.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib
import importlib.util
import inspect
import io
import re
import sys
import textwrap
import tokenize
import types

CHAPTERS = "gpuperf.kernels"

_LAUNCH = re.compile(r"^([A-Za-z_][\w.]*):([A-Za-z_]\w*)$")
_SCALARS = (int, float, complex, str, bytes, bool, type(None))


def _constant(value, depth: int = 0) -> bool:
    """A plain value whose ``repr`` is its meaning (numbers, strings, tuples of them)."""
    if isinstance(value, _SCALARS):
        return True
    if isinstance(value, (tuple, frozenset)) and depth < 3:
        return all(_constant(x, depth + 1) for x in value)
    return False


def _source(obj) -> str | None:
    try:
        return inspect.getsource(obj)
    except (OSError, TypeError):  # built at run time (a dataclass's __init__), or in a notebook
        return None


def code_text(source: str) -> str:
    """``source`` as the fingerprint hashes it: without comments, docstrings (of the definition
    and of those nested in it), trailing spaces and blank lines; every other character as
    written. Read by positions (``ast``, ``tokenize``) that do not differ between Python
    versions, not re-printed by ``ast.unparse``, which does."""
    if not isinstance(source, str):
        raise TypeError(f"source must be Python source text (a string), not "
                        f"{type(source).__name__}.")
    text = textwrap.dedent(source)
    try:
        tree = ast.parse(text)
        comments = [(t.start, t.end) for t in
                    tokenize.generate_tokens(io.StringIO(text).readline)
                    if t.type == tokenize.COMMENT]
    except (SyntaxError, tokenize.TokenError, IndentationError):
        return text  # not Python we can read: hashed as written
    lines = [line.encode("utf-8") for line in text.split("\n")]

    def in_bytes(row, col):  # tokenize counts columns in characters, ast in UTF-8 bytes
        return row, len(lines[row - 1].decode("utf-8")[:col].encode("utf-8"))

    cuts = [(in_bytes(*start), in_bytes(*end)) for start, end in comments]
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                and node.body and isinstance(node.body[0], ast.Expr) \
                and isinstance(node.body[0].value, ast.Constant) \
                and isinstance(node.body[0].value.value, str):
            doc = node.body[0]
            cuts.append(((doc.lineno, doc.col_offset), (doc.end_lineno, doc.end_col_offset)))
    # The last cut first, so that the positions of those before it still hold.
    for (row, col), (end_row, end_col) in sorted(cuts, reverse=True):
        lines[row - 1:end_row] = [lines[row - 1][:col] + lines[end_row - 1][end_col:]]
    kept = (line.decode("utf-8").rstrip() for line in lines)
    return "\n".join(line for line in kept if line.strip())


def _read(source: str, package: str | None):
    """``(names, strings, imports)`` that a function's source uses, read with ``ast`` (not the
    bytecode, which differs between Python versions): every name and attribute, every string
    constant, and each ``import`` inside it as ``(module, names or None)``."""
    names, strings, imports = set(), set(), []
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return names, strings, imports
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            strings.add(node.value)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            level = getattr(node, "level", 0) or 0
            where = node.module if isinstance(node, ast.ImportFrom) else None
            for alias in node.names:
                names.add((alias.asname or alias.name).split(".")[0])
                target = (where or "") if isinstance(node, ast.ImportFrom) else alias.name
                try:
                    module = importlib.import_module(
                        importlib.util.resolve_name("." * level + target, package)
                        if level else target)
                except (ImportError, ValueError, TypeError):
                    continue
                imports.append((module, (alias.name,) if isinstance(node, ast.ImportFrom)
                                else None))
    return names, strings, imports


def code_parts(fn, prefix: str = CHAPTERS) -> dict:
    """``{qualified name: source or repr}`` of everything of the package ``prefix`` (and of
    ``fn``'s own module) that ``fn`` reaches by name, ``fn`` itself included."""
    if not isinstance(prefix, str) or not prefix:
        raise ValueError(f"prefix={prefix!r} must be a dotted package name such as {CHAPTERS!r}.")
    if not callable(fn):
        raise TypeError(f"fn must be a function, not {type(fn).__name__}.")
    home = getattr(inspect.unwrap(fn), "__module__", None) or prefix
    walk = _Walk(prefixes=(prefix, home))
    walk.todo.append(fn)
    while walk.todo:
        walk.visit(walk.todo.pop())
    return walk.parts


class _Walk:
    def __init__(self, prefixes):
        self.prefixes = prefixes
        self.parts: dict = {}
        self.seen: set = set()
        self.todo: list = []

    def ours(self, module) -> bool:
        return isinstance(module, str) and any(module == p or module.startswith(p + ".")
                                               for p in self.prefixes)

    def visit(self, obj) -> None:
        obj = getattr(obj, "py_func", obj)  # a Numba dispatcher: the Python function it compiles
        if callable(obj) and hasattr(obj, "__wrapped__"):  # functools.lru_cache, wraps
            obj = inspect.unwrap(obj)
        if isinstance(obj, functools.partial):
            self.todo.append(obj.func)
            self.todo.extend(obj.args)
            self.todo.extend(obj.keywords.values())
            return
        if id(obj) in self.seen:
            return
        self.seen.add(id(obj))
        if isinstance(obj, (staticmethod, classmethod)):
            self.todo.append(obj.__func__)
            return
        if isinstance(obj, property):
            self.todo.extend(f for f in (obj.fget, obj.fset) if f is not None)
            return
        if not isinstance(obj, (type, types.FunctionType)) or not self.ours(obj.__module__):
            return
        source = _source(obj)
        if source is None:  # generated from code that is hashed where it is written
            return
        self.parts[f"{obj.__module__}.{obj.__qualname__}"] = code_text(source)
        if isinstance(obj, type):
            self.todo.extend(vars(obj).values())
            return
        scope = obj.__globals__
        names, strings, imports = _read(source, scope.get("__package__"))
        self.todo.extend(c.cell_contents for c in (obj.__closure__ or ()) if _filled(c))
        for name in sorted(names):
            if name in scope and not (name.startswith("__") and name.endswith("__")):  # __file__
                self.reach(scope[name], f"{obj.__module__}.{name}", scope, names, name=name)
        for module, imported in imports:
            if not self.ours(module.__name__):
                continue
            for name in sorted(imported or names):
                if name in vars(module):
                    self.reach(vars(module)[name], f"{module.__name__}.{name}", vars(module), names,
                               name=name)
        for text in sorted(strings):
            self.launch_string(text, scope)

    def reach(self, value, key: str, scope: dict, names: set, depth: int = 0,
              name: str | None = None) -> None:
        """Hash a constant a function reads; queue the functions, kernels and classes it reaches
        (also inside tables, and a chapter module's attributes that the function reads).

        A constant counts where it is written: one a module imports (``SIMULATOR`` from
        ``gpuperf.mode``, true in the simulator and false on a GPU) is hashed only if the
        module it comes from is part of the code, under that module's name."""
        if name is not None and _constant(value):
            home = _binding(scope.get("__name__"), name)
            if home is None or not self.ours(home[0]):
                return
            key = f"{home[0]}.{home[1]}"
        if isinstance(value, types.ModuleType):
            if self.ours(value.__name__):
                for attr in sorted(names):
                    if attr in vars(value):
                        self.reach(vars(value)[attr], f"{value.__name__}.{attr}", vars(value), (),
                                   name=attr)
            return
        if _constant(value):
            self.parts[key] = repr(value)
            for text in _strings(value):
                self.launch_string(text, scope)
            return
        if isinstance(value, dict) and depth < 3:
            for k, item in value.items():
                self.reach(item, f"{key}[{k!r}]", scope, names, depth + 1)
            return
        if isinstance(value, (list, tuple, set, frozenset)) and depth < 3:
            for i, item in enumerate(value):
                self.reach(item, f"{key}[{i}]", scope, names, depth + 1)
            return
        self.todo.append(value)

    def launch_string(self, text: str, scope: dict) -> None:
        """A launch named by a string: ``"module:function"`` (run in another process by
        ``nsight``) or the bare name of a function of the same module (a launch table)."""
        match = _LAUNCH.match(text)
        if match and self.ours(match[1]):
            try:
                module = importlib.import_module(match[1])
            except ImportError:
                return
            if match[2] in vars(module):
                self.todo.append(vars(module)[match[2]])
        elif text.isidentifier() and isinstance(scope.get(text), types.FunctionType):
            self.todo.append(scope[text])


_BINDINGS: dict = {}  # module name -> (the module object read, its bindings)


def _bindings(module_name: str) -> dict:
    """``{name: (module, name)}`` for the top level of a module's source: where each name it
    binds comes from (itself, or the module an import takes it from). Read once per module
    object (a module imported again is read again)."""
    module = sys.modules.get(module_name)
    cached = _BINDINGS.get(module_name)
    if cached is not None and cached[0] is module:
        return cached[1]
    _BINDINGS[module_name] = (module, _read_bindings(module_name, module))
    return _BINDINGS[module_name][1]


def _read_bindings(module_name: str, module) -> dict:
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError, SyntaxError):
        return {}
    package = module.__package__ if module is not None else None
    out: dict = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            source = ("." * node.level + (node.module or "")) if node.level else node.module
            try:
                source = importlib.util.resolve_name(source, package) if node.level else source
            except (ValueError, ImportError):
                continue
            for alias in node.names:
                out[alias.asname or alias.name] = (source, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                out[(alias.asname or alias.name).split(".")[0]] = (alias.name, "")
        else:
            for target in _bound(node):
                out[target] = (module_name, target)
    return out


def _bound(node) -> list:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    targets = node.targets if isinstance(node, ast.Assign) else (
        [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else [])
    return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]


def _binding(module_name, name: str):
    """Where ``name`` at the top of ``module_name`` is written: ``(module, name)``; a name the
    source binds in no way ast can see (set by ``globals()``) counts as the module's own."""
    if not isinstance(module_name, str):
        return None
    return _bindings(module_name).get(name, (module_name, name))


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, (tuple, frozenset)):
        for item in value:
            yield from _strings(item)


def _filled(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018 (an empty cell raises)
    except ValueError:
        return False
    return True


def fingerprint(fn, prefix: str = CHAPTERS) -> str:
    """A short hash of ``code_parts(fn, prefix)``: equal exactly when that code is unchanged."""
    parts = code_parts(fn, prefix)
    text = "\0".join(f"{k}\n{v}" for k, v in sorted(parts.items()))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
