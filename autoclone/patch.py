"""Apply text edits, render them as a verified unified diff, and write files safely.

Hunks are built straight from the edits rather than by diffing old and new text: the
edits already say exactly which lines change, so the diff can never show a spurious
change that a line-matching heuristic invented. Every rendered diff is re-parsed and
re-applied before it is returned, so a diff that would not reproduce the edited file
is an internal error, never a silent wrong patch.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import os
import re
import tokenize
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import unidiff

from autoclone import lifecycle
from autoclone.edits import TextEdit

__all__ = [
    "FileChangedError",
    "PatchError",
    "SourceFile",
    "apply_edits",
    "check_patch",
    "render_diff",
    "render_diff_bytes",
    "write_files",
]

#: Line endings as Python's tokenizer (and so LibCST, which produces edit positions) sees them.
_PY_EOL = re.compile(r"\r\n|\r|\n")
_NO_EOL_MARKER = "\\ No newline at end of file\n"
_BOM = "\ufeff"

#: One diff body line: kind (" ", "-" or "+") and the line with its own ending, if any.
_Op = tuple[str, str]
#: An edit resolved to a character offset in a text, with its text in the file's newline style.
_Resolved = tuple[int, str, int]  # offset, inserted text, characters deleted after it


class PatchError(Exception):
    """The rendered diff or the edits are inconsistent; a bug, not a user error."""


class FileChangedError(PatchError):
    """A file changed on disk after it was read, so writing would clobber someone's work."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"{path} changed on disk since it was read; not writing any file")
        self.path = path


@dataclass(frozen=True)
class SourceFile:
    """A file exactly as read, so edits, diffs and writes all refer to the same bytes."""

    path: Path
    raw: bytes
    text: str
    encoding: str
    newline: str
    sha256: str

    @classmethod
    def read(cls, path: Path) -> SourceFile:
        """Read and decode the way Python would, keeping line endings so offsets stay true.

        Raises ``OSError``, ``SyntaxError`` (bad coding cookie) or ``UnicodeDecodeError``.
        """
        absolute = Path(os.path.abspath(path))
        raw = absolute.read_bytes()
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        text = raw.decode(encoding)
        first_eol = _PY_EOL.search(text)
        newline = "\r\n" if first_eol is not None and first_eol.group() == "\r\n" else "\n"
        digest = hashlib.sha256(raw).hexdigest()
        return cls(absolute, raw, text, encoding, newline, digest)

    @property
    def has_bom(self) -> bool:
        """The BOM is not part of ``text`` but is part of the bytes a diff must match."""
        return self.encoding == "utf-8-sig"


# --------------------------------------------------------------------------- applying


def _resolve(src: SourceFile, edits: Sequence[TextEdit]) -> list[_Resolved]:
    """Turn (line, col) into offsets once, so every later step is plain string slicing.

    Line N+1 col 0 of a file ending in a newline is accepted: it means "append".
    """
    starts = [0]
    ends: list[int] = []
    for match in _PY_EOL.finditer(src.text):
        ends.append(match.start())
        starts.append(match.end())
    ends.append(len(src.text))
    resolved: list[_Resolved] = []
    for edit in edits:
        if not 1 <= edit.line <= len(starts):
            raise PatchError(f"{src.path}: edit {edit} is past the last line")
        start, end = starts[edit.line - 1], ends[edit.line - 1]
        if edit.drop_line:
            following = starts[edit.line] if edit.line < len(starts) else end
            resolved.append((start, "", following - start))
            continue
        if not 0 <= edit.col <= end - start:
            raise PatchError(f"{src.path}: edit {edit} is outside its line")
        if edit.col + edit.delete > end - start:
            raise PatchError(f"{src.path}: edit {edit} deletes past the end of its line")
        if edit.text or edit.delete:
            text = edit.text.replace("\r\n", "\n").replace("\n", src.newline)
            resolved.append((start + edit.col, text, edit.delete))
    return sorted(resolved, key=lambda pair: pair[0])  # stable: same-position order kept


def _splice(text: str, resolved: Sequence[_Resolved], shift: int = 0) -> str:
    """Insert (and delete) at offsets measured against the original text, so positions
    never shift."""
    pieces: list[str] = []
    previous = 0
    for offset, insert, delete in resolved:
        pieces += [text[previous : max(offset - shift, previous)], insert]
        previous = max(offset - shift + delete, previous)
    pieces.append(text[previous:])
    return "".join(pieces)


def apply_edits(src: SourceFile, edits: Sequence[TextEdit]) -> str:
    """The edited text, in the file's own newline style (BOM excluded, as in ``text``)."""
    return _splice(src.text, _resolve(src, edits))


