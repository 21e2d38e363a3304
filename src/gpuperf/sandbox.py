"""Where a student's code runs while ``python -m gpuperf.grade`` grades it: a Jupyter kernel in a
child process, inside bubblewrap (``bwrap``) where the machine has it, with limits.

In the sandbox (``command(...)``) the kernel sees the system and the course read-only (the
Python environment and the ``gpuperf`` package), a private writable ``/tmp`` and its own
throwaway working folder, nothing of the home folders, of the other students' submissions, of the
course's solutions or of the gradebook, no network (its own network namespace: only the kernel's
Unix sockets to the grader cross), its own process numbering (``/proc`` shows only its own
processes, so ``/proc/<ppid>/cwd`` leads nowhere) and, inside it, limits on memory
(``RLIMIT_DATA``), processes and threads (``RLIMIT_NPROC``, counted in the sandbox's own user
namespace), CPU seconds and the size of a file it writes. The processes it starts die with it.

Without bubblewrap the same limits apply (the process limit counts every process of the
grader's user, so it is set above what runs already), but nothing is hidden: the code runs
with the grader's permissions and can read and write what the grader can. ``available()`` says
which, and the grader says it on stderr.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

GIB = 1 << 30


def _argv(argv) -> list[str]:
    if not isinstance(argv, (list, tuple)) or not argv or not all(isinstance(a, str) for a in argv):
        raise TypeError(f"argv must be a non-empty list of strings (the command to run), not "
                        f"{argv!r}.")
    return list(argv)


def _folder(path, name: str) -> Path:
    if not isinstance(path, (str, os.PathLike)) or not str(path).strip():
        raise TypeError(f"{name} must be a folder path, not {type(path).__name__} ({path!r}).")
    return Path(path)


@dataclass(frozen=True)
class Limits:
    """What one student's kernel may use (None: no limit)."""

    memory_bytes: int | None = 8 * GIB  # private writable memory (heap, NumPy arrays)
    processes: int | None = 4096  # processes and threads together (the emulator runs a
    # thread per CUDA thread of a block: 1,024 and more)
    cpu_seconds: int | None = 3600  # CPU time of the kernel process
    file_bytes: int | None = 1 * GIB  # the largest file it may write
    tmp_bytes: int | None = 1 * GIB  # each private in-memory folder (/tmp, /var/tmp, /dev/shm):
    # files there are memory that RLIMIT_DATA does not count (unbounded, each could take half
    # the machine's memory); with a bubblewrap that has --size (0.8 and later)
    disk_bytes: int | None = 2 * GIB  # the grader's disk its writable folders (the working
    # folder, the run folder) may take together: watched while it runs (``DiskWatch``)

    def __post_init__(self):
        for name in ("memory_bytes", "processes", "cpu_seconds", "file_bytes", "tmp_bytes",
                     "disk_bytes"):
            val = getattr(self, name)
            if val is not None and (isinstance(val, bool) or not isinstance(val, int) or val < 1):
                raise ValueError(f"{name}={val!r} must be a positive integer or None (no limit).")


