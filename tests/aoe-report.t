#!/bin/sh
# aoe-report: result files in AOE's schema from tuning records, the summary
# table, plots, and every kind of bad input (which writes no result file).
. "$(dirname "$0")/tap.sh"
plan 34
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
[ $status -eq 0 ] && python3 - "$T/p.svg" <<'PY'
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
text = " ".join(t.strip() for t in r.itertext())
sys.exit(0 if r.tag == "{http://www.w3.org/2000/svg}svg" and
    all(w in text for w in ("time saved per case", "best time found so far",
    "conv1", "fc", "trial")) else 1)
PY
ok $? "--plot draws a well-formed SVG with bars and the best-so-far curve"
ls "$T"/w4/aoe_result_opat_*.json >/dev/null 2>&1
ok $? "and still writes the result file"
run aoe-report -q -o "$T/w4" --plot "$T/p.png" "$T/opat.jsonl"
[ $status -eq 0 ] && python3 - "$T/p.png" <<'PY'
import struct, sys, zlib
b = open(sys.argv[1], "rb").read()
# The signature, an IHDR 1100 wide, and every chunk's CRC right.
ok = b[:8] == b"\x89PNG\r\n\x1a\n" and b[12:16] == b"IHDR" and \
    struct.unpack(">II", b[16:24])[0] == 1100
i, kinds = 8, []
while ok and i < len(b):
    n, = struct.unpack(">I", b[i:i + 4])
    kind, data = b[i + 4:i + 8], b[i + 8:i + 8 + n]
    ok = struct.unpack(">I", b[i + 8 + n:i + 12 + n])[0] == zlib.crc32(kind + data)
    kinds.append(kind)
    i += 12 + n
sys.exit(0 if ok and b"IDAT" in kinds and kinds[-1] == b"IEND" else 1)
PY
ok $? "--plot draws a valid PNG"

# At any size: 200 cases, the top N labelled in order of time saved, the
# rest summed in words, at most ten curves, no colour drawn twice.
python3 "$top/bench/synth-records.py" 200 > "$T/s200.jsonl"
cat >"$T/plotcheck.py" <<'PY'
import json, re, sys, xml.etree.ElementTree as ET
svg, recs, top = sys.argv[1], sys.argv[2], int(sys.argv[3])
r = ET.parse(svg).getroot()
texts = [("".join(t.itertext())).strip() for t in r.iter("{http://www.w3.org/2000/svg}text")]
rs = [json.loads(l) for l in open(recs)]
def saved(x):
    if x["outcome"] not in ("add", "update"):
        return 0
    return (x["before_us"] - x["after_us"]) * len(x["names"])
rs.sort(key=lambda x: (-saved(x), -x["before_us"]))
names = [x["names"][0] for x in rs]
def bare(t):
    return re.sub(r"( x\d+)?( \(kept\))?$", "", t)
labels = set(bare(t) for t in texts)
def shown(n):
    return any(l.endswith(n[-12:]) for l in labels)
labelled = [n for n in names if shown(n)]
want = names[:top]
assert set(want) <= set(labelled), "top cases not all labelled"
assert set(labelled) == set(want), ("labelled beyond the top", len(labelled))
n = len(rs)
if n > top:
    assert any("(the other %d cases)" % (n - top) in t for t in texts), "no summary"
    assert any("saved in all" in t for t in texts)
# Curves: the stroke colours drawn, each once, one a curve, at most ten.
strokes = [e.get("stroke") for e in r.iter() if (e.get("stroke") or "").startswith("rgb(")]
curves = min(10, top, sum(1 for x in rs if x.get("history")))
assert len(strokes) == len(set(strokes)) == curves, (strokes, curves)
print("# labelled %d of %d, %d curves in %d colours" % (len(labelled), n, curves, len(set(strokes))))
PY
run aoe-report -q -o "$T/w4" --plot "$T/s200.svg" "$T/s200.jsonl"
[ $status -eq 0 ] && python3 "$T/plotcheck.py" "$T/s200.svg" "$T/s200.jsonl" 20
ok $? "200 cases: the 20 that saved most labelled, the other 180 summed"
run aoe-report -q -o "$T/w4" --plot-top 5 --plot "$T/s5.svg" "$T/s200.jsonl"
[ $status -eq 0 ] && python3 "$T/plotcheck.py" "$T/s5.svg" "$T/s200.jsonl" 5
ok $? "--plot-top 5 labels five"
run aoe-report -q -o "$T/w4" --plot "$T/s.png" "$T/s200.jsonl"
[ $status -eq 0 ] && python3 - "$T/s.png" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
w, h = struct.unpack(">II", b[16:24])
# The bars' panel grows with the bars shown (21), not with the cases.
sys.exit(0 if w == 1100 and 800 < h < 1100 else 1)
PY
ok $? "the PNG of 200 cases is sized for the 21 rows it draws"
python3 "$top/bench/synth-records.py" 1 > "$T/s1.jsonl"
run aoe-report -q -o "$T/w4" --plot "$T/s1.svg" "$T/s1.jsonl"
[ $status -eq 0 ] && python3 "$T/plotcheck.py" "$T/s1.svg" "$T/s1.jsonl" 20
ok $? "one case draws, labelled, with no summary"
fails_with 2 "plot-top" "--plot-top 0 is refused" aoe-report -q -o "$T/w4" \
    --plot-top 0 --plot "$T/z.svg" "$T/s1.jsonl"
