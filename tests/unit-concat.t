#!/bin/sh
# The memory plan's in-place Concat: which inputs are placed inside the
# output, and outputs equal to a run with static memory.
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/tests/unit-concat"
