#!/bin/sh
# The same under AOE_MAX_ISA=avx2: the AVX2 micro-kernels and their default
# shapes, which an AVX-512 machine would not otherwise run.
cd "$(dirname "$0")/.." && AOE_MAX_ISA=avx2 exec tests/unit-pw
