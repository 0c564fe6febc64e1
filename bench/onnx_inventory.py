#!/usr/bin/python3
"""Print an op inventory of ONNX models (for planning libaoe's op coverage).

Usage: /usr/bin/python3 bench/onnx_inventory.py MODEL.onnx...

For each model: opset imports, graph inputs (initializers excluded) with
shapes ("?name" marks a dynamic dim), outputs, the sorted op types with
counts, ops outside libaoe's baseline list, and notable attributes
(Conv group>1 / auto_pad / dilations, Resize modes, pooling options,
Pad/Slice/Gather/Softmax axes...).  Requires Debian's python3-onnx.
"""
import collections
import sys

import onnx
from onnx import helper, numpy_helper

BASE = set("""Conv ConvTranspose Gemm MatMul BatchNormalization Relu Clip Sigmoid
HardSigmoid HardSwish Tanh Erf Add Sub Mul Div Pow Sqrt MaxPool AveragePool
GlobalAveragePool Resize Concat Reshape Flatten Squeeze Unsqueeze Transpose
Slice Gather Shape Cast Constant Identity Softmax ReduceMean Pad""".split())


def dims(vi):
    t = vi.type.tensor_type
    if not t.HasField("shape"):
        return "rank?"
    out = []
    for d in t.shape.dim:
        if d.HasField("dim_value"):
            out.append(str(d.dim_value))
        else:
            out.append("?" + (d.dim_param or ""))
    return "x".join(out) if out else "scalar"


def attrs(n):
    return {a.name: helper.get_attribute_value(a) for a in n.attribute}


def fmt(v):
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, onnx.TensorProto):
        a = numpy_helper.to_array(v)
        return "tensor%s%s" % (list(a.shape), a.tolist() if a.size <= 8 else "")
    return str(v)


def walk(graph):
    for n in graph.node:
        yield n
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from walk(a.g)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for g in a.graphs:
                    yield from walk(g)


def report(path):
    m = onnx.load(path, load_external_data=False)
    g = m.graph
    inits = {i.name for i in g.initializer}
    tname = onnx.TensorProto.DataType.Name
    print("== %s" % path)
    print("ir_version %d, producer %s %s, opset %s" % (
        m.ir_version, m.producer_name, m.producer_version,
        ", ".join("%s:%d" % (o.domain or "ai.onnx", o.version)
                  for o in m.opset_import)))
    for vi in g.input:
        if vi.name not in inits:
            print("input  %s %s %s" % (vi.name, tname(vi.type.tensor_type.elem_type), dims(vi)))
    for vi in g.output:
        print("output %s %s %s" % (vi.name, tname(vi.type.tensor_type.elem_type), dims(vi)))
    nodes = list(walk(g))
    cnt = collections.Counter(
        (n.domain + "::" if n.domain not in ("", "ai.onnx") else "") + n.op_type
        for n in nodes)
    print("nodes %d, initializers %d" % (len(nodes), len(inits)))
    print("ops   " + " ".join("%s(%d)" % (k, cnt[k]) for k in sorted(cnt)))
    extra = sorted(k for k in cnt if k not in BASE)
    print("beyond-baseline " + (" ".join(extra) if extra else "none"))
    consts = {i.name: i for i in g.initializer}
    for n in nodes:
        if n.op_type == "Constant" and "value" in attrs(n):
            consts[n.output[0]] = attrs(n)["value"]

    def cval(name):
        """A small constant input as a list, its shape if large, or '?'."""
        t = consts.get(name)
        if t is None:
            return "?" if name else "-"
        a = numpy_helper.to_array(t)
        return a.tolist() if a.size <= 8 else "tensor%s" % list(a.shape)

    notes = collections.Counter()
    nconst = collections.Counter()
    for n in nodes:
        a = attrs(n)
        op = n.op_type
        keep = {}
        if op == "Constant":
            t = a.get("value")
            if t is None:
                nconst["non-tensor " + ",".join(a)] += 1
            else:
                r = len(t.dims)
                nconst["rank%d %s" % (r, tname(t.data_type))] += 1
            continue
        if op in ("Conv", "ConvTranspose"):
            w = consts.get(n.input[1])
            keep["k"] = ("x".join(str(d) for d in w.dims[2:])
                         if w is not None else "?")
            for k in ("group", "auto_pad", "dilations", "strides", "pads",
                      "output_padding", "output_shape"):
                if k in a:
                    v = a[k]
                    if k == "group" and v == 1:
                        continue
                    if k == "dilations" and set(v) == {1}:
                        continue
                    if k == "auto_pad" and fmt(v) == "NOTSET":
                        continue
                    keep[k] = v
            keep["bias"] = len(n.input) > 2 and n.input[2] != ""
        elif op in ("Resize", "Upsample"):
            keep = dict(a)
            for i, nm in enumerate(("roi", "scales", "sizes")):
                if 1 + i < len(n.input):
                    keep[nm] = cval(n.input[1 + i])
        elif op == "Cast":
            keep = {"to": tname(a["to"])}
        elif op in ("Reshape", "Slice", "Pad", "Squeeze", "Unsqueeze",
                    "Clip", "Split", "Tile", "Expand", "ReduceMean"):
            keep = dict(a)
            if len(n.input) > 1:
                keep["inputs"] = [cval(x) for x in n.input[1:]]
        elif op in ("Add", "Sub", "Mul", "Div", "Pow", "MatMul"):
            cs = [i for i, x in enumerate(n.input) if x in consts]
            if not cs:
                keep = {"both": "dynamic"}
            else:
                t = consts[n.input[cs[0]]]
                keep = {"const-in%d" % cs[0]: "shape%s" % list(t.dims)}
        else:
            keep = dict(a)
        if keep:
            notes[op + " " + ", ".join("%s=%s" % (k, fmt(v)) for k, v in sorted(keep.items()))] += 1
    if nconst:
        print("Constant nodes: " + ", ".join("%d %s" % (v, k) for k, v in sorted(nconst.items())))
    for k in sorted(notes):
        print("  %4d x %s" % (notes[k], k))
    print()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for p in sys.argv[1:]:
        report(p)
