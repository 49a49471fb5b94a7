"""Scratch memory: one arena per graph function, planned by liveness at compile time.

Every `memref.alloc` of the function gets an offset in the arena; buffers
whose live ranges overlap get disjoint ranges. The graph function takes the
calling thread's arena from the runtime (`THREAD_ARENA`), sized here, so a run
allocates nothing (outlining.py); the runtime keeps it, growing it only when
a run needs more.

Buffers with dims known at run time only are planned with symbolic sizes: a
size is a coefficient times a unit, the unit a product of the run-time dims
(`N*S` for a `memref<?x?x768xf32>` of N x S) traced through the index
arithmetic that computed them. Buffers of one unit share a region planned
exactly as the static one, in bytes per unit; the regions follow the static
part, each sized at run time as its planned bytes times its unit's value.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Operation, SSAValue, Use

from onnxc.codegen.llvm_types import element_size, memref_nbytes
from onnxc.codegen.weights import align_up
from onnxc.dialects.krnl import DynamicOutputOp, ViewOp
from onnxc.dialects.krnl_checks import CheckIndicesOp
from onnxc.dialects.krnl_int8 import QMatmulOp
from onnxc.dialects.krnl_matmul import MatmulOp
from onnxc.dialects.krnl_strings import StringOutputOp
from onnxc.dialects.symbolic import Dim
from onnxc.errors import CompileError

_READERS = memref.LoadOp | memref.StoreOp | MatmulOp | QMatmulOp | DynamicOutputOp | CheckIndicesOp | StringOutputOp
"""The ops that may use an arena buffer."""

ARENA_ALIGNMENT = 64
DYNAMIC_ALIGNMENT = 16
"""Buffers of a run-time size are aligned to this many bytes (their coefficient is a multiple of it)."""
THREAD_ARENA = "onnxc_thread_arena"
"""Runtime support: the calling thread's arena of at least the given bytes (NULL if it cannot be had),
64-byte aligned at least, kept for the thread's later runs."""


@dataclass
class Region:
    """Buffers sized `coefficient * unit` bytes: offsets in bytes per unit."""

    unit: Dim
    offsets: dict[memref.AllocOp, int] = field(default_factory=dict)
    size: int = 0
    live: tuple[int, int] = (0, 0)
    """From the first of its buffers' allocs to the last of their uses (top-level positions)."""
    slot: int = 0
    """Regions of one slot live at different times and share its memory (see `plan_arena`)."""


@dataclass
class ArenaPlan:
    offsets: dict[memref.AllocOp, int]
    """Static buffers' offsets in bytes."""
    size: int
    """Bytes of the static part."""
    regions: list[Region]
    """Run-time sized buffers, in regions after the static part, by slot."""
    leaves: dict[str, SSAValue]
    """The index values the regions' units are products of, by their name in the units."""


def plan_arena(function: func.FuncOp) -> ArenaPlan:
    """Offsets of the function's allocs in one arena.

    A buffer is live from its alloc to its last use, or the last use of a view
    of it (`krnl.view`, a Concat input computed into the Concat's buffer), all
    counted at their top-level ancestor op; buffers whose live ranges overlap
    get disjoint aligned ranges (first fit, in program order). Buffers of a run-time size
    share a region when their sizes are multiples of one run-time unit (a CNN's stage: its
    image's height times width), with offsets in that unit; regions whose buffers all live at
    different times (the stages, one after the other) share a slot, as large as its largest
    region at run time (a MobileNetV2 of free height and width at 224x224: 40 MB of arena, a
    region per stage, where static sizes need 15).
    """
    body = function.body.block
    position = {op: i for i, op in enumerate(body.ops)}

    def top_level_position(op: Operation) -> int:
        while op.parent_block() is not body:
            op = op.parent_op()
        return position[op]

    static = _FirstFit(ARENA_ALIGNMENT)
    regions: dict[Dim, tuple[Region, _FirstFit]] = {}
    leaves: dict[SSAValue, str] = {}
    for alloc in function.walk():
        if not isinstance(alloc, memref.AllocOp):
            continue
        first = top_level_position(alloc)
        last = first
        for use in _uses_through_views(alloc.memref):
            if not isinstance(use.operation, _READERS):
                raise CompileError(f"codegen: a buffer may only be loaded and stored, not used by {use.operation.name}")
            last = max(last, top_level_position(use.operation))
        if not alloc.dynamic_sizes:
            static.place(alloc, first, last, memref_nbytes(alloc.memref.type))
            continue
        coefficient, unit = _symbolic_size(alloc, leaves)
        region, planner = regions.setdefault(unit, (Region(unit, live=(first, last)), _FirstFit(DYNAMIC_ALIGNMENT)))
        planner.place(alloc, first, last, coefficient)
        region.live = (min(region.live[0], first), max(region.live[1], last))
    for region, planner in regions.values():
        region.offsets, region.size = planner.offsets, planner.size
    return ArenaPlan(
        static.offsets, static.size, _slotted([r for r, _ in regions.values()]), {n: v for v, n in leaves.items()}
    )


