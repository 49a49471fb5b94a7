"""Targets onnxc can compile for: what LLVM, the ELF writer and the linker need to know.

A target is chosen by the user's spelling (`x86_64`, `aarch64`, `ppc64le`,
`riscv64`, `s390x`, `wasm32` or a full triple such as `s390x-ibm-linux`); the
default is the host. Native x86 builds use the host CPU's name and features;
foreign targets get a fixed CPU that still has vector units where the
architecture's Linux baseline allows (z14 is the first s390x CPU with vector
float; every aarch64 CPU has NEON; rv64gc has no vectors, RVV comes with a CPU
that has it, e.g. `--mcpu spacemit-x60`, or `--mattr +v`). `--mcpu` replaces
either with any CPU LLVM knows for the target; `--mattr` adds features.

wasm32 is the odd one: no ELF and no Linux. Its library is a WebAssembly module
(WASI's C library for malloc and the math functions) that the JavaScript
loader in runtime/js runs in node or a browser.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import platform
import sys
import tempfile
from dataclasses import dataclass
from typing import Literal

import llvmlite.binding as llvm

from onnxc.errors import CompileError

EM_X86_64 = 62
EM_PPC64 = 21
EM_S390 = 22
EM_AARCH64 = 183
EM_RISCV = 243
EM_NONE = 0
EF_PPC64_ELFV2 = 2
EF_RISCV_FLOAT_ABI_DOUBLE = 4  # lp64d: what LLVM picks when the CPU has D, and what glibc uses


@dataclass(frozen=True)
class Target:
    """Everything that depends on the machine the compiled library runs on."""

    arch: str  # canonical short name: x86_64, aarch64, ppc64le, riscv64, s390x, wasm32
    triple: str
    cpu: str
    features: str
    byte_order: Literal["little", "big"]
    elf_machine: int
    elf_flags: int
    zig_target: str

    @property
    def is_wasm(self) -> bool:
        """A WebAssembly module rather than an ELF shared library."""
        return self.arch == "wasm32"

    @property
    def pointer_bits(self) -> int:
        """The width of a pointer and of the C library's size_t: 32 on wasm32, 64 elsewhere."""
        return 32 if self.is_wasm else 64

    @property
    def has_riscv_vectors(self) -> bool:
        """Whether a riscv64 target has RVV (the V extension), from its CPU and features."""
        return self.arch == "riscv64" and "_v1p0" in _riscv_isa_string(self.triple, self.cpu, self.features)

    @property
    def has_vector_ldexp(self) -> bool:
        """Whether LLVM lowers a vector llvm.ldexp to instructions (AVX-512's vscalefps) rather
        than a libm call per element."""
        return _lowers_vector_ldexp(self.triple, self.cpu, self.llvm_features)

    @property
    def has_avx512(self) -> bool:
        """Whether an x86 target's CPU and features give 512-bit vectors (a CPU name implies
        features no list spells out: `--mcpu emeraldrapids` has an empty list)."""
        return self.arch == "x86_64" and _has_zmm(self.triple, self.cpu, self.llvm_features)

    @property
    def llvm_features(self) -> str:
        """The features LLVM is given: `features`, and on x86 without the `prefer-256-bit` tuning
        of Intel's AVX-512 CPUs (Skylake-X to Granite Rapids), under which LLVM's own loop and SLP
        vectorizers would use half of the vector width the kernels are planned for."""
        if self.arch != "x86_64":
            return self.features
        return ",".join(filter(None, [self.features, "-prefer-256-bit"]))

    @property
    def numpy_byte_order(self) -> str:
        return "<" if self.byte_order == "little" else ">"

    def target_machine(self, opt_level: int = 3) -> llvm.TargetMachine:
        """An LLVM target machine emitting position-independent code (small code model)."""
        if opt_level not in (0, 1, 2, 3):
            raise CompileError(f"optimization level must be 0..3, got {opt_level}")
        initialize_llvm()
        return llvm.Target.from_triple(self.triple).create_target_machine(
            cpu=self.cpu, features=self.llvm_features, opt=opt_level, reloc="pic", codemodel="default"
        )


