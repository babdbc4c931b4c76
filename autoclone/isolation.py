"""Every run of the user's script sees a copy-on-write world: nothing outside its copy changes.

A training script writes where its author keeps things: checkpoints at absolute paths, logs
under ``$HOME``, an output folder it clears at start-up, a ``checkpoints -> /scratch`` link.
A trial that ran those writes for real would lose data that took days to compute, and a
trial that resumed from an earlier trial's checkpoint would judge the wrong program.

On Linux each trial process enters a new user namespace and a private mount namespace (the
kernel's own interfaces, as ``unshare -Urm`` does; the warm fork path keeps working, since a
forked child is single-threaded) and covers every writable file system with an overlay whose
upper layer is a folder of the trial's own (``layers/N``). The script can create, overwrite,
delete and read back its writes for the length of one run, C code's writes (sqlite, HDF5,
``torch.save``) included; none reaches the real files, and the layers go with the trial's
folder. Only the session folder (the trial's copy, its result) and the trial's ``TMPDIR``
are bound back through the overlays. A mount that holds other mounts (``/`` holding
``/proc``) cannot be one overlay: each folder of it is overlaid on its own, down to the
mounts, and the mount itself is made read-only, so a file at that level cannot be written.

What the overlays caught is read back by the parent (``changes``): each path outside the
copy that the run wrote or deleted, and, from an audit hook in the trial (``watch``), the
line of the user's that did it.

Where namespaces are not available (macOS, a container that forbids them) the same audit
hook guards instead: a Python-level write outside the trial's copy and its temp folder is
refused before it happens, and autoclone stops, naming the path and the line (writes made
by C code are not seen by the guard).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autoclone import lifecycle, network

#: How trials are isolated: ``namespace`` (the copy-on-write world), ``guard`` (writes
#: outside refused by an audit hook), ``allow`` (the guard records, refuses nothing: the
#: user accepted the risk with ``--allow-outside-writes``).
NAMESPACE, GUARD, ALLOW = "namespace", "guard", "allow"
#: The environment variable that carries the mode to the trial (and the tests' override).
MODE_VAR = "AUTOCLONE_ISOLATION"
#: Set in a process once it is isolated: its children (DataLoader workers, torchrun's
#: ranks) share its world and must not make one of their own.
_ENTERED = "AUTOCLONE_ISOLATED"
#: Where the trial's layers live, relative to the trial folder; ``index.json`` maps each
#: layer to the real folder it covers.
LAYERS = "layers"

_CLONE_NEWNS, _CLONE_NEWUSER = 0x20000, 0x10000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 0x4000, 1 << 18
_MS_NOATIME, _MS_NODIRATIME, _MS_RELATIME, _MS_STRICTATIME = 1024, 2048, 1 << 21, 1 << 24
#: A mount's own flags that a user namespace may not drop when it remounts it read-only.
_KEPT_FLAGS = {"nosuid": _MS_NOSUID, "nodev": _MS_NODEV, "noexec": _MS_NOEXEC,
               "noatime": _MS_NOATIME, "nodiratime": _MS_NODIRATIME,
               "relatime": _MS_RELATIME, "strictatime": _MS_STRICTATIME}  # fmt: skip
#: File systems with nothing of the user's to lose (or that an overlay cannot stand on:
#: device nodes do not open through a mount made in a user namespace).
_PSEUDO = frozenset(
    "proc sysfs devtmpfs devpts cgroup cgroup2 mqueue debugfs tracefs securityfs pstore bpf "
    "fusectl configfs binfmt_misc autofs hugetlbfs nsfs efivarfs selinuxfs rpc_pipefs "
    "ramfs".split()
)


class IsolationError(Exception):
    """The trial could not be isolated; it must not run."""


@dataclass(frozen=True)
class Mount:
    point: str
    fstype: str
    options: frozenset[str]

    @property
    def writable(self) -> bool:
        return "rw" in self.options and self.fstype not in _PSEUDO


@dataclass(frozen=True)
class Change:
    """A path outside the trial's copy that a run wrote or deleted, with the user's line
    that did it when the audit hook saw it (``file``, ``line``; empty for C code)."""

    path: str
    action: str  # "created", "wrote" (an existing file), "deleted" or "replaced" (a folder)
    file: str = ""
    line: int = 0

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.file else ""


# -- in the trial ---------------------------------------------------------------------


def entering() -> bool:
    """Whether this process is yet to enter the trial's namespaces."""
    return os.environ.get(MODE_VAR) == NAMESPACE and not os.environ.get(_ENTERED)


