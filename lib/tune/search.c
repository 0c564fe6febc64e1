/*
 * search.c - the search strategies of aoe-opat over a kernel's space:
 * exhaustive enumeration, uniform random sampling without repeats, and an
 * evolutionary search guided by a cost model.
 *
 * The cost model is an analytical estimate of a GEMM-based kernel's time
 * corrected by what has been measured.  For Gemm and MatMul the estimate
 * follows aoe_sgemm() (gemm_cycles(): the blocks as the kernel balances
 * them, the micro-kernel's issue of FMAs and loads over full and edge
 * tiles, the traffic of C per depth block from L2 or further, the cache
 * fit of B's strip and A's block, A packed per B panel, B packed once or
 * read in place); for a Conv it is the older per-element estimate (the
 * micro-kernel's share of peak, padding, packing and im2col, Winograd's
 * saving and transforms).
 *
 * A space small enough to enumerate (ENUM_SIZE points) is ranked whole:
 * each batch is the best of the points not proposed yet by the estimate
 * plus a ridge regression of the measured residuals (log time minus the
 * estimate) on the knob values, refitted as times come in.  In a larger
 * space each generation breeds children of the best points (mutation
 * and crossover) and draws a pool of fresh random points, ranks them with
 * the estimate corrected by a k-nearest-neighbour regression of the
 * residual (an ordinal distance between knob values, shrunk to the mean
 * residual far from any measured point) and measures the most promising.
 * Spaces the analytical part does not know are ranked by the learned
 * part alone.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "opat.h"

#define POOL 96		/* children bred per generation */
#define FRESH 256	/* random points drawn per generation */
#define PARENTS 4
#define KNN 3

uint64_t
opat_hash(uint64_t h, const char *s)
{
	return aoe_fnv1a(h != 0 ? h : AOE_FNV_INIT, s, strlen(s));
}

static int
cmp_knob(const void *a, const void *b)
{
	return strcmp(((const aoe_knob *)a)->name,
	    ((const aoe_knob *)b)->name);
}

void
opat_canon(const aoe_space *sp, const aoe_sched *s, char *buf, size_t len)
{
	aoe_knob k[AOE_SCHED_MAX];
	size_t off = 0;
	int i;

	memcpy(k, sp->knobs, sizeof(aoe_knob) * sp->nknobs);
	qsort(k, sp->nknobs, sizeof(aoe_knob), cmp_knob);
	buf[0] = '\0';
	for (i = 0; i < sp->nknobs && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%s=%lld", i ? "," : "",
		    k[i].name, (long long)aoe_sched_get(s, k[i].name,
		    k[i].def));
}

cJSON *
opat_sched_json(const aoe_sched *s)
{
	cJSON *o = cJSON_CreateObject();
	int i;

	for (i = 0; i < s->n; i++)
		cJSON_AddNumberToObject(o, s->k[i].name, (double)s->k[i].v);
	return o;
}

uint64_t
opat_space_legal(const aoe_space *sp, uint64_t limit)
{
	uint64_t size = aoe_space_size(sp), i, n = 0;
	aoe_sched s;

	if (size > 4000000)
		return limit;
	for (i = 0; i < size && n < limit; i++)
		if (aoe_space_point(sp, i, &s) == 1)
			n++;
	return n;
}

