"""The `onnxc_tensor[]` descriptors a call passes to `run_main_graph`, built as few times as
possible: from a template of the signature's static shapes (`_Descriptors`), or, for a call
exactly like an earlier checked one, from that call's plan with only the data pointers left to
write (`_CallPlan`, kept per thread by `_ThreadPlans`). Split from session.py, which checks and
converts what a call is given; imports only numpy, ctypes and the runtime's ABI."""

from __future__ import annotations

import ctypes
import functools
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from onnxc.runtime.library import OnnxcTensor

if TYPE_CHECKING:
    from onnxc.runtime.session import NodeArg


@dataclass
class DynamicOutput:
    """An output whose shape the library decides at run time (ABI version 2): `_invoke`
    sets `array` to a copy of what the library allocated, then frees the library's block."""

    dtype: np.dtype
    rank: int
    array: np.ndarray | None = None


# An array (or a DynamicOutput) and the ONNX element type code to pass with it (bfloat16 arrays are uint16).
TypedArray = tuple[np.ndarray | DynamicOutput, int]


@functools.lru_cache(maxsize=256)
def _shape_buffer(shape: tuple[int, ...]) -> ctypes.Array:
    """A C array of `shape`, shared by every call with that shape (the library only reads
    the shapes of the tensors passed in); a zero-length one still has an address."""
    return (ctypes.c_int64 * len(shape))(*shape)


def _tensor_array(tensors: Sequence[TypedArray]) -> ctypes.Array:
    """`onnxc_tensor[]` describing (array, ONNX type) pairs as they are; the caller keeps the arrays alive."""
    structs = (OnnxcTensor * len(tensors))()
    for struct, (array, onnx_type) in zip(structs, tensors):
        if isinstance(array, DynamicOutput):  # the library fills it in
            struct.rank, struct.dtype = array.rank, onnx_type
            continue
        struct.data = array.ctypes.data
        struct.shape = _shape_buffer(array.shape)  # the struct keeps a reference to it
        struct.rank = array.ndim
        struct.dtype = onnx_type
        struct.reserved = 0
    return structs


class _Descriptors:
    """The `onnxc_tensor[]` of a signature's static shapes, built once: a call copies it and
    fills in the data pointers (building the structs field by field cost ~4 µs a tensor)."""

    def __init__(self, args: Sequence[NodeArg]):
        self._signature = [(arg.shape, arg.onnx_type) for arg in args]  # a symbolic dim never matches
        self._shapes = [_shape_buffer(tuple(d if isinstance(d, int) else 0 for d in arg.shape)) for arg in args]
        structs = (OnnxcTensor * len(args))()
        for struct, arg, shape in zip(structs, args, self._shapes):
            struct.shape, struct.rank, struct.dtype = shape, len(arg.shape), arg.onnx_type
        self._array_type = type(structs)
        self._template = bytes(structs)

    def describe(self, tensors: Sequence[TypedArray]) -> ctypes.Array:
        """`_tensor_array(tensors)`, from the template when the tensors have the signature's shapes and types."""
        if len(tensors) != len(self._signature) or any(
            not isinstance(array, np.ndarray) or array.shape != shape or onnx_type != expected_type
            for (array, onnx_type), (shape, expected_type) in zip(tensors, self._signature)
        ):
            return _tensor_array(tensors)
        structs = self._array_type.from_buffer_copy(self._template)
        for struct, (array, _) in zip(structs, tensors):
            struct.data = array.ctypes.data
        return structs


def _array_data_offset() -> int | None:
    """Where an ndarray object keeps its data pointer: right after the object header, in
    numpy's PyArrayObject_fields (PyArray_DATA in compiled extensions reads it there, so
    numpy cannot move it). Reading it is ~0.15 µs, `array.ctypes.data` ~0.7 µs. None if a
    probe disagrees (another Python build): then calls are never planned."""
    offset = object.__basicsize__
    probes = [np.empty(shape, np.float32) for shape in ((3,), (0,), (2, 5))]
    if all(ctypes.c_void_p.from_address(id(probe) + offset).value == probe.ctypes.data for probe in probes):
        return offset
    return None


_DATA_OFFSET = _array_data_offset()
MAX_CALL_PLANS = 64
# Small outputs (at most POOLED_BYTES a call) are rows of blocks shared by CALLS_PER_BLOCK calls.
CALLS_PER_BLOCK = 64
POOLED_BYTES = 1024


