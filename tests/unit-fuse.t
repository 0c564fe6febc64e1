#!/bin/sh
# Subgraph decisions in libaoe: fused == unfused on random chains, the
# example and (when present) the real models; stale bank entries ignored.
top=$(cd "$(dirname "$0")/.." && pwd)
d=$(mktemp -d "${TMPDIR:-/tmp}/aoe-uf.XXXXXX")
trap 'rm -rf "$d"' EXIT
m=$HOME/.cache/aoe/models
"$top/tests/unit-fuse" "$top/share/aoe/models/example.onnx" "$d" \
    "$m/resnet18.onnx@input:1,3,224,224" \
    "$m/mobilenet_v2.onnx@input:1,3,224,224" \
    "$m/mobilenet_v3_large.onnx@input:1,3,224,224" \
    "$m/ppocrv4_det.onnx@x:1,3,320,320" \
    "$m/ppocrv4_rec.onnx@x:1,3,48,320" \
    "$m/transformer_encoder.onnx@input:1,128,256"
