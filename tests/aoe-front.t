#!/bin/sh
# The front end end to end on the bundled example, both job types, with
# each result file checked against aoe-result(5); aoe-verify; aoe.mk
# re-tuning only what changed; and the front end's failure paths.
. "$(dirname "$0")/tap.sh"
plan 44
PATH=$top/pipelines:$PATH
ex=$top/share/aoe/models/example.onnx
schema=$top/tests/result-schema.py
export TUNE_BANK_PATH="$T/bank" AOE_DEVICE_LOCK="$T/device.lock"
export AOE_MEASURE_LOCK="$T/measure.lock" RUN_LOOP=3
export AOE_TUNE_FLAGS="--budget-trials 4 --seed 1"
mkdir -p "$T/bank" "$T/res"

run aoe --model "$ex" --job_type 2 --output "$T/res" --progress_bar off
ok $status "aoe --job_type 2 runs capture, check, tune, commit and report"
f=$(ls "$T"/res/aoe_result_opat_*_pid*.json 2>/dev/null)
[ -n "$f" ] && python3 "$schema" $f
ok $? "the OPAT result file follows the schema and its invariants"
python3 - $f "$T/res/aoe_work/example_opat/records.jsonl" <<'PY'
import json, sys
o = list(json.load(open(sys.argv[1])).values())[0][1]["OPAT"]
s = o["repo_summary"]
recs = [r for r in (json.loads(l) for l in open(sys.argv[2]) if l.strip()) if r["kind"] != "model"]
names = [n for r in recs for n in r["names"]]
# Every tunable operator in exactly one case, every case counted once
# (aoe-opat leaves out operators whose space has a single point, and
# those the runtime's fusion removes: the Relus, the Sigmoid, the BN,
# the stem's MaxPool).
sys.exit(0 if s["total_num"] == len(recs) and s["repo_hit_num"] == 0
    and len(names) == len(set(names)) and len(names) >= 8
    and not {"stem.relu", "stem.pool", "b1.bn", "b1.relu", "b2.dw.act"} & set(names)
    and {"stem.conv", "b1.conv", "b2.dw", "b2.pw"} <= set(names) else 1)
PY
ok $? "each tunable operator in one case, each case counted once"
[ -s "$T/res/aoe_work/example_opat/graph.json" ] &&
    [ -s "$T/res/aoe_work/example_opat/records.jsonl" ]
ok $? "the work directory keeps the graph and the records"

# A second run finds the committed entries: hits, reserved.
added=$(python3 -c 'import json,sys; o=list(json.load(open(sys.argv[1])).values())[0][1]["OPAT"]; print(o["repo_summary"]["repo_add_num"])' $f)
rm -f "$T"/res/aoe_result_*
run aoe --model "$ex" --job_type 2 --output "$T/res" --progress_bar off
f2=$(ls "$T"/res/aoe_result_opat_*.json 2>/dev/null)
[ $status -eq 0 ] && python3 "$schema" $f2 && python3 - $f2 $added <<'PY'
import json, sys
s = list(json.load(open(sys.argv[1])).values())[0][1]["OPAT"]["repo_summary"]
sys.exit(0 if s["repo_reserved_num"] == int(sys.argv[2]) and s["repo_hit_num"] == int(sys.argv[2]) else 1)
PY
ok $? "a second run reserves what the first added ($added)"

# --reload carries on from the journal: a run cut off half way (its
# journal truncated) ends with a record for every case, as the full run.
w=$T/res/aoe_work/example_opat
sed -n 's/.*"key":"\([0-9]*\)".*/\1/p' "$w/records.jsonl" | sort > "$T/keys1"
n=$(wc -l < "$w/journal.jsonl")
head -n $((n / 2)) "$w/journal.jsonl" > "$T/j" && mv "$T/j" "$w/journal.jsonl"
rm -f "$w/records.jsonl" "$T"/res/aoe_result_*
run aoe --model "$ex" --job_type 2 --output "$T/res" --progress_bar off --reload
sed -n 's/.*"key":"\([0-9]*\)".*/\1/p' "$w/records.jsonl" | sort > "$T/keys2"
[ $status -eq 0 ] && [ "$n" -gt 2 ] && [ -s "$T/keys1" ] && cmp -s "$T/keys1" "$T/keys2" &&
    python3 "$schema" "$T"/res/aoe_result_opat_*.json
ok $? "--reload resumes a run cut off half way: every case reported"
rm -f "$T"/res/aoe_result_*
mkdir -p "$T/elsewhere"
(cd "$T/elsewhere" && run aoe --model "$ex" --job_type 2 --reload="$T/res" --progress_bar off &&
    [ $status -eq 0 ]) && ls "$T"/res/aoe_result_opat_*.json >/dev/null 2>&1 &&
    ! ls "$T"/elsewhere/aoe_* >/dev/null 2>&1
