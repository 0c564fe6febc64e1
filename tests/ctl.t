#!/bin/sh
# Control flow through aoe-run: an If folded at prepare time (its branch
# inlined, fused and run as the parent's nodes), an If on an input, a
# Loop with a scan output sized at run time, and the bad inputs that get
# a one-line error naming the node.  The fixtures are written by
# tests/mkctl.py (the onnx package of /usr/bin/python3).
. "$(dirname "$0")/tap.sh"
cd "$top" || exit 1
if ! /usr/bin/python3 -c 'import onnx, numpy' 2>/dev/null; then
	echo "1..0 # SKIP /usr/bin/python3 has no onnx module (apt-get install python3-onnx)"
	exit 0
fi
plan 19
/usr/bin/python3 tests/mkctl.py "$T" || exit 1

# Four floats in a raw file, and a one-byte bool.
python3 -c 'import struct, sys; open(sys.argv[1], "wb").write(struct.pack("<4f", 1, -2, 3, 0.25))' "$T/x.bin"
printf '\001' >"$T/true.bin"
printf '\000' >"$T/false.bin"
# floats FILE: the float32 values of FILE, one a line, as %g.
floats() {
	python3 -c 'import struct, sys; b = open(sys.argv[1], "rb").read(); print("\n".join("%g" % v for v in struct.unpack("<%df" % (len(b) // 4), b)))' "$1"
}

run aoe-run --runs 1 -p -i x="$T/x.bin" -o "$T/c" "$T/if_const.onnx"
ok $status "runs a model whose If has a constant condition"
grep -q "^if0/add " "$T/err" && ! grep -q " If " "$T/err"
ok $? "the If is folded: the profile shows its branch's nodes, inlined"
[ "$(floats "$T/c/y.bin" | tr '\n' ' ')" = "1.5 0 3.5 0.75 " ]
ok $? "the inlined branch computes Relu(x + 0.5)"

run aoe-run --runs 1 -p --input-shape x:3,4 "$T/if_shape.onnx"
grep -q "^if0/neg " "$T/err" && ! grep -q " If " "$T/err"
ok $? "an If on the input's shape folds once the shape is bound (3x4)"
run aoe-run --runs 1 -p --input-shape x:1,4 "$T/if_shape.onnx"
grep -q "^if0/add " "$T/err"
ok $? "and takes the other branch for 1x4"

run aoe-run --runs 1 -p -i x="$T/x.bin" -i c="$T/true.bin" -o "$T/t" \
    "$T/if_input.onnx"
ok $status "runs an If whose condition is an input"
grep -q " If " "$T/err"
ok $? "that If stays a node"
[ "$(floats "$T/t/y.bin" | tr '\n' ' ')" = "1.5 0 3.5 0.75 " ]
ok $? "condition true runs then_branch"
run aoe-run --runs 1 -i x="$T/x.bin" -i c="$T/false.bin" -o "$T/f" \
    "$T/if_input.onnx"
[ "$(floats "$T/f/y.bin" | tr '\n' ' ')" = "-1 2 -3 -0.25 " ]
ok $? "condition false runs else_branch"

run aoe-run --runs 2 -i x="$T/x.bin" -o "$T/l" "$T/loop_count.onnx"
ok $status "runs a Loop of 5 trips"
[ "$(cat "$T/l/ys.shape")" = "5,1,4" ] &&
    [ "$(floats "$T/l/y.bin" | tr '\n' ' ')" = "6 -12 18 1.5 " ]
ok $? "its carried sum is 6 x and its scan output 5x1x4, sized at run time"
[ "$(floats "$T/l/ys.bin" | sed -n '1p;17p' | tr '\n' ' ')" = "2 6 " ]
ok $? "the scan output holds every iteration's value"

run aoe-run --runs 2 -i x="$T/x.bin" -o "$T/w" "$T/loop_while.onnx"
[ $status -eq 0 ] && [ "$(floats "$T/w/y.bin" | tr '\n' ' ')" = "6 3 8 5.25 " ]
ok $? "a Loop on its condition alone stops after 5 trips (while i < 4)"
[ "$(cat "$T/w/grown.shape")" = "6" ] &&
    [ "$(floats "$T/w/grown.bin" | tr '\n' ' ')" = "0 1 1 1 1 1 " ]
ok $? "a carried value that grows each trip is prepared again and kept"

fails_with 3 "Loop 'loop0': neither a trip count nor a condition input" \
    "a Loop with neither trip count nor condition is refused" \
    aoe-run --runs 1 "$T/loop_noend.onnx"
fails_with 3 "If 'if_bad': branch 'then_branch' has 2 outputs, the node 1" \
    "a branch whose output count differs from the node's is refused" \
    aoe-run --runs 1 "$T/if_count.onnx"
fails_with 3 "If 'if_outer': subgraph 'else_branch' reads 'zz', which no enclosing graph defines" \
    "a subgraph reading an unknown outer name is refused" \
    aoe-run --runs 1 "$T/if_outer.onnx"
AOE_MODE=2 AOE_CAPTURE_DIR="$T/cap" aoe-run --runs 1 -i x="$T/x.bin" \
    -i c="$T/true.bin" "$T/if_input.onnx" >/dev/null 2>&1
set -- "$T"/cap/graph_*.json
# The branches are in the If's graph, nested, where aoe-opat tunes their
# operators by path: not captured (and tuned) a second time on their own.
[ $# -eq 1 ] && [ -f "$1" ] && aoe-run --runs 1 -i c="$T/true.bin" \
    "$1" >/dev/null 2>&1 && grep -q '"then_branch":{"graph":' "$1" &&
    grep -q '"else_branch":{"graph":' "$1"
ok $? "in tune mode the If's graph is captured once, its branches nested ($# files)"
run aoe-check --graph "$T/if_input.onnx"
! grep -q 'unsupported' "$T/out" "$T/err"
ok $? "aoe-check finds every operator supported, inside branches too"
done_testing
