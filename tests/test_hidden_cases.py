"""Grading mode: checkers add cases the student never saw, and checks carry points."""

import json

import numpy as np
import pytest
from numba import cuda

from gpuperf import exercises as ex
from gpuperf.kernels import gridstride as gs


@pytest.fixture
def grading(tmp_path, monkeypatch):
    """The state ``python -m gpuperf.grade`` sets while a course checker cell runs."""
    log = tmp_path / "verdicts.jsonl"
    monkeypatch.setattr(ex, "GRADE_LOG", str(log))
    monkeypatch.setattr(ex, "GRADING_CELL", "check")
    monkeypatch.setattr(ex, "_hidden_seed", None)
    return log


def test_outside_grading_the_student_sees_every_case():
    assert not ex.grading()
    assert ex.seeds() == (0, 1)
    assert ex.hidden_sizes(1, 10**6) == []
    assert ex.sizes_around(64) == ex.sizes_around(64)
    a, b = ex.case_rng(7).random(3), np.random.default_rng(7).random(3)
    assert (a == b).all()  # the visible random cases are what the student's run draws


def test_grading_adds_a_seed_and_sizes_never_seen(grading):
    seeds = ex.seeds()
    assert seeds[:2] == (0, 1) and len(seeds) == 3 and seeds[2] not in (0, 1)
    assert ex.seeds() == seeds  # one hidden seed per checker run
    sizes = ex.hidden_sizes(2, 5000, count=4)
    assert len(sizes) == 4 and all(2 <= n <= 5000 for n in sizes)
    log, ex.GRADE_LOG = ex.GRADE_LOG, None
    visible = set(ex.sizes_around(64))
    ex.GRADE_LOG = log
    assert set(ex.sizes_around(64)) > visible  # sizes the student's run never used
    assert not (ex.case_rng(7).random(3) == np.random.default_rng(7).random(3)).all()


@cuda.jit
def saxpy_fitted(a, x, y, out):
    """Right for the sizes the student's checker run shows, wrong for any other."""
    n = x.shape[0]
    if n != 1 and n != 31 and n != 32 and n != 33 and n != 100 and n != 257 and n != 1000:
        return
    i = cuda.grid(1)
    while i < n:
        out[i] = a * x[i] + y[i]
        i += cuda.gridsize(1)


def test_a_kernel_fitted_to_the_visible_sizes_fails_while_grading(grading, monkeypatch):
    monkeypatch.setattr(ex, "GRADE_LOG", None)
    assert gs.check_saxpy(saxpy_fitted), "the visible cases should pass"
    monkeypatch.setattr(ex, "GRADE_LOG", str(grading))
    report = gs.check_saxpy(saxpy_fitted)
    assert not report
    assert any("hidden case" in name for name, _ in report.failed)
    # it fails only where it was never shown: a hidden seed, or a hidden size on a visible seed
    assert all("hidden case" in name for name, _ in report.failed), report.failed
    assert any("seed" not in name for name, _ in report.failed)
    entry = json.loads(grading.read_text().splitlines()[-1])
    assert entry["hidden_seed"] == ex._hidden_seed and entry["on"]
    assert "hidden case" in entry["report"]


def test_checks_carry_points_and_the_report_totals_them():
    chk = ex.Checker("weighted")
    with chk.case("easy"):
        pass
    with chk.case("hard", points=3):
        chk.fail("wrong")
    with chk.case("medium", points=2):
        pass
    report = chk.report(show=False)
    assert (report.points, report.possible) == (3.0, 6.0)
    assert "3 of 6 points" in report.text()
    plain = ex.Checker("unweighted")
    with plain.case("a"):
        pass
    assert plain.report(show=False).possible == 1.0
    assert "points" not in plain.report(show=False).text()


def test_the_courses_own_code_is_no_answer(capsys):
    """Handing a checker the package's kernel (``my_saxpy = gs.saxpy_grid_stride``) or
    factory fails with a line that says so, whatever the checker."""
    from gpuperf.kernels import matmul as mm

    assert not gs.check_saxpy(gs.saxpy_grid_stride)
    assert "course's own code" in capsys.readouterr().out
    own_factory = next(getattr(mm, n) for n in dir(mm) if n.startswith("make_tiled"))
    report = mm.check_tiled(own_factory)
    assert not report and "course's own code" in report.failed[0][1]


