#!/bin/sh
# ops-bad: bad input for the scatter, gather, loss and rearrangement
# kernels (issue 17): an index out of range, known when the graph is
# prepared (a constant) or only when it runs (an input read from a file),
# a depth or blocksize that cannot work.  Each is one line naming the
# node, exit status 3, and nothing on stdout.
. "$(dirname "$0")/tap.sh"
plan 12
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
# with output y.
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
done_testing
