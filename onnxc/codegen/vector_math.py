"""Float32 exp, log, tanh and erf as LLVM IR that the loop vectorizer can vectorize.

libm calls (`expf`, ...) are opaque to LLVM's loop vectorizer, so a Softmax or
Tanh loop calling them stays scalar (a vector library option had no effect
with llvmlite). Each function here is an internal `alwaysinline` function whose
body is straight-line code: arithmetic, `fma`, bit casts, integer shifts,
`select` and intrinsics LLVM vectorizes (fabs, copysign, minnum, maxnum). Not
roundeven: where it stays scalar, LLVM may call `roundevenf`, which glibc
before 2.25 (our ppc64le baseline is 2.19) lacks. Once inlined into a loop it vectorizes like any other arithmetic.

Accuracy is a few ulp against correctly rounded results over the whole float
range (tests/test_vector_math.py), with IEEE behaviour at the edges: NaN in,
NaN out; exp overflows to +inf and underflows through the subnormals to 0; log
of a subnormal is exact-exponent, log(0) = -inf, log(x < 0) = NaN; tanh and
erf saturate to ±1 and keep the sign of zero.

The polynomial coefficients come from Chebyshev interpolation in float64 at
import time (near-minimax, see `_fitted`), so their provenance is this file.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from llvmlite import ir

from onnxc.codegen.llvm_types import F32, I32

# ------------------------------------------------------------------ coefficients


def _fitted(
    function: Callable[[np.ndarray], np.ndarray], low: float, high: float, degree: int, *, normalized: bool
) -> list[float]:
    """Power-series coefficients (constant first) of `function` interpolated at Chebyshev points of [low, high].

    With `normalized`, the series is in t = (2x - low - high) / (high - low) ∈ [-1, 1]
    (well conditioned for intervals away from 0); otherwise in x itself.
    """
    series = np.polynomial.Chebyshev.interpolate(function, degree, domain=[low, high])
    if normalized:
        return [float(np.float32(c)) for c in series.convert(kind=np.polynomial.Polynomial, domain=[low, high]).coef]
    return [float(np.float32(c)) for c in series.convert(kind=np.polynomial.Polynomial).coef]


_erf = np.vectorize(math.erf)
_erfc = np.vectorize(math.erfc)

# exp(r) on |r| <= ln2/2: degree 6, interpolation error about 2e-9 relative.
_EXP_POLYNOMIAL = _fitted(np.exp, -math.log(2) / 2, math.log(2) / 2, 6, normalized=False)
# log: 2 atanh(s) = 2s (1 + s²/3 + s⁴/5 + ...) with s² <= 0.0295 (truncation < 3e-9 relative).
_ATANH_ODD = [1 / 3, 1 / 5, 1 / 7, 1 / 9]
# tanh(a) = a + a z P(z), z = a² <= 0.625², for the small arguments where 1 - 2/(e^2a + 1) cancels.
_TANH_SMALL_LIMIT = 0.625
_TANH_SMALL = _fitted(
    lambda z: (np.tanh(np.sqrt(z)) / np.sqrt(z) - 1) / z, 1e-6, _TANH_SMALL_LIMIT**2, 6, normalized=False
)
# erf(a) = a P(a²) for a < 0.9; above, erf(a) = 1 - exp(L(a)) with L ≈ log erfc(a) up to where erf rounds to 1.
# Degrees 5 and 8 (interpolation error below 4e-9 absolute): at most 2 ulp over the sweeps.
_ERF_SMALL_LIMIT = 0.9
_ERF_ONE = 3.93
_ERF_SMALL = _fitted(lambda z: _erf(np.sqrt(z)) / np.sqrt(z), 1e-8, _ERF_SMALL_LIMIT**2, 5, normalized=False)
_ERF_LOG_ERFC = _fitted(lambda a: np.log(_erfc(a)), _ERF_SMALL_LIMIT, _ERF_ONE, 8, normalized=True)

# ln 2 split so that k * LN2_HI is exact for |k| < 2^9 (Cody and Waite).
_LN2_HI = 0.693145751953125
_LN2_LO = float(np.float32(math.log(2) - _LN2_HI))
_SQRT_HALF_BITS = 0x3F3504F3  # bits of float32 sqrt(1/2)
# Adding then subtracting 1.5 * 2^23 rounds a float of magnitude below 2^22 to an integer (ties to even).
_ROUNDING_SHIFTER = 1.5 * 2**23


# ------------------------------------------------------------------ the builder


class _Emitter:
    """Terse float32 arithmetic on an IRBuilder, for writing the algorithms below, on floats or
    on vectors of floats (`lanes`: constants are splats, intrinsics the vector overloads). No
    fast-math flags anywhere: the rounding trick of `_exp` relies on strict IEEE evaluation."""

    def __init__(self, builder: ir.IRBuilder, ldexp: bool, lanes: int | None = None):
        self.b = builder
        self.ldexp = ldexp
        self.lanes = lanes
        self.float = F32 if lanes is None else ir.VectorType(F32, lanes)
        self.int = I32 if lanes is None else ir.VectorType(I32, lanes)
        self.suffix = "f32" if lanes is None else f"v{lanes}f32"

    def _constant(self, type_: ir.Type, value: float | int) -> ir.Constant:
        return ir.Constant(type_, value if self.lanes is None else [value] * self.lanes)

    def c(self, value: float) -> ir.Constant:
        return self._constant(self.float, float(np.float32(value)))

    def i(self, value: int) -> ir.Constant:
        return self._constant(self.int, value)

    def intrinsic(self, name: str, *args: ir.Value) -> ir.Value:
        module = self.b.module
        full = f"llvm.{name}.{self.suffix}"
        function = module.globals.get(full) or ir.Function(
            module, ir.FunctionType(self.float, [self.float] * len(args)), full
        )
        return self.b.call(function, args)

    def call_ldexp(self, x: ir.Value, k: ir.Value) -> ir.Value:
        """x * 2^k rounded once (llvm.ldexp: one vscalefps on AVX-512, a libm call elsewhere)."""
        module = self.b.module
        full = f"llvm.ldexp.{self.suffix}.{'i32' if self.lanes is None else f'v{self.lanes}i32'}"
        function = module.globals.get(full) or ir.Function(
            module, ir.FunctionType(self.float, [self.float, self.int]), full
        )
        return self.b.call(function, [x, k])

    def fma(self, a: ir.Value, b: ir.Value, c: ir.Value) -> ir.Value:
        return self.intrinsic("fma", a, b, c)

    def horner(self, x: ir.Value, coefficients: list[float]) -> ir.Value:
        """sum(c_k x^k) by Horner's rule with fused multiply-adds."""
        result = self.c(coefficients[-1])
        for coefficient in reversed(coefficients[:-1]):
            result = self.fma(result, x, self.c(coefficient))
        return result

    def is_nan(self, x: ir.Value) -> ir.Value:
        return self.b.fcmp_unordered("uno", x, x)

    def pow2(self, k: ir.Value) -> ir.Value:
        """2^k as a float, for integer k in [-126, 127]."""
        return self.b.bitcast(self.b.shl(self.b.add(k, self.i(127)), self.i(23)), self.float)