def enter_behind_keeper() -> None:
    """Isolate the trial in a forked child while this process stays outside, waiting, and
    then exits as the child did: for a trial (or launch) that cleans up after autoclone's
    death itself (``lifecycle.group_dies_with_parent``), since inside, the session folder
    it would remove is a mount point, and nothing else is real. Same process group: a
    timeout or a stop signal kills both."""
    if not entering():
        return
    pid = os.fork()
    if pid == 0:
        enter_from_env()
        return
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except ChildProcessError:
            os._exit(1)
    code = os.waitstatus_to_exitcode(status)
    os._exit(128 - code if code < 0 else code)


def enter_from_env() -> None:
    """Isolate this trial process as ``AUTOCLONE_ISOLATION`` says, once per world: the
    ranks and workers it starts share it. A failure ends the trial before the script
    runs: no run is ever unisolated by accident."""
    if not entering():
        return
    trial = Path(os.environ["AUTOCLONE_RESULT"]).parent
    keep = [os.environ["AUTOCLONE_SESSION"], os.path.realpath(os.environ["TMPDIR"]), *shared()]
    try:
        enter(keep, trial / LAYERS, online=network.allowed())
    except (OSError, IsolationError) as exc:
        sys.stderr.write(f"{FAILED}: {exc}\n")
        sys.stderr.flush()
        os._exit(_NOT_ISOLATED)
    os.environ[_ENTERED] = "1"


#: Folders the trials write for real, bound through the overlays (``os.pathsep`` between
#: them): a cache worth filling once, or a test's window on what its trials do.
BIND_VAR = "AUTOCLONE_BIND"


def shared() -> list[str]:
    """The existing folders of ``AUTOCLONE_BIND``, as real paths."""
    folders = os.environ.get(BIND_VAR, "").split(os.pathsep)
    return [os.path.realpath(f) for f in folders if f and os.path.isdir(f)]


#: What a trial that could not be isolated says on its stderr.
FAILED = "autoclone: cannot isolate the trial"
#: The exit status of a trial that could not be isolated (the parent stops, see
#: ``autoclone.trial``).
_NOT_ISOLATED = 86


def enter(keep: Sequence[str], layers: Path, online: bool = False) -> None:
    """Make this (single-threaded) process's world copy-on-write outside ``keep``, and,
    unless ``online``, cut off from every network but its own loopback."""
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.geteuid(), os.getegid()
    _check(libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS), "unshare")
    _map_ids(uid, gid)
    if not online:
        network.cut(libc)
    _mount(libc, None, "/", None, _MS_REC | _MS_PRIVATE)
    handles = [os.open(path, os.O_PATH | os.O_DIRECTORY) for path in keep]
    mounts = _mounts()
    covers = {m.point: _plan(m, mounts) for m in mounts.values() if m.writable}
    plan = [folder for folders in covers.values() for folder in folders]
    layers.mkdir()
    for n in range(len(plan)):
        (layers / str(n) / "u").mkdir(parents=True)
        (layers / str(n) / "w").mkdir()
    (layers / "index.json").write_text(json.dumps(plan))
    # Overlays first (each holds its own clone of the upper's mount, which stays
    # writable), then the kept folders bound back (a bind copies the read-only flag of
    # its source), then the mounts covered folder by folder made read-only.
    # The layers, named through a handle: once /tmp is overlaid, their path would lead
    # into the overlay, which cannot be an upper layer.
    held = os.open(layers, os.O_PATH | os.O_DIRECTORY)
    for n, folder in enumerate(plan):
        _overlay(libc, folder, Path(f"/proc/self/fd/{held}/{n}"))
    os.close(held)
    for path, handle in zip(keep, handles, strict=True):
        _mount(libc, f"/proc/self/fd/{handle}", path, None, _MS_BIND | _MS_REC)
        os.close(handle)
    for point, folders in covers.items():
        if folders != [point]:
            _read_only(libc, point, mounts[point].options)
    os.chdir(os.getcwd())  # the working directory, seen through the new mounts


