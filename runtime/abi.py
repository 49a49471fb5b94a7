"""The C ABI of a model library (runtime/onnxc.h) as Python data: the one source for both sides.

The runtime's ctypes mirror (`library.py`) and the code generator (which
emits the library's side, `onnxc/codegen/entry_point.py`) both read the
struct layout, status codes, ABI version and dtype codes from here, so they
cannot drift apart; tests/test_abi.py checks this module against the header.
Like the rest of the runtime it imports nothing of the compiler, only the
leaf module `onnxc.dtypes` (the ONNX element type codes).
"""

from __future__ import annotations

from enum import IntEnum

from onnxc import dtypes

ABI_VERSION = 3
"""ONNXC_ABI_VERSION: a runtime refuses libraries of any other version."""

MAX_DIM = 2**31 - 1
"""ONNXC_MAX_DIM: a symbolic dim is bound to a size in [0, MAX_DIM] (ONNXC_ERR_SHAPE otherwise)."""

TENSOR_FIELDS: tuple[tuple[str, str], ...] = (
    ("data", "void *"),
    ("shape", "const int64_t *"),
    ("rank", "int64_t"),
    ("dtype", "int32_t"),
    ("reserved", "int32_t"),
)
"""struct onnxc_tensor: (name, C type) of each field, in order."""

STRING_FIELDS: tuple[tuple[str, str], ...] = (("data", "const char *"), ("size", "int64_t"))
"""struct onnxc_string: one element of a string tensor."""


PROFILE_EVENT_FIELDS: tuple[tuple[str, str], ...] = (
    ("start_ns", "int64_t"),
    ("duration_ns", "int64_t"),
    ("kernel", "int32_t"),
    ("reserved", "int32_t"),
)
"""struct onnxc_profile_event (libraries built with `onnxc --profile`): one kernel call."""


def tensor_field(name: str) -> int:
    """The position of field `name` in struct onnxc_tensor."""
    return [field for field, _ in TENSOR_FIELDS].index(name)


class Status(IntEnum):
    """enum onnxc_status: what run_main_graph returns (ONNXC_<name>)."""

    OK = 0
    ERR_ARITY = 1
    ERR_NULL = 2
    ERR_DTYPE = 3
    ERR_RANK = 4
    ERR_SHAPE = 5
    ERR_NOMEM = 6
    ERR_INDEX = 7

    @property
    def c_name(self) -> str:
        return f"ONNXC_{self.name}"

    @property
    def meaning(self) -> str:
        return _STATUS_MEANINGS[self]


_STATUS_MEANINGS = {
    Status.OK: "success",
    Status.ERR_ARITY: "num_inputs or num_outputs differ from the model's",
    Status.ERR_NULL: "a tensor, its data or its shape pointer is NULL",
    Status.ERR_DTYPE: "a tensor's dtype differs from the signature",
    Status.ERR_RANK: "a tensor's rank differs from the signature",
    Status.ERR_SHAPE: "a dimension differs from the signature",
    Status.ERR_NOMEM: "arena, scratch or output memory could not be allocated",
    Status.ERR_INDEX: "an index read from an input is outside its dim",
}

INDEX_SITE_SHIFT = 8
"""ONNXC_ERR_INDEX comes with 1 + the failing check's place in the signature's
`index_sites` in the bits from this one up (0 there: no site named)."""

DTYPE_NAMES: dict[int, str] = dict(dtypes.NAME_OF_ONNX)
"""enum onnxc_dtype: the ONNX element type codes a tensor may have (ONNXC_DTYPE_<X> is
`onnxc.dtypes.X`; a string tensor's elements are `onnxc_string`s), with their names in the signature."""
