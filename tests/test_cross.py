"""Foreign targets end to end: compile for s390x (big-endian), ppc64le, aarch64 and riscv64,
run under qemu-user, compare with x86.

Each model is compiled for the host and for every foreign target; the foreign
libraries run through `onnxc.tools.emulation.EmulatedSession` (a harness under
qemu-user). Outputs must match the host build: within 1e-5 (relative to the
largest output) for floats, exactly for integers and bools. A build whose
weights are stored in the wrong byte order must fail that same comparison.

The tests skip only when qemu-user or a target's C library is missing
locally; under CI (`CI` set) they fail instead, since .ci/run installs them.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import onnxc
import onnxc.codegen
from onnxc import dtypes
from onnxc.codegen import resolve_target
from onnxc.codegen.gemm_plan import vector_shape
from onnxc.codegen.weights import write_weights_object
from onnxc.errors import CompileError, InvalidModelError
from onnxc.examples.mnist import build_mnist_cnn, digit_image
from onnxc.tools.emulation import EMULATORS, EmulatedSession, EmulatorMissingError, emulator_for, needs_emulation

FOREIGN_TARGETS = ("s390x", "ppc64le", "aarch64", "riscv64")
OPSET = 13


def require_emulator(target: str) -> None:
    """Skip (fail under CI) unless qemu-user and the target's C library are installed."""
    arch = onnxc.codegen.resolve_target(target).triple.split("-")[0]
    emulator = next(e for e in EMULATORS if e.arch == arch)
    try:
        emulator.check_installed()
    except EmulatorMissingError as missing:
        if os.environ.get("CI"):
            pytest.fail(f"CI must install the emulator: {missing}")
        pytest.skip(str(missing))


# ------------------------------------------------------------------------------ models


def _weight(rng: np.random.Generator, name: str, *shape: int, scale: float | None = None) -> onnx.TensorProto:
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    std = np.sqrt(2.0 / fan_in) if scale is None else scale
    return numpy_helper.from_array((rng.standard_normal(shape) * std).astype(np.float32), name)


def _model(nodes, inputs, outputs, initializers, name: str) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, name, inputs, outputs, initializers)
    # IR version 8: what onnxruntime (the sanity check below) accepts.
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="onnxc-tests", ir_version=8
    )
    onnx.checker.check_model(model)
    return model


def build_mobile_block(seed: int = 0) -> onnx.ModelProto:
    """A MobileNetV3/EfficientNet-style block: convs whose HardSwish and SiLU (x * Sigmoid(x))
    the GEMM kernel's store computes (its vector exp), a depthwise conv, a 1x1 projection."""
    rng = np.random.default_rng(seed)
    initializers = [
        _weight(rng, "stem.w", 8, 3, 3, 3),
        _weight(rng, "expand.w", 24, 8, 1, 1),
        _weight(rng, "dw.w", 24, 1, 3, 3),
        _weight(rng, "project.w", 8, 24, 1, 1),
    ]
    nodes = [
        helper.make_node("Conv", ["input", "stem.w"], ["stem"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("HardSigmoid", ["stem"], ["stem.gate"], alpha=1 / 6, beta=0.5),  # HardSwish at opset 13
        helper.make_node("Mul", ["stem", "stem.gate"], ["stem.act"]),
        helper.make_node("Conv", ["stem.act", "expand.w"], ["expand"]),
        helper.make_node("Sigmoid", ["expand"], ["expand.gate"]),
        helper.make_node("Mul", ["expand", "expand.gate"], ["expand.act"]),
        helper.make_node("Conv", ["expand.act", "dw.w"], ["dw"], pads=[1, 1, 1, 1], group=24),
        helper.make_node("Conv", ["dw", "project.w"], ["output"]),
    ]
    inputs = [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 20, 20])]
    outputs = [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 8, 10, 10])]
    return _model(nodes, inputs, outputs, initializers, "mobile_block")


