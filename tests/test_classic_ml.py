"""scikit-learn models converted by skl2onnx (ai.onnx.ml), compiled and compared with
onnxruntime: labels equal, probabilities and values within 1e-4 (relative for values).

Models are trained here on data scikit-learn ships (iris, breast cancer, diabetes);
forests and boosting stay small so that the module runs in seconds. Hand-built
models cover what skl2onnx does not write: every node mode, NaN tracking, the
aggregates, the post transforms, and the refusals.
"""

from __future__ import annotations

import warnings

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import onnxc
from onnxc.errors import ShapeError, UnsupportedOpError
from onnxc.runtime import Session

sklearn = pytest.importorskip("sklearn")
skl2onnx = pytest.importorskip("skl2onnx")

from sklearn.base import is_classifier
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris
from sklearn.ensemble import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler, Normalizer, OneHotEncoder, StandardScaler
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

ML = "ai.onnx.ml"
TOLERANCE = 1e-4


def _data(loader) -> tuple[np.ndarray, np.ndarray]:
    x, y = loader(return_X_y=True)
    return x.astype(np.float32), y


IRIS, CANCER, DIABETES = _data(load_iris), _data(load_breast_cancer), _data(load_diabetes)


def convert(model, x: np.ndarray) -> onnx.ModelProto:
    """`model` (fitted) as ONNX; a classifier's probabilities as a tensor (no ZipMap)."""
    options = {id(model): {"zipmap": False}} if is_classifier(model) else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return skl2onnx.to_onnx(model, x[:1], options=options, target_opset={"": 17, ML: 3})


def compile_and_compare(tmp_path, proto: onnx.ModelProto, feeds: dict[str, np.ndarray], shapes=None) -> list:
    """Compile `proto` (with input `shapes` pinned, if given), run it and onnxruntime on
    `feeds`; assert labels (integer outputs) equal, floats within TOLERANCE, and
    sequences of maps (ZipMap) the same keys with values within TOLERANCE. Returns
    onnxc's outputs."""
    path = tmp_path / "model.onnx"
    onnx.save(proto, path)
    onnxc.compile(path, tmp_path / "model.so", shapes=shapes)
    got = Session(str(tmp_path / "model.so")).run(None, feeds)
    want = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    assert len(got) == len(want)
    for ours, theirs in zip(got, want):
        if isinstance(theirs, list):  # ZipMap: one dict per sample
            assert isinstance(ours, list) and [list(m) for m in ours] == [list(m) for m in theirs]
            ours, theirs = (np.array([list(m.values()) for m in maps], dtype=np.float32) for maps in (ours, theirs))
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        if np.issubdtype(theirs.dtype, np.integer):
            np.testing.assert_array_equal(ours, theirs)
        else:
            np.testing.assert_allclose(ours, theirs, rtol=TOLERANCE, atol=TOLERANCE)
    return got


SKLEARN_MODELS = {
    "logistic_regression_scaler": (lambda: make_pipeline(StandardScaler(), LogisticRegression()), CANCER),
    "logistic_regression_multiclass": (
        lambda: make_pipeline(MinMaxScaler(), Normalizer(), LogisticRegression(max_iter=500)),
        IRIS,
    ),
    "linear_regression": (LinearRegression, DIABETES),
    "decision_tree": (lambda: DecisionTreeClassifier(max_depth=4, random_state=0), IRIS),
    "decision_tree_regressor": (lambda: DecisionTreeRegressor(max_depth=6, random_state=0), DIABETES),
    "random_forest_binary": (lambda: RandomForestClassifier(n_estimators=4, random_state=0), CANCER),
    "random_forest_multiclass": (lambda: RandomForestClassifier(n_estimators=4, max_depth=4, random_state=0), IRIS),
    "random_forest_regressor": (lambda: RandomForestRegressor(n_estimators=4, random_state=0), DIABETES),
    "gradient_boosting_binary": (lambda: GradientBoostingClassifier(n_estimators=8, random_state=0), CANCER),
    "gradient_boosting_multiclass": (lambda: GradientBoostingClassifier(n_estimators=8, random_state=0), IRIS),
    "gradient_boosting_regressor": (lambda: GradientBoostingRegressor(n_estimators=8, random_state=0), DIABETES),
}