/* The GEMM a Conv, Gemm or MatMul node computes, for the analytical model. */
static void
geometry(opat_search *s)
{
	const aoe_space *sp = s->sp;
	const aoe_tensor *a, *b, *y;

	if (sp->g == NULL || sp->n == NULL || sp->n->nin < 2 ||
	    (a = aoe_in(sp->g, sp->n, 0)) == NULL ||
	    (b = aoe_in(sp->g, sp->n, 1)) == NULL ||
	    (y = aoe_out(sp->g, sp->n, 0)) == NULL ||
	    a->ndim < 1 || b->ndim < 1 || y->ndim < 1)
		return;
	if (strcmp(sp->op_type, "Conv") == 0 && b->ndim >= 3 &&
	    y->ndim == b->ndim && a->ndim == b->ndim) {
		int64_t g = aoe_attr_int(sp->n, "group", 1);
		int nst = 0, nd = 0;
		const int64_t *st = aoe_attr_ints(sp->n, "strides", &nst);
		const int64_t *dl = aoe_attr_ints(sp->n, "dilations", &nd);
		int i, unit = 1;

		if (g < 1 || b->dims[0] % g != 0)
			return;
		s->geo = 2;
		s->gm = (double)(b->dims[0] / g);
		s->gk = (double)prod(b->dims, 1, b->ndim);
		s->gn = (double)prod(y->dims, 2, y->ndim);
		s->gbatch = (double)y->dims[0] * (double)g;
		for (i = 0; i < b->ndim - 2; i++)
			if ((st && i < nst && st[i] != 1) ||
			    (dl && i < nd && dl[i] != 1))
				unit = 0;
		s->wino_ok = unit && b->ndim == 4 && b->dims[2] == 3 &&
		    b->dims[3] == 3;
		s->const_a = b->kind == AOE_T_CONST;
		return;
	}
	if (strcmp(sp->op_type, "Gemm") == 0 && a->ndim == 2 &&
	    y->ndim == 2) {
		s->geo = 1;
		s->gm = (double)y->dims[0];
		s->gn = (double)y->dims[1];
		s->gk = (double)(aoe_attr_int(sp->n, "transA", 0) ?
		    a->dims[0] : a->dims[1]);
		s->gbatch = 1;
		s->const_b = b->kind == AOE_T_CONST;
		s->transb = aoe_attr_int(sp->n, "transB", 0) != 0;
		return;
	}
	if (strcmp(sp->op_type, "MatMul") == 0 && y->ndim >= 1) {
		s->geo = 1;
		s->gk = (double)a->dims[a->ndim - 1];
		s->gn = b->ndim >= 2 ? (double)y->dims[y->ndim - 1] : 1;
		if (b->ndim <= 2) {
			s->gm = (double)prod(y->dims, 0, y->ndim) / s->gn;
			s->gbatch = 1;
		} else {
			s->gm = y->ndim >= 2 ? (double)y->dims[y->ndim - 2] : 1;
			s->gbatch = (double)prod(y->dims, 0, y->ndim) /
			    (s->gm * s->gn);
		}
		s->const_b = b->kind == AOE_T_CONST && b->ndim <= 2;
	}
}

void
opat_search_init(opat_search *s, int strategy, const aoe_space *sp,
    uint64_t seed)
{
	memset(s, 0, sizeof(*s));
	s->strategy = strategy;
	s->sp = sp;
	s->seed = seed ^ 0x5851f42d4c957f2dULL;
	geometry(s);
}

void
opat_search_free(opat_search *s)
{
	int i;

	for (i = 0; i < s->n; i++)
		free(s->canon[i]);
	free(s->canon);
	free(s->pts);
	free(s->cost);
	free(s->prior);
	free(s->hidx);
	free(s->eidx);
	free(s->eprior);
	free(s->ejit);
	free(s->ekv);
	free(s->eused);
	free(s->w);
	memset(s, 0, sizeof(*s));
}

/* The index of canonical text c among the points, or -1. */
static int
find(const opat_search *s, const char *c)
{
	uint64_t h;
	int i;

	if (s->hcap == 0)
		return -1;
	for (h = opat_hash(0, c) & (uint64_t)(s->hcap - 1);
	    (i = s->hidx[h]) >= 0; h = (h + 1) & (uint64_t)(s->hcap - 1))
		if (strcmp(s->canon[i], c) == 0)
			return i;
	return -1;
}

static void
hash_insert(opat_search *s, int idx)
{
	uint64_t h = opat_hash(0, s->canon[idx]) & (uint64_t)(s->hcap - 1);

	while (s->hidx[h] >= 0)
		h = (h + 1) & (uint64_t)(s->hcap - 1);
	s->hidx[h] = idx;
}

static double analytic(const opat_search *s, const aoe_sched *p);

/* Remember a point; -1 if it was seen before, else its index. */
static int
remember(opat_search *s, const aoe_sched *p, double cost)
{
	char buf[1024];
	int i;

	opat_canon(s->sp, p, buf, sizeof(buf));
	if (find(s, buf) >= 0)
		return -1;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->pts = aoe_xrealloc(s->pts, s->cap * sizeof(*s->pts));
		s->cost = aoe_xrealloc(s->cost, s->cap * sizeof(*s->cost));
		s->prior = aoe_xrealloc(s->prior, s->cap * sizeof(double));
		s->canon = aoe_xrealloc(s->canon, s->cap * sizeof(char *));
	}
	if (2 * (s->n + 1) > s->hcap) {
		s->hcap = s->hcap ? s->hcap * 2 : 128;
		free(s->hidx);
		s->hidx = aoe_xcalloc((size_t)s->hcap, sizeof(int));
		for (i = 0; i < s->hcap; i++)
			s->hidx[i] = -1;
		for (i = 0; i < s->n; i++)
			hash_insert(s, i);
	}
	s->pts[s->n] = *p;
	s->cost[s->n] = cost;
	s->prior[s->n] = analytic(s, p);
	s->canon[s->n] = aoe_xstrdup(buf);
	hash_insert(s, s->n);
	return s->n++;
}

