#!/bin/sh
# aoe-opat: the driver on the example (real measurement in children),
# grouping, records and the bank, injected faults, kill -9 and resume,
# replay, the stages, and measuring on two "hosts" through GNU parallel.
. "$(dirname "$0")/tap.sh"
plan 43
ex=$top/share/aoe/models/example.onnx
dup=$top/tests/fixtures/opat-dup.json
cd "$top" || exit 1
export TUNE_BANK_PATH="$T/bank"
mkdir -p "$T/bank"
unset REPEAT_TUNE AOE_INJECT_FAULT AOE_OPAT_KILL_AT
# Short measurements: the tests check behaviour, never speed.
export RUN_LOOP=3
O="--no-check --no-progress --threads 2 --timeout 10"

# Records: one per case, valid fields, and the bank holds the wins.
cat >"$T/check.py" <<'PY'
import json, sys
ok = {"add", "update", "reserved", "unsatisfied", "failed"}
recs = [r for r in map(json.loads, open(sys.argv[1])) if r["kind"] != "model"]
n = int(sys.argv[2])
assert len(recs) == n, (len(recs), n)
for r in recs:
    assert r["kind"] == "opat" and r["outcome"] in ok and r["names"], r
    assert str(int(r["key"])) == r["key"] and r["signature"].startswith("op=")
    if r["outcome"] != "failed":
        assert r["before_us"] > 0 and r["after_us"] > 0 and isinstance(r["schedule"], dict)
PY
run aoe-opat $O --budget-trials 4 --commit -o "$T/r1.jsonl" "$ex"
ok $status "tunes the example with real measurements"
ncases=$(aoe-opat --list "$ex" | wc -l)
python3 "$T/check.py" "$T/r1.jsonl" "$ncases"
ok $? "one valid tuning record per case ($ncases cases)"
python3 - "$T/r1.jsonl" $(ls "$T"/bank/*/ops.jsonl 2>/dev/null) <<'PY'
import json, sys
wins = {r["key"] for r in (r for r in map(json.loads, open(sys.argv[1])) if r["kind"] != "model") if r["outcome"] in ("add", "update")}
bank = {json.loads(l)["key"] for l in open(sys.argv[2])} if len(sys.argv) > 2 else set()
sys.exit(0 if wins == bank else 1)
PY
ok $? "--commit writes exactly the add and update cases to the bank"
(cd "$T" && aoe-report "$T/r1.jsonl" >/dev/null 2>&1)
ok $? "aoe-report reads the records"
# Winners are confirmed in the model as aoe-run runs it; an op fusion
# folds into a Conv (the example's Relu) is not tuned at all.
python3 - "$T/r1.jsonl" <<'PY'
import json, sys
# (Which cases get as far as confirmation depends on the machine's load:
# every confirmation there is must be of the right kind.)
rs = list((r for r in map(json.loads, open(sys.argv[1])) if r["kind"] != "model"))
fused = ("Relu", "Sigmoid", "BatchNormalization")
ok = all(r["op_type"] not in fused and r.get("confirmed", "model") == "model" for r in rs)
sys.exit(0 if ok else 1)
PY
ok $? "winners are confirmed in the model; fused-away ops are not tuned"
run aoe-opat $O --no-bank --alone --budget-trials 4 "$ex"
python3 -c "
import json, sys
sys.exit(0 if all(r.get('confirmed', 'alone') == 'alone' for r in (r for r in map(json.loads, open('$T/out')) if r['kind'] != 'model')) else 1)"
ok $? "--alone confirms winners alone"

run aoe-opat $O --budget-trials 4 "$ex"
python3 - "$T/r1.jsonl" "$T/out" <<'PY'
import json, sys
a = {r["key"]: r["outcome"] for r in (r for r in map(json.loads, open(sys.argv[1])) if r["kind"] != "model")}
b = {r["key"]: r for r in (r for r in map(json.loads, open(sys.argv[2])) if r["kind"] != "model")}
sys.exit(0 if all((b[k]["outcome"] == "reserved" and b[k]["trials"] == 0) ==
    (o in ("add", "update")) for k, o in a.items()) else 1)
PY
ok $? "a second run keeps bank hits untouched (reserved, no trials)"
REPEAT_TUNE=True run aoe-opat $O --budget-trials 4 "$ex"
python3 -c "
import json, sys
sys.exit(0 if all(r['trials'] > 0 for r in (r for r in map(json.loads, open('$T/out')) if r['kind'] != 'model')) else 1)"
ok $? "REPEAT_TUNE=True tunes the hits again"

AOE_FUSE=off run aoe-opat --list "$dup"
[ $(wc -l <"$T/out") -eq 2 ] && grep -q '"names":\["relu1","relu2","relu3"\]' "$T/out"
ok $? "ops with one signature are one case covering all their names"
echo '{"tune_ops_name":["sig"],"tune_ops_type":["Relu"]}' >"$T/ops.json"
AOE_FUSE=off run aoe-opat --list --tune-ops-file "$T/ops.json" "$dup"
[ $(wc -l <"$T/out") -eq 2 ]
ok $? "--tune-ops-file selects by name and type (union)"
echo '{"tune_ops_name":["sig"]}' >"$T/ops1.json"
AOE_FUSE=off run aoe-opat --list --tune-ops-file "$T/ops1.json" "$dup"
[ $(wc -l <"$T/out") -eq 1 ] && grep -q '"Sigmoid"' "$T/out"
ok $? "--tune-ops-file with names only"

# Injected faults: caught, the op fails, the run completes, no bank entry.
echo '{"tune_ops_name":["b2.pw","head.gap"]}' >"$T/fops.json"
for f in crash hang wrong nan abort; do
	rm -rf "$T/fbank" && mkdir "$T/fbank"
	TUNE_BANK_PATH=$T/fbank AOE_INJECT_FAULT=$f:Conv run aoe-opat $O \
	    --timeout 1 --budget-trials 3 --commit --tune-ops-file "$T/fops.json" "$ex"
	case $f in hang) st=timeout ;; nan) st=wrong ;; *) st=$f ;; esac
	[ $status -eq 0 ] && python3 - "$T/out" "$st" $(ls "$T"/fbank/*/ops.jsonl 2>/dev/null) <<'PY'
