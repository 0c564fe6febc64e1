#!/bin/sh
# Property tests of the kernels' search spaces (lib/kernels/space.c).
cd "$(dirname "$0")/.." && exec tests/unit-space
