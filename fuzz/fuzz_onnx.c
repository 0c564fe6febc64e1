/*
 * fuzz_onnx - ONNX import (lib/ir/onnx.c), then prepare and one run of
 * what imports, within small limits (run.h).
 */
#include "run.h"

int
LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	fz_init();
	fz_model(d, n, "fuzz.onnx");
	return 0;
}
