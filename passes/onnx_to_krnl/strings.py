"""String ops whose results are not strings: RegexFullMatch, and Equal on strings
(logic.py's comparison defers to `string_equality`).

String elements are (pointer, length) pairs (dialects/types.py); the kernels read
their bytes with krnl.string_size and krnl.string_byte (passes/helpers/
string_kernels.py). A pattern is compiled to a DFA at compile time
(passes/helpers/regex_dfa.py): one table lookup per byte at run time.
"""

from __future__ import annotations

from xdsl.dialects.builtin import i8, i32
from xdsl.ir import SSAValue

from onnxc.dialects.onnx import OnnxOp
from onnxc.dialects.types import is_string
from onnxc.passes.helpers.krnl_builder import KernelBuilder
from onnxc.passes.helpers.regex_dfa import RegexError, compile_regex
from onnxc.passes.helpers.string_kernels import string_byte, string_size, strings_equal
from onnxc.passes.onnx_to_krnl.common import GraphLowering, lowers, shape_of, weight_buffer
from onnxc.passes.onnx_to_krnl.fusion import ScalarOp, broadcast_reads


def string_input(g: GraphLowering, op: OnnxOp, index: int) -> SSAValue:
    """Input `index`, which must be a string tensor."""
    x = g.input(op, index)
    if not is_string(x.type.get_element_type()):
        raise g.unsupported(op, f"element type {x.type.get_element_type()} where strings are expected")
    return x


def string_equality(g: GraphLowering, op: OnnxOp) -> ScalarOp:
    """Equal on two string tensors, broadcast: the same bytes."""
    for index in (0, 1):
        string_input(g, op, index)
    return ScalarOp(broadcast_reads(g, op), lambda b, xs: strings_equal(b, xs[0], xs[1]))


@lowers("RegexFullMatch", run_time_dims=True)
def lower_regex_full_match(g: GraphLowering, op: OnnxOp) -> None:
    """Whether each string matches the whole pattern."""
    x, out = string_input(g, op, 0), g.result(op)
    pattern = op.attr("pattern")
    try:
        dfa = compile_regex(pattern)
    except RegexError as error:
        raise g.unsupported(op, f"pattern {pattern!r}: {error}") from None
    transitions = weight_buffer(g, op, dfa.transitions, i32, "regex_transitions")
    accepting = weight_buffer(g, op, dfa.accepting.view("int8"), i8, "regex_accepting")
    ivs, b = g.top.loop_nest(shape_of(x))
    string = b.load(x, ivs)

    def step(inner: KernelBuilder, positions: list, state: SSAValue) -> SSAValue:
        byte = inner.to_index(string_byte(inner, string, positions[0]))
        return inner.to_index(inner.load(transitions, [state, byte]))

    state = b.reduce([(0, string_size(b, string))], b.index(0), step)
    b.store(b.compare("ne", b.load(accepting, [state]), b.constant(0, i8)), out, ivs)
