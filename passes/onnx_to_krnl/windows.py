"""Sliding-window geometry shared by Conv and pooling: strides, dilations, pads, auto_pad."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import reduce

from xdsl.ir import Attribute, SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.helpers.run_time_dims import alloc_shaped, reshaped_view
from onnxc.passes.onnx_to_krnl.common import GraphLowering, shape_of

# ------------------------------------------------------------------ sliding windows


@dataclass(frozen=True)
class SlidingWindow:
    """One spatial axis of a Conv or pooling window: output position o reads input
    positions o*stride - pad_begin + k*dilation for kernel offsets k in [0, kernel).
    Sizes known at run time only are index values: every window is then clipped
    at run time (no static proof that none reaches the padding); so are the pads
    of SAME auto_pad with a stride over such a size."""

    input_size: Bound
    output_size: Bound
    kernel: Bound
    stride: int = 1
    dilation: int = 1
    pad_begin: Bound = 0
    pad_end: Bound = 0

    def start(self, builder: KernelBuilder, out_iv: Bound) -> Bound:
        """Input position of the window's first offset (out_iv is 0 when there is one window)."""
        out_position = 0 if self.output_size == 1 else out_iv
        return builder.sub(builder.mul(out_position, self.stride), self.pad_begin)

    def position(self, builder: KernelBuilder, start: Bound, offset: Bound) -> Bound:
        return builder.add(start, builder.mul(offset, self.dilation))

    def kernel_range(
        self, builder: KernelBuilder, start: Bound, lower: int | None, upper: Bound
    ) -> tuple[Bound, Bound]:
        """Offsets [lo, hi) whose position lies in [lower, upper) (lower None: no
        bound below the begin padding): constants where no window reaches past a
        bound, so unpadded windows cost no arithmetic."""
        low: Bound = 0
        if lower is not None and self._padded_begin:  # a window starts at -pad_begin at the least
            low = builder.ceil_div(builder.max(builder.sub(lower, start), 0), self.dilation)
        high: Bound = self.kernel
        if self._reaches(upper):
            reach = builder.ceil_div(builder.max(builder.sub(upper, start), 0), self.dilation)
            high = builder.min(reach, self.kernel)
        return low, high

    @property
    def clipped(self) -> bool:
        """Whether some window may reach the padding (or past the input)."""
        return self._padded_begin or self._reaches(self.input_size)

    @property
    def _padded_begin(self) -> bool:
        """Whether the first window may start in the padding."""
        return not isinstance(self.pad_begin, int) or self.pad_begin > 0

    @property
    def static(self) -> bool:
        return all(
            isinstance(v, int) for v in (self.input_size, self.output_size, self.kernel, self.pad_begin, self.pad_end)
        )

    @property
    def last_position(self) -> int:
        """The input position the last offset of the last window reads (static windows)."""
        return (self.output_size - 1) * self.stride - self.pad_begin + (self.kernel - 1) * self.dilation

    def runs(self) -> list[tuple[int, int, tuple[int, int]]]:
        """The output positions of a static window as runs [lo, hi) whose windows read the same
        kernel offsets of the input, [first, end) (the others fall in the padding; the offsets
        that read the input are consecutive, since positions grow with the offset)."""
        runs: list[list] = []
        for o in range(self.output_size):
            start = o * self.stride - self.pad_begin
            reads = [k for k in range(self.kernel) if 0 <= start + k * self.dilation < self.input_size]
            taps = (reads[0], reads[-1] + 1) if reads else (0, 0)
            if runs and runs[-1][2] == taps:
                runs[-1][1] = o + 1
            else:
                runs.append([o, o + 1, taps])
        return [(low, high, taps) for low, high, taps in runs]

    @property
    def constant_geometry(self) -> bool:
        """Whether kernel and begin padding are constants (the sizes may be known at run time only)."""
        return isinstance(self.kernel, int) and isinstance(self.pad_begin, int)

    def edge_runs(self, builder: KernelBuilder) -> list[tuple[Bound, Bound, tuple[int, int], bool]]:
        """`runs` where the sizes are known at run time only (constant kernel and begin padding):
        the outputs whose windows start in the begin padding (a constant count), those whose
        windows lie inside the input, and the rest, each run (lo, hi, taps, checked): the inside
        reads all the taps unchecked, the edges every tap checked against the input's bounds
        (an image too small for any inside window has edges only)."""
        begin = -(-self.pad_begin // self.stride)  # the first output whose window starts inside
        # Outputs o with o*stride - pad + (kernel-1)*dilation <= input - 1 end inside: o < reach.
        last = builder.add(builder.sub(self.input_size, 1), self.pad_begin - (self.kernel - 1) * self.dilation)
        reach = builder.div(builder.max(builder.add(last, self.stride), 0), self.stride)
        inside_end = builder.max(builder.min(reach, self.output_size), begin)
        runs = [(builder.min(begin, self.output_size), inside_end, (0, self.kernel), False)]
        if begin:
            runs.insert(0, (0, builder.min(begin, self.output_size), (0, self.kernel), True))
        return [*runs, (inside_end, self.output_size, (0, self.kernel), True)]

    def _reaches(self, upper: Bound) -> bool:
        """Whether the last offset of the last window may read at `upper` or past it."""
        return not self.static or not isinstance(upper, int) or self.last_position >= upper

    def shift(self, builder: KernelBuilder, offset: Bound) -> Bound:
        """For kernel offset `offset`, output position o reads input o*stride - shift."""
        return builder.sub(self.pad_begin, builder.mul(offset, self.dilation))

    def output_range(self, builder: KernelBuilder, shift: Bound) -> tuple[Bound, Bound]:
        """Output positions [lo, hi) at which the kernel offset of `shift` reads the
        input (not the padding); constants where no window reaches the padding."""
        # o*stride - shift is in [0, input_size) iff
        # o >= ceil(shift / stride) and o < ceil((input_size + shift) / stride).
        low: Bound = 0
        if self._padded_begin:
            low = builder.ceil_div(builder.max(shift, 0), self.stride)
        high: Bound = self.output_size
        if self._reaches(self.input_size):
            reach = builder.ceil_div(builder.max(builder.add(shift, self.input_size), 0), self.stride)
            high = builder.min(reach, self.output_size)
        return low, high

    def data_range(self, builder: KernelBuilder, start: Bound) -> tuple[Bound, Bound]:
        """Offsets that read the input (not the padding)."""
        return self.kernel_range(builder, start, 0, self.input_size)

    def padded_range(self, builder: KernelBuilder, start: Bound) -> tuple[Bound, Bound]:
        """Offsets within input and explicit padding (AveragePool count_include_pad)."""
        return self.kernel_range(builder, start, None, builder.add(self.input_size, self.pad_end))


def _run_time_window(g, op, size, output_size, kernel, stride, dilation, pads, d, auto_pad) -> SlidingWindow:
    """The window of a spatial dim known at run time only: its output size is the result
    type's (shape inference computed it from the same attributes, ceil_mode included:
    windows are clipped at run time anyway). SAME padding is computed at run time
    where it depends on the size (a stride > 1) or the kernel."""
    rank = len(pads) // 2
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        b = g.top
        extent = b.add(b.mul(b.sub(kernel, 1), dilation), 1)
        if stride == 1:  # the output has the input's size
            total = b.sub(extent, 1)
        else:
            total = b.max(b.sub(b.add(b.mul(b.sub(output_size, 1), stride), extent), size), 0)
        half = b.div(total, 2)
        begin = half if auto_pad == "SAME_UPPER" else b.sub(total, half)
        return SlidingWindow(size, output_size, kernel, stride, dilation, begin, b.sub(total, begin))
    if auto_pad not in ("VALID", "NOTSET"):
        raise g.unsupported(op, f"auto_pad '{auto_pad}'")
    begin, end = (0, 0) if auto_pad == "VALID" else (pads[d], pads[d + rank])
    return SlidingWindow(size, output_size, kernel, stride, dilation, begin, end)


def sliding_windows(
    g: GraphLowering,
    op: OnnxOp,
    input_sizes: Sequence[Bound],
    output_sizes: Sequence[Bound],
    kernel: Sequence[Bound],
    *,
    ceil_mode: bool = False,
) -> list[SlidingWindow]:
    """Window geometry from the strides, dilations, pads and auto_pad attributes;
    checks that it yields the output sizes shape inference gave."""
    rank = len(kernel)
    strides = op.attr("strides") or [1] * rank
    dilations = op.attr("dilations") or [1] * rank
    pads = op.attr("pads") or [0] * (2 * rank)
    auto_pad = op.attr("auto_pad") or "NOTSET"  # DeformConv has no auto_pad
    if len(strides) != rank or len(dilations) != rank or len(pads) != 2 * rank:
        raise g.shape_error(op, f"strides/dilations/pads do not match {rank} spatial dims")
    static_kernel = [k for k in kernel if isinstance(k, int)]
    if min(strides) < 1 or min(dilations) < 1 or min(pads) < 0 or min(static_kernel, default=1) < 1:
        raise g.unsupported(op, "non-positive strides, dilations or kernel, or negative pads")

    windows = []
    for d in range(rank):
        size, stride = input_sizes[d], strides[d]
        if not all(isinstance(v, int) for v in (size, output_sizes[d], kernel[d])):
            windows.append(
                _run_time_window(g, op, size, output_sizes[d], kernel[d], stride, dilations[d], pads, d, auto_pad)
            )
            continue
        extent = (kernel[d] - 1) * dilations[d] + 1
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            expected = -(-size // stride)
            total = max(0, (expected - 1) * stride + extent - size)
            begin = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
            end = total - begin
        elif auto_pad in ("VALID", "NOTSET"):
            begin, end = (0, 0) if auto_pad == "VALID" else (pads[d], pads[d + rank])
            span = size + begin + end - extent
            expected = (-(-span // stride) if ceil_mode else span // stride) + 1
            if ceil_mode and (expected - 1) * stride >= size + begin:
                expected -= 1  # the last window must start inside the input or its begin padding
        else:
            raise g.unsupported(op, f"auto_pad '{auto_pad}'")
        if output_sizes[d] != expected:
            raise g.shape_error(op, f"spatial dim {d}: output size {output_sizes[d]}, attributes give {expected}")
        windows.append(SlidingWindow(size, expected, kernel[d], stride, dilations[d], begin, end))
    return windows


# ------------------------------------------------------- stride-1 windows as shifted rows


@dataclass(frozen=True)
class ShiftedRows:
    """A 2-D window over an image read as shifted rows: the image is zero-padded into
    planes of `height` x `width` (row-major, flat), and output position q = oy*width + ox
    reads the planes at q + offset(ky, kx) for kernel offset (ky, kx). With a stride s > 1
    the padded image is split into s_y*s_x phase planes (phase (py, px) holds padded rows
    py, py + s_y, ... and columns px, px + s_x, ...), so that every read still has unit
    stride: kernel offset (ky, kx) reads phase (ky % s_y, kx % s_x) shifted by
    (ky // s_y, kx // s_x). Outputs are computed for every q in [0, columns): whole padded
    rows (the columns ox >= OW are discarded by `compact`), so that the loop over q has
    unit stride and no padding branches; or row by row, for ox in [0, OW). Sizes known at
    run time only are index values, computed where `of` was called."""

    window_y: SlidingWindow
    window_x: SlidingWindow
    height: Bound
    width: Bound
    columns: Bound

    @staticmethod
    def of(windows: Sequence[SlidingWindow], b: KernelBuilder, *, strided: bool = False) -> ShiftedRows | None:
        """The shifted rows of two windows of constant kernels, else None: stride-1 windows,
        or with `strided` also strided undilated ones (as phase planes)."""
        if len(windows) != 2 or any(not isinstance(w.kernel, int) for w in windows):
            return None
        if any(w.stride != 1 and (not strided or w.dilation != 1) for w in windows):
            return None
        window_y, window_x = windows
        height, width = (b.add(w.output_size, (w.kernel - 1) * w.dilation // w.stride) for w in windows)
        # No output rows (an image smaller than the window, known at run time only): no columns,
        # not a negative count (a buffer of -1 columns was a heap overflow).
        columns = b.max(b.add(b.mul(b.sub(window_y.output_size, 1), width), window_x.output_size), 0)
        return ShiftedRows(window_y, window_x, height, width, columns)

    @property
    def drops_columns(self) -> bool:
        """Whether the padded rows are wider than the output's (a kernel wider than the stride)."""
        return (self.window_x.kernel - 1) * self.window_x.dilation // self.window_x.stride != 0

    @property
    def phases(self) -> int:
        return self.window_y.stride * self.window_x.stride

    def offset(self, b: KernelBuilder, ky: int, kx: int) -> Bound:
        (sy, dy), (sx, dx) = ((w.stride, w.dilation) for w in (self.window_y, self.window_x))
        phase = (ky % sy) * sx + kx % sx
        shift = b.add(b.mul(self.width, ky * dy // sy), kx * dx // sx)
        return b.add(b.mul(b.mul(self.height, self.width), phase), shift) if phase else shift

    def planes(
        self,
        g: GraphLowering,
        x: SSAValue,
        slack: int = 0,
        element: Attribute | None = None,
        pad: SSAValue | None = None,
    ) -> SSAValue:
        """x [N, C, H, W] zero-padded into planes [N, C, phases*height*width + slack] (a view of
        x if unpadded, unconverted and of stride 1, without the slack): `slack` zeros after each
        channel's planes, read by loops over more columns than there are (see
        `shifted_grouped_conv`). The planes are of `element` (x's own by default; x's values
        converted to it), the padding and slack `pad` (a scalar made at the top level; zero by
        default)."""
        batch, channels, height, width = shape_of(x)
        b = g.top
        element = element or x.type.get_element_type()
        pad = pad or b.constant(0.0, element)
        plane = b.mul(self.height, self.width)
        shape = [batch, channels, b.mul(plane, self.phases)]
        pads = (self.window_y.pad_begin, self.window_y.pad_end, self.window_x.pad_begin, self.window_x.pad_end)
        unpadded = self.phases == 1 and all(isinstance(size, int) and size == 0 for size in pads)
        if unpadded and element == x.type.get_element_type():
            return reshaped_view(b, x, shape)
        shape[2] = b.add(shape[2], slack)
        planes = alloc_shaped(b, element, shape)
        (sy, sx), (top, left) = (
            (w.stride for w in (self.window_y, self.window_x)),
            (self.window_y.pad_begin, self.window_x.pad_begin),
        )
        rows = [_phase_range(b, py, sy, top, height, self.height) for py in range(sy)]
        columns = [_phase_range(b, px, sx, left, width, self.width) for px in range(sx)]
        self._write_planes(b, x, planes, pad, rows, columns)
        return planes

    def _write_planes(
        self,
        b: KernelBuilder,
        x: SSAValue,
        planes: SSAValue,
        pad: SSAValue,
        rows: list[tuple[Bound, Bound]],
        columns: list[tuple[Bound, Bound]],
    ) -> None:
        """Every element of the planes written once, in one nest: per row phase, its padding
        rows set to `pad`; its image rows read once, each run of sx input columns written to
        the sx column phases (an interleaved read the loop vectorizer handles), the few
        columns outside the ones every phase copies and the padding columns each phase's
        own (x's values converted to the planes' element type). A fill of all the planes and
        one strided copy per phase cost three times the depthwise conv after them (64
        channels, 112 wide); so it still did with sizes known at run time only (MobileNetV2
        of free height and width: 96 channels of 112x112 at stride 2, 1.13 ms). Ranges of
        run-time bounds that may be empty are clipped, never reversed into others."""
        batch, channels = shape_of(planes)[:2]
        (sy, sx), (top, left) = (
            (w.stride for w in (self.window_y, self.window_x)),
            (self.window_y.pad_begin, self.window_x.pad_begin),
        )
        plane = b.mul(self.height, self.width)
        # The top level's values first: the nest below must follow them.
        slack_span = (b.mul(plane, sy * sx), shape_of(planes)[2])
        common = (reduce(b.max, [low for low, _ in columns]), reduce(b.min, [high for _, high in columns]))
        bases = [[b.mul(plane, py * sx + px) for px in range(sx)] for py in range(sy)]
        (n, c), outer = b.loop_nest([batch, channels])

        def loop(builder: KernelBuilder, span: tuple[Bound, Bound]) -> tuple[SSAValue, KernelBuilder] | None:
            """A loop over [low, high), none where it is statically empty."""
            if statically_empty(span):
                return None
            (iv,), body = builder.for_nest([span])
            return iv, body

        slack = loop(outer, slack_span)
        if slack is not None:
            slack[1].store(pad, planes, [n, c, slack[0]])
        for py, (first_row, end_row) in enumerate(rows):
            for padding in ((0, first_row), (end_row, self.height)):
                if statically_empty(padding):
                    continue
                (r, q), body = outer.for_nest([padding, (0, self.width)])
                for base in bases[py]:
                    body.store(pad, planes, [n, c, body.add(base, body.add(body.mul(r, self.width), q))])
            (r,), row = outer.for_nest([(first_row, end_row)])
            image_row = RowCopy(x, planes, n, c, row.sub(row.add(row.mul(r, sy), py), top), sx, left)
            starts = [row.add(base, row.mul(r, self.width)) for base in bases[py]]
            looped = loop(row, common)
            if looped is not None:
                image_row.copy(*looped, starts, range(sx))
            for px, (low, high) in enumerate(columns):
                # The columns of this phase outside the common ones, clipped to its own.
                for span in ((low, row.min(common[0], high)), (row.max(common[1], low), high)):
                    looped = loop(row, span)
                    if looped is not None:
                        image_row.copy(*looped, starts, range(px, px + 1))
                for span in ((0, low), (high, self.width)):
                    looped = loop(row, span)
                    if looped is not None:
                        looped[1].store(pad, planes, [n, c, looped[1].add(starts[px], looped[0])])

    def compact(self, g: GraphLowering, wide: SSAValue, out: SSAValue) -> None:
        """out[n, c, y, x] = wide[n, c, y*width + x]: the real columns of the wide rows."""
        ivs, body = g.top.loop_nest(shape_of(out))
        n, c, y, x = ivs
        body.store(body.load(wide, [n, c, body.add(body.mul(y, self.width), x)]), out, ivs)


@dataclass(frozen=True)
class RowCopy:
    """Input row y of image (n, c) into its column phase planes (see ShiftedRows._write_planes)."""

    x: SSAValue
    planes: SSAValue
    n: SSAValue
    c: SSAValue
    y: Bound
    stride: int
    left: Bound

    def copy(self, q: SSAValue, body: KernelBuilder, starts: list[Bound], phases: range) -> None:
        """Column q of each phase in `phases` (whose rows start at `starts`) from x."""
        element = self.planes.type.get_element_type()
        for px in phases:
            column = body.sub(body.add(body.mul(q, self.stride), px), self.left)
            value = body.load(self.x, [self.n, self.c, self.y, column])
            body.store(body.convert(value, element), self.planes, [self.n, self.c, body.add(starts[px], q)])


def statically_empty(span: tuple[Bound, Bound]) -> bool:
    """Whether a range [low, high) is known at compile time to hold nothing."""
    return all(isinstance(v, int) for v in span) and span[0] >= span[1]


def _phase_range(
    b: KernelBuilder, phase: int, stride: int, pad: Bound, size: Bound, plane: Bound
) -> tuple[Bound, Bound]:
    """Rows r of a phase plane, r < plane, whose padded position r*stride + phase lies in the
    image: pad <= r*stride + phase < pad + size."""
    low = b.ceil_div(b.max(b.sub(pad, phase), 0), stride)
    high = b.min(b.ceil_div(b.max(b.sub(b.add(pad, size), phase), 0), stride), plane)
    return low, high
