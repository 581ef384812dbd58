#!/usr/bin/python3
"""Writes tests/fixtures/encode/inception/: a width-scaled random FID Inception-v3 (every channel
count divided by --divisor; the real topology), test images (odd-sized, grey, RGBA, larger than
299, exactly 299), and the features an independent PyTorch forward computes from them after each
of the two preprocessing modes:

  pytorch-fid  PIL convert("RGB") -> ToTensor (u8 / 255 in float32) -> F.interpolate(299x299,
               bilinear, align_corners=False) -> 2 x - 1              (pytorch-fid inception.py)
  clean-fid    PIL convert("RGB") -> per channel Image.fromarray(float32, "F").resize(BICUBIC)
               -> clip(0, 255) -> (x - 128) / 128                     (clean-fid "clean" mode)

The network below is written from the architecture (torchvision's Inception3 blocks with
pytorch-fid's FID replacements: average pools without the padding counted, max pool in
Mixed_7c), not imported from either tool. Weights are random; batch norm statistics are set from
one forward pass over random images so activations stay O(1) through all 94 convolutions. The
reference runs in float64 on float32 inputs.

  /usr/bin/python3 tools/make_inception_fixtures.py             # the committed fixtures
  /usr/bin/python3 tools/make_inception_fixtures.py --divisor 1 --out /tmp/inception_full
      # the real-size network (95 MB), for bench/vs_torch_features.py
"""
import argparse
import json
import os
import sys
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_clip_fixtures import write_safetensors  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class BasicConv2d(nn.Module):
    def __init__(self, cin, cout, kernel, stride=1, padding=0):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, kernel, stride=stride, padding=padding, bias=False)
        self.bn = nn.BatchNorm2d(cout, eps=0.001)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


def avg3(x):  # the FID blocks' pool: padding not counted
    return F.avg_pool2d(x, 3, stride=1, padding=1, count_include_pad=False)


class BlockA(nn.Module):
    def __init__(self, cin, pool, s):
        super().__init__()
        self.branch1x1 = BasicConv2d(cin, s(64), 1)
        self.branch5x5_1 = BasicConv2d(cin, s(48), 1)
        self.branch5x5_2 = BasicConv2d(s(48), s(64), 5, padding=2)
        self.branch3x3dbl_1 = BasicConv2d(cin, s(64), 1)
        self.branch3x3dbl_2 = BasicConv2d(s(64), s(96), 3, padding=1)
        self.branch3x3dbl_3 = BasicConv2d(s(96), s(96), 3, padding=1)
        self.branch_pool = BasicConv2d(cin, pool, 1)

    def forward(self, x):
        return torch.cat([self.branch1x1(x), self.branch5x5_2(self.branch5x5_1(x)),
                          self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x))),
                          self.branch_pool(avg3(x))], 1)


class BlockB(nn.Module):
    def __init__(self, cin, s):
        super().__init__()
        self.branch3x3 = BasicConv2d(cin, s(384), 3, stride=2)
        self.branch3x3dbl_1 = BasicConv2d(cin, s(64), 1)
        self.branch3x3dbl_2 = BasicConv2d(s(64), s(96), 3, padding=1)
        self.branch3x3dbl_3 = BasicConv2d(s(96), s(96), 3, stride=2)

    def forward(self, x):
        return torch.cat([self.branch3x3(x),
                          self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x))),
                          F.max_pool2d(x, 3, stride=2)], 1)


class BlockC(nn.Module):
    def __init__(self, cin, c7, s):
        super().__init__()
        self.branch1x1 = BasicConv2d(cin, s(192), 1)
        self.branch7x7_1 = BasicConv2d(cin, c7, 1)
        self.branch7x7_2 = BasicConv2d(c7, c7, (1, 7), padding=(0, 3))
        self.branch7x7_3 = BasicConv2d(c7, s(192), (7, 1), padding=(3, 0))
        self.branch7x7dbl_1 = BasicConv2d(cin, c7, 1)
        self.branch7x7dbl_2 = BasicConv2d(c7, c7, (7, 1), padding=(3, 0))
        self.branch7x7dbl_3 = BasicConv2d(c7, c7, (1, 7), padding=(0, 3))
        self.branch7x7dbl_4 = BasicConv2d(c7, c7, (7, 1), padding=(3, 0))
        self.branch7x7dbl_5 = BasicConv2d(c7, s(192), (1, 7), padding=(0, 3))
        self.branch_pool = BasicConv2d(cin, s(192), 1)

    def forward(self, x):
        b7 = self.branch7x7_3(self.branch7x7_2(self.branch7x7_1(x)))
        d = self.branch7x7dbl_1(x)
        for layer in (self.branch7x7dbl_2, self.branch7x7dbl_3, self.branch7x7dbl_4,
                      self.branch7x7dbl_5):
            d = layer(d)
        return torch.cat([self.branch1x1(x), b7, d, self.branch_pool(avg3(x))], 1)