ok $? "--reload=dir (AOE's job path) resumes the run in dir"
fails_with 2 "name two directories" "--reload=dir and another --output" aoe --model "$ex" -j 2 --reload="$T/res" --output "$T/x"

rm -f "$T"/res/aoe_result_*
if [ -x "$top/tools/aoe-sgat" ]; then
	run aoe --model "$ex" --job_type 1 --output "$T/res" --progress_bar off
	f=$(ls "$T"/res/aoe_result_sgat_*_pid*.json 2>/dev/null)
	[ $status -eq 0 ] && [ -n "$f" ] && python3 "$schema" $f
	ok $? "aoe --job_type 1 writes an SGAT result file that follows the schema"
else
	tap_n=$((tap_n + 1))
	echo "ok $tap_n # skip aoe-sgat is not built"
fi

run aoe-verify --runs 3 --repeats 1 "$ex"
[ $status -eq 0 ] && grep -q '^model=.* without_bank_ms=[0-9.]* with_bank_ms=[0-9.]* improvement=-\{0,1\}[0-9.]*% without_spread_ms=[0-9.]* with_spread_ms=[0-9.]* repeats=1 beyond_noise=unknown$' "$T/out"
ok $? "aoe-verify prints latency without and with the bank"

# aoe.mk: a model whose captured graph did not change is not tuned again.
mkdir "$T/proj"
cp "$ex" "$T/proj/example.onnx"
cat > "$T/proj/Makefile" <<MK
include $top/share/aoe/aoe.mk
AOE_MODELS = example.onnx
AOE_TUNE_FLAGS = --no-check --budget-trials 2
tune: aoe-tune
MK
(cd "$T/proj" && PATH=$top/tools:$PATH make -s tune) >"$T/mk1" 2>&1
ok $? "aoe.mk tunes a model"
[ -f "$T/proj/aoe_work/example.tuned" ] && ls "$T"/proj/aoe_work/aoe_result_opat_*.json >/dev/null 2>&1
ok $? "and reports it"
n1=$(ls "$T"/proj/aoe_work/aoe_result_opat_*.json | wc -l)
(cd "$T/proj" && PATH=$top/tools:$PATH make -s tune) >"$T/mk2" 2>&1
n2=$(ls "$T"/proj/aoe_work/aoe_result_opat_*.json | wc -l)
[ "$n1" -eq "$n2" ] && ! grep -q 'changed, will tune' "$T/mk2"
ok $? "an unchanged model is not tuned again"
cp "$top/tests/fixtures/small.json" "$T/proj/small.json"
sed -i 's#"../../share/aoe/models/example.onnx"#"'"$ex"'"#' "$T/proj/small.json"
(cd "$T/proj" && PATH=$top/tools:$PATH aoe-capture -o example.onnx.tmp small.json >/dev/null 2>&1)
# A different model under the same name: its graph changes, so it is tuned.
mkexample -d "$T/proj/example.onnx"
(cd "$T/proj" && PATH=$top/tools:$PATH make -s tune AOE_SHAPE_example=image:2,3,64,64) >"$T/mk3" 2>&1
n3=$(ls "$T"/proj/aoe_work/aoe_result_opat_*.json | wc -l)
[ "$n3" -gt "$n2" ] && grep -q 'changed, will tune' "$T/mk3"
ok $? "a changed model is tuned again"
(cd "$T/proj" && PATH=$top/tools:$PATH make -s tune AOE_JOB_TYPE=1 AOE_DIR=sg AOE_SHAPE_example=image:2,3,64,64) >"$T/mk4" 2>&1 &&
    python3 "$schema" "$T"/proj/sg/aoe_result_sgat_*.json
ok $? "AOE_JOB_TYPE=1: aoe.mk tunes subgraphs, and the SGAT file follows the schema"

