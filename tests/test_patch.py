"""Tests for autoclone.patch: real files, real ``git apply`` and ``patch``, no mocks.

Every rendered diff is fed to both tools, because a diff that only our own parser
accepts is worthless to a user.
"""

from __future__ import annotations

import os
import random
import shutil
import stat
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from autoclone.edits import TextEdit
from autoclone.patch import (
    FileChangedError,
    PatchError,
    SourceFile,
    apply_edits,
    check_patch,
    render_diff,
    render_diff_bytes,
    write_files,
)

Change = tuple[SourceFile, Sequence[TextEdit]]

NEEDS_TOOLS = pytest.mark.skipif(
    shutil.which("git") is None or shutil.which("patch") is None,
    reason="git and patch are needed to check that diffs really apply",
)


def make(root: Path, name: str, content: bytes) -> SourceFile:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return SourceFile.read(path)


def run(args: list[str], cwd: Path, stdin: bytes) -> None:
    proc = subprocess.run(args, cwd=cwd, input=stdin, capture_output=True, check=False)
    assert proc.returncode == 0, (args, proc.stdout.decode(), proc.stderr.decode())


def expected_bytes(src: SourceFile, edits: Sequence[TextEdit]) -> bytes:
    return apply_edits(src, edits).encode(src.encoding)


def assert_applies(root: Path, changes: Sequence[Change]) -> str:
    """Check the diff with git and patch, apply it with each, and compare bytes."""
    diff = render_diff_bytes(changes, relative_to=root)
    assert diff
    run(["git", "apply", "--check", "-"], root, diff)
    run(["patch", "-p1", "--dry-run", "--batch"], root, diff)
    for tool in (["git", "apply", "-"], ["patch", "-p1", "--batch", "--quiet"]):
        run(tool, root, diff)
        for src, edits in changes:
            if edits:
                assert src.path.read_bytes() == expected_bytes(src, edits), tool
            src.path.write_bytes(src.raw)
    return render_diff(changes, relative_to=root)


# --------------------------------------------------------------------------- apply_edits


def test_mid_line_insertion_wraps_name(tmp_path: Path) -> None:
    src = make(tmp_path, "a.py", b"y = x + 1\n")
    edits = [TextEdit(1, 4, "("), TextEdit(1, 5, ").clone()")]
    assert apply_edits(src, edits) == "y = (x).clone() + 1\n"


def test_same_position_edits_keep_given_order(tmp_path: Path) -> None:
    src = make(tmp_path, "a.py", b"f(x)\n")
    edits = [TextEdit(1, 3, ")"), TextEdit(1, 3, ".clone()"), TextEdit(1, 2, "(")]
    assert apply_edits(src, edits) == "f((x).clone())\n"
    assert apply_edits(src, [TextEdit(1, 3, "B"), TextEdit(1, 3, "A")]) == "f(xBA)\n"


def test_edits_use_original_positions(tmp_path: Path) -> None:
    src = make(tmp_path, "a.py", b"ab\ncd\n")
    edits = [TextEdit(2, 1, "Y"), TextEdit(1, 0, "new\n"), TextEdit(1, 1, "X")]
    assert apply_edits(src, edits) == "new\naXb\ncYd\n"


@pytest.mark.parametrize("edit", [TextEdit(3, 0, "x"), TextEdit(1, 3, "x"), TextEdit(0, 0, "x")])
def test_out_of_range_edit_is_an_error(tmp_path: Path, edit: TextEdit) -> None:
    src = make(tmp_path, "a.py", b"ab\n")
    with pytest.raises(PatchError):
        apply_edits(src, [edit])


def test_append_at_end_of_file(tmp_path: Path) -> None:
    src = make(tmp_path, "a.py", b"a\n")
    assert apply_edits(src, [TextEdit(2, 0, "b\n")]) == "a\nb\n"


# --------------------------------------------------------------------------- SourceFile


def test_read_detects_encoding_newline_and_hash(tmp_path: Path) -> None:
    src = make(tmp_path, "a.py", b"# -*- coding: latin-1 -*-\r\ns = '\xe9'\r\n")
    assert src.encoding == "iso-8859-1"
    assert src.newline == "\r\n"
    assert src.text == "# -*- coding: latin-1 -*-\r\ns = '\u00e9'\r\n"
    assert src.path.is_absolute()
    assert len(src.sha256) == 64
    bom = make(tmp_path, "b.py", b"\xef\xbb\xbfx = 1\n")
    assert (bom.encoding, bom.text, bom.newline) == ("utf-8-sig", "x = 1\n", "\n")


