/*
 * fuzz_bank - a bank file (aoe-bank(5)) as the custom bank: loaded and
 * looked up for every node of one of the models (models.h; the input's
 * length picks it), a hit's schedule checked against the node's space, a
 * graph with hits prepared from the bank and run; then verify, list and
 * stats over the same file.
 *
 * With AOE_FUZZ_SEEDS=dir it writes seed banks and records (entries for
 * the models' nodes) into dir and exits.
 */
#include <cjson/cJSON.h>

#include "models.h"
#include "opat.h"

static char bank_empty[1024];

static int
cmp_line(const void *a, const void *b)
{
	unsigned long long x = strtoull(*(char *const *)a + 8, NULL, 10);
	unsigned long long y = strtoull(*(char *const *)b + 8, NULL, 10);

	return x < y ? -1 : x > y;
}

/* Seeds: a bank of each node's default and a sampled schedule, records. */
static void
seeds(const char *dir)
{
	char path[1200], sig[65536], *lines[4096], buf[70000];
	int gi, i, nl = 0, k;
	uint64_t seed = 42;
	FILE *bank, *recs;

	snprintf(path, sizeof(path), "%s/records.jsonl", dir);
	if ((recs = fopen(path, "w")) == NULL)
		exit(1);
	for (gi = 0; gi < fz_ng; gi++) {
		aoe_graph *g = fz_g[gi];
		for (i = 0; i < g->norder; i++) {
			aoe_node *n = &g->nodes[g->order[i]];
			aoe_space sp;
			aoe_sched s;
			char *js;
			if (aoe_space_for(g, n, &sp) < 0 ||
			    aoe_op_signature(g, n, 1, sig, sizeof(sig)) < 0)
				continue;
			for (k = 0; k < 2 && nl < 4096; k++) {
				cJSON *j;
				s = sp.def;
				if (k && aoe_space_sample(&sp, &seed, &s) < 0)
					continue;
				j = opat_sched_json(&s);
				js = cJSON_PrintUnformatted(j);
				cJSON_Delete(j);
				snprintf(buf, sizeof(buf), "{\"key\":\"%llu\","
				    "\"op_type\":\"%s\",\"signature\":\"%s\","
				    "\"schedule\":%s,\"time_us\":%d,"
				    "\"baseline_us\":10,\"soc_version\":\"%s\","
				    "\"tool_version\":\"%s\",\"measured_at\":"
				    "\"2026-01-01T00:00:00Z\",\"method\":"
				    "\"opat\"}", (unsigned long long)
				    aoe_op_key(sig), n->op_type, sig, js, 5 + k,
				    aoe_soc_version(), AOE_VERSION);
				if (k == 0)
					lines[nl++] = aoe_xstrdup(buf);
				fprintf(recs, "{\"kind\":\"opat\",\"outcome\":"
				    "\"%s\",\"key\":\"%llu\",\"op_type\":\"%s\","
				    "\"names\":[\"%s\"],\"signature\":\"%s\","
				    "\"schedule\":%s,\"before_us\":10,"
				    "\"after_us\":%d,\"soc_version\":\"%s\","
				    "\"threads\":1}\n", k ? "update" : "add",
				    (unsigned long long)aoe_op_key(sig),
				    n->op_type, n->name, sig, js, 5 + k,
				    aoe_soc_version());
				free(js);
			}
		}
	}
	fprintf(recs, "{\"kind\":\"model\",\"baseline_us\":100,"
	    "\"result_us\":90}\n");
	fclose(recs);
	qsort(lines, nl, sizeof(char *), cmp_line);
	snprintf(path, sizeof(path), "%s/bank.jsonl", dir);
	if ((bank = fopen(path, "w")) == NULL)
		exit(1);
	for (i = 0; i < nl; i++) {
		/* One key once: a second line of a key is not sorted data. */
		if (i == 0 || cmp_line(&lines[i - 1], &lines[i]) != 0)
			fprintf(bank, "%s\n", lines[i]);
		free(lines[i]);
	}
	fclose(bank);
	exit(0);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *sd = getenv("AOE_FUZZ_SEEDS");

	fz_init();
	fz_load_models(0);
	if (sd)
		seeds(sd);
	fz_write("bank_empty.jsonl", (const uint8_t *)"", 0, bank_empty,
	    sizeof(bank_empty));
	return 0;
}

