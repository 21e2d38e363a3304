"""Chapter 5's kernels as ``matmul.Variant``s (their launch shapes), ``variant`` by version
name, and ``matmul``: what the experiments, the checkers and chapter 9 run."""

from __future__ import annotations

from gpuperf import validate
from gpuperf.kernels import matmul as mm
from gpuperf.kernels.matmul import Variant

from .any_size import fast_matmul
from .fast import make_regtile_fast
from .kernels import _cdiv, _check_regtile, coarsened_variant, make_regtile_scalar
from .regtile import _check_k_steps, _check_warp_tile, make_regtile, make_regtile_double


def regtile_variant(bm=128, bn=128, bk=8, tm=8, tn=8, *, vectorized: bool = True,
                    prefetch: bool = False, double: bool = False,
                    max_registers: int | None = None, k_steps: int = 1,
                    warp_tile: tuple[int, int] | None = None) -> Variant:
    validate.boolean(vectorized, "vectorized")
    validate.boolean(prefetch, "prefetch")
    validate.boolean(double, "double")
    if double and not (vectorized and prefetch):
        raise ValueError("double=True (two shared buffers) builds on the pipelined kernel; "
                         "pass vectorized=True and prefetch=True with it.")
    if not double and (k_steps != 1 or warp_tile is not None):
        raise ValueError(f"k_steps={k_steps!r} and warp_tile={warp_tile!r} are options of the "
                         "double-buffered kernel; pass double=True (with prefetch=True), or "
                         "leave them at 1 and None.")
    if prefetch and not vectorized:
        raise ValueError("prefetch=True needs vectorized=True (the pipelined kernel is the "
                         "vectorized one); pass vectorized=True or prefetch=False.")
    _check_regtile(bm, bn, bk, tm, tn, vector=vectorized)
    if max_registers is not None:
        validate.positive_int(max_registers, "max_registers", minimum=16, maximum=255)
    if double:
        _check_k_steps(k_steps, bk)
        if warp_tile is not None:
            _check_warp_tile(warp_tile, bm, bn, tm, tn)
        k = make_regtile_double(bm, bn, bk, tm, tn, max_registers, k_steps, warp_tile)
        kind = "double-buffered"
    elif vectorized:
        k = make_regtile(bm, bn, bk, tm, tn, prefetch, max_registers)
        kind = "pipelined" if prefetch else "vectorized"
    else:
        if prefetch:
            raise ValueError("prefetch=True needs vectorized=True (it reuses the vector loads).")
        k = make_regtile_scalar(bm, bn, bk, tm, tn, max_registers)
        kind = "scalar"
    cap = f" cap{max_registers}" if max_registers else ""
    if k_steps > 1:
        cap = f" unroll{k_steps}" + cap
    if warp_tile is not None:
        cap = f" warp{warp_tile[0]}x{warp_tile[1]}" + cap
    threads = (bm // tm) * (bn // tn)
    return Variant(f"regtile {kind} {bm}x{bn}x{bk} {tm}x{tn}{cap}", k, (threads,),
                   lambda M, N: (_cdiv(N, bn), _cdiv(M, bm)), "block", (bm, bn))


VERSIONS = ("coarsened", "regtile_scalar", "regtile", "regtile_pipelined", "regtile_double")


def variant(version: str = "regtile_pipelined", **params) -> Variant:
    """A ``Variant`` of this chapter's kernels: ``coarsened`` (tile, factor) or a register tile."""
    validate.choice(version, "version", VERSIONS)
    _allowed = {"coarsened": ("tile", "factor", "max_registers"),
                "regtile_double": ("bm", "bn", "bk", "tm", "tn", "max_registers", "k_steps",
                                   "warp_tile")}.get(
        version, ("bm", "bn", "bk", "tm", "tn", "max_registers"))
    for _k in params:
        validate.choice(_k, f"{version} parameter", _allowed)
    validate.choice(version, "version", VERSIONS)
    if version == "coarsened":
        return coarsened_variant(**params)
    if version == "regtile_scalar":
        return regtile_variant(vectorized=False, **params)
    if version == "regtile_double":
        return regtile_variant(prefetch=True, double=True, **params)
    return regtile_variant(prefetch=version == "regtile_pipelined", **params)


def matmul(A, B, out=None, *, version: str = "regtile_pipelined", **params):
    """``A @ B`` in float32 with one of this chapter's kernels (``VERSIONS``)."""
    v = variant(version, **params)
    if version != "regtile_scalar" and params.get("vectorized", True):
        # The 16-byte loads need each row to start on a 16-byte boundary: the kernels test the
        # shape (K and N multiples of 4, the row strides), not where a device array starts.
        for x, name in ((A, "A"), (B, "B"), (out, "out")):
            if x is not None:
                validate.aligned16(x, name, f"pass {name} in a fresh allocation "
                                   "(cuda.to_device of a NumPy array), not an offset view.")
    return mm.run_variant(v, A, B, out)


def fast_variant(bm: int = 128, bn: int = 128, bk: int = 8, tm: int = 8, tn: int = 8,
                 k_steps: int = 2) -> Variant:
    """``fast_matmul`` as a ``Variant``: its kernel is the fast kernel (for its registers and
    SASS), its launch the whole any-size call."""
    f = fast_matmul(bm, bn, bk, tm, tn, k_steps)
    steps = f" unroll{k_steps}" if k_steps > 1 else ""
    # The grid is the fast kernel's, over the interior only (the strips are other launches;
    # N padded to a multiple of 4 where it is not one). Where there is no interior the call
    # runs chapter 5's kernel instead, over all of C.
    def grid(M, N):
        if M < bm or N < bn:
            return (_cdiv(N, bn), _cdiv(M, bm))
        return (_cdiv(N, 4) * 4 // bn, M // bm)

    return Variant(f"regtile fast {bm}x{bn}x{bk} {tm}x{tn}{steps}", f.fast, (f.threads,),
                   grid, "block", (bm, bn), launcher=f)


def fast_kernel_variant(bm: int = 128, bn: int = 128, bk: int = 8, tm: int = 8, tn: int = 8,
                        k_steps: int = 2, index: str = "uint32") -> Variant:
    """``make_regtile_fast`` alone, one launch, for shapes whose every block is interior (the
    ablation's rows; ``fast_variant`` is the kernel made whole for any shape)."""
    k = make_regtile_fast(bm, bn, bk, tm, tn, k_steps, None, index)
    steps = f" unroll{k_steps}" if k_steps > 1 else ""
    return _whole_tiles_variant(f"regtile fast path only {bm}x{bn}x{bk} {tm}x{tn}{steps} {index}",
                                k, bm, bn, bk, tm, tn, "the fast path alone")


def no_edge_variant(bm: int = 128, bn: int = 128, bk: int = 8, tm: int = 8, tn: int = 8,
                    k_steps: int = 2) -> Variant:
    """Chapter 5's double-buffered kernel with its edge path compiled out and nothing else
    changed (``make_regtile_double(..., edge=False)``): the ablation that separates the edge
    path from the other differences between chapter 5's kernel and the fast path alone."""
    k = make_regtile_double(bm, bn, bk, tm, tn, None, k_steps, None, False)
    steps = f" unroll{k_steps}" if k_steps > 1 else ""
    return _whole_tiles_variant(f"regtile double-buffered {bm}x{bn}x{bk} {tm}x{tn}{steps} no edge",
                                k, bm, bn, bk, tm, tn, "chapter 5's kernel without its edge path")


def _whole_tiles_variant(name, k, bm, bn, bk, tm, tn, what) -> Variant:
    """A ``Variant`` of a kernel right only for whole tiles: its launch refuses other shapes."""
    threads = (bm // tm) * (bn // tn)

    def launch(A, B, C):
        (M, K), N = A.shape, B.shape[1]
        if M % bm or N % bn or K % bk:
            raise ValueError(f"{what} computes only whole tiles: M={M}, N={N} and K={K} must be "
                             f"multiples of {bm}, {bn} and {bk}. For any shape use fast_variant() "
                             "(the fast path made whole).")
        k[(N // bn, M // bm), threads](A, B, C)

    return Variant(name, k, (threads,), lambda M, N: (N // bn, M // bm), "block", (bm, bn),
                   launcher=launch)