# --------------------------------------------------------------------------- render_diff


@NEEDS_TOOLS
def test_mid_line_diff_exact_text(tmp_path: Path) -> None:
    src = make(tmp_path, "a.py", b"import torch\ny = x + 1\nprint(y)\n")
    diff = assert_applies(tmp_path, [(src, [TextEdit(2, 4, "("), TextEdit(2, 5, ").clone()")])])
    assert diff == (
        "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n"
        "@@ -1,3 +1,3 @@\n import torch\n-y = x + 1\n+y = (x).clone() + 1\n print(y)\n"
    )


@NEEDS_TOOLS
def test_whole_line_insertion_is_a_pure_addition(tmp_path: Path) -> None:
    src = make(tmp_path, "a.py", b"def f(x):\n    x.add_(1)\n    return x\n")
    diff = assert_applies(tmp_path, [(src, [TextEdit(2, 0, "    x = x.clone()\n")])])
    assert diff.endswith(
        "@@ -1,3 +1,4 @@\n def f(x):\n+    x = x.clone()\n     x.add_(1)\n     return x\n"
    )
    assert not [line for line in diff.splitlines()[3:] if line.startswith("-")]


@NEEDS_TOOLS
def test_two_edits_on_one_line(tmp_path: Path) -> None:
    src = make(tmp_path, "a.py", b"z = a * b\n")
    edits = [TextEdit(1, 4, "("), TextEdit(1, 5, ").clone()"), TextEdit(1, 9, ".clone()")]
    diff = assert_applies(tmp_path, [(src, edits)])
    assert diff.endswith("@@ -1 +1 @@\n-z = a * b\n+z = (a).clone() * b.clone()\n")


def numbered(count: int) -> bytes:
    return "".join(f"line{i} = {i}\n" for i in range(1, count + 1)).encode()


@NEEDS_TOOLS
@pytest.mark.parametrize(("second", "hunks"), [(20, 2), (12, 2), (11, 1), (10, 1)])
def test_hunks_split_when_far_and_merge_when_close(tmp_path: Path, second: int, hunks: int) -> None:
    src = make(tmp_path, "a.py", numbered(30))
    edits = [TextEdit(5, 0, "# a\n"), TextEdit(second, 5, "_")]
    diff = assert_applies(tmp_path, [(src, edits)])
    assert diff.count("\n@@ ") == hunks


@NEEDS_TOOLS
def test_far_hunk_headers(tmp_path: Path) -> None:
    src = make(tmp_path, "a.py", numbered(30))
    diff = assert_applies(tmp_path, [(src, [TextEdit(5, 0, "# a\n"), TextEdit(20, 5, "_")])])
    assert "@@ -2,6 +2,7 @@\n" in diff
    assert "@@ -17,7 +18,7 @@\n" in diff


@NEEDS_TOOLS
def test_first_and_last_line(tmp_path: Path) -> None:
    src = make(tmp_path, "a.py", numbered(10))
    edits = [TextEdit(1, 0, "import torch\n"), TextEdit(10, 11, ".0"), TextEdit(11, 0, "end\n")]
    diff = assert_applies(tmp_path, [(src, edits)])
    assert diff.count("\n@@ ") == 2
    assert "@@ -1,3 +1,4 @@\n+import torch\n line1 = 1\n" in diff
    assert diff.endswith("-line10 = 10\n+line10 = 10.0\n+end\n")


@NEEDS_TOOLS
def test_file_without_trailing_newline(tmp_path: Path) -> None:
    src = make(tmp_path, "a.py", b"a = 1\nb = a")
    diff = assert_applies(tmp_path, [(src, [TextEdit(2, 5, ".clone()")])])
    marker = "\\ No newline at end of file\n"
    assert diff.endswith(f"-b = a\n{marker}+b = a.clone()\n{marker}")


@NEEDS_TOOLS
def test_no_trailing_newline_as_context(tmp_path: Path) -> None:
    src = make(tmp_path, "a.py", b"a = 1\nb = a")
    diff = assert_applies(tmp_path, [(src, [TextEdit(1, 0, "import torch\n")])])
    assert diff.endswith("+import torch\n a = 1\n b = a\n\\ No newline at end of file\n")


