#!/bin/sh
# Property tests of Conv's Winograd algorithm (lib/kernels/k_winograd.c).
cd "$(dirname "$0")/.." && exec tests/unit-winograd
