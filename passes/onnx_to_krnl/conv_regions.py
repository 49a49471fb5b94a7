"""A conv's outputs split into regions by the kernel offsets their windows read, so that a
GEMM per region multiplies only the taps that read the image, none of the padding.

A dilated conv over a small image reads mostly padding: DeepLabV3's rate-18 3x3 ASPP conv on a
32x32 map reads the image with its outer rows and columns of taps for only 14 of 32 outputs
each (61% of its products are zeros; rate 12: 44%, rate 6: 23%). Along each axis, the outputs
fall into runs whose windows read the same consecutive kernel offsets (`SlidingWindow.runs`);
a row run times a column run is a rectangle of outputs all reading the same taps, every one of
them inside the image. Each region is then an ordinary product: its weights are the columns of
W for its taps (packed at compile time), its B the im2col of the region over those taps only
(packed by the kernel from x, every read in range), its C the region's outputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.ir import SSAValue

from onnxc.dialects.krnl_matmul import ConvGeometryAttr
from onnxc.passes.onnx_to_krnl.common import GraphLowering, shape_of
from onnxc.passes.onnx_to_krnl.windows import SlidingWindow

MIN_SKIPPED_SHARE = 0.2
"""Regions replace a conv's single product where they skip at least this share of its work:
their smaller products and copy-out passes pay off then (DeepLab's rate-6 conv at 32x32, which
skips 23% of the products and 41% of its single product's padded-rows window: 2.0 -> 1.4 ms);
ordinary padded convs (a 3x3 over 32x32 reads 6% padding) keep their single product."""
MAX_REGIONS = 25
"""At most this many regions (products); a 3x3 kernel makes at most 5 runs per axis."""
VECTOR_COLUMNS = 16
"""The work of a product is counted in whole vectors of columns (every vector width we target
divides it): a region of a few outputs costs a vector per row of its weights, so that tiny
images (4x4, whose every row and column is an edge) keep one product."""


@dataclass(frozen=True)
class TapRegion:
    """Outputs [rows) x [columns) of a 2-D conv, whose windows all read the kernel offsets
    [taps_y) x [taps_x) from the image and only the padding with the others."""

    rows: tuple[int, int]
    columns: tuple[int, int]
    taps_y: tuple[int, int]
    taps_x: tuple[int, int]

    @property
    def height(self) -> int:
        return self.rows[1] - self.rows[0]

    @property
    def width(self) -> int:
        return self.columns[1] - self.columns[0]

    @property
    def pixels(self) -> int:
        return self.height * self.width

    @property
    def taps(self) -> int:
        return (self.taps_y[1] - self.taps_y[0]) * (self.taps_x[1] - self.taps_x[0])

    def weights(self, matrix: np.ndarray, kernel: tuple[int, int]) -> np.ndarray:
        """The columns (c, ky, kx) of W [M, C*KH*KW] for this region's taps, in that order."""
        taps = matrix.reshape(matrix.shape[0], -1, *kernel)[:, :, slice(*self.taps_y), slice(*self.taps_x)]
        return taps.reshape(matrix.shape[0], -1)

    def image(self, windows: Sequence[SlidingWindow], channels: int) -> tuple[ConvGeometryAttr, int]:
        """The geometry of the region's im2col, and where in each channel of x it starts: x read
        from the first position the region's first output reads with its first tap, with x's
        strides and no padding (every read is inside the image, so the packing's bounds on rows
        and columns never clip one)."""
        window_y, window_x = windows
        first_y = self.rows[0] * window_y.stride - window_y.pad_begin + self.taps_y[0] * window_y.dilation
        first_x = self.columns[0] * window_x.stride - window_x.pad_begin + self.taps_x[0] * window_x.dilation
        geometry = ConvGeometryAttr(
            channels=channels,
            height=window_y.input_size,
            width=window_x.input_size,
            output=(self.height, self.width),
            kernel=(self.taps_y[1] - self.taps_y[0], self.taps_x[1] - self.taps_x[0]),
            stride=(window_y.stride, window_x.stride),
            dilation=(window_y.dilation, window_x.dilation),
        )
        return geometry, first_y * window_x.input_size + first_x

    def copy_out(self, g: GraphLowering, products: SSAValue, out: SSAValue) -> None:
        """out[n, m, rows, columns] = products [N, M, pixels] (the region's outputs, row-major)."""
        batch, channels = shape_of(out)[:2]
        (n, m, i, j), body = g.top.loop_nest([batch, channels, self.height, self.width])
        value = body.load(products, [n, m, body.add(body.mul(i, self.width), j)])
        body.store(value, out, [n, m, body.add(i, self.rows[0]), body.add(j, self.columns[0])])


def tap_regions(windows: Sequence[SlidingWindow], columns: int) -> list[TapRegion] | None:
    """The regions of two static windows if they skip MIN_SKIPPED_SHARE of the work of the
    single product of `columns` output columns (the output's, or more: rows of the padded image)
    in at most MAX_REGIONS products; None otherwise, or where some outputs read no image at all
    (those would be products of no reduction)."""
    if len(windows) != 2 or not all(w.static for w in windows):
        return None
    window_y, window_x = windows
    regions = [
        TapRegion((row_low, row_high), (column_low, column_high), taps_y, taps_x)
        for row_low, row_high, taps_y in window_y.runs()
        for column_low, column_high, taps_x in window_x.runs()
    ]
    if len(regions) > MAX_REGIONS or any(region.taps == 0 for region in regions):
        return None
    work = sum(region.taps * _vectors(region.pixels) for region in regions)
    single = window_y.kernel * window_x.kernel * _vectors(columns)
    return regions if work <= (1 - MIN_SKIPPED_SHARE) * single else None


def _vectors(columns: int) -> int:
    return -(-columns // VECTOR_COLUMNS)
