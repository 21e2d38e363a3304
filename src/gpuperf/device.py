"""Facts about the GPU in use: the numbers every chapter's arithmetic needs.

``info()`` reads them from the CUDA driver once and caches them. Under the
simulator it returns a ``DeviceInfo`` with ``simulated=True``: the CUDA limits a
kernel must respect (warp size, 1024 threads per block, 48 KiB of static shared
memory), and ``None`` for what only hardware has (clocks, SMs, L2).
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass

from ._mode import static_book
from .mode import SIMULATOR

SIMULATOR_NAME = "Numba CUDA simulator (no GPU)"


@dataclass(frozen=True)
class DeviceInfo:
    name: str
    compute_capability: tuple[int, int] | None
    sm_count: int | None
    l2_bytes: int | None
    shared_per_block: int  # bytes a block may use without opting in
    shared_per_block_optin: int | None  # bytes a block may use after opting in
    shared_per_sm: int | None
    registers_per_sm: int | None
    registers_per_block: int | None
    warp_size: int
    max_threads_per_block: int
    max_threads_per_sm: int | None
    memory_clock_khz: int | None
    bus_width_bits: int | None
    simulated: bool

    def __post_init__(self):
        from . import validate as v

        v.string(self.name, "name")
        for f in ("sm_count", "l2_bytes", "shared_per_block_optin", "shared_per_sm",
                  "registers_per_sm", "registers_per_block", "max_threads_per_sm",
                  "memory_clock_khz", "bus_width_bits"):
            if getattr(self, f) is not None:
                v.integer(getattr(self, f), f, minimum=0)
        for f in ("shared_per_block", "warp_size", "max_threads_per_block"):
            v.integer(getattr(self, f), f, minimum=1)
        v.boolean(self.simulated, "simulated")

    @property
    def peak_gbps(self) -> float | None:
        """Theoretical DRAM bandwidth: memory clock x bus width (bits) x 2 (double data rate)
        / 8 bits per byte, GB/s."""
        if not (self.memory_clock_khz and self.bus_width_bits):
            return None
        return self.memory_clock_khz * 1e3 * 2 * self.bus_width_bits / 8 / 1e9

    @property
    def max_warps_per_sm(self) -> int | None:
        return None if self.max_threads_per_sm is None else self.max_threads_per_sm // self.warp_size

    def as_dict(self) -> dict:
        d = asdict(self)
        d["peak_gbps"] = self.peak_gbps
        return d


@functools.lru_cache(maxsize=1, typed=True)
def info() -> DeviceInfo:
    """The current device's facts (cached for the process)."""
    from .mode import MODE

    if SIMULATOR or MODE == "compile":
        return DeviceInfo(
            name=SIMULATOR_NAME if SIMULATOR else "no GPU (kernels compile but cannot run)",
            compute_capability=None, sm_count=None, l2_bytes=None,
            shared_per_block=48 * 1024, shared_per_block_optin=None, shared_per_sm=None,
            registers_per_sm=None, registers_per_block=None, warp_size=32,
            max_threads_per_block=1024, max_threads_per_sm=None, memory_clock_khz=None,
            bus_width_bits=None, simulated=True,
        )
    from numba import cuda

    dev = cuda.get_current_device()

    def attr(name):
        try:
            return int(getattr(dev, name))
        except Exception:  # an attribute this driver does not report
            return None

    name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
    return DeviceInfo(
        name=name,
        compute_capability=tuple(dev.compute_capability),
        sm_count=attr("MULTIPROCESSOR_COUNT"),
        l2_bytes=attr("L2_CACHE_SIZE"),
        shared_per_block=attr("MAX_SHARED_MEMORY_PER_BLOCK") or 48 * 1024,
        shared_per_block_optin=attr("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"),
        shared_per_sm=attr("MAX_SHARED_MEMORY_PER_MULTIPROCESSOR"),
        registers_per_sm=attr("MAX_REGISTERS_PER_MULTIPROCESSOR"),
        registers_per_block=attr("MAX_REGISTERS_PER_BLOCK"),
        warp_size=attr("WARP_SIZE") or 32,
        max_threads_per_block=attr("MAX_THREADS_PER_BLOCK") or 1024,
        max_threads_per_sm=attr("MAX_THREADS_PER_MULTIPROCESSOR"),
        memory_clock_khz=attr("MEMORY_CLOCK_RATE"),
        bus_width_bits=attr("GLOBAL_MEMORY_BUS_WIDTH"),
        simulated=False,
    )


