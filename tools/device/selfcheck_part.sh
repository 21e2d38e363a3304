#!/usr/bin/env bash
# One part of the measuring GPU self-check, in one device call (carry [".whl"]):
#
#   bash tools/device/selfcheck_part.sh <commit> '<--only regex>' [more selfcheck arguments]
#
# installs the course bundle, compiles the bytecode of the installed packages once (see below),
# runs `python -m gpuperf.selfcheck --only <regex>` on both copies, writing the JSON to
# $OUT/part.json, with $OUT/part.tree (tools/device/tree_hash.py: the notebooks and kernels it
# ran). Merge the parts here with tools/device/merge_selfchecks.py, which checks the tree
# against the commit.
#
# Why the bytecode step: the machine's image sets PYTHONDONTWRITEBYTECODE=1 and ships PyTorch,
# numba and the rest without __pycache__, and the course bundle is installed with --no-compile,
# so every Python process there compiled every module it imported from source: about 4 s for
# `import gpuperf, numba.cuda, cupy` and 4-5 s more for `import torch.profiler` (the CUPTI
# timings), in every notebook, on top of the notebook's own work. A normally installed package
# (pip byte-compiles at install, as on Colab) has that bytecode already. So the script lets
# Python write bytecode to a cache folder (PYTHONPYCACHEPREFIX) and compiles those packages once
# before the timed notebooks, as an installation would have. Importing them was not enough: on a
# fresh machine the first notebook to compile register-tiled kernels spent 22 s in one cell that
# took 13 s in the next notebook that ran it (numba imports modules lazily as it compiles).
set -uo pipefail
commit=${1:?usage: selfcheck_part.sh <commit> <only-regex> [selfcheck args]}
only=${2:?usage: selfcheck_part.sh <commit> <only-regex> [selfcheck args]}
shift 2
python3 -m pip install -q --no-index --no-deps --no-compile --target .site .whl/*.whl || exit 1
export PYTHONPATH=$PWD/.site:$PWD/src GPUPERF_COMMIT=$commit
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX=${PYTHONPYCACHEPREFIX:-/tmp/pycache}
t0=$(date +%s.%N)
python3 - <<'PY'
# Imports alone leave out the modules numba imports lazily (while it types and lowers a kernel):
# compile every module of the packages the notebooks use, as pip does when it installs them.
# One line at the end says what was compiled, and names any package that failed (a step that
# fails silently leaves the notebooks to compile from source, as on 2026-11-29: 1 s here and a
# chapter 50% slower than on a machine where the step had worked).
import compileall, importlib, os
done, failed = [], []
for name in ("gpuperf", "numba", "numba_cuda", "llvmlite", "numpy", "cupy", "matplotlib",
             "ipykernel", "IPython", "ipywidgets", "nbclient", "jupyter_client", "zmq", "tornado"):
    try:
        module = importlib.import_module(name)
    except ImportError:
        continue
    except Exception as err:  # noqa: BLE001 - report it and go on
        failed.append(f"{name} (import: {type(err).__name__}: {err})"[:160])
        continue
    folder = os.path.dirname(module.__file__)
    try:
        ok = compileall.compile_dir(folder, quiet=2, workers=0)
    except Exception as err:  # noqa: BLE001 - e.g. no process pool here: compile in this one
        try:
            ok = compileall.compile_dir(folder, quiet=2, workers=1)
        except Exception as err2:  # noqa: BLE001
            failed.append(f"{name} ({type(err).__name__}: {err}; then {type(err2).__name__})"[:160])
            continue
    (done if ok else failed).append(name if ok else f"{name} (some modules did not compile)")
try:
    import torch.profiler  # noqa: F401 - the CUPTI timings; compiling all of torch would take minutes
except ImportError:
    pass
print(f"bytecode: {len(done)} packages compiled into {os.environ.get('PYTHONPYCACHEPREFIX')}"
      + (f"; FAILED: {'; '.join(failed)}" if failed else ""))
PY
# (python, not bc: the image has no bc)
echo "bytecode compiled in $(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)") s (once per machine)"
# What this machine was sent, before the run writes anything: merge_selfchecks.py refuses a
# part whose notebooks and kernels are not those of the commit it is recorded under.
python3 tools/device/tree_hash.py > "${OUT:-/tmp}/part.tree" || exit 1
# Straight into $OUT: the self-check rewrites its file after every notebook, so a call stopped
# at its time limit still brings back the rows it finished.
python3 -m gpuperf.selfcheck --only "$only" --out "${OUT:-/tmp}/part.json" "$@"
