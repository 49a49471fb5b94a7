"""All weights of a model as one ELF relocatable object, written directly by Python.

Putting 100 MB of weights through LLVM as a constant costs seconds and
gigabytes; writing the bytes of the numpy arrays straight into a `.rodata`
section costs about as much as copying them. The object defines one hidden
symbol (`WEIGHTS_SYMBOL`); the code refers to each weight by its offset in it.
Every element is stored in the *target's* byte order, whatever the host's.

WebAssembly objects are no ELF: for wasm32 the weights are a raw file that a
few lines of assembly include (`.incbin`) under the same symbol, and zig
assembles them as it links.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import numpy as np

from onnxc.codegen.target import Target

WEIGHTS_SYMBOL = "onnxc_weights"
WEIGHT_ALIGNMENT = 64
_SWAP_CHUNK = 1 << 22  # elements byte-swapped at a time


def align_up(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


@dataclass
class WeightTable:
    """Arrays laid out back to back in one blob, each at a WEIGHT_ALIGNMENT-aligned offset."""

    arrays: list[np.ndarray] = field(default_factory=list)
    offsets: list[int] = field(default_factory=list)
    size: int = 0

    def add(self, array: np.ndarray) -> int:
        """Place `array` after the previous ones and return its offset."""
        offset = align_up(self.size, WEIGHT_ALIGNMENT)
        self.arrays.append(np.ascontiguousarray(array))
        self.offsets.append(offset)
        self.size = offset + array.nbytes
        return offset


# ELF constants (System V gABI).
_ELFCLASS64, _EV_CURRENT, _ET_REL = 2, 1, 1
_SHT_PROGBITS, _SHT_SYMTAB, _SHT_STRTAB = 1, 2, 3
_SHF_ALLOC = 2
_SHF_X86_64_LARGE = 0x10000000

LARGE_WEIGHTS_BYTES = 1 << 30
"""From this size on, x86-64 weights go to a large-data section (`.lrodata`) and the
code reaches them with 64-bit offsets: a 32-bit PC-relative reference to data
placed after more than 2 GB would overflow at link time."""


def uses_large_data(target: Target, size: int) -> bool:
    return target.arch == "x86_64" and size >= LARGE_WEIGHTS_BYTES
_STB_GLOBAL, _STT_OBJECT, _STV_HIDDEN = 1, 1, 2
_EHDR_SIZE, _SHDR_SIZE, _SYM_SIZE = 64, 64, 24

# Section indices, in the order their headers are written.
_RODATA, _NOTE_GNU_STACK, _SYMTAB, _STRTAB, _SHSTRTAB = 1, 2, 3, 4, 5
_SECTION_NAMES = (".rodata", ".note.GNU-stack", ".symtab", ".strtab", ".shstrtab")


def _string_table(names: list[str]) -> tuple[bytes, list[int]]:
    """An ELF string table (leading NUL) and the offset of each name in it."""
    table, offsets = b"\0", []
    for name in names:
        offsets.append(len(table))
        table += name.encode() + b"\0"
    return table, offsets


def _write_array(out: BinaryIO, array: np.ndarray, byte_order: str) -> None:
    """Write `array` in `byte_order` ('<' or '>'), swapping bytes only when needed.

    Swapped arrays go out in chunks, so a huge weight costs no second full copy.
    """
    flat = np.ascontiguousarray(array).reshape(-1)
    target_dtype = flat.dtype.newbyteorder(byte_order)
    if flat.dtype.itemsize == 1 or target_dtype == flat.dtype:
        out.write(flat.view(np.uint8))
        return
    for start in range(0, flat.size, _SWAP_CHUNK):
        out.write(flat[start : start + _SWAP_CHUNK].astype(target_dtype).view(np.uint8))


def _write_blob(out: BinaryIO, table: WeightTable, byte_order: str) -> None:
    """Write the arrays of `table` at their offsets from where `out` is, zeros between them."""
    position = 0
    for array, offset in zip(table.arrays, table.offsets):
        out.write(bytes(offset - position))
        _write_array(out, array, byte_order)
        position = offset + array.nbytes


def write_weights_assembly(path: str | Path, table: WeightTable, target: Target) -> None:
    """Write `table` as raw bytes to `path`.bin and, to `path`, WebAssembly assembly defining
    WEIGHTS_SYMBOL as those bytes (for a wasm32 target, which has no ELF objects)."""
    blob = Path(path).with_suffix(".bin")
    with open(blob, "wb") as out:
        _write_blob(out, table, target.numpy_byte_order)
    quoted = str(blob).replace("\\", "\\\\").replace('"', '\\"')
    Path(path).write_text(
        f"""\t.section .rodata.{WEIGHTS_SYMBOL},"",@
