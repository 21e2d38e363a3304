"""Contained: a class with hostile submissions (tests/redteam/) is graded in the sandbox; each
attack is contained and graded as it deserves, the same on a regrade, and the other students'
grades and files do not change.

Needs bubblewrap (Debian's `bubblewrap` package); without it these tests skip, and the grader
says on stderr that it is not sandboxed."""

import hashlib
import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from gpuperf import assign, grade, sandbox

pytestmark = pytest.mark.skipif(
    sandbox.available() is not None,
    reason=f"no sandbox here: {sandbox.available()} (install bubblewrap to run these)")

REDTEAM = Path(__file__).parent / "redteam"
SETUP = "import gpuperf as gp\ngs = gp.gridstride"
RIGHT = "    return 3 * 4 * n / (ms * 1e-3) / 1e9"
WRONG = "    return 2 * 4 * n / (ms * 1e-3) / 1e9"
LIMITS = sandbox.Limits(memory_bytes=2 * sandbox.GIB, processes=128)


def _attack(name):
    spec = importlib.util.spec_from_file_location(name, REDTEAM / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


ATTACKS = sorted(p.stem for p in REDTEAM.glob("*.py"))


def _digest(folder):
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("redteam")
    source = tmp / "course" / "solutions"
    source.mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(SETUP, id="setup"),
        nbformat.v4.new_code_cell(
            "def saxpy_gbps(n, ms):\n    ### BEGIN SOLUTION\n" + RIGHT + "\n    ### END SOLUTION",
            id="solution"),
        nbformat.v4.new_code_cell("gs.check_bandwidth_formula(saxpy_gbps);", id="check"),
    ]
    nbformat.write(nb, source / "01_demo.ipynb")
    copy = assign.assign(source, tmp / "student")[0]
    instructor = tmp / "instructor"
    instructor.mkdir()
    victim = instructor / "grades.txt"
    victim.write_text("the instructor's file")
    paths = {"victim": str(victim), "outside": str(instructor / "pwned.txt"),
             "subs": str(tmp / "subs"), "source": str(source),
             "package": str(Path(grade.__file__).parent)}
    subs = tmp / "subs"
    for student in ["right", "wrong", *ATTACKS]:
        mod = _attack(student) if student in ATTACKS else None
        body = {"right": RIGHT, "wrong": WRONG}.get(
            student, {"RIGHT": RIGHT, "WRONG": WRONG}.get(getattr(mod, "ANSWER", ""),
                                                         getattr(mod, "ANSWER", "")))
        sub = nbformat.read(copy, as_version=4)
        answer = next(c for c in sub.cells if c.get("id") == "solution")
        answer.source = "def saxpy_gbps(n, ms):\n" + body
        if mod is not None and mod.CELL:
            at = sub.cells.index(answer)
            sub.cells.insert(at, nbformat.v4.new_code_cell(mod.CELL.format(**paths)))
        (subs / student).mkdir(parents=True)
        nbformat.write(sub, subs / student / "01_demo.ipynb")
    before = {"subs": _digest(subs), "source": _digest(source), "instructor": _digest(instructor)}
    runs = []
    for k in (1, 2):  # graded, then regraded with the same seed
        keep = tmp / f"kept{k}"
        # A cell timeout well past the checker's CPU limit (about 22 s): an endless answer is
        # stopped by that limit, whatever the load, and gets the same verdict both times.
        rows = grade.grade(subs, source=source, cell_timeout=90, progress=None, hidden_seed=77,
                           jobs=2, limits=LIMITS, keep=keep, hide=[instructor])
        runs.append(({r["student"]: r for r in rows}, keep))
    after = {"subs": _digest(subs), "source": _digest(source), "instructor": _digest(instructor)}
    return runs, before, after, paths


def _output(keep, student):
    nb = nbformat.read(keep / student / "01_demo.ipynb", as_version=4)
    return "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))