# --------------------------------------------------------------------------- diff body


def _diff_lines(text: str) -> list[str]:
    """Split only on "\\n", as git and patch do; each line keeps its ending."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    return lines + [parts[-1]] if parts[-1] else lines


def _line_ops(line: str, start: int, resolved: Sequence[_Resolved]) -> list[_Op]:
    """Ops for one original line; ``line == ""`` stands for the end of the file.

    Leading whole-line insertions at the start of the line become '+' lines only,
    keeping the original line as context: that is what makes the diff minimal.
    """
    count = 0
    while (
        count < len(resolved)
        and resolved[count][0] == start
        and resolved[count][1][-1:] == "\n"
        and not resolved[count][2]
    ):
        count += 1
    ops: list[_Op] = [("+", new) for new in _diff_lines("".join(r[1] for r in resolved[:count]))]
    rest = resolved[count:]
    if not rest:
        return ops + [(" ", line)] if line else ops
    written = _diff_lines(_splice(line, rest, shift=start))
    if line and written == [line]:  # rewritten to the same text: nothing changed
        return ops + [(" ", line)]
    if line:
        ops.append(("-", line))
    return ops + [("+", new) for new in written]


def _file_ops(old: str, resolved: Sequence[_Resolved]) -> list[_Op]:
    """Ops for the whole file, one original line at a time."""
    lines = _diff_lines(old)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    buckets: list[list[_Resolved]] = [[] for _ in range(len(lines) + 1)]
    for offset, text, delete in resolved:
        index = bisect_right(starts, offset) - 1
        if index == len(lines) and lines and not lines[-1].endswith("\n"):
            index -= 1  # the end of an unterminated last line belongs to that line
        buckets[index].append((offset, text, delete))
    ops: list[_Op] = []
    for index, line in enumerate([*lines, ""]):
        ops += _line_ops(line, starts[index], buckets[index])
    return ops


def _hunk_spans(ops: Sequence[_Op], context: int) -> list[tuple[int, int]]:
    """Half-open op ranges of hunks; overlapping or touching ranges are merged."""
    spans: list[tuple[int, int]] = []
    for index, (kind, _) in enumerate(ops):
        if kind == " ":
            continue
        begin, end = max(0, index - context), min(len(ops), index + context + 1)
        if spans and begin <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
        else:
            spans.append((begin, end))
    return spans


def _range(start: int, count: int) -> str:
    """Unified-diff range: an empty range names the line *before* it, as git does."""
    if count == 0:
        return f"{start},0"
    return f"{start + 1}" if count == 1 else f"{start + 1},{count}"


def _render_hunks(ops: Sequence[_Op], context: int) -> str:
    """Hunk headers and bodies; a line lacking its "\\n" gets the no-newline marker."""
    out: list[str] = []
    old_seen = new_seen = position = 0
    for begin, end in _hunk_spans(ops, context):
        for kind, _ in ops[position:begin]:
            old_seen, new_seen = old_seen + (kind != "+"), new_seen + (kind != "-")
        hunk = ops[begin:end]
        old_count = sum(kind != "+" for kind, _ in hunk)
        new_count = sum(kind != "-" for kind, _ in hunk)
        out.append(f"@@ -{_range(old_seen, old_count)} +{_range(new_seen, new_count)} @@\n")
        for kind, line in hunk:
            out.append(kind + line if line.endswith("\n") else f"{kind}{line}\n{_NO_EOL_MARKER}")
        old_seen, new_seen, position = old_seen + old_count, new_seen + new_count, end
    return "".join(out)


# --------------------------------------------------------------------------- diff files


@dataclass(frozen=True)
class _FileDiff:
    """One file's section, with the texts it must turn one into the other (BOM included)."""

    src: SourceFile
    header: str
    old: str
    new: str
    body: str


_ESCAPES = {ord('"'): '\\"', ord("\\"): "\\\\", ord("\t"): "\\t", ord("\n"): "\\n",
            ord("\r"): "\\r"}  # fmt: skip


def _quote(name: str) -> str:
    """C-quote a header path the way git does, but only when git would have to.

    A name that is not valid UTF-8 (read with ``surrogateescape``: ``caf\\xe9.py``)
    is quoted with its bytes in octal, as git writes it, so the header stays ASCII and
    ``git apply`` and ``patch`` find the file by its real bytes.
    """
    raw = name.encode("utf-8", "surrogateescape")
    foreign = raw != name.encode("utf-8", "replace")  # bytes that are not UTF-8
    if foreign:
        return '"' + "".join(_ESCAPES.get(b, _octal(b, b >= 128)) for b in raw) + '"'
    if not any(b in b'"\\' or b < 32 or b == 127 for b in raw):
        return name
    return '"' + "".join(_ESCAPES.get(ord(ch), _octal(ord(ch), False)) for ch in name) + '"'


