#!/bin/sh
# The Python module aoe (python/aoe) from the build tree: tests/test_aoe.py.
cd "$(dirname "$0")/.." || exit 1
. tests/pyenv.sh
if [ -z "$py" ]; then
	echo "1..0 # SKIP no python3 with numpy (apt-get install python3-numpy)"
	exit 0
fi
PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH} PYTHONDONTWRITEBYTECODE=1 \
    exec "$py" tests/test_aoe.py
