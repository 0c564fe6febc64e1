#!/usr/bin/python3
"""mkctl.py DIR - write the control-flow fixtures of tests/ctl.t into DIR.

The project's ONNX writer (aoe_onnx_save) does not write subgraphs, so
these small models are made with the onnx package:

  if_const.onnx     an If whose condition is an initializer (folded, its
                    then-branch inlined: Add of a branch constant, Relu)
  if_input.onnx     an If whose condition is a graph input
  if_shape.onnx     an If whose condition is computed from the input's
                    shape (Shape, Gather, Greater): constant once bound
  loop_noend.onnx   a Loop with neither a trip count nor a condition
  if_count.onnx     an If whose then-branch has two outputs, the node one
  if_outer.onnx     an If whose branch reads a name no graph defines
  loop_count.onnx   a Loop of 5 trips, a carried sum and a scan output
  loop_while.onnx   a Loop on its condition alone (while i < 4), which
                    also carries a value that grows by one each trip

and those of tests/subgraph.t, whose branches hold operators worth tuning:

  scan_sum.onnx     a Scan over the 3 rows of x (3x4): a running sum
                    (state) and each step's sum (scan output)
  if_conv.onnx      an If on input c: then_branch a 3x3 Conv (8 to 16
                    channels, 24x24, weights a branch initializer) and
                    Relu, else_branch a 1x1 Conv of the same output shape
  loop_mm.onnx      a Loop of 3 trips whose body multiplies its carried
                    32x64 value by W (64x64), an initializer of the
                    main graph that the body reads by name
  nest.onnx         a Loop of 2 trips whose body holds an If (on input
                    c) whose then_branch is a MatMul by the outer W
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

F = TensorProto.FLOAT


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def model(nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def branches():
    c = numpy_helper.from_array(np.full((1, 4), 0.5, np.float32), "bc")
    then = helper.make_graph(
        [helper.make_node("Add", ["x", "bc"], ["t0"], name="add"),
         helper.make_node("Relu", ["t0"], ["t1"], name="relu")],
        "then", [], [vi("t1", F, [1, 4])], [c])
    other = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["e1"], name="neg")],
        "else", [], [vi("e1", F, [1, 4])])
    return then, other


def main():
    d = sys.argv[1]
    then, other = branches()
    x = vi("x", F, [1, 4])
    y = vi("y", F, [1, 4])
    cond = numpy_helper.from_array(np.array(True), "cond")
    save(model([helper.make_node("If", ["cond"], ["y"], name="if0",
                                 then_branch=then, else_branch=other)],
               [x], [y], [cond]), os.path.join(d, "if_const.onnx"))
    save(model([helper.make_node("If", ["c"], ["y"], name="if0",
                                 then_branch=then, else_branch=other)],
               [x, vi("c", TensorProto.BOOL, [])], [y]),
         os.path.join(d, "if_input.onnx"))
    zero = numpy_helper.from_array(np.array(0, np.int64), "zero")
    two = numpy_helper.from_array(np.array(2, np.int64), "two")
    xn = vi("x", F, ["n", 4])
    save(model([helper.make_node("Shape", ["x"], ["s"], name="shape"),
                helper.make_node("Gather", ["s", "zero"], ["s0"],
                                 name="gather"),
                helper.make_node("Greater", ["s0", "two"], ["big"],
                                 name="greater"),
                helper.make_node("If", ["big"], ["y"], name="if0",
                                 then_branch=other, else_branch=then)],
               [xn], [vi("y", F, ["n", 4])], [zero, two]),
         os.path.join(d, "if_shape.onnx"))

    body = helper.make_graph(
        [helper.make_node("Identity", ["cin"], ["cout"], name="id"),
         helper.make_node("Add", ["v", "x"], ["vout"], name="add")],
        "body", [vi("i", TensorProto.INT64, []),
                 vi("cin", TensorProto.BOOL, []), vi("v", F, [1, 4])],
        [vi("cout", TensorProto.BOOL, []), vi("vout", F, [1, 4])])
    save(model([helper.make_node("Loop", ["", "", "x"], ["y"], name="loop0",
                                 body=body)], [x], [y]),
         os.path.join(d, "loop_noend.onnx"))

    two_out = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["a"], name="neg"),
         helper.make_node("Abs", ["x"], ["b"], name="abs")],
        "then", [], [vi("a", F, [1, 4]), vi("b", F, [1, 4])])
    save(model([helper.make_node("If", ["c"], ["y"], name="if_bad",
                                 then_branch=two_out, else_branch=other)],
               [x, vi("c", TensorProto.BOOL, [])], [y]),
         os.path.join(d, "if_count.onnx"))

    stray = helper.make_graph(
        [helper.make_node("Add", ["x", "zz"], ["e1"], name="add")],
        "else", [], [vi("e1", F, [1, 4])])
    save(model([helper.make_node("If", ["c"], ["y"], name="if_outer",
                                 then_branch=then, else_branch=stray)],
               [x, vi("c", TensorProto.BOOL, [])], [y]),
         os.path.join(d, "if_outer.onnx"))

    body = helper.make_graph(
        [helper.make_node("Identity", ["cin"], ["cout"], name="id"),
         helper.make_node("Add", ["v", "x"], ["vout"], name="add"),
         helper.make_node("Identity", ["vout"], ["scan"], name="copy")],
        "body", [vi("i", TensorProto.INT64, []),
                 vi("cin", TensorProto.BOOL, []), vi("v", F, [1, 4])],
        [vi("cout", TensorProto.BOOL, []), vi("vout", F, [1, 4]),
         vi("scan", F, [1, 4])])
    trips = numpy_helper.from_array(np.array(5, np.int64), "trips")
    save(model([helper.make_node("Loop", ["trips", "", "x"], ["y", "ys"],
                                 name="loop0", body=body)],
               [x], [y, vi("ys", F, [None, 1, 4])], [trips]),
         os.path.join(d, "loop_count.onnx"))

    one = numpy_helper.from_array(np.array([1], np.float32), "one")
    four = numpy_helper.from_array(np.array(4, np.int64), "four")
    body = helper.make_graph(
        [helper.make_node("Less", ["i", "four"], ["cout"], name="less"),
         helper.make_node("Add", ["v", "one"], ["vout"], name="add"),
         helper.make_node("Concat", ["g", "one"], ["gout"], name="grow",
                          axis=0)],
        "body", [vi("i", TensorProto.INT64, []),
                 vi("cin", TensorProto.BOOL, []), vi("v", F, [1, 4]),
                 vi("g", F, None)],
        [vi("cout", TensorProto.BOOL, []), vi("vout", F, [1, 4]),
         vi("gout", F, None)], [four])
    start = numpy_helper.from_array(np.array(True), "start")
    g0 = numpy_helper.from_array(np.array([0], np.float32), "g0")
    save(model([helper.make_node("Loop", ["", "start", "x", "g0"],
                                 ["y", "grown"], name="loop0", body=body)],
               [x], [y, vi("grown", F, None)], [start, g0, one]),
         os.path.join(d, "loop_while.onnx"))

    # tests/subgraph.t
    rng = np.random.default_rng(7)
    xs = vi("x", F, [3, 4])
    body = helper.make_graph(
        [helper.make_node("Add", ["s", "row"], ["s2"], name="add"),
         helper.make_node("Identity", ["s2"], ["out"], name="copy")],
        "body", [vi("s", F, [4]), vi("row", F, [4])],
        [vi("s2", F, [4]), vi("out", F, [4])])
    s0 = numpy_helper.from_array(np.zeros(4, np.float32), "s0")
    save(model([helper.make_node("Scan", ["s0", "x"], ["sum", "sums"],
                                 name="scan0", body=body,
                                 num_scan_inputs=1)],
               [xs], [vi("sum", F, [4]), vi("sums", F, [3, 4])], [s0]),
         os.path.join(d, "scan_sum.onnx"))

    xc = vi("x", F, [1, 8, 24, 24])
    yc = vi("y", F, [1, 16, 24, 24])
    w3 = numpy_helper.from_array(
        rng.standard_normal((16, 8, 3, 3)).astype(np.float32) * 0.2, "w3")
    w1 = numpy_helper.from_array(
        rng.standard_normal((16, 8, 1, 1)).astype(np.float32) * 0.2, "w1")
    then = helper.make_graph(
        [helper.make_node("Conv", ["x", "w3"], ["t0"], name="conv0",
                          pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["t0"], ["t1"], name="relu")],
        "then", [], [vi("t1", F, [1, 16, 24, 24])], [w3])
    other = helper.make_graph(
        [helper.make_node("Conv", ["x", "w1"], ["e1"], name="conv1")],
        "else", [], [vi("e1", F, [1, 16, 24, 24])], [w1])
    save(model([helper.make_node("If", ["c"], ["y"], name="if0",
                                 then_branch=then, else_branch=other)],
               [xc, vi("c", TensorProto.BOOL, [])], [yc]),
         os.path.join(d, "if_conv.onnx"))

    w = numpy_helper.from_array(
        rng.standard_normal((64, 64)).astype(np.float32) * 0.125, "W")
    xm = vi("x", F, [32, 64])
    body = helper.make_graph(
        [helper.make_node("Identity", ["cin"], ["cout"], name="id"),
         helper.make_node("MatMul", ["v", "W"], ["vout"], name="mm")],
        "body", [vi("i", TensorProto.INT64, []),
                 vi("cin", TensorProto.BOOL, []), vi("v", F, [32, 64])],
        [vi("cout", TensorProto.BOOL, []), vi("vout", F, [32, 64])])
    trips = numpy_helper.from_array(np.array(3, np.int64), "trips")
    save(model([helper.make_node("Loop", ["trips", "", "x"], ["y"],
                                 name="loop0", body=body)],
               [xm], [vi("y", F, [32, 64])], [trips, w]),
         os.path.join(d, "loop_mm.onnx"))

    then = helper.make_graph(
        [helper.make_node("MatMul", ["v", "W"], ["t0"], name="mm")],
        "then", [], [vi("t0", F, [32, 64])])
    other = helper.make_graph(
        [helper.make_node("Neg", ["v"], ["e0"], name="neg")],
        "else", [], [vi("e0", F, [32, 64])])
    body = helper.make_graph(
        [helper.make_node("Identity", ["cin"], ["cout"], name="id"),
         helper.make_node("If", ["c"], ["vout"], name="if1",
                          then_branch=then, else_branch=other)],
        "body", [vi("i", TensorProto.INT64, []),
                 vi("cin", TensorProto.BOOL, []), vi("v", F, [32, 64])],
        [vi("cout", TensorProto.BOOL, []), vi("vout", F, [32, 64])])
    two = numpy_helper.from_array(np.array(2, np.int64), "trips")
    save(model([helper.make_node("Loop", ["trips", "", "x"], ["y"],
                                 name="loop0", body=body)],
               [xm, vi("c", TensorProto.BOOL, [])],
               [vi("y", F, [32, 64])], [two, w]),
         os.path.join(d, "nest.onnx"))


if __name__ == "__main__":
    main()
