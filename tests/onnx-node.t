#!/bin/sh
# The ONNX node tests of Debian's libonnx-testdata, every one of them: the
# tests of supported operators must pass, the others are skipped by name.
# The runner prints the pass, fail and skip counts on stderr.
top=$(cd "$(dirname "$0")/.." && pwd)
data=${ONNX_NODE_TESTS:-/usr/share/libonnx-testdata/data/node}
if [ ! -d "$data" ]; then
	echo "1..0 # SKIP $data is missing (apt-get install libonnx-testdata)"
	exit 0
fi
exec "$top/tests/onnx-node" "$data"/test_*
