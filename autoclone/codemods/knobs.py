"""Find the knobs that set how much work a run does, and rewrite them for trials only.

A user's script takes minutes because of a few numbers: epochs, dataset size, layer
widths. Those numbers are plain literals in three places: module-level constants
(``EPOCHS = 2000``), argparse defaults (``default=2000``), and literal sizes in
module-level calls (``torch.randn(4096, 1024)``, ``range(2000)``). A knob is recorded
here as a frozen value; ``shrink_source`` rewrites a source for a trial, keeping every
line where it was so tracebacks still point at the user's lines. Nothing here ever
reaches a patch.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from autoclone.codemods.overrides import apply_overrides, option_dest
from autoclone.codemods.sites import call_name

COUNT = "count"  # how many times the loop runs: epochs, iterations, steps
SIZE = "size"  # how big each step is: widths, batch, sequence length
LAYERS = "layers"  # how deep the model is
DATA = "data"  # how many examples an epoch walks through

#: The value each kind shrinks to. Counts stay at 2, not 1: many autograd errors only
#: appear on the second iteration (state carried across iterations, a second backward).
SMALL = {COUNT: 2, SIZE: 8, LAYERS: 2, DATA: 16}

_PATTERNS = [
    (COUNT, r"(num_|n_|max_|total_|train_)?(epochs?|iters?|iterations|steps)"),
    (
        SIZE,
        r"(batch_size|bs|hidden|hidden_dim|hidden_size|d_model|d_hidden|d_ff|ffn_dim"
        r"|dim_feedforward|(embed|emb|embedding)_(dim|size)|width|n_embd|n_hidden"
        r"|seq_len|seq_length|max_len|block_size|context_length)",
    ),
    (LAYERS, r"(num_layers|n_layers|n_layer|layers|depth)"),
    (DATA, r"((num|n)_(samples|examples|points|train)|dataset_size|train_size|data_size)"),
]

#: Module-level calls whose literal integer arguments are sizes or counts.
_SIZE_CALLS = frozenset(
    {"randn", "rand", "zeros", "ones", "empty", "full", "Linear", "Embedding", "LSTM", "GRU",
     "RNN", "LayerNorm", "BatchNorm1d", "Conv1d", "Conv2d"}
)  # fmt: skip
_SIZED = _SIZE_CALLS | {"range"}
#: Frameworks keep the length of a run in their own arguments, wherever the call is
#: (Lightning's ``Trainer(max_epochs=...)``, Hugging Face's ``TrainingArguments``).
_FRAMEWORK_COUNTS = {
    "Trainer": frozenset({"max_epochs", "max_steps"}),
    "TrainingArguments": frozenset({"num_train_epochs", "max_steps"}),
}
#: A literal must be at least this big to be worth shrinking: small ones cost nothing.
_MIN_LITERAL = {COUNT: 50, SIZE: 64}


@dataclass(frozen=True)
class Knob:
    """One number that sets the size of a run. ``name`` is what ``--set`` would take, or
    ``"literal 1024"`` for every module-level literal size of that value at once (one
    value shrinks to one value everywhere, so shapes stay consistent)."""

    name: str
    kind: str
    value: int
    small: int
    via: str  # "constant", "option" (argparse default), "literal" or "keyword"
    file: str
    line: int

    @property
    def shown(self) -> str:
        if self.via == "literal":
            return f"literal {self.value}->{self.small}"
        if self.via == "keyword":
            return f"{self.name[:-1]}={self.value}->{self.small})"
        return f"{self.name} {self.value}->{self.small}"


def kind_of(name: str) -> str | None:
    """The knob kind a variable name suggests, if any."""
    lowered = name.lower()
    for kind, pattern in _PATTERNS:
        if re.fullmatch(pattern, lowered):
            return kind
    return None


def find_knobs(source: str, file: str, argv: Iterable[str] = ()) -> list[Knob]:
    """Knobs in one file. Options given on the command line are not knobs: their
    default does not apply."""
    wrapper = MetadataWrapper(cst.parse_module(source))
    finder = _Finder(file, set(argv))
    wrapper.visit(finder)
    return finder.knobs


def _int(node: cst.BaseExpression) -> int | None:
    if isinstance(node, cst.Integer):
        value = node.evaluated_value
        return value if isinstance(value, int) else None
    return None


class _Finder(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, file: str, argv: set[str]) -> None:
        super().__init__()
        self.file, self.argv = file, argv
        self.knobs: list[Knob] = []
        self.depth = 0  # inside def/class: constants and literals there are not knobs

    def _add(self, name: str, kind: str, value: int, via: str, node: cst.CSTNode) -> None:
        if value > SMALL[kind]:
            line = self.get_metadata(PositionProvider, node).start.line
            self.knobs.append(Knob(name, kind, value, SMALL[kind], via, self.file, line))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.depth += 1

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.depth -= 1

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.depth += 1

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.depth -= 1

    def visit_Assign(self, node: cst.Assign) -> None:
        value = _int(node.value)
        if self.depth or value is None:
            return
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                kind = kind_of(target.target.value)
                if kind:
                    self._add(target.target.value, kind, value, "constant", node)

    def visit_Call(self, node: cst.Call) -> None:
        callee = call_name(node)
        if callee == "add_argument":
            self._option(node)
        elif callee in _FRAMEWORK_COUNTS:
            for arg in node.args:
                name = arg.keyword.value if arg.keyword else ""
                value = _int(arg.value)
                if name in _FRAMEWORK_COUNTS[callee] and value is not None:
                    self._add(f"{callee}({name})", COUNT, value, "keyword", arg)
        elif not self.depth and callee in _SIZED:
            kind = COUNT if callee == "range" else SIZE
            args = node.args
            if callee == "range":  # only the stop is a count: a step (a batch size over
                args = args[:1] if len(args) == 1 else args[1:2]  # the data) shrunk alone
            for arg in args:  # multiplies the steps, and a start moves nothing
                value = _int(arg.value) if arg.keyword is None else None
                if value is not None and value >= _MIN_LITERAL[kind]:
                    self._add(f"literal {value}", kind, value, "literal", arg)

    def _option(self, call: cst.Call) -> None:
        flags = [
            str(a.value.evaluated_value)
            for a in call.args
            if a.keyword is None and isinstance(a.value, cst.SimpleString)
        ]
        default = next(
            (a.value for a in call.args if a.keyword and a.keyword.value == "default"), None
        )
        value = _int(default) if default is not None else None
        longs = [f for f in flags if f.startswith("--")]
        if value is None or not longs or any(f in self.argv for f in flags):
            return
        if any(a.startswith(f + "=") for f in longs for a in self.argv):
            return
        dest = option_dest(call)
        kind = kind_of(dest) if dest else None
        if dest and kind:
            self._add(dest, kind, value, "option", call)


class _ShrinkKeywords(cst.CSTTransformer):
    """A framework's run-length arguments (``Trainer(max_epochs=50)``), wherever called."""

    def __init__(self, small: Mapping[str, int]) -> None:
        super().__init__()
        self.small = small

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        callee = call_name(updated)
        args = []
        for arg in updated.args:
            key = f"{callee}({arg.keyword.value})" if arg.keyword else ""
            if key in self.small and _int(arg.value) is not None:
                arg = arg.with_changes(value=cst.Integer(str(self.small[key])))
            args.append(arg)
        return updated.with_changes(args=args)


