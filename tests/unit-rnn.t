#!/bin/sh
# LSTM, GRU and RNN against a reference (lib/kernels/k_rnn.c).
cd "$(dirname "$0")/.." && exec tests/unit-rnn
