"""Indexed data movement: Gather, GatherElements, GatherND, ScatterElements,
ScatterND, TensorScatter, OneHot, ReverseSequence, and the scatters MaxUnpool
and Col2Im.

Indices are data (read in the loop body), negative ones count from the end of
their dim; before the nest, `krnl.check_indices` fails the run if one lies
outside its dim (constant ones are checked here). Scatters copy `data` to the output, then apply the updates in the
order of the updates tensor, so that with duplicate indices the last update
wins (reduction "none") or all are combined, as in the reference.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.ir import SSAValue

from onnxc.dialects.krnl_checks import CheckIndicesOp
from onnxc.dialects.onnx import OnnxOp
from onnxc.passes.helpers.krnl_builder import Bound, KernelBuilder
from onnxc.passes.helpers.run_time_dims import delinearize, element_count
from onnxc.passes.onnx_to_krnl.common import (
    GraphLowering,
    constant_array,
    copy_reshaped,
    fill,
    lowers,
    normalized_axis,
    shape_of,
    shape_text,
)


def load_index(builder: KernelBuilder, buffer: SSAValue, indices: Sequence[Bound], size: Bound) -> SSAValue:
    """An element of an integer (or float) index tensor as an index into a dim of
    `size`, a negative one counting from the end (as in Gather, Scatter, OneHot)."""
    index = builder.to_index(builder.load(buffer, indices))
    return builder.select(builder.compare_index("slt", index, 0), builder.index(builder.add(index, size)), index)


def checked_indices(g: GraphLowering, op: OnnxOp, sizes: Sequence[Bound]) -> SSAValue:
    """The buffer of `op`'s indices (input 1), each element p of which must lie in
    [-size, size) of sizes[p % len(sizes)]: checked now if constant and `sizes` static,
    else by the run before the nest reading them (a ShapeError or ONNXC_ERR_INDEX)."""
    indices = g.input(op, 1)
    known = constant_array(op.input(1))
    if known is not None and all(isinstance(size, int) for size in sizes):
        limits = np.resize(np.array(sizes, np.int64), known.size).reshape(known.shape)
        outside = (known < -limits) | (known >= limits)
        if outside.any():
            position = tuple(int(p) for p in np.argwhere(outside)[0])
            raise g.shape_error(
                op, f"index {int(known[position])} at {list(position)} is outside its dim of {int(limits[position])}"
            )
        return indices
    g.top.insert(CheckIndicesOp(indices, [g.top.index(size) for size in sizes], op.node_name, op.OP_TYPE))
    return indices


@lowers("Gather", run_time_dims=True)
def lower_gather(g: GraphLowering, op: OnnxOp) -> None:
    """out[a..., i..., b...] = data[a..., indices[i...], b...] with the index at `axis`."""
    data, out = g.input(op, 0), g.result(op)
    shape = shape_of(data)
    axis = normalized_axis(g, op, op.attr("axis"), len(shape))
    indices = checked_indices(g, op, [shape[axis]])
    index_rank = len(shape_of(indices))
    ivs, b = g.top.loop_nest(shape_of(out))
    index = load_index(b, indices, ivs[axis : axis + index_rank], shape[axis])
    b.store(b.load(data, [*ivs[:axis], index, *ivs[axis + index_rank :]]), out, ivs)


@lowers("GatherElements", run_time_dims=True)
def lower_gather_elements(g: GraphLowering, op: OnnxOp) -> None:
    """out[i] = data[i with i[axis] := indices[i]]."""
    data, out = g.input(op, 0), g.result(op)
    shape = shape_of(data)
    axis = normalized_axis(g, op, op.attr("axis"), len(shape))
    indices = checked_indices(g, op, [shape[axis]])
    ivs, b = g.top.loop_nest(shape_of(out))
    source = list(ivs)
    source[axis] = load_index(b, indices, ivs, shape[axis])
    b.store(b.load(data, source), out, ivs)


def _index_depth(g: GraphLowering, op: OnnxOp, indices: SSAValue, depth: int) -> int:
    """The last dim of `indices` (GatherND, ScatterND): the number of data dims an index
    names, `depth` as the ranks imply it, which a dim known at run time only must be."""
    last = shape_of(indices)[-1]
    if depth < 0 or (isinstance(last, int) and last != depth):
        raise g.shape_error(op, f"indices of last dim {last} where the ranks imply {depth}")
    return depth


def _nd_index(
    b: KernelBuilder, indices: SSAValue, prefix: Sequence[Bound], shape: Sequence[Bound], first_dim: int, depth: int
) -> list[Bound]:
    """The data indices named by the last dim of `indices` at `prefix` (GatherND,
    ScatterND): one per data dim from `first_dim` on."""
    return [load_index(b, indices, [*prefix, k], shape[first_dim + k]) for k in range(depth)]


@lowers("GatherND", run_time_dims=True)
def lower_gather_nd(g: GraphLowering, op: OnnxOp) -> None:
    """out[batch..., i..., rest...] = data[batch..., indices[batch..., i..., :], rest...]:
    the first `batch_dims` dims are shared by data and indices."""
    data, indices, out = g.input(op, 0), g.input(op, 1), g.result(op)
    batch_dims = op.attr("batch_dims")
    index_rank = len(shape_of(indices))
    rest_rank = len(shape_of(out)) - (index_rank - 1)
    depth = _index_depth(g, op, indices, len(shape_of(data)) - batch_dims - rest_rank)
    checked_indices(g, op, shape_of(data)[batch_dims : batch_dims + depth])
    ivs, b = g.top.loop_nest(shape_of(out))
    picked = _nd_index(b, indices, ivs[: index_rank - 1], shape_of(data), batch_dims, depth)
    b.store(b.load(data, [*ivs[:batch_dims], *picked, *ivs[index_rank - 1 :]]), out, ivs)


_REDUCTIONS = {"add": "add", "mul": "mul", "max": "max", "min": "min"}
"""Scatter reduction attribute -> KernelBuilder arithmetic."""


Destination = Callable[[KernelBuilder, list[SSAValue]], list[Bound]]
"""(builder in the nest over the updates, its ivs) -> the output indices to update."""


def _scatter(g: GraphLowering, op: OnnxOp, destination: Destination) -> None:
    """Copy data (input 0) to the output, then for every position i of the updates
    (input 2): out[destination(i)] = updates[i], or combined with it by `reduction`."""
    data, updates, out = g.input(op, 0), g.input(op, 2), g.result(op)
    reduction = op.attr("reduction")
    if reduction != "none":
        if reduction not in _REDUCTIONS:
            raise g.unsupported(op, f"reduction '{reduction}'")
        g.element_type(op, op.results[0])
    copy_reshaped(g.top, data, out)
    ivs, b = g.top.loop_nest(shape_of(updates))
    target = destination(b, ivs)
    value = b.load(updates, ivs)
    if reduction != "none":
        value = b.binary(_REDUCTIONS[reduction], b.load(out, target), value)
    b.store(value, out, target)


@lowers("ScatterElements", run_time_dims=True)
def lower_scatter_elements(g: GraphLowering, op: OnnxOp) -> None:
    """out[i with i[axis] := indices[i]] = updates[i]."""
    shape = shape_of(g.input(op, 0))
    axis = normalized_axis(g, op, op.attr("axis"), len(shape))
    indices = checked_indices(g, op, [shape[axis]])

    def destination(b: KernelBuilder, ivs: list[SSAValue]) -> list[Bound]:
        target: list[Bound] = list(ivs)
        target[axis] = load_index(b, indices, ivs, shape[axis])
        return target

    _scatter(g, op, destination)


@lowers("ScatterND", run_time_dims=True)
def lower_scatter_nd(g: GraphLowering, op: OnnxOp) -> None:
    """out[indices[i..., :], rest...] = updates[i..., rest...]."""
    shape = shape_of(g.input(op, 0))
    indices = g.input(op, 1)
    prefix_rank = len(shape_of(indices)) - 1
    depth = _index_depth(g, op, indices, len(shape) - (len(shape_of(g.input(op, 2))) - prefix_rank))
    checked_indices(g, op, shape[:depth])

    def destination(b: KernelBuilder, ivs: list[SSAValue]) -> list[Bound]:
        return [*_nd_index(b, indices, ivs[:prefix_rank], shape, 0, depth), *ivs[prefix_rank:]]

    _scatter(g, op, destination)


@lowers("TensorScatter", run_time_dims=True)
def lower_tensor_scatter(g: GraphLowering, op: OnnxOp) -> None:
    """A KV-cache update: past_cache with update[b, ..., s, ...] written at
    position write_indices[b] + s of `axis` (0 without write_indices), taken
    modulo the cache length in circular mode. A position past the cache is
    not written."""
    cache, update, write_indices, out = g.input(op, 0), g.input(op, 1), g.input(op, 2), g.result(op)
    shape = shape_of(cache)
    axis = normalized_axis(g, op, op.attr("axis"), len(shape))
    mode = op.attr("mode")
    if mode not in ("linear", "circular"):
        raise g.unsupported(op, f"TensorScatter mode '{mode}'")
    if axis == 0:
        raise g.shape_error(op, "axis 0 is the batch dim write_indices index")
    copy_reshaped(g.top, cache, out)
    ivs, b = g.top.loop_nest(shape_of(update))
    position = ivs[axis]
    if write_indices is not None:
        position = b.add(b.to_index(b.load(write_indices, [ivs[0]])), position)
    if mode == "circular":
        position = b.rem(position, shape[axis])
    target = list(ivs)
    target[axis] = position
    inside = b.compare_index("ult", position, shape[axis])  # negative ones are huge unsigned
    write = b.if_then(inside)
    write.store(write.load(update, ivs), out, target)


@lowers("OneHot", run_time_dims=True)
def lower_one_hot(g: GraphLowering, op: OnnxOp) -> None:
    """out[a..., j, b...] = values[1] if indices[a..., b...] == j (negative indices
    count from depth) else values[0]; j runs over the new dim at `axis`."""
    indices, values, out = g.input(op, 0), g.input(op, 2), g.result(op)
    if constant_array(op.input(1)) is None:
        raise g.unsupported(op, "OneHot with a depth that is not a constant")
    axis = normalized_axis(g, op, op.attr("axis"), len(shape_of(out)))
    depth = shape_of(out)[axis]
    off, on = (g.top.load(values, [k]) for k in (0, 1))
    ivs, b = g.top.loop_nest(shape_of(out))
    index = load_index(b, indices, [*ivs[:axis], *ivs[axis + 1 :]], depth)
    b.store(b.select(b.compare_index("eq", index, ivs[axis]), on, off), out, ivs)


@lowers("ReverseSequence", run_time_dims=True)
def lower_reverse_sequence(g: GraphLowering, op: OnnxOp) -> None:
    """Along `time_axis`, the first sequence_lens[b] elements of batch b reversed,
    the others copied. A length past the time dim would read outside the input: lengths are
    checked to lie in [-(T + 1), T] (a negative one reverses nothing)."""
    src, out = g.input(op, 0), g.result(op)
    batch_axis, time_axis = op.attr("batch_axis"), op.attr("time_axis")
    lengths = checked_indices(g, op, [g.top.add(shape_of(src)[time_axis], 1)])
    ivs, b = g.top.loop_nest(shape_of(out))
    length = b.to_index(b.load(lengths, [ivs[batch_axis]]))
    time = ivs[time_axis]
    reversed_time = b.sub(b.sub(length, 1), time)
    source = list(ivs)
    source[time_axis] = b.select(b.compare_index("slt", time, length), reversed_time, time)
    b.store(b.load(src, source), out, ivs)


@lowers("MaxUnpool", run_time_dims=True)
def lower_max_unpool(g: GraphLowering, op: OnnxOp) -> None:
    """Zeros, with each input value stored at its index: a row-major offset into
    the output shape the pooling geometry implies (as MaxPool's Indices give),
    which sits at the origin of a larger `output_shape`. Offsets outside that
    shape are dropped, never stored out of bounds (nor is anything where that
    shape, known at run time only, does not fit the output)."""
    x, indices, out = g.input(op, 0), g.input(op, 1), g.result(op)
    kernel = op.attr("kernel_shape")
    spatial = len(kernel)
    strides = op.attr("strides") or [1] * spatial
    pads = op.attr("pads") or [0] * (2 * spatial)
    top = g.top
    inferred = list(shape_of(x)[:2]) + [
        top.add(top.mul(top.sub(size, 1), strides[d]), kernel[d] - pads[d] - pads[spatial + d])
        for d, size in enumerate(shape_of(x)[2:])
    ]
    fits = None
    for d, o in zip(inferred, shape_of(out)):
        if isinstance(d, int) and isinstance(o, int):
            if d > o:
                raise g.shape_error(
                    op, f"output_shape {shape_text(shape_of(out))} is smaller than the unpooled {shape_text(inferred)}"
                )
        elif d is not o:
            within = top.compare_index("sle", d, o)
            fits = within if fits is None else top.and_(fits, within)
    count = element_count(top, inferred)
    fill(top, out, top.constant(0, out.type.get_element_type()))
    ivs, b = top.loop_nest(shape_of(x))
    offset = b.to_index(b.load(indices, ivs))
    inside = b.and_(b.compare_index("sge", offset, 0), b.compare_index("slt", offset, count))
    store = b.if_then(inside if fits is None else b.and_(inside, fits))
    store.store(store.load(x, ivs), out, delinearize(store, offset, inferred))


@lowers("Col2Im", run_time_dims=True)
def lower_col2im(g: GraphLowering, op: OnnxOp) -> None:
    """The inverse of im2col: input (N, C * prod(block), L) holds one column per
    block position; every element is added to the image pixel it came from
    (block position * stride - pad + kernel offset * dilation), if inside."""
    columns, out = g.input(op, 0), g.result(op)
    block = constant_array(op.input(2))
    if block is None or constant_array(op.input(1)) is None:
        raise g.unsupported(op, "Col2Im with an image or block shape that is not a constant")
    block = block.reshape(-1).tolist()
    image = shape_of(out)[2:]
    spatial = len(image)
    strides = op.attr("strides") or [1] * spatial
    dilations = op.attr("dilations") or [1] * spatial
    pads = op.attr("pads") or [0] * (2 * spatial)
    blocks = [
        (size + pads[d] + pads[spatial + d] - dilations[d] * (block[d] - 1) - 1) // strides[d] + 1
        for d, size in enumerate(image)
    ]
    if isinstance(shape_of(columns)[2], int) and pymath.prod(blocks) != shape_of(columns)[2]:
        raise g.shape_error(op, f"{shape_of(columns)[2]} columns for {blocks} block positions")
    g.element_type(op, op.results[0])
    fill(g.top, out, g.top.constant(0, out.type.get_element_type()))
    ivs, b = g.top.loop_nest(shape_of(columns))
    n, channel_offset, column = ivs
    kernel = delinearize(b, b.rem(channel_offset, pymath.prod(block)), block)
    position = delinearize(b, column, blocks)
    pixel, inside = [], None
    for d in range(spatial):
        start = b.sub(b.mul(position[d], strides[d]), pads[d])
        at = b.index(b.add(start, b.mul(kernel[d], dilations[d])))
        within = b.and_(b.compare_index("sge", at, 0), b.compare_index("slt", at, image[d]))
        inside = within if inside is None else b.and_(inside, within)
        pixel.append(at)
    add = b.if_then(inside)
    target = [n, add.div(channel_offset, pymath.prod(block)), *pixel]
    add.store(add.add(add.load(out, target), add.load(columns, ivs)), out, target)
