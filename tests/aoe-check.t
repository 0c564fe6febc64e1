#!/bin/sh
# aoe-check: each precondition made to fail in turn, read back from the
# report; bad settings; the report formats.
. "$(dirname "$0")/tap.sh"
plan 39
ex=$top/share/aoe/models/example.onnx
cd "$top" || exit 1
mkexample -d "$T/dyn.onnx"
aoe-capture -o "$T/g.json" "$ex" 2>/dev/null
unset AOE_MODE PROFILING_MODE GE_USE_STATIC_MEMORY TUNE_BANK_PATH AOE_INI RUN_LOOP \
    TUNING_PARALLEL_NUM TE_PARALLEL_COMPILER AOE_WORK_PATH REPEAT_TUNE
# A private lock and no disk threshold: the baseline is "ready" anywhere.
AOE_DEVICE_LOCK=$T/device.lock AOE_MIN_DISK_GB=0
export AOE_DEVICE_LOCK AOE_MIN_DISK_GB
cd "$T" || exit 1

# status CHECK: the status column of a check in the last table.
status_of() { awk -v c="$1" '$1 == c { print $2 }' "$T/out"; }

run aoe-check --graph "$T/g.json"
[ $status -eq 0 ] && [ ! -s "$T/err" ]
ok $? "a quiet machine and a static graph are ready (exit 0)"
for c in disk graph memory cpus affinity profiling static-mem device lock load timing bank; do
	[ -n "$(status_of $c)" ] || echo "# missing check $c"
done
[ "$(awk 'NR > 1' "$T/out" | wc -l)" -eq 12 ] && head -1 "$T/out" | grep -q '^check  *status  *measured  *limit  *note$'
ok $? "the table has a header and one row per check"
[ "$(status_of graph)" = OK ] && grep -q '^memory  *OK .* x TUNING_PARALLEL_NUM 8$' "$T/out"
ok $? "the graph is static and its memory x TUNING_PARALLEL_NUM fits"
grep -q '^device  *OK .*one device' "$T/out"
ok $? "a single device, said so"
RANK_SIZE=8 run aoe-check
[ $status -eq 1 ] && [ "$(status_of device)" = FAIL ] &&
    grep -q '^device  *FAIL  *8  *1  *RANK_SIZE=8: a multi-device run, which AOE does not tune' "$T/out"
ok $? "a multi-device run (RANK_SIZE=8) fails"
WORLD_SIZE=2 run aoe-check
[ $status -eq 1 ] && grep -q '^device  *FAIL  *2 .*WORLD_SIZE=2' "$T/out"
w=$?
RANK_SIZE=1 WORLD_SIZE=1 run aoe-check
[ $w -eq 0 ] && [ $status -eq 0 ] && [ "$(status_of device)" = OK ]
ok $? "WORLD_SIZE=2 fails too; a size of 1 is one device"

run aoe-check --min-disk-gb 999999999
[ $status -eq 1 ] && [ "$(status_of disk)" = FAIL ] && grep -q '^disk .*>= 999999999G' "$T/out" &&
    grep -q 'not ready to tune: 1 check failed' "$T/err"
ok $? "too little free disk fails, with the measured value and the limit"
AOE_MIN_DISK_GB=999999999 run aoe-check
[ $status -eq 1 ] && [ "$(status_of disk)" = FAIL ]
ok $? "AOE_MIN_DISK_GB sets the disk threshold"

if [ "$(nproc)" -gt 1 ]; then
	run taskset -c 0 aoe-check
	[ $status -eq 1 ] && [ "$(status_of affinity)" = FAIL ] &&
	    grep -q 'pinned to CPUs 0 of ' "$T/out"
	ok $? "a process pinned with taskset fails"
else
	ok 0 "# SKIP one CPU: cannot pin to a subset"
fi

PROFILING_MODE=true run aoe-check
[ $status -eq 1 ] && [ "$(status_of profiling)" = FAIL ] && grep -q 'PROFILING_MODE=true' "$T/out"
ok $? "profiling on fails"
GE_USE_STATIC_MEMORY=1 run aoe-check
[ $status -eq 1 ] && [ "$(status_of static-mem)" = FAIL ] && grep -q 'GE_USE_STATIC_MEMORY=1' "$T/out"
ok $? "static memory on fails"
GE_USE_STATIC_MEMORY=0 run aoe-check
[ $status -eq 0 ] && [ "$(status_of static-mem)" = OK ]
ok $? "GE_USE_STATIC_MEMORY=0 is fine"

run aoe-check --graph "$T/dyn.onnx"
[ $status -eq 1 ] && [ "$(status_of graph)" = FAIL ] &&
    grep -q "input 'image' has a dynamic shape Nx3x64x64: bind it with --input-shape image:" "$T/out"