def _map_ids(uid: int, gid: int) -> None:
    """The same ids inside as outside: root keeps every id (files of other users stay
    theirs), any other user keeps its own."""
    if uid == 0:
        with contextlib.suppress(OSError):
            Path("/proc/self/uid_map").write_text("0 0 4294967295\n")
            Path("/proc/self/gid_map").write_text("0 0 4294967295\n")
            return
    Path("/proc/self/setgroups").write_text("deny")
    Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1\n")
    Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1\n")


def _mounts() -> dict[str, Mount]:
    """The mounts this namespace sees, the topmost one at each point."""
    out: dict[str, Mount] = {}
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        sep = fields.index("-")
        point = _unescape(fields[4])
        out.pop(point, None)  # a mount stacked over another hides it
        out[point] = Mount(point, fields[sep + 1], frozenset(fields[5].split(",")))
    return out


def _unescape(text: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        text = text.replace(code, char)
    return text


def _plan(mount: Mount, mounts: dict[str, Mount]) -> list[str]:
    """The folders to overlay to cover one writable mount: the mount itself, or, when
    other mounts sit inside it, each folder that holds none, recursing into those that
    do (what is left, files at those levels, is made read-only)."""
    base = mount.point.rstrip("/") + "/"
    inner = [p for p in mounts if p != mount.point and p.startswith(base)]
    if not os.path.isdir(mount.point):
        return []  # a file bind-mounted on its own: made read-only
    if not inner:
        return [mount.point]
    return list(_cover(mount.point, inner))


def _cover(folder: str, inner: list[str]) -> Iterator[str]:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        raise IsolationError(f"cannot list {folder}: {exc.strerror}") from exc
    for entry in entries:
        if entry.path in inner or not entry.is_dir(follow_symlinks=False):
            continue  # a mount of its own, or a file: read-only with its mount
        if any(p.startswith(entry.path + "/") for p in inner):
            yield from _cover(entry.path, inner)
        else:
            yield entry.path


def _overlay(libc: Any, path: str, layer: Path) -> None:
    options = (f"lowerdir={_escape(path)},upperdir={_escape(str(layer / 'u'))},"
               f"workdir={_escape(str(layer / 'w'))},userxattr")  # fmt: skip
    _mount(libc, "overlay", path, "overlay", 0, options)


def _escape(path: str) -> str:
    """Overlay options are split at commas and layers at colons: escape both."""
    return path.replace("\\", "\\\\").replace(",", "\\,").replace(":", "\\:")


def _read_only(libc: Any, point: str, options: frozenset[str]) -> None:
    flags = _MS_REMOUNT | _MS_BIND | _MS_RDONLY
    for name, bit in _KEPT_FLAGS.items():
        if name in options:
            flags |= bit
    _mount(libc, None, point, None, flags)


def _mount(
    libc: Any, source: str | None, target: str, fstype: str | None, flags: int,
    data: str | None = None,
) -> None:  # fmt: skip
    def raw(text: str | None) -> bytes | None:
        return os.fsencode(text) if text is not None else None

    result = libc.mount(raw(source), raw(target), raw(fstype), flags, raw(data))
    _check(result, f"mount {target}")


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise IsolationError(f"{what}: {os.strerror(code)}")


# -- the audit hook: which line wrote, and the guard -------------------------------------

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
#: Audit events that change a path, and which of their arguments are the paths changed.
_EVENTS: dict[str, tuple[int, ...]] = {
    "os.remove": (0,), "os.rmdir": (0,), "os.mkdir": (0,), "os.truncate": (0,),
    "shutil.rmtree": (0,), "os.rename": (0, 1), "os.link": (1,), "os.symlink": (1,),
    "shutil.move": (0, 1), "sqlite3.connect": (0,),
}  # fmt: skip
#: Paths a trial writes that are not the user's: the null device, this process's files.
_ALWAYS = ("/dev/", "/proc/self/")
#: Lines kept per run: a script that writes thousands of files is named by its first ones.
_KEEP = 200


@dataclass
class Watch:
    """What the audit hook saw: each path written (real path -> the user's line), each
    host beyond this machine the run tried to reach, and in guard mode the first write
    it refused."""

    root: str
    allowed: tuple[str, ...]
    guard: bool
    seen: dict[str, tuple[str, int]]
    refused: dict[str, Any] | None = None
    offline: bool = True  # trials have no network (``autoclone.network``)
    cut: bool = False  # the kernel cut it (a namespace), else this hook refuses sends
    hosts: dict[str, tuple[str, int]] = field(default_factory=dict)

    def reach(self, event: str, args: tuple[Any, ...]) -> None:
        """Note a host beyond this machine; without namespaces, refuse to send to it."""
        host = network.outward(event, args, loopback=self.cut) if self.offline else None
        if host is None:
            return
        if len(self.hosts) < _KEEP:
            self.hosts.setdefault(host, self._line())
        if not self.cut:
            raise network.refuse(event, host)

    def note(self, path: Any, follow: bool) -> None:
        real = _real(path, follow)
        if real is None or real.startswith(_ALWAYS):
            return
        inside = any(real == a or real.startswith(a + os.sep) for a in self.allowed)
        if inside:
            return
        where = self._line()
        if len(self.seen) < _KEEP:
            self.seen.setdefault(real, where)
        if self.guard:
            if self.refused is None:
                self.refused = {"path": real, "frames": [list(where)] if where[0] else []}
            raise PermissionError(errno.EACCES, "autoclone refuses writes outside the "
                                  "trial's copy (no isolation here)", real)  # fmt: skip

    def _line(self) -> tuple[str, int]:
        frame = sys._getframe(1)
        while frame is not None:
            if frame.f_code.co_filename.startswith(self.root):
                return frame.f_code.co_filename, frame.f_lineno
            frame = frame.f_back  # type: ignore[assignment]
        return "", 0

    def result(self) -> dict[str, Any]:
        return {"writes": {k: list(v) for k, v in self.seen.items()}, "refused": self.refused,
                "hosts": {k: list(v) for k, v in self.hosts.items()}}


def _real(path: Any, follow: bool) -> str | None:
    """The real path a write reaches; a deletion or rename reaches the link itself."""
    if isinstance(path, int) or path is None:
        return None
    try:
        text = os.fsdecode(os.fspath(path))
    except TypeError:
        return None
    full = os.path.abspath(text)
    if follow:
        return os.path.realpath(full)
    head, tail = os.path.split(full)
    return os.path.join(os.path.realpath(head), tail)


def watch(mode: str, root: str, allowed: Sequence[str]) -> Watch:
    """Install the audit hook (and a ``torch.save`` wrapper: it writes from C++) that
    records which line wrote outside the trial's copy; in guard mode it refuses."""
    seen: dict[str, tuple[str, int]] = {}
    state = Watch(root, tuple(os.path.realpath(a) for a in allowed), mode == GUARD, seen,
                  offline=not network.allowed(), cut=mode == NAMESPACE)  # fmt: skip

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event.startswith("socket."):
            state.reach(event, args)
            return
        if event == "open":
            mode_, flags = (args + (None, None))[1:3]
            writes = isinstance(flags, int) and flags & _WRITE_FLAGS
            if writes or (isinstance(mode_, str) and any(c in mode_ for c in "wax+")):
                state.note(args[0], True)
            return
        positions = _EVENTS.get(event)
        if positions is not None:
            for n in positions:
                if n < len(args):
                    state.note(args[n], event in ("os.mkdir", "sqlite3.connect"))

    sys.addaudithook(hook)
    _wrap_torch_save(state)
    return state


def _wrap_torch_save(state: Watch) -> None:
    try:
        import torch
    except ImportError:
        return
    original: Callable[..., Any] = torch.save

    def save(obj: Any, f: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(f, (str, os.PathLike)):
            state.note(f, True)
        return original(obj, f, *args, **kwargs)

    save.__wrapped__ = original  # type: ignore[attr-defined]
    torch.save = save


# -- in the parent ------------------------------------------------------------------------

_PROBE = ("import sys, pathlib; from autoclone.isolation import enter; "
          "d = pathlib.Path(sys.argv[1]); enter([str(d)], d / 'layers')")  # fmt: skip
_probed: dict[str, str] = {}
_probing = threading.Lock()


def available(scratch: Path | None = None) -> str:
    """Why trials cannot be isolated here ('' when they can), tried once per process in a
    throwaway child: an unprivileged user namespace with overlays on every file system.
    Its folder goes in ``scratch`` (the session's, removed with it whatever happens)."""
    with _probing:  # a folder run's scripts start together: one probe
        if "why" not in _probed:
            _probed["why"] = _probe(scratch)
    return _probed["why"]


def _probe(scratch: Path | None) -> str:
    """The probe's folder is made and removed here, the child tracked like a trial: a stop
    signal kills it, and nothing is left behind."""
    if not sys.platform.startswith("linux"):
        return f"no mount namespaces on {sys.platform}"
    package = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": package}
    folder = tempfile.mkdtemp(prefix="probe-", dir=scratch)
    try:
        child = subprocess.Popen([sys.executable, "-S", "-c", _PROBE, folder], env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                 start_new_session=True)  # fmt: skip
        lifecycle.track(child.pid)
        try:
            _, stderr = child.communicate(timeout=30)
        finally:
            lifecycle.kill_group(child.pid)
            lifecycle.untrack(child.pid)
            child.wait()
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if child.returncode == 0:
        return ""
    lines = stderr.strip().splitlines()
    return lines[-1] if lines else f"exit status {child.returncode}"


def changes(trial: Path, writes: dict[str, Any], cap: int = _KEEP) -> list[Change]:
    """Every path outside the copy that the trial wrote or deleted, read off its upper
    layers; each with the line that wrote it, or wrote the nearest folder above it."""
    try:
        index = json.loads((trial / LAYERS / "index.json").read_text())
    except (OSError, ValueError):
        return []
    out: list[Change] = []
    for n, lower in enumerate(index):
        for path, action in _upper(trial / LAYERS / str(n) / "u", lower):
            out.append(_attributed(path, action, writes))
            if len(out) >= cap:
                return out
    return out


def _upper(upper: Path, lower: str) -> Iterator[tuple[str, str]]:
    """What one upper layer holds: files written, whiteouts (deletions), new folders
    (named once, not file by file); folders copied up only to hold a change are
    walked through."""
    for folder, dirs, files in os.walk(upper):
        rel = os.path.relpath(folder, upper)
        real = os.path.normpath(os.path.join(lower, rel))
        for name in list(dirs):
            target = os.path.join(real, name)
            if not os.path.lexists(target):
                dirs.remove(name)
                yield target, "created"
            elif _opaque(os.path.join(folder, name)):
                yield target, "replaced"  # deleted, then made again (rmtree, makedirs)
        for name in files:
            target = os.path.join(real, name)
            try:
                info = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            if stat.S_ISCHR(info.st_mode) and info.st_rdev == 0:
                yield target, "deleted"
            else:
                yield target, "wrote" if os.path.lexists(target) else "created"


def _opaque(folder: str) -> bool:
    """An upper folder that hides everything below it in the lower one."""
    try:
        return os.getxattr(folder, "user.overlay.opaque", follow_symlinks=False) == b"y"
    except OSError:
        return False


def _attributed(path: str, action: str, writes: dict[str, Any]) -> Change:
    probe = path
    while True:
        where = writes.get(probe)
        if where:
            return Change(path, action, str(where[0]), int(where[1]))
        parent = os.path.dirname(probe)
        if parent == probe:
            return Change(path, action)
        probe = parent