void
opat_search_add(opat_search *s, const aoe_sched *p, double us)
{
	int i;

	if (remember(s, p, us) < 0) {
		char buf[1024];
		opat_canon(s->sp, p, buf, sizeof(buf));
		if ((i = find(s, buf)) >= 0)
			s->cost[i] = us;
	}
}

void
opat_search_feed(opat_search *s, const aoe_sched *p, double us)
{
	char buf[1024];
	int i;

	opat_canon(s->sp, p, buf, sizeof(buf));
	/* No time (not in a replay set): no information; -2 never again. */
	if ((i = find(s, buf)) >= 0)
		s->cost[i] = isnan(us) ? -2 : us;
}

static int
next_exhaustive(opat_search *s, int max, aoe_sched *out)
{
	uint64_t size = aoe_space_size(s->sp);
	int k = 0;

	while (k < max && s->next_idx < size) {
		if (aoe_space_point(s->sp, s->next_idx++, &out[k]) == 1 &&
		    remember(s, &out[k], -1) >= 0)
			k++;
	}
	return k;
}

static int
next_random(opat_search *s, int max, aoe_sched *out)
{
	int k = 0, misses = 0;

	while (k < max && misses < 200) {
		if (aoe_space_sample(s->sp, &s->seed, &out[k]) < 0)
			break;
		if (remember(s, &out[k], -1) >= 0) {
			k++;
			misses = 0;
		} else
			misses++;
	}
	return k;
}

/* Ordinal distance between two schedules, each knob scaled to [0, 1]. */
static double
dist(const aoe_space *sp, const aoe_sched *a, const aoe_sched *b)
{
	double d = 0;
	int i;

	for (i = 0; i < sp->nknobs; i++) {
		const aoe_knob *k = &sp->knobs[i];
		int64_t c = aoe_knob_count(k);
		int64_t x, y;
		if (c < 2)
			continue;
		x = aoe_knob_index(k, aoe_sched_get(a, k->name, k->def));
		y = aoe_knob_index(k, aoe_sched_get(b, k->name, k->def));
		d += fabs((double)(x - y)) / (double)(c - 1);
	}
	return d;
}

static double
knob(const opat_search *s, const aoe_sched *p, const char *name)
{
	const aoe_knob *k = aoe_space_knob(s->sp, name);

	return k != NULL ? (double)aoe_sched_get(p, name, k->def) : 0;
}

/* x rounded up to blocks of b, each rounded up to the micro-kernel's r. */
static double
padded(double x, double b, double r)
{
	double full = floor(x / b), rest = x - full * b;

	return full * ceil(b / r) * r + ceil(rest / r) * r;
}

/* Caches the GEMM model assumes of a core: L1d 48 KiB, L2 1 MiB. */
#define L1_BYTES (48.0 * 1024)
#define L2_BYTES (1024.0 * 1024)

static double
cdiv(double a, double b)
{
	return ceil(a / b);
}

/*
 * Whether rows of B ld floats apart map to few cache sets (the test of
 * stride_ok() in k_gemm.c): a strip read in place then leaves L1 between
 * one row of A's micro-panels and the next.
 */
static int
stride_aliases(double ld)
{
	int64_t lines, g = 1;

	if ((int64_t)(ld * 4) % 64 != 0)
		return 0;
	lines = (int64_t)(ld * 4) / 64;
	while (g < 1024 && lines % (2 * g) == 0)
		g *= 2;
	return g > 16;
}

/*
 * Cycles per depth step of a micro-kernel tile of rows x nv vectors: its
 * FMAs and its loads (nv vectors of B, rows broadcasts of A) share two
 * issue slots a cycle, and an FMA's latency (4) needs 8 accumulators to
 * hide.  A B strip that does not stay in L1 waits on L2 every step.
 */
static double
tile_step(double rows, double nv, int l2wait)
{
	double c = fmax((rows * nv + rows + nv) / 2, 4);

	return l2wait ? fmax(c, l2wait == 2 ? 15 : 12) : c;
}

/*
 * The estimate of a GEMM's time in cycles, following aoe_sgemm() in
 * k_gemm.c on one thread: the blocks balanced as gemm_range() does; the
 * micro-kernel over full and edge tiles of each block, with a call's
 * overhead (C tile in and out); C read and written once a depth block,
 * from L2 when the m x nc panel fits half of it, else from further; the
 * B strip (kc x nr) in L1 and the A block (mc x kc) in L2; A packed once
 * per B panel; B packed once, or read in place (packb, or auto when A is
 * one block and the stride does not alias), then once per A block.
 */
