"""The quick-start model: a small CNN with trained weights that reads 8x8 handwritten digits.

`digits.onnx` (Conv/Relu/MaxPool twice, then Gemm; input `image` [1, 1, 8, 8]
float32 intensities 0..16) and `digits_test.npz` (the held-out images it was not
trained on, with their labels) were written by `train_digits.py` from
scikit-learn's digits data set.

    python -m onnxc.examples.digits digits.onnx        # writes the model
    onnxc digits.onnx                                   # compiles it to digits.so
    python -m onnxc.examples.digits --predict digits.so

`--predict` shows one held-out image of each digit with the class the compiled
library gives it, and the accuracy on all held-out images next to onnxruntime's
(onnx.reference's where onnxruntime is not installed).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx

MODEL_PATH = Path(__file__).with_name("digits.onnx")
HELD_OUT_PATH = Path(__file__).with_name("digits_test.npz")
SHADES = " .:*#"
"""Intensity 0..16 -> character, for drawing a digit in the terminal."""


def load_digits_model() -> onnx.ModelProto:
    return onnx.load(MODEL_PATH)


def held_out_digits() -> tuple[np.ndarray, np.ndarray]:
    """The held-out images as model inputs (float32 [N, 1, 1, 8, 8]) and their labels [N]."""
    with np.load(HELD_OUT_PATH) as data:
        return data["images"].astype(np.float32)[:, None, None], data["labels"].astype(np.int64)


def reference_classifier(model: onnx.ModelProto) -> tuple[str, Callable[[np.ndarray], np.ndarray]]:
    """(name, image -> logits) of onnxruntime, or of onnx.reference where it is missing."""
    try:
        import onnxruntime
    except ImportError:
        from onnx.reference import ReferenceEvaluator

        evaluator = ReferenceEvaluator(model)
        return "onnx.reference", lambda image: evaluator.run(None, {"image": image})[0]
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return "onnxruntime", lambda image: session.run(None, {"image": image})[0]


def draw(image: np.ndarray) -> list[str]:
    """An 8x8 digit as 8 lines of text, two characters per pixel."""
    levels = np.minimum(image.reshape(8, 8).astype(int) * len(SHADES) // 17, len(SHADES) - 1)
    return ["".join(SHADES[v] * 2 for v in row) for row in levels]


def predict(library: str | Path) -> None:
    from onnxc.runtime import Session

    session = Session(library)
    reference_name, reference = reference_classifier(load_digits_model())
    images, labels = held_out_digits()
    logits = np.concatenate([session.run(None, {"image": image})[0] for image in images])
    expected = np.concatenate([reference(image) for image in images])
    ours, theirs = logits.argmax(axis=1), expected.argmax(axis=1)

    samples = [int(np.flatnonzero(labels == digit)[0]) for digit in range(10)]
    print(f"one held-out image of each digit, and the class {Path(library).name} gives it:")
    drawings = [draw(images[i]) for i in samples]
    for half in (samples[:5], samples[5:]):
        for row in range(8):
            print("   ".join(drawings[samples.index(i)][row] for i in half))
        print("   ".join(f"{f'-> {ours[i]}':<16}" for i in half).rstrip())
    error = float(np.max(np.abs(logits - expected)) / np.max(np.abs(expected)))
    print(
        f"accuracy on {len(labels)} held-out images: {np.mean(ours == labels):.2%} "
        f"({reference_name}: {np.mean(theirs == labels):.2%}, max relative logit difference {error:.1e})"
    )


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--predict":
        predict(sys.argv[2])
    else:
        out = sys.argv[1] if len(sys.argv) > 1 else "digits.onnx"
        onnx.save(load_digits_model(), out)
        print(f"wrote {out}")
