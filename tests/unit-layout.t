#!/bin/sh
# The blocked layout NCHW8c and its reorders (lib/kernels/k_layout.c).
cd "$(dirname "$0")/.." && exec tests/unit-layout
