#!/bin/sh
# opat-strategies.sh - compare aoe-opat's search strategies by replay on a
# recorded exhaustive timing set: trials needed to come within 5% of the
# best schedule, averaged over seeds.
#
#   aoe-opat --strategy exhaustive --budget-trials 1000000 \
#       --budget-seconds 1000000 --total-seconds 0 --timings set.jsonl g.json
#   bench/opat-strategies.sh set.jsonl g.json [opat options...]
set -eu
set_=$1 graph=$2
shift 2
seeds=${SEEDS:-20}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for s in random evolution; do
	i=1
	while [ $i -le "$seeds" ]; do
		aoe-opat --no-check --no-bank --no-progress --replay "$set_" \
		    --strategy $s --seed $i --budget-trials 100000 \
		    --budget-seconds 100000000 --total-seconds 0 "$@" "$graph" \
		    >"$tmp/$s.$i"
		i=$((i + 1))
	done
done
python3 - "$set_" "$tmp" "$seeds" <<'PY'
import json, sys, statistics
best = {}
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o.get("status") == "ok":
        best[o["key"]] = min(best.get(o["key"], 1e30), o["us"])
tmp, seeds = sys.argv[2], int(sys.argv[3])
res = {}
for s in ("random", "evolution"):
    for i in range(1, seeds + 1):
        for l in open("%s/%s.%d" % (tmp, s, i)):
            r = json.loads(l)
            if r["key"] not in best or "history" not in r:
                continue
            goal = best[r["key"]] * 1.05
            n = next((t for t, us in r["history"] if us <= goal), None)
            res.setdefault((r["key"], r["op_type"], r["names"][0]), {}).setdefault(s, []).append(n if n else r["trials"] + 1)
print("%-22s %-10s %-10s %8s %8s %8s" % ("key", "op", "name", "random", "evol.", "ratio"))
for (k, op, name), v in res.items():
    a, b = statistics.mean(v["random"]), statistics.mean(v["evolution"])
    print("%-22s %-10s %-10s %8.1f %8.1f %8.3f" % (k, op, name, a, b, b / a))
PY
