#!/usr/bin/python3
"""Write a small float CNN and its int8 (QDQ) twin, quantized here.

Usage: /usr/bin/python3 bench/export_quant.py OUTDIR

Output: OUTDIR/qdq_cnn_fp32.onnx and OUTDIR/qdq_cnn.onnx, input "input"
of 1x3x224x224.  The network: eight 3x3 convolutions with ReLU (32 to
256 channels, four of stride 2, down to 14x14), a global average pool
and a 10-way fully connected layer, with seeded random weights
(torch.manual_seed(0), Kaiming-uniform as torch draws them).

The QDQ model is what a post-training static quantizer writes, built with
onnx.helper rather than onnxruntime.quantization (not in Debian): the
activations that enter each convolution are QuantizeLinear ->
DequantizeLinear pairs, uint8 asymmetric, scale and zero point from the
minimum and maximum over 8 calibration inputs uniform in [-1, 1) (the
inputs bench/compare-ort.sh feeds); the weights int8 symmetric per output
channel (DequantizeLinear along axis 0); the biases int32 at scale
x_scale * w_scale with zero point 0.  Each Conv -> Relu is followed by a
QuantizeLinear, whose zero point is 0 since the range starts at 0.  The
pool and the fully connected layer stay float.  Requires Debian's
python3-torch and python3-onnx.
"""
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

# (in, out, stride) of each 3x3 convolution.
LAYERS = [(3, 32, 2), (32, 64, 1), (64, 64, 2), (64, 128, 1),
          (128, 128, 2), (128, 256, 1), (256, 256, 2), (256, 256, 1)]
NCLASS = 10
NCALIB = 8


def weights():
    torch.manual_seed(0)
    convs = [torch.nn.Conv2d(i, o, 3, stride=s, padding=1)
             for i, o, s in LAYERS]
    fc = torch.nn.Linear(LAYERS[-1][1], NCLASS)
    return convs, fc


def calibrate(convs):
    """min and max of the input and of each conv's ReLU output."""
    g = torch.Generator().manual_seed(1)
    lo = [float("inf")] * (len(convs) + 1)
    hi = [float("-inf")] * (len(convs) + 1)
    with torch.no_grad():
        for _ in range(NCALIB):
            x = torch.rand(1, 3, 224, 224, generator=g) * 2 - 1
            acts = [x]
            for c in convs:
                x = F.relu(c(x))
                acts.append(x)
            for i, a in enumerate(acts):
                lo[i] = min(lo[i], float(a.min()))
                hi[i] = max(hi[i], float(a.max()))
    return lo, hi


def act_qparams(lo, hi):
    """uint8 asymmetric scale and zero point covering [lo, hi] and 0."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = np.float32((hi - lo) / 255.0)
    zp = np.uint8(np.clip(np.rint(-lo / scale), 0, 255))
    return scale, zp


def const(name, arr, inits):
    inits.append(numpy_helper.from_array(np.asarray(arr), name))
    return name


def build(convs, fc, quant, lo=None, hi=None):
    nodes, inits = [], []
    x = "input"
    for i, c in enumerate(convs):
        w = c.weight.detach().numpy().astype(np.float32)
        b = c.bias.detach().numpy().astype(np.float32)
        s = LAYERS[i][2]
        p = "c%d" % i
        if quant:
            # The conv's input: quantized once, where it is made.
            if i == 0:
                xs, xz = act_qparams(lo[0], hi[0])
                const("in_s", np.array(xs, np.float32), inits)
                const("in_z", np.array(xz, np.uint8), inits)
                nodes.append(helper.make_node(
                    "QuantizeLinear", [x, "in_s", "in_z"], ["in_q"]))
                nodes.append(helper.make_node(
                    "DequantizeLinear", ["in_q", "in_s", "in_z"], ["in_dq"]))
                x, sname = "in_dq", "in_s"
            xs = np.float32(numpy_helper.to_array(
                [t for t in inits if t.name == sname][0]))
            ws = (np.abs(w).reshape(w.shape[0], -1).max(axis=1) /
                  127.0).astype(np.float32)
            ws = np.maximum(ws, np.float32(1e-8))
            wq = np.clip(np.rint(w / ws[:, None, None, None]), -127,
                         127).astype(np.int8)
            bs = (xs * ws).astype(np.float32)
            bq = np.rint(b / bs).astype(np.int32)
            const(p + "_wq", wq, inits)
            const(p + "_ws", ws, inits)
            const(p + "_bq", bq, inits)
            const(p + "_bs", bs, inits)
            nodes.append(helper.make_node(
                "DequantizeLinear", [p + "_wq", p + "_ws"], [p + "_w"],
                axis=0))
            nodes.append(helper.make_node(
                "DequantizeLinear", [p + "_bq", p + "_bs"], [p + "_b"],
                axis=0))
            wn, bn = p + "_w", p + "_b"
        else:
            wn = const(p + "_w", w, inits)
            bn = const(p + "_b", b, inits)
        nodes.append(helper.make_node(
            "Conv", [x, wn, bn], [p], kernel_shape=[3, 3],
            pads=[1, 1, 1, 1], strides=[s, s]))
        nodes.append(helper.make_node("Relu", [p], [p + "_r"]))
        x = p + "_r"
        if quant:
            ys, yz = act_qparams(lo[i + 1], hi[i + 1])
            sname = const(p + "_ys", np.array(ys, np.float32), inits)
            const(p + "_yz", np.array(yz, np.uint8), inits)
            nodes.append(helper.make_node(
                "QuantizeLinear", [x, p + "_ys", p + "_yz"], [p + "_q"]))
            nodes.append(helper.make_node(
                "DequantizeLinear", [p + "_q", p + "_ys", p + "_yz"],
                [p + "_dq"]))
            x = p + "_dq"
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap"]))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], axis=1))
    const("fc_w", fc.weight.detach().numpy().astype(np.float32), inits)
    const("fc_b", fc.bias.detach().numpy().astype(np.float32), inits)
    nodes.append(helper.make_node("Gemm", ["flat", "fc_w", "fc_b"],
                                  ["output"], transB=1))
    graph = helper.make_graph(
        nodes, "qdq_cnn" if quant else "qdq_cnn_fp32",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT,
                                       [1, 3, 224, 224])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                       [1, NCLASS])],
        inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="aoe bench/export_quant.py")
    m.ir_version = 7
    onnx.checker.check_model(m)
    return m


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: export_quant.py OUTDIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    convs, fc = weights()
    lo, hi = calibrate(convs)
    onnx.save(build(convs, fc, False), os.path.join(out, "qdq_cnn_fp32.onnx"))
    onnx.save(build(convs, fc, True, lo, hi),
              os.path.join(out, "qdq_cnn.onnx"))
    print("wrote %s/qdq_cnn_fp32.onnx and %s/qdq_cnn.onnx" % (out, out))


if __name__ == "__main__":
    main()
