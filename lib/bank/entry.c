/*
 * entry.c - bank entries (aoe-bank(5)) and the reader that checks a bank
 * file line by line: each entry, the order of the keys, the soc_version.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bank.h"

int
bank_is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *
bank_jstr(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

int
aoe_bank_parse_key(const char *s, uint64_t *k)
{
	char *end;
	size_t l = strlen(s);

	if (l == 0 || l > 20 || strspn(s, "0123456789") != l ||
	    (l > 1 && s[0] == '0'))
		return -1;
	errno = 0;
	*k = strtoull(s, &end, 10);
	return errno ? -1 : 0;
}

/*
 * The kernel generation o was measured under (AOE_KERNELS_GEN): its
 * "kernels", def when it has none; -1 (with why, when not NULL) when that
 * is not a whole number from 1 to 1000000.
 */
int
bank_kernels_gen(const cJSON *o, int64_t def, int64_t *gen, char *why,
    size_t wl)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, "kernels");

	*gen = def;
	if (x == NULL)
		return 0;
	if (!cJSON_IsNumber(x) || !(x->valuedouble >= 1) ||
	    x->valuedouble > 1e6 || x->valuedouble != floor(x->valuedouble)) {
		if (why != NULL)
			snprintf(why, wl, "\"kernels\" is not a whole number "
			    "from 1 to 1000000");
		return -1;
	}
	*gen = (int64_t)x->valuedouble;
	return 0;
}

int
bank_num_field(const cJSON *o, const char *name, double *v, char *why,
    size_t wl)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, name);

	if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) ||
	    x->valuedouble < 0) {
		snprintf(why, wl, "\"%s\" is %s", name, x ? "not a number "
		    ">= 0" : "missing");
		return -1;
	}
	*v = x->valuedouble;
	return 0;
}

/* Parse and check one entry (line is kept); 0, or -1 with why. */
int
bank_parse_entry(char *line, ent *e, char *why, size_t wl)
{
	const char *ks, *end;
	aoe_sched s;
	uint64_t h;

	memset(e, 0, sizeof(*e));
	e->line = line;
	e->j = cJSON_ParseWithOpts(line, &end, 1);
	if (e->j == NULL || !cJSON_IsObject(e->j)) {
		snprintf(why, wl, "malformed JSON (not one object on the "
		    "line)");
		goto bad;
	}
	if ((ks = bank_jstr(e->j, "key")) == NULL || aoe_bank_parse_key(ks, &e->key) < 0) {
		snprintf(why, wl, "\"key\" is missing or not a decimal "
		    "64-bit number in a string");
		goto bad;
	}
	e->op_type = bank_jstr(e->j, "op_type");
	if (e->op_type == NULL)
		e->op_type = bank_jstr(e->j, "subgraph");
	if (e->op_type == NULL) {
		snprintf(why, wl, "\"op_type\" is missing");
		goto bad;
	}
	if ((e->sig = bank_jstr(e->j, "signature")) == NULL) {
		snprintf(why, wl, "\"signature\" is missing");
		goto bad;
	}
	if ((h = aoe_op_key(e->sig)) != e->key) {
		snprintf(why, wl, "key %s does not match its signature "
		    "(whose key is %llu)", ks, (unsigned long long)h);
		goto bad;
	}
	if (aoe_sched_from_json(cJSON_GetObjectItemCaseSensitive(e->j,
	    "schedule"), &s, why, wl) < 0)
		goto bad;
	if (bank_num_field(e->j, "time_us", &e->time_us, why, wl) < 0 ||
	    bank_num_field(e->j, "baseline_us", &e->base_us, why, wl) < 0)
		goto bad;
	if ((e->soc = bank_jstr(e->j, "soc_version")) == NULL ||
	    !aoe_soc_valid(e->soc)) {
		snprintf(why, wl, "\"soc_version\" is missing or not a safe "
		    "name");
		goto bad;
	}
	if (bank_kernels_gen(e->j, 1, &e->kgen, why, wl) < 0)
		goto bad;
	if ((e->tver = bank_jstr(e->j, "tool_version")) == NULL ||
	    (e->when = bank_jstr(e->j, "measured_at")) == NULL ||
	    bank_jstr(e->j, "method") == NULL) {
		snprintf(why, wl, "\"tool_version\", \"measured_at\" or "
		    "\"method\" is missing");
		goto bad;
	}
	return 0;
bad:
	cJSON_Delete(e->j);
	e->j = NULL;
	return -1;
}