@pytest.mark.parametrize("attack", ATTACKS)
def test_each_attack_is_graded_as_it_deserves(graded, attack):
    (rows, _), _ = graded[0][0], None
    status, score = _attack(attack).EXPECT
    assert (rows[attack]["status"], float(rows[attack]["score"])) == (status, score), \
        rows[attack]["detail"]


def test_a_regrade_gives_every_submission_the_same_score(graded):
    (first, _), (second, _) = graded[0]
    assert {s: (r["status"], r["score"], r["passed"], r["total"]) for s, r in first.items()} == \
        {s: (r["status"], r["score"], r["passed"], r["total"]) for s, r in second.items()}


def test_the_other_students_grades_and_everyones_files_are_untouched(graded):
    (rows, _), _ = graded[0]
    _, before, after, paths = graded
    assert rows["right"]["score"] == 1.0 and rows["right"]["status"] == "graded"
    assert rows["wrong"]["score"] == 0.0 and rows["wrong"]["status"] == "graded"
    assert before == after  # submissions, solutions and the instructor's folder, byte for byte
    assert not Path(paths["outside"]).exists()
    assert not (Path(paths["package"]) / "pwned.py").exists()


def test_files_outside_cannot_be_deleted_or_written(graded):
    _, keep = graded[0][0]
    out = _output(keep, "delete_outside") + _output(keep, "write_outside")
    assert "DELETED" not in out and "WROTE" not in out and out.count("BLOCKED") == 5


def test_other_students_and_the_grader_are_out_of_sight(graded):
    _, keep = graded[0][0]
    out = _output(keep, "read_others")
    assert "SEEN" not in out, out
    assert graded[3]["subs"] not in out.split("PARENT CWD", 1)[1]


def test_processes_memory_and_output_are_limited(graded):
    _, keep = graded[0][0]
    started = int(_output(keep, "fork_many").split("STARTED", 1)[1].split()[0])
    assert started < LIMITS.processes
    got = float(_output(keep, "allocate").split("GOT GiB", 1)[1].split()[0])
    assert got <= LIMITS.memory_bytes / sandbox.GIB
    assert (keep / "print_megabytes" / "01_demo.ipynb").stat().st_size < 1_000_000
    assert "left out" in _output(keep, "print_megabytes")
    # nothing the sandbox started outlives it
    left = subprocess.run(["pgrep", "-f", "sleep 4242"], capture_output=True, text=True)
    assert left.stdout.strip() == ""
    # and the pids cgroups made for a grader run as root are gone. Other tests grade at the same
    # time (pytest-xdist), and their runs' groups are empty for a moment when made and when
    # their kernel ends: a group is left over only if it is still there, empty, 30 s later.
    def empty_groups():
        found = set()
        for g in Path("/sys/fs/cgroup/pids").glob("gpuperf-grade-*"):
            try:
                if not (g / "cgroup.procs").read_text().strip():
                    found.add(g)
            except OSError:  # removed while we looked
                pass
        return found

    suspects = empty_groups()
    for _ in range(60):
        if not suspects:
            break
        time.sleep(0.5)
        suspects &= empty_groups()
    assert not suspects


def test_an_endless_answer_costs_one_cell_timeout(graded):
    (rows, _), _ = graded[0]
    assert "of CPU time" in rows["loop_forever"]["detail"]  # the checker's limit, a verdict


def test_the_private_tmp_folders_hold_at_most_tmp_bytes(tmp_path):
    """/tmp, /var/tmp and /dev/shm in the sandbox are in-memory folders that RLIMIT_DATA does
    not count: unsized, a student wrote 4 GiB there under a 2 GiB memory limit (each could take
    half the machine's memory). Each holds at most ``Limits.tmp_bytes``."""
    if not sandbox._has_size():
        pytest.skip("this bubblewrap has no --size (0.8 and later)")
    code = ("import os\n"
            "for d in ('/tmp', '/var/tmp', '/dev/shm'):\n"
            "    n = 0\n"
            "    try:\n"
            "        with open(d + '/fill', 'wb') as f:\n"
            "            for _ in range(96):\n"
            "                f.write(b'x' * (1 << 20)); f.flush(); n += 1\n"
            "    except OSError as err:\n"
            "        print(d, 'STOPPED', n, err.errno)\n"
            "    else:\n"
            "        print(d, 'WROTE', n)\n")
    work, rundir = tmp_path / "work", tmp_path / "run"
    work.mkdir()
    rundir.mkdir()
    argv, env = sandbox.command([sys.executable, "-c", code], work=work, rundir=rundir,
                                limits=sandbox.Limits(tmp_bytes=32 << 20))
    try:
        out = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120).stdout
    finally:
        sandbox.release(rundir)  # the pids cgroup made for a grader run as root
    assert out.count("STOPPED") == 3 and "WROTE" not in out, out


