#!/bin/sh
# aoe-opat --sshloginfile: candidates measured on other "hosts" through
# GNU parallel, the winners confirmed here.  The hosts are played by
# tests/fake-ssh.sh (the command runs here, as over ssh), which also drops a
# host out mid-run and reports another soc_version; then, when loopback
# ssh works (.ci/loopback-ssh sets it up), the same over real ssh.
. "$(dirname "$0")/tap.sh"
plan 14
ex=$top/share/aoe/models/example.onnx
cd "$top" || exit 1
export TUNE_BANK_PATH="$T/bank" RUN_LOOP=3
mkdir -p "$T/bank" "$T/fk"
unset REPEAT_TUNE AOE_INJECT_FAULT AOE_OPAT_KILL_AT AOE_SOC_VERSION
O="--no-check --no-progress --threads 2 --timeout 10 --budget-trials 4"
echo '{"tune_ops_type": ["Conv"]}' > "$T/ops.json"
O="$O --tune-ops-file $T/ops.json"
export FAKE_SSH_DIR="$T/fk"
# GNU parallel splits the ssh command at spaces, and the checkout may
# be in a folder whose name has one: the fake ssh by a link in $T.
ln -s "$top/tests/fake-ssh.sh" "$T/fake-ssh"

# The fields of the records, each with what a searched case must carry.
cat >"$T/shape.py" <<'PY'
import json, os, sys
local = [r for r in map(json.loads, open(sys.argv[1])) if r["kind"] != "model"]
remote = [r for r in map(json.loads, open(sys.argv[2])) if r["kind"] != "model"]
assert sorted(r["key"] for r in local) == sorted(r["key"] for r in remote)
fields = lambda rs: set(k for r in rs for k in r)
diff = fields(local) ^ fields(remote)
# Whether a case is confirmed depends on what its search measured (a
# candidate faster than the default), so one run may have none; and so
# does whether the whole-model check backs an add out.
assert diff <= {"confirmed", "backed_out", "backed_out_why"}, diff
for r in remote:
    assert r["outcome"] != "failed", r
    for k in ("strategy", "tuning_time_s", "spread_us", "trials", "history"):
        assert k in r, (k, r)
    best = min(p[1] for p in r["history"])
    # A case whose search found something faster by the noise floor (2 %)
    # was confirmed here, and only such a case.
    gain = best < r["history"][0][1] * (1 - 0.02)
    assert gain == (r.get("confirmed") in ("model", "alone")), r
PY

run aoe-opat $O -o "$T/local.jsonl" "$ex"
ok $status "a local run of the Conv cases (the reference)"

printf 'hostA\nhostB\n' > "$T/hosts"
AOE_SSH=$T/fake-ssh run aoe-opat $O --commit --timings "$T/tim" \
    --sshloginfile "$T/hosts" -o "$T/remote.jsonl" "$ex"
ok $status "two hosts measure the candidates"
[ -s "$T/fk/in.hostA" ] && [ -s "$T/fk/in.hostB" ]
ok $? "both hosts got candidates"
python3 "$T/shape.py" "$T/local.jsonl" "$T/remote.jsonl"
ok $? "the records have the local run's fields, winners confirmed in the model"
# What the hosts measured is what the search and the baselines needed;
# the confirmations (tags m0, m1, ...) were measured here.
hosts=$(cat "$T"/fk/in.host? | wc -l)
searched=$(grep -c '"tag":"[dt]' "$T/tim")
# (A run whose searches found nothing faster confirms nothing.)
if grep -q '"confirmed"' "$T/remote.jsonl"; then
	grep -q '"tag":"m0"' "$T/tim"
else
	true
fi && [ "$hosts" -eq "$searched" ] && ! grep -q '"tag":"m' "$T"/fk/in.host?
ok $? "search on the hosts ($hosts), confirmation here"
# (What is added depends on the measurements: none, no bank file.)
adds=$(grep -c '"outcome":"add"' "$T/remote.jsonl")
if [ "$adds" -gt 0 ]; then
	aoe-bank verify >"$T/out" 2>&1
	st=$?
	[ $st -eq 0 ] || sed 's/^/# /' "$T/out"
