#!/bin/sh
# C unit tests of sequences and optionals: the operators chained through
# the executor, and bad input.
cd "$(dirname "$0")/.." && exec tests/unit-seq
