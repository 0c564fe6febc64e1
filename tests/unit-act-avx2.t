#!/bin/sh
# The same under AOE_MAX_ISA=avx2: the epilogue rows and the Sigmoid, Tanh,
# Erf and Exp operators on eight lanes, which an AVX-512 machine would not
# otherwise run.
cd "$(dirname "$0")/.." && AOE_MAX_ISA=avx2 exec tests/unit-act
