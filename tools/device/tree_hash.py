"""The notebooks and kernels a self-check ran, as git blob ids, one "BLOB PATH" line per file.

    python3 tools/device/tree_hash.py > $OUT/part.tree          (on the device, before the run)
    python3 tools/device/tree_hash.py --commit C                (here: what commit C holds)

The device runs the working tree it was sent, whatever commit the caller names in
GPUPERF_COMMIT; merge_selfchecks.py compares the two listings, so that a self-check of one
tree can never be recorded under another commit's name. Git's blob id is sha1("blob <size>\\0"
+ content), so the listing needs no git on the device.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

# The paths tests/test_selfcheck.py watches (gpuperf.selfcheck.WATCHED, kept equal by a test;
# this file runs on the device without the package): a change there makes a self-check stale.
WATCHED = ("notebooks", "solutions", "src/gpuperf")


def working_tree(root: str = ".") -> list[str]:
    files = []
    for top in WATCHED:
        path = os.path.join(root, top)
        if os.path.isfile(path):
            files.append(top)
            continue
        for folder, dirs, names in os.walk(path):
            dirs[:] = [d for d in dirs if d != "__pycache__" and not d.startswith(".")]
            files += [os.path.relpath(os.path.join(folder, n), root) for n in names
                      if not n.endswith(".pyc")]
    lines = []
    for rel in sorted(files):
        with open(os.path.join(root, rel), "rb") as f:
            data = f.read()
        blob = hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest()
        lines.append(f"{blob} {rel}")
    return lines


def at_commit(commit: str) -> list[str]:
    out = subprocess.run(["git", "ls-tree", "-r", "--format=%(objectname) %(path)", commit,
                          "--", *WATCHED], capture_output=True, text=True, check=True).stdout
    return sorted(out.splitlines(), key=lambda line: line.split(" ", 1)[1])


if __name__ == "__main__":
    if sys.argv[1:2] == ["--commit"]:
        print("\n".join(at_commit(sys.argv[2])))
    else:
        print("\n".join(working_tree()))