# FP32 results per clock per SM (a fused multiply-add counts as one), by compute capability:
# the arithmetic-instruction throughput table of NVIDIA's CUDA C++ Programming Guide.
FP32_LANES_PER_SM = {(5, 0): 128, (5, 2): 128, (5, 3): 128, (6, 0): 64, (6, 1): 128,
                     (6, 2): 128, (7, 0): 64, (7, 2): 64, (7, 5): 64, (8, 0): 64, (8, 6): 128,
                     (8, 7): 128, (8, 9): 128, (9, 0): 128}


def sm_clock_khz() -> int | None:
    """The SMs' maximum clock as the driver reports it (kHz); None without a GPU or where the
    driver does not report it. A GPU under load may run below it (power and heat)."""
    if info().simulated:
        return None
    from numba import cuda

    try:
        return int(cuda.get_current_device().CLOCK_RATE) or None
    except Exception:  # an attribute this driver does not report
        return None


def fp32_peak_tflops(d: DeviceInfo | None = None, clock_khz: int | None = None) -> float | None:
    """Theoretical FP32 peak: SMs x FP32 lanes per SM x 2 (a multiply-add is two operations)
    x the SM clock (by default this GPU's maximum, :func:`sm_clock_khz`), TFLOP/s. None where a
    fact is missing (the simulator, a compute capability not in ``FP32_LANES_PER_SM``)."""
    if d is not None and not isinstance(d, DeviceInfo):
        raise TypeError(f"d must be a DeviceInfo (gp.device.info()) or None, not "
                        f"{type(d).__name__}.")
    if clock_khz is not None:
        from . import validate as v

        v.positive_int(clock_khz, "clock_khz")
    d = d or info()
    lanes = FP32_LANES_PER_SM.get(tuple(d.compute_capability or ()))
    clock = clock_khz if clock_khz is not None else (sm_clock_khz() if d is info() else None)
    if not (lanes and d.sm_count and clock):
        return None
    return d.sm_count * lanes * 2 * clock * 1e3 / 1e12


def sm_count(default: int = 1) -> int:
    """SMs on this GPU; ``default`` under the simulator (keep simulated grids small)."""
    from . import validate as v

    v.integer(default, "default", minimum=1)
    return info().sm_count or default


