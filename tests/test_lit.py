"""Runs the lit IR tests (tests/lit) as part of the pytest suite."""

import shutil
import subprocess
import sys
from pathlib import Path


def test_lit_suite():
    lit_dir = Path(__file__).parent / "lit"
    lit = shutil.which("lit", path=str(Path(sys.executable).parent)) or shutil.which("lit")
    assert lit, "the lit test runner is not installed (pip install -e '.[test]')"
    result = subprocess.run([lit, "-q", str(lit_dir)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