@NEEDS_TOOLS
def test_appending_to_unterminated_file(tmp_path: Path) -> None:
    src = make(tmp_path, "a.py", b"a = 1")
    assert_applies(tmp_path, [(src, [TextEdit(1, 5, "\nb = 2\n")])])


@NEEDS_TOOLS
def test_crlf_file(tmp_path: Path) -> None:
    src = make(tmp_path, "a.py", b"def f(x):\r\n    x.add_(1)\r\n    return x\r\n")
    edits = [TextEdit(2, 0, "    x = x.clone()\n"), TextEdit(3, 12, ".clone()")]
    diff = assert_applies(tmp_path, [(src, edits)])
    assert "+    x = x.clone()\r\n" in diff
    assert "+    return x.clone()\r\n" in diff
    assert apply_edits(src, edits).count("\r\n") == 4


@NEEDS_TOOLS
def test_latin1_file_with_cookie(tmp_path: Path) -> None:
    content = "# -*- coding: latin-1 -*-\nname = 'caf\u00e9'\ny = x\n".encode("latin-1")
    src = make(tmp_path, "a.py", content)
    edits = [TextEdit(3, 5, ".clone()  # \u00e9t\u00e9")]
    assert_applies(tmp_path, [(src, edits)])
    assert "caf\u00e9" in render_diff([(src, edits)], tmp_path)


def test_unencodable_insertion_is_refused(tmp_path: Path) -> None:
    src = make(tmp_path, "a.py", b"# coding: latin-1\ny = x\n")
    with pytest.raises(PatchError):
        render_diff_bytes([(src, [TextEdit(2, 5, "  # \u2603")])], tmp_path)


@NEEDS_TOOLS
def test_bom_file(tmp_path: Path) -> None:
    src = make(tmp_path, "a.py", b"\xef\xbb\xbfy = x\nz = y\n")
    assert_applies(tmp_path, [(src, [TextEdit(1, 0, "import torch\n"), TextEdit(2, 5, "()")])])


@NEEDS_TOOLS
def test_multi_file_diff_skips_unedited_files(tmp_path: Path) -> None:
    first = make(tmp_path, "pkg/a.py", b"y = x\n")
    untouched = make(tmp_path, "pkg/b.py", b"q = 1\n")
    second = make(tmp_path, "c d.py", b"z = w\n")
    changes: list[Change] = [
        (first, [TextEdit(1, 5, ".clone()")]),
        (untouched, []),
        (second, [TextEdit(1, 5, ".clone()")]),
    ]
    diff = assert_applies(tmp_path, changes)
    assert diff.count("diff --git ") == 2
    assert "diff --git a/pkg/a.py b/pkg/a.py\n" in diff
    assert "+++ b/c d.py\t\n" in diff
    assert "b.py" not in diff


def test_nothing_to_render(tmp_path: Path) -> None:
    first = make(tmp_path, "a.py", b"y = x\n")
    second = make(tmp_path, "b.py", b"y = x\n")
    assert render_diff([(first, []), (second, [TextEdit(1, 0, "")])], tmp_path) == ""
    assert render_diff([], tmp_path) == ""


def test_duplicate_file_is_refused(tmp_path: Path) -> None:
    src = make(tmp_path, "a.py", b"y = x\n")
    with pytest.raises(PatchError):
        render_diff([(src, [TextEdit(1, 0, "a\n")]), (src, [TextEdit(1, 1, "b")])], tmp_path)


def test_zero_context(tmp_path: Path) -> None:
    src = make(tmp_path, "a.py", numbered(5))
    diff = render_diff([(src, [TextEdit(3, 0, "# c\n")])], tmp_path, context=0)
    assert diff.endswith("@@ -2,0 +3 @@\n+# c\n")


RANDOM_FILES = [
    b"import torch\n\ndef f(x):\n    y = x * 2\n    x.add_(1)\n    return x, y\n\n\nf(1)\n",
    b"a = 1\r\nb = 2\r\n\r\nc = a + b\r\nprint(c)",
    b"\xef\xbb\xbfx = 1\ny = 2\n",
    b"",
    b"only = 1",
]