class _ShrinkLiterals(cst.CSTTransformer):
    """Module-level literal sizes, by value; everything else untouched."""

    def __init__(self, values: Mapping[int, int]) -> None:
        super().__init__()
        self.values = values

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        callee = call_name(updated)
        if callee not in _SIZED:
            return updated
        args = []
        for arg in updated.args:
            value = _int(arg.value) if arg.keyword is None else None
            if value is not None and value in self.values:
                arg = arg.with_changes(value=cst.Integer(str(self.values[value])))
            args.append(arg)
        return updated.with_changes(args=args)


def shrink_source(source: str, knobs: Iterable[Knob]) -> str:
    """``source`` as a trial runs it: named constants and literal sizes made small.
    Argparse defaults are not in the text; the trial child changes them."""
    chosen = list(knobs)
    constants = {k.name: str(k.small) for k in chosen if k.via == "constant"}
    literals = {k.value: k.small for k in chosen if k.via == "literal"}
    text = apply_overrides(source, constants)
    if literals:
        text = cst.parse_module(text).visit(_ShrinkLiterals(literals)).code
    keywords = {k.name: k.small for k in chosen if k.via == "keyword"}
    if keywords:
        text = cst.parse_module(text).visit(_ShrinkKeywords(keywords)).code
    return text


def merge(knobs: Iterable[Knob]) -> list[Knob]:
    """One knob per name across files: the first place it is set names it."""
    seen: dict[str, Knob] = {}
    for knob in knobs:
        seen.setdefault(knob.name, knob)
    return list(seen.values())