def describe(d: DeviceInfo | None = None) -> str:
    if d is not None and not isinstance(d, DeviceInfo):
        raise TypeError(f"d must be a DeviceInfo (gp.device.info()) or None, not "
                        f"{type(d).__name__}.")
    d = d or info()
    if d.simulated and not SIMULATOR and d.name != SIMULATOR_NAME:
        return (f"{d.name}: this session has no GPU (GPUPERF_MODE=compile, or numba.cuda was "
                "imported before gpuperf). Kernels compile to PTX but cannot run; timings and "
                "figures are replayed from the recorded reference GPU.")
    if d.simulated and static_book():  # the reader of the built book, not a student
        return (f"The measurements on this page were made on the course's reference GPU "
                f"({_reference_gpu()}); each table and figure gives its date (see Recorded "
                "devices). Run this notebook on a GPU to measure yours.")
    if d.simulated:
        return (
            f"{d.name}: kernels run on the CPU for correctness (warp size {d.warp_size}, "
            f"at most {d.max_threads_per_block} threads and {d.shared_per_block // 1024} KiB "
            "of shared memory per block are enforced as on a GPU). Timings and figures are "
            "replayed from the recorded reference GPU."
        )
    cc = ".".join(map(str, d.compute_capability))
    lines = [
        f"{d.name} (compute capability {cc}, sm_{cc.replace('.', '')})",
        f"  {d.sm_count} SMs, {d.max_threads_per_sm} threads/SM max, warp size {d.warp_size}",
        f"  L2 {d.l2_bytes / 2**20:.0f} MiB; shared memory {d.shared_per_block // 1024} KiB per "
        f"block ({(d.shared_per_block_optin or 0) // 1024} KiB opt-in), "
        f"{(d.shared_per_sm or 0) // 1024} KiB per SM",
        f"  {d.registers_per_sm} registers/SM",
    ]
    if d.peak_gbps:
        lines.append(
            f"  memory: {d.memory_clock_khz / 1e3:.0f} MHz x {d.bus_width_bits}-bit bus x 2 "
            f"/ 8 bits per byte = {d.peak_gbps:.0f} GB/s theoretical peak"
        )
    return "\n".join(lines)


def _reference_gpu() -> str:
    """The name of the GPU whose record the book replays."""
    from . import store

    try:
        return str(store.load().get("gpu") or "unnamed GPU")
    except (OSError, ValueError):
        return "unrecorded GPU"


def show() -> None:
    print(describe())


# --------------------------------------------------------------------------- facts for the prose

# How each hardware fact reads in a sentence (the prose of the chapters prints these instead of
# typing one GPU's numbers).
_FACT_PHRASES = {
    "sm_count": lambda v: f"{v} SMs",
    "max_threads_per_sm": lambda v: f"at most {v} resident threads per SM",
    "max_threads_per_block": lambda v: f"at most {v} threads per block",
    "l2_bytes": lambda v: f"{v / 2**20:.0f} MiB of L2 cache",
    "registers_per_sm": lambda v: f"{v:,} registers per SM",
    "shared_per_sm": lambda v: f"{v // 1024} KiB of shared memory per SM",
    "shared_per_block": lambda v: f"{v // 1024} KiB of shared memory per block without opting in",
    "shared_per_block_optin": lambda v: f"{v // 1024} KiB per block with the opt-in",
    "bus_width_bits": lambda v: f"a {v}-bit memory bus",
    "peak_gbps": lambda v: f"a theoretical DRAM peak of {v:,.0f} GB/s",
}


def facts(res=None) -> tuple[dict, str]:
    """The device facts behind a result, and a phrase naming the GPU they belong to.

    ``res`` measured live: this GPU's facts. ``res`` replayed from a record: the recorded GPU's
    facts (from the record's provenance). No ``res``: this GPU, or, with no GPU (simulator),
    the reference GPU whose record is replayed. Returns ``(facts, where)``, e.g.
    ``({"sm_count": 132, ...}, "the reference GPU (NVIDIA H200, from its record)")``.
    """
    _check_res(res)
    here = info()
    if res is not None and getattr(res, "source", None) != "live":
        meta = getattr(res, "meta", None) or {}
        return dict(meta.get("device") or {}), _recorded_phrase(meta.get("gpu"))
    if res is None and here.simulated:
        from . import store

        data = store.load()
        exps = data.get("experiments") or {}
        entry = next(iter(exps.values()), {}) if exps else {}
        prov = entry.get("provenance") or data.get("provenance") or {}
        return dict(prov.get("device") or {}), _recorded_phrase(prov.get("gpu"))
    return here.as_dict(), f"this GPU ({here.name})"


def _check_res(res):
    """``res`` is None or a Result (``gp.records.run(name)``)."""
    if res is not None:
        from . import validate

        validate.result(res, "res")
    return res


