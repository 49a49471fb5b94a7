"""Regenerate the PyTorch-exported recurrent test models (needs torch; the tests only need the .onnx files).

    python tests/models/export_lstm.py

Both are the model-zoo LSTM family as `torch.onnx.export` writes it: one ONNX LSTM
(or GRU) node per layer with both directions (weights already in ONNX gate order),
zero initial states built from the run-time batch size (Shape → Gather → Unsqueeze
→ Concat → ConstantOfShape → Slice per layer), batch_first as Transposes around the
seq-major nodes, the Transpose/Reshape between layers that merges the two
directions, and a Linear head (Gemm) on the last step (Gather).

- `lstm_tiny.onnx`: nn.LSTM(16 → 24, 2 layers, bidirectional, batch_first) + Linear(48 → 10)
  (~90 KB of weights); input `sequence` [batch, 20, 16], batch dynamic.
- `gru_tiny.onnx`: the same with nn.GRU (~70 KB).
"""

from pathlib import Path

import torch
from torch import nn

HERE = Path(__file__).parent
INPUT, HIDDEN, LAYERS, CLASSES, SEQUENCE = 16, 24, 2, 10, 20


class Recurrent(nn.Module):
    def __init__(self, cell: type[nn.Module]):
        super().__init__()
        self.rnn = cell(INPUT, HIDDEN, num_layers=LAYERS, bidirectional=True, batch_first=True)
        self.head = nn.Linear(2 * HIDDEN, CLASSES)

    def forward(self, sequence):
        output, _ = self.rnn(sequence)
        return self.head(output[:, -1])


def export(model: nn.Module, name: str) -> None:
    model.eval()
    torch.onnx.export(
        model,
        (torch.randn(2, SEQUENCE, INPUT),),
        HERE / f"{name}.onnx",
        input_names=["sequence"],
        output_names=["logits"],
        dynamic_axes={"sequence": {0: "batch"}, "logits": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )


def main() -> None:
    torch.manual_seed(0)
    export(Recurrent(nn.LSTM), "lstm_tiny")
    export(Recurrent(nn.GRU), "gru_tiny")


if __name__ == "__main__":
    main()
