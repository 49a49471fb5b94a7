"""Fuzzing the importer and compiler with mutated models.

Every mutated model must either compile or fail with a typed `OnnxcError`;
an untyped exception, a crash (segfault, abort) or a hang is a bug. Cases run
in worker processes (this file run as a script) so that a crash or a hang is
caught, reported with its reproducer, and the next case goes to a new worker.
Most cases stop at `--emit loops`; every LINK_EVERY-th one that gets that far
is also linked and run once on zeros.

Mutations are deterministic in (seed, case number): a failure names both, and
its model is saved next to the report. `--fuzz-cases N` and `--fuzz-seed S`
(tests/conftest.py) change the default run.
"""

from __future__ import annotations

import os
import pickle
import select
import struct
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import AttributeProto, TensorProto, helper, numpy_helper

DEFAULT_CASES = 300
SLOW_CASES = 10_000
LINK_EVERY = 25
CASE_TIMEOUT_S = 120.0
# Address space of a worker: allocating an absurd tensor fails fast instead of swapping.
WORKER_MEMORY_BYTES = 8 << 30
OPSET = [helper.make_opsetid("", 17)]

# ----------------------------------------------------------------------------- seed models


def _info(name: str, shape, elem=TensorProto.FLOAT) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def _const(name: str, values, dtype=np.int64) -> TensorProto:
    return numpy_helper.from_array(np.array(values, dtype=dtype), name)


def _seed_models() -> list[onnx.ModelProto]:
    from onnxc.examples.mnist import build_mnist_cnn

    rng = np.random.default_rng(0)

    def weight(name, shape):
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)

    def model(name, nodes, inputs, outputs, initializers=()):
        graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
        return helper.make_model(graph, opset_imports=OPSET, ir_version=8)

    shapes = model(
        "shapes",
        [
            helper.make_node("Transpose", ["x"], ["t"], name="transpose", perm=[0, 2, 1]),
            helper.make_node("Reshape", ["t", "shape"], ["r"], name="reshape"),
            helper.make_node("Softmax", ["r"], ["s"], name="softmax", axis=-1),
            helper.make_node("Unsqueeze", ["s", "axes"], ["u"], name="unsqueeze"),
            helper.make_node("Squeeze", ["u", "axes"], ["q"], name="squeeze"),
            helper.make_node(
                "ConstantOfShape",
                ["shape"],
                ["c"],
                name="fill",
                value=numpy_helper.from_array(np.array([0.5], np.float32)),
            ),
            helper.make_node("Concat", ["q", "c"], ["y"], name="concat", axis=0),
            helper.make_node("Flatten", ["x"], ["f"], name="flatten", axis=1),
        ],
        [_info("x", [2, 3, 4])],
        [_info("y", [8, 6]), _info("f", [2, 12])],
        [_const("shape", [4, 6]), _const("axes", [0])],
    )
    dense = model(
        "dense",
        [
            helper.make_node("Gemm", ["x", "w", "b"], ["g"], name="gemm", transB=1, alpha=0.5),
            helper.make_node("Clip", ["g", "lo", "hi"], ["c"], name="clip"),
            helper.make_node("LeakyRelu", ["c"], ["l"], name="leaky", alpha=0.1),
            helper.make_node("Max", ["l", "g"], ["m"], name="max"),
            helper.make_node("Sigmoid", ["m"], ["y"], name="sigmoid"),
        ],
        [_info("x", [3, 5])],
        [_info("y", [3, 4])],
        [weight("w", [4, 5]), weight("b", [4]), _const("lo", -1.0, np.float32), _const("hi", 1.0, np.float32)],
    )
    pooling = model(
        "pooling",
        [
            helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["n"], name="bn"),
            helper.make_node("AveragePool", ["n"], ["a"], name="avg", kernel_shape=[2, 2], pads=[1, 1, 1, 1]),
            helper.make_node("MaxPool", ["a"], ["m"], name="max", kernel_shape=[3, 3], strides=[2, 2]),
            helper.make_node("GlobalAveragePool", ["m"], ["y"], name="gap"),
        ],
        [_info("x", [1, 2, 6, 6])],
        [_info("y", [1, 2, 1, 1])],
        [weight("scale", [2]), weight("bias", [2]), weight("mean", [2]), _const("var", [1.0, 2.0], np.float32)],
    )
    integers = model(
        "integers",
        [
            helper.make_node("Add", ["i", "k"], ["s"], name="add"),
            helper.make_node("Mul", ["s", "s"], ["y"], name="mul"),
            helper.make_node("Abs", ["y"], ["z"], name="abs"),
        ],
        [_info("i", [2, 3], TensorProto.INT64)],
        [_info("y", [2, 3], TensorProto.INT64), _info("z", [2, 3], TensorProto.INT64)],
        [_const("k", [[1, 2, 3]])],
    )
    return [build_mnist_cnn(), shapes, dense, pooling, integers]


