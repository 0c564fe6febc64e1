/*
 * sgat.c - subgraph tuning: for each distinct chain of a graph (see
 * lib/fuse.c), measure the chain as a whole under each combination of
 * its decisions (fusions, thread count), keep the fastest only when it
 * beats the baseline beyond the noise, and time the whole model without
 * and with the decisions.
 *
 * Every measurement runs in a child process, as aoe-opat's do (and under
 * the same measure lock, opat_lock_path()): the child prepares the chain
 * without decisions on fresh random inputs for the reference, prepares
 * it again with the candidate's decisions, compares the outputs (a NaN
 * or a difference beyond the tolerance is "wrong"), and only then takes
 * the lock exclusively and times RUN_LOOP repeats.  A child that
 * crashes or outlives the time limit marks only its candidate.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "opat.h"
#include "sgat.h"

#define MIN_REP_US 200.0	/* a timed repeat runs this long */
#define MAXOUT 64

void
sgat_opts_init(sgat_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->run_loop = 10;
	o->use_bank = 1;
	o->timeout_s = 300;
	o->noise_floor = 0.02;
	o->seed = 1;
}

/* Compare the graph's outputs with the reference (opat_verify). */
static int
compare(aoe_graph *g, void **ref, char *why, size_t len)
{
	int i;

	for (i = 0; i < g->noutputs && i < MAXOUT; i++)
		if (ref[i] != NULL && opat_verify(g->tensors[g->outputs[i]],
		    ref[i], why, len) < 0)
			return -1;
	return 0;
}

/*
 * The measuring child: g under (mode, d), timed whole; or, with sig set,
 * g as aoe-run runs it with decisions d for the subgraphs of signature sig
 * (added to the table of decisions chosen so far), timing only the nodes named in
 * names inside each run.  Never returns.
 */
