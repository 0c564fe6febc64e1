#!/bin/sh
# Bad quantization parameters in a model: a scale of zero, a negative or
# NaN scale, a zero point of another type than its data, a per-axis
# scale of the wrong length.  aoe-run says so in one line naming the
# node and exits 3, bad data.  The int8 GEMM's search space in aoe-space,
# and aoe-opat tuning a QLinearMatMul (tests/unit-quant.c writes the
# models).
. "$(dirname "$0")/tap.sh"
plan 8
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

run aoe-space "$T/qmm.onnx"
[ $status -eq 0 ] && grep -q "^qmm QLinearMatMul: [0-9]* points" "$T/out" &&
    for k in vnni mr nv mc kc par prepack nthreads; do
	grep -q "^  $k " "$T/out" || exit 1
    done
ok $? "aoe-space: the int8 GEMM's knobs for a QLinearMatMul"
AOE_MAX_ISA=avx2 run aoe-space "$T/qmm.onnx"
[ $status -eq 0 ] && grep -q "^  vnni       {0} default 0" "$T/out"
ok $? "aoe-space: with AOE_MAX_ISA=avx2, the AVX2 form only"
mkdir -p "$T/bank"
TUNE_BANK_PATH=$T/bank RUN_LOOP=3 run aoe-opat --no-progress --threads 2 \
    --timeout 10 --budget-trials 4 -o "$T/r.jsonl" "$T/qmm.onnx"
[ $status -eq 0 ] && /usr/bin/python3 - "$T/r.jsonl" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
# The whole-model record, when something was decided, follows the op's.
recs = [r for r in recs if r["kind"] == "opat"]
assert len(recs) == 1, recs
r = recs[0]
assert r["op_type"] == "QLinearMatMul" and r["names"] == ["qmm"], r
assert r["outcome"] in ("add", "unsatisfied") and r["trials"] >= 2, r
assert r["before_us"] > 0 and r["after_us"] > 0, r
assert set(r["schedule"]) >= {"vnni", "mr", "nv", "mc", "kc"}, r
PY
ok $? "aoe-opat: tunes a QLinearMatMul, checked and measured" ||
    sed "s/^/# /" "$T/err"