static double
gemm_cycles(const opat_search *s, const aoe_sched *p)
{
	double m = s->gm, n = s->gn, k = s->gk;
	double mr = knob(s, p, "mr"), nr = knob(s, p, "nr");
	double mc = knob(s, p, "mc"), kc = knob(s, p, "kc");
	double nc = knob(s, p, "nc"), packb = knob(s, p, "packb");
	double nv, nb, NC, nkb, KC, mb, MC, left, tk = 0, ntiles = 0, cs = 0;
	double t, cpe;
	int wide, inplace, prepacked, l2wait;

	if (mr < 1 || nr < 1 || mc < 1 || kc < 1 || nc < 1)
		return 0;
	wide = nr == 32 || nr == 48 || nr == 64;
	nv = cdiv(nr, wide ? 16 : 8);
	nb = cdiv(n, nc);
	NC = cdiv(cdiv(n, nb), nr) * nr;
	nkb = cdiv(k, kc);
	KC = cdiv(k, nkb);
	mb = cdiv(m, mc);
	MC = cdiv(cdiv(m, mb), mr) * mr;
	prepacked = s->const_b && knob(s, p, "prepack") == 1;
	inplace = !prepacked && !s->transb && (packb == 0 ||
	    (packb < 0 && mb == 1 && !stride_aliases(n)));
	/*
	 * B's strip and A's micro-panel out of L1: B streams from L2; from
	 * further when read in place from an aliasing stride.
	 */
	l2wait = inplace && stride_aliases(n) ? 2 :
	    (mr + nr) * KC * 4 > L1_BYTES;
	for (left = m; left > 0; left -= fmin(MC, left)) {
		double rows = fmin(MC, left), full = floor(rows / mr);
		double rest = rows - full * mr;
		tk += full * tile_step(mr, nv, l2wait);
		ntiles += full;
		if (rest > 0) {
			tk += tile_step(rest, nv, l2wait);
			ntiles++;
		}
	}
	for (left = n; left > 0; left -= fmin(NC, left))
		cs += cdiv(fmin(NC, left), nr);
	t = tk * cs * k;
	t += ntiles * cs * nkb * (20 + mr * nv);
	cpe = m * fmin(NC, n) * 4 <= L2_BYTES / 2 ? 0.25 : 0.8;
	t += m * n * nkb * cpe;
	if (fmin(MC, m) * KC * 4 > L2_BYTES / 2)
		t *= 1.1;
	t += m * k * nb * 0.5;
	if (inplace)
		t += k * n * (mb - 1) * 0.15;
	else if (!prepacked)
		t += k * n * 0.6;
	return t * s->gbatch;
}

/*
 * The analytical estimate of log(time) of p, in cycles of a core issuing
 * two 16-float FMAs a cycle (the scale cancels: only ranks matter), or 0
 * for a space it does not know.  Gemm and MatMul: gemm_cycles(); what
 * follows is the estimate of a Conv.  Costs per element are rough, chosen
 * once from the kernels' structure: C is read and written once per
 * depth block kc; A is packed once per panel nc (never when constant
 * weights are prepacked), B once per block mc; an implicit im2col packs
 * B by gathering from the image, an explicit one writes the column
 * matrix first.  A block that overflows its cache (the micro-panels L1,
 * the A block half of L2, the B panel a share of L3) slows the product.
 */
