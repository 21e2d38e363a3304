"""``gpuperf.book.glue`` writes what myst-nb's glue writes, formatted here; bad input is named."""

import pytest

from gpuperf import book


def test_glue_returns_the_formatted_text_and_displays_the_record(monkeypatch):
    shown = []
    import IPython.display

    monkeypatch.setattr(IPython.display, "display",
                        lambda obj, raw=False, metadata=None: shown.append((obj, metadata)))
    assert book.glue("copy_pct", 93.44, "{:.1f}%") == "93.4%"
    (bundle, meta), = shown
    assert bundle == {"application/papermill.record/text/plain": "'93.4%'"}
    assert meta["scrapbook"] == {"name": "copy_pct",
                                 "mime_prefix": "application/papermill.record/"}


@pytest.mark.parametrize("name,value,fmt,err", [
    ("copy pct", 1, "{}", ValueError), ("", 1, "{}", ValueError), (3, 1, "{}", TypeError),
    ("x", "text", "{:.1f}", ValueError), ("x", 1, "{0} {1}", ValueError)])
def test_glue_names_bad_input(name, value, fmt, err):
    with pytest.raises(err) as info:
        book.glue(name, value, fmt)
    assert ("name" in str(info.value)) or ("fmt" in str(info.value))


def test_result_headers_are_words_and_the_rest_is_folded(monkeypatch):
    from gpuperf import records

    res = records.Result("coalescing_stride", [{"stride": 1, "load_sectors": 4, "gbps": 9.0}],
                         {"gpu": "NVIDIA H200"}, "recorded")
    html = res._repr_html_(["stride", "gbps"], headers={"gbps": "useful bandwidth"})
    assert "<th>useful bandwidth" in html and "<th>stride" in html and "load" not in html
    assert "load sectors" in res._repr_html_()  # underscores read as spaces
    with pytest.raises(ValueError, match="headers names column 'x'"):
        res._repr_html_(["stride"], headers={"x": "words"})
    shown = []
    monkeypatch.setattr(records, "_in_a_notebook", lambda: True)
    import IPython.display

    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj.data))
    res.show(["stride"])
    assert "<details class='gp-full'>" in shown[0] and "All 3 columns" in shown[0]
    res.show(["stride"], fold_rest=False)
    assert "<details" not in shown[1]
    assert "All 3 columns of this record</summary>" in shown[0]   # no internal name
    # the folded table shows the chosen columns under the same words as the table above it
    res.show(["stride", "gbps"], headers={"gbps": "useful bandwidth"})
    folded = shown[2].split("<details", 1)[1]
    assert "<th>useful bandwidth" in folded and "load sectors" in folded
    # headers may name a column only the folded table shows; without a folded table, not
    res.show(["stride"], headers={"load_sectors": "sectors per load"})
    above, folded = shown[3].split("<details", 1)
    assert "sectors per load" in folded and "sectors per load" not in above
    with pytest.raises(ValueError, match="headers names column 'load_sectors'"):
        res.show(["stride"], headers={"load_sectors": "sectors per load"}, fold_rest=False)


def test_a_derived_table_does_not_call_itself_the_record(monkeypatch):
    """A table computed from a record (its own name, the record's meta) is folded as "this
    table", named where its name is words; only an experiment's own rows are "this record".
    No internal (snake_case) name reaches the title."""
    from gpuperf import records

    meta = {"gpu": "NVIDIA H200", "experiment": "gridstride_flush"}
    rows = [{"kernel": "copy", "write_us": 1.0, "read_us": 1.0}]
    monkeypatch.setattr(records, "_in_a_notebook", lambda: True)
    shown = []
    import IPython.display

    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj.data))
    records.Result("writing against read-only flush", rows, meta, "recorded").show(["kernel"])
    records.Result("gridstride_flush", rows, meta, "recorded").show(["kernel"])  # its own name
    records.Result("your model against gridstride_flush", rows, meta, "recorded").show(["kernel"])
    records.Result("corner turning, traced", rows, {}, "live").show(["kernel"])
    assert "All 3 columns of this table (writing against read-only flush)</summary>" in shown[0]
    assert "All 3 columns of this record</summary>" in shown[1]
    assert "All 3 columns of this table</summary>" in shown[2]
    assert "All 3 columns of this table (corner turning, traced)" in shown[3]
    assert "this record" not in shown[0] + shown[2] + shown[3]
    assert "gridstride_flush" not in "".join(s.split("<summary>")[1].split("</summary>")[0]
                                             for s in shown)


def test_glued_text_reaches_the_page_as_written(monkeypatch):
    """myst-nb reads the stored text with ast.literal_eval: "65,536" must stay "65,536"."""
    from myst_nb.core.variables import format_plain_text

    shown = []
    import IPython.display

    monkeypatch.setattr(IPython.display, "display",
                        lambda obj, raw=False, metadata=None: shown.append(obj))
    for value, fmt in ((65536, "{:,}"), (1000, "{:,}"), (17.2, "{:.1f} GB"), ("it's", "{}")):
        text = book.glue("n", value, fmt)
        stored = shown[-1]["application/papermill.record/text/plain"]
        assert format_plain_text(stored, "") == text
