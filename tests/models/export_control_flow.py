"""Regenerate the PyTorch-exported run-time control-flow models (needs torch; the tests only need the .onnx files).

    /work/torchenv/bin/python tests/models/export_control_flow.py   # any Python with torch, onnx, onnxscript

Each is the kind of model issue #18 lists, exported as torch writes it:
- `cf_repeat.onnx`: a scripted `for _ in range(int(n))` applying a cell, `n` an
  int64 input (TorchScript exporter: a Loop with a run-time trip count).
- `cf_collect.onnx`: a scripted `while` on a data-dependent condition appending
  one value per step to a list, stacked after (a Loop of trip count INT64_MAX
  carrying a sequence: SequenceEmpty, SequenceInsert, ConcatFromSequence).
- `cf_decoder.onnx`: a scripted greedy decoder, `for` over an input count with a
  `break` on the end token, appending each token (`torch.cat`) to the result.
- `cf_cond.onnx`: `torch.cond` on a data-dependent predicate (default dynamo
  exporter: an If whose branches read the outer input).
- `cf_rate.onnx`: a scripted `if int(sr) == 16000` on an int64 scalar input, as a
  voice-activity detector branches on its sample rate.
"""

from pathlib import Path

import torch
from torch import nn

HERE = Path(__file__).parent


class Repeat(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.Linear(4, 4)

    def forward(self, x, n):
        h = x
        for _ in range(int(n)):
            h = torch.tanh(self.cell(h)) + x
        return h


class Collect(nn.Module):
    def forward(self, x):
        values: list[torch.Tensor] = []
        while bool(x.abs().sum() < 100.0):
            x = x * 1.5 + 1.0
            values.append(x.sum(0))
        return torch.stack(values)


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(8, 6)
        self.cell = nn.Linear(12, 6)
        self.head = nn.Linear(6, 8)
        with torch.no_grad():  # the end token (0) rarer: some inputs decode to the length limit
            self.head.bias[0] -= 0.2

    def forward(self, token, h, max_len):
        tokens = token
        for _ in range(int(max_len)):
            h = torch.tanh(self.cell(torch.cat([self.embed(token), h], 1)))
            token = self.head(h).argmax(-1)
            tokens = torch.cat([tokens, token])
            if bool(token[0] == 0):  # the end token
                break
        return tokens


class Cond(nn.Module):
    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda x: x.sin() * 2.0, lambda x: x.cos() + 1.0, (x,))


class Rate(nn.Module):
    def __init__(self):
        super().__init__()
        self.wide = nn.Linear(4, 3)
        self.narrow = nn.Linear(4, 3)

    def forward(self, x, sr):
        if int(sr) == 16000:
            return self.wide(x)
        return self.narrow(x) * 0.5


def main() -> None:
    torch.manual_seed(0)
    x = torch.randn(3, 4)
    scripted = {
        "cf_repeat": (Repeat(), (x, torch.tensor(3)), ["x", "n"]),
        "cf_collect": (Collect(), (x,), ["x"]),
        "cf_decoder": (Decoder(), (torch.tensor([1]), torch.zeros(1, 6), torch.tensor(5)), ["token", "h", "max_len"]),
        "cf_rate": (Rate(), (x, torch.tensor(16000)), ["x", "sr"]),
    }
    for name, (model, args, inputs) in scripted.items():
        torch.onnx.export(torch.jit.script(model), args, HERE / f"{name}.onnx", input_names=inputs, dynamo=False)
    torch.onnx.export(Cond(), (x,), dynamo=True).save(HERE / "cf_cond.onnx")


if __name__ == "__main__":
    main()
