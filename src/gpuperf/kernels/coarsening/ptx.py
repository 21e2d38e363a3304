"""PTX, SASS and resources: what the compiler made of chapter 5's kernels (registers, shared
and local memory, occupancy, FFMA counts, the inner loop's instruction mix), and
``PTX_TARGETS``, the kernels ``tests/test_ptx.py`` compiles for sm_75 and sm_90."""

from __future__ import annotations

from numba import cuda  # noqa: E402,I001  (after gpuperf: the mode is chosen first)

from gpuperf import bench, device, validate
from gpuperf.kernels import matmul as mm
from gpuperf.kernels.matmul import Variant
from gpuperf.mode import SIMULATOR

from .fast import _add_k_tail, _pad_copy, _strip_direct, _strip_partials, _sum_partials, make_regtile_fast
from .kernels import _cdiv, make_coarsened, make_regtile_1d, make_regtile_scalar, make_vecadd_coarsened, vecadd
from .regtile import make_regtile, make_regtile_double

_SIG = "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])"  # A, B, C (matmul's signature)
_VEC_SIG = "void(float32[::1], float32[::1], float32[::1])"
PTX_TARGETS = [
    (make_coarsened(32, 4), _SIG),
    (make_coarsened(16, 2), _SIG),
    (vecadd, _VEC_SIG),
    (make_vecadd_coarsened(4), _VEC_SIG),
    (make_regtile_scalar(), _SIG),
    (make_regtile_scalar(64, 64, 8, 4, 4), _SIG),
    (make_regtile(), _SIG),
    (make_regtile(prefetch=True), _SIG),
    (make_regtile(64, 64, 8, 4, 4), _SIG),
    (make_regtile_double(), _SIG),
    (make_regtile_1d(), _SIG),
    (make_regtile_double(128, 128, 16, 8, 8), _SIG),
    (make_regtile_double(128, 128, 8, 8, 8, None, 2, (64, 32)), _SIG),
    (make_regtile_fast(), _SIG),
    (make_regtile_double(128, 128, 8, 8, 8, None, 2, None, False), _SIG),
    (_strip_direct, "void(float32[:, ::1], float32[:, ::1], float32[:, ::1], int64, int64, int64, "
                    "int64)"),
    (_pad_copy, "void(float32[:, ::1], float32[:, ::1])"),
    (_add_k_tail, "void(float32[:, ::1], float32[:, ::1], float32[:, ::1], int64, int64, int64)"),
    (_strip_partials, "void(float32[:, ::1], float32[:, ::1], float32[:, :, ::1], int64, int64, "
                      "int64)"),
    (_sum_partials, "void(float32[:, :, ::1], float32[:, ::1], int64, int64)"),
]


def resources(v: Variant) -> dict:
    """Registers/thread, shared and local memory, and occupancy of ``v``'s compiled kernel.

    Read from the compiled kernel (compile it first, e.g. with ``mm.verify(v)``) and the
    driver's occupancy calculator. GPU only.
    """
    mm.check_variant(v)
    bench.require_gpu("resources")
    k = v.kernel
    if not k.overloads:
        raise RuntimeError(f"{v.name} is not compiled yet; run it once (e.g. mm.verify(v)).")
    compiled = next(iter(k.overloads.values()))
    cufunc = compiled._codelibrary.get_cufunc()
    blocks_per_sm = int(cuda.current_context().get_active_blocks_per_multiprocessor(
        cufunc, v.threads, 0))
    info = device.info()
    max_warps = info.max_warps_per_sm or 64
    warps = blocks_per_sm * _cdiv(v.threads, 32)
    return {"threads": v.threads, "regs": int(compiled.regs_per_thread),
            "smem_bytes": int(compiled.shared_mem_per_block),
            "local_bytes": int(compiled.local_mem_per_thread),
            "blocks_per_sm": blocks_per_sm, "occupancy": warps / max_warps}


def waves(v: Variant, M: int, N: int, blocks_per_sm: int) -> float:
    """Blocks in the grid over blocks the GPU holds at once (SMs x blocks per SM)."""
    mm.check_variant(v)
    validate.positive_int(M, "M")
    validate.positive_int(N, "N")
    validate.positive_int(blocks_per_sm, "blocks_per_sm")
    g = v.grid(M, N)
    blocks = g[0] * (g[1] if len(g) > 1 else 1)
    return blocks / (device.sm_count() * max(blocks_per_sm, 1))


def grid_blocks(v: Variant, M: int, N: int) -> int:
    mm.check_variant(v)
    validate.positive_int(M, "M")
    validate.positive_int(N, "N")
    g = v.grid(M, N)
    return int(g[0] * (g[1] if len(g) > 1 else 1))


def _sass_ffma_counts(variants) -> list[int | None]:
    """``sass_count`` of each variant. nvdisasm is a process of its own per kernel (about half
    a second each), so the disassemblies run side by side instead of one after another."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=max(1, len(variants))) as pool:
        return list(pool.map(sass_count, variants))


def sass_count(v: Variant, opcode: str = "FFMA") -> int | None:
    """How many ``opcode`` instructions the compiled SASS of ``v`` holds (None without nvdisasm).

    A loop the compiler unrolled holds one copy of its body per iteration; one it left
    rolled, a single copy: with a 8 x 8 thread tile, 64 FFMAs per copy of the k loop.
    """
    mm.check_variant(v)
    validate.string(opcode, "opcode")
    bench.require_gpu("sass_count")
    import re as _re

    try:
        sass = v.kernel.inspect_sass()
    except Exception:  # noqa: BLE001 - no nvdisasm: say so with None, do not guess
        return None
    text = "\n".join(map(str, sass.values())) if isinstance(sass, dict) else str(sass)
    return len(_re.findall(rf"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?{_re.escape(opcode)}\b",
                           text, _re.M))


def inner_loop_mix(v: Variant) -> tuple[int, int] | None:
    """(instructions, FFMAs) of the loop in ``v``'s SASS that holds the most FFMAs (from its
    label to the branch back to it): the inner loop over a k-tile. None where the SASS cannot
    be read (no ``nvdisasm``, or the simulator). Compile ``v`` first (``mm.verify(v)``)."""
    import re

    mm.check_variant(v)
    if SIMULATOR:
        return None
    if not v.kernel.overloads:
        raise RuntimeError(f"{v.name} is not compiled yet; run it once (e.g. mm.verify(v)).")
    try:
        sass = next(iter(v.kernel.overloads.values())).inspect_sass()
    except Exception:  # nvdisasm missing
        return None
    lines = sass.splitlines()
    labels = {m.group(1): i for i, line in enumerate(lines)
              for m in [re.match(r"\s*(\.L_x_\d+):", line)] if m}
    best = None
    for i, line in enumerate(lines):
        m = re.search(r"\bBRA\b.*?(\.L_x_\d+)", line)
        if m and labels.get(m.group(1), i + 1) < i:  # a branch back: the end of a loop
            ops = [o.group(1) for b in lines[labels[m.group(1)]:i + 1]
                   for o in [re.search(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", b)]
                   if o]
            found = (len(ops), ops.count("FFMA"))
            if best is None or found[1] > best[1]:
                best = found
    return best