ok $? "a dynamic graph fails, naming the input and how to bind it"
run aoe-check --graph "$T/dyn.onnx" --input-shape image:2,3,64,64
[ "$(status_of graph)" = OK ] && [ "$(status_of memory)" != "" ]
ok $? "--input-shape binds the dynamic graph before it is checked"
# A batch of 100000 plans about 72G; 64 tuning jobs need 64 times that.
TUNING_PARALLEL_NUM=64 run aoe-check --graph "$T/dyn.onnx" --input-shape image:100000,3,64,64
[ $status -eq 1 ] && [ "$(status_of memory)" = FAIL ] && [ "$(status_of graph)" = OK ] &&
    grep -q 'not ready to tune: 1 check failed' "$T/err" &&
    awk '$1 == "memory" { l = $6; sub(/G$/, "", l); m = $9; sub(/G$/, "", m)
	exit !($8 == "memory" && $NF == 64 && l / m > 63.9 && l / m < 64.1) }' "$T/out"
ok $? "free memory below the model's memory x TUNING_PARALLEL_NUM fails, with both numbers"

# Another user's tuning run holds the device lock.
(exec 9>"$T/device.lock"; flock -x 9; echo "user=alice pid=4242" >&9; exec sleep 30) &
holder=$!
i=0
while [ ! -s "$T/device.lock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
run aoe-check
kill $holder 2>/dev/null
wait $holder 2>/dev/null
[ $status -eq 1 ] && [ "$(status_of lock)" = FAIL ] &&
    grep -q "being tuned by user=alice pid=4242 (lock '$T/device.lock')" "$T/out"
ok $? "a held device lock fails, naming its owner"
run aoe-check
[ $status -eq 0 ] && [ "$(status_of lock)" = OK ]
ok $? "the lock is free again once its holder is gone"
run aoe-check --lock "$T/other.lock"
[ $status -eq 0 ] && grep -q "nobody is tuning this device ($T/other.lock)" "$T/out"
ok $? "--lock names the lock file"

TUNE_BANK_PATH=$T/nonexistent run aoe-check
[ $status -eq 1 ] && [ "$(status_of bank)" = FAIL ]
ok $? "a TUNE_BANK_PATH that is not a directory fails"

# TE_PARALLEL_COMPILER as aoe-opat uses it when unset: 8, or the online
# CPUs if fewer.
te=$(( $(nproc) < 8 ? $(nproc) : 8 ))
run aoe-check --processes 1024 -j 1
[ $status -eq 0 ] && [ "$(status_of cpus)" = WARN ] &&
    grep -q "^cpus .* >= $(( 1024 * (16 + te) )) .*subgraph tuning: processes 1024 x (2 x TUNING_PARALLEL_NUM 8 + TE_PARALLEL_COMPILER $te)" "$T/out"
ok $? "too few host CPUs is a WARN with AOE's formula, not a FAIL"
run aoe-check --json
[ $status -le 1 ] && python3 -c 'import json, sys
sys.exit(json.load(open(sys.argv[1]))["TE_PARALLEL_COMPILER"] != int(sys.argv[2]))' "$T/out" $te
ok $? "TE_PARALLEL_COMPILER unset is what the tuners use ($te), not 8"
TE_PARALLEL_COMPILER=2 TUNING_PARALLEL_NUM=3 run aoe-check --processes 2
m=$(( $(nproc) / 2 < 8 ? $(nproc) / 2 : 8 ))
grep -q "^cpus .*>= $(( 2 * (2 + 3 + m + 50) )) .*processes 2 x (TE_PARALLEL_COMPILER 2 + TUNING_PARALLEL_NUM 3 + min(cores/2, 8) $m + 50)" "$T/out"
ok $? "TE_PARALLEL_COMPILER and TUNING_PARALLEL_NUM enter the operator-tuning formula"

printf '[aoe]\n# tuning\nWORK_PATH = /tmp/w\nTUNING_PARALLEL_NUM = 2\nRUN_LOOP = 5\n' > "$T/aoe.ini"
run aoe-check --json
[ $status -eq 0 ] && python3 - "$T/out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ok = (r["ready"] is True and r["TUNING_PARALLEL_NUM"] == 2 and r["RUN_LOOP"] == 5
      and r["WORK_PATH"] == "/tmp/w" and r["ini"] == "aoe.ini"
      and {c["check"] for c in r["checks"]} >= {"disk", "lock", "affinity"}
      and all(set(c) == {"check", "status", "measured", "limit", "note"} for c in r["checks"]))
sys.exit(0 if ok else 1)
PY
ok $? "--json, with the settings read from ./aoe.ini"
rm -f "$T/aoe.ini"

# The tuners run the same checks before they start; --no-check skips them.
printf '{"format": "aoe-graph", "tensors": [{"name": "x", "dtype": "float32", "shape": [1, 64]}, {"name": "y", "dtype": "float32", "shape": [1, 64]}], "inputs": ["x"], "outputs": ["y"], "nodes": [{"name": "r", "op_type": "Relu", "inputs": ["x"], "outputs": ["y"]}]}\n' > "$T/relu.json"
mkdir -p "$T/bank"
export TUNE_BANK_PATH="$T/bank" AOE_MEASURE_LOCK="$T/measure.lock" RUN_LOOP=1
echo keep > "$T/keep"
PROFILING_MODE=true run aoe-opat --no-progress -o "$T/keep" "$T/relu.json"
[ $status -eq 1 ] && [ "$(cat "$T/keep")" = keep ] && [ "$(wc -l < "$T/err")" -eq 1 ] &&
    grep -q '^aoe-opat: not ready: profiling true (limit off): PROFILING_MODE=true: ' "$T/err"
