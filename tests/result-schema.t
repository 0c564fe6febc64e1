#!/bin/sh
# tests/result-schema.py, the validator the front-end tests rely on,
# accepts aoe-report's files and rejects each way a file can break
# aoe-result(5): a missing, extra or mistyped field at every level, a
# broken invariant, an improvement string that disagrees with its times.
. "$(dirname "$0")/tap.sh"
schema=$top/tests/result-schema.py
cat > "$T/opat.jsonl" <<'R'
{"kind":"opat","key":"1","op_type":"Conv","names":["conv1","conv2"],"before_us":100,"after_us":73.88,"outcome":"add","tuning_time_s":2}
{"kind":"opat","key":"2","op_type":"Gemm","names":["fc"],"before_us":50,"after_us":40,"outcome":"update"}
{"kind":"opat","key":"3","op_type":"Relu","names":["r1"],"before_us":5,"after_us":5,"outcome":"reserved"}
{"kind":"opat","key":"4","op_type":"Conv","names":["bad"],"outcome":"failed"}
R
cat > "$T/sgat.jsonl" <<'R'
{"kind":"sgat","repo_key":"77","names":["conv1","relu1"],"before_us":2000,"after_us":1500,"outcome":"add","tuning_time_s":20}
{"kind":"sgat","repo_key":"78","names":["conv2"],"before_us":1000,"after_us":1000,"outcome":"reserved"}
{"kind":"model","baseline_us":10000,"result_us":8000}
R
aoe-report -q -o "$T" "$T/opat.jsonl" 2>/dev/null
aoe-report -q -o "$T" "$T/sgat.jsonl" 2>/dev/null
op=$(ls "$T"/aoe_result_opat_*.json) sg=$(ls "$T"/aoe_result_sgat_*.json)

# One python for every mutation.  Each is a statement on d (the task's
# [basic, JOB] array), b (basic), o (the OPAT or SGAT object), s (its
# repo_summary), e (the first added entry), u (the first updated one, or
# e), with (X) the unit and REPO the array suffix of the job; applied to a
# copy of the file under a valid name, it prints "0 description" when the
# validator rejects the copy, "1 description" when it accepts it.
python3 - "$schema" "$T/mut" "$op" "$sg" > "$T/results" <<'PY'
import importlib.util, json, os, sys
spec = importlib.util.spec_from_file_location("rs", sys.argv[1])
rs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rs)
out, files = sys.argv[2], {"OPAT": sys.argv[3], "SGAT": sys.argv[4]}
os.makedirs(out, exist_ok=True)
both = [
    'b["tuning_time(s)"] = "1"', 'b["tuning_time(s)"] = -1',
    'del b["tuning_name"]', 'b["tuning_name"] = 3', 'b["extra"] = 1',
    'd.append({})', 'd[0]["x"] = 1', 'd[1] = {"OPAT": o, "SGAT": o}',
    's["total_num"] += 1', 's["repo_hit_num"] += 1; s["total_num"] += 1',
    's["repo_add_num"] = 1.5', 's["repo_unsatisfied_num"] = True',
    'del s["repo_update_num"]', 's["repo_x_num"] = 0',
    'e["performance_improvement"] = "26.1%"',
    'e["performance_improvement"] = "30.00%"',
    'e["performance_improvement"] = 26.12',
    'e["performance_after_tune(X)"] = e["performance_before_tune(X)"] + 1; '
    'e["performance_improvement"] = "%.2f%%" % ((e["performance_before_tune(X)"]'
    ' - e["performance_after_tune(X)"]) / e["performance_before_tune(X)"] * 100)',
    'e["performance_before_tune(X)"] = -1', 'e["performance_after_tune(X)"] = "3"',
    'del e["performance_improvement"]', 'e["extra"] = 1',
    'u["performance_before_tune(X)"] = None', 'o["extra"] = 1',
    'del o["repo_summary"]', 'o[MOD]["add_REPO"].append(dict(e))',
    'o[MOD]["add_REPO"] = {}', 'del o[MOD]["update_REPO"]',
    'o[MOD]["extra"] = []', 'o[MOD]["add_REPO"][0] = 5',
]
cases = [(j, m) for m in both for j in ("OPAT", "SGAT")] + [
    ("OPAT", 'o["opat_tune_result"] = "tune success"'),
    ("OPAT", 'o["opat_tune_result"] = "ok"'),
    ("OPAT", 'del o["tune_failed_operators"]'),
    ("OPAT", 'o["tune_failed_operators"] = []'),
    ("OPAT", 'o["tune_failed_operators"] = ["a", "b"]'),
    ("OPAT", 'e["op_type"] = ""'), ("OPAT", 'del e["op_name"]'),
    ("OPAT", 'e["op_names"] = ["other"]'),
    ("SGAT", 'e["repo_key"] = "ab"'), ("SGAT", 'e["repo_key"] = 77'),
    ("SGAT", 'o["model_performance_improvement"] = "21.00%"'),
    ("SGAT", 'del o["model_result_performance(ms)"]'),
    ("SGAT", 'o["tune_failed_subgraphs"] = "x"'),
]
for job, stmt in cases:
    doc = json.load(open(files[job]))
    d = list(doc.values())[0]
    b, o = d[0]["basic"], d[1][job]
    s = o["repo_summary"]
    if job == "OPAT":
        MOD, X, REPO = "repo_modified_operators", "us", "repo_operators"
    else:
        MOD, X, REPO = "repo_modified_subgraphs", "ms", "repo_subgraphs"
    e = o[MOD]["add_" + REPO][0]
    u = o[MOD]["update_" + REPO][0] if o[MOD]["update_" + REPO] else e
    exec(stmt.replace("(X)", "(" + X + ")").replace("REPO", REPO))
    p = os.path.join(out, os.path.basename(files[job]))
    json.dump(doc, open(p, "w"))
    print(0 if rs.check(p) else 1, job + ": rejects " + stmt)
PY
plan $((3 + $(wc -l < "$T/results")))

python3 "$schema" "$op"
ok $? "accepts aoe-report's OPAT file"
python3 "$schema" "$sg"
ok $? "accepts aoe-report's SGAT file"
while read -r st desc; do
	ok "$st" "$desc"
done < "$T/results"
cp "$op" "$T/aoe_result_opat_20261399000000000_pid1.json"
! python3 "$schema" "$T/aoe_result_opat_20261399000000000_pid1.json" >/dev/null
ok $? "rejects a file name whose timestamp is no date"
done_testing
