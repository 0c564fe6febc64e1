#!/bin/sh
# The GEMM micro-kernel shapes (AVX-512 where the CPU has it) against a
# naive reference (tests/unit-gemm512.c).
cd "$(dirname "$0")/.." && exec tests/unit-gemm512