def _exp(e: _Emitter, x: ir.Value) -> ir.Value:
    """e^x = 2^k e^r with k = round(x / ln2), |r| <= ln2 / 2.

    With `e.ldexp` (AVX-512's vscalefps) 2^k is applied by ldexp, which rounds a subnormal once;
    elsewhere in two halves built from exponent bits, so that subnormals round once too."""
    b = e.b
    clamped = e.intrinsic("minnum", e.intrinsic("maxnum", x, e.c(-104.0)), e.c(89.0))
    shifted = e.fma(clamped, e.c(1 / math.log(2)), e.c(_ROUNDING_SHIFTER))
    n = b.fsub(shifted, e.c(_ROUNDING_SHIFTER))
    r = e.fma(n, e.c(-_LN2_HI), clamped)
    r = e.fma(n, e.c(-_LN2_LO), r)
    p = e.horner(r, _EXP_POLYNOMIAL)
    k = b.fptosi(n, e.int)  # in [-150, 129]
    if e.ldexp:
        value = e.call_ldexp(p, k)
    else:
        half = b.ashr(k, e.i(1))
        value = b.fmul(b.fmul(p, e.pow2(half)), e.pow2(b.sub(k, half)))
    return b.select(e.is_nan(x), b.fadd(x, x), value)


def _log(e: _Emitter, x: ir.Value) -> ir.Value:
    """log x = k ln2 + log(1 + f), 1 + f in [sqrt(1/2), sqrt 2), log(1 + f) = f - s (f - 2 R), s = f / (2 + f)."""
    b = e.b
    subnormal = b.fcmp_ordered("<", x, e.c(2.0**-126))
    scaled = b.select(subnormal, b.fmul(x, e.c(2.0**23)), x)
    offset = b.sub(b.bitcast(scaled, e.int), e.i(_SQRT_HALF_BITS))
    k = b.add(b.ashr(offset, e.i(23)), b.select(subnormal, e.i(-23), e.i(0)))
    m = b.bitcast(b.add(b.and_(offset, e.i(0x7FFFFF)), e.i(_SQRT_HALF_BITS)), e.float)
    f = b.fsub(m, e.c(1.0))
    s = b.fdiv(f, b.fadd(f, e.c(2.0)))
    z = b.fmul(s, s)
    r = b.fmul(z, e.horner(z, _ATANH_ODD))
    log1p = b.fsub(f, b.fmul(s, e.fma(e.c(-2.0), r, f)))
    kf = b.sitofp(k, e.float)
    value = b.fadd(e.fma(kf, e.c(_LN2_LO), log1p), b.fmul(kf, e.c(_LN2_HI)))
    value = b.select(b.fcmp_ordered("==", x, e.c(math.inf)), x, value)
    value = b.select(b.fcmp_ordered("==", x, e.c(0.0)), e.c(-math.inf), value)
    value = b.select(b.fcmp_ordered("<", x, e.c(0.0)), e.c(math.nan), value)
    return b.select(e.is_nan(x), b.fadd(x, x), value)


