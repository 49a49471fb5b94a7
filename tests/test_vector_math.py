"""Accuracy of onnxc's vectorizable float32 exp/log/tanh/erf (onnxc/codegen/vector_math.py).

Each function is JIT-compiled at -O3 inside a loop over an array and compared
with the correctly rounded float64 result over dense sweeps of float32 bit
patterns and special values; and a Softmax/Exp model's optimized IR must hold
vector code where it used to call expf.
"""

from __future__ import annotations

import ctypes
import math

import llvmlite.binding as llvm
import numpy as np
import onnx
import pytest
from llvmlite import ir

from onnxc.codegen import vector_math
from onnxc.codegen.target import resolve_target
from onnxc.compiler import compile

# Worst error allowed, in units in the last place of the correctly rounded result.
MAX_ULP = {"exp": 1, "log": 1, "tanh": 1, "erf": 3}


def _reference(name: str, x: np.ndarray) -> np.ndarray:
    wide = x.astype(np.float64)
    with np.errstate(all="ignore"):
        if name == "erf":
            return np.vectorize(math.erf, otypes=[np.float64])(wide).astype(np.float32)
        return {"exp": np.exp, "log": np.log, "tanh": np.tanh}[name](wide).astype(np.float32)


@pytest.fixture(scope="module", params=[True, False], ids=["ldexp", "exponent-bits"])
def compiled(request):
    """name -> function applying onnxc.<name>f to a float32 array, JIT-compiled at -O3 for the host,
    with 2^k applied by llvm.ldexp (on a host that lowers it) and by exponent bits."""
    target = resolve_target()
    if request.param and not target.has_vector_ldexp:
        pytest.skip("this host lowers llvm.ldexp to libm calls")
    module = ir.Module("vector_math")
    module.triple = target.triple
    f32p = ir.PointerType()
    for name in vector_math.FUNCTIONS:
        function = ir.Function(module, ir.FunctionType(ir.VoidType(), [f32p, f32p, ir.IntType(64)]), f"apply_{name}")
        source, destination, count = function.args
        builder = ir.IRBuilder(function.append_basic_block("entry"))
        loop, done = function.append_basic_block("loop"), function.append_basic_block("done")
        builder.cbranch(builder.icmp_signed(">", count, ir.Constant(count.type, 0)), loop, done)
        builder.position_at_end(loop)
        index = builder.phi(count.type)
        index.add_incoming(ir.Constant(count.type, 0), function.entry_basic_block)
        value = builder.load(builder.gep(source, [index], source_etype=ir.FloatType()), typ=ir.FloatType())
        approximation = vector_math.float32_function(module, name, vector_ldexp=request.param)
        result = builder.call(approximation, [value])
        builder.store(result, builder.gep(destination, [index], source_etype=ir.FloatType()))
        following = builder.add(index, ir.Constant(count.type, 1))
        index.add_incoming(following, loop)
        builder.cbranch(builder.icmp_signed("<", following, count), loop, done)
        builder.position_at_end(done)
        builder.ret_void()
    machine = target.target_machine(3)
    parsed = llvm.parse_assembly(str(module))
    parsed.verify()
    builder = llvm.create_pass_builder(machine, llvm.create_pipeline_tuning_options(3))
    builder.getModulePassManager().run(parsed, builder)
    engine = llvm.create_mcjit_compiler(parsed, machine)
    engine.finalize_object()
    prototype = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)

    def make(name):
        function = prototype(engine.get_function_address(f"apply_{name}"))

        def apply(x: np.ndarray) -> np.ndarray:
            x = np.ascontiguousarray(x, np.float32)
            out = np.empty_like(x)
            function(x.ctypes.data, out.ctypes.data, x.size)
            return out

        return apply

    functions = {name: make(name) for name in vector_math.FUNCTIONS}
    functions["_engine"] = engine  # keeps the code alive
    functions["_ir"] = str(parsed)
    return functions


