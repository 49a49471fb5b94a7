"""Symbolic dims: integer expressions over the graph inputs' named dims.

A dynamic dim of a tensor type carries its expression as text in the type's
encoding (`tensor<?x49xf32, ["2*N", ""]>`, see `types.symbolic_tensor_type`),
so the IR stays the one source of every shape fact and prints readably. The
text is a Python expression over symbols (identifiers), integers, `+ - *`,
`//` (floor division; `x // 0` is 0, so no run-time dim can trap), `min`/`max`
and the 0/1 comparisons `eq`/`lt`; `Dim.parse` reads it back. With the
comparisons, the exporters' shape arithmetic on booleans (Equal, Not, And,
Where over dims, as in grouped-query attention) stays polynomial: And is a
product, Not is 1 - x, Where(c, a, b) is c*a + (1 - c)*b.

A `Dim` is kept canonical: a polynomial with integer coefficients whose atoms
are symbols or opaque terms (a floor division or min/max that does not
simplify), so equal expressions print equally — "N*S*12" and "12*S*N" are one
dim — and the arena planner can group buffers whose sizes differ only by a
constant factor. Symbols are bound at run time to input dims by the entry point.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache

Monomial = tuple[str, ...]
"""Sorted atoms multiplied together; () is the constant term."""

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Dim:
    terms: tuple[tuple[Monomial, int], ...]
    """(monomial, coefficient) pairs, sorted, no zero coefficient."""

    # ------------------------------------------------------------------ building

    @staticmethod
    def symbol(name: str) -> Dim:
        if not _IDENTIFIER.fullmatch(name):
            raise ValueError(f"a symbol must be an identifier, not {name!r}")
        return Dim((((name,), 1),))

    @staticmethod
    def const(value: int) -> Dim:
        return Dim((((), int(value)),) if value else ())

    @staticmethod
    def _of(terms: Mapping[Monomial, int]) -> Dim:
        return Dim(tuple(sorted((m, c) for m, c in terms.items() if c)))

    @staticmethod
    def _atom(text: str) -> Dim:
        return Dim((((text,), 1),))

    # ------------------------------------------------------------------ queries

    @property
    def constant(self) -> int | None:
        """The value if the expression has no symbol, else None."""
        if not self.terms:
            return 0
        if len(self.terms) == 1 and self.terms[0][0] == ():
            return self.terms[0][1]
        return None

    def atoms(self) -> set[str]:
        return {atom for monomial, _ in self.terms for atom in monomial}

    def symbols(self) -> set[str]:
        """The input-dim symbols the value depends on (also inside opaque terms)."""
        return {name for atom in self.atoms() for name in _IDENTIFIER.findall(atom)} - set(_FUNCTIONS)

    def never_negative(self) -> bool:
        """Whether no value of the symbols (dims, never negative) makes it negative:
        positive coefficients over symbols, comparisons, and floor divisions by a
        positive constant or min/max of such."""
        return all(c > 0 for _, c in self.terms) and all(map(_atom_never_negative, self.atoms()))

    def split_coefficient(self) -> tuple[int, Dim]:
        """(c, m) with self == c * m where m is a single monomial of coefficient 1,
        or (0, self) when self is not a monomial times a constant."""
        if len(self.terms) == 1:
            monomial, coefficient = self.terms[0]
            return coefficient, Dim(((monomial, 1),))
        return 0, self

    # ------------------------------------------------------------------ arithmetic

    def __add__(self, other: Dim | int) -> Dim:
        other = _dim(other)
        terms = dict(self.terms)
        for m, c in other.terms:
            terms[m] = terms.get(m, 0) + c
        return Dim._of(terms)

    __radd__ = __add__

    def __neg__(self) -> Dim:
        return Dim(tuple((m, -c) for m, c in self.terms))

    def __sub__(self, other: Dim | int) -> Dim:
        return self + (-_dim(other))

    def __rsub__(self, other: int) -> Dim:
        return _dim(other) - self

    def __mul__(self, other: Dim | int) -> Dim:
        other = _dim(other)
        terms: dict[Monomial, int] = {}
        for m1, c1 in self.terms:
            for m2, c2 in other.terms:
                m = tuple(sorted(m1 + m2))
                terms[m] = terms.get(m, 0) + c1 * c2
        return Dim._of(terms)

    __rmul__ = __mul__

    def __floordiv__(self, other: Dim | int) -> Dim:
        other = _dim(other)
        if other.constant == 1:
            return self
        if other.constant == 0:
            return Dim.const(0)
        if self.constant is not None and other.constant:
            return Dim.const(self.constant // other.constant)
        divisor = other.constant
        if divisor and divisor > 0 and all(c % divisor == 0 for _, c in self.terms):
            return Dim(tuple((m, c // divisor) for m, c in self.terms))
        quotient = _exact_quotient(self, other)
        if quotient is not None:
            return quotient
        numerator, denominator = _cancelled(self, other)
        if denominator != other:
            return numerator // denominator
        return Dim._atom(f"({_parenthesized(self)} // {_parenthesized(other, divisor=True)})")

    def ceil_div(self, other: Dim | int) -> Dim:
        return -((-self) // other)

    def __mod__(self, other: Dim | int) -> Dim:
        other = _dim(other)
        return self - other * (self // other)

    def minimum(self, other: Dim | int) -> Dim:
        return _extremum("min", self, _dim(other))

    def maximum(self, other: Dim | int) -> Dim:
        return _extremum("max", self, _dim(other))

    def equals(self, other: Dim | int) -> Dim:
        """1 where the two are equal at run time, else 0."""
        other = _dim(other)
        if self == other:
            return Dim.const(1)
        difference = (self - other).constant
        if difference is not None:
            return Dim.const(0)
        first, second = sorted((str(self), str(other)))
        return Dim._atom(f"(eq({first}, {second}))")

    def less_than(self, other: Dim | int) -> Dim:
        """1 where self < other at run time, else 0."""
        difference = (_dim(other) - self).constant
        if difference is not None:
            return Dim.const(int(difference > 0))
        return Dim._atom(f"(lt({self}, {other}))")

    # ------------------------------------------------------------------ text

    def __str__(self) -> str:
        if not self.terms:
            return "0"
        parts = []
        for monomial, coefficient in sorted(self.terms, key=lambda t: (-len(t[0]), t[0])):
            factors = ([str(abs(coefficient))] if abs(coefficient) != 1 or not monomial else []) + list(monomial)
            text = "*".join(factors)
            parts.append(("- " if coefficient < 0 else "+ ") + text)
        text = " ".join(parts)
        return text[2:] if text.startswith("+ ") else "-" + text[2:]

    @staticmethod
    def parse(text: str) -> Dim:
        return _parse(text.strip())

    def substitute(self, mapping: Mapping[str, Dim]) -> Dim:
        """The expression with symbols replaced by what `mapping` says they are."""
        return self.evaluate(lambda name: mapping.get(name, Dim.symbol(name)), _DimAlgebra())

    def evaluate(self, value_of: Callable[[str], object], ops: DimOps) -> object:
        """Compute the expression with `ops` over the values `value_of` gives each symbol
        (Python ints, or index SSA values in a lowering)."""
        total = None
        for monomial, coefficient in self.terms:
            term = ops.const(coefficient)
            for atom in monomial:
                factor = value_of(atom) if _IDENTIFIER.fullmatch(atom) else _evaluate_opaque(atom, value_of, ops)
                term = ops.mul(term, factor)
            total = term if total is None else ops.add(total, term)
        return ops.const(0) if total is None else total


class DimOps:
    """How `Dim.evaluate` computes: Python integers here; a lowering passes one that emits index ops."""

    def const(self, value: int):
        return value

    def add(self, a, b):
        return a + b

    def mul(self, a, b):
        return a * b

    def floordiv(self, a, b):
        return a // b if b else 0

    def eq(self, a, b):
        return int(a == b)

    def lt(self, a, b):
        return int(a < b)

    def min(self, a, b):
        return min(a, b)

    def max(self, a, b):
        return max(a, b)


class _DimAlgebra(DimOps):
    """`Dim.evaluate` over `Dim`s: substitution."""

    def const(self, value: int) -> Dim:
        return Dim.const(value)

    def floordiv(self, a: Dim, b: Dim) -> Dim:
        return a // b

    def min(self, a: Dim, b: Dim) -> Dim:
        return a.minimum(b)

    def max(self, a: Dim, b: Dim) -> Dim:
        return a.maximum(b)

    def eq(self, a: Dim, b: Dim) -> Dim:
        return a.equals(b)

    def lt(self, a: Dim, b: Dim) -> Dim:
        return a.less_than(b)


@dataclass(frozen=True)
class DimCheck:
    """A condition on the inputs' dims that a node needs beyond the inputs' own
    dims: a Reshape keeps the element count, a computed dim is never negative,
    two dims an op requires equal are. The entry point checks each when a run
    starts (ERR_SHAPE), and the runtime first, naming the node."""

    lhs: Dim
    relation: str
    """"==" or ">="."""
    rhs: Dim
    node: str
    op_type: str

    RELATIONS = ("==", ">=")

    def outcome(self) -> bool | None:
        """True if it always holds, False if never, None if only a run can tell."""
        difference = (self.lhs - self.rhs).constant
        if difference is None:
            return None
        return difference == 0 if self.relation == "==" else difference >= 0

    def substitute(self, mapping: Mapping[str, Dim]) -> DimCheck:
        return DimCheck(
            self.lhs.substitute(mapping), self.relation, self.rhs.substitute(mapping), self.node, self.op_type
        )

    def strings(self) -> list[str]:
        return [str(self.lhs), self.relation, str(self.rhs), self.node, self.op_type]

    @staticmethod
    def from_strings(lhs: str, relation: str, rhs: str, node: str, op_type: str) -> DimCheck:
        if relation not in DimCheck.RELATIONS:
            raise ValueError(f"a dim check's relation is one of {DimCheck.RELATIONS}, not {relation!r}")
        return DimCheck(Dim.parse(lhs), relation, Dim.parse(rhs), node, op_type)


def _dim(value: Dim | int) -> Dim:
    return value if isinstance(value, Dim) else Dim.const(int(value))


def _parenthesized(dim: Dim, divisor: bool = False) -> str:
    """`dim` as an operand of `//`: bare if a constant or a product (a divisor: one symbol)."""
    bare = len(dim.terms) == 1 and dim.terms[0][1] == 1 and (not divisor or len(dim.terms[0][0]) == 1)
    return str(dim) if dim.constant is not None or bare else f"({dim})"


def _atom_never_negative(atom: str) -> bool:
    if _IDENTIFIER.fullmatch(atom):
        return True
    node = ast.parse(atom, mode="eval").body
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
        divisor = _to_dim(node.right).constant
        return divisor is not None and divisor > 0 and _to_dim(node.left).never_negative()
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS:
        return node.func.id in ("eq", "lt") or all(_to_dim(arg).never_negative() for arg in node.args)
    return False


def _cancelled(numerator: Dim, denominator: Dim) -> tuple[Dim, Dim]:
    """numerator and denominator (c times a monomial) without the symbols every term
    of both has: n*s // (3*n) is s // 3 (a 0 in the cancelled symbol only changes the
    dims of an empty tensor)."""
    coefficient, monomial = denominator.split_coefficient()
    if coefficient <= 0 or not monomial.terms or not numerator.terms:
        return numerator, denominator
    (atoms, _), = monomial.terms
    remaining, terms = list(atoms), [list(m) for m, _ in numerator.terms]
    for atom in atoms:
        if all(atom in m for m in terms):
            remaining.remove(atom)
            for m in terms:
                m.remove(atom)
    reduced = Dim._of({tuple(m): c for m, (_, c) in zip(terms, numerator.terms)})
    return reduced, Dim(((tuple(remaining), coefficient),))


def _exact_quotient(numerator: Dim, denominator: Dim) -> Dim | None:
    """numerator / denominator where the denominator is one monomial (times a constant)
    dividing every term exactly (12*N*S // 3*S = 4*N), else None."""
    coefficient, monomial = denominator.split_coefficient()
    if coefficient <= 0 or not monomial.terms:
        return None
    (atoms, _), = monomial.terms
    terms: dict[Monomial, int] = {}
    for m, c in numerator.terms:
        remaining = list(m)
        for atom in atoms:
            if atom not in remaining:
                return None
            remaining.remove(atom)
        if c % coefficient:
            return None
        terms[tuple(remaining)] = c // coefficient
    return Dim._of(terms)


def _extremum(kind: str, a: Dim, b: Dim) -> Dim:
    if a == b:
        return a
    if a.constant is not None and b.constant is not None:
        return Dim.const(min(a.constant, b.constant) if kind == "min" else max(a.constant, b.constant))
    first, second = sorted((str(a), str(b)))
    return Dim._atom(f"({kind}({first}, {second}))")


def _evaluate_opaque(atom: str, value_of, ops: DimOps):
    node = ast.parse(atom[1:-1], mode="eval").body
    return _evaluate_node(node, value_of, ops)


def _evaluate_node(node: ast.AST, value_of, ops: DimOps):
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
        return ops.floordiv(_evaluate_node(node.left, value_of, ops), _evaluate_node(node.right, value_of, ops))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS:
        first, second = (_evaluate_node(arg, value_of, ops) for arg in node.args)
        return getattr(ops, node.func.id)(first, second)
    return _to_dim(node).evaluate(value_of, ops)


_FUNCTIONS = {"min": Dim.minimum, "max": Dim.maximum, "eq": Dim.equals, "lt": Dim.less_than}
"""The calls a dim expression may hold, and the `Dim` method each reads back as."""


@cache
def _parse(text: str) -> Dim:
    try:
        return _to_dim(ast.parse(text, mode="eval").body)
    except (SyntaxError, ValueError, TypeError) as exc:
        raise ValueError(f"not a dim expression: {text!r} ({exc})") from None


def _to_dim(node: ast.AST) -> Dim:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return Dim.const(node.value)
    if isinstance(node, ast.Name):
        return Dim.symbol(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_to_dim(node.operand)
    if isinstance(node, ast.BinOp):
        left, right = _to_dim(node.left), _to_dim(node.right)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            return left * right
        if isinstance(node.op, ast.FloorDiv):
            return left // right
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS:
        if len(node.args) == 2 and not node.keywords:
            first, second = (_to_dim(arg) for arg in node.args)
            return _FUNCTIONS[node.func.id](first, second)
    raise ValueError(f"unsupported syntax {ast.dump(node)}")


def symbol_name(dim_param: str, fallback: str) -> str:
    """The symbol for an ONNX dim_param: the name itself when it is an identifier,
    else `fallback` (dim_params may be anything: "batch size", "?", "s77", "")."""
    return dim_param if _IDENTIFIER.fullmatch(dim_param or "") else fallback