def build_resnet_cnn(seed: int = 0) -> onnx.ModelProto:
    """A small ResNet: stem conv/bn/relu, an identity residual block, a strided block with a
    1x1 projection, max and global average pooling, Flatten and Gemm."""
    rng = np.random.default_rng(seed)
    initializers, nodes = [], []

    def conv_bn(x: str, out: str, cin: int, cout: int, k: int, stride: int = 1, relu: bool = True) -> str:
        initializers.append(_weight(rng, f"{out}.w", cout, cin, k, k))
        for part, values in (
            ("scale", 1 + 0.1 * rng.standard_normal(cout)),
            ("bias", 0.1 * rng.standard_normal(cout)),
            ("mean", 0.1 * rng.standard_normal(cout)),
            ("var", 1 + 0.1 * rng.random(cout)),
        ):
            initializers.append(numpy_helper.from_array(values.astype(np.float32), f"{out}.{part}"))
        pad = k // 2
        nodes.append(
            helper.make_node(
                "Conv",
                [x, f"{out}.w"],
                [f"{out}.c"],
                name=f"{out}.conv",
                kernel_shape=[k, k],
                strides=[stride, stride],
                pads=[pad] * 4,
            )
        )
        bn_out = f"{out}.bn" if relu else out
        nodes.append(
            helper.make_node(
                "BatchNormalization",
                [f"{out}.c"] + [f"{out}.{p}" for p in ("scale", "bias", "mean", "var")],
                [bn_out],
                name=f"{out}.bn",
                epsilon=1e-5,
            )
        )
        if relu:
            nodes.append(helper.make_node("Relu", [bn_out], [out], name=f"{out}.relu"))
        return out

    x = conv_bn("input", "stem", 3, 8, 3)
    x_pool = "stem.pool"
    nodes.append(helper.make_node("MaxPool", [x], [x_pool], name="stem.pool", kernel_shape=[2, 2], strides=[2, 2]))
    # Identity block: relu(x + bn(conv(relu(bn(conv(x)))))).
    h = conv_bn(x_pool, "b1a", 8, 8, 3)
    h = conv_bn(h, "b1b", 8, 8, 3, relu=False)
    nodes.append(helper.make_node("Add", [x_pool, h], ["b1.sum"], name="b1.add"))
    nodes.append(helper.make_node("Relu", ["b1.sum"], ["b1"], name="b1.relu"))
    # Strided block with a 1x1 projection shortcut.
    h = conv_bn("b1", "b2a", 8, 16, 3, stride=2)
    h = conv_bn(h, "b2b", 16, 16, 3, relu=False)
    shortcut = conv_bn("b1", "b2p", 8, 16, 1, stride=2, relu=False)
    nodes.append(helper.make_node("Add", [shortcut, h], ["b2.sum"], name="b2.add"))
    nodes.append(helper.make_node("Relu", ["b2.sum"], ["b2"], name="b2.relu"))
    nodes.append(helper.make_node("GlobalAveragePool", ["b2"], ["gap"], name="gap"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flatten", axis=1))
    initializers += [_weight(rng, "fc.w", 10, 16), _weight(rng, "fc.b", 10, scale=0.1)]
    nodes.append(helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["logits"], name="fc", transB=1))
    return _model(
        nodes,
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])],
        initializers,
        "resnet_cnn",
    )