\t.hidden {WEIGHTS_SYMBOL}
\t.type {WEIGHTS_SYMBOL},@object
\t.globl {WEIGHTS_SYMBOL}
\t.p2align {WEIGHT_ALIGNMENT.bit_length() - 1}
{WEIGHTS_SYMBOL}:
\t.incbin "{quoted}"
\t.size {WEIGHTS_SYMBOL}, {table.size}
"""
    )


def write_weights_object(
    path: str | Path, table: WeightTable, target: Target, *, _element_byte_order: str | None = None
) -> None:
    """Write `table` as an ELF64 relocatable object defining WEIGHTS_SYMBOL for `target`.

    `_element_byte_order` ('<' or '>') is for tests only: it stores the array
    elements in that order instead of the target's, to show that the
    cross-target tests catch a wrong-endian build.
    """
    e = target.numpy_byte_order
    large = uses_large_data(target, table.size)
    names = list(_SECTION_NAMES)
    if large:
        names[_RODATA - 1] = ".lrodata"
    shstrtab, name_offsets = _string_table(names)
    strtab, (symbol_name,) = _string_table([WEIGHTS_SYMBOL])
    symtab = bytes(_SYM_SIZE) + struct.pack(
        e + "IBBHQQ",
        symbol_name,
        (_STB_GLOBAL << 4) | _STT_OBJECT,
        _STV_HIDDEN,
        _RODATA,
        0,
        table.size,
    )

    # File layout: header, .rodata (64-aligned), .symtab, .strtab, .shstrtab, section headers.
    rodata_offset = align_up(_EHDR_SIZE, WEIGHT_ALIGNMENT)
    symtab_offset = align_up(rodata_offset + table.size, 8)
    strtab_offset = symtab_offset + len(symtab)
    shstrtab_offset = strtab_offset + len(strtab)
    shdr_offset = align_up(shstrtab_offset + len(shstrtab), 8)

    def section(index, kind, flags, offset, size, link=0, info=0, align=1, entsize=0) -> bytes:
        return struct.pack(
            e + "IIQQQQIIQQ",
            name_offsets[index - 1], kind, flags, 0, offset, size, link, info, align, entsize,
        )

    section_headers = b"".join(
        [
            bytes(_SHDR_SIZE),
            section(_RODATA, _SHT_PROGBITS, _SHF_ALLOC | (_SHF_X86_64_LARGE if large else 0), rodata_offset, table.size,
                    align=WEIGHT_ALIGNMENT),
            section(_NOTE_GNU_STACK, _SHT_PROGBITS, 0, rodata_offset, 0),
            # sh_info of a symbol table: index of its first global symbol.
            section(_SYMTAB, _SHT_SYMTAB, 0, symtab_offset, len(symtab), link=_STRTAB, info=1,
                    align=8, entsize=_SYM_SIZE),
            section(_STRTAB, _SHT_STRTAB, 0, strtab_offset, len(strtab)),
            section(_SHSTRTAB, _SHT_STRTAB, 0, shstrtab_offset, len(shstrtab)),
        ]
    )
    ident = b"\x7fELF" + bytes(
        [_ELFCLASS64, 1 if target.byte_order == "little" else 2, _EV_CURRENT]
    )
    header = struct.pack(
        e + "16sHHIQQQIHHHHHH",
        ident,
        _ET_REL,
        target.elf_machine,
        _EV_CURRENT,
        0,  # entry
        0,  # program headers
        shdr_offset,
        target.elf_flags,
        _EHDR_SIZE,
        0,  # program header entry size
        0,  # program header count
        _SHDR_SIZE,
        len(_SECTION_NAMES) + 1,
        _SHSTRTAB,
    )

    with open(path, "wb") as out:
        out.write(header)
        out.write(bytes(rodata_offset - _EHDR_SIZE))
        _write_blob(out, table, _element_byte_order or e)
        out.write(bytes(symtab_offset - (rodata_offset + table.size)))
        out.write(symtab + strtab + shstrtab)
        out.write(bytes(shdr_offset - (shstrtab_offset + len(shstrtab))))
        out.write(section_headers)
