#!/bin/sh
# Pooling and resampling in the blocked layout NCHW8c (lib/kernels/k_pool.c).
cd "$(dirname "$0")/.." && exec tests/unit-pool8c
