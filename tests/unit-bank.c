/*
 * unit-bank - the bank as libaoe sees it: signatures and keys, a hit that
 * fills a node's schedule, a key collision that is ignored, another
 * soc_version that is ignored, and the cost of loading a 100,000-entry
 * bank and of one lookup (printed as TAP comments, never asserted).
 *
 *   unit-bank example.onnx scratch-dir
 */
#include <stdlib.h>
#include <string.h>

#include "aoe.h"
#include "bank.h"

static int nt;

static void
ok(int cond, const char *what)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", ++nt, what);
}

static void
entry(FILE *fp, const char *key, const char *sig, const char *soc, int mr)
{
	fprintf(fp, "{\"key\":\"%s\",\"op_type\":\"X\",\"signature\":\"%s\","
	    "\"schedule\":{\"mr\":%d},\"time_us\":1,\"baseline_us\":2,"
	    "\"soc_version\":\"%s\",\"tool_version\":\"0.1.0\","
	    "\"measured_at\":\"2026-01-01T00:00:00Z\",\"method\":\"opat\"}\n",
	    key, sig, mr, soc);
}

int
main(int argc, char **argv)
{
	char path[4096], big[4096], sig[3][8192], k[3][32], s2[8192];
	aoe_run_opts o;
	aoe_graph *g = NULL;
	aoe_sched s;
	const char *from;
	double t0, t1;
	FILE *fp;
	int i, live[3], nl = 0;

	if (argc != 3)
		return 2;
	setenv("AOE_SOC_VERSION", "unitsoc", 1);
	puts("1..12");
	if (aoe_model_load(argv[1], &g) < 0) {
		printf("Bail out! %s\n", aoe_errmsg());
		return 1;
	}
	aoe_run_opts_init(&o);
	o.use_bank = 0;
	o.nthreads = 2;
	ok(aoe_graph_prepare(g, &o) == 0, "prepare without the bank");
	for (i = 0; i < g->norder && nl < 3; i++)
		if (!g->nodes[g->order[i]].dead)
			live[nl++] = g->order[i];
	ok(nl == 3, "three live nodes");
	for (i = 0; i < 3; i++) {
		aoe_op_signature(g, &g->nodes[live[i]], 2, sig[i],
		    sizeof(sig[i]));
		snprintf(k[i], sizeof(k[i]), "%llu",
		    (unsigned long long)aoe_op_key(sig[i]));
	}
	ok(strstr(sig[0], g->nodes[live[0]].name) == NULL &&
	    strncmp(sig[0], "op=", 3) == 0 && strstr(sig[0], ";threads=2;"),
	    "the signature has the op type and threads, not the node name");
	aoe_op_signature(g, &g->nodes[live[0]], 1, s2, sizeof(s2));
	ok(aoe_op_key(s2) != aoe_op_key(sig[0]),
	    "another thread count is another key");
	ok(aoe_op_key("") == 0xcbf29ce484222325ULL &&
	    aoe_op_key("a") == 0xaf63dc4c8601ec8cULL,
	    "the key is FNV-1a 64");

	/* A bank: a hit, a collision (same key, other signature), a soc. */
	snprintf(path, sizeof(path), "%s/ops.jsonl", argv[2]);
	fp = fopen(path, "w");
	entry(fp, k[0], sig[0], "unitsoc", 4);
	entry(fp, k[1], "op=Other;threads=2", "unitsoc", 4);
	entry(fp, k[2], sig[2], "othersoc", 4);
	fclose(fp);
	aoe_bank_use(path, NULL);
	o.use_bank = 1;
	ok(aoe_graph_prepare(g, &o) == 0, "prepare with the bank");
	ok(g->nodes[live[0]].sched_from_bank == 1 &&
	    aoe_sched_get(&g->nodes[live[0]].sched, "mr", 0) == 4,
	    "a hit fills the node's schedule");
	ok(g->nodes[live[1]].sched_from_bank == 0,
	    "a key collision is ignored");
	ok(g->nodes[live[2]].sched_from_bank == 0,
	    "an entry of another soc_version is ignored");
	aoe_bank_find(g, &g->nodes[live[1]], 2, &s, &from);
	ok(strcmp(from, "collision") == 0, "lookup reports the collision");

	/* 100,000 entries: load time and lookup cost. */
	snprintf(big, sizeof(big), "%s/big.jsonl", argv[2]);
	fp = fopen(big, "w");
	for (i = 0; i < 100000; i++) {
		char ks[32], sg[64];
		snprintf(ks, sizeof(ks), "%llu", (unsigned long long)i *
		    (UINT64_MAX / 100000));
		snprintf(sg, sizeof(sg), "op=Conv;threads=2;in=%d", i);
		entry(fp, ks, sg, "unitsoc", i % 8);
	}
	fclose(fp);
	t0 = aoe_now_us();
	aoe_bank_use(big, path);
	ok(aoe_bank_loaded_entries() == 100003, "a 100,000-entry bank loads");
	t1 = aoe_now_us();
	printf("# load of a 100,000-entry bank: %.1f ms\n", (t1 - t0) / 1000);
	t0 = aoe_now_us();
	for (i = 0; i < 10000; i++)
		aoe_bank_find(g, &g->nodes[live[i % 3]], 2, &s, &from);
	t1 = aoe_now_us();
	printf("# lookup (signature, search, parse on a hit): %.2f us/op\n",
	    (t1 - t0) / 10000);
	aoe_bank_find(g, &g->nodes[live[0]], 2, &s, &from);
	ok(strcmp(from, "built-in") == 0 && aoe_sched_get(&s, "mr", 0) == 4,
	    "a miss in the custom bank falls through to the built-in one");
	aoe_graph_free(g);
	return 0;
}
