"""The public API of gpuperf, enumerated (for tests/test_contract.py).

Every module of the package and every chapter (its package, and each submodule for what the
package does not re-export), their public functions (by
``__all__`` where a module has one), and the public methods and constructors of their
public classes, that take at least one argument. Device-side helpers that run inside
kernels (``gpuperf.simwarp``'s warp intrinsics, ``gpuperf.vector``'s 16-byte loads) are
not host API and are listed in ``DEVICE_SIDE``.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil

import gpuperf

# Called inside kernels (by Numba or the simulator), never with host arguments; simblock is the
# simulator's block runner, called by the simulator.
DEVICE_SIDE = ("gpuperf.simwarp", "gpuperf.simblock", "gpuperf.vector")


def modules() -> list:
    from gpuperf import kernels

    names = ["gpuperf"]
    names += [f"gpuperf.{m.name}" for m in pkgutil.iter_modules(gpuperf.__path__)
              if not m.name.startswith("_") and m.name != "kernels"]
    # A chapter may be a package: its submodules hold its functions (the package re-exports them).
    names += [m.name for m in pkgutil.walk_packages(kernels.__path__, f"{kernels.__name__}.")
              if not any(part.startswith("_") for part in m.name.split(".")[2:])]
    return [importlib.import_module(n) for n in names if n not in DEVICE_SIDE]


def chapter_of(module_name: str) -> str:
    """The module whose API ``module_name``'s functions belong to: a chapter package
    (``gpuperf.kernels.dram``) for its submodules (``gpuperf.kernels.dram.models``), which it
    re-exports; the module itself otherwise."""
    parts = module_name.split(".")
    if len(parts) > 3 and parts[:2] == ["gpuperf", "kernels"]:
        return ".".join(parts[:3])
    return module_name


def _key_module(obj, name: str) -> str | None:
    """The module a public object is listed under: its chapter package where the package
    re-exports it (``gpuperf.kernels.dram:make_copy``), else the module that defines it (a
    chapter's submodule for a name only the submodule has)."""
    home = getattr(obj, "__module__", None)
    if not isinstance(home, str):
        return None
    chapter = chapter_of(home)
    if chapter != home and getattr(importlib.import_module(chapter), name, None) is obj:
        return chapter
    return home


def _takes_arguments(fn, bound: bool) -> bool:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    if bound and params:
        params = params[1:]
    return bool(params)


def _plain(obj):
    if isinstance(obj, functools._lru_cache_wrapper):
        return obj.__wrapped__
    return obj


def public_api() -> dict[str, object]:
    """``{"module:qualname": callable}`` for every public function, method and constructor."""
    api = {}
    for mod in modules():
        names = list(getattr(mod, "__all__", None) or [])
        names += [n for n in vars(mod) if not n.startswith("_") and n not in names]
        for name in names:
            obj = getattr(mod, name, None)
            if _key_module(obj, name) != mod.__name__:
                continue
            fn = _plain(obj)
            if inspect.isfunction(fn):
                if _takes_arguments(fn, bound=False):
                    api[f"{mod.__name__}:{name}"] = obj
            elif inspect.isclass(obj) and not issubclass(obj, BaseException) \
                    and not issubclass(obj, Warning):
                for attr, member in vars(obj).items():
                    if attr.startswith("_") and attr not in ("__init__", "__call__"):
                        continue
                    if isinstance(member, (classmethod, staticmethod)):
                        func, bound = member.__func__, isinstance(member, classmethod)
                    elif inspect.isfunction(member):
                        func, bound = member, True
                    else:
                        continue  # properties and constants
                    if _takes_arguments(func, bound):
                        api[f"{mod.__name__}:{name}.{attr}"] = getattr(obj, attr)
    return api
