"""ZipMap outputs (a sequence of maps, returned by `Session` as a list of dicts, as
onnxruntime does) and skl2onnx's k-nearest-neighbours graphs, compared with
onnxruntime: labels equal, probabilities and values within 1e-4."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import skl2onnx
from onnx import TensorProto, helper
from test_classic_ml import CANCER, DIABETES, IRIS, ML, compile_and_compare

import onnxc
from onnxc.errors import ShapeError, UnsupportedOpError
from onnxc.runtime import Session

sklearn = pytest.importorskip("sklearn")

from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor


def _default_conversion(model, x: np.ndarray) -> onnx.ModelProto:
    """skl2onnx's default options: a classifier's probabilities go through ZipMap."""
    return skl2onnx.to_onnx(model, x[:1], target_opset={"": 17, ML: 3})


@pytest.mark.parametrize(
    "make, data",
    [
        (lambda: RandomForestClassifier(n_estimators=4, max_depth=4, random_state=0), IRIS),
        (lambda: GradientBoostingClassifier(n_estimators=4, random_state=0), CANCER),
    ],
    ids=["forest_multiclass", "boosting_binary"],
)
def test_classifier_with_zipmap(tmp_path, make, data):
    x, y = data
    proto = _default_conversion(make().fit(x, y), x)
    assert proto.graph.node[-1].op_type == "ZipMap"
    maps = compile_and_compare(tmp_path, proto, {"X": x})[1]
    assert len(maps) == len(x) and all(isinstance(k, int) for k in maps[0])
    session = Session(str(tmp_path / "model.so"))
    assert session.get_outputs()[1].type == "seq(map(int64,tensor(float)))"
    assert session.signature["outputs"][1]["map_keys"] == sorted(set(y.tolist()))


def _zip_map_model(keys: dict, then: onnx.NodeProto | None = None) -> onnx.ModelProto:
    """Softmax of X [5, 3] zipped with `keys` (a ZipMap attribute) into output M; or, with
    `then`, a node reading the maps into output Y."""
    nodes = [
        helper.make_node("Softmax", ["X"], ["P"]),
        helper.make_node("ZipMap", ["P"], ["M"], name="zip", domain=ML, **keys),
    ]
    key_type = TensorProto.STRING if "classlabels_strings" in keys else TensorProto.INT64
    maps = helper.make_sequence_type_proto(helper.make_map_type_proto(key_type, helper.make_tensor_type_proto(1, [])))
    output = helper.make_value_info("M", maps)
    if then is not None:
        nodes.append(then)
        output = helper.make_tensor_value_info(then.output[0], TensorProto.FLOAT, None)
    graph = helper.make_graph(nodes, "zip", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [5, 3])], [output])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, 1)])


X = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)


def test_zipmap_with_string_keys(tmp_path):
    maps = compile_and_compare(tmp_path, _zip_map_model({"classlabels_strings": ["a", "b", "c"]}), {"X": X})[0]
    assert list(maps[0]) == ["a", "b", "c"]
    assert Session(str(tmp_path / "model.so")).get_outputs()[0].type == "seq(map(string,tensor(float)))"


def test_zipmap_of_the_wrong_width_is_refused(tmp_path):
    with pytest.raises(ShapeError, match="ZipMap output 'M' maps 2 keys"):
        onnxc.compile(_zip_map_model({"classlabels_int64s": [4, 5]}), tmp_path / "m.so")


def test_zipmap_read_by_another_node_is_refused(tmp_path):
    proto = _zip_map_model({"classlabels_int64s": [4, 5, 6]}, then=helper.make_node("Abs", ["M"], ["Y"], name="abs"))
    with pytest.raises(UnsupportedOpError, match="sequence") as info:
        onnxc.compile(proto, tmp_path / "m.so")
    assert info.value.node == "abs"


@pytest.mark.parametrize(
    "make, data",
    [(lambda: KNeighborsClassifier(), IRIS), (lambda: KNeighborsRegressor(n_neighbors=3), DIABETES)],
    ids=["classifier", "regressor"],
)
def test_nearest_neighbours(tmp_path, make, data):
    """skl2onnx's kNN: a Scan of distances to the training set, TopK, and the labels
    or targets gathered by ArrayFeatureExtractor; over a symbolic batch (cdist-scan and
    gather-features make it separable), and pinned."""
    x, y = data
    proto = _default_conversion(make().fit(x, y), x)
    assert {"Scan", "TopK", "ArrayFeatureExtractor"} <= {node.op_type for node in proto.graph.node}
    for batch in (40, 1):
        compile_and_compare(tmp_path, proto, {"X": x[:batch]})
    compile_and_compare(tmp_path, proto, {"X": x[:40]}, shapes={"X": [40, x.shape[1]]})


def test_verify_compares_maps():
    """`onnxc verify` compares a sequence of maps by its values, key by key."""
    from onnxc.tools.verification import verify

    x, y = IRIS
    proto = _default_conversion(RandomForestClassifier(n_estimators=2, max_depth=3, random_state=0).fit(x, y), x)
    report = verify(proto, {"X": x[:8]}, locate=False)
    assert report.passed and [c.shape for c in report.outputs] == [(8,), (8, 3)]
