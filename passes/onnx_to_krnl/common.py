"""What every op lowering shares: the graph walk (`GraphLowering`, the tensor ->
memref map), the registry of lowerings (`lowers`), and helpers for broadcast
indexing, elementwise nests and reshaping copies."""

from __future__ import annotations

import math as pymath
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import ml_dtypes
import numpy as np
import onnx.defs
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    TensorType,
    UnknownLoc,
    i1,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.rewriter import InsertPoint

from onnxc import dtypes
from onnxc.dialects.krnl import DynamicOutputOp, GlobalOp, is_library_allocated, library_allocated_type
from onnxc.dialects.krnl_growth import FreeOp
from onnxc.dialects.krnl_strings import StringOutputOp
from onnxc.dialects.onnx import (
    NOT_SEPARABLE_ATTR,
    OPSET_ATTR,
    SINCE_VERSION_ATTR,
    OnnxOp,
    WeightStore,
    onnx_inputs,
    onnx_outputs,
    tensor_value,
)
from onnxc.dialects.symbolic import Dim
from onnxc.dialects.types import dim_params, is_float, is_low_precision, is_string, onnx_type_of, static_shape
from onnxc.errors import ShapeError, UnsupportedOpError
from onnxc.passes.helpers.krnl_builder import Bound, ConstantPool, KernelBuilder, is_signless_int, is_unsigned
from onnxc.passes.helpers.run_time_dims import (
    IndexDimOps,
    alloc_shaped,
    buffer_shape,
    delinearize,
    flat_view,
    linearize,
    read_argument_dims,
    reshape_groups,
)
from onnxc.passes.helpers.symbolic_shapes import BROADCASTING_OPS
from onnxc.passes.onnx_to_krnl.concat_placement import placed_view, plan_concat_placements

GRAPH_NAME = "main_graph"

MATMUL_COLUMN_TILE = 64
"""Columns of the output computed per sweep over the reduction dim (MatMul, Gemm)."""


# ----------------------------------------------------------------------------- graph walk


