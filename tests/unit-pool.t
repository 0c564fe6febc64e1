#!/bin/sh
# The thread pool (lib/base/pool.c).
cd "$(dirname "$0")/.." && exec tests/unit-pool