/*
 * The hits of a model already prepared and run: the schedules a bank
 * gives a model decide what preparing it from the bank does, so a set of
 * hits seen before (most mutations leave a model's hits as they were) is
 * not prepared and run again.  A table of their hashes, cleared when full.
 */
#define SEEN_SIZE (1 << 16)
static uint64_t seen[SEEN_SIZE];
static int nseen;

static uint64_t
sched_hash(uint64_t h, int node, const aoe_sched *s)
{
	int j;

	h = aoe_fnv1a(h, &node, sizeof(node));
	for (j = 0; j < s->n && j < AOE_SCHED_MAX; j++) {
		h = aoe_fnv1a(h, s->k[j].name, strnlen(s->k[j].name,
		    sizeof(s->k[j].name)));
		h = aoe_fnv1a(h, &s->k[j].v, sizeof(s->k[j].v));
	}
	return h;
}

/* 1: h was seen before; else remembered. */
static int
seen_before(uint64_t h)
{
	size_t i;

	h |= 1;		/* 0 is a free slot */
	for (i = h % SEEN_SIZE; seen[i]; i = (i + 1) % SEEN_SIZE)
		if (seen[i] == h)
			return 1;
	if (nseen >= SEEN_SIZE / 2) {
		memset(seen, 0, sizeof(seen));
		nseen = 0;
		i = h % SEEN_SIZE;
	}
	seen[i] = h;
	nseen++;
	return 0;
}

static void
bank_bad(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

static void
bank_each(void *arg, const aoe_bank_entry *e)
{
	(void)arg;
	(void)e;
}

int
LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	char path[1024], why[256];
	aoe_bank_opts o;
	aoe_bank_counts c;
	aoe_bank_stats st;
	int gi, i, hits;
	uint64_t h;

	if (n > 256 * 1024)
		return 0;
	fz_write("in.jsonl", d, n, path, sizeof(path));
	aoe_bank_use(path, bank_empty);
	/*
	 * One model an input: lookups in all of them (a signature and a
	 * search for each node) took most of an input's time, and a byte
	 * flip keeps the length, so mutations explore one model's hits.
	 */
	for (gi = (int)(n % (size_t)fz_ng); gi < fz_ng; gi = fz_ng) {
		aoe_graph *g = fz_g[gi];
		hits = 0;
		h = aoe_fnv1a(14695981039346656037ULL, &gi, sizeof(gi));
		for (i = 0; i < g->norder; i++) {
			aoe_node *nd = &g->nodes[g->order[i]];
			aoe_space sp;
			aoe_sched s;
			const char *from;
			if (aoe_bank_find(g, nd, 1, &s, &from) != 1)
				continue;
			hits++;
			h = sched_hash(h, g->order[i], &s);
			/* A hit is a legal point of the node's space. */
			if (aoe_space_for(g, nd, &sp) == 0 &&
			    aoe_space_validate(&sp, &s, why, sizeof(why)) < 0) {
				fprintf(stderr, "%s '%s': bank hit with an "
				    "illegal schedule: %s\n", nd->op_type,
				    nd->name, why);
				abort();
			}
		}
		if (hits && !seen_before(h)) {
			/*
			 * The same model prepared from the bank runs as it
			 * does without it.
			 */
			aoe_graph *h;
			aoe_run_opts ro = fz_ro;
			/* Not when it fails on its own (data, not schedule). */
			if (!fz_runs[gi] || aoe_model_load(fz_path[gi], &h) < 0)
				continue;
			ro.use_bank = 1;
			fz_ro.use_bank = 1;
			if (fz_prepare(h) == 0 && aoe_graph_run(h, &ro) < 0) {
				fprintf(stderr, "%s: does not run with the "
				    "bank's schedules: %s\n", fz_path[gi],
				    aoe_errmsg());
				abort();
			}
			fz_ro.use_bank = 0;
			aoe_graph_free(h);
		}
	}
	aoe_bank_opts_init(&o);
	o.quiet = 1;
	(void)aoe_bank_verify(&o, path, bank_bad, NULL, &c);
	(void)aoe_bank_list(&o, path, bank_each, NULL);
	memset(&st, 0, sizeof(st));
	if (aoe_bank_stats_of(&o, path, &st) == 0)
		aoe_bank_stats_free(&st);
	return 0;
}
