/*
 * space.c - the search spaces of the kernels: what the tuner enumerates,
 * samples, mutates and validates.
 *
 * Each kernel family describes its space beside its code (aoe_space_gemm()
 * in k_gemm.c and so on): the knobs the kernel reads, their legal values
 * for this node's shapes, a check of the constraints between knobs, and
 * the default heuristic schedule (the op's default_sched).  The families
 * register their spaces in the op table (registry.c, aoe_space_for());
 * this file does what is common to every space and names no family:
 * sizes, validation, indexing, sampling, mutation and printing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aoe_kernels.h"
#include "kernel.h"

/* Tries of a mutation before it gives up. */
#define SAMPLE_TRIES 20000

static aoe_knob *
new_knob(aoe_space *sp, const char *name, const char *doc)
{
	aoe_knob *k;

	if (sp->nknobs >= AOE_SCHED_MAX || strlen(name) >= AOE_KNOB_NAME) {
		aoe_err(AOE_EINTERNAL, "space of %s: too many knobs or a long "
		    "name ('%s')", sp->op_type, name);
		return NULL;
	}
	k = &sp->knobs[sp->nknobs++];
	memset(k, 0, sizeof(*k));
	snprintf(k->name, sizeof(k->name), "%s", name);
	k->doc = doc;
	return k;
}

static int
cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

int
aoe_space_add(aoe_space *sp, const char *name, int nvals,
    const int64_t *vals, const char *doc)
{
	aoe_knob *k;
	int i, j;

	if (nvals < 1 || nvals > AOE_KNOB_MAXVALS)
		return aoe_err(AOE_EINTERNAL, "space of %s: knob '%s' has %d "
		    "values", sp->op_type, name, nvals);
	if ((k = new_knob(sp, name, doc)) == NULL)
		return -AOE_EINTERNAL;
	memcpy(k->vals, vals, sizeof(int64_t) * nvals);
	qsort(k->vals, nvals, sizeof(int64_t), cmp64);
	for (i = j = 0; i < nvals; i++)
		if (j == 0 || k->vals[j - 1] != k->vals[i])
			k->vals[j++] = k->vals[i];
	k->nvals = j;
	k->def = k->vals[0];
	return 0;
}

int
aoe_space_add_range(aoe_space *sp, const char *name, int64_t lo,
    int64_t hi, int64_t step, const char *doc)
{
	aoe_knob *k;

	if (step < 1 || hi < lo)
		return aoe_err(AOE_EINTERNAL, "space of %s: knob '%s' has an "
		    "empty range", sp->op_type, name);
	if ((k = new_knob(sp, name, doc)) == NULL)
		return -AOE_EINTERNAL;
	k->lo = lo;
	k->hi = lo + (hi - lo) / step * step;
	k->step = step;
	k->def = lo;
	return 0;
}

int64_t
aoe_knob_count(const aoe_knob *k)
{
	return k->nvals > 0 ? k->nvals : (k->hi - k->lo) / k->step + 1;
}

int64_t
aoe_knob_value(const aoe_knob *k, int64_t i)
{
	return k->nvals > 0 ? k->vals[i] : k->lo + i * k->step;
}

int64_t
aoe_knob_index(const aoe_knob *k, int64_t v)
{
	int i;

	if (k->nvals == 0)
		return v >= k->lo && v <= k->hi && (v - k->lo) % k->step == 0 ?
		    (v - k->lo) / k->step : -1;
	for (i = 0; i < k->nvals; i++)
		if (k->vals[i] == v)
			return i;
	return -1;
}

aoe_knob *
aoe_space_knob(const aoe_space *sp, const char *name)
{
	int i;

	for (i = 0; i < sp->nknobs; i++)
		if (strcmp(sp->knobs[i].name, name) == 0)
			return (aoe_knob *)&sp->knobs[i];
	return NULL;
}

uint64_t
aoe_space_size(const aoe_space *sp)
{
	uint64_t size = 1, c;
	int i;

	for (i = 0; i < sp->nknobs; i++) {
		c = (uint64_t)aoe_knob_count(&sp->knobs[i]);
		if (c != 0 && size > UINT64_MAX / c)
			return UINT64_MAX;
		size *= c;
	}
	return size;
}

