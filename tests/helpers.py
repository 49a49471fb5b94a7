"""Helpers the test modules share: one-node ONNX models compiled end to end and compared
with a reference (`Case`, `run_case`), and compiled libraries called straight through the
C ABI of runtime/onnxc.h (`Model`, `compile_model`)."""

from __future__ import annotations

import ctypes
import json
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

import onnxc
from onnxc import dtypes
from onnxc.codegen import emit_library
from onnxc.dialects import make_context
from onnxc.dialects.onnx import WeightStore
from onnxc.runtime.abi import Status
from onnxc.runtime.library import OnnxcTensor

# ------------------------------------------------------------------------------ one-node models

RTOL = 1e-5
# Test modules build their cases at import, in a fixed order (pytest collects them by name),
# so their data is the same every run; each test then draws from a seed of its own name
# (conftest.py's `_test_data_seed`), whatever ran before it on its worker.
_RNG = np.random.default_rng(0)


def reseed(seed: int) -> None:
    """Draw the following test data from `seed`."""
    global _RNG
    _RNG = np.random.default_rng(seed)


def rand(*shape: int, dtype=np.float32, low: float | None = None, high: float | None = None) -> np.ndarray:
    """Test data: standard normal, or uniform in [low, high)."""
    if low is None:
        return _RNG.standard_normal(shape).astype(dtype)
    return _RNG.uniform(low, high, shape).astype(dtype)


def ints(*shape: int, dtype=np.int64, low: int = -20, high: int = 20) -> np.ndarray:
    return _RNG.integers(low, high, shape).astype(dtype)


@dataclass
class Case:
    """One node (or a few), its graph inputs, and constant inputs turned into initializers."""

    op_type: str
    inputs: dict[str, np.ndarray]
    attrs: dict = field(default_factory=dict)
    initializers: dict[str, np.ndarray] = field(default_factory=dict)
    opset: int = 17
    outputs: int = 1
    node_inputs: list[str] | None = None  # defaults to inputs then initializers; "" = absent
    reference: str = "onnx"  # or "onnxruntime"

    def model(self) -> onnx.ModelProto:
        names = self.node_inputs if self.node_inputs is not None else [*self.inputs, *self.initializers]
        output_names = [f"y{k}" for k in range(self.outputs)]
        node = helper.make_node(self.op_type, names, output_names, name="node0", **self.attrs)
        graph = helper.make_graph(
            [node],
            "case",
            [value_info(n, a.dtype, a.shape) for n, a in self.inputs.items()],
            [helper.make_empty_tensor_value_info(n) for n in output_names],
            [numpy_helper.from_array(a, n) for n, a in self.initializers.items()],
        )
        return make_model(graph, self.opset)


def value_info(name: str, dtype, shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), shape)


def make_model(graph: onnx.GraphProto, opset: int = 17) -> onnx.ModelProto:
    # IR version 8: onnxruntime, the second reference, rejects the newest ones.
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def expected_outputs(model: onnx.ModelProto, feeds: dict[str, np.ndarray], reference: str) -> list[np.ndarray]:
    if reference == "onnxruntime":
        import onnxruntime

        session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        return session.run(None, feeds)
    return ReferenceEvaluator(model).run(None, feeds)


def with_output_types(model: onnx.ModelProto, outputs: list[np.ndarray]) -> onnx.ModelProto:
    """The model with its graph outputs' types declared (as exporters do)."""
    del model.graph.output[:]
    for k, array in enumerate(outputs):
        model.graph.output.append(value_info(f"y{k}", array.dtype, array.shape))
    return model


def compile_and_run(model: onnx.ModelProto, feeds: dict[str, np.ndarray], tmp_path) -> list[np.ndarray]:
    library = onnxc.compile(model, tmp_path / "model.so")
    return onnxc.Session(library).run(None, feeds)


def assert_matches(actual: list[np.ndarray], expected: list[np.ndarray]) -> None:
    """Outputs equal in type and shape and close in value; a sequence output (a list) item by item."""
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        if isinstance(want, list):
            assert isinstance(got, list), type(got)
            assert_matches(got, want)
            continue
        want = np.asarray(want)
        assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
        if np.issubdtype(want.dtype, np.floating):
            scale = float(np.max(np.abs(want))) if want.size else 0.0
            # float16 results may differ by an ulp (summation order): two of its epsilons
            rtol = max(RTOL, 2 * float(np.finfo(want.dtype).eps))
            np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale)
        else:
            np.testing.assert_array_equal(got, want)


