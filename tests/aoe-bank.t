#!/bin/sh
# aoe-bank: commit, merge, diff, export/import, verify, prune, show, list,
# stats, lookup; crashes, concurrency and every kind of bad input.
. "$(dirname "$0")/tap.sh"
plan 112
cd "$top" || exit 1
ex=$top/share/aoe/models/example.onnx
export AOE_SOC_VERSION=socA
export TUNE_BANK_PATH=$T/tb
unset AOE_BUILTIN_BANK REPEAT_TUNE
mkdir -p "$TUNE_BANK_PATH"
bank=$TUNE_BANK_PATH/socA/ops.jsonl

# same FILE1 FILE2: the bank did not change.
same() { cmp -s "$1" "$2"; }

# --- commit ---------------------------------------------------------------
bankgen records 50 0 socA > "$T/r1"
run aoe-bank commit "$T/r1"
[ $status -eq 0 ] && [ "$(wc -l < "$bank")" -eq 50 ]
ok $? "commit adds 50 records"
run aoe-bank verify
ok $status "verify accepts the committed bank"
grep -q 'ok, 50 entries, soc_version socA' "$T/out"
ok $? "verify reports the count and soc_version"
cp "$bank" "$T/b50"
bankgen records 10 0 socA 0.9 update > "$T/slow"
run aoe-bank commit "$T/slow"
[ $status -eq 0 ] && same "$bank" "$T/b50"
ok $? "an update that is not faster is not admitted"
bankgen records 10 0 socA 0.3 update > "$T/fast"
run aoe-bank -q commit < "$T/fast"
[ $status -eq 0 ] && [ "$(grep -c '"time_us":3[0-9]' "$bank")" -eq 10 ]
ok $? "an update that is faster replaces the entry (records on stdin)"
bankgen records 5 100 socA 0.5 unsatisfied > "$T/uns"
bankgen records 5 200 socA 0.5 reserved >> "$T/uns"
cp "$bank" "$T/b50f"
run aoe-bank commit "$T/uns"
[ $status -eq 0 ] && same "$bank" "$T/b50f" && grep -q '10 records skipped' "$T/err"
ok $? "unsatisfied and reserved records are not committed"
echo '{"kind":"model","baseline_us":1000,"result_us":900,"tuning_time_s":1}' > "$T/model"
run aoe-bank commit "$T/model"
[ $status -eq 0 ] && same "$bank" "$T/b50f"
ok $? "aoe-sgat's model record is skipped, not refused"

# --- four concurrent commits lose nothing --------------------------------
for i in 0 1 2 3; do bankgen records 2000 $((1000 + i * 2000)) socA > "$T/c$i"; done
for i in 0 1 2 3; do aoe-bank -q commit "$T/c$i" & done
wait
run aoe-bank verify
lost=0
for i in 0 1 2 3; do aoe-bank commit "$T/c$i" 2>&1 | grep -q ': 0 added, 0 updated, 2000 kept' || lost=1; done
[ $status -eq 0 ] && [ "$(wc -l < "$bank")" -eq 8050 ] && [ $lost -eq 0 ]
ok $? "four concurrent commits lose no entry (8050 entries, each commit's 2000 all there)"

# --- bad input leaves the bank as it was ---------------------------------
cp "$bank" "$T/before"
head -c 100 "$T/r1" > "$T/trunc"
fails_with 3 "trunc:1: truncated line" "a truncated record" aoe-bank commit "$T/trunc"
same "$bank" "$T/before"; ok $? "... the bank is unchanged"
{ head -3 "$T/r1"; echo '{"key": '; } > "$T/malf"
fails_with 3 "malf:4: malformed JSON" "a malformed record" aoe-bank commit "$T/malf"
same "$bank" "$T/before"; ok $? "... the bank is unchanged"
bankgen records 3 5000 socB > "$T/wrongsoc"
fails_with 3 "soc_version 'socB' is not the bank's 'socA'" "a record of another soc_version" aoe-bank commit "$T/wrongsoc"
same "$bank" "$T/before"; ok $? "... the bank is unchanged"
sed 's/"signature":"op=/"signature":"op=X/' "$T/r1" | head -2 > "$T/badkey"
fails_with 3 "does not match its signature" "a key that is not its signature's" aoe-bank commit "$T/badkey"
sed 's/"outcome":"add"/"outcome":"maybe"/' "$T/r1" | head -1 > "$T/badout"
fails_with 3 "unknown outcome 'maybe'" "an unknown outcome" aoe-bank commit "$T/badout"
same "$bank" "$T/before"; ok $? "... the bank is unchanged"
fails_with 5 "TUNE_BANK_PATH '$T/nope' is not an existing writable directory" \
    "TUNE_BANK_PATH that does not exist" env TUNE_BANK_PATH="$T/nope" aoe-bank commit "$T/r1"

# A read-only bank directory (a read-only bind mount, as root ignores modes).
mkdir -p "$T/ro"
if [ "$(id -u)" -ne 0 ]; then
	cp -R "$TUNE_BANK_PATH/socA" "$T/ro/" && chmod -R a-w "$T/ro"; romnt=0
elif mount --bind "$TUNE_BANK_PATH" "$T/ro" 2>/dev/null &&
    mount -o remount,bind,ro "$T/ro" 2>/dev/null; then
	romnt=1
else
	romnt=; mountpoint -q "$T/ro" && umount "$T/ro"
