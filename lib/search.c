/*
 * search.c - the search strategies of aoe-opat over a kernel's space:
 * exhaustive enumeration, uniform random sampling without repeats, and an
 * evolutionary search guided by a learned cost model.
 *
 * The cost model is a k-nearest-neighbour regression of log time over
 * the points measured so far, with an ordinal distance between knob
 * values (values are sorted, so neighbouring block sizes are close).
 * Each generation breeds many children of the best points (mutation and
 * crossover), ranks them with the model and measures only the most
 * promising, with one random point a batch for exploration.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "opat.h"

#define POOL 96		/* children bred per generation */
#define PARENTS 4
#define KNN 3

static uint64_t
rnd(uint64_t *seed)
{
	uint64_t z = (*seed += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t
opat_hash(uint64_t h, const char *s)
{
	if (h == 0)
		h = 0xcbf29ce484222325ULL;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
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

int
opat_sched_from_json(const cJSON *o, aoe_sched *s)
{
	const cJSON *it;

	memset(s, 0, sizeof(*s));
	if (!cJSON_IsObject(o))
		return -AOE_EDATA;
	cJSON_ArrayForEach(it, o) {
		if (!cJSON_IsNumber(it) || it->valuedouble !=
		    (double)(int64_t)it->valuedouble ||
		    strlen(it->string) >= AOE_KNOB_NAME)
			return -AOE_EDATA;
		if (aoe_sched_set(s, it->string, (int64_t)it->valuedouble) < 0)
			return -AOE_EDATA;
	}
	return 0;
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

void
opat_search_init(opat_search *s, int strategy, const aoe_space *sp,
    uint64_t seed)
{
	memset(s, 0, sizeof(*s));
	s->strategy = strategy;
	s->sp = sp;
	s->seed = seed ^ 0x5851f42d4c957f2dULL;
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
	memset(s, 0, sizeof(*s));
}

static int
find(const opat_search *s, const char *c)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->canon[i], c) == 0)
			return i;
	return -1;
}

/* Remember a point; -1 if it was seen before, else its index. */
static int
remember(opat_search *s, const aoe_sched *p, double cost)
{
	char buf[1024];

	opat_canon(s->sp, p, buf, sizeof(buf));
	if (find(s, buf) >= 0)
		return -1;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->pts = aoe_xrealloc(s->pts, s->cap * sizeof(*s->pts));
		s->cost = aoe_xrealloc(s->cost, s->cap * sizeof(*s->cost));
		s->canon = aoe_xrealloc(s->canon, s->cap * sizeof(char *));
	}
	s->pts[s->n] = *p;
	s->cost[s->n] = cost;
	s->canon[s->n] = aoe_xstrdup(buf);
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
	if ((i = find(s, buf)) >= 0)
		s->cost[i] = us;
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

/* The model's guess of log(time) at p, from the k nearest measured. */
static double
predict(const opat_search *s, const aoe_sched *p)
{
	double bd[KNN], bv[KNN], w, sw = 0, sv = 0;
	int i, j, nb = 0;

	for (i = 0; i < s->n; i++) {
		double d, v;
		if (s->cost[i] < 0)
			continue;
		d = dist(s->sp, p, &s->pts[i]);
		/* A failed point is a bad neighbourhood, not infinity. */
		v = isinf(s->cost[i]) ? 50.0 : log(s->cost[i] + 1e-3);
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
		return 0;
	for (j = 0; j < nb; j++) {
		w = 1.0 / (bd[j] * bd[j] + 0.01);
		sw += w;
		sv += w * bv[j];
	}
	return sv / sw;
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
		if (rnd(&seed) & 1)
			aoe_sched_set(out, name, aoe_sched_get(b, name,
			    s->sp->knobs[i].def));
	}
	if (aoe_space_validate(s->sp, out, NULL, 0) < 0)
		*out = *a;
}

static int
next_evolution(opat_search *s, int max, aoe_sched *out)
{
	aoe_sched *pool, c;
	double *score;
	int *order, par[PARENTS], np, npool = 0, tries, i, k = 0;
	char buf[1024];
	int nok = 0;

	for (i = 0; i < s->n; i++)
		if (s->cost[i] >= 0 && !isinf(s->cost[i]))
			nok++;
	/* Seed the population at random until the model has something. */
	if (nok < 4 || max < 1)
		return next_random(s, max, out);
	order = aoe_xcalloc(s->n + 1, sizeof(int));
	np = best_points(s, order, PARENTS);
	memcpy(par, order, np * sizeof(int));
	free(order);
	pool = aoe_xcalloc(POOL, sizeof(*pool));
	score = aoe_xcalloc(POOL, sizeof(*score));
	for (tries = 0; npool < POOL && tries < POOL * 8; tries++) {
		/* Prefer the best parents: the smaller of two draws. */
		int a = (int)(rnd(&s->seed) % np), b = (int)(rnd(&s->seed) % np);
		const aoe_sched *pa = &s->pts[par[a < b ? a : b]];
		int m, nm = 1 + (int)(rnd(&s->seed) % 2);

		if (np > 1 && rnd(&s->seed) % 3 == 0) {
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
		opat_canon(s->sp, &c, buf, sizeof(buf));
		if (find(s, buf) >= 0)
			continue;
		for (i = 0; i < npool; i++) {
			char b2[1024];
			opat_canon(s->sp, &pool[i], b2, sizeof(b2));
			if (strcmp(b2, buf) == 0)
				break;
		}
		if (i < npool)
			continue;
		pool[npool] = c;
		score[npool++] = predict(s, &c);
	}
	order = aoe_xcalloc(npool + 1, sizeof(int));
	for (i = 0; i < npool; i++)
		order[i] = i;
	qsort_r(order, npool, sizeof(int), by_cost, score);
	/* The most promising, and one random point a batch to explore. */
	for (i = 0; i < npool && k < max - (max >= 4); i++)
		if (remember(s, &pool[order[i]], -1) >= 0)
			out[k++] = pool[order[i]];
	if (k < max)
		k += next_random(s, max - k, out + k);
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
