#!/bin/sh
# The Python module aoe (python/aoe) from the build tree: tests/test_aoe.py.
# It needs a python3 with numpy: $PYTHON, else Debian's /usr/bin/python3
# (a python3 first on PATH may lack numpy).
cd "$(dirname "$0")/.." || exit 1
py=
for p in ${PYTHON:-} /usr/bin/python3 python3; do
	if "$p" -c 'import numpy' >/dev/null 2>&1; then
		py=$p
		break
	fi
done
if [ -z "$py" ]; then
	echo "1..0 # SKIP no python3 with numpy (apt-get install python3-numpy)"
	exit 0
fi
# A library built with AddressSanitizer (make check-asan) needs its
# runtime loaded first; Python's own allocations are not ours to check.
if readelf -d lib/libaoe.so 2>/dev/null | grep -q libasan; then
	LD_PRELOAD=$(${CC:-cc} -print-file-name=libasan.so)
	ASAN_OPTIONS=detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}
	export LD_PRELOAD ASAN_OPTIONS
fi
PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH} PYTHONDONTWRITEBYTECODE=1 \
    exec "$py" tests/test_aoe.py