fi
if [ -n "$romnt" ]; then
	run aoe-bank -b "$T/ro/socA" commit "$T/c0"
	[ $status -eq 5 ] && grep -q "Read-only file system\|Permission denied" "$T/err" &&
	    same "$bank" "$T/before"
	ok $? "a read-only bank directory: a clear error, nothing changed"
	[ "$romnt" = 1 ] && umount "$T/ro"
else
	echo "ok $((tap_n += 1)) # skip cannot make a read-only directory"
fi
# A full disk: a small tmpfs.
mkdir -p "$T/full"
if mount -t tmpfs -o size=256k tmpfs "$T/full" 2>/dev/null; then
	bankgen records 100 0 socA > "$T/full/small" && aoe-bank -q -b "$T/full/b" commit "$T/full/small"
	cp "$T/full/b/ops.jsonl" "$T/fullbefore"
	bankgen records 2000 9000 socA > "$T/big"
	run aoe-bank -b "$T/full/b" commit "$T/big"
	[ $status -eq 5 ] && grep -q "No space left" "$T/err" &&
	    same "$T/full/b/ops.jsonl" "$T/fullbefore" &&
	    [ -z "$(ls -A "$T/full/b" | grep -v '^ops.jsonl$\|^.lock$')" ]
	ok $? "a full disk: a clear error, the bank unchanged, no temporary file left"
	umount "$T/full"
else
	echo "ok $((tap_n += 1)) # skip cannot mount a tmpfs"
fi

