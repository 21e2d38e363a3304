"""The chapter's experiments: compute-sanitizer on the planted bugs
(``profiling_sanitizer``) and Nsight Compute's Speed of Light on eight course kernels
(``profiling_speed_of_light``); ``gpuperf.profiling`` runs the tools."""

from __future__ import annotations

from gpuperf import profiling
from gpuperf.records import experiment

# (label, tool, launch, args): each a process of its own under compute-sanitizer.
SANITIZED = (
    ("smooth_racy", "racecheck", "smooth", (1, 1000)),
    ("smooth", "racecheck", "smooth", (0, 1000)),
    ("copy_unguarded", "memcheck", "copy_unguarded", (1000,)),
    ("tiled_early_return", "synccheck", "matmul_early_return", (33,)),
    ("tiled_early_return", "racecheck", "matmul_early_return", (33,)),
)


@experiment("profiling_sanitizer", chapter="profiling",
            title="compute-sanitizer on planted bugs: a missing barrier, an unguarded tail, "
                  "an early return before a barrier")
def sanitizer_experiment(progress) -> list[dict]:
    rows = []
    for label, tool, launch, args in SANITIZED:
        progress(f"compute-sanitizer --tool {tool} on {label}")
        found = profiling.sanitize(tool, launch, *args)
        rows.append({"kernel": label, "tool": tool, "n": args[-1], **found})
        progress(f"   {found['errors']} error(s), {found['warnings']} warning(s); result "
                 f"{'right' if found['correct'] else 'WRONG'}")
    return rows


# (label, launch, args, kernel name): kernels of chapters 2 to 6, each a process of its own.
SPEED_OF_LIGHT_KERNELS = (
    ("copy, stride 1", "stride", (1, 1 << 26), "copy_strided"),
    ("copy, stride 32", "stride", (32, 1 << 23), "copy_strided"),
    ("naive transpose", "transpose", (-1, 4096), "transpose_naive"),
    ("sum, 1 load per thread, 8 warps per SM", "sum_loads", (1, 8), "sum_loads"),
    ("reduce v1", "reduce", ("v1", 256, 1 << 24), "reduce_v1"),
    ("reduce v8", "reduce", ("v8", 256, 1 << 26), "reduce_v8"),
    ("tiled matmul, tile 32", "matmul", ("tiled", 32, 1, 4096), "tiled"),
    ("register-tiled matmul", "matmul", ("regtile_pipelined", 0, 0, 4096), "regtile"),
)


@experiment("profiling_speed_of_light", chapter="profiling",
            title="Speed of Light and stall reasons of eight course kernels (Nsight Compute)",
            units={"sm_pct": "% of peak", "memory_pct": "% of peak", "dram_pct": "% of peak",
                   "l1_pct": "% of peak", "l2_pct": "% of peak", "fma_pct": "% of peak",
                   "occupancy_pct": "%", "duration_ns": "ns"})
def speed_of_light_experiment(progress) -> list[dict]:
    rows = []
    for label, launch, args, kernel in SPEED_OF_LIGHT_KERNELS:
        progress(f"ncu on {label}")
        m = profiling.profile(launch, *args, kernel=kernel, metrics=profiling.SOL_METRICS,
                              launch_count=3)  # the longest: a reduction's first stage
        rows.append({"kernel": label, **profiling.speed_of_light(m)})
    return rows
