/*
 * unit-bank - the bank as libaoe sees it: signatures and keys, a hit that
 * fills a node's schedule, a key collision that is ignored, another
 * soc_version that is ignored, and the cost of loading a 100,000-entry
 * bank and of one lookup (printed as TAP comments, never asserted).
 *
 *   unit-bank example.onnx scratch-dir
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

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
	    "\"schedule\":{\"algo\":2,\"mr\":%d,\"nr\":24},\"time_us\":1,"
	    "\"baseline_us\":2,"
	    "\"soc_version\":\"%s\",\"tool_version\":\"0.1.0\","
	    "\"kernels\":%d,\"measured_at\":\"2026-01-01T00:00:00Z\","
	    "\"method\":\"opat\"}\n", key, sig, mr, soc, AOE_KERNELS_GEN);
}

/*
 * Two signatures whose keys collide (FNV-1a 64), found by a
 * distinguished-point search; their key is COLL_KEY.
 */
#define COLL_A "op=Coll;x=gx_hWj5-_tD"
#define COLL_B "op=Coll;x=1G3Hit4e1zN"
#define COLL_KEY "7437456561278525869"

/*
 * A real signature of case n (a Relu of n elements at two threads): a
 * committed schedule must lie in the space rebuilt from it.
 */
#define SIG(n) "op=Relu;threads=2;in=float32[1," #n "];out=float32[1," #n \
	"];attrs="

/* A tuning record of aoe-opat, parsed; sig NULL: sig's key, wrong. */
static cJSON *
record(const char *outcome, const char *sig, const char *soc, double after)
{
	char buf[1024], key[32];

	snprintf(key, sizeof(key), "%llu", (unsigned long long)aoe_op_key(sig));
	snprintf(buf, sizeof(buf), "{\"kind\":\"opat\",\"outcome\":\"%s\","
	    "\"key\":\"%s\",\"op_type\":\"Conv\",\"signature\":\"%s\","
	    "\"schedule\":{\"nthreads\":1},\"after_us\":%g,\"before_us\":10,"
	    "\"soc_version\":\"%s\"}", outcome, key, sig, after, soc);
	return cJSON_Parse(buf);
}

static long
lines(const char *path)
{
	FILE *fp = fopen(path, "r");
	long n = 0;
	int ch;

	if (fp == NULL)
		return -1;
	while ((ch = getc(fp)) != EOF)
		n += ch == '\n';
	fclose(fp);
	return n;
}

static int
same_file(const char *a, const char *b)
{
	uint8_t *x = NULL, *y = NULL;
	size_t nx, ny;
	int same;

	same = aoe_read_file(a, &x, &nx) == 0 && aoe_read_file(b, &y, &ny) ==
	    0 && nx == ny && memcmp(x, y, nx) == 0;
	free(x);
	free(y);
	return same;
}

static void
copy_file(const char *from, const char *to)
{
	uint8_t *d = NULL;
	size_t n = 0;
	FILE *fp;

	if (aoe_read_file(from, &d, &n) == 0 && (fp = fopen(to, "w"))) {
		fwrite(d, 1, n, fp);
		fclose(fp);
	}
	free(d);
}

static void
note_time(void *arg, const aoe_bank_entry *e)
{
	*(double *)arg = e->time_us;
}

/* The time of key's entry in o's bank, or -1. */
static double
time_of(const aoe_bank_opts *o, const char *sig)
{
	uint64_t k = aoe_op_key(sig);
	double t = -1;

	if (aoe_bank_show(o, &k, 1, note_time, &t) != 1)
		return -1;
	return t;
}

