#!/bin/sh
# Schedules are checked wherever they enter (issue 19 items 1, 7, 8, 11):
# commit, merge, import and verify rebuild each entry's search space from
# its signature; the sampler is uniform; fused-away nodes are not tuned;
# bad names and faults are refused.
. "$(dirname "$0")/tap.sh"
plan 18
cd "$top" || exit 1
ex=$top/share/aoe/models/example.onnx
export AOE_SOC_VERSION=socA
export TUNE_BANK_PATH=$T/tb
unset AOE_BUILTIN_BANK REPEAT_TUNE AOE_INJECT_FAULT
mkdir -p "$TUNE_BANK_PATH"
bank=$TUNE_BANK_PATH/socA/ops.jsonl
PY=/usr/bin/python3

# The example's cases, with their real signatures.
aoe-bank lookup --jsonl --threads 1 "$ex" > "$T/look" 2>/dev/null
# rec OPTYPE SCHEDULE [OUTCOME]: a tuning record for the first such case.
rec() {
	$PY - "$T/look" "$@" <<'PYEOF'
import json, sys
look = [json.loads(l) for l in open(sys.argv[1])]
l = [x for x in look if x["op_type"] == sys.argv[2]][0]
print(json.dumps({"key": l["key"], "op_type": l["op_type"], "names": [l["node"]],
    "before_us": 10, "after_us": 5, "schedule": json.loads(sys.argv[3]),
    "outcome": sys.argv[4] if len(sys.argv) > 4 else "add",
    "signature": l["signature"], "soc_version": "socA"}))
PYEOF
}

