#!/bin/sh
# The signal and random kernels: DFT lengths, seeds, distributions, bad nodes.
cd "$(dirname "$0")/.." && exec tests/unit-signal
