"""Code generation end to end: loop-level IR → .so, called through ctypes (runtime/onnxc.h)."""

from __future__ import annotations

import ctypes
import shutil
import struct
import subprocess
import threading

import numpy as np
import pytest
from helpers import Model, compile_model, make_tensor, parse, tensor_array

from onnxc import dtypes
from onnxc.codegen import emit_library, emit_llvm_ir, emit_object, resolve_target
from onnxc.codegen.arena import plan_arena
from onnxc.codegen.llvm_types import round_to_bfloat16
from onnxc.errors import CompileError
from onnxc.runtime.abi import Status
from onnxc.runtime.library import OnnxcTensor

assert ctypes.sizeof(OnnxcTensor) == 32

CONSTANTS = """
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
"""

# out = leaky_relu((x + w) * k) per element; rows = sum of out per row.
FLOAT_MODEL = f"""
builtin.module {{
  func.func @main_graph(%x: memref<3x4xf32>, %out: memref<3x4xf32>, %rows: memref<3xf32>) {{
    %w = "krnl.global"() <{{value = #onnx.weight<"w", tensor<3x4xf32>>}}> : () -> memref<3x4xf32>
    %k = "krnl.global"() <{{value = dense<[1.0, -2.0, 3.0, -4.0]> : tensor<4xf32>}}>
        : () -> memref<4xf32>
    %t = memref.alloc() : memref<3x4xf32>
    {CONSTANTS}
    %zero = arith.constant 0.0 : f32
    %slope = arith.constant 0.125 : f32
    scf.for %i = %c0 to %c3 step %c1 {{
      scf.for %j = %c0 to %c4 step %c1 {{
        %a = memref.load %x[%i, %j] : memref<3x4xf32>
        %b = memref.load %w[%i, %j] : memref<3x4xf32>
        %c = memref.load %k[%j] : memref<4xf32>
        %s = arith.addf %a, %b : f32
        %p = arith.mulf %s, %c : f32
        memref.store %p, %t[%i, %j] : memref<3x4xf32>
      }}
    }}
    scf.for %i = %c0 to %c3 step %c1 {{
      %r = scf.for %j = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f32) {{
        %v = memref.load %t[%i, %j] : memref<3x4xf32>
        %positive = arith.cmpf ogt, %v, %zero : f32
        %y = scf.if %positive -> (f32) {{
          scf.yield %v : f32
        }} else {{
          %n = arith.mulf %v, %slope : f32
          scf.yield %n : f32
        }}
        memref.store %y, %out[%i, %j] : memref<3x4xf32>
        %next = arith.addf %acc, %y : f32
        scf.yield %next : f32
      }}
      memref.store %r, %rows[%i] : memref<3xf32>
    }}
    func.return
  }}
  "krnl.entry_point"() <{{func = @main_graph, input_names = ["x"],
                          output_names = ["out", "rows"]}}> : () -> ()
}}
"""
FLOAT_WEIGHT = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)


