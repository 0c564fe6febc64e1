#!/bin/sh
# AOE_MODE for any program on the session API: every distinct input shape
# a C program (tests/embed) or a Python script (the aoe module) runs is
# captured by aoe-capture -- COMMAND, or handed to the tuner inline; and
# aoe-capture's dynamic-shape profiles.
. "$(dirname "$0")/tap.sh"
plan 11
cd "$top" || exit 1
. tests/pyenv.sh
unset AOE_MODE AOE_CAPTURE_DIR PROFILING_MODE GE_USE_STATIC_MEMORY
mkexample -w "$T/rec.onnx" || exit 1

# The image shape of an aoe-graph file, as "1,3,32,64".
shape_of() {
	sed 's/.*"name": *"image", *"dtype": *"float32", *"shape": *\[\([0-9,]*\)\].*/\1/' "$1"
}

run aoe-capture -d "$T/cap" -- embed "$T/rec.onnx" 1,3,32,64 1,3,32,128 1,3,32,64
[ $status -eq 0 ] && [ "$(wc -l <"$T/out")" -eq 2 ] &&
    grep -q 'aoe-capture: 2 graphs captured' "$T/err"
ok $? "aoe-capture -- a C program on the session API: 3 runs, 2 shapes, 2 graphs"
shapes=$(for f in $(cat "$T/out"); do shape_of "$f"; done | sort | tr '\n' ' ')
[ "$shapes" = "1,3,32,128 1,3,32,64 " ]
ok $? "each graph is one width's: $shapes"
w64=$(grep -l '"shape": *\[1,3,32,64\]' "$T"/cap/graph_*.json)

script='
import sys, numpy as np, aoe as onnxruntime
s = onnxruntime.InferenceSession(sys.argv[1])
for w in (64, 96, 64):
    s.run(None, {"image": np.zeros((1, 3, 32, w), np.float32)})
print("ran")
'
if [ -z "$py" ]; then
	for i in 3 4 5 6; do
		echo "ok $i # SKIP no python3 with numpy"
	done
	tap_n=6
else
	export PYTHONPATH=$top/python
	run aoe-capture -d "$T/cap2" -- "$py" -c "$script" "$T/rec.onnx"
	[ $status -eq 0 ] && [ "$(wc -l <"$T/out")" -eq 2 ] && grep -q '^ran$' "$T/err"
	ok $? "aoe-capture -- python3 script.py: 2 widths, 2 graphs"
	[ -n "$w64" ] && cmp -s "$w64" "$T/cap2/$(basename "$w64")"
	ok $? "the Python script's width-64 graph is the C program's, byte for byte"

	# Plain AOE_MODE=2: the tuner beside libaoe.so (tools/ in the build
	# tree, bin/ installed) gets each new shape, before the shape runs.
	mkdir -p "$T/lib" "$T/tools" "$T/tuned"
	cp lib/libaoe.so.0 "$T/lib/"
	cat >"$T/tools/aoe-opat" <<EOS
#!/bin/sh
[ "\$1" = --commit ] && [ -z "\${AOE_MODE:-}" ] || exit 7
for g; do :; done
cp "\$g" "$T/tuned/" && echo "tuner output"
EOS
	chmod +x "$T/tools/aoe-opat"
	AOE_MODE=2 AOE_LIBRARY=$T/lib/libaoe.so.0 run "$py" -c "$script" "$T/rec.onnx"
	[ $status -eq 0 ] && [ "$(grep -c 'Aoe tuning graph\.' "$T/err")" -eq 2 ] &&
	    [ "$(grep -c 'in tune mode, training graph handled by tools' "$T/err")" -eq 2 ] &&
	    [ "$(cat "$T/out")" = ran ]
	ok $? "AOE_MODE=2 python3 script.py: each new width handed to the tuner once, then run"
	shapes=$(for f in "$T"/tuned/*.json; do shape_of "$f"; done | sort | tr '\n' ' ')
	[ "$shapes" = "1,3,32,64 1,3,32,96 " ]
	ok $? "the tuner got both widths: $shapes"
fi

# AOE's dynamic-shape profiles.
run aoe-capture --input-shape image:1,3,32,-1 --dynamic-dims '64;128;96' -o "$T/prof" "$T/rec.onnx"
[ $status -eq 0 ] && [ "$(cat "$T/out" | tr '\n' ' ')" = "$T/prof/graph_1.json $T/prof/graph_2.json $T/prof/graph_3.json " ] &&
    [ "$(for f in $(cat "$T/out"); do shape_of "$f"; done | tr '\n' ' ')" = "1,3,32,64 1,3,32,128 1,3,32,96 " ]
ok $? "--dynamic-dims: one graph a profile, listed"
cmp -s "$T/prof/graph_1.json" "$w64" ||
    python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); sys.exit(a["nodes"] != b["nodes"] or a["tensors"] != b["tensors"])' \
    "$T/prof/graph_1.json" "$w64"
ok $? "the width-64 profile is the graph the program compiled at width 64"
fails_with 2 "--dynamic-image-size profile '64' does not fit --input-shape 'image:1,3,32,-1'" \
    "a profile that does not fit the -1s" \
    aoe-capture --input-shape image:1,3,32,-1 --dynamic-image-size 64 -o "$T/p2" "$T/rec.onnx"

# The front end with a profile: each shape's cases are tuned and
# committed; a run of one shape then finds only that shape's entries.
mkdir -p "$T/bank"
TUNE_BANK_PATH=$T/bank AOE_MEASURE_LOCK=$T/measure.lock RUN_LOOP=1 AOE_MIN_DISK_GB=0 \
    AOE_TUNE_FLAGS="--budget-trials 3 --seed 1" run "$top/pipelines/aoe" --model "$T/rec.onnx" \
    --job_type 2 --input_shape image:1,3,32,-1 --dynamic_dims '64;128' --output "$T/fe" --progress_bar off
recs=$T/fe/aoe_work/rec_opat/records.jsonl
[ $status -eq 0 ] && [ "$(grep -c '"names"' "$recs")" -eq 4 ] &&
    [ "$(grep -c '"names":\["stem.conv"\]' "$recs")" -eq 2 ]
ok $? "aoe --dynamic_dims '64;128': the 2 cases of each width that fusion leaves tuned (4 records)"
added=$(grep -c '"outcome":"add"' "$recs")
n=0
for w in 64 128; do
	TUNE_BANK_PATH=$T/bank AOE_FUSE=none aoe-run --profile --runs 1 --warmup 0 \
	    --input-shape image:1,3,32,$w "$T/rec.onnx" >/dev/null 2>"$T/prof$w"
	n=$((n + $(sed -n 's/^schedules from the bank: \([0-9]*\) of .*/\1/p' "$T/prof$w")))
done
[ "$n" -eq "$added" ]
ok $? "runs at widths 64 and 128 apply $n bank entries, the $added added, each at its own width"
