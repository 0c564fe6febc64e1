#!/bin/sh
# ops: the kernels of issue 17 through aoe-run.  Bad input for the
# scatter, gather, loss and rearrangement kernels: an index out of range,
# known when the graph is prepared (a constant) or only when it runs (an
# input read from a file), a depth or blocksize that cannot work; each is
# one line naming the node, exit status 3, and nothing on stdout.  Then
# the vectorised Sinh and Cosh against the C library over the float range,
# and Dropout's seeded draws in training mode.
. "$(dirname "$0")/tap.sh"
plan 17
cd "$T" || exit 1

# i64 V...: base64 of int64 little-endian values in [0, 255].
i64() {
	for v; do
		printf "\\$(printf %03o "$v")\\0\\0\\0\\0\\0\\0\\0"
	done | base64 -w0
}
# raw64 FILE V...: the same values as a raw input file.
raw64() {
	f=$1
	shift
	for v; do
		printf "\\$(printf %03o "$v")\\0\\0\\0\\0\\0\\0\\0"
	done >"$f"
}
# zeros N: base64 of N zero bytes.
zeros() { head -c "$1" /dev/zero | base64 -w0; }
# t NAME DTYPE SHAPE [B64]: a tensor, constant when B64 is given.
t() {
	if [ $# -gt 3 ]; then
		printf '{"name":"%s","dtype":"%s","shape":[%s],"const":{"b64":"%s"}}' \
		    "$1" "$2" "$3" "$4"
	else
		printf '{"name":"%s","dtype":"%s","shape":[%s]}' "$1" "$2" "$3"
	fi
}
# graph FILE OP ATTRS NODE_INPUTS GRAPH_INPUTS TENSOR...: one node 'bad'
# with output y (float32, its shape inferred).
graph() {
	f=$1 op=$2 at=$3 ni=$4 gi=$5
	shift 5
	ts=$(IFS=,; echo "$*"),$(t y float32 1)
	printf '{"format":"aoe-graph","version":1,"name":"t","opset":17,"inputs":[%s],"outputs":["y"],"tensors":[%s],"nodes":[{"name":"bad","op_type":"%s","inputs":[%s],"outputs":["y"],"attrs":{%s}}]}\n' \
	    "$gi" "$ts" "$op" "$ni" "$at" >"$f"
}

graph se.json ScatterElements '"axis":{"int":1}' '"x","i","u"' '"x"' \
    "$(t x float32 1,5)" "$(t i int64 1,2 "$(i64 1 9)")" \
    "$(t u float32 1,2 "$(zeros 8)")"
fails_with 3 "ScatterElements 'bad': index 9 is out of range for a dimension of 5$" \
    "ScatterElements: a constant index out of range" aoe-run --runs 1 se.json

graph se2.json ScatterElements '"axis":{"int":1},"reduction":{"string":"add"}' \
    '"x","i","u"' '"x","i"' "$(t x float32 1,5)" "$(t i int64 1,2)" \
    "$(t u float32 1,2 "$(zeros 8)")"
raw64 se2.bin 0 5
fails_with 3 "ScatterElements 'bad': index 5 is out of range for a dimension of 5$" \
    "ScatterElements: an index out of range at run time" \
    aoe-run --runs 1 -i i=se2.bin se2.json

graph snd.json ScatterND '' '"x","i","u"' '"x","i"' "$(t x float32 4,4)" \
    "$(t i int64 1,1)" "$(t u float32 1,4 "$(zeros 16)")"
raw64 snd.bin 4
fails_with 3 "ScatterND 'bad': index 4 is out of range for a dimension of 4$" \
    "ScatterND: an index out of range at run time" \
    aoe-run --runs 1 -i i=snd.bin snd.json

graph gnd.json GatherND '' '"x","i"' '"x"' "$(t x float32 2,2)" \
    "$(t i int64 1,2 "$(i64 0 5)")"
fails_with 3 "GatherND 'bad': index 5 is out of range for a dimension of 2$" \
    "GatherND: a constant index out of range" aoe-run --runs 1 gnd.json

graph gnd2.json GatherND '"batch_dims":{"int":1}' '"x","i"' '"x","i"' \
    "$(t x float32 2,3,4)" "$(t i int64 2,1)"
raw64 gnd2.bin 1 3
fails_with 3 "GatherND 'bad': index 3 is out of range for a dimension of 3$" \
    "GatherND: batch_dims 1, an index out of range at run time" \
    aoe-run --runs 1 -i i=gnd2.bin gnd2.json

graph oh.json OneHot '' '"i","d","v"' '"i"' "$(t i int64 3)" \
    "$(t d int64 '' "$(i64 0)")" "$(t v float32 2 "$(zeros 8)")"
fails_with 3 "OneHot 'bad': depth 0 is not in \[1, 1e9\]$" \
    "OneHot: a depth of 0" aoe-run --runs 1 oh.json

graph d2s.json DepthToSpace '"blocksize":{"int":2}' '"x"' '"x"' \
    "$(t x float32 1,6,2,2)"
fails_with 3 "DepthToSpace 'bad': blocksize 2 squared does not divide 6 channels$" \
    "DepthToSpace: a blocksize that does not divide the channels" \
    aoe-run --runs 1 d2s.json

graph s2d.json SpaceToDepth '"blocksize":{"int":3}' '"x"' '"x"' \
    "$(t x float32 1,2,4,6)"
fails_with 3 "SpaceToDepth 'bad': blocksize 3 does not divide the 4x6 plane$" \
    "SpaceToDepth: a blocksize that does not divide the plane" \
    aoe-run --runs 1 s2d.json

graph nll.json NegativeLogLikelihoodLoss '"reduction":{"string":"sum"}' \
    '"x","i"' '"x","i"' "$(t x float32 3,5)" "$(t i int64 3)"
raw64 nll.bin 0 7 1
fails_with 3 "NegativeLogLikelihoodLoss 'bad': target 7 is out of range for 5 classes$" \
    "NegativeLogLikelihoodLoss: a target out of range at run time" \
    aoe-run --runs 1 -i i=nll.bin nll.json

graph sce.json SoftmaxCrossEntropyLoss '"reduction":{"string":"bogus"}' \
    '"x","i"' '"x","i"' "$(t x float32 3,5)" "$(t i int64 3)"
fails_with 3 "SoftmaxCrossEntropyLoss 'bad': reduction 'bogus' is not none, sum or mean$" \
    "SoftmaxCrossEntropyLoss: an unknown reduction" aoe-run --runs 1 sce.json

graph dr.json Dropout '' '"x","r","m"' '"x","r"' "$(t x float32 2,3)" \
    "$(t r float32 '')" "$(t m bool '' "$(printf '\001' | base64)")"
printf '\000\000\200\077' >dr.bin
fails_with 3 "Dropout 'bad': ratio 1 is not in \[0, 1)$" \
    "Dropout: training with a ratio of 1" aoe-run --runs 1 -i r=dr.bin dr.json

graph mu.json MaxUnpool '"kernel_shape":{"ints":[2,2]},"strides":{"ints":[2,2]}' \
    '"x","i"' '"x","i"' "$(t x float32 1,1,2,2)" "$(t i int64 1,1,2,2)"
raw64 mu.bin 0 2 8 16
fails_with 3 "MaxUnpool 'bad': index 16 is out of range for an output of 16 elements$" \
    "MaxUnpool: an index out of range at run time" \
    aoe-run --runs 1 -i i=mu.bin mu.json

# f32 FILE V...: float32 values as a raw input file.
f32() {
	f=$1
	shift
	python3 -c 'import struct, sys
sys.stdout.buffer.write(struct.pack("<%df" % (len(sys.argv) - 1),
    *map(float, sys.argv[1:])))' "$@" >"$f"
}
# Values over the float range of both: tiny, around the Taylor switch at
# 0.5 and the shifted exp past 80, up to where cosh overflows.
vals="0 1e-30 -1e-7 0.001 -0.25 0.4999 0.5 -0.5001 0.75 1 -2 3.5 10 -20
 44.4 79.9 80.1 -85 88 88.7 88.8 89 -89.4 89.5 -100 1 2 3"
# shellcheck disable=SC2086
f32 hx.bin $vals
for op in Sinh Cosh; do
	graph h.json $op '' '"x"' '"x"' "$(t x float32 28)"
	run aoe-run --runs 1 -i x=hx.bin -o "h$op" h.json
	py=$(echo $op | tr 'SC' 'sc')
	python3 - "h$op/y.bin" "$py" $vals <<'PY'
import math, struct, sys
got = struct.unpack("<28f", open(sys.argv[1], "rb").read())
f = getattr(math, sys.argv[2])
bad = []
for g, v in zip(got, sys.argv[3:]):
    x = struct.unpack("<f", struct.pack("<f", float(v)))[0]
    try:
        w = f(x)
    except OverflowError:
        w = math.inf
    if abs(w) > 3.4028234663852886e38:
        w = math.copysign(math.inf, w)
    if math.isinf(w):
        ok = g == w
    else:
        ok = abs(g - w) <= 4e-7 * abs(w) + 1e-45
    if not ok:
        bad.append((x, g, w))
for b in bad:
    print("# %s(%g) = %r, want %r" % (sys.argv[2], *b))
sys.exit(1 if bad else 0)
PY
	ok $? "$op: within 4e-7 relative of the C library from 1e-30 to overflow"
done

# Dropout, training mode, ratio 0.5, seed 7: the same mask on every run,
# the kept values doubled, about half of 4096 kept.
i=0
while [ $i -lt 4096 ]; do echo 1; i=$((i + 1)); done >ones.txt
# shellcheck disable=SC2046
f32 dx.bin $(cat ones.txt)
graph d.json Dropout '"seed":{"int":7}' '"x","r","m"' '"x"' \
    "$(t x float32 4096)" "$(t r float32 '' "$(printf '\000\000\000\077' | base64)")" \
    "$(t m bool '' "$(printf '\001' | base64)")"
run aoe-run --runs 3 -i x=dx.bin -o d1 d.json && s1=$status
run aoe-run --runs 1 -i x=dx.bin -o d2 d.json
[ "$s1" -eq 0 ] && [ "$status" -eq 0 ] && cmp -s d1/y.bin d2/y.bin
ok $? "Dropout: a seed gives the same draws on every run"
python3 - d1/y.bin <<'PY'
import struct, sys
y = struct.unpack("<4096f", open(sys.argv[1], "rb").read())
kept = sum(1 for v in y if v == 2.0)
sys.exit(0 if kept + sum(1 for v in y if v == 0.0) == 4096 and
    1900 < kept < 2200 else 1)
PY
ok $? "Dropout: ratio 0.5 keeps about half, scaled by 2, zeroes the rest"
sed 's/"seed":{"int":7}/"seed":{"int":8}/' d.json >d8.json
run aoe-run --runs 1 -i x=dx.bin -o d3 d8.json
[ "$status" -eq 0 ] && ! cmp -s d1/y.bin d3/y.bin
ok $? "Dropout: another seed, other draws"
done_testing
