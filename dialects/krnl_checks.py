"""Checks of input data that the run must pass: `krnl.check_indices`.

Gather, GatherElements, GatherND and the scatters read positions from a tensor
the caller gives (token ids into an embedding table, say). A position outside
its dim would read or write outside the buffer: a wrong answer or a crash.
onnxruntime refuses such a run; so does onnxc: before the nest that uses them,
`krnl.check_indices` makes the run return ONNXC_ERR_INDEX, naming the node
(docs/abi.md), if any index is outside [-size, size).

    krnl.check_indices %indices, %n {node = "emb", op_type = "Gather"} : memref<1x128xi64>
    krnl.check_indices %nd, %d0, %d1 {node = "g", op_type = "GatherND"} : memref<5x2xi64>

With several sizes, element p of the flattened indices is checked against
sizes[p % len(sizes)] (GatherND's last dim names one index per data dim).
"""

from __future__ import annotations

from xdsl.dialects.builtin import IndexType, IntegerType, MemRefType, StringAttr
from xdsl.ir import SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    prop_def,
    var_operand_def,
)
from xdsl.utils.exceptions import VerifyException


@irdl_op_definition
class CheckIndicesOp(IRDLOperation):
    """Return ONNXC_ERR_INDEX from the entry point if an element of `indices` lies
    outside [-size, size) of its size; only in the graph function, outside loop nests."""

    name = "krnl.check_indices"

    indices = operand_def(MemRefType)
    sizes = var_operand_def(IndexType)
    node = prop_def(StringAttr)
    op_type = prop_def(StringAttr)

    assembly_format = "$indices `,` $sizes attr-dict `:` type($indices)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, indices: SSAValue, sizes: list[SSAValue], node: str, op_type: str):
        super().__init__(
            operands=[indices, sizes], properties={"node": StringAttr(node), "op_type": StringAttr(op_type)}
        )

    def verify_(self) -> None:
        if not isinstance(self.indices.type.element_type, IntegerType) or not self.sizes:
            raise VerifyException(f"{self.name}: integer indices and at least one size, not {self.indices.type}")


OPS = [CheckIndicesOp]