# ------------------------------------------------------------------------------- mutations

# Sizes that break assumptions: zero, negative, off-by-one, 32-bit and 64-bit extremes, absurd.
NASTY_INTS = [0, -1, -2, 1, 3, 7, 2**31 - 1, 2**31, 2**32 + 1, 10**12, 2**62, 2**63 - 1, -(2**63)]
ELEMENT_TYPES = [0, 1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 16, 17, 21, 23, 99]
OP_TYPES = [
    "Relu",
    "Add",
    "Conv",
    "Reshape",
    "Concat",
    "Softmax",
    "MaxPool",
    "Gemm",
    "Transpose",
    "If",
    "ConstantOfShape",
    "Expand",
    "NoSuchOp",
    "Identity",
    "Squeeze",
    "Clip",
    "Shape",
    "Gather",
]


def _nasty_int(rng: np.random.Generator) -> int:
    return int(rng.choice(NASTY_INTS)) if rng.random() < 0.7 else int(rng.integers(-5, 50))


def _all_value_infos(graph: onnx.GraphProto) -> list[onnx.ValueInfoProto]:
    return [*graph.input, *graph.output, *graph.value_info]


def _values(graph: onnx.GraphProto) -> list[str]:
    names = [vi.name for vi in graph.input] + [t.name for t in graph.initializer]
    return names + [out for node in graph.node for out in node.output]


def _pick(rng: np.random.Generator, items):
    return items[int(rng.integers(len(items)))] if len(items) else None


def mutate_dims(rng, model):
    vi = _pick(rng, _all_value_infos(model.graph))
    dims = vi.type.tensor_type.shape.dim
    choice = rng.integers(4)
    if choice == 0 and len(dims):
        dims[int(rng.integers(len(dims)))].dim_value = _nasty_int(rng)
    elif choice == 1:
        dims.add().dim_value = _nasty_int(rng)
    elif choice == 2 and len(dims):
        del dims[int(rng.integers(len(dims)))]
    else:
        vi.type.tensor_type.ClearField("shape")
    return f"dims of '{vi.name}'"


def mutate_initializer_dims(rng, model):
    tensor = _pick(rng, model.graph.initializer)
    if tensor is None:
        return None
    if len(tensor.dims) and rng.random() < 0.7:
        tensor.dims[int(rng.integers(len(tensor.dims)))] = _nasty_int(rng)
    else:
        tensor.dims.append(_nasty_int(rng))
    return f"dims of initializer '{tensor.name}'"


def mutate_shape_values(rng, model):
    """Shape-like int64 constants (Reshape shapes, axes) get absurd or negative values."""
    tensors = [t for t in model.graph.initializer if t.data_type == TensorProto.INT64]
    tensor = _pick(rng, tensors)
    if tensor is None:
        return None
    try:
        original = numpy_helper.to_array(tensor)
    except ValueError:  # an earlier mutation broke its dims
        return None
    values = original.copy().reshape(-1)
    if values.size:
        values[int(rng.integers(values.size))] = _nasty_int(rng)
    tensor.CopyFrom(numpy_helper.from_array(values.reshape(original.shape), tensor.name))
    return f"values of '{tensor.name}'"


def mutate_initializer_rank(rng, model):
    """Consistent data in another shape: flattened, with unit dims added, or reshaped to a vector."""
    tensor = _pick(rng, model.graph.initializer)
    if tensor is None:
        return None
    try:
        values = numpy_helper.to_array(tensor)
    except ValueError:  # an earlier mutation broke its dims
        return None
    shapes = [
        (-1,),
        (1, *values.shape),
        (*values.shape, 1),
        values.shape[1:] if values.ndim and values.shape[0] == 1 else (),
    ]
    shape = shapes[int(rng.integers(len(shapes)))]
    if shape == () and values.size != 1:
        shape = (values.size,)
    tensor.CopyFrom(numpy_helper.from_array(values.reshape(shape), tensor.name))
    return f"initializer '{tensor.name}' reshaped to {list(values.reshape(shape).shape)}"


