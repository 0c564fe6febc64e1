/*
 * store.c - where banks live, and writing them: the lock, the k-way merge
 * and the atomic rewrite of a bank file that commit, merge, import and
 * prune share, and commit itself (tuning records in).
 *
 * Every writer holds the bank's lock, writes a temporary file, fsyncs it
 * and renames it over the old one (aoe_ofile), so a reader (or a crash)
 * sees either the old or the new file, never a mixture.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bank.h"

#ifndef AOE_SHAREDIR
#define AOE_SHAREDIR "/usr/local/share/aoe"
#endif

/*
 * Paths.
 */

static int
mkdirs(const char *path)
{
	char tmp[PATH_MAX], *p;

	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
		return aoe_err(AOE_EIO, "path too long: '%s'", path);
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0777) < 0 && errno != EEXIST)
			return aoe_err(AOE_EIO, "cannot create '%s': %s", tmp,
			    strerror(errno));
		*p = '/';
	}
	if (mkdir(tmp, 0777) < 0 && errno != EEXIST)
		return aoe_err(AOE_EIO, "cannot create '%s': %s", tmp,
		    strerror(errno));
	return 0;
}

int
aoe_bank_dir(int graphs, const char *socv, char *buf, size_t len)
{
	const char *tb = getenv("TUNE_BANK_PATH"), *home = getenv("HOME");
	int r;

	if (socv == NULL)
		socv = aoe_soc_version();
	if (tb && tb[0]) {
		if (!bank_is_dir(tb) || access(tb, W_OK) != 0)
			return aoe_err(AOE_EIO, "TUNE_BANK_PATH '%s' is not "
			    "an existing writable directory", tb);
		r = graphs ? snprintf(buf, len, "%s", tb) :
		    snprintf(buf, len, "%s/%s", tb, socv);
	} else
		r = snprintf(buf, len, "%s/Ascend/latest/data/aoe/custom/%s/%s",
		    home ? home : ".", graphs ? "graph" : "op", socv);
	if (r < 0 || (size_t)r >= len)
		return aoe_err(AOE_EIO, "bank path too long");
	return 0;
}

const char *
aoe_bank_builtin_dir(void)
{
	const char *e = getenv("AOE_BUILTIN_BANK");

	return e && e[0] ? e : AOE_SHAREDIR "/bank";
}

int
bank_put_line(FILE *fp, const char *line)
{
	return fputs(line, fp) < 0 || putc('\n', fp) == EOF ? -1 : 0;
}

/*
 * Whether name is the temporary file of a writer of a bank file,
 * ".ops.jsonl.XXXXXX" or ".graphs.jsonl.XXXXXX" (mkstemp's suffix),
 * which only a writer killed while holding the lock leaves behind.
 */
static int
stale_tmp(const char *name)
{
	static const char *const base[] = { ".ops.jsonl.", ".graphs.jsonl." };
	size_t n = strlen(name), b, i, k;

	for (k = 0; k < 2; k++) {
		b = strlen(base[k]);
		if (n != b + 6 || strncmp(name, base[k], b) != 0)
			continue;
		for (i = b; i < n; i++)
			if (!isalnum((unsigned char)name[i]))
				return 0;
		return 1;
	}
	return 0;
}

int
bank_lock(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int fd, rc;

	if ((rc = mkdirs(dir)) < 0)
		return rc;
	snprintf(path, sizeof(path), "%s/.lock", dir);
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0)
		return aoe_err(AOE_EIO, "cannot lock the bank '%s': %s", dir,
		    strerror(errno));
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			rc = aoe_err(AOE_EIO, "cannot lock the bank '%s': %s",
			    dir, strerror(errno));
			close(fd);
			return rc;
		}
	}
	if ((d = opendir(dir)) != NULL) {
		while ((de = readdir(d)) != NULL)
			if (stale_tmp(de->d_name)) {
				snprintf(path, sizeof(path), "%s/%s", dir,
				    de->d_name);
				(void)unlink(path);
			}
		closedir(d);
	}
	return fd;
}

