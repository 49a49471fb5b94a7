"""Run a library compiled for another architecture under qemu-user, or a WebAssembly module under node.

A process cannot dlopen a library of another architecture, so a small C
harness (`runtime/harness/onnxc_harness.c`) is built for the library's target
with zig and run by `qemu-<arch>` against that target's C library from
Debian's cross packages. A wasm32 module runs in node through
`runtime/js/harness.mjs`, which speaks the same protocol over the JavaScript
loader (`runtime/js/onnxc.mjs`). The harness only moves bytes: this module
writes every input in the target's byte order and reads the outputs back into
native numpy arrays, so `EmulatedSession` behaves like `onnxc.runtime.Session`
(same input checks and errors, same results) on any host.

Tooling, not runtime: it needs zig and qemu (or node), but neither xdsl nor llvmlite.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from onnxc.errors import InvalidModelError, RuntimeFailure, UnsupportedOpError
from onnxc.runtime import library as runtime_library
from onnxc.runtime.session import Session
from onnxc.runtime.tensor_descriptors import DynamicOutput, TypedArray

HARNESS_SOURCE = Path(runtime_library.__file__).parent / "harness" / "onnxc_harness.c"
ABI_HEADER = Path(runtime_library.__file__).parent / "onnxc.h"
NODE_HARNESS = Path(runtime_library.__file__).parent / "js" / "harness.mjs"
_HARNESS_RUN_FAILED = 3  # the harness's exit status when run_main_graph returns an error


class EmulatorMissingError(RuntimeFailure):
    """qemu-user or the target's C library (or node, for WebAssembly) is not installed on this host."""


@dataclass(frozen=True)
class Emulator:
    """How to run code of one foreign architecture on this host."""

    arch: str  # the architecture of the LLVM triple (and of zig's target)
    elf_machine: int
    byte_order: str  # "little" or "big"
    qemu: str
    qemu_cpu: str  # the newest CPU qemu emulates: a library built with any --mcpu runs on it
    sysroot: Path  # the target's C library, as installed by `libc_package`
    libc_package: str

    @property
    def numpy_byte_order(self) -> str:
        return "<" if self.byte_order == "little" else ">"

    @property
    def program(self) -> str:
        """What runs the code, for messages."""
        return self.qemu

    @property
    def install_hint(self) -> str:
        return f"apt-get install -y qemu-user {self.libc_package}"

    def check_installed(self) -> None:
        """Raise EmulatorMissingError, naming the apt packages, unless qemu and the C library are here."""
        if shutil.which(self.qemu) is None:
            raise EmulatorMissingError(f"running {self.arch} code needs {self.qemu}: {self.install_hint}")
        if not (self.sysroot / "lib" / "libc.so.6").exists():
            raise EmulatorMissingError(
                f"running {self.arch} code needs its C library in {self.sysroot}: {self.install_hint}"
            )

    def run(self, *args: str) -> subprocess.CompletedProcess:
        command = [self.qemu, "-cpu", self.qemu_cpu, "-L", str(self.sysroot), str(harness_for(self)), *args]
        return subprocess.run(command, capture_output=True, text=True)


EMULATORS = (
    Emulator(
        arch="s390x",
        elf_machine=22,
        byte_order="big",
        qemu="qemu-s390x",
        qemu_cpu="max",
        sysroot=Path("/usr/s390x-linux-gnu"),
        libc_package="libc6-s390x-cross",
    ),
    Emulator(
        arch="powerpc64le",
        elf_machine=21,
        byte_order="little",
        qemu="qemu-ppc64le",
        qemu_cpu="power10",
        sysroot=Path("/usr/powerpc64le-linux-gnu"),
        libc_package="libc6-ppc64el-cross",
    ),
    Emulator(
        arch="aarch64",
        elf_machine=183,
        byte_order="little",
        qemu="qemu-aarch64",
        qemu_cpu="max",  # up to SVE2
        sysroot=Path("/usr/aarch64-linux-gnu"),
        libc_package="libc6-arm64-cross",
    ),
    Emulator(
        arch="riscv64",
        elf_machine=243,
        byte_order="little",
        qemu="qemu-riscv64",
        # qemu 7.2 has no "max" riscv CPU: rv64gc plus RVV 1.0 and the bit manipulation and half
        # float extensions of RVV CPUs. VLEN 1024, the most qemu offers: LLVM's code assumes only
        # the CPU's minimum VLEN (zvl256b on spacemit-x60, zvl512b on sifive-x280), so it all runs.
        qemu_cpu="rv64,v=true,vlen=1024,elen=64,vext_spec=v1.0,"
        "zba=true,zbb=true,zbc=true,zbs=true,Zfh=true,Zfhmin=true",
        sysroot=Path("/usr/riscv64-linux-gnu"),
        libc_package="libc6-riscv64-cross",
    ),
)


