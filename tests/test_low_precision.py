"""The low-precision element types (float8 E4M3FN/E4M3FNUZ/E5M2/E5M2FNUZ, float8 E8M0,
float4 E2M1, int4/uint4, int2/uint2) end to end: decoding from TensorProtos, Cast in
both directions against onnx.reference (bit for bit, edge values included), BitCast,
data movement, constant folding, the runtime's ml_dtypes arrays, and refusals."""

from __future__ import annotations

import subprocess
import sys

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import onnxc
from onnxc import dtypes
from onnxc.errors import InputError, InvalidModelError, UnsupportedOpError
from onnxc.frontend.tensors import decode_tensor

LOW_PRECISION = sorted(dtypes.LOW_PRECISION)
NARROW_BITS = {TensorProto.UINT4: 4, TensorProto.INT4: 4, TensorProto.FLOAT4E2M1: 4}
NARROW_BITS |= {TensorProto.UINT2: 2, TensorProto.INT2: 2}
FLOAT8 = (TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E4M3FNUZ, TensorProto.FLOAT8E5M2, TensorProto.FLOAT8E5M2FNUZ)
OPSET = 25


def _name(code: int) -> str:
    return TensorProto.DataType.Name(code)


def _np(code: int) -> np.dtype:
    return dtypes.numpy_dtype(code)


def _every_code(code: int) -> np.ndarray:
    """Every bit pattern of a type, one element per byte."""
    return np.arange(1 << NARROW_BITS.get(code, 8), dtype=np.uint8).view(_np(code))


def _model(nodes, inputs, outputs, initializers=(), opset: int = OPSET) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "low_precision",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
        list(initializers),
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _reference(model: onnx.ModelProto, feeds: dict) -> list[np.ndarray | None]:
    """Each output of a model of independent nodes by onnx.reference, None where it has
    no implementation (ml_dtypes converts between some of these types only through f32)."""
    results = []
    for node, output in zip(model.graph.node, model.graph.output):
        single = onnx.ModelProto()
        single.CopyFrom(model)
        del single.graph.node[:], single.graph.output[:]
        single.graph.node.append(node)
        single.graph.output.append(output)
        try:
            results.append(ReferenceEvaluator(single).run(None, feeds)[0])
        except TypeError:
            results.append(None)
    return results


def _run(model: onnx.ModelProto, feeds: dict, path) -> list[np.ndarray]:
    library = onnxc.compile(model, str(path))
    with onnxc.Session(library) as session:
        return session.run(None, feeds)


def assert_same(got: np.ndarray, want: np.ndarray, what: str, valid: np.ndarray | None = None) -> None:
    """Same dtype and the same bits, except that any NaN matches any NaN of an ordinary float
    type (payload and sign are not part of Cast's contract there); `valid` masks the elements
    whose value the spec leaves undefined."""
    assert got.dtype == want.dtype, what
    keep = np.ones(got.shape, bool) if valid is None else valid
    if want.dtype.kind == "f":
        nans = np.isnan(want)
        assert (np.isnan(got) == nans)[keep].all(), what
        keep = keep & ~nans
    bad = (_bytes(got) != _bytes(want)).any(axis=1).reshape(got.shape) & keep
    assert not bad.any(), f"{what}: got {got[bad][:8]} want {want[bad][:8]}"


def _bytes(array: np.ndarray) -> np.ndarray:
    """The bytes of each element, one row per element."""
    return np.ascontiguousarray(array).reshape(-1).view(np.uint8).reshape(array.size, array.dtype.itemsize)


# ----------------------------------------------------------------------------- decoding


@pytest.mark.parametrize("code", LOW_PRECISION, ids=_name)
@pytest.mark.parametrize("count", [0, 1, 5, 8])
def test_decode_matches_numpy_helper(code, count):
    rng = np.random.default_rng(count)
    codes = _every_code(code)
    array = rng.choice(codes, count).reshape(-1) if count else codes[:0]
    for raw in (True, False):
        tensor = numpy_helper.from_array(array, "t")
        if not raw:  # the typed field: int32_data (packed for 4-bit and 2-bit types)
            tensor = helper.make_tensor("t", code, array.shape, numpy_helper.to_array(tensor), raw=False)
        decoded = decode_tensor(tensor)
        assert_same(decoded, numpy_helper.to_array(tensor), f"{_name(code)} raw={raw}")
        assert decoded.flags.c_contiguous and decoded.dtype.itemsize == 1


