"""gpuperf: CUDA performance engineering in Python with Numba.

``import gpuperf as gp`` picks the mode first, before ``numba.cuda`` is imported:

* ``"gpu"``: a CUDA GPU is present; kernels run on it and experiments measure live.
* ``"simulator"``: no GPU; Numba's CUDA simulator runs kernels (slowly, at small
  sizes, for correctness) and experiments replay results recorded on a reference GPU.

Set ``GPUPERF_MODE=gpu`` or ``GPUPERF_MODE=simulator`` to force one.

Chapter modules are reachable as attributes: ``gp.gridstride``, ``gp.reduce``, ...
(each is ``gpuperf.kernels.<name>``), and the tools as ``gp.bench``, ``gp.records``,
``gp.plots``, ``gp.widgets``, ``gp.exercises``, ``gp.device``, ``gp.emulator`` (the
thread emulator that traces kernels and dry-runs exercises, with or without a GPU).
"""

from __future__ import annotations

import importlib

from .mode import MODE, SIMULATOR  # noqa: F401 (decided before numba.cuda loads)

__version__ = "0.1.0"


def _import_chapters(broken: dict) -> None:
    """Import every chapter package (and the course-wide profiling experiments) so that their
    experiments register with ``gpuperf.records``; each that fails is said in ``broken``."""
    import pkgutil

    from . import kernels

    names = ["gpuperf.profiling"]
    names += [f"{kernels.__name__}.{m.name}" for m in pkgutil.iter_modules(kernels.__path__)
              if not m.name.startswith("_")]
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as err:  # noqa: BLE001 - one broken chapter must not hide the others
            broken[name.rsplit(".", 1)[-1] if name.startswith(kernels.__name__) else name] = (
                f"{type(err).__name__}: {err}")


def _register_discovery() -> None:
    from . import records

    records.add_discovery(_import_chapters)


_register_discovery()

_TOOLS = {"bench", "records", "plots", "widgets", "exercises", "device", "validate", "assign",
          "emulator", "headlines", "profiling", "nsight", "selfcheck", "store", "mode", "book"}


def show_device() -> None:
    """Print the GPU this session runs on (or the simulator) and its key limits."""
    from . import device

    device.show()


def show_source(obj) -> None:
    """Show the Python source of a kernel or function from the package (one source of truth)."""
    import inspect
    import textwrap

    fn = getattr(obj, "py_func", obj)
    fn = inspect.unwrap(fn) if callable(fn) else fn
    if not (inspect.isfunction(fn) or inspect.ismethod(fn) or inspect.isclass(fn)
            or inspect.ismodule(fn)):
        raise TypeError(f"obj must be a function, kernel, class or module of gpuperf, not "
                        f"{type(obj).__name__} ({obj!r:.60}); pass the object itself, e.g. "
                        "gp.show_source(gp.reduce.reduce_sum).")
    try:
        src = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        raise ValueError(f"obj={obj!r:.60} has no Python source to show (defined interactively "
                         "or built in).") from None
    # Where it lives, so that a reader can open the file (the package's own short kernels.py).
    path = inspect.getsourcefile(fn) or ""
    parts = path.replace("\\", "/").split("/")
    if "gpuperf" in parts:
        where = "/".join(parts[len(parts) - 1 - parts[::-1].index("gpuperf"):])
        name = getattr(fn, "__qualname__", getattr(fn, "__name__", ""))
        if ".<locals>." in name:  # a kernel a factory builds: say which factory
            outer, inner = name.split(".<locals>.", 1)
            name = f"{inner}, built by {outer}"
        src = f"# {where}: {name}\n{src}"
    try:
        from IPython.display import Code, display

        display(Code(src, language="python"))
    except ImportError:
        print(src)


def __getattr__(name: str):
    if name in _TOOLS:
        return importlib.import_module(f".{name}", __name__)
    if not name.startswith("_"):
        try:
            return importlib.import_module(f".kernels.{name}", __name__)
        except ModuleNotFoundError as err:
            if err.name != f"{__name__}.kernels.{name}":
                raise
    raise AttributeError(f"module 'gpuperf' has no attribute {name!r}")