@pytest.mark.parametrize("name", SKLEARN_MODELS)
def test_sklearn_model_matches_onnxruntime(tmp_path, name):
    make, (x, y) = SKLEARN_MODELS[name]
    proto = convert(make().fit(x, y), x)
    assert any(node.domain == ML for node in proto.graph.node)
    compile_and_compare(tmp_path, proto, {"X": x})


def test_column_transformer_with_one_hot(tmp_path):
    """Two integer category columns one-hot encoded beside scaled numeric ones."""
    x, y = CANCER
    categories = np.stack([(x[:, 0] > 14).astype(np.int64) * 2, (x[:, 1] > 19).astype(np.int64) + 3], axis=1)
    transformer = ColumnTransformer([("one_hot", OneHotEncoder(), [0, 1])])
    model = make_pipeline(transformer, LogisticRegression()).fit(categories, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        proto = skl2onnx.to_onnx(
            model, categories[:1], options={id(model[-1]): {"zipmap": False}}, target_opset={"": 17, ML: 3}
        )
    assert "OneHotEncoder" in {node.op_type for node in proto.graph.node}
    compile_and_compare(tmp_path, proto, {"X": categories})


# ---------------------------------------------------------------------- hand-built ensembles


def regressor_model(x_columns: int, attrs: dict, output_type=TensorProto.FLOAT, op="TreeEnsembleRegressor", opset=3):
    """One ai.onnx.ml node `op` from X [N, x_columns] to Y [N, n_targets]."""
    node = helper.make_node(op, ["X"], ["Y"], domain=ML, **attrs)
    targets = attrs.get("n_targets", 1)
    graph = helper.make_graph(
        [node],
        "trees",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, x_columns])],
        [helper.make_tensor_value_info("Y", output_type, [None, targets])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, opset)])


def _stump_forest(modes: list[str], missing: list[int], targets: int = 1, aggregate: str = "SUM", transform="NONE"):
    """One stump per mode on feature k % 2, threshold 0.5: leaf weights differ per tree and target."""
    attrs = {key: [] for key in ("nodes_treeids", "nodes_nodeids", "nodes_modes", "nodes_featureids", "nodes_values")}
    attrs |= {key: [] for key in ("nodes_truenodeids", "nodes_falsenodeids", "nodes_missing_value_tracks_true")}
    attrs |= {key: [] for key in ("target_treeids", "target_nodeids", "target_ids", "target_weights")}
    for tree, (mode, track) in enumerate(zip(modes, missing)):
        attrs["nodes_treeids"] += [tree] * 3
        attrs["nodes_nodeids"] += [0, 1, 2]
        attrs["nodes_modes"] += [mode, "LEAF", "LEAF"]
        attrs["nodes_featureids"] += [tree % 2, 0, 0]
        attrs["nodes_values"] += [0.5, 0.0, 0.0]
        attrs["nodes_truenodeids"] += [1, 0, 0]
        attrs["nodes_falsenodeids"] += [2, 0, 0]
        attrs["nodes_missing_value_tracks_true"] += [track, 0, 0]
        for leaf in (1, 2):
            for target in range(targets):
                attrs["target_treeids"].append(tree)
                attrs["target_nodeids"].append(leaf)
                attrs["target_ids"].append(target)
                attrs["target_weights"].append(float(tree + 1) * (leaf * 2 - 3) + target)
    return attrs | {"n_targets": targets, "aggregate_function": aggregate, "post_transform": transform}


MODES = ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"]
STUMP_INPUT = np.array([[0.5, 0.2], [0.7, 0.5], [np.nan, 0.9], [0.1, np.nan], [-1.0, 3.0]], dtype=np.float32)


@pytest.mark.parametrize("aggregate", ["SUM", "AVERAGE", "MIN", "MAX"])
def test_every_node_mode_and_missing_track(tmp_path, aggregate):
    attrs = _stump_forest(MODES, [1, 0, 1, 0, 1, 0], targets=2, aggregate=aggregate)
    compile_and_compare(tmp_path, regressor_model(2, attrs), {"X": STUMP_INPUT})


