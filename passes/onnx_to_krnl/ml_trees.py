"""TreeEnsembleClassifier, TreeEnsembleRegressor (ai.onnx.ml 1 and 3) and
TreeEnsemble (ai.onnx.ml 5), compiled: the trees become code (ml_tree_code.py),
not data for an interpreter.

The attributes are read at compile time into `Tree`s; one loop over the samples
runs every tree into one accumulator per target or class, then the aggregate
(SUM, AVERAGE, MIN, MAX), the base values, the label and the post transform are
applied in registers before the row is stored: the post transform is fused.

Scores follow onnxruntime (tree_ensemble_aggregator.h), including its binary
classifiers whose weights name one class only (skl2onnx writes forests and
gradient boosting for two classes that way): that score and its complement
become the two columns. Cases onnxruntime resolves in ways the specification
leaves open (a class scored by some leaves of a tree only, base values that
disagree with the weights in the binary case) are refused, named.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import f32, i64
from xdsl.ir import Attribute, SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.dialects.types import is_float
from onnxc.passes.helpers.krnl_builder import KernelBuilder
from onnxc.passes.onnx_to_krnl.common import GraphLowering, lowers, shape_of, shape_text, weight_buffer
from onnxc.passes.onnx_to_krnl.ml_linear import feature_index, sample_rows
from onnxc.passes.onnx_to_krnl.ml_scores import (
    argmax,
    class_labels,
    load_as,
    post_transform,
    post_transform_of,
    single_score,
)
from onnxc.passes.onnx_to_krnl.ml_tree_code import MEMBER, MODES, NodeWalk, Tree, TreeCode, add_nested, split_by_size

AGGREGATES = ("AVERAGE", "SUM", "MIN", "MAX")
"""In TreeEnsemble's numbering (0..3)."""
SET_MEMBERSHIP = 6
"""TreeEnsemble's BRANCH_MEMBER mode."""
MISSING = {"MIN": np.inf, "MAX": -np.inf, "SUM": 0.0, "AVERAGE": 0.0}
"""The value of a target a leaf has no weight for, per aggregate (so it changes nothing)."""


def _floats(op: OnnxOp, name: str) -> np.ndarray:
    """A FLOATS attribute or its `_as_tensor` form (double precision), as float64."""
    value = op.attr(f"{name}_as_tensor")
    if value is None or not len(np.asarray(value)):
        value = op.attr(name)
    return np.asarray(value if value is not None else [], dtype=np.float64).reshape(-1)


def _ints(op: OnnxOp, name: str) -> list[int]:
    return [int(v) for v in (op.attr(name) or [])]


def trees_of_node_lists(g: GraphLowering, op: OnnxOp, weight_prefix: str) -> list[Tree]:
    """The trees of TreeEnsembleClassifier/Regressor: nodes listed by (tree id,
    node id), leaf weights by `{prefix}_treeids/nodeids/ids/weights`. A tree's root
    is its first node listed (as in onnxruntime)."""
    tree_ids, node_ids = _ints(op, "nodes_treeids"), _ints(op, "nodes_nodeids")
    modes = [m.decode() if isinstance(m, bytes) else m for m in op.attr("nodes_modes") or []]
    features, values = _ints(op, "nodes_featureids"), _floats(op, "nodes_values")
    true_ids, false_ids = _ints(op, "nodes_truenodeids"), _ints(op, "nodes_falsenodeids")
    missing = _ints(op, "nodes_missing_value_tracks_true") or [0] * len(node_ids)
    count = len(node_ids)
    lengths = {
        "nodes_treeids": len(tree_ids),
        "nodes_modes": len(modes),
        "nodes_missing_value_tracks_true": len(missing),
    }
    if any(n != count for n in lengths.values()):
        raise g.shape_error(op, f"node attributes of different lengths ({count} nodes_nodeids, {lengths})")
    unknown = sorted(set(modes) - {*MODES, "LEAF"})
    if unknown:
        raise g.unsupported(op, f"node modes {unknown}")
    local: dict[tuple[int, int], tuple[Tree, int]] = {}
    trees: dict[int, Tree] = {}
    for position, (tree_id, node_id) in enumerate(zip(tree_ids, node_ids)):
        tree = trees.setdefault(tree_id, Tree())
        if (tree_id, node_id) in local:
            raise g.shape_error(op, f"node {node_id} of tree {tree_id} is listed twice")
        local[(tree_id, node_id)] = (tree, len(tree))
        tree.modes.append(modes[position])
        tree.missing_true.append(bool(missing[position]))
        leaf = modes[position] == "LEAF"
        tree.features.append(0 if leaf else features[position])
        tree.thresholds.append(0.0 if leaf else float(values[position]))

    def child(tree_id: int, node_id: int, position: int) -> int:
        found = local.get((tree_id, node_id))
        if found is None or found[0] is not trees[tree_id]:
            raise g.shape_error(op, f"node {node_ids[position]} of tree {tree_id} has no child node {node_id}")
        return found[1]

    for position, (tree_id, node_id) in enumerate(zip(tree_ids, node_ids)):
        tree, index = local[(tree_id, node_id)]
        leaf = tree.is_leaf(index)
        tree.true_children.append(index if leaf else child(tree_id, true_ids[position], position))
        tree.false_children.append(index if leaf else child(tree_id, false_ids[position], position))
    _add_weights(g, op, weight_prefix, local)
    return list(trees.values())


