# pyenv.sh - sourced by the tests that run Python on libaoe.so: sets py to
# a python3 with numpy ($PYTHON, else Debian's /usr/bin/python3; a python3
# first on PATH may lack numpy), or empty; and, when libaoe.so was built
# with AddressSanitizer (make check-asan), preloads its runtime, which
# must come first, with leak checks off (Python's own allocations are not
# ours to check; the last setting wins, so it goes last).
py=
for p in ${PYTHON:-} /usr/bin/python3 python3; do
	if "$p" -c 'import numpy' >/dev/null 2>&1; then
		py=$p
		break
	fi
done
if readelf -d "$(dirname "$0")/../lib/libaoe.so" 2>/dev/null | grep -q libasan; then
	LD_PRELOAD=$(${CC:-cc} -print-file-name=libasan.so)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	export LD_PRELOAD ASAN_OPTIONS
fi
