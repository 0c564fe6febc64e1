#!/bin/sh
# settings: aoe.ini and the environment, read in one place
# (lib/base/settings.c) by every tool: range checks from either source,
# the environment over aoe.ini, the spellings of REPEAT_TUNE, and the one
# line and exit status of a tool given a bad value.
. "$(dirname "$0")/tap.sh"
plan 29
cd "$T" || exit 1
unset AOE_MODE AOE_INI AOE_WORK_PATH TUNING_PARALLEL_NUM TE_PARALLEL_COMPILER \
    RUN_LOOP REPEAT_TUNE PROFILING_MODE GE_USE_STATIC_MEMORY AOE_SOC_VERSION
export AOE_MIN_DISK_GB=0 TUNE_BANK_PATH="$T/bank" AOE_MEASURE_LOCK="$T/lock"
mkdir -p "$T/bank"

# A bad number in the environment, then in aoe.ini, for each setting.
for s in "TUNING_PARALLEL_NUM 1 64" "TE_PARALLEL_COMPILER 1 32" \
    "RUN_LOOP 1 2048"; do
	set -- $s
	fails_with 3 "^aoe-check: $1 '$(($3 + 1))' is out of range (allowed $2 to $3) in the environment$" \
	    "$1 above $3 in the environment: exit 3, one line with the range" \
	    env "$1=$(($3 + 1))" aoe-check
	printf '[aoe]\n# tuning\n%s = x%s\n' "$1" "$2" >"$T/bad.ini"
	AOE_INI=$T/bad.ini fails_with 3 \
	    "^aoe-check: $1 'x$2' is not a number (allowed $2 to $3) in $T/bad.ini:3$" \
	    "$1 not a number in aoe.ini: exit 3, the file and line" aoe-check
	printf '%s = 0\n' "$1" >"$T/aoe.ini"
	fails_with 3 "^aoe-check: $1 '0' is out of range (allowed $2 to $3) in aoe.ini:1$" \
	    "$1 below $2 in ./aoe.ini" aoe-check
	rm -f "$T/aoe.ini"
done
AOE_MIN_DISK_GB=-1 fails_with 3 \
    "AOE_MIN_DISK_GB '-1' is out of range (allowed 0 to 1000000000) in the environment" \
    "AOE_MIN_DISK_GB below 0" aoe-check

# Every tool that reads the settings refuses a bad one the same way.
printf '{"format": "aoe-graph", "tensors": [{"name": "x", "dtype": "float32", "shape": [1, 64]}, {"name": "y", "dtype": "float32", "shape": [1, 64]}], "inputs": ["x"], "outputs": ["y"], "nodes": [{"name": "r", "op_type": "Relu", "inputs": ["x"], "outputs": ["y"]}]}\n' >"$T/relu.json"
RUN_LOOP=0 fails_with 3 "^aoe-opat: RUN_LOOP '0' is out of range" "aoe-opat: a bad RUN_LOOP" \
    aoe-opat --list "$T/relu.json"
RUN_LOOP=0 fails_with 3 "^aoe-sgat: RUN_LOOP '0' is out of range" "aoe-sgat: a bad RUN_LOOP" \
    aoe-sgat --no-check "$T/relu.json"
printf 'RUN_LOOP = 9999\n' >"$T/bad.ini"
AOE_INI=$T/bad.ini fails_with 3 "^aoe-report: RUN_LOOP '9999' is out of range (allowed 1 to 2048) in $T/bad.ini:1$" \
    "aoe-report: a bad RUN_LOOP in aoe.ini" aoe-report "$T/relu.json"

