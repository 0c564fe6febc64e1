#!/usr/bin/env python3
"""ort-style.py - text-line recognition with PP-OCRv4 rec, written for
ONNX Runtime's Python API as inference scripts are.  bench/python-api.sh
runs it with `import onnxruntime` turned into `import aoe as onnxruntime`
(its only change) and checks its outputs against ONNX Runtime's.

usage: ort-style.py MODEL OUTDIR WIDTH=IMAGE.bin ...

Each IMAGE.bin is a 1x3x48xWIDTH float32 image; the script writes each
output as OUTDIR/WIDTH/<name>.bin and .shape (as bench/ort-run.js -o
does), and prints the greedy CTC decoding's class ids.
"""
import os
import re
import sys

import numpy as np
import onnxruntime


def main():
    model, outdir = sys.argv[1], sys.argv[2]
    opts = onnxruntime.SessionOptions()
    opts.intra_op_num_threads = 2
    opts.graph_optimization_level = \
        onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL \
        if hasattr(onnxruntime, "GraphOptimizationLevel") else None
    sess = onnxruntime.InferenceSession(model, sess_options=opts,
                                        providers=["CPUExecutionProvider"])
    inp = sess.get_inputs()[0]
    outs = sess.get_outputs()
    print("input", inp.name, inp.shape, inp.type)
    print("outputs", [(o.name, o.shape, o.type) for o in outs])
    for spec in sys.argv[3:]:
        width, path = spec.split("=", 1)
        x = np.fromfile(path, dtype=np.float32).reshape(1, 3, 48, int(width))
        res = sess.run([o.name for o in outs], {inp.name: x})
        d = os.path.join(outdir, width)
        os.makedirs(d, exist_ok=True)
        for o, r in zip(outs, res):
            name = re.sub(r"[^A-Za-z0-9._-]", "_", o.name)
            r.astype(np.float32).tofile(os.path.join(d, name + ".bin"))
            with open(os.path.join(d, name + ".shape"), "w") as f:
                f.write(",".join(str(n) for n in r.shape) + "\n")
        ids = res[0].argmax(-1)[0]
        text = [int(c) for i, c in enumerate(ids)
                if c != 0 and (i == 0 or c != ids[i - 1])]
        print("width", width, "output", res[0].shape, "ctc ids", text[:12])


if __name__ == "__main__":
    main()
