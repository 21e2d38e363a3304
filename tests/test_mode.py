"""Mode selection happens at import, so each case runs in a fresh interpreter."""

import os
import subprocess
import sys


def run(code, **env):
    e = {k: v for k, v in os.environ.items() if k not in ("GPUPERF_MODE", "NUMBA_ENABLE_CUDASIM")}
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e,
                          timeout=120)


def test_no_gpu_means_simulator_said_plainly():
    r = run("import gpuperf as gp, numba; print(gp.MODE, numba.config.ENABLE_CUDASIM)")
    assert r.returncode == 0, r.stderr
    assert "simulator" in r.stdout.splitlines()[-1] and r.stdout.strip().endswith("1")
    assert "no GPU here" in r.stderr and "no GPU here" not in r.stdout  # one clear line


def test_forced_gpu_without_gpu_is_a_clear_error():
    r = run("import gpuperf", GPUPERF_MODE="gpu")
    assert r.returncode != 0
    assert "GPUPERF_MODE=gpu was asked for" in r.stderr and "T4 GPU" in r.stderr


def test_unknown_mode_is_a_clear_error():
    r = run("import gpuperf", GPUPERF_MODE="turbo")
    assert r.returncode != 0 and "is not a mode I know" in r.stderr


def test_forced_simulator():
    r = run("import gpuperf as gp; print(gp.SIMULATOR)", GPUPERF_MODE="simulator")
    assert r.stdout.strip().endswith("True")


def test_numba_imported_first_is_fine_if_numba_cuda_was_not():
    r = run("import numba; import gpuperf as gp; from numba import cuda; "
            "print(gp.MODE, numba.config.ENABLE_CUDASIM)")
    assert r.returncode == 0, r.stderr
    assert "simulator" in r.stdout


def test_importing_after_numba_cuda_warns():
    r = run("from numba import cuda\nimport gpuperf", GPUPERF_MODE="simulator")
    assert "imported after numba.cuda" in r.stderr


def test_compile_mode_uses_the_real_target_without_a_gpu():
    r = run("import gpuperf as gp, numba; print(gp.MODE, gp.SIMULATOR, numba.config.ENABLE_CUDASIM)",
            GPUPERF_MODE="compile")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["compile", "False", "0"]


def test_small_launch_warning_is_silenced_in_one_place():
    import numba

    import gpuperf  # noqa: F401

    assert numba.config.CUDA_LOW_OCCUPANCY_WARNINGS == 0
    assert numba.config.CUDA_WARN_ON_IMPLICIT_COPY == 0