# Failure paths: a clear message naming the problem or the failed step.
run aoe --job_type 2
[ $status -eq 2 ] && grep -q -- '--model is required' "$T/err"
ok $? "no --model"
run aoe --model "$ex"
[ $status -eq 2 ] && grep -q -- '--job_type is required' "$T/err"
ok $? "no --job_type"
fails_with 2 "job_type 4 (gradient split tuning) is not supported" "job_type 4 is refused" aoe --model "$ex" --job_type 4
fails_with 2 "'7' is not 1 (subgraph) or 2 (operator)" "an unknown job_type" aoe --model "$ex" --job_type 7
fails_with 2 "framework '3' is not supported" "a framework other than ONNX" aoe --model "$ex" -j 2 --framework 3
fails_with 5 "cannot open '$T/none.onnx'" "a missing model" aoe --model "$T/none.onnx" -j 2
fails_with 3 "no interrupted run" "--reload with nothing to resume" aoe --model "$ex" -j 2 --reload --output "$T/fresh"
mkexample -d "$T/dyn.onnx"
run aoe --model "$T/dyn.onnx" -j 2 --output "$T/res" --progress_bar off
[ $status -eq 3 ] && grep -q "dynamic shape" "$T/err" && grep -q '^aoe: capture failed (exit 3)' "$T/err"
ok $? "a failing step stops the run and is named"
# --input_shape binds the dynamic model's input, AOE's way (name:dims).
echo '{"tune_ops_type": ["Softmax"]}' > "$T/sm.json"
run aoe --model "$T/dyn.onnx" -j 2 --output "$T/dres" --progress_bar off --input_shape image:2,3,64,64 --tune_ops_file "$T/sm.json"
[ $status -eq 0 ] && grep -q '"shape": *\[ *2, *3, *64, *64 *\]' "$T/dres/aoe_work/dyn_opat/graph.json" &&
    python3 "$schema" "$T"/dres/aoe_result_opat_*.json
ok $? "--input_shape binds a dynamic input"
run aoe --model "$ex" -j 2 --output "$T/pb" --progress_bar on --tune_ops_file "$T/sm.json"
[ $status -eq 0 ] && grep -q '\[1/1\] .*trials' "$T/err" && ! grep -q '\[1/1\]' "$T/out"
ok $? "--progress_bar on shows the tuner's progress on stderr, not stdout"
mkdir -p "$T/ini/wp"
printf 'WORK_PATH = %s\n' "$T/ini/wp" > "$T/ini/aoe.ini"
(cd "$T/ini" && aoe --model "$ex" -j 2 --progress_bar off --tune_ops_file "$T/sm.json" >/dev/null 2>&1) &&
    ls "$T"/ini/wp/aoe_result_opat_*.json >/dev/null 2>&1 && [ -d "$T/ini/wp/aoe_work/example_opat" ] &&
    ! ls -d "$T"/ini/aoe_* >/dev/null 2>&1
ok $? "without --output, aoe.ini's WORK_PATH holds the result file and the work directory"
# Each later step's failure, brought about for real, stops the run there.
run env TUNE_BANK_PATH="$T/nobank" aoe --model "$ex" -j 2 --output "$T/f1" --progress_bar off
[ $status -eq 1 ] && grep -q '^bank .*FAIL' "$T/out" && grep -q '^aoe: check failed (exit 1)' "$T/err" &&
    [ ! -e "$T/f1/aoe_work/example_opat/records.jsonl" ] && ! ls "$T"/f1/aoe_result_* >/dev/null 2>&1
ok $? "check fails (no bank directory): no tuning, no result file"
echo '{"tune_ops_type": ' > "$T/badops.json"
run aoe --model "$ex" -j 2 --output "$T/f2" --progress_bar off --tune_ops_file "$T/badops.json"
[ $status -eq 3 ] && grep -q '^aoe: tune failed (exit 3)' "$T/err" && ! ls "$T"/f2/aoe_result_* >/dev/null 2>&1
ok $? "tune fails (a malformed --tune_ops_file): no result file"
# A bank whose soc_version directory is a plain file: tuning reads no
# entry from it, the commit cannot lock it.
mkdir -p "$T/fbank"
: > "$T/fbank/$(python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["soc_version"])' < "$T/res/aoe_work/example_opat/records.jsonl")"
run env TUNE_BANK_PATH="$T/fbank" aoe --model "$ex" -j 2 --output "$T/f3" --progress_bar off
[ $status -eq 5 ] && grep -q 'cannot lock the bank' "$T/err" && grep -q '^aoe: commit failed (exit 5)' "$T/err" &&
    [ -s "$T/f3/aoe_work/example_opat/records.jsonl" ] && ! ls "$T"/f3/aoe_result_* >/dev/null 2>&1
ok $? "commit fails (the bank cannot be locked): records kept, no result file"
echo '{"tune_ops_name": ["no-such-op"]}' > "$T/noops.json"
run aoe --model "$ex" -j 2 --output "$T/f4" --progress_bar off --tune_ops_file "$T/noops.json"
[ $status -eq 3 ] && grep -q "^aoe: --tune_ops_file '$T/noops.json' selects no tunable operator" "$T/err" &&
    ! grep -q 'report failed' "$T/err"