def build_bert_block(seed: int = 0, seq: int = 8, hidden: int = 16, heads: int = 2) -> onnx.ModelProto:
    """One BERT encoder layer: multi-head self-attention with a mask, residual + LayerNorm,
    a tanh-GELU feed-forward, residual + LayerNorm.

    onnxc lowers no ReduceMean yet, so LayerNorm takes its means with a MatMul by
    a constant [hidden, hidden] matrix of 1/hidden (every row gets its mean).
    """
    rng = np.random.default_rng(seed)
    head = hidden // heads
    ffn = 2 * hidden
    initializers = [
        _weight(rng, "wq", hidden, hidden),
        _weight(rng, "bq", hidden, scale=0.1),
        _weight(rng, "wk", hidden, hidden),
        _weight(rng, "bk", hidden, scale=0.1),
        _weight(rng, "wv", hidden, hidden),
        _weight(rng, "bv", hidden, scale=0.1),
        _weight(rng, "wo", hidden, hidden),
        _weight(rng, "bo", hidden, scale=0.1),
        _weight(rng, "w1", hidden, ffn),
        _weight(rng, "b1", ffn, scale=0.1),
        _weight(rng, "w2", ffn, hidden),
        _weight(rng, "b2", hidden, scale=0.1),
        numpy_helper.from_array(np.array([1, seq, heads, head], np.int64), "split_heads"),
        numpy_helper.from_array(np.array([1, seq, hidden], np.int64), "merge_heads"),
        numpy_helper.from_array(np.array(np.sqrt(head), np.float32), "sqrt_head"),
        # Additive attention mask: the last two positions are padding.
        numpy_helper.from_array(
            np.where(np.arange(seq) < seq - 2, 0, -1e4).astype(np.float32).reshape(1, 1, 1, seq), "mask"
        ),
        numpy_helper.from_array(np.full((hidden, hidden), 1 / hidden, np.float32), "mean_matrix"),
        numpy_helper.from_array(np.array(1e-5, np.float32), "eps"),
        numpy_helper.from_array(np.array(0.5, np.float32), "half"),
        numpy_helper.from_array(np.array(1.0, np.float32), "one"),
        numpy_helper.from_array(np.array(0.044715, np.float32), "gelu_c"),
        numpy_helper.from_array(np.array(np.sqrt(2 / np.pi), np.float32), "gelu_s"),
    ]
    for ln in ("ln1", "ln2"):
        initializers.append(
            numpy_helper.from_array((1 + 0.1 * rng.standard_normal(hidden)).astype(np.float32), f"{ln}.gamma")
        )
        initializers.append(
            numpy_helper.from_array((0.1 * rng.standard_normal(hidden)).astype(np.float32), f"{ln}.beta")
        )
    nodes = []

    def node(op: str, inputs: list[str], output: str, **attributes) -> str:
        nodes.append(helper.make_node(op, inputs, [output], name=output, **attributes))
        return output

    def linear(x: str, w: str, b: str, out: str) -> str:
        return node("Add", [node("MatMul", [x, w], f"{out}.mm"), b], out)

    def heads_of(x: str, out: str, perm: list[int]) -> str:
        return node("Transpose", [node("Reshape", [x, "split_heads"], f"{out}.split")], out, perm=perm)

    def layer_norm(x: str, ln: str, out: str) -> str:
        centered = node("Sub", [x, node("MatMul", [x, "mean_matrix"], f"{out}.mean")], f"{out}.centered")
        squares = node("Mul", [centered, centered], f"{out}.squares")
        variance = node("MatMul", [squares, "mean_matrix"], f"{out}.var")
        std = node("Sqrt", [node("Add", [variance, "eps"], f"{out}.var_eps")], f"{out}.std")
        scaled = node("Mul", [node("Div", [centered, std], f"{out}.normed"), f"{ln}.gamma"], f"{out}.scaled")
        return node("Add", [scaled, f"{ln}.beta"], out)

    q = heads_of(linear("input", "wq", "bq", "q"), "qh", [0, 2, 1, 3])
    k = heads_of(linear("input", "wk", "bk", "k"), "kh", [0, 2, 3, 1])
    v = heads_of(linear("input", "wv", "bv", "v"), "vh", [0, 2, 1, 3])
    scores = node("Div", [node("MatMul", [q, k], "qk"), "sqrt_head"], "scores")
    probs = node("Softmax", [node("Add", [scores, "mask"], "masked")], "probs", axis=-1)
    context = node("Transpose", [node("MatMul", [probs, v], "ctx")], "ctx.t", perm=[0, 2, 1, 3])
    merged = node("Reshape", [context, "merge_heads"], "merged")
    attention = linear(merged, "wo", "bo", "attn")
    h1 = layer_norm(node("Add", ["input", attention], "res1"), "ln1", "h1")
    # GELU, tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
    f = linear(h1, "w1", "b1", "ff1")
    cube = node("Mul", [node("Mul", [f, f], "ff1.sq"), f], "ff1.cube")
    inner = node("Mul", [node("Add", [f, node("Mul", [cube, "gelu_c"], "ff1.c3")], "ff1.in"), "gelu_s"], "ff1.arg")
    gate = node("Mul", [node("Add", [node("Tanh", [inner], "ff1.tanh"), "one"], "ff1.gate1"), "half"], "ff1.gate")
    gelu = node("Mul", [f, gate], "gelu")
    f2 = linear(gelu, "w2", "b2", "ff2")
    node("Add", [h1, f2], "res2")
    layer_norm("res2", "ln2", "output")
    return _model(
        nodes,
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, seq, hidden])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, seq, hidden])],
        initializers,
        "bert_block",
    )