static double
analytic(const opat_search *s, const aoe_sched *p)
{
	double m = s->gm, n = s->gn, k = s->gk, nb = s->gbatch;
	double mr, nr, mc, kc, nc, mp, np, kce, mce, nce, eff, t, pa, pb, lanes;
	int algo = 0, wide;

	if (s->geo == 0 || m < 1 || n < 1 || k < 1)
		return 0;
	if (s->geo == 1)
		return (t = gemm_cycles(s, p)) > 0 ? log(t) : 0;
	if (s->geo == 2)
		algo = (int)knob(s, p, "algo");
	if (algo == 4)		/* depthwise: no GEMM to model */
		return 0;
	if (algo == 5 && s->wino_ok) {
		/*
		 * F(w x w, 3 x 3): a GEMM per point of a (w+2)^2 tile over
		 * the tiles, and transforms of the input and the output.
		 */
		double w = knob(s, p, "wino_m"), tiles, e, tb, kb, c = k / 9;
		if (w < 2)
			w = 4;
		tiles = ceil(sqrt(n) / w) * ceil(sqrt(n) / w);
		e = (w + 2) * (w + 2);
		t = nb * e * m * tiles * c / 32 / 0.8;
		t += nb * tiles * e * (c + m) * (w + 2) / 8;
		/*
		 * Blocking: the transformed weights U are read once per
		 * block of tb tiles, the block's transformed input V once
		 * per block of kb output channels (0: the kernel's auto,
		 * which keeps V within L2 and M within L1).
		 */
		tb = knob(s, p, "wino_tb");
		kb = knob(s, p, "wino_kb");
		if (tb <= 0)
			tb = fmax(32, (1 << 18) / (e * c));
		if (kb <= 0)
			kb = fmax(6, (1 << 15) / (e * (tb + 8)));
		tb = fmin(tb, tiles);
		kb = fmin(kb, ceil(m / 6) * 6);
		t += nb * ceil(tiles / tb) * e * m * c * 0.1;
		t += nb * ceil(m / kb) * e * c * tiles * 0.1;
		return log(t);
	}
	mr = knob(s, p, "mr");
	nr = knob(s, p, "nr");
	mc = knob(s, p, "mc");
	kc = knob(s, p, "kc");
	nc = knob(s, p, "nc");
	if (mr < 1 || nr < 1 || mc < 1 || kc < 1 || nc < 1)
		return 0;
	wide = nr == 32 || nr == 48 || nr == 64;
	/*
	 * The micro-kernel's share of peak: FMAs per load (of B's vectors
	 * and A's broadcasts) over the 2.4 of the best shape; AVX2 shapes
	 * run half width.
	 */
	lanes = wide ? 16 : 8;
	eff = 0.9 + 0.1 * fmin(1, mr * nr / lanes / (mr + nr / lanes) / 2.4);
	if (!wide)
		eff *= 0.5;
	mce = mc < m ? mc : m;
	nce = nc < n ? nc : n;
	kce = kc < k ? kc : k;
	mp = padded(m, mc, mr);
	np = padded(n, nc, nr);
	t = nb * mp * np * k / 32 / eff;
	/* Cache fit of the micro-panels, the A block and the B panel. */
	if ((mr + nr) * kce * 4 > 40 * 1024)
		t *= 1.25;
	if (mce * kce * 4 > 512 * 1024)
		t *= 1.2;
	if (kce * nce * 4 > 4 * 1024 * 1024)
		t *= 1.15;
	/* C read and written once a depth block. */
	t += nb * mp * np * ceil(k / kce) * 0.15;
	/* Packing: A once per B panel, B once per A block. */
	pa = s->const_a && knob(s, p, "prepack") == 1 ? 0 : 0.5;
	pb = s->const_b && knob(s, p, "prepack") == 1 ? 0 : 0.5;
	if (s->geo == 2 && algo == 2)
		pb = 1.0;
	/* B read in place (k-major) is not packed at all. */
	if (s->geo == 1 && knob(s, p, "packb") == 0)
		pb = 0.02;
	t += nb * m * k * ceil(n / nce) * pa;
	t += nb * k * n * ceil(m / mce) * pb;
	if (s->geo == 2 && algo == 3)
		t += nb * k * n * 0.75;
	return log(t);
}

/*
 * The model's guess of log(time) at p: the analytical estimate plus the
 * residuals of the k nearest measured points, shrunk to their mean by a
 * pseudo-neighbour at distance 1.
 */
static double
predict(const opat_search *s, const aoe_sched *p, double prior)
{
	double bd[KNN], bv[KNN], w, sw, sv, mean = 0;
	int i, j, nb = 0, nm = 0;

	for (i = 0; i < s->n; i++) {
		double d, v;
		if (s->cost[i] < 0)
			continue;
		/* A failed point is a bad neighbourhood, not infinity. */
		v = isinf(s->cost[i]) ? 50.0 : log(s->cost[i] + 1e-3) -
		    s->prior[i];
		if (!isinf(s->cost[i])) {
			mean += v;
			nm++;
		}
		d = dist(s->sp, p, &s->pts[i]);
		if (nb < KNN) {
			bd[nb] = d;
			bv[nb++] = v;
			continue;
		}
		for (j = 0; j < KNN; j++)
			if (d < bd[j]) {
				bd[j] = d;
				bv[j] = v;
				break;
			}
	}
	if (nb == 0)
		return prior;
	mean = nm ? mean / nm : 0;
	sw = 1;
	sv = mean;
	for (j = 0; j < nb; j++) {
		w = 1.0 / (bd[j] * bd[j] + 0.01);
		sw += w;
		sv += w * bv[j];
	}
	return prior + sv / sw;
}

