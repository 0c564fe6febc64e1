#!/bin/sh
# The same under AOE_MAX_ISA=avx2: libaoe behaves as on an AVX2-only
# machine, and the AVX-512 shapes are refused.
cd "$(dirname "$0")/.." && AOE_MAX_ISA=avx2 exec tests/unit-gemm512
