#!/bin/sh
# The session API: dynamic widths, the shape cache, outputs, errors,
# threads; PP-OCRv4 rec too when bench/fetch-models.sh has fetched it.
cd "$(dirname "$0")/.." || exit 1
T=$(mktemp -d "${TMPDIR:-/tmp}/aoe-test.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
tests/mkexample -w "$T/rec.onnx" || exit 1
exec tests/unit-session "$T/rec.onnx" share/aoe/models/example.onnx \
    "$HOME/.cache/aoe/models/ppocrv4_rec.onnx"
