"""Opening a library compiled by onnxc, and the ctypes mirror of `onnxc.h`.

A library is refused with an `InvalidModelError` that says what to do when it
was built for another machine or another ABI version. The ELF header is
compared with the running process's before the library is opened: dlopen of a
foreign ELF only says "wrong ELF class" or "invalid ELF header", and dlopen
runs the library's initialisers, which must never happen for a foreign file.

dlopen returns the library it already has when it sees a path again, even if
the file was recompiled in place since; so each load goes through a fresh
private name (a hard link next to the file, or a copy where linking is not
allowed) that is removed right after dlopen. glibc still shares one mapping
among loads of the same unchanged file (it also matches device and inode).
"""

from __future__ import annotations

import _ctypes
import ctypes
import json
import os
import platform
import secrets
import shutil
import struct
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from onnxc.errors import InvalidModelError
from onnxc.runtime.abi import ABI_VERSION, INDEX_SITE_SHIFT, TENSOR_FIELDS, Status

_CTYPE_OF_C_TYPE = {
    "void *": ctypes.c_void_p,
    "const int64_t *": ctypes.POINTER(ctypes.c_int64),
    "int64_t": ctypes.c_int64,
    "int32_t": ctypes.c_int32,
}


class OnnxcTensor(ctypes.Structure):
    """`onnxc_tensor` of onnxc.h."""

    _fields_ = [(name, _CTYPE_OF_C_TYPE[c_type]) for name, c_type in TENSOR_FIELDS]


def describe_status(status: int) -> str:
    """`5 (ONNXC_ERR_SHAPE: a dimension differs from the signature)`."""
    code, site = status & ((1 << INDEX_SITE_SHIFT) - 1), status >> INDEX_SITE_SHIFT
    if code not in set(Status) or site and code != Status.ERR_INDEX:
        return f"{status} (unknown status: not defined by onnxc.h)"
    known = Status(code)
    return f"{status} ({known.c_name}: {known.meaning})"


# ELF e_machine codes, only to name the machine in error messages.
_MACHINE_NAMES = {
    3: "x86",
    8: "mips",
    20: "powerpc",
    21: "powerpc64",
    22: "s390x",
    40: "arm",
    62: "x86_64",
    183: "aarch64",
    243: "riscv",
    258: "loongarch",
}
_ELF_FILE_TYPES = {1: "a relocatable object", 2: "an executable", 4: "a core dump"}
_ET_DYN = 3

# platform.machine() spellings that differ from the LLVM triple's architecture.
_LLVM_ARCH_OF_MACHINE = {"amd64": "x86_64", "arm64": "aarch64", "ppc64le": "powerpc64le"}


@dataclass(frozen=True)
class ElfIdentity:
    """What an ELF header says about the machine a file runs on."""

    bits: int
    byte_order: str
    machine: int
    file_type: int

    def runs_on(self, host: "ElfIdentity") -> bool:
        return (self.bits, self.byte_order, self.machine) == (host.bits, host.byte_order, host.machine)

    def __str__(self) -> str:
        name = _MACHINE_NAMES.get(self.machine, f"ELF machine {self.machine}")
        return f"{name} ({self.bits}-bit, {self.byte_order}-endian)"


def read_elf_identity(path: str) -> ElfIdentity | None:
    """The identity in the ELF header of `path`, or None if it is no ELF file."""
    with open(path, "rb") as file:
        header = file.read(20)
    if len(header) < 20 or header[:4] != b"\x7fELF" or header[4] not in (1, 2) or header[5] not in (1, 2):
        return None
    byte_order = "little" if header[5] == 1 else "big"
    file_type, machine = struct.unpack("<HH" if byte_order == "little" else ">HH", header[16:20])
    return ElfIdentity(bits=32 * header[4], byte_order=byte_order, machine=machine, file_type=file_type)


def is_wasm_module(path: str) -> bool:
    """Whether the file at `path` starts like a WebAssembly module (`onnxc --target wasm32`)."""
    with open(path, "rb") as file:
        return file.read(4) == b"\0asm"


def _check_elf_header(file: str, path: str) -> None:
    """Check the ELF header of `file`, the private name of the library at `path`."""
    if not sys.platform.startswith("linux"):
        raise InvalidModelError(
            f"onnxc libraries are Linux shared objects; this host runs {platform.system()}", model=path
        )
    library = read_elf_identity(file)
    if library is None and is_wasm_module(file):
        raise InvalidModelError(
            "is a WebAssembly module: run it with `onnxc run` (in node) or load it with runtime/js/onnxc.mjs",
            model=path,
        )
    if library is None:
        raise InvalidModelError("not an ELF shared library (made by `onnxc model.onnx -o model.so`)", model=path)
    if library.file_type != _ET_DYN:
        kind = _ELF_FILE_TYPES.get(library.file_type, f"an ELF file of type {library.file_type}")
        raise InvalidModelError(f"is {kind}, not a shared library", model=path)
    host = read_elf_identity("/proc/self/exe")
    if host is not None and not library.runs_on(host):
        raise InvalidModelError(
            f"the library was built for {library}, but this machine is {host}: "
            f"compile the model for this machine's target (`onnxc run` runs it under qemu-user)",
            model=path,
        )


