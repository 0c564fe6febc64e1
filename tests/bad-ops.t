#!/bin/sh
# Models with bad signal and sampling nodes (written by tests/unit-signal
# -w): aoe-run refuses each with one line naming the node and exit 3.
. "$(dirname "$0")/tap.sh"
plan 5
cd "$T" || exit 1
"$top/tests/unit-signal" -w "$T" || exit 1
for i in 0 1 2 3 4; do
	case $i in
	0) why="grid has rank 3" ;;
	1) why="dft_length 0 is not a positive integer" ;;
	2) why="batch index 5 of roi 1 is out of range" ;;
	3) why="frame_length 8 is longer than the signal" ;;
	4) why="unknown mode 'trilinear'" ;;
	esac
	fails_with 3 "^aoe-run: [A-Za-z]* 'bad_node': $why" \
	    "aoe-run: bad$i.onnx refused: $why" aoe-run "$T/bad$i.onnx"
done
done_testing
