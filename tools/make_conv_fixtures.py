#!/usr/bin/python3
"""Writes tests/fixtures/nn/conv.json: PyTorch's conv2d + batch norm + ReLU, max / average
pooling and bilinear interpolation on small random inputs, the references of
tests/nn/conv_test.cpp (the CNHW kernels of src/nn/conv.cpp).

Run with Debian's /usr/bin/python3 (python3-torch). Inputs are float32 values; references are
computed in float64 from them, so a test measures our float32 error alone.
"""
import json
import pathlib

import torch
import torch.nn.functional as F

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests/fixtures/nn/conv.json"


def rounded(t):
    return [float(v) for v in t.reshape(-1).tolist()]


def conv_case(gen, images, cin, h, w, cout, kh, kw, stride, pad_h, pad_w, relu):
    x = torch.randn(images, cin, h, w, generator=gen).float()
    weight = (torch.randn(cout, cin, kh, kw, generator=gen) / (cin * kh * kw) ** 0.5).float()
    gamma = (torch.rand(cout, generator=gen) + 0.5).float()
    beta = (torch.randn(cout, generator=gen) * 0.1).float()
    mean = (torch.randn(cout, generator=gen) * 0.1).float()
    var = (torch.rand(cout, generator=gen) + 0.5).float()
    eps = 1e-3
    y = F.conv2d(x.double(), weight.double(), stride=stride, padding=(pad_h, pad_w))
    y = F.batch_norm(y, mean.double(), var.double(), gamma.double(), beta.double(), False, 0.0, eps)
    if relu:
        y = F.relu(y)
    return {
        "images": images, "in": cin, "height": h, "width": w, "out": cout,
        "kernel_h": kh, "kernel_w": kw, "stride": stride, "pad_h": pad_h, "pad_w": pad_w,
        "relu": relu, "eps": eps,
        # CNHW, as the kernels take them
        "x": rounded(x.permute(1, 0, 2, 3)), "weight": rounded(weight), "gamma": rounded(gamma),
        "beta": rounded(beta), "mean": rounded(mean), "var": rounded(var),
        "y": rounded(y.permute(1, 0, 2, 3)),
        "out_height": y.shape[2], "out_width": y.shape[3],
    }


def pool_case(gen, planes, h, w, kernel, stride, pad):
    x = torch.randn(1, planes, h, w, generator=gen).float()
    xd = x.double()
    return {
        "planes": planes, "height": h, "width": w, "kernel": kernel, "stride": stride, "pad": pad,
        "x": rounded(x),
        "max": rounded(F.max_pool2d(xd, kernel, stride, pad)),
        "avg_include_pad": rounded(F.avg_pool2d(xd, kernel, stride, pad, count_include_pad=True)),
        "avg_exclude_pad": rounded(F.avg_pool2d(xd, kernel, stride, pad, count_include_pad=False)),
    }


def resize_case(gen, h, w, oh, ow):
    x = (torch.rand(1, 1, h, w, generator=gen) * 2 - 1).float()
    # float32 as pytorch-fid runs it: the weights are computed in the tensor's type.
    y = F.interpolate(x, size=(oh, ow), mode="bilinear", align_corners=False)
    return {"height": h, "width": w, "out_height": oh, "out_width": ow, "x": rounded(x),
            "y": rounded(y)}


def main():
    gen = torch.Generator().manual_seed(22)
    convs = [
        conv_case(gen, 2, 3, 11, 9, 5, 3, 3, 2, 0, 0, True),     # Conv2d_1a: stride 2, no pad
        conv_case(gen, 3, 4, 7, 8, 6, 3, 3, 1, 1, 1, True),      # padded 3x3
        conv_case(gen, 2, 5, 6, 6, 7, 1, 1, 1, 0, 0, True),      # 1x1: the direct GEMM path
        conv_case(gen, 2, 4, 9, 7, 3, 1, 7, 1, 0, 3, False),     # 1x7 (InceptionC)
        conv_case(gen, 1, 4, 9, 7, 3, 7, 1, 1, 3, 0, True),      # 7x1
        conv_case(gen, 2, 3, 8, 10, 4, 5, 5, 1, 2, 2, True),     # 5x5 (InceptionA)
        conv_case(gen, 3, 2, 9, 9, 3, 3, 3, 2, 0, 0, True),      # InceptionB/D stride 2
        conv_case(gen, 1, 3, 3, 3, 2, 3, 3, 1, 0, 0, True),      # one output pixel
    ]
    pools = [
        pool_case(gen, 3, 9, 9, 3, 2, 0),   # max pools between the blocks
        pool_case(gen, 2, 6, 7, 3, 1, 1),   # the blocks' padded pools
        pool_case(gen, 2, 3, 3, 3, 1, 1),
    ]
    resizes = [
        resize_case(gen, 7, 5, 13, 11),   # up
        resize_case(gen, 13, 17, 5, 4),   # down (no antialiasing)
        resize_case(gen, 6, 6, 6, 6),     # the same size: a copy
        resize_case(gen, 1, 4, 3, 9),     # one row
        resize_case(gen, 23, 31, 37, 29),   # odd sizes, as real images
    ]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"torch": torch.__version__, "conv": convs, "pool": pools,
                               "resize": resizes}) + "\n")


if __name__ == "__main__":
    main()
