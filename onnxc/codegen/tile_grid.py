"""A GEMM's register tiles as one grid that the thread pool splits.

The pool hands each thread a contiguous range of [0, tiles) (runtime/support/
onnxc_parallel.c). Numbering the row tiles x column tiles grid major line
first, any thread count gets shares within one tile of each other: splitting
one dimension only gave two threads 4 and 3 of a 14x14 image's 7 column tiles,
and left threads idle where a dimension has fewer tiles than the pool has
threads. A range is at most three rectangles of the grid: the rest of its
first major line, whole major lines, the start of its last line. Where the
range starts and ends on line boundaries (lines divided evenly among the
threads) it is one rectangle of whole lines, as when one dimension is split.
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from onnxc.codegen.llvm_types import I64

Rectangle = Callable[[ir.IRBuilder, ir.Value, ir.Value, ir.Value, ir.Value], None]
"""rectangle(b, major_from, major_to, minor_from, minor_to): emit the work of those tiles."""
Product = Callable[[ir.IRBuilder, ir.Value, ir.Value, ir.Value, ir.Value], None]
"""product(b, column_from, column_to, row_tile_from, row_tile_to): emit that part of a GEMM."""


def tile_rectangles(
    b: ir.IRBuilder, begin: ir.Value, end: ir.Value, minor_tiles: ir.Value, rectangle: Rectangle
) -> None:
    """Emit `rectangle` for the tiles [begin, end) of a grid of `minor_tiles` tiles per major
    line, numbered major line first (begin < end)."""
    zero, one = ir.Constant(I64, 0), ir.Constant(I64, 1)
    first, first_minor = b.udiv(begin, minor_tiles), b.urem(begin, minor_tiles)
    last, last_minor = b.udiv(end, minor_tiles), b.urem(end, minor_tiles)
    with b.if_else(b.icmp_unsigned("==", first, last)) as (one_line, lines):
        with one_line:
            rectangle(b, first, b.add(first, one), first_minor, last_minor)
        with lines:
            partial_first = b.icmp_unsigned("!=", first_minor, zero)
            with b.if_then(partial_first):
                rectangle(b, first, b.add(first, one), first_minor, minor_tiles)
            whole_from = b.select(partial_first, b.add(first, one), first)
            with b.if_then(b.icmp_unsigned("<", whole_from, last)):
                rectangle(b, whole_from, last, zero, minor_tiles)
            with b.if_then(b.icmp_unsigned("!=", last_minor, zero)):
                rectangle(b, last, b.add(last, one), zero, last_minor)


def product_rectangles(
    b: ir.IRBuilder,
    begin: ir.Value,
    end: ir.Value,
    tiles: tuple[ir.Value, ir.Value],
    rows_first: bool | ir.Value,
    tile_columns: int,
    columns: ir.Value,
    product: Product,
) -> None:
    """`product` for the tiles [begin, end) of a GEMM's grid of (row tiles, column tiles)
    `tiles`, numbered row tile first (`rows_first`, or an i1 decided at run time) or column tile
    first; a column tile is `tile_columns` of the `columns` wide."""
    row_tiles, column_tiles = tiles

    def either(b: ir.IRBuilder, if_rows_first: ir.Value, otherwise: ir.Value) -> ir.Value:
        if isinstance(rows_first, bool):
            return if_rows_first if rows_first else otherwise
        return b.select(rows_first, if_rows_first, otherwise)

    def rectangle(b: ir.IRBuilder, major_from, major_to, minor_from, minor_to) -> None:
        rows = (either(b, major_from, minor_from), either(b, major_to, minor_to))
        column_range = (either(b, minor_from, major_from), either(b, minor_to, major_to))
        column_from, column_to = (b.mul(t, ir.Constant(I64, tile_columns)) for t in column_range)
        column_to = b.select(b.icmp_signed("<", column_to, columns), column_to, columns)
        product(b, column_from, column_to, *rows)

    tile_rectangles(b, begin, end, either(b, column_tiles, row_tiles), rectangle)