int
aoe_space_validate(const aoe_space *sp, const aoe_sched *s, char *why,
    size_t len)
{
	const aoe_knob *k;
	aoe_sched full;
	char dummy[8];
	int i, inorder;

	if (why == NULL || len == 0) {
		why = dummy;
		len = sizeof(dummy);
	}
	if (s->n < 0 || s->n > AOE_SCHED_MAX) {
		snprintf(why, len, "a schedule of %d knobs", s->n);
		return -AOE_EDATA;
	}
	/*
	 * A schedule that holds the space's knobs in the space's order (as
	 * points, samples and the default do) is matched by position; the
	 * search validates millions of them.
	 */
	inorder = s->n == sp->nknobs;
	for (i = 0; i < s->n; i++) {
		if (inorder && strcmp(sp->knobs[i].name, s->k[i].name) == 0)
			k = &sp->knobs[i];
		else {
			inorder = 0;
			k = aoe_space_knob(sp, s->k[i].name);
		}
		if (k == NULL) {
			snprintf(why, len, "%s has no knob '%s'", sp->op_type,
			    s->k[i].name);
			return -AOE_EDATA;
		}
		if (aoe_knob_index(k, s->k[i].v) < 0) {
			if (sp->value_why == NULL ||
			    !sp->value_why(k->name, s->k[i].v, why, len))
				snprintf(why, len, "%s=%lld is not a legal "
				    "value", k->name, (long long)s->k[i].v);
			return -AOE_EDATA;
		}
	}
	/* The constraints see every knob, absent ones at their default. */
	full = *s;
	for (i = 0; !inorder && i < sp->nknobs; i++)
		if (aoe_sched_get(s, sp->knobs[i].name, INT64_MIN) ==
		    INT64_MIN)
			aoe_sched_set(&full, sp->knobs[i].name,
			    sp->knobs[i].def);
	if (sp->check && sp->check(sp, &full, why, len) < 0)
		return -AOE_EDATA;
	if (why != dummy)
		snprintf(why, len, "legal");
	return 0;
}

/*
 * Append knob k to s, which does not hold it yet: the space's knobs in
 * order, which aoe_space_validate matches by position.
 */
static void
put_knob(aoe_sched *s, const aoe_knob *k, int64_t v)
{
	/* aoe_space_add checked the name's length. */
	memcpy(s->k[s->n].name, k->name, strlen(k->name) + 1);
	s->k[s->n++].v = v;
}

int
aoe_space_point(const aoe_space *sp, uint64_t idx, aoe_sched *s)
{
	uint64_t c;
	int i;

	if (idx >= aoe_space_size(sp))
		return -AOE_EDATA;
	memset(s, 0, sizeof(*s));
	for (i = 0; i < sp->nknobs; i++) {
		c = (uint64_t)aoe_knob_count(&sp->knobs[i]);
		put_knob(s, &sp->knobs[i], aoe_knob_value(&sp->knobs[i],
		    (int64_t)(idx % c)));
		idx /= c;
	}
	return aoe_space_validate(sp, s, NULL, 0) == 0;
}

/* A uniformly random point of the product of the knobs, legal or not. */
static void
draw_point(const aoe_space *sp, uint64_t *seed, aoe_sched *s)
{
	int i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < sp->nknobs; i++) {
		const aoe_knob *k = &sp->knobs[i];
		put_knob(s, k, aoe_knob_value(k, (int64_t)(aoe_splitmix64(seed) %
		    (uint64_t)aoe_knob_count(k))));
	}
}

/*
 * A uniformly random legal point.  Three ways, each uniform over the
 * legal points (a repair step that resets knobs to their defaults is not:
 * it returned the default 113 times in 200):
 *
 * 1. rejection: uniform points of the product until one is legal (exact);
 * 2. when the legal points are too rare for that and the space is small,
 *    enumerate them and pick one (exact);
 * 3. else a random walk over the legal points from the default: change
 *    one knob to a uniformly drawn value, move when the result is legal.
 *    The proposal is symmetric and the walk stays put on an illegal one,
 *    so its stationary distribution is uniform over the legal points
 *    connected to the default (Metropolis with a flat target); WALK_STEPS
 *    moves per knob make a draw close to it.
 */
#define REJECT_TRIES 200
#define ENUM_MAX 16384
#define WALK_STEPS 30
int
aoe_space_sample(const aoe_space *sp, uint64_t *seed, aoe_sched *s)
{
	uint64_t size = aoe_space_size(sp), idx, nlegal, pick;
	aoe_sched t;
	int64_t v;
	int i, step;

	for (i = 0; i < REJECT_TRIES; i++) {
		draw_point(sp, seed, s);
		if (aoe_space_validate(sp, s, NULL, 0) == 0)
			return 0;
	}
	if (size <= ENUM_MAX) {
		/* One pass: the legal points' indices, then the pick-th. */
		uint32_t *legal = aoe_xmalloc((size_t)(size ? size : 1) *
		    sizeof(*legal));
		for (nlegal = 0, idx = 0; idx < size; idx++)
			if (aoe_space_point(sp, idx, &t) == 1)
				legal[nlegal++] = (uint32_t)idx;
		if (nlegal == 0) {
			free(legal);
			return aoe_err(AOE_EDATA, "%s '%s': the space has no "
			    "legal point", sp->op_type, sp->n ?
			    sp->n->name : "");
		}
		pick = aoe_splitmix64(seed) % nlegal;
		idx = legal[pick];
		free(legal);
		if (aoe_space_point(sp, idx, s) == 1)
			return 0;
	}
	/* The walk, from the default (every knob set). */
	memset(s, 0, sizeof(*s));
	for (i = 0; i < sp->nknobs; i++)
		aoe_sched_set(s, sp->knobs[i].name, sp->knobs[i].def);
	if (aoe_space_validate(sp, s, NULL, 0) < 0)
		return aoe_err(AOE_EDATA, "%s '%s': the default is not a "
		    "legal point", sp->op_type, sp->n ? sp->n->name : "");
	for (step = 0; step < WALK_STEPS * sp->nknobs; step++) {
		const aoe_knob *k = &sp->knobs[aoe_splitmix64(seed) %
		    (uint64_t)sp->nknobs];
		v = aoe_knob_value(k, (int64_t)(aoe_splitmix64(seed) %
		    (uint64_t)aoe_knob_count(k)));
		t = *s;
		aoe_sched_set(&t, k->name, v);
		if (aoe_space_validate(sp, &t, NULL, 0) == 0)
			*s = t;
	}
	return 0;
}

