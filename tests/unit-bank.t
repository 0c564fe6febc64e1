#!/bin/sh
# The bank inside libaoe: hits, collisions, soc_version, load cost.
top=$(cd "$(dirname "$0")/.." && pwd)
d=$(mktemp -d "${TMPDIR:-/tmp}/aoe-ub.XXXXXX")
trap 'rm -rf "$d"' EXIT
"$top/tests/unit-bank" "$top/share/aoe/models/example.onnx" "$d"
