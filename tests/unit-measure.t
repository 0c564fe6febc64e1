#!/bin/sh
# The measuring harness: the parent's side of the children's protocol,
# and the random inputs (tests/unit-measure.c).
cd "$(dirname "$0")/.." && exec tests/unit-measure