@dataclass(frozen=True)
class NodeRunner:
    """Runs a wasm32 module in node, through runtime/js/harness.mjs (the Emulator protocol)."""

    arch: str = "wasm32"
    byte_order: str = "little"
    program: str = "node"
    numpy_byte_order: str = "<"

    def check_installed(self) -> None:
        if shutil.which("node") is None:
            raise EmulatorMissingError("running WebAssembly modules needs node: apt-get install -y nodejs")

    def run(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["node", str(NODE_HARNESS), *args], capture_output=True, text=True)


NODE = NodeRunner()


def needs_emulation(path: str | os.PathLike) -> bool:
    """True if the file at `path` is a WebAssembly module or an ELF file for another
    machine than this process's.

    False for anything else, unreadable files included: Session reports those.
    """
    try:
        if runtime_library.is_wasm_module(os.fspath(path)):
            return True
        library = runtime_library.read_elf_identity(os.fspath(path))
    except OSError:
        return False
    host = runtime_library.read_elf_identity("/proc/self/exe")
    return library is not None and host is not None and not library.runs_on(host)


def emulator_for(path: str | os.PathLike) -> Emulator | NodeRunner:
    """What runs the library at `path`: node for a WebAssembly module, else the Emulator its ELF header calls for."""
    if runtime_library.is_wasm_module(os.fspath(path)):
        return NODE
    identity = runtime_library.read_elf_identity(os.fspath(path))
    if identity is None:
        raise InvalidModelError("not an ELF shared library (made by `onnxc model.onnx -o model.so`)", model=str(path))
    for emulator in EMULATORS:
        if (emulator.elf_machine, emulator.byte_order, 64) == (identity.machine, identity.byte_order, identity.bits):
            return emulator
    known = ", ".join([*(e.arch for e in EMULATORS), NODE.arch])
    raise InvalidModelError(f"the library is built for {identity}; onnxc can emulate only {known}", model=str(path))


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "onnxc" / "harness"


def harness_for(emulator: Emulator) -> Path:
    """The harness executable for `emulator`'s target, built once per source and zig version."""
    digest = hashlib.sha256()
    for part in (HARNESS_SOURCE.read_bytes(), ABI_HEADER.read_bytes(), importlib.metadata.version("ziglang").encode()):
        digest.update(hashlib.sha256(part).digest())
    path = _cache_dir() / f"onnxc_harness-{emulator.arch}-{digest.hexdigest()[:16]}"
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    # Build next to the final name, then rename: concurrent builders never see half a file.
    with tempfile.TemporaryDirectory(dir=path.parent) as work:
        built = Path(work) / path.name
        command = [
            sys.executable, "-m", "ziglang", "cc",
            "-target", f"{emulator.arch}-linux-gnu",
            "-O2", "-I", str(ABI_HEADER.parent),
            "-o", str(built), str(HARNESS_SOURCE), "-ldl",
        ]  # fmt: skip
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeFailure(f"building the {emulator.arch} harness failed:\n{result.stderr.strip()}")
        os.replace(built, path)
    return path


