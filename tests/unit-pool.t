#!/bin/sh
# The thread pool (lib/pool.c).
cd "$(dirname "$0")/.." && exec tests/unit-pool
