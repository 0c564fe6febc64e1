#!/bin/sh
# The activations' vector math against double precision, on eight and
# (where the CPU has AVX-512) sixteen lanes (kernel.h, lib/kernels/epi.c).
cd "$(dirname "$0")/.." && exec tests/unit-act