class BlockD(nn.Module):
    def __init__(self, cin, s):
        super().__init__()
        self.branch3x3_1 = BasicConv2d(cin, s(192), 1)
        self.branch3x3_2 = BasicConv2d(s(192), s(320), 3, stride=2)
        self.branch7x7x3_1 = BasicConv2d(cin, s(192), 1)
        self.branch7x7x3_2 = BasicConv2d(s(192), s(192), (1, 7), padding=(0, 3))
        self.branch7x7x3_3 = BasicConv2d(s(192), s(192), (7, 1), padding=(3, 0))
        self.branch7x7x3_4 = BasicConv2d(s(192), s(192), 3, stride=2)

    def forward(self, x):
        b7 = self.branch7x7x3_4(self.branch7x7x3_3(self.branch7x7x3_2(self.branch7x7x3_1(x))))
        return torch.cat([self.branch3x3_2(self.branch3x3_1(x)), b7,
                          F.max_pool2d(x, 3, stride=2)], 1)


class BlockE(nn.Module):
    def __init__(self, cin, max_pool, s):
        super().__init__()
        self.max_pool = max_pool
        self.branch1x1 = BasicConv2d(cin, s(320), 1)
        self.branch3x3_1 = BasicConv2d(cin, s(384), 1)
        self.branch3x3_2a = BasicConv2d(s(384), s(384), (1, 3), padding=(0, 1))
        self.branch3x3_2b = BasicConv2d(s(384), s(384), (3, 1), padding=(1, 0))
        self.branch3x3dbl_1 = BasicConv2d(cin, s(448), 1)
        self.branch3x3dbl_2 = BasicConv2d(s(448), s(384), 3, padding=1)
        self.branch3x3dbl_3a = BasicConv2d(s(384), s(384), (1, 3), padding=(0, 1))
        self.branch3x3dbl_3b = BasicConv2d(s(384), s(384), (3, 1), padding=(1, 0))
        self.branch_pool = BasicConv2d(cin, s(192), 1)

    def forward(self, x):
        b3 = self.branch3x3_1(x)
        d = self.branch3x3dbl_2(self.branch3x3dbl_1(x))
        pooled = F.max_pool2d(x, 3, stride=1, padding=1) if self.max_pool else avg3(x)
        return torch.cat([self.branch1x1(x), self.branch3x3_2a(b3), self.branch3x3_2b(b3),
                          self.branch3x3dbl_3a(d), self.branch3x3dbl_3b(d),
                          self.branch_pool(pooled)], 1)


