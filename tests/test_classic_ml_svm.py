"""SVMClassifier and SVMRegressor: scikit-learn SVMs converted by skl2onnx, and
hand-built nodes for what skl2onnx does not write (a linear SVM without support
vectors, one_class, post transforms), compared with onnxruntime: labels equal,
probabilities and values within 1e-4."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from test_classic_ml import CANCER, DIABETES, IRIS, ML, compile_and_compare, convert, regressor_model

import onnxc
from onnxc.errors import ShapeError, UnsupportedOpError
from onnxc.runtime import Session

sklearn = pytest.importorskip("sklearn")
pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")  # SVC(probability=True), deprecated in 1.9

from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, SVR, NuSVC, NuSVR, OneClassSVM


def _scaled(model):
    return lambda: make_pipeline(StandardScaler(), model)


SVM_MODELS = {
    "svc_rbf_probabilities": (lambda: SVC(probability=True, random_state=0), IRIS),
    "svc_linear_probabilities": (lambda: SVC(kernel="linear", probability=True, random_state=0), IRIS),
    "svc_poly_probabilities": (lambda: SVC(kernel="poly", probability=True, random_state=0), IRIS),
    "svc_sigmoid_binary": (_scaled(SVC(kernel="sigmoid", probability=True, random_state=0)), CANCER),
    "svc_rbf_binary_probabilities": (_scaled(SVC(probability=True, random_state=0)), CANCER),
    "svc_votes_multiclass": (lambda: SVC(), IRIS),
    "svc_votes_binary": (_scaled(SVC()), CANCER),
    "nu_svc_probabilities": (lambda: NuSVC(probability=True, random_state=0), IRIS),
    "svr_rbf": (_scaled(SVR()), DIABETES),
    "svr_poly_degree4": (_scaled(SVR(kernel="poly", degree=4)), DIABETES),
    "nu_svr": (_scaled(NuSVR()), DIABETES),
}


@pytest.mark.parametrize("name", SVM_MODELS)
def test_sklearn_svm_matches_onnxruntime(tmp_path, name):
    make, (x, y) = SVM_MODELS[name]
    proto = convert(make().fit(x, y), x)
    assert {"SVMClassifier", "SVMRegressor"} & {node.op_type for node in proto.graph.node}
    compile_and_compare(tmp_path, proto, {"X": x})


def _svm_classifier(attrs: dict, classes: int, columns: int, features: int = 3) -> onnx.ModelProto:
    node = helper.make_node("SVMClassifier", ["X"], ["Y", "Z"], name="svm", domain=ML, **attrs)
    graph = helper.make_graph(
        [node],
        "svm",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [None, features])],
        [
            helper.make_tensor_value_info("Y", TensorProto.INT64, [None]),
            helper.make_tensor_value_info("Z", TensorProto.FLOAT, [None, columns]),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, 1)])


SAMPLES = np.random.default_rng(0).standard_normal((16, 3)).astype(np.float32)


@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("signs", ["positive", "mixed"])
def test_linear_svm_without_support_vectors(tmp_path, classes, signs):
    """No vectors_per_class: one linear score per class (x . coefficients + rho[0]);
    for two classes onnxruntime's label rule depends on the coefficients' signs."""
    coefficients = np.abs(SAMPLES[:classes].reshape(-1)) * 0.3
    if signs == "mixed":
        coefficients[::2] *= -1
    attrs = {"coefficients": coefficients.tolist(), "rho": [0.25], "classlabels_ints": [5, 7, 9][:classes]}
    attrs["kernel_params"] = [0.0, 0.0, 0.0]  # onnxruntime requires them
    proto = _svm_classifier(attrs | {"post_transform": "SOFTMAX" if classes == 3 else "NONE"}, classes, classes)
    compile_and_compare(tmp_path, proto, {"X": SAMPLES})


@pytest.mark.parametrize("transform", ["LOGISTIC", "SOFTMAX_ZERO"])
def test_vote_scores_post_transform(tmp_path, transform):
    """Three classes voting, no probabilities: the three decisions get the transform."""
    attrs = {
        "vectors_per_class": [1, 2, 1],
        "support_vectors": SAMPLES[:4].reshape(-1).tolist(),
        "coefficients": SAMPLES[4:7].reshape(-1)[:8].tolist(),
        "rho": [0.1, -0.2, 0.3],
        "kernel_type": "RBF",
        "kernel_params": [0.5, 0.0, 3.0],
        "classlabels_ints": [0, 1, 2],
        "post_transform": transform,
    }
    compile_and_compare(tmp_path, _svm_classifier(attrs, 3, 3), {"X": SAMPLES})


def test_one_class_regressor(tmp_path):
    attrs = {
        "n_supports": 2,
        "one_class": 1,
        "kernel_type": "SIGMOID",
        "kernel_params": [0.3, 0.1, 0.0],
        "support_vectors": SAMPLES[:2].reshape(-1).tolist(),
        "coefficients": [0.7, -0.4],
        "rho": [0.05],
    }
    compile_and_compare(tmp_path, regressor_model(3, attrs, op="SVMRegressor", opset=1), {"X": SAMPLES})


TWO_VECTORS = {
    "vectors_per_class": [1, 1],
    "support_vectors": SAMPLES[:2].reshape(-1).tolist(),
    "coefficients": [1.0, -1.0],
    "rho": [0.0],
    "classlabels_ints": [0, 1],
}


@pytest.mark.parametrize(
    "change, error, message",
    [
        ({"post_transform": "PROBIT"}, UnsupportedOpError, "PROBIT"),
        ({"kernel_type": "CUBIC"}, UnsupportedOpError, "kernel_type 'CUBIC'"),
        ({"vectors_per_class": [1, 1, 0]}, ShapeError, "vectors_per_class has 3 entries for 2 class labels"),
        ({"support_vectors": [0.5] * 5}, ShapeError, "5 support_vectors values for 2 vectors of 3 features"),
        ({"coefficients": [1.0]}, ShapeError, "1 coefficients for 1 rows of 2 support vectors"),
        ({"prob_a": [1.0, 2.0], "prob_b": [0.5]}, ShapeError, "2 prob_a and 1 prob_b"),
        ({"classlabels_ints": [3]}, UnsupportedOpError, "1 class labels"),
    ],
    ids=["binary_probit", "kernel", "vectors_per_class", "support_vectors", "coefficients", "prob_b", "one_class"],
)
def test_malformed_svm_is_refused(tmp_path, change, error, message):
    with pytest.raises(error, match=message) as info:
        onnxc.compile(_svm_classifier(TWO_VECTORS | change, 2, 2), tmp_path / "m.so")
    assert info.value.node == "svm" and info.value.op_type == "SVMClassifier"


def test_one_class_svm(tmp_path):
    """skl2onnx's OneClassSVM: an SVMRegressor's decision value and its Sign. Labels
    are compared where the value is clear of 0: iris has two samples within 1e-7 of
    the boundary, where float32 sums (onnxruntime) and f64 ones (onnxc) may disagree."""
    x, _ = IRIS
    proto = convert(OneClassSVM(gamma="scale").fit(x), x)
    onnx.save(proto, tmp_path / "model.onnx")
    onnxc.compile(tmp_path / "model.onnx", tmp_path / "model.so")
    labels, scores = Session(str(tmp_path / "model.so")).run(None, {"X": x})
    want_labels, want_scores = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"X": x}
    )
    np.testing.assert_allclose(scores, want_scores, rtol=1e-4, atol=1e-4)
    clear = np.abs(want_scores) > 1e-4
    assert clear.sum() > 140
    np.testing.assert_array_equal(labels[clear], want_labels[clear])