void
bank_entry_view(const ent *e, aoe_bank_entry *v)
{
	v->key = e->key;
	v->op_type = e->op_type;
	v->signature = e->sig;
	v->soc_version = e->soc;
	v->tool_version = e->tver;
	v->measured_at = e->when;
	v->time_us = e->time_us;
	v->baseline_us = e->base_us;
	v->line = e->line;
}

int
bank_rdr_open(rdr *r, const char *path, char *soc, size_t soclen,
    int optional)
{
	memset(r, 0, sizeof(*r));
	r->path = path;
	r->soc = soc;
	r->soclen = soclen;
	r->fixed = soc[0] != '\0';
	if (strcmp(path, "-") == 0) {
		r->fp = stdin;
		r->path = "<stdin>";
		return 0;
	}
	if ((r->fp = fopen(path, "r")) == NULL) {
		if (optional && errno == ENOENT)
			return 0;
		return aoe_err(AOE_EIO, "cannot open '%s': %s", path,
		    strerror(errno));
	}
	if (bank_is_dir(path)) {
		fclose(r->fp);
		r->fp = NULL;
		return aoe_err(AOE_EIO, "cannot read '%s': Is a directory",
		    path);
	}
	return 0;
}

void
bank_rdr_close(rdr *r)
{
	cJSON_Delete(r->e.j);
	r->e.j = NULL;
	if (r->fp && r->fp != stdin)
		fclose(r->fp);
	r->fp = NULL;
	free(r->buf);
	r->buf = NULL;
}

/* 1: r->e is the next entry; 0: end of file; < 0: a bad line. */
int
bank_rdr_next(rdr *r)
{
	char why[1024];
	ssize_t n;

	cJSON_Delete(r->e.j);
	r->e.j = NULL;
	r->valid = 0;
	if (r->fp == NULL)
		return 0;
	errno = 0;
	if ((n = getline(&r->buf, &r->cap, r->fp)) < 0) {
		if (ferror(r->fp))
			return aoe_err(AOE_EIO, "cannot read '%s': %s",
			    r->path, strerror(errno ? errno : EIO));
		return 0;
	}
	r->lineno++;
	if (n == 0 || r->buf[n - 1] != '\n')
		return aoe_err(AOE_EDATA, "%s:%ld: truncated line (no "
		    "newline at the end of the file)", r->path, r->lineno);
	r->buf[n - 1] = '\0';
	if (strlen(r->buf) != (size_t)n - 1)
		return aoe_err(AOE_EDATA, "%s:%ld: NUL byte in the line",
		    r->path, r->lineno);
	if (bank_parse_entry(r->buf, &r->e, why, sizeof(why)) < 0)
		return aoe_err(AOE_EDATA, "%s:%ld: %s", r->path, r->lineno,
		    why);
	if (r->started && r->e.key <= r->prev) {
		int dup = r->e.key == r->prev;
		cJSON_Delete(r->e.j);
		r->e.j = NULL;
		return aoe_err(AOE_EDATA, dup ? "%s:%ld: duplicate key %llu" :
		    "%s:%ld: not sorted: key %llu after %llu", r->path,
		    r->lineno, (unsigned long long)r->e.key,
		    (unsigned long long)r->prev);
	}
	if (r->check && bank_check_sched(&r->e, why, sizeof(why)) < 0) {
		cJSON_Delete(r->e.j);
		r->e.j = NULL;
		return aoe_err(AOE_EDATA, "%s:%ld: %s", r->path, r->lineno,
		    why);
	}
	r->started = 1;
	r->prev = r->e.key;
	if (r->soc[0] == '\0')
		snprintf(r->soc, r->soclen, "%s", r->e.soc);
	else if (strcmp(r->soc, r->e.soc) != 0) {
		int rc = aoe_err(AOE_EDATA, "%s:%ld: soc_version '%s' is not "
		    "the bank's '%s'", r->path, r->lineno, r->e.soc, r->soc);
		cJSON_Delete(r->e.j);
		r->e.j = NULL;
		return rc;
	}
	r->valid = 1;
	return 1;
}