def _check_names(names, known):
    from . import validate

    for i, n in enumerate(names):
        validate.string(n, f"names[{i}]")
        validate.choice(n, f"names[{i}]", known)


def _recorded_phrase(gpu) -> str:
    from . import store

    try:
        ref = store.load(store.DATA_DIR / f"{store.REFERENCE}.json")
        exps = ref.get("experiments") or {}
        entry = next(iter(exps.values()), {}) if exps else {}
        ref_gpu = (entry.get("provenance") or ref.get("provenance") or {}).get("gpu")
    except Exception:  # no reference record shipped: name the GPU only
        ref_gpu = None
    if gpu and gpu == ref_gpu:
        return f"the reference GPU ({gpu}, from its record)"
    return f"the recorded GPU ({gpu or 'unknown'}, from its record)"


def fact(name: str, res=None):
    """One device fact (``sm_count``, ``max_threads_per_sm``, ``l2_bytes``, ``peak_gbps``...) of
    the GPU behind ``res`` (see ``facts``); None where it is unknown."""
    from . import validate

    validate.string(name, "name")
    _check_res(res)
    if name not in _FACT_PHRASES and name not in DeviceInfo.__dataclass_fields__:
        known = sorted(set(_FACT_PHRASES) | set(DeviceInfo.__dataclass_fields__))
        raise ValueError(f"name={name!r}: there is no device fact called {name!r}; pass one of: "
                         f"{', '.join(known)}.{validate._did_you_mean(name, known)}")
    return facts(res)[0].get(name)


def describe_facts(*names: str, res=None) -> str:
    """A sentence with the named facts of the GPU behind ``res``, saying which GPU that is."""
    _check_res(res)
    if not names:
        names = ("sm_count", "max_threads_per_sm", "l2_bytes", "peak_gbps")
    _check_names(names, list(_FACT_PHRASES))
    values, where = facts(res)
    parts = [_FACT_PHRASES[n](values[n]) for n in names if values.get(n) is not None]
    if not parts:
        return f"{where[0].upper()}{where[1:]}: these facts are not known."
    return f"{where[0].upper()}{where[1:]}: {', '.join(parts)}."


def show_facts(*names: str, res=None) -> None:
    """Print ``describe_facts(*names, res=res)``: a notebook's one-line source of hardware facts."""
    _check_res(res)
    _check_names(names, list(_FACT_PHRASES))
    print(describe_facts(*names, res=res))


# --------------------------------------------------------------------------- occupancy by hand

# Per compute capability, what the occupancy calculation needs beyond the device's attributes
# (NVIDIA's CUDA Occupancy Calculator and the CUDA C++ Programming Guide's table of technical
# specifications): the most resident blocks per SM, and the shared memory the system reserves
# per block (1 KiB from compute capability 8.0 on). The units follow CUDA's header-only
# calculator, cuda_occupancy.h (CUDA 13.0), for every listed capability (7.0 on):
# * cudaOccRegAllocationGranularity: registers are allocated per warp in units of 256;
# * cudaOccSubPartitionsPerMultiprocessor: the register file is split in 4 sub-partitions, and
#   cudaOccMaxBlocksPerSMRegsLimit fits whole warps into each (registers per SM / 4 // per
#   warp), times 4, then divides by the block's warps;
# * cudaOccSMemAllocationGranularity: shared memory per block (reserved bytes included) in
#   units of 256 bytes for compute capability 7.x, 128 from 8.0 on.
MAX_BLOCKS_PER_SM = {(7, 0): 32, (7, 2): 32, (7, 5): 16, (8, 0): 32, (8, 6): 16, (8, 7): 16,
                     (8, 9): 24, (9, 0): 32, (10, 0): 32, (12, 0): 32}
REGISTER_UNIT = 256
REGISTER_SUB_PARTITIONS = 4
MAX_REGISTERS_PER_THREAD = 255


