"""Privatization: the histogram kernels, the wrapper's checks, the checker and its wrong answers."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import load_wrong
from numba import cuda

import gpuperf  # noqa: F401  (first: it picks the GPU or the simulator before numba.cuda loads)
from gpuperf import records
from gpuperf.kernels import privatization as pv

# The histogram's known-wrong answers live beside the case study's, in tests/wrong/gdn/.
WRONG = [(name, mod) for name, mod in load_wrong("gdn") if name.startswith("histogram_")]


@pytest.mark.parametrize("version", pv.VERSIONS)
@pytest.mark.parametrize("distribution", pv.DISTRIBUTIONS)
@pytest.mark.parametrize("n,block,blocks_per_sm", [(1, 32, 1), (257, 64, 1), (3001, 64, 2)])
def test_histogram_counts_every_byte_once(version, distribution, n, block, blocks_per_sm):
    data = pv.random_bytes(n, distribution, seed=n)
    hist = pv.histogram(data, version, block=block, blocks_per_sm=blocks_per_sm)
    np.testing.assert_array_equal(hist, pv.reference(data))
    assert hist.dtype == np.int32 and hist.sum() == n


def test_skewed_data_is_skewed():
    data = pv.random_bytes(10_000, "skewed", seed=1)
    assert pv.reference(data).max() > 0.85 * data.size
    assert pv.reference(pv.random_bytes(10_000, "uniform", seed=1)).max() < 0.01 * 10_000


def test_bad_inputs_are_refused_with_the_fix():
    data = pv.random_bytes(100, seed=0)
    with pytest.raises(TypeError, match="astype"):
        pv.histogram(data.astype(np.int32))
    with pytest.raises(ValueError, match="dimension"):
        pv.histogram(data.reshape(10, 10))
    with pytest.raises(ValueError, match="not one of"):
        pv.histogram(data, "shared")
    with pytest.raises(ValueError, match="multiple of 32"):
        pv.histogram(data, block=100)
    with pytest.raises(ValueError, match="not one of"):
        pv.random_bytes(10, "zipf")


def test_experiment_registered_and_ptx_listed():
    assert records.experiments()["privatization_histogram"].chapter == "checklist"
    assert len(pv.PTX_TARGETS) >= 2


@cuda.jit
def _skips_empty_bins(data, hist):
    """Correct, and unlike the chapter's solution: merges only the bins that got counts."""
    private = cuda.shared.array(256, np.int32)
    t = cuda.threadIdx.x
    for b in range(t, 256, cuda.blockDim.x):
        private[b] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    while i < data.size:
        cuda.atomic.add(private, data[i], 1)
        i += cuda.gridsize(1)
    cuda.syncthreads()
    for b in range(t, 256, cuda.blockDim.x):
        if private[b] != 0:
            cuda.atomic.add(hist, b, private[b])


def test_checker_accepts_a_correct_variant():
    assert pv.check_private_histogram(_skips_empty_bins)


@pytest.mark.parametrize("name,mod", WRONG, ids=[name for name, _ in WRONG])
def test_checker_rejects_known_wrong_solution(name, mod, capsys):
    assert mod.CHECKER == "check_private_histogram"
    assert not pv.check_private_histogram(mod.kernel), f"{name} passed"
    assert "Traceback" not in capsys.readouterr().out


def test_wrong_folder_has_histograms():
    assert len(WRONG) >= 4


ROOFLINE_WRONG = [(name, mod) for name, mod in load_wrong("gdn") if name.startswith("roofline_")]


@pytest.mark.parametrize("name,mod", ROOFLINE_WRONG, ids=[name for name, _ in ROOFLINE_WRONG])
def test_roofline_checker_rejects_known_wrong_answer(name, mod, capsys):
    assert mod.CHECKER == "check_attainable"
    assert not pv.check_attainable(mod.kernel), f"{name} passed"
    assert "Traceback" not in capsys.readouterr().out


def test_roofline_checker_accepts_the_roofline():
    assert len(ROOFLINE_WRONG) >= 3
    assert pv.check_attainable(lambda i, p, b: (min(p, i * b / 1e3),
                                                "memory" if i * b / 1e3 < p else "compute"))
