"""Figures a caller did not label read in words: titles from the experiment's title (never its
internal name), axes and legends from the columns' words."""

import matplotlib

matplotlib.use("Agg")

import gpuperf as gp  # noqa: E402
from gpuperf import plots, widgets  # noqa: E402


def test_words_of_a_column():
    assert plots.words("blocks_per_sm") == "blocks per SM"
    assert plots.words("gbps") == "bandwidth (GB/s)"
    assert plots.words("some_new_column") == "some new column"


def test_an_unlabelled_line_figure_reads_in_words():
    res = gp.records.run("reduce_block_sweep", live=False)
    series = "version" if "version" in res.rows[0] else None
    x = next(c for c in ("block", "threads") if c in res.rows[0])
    fig = plots.lines(res, x=x, series=series, references=False)
    ax = fig.axes[0]
    assert res.name not in ax.get_title()
    assert gp.records.get(res.name).title[:20] in ax.get_title()
    assert ax.get_xlabel() == plots.words(x) and "_" not in ax.get_xlabel()
    labels = [t.get_text() for t in ax.get_legend().get_texts()] if ax.get_legend() else []
    assert labels and not any(f"{series}=" in t for t in labels)


def test_a_numeric_series_is_labelled_with_its_words():
    assert plots._series_label("block", 256) == "threads per block = 256"
    assert plots._series_label("version", "v6") == "v6"


def test_an_ad_hoc_result_gets_its_name_in_words():
    res = gp.records.Result("my_own_sweep", [{"n": 1, "gbps": 2.0}], {"gpu": "a GPU"}, "recorded")
    assert plots.default_title(res).startswith("my own sweep")


def test_an_explorer_title_names_the_picked_values_in_words():
    res = gp.records.run("reduce_block_sweep", live=False)
    title = widgets._explorer_title(res, {"blocks_per_sm": 4})
    assert res.name not in title and "blocks per SM = 4" in title


def test_an_explorer_says_its_controls_with_the_words_it_is_given(monkeypatch):
    # matmul_coarsen_sweep's n is the side of an n x n x n product, not a count of elements
    monkeypatch.setenv("GPUPERF_STATIC_BOOK", "1")
    res = gp.records.run("matmul_coarsen_sweep", live=False)
    page = widgets.explore(res, x="factor", y="tflops", names={"n": "size n"},
                           controls={"tile": res.values("tile")[:1], "n": res.values("n")[:1]}).data
    assert "size n = " in page and "elements =" not in page and ">size n</span>" in page


def test_a_small_share_is_not_labelled_zero():
    assert plots._percent(0.19) == "0.2%" and plots._percent(0.03) == "0.03%"
    assert plots._percent(57.4) == "57%" and plots._percent(0) == "0%"


def test_ceiling_labels_can_sit_below_the_line_at_the_right():
    res = gp.records.run("reduce_grid_sweep", live=False)
    for where, ha in (("left", "left"), ("right", "right")):
        fig = plots.lines(res, x="blocks", series="version", references=False,
                          ceilings=plots.copy_ceilings(res), ceiling_labels=where)
        texts = [t for t in fig.axes[0].texts if t.get_text().startswith("device-to-device")]
        assert len(texts) == 1 and texts[0].get_ha() == ha
        assert texts[0].xy[0] > 0.9 if where == "right" else texts[0].xy[0] < 0.1
