"""Run a compiled model on numpy arrays, with an onnxruntime-like API.

Imports only numpy, ctypes and the leaf modules `onnxc.errors` and
`onnxc.dtypes`, so a deployed model needs neither the compiler nor its
dependencies. A model with float8, float4, int4 or int2 inputs or outputs
takes and returns `ml_dtypes` arrays (one element per byte), and so needs
ml_dtypes, imported when such a model is opened.

Every input is checked here, before native code runs, so that a mistake is
reported as an `InputError` naming the input, never as a crash or garbage:
names, dtype (exact, like onnxruntime: no implicit casting), rank and every
dimension. Arrays that are not C-contiguous, not aligned or not in native
byte order are copied, never misread. The native library checks the tensors
against its signature once more (see runtime/onnxc.h).
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from onnxc import dtypes
from onnxc.errors import InputError, InvalidModelError, RuntimeFailure
from onnxc.runtime import dim_expressions
from onnxc.runtime.abi import INDEX_SITE_SHIFT, MAX_DIM, Status
from onnxc.runtime.library import describe_status, open_model_library
from onnxc.runtime.profiling import Profile
from onnxc.runtime.strings import STRING_ELEMENT, decode_strings, encode_strings
from onnxc.runtime.tensor_descriptors import (
    _DATA_OFFSET,
    DynamicOutput,
    TypedArray,
    _CallPlan,
    _Descriptors,
    _ThreadPlans,
)

# onnxruntime's spelling of element types where it differs from the signature's.
_ORT_TYPE_NAMES = {"float32": "float", "float64": "double"}


@dataclass(frozen=True)
class NodeArg:
    """A graph input or output, like onnxruntime's NodeArg (`shape` is a tuple)."""

    name: str
    shape: tuple[int | str | None, ...]
    """Static dims; a symbol's name (str) for a dim the caller chooses, as onnxruntime
    shows symbolic dims (tensors sharing a symbol must agree on it); None for a dim
    known only once the model has run (a dynamic output)."""
    element_type: str  # as in the signature: "float32", "int64", "bfloat16", "float8_e4m3fn", "string"...
    dtype: np.dtype  # numpy dtype of the data (uint16 storage for bfloat16, ml_dtypes' for float8, onnxc_string...)
    map_keys: tuple[int | str, ...] = ()
    """For an output that is a sequence of maps (ZipMap): the key of each column."""
    sequence_axis: tuple[int, bool, int] | None = None
    """For an output that is a sequence of run-time length: (axis, keepdims, size), its
    items the tensor's slices of `size` along axis, the last maybe shorter (keepdims
    false: slices of one without the axis)."""

    @property
    def dynamic(self) -> bool:
        """An output the library allocates: its shape depends on input values, or it is
        a string tensor (whose bytes the library holds)."""
        return None in self.shape or self.element_type == "string"

    @property
    def type(self) -> str:
        """onnxruntime's type string, e.g. `tensor(float)`, `seq(map(int64,tensor(float)))`."""
        tensor = f"tensor({_ORT_TYPE_NAMES.get(self.element_type, self.element_type)})"
        if self.map_keys:
            return f"seq(map({'string' if isinstance(self.map_keys[0], str) else 'int64'},{tensor}))"
        return f"seq({tensor})" if self.sequence_axis is not None else tensor

    @property
    def structured(self) -> bool:
        """A sequence output: the library's tensor is returned as a list."""
        return bool(self.map_keys) or self.sequence_axis is not None

    def structure(self, values: np.ndarray) -> list:
        """A sequence output as onnxruntime returns it: a list of dicts (one per row of
        `values`) for a sequence of maps, else the list of the tensor's slices."""
        if self.map_keys:
            rows = values.reshape(-1, len(self.map_keys)).tolist()
            return [dict(zip(self.map_keys, row)) for row in rows]
        axis, keepdims, size = self.sequence_axis
        if not keepdims:
            return [np.take(values, i, axis=axis) for i in range(values.shape[axis])]
        before = (slice(None),) * axis
        return [values[(*before, slice(start, start + size))] for start in range(0, values.shape[axis], size)]

    @property
    def onnx_type(self) -> int:
        return dtypes.ONNX_OF_NAME[self.element_type]

    def __str__(self) -> str:
        dims = ", ".join("?" if d is None else str(d) for d in self.shape)
        return f"{self.name}: {self.element_type}[{dims}]"