def float_reference(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    t = (x + FLOAT_WEIGHT) * np.array([1, -2, 3, -4], np.float32)
    out = np.where(t > 0, t, t * np.float32(0.125))
    return out, out.sum(axis=1)


@pytest.fixture(scope="module")
def float_model(tmp_path_factory) -> Model:
    return compile_model(parse(FLOAT_MODEL, w=FLOAT_WEIGHT), tmp_path_factory.mktemp("f") / "m.so")


def test_float_model_numbers(float_model):
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 7 - 0.8
    out, rows = float_model.run(x)
    expected_out, expected_rows = float_reference(x)
    np.testing.assert_allclose(out, expected_out, rtol=1e-6)
    np.testing.assert_allclose(rows, expected_rows, rtol=1e-5)


def test_signature_and_abi_version(float_model):
    assert float_model.lib.onnxc_abi_version() == 3
    assert float_model.signature == {
        "abi_version": 3,
        "model": "model",
        "target": resolve_target().triple,
        "byte_order": "little",
        "inputs": [{"name": "x", "dtype": "float32", "shape": [3, 4]}],
        "outputs": [
            {"name": "out", "dtype": "float32", "shape": [3, 4]},
            {"name": "rows", "dtype": "float32", "shape": [3]},
        ],
    }


def test_only_the_abi_is_exported(float_model, tmp_path):
    if shutil.which("nm") is None:
        pytest.skip("nm not installed")
    path = tmp_path / "m.so"
    emit_library(parse(FLOAT_MODEL, w=FLOAT_WEIGHT), path)
    defined = subprocess.run(
        ["nm", "-D", "--defined-only", str(path)], capture_output=True, text=True, check=True
    ).stdout
    names = {line.split()[-1] for line in defined.splitlines()}
    assert names == {"run_main_graph", "onnxc_signature", "onnxc_abi_version", "onnxc_set_num_threads",
                     "onnxc_get_num_threads", "onnxc_free_tensor"}


def test_every_status_code(float_model):
    x = np.zeros((3, 4), np.float32)
    out, rows = np.zeros((3, 4), np.float32), np.zeros(3, np.float32)
    call = float_model.call
    assert call([x], [out, rows], num_inputs=2) == Status.ERR_ARITY
    assert call([x], [out, rows], num_outputs=1) == Status.ERR_ARITY
    assert call([x], [out, rows], num_inputs=0) == Status.ERR_ARITY
    # NULL tensor array, data pointer, shape pointer.
    lib = float_model.lib
    outputs, _keep = tensor_array([out, rows])
    assert lib.run_main_graph(None, 1, outputs, 2) == Status.ERR_NULL
    no_data, _ = make_tensor(x)
    no_data.data = None
    assert call([no_data], [out, rows]) == Status.ERR_NULL
    no_shape, _ = make_tensor(out)
    no_shape.shape = None
    assert call([x], [no_shape, rows]) == Status.ERR_NULL
    # Wrong dtype code, rank, dimension: on inputs and on outputs.
    assert call([(x, dtypes.DOUBLE)], [out, rows]) == Status.ERR_DTYPE
    assert call([x], [out, (rows, dtypes.INT32)]) == Status.ERR_DTYPE
    assert call([x.reshape(12)], [out, rows]) == Status.ERR_RANK
    assert call([x], [out, rows.reshape(1, 3)]) == Status.ERR_RANK
    assert call([x.reshape(4, 3)], [out, rows]) == Status.ERR_SHAPE
    assert call([x], [out, np.zeros(4, np.float32)]) == Status.ERR_SHAPE
    assert not out.any() and not rows.any(), "a rejected call must not write outputs"
    assert call([x], [out, rows]) == Status.OK


def test_concurrent_calls(float_model):
    """No global mutable state: calls from several threads give the same results."""
    inputs = [np.random.default_rng(i).standard_normal((3, 4)).astype(np.float32) for i in range(4)]
    results: dict[int, list[np.ndarray]] = {}

    def worker(i: int) -> None:
        for _ in range(500):
            results[i] = float_model.run(inputs[i])

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for i, x in enumerate(inputs):
        np.testing.assert_allclose(results[i][0], float_reference(x)[0], rtol=1e-6)


MIXED_MODEL = f"""
builtin.module {{
  func.func @main_graph(%a: memref<5xi32>, %b: memref<5xi64>, %c: memref<5xi8>, %d: memref<5xui8>,
                        %e: memref<5xi1>, %f: memref<5xf64>,
                        %o_sum: memref<5xi64>, %o_bool: memref<5xi1>, %o_u8: memref<5xui8>,
                        %o_f32: memref<5xf32>, %o_div: memref<5xi32>, %o_sel: memref<5xi8>) {{
    {CONSTANTS}
    %three32 = arith.constant 3 : i32
    %three8 = arith.constant 3 : i8
    %one8 = arith.constant 1 : i8
    %zero8 = arith.constant 0 : i8
    scf.for %i = %c0 to %c5 step %c1 {{
      %av = memref.load %a[%i] : memref<5xi32>
      %bv = memref.load %b[%i] : memref<5xi64>
      %cv = memref.load %c[%i] : memref<5xi8>
      %du = memref.load %d[%i] : memref<5xui8>
      %ev = memref.load %e[%i] : memref<5xi1>
      %fv = memref.load %f[%i] : memref<5xf64>
      %wide = arith.extsi %av : i32 to i64
      %sum = arith.addi %wide, %bv : i64
      memref.store %sum, %o_sum[%i] : memref<5xi64>
      %negative = arith.cmpi slt, %cv, %zero8 : i8
      %flag = arith.xori %negative, %ev : i1
      memref.store %flag, %o_bool[%i] : memref<5xi1>
      %dv = arith.bitcast %du : ui8 to i8
      %quotient = arith.divui %dv, %three8 : i8
      %half = arith.shrui %dv, %one8 : i8
      %u = arith.addi %quotient, %half : i8
      %uu = builtin.unrealized_conversion_cast %u : i8 to ui8
      memref.store %uu, %o_u8[%i] : memref<5xui8>
      %narrow = arith.truncf %fv : f64 to f32
      %fromu = arith.uitofp %dv : i8 to f32
      %froms = arith.sitofp %cv : i8 to f32
      %f1 = arith.addf %narrow, %fromu : f32
      %f2 = arith.addf %f1, %froms : f32
      memref.store %f2, %o_f32[%i] : memref<5xf32>
      %floor = arith.floordivsi %av, %three32 : i32
      memref.store %floor, %o_div[%i] : memref<5xi32>
      %low = arith.trunci %av : i32 to i8
      %sel = arith.select %ev, %cv, %low : i8
      memref.store %sel, %o_sel[%i] : memref<5xi8>
    }}
    func.return
  }}
  "krnl.entry_point"() <{{func = @main_graph, input_names = ["a", "b", "c", "d", "e", "f"],
                          output_names = ["sum", "bool", "u8", "f32", "div", "sel"]}}> : () -> ()
}}
"""


def test_mixed_dtypes(tmp_path):
    model = compile_model(parse(MIXED_MODEL), tmp_path / "mixed.so")
    a = np.array([-7, -1, 0, 5, 300], np.int32)
    b = np.array([1, 2, 3, 1 << 40, -5], np.int64)
    c = np.array([-128, -1, 0, 1, 127], np.int8)
    d = np.array([0, 1, 100, 200, 255], np.uint8)
    e = np.array([True, False, True, False, True])
    f = np.array([0.5, -1.25, 1e10, 3.0, -0.0], np.float64)
    o_sum, o_bool, o_u8, o_f32, o_div, o_sel = model.run(a, b, c, d, e, f)
    np.testing.assert_array_equal(o_sum, a.astype(np.int64) + b)
    np.testing.assert_array_equal(o_bool, (c < 0) ^ e)
    np.testing.assert_array_equal(o_u8, (d // 3 + d // 2).astype(np.uint8))
    np.testing.assert_array_equal(
        o_f32, f.astype(np.float32) + d.astype(np.float32) + c.astype(np.float32)
    )
    np.testing.assert_array_equal(o_div, np.floor_divide(a, 3))
    np.testing.assert_array_equal(o_sel, np.where(e, c, a.astype(np.int8)))
    assert [o["dtype"] for o in model.signature["inputs"]] == [
        "int32", "int64", "int8", "uint8", "bool", "float64",
    ]  # fmt: skip


HALF_MODEL = f"""
builtin.module {{
  func.func @main_graph(%h: memref<4xf16>, %g: memref<4xbf16>, %x: memref<4xf32>,
                        %o_h: memref<4xf16>, %o_g: memref<4xbf16>, %o_x: memref<4xf32>) {{
    {CONSTANTS}
    %third = arith.constant 0.333333333 : bf16
    scf.for %i = %c0 to %c4 step %c1 {{
      %hv = memref.load %h[%i] : memref<4xf16>
      %he = math.exp %hv : f16
      memref.store %he, %o_h[%i] : memref<4xf16>
      %gv = memref.load %g[%i] : memref<4xbf16>
      %gm = arith.mulf %gv, %third : bf16
      memref.store %gm, %o_g[%i] : memref<4xbf16>
      %xv = memref.load %x[%i] : memref<4xf32>
      %t = math.tanh %xv : f32
      %r = math.erf %xv : f32
      %q = math.sqrt %t : f32
      %s = arith.addf %r, %q : f32
      %xb = arith.truncf %xv : f32 to bf16
      %xw = arith.extf %xb : bf16 to f32
      %sum = arith.addf %s, %xw : f32
      memref.store %sum, %o_x[%i] : memref<4xf32>
    }}
    func.return
  }}
  "krnl.entry_point"() <{{func = @main_graph, input_names = ["h", "g", "x"],
                          output_names = ["oh", "og", "ox"]}}> : () -> ()
}}
"""


def bfloat16_bits(values) -> np.ndarray:
    return np.array([round_to_bfloat16(v) for v in values], np.float32).view(np.uint32).astype(
        np.uint32
    ) >> 16


def test_half_bfloat16_and_libm(tmp_path):
    model = compile_model(parse(HALF_MODEL), tmp_path / "half.so")
    h = np.array([0.0, 1.0, -2.5, 3.0], np.float16)
    g_values = [1.0, 3.0, -7.5, 100.0]
    g = bfloat16_bits(g_values).astype(np.uint16)
    x = np.array([0.1, 0.5, 0.9, 2.0], np.float32)
    outputs = [np.zeros(4, np.float16), np.zeros(4, np.uint16), np.zeros(4, np.float32)]
    status = model.call(
        [h, (g, dtypes.BFLOAT16), x], [outputs[0], (outputs[1], dtypes.BFLOAT16), outputs[2]]
    )
    assert status == Status.OK
    np.testing.assert_allclose(outputs[0], np.exp(h.astype(np.float32)), rtol=1e-3)
    third = round_to_bfloat16(0.333333333)
    np.testing.assert_array_equal(outputs[1], bfloat16_bits([v * third for v in g_values]))
    import math

    expected = [
        math.erf(v) + math.sqrt(math.tanh(v)) + round_to_bfloat16(v) for v in x.astype(float)
    ]
    np.testing.assert_allclose(outputs[2], np.array(expected, np.float32), rtol=1e-6)
    assert model.signature["inputs"][1]["dtype"] == "bfloat16"


def test_round_to_bfloat16():
    assert round_to_bfloat16(1.0) == 1.0
    assert round_to_bfloat16(1 + 2**-8) == 1.0  # tie to even
    assert round_to_bfloat16(1 + 3 * 2**-8) == 1 + 2**-6
    assert np.isnan(round_to_bfloat16(float("nan")))


ARENA_MODEL = """
builtin.module {
  func.func @main_graph(%x: memref<4xf32>, %y: memref<4xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %a = memref.alloc() : memref<4xf32>
    %b = memref.alloc() : memref<100xf32>
    %v = memref.load %x[%c0] : memref<4xf32>
    memref.store %v, %a[%c0] : memref<4xf32>
    memref.store %v, %b[%c0] : memref<100xf32>
    %c = memref.alloc() : memref<4xf32>
    scf.for %i = %c0 to %c4 step %c1 {
      %w = memref.load %b[%c0] : memref<100xf32>
      memref.store %w, %c[%i] : memref<4xf32>
    }
    %d = memref.alloc() : memref<8xf64>
    %u = memref.load %c[%c1] : memref<4xf32>
    memref.store %u, %y[%c0] : memref<4xf32>
    func.return
  }
  "krnl.entry_point"() <{func = @main_graph, input_names = ["x"], output_names = ["y"]}> : () -> ()
}
"""


def test_arena_reuses_dead_buffers():
    module = parse(ARENA_MODEL)
    function = next(iter(module.ops))
    plan = plan_arena(function)
    offsets, size = plan.offsets, plan.size
    a, b, c, d = offsets.values()
    # %a dies at its store, so %c (allocated later) takes its place; %b (400 bytes,
    # used inside the loop, so live until the loop ends) overlaps both; %d is
    # allocated while %c is live but after %b's last use, so it takes %b's place.
    assert (a, b, c, d) == (0, 64, 0, 64)
    assert size == 64 + 448


VIEW_ARENA_MODEL = """
builtin.module {
  func.func @main_graph(%x: memref<4xf32>, %y: memref<4xf32>) {
    %c0 = arith.constant 0 : index
    %a = memref.alloc() : memref<2x4xf32>
    %first = krnl.view %a[0] : memref<2x4xf32> to memref<1x4xf32>
    %second = krnl.view %a[4] : memref<2x4xf32> to memref<1x4xf32>
    %inner = krnl.view %second[2] : memref<1x4xf32> to memref<2xf32>
    %v = memref.load %x[%c0] : memref<4xf32>
    memref.store %v, %first[%c0, %c0] : memref<1x4xf32>
    memref.store %v, %inner[%c0] : memref<2xf32>
    %b = memref.alloc() : memref<4xf32>
    memref.store %v, %b[%c0] : memref<4xf32>
    %u = memref.load %inner[%c0] : memref<2xf32>
    memref.store %u, %y[%c0] : memref<4xf32>
    func.return
  }
  "krnl.entry_point"() <{func = @main_graph, input_names = ["x"], output_names = ["y"]}> : () -> ()
}
"""


def test_arena_keeps_a_buffer_live_while_a_view_of_it_is_used():
    """%a has no use of its own after %b's alloc, but a view of a view of it is read later."""
    plan = plan_arena(next(iter(parse(VIEW_ARENA_MODEL).ops)))
    offsets, size = plan.offsets, plan.size
    assert list(offsets.values()) == [0, 64]
    assert size == 128


CHAIN_MODEL = """
builtin.module {
  func.func @main_graph(%x: memref<64x64xf32>, %y: memref<64x64xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant 64 : index
    %two = arith.constant 2.0 : f32
    %a = memref.alloc() : memref<64x64xf32>
    %b = memref.alloc() : memref<64x64xf32>
    scf.for %i = %c0 to %n step %c1 {
      scf.for %j = %c0 to %n step %c1 {
        %v = memref.load %x[%i, %j] : memref<64x64xf32>
        %s = arith.mulf %v, %two : f32
        memref.store %s, %a[%i, %j] : memref<64x64xf32>
      }
    }
    scf.for %i = %c0 to %n step %c1 {
      scf.for %j = %c0 to %n step %c1 {
        %v = memref.load %a[%j, %i] : memref<64x64xf32>
        %s = math.exp %v : f32
        memref.store %s, %b[%i, %j] : memref<64x64xf32>
      }
    }
    scf.for %i = %c0 to %n step %c1 {
      scf.for %j = %c0 to %n step %c1 {
        %v = memref.load %b[%i, %j] : memref<64x64xf32>
        %w = memref.load %x[%i, %j] : memref<64x64xf32>
        %s = arith.subf %v, %w : f32
        memref.store %s, %y[%i, %j] : memref<64x64xf32>
      }
    }
    func.return
  }
  "krnl.entry_point"() <{func = @main_graph, input_names = ["x"], output_names = ["y"]}> : () -> ()
}
"""


def test_arena_buffers_at_full_optimization(tmp_path):
    model = compile_model(parse(CHAIN_MODEL), tmp_path / "chain.so")
    x = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    (y,) = model.run(x)
    np.testing.assert_allclose(y, np.exp(2 * x.T) - x, rtol=1e-5)


def test_scalar_tensors(tmp_path):
    text = """
builtin.module {
  func.func @main_graph(%x: memref<f32>, %y: memref<f64>) {
    %v = memref.load %x[] : memref<f32>
    %w = arith.extf %v : f32 to f64
    memref.store %w, %y[] : memref<f64>
    func.return
  }
  "krnl.entry_point"() <{func = @main_graph, input_names = ["x"], output_names = ["y"]}> : () -> ()
}
"""
    model = compile_model(parse(text), tmp_path / "scalar.so")
    x, y = np.array(2.5, np.float32), np.zeros((), np.float64)
    no_shape, _ = make_tensor(x)
    no_shape.shape = None
    assert model.call([no_shape], [y]) == Status.ERR_NULL, "shape is never NULL (docs/abi.md)"
    assert model.call([x], [y]) == Status.OK
    assert y == 2.5
    assert model.signature["inputs"] == [{"name": "x", "dtype": "float32", "shape": []}]


def test_out_of_memory_is_reported(tmp_path):
    huge = """
builtin.module {
  func.func @main_graph(%x: memref<1xf32>, %y: memref<1xf32>) {
    %c0 = arith.constant 0 : index
    %big = memref.alloc() : memref<1099511627776xf32>
    %v = memref.load %x[%c0] : memref<1xf32>
    memref.store %v, %big[%c0] : memref<1099511627776xf32>
    %w = memref.load %big[%c0] : memref<1099511627776xf32>
    memref.store %w, %y[%c0] : memref<1xf32>
    func.return
  }
  "krnl.entry_point"() <{func = @main_graph, input_names = ["x"], output_names = ["y"]}> : () -> ()
}
"""
    # -O0 keeps the (dead at -O3) 4 TiB arena.
    model = compile_model(parse(huge), tmp_path / "huge.so", opt_level=0)
    x, y = np.ones(1, np.float32), np.zeros(1, np.float32)
    assert model.call([x], [y]) == Status.ERR_NOMEM


def test_elementwise_loops_vectorize():
    text = """
builtin.module {
  func.func @main_graph(%x: memref<1024xf32>, %y: memref<1024xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant 1024 : index
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %x[%i] : memref<1024xf32>
      %s = arith.mulf %v, %v : f32
      memref.store %s, %y[%i] : memref<1024xf32>
    }
    func.return
  }
  "krnl.entry_point"() <{func = @main_graph, input_names = ["x"], output_names = ["y"]}> : () -> ()
}
"""
    optimized = emit_llvm_ir(parse(text), "x86_64", opt_level=3)
    assert "x float>" in optimized


def test_deterministic_library(tmp_path):
    module = parse(FLOAT_MODEL, w=FLOAT_WEIGHT)
    first, second = tmp_path / "a.so", tmp_path / "b.so"
    emit_library(module, first)
    emit_library(module, second)
    assert first.read_bytes() == second.read_bytes()


def read_elf_header(data: bytes) -> tuple[str, int, int]:
    """(byte order, e_machine, e_flags) of an ELF64 file."""
    assert data[:4] == b"\x7fELF" and data[4] == 2
    order = "<" if data[5] == 1 else ">"
    machine = struct.unpack_from(order + "H", data, 18)[0]
    flags = struct.unpack_from(order + "I", data, 48)[0]
    return ("little" if order == "<" else "big"), machine, flags


@pytest.mark.parametrize(
    "spelling, byte_order, machine, flags",
    [("s390x", "big", 22, 0), ("ppc64le", "little", 21, 2), ("x86_64", "little", 62, 0)],
)
def test_cross_compile_and_link(tmp_path, spelling, byte_order, machine, flags):
    """Objects for every target link with zig (the first link per target takes ~25 s)."""
    module = parse(FLOAT_MODEL, w=FLOAT_WEIGHT)
    target = resolve_target(spelling)
    assert read_elf_header(emit_object(module, target)) == (byte_order, machine, flags)
    library = emit_library(module, tmp_path / f"m-{spelling}.so", target=target, model_name="cross")
    data = library.read_bytes()
    assert read_elf_header(data) == (byte_order, machine, flags)
    weights = FLOAT_WEIGHT.astype(FLOAT_WEIGHT.dtype.newbyteorder(target.numpy_byte_order))
    assert weights.tobytes() in data
    signature = f'"target": "{target.triple}", "byte_order": "{byte_order}"'
    assert signature.encode() in data


def test_target_spellings():
    assert resolve_target("s390x-ibm-linux").arch == "s390x"
    assert resolve_target("s390x").cpu == "z14"
    assert resolve_target("powerpc64le-unknown-linux-gnu").arch == "ppc64le"
    assert resolve_target("x86-64").arch == "x86_64"
    assert resolve_target(None) == resolve_target("host")
    portable = resolve_target("x86_64", cpu="x86-64-v3")
    assert (portable.cpu, portable.features) == ("x86-64-v3", "")
    assert resolve_target("arm64").arch == resolve_target("aarch64-linux-gnu").arch == "aarch64"
    assert resolve_target("riscv64-unknown-linux-gnu").triple == "riscv64-unknown-linux-gnu"
    assert resolve_target("wasm32-unknown-unknown").triple == "wasm32-unknown-wasi"
    for bad in ("arm", "aarch64-apple-darwin", "s390x-ibm-zos", "mips", "wasm64"):
        with pytest.raises(CompileError, match="accepted"):
            resolve_target(bad)


def test_unsupported_op_is_a_compile_error():
    text = """
builtin.module {
  func.func @main_graph(%x: memref<2xf32>, %y: memref<2xf32>) {
    %a = memref.alloca() : memref<2xf32>
    func.return
  }
  "krnl.entry_point"() <{func = @main_graph, input_names = ["x"], output_names = ["y"]}> : () -> ()
}
"""
    with pytest.raises(CompileError, match="memref.alloca"):
        emit_llvm_ir(parse(text))
