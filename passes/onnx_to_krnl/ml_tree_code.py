"""Tree ensembles as code: the traversal of each tree emitted for one sample.

Two forms, chosen per tree by its size:

- nested comparisons (trees of at most NESTED_MAX_NODES nodes, while the
  ensemble's nested nodes stay within NESTED_BUDGET): an `scf.if` per branch
  node whose threshold, feature and mode are immediates and whose leaves yield
  their values as constants. Nothing is loaded but the features; a sample takes
  one chain of predictable branches. Code grows with the node count, so big
  trees would fill the instruction cache (and LLVM's time).
- a node-array walk (all other trees): one scf.for over groups of
  WALKED_TOGETHER trees, and per group one scf.while stepping each of its trees
  once per iteration, `node += cond ? true_delta : false_delta`, through one flat
  constant array of node records (feature, threshold bits, true and false
  delta: one cache line per step, where separate arrays cost four), until every
  delta is 0 (a leaf's: the or of the deltas is the loop's one check), so a
  group takes its longest path, not the trees' depth (random forests' paths are
  about 0.6 of it). A node is its record's element offset, so that a field's
  address is a base plus a scaled index (no multiply), and a leaf's threshold
  field holds its row of leaf values. Each tree's step is emitted whole, its
  delta added and or-ed at once, one tree after the other: LLVM then keeps most
  of the trees' nodes in registers (computing every delta first spilled them:
  the walk of 100 trees of depth 17 took 1.25x as long; docs/performance.md).
  Code size is constant.

Leaf values are added (or min/max-ed) into one accumulator per target, carried
in registers through both forms.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerType, i1, i8, i32
from xdsl.ir import Attribute, Block, Region, SSAValue

from onnxc.dialects.types import numpy_dtype_of
from onnxc.passes.helpers.krnl_builder import KernelBuilder
from onnxc.passes.onnx_to_krnl.common import GraphLowering, weight_buffer
from onnxc.passes.onnx_to_krnl.ml_scores import accumulate

NESTED_MAX_NODES = 63
"""Trees up to this many nodes (depth 5 when balanced) become nested comparisons."""
WALKED_TOGETHER = 20
"""Walked trees stepped side by side per sample (their dependent load chains overlap)."""
NESTED_BUDGET = 4096
"""At most this many nodes of an ensemble become nested comparisons (about 80 KB of code)."""

RECORD = ("feature", "threshold", "true_delta", "false_delta")
"""The fields of a walked node's record, in order (the threshold as its bits)."""
RECORD_WIDTH = len(RECORD)
MODES = ("BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ")
_COMPARISONS = dict(zip(MODES, ("le", "lt", "ge", "gt", "eq", "ne")))
MEMBER = "BRANCH_MEMBER"
"""TreeEnsemble's set membership: nested, one equality per member; walked, a chain of BRANCH_EQ nodes."""


