"""PTX and resources of the reduce kernels: every kernel the package compiles
(``PTX_TARGETS``, for tests/test_ptx.py), a rung's PTX and the lines that tell its story."""

from __future__ import annotations

import re

from numba import cuda  # gpuperf/__init__ has already chosen the mode

from gpuperf import targets, validate
from gpuperf.mode import SIMULATOR

from .ablation import ABLATION_CONFIGS, make_v8_ablation
from .argmax_kernel import _SIG_ARGMAX, make_argmax
from .host import _SIG3, _SIG4, kernel_for, signature
from .kernels import VERSIONS, _check_block, _zero, reduce_single_thread_global
from .single_pass import (
    _SIG_SINGLE_PASS,
    _read_by_atomic_zero,
    _zero_all,
    make_per_block_atomic,
    make_single_pass,
    make_spread_atomic,
    make_warp_atomic,
)
from .warps import make_v5, make_v7, make_v8

TELLING = {
    "bar.sync": r"\bbar\.sync\b|\bbarrier\.sync\b",
    "shfl.sync": r"\bshfl\.sync\b",
    "ld.global.v4.f32": r"\bld\.global(\.nc)?\.v4\.f32\b",
    "ld.global.f32": r"\bld\.global(\.nc)?\.f32\b",
    "rem": r"\brem\.[su](32|64)\b",
    "atom.add": r"\b(red|atom)\.global\.add\.f32\b",
    "bar.warp.sync": r"\bbar\.warp\.sync\b",
}


def _check_names(names):
    names = validate.sequence(names, "names")
    for i, nm in enumerate(names):
        validate.choice(nm, f"names[{i}]", TELLING)
    return tuple(names)


PTX_TARGETS = [(_zero, "void(float32[::1])"),
               (reduce_single_thread_global, "void(float32[::1], float32[::1], int64)"),
               (_read_by_atomic_zero, "void(float32[::1], float32[::1])")] + [
    (kernel_for(v, 256), signature(v)) for v in VERSIONS
] + [(make_v5(b), _SIG3) for b in (64, 128, 512, 1024)] + [
    (make_v7(b), _SIG4) for b in (32, 1024)] + [
    (make_v8(b, u), _SIG4) for b in (32, 256, 512, 1024) for u in (1, 2, 4)] + [
    (make_v8_ablation(512, *c), _SIG4) for c in ABLATION_CONFIGS] + [
    (make_single_pass(b, w), _SIG_SINGLE_PASS) for b in (32, 256, 1024) for w in (1, 4)] + [
    (make_warp_atomic(b), "void(float32[::1], float32[::1], int64, int64)")
    for b in (32, 256, 1024)] + [
    (make_per_block_atomic(b), "void(float32[::1], float32[::1], int64, int64)")
    for b in (32, 256, 1024)] + [
    (make_spread_atomic(b), "void(float32[::1], float32[::1], int64, int64)")
    for b in (32, 256, 1024)] + [(_zero_all, "void(float32[::1])")] + [
    (make_argmax(b, w), _SIG_ARGMAX) for b in (32, 256, 1024) for w in (1, 4)]


def ptx(version: str, block: int | None = None, cc=(9, 0)) -> str:
    """The PTX of ``version``'s kernel (needs the real CUDA target, not the simulator).

    Under the simulator, compile in a fresh process with ``GPUPERF_MODE=compile``;
    ``ptx_lines`` does that for you.
    """
    validate.choice(version, "version", VERSIONS)
    _check_block(version, block)
    cc = validate.compute_capability(cc)
    if SIMULATOR:
        raise RuntimeError("PTX needs Numba's real CUDA target; this process runs the simulator. "
                           "Use gp.reduce.ptx_lines(...), which compiles in a separate process.")
    kernel = kernel_for(version, _check_block(version, block))
    text, _ = cuda.compile_ptx(kernel.py_func, signature(version), cc=cc)
    return text


def ptx_counts(text: str) -> dict:
    """How often each telling instruction appears in a PTX listing."""
    validate.string(text, "text", empty=True)
    return {name: len(re.findall(pattern, text)) for name, pattern in TELLING.items()}


def telling_lines(text: str, names=("bar.sync", "shfl.sync", "ld.global.v4.f32", "rem",
                                    "bar.warp.sync", "atom.add"), limit: int = 8) -> list[str]:
    """The PTX lines that tell a rung's story (barriers, shuffles, vector loads, remainders)."""
    validate.string(text, "text", empty=True)
    names = _check_names(names)
    limit = validate.positive_int(limit, "limit")
    pattern = "|".join(TELLING[n] for n in names)
    lines = [ln.strip() for ln in text.splitlines() if re.search(pattern, ln)]
    return lines[:limit]


def ptx_lines(version: str, names=None, block: int | None = None, cc=(9, 0)) -> list[str]:
    """The telling PTX lines of ``version`` for ``cc`` (via a subprocess under the simulator)."""
    validate.choice(version, "version", VERSIONS)
    if names is not None:
        names = _check_names(names)
    _check_block(version, block)
    cc = validate.compute_capability(cc)
    names = tuple(names) if names else tuple(k for k in TELLING if k != "ld.global.f32")
    if not SIMULATOR:
        return telling_lines(ptx(version, block, cc), names, limit=40)
    return targets.in_compiling_process(
        "gpuperf.kernels.reduce", f"m.telling_lines(m.ptx({version!r}, {block}, {tuple(cc)}), "
        f"{names!r}, limit=40)", what=f"{version} to PTX")


def _compiled_ptx(compiled) -> str:
    """The PTX of a kernel compiled for this GPU (``kernel.compile(sig)``), read from that
    compilation: compiling every rung again with ``cuda.compile_ptx`` took seconds."""
    return compiled.inspect_asm(cuda.get_current_device().compute_capability)


def _registers(kernel, sig) -> int | None:
    """Registers per thread of ``kernel`` compiled for ``sig`` (None under the simulator)."""
    return None if SIMULATOR else int(kernel.compile(sig).regs_per_thread)


@targets.compiles_ptx("the one-thread kernels")
def single_thread_ptx(cc=(9, 0)) -> dict:
    """Global loads, global stores and float adds in the PTX of the two one-thread kernels:
    ``"ours"`` (``reduce_single_thread``, the sum in a register) and ``"post's"``
    (``reduce_single_thread_global``, ``out[0] += x[i]``). Under the simulator it compiles in a
    separate process with ``GPUPERF_MODE=compile``."""
    from .kernels import reduce_single_thread

    texts = targets.compile_each({"ours": reduce_single_thread,
                                  "post's": reduce_single_thread_global},
                                 "void(float32[::1], float32[::1], int64)", cc)
    counts = {}
    for label, text in texts.items():
        counts[label] = {"loads": len(re.findall(r"\bld\.global\.f32\b", text)),
                         "stores": len(re.findall(r"\bst\.global\.f32\b", text)),
                         "adds": len(re.findall(r"\badd(\.rn)?\.f32\b", text))}
    return counts