void
bank_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}

static int
src_next(src *s)
{
	int rc;

	if (s->isarr) {
		s->cur = s->i < s->n ? &s->arr[s->i++] : NULL;
		return s->cur != NULL;
	}
	rc = bank_rdr_next(&s->r);
	s->cur = rc == 1 ? &s->r.e : NULL;
	return rc;
}

static void
warn_collision(const ent *a, const ent *b, const char *what)
{
	aoe_warnx("key %llu: two signatures share it (a hash collision); "
	    "%s", (unsigned long long)a->key, what);
	(void)b;
}

int
bank_merge_sources(src *in, int k, int policy, FILE *out,
    aoe_bank_counts *c)
{
	char why[1024];
	int i, rc, *tie, nt, best, drop0;

	memset(c, 0, sizeof(*c));
	tie = aoe_xcalloc((size_t)k, sizeof(int));
	for (i = 0; i < k; i++)
		if ((rc = src_next(&in[i])) < 0)
			goto out;
	for (;;) {
		uint64_t min = UINT64_MAX;
		int any = 0;
		for (i = 0; i < k; i++)
			if (in[i].cur && (!any || in[i].cur->key < min)) {
				min = in[i].cur->key;
				any = 1;
			}
		if (!any)
			break;
		for (nt = 0, i = 0; i < k; i++)
			if (in[i].cur && in[i].cur->key == min)
				tie[nt++] = i;
		/*
		 * The bank's own entry, when another replaces it, must be
		 * legal to be kept: an entry outside its space never applied,
		 * so its key counts as added, whatever its time.
		 */
		if (nt > 1 && tie[0] == 0 && !in[0].isarr && !in[0].r.check &&
		    bank_check_sched(in[0].cur, why, sizeof(why)) < 0) {
			aoe_warnx("%s:%ld: %s; replaced", in[0].r.path,
			    in[0].r.lineno, why);
			memmove(tie, tie + 1, sizeof(int) * (size_t)--nt);
			drop0 = 1;
		} else
			drop0 = 0;
		best = tie[0];
		for (i = 1; i < nt; i++) {
			const ent *b = in[best].cur, *x = in[tie[i]].cur;
			if (strcmp(in[tie[0]].cur->sig, x->sig) != 0) {
				warn_collision(in[tie[0]].cur, x,
				    "the later one is ignored");
				c->collisions++;
				continue;
			}
			/*
			 * An entry of this kernel generation wins over one
			 * of another, whose time was of other kernels.
			 */
			if (bank_ent_stale(x) != bank_ent_stale(b)) {
				if (!bank_ent_stale(x))
					best = tie[i];
				continue;
			}
			switch (policy) {
			case AOE_MERGE_FASTEST:
				if (x->time_us < b->time_us)
					best = tie[i];
				break;
			case AOE_MERGE_NEWEST:
				if (strcmp(x->when, b->when) > 0)
					best = tie[i];
				break;
			case AOE_MERGE_THEIRS:
				best = tie[i];
				break;
			default:
				break;
			}
		}
		if (tie[0] != 0)
			c->added++;
		else if (best != 0)
			c->updated++;
		else if (nt > 1)
			c->kept++;
		c->total++;
		if (out && bank_put_line(out, in[best].cur->line) < 0) {
			rc = aoe_err(AOE_EIO, "cannot write: %s",
			    strerror(errno));
			goto out;
		}
		if (drop0 && (rc = src_next(&in[0])) < 0)
			goto out;
		for (i = 0; i < nt; i++)
			if ((rc = src_next(&in[tie[i]])) < 0)
				goto out;
	}
	rc = 0;
out:
	free(tie);
	return rc;
}

/*
 * Options and the files a command works on.
 */

