"""Command-line options and shared fixtures of the test suite."""

import subprocess
import sys
import zlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def pytest_addoption(parser):
    parser.addoption("--fuzz-cases", type=int, default=0, help="cases in test_fuzz_default (default: 300)")
    parser.addoption("--fuzz-seed", type=int, default=0, help="seed of the fuzzing tests' mutations")


@pytest.fixture(autouse=True)
def _test_data_seed(request):
    """Each test's data (tests/helpers.py's rand and ints) from a seed of the test's own id: with
    pytest-xdist the tests a worker ran before it vary from run to run, and so did its data."""
    import helpers

    helpers.reseed(zlib.crc32(request.node.nodeid.encode()))


@pytest.fixture
def abi_doc_example(tmp_path) -> Path:
    """The complete C example of docs/abi.md, built with zig cc against runtime/onnxc.h (warnings are errors)."""
    text = (REPO / "docs" / "abi.md").read_text()
    source = text.split("## A complete C example", 1)[1].split("```c\n", 1)[1].split("```", 1)[0]
    (tmp_path / "run_model.c").write_text(source)
    program = tmp_path / "run_model"
    subprocess.run(
        [sys.executable, "-m", "ziglang", "cc", "-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{REPO / 'runtime'}",
         str(tmp_path / "run_model.c"), "-o", str(program), "-ldl"],
        check=True,
    )  # fmt: skip
    return program