@dataclass
class Tree:
    """One tree, nodes by local index (0 is the root). A leaf has mode "LEAF" and
    its children are itself; `weights[node]` maps target -> value for leaves."""

    features: list[int] = field(default_factory=list)
    thresholds: list[float] = field(default_factory=list)
    modes: list[str] = field(default_factory=list)
    missing_true: list[bool] = field(default_factory=list)
    true_children: list[int] = field(default_factory=list)
    false_children: list[int] = field(default_factory=list)
    weights: dict[int, dict[int, float]] = field(default_factory=dict)
    members: dict[int, tuple[float, ...]] = field(default_factory=dict)
    """The set of a BRANCH_MEMBER node (true where the feature is one of them)."""

    def __len__(self) -> int:
        return len(self.modes)

    def is_leaf(self, node: int) -> bool:
        return self.modes[node] == "LEAF"

    def has_cycle(self) -> bool:
        """Whether a path from the root comes back to a node (its walk would never end):
        some node is still reached after as many steps as the tree has nodes."""
        frontier = {0}
        for _ in range(len(self)):
            frontier = {
                child
                for node in frontier
                if not self.is_leaf(node)
                for child in (self.true_children[node], self.false_children[node])
            }
            if not frontier:
                return False
        return True

    def with_member_chains(self) -> Tree:
        """This tree with each BRANCH_MEMBER node a chain of BRANCH_EQ nodes, one per
        member, the chain's extra nodes appended (what the walk steps through: its
        records compare with one threshold)."""
        if not self.members:
            return self
        tree = replace(self, **{name: list(getattr(self, name)) for name in _NODE_FIELDS}, members={})
        for node, values in self.members.items():
            false_child = self.false_children[node]
            chain = [node] + [tree.append_like(node) for _ in values[1:]]
            for position, (link, value) in enumerate(zip(chain, values)):
                tree.modes[link], tree.thresholds[link] = "BRANCH_EQ", value
                tree.false_children[link] = chain[position + 1] if position + 1 < len(chain) else false_child
        return tree

    def append_like(self, node: int) -> int:
        """A copy of branch node `node` at the end; its index."""
        for name in _NODE_FIELDS:
            getattr(self, name).append(getattr(self, name)[node])
        return len(self) - 1

    def targets(self) -> list[int]:
        return sorted({t for values in self.weights.values() for t in values})


_NODE_FIELDS = ("features", "thresholds", "modes", "missing_true", "true_children", "false_children")

Combine = Callable[[KernelBuilder, SSAValue, SSAValue], SSAValue]
"""(builder, accumulator, a leaf's value) -> accumulator (sum, min or max)."""


@dataclass
class TreeCode:
    """What the traversal of one sample needs: the compare type, the feature
    loader, how leaf values combine and the value of a target a leaf lacks."""

    element: Attribute
    feature: Callable[[KernelBuilder, Bound], SSAValue]
    combine: Combine
    missing_value: float


Bound = int | SSAValue


def split_by_size(trees: Sequence[Tree]) -> tuple[list[Tree], list[Tree]]:
    """(trees to nest, trees to walk), by NESTED_MAX_NODES and NESTED_BUDGET."""
    nested, walked, budget = [], [], NESTED_BUDGET
    for tree in trees:
        if len(tree) <= NESTED_MAX_NODES and len(tree) <= budget:
            nested.append(tree)
            budget -= len(tree)
        else:
            walked.append(tree)
    return nested, walked


def _condition(
    b: KernelBuilder, mode: str, value: SSAValue, threshold: SSAValue | list[SSAValue], missing_true: SSAValue | bool
):
    """Whether a sample goes to the true child (for BRANCH_MEMBER `threshold` lists the
    members); NaN goes there where missing values track true."""
    if mode == MEMBER:
        condition = b.constant(False, i1)
        for member in threshold:
            condition = b.or_(condition, b.compare("eq", value, member))
    else:
        condition = b.compare(_COMPARISONS[mode], value, threshold)
    if missing_true is False:
        return condition
    nan = b.is_nan(value)
    return b.or_(condition, nan if missing_true is True else b.and_(nan, missing_true))


def add_nested(b: KernelBuilder, code: TreeCode, tree: Tree, accumulators: list[SSAValue]) -> list[SSAValue]:
    """accumulators combined with the leaf of `tree` the sample reaches, by nested scf.if."""
    targets = tree.targets()

    def emit(builder: KernelBuilder, node: int) -> list[SSAValue]:
        if tree.is_leaf(node):
            values = tree.weights.get(node, {})
            return [builder.constant(values.get(t, code.missing_value), code.element) for t in targets]
        value = code.feature(builder, tree.features[node])
        if tree.modes[node] == MEMBER:
            threshold = [builder.constant(v, code.element) for v in tree.members[node]]
        else:
            threshold = builder.constant(tree.thresholds[node], code.element)
        condition = _condition(builder, tree.modes[node], value, threshold, tree.missing_true[node])
        regions = []
        for child in (tree.true_children[node], tree.false_children[node]):
            block = Block()
            inner = builder.at_end(block)
            inner.insert(scf.YieldOp(*emit(inner, child)))
            regions.append(Region(block))
        return list(builder.insert(scf.IfOp(condition, [code.element] * len(targets), *regions)).results)

    result = list(accumulators)
    for target, value in zip(targets, emit(b, 0)):
        result[target] = code.combine(b, result[target], value)
    return result


