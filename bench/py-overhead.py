#!/usr/bin/env python3
"""py-overhead.py MODEL INPUT D0,D1,... [CALLS [REPEATS]]: the time of one
InferenceSession.run of the aoe module on MODEL, in microseconds, as the
median over REPEATS of the mean over CALLS calls (one thread, no bank)."""
import sys
import time

import numpy as np

import aoe

model, name, dims = sys.argv[1], sys.argv[2], sys.argv[3]
calls = int(sys.argv[4]) if len(sys.argv) > 4 else 20000
reps = int(sys.argv[5]) if len(sys.argv) > 5 else 7
so = aoe.SessionOptions()
so.intra_op_num_threads = 1
so.use_bank = False
s = aoe.InferenceSession(model, so)
x = np.random.default_rng(1).standard_normal(
    [int(d) for d in dims.split(",")]).astype(np.float32)
feed = {name: x}
for _ in range(1000):
    s.run(None, feed)
per = []
for _ in range(reps):
    t0 = time.perf_counter()
    for _ in range(calls):
        s.run(None, feed)
    per.append((time.perf_counter() - t0) / calls * 1e6)
per.sort()
print("%.2f" % per[len(per) // 2])
