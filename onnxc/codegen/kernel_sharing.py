"""Which loop nests of a graph function can share one kernel function.

Nests that differ only in the buffers and weights they read and write (the
blocks of a ResNet stage, the layers of a DenseNet block) compile to the same
code, and LLVM's time grows with the number of kernel functions: such nests
are emitted once and each calls the kernel with its own arguments
(outlining.py). A nest's shape class is its ops with their attributes and
types, the constants it uses by value, and every other value from outside by
its type and its position among the kernel's arguments. A shared kernel takes its weights
as arguments too, pointers that keep what the weights symbol told LLVM: their
alignment and their size.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Sequence

from llvmlite import ir
from xdsl.dialects import arith
from xdsl.ir import Operation, SSAValue

from onnxc.codegen.llvm_types import element_size, static_shape_of
from onnxc.codegen.weights import WEIGHT_ALIGNMENT
from onnxc.dialects.krnl import GlobalOp


def shape_class(nest: Operation, outside: Sequence[SSAValue]) -> Hashable | None:
    """A key equal for nests that compile to the same kernel, given their values from
    outside in `outside` order; None for a nest with branches between blocks (never shared)."""
    refs: dict[SSAValue, Hashable] = {}
    for position, value in enumerate(outside):
        owner = value.owner
        constant = isinstance(owner, arith.ConstantOp)
        refs[value] = ("constant", owner.value, value.type) if constant else ("argument", position, value.type)
    parts: list[Hashable] = []
    for op in nest.walk():
        if op.successors:
            return None
        operands = tuple(refs[operand] for operand in op.operands)
        for value in (*op.results, *(arg for region in op.regions for block in region.blocks for arg in block.args)):
            refs[value] = ("local", len(refs), value.type)
        parts.append((
            op.name,
            operands,
            tuple(result.type for result in op.results),
            tuple(sorted(op.attributes.items())),
            tuple(sorted(op.properties.items())),
            tuple(tuple(len(block.args) for block in region.blocks) for region in op.regions),
        ))  # fmt: skip
    return tuple(parts)


def shared_classes(keys: Iterable[Hashable | None]) -> set[Hashable]:
    """The keys more than one nest has."""
    return {key for key, count in Counter(keys).items() if key is not None and count > 1}


def is_weight(value: SSAValue) -> bool:
    return isinstance(value.owner, GlobalOp)


def describe_weight_argument(argument: ir.Argument, weight: SSAValue) -> None:
    """Tell LLVM what it knew of a weight at its address in the weights symbol:
    aligned (weights.WeightTable) and readable over its whole size."""
    size = element_size(weight.type.element_type)
    for dim in static_shape_of(weight.type):
        size *= dim
    argument.attributes.align = WEIGHT_ALIGNMENT
    argument.attributes.dereferenceable = size