static int
by_cost(const void *a, const void *b, void *arg)
{
	const double *c = arg;
	double x = c[*(const int *)a], y = c[*(const int *)b];

	return x < y ? -1 : x > y;
}

/* Indices of the best measured points, best first; returns the count. */
static int
best_points(const opat_search *s, int *idx, int max)
{
	int i, n = 0;

	for (i = 0; i < s->n; i++)
		if (s->cost[i] >= 0 && !isinf(s->cost[i]))
			idx[n++] = i;
	qsort_r(idx, n, sizeof(int), by_cost, s->cost);
	return n < max ? n : max;
}

static void
crossover(const opat_search *s, const aoe_sched *a, const aoe_sched *b,
    aoe_sched *out)
{
	uint64_t seed = s->seed;
	int i;

	*out = *a;
	for (i = 0; i < s->sp->nknobs; i++) {
		const char *name = s->sp->knobs[i].name;
		if (aoe_splitmix64(&seed) & 1)
			aoe_sched_set(out, name, aoe_sched_get(b, name,
			    s->sp->knobs[i].def));
	}
	if (aoe_space_validate(s->sp, out, NULL, 0) < 0)
		*out = *a;
}

/* Add c to the pool unless it was seen or is in the pool already. */
static int
pool_add(opat_search *s, aoe_sched *pool, double *score, char **pcanon,
    int npool, const aoe_sched *c)
{
	char buf[1024];
	int i;

	opat_canon(s->sp, c, buf, sizeof(buf));
	if (find(s, buf) >= 0)
		return npool;
	for (i = 0; i < npool; i++)
		if (strcmp(pcanon[i], buf) == 0)
			return npool;
	pool[npool] = *c;
	pcanon[npool] = aoe_xstrdup(buf);
	score[npool] = predict(s, c, analytic(s, c));
	return npool + 1;
}

/*
 * A space of at most ENUM_SIZE points (legal or not), ENUM_LEGAL legal,
 * is enumerated whole and ranked by the model; RIDGE is the ridge
 * regression's penalty, in units of one measured point.
 */
#define ENUM_SIZE 1000000
#define ENUM_LEGAL 200000
#define RIDGE 1.0

/* The feature (weight index) of knob j's value in p, or -1. */
static int
feature(const opat_search *s, int j, const aoe_sched *p)
{
	const aoe_knob *k = &s->sp->knobs[j];
	int64_t v;

	if (s->foff[j] < 0)
		return -1;
	v = aoe_knob_index(k, aoe_sched_get(p, k->name, k->def));
	return v < 0 ? -1 : s->foff[j] + (int)v;
}

/*
 * Enumerate the legal points of a small space with their analytical
 * estimates, a tiny seeded jitter that breaks ties (points the estimate
 * cannot tell apart), and their knob values; mark those seen already.
 * s->ne is -1 when the space is too large.
 */
static void
enumerate(opat_search *s)
{
	const aoe_space *sp = s->sp;
	uint64_t size = aoe_space_size(sp), i;
	int nk = sp->nknobs, n = 0, cap = 0, j, f = 0;
	char buf[1024];
	aoe_sched p;

	s->ne = -1;
	if (size > ENUM_SIZE)
		return;
	for (j = 0; j < nk; j++) {
		int64_t c = aoe_knob_count(&sp->knobs[j]);
		s->foff[j] = c >= 2 && c <= 64 ? f : -1;
		if (s->foff[j] >= 0)
			f += (int)c;
	}
	s->nfeat = f;
	for (i = 0; i < size; i++) {
		if (aoe_space_point(sp, i, &p) != 1)
			continue;
		if (n == ENUM_LEGAL) {
			n = -1;
			break;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			s->eidx = aoe_xrealloc(s->eidx, cap * sizeof(uint64_t));
			s->eprior = aoe_xrealloc(s->eprior, cap *
			    sizeof(double));
			s->ejit = aoe_xrealloc(s->ejit, cap * sizeof(double));
			s->ekv = aoe_xrealloc(s->ekv, (size_t)cap * nk);
			s->eused = aoe_xrealloc(s->eused, cap);
		}
		s->eidx[n] = i;
		s->eprior[n] = analytic(s, &p);
		s->ejit[n] = (double)(aoe_splitmix64(&s->seed) >> 11) *
		    0x1p-53 * 1e-9;
		for (j = 0; j < nk; j++) {
			int ft = feature(s, j, &p);
			s->ekv[(size_t)n * nk + j] = ft < 0 ? 255 :
			    (unsigned char)(ft - s->foff[j]);
		}
		opat_canon(sp, &p, buf, sizeof(buf));
		s->eused[n] = find(s, buf) >= 0;
		n++;
	}
	if (n < 0) {
		free(s->eidx);
		free(s->eprior);
		free(s->ejit);
		free(s->ekv);
		free(s->eused);
		s->eidx = NULL;
		s->eprior = s->ejit = NULL;
		s->ekv = s->eused = NULL;
		return;
	}
	s->ne = n;
	s->w = aoe_xcalloc((size_t)f + 1, sizeof(double));
	s->fit_n = 0;
}