import json, sys
recs = {r["names"][0]: r for r in (r for r in map(json.loads, open(sys.argv[1])) if r["kind"] != "model")}
pw, relu = recs["b2.pw"], recs["head.gap"]
bank = [json.loads(l)["op_type"] for l in open(sys.argv[3])] if len(sys.argv) > 3 else []
sys.exit(0 if pw["outcome"] == "failed" and sys.argv[2] in pw["failed"] and
    relu["outcome"] != "failed" and "Conv" not in bank else 1)
PY
	ok $? "fault '$f' in the measuring child: op failed ($st), run completes, bank untouched"
done

# A timing set to replay (recorded once, real measurements).
run aoe-opat $O --no-bank --strategy random --budget-trials 12 --timings "$T/t.jsonl" "$ex"
ok $status "--timings records every measurement"
# Evolution over a replay set samples far more than it measures (about a
# minute on the Conv cases, several under ASan), and exhaustive walks the
# Conv spaces' millions of points in order for the 160 legal ones that a
# replay of 12 trials may propose (45 s): those strategies replay the
# small cases only.
echo '{"tune_ops_type":["Softmax","Gemm","GlobalAveragePool"]}' >"$T/few.json"
for s in exhaustive random evolution auto; do
	set -- "$ex"; n=$ncases
	case $s in exhaustive|evolution|auto)
		set -- --tune-ops-file "$T/few.json" "$ex"; n=3 ;;
	esac
	aoe-opat $O --no-bank --replay "$T/t.jsonl" --strategy $s --budget-trials 12 "$@" >"$T/p1" 2>/dev/null &&
	aoe-opat $O --no-bank --replay "$T/t.jsonl" --strategy $s --budget-trials 12 "$@" >"$T/p2" 2>/dev/null &&
	cmp -s "$T/p1" "$T/p2" && python3 "$T/check.py" "$T/p1" "$n"
	ok $? "--replay with strategy $s is deterministic"
