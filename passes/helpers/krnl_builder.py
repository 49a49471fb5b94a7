"""Building blocks for emitting krnl-level code: constants, typed arithmetic, loops.

Lowerings say *what* to compute; `KernelBuilder` picks the arith op for the
element type at hand (float, signless integer or index), folds index
arithmetic on constants so that static geometry leaves no code behind, and
builds krnl loop nests with their schedules and scf loops with accumulators.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from xdsl.builder import Builder
from xdsl.dialects import arith, math, memref, scf
from xdsl.dialects.builtin import (
    BFloat16Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    Signedness,
    UnrealizedConversionCastOp,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from onnxc.dialects.krnl import BlockOp, DefineLoopsOp, IterateOp, PermuteOp, YieldOp
from onnxc.dialects.types import is_float, is_low_precision
from onnxc.passes.helpers import low_precision

OpT = TypeVar("OpT", bound=Operation)
Bound = int | SSAValue
"""An index: a Python int where it is known, materialized as a constant only where an op needs it."""

ReductionStep = Callable[["KernelBuilder", list[Bound], SSAValue], SSAValue]
"""(builder in the innermost loop, induction vars, accumulator) -> next accumulator."""

# (float op, signed/signless integer op) per arithmetic operation.
_BINARY_OPS: dict[str, tuple[type[Operation] | None, type[Operation]]] = {
    "add": (arith.AddfOp, arith.AddiOp),
    "sub": (arith.SubfOp, arith.SubiOp),
    "mul": (arith.MulfOp, arith.MuliOp),
    "div": (arith.DivfOp, arith.DivSIOp),
    "max": (arith.MaximumfOp, arith.MaxSIOp),
    "min": (arith.MinimumfOp, arith.MinSIOp),
    "rem": (None, arith.RemSIOp),
    "and": (None, arith.AndIOp),
    "or": (None, arith.OrIOp),
    "xor": (None, arith.XOrIOp),
    "shl": (None, arith.ShLIOp),
    "shr": (None, arith.ShRSIOp),  # arithmetic for signed, logical for unsigned
}

# The integer ops that differ for unsigned operands.
_UNSIGNED_OPS: dict[str, type[Operation]] = {
    "div": arith.DivUIOp,
    "rem": arith.RemUIOp,
    "max": arith.MaxUIOp,
    "min": arith.MinUIOp,
    "shr": arith.ShRUIOp,
}

# comparison -> (ordered float predicate, signed int predicate, unsigned int predicate);
# "ne" is unordered for floats: NaN != NaN.
_COMPARISONS: dict[str, tuple[str, str, str]] = {
    "eq": ("oeq", "eq", "eq"),
    "ne": ("une", "ne", "ne"),
    "lt": ("olt", "slt", "ult"),
    "le": ("ole", "sle", "ule"),
    "gt": ("ogt", "sgt", "ugt"),
    "ge": ("oge", "sge", "uge"),
}


def _truncating_div(x: int, y: int) -> int:
    """Integer division rounding toward zero, as arith.divsi."""
    quotient = abs(x) // abs(y)
    return quotient if (x < 0) == (y < 0) else -quotient


# Python evaluation of the integer ops, for folding index arithmetic on constants.
_FOLD_INDEX: dict[str, Callable[[int, int], int]] = {
    "add": lambda x, y: x + y,
    "sub": lambda x, y: x - y,
    "mul": lambda x, y: x * y,
    "div": _truncating_div,
    "rem": lambda x, y: x - y * _truncating_div(x, y),
    "max": max,
    "min": min,
}


def _fold_index(kind: str, lhs: Bound, rhs: Bound) -> Bound | None:
    """The result of index arithmetic where it is known without emitting an op."""
    x = lhs if isinstance(lhs, int) else constant_value(lhs)
    y = rhs if isinstance(rhs, int) else constant_value(rhs)
    if x is not None and y is not None and not (kind in ("div", "rem") and y == 0):
        return _FOLD_INDEX[kind](x, y)
    if (y == 0 and kind in ("add", "sub")) or (y == 1 and kind in ("mul", "div")):
        return lhs
    if (x == 0 and kind == "add") or (x == 1 and kind == "mul"):
        return rhs
    if ((x == 0 or y == 0) and kind == "mul") or (y == 1 and kind == "rem"):
        return 0
    return None


def is_signless_int(element: Attribute) -> bool:
    """Integer element types the arith dialect computes on (bool excluded)."""
    return (
        isinstance(element, IntegerType) and element.signedness.data == Signedness.SIGNLESS and element.width.data > 1
    )


def is_unsigned(element: Attribute) -> bool:
    return isinstance(element, IntegerType) and element.signedness.data == Signedness.UNSIGNED


def unsigned(element: Attribute) -> Attribute:
    """The unsigned integer type of the width of `element` (i8 -> ui8)."""
    return IntegerType(element.width.data, Signedness.UNSIGNED)


def signless(element: Attribute) -> Attribute:
    """The arith type computing on values of `element` (ui8 -> i8, others unchanged)."""
    return IntegerType(element.width.data) if is_unsigned(element) else element


def constant_value(value: SSAValue) -> int | float | None:
    """The value of an `arith.constant` scalar, or None for anything else."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr | FloatAttr):
        return owner.value.value.data
    return None


