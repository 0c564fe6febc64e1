/*
 * prepare.c - a graph prepared as a run prepares it: the runtime's
 * analysis, the fusion passes with each chain's subgraph decisions (the
 * caller's table, then the subgraph bank), the blocked layout, each
 * node's schedule (the operator bank, else the kernel's default), the
 * kernels, the memory plan, and, under AOE_MODE, the capture hook.
 *
 * Everything that changes how a graph is prepared comes in through
 * aoe_run_opts; the environment variables read here (AOE_FUSE,
 * AOE_LAYOUT, AOE_MODE) only override its defaults.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"

/*
 * The mode in effect: the options', which AOE_FUSE overrides in the
 * default mode.  A graph compiled in tune mode is captured as the model
 * has it (capture.c): whether to fuse is for tuning to decide.
 */
static int
fuse_mode(const aoe_run_opts *o)
{
	const char *env = getenv("AOE_FUSE");

	if (o->fuse_mode != AOE_FUSE_BANK)
		return o->fuse_mode;
	if (getenv("AOE_MODE") != NULL)
		return AOE_FUSE_OFF;
	if (env && strcmp(env, "all") == 0)
		return AOE_FUSE_ALL;
	if (env && (strcmp(env, "none") == 0 || strcmp(env, "0") == 0 ||
	    strcmp(env, "off") == 0))
		return AOE_FUSE_OFF;
	return AOE_FUSE_BANK;
}

/*
 * AOE_LAYOUT=8c (or nchw8c) asks for the blocked layout in every chain
 * and AOE_LAYOUT=plain for none, whatever the bank says; -1 when unset.
 */
static int
layout_env(void)
{
	const char *env = getenv("AOE_LAYOUT");

	if (env == NULL || *env == '\0')
		return -1;
	if (strcmp(env, "8c") == 0 || strcmp(env, "nchw8c") == 0 ||
	    strcmp(env, "8") == 0)
		return AOE_LAYOUT_8C;
	return 0;
}

/*
 * A subgraph decision split (lib/passes/fuse.c) sets the GEMM thread split,
 * knob "par", of the schedule n got, where n's space holds that value
 * and the schedule stays legal with it; else the schedule stays.
 */
static void
split_override(const aoe_graph *g, aoe_node *n)
{
	aoe_space sp;
	aoe_sched s;
	char why[256];
	int64_t v = aoe_attr_int(n, "_aoe_split", 0);

	if (v == 0 || aoe_space_for(g, n, &sp) < 0)
		return;
	s = n->sched;
	aoe_sched_set(&s, "par", v);
	if (aoe_space_validate(&sp, &s, why, sizeof(why)) == 0)
		n->sched = s;
}

/* A chain's decisions: the caller's table, then the subgraph bank. */
static int
find_decisions(void *arg, const char *sig, aoe_sched *d)
{
	const aoe_run_opts *o = arg;

	if (aoe_dtable_find(o->decisions, sig, d))
		return 1;
	return o->use_bank && aoe_bank_graph_find(sig, d);
}

/* The passes: canonical rewrites, fusion and layout decisions. */
static int
run_passes(aoe_graph *g, const aoe_run_opts *o)
{
	int mode = fuse_mode(o), rc;
	aoe_fuse_ctx c;

	if (mode == AOE_FUSE_OFF)
		return 0;
	if ((rc = aoe_fuse_canon(g)) > 0 && (rc = aoe_graph_reinfer(g)) < 0)
		return rc;
	if ((rc = aoe_fuse_qdq(g)) > 0 && (rc = aoe_graph_reinfer(g)) < 0)
		return rc;
	memset(&c, 0, sizeof(c));
	c.nthreads = aoe_nthreads(o->nthreads);
	c.layout = layout_env();
	if (mode == AOE_FUSE_FORCE)
		c.force = &o->fuse_force;
	/* No signatures to compute when there is no entry to find. */
	else if (mode == AOE_FUSE_BANK && (aoe_dtable_size(o->decisions) >
	    0 || (o->use_bank && aoe_bank_graph_entries() > 0))) {
		c.find = find_decisions;
		c.arg = (void *)o;
	}
	if ((rc = aoe_fuse_hook(g, &c)) > 0) {
		if ((rc = aoe_graph_reinfer(g)) < 0)
			return rc;
	} else if (rc < 0)
		return rc;
	if (aoe_fuse_layout(g) > 0 && (rc = aoe_graph_reinfer(g)) < 0)
		return rc;
	return 0;
}

/*
 * The subgraphs of node n (If branches, Loop and Scan bodies), each
 * prepared as a graph of its own: its passes, the bank, its memory plan.
 * The runtime bound their inputs' shapes when it inferred n.
 */
/*
 * Set while the bodies of a node are prepared with the graph that holds
 * them: that graph's capture (tune mode) holds them nested, so they are
 * not captured again as graphs of their own.  (A body whose shapes change
 * at run time is prepared again by the runtime, without the bank, and is
 * not captured: lib/runtime/ctl.c.)
 */