@pytest.mark.parametrize("transform", ["LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT"])
def test_post_transforms_are_fused(tmp_path, transform):
    attrs = _stump_forest(MODES[:3], [0, 0, 0], targets=3, transform=transform)
    if transform == "PROBIT":  # probit takes probabilities: weights in (0, 1)
        attrs["target_weights"] = [0.05 + 0.1 * (k % 9) for k in range(len(attrs["target_weights"]))]
    compile_and_compare(tmp_path, regressor_model(2, attrs), {"X": STUMP_INPUT})


def test_large_trees_are_walked_small_ones_nested(tmp_path):
    """A forest mixing a deep tree (over NESTED_MAX_NODES nodes: walked, with mixed
    modes read from the node arrays) and a small one (nested)."""
    from onnxc.passes.onnx_to_krnl.ml_tree_code import NESTED_MAX_NODES

    x, y = DIABETES
    deep = DecisionTreeRegressor(random_state=0).fit(x, y)
    assert deep.tree_.node_count > NESTED_MAX_NODES
    proto = convert(deep, x)
    node = proto.graph.node[0]
    modes = next(a for a in node.attribute if a.name == "nodes_modes")
    modes.strings[0] = b"BRANCH_LT"  # a second mode in the walked tree
    compile_and_compare(tmp_path, proto, {"X": x[:50]})


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_walked_trees_step_side_by_side(tmp_path, dtype):
    """A forest of deep trees, all walked: WALKED_TOGETHER at a time and the rest
    after; a double input compares in double (records of 64-bit fields)."""
    from onnxc.passes.onnx_to_krnl.ml_tree_code import WALKED_TOGETHER

    x, y = DIABETES
    forest = RandomForestRegressor(n_estimators=WALKED_TOGETHER + 3, random_state=0).fit(x, y)
    proto = convert(forest, x)
    proto.graph.input[0].type.tensor_type.elem_type = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    compile_and_compare(tmp_path, proto, {"X": x[:64].astype(dtype)})


def _shuffled_nodes(proto: onnx.ModelProto, seed: int = 0) -> onnx.ModelProto:
    """`proto` with its tree ensemble's node lists in a random order, each tree's root
    still listed first of its tree (its root): children then come before and after
    their parents, so walked records step backward as well as forward."""
    node = proto.graph.node[-1]
    lists = {a.name: a for a in node.attribute if a.name.startswith("nodes_")}
    trees = list(lists["nodes_treeids"].ints)
    order = list(np.random.default_rng(seed).permutation(len(trees)))
    for tree in set(trees):  # the root (listed first originally) back in front of its tree
        root, first = trees.index(tree), min(k for k, p in enumerate(order) if trees[p] == tree)
        where = order.index(root)
        order[first], order[where] = order[where], order[first]
    for attr in lists.values():
        field = {onnx.AttributeProto.INTS: "ints", onnx.AttributeProto.FLOATS: "floats"}.get(attr.type, "strings")
        values = list(getattr(attr, field))
        del getattr(attr, field)[:]
        getattr(attr, field).extend(values[k] for k in order)
    return proto


@pytest.mark.parametrize("kind", ["regressor_2_targets", "classifier_3_classes"])
def test_walked_records_in_any_node_order(tmp_path, monkeypatch, kind):
    """Every tree walked, its nodes listed in random order (children before and after
    their parents: negative record deltas), several leaf values a leaf (2 targets, 3
    classes: the row a leaf's record holds), more trees than WALKED_TOGETHER. Checked
    against onnxruntime on the lists as converted (it reads shuffled ones otherwise)."""
    from onnxc.passes.onnx_to_krnl.ml_tree_code import WALKED_TOGETHER

    monkeypatch.setattr("onnxc.passes.onnx_to_krnl.ml_tree_code.NESTED_MAX_NODES", 0)
    if kind == "regressor_2_targets":
        (x, y), trees = DIABETES, 3
        model = RandomForestRegressor(n_estimators=trees, random_state=0).fit(x, np.stack([y, -y / 10], axis=1))
    else:
        (x, y), trees = IRIS, WALKED_TOGETHER + 1
        model = RandomForestClassifier(n_estimators=trees, max_depth=6, random_state=0).fit(x, y)
    proto = convert(model, x)
    feeds = {"X": x[:80]}
    want = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    onnx.save(_shuffled_nodes(proto), tmp_path / "model.onnx")  # onnxruntime reads it otherwise
    onnxc.compile(tmp_path / "model.onnx", tmp_path / "model.so")
    got = Session(str(tmp_path / "model.so")).run(None, feeds)
    for ours, theirs in zip(got, want):
        np.testing.assert_allclose(ours, theirs, rtol=TOLERANCE, atol=TOLERANCE)


