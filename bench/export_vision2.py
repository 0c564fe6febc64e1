#!/usr/bin/python3
"""Export two newer torchvision vision models (random, seeded weights) to ONNX.

Usage: /usr/bin/python3 bench/export_vision2.py OUTDIR [--opset N] [NAME...]

Names: swin_t convnext_tiny (default: both).  Output: OUTDIR/<name>.onnx,
opset 17 unless --opset says otherwise.  Weights come from
torch.manual_seed(0) before each model is built, then the perturbation of
export_torchvision.py (distinct biases, non-trivial norm statistics), so
repeated runs give the same models.  The input is static, 1x3x224x224
float32 named "input"; the output is "output".  Swin's exported graph holds
the shifted-window ops (Roll as Slice and Concat, the attention mask
written with ScatterND) and Dropout nodes in training mode with a ratio of
0 (torchvision calls F.dropout with training=True); ConvNeXt's holds
LayerNorm over channels and depthwise 7x7 convolutions.  Requires Debian's
python3-torchvision.
"""
import os
import sys

import torch
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_torchvision import perturb  # noqa: E402

NAMES = ["swin_t", "convnext_tiny"]


def build(name):
    torch.manual_seed(0)
    m = getattr(torchvision.models, name)(weights=None)
    # Fresh LayerNorm weights are all 1s and layer-scale parameters are
    # one constant; re-draw them so that every tensor is distinct and the
    # norms are exercised with real scales.
    g = torch.Generator().manual_seed(3)
    with torch.no_grad():
        for pname, p in m.named_parameters():
            if p.dim() == 1 and pname.endswith("weight"):
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
            elif "layer_scale" in pname:
                p.copy_(0.1 + 0.05 * torch.randn(p.shape, generator=g))
    x = torch.randn(1, 3, 224, 224)
    return m, x


def main(argv):
    opset = 17
    args = []
    i = 0
    while i < len(argv):
        if argv[i] == "--opset":
            opset = int(argv[i + 1])
            i += 2
        else:
            args.append(argv[i])
            i += 1
    if not args:
        sys.exit(__doc__)
    outdir, names = args[0], args[1:] or NAMES
    os.makedirs(outdir, exist_ok=True)
    for name in names:
        if name not in NAMES:
            sys.exit("unknown model: " + name)
        m, x = build(name)
        perturb(m)
        m.eval()
        out = os.path.join(outdir, name + ".onnx")
        tmp = out + ".tmp"
        with torch.no_grad():
            torch.onnx.export(m, (x,), tmp, opset_version=opset,
                              input_names=["input"],
                              output_names=["output"],
                              do_constant_folding=True)
        os.replace(tmp, out)
        print("wrote", out, file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
