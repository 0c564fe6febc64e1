#!/usr/bin/python3
"""Export torchvision reference architectures (random, seeded weights) to ONNX.

Usage: /usr/bin/python3 bench/export_torchvision.py OUTDIR [--opset N] [NAME...]

Names: resnet18 resnet50 mobilenet_v2 mobilenet_v3_large efficientnet_b1
regnet_x_400mf squeezenet1_1 transformer_encoder (default: all).  Output: OUTDIR/<name>.onnx.  Weights come from
torch.manual_seed(0) before each model is built, so repeated runs give the
same models.  Input shapes are static: 1x3x224x224 for the CNNs (input name
"input"), 1x128x256 for the 2-layer transformer encoder (d_model 256,
nhead 8, batch_first).  Requires Debian's python3-torchvision.
"""
import os
import sys

import torch
import torchvision

D_MODEL = 256
SEQ = 128


def build(name):
    torch.manual_seed(0)
    if name == "transformer_encoder":
        layer = torch.nn.TransformerEncoderLayer(
            d_model=D_MODEL, nhead=8, dim_feedforward=4 * D_MODEL,
            dropout=0.0, batch_first=True)
        m = torch.nn.TransformerEncoder(layer, num_layers=2,
                                        enable_nested_tensor=False)
        # TransformerEncoder deep-copies its layer, so both layers would
        # share weights, and fresh LayerNorm/bias values are all 1s and 0s
        # (the exporter then de-duplicates them into Identity nodes).
        # Re-draw every parameter so each tensor is distinct.
        g = torch.Generator().manual_seed(2)
        with torch.no_grad():
            for pname, p in m.named_parameters():
                r = torch.randn(p.shape, generator=g)
                if "norm" in pname and pname.endswith("weight"):
                    p.copy_(1.0 + 0.1 * r)
                elif p.dim() == 1:
                    p.copy_(0.02 * r)
                else:
                    p.copy_(r * (2.0 / (p.shape[0] + p.shape[1])) ** 0.5)
        x = torch.randn(1, SEQ, D_MODEL)
        return m, x
    ctor = getattr(torchvision.models, name)
    m = ctor(weights=None)
    x = torch.randn(1, 3, 224, 224)
    return m, x


def perturb(m):
    # Fresh BatchNorm stats are mean 0 / var 1; give them seeded non-trivial
    # values so that BN folding and the like are actually exercised.
    g = torch.Generator().manual_seed(1)
    for mod in m.modules():
        if isinstance(mod, torch.nn.modules.batchnorm._BatchNorm):
            n = mod.num_features
            mod.running_mean.copy_(torch.randn(n, generator=g) * 0.1)
            mod.running_var.copy_(torch.rand(n, generator=g) * 0.5 + 0.75)
            if mod.affine:
                mod.weight.data.copy_(torch.rand(n, generator=g) * 0.5 + 0.75)
                mod.bias.data.copy_(torch.randn(n, generator=g) * 0.1)
    # Zero-initialised biases (squeezenet's convs, classifier layers) are
    # identical tensors that the exporter would turn into Identity nodes of
    # one shared initializer; make them distinct.
    with torch.no_grad():
        for pname, p in m.named_parameters():
            if pname.endswith("bias") and not p.any():
                p.copy_(torch.randn(p.shape, generator=g) * 0.02)


NAMES = ["resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_large",
         "efficientnet_b1", "regnet_x_400mf", "squeezenet1_1",
         "transformer_encoder"]


def main(argv, names=None, build_fn=None, opset=13, doc=None):
    """Parse [--opset N] OUTDIR [NAME...] and export each model.

    names, build_fn (name -> (module, example input)), the default opset
    and the usage text default to this file's; bench/export_vision2.py
    passes its own.
    """
    names_ok = names or NAMES
    build_fn = build_fn or build
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
        sys.exit(doc or __doc__)
    outdir, todo = args[0], args[1:] or names_ok
    os.makedirs(outdir, exist_ok=True)
    for name in todo:
        if name not in names_ok:
            sys.exit("unknown model: " + name)
        m, x = build_fn(name)
        perturb(m)
        m.eval()
        out = os.path.join(outdir, name + ".onnx")
        tmp = out + ".tmp"
        # Grad stays enabled on purpose: under no_grad, eval-mode
        # TransformerEncoderLayer takes the fused "fast path"
        # (aten::_transformer_encoder_layer_fwd), which has no ONNX export.
        torch.onnx.export(m, (x,), tmp, opset_version=opset,
                          input_names=["input"], output_names=["output"],
                          do_constant_folding=True)
        os.replace(tmp, out)
        print("wrote", out, file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