ok $? "a --tune_ops_file that selects nothing is named as the cause"
echo '{"tune_ops_type": ["Conv"]}' > "$T/ops.json"
rm -f "$T"/res/aoe_result_*
run aoe --model "$ex" -j 2 --output "$T/res" --progress_bar off --tune_ops_file "$T/ops.json"
f=$(ls "$T"/res/aoe_result_opat_*.json 2>/dev/null)
[ $status -eq 0 ] && python3 "$schema" $f && python3 - $f <<'PY'
import json, sys
s = list(json.load(open(sys.argv[1])).values())[0][1]["OPAT"]["repo_summary"]
sys.exit(0 if s["total_num"] == 4 else 1)
PY
ok $? "--tune_ops_file restricts tuning to the Conv cases"
# Several models: each tuned, one result file each (AOE's tasks).
mkdir -p "$T/models" "$T/empty"
cp "$ex" "$T/models/a.onnx"
cp "$ex" "$T/models/b.onnx"
echo "not a model" > "$T/models/notes.txt"
run aoe --model_path "$T/models" -j 2 --output "$T/mp" --progress_bar off --tune_ops_file "$T/sm.json"
[ $status -eq 0 ] && [ "$(ls "$T"/mp/aoe_result_opat_*.json | wc -l)" -eq 2 ] &&
    [ -s "$T/mp/aoe_work/a_opat/records.jsonl" ] && [ -s "$T/mp/aoe_work/b_opat/records.jsonl" ] &&
    python3 "$schema" "$T"/mp/aoe_result_opat_*.json && python3 - "$T"/mp/aoe_result_opat_*.json <<'PY'
import json, sys
names = sorted(list(json.load(open(f)).values())[0][0]["basic"]["tuning_name"] for f in sys.argv[1:])
sys.exit(0 if names == ["a.onnx", "b.onnx"] else 1)
PY
ok $? "--model_path tunes every model in the directory, a result file each"
run aoe --model "$T/models/a.onnx" --model "$ex" -j 2 --output "$T/mm" --progress_bar off --tune_ops_file "$T/sm.json"
[ $status -eq 0 ] && [ "$(ls "$T"/mm/aoe_result_opat_*.json | wc -l)" -eq 2 ] &&
    [ -d "$T/mm/aoe_work/a_opat" ] && [ -d "$T/mm/aoe_work/example_opat" ]
ok $? "a second --model is tuned too, not instead"
cp "$T/dyn.onnx" "$T/models/c.onnx"
run aoe --model_path "$T/models" --model "$ex" -j 2 --output "$T/mf" --progress_bar off --tune_ops_file "$T/sm.json"
[ $status -eq 3 ] && grep -q "^aoe: $T/models/c.onnx: not tuned (exit 3)" "$T/err" &&
    [ "$(ls "$T"/mf/aoe_result_opat_*.json | wc -l)" -eq 3 ]
ok $? "a model that fails is named; the others are still tuned"
rm -f "$T/models/c.onnx"
fails_with 5 "no \*.onnx model in it" "an empty --model_path" aoe --model_path "$T/empty" -j 2
fails_with 5 "not a directory" "a --model_path that is no directory" aoe --model_path "$ex" -j 2
fails_with 2 "two models named 'a.onnx'" "two models of one name" aoe --model "$T/models/a.onnx" --model_path "$T/models" -j 2
fails_with 5 "cannot open '$T/none.onnx'" "a missing model among several, before any tuning" \
    aoe --model_path "$T/models" --model "$T/none.onnx" -j 2 --output "$T/never"
[ ! -d "$T/never/aoe_work" ]
ok $? "and nothing was tuned"

# The tools' spelling is taken too: --input-shape, --job-type.
run aoe --model "$T/dyn.onnx" --job-type 2 --output "$T/hy" --progress_bar off --input-shape image:2,3,64,64 --tune-ops-file "$T/sm.json"
[ $status -eq 0 ] && python3 "$schema" "$T"/hy/aoe_result_opat_*.json
ok $? "--input-shape (aoe-capture's hint) is --input_shape"

# --help describes every option of the usage, on stdout.
run aoe --help
[ $status -eq 0 ] && [ ! -s "$T/err" ] && python3 - "$T/out" "$top/pipelines/aoe" <<'PY'
import re, sys
help = open(sys.argv[1]).read()
src = open(sys.argv[2]).read()
usage = src[src.index("usage() {"):src.index("USAGE\n\texit")]
opts = set(re.findall(r"--[a-z_]+", usage))
assert len(opts) >= 12, opts
for o in opts:
    m = re.search(r"^\s+(-\w, )?%s\b.*\S\s{2,}\S" % re.escape(o), help, re.M)
    assert m, o
PY
ok $? "--help describes every option"
fails_with 2 "only operator tuning" "--sshloginfile with subgraph tuning" aoe --model "$ex" -j 1 --sshloginfile "$T/sm.json"
fails_with 5 "cannot open '$T/nohosts'" "a missing --sshloginfile" aoe --model "$ex" -j 2 --sshloginfile "$T/nohosts"
run aoe --model "$ex" --job_type 2 --bogus
[ $status -eq 2 ] && grep -q "unknown option '--bogus'" "$T/err"
ok $? "an unknown option"
done_testing