@NEEDS_TOOLS
@pytest.mark.parametrize("seed", range(40))
def test_random_edits_apply(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    src = make(tmp_path, "r.py", RANDOM_FILES[seed % len(RANDOM_FILES)])
    lines = src.text.replace("\r\n", "\n").split("\n")
    edits = []
    for _ in range(rng.randint(1, 5)):
        line = rng.randint(1, len(lines))
        col = rng.randint(0, len(lines[line - 1]))
        text = rng.choice(["(", ").clone()", "    x = x.clone()\n", "\n", "a\nb", ";"])
        edits.append(TextEdit(line, col, text))
    if apply_edits(src, edits) != src.text:
        assert_applies(tmp_path, [(src, edits)])


# --------------------------------------------------------------------------- write_files


def test_write_files_preserves_encoding_newlines_and_bom(tmp_path: Path) -> None:
    latin = make(tmp_path, "l.py", b"# coding: latin-1\r\ns = '\xe9'\r\n")
    bom = make(tmp_path, "b.py", b"\xef\xbb\xbfs = '\xc3\xa9'\n")
    latin_text = apply_edits(latin, [TextEdit(2, 7, "  # \u00e0\n")])
    bom_text = apply_edits(bom, [TextEdit(1, 7, "  # \u00e0\n")])
    write_files([(latin, latin_text), (bom, bom_text)])
    assert latin.path.read_bytes() == b"# coding: latin-1\r\ns = '\xe9'  # \xe0\r\n\r\n"
    assert bom.path.read_bytes() == b"\xef\xbb\xbfs = '\xc3\xa9'  # \xc3\xa0\n\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.py", "l.py"]


def test_write_files_preserves_mode(tmp_path: Path) -> None:
    src = make(tmp_path, "run.py", b"y = x\n")
    os.chmod(src.path, 0o751)
    write_files([(src, "y = x.clone()\n")])
    assert stat.S_IMODE(src.path.stat().st_mode) == 0o751
    assert src.path.read_text() == "y = x.clone()\n"


def test_write_files_refuses_changed_file_and_writes_nothing(tmp_path: Path) -> None:
    first = make(tmp_path, "a.py", b"y = x\n")
    second = make(tmp_path, "b.py", b"z = w\n")
    second.path.write_bytes(b"z = w  # edited meanwhile\n")
    with pytest.raises(FileChangedError) as info:
        write_files([(first, "y = x.clone()\n"), (second, "z = w.clone()\n")])
    assert info.value.path == second.path
    assert "b.py" in str(info.value)
    assert first.path.read_bytes() == b"y = x\n"
    assert second.path.read_bytes() == b"z = w  # edited meanwhile\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py", "b.py"]


def test_write_files_refuses_deleted_file(tmp_path: Path) -> None:
    src = make(tmp_path, "a.py", b"y = x\n")
    src.path.unlink()
    with pytest.raises(FileChangedError):
        write_files([(src, "y = x.clone()\n")])
    assert list(tmp_path.iterdir()) == []


def test_write_files_refuses_unencodable_text(tmp_path: Path) -> None:
    src = make(tmp_path, "a.py", b"# coding: latin-1\ny = x\n")
    with pytest.raises(PatchError):
        write_files([(src, "# coding: latin-1\ny = x  # \u2603\n")])
    assert src.path.read_bytes() == b"# coding: latin-1\ny = x\n"


def test_write_files_follows_symlink(tmp_path: Path) -> None:
    real = make(tmp_path, "real.py", b"y = x\n")
    link = tmp_path / "link.py"
    link.symlink_to(real.path)
    write_files([(SourceFile.read(link), "y = x.clone()\n")])
    assert link.is_symlink()
    assert real.path.read_text() == "y = x.clone()\n"


def test_rewrites_replace_text_within_a_line(tmp_path: Path) -> None:
    """``x += y`` -> ``x = x + y`` and a statement wrapped in ``with torch.no_grad():``."""
    src = make(tmp_path, "m.py", b"def f(x, y, w):\n    x += y\n    w -= 0.1 * w\n    return x\n")
    edits = [
        TextEdit(2, 6, "= x +", delete=2),
        TextEdit(3, 4, "with torch.no_grad():\n        w -= 0.1 * w", delete=12),
    ]
    assert apply_edits(src, edits) == (
        "def f(x, y, w):\n    x = x + y\n    with torch.no_grad():\n        w -= 0.1 * w\n"
        "    return x\n"
    )
    diff = assert_applies(tmp_path, [(src, edits)])
    assert "-    x += y\n+    x = x + y\n" in diff


def test_deleting_past_the_line_is_refused(tmp_path: Path) -> None:
    src = make(tmp_path, "m.py", b"a = 1\nb = 2\n")
    with pytest.raises(PatchError):
        apply_edits(src, [TextEdit(1, 4, "", delete=5)])


