#!/bin/sh
# Property tests of 2-D MaxPool and AveragePool (lib/kernels/k_pool.c).
cd "$(dirname "$0")/.." && exec tests/unit-pool2d
