"""What imports what inside ``gpuperf``, read from the source with ``ast`` (nothing is imported).

Two users:

* ``tests/test_imports.py`` holds the package to its layers (below): no import cycle, no arrow
  from a lower layer to a higher one, no ``_private`` name taken from another package.
* the GPU self-check (``gpuperf.selfcheck``) asks which files a chapter notebook depends on —
  its two copies and every module its code reaches through the import graph — so that a change
  makes stale only the rows of the chapters that import the changed file.

The layers, lowest first (a module may import its own layer and the ones below):

1. ``core``: the shared machinery (mode, device, bench, store, records, validate, vector,
   emulator, simwarp, plots, widgets, the exercise engine and targets, the Nsight Compute and
   sanitizer runners in ``nsight``, ``fingerprint`` (the code an experiment ran, recorded with
   it) and this module).
2. ``chapters``: ``gpuperf.kernels.<topic>``, one package per chapter. A chapter may use another
   chapter's public names (no cycle between chapters).
3. ``course``: experiments that read several chapters (``profiling``, ``headlines``).
4. ``classroom``: the class tools (``assign``, ``grade``, ``selfcheck``, ``record``, ``colab``,
   and ``nbtools``, the notebook helpers they share).
5. ``facade``: ``gpuperf/__init__.py``, which reaches everything lazily (``gp.reduce``...) and is
   imported by no module of the package.

An import inside a function counts like one at the top of the module.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

PACKAGE = "gpuperf"
SRC = Path(__file__).resolve().parent.parent  # the folder that holds the package

LAYERS = ("core", "chapters", "course", "classroom", "facade")
COURSE = {"gpuperf.profiling", "gpuperf.headlines"}
CLASSROOM = {"gpuperf.assign", "gpuperf.grade", "gpuperf.sandbox", "gpuperf.selfcheck", "gpuperf.record",
             "gpuperf.colab", "gpuperf.nbtools"}


def layer(module: str) -> str:
    """The layer of a module of the package (see the module docstring)."""
    if not isinstance(module, str) or not (module == PACKAGE or module.startswith(PACKAGE + ".")):
        raise ValueError(f"module={module!r} is not a module of {PACKAGE}; pass a dotted name "
                         f"such as '{PACKAGE}.bench'.")
    if module == PACKAGE:
        return "facade"
    if module == f"{PACKAGE}.kernels" or module.startswith(f"{PACKAGE}.kernels."):
        return "chapters"
    base = ".".join(module.split(".")[:2])
    if base in COURSE:
        return "course"
    if base in CLASSROOM:
        return "classroom"
    return "core"


def _package_of(module: str, modules: dict) -> str:
    """The package a module belongs to: itself if it is a package (``__init__.py``), else its
    parent."""
    return module if modules[module].name == "__init__.py" else module.rsplit(".", 1)[0]


@dataclass(frozen=True)
class _Import:
    """One import statement's arrow: ``source`` imports ``target`` (a module of the package),
    taking ``names`` from it (empty for ``import x``), at ``line``."""
    source: str
    target: str
    names: tuple = ()
    line: int = 0


@dataclass(eq=False)  # compared and hashed by identity: built once per state of the files
class _Graph:
    modules: dict = field(default_factory=dict)    # module name -> Path
    imports: list = field(default_factory=list)    # [_Import]
    # ``alias._name`` read through a module imported as ``alias``: _Import(source, module,
    # (name,), line)
    private_uses: list = field(default_factory=list)

    def edges(self) -> dict:
        out: dict = {m: set() for m in self.modules}
        for imp in self.imports:
            if imp.target != imp.source:
                out[imp.source].add(imp.target)
        return out

    def closure(self, roots) -> set:
        """Every module reachable from ``roots`` (themselves included), with the packages
        that hold them (importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__``)."""
        if isinstance(roots, str) or not hasattr(roots, "__iter__"):
            raise TypeError(f"roots must be a set of module names, not {roots!r}; e.g. "
                            f"{{'{PACKAGE}.bench'}}.")
        edges = self.edges()
        seen: set = set()
        todo = [r for r in roots if r in self.modules]
        while todo:
            m = todo.pop()
            if m in seen:
                continue
            seen.add(m)
            todo.extend(edges.get(m, ()))
            parts = m.split(".")
            todo.extend(p for p in (".".join(parts[:i]) for i in range(1, len(parts)))
                        if p in self.modules)
        return seen

    def cycles(self) -> list[list[str]]:
        """The strongly connected components of more than one module (and self-loops)."""
        edges = self.edges()
        index: dict = {}
        low: dict = {}
        stack: list = []
        on: set = set()
        out: list = []
        counter = [0]

        def visit(v):  # iterative Tarjan would be longer; the package is a few hundred modules
            index[v] = low[v] = counter[0]
            counter[0] += 1
            stack.append(v)
            on.add(v)
            for w in sorted(edges.get(v, ())):
                if w not in index:
                    visit(w)
                    low[v] = min(low[v], low[w])
                elif w in on:
                    low[v] = min(low[v], index[w])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))

        for v in sorted(self.modules):
            if v not in index:
                visit(v)
        return out

    def private_crossings(self) -> list[_Import]:
        """Imports of a ``_name`` (not a dunder) from a module of another package."""
        bad = []
        for imp in self.imports:
            src_pkg = _package_of(imp.source, self.modules)
            for n in imp.names:
                if n.startswith("_") and not n.startswith("__"):
                    full = f"{imp.target}.{n}"
                    owner = full if full in self.modules else imp.target
                    if _package_of(owner, self.modules) != src_pkg:
                        bad.append(imp)
                        break
            # ``import gpuperf.kernels.reduce._x`` / ``from gpuperf.x import _y``: the target
            # module itself private and in another package
            if not imp.names and any(p.startswith("_") and not p.startswith("__")
                                     for p in imp.target.split(".")):
                if _package_of(imp.target, self.modules) != src_pkg:
                    bad.append(imp)
        return bad

    def private_attribute_crossings(self) -> list[_Import]:
        """``module._name`` read through a module of another package (``emulator._x``)."""
        return [u for u in self.private_uses
                if _package_of(u.target, self.modules) != _package_of(u.source, self.modules)]

    def upward(self) -> list[_Import]:
        """Imports from a lower layer into a higher one (the facade counts as the highest)."""
        rank = {name: i for i, name in enumerate(LAYERS)}
        return [imp for imp in self.imports
                if imp.target != imp.source
                and rank[layer(imp.target)] > rank[layer(imp.source)]]


def _module_name(path: Path, src: Path) -> str:
    rel = path.relative_to(src).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _resolve(modules: dict, source: str, node: ast.ImportFrom) -> str | None:
    if node.level:
        is_pkg = modules[source].name == "__init__.py"
        parts = source.split(".") if is_pkg else source.split(".")[:-1]
        if node.level > 1:
            parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join(parts)
        return f"{base}.{node.module}" if node.module else base
    return node.module


def _owner(modules: dict, dotted: str) -> str | None:
    """The longest prefix of ``dotted`` that is a module of the package."""
    while dotted:
        if dotted in modules:
            return dotted
        if "." not in dotted:
            return None
        dotted = dotted.rsplit(".", 1)[0]
    return None


def build(src: Path | str | None = None, package: str = PACKAGE) -> _Graph:
    """The import graph of ``package`` under the folder ``src`` (default: this installation).
    Read again whenever a file of the package changed (size or time); treat it as read-only."""
    if src is not None and not isinstance(src, (str, Path)):
        raise TypeError(f"src must be a folder (str or Path) or None, not {type(src).__name__}.")
    if not isinstance(package, str) or not package.isidentifier():
        raise ValueError(f"package={package!r} is not a package name; e.g. '{PACKAGE}'.")
    src = SRC if src is None else Path(src)
    root = src / package
    if not (root / "__init__.py").is_file():
        raise ValueError(f"src={str(src)!r} holds no package {package!r} (no "
                         f"{root / '__init__.py'}); pass the folder above the package.")
    paths = sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)
    stamp = tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in paths)
    return _build(str(src), package, stamp)


@lru_cache(maxsize=8)
def _build(src: str, package: str, stamp: tuple) -> _Graph:
    src = Path(src)
    g = _Graph()
    for path, _, _ in stamp:
        g.modules[_module_name(Path(path), src)] = Path(path)
    for name, path in g.modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        aliases: dict = {}  # a local name -> the module of the package it stands for
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname and alias.name in g.modules:
                        aliases[alias.asname] = alias.name
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(g.modules, name, node)
                for alias in node.names:
                    full = f"{base}.{alias.name}" if base else None
                    if full in g.modules:
                        aliases[alias.asname or alias.name] = full
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in aliases and node.attr.startswith("_")
                    and not node.attr.startswith("__")):
                g.private_uses.append(_Import(name, aliases[node.value.id], (node.attr,),
                                              node.lineno))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == package or alias.name.startswith(package + "."):
                        target = _owner(g.modules, alias.name)
                        if target:
                            g.imports.append(_Import(name, target, (), node.lineno))
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(g.modules, name, node)
                if not base or not (base == package or base.startswith(package + ".")):
                    continue
                plain = []
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    if full in g.modules:        # ``from pkg import submodule``
                        g.imports.append(_Import(name, full, (), node.lineno))
                    else:
                        plain.append(alias.name)
                if plain:
                    target = _owner(g.modules, base)
                    if target:
                        g.imports.append(_Import(name, target, tuple(plain), node.lineno))
    return g


# --------------------------------------------------------------------------- notebooks


_TOOL_ATTR = re.compile(r"\bgp\.([A-Za-z_][A-Za-z0-9_]*)")
_EXPERIMENT_RUN = re.compile(r"""\brun\(\s*['"]([a-z][a-z0-9_]*)['"]""")


@lru_cache(maxsize=4)
def _experiment_homes(src: str) -> dict:
    """``{experiment name: module}``, read from the ``@records.experiment("name", ...)``
    decorators in the source (nothing is imported)."""
    g = build(src)
    homes = {}
    for name, path in g.modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
                fn = node.func
                called = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
                if called == "experiment" and isinstance(node.args[0].value, str):
                    homes[node.args[0].value] = name
    return homes


def _notebook_modules(notebook: Path | str, src: Path | str | None = None) -> set:
    """The modules of the package that a notebook's code cells reach: the facade, each
    ``gp.<name>`` it touches (a tool or a chapter), each module it imports, and the module
    of each experiment it runs by name (``gp.records.run("reduce_ladder")``)."""
    src = SRC if src is None else Path(src)
    g = build(src)
    cells = json.loads(Path(notebook).read_text(encoding="utf-8")).get("cells", [])
    code = "\n".join("".join(c.get("source", "")) for c in cells if c.get("cell_type") == "code")
    roots = {PACKAGE}
    for attr in _TOOL_ATTR.findall(code):
        for candidate in (f"{PACKAGE}.{attr}", f"{PACKAGE}.kernels.{attr}"):
            if candidate in g.modules:
                roots.add(candidate)
    for m in re.findall(r"\b(gpuperf(?:\.[A-Za-z_][A-Za-z0-9_]*)+)", code):
        owner = _owner(g.modules, m)
        if owner:
            roots.add(owner)
    for base, names in re.findall(r"\bfrom\s+(gpuperf[A-Za-z0-9_.]*)\s+import\s+([A-Za-z0-9_, ]+)", code):
        for n in (x.split(" as ")[0].strip() for x in names.split(",")):
            if f"{base}.{n}" in g.modules:
                roots.add(f"{base}.{n}")
    homes = _experiment_homes(str(src))
    for exp in _EXPERIMENT_RUN.findall(code):
        if exp in homes:
            roots.add(homes[exp])
    return roots


def notebook_inputs(notebook: str, root: Path | str, src: Path | str | None = None) -> set:
    """The repository files (paths relative to ``root``) a self-check row of the chapter
    ``notebook`` (e.g. ``"06_reduce"``) depends on: both copies of the notebook and the source
    file of every module its code reaches through the import graph."""
    if not isinstance(notebook, str):
        raise TypeError(f"notebook must be a chapter's name (a string such as '06_reduce'), "
                        f"not {type(notebook).__name__}.")
    if not isinstance(root, (str, Path)):
        raise TypeError(f"root must be the repository's folder (str or Path), not "
                        f"{type(root).__name__}.")
    root = Path(root)
    src = root / "src" if src is None else Path(src)
    g = build(src)
    files = {f"notebooks/{notebook}.ipynb", f"solutions/{notebook}.ipynb"}
    chapter = root / "solutions" / f"{notebook}.ipynb"
    if not chapter.is_file():
        raise ValueError(f"notebook={notebook!r}: there is no {chapter}; pass a chapter's name "
                         "such as '06_reduce'.")
    for m in g.closure(_notebook_modules(chapter, src)):
        files.add(g.modules[m].resolve().relative_to(root.resolve()).as_posix())
    return files