class EmulatedSession(Session):
    """A Session over a foreign-architecture library or a WebAssembly module: each run is one
    harness process under qemu (or node).

    Inputs are checked exactly as by Session. Each `run` calls the model
    `repeat` times in one harness process; `last_latencies` holds the most
    recent run's times in seconds, as measured inside the emulator (emulated
    time, not the target machine's).
    """

    def __init__(self, path: str | os.PathLike, repeat: int = 1):
        self.path = os.path.abspath(os.fspath(path))
        self.threads = None
        self.emulator = emulator_for(self.path)
        self.emulator.check_installed()
        self.repeat = max(1, repeat)
        self.last_latencies: list[float] = []
        signature_json = self._harness("signature").stdout
        try:
            signature = json.loads(signature_json)
            self._check_signature(signature)
            self._read_signature(signature)
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
            raise InvalidModelError(f"malformed signature: {error}", model=self.path) from None
        strings = [arg.name for arg in (*self._inputs, *self._outputs) if arg.element_type == "string"]
        if strings:
            raise UnsupportedOpError(
                f"string tensors ({', '.join(strings)}) do not pass to {self.emulator.program} yet", model=self.path
            )
        self._library = runtime_library.ModelLibrary(self.path, signature_json, signature, None, 0, None, None)
        self._input_names = {arg.name for arg in self._inputs}
        self._output_index = {arg.name: index for index, arg in enumerate(self._outputs)}

    def _check_signature(self, signature: dict) -> None:
        """The signature must describe the architecture the ELF header names."""
        arch, byte_order = signature["target"].split("-")[0], signature["byte_order"]
        if (arch, byte_order) != (self.emulator.arch, self.emulator.byte_order):
            raise InvalidModelError(
                f"the signature says {signature['target']} ({byte_order}-endian), the ELF header says "
                f"{self.emulator.arch} ({self.emulator.byte_order}-endian)",
                model=self.path,
            )

    def _harness(self, *args: str) -> subprocess.CompletedProcess:
        result = self.emulator.run(self.path, *args)
        if result.returncode == _HARNESS_RUN_FAILED:  # stderr: "run_main_graph returned S"
            status = int(result.stderr.split()[-1])
            raise RuntimeFailure(
                f"run_main_graph returned {runtime_library.describe_status(status)} under {self.emulator.program}",
                model=self.path,
            )
        if result.returncode != 0:
            code = result.returncode
            how = f"was killed by {signal.Signals(-code).name}" if code < 0 else f"failed (exit status {code})"
            raise RuntimeFailure(
                f"the harness under {self.emulator.program} {how}: {result.stderr.strip()}", model=self.path
            )
        return result

    def close(self) -> None:
        """Nothing to unload: the library runs in the emulator's process, not in this one."""

    def _invoke(self, inputs: Sequence[TypedArray], outputs: Sequence[TypedArray]) -> None:
        """Write the inputs in the target's byte order, run the harness, read the outputs back."""
        order = self.emulator.numpy_byte_order
        with tempfile.TemporaryDirectory(prefix="onnxc-run-") as work:
            lines = [f"repeat {self.repeat}"]
            for kind, tensors in (("input", inputs), ("output", outputs)):
                for index, (array, onnx_type) in enumerate(tensors):
                    file = Path(work) / f"{kind}{index}.bin"
                    if isinstance(array, DynamicOutput):  # allocated by the library: its dims come back in file.shape
                        lines.append(f"dynamic {onnx_type} {array.dtype.itemsize} {array.rank} {file}")
                        continue
                    if kind == "input":
                        array.astype(array.dtype.newbyteorder(order), copy=False).tofile(file)
                    dims = " ".join(str(d) for d in array.shape)
                    lines.append(f"{kind} {onnx_type} {array.nbytes} {array.ndim} {dims} {file}")
            manifest = Path(work) / "manifest"
            manifest.write_text("\n".join(lines) + "\n")
            result = self._harness("run", str(manifest))
            for index, (array, _) in enumerate(outputs):
                file = Path(work) / f"output{index}.bin"
                if isinstance(array, DynamicOutput):
                    shape = tuple(int(d) for d in Path(f"{file}.shape").read_text().split())
                    stored = np.fromfile(file, array.dtype.newbyteorder(order))
                    array.array = stored.reshape(shape).astype(array.dtype)
                else:
                    array[...] = np.fromfile(file, array.dtype.newbyteorder(order)).reshape(array.shape)
        self.last_latencies = [
            int(line.split()[1]) * 1e-9 for line in result.stdout.splitlines() if line.startswith("latency_ns ")
        ]
