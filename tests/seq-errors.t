#!/bin/sh
# seq-errors: bad input to the sequence and optional operators, run by
# aoe-run: one line naming the node, a non-zero exit, no crash.
. "$(dirname "$0")/tap.sh"
plan 3
unset AOE_MODE AOE_INI
export TUNE_BANK_PATH="$T/bank"
mkdir -p "$T/bank"
if ! "$top/tests/unit-seq" "$T" >"$T/unit" 2>&1 ||
    [ ! -s "$T/opt-get-empty.onnx" ]; then
	echo "Bail out! tests/unit-seq could not write the models"
	exit 1
fi
fails_with 3 "^aoe-run: SequenceAt 'at': position 5 is out of range for a sequence of 2$" \
    "SequenceAt past the end" aoe-run --runs 1 "$T/seq-at-range.onnx"
fails_with 3 "SequenceInsert 'insert': tensor 'three' is int64, the sequence's elements float32$" \
    "SequenceInsert of a tensor of another dtype" \
    aoe-run --runs 1 "$T/seq-insert-dtype.onnx"
fails_with 3 "^aoe-run: OptionalGetElement 'get': optional 'none' is empty$" \
    "OptionalGetElement of an empty optional" \
    aoe-run --runs 1 "$T/opt-get-empty.onnx"
done_testing