@dataclass
class _NodeArrays:
    """The walked trees flattened into records of RECORD_WIDTH integers, addressed by
    element offset (a record's number times RECORD_WIDTH, so that a field's address
    needs no multiply): children are deltas of such offsets, 0 and 0 for a leaf,
    whose threshold field holds its row of leaf values instead."""

    features: list[int] = field(default_factory=list)
    thresholds: list[float] = field(default_factory=list)
    leaf_rows: list[int] = field(default_factory=list)
    """A leaf's row of leaf_values, -1 for a branch node."""
    deltas: list[tuple[int, int]] = field(default_factory=list)
    modes: list[int] = field(default_factory=list)
    missing_true: list[bool] = field(default_factory=list)
    roots: list[int] = field(default_factory=list)
    leaf_values: list[list[float]] = field(default_factory=list)

    @staticmethod
    def of(trees: Sequence[Tree], targets: int, missing_value: float) -> _NodeArrays:
        arrays = _NodeArrays()
        for tree in trees:
            arrays.roots.append(len(arrays.features) * RECORD_WIDTH)
            for node in range(len(tree)):
                leaf = tree.is_leaf(node)
                arrays.features.append(0 if leaf else tree.features[node])
                arrays.thresholds.append(0.0 if leaf else tree.thresholds[node])
                arrays.modes.append(0 if leaf else MODES.index(tree.modes[node]))
                arrays.missing_true.append(tree.missing_true[node])
                children = (node, node) if leaf else (tree.true_children[node], tree.false_children[node])
                arrays.deltas.append(tuple((child - node) * RECORD_WIDTH for child in children))
                arrays.leaf_rows.append(len(arrays.leaf_values) if leaf else -1)
                if leaf:
                    values = tree.weights.get(node, {})
                    arrays.leaf_values.append([values.get(t, missing_value) for t in range(targets)])
        return arrays

    def records(self, float_dtype: np.dtype, bits: np.dtype) -> np.ndarray:
        """The records as one flat array of `bits` integers (thresholds as their bits)."""
        rows = np.asarray(self.leaf_rows, dtype=bits)
        thresholds = np.where(rows >= 0, rows, np.asarray(self.thresholds, dtype=float_dtype).view(bits))
        true, false = np.asarray(self.deltas, dtype=bits).reshape(-1, 2).T
        return np.stack([np.asarray(self.features, dtype=bits), thresholds, true, false], axis=1).reshape(-1)


