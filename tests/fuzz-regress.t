#!/bin/sh
# Every input a fuzzer crashed on (fuzz/regress/TARGET-*), replayed
# through the normal build: the harnesses by tests/fuzz-replay, aoe-report's
# input by aoe-report itself.  Each leaves its program alive: the harness
# returns (its properties hold), the tool exits with a status of the table
# (0-7), never by a signal.
. "$(dirname "$0")/tap.sh"
cd "$top" || exit 1
export TMPDIR="$T" AOE_FUZZ_EXAMPLE="$top/share/aoe/models/example.onnx"

set -- fuzz/regress/*-*
[ -e "$1" ] || set --
plan $(($# + 2))
for f; do
	t=${f##*/}
	t=${t%%-*}
	if [ "$t" = report ]; then
		mkdir -p "$T/out"
		run tools/aoe-report -q -o "$T/out" "$f"
		[ "$status" -le 7 ]
	else
		run tests/fuzz-replay "$t" "$f"
		[ "$status" -eq 0 ]
	fi
	ok $? "$f replays (exit $status)" ||
	    sed 's/^/# /' "$T/err" | tail -20
done
# The driver itself runs the committed seeds, and knows its targets.
run tests/fuzz-replay sched fuzz/corpus/sched/*
s1=$status
run tests/fuzz-replay records fuzz/corpus/records/*
[ "$s1" -eq 0 ] && [ "$status" -eq 0 ]
ok $? "the replay driver runs the committed seeds of sched and records"
fails_with 2 "unknown target 'nope'" "an unknown target is refused" \
    tests/fuzz-replay nope /dev/null
done_testing