/* Solve A x = b for symmetric positive definite A (n x n), in place. */
static void
cholesky_solve(double *a, double *b, int n)
{
	int i, j, k;

	for (j = 0; j < n; j++) {
		double d = a[j * n + j];
		for (k = 0; k < j; k++)
			d -= a[j * n + k] * a[j * n + k];
		d = sqrt(d > 1e-12 ? d : 1e-12);
		a[j * n + j] = d;
		for (i = j + 1; i < n; i++) {
			double v = a[i * n + j];
			for (k = 0; k < j; k++)
				v -= a[i * n + k] * a[j * n + k];
			a[i * n + j] = v / d;
		}
	}
	for (i = 0; i < n; i++) {
		for (k = 0; k < i; k++)
			b[i] -= a[i * n + k] * b[k];
		b[i] /= a[i * n + i];
	}
	for (i = n - 1; i >= 0; i--) {
		for (k = i + 1; k < n; k++)
			b[i] -= a[k * n + i] * b[k];
		b[i] /= a[i * n + i];
	}
}

/*
 * The learned part of the model: a ridge regression of the residuals
 * (log time minus the analytical estimate) of the points measured so far
 * on one-hot features of their knob values, so that what one point
 * teaches (a micro-kernel shape, a block size that is slower here than
 * the estimate says) moves every point that shares it.  A failed point
 * counts as a residual one above the worst.  Refitted when a measurement
 * came in; w[nfeat] is the mean residual.
 */
static void
fit(opat_search *s)
{
	int F = s->nfeat, nk = s->sp->nknobs, i, j, a, b, nm = 0, nok = 0;
	int ft[AOE_SCHED_MAX];
	double *A, *r, mean = 0, rmax = -HUGE_VAL;

	for (i = 0; i < s->n; i++)
		if (s->cost[i] >= 0) {
			nm++;
			if (!isinf(s->cost[i])) {
				double v = log(s->cost[i] + 1e-3) - s->prior[i];
				rmax = fmax(rmax, v);
				mean += v;
				nok++;
			}
		}
	if (nm == s->fit_n)
		return;
	s->fit_n = nm;
	rmax = nok ? rmax + 1 : 1;
	mean = (mean + (nm - nok) * rmax) / nm;
	A = aoe_xcalloc((size_t)F * F + 1, sizeof(double));
	r = aoe_xcalloc((size_t)F + 1, sizeof(double));
	for (a = 0; a < F; a++)
		A[a * F + a] = RIDGE;
	for (i = 0; i < s->n; i++) {
		double v;
		if (s->cost[i] < 0)
			continue;
		v = (isinf(s->cost[i]) ? rmax : log(s->cost[i] + 1e-3) -
		    s->prior[i]) - mean;
		for (j = 0; j < nk; j++)
			ft[j] = feature(s, j, &s->pts[i]);
		for (a = 0; a < nk; a++) {
			if (ft[a] < 0)
				continue;
			r[ft[a]] += v;
			for (b = 0; b < nk; b++)
				if (ft[b] >= 0)
					A[ft[a] * F + ft[b]] += 1;
		}
	}
	if (F > 0)
		cholesky_solve(A, r, F);
	memcpy(s->w, r, (size_t)F * sizeof(double));
	s->w[F] = mean;
	free(A);
	free(r);
}

/* The model's log time of enumerated point e. */
static double
escore(const opat_search *s, int e)
{
	const unsigned char *kv = s->ekv + (size_t)e * s->sp->nknobs;
	double v = s->eprior[e] + s->ejit[e] + s->w[s->nfeat];
	int j;

	for (j = 0; j < s->sp->nknobs; j++)
		if (kv[j] != 255)
			v += s->w[s->foff[j] + kv[j]];
	return v;
}