def mutate_swap_inputs(rng, model):
    node = _pick(rng, model.graph.node)
    if len(node.input) < 2:
        return None
    order = rng.permutation(len(node.input))
    names = [node.input[i] for i in order]
    del node.input[:]
    node.input.extend(names)
    return f"inputs of '{node.name}' permuted"


def mutate_element_type(rng, model):
    if rng.random() < 0.5 and len(model.graph.initializer):
        tensor = _pick(rng, model.graph.initializer)
        tensor.data_type = int(rng.choice(ELEMENT_TYPES))
        return f"data_type of initializer '{tensor.name}'"
    vi = _pick(rng, _all_value_infos(model.graph))
    vi.type.tensor_type.elem_type = int(rng.choice(ELEMENT_TYPES))
    return f"elem_type of '{vi.name}'"


def mutate_dangling(rng, model):
    node = _pick(rng, model.graph.node)
    if not len(node.input):
        return None
    node.input[int(rng.integers(len(node.input)))] = "nowhere"
    return f"dangling input of '{node.name}'"


def mutate_rewire(rng, model):
    """An input taken from any value, including the node's own or a later output (a cycle)."""
    node = _pick(rng, model.graph.node)
    if not len(node.input):
        return None
    node.input[int(rng.integers(len(node.input)))] = _pick(rng, _values(model.graph))
    return f"rewired input of '{node.name}'"


def mutate_outputs(rng, model):
    node = _pick(rng, model.graph.node)
    choice = rng.integers(3)
    if choice == 0:
        node.output[0] = _pick(rng, _values(model.graph))
    elif choice == 1:
        node.output.append(f"extra{rng.integers(9)}")
    else:
        model.graph.output[0].name = _pick(rng, _values(model.graph) + ["nowhere"])
    return f"outputs of '{node.name}'"


def mutate_input_count(rng, model):
    node = _pick(rng, model.graph.node)
    if rng.random() < 0.5 and len(node.input):
        del node.input[int(rng.integers(len(node.input)))]
    else:
        for _ in range(int(rng.integers(1, 4))):
            node.input.append(_pick(rng, _values(model.graph) + [""]))
    return f"input count of '{node.name}'"


def mutate_attribute(rng, model):
    nodes = [n for n in model.graph.node if len(n.attribute)]
    node = _pick(rng, nodes) or _pick(rng, model.graph.node)
    if not len(node.attribute) or rng.random() < 0.15:
        node.attribute.append(helper.make_attribute(_pick(rng, ["axis", "perm", "alpha", "bogus"]), _nasty_int(rng)))
        return f"attribute added to '{node.name}'"
    attr = _pick(rng, node.attribute)
    choice = rng.integers(5)
    if choice == 0:
        attr.type = int(rng.choice([t for t in AttributeProto.AttributeType.values() if t != attr.type]))
    elif choice == 1:
        node.attribute.remove(attr)
    elif choice == 2 and attr.type == AttributeProto.INTS:
        del attr.ints[:]
        attr.ints.extend(_nasty_int(rng) for _ in range(int(rng.integers(0, 6))))
    elif choice == 3 and attr.type == AttributeProto.INT:
        attr.i = _nasty_int(rng)
    elif attr.type == AttributeProto.FLOAT:
        attr.f = float(rng.choice([np.nan, np.inf, -np.inf, 0.0, -1.0, 1e30]))
    else:
        attr.CopyFrom(helper.make_attribute(attr.name, [float(_nasty_int(rng))]))
    return f"attribute '{attr.name}' of '{node.name}'"


def mutate_op_type(rng, model):
    node = _pick(rng, model.graph.node)
    node.op_type = _pick(rng, OP_TYPES)
    if rng.random() < 0.1:
        node.domain = "com.example"
    return f"op type of '{node.name}'"


def mutate_opset(rng, model):
    model.opset_import[0].version = int(rng.integers(0, 26))
    return "opset"


def mutate_huge_constant(rng, model):
    """A ConstantOfShape or Expand of an absurd size feeding a new graph output."""
    dims = [int(rng.choice([10**6, 2**31, 10**12, 2**40])) for _ in range(int(rng.integers(1, 4)))]
    model.graph.initializer.append(_const("huge_shape", dims))
    if rng.random() < 0.5:
        model.graph.node.append(helper.make_node("ConstantOfShape", ["huge_shape"], ["huge"], name="huge"))
    else:
        source = model.graph.input[0].name
        model.graph.node.append(helper.make_node("Reshape", [source, "huge_shape"], ["huge"], name="huge"))
    model.graph.output.append(_info("huge", None))
    return f"huge tensor {dims}"


