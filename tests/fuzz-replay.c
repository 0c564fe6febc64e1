/*
 * fuzz-replay - the libFuzzer harnesses of fuzz/ built by the normal
 * build, without libFuzzer: each input file is given once to the named
 * target's harness, as the fuzzer gave it (tests/fuzz-regress.t replays
 * fuzz/regress/ so).  A harness aborts on a broken property; a crash is
 * a crash.
 *
 *   fuzz-replay target file ...
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LLVMFuzzerTestOneInput one_onnx
#include "../fuzz/fuzz_onnx.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput one_graph
#include "../fuzz/fuzz_graph.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerInitialize init_bank
#define LLVMFuzzerTestOneInput one_bank
#include "../fuzz/fuzz_bank.c"
#undef LLVMFuzzerInitialize
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerInitialize init_records
#define LLVMFuzzerTestOneInput one_records
#include "../fuzz/fuzz_records.c"
#undef LLVMFuzzerInitialize
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerInitialize init_archive
#define LLVMFuzzerTestOneInput one_archive
#include "../fuzz/fuzz_archive.c"
#undef LLVMFuzzerInitialize
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerInitialize init_sched
#define LLVMFuzzerTestOneInput one_sched
#include "../fuzz/fuzz_sched.c"
#undef LLVMFuzzerInitialize
#undef LLVMFuzzerTestOneInput

static int
no_init(int *argc, char ***argv)
{
	fz_init();
	return 0;
}

static const struct target {
	const char *name;
	int (*init)(int *, char ***);
	int (*one)(const uint8_t *, size_t);
} targets[] = {
	{ "onnx", no_init, one_onnx },
	{ "graph", no_init, one_graph },
	{ "bank", init_bank, one_bank },
	{ "records", init_records, one_records },
	{ "archive", init_archive, one_archive },
	{ "sched", init_sched, one_sched },
	{ NULL, NULL, NULL }
};

int
main(int argc, char **argv)
{
	const struct target *t;
	uint8_t *d;
	size_t n;
	int i;

	if (argc < 2) {
		fprintf(stderr, "usage: fuzz-replay target file ...\n");
		return 2;
	}
	for (t = targets; t->name && strcmp(t->name, argv[1]) != 0; t++)
		;
	if (t->name == NULL) {
		fprintf(stderr, "fuzz-replay: unknown target '%s'\n", argv[1]);
		return 2;
	}
	t->init(&argc, &argv);
	for (i = 2; i < argc; i++) {
		if (aoe_read_file(argv[i], &d, &n) < 0) {
			fprintf(stderr, "fuzz-replay: %s\n", aoe_errmsg());
			return 1;
		}
		t->one(d, n);
		free(d);
		printf("replayed %s\n", argv[i]);
	}
	return 0;
}