done

# kill -9 at random points, then resume: same records, same bank.
strip='import json,sys
for l in open(sys.argv[1]):
    o = json.loads(l); o.pop("measured_at", None); print(json.dumps(o, sort_keys=True))'
# The recorded set with every trial at a tenth of its time, so that the
# run commits winners and the bank's sameness is something to test.  (At
# half, a set recorded while make -j2 check loaded the host could hold
# no trial that beat the default by the margin: an empty bank.)
python3 -c 'import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o["tag"] not in ("d", "d2"):
        for k in ("us", "mean_us", "min_us"): o[k] *= 0.1
    print(json.dumps(o))' "$T/t.jsonl" >"$T/th.jsonl"
R="$O --replay $T/th.jsonl --strategy random --budget-trials 12 --commit"
rm -rf "$T/kb0" && mkdir "$T/kb0"
TUNE_BANK_PATH=$T/kb0 aoe-opat $R --journal "$T/j0" "$ex" >"$T/k0" 2>/dev/null
python3 -c "$strip" "$T"/kb0/*/ops.jsonl >"$T/kb0.txt"
[ -s "$T/kb0.txt" ]
ok $? "a replay of trials that win commits them to the bank"
lines=$(wc -l <"$T/j0")
for i in 1 2 3; do
	k=$(awk -v s="$$$i" -v n="$lines" 'BEGIN { srand(s); print 1 + int(rand() * (n - 1)) }')
	rm -rf "$T/kb" "$T/j" && mkdir "$T/kb"
	TUNE_BANK_PATH=$T/kb AOE_OPAT_KILL_AT=$k aoe-opat $R --journal "$T/j" "$ex" >/dev/null 2>&1
	killed=$?
	TUNE_BANK_PATH=$T/kb aoe-opat $R --journal "$T/j" "$ex" >"$T/k1" 2>/dev/null
	python3 -c "$strip" "$T"/kb/*/ops.jsonl >"$T/kb.txt" 2>/dev/null
	[ $killed -eq 137 ] && cmp -s "$T/k0" "$T/k1" && cmp -s "$T/kb0.txt" "$T/kb.txt"
	ok $? "kill -9 after journal line $k of $lines, resume: same records and bank"