STRUCTURED: list[Callable] = [
    mutate_dims,
    mutate_initializer_dims,
    mutate_initializer_rank,
    mutate_swap_inputs,
    mutate_shape_values,
    mutate_element_type,
    mutate_dangling,
    mutate_rewire,
    mutate_outputs,
    mutate_input_count,
    mutate_attribute,
    mutate_op_type,
    mutate_opset,
    mutate_huge_constant,
]


def mutate_bytes(rng: np.random.Generator, data: bytes) -> tuple[bytes, str]:
    buffer = bytearray(data)
    choice = rng.integers(3)
    if choice == 0:
        positions = rng.integers(len(buffer), size=int(rng.integers(1, 9)))
        for position in positions:
            buffer[position] ^= 1 << int(rng.integers(8))
        return bytes(buffer), f"bit flips at {sorted(positions.tolist())}"
    if choice == 1:
        cut = int(rng.integers(len(buffer)))
        return bytes(buffer[:cut]), f"truncated to {cut} bytes"
    position = int(rng.integers(len(buffer)))
    noise = rng.integers(256, size=int(rng.integers(1, 16)), dtype=np.uint8).tobytes()
    return bytes(buffer[:position] + noise + buffer[position:]), f"{len(noise)} bytes inserted at {position}"


@dataclass
class Case:
    number: int
    description: str
    model: bytes
    link: bool


def make_cases(seed: int, count: int) -> Iterator[Case]:
    seeds = [m.SerializeToString() for m in _seed_models()]
    for number in range(count):
        rng = np.random.default_rng([seed, number])
        base = seeds[number % len(seeds)]
        steps = []
        if rng.random() < 0.3:
            data, step = mutate_bytes(rng, base)
            steps.append(step)
        else:
            model = onnx.ModelProto.FromString(base)
            for _ in range(int(rng.integers(1, 4))):
                step = _pick(rng, STRUCTURED)(rng, model)
                if step:
                    steps.append(step)
            data = model.SerializeToString()
        yield Case(number, f"seed model #{number % len(seeds)}: " + "; ".join(steps), data, number % LINK_EVERY == 0)


# ----------------------------------------------------------------------------------- worker


def _send(stream, payload) -> None:
    data = pickle.dumps(payload)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _receive(stream):
    header = stream.read(8)
    if len(header) < 8:
        return None
    return pickle.loads(stream.read(struct.unpack("<Q", header)[0]))


def run_case(model_bytes: bytes, link: bool, work_dir: str) -> tuple[str, str]:
    """("ok" | "typed" | "untyped", detail) for one model, in this process."""
    import traceback

    import onnxc
    from onnxc.errors import OnnxcError

    path = Path(work_dir) / "case.onnx"
    path.write_bytes(model_bytes)
    try:
        onnxc.compile(path, Path(work_dir) / "case.mlir", emit="loops")
        if link:
            library = onnxc.compile(path, Path(work_dir) / "case.so")
            _run_on_zeros(library)
        return "ok", ""
    except OnnxcError as error:
        return "typed", f"{type(error).__name__}: {error}"
    except Exception:
        return "untyped", traceback.format_exc(limit=-8)


def _run_on_zeros(library: Path) -> None:
    from onnxc.runtime import Session

    with Session(library) as session:
        session.run(None, {arg.name: np.zeros(arg.shape, arg.dtype) for arg in session.get_inputs()})


def worker_main() -> None:
    import resource
    import tempfile

    resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY_BYTES, WORKER_MEMORY_BYTES))
    channel = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything else printed goes to stderr, not into the protocol
    requests = os.fdopen(0, "rb")
    import onnxc.compiler  # noqa: F401 - imported before the first case's clock starts
    import onnxc.runtime  # noqa: F401

    _send(channel, "ready")
    with tempfile.TemporaryDirectory(prefix="onnxc-fuzz-") as work_dir:
        while (request := _receive(requests)) is not None:
            _send(channel, run_case(*request, work_dir))


