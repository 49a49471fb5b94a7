"""Session's planned calls: once a call with some input shapes has passed every check,
a later call with those shapes skips the dim checks and reuses the tensor descriptors
(the thread's own), writing only data pointers, and small outputs are rows of blocks
shared by several calls. These tests pin that the shortcut changes no result and lets
no bad input through."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from onnx import TensorProto, helper

import onnxc
from onnxc.errors import InputError, RuntimeFailure
from onnxc.runtime import Session
from onnxc.runtime.tensor_descriptors import CALLS_PER_BLOCK

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
    assert {(1, 3), (4, 3)} <= {shapes[0] for shapes in session._plans.by_shapes}


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
    with pytest.raises(InputError, match="rank"):
        session.run(None, {"x": x.reshape(6), "b": BIAS})
    with pytest.raises(InputError, match="expected an array|dtype"):
        session.run(None, {"x": x.tolist(), "b": BIAS})  # a list becomes float64: refused, not misread


def test_changed_shape_wrong_dtype_and_layout_after_a_planned_call(session):
    x = np.arange(-6, 6, dtype=np.float32).reshape(4, 3)
    for _ in range(2):  # the second call is planned
        (y,) = session.run(None, {"x": x, "b": BIAS})
    np.testing.assert_array_equal(y, _expected(x))
    (y,) = session.run(None, {"x": x[:3], "b": BIAS})  # another batch
    np.testing.assert_array_equal(y, _expected(x[:3]))
    swapped = x.astype(">f4")  # the same values in the other byte order: copied
    (y,) = session.run(None, {"x": swapped, "b": BIAS})
    np.testing.assert_array_equal(y, _expected(x))
    column_major = np.asfortranarray(x)
    (y,) = session.run(None, {"x": column_major, "b": BIAS})
    np.testing.assert_array_equal(y, _expected(x))
    unaligned = np.frombuffer(b"\0" + x.tobytes(), dtype=np.float32, offset=1).reshape(4, 3)
    assert not unaligned.flags.aligned
    (y,) = session.run(None, {"x": unaligned, "b": BIAS})
    np.testing.assert_array_equal(y, _expected(x))
    with pytest.raises(InputError, match="dtype"):
        session.run(None, {"x": x.astype(np.float16), "b": BIAS})
    (y,) = session.run(["y"], {"x": x, "b": BIAS})
    np.testing.assert_array_equal(y, _expected(x))


def test_outputs_of_planned_calls_are_independent(session):
    """Outputs taken from shared blocks: each keeps its own values past a block's refill."""
    xs = [np.full((1, 3), k - 40, np.float32) for k in range(CALLS_PER_BLOCK + 20)]
    ys = [session.run(None, {"x": x, "b": BIAS})[0] for x in xs]
    ys[0][...] = 123.0  # writing one result leaves the others alone
    for x, y in zip(xs[1:], ys[1:]):
        np.testing.assert_array_equal(y, _expected(x))


def test_threads_do_not_share_descriptors(session):
    """Each thread fills in its own plan's descriptors: concurrent planned calls with
    different data never see each other's pointers."""
    failures = []

    def work(seed: int) -> None:
        rng = np.random.default_rng(seed)
        for _ in range(300):
            x = rng.standard_normal((2, 3)).astype(np.float32)
            (y,) = session.run(None, {"x": x, "b": BIAS})
            if not np.array_equal(y, _expected(x)):
                failures.append(seed)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


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
