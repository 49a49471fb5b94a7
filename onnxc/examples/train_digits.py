"""Train the quick-start digit classifier (`digits.onnx`) with numpy, reproducibly.

Data: scikit-learn's 8x8 digits (`sklearn.datasets.load_digits`, 1,797 images of
intensities 0..16). scikit-learn is needed only here, to run this script
(`pip install scikit-learn`); the package and its tests use the files it writes:

- `digits.onnx`: Conv 3x3 (16) → Relu → MaxPool 2 → Conv 3x3 (32) → Relu →
  MaxPool 2 → Flatten → Gemm (10), input `image` [1, 1, 8, 8] float32 of raw
  intensities 0..16, output `logits` [1, 10];
- `digits_test.npz`: the held-out images (uint8 [N, 8, 8]) and labels it never saw.

A fixed seed draws the split, the initial weights and the batches; training is
plain mini-batch Adam on softmax cross-entropy, forward and backward written out
below (convolutions as im2col matrix products).

    python -m onnxc.examples.train_digits [OUT_DIR]   # default: this folder
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SEED = 0
HELD_OUT = 360
EPOCHS = 30
BATCH = 32
LEARNING_RATE = 3e-3
KERNEL = 3
SCALE = 16.0
"""Training sees intensities / 16; the exported first Conv folds that in."""


def init_params(rng: np.random.Generator) -> dict[str, np.ndarray]:
    def he(*shape):
        return rng.standard_normal(shape) * np.sqrt(2.0 / np.prod(shape[1:]))

    return {
        "conv1.weight": he(16, 1, KERNEL, KERNEL),
        "conv1.bias": np.zeros(16),
        "conv2.weight": he(32, 16, KERNEL, KERNEL),
        "conv2.bias": np.zeros(32),
        "fc.weight": he(10, 128),
        "fc.bias": np.zeros(10),
    }


def im2col(x: np.ndarray) -> np.ndarray:
    """[N, C, H, W] → [N*H*W, C*K*K]: the 3x3 neighbourhood (zero padded) of each pixel."""
    n, c, h, w = x.shape
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = np.stack([padded[:, :, i : i + h, j : j + w] for i in range(KERNEL) for j in range(KERNEL)], axis=2)
    return cols.transpose(0, 3, 4, 1, 2).reshape(n * h * w, c * KERNEL * KERNEL)


def col2im(dcols: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The gradient of `im2col`: each column's entries added back to the pixels they came from."""
    n, c, h, w = shape
    d = dcols.reshape(n, h, w, c, KERNEL * KERNEL).transpose(0, 3, 4, 1, 2)
    padded = np.zeros((n, c, h + 2, w + 2))
    for k in range(KERNEL * KERNEL):
        i, j = divmod(k, KERNEL)
        padded[:, :, i : i + h, j : j + w] += d[:, :, k]
    return padded[:, :, 1:-1, 1:-1]


def conv(x, weight, bias):
    n, _, h, w = x.shape
    cols = im2col(x)
    y = cols @ weight.reshape(len(weight), -1).T + bias
    return y.reshape(n, h, w, -1).transpose(0, 3, 1, 2), cols


def conv_backward(dy, cols, weight, x_shape):
    dy2 = dy.transpose(0, 2, 3, 1).reshape(-1, len(weight))
    dweight = (dy2.T @ cols).reshape(weight.shape)
    return col2im(dy2 @ weight.reshape(len(weight), -1), x_shape), dweight, dy2.sum(axis=0)