def _octal(code: int, high: bool) -> str:
    """A control character (or, in a name that is not UTF-8, any high byte) in octal."""
    return f"\\{code:03o}" if code < 32 or code == 127 or high else chr(code)


def _unquote(name: str) -> str:
    """A header path as a file name: git's C quoting undone, bytes decoded as the file
    system does (``surrogateescape`` for bytes that are not UTF-8)."""
    if len(name) < 2 or not (name.startswith('"') and name.endswith('"')):
        return name.encode("latin-1").decode("utf-8", "surrogateescape")
    body, out, i = name[1:-1], bytearray(), 0
    simple = {'"': 34, "\\": 92, "t": 9, "n": 10, "r": 13, "a": 7, "b": 8, "f": 12, "v": 11}
    while i < len(body):
        if body[i] != "\\":
            out += body[i].encode("latin-1")
            i += 1
        elif body[i + 1 : i + 4].isdigit():
            out.append(int(body[i + 1 : i + 4], 8))
            i += 4
        else:
            out.append(simple.get(body[i + 1], ord(body[i + 1])))
            i += 2
    return bytes(out).decode("utf-8", "surrogateescape")


def _header(path: Path, relative_to: Path) -> str:
    """git-style header; a name with a space gets git's trailing tab so patch(1) parses it."""
    base = Path(os.path.abspath(relative_to))
    try:
        rel = path.relative_to(base).as_posix()
    except ValueError:
        try:
            rel = Path(os.path.relpath(path, base)).as_posix()
        except ValueError:  # another drive on Windows: no relative path exists
            rel = path.as_posix()
    old, new = _quote(f"a/{rel}"), _quote(f"b/{rel}")
    tab = "\t" if " " in rel else ""
    return f"diff --git {old} {new}\n--- {old}{tab}\n+++ {new}{tab}\n"


def _file_diff(
    src: SourceFile, edits: Sequence[TextEdit], relative_to: Path, context: int
) -> _FileDiff | None:
    """The section for one file, or None when its edits change nothing."""
    resolved = _resolve(src, edits)
    if not resolved:
        return None
    bom = _BOM if src.has_bom else ""
    shifted = [(offset + len(bom), text, delete) for offset, text, delete in resolved]
    old, new = bom + src.text, bom + _splice(src.text, resolved)
    if new == old:
        return None
    body = _render_hunks(_file_ops(old, shifted), context)
    return _FileDiff(src, _header(src.path, relative_to), old, new, body)


def _file_diffs(
    changes: Sequence[tuple[SourceFile, Sequence[TextEdit]]], relative_to: Path, context: int
) -> list[_FileDiff]:
    """All sections, validated together, because a diff is only as good as its whole."""
    if context < 0:
        raise ValueError(f"context must be >= 0, not {context}")
    _check_unique([src for src, _ in changes])
    diffs = [_file_diff(src, edits, relative_to, context) for src, edits in changes]
    present = [diff for diff in diffs if diff is not None]
    _validate("".join(d.header + d.body for d in present), present)
    return present


def render_diff(
    changes: Sequence[tuple[SourceFile, Sequence[TextEdit]]], relative_to: Path, context: int = 3
) -> str:
    """One unified diff for all files, checked to reproduce ``apply_edits`` exactly.

    A BOM appears as U+FEFF at the start of the file's first line, so the text, saved as
    UTF-8, applies to UTF-8 files. Files in other encodings need ``render_diff_bytes``.
    """
    return "".join(d.header + d.body for d in _file_diffs(changes, relative_to, context))


def render_diff_bytes(
    changes: Sequence[tuple[SourceFile, Sequence[TextEdit]]], relative_to: Path, context: int = 3
) -> bytes:
    """The same diff, each file's lines in that file's own encoding, as git and patch need.

    Headers are UTF-8. Raises ``PatchError`` if inserted text cannot be encoded.
    """
    chunks: list[bytes] = []
    for diff in _file_diffs(changes, relative_to, context):
        encoding = "utf-8" if diff.src.has_bom else diff.src.encoding  # BOM is in the text
        try:
            chunks += [diff.header.encode("utf-8"), diff.body.encode(encoding)]
        except UnicodeEncodeError as exc:
            raise PatchError(f"{diff.src.path}: edits not encodable as {encoding}") from exc
    return b"".join(chunks)