def test_decode_refuses_a_wrong_packed_length():
    tensor = onnx.TensorProto(name="t", data_type=TensorProto.INT4, dims=[5], raw_data=b"\x12\x34")  # needs 3
    with pytest.raises(InvalidModelError, match="expected 3"):
        decode_tensor(tensor)


# ----------------------------------------------------------------------------------- Cast

EDGES = [0.0, -0.0, np.nan, np.inf, -np.inf, 1e6, -1e6, 1e-7, -1e-7, 0.47892547, 0.124, 1.1, 2.5, -3.5]
EDGES += [448, 449, 460, 464, 465, 480, 240, 247, 248, 249, 256, 57344, 61439, 61440, 65536, 6, 5, 7, -7]
EDGES += [0.25, 0.2500001, 0.75, 1.25, 1.75, 17, -9, 15.7, -8.5, -0.7, 3.7, 7.5, 8, 16, 100]
EDGES += [2.0**-9, 2.0**-10, 3 * 2.0**-11, 2.0**-17, 1.5 * 2.0**-16, 2.0**-16, 5.877e-39, 1e-40, 2.0**127]
EDGES += [3e38, 1.7e38, 2.0**-126, 2.0**-127, 0.5 + 2.0**-24]


def _float_inputs() -> np.ndarray:
    rng = np.random.default_rng(0)
    values = rng.standard_normal(300) * 2.0 ** rng.integers(-24, 24, 300)
    edges = np.array(EDGES, np.float32)
    negative_nan = np.array([np.nan], np.float32)
    negative_nan.view(np.uint32)[0] |= 0x80000000
    return np.concatenate([edges, -edges, negative_nan, values.astype(np.float32)])


def _cast_nodes(code: int, source: str, suffix: str) -> list[tuple[onnx.NodeProto, str]]:
    """Cast nodes from `source` to `code` under every attribute setting that matters."""
    if code == TensorProto.FLOAT8E8M0:
        settings = [{"saturate": s, "round_mode": m} for s in (0, 1) for m in ("up", "down", "nearest")]
    elif code in FLOAT8:
        settings = [{"saturate": 0}, {"saturate": 1}, {}]
    else:
        settings = [{}]
    nodes = []
    for k, attrs in enumerate(settings):
        out = f"{_name(code)}_{suffix}_{k}"
        nodes.append((helper.make_node("Cast", [source], [out], to=code, **attrs), out))
    return nodes


def test_cast_to_every_low_precision_type_matches_reference(tmp_path):
    """f32, f16, f64 and int32 sources; one model for all targets (one compile)."""
    x = _float_inputs()
    with np.errstate(over="ignore"):
        feeds = {"f32": x, "f16": x.astype(np.float16), "f64": x.astype(np.float64) * (1 + 2.0**-30)}
    feeds["i32"] = np.clip(np.nan_to_num(x), -(2.0**20), 2.0**20).astype(np.int32)
    n = x.size
    inputs = [("f32", 1, [n]), ("f16", 10, [n]), ("f64", 11, [n]), ("i32", 6, [n])]
    nodes, outputs = [], []
    for code in LOW_PRECISION:
        for source in feeds:
            for node, out in _cast_nodes(code, source, source):
                nodes.append(node)
                outputs.append((out, code, [n]))
    model = _model(nodes, inputs, outputs)
    got = _run(model, feeds, tmp_path / "to.so")
    want = ReferenceEvaluator(model).run(None, feeds)
    for (name, _, _), g, w in zip(outputs, got, want):
        assert_same(g, w, name)