/* The most promising points of an enumerated space not proposed yet. */
static int
next_enum(opat_search *s, int max, aoe_sched *out)
{
	int pick[64], np, i, j, e, k = 0;
	double ps[64], v;
	aoe_sched p;

	fit(s);
	if (max > 64)
		max = 64;
	while (k < max) {
		np = 0;
		for (e = 0; e < s->ne; e++) {
			if (s->eused[e])
				continue;
			v = escore(s, e);
			if (np == max - k && v >= ps[np - 1])
				continue;
			if (np < max - k)
				np++;
			for (i = np - 1; i > 0 && ps[i - 1] > v; i--) {
				ps[i] = ps[i - 1];
				pick[i] = pick[i - 1];
			}
			ps[i] = v;
			pick[i] = e;
		}
		if (np == 0)
			break;
		for (j = 0; j < np; j++) {
			s->eused[pick[j]] = 1;
			if (aoe_space_point(s->sp, s->eidx[pick[j]], &p) == 1 &&
			    remember(s, &p, -1) >= 0)
				out[k++] = p;
		}
	}
	return k;
}

static int
next_evolution(opat_search *s, int max, aoe_sched *out)
{
	aoe_sched *pool, c;
	double *score;
	char **pcanon;
	int *order, par[PARENTS], np, npool = 0, tries, i, k = 0;

	if (max < 1)
		return 0;
	if (s->ne == 0)
		enumerate(s);
	if (s->ne > 0)
		return next_enum(s, max, out);
	/* Without a model of the space, seed the population at random. */
	if (s->geo == 0) {
		int nok = 0;
		for (i = 0; i < s->n; i++)
			if (s->cost[i] >= 0 && !isinf(s->cost[i]))
				nok++;
		if (nok < 4)
			return next_random(s, max, out);
	}
	order = aoe_xcalloc(s->n + 1, sizeof(int));
	np = best_points(s, order, PARENTS);
	memcpy(par, order, np * sizeof(int));
	free(order);
	pool = aoe_xcalloc(POOL + FRESH, sizeof(*pool));
	score = aoe_xcalloc(POOL + FRESH, sizeof(*score));
	pcanon = aoe_xcalloc(POOL + FRESH, sizeof(char *));
	/* Children of the best points. */
	for (tries = 0; np > 0 && npool < POOL && tries < POOL * 8; tries++) {
		/* Prefer the best parents: the smaller of two draws. */
		int a = (int)(aoe_splitmix64(&s->seed) % np);
		int b = (int)(aoe_splitmix64(&s->seed) % np);
		const aoe_sched *pa = &s->pts[par[a < b ? a : b]];
		int m, nm = 1 + (int)(aoe_splitmix64(&s->seed) % 2);

		if (np > 1 && aoe_splitmix64(&s->seed) % 3 == 0) {
			s->seed += 7;
			crossover(s, pa, &s->pts[par[(a + 1 + b) % np]], &c);
			nm--;
		} else
			c = *pa;
		for (m = 0; m < nm; m++) {
			aoe_sched t;
			if (aoe_space_mutate(s->sp, &s->seed, &c, &t) < 0)
				break;
			c = t;
		}
		npool = pool_add(s, pool, score, pcanon, npool, &c);
	}
	/* Fresh points, so that the model can send the search elsewhere. */
	for (tries = 0; npool < POOL + FRESH && tries < FRESH * 2; tries++) {
		if (aoe_space_sample(s->sp, &s->seed, &c) < 0)
			break;
		npool = pool_add(s, pool, score, pcanon, npool, &c);
	}
	order = aoe_xcalloc(npool + 1, sizeof(int));
	for (i = 0; i < npool; i++)
		order[i] = i;
	qsort_r(order, npool, sizeof(int), by_cost, score);
	/* The most promising. */
	for (i = 0; i < npool && k < max; i++)
		if (remember(s, &pool[order[i]], -1) >= 0)
			out[k++] = pool[order[i]];
	if (k < max)
		k += next_random(s, max - k, out + k);
	for (i = 0; i < npool; i++)
		free(pcanon[i]);
	free(pcanon);
	free(order);
	free(pool);
	free(score);
	return k;
}

int
opat_search_next(opat_search *s, int max, aoe_sched *out)
{
	int k;

	if (s->done || max < 1)
		return 0;
	switch (s->strategy) {
	case OPAT_EXHAUSTIVE:
		k = next_exhaustive(s, max, out);
		break;
	case OPAT_EVOLUTION:
		k = next_evolution(s, max, out);
		break;
	default:
		k = next_random(s, max, out);
		break;
	}
	if (k == 0)
		s->done = 1;
	return k;
}
