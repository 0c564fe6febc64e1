#!/bin/sh
# Every thread split of Conv and the GEMM against a plain reference at
# 1, 2 and 3 threads (lib/kernels/k_conv.c, k_gemm.c, k_winograd.c).
cd "$(dirname "$0")/.." && exec tests/unit-part
