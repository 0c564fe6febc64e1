# tap.sh - a few TAP helpers for the shell tests, sourced by tests/*.t.
#
# Tests run from the top of the tree; $T is a scratch directory removed on
# exit.  Every check prints one "ok"/"not ok" line.

set -u
top=$(cd "$(dirname "$0")/.." && pwd)
PATH=$top/tools:$top/tests:$PATH
T=$(mktemp -d "${TMPDIR:-/tmp}/aoe-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
# The kernel generation bank entries made by hand must carry to apply.
KGEN=$(aoe-bank --version 2>/dev/null |
    sed -n 's/.*(kernel generation \([0-9]*\)).*/\1/p')
export KGEN
# Each test file has a device of its own: tuning tools take its lock.
export AOE_DEVICE_LOCK="$T/device.lock"
tap_n=0
tap_failed=0

plan() { echo "1..$1"; }

ok() {
	# ok STATUS DESCRIPTION: pass when STATUS is 0; returns whether it passed.
	tap_n=$((tap_n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $tap_n - $2"
	else
		echo "not ok $tap_n - $2"
		tap_failed=$((tap_failed + 1))
	fi
	[ "$1" -eq 0 ]
}

# run CMD...: run a command, keeping its stdout, stderr and status.
run() {
	"$@" >"$T/out" 2>"$T/err"
	status=$?
}

# fails_with CODE PATTERN DESC CMD...: CMD exits with CODE, prints one line
# on stderr matching PATTERN, and nothing on stdout.
fails_with() {
	code=$1 pat=$2 desc=$3
	shift 3
	run "$@"
	lines=$(wc -l <"$T/err")
	if [ "$status" -eq "$code" ] && [ "$lines" -eq 1 ] &&
	    grep -q -- "$pat" "$T/err" && [ ! -s "$T/out" ]; then
		ok 0 "$desc"
	else
		ok 1 "$desc"
		echo "# status $status (want $code), stderr:"
		sed 's/^/#   /' "$T/err" | head -5
	fi
}

done_testing() { [ "$tap_failed" -eq 0 ]; }
