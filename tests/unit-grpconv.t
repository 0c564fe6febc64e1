#!/bin/sh
# Property tests of the grouped convolution (lib/kernels/k_grpconv.c).
cd "$(dirname "$0")/.." && exec tests/unit-grpconv
