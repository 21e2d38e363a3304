#!/usr/bin/env bash
# Record some experiments into the package's record, in one device call (carry [".whl"]):
#
#   bash tools/device/record_part.sh <comma-separated --only names> [more record arguments]
#
# installs the course bundle and runs `python -m gpuperf.record --into-package --only <names>`
# against the record the checkout carries (the other experiments keep their rows), then copies
# the whole record to $OUT. Copy it back over src/gpuperf/data/<gpu>.json here (the call ran on
# the working tree of this checkout, so nothing else in the file changed) and commit it.
set -uo pipefail
only=${1:?usage: record_part.sh <comma-separated experiment names> [record args]}
shift
python3 -m pip install -q --no-index --no-deps --no-compile --target .site .whl/*.whl || exit 1
export PYTHONPATH=$PWD/.site:$PWD/src
python3 -m gpuperf.record --into-package --only "$only" "$@"
rc=$?
cp src/gpuperf/data/*.json "${OUT:-/tmp}/" 2>/dev/null
exit $rc
