"""A survey of architectures as users export them: torchvision and transformers models
through torch's default (dynamo) exporter with dynamic batch (and sequence, samples, or
height and width), at their real layer structure but narrow where a model is big, random
weights. `check` compiles each file with no `--shape`, runs one library at two shapes and
compares every output with onnxruntime.

    python tests/models/survey_exports.py export DIR [NAME ...]   # needs torch, torchvision, transformers
    python tests/models/survey_exports.py check DIR [NAME ...]    # needs onnxc and onnxruntime

`check` prints one line per model (OK, WRONG or FAIL with the error) and exits with
status 1 if any is not OK. The results of the last survey are in docs/compatibility.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

TOLERANCE = 1e-4
"""Largest |onnxc - onnxruntime| over max|onnxruntime|, per output."""


# ------------------------------------------------------------------------------ export


def _wrappers():
    """The wrapper modules (defined here: only `export` imports torch)."""
    from torch import nn

    class Field(nn.Module):
        """One field of a model's output (a dict or a ModelOutput), called on one tensor."""

        def __init__(self, model: nn.Module, field: str):
            super().__init__()
            self.model, self.field = model, field

        def forward(self, x):
            out = self.model(x)
            return out[self.field] if isinstance(out, dict) else getattr(out, self.field)

    class Tokens(nn.Module):
        """A transformers model called with keywords, as optimum's export wrappers do."""

        def __init__(self, model: nn.Module, field: str):
            super().__init__()
            self.model, self.field = model, field

        def forward(self, input_ids, attention_mask):
            return getattr(self.model(input_ids=input_ids, attention_mask=attention_mask), self.field)

    return Field, Tokens