@functools.cache
def initialize_llvm() -> None:
    """Register every LLVM target once (`llvm.initialize()` itself raises in llvmlite 0.50)."""
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()


def _assembly(triple: str, cpu: str, features: str, functions: str) -> str:
    """The assembly LLVM writes for the IR `functions` on a machine of `cpu` and `features`."""
    initialize_llvm()
    machine = llvm.Target.from_triple(triple).create_target_machine(cpu=cpu, features=features)
    return machine.emit_assembly(llvm.parse_assembly(f'target triple = "{triple}"\n{functions}'))


@functools.cache
def _lowers_vector_ldexp(triple: str, cpu: str, features: str) -> bool:
    """Asked of LLVM itself: a CPU name implies features no list spells out (znver4: AVX-512)."""
    return "ldexp" not in _assembly(
        triple,
        cpu,
        features,
        "declare <16 x float> @llvm.ldexp.v16f32.v16i32(<16 x float>, <16 x i32>)\n"
        "define <16 x float> @scale(<16 x float> %x, <16 x i32> %k) {\n"
        "  %y = call <16 x float> @llvm.ldexp.v16f32.v16i32(<16 x float> %x, <16 x i32> %k)\n"
        "  ret <16 x float> %y\n}\n",
    )


@functools.cache
def _has_zmm(triple: str, cpu: str, features: str) -> bool:
    """Asked of LLVM: whether a 16-float vector add is one zmm instruction."""
    return "zmm" in _assembly(
        triple,
        cpu,
        features,
        "define <16 x float> @add(<16 x float> %x, <16 x float> %y) {\n"
        "  %z = fadd <16 x float> %x, %y\n  ret <16 x float> %z\n}\n",
    )


@functools.cache
def _riscv_isa_string(triple: str, cpu: str, features: str) -> str:
    """The ISA string LLVM writes into a RISC-V object (`rv64i2p1_m2p0_..._v1p0_...`)."""
    assembly = _assembly(triple, cpu, features, "")
    return next((line for line in assembly.splitlines() if ".attribute\t5," in line), "")


def _x86_64() -> Target:
    if _host_arch() == "x86_64":
        initialize_llvm()
        cpu, features = llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()
    else:
        cpu, features = "x86-64-v2", ""
    return Target(
        arch="x86_64",
        triple="x86_64-unknown-linux-gnu",
        cpu=cpu,
        features=features,
        byte_order="little",
        elf_machine=EM_X86_64,
        elf_flags=0,
        zig_target="x86_64-linux-gnu.2.17",
    )


def _ppc64le() -> Target:
    return Target(
        arch="ppc64le",
        triple="powerpc64le-unknown-linux-gnu",
        cpu="pwr9",
        features="",
        byte_order="little",
        elf_machine=EM_PPC64,
        elf_flags=EF_PPC64_ELFV2,
        zig_target="powerpc64le-linux-gnu.2.19",
    )


def _s390x() -> Target:
    return Target(
        arch="s390x",
        triple="s390x-ibm-linux-gnu",
        cpu="z14",
        features="",
        byte_order="big",
        elf_machine=EM_S390,
        elf_flags=0,
        zig_target="s390x-linux-gnu.2.17",
    )


def _aarch64() -> Target:
    return Target(
        arch="aarch64",
        triple="aarch64-unknown-linux-gnu",
        cpu="generic",  # ARMv8-A: NEON (Advanced SIMD) and FMA on every aarch64 CPU
        features="+neon",
        byte_order="little",
        elf_machine=EM_AARCH64,
        elf_flags=0,
        zig_target="aarch64-linux-gnu.2.17",
    )


def _riscv64() -> Target:
    return Target(
        arch="riscv64",
        triple="riscv64-unknown-linux-gnu",
        cpu="generic-rv64",
        features="+m,+a,+f,+d,+c",  # rv64gc, the Linux distributions' baseline
        byte_order="little",
        elf_machine=EM_RISCV,
        elf_flags=EF_RISCV_FLOAT_ABI_DOUBLE,
        zig_target="riscv64-linux-gnu.2.27",  # the first glibc with riscv64
    )


