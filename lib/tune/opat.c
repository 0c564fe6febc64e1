/*
 * opat.c - operator tuning (AOE's OPAT) on libaoe's tunable kernels.
 *
 * Graphs are loaded and prepared with the default schedules; their live
 * nodes are grouped into cases by the key of their canonical signature
 * (aoe-bank(5)), and each case is tuned once for all the names that share
 * it.  Every case's baseline (the default schedule, or the bank's entry
 * on a hit) is measured first, so that a whole-run budget can be shared
 * in proportion to each case's share of the model's time; then the cases
 * are tuned, largest first, by the search strategies of search.c, over
 * measurements taken by measure.c (or looked up in a replay set), and a
 * tuning record is written for each.
 *
 * Every measurement and every record is appended to the journal (when
 * there is one) before it is used, so a run killed at any point and
 * started again with the same arguments replays the journal instead of
 * measuring again and ends with the same records.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <signal.h>
#include <unistd.h>

#include "opat.h"

#define SIGMAX 65536
#define CONFIRM 3		/* rounds measuring the baseline and winner again */
#define TOPK 5			/* candidates confirmed beside the baseline */
#define KEEPK 2			/* of them, those the later rounds measure */
/* The measurements of the confirmation rounds, at most. */
#define NCONFIRM ((1 + TOPK) + (CONFIRM - 1) * (1 + KEEPK))
#define MCHILD_S 0.15		/* a child's start and prepare, a guess */

static const char *const strategy_names[] = { "auto", "exhaustive",
	"random", "evolution" };

const char *
opat_strategy_name(int s)
{
	return s >= 0 && s <= OPAT_EVOLUTION ? strategy_names[s] : "?";
}

int
opat_strategy_from_name(const char *s)
{
	int i;

	for (i = 0; i <= OPAT_EVOLUTION; i++)
		if (strcmp(s, strategy_names[i]) == 0)
			return i;
	return -1;
}

void
opat_opts_init(opat_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->threads = aoe_nthreads(0);
	o->run_loop = 10;
	o->te_parallel = 2;
	o->tuning_parallel = 8;
	o->budget_trials = 64;
	o->budget_seconds = 60;
	o->total_seconds = 600;
	o->timeout_s = 20;
	o->seed = 1;
	o->noise_floor = 0.02;
	o->min_gain_us = 1.0;
	o->in_model = 1;
	o->strategy = OPAT_AUTO;
	o->min_trials = 4;
}

/*
 * A small string map (chained hash), for the journal and replay sets.
 */
typedef struct mnode {
	char *k;
	void *v;
	struct mnode *next;
} mnode;
struct opat_map {
	mnode *b[4096];
};

static opat_map *
map_new(void)
{
	return aoe_xcalloc(1, sizeof(opat_map));
}

static void *
map_get(const opat_map *m, const char *k)
{
	const mnode *n;

	if (m == NULL)
		return NULL;
	for (n = m->b[opat_hash(0, k) % 4096]; n; n = n->next)
		if (strcmp(n->k, k) == 0)
			return n->v;
	return NULL;
}

static void
map_put(opat_map *m, const char *k, void *v)
{
	mnode *n;
	uint64_t h = opat_hash(0, k) % 4096;

	for (n = m->b[h]; n; n = n->next)
		if (strcmp(n->k, k) == 0) {
			free(n->v);
			n->v = v;
			return;
		}
	n = aoe_xcalloc(1, sizeof(*n));
	n->k = aoe_xstrdup(k);
	n->v = v;
	n->next = m->b[h];
	m->b[h] = n;
}

static void
map_free(opat_map *m, void (*fr)(void *))
{
	mnode *n, *nx;
	int i;

	if (m == NULL)
		return;
	for (i = 0; i < 4096; i++)
		for (n = m->b[i]; n; n = nx) {
			nx = n->next;
			free(n->k);
			if (fr)
				fr(n->v);
			else
				free(n->v);
			free(n);
		}
	free(m);
}

static void
json_free(void *p)
{
	cJSON_Delete(p);
}

#define jstr opat_jstr
#define jnum opat_jnum

/*
 * Graphs.
 */

/*
 * Mark the nodes of og->g that the runtime's fusion removes: the graph
 * is prepared again as aoe-run prepares it (fusion on, the subgraph
 * bank's decisions), and a node is gone when no live node there has its
 * name and op type.
 */
static int
fused_away(opat_graph *og, const char *path, const char *shape)
{
	aoe_graph *f = NULL;
	aoe_run_opts ro;
	char *mode;
	int i, j, rc = 0;

	og->gone = aoe_xcalloc((size_t)og->g->nnodes + 1, 1);
	if ((rc = aoe_model_load(path, &f)) < 0)
		return rc;
	aoe_run_opts_init(&ro);
	ro.static_memory = 0;
	ro.profile = 0;
	ro.plan_only = 1;
	/*
	 * As the model runs once tuned: under AOE_MODE (a workload handing
	 * its graphs to the tools) libaoe does not fuse, later it does.
	 */
	if ((mode = getenv("AOE_MODE")) != NULL) {
		mode = aoe_xstrdup(mode);
		unsetenv("AOE_MODE");
	}
	if (!(shape && *shape && (rc = aoe_bind_shapes(f, shape)) < 0))
		rc = aoe_graph_prepare(f, &ro);
	if (mode) {
		setenv("AOE_MODE", mode, 1);
		free(mode);
	}
	if (rc < 0) {
		aoe_graph_free(f);
		return rc;
	}
	for (i = 0; i < og->g->nnodes; i++) {
		const aoe_node *n = &og->g->nodes[i];
		og->gone[i] = 1;
		for (j = 0; j < f->nnodes && og->gone[i]; j++)
			if (!f->nodes[j].dead && strcmp(f->nodes[j].name,
			    n->name) == 0 && strcmp(f->nodes[j].op_type,
			    n->op_type) == 0)
				og->gone[i] = 0;
	}
	aoe_graph_free(f);
	return 0;
}

/*
 * A subgraph's operators are tuned as they are in the branch: with the
 * shapes its enclosing graphs' analysis bound.  The values it reads from
 * them (and its own inputs) get their data only while the node runs; a
 * measurement runs the node alone, so each gets a buffer of its own.
 */
static int
add_sub(aoe_graph *g, aoe_node *n, const char *path, void *arg)
{
	opat_run *r = arg;
	opat_graph *og;
	size_t pl = strlen(path) - strlen(n->name);
	int i;

	if (g->parent == NULL)
		return 0;
	for (i = 0; i < n->nin; i++) {
		aoe_tensor *t = aoe_in(g, n, i);
		aoe_tkind kind;
		if (t == NULL || t->data != NULL || t->kind == AOE_T_CONST ||
		    t->dynamic || aoe_is_value(t) || t->ndim < 0)
			continue;
		/* Owned, freed with the graph; not a constant. */
		kind = t->kind;
		if (aoe_tensor_alloc_const(t) < 0)
			return -1;
		t->kind = kind;
	}
	/* Back to the graph that holds them all. */
	for (i = r->ngraphs - 1; i >= 0; i--)
		if (r->graphs[i].g == g)
			return 0;
		else if (!r->graphs[i].sub)
			break;
	r->graphs = aoe_xrealloc(r->graphs, (r->ngraphs + 1) *
	    sizeof(*r->graphs));
	og = &r->graphs[r->ngraphs];
	memset(og, 0, sizeof(*og));
	og->path = aoe_xstrdup(r->graphs[r->ngraphs - 1].path);
	og->shape = aoe_xstrdup(r->graphs[r->ngraphs - 1].shape);
	og->g = g;
	og->sub = 1;
	og->prefix = aoe_xmalloc(pl + 1);
	memcpy(og->prefix, path, pl);
	og->prefix[pl] = '\0';
	r->ngraphs++;
	return 0;
}

static int
load_graph(opat_run *r, const char *path, const char *shape, int *gi)
{
	opat_graph *og;
	aoe_run_opts ro;
	char *abs;
	int i, rc;

	abs = strcmp(path, "-") ? realpath(path, NULL) : NULL;
	for (i = 0; i < r->ngraphs; i++)
		if (!r->graphs[i].sub &&
		    strcmp(r->graphs[i].path, abs ? abs : path) == 0 &&
		    strcmp(r->graphs[i].shape, shape ? shape : "") == 0) {
			*gi = i;
			free(abs);
			return 0;
		}
	r->graphs = aoe_xrealloc(r->graphs, (r->ngraphs + 1) *
	    sizeof(*r->graphs));
	og = &r->graphs[r->ngraphs];
	memset(og, 0, sizeof(*og));
	og->path = abs ? abs : aoe_xstrdup(path);
	og->shape = aoe_xstrdup(shape ? shape : "");
	if ((rc = aoe_model_load(path, &og->g)) < 0)
		goto fail;
	if (shape && *shape && (rc = aoe_bind_shapes(og->g, shape)) < 0)
		goto fail;
	aoe_run_opts_init(&ro);
	ro.nthreads = r->o.threads;
	ro.use_bank = 0;	/* measure against the default heuristic */
	ro.static_memory = 0;
	ro.profile = 0;
	/* Operators are tuned as the model has them, before any fusion. */
	ro.fuse_mode = AOE_FUSE_OFF;
	rc = aoe_graph_prepare(og->g, &ro);
	if (rc < 0)
		goto fail;
	if ((rc = fused_away(og, path, shape)) < 0)
		goto fail;
	og->prefix = aoe_xstrdup("");
	*gi = r->ngraphs++;
	/* Its subgraphs follow it, each once. */
	if (aoe_graph_each_node(r->graphs[*gi].g, add_sub, r) < 0)
		return -AOE_ENOMEM;
	return 0;
fail:
	free(og->gone);
	aoe_graph_free(og->g);
	free(og->path);
	free(og->shape);
	return rc;
}

static int
in_list(char **l, int n, const char *s)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(l[i], s) == 0)
			return 1;
	return 0;
}

/* Whether --tune-ops-file (or a task list) selects this node. */
static int
selected(const opat_run *r, const aoe_node *n, const char *name,
    char **only, int nonly)
{
	if (only && !in_list(only, nonly, name))
		return 0;
	if (r->o.nops_names == 0 && r->o.nops_types == 0)
		return 1;
	return in_list(r->o.ops_names, r->o.nops_names, name) ||
	    in_list(r->o.ops_types, r->o.nops_types, n->op_type);
}

int
opat_fault_check(void)
{
	static const char *const kinds[] = { "crash", "hang", "wrong",
	    "nan", "abort" };
	const char *v = getenv("AOE_INJECT_FAULT"), *c;
	size_t l, i;

	if (v == NULL || *v == '\0')
		return 0;
	c = strchr(v, ':');
	l = c ? (size_t)(c - v) : strlen(v);
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strlen(kinds[i]) == l && strncmp(v, kinds[i], l) == 0 &&
		    (c == NULL || c[1] != '\0'))
			return 0;
	return aoe_err(AOE_EDATA, "AOE_INJECT_FAULT '%s': expected crash, "
	    "hang, wrong, nan or abort, then :op_type optionally", v);
}

