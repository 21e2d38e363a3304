#!/usr/bin/env bash
# Judge tests/wrong and tests/right on the GPU machine, in one device call (carry [".whl"]):
#
#   bash tools/device/judge_part.sh <jobs> [chapter ...]
#
# installs the course bundle, then runs tools/device/judge.py --jobs <jobs> (each file in a
# process of its own, <jobs> at once; a file judged wrong while the GPU was shared is judged
# again alone), writing $OUT/judge.json. Prints the wrong verdicts, the slowest five and the
# summary last; exits 1 if any verdict is wrong, failed, or took over 30 s.
set -uo pipefail
jobs=${1:?usage: judge_part.sh <jobs> [chapter ...]}
shift
python3 -m pip install -q --no-index --no-deps --no-compile --target .site .whl/*.whl || exit 1
export PYTHONPATH=$PWD/.site:$PWD/src
# Bytecode once, as an installed package has it (see selfcheck_part.sh): each judged file is a
# process of its own, which would otherwise compile numba, cupy and the course from source.
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX=${PYTHONPYCACHEPREFIX:-/tmp/pycache}
python3 -c "import gpuperf, numba.cuda, cupy" 2>/dev/null
python3 tools/device/judge.py --jobs "$jobs" "$@" > "${OUT:-/tmp}/judge.log" 2>&1
rc=$?
grep -E "^(WRONG|ERROR|SLOW)|judged again|slowest five|judged right" "${OUT:-/tmp}/judge.log"
exit $rc
