"""The symbolic dims of a signature (`"dims": ["N", "N*S", "(S - 3)//2 + 1"]`), evaluated.

A signature names each symbolic dim by an integer expression over symbols
(identifiers bound by the inputs' dims), `+ - *`, `//` (floor division,
`x // 0 = 0`), `min`/`max` and the 0/1 comparisons `eq`/`lt` (docs/abi.md).
The runtime computes output shapes with it; like the rest of the runtime it
imports nothing of the compiler.
"""

from __future__ import annotations

import ast
import functools
import operator
from collections.abc import Mapping


def _floordiv(a: int, b: int) -> int:
    return a // b if b else 0  # x // 0 is 0 in a dim expression


_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: _floordiv}
_FUNCTIONS = {"min": min, "max": max, "eq": lambda a, b: int(a == b), "lt": lambda a, b: int(a < b)}


def is_symbol(expression: str) -> bool:
    """Whether a dim is one symbol alone (the inputs' dims bind those)."""
    return expression.isidentifier()


def symbols_of(expression: str) -> set[str]:
    return {node.id for node in ast.walk(_parse(expression)) if isinstance(node, ast.Name)} - set(_FUNCTIONS)


def evaluate(expression: str, values: Mapping[str, int]) -> int:
    """The value of a dim expression; KeyError for an unbound symbol, ValueError for bad syntax."""
    return _evaluate(_parse(expression), values)


@functools.lru_cache(maxsize=1024)
def _parse(expression: str) -> ast.expr:
    try:
        return ast.parse(expression, mode="eval").body
    except SyntaxError as error:
        raise ValueError(f"not a dim expression: {expression!r}") from error


def _evaluate(node: ast.expr, values: Mapping[str, int]) -> int:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.Name):
        return values[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_evaluate(node.operand, values)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.left, values), _evaluate(node.right, values))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS:
        return _FUNCTIONS[node.func.id](*(_evaluate(argument, values) for argument in node.args))
    raise ValueError(f"not a dim expression: {ast.unparse(node)!r}")
