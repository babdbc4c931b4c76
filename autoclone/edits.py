"""Plain-text edits: the common currency between finding sites and rendering patches.

A candidate site knows, at analysis time, exactly which characters it would insert
into the user's original file. Keeping that as data (not as a CST transform) is what
lets any subset of sites render a patch without re-parsing.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class TextEdit:
    """Insert ``text`` before the character at (``line``, ``col``) of the original file,
    replacing the ``delete`` characters that follow when a rewrite needs to.

    ``line`` is 1-based, ``col`` is 0-based and counts characters (not bytes) of that
    line without its line ending. ``text`` uses ``"\\n"`` for new lines; the renderer
    converts it to the file's own line ending.
    """

    line: int
    col: int
    text: str
    delete: int = 0  # characters of the original removed after the position (same line)
    #: The whole line goes, its line ending with it (``col``, ``text`` and ``delete`` unused):
    #: a statement moved elsewhere leaves no blank line behind.
    drop_line: bool = False