done
# A real run killed from outside, then resumed: nothing measured twice.
aoe-opat $O --no-bank --budget-trials 6 --journal "$T/jr" "$ex" >/dev/null 2>&1 &
pid=$!
sleep 1
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
run aoe-opat $O --no-bank --budget-trials 6 --journal "$T/jr" "$ex"
dups=$(grep '"j":"timing"' "$T/jr" | python3 -c '
import json, sys
seen = [(o["key"], o["tag"], o["canon"]) for o in map(json.loads, sys.stdin)]
print(len(seen) - len(set(seen)))')
[ $status -eq 0 ] && [ "$dups" -eq 0 ] && python3 "$T/check.py" "$T/out" "$ncases"
ok $? "a real run killed with kill -9 resumes without measuring again"
run aoe-opat $O --no-bank --budget-trials 7 --journal "$T/jr" "$ex"
[ $status -eq 3 ] && grep -q 'other arguments' "$T/err"
ok $? "a journal of another run is refused"

# Stages: generate | measure | select, and two hosts through GNU parallel.
aoe-opat --generate --budget-trials 3 --tune-ops-file "$T/fops.json" "$ex" >"$T/cand"
[ $(wc -l <"$T/cand") -eq 6 ] && grep -q '"id":0' "$T/cand"
ok $? "--generate writes candidate sets with the default as id 0"
# On one thread, the knobs that only share work between threads stay put.
aoe-opat --no-check --threads 1 --generate --budget-trials 30 "$ex" >"$T/c1"
python3 - "$T/c1" <<'PY'
import json, sys
# id 0, the default, leaves out knobs at their default values.
first, n = {}, 0
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o['id'] == 0:
        continue
    k = {x: o['schedule'].get(x) for x in ('nthreads', 'par', 'batch_par')}
    n += 1
    if first.setdefault(o['key'], k) != k:
        sys.exit(1)
sys.exit(0 if n > len(first) else 1)
PY
ok $? "--threads 1 holds nthreads, par and batch_par at their defaults"
aoe-opat --measure --threads 2 <"$T/cand" >"$T/tim" &&
    [ $(grep -c '"status":"ok"' "$T/tim") -eq 6 ]
ok $? "--measure writes a timing per candidate"
rm -rf "$T/sbank" && mkdir "$T/sbank"
TUNE_BANK_PATH=$T/sbank run aoe-opat --select --commit "$T/tim"
[ $status -eq 0 ] && [ $(wc -l <"$T/out") -eq 2 ] && python3 "$T/check.py" "$T/out" 2
ok $? "--select writes a record per case"
cat >"$T/ssh" <<'SH'
#!/bin/sh
# A stand-in for ssh: note the host, run the command here.
while [ $# -gt 0 ]; do
	case $1 in
	-[lpoiF]) shift 2 ;;
	-*) shift ;;
	*) echo "$1" >>"$SSHLOG"; shift; break ;;
	esac
done
[ "${1-}" = "--" ] && shift
exec sh -c "$*"
SH
chmod +x "$T/ssh"
printf '1/hostA\n1/hostB\n' >"$T/hosts"
if command -v parallel >/dev/null; then
	# GNU parallel runs its commands with $SHELL and silently runs
	# nothing when it is unset, as it is under some CI runners.
	SHELL=${SHELL:-/bin/sh} SSHLOG=$T/sshlog parallel --ssh "$T/ssh" --sshloginfile "$T/hosts" \
	    --env PATH --env SSHLOG --pipe -N 1 aoe-opat --measure --threads 2 \
	    <"$T/cand" >"$T/mtim" 2>"$T/perr"
	[ $(grep -c '"status":"ok"' "$T/mtim") -eq 6 ] &&
	    [ $(sort -u "$T/sshlog" | wc -l) -eq 2 ] &&
	    aoe-opat --select "$T/mtim" | python3 "$T/check.py" /dev/stdin 2
	if ! ok $? "measuring on two hosts with parallel --sshloginfile"; then
		echo "# $(grep -c '"status":"ok"' "$T/mtim") timings ok," \
		    "hosts: $(sort -u "$T/sshlog" 2>/dev/null | tr '\n' ' ')"
		sed 's/^/#   /' "$T/perr" | head -5
	fi
else
	ok 0 "# SKIP GNU parallel is not installed"
fi
aoe-opat --list "$ex" | head -2 >"$T/tasks"
run aoe-opat $O --no-bank --budget-trials 3 <"$T/tasks"
[ $status -eq 0 ] && python3 "$T/check.py" "$T/out" 2
ok $? "op tasks on stdin"
# Renaming a finished file over the output must not replace a device.
if mknod "$T/null" c 1 3 2>/dev/null; then
	aoe-opat --list -o "$T/null" "$ex" && [ -c "$T/null" ]
	ok $? "-o to a character device writes to it and leaves it a device"
else
	ok 0 "# SKIP mknod needs root"
fi
run aoe-opat --space stem.conv "$ex"
[ $status -eq 0 ] && grep -q '"op_type":"Conv"' "$T/out"
ok $? "--space prints a node's search space"

