#!/usr/bin/python3
"""mkres.py - write a small residual network as an aoe-graph file (stdout).

A 3x3 Conv and Relu (the stem), then three residual blocks (Conv, Relu,
Conv, Add of the block's input, Relu), then a GlobalAveragePool: 16
channels of 16x16, seeded random weights.  Each block's input has two
readers, so aoe-sgat's partition makes the stem one subgraph and each
block another, the three blocks of one signature, every one with a Conv
that can run blocked: a run that layout regions (aoe-sgat(1)) are made
of.  The standard library only, so that CI needs nothing more.

With the argument "2" a second run follows, after a part with no Conv
(x * Sigmoid(x), whose input has two readers): a block whose first Conv
is 1x1 (a new signature), one more block of the first run's signature,
and a last one before the head.  The first run's block signature is then
in both runs: the second run's region measures it already blocked.
"""
import sys
import base64
import json
import random
import struct

C, H = 16, 16
random.seed(3)
tensors = [{"name": "x", "dtype": "float32", "shape": [1, C, H, H]}]
nodes = []


def value(name):
    tensors.append({"name": name, "dtype": "float32", "shape": [1, C, H, H]})
    return name


def const(name, shape):
    n = 1
    for d in shape:
        n *= d
    data = struct.pack("<%df" % n, *[random.uniform(-0.2, 0.2)
                                     for _ in range(n)])
    tensors.append({"name": name, "dtype": "float32", "shape": shape,
                    "const": {"b64": base64.b64encode(data).decode()}})
    return name


def node(name, op, ins, out, attrs=None):
    n = {"name": name, "op_type": op, "inputs": ins, "outputs": [out]}
    if attrs:
        n["attrs"] = attrs
    nodes.append(n)
    return out


def conv(name, x, k=3):
    return node(name, "Conv", [x, const(name + ".w", [C, C, k, k]),
                               const(name + ".b", [C])],
                value(name + ".y"),
                {"kernel_shape": {"ints": [k, k]},
                 "pads": {"ints": [k // 2] * 4}})


def relu(name, x):
    return node(name, "Relu", [x], value(name + ".y"))


def block(p, x, k=3):
    y = conv(p + "conv2", relu(p + "relu1", conv(p + "conv1", x, k)))
    y = node(p + "add", "Add", [y, x], value(p + "add.y"))
    return relu(p + "relu2", y)


prev = relu("stem.relu", conv("stem.conv", "x"))
for b in range(3):
    prev = block("b%d." % b, prev)
if sys.argv[1:] == ["2"]:
    s = node("sep.sig", "Sigmoid", [prev], value("sep.sig.y"))
    prev = node("sep.mul", "Mul", [prev, s], value("sep.mul.y"))
    prev = block("b3.", prev, 1)
    prev = block("b4.", prev)
    prev = block("b5.", prev)
tensors.append({"name": "y", "dtype": "float32", "shape": [1, C, 1, 1]})
node("head", "GlobalAveragePool", [prev], "y")
print(json.dumps({"format": "aoe-graph", "tensors": tensors,
                  "inputs": ["x"], "outputs": ["y"], "nodes": nodes}))