/*
 * Add the tunable nodes of a graph, and of its subgraphs, to the cases,
 * grouped by key; a subgraph's node by its path name (aoe-opat(1)).
 */
int
opat_add_graph(opat_run *r, const char *path, const char *shape,
    char **only, int nonly)
{
	char *sig, *name = NULL;
	aoe_graph *g;
	aoe_space sp;
	int gi, k, i, j, rc;

	if ((rc = opat_fault_check()) < 0)
		return rc;
	sig = aoe_xmalloc(SIGMAX);
	if ((rc = load_graph(r, path, shape, &gi)) < 0) {
		free(sig);
		return rc;
	}
	for (k = gi; k < r->ngraphs && (k == gi || r->graphs[k].sub); k++) {
	g = r->graphs[k].g;
	for (i = 0; i < g->norder; i++) {
		aoe_node *n = &g->nodes[g->order[i]];
		opat_case *c = NULL;
		uint64_t key;

		if (n->dead || n->dyn)
			continue;
		free(name);
		name = aoe_xmalloc(strlen(r->graphs[k].prefix) +
		    strlen(n->name) + 1);
		sprintf(name, "%s%s", r->graphs[k].prefix, n->name);
		if (!selected(r, n, name, only, nonly))
			continue;
		if (r->graphs[k].gone && r->graphs[k].gone[g->order[i]]) {
			if (r->o.nops_names || r->o.nops_types || only)
				aoe_warnx("%s '%s': fused into another node at "
				    "run time; not tuned", n->op_type, name);
			continue;
		}
		if (aoe_space_for(g, n, &sp) < 0 || aoe_space_size(&sp) < 2 ||
		    opat_space_legal(&sp, 2) < 2)
			continue;	/* nothing to tune */
		if ((rc = aoe_op_signature(g, n, r->o.threads, sig,
		    SIGMAX)) < 0) {
			aoe_warnx("%s: %s", path, aoe_errmsg());
			continue;
		}
		key = aoe_op_key(sig);
		for (j = 0; j < r->ncases; j++)
			if (r->cases[j].key == key) {
				c = &r->cases[j];
				break;
			}
		if (c && strcmp(c->sig, sig) != 0) {
			aoe_warnx("%s '%s': key %llu collides with a different "
			    "signature; tuned separately", n->op_type,
			    name, (unsigned long long)key);
			c = NULL;
		}
		if (c == NULL) {
			r->cases = aoe_xrealloc(r->cases, (r->ncases + 1) *
			    sizeof(*r->cases));
			c = &r->cases[r->ncases++];
			memset(c, 0, sizeof(*c));
			c->key = key;
			snprintf(c->keystr, sizeof(c->keystr), "%llu",
			    (unsigned long long)key);
			c->sig = aoe_xstrdup(sig);
			snprintf(c->op_type, sizeof(c->op_type), "%s",
			    n->op_type);
			c->gi = k;
			c->node = g->order[i];
			c->seq = r->ncases - 1;
		}
		if (in_list(c->names, c->nnames, name))
			continue;
		c->names = aoe_xrealloc(c->names, (c->nnames + 1) *
		    sizeof(char *));
		c->names[c->nnames++] = aoe_xstrdup(name);
	}
	}
	free(name);
	free(sig);
	return 0;
}

static aoe_node *
case_node(const opat_run *r, const opat_case *c)
{
	return &r->graphs[c->gi].g->nodes[c->node];
}

static int
case_space(const opat_run *r, const opat_case *c, aoe_space *sp)
{
	return aoe_space_for(r->graphs[c->gi].g, case_node(r, c), sp);
}

/* Whether a recorded schedule of the replay set for c sets knob k. */
static int
replay_sets(const opat_run *r, const opat_case *c, const char *k)
{
	cJSON *arr = map_get(r->replay, c->keystr), *o, *s;

	cJSON_ArrayForEach(o, arr) {
		s = cJSON_GetObjectItemCaseSensitive(o, "schedule");
		if (cJSON_GetObjectItemCaseSensitive(s, k) != NULL)
			return 1;
	}
	return 0;
}

/* Knob i of sp held at its default: one value. */
static void
hold_default(aoe_space *sp, int i)
{
	sp->knobs[i].nvals = 1;
	sp->knobs[i].vals[0] = sp->knobs[i].def;
}

/*
 * The space a search goes over.  On one thread the knobs that only
 * share work between threads (the thread count, the split axis or grain
 * "par", "batch_par") change nothing, yet multiply the space up to 18
 * times: they are held at their defaults.  Not in a replay, whose
 * recorded points may hold any value of them; there, a knob that no
 * recorded schedule of the case sets (one added since the set was
 * recorded) is held at its default, the only value the set has timed.
 */
static int
search_space(const opat_run *r, const opat_case *c, aoe_space *sp)
{
	static const char *const serial[] = { "nthreads", "par",
	    "batch_par" };
	int rc, i, j;

	if ((rc = case_space(r, c, sp)) < 0)
		return rc;
	if (r->replay != NULL) {
		for (i = 0; i < sp->nknobs; i++)
			if (!replay_sets(r, c, sp->knobs[i].name))
				hold_default(sp, i);
		return 0;
	}
	if (r->o.threads != 1)
		return rc;
	for (i = 0; i < sp->nknobs; i++)
		for (j = 0; j < 3; j++)
			if (strcmp(sp->knobs[i].name, serial[j]) == 0)
				hold_default(sp, i);
	return 0;
}

/*
 * Op tasks, candidates and timings as JSON.
 */
static cJSON *
task_json(const opat_run *r, const opat_case *c)
{
	cJSON *o = cJSON_CreateObject(), *a;
	int i;

	cJSON_AddStringToObject(o, "key", c->keystr);
	cJSON_AddStringToObject(o, "op_type", c->op_type);
	a = cJSON_AddArrayToObject(o, "names");
	for (i = 0; i < c->nnames; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(c->names[i]));
	cJSON_AddStringToObject(o, "signature", c->sig);
	cJSON_AddNumberToObject(o, "threads", r->o.threads);
	cJSON_AddStringToObject(o, "soc_version", aoe_soc_version());
	cJSON_AddStringToObject(o, "graph", r->graphs[c->gi].path);
	if (r->graphs[c->gi].shape[0])
		cJSON_AddStringToObject(o, "input_shape",
		    r->graphs[c->gi].shape);
	/* The measured node's name: a path for a subgraph's. */
	cJSON_AddStringToObject(o, "node", c->names[0]);
	return o;
}

static void
put_line(FILE *fp, cJSON *o)
{
	char *s = cJSON_PrintUnformatted(o);

	fputs(s, fp);
	putc('\n', fp);
	fflush(fp);
	free(s);
}

/*
 * A journal line.  AOE_OPAT_KILL_AT=n (for the tests) kills the process
 * with SIGKILL right after the n-th line this process writes.
 */
static void
journal_line(opat_run *r, cJSON *o)
{
	static long n;
	const char *k = getenv("AOE_OPAT_KILL_AT");

	put_line(r->jfp, o);
	if (k && *k && ++n == atol(k))
		raise(SIGKILL);
}

static void
timing_fields(cJSON *o, const opat_timing *t)
{
	cJSON_AddStringToObject(o, "status", opat_status_name(t->status));
	if (t->status == OPAT_OK) {
		cJSON_AddNumberToObject(o, "us", t->us);
		cJSON_AddNumberToObject(o, "mean_us", t->mean_us);
		cJSON_AddNumberToObject(o, "min_us", t->min_us);
		cJSON_AddNumberToObject(o, "spread", t->spread);
		cJSON_AddNumberToObject(o, "runs", t->runs);
		cJSON_AddNumberToObject(o, "inner", t->inner);
	}
	cJSON_AddNumberToObject(o, "cost_s", t->cost_s);
	if (t->reason[0])
		cJSON_AddStringToObject(o, "reason", t->reason);
}

/*
 * The journal.
 */
static int
journal_open(opat_run *r, const char *path)
{
	FILE *fp;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	off_t good = 0;
	int lineno = 0;

	r->jtim = map_new();
	r->jrec = map_new();
	if ((fp = fopen(path, "r")) != NULL) {
		while ((len = getline(&line, &cap, fp)) > 0) {
			cJSON *o;
			const char *j, *k;
			lineno++;
			if (line[len - 1] != '\n')
				break;	/* the run was killed writing it */
			if ((o = cJSON_Parse(line)) == NULL ||
			    (j = jstr(o, "j")) == NULL) {
				cJSON_Delete(o);
				break;
			}
			good += len;
			k = jstr(o, "key");
			if (strcmp(j, "run") == 0) {
				snprintf(r->jid, sizeof(r->jid), "%s",
				    jstr(o, "id") ? jstr(o, "id") : "");
			} else if (strcmp(j, "timing") == 0 && k &&
			    jstr(o, "tag") && jstr(o, "canon")) {
				opat_timing *t = aoe_xmalloc(sizeof(*t));
				char mk[2048];
				opat_timing_from_json(o, t);
				snprintf(mk, sizeof(mk), "%s|%s|%s", k,
				    jstr(o, "tag"), jstr(o, "canon"));
				map_put(r->jtim, mk, t);
			} else if (strcmp(j, "record") == 0 && k) {
				cJSON *rec = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(o,
				    "record"), 1);
				if (rec)
					map_put(r->jrec, k, rec);
			} else if (strcmp(j, "committed") == 0 && k) {
				char mk[64];
				snprintf(mk, sizeof(mk), "c|%s", k);
				map_put(r->jrec, mk,
				    cJSON_CreateTrue());
			}
			cJSON_Delete(o);
		}
		free(line);
		fclose(fp);
		/* Drop a half-written last line. */
		if (truncate(path, good) < 0)
			return aoe_err(AOE_EIO, "cannot truncate '%s': %s",
			    path, strerror(errno));
	} else if (errno != ENOENT)
		return aoe_err(AOE_EIO, "cannot open '%s': %s", path,
		    strerror(errno));
	if ((r->jfp = fopen(path, "a")) == NULL)
		return aoe_err(AOE_EIO, "cannot open '%s': %s", path,
		    strerror(errno));
	return 0;
}

static void
journal_sync(opat_run *r)
{
	fflush(r->jfp);
	fsync(fileno(r->jfp));
}

/* The run's identity: what must not change for a journal to apply. */
static void
run_id(opat_run *r, char *buf, size_t len)
{
	char tmp[512];
	uint64_t h = 0;
	int i;

	snprintf(tmp, sizeof(tmp), "%d|%d|%lld|%.3f|%.3f|%lld|%llu|%d|%s|%s",
	    r->o.strategy, r->o.threads, (long long)r->o.budget_trials,
	    r->o.budget_seconds, r->o.total_seconds,
	    (long long)r->o.total_trials, (unsigned long long)r->o.seed,
	    r->o.run_loop, r->o.replay ? r->o.replay : "",
	    r->o.repeat_tune ? "repeat" : "");
	h = opat_hash(h, tmp);
	for (i = 0; i < r->ncases; i++)
		h = opat_hash(h, r->cases[i].keystr);
	snprintf(buf, len, "%016llx", (unsigned long long)h);
}

/*
 * The replay set: timings recorded by --measure, --timings or a journal.
 */
