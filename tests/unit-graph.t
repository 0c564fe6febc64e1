#!/bin/sh
# C unit tests of the IR, formats, planner and executor.
cd "$(dirname "$0")/.." && exec tests/unit-graph
