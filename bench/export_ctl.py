#!/usr/bin/python3
"""export_ctl.py [DIR] - write if_model.onnx, a small CNN whose If depends
on its input, into DIR (default ~/.cache/aoe/models) for compare-ort.sh.

input [1, 3, 224, 224] -> Conv 3x3/2 (16) Relu -> Conv 3x3/2 (32) Relu
-> If mean(input) > 0: Conv 3x3 (32) Relu, else: Conv 1x1 (32) Sigmoid
(both branches read the stem's output from the outer scope and hold their
own weights) -> GlobalAveragePool -> Flatten -> Gemm (10) -> output.

The condition is a value of the input, so the If stays a node: aoe runs
one prepared branch each time (the bank applied inside it).  Built with
onnx.helper, opset 13, weights from a fixed seed.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, checker, helper, numpy_helper, save

F = TensorProto.FLOAT
rng = np.random.default_rng(7)


def weight(name, *shape):
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
    w = rng.standard_normal(shape).astype(np.float32) / np.sqrt(fan_in)
    return numpy_helper.from_array(w, name)


def conv(name, x, w, b, k, stride=1):
    return helper.make_node("Conv", [x, w, b], [name], name=name,
                            kernel_shape=[k, k], strides=[stride, stride],
                            pads=[k // 2] * 4)


def branch(name, k, act):
    w, b = weight(name + ".w", 32, 32, k, k), weight(name + ".b", 32)
    nodes = [conv(name + ".conv", "stem2", w.name, b.name, k),
             helper.make_node(act, [name + ".conv"], [name + ".out"],
                              name=name + "." + act.lower())]
    return helper.make_graph(nodes, name, [],
                             [helper.make_tensor_value_info(
                                 name + ".out", F, [1, 32, 56, 56])],
                             [w, b])


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.expanduser(
        "~/.cache/aoe/models")
    os.makedirs(d, exist_ok=True)
    inits = [weight("stem1.w", 16, 3, 3, 3), weight("stem1.b", 16),
             weight("stem2.w", 32, 16, 3, 3), weight("stem2.b", 32),
             weight("fc.w", 10, 32), weight("fc.b", 10),
             numpy_helper.from_array(np.array(0, np.float32), "zero")]
    nodes = [conv("stem1", "input", "stem1.w", "stem1.b", 3, 2),
             helper.make_node("Relu", ["stem1"], ["stem1.r"], name="r1"),
             conv("stem2c", "stem1.r", "stem2.w", "stem2.b", 3, 2),
             helper.make_node("Relu", ["stem2c"], ["stem2"], name="r2"),
             helper.make_node("ReduceMean", ["input"], ["mean"],
                              name="mean", keepdims=0),
             helper.make_node("Greater", ["mean", "zero"], ["cond"],
                              name="cond"),
             helper.make_node("If", ["cond"], ["feat"], name="branch",
                              then_branch=branch("wide", 3, "Relu"),
                              else_branch=branch("narrow", 1, "Sigmoid")),
             helper.make_node("GlobalAveragePool", ["feat"], ["gap"],
                              name="gap"),
             helper.make_node("Flatten", ["gap"], ["flat"], name="flat"),
             helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["output"],
                              name="fc", transB=1)]
    g = helper.make_graph(
        nodes, "if_model",
        [helper.make_tensor_value_info("input", F, [1, 3, 224, 224])],
        [helper.make_tensor_value_info("output", F, [1, 10])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    checker.check_model(m)
    path = os.path.join(d, "if_model.onnx")
    save(m, path)
    print(path)


if __name__ == "__main__":
    main()