void
aoe_bank_opts_init(aoe_bank_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->policy = AOE_MERGE_FASTEST;
	o->max_size = (int64_t)1 << 30;
	o->older_than_days = -1;
}

/* The bank's directory and file for a command. */
int
aoe_bank_target(const aoe_bank_opts *o, char *dir, char *file)
{
	const char *name = o->graphs ? GRAPHS_FILE : OPS_FILE;
	struct stat st;
	int rc;

	if (o->bank) {
		if (stat(o->bank, &st) == 0 && S_ISREG(st.st_mode)) {
			char *sl;
			snprintf(file, PATH_MAX, "%s", o->bank);
			snprintf(dir, PATH_MAX, "%s", o->bank);
			if ((sl = strrchr(dir, '/')) != NULL)
				*sl = '\0';
			else
				strcpy(dir, ".");
			return 0;
		}
		snprintf(dir, PATH_MAX, "%s", o->bank);
		/*
		 * A bank as TUNE_BANK_PATH names it (its operator entries in
		 * a folder per soc_version): the soc_version's, when the
		 * directory has no ops.jsonl of its own and that one does.
		 * Else `aoe-bank --bank "$TUNE_BANK_PATH" lookup` found
		 * nothing that aoe-run applies.
		 */
		if (!o->graphs) {
			char soc[256], sub[PATH_MAX];
			bank_soc(o, soc, sizeof(soc));
			if (snprintf(file, PATH_MAX, "%s/%s", dir, name) <
			    PATH_MAX && access(file, F_OK) != 0 &&
			    snprintf(sub, sizeof(sub), "%s/%s/%s", dir, soc,
			    name) < PATH_MAX && access(sub, F_OK) == 0)
				snprintf(dir + strlen(dir), PATH_MAX -
				    strlen(dir), "/%s", soc);
		}
	} else if ((rc = aoe_bank_dir(o->graphs, o->soc, dir, PATH_MAX)) < 0)
		return rc;
	if (snprintf(file, PATH_MAX, "%s/%s", dir, name) >= PATH_MAX)
		return aoe_err(AOE_EIO, "path too long: '%s'", dir);
	return 0;
}

void
bank_operand_file(const aoe_bank_opts *o, const char *path, char *file)
{
	if (strcmp(path, "-") != 0 && bank_is_dir(path))
		snprintf(file, PATH_MAX, "%s/%s", path, o->graphs ?
		    GRAPHS_FILE : OPS_FILE);
	else
		snprintf(file, PATH_MAX, "%s", path);
}

void
bank_soc(const aoe_bank_opts *o, char *soc, size_t len)
{
	snprintf(soc, len, "%s", o->soc ? o->soc : o->graphs ? "" :
	    aoe_soc_version());
}
/*
 * commit: tuning records in.
 */

static int
cmp_ent(const void *a, const void *b)
{
	const ent *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->time_us < y->time_us ? -1 : x->time_us > y->time_us;
}

static void
free_ents(ent *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		cJSON_Delete(v[i].j);
		free(v[i].line);
	}
	free(v);
}

/*
 * Turn an admitted tuning record into an entry; 0, 1 if it is not
 * admitted (outcome), or -1 with why.
 */