def shared_unit(cc) -> int:
    """Bytes in which shared memory is allocated per block on a GPU of compute capability ``cc``
    (``(major, minor)``): 256 before 8.0, 128 from 8.0 on (cudaOccSMemAllocationGranularity)."""
    from . import validate

    return 128 if validate.compute_capability(cc) >= (8, 0) else 256


def _reserved_shared(cc) -> int:
    return 1024 if tuple(cc) >= (8, 0) else 0


def occupancy(threads: int, registers: int, shared_bytes: int = 0, facts_: dict | None = None,
              ) -> dict:
    """Resident blocks and warps per SM of a kernel, computed by hand as the hardware allocates.

    ``threads`` per block, ``registers`` per thread (the compiler's count: ``kernel.
    get_regs_per_thread(sig)`` or ptxas's), ``shared_bytes`` per block (static and dynamic);
    ``facts_`` the device facts (``gp.device.facts(res)[0]`` for a recorded GPU; this GPU's
    when None). Each resource allows some blocks per SM, and the smallest wins:

    * threads: ``max_threads_per_sm // threads`` (whole warps: a block of 48 threads takes two);
    * the per-SM block limit of the compute capability (``MAX_BLOCKS_PER_SM``);
    * registers: each warp gets ``registers x 32`` rounded up to a multiple of 256; the register
      file is 4 sub-partitions of ``registers_per_sm / 4``, each holding whole warps, so an SM
      holds 4 x (``registers_per_sm / 4 //`` per warp) warps, and that many // the block's warps;
    * shared memory: each block takes ``shared_bytes`` plus the 1 KiB the system reserves per
      block (compute capability 8.0 on), rounded up to 128 bytes (256 before 8.0), out of
      ``shared_per_sm``.

    Returns ``blocks_per_sm``, ``warps_per_sm``, ``occupancy`` (resident warps over the most an
    SM holds, 0 to 1), ``limiter`` (the resource that set it), ``limits`` (blocks allowed by
    each), and what they come from: ``warps_per_block``, ``registers_per_warp`` (rounded) and
    ``shared_per_block`` (rounded, reserved KiB included). A block that cannot run at all (too
    many threads, registers or shared bytes) raises ``ValueError`` saying which.
    """
    from . import validate as v

    d = dict(info().as_dict() if facts_ is None else v.mapping(facts_, "facts_"))
    need = ("compute_capability", "max_threads_per_sm", "registers_per_sm", "shared_per_sm",
            "warp_size")
    missing = [k for k in need if d.get(k) is None]
    if missing:
        raise ValueError(f"facts_ lacks {', '.join(missing)}: pass a GPU's facts (gp.device."
                         "facts(res)[0] for a recorded one); the simulator has none.")
    cc = tuple(d["compute_capability"])
    if cc not in MAX_BLOCKS_PER_SM:
        raise ValueError(f"compute capability {cc[0]}.{cc[1]} is not in MAX_BLOCKS_PER_SM "
                         f"({', '.join(f'{a}.{b}' for a, b in MAX_BLOCKS_PER_SM)}); add its "
                         "per-SM block limit from NVIDIA's table of technical specifications.")
    max_block = d.get("max_threads_per_block") or 1024
    threads = v.positive_int(threads, "threads", maximum=max_block)
    registers = v.positive_int(registers, "registers", maximum=MAX_REGISTERS_PER_THREAD)
    shared_bytes = v.positive_int(shared_bytes, "shared_bytes", minimum=0)
    warp = d["warp_size"]
    warps = -(-threads // warp)
    regs_per_warp = -(-registers * warp // REGISTER_UNIT) * REGISTER_UNIT
    block_regs = warps * regs_per_warp
    # The launch check counts the block's warps rounded up to the sub-partitions (cuda_occupancy.h).
    parts = REGISTER_SUB_PARTITIONS
    checked_regs = -(-warps // parts) * parts * regs_per_warp
    if max(block_regs, checked_regs) > (d.get("registers_per_block") or d["registers_per_sm"]):
        raise ValueError(f"a block of {threads} threads at {registers} registers each needs "
                         f"{block_regs:,} registers, more than a block may have: use fewer "
                         "threads per block or fewer registers (max_registers=).")
    optin = d.get("shared_per_block_optin") or d.get("shared_per_block") or 48 * 1024
    if shared_bytes > optin:
        raise ValueError(f"shared_bytes={shared_bytes:,} is more than a block may use here "
                         f"({optin:,} bytes with opt-in).")
    unit = shared_unit(cc)
    block_shared = -(-(shared_bytes + _reserved_shared(cc)) // unit) * unit
    max_warps = d["max_threads_per_sm"] // warp
    warps_by_registers = d["registers_per_sm"] // parts // regs_per_warp * parts
    limits = {
        "threads": max_warps // warps,
        "blocks": MAX_BLOCKS_PER_SM[cc],
        "registers": warps_by_registers // warps,
        "shared memory": d["shared_per_sm"] // block_shared if block_shared else None,
    }
    allowed = {k: n for k, n in limits.items() if n is not None}
    limiter = min(allowed, key=allowed.get)  # the first of equals: threads before blocks, ...
    blocks = allowed[limiter]
    return {"blocks_per_sm": blocks, "warps_per_sm": blocks * warps,
            "occupancy": blocks * warps / max_warps, "limiter": limiter, "limits": limits,
            # what each resource's limit was computed from (show_occupancy prints them)
            "warps_per_block": warps, "registers_per_warp": regs_per_warp,
            "warps_by_registers": warps_by_registers, "shared_per_block": block_shared}


def show_occupancy(threads: int, registers: int, shared_bytes: int = 0, res=None) -> dict:
    """Print :func:`occupancy` worked out step by step for the GPU behind ``res`` (see
    :func:`facts`: a recorded GPU's facts for a replayed result, this GPU's otherwise), and
    return it."""
    _check_res(res)
    d, where = facts(res)
    o = occupancy(threads, registers, shared_bytes, d)
    cc = tuple(d["compute_capability"])
    warp = d["warp_size"]
    warps, per_warp = o["warps_per_block"], o["registers_per_warp"]
    reserved, block_shared = _reserved_shared(cc), o["shared_per_block"]
    part_regs = d["registers_per_sm"] // REGISTER_SUB_PARTITIONS
    lim = o["limits"]
    lines = [
        f"{threads} threads, {registers} registers per thread, {shared_bytes:,} bytes of shared "
        f"memory per block, on {where}:",
        f"  threads:   {warps} warps per block; {d['max_threads_per_sm'] // warp} warps per SM "
        f"-> {lim['threads']} blocks",
        f"  blocks:    compute capability {cc[0]}.{cc[1]} holds at most {lim['blocks']} blocks "
        f"per SM",
        f"  registers: {registers} x {warp} = {registers * warp:,} per warp, {per_warp:,} "
        f"as a multiple of {REGISTER_UNIT}; {d['registers_per_sm']:,} per SM in "
        f"{REGISTER_SUB_PARTITIONS} sub-partitions of {part_regs:,} hold "
        f"{part_regs // per_warp} warps each, {o['warps_by_registers']} in all; / {warps} "
        f"warps -> {lim['registers']} blocks",
        f"  shared:    {shared_bytes:,} bytes" + (f" + {reserved:,} reserved" if reserved else "")
        + f", as a multiple of {shared_unit(cc)} = {block_shared:,} per block; "
        + f"{d['shared_per_sm']:,} per SM -> {lim['shared memory']} blocks",
        f"  -> {o['blocks_per_sm']} blocks ({o['limiter']} set it), {o['warps_per_sm']} warps "
        f"per SM, occupancy {100 * o['occupancy']:.1f}%",
    ]
    print("\n".join(lines))
    return o