static void
child(aoe_graph *g, const aoe_run_opts *ro, int mode, const aoe_sched *d,
    int inject, uint64_t seed, const sgat_opts *o, const char *sig,
    const cJSON *names, int fd)
{
	aoe_run_opts pro = *ro, co = *ro;
	int *idx = NULL, nn = 0;
	char why[512], line[768];
	const char *fault = getenv("AOE_INJECT_FAULT");
	void *ref[MAXOUT];
	double *rep, t0, t1;
	int lk, gate, i, j, inner, n = o->run_loop;

	signal(SIGPIPE, SIG_DFL);
	lk = opat_child_lock(opat_lock_path(), &gate, fd);
	/* The reference: no decisions. */
	co.fuse_mode = AOE_FUSE_OFF;
	if (aoe_graph_prepare(g, &co) < 0 ||
	    (aoe_graph_fill_inputs(g, seed), aoe_graph_run(g, ro)) < 0) {
		snprintf(line, sizeof(line), "invalid the reference fails: "
		    "%s\n", aoe_errmsg());
		opat_say(fd, line);
		_exit(0);
	}
	memset(ref, 0, sizeof(ref));
	for (i = 0; i < g->noutputs && i < MAXOUT; i++) {
		aoe_tensor *t = g->tensors[g->outputs[i]];
		ref[i] = aoe_xmalloc(aoe_tensor_nbytes(t) + 1);
		memcpy(ref[i], t->data, aoe_tensor_nbytes(t));
	}
	/* This process is the child's own: the table may grow here. */
	co.fuse_mode = mode;
	if (d)
		co.fuse_force = *d;
	if (sig) {
		if (co.decisions == NULL)
			co.decisions = aoe_dtable_new();
		aoe_dtable_set(co.decisions, sig, d);
		co.fuse_mode = AOE_FUSE_BANK;
	}
	if (aoe_graph_prepare(g, &co) < 0) {
		snprintf(line, sizeof(line), "invalid %s\n", aoe_errmsg());
		opat_say(fd, line);
		_exit(0);
	}
	if (sig) {
		idx = aoe_xcalloc((size_t)g->norder + 1, sizeof(int));
		for (i = 0; i < g->norder; i++) {
			const cJSON *it;
			cJSON_ArrayForEach(it, names)
				if (cJSON_IsString(it) && strcmp(it->valuestring,
				    g->nodes[g->order[i]].name) == 0) {
					idx[nn++] = g->order[i];
					break;
				}
		}
		if (nn == 0) {
			opat_say(fd, "invalid no node of the subgraph runs in the "
			    "model\n");
			_exit(0);
		}
		pro.profile = 1;
	}
	aoe_graph_fill_inputs(g, seed);
	if (inject && fault && strncmp(fault, "crash", 5) == 0) {
		volatile int *volatile bad = NULL;
		*bad = 1;
	}
	if (aoe_graph_run(g, ro) < 0) {
		snprintf(line, sizeof(line), "invalid %s\n", aoe_errmsg());
		opat_say(fd, line);
		_exit(0);
	}
	if (inject && fault && strncmp(fault, "wrong", 5) == 0 &&
	    g->noutputs > 0) {
		aoe_tensor *t = g->tensors[g->outputs[0]];
		if (t->dtype == AOE_F32 && aoe_tensor_numel(t) > 0)
			((float *)t->data)[0] += 1.0f +
			    fabsf(((float *)t->data)[0]);
	}
	if (compare(g, ref, why, sizeof(why)) < 0) {
		snprintf(line, sizeof(line), "wrong %s\n", why);
		opat_say(fd, line);
		_exit(0);
	}
	/* Timed runs are exclusive on the host. */
	opat_child_exclusive(lk, gate, fd);
	t0 = aoe_now_us();
	aoe_graph_run(g, &pro);
	t1 = aoe_now_us() - t0;
	inner = t1 >= MIN_REP_US || sig ? 1 : (int)(MIN_REP_US /
	    (t1 > 1 ? t1 : 1));
	if (inner > 1000)
		inner = 1000;
	rep = aoe_xcalloc((size_t)n, sizeof(double));
	for (i = 0; i < n; i++) {
		for (j = 0; j < nn; j++)
			g->nodes[idx[j]].prof_us = 0;
		t0 = aoe_now_us();
		for (j = 0; j < inner; j++)
			aoe_graph_run(g, &pro);
		rep[i] = (aoe_now_us() - t0) / inner;
		/* In the model: the subgraph's nodes, all instances. */
		if (sig)
			for (rep[i] = 0, j = 0; j < nn; j++)
				rep[i] += g->nodes[idx[j]].prof_us;
	}
	flock(lk, LOCK_UN);
	flock(gate, LOCK_UN);
	opat_child_report(rep, n, inner, fd);
}

/* What the measuring child needs (see child). */
typedef struct meas_arg {
	aoe_graph *g;
	const aoe_run_opts *ro;
	int mode;
	const aoe_sched *d;
	int inject;
	uint64_t seed;
	const sgat_opts *o;
	const char *sig;
	const cJSON *names;
} meas_arg;

static void
meas_child(int i, int fd, void *arg)
{
	meas_arg *a = arg;

	child(a->g, a->ro, a->mode, a->d, a->inject, a->seed, a->o, a->sig,
	    a->names, fd);
}

/*
 * Measure g under (mode, d) in a child process; with sig set, in the
 * model (see child).
 */
static int
measure_in(aoe_graph *g, const aoe_run_opts *ro, int mode,
    const aoe_sched *d, int inject, uint64_t seed, const sgat_opts *o,
    const char *sig, const cJSON *names, opat_timing *t)
{
	meas_arg a;

	a.g = g;
	a.ro = ro;
	a.mode = mode;
	a.d = d;
	a.inject = inject;
	a.seed = seed;
	a.o = o;
	a.sig = sig;
	a.names = names;
	return opat_children_run(1, 1, o->timeout_s, meas_child, &a, t);
}

static int
measure(aoe_graph *g, const aoe_run_opts *ro, int mode, const aoe_sched *d,
    int inject, uint64_t seed, const sgat_opts *o, opat_timing *t)
{
	return measure_in(g, ro, mode, d, inject, seed, o, NULL, NULL, t);
}