class _CallPlan:
    """A call with one tuple of input shapes that passed every check, prepared for the next
    one: the output shapes, and the onnxc_tensor[] of inputs and outputs with only their data
    pointers left to write. A call whose inputs are exactly like (ndarray, dtype, shape,
    C-contiguous and aligned) skips the checks and allocation of descriptors: batch-1 calls spend
    most of their time in Python. A plan belongs to one thread (`_ThreadPlans`): its
    descriptors are written by every call."""

    def __init__(self, inputs: Sequence[tuple[NodeArg, np.ndarray]], outputs: Sequence[tuple[NodeArg, np.ndarray]]):
        input_structs = _tensor_array([(array, arg.onnx_type) for arg, array in inputs])
        output_structs = _tensor_array([(array, arg.onnx_type) for arg, array in outputs])
        self._structs = (input_structs, output_structs)  # the slots below point into them
        self.arguments = (
            ctypes.c_void_p(ctypes.addressof(input_structs)),
            ctypes.c_int64(len(inputs)),
            ctypes.c_void_p(ctypes.addressof(output_structs)),
            ctypes.c_int64(len(outputs)),
        )
        self._inputs = [
            (arg.name, arg.dtype, array.shape, slot) for (arg, array), slot in zip(inputs, _data_slots(input_structs))
        ]
        self._outputs = [
            (array.shape, arg.dtype, slot) for (arg, array), slot in zip(outputs, _data_slots(output_structs))
        ]
        pooled = all(array.ndim for _, array in outputs) and sum(array.nbytes for _, array in outputs) <= POOLED_BYTES
        self._pool: list[list] | None = [] if pooled else None
        self._next_call = CALLS_PER_BLOCK

    def bind(self, feed: object) -> list[np.ndarray] | None:
        """Fresh outputs, with every data pointer written, if `feed` (a dict) holds exactly
        the planned inputs as C-contiguous aligned arrays of the planned dtypes and shapes;
        else None (and the caller checks the call in full)."""
        if type(feed) is not dict or len(feed) != len(self._inputs):
            return None
        read = ctypes.c_void_p.from_address
        for name, dtype, shape, slot in self._inputs:
            array = feed.get(name)
            if (
                type(array) is not np.ndarray
                or array.shape != shape
                or array.dtype is not dtype
                and array.dtype != dtype
            ):
                return None
            flags = array.flags
            if not (flags.c_contiguous and flags.aligned):
                return None
            slot.value = read(id(array) + _DATA_OFFSET).value
        if self._pool is None:
            outputs = []
            for shape, dtype, slot in self._outputs:
                array = np.empty(shape, dtype)
                slot.value = read(id(array) + _DATA_OFFSET).value
                outputs.append(array)
            return outputs
        call = self._next_call
        if call == CALLS_PER_BLOCK:
            self._refill()
            call = 0
        self._next_call = call + 1
        outputs = []
        for block, address, size, slot in self._pool:
            outputs.append(block[call])
            slot.value = address + call * size
        return outputs

    def _refill(self) -> None:
        """New blocks of outputs for the next CALLS_PER_BLOCK calls: a call's outputs are
        views of one row of each (~0.3 µs less per output than np.empty and reading its address)."""
        self._pool = []
        for shape, dtype, slot in self._outputs:
            block = np.empty((CALLS_PER_BLOCK, *shape), dtype)
            self._pool.append([block, block.ctypes.data, block[0].nbytes, slot])


def _data_slots(structs: ctypes.Array) -> list[ctypes.c_void_p]:
    """The `data` fields of an onnxc_tensor[], as objects whose `.value` writes them."""
    size, offset = ctypes.sizeof(OnnxcTensor), OnnxcTensor.data.offset
    return [ctypes.c_void_p.from_buffer(structs, k * size + offset) for k in range(len(structs))]


class _ThreadPlans(threading.local):
    """One thread's call plans, by tuple of input shapes, and the one it used last (tried first)."""

    last: _CallPlan | None = None

    def __init__(self):
        self.by_shapes: dict[tuple, _CallPlan] = {}

    def find(self, feed: object, inputs: Sequence[NodeArg]) -> tuple[_CallPlan | None, list[np.ndarray] | None]:
        """The plan for the shapes in `feed` and the outputs it bound, (None, None) if none fits."""
        if type(feed) is not dict or not self.by_shapes:
            return None, None
        plan = self.by_shapes.get(tuple(getattr(feed.get(arg.name), "shape", None) for arg in inputs))
        outputs = None if plan is None else plan.bind(feed)
        if outputs is None:
            return None, None
        self.last = plan
        return plan, outputs

    def add(self, plan: _CallPlan, shapes: tuple) -> None:
        if len(self.by_shapes) >= MAX_CALL_PLANS:
            self.by_shapes.clear()
        self.by_shapes[shapes] = self.last = plan
