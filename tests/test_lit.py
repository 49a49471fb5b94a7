"""Runs the lit IR tests (tests/lit) as part of the pytest suite."""

import subprocess
import sys
from pathlib import Path


def test_lit_suite():
    lit_dir = Path(__file__).parent / "lit"
    result = subprocess.run(
        [sys.executable, "-m", "lit", "-q", str(lit_dir)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