int
aoe_space_mutate(const aoe_space *sp, uint64_t *seed, const aoe_sched *from,
    aoe_sched *to)
{
	const aoe_knob *k;
	int64_t c, v, cur;
	int t, i;

	for (t = 0; t < SAMPLE_TRIES && sp->nknobs > 0; t++) {
		*to = *from;
		/* Knobs with one value cannot change. */
		k = &sp->knobs[aoe_splitmix64(seed) % (uint64_t)sp->nknobs];
		if ((c = aoe_knob_count(k)) < 2)
			continue;
		cur = aoe_sched_get(from, k->name, k->def);
		v = aoe_knob_value(k,
		    (int64_t)(aoe_splitmix64(seed) % (uint64_t)c));
		if (v == cur)
			continue;
		if (aoe_sched_set(to, k->name, v) < 0)
			continue;
		if (aoe_space_validate(sp, to, NULL, 0) == 0)
			return 0;
	}
	/* Nothing changes legally: say so rather than loop. */
	for (i = 0; i < sp->nknobs; i++)
		if (aoe_knob_count(&sp->knobs[i]) > 1)
			break;
	return aoe_err(AOE_EDATA, "%s '%s': %s", sp->op_type,
	    sp->n ? sp->n->name : "", i == sp->nknobs ? "no knob has a "
	    "second value" : "no legal mutation found");
}

static void
json_str(FILE *fp, const char *s)
{
	putc('"', fp);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(fp, "\\%c", c);
		else if (c < 0x20)
			fprintf(fp, "\\u%04x", c);
		else
			putc(c, fp);
	}
	putc('"', fp);
}

int
aoe_space_print_json(const aoe_space *sp, const char *name, FILE *fp)
{
	const aoe_knob *k;
	uint64_t size = aoe_space_size(sp);
	int i, j;

	fputs("{\"op_type\":", fp);
	json_str(fp, sp->op_type);
	fputs(",\"node\":", fp);
	json_str(fp, name ? name : sp->n ? sp->n->name : "");
	fputs(",\"family\":", fp);
	json_str(fp, sp->family);
	fprintf(fp, ",\"size\":%llu", (unsigned long long)size);
	fputs(",\"knobs\":[", fp);
	for (i = 0; i < sp->nknobs; i++) {
		k = &sp->knobs[i];
		fputs(i ? ",{\"name\":" : "{\"name\":", fp);
		json_str(fp, k->name);
		if (k->nvals > 0) {
			fputs(",\"values\":[", fp);
			for (j = 0; j < k->nvals; j++)
				fprintf(fp, "%s%lld", j ? "," : "",
				    (long long)k->vals[j]);
			putc(']', fp);
		} else
			fprintf(fp, ",\"range\":{\"lo\":%lld,\"hi\":%lld,"
			    "\"step\":%lld}", (long long)k->lo,
			    (long long)k->hi, (long long)k->step);
		fprintf(fp, ",\"default\":%lld,\"doc\":", (long long)k->def);
		json_str(fp, k->doc);
		putc('}', fp);
	}
	fputs("],\"constraints\":", fp);
	json_str(fp, sp->constraints);
	fputs(",\"default\":{", fp);
	for (i = 0; i < sp->nknobs; i++) {
		fprintf(fp, "%s", i ? "," : "");
		json_str(fp, sp->knobs[i].name);
		fprintf(fp, ":%lld", (long long)sp->knobs[i].def);
	}
	fputs("}}\n", fp);
	return ferror(fp) ? aoe_err(AOE_EIO, "write error") : 0;
}

int
aoe_space_add_pow2(aoe_space *sp, const char *name, int zero, int64_t lo,
    int64_t hi, int64_t def, int live, const char *doc)
{
	int64_t v[AOE_KNOB_MAXVALS], p;
	int c = 0;

	if (live) {
		if (zero)
			v[c++] = 0;
		for (p = lo; p <= hi && c < AOE_KNOB_MAXVALS - 1; p *= 2)
			v[c++] = p;
	}
	v[c++] = def;
	if (aoe_space_add(sp, name, c, v, doc) < 0)
		return -AOE_EINTERNAL;
	sp->knobs[sp->nknobs - 1].def = def;
	return 0;
}
