#!/usr/bin/env bash
# Time the grader on a class, in one device call (carry [".whl"]):
#
#   bash tools/device/grade_class.sh <students> <notebooks> <jobs>
#   e.g. bash tools/device/grade_class.sh 30 03_dram,06_reduce 16
#
# installs the course bundle, makes a class of <students> folders that each hand in the course's
# reference solutions of <notebooks> (comma-separated, without .ipynb), and grades it with
# `python -m gpuperf.grade --assigned <notebooks> --jobs <jobs>` (one reference run per notebook
# included), writing the gradebook and the grader's log to $OUT. Prints the wall time, the
# notebooks per minute and how many students got full marks, last.
set -uo pipefail
students=${1:?usage: grade_class.sh <students> <notebooks> <jobs>}
notebooks=${2:?usage: grade_class.sh <students> <notebooks> <jobs>}
jobs=${3:?usage: grade_class.sh <students> <notebooks> <jobs>}
out=${OUT:-/tmp}
python3 -m pip install -q --no-index --no-deps --no-compile --target .site .whl/*.whl \
    2>"$out/pip.log" || { cat "$out/pip.log"; exit 1; }
export PYTHONPATH=$PWD/.site:$PWD/src
# Bytecode once, as an installed package has it (see selfcheck_part.sh).
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX=${PYTHONPYCACHEPREFIX:-/tmp/pycache}
python3 -c "import gpuperf, numba.cuda, cupy, nbclient, ipykernel" 2>/dev/null
class=$(mktemp -d)
for i in $(seq -w 1 "$students"); do
    mkdir -p "$class/student$i"
    for nb in ${notebooks//,/ }; do
        cp "solutions/$nb.ipynb" "$class/student$i/" || exit 1
    done
done
t0=$(date +%s.%N)
python3 -m gpuperf.grade "$class" --assigned "$notebooks" --jobs "$jobs" --seed 4242 \
    --out "$out/gradebook.csv" > "$out/grade.log" 2>&1
rc=$?
t1=$(date +%s.%N)
tail -n 5 "$out/grade.log"
python3 - "$out/gradebook.csv" "$t0" "$t1" "$students" "$notebooks" "$jobs" <<'PY'
import csv, sys
path, t0, t1, students, notebooks, jobs = sys.argv[1:]
wall = float(t1) - float(t0)
count = int(students) * len(notebooks.split(","))
rows = [r for r in csv.DictReader(open(path)) if r.get("student_id")]  # not the speed row
full = sum(1 for r in rows if float(r["total"]) == float(r["out_of"]))
print(f"class: {students} students x {notebooks} ({count} notebooks), --jobs {jobs}: "
      f"{wall:.0f} s wall ({60 * count / wall:.1f} notebooks a minute), "
      f"{full} of {len(rows)} students at full marks")
PY
exit $rc
