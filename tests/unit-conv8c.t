#!/bin/sh
# Property tests of Conv's blocked algorithm (lib/kernels/k_conv8c.c).
cd "$(dirname "$0")/.." && exec tests/unit-conv8c