# --------------------------------------------------------------------------- validation


def _hunk_lines(hunk: unidiff.Hunk) -> list[_Op]:
    """(kind, line) pairs with the no-newline marker folded into the line it follows."""
    lines: list[_Op] = []
    for line in hunk:
        if line.line_type == "\\":
            if not lines or not lines[-1][1].endswith("\n"):
                raise PatchError("misplaced no-newline marker in rendered diff")
            lines[-1] = (lines[-1][0], lines[-1][1][:-1])
        else:
            lines.append((line.line_type, line.value))
    return lines


def _apply_parsed(patched: unidiff.PatchedFile, old: str) -> str:
    """Apply parsed hunks strictly (exact context, in order), as ``git apply`` would."""
    old_lines, result, position = _diff_lines(old), [], 0
    for hunk in patched:
        start = hunk.source_start - 1 if hunk.source_length else hunk.source_start
        if start < position:
            raise PatchError(f"{patched.path}: hunks overlap or are out of order")
        result += old_lines[position:start]
        position = start
        for kind, line in _hunk_lines(hunk):
            if kind in " -":
                if position >= len(old_lines) or old_lines[position] != line:
                    raise PatchError(f"{patched.path}: hunk does not match line {position + 1}")
                position += 1
            if kind in " +":
                result.append(line)
    return "".join(result + old_lines[position:])


def _validate(diff: str, files: Sequence[_FileDiff]) -> None:
    """Re-parse the diff and check every file comes out exactly as edited."""
    try:
        parsed = unidiff.PatchSet(diff)
    except unidiff.UnidiffParseError as exc:
        raise PatchError(f"rendered diff does not parse: {exc}") from exc
    if len(parsed) != len(files):
        raise PatchError(f"rendered diff has {len(parsed)} files, expected {len(files)}")
    for patched, expected in zip(parsed, files, strict=True):
        if f"+++ {patched.target_file}" not in expected.header:
            raise PatchError(f"rendered diff names {patched.target_file} for {expected.src.path}")
        if _apply_parsed(patched, expected.old) != expected.new:
            raise PatchError(f"rendered diff does not reproduce the edits of {expected.src.path}")


def _check_unique(sources: Sequence[SourceFile]) -> None:
    """Two entries for one file would silently drop one set of edits."""
    seen: set[str] = set()
    for src in sources:
        key = os.path.normcase(os.path.realpath(src.path))
        if key in seen:
            raise PatchError(f"{src.path} is listed more than once")
        seen.add(key)


def _target(patched: unidiff.PatchedFile) -> str:
    """The ``+++`` path without ``b/``, as a file name (the header was read as latin-1)."""
    name = _unquote(patched.target_file.split("\t")[0])
    return name[2:] if name.startswith("b/") else name


def check_patch(
    patch: bytes,
    changes: Sequence[tuple[SourceFile, str]],
    relative_to: Path,
    *,
    paths: bool = True,
) -> str | None:
    """Why ``patch``, applied in ``relative_to``, would not turn the files as read into
    exactly the texts ``write_files`` would write; None when it would.

    A dry apply, byte for byte: the diff is read as latin-1 (every byte one character),
    each ``+++`` path must name one of the files from ``relative_to`` without leaving it
    (``git apply`` refuses ``../``; ``paths=False`` allows it, for a diff that is only
    shown), and its hunks applied strictly to the original bytes must give the new
    bytes. This is the check behind "status fixed implies a patch that applies".
    """
    if not patch:
        return "the diff is empty"
    try:
        parsed = unidiff.PatchSet(patch.decode("latin-1"))
    except unidiff.UnidiffParseError as exc:
        return f"the diff does not parse: {exc}"
    wanted = {os.path.realpath(src.path): (src, text) for src, text in changes}
    if len(parsed) != len(wanted):
        return f"the diff has {len(parsed)} files, the patch {len(wanted)}"
    base = Path(os.path.abspath(relative_to))
    for patched in parsed:
        name = _target(patched)
        if paths and (os.path.isabs(name) or ".." in Path(name).parts):
            return f"the diff names {name}, outside {base}, where git apply cannot reach it"
        found = wanted.get(os.path.realpath(base / name))
        if found is None:
            return f"the diff names {name}, which is not a file of the patch"
        src, text = found
        try:
            new = _apply_parsed(patched, src.raw.decode("latin-1"))
        except PatchError as exc:
            return str(exc)
        if new.encode("latin-1") != _encode(src, text):
            return f"the diff does not give the verified text of {name}"
    return None


