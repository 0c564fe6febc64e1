#!/usr/bin/python3
"""synth-records.py N [SEED]: N synthetic aoe-opat tuning records (JSON
Lines) for testing aoe-report --plot at sizes no real run here has; the
times, outcomes and histories are drawn at random, nothing is measured.
"""
import json, random, sys

n = int(sys.argv[1])
rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
types = ["Conv", "Conv", "Conv", "Relu", "MaxPool", "Gemm", "Add",
         "BatchNormalization", "Sigmoid", "GlobalAveragePool", "Softmax"]
for i in range(n):
    t = rng.choice(types)
    before = round(rng.lognormvariate(2.5, 1.3), 3)
    trials = rng.choice([8, 16, 32, 64])
    hist, best = [[1, before]], before
    for k in range(2, trials + 1):
        if rng.random() < 0.12:
            best = round(best * rng.uniform(0.7, 0.99), 3)
            hist.append([k, best])
    won = best < before * 0.95 and before - best >= 1
    rec = {"kind": "opat", "key": str(rng.getrandbits(63)), "op_type": t,
           "names": ["/model/stage%d/%s_%03d.%d" % (i // 40, t.lower(), i, j)
                     for j in range(rng.choice([1, 1, 1, 2, 3]))],
           "signature": "op=%s;synthetic=%d" % (t, i),
           "soc_version": "synthetic", "threads": 2,
           "before_us": before, "after_us": best if won else before,
           "spread": 0.02, "spread_us": round(best * 0.02, 3),
           "schedule": {}, "trials": trials,
           "tuning_time_s": round(trials * 0.05, 3),
           "strategy": "evolution",
           "outcome": "add" if won else "unsatisfied", "history": hist}
    if won:
        rec["confirmed"] = "model"
    print(json.dumps(rec))
