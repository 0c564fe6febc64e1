#!/bin/sh
# bank-bench.sh - merge and diff of two banks of N entries (default
# 1,000,000 each, half of the keys shared): wall time and peak memory
# (maximum resident set size from GNU time, or /usr/bin/time -v).
# Memory must not grow with N: run with N=100000 and N=1000000 to compare.
#
#   bench/bank-bench.sh [N]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
n=${1:-1000000}
d=$(mktemp -d "${TMPDIR:-/tmp}/aoe-bankbench.XXXXXX")
trap 'rm -rf "$d"' EXIT
[ -x "$top/tests/bankgen" ] || make -C "$top" -s tests/bankgen
"$top/tests/bankgen" bank "$n" 0 benchsoc 0.5 > "$d/a.jsonl"
"$top/tests/bankgen" bank "$n" $((n / 2)) benchsoc 0.4 > "$d/b.jsonl"
echo "n=$n a=$(du -h "$d/a.jsonl" | cut -f1) b=$(du -h "$d/b.jsonl" | cut -f1)"
measure() {
	name=$1; shift
	/usr/bin/time -f "%e %M" -o "$d/t" "$@" > "$d/out" 2>/dev/null || true
	read -r sec kb <<EOT
$(tail -1 "$d/t")
EOT
	echo "$name n=$n seconds=$sec max_rss_kb=$kb"
}
measure merge "$top/tools/aoe-bank" -q merge -o "$d/m.jsonl" "$d/a.jsonl" "$d/b.jsonl"
echo "merged entries: $(wc -l < "$d/m.jsonl")"
measure diff "$top/tools/aoe-bank" diff "$d/a.jsonl" "$d/b.jsonl"
measure diff-jsonl "$top/tools/aoe-bank" diff --jsonl "$d/a.jsonl" "$d/b.jsonl"
measure verify "$top/tools/aoe-bank" -q verify --soc-version benchsoc "$d/m.jsonl"
