"""The contract, by the kinds of failure issue 13 found: silent wrong results, errors from
deep inside, records, modes, widgets, and the record tool (with a simulated GPU)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from gpuperf import _mode, bench, plots, record, records, store, widgets  # noqa: E402
from gpuperf import exercises as ex  # noqa: E402
from gpuperf.kernels import coarsening as cs  # noqa: E402
from gpuperf.kernels import dram as dr  # noqa: E402
from gpuperf.kernels import reduce as rd  # noqa: E402

X = np.ones(8, np.float32)


def _result(rows, **meta):
    return records.Result("demo", rows, {"gpu": "My GPU", "ceilings": {}, **meta}, "recorded")


# --------------------------------------------------------------------------- silent results


def test_a_renamed_column_is_an_error_not_bars_at_zero():
    res = _result([{"version": "a", "gbs": 10.0}, {"version": "b", "gbs": 20.0}])
    with pytest.raises(ValueError, match="gbps.*Did you mean 'gbs'"):
        plots.bars(res, label="version")


def test_select_and_values_refuse_unknown_columns():
    res = _result([{"version": "a", "gbps": 1.0}])
    with pytest.raises(ValueError, match="versionn.*Did you mean 'version'"):
        res.select(versionn="a")
    with pytest.raises(ValueError, match="gbs"):
        res.values("gbs")
    with pytest.raises(ValueError, match="gbs"):
        res.column("gbs")
    assert res.select(version="a") == res.rows


@pytest.mark.parametrize("out,err", [(np.ones(4, np.float32), ValueError),
                                     (np.ones(8), TypeError), (np.ones(8, np.int32), TypeError)])
def test_vector_add_refuses_an_out_that_would_lose_sums(out, err):
    with pytest.raises(err, match="out"):
        cs.vector_add(X, X, out=out)
    good = np.full(8, np.nan, np.float32)
    assert cs.vector_add(X, X, out=good) is good and (good == 2).all()


def test_reduce_block_must_suit_the_tree_and_v4_warns():
    with pytest.raises(ValueError, match="power of two"):
        rd.kernel_for("v2", 100)
    with pytest.warns(RuntimeWarning, match="racy"):
        rd.reduce_sum(np.ones(300, np.float32), "v4", block=64)


def test_chase_refuses_a_start_off_the_chain():
    chain = dr.chase_chain(4)
    with pytest.raises(ValueError, match="start=5 is not on the chain"):
        dr.chase(chain, 3, start=5)


def test_verify_prediction_never_answers_for_a_point_below_the_one_asked(capsys):
    with pytest.raises(ValueError, match="loads=1000"):
        dr.verify_prediction(1000, 8)
    res = records.run("dram_littles_law")
    measured = sorted(res.values("ilp"))
    assert dr.verify_prediction(measured[-1], 8)["ilp"] == measured[-1]


def test_compare_nan_against_nan_is_equal():
    nan = float("nan")
    assert ex.compare([nan], [nan]) is None
    assert ex.compare([1.0, nan], [1.0, nan]) is None
    assert "NaN" in ex.compare([nan], [1.0])


# --------------------------------------------------------------------------- records


def _write(path, text):
    path.write_text(text)
    return path


@pytest.mark.parametrize("text,words", [
    ('{"format": 2, "experi', "not valid JSON"),
    ("", "is empty"),
    ("[]", "JSON list"),
    ('{"format": 1, "provenance": {"gpu": "G", "ceilings": {}}, "experiments": '
     '{"gridstride_ceilings": {"meta": {}}}}', "without a 'rows' list"),
    ('{"format": 2, "experiments": {"gridstride_ceilings": {"rows": [{"a": 1}]}}}',
     "no provenance"),
    ('{"format": 2, "experiments": {"gridstride_ceilings": {"rows": [{"a": 1}], '
     '"provenance": {"gpu": "G"}}}}', "no ceilings"),
])
def test_broken_record_files_are_named_in_the_error(tmp_path, monkeypatch, text, words):
    path = _write(tmp_path / "broken.json", text)
    monkeypatch.setenv(records.ENV_RECORD, str(path))
    with pytest.raises(records.RecordError) as info:
        records.run("gridstride_ceilings")
    assert str(path) in str(info.value) and words in str(info.value)
    assert isinstance(info.value, ValueError)


def test_an_existing_path_with_capitals_is_a_path_not_a_gpu_name(tmp_path, monkeypatch):
    src = records.DATA_DIR / f"{records.REFERENCE}.json"
    path = tmp_path / "My-Record.JSON"
    path.write_text(src.read_text())
    monkeypatch.setenv(records.ENV_RECORD, str(path))
    assert records.record_path() == path
    monkeypatch.setenv(records.ENV_RECORD, str(tmp_path / "Missing.JSON"))
    with pytest.raises(FileNotFoundError, match="Missing.JSON does not exist"):
        records.record_path()


def test_shipped_record_migrates_with_every_row_identical(tmp_path):
    # The shipped records are format 2; write the reference back in format 1 (one
    # file-level provenance, each experiment's date and ceilings in its meta) and load it.
    shipped = records.load(records.DATA_DIR / f"{records.REFERENCE}.json")
    first = next(iter(shipped["experiments"].values()))["provenance"]
    raw = {"format": 1, "provenance": first, "experiments": {
        name: {"rows": e["rows"], "meta": {**e.get("meta", {}), "date": e["provenance"]["date"],
                                           "ceilings": e["provenance"]["ceilings"]}}
        for name, e in shipped["experiments"].items()}}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(raw))
    data = records.load(path)
    assert data["format"] == records.FORMAT and data["gpu"] == raw["provenance"]["gpu"]
    for name, entry in raw["experiments"].items():
        new = data["experiments"][name]
        assert new["rows"] == entry["rows"], name
        assert new["provenance"]["gpu"] == raw["provenance"]["gpu"]
        assert new["provenance"]["ceilings"] == entry["meta"]["ceilings"]
        assert new["provenance"]["date"] == shipped["experiments"][name]["provenance"]["date"]
    res = records.recorded("reduce_ladder", path)
    assert res.label.startswith("recorded on NVIDIA H") and res.ceilings.get("copy_gbps")


def test_save_is_atomic_and_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "r.json"
    data = records.load(records.DATA_DIR / f"{records.REFERENCE}.json")
    records.save(data, path)
    records.save(data, path)
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]
    assert records.load(path)["experiments"] == data["experiments"]


# --------------------------------------------------------------------------- record tool


@pytest.fixture
def fake_gpu(tmp_path, monkeypatch):
    """A simulated GPU: the recorder sees a GPU, two experiments, and fixed ceilings."""
    calls = {"exp_a": 0, "exp_b": 0}
    behaviour = {"exp_a": 1.0, "exp_b": 2.0}
    prov = {"gpu": "Fake GPU", "date": "2026-01-01", "numba_cuda": "0.1", "device": {}}

    def make(name):
        def fn(progress):
            calls[name] += 1
            value = behaviour[name]
            if isinstance(value, Exception):
                raise value
            progress(f"{name} measured")
            return [{"x": 1, "gbps": value}]
        fn.__qualname__ = name
        return fn

    exps = {n: records.Experiment(n, make(n), "fake", f"experiment {n}") for n in calls}
    monkeypatch.setattr(record, "SIMULATOR", False)
    monkeypatch.setattr(records, "experiments", lambda: dict(exps))
    monkeypatch.setattr(records, "get", lambda name: exps[name])
    monkeypatch.setattr(records, "BROKEN", {})
    monkeypatch.setattr(records, "provenance", lambda: dict(prov))
    monkeypatch.setattr(bench, "ceilings",
                        lambda: {"copy_gbps": 500.0, "peak_gbps": 600.0, "matmul_tflops": None})
    monkeypatch.setenv(records.ENV_HOME, str(tmp_path / "home"))
    monkeypatch.setattr(store, "DATA_DIR", tmp_path / "package-data")
    monkeypatch.setattr(records, "DATA_DIR", store.DATA_DIR)
    (tmp_path / "package-data").mkdir()
    return {"calls": calls, "behaviour": behaviour, "prov": prov,
            "default": tmp_path / "home" / "records" / "fake-gpu.json"}


def test_record_writes_to_the_user_folder_and_prints_the_replay_line(fake_gpu, capsys):
    assert record.main([]) == 0
    out = capsys.readouterr().out
    path = fake_gpu["default"]
    assert f"GPUPERF_RECORD={path}" in out
    data = records.load(path)
    assert data["gpu"] == "Fake GPU" and set(data["experiments"]) == {"exp_a", "exp_b"}
    assert all(e["provenance"]["ceilings"]["copy_gbps"] == 500.0
               for e in data["experiments"].values())
    assert [p.name for p in path.parent.iterdir()] == ["fake-gpu.json"]  # no temporary left
    assert list(records.DATA_DIR.iterdir()) == []  # the package's records untouched


def test_merging_only_relabels_the_experiments_recorded(fake_gpu, capsys):
    assert record.main([]) == 0
    fake_gpu["prov"].update(date="2026-05-05", numba_cuda="0.2")
    fake_gpu["behaviour"]["exp_a"] = 3.0
    assert record.main(["--only", "exp_a"]) == 0
    data = records.load(fake_gpu["default"])
    a, b = data["experiments"]["exp_a"], data["experiments"]["exp_b"]
    assert a["provenance"]["date"] == "2026-05-05" and a["rows"][0]["gbps"] == 3.0
    assert b["provenance"]["date"] == "2026-01-01" and b["provenance"]["numba_cuda"] == "0.1"
    label_b = records.recorded("exp_b", fake_gpu["default"]).label
    assert "2026-01-01" in label_b and "0.1" in label_b


def test_a_failed_re_record_keeps_the_old_rows_marked(fake_gpu, capsys):
    assert record.main([]) == 0
    fake_gpu["prov"]["date"] = "2026-05-05"
    fake_gpu["behaviour"]["exp_a"] = RuntimeError("out of memory")
    assert record.main(["--only", "exp_a"]) == 1
    entry = records.load(fake_gpu["default"])["experiments"]["exp_a"]
    assert entry["rows"][0]["gbps"] == 1.0 and entry["provenance"]["date"] == "2026-01-01"
    assert "out of memory" in entry["failed"]["error"]
    with pytest.warns(RuntimeWarning, match="failed"):
        res = records.recorded("exp_a", fake_gpu["default"])
    assert "2026-01-01" in res.label


def test_record_refuses_another_gpus_file_before_measuring(fake_gpu, capsys):
    assert record.main([]) == 0
    fake_gpu["prov"]["gpu"] = "Other GPU"
    before = dict(fake_gpu["calls"])
    assert record.main(["--out", str(fake_gpu["default"])]) == 2
    assert "holds a record of Fake GPU" in capsys.readouterr().err
    assert fake_gpu["calls"] == before


def test_corrupt_or_unwritable_out_is_found_before_measuring(fake_gpu, tmp_path, capsys):
    corrupt = tmp_path / "corrupt.json"
    corrupt.write_text('{"format": 2, "exp')
    assert record.main(["--out", str(corrupt)]) == 2
    assert "not a readable record" in capsys.readouterr().err
    assert corrupt.read_text() == '{"format": 2, "exp'
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    assert record.main(["--out", str(blocker / "r.json")]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    assert record.main(["--out", str(tmp_path / "r.txt")]) == 2
    assert fake_gpu["calls"] == {"exp_a": 0, "exp_b": 0}


def test_record_writes_the_package_records_only_when_asked(fake_gpu, capsys):
    shipped = records.DATA_DIR / "fake-gpu.json"
    assert record.main(["--out", str(shipped)]) == 2
    assert "--into-package" in capsys.readouterr().err and not shipped.exists()
    assert record.main(["--into-package"]) == 0
    assert records.load(shipped)["gpu"] == "Fake GPU"


def test_record_list_and_only_still_work(fake_gpu, capsys):
    assert record.main(["--list"]) == 0
    assert "exp_a" in capsys.readouterr().out
    assert record.main(["--only", "exp_b"]) == 0
    assert set(records.load(fake_gpu["default"])["experiments"]) == {"exp_b"}
    assert record.main(["--only", "nope"]) == 2


# --------------------------------------------------------------------------- modes


def _run(code, **env):
    e = {k: val for k, val in os.environ.items()
         if k not in ("GPUPERF_MODE", "NUMBA_ENABLE_CUDASIM")}
    e.update(env, MPLBACKEND="Agg")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e,
                          timeout=300)


REPLAY = ("import gpuperf as gp\n"
          "res = gp.records.run('reduce_ladder')\n"
          "gp.plots.bars(res, label='version', y='gbps')\n"
          "print(gp.MODE, res.source)\n"
          "try:\n    gp.bench.time_kernel(lambda: None)\n"
          "except gp.bench.NeedsGPU as err:\n    print('NeedsGPU:', err)\n")

no_gpu = pytest.mark.skipif(_mode._driver_gpu_count() > 0, reason="needs a machine without a GPU")


@no_gpu
def test_compile_mode_replays_figures():
    r = _run(REPLAY, GPUPERF_MODE="compile")
    assert r.returncode == 0, r.stderr
    assert "compile recorded" in r.stdout and "NeedsGPU:" in r.stdout


@no_gpu
def test_numba_cuda_imported_first_without_a_gpu_still_replays():
    r = _run("from numba import cuda\n" + REPLAY)
    assert r.returncode == 0, r.stderr
    assert "recorded" in r.stdout and "import gpuperf before numba.cuda" in r.stderr
    assert "NeedsGPU:" in r.stdout


# --------------------------------------------------------------------------- widgets


def _explorer(monkeypatch, live=None):
    res = _result([{"version": "a", "block": 32, "gbps": 1.0},
                   {"version": "a", "block": 64, "gbps": 2.0}])
    monkeypatch.setattr(widgets, "_has_gpu", lambda: live is not None)
    box = widgets.explore(res, x="block", controls={"version": ["a", "zzz"]}, live=live)
    return box, box.children[0], box.children[-2]


def test_explorer_says_when_a_selection_has_no_recorded_rows(monkeypatch):
    box, slider, status = _explorer(monkeypatch)
    slider.value = "zzz"
    assert "no recorded rows for version=zzz" in status.value


def test_a_failed_live_measurement_shows_its_error_and_frees_the_button(monkeypatch):
    def live(**params):
        raise RuntimeError("the GPU fell over")

    box, _, status = _explorer(monkeypatch, live=live)
    button = box.children[1].children[1]
    button.click()
    assert "the GPU fell over" in status.value and not button.disabled


def test_list_controls_are_option_lists():
    seen = []
    box = widgets.interact(lambda stride, size: seen.append((stride, size)),
                           stride=[1, 2, 4], size=(1, 32, 1))
    stride, size = box.children[:2]
    assert list(stride.options) == [1, 2, 4] and type(stride).__name__ == "SelectionSlider"
    assert type(size).__name__ == "IntSlider"
    with pytest.raises(TypeError, match="controls"):
        widgets.pick(_result([{"a": 1}]), controls={"a": 1}, show=print)


def test_interact_starts_where_asked_and_rejects_a_start_it_cannot_show():
    seen = []
    box = widgets.interact(lambda stride, size: seen.append((stride, size)),
                           start={"size": 8}, stride=[1, 2, 4], size=(1, 32, 1))
    assert box.children[1].value == 8 and seen == [(1, 8)]  # drawn once, at the start
    with pytest.raises(ValueError, match="start\\['size'\\]=33"):
        widgets.interact(print, start={"size": 33}, size=(1, 32, 1))
    with pytest.raises(ValueError, match="not a control"):
        widgets.interact(print, start={"sise": 3}, size=(1, 32, 1))


# ----------------------------------------------- explorers in the static book (no kernel)


def _frames(box) -> dict:
    import json
    import re

    m = re.search(r"const frames = (\{.*?\});\n", box.data, re.S)
    return json.loads(m.group(1))


def test_static_explorer_draws_every_recorded_selection_in_advance(monkeypatch):
    monkeypatch.setenv(widgets.STATIC_ENV, "1")
    res = _result([{"version": v, "block": b, "ms": t}
                   for v, t0 in (("a", 1.0), ("b", 3.0)) for b, t in ((32, t0), (64, t0 / 2))])
    box = widgets.explore(res, x="block", y="ms", controls={"version": ["a", "b", "zzz"]})
    frames = _frames(box)
    assert set(frames) == {"0", "1", "2"}
    assert all(f[0].startswith("data:image/png;base64,") for f in (frames["0"], frames["1"]))
    assert frames["2"][0] == "" and "no recorded rows for version=zzz" in frames["2"][1]
    # time: the best point is the lowest, and the caption says so with the unit
    assert "Lowest point" in frames["1"][1] and "threads per block = 64 at 1.5" in frames["1"][1]
    assert "<input type=\"range\"" in box.data and "ipywidgets" not in box.data


def test_explorer_caption_judges_only_times_and_rates():
    from gpuperf.plots import _best_caption

    rows = [{"factor": 1, "occupancy": 1.0, "gbps": 10.0}, {"factor": 4, "occupancy": 0.5, "gbps": 30.0}]
    res = _result(rows)
    assert "Highest point here: coarsening factor = 4 at 30" in _best_caption(res, rows, "factor", "gbps")
    occ = _best_caption(res, rows, "factor", "occupancy")
    assert "point" not in occ and "Highest occupancy here: coarsening factor = 1 at 1" in occ
    # a tie at the top names every x that reaches it, not the first
    tie = [{"factor": 1, "occupancy": 1.0}, {"factor": 2, "occupancy": 1.0}, {"factor": 4, "occupancy": 0.5}]
    assert "coarsening factor = 1 and 2 at 1" in _best_caption(_result(tie), tie, "factor", "occupancy")


def test_explorer_caption_names_its_slice_and_the_sweeps_best():
    """An explorer shows one slice of a sweep: its caption calls the slice's best the best of
    that slice and names the best of all the explorer's curves (the rows it was given, which may
    be a part of the sweep) where it lies elsewhere."""
    from gpuperf.plots import _best_caption

    rows = [{"chunks": c, "factor": f, "gbps": 10.0 * c + f} for c in (1, 8) for f in (1, 4)]
    res = _result(rows)
    one = [r for r in rows if r["chunks"] == 1]
    text = _best_caption(res, one, "factor", "gbps", sel={"chunks": 1}, everything=rows)
    assert "Highest point with chunks = 1: coarsening factor = 4 at 14" in text
    assert "highest over all the curves of this explorer: chunks = 8, coarsening factor = 4 at 84" in text
    assert "point here" not in text
    top = [r for r in rows if r["chunks"] == 8]
    assert "also the highest of all the curves of this explorer" in _best_caption(
        res, top, "factor", "gbps", sel={"chunks": 8}, everything=rows)
    # a time: another slice may be another amount of work, so only the slice is named
    timed = [{**r, "ms": 1.0 * r["chunks"] + r["factor"]} for r in rows]
    text = _best_caption(_result(timed), timed[:2], "factor", "ms", sel={"chunks": 1},
                         everything=timed)
    assert "Lowest point with chunks = 1" in text and "all the curves" not in text


def test_static_interact_moves_one_slider_at_a_time_when_combinations_are_many(monkeypatch):
    monkeypatch.setenv(widgets.STATIC_ENV, "1")
    import json
    import re

    import matplotlib.pyplot as plt

    def box_html(box):
        return box.data

    def draw(a, b):
        fig, ax = plt.subplots(figsize=(2, 1))
        ax.set_title(f"{a} {b}")
        return fig

    small = _frames(widgets.interact(draw, a=[1, 2], b=[1, 2, 3]))
    assert len(small) == 6  # every combination
    big_box = widgets.interact(draw, start={"a": 7}, a=(0, 30, 1), b=(0, 30, 1))
    big = _frames(big_box)
    # each slider sampled (ends and start kept), moved alone from the start
    labels = json.loads(re.search(r"const labels = (\[.*?\]);\n", box_html(big_box))[1])
    a_values, b_values = ([int(x) for x in vals] for vals in labels)
    assert 7 in a_values and len(a_values) <= widgets._MAX_VALUES + 1 and a_values[-1] == 30
    start = (a_values.index(7), 0)
    keys = [tuple(map(int, k.split(","))) for k in big]
    assert len(keys) == len(a_values) + len(b_values) - 1 < widgets._MAX_FRAMES
    assert all(k[0] == start[0] or k[1] == start[1] for k in keys)
    assert plt.get_fignums() == []  # no figure left open to be shown again


# ----------------------------------------------- other GPUs: the static explorer's GPU control


def test_explorer_draws_apart_values_unjoined_right_of_the_curve(monkeypatch):
    """``apart``: an x value that is no point on the axis (0 blocks per SM: the grid sized to
    the data) is drawn as a lone marker at a named tick, not joined to the curve."""
    import matplotlib.pyplot as plt

    monkeypatch.setenv(widgets.STATIC_ENV, "1")
    res = _result([{"version": "a", "per_sm": b, "gbps": g}
                   for b, g in ((0, 40.0), (1, 10.0), (2, 20.0), (4, 30.0))])
    figs = []
    monkeypatch.setattr(widgets, "_png_uri", lambda fig: figs.append(fig) or "data:image/png;base64,")
    monkeypatch.setattr(plt, "close", lambda *a, **k: None)
    widgets.explore(res, x="per_sm", y="gbps", controls={"version": ["a"]},
                    apart={0: "sized to the data"})
    ax = figs[0].axes[0]
    joined = [ln for ln in ax.get_lines() if len(ln.get_xdata()) > 1 and ln.get_linestyle() != ":"
              and ln.get_linestyle() != "--"]
    assert joined and all(0 not in list(ln.get_xdata()) for ln in joined)
    lone = [ln for ln in ax.get_lines() if ln.get_marker() == "D"]
    assert len(lone) == 1 and list(lone[0].get_ydata()) == [40.0] and lone[0].get_xdata()[0] > 4
    assert "sized to the data" in [t.get_text() for t in ax.get_xticklabels()]


def test_explorer_offers_each_recorded_gpu_and_all_overlaid(monkeypatch):
    monkeypatch.setenv(widgets.STATIC_ENV, "1")
    import json
    import re

    rec = records.run("reduce_block_sweep")
    box = widgets.explore(rec, x="block", y="gbps", controls={"version": rec.values("version")},
                          ceilings=plots.copy_ceilings(rec), logx=True)
    labels = json.loads(re.search(r"const labels = (\[.*?\]);\n", box.data)[1])
    gpus = labels[0]
    assert len(gpus) == len(records.references("reduce_block_sweep")) + 1
    assert gpus[0] == plots.gpu_label(rec) and gpus[-1] == widgets.ALL_GPUS
    frames = _frames(box)
    overlay = frames[f"{len(gpus) - 1},0"][1]
    assert overlay.count("recorded on") == len(gpus) - 1  # one caption line per GPU


def _live(res):
    """``res`` as if measured now (source "live"), on its own GPU."""
    return records.Result(res.name, res.rows, res.meta, "live")


def test_live_measurements_get_the_recorded_gpus_beside_them(monkeypatch):
    import matplotlib.pyplot as plt

    monkeypatch.delenv(widgets.STATIC_ENV, raising=False)
    rec = records.run("reduce_block_sweep")
    others = records.references("reduce_block_sweep", besides=rec.gpu)
    assert others, "this test needs a second recorded GPU"
    live = _live(rec)
    assert [r.gpu for r in plots.live_references(live)] == [r.gpu for r in others]
    assert plots.live_references(rec) == []  # a replayed record is a reference already
    monkeypatch.setenv(widgets.STATIC_ENV, "1")
    assert plots.live_references(live) == []  # the built book has its GPU control instead
    monkeypatch.delenv(widgets.STATIC_ENV)

    fig = plots.lines(live, x="block", y="gbps", rows=live.select(version="v8"), logx=True)
    ax = fig.axes[0]
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels[0] == f"{plots.gpu_label(rec)} (live)"  # the shown curve is named
    for res, line in zip(others, ax.get_lines()[1:]):
        assert line.get_label() == f"{plots.gpu_label(res)} (recorded)"
        assert line.get_linestyle() == "--"
        # only the shown selection (v8), matched by the values the shown rows share
        want = sorted((r["block"], r["gbps"]) for r in res.select(version="v8"))
        assert list(zip(*line.get_data())) == want
    plt.close(fig)
    fig = plots.lines(live, x="block", y="gbps", rows=live.select(version="v8"), logx=True,
                      references=False)
    assert len(fig.axes[0].get_lines()) == 1
    plt.close(fig)
    # one line per series value, in the series' colour; one legend entry per GPU
    fig = plots.lines(live, x="block", y="gbps", series="version", logx=True)
    ax = fig.axes[0]
    n_series = len(live.values("version"))
    mine, theirs = ax.get_lines()[:n_series], ax.get_lines()[n_series:]
    assert len(theirs) == n_series * len(others)
    assert [t.get_color() for t in theirs[:n_series]] == [m.get_color() for m in mine]
    assert sum(not t.get_label().startswith("_") for t in theirs) == len(others)
    plt.close(fig)
    # a selection the references lack draws nothing and says nothing
    fig = plots.lines(live, x="block", y="gbps", rows=live.select(version="v8"), logx=True,
                      references=False)
    assert plots.reference_curves(fig.axes[0], live, x="block", y="gbps",
                                  rows=live.select(version="v8"), sel={"version": "v99"}) == []
    plt.close(fig)


def test_live_bars_mark_the_recorded_gpus(monkeypatch):
    import matplotlib.pyplot as plt

    monkeypatch.delenv(widgets.STATIC_ENV, raising=False)
    rec = records.run("reduce_ladder")
    others = records.references("reduce_ladder", besides=rec.gpu)
    live = _live(rec)
    fig = plots.bars(live, label="version", y="gbps")
    marks = [line for line in fig.axes[0].get_lines() if line.get_marker() in
             plots.REFERENCE_MARKERS]
    assert len(marks) == len(others)
    for res, mark in zip(others, marks):
        xs, ys = mark.get_data()  # horizontal bars: value on x, bar position on y
        theirs = {r["version"]: r["gbps"] for r in res.rows}
        assert [theirs[live.rows[int(i)]["version"]] for i in ys] == list(xs)
    plt.close(fig)
    fig = plots.bars(rec, label="version", y="gbps")  # a replay: no marks
    assert not [line for line in fig.axes[0].get_lines()
                if line.get_marker() in plots.REFERENCE_MARKERS]
    plt.close(fig)


def test_each_gpu_gets_its_own_ceilings():
    rec = records.run("reduce_block_sweep")
    other = records.references("reduce_block_sweep", besides=rec.gpu)[0]
    assert other.ceilings["copy_gbps"] != rec.ceilings["copy_gbps"]
    own = widgets._ceilings_function(rec, plots.copy_ceilings(rec, peak=False))
    assert own(other) == plots.copy_ceilings(other, peak=False)
    given = widgets._ceilings_function(rec, plots.copy_ceilings)  # a function of the result
    assert given(other) == plots.copy_ceilings(other)
    fixed = widgets._ceilings_function(rec, {"a line": 5.0})  # drawn for rec alone
    assert fixed(rec) == {"a line": 5.0} and fixed(other) is None
    assert widgets._ceilings_function(rec, None)(other) is None


def test_overlaid_gpus_stay_on_the_plot():
    """Another GPU's points above the shown GPU's, and every ceiling drawn, lie inside the
    y range (plots.lines fixes the range to the data it drew)."""
    import matplotlib.pyplot as plt

    rec = records.run("reduce_block_sweep")
    low = records.Result(rec.name, [{**r, "gbps": r["gbps"] / 10} for r in rec.rows], rec.meta,
                         "live")
    fig = plots.lines(low, x="block", y="gbps", rows=low.select(version="v8"), logx=True,
                      references=False)
    plots.reference_curves(fig.axes[0], low, x="block", y="gbps", rows=low.select(version="v8"),
                           references=[rec])
    assert fig.axes[0].get_ylim()[1] >= max(r["gbps"] for r in rec.select(version="v8"))
    plt.close(fig)
    by_gpu = {"slow": low, "fast": rec}
    fig, _ = widgets._draw_gpus(low, by_gpu, {"GPU": widgets.ALL_GPUS, "version": "v8"},
                                x="block", y="gbps",
                                ceilings_of=widgets._ceilings_function(low, plots.copy_ceilings),
                                logx=True, xlabel=None, ylabel=None)
    top = fig.axes[0].get_ylim()[1]
    assert top >= max(r["gbps"] for r in rec.select(version="v8"))
    assert top >= rec.ceilings["peak_gbps"]
    plt.close(fig)


def test_a_students_own_record_gets_the_reference_gpus_beside_it(tmp_path, monkeypatch):
    """GPUPERF_RECORD pointing at a GPU the course did not record: its replayed results are
    drawn beside every shipped GPU's, as a live measurement would be."""
    monkeypatch.delenv(widgets.STATIC_ENV, raising=False)
    shipped = records.available()[0]
    mine = tmp_path / "tesla-t4.json"
    data = json.loads(shipped.read_text())
    gpu = data["gpu"] if isinstance(data.get("gpu"), str) else None
    text = shipped.read_text()
    for name in {gpu, *(e["provenance"].get("gpu") for e in data["experiments"].values())}:
        if name:
            text = text.replace(json.dumps(name), json.dumps("Tesla T4"))
    mine.write_text(text)
    monkeypatch.setenv(records.ENV_RECORD, str(mine))
    res = records.run("reduce_block_sweep")
    assert res.gpu == "Tesla T4" and res.source == "recorded"
    assert sorted(r.gpu for r in plots.live_references(res)) == sorted(
        r.gpu for r in records.references("reduce_block_sweep"))


