"""Chapter 3, "DRAM banks, channels and latency hiding": the textbook's model and the GPU's answer.

``gp.dram`` (this package) re-exports every public name of its modules:

* ``kernels.py``: the pointer chase, the loads-in-flight reduction, the copy and the strided
  chunks, each with its host wrapper (the code the chapter shows).
* ``models.py``: the model, pure Python: ``DramLayout``, bank timing, the channels a tiled
  matmul reaches, Little's law.
* ``experiments.py``: ``dram_latency``, ``dram_latency_index``, ``dram_littles_law``,
  ``dram_loaded_latency``, ``dram_occupancy``, ``dram_strides`` and their helpers
  (``resident_blocks_per_sm``, ``persistent_launch``, ``measure_loads``).
* ``measured.py``: the tables and sentences read from the recorded results.
* ``figures.py``: diagrams of the model, its explorer, and the measured plots.
* ``checks.py``: the exercise checkers.
* ``profiling.py``: Nsight Compute on the chapter's kernels: ``profiling_latency`` (bytes in
  flight), ``profiling_l2_bandwidth`` and ``profiling_onchip_roofs`` (the L2's and the SM's read
  roofs, which chapters 2, 4 and 5 read).
* ``ptx.py``: ``PTX_TARGETS``, the kernels tests/test_ptx.py compiles; ``unroll_guard_ptx`` and
  ``chase_step_ptx``, what the compiled code of the summing kernel and the chases shows.
"""


from .checks import (
    IN_FLIGHT_SPEED_N,
    IN_FLIGHT_SPEED_TARGET,
    IN_FLIGHT_THREADS,
    T4_SPEC_FACTS,
    check_bank_queue,
    check_blocks_per_sm,
    check_channel_gbps,
    check_copy_in_flight,
    check_copy_loads_needed,
    check_loads_needed,
    check_phase_channels,
    check_step_latency,
    in_flight_launch,
    occupancy_agreement,
)
from .experiments import (
    COPY_ILPS,
    INDEX_LEVELS,
    LATENCY_SIZES_KIB,
    LITTLE_WARPS,
    LOADED_ILPS,
    LOADED_WARPS,
    OCC_BLOCKS,
    PROBE_STEPS,
    STREAM_ELEMENTS,
    STRIDE_ELEMENTS,
    STRIDE_ILPS,
    STRIDE_RETIME_SPREAD,
    STRIDES,
    SUM_ILPS,
    dram_latency,
    dram_latency_index,
    dram_littles_law,
    dram_loaded_latency,
    dram_loaded_latency_copy,
    dram_occupancy,
    dram_strides,
    littles_law_agreement,
    measure_loads,
    persistent_launch,
    resident_blocks_per_sm,
)
from .figures import (
    draw_banks,
    draw_burst,
    draw_interleaving,
    draw_matmul_phases,
    explore_model,
    plot_latency,
    plot_littles_law,
    plot_loaded_latency,
    plot_occupancy,
    plot_strides,
    show_model_table,
)
from .kernels import (
    FLOAT_BYTES,
    WARP,
    chase,
    chase_chain,
    chunk_geometry,
    copy,
    make_copy,
    make_strided_chunks,
    make_sum_loads,
    make_sum_loads_unguarded,
    pointer_chase,
    pointer_chase_unsigned,
    strided_sum,
    sum_partials,
)
from .measured import (
    copy_loaded_reading,
    latency_index_summary,
    latency_levels,
    launch_in_timing,
    loaded_latency_reading,
    loaded_latency_summary,
    loaded_littles_law,
    occupancy_summary,
    one_load_per_thread,
    show_loaded_latency,
    strides_visible,
    verify_prediction,
)
from .models import (
    COPY_READ_SHARE,
    TEXTBOOK,
    DramLayout,
    bank_schedule,
    banks_needed,
    bus_utilization,
    bytes_in_flight,
    channel_gbps,
    channels_needed,
    channels_used,
    copy_latency_covered_ns,
    copy_loads_per_thread_needed,
    ddr_channel_gbps,
    littles_law_gbps,
    loads_per_thread_needed,
    phase_usage,
    simulated_utilization,
    step_latency_ns,
    tile_loads,
)
from .profiling import (
    BANK_BYTES_PER_CLOCK,
    l2_bandwidth_experiment,
    l2_read_gbps,
    latency_experiment,
    onchip_reads,
    onchip_roof_gbps,
    onchip_roofs_experiment,
    onchip_roofs_summary,
)
from .ptx import PTX_TARGETS, chase_step_ptx, unroll_guard_ptx

__all__ = [
    # kernels.py
    "WARP", "FLOAT_BYTES", "pointer_chase", "pointer_chase_unsigned", "chase_chain", "chase",
    "make_sum_loads", "make_sum_loads_unguarded", "unroll_guard_ptx", "sum_partials", "make_copy",
    "copy", "make_strided_chunks",
    "chunk_geometry", "strided_sum",
    # models.py
    "DramLayout", "TEXTBOOK", "ddr_channel_gbps", "channels_needed", "bus_utilization",
    "banks_needed", "bank_schedule", "simulated_utilization", "tile_loads", "phase_usage",
    "channels_used", "littles_law_gbps", "bytes_in_flight", "loads_per_thread_needed",
    "COPY_READ_SHARE", "copy_loads_per_thread_needed", "copy_latency_covered_ns",
    "step_latency_ns", "channel_gbps",
    # experiments.py
    "SUM_ILPS", "COPY_ILPS", "resident_blocks_per_sm", "LATENCY_SIZES_KIB", "dram_latency",
    "INDEX_LEVELS", "dram_latency_index", "LITTLE_WARPS", "STREAM_ELEMENTS", "persistent_launch",
    "dram_littles_law", "measure_loads", "LOADED_ILPS", "LOADED_WARPS", "PROBE_STEPS",
    "dram_loaded_latency", "dram_loaded_latency_copy", "copy_loaded_reading",
    "OCC_BLOCKS", "dram_occupancy", "STRIDES", "STRIDE_ELEMENTS",
    "STRIDE_ILPS", "STRIDE_RETIME_SPREAD", "dram_strides", "littles_law_agreement",
    # measured.py
    "latency_index_summary", "loaded_latency_summary", "show_loaded_latency",
    "loaded_latency_reading", "loaded_littles_law", "launch_in_timing", "latency_levels",
    "verify_prediction", "one_load_per_thread", "occupancy_summary", "strides_visible",
    # profiling.py
    "BANK_BYTES_PER_CLOCK", "latency_experiment", "l2_bandwidth_experiment", "l2_read_gbps",
    "onchip_roofs_experiment", "onchip_reads", "onchip_roof_gbps", "onchip_roofs_summary",
    # figures.py
    "draw_burst", "draw_banks", "draw_interleaving", "draw_matmul_phases", "explore_model",
    "plot_latency", "plot_littles_law", "plot_occupancy", "plot_strides", "plot_loaded_latency",
    "show_model_table",
    # checks.py
    "check_bank_queue", "check_loads_needed", "T4_SPEC_FACTS", "occupancy_agreement",
    "check_blocks_per_sm", "check_copy_loads_needed", "IN_FLIGHT_THREADS", "IN_FLIGHT_SPEED_N",
    "IN_FLIGHT_SPEED_TARGET", "check_step_latency", "check_channel_gbps",
    "check_phase_channels",
    "in_flight_launch", "check_copy_in_flight",
    # ptx.py
    "PTX_TARGETS", "chase_step_ptx",
]