int
opat_load_replay(opat_run *r, const char *path)
{
	FILE *fp;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	long lineno = 0, n = 0;

	if ((fp = strcmp(path, "-") ? fopen(path, "r") : stdin) == NULL)
		return aoe_err(AOE_EIO, "cannot open '%s': %s", path,
		    strerror(errno));
	r->replay = map_new();
	while ((len = getline(&line, &cap, fp)) > 0) {
		cJSON *o;
		const char *k;
		aoe_sched s;
		lineno++;
		if (line[strspn(line, " \t\r\n")] == '\0')
			continue;
		if ((o = cJSON_Parse(line)) == NULL) {
			free(line);
			if (fp != stdin)
				fclose(fp);
			return aoe_err(AOE_EDATA, "%s:%ld: malformed JSON",
			    path, lineno);
		}
		if (jstr(o, "j") && strcmp(jstr(o, "j"), "timing") != 0) {
			cJSON_Delete(o);
			continue;
		}
		if ((k = jstr(o, "key")) == NULL || aoe_sched_from_json(
		    cJSON_GetObjectItemCaseSensitive(o, "schedule"), &s, NULL,
		    0) < 0 ||
		    jstr(o, "status") == NULL) {
			cJSON_Delete(o);
			free(line);
			if (fp != stdin)
				fclose(fp);
			return aoe_err(AOE_EDATA, "%s:%ld: not a timing (needs "
			    "key, schedule and status)", path, lineno);
		}
		/* Keep the object: canon needs the space, known later. */
		{
			char mk[64];
			cJSON *arr;
			snprintf(mk, sizeof(mk), "%s", k);
			if ((arr = map_get(r->replay, mk)) == NULL) {
				arr = cJSON_CreateArray();
				map_put(r->replay, mk, arr);
			}
			cJSON_AddItemToArray(arr, o);
			n++;
		}
	}
	free(line);
	if (fp != stdin)
		fclose(fp);
	if (n == 0)
		return aoe_err(AOE_EDATA, "%s: no timings", path);
	return 0;
}

/* The replay timing of s in case c, or NULL. */
static int
replay_find(opat_run *r, opat_case *c, const aoe_space *sp,
    const char *canon, opat_timing *t)
{
	cJSON *arr = map_get(r->replay, c->keystr), *o;
	char buf[1024];
	aoe_sched s;

	if (c->rmap == NULL && arr) {
		/* Index this case's timings by canonical schedule. */
		c->rmap = map_new();
		cJSON_ArrayForEach(o, arr) {
			opat_timing *x = aoe_xmalloc(sizeof(*x));
			(void)aoe_sched_from_json(
			    cJSON_GetObjectItemCaseSensitive(o, "schedule"),
			    &s, NULL, 0);
			opat_canon(sp, &s, buf, sizeof(buf));
			opat_timing_from_json(o, x);
			if (map_get(c->rmap, buf) == NULL)
				map_put(c->rmap, buf, x);
			else
				free(x);
		}
	}
	if (c->rmap && (o = map_get(c->rmap, canon)) != NULL) {
		*t = *(opat_timing *)o;
		return 1;
	}
	return 0;
}

/*
 * A timing of candidate s, as a journal line (when journaling) and a
 * line of --timings (when asked for).
 */
static void
emit_timing(opat_run *r, const opat_case *c, const char *tag, const char *canon,
    const aoe_sched *s, const opat_timing *t)
{
	cJSON *o;

	if (r->jfp == NULL && r->tfp == NULL)
		return;
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "j", "timing");
	cJSON_AddStringToObject(o, "key", c->keystr);
	cJSON_AddStringToObject(o, "op_type", c->op_type);
	cJSON_AddStringToObject(o, "tag", tag);
	cJSON_AddStringToObject(o, "canon", canon);
	cJSON_AddItemToObject(o, "schedule", opat_sched_json(s));
	timing_fields(o, t);
	if (r->jfp)
		journal_line(r, o);
	if (r->tfp) {
		cJSON_DeleteItemFromObject(o, "j");
		put_line(r->tfp, o);
	}
	cJSON_Delete(o);
}

/*
 * Get the timings of n schedules of case c: from the journal, the replay
 * set, or by measuring them.  tag tells baselines ("d", "b"), search
 * trials ("t") and confirmations ("c0", "c1") apart.
 */
static int
obtain(opat_run *r, opat_case *c, const aoe_space *sp, const char *tag,
    const aoe_sched *s, int n, opat_timing *t, int *missing)
{
	char (*canon)[1024] = aoe_xcalloc((size_t)n, 1024);
	int *todo = aoe_xcalloc((size_t)n + 1, sizeof(int)), ntodo = 0, i, rc = 0;
	aoe_sched *ms = aoe_xcalloc((size_t)n + 1, sizeof(*ms));
	uint64_t *seeds = aoe_xcalloc((size_t)n + 1, sizeof(uint64_t));
	opat_timing *mt = aoe_xcalloc((size_t)n + 1, sizeof(*mt));
	int *lost = aoe_xcalloc((size_t)n + 1, sizeof(int));
	char mk[2048];

	for (i = 0; i < n; i++) {
		opat_timing *jt;
		missing[i] = 0;
		opat_canon(sp, &s[i], canon[i], 1024);
		snprintf(mk, sizeof(mk), "%s|%s|%s", c->keystr, tag, canon[i]);
		if ((jt = map_get(r->jtim, mk)) != NULL) {
			t[i] = *jt;
			continue;
		}
		if (r->replay) {
			if (!replay_find(r, c, sp, canon[i], &t[i])) {
				memset(&t[i], 0, sizeof(t[i]));
				t[i].status = OPAT_INVALID;
				snprintf(t[i].reason, sizeof(t[i].reason),
				    "not in the replay set");
				missing[i] = 1;
				continue;
			}
		} else {
			todo[ntodo] = i;
			ms[ntodo] = s[i];
			seeds[ntodo++] = opat_hash(r->o.seed * 0x9E3779B97F4A7C15ULL
			    + 1, mk);
			continue;
		}
		emit_timing(r, c, tag, canon[i], &s[i], &t[i]);
	}
	if (ntodo > 0) {
		opat_meas_opts mo;
		double t0 = aoe_now_us();
		memset(&mo, 0, sizeof(mo));
		mo.nthreads = r->o.threads;
		mo.run_loop = r->o.run_loop;
		mo.parallel = r->o.te_parallel;
		mo.timeout_s = r->o.timeout_s;
		mo.lock_path = opat_lock_path();
		/* Tags "m...": in the model (see tune_case). */
		if (tag[0] == 'm') {
			mo.names = c->names;
			mo.nnames = c->nnames;
			/*
			 * The model prepared once for the case's rounds
			 * (freed by confirm); failing that, each child
			 * prepares it.
			 */
			if (r->mgraph == NULL)
				(void)opat_model_graph(r->graphs[c->gi].path,
				    r->graphs[c->gi].shape, r->o.threads,
				    &r->mgraph);
			mo.prepared = r->mgraph != NULL;
		}
		/*
		 * On the hosts of --sshloginfile, but for the confirmation in
		 * the model (or alone), which is this host's.
		 */
		if (r->o.sshloginfile && tag[0] != 'm' && tag[0] != 'c')
			rc = opat_remote_measure(r, c, ms, ntodo, mt, lost);
		else
			rc = opat_measure(mo.prepared ? r->mgraph :
			    r->graphs[c->gi].g, c->node, ms, seeds, ntodo, &mo,
			    mt);
		if (rc < 0)
			goto out;
		for (i = 0; i < ntodo; i++) {
			int k = todo[i];
			t[k] = mt[i];
			if (lost[i]) {
				/* Not a trial, not journaled: measured again. */
				missing[k] = 1;
				continue;
			}
			/* Charge each its share of the batch's wall time. */
			t[k].cost_s = (aoe_now_us() - t0) / 1e6 / ntodo;
			emit_timing(r, c, tag, canon[k], &s[k], &t[k]);
		}
	}
out:
	free(lost);
	free(canon);
	free(todo);
	free(ms);
	free(seeds);
	free(mt);
	return rc;
}

/*
 * Progress on stderr.  The ETA is the current case's expected time left
 * and the expected time of the cases after it (r->eta_rest), each from
 * its budget and its measured baseline, scaled by how long the cases
 * done took against their expectation; never more than the whole run's
 * budget left.
 */
static double
eta(opat_run *r, int trials, int max_trials)
{
	double now = (aoe_now_us() - r->case_t0) / 1e6, scale = 1, cur, e;

	/*
	 * The scale: the wall time the cases done took over what was
	 * expected of them; before any, the current case's wall time a
	 * trial over what was expected of a trial.
	 */
	if (r->est_done > 0)
		scale = r->act_done / r->est_done;
	else if (trials > 1 && r->cur_est > 0)
		scale = r->cur_scale = now / (trials - 1) * (max_trials +
		    NCONFIRM) / r->cur_est;
	else if (r->cur_scale > 0)
		scale = r->cur_scale;	/* confirming: as the search went */
	cur = r->cur_est * scale - now;
	if (cur < 0)
		cur = 0;
	/*
	 * No cap at the budget left: a case past it still measures a batch
	 * and confirms its winner, which the expectations count.
	 */
	e = cur + r->eta_rest * scale;
	return e > 0 ? e : 0;
}

static void
progress(opat_run *r, const opat_case *c, int trials, int max_trials,
    double gain)
{
	char what[160], step[32];

	if (!r->o.progress)
		return;
	snprintf(what, sizeof(what), "%s %s", c->op_type, c->names[0]);
	snprintf(step, sizeof(step), "trial %d/%d", trials, max_trials);
	aoe_tprog_update(&r->prog, what, step, gain, eta(r, trials,
	    max_trials));
}

/* The progress line while the winners are confirmed (round of CONFIRM). */
static void
progress_confirm(opat_run *r, const opat_case *c, int round, int model,
    double gain)
{
	char what[160], step[48];

	if (!r->o.progress)
		return;
	snprintf(what, sizeof(what), "%s %s", c->op_type, c->names[0]);
	snprintf(step, sizeof(step), "confirming %s %d/%d", model ?
	    "in the model" : "alone", round + 1, CONFIRM);
	aoe_tprog_update(&r->prog, what, step, gain, eta(r, 1, 1));
}

/*
 * The record of a case, and the bank.
 */
static cJSON *
new_record(const opat_run *r, const opat_case *c)
{
	cJSON *o = cJSON_CreateObject(), *a;
	int i;

	cJSON_AddStringToObject(o, "kind", "opat");
	cJSON_AddStringToObject(o, "key", c->keystr);
	cJSON_AddStringToObject(o, "op_type", c->op_type);
	a = cJSON_AddArrayToObject(o, "names");
	for (i = 0; i < c->nnames; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(c->names[i]));
	cJSON_AddStringToObject(o, "signature", c->sig);
	cJSON_AddStringToObject(o, "soc_version", aoe_soc_version());
	cJSON_AddNumberToObject(o, "threads", r->o.threads);
	return o;
}

/* Commit one record to the bank, as aoe-bank commit would. */
static int
commit_record(opat_run *r, const cJSON *rec)
{
	aoe_bank_counts c[2];
	aoe_bank_opts bo;

	aoe_bank_opts_init(&bo);
	return aoe_bank_commit_records(&bo, &rec, 1, c);
}

