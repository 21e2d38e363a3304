"""The bytes each method allocates and must move (no GPU needed): the case study's
floors, and the answer to the moved-bytes exercise."""

from __future__ import annotations

from gpuperf import validate as v

ALGORITHMS = ("replicate", "per_channel", "shared", "registers")  # the GDN article's four
# Everything the sweep measures, in the order the case study tells it.
METHODS = ALGORITHMS + ("fused", "cublas")


def raw_bytes(n_ch: int, n_samples: int) -> int:
    """Size of the raw contribution matrix, ``N*N*S`` float32."""
    v.positive_int(n_ch, "n_ch")
    v.positive_int(n_samples, "n_samples")
    return 4 * n_ch * n_ch * n_samples


def allocated_bytes(algorithm: str, n_ch: int, n_samples: int) -> int:
    """Device memory an algorithm allocates beyond its inputs (w, delta, D) and dgamma."""
    v.choice(algorithm, "algorithm", METHODS)
    v.positive_int(n_ch, "n_ch")
    v.positive_int(n_samples, "n_samples")
    raw = raw_bytes(n_ch, n_samples)
    return {"replicate": 5 * raw, "per_channel": raw, "shared": raw, "registers": raw,
            "fused": 0, "cublas": 2 * 4 * n_ch * n_samples}[algorithm]


def moved_bytes(method: str, n_ch: int, n_samples: int) -> int:
    """The fewest DRAM bytes each method's design must move (its memory-bound floor).

    Every array a kernel reads is counted once per launch, every array it writes once.
    Algorithms 1-4 count only building ``raw``; ``fused`` and ``cublas`` produce the
    finished ``dgamma`` (and ``fused`` ``dbeta``), so their floors include everything.
    """
    v.choice(method, "method", METHODS + ("reduce",))
    v.positive_int(n_ch, "n_ch")
    v.positive_int(n_samples, "n_samples")
    plane = 4 * n_ch * n_samples           # one (N, S) float32 array
    raw = raw_bytes(n_ch, n_samples)
    small = 4 * n_ch * n_ch
    if method == "replicate":
        # 4 replications write 4 raw-sized matrices (reading a plane each), then the
        # product reads those 4 and writes raw.
        return 4 * raw + 4 * plane + 4 * raw + raw
    if method == "per_channel":
        # each of the N launches reads all of w plus rows k of delta and D, writes N*S.
        return n_ch * (plane + 2 * 4 * n_samples) + raw
    if method in ("shared", "registers"):
        return 3 * plane + raw
    if method == "fused":
        return 3 * plane + small + 4 * n_ch
    if method == "cublas":
        # F and w*w are elementwise passes (read 3 planes, write 1; read 1, write 1),
        # then the product reads both and writes N*N.
        return 4 * plane + 2 * plane + 2 * plane + small
    if method == "reduce":
        return raw + small
    raise ValueError(f"unknown method {method!r}; choose from {METHODS + ('reduce',)}.")


def input_grad_bytes(n_ch: int, n_samples: int) -> int:
    """Bytes the two input-gradient kernels move at least: delta, w and D read twice (once
    for F, once for the result), F written and read, dw written, gamma read; float32."""
    v.positive_int(n_ch, "n_ch")
    v.positive_int(n_samples, "n_samples")
    return 4 * (9 * n_ch * n_samples + n_ch * n_ch)


def memory_table(n_ch: int, n_samples: int) -> list[dict]:
    """Bytes each method allocates and must move at one size (no GPU needed)."""
    v.positive_int(n_ch, "n_ch")
    v.positive_int(n_samples, "n_samples")
    return [{"method": m, "allocated_GB": allocated_bytes(m, n_ch, n_samples) / 1e9,
             "moved_GB": moved_bytes(m, n_ch, n_samples) / 1e9} for m in METHODS]
