/*
 * unit-einsum.c - Einsum (lib/kernels/k_einsum.c) on float32 against a
 * plain reference: contractions as transformer exports write them,
 * transposed operands, implicit outputs, diagonals and traces, outer
 * and Hadamard products, broadcasting ellipses and three operands, each
 * with its default schedule and schedules sampled from its space.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aoe.h"
#include "tap.h"

static aoe_run_opts opts;

/*
 * A case: the equation the kernel gets, the same with letters only for
 * the reference (every operand's own dimensions named, the output
 * explicit), and the operands' shapes.
 */
static const struct ecase {
	const char *eq, *ref;
	int nops;
	int nd[3];
	int64_t dims[3][5];
} cases[] = {
	{ "bhqd,bhkd->bhqk", "bhqd,bhkd->bhqk", 2, { 4, 4 },
	    { { 2, 3, 17, 8 }, { 2, 3, 13, 8 } } },
	{ "bhqk,bhkd->bhqd", "bhqk,bhkd->bhqd", 2, { 4, 4 },
	    { { 2, 3, 17, 13 }, { 2, 3, 13, 8 } } },
	{ "ij,jk->ik", "ij,jk->ik", 2, { 2, 2 }, { { 37, 29 }, { 29, 41 } } },
	{ "ij,kj->ik", "ij,kj->ik", 2, { 2, 2 }, { { 37, 29 }, { 41, 29 } } },
	{ "ji,jk->ik", "ji,jk->ik", 2, { 2, 2 }, { { 29, 37 }, { 29, 41 } } },
	{ "ij,jk", "ij,jk->ik", 2, { 2, 2 }, { { 5, 6 }, { 6, 7 } } },
	{ "bij,bjk->bik", "bij,bjk->bik", 2, { 3, 3 },
	    { { 4, 9, 10 }, { 4, 10, 11 } } },
	{ "i,i", "i,i->", 2, { 1, 1 }, { { 19 }, { 19 } } },
	{ "ij->ji", "ij->ji", 1, { 2 }, { { 7, 9 } } },
	{ "ii->i", "ii->i", 1, { 2 }, { { 6, 6 } } },
	{ "ii", "ii->", 1, { 2 }, { { 6, 6 } } },
	{ "bii->bi", "bii->bi", 1, { 3 }, { { 3, 5, 5 } } },
	{ "ij,ij->ij", "ij,ij->ij", 2, { 2, 2 }, { { 8, 9 }, { 8, 9 } } },
	{ "ij,j->i", "ij,j->i", 2, { 2, 1 }, { { 33, 17 }, { 17 } } },
	{ "i,j->ij", "i,j->ij", 2, { 1, 1 }, { { 7 }, { 9 } } },
	{ "ij->", "ij->", 1, { 2 }, { { 7, 9 } } },
	{ "...ij,...jk->...ik", "aij,ajk->aik", 2, { 3, 3 },
	    { { 3, 4, 5 }, { 1, 5, 6 } } },
	{ "...i,...i->...", "abi,bi->ab", 2, { 3, 2 },
	    { { 2, 3, 4 }, { 3, 4 } } },
	{ "abc,cd,de->abe", "abc,cd,de->abe", 3, { 3, 2, 2 },
	    { { 2, 3, 4 }, { 4, 5 }, { 5, 6 } } },
	{ "bn,anm,bm->ba", "bn,anm,bm->ba", 3, { 2, 3, 2 },
	    { { 3, 4 }, { 2, 4, 5 }, { 3, 5 } } },
	{ "ik,jk", "ik,jk->ij", 2, { 2, 2 }, { { 12, 20 }, { 14, 20 } } },
	{ "b i d , b j d -> b i j", "bid,bjd->bij", 2, { 3, 3 },
	    { { 2, 16, 24 }, { 2, 16, 24 } } },
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

/* The reference: every combination of every label, summed. */
static void
reference(const struct ecase *c, float *const *x, double *y, int64_t *ny)
{
	char terms[4][8];
	int nt[4], lab[4][8], nl = 0, i, j, t;
	int64_t size[52], idx[52], total = 1, o, p, s;
	char labs[52];
	const char *q = c->ref;

	memset(size, 0, sizeof(size));
	for (t = 0; t <= c->nops; t++) {
		nt[t] = 0;
		while (*q && *q != ',' && *q != '-')
			terms[t][nt[t]++] = *q++;
		if (*q == ',')
			q++;
		else if (*q == '-')
			q += 2;
	}
	for (t = 0; t <= c->nops; t++)
		for (j = 0; j < nt[t]; j++) {
			for (i = 0; i < nl && labs[i] != terms[t][j]; i++)
				;
			if (i == nl)
				labs[nl++] = terms[t][j];
			lab[t][j] = i;
			if (t < c->nops && c->dims[t][j] > size[i])
				size[i] = c->dims[t][j];
		}
	for (i = 0; i < nl; i++) {
		total *= size[i];
		idx[i] = 0;
	}
	*ny = 1;
	for (j = 0; j < nt[c->nops]; j++)
		*ny *= size[lab[c->nops][j]];
	memset(y, 0, sizeof(double) * *ny);
	for (p = 0; p < total; p++) {
		double v = 1;
		for (t = 0; t < c->nops; t++) {
			for (j = 0, s = 0; j < nt[t]; j++)
				s = s * c->dims[t][j] + (c->dims[t][j] == 1 ?
				    0 : idx[lab[t][j]]);
			v *= x[t][s];
		}
		for (j = 0, o = 0; j < nt[c->nops]; j++)
			o = o * size[lab[c->nops][j]] + idx[lab[c->nops][j]];
		y[o] += v;
		for (i = nl - 1; i >= 0; i--) {
			if (++idx[i] < size[i])
				break;
			idx[i] = 0;
		}
	}
}

static void
run_case(const struct ecase *c, uint64_t seed)
{
	aoe_graph *g = aoe_graph_new("einsum");
	aoe_node *n;
	aoe_space sp;
	aoe_sched s;
	float *x[3];
	double *ref = malloc(sizeof(double) * 4096), worst = 0;
	int64_t ny, i, m;
	int in[3], out, t, k, bad = 0, runs = 0, th;
	char name[8];

	g->opset = 17;
	g->inputs = aoe_xcalloc(3, sizeof(int));
	g->outputs = aoe_xcalloc(1, sizeof(int));
	for (t = 0; t < c->nops; t++) {
		aoe_tensor *tt;
		snprintf(name, sizeof(name), "x%d", t);
		in[t] = aoe_graph_tensor(g, name);
		tt = g->tensors[in[t]];
		aoe_tensor_set(tt, AOE_F32, c->nd[t], c->dims[t]);
		tt->kind = AOE_T_INPUT;
		g->inputs[g->ninputs++] = in[t];
		m = aoe_tensor_numel(tt);
		x[t] = malloc(sizeof(float) * (m + 1));
		for (i = 0; i < m; i++)
			x[t][i] = frand();
	}
	out = aoe_graph_tensor(g, "y");
	g->outputs[g->noutputs++] = out;
	k = aoe_graph_add_node(g, "einsum0", "Einsum", c->nops, in, 1, &out);
	n = &g->nodes[k];
	aoe_node_add_attr(n, "equation", AOE_A_STRING)->s = aoe_xstrdup(c->eq);
	reference(c, x, ref, &ny);
	if (aoe_graph_prepare(g, &opts) < 0 || aoe_space_for(g, n, &sp) < 0) {
		ok(0, "%s: prepare: %s", c->eq, aoe_errmsg());
		goto out;
	}
	if (aoe_tensor_numel(g->tensors[out]) != ny) {
		ok(0, "%s: %lld outputs, %lld expected", c->eq,
		    (long long)aoe_tensor_numel(g->tensors[out]),
		    (long long)ny);
		goto out;
	}
	for (t = 0; t < c->nops; t++)
		memcpy(g->tensors[in[t]]->data, x[t],
		    aoe_tensor_nbytes(g->tensors[in[t]]));
	for (k = -1; k < 4 && !bad; k++) {
		if (k < 0)
			s = sp.def;
		else if (sp.nknobs == 0 || aoe_space_sample(&sp, &seed, &s) < 0)
			break;
		if (aoe_space_apply(g, n, &s) < 0) {
			bad = 1;
			break;
		}
		for (th = 1; th <= 2 && !bad; th++) {
			const float *y = g->tensors[out]->data;
			opts.nthreads = th;
			if (aoe_graph_run(g, &opts) < 0) {
				bad = 1;
				break;
			}
			for (i = 0; i < ny; i++) {
				double e = fabs(y[i] - ref[i]) / (1 +
				    fabs(ref[i]));
				if (!(e <= worst))
					worst = isnan(e) ? INFINITY : e;
			}
			if (worst > 1e-5)
				bad = 1;
			runs++;
		}
	}
	ok(!bad, "%s: %d runs (%d knobs) match the reference (worst %.2g)",
	    c->eq, runs, sp.nknobs, worst);
out:
	for (t = 0; t < c->nops; t++)
		free(x[t]);
	free(ref);
	aoe_graph_free(g);
}

int
main(void)
{
	size_t i;

	aoe_run_opts_init(&opts);
	opts.use_bank = 0;
	for (i = 0; i < NCASES; i++)
		run_case(&cases[i], 77 + i);
	return done_testing();
}
