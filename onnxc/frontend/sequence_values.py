"""What the importer holds for a sequence, optional or map value: never an IR value.

The C ABI passes tensors only, so sequences and optionals are resolved while
importing (sequences.py): a sequence of known length is the tuple of its tensors,
an optional of known presence its content. A sequence whose length only the run
decides is, wherever one arises (SplitToSequence of a run-time dim into pieces
of one, the values a run-time Loop collects: collected_rows.py), the slices of
one tensor along one axis: that tensor, read by tensor ops (Shape, Gather,
Transpose) and returned as a graph output whole, with the axis in the signature
so that `Session` splits it (docs/abi.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import SSAValue


@dataclass(frozen=True)
class TensorSequence:
    """A sequence value of known length: the SSA values of its tensors."""

    items: tuple[SSAValue, ...]


@dataclass(frozen=True)
class SlicedSequence:
    """A sequence of run-time length: the slices of `values` along `axis`, in order, of
    `size` each (the last may be shorter), with the axis kept (`keepdims`) or, slices
    of one, without it."""

    values: SSAValue
    axis: int
    keepdims: bool
    size: int = 1


@dataclass(frozen=True)
class TensorOptional:
    """An optional value of known presence: its content (a tensor or sequence) or None."""

    content: SSAValue | TensorSequence | SlicedSequence | None


@dataclass(frozen=True)
class MapSequence:
    """ZipMap's sequence of maps, one per row of `values` [N, C]: key `keys[c]` maps to
    column c. Only a graph output may be one: the library returns `values`, and
    `Session` builds the maps from the keys recorded in the signature (docs/abi.md)."""

    values: SSAValue
    keys: tuple[int, ...] | tuple[str, ...]


def sequence_item_name(name: str, index: int) -> str:
    """The name of the tensor that carries item `index` of sequence input or output `name`."""
    return f"{name}[{index}]"