def test_walked_unbalanced_deep_trees(tmp_path):
    """Two chains of 300 branch nodes (each false child a leaf), the MIN of two targets:
    paths from 1 to 300 steps in one group of walked trees."""
    depth, attrs = 300, {key: [] for key in ("nodes_treeids", "nodes_nodeids", "nodes_modes", "nodes_featureids")}
    attrs |= {key: [] for key in ("nodes_values", "nodes_truenodeids", "nodes_falsenodeids")}
    attrs |= {key: [] for key in ("target_treeids", "target_nodeids", "target_ids", "target_weights")}
    for tree in range(2):
        for k in range(depth):  # branch k: x[tree] <= 1 - (k + 1) / (depth + 1) goes on down
            attrs["nodes_modes"].append("BRANCH_LEQ")
            attrs["nodes_featureids"].append(tree)
            attrs["nodes_values"].append(1 - (k + 1) / (depth + 1))
            attrs["nodes_truenodeids"].append(k + 1 if k + 1 < depth else 2 * depth)
            attrs["nodes_falsenodeids"].append(depth + k)
        for leaf in range(depth, 2 * depth + 1):
            attrs["nodes_modes"].append("LEAF")
            attrs["nodes_featureids"].append(0)
            attrs["nodes_values"].append(0.0)
            attrs["nodes_truenodeids"].append(0)
            attrs["nodes_falsenodeids"].append(0)
            for target in range(2):
                attrs["target_treeids"].append(tree)
                attrs["target_nodeids"].append(leaf)
                attrs["target_ids"].append(target)
                attrs["target_weights"].append(float((leaf - depth) * (1 - 2 * target) + tree))
        attrs["nodes_treeids"] += [tree] * (2 * depth + 1)
        attrs["nodes_nodeids"] += list(range(2 * depth + 1))
    attrs |= {"n_targets": 2, "aggregate_function": "MIN"}
    x = np.random.default_rng(0).uniform(-0.1, 1.0, (64, 2)).astype(np.float32)
    compile_and_compare(tmp_path, regressor_model(2, attrs), {"X": x})


def test_long_node_lists_are_dense_arrays():
    """A forest's node lists (over LONG_LIST values) import as one dense array attribute
    each, read back as the same Python lists; short lists stay arrays of attributes."""
    from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase

    from onnxc.dialects.onnx import LONG_LIST, attribute_of_proto
    from onnxc.frontend.importer import import_model

    x, y = DIABETES
    proto = convert(RandomForestRegressor(n_estimators=2, random_state=0).fit(x, y), x)
    node = proto.graph.node[0]
    module = import_model(proto)
    (op,) = [op for op in module.walk() if getattr(op, "OP_TYPE", None) == "TreeEnsembleRegressor"]
    values = next(a for a in node.attribute if a.name == "nodes_values")
    assert len(values.floats) > LONG_LIST and isinstance(op.attributes["nodes_values"], DenseArrayBase)
    assert op.attr("nodes_values") == list(values.floats)
    assert op.attr("nodes_featureids") == list(next(a for a in node.attribute if a.name == "nodes_featureids").ints)
    assert isinstance(attribute_of_proto(helper.make_attribute("pads", [1, 2, 3]), None), ArrayAttr)