/* Write a finished record out, committing an add or update. */
static int
release(opat_run *r, const opat_case *c, cJSON *rec)
{
	const char *out = jstr(rec, "outcome");
	char mk[64];
	int rc;

	snprintf(mk, sizeof(mk), "c|%s", c->keystr);
	if (r->o.commit && out && (strcmp(out, "add") == 0 ||
	    strcmp(out, "update") == 0) && map_get(r->jrec, mk) == NULL) {
		if ((rc = commit_record(r, rec)) < 0)
			return rc;
		if (r->jfp) {
			cJSON *j = cJSON_CreateObject();
			cJSON_AddStringToObject(j, "j", "committed");
			cJSON_AddStringToObject(j, "key", c->keystr);
			journal_line(r, j);
			cJSON_Delete(j);
			journal_sync(r);
		}
	}
	if (out && strcmp(out, "failed") == 0)
		r->nfailed++;
	put_line(r->out, rec);
	return 0;
}

/*
 * A finished record: into the journal; then out (and into the bank), or
 * held for the whole-model check (r->held).
 */
static int
finish_case(opat_run *r, opat_case *c, cJSON *rec, int from_journal)
{
	if (!from_journal && r->jfp) {
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "j", "record");
		cJSON_AddStringToObject(j, "key", c->keystr);
		cJSON_AddItemToObject(j, "record", cJSON_Duplicate(rec, 1));
		journal_line(r, j);
		cJSON_Delete(j);
		journal_sync(r);
	}
	if (r->held) {
		cJSON_AddItemToArray(r->held, cJSON_Duplicate(rec, 1));
		return 0;
	}
	return release(r, c, rec);
}

static void
add_history(cJSON *h, int trial, double best)
{
	cJSON *p = cJSON_CreateArray();

	cJSON_AddItemToArray(p, cJSON_CreateNumber(trial));
	cJSON_AddItemToArray(p, cJSON_CreateNumber(best));
	cJSON_AddItemToArray(h, p);
}

static double
round6(double x)
{
	char b[64];

	snprintf(b, sizeof(b), "%.6g", x);
	return strtod(b, NULL);
}
/*
 * Admission (DESIGN.md): the winner beats the baseline by more than the
 * margin, and saves at least min_gain_us, so that an op of a few
 * nanoseconds is never "tuned" by timer noise.
 */
static int
admits(const opat_opts *o, double before, double after, double margin)
{
	return after < before * (1 - margin) &&
	    before - after >= o->min_gain_us;
}


/*
 * The TOPK fastest candidates so far, fastest first (the search never
 * proposes a point twice): the confirmation measures them again beside
 * the baseline.
 */
static void
top_insert(aoe_sched *ts, double *tu, int *nt, const aoe_sched *s, double us)
{
	int i, j;

	for (i = 0; i < *nt && tu[i] <= us; i++)
		;
	if (i >= TOPK)
		return;
	j = *nt < TOPK ? (*nt)++ : TOPK - 1;
	for (; j > i; j--) {
		ts[j] = ts[j - 1];
		tu[j] = tu[j - 1];
	}
	ts[i] = *s;
	tu[i] = us;
}

/* Seconds left of --total-seconds, less the whole-model check's reserve. */
static double
time_left(const opat_run *r)
{
	if (r->deadline == HUGE_VAL)
		return HUGE_VAL;
	return (r->deadline - aoe_now_us()) / 1e6 - r->reserve_s;
}

/* The wall seconds one measurement of case c takes (its baseline's). */
static double
per_meas(const opat_run *r, const opat_case *c)
{
	return c->base.cost_s / (c->nbase > 1 ? c->nbase : 1);
}

/* The tuning of one case, as its steps share it. */
typedef struct ctune {
	opat_run *r;
	opat_case *c;
	aoe_space sp;
	int strategy;
	int trials;		/* the baseline is the first */
	double spent;
	opat_timing best;
	aoe_sched best_s;
	aoe_sched top_s[TOPK];	/* the fastest candidates, fastest first */
	double top_us[TOPK];
	int ntop;
	int nfail[OPAT_NSTATUS];
	char first_reason[256];
	cJSON *hist;		/* the record's history: trial, best */
} ctune;

/* A failed measurement's record fields: "failed" {status: 1}, reason. */
static void
record_failure(cJSON *rec, const opat_timing *t)
{
	cJSON *fails = cJSON_AddObjectToObject(rec, "failed");

	cJSON_AddNumberToObject(fails, opat_status_name(t->status), 1);
	cJSON_AddStringToObject(rec, "reason", t->reason);
}

/* The record of a case the bank has and no search: its baseline. */
static void
record_reserved(cJSON *rec, const opat_case *c)
{
	const opat_timing *base = &c->base;

	cJSON_AddNumberToObject(rec, "before_us", round6(base->us));
	cJSON_AddNumberToObject(rec, "after_us", round6(base->us));
	cJSON_AddNumberToObject(rec, "spread", round6(base->spread));
	cJSON_AddItemToObject(rec, "schedule", opat_sched_json(&c->base_s));
	cJSON_AddNumberToObject(rec, "trials", 0);
	cJSON_AddNumberToObject(rec, "tuning_time_s", round6(base->cost_s));
	cJSON_AddStringToObject(rec, "outcome", base->status == OPAT_OK ?
	    "reserved" : "failed");
	cJSON_AddStringToObject(rec, "bank", c->hit_from);
	if (base->status != OPAT_OK)
		record_failure(rec, base);
}

/* Take a measured batch of k points into the search and the case. */
static void
take_batch(ctune *ct, opat_search *se, const aoe_sched *batch,
    const opat_timing *bt, const int *miss, int k)
{
	int i;

	for (i = 0; i < k; i++) {
		if (miss[i]) {
			opat_search_feed(se, &batch[i], NAN);
			continue;
		}
		ct->trials++;
		ct->spent += bt[i].cost_s;
		if (bt[i].status != OPAT_OK) {
			ct->nfail[bt[i].status]++;
			if (!ct->first_reason[0])
				snprintf(ct->first_reason,
				    sizeof(ct->first_reason), "%s: %s",
				    opat_status_name(bt[i].status),
				    bt[i].reason);
			opat_search_feed(se, &batch[i], HUGE_VAL);
			continue;
		}
		opat_search_feed(se, &batch[i], bt[i].us);
		top_insert(ct->top_s, ct->top_us, &ct->ntop, &batch[i],
		    bt[i].us);
		if (bt[i].us < ct->best.us) {
			ct->best = bt[i];
			ct->best_s = batch[i];
			add_history(ct->hist, ct->trials, round6(ct->best.us));
		}
	}
}

/*
 * The search, from the baseline, in batches of TUNING_PARALLEL_NUM
 * points, until max_trials trials or max_s seconds.  0, or an error.
 */
static int
search(ctune *ct, long long max_trials, double max_s)
{
	opat_run *r = ct->r;
	opat_case *c = ct->c;
	opat_search se;
	aoe_sched *batch;
	opat_timing *bt;
	long long proposed = 0;
	int *miss, k, rc = 0;

	opat_search_init(&se, ct->strategy, &ct->sp, r->o.seed ^ c->key);
	opat_search_add(&se, &c->base_s, c->base.us);
	batch = aoe_xcalloc((size_t)r->o.tuning_parallel, sizeof(*batch));
	bt = aoe_xcalloc((size_t)r->o.tuning_parallel, sizeof(*bt));
	miss = aoe_xcalloc((size_t)r->o.tuning_parallel, sizeof(int));
	/* Candidates missing from a replay set are not trials: cap them. */
	while (ct->trials < max_trials && ct->spent < max_s &&
	    proposed < 8 * max_trials + 64) {
		long long want = max_trials - ct->trials;
		double left = time_left(r), per = per_meas(r, c);
		if (want > r->o.tuning_parallel)
			want = r->o.tuning_parallel;
		/* --total-seconds: no batch that would end past it. */
		if (left < HUGE_VAL && per > 0 && want > (long long)(left /
		    per * (r->o.te_parallel > 1 ? 1.5 : 1)))
			want = (long long)(left / per * (r->o.te_parallel > 1 ?
			    1.5 : 1));
		if (want <= 0)
			break;
		if ((k = opat_search_next(&se, (int)want, batch)) == 0)
			break;
		proposed += k;
		if ((rc = obtain(r, c, &ct->sp, "t", batch, k, bt, miss)) < 0)
			break;
		take_batch(ct, &se, batch, bt, miss, k);
		progress(r, c, ct->trials, (int)max_trials,
		    (c->base.us - ct->best.us) / c->base.us);
	}
	free(batch);
	free(bt);
	free(miss);
	opat_search_free(&se);
	return rc;
}

/* The model prepared for a case's confirmation rounds, freed. */
static void
drop_mgraph(opat_run *r)
{
	aoe_graph_free(r->mgraph);
	r->mgraph = NULL;
}

/*
 * The candidates the next round of confirm measures, in on[] (their
 * indices in bu, the baseline 0 first); returns how many.  After a round
 * only the baseline and the KEEPK candidates fastest in it so far go on:
 * a whole model a measurement makes the rounds the tuning's dearest part
 * (resnet50, 1 thread: 1.1 s a measurement, 18 a case), and the others
 * were slower in the model already.  Failed ones (bu < 0) are out.
 */
static int
confirm_keep(const double *bu, int np, int *on)
{
	int n = 1, j, k;

	on[0] = 0;
	for (j = 1; j < np; j++) {
		if (bu[j] < 0)
			continue;
		/* Insertion by time, keeping at most KEEPK. */
		for (k = n; k > 1 && bu[on[k - 1]] > bu[j]; k--)
			if (k <= KEEPK)
				on[k] = on[k - 1];
		if (k <= KEEPK) {
			on[k] = j;
			if (n <= KEEPK)
				n++;
		}
	}
	return n;
}

/*
 * The best of many noisy measurements is biased low: measure the
 * baseline and the winner again, one after the other, and decide on
 * those.  CONFIRM rounds, each measuring the baseline and the best few
 * candidates (TOPK in the first, the KEEPK best so far after), in the
 * model as aoe-run runs it (where the caches hold what the ops around
 * leave, not the op's own data); the best of each is kept, since a busy
 * host only ever adds time.  An op that fusion folds into another runs
 * in no model of its own: it is confirmed alone.
 * Updates the times and spreads before and after and the best schedule;
 * says how in the record.  0, or an error.
 */