CONSTANT_DTYPES = (
    "float32",
    "float64",
    "float16",
    "bfloat16",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bool",
)
# Element types onnxc computes Max for (the others are only moved: Concat, Identity) and
# fills with ConstantOfShape (whose value becomes a constant in the LLVM IR, not a weight).
_MAX_DTYPES = {"float32", "float64", "float16", "int8", "int16", "int32", "int64"}
_FILL_DTYPES = _MAX_DTYPES | {"bool"}


def _random_values(rng: np.random.Generator, dtype_name: str, shape: tuple[int, ...]) -> np.ndarray:
    """Values whose bytes all differ from their swapped order: any byte-order slip shows."""
    if dtype_name == "bool":
        return rng.integers(0, 2, shape).astype(np.bool_)
    if dtype_name == "bfloat16":  # the upper half of float32 bits
        return (rng.standard_normal(shape).astype(np.float32) * 100).view(np.uint32).__rshift__(16).astype(np.uint16)
    dtype = np.dtype(dtype_name)
    if dtype.kind == "f":
        return (rng.standard_normal(shape) * 100).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def build_constant_model(dtype_name: str) -> tuple[onnx.ModelProto, dict[str, np.ndarray], list[np.ndarray]]:
    """A model whose outputs carry a constant of `dtype_name` (stored as raw_data): Concat(x, c),
    Max(x, c) and ConstantOfShape filled with c[0, 0] where onnxc lowers them for the type;
    with its inputs and expected outputs.

    bfloat16 goes through Identity, since Concat of bfloat16 fails in shape inference today.
    """
    rng = np.random.default_rng(len(dtype_name))
    code = dtypes.ONNX_OF_NAME[dtype_name]
    x, c = _random_values(rng, dtype_name, (2, 3)), _random_values(rng, dtype_name, (2, 3))
    if dtype_name == "bfloat16":
        constant = helper.make_tensor("c", code, c.shape, c.astype("<u2").tobytes(), raw=True)
        nodes = [
            helper.make_node("Identity", ["c"], ["y"], name="y"),
            helper.make_node("Identity", ["x"], ["x_out"], name="x_out"),
        ]
        outputs, expected = [("y", (2, 3)), ("x_out", (2, 3))], [c, x]
    else:
        constant = numpy_helper.from_array(c, "c")
        nodes = [helper.make_node("Concat", ["x", "c"], ["y"], name="y", axis=0)]
        outputs, expected = [("y", (4, 3))], [np.concatenate([x, c])]
        if dtype_name in _MAX_DTYPES:
            nodes.append(helper.make_node("Max", ["x", "c"], ["z"], name="z"))
            outputs.append(("z", (2, 3)))
            expected.append(np.maximum(x, c))
    initializers = [constant, numpy_helper.from_array(np.array([2, 3], np.int64), "shape")]
    if dtype_name in _FILL_DTYPES:
        fill_value = numpy_helper.from_array(c.reshape(-1)[:1], "fill_value")
        nodes.append(helper.make_node("ConstantOfShape", ["shape"], ["filled"], name="filled", value=fill_value))
        outputs.append(("filled", (2, 3)))
        expected.append(np.full((2, 3), c[0, 0]))
    model = _model(
        nodes,
        [helper.make_tensor_value_info("x", code, [2, 3])],
        [helper.make_tensor_value_info(name, code, list(shape)) for name, shape in outputs],
        initializers,
        f"constant_{dtype_name}",
    )
    return model, {"x": x}, expected


def _float_input(shape: tuple[int, ...]) -> dict[str, np.ndarray]:
    return {"input": np.random.default_rng(1).standard_normal(shape).astype(np.float32)}


MODELS = {
    "mnist": lambda: (build_mnist_cnn(seed=1), {"input": digit_image(7)}, None),
    "resnet": lambda: (build_resnet_cnn(), _float_input((1, 3, 16, 16)), None),
    "bert": lambda: (build_bert_block(), _float_input((1, 8, 16)), None),
    "mobile": lambda: (build_mobile_block(), _float_input((1, 3, 20, 20)), None),
    **{f"constant_{name}": functools.partial(build_constant_model, name) for name in CONSTANT_DTYPES},
}
"""name -> () -> (model, inputs, expected outputs or None)."""