# The environment wins over aoe.ini, and $AOE_INI over ./aoe.ini; an
# empty variable is unset.
printf 'WORK_PATH = /tmp/ini\nTUNING_PARALLEL_NUM = 2\nTE_PARALLEL_COMPILER = 3\nRUN_LOOP = 5\n' >"$T/aoe.ini"
printf 'RUN_LOOP = 6\n' >"$T/other.ini"
json() {
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print(r["WORK_PATH"], r["TUNING_PARALLEL_NUM"], r["TE_PARALLEL_COMPILER"], r["RUN_LOOP"], r.get("ini", "-"))' "$T/out"
}
run aoe-check --json
[ $status -eq 0 ] && [ "$(json)" = "/tmp/ini 2 3 5 aoe.ini" ]
ok $? "./aoe.ini's settings, TE_PARALLEL_COMPILER among them"
AOE_WORK_PATH=/tmp/env TUNING_PARALLEL_NUM=4 TE_PARALLEL_COMPILER=6 RUN_LOOP=7 run aoe-check --json
[ $status -eq 0 ] && [ "$(json)" = "/tmp/env 4 6 7 aoe.ini" ]
ok $? "the environment wins over aoe.ini"
AOE_WORK_PATH= TUNING_PARALLEL_NUM= RUN_LOOP= run aoe-check --json
[ $status -eq 0 ] && [ "$(json)" = "/tmp/ini 2 3 5 aoe.ini" ]
ok $? "an empty variable leaves aoe.ini's value"
AOE_INI=$T/other.ini run aoe-check --json
# TE_PARALLEL_COMPILER's default as the tuners use it: 8, or fewer CPUs.
te=$(( $(nproc) < 8 ? $(nproc) : 8 ))
[ $status -eq 0 ] && [ "$(json)" = ". 8 $te 6 $T/other.ini" ]
ok $? "\$AOE_INI is read instead of ./aoe.ini, and the defaults fill the rest"
TUNING_PARALLEL_NUM=65 fails_with 3 "TUNING_PARALLEL_NUM '65' is out of range (allowed 1 to 64) in the environment" \
    "a bad value in the environment is an error even over a good aoe.ini" aoe-check
rm -f "$T/aoe.ini"

# REPEAT_TUNE: True, 1, on or yes re-tune a bank hit; False, 0, off or no
# keep it; anything else is refused.
aoe-opat --no-check --no-progress --budget-trials 2 "$T/relu.json" 2>/dev/null |
    sed 's/"outcome":"[a-z]*"/"outcome":"add"/' | aoe-bank -q commit
trials() {
	python3 -c 'import json, sys
print(*[r["trials"] for r in map(json.loads, open(sys.argv[1]))])' "$T/out"
}
run aoe-opat --no-check --no-progress --budget-trials 2 "$T/relu.json"
[ $status -eq 0 ] && [ "$(trials)" = 0 ]
ok $? "without REPEAT_TUNE a bank hit is reserved, not tuned"
for v in True yes ON 1; do
	REPEAT_TUNE=$v run aoe-opat --no-check --no-progress --budget-trials 2 "$T/relu.json"
	[ $status -eq 0 ] && [ "$(trials)" -gt 0 ]
	ok $? "REPEAT_TUNE=$v tunes the hit again"
done
for v in False no off; do
	REPEAT_TUNE=$v run aoe-opat --no-check --no-progress --budget-trials 2 "$T/relu.json"
	[ $status -eq 0 ] && [ "$(trials)" = 0 ]
	ok $? "REPEAT_TUNE=$v keeps the hit"
done
REPEAT_TUNE=maybe fails_with 3 \
    "^aoe-opat: REPEAT_TUNE 'maybe' is neither True nor False (allowed true, 1, on, yes or false, 0, off, no) in the environment$" \
    "REPEAT_TUNE=maybe is refused by aoe-opat, naming the variable" \
    aoe-opat --no-check --no-progress "$T/relu.json"
REPEAT_TUNE=maybe fails_with 3 "^aoe-sgat: REPEAT_TUNE 'maybe' is neither True nor False" \
    "and by aoe-sgat" aoe-sgat --no-check --no-progress "$T/relu.json"

# AOE_MODE: 1 or 2; 4 is refused where a graph is captured; else an error.
AOE_MODE=7 fails_with 3 "^aoe-check: AOE_MODE='7' is not valid: use 1 (subgraph tuning) or 2 (operator tuning)$" \
    "a bad AOE_MODE is a bad setting" aoe-check
done_testing
