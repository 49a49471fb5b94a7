"""The weights object: a well-formed ELF64 relocatable in the target's byte order."""

from __future__ import annotations

import shutil
import struct
import subprocess

import numpy as np
import pytest

from onnxc.codegen import weights
from onnxc.codegen.target import resolve_target
from onnxc.codegen.weights import WEIGHTS_SYMBOL, WeightTable, write_weights_object


def read_elf(data: bytes) -> tuple[str, dict, dict[str, dict], dict]:
    """(numpy byte order, header fields, sections by name, the one defined symbol)."""
    order = "<" if data[5] == 1 else ">"
    (_, e_type, machine, _, _, _, shoff, flags, _, _, _, shentsize, shnum, shstrndx) = (
        struct.unpack_from(order + "16sHHIQQQIHHHHHH", data, 0)
    )
    raw = [
        struct.unpack_from(order + "IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)
    ]
    names_at = raw[shstrndx][4]

    def c_string(offset: int) -> str:
        return data[offset : data.index(b"\0", offset)].decode()

    fields = ("name", "type", "flags", "addr", "offset", "size", "link", "info", "align", "entsize")
    sections = {}
    for index, values in enumerate(raw):
        section = dict(zip(fields, values), index=index)
        sections[c_string(names_at + section["name"])] = section
    symtab, strtab = sections[".symtab"], sections[".strtab"]
    name, info, other, shndx, value, size = struct.unpack_from(
        order + "IBBHQQ", data, symtab["offset"] + symtab["entsize"]
    )
    symbol = dict(
        name=c_string(strtab["offset"] + name), binding=info >> 4, kind=info & 15,
        visibility=other & 3, shndx=shndx, value=value, size=size,
    )  # fmt: skip
    header = dict(type=e_type, machine=machine, flags=flags)
    return order, header, sections, symbol


def sample_table() -> WeightTable:
    table = WeightTable()
    table.add(np.linspace(-3, 3, 7, dtype=np.float32))
    table.add(np.array([[1.5, -2.25]], np.float64))
    table.add(np.array([1, -2, 1 << 40], np.int64))
    table.add(np.array([True, False, True]))
    table.add(np.array([-1, 2], np.int8))
    table.add(np.array([0.5, -65504], np.float16))
    table.add(np.array([0x3F80, 0xC0A0], np.uint16))  # bfloat16 1.0, -5.0
    table.add(np.array(7, np.int32))  # a scalar
    return table


@pytest.mark.parametrize(
    "spelling, order, machine, flags",
    [("s390x", ">", 22, 0), ("ppc64le", "<", 21, 2), ("x86_64", "<", 62, 0)],
)
def test_layout_and_byte_order(tmp_path, spelling, order, machine, flags):
    table = sample_table()
    path = tmp_path / "weights.o"
    write_weights_object(path, table, resolve_target(spelling))
    data = path.read_bytes()
    elf_order, header, sections, symbol = read_elf(data)
    assert (elf_order, header) == (order, dict(type=1, machine=machine, flags=flags))
    rodata = sections[".rodata"]
    assert rodata["align"] == 64 and rodata["offset"] % 64 == 0 and rodata["size"] == table.size
    assert sections[".note.GNU-stack"]["size"] == 0
    assert symbol == dict(
        name=WEIGHTS_SYMBOL, binding=1, kind=1, visibility=2, shndx=rodata["index"],
        value=0, size=table.size,
    )  # fmt: skip
    for array, offset in zip(table.arrays, table.offsets):
        assert offset % 64 == 0
        start = rodata["offset"] + offset
        expected = array.astype(array.dtype.newbyteorder(order)).tobytes()
        assert data[start : start + array.nbytes] == expected


def test_byte_swapping_in_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(weights, "_SWAP_CHUNK", 3)
    table = WeightTable()
    array = np.arange(11, dtype=np.int32) * 1000 - 5000
    table.add(array)
    write_weights_object(tmp_path / "w.o", table, resolve_target("s390x"))
    data = (tmp_path / "w.o").read_bytes()
    start = read_elf(data)[2][".rodata"]["offset"]
    assert data[start : start + array.nbytes] == array.astype(">i4").tobytes()


def test_readelf_accepts_big_endian_object(tmp_path):
    if shutil.which("readelf") is None:
        pytest.skip("readelf not installed")
    path = tmp_path / "weights.o"
    write_weights_object(path, sample_table(), resolve_target("s390x"))
    report = subprocess.run(
        ["readelf", "-h", "-S", "-s", "-W", str(path)], capture_output=True, text=True, check=True
    )
    assert report.stderr == ""
    assert "big endian" in report.stdout and "S/390" in report.stdout
    assert "GLOBAL HIDDEN" in " ".join(report.stdout.split())
    # The first float, -3.0, as big-endian bytes.
    dump = subprocess.run(
        ["readelf", "-x", ".rodata", str(path)], capture_output=True, text=True, check=True
    ).stdout
    assert "c0400000" in dump.replace(" ", "")


@pytest.mark.parametrize("spelling", ["x86_64", "s390x"])
def test_hundred_megabytes(tmp_path, spelling):
    table = WeightTable()
    for _ in range(4):
        table.add(np.ones(25_000_000 // 4, np.float32))
    write_weights_object(tmp_path / "big.o", table, resolve_target(spelling))
    assert (tmp_path / "big.o").stat().st_size > 100_000_000


def test_large_data_model_links_and_runs(tmp_path, monkeypatch):
    """Weights past LARGE_WEIGHTS_BYTES (1 GiB; lowered here to 0 to test small) go to
    x86-64's `.lrodata` and are reached through `code_model "large"`, so a model
    whose weights pass 2 GB links (see the slow test in test_reliability.py)."""
    from onnxc.compiler import compile
    from onnxc.examples.mnist import build_mnist_cnn, digit_image
    from onnxc.runtime import Session

    monkeypatch.setattr(weights, "LARGE_WEIGHTS_BYTES", 0)
    model = build_mnist_cnn()
    text = compile(model, tmp_path / "m.ll", emit="llvm", target="x86_64").read_text()
    assert 'code_model "large"' in text
    library = compile(model, tmp_path / "m.so", target="x86_64")
    sections = subprocess.run(["readelf", "-S", "-W", str(library)], capture_output=True, text=True, check=True).stdout
    assert ".lrodata" in sections
    image = digit_image()
    with Session(library) as session:
        (large,) = session.run(None, {"input": image})
    monkeypatch.setattr(weights, "LARGE_WEIGHTS_BYTES", 1 << 30)
    with Session(compile(model, tmp_path / "small.so", target="x86_64")) as session:
        (small,) = session.run(None, {"input": image})
    np.testing.assert_array_equal(large, small)
