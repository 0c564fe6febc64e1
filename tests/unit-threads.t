#!/bin/sh
# The thread pool and the bank's concurrent readers and writers
# (tests/unit-threads.c); make check-tsan runs it under ThreadSanitizer.
top=$(cd "$(dirname "$0")/.." && pwd)
d=$(mktemp -d "${TMPDIR:-/tmp}/aoe-ut.XXXXXX")
trap 'rm -rf "$d"' EXIT
"$top/tests/unit-threads" "$d"