def _dim_check(check: object) -> tuple[str, str, str, str, str]:
    """[lhs, relation, rhs, node, op_type] of a signature's `checks`."""
    if not (isinstance(check, list) and len(check) == 5 and all(isinstance(t, str) for t in check)):
        raise ValueError(f"a dim check is [lhs, relation, rhs, node, op_type], not {check!r}")
    if check[1] not in ("==", ">="):
        raise ValueError(f"a dim check's relation is == or >=, not {check[1]!r}")
    return tuple(check)


def _index_site(site: object) -> tuple[str, str]:
    """[node, op_type] of a signature's `index_sites`."""
    if not (isinstance(site, list) and len(site) == 2 and all(isinstance(t, str) for t in site)):
        raise ValueError(f"an index site is [node, op_type], not {site!r}")
    return site[0], site[1]


def _node_args(entries: list, outputs: bool) -> tuple[NodeArg, ...]:
    args = []
    for entry in entries:
        element_type = entry["dtype"]
        code = dtypes.ONNX_OF_NAME.get(element_type)
        if code is None or not (dtypes.has_numpy_dtype(code) or code == dtypes.STRING):
            raise ValueError(f"{entry['name']!r} has element type {element_type!r}, which numpy cannot hold")
        shape = tuple(entry["shape"])
        symbols = entry.get("dims", [""] * len(shape))
        dynamic = entry.get("dynamic") is True
        if len(symbols) != len(shape) or not all(isinstance(name, str) for name in symbols):
            raise ValueError(f"{entry['name']!r} has dims {symbols!r}, not one name per dim")
        if not all(
            isinstance(dim, int) and (dim >= 0 or dim == -1 and (dynamic or name)) for dim, name in zip(shape, symbols)
        ):
            raise ValueError(f"{entry['name']!r} has shape {list(shape)}, not a list of static dims")
        if dynamic != (
            outputs and code == dtypes.STRING or any(dim == -1 and not name for dim, name in zip(shape, symbols))
        ):
            raise ValueError(f"{entry['name']!r}: 'dynamic' disagrees with shape {list(shape)}")
        shape = tuple(name or None if dim == -1 else dim for dim, name in zip(shape, symbols))
        keys = entry.get("map_keys", [])
        if not isinstance(keys, list) or not (
            all(isinstance(k, int) for k in keys) or all(isinstance(k, str) for k in keys)
        ):
            raise ValueError(f"{entry['name']!r} has map_keys {keys!r}, not a list of integers or of strings")
        if keys and (element_type != "float32" or len(shape) not in (1, 2) or shape[-1] != len(keys)):
            raise ValueError(f"{entry['name']!r}: {len(keys)} map_keys for a {element_type} tensor of shape {shape}")
        dtype = STRING_ELEMENT if code == dtypes.STRING else dtypes.numpy_dtype(code)
        args.append(NodeArg(str(entry["name"]), shape, element_type, dtype, tuple(keys), _sequence(entry)))
    return tuple(args)


def _sequence(entry: dict) -> tuple[int, bool, int] | None:
    """(axis, keepdims, size) of a signature entry's `sequence`, None if it has none."""
    sequence = entry.get("sequence")
    if sequence is None:
        return None
    fields = [sequence.get(k) for k in ("axis", "keepdims", "size")] if isinstance(sequence, dict) else [None] * 3
    axis, keepdims, size = fields
    if (
        type(axis) is not int
        or not 0 <= axis < len(entry["shape"])
        or type(keepdims) is not bool
        or type(size) is not int
        or size < 1
        or size > 1
        and not keepdims
    ):
        raise ValueError(f"{entry['name']!r} has sequence {sequence!r}, not an axis, keepdims and a size")
    return axis, keepdims, size


def _output_shape(arg: NodeArg, symbols: Mapping[str, tuple[int, str]]) -> tuple[int, ...]:
    """An output's shape for the inputs' symbolic dims (a ValueError if an expression is negative)."""
    values = {name: size for name, (size, _) in symbols.items()}
    shape = tuple(dim_expressions.evaluate(d, values) if isinstance(d, str) else d for d in arg.shape)
    if any(d < 0 for d in shape):
        raise ValueError(f"output {arg.name!r} would have shape {shape}")
    return shape


