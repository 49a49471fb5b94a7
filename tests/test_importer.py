"""Importer: every TensorProto form decodes right; malformed graphs give typed, named errors."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnxc import cli
from onnxc.dialects.onnx import OPS, OnnxOp, WeightStore
from onnxc.errors import InvalidModelError, ShapeError, UnsupportedOpError
from onnxc.frontend import importer
from onnxc.frontend.importer import import_model
from onnxc.frontend.tensors import decode_tensor

ALL_DTYPES = [
    np.float32, np.float64, np.float16, np.int8, np.int16, np.int32, np.int64,
    np.uint8, np.uint16, np.uint32, np.uint64, np.bool_,
]


def _sample(dtype, shape=(2, 3)) -> np.ndarray:
    values = np.arange(int(np.prod(shape))).reshape(shape) - 2
    if dtype == np.bool_:
        return values % 2 == 0
    if np.issubdtype(dtype, np.unsignedinteger):
        return (values + 2).astype(dtype)
    return values.astype(dtype) * (dtype(1.5) if np.issubdtype(dtype, np.floating) else 1)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: np.dtype(d).name)
def test_raw_data_round_trip(dtype):
    array = _sample(dtype)
    tensor = numpy_helper.from_array(array, "t")
    assert tensor.HasField("raw_data")
    decoded = decode_tensor(tensor)
    assert decoded.dtype == array.dtype and np.array_equal(decoded, array)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: np.dtype(d).name)
def test_typed_fields(dtype):
    """helper.make_tensor(raw=False) stores values in the typed fields (int32_data for f16/bool/int8...)."""
    array = _sample(dtype)
    onnx_type = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    tensor = helper.make_tensor("t", onnx_type, array.shape, array.flatten().tolist(), raw=False)
    assert not tensor.HasField("raw_data")
    decoded = decode_tensor(tensor)
    assert decoded.dtype == array.dtype and np.array_equal(decoded, array)


def test_bfloat16_bits_kept():
    bits = np.array([0x3F80, 0xC000], dtype=np.uint16)  # 1.0, -2.0
    tensor = TensorProto(name="t", data_type=TensorProto.BFLOAT16, dims=[2], int32_data=bits.tolist())
    assert np.array_equal(decode_tensor(tensor), bits)


def test_scalar_keeps_rank_zero():
    assert decode_tensor(numpy_helper.from_array(np.array(3.0, np.float32))).shape == ()


def test_raw_data_size_mismatch():
    tensor = numpy_helper.from_array(np.ones(4, np.float32), "w")
    tensor.raw_data = tensor.raw_data[:-2]
    with pytest.raises(InvalidModelError, match="raw_data has 14 bytes"):
        decode_tensor(tensor)


def _external_tensor(name, location, offset=0, length=16) -> onnx.TensorProto:
    tensor = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=[4])
    tensor.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", str(offset)), ("length", str(length))):
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    return tensor


def test_external_data_read(tmp_path):
    (tmp_path / "weights.bin").write_bytes(b"\0" * 8 + np.arange(4, dtype="<f4").tobytes())
    decoded = decode_tensor(_external_tensor("w", "weights.bin", offset=8), tmp_path)
    assert np.array_equal(decoded, np.arange(4, dtype=np.float32))


@pytest.mark.parametrize("location", ["../outside.bin", "/etc/passwd", "sub/../../outside.bin"])
def test_external_data_cannot_leave_model_folder(tmp_path, location):
    (tmp_path / "outside.bin").write_bytes(b"\0" * 16)
    model_dir = tmp_path / "model"
    (model_dir / "sub").mkdir(parents=True)
    with pytest.raises(InvalidModelError, match="leaves the model's folder"):
        decode_tensor(_external_tensor("w", location), model_dir)


def test_external_data_symlink_out_refused(tmp_path):
    (tmp_path / "outside.bin").write_bytes(b"\0" * 16)
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    os.symlink(tmp_path / "outside.bin", model_dir / "link.bin")
    with pytest.raises(InvalidModelError, match="leaves the model's folder"):
        decode_tensor(_external_tensor("w", "link.bin"), model_dir)


def test_model_with_external_weights_imports(tmp_path):
    weight = np.arange(6, dtype=np.float32).reshape(2, 3)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "ext",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])],
        [numpy_helper.from_array(weight, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(model, tmp_path / "m.onnx", save_as_external_data=True, location="m.data", size_threshold=0)
    module = import_model(tmp_path / "m.onnx")
    assert np.array_equal(WeightStore.of(module).arrays["w"], weight)


# ----------------------------------------------------------------------- graph checks


def _model(nodes, inputs=("x",), outputs=("y",), initializers=(), opset=13) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in outputs],
        list(initializers),
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def test_nodes_out_of_order_are_sorted():
    model = _model([
        helper.make_node("Relu", ["a"], ["y"], name="second"),
        helper.make_node("Neg", ["x"], ["a"], name="first"),
    ])
    ops = [op.OP_TYPE for op in import_model(model).walk() if isinstance(op, OnnxOp)]
    assert ops == ["Neg", "Relu"]


@pytest.mark.parametrize(
    "op_type, opset, attribute, default",
    [("Softmax", 11, "axis", 1), ("Softmax", 13, "axis", -1), ("LogSoftmax", 12, "axis", 1),
     ("Selu", 5, "alpha", np.float32(1.6732)), ("Selu", 6, "alpha", np.float32(1.67326319217681884765625)),
     ("Clip", 5, "min", np.finfo(np.float32).min), ("Clip", 5, "max", np.finfo(np.float32).max)],
)  # fmt: skip
def test_attribute_defaults_follow_the_model_opset(op_type, opset, attribute, default):
    """op.attr gives the default of the schema the op follows; a schema version without one
    (Clip-1's bounds) falls back to the newest that has one (Clip-6's float32 extremes)."""
    model = _model([helper.make_node(op_type, ["x"], ["y"], name="n")], opset=opset)
    (op,) = [op for op in import_model(model).walk() if isinstance(op, OnnxOp)]
    assert op.attr(attribute) == default


def test_op_in_no_module_follows_the_newest_opset():
    assert OPS["Softmax"].create().attr("axis") == -1


@pytest.mark.parametrize(
    "nodes, error, message",
    [
        ([helper.make_node("Relu", ["nowhere"], ["y"], name="r")], InvalidModelError,
         "node 'r' (Relu): input 'nowhere' is not produced"),
        ([helper.make_node("Relu", ["b"], ["a"], name="r1"), helper.make_node("Relu", ["a"], ["b"], name="r2"),
          helper.make_node("Relu", ["x"], ["y"], name="r3")], InvalidModelError, "cycle"),
        ([helper.make_node("Relu", ["x"], ["y"], name="r1"), helper.make_node("Neg", ["x"], ["y"], name="r2")],
         InvalidModelError, "output 'y' is defined twice"),
        ([helper.make_node("FancyOp", ["x"], ["y"], name="f")], UnsupportedOpError,
         "node 'f' (FancyOp): unknown operator 'FancyOp'"),
        ([helper.make_node("Relu", ["x"], ["y"], name="c", domain="com.example")], UnsupportedOpError,
         "operator domain 'com.example'"),
        ([helper.make_node("Relu", ["x"], ["y"], name="r", alpha=1.0)], InvalidModelError,
         "unknown attribute 'alpha'"),
        ([helper.make_node("LeakyRelu", ["x"], ["y"], name="l", alpha=1)], InvalidModelError,
         "attribute 'alpha' has type INT, expected FLOAT"),
        ([helper.make_node("Add", ["x"], ["y"], name="a")], InvalidModelError, "required input #1"),
        ([helper.make_node("Dropout", ["x"], ["y", "m", "z"], name="d")], InvalidModelError,
         "3 outputs given, the operator has at most 2"),
        ([helper.make_node("Not", ["x"], ["y"], name="n")], InvalidModelError,
         "node 'n' (Not): input #0 ('X') is a tensor(float); Not takes tensor(bool) there"),
        ([helper.make_node("Constant", [], ["k"], value=numpy_helper.from_array(np.array([2], np.int64))),
          helper.make_node("Add", ["x", "k"], ["y"], name="a")], InvalidModelError,
         "node 'a' (Add): input #1 ('B') is a tensor(int64) but input #0 ('A') a tensor(float): both are of type T"),
    ],
)
def test_malformed_graphs_name_the_node(nodes, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        import_model(_model(nodes))


def test_op_newer_than_model_opset():
    with pytest.raises(UnsupportedOpError, match="'Gelu' does not exist in opset 13"):
        import_model(_model([helper.make_node("Gelu", ["x"], ["y"], name="g")]))


def test_missing_graph_output():
    with pytest.raises(InvalidModelError, match="graph output 'z' is never produced"):
        import_model(_model([helper.make_node("Relu", ["x"], ["y"])], outputs=("y", "z")))


def test_shape_pin_of_unknown_input():
    with pytest.raises(ShapeError, match="unknown inputs"):
        import_model(_model([helper.make_node("Relu", ["x"], ["y"])]), shapes={"nope": [2]})


def test_truncated_file(tmp_path):
    from onnxc.examples.mnist import build_mnist_cnn

    data = build_mnist_cnn().SerializeToString()
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(InvalidModelError, match="cut.onnx"):
        import_model(path)


@pytest.mark.parametrize(
    "content, message",
    [
        (b"this is not a protobuf at all \xff\xff\xff", "model 'bad.onnx'"),
        (b"", "holds no graph"),
    ],
)
def test_cli_reports_one_line(tmp_path, content, message):
    path = tmp_path / "bad.onnx"
    path.write_bytes(content)
    result = subprocess.run(
        [sys.executable, "-m", "onnxc.cli", str(path), "-o", str(tmp_path / "x.so")],
        capture_output=True, text=True,
    )
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("onnxc: error:") and message in lines[0]


def test_cli_unknown_op_one_line(tmp_path):
    path = tmp_path / "unknown.onnx"
    onnx.save(_model([helper.make_node("FancyOp", ["x"], ["y"], name="fancy")]), path)
    result = subprocess.run(
        [sys.executable, "-m", "onnxc.cli", str(path), "-o", str(tmp_path / "x.so")],
        capture_output=True, text=True,
    )
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "onnxc: error: model 'unknown.onnx', node 'fancy' (FancyOp): unknown operator 'FancyOp' in opset 13"
    )


# ------------------------------------------------------------- values known at import


def _shape_ladder(steps: int, start: str) -> onnx.ModelProto:
    """5 * steps + 6 nodes of shared shape arithmetic, each step reading the two before it:
    a[i] = Concat(Gather(a[i-1], [0, 1]), Max(Gather(a[i-1], [2, 3]), Gather(a[i-2], [2, 3]))),
    from a[0], a[1] = Shape(x) ("shape", known only to the graph passes) or a constant
    ("constant", known at import); an If on Cast(a[-1][0], bool) ends it."""
    indices = {"lo": [0, 1], "hi": [2, 3], "zero": 0}
    initializers = [numpy_helper.from_array(np.array(v, np.int64), name) for name, v in indices.items()]
    if start == "shape":
        nodes = [helper.make_node("Shape", ["x"], ["a0"]), helper.make_node("Shape", ["x"], ["a1"])]
    else:
        initializers.append(numpy_helper.from_array(np.array([1, 3, 8, 8], np.int64), "a0"))
        nodes = [helper.make_node("Identity", ["a0"], ["a1"])]
    for i in range(2, steps + 2):
        nodes += [
            helper.make_node("Gather", [f"a{i - 1}", "lo"], [f"l{i}"]),
            helper.make_node("Gather", [f"a{i - 1}", "hi"], [f"h{i}"]),
            helper.make_node("Gather", [f"a{i - 2}", "hi"], [f"k{i}"]),
            helper.make_node("Max", [f"h{i}", f"k{i}"], [f"m{i}"]),
            helper.make_node("Concat", [f"l{i}", f"m{i}"], [f"a{i}"], axis=0),
        ]

    def branch(op_type):
        out = helper.make_tensor_value_info(f"{op_type}_out", TensorProto.FLOAT, None)
        return helper.make_graph([helper.make_node(op_type, ["r"], [out.name])], op_type, [], [out])

    last = f"a{steps + 1}"
    nodes += [
        helper.make_node("Reshape", ["x", last], ["r"]),
        helper.make_node("Gather", [last, "zero"], ["first"]),
        helper.make_node("Cast", ["first"], ["cond"], to=TensorProto.BOOL),
        helper.make_node("If", ["cond"], ["y"], then_branch=branch("Identity"), else_branch=branch("Neg")),
    ]
    graph = helper.make_graph(
        nodes, "ladder",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("start", ["shape", "constant"])
def test_shared_shape_arithmetic_compiles_in_linear_time(tmp_path, start):
    """Each node's value is found once: asking for the If's condition re-walked the
    ladder once per path (2.4x per step: 96 nodes took 69 s, 5,000 never ended)."""
    path, out = tmp_path / "ladder.onnx", tmp_path / "ladder.mlir"
    onnx.save(_shape_ladder(1000, start), path)
    started = time.process_time()
    assert cli.main([str(path), "--emit", "onnx", "-o", str(out)]) == 0
    assert time.process_time() - started < 5.0
    text = out.read_text()
    assert "onnx.If" not in text and "onnx.Neg" not in text


def test_import_time_evaluation_budget(monkeypatch):
    """Beyond the budget values are left unknown (the If stays for the graph passes), never an error."""
    model = _shape_ladder(10, "constant")
    assert not any(o.OP_TYPE == "If" for o in import_model(model).walk() if isinstance(o, OnnxOp))
    monkeypatch.setattr(importer, "MAX_IMPORT_EVALUATIONS", 20)
    assert any(o.OP_TYPE == "If" for o in import_model(model).walk() if isinstance(o, OnnxOp))


def test_no_big_tensor_evaluated_at_import():
    """A condition computed from a 10^10-element ConstantOfShape is left to the graph passes
    unevaluated: the result's size is checked, by ONNX shape inference, before it is built."""
    branch_out = helper.make_tensor_value_info("b", TensorProto.FLOAT, [2])
    branch = helper.make_graph([helper.make_node("Identity", ["x"], ["b"])], "b", [], [branch_out])
    model = _model(
        [
            helper.make_node(
                "ConstantOfShape", ["dims"], ["ones"], value=helper.make_tensor("one", TensorProto.BOOL, [1], [1])
            ),
            helper.make_node("ReduceMin", ["ones"], ["all"], keepdims=0),
            helper.make_node("If", ["all"], ["y"], then_branch=branch, else_branch=branch),
        ],
        initializers=[numpy_helper.from_array(np.array([100_000, 100_000], np.int64), "dims")],
        opset=17,
    )
    assert any(o.OP_TYPE == "If" for o in import_model(model).walk() if isinstance(o, OnnxOp))
