#!/bin/sh
# Property tests of the fused epilogues and the Swish and Gelu operators
# (lib/kernels/epi.c, kernel.h, k_act.c; lib/passes/fuse.c's canonicalisation).
cd "$(dirname "$0")/.." && exec tests/unit-epi
