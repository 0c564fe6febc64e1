#!/bin/sh
# Bad quantization parameters in a model: a scale of zero, a negative or
# NaN scale, a zero point of another type than its data, a per-axis
# scale of the wrong length.  aoe-run says so in one line naming the
# node and exits 3, bad data (tests/unit-quant.c writes the models).
. "$(dirname "$0")/tap.sh"
plan 5
"$top/tests/unit-quant" -w "$T" || exit 1

fails_with 3 "^aoe-run: QuantizeLinear 'q1': scale 0 is not a positive finite number$" \
    "a zero scale" aoe-run "$T/scale0.onnx"
fails_with 3 "^aoe-run: QuantizeLinear 'q1': scale -1 is not a positive finite number$" \
    "a negative scale" aoe-run "$T/scale1.onnx"
fails_with 3 "^aoe-run: QuantizeLinear 'q1': scale nan is not a positive finite number$" \
    "a NaN scale" aoe-run "$T/scale2.onnx"
fails_with 3 "^aoe-run: DequantizeLinear 'dq1': zero point 'z' is int8, not uint8 as its data$" \
    "a zero point of another type" aoe-run "$T/zptype.onnx"
fails_with 3 "^aoe-run: QuantizeLinear 'q2': scale 's' has 4 values, 1 or 3 expected$" \
    "a per-axis scale of the wrong length" aoe-run "$T/axislen.onnx"
