#!/bin/sh
# The same under AOE_MAX_ISA=avx2: the AVX2 micro-kernel shapes, whose
# 24-wide strips Conv's implicit im2col packs, on an AVX-512 machine too.
cd "$(dirname "$0")/.." && AOE_MAX_ISA=avx2 exec tests/unit-space
