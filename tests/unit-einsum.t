#!/bin/sh
# Einsum against a reference (lib/kernels/k_einsum.c).
cd "$(dirname "$0")/.." && exec tests/unit-einsum
