/*
 * sgat.c - subgraph tuning: for each distinct chain of a graph (see
 * lib/passes/fuse.c), measure the chain as a whole under each combination of
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

#include "bank.h"
#include "opat.h"
#include "sgat.h"

#define MIN_REP_US 200.0	/* a timed repeat runs this long */
#define MAXOUT 64
#define CHILD_S 0.05		/* a measuring child's start, a guess */

void
sgat_opts_init(sgat_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->run_loop = 10;
	o->use_bank = 1;
	o->timeout_s = 300;
	o->noise_floor = 0.02;
	o->regions = 1;
	o->seed = 1;
}

/*
 * --total-seconds: when the run must end (aoe_now_us(); HUGE_VAL for
 * none), and the seconds before it kept for the whole-model record.
 */
static double deadline = HUGE_VAL, reserve_s;

/* Seconds left of --total-seconds, less the model record's reserve. */
static double
time_left(void)
{
	if (deadline == HUGE_VAL)
		return HUGE_VAL;
	return (deadline - aoe_now_us()) / 1e6 - reserve_s;
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

/* Decisions d for the subgraphs of signature sig. */
typedef struct sdec {
	const char *sig;
	aoe_sched d;
} sdec;

/*
 * Whether node v is a reorder that a layout decision put at an edge of
 * the timed nodes: it reads a tensor one of them writes (wr[] set), or
 * writes one that one of them reads (rd[] set).
 */
static int
edge_reorder(const aoe_graph *g, int v, const char *wr, const char *rd)
{
	const aoe_node *r = &g->nodes[v];

	if (strcmp(r->op_type, "AoeReorder") != 0 || r->nin < 1 ||
	    r->nout < 1)
		return 0;
	return (r->in[0] >= 0 && wr[r->in[0]]) ||
	    (r->out[0] >= 0 && rd[r->out[0]]);
}

/*
 * The measuring child: g under (mode, d), timed whole; or, with names
 * set, g as aoe-run runs it with the ndec decisions decs (added to the
 * table of decisions chosen so far), timing only the nodes named in
 * names inside each run, and the reorders at their edges.  Never
 * returns.
 */
static void
child(aoe_graph *g, const aoe_run_opts *ro, int mode, const aoe_sched *d,
    int inject, uint64_t seed, const sgat_opts *o, const sdec *decs,
    int ndec, const cJSON *names, int nrep, int fd)
{
	aoe_run_opts pro = *ro, co = *ro;
	int *idx = NULL, nn = 0;
	char why[512], line[768];
	const char *fault = getenv("AOE_INJECT_FAULT");
	void *ref[MAXOUT];
	double *rep, t0, t1;
	int lk, gate, i, j, inner, n = nrep > o->run_loop ? nrep : o->run_loop;

	signal(SIGPIPE, SIG_DFL);
	opat_child_pin(ro->nthreads);
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
	if (names) {
		if (co.decisions == NULL)
			co.decisions = aoe_dtable_new();
		for (i = 0; i < ndec; i++)
			aoe_dtable_set(co.decisions, decs[i].sig, &decs[i].d);
		co.fuse_mode = AOE_FUSE_BANK;
	}
	if (aoe_graph_prepare(g, &co) < 0) {
		snprintf(line, sizeof(line), "invalid %s\n", aoe_errmsg());
		opat_say(fd, line);
		_exit(0);
	}
	if (names) {
		char *in = aoe_xcalloc((size_t)g->nnodes + 1, 1), *wr, *rd;
		idx = aoe_xcalloc((size_t)g->norder + 1, sizeof(int));
		for (i = 0; i < g->norder; i++) {
			const cJSON *it;
			cJSON_ArrayForEach(it, names)
				if (cJSON_IsString(it) && strcmp(it->valuestring,
				    g->nodes[g->order[i]].name) == 0) {
					idx[nn++] = g->order[i];
					in[g->order[i]] = 1;
					break;
				}
		}
		if (nn == 0) {
			opat_say(fd, "invalid no node of the subgraph runs in the "
			    "model\n");
			_exit(0);
		}
		/*
		 * A layout's reorders are the price of it: they count.  The
		 * tensors the timed nodes write and read, marked once.
		 */
		wr = aoe_xcalloc((size_t)g->ntensors + 1, 1);
		rd = aoe_xcalloc((size_t)g->ntensors + 1, 1);
		for (j = 0; j < nn; j++) {
			const aoe_node *t = &g->nodes[idx[j]];
			for (i = 0; i < t->nout; i++)
				if (t->out[i] >= 0)
					wr[t->out[i]] = 1;
			for (i = 0; i < t->nin; i++)
				if (t->in[i] >= 0)
					rd[t->in[i]] = 1;
		}
		for (i = 0, j = nn; i < g->norder; i++)
			if (!in[g->order[i]] && edge_reorder(g, g->order[i],
			    wr, rd))
				idx[j++] = g->order[i];
		nn = j;
		free(in);
		free(wr);
		free(rd);
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
	inner = t1 >= MIN_REP_US || names ? 1 : (int)(MIN_REP_US /
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
		if (names)
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
	const sdec *decs;
	int ndec;
	const cJSON *names;
	int nrep;		/* timed repeats, at least */
} meas_arg;

static void
meas_child(int i, int fd, void *arg)
{
	meas_arg *a = arg;

	child(a->g, a->ro, a->mode, a->d, a->inject, a->seed, a->o, a->decs,
	    a->ndec, a->names, a->nrep, fd);
}

/*
 * Measure g under (mode, d) in a child process; with names set, in the
 * model with the decisions decs (see child).
 */
static int
measure_in(aoe_graph *g, const aoe_run_opts *ro, int mode,
    const aoe_sched *d, int inject, uint64_t seed, const sgat_opts *o,
    const sdec *decs, int ndec, const cJSON *names, opat_timing *t)
{
	meas_arg a;

	a.g = g;
	a.ro = ro;
	a.mode = mode;
	a.d = d;
	a.inject = inject;
	a.seed = seed;
	a.o = o;
	a.decs = decs;
	a.ndec = ndec;
	a.names = names;
	a.nrep = 0;
	return opat_children_run(1, 1, o->timeout_s, meas_child, &a, t);
}

static int
measure(aoe_graph *g, const aoe_run_opts *ro, int mode, const aoe_sched *d,
    int inject, uint64_t seed, const sgat_opts *o, opat_timing *t)
{
	return measure_in(g, ro, mode, d, inject, seed, o, NULL, 0, NULL, t);
}

static double
round6(double v)
{
	return round(v * 1e3) / 1e3;
}

/* Candidate decisions of one subgraph, at most. */
#define MAXCAND 128
/*
 * Rounds confirming a winner in the model, each a child of its own.  At
 * 2 threads on this 2-vCPU guest (Zen 5) a child reads the same chain
 * about twice as slow as most others, now and then (squeezenet1_1's fire
 * 9 expand3x3 Conv and Relu: 57-63 us in most children, 115-141 in some,
 * with the threads placed, or pinned, each on its own CPU; cause not
 * found): with three, a baseline slow in all of them had a one-thread
 * decision kept that aoe-run then ran 1.07x slower.
 */
#define CONFIRM 5

/* The decisions' knobs, in the order records list them. */
static const char *const dknobs[] = { "fuse_bn", "fuse_act", "fuse_add",
    "fuse_elem", "fuse_pool", "fuse_dw", "threads", "layout", "inplace",
    "serial", "split" };
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

/* The tuning of one subgraph, as its steps share it. */
typedef struct tuning {
	aoe_graph *g;		/* the model */
	aoe_graph *sg;		/* the subgraph alone */
	const sub *s;
	const aoe_run_opts *ro;
	const sgat_opts *o;
	int nthreads;
	uint64_t seed;
	int hit;		/* the baseline is the bank's entry */
	int nlay, ninpl;	/* nodes a layout, memory reuse would change */
	aoe_sched base_d, best_d;
	opat_timing base, best;
	cJSON *cands;		/* the record's candidates */
	double spent;
	int trials;
	struct sprog *prog;	/* progress, or NULL */
} tuning;

/*
 * Progress: the ETA is the time per node tuned so far (a subgraph's
 * nodes counted done in proportion to its candidates measured) times the
 * nodes left, so it is known from the first candidate on.
 */
typedef struct sprog {
	aoe_tprog p;
	double nodes_done, nodes_total;
} sprog;

static double
sprog_eta(const sprog *sp, double nodes_now)
{
	double el = (aoe_now_us() - sp->p.t0) / 1e6;

	if (nodes_now <= 0)
		return -1;
	return el / nodes_now * (sp->nodes_total - nodes_now);
}

static void
sprog_update(tuning *tu, int k, int nc)
{
	sprog *sp = tu->prog;
	char what[64], step[32];
	double gain = tu->base.us > 0 ? (tu->base.us - tu->best.us) /
	    tu->base.us : 0;

	if (sp == NULL)
		return;
	snprintf(what, sizeof(what), "subgraph %llu (%d nodes)",
	    (unsigned long long)tu->s->key, tu->s->n);
	snprintf(step, sizeof(step), "trial %d/%d", k, nc);
	aoe_tprog_update(&sp->p, what, step, gain, sprog_eta(sp,
	    sp->nodes_done + (nc > 0 ? (double)tu->s->n * k / nc : 0)));
}

/*
 * Measure candidate d of the subgraph, list it in the candidates, and
 * make it the best when it is faster; 0, 1 when --total-seconds leaves
 * no time for it, or negative when nothing can be measured.
 */
static int
try_cand(tuning *tu, const aoe_sched *d)
{
	cJSON *cj;
	opat_timing t;
	int rc;

	/* --total-seconds: no measurement that would end past it. */
	if (time_left() < tu->base.cost_s)
		return 1;
	if ((rc = measure(tu->sg, tu->ro, AOE_FUSE_FORCE, d, 1, tu->seed,
	    tu->o, &t)) < 0)
		return rc;
	tu->spent += t.cost_s;
	tu->trials++;
	cj = cJSON_CreateObject();
	cJSON_AddItemToObject(cj, "schedule", d_json(d));
	cJSON_AddStringToObject(cj, "status", opat_status_name(t.status));
	if (t.status == OPAT_OK) {
		cJSON_AddNumberToObject(cj, "us", round6(t.us));
		cJSON_AddNumberToObject(cj, "spread", round6(t.spread));
	} else
		cJSON_AddStringToObject(cj, "reason", t.reason);
	cJSON_AddItemToArray(tu->cands, cj);
	if (t.status == OPAT_OK && t.us < tu->best.us) {
		tu->best = t;
		tu->best_d = *d;
	}
	return 0;
}

/* A subgraph's record, up to what tuning it adds. */
static cJSON *
record_new(const aoe_graph *g, const sub *s, int nthreads)
{
	cJSON *rec = cJSON_CreateObject(), *types;
	char kb[32], first[512], when[32];
	int i;

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
	return rec;
}

/*
 * The baseline is what a run does without tuning: the bank's entry,
 * else the default decisions, less those that change nothing here.
 */
static void
baseline(tuning *tu)
{
	const sub *s = tu->s;
	int cnt[AOE_FUSE_N], i;

	aoe_fuse_default(&tu->base_d);
	tu->hit = aoe_bank_graph_find(s->sig, &tu->base_d);
	aoe_sgat_effect(tu->g, s->nodes, s->n, &tu->base_d, cnt);
	for (i = 0; i < AOE_FUSE_N; i++)
		if (cnt[i] == 0)
			aoe_sched_set(&tu->base_d, aoe_fuse_knobs[i], 0);
	tu->nlay = aoe_sgat_layout_nodes(tu->g, s->nodes, s->n);
	tu->ninpl = aoe_sgat_inplace_nodes(tu->g, s->nodes, s->n);
	if (tu->nlay == 0)
		aoe_sched_set(&tu->base_d, "layout", 0);
	if (tu->ninpl == 0)
		aoe_sched_set(&tu->base_d, "inplace", 0);
}

/*
 * The space, into cand (MAXCAND at most): each combination of the
 * fusions where they apply, with thread counts; then, with every fusion
 * that applies, the blocked layout (where a Conv of the chain can take
 * it) and memory reuse on and off.  fuse_dw (off by default, slower on
 * the hosts measured: lib/passes/fuse.c) is in none of those, but once
 * with every other fusion that applies at the baseline's layout and
 * reuse: one more candidate a thread count, not twice as many.  Returns
 * the number of candidates.
 */
static int
fusion_space(const tuning *tu, aoe_sched *cand)
{
	const sub *s = tu->s;
	const int nf = 1 << AOE_FUSE_N;
	int i, f, th, nc = 0, lay, inpl, on[AOE_FUSE_N], cnt[AOE_FUSE_N];

	for (i = 0; i < nf + 5; i++)
		for (th = 0; th < tu->nthreads && nc < MAXCAND; th = th ?
		    th * 2 : 1) {
			aoe_sched d;
			int all = i >= nf, dw = i == nf + 4, idle = 0;
			if (!all && (i >> AOE_FUSE_DW & 1))
				break;
			lay = all && !dw ? ((i - nf) & 1 ? AOE_LAYOUT_8C : 0) :
			    (int)aoe_sched_get(&tu->base_d, "layout", 0);
			inpl = all && !dw ? (i - nf) >> 1 & 1 :
			    aoe_sched_get(&tu->base_d, "inplace", 0) != 0;
			memset(&d, 0, sizeof(d));
			for (f = 0; f < AOE_FUSE_N; f++) {
				on[f] = all || (i >> f & 1);
				aoe_sched_set(&d, aoe_fuse_knobs[f], on[f]);
			}
			aoe_sgat_effect(tu->g, s->nodes, s->n, &d, cnt);
			for (f = 0; f < AOE_FUSE_N; f++) {
				/* "Every fusion": those that apply, here. */
				if (all) {
					on[f] = cnt[f] > 0 && (dw ||
					    f != AOE_FUSE_DW);
					aoe_sched_set(&d, aoe_fuse_knobs[f],
					    on[f]);
				}
				if (on[f] && cnt[f] == 0)
					idle = 1;
			}
			if (dw && !on[AOE_FUSE_DW])
				idle = 1;
			aoe_sched_set(&d, "threads", th);
			aoe_sched_set(&d, "layout", lay);
			aoe_sched_set(&d, "inplace", inpl);
			if (idle || (lay && tu->nlay == 0) ||
			    (inpl && tu->ninpl == 0) ||
			    same_d(&d, &tu->base_d) || seen_d(cand, nc, &d))
				continue;
			cand[nc++] = d;
		}
	return nc;
}

/*
 * Per-op decisions, from the best so far, one node at a time: that node
 * on one thread (when the chain runs on more), and a GEMM's thread split
 * by rows or by columns.  A change is kept when the subgraph measures
 * faster with it.
 */
static void
per_op(tuning *tu)
{
	const sub *s = tu->s;
	int alive[AOE_SGAT_MAXPOS], splits[AOE_SGAT_MAXPOS], k, v;
	int cth = (int)aoe_sched_get(&tu->best_d, "threads", 0);
	int np = s->n < AOE_SGAT_MAXPOS ? s->n : AOE_SGAT_MAXPOS;
	aoe_sched from = tu->best_d;

	if (aoe_sgat_per_op(tu->g, s->nodes, np, &from, alive, splits) < 0)
		np = 0;
	for (k = 0; k < np; k++)
		for (v = 0; v < 3; v++) {
			aoe_sched d = tu->best_d;
			uint64_t m;
			if (!alive[k] || (v == 0 && (tu->nthreads < 2 ||
			    cth == 1)) || (v > 0 && !splits[k]))
				continue;
			if (tu->o->budget_trials > 0 &&
			    tu->trials >= tu->o->budget_trials)
				break;
			if (v == 0) {
				m = (uint64_t)aoe_sched_get(&d, "serial", 0) ^
				    (1ULL << k);
				aoe_sched_set(&d, "serial", (int64_t)m);
			} else {
				m = (uint64_t)aoe_sched_get(&d, "split", 0) &
				    ~(3ULL << 2 * k);
				aoe_sched_set(&d, "split",
				    (int64_t)(m | (uint64_t)v << 2 * k));
			}
			if (same_d(&d, &tu->base_d))
				continue;
			/* A harness error (or the time limit) ends them. */
			if (try_cand(tu, &d) != 0)
				break;
		}
}

/* Nodes measured in the model under two sets of decisions (in_model). */
typedef struct inmodel {
	double before, after;	/* each side's best */
	double sb, sa;		/* and its spread */
	double cost_s, last_s;	/* the rounds', the last round's */
	int rounds;		/* rounds done */
	int failed;		/* a measurement failed (fail), ending them */
	opat_timing fail;
} inmodel;

/*
 * The nodes named in names (every instance), timed inside whole runs of
 * the model as aoe-run runs it with the decisions taken so far and bd,
 * then with ad instead (nd each): CONFIRM rounds, each side's best kept,
 * since a busy host only adds; a round starts only while --total-seconds
 * leaves need_s (with track, the last round's time once there is one).
 * 0, or a harness error (with m->failed set).
 */
/*
 * AOE_SGAT_REGION_ROUNDS=n (tests): a layout region's rounds end after
 * n (0 to 4), as when --total-seconds leaves no time for the next.
 */
static int
region_rounds_env(void)
{
	const char *v = getenv("AOE_SGAT_REGION_ROUNDS");
	char *end;
	long n;

	if (v == NULL || *v == '\0')
		return CONFIRM;
	n = strtol(v, &end, 10);
	return *end == '\0' && n >= 0 && n < CONFIRM ? (int)n : CONFIRM;
}

static int
in_model(aoe_graph *g, const aoe_run_opts *ro, const sgat_opts *o,
    uint64_t seed, const sdec *bd, const sdec *ad, int nd,
    const cJSON *names, double need_s, int track, inmodel *m)
{
	opat_timing b2, a2;
	int round, rc = 0;

	memset(m, 0, sizeof(*m));
	m->before = m->after = HUGE_VAL;
	for (round = 0; round < CONFIRM && !m->failed; round++) {
		if (time_left() < (track && m->rounds > 0 ? m->last_s :
		    need_s) || (track && round >= region_rounds_env()))
			break;
		if ((rc = measure_in(g, ro, 0, NULL, 0, seed + round, o, bd, nd,
		    names, &b2)) < 0 || (rc = measure_in(g, ro, 0, NULL, 1,
		    seed + round, o, ad, nd, names, &a2)) < 0) {
			m->failed = 1;
			m->fail = rc < 0 && b2.status == OPAT_OK ? a2 : b2;
			break;
		}
		m->last_s = b2.cost_s + a2.cost_s;
		m->cost_s += m->last_s;
		if (b2.status != OPAT_OK || a2.status != OPAT_OK) {
			m->failed = 1;
			m->fail = b2.status != OPAT_OK ? b2 : a2;
			break;
		}
		m->rounds++;
		if (b2.us < m->before) {
			m->before = b2.us;
			m->sb = b2.spread;
		}
		if (a2.us < m->after) {
			m->after = a2.us;
			m->sa = a2.spread;
		}
	}
	return rc;
}

/*
 * The best of several noisy numbers is biased low, and a subgraph alone
 * has its data warm in the caches: confirm the winner in the model
 * (in_model).  Sets the times (and spreads) before and after; a winner
 * that fails once, or that --total-seconds leaves no round, is no
 * winner.
 */
static void
confirm(tuning *tu, double *before, double *after, double *sb, double *sa)
{
	inmodel m;
	sdec bd, ad;

	bd.sig = ad.sig = tu->s->sig;
	bd.d = tu->base_d;
	ad.d = tu->best_d;
	(void)in_model(tu->g, tu->ro, tu->o, tu->seed + 1, &bd, &ad, 1,
	    tu->s->names, 2 * tu->base.cost_s, 0, &m);
	tu->spent += m.cost_s;
	if (m.failed || m.rounds == 0) {
		tu->best_d = tu->base_d;
		*before = *after = tu->base.us;
		*sa = *sb = tu->base.spread;
	} else {
		*before = m.before;
		*after = m.after;
		*sb = m.sb;
		*sa = m.sa;
	}
}

/*
 * The record's end: the times and the decisions chosen (none when
 * chosen is NULL), the cost, the outcome.
 */
static void
record_end(cJSON *rec, const tuning *tu, const aoe_sched *chosen,
    double before, double after, double spread, const char *outcome)
{
	if (chosen != NULL) {
		cJSON_AddNumberToObject(rec, "before_us", round6(before));
		cJSON_AddNumberToObject(rec, "after_us", round6(after));
		cJSON_AddNumberToObject(rec, "spread", round6(spread));
		cJSON_AddItemToObject(rec, "schedule", d_json(chosen));
		cJSON_AddNumberToObject(rec, "trials", tu->trials);
	}
	cJSON_AddNumberToObject(rec, "tuning_time_s", round6(tu->spent));
	cJSON_AddStringToObject(rec, "outcome", outcome);
}

/* Tune one subgraph; returns its record. */
static cJSON *
tune_one(aoe_graph *g, sub *s, const aoe_run_opts *ro, const sgat_opts *o,
    int nthreads, sprog *sp, aoe_sched *chosen, int *keep)
{
	cJSON *rec = record_new(g, s, nthreads);
	aoe_sched cand[MAXCAND];
	tuning tu;
	const char *outcome;
	double before, after, noise, sb, sa;
	int nc, i, rc;

	memset(&tu, 0, sizeof(tu));
	tu.g = g;
	tu.s = s;
	tu.ro = ro;
	tu.o = o;
	tu.nthreads = nthreads;
	tu.seed = o->seed ^ s->key;
	*keep = 0;
	baseline(&tu);
	if ((rc = aoe_sgat_extract(g, s->nodes, s->n, &tu.sg)) < 0) {
		cJSON_AddStringToObject(rec, "reason", aoe_errmsg());
		cJSON_AddStringToObject(rec, "outcome", "failed");
		return rec;
	}
	tu.cands = cJSON_AddArrayToObject(rec, "candidates");
	rc = measure(tu.sg, ro, AOE_FUSE_FORCE, &tu.base_d, 0, tu.seed, o,
	    &tu.base);
	tu.spent += tu.base.cost_s;
	tu.trials++;
	if (rc < 0 || tu.base.status != OPAT_OK) {
		cJSON_AddStringToObject(rec, "reason", rc < 0 ? aoe_errmsg() :
		    tu.base.reason);
		record_end(rec, &tu, NULL, 0, 0, 0, "failed");
		aoe_graph_free(tu.sg);
		return rec;
	}
	tu.best = tu.base;
	tu.best_d = tu.base_d;
	if (tu.hit && !o->repeat_tune) {
		record_end(rec, &tu, &tu.base_d, tu.base.us, tu.base.us,
		    tu.base.spread, "reserved");
		*chosen = tu.base_d;
		*keep = 1;
		aoe_graph_free(tu.sg);
		return rec;
	}
	nc = fusion_space(&tu, cand);
	/* The baseline counts as one of the budget's trials. */
	if (o->budget_trials > 0 && nc > o->budget_trials - 1)
		nc = o->budget_trials - 1;
	rc = 0;
	tu.prog = o->progress ? sp : NULL;
	for (i = 0; i < nc; i++) {
		if ((rc = try_cand(&tu, &cand[i])) != 0)
			break;
		sprog_update(&tu, i + 1, nc);
	}
	if (rc >= 0)
		per_op(&tu);
	before = tu.base.us;
	after = tu.best.us;
	sb = tu.base.spread;
	sa = tu.best.spread;
	if (!same_d(&tu.best_d, &tu.base_d)) {
		confirm(&tu, &before, &after, &sb, &sa);
		cJSON_AddStringToObject(rec, "confirmed", "model");
	}
	noise = opat_margin(o->noise_floor, sb, sa);
	if (!same_d(&tu.best_d, &tu.base_d) && after < before * (1 - noise)) {
		outcome = tu.hit ? "update" : "add";
		*chosen = tu.best_d;
		*keep = 1;
	} else {
		outcome = tu.hit ? "reserved" : "unsatisfied";
		*chosen = tu.base_d;
		*keep = tu.hit;
		after = before;
	}
	record_end(rec, &tu, chosen, before, after, noise, outcome);
	aoe_graph_free(tu.sg);
	return rec;
}

/*
 * g's partition: each node's part (-1 for none), and each part's
 * subgraph (an index into the distinct ones).
 */
typedef struct parts {
	int *part, np, *psub;
} parts;

/*
 * The distinct subgraphs of g's partition into subs (its first instance,
 * the names of every instance); their number in *nsub, the partition in
 * *pt.  0, or an error.
 */
static int
find_subs(aoe_graph *g, int nthreads, sub **subsp, int *nsub, parts *pt)
{
	int *part, *nodes, np, i, j, k, rc = 0;
	sub *subs;

	part = aoe_xcalloc((size_t)g->nnodes + 1, sizeof(int));
	nodes = aoe_xcalloc((size_t)g->nnodes + 1, sizeof(int));
	aoe_sgat_partition(g, part, &np);
	pt->part = part;
	pt->np = np;
	pt->psub = aoe_xcalloc((size_t)np + 1, sizeof(int));
	*subsp = subs = aoe_xcalloc((size_t)np + 1, sizeof(*subs));
	for (i = 0; i < np; i++) {
		char *sig;
		int n = aoe_sgat_members(g, part, i, nodes);
		if ((rc = aoe_sgat_signature(g, nodes, n, nthreads, &sig)) < 0)
			break;
		for (j = 0; j < *nsub; j++)
			if (strcmp(subs[j].sig, sig) == 0)
				break;
		if (j == *nsub) {
			subs[j].sig = sig;
			subs[j].key = aoe_op_key(sig);
			subs[j].nodes = aoe_xcalloc((size_t)n, sizeof(int));
			memcpy(subs[j].nodes, nodes, (size_t)n * sizeof(int));
			subs[j].n = n;
			subs[j].names = cJSON_CreateArray();
			(*nsub)++;
		} else
			free(sig);
		subs[j].instances++;
		pt->psub[i] = j;
		for (k = 0; k < n; k++)
			cJSON_AddItemToArray(subs[j].names,
			    cJSON_CreateString(g->nodes[nodes[k]].name));
	}
	free(nodes);
	return rc;
}

/*
 * A subgraph finished by an interrupted run: print its record again and
 * keep its decisions when they were kept then.  A journal is input too:
 * a record whose decisions are illegal (or unreadable) is ignored with a
 * warning and -1 returned, so that the subgraph is tuned again; its
 * decisions are never applied, written or committed.
 */
static int
from_journal(const cJSON *old, const sub *s, aoe_dtable *decisions,
    FILE *out)
{
	const cJSON *oc = cJSON_GetObjectItemCaseSensitive(old, "outcome");
	aoe_sched chosen;
	char *txt;
	int keep = cJSON_IsString(oc) && (!strcmp(oc->valuestring, "add") ||
	    !strcmp(oc->valuestring, "update") ||
	    !strcmp(oc->valuestring, "reserved"));

	if (keep) {
		char why[512];
		if (aoe_sched_from_json(cJSON_GetObjectItemCaseSensitive(old,
		    "schedule"), &chosen, why, sizeof(why)) < 0 ||
		    bank_check_decisions(s->sig, &chosen, why,
		    sizeof(why)) < 0) {
			aoe_warnx("journal: subgraph %llu: illegal decisions: "
			    "%s; ignored, tuned again", (unsigned long long)
			    aoe_op_key(s->sig), why);
			return -1;
		}
	}
	txt = cJSON_PrintUnformatted(old);
	fprintf(out, "%s\n", txt);
	free(txt);
	if (keep)
		aoe_dtable_set(decisions, s->sig, &chosen);
	return 0;
}

/*
 * Tune the subgraphs in turn, each with the decisions chosen before it,
 * writing their records (and the journal's); those of the journal done
 * are taken from it.  Failed subgraphs are counted in *nfailed.  The
 * progress is left in *prog, for its summary after the model check.
 */
static int
tune_subs(aoe_graph *g, sub *subs, int nsub, aoe_run_opts *ro,
    const sgat_opts *o, const cJSON *done, FILE *jfp, FILE *out,
    int *nfailed, int *nlate, aoe_tprog *prog)
{
	const cJSON *old, *oc, *b, *a, *t, *ts;
	aoe_sched chosen;
	sprog sp;
	cJSON *rec;
	char kb[32], what[80];
	int i, keep, rc;

	aoe_tprog_init(&sp.p, o->progress, nsub);
	sp.nodes_done = sp.nodes_total = 0;
	for (i = 0; i < nsub; i++)
		sp.nodes_total += subs[i].n;
	for (i = 0; i < nsub; i++) {
		snprintf(kb, sizeof(kb), "%llu", (unsigned long long)
		    subs[i].key);
		snprintf(what, sizeof(what), "subgraph %s (%d nodes x%d)", kb,
		    subs[i].n, subs[i].instances);
		if (done && (old = cJSON_GetObjectItemCaseSensitive(done,
		    kb)) != NULL && from_journal(old, &subs[i], ro->decisions,
		    out) == 0) {
			sp.nodes_done += subs[i].n;
			aoe_tprog_case(&sp.p, what, "from the journal", 0, 0, 0,
			    0, sprog_eta(&sp, sp.nodes_done));
			continue;
		}
		if (time_left() <= 0) {
			/* --total-seconds: not reached, not failed. */
			rec = record_new(g, &subs[i], ro->nthreads);
			cJSON_AddNumberToObject(rec, "tuning_time_s", 0);
			cJSON_AddStringToObject(rec, "outcome", "unsatisfied");
			cJSON_AddBoolToObject(rec, "not_reached", 1);
			cJSON_AddStringToObject(rec, "reason", "--total-seconds "
			    "ended the run before this subgraph");
			sp.nodes_done += subs[i].n;
			(*nlate)++;
			rc = emit(rec, out, NULL);
			cJSON_Delete(rec);
			if (rc < 0)
				return rc;
			continue;
		}
		keep = 0;
		aoe_tprog_note(&sp.p, "[%d done, %d left] %s: baseline",
		    i, nsub - i, what);
		rec = tune_one(g, &subs[i], ro, o, ro->nthreads, &sp, &chosen,
		    &keep);
		sp.nodes_done += subs[i].n;
		if (keep)
			aoe_dtable_set(ro->decisions, subs[i].sig, &chosen);
		oc = cJSON_GetObjectItemCaseSensitive(rec, "outcome");
		if (strcmp(oc->valuestring, "failed") == 0)
			(*nfailed)++;
		b = cJSON_GetObjectItemCaseSensitive(rec, "before_us");
		a = cJSON_GetObjectItemCaseSensitive(rec, "after_us");
		t = cJSON_GetObjectItemCaseSensitive(rec, "trials");
		ts = cJSON_GetObjectItemCaseSensitive(rec, "tuning_time_s");
		aoe_tprog_case(&sp.p, what, oc->valuestring,
		    cJSON_IsNumber(b) ? b->valuedouble : 0,
		    cJSON_IsNumber(a) ? a->valuedouble : 0,
		    cJSON_IsNumber(t) ? t->valueint : 0,
		    cJSON_IsNumber(ts) ? ts->valuedouble : 0,
		    sprog_eta(&sp, sp.nodes_done));
		rc = emit(rec, out, jfp);
		cJSON_Delete(rec);
		if (rc < 0)
			return rc;
	}
	*prog = sp.p;
	return 0;
}

/*
 * Layout regions.  A subgraph's decisions are confirmed in the model
 * with those of the subgraphs before it, so the blocked layout is kept
 * only where one subgraph pays for its own reorders in and out.  A region
 * is a run of subgraphs, each after the one before in the graph's order
 * and reading what it writes, each with a Conv that can take the blocked
 * layout: with the layout on all of them the reorders between them go,
 * and only those at the run's ends remain.  After the subgraphs, each
 * such run (the longest ones; while a run loses, its halves, down to two
 * subgraphs, REGION_TRIES measurements a run at most) is measured in the
 * model as a whole, every instance of its subgraphs' nodes and the
 * reorders at their edges, with its subgraphs' decisions as chosen and
 * with the blocked layout added to each, CONFIRM rounds, the best of
 * each.  A region that wins beyond the noise adds the layout to its
 * subgraphs' decisions, which later regions and the whole-model check
 * then run with; their records say so (flush_records).
 */
#define REGION_TRIES 8

typedef struct region {
	int *members, nm;	/* indices of subs */
	double before, after, spread;
} region;

typedef struct regions {
	region *r;
	int n;
	int *of;		/* of[sub]: its region, or -1 */
	int *hit;		/* hit[sub]: the baseline was the bank's */
	aoe_sched *d;		/* d[sub]: its decisions, the region's */
	int tries;		/* measurements of the current run */
	int ntried;		/* regions measured in all */
	cJSON *tried;		/* and how: for the model record */
	double cost_s;		/* of the last, for --total-seconds */
} regions;

/* The decisions sub s runs with now; *hit when they are the bank's. */
static void
current_d(aoe_graph *g, const sub *s, const aoe_dtable *t, aoe_sched *d,
    int *hit)
{
	tuning tu;

	memset(&tu, 0, sizeof(tu));
	tu.g = g;
	tu.s = s;
	baseline(&tu);
	*hit = tu.hit;
	*d = tu.base_d;
	(void)aoe_dtable_find(t, s->sig, d);
}

/*
 * AOE_SGAT_REGION_AFTER=f (tests): a region measures f times its time,
 * with no spread.
 */
static double
region_after_env(void)
{
	const char *v = getenv("AOE_SGAT_REGION_AFTER");
	char *end;
	double f;

	if (v == NULL || *v == '\0')
		return 0;
	f = strtod(v, &end);
	return *end == '\0' && f > 0 && f <= 10 ? f : 0;
}

/* The repo_keys of subs mem[0..nm), a JSON array. */
static cJSON *
keys_json(const sub *subs, const int *mem, int nm)
{
	cJSON *keys = cJSON_CreateArray();
	char kb[32];
	int i;

	for (i = 0; i < nm; i++) {
		snprintf(kb, sizeof(kb), "%llu", (unsigned long long)
		    subs[mem[i]].key);
		cJSON_AddItemToArray(keys, cJSON_CreateString(kb));
	}
	return keys;
}

/*
 * Measure the region of the parts ord[a..b) and keep it when it wins;
 * while it loses, its halves.  0, 1 when --total-seconds leaves no time,
 * or an error.
 */
static int
try_region(aoe_graph *g, sub *subs, const parts *pt, const int *ord,
    int a, int b, aoe_run_opts *ro, const sgat_opts *o, regions *rg)
{
	sdec *bd, *ad;
	cJSON *names;
	region r;
	inmodel m;
	double noise, f;
	int i, j, nm = 0, todo = 0, bad = 0, rc = 0;
	int *mem = aoe_xcalloc((size_t)(b - a) + 1, sizeof(int));

	for (i = a; i < b; i++) {
		int k = pt->psub[ord[i]];
		for (j = 0; j < nm && mem[j] != k; j++)
			;
		if (j == nm)
			mem[nm++] = k;
	}
	bd = aoe_xcalloc((size_t)nm, sizeof(*bd));
	ad = aoe_xcalloc((size_t)nm, sizeof(*ad));
	names = cJSON_CreateArray();
	for (i = 0; i < nm; i++) {
		const cJSON *it;
		int hit;
		current_d(g, &subs[mem[i]], ro->decisions, &bd[i].d, &hit);
		bd[i].sig = ad[i].sig = subs[mem[i]].sig;
		ad[i].d = bd[i].d;
		aoe_sched_set(&ad[i].d, "layout", AOE_LAYOUT_8C);
		todo |= aoe_sched_get(&bd[i].d, "layout", 0) == 0;
		rg->hit[mem[i]] = hit;
		cJSON_ArrayForEach(it, subs[mem[i]].names)
			cJSON_AddItemToArray(names, cJSON_Duplicate(it, 0));
	}
	memset(&m, 0, sizeof(m));
	if (todo && rg->tries >= REGION_TRIES) {
		bad = 1;
		rc = time_left() < rg->cost_s;
	} else if (todo) {
		if ((rc = in_model(g, ro, o, o->seed + 7, bd, ad, nm, names,
		    rg->cost_s, 1, &m)) < 0)
			goto out;
		if (m.rounds > 0 || m.failed) {
			rg->tries++;
			rg->ntried++;
			rg->cost_s = m.last_s;
		}
		bad = m.failed || m.rounds < CONFIRM;
		/* --total-seconds ended the rounds. */
		rc = !m.failed && m.rounds < CONFIRM;
	}
	r.before = m.before;
	r.after = m.after;
	if (todo && !bad && rc == 0 && (f = region_after_env()) > 0) {
		/* With no spread: a busy host must not decide a test. */
		r.after = r.before * f;
		m.sb = m.sa = 0;
	}
	/*
	 * Twice the noise: a region's layout reaches further than its
	 * nodes' times (mobilenet_v3_large at 1 thread kept one 2.04% faster
	 * against a floor of 2% that made the whole model 2.3% slower).
	 */
	noise = 2 * opat_margin(o->noise_floor, m.sb, m.sa);
	/* Every region measured is listed, one cut short too. */
	if (todo && (m.rounds > 0 || m.failed)) {
		cJSON *e = cJSON_CreateObject();
		char why[96];
		cJSON_AddItemToObject(e, "subgraphs", keys_json(subs, mem,
		    nm));
		cJSON_AddStringToObject(e, "status", opat_status_name(bad ?
		    (m.failed ? m.fail.status : OPAT_TIMEOUT) : OPAT_OK));
		if (bad && m.failed)
			cJSON_AddStringToObject(e, "reason", m.fail.reason);
		else if (bad) {
			snprintf(why, sizeof(why), "--total-seconds ended its "
			    "rounds after %d of %d", m.rounds, CONFIRM);
			cJSON_AddStringToObject(e, "reason", why);
		} else {
			cJSON_AddNumberToObject(e, "before_us",
			    round6(r.before));
			cJSON_AddNumberToObject(e, "after_us",
			    round6(r.after));
			cJSON_AddNumberToObject(e, "spread", round6(noise));
		}
		cJSON_AddBoolToObject(e, "kept", !bad && r.after < r.before *
		    (1 - noise));
		cJSON_AddItemToArray(rg->tried, e);
	}
	if (todo && !bad && rc == 0 && r.after < r.before * (1 - noise)) {
		/*
		 * The region's members are the subgraphs it blocked: one
		 * already blocked (by an earlier region, or the bank) keeps
		 * its record and region, as this one measured it unchanged.
		 */
		r.members = aoe_xcalloc((size_t)nm, sizeof(int));
		r.nm = 0;
		r.spread = noise;
		for (i = 0; i < nm; i++) {
			if (aoe_sched_get(&bd[i].d, "layout", 0) != 0)
				continue;
			r.members[r.nm++] = mem[i];
			rg->of[mem[i]] = rg->n;
			rg->d[mem[i]] = ad[i].d;
			aoe_dtable_set(ro->decisions, ad[i].sig, &ad[i].d);
		}
		rg->r = aoe_xrealloc(rg->r, (size_t)(rg->n + 1) *
		    sizeof(region));
		rg->r[rg->n++] = r;
	} else if (todo && rc == 0 && b - a >= 4) {
		int half = (a + b) / 2;
		if ((rc = try_region(g, subs, pt, ord, a, half, ro, o, rg)) ==
		    0)
			rc = try_region(g, subs, pt, ord, half, b, ro, o, rg);
	}
out:
	free(mem);
	free(bd);
	free(ad);
	cJSON_Delete(names);
	return rc;
}

/* Position of each part's first node in g's order, for sorting parts. */
static int *part_pos;

static int
cmp_part(const void *x, const void *y)
{
	int a = part_pos[*(const int *)x], b = part_pos[*(const int *)y];

	return (a > b) - (a < b);
}

/*
 * Find the runs of subgraphs that could form layout regions and try
 * each (try_region); what wins is in *rg.  0, or an error.
 */
static int
layout_regions(aoe_graph *g, sub *subs, int nsub, const parts *pt,
    aoe_run_opts *ro, const sgat_opts *o, regions *rg)
{
	int *ord, *prod, *cap, np = pt->np, i, j, k, a, rc = 0;

	rg->tried = cJSON_CreateArray();
	rg->of = aoe_xcalloc((size_t)nsub + 1, sizeof(int));
	rg->hit = aoe_xcalloc((size_t)nsub + 1, sizeof(int));
	rg->d = aoe_xcalloc((size_t)nsub + 1, sizeof(aoe_sched));
	for (i = 0; i < nsub; i++)
		rg->of[i] = -1;
	if (np < 2)
		return 0;
	ord = aoe_xcalloc((size_t)np, sizeof(int));
	cap = aoe_xcalloc((size_t)nsub, sizeof(int));
	part_pos = aoe_xcalloc((size_t)np, sizeof(int));
	prod = aoe_xcalloc((size_t)g->ntensors + 1, sizeof(int));
	for (i = 0; i < np; i++)
		part_pos[i] = -1;
	for (i = 0; i < g->ntensors; i++)
		prod[i] = -1;
	for (i = 0; i < g->norder; i++) {
		const aoe_node *n = &g->nodes[g->order[i]];
		int p = pt->part[g->order[i]];
		if (p < 0 || n->dead)
			continue;
		if (part_pos[p] < 0)
			part_pos[p] = i;
		for (j = 0; j < n->nout; j++)
			if (n->out[j] >= 0)
				prod[n->out[j]] = p;
	}
	for (i = 0; i < np; i++)
		ord[i] = i;
	qsort(ord, (size_t)np, sizeof(int), cmp_part);
	for (i = 0; i < nsub; i++)
		cap[i] = aoe_sgat_layout_nodes(g, subs[i].nodes, subs[i].n) > 0;
	for (a = 0; a < np && rc == 0; a = k) {
		/* The run from ord[a]: capable parts, each reading the last. */
		for (k = a + 1; cap[pt->psub[ord[a]]] && k < np &&
		    cap[pt->psub[ord[k]]]; k++) {
			int reads = 0;
			for (i = 0; i < g->norder && !reads; i++) {
				const aoe_node *n = &g->nodes[g->order[i]];
				if (pt->part[g->order[i]] != ord[k] || n->dead)
					continue;
				for (j = 0; j < n->nin - n->nimplicit; j++)
					if (n->in[j] >= 0 &&
					    prod[n->in[j]] == ord[k - 1])
						reads = 1;
			}
			if (!reads)
				break;
		}
		if (k - a >= 2) {
			rg->tries = 0;
			rc = try_region(g, subs, pt, ord, a, k, ro, o, rg);
		}
	}
	free(part_pos);
	part_pos = NULL;
	free(ord);
	free(cap);
	free(prod);
	return rc > 0 ? 0 : rc;
}

/* A subgraph record of a winning region: its decisions, the region's. */
static void
region_record(cJSON *r, const regions *rg, const sub *subs, int k)
{
	const region *reg = &rg->r[rg->of[k]];
	const cJSON *oc = cJSON_GetObjectItemCaseSensitive(r, "outcome");
	int upd = rg->hit[k] || (cJSON_IsString(oc) &&
	    (strcmp(oc->valuestring, "update") == 0 ||
	    strcmp(oc->valuestring, "reserved") == 0));
	cJSON *ro;

	cJSON_DeleteItemFromObjectCaseSensitive(r, "schedule");
	cJSON_DeleteItemFromObjectCaseSensitive(r, "before_us");
	cJSON_DeleteItemFromObjectCaseSensitive(r, "after_us");
	cJSON_DeleteItemFromObjectCaseSensitive(r, "spread");
	cJSON_DeleteItemFromObjectCaseSensitive(r, "outcome");
	cJSON_DeleteItemFromObjectCaseSensitive(r, "confirmed");
	cJSON_AddNumberToObject(r, "before_us", round6(reg->before));
	cJSON_AddNumberToObject(r, "after_us", round6(reg->after));
	cJSON_AddNumberToObject(r, "spread", round6(reg->spread));
	cJSON_AddItemToObject(r, "schedule", d_json(&rg->d[k]));
	cJSON_AddStringToObject(r, "confirmed", "model");
	ro = cJSON_AddObjectToObject(r, "region");
	cJSON_AddNumberToObject(ro, "index", rg->of[k]);
	cJSON_AddItemToObject(ro, "subgraphs", keys_json(subs, reg->members,
	    reg->nm));
	cJSON_AddStringToObject(r, "outcome", upd ? "update" : "add");
}

/*
 * region_record, and the progress's summary told: the record counts as
 * its new outcome, without what it saved alone; the region's time saved
 * counts once, with its first subgraph (*counted).
 */
static void
region_moved(cJSON *r, const regions *rg, const sub *subs, int k,
    aoe_tprog *prog, char *counted)
{
	const cJSON *oc = cJSON_GetObjectItemCaseSensitive(r, "outcome");
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(r, "before_us");
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(r, "after_us");
	const region *reg = &rg->r[rg->of[k]];
	char was[32];
	double saved = 0;

	snprintf(was, sizeof(was), "%s", cJSON_IsString(oc) ?
	    oc->valuestring : "");
	if ((strcmp(was, "add") == 0 || strcmp(was, "update") == 0) &&
	    cJSON_IsNumber(b) && cJSON_IsNumber(a))
		saved = a->valuedouble - b->valuedouble;
	region_record(r, rg, subs, k);
	if (!*counted) {
		saved += reg->before - reg->after;
		*counted = 1;
	}
	oc = cJSON_GetObjectItemCaseSensitive(r, "outcome");
	aoe_tprog_recount(prog, was, oc->valuestring, saved);
}

/* A child of the whole-model check: side 0 without the decisions. */
static void
whole_child(int side, int fd, void *arg)
{
	meas_arg *a = arg;

	child(a->g, a->ro, side ? AOE_FUSE_BANK : AOE_FUSE_ALL, NULL, 0,
	    a->seed, a->o, NULL, 0, NULL, a->nrep, fd);
}

/*
 * The seconds the model record's measurements take (model_times, by
 * opat_whole_reserve: each child prepares the model twice and runs it
 * twice more than its repeats), from prep_s, what preparing g took, and
 * one run of g timed now.  A fixed guess of a second fell short on
 * ppocrv4_det (640x640, about 50 ms a run): --total-seconds 60 ran 68 s
 * (AMD EPYC Zen 5, 1 thread).
 */
static double
model_reserve(aoe_graph *g, const aoe_run_opts *ro, const sgat_opts *o,
    double prep_s)
{
	double t = aoe_now_us(), run_s;

	aoe_graph_fill_inputs(g, o->seed);
	if (aoe_graph_run(g, ro) < 0)
		run_s = 0.25;
	else
		run_s = (aoe_now_us() - t) / 1e6;
	return opat_whole_reserve(CHILD_S + 2 * prep_s + 2 * run_s, run_s,
	    o->run_loop);
}

/*
 * The whole model without the subgraph bank (the default decisions
 * everywhere) and with the decisions (opat_whole_check): us[2] and
 * spread[2], in microseconds.  0, or an error.
 */
static int
model_times(aoe_graph *g, aoe_run_opts *ro, const sgat_opts *o,
    const char *path, double *us, double *spread)
{
	meas_arg a;

	memset(&a, 0, sizeof(a));
	a.g = g;
	a.ro = ro;
	a.seed = o->seed;
	a.o = o;
	a.nrep = OPAT_MREP;
	return opat_whole_check(path, o->timeout_s, whole_child, &a, us,
	    spread);
}

/*
 * Write the held records to out, those of the subgraphs of a winning
 * layout region with the region's decisions and times (region_record);
 * with slower (the whole model slower with the decisions than without,
 * beyond the spread), each add or update is backed out: it becomes
 * unsatisfied or reserved, with backed_out and why, and is not
 * committed.  *n counts them, and so does the progress's summary, prog.
 */
static int
flush_records(char *buf, const regions *rg, const sub *subs, int nsub,
    int slower, double base_us, double res_us, FILE *out, int *n,
    aoe_tprog *prog)
{
	char *line, *save = NULL, why[160];
	/* A region's time saved counts once, not once a subgraph. */
	char *counted = aoe_xcalloc((size_t)rg->n + 1, 2);
	int rc = 0;

	*n = 0;
	snprintf(why, sizeof(why), "the whole model was %.2f%% slower with "
	    "the decisions, beyond its spread", base_us > 0 ? (res_us -
	    base_us) / base_us * 100 : 0.0);
	for (line = buf ? strtok_r(buf, "\n", &save) : NULL; line && rc == 0;
	    line = strtok_r(NULL, "\n", &save)) {
		cJSON *r = slower || rg->n > 0 ? cJSON_Parse(line) : NULL;
		const cJSON *oc, *k = cJSON_GetObjectItemCaseSensitive(r,
		    "repo_key");
		int i, reg = -1;

		for (i = 0; rg->n > 0 && cJSON_IsString(k) && i < nsub; i++)
			if (rg->of[i] >= 0 && strtoull(k->valuestring, NULL,
			    10) == subs[i].key) {
				reg = rg->of[i];
				region_moved(r, rg, subs, i, prog,
				    &counted[2 * reg]);
				break;
			}
		oc = cJSON_GetObjectItemCaseSensitive(r, "outcome");
		if (slower && r && cJSON_IsString(oc) &&
		    (strcmp(oc->valuestring,
		    "add") == 0 || strcmp(oc->valuestring, "update") == 0)) {
			int upd = strcmp(oc->valuestring, "update") == 0;
			const cJSON *b = cJSON_GetObjectItemCaseSensitive(r,
			    "before_us"), *a = cJSON_GetObjectItemCaseSensitive(
			    r, "after_us");
			aoe_tprog_backout(prog, oc->valuestring, upd ?
			    "reserved" : "unsatisfied", reg < 0 &&
			    cJSON_IsNumber(b) ? b->valuedouble : 0, reg < 0 &&
			    cJSON_IsNumber(a) ? a->valuedouble : 0);
			if (reg >= 0 && !counted[2 * reg + 1]++)
				aoe_tprog_recount(prog, NULL, NULL,
				    rg->r[reg].after - rg->r[reg].before);
			cJSON_ReplaceItemInObjectCaseSensitive(r, "outcome",
			    cJSON_CreateString(upd ? "reserved" :
			    "unsatisfied"));
			cJSON_AddBoolToObject(r, "backed_out", 1);
			cJSON_AddStringToObject(r, "backed_out_why", why);
			rc = emit(r, out, NULL);
			(*n)++;
		} else if (reg >= 0)
			rc = emit(r, out, NULL);
		else {
			fprintf(out, "%s\n", line);
			if (fflush(out) != 0)
				rc = aoe_err(AOE_EIO, "cannot write the "
				    "records: %s", strerror(errno));
		}
		cJSON_Delete(r);
	}
	free(counted);
	return rc;
}

int
sgat_tune(const sgat_opts *o, const char *path, FILE *out)
{
	aoe_graph *g = NULL;
	aoe_run_opts ro;
	cJSON *done = NULL, *rec;
	FILE *jfp = NULL;
	sub *subs = NULL;
	parts pt;
	regions rg;
	int nsub = 0, i, rc, nfailed = 0;
	double mus[2], msp[2];
	double t0 = aoe_now_us(), tp;
	char *mbuf = NULL;
	size_t mlen = 0;
	FILE *mem = NULL;
	int slower, nbacked = 0, nlate = 0;
	aoe_tprog prog;

	memset(&pt, 0, sizeof(pt));
	memset(&rg, 0, sizeof(rg));
	if ((rc = opat_fault_check()) < 0)
		return rc;
	/*
	 * --total-seconds bounds the whole run from here, the model
	 * record's whole-model measurements (a reserve, model_reserve)
	 * included.
	 */
	deadline = o->total_seconds > 0 ? t0 + o->total_seconds * 1e6 :
	    HUGE_VAL;
	reserve_s = 0;
	aoe_run_opts_init(&ro);
	if (o->threads > 0)
		ro.nthreads = o->threads;
	ro.use_bank = o->use_bank;
	ro.static_memory = 0;
	ro.profile = 0;
	/* The chains as the model has them; the decisions chosen so far. */
	ro.fuse_mode = AOE_FUSE_OFF;
	ro.decisions = aoe_dtable_new();
	if ((rc = aoe_model_load(path, &g)) < 0)
		goto out;
	if (o->shape && (rc = aoe_bind_shapes(g, o->shape)) < 0)
		goto out;
	tp = aoe_now_us();
	if ((rc = aoe_graph_prepare(g, &ro)) < 0)
		goto out;
	if (o->total_seconds > 0)
		reserve_s = model_reserve(g, &ro, o, (aoe_now_us() - tp) / 1e6);
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
	/*
	 * The records wait for the model record: decisions that make the
	 * whole model slower beyond its spread are backed out before any
	 * is written (and so committed).
	 */
	if ((mem = open_memstream(&mbuf, &mlen)) == NULL) {
		rc = aoe_err(AOE_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = find_subs(g, ro.nthreads, &subs, &nsub, &pt)) < 0 ||
	    (rc = tune_subs(g, subs, nsub, &ro, o, done, jfp, mem,
	    &nfailed, &nlate, &prog)) < 0 ||
	    (o->regions && (rc = layout_regions(g, subs, nsub, &pt, &ro, o,
	    &rg)) < 0) ||
	    (rc = model_times(g, &ro, o, path, mus, msp)) < 0)
		goto out;
	fclose(mem);
	mem = NULL;
	opat_slower_hook("AOE_SGAT_SLOWER_MODEL", mus, msp);
	slower = opat_whole_slower(mus, msp, o->noise_floor);
	if ((rc = flush_records(mbuf, &rg, subs, nsub, slower, mus[0],
	    mus[1], out, &nbacked, &prog)) < 0)
		goto out;
	aoe_tprog_end(&prog, "subgraphs");
	for (i = 0; o->progress && i < rg.n; i++)
		aoe_warnx("%s: layout region %d (%d subgraphs): %.3f -> %.3f "
		    "ms%s", path, i, rg.r[i].nm, rg.r[i].before / 1e3,
		    rg.r[i].after / 1e3, slower ? ", backed out" : "");
	if (nbacked)
		aoe_warnx("%s: the whole model was %.2f%% slower with the "
		    "decisions (%.3f -> %.3f ms, spread %.3f ms): %d backed "
		    "out, none committed", path, (mus[1] - mus[0]) / mus[0] *
		    100, mus[0] / 1e3, mus[1] / 1e3, (msp[0] + msp[1]) /
		    1e3, nbacked);
	rec = cJSON_CreateObject();
	cJSON_AddStringToObject(rec, "kind", "model");
	cJSON_AddStringToObject(rec, "graph", path);
	cJSON_AddNumberToObject(rec, "threads", ro.nthreads);
	cJSON_AddNumberToObject(rec, "baseline_us", round6(mus[0]));
	cJSON_AddNumberToObject(rec, "result_us", round6(mus[1]));
	cJSON_AddNumberToObject(rec, "baseline_spread", round6(msp[0]));
	cJSON_AddNumberToObject(rec, "result_spread", round6(msp[1]));
	cJSON_AddNumberToObject(rec, "subgraphs", nsub);
	cJSON_AddNumberToObject(rec, "regions_tried", rg.ntried);
	cJSON_AddNumberToObject(rec, "regions", rg.n);
	cJSON_AddItemToObject(rec, "layout_regions", rg.tried ? rg.tried :
	    cJSON_CreateArray());
	rg.tried = NULL;
	cJSON_AddNumberToObject(rec, "backed_out", nbacked);
	cJSON_AddNumberToObject(rec, "tuning_time_s",
	    round6((aoe_now_us() - t0) / 1e6));
	rc = emit(rec, out, NULL);
	cJSON_Delete(rec);
	if (rc == 0 && o->progress)
		aoe_warnx("%s: model %.3f -> %.3f ms", path, mus[0] / 1e3,
		    mus[1] / 1e3);
	if (rc == 0 && nfailed)
		aoe_warnx("%s: %d of %d subgraphs failed (see their records)",
		    path, nfailed, nsub);
	if (rc == 0 && nlate)
		aoe_warnx("%s: --total-seconds %g ended the run before %d of "
		    "%d subgraphs: not reached (see their records)", path,
		    o->total_seconds, nlate, nsub);
out:
	if (mem)
		fclose(mem);
	free(mbuf);
	for (i = 0; i < nsub; i++) {
		free(subs[i].sig);
		free(subs[i].nodes);
		cJSON_Delete(subs[i].names);
	}
	free(subs);
	free(pt.part);
	free(pt.psub);
	for (i = 0; i < rg.n; i++)
		free(rg.r[i].members);
	free(rg.r);
	cJSON_Delete(rg.tried);
	free(rg.of);
	free(rg.hit);
	free(rg.d);
	cJSON_Delete(done);
	if (jfp)
		fclose(jfp);
	aoe_graph_free(g);
	aoe_dtable_free(ro.decisions);
	return rc;
}