def test_write_files_rewrites_in_place_keeping_hard_links(tmp_path: Path) -> None:
    """Same inode: a hard link sees the patch, owner/group/mode stay, no temp file."""
    src = make(tmp_path, "run.py", b"y = x\n")
    os.link(src.path, tmp_path / "alias.py")
    inode = src.path.stat().st_ino
    write_files([(src, "y = x.clone()\n")])
    assert src.path.stat().st_ino == inode
    assert (tmp_path / "alias.py").read_text() == "y = x.clone()\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["alias.py", "run.py"]


def test_write_files_refuses_a_file_it_cannot_open_and_writes_nothing(tmp_path: Path) -> None:
    first = make(tmp_path, "a.py", b"y = x\n")
    second = make(tmp_path, "b.py", b"z = w\n")
    second.path.unlink()
    second.path.mkdir()  # same name, now a folder: cannot be opened for writing
    with pytest.raises(PatchError):
        write_files([(first, "y = x.clone()\n"), (second, "z = w.clone()\n")])
    assert first.path.read_bytes() == b"y = x\n"


def test_check_patch_accepts_the_rendered_diff_and_refuses_others(tmp_path: Path) -> None:
    src = make(tmp_path, "sub/m.py", b"a = 1\nb = 2\n")
    edits = [TextEdit(2, 4, "2 + 0", delete=1)]
    new = apply_edits(src, edits)
    diff = render_diff_bytes([(src, edits)], relative_to=tmp_path)
    assert check_patch(diff, [(src, new)], tmp_path) is None
    assert check_patch(b"", [(src, new)], tmp_path) == "the diff is empty"
    assert "verified text" in str(check_patch(diff, [(src, "a = 1\nb = 3\n")], tmp_path))
    outside = render_diff_bytes([(src, edits)], relative_to=tmp_path / "other")
    assert b"a/../sub/m.py" in outside
    assert "outside" in str(check_patch(outside, [(src, new)], tmp_path / "other"))
    assert check_patch(outside, [(src, new)], tmp_path / "other", paths=False) is None
    assert "not a file of the patch" in str(
        check_patch(diff.replace(b"sub/m.py", b"sub/n.py"), [(src, new)], tmp_path)
    )


@NEEDS_TOOLS
def test_a_name_that_is_not_utf8_is_quoted_in_octal_as_git_does(tmp_path: Path) -> None:
    name = os.fsdecode(b"caf\xe9 x.py")
    src = make(tmp_path, name, b"y = x\n")
    diff = assert_applies(tmp_path, [(src, [TextEdit(1, 5, ".clone()")])])
    assert diff.startswith('diff --git "a/caf\\351 x.py" "b/caf\\351 x.py"\n')


@NEEDS_TOOLS
@pytest.mark.parametrize("newline", [b"\n", b"\r\n"])
def test_a_dropped_line_goes_with_its_ending_and_the_diff_applies(
    tmp_path: Path, newline: bytes
) -> None:
    """A statement moved elsewhere (``recompute``: into a property) leaves no blank line."""
    lines = [b"class M:", b"    def __init__(self):", b"        self.a = 1",
             b"        self.b = f(self.a)", b"", b"    def g(self):",
             b"        return 2"]  # fmt: skip
    src = make(tmp_path, "m.py", newline.join(lines) + newline)
    prop = "\n    @property\n    def b(self):\n        return f(self.a)\n"
    edits = [TextEdit(4, 0, "", drop_line=True), TextEdit(5, 0, prop)]
    assert_applies(tmp_path, [(src, edits)])
    text = apply_edits(src, edits)
    assert "self.b = " not in text and "\n\n\n" not in text.replace("\r", "")
    assert text.replace("\r", "").count("\n") == len(lines) + 4 - 1


def test_a_rewrite_to_the_same_text_is_no_change(tmp_path: Path) -> None:
    """Found by the hypothesis round trip: ``=`` replaced by ``=`` rendered a hunk that
    changes nothing; it is context now, and no edited line means no diff."""
    src = make(tmp_path, "a.py", b"x = 1\n=\ny = 2\n")
    assert render_diff_bytes([(src, [TextEdit(2, 0, "=", delete=1)])], relative_to=tmp_path) == b""
    diff = render_diff([(src, [TextEdit(2, 0, "=", delete=1), TextEdit(3, 0, "z", 1)])], tmp_path)
    assert "-=" not in diff and "+z = 2" in diff
