"""Which slices ``grad_of_base`` differentiates through their base, and which it feeds to
the network joined: pure-Python checks of the source it reads."""

from __future__ import annotations

import ast

from autoclone.fixes.grad_of_base import _slices, _tiling


def _bound(source: str) -> dict:
    return _slices(ast.parse(source), source)


def test_basic_slices_are_followed_and_lists_of_rows_are_not() -> None:
    bound = _bound("t, x = X[:, 0:1], X[:, 1:2]\nrows = X[[0, 0, 1]]\nlast = X[..., -1]\n")
    assert set(bound) == {"t", "x", "last"}  # a list of rows may repeat one
    assert bound["t"].base == "X" and bound["t"].index == ":, 0:1"


def test_slices_that_tile_one_dimension_from_its_start_are_joined_in_order() -> None:
    assert _tiling(_bound("x, t = P[:, 0:1], P[:, 1:2]\n")) == (["x", "t"], 1)
    assert _tiling(_bound("t = P[:, 1:3]\nx = P[:, :1]\n")) == (["x", "t"], 1)


def test_a_gap_a_step_or_two_dimensions_is_not_a_tiling() -> None:
    assert _tiling(_bound("x, t = P[:, 0:1], P[:, 2:3]\n")) is None
    assert _tiling(_bound("x = P[:, 0:2:2]\n")) is None
    assert _tiling(_bound("x, t = P[0:1, :], P[:, 1:2]\n")) is None
