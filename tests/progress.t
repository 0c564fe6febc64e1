#!/bin/sh
# Progress of aoe-opat and aoe-sgat: on standard error only, when asked
# or on a terminal (script(1) gives the tests one); the current case's
# own gain, cases done and left, an ETA from the first case on, a line a
# case and a summary.
. "$(dirname "$0")/tap.sh"
plan 12
ex=$top/share/aoe/models/example.onnx
cd "$top" || exit 1
export TUNE_BANK_PATH="$T/bank" RUN_LOOP=3
mkdir -p "$T/bank"
unset REPEAT_TUNE AOE_INJECT_FAULT AOE_OPAT_KILL_AT
O="--no-check --no-bank --threads 2 --timeout 10 --budget-trials 6"

# --progress into a file: a line per case and the summary, no redrawing.
run aoe-opat $O --progress "$ex"
n=$(grep -c '"kind":"opat"' "$T/out")
[ $status -eq 0 ] && [ "$n" -gt 5 ] &&
    [ "$(grep -c '^\[[0-9]*/'"$n"'\] ' "$T/err")" -eq "$n" ] &&
    ! grep -q "$(printf '\r')" "$T/err"
ok $? "--progress to a file: one line per case ($n), none redrawn"
python3 - "$T/out" "$T/err" <<'PY'
import json, re, sys
recs = [r for r in map(json.loads, open(sys.argv[1])) if r["kind"] != "model"]
err = open(sys.argv[2]).read()
m = re.search(r"aoe-opat: (\d+) cases in \S+: (\d+) add, (\d+) update, "
    r"(\d+) reserved, (\d+) unsatisfied, (\d+) failed"
    r"(?: \((\d+) backed out by the whole-model check\))?; "
    r"([\d.]+) of ([\d.]+) us saved", err)
assert m, err
count = lambda o: sum(1 for r in recs if r["outcome"] == o)
assert int(m.group(1)) == len(recs)
assert [int(m.group(i)) for i in range(2, 7)] == [count(o) for o in
    ("add", "update", "reserved", "unsatisfied", "failed")], m.group(0)
saved = sum(r["before_us"] - r["after_us"] for r in recs
    if r["outcome"] in ("add", "update"))
assert int(m.group(7) or 0) == sum(1 for r in recs if r.get("backed_out")), m.group(0)
assert abs(float(m.group(8)) - saved) < 0.2 + 0.01 * saved, (m.group(8), saved)
PY
ok $? "the summary counts the records' outcomes and the time they save"
python3 - "$T/out" "$T/err" <<'PY'
import json, re, sys
recs = [r for r in map(json.loads, open(sys.argv[1])) if r["kind"] != "model"]
lines = [l for l in open(sys.argv[2]) if re.match(r"\[\d+/\d+\] ", l)]
# A case the whole-model check backed out (on a busy host) had its line
# printed as an add or update before the check: its record says what it
# became, and backed_out.
for r, l in zip(recs, lines):
    was = r["outcome"]
    if r.get("backed_out"):
        was = "update" if " update " in l else "add"
    assert was in l and r["names"][0] in l, (r["names"], l)
    if was in ("add", "update"):
        g = 100 * (r["before_us"] - r["after_us"]) / r["before_us"]
        m = re.search(r"gain ([\d.]+)%", l)
        assert m and abs(float(m.group(1)) - g) < 0.11, (l, g)
    else:
        assert "gain" not in l, l
PY
ok $? "each case's line is its own record's outcome and gain"
grep -q '^{' "$T/out" && ! grep -qv '^{' "$T/out"
ok $? "standard output holds the records only"

# Not a terminal, not asked: nothing (but the whole-model check's
# warning, when it backs out a run's decisions).
quiet() { ! grep -v 'slower with the decisions .* backed out' "$T/err" | grep -q .; }
run aoe-opat $O "$ex"
[ $status -eq 0 ] && quiet
ok $? "no progress when standard error is not a terminal"
run aoe-opat $O --progress --no-progress "$ex"
[ $status -eq 0 ] && quiet
ok $? "--no-progress wins when last"