def _wasm32() -> Target:
    return Target(
        arch="wasm32",
        triple="wasm32-unknown-wasi",
        cpu="generic",
        features="+simd128",  # every current browser and node >= 16
        byte_order="little",
        elf_machine=EM_NONE,
        elf_flags=0,
        zig_target="wasm32-wasi",
    )


# Spellings of the architecture component (the part of a triple before the first '-').
_TARGET_OF_ARCH = {
    "x86_64": _x86_64,
    "x86-64": _x86_64,
    "amd64": _x86_64,
    "aarch64": _aarch64,
    "arm64": _aarch64,
    "riscv64": _riscv64,
    "wasm32": _wasm32,
    "ppc64le": _ppc64le,
    "powerpc64le": _ppc64le,
    "s390x": _s390x,
    "systemz": _s390x,
}

ACCEPTED_SPELLINGS = (
    "host (default), x86_64, aarch64, ppc64le, riscv64, s390x, wasm32, or a triple such as "
    "x86_64-unknown-linux-gnu, aarch64-linux-gnu, s390x-ibm-linux, wasm32-unknown-wasi"
)


def _host_arch() -> str:
    machine = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)


def resolve_target(
    spelling: str | Target | None = None, *, cpu: str | None = None, features: str | None = None
) -> Target:
    """The Target a user means by `spelling` (None, "host" or "native": the host).

    `cpu` overrides the default CPU (e.g. "x86-64-v3" for a portable x86 build
    instead of the host's own CPU, "pwr10", "z15", "neoverse-v1", "spacemit-x60"),
    dropping the default feature list with it; None, "default" (or for an x86
    host "host"/"native") keep the default. `features` are LLVM target
    features added to the CPU's, comma-separated (e.g. "+v" for RVV on
    riscv64, "+sve" on aarch64).
    """
    target = spelling if isinstance(spelling, Target) else _target_of_spelling(spelling)
    if not (cpu is None or cpu == "default" or (cpu in ("host", "native") and target.arch == _host_arch())):
        if "is not a recognized processor" in _llvm_warnings(target.triple, cpu, ""):
            raise CompileError(
                f"unknown CPU '{cpu}' for {target.arch} (default: {target.cpu}); "
                f"list them with `llc -mtriple={target.triple} -mcpu=help`"
            )
        target = dataclasses.replace(target, cpu=cpu, features="")
    if features:
        unknown = [
            feature
            for feature in features.split(",")
            if feature[:1] not in "+-"
            or "is not a recognized feature" in _llvm_warnings(target.triple, target.cpu, feature)
        ]
        if unknown:
            raise CompileError(
                f"unknown LLVM feature {', '.join(map(repr, unknown))} for {target.arch} (write +name or -name); "
                f"list them with `llc -mtriple={target.triple} -mattr=help`"
            )
        target = dataclasses.replace(target, features=",".join(filter(None, [target.features, features])))
    return target


def _llvm_warnings(triple: str, cpu: str, features: str) -> str:
    """What LLVM writes on standard error as it makes a target machine for `cpu` and `features`.

    LLVM only warns about an unknown CPU or feature and then ignores it; that
    warning is the only sign, so it is captured.
    """
    initialize_llvm()
    with tempfile.TemporaryFile() as captured:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(captured.fileno(), 2)
        try:
            llvm.Target.from_triple(triple).create_target_machine(cpu=cpu, features=features)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        captured.seek(0)
        return captured.read().decode(errors="replace")


def _target_of_spelling(spelling: str | None) -> Target:
    if spelling is None or spelling.lower() in ("host", "native"):
        spelling = _host_arch()
    lowered = spelling.lower()
    for arch, make in _TARGET_OF_ARCH.items():
        if lowered == arch:
            return make()
        # A full triple: the vendor may be anything, the system must be Linux (WASI or none for wasm32).
        if lowered.startswith(arch + "-") and ("-linux" in lowered or arch == "wasm32"):
            return make()
    raise CompileError(f"unknown target '{spelling}'; accepted: {ACCEPTED_SPELLINGS}")
