import copy
import json
import re

import nbformat
import pytest
from conftest import ROOT

import gpuperf as gp
from gpuperf import records, store


@pytest.fixture
def tmp_record(tmp_path, monkeypatch):
    path = tmp_path / "my-gpu.json"
    data = {"format": 1,  # the old layout (one file-level provenance), migrated on load
            "provenance": {"gpu": "My GPU", "date": "2026-01-02", "numba_cuda": "0.30.4",
                           "ceilings": {"copy_gbps": 1000.0, "peak_gbps": 1200.0}},
            "experiments": {"gridstride_ceilings": {
                "meta": {"date": "2026-01-02", "ceilings": {"copy_gbps": 1000.0}},
                "rows": [{"ceiling": "copy", "value": 1000.0}, {"ceiling": "peak", "value": 1200.0}]}}}
    records.save(data, path)
    monkeypatch.setenv(records.ENV_RECORD, str(path))
    return path


def test_save_load_replay_roundtrip(tmp_record):
    res = records.run("gridstride_ceilings")
    assert res.source == "recorded" and res.gpu == "My GPU"
    assert res.label == "recorded on My GPU, 2026-01-02, numba-cuda 0.30.4, code not fingerprinted"
    assert res.column("value") == [1000.0, 1200.0]
    assert res.one(ceiling="peak")["value"] == 1200.0
    assert res.where(ceiling="copy").rows == [{"ceiling": "copy", "value": 1000.0}]
    assert "My GPU" in res._repr_html_() and "1,000" in res.table()
    assert res.ceilings["copy_gbps"] == 1000.0


def test_missing_experiment_in_record_says_how_to_record(tmp_record):
    with pytest.raises(records.NotRecorded, match="--only gridstride_timing"):
        records.run("gridstride_timing")


def test_unknown_experiment_is_a_value_error():
    with pytest.raises(ValueError, match="no experiment called"):
        records.run("gridstride_nonsense")


def test_live_run_in_the_simulator_needs_a_gpu():
    with pytest.raises(gp.bench.NeedsGPU):
        records.run("gridstride_ceilings", live=True)


def test_bad_record_env_is_explained(monkeypatch):
    monkeypatch.setenv(records.ENV_RECORD, "no-such-gpu")
    with pytest.raises(FileNotFoundError, match="available"):
        records.record_path()


def test_experiment_names_are_checked():
    with pytest.raises(ValueError, match="snake_case"):
        records.experiment("Bad Name", chapter="x", title="x")


def test_slug():
    assert records.slug("NVIDIA H100 80GB HBM3") == "nvidia-h100-80gb-hbm3"
    assert records.slug("NVIDIA H200") == "nvidia-h200"


def test_every_chapter_module_imports():
    records.experiments()
    assert not records.BROKEN, records.BROKEN


def _shipped_experiments() -> dict:
    """Every experiment in a shipped record: the reference's, then those only another has."""
    found = {}
    for path in [records.DATA_DIR / f"{records.REFERENCE}.json", *records.available()]:
        for name, entry in records.load(path)["experiments"].items():
            found.setdefault(name, entry)
    return found


def test_shipped_record_has_every_experiment():
    shipped = records.load(records.DATA_DIR / f"{records.REFERENCE}.json")
    assert shipped["gpu"].startswith("NVIDIA H")  # an H100 or H200
    every = _shipped_experiments()
    missing = sorted(set(records.experiments()) - set(every))
    assert not missing, f"in no shipped record (run python -m gpuperf.record --only ...): {missing}"
    for name, entry in every.items():
        assert entry["rows"], name
    for path in records.available():
        data = records.load(path)
        assert data["gpu"].startswith("NVIDIA H"), path.name


def test_an_experiment_missing_from_the_reference_replays_from_another_record(monkeypatch, tmp_path):
    # Records of its own (the shipped ones may all hold every experiment): a reference without
    # one experiment, and another GPU's record, with rows of its own, that has it.
    monkeypatch.delenv(records.ENV_RECORD, raising=False)
    shipped = records.load(records.DATA_DIR / f"{records.REFERENCE}.json")
    name = sorted(shipped["experiments"])[0]
    reference = copy.deepcopy(shipped)
    del reference["experiments"][name]
    other = copy.deepcopy(shipped)
    other["gpu"] = "NVIDIA H100 (test record)"
    entry = other["experiments"][name]
    entry["provenance"]["gpu"] = other["gpu"]
    entry["rows"] = entry["rows"][::-1][:2]
    (tmp_path / f"{records.REFERENCE}.json").write_text(json.dumps(reference))
    (tmp_path / "nvidia-h100-test-record.json").write_text(json.dumps(other))
    monkeypatch.setattr(store, "DATA_DIR", tmp_path)
    res = records.recorded(name)
    assert res.gpu == "NVIDIA H100 (test record)"
    assert res.rows == entry["rows"]
    # Named explicitly, the reference has no such experiment: that is said, not replaced.
    with pytest.raises(records.NotRecorded, match=name):
        records.recorded(name, path=tmp_path / f"{records.REFERENCE}.json")


