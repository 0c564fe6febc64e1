#!/usr/bin/python3
"""tty-frames.py TYPESCRIPT TIMING: a script(1) recording (script -T) as
text, one frame a line: every redraw of a progress line (after a carriage
return) and every finished line, each with the seconds since the start.
With --excerpt, only the start, the middle and the end of the run; with
--eta, the ETA shown against the time the run really had left."""
import re, sys

args = [a for a in sys.argv[1:] if not a.startswith("--")]
excerpt = "--excerpt" in sys.argv
data = open(args[0], "rb").read()
pos = data.index(b"\n") + 1 if data.startswith(b"Script started") else 0
t, frames, buf = 0.0, [], b""
for line in open(args[1]):
    d, n = line.split()[:2]
    t += float(d)
    buf += data[pos:pos + int(n)]
    pos += int(n)
    while True:
        m = re.search(rb"[\r\n]", buf)
        if not m:
            break
        s = re.sub(rb"\x1b\[[0-9;]*[A-Za-z]", b"", buf[:m.start()])
        buf = buf[m.end():]
        if s.strip():
            frames.append((t, s.decode("utf-8", "replace")))
if buf.strip():
    frames.append((t, re.sub(rb"\x1b\[[0-9;]*[A-Za-z]", b"", buf).decode("utf-8", "replace")))
if "--eta" in sys.argv:
    end = max(t for t, s in frames if " cases in " in s)
    pick = []
    for t, s in frames:
        m = re.search(r"\[(\d+) done, (\d+) left\].*ETA (\d+)m(\d+)s", s)
        if m and "trial 1/" in s:
            pick.append((t, int(m.group(1)), int(m.group(3)) * 60 + int(m.group(4))))
    n = len(pick)
    for t, done, eta in [pick[0], pick[1], pick[n // 4], pick[n // 2],
                         pick[3 * n // 4], pick[-1]]:
        left = end - t
        print("%4d cases done (%.0f s in): ETA %4d s, left %4.0f s (%+.0f%%)" %
              (done, t, eta, left, 100 * (eta - left) / left if left else 0))
    sys.exit(0)
out = ["%7.1fs  %s" % f for f in frames if not f[1].startswith("Script done")]
if excerpt and len(out) > 40:
    first = next((i for i, l in enumerate(out) if "done," in l), 0)
    mid = len(out) // 2
    out = (["-- start --"] + out[max(first - 3, 0):first + 8] +
           ["-- middle --"] + out[mid - 6:mid + 6] + ["-- end --"] + out[-8:])
print("\n".join(out))
