"""Tree ensembles and SVMs under onnxc and onnxruntime: `python benchmarks/classic_ml.py [--repeat N]`.

scikit-learn forests, gradient boosting and SVMs trained on data it ships, converted by
skl2onnx (probabilities as a tensor, no ZipMap), compiled once with a symbolic
batch, then timed at batch 1 and 64 with one thread each (onnxruntime's
intra-op threads = 1, ONNXC_NUM_THREADS=1): warm-up runs, then `--repeat`
samples taken in turn (onnxruntime, onnxc, ...), each sample the mean of as many
runs as fill SAMPLE_SECONDS; the medians and their ratio are printed. Outputs must
match onnxruntime first (labels equal, scores within 1e-4).

"library ms" is onnxc's `run_main_graph` called straight through ctypes on tensors
described once: what a C caller pays, without `Session.run`'s per-call Python work
(input checks, output allocation, the ctypes call), which dominates at batch 1.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

os.environ.setdefault("ONNXC_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
from skl2onnx import to_onnx  # noqa: E402
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits, load_iris  # noqa: E402
from sklearn.ensemble import (  # noqa: E402
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.svm import SVC  # noqa: E402

import onnxc  # noqa: E402
from onnxc.runtime import Session  # noqa: E402
from onnxc.runtime.tensor_descriptors import _tensor_array  # noqa: E402  (describing tensors once, as a C caller)

SAMPLE_SECONDS = 0.02
BATCHES = (1, 64)


def _data(loader):
    x, y = loader(return_X_y=True)
    return x.astype(np.float32), y


def models() -> dict:
    cancer, iris, diabetes = _data(load_breast_cancer), _data(load_iris), _data(load_diabetes)
    digits = _data(load_digits)
    return {
        "random_forest_100 (breast cancer)": (RandomForestClassifier(n_estimators=100, random_state=0), cancer),
        "random_forest_100 (iris, 3 classes)": (RandomForestClassifier(n_estimators=100, random_state=0), iris),
        "random_forest_regressor_100 (diabetes)": (RandomForestRegressor(n_estimators=100, random_state=0), diabetes),
        "gradient_boosting_100 (breast cancer)": (GradientBoostingClassifier(n_estimators=100, random_state=0), cancer),
        "gradient_boosting_100 (iris, 3 classes)": (GradientBoostingClassifier(n_estimators=100, random_state=0), iris),
        "gradient_boosting_regressor_100 (diabetes)": (
            GradientBoostingRegressor(n_estimators=100, random_state=0),
            diabetes,
        ),
        "svc_rbf_probabilities (breast cancer, scaled)": (
            make_pipeline(StandardScaler(), SVC(probability=True, random_state=0)),
            cancer,
        ),
        "svc_rbf_probabilities (digits, 10 classes)": (SVC(probability=True, random_state=0), digits),
    }


def _sample(run) -> float:
    """Seconds per run, the mean over as many runs as fill SAMPLE_SECONDS."""
    count, start = 0, time.perf_counter()
    while True:
        run()
        count += 1
        elapsed = time.perf_counter() - start
        if elapsed >= SAMPLE_SECONDS:
            return elapsed / count


def _check(ours: list, theirs: list) -> None:
    for a, b in zip(ours, theirs):
        if np.issubdtype(b.dtype, np.integer):
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


def _library_call(session: Session, feeds: dict):
    """A call of the library's run_main_graph on `feeds` and fresh outputs, described once."""
    outputs = session.run(None, feeds)
    inputs = [(feeds[arg.name], arg.onnx_type) for arg in session.get_inputs()]
    described = [
        _tensor_array(inputs),
        _tensor_array([(o, a.onnx_type) for o, a in zip(outputs, session.get_outputs())]),
    ]
    run = session._library.run_main_graph
    return lambda: run(described[0], len(inputs), described[1], len(outputs))


def bench(name: str, estimator, data, folder: Path, repeat: int) -> list[str]:
    x, y = data
    options = {id(estimator): {"zipmap": False}} if hasattr(estimator, "predict_proba") else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SVC(probability=True) is deprecated in scikit-learn 1.9
        estimator.fit(x, y)
        proto = to_onnx(estimator, x[:1], options=options, target_opset={"": 17, "ai.onnx.ml": 3})
    path = folder / "model.onnx"
    onnx.save(proto, path)
    started = time.perf_counter()
    onnxc.compile(path, folder / "model.so")
    compile_seconds = time.perf_counter() - started
    ours = Session(str(folder / "model.so"))
    settings = ort.SessionOptions()
    settings.intra_op_num_threads = settings.inter_op_num_threads = 1
    theirs = ort.InferenceSession(proto.SerializeToString(), settings, providers=["CPUExecutionProvider"])
    lines = []
    for batch in BATCHES:
        feeds = {"X": np.ascontiguousarray(np.resize(x, (batch, x.shape[1])))}
        _check(ours.run(None, feeds), theirs.run(None, feeds))
        for _ in range(3):
            ours.run(None, feeds), theirs.run(None, feeds)
        call = _library_call(ours, feeds)
        times = {"ort": [], "onnxc": [], "library": []}
        for _ in range(repeat):
            times["ort"].append(_sample(lambda: theirs.run(None, feeds)))
            times["onnxc"].append(_sample(lambda: ours.run(None, feeds)))
            times["library"].append(_sample(call))
        ort_ms, onnxc_ms, library_ms = (statistics.median(times[k]) * 1e3 for k in ("ort", "onnxc", "library"))
        lines.append(
            f"| {name} | {batch} | {ort_ms:.4f} | {onnxc_ms:.4f} | {onnxc_ms / ort_ms:.2f} "
            f"| {library_ms:.4f} | {library_ms / ort_ms:.2f} | {compile_seconds:.1f} |"
        )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="timed samples per engine and batch")
    args = parser.parse_args()
    print("| model | batch | onnxruntime ms | onnxc ms | onnxc / ort | library ms | library / ort | compile s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, (estimator, data) in models().items():
        with tempfile.TemporaryDirectory() as folder:
            for line in bench(name, estimator, data, Path(folder), args.repeat):
                print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