def _add_weights(g: GraphLowering, op: OnnxOp, prefix: str, local: dict) -> None:
    weights = _floats(op, f"{prefix}_weights")
    places = zip(_ints(op, f"{prefix}_treeids"), _ints(op, f"{prefix}_nodeids"), _ints(op, f"{prefix}_ids"), weights)
    aggregate = op.attr("aggregate_function") if "aggregate_function" in op.ATTR_TYPES else "SUM"
    for tree_id, node_id, target, weight in places:
        found = local.get((tree_id, node_id))
        if found is None or not found[0].is_leaf(found[1]):
            raise g.shape_error(op, f"a weight names node {node_id} of tree {tree_id}, which is no leaf")
        values = found[0].weights.setdefault(found[1], {})
        if target in values:
            combine = {"MIN": min, "MAX": max}.get(aggregate, lambda a, b: a + b)
            values[target] = combine(values[target], float(weight))
        else:
            values[target] = float(weight)


def trees_of_tensors(g: GraphLowering, op: OnnxOp) -> list[Tree]:
    """The trees of TreeEnsemble (ai.onnx.ml 5): split nodes by array position, each
    child either a split node or a leaf (`nodes_*leafs`), leaves' weights by
    `leaf_targetids`/`leaf_weights`."""
    splits = np.asarray(op.attr("nodes_splits"), dtype=np.float64).reshape(-1)
    features = _ints(op, "nodes_featureids")
    modes = [int(m) for m in np.asarray(op.attr("nodes_modes")).reshape(-1)]
    if any(m < 0 or m > SET_MEMBERSHIP for m in modes):
        raise g.unsupported(op, f"node modes {sorted({m for m in modes if m < 0 or m > SET_MEMBERSHIP})}")
    members = _member_sets(g, op, modes)
    missing = _ints(op, "nodes_missing_value_tracks_true") or [0] * len(modes)
    children = [(_ints(op, "nodes_truenodeids"), _ints(op, "nodes_trueleafs"))]
    children.append((_ints(op, "nodes_falsenodeids"), _ints(op, "nodes_falseleafs")))
    targets, weights = _ints(op, "leaf_targetids"), np.asarray(op.attr("leaf_weights"), dtype=np.float64).reshape(-1)
    trees = []
    for root in _ints(op, "tree_roots"):
        tree = Tree()

        def add(split: int | None, leaf: int | None) -> int:
            index = len(tree)
            if index > 2 * len(modes):  # more nodes than splits and their leaves: a split reached twice
                raise g.shape_error(op, f"the tree at root {root} reaches a split twice (a cycle or a shared subtree)")
            tree.features.append(0 if split is None else features[split])
            tree.thresholds.append(0.0 if split is None else float(splits[split]))
            tree.modes.append("LEAF" if split is None else (MODES + (MEMBER,))[modes[split]])
            if split in members:
                tree.members[index] = members[split]
            tree.missing_true.append(split is not None and bool(missing[split]))
            tree.true_children.append(index)
            tree.false_children.append(index)
            if leaf is not None:
                tree.weights[index] = {targets[leaf]: float(weights[leaf])}
            elif split is not None:
                for side, (ids, is_leaf) in enumerate(children):
                    target = ids[split]
                    child = add(None, target) if is_leaf[split] else add(target, None)
                    (tree.true_children if side == 0 else tree.false_children)[index] = child
            return index

        add(root, None)
        trees.append(tree)
    return trees