# --- kill -9 during commit and merge --------------------------------------
# killrounds DIR OLD NEW CMD...: rounds (six, or more, below) of: DIR/ops.jsonl := OLD, start
# CMD, kill -9 it; odd rounds at a random time within an uninterrupted run
# ($kdur ms), even ones at a random time (0-30 ms; every other one at once)
# after the writer's temporary file appeared, after a SIGSTOP that shows
# whether the rename was still to come (counted in kmid).  After each, DIR verifies and holds OLD
# or NEW (kfail 0).  The seed is printed so that a failure can be replayed.
kseed=${AOE_TEST_SEED:-$(date +%s)}
echo "# kill -9 rounds: AOE_TEST_SEED=$kseed"
rnd() { kseed=$((kseed + 1)); awk -v s=$kseed -v m="$1" 'BEGIN { srand(s); printf "%.3f", rand() * m / 1000 }'; }
tmpfound() { for f in "$1"/.ops.jsonl.??????; do [ -e "$f" ] && return 0; done; return 1; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
killrounds() {
	kdir=$1 kold=$2 knew=$3; shift 3
	kfail=0 kmid=0 r=0
	# Six rounds, and more (up to 30) until a kill has landed mid-write:
	# on a busy machine a short write can slip through a few.
	while [ $r -lt 6 ] || { [ $kmid -eq 0 ] && [ $r -lt 30 ]; }; do
		r=$((r + 1))
		rm -f "$kdir"/.ops.jsonl.??????
		cp "$kold" "$kdir/ops.jsonl"
		"$@" & pid=$!
		if [ $((r % 2)) -eq 1 ]; then
			sleep "$(rnd "$kdur")"
		else
			while kill -0 $pid 2>/dev/null && ! tmpfound "$kdir"; do :; done
			# Every other one at once: a write can take less than
			# the shortest sleep (the command's own start).
			[ $((r % 4)) -eq 0 ] || sleep "$(rnd 30)"
		fi
		kill -STOP $pid 2>/dev/null && tmpfound "$kdir" && kmid=$((kmid + 1))
		kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
		if ! aoe-bank -q verify "$kdir" >"$T/kv" 2>&1; then
			kfail=1
			echo "# round $r: verify fails: $(head -3 "$T/kv")" >&2
		fi
		if ! same "$kdir/ops.jsonl" "$kold" &&
		    ! same "$kdir/ops.jsonl" "$knew"; then
			kfail=1
			echo "# round $r: neither the old nor the new bank" >&2
		fi
	done
	echo "# $kmid of $r kills landed before the rename (temporary file present)"
	[ $kmid -ge 1 ] || echo "# no kill in $r rounds landed before the rename (seed $kseed)" >&2
	[ $kfail -eq 0 ] && [ $kmid -ge 1 ]
}
bankgen records 20000 20000 socA 0.4 > "$T/many"
cp -R "$TUNE_BANK_PATH/socA" "$T/k0"
t0=$(now_ms); aoe-bank -q -b "$T/k0" commit "$T/many"; kdur=$(($(now_ms) - t0))
cp "$T/k0/ops.jsonl" "$T/knew"
rm -rf "$T/k1"; cp -R "$T/k0" "$T/k1"
killrounds "$T/k1" "$T/before" "$T/knew" aoe-bank -q -b "$T/k1" commit "$T/many"
ok $? "kill -9 during commit leaves the old or the new bank, and it verifies"
# A killed writer may leave its temporary file; the next one removes it.
cp "$T/before" "$T/k1/ops.jsonl"; : > "$T/k1/.ops.jsonl.AbC123"
aoe-bank -q -b "$T/k1" commit "$T/many"
ok $(test $? -eq 0 && test -z "$(find "$T/k1" -name '.ops.jsonl.*')" && same "$T/k1/ops.jsonl" "$T/knew"; echo $?) "the next commit removes what a killed writer left"
bankgen bank 50000 40000 socA 0.2 > "$T/other"
rm -rf "$T/m0"; cp -R "$T/k0" "$T/m0"; cp "$T/before" "$T/m0/ops.jsonl"
t0=$(now_ms); aoe-bank -q -b "$T/m0" merge "$T/other"; kdur=$(($(now_ms) - t0))
cp "$T/m0/ops.jsonl" "$T/mnew"
killrounds "$T/m0" "$T/before" "$T/mnew" aoe-bank -q -b "$T/m0" merge "$T/other"
ok $? "kill -9 during merge leaves the old or the new bank, and it verifies"

# --- verify ---------------------------------------------------------------
bankgen bank 20 0 socA > "$T/v"
{ sed -n 2p "$T/v"; sed -n 1p "$T/v"; sed -n '3,$p' "$T/v"; } > "$T/unsorted"
run aoe-bank verify "$T/unsorted"
[ $status -eq 3 ] && grep -q 'unsorted:2: not sorted' "$T/err"
ok $? "verify finds an unsorted file"
{ cat "$T/v"; tail -1 "$T/v"; } > "$T/dup"
run aoe-bank verify "$T/dup"
[ $status -eq 3 ] && grep -q 'dup:21: duplicate key' "$T/err"
ok $? "verify finds a duplicate key"
sed '5s/"signature":"op=/"signature":"op=Y/' "$T/v" > "$T/coll"
run aoe-bank verify "$T/coll"
[ $status -eq 3 ] && grep -q 'coll:5: key [0-9]* does not match its signature' "$T/err"
ok $? "verify finds a key that does not match its signature"
run aoe-bank --soc-version socB verify "$T/v"
[ $status -eq 3 ] && grep -q "soc_version 'socA' is not the bank's 'socB'" "$T/err"
ok $? "verify finds a wrong soc_version"
{ head -3 "$T/v"; sed -n 4p "$T/v" | head -c 50; } > "$T/vtrunc"
run aoe-bank verify "$T/vtrunc"
[ $status -eq 3 ] && grep -q 'vtrunc:4: truncated line' "$T/err"
ok $? "verify finds a truncated last line"
sed '7s/"time_us":[0-9.]*/"time_us":"fast"/' "$T/v" > "$T/vbad"
run aoe-bank verify "$T/vbad"
[ $status -eq 3 ] && grep -q 'vbad:7: "time_us" is not a number' "$T/err"
ok $? "verify finds a malformed field"
fails_with 5 "cannot open '$T/none'" "verify of a missing file" aoe-bank verify "$T/none"

# --- diff -----------------------------------------------------------------
bankgen bank 10 0 socA 0.5 > "$T/d1"
bankgen bank 10 5 socA 0.4 > "$T/d2"
run aoe-bank diff "$T/d1" "$T/d1"
[ $status -eq 0 ] && [ ! -s "$T/out" ]
ok $? "diff of equal banks: exit 0, no output"
run aoe-bank diff "$T/d1" "$T/d2"
[ $status -eq 1 ] && [ "$(grep -c '^added ' "$T/out")" -eq 5 ] &&
    [ "$(grep -c '^removed ' "$T/out")" -eq 5 ] &&
    [ "$(grep -c '^changed .* -> .*(-20.00%)' "$T/out")" -eq 5 ]
ok $? "diff lists added, removed and changed entries with time deltas; exit 1"
run aoe-bank diff --jsonl "$T/d1" "$T/d2"
[ $status -eq 1 ] && python3 -c '
import json, sys
c = [json.loads(l) for l in open(sys.argv[1])]
assert len(c) == 15 and sum(x["change"] == "changed" and x["delta_us"] < 0 for x in c) == 5
' "$T/out"
ok $? "diff --jsonl"
run aoe-bank diff "$T/v" "$T/unsorted"
[ $status -eq 3 ] && grep -q 'unsorted:2: not sorted' "$T/err"
ok $? "diff of an unsorted file is an error (exit 3)"

# --- merge ----------------------------------------------------------------
run aoe-bank merge -o "$T/m" "$T/d1" "$T/d2"
[ $status -eq 0 ] && [ "$(wc -l < "$T/m")" -eq 15 ] && aoe-bank -q verify "$T/m" >/dev/null &&
    [ "$(grep -c '"time_us":[0-9]*\.*[0-9]*,' "$T/m")" -eq 15 ]
ok $? "merge of two banks (fastest)"
k=$(sed -n 's/.*"key":"\([0-9]*\)".*/\1/p' "$T/d2" | while read -r x; do grep -q "\"$x\"" "$T/d1" && echo "$x"; done | head -1)
t() { grep "\"key\":\"$k\"" "$1" | sed 's/.*"time_us":\([0-9.]*\).*/\1/'; }
aoe-bank -q merge -o "$T/mf" "$T/d1" "$T/d2"; aoe-bank -q merge -o "$T/mo" -p ours "$T/d2" "$T/d1"
aoe-bank -q merge -o "$T/mt" --policy theirs "$T/d1" "$T/d2"
[ "$(t "$T/mf")" = "$(t "$T/d2")" ] && [ "$(t "$T/mo")" = "$(t "$T/d2")" ] && [ "$(t "$T/mt")" = "$(t "$T/d2")" ]
ok $? "merge policies fastest, ours, theirs pick the expected entry"
sed 's/2026-01-01T00:00:00Z/2027-01-01T00:00:00Z/' "$T/d1" > "$T/d1new"
aoe-bank -q merge -o "$T/mn" --policy newest "$T/d2" "$T/d1new"
[ "$(t "$T/mn")" = "$(t "$T/d1")" ]
ok $? "merge policy newest"
bankgen bank 5 0 socB > "$T/sb"
fails_with 3 "soc_version 'socB' is not the bank's 'socA'" "merge refuses banks of two soc_versions" \
    aoe-bank merge -o "$T/mx" "$T/d1" "$T/sb"
[ ! -e "$T/mx" ] && [ -z "$(ls -a "$T" | grep '^\.mx\.')" ]
ok $? "... and writes nothing"
cp "$bank" "$T/before"
fails_with 3 "not sorted" "merge of an unsorted bank into the bank" aoe-bank merge "$T/unsorted"
same "$bank" "$T/before"; ok $? "... the bank is unchanged"
for c in "vtrunc|vtrunc:4: truncated line" "vbad|vbad:7: \"time_us\" is not a number" "sb|sb:1: soc_version 'socB' is not the bank's 'socA'"; do
	f=${c%%|*} m=${c#*|}
	fails_with 3 "$m" "merge of a bank with a bad line into the bank ($f)" aoe-bank merge "$T/d2" "$T/$f"
	same "$bank" "$T/before"; ok $? "... the bank is unchanged"
done

# --- export / import ------------------------------------------------------
for s in tar tar.gz tar.xz tar.zst; do
	run aoe-bank export -o "$T/x.$s"
	[ $status -eq 0 ] && tar tf "$T/x.$s" 2>/dev/null | grep -q '^ops.jsonl$' ||
	    { [ "$s" = tar.zst ] && tar --zstd -tf "$T/x.$s" | grep -q '^ops.jsonl$'; }
	ok $? "export writes a .$s archive"
done
python3 - "$T/x.tar" "$bank" <<'PY'
import hashlib, json, sys, tarfile
t = tarfile.open(sys.argv[1])
m = json.load(t.extractfile("manifest.json"))
data = t.extractfile("ops.jsonl").read()
f = m["files"][0]
assert m["format"] == "aoe-bank-archive" and m["soc_version"] == "socA"
assert f["name"] == "ops.jsonl" and f["entries"] == data.count(b"\n")
assert f["size"] == len(data) and f["sha256"] == hashlib.sha256(data).hexdigest()
assert data == open(sys.argv[2], "rb").read()
PY
ok $? "the manifest holds the soc_version, the entry count, the size and the SHA-256"
mkdir -p "$T/tb2"
run env TUNE_BANK_PATH="$T/tb2" aoe-bank import --dry-run "$T/x.tar.gz"
[ $status -eq 0 ] && [ ! -e "$T/tb2/socA" ] && [ -z "$(ls -A "$T/tb2")" ]
ok $? "import --dry-run writes nothing"
run env TUNE_BANK_PATH="$T/tb2" aoe-bank import "$T/x.tar.xz"
[ $status -eq 0 ] && same "$T/tb2/socA/ops.jsonl" "$bank"
ok $? "import restores the bank exactly"
run env TUNE_BANK_PATH="$T/tb2" aoe-bank import "$T/x.tar.zst"
[ $status -eq 0 ] && same "$T/tb2/socA/ops.jsonl" "$bank"
ok $? "importing it again changes nothing"
fails_with 4 "the bank is for soc_version 'socA', not 'socB'; name it with --soc-version socA" \
    "import refuses a bank of another soc_version" env AOE_SOC_VERSION=socB TUNE_BANK_PATH="$T/tb2" aoe-bank import "$T/x.tar"
[ ! -e "$T/tb2/socB" ]; ok $? "... and writes nothing"
run env AOE_SOC_VERSION=socB TUNE_BANK_PATH="$T/tb2" aoe-bank --soc-version socA import "$T/x.tar"
ok $status "... unless asked for by name"

# Hostile archives, made with Python's tarfile.
cp "$T/tb2/socA/ops.jsonl" "$T/before2"
python3 - "$T" <<'PY'
import io, sys, tarfile
d = sys.argv[1]
def mk(name, *members):
    with tarfile.open(d + "/" + name, "w:gz") as t:
        for ti, data in members:
            t.addfile(ti, io.BytesIO(data) if data is not None else None)
def reg(n, data=b"x\n"):
    ti = tarfile.TarInfo(n); ti.size = len(data); return (ti, data)
def special(n, kind, target=""):
    ti = tarfile.TarInfo(n); ti.type = kind; ti.linkname = target; return (ti, None)
mk("dotdot.tgz", reg("manifest.json", b"{}"), reg("../evil"))
mk("abs.tgz", reg("/tmp/evil"))
mk("sym.tgz", special("ops.jsonl", tarfile.SYMTYPE, "/etc/passwd"))
mk("hard.tgz", reg("manifest.json", b"{}"), special("ops.jsonl", tarfile.LNKTYPE, "manifest.json"))
mk("dev.tgz", special("ops.jsonl", tarfile.CHRTYPE))
mk("fifo.tgz", special("ops.jsonl", tarfile.FIFOTYPE))
mk("other.tgz", reg("README"))
mk("noman.tgz", reg("ops.jsonl"))
PY
for c in "dotdot.tgz|contains '..'; refused" "abs.tgz|has an absolute path; refused" \
    "sym.tgz|is a link; refused" "hard.tgz|is a link; refused" "dev.tgz|is a device or fifo; refused" \
    "fifo.tgz|is a device or fifo; refused" "other.tgz|unexpected entry 'README'" \
    "noman.tgz|no manifest.json"; do
	a=${c%%|*} m=${c#*|}
	fails_with 3 "$m" "import refuses $a" env TUNE_BANK_PATH="$T/tb2" aoe-bank import "$T/$a"
done
fails_with 6 "over the limit of 1000; refused" "import refuses an entry over --max-size" \
    env TUNE_BANK_PATH="$T/tb2" aoe-bank import --max-size 1000 "$T/x.tar.gz"
same "$T/tb2/socA/ops.jsonl" "$T/before2" && [ -z "$(ls -A "$T/tb2" | grep -v '^socA$')" ] &&
    [ -z "$(ls -A "$T/tb2/socA" | grep -v '^ops.jsonl$\|^.lock$')" ]
ok $? "... the bank is unchanged and no temporary file is left"
run aoe-bank -b "$T/fresh/a/socA" import "$T/dotdot.tgz"
[ $status -eq 3 ] && [ ! -e "$T/fresh" ]
ok $? "... and a refused import into a new bank creates no directory"
# A well-formed archive whose bank has a bad line (the manifest agrees).
mkdir -p "$T/bl" && tar xf "$T/x.tar" -C "$T/bl" && sed -i '2s/"schedule":/"schedule":7,"x":/' "$T/bl/ops.jsonl" &&
python3 - "$T/bl" <<'PY'
import hashlib, json, os, sys
d = sys.argv[1]
data = open(d + "/ops.jsonl", "rb").read()
m = json.load(open(d + "/manifest.json"))
m["files"][0].update(size=len(data), sha256=hashlib.sha256(data).hexdigest())
json.dump(m, open(d + "/manifest.json", "w"))
PY
tar czf "$T/badline.tar.gz" -C "$T/bl" manifest.json ops.jsonl
fails_with 3 "badline.tar.gz:ops.jsonl:2: \"schedule\" is not an object" \
    "import refuses an archive whose bank has a malformed line" env TUNE_BANK_PATH="$T/tb2" aoe-bank import "$T/badline.tar.gz"
same "$T/tb2/socA/ops.jsonl" "$T/before2"; ok $? "... the bank is unchanged"
# A tampered archive: the checksum no longer matches.
mkdir -p "$T/tam" && tar xzf "$T/x.tar.gz" -C "$T/tam" && sed -i '1s/"time_us":[0-9.]*/"time_us":1/' "$T/tam/ops.jsonl" &&
    tar czf "$T/tam.tar.gz" -C "$T/tam" manifest.json ops.jsonl
fails_with 3 "does not match the manifest's checksum" "import refuses a tampered archive" \
    env TUNE_BANK_PATH="$T/tb2" aoe-bank import "$T/tam.tar.gz"
# A manifest version out of any integer's range: refused by name.
mkdir -p "$T/ver" && tar xzf "$T/x.tar.gz" -C "$T/ver" &&
    sed -i 's/"version":[[:space:]]*[0-9]*/"version":1e300/' "$T/ver/manifest.json" &&
    tar czf "$T/ver.tar.gz" -C "$T/ver" manifest.json ops.jsonl
run env TUNE_BANK_PATH="$T/tb2" aoe-bank import "$T/ver.tar.gz"
[ $status -ne 0 ] && grep -q "manifest version 1e+300 is not supported" "$T/err" &&
    same "$T/tb2/socA/ops.jsonl" "$T/before2"
ok $? "import refuses a manifest version beyond any integer; bank unchanged"
printf 'not an archive' > "$T/junk.tar.gz"
run env TUNE_BANK_PATH="$T/tb2" aoe-bank import "$T/junk.tar.gz"
[ $status -eq 3 ] && same "$T/tb2/socA/ops.jsonl" "$T/before2"
ok $? "import refuses a file that is not an archive"
fails_with 4 "must end in .tar" "export to an unknown suffix" aoe-bank export -o "$T/x.zip"

# --- prune ----------------------------------------------------------------
bankgen bank 12 0 socA 0.5 > "$T/p"
sed -i '1,2s/"baseline_us":\([0-9.]*\)/"baseline_us":1/' "$T/p"
sed -i '3s/0.1.0/0.0.9/; 4s/2026-01-01/2001-01-01/' "$T/p"
cp "$T/p" "$T/p0"
run aoe-bank -b "$T/p" prune --dry-run --no-gain
[ $status -eq 0 ] && [ "$(wc -l < "$T/out")" -eq 2 ] && same "$T/p" "$T/p0"
ok $? "prune --dry-run lists what it would remove and changes nothing"
run aoe-bank -b "$T/p" prune --no-gain
[ $status -eq 0 ] && [ "$(wc -l < "$T/p")" -eq 10 ]
ok $? "prune --no-gain drops entries that do not beat the baseline"
aoe-bank -q -b "$T/p" prune --tool-version 0.0.9 && aoe-bank -q -b "$T/p" prune --older-than 3650
[ "$(wc -l < "$T/p")" -eq 8 ]
ok $? "prune by tool version and by age"
n=$(grep -c '"op_type":"Conv"' "$T/p")
aoe-bank -q -b "$T/p" prune --op-type Conv
[ "$(wc -l < "$T/p")" -eq $((8 - n)) ] && ! grep -q '"op_type":"Conv"' "$T/p" && aoe-bank -q verify "$T/p" >/dev/null
ok $? "prune by op type"
fails_with 3 "prune needs" "prune without a criterion" aoe-bank prune

# --- show, list, stats, lookup --------------------------------------------
k1=$(sed -n '1s/.*"key":"\([0-9]*\)".*/\1/p' "$T/d1")
run aoe-bank -b "$T/d1" show "$k1"
[ $status -eq 0 ] && [ "$(cat "$T/out")" = "$(head -1 "$T/d1")" ]
ok $? "show prints the entry"
run aoe-bank -b "$T/d1" show 123
[ $status -eq 1 ] && [ ! -s "$T/out" ]
ok $? "show of a missing key: exit 1"
run aoe-bank list "$T/d1"
[ $status -eq 0 ] && [ "$(wc -l < "$T/out")" -eq 10 ] && grep -q "^$k1 [A-Za-z]* [0-9.]* [0-9.]* 50.00%$" "$T/out"
ok $? "list"
run aoe-bank list --jsonl --op-type Conv "$T/d1"
[ $status -eq 0 ] && [ "$(wc -l < "$T/out")" -eq "$(grep -c '"op_type":"Conv"' "$T/d1")" ]
ok $? "list --jsonl --op-type"
run aoe-bank stats "$T/d1"
[ $status -eq 0 ] && grep -q '^entries 10$' "$T/out" && grep -q '^soc_version socA$' "$T/out"
ok $? "stats"
run aoe-bank lookup --jsonl --threads 1 "$ex"
[ $status -eq 0 ] && grep -q '"from":"miss"' "$T/out" && ! grep -q '"from":"custom"' "$T/out"
ok $? "lookup: no hit before a commit"
head -1 "$T/out" | python3 -c '
import json, sys
l = json.loads(sys.stdin.readline())
print(json.dumps({"key": l["key"], "op_type": l["op_type"], "names": [l["node"]], "before_us": 10,
    "after_us": 5, "schedule": {"nthreads": 1}, "outcome": "add", "signature": l["signature"],
    "soc_version": "socA"}))' > "$T/hit"
aoe-bank -q commit "$T/hit"
run aoe-bank lookup --threads 1 "$ex"
[ $status -eq 0 ] && [ "$(grep -c ' custom$' "$T/out")" -eq 1 ] && grep -q '1 of [0-9]* ops hit' "$T/err"
ok $? "lookup: the committed case hits the custom bank"
run env TUNE_BANK_PATH= aoe-bank --bank "$T/tb" lookup --threads 1 "$ex"
[ $status -eq 0 ] && [ ! -e "$T/tb/ops.jsonl" ] && [ "$(grep -c ' custom$' "$T/out")" -eq 1 ]
ok $? "lookup --bank with TUNE_BANK_PATH's directory reads its soc_version's entries"
mkdir -p "$T/bi/socA" && cp "$bank" "$T/bi/socA/ops.jsonl"
run env AOE_BUILTIN_BANK="$T/bi" TUNE_BANK_PATH="$T/tb2" aoe-bank lookup --threads 1 "$ex"
[ $status -eq 0 ] && [ "$(grep -c ' built-in$' "$T/out")" -eq 1 ]
ok $? "lookup: the built-in bank is read after the custom one"
run env AOE_BUILTIN_BANK="$T/bi" aoe-bank lookup --threads 1 "$ex"
[ $status -eq 0 ] && [ "$(grep -c ' custom$' "$T/out")" -eq 1 ] && ! grep -q ' built-in$' "$T/out"
ok $? "lookup: an entry in both banks comes from the custom one"
# Hand-made entries (verify would refuse them): the right key with another
# signature (a collision), and the right key and signature on another
# soc_version.  Neither is applied; each is named in a warning.
aoe-bank lookup --jsonl --threads 1 "$ex" 2>/dev/null | python3 -c '
import json, os, sys
seen, out = set(), []
for l in sys.stdin:
    l = json.loads(l)
    if l["key"] not in seen:
        seen.add(l["key"]); out.append(l)
def ent(l, sig, soc):
    return {"key": l["key"], "op_type": l["op_type"], "signature": sig, "schedule": {"mr": 4},
        "time_us": 1, "baseline_us": 2, "soc_version": soc, "tool_version": "0.1.0",
        "kernels": int(os.environ["KGEN"]), "measured_at": "2026-01-01T00:00:00Z", "method": "opat"}
e = [ent(out[1], "op=Other;threads=1", "socA"), ent(out[2], out[2]["signature"], "socB")]
for x in sorted(e, key=lambda x: int(x["key"])):
    print(json.dumps(x))
print(out[1]["node"], out[2]["node"], file=sys.stderr)
' > "$T/hostile.jsonl" 2> "$T/nodes"
read -r ncoll nsoc < "$T/nodes"
run aoe-bank -b "$T/hostile.jsonl" lookup --jsonl --threads 1 "$ex"
[ $status -eq 0 ] && grep -q "\"node\":\"$ncoll\".*\"from\":\"collision\"" "$T/out" &&
    grep -q "\"node\":\"$nsoc\".*\"from\":\"miss\"" "$T/out" && ! grep -q '"from":"custom"' "$T/out" &&
    grep -q "custom bank: entry [0-9]* has another signature (a hash collision) for node '$ncoll'; ignored" "$T/err" &&
    grep -q "custom bank: entry [0-9]* is for another soc_version; ignored" "$T/err"
ok $? "lookup: a key collision and another soc_version are ignored with a warning"
run env AOE_BANK_THREADS= aoe-run --runs 1 --threads 1 "$ex"
ok $status "aoe-run runs with the bank"
# Entries whose schedules are not in their node's space (an unknown knob,
# an illegal GEMM tile, a value off the list) are never applied: lookup
# says "illegal" and warns once each; aoe-run computes what it computes
# without them.  (convs.jsonl: the example's Conv cases, a lookup line each.)
aoe-bank lookup --jsonl --threads 1 "$ex" 2>/dev/null | python3 -c '
import json, sys
seen = set()
for l in sys.stdin:
    o = json.loads(l)
    if o["op_type"] == "Conv" and o["key"] not in seen:
        seen.add(o["key"]); sys.stdout.write(l)
' > "$T/convs.jsonl"
python3 -c '
import json, os, sys
out = [json.loads(l) for l in open(sys.argv[1])]
scheds = [{"bogus_knob": 5}, {"mr": 4, "nr": 16}, {"algo": 99}]
e = [{"key": l["key"], "op_type": l["op_type"], "signature": l["signature"], "schedule": s,
      "time_us": 1, "baseline_us": 2, "soc_version": "socA", "tool_version": "0.1.0",
      "kernels": int(os.environ["KGEN"]), "measured_at": "2026-01-01T00:00:00Z", "method": "opat"}
     for l, s in zip(out, scheds)]
for x in sorted(e, key=lambda x: int(x["key"])):
    print(json.dumps(x))
' "$T/convs.jsonl" > "$T/illegal.jsonl"
run aoe-bank -b "$T/illegal.jsonl" lookup --jsonl --threads 1 "$ex"
[ $status -eq 0 ] && [ "$(grep -c '"from":"illegal"' "$T/out")" -eq 3 ] &&
    ! grep -q '"from":"custom"' "$T/out" &&
    [ "$(grep -c "custom bank: entry [0-9]* for node '[^']*': illegal schedule: .*; ignored" "$T/err")" -eq 3 ] &&
    grep -q "has no knob 'bogus_knob'" "$T/err" && grep -q 'algo=99 is not a legal value' "$T/err"
ok $? "lookup: schedules outside the node's space are ignored with a warning naming the knob"
mkdir -p "$T/ill/socA" && cp "$T/illegal.jsonl" "$T/ill/socA/ops.jsonl"
aoe-run --no-bank --runs 1 --threads 1 -o "$T/ill-ref" "$ex" >/dev/null 2>&1
run env TUNE_BANK_PATH="$T/ill" aoe-run --runs 1 --threads 1 -o "$T/ill-out" "$ex"
[ $status -eq 0 ] && [ "$(grep -c 'illegal schedule' "$T/err")" -eq 3 ] &&
    cmp -s "$T/ill-ref/$(ls "$T/ill-ref" | head -1)" "$T/ill-out/$(ls "$T/ill-ref" | head -1)"
ok $? "aoe-run warns once for each illegal entry and computes as without the bank"
run aoe-bank lookup --threads 2 "$ex"
! grep -q ' custom$' "$T/out"
ok $? "lookup: another thread count is another case"
# An entry applies only under the kernel generation it was measured
# under (aoe-bank(5) "kernels"; 1 when absent): others are "stale", with
# one warning a bank; prune --stale drops them; in a merge the current
# generation's entry wins whatever the times; a malformed generation is a
# bad line.
python3 -c '
import json, os, sys
out = [json.loads(l) for l in open(sys.argv[1] + "/convs.jsonl")]
k = int(os.environ["KGEN"])
def ent(l, gen, t):
    e = {"key": l["key"], "op_type": l["op_type"], "signature": l["signature"], "schedule": {},
         "time_us": t, "baseline_us": 2, "soc_version": "socA", "tool_version": "0.1.0",
         "measured_at": "2026-01-01T00:00:00Z", "method": "opat"}
    if gen:
        e["kernels"] = gen
    return e
cur = [ent(out[0], k, 1.5)]
old = [ent(out[0], k + 1, 0.5), ent(out[1], None, 1), ent(out[2], k + 1, 1)]
for name, es in (("cur", cur), ("old", old)):
    with open(sys.argv[1] + "/" + name + ".jsonl", "w") as f:
        for x in sorted(es, key=lambda x: int(x["key"])):
            print(json.dumps(x, separators=(",", ":")), file=f)
' "$T"
run aoe-bank -b "$T/old.jsonl" lookup --jsonl --threads 1 "$ex"
[ $status -eq 0 ] && [ "$(grep -c '"from":"stale"' "$T/out")" -eq 3 ] &&
    ! grep -q '"from":"custom"' "$T/out" &&
    [ "$(grep -c 'entries measured under another kernel generation' "$T/err")" -eq 1 ] &&
    grep -q "(this aoe's is $KGEN) are ignored, entry [0-9]* the first; tune again or drop them (aoe-bank prune --stale)" "$T/err"
ok $? "lookup: entries of another kernel generation (or none) are stale, one warning a bank"
run aoe-bank -b "$T/cur.jsonl" lookup --jsonl --threads 1 "$ex"
[ $status -eq 0 ] && [ "$(grep -c '"from":"custom"' "$T/out")" -eq 1 ] && ! grep -q stale "$T/err"
ok $? "lookup: an entry of this kernel generation applies"
run aoe-bank stats "$T/old.jsonl"
[ $status -eq 0 ] && grep -q '^entries 3$' "$T/out" && grep -q '^stale 3$' "$T/out"
ok $? "stats counts the entries of another kernel generation"
run aoe-bank stats "$T/cur.jsonl"
[ $status -eq 0 ] && grep -q '^stale 0$' "$T/out"
ok $? "stats: no stale entry in a bank of this generation"
cp "$T/old.jsonl" "$T/old-keep.jsonl"
run aoe-bank -b "$T/merged.jsonl" merge --output "$T/merged.jsonl" "$T/old.jsonl" "$T/cur.jsonl"
[ $status -eq 0 ] && [ "$(wc -l < "$T/merged.jsonl")" -eq 3 ] &&
    grep -q "\"time_us\":1.5,.*\"kernels\":$KGEN" "$T/merged.jsonl" && ! grep -q '"time_us":0.5' "$T/merged.jsonl"
ok $? "merge: the entry of this kernel generation wins over a faster stale one"
run aoe-bank -b "$T/merged.jsonl" prune --dry-run --stale
[ $status -eq 0 ] && [ "$(wc -l < "$T/out")" -eq 2 ] && [ "$(wc -l < "$T/merged.jsonl")" -eq 3 ]
ok $? "prune --dry-run --stale lists the two stale entries and changes nothing"
run aoe-bank -b "$T/merged.jsonl" prune --stale
[ $status -eq 0 ] && [ "$(wc -l < "$T/merged.jsonl")" -eq 1 ] &&
    grep -q "\"kernels\":$KGEN" "$T/merged.jsonl" && cmp -s "$T/old.jsonl" "$T/old-keep.jsonl"
ok $? "prune --stale keeps only this generation's entries"
i=0
for bad in '"x"' 0 1.5 -2; do
	i=$((i + 1))
	sed "s/\"kernels\":$KGEN/\"kernels\":$bad/" "$T/cur.jsonl" > "$T/badgen$i.jsonl"
done
cat "$T"/badgen?.jsonl > "$T/badgen-keep"
run aoe-bank verify "$T"/badgen?.jsonl
[ $status -ne 0 ] && [ "$(grep -c 'is not a whole number from 1 to 1000000' "$T/err")" -eq 4 ] &&
    cat "$T"/badgen?.jsonl | cmp -s - "$T/badgen-keep"
ok $? "verify: a kernels that is not a whole number from 1 is a bad line"

# --- paths and soc_version --------------------------------------------------
# A subgraph record (its key is the FNV-1a 64 of its signature).
python3 -c '
import json
sig = "sgat1;threads=1;nodes=3 >> op=Conv;threads=1;in=float32[1,3,8,8]|float32[4,3,3,3]c;out=float32[1,4,6,6];attrs=group:i=1;kernel_shape:is=[3,3] >> op=BatchNormalization >> op=Relu"
h = 0xcbf29ce484222325
for b in sig.encode():
    h = ((h ^ b) * 0x100000001b3) % 2**64
print(json.dumps({"repo_key": str(h), "subgraph": "chain", "signature": sig, "schedule": {"fuse_bn": 1},
    "before_us": 2, "after_us": 1, "outcome": "add", "soc_version": "socA"}))' > "$T/grec"
cat "$T/r1" "$T/grec" > "$T/both"
custom=$T/home/Ascend/latest/data/aoe/custom
run env -u TUNE_BANK_PATH HOME="$T/home" aoe-bank commit "$T/both"
[ $status -eq 0 ] && [ "$(wc -l < "$custom/op/socA/ops.jsonl")" -eq 50 ] &&
    [ "$(wc -l < "$custom/graph/socA/graphs.jsonl")" -eq 1 ]
ok $? "without TUNE_BANK_PATH: \$HOME/Ascend/latest/data/aoe/custom/op/<soc> and graph/<soc>"
rm -rf "$T/tb3"; mkdir -p "$T/tb3"
run env TUNE_BANK_PATH="$T/tb3" aoe-bank commit "$T/both"
[ $status -eq 0 ] && [ "$(wc -l < "$T/tb3/socA/ops.jsonl")" -eq 50 ] &&
    [ "$(wc -l < "$T/tb3/graphs.jsonl")" -eq 1 ] && aoe-bank -q --graphs verify "$T/tb3/graphs.jsonl"
ok $? "with TUNE_BANK_PATH: operators in \$TUNE_BANK_PATH/<soc>, subgraphs in \$TUNE_BANK_PATH"
# Detection: vendor, family and model of the first processor, ISA level.
want=$(awk -F': *' '/^vendor_id/ && !v { v = $2 } /^cpu family/ && !f { f = $2 }
    /^model[ \t]*:/ && m == "" { m = $2 } END { if (v != "") printf "%s_f%d_m%d_x86-64-v", v, f, m }' /proc/cpuinfo)
run env -u AOE_SOC_VERSION TUNE_BANK_PATH="$T/tb3" aoe-bank verify
if [ -n "$want" ]; then
	grep -q "cannot open '$T/tb3/${want}[1-4]/ops.jsonl'" "$T/err"
	ok $? "soc_version is detected from /proc/cpuinfo ($(sed -n "s|.*tb3/\([^/]*\)/.*|\1|p" "$T/err"))"
else
	echo "ok $((tap_n += 1)) # skip not an x86 /proc/cpuinfo"
fi
run env AOE_SOC_VERSION='../x y' TUNE_BANK_PATH="$T/tb3" aoe-bank verify
grep -q "AOE_SOC_VERSION '../x y' is not a safe file name; using '_._x_y'" "$T/err" &&
    grep -q "cannot open '$T/tb3/_._x_y/ops.jsonl'" "$T/err"
ok $? "AOE_SOC_VERSION overrides it, made a safe file name"

# --- usage ------------------------------------------------------------------
run aoe-bank
[ $status -eq 2 ] && grep -q '^usage: aoe-bank' "$T/err"
ok $? "no command is a usage error"
run aoe-bank frobnicate
[ $status -eq 2 ] && grep -q "unknown command 'frobnicate'" "$T/err"
ok $? "an unknown command is a usage error"
run aoe-bank diff "$T/d1"
[ $status -eq 2 ]; ok $? "diff with one bank is a usage error"
run aoe-bank merge --policy slowest "$T/d1"
[ $status -eq 2 ] && grep -q "policy 'slowest'" "$T/err"
ok $? "an unknown policy is a usage error"
run aoe-bank --help
[ $status -eq 0 ] && grep -q '^usage: aoe-bank' "$T/out"
ok $? "--help"
done_testing
