#!/bin/sh
# The same under AOE_MAX_ISA=avx2: the int8 GEMM's AVX2 form only, as on
# an AVX2-only machine, and vnni=1 is refused.
cd "$(dirname "$0")/.." && AOE_MAX_ISA=avx2 exec tests/unit-quant
