#!/bin/sh
# The recurrent layers and Einsum from the tools: good graphs run, bad
# ones (mismatched weights, a bad direction, hidden_size against R, an
# Einsum equation that does not parse) get one line naming the node and
# a non-zero exit; aoe-space shows an LSTM's space and aoe-opat tunes it.
. "$(dirname "$0")/tap.sh"
plan 14
cd "$T" || exit 1
unset AOE_MODE AOE_INI REPEAT_TUNE RUN_LOOP
export AOE_MIN_DISK_GB=0 TUNE_BANK_PATH="$T/bank" AOE_MEASURE_LOCK="$T/lock"
mkdir -p "$T/bank"

# rnn_graph FILE OP WDIMS RDIMS ATTRS [DIRS]: an aoe-graph of one node
# whose X [5, 2, 3], W and R are graph inputs, hidden size 4.
rnn_graph() {
	cat >"$1" <<JSON
{"format": "aoe-graph", "version": 1, "name": "r", "opset": 14,
 "inputs": ["X", "W", "R"], "outputs": ["Y", "Y_h"],
 "tensors": [
  {"name": "X", "dtype": "float32", "shape": [5, 2, 3]},
  {"name": "W", "dtype": "float32", "shape": [$3]},
  {"name": "R", "dtype": "float32", "shape": [$4]},
  {"name": "Y", "dtype": "float32", "shape": [5, ${6:-1}, 2, 4]},
  {"name": "Y_h", "dtype": "float32", "shape": [${6:-1}, 2, 4]}],
 "nodes": [{"name": "rnn_node", "op_type": "$2", "inputs": ["X", "W", "R"],
  "outputs": ["Y", "Y_h"], "attrs": {$5}}]}
JSON
}

# einsum_graph FILE EQUATION: Einsum of a [2, 3] and a [3, 4].
einsum_graph() {
	cat >"$1" <<JSON
{"format": "aoe-graph", "version": 1, "name": "e", "opset": 14,
 "inputs": ["a", "b"], "outputs": ["c"],
 "tensors": [
  {"name": "a", "dtype": "float32", "shape": [2, 3]},
  {"name": "b", "dtype": "float32", "shape": [3, 4]},
  {"name": "c", "dtype": "float32", "shape": [2, 4]}],
 "nodes": [{"name": "einsum_node", "op_type": "Einsum",
  "inputs": ["a", "b"], "outputs": ["c"],
  "attrs": {"equation": {"string": "$2"}}}]}
JSON
}

rnn_graph lstm.json LSTM "1, 16, 3" "1, 16, 4" '"hidden_size": {"int": 4}'
rnn_graph bi.json LSTM "2, 16, 3" "2, 16, 4" \
    '"direction": {"string": "bidirectional"}' 2
rnn_graph gru.json GRU "1, 12, 3" "1, 12, 4" \
    '"linear_before_reset": {"int": 1}'
rnn_graph rnn.json RNN "1, 4, 3" "1, 4, 4" \
    '"activations": {"strings": ["Relu"]}'
for g in lstm bi gru rnn; do
	run aoe-run --runs 2 --warmup 1 "$g.json"
	ok $status "aoe-run: the $g graph runs"
done

rnn_graph w.json LSTM "1, 16, 2" "1, 16, 4" ''
fails_with 3 "^aoe-run: LSTM 'rnn_node': W is 1x16x2, expected 1x16x3" \
    "LSTM weights W of the wrong input size: one line naming the node" \
    aoe-run w.json
rnn_graph r.json GRU "1, 12, 3" "1, 16, 4" ''
fails_with 3 "^aoe-run: GRU 'rnn_node': R is 1x16x4, not \[directions, 3\*hidden, hidden\]$" \
    "GRU weights R of the wrong shape: one line naming the node" \
    aoe-run r.json
rnn_graph dir.json LSTM "1, 16, 3" "1, 16, 4" \
    '"direction": {"string": "sideways"}'
fails_with 3 "^aoe-run: LSTM 'rnn_node': direction 'sideways' is not forward, reverse or bidirectional$" \
    "a bad direction: one line naming the node" aoe-run dir.json
rnn_graph hs.json LSTM "1, 16, 3" "1, 16, 4" '"hidden_size": {"int": 5}'
fails_with 3 "^aoe-run: LSTM 'rnn_node': hidden_size 5 disagrees with R (hidden 4)$" \
    "hidden_size against R: one line naming the node" aoe-run hs.json
rnn_graph nd.json RNN "1, 4, 3" "1, 4, 4" \
    '"direction": {"string": "bidirectional"}' 2
fails_with 3 "^aoe-run: RNN 'rnn_node': W and R have 1 and 1 directions, direction 'bidirectional' needs 2$" \
    "one direction of weights for a bidirectional RNN: one line" \
    aoe-run nd.json

einsum_graph e1.json 'ij,j%k->ik'
fails_with 3 "^aoe-run: Einsum 'einsum_node': equation 'ij,j%k->ik' does not parse: a character that is not a letter$" \
    "an Einsum equation that does not parse: one line naming the node" \
    aoe-run e1.json
einsum_graph e2.json 'ij->i'
fails_with 3 "^aoe-run: Einsum 'einsum_node': equation 'ij->i' does not parse: fewer terms than inputs$" \
    "an Einsum equation with too few terms: one line naming the node" \
    aoe-run e2.json

cat >tri.json <<'JSON'
{"format": "aoe-graph", "version": 1, "name": "t", "opset": 14,
 "inputs": ["x"], "outputs": ["y"],
 "tensors": [{"name": "x", "dtype": "float32", "shape": [6]},
  {"name": "y", "dtype": "float32", "shape": [6]}],
 "nodes": [{"name": "tri_node", "op_type": "Trilu", "inputs": ["x"],
  "outputs": ["y"], "attrs": {}}]}
JSON
fails_with 3 "^aoe-run: Trilu 'tri_node': input of rank 1, at least 2 expected$" \
    "Trilu of a vector: one line naming the node" aoe-run tri.json

# The LSTM's space is the GEMM's, and aoe-opat tunes it.
run aoe-space lstm.json
[ $status -eq 0 ] && grep -q "^rnn_node LSTM: [0-9]* points" "$T/out" &&
    grep -q "^  mr " "$T/out" && grep -q "^  prepack " "$T/out"
ok $? "aoe-space shows the LSTM's search space (the GEMM's knobs)"
RUN_LOOP=3 run aoe-opat --no-check --no-progress --threads 2 --timeout 60 \
    --budget-trials 4 -o "$T/rec.jsonl" lstm.json
# One record of the node; a winner adds the whole-model check's "model"
# record, which a loaded machine makes likelier.
[ $status -eq 0 ] && [ "$(grep -vc '"kind": *"model"' "$T/rec.jsonl")" -eq 1 ] &&
    grep -q '"op_type": *"LSTM"' "$T/rec.jsonl" &&
    grep -Eq '"outcome": *"(add|unsatisfied)"' "$T/rec.jsonl" &&
    grep -q '"after_us"' "$T/rec.jsonl"
ok $? "aoe-opat tunes the LSTM node: one record"
done_testing