static int
confirm(ctune *ct, cJSON *rec, double *before, double *after, double *sb,
    double *sa)
{
	opat_case *c = ct->c;
	aoe_sched pair[1 + TOPK], sub[1 + TOPK];
	opat_timing pt[1 + TOPK];
	double bu[1 + TOPK], bs[1 + TOPK];
	int pm[1 + TOPK], on[1 + TOPK], round, bad = 0, np = 1, non, j, rc;
	/* A subgraph's node runs in no model of its own: alone. */
	int model = ct->r->o.in_model && !ct->r->graphs[c->gi].sub;
	char tag[8];

	pair[0] = c->base_s;
	for (j = 0; j < ct->ntop && ct->top_us[j] < *before * (1 -
	    ct->r->o.noise_floor); j++)
		pair[np++] = ct->top_s[j];
	for (j = 0; j < np; j++) {
		bu[j] = bs[j] = HUGE_VAL;
		on[j] = j;
	}
	non = np;
	for (round = 0; round < CONFIRM && !bad; round++) {
		/* --total-seconds: a round that would end past it is not run. */
		if (time_left(ct->r) < per_meas(ct->r, c) * non * (model ? 3 :
		    1)) {
			if (round <= 0) {
				bad = 1;
				cJSON_AddStringToObject(rec, "unconfirmed",
				    "--total-seconds left no time to confirm");
			}
			break;
		}
		snprintf(tag, sizeof(tag), "%c%d", model ? 'm' : 'c', round);
		progress_confirm(ct->r, c, round, model, (c->base.us -
		    ct->best.us) / c->base.us);
		for (j = 0; j < non; j++)
			sub[j] = pair[on[j]];
		if ((rc = obtain(ct->r, c, &ct->sp, tag, sub, non, pt,
		    pm)) < 0) {
			drop_mgraph(ct->r);
			return rc;
		}
		for (j = 0; j < non; j++)
			ct->spent += pt[j].cost_s;
		if (model && pt[0].status == OPAT_INVALID &&
		    strncmp(pt[0].reason, "absent", 6) == 0) {
			model = 0;
			round = -1;
			continue;
		}
		for (j = 0; j < non; j++) {
			int k = on[j];
			if (pt[j].status != OPAT_OK) {
				/* A candidate that fails once is out. */
				ct->nfail[pt[j].status]++;
				if (k == 0)
					bad = 1;
				bu[k] = -1;
				continue;
			}
			if (bu[k] >= 0 && pt[j].us < bu[k]) {
				bu[k] = pt[j].us;
				bs[k] = pt[j].spread;
			}
		}
		non = confirm_keep(bu, np, on);
	}
	drop_mgraph(ct->r);
	*before = bu[0];
	*sb = bs[0];
	*after = HUGE_VAL;
	for (j = 1; j < np && !bad; j++)
		if (bu[j] >= 0 && bu[j] < *after) {
			*after = bu[j];
			*sa = bs[j];
			ct->best_s = pair[j];
		}
	if (bad || *after == HUGE_VAL) {
		/* No winner stands. */
		if (bad)
			*before = c->base.us;
		*after = *before;
		ct->best_s = c->base_s;
	}
	cJSON_AddStringToObject(rec, "confirmed", model ? "model" : "alone");
	return 0;
}

/*
 * The counts of failed candidates by status as rec's "failed" object, if
 * any failed; returns whether one did.
 */
static int
add_failed(cJSON *rec, const int *nfail)
{
	cJSON *f = NULL;
	int i;

	for (i = 1; i < OPAT_NSTATUS; i++)
		if (nfail[i]) {
			if (f == NULL)
				f = cJSON_AddObjectToObject(rec, "failed");
			cJSON_AddNumberToObject(f, opat_status_name(i),
			    nfail[i]);
		}
	return f != NULL;
}

/* The record of a searched case: the decision and how it was reached. */
static void
record_result(ctune *ct, cJSON *rec, double before, double after,
    double sb, double sa)
{
	opat_case *c = ct->c;
	const char *outcome;
	double noise = opat_margin(ct->r->o.noise_floor, sb, sa);

	if (admits(&ct->r->o, before, after, noise))
		outcome = c->hit ? "update" : "add";
	else
		outcome = c->hit ? "reserved" : "unsatisfied";
	cJSON_AddNumberToObject(rec, "before_us", round6(before));
	cJSON_AddNumberToObject(rec, "after_us", round6(after));
	cJSON_AddNumberToObject(rec, "spread", round6(noise));
	cJSON_AddNumberToObject(rec, "spread_us", round6(after * sa));
	cJSON_AddItemToObject(rec, "schedule", opat_sched_json(
	    strcmp(outcome, "add") == 0 || strcmp(outcome, "update") == 0 ?
	    &ct->best_s : &c->base_s));
	cJSON_AddNumberToObject(rec, "trials", ct->trials);
	cJSON_AddNumberToObject(rec, "tuning_time_s", round6(ct->spent));
	cJSON_AddStringToObject(rec, "strategy",
	    opat_strategy_name(ct->strategy));
	cJSON_AddStringToObject(rec, "outcome", outcome);
	if (c->hit)
		cJSON_AddStringToObject(rec, "bank", c->hit_from);
	cJSON_AddItemToObject(rec, "history", ct->hist);
	ct->hist = NULL;
	if (add_failed(rec, ct->nfail) && ct->first_reason[0])
		cJSON_AddStringToObject(rec, "reason", ct->first_reason);
}

/* A case --total-seconds left no time for: not reached, not failed. */
static void
record_late(cJSON *rec, const opat_case *c)
{
	int ok = c->base.status == OPAT_OK && c->base.us > 0;

	cJSON_AddNumberToObject(rec, "before_us", ok ? round6(c->base.us) : 0);
	cJSON_AddNumberToObject(rec, "after_us", ok ? round6(c->base.us) : 0);
	cJSON_AddItemToObject(rec, "schedule", opat_sched_json(&c->base_s));
	cJSON_AddNumberToObject(rec, "trials", 0);
	cJSON_AddNumberToObject(rec, "tuning_time_s", 0);
	cJSON_AddStringToObject(rec, "outcome", c->hit ? "reserved" :
	    "unsatisfied");
	if (c->hit)
		cJSON_AddStringToObject(rec, "bank", c->hit_from);
	cJSON_AddBoolToObject(rec, "not_reached", 1);
	cJSON_AddStringToObject(rec, "reason", "--total-seconds ended the "
	    "run before this case");
}

/* Tune one case within its budget; returns its record. */
static int
tune_case(opat_run *r, opat_case *c, long long max_trials, double max_s,
    cJSON **recp)
{
	ctune ct;
	double before, after, sb, sa;
	cJSON *rec = new_record(r, c);
	int rc;

	*recp = rec;
	memset(&ct, 0, sizeof(ct));
	ct.r = r;
	ct.c = c;
	ct.trials = 1;
	ct.spent = c->base.cost_s;
	if ((rc = search_space(r, c, &ct.sp)) < 0)
		return rc;
	if (c->hit && !r->o.repeat_tune) {
		record_reserved(rec, c);
		return 0;
	}
	if (c->base.status != OPAT_OK) {
		cJSON_AddNumberToObject(rec, "trials", 1);
		cJSON_AddNumberToObject(rec, "tuning_time_s",
		    round6(ct.spent));
		cJSON_AddStringToObject(rec, "outcome", "failed");
		record_failure(rec, &c->base);
		return 0;
	}
	ct.strategy = r->o.strategy;
	if (ct.strategy == OPAT_AUTO)
		ct.strategy = (long long)opat_space_legal(&ct.sp,
		    max_trials + 1) <= max_trials ? OPAT_EXHAUSTIVE :
		    OPAT_EVOLUTION;
	ct.best = c->base;
	ct.best_s = c->base_s;
	ct.hist = cJSON_CreateArray();
	add_history(ct.hist, 1, round6(c->base.us));
	if ((rc = search(&ct, max_trials, max_s)) < 0)
		goto out;
	before = c->base.us;
	after = ct.best.us;
	sb = c->base.spread;
	sa = ct.best.spread;
	/*
	 * Not in replay, whose numbers are all there is; nor when no
	 * candidate beat the baseline alone by the noise floor, the least
	 * margin admission asks (record_result then finds none admitted):
	 * the rounds in the model are most of a case's time.
	 */
	if (r->replay == NULL && after < before * (1 - r->o.noise_floor) &&
	    (rc = confirm(&ct, rec, &before, &after, &sb, &sa)) < 0)
		goto out;
	record_result(&ct, rec, before, after, sb, sa);
	c->spent = ct.spent;
out:
	cJSON_Delete(ct.hist);
	return rc;
}

static int
by_share(const void *a, const void *b)
{
	const opat_case *x = a, *y = b;

	if (x->share != y->share)
		return x->share > y->share ? -1 : 1;
	return x->seq - y->seq;
}

/* Measure every case's baseline: the default, or the bank's entry. */
static int
baselines(opat_run *r)
{
	int i, rc, miss;

	for (i = 0; i < r->ncases; i++) {
		opat_case *c = &r->cases[i];
		aoe_space sp;
		aoe_sched s;
		const char *from = NULL;

		if ((rc = case_space(r, c, &sp)) < 0)
			return rc;
		c->base_s = sp.def;
		/* --total-seconds: no time for this case. */
		if (time_left(r) <= 0) {
			c->late = 1;
			continue;
		}
		memset(&s, 0, sizeof(s));
		/*
		 * A case whose record the journal holds was done before the
		 * run was interrupted, and its winner may be in the bank
		 * since: not a hit, so that the run resumed measures, orders
		 * and budgets the cases as the run it continues did.
		 */
		if (r->o.use_bank && map_get(r->jrec, c->keystr) == NULL &&
		    aoe_bank_find(r->graphs[c->gi].g,
		    case_node(r, c), r->o.threads, &s, &from) == 1) {
			if (aoe_space_validate(&sp, &s, NULL, 0) == 0) {
				c->hit = 1;
				c->base_s = s;
				snprintf(c->hit_from, sizeof(c->hit_from),
				    "%s", from ? from : "custom");
			} else
				aoe_warnx("%s '%s': the bank's schedule is not "
				    "legal any more; tuning from the default",
				    c->op_type, c->names[0]);
		}
		if (r->o.progress)
			aoe_tprog_note(&r->prog, "measuring baselines %d/%d: "
			    "%s %s", i + 1, r->ncases, c->op_type,
			    c->names[0]);
		/* Twice, keeping the better: a busy host only adds time. */
		if ((rc = obtain(r, c, &sp, c->hit ? "b" : "d", &c->base_s, 1,
		    &c->base, &miss)) < 0)
			return rc;
		c->nbase = 1;
		/*
		 * Not under --total-seconds once half of it is gone: the
		 * baselines of a big model would take all of it.
		 */
		if (r->replay == NULL && (r->deadline == HUGE_VAL ||
		    time_left(r) > r->o.total_seconds / 2)) {
			opat_timing t2;
			if ((rc = obtain(r, c, &sp, c->hit ? "b2" : "d2",
			    &c->base_s, 1, &t2, &miss)) < 0)
				return rc;
			t2.cost_s += c->base.cost_s;
			c->nbase = 2;
			if (t2.status == OPAT_OK && (c->base.status != OPAT_OK ||
			    t2.us < c->base.us))
				c->base = t2;
			else
				c->base.cost_s = t2.cost_s;
		}
		c->share = (c->base.status == OPAT_OK ? c->base.us : 0) *
		    c->nnames;
		r->total_share += c->share;
	}
	return 0;
}

/*
 * The budget of the case that comes next when left_s seconds and
 * left_trials trials (-1: no limit) are left for cases whose baselines
 * add up to left_share: its share of what is left, within the per-case
 * budgets.
 */
