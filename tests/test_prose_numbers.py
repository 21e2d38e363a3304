"""The prose quotes no GPU's measurements: measured numbers and hardware facts are printed.

Chapters re-measure on the reader's GPU (a Colab T4 has 40 SMs, 1024 threads per SM, 4 MiB of
L2, 320 GB/s), so a number typed into a markdown cell ("2048 threads per SM", "3.2x",
"4,199 GB/s") is true of one GPU only. Such numbers belong in a code cell that prints them from
the result shown (``res.rows``, ``res.select``) or from ``gp.device.show_facts``. This test scans
every markdown cell of every chapter, and the book's prose pages, for unit-bearing numbers and
fails on any that is not a textbook or model constant listed in ``ALLOWED`` with its reason.
"""

import re

import nbformat
import pytest
from conftest import ROOT

NOTEBOOKS = sorted((ROOT / "solutions").glob("*.ipynb"))
# book/devices.md is the table of recorded GPUs: its numbers are labelled by GPU on purpose.
BOOK_PAGES = sorted(p for p in (ROOT / "book").glob("*.md") if p.name != "devices.md")

_NUM = r"\d+(?:[.,]\d+)*"
_UNITS = (r"TFLOP/s|GFLOP/s|TB/s|GB/s|MB/s|ms|µs|us|ns|cycles|%|"
          r"TB|GB|GiB|MB|MiB|KB|KiB|kB|SMs?|threads per SM|threads/SM")
# A number (or a range "600-800") followed by a unit, or a ratio "3.2x" / "3.2×" / "3.2 ×".
UNIT_NUMBER = re.compile(
    rf"(?<![\w.^/]){_NUM}(?:\s*[-–]\s*{_NUM})?\s?(?:{_UNITS})(?![\w/])"
    rf"|(?<![\w.^/]){_NUM}(?:x|\s?×)(?![\w\d])(?!\s*\d)"
)

# Exact phrases (whitespace-normalized) inside which a unit-bearing number may stay: textbook
# and model constants, sizes a chapter chooses, thresholds of a method or a checker, and figures
# of the source articles' own machines, labelled as theirs. Keep it short and specific.
SOL_LINE = ("Nsight Compute's Speed-of-Light line (its rule: under 60% on both sides, latency), "
            "a constant of the method")
ALLOWED = {
    "prints 40 MB": "the size the red-team submission prints on purpose, not a measurement",
    "over 2 GiB together": "the grader's disk limit, sandbox.Limits.disk_bytes (a setting; "
                           "tests/test_redteam.py checks the guide against it)",
    "262,144 floats (1 MiB)": "the step-by-step post's image size (512 x 512 float32), arithmetic",
    "over the same 1 MiB": "the step-by-step post's data size, arithmetic",
    "1 to 256 MiB": "the sizes the L2 experiment chooses to sweep",
    "1 GiB": "2^28 float32 values, the array size the chapters choose; not a measurement",
    "are 64 KiB": "two 128x32 and two 32x128 float32 tiles, arithmetic on the chosen tile sizes",
    "single pair is 32 KiB": "one 128x32 and one 32x128 float32 tile, arithmetic on the chosen "
                             "tile sizes",
    "caps at 48 KiB per block": "CUDA's limit on static shared memory, the same on every GPU",
    "stay within 48 KiB per block": "the same CUDA limit on static shared memory",
    "more than 48 KiB of static shared memory": "the same CUDA limit on static shared memory",
    "plus 1 KiB the system reserves": "the shared memory the system reserves per block from "
                                          "compute capability 8.0 on: an architectural constant",
    "= 16 GB/s": "the textbook's example channel: a 64-bit DDR bus at 1 GHz, worked out",
    "a 16 GB/s channel": "the same textbook example channel, a model number",
    "above 60%, chapter 9's line": SOL_LINE,
    "90% of v8's bandwidth": "the pass threshold of the exercise checker (a constant of the checker)",
    "from 1 MiB to 256 MiB": "the copy sizes the chapter chooses to sweep",
    "(128 MiB per array)": "2^25 float32 per array, the chapter's size",
    "of 4 KiB, 64 KiB and 1 MiB": "the copy sizes the overhead experiment chooses",
    "4 chunks of 1 ms in, 0.5 ms kernel, 0.8 ms out": "made-up stage times of the model's example",
    "rows of only 256 KiB": "65,536 float32 samples per row at the headline size, arithmetic",
    "more than 8 GiB": "the allocation limit the experiment chooses for the first algorithm",
    "90% of the bytes have the same value": "the skew the chapter chooses for its data",
    "2^{26} bytes (64 MiB)": "the histogram's input size, chosen by the chapter",
    "the article's 3x (GTX 1080": "the GDN article's own figure, quoted as its own",
    "Memory above 60% and above compute": SOL_LINE,
    "Compute above 60% and above memory": SOL_LINE,
    "Both under 60%": SOL_LINE,
    "(60% is Nsight Compute's own line for this.)": SOL_LINE,
    "(60% of peak)": SOL_LINE,
    "both sides under 60%": SOL_LINE,
    "`gp.debugging.limiter`, 60% of peak": SOL_LINE,
}