class GraphLowering:
    """Lowers one graph function: owns the tensor -> memref map and the top-level builder."""

    def __init__(self, module: ModuleOp, graph: func.FuncOp):
        self.graph = graph
        opset = module.attributes.get(OPSET_ATTR)
        # Hand-written IR may leave the opset out: it then means the newest.
        self.opset = opset.value.data if isinstance(opset, IntegerAttr) else onnx.defs.onnx_opset_version()
        self.dynamic = self._data_dependent_outputs()
        """Graph outputs whose shape is known at run time only (see `dynamic_result`)."""
        self.freed_at_end: list[SSAValue] = []  # krnl.grow buffers living until the call ends (strings made)
        terminator = graph.body.block.last_op
        assert isinstance(terminator, func.ReturnOp)
        self.outputs: list[SSAValue] = list(terminator.arguments)
        inputs = list(graph.body.block.args)
        declared_inputs = self._declared_names("onnx.input_names", len(inputs))
        declared_outputs = self._declared_names("onnx.output_names", len(self.outputs))
        self.input_names = declared_inputs or [f"input_{k}" for k in range(len(inputs))]
        self.output_names = declared_outputs or [f"output_{k}" for k in range(len(self.outputs))]

        described = [(v, f"graph input '{n}'", False) for v, n in zip(inputs, self.input_names)]
        described += [  # strings are library-allocated too: krnl.string_output copies their bytes
            (v, f"graph output '{n}'", v in self.dynamic or is_string(v.type.get_element_type()))
            for v, n in zip(self.outputs, self.output_names)
        ]
        try:
            types = [
                dynamic_memref_type(value) if allocated else memref_type_of(value, name=description)
                for value, description, allocated in described
            ]
        except ShapeError as exc:
            reason = graph.attributes.get(NOT_SEPARABLE_ATTR)
            if reason is not None:
                exc.message += (
                    f"; symbolic dims compile only as a batch dim the model is separable along, and here {reason.data}"
                )
                exc.args = (exc._format(),)
            raise
        self.function = func.FuncOp(GRAPH_NAME, (types, []))
        args = self.function.body.block.args
        self.output_args = args[len(inputs) :]
        hints = (declared_inputs or [v.name_hint for v in inputs]) + (
            declared_outputs or [v.name_hint for v in self.outputs]
        )
        for arg, hint in zip(args, hints):
            if SSAValue.is_valid_name(hint):  # ONNX names may be anything, e.g. "0" or "a:b"
                arg.name_hint = hint
        self.buffers: dict[SSAValue, SSAValue] = dict(zip(inputs, args))
        self.destinations = self._output_destinations()
        self.placements = plan_concat_placements(graph, {*self.outputs, *self.destinations})
        """Values computed straight into their slice of a Concat's result (concat_placement.py)."""
        self.concat_buffers: dict[SSAValue, SSAValue] = {}
        """Buffers of Concat results, made when the first value placed in them is computed."""
        entry = self.function.body.block
        self.top = KernelBuilder(InsertPoint.at_end(entry), ConstantPool(entry))
        self.dim_values: dict[Dim, Bound] = {}
        """Symbolic dims -> their index values, read from the arguments' dims or computed once at entry."""
        for value, arg in zip([*inputs, *self.outputs], args):
            if not is_library_allocated(arg.type):
                self._bind_dims(value, arg)
        self.fused: set[Operation] = set()
        """Ops a lowering has computed as part of another's kernel (an epilogue): skipped."""

    def run(self) -> func.FuncOp:
        """Lower every op in order, then fill the output arguments not yet written."""
        for op in self.graph.body.block.ops:
            if not isinstance(op, func.ReturnOp):
                self.lower_op(op, self.function.body.block)
        for value, arg in zip(self.outputs, self.output_args):
            if not is_library_allocated(arg.type) and self.buffers[value] is not arg:
                copy_reshaped(self.top, self.buffers[value], arg)
            elif is_string(value.type.get_element_type()) and value not in self.dynamic:
                self.top.insert(StringOutputOp(self.buffers[value], arg))
        for buffer in self.freed_at_end:
            self.top.insert(FreeOp(buffer))
        self.top.insert(func.ReturnOp())
        return self.function

    def lower_op(self, op: Operation, block: Block) -> None:
        """Lower one op, `self.top` appending to `block` (the function's, or a
        run-time branch's or loop body's: onnx_to_krnl/control_flow.py)."""
        if op in self.fused:
            return
        if not isinstance(op, OnnxOp):
            raise UnsupportedOpError(f"cannot lower '{op.name}' in @{GRAPH_NAME}")
        lower = LOWERINGS.get(op.OP_TYPE)
        if lower is None:
            raise self.unsupported(op, f"op {op.OP_TYPE} has no lowering")
        self._refuse_low_precision(op)
        self._refuse_run_time_dims(op)
        last_before = block.last_op
        lower(self, op)
        self._locate_emitted(block, last_before, op.location)

    def _data_dependent_outputs(self) -> set[SSAValue]:
        """Refuse, by name, an op whose used result has no static shape although its
        inputs have: the shape depends on input values (NonZero, Unique, Compress
        with a condition input...). Ops in `DYNAMIC_SHAPE_OPS` may have such a
        result if it is only returned (one dynamic dim; the library allocates
        it, see `dynamic_result`); no other lowering takes dynamic shapes.
        Without this, the error would name some later value. Inputs of those ops
        may have symbolic dims (the result's other dims then may too); another
        op's result may lose its shape to them (GatherND's rank is its indices'
        last dim), which is not the values' doing. Returns the results allowed."""
        allowed = set()
        for op in self.graph.body.block.ops:
            if not isinstance(op, OnnxOp):
                continue
            known_shape = has_symbolic_shape if op.OP_TYPE in DYNAMIC_SHAPE_OPS else has_static_shape
            if not all(known_shape(v) for v in op.operands):
                continue
            for index, result in enumerate(op.results):
                if not result.uses or has_static_shape(result) or has_symbolic_shape(result):
                    continue
                message = f"the shape of result {index} depends on input values"
                if op.OP_TYPE not in DYNAMIC_SHAPE_OPS:
                    raise self.unsupported(op, message)
                if not all(isinstance(use.operation, func.ReturnOp) for use in result.uses):
                    users = sorted({use.operation.name for use in result.uses} - {"func.return"})
                    raise self.unsupported(op, f"{message}; it may only be a graph output, not used by {users}")
                if _value_dependent_dim(result) is None:
                    raise self.unsupported(op, f"{message}, in more than one dim ({result.type})")
                allowed.add(result)
        return allowed

    def _bind_dims(self, value: SSAValue, arg: BlockArgument) -> None:
        """Read the run-time dims of a graph argument at entry; each names the
        symbolic dim its type gives (the entry point checks that they agree)."""
        params = [p for p, d in zip(dim_params(value.type), value.type.get_shape()) if d < 0]
        for param, dim in zip(params, read_argument_dims(self.top, arg)):
            self.dim_values.setdefault(Dim.parse(param), dim)

    def argument_dims(self) -> list[list[str]]:
        """Per graph input and output, its dims' expressions ("" where static, or of a
        shape that depends on input values), for the entry point to bind and check."""
        return [
            [""] * len(value.type.get_shape()) if is_library_allocated(arg.type) else _dim_expressions(value)
            for value, arg in zip([*self.graph.body.block.args, *self.outputs], self.function.body.block.args)
        ]

    @contextmanager
    def lowering_at(self, builder: KernelBuilder) -> Iterator[None]:
        """Lower with `self.top` being `builder` (in a branch or loop body); dims first
        computed there are forgotten after: their values are defined there only."""
        outer, known_dims = self.top, dict(self.dim_values)
        self.top = builder
        try:
            yield
        finally:
            self.top, self.dim_values = outer, known_dims

    def dim_value(self, op: OnnxOp, dim: Dim) -> Bound:
        """The value of a symbolic dim at run time, computed once at the function's entry."""
        if dim.constant is not None:
            return dim.constant
        if dim not in self.dim_values:
            unbound = sorted(s for s in dim.symbols() if Dim.symbol(s) not in self.dim_values)
            if unbound:
                raise self.shape_error(op, f"dim {dim} depends on {unbound}, which no graph input's dims give")
            self.dim_values[dim] = self.top.index(
                dim.evaluate(lambda s: self.dim_values[Dim.symbol(s)], IndexDimOps(self.top))
            )
        return self.dim_values[dim]

    def tensor_shape(self, op: OnnxOp, value: SSAValue) -> list[Bound]:
        """The dims of a tensor value: ints, and index values for its symbolic dims."""
        params = dim_params(value.type)
        return [d if d >= 0 else self.dim_value(op, Dim.parse(p)) for d, p in zip(value.type.get_shape(), params)]

    def _refuse_run_time_dims(self, op: OnnxOp) -> None:
        """Symbolic dims reach only the lowerings registered with `run_time_dims`."""
        if op.OP_TYPE in RUN_TIME_DIM_OPS:
            return
        for value in [*op.operands, *op.results]:
            if value not in self.dynamic and isinstance(value.type, TensorType) and not has_static_shape(value):
                message = f"op {op.OP_TYPE} does not take run-time dims yet ({value.type}); pin them with --shape"
                reason = self.graph.attributes.get(NOT_SEPARABLE_ATTR)
                if reason is not None:
                    message += f"; a batch loop (batch 1 per call) does not apply either: {reason.data}"
                raise self.unsupported(op, message)

    def _refuse_low_precision(self, op: OnnxOp) -> None:
        """The low-precision storage types reach only the ops in LOW_PRECISION_OPS:
        any other lowering would compute on them as if they were ordinary numbers."""
        if op.OP_TYPE in LOW_PRECISION_OPS:
            return
        for value in [*op.operands, *op.results]:
            if isinstance(value.type, TensorType) and is_low_precision(value.type.get_element_type()):
                raise self.unsupported(
                    op, f"element type {_dtype_name(value.type.get_element_type())} is not supported"
                )

    def _locate_emitted(self, block: Block, last_before: Operation | None, location: Attribute) -> None:
        """Give the ops emitted for a node the node's location (its name), for
        readers of the IR and for error messages further down the pipeline; ops
        located already were computed for another node (fused into this one's nest)."""
        emitted = last_before.next_op if last_before else block.first_op
        while emitted is not None:
            if not isinstance(emitted, arith.ConstantOp):  # shared by every node
                for nested in emitted.walk():
                    if isinstance(nested.location, UnknownLoc):
                        nested.location = location
            emitted = emitted.next_op

    def _declared_names(self, attr_name: str, count: int) -> list[str] | None:
        """Graph input or output names from the func attributes, if given."""
        attr = self.graph.attributes.get(attr_name)
        if isinstance(attr, ArrayAttr) and len(attr.data) == count:
            return [a.data for a in attr.data]
        return None

    def _output_destinations(self) -> dict[SSAValue, SSAValue]:
        """Graph outputs an op can write in place: result -> output argument.

        Pass-through ops (Identity, Dropout) are looked through, so that the op
        producing the data writes the output buffer. Graph inputs and constants
        are not ops that write, and a value returned twice gets one buffer; those
        outputs are copied at the end.
        """
        destinations: dict[SSAValue, SSAValue] = {}
        for value, arg in zip(self.outputs, self.output_args):
            if is_library_allocated(arg.type):
                continue
            source = value
            while passes_through(source):
                source = source.owner.input(0)
            writes = isinstance(source.owner, OnnxOp) and source.owner.OP_TYPE != "Constant"
            if writes and source not in destinations:
                destinations[source] = arg
        return destinations

    # -------------------------------------------------------------- values of ops

    def input(self, op: OnnxOp, index: int) -> SSAValue | None:
        """The buffer of the index-th ONNX input, None where an optional input is absent."""
        value = op.input(index)
        return None if value is None else self.buffers[value]

    def inputs(self, op: OnnxOp) -> list[SSAValue]:
        """Buffers of every present input (variadic ops)."""
        return [self.buffers[v] for v in onnx_inputs(op) if v is not None]

    def result(self, op: OnnxOp, index: int = 0) -> SSAValue:
        """A fresh buffer for a result: its output argument, its slice of a Concat's
        result (a view), or a new top-level alloc."""
        value = op.results[index]
        buffer = self.concat_buffers.get(value) or self._new_buffer(value, op, f"result {index}")
        self.buffers[value] = buffer
        return buffer

    def _new_buffer(self, value: SSAValue, op: OnnxOp, name: str) -> SSAValue:
        placement = self.placements.get(value)
        if placement is not None:
            concat = placement.concat
            if concat not in self.concat_buffers:
                self.concat_buffers[concat] = self._new_buffer(concat, concat.owner, "result 0")
            shapes = (self.tensor_shape(concat.owner, concat), self.tensor_shape(op, value))
            memref_type = memref_type_of(value, op, name=name)
            buffer = placed_view(self.top, placement, self.concat_buffers[concat], memref_type, *shapes)
        else:
            buffer = self.destinations.get(value)
            if buffer is None:
                memref_type = memref_type_of(value, op, name=name)
                dims = [self.top.index(d) for d in self.tensor_shape(op, value) if not isinstance(d, int)]
                buffer = self.top.alloc(memref_type, dims)
        if not isinstance(buffer, BlockArgument):  # an output argument keeps its name
            buffer.name_hint = value.name_hint
        return buffer

    def dynamic_result(self, op: OnnxOp, index: int, bound: Sequence[Bound]) -> SSAValue:
        """A scratch buffer for a result whose one value-dependent dim is known only
        at run time, shaped as the result with that dim at its largest, `bound`
        (index values where the dims are symbolic). The lowering fills a prefix
        along that dim and calls `finish_dynamic_result`."""
        value = op.results[index]
        axis = _value_dependent_dim(value)
        if axis is None or not _bounds_shape(bound, value.type.get_shape(), axis):
            shown = [d if isinstance(d, int) else "?" for d in bound]
            raise self.shape_error(op, f"result {index} of type {value.type} cannot be bounded by {shown}")
        buffer = alloc_shaped(self.top, value.type.get_element_type(), bound)
        buffer.name_hint = value.name_hint
        self.buffers[value] = buffer
        return buffer

    def finish_dynamic_result(self, op: OnnxOp, index: int, extent: SSAValue) -> None:
        """Hand the first `extent` entries of a `dynamic_result` to every graph
        output returning it (an unused result is dropped)."""
        value = op.results[index]
        for output, arg in zip(self.outputs, self.output_args):
            if output is value:
                source, axis = self.buffers[value], _value_dependent_dim(value)
                if is_string(value.type.get_element_type()):  # their bytes are copied too
                    self.top.insert(StringOutputOp(source, arg, extent, axis))
                else:
                    self.top.insert(DynamicOutputOp(source, extent, arg, axis))

    def alias(self, value: SSAValue, buffer: SSAValue) -> None:
        """Let `value` share a buffer of the same shape (buffers are never overwritten)."""
        self.buffers[value] = buffer

    # ---------------------------------------------------------------------- checks

    def version(self, op: OnnxOp) -> int:
        """The opset whose semantics `op` follows: the model's, or a later one where
        the importer moved old attributes to inputs (`onnx.since_version`)."""
        since = op.attributes.get(SINCE_VERSION_ATTR)
        return max(self.opset, since.value.data) if isinstance(since, IntegerAttr) else self.opset

    def unsupported(self, op: OnnxOp, message: str) -> UnsupportedOpError:
        where = op.DOMAIN or f"opset {self.version(op)}"  # the ai.onnx opset says nothing of another domain's op
        return UnsupportedOpError(f"{message} ({where})", node=op.node_name, op_type=op.OP_TYPE)

    def shape_error(self, op: OnnxOp, message: str) -> ShapeError:
        return ShapeError(message, node=op.node_name, op_type=op.OP_TYPE)

    def element_type(
        self, op: OnnxOp, value: SSAValue, *, ints: bool = True, bools: bool = False, low_precision: bool = False
    ) -> Attribute:
        """The element type of a tensor, if the op supports it: floats, and on request
        signed and unsigned integers, bool and the low-precision storage types."""
        element = value.type.get_element_type()
        if is_low_precision(element):
            if low_precision:
                return element
            raise self.unsupported(op, f"element type {_dtype_name(element)} is not supported")
        integer = is_signless_int(element) or is_unsigned(element)
        if is_float(element) or (ints and integer) or (bools and element == i1):
            return element
        raise self.unsupported(op, f"element type {element} is not supported")

    def same_element_type(self, op: OnnxOp, values: Sequence[SSAValue], **kinds: bool) -> Attribute:
        """The common supported element type of several tensors."""
        elements = {v.type.get_element_type() for v in values}
        if len(elements) != 1:
            raise self.unsupported(op, f"mixed element types {sorted(map(str, elements))}")
        return self.element_type(op, values[0], **kinds)


