#!/bin/sh
# The same under AOE_MAX_ISA=avx2: the 8-float kernels, which an AVX-512
# machine would not otherwise run by default.
cd "$(dirname "$0")/.." && AOE_MAX_ISA=avx2 exec tests/unit-pool2d