def _normalize(text: str) -> str:
    # Math delimiters and line breaks do not separate a number from its unit in the rendered text.
    return re.sub(r"\s+", " ", text.replace("$", ""))


def flagged(text: str) -> list[str]:
    """The unit-bearing numbers in ``text`` that no allowed phrase covers."""
    text = _normalize(text)
    covered = []
    for phrase in ALLOWED:
        covered += [(m.start(), m.end()) for m in re.finditer(re.escape(phrase), text)]
    hits = []
    for m in UNIT_NUMBER.finditer(text):
        if not any(a <= m.start() and m.end() <= b for a, b in covered):
            hits.append(m.group(0))
    return hits


def _markdown_cells():
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        for i, cell in enumerate(nb.cells):
            if cell.cell_type == "markdown":
                yield f"{path.relative_to(ROOT)} cell {i}", cell.source
    for path in BOOK_PAGES:
        yield str(path.relative_to(ROOT)), path.read_text()


def test_scanner_flags_typed_measurements():
    sample = ("Bandwidth rises until about 2048 threads per SM; the L2 holds 50 MB on an H100 and\n"
              "the copy reaches 4,199 GB/s on $132$ SMs, 3.2x the naive one (12.5% occupancy, "
              "360 ns, a 1.5 × gain, 600-800 ns).")
    assert flagged(sample) == ["2048 threads per SM", "50 MB", "4,199 GB/s", "132 SMs", "3.2x",
                               "12.5%", "360 ns", "1.5 ×", "600-800 ns"]


def test_scanner_leaves_constants_and_shapes_alone():
    sample = ("A warp of 32 threads reads 32-byte sectors of 128-byte lines; a 32 x 32 tile, "
              "`<4 x float>`, 2^28 elements (1 GiB), v1.5 and "
              "sm_90.")
    assert flagged(sample) == []


def test_every_allowed_phrase_is_still_used():
    text = " ".join(_normalize(src) for _, src in _markdown_cells())
    unused = [p for p in ALLOWED if p not in text]
    assert not unused, f"remove allowlist entries that no prose uses any more: {unused}"


def test_prose_prints_measured_numbers():
    problems = [f"{where}: {hits}" for where, source in _markdown_cells()
                if (hits := flagged(source))]
    assert not problems, (
        "measured numbers or one GPU's hardware facts are typed into the prose:\n  "
        + "\n  ".join(problems)
        + "\nPrint each from the result (res.rows, res.select) or from gp.device.show_facts in a "
        "code cell; if it is a textbook or model constant, add the exact phrase to ALLOWED with "
        "its reason."
    )


# --------------------------------------------------------------------------- the printing side


def test_device_facts_name_the_gpu_they_belong_to():
    import gpuperf as gp

    values, where = gp.device.facts()  # no GPU here: the reference GPU's, from its record
    assert values.get("sm_count") and values.get("max_threads_per_sm")
    assert "reference GPU" in where
    res = gp.records.run("gridstride_launch_sweep")
    text = gp.device.describe_facts("max_threads_per_sm", "sm_count", "l2_bytes", res=res)
    assert res.gpu in text and "threads per SM" in text and "SMs" in text
    assert gp.device.fact("sm_count", res) == res.meta["device"]["sm_count"]
    live_like = gp.records.Result(res.name, res.rows, res.meta, "live")
    assert gp.device.facts(live_like)[1].startswith("this GPU")
    with pytest.raises(ValueError, match="no device fact"):
        gp.device.fact("sm_cuont")


def test_prose_helpers_print_from_the_records(capsys):
    import gpuperf as gp

    run = gp.records.run
    gp.dram.one_load_per_thread(run("coalescing_transpose"))
    gp.dram.occupancy_summary(run("dram_occupancy"))
    gp.matmul.naive_vs_tiled_summary(run("matmul_naive_vs_tiled"))
    gp.coarsening.occupancy_limits(run("matmul_coarsen_sweep"))
    gp.coarsening.vecadd_summary(run("matmul_vecadd_coarsen"))
    gp.coarsening.regtile_summary(run("matmul_regtile_sweep"))
    gp.reduce.versus_v100(run("reduce_ladder"))
    out = capsys.readouterr().out
    for expected in ("KiB in flight per SM", "loads per thread", "TFLOP/s", "registers",
                     "of the device-to-device copy", "study notes"):
        assert expected in out