@pytest.mark.parametrize("module, figure, experiment", [
    ("dram", "plot_strides", "dram_strides"),
    ("dram", "plot_latency", "dram_latency"),
    ("dram", "plot_littles_law", "dram_littles_law"),
    ("dram", "plot_occupancy", "dram_occupancy"),
    ("streams", "plot_speedup", "streams_pipeline"),
    ("streams", "plot_host_bandwidth", "streams_host_bandwidth"),
    ("streams", "plot_explore", "streams_explore"),
])
def test_chapter_figures_draw_the_recorded_gpus_beside_a_live_run(monkeypatch, module, figure,
                                                                   experiment):
    """Each chapter's own measurement figure, given a live result, also draws every other
    recorded GPU (one labelled line per GPU); given the replayed record, it draws none."""
    import importlib

    import matplotlib.pyplot as plt

    monkeypatch.delenv(widgets.STATIC_ENV, raising=False)
    draw = getattr(importlib.import_module(f"gpuperf.kernels.{module}"), figure)
    rec = records.run(experiment)
    others = records.references(experiment, besides=rec.gpu)
    assert others, "this test needs a second recorded GPU"

    def recorded_labels(fig):
        return {line.get_label() for ax in fig.axes for line in ax.get_lines()
                if line.get_label().endswith("(recorded)")}

    want = {f"{plots.gpu_label(r)} (recorded)" for r in others}
    fig = draw(_live(rec))
    fig = fig if fig is not None else plt.gcf()
    assert recorded_labels(fig) == want
    plt.close("all")
    fig = draw(rec)
    fig = fig if fig is not None else plt.gcf()
    assert recorded_labels(fig) == set()
    plt.close("all")