class Session:
    """A compiled model library, loaded once and run any number of times.

    `run` may be called from many threads at once: each thread's calls have their own
    descriptors (`_CallPlan`), and the native call releases the GIL. A repeated call's small
    outputs (at most POOLED_BYTES) are views of blocks shared by CALLS_PER_BLOCK calls, each
    call its own rows.

    `close()` (or leaving a `with Session(...)` block) unloads the library once
    the runs in flight have finished; later runs raise `RuntimeFailure`.

    `threads` sets the size of the thread pool of the session's own copy of
    the library (onnxc_set_num_threads of onnxc.h); None keeps the default:
    $ONNXC_NUM_THREADS, else the number of CPUs.

    `profile=True` (a library built with `onnxc --profile`) records where each
    run's time goes in `self.profile` (runtime/profiling.py).
    """

    def __init__(self, path: str | os.PathLike, threads: int | None = None, profile: bool = False):
        if threads is not None and (not isinstance(threads, int) or threads < 1):
            raise ValueError(f"threads must be None or a positive int, got {threads!r}")
        self.threads = threads
        self._init_run_state()
        self._library = open_model_library(path)
        self.path = self._library.path
        self.profile: Profile | None = None
        if profile:
            description = self._library.signature.get("profile")
            if description is None or self._library.profile_events is None:
                self.close()
                message = "the library was built without profiling: compile it with `onnxc --profile`"
                raise InvalidModelError(message, model=self.path)
            self.profile = Profile(description, self._library.profile_events, self.path)
        if threads is not None:
            if self._library.set_num_threads is None:
                raise InvalidModelError("the library has no thread pool: recompile it to set threads", model=self.path)
            self._library.set_num_threads(threads)
        signature = self._library.signature
        try:
            self._read_signature(signature)
        except (KeyError, TypeError, ValueError) as error:
            self.close()
            raise InvalidModelError(f"malformed signature inputs or outputs: {error}", model=self.path) from None
        except ImportError:  # a low-precision type without ml_dtypes installed
            self.close()
            raise
        self._input_names = {arg.name for arg in self._inputs}
        self._output_index = {arg.name: index for index, arg in enumerate(self._outputs)}
        self._input_descriptors = _Descriptors(self._inputs)
        self._output_descriptors = _Descriptors([arg for arg in self._outputs if not arg.dynamic])
        if self.profile is None and _DATA_OFFSET is not None and not any(arg.dynamic for arg in self._outputs):
            self._plans = _ThreadPlans()
            run = self._library.run_main_graph  # the same function without argtypes: ~0.3 µs less a call
            self._run_unconverted = ctypes.CFUNCTYPE(ctypes.c_int32)(ctypes.cast(run, ctypes.c_void_p).value)

    @property
    def num_threads(self) -> int:
        """Threads the library's parallel loops currently use (1 for a library without a pool)."""
        get = self._library.get_num_threads
        return 1 if get is None else get()

    @property
    def signature(self) -> dict:
        """The library's `onnxc_signature()`, parsed (a fresh dict on every access)."""
        return json.loads(self._library.signature_json)

    def _read_signature(self, signature: dict) -> None:
        """The tensors and dim checks of a signature (docs/abi.md); KeyError, TypeError
        or ValueError where it is malformed."""
        self._inputs = _node_args(signature["inputs"], outputs=False)
        self._outputs = _node_args(signature["outputs"], outputs=True)
        self._dim_checks = [_dim_check(check) for check in signature.get("checks", [])]
        self._index_sites = [_index_site(site) for site in signature.get("index_sites", [])]

    def get_inputs(self) -> list[NodeArg]:
        return list(self._inputs)

    def get_outputs(self) -> list[NodeArg]:
        return list(self._outputs)

    _plans: _ThreadPlans | None = None
    """Each thread's plans of calls that passed (None: every call is checked in full: a
    profiled or emulated session, or one with dynamic outputs)."""

    def run(self, output_names: Sequence[str] | None, input_feed: Mapping[str, object]) -> list[np.ndarray | list]:
        """The outputs named in `output_names` (all, in signature order, if None) for `input_feed`:
        arrays, a list of arrays for a sequence output, and for a sequence-of-maps output
        (ZipMap) a list of dicts, as onnxruntime."""
        selected = None if output_names is None else self._output_positions(output_names)
        plans = self._plans
        if plans is not None:  # the fast path: the last plan first, inline (each call costs ~0.1 µs)
            try:
                plan = plans.last
                outputs = None if plan is None else plan.bind(input_feed)
                if outputs is None:
                    plan, outputs = plans.find(input_feed, self._inputs)
            except MemoryError as error:
                raise RuntimeFailure(f"cannot allocate the outputs: {error}", model=self.path) from None
            if outputs is not None:
                self._call(self._run_unconverted, plan.arguments)
                return (
                    outputs if selected is None and not self._returns_structures else self._selected(selected, outputs)
                )
        inputs, symbols = self._conform_inputs(input_feed)
        try:
            outputs = [
                DynamicOutput(arg.dtype, len(arg.shape))
                if arg.dynamic
                else np.empty(_output_shape(arg, symbols), arg.dtype)
                for arg in self._outputs
            ]
        except (MemoryError, ValueError) as error:
            sizes = ", ".join(f"{name} = {size} (from input {source!r})" for name, (size, source) in symbols.items())
            raise RuntimeFailure(
                f"cannot allocate the outputs for {sizes or 'these inputs'}: {error}", model=self.path
            ) from None
        typed_inputs = [(array, arg.onnx_type) for array, arg in zip(inputs, self._inputs)]
        typed_outputs = [(array, arg.onnx_type) for array, arg in zip(outputs, self._outputs)]
        self._invoke(typed_inputs, typed_outputs)
        if plans is not None:
            plan = _CallPlan(list(zip(self._inputs, inputs)), list(zip(self._outputs, outputs)))
            plans.add(plan, tuple(array.shape for array in inputs))
        return self._selected(selected, [_array_of(output) for output in outputs])

    @functools.cached_property
    def _returns_structures(self) -> bool:
        return any(arg.structured for arg in self._outputs)

    def _selected(self, positions: Sequence[int] | None, outputs: list[np.ndarray]) -> list[np.ndarray | list]:
        """The outputs at `positions` (None: all), a sequence as a list."""
        args = self._outputs
        if positions is None:
            if not self._returns_structures:
                return outputs
            positions = range(len(args))
        return [args[p].structure(outputs[p]) if args[p].structured else outputs[p] for p in positions]

    def _output_positions(self, output_names: Sequence[str] | None) -> list[int] | None:
        """The positions of the outputs named, None for all of them."""
        if output_names is None:
            return None
        if isinstance(output_names, str):
            raise InputError(f"output_names must be a list of names, not {output_names!r}", model=self.path)
        for name in output_names:
            if name not in self._output_index:
                known = _names(self._outputs)
                raise InputError(f"unknown output {name!r}; the model's outputs are {known}", model=self.path)
        return [self._output_index[name] for name in output_names]

    def _conform_inputs(self, input_feed: Mapping[str, object]) -> tuple[list[np.ndarray], dict[str, tuple[int, str]]]:
        """The arrays to hand to native code, in signature order, and each symbolic dim's
        size with the input that set it; or an InputError."""
        if not isinstance(input_feed, Mapping):
            got = type(input_feed).__name__
            raise InputError(f"input_feed must be a dict of name -> array, got {got}", model=self.path)
        for name in input_feed:
            if name not in self._input_names:
                known = _names(self._inputs)
                raise InputError(f"unknown input {name!r}; the model's inputs are {known}", model=self.path)
        arrays = []
        symbols: dict[str, tuple[int, str]] = {}
        for arg in self._inputs:
            if arg.name not in input_feed:
                expected = f"{arg.element_type}{list(arg.shape)}"
                raise InputError(f"missing input {arg.name!r} ({expected})", model=self.path)
            array = self._conform(arg, input_feed[arg.name])
            for axis, (dim, size) in enumerate(zip(arg.shape, array.shape)):
                if isinstance(dim, str) and dim_expressions.is_symbol(dim) and dim not in symbols:
                    if not 0 <= size <= MAX_DIM:
                        raise InputError(
                            f"input {arg.name!r}: dim {axis} ({dim}) is {size}, outside [0, {MAX_DIM}]", model=self.path
                        )
                    symbols[dim] = (size, arg.name)
            arrays.append(array)
        values = {name: size for name, (size, _) in symbols.items()}
        for arg, array in zip(self._inputs, arrays):
            for axis, (dim, size) in enumerate(zip(arg.shape, array.shape)):
                if isinstance(dim, str) and dim_expressions.evaluate(dim, values) != size:
                    expected = dim_expressions.evaluate(dim, values)
                    sources = ", ".join(
                        f"input {symbols[s][1]!r} has {s} = {symbols[s][0]}"
                        for s in sorted(dim_expressions.symbols_of(dim))
                    )
                    raise InputError(
                        f"input {arg.name!r}: dim {axis} ({dim}) is {size}, but {sources} (so {dim} = {expected})",
                        model=self.path,
                    )
        for lhs, relation, rhs, node, op_type in self._dim_checks:
            left, right = dim_expressions.evaluate(lhs, values), dim_expressions.evaluate(rhs, values)
            if not (left == right if relation == "==" else left >= right):
                bound = ", ".join(f"{s} = {values[s]}" for s in sorted(dim_expressions.symbols_of(f"{lhs} + {rhs}")))
                raise InputError(
                    f"the inputs' dims ({bound}) do not fit: it needs {lhs} {relation} {rhs}, got {left} and {right}",
                    model=self.path,
                    node=node,
                    op_type=op_type,
                )
        return arrays, symbols

    def _conform(self, arg: NodeArg, value: object) -> np.ndarray:
        try:
            array = np.asarray(value)
        except (TypeError, ValueError) as error:
            message = f"input {arg.name!r}: cannot be made into an array: {error}"
            raise InputError(message, model=self.path) from None
        if arg.dtype is STRING_ELEMENT:
            array = self._encoded_strings(arg, array)
        elif array.dtype.newbyteorder("=") != arg.dtype:
            module = "ml_dtypes" if arg.onnx_type in dtypes.LOW_PRECISION else "np"
            raise InputError(
                f"input {arg.name!r}: expected dtype {_dtype_text(arg)}, got {array.dtype} "
                f"(no implicit casting: convert with .astype({module}.{arg.dtype.name}))",
                model=self.path,
            )
        if len(array.shape) != len(arg.shape) or any(
            size != dim for size, dim in zip(array.shape, arg.shape) if not isinstance(dim, str)
        ):
            raise InputError(f"input {arg.name!r}: {_shape_mismatch(arg.shape, array.shape)}", model=self.path)
        flags = array.flags
        if flags.c_contiguous and flags.aligned and array.dtype == arg.dtype:  # as it is (np.require costs ~2 µs)
            return array
        return np.require(array, arg.dtype, ["C_CONTIGUOUS", "ALIGNED"])

    def _encoded_strings(self, arg: NodeArg, array: np.ndarray) -> np.ndarray:
        """A string input (an array of str: object, `U` or `S`) as onnxc_string elements."""
        if array.dtype.kind not in "OUS":
            raise InputError(f"input {arg.name!r}: expected an array of str, got {array.dtype}", model=self.path)
        try:
            return encode_strings(array)
        except ValueError as error:
            raise InputError(f"input {arg.name!r}: {error}", model=self.path) from None

    def _invoke(self, inputs: Sequence[TypedArray], outputs: Sequence[TypedArray]) -> None:
        """Call run_main_graph on the arrays as they are; a nonzero status raises RuntimeFailure."""
        output_structs = self._output_descriptors.describe(outputs)
        input_structs = self._input_descriptors.describe(inputs)
        arguments = (input_structs, len(inputs), output_structs, len(outputs))
        self._call(self._library.run_main_graph, arguments, outputs)

    def _call(self, run: ctypes._CFuncPtr, arguments: tuple, dynamic: Sequence = ()) -> None:
        """`run` (run_main_graph) on (inputs, count, outputs, count), unless the session is
        closed; then the library-allocated ones among `dynamic` (TypedArrays) are taken."""
        in_flight = self._in_flight
        in_flight.append(None)  # before reading _closed; see close()
        try:
            if self._closed:
                raise RuntimeFailure("the session is closed", model=self.path)
            status = run(*arguments) if self.profile is None else self.profile.timed(run, *arguments)
            if status == 0 and dynamic:
                self._take_dynamic_outputs(dynamic, arguments[2])
        finally:
            in_flight.pop()
            if self._closed:
                self._unload_if_idle()
        if status != 0:
            raise self._failure(status)

    def _failure(self, status: int) -> RuntimeFailure:
        """The error of a nonzero status; an index out of range names its node."""
        site = status >> INDEX_SITE_SHIFT
        if status & ((1 << INDEX_SITE_SHIFT) - 1) == Status.ERR_INDEX and 0 < site <= len(self._index_sites):
            node, op_type = self._index_sites[site - 1]
            message = "an index read from an input is outside the dim it indexes (ONNXC_ERR_INDEX)"
            return RuntimeFailure(message, model=self.path, node=node, op_type=op_type)
        return RuntimeFailure(f"run_main_graph returned {describe_status(status)}", model=self.path)

    def _take_dynamic_outputs(self, outputs: Sequence[TypedArray], structs: ctypes.Array) -> None:
        """Copy every library-allocated output into a numpy array, then free it
        with onnxc_free_tensor (all of them, even if a copy fails)."""
        dynamic = [
            (output, struct) for (output, _), struct in zip(outputs, structs) if isinstance(output, DynamicOutput)
        ]
        try:
            for output, struct in dynamic:
                shape = tuple(struct.shape[axis] for axis in range(struct.rank))
                array = np.empty(shape, output.dtype)
                ctypes.memmove(array.ctypes.data, struct.data, array.nbytes)
                output.array = decode_strings(array) if output.dtype is STRING_ELEMENT else array
        except MemoryError as error:
            raise RuntimeFailure(f"cannot allocate the outputs: {error}", model=self.path) from None
        finally:
            for _, struct in dynamic:
                self._library.free_tensor(ctypes.byref(struct))

    def _init_run_state(self) -> None:
        """What `run` and `close` share across threads (subclasses call this too)."""
        self._lock = threading.Lock()
        self._in_flight: list[None] = []  # one entry per run in flight: append and pop are atomic
        self._closed = False
        self._unloaded = False

    def close(self) -> None:
        """Unload the library (after the runs in flight); closing twice is harmless."""
        self._closed = True
        self._unload_if_idle()

    def _unload_if_idle(self) -> None:
        """Unload the library if no run is in flight. A run enters `_in_flight` before it reads
        `_closed` and calls this after leaving, once closed; close() sets `_closed` before
        calling it: so either close() sees the run, which unloads when it leaves, or the run
        sees `_closed` and does not call the library (no lock per run: ~0.3 µs less)."""
        with self._lock:
            if not self._in_flight and not self._unloaded:
                self._unloaded = True
                self._library.close()

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_library", None) is not None:
            self.close()

    def __repr__(self) -> str:
        inputs = ", ".join(map(str, self._inputs))
        outputs = ", ".join(map(str, self._outputs))
        return f"Session({self.path!r}, inputs=[{inputs}], outputs=[{outputs}])"


def _array_of(output: np.ndarray | DynamicOutput) -> np.ndarray:
    return output.array if isinstance(output, DynamicOutput) else output


def _names(args: Sequence[NodeArg]) -> str:
    return ", ".join(repr(arg.name) for arg in args)


def _dtype_text(arg: NodeArg) -> str:
    if arg.element_type == arg.dtype.name:
        return arg.element_type
    return f"{arg.element_type} (stored as {arg.dtype.name})"


def _shape_mismatch(expected: tuple[int, ...], got: tuple[int, ...]) -> str:
    if len(expected) != len(got):
        return f"expected rank {len(expected)} (shape {list(expected)}), got rank {len(got)} (shape {list(got)})"
    axis = next(
        axis for axis, (want, have) in enumerate(zip(expected, got)) if not isinstance(want, str) and want != have
    )
    shapes = f"expected shape {list(expected)}, got {list(got)}"
    return f"dim {axis} is {got[axis]}, expected {expected[axis]} ({shapes})"
