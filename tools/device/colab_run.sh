#!/usr/bin/env bash
# Run the course's self-check on the lent GPU machine with Colab's versions (the Colab-like
# bundle made by tools/device/fetch_wheels.sh), from the repository root on that machine:
#
#   bash tools/device/colab_run.sh REGEX [more selfcheck options]     e.g.  '^0[1-5]'
#
# Earlier device calls have copied .colab1/part.00, .colab2/part.01, … to /tmp/colab/
# (tools/device/README.md). The first call unpacks and installs them into /tmp/colab/site;
# later calls on the same (warm) machine reuse it. Both copies of the notebooks that REGEX
# selects are run and merged into /tmp/colab/colab.json, which is copied to $OUT when set.
# The caller exports GPUPERF_COMMIT (the commit the selfcheck records).
set -euo pipefail

if [ $# -lt 1 ]; then
    echo "usage: bash tools/device/colab_run.sh REGEX [selfcheck options]" >&2
    exit 2
fi
REGEX=$1
shift
[ -d src/gpuperf ] || { echo "colab_run: run from the repository root" >&2; exit 2; }

C=/tmp/colab
SITE=$C/site

if [ ! -d "$SITE" ]; then
    shopt -s nullglob
    parts=("$C"/part.*)
    shopt -u nullglob
    if [ ${#parts[@]} -eq 0 ]; then
        echo "colab_run: no $C/part.*: stage the .colabN folders first (tools/device/README.md)" >&2
        exit 2
    fi
    echo "colab_run: unpacking ${#parts[@]} parts: ${parts[*]##*/}"
    rm -rf "$C/wheels" "$SITE.tmp"
    mkdir -p "$C/wheels"
    cat "${parts[@]}" | tar -x -C "$C/wheels"   # fails on a missing or cut part
    echo "colab_run: installing $(ls "$C"/wheels/*.whl | wc -l) wheels into $SITE"
    python3 -m pip install -q --no-index --no-deps --no-compile --disable-pip-version-check \
        --target "$SITE.tmp" "$C"/wheels/*.whl
    mv "$SITE.tmp" "$SITE"
fi

# A folder on PYTHONPATH is not a site-packages folder, and two things need one. 1. Its .pth
# files: numba-cuda's _numba_cuda_redirector.pth is what makes `numba.cuda` (numba 0.61.2's
# built-in copy otherwise) load numba-cuda 0.30.4; cuda-bindings and setuptools ship one each.
# 2. cuda-pathfinder, which numba-cuda and cuda-bindings use to load NVVM, NVRTC and nvJitLink
# and to find the CUDA headers, looks for the pip toolkit wheels only under
# site.getsitepackages(): the machine's own nvidia-* wheels or /usr/local/cuda would be used.
# This sitecustomize (imported at start-up from PYTHONPATH, in the notebook kernels too) puts
# $SITE first among the site-packages folders and runs its .pth files, as Colab's
# /usr/local/lib/python3.12/dist-packages is. (numba-cuda's own libdevice and cudart look-ups
# go through importlib.metadata, which PYTHONPATH serves: no CUDA_HOME or NUMBA_CUDA_* needed.)
cat > "$SITE/sitecustomize.py" <<'EOF'
# Written by tools/device/colab_run.sh: make this folder count as a site-packages folder
# (first in site.getsitepackages(), its .pth files run), as on Colab.
import importlib.machinery
import importlib.util
import os
import site
import sys

_HERE = os.path.dirname(os.path.realpath(__file__))
_getsitepackages = site.getsitepackages


def getsitepackages(prefixes=None):
    return [_HERE] + [p for p in _getsitepackages(prefixes) if os.path.realpath(p) != _HERE]


site.getsitepackages = getsitepackages
site.addsitedir(_HERE)  # already on sys.path: this runs its .pth files

# Then the machine's own sitecustomize, if it has one.
_spec = importlib.machinery.PathFinder.find_spec(
    "sitecustomize", [p for p in sys.path if p and os.path.realpath(p) != _HERE])
if _spec is not None and _spec.loader is not None:
    _spec.loader.exec_module(importlib.util.module_from_spec(_spec))
EOF

export PYTHONPATH="$SITE:$PWD/src"
export PYTHONUNBUFFERED=1
echo "colab_run: GPUPERF_COMMIT=${GPUPERF_COMMIT:-<unset: the selfcheck records no commit>}"
env | grep -E '^(CUDA_HOME|CUDA_PATH|LD_LIBRARY_PATH|NUMBA_[A-Z_]*)=' | sed 's/^/colab_run: env /' || true

python3 - "$SITE" <<'EOF' || echo "colab_run: (the version report failed; going on)"
import sys
from importlib import metadata

site_dir = sys.argv[1]
names = ("numba", "numba-cuda", "numpy", "llvmlite", "ipywidgets", "ipykernel", "ipython",
         "jupyter_client", "nbclient", "traitlets", "matplotlib", "cuda-bindings", "cuda-core",
         "cuda-pathfinder", "nvidia-cuda-nvcc-cu12", "nvidia-cuda-nvrtc-cu12",
         "nvidia-nvjitlink-cu12")
print("python", sys.version.split()[0])
for name in names:
    try:
        dist = metadata.distribution(name)
        where = "" if str(dist.locate_file("")).startswith(site_dir) else "  (NOT from the bundle)"
        print(f"  {name:<24} {dist.version}{where}")
    except metadata.PackageNotFoundError:
        print(f"  {name:<24} -")
try:
    import numba.cuda

    impl = getattr(numba.cuda, "implementation", "?")
    print(f"  numba.cuda: {impl} ({numba.cuda.__file__})"
          + ("" if impl == "NVIDIA" else "  (NOT numba-cuda: the redirector did not run)"))
    from numba.cuda.cuda_paths import get_cuda_paths

    for key, found in get_cuda_paths().items():
        path = found.info
        mark = "" if path and str(path).startswith(site_dir) else "  (NOT from the bundle)"
        print(f"  {key:<18} {path}  [{found.by}]{mark}")
except Exception as err:  # no GPU, or no toolkit: say so and go on
    print(f"  CUDA toolkit paths: not found ({type(err).__name__}: {err})")
EOF

rc=0
if [ "${GPUS:-1}" != 1 ]; then
    # The notebooks dealt to the machine's GPUs, one share per GPU, both copies of each
    # (tools/device/selfcheck_gpus.sh), merged into $C/colab.json.
    OUT= bash tools/device/selfcheck_gpus.sh "$C/colab.json" "$REGEX" "$@" || rc=$?
elif [ "${COPIES_AT_ONCE:-0}" = 1 ]; then
    # The chapter and student copies in two processes at once, merged as --append merges
    # (about half the device time; with MEASURE = False the GPU only runs kernels and
    # checkers, so the two do not disturb a measurement).
    python3 -m gpuperf.selfcheck --only "$REGEX" --copies chapter --out "$C/chapter.json" "$@" \
        > "$C/chapter.log" 2>&1 & pid=$!
    python3 -m gpuperf.selfcheck --only "$REGEX" --copies student --out "$C/student.json" "$@" \
        > "$C/student.log" 2>&1 || rc2=$?
    wait "$pid" || rc=$?
    tail -n 20 "$C/chapter.log" "$C/student.log"
    python3 tools/device/merge_selfchecks.py "$C/colab.json" "$C/chapter.json" "$C/student.json" \
        || rc=1
else
    python3 -m gpuperf.selfcheck --only "$REGEX" --copies chapter --out "$C/colab.json" --append "$@" || rc=$?
    python3 -m gpuperf.selfcheck --only "$REGEX" --copies student --out "$C/colab.json" --append "$@" || rc2=$?
fi
rc=$(( rc > ${rc2:-0} ? rc : ${rc2:-0} ))

if [ -n "${OUT:-}" ] && [ -f "$C/colab.json" ]; then
    cp "$C/colab.json" "$OUT/"
    python3 tools/device/tree_hash.py > "$OUT/colab.tree"  # for merge_selfchecks.py
fi
exit "$rc"
