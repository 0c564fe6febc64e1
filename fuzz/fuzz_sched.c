/*
 * fuzz_sched - schedules in and out of the search space on small ops of
 * every family with a space (models.h).  The input picks a node and, knob
 * by knob, keeps the default, takes a legal value, takes any 64-bit value
 * or drops the knob, and may add a knob no space has.  Properties: a
 * schedule that validation refuses is never applied; one it accepts
 * prepares and runs; the space's own points, samples (for one input in
 * 512) and mutations validate.
 */
#include "base.h"
#include "models.h"

typedef struct sched_rd {
	const uint8_t *d;
	size_t n, i;
} sched_rd;

static uint64_t
sched_take(sched_rd *r, int bytes)
{
	uint64_t v = 0;
	int b;

	for (b = 0; b < bytes; b++)
		v = v << 8 | (r->i < r->n ? r->d[r->i++] : 0);
	return v;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_init();
	fz_load_models(0);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	sched_rd r = { d, n, 0 };
	aoe_graph *g;
	aoe_node *node;
	aoe_space sp;
	aoe_sched s, t;
	char why[256];
	uint64_t seed, idx;
	int i, gi, ni, ok, applied;

	if (n < 2)
		return 0;
	gi = (int)(sched_take(&r, 1) % fz_ng);
	g = fz_g[gi];
	if (g->norder == 0)
		return 0;
	ni = (int)(sched_take(&r, 1) % g->norder);
	node = &g->nodes[g->order ? g->order[ni] : ni];
	if (aoe_space_for(g, node, &sp) < 0)
		return 0;
	s = sp.def;
	for (i = 0; i < sp.nknobs; i++) {
		const aoe_knob *k = &sp.knobs[i];
		int64_t c = aoe_knob_count(k), v;
		switch (sched_take(&r, 1) & 3) {
		case 0:
			continue;
		case 1:
			v = aoe_knob_value(k, c > 0 ? (int64_t)(sched_take(&r, 2) %
			    (uint64_t)c) : 0);
			break;
		case 2:
			v = (int64_t)sched_take(&r, 8);
			break;
		default:
			/* Dropped: the knob takes its default. */
			t = s;
			s.n = 0;
			for (int j = 0; j < t.n; j++)
				if (strcmp(t.k[j].name, k->name) != 0)
					s.k[s.n++] = t.k[j];
			continue;
		}
		aoe_sched_set(&s, k->name, v);
	}
	if (sched_take(&r, 1) == 0xa5)
		aoe_sched_set(&s, "bogus_knob", (int64_t)sched_take(&r, 2));
	ok = aoe_space_validate(&sp, &s, why, sizeof(why)) == 0;
	t = node->sched;
	applied = aoe_space_apply(g, node, &s) == 0;
	if (applied && !ok) {
		fprintf(stderr, "%s '%s': applied a schedule validation "
		    "refuses\n", node->op_type, node->name);
		abort();
	}
	if (applied) {
		if (aoe_graph_run(g, &fz_ro) < 0 && fz_runs[gi]) {
			/* A legal schedule runs what the default runs. */
			fprintf(stderr, "%s '%s': legal schedule fails: %s\n",
			    node->op_type, node->name, aoe_errmsg());
			abort();
		}
	}
	/* Back to the schedule it had, which must apply. */
	if (aoe_space_apply(g, node, &t) < 0 && aoe_space_apply(g, node,
	    &sp.def) < 0)
		abort();
	/*
	 * The space's own points validate.  A sample costs hundreds of
	 * validations (rejection, then the walk), a hundred times the rest
	 * of an input, so one input in 512 draws one.  The whole input's
	 * hash decides, not the seed's bytes: the corpus keeps inputs that
	 * sampled (they reach more code), and their mutations kept the
	 * seed, so one seed in 8 sampled on two thirds of the inputs.
	 */
	seed = sched_take(&r, 8);
	if ((aoe_fnv1a(14695981039346656037ULL, d, n) & 511) == 0 &&
	    aoe_space_sample(&sp, &seed, &s) == 0 &&
	    aoe_space_validate(&sp, &s, why, sizeof(why)) < 0) {
		fprintf(stderr, "sample not legal: %s\n", why);
		abort();
	}
	if (aoe_space_mutate(&sp, &seed, &sp.def, &s) == 0 &&
	    aoe_space_validate(&sp, &s, why, sizeof(why)) < 0) {
		fprintf(stderr, "mutation not legal: %s\n", why);
		abort();
	}
	idx = sched_take(&r, 8);
	if (aoe_space_size(&sp) > 0)
		idx %= aoe_space_size(&sp);
	if (aoe_space_point(&sp, idx, &s) == 1 &&
	    aoe_space_validate(&sp, &s, why, sizeof(why)) < 0) {
		fprintf(stderr, "point %llu not legal: %s\n",
		    (unsigned long long)idx, why);
		abort();
	}
	return 0;
}