def test_the_case_studys_headline_marks_each_gpu_at_the_headline_size(monkeypatch):
    """The headline bars are one size of a sweep: a recorded GPU's marks are its values at
    that size (not the last size of its sweep)."""
    import matplotlib.pyplot as plt

    from gpuperf.kernels import gdn as g

    monkeypatch.delenv(widgets.STATIC_ENV, raising=False)
    rec = records.run("gdn_algorithms")
    live = _live(rec)
    head = records.Result("gdn_algorithms", g.headline_table(live), live.meta, live.source)
    fig = g.plot_headline(head)
    marks = [ln for ln in fig.axes[0].get_lines() if ln.get_label().endswith("(recorded)")]
    others = records.references("gdn_algorithms", besides=rec.gpu)
    assert len(marks) == len(others)
    for res, mark in zip(others, marks):
        theirs = {r["method"]: r["total_ms"] for r in g.headline_table(res)}
        xs, ys = mark.get_data()
        assert list(xs) == [theirs[head.rows[int(i)]["method"]] for i in ys]
    plt.close(fig)


def test_the_roofline_and_the_heatmap_show_the_recorded_gpus_beside_a_live_run(monkeypatch):
    """Ch. 4's roofline: each recorded GPU's kernels as open markers in the colour of the live
    kernel of the same name; ch. 1's heatmap: each cell's recorded values under the live one."""
    import matplotlib.pyplot as plt

    from gpuperf.kernels import matmul as mm

    monkeypatch.delenv(widgets.STATIC_ENV, raising=False)
    roof = records.run("matmul_roofline")
    others = records.references("matmul_roofline", besides=roof.gpu)
    fig = mm.plot_roofline(_live(roof))
    ax = fig.axes[0]
    mine, theirs = ax.collections[:len(roof.rows)], ax.collections[len(roof.rows):]
    assert len(theirs) == len(roof.rows) * len(others)
    want = [(r["ai"], r["tflops"]) for res in others for r in res.rows]
    assert [tuple(c.get_offsets()[0]) for c in theirs] == want
    assert [tuple(c.get_edgecolor()[0]) for c in theirs[:len(roof.rows)]] == \
        [tuple(c.get_facecolor()[0]) for c in mine]
    assert sorted(t.get_text() for t in ax.get_legend().get_texts()) == sorted(
        f"{plots.gpu_label(r)} (recorded)" for r in others)
    plt.close(fig)
    fig = mm.plot_roofline(roof)  # a replay: no markers, no legend
    assert len(fig.axes[0].collections) == len(roof.rows) and fig.axes[0].get_legend() is None
    plt.close(fig)

    sweep = records.run("gridstride_launch_sweep")
    grid = _live(sweep).where(method="grid_stride")
    fig = plots.heatmap(grid, x="blocks_per_sm", y="block", value="gbps")
    texts = [t.get_text() for t in fig.axes[0].texts]
    others_sweep = records.references("gridstride_launch_sweep", besides=sweep.gpu)
    assert others_sweep, "this test needs a second recorded GPU"
    r = grid.rows[0]
    theirs = [res.one(method="grid_stride", blocks_per_sm=r["blocks_per_sm"], block=r["block"])
              for res in others_sweep]
    assert " / ".join(f"{t['gbps']:.0f}" for t in theirs) in texts
    assert any(t.startswith("large: ") and "(recorded)" in t for t in texts)
    plt.close(fig)
    fig = plots.heatmap(sweep.where(method="grid_stride"), x="blocks_per_sm", y="block")
    assert not any("/" in t.get_text() or "recorded" in t.get_text()
                   for t in fig.axes[0].texts)
    plt.close(fig)