static int
record_entry(const cJSON *rec, const char *want_soc, int *isgraph, ent *e,
    char *why, size_t wl)
{
	const char *outcome = bank_jstr(rec, "outcome"), *sig, *soc, *ks;
	const char *op = bank_jstr(rec, "op_type"), *sg = bank_jstr(rec, "subgraph");
	const cJSON *k, *sched, *v;
	char kbuf[32], when[32], *line;
	double after, before;
	aoe_sched s;
	uint64_t key;
	int64_t kgen;
	cJSON *o;

	/* aoe-sgat's whole-model times: for aoe-report, not the bank. */
	if (outcome == NULL && bank_jstr(rec, "kind") &&
	    strcmp(bank_jstr(rec, "kind"), "model") == 0)
		return 1;
	if (outcome == NULL) {
		snprintf(why, wl, "\"outcome\" is missing");
		return -1;
	}
	if (strcmp(outcome, "add") != 0 && strcmp(outcome, "update") != 0) {
		if (strcmp(outcome, "reserved") && strcmp(outcome,
		    "unsatisfied") && strcmp(outcome, "failed")) {
			snprintf(why, wl, "unknown outcome '%s'", outcome);
			return -1;
		}
		return 1;
	}
	*isgraph = op == NULL && (sg != NULL || bank_jstr(rec, "repo_key"));
	k = cJSON_GetObjectItemCaseSensitive(rec, *isgraph ? "repo_key" :
	    "key");
	if (cJSON_IsString(k))
		ks = k->valuestring;
	else if (cJSON_IsNumber(k) && k->valuedouble >= 0 &&
	    k->valuedouble < 9007199254740992.0 &&
	    k->valuedouble == floor(k->valuedouble)) {
		snprintf(kbuf, sizeof(kbuf), "%.0f", k->valuedouble);
		ks = kbuf;
	} else
		ks = NULL;
	if (ks == NULL || aoe_bank_parse_key(ks, &key) < 0) {
		snprintf(why, wl, "\"%s\" is missing or not a decimal 64-bit "
		    "key", *isgraph ? "repo_key" : "key");
		return -1;
	}
	if ((sig = bank_jstr(rec, "signature")) == NULL) {
		snprintf(why, wl, "\"signature\" is missing");
		return -1;
	}
	if (aoe_op_key(sig) != key) {
		snprintf(why, wl, "key %s does not match its signature "
		    "(whose key is %llu)", ks,
		    (unsigned long long)aoe_op_key(sig));
		return -1;
	}
	if (!*isgraph && op == NULL) {
		snprintf(why, wl, "\"op_type\" is missing");
		return -1;
	}
	sched = cJSON_GetObjectItemCaseSensitive(rec, "schedule");
	if (aoe_sched_from_json(sched, &s, why, wl) < 0)
		return -1;
	if (bank_num_field(rec, "after_us", &after, why, wl) < 0 ||
	    bank_num_field(rec, "before_us", &before, why, wl) < 0)
		return -1;
	if ((soc = bank_jstr(rec, "soc_version")) == NULL) {
		snprintf(why, wl, "\"soc_version\" is missing");
		return -1;
	}
	if (want_soc[0] && strcmp(soc, want_soc) != 0) {
		snprintf(why, wl, "soc_version '%s' is not the bank's '%s'",
		    soc, want_soc);
		return -1;
	}
	if (!aoe_soc_valid(soc)) {
		snprintf(why, wl, "soc_version '%s' is not a safe name", soc);
		return -1;
	}
	/* A record's own generation, else the committing aoe's. */
	if (bank_kernels_gen(rec, AOE_KERNELS_GEN, &kgen, why, wl) < 0)
		return -1;
	aoe_iso_now(when, sizeof(when));
	o = cJSON_CreateObject();
	snprintf(kbuf, sizeof(kbuf), "%llu", (unsigned long long)key);
	cJSON_AddStringToObject(o, "key", kbuf);
	cJSON_AddStringToObject(o, *isgraph ? "subgraph" : "op_type",
	    *isgraph ? (sg ? sg : kbuf) : op);
	cJSON_AddStringToObject(o, "signature", sig);
	cJSON_AddItemToObject(o, "schedule", cJSON_Duplicate(sched, 1));
	cJSON_AddNumberToObject(o, "time_us", after);
	cJSON_AddNumberToObject(o, "baseline_us", before);
	if ((v = cJSON_GetObjectItemCaseSensitive(rec, "spread_us")) &&
	    cJSON_IsNumber(v))
		cJSON_AddNumberToObject(o, "spread_us", v->valuedouble);
	if ((v = cJSON_GetObjectItemCaseSensitive(rec, "trials")) &&
	    cJSON_IsNumber(v))
		cJSON_AddNumberToObject(o, "trials", v->valuedouble);
	cJSON_AddStringToObject(o, "soc_version", soc);
	cJSON_AddStringToObject(o, "tool_version", bank_jstr(rec, "tool_version") ?
	    bank_jstr(rec, "tool_version") : AOE_VERSION);
	cJSON_AddNumberToObject(o, "kernels", (double)kgen);
	cJSON_AddStringToObject(o, "measured_at", bank_jstr(rec, "measured_at") ?
	    bank_jstr(rec, "measured_at") : when);
	cJSON_AddStringToObject(o, "method", bank_jstr(rec, "method") ?
	    bank_jstr(rec, "method") : *isgraph ? "sgat" : "opat");
	line = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (line == NULL) {
		snprintf(why, wl, "out of memory");
		return -1;
	}
	if (bank_parse_entry(line, e, why, wl) < 0) {
		free(line);
		return -1;
	}
	/* A schedule enters the bank only from inside its space. */
	if (bank_check_sched(e, why, wl) < 0) {
		cJSON_Delete(e->j);
		e->j = NULL;
		free(line);
		return -1;
	}
	return 0;
}