def assert_same_outputs(got: list[np.ndarray], want: list[np.ndarray]) -> None:
    """Floats within 1e-5 relative to the largest |want|; integers, bools and bfloat16 bits exactly."""
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        if w.dtype.kind == "f":
            scale = float(np.abs(w.astype(np.float64)).max(initial=0.0))
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5 * scale)
        else:
            np.testing.assert_array_equal(g, w)


@functools.cache
def _host_run(case: str, build_dir: str) -> tuple[onnx.ModelProto, dict[str, np.ndarray], list[np.ndarray]]:
    """The model of `case`, its inputs and the outputs of its host (x86) build, once per process."""
    model, feeds, expected = MODELS[case]()
    library = onnxc.compile(model, os.path.join(build_dir, f"{case}-host.so"))
    outputs = onnxc.Session(library).run(None, feeds)
    if expected is not None:  # the constant reached the outputs intact on the host
        assert_same_outputs(outputs, expected)
    return model, feeds, outputs


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("cross"))


def _run_foreign(model: onnx.ModelProto, feeds, path: str, target: str) -> list[np.ndarray]:
    library = onnxc.compile(model, path, target=target)
    assert needs_emulation(library)
    return EmulatedSession(library).run(None, feeds)


@pytest.mark.parametrize("target", FOREIGN_TARGETS)
@pytest.mark.parametrize("case", list(MODELS))
def test_foreign_build_matches_host(build_dir, case, target):
    require_emulator(target)
    model, feeds, want = _host_run(case, build_dir)
    got = _run_foreign(model, feeds, os.path.join(build_dir, f"{case}-{target}.so"), target)
    assert_same_outputs(got, want)


@pytest.mark.parametrize("target", FOREIGN_TARGETS)
@pytest.mark.parametrize("case", ["mnist", "constant_int64", "constant_float16"])
def test_wrong_endian_weights_fail_the_comparison(build_dir, monkeypatch, case, target):
    """Weights stored in the other byte order than the target's must give outputs that differ."""
    require_emulator(target)
    model, feeds, want = _host_run(case, build_dir)
    wrong_order = "<" if onnxc.codegen.resolve_target(target).byte_order == "big" else ">"
    monkeypatch.setattr(
        onnxc.codegen, "write_weights_object", functools.partial(write_weights_object, _element_byte_order=wrong_order)
    )
    got = _run_foreign(model, feeds, os.path.join(build_dir, f"{case}-{target}-wrong.so"), target)
    with pytest.raises(AssertionError):
        assert_same_outputs(got, want)


@pytest.mark.parametrize("case", ["resnet", "bert", "mobile"])
def test_host_builds_match_onnxruntime(build_dir, case):
    """The references of the comparisons are right: the host builds agree with onnxruntime."""
    ort = pytest.importorskip("onnxruntime")
    model, feeds, got = _host_run(case, build_dir)
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    assert_same_outputs(got, want)


def test_signature_records_triple_and_byte_order(build_dir):
    require_emulator("s390x")
    model, _, _ = _host_run("mnist", build_dir)
    library = onnxc.compile(model, os.path.join(build_dir, "signature-s390x.so"), target="s390x-ibm-linux")
    signature = EmulatedSession(library).signature
    assert (signature["target"], signature["byte_order"]) == ("s390x-ibm-linux-gnu", "big")
    host = onnxc.Session(os.path.join(build_dir, "mnist-host.so")).signature
    assert (host["target"].split("-")[0], host["byte_order"]) == ("x86_64", "little")
    assert not needs_emulation(os.path.join(build_dir, "mnist-host.so"))
    assert not needs_emulation(os.path.join(build_dir, "no-such.so"))  # left for Session to report