def test_tree_ensemble_opset5(tmp_path):
    """TreeEnsemble (ai.onnx.ml 5): a split node and leaves by array position, double input."""
    attrs = {
        "n_targets": 2,
        "aggregate_function": 1,
        "post_transform": 0,
        "tree_roots": [0],
        "nodes_featureids": [0, 1],
        "nodes_modes": helper.make_tensor("modes", TensorProto.UINT8, [2], [0, 3]),
        "nodes_splits": helper.make_tensor("splits", TensorProto.DOUBLE, [2], [0.25, 1.5]),
        "nodes_truenodeids": [1, 0],
        "nodes_trueleafs": [0, 1],
        "nodes_falsenodeids": [2, 1],
        "nodes_falseleafs": [1, 1],
        "leaf_targetids": [0, 1, 0],
        "leaf_weights": helper.make_tensor("weights", TensorProto.DOUBLE, [3], [1.5, -2.0, 4.0]),
    }
    node = helper.make_node("TreeEnsemble", ["X"], ["Y"], domain=ML, **attrs)
    graph = helper.make_graph(
        [node],
        "trees",
        [helper.make_tensor_value_info("X", TensorProto.DOUBLE, [4, 2])],
        [helper.make_tensor_value_info("Y", TensorProto.DOUBLE, [4, 2])],
    )
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid(ML, 5)])
    x = np.array([[0.1, 0.0], [0.3, 2.0], [0.3, 1.0], [0.2, 9.0]])
    compile_and_compare(tmp_path, proto, {"X": x})


def _set_membership_model(members: list[float]) -> onnx.ModelProto:
    """A TreeEnsemble (ai.onnx.ml 5) of X [8, 2]: root x0 <= 11, then BRANCH_MEMBER
    nodes on x0, x0 (tracking NaN true) and x1 with the NaN-ended sets `members`."""
    attrs = {
        "n_targets": 4,
        "aggregate_function": 1,
        "post_transform": 0,
        "tree_roots": [0],
        "nodes_featureids": [0, 0, 0, 1],
        "nodes_modes": helper.make_tensor("modes", TensorProto.UINT8, [4], [0, 6, 6, 6]),
        "nodes_splits": helper.make_tensor("splits", TensorProto.FLOAT, [4], [11.0, 0.0, 0.0, 0.0]),
        "membership_values": helper.make_tensor("members", TensorProto.FLOAT, [len(members)], members),
        "nodes_missing_value_tracks_true": [1, 0, 1, 0],
        "nodes_truenodeids": [1, 0, 1, 2],
        "nodes_trueleafs": [0, 1, 1, 1],
        "nodes_falsenodeids": [3, 2, 3, 3],
        "nodes_falseleafs": [0, 0, 1, 1],
        "leaf_targetids": [0, 1, 2, 3],
        "leaf_weights": helper.make_tensor("weights", TensorProto.FLOAT, [4], [1.0, 10.0, 100.0, 1000.0]),
    }
    node = helper.make_node("TreeEnsemble", ["X"], ["Y"], name="trees", domain=ML, **attrs)
    graph = helper.make_graph(
        [node],
        "trees",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [8, 2])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [8, 4])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid(ML, 5)])


@pytest.mark.parametrize("walked", [False, True], ids=["nested", "walked"])
def test_tree_ensemble_set_membership(tmp_path, monkeypatch, walked):
    """BRANCH_MEMBER nodes: nested, one equality per member; walked, chains of
    BRANCH_EQ records. NaN follows the missing-value track."""
    if walked:
        monkeypatch.setattr("onnxc.passes.onnx_to_krnl.ml_tree_code.NESTED_MAX_NODES", 0)
    proto = _set_membership_model([1.2, 3.7, 8.0, 9.0, np.nan, 12.0, 7.0, np.nan, 5.0, np.nan])
    x = np.array([[1.2, 0], [3.4, 0], [np.nan, 0], [12, 0], [7, 0], [8, 5], [20, np.nan], [20, 5]], dtype=np.float32)
    compile_and_compare(tmp_path, proto, {"X": x})


def test_empty_membership_set_is_refused(tmp_path):
    with pytest.raises(ShapeError, match="empty sets") as info:
        onnxc.compile(_set_membership_model([1.0, np.nan, 2.0, np.nan, np.nan]), tmp_path / "m.so")
    assert info.value.node == "trees" and info.value.op_type == "TreeEnsemble"