def pool(x):
    """2x2 max pooling; also the one-hot position of each window's maximum, for the backward pass."""
    n, c, h, w = x.shape
    windows = x.reshape(n, c, h // 2, 2, w // 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(n, c, h // 2, w // 2, 4)
    winner = np.eye(4)[windows.argmax(axis=-1)]
    return windows.max(axis=-1), winner


def pool_backward(dy, winner):
    n, c, h, w, _ = winner.shape
    d = (winner * dy[..., None]).reshape(n, c, h, w, 2, 2).transpose(0, 1, 2, 4, 3, 5)
    return d.reshape(n, c, 2 * h, 2 * w)


def forward(params, x):
    c1, cols1 = conv(x, params["conv1.weight"], params["conv1.bias"])
    p1, win1 = pool(np.maximum(c1, 0))
    c2, cols2 = conv(p1, params["conv2.weight"], params["conv2.bias"])
    p2, win2 = pool(np.maximum(c2, 0))
    flat = p2.reshape(len(x), -1)
    logits = flat @ params["fc.weight"].T + params["fc.bias"]
    return logits, (x, c1, cols1, win1, p1, c2, cols2, win2, p2, flat)


def gradients(params, x, labels):
    logits, (x, c1, cols1, win1, p1, c2, cols2, win2, p2, flat) = forward(params, x)
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    dlogits = (probs - np.eye(10)[labels]) / len(x)
    grads = {"fc.weight": dlogits.T @ flat, "fc.bias": dlogits.sum(axis=0)}
    dc2 = pool_backward((dlogits @ params["fc.weight"]).reshape(p2.shape), win2) * (c2 > 0)
    dp1, grads["conv2.weight"], grads["conv2.bias"] = conv_backward(dc2, cols2, params["conv2.weight"], p1.shape)
    dc1 = pool_backward(dp1, win1) * (c1 > 0)
    _, grads["conv1.weight"], grads["conv1.bias"] = conv_backward(dc1, cols1, params["conv1.weight"], x.shape)
    return grads


def train(images: np.ndarray, labels: np.ndarray, rng: np.random.Generator) -> dict[str, np.ndarray]:
    params = init_params(rng)
    moments = {name: (np.zeros_like(p), np.zeros_like(p)) for name, p in params.items()}
    x = images[:, None].astype(np.float64) / SCALE
    step = 0
    for epoch in range(EPOCHS):
        rate = LEARNING_RATE * 0.5 * (1 + np.cos(np.pi * epoch / EPOCHS))  # cosine decay
        order = rng.permutation(len(x))
        for start in range(0, len(x), BATCH):
            batch = order[start : start + BATCH]
            step += 1
            for name, grad in gradients(params, x[batch], labels[batch]).items():
                m, v = moments[name]
                m[:] = 0.9 * m + 0.1 * grad
                v[:] = 0.999 * v + 0.001 * grad**2
                params[name] -= rate * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
    return params


def accuracy(params, images, labels) -> float:
    logits, _ = forward(params, images[:, None].astype(np.float64) / SCALE)
    return float(np.mean(logits.argmax(axis=1) == labels))


def export(params: dict[str, np.ndarray], test_accuracy: float) -> onnx.ModelProto:
    weights = dict(params, **{"conv1.weight": params["conv1.weight"] / SCALE})
    initializers = [numpy_helper.from_array(w.astype(np.float32), name) for name, w in weights.items()]

    def conv_node(name, x, y):
        return helper.make_node("Conv", [x, f"{name}.weight", f"{name}.bias"], [y], name=name, pads=[1, 1, 1, 1])

    def pool_node(name, x, y):
        return helper.make_node("MaxPool", [x], [y], name=name, kernel_shape=[2, 2], strides=[2, 2])

    nodes = [
        conv_node("conv1", "image", "c1"),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        pool_node("pool1", "r1", "p1"),
        conv_node("conv2", "p1", "c2"),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        pool_node("pool2", "r2", "p2"),
        helper.make_node("Flatten", ["p2"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"], ["logits"], name="fc", transB=1),
    ]
    graph = helper.make_graph(
        nodes,
        "digits_cnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 1, 8, 8])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="onnxc")
    model.doc_string = (
        f"Digit classifier for scikit-learn's 8x8 digits (input: intensities 0..16), trained by "
        f"onnxc/examples/train_digits.py (seed {SEED}); held-out accuracy {test_accuracy:.2%}."
    )
    onnx.checker.check_model(model)
    return model


def main(out_dir: Path) -> None:
    from sklearn.datasets import load_digits  # the one dev-only dependency

    digits = load_digits()
    images, labels = digits.images.astype(np.uint8), digits.target.astype(np.uint8)
    rng = np.random.default_rng(SEED)
    order = rng.permutation(len(images))
    test, fit = order[:HELD_OUT], order[HELD_OUT:]
    params = train(images[fit], labels[fit], rng)
    test_accuracy = accuracy(params, images[test], labels[test])
    print(f"accuracy: training {accuracy(params, images[fit], labels[fit]):.2%}, held-out {test_accuracy:.2%}")
    onnx.save(export(params, test_accuracy), out_dir / "digits.onnx")
    np.savez_compressed(out_dir / "digits_test.npz", images=images[test], labels=labels[test])
    print(f"wrote {out_dir / 'digits.onnx'} and {out_dir / 'digits_test.npz'}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent)