def test_formula_exercises_hold_a_case_that_separates_every_rule():
    """Issue 63: a formula right only at the visible examples fails. Occupancy by hand: for
    every rule, a configuration where skipping it changes the answer, and the reserved KiB
    tried on a 7.5 (none), an 8.0 (one, which a rule 'from 9.0' misses) and Hopper. The
    layout model: a struct that does not start on a sector, for every aligned-struct form."""
    from gpuperf.kernels.coalescing import checks as co_checks
    from gpuperf.kernels.coalescing.models import _layout_read_bytes
    from gpuperf.kernels.dram import checks as dr_checks

    cases = dr_checks._separating_occupancy_cases()
    names = {f["name"] for *_, f, _ in cases}
    assert {"NVIDIA T4 (specification)", "NVIDIA A100 (specification)"} <= names
    assert any("H200" in n or "H100" in n for n in names)
    rules = len(dr_checks._occupancy_variants(32, 16, 0, dr_checks.T4_SPEC_FACTS))
    for k in range(rules):  # every rule is on the edge somewhere
        assert any(dr_checks._occupancy_variants(t, r, sh, f)[k][0] != want
                   for t, r, sh, f, want in cases), k
    for cc in ((7, 5), (8, 0)):  # the reserved KiB on each side of 8.0
        assert any(tuple(f["compute_capability"]) == cc and sh for _, _, sh, f, _ in cases)
    layout = co_checks._separating_layout_cases()
    for form in co_checks._LAYOUT_ALIGNED_FORMS:
        assert any(form(*c) != _layout_read_bytes(*c) for c in layout)
    assert any((F * E) % 32 and 32 % (F * E) for _, F, _, E in layout)


@cuda.jit
def registers_fitted(delta, w, d, raw):
    """GDN algorithm 4 right for the channel counts the student's run shows (up to 8),
    wrong for more: the loop over j stops at 8."""
    n_ch, n_s = w.shape
    s = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    k = cuda.blockIdx.y
    if s < n_s:
        dk = d[k, s]
        common = -0.5 * delta[k, s] * w[k, s] * dk * dk * dk
        for j in range(min(n_ch, 8)):
            raw[k * n_ch + j, s] = common * w[j, s] * w[j, s]


def test_a_kernel_fitted_to_the_visible_channel_counts_fails_while_grading(grading, monkeypatch):
    """Issue hostile23/4: the loop over channels meets, while grading, more channels than
    any case the student's run used; a kernel fitted to them fails a hidden case."""
    from gpuperf.kernels import gdn

    monkeypatch.setattr(ex, "GRADE_LOG", None)
    assert gdn.check_registers(registers_fitted), "the visible cases should pass"
    monkeypatch.setattr(ex, "GRADE_LOG", str(grading))
    report = gdn.check_registers(registers_fitted)
    assert not report
    assert report.failed and all("hidden case" in name for name, _ in report.failed), \
        report.failed


def _make_tiled_fitted(tile):
    """A tiled matrix product right while K needs at most 4 tiles (every visible K, with
    16 x 16 tiles), wrong for a longer K: its loop over the phases stops at 4."""
    from numba import float32

    shape = (tile, tile)

    @cuda.jit
    def k(A, B, C):
        sA = cuda.shared.array(shape, float32)
        sB = cuda.shared.array(shape, float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row = cuda.blockIdx.y * tile + ty
        col = cuda.blockIdx.x * tile + tx
        M, K = A.shape
        N = B.shape[1]
        acc = float32(0.0)
        for t in range(min((K + tile - 1) // tile, 4)):
            kk = t * tile
            sA[ty, tx] = A[row, kk + tx] if row < M and kk + tx < K else float32(0.0)
            sB[ty, tx] = B[kk + ty, col] if col < N and kk + ty < K else float32(0.0)
            cuda.syncthreads()
            for n in range(tile):
                acc += sA[ty, n] * sB[n, tx]
            cuda.syncthreads()
        if row < M and col < N:
            C[row, col] = acc

    return k


def test_a_tiled_kernel_fitted_to_the_visible_k_fails_while_grading(grading, monkeypatch):
    """The phase loop over K meets, while grading, a K longer than any the student's run
    used (the loop-over-a-size gap of hostile23 item 4, in the matrix product)."""
    from gpuperf.kernels import matmul as mm

    monkeypatch.setattr(ex, "GRADE_LOG", None)
    assert mm.check_tiled(_make_tiled_fitted), "the visible cases should pass"
    monkeypatch.setattr(ex, "GRADE_LOG", str(grading))
    monkeypatch.setattr(ex, "_hidden_seed", 4242)  # its shape of sizes 1..70 has K <= 64
    report = mm.check_tiled(_make_tiled_fitted)
    assert not report
    assert report.failed and all("hidden case" in name for name, _ in report.failed), \
        report.failed
