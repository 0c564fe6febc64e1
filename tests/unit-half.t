#!/bin/sh
# float16 element-wise kernels and bfloat16 casts against a float32 reference.
cd "$(dirname "$0")/.." && exec tests/unit-half
