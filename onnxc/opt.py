"""`onnxc-opt`: run registered passes on textual IR (used by the lit tests).

An `OnnxcError` from a pass prints as one line (`onnxc-opt: error: ShapeError: ...`) and
exits with status 1, like `onnxc`; `--debug` shows the traceback.
"""

from __future__ import annotations

import argparse
import sys

from xdsl.xdsl_opt_main import xDSLOptMain

from onnxc.dialects import all_dialects
from onnxc.errors import OnnxcError
from onnxc.passes import available_passes


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
