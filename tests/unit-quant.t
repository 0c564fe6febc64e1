#!/bin/sh
# The quantized operators against scalar references, bad quantization
# parameters, and QDQ fusion (tests/unit-quant.c).
cd "$(dirname "$0")/.." && exec tests/unit-quant
