#!/usr/bin/env bash
# Judge tests/wrong and tests/right on the GPU machine, in one device call (carry [".whl"]):
#
#   bash tools/device/judge_part.sh 'dram reduce' 'matmul streams' 'gdn coalescing debugging measuring coarsening checklist'
#
# installs the course bundle, then runs tools/device/judge.py once per argument (a group of
# chapters), the groups side by side (each its own process on the one GPU: verdict times are
# then upper bounds of a verdict's time alone), each writing $OUT/<n>/judge.json and its log to
# $OUT/<n>.log. Prints each group's summary lines, and exits 1 if any group found a wrong, failed
# or slow (over 30 s) verdict.
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: judge_part.sh '<chapters>' ['<chapters>' ...]" >&2; exit 2; }
python3 -m pip install -q --no-index --no-deps --no-compile --target .site .whl/*.whl || exit 1
export PYTHONPATH=$PWD/.site:$PWD/src
out=${OUT:-/tmp/judge}
mkdir -p "$out"
pids=()
i=0
for group in "$@"; do
    i=$((i + 1))
    mkdir -p "$out/$i"
    # shellcheck disable=SC2086 # a group is a space-separated list of chapters
    OUT="$out/$i" python3 tools/device/judge.py $group > "$out/$i.log" 2>&1 &
    pids+=($!)
done
rc=0
for pid in "${pids[@]}"; do wait "$pid" || rc=1; done
for j in $(seq 1 $i); do
    echo "== group $j: ${!j}"
    grep -E "^(WRONG|ERROR|SLOW)|slowest five|judged right" "$out/$j.log"
done
exit $rc
