"""runtime/onnxc.h (the contract for C users) states what onnxc.runtime.abi (the contract for
the runtime and the code generator) does: struct layout, status codes, dtype codes, version."""

import re
from pathlib import Path

import pytest

from onnxc import dtypes
from onnxc.runtime import abi

HEADER = Path(abi.__file__).parent / "onnxc.h"


@pytest.fixture(scope="module")
def header() -> str:
    """The header without its comments."""
    text = HEADER.read_text()
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


def _braced(header: str, opening: str) -> str:
    match = re.search(re.escape(opening) + r"\s*\{(.*?)\}", header, flags=re.S)
    assert match, f"onnxc.h has no `{opening} {{...}}`"
    return match.group(1)


def _enumerators(header: str, enum: str) -> dict[str, int]:
    items = [item.split("=") for item in _braced(header, f"enum {enum}").split(",") if item.strip()]
    return {name.strip(): int(value) for name, value in items}


def test_abi_version(header):
    (version,) = re.findall(r"#define\s+ONNXC_ABI_VERSION\s+(\d+)", header)
    assert int(version) == abi.ABI_VERSION
    assert f"(ABI version {abi.ABI_VERSION})" in HEADER.read_text()


def test_max_dim(header):
    (limit,) = re.findall(r"#define\s+ONNXC_MAX_DIM\s+(\d+)", header)
    assert int(limit) == abi.MAX_DIM


def _struct_fields(text: str, struct: str) -> tuple[tuple[str, str], ...]:
    fields = [line.strip().rstrip(";") for line in _braced(text, f"typedef struct {struct}").split(";")]
    parsed = []
    for field in filter(None, fields):
        match = re.fullmatch(r"(.*?[\s*])(\w+)", field)
        c_type = re.sub(r"\s*\*", " *", match.group(1).strip())
        parsed.append((match.group(2), c_type))
    return tuple(parsed)


@pytest.mark.parametrize(
    "struct, expected",
    [
        ("onnxc_tensor", abi.TENSOR_FIELDS),
        ("onnxc_string", abi.STRING_FIELDS),
        ("onnxc_profile_event", abi.PROFILE_EVENT_FIELDS),
    ],
)
def test_structs(header, struct, expected):
    assert _struct_fields(header, struct) == expected


def test_string_support_structs():
    """The string output support code and the runtime lay strings and tensors out as the header does."""
    from onnxc.runtime.strings import STRING_ELEMENT

    source = re.sub(r"/\*.*?\*/", "", (HEADER.parent / "support" / "onnxc_strings.c").read_text(), flags=re.S)
    assert _struct_fields(source, "onnxc_string") == abi.STRING_FIELDS
    assert _struct_fields(source, "onnxc_tensor") == abi.TENSOR_FIELDS
    assert STRING_ELEMENT.names == tuple(name for name, _ in abi.STRING_FIELDS) and STRING_ELEMENT.itemsize == 16


def test_profile_support_struct():
    """The profiling support code writes the events the header describes."""
    source = (HEADER.parent / "support" / "onnxc_profile.c").read_text()
    assert (
        _struct_fields(re.sub(r"/\*.*?\*/", "", source, flags=re.S), "onnxc_profile_event") == abi.PROFILE_EVENT_FIELDS
    )


def test_status_enum(header):
    assert _enumerators(header, "onnxc_status") == {status.c_name: int(status) for status in abi.Status}


def test_dtype_enum(header):
    enumerators = _enumerators(header, "onnxc_dtype")
    assert {int(v) for v in enumerators.values()} == set(abi.DTYPE_NAMES)
    for name, code in enumerators.items():
        assert getattr(dtypes, name.removeprefix("ONNXC_DTYPE_")) == code, name
