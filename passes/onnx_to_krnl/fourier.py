"""DFT and STFT as direct O(n^2) sums: each output bin sums its samples times
twiddle factors read from a constant table of cos and sin of 2*pi*j/N (the
bin-sample product k*n taken mod N), so no sin or cos is evaluated at run
time. Twiddles and sums are f64 whatever the element type: the reference is
numpy's double-precision FFT, and in f32 the near-zero bins of a round trip
(an inverse of a forward transform) come out 1e-6 off. Complex values are the last dim of size 2 (real, imaginary); a real
signal has a last dim of 1. A length known at run time only gets its tables
filled at run time (cos and sin of each j once), and a last dim known at run
time only is read as complex where it is 2."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import math
from xdsl.dialects.builtin import f64
from xdsl.ir import Attribute, SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.helpers.run_time_dims import alloc_shaped
from onnxc.passes.onnx_to_krnl.common import (
    GraphLowering,
    constant_array,
    constant_buffer,
    dims_agree,
    lowers,
    normalized_axis,
    shape_of,
    shape_text,
)

Sample = Callable[[KernelBuilder, Bound], tuple[SSAValue, SSAValue | None]]
"""(builder, sample position) -> (real part, imaginary part or None for a real signal)."""


@dataclass
class Twiddles:
    """cos and sin of 2*pi*j/N for j in [0, N), as constant tables (filled at run
    time for an N known then only)."""

    length: Bound
    cos: SSAValue
    sin: SSAValue

    @staticmethod
    def build(g: GraphLowering, length: Bound, element: Attribute) -> Twiddles:
        if isinstance(length, int):
            angles = 2 * np.pi * np.arange(length) / length
            return Twiddles(
                length, constant_buffer(g.top, np.cos(angles), element), constant_buffer(g.top, np.sin(angles), element)
            )
        cos, sin = alloc_shaped(g.top, element, [length]), alloc_shaped(g.top, element, [length])
        total = g.top.number(length, element)
        (j,), b = g.top.loop_nest([length])
        angle = b.div(b.mul(b.constant(2 * np.pi, element), b.number(j, element)), total)  # as numpy: 2*pi*j / N
        b.store(b.math(math.CosOp, angle), cos, [j])
        b.store(b.math(math.SinOp, angle), sin, [j])
        return Twiddles(length, cos, sin)

    def at(self, b: KernelBuilder, k: Bound, n: Bound) -> tuple[SSAValue, SSAValue]:
        """cos and sin of 2*pi*k*n/N."""
        j = b.rem(b.mul(k, n), self.length)
        return b.load(self.cos, [j]), b.load(self.sin, [j])


def fourier_sum(
    b: KernelBuilder,
    twiddles: Twiddles,
    k: Bound,
    count: Bound,
    sample: Sample,
    *,
    inverse: bool,
    parts: Sequence[str] = ("real", "imaginary"),
    weight: Callable[[KernelBuilder, Bound], SSAValue] | None = None,
) -> list[SSAValue]:
    """sum over n < count of weight(n) * sample(n) * exp(-+ 2*pi*i*k*n/N) (+ for
    `inverse`), the requested parts (one reduction each)."""
    sign = 1.0 if inverse else -1.0

    def term(part: str) -> Callable[[KernelBuilder, list[Bound], SSAValue], SSAValue]:
        def step(inner: KernelBuilder, ivs: list[Bound], acc: SSAValue) -> SSAValue:
            (n,) = ivs
            real, imaginary = sample(inner, n)
            cos, sin = twiddles.at(inner, k, n)
            # (re + i im)(cos + i sign sin)
            if part == "real":
                value = inner.mul(real, cos)
                if imaginary is not None:
                    value = inner.sub(value, inner.mul(inner.mul(imaginary, sin), inner.constant(sign, sin.type)))
            else:
                value = inner.mul(inner.mul(real, sin), inner.constant(sign, sin.type))
                if imaginary is not None:
                    value = inner.add(value, inner.mul(imaginary, cos))
            if weight is not None:
                value = inner.mul(weight(inner, n), value)
            return inner.add(acc, value)

        return step

    zero = b.constant(0.0, twiddles.cos.type.get_element_type())
    return [b.reduce([(0, count)], zero, term(part)) for part in parts]


def _constant_int(g: GraphLowering, op: OnnxOp, index: int, name: str) -> int | None:
    """A scalar integer input that must be constant; None where it is absent."""
    value = op.input(index)
    if value is None:
        return None
    array = constant_array(value)
    if array is None or array.size != 1:
        raise g.unsupported(op, f"{op.OP_TYPE} {name} computed at run time")
    return int(array.reshape(-1)[0])


def _complex_sample(b: KernelBuilder, x: SSAValue, index: list[Bound], compute: Attribute) -> tuple:
    """The (real, imaginary or None) value of x at `index` (its last dim left out);
    a last dim known at run time only has an imaginary part where it is 2."""
    components = shape_of(x)[-1]
    real = b.convert(b.load(x, [*index, 0]), compute)
    if components == 1:
        return real, None
    if isinstance(components, int):
        return real, b.convert(b.load(x, [*index, 1]), compute)
    last = b.sub(components, 1)  # 0 for a real signal: then read the real part again, and drop it
    imaginary = b.convert(b.load(x, [*index, last]), compute)
    return real, b.select(b.compare_index("sgt", last, 0), imaginary, b.constant(0.0, compute))


@lowers("DFT", run_time_dims=True)
def lower_dft(g: GraphLowering, op: OnnxOp) -> None:
    x, out = g.input(op, 0), g.result(op)
    element = g.same_element_type(op, [op.input(0), op.results[0]], ints=False)
    compute = f64
    in_shape, out_shape = shape_of(x), shape_of(out)
    rank = len(in_shape)
    if g.version(op) >= 20:
        axis = _constant_int(g, op, 2, "axis")
        axis = -2 if axis is None else axis
    else:
        axis = op.attr("axis")
    axis = normalized_axis(g, op, axis, rank)
    if axis == rank - 1 or in_shape[-1] not in (1, 2) and isinstance(in_shape[-1], int):
        raise g.shape_error(op, f"axis {axis} of input {shape_text(in_shape)} (last dim: 1 real or 2 complex)")
    inverse, onesided = bool(op.attr("inverse")), bool(op.attr("onesided"))
    top = g.top
    length = _constant_int(g, op, 1, "dft_length")
    if length is None:
        length = top.mul(2, top.sub(in_shape[axis], 1)) if inverse and onesided else in_shape[axis]
    half = top.add(top.div(length, 2), 1)
    expected = list(in_shape)
    expected[axis] = half if onesided and not inverse else length
    expected[-1] = 1 if inverse and onesided else 2
    if not dims_agree(out_shape, expected) or isinstance(length, int) and length < 1:
        raise g.shape_error(op, f"dft_length {length}: output {shape_text(out_shape)}, expected {shape_text(expected)}")
    twiddles = Twiddles.build(g, length, compute)
    # Samples summed: the bins of a onesided inverse given, else up to the length.
    count = top.min(in_shape[axis], half if inverse and onesided else length)
    if inverse and onesided and isinstance(count, int) and isinstance(length, int):
        doubled = [1.0 if k == 0 or 2 * k == length else 2.0 for k in range(count)]
        weights = constant_buffer(g.top, np.array(doubled) / length, compute)

    ivs, b = g.top.loop_nest(out_shape[:-1])
    frequency = ivs[axis]

    def sample(inner: KernelBuilder, n: Bound) -> tuple:
        index = list(ivs)
        index[axis] = n
        return _complex_sample(inner, x, index, compute)

    if inverse and onesided:
        # A real signal from the first N/2+1 bins of a Hermitian spectrum: the
        # bins other than 0 and N/2 stand for their conjugate mirror too.

        def weight(inner: KernelBuilder, k: Bound) -> SSAValue:
            if isinstance(count, int) and isinstance(length, int):
                return inner.load(weights, [k])
            return _hermitian_weight(inner, k, length, compute)

        (real,) = fourier_sum(b, twiddles, frequency, count, sample, inverse=True, parts=("real",), weight=weight)
        b.store(b.convert(real, element), out, [*ivs, 0])
        return
    parts = fourier_sum(b, twiddles, frequency, count, sample, inverse=inverse)
    for component, value in enumerate(parts):
        if inverse:
            value = b.div(value, b.number(length, compute))
        b.store(b.convert(value, element), out, [*ivs, component])


def _hermitian_weight(b: KernelBuilder, k: Bound, length: Bound, compute: Attribute) -> SSAValue:
    """1/N for bins 0 and N/2, 2/N for the others (they stand for their mirror too)."""
    single = b.or_(b.compare_index("eq", k, 0), b.compare_index("eq", b.mul(k, 2), length))
    count = b.select(single, b.constant(1.0, compute), b.constant(2.0, compute))
    return b.div(count, b.number(length, compute))


@lowers("STFT", run_time_dims=True)
def lower_stft(g: GraphLowering, op: OnnxOp) -> None:
    """Frames of the signal, each times the window, through a DFT of frame_length.
    A frame count of run-time dims is the result's (shape inference floors it;
    the DFT's length may be the window's run-time length)."""
    x, out = g.input(op, 0), g.result(op)
    element = g.same_element_type(op, [op.input(0), op.results[0]], ints=False)
    compute = f64
    window = g.input(op, 2)
    step = _constant_int(g, op, 1, "frame_step")
    frame_length = _constant_int(g, op, 3, "frame_length")
    (batch, signal_length, components), out_shape = shape_of(x), shape_of(out)
    window_length = shape_of(window)[0] if window is not None else None
    if frame_length is None:
        frame_length = window_length if window_length is not None else signal_length
    onesided = bool(op.attr("onesided"))
    static = isinstance(signal_length, int) and isinstance(frame_length, int)
    frames = 1 + (signal_length - frame_length) // step if static else out_shape[1]
    bins = g.top.add(g.top.div(frame_length, 2), 1) if onesided else frame_length
    if not dims_agree(out_shape, (batch, frames, bins, 2)) or (
        isinstance(components, int) and components not in (1, 2)
    ):
        raise g.shape_error(
            op,
            f"input {shape_text(shape_of(x))}, frame_length {shape_text([frame_length])}: output {shape_text(out_shape)}",
        )
    twiddles = Twiddles.build(g, frame_length, compute)
    count = frame_length if window_length is None else g.top.min(window_length, frame_length)

    ivs, b = g.top.loop_nest(out_shape[:-1])
    sample_batch, frame, frequency = ivs

    def sample(inner: KernelBuilder, n: Bound) -> tuple:
        position = inner.add(inner.mul(frame, step), n)
        return _complex_sample(inner, x, [sample_batch, position], compute)

    def windowed(inner: KernelBuilder, n: Bound) -> SSAValue:
        return inner.convert(inner.load(window, [n]), compute)

    weight = windowed if window is not None else None
    for component, value in enumerate(fourier_sum(b, twiddles, frequency, count, sample, inverse=False, weight=weight)):
        b.store(b.convert(value, element), out, [*ivs, component])