# On a terminal (script(1)): the line redrawn, its parts, and the gain of
# the current case alone (each case starts again from +0.0%).
if command -v script >/dev/null 2>&1; then
	script -qec "stty cols 200; aoe-opat $O -o '$T/tty.jsonl' '$ex'" \
	    /dev/null > "$T/tty" 2>&1
	st=$?
	tr '\r' '\n' < "$T/tty" > "$T/lines"
	[ $st -eq 0 ] && grep -q '\[0 done, [0-9]* left\] .* trial [0-9]*/[0-9]*  gain +[0-9.]*%  ETA [0-9]*m[0-9][0-9]s' "$T/lines"
	ok $? "on a terminal: done, left, the case, its trial, gain and ETA"
	python3 - "$T/lines" <<'PY'
import re, sys
seen, ok = {}, True
for l in open(sys.argv[1], errors="replace"):
    m = re.search(r"\[(\d+) done, \d+ left\] (.*?)  trial (\d+)/\d+  gain ([+-][\d.]+)%", l)
    if m and m.group(3) == "1":
        seen[m.group(1)] = m.group(4)
# Every case's first line says +0.0%: no gain carried from another case.
sys.exit(0 if len(seen) > 5 and set(seen.values()) == {"+0.0"} else 1)
PY
	ok $? "the gain shown is the current case's own, from +0.0%"
	grep -q 'aoe-opat: [0-9]* cases in' "$T/lines" &&
	    [ "$(wc -l < "$T/tty.jsonl")" -gt 5 ] && ! grep -q '^{' "$T/tty"
	ok $? "the summary ends it, and no record reached the terminal"
	# The ETA is known during the first case, not 0m00s: with a long
	# budget per trial the first case's lines say so.
	echo '{"tune_ops_type": ["Conv"]}' > "$T/conv.json"
	RUN_LOOP=100 script -qec "stty cols 200; aoe-opat $O --budget-trials 12 \
	    --tune-ops-file '$T/conv.json' -o '$T/tty2.jsonl' '$ex'" /dev/null \
	    > "$T/tty2" 2>&1
	tr '\r' '\n' < "$T/tty2" | grep '^.*\[0 done,' | grep -v 'trial 1/' |
	    grep -q 'ETA \(0m0[1-9]s\|0m[1-9][0-9]s\|[1-9][0-9]*m[0-9][0-9]s\)'
	ok $? "the first case already shows an ETA above zero"
else
	for i in 7 8 9 10; do echo "ok $i # skip script(1) is not installed"; done
	tap_n=10
fi

# aoe-sgat: on a terminal the line with an ETA, a line per subgraph, a
# summary.
if command -v script >/dev/null 2>&1; then
	script -qec "stty cols 200; aoe-sgat --no-check --no-bank --threads 2 \
	    --budget-trials 3 -o '$T/sg.jsonl' '$ex'" /dev/null > "$T/sg" 2>&1
	st=$?
	tr '\r' '\n' < "$T/sg" > "$T/sglines"
	[ $st -eq 0 ] &&
	    grep -q '\[0 done, [0-9]* left\] subgraph .* trial [0-9]*/[0-9]*  gain [+-][0-9.]*%  ETA [0-9]*m[0-9][0-9]s' "$T/sglines" &&
	    grep -q '\[1/[0-9]*\] subgraph [0-9]* ([0-9]* nodes x[0-9]*): ' "$T/sglines" &&
	    grep -q 'aoe-sgat: [0-9]* subgraphs in .* add,' "$T/sglines" &&
	    ! grep -q '^{' "$T/sg"
	ok $? "aoe-sgat on a terminal: its ETA line, a line per subgraph, a summary"
else
	echo "ok 11 # skip script(1) is not installed"
	tap_n=11
fi
run aoe-sgat --no-check --no-bank --threads 2 --budget-trials 3 "$ex"
[ $status -eq 0 ] && quiet
ok $? "aoe-sgat: nothing when standard error is not a terminal"
done_testing
