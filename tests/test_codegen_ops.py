"""Every arith/math op codegen supports: numbers on the host, objects for every target.

Each test module computes one output per op from the same inputs, in one loop.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import compile_model, parse

from onnxc.codegen import emit_object, resolve_target

N = 16

# op -> (IR computing %{p}r from %x, %y, %z of element type T, numpy reference on float64)
FLOAT_OPS = {
    "addf": ("%{p}r = arith.addf %x, %y : T", lambda x, y, z: x + y),
    "subf": ("%{p}r = arith.subf %x, %y : T", lambda x, y, z: x - y),
    "mulf": ("%{p}r = arith.mulf %x, %y fastmath<contract> : T", lambda x, y, z: x * y),
    "divf": ("%{p}r = arith.divf %x, %y : T", lambda x, y, z: x / y),
    "negf": ("%{p}r = arith.negf %x : T", lambda x, y, z: -x),
    "minimumf": ("%{p}r = arith.minimumf %x, %y : T", lambda x, y, z: np.minimum(x, y)),
    "maximumf": ("%{p}r = arith.maximumf %x, %y : T", lambda x, y, z: np.maximum(x, y)),
    "minnumf": ("%{p}r = arith.minnumf %x, %y : T", lambda x, y, z: np.fmin(x, y)),
    "maxnumf": ("%{p}r = arith.maxnumf %x, %y : T", lambda x, y, z: np.fmax(x, y)),
    "select": (
        "%{p}c = arith.cmpf olt, %x, %y : T\n%{p}r = arith.select %{p}c, %z, %x : T",
        lambda x, y, z: np.where(x < y, z, x),
    ),
    "sqrt": ("%{p}r = math.sqrt %x : T", lambda x, y, z: np.sqrt(x)),
    "rsqrt": ("%{p}r = math.rsqrt %x : T", lambda x, y, z: 1 / np.sqrt(x)),
    "exp": ("%{p}r = math.exp %x : T", lambda x, y, z: np.exp(x)),
    "exp2": ("%{p}r = math.exp2 %x : T", lambda x, y, z: np.exp2(x)),
    "expm1": ("%{p}r = math.expm1 %x : T", lambda x, y, z: np.expm1(x)),
    "log": ("%{p}r = math.log %x : T", lambda x, y, z: np.log(x)),
    "log2": ("%{p}r = math.log2 %x : T", lambda x, y, z: np.log2(x)),
    "log10": ("%{p}r = math.log10 %x : T", lambda x, y, z: np.log10(x)),
    "log1p": ("%{p}r = math.log1p %x : T", lambda x, y, z: np.log1p(x)),
    "absf": ("%{p}r = math.absf %z : T", lambda x, y, z: np.abs(z)),
    "floor": ("%{p}r = math.floor %z : T", lambda x, y, z: np.floor(z)),
    "ceil": ("%{p}r = math.ceil %z : T", lambda x, y, z: np.ceil(z)),
    "trunc": ("%{p}r = math.trunc %z : T", lambda x, y, z: np.trunc(z)),
    "round": ("%{p}r = math.round %z : T", lambda x, y, z: np.sign(z) * np.floor(np.abs(z) + 0.5)),
    "roundeven": ("%{p}r = math.roundeven %z : T", lambda x, y, z: np.round(z)),
    "sin": ("%{p}r = math.sin %z : T", lambda x, y, z: np.sin(z)),
    "cos": ("%{p}r = math.cos %z : T", lambda x, y, z: np.cos(z)),
    "tan": ("%{p}r = math.tan %x : T", lambda x, y, z: np.tan(x)),
    "tanh": ("%{p}r = math.tanh %z : T", lambda x, y, z: np.tanh(z)),
    "erf": ("%{p}r = math.erf %z : T", lambda x, y, z: np.vectorize(math.erf)(z)),
    "atan": ("%{p}r = math.atan %z : T", lambda x, y, z: np.arctan(z)),
    "asin": ("%{p}r = math.asin %x : T", lambda x, y, z: np.arcsin(x)),
    "acos": ("%{p}r = math.acos %x : T", lambda x, y, z: np.arccos(x)),
    "sinh": ("%{p}r = math.sinh %z : T", lambda x, y, z: np.sinh(z)),
    "cosh": ("%{p}r = math.cosh %z : T", lambda x, y, z: np.cosh(z)),
    "asinh": ("%{p}r = math.asinh %z : T", lambda x, y, z: np.arcsinh(z)),
    "acosh": ("%{p}r = math.acosh %y : T", lambda x, y, z: np.arccosh(y)),
    "atanh": ("%{p}r = math.atanh %x : T", lambda x, y, z: np.arctanh(x)),
    "cbrt": ("%{p}r = math.cbrt %z : T", lambda x, y, z: np.cbrt(z)),
    "powf": ("%{p}r = math.powf %x, %y : T", lambda x, y, z: x**y),
    "atan2": ("%{p}r = math.atan2 %z, %y : T", lambda x, y, z: np.arctan2(z, y)),
    "copysign": ("%{p}r = math.copysign %y, %z : T", lambda x, y, z: np.copysign(y, z)),
    "fma": ("%{p}r = math.fma %x, %y, %z : T", lambda x, y, z: x * y + z),
    "fpowi": (
        "%{p}three = arith.constant 3 : i32\n%{p}r = math.fpowi %z, %{p}three : T, i32",
        lambda x, y, z: z**3,
    ),
}

# op -> (IR computing %{p}r from %a, %b of type i32, numpy reference on int64 inputs)
INT_OPS = {
    "addi": ("%{p}r = arith.addi %a, %b : i32", lambda a, b: a + b),
    "subi": ("%{p}r = arith.subi %a, %b : i32", lambda a, b: a - b),
    "muli": ("%{p}r = arith.muli %a, %b : i32", lambda a, b: a * b),
    "divsi": ("%{p}r = arith.divsi %a, %b : i32", lambda a, b: np.fix(a / b)),
    "remsi": ("%{p}r = arith.remsi %a, %b : i32", lambda a, b: np.fmod(a, b)),
    "divui": ("%{p}r = arith.divui %a, %b : i32", lambda a, b: (a % 2**32) // b),
    "remui": ("%{p}r = arith.remui %a, %b : i32", lambda a, b: (a % 2**32) % b),
    "floordivsi": ("%{p}r = arith.floordivsi %a, %n : i32", lambda a, b: a // -b),
    "ceildivsi": ("%{p}r = arith.ceildivsi %a, %b : i32", lambda a, b: -(-a // b)),
    "ceildivui": ("%{p}r = arith.ceildivui %a, %b : i32", lambda a, b: -(-(a % 2**32) // b)),
    "andi": ("%{p}r = arith.andi %a, %b : i32", lambda a, b: a & b),
    "ori": ("%{p}r = arith.ori %a, %b : i32", lambda a, b: a | b),
    "xori": ("%{p}r = arith.xori %a, %b : i32", lambda a, b: a ^ b),
    "shli": ("%{p}r = arith.shli %a, %b : i32", lambda a, b: a << b),
    "shrsi": ("%{p}r = arith.shrsi %a, %b : i32", lambda a, b: a >> b),
    "shrui": ("%{p}r = arith.shrui %a, %b : i32", lambda a, b: (a % 2**32) >> b),
    "minsi": ("%{p}r = arith.minsi %a, %b : i32", np.minimum),
    "maxsi": ("%{p}r = arith.maxsi %a, %n : i32", lambda a, b: np.maximum(a, -b)),
    "minui": ("%{p}r = arith.minui %a, %b : i32", lambda a, b: np.minimum(a % 2**32, b)),
    "maxui": ("%{p}r = arith.maxui %a, %b : i32", lambda a, b: np.maximum(a % 2**32, b)),
    "absi": ("%{p}r = math.absi %a : i32", lambda a, b: np.abs(a)),
    "ctpop": ("%{p}r = math.ctpop %a : i32", lambda a, b: [bin(v % 2**32).count("1") for v in a]),
    "ctlz": ("%{p}r = math.ctlz %b : i32", lambda a, b: [32 - int(v).bit_length() for v in b]),
    "cttz": (
        "%{p}r = math.cttz %b : i32",
        lambda a, b: [(int(v) & -int(v)).bit_length() - 1 for v in b],  # lowest set bit
    ),
    "fptosi": (
        "%{p}f = arith.sitofp %a : i32 to f64\n%{p}h = arith.divf %{p}f, %two : f64\n"
        "%{p}r = arith.fptosi %{p}h : f64 to i32",
        lambda a, b: np.fix(a / 2),
    ),
    "index_cast": (
        "%{p}w = arith.index_cast %a : i32 to index\n%{p}s = arith.addi %{p}w, %{p}w : index\n"
        "%{p}r = arith.index_cast %{p}s : index to i32",
        lambda a, b: 2 * a,
    ),
}
CMPI = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
CMPF = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
        "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true"]  # fmt: skip


def _module(inputs: dict[str, str], outputs: dict[str, tuple[str, str]], prologue: str = "") -> str:
    """One loop over N elements: load every input, compute and store every output.

    An output's IR computes `%{p}r`; `{p}` makes its temporaries unique.
    """
    args = [f"%in_{n}: memref<{N}x{t}>" for n, t in inputs.items()]
    args += [f"%out_{n}: memref<{N}x{t}>" for n, (t, _) in outputs.items()]
    body = [f"%{n} = memref.load %in_{n}[%i] : memref<{N}x{t}>" for n, t in inputs.items()]
    for name, (t, ir) in outputs.items():
        body += ir.format(p=f"{name}_").split("\n")
        body.append(f"memref.store %{name}_r, %out_{name}[%i] : memref<{N}x{t}>")
    body_text = "\n      ".join(body)
    input_names = ", ".join(f'"{n}"' for n in inputs)
    output_names = ", ".join(f'"{n}"' for n in outputs)
    return f"""