def test_cyclic_trees_are_refused(tmp_path):
    """A child pointing back to an ancestor: no walk would end (nor would compiling)."""
    attrs = {
        "nodes_treeids": [0, 0, 0],
        "nodes_nodeids": [0, 1, 2],
        "nodes_modes": ["BRANCH_LEQ", "BRANCH_LEQ", "LEAF"],
        "nodes_featureids": [0, 1, 0],
        "nodes_values": [0.5, 0.5, 0.0],
        "nodes_truenodeids": [1, 0, 0],
        "nodes_falsenodeids": [2, 2, 0],
        "target_treeids": [0],
        "target_nodeids": [2],
        "target_ids": [0],
        "target_weights": [1.0],
        "n_targets": 1,
    }
    with pytest.raises(ShapeError, match="comes back to a node"):
        onnxc.compile(regressor_model(2, attrs), tmp_path / "m.so")
    members = [1.2, np.nan, 12.0, np.nan, 5.0, np.nan]
    cyclic = _set_membership_model(members)
    truenodeids = next(a for a in cyclic.graph.node[0].attribute if a.name == "nodes_truenodeids")
    truenodeids.ints[3] = 0  # split 3's true child: the root, as a split
    trueleafs = next(a for a in cyclic.graph.node[0].attribute if a.name == "nodes_trueleafs")
    trueleafs.ints[3] = 0
    with pytest.raises(ShapeError, match="reaches a split twice"):
        onnxc.compile(cyclic, tmp_path / "m.so")


def test_unimplemented_ml_op_is_refused_by_name(tmp_path):
    node = helper.make_node("DictVectorizer", ["X"], ["Y"], name="encode", domain=ML, int64_vocabulary=[1, 2])
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("X", TensorProto.INT64, [3])],
        [helper.make_tensor_value_info("Y", TensorProto.INT64, [3])],
    )
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid(ML, 2)])
    with pytest.raises(UnsupportedOpError, match="DictVectorizer.*ai.onnx.ml") as info:
        onnxc.compile(proto, tmp_path / "m.so")
    assert info.value.node == "encode" and info.value.op_type == "DictVectorizer"


def test_string_class_labels_are_refused(tmp_path):
    node = helper.make_node(
        "LinearClassifier", ["X"], ["Y", "Z"], name="linear", domain=ML,
        coefficients=[1.0, 2.0, 3.0, 4.0], intercepts=[0.0, 1.0], classlabels_strings=["a", "b"],
    )  # fmt: skip
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [3, 2])],
        [
            helper.make_tensor_value_info("Y", TensorProto.STRING, [3]),
            helper.make_tensor_value_info("Z", TensorProto.FLOAT, [3, 2]),
        ],
    )
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, 1)])
    with pytest.raises(UnsupportedOpError) as info:
        onnxc.compile(proto, tmp_path / "m.so")
    assert info.value.op_type == "LinearClassifier" or "STRING" in str(info.value)


def test_column_transformer_with_string_categories(tmp_path):
    """String category columns one-hot encoded (ArrayFeatureExtractor picks them from a
    string tensor, OneHotEncoder finds each among its cats_strings), an unknown one too."""
    x, y = CANCER
    colors = np.array(["red", "green", "blue", "grün"], dtype=object)
    sizes = np.array(["S", "M", "L"], dtype=object)
    categories = np.stack(
        [colors[(x[:, 0] > 14).astype(int) * 2 + (x[:, 2] > 90)], sizes[(x[:, 1] > 19).astype(int)]], axis=1
    )
    transformer = ColumnTransformer([("one_hot", OneHotEncoder(handle_unknown="ignore"), [0, 1])])
    model = make_pipeline(transformer, LogisticRegression()).fit(categories, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        proto = skl2onnx.to_onnx(
            model, initial_types=[("X", skl2onnx.common.data_types.StringTensorType([None, 2]))],
            options={id(model[-1]): {"zipmap": False}}, target_opset={"": 17, ML: 3},
        )  # fmt: skip
    assert "OneHotEncoder" in {node.op_type for node in proto.graph.node}
    categories[:3, 1] = "XL"  # unknown: a row of zeros
    compile_and_compare(tmp_path, proto, {"X": categories})
