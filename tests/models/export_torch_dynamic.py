"""Export torchvision and transformers architectures with torch's default (dynamo) exporter and
dynamic dims, as users export them. Needs torch, torchvision and transformers; the tests only
need the .onnx files.

    python tests/models/export_torch_dynamic.py                       # small fixtures -> tests/models/torch/
    python tests/models/export_torch_dynamic.py --full benchmarks/torch_exports   # full size, for benchmarks/

Small fixtures keep the architectures' code (torchvision's ResNet blocks, MobileNetV2,
EfficientNet; transformers' BertModel, GPT2Model, T5EncoderModel) at narrow widths so each
file stays small; `--full` exports ResNet-50, MobileNetV2, EfficientNet-B0, a BERT-base
encoder, GPT-2 small and a T5-small encoder at their real sizes (random weights).
The small set also has a Swin transformer (shifted windows: roll, window masks), a
LLaMA decoder (rotary embeddings, grouped-query attention, RMSNorm, SiLU gate) and a
DeBERTa-v2 encoder (disentangled relative-position attention). Names given on the
command line export only those models.
CNNs take a dynamic batch; transformers a dynamic batch x sequence with an attention mask.
BatchNorm statistics are randomized so that folding them is really tested. One model,
`bert_torchscript`, goes through the TorchScript exporter (`dynamo=False`), as optimum does.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch
import torchvision
import transformers
from export_torch import randomize_batchnorm  # run from this folder: python tests/models/...
from torch import nn
from torch.export import Dim
from torchvision.models.efficientnet import EfficientNet, _efficientnet_conf
from torchvision.models.resnet import BasicBlock, ResNet
from torchvision.models.swin_transformer import SwinTransformer

HERE = Path(__file__).parent
BATCH, SEQUENCE = Dim("batch"), Dim("sequence", min=2, max=512)


class LastHiddenState(nn.Module):
    """A transformers model called with keywords, returning its last hidden state, as
    optimum's export wrappers do."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


def narrow_resnet() -> nn.Module:
    """torchvision's ResNet and BasicBlock at a quarter of ResNet-18's widths."""
    model = ResNet(BasicBlock, [1, 1, 1, 1], num_classes=10)
    model.inplanes = 16
    model.conv1 = nn.Conv2d(3, 16, 7, 2, 3, bias=False)
    model.bn1 = nn.BatchNorm2d(16)
    model.layer1 = model._make_layer(BasicBlock, 16, 1)
    model.layer2 = model._make_layer(BasicBlock, 32, 1, stride=2)
    model.layer3 = model._make_layer(BasicBlock, 64, 1, stride=2)
    model.layer4 = model._make_layer(BasicBlock, 128, 1, stride=2)
    model.fc = nn.Linear(128, 10)
    return model


def efficientnet(width: float, depth: float, classes: int) -> nn.Module:
    setting, last_channel = _efficientnet_conf("efficientnet_b0", width_mult=width, depth_mult=depth)
    return EfficientNet(setting, 0.2, num_classes=classes, last_channel=last_channel)


def cnns(full: bool) -> dict[str, nn.Module]:
    if full:
        return {
            "resnet50": torchvision.models.resnet50(),
            "mobilenet_v2": torchvision.models.mobilenet_v2(),
            "efficientnet_b0": torchvision.models.efficientnet_b0(),
        }
    return {
        "resnet": narrow_resnet(),
        "mobilenet_v2": torchvision.models.mobilenet_v2(width_mult=0.25, num_classes=10),
        "efficientnet": efficientnet(0.25, 0.34, 10),
        "swin": SwinTransformer([4, 4], 16, [2, 2], [2, 4], [4, 4], num_classes=10),
    }


def transformer_models(full: bool) -> dict[str, nn.Module]:
    if full:
        bert = transformers.BertConfig()
        gpt2 = transformers.GPT2Config(use_cache=False)
        t5 = transformers.T5Config.from_dict(
            {"d_model": 512, "d_kv": 64, "num_heads": 8, "d_ff": 2048, "num_layers": 6}
        )
    else:
        bert = transformers.BertConfig(
            hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, vocab_size=100
        )
        gpt2 = transformers.GPT2Config(n_embd=64, n_layer=2, n_head=4, vocab_size=100, n_positions=512, use_cache=False)
        t5 = transformers.T5Config(d_model=64, d_kv=16, num_heads=4, d_ff=128, num_layers=2, vocab_size=100)
    models = {
        "bert": transformers.BertModel(bert),
        "gpt2": transformers.GPT2Model(gpt2),
        "t5_encoder": transformers.T5EncoderModel(t5),
    }
    if not full:
        small = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128}
        llama = transformers.LlamaConfig(**small, vocab_size=100, num_key_value_heads=2, use_cache=False)
        models["llama"] = transformers.LlamaModel(llama)
        models["deberta_v2"] = transformers.DebertaV2Model(transformers.DebertaV2Config(**small, vocab_size=100))
    return models


def export(model: nn.Module, example: tuple, path: Path, dims: dict[str, dict], dynamo: bool = True) -> None:
    model.eval()
    with torch.no_grad():
        if dynamo:
            torch.onnx.export(
                model,
                example,
                path,
                dynamo=True,
                dynamic_shapes=dims,
                input_names=list(dims),
                optimize=True,
                external_data=False,
            )
        else:
            axes = {name: {axis: dim.__name__ for axis, dim in spec.items()} for name, spec in dims.items()}
            torch.onnx.export(
                model, example, path, dynamo=False, dynamic_axes=axes, input_names=list(dims), opset_version=17
            )
    print("wrote", path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full", type=Path, help="export the full-size models into this folder")
    parser.add_argument("names", nargs="*", help="export only these models (default: all)")
    args = parser.parse_args()
    wanted = set(args.names)
    out = args.full or HERE / "torch"
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    side = 224 if args.full else 64
    for name, model in cnns(bool(args.full)).items():
        if wanted and name not in wanted:
            continue
        randomize_batchnorm(model)
        export(model, (torch.randn(2, 3, side, side),), out / f"{name}.onnx", {"x": {0: BATCH}})
    tokens = {"input_ids": {0: BATCH, 1: SEQUENCE}, "attention_mask": {0: BATCH, 1: SEQUENCE}}
    example = (torch.randint(0, 100, (2, 16)), torch.ones(2, 16, dtype=torch.int64))
    for name, model in transformer_models(bool(args.full)).items():
        if wanted and name not in wanted:
            continue
        export(LastHiddenState(model), example, out / f"{name}.onnx", tokens)
    if not args.full and (not wanted or "bert_torchscript" in wanted):
        bert = transformer_models(False)["bert"]
        export(LastHiddenState(bert), example, out / "bert_torchscript.onnx", tokens, dynamo=False)


if __name__ == "__main__":
    main()