static void
test_commit(const char *dir)
{
	char bank[4000], file[4096], gfile[4096], keep[4096];
	aoe_bank_counts c[2];
	aoe_bank_opts o;
	aoe_bank_batch *b;
	cJSON *r[4];
	char why[256];
	int i, rc;

	snprintf(bank, sizeof(bank), "%s/cb", dir);
	snprintf(file, sizeof(file), "%s/ops.jsonl", bank);
	snprintf(gfile, sizeof(gfile), "%s/graphs.jsonl", bank);
	snprintf(keep, sizeof(keep), "%s/cb-before", dir);
	aoe_bank_opts_init(&o);
	o.bank = bank;

	/* Two added, a reserved one and the model record skipped. */
	r[0] = record("add", SIG(4), "unitsoc", 5);
	r[1] = record("add", SIG(9), "unitsoc", 6);
	r[2] = record("reserved", SIG(5), "unitsoc", 5);
	r[3] = cJSON_Parse("{\"kind\":\"model\",\"before_us\":1}");
	rc = aoe_bank_commit_records(&o, (const cJSON *const *)r, 4, c);
	ok(rc == 0 && c[0].added == 2 && c[0].updated == 0 &&
	    c[0].skipped == 2 && c[0].total == 2 && strcmp(c[0].file,
	    file) == 0 && c[1].file[0] == '\0' && lines(file) == 2,
	    "commit: two records added, two skipped, into the bank's file");
	for (i = 0; i < 4; i++)
		cJSON_Delete(r[i]);

	/* Admission: a faster update replaces, a slower one is kept. */
	r[0] = record("update", SIG(4), "unitsoc", 3);
	rc = aoe_bank_commit_records(&o, (const cJSON *const *)r, 1, c);
	ok(rc == 0 && c[0].updated == 1 && c[0].added == 0 &&
	    c[0].total == 2 && time_of(&o, SIG(4)) == 3,
	    "commit: a faster update replaces the entry");
	cJSON_Delete(r[0]);
	r[0] = record("update", SIG(4), "unitsoc", 4);
	rc = aoe_bank_commit_records(&o, (const cJSON *const *)r, 1, c);
	ok(rc == 0 && c[0].kept == 1 && c[0].updated == 0 &&
	    time_of(&o, SIG(4)) == 3,
	    "commit: a slower update is kept out (not faster)");
	cJSON_Delete(r[0]);

	/* The batch: reserved is skipped (1), add held (0). */
	b = aoe_bank_batch_new(&o);
	r[0] = record("reserved", SIG(6), "unitsoc", 1);
	r[1] = record("unsatisfied", SIG(6), "unitsoc", 1);
	r[2] = record("add", SIG(6), "unitsoc", 1);
	ok(aoe_bank_batch_add(b, r[0], why, sizeof(why)) == 1 &&
	    aoe_bank_batch_add(b, r[1], why, sizeof(why)) == 1 &&
	    aoe_bank_batch_add(b, r[2], why, sizeof(why)) == 0 &&
	    aoe_bank_batch_commit(b, c) == 0 && c[0].added == 1 &&
	    c[0].skipped == 2 && c[0].total == 3,
	    "batch: reserved and unsatisfied skipped, add committed");
	aoe_bank_batch_free(b);
	for (i = 0; i < 3; i++)
		cJSON_Delete(r[i]);

	/*
	 * A record whose signature libaoe cannot read (two such collide:
	 * lookups ignore a collision, see test_lookup) has no space its
	 * schedule could be checked in: refused, the bank untouched.
	 */
	copy_file(file, keep);
	r[0] = record("add", COLL_B, "unitsoc", 1);
	rc = aoe_bank_commit_records(&o, (const cJSON *const *)r, 1, c);
	ok(rc == -AOE_EDATA && strstr(aoe_errmsg(), "record 1: key "
	    COLL_KEY " (Conv): illegal schedule: signature:") &&
	    same_file(file, keep) && aoe_op_key(COLL_A) == aoe_op_key(COLL_B) &&
	    strtoull(COLL_KEY, NULL, 10) == aoe_op_key(COLL_A),
	    "commit: a record whose signature names no space is refused");
	cJSON_Delete(r[0]);
	/* One outside its space, naming key, op and knob. */
	r[0] = record("add", SIG(10), "unitsoc", 1);
	cJSON_ReplaceItemInObject(r[0], "schedule",
	    cJSON_Parse("{\"bogus_knob\":5}"));
	r[1] = record("add", SIG(11), "unitsoc", 1);
	cJSON_ReplaceItemInObject(r[1], "schedule",
	    cJSON_Parse("{\"nthreads\":7}"));
	rc = aoe_bank_commit_records(&o, (const cJSON *const *)r, 1, c);
	ok(rc == -AOE_EDATA && strstr(aoe_errmsg(), "record 1: key ") &&
	    strstr(aoe_errmsg(), "(Conv): illegal schedule: Relu has no knob "
	    "'bogus_knob'") && same_file(file, keep),
	    "commit: an unknown knob is refused, the bank untouched");
	rc = aoe_bank_commit_records(&o, (const cJSON *const *)r + 1, 1, c);
	ok(rc == -AOE_EDATA && strstr(aoe_errmsg(), "nthreads=7 is not a "
	    "legal value") && same_file(file, keep),
	    "commit: a value off its knob's list is refused");
	cJSON_Delete(r[0]);
	cJSON_Delete(r[1]);

	/* Bad records: nothing is written. */
	r[0] = record("add", SIG(7), "unitsoc", 1);
	r[1] = record("add", SIG(8), "unitsoc", 1);
	cJSON_ReplaceItemInObject(r[1], "key", cJSON_CreateString("12345"));
	rc = aoe_bank_commit_records(&o, (const cJSON *const *)r, 2, c);
	ok(rc == -AOE_EDATA && strstr(aoe_errmsg(), "record 2: key 12345 "
	    "does not match its signature") && same_file(file, keep),
	    "commit: a record whose key is not its signature's is refused, "
	    "the bank untouched");
	cJSON_Delete(r[1]);
	r[1] = record("add", SIG(8), "othersoc", 1);
	rc = aoe_bank_commit_records(&o, (const cJSON *const *)r, 2, c);
	ok(rc == -AOE_EDATA && strstr(aoe_errmsg(), "soc_version 'othersoc' "
	    "is not the bank's 'unitsoc'") && same_file(file, keep),
	    "commit: a record of another soc_version is refused");
	cJSON_Delete(r[1]);
	r[1] = record("bogus", SIG(8), "unitsoc", 1);
	rc = aoe_bank_commit_records(&o, (const cJSON *const *)r, 2, c);
	ok(rc == -AOE_EDATA && strstr(aoe_errmsg(), "unknown outcome") &&
	    same_file(file, keep), "commit: an unknown outcome is refused");
	cJSON_Delete(r[1]);
	cJSON_DeleteItemFromObject(r[0], "schedule");
	cJSON_AddItemToObject(r[0], "schedule", cJSON_Parse("{\"mr\":1.5}"));
	rc = aoe_bank_commit_records(&o, (const cJSON *const *)r, 1, c);
	ok(rc == -AOE_EDATA && strstr(aoe_errmsg(), "record 1: schedule "
	    "knob 'mr' is not an integer") && same_file(file, keep),
	    "commit: a record with a bad schedule is refused");
	cJSON_Delete(r[0]);

	/* A subgraph record goes to the subgraph bank alone. */
	r[0] = cJSON_CreateObject();
	{
		const char *sg = "sgat1;threads=2;nodes=2 >> "
		    "op=Conv >> op=Relu";
		char k[32];
		snprintf(k, sizeof(k), "%llu",
		    (unsigned long long)aoe_op_key(sg));
		cJSON_AddStringToObject(r[0], "kind", "sgat");
		cJSON_AddStringToObject(r[0], "outcome", "add");
		cJSON_AddStringToObject(r[0], "repo_key", k);
		cJSON_AddStringToObject(r[0], "subgraph", "s0");
		cJSON_AddStringToObject(r[0], "signature", sg);
		cJSON_AddItemToObject(r[0], "schedule",
		    cJSON_Parse("{\"fuse_bn\":1}"));
		cJSON_AddNumberToObject(r[0], "after_us", 1);
		cJSON_AddNumberToObject(r[0], "before_us", 2);
		cJSON_AddStringToObject(r[0], "soc_version", "unitsoc");
	}
	o.graphs = 1;
	rc = aoe_bank_commit_records(&o, (const cJSON *const *)r, 1, c);
	ok(rc == 0 && c[0].file[0] == '\0' && c[1].added == 1 &&
	    strcmp(c[1].file, gfile) == 0 && lines(gfile) == 1 &&
	    same_file(file, keep), "commit: a subgraph record goes to the "
	    "subgraph bank");
	cJSON_Delete(r[0]);
}