def run_case(case: Case, tmp_path) -> None:
    model = case.model()
    expected = expected_outputs(model, case.inputs, case.reference)
    actual = compile_and_run(with_output_types(model, expected), case.inputs, tmp_path)
    assert_matches(actual, expected)


# ------------------------------------------------------------------ libraries through the C ABI


_ONNX_OF_NUMPY = {dt: code for code, dt in dtypes.NUMPY_OF_ONNX.items() if code != dtypes.BFLOAT16}


class Model:
    """A compiled library and a way to call it."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(str(path))
        self.lib.run_main_graph.restype = ctypes.c_int32
        tensors = ctypes.POINTER(OnnxcTensor)
        self.lib.run_main_graph.argtypes = [tensors, ctypes.c_int64, tensors, ctypes.c_int64]
        self.lib.onnxc_signature.restype = ctypes.c_char_p
        self.lib.onnxc_abi_version.restype = ctypes.c_int32

    @property
    def signature(self) -> dict:
        return json.loads(self.lib.onnxc_signature().decode())

    def call(self, inputs, outputs, *, num_inputs=None, num_outputs=None) -> int:
        """run_main_graph on numpy arrays, or (array, onnx dtype code) pairs, or ready tensors."""
        tensors_in, keep_in = tensor_array(inputs)
        tensors_out, keep_out = tensor_array(outputs)
        return self.lib.run_main_graph(
            tensors_in, len(inputs) if num_inputs is None else num_inputs,
            tensors_out, len(outputs) if num_outputs is None else num_outputs,
        )  # fmt: skip

    def run(self, *inputs: np.ndarray) -> list[np.ndarray]:
        """Allocate outputs as the signature says, run, check the status."""
        outputs = [
            np.zeros(o["shape"], dtypes.NUMPY_OF_ONNX[dtypes.ONNX_OF_NAME[o["dtype"]]])
            for o in self.signature["outputs"]
        ]
        codes = [dtypes.ONNX_OF_NAME[o["dtype"]] for o in self.signature["outputs"]]
        assert self.call(list(inputs), list(zip(outputs, codes))) == Status.OK
        return outputs


def make_tensor(array: np.ndarray, dtype: int | None = None) -> tuple[OnnxcTensor, np.ndarray]:
    shape = np.array(array.shape, np.int64)
    code = _ONNX_OF_NUMPY[array.dtype] if dtype is None else dtype
    tensor = OnnxcTensor(array.ctypes.data, shape.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)), array.ndim, code, 0)
    return tensor, shape


def tensor_array(items) -> tuple[ctypes.Array, list]:
    tensors, keep = [], []
    for item in items:
        if isinstance(item, OnnxcTensor):
            tensors.append(item)
            continue
        array, code = item if isinstance(item, tuple) else (item, None)
        tensor, shape = make_tensor(array, code)
        tensors.append(tensor)
        keep += [array, shape]
    return (OnnxcTensor * max(len(tensors), 1))(*tensors), keep


def parse(text: str, **weights: np.ndarray) -> ModuleOp:
    """Loop-level IR from text; `weights` fill the store behind `#onnx.weight<"name", ...>`."""
    module = Parser(make_context(), text).parse_module()
    module.verify()
    store = WeightStore.of(module)
    for name, array in weights.items():
        store.arrays[name] = array
    return module


def compile_model(module: ModuleOp, path, **options) -> Model:
    emit_library(module, path, **options)
    return Model(path)


def run_from_threads(session, feeds: dict, expected: dict, repeat: int = 10) -> list:
    """Run `session` on each feed (key -> input dict) from a thread of its own, `repeat`
    times, all at once; the keys whose output ever differed from `expected[key]`."""
    import threading

    failures = []

    def run(key):
        for _ in range(repeat):
            (got,) = session.run(None, feeds[key])
            if got.shape != expected[key].shape or np.abs(got - expected[key]).max() > 1e-4:
                failures.append(key)

    threads = [threading.Thread(target=run, args=(key,)) for key in feeds]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return failures