static void
plan(const opat_run *r, const opat_case *c, int nleft, double left_s,
    long long left_trials, double left_share, long long *mtp, double *msp)
{
	long long mt = r->o.budget_trials;
	double ms = r->o.budget_seconds, frac;

	frac = left_share > 0 ? c->share / left_share : 1.0 / nleft;
	if (left_s < HUGE_VAL && left_s * frac < ms)
		ms = left_s * frac;
	if (left_trials >= 0 && (long long)(left_trials * frac) < mt)
		mt = (long long)(left_trials * frac);
	if (mt < r->o.min_trials && r->o.budget_trials >= r->o.min_trials)
		mt = r->o.min_trials;
	/* Without --total-seconds, at least half a second a case. */
	if (ms < 0.5 && left_s == HUGE_VAL)
		ms = 0.5;
	*mtp = mt;
	*msp = ms;
}

/*
 * The seconds case c is expected to take with mt trials and ms seconds:
 * a case the bank keeps, or whose baseline failed, none; else its trials
 * at what a measurement of its baseline cost, within ms but at least a
 * batch (a search always measures one), and the confirmation rounds,
 * which no budget cuts short.
 */
static double
expect(const opat_run *r, const opat_case *c, long long mt, double ms)
{
	double per, par, search, batch;

	if ((c->hit && !r->o.repeat_tune) || c->base.status != OPAT_OK)
		return 0;
	per = per_meas(r, c);
	par = r->o.te_parallel > 1 ? 1.5 : 1;	/* builds overlap timing */
	search = per * (double)mt / par;
	batch = per * (double)(mt < r->o.tuning_parallel ? mt :
	    r->o.tuning_parallel) / par;
	if (search > ms)
		search = ms > batch ? ms : batch;
	return search + per * NCONFIRM / par;
}

/* The expected seconds of the cases after the i-th. */
static double
expect_rest(const opat_run *r, int i, double left_s, long long left_trials,
    double left_share)
{
	double e = 0, ms;
	long long mt;
	int j;

	for (j = i + 1; j < r->ncases; j++) {
		const opat_case *c = &r->cases[j];
		plan(r, c, r->ncases - j, left_s, left_trials, left_share,
		    &mt, &ms);
		ms = expect(r, c, mt, ms);
		e += ms;
		if (left_s < HUGE_VAL)
			left_s = left_s > ms ? left_s - ms : 0;
		if (left_trials >= 0)
			left_trials = left_trials > mt ? left_trials - mt : 0;
		left_share -= c->share;
	}
	return e;
}

/* What the progress says of a finished case. */
static void
progress_case(opat_run *r, const opat_case *c, const cJSON *rec)
{
	char what[160];

	if (!r->o.progress)
		return;
	snprintf(what, sizeof(what), "%s %s%s", c->op_type, c->names[0],
	    c->nnames > 1 ? " (and more)" : "");
	aoe_tprog_case(&r->prog, what, jstr(rec, "outcome"),
	    jnum(rec, "before_us", 0), jnum(rec, "after_us", 0),
	    (int)jnum(rec, "trials", 0), c->spent, eta(r, 1, 1));
}

/*
 * The whole-model check.  OPAT's winners are each faster alone or at
 * their nodes in the model, which does not make the model faster: caches
 * and the ops around them change.  So the records of a run tuning in the
 * model are held back; at the end each graph is timed whole, without
 * the run's decisions (every case at its baseline: the default, or the
 * bank's entry) and with them (opat_whole_check: rounds alternating
 * which goes first, the least of each side's, spreads in microseconds).
 * When the model with the decisions is slower by more than the two
 * spreads (and the noise floor), every add and update of the graph is
 * backed out: it becomes unsatisfied (or reserved), with backed_out
 * and backed_out_why, and is not committed.  A "model" record per graph
 * says what was found.
 */

typedef struct whole_arg {
	opat_run *r;
	int gi;
	const aoe_sched **with;		/* per case: the winner, or NULL */
	aoe_graph *g;		/* gi prepared once (opat_model_graph), or NULL */
} whole_arg;

/* The graph of case c that owns it (a subgraph's owner). */
static int
owner(const opat_run *r, int gi)
{
	while (gi > 0 && r->graphs[gi].sub)
		gi--;
	return gi;
}

/* A whole-model child: side 0 the baselines, 1 the decisions. */
static void
whole_child(int i, int fd, void *arg)
{
	whole_arg *a = arg;
	opat_run *r = a->r;
	aoe_graph *g = a->g ? a->g : r->graphs[a->gi].g;
	aoe_run_opts ro;
	char line[768];
	double *rep;
	int side = i, lk, gate, k, j, ci;
	/* Enough repeats for quartiles that mean something. */
	int nrep = r->o.run_loop > OPAT_MREP ? r->o.run_loop : OPAT_MREP;

	signal(SIGPIPE, SIG_DFL);
	lk = opat_child_lock(opat_lock_path(), &gate, fd);
	opat_child_opts(&ro, r->o.threads);
	if (a->g == NULL && aoe_graph_prepare(g, &ro) < 0)
		goto invalid;
	for (k = 0; k < g->norder; k++) {
		aoe_node *n = &g->nodes[g->order[k]];
		for (ci = 0; ci < r->ncases; ci++) {
			const opat_case *c = &r->cases[ci];
			const aoe_sched *s = side && a->with[ci] ? a->with[ci] :
			    c->hit ? &c->base_s : NULL;
			if (s == NULL || owner(r, c->gi) != a->gi ||
			    strcmp(n->op_type, c->op_type) != 0)
				continue;
			for (j = 0; j < c->nnames; j++)
				if (strcmp(n->name, c->names[j]) == 0)
					break;
			if (j < c->nnames && aoe_space_apply(g, n, s) < 0)
				goto invalid;
		}
	}
	aoe_graph_fill_inputs(g, r->o.seed);
	if (aoe_graph_run(g, &ro) < 0)
		goto invalid;
	opat_child_exclusive(lk, gate, fd);
	rep = aoe_xcalloc((size_t)nrep, sizeof(double));
	for (k = 0; k < nrep; k++) {
		double t0 = aoe_now_us();
		aoe_graph_run(g, &ro);
		rep[k] = aoe_now_us() - t0;
	}
	flock(lk, LOCK_UN);
	flock(gate, LOCK_UN);
	opat_child_report(rep, nrep, 1, fd);
invalid:
	snprintf(line, sizeof(line), "invalid %s\n", aoe_errmsg());
	opat_say(fd, line);
	_exit(0);
}

/* Time graph gi without and with the decisions: us[2], spread[2] in us. */
static int
whole_times(opat_run *r, int gi, const aoe_sched **with, double *us,
    double *spread)
{
	whole_arg a;
	int rc;

	a.r = r;
	a.gi = gi;
	a.with = with;
	/* Prepared once for the rounds' children, as confirm's (obtain). */
	(void)opat_model_graph(r->graphs[gi].path, r->graphs[gi].shape,
	    r->o.threads, &a.g);
	rc = opat_whole_check(r->graphs[gi].path, r->o.timeout_s, whole_child,
	    &a, us, spread);
	aoe_graph_free(a.g);
	if (rc < 0)
		return rc;
	opat_slower_hook("AOE_OPAT_SLOWER_MODEL", us, spread);
	return 0;
}

static int
is_win(const cJSON *rec)
{
	const char *o = jstr(rec, "outcome");

	return o && (strcmp(o, "add") == 0 || strcmp(o, "update") == 0);
}

static opat_case *
case_of(opat_run *r, const cJSON *rec)
{
	const char *k = jstr(rec, "key");
	int i;

	for (i = 0; k && i < r->ncases; i++)
		if (strcmp(r->cases[i].keystr, k) == 0)
			return &r->cases[i];
	return NULL;
}

/* Check each graph whole, back out what makes it slower, write out. */
static int
model_check(opat_run *r)
{
	int n = cJSON_GetArraySize(r->held), i, gi, rc = 0;
	const aoe_sched **with = aoe_xcalloc((size_t)r->ncases + 1,
	    sizeof(*with));
	aoe_sched *ws = aoe_xcalloc((size_t)r->ncases + 1, sizeof(*ws));
	char *back = aoe_xcalloc((size_t)r->ngraphs + 1, 1);
	cJSON *rec;

	for (gi = 0; gi < r->ngraphs && rc == 0; gi++) {
		double us[2], sp[2], t0 = aoe_now_us();
		int nwin = 0, nb = 0;
		cJSON *m;

		if (r->graphs[gi].sub)
			continue;
		memset(with, 0, (size_t)r->ncases * sizeof(*with));
		for (i = 0; i < n; i++) {
			opat_case *c;
			rec = cJSON_GetArrayItem(r->held, i);
			if (!is_win(rec) || (c = case_of(r, rec)) == NULL ||
			    owner(r, c->gi) != gi ||
			    aoe_sched_from_json(cJSON_GetObjectItemCaseSensitive(
			    rec, "schedule"), &ws[c - r->cases], NULL, 0) < 0)
				continue;
			with[c - r->cases] = &ws[c - r->cases];
			nwin++;
		}
		if (nwin == 0)
			continue;
		if (r->o.progress)
			aoe_tprog_note(&r->prog, "%s: the whole model without "
			    "and with the %d decisions", r->graphs[gi].path,
			    nwin);
		if ((rc = whole_times(r, gi, with, us, sp)) < 0)
			break;
		back[gi] = opat_whole_slower(us, sp, r->o.noise_floor);
		if (back[gi])
			nb = nwin;
		m = cJSON_CreateObject();
		cJSON_AddStringToObject(m, "kind", "model");
		cJSON_AddStringToObject(m, "graph", r->graphs[gi].path);
		cJSON_AddNumberToObject(m, "threads", r->o.threads);
		cJSON_AddNumberToObject(m, "baseline_us", round6(us[0]));
		cJSON_AddNumberToObject(m, "result_us", round6(us[1]));
		cJSON_AddNumberToObject(m, "baseline_spread", round6(sp[0]));
		cJSON_AddNumberToObject(m, "result_spread", round6(sp[1]));
		cJSON_AddNumberToObject(m, "decisions", nwin);
		cJSON_AddNumberToObject(m, "backed_out", nb);
		cJSON_AddNumberToObject(m, "tuning_time_s",
		    round6((aoe_now_us() - t0) / 1e6));
		cJSON_AddItemToArray(r->held, m);
		if (nb)
			aoe_warnx("%s: the whole model was %.2f%% slower with "
			    "the decisions (%.3f -> %.3f ms, spread %.3f ms): "
			    "%d backed out, none committed", r->graphs[gi].path,
			    (us[1] - us[0]) / us[0] * 100, us[0] / 1e3,
			    us[1] / 1e3, (sp[0] + sp[1]) / 1e3, nb);
		else if (r->o.progress)
			aoe_warnx("%s: model %.3f -> %.3f ms with the decisions",
			    r->graphs[gi].path, us[0] / 1e3, us[1] / 1e3);
	}
	/* Write out (and commit) in order, the model records last. */
	n = cJSON_GetArraySize(r->held);
	for (i = 0; i < n && rc == 0; i++) {
		opat_case *c;
		rec = cJSON_GetArrayItem(r->held, i);
		if ((c = case_of(r, rec)) == NULL) {
			put_line(r->out, rec);
			continue;
		}
		if (is_win(rec) && back[owner(r, c->gi)]) {
			int upd = strcmp(jstr(rec, "outcome"), "update") == 0;
			aoe_tprog_backout(&r->prog, upd ? "update" : "add",
			    upd ? "reserved" : "unsatisfied",
			    jnum(rec, "before_us", 0), jnum(rec, "after_us", 0));
			cJSON_ReplaceItemInObjectCaseSensitive(rec, "outcome",
			    cJSON_CreateString(upd ? "reserved" :
			    "unsatisfied"));
			cJSON_ReplaceItemInObjectCaseSensitive(rec, "schedule",
			    opat_sched_json(&c->base_s));
			cJSON_AddBoolToObject(rec, "backed_out", 1);
			cJSON_AddStringToObject(rec, "backed_out_why", "the "
			    "whole model was slower with the run's decisions, "
			    "beyond its spread");
		}
		rc = release(r, c, rec);
	}
	free(with);
	free(ws);
	free(back);
	return rc;
}