@pytest.mark.parametrize("target", FOREIGN_TARGETS)
def test_cli_run_foreign_library(build_dir, tmp_path, target):
    """`onnxc run` runs a foreign library under qemu transparently, writing native .npy outputs."""
    require_emulator(target)
    model, feeds, want = _host_run("mnist", build_dir)
    onnx.save(model, tmp_path / "mnist.onnx")
    np.save(tmp_path / "image.npy", feeds["input"])
    library = tmp_path / f"mnist-{target}.so"
    cli = [sys.executable, "-m", "onnxc.cli"]
    compiled = subprocess.run(
        [*cli, str(tmp_path / "mnist.onnx"), "-o", str(library), "--target", target], capture_output=True, text=True
    )
    assert compiled.returncode == 0, compiled.stderr
    ran = subprocess.run(
        [
            *cli,
            "run",
            str(library),
            "--input",
            f"input={tmp_path / 'image.npy'}",
            "--output-dir",
            str(tmp_path / "out"),
            "--repeat",
            "2",
        ],
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 0, ran.stderr
    assert "logits: float32[1, 10]" in ran.stdout and "median latency" in ran.stdout
    assert_same_outputs([np.load(tmp_path / "out" / "logits.npy")], want)


@pytest.mark.parametrize(
    ("target", "cpu", "features"),
    [
        ("s390x", "z15", None),
        ("ppc64le", "pwr10", None),
        ("aarch64", "neoverse-v1", None),
        ("aarch64", None, "+sve"),
        ("riscv64", "spacemit-x60", "-zicond"),
        ("riscv64", None, "+v"),
    ],
)
def test_newer_cpu_runs_under_emulation(build_dir, target, cpu, features):
    """qemu emulates its newest CPU, so a library built with a newer --mcpu (or more --mattr
    features) than the default runs (neoverse-v1: SVE; spacemit-x60: RVV with VLEN >= 256).
    Debian 12's qemu 7.2 lacks Zicond (czero.eqz/nez, qemu 8.2 has it), which spacemit-x60 has
    and LLVM uses for a select of pointers: turned off by --mattr for the emulator."""
    require_emulator(target)
    model, feeds, want = _host_run("mnist", build_dir)
    path = os.path.join(build_dir, f"mnist-{target}-{cpu}-{features}.so")
    library = onnxc.compile(model, path, target=target, cpu=cpu, features=features)
    assert_same_outputs(EmulatedSession(library).run(None, feeds), want)


def test_emulated_session_checks_inputs_like_session(build_dir):
    require_emulator("ppc64le")
    model, feeds, _ = _host_run("mnist", build_dir)
    library = onnxc.compile(model, os.path.join(build_dir, "inputs-ppc64le.so"), target="ppc64le")
    session = EmulatedSession(library)
    with pytest.raises(onnxc.errors.InputError, match="expected dtype float32, got float64"):
        session.run(None, {"input": feeds["input"].astype(np.float64)})
    with pytest.raises(onnxc.errors.InputError, match="missing input 'input'"):
        session.run(None, {})


def test_status_from_the_emulated_library_is_reported(build_dir):
    """A nonzero run_main_graph status crosses the harness as Session reports it natively."""
    require_emulator("s390x")
    model, _, _ = _host_run("mnist", build_dir)
    session = EmulatedSession(onnxc.compile(model, os.path.join(build_dir, "status-s390x.so"), target="s390x"))
    wrong_shape = [(np.zeros((1, 1, 28, 27), np.float32), dtypes.FLOAT)]  # bypasses Session's own checks
    with pytest.raises(onnxc.errors.RuntimeFailure, match=r"returned 5 \(ONNXC_ERR_SHAPE.*under qemu-s390x"):
        session._invoke(wrong_shape, [(np.empty((1, 10), np.float32), dtypes.FLOAT)])


def test_missing_qemu_names_the_packages(build_dir, monkeypatch, tmp_path):
    model, _, _ = _host_run("constant_int8", build_dir)
    library = onnxc.compile(model, tmp_path / "int8-s390x.so", target="s390x")
    monkeypatch.setenv("PATH", str(tmp_path))  # no qemu-s390x on it
    with pytest.raises(EmulatorMissingError, match=r"needs qemu-s390x: apt-get install -y qemu-user libc6-s390x-cross"):
        EmulatedSession(library)
    assert emulator_for(library).arch == "s390x"


def test_runtime_refuses_foreign_library_and_points_to_onnxc_run(build_dir, tmp_path):
    model, _, _ = _host_run("constant_int8", build_dir)
    library = onnxc.compile(model, tmp_path / "int8-ppc64le.so", target="ppc64le")
    with pytest.raises(InvalidModelError, match=r"built for powerpc64 \(64-bit, little-endian\).*`onnxc run`"):
        onnxc.Session(library)


def test_mcpu(build_dir, tmp_path):
    """--mcpu reaches LLVM's target machine; a CPU LLVM does not know is a compile error, not a warning."""
    assert onnxc.codegen.resolve_target("ppc64le").cpu == "pwr9"
    assert onnxc.codegen.resolve_target("s390x").cpu == "z14"
    assert onnxc.codegen.resolve_target("s390x", cpu="z15").cpu == "z15"
    model, _, _ = _host_run("mnist", build_dir)
    with pytest.raises(CompileError, match="unknown CPU 'z99' for s390x"):
        onnxc.compile(model, tmp_path / "bad.so", target="s390x", cpu="z99")
    objects = {
        cpu: onnxc.compile(model, tmp_path / f"{cpu}.o", target="s390x", cpu=cpu, emit="obj").read_bytes()
        for cpu in ("z13", "z14", None)
    }
    # z14 is the default (vector float); z13 has no vector float, so its code differs.
    assert objects[None] == objects["z14"] != objects["z13"]


def test_riscv_tile_follows_the_vector_extension():
    """rv64gc has no vector unit (a narrow tile of scalar accumulators); with RVV, from a CPU
    that has it or from --mattr +v, riscv64 gets NEON's tile."""
    baseline, rvv_cpu, rvv_feature = (
        resolve_target("riscv64"),
        resolve_target("riscv64", cpu="spacemit-x60"),
        resolve_target("riscv64", features="+v"),
    )
    assert [t.has_riscv_vectors for t in (baseline, rvv_cpu, rvv_feature)] == [False, True, True]
    shapes = [vector_shape(target) for target in (baseline, rvv_cpu, rvv_feature, resolve_target("aarch64"))]
    assert shapes == [(4, 1), (4, 2), (4, 2), (4, 2)]
    assert not resolve_target("aarch64").has_riscv_vectors


def test_x86_cpu_names_give_the_vector_width():
    """A CPU named by --mcpu implies its features (its feature list is empty): AVX-512 CPUs get
    the zmm tile, AVX2 ones the ymm tile, as a host build of that CPU would."""
    shapes = {cpu: vector_shape(resolve_target("x86_64", cpu=cpu)) for cpu in ("emeraldrapids", "znver4", "haswell")}
    assert shapes == {"emeraldrapids": (16, 2), "znver4": (16, 2), "haswell": (8, 1)}


def test_intel_avx512_loops_use_zmm(tmp_path):
    """LLVM tunes Intel's AVX-512 CPUs to prefer 256-bit vectors: its own vectorizer would then
    fill half the width the kernels are planned for. Element-wise loops use 16 floats."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 1000])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 1000])
    graph = helper.make_graph([helper.make_node("Sqrt", ["x"], ["y"])], "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    for cpu in ("emeraldrapids", "skylake-avx512"):
        text = onnxc.compile(model, tmp_path / f"{cpu}.ll", target="x86_64", cpu=cpu, emit="llvm").read_text()
        assert "<16 x float>" in text and "<8 x float>" not in text, cpu


def test_mattr_checks_features():
    """--mattr adds to the CPU's features; a feature LLVM does not know is a compile error, not a warning."""
    assert resolve_target("aarch64", cpu="neoverse-n1", features="+sve").features == "+sve"
    with pytest.raises(CompileError, match=r"unknown LLVM feature '\+bogus', 'v' for riscv64 \(write \+name"):
        resolve_target("riscv64", features="+bogus,v")


def build_low_precision_model() -> tuple[onnx.ModelProto, dict[str, np.ndarray], None]:
    """Cast f32 to float8 (saturating and not) and int4, and float8/int4 inputs back to f32.
    The types are bytes, so byte order does not apply; the conversions are integer code
    on their bits, which must give the same bits on a big-endian target."""
    x = np.array([0.47, 1e6, -1e6, 1e-7, np.nan, np.inf, -np.inf, 300.0, -9.0, 7.6, 15.0, -0.0], np.float32)
    nodes = [
        helper.make_node("Cast", ["x"], ["e4m3"], to=TensorProto.FLOAT8E4M3FN),
        helper.make_node("Cast", ["x"], ["e5m2"], to=TensorProto.FLOAT8E5M2, saturate=0),
        helper.make_node("Cast", ["x"], ["i4"], to=TensorProto.INT4),
        helper.make_node("Cast", ["f8"], ["f8_wide"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["q"], ["q_wide"], to=TensorProto.FLOAT),
    ]
    n = x.size
    feeds = {
        "x": x,
        "f8": np.arange(0, 256, 16, dtype=np.uint8).view(ml_dtypes.float8_e4m3fnuz),
        "q": np.arange(16, dtype=np.uint8).view(ml_dtypes.int4),
    }
    graph = helper.make_graph(
        nodes,
        "low_precision",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [n]),
            helper.make_tensor_value_info("f8", TensorProto.FLOAT8E4M3FNUZ, [16]),
            helper.make_tensor_value_info("q", TensorProto.INT4, [16]),
        ],
        [
            helper.make_tensor_value_info("e4m3", TensorProto.FLOAT8E4M3FN, [n]),
            helper.make_tensor_value_info("e5m2", TensorProto.FLOAT8E5M2, [n]),
            helper.make_tensor_value_info("i4", TensorProto.INT4, [n]),
            helper.make_tensor_value_info("f8_wide", TensorProto.FLOAT, [16]),
            helper.make_tensor_value_info("q_wide", TensorProto.FLOAT, [16]),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)]), feeds, None


