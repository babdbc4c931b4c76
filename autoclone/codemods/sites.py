"""Find every place where a ``.clone()`` could break a harmful sharing of tensor memory.

Finding is kept apart from applying: this module only records frozen ``Site`` values.
``autoclone.codemods.render`` turns any subset of them into text edits, either the
plain ``.clone()`` a user will read or the run-time switch that trials use. A standalone
in-place statement also gets its out-of-place rewrite (``x += y`` -> ``x = x + y``), the
edit people write for the same conflict.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import (
    ClassScope,
    CodeRange,
    GlobalScope,
    MetadataWrapper,
    ParentNodeProvider,
    PositionProvider,
    ScopeProvider,
)

from autoclone.codemods.shapes import (
    Position,
    assigned_in,
    base_of,
    keyed_entry,
    names_in,
    outside_parens,
)
from autoclone.edits import TextEdit

#: Kinds of candidate site, in the words of the report.
ASSIGN = "assign"  # right-hand side of an assignment: ``y = expr`` -> ``y = expr.clone()``
SUBSCRIPT = "subscript"  # a subscript read used as an operand: ``h[b]`` -> ``h[b].clone()``
ARG = "arg"  # a call argument: ``f(x)`` -> ``f(x.clone())``
INPLACE = "inplace"  # target of an in-place op, cloned just before it: ``x = x.clone()``
OPERAND = "operand"  # a variable used as an operand: ``w * x`` -> ``w * x.clone()``
STATEMENT = "statement"  # a whole in-place statement, rewritten: ``x += y`` -> ``x = x + y``
#: an in-place chain whose result an expression reads, rewritten out of place there:
#: ``L.diagonal().log_().sum()`` -> ``L.diagonal().log().sum()``
VALUE = "value"

#: Fix kinds, least change to what is computed first.
CLONE = "clone"  # same numbers: the saved tensor and the written one stop sharing memory
#: an in-place statement into a loop's variable (``for p in ps: p.add_(v)``): only wrapped
#: (``no_grad``), never rebound, since a copy would leave the element as it was
WRITE = "write"
NO_GRAD = "no_grad"  # an update of a leaf, done outside autograd as the update means
DETACH = "detach"  # cut a graph reaching across iterations: changes what is differentiated
ITEM = "item"  # keep only the value of an accumulator: ``float(total) + loss``
INPLACE_FALSE = "inplace_false"  # ``nn.ReLU(inplace=True)`` -> ``inplace=False``: same numbers
RETAIN_GRAPH = "retain_graph"  # the first of two backward calls over one graph keeps it
OUT_OF_PLACE = "out_of_place"  # ``x.add_(y)`` -> ``x = x.add(y)``: same numbers, a new tensor

#: Calls whose arguments are never worth cloning: they do not keep tensors for backward.
_INERT_CALLS = frozenset(
    {
        "print",
        "len",
        "range",
        "isinstance",
        "issubclass",
        "hasattr",
        "getattr",
        "setattr",
        "str",
        "int",
        "float",
        "bool",
        "repr",
        "type",
        "super",
        "open",
        "format",
        "id",
        "enumerate",
        "iter",
        "next",
        "round",
        "abs",
        "sorted",
        "dict",
        "list",
        "tuple",
        "set",
    }
)

_LITERALS = (
    cst.Integer,
    cst.Float,
    cst.Imaginary,
    cst.SimpleString,
    cst.ConcatenatedString,
    cst.FormattedString,
    cst.Lambda,
    cst.Ellipsis,
    cst.Tuple,
    cst.List,
    cst.Dict,
    cst.Set,
    cst.ListComp,
    cst.SetComp,
    cst.DictComp,
    cst.GeneratorExp,
    cst.Yield,
    cst.Await,
    cst.Comparison,
    cst.BooleanOperation,
)

_CONSTANT_NAMES = frozenset({"True", "False", "None"})

#: In-place methods whose out-of-place twin is the same name without ``_`` and computes
#: the same numbers into a new tensor. Not here: fills (``zero_``, ``fill_``, ``copy_``,
#: ``normal_``) have no such twin, ``bernoulli()`` reads its receiver as probabilities,
#: comparisons (``lt_``) change the dtype and shape ops return views.
OUT_OF_PLACE_METHODS = frozenset(
    {
        "add", "sub", "mul", "div", "subtract", "multiply", "divide", "true_divide",
        "floor_divide", "remainder", "fmod", "pow", "float_power", "neg", "negative", "abs",
        "sqrt", "rsqrt", "square", "reciprocal", "exp", "exp2", "expm1", "log", "log1p",
        "log2", "log10", "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan",
        "atan2", "hypot", "sigmoid", "logit", "relu", "clamp", "clamp_min", "clamp_max",
        "clip", "masked_fill", "masked_scatter", "index_add", "index_fill", "index_copy",
        "index_put", "scatter", "scatter_add", "scatter_reduce", "lerp", "addcmul",
        "addcdiv", "addmm", "addmv", "addbmm", "baddbmm", "floor", "ceil", "round", "trunc",
        "frac", "sign", "sgn", "erf", "erfinv", "nan_to_num", "copysign", "xlogy",
    }
)  # fmt: skip

#: Functions of ``torch`` and ``F`` with an in-place form: ``torch.relu_(x)``, ``F.elu_(x)``.
_OUT_OF_PLACE_FUNCTIONS = OUT_OF_PLACE_METHODS | {
    "leaky_relu", "elu", "celu", "selu", "hardtanh", "threshold",
}  # fmt: skip
_FUNCTION_MODULES = frozenset({"torch", "F", "nn.functional", "torch.nn.functional"})

#: Augmented operators: the binary operator and its precedence (higher binds tighter).
_AUG_OPS: dict[type[cst.BaseAugOp], tuple[str, int]] = {
    cst.BitOrAssign: ("|", 1), cst.BitXorAssign: ("^", 2), cst.BitAndAssign: ("&", 3),
    cst.LeftShiftAssign: ("<<", 4), cst.RightShiftAssign: (">>", 4),
    cst.AddAssign: ("+", 5), cst.SubtractAssign: ("-", 5),
    cst.MultiplyAssign: ("*", 6), cst.DivideAssign: ("/", 6), cst.FloorDivideAssign: ("//", 6),
    cst.ModuloAssign: ("%", 6), cst.MatrixMultiplyAssign: ("@", 6), cst.PowerAssign: ("**", 8),
}  # fmt: skip
_PRECEDENCE: dict[type[cst.BaseBinaryOp], int] = {
    cst.BitOr: 1, cst.BitXor: 2, cst.BitAnd: 3, cst.LeftShift: 4, cst.RightShift: 4,
    cst.Add: 5, cst.Subtract: 5, cst.Multiply: 6, cst.Divide: 6, cst.FloorDivide: 6,
    cst.Modulo: 6, cst.MatrixMultiply: 6, cst.Power: 8,
}  # fmt: skip
_ATOMS = (
    cst.Name, cst.Attribute, cst.Subscript, cst.Call, cst.Integer, cst.Float, cst.Imaginary,
    cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.List, cst.Dict,
    cst.Set, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp,
)  # fmt: skip



@dataclass(frozen=True)
class Site:
    """One candidate edit. ``id`` is stable for the same source: file, place and kind.

    ``start``/``end`` delimit the expression to clone (for ``inplace`` sites, the
    statement to precede; for ``statement`` sites, the start of the statement that
    ``rewrite`` turns out of place). ``target`` is the source text of what gets cloned
    (or rebound) and ``code`` the line as it reads with this edit alone.
    """

    id: str
    file: str
    line: int
    col: int
    kind: str
    target: str
    code: str
    start: Position
    end: Position
    depth: int
    parens: bool = False  # the expression needs parentheses before ``.clone()``
    own_line: bool = True  # an ``inplace`` clone can go on a new line of its own
    indent: str = ""
    assigned: str = ""  # for ``assign`` sites with one plain target: its name
    bound: tuple[str, ...] = ()  # for ``assign`` sites: every name the statement binds
    fix: str = CLONE
    block: tuple[int, ...] = ()  # further lines a ``no_grad`` block indents
    rewrite: tuple[TextEdit, ...] = ()  # for ``out_of_place`` sites: the patch's text edits
    before: int = 0  # for ``arg`` sites of a name: line of the reading statement, if own line
    after: int = 0  # for statements inserted right after a line (a backward call): that line


def _is_atomic(node: cst.BaseExpression) -> bool:
    """Whether ``node.clone()`` parses as a call on the whole of ``node``."""
    if node.lpar:
        return True
    return isinstance(node, cst.Name | cst.Attribute | cst.Subscript | cst.Call)


def _worth_cloning(node: cst.BaseExpression) -> bool:
    if isinstance(node, _LITERALS):
        return False
    if isinstance(node, cst.Name) and node.value in _CONSTANT_NAMES:
        return False
    return not isinstance(node, cst.UnaryOperation) or not isinstance(
        node.expression, cst.Integer | cst.Float
    )


def call_name(call: cst.Call) -> str:
    """``f`` in ``f(x)`` and ``m.f(x)``; empty for anything else called."""
    func = call.func
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return ""


#: Trailing-underscore methods that change a tensor's flags, not its values: a clone
#: before them would turn a leaf (a parameter being frozen) into a non-leaf.
_FLAG_METHODS = frozenset({"requires_grad_", "share_memory_", "retain_grad_"})


def _is_inplace_method(name: str) -> bool:
    return (name.endswith("_") and not name.startswith("_") and len(name) > 1
            and name not in _FLAG_METHODS)  # fmt: skip


def _has_inplace_true(call: cst.Call) -> bool:
    for arg in call.args:
        if arg.keyword and arg.keyword.value == "inplace":
            return isinstance(arg.value, cst.Name) and arg.value.value == "True"
    return False


#: Methods that return a view of their receiver: as an operand (``u @ emb.weight.t()``),
#: what the op saves shares memory with a tensor something else may write (an embedding's
#: ``max_norm`` renormalises its weight in place), and a clone of the view is the fix.
_VIEW_METHODS = frozenset(
    {"t", "transpose", "permute", "view", "reshape", "expand", "squeeze", "unsqueeze",
     "flatten", "narrow", "select", "unflatten", "view_as", "expand_as", "movedim"}
)  # fmt: skip


def _is_view_call(node: cst.BaseExpression) -> bool:
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in _VIEW_METHODS)  # fmt: skip


def _numbered_entry(node: cst.BaseExpression) -> bool:
    """``outputs[0]``, ``outs[-1]``: one entry by a literal number, whose in-place call
    (Tacotron's ``outputs[0].masked_fill_(mask, 0.0)`` in ``parse_output``) may be
    rewritten ``outputs[0] = outputs[0].masked_fill(...)``: a list's entry is rebound, and
    a tensor's row is written the same numbers as the call wrote (no other program)."""
    if not isinstance(node, cst.Subscript) or len(node.slice) != 1:
        return False
    index = node.slice[0].slice
    value = index.value if isinstance(index, cst.Index) else None
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
        value = value.expression
    return isinstance(value, cst.Integer)


class SiteFinder(cst.CSTVisitor):
    """Collect sites in one module; the visitor never changes the tree."""

    METADATA_DEPENDENCIES = (PositionProvider, ScopeProvider, ParentNodeProvider)

    def __init__(self, relpath: str, lines: Sequence[str], module: cst.Module) -> None:
        super().__init__()
        self.relpath = relpath
        self.lines = lines
        self.module = module
        self.sites: dict[str, Site] = {}
        self._depth = 0
        self._in_target = 0
        self._in_decorator = 0

    # -- bookkeeping ------------------------------------------------------------------
    def on_visit(self, node: cst.CSTNode) -> bool:
        self._depth += 1
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self._depth -= 1
        super().on_leave(original_node)

    def visit_Decorator(self, node: cst.Decorator) -> None:
        self._in_decorator += 1

    def leave_Decorator(self, original_node: cst.Decorator) -> None:
        self._in_decorator -= 1

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._in_target += 1

    def leave_AssignTarget(self, original_node: cst.AssignTarget) -> None:
        self._in_target -= 1

    def visit_Del(self, node: cst.Del) -> bool:
        return False

    def visit_Param(self, node: cst.Param) -> bool:
        return False  # default values are evaluated once, not per call

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    # -- statements: in-place targets ------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Subscript):
                self._add_inplace(node, target.target)
        bound = tuple(n for t in node.targets for n in names_in(t.target))
        plain = isinstance(node.targets[0].target, cst.Name | cst.Attribute)
        assigned = bound[0] if len(node.targets) == 1 and plain and bound else ""
        self._add_expr(node.value, ASSIGN, assigned=assigned, bound=bound)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._add_expr(node.value, ASSIGN)

    def visit_AugAssign(self, node: cst.AugAssign) -> bool:
        self._add_inplace(node, node.target)
        self._add_augmented_rewrite(node)
        node.value.visit(self)
        return False  # the target is a store, not a read

    def visit_Expr(self, node: cst.Expr) -> None:
        if isinstance(node.value, cst.Call):
            self._add_call_rewrite(node, node.value)

    def visit_Return(self, node: cst.Return) -> None:
        """``return x.clamp_(lo, hi)`` -> ``return x.clamp(lo, hi)``: the value returned
        is the same; only the write into ``x`` (which the caller may have saved) goes."""
        call = node.value
        if not isinstance(call, cst.Call):
            return
        names, root = _inplace_chain(call)
        fresh = self._fresh(root)  # ``torch.exp(x).clamp_(lo, hi)``: a new tensor written
        if not names or not (fresh or isinstance(root, cst.Name) and self._plain_receiver(root)):
            return  # ``self.count.add_(1)`` returned: the write is state worth keeping
        if any(n.value.removesuffix("_") not in OUT_OF_PLACE_METHODS for n in names):
            return
        receiver = self.module.code_for_node(root).strip()
        edits = [TextEdit(self._range(n).end.line, self._range(n).end.column - 1, "", delete=1)
                 for n in names]  # fmt: skip
        renamed = cst.ensure_type(call.visit(_OutOfPlaceNames(names)), cst.Call)
        code = f"return {self.module.code_for_node(renamed).strip()}"
        self._add_rewrite(node, receiver, code, edits)

    def visit_Call(self, node: cst.Call) -> None:
        if self._in_decorator:
            return
        name = call_name(node)
        func = node.func
        if _is_inplace_method(name):
            self._add_value_rewrite(node)
            receiver = _chain_root(func.value) if isinstance(func, cst.Attribute) else None
            if receiver is not None and _is_methodish(receiver):
                self._add_inplace(node, receiver)  # ``x.sub_(m).div_(s)`` writes into x
            elif node.args and receiver is not None and not isinstance(receiver, cst.Call):
                self._add_inplace(node, node.args[0].value, function_style=True)
            elif node.args and isinstance(func, cst.Name):
                self._add_inplace(node, node.args[0].value, function_style=True)
        elif _has_inplace_true(node):  # ``F.relu(x, inplace=True)`` writes into x; a
            positional = [a for a in node.args if a.keyword is None and a.star == ""]
            if positional:  # module built with ``inplace=True`` writes nothing here
                self._add_inplace(node, positional[0].value, function_style=True)
        if name in _INERT_CALLS and isinstance(func, cst.Name):
            return
        for arg in node.args:
            if arg.star or (arg.keyword and arg.keyword.value == "inplace"):
                continue
            self._add_expr(arg.value, ARG)
            if isinstance(arg.value, cst.Tuple):  # a state passed as a pair: ``(h, c)``
                for element in arg.value.elements:
                    if isinstance(element.value, cst.Name | cst.Attribute | cst.Subscript):
                        self._add_expr(element.value, ARG)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if self._in_target:
            return
        parent = self.get_metadata(ParentNodeProvider, node)
        if isinstance(parent, cst.Assign | cst.AnnAssign | cst.Arg | cst.AugAssign):
            return  # covered by the assignment / argument site of the same node
        self._add_expr(node, SUBSCRIPT)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        for operand in (node.left, node.right):
            if isinstance(operand, cst.Name | cst.Attribute) or _is_view_call(operand):
                self._add_expr(operand, OPERAND)

    # -- recording -----------------------------------------------------------------------
    def _range(self, node: cst.CSTNode) -> CodeRange:
        return self.get_metadata(PositionProvider, node)

    def _add_expr(
        self, node: cst.BaseExpression, kind: str, assigned: str = "", bound: tuple[str, ...] = ()
    ) -> None:
        if self._in_target or self._in_decorator or not _worth_cloning(node):
            return
        rng = self._range(node)
        start, end = (rng.start.line, rng.start.column), (rng.end.line, rng.end.column)
        parens = not _is_atomic(node)
        if node.lpar:
            start, end = outside_parens(self.lines, start, end, len(node.lpar))
        target = self.module.code_for_node(node).strip()
        clone = f"({target}).clone()" if parens else f"{target}.clone()"
        extra: dict[str, object] = {"parens": parens, "assigned": assigned, "bound": bound}
        if kind == ARG and isinstance(node, cst.Name):
            extra.update(self._statement_before(node))
        self._record(kind, start, end, target, clone, **extra)

    def _statement_before(self, node: cst.CSTNode) -> dict[str, object]:
        """Where a statement of its own can go just before the one that reads ``node``:
        a carried state held as a tuple is detached there (``kinds``), not inside the call."""
        statement = self._enclosing_statement(node)
        if statement is None:
            return {}
        start = self._range(statement).start
        line_text = self.lines[start.line - 1]
        if line_text[: start.column].strip() or not self._first_on_line(statement):
            return {}
        return {"before": start.line, "indent": line_text[: start.column]}

    def _add_inplace(
        self, node: cst.CSTNode, target: cst.BaseExpression, function_style: bool = False
    ) -> None:
        base = base_of(target) if not function_style else target
        if base is None or not self._rebindable(base):
            return
        statement = self._enclosing_statement(node)
        if statement is None:
            return
        rng = self._range(statement)
        start = (rng.start.line, rng.start.column)
        text = self.module.code_for_node(base).strip()
        line_text = self.lines[start[0] - 1]
        indent = line_text[: len(line_text) - len(line_text.lstrip())]
        own_line = line_text[: start[1]].strip() == "" and self._first_on_line(statement)
        self._record(
            INPLACE,
            start,
            start,
            text,
            f"{text} = {text}.clone()",
            own_line=own_line,
            indent=indent,
            fix=WRITE if isinstance(base, cst.Name) and self._loop_target(base) else CLONE,
        )

    # -- out-of-place rewrites of whole statements ----------------------------------------
    def _add_augmented_rewrite(self, node: cst.AugAssign) -> None:
        """``x += y`` -> ``x = x + y``. The right side gets parentheses when the operator
        would otherwise take only part of it (``x *= a + b`` -> ``x = x * (a + b)``):
        the numbers must stay those of the original, rounding included."""
        spec = _AUG_OPS.get(type(node.operator))
        if spec is None or not self._plain_receiver(node.target):
            return
        symbol, precedence = spec
        target = self.module.code_for_node(node.target).strip()
        value = self.module.code_for_node(node.value).strip()
        op = self._range(node.operator)
        width = op.end.column - op.start.column
        edits = [TextEdit(op.start.line, op.start.column, f"= {target} {symbol}", delete=width)]
        if _needs_parens(node.value, precedence):
            rng = self._range(node.value)
            edits += [
                TextEdit(rng.start.line, rng.start.column, "("),
                TextEdit(rng.end.line, rng.end.column, ")"),
            ]
            value = f"({value})"
        self._add_rewrite(node, target, f"{target} = {target} {symbol} {value}", edits)

    def _add_call_rewrite(self, node: cst.Expr, call: cst.Call) -> None:
        """``x.sub_(m).div_(s)`` -> ``x = x.sub(m).div(s)`` and ``torch.relu_(x)`` ->
        ``x = torch.relu(x)``. Only for a whole statement: the result must be assigned
        back, since an out-of-place call on its own would silently do nothing."""
        names, root = _inplace_chain(call)
        if not names:
            return
        if _is_module(root, self.module) and len(names) == 1:
            first = call.args[0] if call.args else None
            if first is None or first.keyword or first.star:
                return
            if names[0].value.removesuffix("_") not in _OUT_OF_PLACE_FUNCTIONS:
                return
            root = first.value
        elif any(n.value.removesuffix("_") not in OUT_OF_PLACE_METHODS for n in names):
            return
        if not (self._plain_receiver(root) or _numbered_entry(root)
                and self._plain_receiver(root.value)):  # type: ignore[attr-defined]  # fmt: skip
            return
        receiver = self.module.code_for_node(root).strip()
        start = self._range(node).start
        edits = [TextEdit(start.line, start.column, f"{receiver} = ")]
        for name in names:
            end = self._range(name).end
            edits.append(TextEdit(end.line, end.column - 1, "", delete=1))
        renamed = cst.ensure_type(call.visit(_OutOfPlaceNames(names)), cst.Call)
        code = f"{receiver} = {self.module.code_for_node(renamed).strip()}"
        self._add_rewrite(node, receiver, code, edits)

    def _add_value_rewrite(self, call: cst.Call) -> None:
        """``2.0 * L.diagonal().log_().sum(-1)`` -> ``... .log() ...``: an in-place chain
        whose result an expression reads (not a statement of its own, not returned: those
        have their own rewrites). The value read is the same; only the write into the
        receiver goes, which the reference's numbers judge (a later read of it)."""
        parent = self.get_metadata(ParentNodeProvider, call, None)
        if isinstance(parent, cst.Expr | cst.Return) or (
            isinstance(parent, cst.Attribute) and _is_inplace_method(parent.attr.value)
        ):
            return
        names, root = _inplace_chain(call)
        if not names or _is_module(root, self.module) or any(
            n.value.removesuffix("_") not in OUT_OF_PLACE_METHODS for n in names
        ):
            return
        edits = [TextEdit(self._range(n).end.line, self._range(n).end.column - 1, "", delete=1)
                 for n in names]  # fmt: skip
        renamed = cst.ensure_type(call.visit(_OutOfPlaceNames(names)), cst.Call)
        rng = self._range(call)
        start, end = (rng.start.line, rng.start.column), (rng.end.line, rng.end.column)
        self._record(VALUE, start, end, self.module.code_for_node(root).strip(),
                     self.module.code_for_node(renamed).strip(), own_line=False,
                     fix=OUT_OF_PLACE, rewrite=tuple(edits))  # fmt: skip

    def _fresh(self, node: cst.BaseExpression) -> bool:
        """A call of a torch function that is not a view (``torch.exp(x)``, ``F.softplus(x)``):
        its result is a new tensor nothing else holds, so a write into it can go."""
        return (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                and _is_module(node.func.value, self.module)
                and node.func.attr.value not in _VIEW_METHODS)  # fmt: skip

    def _plain_receiver(self, node: cst.BaseExpression) -> bool:
        """What the rewrite may rebind: a name of this scope, ``self.attr``, or an entry of
        a mapping that is one of those (``self.memory["M"]``)."""
        if keyed_entry(node):
            return self._plain_receiver(node.value)  # type: ignore[attr-defined]
        if isinstance(node, cst.Attribute):
            return isinstance(node.value, cst.Name) and node.value.value == "self"
        if not isinstance(node, cst.Name) or node.value in _CONSTANT_NAMES | {"self"}:
            return False
        if self._loop_target(node):
            return False
        return node.value not in _FUNCTION_MODULES and self._rebindable(node)

    def _loop_target(self, name: cst.Name) -> bool:
        """``name`` is bound by a ``for`` loop whose body holds it (``for p, v in
        zip(weights, dw): p.add_(v)``): the tensor is an element of what the loop iterates,
        and the write is how that element changes. ``p = p.add(v)`` or ``p = p.clone()``
        would rebind the loop variable and leave the element as it was: a write that
        vanishes (DARTS's finite-difference perturbation of the weights)."""
        current: cst.CSTNode | None = self.get_metadata(ParentNodeProvider, name, None)
        while current is not None and not isinstance(current, cst.FunctionDef | cst.Lambda):
            if isinstance(current, cst.For) and name.value in names_in(current.target):
                return True
            current = self.get_metadata(ParentNodeProvider, current, None)
        return False

    def _add_rewrite(
        self, node: cst.BaseSmallStatement, receiver: str, code: str, edits: list[TextEdit]
    ) -> None:
        rng = self._range(node)
        start = (rng.start.line, rng.start.column)
        line_text = self.lines[start[0] - 1]
        indent = line_text[: len(line_text) - len(line_text.lstrip())]
        own_line = line_text[: start[1]].strip() == "" and self._first_on_line(node)
        self._record(STATEMENT, start, start, receiver, code, own_line=own_line, indent=indent,
                     fix=OUT_OF_PLACE, rewrite=tuple(edits))  # fmt: skip

    def _record(
        self, kind: str, start: Position, end: Position, target: str, code: str, **extra: object
    ) -> None:
        site_id = f"{self.relpath}:{start[0]}:{start[1]}:{kind}"
        if site_id in self.sites:
            return
        self.sites[site_id] = Site(
            id=site_id,
            file=self.relpath,
            line=start[0],
            col=start[1],
            kind=kind,
            target=target,
            code=code,
            start=start,
            end=end,
            depth=self._depth,
            **extra,  # type: ignore[arg-type]
        )

    def _rebindable(self, base: cst.BaseExpression) -> bool:
        """Rebinding ``x = x.clone()`` must not turn a global or closure name into a local."""
        if isinstance(base, cst.Attribute | cst.Subscript):
            return base_of(base) is not None
        if not isinstance(base, cst.Name) or base.value in ("True", "False", "None"):
            return False
        scope = self.get_metadata(ScopeProvider, base, None)
        if scope is None or isinstance(scope, ClassScope):
            return False
        if isinstance(scope, GlobalScope):
            return True
        return assigned_in(scope, base.value)

    def _enclosing_statement(self, node: cst.CSTNode) -> cst.BaseSmallStatement | None:
        current: cst.CSTNode | None = node
        while current is not None and not isinstance(current, cst.BaseSmallStatement):
            if isinstance(current, cst.Lambda | cst.BaseComp | cst.BaseCompoundStatement):
                return None
            current = self.get_metadata(ParentNodeProvider, current, None)
        return current

    def _first_on_line(self, statement: cst.BaseSmallStatement) -> bool:
        parent = self.get_metadata(ParentNodeProvider, statement, None)
        if not isinstance(parent, cst.SimpleStatementLine):
            return False
        grand = self.get_metadata(ParentNodeProvider, parent, None)
        return parent.body[0] is statement and isinstance(grand, cst.IndentedBlock | cst.Module)


def _chain_root(value: cst.BaseExpression) -> cst.BaseExpression:
    """The receiver a chain of in-place calls writes into: ``x`` of ``x.sub_(m).div_(s)``."""
    while (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and _is_inplace_method(value.func.attr.value)
    ):
        value = value.func.value
    return value


class _OutOfPlaceNames(cst.CSTTransformer):
    """Drop the ``_`` of exactly these method names (by identity), for the shown code."""

    def __init__(self, names: Sequence[cst.Name]) -> None:
        super().__init__()
        self._ids = {id(name) for name in names}

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        if id(original_node) in self._ids:
            return updated_node.with_changes(value=updated_node.value.removesuffix("_"))
        return updated_node


def _inplace_chain(call: cst.Call) -> tuple[list[cst.Name], cst.BaseExpression]:
    """The in-place method names of ``x.sub_(m).div_(s)``, outermost first, and ``x``."""
    names: list[cst.Name] = []
    current: cst.BaseExpression = call
    while (
        isinstance(current, cst.Call)
        and isinstance(current.func, cst.Attribute)
        and _is_inplace_method(current.func.attr.value)
    ):
        names.append(current.func.attr)
        current = current.func.value
    return names, current


def _is_module(value: cst.BaseExpression, module: cst.Module) -> bool:
    """``torch`` in ``torch.relu_(x)``, ``F`` in ``F.elu_(x)``: the write goes into the argument."""
    return (
        isinstance(value, cst.Name | cst.Attribute)
        and module.code_for_node(value).strip() in _FUNCTION_MODULES
    )


def _needs_parens(value: cst.BaseExpression, precedence: int) -> bool:
    """Whether ``value`` must be parenthesised as the right operand of an operator of this
    precedence. Equal precedence counts: ``x - (a - b)`` is not ``x - a - b``."""
    if value.lpar or isinstance(value, _ATOMS):
        return False
    if isinstance(value, cst.BinaryOperation):
        return _PRECEDENCE.get(type(value.operator), 0) <= precedence
    if isinstance(value, cst.UnaryOperation):
        return isinstance(value.operator, cst.Not) or precedence >= _PRECEDENCE[cst.Power]
    return True


def _is_methodish(value: cst.BaseExpression) -> bool:
    """``x.add_()`` clones ``x``; ``torch.relu_(x)`` names a module, so the argument is cloned."""
    if isinstance(value, cst.Name):
        return value.value not in {"torch", "F", "nn", "init"}
    if isinstance(value, cst.Attribute):
        return not (isinstance(value.value, cst.Name) and value.value.value in {"torch", "nn"})
    return isinstance(value, cst.Subscript)


def find_sites(source: str, relpath: str) -> list[Site]:
    """All candidate sites of one file, in source order. Raises ``cst.ParserSyntaxError``."""
    module = cst.parse_module(source)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    finder = SiteFinder(relpath, source.splitlines(), module)
    wrapper.visit(finder)
    return sorted(finder.sites.values(), key=lambda s: (s.start, s.kind))
