#!/usr/bin/env python3
"""relerr.py GOT_DIR WANT_DIR: the worst relative L2 error over the *.bin
float32 outputs of WANT_DIR (a missing or mis-sized file prints 'inf')."""
import glob, math, os, struct, sys

worst = 0.0
files = sorted(glob.glob(os.path.join(sys.argv[2], "*.bin")))
for f in files:
    g = os.path.join(sys.argv[1], os.path.basename(f))
    if not os.path.exists(g) or os.path.getsize(g) != os.path.getsize(f):
        print("inf")
        sys.exit()
    a = open(g, "rb").read()
    b = open(f, "rb").read()
    x = struct.unpack("<%df" % (len(a) // 4), a)
    y = struct.unpack("<%df" % (len(b) // 4), b)
    num = sum((p - q) ** 2 for p, q in zip(x, y))
    den = sum(q * q for q in y) or 1e-30
    worst = max(worst, math.sqrt(num / den))
print("%.2e" % worst if files else "inf")
