#!/usr/bin/python3
"""Writes tests/fixtures/encode/fairface/: random-weight torchvision ResNets saved as FairFace's
checkpoint is (torch.save of a state_dict), and the logits and per-head probabilities that
torchvision's own forward computes in float64 from real photographs preprocessed as FairFace's
predict.py does:

  PIL Image.open(f).convert("RGB") -> transforms.Resize((224, 224)) (PIL bilinear, Pillow's
  antialiasing) -> ToTensor -> Normalize(ImageNet mean, std)      (float32, as predict.py)
  -> model.double()(x.double())                                    (the float64 reference)
  -> per head np.exp(x) / np.sum(np.exp(x)) over its slice        (predict.py's softmax)

Models (torchvision.models.resnet.ResNet with every channel count divided by a width divisor, so
the committed files stay small; the topology is torchvision's):
  resnet34_w8.pt          resnet34 (BasicBlock 3,4,6,3), 18 outputs, widths / 8: the race7 model;
                          torch.save(state_dict) in the zip format, bare keys
  race4_resnet18_w16.pt   resnet18, 18 outputs, widths / 16, saved from nn.DataParallel
                          ("module." keys) in the legacy format: the race4 model
  resnet50_w16.safetensors resnet50 (Bottleneck 3,4,6,3), 10 outputs, widths / 16
  hostile_global.pt       resnet18 / 16's state dict with one value whose pickle calls
                          posix.system (never executed by vlbias: refused by the unpickler)
Batch norm: gamma and beta random, running statistics from a forward pass over random images
(so activations stay O(1)) and then perturbed, so folding them into the convolutions is tested.

  /usr/bin/python3 tools/make_fairface_fixtures.py                  # the committed fixtures
  /usr/bin/python3 tools/make_fairface_fixtures.py --full /tmp/ff   # full-size resnet34 (85 MB)
      and its expected.json, for VLBIAS_FAIRFACE_FULL=/tmp/ff and bench/vs_torch_resnet.py
"""
import argparse
import json
import os
import sys
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn
import torchvision
from PIL import Image
from torchvision import transforms
from torchvision.models.resnet import BasicBlock, Bottleneck, ResNet

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_clip_fixtures import write_safetensors  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Photographs larger than 224 (downscaled, with antialiasing) and one smaller (upscaled).
IMAGES = ["astronaut.png", "grace_hopper.jpg", "chelsea.png", "derived/bilevel.png"]

RACE7 = {"race": (0, ["White", "Black", "Latino_Hispanic", "East Asian", "Southeast Asian",
                      "Indian", "Middle Eastern"]),
         "gender": (7, ["Male", "Female"]),
         "age": (9, ["0-2", "3-9", "10-19", "20-29", "30-39", "40-49", "50-59", "60-69", "70+"])}
RACE4 = {"race": (0, ["White", "Black", "Asian", "Indian"])}


class NarrowResNet(ResNet):
    """torchvision's ResNet with every channel count divided by `div` (torchvision's own
    _make_layer and forward; only the widths change)."""

    def __init__(self, block, layers, num_classes, div):
        self.div = div
        self.first_layer = True
        super().__init__(block, layers, num_classes=num_classes)
        width = 64 // div
        self.conv1 = nn.Conv2d(3, width, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.fc = nn.Linear(512 // div * block.expansion, num_classes)

    def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
        if self.first_layer:
            self.inplanes = 64 // self.div
            self.first_layer = False
        return super()._make_layer(block, planes // self.div, blocks, stride, dilate)


def build(block, layers, classes, div, seed):
    torch.manual_seed(seed)
    if div == 1:
        model = ResNet(block, layers, num_classes=classes)
    else:
        model = NarrowResNet(block, layers, classes, div)
    bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    with torch.no_grad():
        for bn in bns:
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.normal_(0.0, 0.1)
            bn.reset_running_stats()
            bn.momentum = None  # cumulative average
        model.train()
        model(torch.randn(4, 3, 224, 224))
        for bn in bns:
            bn.running_mean += 0.2 * bn.running_var.sqrt() * torch.randn_like(bn.running_mean)
            bn.running_var *= torch.empty_like(bn.running_var).uniform_(0.7, 1.4)
            bn.momentum = 0.1
        model.fc.bias.normal_(0.0, 0.1)
    model.eval()
    return model


def preprocess(path):
    trans = transforms.Compose([
        transforms.Resize((224, 224)),
        transforms.ToTensor(),
        transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])])
    return trans(Image.open(path).convert("RGB"))


def softmax_heads(logits, heads):
    out = {}
    for name, (first, classes) in heads.items():
        x = logits[first:first + len(classes)]
        out[name] = (np.exp(x) / np.sum(np.exp(x))).tolist()
    return out


def reference(model, pixels, heads):
    with torch.no_grad():
        logits = model.double()(pixels.double()).numpy()
    model.float()
    return {"logits": logits.tolist(),
            "probabilities": [softmax_heads(row, heads) for row in logits]}


class SystemCall:
    """A value whose pickle calls posix.system("echo pwned") when loaded by pickle."""

    def __reduce__(self):
        return (os.system, ("echo pwned",))


def write(out, full):
    os.makedirs(out, exist_ok=True)
    paths = [os.path.join(ROOT, "tests/data/images/real", name) for name in IMAGES]
    pixels = torch.stack([preprocess(p) for p in paths])
    expected = OrderedDict(images=IMAGES)
    # predict.py's preprocessing, sampled: every 101st float of each image's tensor.
    expected["pixels_stride"] = 101
    expected["pixels"] = [t.flatten()[::101].tolist() for t in pixels]
    if full:
        model = build(BasicBlock, [3, 4, 6, 3], 18, 1, 34)
        torch.save(model.state_dict(), os.path.join(out, "resnet34.pt"))
        expected["resnet34"] = reference(model, pixels, RACE7)
    else:
        model = build(BasicBlock, [3, 4, 6, 3], 18, 8, 34)
        torch.save(model.state_dict(), os.path.join(out, "resnet34_w8.pt"))
        expected["resnet34_w8"] = reference(model, pixels, RACE7)

        model = build(BasicBlock, [2, 2, 2, 2], 18, 16, 18)
        torch.save(nn.DataParallel(model).state_dict(), os.path.join(out, "race4_resnet18_w16.pt"),
                   _use_new_zipfile_serialization=False)
        expected["race4_resnet18_w16"] = reference(model, pixels, RACE4)

        evil = OrderedDict(model.state_dict())
        evil["fc.extra"] = SystemCall()
        torch.save(evil, os.path.join(out, "hostile_global.pt"))

        model = build(Bottleneck, [3, 4, 6, 3], 10, 16, 50)
        tensors = OrderedDict((k, v.numpy()) for k, v in model.state_dict().items()
                              if not k.endswith("num_batches_tracked"))
        write_safetensors(os.path.join(out, "resnet50_w16.safetensors"), tensors)
        expected["resnet50_w16"] = reference(model, pixels, {})
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=None, separators=(",", ":"))
        f.write("\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--full", help="write the full-size resnet34 to this folder instead")
    args = parser.parse_args()
    assert torchvision.__version__.startswith("0.14"), torchvision.__version__
    torch.set_num_threads(2)
    write(args.full or os.path.join(ROOT, "tests/fixtures/encode/fairface"), bool(args.full))


if __name__ == "__main__":
    main()
