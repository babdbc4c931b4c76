"""The project folder as trials see it: read once per session, a cheap tree per trial.

Copying the whole folder for every trial made a 2 GB data folder cost a 2 GB copy per
trial, and a folder of 20,000 small samples 20,000 file creations. Now the folder is
copied once, into a private store in the session's temporary directory, and each trial's
tree is built from the store: directories made, files hard-linked (no data copied, no
inode created). A trial that writes into a file in place changes only the store's copy,
which is checked after every trial (size, time, mode) and copied again from the user's
file if it changed; the user's own files are never linked into a trial, so no trial can
write to them. (With ``-j`` a trial may see another's in-place write while both run.)

Symlinks are recreated so that they resolve as they do in the user's folder: one that
points inside the project stays relative (it resolves inside the tree), one that points
outside becomes absolute (a relative ``data -> ../shared_data`` would dangle in the
tree). Entries a trial cannot use and a copy cannot read (named pipes, sockets, devices,
unreadable files or folders) are skipped and listed in ``skipped``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

#: Folders that are never part of what a script reads: VCS data, caches, environments.
IGNORED = frozenset(
    {".git", ".hg", ".svn", "__pycache__", ".venv", "venv", ".tox", "node_modules",
     ".mypy_cache", ".pytest_cache", ".ruff_cache"}
)  # fmt: skip

#: A file in every session directory, so a snapshot never copies a session (its own,
#: when the script lives in the temp directory, or another autoclone's).
MARKER = ".autoclone-session"

_KINDS = {
    stat.S_IFIFO: "a named pipe",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
}


class TooLarge(Exception):  # noqa: N818 - a verdict on the folder, worded for the user
    """The folder holds more than the temporary directory can take."""

    def __init__(self, source: Path, room: int) -> None:
        super().__init__(
            f"the project folder {source} holds more than the {room / 2**30:.1f} GB the "
            "temporary directory can take for the trials' copy: pass a smaller --root, or "
            "point TMPDIR at a larger disk"
        )


@dataclass
class Entry:
    """One thing in the tree. ``stamp`` is the store copy's (size, mtime, mode)."""

    rel: str
    kind: str  # "dir", "file" or "link"
    target: str = ""  # a link's target, as the tree must hold it
    stamp: tuple[int, int, int] = (0, 0, 0)