static _Thread_local int in_bodies;

static int
prepare_bodies(aoe_node *n, const aoe_run_opts *o)
{
	char msg[1024];
	int j, rc;

	for (j = 0; j < n->nattr; j++) {
		aoe_graph *b = n->attrs[j].g;
		if (n->attrs[j].type != AOE_A_GRAPH || b == NULL)
			continue;
		in_bodies++;
		rc = aoe_graph_prepare(b, o);
		in_bodies--;
		if (rc < 0) {
			snprintf(msg, sizeof(msg), "%s", aoe_errmsg());
			return aoe_err(-rc, "%s '%s', subgraph '%s': %s",
			    n->op_type, n->name, n->attrs[j].name, msg);
		}
	}
	return 0;
}

/* The walk of aoe_graph_each_node() below prefix (the path so far). */
static int
each_node(aoe_graph *g, char **prefix, size_t *cap, size_t len,
    aoe_node_fn fn, void *arg)
{
	int i, j, rc;

	for (i = 0; i < g->norder; i++) {
		aoe_node *n = &g->nodes[g->order[i]];
		size_t nl = strlen(n->name);

		if (n->dead)
			continue;
		if (len + nl + 1 > *cap) {
			*cap = 2 * (len + nl + 1);
			*prefix = aoe_xrealloc(*prefix, *cap);
		}
		memcpy(*prefix + len, n->name, nl + 1);
		if ((rc = fn(g, n, *prefix, arg)) != 0)
			return rc;
		for (j = 0; j < n->nattr; j++) {
			aoe_graph *b = n->attrs[j].g;
			size_t al = strlen(n->attrs[j].name), sl;
			if (n->attrs[j].type != AOE_A_GRAPH || b == NULL ||
			    !b->prepared)
				continue;
			sl = len + nl + al + 2;
			if (sl + 1 > *cap) {
				*cap = 2 * (sl + 1);
				*prefix = aoe_xrealloc(*prefix, *cap);
			}
			/* The node's name again: fn may not keep the text. */
			memcpy(*prefix + len, n->name, nl);
			(*prefix)[len + nl] = '/';
			memcpy(*prefix + len + nl + 1, n->attrs[j].name, al);
			(*prefix)[sl - 1] = '/';
			(*prefix)[sl] = '\0';
			if ((rc = each_node(b, prefix, cap, sl, fn, arg)) != 0)
				return rc;
		}
	}
	return 0;
}

int
aoe_graph_each_node(aoe_graph *g, aoe_node_fn fn, void *arg)
{
	size_t cap = 256;
	char *prefix = aoe_xmalloc(cap);
	int rc;

	prefix[0] = '\0';
	rc = each_node(g, &prefix, &cap, 0, fn, arg);
	free(prefix);
	return rc;
}

typedef struct find_arg {
	const char *path;
	aoe_graph *g;
	aoe_node *n;
} find_arg;

static int
find_one(aoe_graph *g, aoe_node *n, const char *path, void *arg)
{
	find_arg *f = arg;

	if (strcmp(path, f->path) != 0)
		return 0;
	f->g = g;
	f->n = n;
	return 1;
}

int
aoe_graph_find_path(aoe_graph *g, const char *path, aoe_graph **gp,
    aoe_node **np)
{
	find_arg f = { path, NULL, NULL };

	if (aoe_graph_each_node(g, find_one, &f) != 1)
		return 0;
	*gp = f.g;
	*np = f.n;
	return 1;
}

int
aoe_graph_prepare(aoe_graph *g, const aoe_run_opts *o)
{
	int i, rc;

	if ((rc = aoe_graph_analyse(g)) < 0 || (rc = run_passes(g, o)) < 0)
		return rc;
	for (i = 0; i < g->norder; i++) {
		aoe_node *n = &g->nodes[g->order[i]];
		/*
		 * A dynamic node has no static signature: the runtime gives
		 * it the default schedule at every run (exec.c).
		 */
		if (n->dead || n->dyn)
			continue;
		if ((rc = prepare_bodies(n, o)) < 0)
			return rc;
		memset(&n->sched, 0, sizeof(n->sched));
		n->sched_from_bank = 0;
		/* Bank entries are per thread count: the one we run with. */
		if (o->use_bank && aoe_bank_lookup(g, n, o->nthreads,
		    &n->sched) == 1)
			n->sched_from_bank = 1;
		else if (n->op->default_sched)
			n->op->default_sched(g, n, &n->sched);
		split_override(g, n);
		if ((rc = aoe_node_prepare(g, n)) < 0)
			return rc;
	}
	if ((rc = aoe_graph_plan(g, o)) < 0 || o->plan_only)
		return rc;
	if (in_bodies == 0 && getenv("AOE_MODE") != NULL &&
	    (rc = aoe_capture_hook(g)) < 0)
		return rc;
	return 0;
}
