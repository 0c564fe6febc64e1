#!/bin/sh
# ab.sh: an A/B of two aoe builds, or of two environment settings, on one
# model, where the machine's load moves faster than a change's effect.
# Each repeat runs A, then B (then ONNX Runtime with -o), each a process
# of RUNS timed runs, so that a slow spell of the host hits both alike;
# prints the median over the repeats of each side's median and of its
# minimum, and the median of the repeats' B/A ratios.
#
#   bench/ab.sh [-A] [-t THREADS] [-r RUNS] [-n REPEATS] [-o] [-b BANK]
#       [-B BANK] [-a ENV] [-e ENV] A B MODEL
#
# A and B are aoe-run binaries ("-" for this tree's tools/aoe-run).  -a
# and -e set space-separated NAME=VALUE pairs for A's and B's runs (the
# same binary under two settings: "bench/ab.sh -e AOE_POOL_BALANCE=0 - -
# regnet_x_400mf").  MODEL is a path or a name in
# ${AOE_CACHE:-$HOME/.cache/aoe}/models, its input bound by shape.sh as
# in every script here (AOE_SHAPE=NAME:D0,D1,... overrides).  aoe runs untuned
# (--no-bank) unless -b names a bank for both (TUNE_BANK_PATH); -B names
# one for B alone (tuned against untuned: "bench/ab.sh -o -t 2 -B
# ~/.cache/aoe/banks/resnet50/full - - resnet50").  -o also
# times ONNX Runtime (bench/ort-run.js) in each repeat and prints each
# side's median over ORT's.  At 1 thread every run is pinned to the last
# CPU this process may use (taskset, where present), as e2e.sh does.
# -A runs every side as on an AVX2 machine, as e2e.sh -A does (aoe under
# AOE_MAX_ISA=avx2, ONNX Runtime under noavx512.so; without -o only aoe,
# which works on a CPU noavx512.so cannot serve).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
CACHE=${AOE_CACHE:-$HOME/.cache/aoe}
t=1 runs=30 reps=7 ort= bank= bankb= enva= envb= avx2=
usage() {
	echo "usage: $0 [-A] [-t threads] [-r runs] [-n repeats] [-o] [-b bank]" \
	    "[-B bank] [-a env] [-e env] A B model" >&2
	exit 2
}
posint() {
	case $2 in
	''|*[!0-9]*|0*) echo "$0: -$1 $2: not a positive number" >&2; exit 2 ;;
	esac
}
while getopts At:r:n:ob:B:a:e: c; do
	case $c in
	A) avx2=1 ;;
	t) posint t "$OPTARG"; t=$OPTARG ;;
	r) posint r "$OPTARG"; runs=$OPTARG ;;
	n) posint n "$OPTARG"; reps=$OPTARG ;;
	o) ort=1 ;;
	b) bank=$OPTARG ;;
	B) bankb=$OPTARG ;;
	a) enva=$OPTARG ;;
	e) envb=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 3 ] || usage
a=$1 b=$2 model=$3
[ "$a" != - ] || a=$top/tools/aoe-run
[ "$b" != - ] || b=$top/tools/aoe-run
for x in "$a" "$b"; do
	[ -x "$x" ] || { echo "$0: $x: not an executable" >&2; exit 1; }
done
case $model in
*/*|*.onnx) path=$model name=$(basename "$model" .onnx) ;;
*) path=$CACHE/models/$model.onnx name=$model ;;
esac
[ -r "$path" ] || { echo "$0: $path: no such model" >&2; exit 1; }
. "$here/shape.sh"
shape=${AOE_SHAPE:-$(shape_of "$name")}
[ -n "$bankb" ] || bankb=$bank
pin=
if [ "$t" = 1 ] && command -v taskset >/dev/null 2>&1; then
	pin="taskset -c $(taskset -cp $$ | sed 's/.*: *//; s/.*[,-]//')"
fi
export NODE_PATH=${NODE_PATH:-$CACHE/ort/node_modules}
node=node
. "$here/avx2.sh"
# Without -o no ONNX Runtime runs, so only aoe needs holding.
[ -z "$avx2" ] || hold_avx2 ${ort:-aoe}
# One run of side $1 (binary $2, environment $3, bank $4 or none):
# "side median min".
aoe() {
	if [ -n "$4" ]; then
		nb= bk="TUNE_BANK_PATH=$4"
	else
		nb=--no-bank bk=
	fi
	# $3 is split into its NAME=VALUE words on purpose.
	# shellcheck disable=SC2086
	env $3 $bk $pin "$2" $nb --threads "$t" --warmup 3 --runs "$runs" \
	    --input-shape "$shape" "$path" |
	    sed -n "s/.* median=\([0-9.]*\).* min=\([0-9.]*\).*/$1 \1 \2/p"
}
echo "# ab.sh $name, $t thread(s)${avx2:+, AVX2}, $reps x $runs runs; A=$a${enva:+ ($enva)}${bank:+ bank $bank}; B=$b${envb:+ ($envb)}${bankb:+ bank $bankb}"
i=0
while [ $i -lt "$reps" ]; do
	aoe A "$a" "$enva" "$bank"
	aoe B "$b" "$envb" "$bankb"
	if [ -n "$ort" ]; then
		# shellcheck disable=SC2086
		$pin $node "$here/ort-run.js" -t "$t" -w 3 -r "$runs" "$path" \
		    "$shape" | sed -n 's/.* median=\([0-9.]*\).* min=\([0-9.]*\).*/O \1 \2/p'
	fi
	i=$((i + 1))
done | awk '
function median(s,   n, v, i, j, x) {
	n = split(s, v, " ")
	for (i = 2; i <= n; i++)	# insertion sort: a few values
		for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
			x = v[j]; v[j] = v[j - 1]; v[j - 1] = x
		}
	return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
{ med[$1] = med[$1] " " $2; mn[$1] = mn[$1] " " $3 }
$1 == "A" { last = $2 }
$1 == "B" && last > 0 { ratio = ratio " " $2 / last }
END {
	if (!("A" in med) || !("B" in med)) {
		print "ab.sh: a side printed no time" > "/dev/stderr"
		exit 1
	}
	for (s = 1; s <= 3; s++) {
		k = substr("ABO", s, 1)
		if (!(k in med))
			continue
		m[k] = median(med[k])
		printf "%s median %.4f ms, min %.4f ms", k, m[k], median(mn[k])
		if (k != "O" && "O" in med)
			printf ", over ORT %.3f", m[k] / median(med["O"])
		printf "\n"
	}
	printf "B/A %.4f (median of %d paired ratios)\n", median(ratio),
	    split(ratio, tmp, " ")
}'