static double
round6(double v)
{
	return round(v * 1e3) / 1e3;
}

/* Candidate decisions of one subgraph, at most. */
#define MAXCAND 128
#define CONFIRM 3		/* rounds confirming a winner in the model */

/* The decisions' knobs, in the order records list them. */
static const char *const dknobs[] = { "fuse_bn", "fuse_act", "fuse_add",
    "fuse_elem", "threads", "layout", "inplace", "serial", "split" };
#define NDKNOBS (int)(sizeof(dknobs) / sizeof(dknobs[0]))

static int
same_d(const aoe_sched *a, const aoe_sched *b)
{
	int i;

	for (i = 0; i < NDKNOBS; i++)
		if (aoe_sched_get(a, dknobs[i], 0) !=
		    aoe_sched_get(b, dknobs[i], 0))
			return 0;
	return 1;
}

static int
seen_d(const aoe_sched *c, int nc, const aoe_sched *d)
{
	int i;

	for (i = 0; i < nc; i++)
		if (same_d(&c[i], d))
			return 1;
	return 0;
}

static cJSON *
d_json(const aoe_sched *d)
{
	cJSON *o = cJSON_CreateObject();
	int i;

	for (i = 0; i < NDKNOBS; i++)
		cJSON_AddNumberToObject(o, dknobs[i],
		    (double)aoe_sched_get(d, dknobs[i], 0));
	return o;
}

/* Write a record line to out and to the journal (synced). */
static int
emit(cJSON *rec, FILE *out, FILE *jfp)
{
	char *s = cJSON_PrintUnformatted(rec);

	if (s == NULL)
		return aoe_err(AOE_ENOMEM, "out of memory");
	fprintf(out, "%s\n", s);
	fflush(out);
	if (jfp) {
		fprintf(jfp, "%s\n", s);
		if (fflush(jfp) != 0 || fsync(fileno(jfp)) != 0) {
			free(s);
			return aoe_err(AOE_EIO, "cannot write the journal: "
			    "%s", strerror(errno));
		}
	}
	free(s);
	return 0;
}

/* Finished subgraph records of an earlier run, by repo_key. */
static cJSON *
read_journal(const char *path, int must, int *rc)
{
	cJSON *done = cJSON_CreateObject();
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *fp;

	*rc = 0;
	if ((fp = fopen(path, "r")) == NULL) {
		if (must || errno != ENOENT)
			*rc = aoe_err(AOE_EIO, "cannot open journal '%s': %s",
			    path, strerror(errno));
		return done;
	}
	while ((n = getline(&line, &cap, fp)) > 0) {
		cJSON *j, *k, *kind;
		if (line[n - 1] != '\n')
			break;	/* a torn last line: that subgraph again */
		j = cJSON_Parse(line);
		kind = cJSON_GetObjectItemCaseSensitive(j, "kind");
		k = cJSON_GetObjectItemCaseSensitive(j, "repo_key");
		if (cJSON_IsString(kind) && strcmp(kind->valuestring,
		    "sgat") == 0 && cJSON_IsString(k)) {
			cJSON_DeleteItemFromObjectCaseSensitive(done,
			    k->valuestring);
			cJSON_AddItemToObject(done, k->valuestring, j);
		} else
			cJSON_Delete(j);
	}
	free(line);
	fclose(fp);
	return done;
}

typedef struct sub {
	char *sig;
	uint64_t key;
	int *nodes, n;		/* the first instance */
	cJSON *names;
	int instances;
} sub;

/*
 * Measure candidate d of subgraph sg, list it in cands, and make it the
 * best when it is faster; 0, or negative when nothing can be measured.
 */
