"""Dialects of onnxc: `onnx` (graph level) and `krnl` (loops with schedules).

Loop-level IR after krnl uses xDSL's own scf, memref, arith and math dialects.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func
from xdsl.dialects.math import Math
from xdsl.dialects.memref import MemRef
from xdsl.dialects.scf import Scf
from xdsl.ir import Dialect


def all_dialects() -> list[Dialect]:
    from onnxc.dialects import krnl, krnl_checks, krnl_growth, krnl_int8, krnl_matmul, krnl_scratch, krnl_strings
    from onnxc.dialects.onnx import ONNX

    ops = krnl.OPS + krnl_matmul.OPS + krnl_int8.OPS + krnl_growth.OPS + krnl_checks.OPS + krnl_strings.OPS
    ops += krnl_scratch.OPS
    krnl_dialect = Dialect("krnl", ops, krnl.ATTRIBUTES + krnl_matmul.ATTRIBUTES)
    return [Builtin, Func, Arith, Math, MemRef, Scf, ONNX, krnl_dialect]


def make_context() -> Context:
    """A context knowing every dialect the pipeline produces."""
    ctx = Context()
    for dialect in all_dialects():
        ctx.load_dialect(dialect)
    return ctx
