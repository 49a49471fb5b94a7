"""`onnxc-opt`: run registered passes on textual IR (used by the lit tests)."""

from __future__ import annotations

from xdsl.xdsl_opt_main import xDSLOptMain

from onnxc.dialects import all_dialects
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


def main() -> None:
    OnnxcOptMain(description="onnxc IR optimizer driver").run()


if __name__ == "__main__":
    main()