def _member_sets(g: GraphLowering, op: OnnxOp, modes: list[int]) -> dict[int, tuple[float, ...]]:
    """The set of each BRANCH_MEMBER node (by split index): membership_values lists them
    in node order, each ended by a NaN."""
    nodes = [split for split, mode in enumerate(modes) if mode == SET_MEMBERSHIP]
    values = np.asarray(op.attr("membership_values") if op.attr("membership_values") is not None else [], np.float64)
    ends = np.flatnonzero(np.isnan(values.reshape(-1)))
    if len(ends) != len(nodes):
        raise g.shape_error(
            op, f"membership_values holds {len(ends)} NaN-ended sets for {len(nodes)} BRANCH_MEMBER nodes"
        )
    starts = np.concatenate([[0], ends[:-1] + 1]).astype(int)
    flat = values.reshape(-1)
    sets = {node: tuple(float(v) for v in flat[start:end]) for node, start, end in zip(nodes, starts, ends)}
    empty = [node for node, members in sets.items() if not members]
    if empty:
        raise g.shape_error(op, f"BRANCH_MEMBER nodes {empty} have empty sets (onnxruntime refuses them too)")
    return sets


def _aggregate(g: GraphLowering, op: OnnxOp) -> str:
    value = op.attr("aggregate_function") if "aggregate_function" in op.ATTR_TYPES else "SUM"
    if isinstance(value, int):
        value = AGGREGATES[value] if 0 <= value < len(AGGREGATES) else str(value)
    if value not in AGGREGATES:
        raise g.unsupported(op, f"aggregate_function {value!r}")
    return value


@dataclass
class _Ensemble:
    """The trees of one op ready to run a sample: the nested ones as they are, the
    walked ones as node arrays (weights made before the sample loop), and how
    leaf values combine. Totals are computed in the compare type."""

    element: Attribute
    aggregate: str
    nested: list[Tree]
    walk: NodeWalk
    tree_count: int

    @staticmethod
    def build(g: GraphLowering, op: OnnxOp, x: SSAValue, trees: list[Tree], targets: int) -> _Ensemble:
        for number, tree in enumerate(trees):
            if tree.has_cycle():
                raise g.shape_error(op, f"tree {number} is no tree: a path from its root comes back to a node")
            if any(t >= targets or t < 0 for t in tree.targets()):
                raise g.shape_error(op, f"a leaf weight names target {max(tree.targets())} of {targets}")
            columns = shape_of(x)[-1]  # known at run time only: features read clamped below it
            if any(f < 0 or isinstance(columns, int) and f >= columns for f in tree.features):
                raise g.shape_error(op, f"a node reads feature {max(tree.features)} of {shape_text([columns])}")
        aggregate = _aggregate(g, op)
        element = _compare_type(g, op, x)
        nested, walked = split_by_size(trees)
        walk = NodeWalk.build(g, op, element, walked, targets, MISSING[aggregate])
        return _Ensemble(element, aggregate, nested, walk, len(trees))

    def totals(self, b: KernelBuilder, x: SSAValue, sample: SSAValue, result: Attribute, targets: int):
        """One sample's aggregate per target (before base values) as `result`s; a
        MIN/MAX target that no reached leaf has is 0."""
        missing = MISSING[self.aggregate]
        combine = {"MIN": KernelBuilder.min, "MAX": KernelBuilder.max}.get(self.aggregate, KernelBuilder.add)

        columns = shape_of(x)[-1]

        def feature(inner: KernelBuilder, index) -> SSAValue:
            if not isinstance(columns, int):  # never past the end, were a tree to read past it
                index = inner.min(index, inner.sub(columns, 1))
            return load_as(inner, x, feature_index(x, sample, index), self.element)

        code = TreeCode(self.element, feature, lambda inner, total, value: combine(inner, total, value), missing)
        totals = [b.constant(missing, self.element)] * targets
        for tree in self.nested:
            totals = add_nested(b, code, tree, totals)
        totals = self.walk.add(b, code, totals)
        if self.aggregate in ("MIN", "MAX"):
            sentinel = b.constant(missing, self.element)
            totals = [b.select(b.compare("eq", t, sentinel), b.constant(0.0, self.element), t) for t in totals]
        if self.aggregate == "AVERAGE":
            totals = [b.div(t, b.constant(float(self.tree_count), self.element)) for t in totals]
        return [v if v.type == result else b.convert(v, result) for v in totals]


def _compare_type(g: GraphLowering, op: OnnxOp, x: SSAValue) -> Attribute:
    """Thresholds compare in double for a double input, else in float (integers converted)."""
    element = g.element_type(op, x)
    return element if is_float(element) and element.bitwidth == 64 else f32


def _with_base(b: KernelBuilder, totals: Sequence[SSAValue], base: np.ndarray) -> list[SSAValue]:
    return [b.add(t, b.constant(float(v), t.type)) for t, v in zip(totals, base)] + list(totals[len(base) :])


