"""The exporter-idiom corpus (exporter_idioms.py): each model compiles at -O3 within the
issue's budget and computes what onnxruntime does. The budget is CPU time of this process,
so that a busy machine does not fail it; the models repeat their idiom enough blocks that
a path exponential in them would exceed it by far (linear: well under a tenth)."""

from __future__ import annotations

import time

import pytest
from exporter_idioms import IDIOMS
from helpers import assert_matches, expected_outputs

import onnxc

BLOCKS = 24
COMPILE_BUDGET_S = 15.0


@pytest.mark.parametrize("idiom", IDIOMS)
def test_idiom_compiles_within_budget_and_matches_onnxruntime(idiom, tmp_path):
    model, feeds = IDIOMS[idiom](BLOCKS)
    started = time.process_time()
    library = onnxc.compile(model, tmp_path / f"{idiom}.so")
    elapsed = time.process_time() - started
    assert elapsed < COMPILE_BUDGET_S, f"{idiom}: {elapsed:.1f} s to compile"
    assert_matches(onnxc.Session(library).run(None, feeds), expected_outputs(model, feeds, "onnxruntime"))