def _models():
    """name -> (build the module, example inputs, dynamic dims by input name)."""
    import torch
    import torchvision
    import transformers as tf
    from torch.export import Dim

    tv, seg = torchvision.models, torchvision.models.segmentation
    Field, Tokens = _wrappers()
    batch, sequence = Dim("batch", max=64), Dim("sequence", min=2, max=512)
    height, width = Dim("height", min=32, max=1024), Dim("width", min=32, max=1024)
    image = {"x": {0: batch}}

    def classifier(make, side=96):
        return make, (torch.randn(2, 3, side, side),), image

    models = {
        name: classifier(make)
        for name, make in {
            "alexnet": lambda: tv.alexnet(num_classes=10),
            "convnext_tiny": lambda: tv.convnext_tiny(num_classes=10),
            "densenet121": lambda: tv.densenet121(num_classes=10),
            "efficientnet_v2_s": lambda: tv.efficientnet_v2_s(num_classes=10),
            "googlenet": lambda: tv.googlenet(num_classes=10, aux_logits=False, init_weights=False),
            "mnasnet0_5": lambda: tv.mnasnet0_5(num_classes=10),
            "mobilenet_v3_small": lambda: tv.mobilenet_v3_small(num_classes=10),
            "regnet_y_400mf": lambda: tv.regnet_y_400mf(num_classes=10),
            "resnet18": lambda: tv.resnet18(num_classes=10),
            "resnext50": lambda: tv.resnext50_32x4d(num_classes=10),
            "shufflenet_v2": lambda: tv.shufflenet_v2_x0_5(num_classes=10),
            "squeezenet1_1": lambda: tv.squeezenet1_1(num_classes=10),
            "vgg11_bn": lambda: tv.vgg11_bn(num_classes=10),
            "wide_resnet50": lambda: tv.wide_resnet50_2(num_classes=10),
        }.items()
    }
    free_size = {"x": {0: batch, 2: height, 3: width}}
    models["resnet18_hw"] = (lambda: tv.resnet18(num_classes=10), (torch.randn(2, 3, 96, 128),), free_size)
    models["mobilenet_v3_hw"] = (
        lambda: tv.mobilenet_v3_small(num_classes=10),
        (torch.randn(2, 3, 96, 128),),
        free_size,
    )
    models["inception_v3"] = classifier(lambda: tv.inception_v3(num_classes=10, aux_logits=False), 299)
    models["vit"] = classifier(lambda: tv.VisionTransformer(224, 16, 4, 4, 128, 256, num_classes=10), 224)
    models["swin_t"] = classifier(lambda: tv.swin_t(num_classes=10), 224)
    models["maxvit_t"] = classifier(lambda: tv.maxvit_t(num_classes=10), 224)
    models["r3d_18"] = (lambda: tv.video.r3d_18(num_classes=5), (torch.randn(1, 3, 8, 64, 64),), image)
    for name, make in {
        "deeplabv3_mobilenet": lambda: seg.deeplabv3_mobilenet_v3_large(num_classes=5, weights_backbone=None),
        "fcn_resnet50": lambda: seg.fcn_resnet50(num_classes=5, weights_backbone=None),
        "lraspp_mobilenet": lambda: seg.lraspp_mobilenet_v3_large(num_classes=5, weights_backbone=None),
    }.items():
        models[name] = (lambda make=make: Field(make(), "out"), (torch.randn(2, 3, 128, 128),), image)

    small = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128}
    text = {**small, "vocab_size": 100}
    decoder = {**text, "num_key_value_heads": 2, "use_cache": False}
    seq2seq = {"d_model": 64, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 4}
    seq2seq |= {"decoder_attention_heads": 4, "encoder_ffn_dim": 128, "decoder_ffn_dim": 128, "vocab_size": 100}
    tokens = (torch.randint(0, 100, (2, 16)), torch.ones(2, 16, dtype=torch.int64))
    token_dims = {"input_ids": {0: batch, 1: sequence}, "attention_mask": {0: batch, 1: sequence}}
    for name, (make, field) in {
        "albert": (lambda: tf.AlbertModel(tf.AlbertConfig(**text, embedding_size=32)), "last_hidden_state"),
        "bart_encoder": (lambda: tf.BartModel(tf.BartConfig(**seq2seq, use_cache=False)).encoder, "last_hidden_state"),
        "bert_classifier": (lambda: tf.BertForSequenceClassification(tf.BertConfig(**text, num_labels=3)), "logits"),
        "deberta_v2": (lambda: tf.DebertaV2Model(tf.DebertaV2Config(**text)), "last_hidden_state"),
        "distilbert": (
            lambda: tf.DistilBertModel(
                tf.DistilBertConfig(dim=64, n_layers=2, n_heads=4, hidden_dim=128, vocab_size=100)
            ),
            "last_hidden_state",
        ),
        "electra": (lambda: tf.ElectraModel(tf.ElectraConfig(**text, embedding_size=32)), "last_hidden_state"),
        "gemma": (lambda: tf.GemmaModel(tf.GemmaConfig(**decoder, head_dim=16)), "last_hidden_state"),
        "gpt2_lm": (
            lambda: tf.GPT2LMHeadModel(tf.GPT2Config(n_embd=64, n_layer=2, n_head=4, vocab_size=100, use_cache=False)),
            "logits",
        ),
        "gpt_neo": (
            lambda: tf.GPTNeoModel(
                tf.GPTNeoConfig(
                    hidden_size=64,
                    num_layers=2,
                    num_heads=4,
                    vocab_size=100,
                    use_cache=False,
                    attention_types=[[["global", "local"], 1]],
                )
            ),
            "last_hidden_state",
        ),
        "llama": (lambda: tf.LlamaModel(tf.LlamaConfig(**decoder)), "last_hidden_state"),
        "mistral": (lambda: tf.MistralModel(tf.MistralConfig(**decoder)), "last_hidden_state"),
        "mpnet": (lambda: tf.MPNetModel(tf.MPNetConfig(**text)), "last_hidden_state"),
        "phi": (lambda: tf.PhiModel(tf.PhiConfig(**text, use_cache=False)), "last_hidden_state"),
        "qwen2": (lambda: tf.Qwen2Model(tf.Qwen2Config(**decoder)), "last_hidden_state"),
        "roberta": (
            lambda: tf.RobertaModel(tf.RobertaConfig(**text, max_position_embeddings=600)),
            "last_hidden_state",
        ),
        "xlm_roberta": (
            lambda: tf.XLMRobertaModel(tf.XLMRobertaConfig(**text, max_position_embeddings=600)),
            "last_hidden_state",
        ),
    }.items():
        models[name] = (lambda make=make, field=field: Tokens(make(), field), tokens, token_dims)

    vision = {**small, "image_size": 64, "patch_size": 8}
    pixels = (torch.randn(2, 3, 64, 64),)
    models["hf_vit"] = (lambda: Field(tf.ViTModel(tf.ViTConfig(**vision)), "last_hidden_state"), pixels, image)
    models["clip_vision"] = (
        lambda: Field(tf.CLIPVisionModel(tf.CLIPVisionConfig(**vision)), "last_hidden_state"),
        pixels,
        image,
    )
    audio = {**small, "conv_dim": (32, 32, 32), "conv_stride": (5, 2, 2), "conv_kernel": (10, 3, 3)}
    audio |= {"num_conv_pos_embeddings": 16, "num_conv_pos_embedding_groups": 4}
    models["wav2vec2"] = (
        lambda: Field(tf.Wav2Vec2Model(tf.Wav2Vec2Config(**audio)), "last_hidden_state"),
        (torch.randn(2, 4000),),
        {"x": {0: batch, 1: Dim("samples", min=400, max=64000)}},
    )
    whisper = {**seq2seq, "num_mel_bins": 16, "max_source_positions": 100, "pad_token_id": 1}
    whisper |= {"bos_token_id": 0, "eos_token_id": 2, "decoder_start_token_id": 0}
    models["whisper_encoder"] = (
        lambda: Field(tf.WhisperModel(tf.WhisperConfig(**whisper)).encoder, "last_hidden_state"),
        (torch.randn(2, 16, 200),),
        image,
    )
    return models