fails_with 2 "plot-top" "--plot-top 501 is refused" aoe-report -q -o "$T/w4" \
    --plot-top 501 --plot "$T/z.svg" "$T/s1.jsonl"
echo '{"kind":"opat","key":"9","op_type":"Conv","names":["layer1_conv\"x"],"before_us":9,"after_us":8,"outcome":"add","trials":7,"history":[[1,9],[3,8]]}' > "$T/q.jsonl"
run aoe-report -q -o "$T/w4" --plot "$T/it's.svg" "$T/q.jsonl"
[ $status -eq 0 ] && python3 - "$T/it's.svg" <<'PY'
import sys, xml.etree.ElementTree as ET
text = " ".join(ET.parse(sys.argv[1]).getroot().itertext())
sys.exit(0 if "layer1_conv_x" in text else 1)
PY
ok $? "--plot: names are drawn as written (no enhanced-text subscripts), any file name"

# One report entry per tuning task: each record file is one.
mkdir "$T/w5"
run aoe-report -q -o "$T/w5" "$T/opat.jsonl" "$T/sgat.jsonl" - < "$T/opat.jsonl"
fo=$(ls "$T"/w5/aoe_result_opat_*.json 2>/dev/null)
fs=$(ls "$T"/w5/aoe_result_sgat_*.json 2>/dev/null)
[ $status -eq 0 ] && python3 "$schema" $fo $fs && python3 - $fo $fs <<'PY'
import json, sys
o, s = (json.load(open(f)) for f in sys.argv[1:3])
names = [t[0]["basic"]["tuning_name"] for t in o.values()]
sums = [t[1]["OPAT"]["repo_summary"]["total_num"] for t in o.values()]
sys.exit(0 if names == ["opat", "aoe"] and sums == [5, 5] and len(s) == 1
    and list(s.values())[0][0]["basic"]["tuning_name"] == "sgat" else 1)
PY
ok $? "two operator tasks are two report entries, named after their files"

run aoe-report --help
[ $status -eq 0 ] && grep -q '^usage: aoe-report' "$T/out"
ok $? "--help"
run aoe-report --version
[ $status -eq 0 ] && grep -q '^aoe-report ' "$T/out"
ok $? "--version"

# WORK_PATH of ./aoe.ini (or $AOE_INI) when there is no -o; AOE_WORK_PATH
# before it.
mkdir -p "$T/ini/wp" "$T/ini/env"
printf '[aoe]\nWORK_PATH = %s\n' "$T/ini/wp" > "$T/ini/aoe.ini"
(cd "$T/ini" && aoe-report -q "$T/opat.jsonl" 2>/dev/null) && ls "$T"/ini/wp/aoe_result_opat_*.json >/dev/null 2>&1 &&
    ! ls "$T"/ini/aoe_result_* >/dev/null 2>&1
ok $? "result files go to aoe.ini's WORK_PATH"
(cd "$T/ini" && AOE_WORK_PATH=$T/ini/env aoe-report -q "$T/opat.jsonl" 2>/dev/null) &&
    ls "$T"/ini/env/aoe_result_opat_*.json >/dev/null 2>&1
ok $? "AOE_WORK_PATH comes before aoe.ini"

# Bad input: a clear message, a non-zero status, no result file.
mkdir "$T/bad"
printf '{"kind":"opat","key":"1","op_type":"Relu","before_us":1,"after_us":0.5,"outcome":"add"}\n{"kind":\n' > "$T/trunc.jsonl"
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
echo '{"kind":"opat","key":"1","op_type":"Relu","before_us":1,"after_us":1,"outcome":"update"}' > "$T/u.jsonl"
run aoe-report -q -o "$T/bad" "$T/u.jsonl"
[ $status -eq 3 ] && grep -q 'outcome update, but "after_us" is not below "before_us"' "$T/err"
ok $? "an update that is not faster"
echo '{"op_type":"Relu","before_us":1,"after_us":0.5,"outcome":"add"}' > "$T/k.jsonl"
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