def _slotted(regions: list[Region]) -> list[Region]:
    """The regions by slot (first fit in the order they begin): each in the first slot whose
    regions all end before it begins."""
    ends: list[int] = []
    for region in sorted(regions, key=lambda r: r.live[0]):
        region.slot = next((slot for slot, end in enumerate(ends) if end < region.live[0]), len(ends))
        if region.slot == len(ends):
            ends.append(region.live[1])
        else:
            ends[region.slot] = region.live[1]
    return sorted(regions, key=lambda r: r.slot)


class _FirstFit:
    """Liveness-based first-fit placement of buffers in one address range."""

    def __init__(self, alignment: int):
        self.alignment = alignment
        self.placed: list[tuple[int, int, int, int]] = []  # (first, last, offset, size)
        self.offsets: dict[memref.AllocOp, int] = {}

    def place(self, alloc: memref.AllocOp, first: int, last: int, size: int) -> None:
        size = align_up(size, self.alignment)
        offset = 0
        overlapping = sorted((o, o + s) for f, l, o, s in self.placed if f <= last and first <= l)
        for start, end in overlapping:
            if offset + size <= start:
                break
            offset = max(offset, end)
        self.placed.append((first, last, offset, size))
        self.offsets[alloc] = offset

    @property
    def size(self) -> int:
        return max((o + s for _, _, o, s in self.placed), default=0)


def _symbolic_size(alloc: memref.AllocOp, leaves: dict[SSAValue, str]) -> tuple[int, Dim]:
    """(coefficient, unit) with the buffer's bytes = coefficient * unit, the unit a
    product of run-time values (or, failing that, a polynomial of them)."""
    memref_type = alloc.memref.type
    static_bytes = element_size(memref_type.element_type)
    for dim in memref_type.get_shape():
        static_bytes *= max(dim, 1)
    dynamic = Dim.const(1)
    for size in alloc.dynamic_sizes:
        dynamic = dynamic * _trace(size, leaves)
    coefficient, unit = (Dim.const(static_bytes) * dynamic).split_coefficient()
    if coefficient > 0:
        return coefficient, unit
    return static_bytes, dynamic


def _trace(value: SSAValue, leaves: dict[SSAValue, str]) -> Dim:
    """An index value as a polynomial of the values it is computed from by add and mul."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return Dim.const(owner.value.value.data)
    if isinstance(owner, arith.AddiOp):
        return _trace(owner.lhs, leaves) + _trace(owner.rhs, leaves)
    if isinstance(owner, arith.MuliOp):
        return _trace(owner.lhs, leaves) * _trace(owner.rhs, leaves)
    return Dim.symbol(leaves.setdefault(value, f"d{len(leaves)}"))


def _uses_through_views(buffer: SSAValue) -> list[Use]:
    """The uses of a buffer and of the views of it (and of theirs), but not the views' own."""
    uses, pending = [], [buffer]
    while pending:
        for use in pending.pop().uses:
            if isinstance(use.operation, ViewOp):
                pending.append(use.operation.result)
            else:
                uses.append(use)
    return uses