typedef struct entv {
	ent *v;
	size_t n, cap;
} entv;

static void
entv_push(entv *a, const ent *e)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 64;
		a->v = aoe_xrealloc(a->v, a->cap * sizeof(ent));
	}
	a->v[a->n++] = *e;
}

/* Sort, and keep the fastest of duplicates; a collision is an error. */
static int
entv_sort(entv *a)
{
	size_t i, j;

	if (a->n == 0)
		return 0;
	qsort(a->v, a->n, sizeof(ent), cmp_ent);
	for (i = j = 0; i < a->n; i++) {
		if (j > 0 && a->v[j - 1].key == a->v[i].key) {
			if (strcmp(a->v[j - 1].sig, a->v[i].sig) != 0)
				return aoe_err(AOE_EDATA, "records for key "
				    "%llu have different signatures (a hash "
				    "collision)", (unsigned long long)
				    a->v[i].key);
			cJSON_Delete(a->v[i].j);
			free(a->v[i].line);
			continue;
		}
		a->v[j++] = a->v[i];
	}
	a->n = j;
	return 0;
}

int
bank_write(const aoe_bank_opts *o, const char *dir, const char *file,
    char *soc, size_t soclen, src *extra, int nextra, int policy,
    aoe_bank_counts *c)
{
	aoe_ofile w;
	src *in;
	int lk, rc, i;

	if (o->dry_run)
		lk = -1;
	else if ((lk = bank_lock(dir)) < 0)
		return lk;
	in = aoe_xcalloc((size_t)nextra + 1, sizeof(src));
	if ((rc = bank_rdr_open(&in[0].r, file, soc, soclen, 1)) < 0)
		goto out;
	for (i = 0; i < nextra; i++)
		in[i + 1] = extra[i];
	if (o->dry_run) {
		rc = bank_merge_sources(in, nextra + 1, policy, NULL, c);
		goto out;
	}
	if ((rc = aoe_ofile_open(&w, file)) < 0)
		goto out;
	if ((rc = bank_merge_sources(in, nextra + 1, policy, w.fp, c)) < 0) {
		aoe_ofile_abort(&w);
		goto out;
	}
	rc = aoe_ofile_close(&w);
out:
	if (rc == 0) {
		snprintf(c->file, sizeof(c->file), "%s", file);
		snprintf(c->soc, sizeof(c->soc), "%s", soc);
	}
	bank_rdr_close(&in[0].r);
	for (i = 0; i < nextra; i++)
		extra[i] = in[i + 1];
	free(in);
	bank_unlock(lk);
	return rc;
}

/*
 * A batch of admitted records' entries, operator and subgraph ones apart.
 */