@pytest.mark.parametrize("code", LOW_PRECISION, ids=_name)
def test_cast_from_low_precision_matches_reference(tmp_path, code):
    """Every bit pattern to the ordinary types and to every other low-precision type."""
    x = _every_code(code)
    wide = x.astype(np.float32)
    targets = [1, 10, 11, 16, 9, 3, 6, 2, 12, *(c for c in LOW_PRECISION if c != code)]
    nodes = [helper.make_node("Cast", ["x"], [f"to_{t}"], to=t) for t in targets]
    model = _model(nodes, [("x", code, [x.size])], [(f"to_{t}", t, [x.size]) for t in targets])
    got = _run(model, {"x": x}, tmp_path / "from.so")
    with np.errstate(invalid="ignore"):  # NaN to integers: undefined, masked below
        want = _reference(model, {"x": x})
    for target, g, w in zip(targets, got, want):
        if w is None:  # the value is exact in f32 (floats) or int8 (integers): convert from there
            exact = np.int8 if code in NARROW_BITS and code != TensorProto.FLOAT4E2M1 else np.float32
            with np.errstate(invalid="ignore"):
                w = x.astype(exact).astype(_np(target))
        if target == TensorProto.BFLOAT16:  # onnxc holds bfloat16 as its uint16 bits
            w = w.view(np.uint16)
        valid = None  # float to integer: undefined for NaN and infinities, and out of range unless narrow
        if np.dtype(_np(target)).kind in "iu" or target in NARROW_BITS and target != TensorProto.FLOAT4E2M1:
            valid = np.isfinite(wide)
            if target not in NARROW_BITS:
                info = np.iinfo(_np(target))
                valid &= (wide > info.min - 1) & (wide < info.max + 1)
        assert_same(g, w, f"{_name(code)} to {_name(target)}", valid)


def test_cast_folded_at_compile_time_saturates(tmp_path):
    """constprop folds a Cast of a constant with Cast's rules, not numpy's astype."""
    values = np.array([1000.0, -1e6, 3.0, np.inf], np.float32)
    nodes = [
        helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(values)),
        helper.make_node("Cast", ["c"], ["saturated"], to=TensorProto.FLOAT8E4M3FN),
        helper.make_node("Cast", ["c"], ["overflowed"], to=TensorProto.FLOAT8E4M3FN, saturate=0),
    ]
    model = _model(nodes, [], [("saturated", 17, [4]), ("overflowed", 17, [4])])
    saturated, overflowed = _run(model, {}, tmp_path / "folded.so")
    assert saturated.astype(np.float32).tolist() == [448.0, -448.0, 3.0, 448.0]
    assert np.isnan(overflowed.astype(np.float32)[[0, 1, 3]]).all()


def test_cast_of_bfloat16_constant_is_not_folded_from_its_bits(tmp_path):
    bf16 = numpy_helper.from_array(np.array([1.5, -2.0], ml_dtypes.bfloat16), "c")
    nodes = [helper.make_node("Constant", [], ["c"], value=bf16), helper.make_node("Cast", ["c"], ["y"], to=1)]
    (y,) = _run(_model(nodes, [], [("y", 1, [2])]), {}, tmp_path / "bf16.so")
    assert y.tolist() == [1.5, -2.0]


# -------------------------------------------------------------------------------- BitCast


def test_bitcast_keeps_bits(tmp_path):
    f32 = np.array([1.5, -0.0, np.inf, 3e-40], np.float32)
    f8 = _every_code(TensorProto.FLOAT8E5M2)[::37]
    i4 = _every_code(TensorProto.INT4)
    flags = np.array([True, False, True, True])
    cases = [
        ("f32", 1, f32, TensorProto.INT32),
        ("f8", TensorProto.FLOAT8E5M2, f8, TensorProto.UINT8),
        ("f8b", TensorProto.FLOAT8E5M2, f8, TensorProto.FLOAT8E4M3FNUZ),
        ("i4", TensorProto.INT4, i4, TensorProto.FLOAT4E2M1),
        ("flags", TensorProto.BOOL, flags, TensorProto.UINT8),
    ]
    nodes = [helper.make_node("BitCast", [name], [f"{name}_out"], to=to) for name, _, _, to in cases]
    model = _model(
        nodes,
        [(name, code, list(v.shape)) for name, code, v, _ in cases],
        [(f"{name}_out", to, list(v.shape)) for name, _, v, to in cases],
        opset=26,
    )
    got = _run(model, {name: v for name, _, v, _ in cases}, tmp_path / "bitcast.so")
    for (name, _, value, to), g in zip(cases, got):
        assert g.dtype == _np(to), name
        assert g.view(np.uint8).tobytes() == value.view(np.uint8).tobytes(), name


def test_bitcast_to_bool_is_refused(tmp_path):
    node = helper.make_node("BitCast", ["x"], ["y"], to=TensorProto.BOOL)
    model = _model([node], [("x", TensorProto.UINT8, [3])], [("y", TensorProto.BOOL, [3])], opset=26)
    with pytest.raises(UnsupportedOpError, match="to bool"):
        onnxc.compile(model, str(tmp_path / "refused.so"))


