"""`onnxc-opt`: run registered passes on textual IR (used by the lit tests).

An `OnnxcError` from a pass prints as one line (`onnxc-opt: error: ShapeError: ...`) and
exits with status 1, like `onnxc`; `--debug` shows the traceback.

`-t onnxc-llvm` prints loop-level IR (docs/design.md, "Level 3") as the LLVM IR that
onnxc's code generator makes of it, so that codegen can be tested from small hand-written
functions: `onnxc-opt f.mlir -t 'onnxc-llvm{target=x86_64 cpu=x86-64-v3}'` (as translated;
`opt=3` runs LLVM's -O3 first). Not xDSL's `llvm` target, which prints the llvm dialect.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.target import Target
from xdsl.xdsl_opt_main import xDSLOptMain

from onnxc.dialects import all_dialects
from onnxc.errors import OnnxcError
from onnxc.passes import available_passes


@dataclass(frozen=True)
class OnnxcLLVMTarget(Target):
    """Loop-level IR through onnxc's code generator, for `target` (x86_64, aarch64, ppc64le,
    riscv64, s390x, wasm32 or a triple; default: the host) and `cpu`, printed as translated or after LLVM's -O`opt`."""

    name = "onnxc-llvm"

    target: str | None = None
    cpu: str | None = None
    opt: int | None = None

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from onnxc import codegen  # only this target needs LLVM

        target = codegen.resolve_target(self.target, cpu=self.cpu)
        output.write(codegen.emit_llvm_ir(module, target, opt_level=self.opt))


class OnnxcOptMain(xDSLOptMain):
    def register_all_dialects(self) -> None:
        super().register_all_dialects()
        for dialect in all_dialects():
            if dialect.name in self.ctx.registered_dialect_names:
                continue
            self.ctx.register_dialect(dialect.name, lambda d=dialect: d)

    def register_all_passes(self) -> None:
        super().register_all_passes()
        for name, loader in available_passes().items():
            self.register_pass(name, loader)

    def register_all_targets(self) -> None:
        super().register_all_targets()
        self.available_targets[OnnxcLLVMTarget.name] = lambda: OnnxcLLVMTarget

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument("--debug", action="store_true", help="show tracebacks on onnxc errors")


def main(argv: list[str] | None = None) -> int:
    driver = OnnxcOptMain(description="onnxc IR optimizer driver", args=argv)
    try:
        driver.run()
    except OnnxcError as exc:
        if driver.args.debug:
            raise
        print(f"onnxc-opt: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
