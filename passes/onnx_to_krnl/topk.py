"""TopK: the K largest (or smallest) elements along an axis, and their indices.

Each element's rank is the number of elements that come before it: those
greater (smaller), and equal ones at a lower index, the stable order of the
reference. The elements of rank < K are stored at their rank. That is O(n^2)
per row, without scratch memory or data-dependent control flow besides the
final store.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType, i64
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.dialects.types import is_float
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.onnx_to_krnl.common import GraphLowering, constant_array, lowers, normalized_axis, shape_of


def _comes_first(b: KernelBuilder, lhs: SSAValue, rhs: SSAValue, largest: bool) -> tuple[SSAValue, SSAValue]:
    """(lhs strictly before rhs in the order, lhs == rhs) as i1 values."""
    return b.compare("gt" if largest else "lt", lhs, rhs), b.compare("eq", lhs, rhs)


@lowers("TopK", run_time_dims=True)
def lower_top_k(g: GraphLowering, op: OnnxOp) -> None:
    x = g.input(op, 0)
    if constant_array(op.input(1)) is None:
        raise g.unsupported(op, "TopK with a K that is not a constant")
    element = x.type.get_element_type()
    if not (is_float(element) or isinstance(element, IntegerType) and element.width.data > 1):
        raise g.unsupported(op, f"element type {element} is not supported")
    values, indices = g.result(op, 0), g.result(op, 1)
    shape = shape_of(x)
    axis = normalized_axis(g, op, op.attr("axis"), len(shape))
    k = shape_of(values)[axis]
    largest = bool(op.attr("largest"))
    if k == 0:
        return
    ivs, b = g.top.loop_nest(shape)
    position = ivs[axis]
    value = b.load(x, ivs)

    def count_before(inner: KernelBuilder, other_ivs: list[Bound], rank: SSAValue) -> SSAValue:
        other = list(ivs)
        other[axis] = other_ivs[0]
        strictly, equal = _comes_first(inner, inner.load(x, other), value, largest)
        earlier = inner.compare_index("slt", other_ivs[0], position)
        before = inner.insert(arith.OrIOp(strictly, inner.and_(equal, earlier))).result
        return inner.add(rank, inner.select_index(before, 1, 0))

    rank = b.reduce([(0, shape[axis])], b.index(0), count_before)
    kept = b.if_then(b.compare_index("slt", rank, k))
    out_index = list(ivs)
    out_index[axis] = rank
    kept.store(value, values, out_index)
    kept.store(kept.from_index(position, i64), indices, out_index)
