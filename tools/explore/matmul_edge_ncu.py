"""Exploration for issue 18's matmul rung: why does chapter 5's edge path, compiled into the fast
kernel but never taken at 4096^3, cost it about six points of cuBLAS (matmul_index.py's
ablation)? Nsight Compute on ``matmul_index.make_fast`` with and without ``edge=True``: the
instructions issued, the issue rate, and the stall reasons, among them ``no_instruction``
(a warp waits for its next instruction to be fetched: the instruction cache) and
``branch_resolving``. Run on a GPU from the repository root (ncu on the PATH):

    PYTHONPATH=src python3 tools/explore/matmul_edge_ncu.py

First run, NVIDIA H200, 2026-11-27, numba-cuda 0.30.4, 4096^3, one profiled launch each
(ncu's own duration; clocks not locked):

    kernel             ms      regs   instructions   FFMA share   issue rate   dispatch stall
    uint32             3.294   122    2.673 G        80.3%        80.3%        0.38
    uint32, edge path  3.534   122    2.795 G        76.8%        78.1%        0.60
    int64              3.364   124    2.749 G        78.1%        81.0%        0.35
    int64, edge path   3.594   127    2.888 G        74.4%        79.6%        0.59

(stall columns are warps stalled per issued instruction). The edge path, never taken here, costs
through the path that is taken: 4.6% more instructions issued in the fast kernel (uint32;
5.1% with int64), so a lower FFMA share, and an issue rate about two points lower with more
dispatch stalls. FFMA share x issue rate predicts the time ratio: 0.803 x 0.803 against 0.768 x
0.781 is 1.075, and the durations' ratio is 1.073. ``no_instruction`` (instruction fetch) is not
among the top six stalls in any of the four, so the bigger code is not starving the fetch.

Which instructions: ``--sass`` prints the loop with the most FFMAs in each kernel's SASS (the
inner loop over a k-tile: two k steps, 128 FFMAs, four passes per tile at BK 8). Same GPU:

    uint32             144 instructions: 128 FFMA, LDS 8, IADD3 4, ISETP 2, SEL 1, BRA 1
    uint32, edge path  151 instructions: 128 FFMA, LDS 8, IMAD 3, ISETP 2, LEA 2, ULOP3 1,
                       VIADD 1, UMOV 1, UIADD3 1, SEL 1, IADD3 1, LOP3 1, BRA 1
    int64              144 instructions: 128 FFMA, LDS 8, IADD3 3, ISETP 2, SEL 1, VIADD 1, BRA 1
    int64, edge path   151 instructions: 128 FFMA, LDS 8, UIADD3 4, UISETP 2, VIADD 2, LEA 2,
                       USHF 1, USEL 1, PLOP3 1, UMOV 1, BRA 1

With the edge path in the kernel, the inner loop computes its shared-memory addresses with
seven more instructions per pass (IMAD, LEA and uniform-datapath operations instead of one
running offset): 28 more per tile and warp, about the 4.6% more instructions ncu counted. The
edge path reads the same shared tiles with its own loop, and the compiler no longer keeps the
fast loop's addresses as a simple running offset. Run with:

    PYTHONPATH=src python3 tools/explore/matmul_edge_ncu.py --sass
"""
import importlib.util
import pathlib
import sys

import numpy as np

REASONS = ("long_scoreboard", "barrier", "mio_throttle", "short_scoreboard", "math_pipe_throttle",
           "wait", "not_selected", "no_instruction", "branch_resolving", "dispatch_stall",
           "lg_throttle", "drain", "sleeping", "tex_throttle", "imc_miss", "misc", "selected")
METRICS = tuple(f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio" for r in REASONS) + (
    "smsp__inst_issued.sum", "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "smsp__issue_active.avg.pct_of_peak_sustained_active", "sm__warps_active.avg.per_cycle_active",
    "gpu__time_duration.sum", "launch__registers_per_thread", "sm__cycles_active.avg")
CONFIGS = {"fast": dict(U=np.uint32), "edge": dict(U=np.uint32, edge=True),
           "fast64": dict(U=np.int64), "edge64": dict(U=np.int64, edge=True)}
N = 4096


def _module():
    spec = importlib.util.spec_from_file_location(
        "matmul_index", pathlib.Path(__file__).with_name("matmul_index.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def launch(config):
    """Run in the profiled process: the kernel twice (ncu skips the first)."""
    from numba import cuda

    from gpuperf.kernels import matmul as mm
    k = _module().make_fast(128, 128, 8, 8, 8, 2, **CONFIGS[config])
    dA, dB, dC = mm.device_operands(N, N, N)
    for _ in range(2):
        k[(N // 128, N // 128), 256](dA, dB, dC)
    cuda.synchronize()


def main():
    from gpuperf import profiling as pr
    rows = {}
    for config in CONFIGS:
        cmd = pr.ncu_command(["python3", __file__, "--launch", config], kernel="fast",
                             metrics=METRICS, launch_skip=1, launch_count=1)
        got = {r["metric"]: r["value"] for r in pr.parse_ncu_csv(pr._tool_run(cmd, config))}
        rows[config] = got
        inst, ffma = got["smsp__inst_issued.sum"], got[
            "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"] / 32
        stalls = sorted(((got.get(f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio")
                          or 0, r) for r in REASONS), reverse=True)[:6]
        print(f"{config:7s} {got['gpu__time_duration.sum'] / 1e6:7.3f} ms, regs "
              f"{got['launch__registers_per_thread']:.0f}, inst {inst / 1e9:.3f} G, FFMA share "
              f"{100 * ffma / inst:.1f}%, issue {got['smsp__issue_active.avg.pct_of_peak_sustained_active']:.1f}%"
              f", warps/cycle {got['sm__warps_active.avg.per_cycle_active']:.2f}; stalls "
              + ", ".join(f"{r} {v:.2f}" for v, r in stalls), flush=True)
    return rows


def hot_loop(sass: str):
    """The opcodes of the loop that holds the most FFMAs: from a label to the branch that jumps
    back to it."""
    import collections
    import re

    lines = sass.splitlines()
    labels = {m.group(1): i for i, line in enumerate(lines)
              for m in [re.match(r"\s*(\.L_x_\d+):", line)] if m}
    best = None
    for i, line in enumerate(lines):
        m = re.search(r"\bBRA\b.*?(\.L_x_\d+)", line)
        if m and labels.get(m.group(1), i + 1) < i:  # a backward branch: a loop
            body = lines[labels[m.group(1)]:i + 1]
            ops = [o.group(1) for b in body
                   for o in [re.search(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", b)]
                   if o]
            ffma = sum(op.startswith("FFMA") for op in ops)
            if best is None or ffma > best[0]:
                best = (ffma, collections.Counter(op.split(".")[0] for op in ops))
    return best


def sass_report():
    """The hot loop of each configuration: its length and opcode mix."""
    mod = _module()
    sig = "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])"
    for config, cfg in CONFIGS.items():
        k = mod.make_fast(128, 128, 8, 8, 8, 2, **cfg)
        sass = k.compile(sig).inspect_sass()
        ffma, ops = hot_loop(sass)
        print(f"{config:7s} hot loop {sum(ops.values())} instructions, {ffma} FFMA; "
              + ", ".join(f"{o} {c}" for o, c in ops.most_common() if o != "FFMA"), flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--launch":
        launch(sys.argv[2])
    elif sys.argv[1:] == ["--sass"]:
        sass_report()
    else:
        main()
