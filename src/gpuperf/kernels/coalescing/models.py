"""The sector model (no GPU needed): what one warp's addresses cost.

``warp_access(stride, offset, elem_bytes)``: the sectors and lines one warp's load touches,
and its efficiency (bytes used / bytes moved); ``stride_efficiency`` its efficiency against
stride; ``aos_model_bytes`` the bytes per particle a layout moves (``make_sum_fields``).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

from gpuperf import validate

from .kernels import AOS_FIELDS, AOS_LAYOUTS, WARP

SECTOR_BYTES = 32  # the unit DRAM and L2 deliver to an SM
LINE_BYTES = 128  # an L1 cache line: four sectors
BANKS = 32  # shared memory: 32 banks, 4 bytes wide


@dataclass(frozen=True)
class WarpAccess:
    """The memory transactions of one warp-wide load or store.

    ``addresses`` are the byte addresses of the active lanes' elements, relative to a
    256-byte-aligned allocation (``cudaMalloc`` aligns at least that much).
    """

    addresses: tuple[int, ...]
    elem_bytes: int
    description: str = ""

    def __post_init__(self):
        if not isinstance(self.addresses, tuple):
            raise TypeError(f"addresses must be a tuple of byte addresses, not "
                            f"{type(self.addresses).__name__}; use WarpAccess.from_addresses.")
        # The tracer makes one per warp request: check fast, explain slowly.
        if not all(type(a) is int and a >= 0 for a in self.addresses):
            for i, a in enumerate(self.addresses):
                validate.positive_int(a, f"addresses[{i}]", minimum=0)
        if self.elem_bytes not in (1, 2, 4, 8, 16):
            validate.choice(self.elem_bytes, "elem_bytes", (1, 2, 4, 8, 16))
        if type(self.description) is not str:
            validate.string(self.description, "description", empty=True)

    @classmethod
    def from_addresses(cls, addresses, elem_bytes: int, description: str = "") -> WarpAccess:
        addresses = validate.sequence(addresses, "addresses")
        for _i, _a in enumerate(addresses):
            if not (isinstance(_a, numbers.Integral) and _a >= 0):  # fast: called per request
                validate.positive_int(_a, f"addresses[{_i}]", minimum=0)
        if elem_bytes not in (1, 2, 4, 8, 16):
            validate.choice(elem_bytes, "elem_bytes", (1, 2, 4, 8, 16))
        if type(description) is not str:
            validate.string(description, "description", empty=True)
        return cls(tuple(int(a) for a in addresses), int(elem_bytes), description)

    @property
    def lanes(self) -> int:
        return len(self.addresses)

    @property
    def sectors(self) -> tuple[int, ...]:
        """Indices (address // 32) of the sectors touched, sorted."""
        touched = set()
        for a in self.addresses:
            first, last = a // SECTOR_BYTES, (a + self.elem_bytes - 1) // SECTOR_BYTES
            touched.update(range(first, last + 1))
        return tuple(sorted(touched))

    @property
    def lines(self) -> tuple[int, ...]:
        return tuple(sorted({s * SECTOR_BYTES // LINE_BYTES for s in self.sectors}))

    @property
    def bytes_used(self) -> int:
        """Distinct bytes the lanes asked for."""
        used = set()
        for a in self.addresses:
            used.update(range(a, a + self.elem_bytes))
        return len(used)

    @property
    def bytes_moved(self) -> int:
        return SECTOR_BYTES * len(self.sectors)

    @property
    def efficiency(self) -> float:
        """Bytes used / bytes moved: 1.0 is a perfectly coalesced access."""
        return self.bytes_used / self.bytes_moved if self.addresses else 1.0

    def summary(self) -> str:
        return (f"{self.lanes} lanes use {self.bytes_used} B; the memory system moves "
                f"{self.bytes_moved} B in {len(self.sectors)} sectors of {len(self.lines)} "
                f"line{'s' if len(self.lines) != 1 else ''}: {self.efficiency:.0%} efficient")


def warp_access(stride: int = 1, offset: int = 0, elem_bytes: int = 4,
                lanes: int = WARP) -> WarpAccess:
    """The sectors one warp's load touches when lane ``i`` reads element ``offset + i * stride``.

    ``stride`` and ``offset`` count elements of ``elem_bytes`` bytes each (1, 2, 4, 8 or
    16: a 16-byte element is a float4 vector load). ``stride=0`` is a broadcast.
    """
    stride = validate.positive_int(stride, "stride", minimum=0, maximum=4096)
    offset = validate.positive_int(offset, "offset", minimum=0, maximum=4096)
    elem_bytes = validate.choice(elem_bytes, "elem_bytes", (1, 2, 4, 8, 16))
    lanes = validate.positive_int(lanes, "lanes", maximum=WARP)
    addrs = [(offset + lane * stride) * elem_bytes for lane in range(lanes)]
    desc = f"stride {stride}, offset {offset}, {elem_bytes}-byte elements"
    return WarpAccess.from_addresses(addrs, elem_bytes, desc)


def stride_efficiency(stride: int, elem_bytes: int = 4) -> float:
    """The model's efficiency of a warp reading every ``stride``-th element (aligned)."""
    validate.positive_int(stride, "stride", minimum=0, maximum=4096)
    validate.choice(elem_bytes, "elem_bytes", (1, 2, 4, 8, 16))
    return warp_access(stride, 0, elem_bytes).efficiency


def _layout_read_bytes(layout: str, fields: int, used: int, elem_bytes: int) -> int:
    """The sector model's DRAM bytes per particle when a warp's 32 threads read fields
    0 to used - 1 of 32 consecutive particles of ``fields`` fields of ``elem_bytes`` bytes
    (every array starts on a sector). The answer to ``ex-coalescing-layout-bytes``."""
    if elem_bytes not in (1, 2, 4, 8):  # an element then never straddles two sectors
        raise ValueError(f"elem_bytes={elem_bytes!r}: the model takes 1, 2, 4 or 8.")
    if layout == "SoA":  # each field: 32 contiguous elements, whole sectors
        return used * elem_bytes
    sectors = {(lane * fields + f) * elem_bytes // SECTOR_BYTES
               for lane in range(WARP) for f in range(used)}
    return len(sectors) * SECTOR_BYTES // WARP


def aos_model_bytes(layout: str, used: int) -> int:
    """The sector model's DRAM bytes per particle for ``make_sum_fields(layout, used)``: AoS
    moves the whole 32-byte struct whatever it uses (every sector holds fields of one
    particle only); SoA moves only the fields it reads. Both write 4 bytes of output."""
    validate.choice(layout, "layout", AOS_LAYOUTS)
    used = validate.positive_int(used, "used", maximum=AOS_FIELDS)
    return _layout_read_bytes(layout, AOS_FIELDS, used, 4) + 4
