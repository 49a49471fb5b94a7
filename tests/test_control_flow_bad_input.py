"""Run-time control flow given bad input: conditions and trip counts of the wrong
type, and a loop whose collected rows outgrow the memory it may use. Each is a
typed error naming what went wrong, never a crash (issue #18)."""

import subprocess
import sys

import numpy as np
import pytest
from onnx import helper, numpy_helper
from test_run_time_control_flow import BIAS, I64, B, F, _branches, _info, _model, _negating_loop

import onnxc
from onnxc.errors import InvalidModelError

ROW = 1024
"""Floats collected per iteration (4 KiB rows)."""


@pytest.mark.parametrize("condition_type", [F, I64])
def test_run_time_if_on_a_condition_not_bool_names_the_node(tmp_path, condition_type):
    then_graph, else_graph = _branches()
    nodes = [helper.make_node("If", ["c"], ["y"], then_branch=then_graph, else_branch=else_graph, name="pick")]
    model = _model(nodes, [_info("c", condition_type, []), _info("x", F, [2, 3])], [_info("y", F, [2, 3])], [BIAS])
    with pytest.raises(
        InvalidModelError, match=r"node 'pick' \(If\): input #0 \('cond'\) is a tensor\((float|int64)\)"
    ):
        onnxc.compile(model, tmp_path / "m.so")


def test_run_time_loop_of_a_float_trip_count_names_the_node(tmp_path):
    model = _negating_loop()
    model.graph.input[0].type.tensor_type.elem_type = F
    with pytest.raises(InvalidModelError, match=r"node 'steps' \(Loop\): input #0 \('M'\) is a tensor\(float\)"):
        onnxc.compile(model, tmp_path / "m.so")


def _endless_collecting_loop():
    """`while c: rows.append(x)` with a trip count of INT64_MAX, as torch exports a
    `while`: given c true, its scan output grows until memory runs out."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond"], ["going"]), helper.make_node("Identity", ["x"], ["row"])],
        "body",
        [_info("i", I64, []), _info("cond", B, [])],
        [_info("going", B, []), _info("row", F, [ROW])],
    )
    loop = helper.make_node("Loop", ["M", "c"], ["rows"], body=body, name="collect")
    bound = numpy_helper.from_array(np.array(np.iinfo(np.int64).max, np.int64), "M")
    return _model([loop], [_info("c", B, []), _info("x", F, [ROW])], [_info("rows", F, [None, ROW])], [bound])


def test_rows_growing_beyond_the_memory_limit_raise_runtime_failure(tmp_path):
    """Under an address-space limit 512 MiB above what the process maps, the rows'
    realloc fails: ONNXC_ERR_NOMEM as a RuntimeFailure, and the process lives on."""
    library = onnxc.compile(_endless_collecting_loop(), tmp_path / "endless.so")
    script = f"""
import os, resource
import numpy as np
from onnxc.errors import RuntimeFailure
from onnxc.runtime import Session
session = Session({str(library)!r}, threads=1)
feeds = {{"c": np.array(False), "x": np.ones({ROW}, np.float32)}}
assert session.run(None, feeds)[0].shape == (0, {ROW})
mapped = int(open("/proc/self/statm").read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
resource.setrlimit(resource.RLIMIT_AS, (mapped + (512 << 20), resource.RLIM_INFINITY))
try:
    session.run(None, {{**feeds, "c": np.array(True)}})
except RuntimeFailure as error:
    print(error)
resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
print(session.run(None, {{**feeds, "c": np.array(False)}})[0].shape)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert "ONNXC_ERR_NOMEM" in result.stdout
    assert result.stdout.splitlines()[-1] == f"(0, {ROW})"