class ConstantPool:
    """Scalar constants of one function, each defined once at the function's
    entry, where it dominates every use in every loop nest."""

    def __init__(self, entry: Block):
        self._entry = entry
        self._last: arith.ConstantOp | None = None
        self._values: dict[tuple[Attribute, str], SSAValue] = {}

    def get(self, attr: IntegerAttr | FloatAttr) -> SSAValue:
        key = (attr.type, repr(attr.value.data))  # repr tells -0.0 from 0.0
        if key not in self._values:
            op = arith.ConstantOp(attr)
            where = InsertPoint.at_start(self._entry) if self._last is None else InsertPoint.after(self._last)
            Rewriter.insert_op(op, where)
            self._last = op
            self._values[key] = op.result
        return self._values[key]


class KernelBuilder:
    """Inserts ops at one point; helpers return the value they built (index arithmetic
    returns a Python int when the result is known). With a `ConstantPool`,
    constants come from the pool instead of being emitted in place."""

    def __init__(
        self, insertion_point: InsertPoint, constants: ConstantPool | None = None, location: Attribute | None = None
    ):
        self._builder = Builder(insertion_point)
        self._constants = constants
        self._location = location

    def located(self, location: Attribute) -> KernelBuilder:
        """A builder at this one's point giving the ops it inserts `location` (the
        node an op computed in another node's nest comes from)."""
        return KernelBuilder(self._builder.insertion_point, self._constants, location)

    def at_end(self, block: Block) -> KernelBuilder:
        """A builder appending to `block`, sharing this one's constants."""
        return KernelBuilder(InsertPoint.at_end(block), self._constants)

    def before(self, op: Operation) -> KernelBuilder:
        """A builder inserting before `op`, sharing this one's constants."""
        return KernelBuilder(InsertPoint.before(op), self._constants)

    def insert(self, op: OpT) -> OpT:
        if self._location is not None:
            for nested in op.walk():
                nested.location = self._location
        return self._builder.insert(op)

    # ------------------------------------------------------------------ constants

    def index(self, value: Bound) -> SSAValue:
        """An index value; ints become constants."""
        if isinstance(value, SSAValue):
            return value
        return self.constant(value, IndexType())

    def constant(self, value: float | int | bool, element_type: Attribute) -> SSAValue:
        """A scalar constant of an element type (float, integer, bool or index); arith
        constants are signless, so an unsigned one is the signless bits, cast."""
        if is_unsigned(element_type):
            bits = int(value) % 2**element_type.width.data
            return self.reinterpret(self.constant(bits, signless(element_type)), element_type)
        if is_float(element_type):
            attr = FloatAttr(float(value), element_type)
        else:
            attr = IntegerAttr(int(value), element_type)
        if self._constants is not None:
            return self._constants.get(attr)
        return self.insert(arith.ConstantOp(attr)).result

    def lowest(self, element_type: Attribute) -> SSAValue:
        """The identity of max: -inf for floats, the minimum of an integer type."""
        if is_float(element_type):
            return self.constant(float("-inf"), element_type)
        if is_unsigned(element_type) or element_type.width.data == 1:
            return self.constant(0, element_type)
        return self.constant(-(2 ** (element_type.width.data - 1)), element_type)

    def highest(self, element_type: Attribute) -> SSAValue:
        """The identity of min: +inf for floats, the maximum of an integer type."""
        if is_float(element_type):
            return self.constant(float("inf"), element_type)
        width = element_type.width.data
        if is_unsigned(element_type) or width == 1:
            return self.constant(2**width - 1, element_type)
        return self.constant(2 ** (width - 1) - 1, element_type)

    def reinterpret(self, value: SSAValue, element_type: Attribute) -> SSAValue:
        """The same bits as another integer type of the same width (ui8 <-> i8)."""
        if value.type == element_type:
            return value
        return self.insert(UnrealizedConversionCastOp.get([value], [element_type])).results[0]

    # --------------------------------------------------------------------- memory

    def alloc(self, memref_type: MemRefType, dynamic_sizes: Sequence[SSAValue] = ()) -> SSAValue:
        """A buffer; its dims known at run time only are `dynamic_sizes`, in order."""
        return self.insert(memref.AllocOp(list(dynamic_sizes), [], memref_type)).memref

    def load(self, buffer: SSAValue, indices: Sequence[Bound]) -> SSAValue:
        return self.insert(memref.LoadOp.get(buffer, [self.index(i) for i in indices])).res

    def store(self, value: SSAValue, buffer: SSAValue, indices: Sequence[Bound]) -> None:
        self.insert(memref.StoreOp.get(value, buffer, [self.index(i) for i in indices]))

    # ----------------------------------------------------------------- arithmetic

    def binary(self, kind: str, lhs: Bound, rhs: Bound) -> Bound:
        """`kind` in add/sub/mul/div/rem/max/min, for floats, signless integers and index.

        Index arithmetic folds: known operands give a Python int, and identities
        (x+0, x-0, x*1, x/1, x*0, x%1) emit nothing, so static geometry costs no code.
        """
        if isinstance(lhs, int) or isinstance(rhs, int) or isinstance(lhs.type, IndexType):
            folded = _fold_index(kind, lhs, rhs)
            if folded is not None:
                return folded
            lhs, rhs = self.index(lhs), self.index(rhs)
        float_op, int_op = _BINARY_OPS[kind]
        element = lhs.type
        op_class = float_op if is_float(element) else int_op
        if is_unsigned(element) or element == i1:  # bool max/min are or/and
            op_class = _UNSIGNED_OPS.get(kind, int_op)
        if op_class is None:
            raise TypeError(f"no arith op for '{kind}' on {element}")
        arith_type = signless(element)
        result = self.insert(op_class(self.reinterpret(lhs, arith_type), self.reinterpret(rhs, arith_type))).result
        return self.reinterpret(result, element)

    def add(self, lhs: Bound, rhs: Bound) -> Bound:
        return self.binary("add", lhs, rhs)

    def running_sum(self, total: SSAValue, value: SSAValue) -> SSAValue:
        """total + value for the running total of a sum over a loop: float additions
        may be reassociated (fastmath `reassoc`), so that LLVM vectorizes the loop
        into partial sums (the result then differs from the in-order sum by rounding)."""
        if not is_float(total.type):
            return self.add(total, value)
        return self.insert(
            arith.AddfOp(total, value, flags=arith.FastMathFlagsAttr([arith.FastMathFlag.REASSOC]))
        ).result

    def sub(self, lhs: Bound, rhs: Bound) -> Bound:
        return self.binary("sub", lhs, rhs)

    def mul(self, lhs: Bound, rhs: Bound) -> Bound:
        return self.binary("mul", lhs, rhs)

    def div(self, lhs: Bound, rhs: Bound) -> Bound:
        """Float division, or integer division truncating toward zero."""
        return self.binary("div", lhs, rhs)

    def max(self, lhs: Bound, rhs: Bound) -> Bound:
        """Maximum; for floats NaN propagates (as numpy.maximum)."""
        return self.binary("max", lhs, rhs)

    def min(self, lhs: Bound, rhs: Bound) -> Bound:
        return self.binary("min", lhs, rhs)

    def pool_max(self, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        """`max`, NaN propagating, that may give either of -0.0 and +0.0 when they meet
        (fastmath `nsz`, as a pool's maximum may): AVX-512 then takes 3 instructions, not 6
        (MaxPool 3x3 of 64x112x112: 0.31 -> 0.28 ms)."""
        if not is_float(lhs.type):
            return self.max(lhs, rhs)
        nsz = arith.FastMathFlagsAttr([arith.FastMathFlag.NO_SIGNED_ZEROS])
        return self.insert(arith.MaximumfOp(lhs, rhs, flags=nsz)).result

    def maxnum(self, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        """Float maximum for a value whose caller does not care which it gets when an
        operand is NaN (fastmath `nnan`): the loop's reduction then vectorizes to plain
        vector maxima and a log-step horizontal one. Without the flag LLVM tested each
        vector for NaN and reduced it lane by lane, a serial chain of 16 scalar maxima
        per row on AVX-512 (Softmax over rows of 197: 1.68x onnxruntime's time -> 1.13x)."""
        nnan = arith.FastMathFlagsAttr([arith.FastMathFlag.NO_NANS])
        return self.insert(arith.MaxnumfOp(lhs, rhs, flags=nnan)).result

    def rem(self, lhs: Bound, rhs: Bound) -> Bound:
        """Integer remainder with the sign of the dividend (integers and index only)."""
        return self.binary("rem", lhs, rhs)

    def ceil_div(self, numerator: Bound, denominator: int) -> Bound:
        """Ceiling division of a non-negative index by a positive constant."""
        return self.div(self.add(numerator, denominator - 1), denominator)

    def square(self, value: SSAValue) -> SSAValue:
        return self.mul(value, value)

    def neg(self, value: SSAValue) -> SSAValue:
        if is_float(value.type):
            return self.insert(arith.NegfOp(value)).result
        return self.sub(self.constant(0, value.type), value)

    def compare(self, kind: str, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        """lhs <kind> rhs as i1, kind in eq/ne/lt/le/gt/ge; ordered for floats
        (false if either is NaN) except ne; unsigned integers compare unsigned."""
        float_predicate, signed_predicate, unsigned_predicate = _COMPARISONS[kind]
        element = lhs.type
        if is_float(element):
            return self.insert(arith.CmpfOp(lhs, rhs, float_predicate)).result
        predicate = unsigned_predicate if is_unsigned(element) else signed_predicate
        arith_type = signless(element)
        lhs, rhs = self.reinterpret(lhs, arith_type), self.reinterpret(rhs, arith_type)
        return self.insert(arith.CmpiOp(lhs, rhs, predicate)).result

    def less_than(self, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        """lhs < rhs as i1 (ordered for floats: false if either is NaN)."""
        return self.compare("lt", lhs, rhs)

    def is_nan(self, value: SSAValue) -> SSAValue:
        return self.insert(arith.CmpfOp(value, value, "uno")).result

    def select(self, condition: SSAValue, if_true: SSAValue, if_false: SSAValue) -> SSAValue:
        return self.insert(arith.SelectOp(condition, if_true, if_false)).result

    def abs(self, value: SSAValue) -> SSAValue:
        if is_float(value.type):
            return self.insert(math.AbsFOp(value)).result
        return self.select(self.less_than(value, self.constant(0, value.type)), self.neg(value), value)

    def compare_index(self, predicate: str, lhs: Bound, rhs: Bound) -> SSAValue:
        """An arith.cmpi (eq, ne, slt, sle, sgt, sge, ult...) of integers or indices as
        i1; a Python int operand becomes an index constant."""
        lhs, rhs = (self.index(v) if isinstance(v, int) else v for v in (lhs, rhs))
        return self.insert(arith.CmpiOp(lhs, rhs, predicate)).result

    def and_(self, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        return self.insert(arith.AndIOp(lhs, rhs)).result

    def or_(self, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        return self.insert(arith.OrIOp(lhs, rhs)).result

    def not_(self, condition: SSAValue) -> SSAValue:
        """The negation of an i1."""
        return self.insert(arith.XOrIOp(condition, self.constant(1, i1))).result

    def select_index(self, condition: SSAValue, if_true: Bound, if_false: Bound) -> SSAValue:
        """`select` of two indices (Python ints become constants)."""
        return self.select(condition, self.index(if_true), self.index(if_false))

    def to_index(self, value: SSAValue) -> SSAValue:
        """A signless integer (or float, truncated toward zero) scalar as an index."""
        if isinstance(value.type, IndexType):
            return value
        if is_float(value.type):
            value = self.insert(arith.FPToSIOp(value, i64)).result
        return self.insert(arith.IndexCastOp(value, IndexType())).result

    def from_index(self, value: Bound, element_type: Attribute) -> SSAValue:
        """An index as a signless integer of `element_type`."""
        return self.insert(arith.IndexCastOp(self.index(value), element_type)).result

    def as_signless(self, value: SSAValue) -> SSAValue:
        """An unsigned integer reinterpreted as the signless integer of its width
        (what arith ops take); other values unchanged."""
        return self.reinterpret(value, signless(value.type))

    def if_then(self, condition: SSAValue) -> KernelBuilder:
        """An scf.if without results; returns a builder in its then-block."""
        then_block = Block()
        terminator = scf.YieldOp()
        then_block.add_op(terminator)
        self.insert(scf.IfOp(condition, [], Region(then_block)))
        return self.before(terminator)

    def math(self, op_class: type[Operation], *operands: SSAValue) -> SSAValue:
        """A `math` dialect op (exp, log, sqrt, tanh, powf...) on float operands."""
        return self.insert(op_class(*operands)).result

    def number(self, value: Bound, element_type: Attribute) -> SSAValue:
        """An index (a count: a Python int, or a value known at run time) as a number of `element_type`."""
        if isinstance(value, int):
            return self.constant(value, element_type)
        return self.index_to_float(value, element_type) if is_float(element_type) else self.from_index(value, element_type)

    def index_to_float(self, value: SSAValue, float_type: Attribute) -> SSAValue:
        as_int = self.insert(arith.IndexCastOp(value, i64)).result
        return self.insert(arith.SIToFPOp(as_int, float_type)).result

    def convert(
        self, value: SSAValue, element_type: Attribute, *, saturate: bool = True, round_mode: str = "up"
    ) -> SSAValue:
        """Convert a scalar between numeric types (float, signed or unsigned integer,
        bool, and the low-precision storage types) as ONNX Cast does: floats to
        integers truncate toward zero, anything to bool is `!= 0`, bool to a number
        is 0 or 1, integers wrap. `saturate` and `round_mode` are Cast's attributes,
        for the float8 targets (passes/low_precision.py has their rules); a
        low-precision value goes through f32 (or i8), which holds it exactly."""
        source = value.type
        if source == element_type:
            return value
        if is_low_precision(source):
            wide = low_precision.to_wide(self, value)
            return self.convert(wide, element_type, saturate=saturate, round_mode=round_mode)
        if is_low_precision(element_type):
            return low_precision.from_wide(self, value, element_type, saturate=saturate, round_mode=round_mode)
        if element_type == i1:
            return self.compare("ne", value, self.constant(0, source))
        if is_float(source) and is_float(element_type):
            if _float_rank(source) < _float_rank(element_type):
                return self.insert(arith.ExtFOp(value, element_type)).result
            return self.insert(arith.TruncFOp(value, element_type)).result
        unsigned_source = is_unsigned(source) or source == i1
        if is_float(element_type):
            op_class = arith.UIToFPOp if unsigned_source else arith.SIToFPOp
            return self.insert(op_class(self.reinterpret(value, signless(source)), element_type)).result
        target = signless(element_type)
        if is_float(source):
            op_class = arith.FPToUIOp if is_unsigned(element_type) else arith.FPToSIOp
            return self.reinterpret(self.insert(op_class(value, target)).result, element_type)
        value = self.reinterpret(value, signless(source))
        if source.width.data > target.width.data:
            value = self.insert(arith.TruncIOp(value, target)).result
        elif source.width.data < target.width.data:
            op_class = arith.ExtUIOp if unsigned_source else arith.ExtSIOp
            value = self.insert(op_class(value, target)).result
        return self.reinterpret(value, element_type)

    # ---------------------------------------------------------------------- loops

    def loops(self, upper_bounds: Sequence[Bound]) -> LoopNest:
        """krnl loops over [0, ub) each, to be scheduled and then iterated."""
        return LoopNest(self, upper_bounds)

    def loop_nest(self, upper_bounds: Sequence[Bound]) -> tuple[list[SSAValue], KernelBuilder]:
        """An unscheduled krnl loop nest; rank 0 means the body runs once, right here."""
        if not upper_bounds:
            return [], self
        return self.loops(upper_bounds).iterate()

    def for_nest(self, ranges: Sequence[tuple[Bound, Bound]]) -> tuple[list[Bound], KernelBuilder]:
        """Nested scf.for loops over [lo, hi) each; returns ivs and a builder in the body.
        A range known to hold one point is no loop: its iv is that point."""
        ivs: list[Bound] = []
        builder = self
        for lower, upper in ranges:
            if _single_point(lower, upper):
                ivs.append(lower)
                continue
            body = Block(arg_types=[IndexType()])
            terminator = scf.YieldOp()
            body.add_op(terminator)
            builder.insert(scf.ForOp(builder.index(lower), builder.index(upper), builder.index(1), [], body))
            ivs.append(body.args[0])
            builder = builder.before(terminator)
        return ivs, builder

    def reduce(
        self,
        ranges: Sequence[tuple[Bound, Bound]],
        init: SSAValue,
        step: ReductionStep,
        outer_ivs: Sequence[Bound] = (),
    ) -> SSAValue:
        """Fold `step` over nested scf.for loops carrying one accumulator (iter_args).
        A range known to hold one point is no loop: its iv is that point."""
        if not ranges:
            return step(self, list(outer_ivs), init)
        (lower, upper), inner_ranges = ranges[0], ranges[1:]
        if _single_point(lower, upper):
            return self.reduce(inner_ranges, init, step, [*outer_ivs, lower])
        body = Block(arg_types=[IndexType(), init.type])
        inner = self.at_end(body)
        iv, accumulator = body.args
        result = inner.reduce(inner_ranges, accumulator, step, [*outer_ivs, iv])
        inner.insert(scf.YieldOp(result))
        loop = self.insert(scf.ForOp(self.index(lower), self.index(upper), self.index(1), [init], body))
        return loop.res[0]


def _float_rank(element: Attribute) -> int:
    """Order of float types by range and precision (bf16 and f16 both below f32)."""
    return {16: 0, 32: 1, 64: 2}[element.bitwidth] if not isinstance(element, BFloat16Type) else 0


def _single_point(lower: Bound, upper: Bound) -> bool:
    return isinstance(lower, int) and isinstance(upper, int) and upper == lower + 1


class LoopNest:
    """krnl loops under construction: define, then optionally block and permute, then iterate.

    Mirrors the krnl ops one to one, so a lowering reads like its schedule:

        nest = builder.loops([M, N, K])
        i, j, k = nest.loops
        j_outer, j_inner = nest.block(j, 64)
        nest.permute([j_outer, i, k, j_inner])
        (iv, jv, kv), body = nest.iterate()
    """

    def __init__(self, builder: KernelBuilder, upper_bounds: Sequence[Bound]):
        if not upper_bounds:
            raise ValueError("a krnl loop nest needs at least one loop")
        self._builder = builder
        self._upper_bounds = [bound if isinstance(bound, int) else builder.index(bound) for bound in upper_bounds]
        self.loops: list[SSAValue] = list(builder.insert(DefineLoopsOp(len(upper_bounds))).loops)
        self._leaves = list(self.loops)

    def block(self, loop: SSAValue, tile_size: int) -> tuple[SSAValue, SSAValue]:
        """Tile `loop` (a current leaf): returns (outer, inner) loops replacing it."""
        blocked = self._builder.insert(BlockOp(loop, tile_size))
        position = self._leaves.index(loop)
        self._leaves[position : position + 1] = [blocked.outer, blocked.inner]
        return blocked.outer, blocked.inner

    def permute(self, nest_order: Sequence[SSAValue]) -> None:
        """Nest the current leaf loops in `nest_order`, outermost first (no op
        when that is the order they are in)."""
        if sorted(map(id, nest_order)) != sorted(map(id, self._leaves)):  # same loops, any order
            raise ValueError("permute must list every leaf loop exactly once")
        positions = [list(nest_order).index(leaf) for leaf in self._leaves]
        if positions != sorted(positions):
            self._builder.insert(PermuteOp(self._leaves, positions))

    def iterate(self) -> tuple[list[SSAValue], KernelBuilder]:
        """Emit the krnl.iterate; returns the original loops' ivs and a builder in its body."""
        iterate = self._builder.insert(IterateOp(self._leaves, self.loops, [0] * len(self.loops), self._upper_bounds))
        terminator = YieldOp()
        iterate.body.block.add_op(terminator)
        return list(iterate.induction_vars), self._builder.before(terminator)