# ------------------------------------------------------------------ data movement, refusals


def test_data_movement_and_constants_of_low_precision_types(tmp_path):
    """Transpose, Reshape, Unsqueeze and a (packed) initializer move the bytes as they are."""
    x = _every_code(TensorProto.INT4).reshape(4, 4)
    c = _every_code(TensorProto.UINT2)
    initializers = [numpy_helper.from_array(c, "c"), numpy_helper.from_array(np.array([-1], np.int64), "shape")]
    initializers.append(numpy_helper.from_array(np.array([0], np.int64), "axes"))
    nodes = [
        helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
        helper.make_node("Reshape", ["t", "shape"], ["flat"]),
        helper.make_node("Unsqueeze", ["x", "axes"], ["unsqueezed"]),
        helper.make_node("Identity", ["c"], ["constant"]),
    ]
    outputs = [("flat", TensorProto.INT4, [16]), ("unsqueezed", TensorProto.INT4, [1, 4, 4]), ("constant", 25, [4])]
    model = _model(nodes, [("x", TensorProto.INT4, [4, 4])], outputs, initializers)
    flat, unsqueezed, constant = _run(model, {"x": x}, tmp_path / "moves.so")
    assert_same(flat, x.T.reshape(-1), "flat")
    assert_same(unsqueezed, x[None], "unsqueezed")
    assert_same(constant, c, "constant")


def test_arithmetic_on_low_precision_types_is_refused_by_name(tmp_path):
    pads = numpy_helper.from_array(np.array([1, 1], np.int64), "pads")
    graph = helper.make_graph(
        [helper.make_node("Pad", ["x", "pads"], ["y"], name="pad")],
        "pad",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT8E4M3FN, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT8E4M3FN, [5])],
        [pads],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    with pytest.raises(UnsupportedOpError) as error:
        onnxc.compile(model, str(tmp_path / "pad.so"))
    assert error.value.op_type == "Pad"
    assert "float8_e4m3fn" in str(error.value) and f"opset {OPSET}" in str(error.value)


# --------------------------------------------------------------------------------- runtime


def test_runtime_takes_and_returns_ml_dtypes_arrays(tmp_path):
    nodes = [helper.make_node("Identity", ["x"], ["y"]), helper.make_node("Cast", ["x"], ["z"], to=1)]
    model = _model(nodes, [("x", TensorProto.FLOAT8E4M3FN, [4])], [("y", 17, [4]), ("z", 1, [4])])
    library = onnxc.compile(model, str(tmp_path / "rt.so"))
    x = np.array([1.5, -2, 448, 0.125], ml_dtypes.float8_e4m3fn)
    with onnxc.Session(library) as session:
        (arg,) = session.get_inputs()
        assert (arg.element_type, arg.dtype, arg.onnx_type) == ("float8_e4m3fn", x.dtype, 17)
        y, z = session.run(None, {"x": x})
        assert y.dtype == x.dtype and y.view(np.uint8).tolist() == x.view(np.uint8).tolist()
        assert z.tolist() == [1.5, -2, 448, 0.125]
        with pytest.raises(InputError, match=r"astype\(ml_dtypes.float8_e4m3fn\)"):
            session.run(None, {"x": x.view(np.uint8)})


def test_runtime_does_not_import_ml_dtypes_for_ordinary_models():
    code = "import sys, onnxc.runtime, onnxc.dtypes; print('ml_dtypes' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_onnxc_run_reads_npy_files_of_ml_dtypes_arrays(tmp_path, capsys):
    """np.save writes an int4 array as raw bytes (|V1): `onnxc run` reads them as the input's type."""
    from onnxc.commands import run

    model = _model([helper.make_node("Cast", ["x"], ["y"], to=1)], [("x", TensorProto.INT4, [3])], [("y", 1, [3])])
    library = onnxc.compile(model, str(tmp_path / "run.so"))
    np.save(tmp_path / "x.npy", np.array([-8, 7, -1], ml_dtypes.int4))
    assert run.main([str(library), "--input", f"x={tmp_path / 'x.npy'}"]) == 0
    assert "y: float32[3] [-8.,  7., -1.]" in capsys.readouterr().out
