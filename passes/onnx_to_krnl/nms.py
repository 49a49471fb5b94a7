"""NonMaxSuppression: per batch and class, boxes in order of decreasing score
(ties: lower index first) are selected greedily unless one already selected
overlaps them by more than the IoU threshold, up to max_output_boxes_per_class;
the result lists (batch, class, box) of every selection.

1. order[b, c, rank] = box: each box's rank counts the boxes before it (higher
   score, or equal at a lower index; NaN scores last), a permutation.
2. Per (b, c), a sequential scf.for over the ranks carries the count selected
   so far; each candidate is checked against the ones selected (stored in
   selected[b, c, :]).
3. The selections are gathered in (b, c) order into the library-allocated
   result of [count, 3].
IoU follows onnx.reference (and onnxruntime): boxes whose intersection or
union is empty never suppress each other; corners may come in either order.
The batch, box and class counts may be run-time dims (shape inference checks
that boxes and scores agree on them: symbolic_shapes.py).
"""

from __future__ import annotations

from xdsl.dialects.builtin import IndexType, f32, i1, i64
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.helpers.run_time_dims import alloc_shaped, element_count
from onnxc.passes.onnx_to_krnl.common import GraphLowering, lowers, shape_of


def _greater(b: KernelBuilder, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    """lhs > rhs as i1, NaN below every number (a strict weak order)."""
    return b.or_(b.compare("gt", lhs, rhs), b.and_(b.is_nan(rhs), b.not_(b.is_nan(lhs))))


class _Boxes:
    """Box geometry of one batch, as [x_min, x_max, y_min, y_max] in the element type."""

    def __init__(self, boxes: SSAValue, center_point_box: bool):
        self.boxes, self.center = boxes, center_point_box

    def extent(self, b: KernelBuilder, batch: Bound, box: Bound) -> list[SSAValue]:
        coordinate = [b.load(self.boxes, [batch, box, k]) for k in range(4)]
        if self.center:  # [x_center, y_center, width, height]
            two = b.constant(2, coordinate[0].type)
            half_width, half_height = b.div(coordinate[2], two), b.div(coordinate[3], two)
            return [
                b.sub(coordinate[0], half_width),
                b.add(coordinate[0], half_width),
                b.sub(coordinate[1], half_height),
                b.add(coordinate[1], half_height),
            ]
        # [y1, x1, y2, x2], either corner first
        return [
            b.min(coordinate[1], coordinate[3]),
            b.max(coordinate[1], coordinate[3]),
            b.min(coordinate[0], coordinate[2]),
            b.max(coordinate[0], coordinate[2]),
        ]

    def suppresses(self, b: KernelBuilder, batch: Bound, box: Bound, other: Bound, threshold: SSAValue) -> SSAValue:
        """IoU(box, other) > threshold as i1, false where the intersection or an area is not positive."""
        x1_min, x1_max, y1_min, y1_max = self.extent(b, batch, box)
        x2_min, x2_max, y2_min, y2_max = self.extent(b, batch, other)
        zero = b.constant(0, threshold.type)
        x_min, x_max = b.max(x1_min, x2_min), b.min(x1_max, x2_max)
        y_min, y_max = b.max(y1_min, y2_min), b.min(y1_max, y2_max)
        intersection = b.mul(b.sub(x_max, x_min), b.sub(y_max, y_min))
        area1 = b.mul(b.sub(x1_max, x1_min), b.sub(y1_max, y1_min))
        area2 = b.mul(b.sub(x2_max, x2_min), b.sub(y2_max, y2_min))
        union = b.sub(b.add(area1, area2), intersection)
        conditions = [
            b.compare("gt", x_max, x_min),
            b.compare("gt", y_max, y_min),
            b.compare("gt", intersection, zero),
            b.compare("gt", area1, zero),
            b.compare("gt", area2, zero),
            b.compare("gt", union, zero),
            b.compare("gt", b.div(intersection, union), threshold),
        ]
        result = conditions[0]
        for condition in conditions[1:]:
            result = b.and_(result, condition)
        return result


def _scalar(b: KernelBuilder, buffer: SSAValue) -> SSAValue:
    """The one element of a [1] or scalar tensor."""
    return b.load(buffer, [0] * len(shape_of(buffer)))


@lowers("NonMaxSuppression", dynamic=True, run_time_dims=True)
def lower_non_max_suppression(g: GraphLowering, op: OnnxOp) -> None:
    boxes, scores = g.input(op, 0), g.input(op, 1)
    element = g.same_element_type(op, [boxes, scores], ints=False)
    if element != f32:  # the only type the schema allows
        raise g.unsupported(op, f"element type {element} is not supported")
    batches, num_boxes, _ = shape_of(boxes)
    _, classes, _ = shape_of(scores)
    max_output, iou_threshold, score_threshold = (g.input(op, k) for k in (2, 3, 4))
    geometry = _Boxes(boxes, bool(op.attr("center_point_box")))
    candidates = element_count(g.top, [batches, classes, num_boxes])
    out = g.dynamic_result(op, 0, [candidates, 3])
    order = alloc_shaped(g.top, IndexType(), [batches, classes, num_boxes])
    selected = alloc_shaped(g.top, IndexType(), [batches, classes, num_boxes])
    class_count = alloc_shaped(g.top, IndexType(), [batches, classes])
    if isinstance(candidates, int) and candidates == 0:  # a run-time 0 runs the loops below 0 times
        g.finish_dynamic_result(op, 0, g.top.index(0))
        return

    # 1. boxes by decreasing score, ties by index
    (batch, klass, box), b = g.top.loop_nest([batches, classes, num_boxes])
    score = b.load(scores, [batch, klass, box])

    def count_before(inner: KernelBuilder, ivs: list[Bound], rank: SSAValue) -> SSAValue:
        other = inner.load(scores, [batch, klass, ivs[0]])
        tie = inner.and_(inner.compare_index("slt", ivs[0], box), inner.not_(_greater(inner, score, other)))
        before = inner.or_(_greater(inner, other, score), tie)
        return inner.index(inner.add(rank, inner.select_index(before, 1, 0)))

    b.store(box, order, [batch, klass, b.reduce([(0, num_boxes)], b.index(0), count_before)])

    # 2. greedy selection per batch and class
    (batch, klass), b = g.top.loop_nest([batches, classes])
    limit = b.index(0) if max_output is None else b.max(b.to_index(_scalar(b, max_output)), 0)
    threshold = b.constant(0, element) if iou_threshold is None else _scalar(b, iou_threshold)

    def select_next(inner: KernelBuilder, ivs: list[Bound], count: SSAValue) -> SSAValue:
        box = inner.load(order, [batch, klass, ivs[0]])
        candidate = inner.compare_index("slt", count, limit)
        if score_threshold is not None:
            above = inner.compare("gt", inner.load(scores, [batch, klass, box]), _scalar(inner, score_threshold))
            candidate = inner.and_(candidate, above)

        def overlaps(check: KernelBuilder, kept_ivs: list[Bound], found: SSAValue) -> SSAValue:
            kept = check.load(selected, [batch, klass, kept_ivs[0]])
            return check.or_(found, geometry.suppresses(check, batch, box, kept, threshold))

        suppressed = inner.reduce([(0, count)], inner.constant(0, i1), overlaps)
        keep = inner.and_(candidate, inner.not_(suppressed))
        inner.if_then(keep).store(box, selected, [batch, klass, count])
        return inner.index(inner.add(count, inner.select_index(keep, 1, 0)))

    b.store(b.reduce([(0, num_boxes)], b.index(0), select_next), class_count, [batch, klass])

    # 3. (batch, class, box) rows in order
    def gather(inner: KernelBuilder, ivs: list[Bound], total: SSAValue) -> SSAValue:
        count = inner.load(class_count, ivs)
        (kept,), copy = inner.for_nest([(0, count)])
        row = copy.add(total, kept)
        values = [*ivs, copy.load(selected, [*ivs, kept])]
        for column, value in enumerate(values):
            copy.store(copy.from_index(value, i64), out, [row, column])
        return inner.index(inner.add(total, count))

    total = g.top.reduce([(0, batches), (0, classes)], g.top.index(0), gather)
    g.finish_dynamic_result(op, 0, total)
