#!/usr/bin/python3
"""export_chain.py [-d DIR] [-n LAYERS] NAME CIN>COUT@H[/K][/G] - write
NAME.onnx, a chain of LAYERS (default 4) alike Conv + Relu pairs, into DIR
(default $AOE_CACHE/models, else ~/.cache/aoe/models).

The first Conv takes CIN channels of H x H (its input is named x), each
later one COUT; K is the square kernel (default 1, padding K/2, stride
1), G the groups (default 1).  A chain sets one kind of node in the
state a model leaves it: its input written by the threads of the node
before, its output over memory that the threads have read.  node-compare.sh
then times the same nodes in aoe and in ONNX Runtime, e.g.

    bench/export_chain.py t_pw400 '400>400@7'
    AOE_SHAPE=x:1,400,7,7 bench/node-compare.sh -A -B -t 2 t_pw400

Built with onnx.helper, opset 13, weights from a fixed seed.
"""
import getopt
import os
import re
import sys

import numpy as np
from onnx import TensorProto, checker, helper, numpy_helper, save

F = TensorProto.FLOAT


def usage():
    print("usage: export_chain.py [-d dir] [-n layers] name "
          "cin>cout@h[/k][/g]", file=sys.stderr)
    sys.exit(2)


def main():
    try:
        opts, args = getopt.getopt(sys.argv[1:], "d:n:")
    except getopt.GetoptError as e:
        print("export_chain.py: %s" % e, file=sys.stderr)
        usage()
    cache = os.environ.get("AOE_CACHE",
                           os.path.expanduser("~/.cache/aoe"))
    out, layers = os.path.join(cache, "models"), 4
    for o, v in opts:
        if o == "-d":
            out = v
        elif not re.fullmatch(r"[1-9][0-9]?", v):
            sys.exit("export_chain.py: -n %s: not a number from 1 to 99"
                     % v)
        else:
            layers = int(v)
    if len(args) != 2:
        usage()
    name, spec = args
    m = re.fullmatch(r"(\d+)>(\d+)@(\d+)(?:/(\d+))?(?:/(\d+))?", spec)
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name) or m is None:
        sys.exit("export_chain.py: %s %s: want a plain name and "
                 "cin>cout@h[/k][/g]" % (name, spec))
    cin, cout, h = int(m[1]), int(m[2]), int(m[3])
    k, g = int(m[4] or 1), int(m[5] or 1)
    if min(cin, cout, h, k, g) < 1 or max(cin, cout) > 65536 or \
            h > 4096 or k > h or k % 2 == 0 or cin % g or cout % g:
        sys.exit("export_chain.py: %s: out of range (channels a multiple "
                 "of the groups, k odd and at most h)" % spec)
    rng = np.random.default_rng(11)
    nodes, inits, x, c = [], [], "x", cin
    for i in range(layers):
        w = rng.standard_normal((cout, c // g, k, k)).astype(np.float32)
        w /= np.sqrt(c // g * k * k)
        b = rng.standard_normal(cout).astype(np.float32) * 0.01
        inits += [numpy_helper.from_array(w, "w%d" % i),
                  numpy_helper.from_array(b, "b%d" % i)]
        y = "y" if i == layers - 1 else "r%d" % i
        nodes += [helper.make_node("Conv", [x, "w%d" % i, "b%d" % i],
                                   ["c%d" % i], name="conv%d" % i,
                                   kernel_shape=[k, k], pads=[k // 2] * 4,
                                   group=g),
                  helper.make_node("Relu", ["c%d" % i], [y],
                                   name="relu%d" % i)]
        x, c = y, cout
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", F, [1, cin, h, h])],
        [helper.make_tensor_value_info("y", F, [1, cout, h, h])], inits)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    checker.check_model(model)
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, name + ".onnx")
    save(model, path)
    print(path)


if __name__ == "__main__":
    main()