else
	! ls "$T"/bank/*/ops.jsonl >/dev/null 2>&1
	st=$?
fi
ok $st "the bank it committed verifies ($adds added)"

# A host of another soc_version is refused, before anything is measured.
cp -R "$T/bank" "$T/bank0"
printf 'hostA\nalien\n' > "$T/hosts2"
AOE_SSH=$T/fake-ssh run aoe-opat $O --commit --sshloginfile \
    "$T/hosts2" "$ex"
[ $status -ne 0 ] && grep -q "host 'alien' reports soc_version 'alien_soc'" \
    "$T/err" && [ ! -s "$T/out" ] && diff -r "$T/bank" "$T/bank0" >/dev/null
ok $? "a host of another soc_version is refused, the bank untouched"
printf 'hostA\ndead\n' > "$T/hosts3"
AOE_SSH=$T/fake-ssh run aoe-opat $O --sshloginfile "$T/hosts3" "$ex"
[ $status -ne 0 ] && grep -q "host 'dead' did not answer" "$T/err" &&
    [ ! -s "$T/out" ]
ok $? "a host that does not answer is refused, with its name"

# A host that drops out mid-run loses only its in-flight candidates: its
# jobs are retried on the other host, and every case ends as it would.
rm -f "$T/fk"/*
printf 'hostA\nflaky\n' > "$T/hosts4"
FAKE_SSH_FLAKY=2 AOE_SSH=$T/fake-ssh run aoe-opat $O --no-bank \
    --sshloginfile "$T/hosts4" -o "$T/flaky.jsonl" "$ex"
drops=$(grep -c '^flaky$' "$T/fk/sessions")
[ $status -eq 0 ] && [ "$drops" -gt 2 ] &&
    python3 "$T/shape.py" "$T/local.jsonl" "$T/flaky.jsonl"
ok $? "a host that drops out mid-run costs no case ($drops sessions tried)"

run aoe-opat --measure --sshloginfile "$T/hosts" "$ex"
[ $status -eq 2 ] && grep -q "^usage: aoe-opat" "$T/err" && [ ! -s "$T/out" ]
ok $? "--sshloginfile only with a tuning run"
fails_with 5 "cannot open 'no-such-hosts'" "a missing login file is named" \
    aoe-opat $O --sshloginfile no-such-hosts "$ex"
printf '# nothing\n\n' > "$T/hosts5"
fails_with 3 "no hosts" "a login file without hosts is refused" \
    aoe-opat $O --sshloginfile "$T/hosts5" "$ex"

# Over real ssh to this host, twice ("localhost" and "127.0.0.1"), when
# loopback ssh works without a password (never waiting on a prompt).
if ! command -v sshd >/dev/null 2>&1 && [ ! -x /usr/sbin/sshd ]; then
	why="sshd is not installed (.ci/loopback-ssh sets it up)"
elif ! ssh -o BatchMode=yes -o ConnectTimeout=5 localhost true \
    >/dev/null 2>&1 ||
    ! ssh -o BatchMode=yes -o ConnectTimeout=5 127.0.0.1 true \
    >/dev/null 2>&1; then
	why="no password-less ssh to localhost and 127.0.0.1 (.ci/loopback-ssh)"
else
	why=
fi
if [ -n "$why" ]; then
	echo "ok 13 # skip $why"
	echo "ok 14 # skip $why"
	tap_n=14
else
	echo '{"tune_ops_name": ["stem.conv"]}' > "$T/one.json"
	printf 'localhost\n127.0.0.1\n' > "$T/lo"
	run aoe-opat ${O%--tune-ops-file*} --tune-ops-file "$T/one.json" \
	    -o "$T/lo1.jsonl" "$ex"
	unset AOE_SSH
	run aoe-opat ${O%--tune-ops-file*} --tune-ops-file "$T/one.json" \
	    --sshloginfile "$T/lo" -o "$T/lo2.jsonl" "$ex"
	ok $status "over loopback ssh to two hosts"
	SOME=1 python3 "$T/shape.py" "$T/lo1.jsonl" "$T/lo2.jsonl"
	ok $? "its records have the local run's shape"
fi
done_testing
