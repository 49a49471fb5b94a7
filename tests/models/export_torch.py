"""Regenerate the PyTorch-exported test models (needs torch; the tests only need the .onnx files).

    python tests/models/export_torch.py

- `bert_tiny.onnx`: a BERT-style encoder (token + position embedding, 2 layers of
  multi-head attention and GELU MLP with LayerNorm; hidden 64, sequence 16).
  Batch and sequence are dynamic axes, so the exporter writes the run-time shape
  arithmetic (`Shape → Gather → Unsqueeze → Concat → Reshape`) the optimizer must fold.
- `tiny_yolo.onnx`: a Tiny-YOLOv2-style CNN (Conv+BatchNorm+LeakyReLU+MaxPool blocks,
  a ZeroPad2d before the last stride-1 pool, a 1x1 detection head); batch dynamic.
"""

from pathlib import Path

import torch
from torch import nn

HERE = Path(__file__).parent
HIDDEN, HEADS, SEQ, VOCAB, LAYERS = 64, 4, 16, 100, 2


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(HIDDEN, 3 * HIDDEN)
        self.out = nn.Linear(HIDDEN, HIDDEN)

    def forward(self, x):
        batch, seq, hidden = x.size()
        q, k, v = self.qkv(x).split(hidden, dim=-1)
        heads = [t.view(batch, seq, HEADS, hidden // HEADS).transpose(1, 2) for t in (q, k, v)]
        scores = heads[0] @ heads[1].transpose(-1, -2) / (hidden // HEADS) ** 0.5
        context = torch.softmax(scores, dim=-1) @ heads[2]
        return self.out(context.transpose(1, 2).reshape(batch, seq, hidden))


class EncoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = Attention()
        self.norm1 = nn.LayerNorm(HIDDEN)
        self.mlp = nn.Sequential(nn.Linear(HIDDEN, 2 * HIDDEN), nn.GELU(), nn.Linear(2 * HIDDEN, HIDDEN))
        self.norm2 = nn.LayerNorm(HIDDEN)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        x = self.norm1(x + self.dropout(self.attention(x)))
        return self.norm2(x + self.dropout(self.mlp(x)))


class TinyBert(nn.Module):
    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, HIDDEN)
        self.positions = nn.Embedding(SEQ, HIDDEN)
        self.layers = nn.ModuleList(EncoderLayer() for _ in range(LAYERS))

    def forward(self, input_ids):
        positions = torch.arange(input_ids.size(1)).unsqueeze(0)
        x = self.tokens(input_ids) + self.positions(positions)
        for layer in self.layers:
            x = layer(x)
        return x


def conv_block(cin, cout):
    return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.LeakyReLU(0.1)]


class TinyYolo(nn.Module):
    def __init__(self):
        super().__init__()
        layers = []
        for cin, cout in ((3, 16), (16, 32), (32, 64)):
            layers += conv_block(cin, cout) + [nn.MaxPool2d(2, 2)]
        layers += conv_block(64, 128) + [nn.ZeroPad2d((0, 1, 0, 1)), nn.MaxPool2d(2, 1)]
        layers += conv_block(128, 64) + [nn.Conv2d(64, 5 * (5 + 4), 1)]
        self.net = nn.Sequential(*layers)

    def forward(self, image):
        return self.net(image)


def randomize_batchnorm(model: nn.Module) -> None:
    """Non-trivial running statistics, so folding BatchNorm into Conv is really tested."""
    generator = torch.Generator().manual_seed(1)
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            n = module.num_features
            module.running_mean.copy_(torch.randn(n, generator=generator) * 0.1)
            module.running_var.copy_(torch.rand(n, generator=generator) + 0.5)
            module.weight.data.copy_(torch.rand(n, generator=generator) + 0.5)
            module.bias.data.copy_(torch.randn(n, generator=generator) * 0.1)


def export(model: nn.Module, example: torch.Tensor, name: str, input_name: str, dynamic: dict) -> None:
    model.eval()
    torch.onnx.export(
        model,
        (example,),
        HERE / f"{name}.onnx",
        input_names=[input_name],
        output_names=["output"],
        dynamic_axes={input_name: dynamic, "output": {0: "batch"}},
        opset_version=17,
        dynamo=False,
        do_constant_folding=False,  # keep the exporter's noise: BatchNorm, shape arithmetic
    )


def main() -> None:
    torch.manual_seed(0)
    export(TinyBert(), torch.randint(0, VOCAB, (1, SEQ)), "bert_tiny", "input_ids", {0: "batch", 1: "seq"})
    yolo = TinyYolo()
    randomize_batchnorm(yolo)
    export(yolo, torch.randn(1, 3, 64, 64), "tiny_yolo", "image", {0: "batch"})


if __name__ == "__main__":
    main()