int
opat_tune(opat_run *r)
{
	char id[32];
	double left_s, left_share;
	long long left_trials;
	int i, rc, nlate = 0;

	r->t0 = aoe_now_us();
	/*
	 * --total-seconds bounds the whole run from here: baselines,
	 * searches, confirmations and the whole-model check, which gets a
	 * reserve (a guess until the baselines say how long the model
	 * runs).
	 */
	r->deadline = r->o.total_seconds > 0 ? r->t0 + r->o.total_seconds *
	    1e6 : HUGE_VAL;
	r->reserve_s = r->o.in_model && r->replay == NULL &&
	    r->deadline < HUGE_VAL ? opat_whole_reserve(MCHILD_S, 0, 0) : 0;
	aoe_tprog_init(&r->prog, r->o.progress, r->ncases);
	if (r->o.journal) {
		if ((rc = journal_open(r, r->o.journal)) < 0)
			return rc;
		run_id(r, id, sizeof(id));
		if (r->jid[0] && strcmp(r->jid, id) != 0)
			return aoe_err(AOE_EDATA, "journal '%s' belongs to a "
			    "run with other arguments or graphs (run %s, this "
			    "is %s): remove it or use another", r->o.journal,
			    r->jid, id);
		if (!r->jid[0]) {
			cJSON *j = cJSON_CreateObject();
			cJSON_AddStringToObject(j, "j", "run");
			cJSON_AddStringToObject(j, "id", id);
			cJSON_AddStringToObject(j, "version", AOE_VERSION);
			journal_line(r, j);
			cJSON_Delete(j);
			journal_sync(r);
		}
	} else
		r->jtim = r->jrec = NULL;
	if (r->o.sshloginfile && (rc = opat_remote_check(r)) < 0)
		return rc;
	if ((rc = baselines(r)) < 0)
		return rc;
	/* In the model, the records wait for the whole-model check. */
	if (r->o.in_model && r->replay == NULL && r->held == NULL)
		r->held = cJSON_CreateArray();
	/* Its reserve: each side's runs of the model, and their children. */
	if (r->reserve_s > 0)
		r->reserve_s = opat_whole_reserve(MCHILD_S, 1.5 *
		    r->total_share / 1e6, r->o.run_loop);
	if (r->ncases > 1)
		qsort(r->cases, r->ncases, sizeof(*r->cases), by_share);
	left_s = r->o.total_seconds > 0 ? r->o.total_seconds : HUGE_VAL;
	left_trials = r->o.total_trials > 0 ? r->o.total_trials : -1;
	left_share = r->total_share;
	for (i = 0; i < r->ncases; i++) {
		opat_case *c = &r->cases[i];
		cJSON *rec, *jr;
		long long mt;
		double ms;

		/* The wall time left, not the seconds charged. */
		if (r->deadline < HUGE_VAL)
			left_s = time_left(r) > 0 ? time_left(r) : 0;
		plan(r, c, r->ncases - i, left_s, left_trials, left_share,
		    &mt, &ms);
		r->case_t0 = aoe_now_us();
		r->cur_scale = 0;
		r->cur_est = expect(r, c, mt, ms);
		r->eta_rest = expect_rest(r, i, left_s - r->cur_est,
		    left_trials >= 0 ? left_trials - mt : -1,
		    left_share - c->share);
		progress(r, c, 1, (int)mt, 0);
		c->spent = c->base.cost_s;
		if ((jr = map_get(r->jrec, c->keystr)) != NULL) {
			rec = cJSON_Duplicate(jr, 1);
			rc = finish_case(r, c, rec, 1);
			c->spent = jnum(rec, "tuning_time_s", 0);
		} else if (c->late || time_left(r) <= 0) {
			/* Not journaled: a later run may reach it. */
			rec = new_record(r, c);
			record_late(rec, c);
			c->spent = 0;
			if (r->held)
				cJSON_AddItemToArray(r->held,
				    cJSON_Duplicate(rec, 1));
			else
				rc = release(r, c, rec);
			nlate++;
		} else {
			if ((rc = tune_case(r, c, mt, ms, &rec)) == 0)
				rc = finish_case(r, c, rec, 0);
		}
		r->ndone = i + 1;
		/* Wall time: what the ETA is about. */
		if (r->cur_est > 0) {
			r->est_done += r->cur_est;
			r->act_done += (aoe_now_us() - r->case_t0) / 1e6;
		}
		r->cur_est = 0;		/* the case is done: only the rest left */
		if (rc == 0)
			progress_case(r, c, rec);
		left_s -= c->spent;
		if (left_s < 0)
			left_s = 0;
		if (left_trials >= 0) {
			left_trials -= (long long)jnum(rec, "trials", 0);
			if (left_trials < 0)
				left_trials = 0;
		}
		left_share -= c->share;
		cJSON_Delete(rec);
		if (rc < 0)
			return rc;
	}
	if (r->held && (rc = model_check(r)) < 0)
		return rc;
	if (nlate)
		aoe_warnx("--total-seconds %g ended the run before %d of %d "
		    "cases: not reached (see their records)",
		    r->o.total_seconds, nlate, r->ncases);
	aoe_tprog_end(&r->prog, "cases");
	return 0;
}

/*
 * Stages.
 */

/* Op tasks: one line per case. */
int
opat_list(opat_run *r)
{
	int i;

	for (i = 0; i < r->ncases; i++) {
		cJSON *o = task_json(r, &r->cases[i]);
		put_line(r->out, o);
		cJSON_Delete(o);
	}
	return 0;
}

/* Candidate sets: the default (id 0) and up to budget-trials more. */
int
opat_generate(opat_run *r)
{
	aoe_sched *b;
	int i, k, j, strategy, id;

	b = aoe_xcalloc((size_t)r->o.tuning_parallel, sizeof(*b));
	for (i = 0; i < r->ncases; i++) {
		opat_case *c = &r->cases[i];
		aoe_space sp;
		opat_search se;
		cJSON *o;

		if (search_space(r, c, &sp) < 0)
			continue;
		strategy = r->o.strategy;
		if (strategy == OPAT_AUTO || strategy == OPAT_EVOLUTION)
			strategy = (long long)opat_space_legal(&sp,
			    r->o.budget_trials + 1) <= r->o.budget_trials ?
			    OPAT_EXHAUSTIVE : OPAT_RANDOM;
		opat_search_init(&se, strategy, &sp, r->o.seed ^ c->key);
		opat_search_add(&se, &sp.def, -1);
		for (id = 0; id < r->o.budget_trials; ) {
			if (id == 0) {
				b[0] = sp.def;
				k = 1;
			} else {
				long long want = r->o.budget_trials - id;
				if (want > r->o.tuning_parallel)
					want = r->o.tuning_parallel;
				if ((k = opat_search_next(&se, (int)want,
				    b)) == 0)
					break;
			}
			for (j = 0; j < k; j++, id++) {
				o = task_json(r, c);
				cJSON_AddNumberToObject(o, "id", id);
				cJSON_AddItemToObject(o, "schedule",
				    opat_sched_json(&b[j]));
				put_line(r->out, o);
				cJSON_Delete(o);
			}
		}
		opat_search_free(&se);
	}
	free(b);
	return 0;
}

/* Find (loading if needed) the graph and node a line names. */
static int
line_node(opat_run *r, const cJSON *o, int *gi, int *ni)
{
	const char *graph = jstr(o, "graph"), *node = jstr(o, "node");
	aoe_graph *g;
	aoe_node *n;
	int k, rc;

	if (graph == NULL || node == NULL)
		return aoe_err(AOE_EDATA, "no \"graph\" or \"node\"");
	if ((rc = load_graph(r, graph, jstr(o, "input_shape"), gi)) < 0)
		return rc;
	/* The node by its path: in the graph or one of its subgraphs. */
	if (aoe_graph_find_path(r->graphs[*gi].g, node, &g, &n))
		for (k = *gi; k < r->ngraphs && (k == *gi ||
		    r->graphs[k].sub); k++)
			if (r->graphs[k].g == g && !n->dyn) {
				*gi = k;
				*ni = (int)(n - g->nodes);
				return 0;
			}
	return aoe_err(AOE_EDATA, "graph '%s' has no live node '%s'", graph,
	    node);
}

/* Read a JSON Lines stream, calling fn for each object. */
static long stream_lines;	/* JSON lines each_line() has handed on */

static int
each_line(const char *path, int (*fn)(opat_run *, cJSON *, const char *,
    long), opat_run *r)
{
	FILE *fp;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	long lineno = 0;
	int rc = 0, worst = 0;

	if ((fp = strcmp(path, "-") ? fopen(path, "r") : stdin) == NULL) {
		rc = aoe_err(AOE_EIO, "cannot open '%s': %s", path,
		    strerror(errno));
		aoe_warnx("%s", aoe_errmsg());
		return rc;
	}
	while ((len = getline(&line, &cap, fp)) > 0) {
		cJSON *o;
		lineno++;
		if (line[strspn(line, " \t\r\n")] == '\0')
			continue;
		if ((o = cJSON_Parse(line)) == NULL || !cJSON_IsObject(o)) {
			cJSON_Delete(o);
			aoe_err(AOE_EDATA, "%s:%ld: malformed JSON", path,
			    lineno);
			aoe_warnx("%s", aoe_errmsg());
			worst = -AOE_EDATA;
			continue;
		}
		stream_lines++;
		if ((rc = fn(r, o, path, lineno)) < 0) {
			aoe_warnx("%s", aoe_errmsg());
			if (rc < worst)
				worst = rc;
		}
		cJSON_Delete(o);
	}
	free(line);
	if (fp != stdin)
		fclose(fp);
	return worst;
}