/*
 * The decisions of a subgraph entry, checked as a schedule is: the knobs
 * aoe-sgat chooses (lib/tune/sgat.c) with the values it can choose for a
 * chain of that signature ("sgat1;threads=T;nodes=N >> ...", see
 * aoe_sgat_signature()): fusions and inplace 0 or 1, threads 0 or a power
 * of two below T, layout 0 or 8, serial one bit and split two bits (0..2)
 * for each of the first AOE_SGAT_MAXPOS nodes.
 */
int
bank_check_decisions(const char *sig, const aoe_sched *d, char *why, size_t wl)
{
	int th, nodes, np, i, k;
	int64_t v;

	if (sscanf(sig, "sgat1;threads=%d;nodes=%d", &th, &nodes) != 2 ||
	    th < 1 || nodes < 1) {
		snprintf(why, wl, "signature: not a subgraph signature "
		    "('sgat1;threads=T;nodes=N ...')");
		return -1;
	}
	np = nodes < AOE_SGAT_MAXPOS ? nodes : AOE_SGAT_MAXPOS;
	for (i = 0; i < d->n; i++) {
		const char *name = d->k[i].name;
		/* The fusions (aoe_fuse_knobs) and inplace: 0 or 1. */
		int ok = strcmp(name, "inplace") == 0;
		v = d->k[i].v;
		for (k = 0; k < AOE_FUSE_N; k++)
			ok |= strcmp(name, aoe_fuse_knobs[k]) == 0;
		if (ok) {
			if (v != 0 && v != 1)
				goto bad;
			continue;
		}
		if (strcmp(name, "threads") == 0) {
			if (v < 0 || v >= th || (v & (v - 1)) != 0)
				goto bad;
		} else if (strcmp(name, "layout") == 0) {
			if (v != 0 && v != AOE_LAYOUT_8C)
				goto bad;
		} else if (strcmp(name, "serial") == 0) {
			if (v < 0 || (uint64_t)v >> np != 0)
				goto bad;
		} else if (strcmp(name, "split") == 0) {
			if (v < 0 || (uint64_t)v >> 2 * np != 0)
				goto bad;
			for (k = 0; k < np; k++)
				if ((v >> 2 * k & 3) == 3)
					goto bad;
		} else {
			snprintf(why, wl, "a subgraph has no decision '%s'",
			    name);
			return -1;
		}
		continue;
bad:
		snprintf(why, wl, "%s=%lld is not a legal value", name,
		    (long long)v);
		return -1;
	}
	return 0;
}

int
bank_check_sched(const ent *e, char *why, size_t wl)
{
	char w[512];
	aoe_sched s;
	int isop = bank_jstr(e->j, "op_type") != NULL, rc, old;

	/*
	 * A bank is per soc_version: its schedules are checked against the
	 * spaces of that soc's ISA (x86-64-v4: AVX-512; lower: AVX2), not
	 * this host's.
	 */
	old = aoe_cpu_isa_override(aoe_soc_avx512(e->soc));
	rc = aoe_sched_from_json(cJSON_GetObjectItemCaseSensitive(e->j,
	    "schedule"), &s, w, sizeof(w)) < 0 || (isop ?
	    aoe_space_check_sig(e->sig, &s, w, sizeof(w)) :
	    bank_check_decisions(e->sig, &s, w, sizeof(w))) < 0;
	aoe_cpu_isa_override(old);
	if (rc) {
		snprintf(why, wl, "key %llu (%s): illegal %s: %s",
		    (unsigned long long)e->key, e->op_type, isop ? "schedule" :
		    "decisions", w);
		return -1;
	}
	return 0;
}