def _tanh(e: _Emitter, x: ir.Value) -> ir.Value:
    """tanh |x| = 1 - 2 / (e^2|x| + 1), or a polynomial below 0.625; the sign copied from x."""
    b = e.b
    a = e.intrinsic("fabs", x)
    exponential = _exp(e, e.intrinsic("minnum", b.fadd(a, a), e.c(40.0)))
    large = b.fsub(e.c(1.0), b.fdiv(e.c(2.0), b.fadd(exponential, e.c(1.0))))
    z = b.fmul(a, a)
    small = e.fma(b.fmul(a, z), e.horner(z, _TANH_SMALL), a)
    value = e.intrinsic("copysign", b.select(b.fcmp_ordered("<", a, e.c(_TANH_SMALL_LIMIT)), small, large), x)
    return b.select(e.is_nan(x), b.fadd(x, x), value)


def _erf(e: _Emitter, x: ir.Value) -> ir.Value:
    """erf x = x P(x²) for |x| < 0.9, else ±(1 - exp(L(|x|))) with L ≈ log erfc, saturating at 3.93."""
    b = e.b
    a = e.intrinsic("fabs", x)
    small = b.fmul(x, e.horner(b.fmul(x, x), _ERF_SMALL))
    clamped = e.intrinsic("minnum", a, e.c(_ERF_ONE))
    low, high = _ERF_SMALL_LIMIT, _ERF_ONE
    t = e.fma(clamped, e.c(2 / (high - low)), e.c(-(high + low) / (high - low)))
    large = e.intrinsic("copysign", b.fsub(e.c(1.0), _exp(e, e.horner(t, _ERF_LOG_ERFC))), x)
    value = b.select(b.fcmp_ordered("<", a, e.c(_ERF_SMALL_LIMIT)), small, large)
    return b.select(e.is_nan(x), b.fadd(x, x), value)


_ALGORITHMS: dict[str, Callable[[_Emitter, ir.Value], ir.Value]] = {
    "exp": _exp,
    "log": _log,
    "tanh": _tanh,
    "erf": _erf,
}
FUNCTIONS = tuple(_ALGORITHMS)


def _hard_swish(e: _Emitter, x: ir.Value) -> ir.Value:
    """x * min(max(x / 6 + 1/2, 0), 1), rounded as the element-wise HardSwish rounds it."""
    b = e.b
    linear = b.fadd(b.fmul(e.c(1 / 6), x), e.c(0.5))
    return b.fmul(x, e.intrinsic("maxnum", e.c(0.0), e.intrinsic("minnum", e.c(1.0), linear)))


def _silu(e: _Emitter, x: ir.Value) -> ir.Value:
    """x * sigmoid(x), sigmoid(x) = 1 / (1 + e^-x) as the element-wise Sigmoid computes it."""
    b = e.b
    return b.fmul(x, b.fdiv(e.c(1.0), b.fadd(e.c(1.0), _exp(e, b.fneg(x)))))


def _gelu(e: _Emitter, x: ir.Value) -> ir.Value:
    """(x / 2) * (1 + erf(x * (1 / sqrt 2))), rounded as the element-wise Gelu rounds it."""
    b = e.b
    return b.fmul(b.fmul(e.c(0.5), x), b.fadd(e.c(1.0), _erf(e, b.fmul(x, e.c(1 / math.sqrt(2))))))


_ACTIVATIONS: dict[str, Callable[[_Emitter, ir.Value], ir.Value]] = {
    "hard_swish": _hard_swish,
    "silu": _silu,
    "gelu": _gelu,
}
"""A GEMM epilogue's activations, by their krnl.matmul names (MatmulActivation)."""


def activation(builder: ir.IRBuilder, name: str, x: ir.Value, *, vector_ldexp: bool) -> ir.Value:
    """The activation `name` of x (a vector of float32), written inline at the builder."""
    return _ACTIVATIONS[name](_Emitter(builder, vector_ldexp, x.type.count), x)


def float32_function(module: ir.Module, name: str, *, vector_ldexp: bool) -> ir.Function:
    """The module's `float onnxc.<name>f(float)` (one of FUNCTIONS), defined on first use;
    `vector_ldexp` where the target's vectorized llvm.ldexp is one instruction
    (`Target.has_vector_ldexp`)."""
    symbol = f"onnxc.{name}f"
    existing = module.globals.get(symbol)
    if existing is not None:
        return existing
    function = ir.Function(module, ir.FunctionType(F32, [F32]), symbol)
    function.linkage = "internal"
    function.attributes.add("alwaysinline")
    function.attributes.add("nounwind")
    builder = ir.IRBuilder(function.append_basic_block("entry"))
    builder.ret(_ALGORITHMS[name](_Emitter(builder, vector_ldexp), function.args[0]))
    return function