def _randomize_zeros(model) -> None:
    """Weights initialized to zero (ViT's head) made random, so that outputs compare something."""
    import torch

    generator = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.dim() >= 2 and not parameter.any():
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.02)


def export(folder: Path, names: set[str]) -> None:
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    for name, (make, example, dims) in _models().items():
        path = folder / f"{name}.onnx"
        if (names and name not in names) or path.exists():
            continue
        model = make().eval()
        _randomize_zeros(model)
        try:
            with torch.no_grad():
                torch.onnx.export(model, example, path, dynamo=True, dynamic_shapes=dims, input_names=list(dims),
                                  optimize=True, external_data=False)  # fmt: skip
            print("wrote", path, flush=True)
        except Exception as error:  # noqa: BLE001 (a model torch cannot export is reported, not fatal)
            print(f"EXPORT FAILED {name}: {type(error).__name__}: {str(error).splitlines()[0][:200]}", flush=True)


# ------------------------------------------------------------------------------- check


def _feeds(model, variant: int) -> dict[str, np.ndarray]:
    """Inputs at one of two shapes: symbolic dims by their names (batch 1 or 2, sequences of
    16 or 21 tokens, images of 96 or 128, 4000 or 4800 samples); an all-ones attention mask."""
    from onnx import helper

    rng = np.random.default_rng(variant)
    feeds = {}
    for value in model.graph.input:
        tensor = value.type.tensor_type
        dims = []
        for axis, dim in enumerate(tensor.shape.dim):
            name = dim.dim_param.lower()
            if dim.HasField("dim_value"):
                dims.append(dim.dim_value)
            elif "batch" in name or axis == 0:
                dims.append(1 + variant)
            elif "height" in name or "width" in name:
                dims.append(96 + 32 * variant)
            elif "sample" in name:
                dims.append(4000 + 800 * variant)
            else:
                dims.append(16 + 5 * variant)
        dtype = helper.tensor_dtype_to_np_dtype(tensor.elem_type)
        if value.name == "attention_mask":
            feeds[value.name] = np.ones(dims, dtype)
        elif np.issubdtype(dtype, np.integer):
            feeds[value.name] = rng.integers(0, 100, dims).astype(dtype)
        else:
            feeds[value.name] = rng.standard_normal(dims).astype(dtype)
    return feeds


def check(folder: Path, names: set[str]) -> bool:
    import onnx
    import onnxruntime

    import onnxc

    every_one_ok = True
    for path in sorted(folder.glob("*.onnx")):
        if names and path.stem not in names:
            continue
        try:
            started = time.perf_counter()
            library = onnxc.compile(path, path.with_suffix(".so"))
            seconds = time.perf_counter() - started
            model = onnx.load(path)
            session = onnxc.Session(library)
            reference = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
            worst = 0.0
            for variant in (0, 1):
                feeds = _feeds(model, variant)
                for got, want in zip(session.run(None, feeds), reference.run(None, feeds), strict=True):
                    if got.shape != want.shape:
                        raise AssertionError(f"shape {got.shape}, onnxruntime {want.shape}")
                    scale = max(float(np.abs(want).max()), 1e-30) if want.size else 1.0
                    worst = max(worst, float(np.abs(got - want).max()) / scale if want.size else 0.0)
            status = "OK" if worst <= TOLERANCE else "WRONG"
            print(f"{status:5} {path.stem:22} compile {seconds:5.1f} s  max err {worst:.1e}", flush=True)
        except Exception as error:  # noqa: BLE001 (every model is tried; failures are the report)
            status = "FAIL"
            print(f"FAIL  {path.stem:22} {type(error).__name__}: {str(error).splitlines()[0][:240]}", flush=True)
        every_one_ok &= status == "OK"
    return every_one_ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", choices=("export", "check"))
    parser.add_argument("folder", type=Path)
    parser.add_argument("names", nargs="*", help="only these models (default: all)")
    args = parser.parse_args()
    if args.step == "export":
        export(args.folder, set(args.names))
    else:
        sys.exit(0 if check(args.folder, set(args.names)) else 1)


if __name__ == "__main__":
    main()