def test_low_precision_casts_on_s390x_match_host(build_dir):
    require_emulator("s390x")
    model, feeds, _ = build_low_precision_model()
    host = onnxc.Session(onnxc.compile(model, os.path.join(build_dir, "low-precision-host.so"))).run(None, feeds)
    foreign = _run_foreign(model, feeds, os.path.join(build_dir, "low-precision-s390x.so"), "s390x")
    reference = ReferenceEvaluator(model).run(None, feeds)
    for got, host_out, want in zip(foreign, host, reference):
        assert got.dtype == host_out.dtype == want.dtype
        assert got.tobytes() == host_out.tobytes()
        assert np.array_equal(got.astype(np.float32), want.astype(np.float32), equal_nan=True)


def test_dynamic_outputs_on_s390x(build_dir):
    """Library-allocated outputs (NonZero, Unique) cross the harness in big-endian
    order with their run-time shapes, beside a static output, over repeated runs."""
    require_emulator("s390x")
    nodes = [
        helper.make_node("NonZero", ["x"], ["nonzero"]),
        helper.make_node("Unique", ["x"], ["values", "", "inverse", "counts"], sorted=1),
        helper.make_node("Neg", ["x"], ["negated"]),
    ]
    shapes = {"nonzero": [2, "n"], "values": ["u"], "inverse": ["i"], "counts": ["u"]}
    outputs = [helper.make_tensor_value_info(name, TensorProto.INT64, shape) for name, shape in shapes.items()]
    outputs.append(helper.make_tensor_value_info("negated", TensorProto.INT64, [3, 4]))
    x_info = helper.make_tensor_value_info("x", TensorProto.INT64, [3, 4])
    model = _model(nodes, [x_info], outputs, [], "dynamic")
    host = onnxc.Session(onnxc.compile(model, os.path.join(build_dir, "dynamic-host.so")))
    library = onnxc.compile(model, os.path.join(build_dir, "dynamic-s390x.so"), target="s390x")
    session = EmulatedSession(library, repeat=3)
    assert [arg.shape for arg in session.get_outputs()] == [(2, None), (None,), (None,), (None,), (3, 4)]
    for x in (np.array([[0, 7, 0, -1], [7, 0, 300, 0], [0, 0, 0, 2**40]]), np.zeros((3, 4), np.int64)):
        feeds = {"x": x}
        got, want = session.run(None, feeds), host.run(None, feeds)
        for actual, expected in zip(got, want):
            assert actual.shape == expected.shape
            np.testing.assert_array_equal(actual, expected)
    assert got[0].shape == (2, 0)