@dataclass
class Snapshot:
    """The user's folder as read once; ``build`` makes one trial's tree from it."""

    source: Path
    store: Path
    entries: list[Entry] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "name (why)", for a note
    room: int | None = None  # bytes the store may take
    size: int = 0  # bytes of the regular files listed
    device: int = 0  # the folder's file system: /proc or /sys mounted below it are not data

    @classmethod
    def take(cls, source: Path, store: Path, room: int | None = None) -> Snapshot:
        """List the folder (raising ``TooLarge`` past ``room`` bytes, before anything is
        copied), then copy it into ``store``."""
        snapshot = cls(source.resolve(), store, room=room)
        snapshot.device = os.stat(snapshot.source).st_dev
        snapshot._walk("")
        store.mkdir(parents=True)
        kept = []
        for entry in snapshot.entries:
            if entry.kind == "dir":
                (store / entry.rel).mkdir()
            elif entry.kind == "file" and not snapshot._copy(entry):
                continue
            kept.append(entry)
        snapshot.entries = kept
        return snapshot

    def _walk(self, rel: str) -> None:
        try:
            with os.scandir(self.source / rel) as listing:
                items = sorted(listing, key=lambda item: item.name)
        except OSError as exc:
            self.skipped.append(f"{rel}/ (cannot be listed: {exc.strerror})")
            return
        for item in items:
            if item.name not in IGNORED and not item.name.endswith(".egg-info"):
                self._add(item, f"{rel}/{item.name}" if rel else item.name)

    def _add(self, item: os.DirEntry[str], rel: str) -> None:
        try:
            info = item.stat(follow_symlinks=False)
        except OSError as exc:
            self.skipped.append(f"{rel} ({exc.strerror})")
            return
        if stat.S_ISLNK(info.st_mode):
            try:
                self.entries.append(Entry(rel, "link", _link_target(Path(item.path), self.source)))
            except OSError as exc:
                self.skipped.append(f"{rel} (a link that cannot be read: {exc.strerror})")
        elif stat.S_ISDIR(info.st_mode):
            if info.st_dev != self.device and os.major(info.st_dev) == 0:
                self.skipped.append(f"{rel}/ (a virtual file system mounted there)")
            elif not _session(item):
                self.entries.append(Entry(rel, "dir"))
                self._walk(rel)
        elif stat.S_ISREG(info.st_mode):
            self.size += info.st_size
            if self.room is not None and self.size > self.room:
                raise TooLarge(self.source, self.room)
            self.entries.append(Entry(rel, "file"))
        else:
            kind = _KINDS.get(stat.S_IFMT(info.st_mode), "not a regular file")
            self.skipped.append(f"{rel} ({kind})")

    def _copy(self, entry: Entry) -> bool:
        try:
            entry.stamp = _store_copy(self.source, self.store, entry.rel)
        except OSError as exc:
            self.skipped.append(f"{entry.rel} (cannot be read: {exc.strerror})")
            return False
        return True

    def build(self, dest: Path, replace: Mapping[str, bytes]) -> None:
        """One trial's tree at ``dest``, with the files in ``replace`` written fresh
        (writable, whatever the original's mode)."""
        dest.mkdir()
        for entry in self.entries:
            target = dest / entry.rel
            if entry.kind == "dir":
                target.mkdir()
            elif entry.kind == "link":
                os.symlink(entry.target, target)
            elif entry.rel not in replace:
                _place(self.store / entry.rel, target)
        for rel, data in replace.items():
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileNotFoundError):
                target.unlink()
            target.write_bytes(data)

    def heal(self) -> list[str]:
        """Copy again every store file a trial changed (in place, through its hard
        link), so the next trial sees the user's data; returns their names."""
        healed = []
        for entry in self.entries:
            if entry.kind == "file" and _stamp(self.store / entry.rel) != entry.stamp:
                with contextlib.suppress(FileNotFoundError):
                    (self.store / entry.rel).unlink()
                with contextlib.suppress(OSError):
                    entry.stamp = _store_copy(self.source, self.store, entry.rel)
                    healed.append(entry.rel)
        return healed


def _session(item: os.DirEntry[str]) -> bool:
    """An autoclone session directory (ours, or another run's): never copied."""
    return item.name.startswith("autoclone-") and os.path.exists(Path(item.path, MARKER))


def _stamp(path: Path) -> tuple[int, int, int]:
    try:
        st = os.stat(path)
    except OSError:
        return (-1, -1, -1)
    return (st.st_size, st.st_mtime_ns, st.st_mode)


def _store_copy(source: Path, store: Path, rel: str) -> tuple[int, int, int]:
    """Copy one file into the store with its mode and times (a script may compare
    mtimes); its stamp."""
    target = store / rel
    shutil.copy2(source / rel, target)
    os.chmod(target, stat.S_IMODE(os.stat(target).st_mode) | stat.S_IRUSR)
    return _stamp(target)


def _place(stored: Path, target: Path) -> None:
    """Hard-link a stored file into a trial's tree; copy it where links are refused."""
    try:
        os.link(stored, target)
    except OSError:
        shutil.copy2(stored, target)


def _link_target(link: Path, root: Path) -> str:
    """What the tree's copy of a symlink must point to, to reach what the user's does."""
    text = os.readlink(link)
    if not os.path.exists(link):
        return text  # dangling here, dangling there
    resolved = Path(os.path.realpath(link))
    if not resolved.is_relative_to(root):
        return str(resolved)
    return os.path.relpath(resolved, link.parent)  # stays inside the tree, whatever its name