ok $? "aoe-opat checks first: profiling on refuses the run, -o left alone"
run aoe-opat --no-progress -o "$T/keep" "$T/relu.json" "$T/dyn.onnx"
[ $status -eq 1 ] && [ "$(cat "$T/keep")" = keep ] &&
    grep -q "^aoe-opat: not ready: graph dynamic (limit static): $T/dyn.onnx: input 'image' has a dynamic shape" "$T/err"
ok $? "aoe-opat checks each graph operand: a dynamic one refuses the run"
TUNING_PARALLEL_NUM=64 run aoe-opat --no-progress --input-shape image:100000,3,64,64 "$T/dyn.onnx"
[ $status -eq 1 ] && grep -q '^aoe-opat: not ready: memory .* available (limit >= .*G): model memory .* x TUNING_PARALLEL_NUM 64$' "$T/err"
ok $? "aoe-opat: the memory check on the bound graph"
GE_USE_STATIC_MEMORY=1 run aoe-sgat --no-progress -o "$T/keep" "$T/relu.json"
[ $status -eq 1 ] && [ "$(cat "$T/keep")" = keep ] &&
    grep -q '^aoe-sgat: not ready: static-mem 1 (limit off): GE_USE_STATIC_MEMORY=1: ' "$T/err"
ok $? "aoe-sgat checks first: static memory on refuses the run, -o left alone"
run aoe-sgat --no-progress "$T/dyn.onnx"
[ $status -eq 1 ] && grep -q "^aoe-sgat: not ready: graph dynamic (limit static): $T/dyn.onnx: input 'image'" "$T/err"
ok $? "aoe-sgat checks its graph: a dynamic one refuses the run"
AOE_MIN_DISK_GB=999999999 run aoe-opat --no-progress "$T/relu.json"
s1=$status
grep -q '^aoe-opat: not ready: disk .* (limit >= 999999999G)' "$T/err"
g1=$?
AOE_MIN_DISK_GB=999999999 run aoe-opat --no-check --no-progress --budget-trials 2 "$T/relu.json"
[ $s1 -eq 1 ] && [ $g1 -eq 0 ] && [ $status -eq 0 ] && [ "$(grep -c '"kind":"opat"' "$T/out")" -eq 1 ]
ok $? "aoe-opat --no-check skips the checks (too little disk): the case is tuned"
AOE_MIN_DISK_GB=999999999 run aoe-sgat --no-progress "$T/relu.json"
s1=$status
grep -q '^aoe-sgat: not ready: disk .* (limit >= 999999999G)' "$T/err"
g1=$?
AOE_MIN_DISK_GB=999999999 run aoe-sgat --no-check --no-progress "$T/relu.json"
[ $s1 -eq 1 ] && [ $g1 -eq 0 ] && [ $status -eq 0 ] && grep -q '"kind":"sgat' "$T/out"
ok $? "aoe-sgat --no-check skips the checks (too little disk): the graph is tuned"
unset TUNE_BANK_PATH

printf 'TUNING_PARALLEL_NUM = 65\n' > "$T/bad.ini"
AOE_INI=$T/bad.ini fails_with 3 "TUNING_PARALLEL_NUM '65' is out of range (allowed 1 to 64) in $T/bad.ini:1" \
    "an out-of-range TUNING_PARALLEL_NUM in aoe.ini" aoe-check
printf 'RUN_LOOP = 0\n' > "$T/bad.ini"
AOE_INI=$T/bad.ini fails_with 3 "RUN_LOOP '0' is out of range (allowed 1 to 2048)" "RUN_LOOP 0" aoe-check
printf 'just words\n' > "$T/bad.ini"
AOE_INI=$T/bad.ini fails_with 3 "bad.ini:1: expected KEY = value" "a malformed aoe.ini" aoe-check
AOE_INI=$T/none.ini fails_with 5 "cannot open '$T/none.ini'" "a missing AOE_INI" aoe-check
TUNING_PARALLEL_NUM=0 fails_with 3 "TUNING_PARALLEL_NUM '0' is out of range (allowed 1 to 64) in the environment" \
    "TUNING_PARALLEL_NUM=0" aoe-check
TE_PARALLEL_COMPILER=many fails_with 3 "TE_PARALLEL_COMPILER 'many' is not a number" \
    "a non-numeric TE_PARALLEL_COMPILER" aoe-check
fails_with 4 "job-type 4 (gradient split tuning) is not supported" "-j 4" aoe-check -j 4
fails_with 5 "cannot open '$T/nope.json'" "a missing graph" aoe-check --graph "$T/nope.json"
run aoe-check extra
[ $status -eq 2 ] && grep -q '^usage: aoe-check' "$T/err"
ok $? "an operand is a usage error"
done_testing
