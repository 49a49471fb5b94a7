"""Session's planned calls: once a call with some input shapes has passed every check,
a later call with those shapes skips the dim checks and reuses the tensor descriptors.
These tests pin that the shortcut changes no result and lets no bad input through."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import onnxc
from onnxc.errors import InputError, RuntimeFailure
from onnxc.runtime import Session

# y = relu(x) + b over a symbolic batch: one batched input, one whole one.
MODEL = helper.make_model(
    helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Add", ["r", "b"], ["y"])],
        "relu_add",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, [3]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 3])],
    ),
    opset_imports=[helper.make_opsetid("", 17)],
    ir_version=8,
)
BIAS = np.array([0.5, -1.0, 2.0], dtype=np.float32)


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    with Session(onnxc.compile(MODEL, tmp_path_factory.mktemp("plans") / "m.so")) as opened:
        yield opened


def _expected(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0) + BIAS


def test_repeated_calls_match(session):
    rng = np.random.default_rng(0)
    for batch in (1, 4, 1, 0, 4, 7):
        x = rng.standard_normal((batch, 3)).astype(np.float32)
        (y,) = session.run(None, {"x": x, "b": BIAS})
        np.testing.assert_array_equal(y, _expected(x))
    assert {(1, 3), (4, 3)} <= {shapes[0] for shapes in session._plans}


def test_checks_still_apply_after_a_planned_call(session):
    x = np.ones((2, 3), np.float32)
    session.run(None, {"x": x, "b": BIAS})
    with pytest.raises(InputError, match="dtype"):
        session.run(None, {"x": x.astype(np.float64), "b": BIAS})
    with pytest.raises(InputError, match="unknown input"):
        session.run(None, {"x": x, "c": BIAS})
    with pytest.raises(InputError, match="missing input"):
        session.run(None, {"x": x})
    with pytest.raises(InputError, match="'b'"):
        session.run(None, {"x": x, "b": np.ones(4, np.float32)})


def test_strided_and_read_only_inputs(session):
    x = np.arange(-12, 12, dtype=np.float32).reshape(4, 6)
    session.run(None, {"x": np.ascontiguousarray(x[:, ::2]), "b": BIAS})
    (strided,) = session.run(None, {"x": x[:, ::2], "b": BIAS})  # copied, not misread
    np.testing.assert_array_equal(strided, _expected(x[:, ::2]))
    frozen = np.frombuffer(x[:, :3].tobytes(), dtype=np.float32).reshape(4, 3)  # read-only
    session.run(None, {"x": frozen.copy(), "b": BIAS})
    (y,) = session.run(None, {"x": frozen, "b": BIAS})
    np.testing.assert_array_equal(y, _expected(frozen))


def test_closed_session_refuses_planned_calls(tmp_path):
    opened = Session(onnxc.compile(MODEL, tmp_path / "m.so"))
    feeds = {"x": np.ones((1, 3), np.float32), "b": BIAS}
    opened.run(None, feeds)
    opened.close()
    with pytest.raises(RuntimeFailure, match="closed"):
        opened.run(None, feeds)