static int
try_cand(aoe_graph *sg, const aoe_run_opts *ro, const aoe_sched *d,
    uint64_t seed, const sgat_opts *o, cJSON *cands, double *spent,
    int *trials, opat_timing *best, aoe_sched *best_d)
{
	cJSON *cj;
	opat_timing t;
	int rc;

	if ((rc = measure(sg, ro, AOE_FUSE_FORCE, d, 1, seed, o, &t)) < 0)
		return rc;
	*spent += t.cost_s;
	(*trials)++;
	cj = cJSON_CreateObject();
	cJSON_AddItemToObject(cj, "schedule", d_json(d));
	cJSON_AddStringToObject(cj, "status", opat_status_name(t.status));
	if (t.status == OPAT_OK) {
		cJSON_AddNumberToObject(cj, "us", round6(t.us));
		cJSON_AddNumberToObject(cj, "spread", round6(t.spread));
	} else
		cJSON_AddStringToObject(cj, "reason", t.reason);
	cJSON_AddItemToArray(cands, cj);
	if (t.status == OPAT_OK && t.us < best->us) {
		*best = t;
		*best_d = *d;
	}
	return 0;
}

/* Tune one subgraph; returns its record. */
static cJSON *
tune_one(aoe_graph *g, sub *s, const aoe_run_opts *ro, const sgat_opts *o,
    int nthreads, aoe_sched *chosen, int *keep)
{
	cJSON *rec = cJSON_CreateObject(), *cands, *types;
	aoe_graph *sg = NULL;
	aoe_sched base_d, cand[MAXCAND], best_d;
	opat_timing base, best, b2, a2;
	char kb[32], first[512], when[32];
	const char *outcome;
	double spent = 0, before, after, noise, sb, sa;
	int hit, nc = 0, bn, act, add, th, nbn, nact, nadd, i, trials = 0;
	int lay, nlay, inpl, ninpl, el, nel;
	int rc;
	uint64_t seed = o->seed ^ s->key;

	snprintf(kb, sizeof(kb), "%llu", (unsigned long long)s->key);
	snprintf(first, sizeof(first), "%s..%s", g->nodes[s->nodes[0]].name,
	    g->nodes[s->nodes[s->n - 1]].name);
	aoe_iso_now(when, sizeof(when));
	cJSON_AddStringToObject(rec, "kind", "sgat");
	cJSON_AddStringToObject(rec, "repo_key", kb);
	cJSON_AddStringToObject(rec, "subgraph", first);
	types = cJSON_AddArrayToObject(rec, "op_types");
	for (i = 0; i < s->n; i++)
		cJSON_AddItemToArray(types, cJSON_CreateString(
		    g->nodes[s->nodes[i]].op_type));
	cJSON_AddItemToObject(rec, "names", cJSON_Duplicate(s->names, 1));
	cJSON_AddNumberToObject(rec, "instances", s->instances);
	cJSON_AddStringToObject(rec, "signature", s->sig);
	cJSON_AddStringToObject(rec, "soc_version", aoe_soc_version());
	cJSON_AddNumberToObject(rec, "threads", nthreads);
	cJSON_AddStringToObject(rec, "tool_version", AOE_VERSION);
	cJSON_AddStringToObject(rec, "measured_at", when);
	cJSON_AddStringToObject(rec, "method", "sgat");
	*keep = 0;
	/*
	 * The baseline is what a run does without tuning: the bank's entry,
	 * else the default decisions, less those that change nothing here.
	 */
	aoe_fuse_default(&base_d);
	hit = aoe_bank_graph_find(s->sig, &base_d);
	aoe_sgat_effect(g, s->nodes, s->n, &base_d, &nbn, &nact, &nadd,
	    &nel);
	if (nbn == 0)
		aoe_sched_set(&base_d, "fuse_bn", 0);
	if (nact == 0)
		aoe_sched_set(&base_d, "fuse_act", 0);
	if (nadd == 0)
		aoe_sched_set(&base_d, "fuse_add", 0);
	if (nel == 0)
		aoe_sched_set(&base_d, "fuse_elem", 0);
	nlay = aoe_sgat_layout_nodes(g, s->nodes, s->n);
	ninpl = aoe_sgat_inplace_nodes(g, s->nodes, s->n);
	if (nlay == 0)
		aoe_sched_set(&base_d, "layout", 0);
	if (ninpl == 0)
		aoe_sched_set(&base_d, "inplace", 0);
	if ((rc = aoe_sgat_extract(g, s->nodes, s->n, &sg)) < 0) {
		cJSON_AddStringToObject(rec, "reason", aoe_errmsg());
		cJSON_AddStringToObject(rec, "outcome", "failed");
		return rec;
	}
	cands = cJSON_AddArrayToObject(rec, "candidates");
	rc = measure(sg, ro, AOE_FUSE_FORCE, &base_d, 0, seed, o, &base);
	spent += base.cost_s;
	trials++;
	if (rc < 0 || base.status != OPAT_OK) {
		cJSON_AddStringToObject(rec, "reason", rc < 0 ? aoe_errmsg() :
		    base.reason);
		cJSON_AddNumberToObject(rec, "tuning_time_s", round6(spent));
		cJSON_AddStringToObject(rec, "outcome", "failed");
		aoe_graph_free(sg);
		return rec;
	}
	best = base;
	best_d = base_d;
	if (hit && !o->repeat_tune) {
		cJSON_AddNumberToObject(rec, "before_us", round6(base.us));
		cJSON_AddNumberToObject(rec, "after_us", round6(base.us));
		cJSON_AddNumberToObject(rec, "spread", round6(base.spread));
		cJSON_AddItemToObject(rec, "schedule", d_json(&base_d));
		cJSON_AddNumberToObject(rec, "trials", trials);
		cJSON_AddNumberToObject(rec, "tuning_time_s", round6(spent));
		cJSON_AddStringToObject(rec, "outcome", "reserved");
		*chosen = base_d;
		*keep = 1;
		aoe_graph_free(sg);
		return rec;
	}
	/*
	 * The space: each combination of the fusions where they apply,
	 * with thread counts; then, with every fusion that applies, the
	 * blocked layout (where a Conv of the chain can take it) and memory
	 * reuse on and off.
	 */
	for (i = 0; i < 20; i++)
		for (th = 0; th < nthreads && nc < MAXCAND; th = th ? th * 2 :
		    1) {
			aoe_sched d;
			int all = i >= 16;
			bn = all || (i & 1);
			act = all || (i >> 1 & 1);
			add = all || (i >> 2 & 1);
			el = all || (i >> 3 & 1);
			lay = all ? ((i - 16) & 1 ? AOE_LAYOUT_8C : 0) :
			    (int)aoe_sched_get(&base_d, "layout", 0);
			inpl = all ? (i - 16) >> 1 & 1 :
			    aoe_sched_get(&base_d, "inplace", 0) != 0;
			memset(&d, 0, sizeof(d));
			aoe_sched_set(&d, "fuse_bn", bn);
			aoe_sched_set(&d, "fuse_act", act);
			aoe_sched_set(&d, "fuse_add", add);
			aoe_sched_set(&d, "fuse_elem", el);
			aoe_sgat_effect(g, s->nodes, s->n, &d, &nbn, &nact,
			    &nadd, &nel);
			/* "Every fusion": those that apply, here. */
			if (all) {
				bn = nbn > 0;
				act = nact > 0;
				add = nadd > 0;
				el = nel > 0;
				aoe_sched_set(&d, "fuse_bn", bn);
				aoe_sched_set(&d, "fuse_act", act);
				aoe_sched_set(&d, "fuse_add", add);
				aoe_sched_set(&d, "fuse_elem", el);
			}
			aoe_sched_set(&d, "threads", th);
			aoe_sched_set(&d, "layout", lay);
			aoe_sched_set(&d, "inplace", inpl);
			if ((bn && nbn == 0) || (act && nact == 0) ||
			    (add && nadd == 0) || (el && nel == 0) ||
			    (lay && nlay == 0) || (inpl && ninpl == 0) ||
			    same_d(&d, &base_d) || seen_d(cand, nc, &d))
				continue;
			cand[nc++] = d;
		}
	/* The baseline counts as one of the budget's trials. */
	if (o->budget_trials > 0 && nc > o->budget_trials - 1)
		nc = o->budget_trials - 1;
	rc = 0;
	for (i = 0; i < nc; i++)
		if ((rc = try_cand(sg, ro, &cand[i], seed, o, cands, &spent,
		    &trials, &best, &best_d)) < 0)
			break;
	/*
	 * Per-op decisions, from the best so far, one node at a time: that
	 * node on one thread (when the chain runs on more), and a GEMM's
	 * thread split by rows or by columns.  A change is kept when the
	 * subgraph measures faster with it.
	 */
	if (rc >= 0) {
		int alive[AOE_SGAT_MAXPOS], splits[AOE_SGAT_MAXPOS], k, v;
		int cth = (int)aoe_sched_get(&best_d, "threads", 0);
		int np = s->n < AOE_SGAT_MAXPOS ? s->n : AOE_SGAT_MAXPOS;
		aoe_sched from = best_d;

		if (aoe_sgat_per_op(g, s->nodes, np, &from, alive, splits) < 0)
			np = 0;
		for (k = 0; k < np; k++)
			for (v = 0; v < 3; v++) {
				aoe_sched d = best_d;
				uint64_t m;
				if (!alive[k] || (v == 0 && (nthreads < 2 ||
				    cth == 1)) || (v > 0 && !splits[k]))
					continue;
				if (o->budget_trials > 0 &&
				    trials >= o->budget_trials)
					break;
				if (v == 0) {
					m = (uint64_t)aoe_sched_get(&d,
					    "serial", 0) ^ (1ULL << k);
					aoe_sched_set(&d, "serial", (int64_t)m);
				} else {
					m = (uint64_t)aoe_sched_get(&d,
					    "split", 0) & ~(3ULL << 2 * k);
					aoe_sched_set(&d, "split",
					    (int64_t)(m | (uint64_t)v << 2 * k));
				}
				if (same_d(&d, &base_d))
					continue;
				if ((rc = try_cand(sg, ro, &d, seed, o, cands,
				    &spent, &trials, &best, &best_d)) < 0)
					break;
			}
	}
	before = base.us;
	after = best.us;
	sb = base.spread;
	sa = best.spread;
	/*
	 * The best of several noisy numbers is biased low, and a subgraph
	 * alone has its data warm in the caches: confirm the winner in the
	 * model, as aoe-run runs it with the decisions taken so far, timing
	 * the subgraph's nodes (every instance) inside whole runs; CONFIRM
	 * rounds, the best of each kept, since a busy host only adds.
	 */
	if (!same_d(&best_d, &base_d)) {
		int round, bad = 0;
		before = after = HUGE_VAL;
		for (round = 0; round < CONFIRM && !bad; round++) {
			measure_in(g, ro, 0, &base_d, 0, seed + 1 + round, o,
			    s->sig, s->names, &b2);
			measure_in(g, ro, 0, &best_d, 1, seed + 1 + round, o,
			    s->sig, s->names, &a2);
			spent += b2.cost_s + a2.cost_s;
			bad = b2.status != OPAT_OK || a2.status != OPAT_OK;
			if (!bad && b2.us < before) {
				before = b2.us;
				sb = b2.spread;
			}
			if (!bad && a2.us < after) {
				after = a2.us;
				sa = a2.spread;
			}
		}
		if (bad) {
			/* A winner that fails once is no winner. */
			best_d = base_d;
			before = after = base.us;
			sa = sb = base.spread;
		}
		cJSON_AddStringToObject(rec, "confirmed", "model");
	}
	noise = o->noise_floor;
	if (sb > noise)
		noise = sb;
	if (sa > noise)
		noise = sa;
	if (!same_d(&best_d, &base_d) && after < before * (1 - noise)) {
		outcome = hit ? "update" : "add";
		*chosen = best_d;
		*keep = 1;
	} else {
		outcome = hit ? "reserved" : "unsatisfied";
		*chosen = base_d;
		*keep = hit;
		after = before;
	}
	cJSON_AddNumberToObject(rec, "before_us", round6(before));
	cJSON_AddNumberToObject(rec, "after_us", round6(after));
	cJSON_AddNumberToObject(rec, "spread", round6(noise));
	cJSON_AddItemToObject(rec, "schedule", d_json(chosen));
	cJSON_AddNumberToObject(rec, "trials", trials);
	cJSON_AddNumberToObject(rec, "tuning_time_s", round6(spent));
	cJSON_AddStringToObject(rec, "outcome", outcome);
	aoe_graph_free(sg);
	return rec;
}

