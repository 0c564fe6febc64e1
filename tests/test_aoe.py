"""TAP tests of the Python module aoe (ONNX Runtime's session API on
libaoe), run by tests/python.t from the top of the tree."""

import os
import subprocess
import sys
import tempfile
import threading

import numpy as np

import aoe
import aoe as onnxruntime

n_test = 0
n_fail = 0


def ok(cond, what):
    global n_test, n_fail
    n_test += 1
    if not cond:
        n_fail += 1
    print("%sok %d - %s" % ("" if cond else "not ", n_test, what))
    sys.stdout.flush()


def raises(exc, want, fn, what):
    try:
        fn()
    except exc as e:
        ok(want in str(e), "%s: %s" % (what, e))
        return
    except Exception as e:  # noqa: BLE001 - the wrong exception
        ok(False, "%s: raised %s: %s" % (what, type(e).__name__, e))
        return
    ok(False, "%s: no exception" % what)


tmp = tempfile.mkdtemp(prefix="aoe-py.")
rec = os.path.join(tmp, "rec.onnx")
example = "share/aoe/models/example.onnx"
subprocess.check_call(["tests/mkexample", "-w", rec])

ok(aoe.__version__ == open("lib/base/aoe_base.h").read().split(
    '#define AOE_VERSION "')[1].split('"')[0],
    "aoe.__version__ is libaoe's: %s" % aoe.__version__)
ok(onnxruntime.get_available_providers() == ["CPUExecutionProvider"],
   "get_available_providers")

s = onnxruntime.InferenceSession(rec, providers=["CPUExecutionProvider"])
i, o = s.get_inputs(), s.get_outputs()
ok(len(i) == 1 and i[0].name == "image" and i[0].shape == [1, 3, 32, "W"]
   and i[0].type == "tensor(float)",
   "get_inputs: name, shape with the dynamic dim named, type: %r" % i)
ok(len(o) == 1 and o[0].name == "b1.relu" and o[0].shape == [1, 32, 8, "W4"]
   and o[0].type == "tensor(float)", "get_outputs: %r" % o)

# Three widths; each output against libaoe's C session (tests/embed).
rng = np.random.default_rng(5)
for w in (64, 160, 96):
    x = ((np.arange(3 * 32 * w) % 17) / 17.0 - 0.5).astype(
        np.float32).reshape(1, 3, 32, w)
    out = s.run(None, {"image": x})
    ref = subprocess.run(["tests/embed", rec, "1,3,32,%d" % w],
                         capture_output=True, text=True).stdout.split()
    ok(len(out) == 1 and out[0].shape == (1, 32, 8, w // 4) and
       out[0].dtype == np.float32 and ref[1] == "1x32x8x%d" % (w // 4) and
       abs(float(out[0].sum()) - float(ref[2][4:])) <=
       1e-4 * max(1.0, abs(float(ref[2][4:]))),
       "width %d: shape %s, sum %.4f as the C API's (%s)" % (
           w, out[0].shape, float(out[0].sum()), ref[2]))
st = s.stats()
ok(st["prepares"] == 3 and st["runs"] == 3, "three widths, three prepares: "
   "%r" % st)
x = rng.standard_normal((1, 3, 32, 64), dtype=np.float32)
a = s.run(None, {"image": x})[0]
b = s.run(["b1.relu"], {"image": x})[0]
ok(np.array_equal(a, b) and s.stats()["prepares"] == 3,
   "a width run before is a cache hit; output_names selects the output")
c = s.run(None, {"image": x[:, :, :, ::-1][:, :, :, ::-1]})[0]
ok(np.array_equal(a, c), "a non-contiguous input array runs the same")

# From bytes, and with one thread.
so = onnxruntime.SessionOptions()
so.intra_op_num_threads = 1
s1 = onnxruntime.InferenceSession(open(rec, "rb").read(), sess_options=so)
d = s1.run(None, {"image": x})[0]
ok(np.allclose(a, d, rtol=1e-5, atol=1e-5),
   "a session from bytes with intra_op_num_threads=1 gives the same")

# aoe-run's output for the same input file.
img = rng.standard_normal((1, 3, 64, 64), dtype=np.float32)
img.tofile(os.path.join(tmp, "img.bin"))
subprocess.check_call(["tools/aoe-run", "-q", "--runs", "1", "--no-bank",
                       "-i", "image=" + os.path.join(tmp, "img.bin"),
                       "-o", os.path.join(tmp, "o"), example])
ref = np.fromfile(os.path.join(tmp, "o", "probabilities.bin"),
                  dtype=np.float32)
so = onnxruntime.SessionOptions()
so.use_bank = False
e = onnxruntime.InferenceSession(example, so)
p = e.run(None, {"image": img})[0]
ok(p.shape == (1, 10) and np.allclose(p.ravel(), ref, rtol=1e-5, atol=1e-7),
   "the example's probabilities are aoe-run's for the same input")

# Errors: the library's message, as exceptions.
raises(onnxruntime.InvalidArgument, "input 'image': element type is "
       "float64, the model's is float32",
       lambda: s.run(None, {"image": x.astype(np.float64)}), "a wrong dtype")
raises(onnxruntime.InvalidArgument, "input 'image': rank 3, the model wants 4",
       lambda: s.run(None, {"image": x[0]}), "a wrong rank")
raises(onnxruntime.InvalidArgument, "dimension 2 is fixed at 32",
       lambda: s.run(None, {"image": x[:, :, :16]}), "a wrong fixed dim")
raises(onnxruntime.InvalidArgument, "required inputs ['image'] are missing",
       lambda: s.run(None, {}), "a missing input")
raises(onnxruntime.InvalidArgument, "invalid input name: 'img'",
       lambda: s.run(None, {"image": x, "img": x}), "an unknown input")
raises(onnxruntime.InvalidArgument, "invalid output name: 'nope'",
       lambda: s.run(["nope"], {"image": x}), "an unknown output")
raises(onnxruntime.InvalidArgument, "element type <U1 is not one libaoe "
       "knows", lambda: s.run(None, {"image": np.array(["a"])}),
       "a string array")
raises(onnxruntime.NoSuchFile, "cannot open '/nonexistent.onnx'",
       lambda: onnxruntime.InferenceSession("/nonexistent.onnx"),
       "a missing model file")
raises(onnxruntime.InvalidGraph, "is not a valid ONNX model",
       lambda: onnxruntime.InferenceSession(b"\x01\x02garbage"),
       "bytes that are no model")
raises(onnxruntime.InvalidArgument, "intra_op_num_threads -3 is out of range",
       lambda: onnxruntime.InferenceSession(rec, type(
           "O", (), {"intra_op_num_threads": -3})()), "a bad thread count")
ok(isinstance(onnxruntime.InvalidArgument("x"), RuntimeError),
   "the exceptions are RuntimeErrors")

# Threads running one session at once.
refs = {w: s.run(None, {"image": np.full((1, 3, 32, w), 0.25, np.float32)})[0]
        for w in (32, 64, 96)}
bad = []


def worker(k):
    for j in range(10):
        w = (32, 64, 96)[(j + k) % 3]
        r = s.run(None, {"image": np.full((1, 3, 32, w), 0.25,
                                          np.float32)})[0]
        if not np.array_equal(r, refs[w]):
            bad.append(w)


ts = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
for t in ts:
    t.start()
for t in ts:
    t.join()
ok(not bad, "4 threads x 10 runs of one session at 3 widths: all right")

del s, s1, e
print("1..%d" % n_test)
sys.exit(1 if n_fail else 0)
