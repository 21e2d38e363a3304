"""The devices page's side-by-side headline ratios, from the shipped records and from files."""

import json

import pytest

from gpuperf import headlines, records


def test_every_headline_is_computed_for_every_shipped_gpu():
    rows = headlines.headline_rows()
    assert len(rows) == len(headlines.HEADLINES)
    gpus = [k for k in rows[0] if k not in ("chapter", "ratio", "kind")]
    assert len(gpus) == len(records.available()) >= 2
    assert sum(g.endswith("(reference)") for g in gpus) == 1
    missing = [(r["ratio"], g) for r in rows for g in gpus if r[g] is None]
    assert not missing, missing


def test_a_ratio_is_the_two_recorded_numbers_divided():
    path = records.available()[0]
    ladder = records.recorded("reduce_ladder", path=path)
    want = ladder.one(version="v0")["ms"] / ladder.one(version="v8")["ms"]
    row = next(r for r in headlines.headline_rows([path]) if r["ratio"].startswith("v8 / v0"))
    (value,) = [v for k, v in row.items() if k not in ("chapter", "ratio", "kind")]
    assert value == pytest.approx(want)


def test_a_record_without_the_experiment_gives_no_number_not_a_guess(tmp_path):
    src = json.loads(records.available()[0].read_text())
    src["experiments"] = {"reduce_ladder": src["experiments"]["reduce_ladder"]}
    path = tmp_path / "partial.json"
    path.write_text(json.dumps(src))
    rows = headlines.headline_rows([path])
    values = {r["ratio"]: [v for k, v in r.items() if k not in ("chapter", "ratio", "kind")][0]
              for r in rows}
    assert values["v8 / v0, reduce speed"] is not None
    assert values["best transpose / naive transpose, GB/s"] is None


def test_the_matmul_headline_is_the_best_kernel_over_the_same_runs_cublas(tmp_path):
    path = records.available()[0]
    ladder = records.recorded("matmul_ladder", path=path)
    cublas = ladder.one(version="cuBLAS (CuPy @)")["tflops"]
    best = max(r["tflops"] for r in ladder.rows if not r["version"].startswith("cuBLAS"))
    row = next(r for r in headlines.headline_rows([path]) if "cuBLAS" in r["ratio"])
    (value,) = [v for k, v in row.items() if k not in ("chapter", "ratio", "kind")]
    assert value == pytest.approx(best / cublas) and value < 1
    # a ladder without its cuBLAS row gives no number (not a share of the record's ceiling)
    src = json.loads(path.read_text())
    exp = src["experiments"]["matmul_ladder"]
    exp["rows"] = [r for r in exp["rows"] if not r["version"].startswith("cuBLAS")]
    src["experiments"] = {"matmul_ladder": exp}
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(src))
    row = next(r for r in headlines.headline_rows([bare]) if "cuBLAS" in r["ratio"])
    assert [v for k, v in row.items() if k not in ("chapter", "ratio", "kind")] == [None]


def test_a_best_version_ratio_is_compared_over_the_versions_every_record_holds(tmp_path):
    """A kernel only one record holds would make a cross-GPU difference one of code: the
    ratio leaves it out, and the row says so, with the ratio it would give."""
    path = records.available()[0]
    src = json.loads(path.read_text())
    exp = src["experiments"]["matmul_ladder"]
    src["experiments"] = {"matmul_ladder": exp}
    whole = tmp_path / "whole.json"
    whole.write_text(json.dumps(src))
    ladder = records.recorded("matmul_ladder", path=path)
    cublas = next(r["tflops"] for r in ladder.rows if r["version"].startswith("cuBLAS"))
    kernels = sorted((r for r in ladder.rows if not r["version"].startswith("cuBLAS")),
                     key=lambda r: r["tflops"])
    exp = json.loads(json.dumps(exp))
    exp["rows"] = [r for r in exp["rows"] if r["version"] != kernels[-1]["version"]]
    exp.setdefault("provenance", {})["gpu"] = "another GPU"
    src["experiments"] = {"matmul_ladder": exp}
    less = tmp_path / "less.json"
    less.write_text(json.dumps(src))
    row = next(r for r in headlines.headline_rows([whole, less]) if "cuBLAS" in r["ratio"])
    values = [v for k, v in row.items() if k not in ("chapter", "ratio", "kind")]
    assert values == [pytest.approx(kernels[-2]["tflops"] / cublas)] * 2
    # by count, not by the record's label for the version
    assert kernels[-1]["version"] not in row["ratio"]
    assert "without 1 version that no other record holds" in row["ratio"]


def test_the_gdn_headline_names_the_size_it_is_measured_at():
    """Algorithm 2 over algorithm 3 depends strongly on the size: the row names the one its
    function reads (the chapter's headline size), which is not the GDN article's."""
    from gpuperf.kernels import gdn

    (label,) = [r[1] for r in headlines.HEADLINES if r[0] == "8"]
    size = (f"{gdn.HEADLINE['n_ch']} channels, {gdn.HEADLINE['side']} x "
            f"{gdn.HEADLINE['side']} images, batch of {gdn.BATCH}")
    assert label.endswith(size), label
