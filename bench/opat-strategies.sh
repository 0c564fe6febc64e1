#!/bin/sh
# opat-strategies.sh - compare aoe-opat's search strategies by replay on a
# recorded timing set (exhaustive, or a large random sample): trials
# needed to come within 5% of the set's best schedule, averaged over
# seeds, per case, and the mean and median of guided/random over the
# cases.  A case whose default schedule (trial 1) is already within 5% is
# listed but left out of the mean and median, since both need 1 trial.
# A run that never gets there counts as its trials + 1 (marked "*").
#
#   RUN_LOOP=5 aoe-opat --threads 1 --strategy exhaustive \
#       --budget-trials 1000000 --budget-seconds 100000000 \
#       --total-seconds 0 --timings set.jsonl g.json     # or --strategy random
#   bench/opat-strategies.sh set.jsonl g.json [opat options...]
#
# SEEDS (default 20) seeds a strategy; BUDGET (default: the set's size)
# caps the trials of one replay; WITHIN (default 5) is the percentage off
# the best that counts as reaching it.  Several sets: one case each, or the
# same graph with --tune-ops-file.
set -eu
set_=$1 graph=$2
shift 2
seeds=${SEEDS:-20}
budget=${BUDGET:-$(wc -l <"$set_")}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for s in random evolution; do
	i=1
	while [ $i -le "$seeds" ]; do
		aoe-opat --no-check --no-bank --no-progress --replay "$set_" \
		    --strategy $s --seed $i --budget-trials "$budget" \
		    --budget-seconds 100000000 --total-seconds 0 "$@" "$graph" \
		    >"$tmp/$s.$i"
		i=$((i + 1))
	done
done
python3 - "$set_" "$tmp" "$seeds" "${WITHIN:-5}" <<'PY'
import json, sys, statistics
best, default = {}, {}
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o.get("status") == "ok":
        best[o["key"]] = min(best.get(o["key"], 1e30), o["us"])
tmp, seeds, within = sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
res, cens = {}, {}
for s in ("random", "evolution"):
    for i in range(1, seeds + 1):
        for l in open("%s/%s.%d" % (tmp, s, i)):
            r = json.loads(l)
            if r["key"] not in best or "history" not in r:
                continue
            goal = best[r["key"]] * (1 + within / 100)
            n = next((t for t, us in r["history"] if us <= goal), None)
            c = (r["key"], r["op_type"], r["names"][0])
            res.setdefault(c, {}).setdefault(s, []).append(n if n else r["trials"] + 1)
            if not n:
                cens[(c, s)] = cens.get((c, s), 0) + 1
print("%-22s %-7s %-44s %9s %9s %8s" % ("key", "op", "name", "random", "guided", "ratio"))
ratios = []
for c, v in res.items():
    k, op, name = c
    a, b = statistics.mean(v["random"]), statistics.mean(v["evolution"])
    note = ""
    if max(v["random"]) == 1 and max(v["evolution"]) == 1:
        note = "  (default within %g%%: not counted)" % within
    else:
        ratios.append(b / a)
    ma = "*" if (c, "random") in cens else " "
    mb = "*" if (c, "evolution") in cens else " "
    print("%-22s %-7s %-44s %8.1f%s %8.1f%s %8.3f%s" % (k, op, name[-44:], a, ma, b, mb, b / a, note))
if ratios:
    print("cases %d  ratio guided/random: mean %.3f  median %.3f  (goal <= 0.1)"
          % (len(ratios), statistics.mean(ratios), statistics.median(ratios)))
if cens:
    print("* some seeds never came within %g%% in the budget: %s" % (within,
          ", ".join("%s %s x%d" % (c[2], s, n) for (c, s), n in cens.items())))
PY
