"""Chapter 3's kernels for tests/test_ptx.py: ``(kernel, signature)`` pairs it compiles for
sm_75 and sm_90 (``GPUPERF_MODE=compile``, no GPU needed); ``unroll_guard_ptx`` counts the
global loads in the PTX of the summing kernel with and without its ``(acc != acc)`` guard."""

from __future__ import annotations

import re

from gpuperf import targets, validate

from .experiments import COPY_ILPS, SUM_ILPS
from .kernels import (
    make_copy,
    make_strided_chunks,
    make_sum_loads,
    make_sum_loads_unguarded,
    pointer_chase,
    pointer_chase_unsigned,
)

_COPY_SIG = "void(float32[::1], float32[::1])"
PTX_TARGETS = (
    [(pointer_chase, "void(int32[::1], int64, int32[::1])"),
     (pointer_chase_unsigned, "void(int32[::1], int64, int32[::1])")]
    + [(make_sum_loads(k), "void(float32[::1], float32[::1], int64)") for k in SUM_ILPS]
    + [(make_copy(k), _COPY_SIG) for k in COPY_ILPS]
    + [(make_strided_chunks(k), "void(float32[::1], float32[::1], int64, int64, int64)")
       for k in (1, 2, 8)]
)


_SUM_SIG = "void(float32[::1], float32[::1], int64)"


@targets.compiles_ptx("the summing kernels",
                      ilp=lambda ilp: validate.positive_int(ilp, "ilp", maximum=64))
def unroll_guard_ptx(ilp: int = 1, cc=(9, 0)) -> dict:
    """Global loads (``ld.global`` of a float32) in the PTX of ``make_sum_loads(ilp)``
    (``"guarded"``) and of the same kernel without its ``(acc != acc)`` guard
    (``"unguarded"``, ``make_sum_loads_unguarded``), for ``cc``. Each kernel has two loops
    (whole iterations, then the tail); a loop the compiler unrolls shows as more loads. Under
    the simulator it compiles in a separate process with ``GPUPERF_MODE=compile``."""
    texts = targets.compile_each({"guarded": make_sum_loads(ilp),
                                  "unguarded": make_sum_loads_unguarded(ilp)}, _SUM_SIG, cc)
    return {label: len(re.findall(r"\bld\.global\.(?:nc\.)?f32\b", text))
            for label, text in texts.items()}


_PTX_LINE = re.compile(r"^\s*(?:@!?%p\d+\s+)?([a-z][\w.]*)\s+(.*?);\s*$")
_REG = re.compile(r"%(?:rd|r|p|f|fd)\d+")


def _chase_step(text: str) -> list[str]:
    """The instructions that one load of a chase's unrolled loop waits for: from the load that
    returns an index back through everything its successor's address depends on."""
    blocks, body = [], []
    for line in text.splitlines():
        if re.match(r"^\$L__BB\d+_\d+:", line.strip()):
            blocks.append(body)
            body = []
        else:
            m = _PTX_LINE.match(line)
            if m:
                body.append((m.group(1), m.group(2), line.strip().rstrip(";")))
    blocks.append(body)
    loop = max(blocks, key=lambda b: sum(op.startswith("ld.global") for op, _, _ in b))
    loads = [i for i, (op, _, _) in enumerate(loop) if op.startswith("ld.global")]
    if len(loads) < 3:
        raise RuntimeError("expected an unrolled chase loop with several loads in the PTX")
    first, second = loads[1], loads[2]
    needed = set(_REG.findall(loop[second][1].split(",", 1)[1]))
    chain = []
    for _op, args, line in reversed(loop[first + 1:second]):
        regs = _REG.findall(args)
        if regs and regs[0] in needed:
            chain.append(line)
            needed.discard(regs[0])
            needed.update(regs[1:])
    return [loop[first][2], *reversed(chain), loop[second][2]]


@targets.compiles_ptx("the pointer chases")
def chase_step_ptx(cc=(9, 0)) -> dict:
    """For ``pointer_chase`` (``"signed"``) and ``pointer_chase_unsigned`` (``"unsigned"``):
    the PTX instructions on the chain between one load and the next, for ``cc``: the load, the
    instructions that compute the next load's address from the index it returned, and that
    next load (the loop counter's instructions, which do not wait for a load, are left out).
    Under the simulator it compiles in a separate process with ``GPUPERF_MODE=compile``."""
    texts = targets.compile_each({"signed": pointer_chase, "unsigned": pointer_chase_unsigned},
                                 "void(int32[::1], int64, int32[::1])", cc)
    return {label: _chase_step(text) for label, text in texts.items()}
