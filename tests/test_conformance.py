"""The ONNX backend node-test suite against the committed expectation file.

The full suite is slow-marked (it runs in CI); the default suite runs a fixed
sample of it, so a regression in a common op shows up locally within seconds.
"""

import re
import sys

import pytest

from onnxc.tools import conformance

SAMPLE_STRIDE = 16
"""The default suite runs every 16th case of the expectation file."""


def _check(names):
    expected = conformance.read_expectations()
    results = conformance.run_cases(names, jobs=2)
    problems = conformance.differences(results, expected)
    assert not problems, "\n".join(problems)


def test_expectation_file_lists_every_case():
    assert set(conformance.read_expectations()) == set(conformance.all_cases())


def test_conformance_sample():
    names = sorted(conformance.read_expectations())[::SAMPLE_STRIDE]
    _check(names)


def test_supported_ops_doc_is_generated_from_the_expectation_file():
    """`python -m onnxc.tools.conformance --docs` regenerates it; every file it links to exists."""
    text = conformance.supported_ops_markdown(conformance.read_expectations(), conformance.all_cases())
    assert conformance.SUPPORTED_OPS_DOC.read_text() == text
    links = set(re.findall(r"\]\((\.\./[^)]+)\)", text))
    assert {"../passes/decompose.py", "../tests/lit/convert-onnx-to-krnl/conv.mlir"} <= links
    assert all((conformance.SUPPORTED_OPS_DOC.parent / link).is_file() for link in links)


@pytest.mark.slow
def test_conformance_full():
    _check(sorted(conformance.read_expectations()))


def test_differences_catch_regressions_and_unrecorded_fixes():
    R = conformance.Result
    expected = {"a": R("a", "PASS"), "b": R("b", "UNSUPPORTED", "x"), "c": R("c", "WRONG")}
    results = {"a": R("a", "WRONG", "mismatch"), "b": R("b", "PASS"), "c": R("c", "ERROR"), "d": R("d", "PASS")}
    problems = conformance.differences(results, expected)
    assert [p.split(":")[0] for p in problems] == ["a", "b", "d"]
    assert "regression" in problems[0] and "now passes" in problems[1]


FAKE_WORKER = """
import json, os, sys, time
print("ready", flush=True)
for line in sys.stdin:
    name = line.strip()
    if name == "crashes":
        os.abort()
    if name == "hangs":
        time.sleep(60)
    print(json.dumps({"name": name, "status": "PASS", "reason": ""}), flush=True)
"""


def test_crash_and_timeout_are_recorded_per_case():
    """A worker that dies or hangs costs one case; the pool restarts it and goes on."""
    names = ["ok1", "crashes", "ok2", "hangs", "ok3"]
    results = conformance.run_cases(names, jobs=1, timeout=2, command=[sys.executable, "-c", FAKE_WORKER])
    assert {n: r.status for n, r in results.items()} == {
        "ok1": "PASS",
        "crashes": "CRASH",
        "ok2": "PASS",
        "hangs": "TIMEOUT",
        "ok3": "PASS",
    }


def test_run_case_classifies_outcomes():
    cases = conformance.all_cases()
    assert conformance.run_case(cases["test_relu"]).status == "PASS"
    unsupported = conformance.run_case(cases["test_image_decoder_decode_bmp_rgb"])
    assert unsupported.status == "UNSUPPORTED" and "ImageDecoder" in unsupported.reason