# --- item 1: commit refuses schedules outside their space ------------------
rec Conv '{"nthreads":1}' > "$T/good"
run aoe-bank commit "$T/good"
[ $status -eq 0 ] && [ "$(wc -l < "$bank")" -eq 1 ]
ok $? "commit admits a schedule in its space"
cp "$bank" "$T/before"
bad=0
for s in '{"algo":99}|algo=99' '{"algo":2,"mr":7,"nr":13}|mr=7' \
    '{"algo":2,"mc":-5}|mc=-5' '{"bogus_knob":5}|bogus_knob' \
    '{"mr":1000,"nr":99999,"mc":-5,"kc":0}|mr=1000' \
    '{"algo":2,"mr":4,"nr":16}|micro-kernel 4x16'; do
	sched=${s%%|*} knob=${s#*|}
	rec Conv "$sched" > "$T/bad"
	key=$(sed 's/.*"key": "\([0-9]*\)".*/\1/' "$T/bad")
	run aoe-bank commit "$T/bad"
	if [ $status -ne 3 ] || [ "$(wc -l < "$T/err")" -ne 1 ] ||
	    ! grep -q "bad:1: key $key (Conv): illegal schedule: .*$knob" "$T/err" ||
	    ! cmp -s "$bank" "$T/before"; then
		bad=1
		echo "# $sched: status $status: $(cat "$T/err")"
	fi
done
ok $bad "commit refuses each of the issue's schedules, naming key, op and knob; bank byte-for-byte unchanged"
rec Gemm '{"mr":4,"nr":16}' > "$T/bad"
fails_with 3 "(Gemm): illegal schedule: mr=4" "commit refuses a GEMM tile this ISA has no kernel for" \
    aoe-bank commit "$T/bad"
cmp -s "$bank" "$T/before"; ok $? "... the bank is unchanged"

# --- item 1: verify, merge and import ---------------------------------------
sed 's/"schedule":{[^}]*}/"schedule":{"algo":99}/' "$bank" > "$T/ill.jsonl"
run aoe-bank verify "$T/ill.jsonl"
[ $status -eq 3 ] && tail -1 "$T/err" | grep -q "ill.jsonl: 1 bad lines" && [ ! -s "$T/out" ]
ok $? "verify fails on a schedule outside its space"
grep -q "ill.jsonl:1: key [0-9]* (Conv): illegal schedule: algo=99 is not a legal value" "$T/err"
ok $? "... naming the line, key, op and knob"
run aoe-bank merge "$T/ill.jsonl"
[ $status -eq 3 ] && grep -q "illegal schedule: algo=99" "$T/err" && cmp -s "$bank" "$T/before"
ok $? "merge refuses it, the bank byte-for-byte unchanged"
run aoe-bank merge -o "$T/merged" "$T/ill.jsonl"
[ $status -eq 3 ] && [ ! -e "$T/merged" ]
ok $? "merge -o refuses it and writes nothing"
# (aoe-bank export refuses such a bank: the archive is made by hand,
# from a legal one's manifest.)
aoe-bank -q -b "$(dirname "$bank")" export -o "$T/good.tar.gz"
/usr/bin/python3 - "$T/good.tar.gz" "$T/ill.jsonl" "$T/ill.tar.gz" <<'PY'
import hashlib, io, json, sys, tarfile
man = json.load(tarfile.open(sys.argv[1]).extractfile("manifest.json"))
ill = open(sys.argv[2], "rb").read()
man["files"] = [f for f in man["files"] if f["name"] == "ops.jsonl"]
man["kinds"] = ["operator"]
man["files"][0].update(size=len(ill), sha256=hashlib.sha256(ill).hexdigest(), entries=ill.count(b"\n"))
with tarfile.open(sys.argv[3], "w:gz", format=tarfile.PAX_FORMAT) as t:
    for name, data in (("manifest.json", json.dumps(man).encode()), ("ops.jsonl", ill)):
        i = tarfile.TarInfo(name); i.size = len(data); i.mode = 0o644
        t.addfile(i, io.BytesIO(data))
PY
run aoe-bank import "$T/ill.tar.gz"
[ $status -eq 3 ] && [ "$(wc -l < "$T/err")" -eq 1 ] &&
    grep -q "ill.tar.gz:ops.jsonl:1: key [0-9]* (Conv): illegal schedule: algo=99" "$T/err" &&
    cmp -s "$bank" "$T/before"
ok $? "import refuses it, the bank byte-for-byte unchanged"

# --- item 11: a re-tuned illegal entry ---------------------------------------
# The bank's entry never applied (outside its space), so the tuner saw no
# entry and recorded add: the commit replaces it and says added.
cp "$T/ill.jsonl" "$bank"
rec Conv '{"nthreads":1}' > "$T/good2"
run aoe-bank commit "$T/good2"
[ $status -eq 0 ] && grep -q ': 1 added, 0 updated' "$T/err" && grep -q 'illegal schedule.*replaced' "$T/err" &&
    grep -q '"schedule":{"nthreads":1}' "$bank" && aoe-bank -q verify
ok $? "an illegal entry re-tuned as add is committed as 1 added, the new entry replacing it"

# --- item 7: the sampler is uniform over the legal space ----------------------
# (tests/unit-space.c tests uniformity with a chi-square; here the issue's
# symptom: the default came back 113 times in 200.)
run aoe-space --sample 200 --node b2.pw "$ex"
def=$(aoe-space --json --node b2.pw "$ex" | $PY -c '
import json, sys
d = json.load(sys.stdin)["default"]
print(",".join("%s=%d" % kv for kv in d.items()))')
ndef=$(grep -c -F "	$def" "$T/out")
ndist=$(sort -u "$T/out" | wc -l)
[ $status -eq 0 ] && [ "$(wc -l < "$T/out")" -eq 200 ] && [ "$ndef" -le 5 ] && [ "$ndist" -ge 180 ]
ok $? "aoe-space --sample 200: the default $ndef times, $ndist distinct schedules"

# --- item 11: bad names and faults are refused --------------------------------
sed 's/"soc_version":"socA"/"soc_version":"socB"/' "$T/before" > "$T/socb.jsonl"
run aoe-bank verify "$T/socb.jsonl"
[ $status -eq 3 ] && grep -q "soc_version 'socB' is not the bank's 'socA'" "$T/err"
ok $? "verify refuses another soc_version's bank named as an operand, without --soc-version"
run aoe-bank --soc-version socB verify "$T/socb.jsonl"
ok $status "... and accepts it with --soc-version socB"
fails_with 2 "soc-version 'bad/name': not a safe name" "--soc-version 'bad/name' is refused" \
    aoe-bank --soc-version 'bad/name' list
fails_with 3 "AOE_INJECT_FAULT 'bogus': expected crash, hang, wrong, nan or abort" \
    "aoe-opat refuses AOE_INJECT_FAULT=bogus" env AOE_INJECT_FAULT=bogus aoe-opat "$ex"
fails_with 3 "AOE_INJECT_FAULT 'bogus'" "aoe-sgat refuses AOE_INJECT_FAULT=bogus" \
    env AOE_INJECT_FAULT=bogus aoe-sgat "$ex"

# --- item 8: nodes that fusion removes at run time are not tuned --------------
run aoe-opat --list "$ex"
[ $status -eq 0 ] && grep -q '"names":\["stem.conv"\]' "$T/out" && grep -q '"names":\["b2.dw"\]' "$T/out" &&
    ! grep -q '"op_type":"\(Relu\|Sigmoid\|BatchNormalization\)"' "$T/out"
ok $? "aoe-opat lists the Convs but not the Relu, Sigmoid and BatchNormalization fused into them"
aoe-capture "$ex" > "$T/g.json" 2>/dev/null
run aoe-opat --list "$T/g.json"
[ $status -eq 0 ] && [ "$(grep -c . "$T/out")" -eq 8 ] && ! grep -q '"op_type":"\(Sigmoid\|MaxPool\)"' "$T/out"
ok $? "... likewise from a captured aoe-graph (8 cases: the MaxPool fused into the stem)"