@lowers("TreeEnsembleRegressor", "TreeEnsemble", run_time_dims=True)
def lower_tree_ensemble_regressor(g: GraphLowering, op: OnnxOp) -> None:
    x, samples, _ = sample_rows(g, op)
    targets = op.attr("n_targets")
    if not targets:
        raise g.shape_error(op, "n_targets is not given")
    if op.OP_TYPE == "TreeEnsemble":
        trees = trees_of_tensors(g, op)
        base = np.zeros(0)
    else:
        trees = trees_of_node_lists(g, op, "target")
        base = _floats(op, "base_values")
    if len(base) not in (0, targets):
        raise g.shape_error(op, f"{len(base)} base values for {targets} targets")
    transform = post_transform_of(g, op)
    out = g.result(op)
    ensemble = _Ensemble.build(g, op, x, trees, targets)
    ivs, b = g.top.loop_nest([samples])
    totals = ensemble.totals(b, x, ivs[0], out.type.get_element_type(), targets)
    totals = _with_base(b, totals, base)
    values = single_score(b, totals[0], transform, None) if targets == 1 else post_transform(b, totals, transform)
    for column, value in enumerate(values):
        b.store(value, out, [ivs[0], column])


def _class_coverage(trees: Sequence[Tree], classes: int) -> tuple[set[int], set[int]]:
    """(classes some tree scores in every leaf, classes some leaf scores)."""
    always, ever = set(), set()
    for tree in trees:
        leaves = [n for n in range(len(tree)) if tree.is_leaf(n)]
        scored = [set(tree.weights.get(n, {})) for n in leaves]
        always |= set.intersection(*scored) if scored else set()
        ever |= set.union(set(), *scored)
    return always, ever & set(range(classes))


@lowers("TreeEnsembleClassifier", run_time_dims=True)
def lower_tree_ensemble_classifier(g: GraphLowering, op: OnnxOp) -> None:
    x, samples, _ = sample_rows(g, op)
    labels = class_labels(g, op, "classlabels_int64s", "classlabels_strings")
    classes = len(labels)
    trees = trees_of_node_lists(g, op, "class")
    base = _floats(op, "base_values")
    transform = post_transform_of(g, op)
    always, ever = _class_coverage(trees, classes)
    weights = _floats(op, "class_weights")
    binary = classes == 2 and len(ever) == 1
    if binary and (ever != {0} or len(base) > 1 or transform == "PROBIT"):
        raise g.unsupported(op, "a binary classifier weighting class 1 only, with 2 base values or with PROBIT")
    if not binary and len(base) not in (0, classes):
        raise g.unsupported(op, f"{len(base)} base values for {classes} classes")
    if not binary and not len(base) and set(range(classes)) - always:
        unscored = sorted(set(range(classes)) - always)
        raise g.unsupported(op, f"classes {unscored} are not scored by every leaf of some tree (no base values)")
    if classes == 2 and not binary and len(base) == 2:
        raise g.unsupported(op, "two classes with two base values (onnxruntime ignores the weights)")
    label_out, score_out = g.result(op, 0), g.result(op, 1)
    ensemble = _Ensemble.build(g, op, x, trees, classes)
    table = weight_buffer(g, op, labels, i64, "class_labels") if classes > 2 else None
    ivs, b = g.top.loop_nest([samples])
    totals = ensemble.totals(b, x, ivs[0], f32, classes)
    zero = b.constant(0.0, f32)
    if binary:
        score = _with_base(b, totals[:1], base)[0]
        all_positive = bool(np.all(weights >= 0))
        positive = b.compare("gt", score, b.constant(0.5 if all_positive else 0.0, f32))
        label = b.select(positive, b.constant(int(labels[1]), i64), b.constant(int(labels[0]), i64))
        if all_positive or transform == "LOGISTIC":  # the columns do not depend on the label
            values = single_score(b, score, transform, 0 if all_positive else 2)
        else:
            hit, miss = (single_score(b, score, transform, second) for second in (2, 3))
            values = [b.select(positive, h, m) for h, m in zip(hit, miss)]
    else:
        scores = _with_base(b, totals, base)
        if classes == 2:  # onnxruntime's labels are 1 and 0 here, whatever the class labels
            label = b.select(b.compare("gt", scores[1], zero), b.constant(1, i64), b.constant(0, i64))
        else:
            label = b.load(table, [argmax(b, scores)])
        values = post_transform(b, scores, transform)
    b.store(label, label_out, ivs)
    for column, value in enumerate(values):
        b.store(value, score_out, [ivs[0], column])
