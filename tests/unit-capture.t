#!/bin/sh
# C unit tests of the graph hash, the capture hook and the device lock.
cd "$(dirname "$0")/.." && exec tests/unit-capture
