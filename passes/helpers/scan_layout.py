"""Where a Scan's inputs and outputs run along: its states and scan inputs, the
axis and direction of each, and (Scan-8) its batch axis. inline-control-flow
(unrolling a Scan, or typing one kept for run time) and its run-time lowering
(onnx_to_krnl/control_flow.py) read a Scan through this one description, and
a Loop's scan outputs that continue a carried value through `appended_to`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import APPENDED_TO_ATTR, OnnxOp, onnx_inputs, op_opset
from onnxc.dialects.types import dim_params, symbolic_tensor_type


@dataclass(frozen=True)
class ScanLayout:
    states: list[SSAValue]
    """The initial values of the loop-carried states."""
    sequences: list[SSAValue]
    """The scan inputs."""
    input_axes: list[int]
    """Per scan input, the axis it is scanned along, counted without a batch axis, not negative."""
    input_reverse: list[bool]
    output_axes: list[int]
    """Per scan output, the axis its per-iteration values stack along (without a batch axis;
    as the attribute gives it: may be negative, resolved against the per-iteration rank)."""
    output_reverse: list[bool]
    batched: bool
    """Scan-8: axis 0 of every input and result is a batch axis, each batch scanned on its own."""

    @staticmethod
    def of(op: OnnxOp, opset: int, refuse: Callable[[str], Exception]) -> ScanLayout:
        inputs = onnx_inputs(op)
        scan_inputs = op.attr("num_scan_inputs")
        if op_opset(op, opset) >= 9:
            states, sequences = inputs[: len(inputs) - scan_inputs], inputs[len(inputs) - scan_inputs :]
            scan_count = len(op.results) - len(states)
            axes = op.attr("scan_input_axes") or [0] * scan_inputs
            return ScanLayout(
                states,
                sequences,
                [axis % _rank(v, refuse) for axis, v in zip(axes, sequences)],
                [bool(d) for d in op.attr("scan_input_directions") or [0] * scan_inputs],
                list(op.attr("scan_output_axes") or [0] * scan_count),
                [bool(d) for d in op.attr("scan_output_directions") or [0] * scan_count],
                batched=False,
            )
        # Scan-8: each batch scanned along axis 1 of the inputs. The importer drops an
        # absent (empty-named) sequence_lens, the body tells the state count.
        state_count = len(op.graph("body").block.args) - scan_inputs
        if len(inputs) != state_count + scan_inputs:
            raise refuse("Scan-8 with sequence_lens is not supported")
        states, sequences = inputs[:state_count], inputs[state_count:]
        scan_count = len(op.results) - len(states)
        reverse = [bool(d) for d in op.attr("directions") or [0] * scan_inputs]
        return ScanLayout(states, sequences, [0] * scan_inputs, reverse, [0] * scan_count, [False] * scan_count, True)

    @property
    def scan_count(self) -> int:
        return len(self.output_axes)

    def per_batch(self, ttype: TensorType) -> TensorType:
        """The type of one batch's part of an input (Scan-8), or the type itself."""
        return drop_dim(ttype, 0) if self.batched else ttype


def drop_dim(ttype: TensorType, axis: int) -> TensorType:
    """`ttype` without dim `axis` (its symbolic names kept for the others)."""
    dims, params = list(ttype.get_shape()), dim_params(ttype)
    del dims[axis], params[axis]
    return symbolic_tensor_type(ttype.get_element_type(), dims, params)


def insert_dim(ttype: TensorType, axis: int, dim: int, param: str) -> TensorType:
    """`ttype` with a dim (of size `dim`, symbolic name `param`) inserted at `axis`."""
    dims, params = list(ttype.get_shape()), dim_params(ttype)
    dims.insert(axis, dim)
    params.insert(axis, param)
    return symbolic_tensor_type(ttype.get_element_type(), dims, params)


def _rank(value: SSAValue, refuse: Callable[[str], Exception]) -> int:
    if not isinstance(value.type, TensorType):
        raise refuse(f"a scan input has no known rank ({value.type})")
    return value.type.get_num_dims()


def appended_to(op: OnnxOp) -> list[int]:
    """Per scan output of a Loop, the loop-carried value whose initial rows it
    follows, concatenated along axis 0, or -1 where it is stacked as ONNX says
    (`APPENDED_TO_ATTR`, set by the importer: frontend/collected_rows.py)."""
    carried = len(onnx_inputs(op)) - 2
    attr = op.attributes.get(APPENDED_TO_ATTR)
    return [a.value.data for a in attr.data] if attr is not None else [-1] * (len(op.results) - carried)
