#!/bin/sh
# Property tests of the depthwise convolution by rows (lib/kernels/k_dwconv.c).
cd "$(dirname "$0")/.." && exec tests/unit-dwconv
