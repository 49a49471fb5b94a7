"""Regenerate small PyTorch exports of the ONNX model-zoo families (needs torch; the tests only need the .onnx files).

    python tests/models/export_zoo.py

Each model has the layer mix of its family, at a width that keeps the file
small; weights are random (BatchNorm statistics too, so folding is tested):
- `mnist_cnn.onnx`: two Conv+ReLU+MaxPool stages and a Linear head (MNIST).
- `resnet_mini.onnx`: basic residual blocks with strided 1x1 downsampling,
  GlobalAveragePool and a Linear head (ResNet).
- `mobilenet_mini.onnx`: inverted residual blocks with depthwise 3x3 convs and
  ReLU6, a Dropout+Linear classifier (MobileNetV2).
- `arcface_mini.onnx`: IR-ResNet blocks (BN-Conv-BN-PReLU-Conv-BN + shortcut),
  then BatchNorm2d, Flatten, Linear, BatchNorm1d and an L2-normalized
  embedding (ArcFace).
- `ferplus_mini.onnx`: VGG-style 3x3 conv stacks with MaxPool and Dropout, two
  Linear layers (FER+ emotion recognition, 1x64x64 grayscale input).
"""

import torch
import torch.nn.functional as functional
from export_torch import export, randomize_batchnorm
from torch import nn


class MnistCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 5, padding=2), nn.ReLU(), nn.MaxPool2d(3, 3),
        )  # fmt: skip
        self.head = nn.Linear(16 * 4 * 4, 10)

    def forward(self, image):
        return self.head(torch.flatten(self.features(image), 1))


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = functional.relu(self.bn1(self.conv1(x)))
        return functional.relu(self.bn2(self.conv2(y)) + self.shortcut(x))


class ResNetMini(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 16, 7, 2, 3, bias=False), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(3, 2, 1)
        )
        self.blocks = nn.Sequential(BasicBlock(16, 16, 1), BasicBlock(16, 32, 2), BasicBlock(32, 64, 2))
        self.head = nn.Linear(64, 10)

    def forward(self, image):
        x = self.blocks(self.stem(image))
        return self.head(torch.flatten(functional.adaptive_avg_pool2d(x, 1), 1))


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        self.residual = stride == 1 and cin == cout
        self.body = nn.Sequential(
            nn.Conv2d(cin, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6(),
            nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6(),
            nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout),
        )  # fmt: skip

    def forward(self, x):
        return x + self.body(x) if self.residual else self.body(x)


class MobileNetMini(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU6(),
            InvertedResidual(16, 16, 1, 1), InvertedResidual(16, 24, 2, 6), InvertedResidual(24, 24, 1, 6),
            InvertedResidual(24, 32, 2, 6), nn.Conv2d(32, 128, 1, bias=False), nn.BatchNorm2d(128), nn.ReLU6(),
        )  # fmt: skip
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(128, 10))

    def forward(self, image):
        return self.classifier(functional.adaptive_avg_pool2d(self.features(image), 1).flatten(1))


class IrBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.body = nn.Sequential(
            nn.BatchNorm2d(cin), nn.Conv2d(cin, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout),
            nn.PReLU(cout), nn.Conv2d(cout, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout),
        )  # fmt: skip
        self.shortcut = (
            nn.MaxPool2d(1, stride) if cin == cout
            else nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
        )  # fmt: skip

    def forward(self, x):
        return self.body(x) + self.shortcut(x)


class ArcFaceMini(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.PReLU(16))
        self.blocks = nn.Sequential(IrBlock(16, 16, 2), IrBlock(16, 32, 2), IrBlock(32, 32, 1))
        self.output = nn.Sequential(nn.BatchNorm2d(32), nn.Dropout(0.4), nn.Flatten())
        self.embedding = nn.Linear(32 * 7 * 7, 64)
        self.features = nn.BatchNorm1d(64)

    def forward(self, face):
        x = self.output(self.blocks(self.stem(face)))
        return functional.normalize(self.features(self.embedding(x)))


class FerPlusMini(nn.Module):
    def __init__(self):
        super().__init__()

        def stage(cin, cout, convs):
            layers = []
            for i in range(convs):
                layers += [nn.Conv2d(cin if i == 0 else cout, cout, 3, padding=1), nn.ReLU()]
            return layers + [nn.MaxPool2d(2), nn.Dropout(0.25)]

        self.features = nn.Sequential(*stage(1, 16, 2), *stage(16, 32, 2), *stage(32, 64, 3), *stage(64, 64, 1))
        self.classifier = nn.Sequential(nn.Linear(64 * 4 * 4, 128), nn.ReLU(), nn.Dropout(0.5), nn.Linear(128, 8))

    def forward(self, image):
        return self.classifier(torch.flatten(self.features(image), 1))


def randomize_batchnorm1d_and_prelu(model: nn.Module) -> None:
    """Non-default BatchNorm1d statistics and PReLU slopes (export_torch randomizes BatchNorm2d)."""
    generator = torch.Generator().manual_seed(2)
    for module in model.modules():
        if isinstance(module, nn.BatchNorm1d):
            module.running_mean.copy_(torch.randn(module.num_features, generator=generator) * 0.1)
            module.running_var.copy_(torch.rand(module.num_features, generator=generator) + 0.5)
        if isinstance(module, nn.PReLU):
            module.weight.data.copy_(torch.rand(module.weight.shape, generator=generator) * 0.5)


def main() -> None:
    torch.manual_seed(0)
    zoo = [
        (MnistCnn(), (1, 1, 28, 28), "mnist_cnn"),
        (ResNetMini(), (1, 3, 64, 64), "resnet_mini"),
        (MobileNetMini(), (1, 3, 64, 64), "mobilenet_mini"),
        (ArcFaceMini(), (2, 3, 28, 28), "arcface_mini"),
        (FerPlusMini(), (1, 1, 64, 64), "ferplus_mini"),
    ]
    for model, shape, name in zoo:
        randomize_batchnorm(model)
        randomize_batchnorm1d_and_prelu(model)
        export(model, torch.randn(*shape), name, "image", {0: "batch"})


if __name__ == "__main__":
    main()