/* The shared schedule parser's answers. */
static int
sched_why(const char *json, const char *want)
{
	cJSON *j = cJSON_Parse(json);
	char why[256] = "";
	aoe_sched s;
	int rc;

	rc = aoe_sched_from_json(j, &s, why, sizeof(why));
	cJSON_Delete(j);
	if (want == NULL)
		return rc == 0;
	if (rc != -AOE_EDATA || s.n != 0 || strstr(why, want) == NULL) {
		printf("# %s: %d, '%s'\n", json, rc, why);
		return 0;
	}
	return 1;
}

static void
test_sched(void)
{
	char big[2048], msg[64], *p;
	aoe_sched s;
	cJSON *j;
	int i;

	j = cJSON_Parse("{\"mr\":4,\"nr\":-16,"
	    "\"batch_par\":-9223372036854775808}");
	ok(aoe_sched_from_json(j, &s, NULL, 0) == 0 && s.n == 3 &&
	    aoe_sched_get(&s, "nr", 0) == -16 &&
	    aoe_sched_get(&s, "batch_par", 0) == INT64_MIN,
	    "schedule: integer knobs, down to INT64_MIN");
	cJSON_Delete(j);
	ok(aoe_sched_from_json(NULL, &s, NULL, 0) == -AOE_EDATA &&
	    sched_why("[1,2]", "\"schedule\" is not an object") &&
	    sched_why("4", "not an object"),
	    "schedule: missing, or not an object, is refused");
	ok(sched_why("{\"mr\":1.5}", "knob 'mr' is not an integer") &&
	    sched_why("{\"mr\":\"4\"}", "knob 'mr' is not an integer") &&
	    sched_why("{\"mr\":true}", "knob 'mr' is not an integer") &&
	    sched_why("{\"mr\":9223372036854775808}", "not an integer") &&
	    sched_why("{\"mr\":1e300}", "not an integer"),
	    "schedule: a value not an integer in int64 range is refused");
	ok(sched_why("{\"\":1}", "empty, too long") &&
	    sched_why("{\"abcdefghijklmnopqrstuvwx\":1}", "too long") &&
	    sched_why("{\"m r\":1}", "not of [A-Za-z0-9_]") &&
	    sched_why("{\"abcdefghijklmnopqrstuvw\":1}", NULL),
	    "schedule: a knob name must fit AOE_KNOB_NAME, of [A-Za-z0-9_]");
	ok(sched_why("{\"mr\":1,\"mr\":2}", "knob 'mr' appears twice"),
	    "schedule: a knob twice is refused");
	for (i = 0, p = big; i <= AOE_SCHED_MAX; i++)
		p += sprintf(p, "%s\"k%d\":%d", i ? "," : "{", i, i);
	strcpy(p, "}");
	snprintf(msg, sizeof(msg), "more than %d knobs", AOE_SCHED_MAX);
	ok(sched_why(big, msg),
	    "schedule: more than AOE_SCHED_MAX knobs is refused");
	p = strrchr(big, ',');
	strcpy(p, "}");
	ok(sched_why(big, NULL), "schedule: AOE_SCHED_MAX knobs are fine");
}

