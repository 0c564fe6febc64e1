/*
 * bankgen - make synthetic tuning records or bank files for the tests of
 * aoe-bank and for bench/bank-bench.sh.
 *
 *   bankgen records|bank N FIRST SOC [SCALE [OUTCOME]]
 *
 * writes N records (in a shuffled order) or N bank entries (sorted by
 * key) for the cases FIRST .. FIRST+N-1; case i has a fixed signature, so
 * two runs with overlapping ranges share keys.  Times are the baseline
 * times multiplied by SCALE (default 0.5).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aoe.h"

static const char *const types[] = { "Conv", "MatMul", "Gemm", "Add",
	"Relu", "Softmax" };

typedef struct item {
	uint64_t key;
	long i;
} item;

static int
cmp(const void *a, const void *b)
{
	const item *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/*
 * Real signatures (aoe-bank checks each schedule against the space it
 * rebuilds from the signature), distinct for each case: the dimension d
 * is the case's.
 */
static void
sig_of(long i, char *buf, size_t len)
{
	long d = i + 1;

	switch (i % 6) {
	case 0:
		snprintf(buf, len, "op=Conv;threads=1;in=float32[1,%ld,8,8]|"
		    "float32[%ld,%ld,3,3]c;out=float32[1,%ld,6,6];attrs="
		    "group:i=1;kernel_shape:is=[3,3]", d, i % 89 + 1, d,
		    i % 89 + 1);
		break;
	case 1:
		snprintf(buf, len, "op=MatMul;threads=1;in=float32[%ld,64]|"
		    "float32[64,32]c;out=float32[%ld,32];attrs=", d, d);
		break;
	case 2:
		snprintf(buf, len, "op=Gemm;threads=1;in=float32[%ld,64]|"
		    "float32[32,64]c|float32[32]c;out=float32[%ld,32];attrs="
		    "transB:i=1", d, d);
		break;
	default:
		snprintf(buf, len, "op=%s;threads=1;in=float32[1,%ld]%s;"
		    "out=float32[1,%ld];attrs=", types[i % 6], d,
		    i % 6 == 3 ? "|float32[1,1]c" : "", d);
		break;
	}
}

/* A legal schedule of every case: each space has the knob nthreads. */
static long
nthreads_of(long i)
{
	return i / 6 % 2;
}

int
main(int argc, char **argv)
{
	long long n, first;
	double scale = 0.5;
	const char *outcome = "add", *soc;
	char sig[512];
	item *v;
	long i;
	int records;

	if (argc < 5 || aoe_strtonum(argv[2], 0, 100000000, &n) < 0 ||
	    aoe_strtonum(argv[3], 0, 1000000000, &first) < 0) {
		fprintf(stderr, "usage: bankgen records|bank N FIRST SOC "
		    "[SCALE [OUTCOME]]\n");
		return 2;
	}
	records = strcmp(argv[1], "records") == 0;
	soc = argv[4];
	if (argc > 5)
		scale = atof(argv[5]);
	if (argc > 6)
		outcome = argv[6];
	v = aoe_xcalloc((size_t)n, sizeof(item));
	for (i = 0; i < n; i++) {
		sig_of(first + i, sig, sizeof(sig));
		v[i].key = aoe_op_key(sig);
		v[i].i = first + i;
	}
	if (records) {
		/* A fixed shuffle. */
		uint64_t s = 88172645463325252ULL;
		for (i = n - 1; i > 0; i--) {
			item t;
			long j;
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
			j = (long)(s % (uint64_t)(i + 1));
			t = v[i];
			v[i] = v[j];
			v[j] = t;
		}
	} else
		qsort(v, (size_t)n, sizeof(item), cmp);
	for (i = 0; i < n; i++) {
		double base = 100.0 + (double)(v[i].i % 1000);
		sig_of(v[i].i, sig, sizeof(sig));
		if (records)
			printf("{\"key\":\"%llu\",\"op_type\":\"%s\","
			    "\"names\":[\"n%ld\"],\"before_us\":%.1f,"
			    "\"after_us\":%.2f,\"schedule\":{"
			    "\"nthreads\":%ld},\"trials\":32,"
			    "\"tuning_time_s\":1.5,\"outcome\":\"%s\","
			    "\"signature\":\"%s\",\"soc_version\":\"%s\","
			    "\"measured_at\":\"2026-01-02T00:00:00Z\"}\n",
			    (unsigned long long)v[i].key, types[v[i].i % 6],
			    v[i].i, base, base * scale, nthreads_of(v[i].i),
			    outcome, sig, soc);
		else
			printf("{\"key\":\"%llu\",\"op_type\":\"%s\","
			    "\"signature\":\"%s\",\"schedule\":{"
			    "\"nthreads\":%ld},\"time_us\":%.2f,"
			    "\"baseline_us\":%.1f,\"soc_version\":\"%s\","
			    "\"tool_version\":\"0.1.0\",\"kernels\":%d,"
			    "\"measured_at\":\"2026-01-01T00:00:00Z\","
			    "\"method\":\"opat\"}\n",
			    (unsigned long long)v[i].key, types[v[i].i % 6],
			    sig, nthreads_of(v[i].i), base * scale, base, soc,
			    AOE_KERNELS_GEN);
	}
	free(v);
	return ferror(stdout) ? 1 : 0;
}
