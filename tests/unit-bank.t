#!/bin/sh
# The bank inside libaoe: hits, collisions, soc_version, load cost; the
# record-level commit, the subgraph bank's lookup order, the schedule parser.
top=$(cd "$(dirname "$0")/.." && pwd)
d=$(mktemp -d "${TMPDIR:-/tmp}/aoe-ub.XXXXXX")
trap 'rm -rf "$d"' EXIT
"$top/tests/unit-bank" "$top/share/aoe/models/example.onnx" "$d"
