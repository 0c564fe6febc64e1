#!/bin/sh
# signal-ops.sh: the signal and sampling kernels (lib/kernels/k_signal.c,
# k_sample.c) beside ONNX Runtime on the same inputs: one-node models of
# DFT (a power-of-two length and a Bluestein one), STFT with a Hann
# window (Whisper's 400-point frames), GridSample and RoiAlign, written
# here by python3-onnx.  Checks that the outputs agree (relative L2 at
# most 1e-4; where they do not, a DFT is judged against numpy's in
# float64: ONNX Runtime's Bluestein transform of 16000 points is off by
# 1e-3) and prints the median latencies at 1 and 2 threads, each the
# median of REPEATS medians of RUNS runs, the runners interleaved.
#
#   bench/signal-ops.sh [-r RUNS] [-n REPEATS]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
runs=20 reps=3
while getopts r:n: c; do
	case $c in
	r) runs=$OPTARG ;;
	n) reps=$OPTARG ;;
	*) echo "usage: $0 [-r runs] [-n repeats]" >&2; exit 2 ;;
	esac
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# The models, each with one float32 input x (the rest initializers).
/usr/bin/python3 - "$tmp" <<'PY'
import sys
import numpy as np
import onnx
from onnx import helper as h, numpy_helper as nh, TensorProto as TP
d = sys.argv[1]
r = np.random.default_rng(3)

def save(name, nodes, xshape, yname, inits, opset=17):
    x = h.make_tensor_value_info("x", TP.FLOAT, xshape)
    y = h.make_tensor_value_info(yname, TP.FLOAT, None)
    g = h.make_graph(nodes, name, [x], [y],
        [nh.from_array(v, k) for k, v in inits.items()])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", opset)]),
        "%s/%s.onnx" % (d, name))

save("dft_16384", [h.make_node("DFT", ["x"], ["y"], axis=1, onesided=1)],
    [1, 16384, 1], "y", {})
save("dft_16000", [h.make_node("DFT", ["x"], ["y"], axis=1, onesided=1)],
    [1, 16000, 1], "y", {})
win = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(400) / 400)).astype(np.float32)
save("stft_400", [h.make_node("STFT", ["x", "step", "win"], ["y"])],
    [1, 16000, 1], "y", {"step": np.array(160, np.int64), "win": win})
grid = (r.random((1, 64, 64, 2)) * 2.2 - 1.1).astype(np.float32)
save("gridsample", [h.make_node("GridSample", ["x", "grid"], ["y"],
    mode="bilinear", padding_mode="zeros")], [1, 32, 64, 64], "y",
    {"grid": grid}, 16)
xy = r.random((100, 2)) * 40
wh = r.random((100, 2)) * 20 + 2
rois = np.concatenate([xy, xy + wh], 1).astype(np.float32)
save("roialign", [h.make_node("RoiAlign", ["x", "rois", "bi"], ["y"],
    output_height=7, output_width=7, sampling_ratio=2,
    spatial_scale=1.0)], [1, 256, 50, 50], "y",
    {"rois": rois, "bi": np.zeros(100, np.int64)}, 16)
PY

# Deterministic float32 input in [-1, 1).
mkinput() {
	/usr/bin/python3 -c '
import numpy as np, sys
n = int(np.prod([int(v) for v in sys.argv[1].split(",")]))
np.random.default_rng(42).uniform(-1, 1, n).astype("<f4").tofile(sys.argv[2])
' "$1" "$2"
}
# The onesided DFT of a raw float32 signal, in float64, as output y.
numpy_dft() {
	mkdir -p "$2"
	/usr/bin/python3 -c '
import numpy as np, sys
f = np.fft.rfft(np.fromfile(sys.argv[1], "<f4").astype(np.float64))
np.stack([f.real, f.imag], -1).astype("<f4").tofile(sys.argv[2] + "/y.bin")
open(sys.argv[2] + "/y.shape", "w").write("1,%d,2\n" % len(f))
' "$1" "$2"
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }

printf '%-12s %3s %10s %10s %7s  %s\n' model thr ort_ms aoe_ms aoe/ort outputs
status=0
for m in dft_16384 dft_16000 stft_400 gridsample roialign; do
	case $m in
	dft_*) dims=1,${m#dft_},1 ;;
	stft_*) dims=1,16000,1 ;;
	gridsample) dims=1,32,64,64 ;;
	roialign) dims=1,256,50,50 ;;
	esac
	f=$tmp/$m.onnx
	mkinput "$dims" "$tmp/in.bin"
	for t in 1 2; do
		: >"$tmp/ort.t"
		: >"$tmp/aoe.t"
		i=0
		while [ $i -lt "$reps" ]; do
			node "$here/ort-run.js" -t $t -w 3 -r "$runs" -o "$tmp/ort" \
			    "$f" "x:$dims=$tmp/in.bin" | field median >>"$tmp/ort.t"
			"$top/tools/aoe-run" --no-bank --threads $t --warmup 3 \
			    --runs "$runs" -i "x=$tmp/in.bin" -o "$tmp/aoe" "$f" |
			    field median >>"$tmp/aoe.t"
			i=$((i + 1))
		done
		o=$(median <"$tmp/ort.t") a=$(median <"$tmp/aoe.t")
		e=$("$here/relerr.py" "$tmp/aoe" "$tmp/ort")
		verdict=PASS
		case $e in
		[0-9]*) awk "BEGIN { exit !($e <= 1e-4) }" || verdict=FAIL ;;
		*) verdict=FAIL ;;
		esac
		case $verdict/$m in
		FAIL/dft_*)
			# Judge both by numpy's transform in float64.
			numpy_dft "$tmp/in.bin" "$tmp/ref"
			ea=$("$here/relerr.py" "$tmp/aoe" "$tmp/ref")
			eo=$("$here/relerr.py" "$tmp/ort" "$tmp/ref")
			awk "BEGIN { exit !($ea <= 1e-4) }" && verdict=PASS
			verdict="$verdict (numpy float64: aoe $ea, ort $eo)"
			rm -rf "$tmp/ref" ;;
		esac
		case $verdict in FAIL*) status=1 ;; esac
		printf '%-12s %3s %10s %10s %7s  %s (rel L2 %s)\n' "$m" $t "$o" \
		    "$a" "$(awk "BEGIN { printf \"%.2f\", $a / $o }")" \
		    "$verdict" "$e"
		rm -rf "$tmp/ort" "$tmp/aoe"
	done
done
exit $status
