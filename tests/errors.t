#!/bin/sh
# errors: libaoe sets a failure's message, the tool prints it once; a bad
# operand is told and the tool goes on, exiting non-zero at the end.
. "$(dirname "$0")/tap.sh"
plan 8
ex=$top/share/aoe/models/example.onnx
cd "$T" || exit 1
unset AOE_MODE AOE_INI REPEAT_TUNE RUN_LOOP
export AOE_MIN_DISK_GB=0 TUNE_BANK_PATH="$T/bank" AOE_MEASURE_LOCK="$T/lock"
mkdir -p "$T/bank"
echo '{' >"$T/bad1.json"
echo 'nope' >"$T/bad2.json"

# count PATTERN: how many lines of stderr match.
count() { grep -c -- "$1" "$T/err"; }

run aoe-opat --list "$T/bad1.json" "$T/bad2.json"
[ $status -eq 3 ] && [ "$(wc -l <"$T/err")" -eq 2 ] &&
    [ "$(count "bad1.json: malformed JSON")" -eq 1 ] &&
    [ "$(count "'$T/bad2.json' is not a valid ONNX model")" -eq 1 ]
ok $? "aoe-opat: two bad operands with one exit code, two messages"
run aoe-opat --list "$T/bad1.json" "$ex" /nonexistent
[ $status -eq 5 ] && [ "$(wc -l <"$T/err")" -eq 2 ] && [ -s "$T/out" ] &&
    [ "$(count "cannot open '/nonexistent'")" -eq 1 ]
ok $? "aoe-opat: the good operand is listed, each bad one told once, the worst status"
echo garbage >"$T/replay.jsonl"
run aoe-opat --no-check --no-progress --budget-trials 1 --replay "$T/replay.jsonl" \
    "$T/bad1.json" "$ex"
[ $status -eq 3 ] && [ "$(count "bad1.json: malformed JSON")" -eq 1 ] &&
    [ "$(count "replay.jsonl:1: malformed JSON")" -eq 1 ] && [ ! -s "$T/out" ]
ok $? "aoe-opat: a later failure with the same code as a bad operand is told too"

fails_with 5 "^aoe-bank: cannot open '/nonexistent': No such file or directory$" \
    "aoe-bank lookup: one missing graph, one line" aoe-bank lookup /nonexistent
run aoe-bank lookup /nonexistent "$T/bad1.json"
[ $status -eq 5 ] && [ "$(wc -l <"$T/err")" -eq 3 ] &&
    [ "$(count "cannot open '/nonexistent'")" -eq 1 ] &&
    [ "$(count "bad1.json: malformed JSON")" -eq 1 ] &&
    [ "$(count "2 of 2 graphs could not be looked up")" -eq 1 ]
ok $? "aoe-bank lookup: each bad graph once, then a summary"

fails_with 3 "^aoe-sgat: .*bad1.json: malformed JSON$" "aoe-sgat: a bad graph, one line" \
    aoe-sgat --no-check "$T/bad1.json"
fails_with 3 "^aoe-capture: .*bad1.json: malformed JSON$" "aoe-capture: a bad model, one line" \
    aoe-capture "$T/bad1.json"
run aoe-report -o "$T" /nonexistent
[ $status -eq 5 ] && [ "$(wc -l <"$T/err")" -eq 2 ] &&
    [ "$(count "cannot open '/nonexistent'")" -eq 1 ] &&
    grep -q "^aoe-report: no result file written$" "$T/err"
ok $? "aoe-report: an unreadable file is told once, no count of bad records"
done_testing
