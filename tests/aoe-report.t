#!/bin/sh
# aoe-report: result files in AOE's schema from tuning records, the summary
# table, plots, and every kind of bad input (which writes no result file).
. "$(dirname "$0")/tap.sh"
plan 22
schema=$top/tests/result-schema.py
cat > "$T/opat.jsonl" <<'R'
{"kind":"opat","key":"1024942313106047484","op_type":"Conv","names":["conv1","conv2"],"before_us":100.0,"after_us":73.88,"outcome":"add","tuning_time_s":12.5,"history":[[1,100],[2,90],[5,73.88]]}
{"kind":"opat","key":"22","op_type":"Gemm","names":["fc"],"before_us":50,"after_us":40,"outcome":"update","tuning_time_s":3}

{"kind":"opat","key":"23","op_type":"Relu","names":["r1"],"before_us":5,"after_us":5,"outcome":"reserved"}
{"kind":"opat","key":"24","op_type":"Add","names":["a1"],"before_us":5,"after_us":5.1,"outcome":"unsatisfied"}
R
cat > "$T/sgat.jsonl" <<'R'
{"kind":"sgat","repo_key":"77","names":["conv1","relu1"],"before_us":2000,"after_us":1500,"outcome":"add","tuning_time_s":20}
{"kind":"sgat","repo_key":"78","names":["conv2"],"before_us":1000,"after_us":1000,"outcome":"unsatisfied"}
{"kind":"model","baseline_us":10000,"result_us":8000}
R
mkdir "$T/w1" "$T/w2" "$T/w3" "$T/w4"

run aoe-report -o "$T/w1" "$T/opat.jsonl"
ok $status "writes an operator report"
f=$(ls "$T"/w1/aoe_result_opat_*_pid*.json 2>/dev/null)
[ -n "$f" ] && python3 "$schema" $f
ok $? "the OPAT result file follows the schema and its invariants"
python3 - "$f" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); task = list(d.values())[0]
o = task[1]["OPAT"]; s = o["repo_summary"]
sys.exit(0 if (s["repo_add_num"], s["repo_update_num"], s["repo_reserved_num"],
    s["repo_unsatisfied_num"], s["repo_hit_num"], s["total_num"]) == (1, 1, 1, 1, 2, 4)
    and o["opat_tune_result"] == "tune success"
    and o["repo_modified_operators"]["add_repo_operators"][0]["performance_improvement"] == "26.12%"
    and task[0]["basic"]["tuning_time(s)"] == 15.5 else 1)
PY
ok $? "counts, improvement strings and tuning time are right"
grep -q '^conv1 *Conv *100.0 *73.9 *26.12% *add$' "$T/out"
ok $? "prints the summary table"
grep -q "wrote $T/w1/aoe_result_opat_" "$T/err"
ok $? "names the file written on stderr"

echo '{"kind":"opat","key":"25","op_type":"Conv","names":["bad"],"outcome":"failed"}' >> "$T/opat.jsonl"
AOE_WORK_PATH=$T/w2 run aoe-report -q < "$T/opat.jsonl"
f=$(ls "$T"/w2/aoe_result_opat_*.json 2>/dev/null)
[ $status -eq 0 ] && [ ! -s "$T/out" ] && [ -n "$f" ] && python3 "$schema" $f &&
    grep -q '"tune failed"' $f && grep -q '"tune_failed_operators":.*"bad"' $f
ok $? "a failed case: tune failed, listed, from stdin into AOE_WORK_PATH"

run aoe-report -q -o "$T/w3" "$T/sgat.jsonl"
f=$(ls "$T"/w3/aoe_result_sgat_*.json 2>/dev/null)
[ $status -eq 0 ] && [ -n "$f" ] && python3 "$schema" $f &&
    grep -q '"model_performance_improvement":.*"20.00%"' $f
ok $? "writes a subgraph report with the model's improvement"

run aoe-report -q -o "$T/w4" --plot "$T/p.svg" "$T/opat.jsonl"
[ $status -eq 0 ] && grep -q '<svg' "$T/p.svg" && grep -q 'best time found so far' "$T/p.svg"
ok $? "--plot draws an SVG with bars and the best-so-far curve"
ls "$T"/w4/aoe_result_opat_*.json >/dev/null 2>&1
ok $? "and still writes the result file"

run aoe-report --help
[ $status -eq 0 ] && grep -q '^usage: aoe-report' "$T/out"
ok $? "--help"
run aoe-report --version
[ $status -eq 0 ] && grep -q '^aoe-report ' "$T/out"
ok $? "--version"

# Bad input: a clear message, a non-zero status, no result file.
mkdir "$T/bad"
printf '{"kind":"opat","key":"1","op_type":"Relu","before_us":1,"after_us":1,"outcome":"add"}\n{"kind":\n' > "$T/trunc.jsonl"
run aoe-report -q -o "$T/bad" "$T/trunc.jsonl"
[ $status -eq 3 ] && grep -q "trunc.jsonl:2: malformed JSON" "$T/err" &&
    grep -q "1 bad record; no result file written" "$T/err"
ok $? "a truncated line is named, and nothing is written"
ls "$T"/bad/aoe_result_* >/dev/null 2>&1
ok $((! $?)) "no result file from bad input"
echo '{"kind":"opat","key":"1","op_type":"Relu","before_us":1,"after_us":1,"outcome":"great"}' > "$T/o.jsonl"
run aoe-report -q -o "$T/bad" "$T/o.jsonl"
[ $status -eq 3 ] && grep -q 'o.jsonl:1: bad record: "outcome" must be' "$T/err"
ok $? "an unknown outcome"
echo '{"kind":"opat","key":"1","op_type":"Relu","before_us":-4,"after_us":1,"outcome":"add"}' > "$T/n.jsonl"
run aoe-report -q -o "$T/bad" "$T/n.jsonl"
[ $status -eq 3 ] && grep -q 'must be non-negative numbers' "$T/err"
ok $? "a negative time"
echo '{"op_type":"Relu","before_us":1,"after_us":1,"outcome":"add"}' > "$T/k.jsonl"
run aoe-report -q -o "$T/bad" "$T/k.jsonl"
[ $status -eq 3 ] && grep -q 'no "key"' "$T/err"
ok $? "a record without a key"
: > "$T/empty.jsonl"
fails_with 3 "no tuning records" "no records" aoe-report -q -o "$T/bad" "$T/empty.jsonl"
run aoe-report -q -o "$T/bad" "$T/nope.jsonl" "$T/opat.jsonl"
[ $status -eq 5 ] && grep -q "cannot open '$T/nope.jsonl'" "$T/err"
ok $? "a missing file is named, the others still read, status 5"
ls "$T"/bad/aoe_result_* >/dev/null 2>&1
ok $((! $?)) "still no result file"
fails_with 5 "work directory '$T/none'" "a missing work directory" aoe-report -q -o "$T/none" "$T/opat.jsonl"
fails_with 4 "must end in .svg or .png" "an unknown plot type" aoe-report -q -o "$T/bad" --plot "$T/p.gif" "$T/opat.jsonl"
ls "$T"/bad/aoe_result_* >/dev/null 2>&1
ok $((! $?)) "a refused plot writes no result file either"
done_testing