# --------------------------------------------------------------------------- writing


def _encode(src: SourceFile, text: str) -> bytes:
    """Encode as the file was; the 'utf-8-sig' codec puts the BOM back by itself."""
    try:
        return text.encode(src.encoding)
    except UnicodeEncodeError as exc:
        raise PatchError(f"{src.path}: new text is not encodable as {src.encoding}") from exc


def _check_unchanged(sources: Sequence[SourceFile]) -> None:
    """Refuse to overwrite a file someone else changed after we read it."""
    for src in sources:
        try:
            current = src.path.read_bytes()
        except OSError as exc:
            raise FileChangedError(src.path) from exc
        if hashlib.sha256(current).hexdigest() != src.sha256:
            raise FileChangedError(src.path)


def _open_all(sources: Sequence[SourceFile]) -> list[int]:
    """Open every target for writing before any is touched: a file we may not write is
    found while nothing has changed yet."""
    fds: list[int] = []
    try:
        for src in sources:
            try:
                fds.append(os.open(src.path, os.O_RDWR | getattr(os, "O_BINARY", 0)))
            except OSError as exc:
                raise PatchError(f"{src.path}: cannot be written ({exc.strerror}); "
                                 "no file was changed") from exc  # fmt: skip
    except BaseException:
        _close(fds)
        raise
    return fds


def _close(fds: Sequence[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


def _read_fd(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _overwrite(fd: int, data: bytes) -> None:
    """Replace a file's bytes in place: same inode, so owner, group, mode, ACLs and every
    hard link stay as they were."""
    os.lseek(fd, 0, os.SEEK_SET)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.ftruncate(fd, len(data))
    os.fsync(fd)


def _reserve(fds: Sequence[int], payloads: Sequence[bytes]) -> None:
    """Claim the disk space first, so a full disk stops the commit before any byte of
    any file changed (it may grow a file with zeros: the rollback truncates it back)."""
    if hasattr(os, "posix_fallocate"):
        for fd, data in zip(fds, payloads, strict=True):
            try:
                os.posix_fallocate(fd, 0, max(len(data), 1))
            except OSError as exc:
                if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                    raise PatchError(f"cannot reserve space: {exc.strerror}") from exc


def _commit(fds: Sequence[int], sources: Sequence[SourceFile], payloads: Sequence[bytes]) -> None:
    """Check every file once more through its open descriptor, then overwrite them all;
    on any failure put back every file (the originals are held in memory: the journal)."""
    for fd, src in zip(fds, sources, strict=True):
        if _read_fd(fd) != src.raw:
            raise FileChangedError(src.path)
    touched: list[tuple[int, SourceFile]] = []
    try:
        touched += zip(fds, sources, strict=True)  # reserving space may grow a file too
        _reserve(fds, payloads)
        for fd, data in zip(fds, payloads, strict=True):
            _overwrite(fd, data)
    except BaseException:
        for fd, src in touched:
            with contextlib.suppress(OSError):
                _overwrite(fd, src.raw)
        raise


def link_out_of(root: Path, changes: Sequence[tuple[SourceFile, str]]) -> str | None:
    """Why a patch must not be written: a file it changes is reached through a symbolic
    link whose target lies outside the project root (a module shared with other projects),
    so writing would change a file the user did not point autoclone at."""
    top = os.path.realpath(root)
    for src, _ in changes:
        real = os.path.realpath(src.path)
        if os.path.commonpath([top, real]) != top:
            return (f"{src.path.name} is a link to {real}, outside the project {root}; "
                    "nothing was written (autoclone fix --dry-run prints the patch to apply "
                    "there yourself)")  # fmt: skip
    return None


def write_files(changes: Sequence[tuple[SourceFile, str]]) -> None:
    """Write all new texts or none, and never over a file that changed since it was read.

    Files are rewritten in place (same inode: owner, group, mode and hard links kept; no
    temporary file is ever created next to them). Hashes are checked before any I/O and
    again through the open descriptors right before the writes; the writes run with stop
    signals deferred (``lifecycle.deferred``), and a failure part-way restores every file
    already touched. Symlinks are followed. Raises ``FileChangedError`` or ``PatchError``.
    """
    sources = [src for src, _ in changes]
    _check_unique(sources)
    payloads = [_encode(src, text) for src, text in changes]
    _check_unchanged(sources)
    fds = _open_all(sources)
    try:
        with lifecycle.deferred("the patch was written"):
            _commit(fds, sources, payloads)
    finally:
        _close(fds)
