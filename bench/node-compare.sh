#!/bin/sh
# node-compare.sh: where aoe loses to ONNX Runtime, node by node: runs a
# model under ORT's own profiler (bench/ort-run.js -p) and under
# `aoe-run --profile` on the same input, at the given thread count, and
# prints node_compare.py's tables (by op type, then by node, biggest loss
# first).
#
#   bench/node-compare.sh [-A] [-t THREADS] [-r RUNS] [-B] [-m] [-k DIR] MODEL
#
# MODEL is a path to an .onnx file or a name in
# ${AOE_CACHE:-$HOME/.cache/aoe}/models.  -B runs aoe untuned (--no-bank;
# by default it reads the bank, as a user's run would); -m compares
# per-node minima over the runs (AOE_PROF_MIN=1 for aoe, node_compare.py
# -m for ORT), the figure a loaded machine spoils least; -k DIR keeps the
# two raw profiles there.  ORT also runs unprofiled, and its node
# figures are scaled by that run's median over the profiled nodes' sum
# (node_compare.py -p: its profiler adds 5-13 % inside the nodes).
# -A holds both to AVX2 as e2e.sh -A does.
# NC_TOP=N lists the N biggest losses by node instead
# of 25 (a number past the node count: every node).  The input binding
# is shape.sh's (AOE_SHAPE=NAME:D0,D1,... overrides it); AOE_RUN names another aoe-run
# binary (a build from before a change, for before/after tables).  Timings under a profiler are
# a little slower than plain runs; the machine's load goes into the tables
# just as into any other figure.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
CACHE=${AOE_CACHE:-$HOME/.cache/aoe}
t=1 runs=20 nobank= keep= min= avx2=
while getopts At:r:Bmk: c; do
	case $c in
	A) avx2=1 ;;
	t) t=$OPTARG ;;
	r) runs=$OPTARG ;;
	B) nobank=--no-bank ;;
	m) min=-m ;;
	k) keep=$OPTARG ;;
	*) echo "usage: $0 [-A] [-t threads] [-r runs] [-B] [-m] [-k dir] model" >&2
	   exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { echo "usage: $0 [-A] [-t threads] [-r runs] [-B] [-m] [-k dir] model" >&2; exit 2; }
case $1 in
*.onnx) f=$1 ;;
*) f=$CACHE/models/$1.onnx ;;
esac
[ -f "$f" ] || { echo "node-compare: $f: no such model" >&2; exit 1; }
m=$(basename "$f" .onnx)
. "$here/shape.sh"
spec=${AOE_SHAPE:-$(shape_of "$m")}
name=${spec%%:*}
node=node
. "$here/avx2.sh"
[ -z "$avx2" ] || hold_avx2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
/usr/bin/python3 -c '
import random, struct, sys
n = 1
for d in sys.argv[1].split(","): n *= int(d)
r = random.Random(42)
sys.stdout.buffer.write(struct.pack("<%df" % n, *[r.uniform(-1, 1) for _ in range(n)]))
' "${spec#*:}" >"$tmp/in.bin"
# ORT unprofiled first: its profiler's own cost lands in the node times.
# shellcheck disable=SC2086
$node "$here/ort-run.js" -t "$t" -w 3 -r "$runs" "$f" "$spec=$tmp/in.bin" |
    sed -n 's/.* median=\([0-9.]*\).*/\1/p' >"$tmp/plain.txt"
# shellcheck disable=SC2086
$node "$here/ort-run.js" -t "$t" -w 3 -r "$runs" -p "$tmp/ort.json" \
    "$f" "$spec=$tmp/in.bin" >"$tmp/ort.txt"
AOE_PROF_MIN=${min:+1} "${AOE_RUN:-$top/tools/aoe-run}" $nobank --profile --threads "$t" --warmup 3 \
    --runs "$runs" -s "$spec" -i "$name=$tmp/in.bin" "$f" \
    >"$tmp/aoe.txt" 2>"$tmp/aoe.prof"
echo "# $m, $t thread(s)${avx2:+, AVX2 on both sides}, $runs runs; $(grep -m1 'model name' /proc/cpuinfo |
    sed 's/.*: //'); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $(cat "$tmp/ort.txt")"
echo "# aoe $(cat "$tmp/aoe.txt")"
if [ -n "$keep" ]; then
	mkdir -p "$keep"
	cp "$tmp/ort.json" "$keep/$m-t$t.ort.json"
	cp "$tmp/aoe.prof" "$keep/$m-t$t.aoe.txt"
fi
plain=$(cat "$tmp/plain.txt")
/usr/bin/python3 "$here/node_compare.py" $min ${NC_TOP:+-n $NC_TOP} \
    ${plain:+-p $plain} "$f" "$tmp/ort.json" "$tmp/aoe.prof"