def test_release_removes_only_the_cgroups_the_grader_made(tmp_path):
    """``release`` read the cgroups to remove from a note in the run folder, which the
    student's kernel can write (and /sys/fs/cgroup/pids, listed read-only in the sandbox,
    names the other kernels' groups): as root it removed any empty cgroup named there, and
    waited 30 s on each busy one. It removes only the groups ``command`` made."""
    pids = sandbox._CGROUP_PIDS
    if os.geteuid() != 0 or not os.access(pids, os.W_OK):
        pytest.skip("needs root and a writable pids cgroup controller")
    victim = pids / f"gpuperf-test-victim-{os.getpid()}"
    victim.mkdir()
    try:
        rundir = tmp_path / "run"
        rundir.mkdir()
        (rundir / "cgroups").write_text(f"{victim}\n" * 3)
        mine = sandbox._pids_group(rundir, sandbox.Limits())
        assert mine is not None and mine.is_dir()
        sandbox.release(rundir)
        assert victim.is_dir() and not mine.exists()
    finally:
        if victim.is_dir():
            victim.rmdir()


def test_a_notebook_that_fills_its_folders_is_stopped_at_disk_bytes(tmp_path):
    """The working and run folders are the grader's disk, bound into the sandbox (no mount size
    holds them; RLIMIT_FSIZE bounds only each file): a notebook writing file after file there
    could fill the disk the class is graded on. The grader stops its kernel past
    ``Limits.disk_bytes`` and says why; the folders are gone afterwards."""
    import nbformat

    fill = ("import os, time\n"
            "for i in range(400):\n"
            "    with open(f'fill{i}', 'wb') as f:\n"
            "        f.write(os.urandom(1 << 20))\n"
            "    time.sleep(0.01)\n"
            "print('wrote all')")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(fill)])
    limits = sandbox.Limits(memory_bytes=2 * sandbox.GIB, processes=128, disk_bytes=64 << 20)
    _, _, ran, stopped = grade._execute(nb, nb, "fill.ipynb", hidden_seed=7, cell_timeout=60,
                                         limits=limits, hide=[])
    assert stopped and "of the grader's disk" in stopped, stopped
    assert "wrote all" not in str(ran.cells[0].get("outputs", []))


def test_the_disk_watch_counts_blocks_and_entries(tmp_path):
    (tmp_path / "sparse").write_bytes(b"")
    with open(tmp_path / "sparse", "r+b") as f:  # 1 GiB apparent, a few blocks held
        f.truncate(1 << 30)
    (tmp_path / "real").write_bytes(b"x" * (1 << 20))
    stops = []
    watch = sandbox.DiskWatch([tmp_path], 4 << 20, lambda: stops.append(1), every=0.05)
    used, entries = watch.used()
    assert (1 << 20) <= used < (4 << 20) and entries == 2
    for i in range(5):
        (tmp_path / f"more{i}").write_bytes(b"y" * (1 << 20))
    with watch:
        import time
        for _ in range(100):
            if stops:
                break
            time.sleep(0.05)
    assert stops == [1] and "GiB" in watch.tripped
    many = sandbox.DiskWatch([tmp_path], 1 << 40, lambda: None, max_entries=3)
    assert many.used()[1] > 3
    guide = (Path(__file__).resolve().parent.parent / "book" / "instructors.md").read_text()
    assert f"over {sandbox.Limits().disk_bytes // sandbox.GIB} GiB together" in guide