def _dtype_name(element: Attribute) -> str:
    """How the runtime and ml_dtypes name an element type (float8_e4m3fn, int4...)."""
    return dtypes.NAME_OF_ONNX[onnx_type_of(element)]


def has_static_shape(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and static_shape(value.type.get_shape())


def same_shape(a: SSAValue, b: SSAValue) -> bool:
    """Whether two tensors have one shape: equal static dims, and the same symbolic dims."""
    return a.type.get_shape() == b.type.get_shape() and _dim_expressions(a) == _dim_expressions(b)


def _dim_expressions(value: SSAValue) -> list[str]:
    if not isinstance(value.type, TensorType):
        return []
    return [p if d < 0 else "" for d, p in zip(value.type.get_shape(), dim_params(value.type))]


def has_symbolic_shape(value: SSAValue) -> bool:
    """A ranked tensor each of whose unknown dims has a symbolic expression (computed at run time)."""
    if not isinstance(value.type, TensorType):
        return False
    return all(d >= 0 or p for d, p in zip(value.type.get_shape(), dim_params(value.type)))


def _value_dependent_dim(value: SSAValue) -> int | None:
    """The axis of the only dim of a ranked tensor value that is dynamic with no
    symbolic expression (its size depends on input values), else None."""
    if not isinstance(value.type, TensorType):
        return None
    shape, params = value.type.get_shape(), dim_params(value.type)
    unnamed = [axis for axis, (dim, param) in enumerate(zip(shape, params)) if dim < 0 and not param]
    return unnamed[0] if len(unnamed) == 1 else None


def _bounds_shape(bound: Sequence[Bound], shape: Sequence[int], axis: int) -> bool:
    """Whether `bound` has `shape`'s rank and static dims, a run-time value for
    each of its symbolic dims, and a size (static or not) at `axis`."""
    if len(bound) != len(shape):
        return False
    for k, (size, dim) in enumerate(zip(bound, shape)):
        static = isinstance(size, int)
        if (static and size < 0) or (k != axis and (size != dim if static else dim >= 0)):
            return False
    return True


def dynamic_memref_type(value: SSAValue) -> MemRefType:
    """The memref type of a graph output whose shape depends on input values
    (`memref<2x?xi64, "onnxc_tensor">`)."""
    return library_allocated_type(value.type.get_element_type(), value.type.get_shape())


def memref_type_of(value: SSAValue, op: OnnxOp | None = None, *, name: str = "a value") -> MemRefType:
    """The memref holding a tensor value (a result of `op`, or the value `name`):
    `?` where its type has a symbolic dim; any other dim must be static."""
    where = {"node": op.node_name, "op_type": op.OP_TYPE} if op is not None else {}
    tensor = value.type
    if not isinstance(tensor, TensorType):
        raise ShapeError(f"{name} of type {tensor} has no known shape", **where)
    if not static_shape(tensor.get_shape()) and not has_symbolic_shape(value):
        raise ShapeError(f"{name} has dynamic shape {tensor} (pin the symbolic dims of the graph inputs)", **where)
    return MemRefType(tensor.get_element_type(), tensor.get_shape())


def shape_of(buffer: SSAValue) -> tuple[Bound, ...]:
    """A buffer's dims: ints, and index values where known at run time only."""
    return buffer_shape(buffer)


LoweringFunction = Callable[[GraphLowering, OnnxOp], None]
LOWERINGS: dict[str, LoweringFunction] = {}
DYNAMIC_SHAPE_OPS: set[str] = set()
"""Op types whose lowering handles a result of data-dependent shape (`lowers(..., dynamic=True)`)."""
RUN_TIME_DIM_OPS: set[str] = set()
"""Op types whose lowering takes tensors with symbolic dims (`lowers(..., run_time_dims=True)`)."""

PASS_THROUGH = ("Identity", "Dropout")
"""Ops whose first result is their first input, in inference."""

LOW_PRECISION_OPS = frozenset(
    {"Cast", "CastLike", "BitCast", "Constant", "Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze"}
    | {"Transpose", "Shape", "Size", "QuantizeLinear", "DequantizeLinear"}
)
"""Ops whose lowerings take the low-precision types (float8, float4, int4, int2): they
only move elements, or convert them with `KernelBuilder.convert` (Cast, and the
quantization ops to and from them). (Of the other ops, only these accept all of
those types in their ONNX schemas.)"""


def optional_result(g: GraphLowering, op: OnnxOp, position: int) -> SSAValue | None:
    """The buffer of the optional output at schema `position`, if present and read, else None."""
    outputs = onnx_outputs(op)
    value = outputs[position] if position < len(outputs) else None
    if value is None or not value.uses:
        return None
    return g.result(op, list(op.results).index(value))


def passes_through(value: SSAValue) -> bool:
    """Whether `value` is the first result of a pass-through op."""
    owner = value.owner
    return isinstance(owner, OnnxOp) and owner.OP_TYPE in PASS_THROUGH and value is owner.results[0]


def lowers(
    *op_types: str, dynamic: bool = False, run_time_dims: bool = False
) -> Callable[[LoweringFunction], LoweringFunction]:
    """Register a lowering function for op types; `dynamic` if it lowers results
    whose shape depends on input values (with `GraphLowering.dynamic_result`),
    `run_time_dims` if it takes symbolic dims (shapes of `Bound`s, `shape_of`)."""

    def register(function: LoweringFunction) -> LoweringFunction:
        for op_type in op_types:
            LOWERINGS[op_type] = function
            if dynamic:
                DYNAMIC_SHAPE_OPS.add(op_type)
            if run_time_dims:
                RUN_TIME_DIM_OPS.add(op_type)
        return function

    return register


# --------------------------------------------------------------------------- shared helpers


@dataclass(frozen=True)
class Operand:
    """A buffer read in a loop nest over an output: its dim d is indexed by the
    output's induction variable axes[d], or by 0 where axes[d] is None."""

    buffer: SSAValue
    axes: tuple[int | None, ...]

    @staticmethod
    def whole(buffer: SSAValue) -> Operand:
        """Indexed dim for dim by a nest of the same shape."""
        return Operand(buffer, tuple(range(len(shape_of(buffer)))))

    def load(self, builder: KernelBuilder, ivs: Sequence[SSAValue]) -> SSAValue:
        return builder.load(self.buffer, broadcast_index(self.axes, ivs))


def broadcast_index(axes: Sequence[int | None], ivs: Sequence[SSAValue]) -> list[Bound]:
    """Indices of a broadcast operand: the iv of each axis, 0 for a stretched unit dim."""
    return [0 if axis is None else ivs[axis] for axis in axes]


def broadcast_axes(
    g: GraphLowering, op: OnnxOp, shape: Sequence[Bound], out_shape: Sequence[Bound]
) -> tuple[int | None, ...]:
    """numpy broadcasting (dims aligned from the right): the out axis indexing each
    dim of `shape`, None for a stretched unit dim. A dim known at run time only
    (an index value, or a type's dynamic dim) matches the out dim that shape
    inference unified it with; it may meet a static out dim other than 1 where
    shape inference checks at run time that the two are equal (EQUAL_CHECKED_OPS)."""
    offset = len(out_shape) - len(shape)

    def static(dim: Bound) -> bool:
        return isinstance(dim, int) and dim >= 0

    def matches(dim: Bound, out: Bound) -> bool:
        return dim == 1 or not static(dim) or not static(out) or dim == out

    if offset < 0 or not all(matches(d, out_shape[offset + k]) for k, d in enumerate(shape)):
        raise g.shape_error(op, f"cannot broadcast {shape_text(shape)} to {shape_text(out_shape)}")
    for k, d in enumerate(shape):
        out = out_shape[offset + k]
        if not static(d) and static(out) and out != 1 and op.OP_TYPE not in EQUAL_CHECKED_OPS:
            raise g.unsupported(
                op, f"a dim known at run time only may broadcast to {out} (dim {k} of {shape_text(shape)})"
            )
    return tuple(None if d == 1 and out_shape[offset + k] != 1 else offset + k for k, d in enumerate(shape))


EQUAL_CHECKED_OPS = BROADCASTING_OPS | {"Expand", "MatMul"}
"""Ops whose broadcast dims shape inference requires equal (symbolic_shapes.required_checks):
a run-time dim meeting a static one is that one, or the run fails its DimCheck first."""


def dims_agree(a: Sequence[Bound], b: Sequence[Bound]) -> bool:
    """Whether two shapes can be equal: same rank, equal where both dims are static
    (shape inference unified the symbolic ones)."""
    return len(a) == len(b) and all(x == y for x, y in zip(a, b) if isinstance(x, int) and isinstance(y, int))


def shape_text(shape: Sequence[Bound | None]) -> str:
    """A shape for messages: "?" for a dim known at run time only."""
    return "[" + ", ".join(str(d) if isinstance(d, int) and d >= 0 else "?" for d in shape) + "]"


def broadcast(g: GraphLowering, op: OnnxOp, buffer: SSAValue, out_shape: Sequence[int]) -> Operand:
    return Operand(buffer, broadcast_axes(g, op, shape_of(buffer), out_shape))


ScalarFunction = Callable[[KernelBuilder, list[SSAValue]], SSAValue]
"""(builder in the loop body, loaded operand values) -> value to store."""


def elementwise(builder: KernelBuilder, out: SSAValue, operands: Sequence[Operand], compute: ScalarFunction) -> None:
    """out[i...] = compute(operands loaded at i...) over the whole of `out`."""
    ivs, body = builder.loop_nest(shape_of(out))
    body.store(compute(body, [operand.load(body, ivs) for operand in operands]), out, ivs)


def fill(builder: KernelBuilder, out: SSAValue, value: SSAValue) -> None:
    """Every element of `out` := value (a scalar defined outside the loops)."""
    elementwise(builder, out, [], lambda body, _: value)


def copy_reshaped(builder: KernelBuilder, src: SSAValue, dst: SSAValue) -> None:
    """Copy src into dst of the same element count in row-major order (a plain copy
    when shapes are equal). The nest runs over the shape with more dims, so that
    the common cases (flatten, split a dim, add unit dims) need no division."""
    src_shape, dst_shape = shape_of(src), shape_of(dst)
    if not all(isinstance(d, int) for d in (*src_shape, *dst_shape)):
        flat_src, flat_dst = flat_view(builder, src), flat_view(builder, dst)
        ivs, body = builder.loop_nest(shape_of(flat_dst))
        body.store(body.load(flat_src, ivs), flat_dst, ivs)
        return
    if pymath.prod(src_shape) == 0:
        return
    walk_src = len(src_shape) > len(dst_shape)
    ivs, body = builder.loop_nest(src_shape if walk_src else dst_shape)
    src_index: list[Bound] = []
    dst_index: list[Bound] = []
    for src_dims, dst_dims in reshape_groups(src_shape, dst_shape):
        walked, other = (src_dims, dst_dims) if walk_src else (dst_dims, src_dims)
        walked_shape, other_shape = (src_shape, dst_shape) if walk_src else (dst_shape, src_shape)
        here = [ivs[d] for d in walked]
        offset = linearize(body, here, [walked_shape[d] for d in walked])
        there = delinearize(body, offset, [other_shape[d] for d in other])
        src_index += here if walk_src else there
        dst_index += there if walk_src else here
    body.store(body.load(src, src_index), dst, dst_index)


def constant_array(value: SSAValue) -> np.ndarray | None:
    """The value of a tensor defined by onnx.Constant with a `value` attribute, else None."""
    owner = value.owner
    if isinstance(owner, OnnxOp) and owner.OP_TYPE == "Constant" and "value" in owner.attributes:
        return tensor_value(owner, owner.attributes["value"])
    return None


def weight_buffer(g: GraphLowering, op: OnnxOp, array: np.ndarray, element: Attribute, hint: str) -> SSAValue:
    """A krnl.global for an array of `element`s made at compile time (kept in the
    module's WeightStore, out of the IR)."""
    array = np.ascontiguousarray(array)
    handle = WeightStore.of(op).add(array, hint, element)
    return g.top.insert(GlobalOp(handle, MemRefType(element, array.shape))).result


def strided_copy(
    builder: KernelBuilder, src: SSAValue, out: SSAValue, starts: Sequence[Bound], steps: Sequence[int]
) -> None:
    """out[i...] = src[starts + i * steps ...] over the whole of `out` (Slice, Split)."""
    ivs, body = builder.loop_nest(shape_of(out))
    index = [body.add(start, body.mul(iv, step)) for iv, start, step in zip(ivs, starts, steps)]
    body.store(body.load(src, index), out, ivs)


def constant_buffer(builder: KernelBuilder, array: np.ndarray, element: Attribute) -> SSAValue:
    """A krnl.global holding `array` (values known at compile time) as `element`s
    (bfloat16 given as its uint16 bits, held as values by the dense attribute)."""
    array = np.asarray(array)
    if isinstance(element, BFloat16Type):
        array = array.view(ml_dtypes.bfloat16).astype(np.float32)
    memref_type = MemRefType(element, array.shape)
    tensor_type = TensorType(element, array.shape)
    value = DenseIntOrFPElementsAttr.from_list(tensor_type, array.reshape(-1).tolist())
    return builder.insert(GlobalOp(value, memref_type)).result


def constant_result(g: GraphLowering, op: OnnxOp, array: np.ndarray, index: int = 0) -> None:
    """Let result `index` of `op` be a krnl.global holding `array` (a value known at
    compile time, such as a Shape), in the result's element type."""
    result_type = memref_type_of(op.results[index], op, name=f"result {index}")
    array = np.asarray(array).reshape(result_type.get_shape())
    g.alias(op.results[index], constant_buffer(g.top, array, result_type.get_element_type()))


def normalized_axis(g: GraphLowering, op: OnnxOp, axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise g.shape_error(op, f"axis {axis} out of range for rank {rank}")
    return axis % rank