struct aoe_bank_batch {
	aoe_bank_opts o;
	char soc[128];		/* the soc_version records must have */
	entv ops, graphs;
	long skipped;
};

aoe_bank_batch *
aoe_bank_batch_new(const aoe_bank_opts *o)
{
	aoe_bank_batch *b = aoe_xcalloc(1, sizeof(*b));

	b->o = *o;
	bank_soc(o, b->soc, sizeof(b->soc));
	return b;
}

int
aoe_bank_batch_add(aoe_bank_batch *b, const cJSON *rec, char *why,
    size_t wl)
{
	int r, isg = 0;
	ent e;

	if (!cJSON_IsObject(rec)) {
		snprintf(why, wl, "not a JSON object");
		return -AOE_EDATA;
	}
	if ((r = record_entry(rec, b->soc, &isg, &e, why, wl)) < 0)
		return -AOE_EDATA;
	if (r == 1)
		b->skipped++;
	else
		entv_push(isg ? &b->graphs : &b->ops, &e);
	return r;
}

void
aoe_bank_batch_free(aoe_bank_batch *b)
{
	if (b == NULL)
		return;
	free_ents(b->ops.v, b->ops.n);
	free_ents(b->graphs.v, b->graphs.n);
	free(b);
}

/* Write one bank's entries; skipped is what its counts report. */
static int
commit_one(const aoe_bank_batch *b, int graphs, entv *v, long skipped,
    aoe_bank_counts *c)
{
	char dir[PATH_MAX], file[PATH_MAX], soc[128] = "";
	aoe_bank_opts oo = b->o;
	src s;
	int rc;

	oo.graphs = graphs;
	if ((rc = aoe_bank_target(&oo, dir, file)) < 0)
		return rc;
	if (!graphs)
		bank_soc(&b->o, soc, sizeof(soc));
	memset(&s, 0, sizeof(s));
	s.isarr = 1;
	s.arr = v->v;
	s.n = v->n;
	if ((rc = bank_write(&oo, dir, file, soc, sizeof(soc), &s, 1,
	    AOE_MERGE_FASTEST, c)) < 0)
		return rc;
	c->skipped = skipped;
	return 0;
}

int
aoe_bank_batch_commit(aoe_bank_batch *b, aoe_bank_counts c[2])
{
	int rc;

	memset(c, 0, 2 * sizeof(*c));
	/* Both banks' records are checked before either is written. */
	if ((rc = entv_sort(&b->ops)) < 0 || (rc = entv_sort(&b->graphs)) < 0)
		return rc;
	if (b->ops.n > 0 || b->graphs.n == 0)
		if ((rc = commit_one(b, 0, &b->ops, b->skipped, &c[0])) < 0)
			return rc;
	if (b->graphs.n > 0)
		if ((rc = commit_one(b, 1, &b->graphs, b->ops.n ? 0 :
		    b->skipped, &c[1])) < 0)
			return rc;
	return 0;
}

int
aoe_bank_commit_records(const aoe_bank_opts *o,
    const cJSON *const *recs, int n, aoe_bank_counts c[2])
{
	aoe_bank_batch *b = aoe_bank_batch_new(o);
	char why[256];
	int i, rc = 0;

	for (i = 0; i < n && rc == 0; i++)
		if (aoe_bank_batch_add(b, recs[i], why, sizeof(why)) < 0)
			rc = aoe_err(AOE_EDATA, "record %d: %s", i + 1, why);
	if (rc == 0)
		rc = aoe_bank_batch_commit(b, c);
	aoe_bank_batch_free(b);
	return rc;
}

void
aoe_bank_commit_line(const aoe_bank_counts *c, char *buf, size_t len)
{
	snprintf(buf, len, "%s: %ld added, %ld updated, %ld kept (not "
	    "faster), %ld collisions, %ld records skipped; %ld entries",
	    c->file, c->added, c->updated, c->kept, c->collisions,
	    c->skipped, c->total);
}