/* A subgraph bank entry for sig with decision knob = v. */
static void
gentry(const char *path, const char *sig, const char *knob, int v)
{
	FILE *fp = fopen(path, "a");

	if (fp == NULL)
		return;
	fprintf(fp, "{\"key\":\"%llu\",\"subgraph\":\"s\",\"signature\":"
	    "\"%s\",\"schedule\":{\"%s\":%d},\"time_us\":1,"
	    "\"baseline_us\":2,\"soc_version\":\"unitsoc\","
	    "\"tool_version\":\"0.1.0\",\"kernels\":%d,\"measured_at\":"
	    "\"2026-01-01T00:00:00Z\",\"method\":\"sgat\"}\n",
	    (unsigned long long)aoe_op_key(sig), sig, knob, v,
	    AOE_KERNELS_GEN);
	fclose(fp);
}

/* Chain signatures of two nodes (aoe_sgat_signature's form). */
#define GSIG(x) "sgat1;threads=2;nodes=2 >> op=" x " >> op=Relu"

/* The subgraph bank: custom ($TUNE_BANK_PATH), then built-in. */
static void
test_graph_bank(const char *dir)
{
	char tb[4000], bi[4000], f[4096];
	aoe_sched d;

	snprintf(tb, sizeof(tb), "%s/gtb", dir);
	snprintf(bi, sizeof(bi), "%s/gbi", dir);
	mkdir(tb, 0777);
	mkdir(bi, 0777);
	snprintf(f, sizeof(f), "%s/unitsoc", bi);
	mkdir(f, 0777);
	snprintf(f, sizeof(f), "%s/unitsoc/graphs.jsonl", bi);
	gentry(f, GSIG("A"), "serial", 2);
	gentry(f, GSIG("B"), "serial", 3);
	gentry(f, GSIG("C"), "serial", 1);
	snprintf(f, sizeof(f), "%s/graphs.jsonl", tb);
	gentry(f, GSIG("A"), "serial", 1);
	gentry(f, GSIG("C"), "layout", 3);
	gentry(f, GSIG("D"), "serial", 4);
	setenv("TUNE_BANK_PATH", tb, 1);
	setenv("AOE_BUILTIN_BANK", bi, 1);
	aoe_bank_graph_use(NULL);
	ok(aoe_bank_graph_entries() == 6 &&
	    aoe_bank_graph_find(GSIG("A"), &d) &&
	    aoe_sched_get(&d, "serial", 0) == 1,
	    "subgraph bank: the custom entry wins over the built-in one");
	ok(aoe_bank_graph_find(GSIG("B"), &d) &&
	    aoe_sched_get(&d, "serial", 0) == 3 &&
	    !aoe_bank_graph_find(GSIG("E"), &d),
	    "subgraph bank: a miss in the custom bank falls through to the "
	    "built-in one");
	ok(aoe_bank_graph_find(GSIG("C"), &d) &&
	    aoe_sched_get(&d, "serial", 0) == 1 &&
	    aoe_sched_get(&d, "layout", 0) == 0 &&
	    !aoe_bank_graph_find(GSIG("D"), &d),
	    "subgraph bank: decisions outside their space (layout 3, serial "
	    "4 of two nodes) are ignored");
	unsetenv("TUNE_BANK_PATH");
	unsetenv("AOE_BUILTIN_BANK");
	aoe_bank_graph_use(NULL);
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
	puts("1..34");
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
	test_commit(argv[2]);
	test_graph_bank(argv[2]);
	test_sched();
	return 0;
}
