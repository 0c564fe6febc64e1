#!/bin/sh
# e2e.sh: the yardstick.  For each model at 1 and 2 threads, the median
# latency in ONNX Runtime, in aoe untuned, in aoe after operator tuning and
# (when aoe-sgat exists) after operator and subgraph tuning; outputs are
# checked against ONNX Runtime; one table with the ratios to ONNX Runtime
# and the tuning time, saved under bench/results/ with the machine's
# description.
#
#   bench/e2e.sh [-r RUNS] [-n REPEATS] [-T SECONDS] [model ...]
#
# -T is the operator-tuning budget per model (aoe-opat --total-seconds).
# Banks go to $AOE_CACHE/banks/<model>, so tuning is done once per model
# and machine; delete that directory to tune again.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
CACHE=${AOE_CACHE:-$HOME/.cache/aoe}
M=$CACHE/models
runs=20 reps=3 budget=600
while getopts r:n:T: c; do
	case $c in
	r) runs=$OPTARG ;;
	n) reps=$OPTARG ;;
	T) budget=$OPTARG ;;
	*) echo "usage: $0 [-r runs] [-n repeats] [-T seconds] [model ...]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- resnet18 resnet50 mobilenet_v2 squeezenet1_1 \
    transformer_encoder ppocrv4_det ppocrv4_rec ppocr_cls
PATH=$top/tools:$top/pipelines:$PATH
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$here/results"
out=$here/results/e2e-$(date -u +%Y%m%dT%H%M%SZ)-$(hostname).txt

shape_of() {
	case $1 in
	transformer_encoder) echo input:1,128,256 ;;
	ppocrv4_det) echo x:1,3,640,640 ;;
	ppocrv4_rec) echo x:1,3,48,320 ;;
	ppocr_cls) echo x:1,3,48,192 ;;
	*) echo input:1,3,224,224 ;;
	esac
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }

{
	echo "# aoe end-to-end benchmark, $(date -u)"
	echo "# cpu: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1), $(nproc) cpus"
	echo "# soc_version: $(aoe-bank soc 2>/dev/null || echo unknown)"
	echo "# aoe: $(git -C "$top" describe --always --dirty 2>/dev/null)"
	printf '%-20s %3s %9s %9s %9s %9s %7s %7s %7s %8s  %s\n' model thr ort_ms \
	    aoe_ms opat_ms full_ms aoe/ort opat/ort full/ort tune_s outputs
} | tee "$out"
for m in "$@"; do
	f=$M/$m.onnx
	[ -f "$f" ] || { echo "$m: $f missing (bench/fetch-models.sh)" >&2; continue; }
	spec=$(shape_of "$m") name=${spec%%:*}
	bank=$CACHE/banks/$m
	python3 -c '
import random, struct, sys
n = 1
for d in sys.argv[1].split(","): n *= int(d)
r = random.Random(42)
sys.stdout.buffer.write(struct.pack("<%df" % n, *[r.uniform(-1, 1) for _ in range(n)]))
' "${spec#*:}" >"$tmp/in.bin"
	# Operator tuning, once per model and machine.
	tune_s=-
	if [ ! -f "$bank/.tuned" ]; then
		mkdir -p "$bank"
		t0=$(date +%s)
		TUNE_BANK_PATH=$bank aoe-opat --no-progress --commit \
		    --input-shape "$spec" --total-seconds "$budget" \
		    -o "$bank/records.jsonl" "$f" >&2 && touch "$bank/.tuned"
		echo $(($(date +%s) - t0)) >"$bank/tune_s"
	fi
	[ -f "$bank/tune_s" ] && tune_s=$(cat "$bank/tune_s")
	for t in 1 2; do
		: >"$tmp/ort" ; : >"$tmp/aoe" ; : >"$tmp/opat"
		i=0
		while [ $i -lt "$reps" ]; do
			node "$here/ort-run.js" -t $t -w 3 -r "$runs" -o "$tmp/o_ort" \
			    "$f" "$spec=$tmp/in.bin" | field median >>"$tmp/ort"
			aoe-run --no-bank --threads $t --warmup 3 --runs "$runs" -s "$spec" \
			    -i "$name=$tmp/in.bin" -o "$tmp/o_aoe" "$f" | field median >>"$tmp/aoe"
			TUNE_BANK_PATH=$bank aoe-run --threads $t --warmup 3 --runs "$runs" \
			    -s "$spec" -i "$name=$tmp/in.bin" -o "$tmp/o_opat" "$f" |
			    field median >>"$tmp/opat"
			i=$((i + 1))
		done
		o=$(median <"$tmp/ort") a=$(median <"$tmp/aoe") p=$(median <"$tmp/opat")
		# aoe-sgat arrives with subgraph tuning; until then, no column.
		s=-
		ok=PASS
		for d in o_aoe o_opat; do
			e=$("$here/relerr.py" "$tmp/$d" "$tmp/o_ort")
			awk "BEGIN { exit !($e <= 1e-4) }" 2>/dev/null || ok="FAIL($d $e)"
		done
		printf '%-20s %3s %9s %9s %9s %9s %7.2f %7.2f %7s %8s  %s\n' "$m" $t "$o" \
		    "$a" "$p" "$s" "$(echo "$a $o" | awk '{ print $1 / $2 }')" \
		    "$(echo "$p $o" | awk '{ print $1 / $2 }')" - "$tune_s" "$ok" | tee -a "$out"
		rm -rf "$tmp"/o_*
	done
done
echo "# saved in $out"
