#!/usr/bin/env bash
# Rebuild, from PyPI, the wheel bundles that the lent GPU machine (x86-64 Linux, CPython 3.12,
# no network) needs. Run from the repository root:  bash tools/device/fetch_wheels.sh
#
#   .whl/               the course bundle: numpy 2.3.5 (the machine has 2.5, which breaks
#                       numba-cuda 0.30.4), nbclient, nbformat, ipykernel 6, ipywidgets 8, pytest (for
#                       tools/device/judge.py, which reads the tests) and
#                       their dependencies; NOT numba, numba-cuda, llvmlite, matplotlib or CUDA
#                       wheels (the machine has those).
#   .colab1/ .colab2/ … the Colab-like bundle: Colab's preinstalled versions plus what the
#                       course's first cell installs (numba-cuda[cu12]==0.30.4 with a CUDA 12.8
#                       toolkit from pip), as one tar split into 40 MiB parts, one per folder, so
#                       that each folder can be carried in one device call (a call carries at
#                       most 64 MiB, the working tree's tracked files included). tools/device/colab_run.sh
#                       puts them together on the machine.
#
# These folders are git-ignored through .git/info/exclude; see tools/device/README.md.
set -euo pipefail

[ -f pyproject.toml ] && [ -d src/gpuperf ] || { echo "run from the repository root" >&2; exit 2; }

# A CPython 3.12 resolves dependency markers (python_version < "3.12", …) as the machine will;
# another python3 gets the wheel tags right but may miss or add a marker-dependent wheel.
pick_python() {
    local c
    for c in ${PYTHON:-} python3.12 \
             $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python3.12 2>/dev/null | sort -V | tail -n 1) \
             python3; do
        if "$c" -m pip --version >/dev/null 2>&1; then echo "$c"; return; fi
    done
    echo "no python with pip found" >&2; exit 2
}
PY=$(pick_python)
case "$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')" in
    3.12) echo "resolving with $PY" ;;
    *) echo "warning: resolving with $PY, not a Python 3.12: check markers (set PYTHON=python3.12)" >&2 ;;
esac
# Binary wheels for CPython 3.12 on manylinux x86-64 (glibc <= 2.28: any likely machine has that).
TARGET=(--only-binary=:all: --python-version 3.12 --implementation cp
        --abi cp312 --abi abi3 --abi none
        --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64
        --platform manylinux_2_26_x86_64 --platform manylinux_2_24_x86_64
        --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64
        --platform manylinux_2_12_x86_64 --platform manylinux2010_x86_64
        --platform manylinux_2_5_x86_64 --platform manylinux1_x86_64 --platform any)

pip_download() {  # pip download for the target, without the noise of missing local indexes
    "$PY" -m pip download -q "${TARGET[@]}" "$@" \
        2> >(grep -v 'neither a file nor a directory' >&2 || true)
}

mib() { du -sb "$@" | awk '{ printf "%.1f MiB\n", $1 / 1048576 }'; }

list_wheels() {  # name and size of each wheel in $1
    (cd "$1" && for w in *.whl; do printf '  %8.1f MiB  %s\n' "$(stat -c %s "$w" | awk '{ print $1 / 1048576 }')" "$w"; done)
}

one_version_each() {  # fail if a distribution appears twice in $1
    local dups
    dups=$(cd "$1" && ls -- *.whl | sed -E 's/-[0-9].*//' | tr 'A-Z_.' 'a-z--' | sort | uniq -d)
    if [ -n "$dups" ]; then echo "more than one version of: $dups" >&2; exit 1; fi
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ---------------------------------------------------------------- a. course bundle: .whl/
echo "== course bundle (.whl/)"
mkdir "$tmp/whl"
pip_download -d "$tmp/whl" numpy==2.3.5 nbclient nbformat "ipykernel>=6.29,<7" "ipywidgets>=8" pytest
# The machine has these (and their versions are part of what it tests): never ship them here.
(cd "$tmp/whl" && rm -f matplotlib-*.whl numba-*.whl numba_cuda-*.whl llvmlite-*.whl \
    nvidia_*.whl cuda_*.whl cupy*.whl)
one_version_each "$tmp/whl"
rm -rf .whl
mv "$tmp/whl" .whl
list_wheels .whl
echo "  .whl/: $(ls .whl/*.whl | wc -l) wheels, $(mib .whl)"
size=$(du -sb .whl | cut -f1)
if [ "$size" -ge $((60 * 1048576)) ]; then echo ".whl/ is over 60 MiB" >&2; exit 1; fi

# ---------------------------------------------------------------- b. Colab-like bundle
echo "== Colab-like bundle (.colab1/, .colab2/, …)"
mkdir "$tmp/colab"
# One resolve, so that every pin below holds together. notebook==6.5.7 is Colab's, and
# widgetsnbextension 3.6 (ipywidgets 7.7.1) requires notebook; the CUDA 12.8 toolkit wheels
# are pinned because Colab's CUDA is 12.8.
pip_download -d "$tmp/colab" \
    "numba-cuda[cu12]==0.30.4" numba==0.61.2 llvmlite==0.44.0 numpy==2.1.3 \
    ipywidgets==7.7.1 "widgetsnbextension==3.6.*" "jupyterlab_widgets>=1,<2" notebook==6.5.7 \
    ipykernel==6.17.1 ipython==7.34.0 jupyter_client==7.4.9 traitlets==5.7.1 \
    nbclient==0.10.4 nbformat matplotlib==3.10.0 \
    "cuda-bindings==12.9.*" "cuda-toolkit==12.8.*" \
    nvidia-cuda-nvcc-cu12==12.8.93 nvidia-cuda-nvrtc-cu12==12.8.93 nvidia-nvjitlink-cu12==12.8.93
one_version_each "$tmp/colab"
list_wheels "$tmp/colab"
echo "  $(ls "$tmp/colab"/*.whl | wc -l) wheels, $(mib "$tmp/colab")"

# One tar of the wheels (at its top level), split into 40 MiB parts, one part per folder.
(cd "$tmp/colab" && tar -cf "$tmp/colab.tar" -- *.whl)
mkdir "$tmp/parts"
split -b 40M -d -a 2 "$tmp/colab.tar" "$tmp/parts/part."
rm -rf .colab[0-9]*
n=0
for part in "$tmp/parts"/part.*; do
    n=$((n + 1))
    mkdir ".colab$n"
    mv "$part" ".colab$n/"
done
for d in .colab[0-9]*; do
    size=$(du -sb "$d" | cut -f1)
    echo "  $d/: $(ls "$d") $(mib "$d")"
    if [ "$size" -ge $((62 * 1048576)) ]; then echo "$d is over 62 MiB" >&2; exit 1; fi
done
echo "  tar: $(mib "$tmp/colab.tar") in $n parts; stage them with $n device calls (tools/device/README.md)"