builtin.module {{
  func.func @main_graph({", ".join(args)}) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %cn = arith.constant {N} : index
    {prologue}
    scf.for %i = %c0 to %cn step %c1 {{
      {body_text}
    }}
    func.return
  }}
  "krnl.entry_point"() <{{func = @main_graph, input_names = [{input_names}],
                          output_names = [{output_names}]}}> : () -> ()
}}
"""


def float_module(element: str) -> str:
    outputs = {
        name: (element, ir.replace(": T", f": {element}")) for name, (ir, _) in FLOAT_OPS.items()
    }
    return _module({"x": element, "y": element, "z": element}, outputs)


def int_module() -> str:
    outputs = {name: ("i32", ir) for name, (ir, _) in INT_OPS.items()}
    outputs |= {f"cmpi_{p}": ("i1", f"%{{p}}r = arith.cmpi {p}, %a, %b : i32") for p in CMPI}
    outputs |= {f"cmpf_{p}": ("i1", f"%{{p}}r = arith.cmpf {p}, %f, %g : f32") for p in CMPF}
    prologue = "%zero = arith.constant 0 : i32\n    %two = arith.constant 2.0 : f64"
    module = _module({"a": "i32", "b": "i32", "f": "f32", "g": "f32"}, outputs, prologue)
    # %n = -b, used by the ops that want a negative divisor
    return module.replace("%b = memref.load %in_b[%i] : memref<16xi32>",
                          "%b = memref.load %in_b[%i] : memref<16xi32>\n"
                          "      %n = arith.subi %zero, %b : i32")  # fmt: skip


def float_inputs(dtype) -> tuple[np.ndarray, ...]:
    x = np.linspace(0.05, 0.95, N).astype(dtype)  # in (0, 1)
    y = np.linspace(1.1, 4.0, N).astype(dtype)  # > 1
    z = np.linspace(-3.7, 3.7, N).astype(dtype)  # both signs, halves included
    z[3], z[4] = -2.5, 2.5
    return x, y, z


@pytest.mark.parametrize(
    "element, dtype, rtol", [("f32", np.float32, 2e-6), ("f64", np.float64, 1e-13)]
)
def test_float_ops(tmp_path, element, dtype, rtol):
    model = compile_model(parse(float_module(element)), tmp_path / f"{element}.so")
    x, y, z = float_inputs(dtype)
    results = model.run(x, y, z)
    assert len(results) == len(FLOAT_OPS)
    for (name, (_, reference)), got in zip(FLOAT_OPS.items(), results):
        want = reference(*(v.astype(np.float64) for v in (x, y, z)))
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, err_msg=name)


def test_int_ops_and_compares(tmp_path):
    model = compile_model(parse(int_module()), tmp_path / "int.so")
    a = [-(2**31), -1000, -7, -6, -5, -1, 0, 1, 2, 5, 6, 7, 99, 1000, 123456, 2**31 - 1]
    a = np.array(a, np.int32)
    b = np.array([3, 1, 2, 3, 4, 5, 6, 7, 1, 2, 3, 4, 5, 6, 7, 31], np.int32)
    f = np.array([np.nan, 1, 2, 3, -1, 0, np.inf, -np.inf] * 2, np.float32)
    g = np.array([1, np.nan, 2, 1, -1, -0.0, np.inf, 5] * 2, np.float32)
    names = list(INT_OPS) + [f"cmpi_{p}" for p in CMPI] + [f"cmpf_{p}" for p in CMPF]
    results = dict(zip(names, model.run(a, b, f, g), strict=True))
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    skip_min = a != -2**31  # INT_MIN overflows abs, divisions by -1, ...
    for name, (_, reference) in INT_OPS.items():
        want = (np.asarray(reference(a64, b64), np.int64) + 2**31) % 2**32 - 2**31
        np.testing.assert_array_equal(results[name][skip_min], want[skip_min], err_msg=name)
    ua, ub = a.view(np.uint32), b.view(np.uint32)
    signed = {"eq": a == b, "ne": a != b, "slt": a < b, "sle": a <= b, "sgt": a > b, "sge": a >= b,
              "ult": ua < ub, "ule": ua <= ub, "ugt": ua > ub, "uge": ua >= ub}  # fmt: skip
    for predicate, want in signed.items():
        np.testing.assert_array_equal(results[f"cmpi_{predicate}"], want, err_msg=predicate)
    unordered = np.isnan(f) | np.isnan(g)
    with np.errstate(invalid="ignore"):
        ordered = {"eq": f == g, "gt": f > g, "ge": f >= g, "lt": f < g, "le": f <= g, "ne": f != g}
    for predicate, want in ordered.items():
        o_name = "one" if predicate == "ne" else "o" + predicate
        np.testing.assert_array_equal(results[f"cmpf_{o_name}"], want & ~unordered, err_msg=o_name)
        np.testing.assert_array_equal(results[f"cmpf_u{predicate}"], want | unordered)
    np.testing.assert_array_equal(results["cmpf_ord"], ~unordered)
    np.testing.assert_array_equal(results["cmpf_uno"], unordered)
    assert not results["cmpf_false"].any() and results["cmpf_true"].all()


@pytest.mark.parametrize("spelling", ["x86_64", "ppc64le", "s390x"])
@pytest.mark.parametrize("element", ["f16", "bf16", "f32", "f64"])
def test_every_float_op_compiles_for_every_target(spelling, element):
    emit_object(parse(float_module(element)), resolve_target(spelling))


@pytest.mark.parametrize("spelling", ["ppc64le", "s390x"])
def test_int_ops_compile_for_foreign_targets(spelling):
    emit_object(parse(int_module()), resolve_target(spelling))