def _ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in representable float32 values (NaN vs NaN counts 0, NaN vs number huge)."""

    def ordered(v):
        bits = v.view(np.int32).astype(np.int64)
        return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)

    distance = np.abs(ordered(a) - ordered(b))
    both_nan = np.isnan(a) & np.isnan(b)
    one_nan = np.isnan(a) ^ np.isnan(b)
    return np.where(both_nan, 0, np.where(one_nan, 1 << 40, distance))


def _sweep(stride: int) -> np.ndarray:
    """Every `stride`-th float32 bit pattern, both signs, plus the neighbours of a few landmarks."""
    bits = np.arange(0, 0x7F800001, stride, dtype=np.int64)
    positive = bits.astype(np.uint32).view(np.float32)
    return np.concatenate([positive, -positive])


SPECIALS = np.array(
    [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1.1754942e-38, 1.1754944e-38, 1.0, -1.0,
     88.72283, 88.72284, 89.0, -87.33654, -103.97208, -103.97209, -104.0, 0.625, -0.625, 0.9, -0.9,
     3.93, 9.0, 9.1, 2.0, 0.5, 3.4028235e38, -3.4028235e38],
    np.float32,
)  # fmt: skip


@pytest.mark.parametrize("name", vector_math.FUNCTIONS)
def test_accuracy_over_the_float_range(compiled, name):
    stride = 4099 if name == "erf" else 257
    x = np.concatenate([_sweep(stride), SPECIALS])
    got, want = compiled[name](x), _reference(name, x)
    distance = _ulp_distance(got, want)
    worst = int(np.argmax(distance))
    assert distance[worst] <= MAX_ULP[name], f"{name}({x[worst]!r}) = {got[worst]!r}, want {want[worst]!r}"


@pytest.mark.parametrize("name", vector_math.FUNCTIONS)
def test_dense_where_the_approximations_switch(compiled, name):
    """Every float between -20 and 20 in steps of 2^-12 (and, for log, (0, 4])."""
    x = np.arange(-20, 20, 2.0**-12, dtype=np.float32)
    if name == "log":
        x = np.arange(2.0**-12, 4, 2.0**-16, dtype=np.float32)
    distance = _ulp_distance(compiled[name](x), _reference(name, x))
    worst = int(np.argmax(distance))
    assert distance[worst] <= MAX_ULP[name], f"{name}({x[worst]!r}) is {distance[worst]} ulp off"


def test_special_values(compiled):
    nan, inf = np.nan, np.inf
    x = np.array([nan, inf, -inf, 0.0, -0.0, 1e-45, -1e-45, 100.0, -110.0], np.float32)
    np.testing.assert_array_equal(compiled["exp"](x), np.array([nan, inf, 0, 1, 1, 1, 1, inf, 0], np.float32))
    np.testing.assert_array_equal(
        compiled["log"](x), np.array([nan, inf, nan, -inf, -inf, -103.27893, nan, 4.6051702, nan], np.float32)
    )
    for name in ("tanh", "erf"):
        got = compiled[name](x)
        np.testing.assert_array_equal(got[:3], np.array([nan, 1, -1], np.float32))
        assert got[3] == 0 and not np.signbit(got[3]) and got[4] == 0 and np.signbit(got[4])
        np.testing.assert_array_equal(got[7:], np.array([1, -1], np.float32))
    # exp's smallest results are subnormals, rounded once.
    tiny = np.array([-100.0, -103.0, -103.9], np.float32)
    assert _ulp_distance(compiled["exp"](tiny), _reference("exp", tiny)).max() <= 1


def test_loop_over_the_function_is_vectorized(compiled):
    if resolve_target().arch != "x86_64":
        pytest.skip("vector width checked on x86_64 only")
    assert "<16 x float>" in compiled["_ir"] or "<8 x float>" in compiled["_ir"]
    assert "@expf" not in compiled["_ir"]


def _optimized_ir(op_type: str, directory, row: int = 256) -> str:
    """-O3 LLVM IR of a one-node model over float32[8, row], for znver4 (AVX-512)."""
    x = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [8, row])
    y = onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [8, row])
    graph = onnx.helper.make_graph([onnx.helper.make_node(op_type, ["x"], ["y"])], "g", [x], [y])
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])
    output = compile(model, directory / "model.ll", target=resolve_target("x86_64", cpu="znver4"), emit="llvm")
    return output.read_text()


@pytest.mark.parametrize("op_type", ["Exp", "Tanh", "Sigmoid"])
def test_elementwise_loop_is_vectorized_at_O3(op_type, tmp_path):
    """The exp polynomial (its fused multiply-adds) runs on 16 floats at a time; no libm call is left."""
    text = _optimized_ir(op_type, tmp_path)
    assert "@llvm.fma.v16f32(<16 x float>" in text
    assert "@expf" not in text and "@tanhf" not in text


@pytest.mark.parametrize("row", [32, 64])
def test_softmax_over_short_rows_is_vectorized(row, tmp_path):
    """Rows of 32 or 64: LLVM's full unrolling (before the vectorizer) made the max and the sum
    64 dependent scalar steps; the reduction loops carry llvm.loop.unroll.disable."""
    text = _optimized_ir("Softmax", tmp_path, row)
    assert "@llvm.maxnum.v16f32(<16 x float>" in text and "llvm.loop.unroll.disable" in text


def test_softmax_exp_is_inlined_and_vectorized(tmp_path):
    """Softmax's exp is inlined in the loop that also sums the exponentials (a reassociable
    sum), its maximum is a vector maxnum reduction, and the last loop scales by 1/sum: all
    on 16 floats at a time."""
    text = _optimized_ir("Softmax", tmp_path)
    assert "@llvm.fma.v16f32(<16 x float>" in text and "@expf" not in text
    assert "@llvm.maxnum.v16f32(<16 x float>" in text
    assert "fmul <16 x float>" in text and "fdiv <16 x float>" not in text