@lru_cache(maxsize=1)
def available() -> str | None:
    """None if bubblewrap runs here, else why not (in words, for the grader's stderr)."""
    exe = shutil.which("bwrap")
    if not exe:
        return ("bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap), so "
                "students' code runs with the grader's permissions")
    try:
        run = subprocess.run([exe, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent",
                              "true"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as err:
        return f"bubblewrap did not run ({type(err).__name__}: {err})"
    if run.returncode != 0:
        return ("bubblewrap cannot make a sandbox here (unprivileged user namespaces are off?): "
                + (run.stderr.strip().splitlines() or ["no message"])[-1][:200])
    return None


# The environment the kernel keeps (everything else, an instructor's tokens included, is left out).
_KEEP = ("PATH", "PYTHONPATH", "LANG", "LC_ALL", "LC_CTYPE", "VIRTUAL_ENV", "LD_LIBRARY_PATH",
         "PYDEVD_DISABLE_FILE_VALIDATION", "JUPYTER_PLATFORM_DIRS", "TZ")
_KEEP_PREFIXES = ("GPUPERF_", "NUMBA_", "CUDA_", "NVIDIA_")


def _env(home: str) -> dict:
    env = {k: val for k, val in os.environ.items()
           if k in _KEEP or k.startswith(_KEEP_PREFIXES)}
    env.update(HOME=home, MPLCONFIGDIR=f"{home}/.matplotlib", IPYTHONDIR=f"{home}/.ipython",
               NUMBA_CACHE_DIR=f"{home}/.numba", PYTHONDONTWRITEBYTECODE="1",
               JUPYTER_RUNTIME_DIR=f"{home}/.jupyter-runtime")
    return env


def _extra_env(env) -> dict:
    if env is None:
        return {}
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(val, str)
                                            for k, val in env.items()):
        raise TypeError(f"env must be a dict of strings to strings (variables for the run), "
                        f"not {env!r}.")
    return dict(env)


def _readable() -> list[str]:
    """What the kernel needs to read: the Python environment and every folder on the path
    (the course's package among them), shown again read-only above the hidden folders."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix,
             str(Path(__file__).resolve().parent.parent)}  # the folder holding gpuperf/
    paths.update(site.getsitepackages() + [site.getusersitepackages()])
    paths.update(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)
    paths.update(p for p in sys.path if p and Path(p).is_dir() and "site-packages" in p)
    return sorted(p for p in {str(Path(p).resolve()) for p in paths} if Path(p).exists())


def _own_tasks() -> int:
    """Processes and threads of this user now (RLIMIT_NPROC counts them all without a
    sandbox)."""
    uid, n = os.getuid(), 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if os.stat(f"/proc/{pid}").st_uid == uid:
                    n += len(os.listdir(f"/proc/{pid}/task"))
            except OSError:
                pass
    return n


def limited(argv: list[str], limits: Limits, *, sandboxed: bool) -> list[str]:
    """``argv`` run under ``limits`` (a small Python stub sets them and execs it)."""
    argv = _argv(argv)
    if not isinstance(limits, Limits):
        raise TypeError(f"limits must be a sandbox.Limits, not {type(limits).__name__}.")
    sets = []
    if limits.memory_bytes:
        sets.append(("RLIMIT_DATA", limits.memory_bytes))
    if limits.processes:
        sets.append(("RLIMIT_NPROC",
                     limits.processes if sandboxed else _own_tasks() + limits.processes))
    if limits.cpu_seconds:
        sets.append(("RLIMIT_CPU", limits.cpu_seconds))
    if limits.file_bytes:
        sets.append(("RLIMIT_FSIZE", limits.file_bytes))
    stub = ("import os, resource as r, sys\n"
            f"for k, n in {sets!r}:\n"
            "    r.setrlimit(getattr(r, k), (n, n))\n"
            "os.execv(sys.argv[1], sys.argv[1:])")
    return [sys.executable, "-c", stub, *argv]


def command(argv: list[str], *, work: Path, rundir: Path, hide: list[Path] = (),
            limits: Limits = Limits(), env: dict | None = None) -> tuple[list[str], dict]:
    """``(argv, env)`` that run ``argv`` contained: in bubblewrap if ``available()``, with
    ``work`` (its working folder) and ``rundir`` (the kernel's sockets and verdict log)
    writable, the folders of ``hide`` (submissions, solutions, the gradebook) hidden besides
    the home folders, and ``limits``. Without bubblewrap, only the limits. ``env``: more
    variables for the run (strings), on top of the few it keeps of this process's."""
    argv = _argv(argv)
    work, rundir = _folder(work, "work").resolve(), _folder(rundir, "rundir").resolve()
    extra = _extra_env(env)
    home = str(rundir / "home")
    Path(home).mkdir(parents=True, exist_ok=True)
    env = {**_env(home), **extra}
    if available() is not None:
        return limited(argv, limits, sandboxed=False), {**os.environ, **env}
    if not isinstance(limits, Limits):
        raise TypeError(f"limits must be a sandbox.Limits, not {type(limits).__name__}.")
    box = ["bwrap", "--ro-bind", "/", "/"]
    gpu = any(Path("/dev").glob("nvidia*"))
    box += ["--dev-bind", "/dev", "/dev"] if gpu else ["--dev", "/dev"]
    size = ["--size", str(limits.tmp_bytes)] if limits.tmp_bytes and _has_size() else []
    box += ["--proc", "/proc", *size, "--tmpfs", "/dev/shm"]
    hidden = ["/tmp", "/var/tmp", "/home", "/root", "/run", "/mnt", "/media", "/srv",
              os.path.expanduser("~"), os.getcwd(), *map(str, hide)]
    # Hidden: an empty folder in place of each (read-only, but for the private temp folders).
    private = {"/tmp", "/var/tmp"}
    shown = [p for p in dict.fromkeys(str(Path(h).resolve()) for h in hidden)
             if Path(p).is_dir() and p != "/"]
    # A folder inside another hidden one is hidden with it (a mount point of its own would
    # show its name in the empty parent).
    shown = [p for p in shown if not any(p.startswith(q.rstrip("/") + "/") for q in shown)]
    for p in shown:
        box += [*(size if p in private else []), "--tmpfs", p]
    for p in _readable():
        box += ["--ro-bind", p, p]
    box += ["--bind", str(work), str(work), "--bind", str(rundir), str(rundir)]
    for p in shown:
        if p not in private:
            box += ["--remount-ro", p]
    box += ["--unshare-all", "--die-with-parent", "--chdir", str(work), "--clearenv"]
    for k, val in env.items():
        box += ["--setenv", k, val]
    box = box + ["--"] + limited(argv, limits, sandboxed=True)
    group = _pids_group(rundir, limits)
    if group:
        # As root, RLIMIT_NPROC binds nobody: a pids cgroup holds the sandbox's processes.
        join = ("import os, sys\n"
                f"open({str(group / 'cgroup.procs')!r}, 'w').write(str(os.getpid()))\n"
                "os.execvp(sys.argv[1], sys.argv[1:])")
        box = [sys.executable, "-c", join, *box]
    return box, env


@lru_cache(maxsize=1)
def _has_size() -> bool:
    """Whether this bubblewrap sizes a tmpfs (``--size``, bubblewrap 0.8 and later)."""
    try:
        run = subprocess.run(["bwrap", "--help"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return "--size" in run.stdout + run.stderr


_CGROUP_PIDS = Path("/sys/fs/cgroup/pids")  # cgroup v1's pids controller, where it is mounted


def _pids_group(rundir: Path, limits: Limits) -> Path | None:
    """A fresh pids cgroup holding at most ``limits.processes``, for a grader run as root
    (whom RLIMIT_NPROC does not bind) where the pids controller is writable; else None.
    Kept for ``release`` (``_GROUPS``), out of the student's reach."""
    if os.geteuid() != 0 or not limits.processes or not os.access(_CGROUP_PIDS, os.W_OK):
        return None
    group = _CGROUP_PIDS / f"gpuperf-grade-{os.urandom(6).hex()}"
    try:
        group.mkdir()
        (group / "pids.max").write_text(str(limits.processes))
    except OSError:
        return None
    _GROUPS.setdefault(str(Path(rundir).resolve()), []).append(group)
    return group


# The pids cgroups made for each run folder, kept in the grader's memory: a note in the run
# folder (as before) was the student's kernel's to write, and ``release`` removed, as root,
# whatever cgroups it named, waiting 30 s on each that was busy.
_GROUPS: dict = {}


def release(rundir: Path) -> None:
    """Remove what ``command`` made for runs in ``rundir`` (their pids cgroups), once the
    kernel has ended."""
    import time

    for group in _GROUPS.pop(str(_folder(rundir, "rundir").resolve()), []):
        if group.parent != _CGROUP_PIDS or not group.is_dir():
            continue
        for _ in range(300):  # the kernel's processes may take a moment to end
            try:
                group.rmdir()
                break
            except OSError:
                time.sleep(0.1)


KERNEL_OUTPUT = "kernel-output.txt"  # in rundir: what the kernel process itself wrote


def kernel_manager(*, work: Path, rundir: Path, hide: list[Path] = (), limits: Limits = Limits(),
                   env: dict | None = None):
    """A Jupyter kernel manager whose kernel runs ``command(...)``-contained (``env``: more
    variables for it), talking to the grader over Unix sockets in ``rundir`` (no network
    needed)."""
    from jupyter_client.manager import AsyncKernelManager

    _folder(work, "work")
    rundir = _folder(rundir, "rundir").resolve()
    if not isinstance(limits, Limits):
        raise TypeError(f"limits must be a sandbox.Limits, not {type(limits).__name__}.")
    env = _extra_env(env)
    env = _extra_env(env)

    class ContainedKernelManager(AsyncKernelManager):
        def format_kernel_cmd(self, extra_arguments=None):
            argv = super().format_kernel_cmd(extra_arguments)
            argv, self._contained_env = command(argv, work=work, rundir=rundir, hide=hide,
                                                limits=limits, env=env)
            return argv

        async def _async_launch_kernel(self, kernel_cmd, **kw):
            kw["env"] = self._contained_env if available() is None else {
                **kw.get("env", os.environ), **self._contained_env}
            # The kernel process's own output (ipykernel's banner, ten lines a notebook, and
            # anything written to its file descriptors rather than to a cell) goes to a file
            # in ``rundir``, not into the grader's terminal; cell outputs reach the grader
            # as messages, as before.
            log = open(rundir / KERNEL_OUTPUT, "ab")  # noqa: SIM115 - the kernel holds it
            kw["stdout"] = kw["stderr"] = log
            try:
                return await super()._async_launch_kernel(kernel_cmd, **kw)
            finally:
                log.close()  # the child has its own copy of the descriptor

        async def _async_interrupt_kernel(self):
            # By a message on the control channel, never SIGINT to the process group: the
            # group holds bubblewrap itself, which a SIGINT ends (and the kernel with it).
            if available() is not None:
                return await super()._async_interrupt_kernel()
            msg = self.session.msg("interrupt_request", content={})
            self._connect_control_socket()
            self.session.send(self._control_socket, msg)

        interrupt_kernel = _async_interrupt_kernel

    km = ContainedKernelManager(kernel_name="python3", transport="ipc",
                                ip=str(rundir / "kernel"),
                                connection_file=str(rundir / "kernel.json"))
    return km


class DiskWatch:
    """Stop a kernel whose writable folders grow past ``limit`` bytes of the grader's disk.

    The working and run folders are the grader's own disk, bound into the sandbox (the grader
    reads the verdict log and the recorded values from them), so no size limit of a mount holds
    them, and RLIMIT_FSIZE bounds only each file. A thread measures the blocks the folders use
    (``st_blocks``: a sparse file counts for what it holds) every ``every`` seconds, and past
    ``limit``, or past ``max_entries`` files and folders, calls ``stop()`` once. Writing at disk
    speed between two looks can pass the limit by a second's worth of writes; the point is that
    no notebook can fill the disk the rest of the class is graded on.
    """

    def __init__(self, folders, limit: int, stop, *, every: float = 0.5,
                 max_entries: int = 100_000):
        import threading

        if isinstance(folders, (str, os.PathLike)) or not all(
                isinstance(f, (str, os.PathLike)) for f in folders):
            raise TypeError(f"folders must be a list of folder paths, not {folders!r:.80}.")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"limit={limit!r} must be a positive number of bytes.")
        if not callable(stop):
            raise TypeError(f"stop must be a function to call past the limit, not "
                            f"{type(stop).__name__}.")
        self.folders = [Path(f) for f in folders]
        self.limit, self.stop, self.every, self.max_entries = limit, stop, every, max_entries
        self.tripped: str | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="gpuperf-diskwatch")

    def used(self) -> tuple[int, int]:
        """``(bytes, entries)`` the folders take now (stops counting past ``max_entries``)."""
        total = entries = 0
        for folder in self.folders:
            for root, dirs, files in os.walk(folder):
                for name in dirs + files:
                    entries += 1
                    try:
                        total += os.lstat(os.path.join(root, name)).st_blocks * 512
                    except OSError:  # removed while we looked
                        pass
                if entries > self.max_entries:
                    return total, entries
        return total, entries

    def _loop(self) -> None:
        while not self._done.wait(self.every):
            used, entries = self.used()
            if used > self.limit or entries > self.max_entries:
                self.tripped = (f"its folders took {used / GIB:.1f} GiB of the grader's disk "
                                f"(the limit is {self.limit / GIB:.1f} GiB)"
                                if used > self.limit else
                                f"it made over {self.max_entries:,} files and folders")
                self.stop()
                return

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._done.set()
        self._thread.join()
