#!/usr/bin/env bash
# Run the course's GPU self-check over all the GPUs of one lent machine at once, from the
# repository root on that machine:
#
#   bash tools/device/selfcheck_gpus.sh OUT.json [REGEX [selfcheck options]]
#
# The notebooks that REGEX selects (default: all) are dealt to the GPUs by their time in the
# last shipped self-check (longest first, each to the least loaded GPU). Each GPU runs
# `python -m gpuperf.selfcheck` on its share, both copies, with CUDA_VISIBLE_DEVICES set to
# it; the parts are merged into OUT.json (tools/device/merge_selfchecks.py), which is also
# copied to $OUT when set. GPUS=N uses the first N GPUs (default: every GPU nvidia-smi lists).
# A notebook keeps its own GPU, so its timings and its budget are as on a one-GPU machine; the
# environment (PYTHONPATH, GPUPERF_COMMIT, GPUPERF_LIVE, ...) is the caller's, so the
# Colab-like run can use it too (colab_run.sh with GPUS=N).
set -euo pipefail

if [ $# -lt 1 ]; then
    echo "usage: bash tools/device/selfcheck_gpus.sh OUT.json [REGEX [selfcheck options]]" >&2
    exit 2
fi
OUT_JSON=$1
REGEX=${2:-.}
shift $(( $# >= 2 ? 2 : 1 ))
[ -d src/gpuperf ] || { echo "selfcheck_gpus: run from the repository root" >&2; exit 2; }

N=${GPUS:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)}
if ! [ "$N" -ge 1 ] 2>/dev/null; then
    echo "selfcheck_gpus: no GPU found (nvidia-smi -L); set GPUS=N" >&2
    exit 2
fi

WORK=$(mktemp -d /tmp/selfcheck_gpus.XXXX)
# One line per GPU: a regular expression matching exactly the notebooks it runs.
python3 - "$REGEX" "$N" > "$WORK/shares" <<'PY'
import json, re, sys
from pathlib import Path

regex, n = re.compile(sys.argv[1]), int(sys.argv[2])
names = sorted(p.stem for p in Path("solutions").glob("[0-9][0-9]_*.ipynb") if regex.search(p.stem))
if not names:
    sys.exit(f"selfcheck_gpus: no notebook in solutions/ matches {sys.argv[1]!r}")
cost = {}
for path in Path("src/gpuperf/data").glob("selfcheck-*.json"):
    for r in json.loads(path.read_text()).get("notebooks", []):
        cost[r["notebook"]] = cost.get(r["notebook"], 0.0) + float(r.get("seconds") or 0)
default = max(cost.values(), default=1.0)  # a new notebook: assume the longest
load = [[0.0, []] for _ in range(min(n, len(names)))]
for name in sorted(names, key=lambda s: -cost.get(s, default)):
    share = min(load, key=lambda x: x[0])
    share[0] += cost.get(name, default)
    share[1].append(name)
for total, share in load:
    print("^(" + "|".join(re.escape(s) for s in sorted(share)) + ")$")
    print(f"selfcheck_gpus: {len(share)} notebooks, about {total:.0f} s last time: "
          + " ".join(sorted(share)), file=sys.stderr)
PY

i=0
pids=()
while read -r share; do
    CUDA_VISIBLE_DEVICES=$i python3 -m gpuperf.selfcheck --only "$share" \
        --out "$WORK/part$i.json" "$@" > "$WORK/part$i.log" 2>&1 &
    pids+=($!)
    i=$((i + 1))
done < "$WORK/shares"

rc=0
for pid in "${pids[@]}"; do
    wait "$pid" || rc=1
done
for log in "$WORK"/part*.log; do
    echo "== $log"
    grep -v '^WARNING' "$log" | tail -n 25
done
parts=("$WORK"/part*.json)
if [ -e "${parts[0]}" ]; then
    python3 tools/device/merge_selfchecks.py "$OUT_JSON" "${parts[@]}" || rc=1
else
    echo "selfcheck_gpus: no part wrote a result" >&2
    rc=1
fi
if [ -n "${OUT:-}" ] && [ -f "$OUT_JSON" ]; then
    cp "$OUT_JSON" "$OUT/"
fi
exit $rc
