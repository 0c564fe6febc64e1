#!/bin/sh
# The same under AOE_MAX_ISA=avx2: the Conv, Gemm and MatMul epilogues on
# the AVX2 kernels, which an AVX-512 machine would not otherwise run.
cd "$(dirname "$0")/.." && AOE_MAX_ISA=avx2 exec tests/unit-epi