class WorkerPool:
    """Worker processes running one case at a time; a dead or stuck worker is replaced."""

    def __init__(self, size: int):
        self.workers: list[subprocess.Popen | None] = [None] * size

    def _start(self) -> subprocess.Popen:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        worker = subprocess.Popen(
            [sys.executable, __file__, "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        if _receive(worker.stdout) != "ready":
            raise RuntimeError(f"a fuzzing worker failed to start (status {worker.wait()})")
        return worker

    def run(self, cases: Iterator[Case]) -> Iterator[tuple[Case, str, str]]:
        pending = iter(cases)
        busy: dict[int, tuple[Case, float]] = {}

        def feed(slot: int) -> None:
            case = next(pending, None)
            if case is None:
                return
            if self.workers[slot] is None or self.workers[slot].poll() is not None:
                self.workers[slot] = self._start()
            _send(self.workers[slot].stdin, (case.model, case.link))
            busy[slot] = (case, _now())

        for slot in range(len(self.workers)):
            feed(slot)
        while busy:
            streams = {self.workers[slot].stdout.fileno(): slot for slot in busy}
            ready, _, _ = select.select(list(streams), [], [], 1.0)
            for fd in ready:
                slot = streams[fd]
                case, _ = busy.pop(slot)
                reply = _receive(self.workers[slot].stdout)
                if reply is None:
                    code = self.workers[slot].wait()
                    self.workers[slot] = None
                    yield case, "crash", f"worker died with status {code}"
                else:
                    yield case, *reply
                feed(slot)
            for slot, (case, started) in list(busy.items()):
                if _now() - started > CASE_TIMEOUT_S:
                    busy.pop(slot)
                    self._kill(slot)
                    yield case, "hang", f"no answer within {CASE_TIMEOUT_S:.0f} s"
                    feed(slot)

    def _kill(self, slot: int) -> None:
        worker, self.workers[slot] = self.workers[slot], None
        worker.kill()
        worker.wait()

    def close(self) -> None:
        for slot, worker in enumerate(self.workers):
            if worker is not None:
                worker.stdin.close()
                self._kill(slot)


def _now() -> float:
    import time

    return time.monotonic()


# ------------------------------------------------------------------------------------ tests


def fuzz(seed: int, count: int, report_dir: Path) -> dict[str, int]:
    pool = WorkerPool(size=2)
    counts = {"ok": 0, "typed": 0}
    failures = []
    try:
        for case, status, detail in pool.run(make_cases(seed, count)):
            if status in counts:
                counts[status] += 1
                continue
            reproducer = report_dir / f"case-{seed}-{case.number}.onnx"
            reproducer.write_bytes(case.model)
            failures.append(f"case {case.number} ({case.description}): {status}: {detail}\n  reproducer: {reproducer}")
    finally:
        pool.close()
    assert not failures, f"{len(failures)} of {count} cases failed (seed {seed}):\n" + "\n".join(failures[:20])
    return counts


def test_fuzz_default(request, tmp_path):
    count = request.config.getoption("--fuzz-cases") or DEFAULT_CASES
    counts = fuzz(request.config.getoption("--fuzz-seed"), count, tmp_path)
    assert counts["ok"] > 0 and counts["typed"] > 0  # the mutations reach both outcomes


@pytest.mark.slow
def test_fuzz_ten_thousand(request, tmp_path):
    counts = fuzz(request.config.getoption("--fuzz-seed") + 1, SLOW_CASES, tmp_path)
    assert counts["ok"] + counts["typed"] == SLOW_CASES


def test_worker_crash_and_hang_are_reported(tmp_path, monkeypatch):
    """The harness itself: a segfaulting and a stuck case are caught, not fatal."""
    monkeypatch.setattr(sys.modules[__name__], "CASE_TIMEOUT_S", 3.0)
    monkeypatch.setenv("ONNXC_FUZZ_SELF_TEST", "1")
    cases = [Case(0, "crash", b"crash", False), Case(1, "hang", b"hang", False), Case(2, "typed", b"junk", False)]
    pool = WorkerPool(size=1)
    try:
        outcomes = {case.description: status for case, status, _ in pool.run(iter(cases))}
    finally:
        pool.close()
    assert outcomes == {"crash": "crash", "hang": "hang", "typed": "typed"}


def _self_test_case(model_bytes: bytes) -> None:
    """Under ONNXC_FUZZ_SELF_TEST the worker crashes or hangs on request."""
    if model_bytes == b"crash":
        import ctypes

        ctypes.string_at(0)
    if model_bytes == b"hang":
        import time

        time.sleep(3600)


if __name__ == "__main__" and sys.argv[1:] == ["--worker"]:
    if os.environ.get("ONNXC_FUZZ_SELF_TEST"):
        _run_case = run_case

        def run_case(model_bytes, link, work_dir):  # noqa: F811 - the self-test's instrumented version
            _self_test_case(model_bytes)
            return _run_case(model_bytes, link, work_dir)

    worker_main()