@dataclass
class NodeWalk:
    """The walked trees' node arrays as weights (made before the sample loop, outside
    any nest) and the modes their branch nodes use."""

    count: int
    buffers: dict[str, SSAValue]
    branch_modes: list[str]

    @staticmethod
    def build(g: GraphLowering, op, element: Attribute, trees: Sequence[Tree], targets: int, missing: float):
        trees = [tree.with_member_chains() for tree in trees]
        arrays = _NodeArrays.of(trees, targets, missing)
        float_dtype = numpy_dtype_of(element)
        bits = np.dtype(f"i{float_dtype.itemsize}")
        branch_modes = sorted({m for tree in trees for m in tree.modes if m != "LEAF"}) or ["BRANCH_LEQ"]
        integer = IntegerType(bits.itemsize * 8)
        columns = {
            "nodes": (arrays.records(float_dtype, bits), bits, integer),
            "roots": (arrays.roots, np.int32, i32),
            "leaf_values": (arrays.leaf_values, float_dtype, element),
        }
        if len(branch_modes) > 1:
            columns["modes"] = (arrays.modes, np.int8, i8)
        if any(arrays.missing_true):
            columns["missing_true"] = (arrays.missing_true, np.int8, i8)
        buffers = {
            name: weight_buffer(g, op, np.asarray(values, dtype=dtype), kind, f"tree_{name}")
            for name, (values, dtype, kind) in columns.items()
        }
        return NodeWalk(len(trees), buffers, branch_modes)

    def add(self, b: KernelBuilder, code: TreeCode, accumulators: list[SSAValue]) -> list[SSAValue]:
        """accumulators combined with the leaves the sample reaches in the walked trees."""
        if not self.count:
            return accumulators
        arrays = self.buffers
        nodes, modes, missing = arrays["nodes"], arrays.get("modes"), arrays.get("missing_true")

        def field_of(inner: KernelBuilder, node: SSAValue, name: str) -> SSAValue:
            return inner.load(nodes, [inner.add(node, RECORD.index(name))])

        def step(inner: KernelBuilder, node: SSAValue) -> SSAValue:
            """The delta from `node` to the record the sample goes to next (0 at a leaf)."""
            value = code.feature(inner, inner.to_index(field_of(inner, node, "feature")))
            threshold = inner.insert(arith.BitcastOp(field_of(inner, node, "threshold"), code.element)).result
            number = inner.div(node, RECORD_WIDTH) if modes is not None or missing is not None else None
            track = (
                False if missing is None else inner.compare("ne", inner.load(missing, [number]), inner.constant(0, i8))
            )
            condition = _condition(inner, self.branch_modes[0], value, threshold, track)
            if modes is not None:
                mode = inner.load(modes, [number])
                for other in self.branch_modes[1:]:
                    chosen = inner.compare("eq", mode, inner.constant(MODES.index(other), i8))
                    condition = inner.select(chosen, _condition(inner, other, value, threshold, track), condition)
            return inner.select(condition, field_of(inner, node, "true_delta"), field_of(inner, node, "false_delta"))

        def leaves_of(inner: KernelBuilder, roots: list[SSAValue]) -> list[SSAValue]:
            """The leaves reached from `roots`, walked side by side (independent load chains
            overlap) while any delta is not 0."""
            before = Block(arg_types=[IndexType()] * len(roots))
            check = inner.at_end(before)
            following, moved = [], None
            for node in before.args:
                delta = step(check, node)
                following.append(check.add(node, check.to_index(delta)))
                moved = delta if moved is None else check.insert(arith.OrIOp(moved, delta)).result
            going = check.compare("ne", moved, check.constant(0, moved.type))
            check.insert(scf.ConditionOp(going, *following))
            after = Block(arg_types=[IndexType()] * len(roots))
            after.add_op(scf.YieldOp(*after.args))
            loop = inner.insert(scf.WhileOp(roots, [IndexType()] * len(roots), Region(before), Region(after)))
            return list(loop.results)

        def add_trees(inner: KernelBuilder, first: SSAValue, count: int, carried: list) -> list:
            """carried combined with the leaves of trees [first, first + count), in order."""
            roots = [inner.to_index(inner.load(arrays["roots"], [inner.add(first, k)])) for k in range(count)]
            for leaf in leaves_of(inner, roots):
                row = inner.to_index(field_of(inner, leaf, "threshold"))
                values = arrays["leaf_values"]
                carried = [code.combine(inner, total, inner.load(values, [row, t])) for t, total in enumerate(carried)]
            return carried

        groups, rest = divmod(self.count, WALKED_TOGETHER)
        if groups:
            accumulators = accumulate(
                b,
                groups,
                accumulators,
                lambda inner, group, carried: add_trees(
                    inner, inner.mul(group, WALKED_TOGETHER), WALKED_TOGETHER, carried
                ),
            )
        return add_trees(b, b.index(groups * WALKED_TOGETHER), rest, accumulators) if rest else accumulators