# Failure paths.
(exec 9>"$AOE_DEVICE_LOCK"; flock -x 9; echo "user=bob pid=77" >&9; exec sleep 30) &
lockpid=$!
i=0
while ! grep -q bob "$AOE_DEVICE_LOCK" 2>/dev/null && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
echo keep >"$T/keep"
run aoe-opat $O --no-bank --budget-trials 2 -o "$T/keep" "$ex"
kill $lockpid 2>/dev/null
wait $lockpid 2>/dev/null
[ $status -ne 0 ] && grep -q 'being tuned by user=bob pid=77' "$T/err" &&
    [ "$(cat "$T/keep")" = keep ]
ok $? "a device held by another tuning run is refused, -o left alone"
fails_with 2 'strategy' "an unknown --strategy is a usage error" aoe-opat --strategy magic "$ex"
fails_with 2 'budget-trials' "a bad --budget-trials is a usage error" aoe-opat --budget-trials x "$ex"
echo '{"tune_ops_name": 3}' >"$T/bad.json"
fails_with 3 'tune_ops_name' "a malformed --tune-ops-file is bad data" aoe-opat $O --tune-ops-file "$T/bad.json" "$ex"
echo 'not json' >"$T/badt"
echo keep >"$T/keep"
run aoe-opat $O --replay "$T/badt" -o "$T/keep" "$ex"
[ $status -eq 3 ] && [ "$(cat "$T/keep")" = keep ]
ok $? "a malformed replay set is bad data and leaves -o untouched"
AOE_FUSE=off run aoe-opat $O --list "$T/missing.onnx" "$dup"
[ $status -eq 5 ] && [ $(wc -l <"$T/out") -eq 2 ] && grep -q missing "$T/err"
ok $? "a missing graph is reported, the others are still listed"
# The guided search on a recorded set (a MatMul 96x512x768 at 1 thread,
# 307 random points of its AVX2 space, tests/fixtures): within 2% of the
# set's best in at most 12 trials on average over eight seeds (the set is
# noisy: points 2% apart are mostly measurement noise), where random
# needs a third more.  The knobs added since the set was recorded (apf,
# cpf) are held at their defaults in a replay; before that was so,
# random lost most of its draws to points the set lacks, and needed
# more than twice as many.
ng=0 nr=0 bad=0
for i in 1 2 3 4 5 6 7 8; do
	for s in evolution random; do
		AOE_MAX_ISA=avx2 aoe-opat --no-check --no-progress --threads 1 \
		    --no-bank --replay tests/fixtures/opat-guided-mm.timings \
		    --strategy $s --seed $i --budget-trials 300 \
		    --budget-seconds 100000000 --total-seconds 0 \
		    tests/fixtures/opat-guided-mm.json >"$T/g.$s.$i" 2>/dev/null || bad=1
	done
	n=$(python3 - "$T/g.evolution.$i" tests/fixtures/opat-guided-mm.timings <<'PY'
import json, sys
best = min(json.loads(l)["us"] for l in open(sys.argv[2]) if '"ok"' in l)
r = json.loads(open(sys.argv[1]).read())
print(next((t for t, us in r["history"] if us <= best * 1.02), 999))
PY
)
	m=$(python3 - "$T/g.random.$i" tests/fixtures/opat-guided-mm.timings <<'PY'
import json, sys
best = min(json.loads(l)["us"] for l in open(sys.argv[2]) if '"ok"' in l)
r = json.loads(open(sys.argv[1]).read())
print(next((t for t, us in r["history"] if us <= best * 1.02), 999))
PY
)
	ng=$((ng + n)) nr=$((nr + m))
done
[ $bad -eq 0 ] && [ $ng -le 96 ] && [ $((3 * nr)) -gt $((4 * ng)) ]
ok $? "the guided search replayed comes within 2% of the best in <= 12 trials on average (total $ng), random in a third more ($nr)"
run aoe-opat --help
[ $status -eq 0 ] && grep -q '^usage: aoe-opat' "$T/out"
ok $? "--help prints usage on stdout"
done_testing
