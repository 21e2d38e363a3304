"""``gp.launch``: the streams chapter's launch machinery, kept under its old name.

What a launch costs, the hardware queues, CUDA graphs and packed launches
(``PackedLaunch``, ``NotPackable``, which the reduce chapter's plans use) live in
``gpuperf.kernels.streams`` (``streams/launch.py``); this module only re-exports them, so
that ``gp.launch`` in the chapter's notebook and ``from gpuperf.kernels.launch import
PackedLaunch`` keep working.
"""

from gpuperf.kernels.streams import (
    BUMP_CPP,
    CONNECTIONS_VAR,
    DEFAULT_CONNECTIONS,
    LAUNCH_REPEATS,
    LAUNCHES,
    METHODS,
    ORDERS,
    PTX_TARGETS,
    QUEUE_CONNECTIONS,
    QUEUE_KERNEL_MS,
    QUEUE_REPEATS,
    QUEUE_STREAMS,
    TIMINGS,
    CapturedGraph,
    NotPackable,
    PackedLaunch,
    bump,
    hardware_queue_rows,
    hardware_queues_experiment,
    issue_order,
    kernel_params,
    launch_cost_experiment,
    launch_cost_rows,
    launch_cost_summary,
    queue_model,
    show_hardware_queues,
    show_launch_cost,
)

__all__ = [
    "BUMP_CPP",
    "CONNECTIONS_VAR",
    "DEFAULT_CONNECTIONS",
    "LAUNCHES",
    "LAUNCH_REPEATS",
    "METHODS",
    "NotPackable",
    "ORDERS",
    "PTX_TARGETS",
    "PackedLaunch",
    "CapturedGraph",
    "QUEUE_CONNECTIONS",
    "QUEUE_KERNEL_MS",
    "QUEUE_REPEATS",
    "QUEUE_STREAMS",
    "TIMINGS",
    "bump",
    "hardware_queue_rows",
    "hardware_queues_experiment",
    "issue_order",
    "kernel_params",
    "launch_cost_experiment",
    "launch_cost_rows",
    "launch_cost_summary",
    "queue_model",
    "show_hardware_queues",
    "show_launch_cost",
]
