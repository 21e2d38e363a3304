"""Chapter 1's Nsight Compute experiment (built on ``gpuperf.nsight``): how many warps the
copies' launches keep resident (``profiling_launch_occupancy``). Each launch runs in a process
of its own under the tool; replayed from the record elsewhere."""

from __future__ import annotations

from gpuperf import nsight, records

from .experiments import N_BIG, _device_vectors
from .kernels import copy_grid_stride, copy_one_per_thread, launch_config

# The launches profiled: the one-element-per-thread copy at every block size of
# ``gridstride_launch_sweep``, and the grid-stride copy that fills the SMs, beside them.
PROFILED_LAUNCHES = (("one_per_thread", 64, 1), ("one_per_thread", 128, 1),
                     ("one_per_thread", 256, 1), ("one_per_thread", 512, 1),
                     ("one_per_thread", 1024, 1), ("grid_stride", 256, 8))

OCCUPANCY_METRICS = (
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__maximum_warps_per_active_cycle_pct",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "gpu__time_duration.sum",
)


def _copy_launch(method: str, block: int, blocks_per_sm: int, n: int) -> None:
    """Chapter 1: one copy of ``n`` float32, launched as ``gridstride_launch_sweep`` does."""
    x, out = _device_vectors(n, 2)
    kernel = copy_one_per_thread if method == "one_per_thread" else copy_grid_stride
    grid, block = launch_config(n, method=method, block=block, blocks_per_sm=blocks_per_sm)
    nsight.launch_twice(lambda: kernel[grid, block](x, out))


@records.experiment(
    "profiling_launch_occupancy", chapter="profiling",
    title="Chapter 1's copies under Nsight Compute: the warps their launches keep resident",
    units={"achieved_pct": "% of the warps an SM can hold", "theoretical_pct": "%",
           "duration_ns": "ns", "dram_gbps": "GB/s"})
def launch_occupancy_experiment(progress) -> list[dict]:
    """Nsight Compute on the copy of ``N_BIG`` float32 (``PROFILED_LAUNCHES``): the achieved
    occupancy (the warps resident per SM, averaged over the run, as a share of the most an SM
    can hold), the theoretical occupancy of the launch, DRAM's bytes per second and the time."""
    rows = []
    for method, block, per_sm in PROFILED_LAUNCHES:
        progress(f"ncu on the copy: {method}, {block} threads per block")
        kernel = "copy_one_per_thread" if method == "one_per_thread" else "copy_grid_stride"
        m = nsight.profile(f"{__name__}:_copy_launch", method, block, per_sm, N_BIG, kernel=kernel,
                           metrics=OCCUPANCY_METRICS)
        grid, _ = launch_config(N_BIG, method=method, block=block, blocks_per_sm=per_sm)
        dram = m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"]
        rows.append({"method": method, "block": block, "blocks": grid,
                     "blocks_per_sm": per_sm if method == "grid_stride" else None,
                     "achieved_pct": round(m["sm__warps_active.avg.pct_of_peak_sustained_active"], 2),
                     "theoretical_pct": round(m["sm__maximum_warps_per_active_cycle_pct"], 2),
                     "dram_gbps": round(dram / m["gpu__time_duration.sum"], 1),
                     "duration_ns": m["gpu__time_duration.sum"]})
    return rows