int
sgat_tune(const sgat_opts *o, const char *path, FILE *out)
{
	aoe_graph *g = NULL;
	aoe_run_opts ro;
	cJSON *done = NULL, *rec;
	FILE *jfp = NULL;
	sub *subs = NULL;
	int *part = NULL, *nodes = NULL, np, nsub = 0, i, j, rc, nthreads;
	int nfailed = 0;
	opat_timing mb, mr;
	double t0 = aoe_now_us();

	aoe_run_opts_init(&ro);
	if (o->threads > 0)
		ro.nthreads = o->threads;
	ro.use_bank = o->use_bank;
	ro.static_memory = 0;
	ro.profile = 0;
	nthreads = ro.nthreads;
	/* The chains as the model has them; the decisions chosen so far. */
	ro.fuse_mode = AOE_FUSE_OFF;
	ro.decisions = aoe_dtable_new();
	if ((rc = aoe_model_load(path, &g)) < 0)
		goto out;
	if (o->shape && (rc = aoe_bind_shapes(g, o->shape)) < 0)
		goto out;
	if ((rc = aoe_graph_prepare(g, &ro)) < 0)
		goto out;
	if (o->journal) {
		done = read_journal(o->journal, o->reload, &rc);
		if (rc < 0)
			goto out;
		if ((jfp = fopen(o->journal, "a")) == NULL) {
			rc = aoe_err(AOE_EIO, "cannot open journal '%s': %s",
			    o->journal, strerror(errno));
			goto out;
		}
	}
	part = aoe_xcalloc((size_t)g->nnodes + 1, sizeof(int));
	nodes = aoe_xcalloc((size_t)g->nnodes + 1, sizeof(int));
	aoe_sgat_partition(g, part, &np);
	subs = aoe_xcalloc((size_t)np + 1, sizeof(*subs));
	for (i = 0; i < np; i++) {
		char *sig;
		int n = aoe_sgat_members(g, part, i, nodes);
		if ((rc = aoe_sgat_signature(g, nodes, n, nthreads, &sig)) < 0)
			goto out;
		for (j = 0; j < nsub; j++)
			if (strcmp(subs[j].sig, sig) == 0)
				break;
		if (j == nsub) {
			subs[nsub].sig = sig;
			subs[nsub].key = aoe_op_key(sig);
			subs[nsub].nodes = aoe_xcalloc((size_t)n, sizeof(int));
			memcpy(subs[nsub].nodes, nodes, (size_t)n * sizeof(int));
			subs[nsub].n = n;
			subs[nsub].names = cJSON_CreateArray();
			nsub++;
		} else
			free(sig);
		subs[j].instances++;
		for (int k = 0; k < n; k++)
			cJSON_AddItemToArray(subs[j].names,
			    cJSON_CreateString(g->nodes[nodes[k]].name));
	}
	for (i = 0; i < nsub; i++) {
		char kb[32];
		aoe_sched chosen;
		const cJSON *old, *oc;
		int keep = 0;

		snprintf(kb, sizeof(kb), "%llu", (unsigned long long)
		    subs[i].key);
		if (done && (old = cJSON_GetObjectItemCaseSensitive(done,
		    kb)) != NULL) {
			/* Finished by an interrupted run: keep its record. */
			char *s = cJSON_PrintUnformatted(old);
			fprintf(out, "%s\n", s);
			free(s);
			oc = cJSON_GetObjectItemCaseSensitive(old, "outcome");
			if (cJSON_IsString(oc) && (!strcmp(oc->valuestring,
			    "add") || !strcmp(oc->valuestring, "update") ||
			    !strcmp(oc->valuestring, "reserved"))) {
				(void)aoe_sched_from_json(
				    cJSON_GetObjectItemCaseSensitive(old,
				    "schedule"), &chosen, NULL, 0);
				aoe_dtable_set(ro.decisions, subs[i].sig, &chosen);
			}
			if (o->progress)
				aoe_warnx("[%d/%d] %s: from the journal", i + 1,
				    nsub, kb);
			continue;
		}
		rec = tune_one(g, &subs[i], &ro, o, nthreads, &chosen, &keep);
		if (keep)
			aoe_dtable_set(ro.decisions, subs[i].sig, &chosen);
		oc = cJSON_GetObjectItemCaseSensitive(rec, "outcome");
		if (strcmp(oc->valuestring, "failed") == 0)
			nfailed++;
		if (o->progress) {
			const cJSON *b = cJSON_GetObjectItemCaseSensitive(rec,
			    "before_us"), *a = cJSON_GetObjectItemCaseSensitive(
			    rec, "after_us");
			aoe_warnx("[%d/%d] %s (%d nodes x%d): %s %.1f -> %.1f "
			    "us", i + 1, nsub, kb, subs[i].n,
			    subs[i].instances, oc->valuestring,
			    cJSON_IsNumber(b) ? b->valuedouble : 0,
			    cJSON_IsNumber(a) ? a->valuedouble : 0);
		}
		rc = emit(rec, out, jfp);
		cJSON_Delete(rec);
		if (rc < 0)
			goto out;
	}
	/*
	 * The whole model, without the subgraph bank (the default
	 * decisions everywhere) and with the decisions, alternately in two
	 * rounds; the best of each is kept (a busy host only adds).
	 */
	for (i = 0; i < 2; i++) {
		opat_timing b1, r1;
		if ((rc = measure(g, &ro, AOE_FUSE_ALL, NULL, 0, o->seed, o,
		    &b1)) < 0 || (rc = measure(g, &ro, AOE_FUSE_BANK, NULL, 0,
		    o->seed, o, &r1)) < 0)
			goto out;
		if (b1.status != OPAT_OK || r1.status != OPAT_OK) {
			rc = aoe_err(AOE_EDATA, "%s: the whole model: %s",
			    path, b1.status != OPAT_OK ? b1.reason :
			    r1.reason);
			goto out;
		}
		if (i == 0 || b1.us < mb.us)
			mb = b1;
		if (i == 0 || r1.us < mr.us)
			mr = r1;
	}
	rec = cJSON_CreateObject();
	cJSON_AddStringToObject(rec, "kind", "model");
	cJSON_AddStringToObject(rec, "graph", path);
	cJSON_AddNumberToObject(rec, "threads", nthreads);
	cJSON_AddNumberToObject(rec, "baseline_us", round6(mb.us));
	cJSON_AddNumberToObject(rec, "result_us", round6(mr.us));
	cJSON_AddNumberToObject(rec, "baseline_spread", round6(mb.spread));
	cJSON_AddNumberToObject(rec, "result_spread", round6(mr.spread));
	cJSON_AddNumberToObject(rec, "subgraphs", nsub);
	cJSON_AddNumberToObject(rec, "tuning_time_s",
	    round6((aoe_now_us() - t0) / 1e6));
	rc = emit(rec, out, NULL);
	cJSON_Delete(rec);
	if (rc == 0 && o->progress)
		aoe_warnx("%s: model %.3f -> %.3f ms", path, mb.us / 1e3,
		    mr.us / 1e3);
	if (rc == 0 && nfailed)
		aoe_warnx("%s: %d of %d subgraphs failed (see their records)",
		    path, nfailed, nsub);
out:
	for (i = 0; i < nsub; i++) {
		free(subs[i].sig);
		free(subs[i].nodes);
		cJSON_Delete(subs[i].names);
	}
	free(subs);
	free(part);
	free(nodes);
	cJSON_Delete(done);
	if (jfp)
		fclose(jfp);
	aoe_graph_free(g);
	aoe_dtable_free(ro.decisions);
	return rc;
}
