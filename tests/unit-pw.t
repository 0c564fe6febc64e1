#!/bin/sh
# Property tests of the pointwise (1x1) Conv against a plain reference
# (lib/kernels/k_conv.c, k_gemm.c), every epilogue, sampled schedules.
cd "$(dirname "$0")/.." && exec tests/unit-pw