def _experiment_names_in_notebooks():
    names = set()
    for p in sorted((ROOT / "solutions").glob("*.ipynb")):
        nb = nbformat.read(p, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code":
                names |= {(p.name, m) for m in re.findall(r"records\.run\(\s*[\"']([a-z0-9_]+)", cell.source)}
    return names


def test_notebooks_only_use_recorded_experiments():
    shipped = _shipped_experiments()
    used = _experiment_names_in_notebooks()
    assert used, "expected the notebooks to replay experiments"
    missing = sorted(f"{nb}: {name}" for nb, name in used if name not in shipped)
    assert not missing, missing


def test_record_cli_refuses_without_gpu_and_lists(capsys):
    from gpuperf import record

    assert record.main(["--list"]) == 0
    assert "gridstride_launch_sweep" in capsys.readouterr().out
    assert record.main(["--only", "nonsense_"]) == 2
    assert "no experiment" in capsys.readouterr().err
    assert record.main(["--only", "gridstride_"]) == 2
    assert "needs a GPU" in capsys.readouterr().err


def test_records_are_plain_json():
    for path in records.available():
        json.loads(path.read_text())


def test_gpuperf_live_switches_measuring_off_on_a_gpu(monkeypatch):
    import gpuperf

    monkeypatch.setattr(gpuperf.mode, "MODE", "gpu")
    monkeypatch.delenv(records.ENV_LIVE, raising=False)
    assert records.live_by_default() is True
    for off in ("0", "false", " OFF "):
        monkeypatch.setenv(records.ENV_LIVE, off)
        assert records.live_by_default() is False
        res = records.run("reduce_ladder")  # replayed, although the mode says GPU
        assert res.source == "recorded"
    monkeypatch.setenv(records.ENV_LIVE, "1")
    assert records.live_by_default() is True
    monkeypatch.setattr(gpuperf.mode, "MODE", "sim")
    assert records.live_by_default() is False  # no GPU: never live
    monkeypatch.setenv(records.ENV_LIVE, "sometimes")
    with pytest.raises(ValueError, match="GPUPERF_LIVE='sometimes'"):
        records.live_by_default()


def test_a_replay_says_whether_todays_code_is_what_was_measured():
    """Each measurement carries a fingerprint of the code it ran; a replay compares it with
    today's and says so in its label (and another GPU's record is shown beside the reference
    only where the code is the same)."""
    now = records.code_fingerprint("reduce_ladder")
    assert now == records.code_fingerprint("reduce_ladder") != records.code_fingerprint(
        "gridstride_ceilings")
    rows = [{"x": 1}]
    same = records.Result("reduce_ladder", rows, {"gpu": "G", "code": now}, "recorded")
    other = records.Result("reduce_ladder", rows, {"gpu": "G", "code": "0" * 12}, "recorded")
    unknown = records.Result("reduce_ladder", rows, {"gpu": "G"}, "recorded")
    live = records.Result("reduce_ladder", rows, {"gpu": "G"}, "live")
    assert [r.code_status for r in (same, other, unknown, live)] == [
        "same", "other", "unknown", "same"]
    assert "earlier code" in other.label and "not fingerprinted" in unknown.label
    assert "code" not in same.label and "code" not in live.label


def test_a_summary_of_a_replay_keeps_its_code_status():
    """A table derived from a replay under another name ("x (summary)", the replay's meta) is
    judged by the experiment it came from, not called "earlier code" for its name (the built
    streams and GDN pages once labelled such tables so while their experiments were current)."""
    res = records.recorded("reduce_ladder")
    summary = records.Result("reduce_ladder (summary)", res.rows[:1], res.meta, res.source)
    assert summary.code_status == res.code_status
    assert ("earlier code" in summary.label) == ("earlier code" in res.label)
    stale = records.Result("reduce_ladder (summary)", res.rows[:1],
                           {**res.meta, "code": "0" * 12}, res.source)
    assert stale.code_status == "other"


def test_a_header_says_its_unit_once():
    """A header whose words already carry the unit gets no second one ("GPU busy (ms)", "ms per
    call"); other headers get the unit under them."""
    from gpuperf.records import _header

    assert _header("GPU busy (ms)", "ms") == "GPU busy (ms)"
    assert _header("ms per call", "ms") == "ms per call"
    assert "(ms)" in _header("time", "ms") and "(GB/s)" in _header("bandwidth", "GB/s")
    assert "(ms)" in _header("msec", "ms")  # a unit inside another word is no unit


def test_a_share_column_shows_its_percent_where_the_record_declares_no_unit():
    """pct_copy and pct_peak under the shared words carry "(% of copy)" / "(% of peak)" even in
    a record that declares no unit for them (1.02 is 1.02%, not 102%); a caller's own header
    words are left as they are."""
    from gpuperf.records import Result

    res = Result("not_an_experiment", [{"pct_copy": 1.5, "pct_peak": 1.02}], {}, "live")
    html = res._repr_html_()
    assert "(% of copy)" in html and "(% of peak)" in html
    own = res._repr_html_(headers={"pct_copy": "% of the copy ceiling"})
    assert "(% of copy)" not in own and "(% of peak)" in own


def test_a_result_made_without_a_gpu_says_it_is_the_emulators():
    """A live Result whose meta names no GPU (an emulator trace) is not labelled as measured
    on an unknown GPU."""
    from gpuperf.records import Result

    label = Result("trace", [{"a": 1}], {}, "live").label
    assert "emulator" in label and "unknown GPU" not in label and "measured" not in label.split(",")[0][:9]
    assert Result("x", [{"a": 1}], {"gpu": "NVIDIA H200"}, "live").label.startswith("measured live on NVIDIA H200")