static int
measure_line(opat_run *r, cJSON *o, const char *path, long lineno)
{
	opat_meas_opts mo;
	opat_timing t;
	aoe_space sp;
	aoe_sched s;
	char why[256], mk[1200], canon[1024];
	uint64_t seed;
	int gi, ni, rc;
	double t0;

	if ((rc = line_node(r, o, &gi, &ni)) < 0)
		return aoe_err(-rc, "%s:%ld: %s", path, lineno, aoe_errmsg());
	if (aoe_sched_from_json(cJSON_GetObjectItemCaseSensitive(o,
	    "schedule"), &s, why, sizeof(why)) < 0)
		return aoe_err(AOE_EDATA, "%s:%ld: \"schedule\" is not a flat "
		    "object of integer knobs (%s)", path, lineno, why);
	if ((rc = aoe_space_for(r->graphs[gi].g, &r->graphs[gi].g->nodes[ni],
	    &sp)) < 0)
		return rc;
	memset(&t, 0, sizeof(t));
	opat_canon(&sp, &s, canon, sizeof(canon));
	if (aoe_space_validate(&sp, &s, why, sizeof(why)) < 0) {
		t.status = OPAT_INVALID;
		snprintf(t.reason, sizeof(t.reason), "%s", why);
	} else {
		memset(&mo, 0, sizeof(mo));
		mo.nthreads = r->o.threads;
		mo.run_loop = r->o.run_loop;
		mo.parallel = 1;
		mo.timeout_s = r->o.timeout_s;
		mo.lock_path = opat_lock_path();
		snprintf(mk, sizeof(mk), "%s|%s", jstr(o, "key") ?
		    jstr(o, "key") : "", canon);
		seed = opat_hash(r->o.seed * 0x9E3779B97F4A7C15ULL + 1, mk);
		t0 = aoe_now_us();
		if ((rc = opat_measure(r->graphs[gi].g, ni, &s, &seed, 1, &mo,
		    &t)) < 0)
			return rc;
		t.cost_s = (aoe_now_us() - t0) / 1e6;
	}
	cJSON_DeleteItemFromObject(o, "status");
	cJSON_AddStringToObject(o, "canon", canon);
	timing_fields(o, &t);
	put_line(r->out, o);
	return 0;
}

int
opat_measure_stream(opat_run *r, int argc, char **argv)
{
	int i, rc, worst = 0;

	if ((rc = opat_fault_check()) < 0)
		return rc;
	for (i = 0; i < (argc ? argc : 1); i++)
		if ((rc = each_line(argc ? argv[i] : "-", measure_line, r)) <
		    worst)
			worst = rc;
	/* Empty input is a failed stage upstream: fail too. */
	if (worst == 0 && stream_lines == 0) {
		worst = aoe_err(AOE_EDATA, "no candidates in %s", argc == 1 ?
		    argv[0] : "the input");
		aoe_warnx("%s", aoe_errmsg());
	}
	return worst;
}

/* --select: group timings by key, keep the order they came in. */
typedef struct selcase {
	char key[32];
	cJSON *first;		/* a line of the case, for its fields */
	int has_base, nok, trials;
	opat_timing base, best;
	cJSON *base_s, *best_s;
	int nfail[OPAT_NSTATUS];
	cJSON *hist;
} selcase;

static int
select_line(opat_run *r, cJSON *o, const char *path, long lineno)
{
	const char *k = jstr(o, "key");
	selcase *sc = NULL;
	opat_timing t;
	int i;

	if (k == NULL || jstr(o, "status") == NULL ||
	    !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(o, "schedule")))
		return aoe_err(AOE_EDATA, "%s:%ld: not a timing (needs key, "
		    "schedule and status)", path, lineno);
	for (i = 0; i < r->nsel; i++)
		if (strcmp(r->sel[i].key, k) == 0)
			sc = &r->sel[i];
	if (sc == NULL) {
		r->sel = aoe_xrealloc(r->sel, (r->nsel + 1) * sizeof(*r->sel));
		sc = &r->sel[r->nsel++];
		memset(sc, 0, sizeof(*sc));
		snprintf(sc->key, sizeof(sc->key), "%s", k);
		sc->first = cJSON_Duplicate(o, 1);
		sc->hist = cJSON_CreateArray();
	}
	opat_timing_from_json(o, &t);
	sc->trials++;
	if (jnum(o, "id", -1) == 0 && !sc->has_base) {
		sc->has_base = 1;
		sc->base = t;
		sc->base_s = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(o,
		    "schedule"), 1);
	}
	if (t.status != OPAT_OK) {
		sc->nfail[t.status]++;
		return 0;
	}
	if (sc->nok++ == 0 || t.us < sc->best.us) {
		sc->best = t;
		cJSON_Delete(sc->best_s);
		sc->best_s = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(o,
		    "schedule"), 1);
		add_history(sc->hist, sc->trials, round6(t.us));
	}
	return 0;
}

int
opat_select_stream(opat_run *r, int argc, char **argv)
{
	int i, rc, worst = 0;

	for (i = 0; i < (argc ? argc : 1); i++)
		if ((rc = each_line(argc ? argv[i] : "-", select_line, r)) <
		    worst)
			worst = rc;
	if (worst == 0 && stream_lines == 0) {
		aoe_warnx("%s", (aoe_err(AOE_EDATA, "no timings in %s",
		    argc == 1 ? argv[0] : "the input"), aoe_errmsg()));
		return -AOE_EDATA;
	}
	for (i = 0; i < r->nsel; i++) {
		selcase *sc = &r->sel[i];
		opat_case c;
		cJSON *rec = cJSON_CreateObject(), *names;
		const char *outcome, *from = NULL;
		double noise, before, after;
		aoe_sched es;
		int gi, ni, hit = 0;

		memset(&c, 0, sizeof(c));
		snprintf(c.keystr, sizeof(c.keystr), "%s", sc->key);
		cJSON_AddStringToObject(rec, "kind", "opat");
		cJSON_AddStringToObject(rec, "key", sc->key);
		cJSON_AddStringToObject(rec, "op_type", jstr(sc->first,
		    "op_type") ? jstr(sc->first, "op_type") : "?");
		names = cJSON_GetObjectItemCaseSensitive(sc->first, "names");
		cJSON_AddItemToObject(rec, "names", names ?
		    cJSON_Duplicate(names, 1) : cJSON_CreateArray());
		cJSON_AddStringToObject(rec, "signature", jstr(sc->first,
		    "signature") ? jstr(sc->first, "signature") : "");
		cJSON_AddStringToObject(rec, "soc_version", jstr(sc->first,
		    "soc_version") ? jstr(sc->first, "soc_version") :
		    aoe_soc_version());
		cJSON_AddNumberToObject(rec, "threads", jnum(sc->first,
		    "threads", r->o.threads));
		/* A bank hit is reserved unless REPEAT_TUNE. */
		if (r->o.use_bank && line_node(r, sc->first, &gi, &ni) == 0 &&
		    aoe_bank_find(r->graphs[gi].g, &r->graphs[gi].g->nodes[ni],
		    opat_jint(sc->first, "threads", r->o.threads, 1, 1024),
		    &es, &from) == 1)
			hit = 1;
		if (!sc->has_base || sc->base.status != OPAT_OK ||
		    sc->nok == 0) {
			outcome = "failed";
			cJSON_AddNumberToObject(rec, "trials", sc->trials);
		} else {
			before = sc->base.us;
			after = sc->best.us;
			noise = opat_margin(r->o.noise_floor, sc->base.spread,
			    sc->best.spread);
			if (hit && !r->o.repeat_tune)
				outcome = "reserved";
			else if (admits(&r->o, before, after, noise))
				outcome = hit ? "update" : "add";
			else
				outcome = hit ? "reserved" : "unsatisfied";
			cJSON_AddNumberToObject(rec, "before_us",
			    round6(before));
			cJSON_AddNumberToObject(rec, "after_us", round6(after));
			cJSON_AddNumberToObject(rec, "spread", round6(noise));
			cJSON_AddItemToObject(rec, "schedule", cJSON_Duplicate(
			    strcmp(outcome, "add") == 0 ||
			    strcmp(outcome, "update") == 0 ? sc->best_s :
			    sc->base_s, 1));
			cJSON_AddNumberToObject(rec, "trials", sc->trials);
			cJSON_AddItemToObject(rec, "history", sc->hist);
			sc->hist = NULL;
		}
		cJSON_AddStringToObject(rec, "outcome", outcome);
		add_failed(rec, sc->nfail);
		r->jrec = r->jrec ? r->jrec : map_new();
		if ((rc = finish_case(r, &c, rec, 1)) < 0 && rc < worst)
			worst = rc;
		cJSON_Delete(rec);
		cJSON_Delete(sc->first);
		cJSON_Delete(sc->base_s);
		cJSON_Delete(sc->best_s);
		cJSON_Delete(sc->hist);
	}
	return worst;
}

/* Op tasks as input: load each task's graph, keeping its node. */
static int
task_line(opat_run *r, cJSON *o, const char *path, long lineno)
{
	char *only[1];
	int rc;

	if (jstr(o, "graph") == NULL || jstr(o, "node") == NULL)
		return aoe_err(AOE_EDATA, "%s:%ld: not an op task (needs graph "
		    "and node)", path, lineno);
	only[0] = (char *)jstr(o, "node");
	if ((rc = opat_add_graph(r, jstr(o, "graph"), jstr(o, "input_shape"),
	    only, 1)) < 0)
		return aoe_err(-rc, "%s:%ld: %s", path, lineno, aoe_errmsg());
	return 0;
}

int
opat_add_tasks(opat_run *r, const char *path)
{
	int rc;

	if ((rc = opat_fault_check()) < 0)
		return rc;
	return each_line(path, task_line, r);
}

/* Whether a file holds op tasks (JSON Lines with graph and node). */
int
opat_is_tasks(const char *path)
{
	FILE *fp;
	char buf[65536];
	cJSON *o;
	int yes = 0;

	if (strcmp(path, "-") == 0 || (fp = fopen(path, "r")) == NULL)
		return 0;
	if (fgets(buf, sizeof(buf), fp) != NULL && (o = cJSON_Parse(buf))) {
		yes = jstr(o, "graph") != NULL && jstr(o, "node") != NULL &&
		    jstr(o, "key") != NULL;
		cJSON_Delete(o);
	}
	fclose(fp);
	return yes;
}

void
opat_run_free(opat_run *r)
{
	int i;

	for (i = 0; i < r->ncases; i++) {
		int j;
		for (j = 0; j < r->cases[i].nnames; j++)
			free(r->cases[i].names[j]);
		free(r->cases[i].names);
		free(r->cases[i].sig);
		map_free(r->cases[i].rmap, NULL);
	}
	free(r->cases);
	cJSON_Delete(r->held);
	for (i = 0; i < r->ngraphs; i++) {
		/* A subgraph is freed with the graph that holds it. */
		if (!r->graphs[i].sub)
			aoe_graph_free(r->graphs[i].g);
		free(r->graphs[i].gone);
		free(r->graphs[i].path);
		free(r->graphs[i].shape);
		free(r->graphs[i].prefix);
	}
	free(r->graphs);
	map_free(r->jtim, NULL);
	map_free(r->jrec, json_free);
	map_free(r->replay, json_free);
	free(r->sel);
	if (r->jfp)
		fclose(r->jfp);
	for (i = 0; i < r->o.nops_names; i++)
		free(r->o.ops_names[i]);
	free(r->o.ops_names);
	for (i = 0; i < r->o.nops_types; i++)
		free(r->o.ops_types[i]);
	free(r->o.ops_types);
}