class FidInception(nn.Module):
    def __init__(self, divisor, classes=1008):
        super().__init__()

        def s(c):
            return max(1, c // divisor)
        self.Conv2d_1a_3x3 = BasicConv2d(3, s(32), 3, stride=2)
        self.Conv2d_2a_3x3 = BasicConv2d(s(32), s(32), 3)
        self.Conv2d_2b_3x3 = BasicConv2d(s(32), s(64), 3, padding=1)
        self.Conv2d_3b_1x1 = BasicConv2d(s(64), s(80), 1)
        self.Conv2d_4a_3x3 = BasicConv2d(s(80), s(192), 3)
        a_out = lambda pool: s(64) + s(64) + s(96) + pool  # noqa: E731
        self.Mixed_5b = BlockA(s(192), s(32), s)
        self.Mixed_5c = BlockA(a_out(s(32)), s(64), s)
        self.Mixed_5d = BlockA(a_out(s(64)), s(64), s)
        self.Mixed_6a = BlockB(a_out(s(64)), s)
        c_in = s(384) + s(96) + a_out(s(64))
        self.Mixed_6b = BlockC(c_in, s(128), s)
        self.Mixed_6c = BlockC(4 * s(192), s(160), s)
        self.Mixed_6d = BlockC(4 * s(192), s(160), s)
        self.Mixed_6e = BlockC(4 * s(192), s(192), s)
        self.Mixed_7a = BlockD(4 * s(192), s)
        e_in = s(320) + s(192) + 4 * s(192)
        e_out = s(320) + 4 * s(384) + s(192)
        self.Mixed_7b = BlockE(e_in, False, s)
        self.Mixed_7c = BlockE(e_out, True, s)
        self.fc = nn.Linear(e_out, classes)

    def forward(self, x):
        for layer in (self.Conv2d_1a_3x3, self.Conv2d_2a_3x3, self.Conv2d_2b_3x3):
            x = layer(x)
        x = F.max_pool2d(x, 3, stride=2)
        x = self.Conv2d_4a_3x3(self.Conv2d_3b_1x1(x))
        x = F.max_pool2d(x, 3, stride=2)
        for name in ("5b", "5c", "5d", "6a", "6b", "6c", "6d", "6e", "7a", "7b", "7c"):
            x = getattr(self, "Mixed_" + name)(x)
        pool3 = F.adaptive_avg_pool2d(x, (1, 1)).flatten(1)
        return pool3, self.fc(pool3)


def calibrate(model, gen):
    """Random weights; batch norm statistics from one pass over random images."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.Conv2d):
                fan_in = m.in_channels * m.kernel_size[0] * m.kernel_size[1]
                m.weight.copy_(torch.randn(m.weight.shape, generator=gen) * (2.0 / fan_in) ** 0.5)
            elif isinstance(m, nn.BatchNorm2d):
                m.weight.copy_(torch.rand(m.weight.shape, generator=gen) * 0.5 + 0.75)
                m.bias.copy_(torch.randn(m.bias.shape, generator=gen) * 0.1)
                m.momentum = 1.0  # running statistics := this batch's
            elif isinstance(m, nn.Linear):
                m.weight.copy_(torch.randn(m.weight.shape, generator=gen) / m.in_features ** 0.5)
                m.bias.copy_(torch.randn(m.bias.shape, generator=gen) * 0.1)
        model.train()
        model(torch.rand(4, 3, 299, 299, generator=gen) * 2 - 1)
        model.eval()
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_var.add_(0.01)  # away from zero for channels ReLU silenced


def make_images(directory):
    """Synthetic test images: textures with edges, in the modes FID inputs come in."""
    rng = np.random.default_rng(22)
    os.makedirs(directory, exist_ok=True)

    def texture(w, h, channels):
        y, x = np.mgrid[0:h, 0:w]
        base = [128 + 90 * np.sin(x / (5 + 3 * c) + y / (7 + c)) for c in range(channels)]
        a = np.stack(base, -1) + rng.normal(0, 20, (h, w, channels))
        a[h // 3: h // 2, w // 4: w // 2] = 255 - a[h // 3: h // 2, w // 4: w // 2]
        return np.clip(a, 0, 255).astype(np.uint8)
    images = [
        ("odd_97x61.jpg", Image.fromarray(texture(97, 61, 3), "RGB"), dict(quality=92)),
        ("grey_50x80.png", Image.fromarray(texture(50, 80, 1)[:, :, 0], "L"), {}),
        ("rgba_120x90.png", Image.fromarray(texture(120, 90, 4), "RGBA"), {}),
        ("large_403x331.jpg", Image.fromarray(texture(403, 331, 3), "RGB"), dict(quality=85)),
        ("exact_299x299.jpg", Image.fromarray(texture(299, 299, 3), "RGB"), dict(quality=85)),
    ]
    for name, img, kw in images:
        img.save(os.path.join(directory, name), **kw)
    return [name for name, _, _ in images]


def pytorch_fid_pixels(path):
    arr = np.asarray(Image.open(path).convert("RGB"))
    x = torch.from_numpy(arr.copy()).permute(2, 0, 1).float().div(255).unsqueeze(0)
    x = F.interpolate(x, size=(299, 299), mode="bilinear", align_corners=False)
    return 2 * x - 1


def clean_fid_pixels(path):
    arr = np.asarray(Image.open(path).convert("RGB"))
    chans = []
    for c in range(3):
        img = Image.fromarray(arr[:, :, c].astype(np.float32), mode="F")
        chans.append(np.asarray(img.resize((299, 299), resample=Image.BICUBIC)).clip(0, 255))
    x = torch.from_numpy(np.stack(chans, 0).astype(np.float32)).unsqueeze(0)
    return (x - 128) / 128


class TfConv(nn.Module):
    """A convolution as a TorchScript port of the TF graph might hold it: the kernel, and a batch
    norm without scale (TF's scale=False: gamma folded into the kernel and the mean)."""

    def __init__(self, basic):
        super().__init__()
        g = basic.bn.weight.detach()
        self.weight = nn.Parameter(basic.conv.weight.detach() * g.view(-1, 1, 1, 1))
        self.register_buffer("beta", basic.bn.bias.detach().clone())
        self.register_buffer("mean", basic.bn.running_mean.detach() * g)
        self.register_buffer("var", basic.bn.running_var.detach().clone())
        self.stride = basic.conv.stride
        self.padding = basic.conv.padding

    def forward(self, x):
        y = F.conv2d(x, self.weight, stride=self.stride, padding=self.padding)
        return F.relu(F.batch_norm(y, self.mean, self.var, None, self.beta, False, 0.0, 0.001))


class TfTower(nn.Module):
    def __init__(self, convs):
        super().__init__()
        for i, c in enumerate(convs):
            setattr(self, "conv" if i == 0 else f"conv_{i}", TfConv(c))


def torchscript_layout(model):
    """The same weights under TF-graph names (layers.conv, layers.mixed.tower.conv_1, ...), in
    the graph's order, as a scripted module: what tests/encode/models/inception/inception_model_test.cpp maps
    XX
    names were not available offline; the mapping relies on order and shapes only."""
    layers = nn.Module()
    stem = [model.Conv2d_1a_3x3, model.Conv2d_2a_3x3, model.Conv2d_2b_3x3, model.Conv2d_3b_1x1,
            model.Conv2d_4a_3x3]
    for i, c in enumerate(stem):
        setattr(layers, "conv" if i == 0 else f"conv_{i}", TfConv(c))
    blocks = ["Mixed_5b", "Mixed_5c", "Mixed_5d", "Mixed_6a", "Mixed_6b", "Mixed_6c", "Mixed_6d",
              "Mixed_6e", "Mixed_7a", "Mixed_7b", "Mixed_7c"]
    for i, name in enumerate(blocks):
        b = getattr(model, name)
        convs = [m for m in b.children() if isinstance(m, BasicConv2d)]
        mixed = nn.Module()
        mixed.conv = TfConv(convs[0])
        mixed.tower = TfTower(convs[1:-1])
        mixed.tower_2 = TfTower(convs[-1:])
        setattr(layers, "mixed" if i == 0 else f"mixed_{i}", mixed)
    layers.output = nn.Linear(model.fc.in_features, model.fc.out_features)
    layers.output.load_state_dict(model.fc.state_dict())
    holder = nn.Module()
    holder.layers = layers
    return holder


def state_dict_arrays(model):
    out = OrderedDict()
    for name, t in model.state_dict().items():
        if name.endswith("num_batches_tracked"):
            continue
        out[name] = t.detach().numpy().astype(np.float32)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--divisor", type=int, default=16)
    ap.add_argument("--out", default=os.path.join(ROOT, "tests/fixtures/encode/inception"))
    args = ap.parse_args()
    gen = torch.Generator().manual_seed(2015)
    # The test model keeps 10 classes of the graph's 1008 (the fc layer would dominate its size).
    model = FidInception(args.divisor, 1008 if args.divisor == 1 else 10)
    calibrate(model, gen)
    os.makedirs(args.out, exist_ok=True)
    write_safetensors(os.path.join(args.out, "model.safetensors"), state_dict_arrays(model))
    if args.divisor != 16:
        return
    # The same weights as PyTorch saves them (the checkpoint readers' parity).
    sd = model.state_dict()
    torch.save(sd, os.path.join(args.out, "model_zip.pth"))
    torch.save(sd, os.path.join(args.out, "model_legacy.pth"), _use_new_zipfile_serialization=False)
    # A TorchScript archive of the same network under TF-graph names (attributes only: the
    # module's forward is never run by vlbias).
    torch.jit.save(torch.jit.script(torchscript_layout(model)),
                   os.path.join(args.out, "model_torchscript.pt"))

    names = make_images(os.path.join(args.out, "images"))
    with open(os.path.join(args.out, "images.csv"), "w") as f:
        f.write("path\n" + "".join(f"images/{n}\n" for n in names))
    model = model.double()
    cases = {}
    for mode, prep in (("pytorch-fid", pytorch_fid_pixels), ("clean-fid", clean_fid_pixels)):
        pixels = torch.cat([prep(os.path.join(args.out, "images", n)) for n in names])
        with torch.no_grad():
            pool3, logits = model(pixels.double())
        np.save(os.path.join(args.out, f"features_{mode}.npy"), pool3.numpy().astype(np.float32))
        np.save(os.path.join(args.out, f"logits_{mode}.npy"), logits.numpy().astype(np.float32))
        # Every 997th preprocessed value of each image (the whole tensors would be 5 MB).
        flat = pixels.reshape(len(names), -1)[:, ::997]
        cases[mode] = {"stride": 997, "pixels": flat.numpy().astype(np.float64).tolist()}
    with open(os.path.join(args.out, "expected.json"), "w") as f:
        json.dump({"torch": torch.__version__, "images": names, "divisor": args.divisor,
                   "feature_dim": int(pool3.shape[1]), "preprocess": cases}, f)
        f.write("\n")


if __name__ == "__main__":
    main()