def _check_signature_target(signature: dict, path: str) -> None:
    """The library's own account of its target must match the host as well as its ELF header does."""
    triple = signature["target"]
    library_arch = triple.split("-")[0]
    machine = platform.machine().lower()
    host_arch = _LLVM_ARCH_OF_MACHINE.get(machine, machine)
    if library_arch != host_arch or signature["byte_order"] != sys.byteorder:
        raise InvalidModelError(
            f"the library was built for {triple} ({signature['byte_order']}-endian), but this machine is "
            f"{host_arch} ({sys.byteorder}-endian): compile the model for this machine's target",
            model=path,
        )


@dataclass(frozen=True)
class ModelLibrary:
    """An opened, checked model library, loaded until `close()`."""

    path: str
    signature_json: str
    signature: dict
    run_main_graph: ctypes._CFuncPtr
    handle: int | None  # None for a library that is not loaded into this process (run under emulation)
    # int32_t onnxc_set_num_threads(int32_t) / onnxc_get_num_threads(void); None in libraries without a pool.
    set_num_threads: ctypes._CFuncPtr | None
    get_num_threads: ctypes._CFuncPtr | None
    # void onnxc_free_tensor(onnxc_tensor *): releases a dynamic output; None under emulation.
    free_tensor: ctypes._CFuncPtr | None = None
    # int64_t onnxc_profile_events(const onnxc_profile_event **): in libraries built with --profile only.
    profile_events: ctypes._CFuncPtr | None = None

    def close(self) -> None:
        """dlclose the library: `run_main_graph` must not be called afterwards, nor be running."""
        if self.handle is not None:
            _ctypes.dlclose(self.handle)


def _symbol(library: ctypes.CDLL, name: str, restype, argtypes: list, path: str):
    try:
        function = getattr(library, name)
    except AttributeError:
        raise InvalidModelError(f"not an onnxc library: it does not export {name}", model=path) from None
    function.restype = restype
    function.argtypes = argtypes
    return function


@contextmanager
def _private_name(path: str) -> Iterator[str]:
    """A path to the current contents of `path` that no earlier dlopen has seen, removed on exit."""
    directory, base = os.path.split(path)
    link = os.path.join(directory, f".{base}.{secrets.token_hex(8)}.onnxc-load")
    try:
        os.link(path, link)
    except FileNotFoundError:
        raise
    except OSError:  # a read-only folder, another file system, no hard links: copy instead
        with tempfile.TemporaryDirectory(prefix="onnxc-load-") as directory:
            copy = os.path.join(directory, base)
            shutil.copyfile(path, copy)
            yield copy
        return
    try:
        yield link
    finally:
        os.unlink(link)


def open_model_library(path: str | os.PathLike) -> ModelLibrary:
    """Check, dlopen (RTLD_LOCAL) and validate the library at `path` as it is now."""
    # An absolute path: CDLL("model.so") would search the library path, not the working directory.
    path = os.path.abspath(os.fspath(path))
    try:
        with _private_name(path) as private:
            _check_elf_header(private, path)
            library = ctypes.CDLL(private, mode=os.RTLD_LOCAL)
    except OSError as error:
        raise InvalidModelError(f"cannot load the library: {error}", model=path) from error
    try:
        return _validate(library, path)
    except InvalidModelError:
        _ctypes.dlclose(library._handle)
        raise


def _validate(library: ctypes.CDLL, path: str) -> ModelLibrary:

    abi_version = _symbol(library, "onnxc_abi_version", ctypes.c_int32, [], path)()
    if abi_version != ABI_VERSION:
        raise InvalidModelError(
            f"the library has ABI version {abi_version}, this runtime implements version {ABI_VERSION}: "
            f"compile the model with the onnxc that matches this runtime",
            model=path,
        )
    signature_bytes = _symbol(library, "onnxc_signature", ctypes.c_char_p, [], path)()
    try:
        signature_json = signature_bytes.decode("utf-8")
        signature = json.loads(signature_json)
    except (AttributeError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InvalidModelError(f"onnxc_signature() is not a JSON document: {error}", model=path) from None
    try:
        _check_signature_target(signature, path)
    except (KeyError, TypeError, AttributeError) as error:
        raise InvalidModelError(f"malformed signature (target, byte_order): {error!r}", model=path) from None

    tensors = ctypes.POINTER(OnnxcTensor)
    run_main_graph = _symbol(
        library, "run_main_graph", ctypes.c_int32, [tensors, ctypes.c_int64, tensors, ctypes.c_int64], path
    )
    thread_functions = [
        _symbol(library, name, ctypes.c_int32, argtypes, path) if hasattr(library, name) else None
        for name, argtypes in (("onnxc_set_num_threads", [ctypes.c_int32]), ("onnxc_get_num_threads", []))
    ]
    free_tensor = _symbol(library, "onnxc_free_tensor", None, [tensors], path)
    profile_events = (
        _symbol(library, "onnxc_profile_events", ctypes.c_int64, [ctypes.POINTER(ctypes.c_void_p)], path)
        if hasattr(library, "onnxc_profile_events")
        else None
    )
    return ModelLibrary(
        path, signature_json, signature, run_main_graph, library._handle, *thread_functions, free_tensor, profile_events
    )
