/*
 * bank.c - the knowledge bank (aoe-bank(1), aoe-bank(5)).
 *
 * A bank file is JSON Lines, one entry a line, sorted by key (unsigned
 * 64-bit, ascending, unique).  libaoe reads it when a model is prepared:
 * the file is mapped once per process, the keys are indexed by one linear
 * scan (the file is sorted), and an entry is parsed only when a node's key
 * hits it.  Every writer holds the bank's lock, writes a temporary file,
 * fsyncs it and renames it over the old one, so a reader (or a crash)
 * sees either the old or the new file, never a mixture.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>
#include <cjson/cJSON.h>

#include "bank.h"

#ifndef AOE_SHAREDIR
#define AOE_SHAREDIR "/usr/local/share/aoe"
#endif

#define OPS_FILE "ops.jsonl"
#define GRAPHS_FILE "graphs.jsonl"

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

static int
is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int
aoe_bank_dir(int graphs, const char *socv, char *buf, size_t len)
{
	const char *tb = getenv("TUNE_BANK_PATH"), *home = getenv("HOME");
	int r;

	if (socv == NULL)
		socv = aoe_soc_version();
	if (tb && tb[0]) {
		if (!is_dir(tb) || access(tb, W_OK) != 0)
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

/*
 * Entries.
 */

typedef struct ent {
	uint64_t key;
	cJSON *j;
	const char *op_type, *sig, *soc, *when, *tver;
	double time_us, base_us;
	char *line;		/* the entry's text, without the newline */
} ent;

static const char *
jstr(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int
parse_key(const char *s, uint64_t *k)
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

static int
num_field(const cJSON *o, const char *name, double *v, char *why, size_t wl)
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

/* Fill s from a schedule object; -1 with why if it is not a valid one. */
static int
sched_from_json(const cJSON *o, aoe_sched *s, char *why, size_t wl)
{
	const cJSON *k;

	memset(s, 0, sizeof(*s));
	if (!cJSON_IsObject(o)) {
		snprintf(why, wl, "\"schedule\" is %s", o ? "not an object" :
		    "missing");
		return -1;
	}
	cJSON_ArrayForEach(k, o) {
		if (!cJSON_IsNumber(k) || k->valuedouble !=
		    floor(k->valuedouble) || fabs(k->valuedouble) > 9e15) {
			snprintf(why, wl, "schedule knob '%s' is not an "
			    "integer", k->string);
			return -1;
		}
		if (strlen(k->string) == 0 || strlen(k->string) >=
		    AOE_KNOB_NAME) {
			snprintf(why, wl, "schedule knob name '%.40s' is "
			    "empty or too long", k->string);
			return -1;
		}
		if (aoe_sched_set(s, k->string, (int64_t)k->valuedouble) < 0) {
			snprintf(why, wl, "schedule has more than %d knobs",
			    AOE_SCHED_MAX);
			return -1;
		}
	}
	return 0;
}

/* Parse and check one entry (line is kept); 0, or -1 with why. */
static int
parse_entry(char *line, ent *e, char *why, size_t wl)
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
	if ((ks = jstr(e->j, "key")) == NULL || parse_key(ks, &e->key) < 0) {
		snprintf(why, wl, "\"key\" is missing or not a decimal "
		    "64-bit number in a string");
		goto bad;
	}
	e->op_type = jstr(e->j, "op_type");
	if (e->op_type == NULL)
		e->op_type = jstr(e->j, "subgraph");
	if (e->op_type == NULL) {
		snprintf(why, wl, "\"op_type\" is missing");
		goto bad;
	}
	if ((e->sig = jstr(e->j, "signature")) == NULL) {
		snprintf(why, wl, "\"signature\" is missing");
		goto bad;
	}
	if ((h = aoe_op_key(e->sig)) != e->key) {
		snprintf(why, wl, "key %s does not match its signature "
		    "(whose key is %llu)", ks, (unsigned long long)h);
		goto bad;
	}
	if (sched_from_json(cJSON_GetObjectItemCaseSensitive(e->j,
	    "schedule"), &s, why, wl) < 0)
		goto bad;
	if (num_field(e->j, "time_us", &e->time_us, why, wl) < 0 ||
	    num_field(e->j, "baseline_us", &e->base_us, why, wl) < 0)
		goto bad;
	if ((e->soc = jstr(e->j, "soc_version")) == NULL ||
	    !aoe_soc_valid(e->soc)) {
		snprintf(why, wl, "\"soc_version\" is missing or not a safe "
		    "name");
		goto bad;
	}
	if ((e->tver = jstr(e->j, "tool_version")) == NULL ||
	    (e->when = jstr(e->j, "measured_at")) == NULL ||
	    jstr(e->j, "method") == NULL) {
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

/*
 * A streaming reader of a bank file that checks every line, the order
 * of the keys and the soc_version.  After an error it may go on (verify
 * does), so that every bad line is reported.
 */
typedef struct rdr {
	const char *path;
	FILE *fp;
	char *buf;
	size_t cap;
	long lineno;
	int started;
	uint64_t prev;
	char *soc;		/* the soc_version every entry must have */
	size_t soclen;
	int fixed;		/* soc was set by the caller */
	ent e;
	int valid;		/* e holds an entry */
} rdr;

/* Open path ("-" is stdin); a missing file is empty when optional. */
static int
rdr_open(rdr *r, const char *path, char *soc, size_t soclen, int optional)
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
	if (is_dir(path)) {
		fclose(r->fp);
		r->fp = NULL;
		return aoe_err(AOE_EIO, "cannot read '%s': Is a directory",
		    path);
	}
	return 0;
}

static void
rdr_close(rdr *r)
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
static int
rdr_next(rdr *r)
{
	char why[256];
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
	if (parse_entry(r->buf, &r->e, why, sizeof(why)) < 0)
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
 * Atomic output: a temporary file beside the destination, fsync'ed and
 * renamed over it.  "-" writes standard output directly.
 */
typedef struct aw {
	char tmp[PATH_MAX];
	char dst[PATH_MAX];
	FILE *fp;
	int std;
} aw;

static int
aw_open(aw *w, const char *dst)
{
	char dir[PATH_MAX], *sl;
	const char *base;
	int fd;

	memset(w, 0, sizeof(*w));
	if (strcmp(dst, "-") == 0) {
		w->fp = stdout;
		w->std = 1;
		return 0;
	}
	snprintf(w->dst, sizeof(w->dst), "%s", dst);
	snprintf(dir, sizeof(dir), "%s", dst);
	if ((sl = strrchr(dir, '/')) != NULL) {
		*sl = '\0';
		base = sl + 1;
		if (dir[0] == '\0')
			strcpy(dir, "/");
	} else {
		strcpy(dir, ".");
		base = dst;
	}
	if (snprintf(w->tmp, sizeof(w->tmp), "%s/.%s.XXXXXX", dir, base) >=
	    (int)sizeof(w->tmp))
		return aoe_err(AOE_EIO, "path too long: '%s'", dst);
	if ((fd = mkstemp(w->tmp)) < 0)
		return aoe_err(AOE_EIO, "cannot create a file in '%s': %s",
		    dir, strerror(errno));
	(void)fchmod(fd, 0644);
	if ((w->fp = fdopen(fd, "w")) == NULL) {
		close(fd);
		unlink(w->tmp);
		return aoe_err(AOE_EIO, "cannot write '%s': %s", w->tmp,
		    strerror(errno));
	}
	return 0;
}

static void
aw_abort(aw *w)
{
	if (w->fp && !w->std) {
		fclose(w->fp);
		unlink(w->tmp);
	}
	w->fp = NULL;
}

static void
fsync_dir(const char *path)
{
	char dir[PATH_MAX], *sl;
	int fd;

	snprintf(dir, sizeof(dir), "%s", path);
	if ((sl = strrchr(dir, '/')) == NULL)
		strcpy(dir, ".");
	else if (sl == dir)
		dir[1] = '\0';
	else
		*sl = '\0';
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY)) >= 0) {
		(void)fsync(fd);
		close(fd);
	}
}

static int
aw_commit(aw *w)
{
	int e = 0;

	if (w->std) {
		if (fflush(stdout) != 0 || ferror(stdout))
			return aoe_err(AOE_EIO, "cannot write standard "
			    "output: %s", strerror(errno));
		return 0;
	}
	if (fflush(w->fp) != 0 || ferror(w->fp) || fsync(fileno(w->fp)) != 0)
		e = errno ? errno : EIO;
	if (fclose(w->fp) != 0 && e == 0)
		e = errno;
	w->fp = NULL;
	if (e == 0 && rename(w->tmp, w->dst) != 0)
		e = errno;
	if (e) {
		unlink(w->tmp);
		return aoe_err(AOE_EIO, "cannot write '%s': %s", w->dst,
		    strerror(e));
	}
	fsync_dir(w->dst);
	return 0;
}

static int
put_line(FILE *fp, const char *line)
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

/*
 * Take the bank directory's lock (creating the directory); fd or < 0.
 * With the lock held, temporary files that killed writers left behind
 * are removed.
 */
static int
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

static void
bank_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}

/*
 * The k-way merge shared by commit, merge and import: sources are readers
 * or sorted arrays; equal keys are resolved by policy.  Counts are
 * relative to source 0, the bank being written.
 */
typedef struct src {
	rdr r;
	ent *arr;
	size_t n, i;
	ent *cur;
	int isarr;
} src;

typedef struct mcount {
	long added, updated, kept, collisions, total;
} mcount;

static int
src_next(src *s)
{
	int rc;

	if (s->isarr) {
		s->cur = s->i < s->n ? &s->arr[s->i++] : NULL;
		return s->cur != NULL;
	}
	rc = rdr_next(&s->r);
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

static int
merge_sources(src *in, int k, int policy, FILE *out, mcount *c)
{
	int i, rc, *tie, nt, best;

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
		best = tie[0];
		for (i = 1; i < nt; i++) {
			const ent *b = in[best].cur, *x = in[tie[i]].cur;
			if (strcmp(in[tie[0]].cur->sig, x->sig) != 0) {
				warn_collision(in[tie[0]].cur, x,
				    "the later one is ignored");
				c->collisions++;
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
		if (out && put_line(out, in[best].cur->line) < 0) {
			rc = aoe_err(AOE_EIO, "cannot write: %s",
			    strerror(errno));
			goto out;
		}
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
	} else if ((rc = aoe_bank_dir(o->graphs, o->soc, dir, PATH_MAX)) < 0)
		return rc;
	if (snprintf(file, PATH_MAX, "%s/%s", dir, name) >= PATH_MAX)
		return aoe_err(AOE_EIO, "path too long: '%s'", dir);
	return 0;
}

/* An operand: a bank directory stands for its bank file. */
static void
operand_file(const aoe_bank_opts *o, const char *path, char *file)
{
	if (strcmp(path, "-") != 0 && is_dir(path))
		snprintf(file, PATH_MAX, "%s/%s", path, o->graphs ?
		    GRAPHS_FILE : OPS_FILE);
	else
		snprintf(file, PATH_MAX, "%s", path);
}

/* The soc_version a bank written by this command must hold. */
static void
bank_soc(const aoe_bank_opts *o, char *soc, size_t len)
{
	snprintf(soc, len, "%s", o->soc ? o->soc : o->graphs ? "" :
	    aoe_soc_version());
}

static void
iso_now(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
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
	const char *outcome = jstr(rec, "outcome"), *sig, *soc, *ks;
	const char *op = jstr(rec, "op_type"), *sg = jstr(rec, "subgraph");
	const cJSON *k, *sched, *v;
	char kbuf[32], when[32], *line;
	double after, before;
	aoe_sched s;
	uint64_t key;
	cJSON *o;

	/* aoe-sgat's whole-model times: for aoe-report, not the bank. */
	if (outcome == NULL && jstr(rec, "kind") &&
	    strcmp(jstr(rec, "kind"), "model") == 0)
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
	*isgraph = op == NULL && (sg != NULL || jstr(rec, "repo_key"));
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
	if (ks == NULL || parse_key(ks, &key) < 0) {
		snprintf(why, wl, "\"%s\" is missing or not a decimal 64-bit "
		    "key", *isgraph ? "repo_key" : "key");
		return -1;
	}
	if ((sig = jstr(rec, "signature")) == NULL) {
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
	if (sched_from_json(sched, &s, why, wl) < 0)
		return -1;
	if (num_field(rec, "after_us", &after, why, wl) < 0 ||
	    num_field(rec, "before_us", &before, why, wl) < 0)
		return -1;
	if ((soc = jstr(rec, "soc_version")) == NULL) {
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
	iso_now(when, sizeof(when));
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
	cJSON_AddStringToObject(o, "tool_version", jstr(rec, "tool_version") ?
	    jstr(rec, "tool_version") : AOE_VERSION);
	cJSON_AddStringToObject(o, "measured_at", jstr(rec, "measured_at") ?
	    jstr(rec, "measured_at") : when);
	cJSON_AddStringToObject(o, "method", jstr(rec, "method") ?
	    jstr(rec, "method") : *isgraph ? "sgat" : "opat");
	line = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (line == NULL) {
		snprintf(why, wl, "out of memory");
		return -1;
	}
	if (parse_entry(line, e, why, wl) < 0) {
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

/* Merge the sorted entries into the bank file under its lock. */
static int
write_into_bank(const aoe_bank_opts *o, const char *dir, const char *file,
    char *soc, size_t soclen, src *extra, int nextra, int policy,
    mcount *c)
{
	src *in;
	aw w;
	int lk, rc, i;

	if (o->dry_run)
		lk = -1;
	else if ((lk = bank_lock(dir)) < 0)
		return lk;
	in = aoe_xcalloc((size_t)nextra + 1, sizeof(src));
	if ((rc = rdr_open(&in[0].r, file, soc, soclen, 1)) < 0)
		goto out;
	for (i = 0; i < nextra; i++)
		in[i + 1] = extra[i];
	if (o->dry_run) {
		rc = merge_sources(in, nextra + 1, policy, NULL, c);
		goto out;
	}
	if ((rc = aw_open(&w, file)) < 0)
		goto out;
	if ((rc = merge_sources(in, nextra + 1, policy, w.fp, c)) < 0) {
		aw_abort(&w);
		goto out;
	}
	rc = aw_commit(&w);
out:
	rdr_close(&in[0].r);
	for (i = 0; i < nextra; i++)
		extra[i] = in[i + 1];
	free(in);
	bank_unlock(lk);
	return rc;
}

static int
read_records(const char *path, const char *opsoc, entv *ops, entv *graphs,
    long *skipped)
{
	char *buf = NULL, why[256];
	size_t cap = 0;
	ssize_t n;
	long lineno = 0;
	FILE *fp;
	int rc = 0, isg, r;
	ent e;

	if (strcmp(path, "-") == 0)
		fp = stdin;
	else if ((fp = fopen(path, "r")) == NULL || is_dir(path)) {
		if (fp)
			fclose(fp);
		return aoe_err(AOE_EIO, "cannot open '%s': %s", path,
		    fp ? "Is a directory" : strerror(errno));
	}
	while ((n = getline(&buf, &cap, fp)) >= 0) {
		cJSON *rec;
		lineno++;
		if (n == 0 || buf[n - 1] != '\n') {
			rc = aoe_err(AOE_EDATA, "%s:%ld: truncated line (no "
			    "newline at the end)", path, lineno);
			break;
		}
		buf[n - 1] = '\0';
		if (buf[strspn(buf, " \t\r")] == '\0')
			continue;
		if ((rec = cJSON_Parse(buf)) == NULL || !cJSON_IsObject(rec)) {
			cJSON_Delete(rec);
			rc = aoe_err(AOE_EDATA, "%s:%ld: malformed JSON",
			    path, lineno);
			break;
		}
		r = record_entry(rec, opsoc, &isg, &e, why, sizeof(why));
		cJSON_Delete(rec);
		if (r < 0) {
			rc = aoe_err(AOE_EDATA, "%s:%ld: %s", path, lineno,
			    why);
			break;
		}
		if (r == 1)
			(*skipped)++;
		else
			entv_push(isg ? graphs : ops, &e);
	}
	if (rc == 0 && ferror(fp))
		rc = aoe_err(AOE_EIO, "cannot read '%s': %s", path,
		    strerror(errno));
	free(buf);
	if (fp != stdin)
		fclose(fp);
	return rc;
}

static int
commit_one(const aoe_bank_opts *o, int graphs, entv *v, long skipped)
{
	char dir[PATH_MAX], file[PATH_MAX], soc[128] = "";
	aoe_bank_opts oo = *o;
	mcount c;
	src s;
	int rc;

	oo.graphs = graphs;
	if ((rc = entv_sort(v)) < 0)
		return rc;
	if ((rc = aoe_bank_target(&oo, dir, file)) < 0)
		return rc;
	if (!graphs)
		bank_soc(o, soc, sizeof(soc));
	memset(&s, 0, sizeof(s));
	s.isarr = 1;
	s.arr = v->v;
	s.n = v->n;
	if ((rc = write_into_bank(&oo, dir, file, soc, sizeof(soc), &s, 1,
	    AOE_MERGE_FASTEST, &c)) < 0)
		return rc;
	if (!o->quiet)
		aoe_warnx("%s: %ld added, %ld updated, %ld kept (not "
		    "faster), %ld collisions, %ld records skipped; %ld "
		    "entries", file, c.added, c.updated, c.kept,
		    c.collisions, skipped, c.total);
	return 0;
}

int
aoe_bank_commit(const aoe_bank_opts *o, int argc, char **argv)
{
	entv ops = { 0 }, graphs = { 0 };
	char soc[128];
	long skipped = 0;
	int i, rc = 0;

	bank_soc(o, soc, sizeof(soc));
	for (i = 0; i < (argc ? argc : 1) && rc == 0; i++)
		rc = read_records(argc ? argv[i] : "-", soc, &ops, &graphs,
		    &skipped);
	if (rc == 0 && (ops.n > 0 || graphs.n == 0))
		rc = commit_one(o, 0, &ops, skipped);
	if (rc == 0 && graphs.n > 0)
		rc = commit_one(o, 1, &graphs, ops.n ? 0 : skipped);
	free_ents(ops.v, ops.n);
	free_ents(graphs.v, graphs.n);
	return rc;
}

/*
 * merge: several banks into one (the bank, or --output).
 */
int
aoe_bank_merge(const aoe_bank_opts *o, int argc, char **argv)
{
	char dir[PATH_MAX], file[PATH_MAX], soc[128] = "";
	char (*files)[PATH_MAX];
	src *in;
	mcount c;
	aw w;
	int i, rc = 0;

	if (argc < 1)
		return aoe_err(AOE_EDATA, "merge needs at least one bank");
	if (o->soc)
		snprintf(soc, sizeof(soc), "%s", o->soc);
	files = aoe_xcalloc((size_t)argc, PATH_MAX);
	for (i = 0; i < argc; i++)
		operand_file(o, argv[i], files[i]);
	if (o->output == NULL) {
		/* Into the bank itself: it is "ours", the first input. */
		char **av = aoe_xcalloc((size_t)argc, sizeof(char *));
		src *ex = aoe_xcalloc((size_t)argc, sizeof(src));
		if ((rc = aoe_bank_target(o, dir, file)) < 0)
			goto out1;
		if (!o->graphs)
			bank_soc(o, soc, sizeof(soc));
		for (i = 0; i < argc && rc == 0; i++)
			rc = rdr_open(&ex[i].r, files[i], soc, sizeof(soc), 0);
		if (rc == 0)
			rc = write_into_bank(o, dir, file, soc, sizeof(soc),
			    ex, argc, o->policy, &c);
out1:
		for (i = 0; i < argc; i++)
			rdr_close(&ex[i].r);
		free(ex);
		free(av);
		goto done;
	}
	in = aoe_xcalloc((size_t)argc, sizeof(src));
	for (i = 0; i < argc && rc == 0; i++)
		rc = rdr_open(&in[i].r, files[i], soc, sizeof(soc), 0);
	if (rc == 0 && (rc = aw_open(&w, o->output)) == 0) {
		if ((rc = merge_sources(in, argc, o->policy, w.fp, &c)) < 0)
			aw_abort(&w);
		else
			rc = aw_commit(&w);
	}
	for (i = 0; i < argc; i++)
		rdr_close(&in[i].r);
	free(in);
	snprintf(file, sizeof(file), "%s", o->output);
done:
	if (rc == 0 && !o->quiet)
		aoe_warnx("%s: %ld entries, %ld added, %ld replaced, %ld "
		    "kept, %ld collisions", file, c.total, c.added,
		    c.updated, c.kept, c.collisions);
	free(files);
	return rc;
}

/*
 * diff: added, removed and changed entries of two banks.
 */
static int
ent_same(const ent *a, const ent *b)
{
	return strcmp(a->line, b->line) == 0;
}

static void
diff_print(const aoe_bank_opts *o, const char *what, const ent *a,
    const ent *b)
{
	const ent *e = a ? a : b;

	if (o->jsonl) {
		cJSON *j = cJSON_CreateObject();
		char kb[32], *s;
		snprintf(kb, sizeof(kb), "%llu", (unsigned long long)e->key);
		cJSON_AddStringToObject(j, "change", what);
		cJSON_AddStringToObject(j, "key", kb);
		cJSON_AddStringToObject(j, "op_type", e->op_type);
		if (a && b) {
			cJSON_AddNumberToObject(j, "old_time_us", a->time_us);
			cJSON_AddNumberToObject(j, "new_time_us", b->time_us);
			cJSON_AddNumberToObject(j, "delta_us",
			    b->time_us - a->time_us);
		} else
			cJSON_AddNumberToObject(j, "time_us", e->time_us);
		s = cJSON_PrintUnformatted(j);
		puts(s);
		free(s);
		cJSON_Delete(j);
	} else if (a && b)
		printf("changed %llu %s %.3f -> %.3f us (%+.2f%%)\n",
		    (unsigned long long)e->key, e->op_type, a->time_us,
		    b->time_us, a->time_us > 0 ? 100 * (b->time_us -
		    a->time_us) / a->time_us : 0.0);
	else
		printf("%s %llu %s %.3f us\n", what,
		    (unsigned long long)e->key, e->op_type, e->time_us);
}

int
aoe_bank_diff(const aoe_bank_opts *o, int argc, char **argv)
{
	char f[2][PATH_MAX], soc[2][128] = { "", "" };
	rdr r[2];
	int rc, ra, rb, differ = 0;

	if (argc != 2)
		return aoe_err(AOE_EDATA, "diff needs two banks");
	operand_file(o, argv[0], f[0]);
	operand_file(o, argv[1], f[1]);
	memset(r, 0, sizeof(r));
	if ((rc = rdr_open(&r[0], f[0], soc[0], sizeof(soc[0]), 0)) < 0 ||
	    (rc = rdr_open(&r[1], f[1], soc[1], sizeof(soc[1]), 0)) < 0)
		goto out;
	ra = rdr_next(&r[0]);
	rb = rdr_next(&r[1]);
	for (;;) {
		if (ra < 0 || rb < 0) {
			rc = ra < 0 ? ra : rb;
			goto out;
		}
		if (ra == 0 && rb == 0)
			break;
		if (rb == 0 || (ra == 1 && r[0].e.key < r[1].e.key)) {
			diff_print(o, "removed", &r[0].e, NULL);
			differ = 1;
			ra = rdr_next(&r[0]);
		} else if (ra == 0 || r[1].e.key < r[0].e.key) {
			diff_print(o, "added", NULL, &r[1].e);
			differ = 1;
			rb = rdr_next(&r[1]);
		} else {
			if (!ent_same(&r[0].e, &r[1].e)) {
				diff_print(o, "changed", &r[0].e, &r[1].e);
				differ = 1;
			}
			ra = rdr_next(&r[0]);
			rb = rdr_next(&r[1]);
		}
	}
	if (fflush(stdout) != 0)
		rc = aoe_err(AOE_EIO, "cannot write standard output: %s",
		    strerror(errno));
	else
		rc = differ;
out:
	rdr_close(&r[0]);
	rdr_close(&r[1]);
	return rc;
}

/*
 * verify: format, order, duplicates, key/signature, soc_version.
 */
static int
verify_file(const aoe_bank_opts *o, const char *path, const char *want)
{
	char soc[128] = "";
	long bad = 0, n = 0;
	rdr r;
	int rc;

	if (want)
		snprintf(soc, sizeof(soc), "%s", want);
	if ((rc = rdr_open(&r, path, soc, sizeof(soc), 0)) < 0)
		return rc;
	while ((rc = rdr_next(&r)) != 0) {
		if (rc < 0) {
			if (-rc == AOE_EIO)
				break;
			aoe_warnx("%s", aoe_errmsg());
			bad++;
		} else
			n++;
		if (bad >= 20) {
			aoe_warnx("%s: too many errors, giving up", path);
			break;
		}
	}
	rdr_close(&r);
	if (rc < 0 && -rc == AOE_EIO)
		return rc;
	if (bad)
		return aoe_err(AOE_EDATA, "%s: %ld bad lines", path, bad);
	if (!o->quiet)
		printf("%s: ok, %ld entries%s%s\n", path, n, soc[0] ?
		    ", soc_version " : "", soc);
	return 0;
}

static int
verify_operand(const aoe_bank_opts *o, const char *path)
{
	char file[PATH_MAX];

	operand_file(o, path, file);
	return verify_file(o, file, o->soc);
}

int
aoe_bank_verify(const aoe_bank_opts *o, int argc, char **argv)
{
	char dir[PATH_MAX], file[PATH_MAX];
	int i, rc, worst = 0, nbad = 0;

	if (argc == 0) {
		if ((rc = aoe_bank_target(o, dir, file)) < 0)
			return rc;
		return verify_file(o, file, o->graphs ? o->soc : o->soc ?
		    o->soc : aoe_soc_version());
	}
	if (argc == 1)
		return verify_operand(o, argv[0]);
	for (i = 0; i < argc; i++)
		if ((rc = verify_operand(o, argv[i])) < 0) {
			aoe_warnx("%s", aoe_errmsg());
			if (worst == 0 || rc < worst)
				worst = rc;
			nbad++;
		}
	if (worst)
		(void)aoe_err(-worst, "%d of %d banks failed verification",
		    nbad, argc);
	return worst;
}

/*
 * prune: drop entries by op type, age, tool version, or no gain.
 */
static int
prune_match(const aoe_bank_opts *o, const ent *e, time_t now)
{
	if (o->op_type && strcmp(o->op_type, e->op_type) == 0)
		return 1;
	if (o->tool_version && strcmp(o->tool_version, e->tver) == 0)
		return 1;
	if (o->no_gain && e->time_us >= e->base_us)
		return 1;
	if (o->older_than_days >= 0) {
		struct tm tm;
		memset(&tm, 0, sizeof(tm));
		if (strptime(e->when, "%Y-%m-%dT%H:%M:%S", &tm) == NULL)
			return 1;	/* an unreadable date counts as old */
		if (difftime(now, timegm(&tm)) > o->older_than_days * 86400)
			return 1;
	}
	return 0;
}

int
aoe_bank_prune(const aoe_bank_opts *o, int argc, char **argv)
{
	char dir[PATH_MAX], file[PATH_MAX], soc[128] = "";
	long kept = 0, gone = 0;
	time_t now = time(NULL);
	rdr r;
	aw w;
	int lk, rc;

	if (!o->op_type && !o->tool_version && !o->no_gain &&
	    o->older_than_days < 0)
		return aoe_err(AOE_EDATA, "prune needs --op-type, "
		    "--older-than, --tool-version or --no-gain");
	if (argc > 0)
		return aoe_err(AOE_EDATA, "prune takes no operands (use "
		    "--bank)");
	if ((rc = aoe_bank_target(o, dir, file)) < 0)
		return rc;
	if (o->soc)
		snprintf(soc, sizeof(soc), "%s", o->soc);
	if ((lk = bank_lock(dir)) < 0)
		return lk;
	if ((rc = rdr_open(&r, file, soc, sizeof(soc), 0)) < 0)
		goto out;
	if ((rc = aw_open(&w, file)) < 0) {
		rdr_close(&r);
		goto out;
	}
	while ((rc = rdr_next(&r)) == 1) {
		if (prune_match(o, &r.e, now)) {
			gone++;
			if (o->dry_run)
				printf("%llu %s\n", (unsigned long long)
				    r.e.key, r.e.op_type);
		} else {
			kept++;
			if (put_line(w.fp, r.e.line) < 0) {
				rc = aoe_err(AOE_EIO, "cannot write '%s': %s",
				    w.tmp, strerror(errno));
				break;
			}
		}
	}
	rdr_close(&r);
	if (rc < 0 || o->dry_run)
		aw_abort(&w);
	else if ((rc = aw_commit(&w)) == 0 && !o->quiet)
		aoe_warnx("%s: %ld pruned, %ld kept", file, gone, kept);
out:
	bank_unlock(lk);
	return rc;
}

/*
 * show, list, stats.
 */
static int
open_target(const aoe_bank_opts *o, int argc, char **argv, rdr *r,
    char *soc, size_t soclen)
{
	char dir[PATH_MAX], file[PATH_MAX];
	int rc;

	if (argc > 0)
		operand_file(o, argv[0], file);
	else if ((rc = aoe_bank_target(o, dir, file)) < 0)
		return rc;
	if (o->soc)
		snprintf(soc, soclen, "%s", o->soc);
	r->path = NULL;
	if ((rc = rdr_open(r, file, soc, soclen, argc == 0)) < 0)
		return rc;
	r->path = strcmp(file, "-") ? aoe_xstrdup(file) : "<stdin>";
	return 0;
}

static void
close_target(rdr *r)
{
	const char *p = r->path;

	rdr_close(r);
	if (p && strcmp(p, "<stdin>") != 0)
		free((char *)p);
}

int
aoe_bank_show(const aoe_bank_opts *o, int argc, char **argv)
{
	char soc[128] = "";
	uint64_t *keys;
	int i, nk = argc, found = 0, rc;
	rdr r;

	if (argc < 1)
		return aoe_err(AOE_EDATA, "show needs a key");
	keys = aoe_xcalloc((size_t)argc, sizeof(uint64_t));
	for (i = 0; i < argc; i++)
		if (parse_key(argv[i], &keys[i]) < 0) {
			free(keys);
			return aoe_err(AOE_EDATA, "'%s' is not a key",
			    argv[i]);
		}
	if ((rc = open_target(o, 0, NULL, &r, soc, sizeof(soc))) < 0) {
		free(keys);
		return rc;
	}
	while ((rc = rdr_next(&r)) == 1)
		for (i = 0; i < nk; i++)
			if (keys[i] == r.e.key) {
				puts(r.e.line);
				found++;
			}
	close_target(&r);
	free(keys);
	if (rc < 0)
		return rc;
	return found == nk ? 0 : 1;
}

int
aoe_bank_list(const aoe_bank_opts *o, int argc, char **argv)
{
	char soc[128] = "";
	rdr r;
	int rc;

	if ((rc = open_target(o, argc, argv, &r, soc, sizeof(soc))) < 0)
		return rc;
	while ((rc = rdr_next(&r)) == 1) {
		if (o->op_type && strcmp(o->op_type, r.e.op_type) != 0)
			continue;
		if (o->jsonl)
			puts(r.e.line);
		else
			printf("%llu %s %.3f %.3f %.2f%%\n",
			    (unsigned long long)r.e.key, r.e.op_type,
			    r.e.time_us, r.e.base_us, r.e.base_us > 0 ?
			    100 * (r.e.base_us - r.e.time_us) / r.e.base_us :
			    0.0);
	}
	close_target(&r);
	return rc;
}

int
aoe_bank_stats(const aoe_bank_opts *o, int argc, char **argv)
{
	struct { char name[64]; long n; double gain; } *t = NULL;
	char soc[128] = "";
	long total = 0, nt = 0, i, nogain = 0;
	double gain = 0;
	rdr r;
	int rc;

	if ((rc = open_target(o, argc, argv, &r, soc, sizeof(soc))) < 0)
		return rc;
	while ((rc = rdr_next(&r)) == 1) {
		double g = r.e.base_us > 0 ? (r.e.base_us - r.e.time_us) /
		    r.e.base_us : 0;
		for (i = 0; i < nt; i++)
			if (strcmp(t[i].name, r.e.op_type) == 0)
				break;
		if (i == nt) {
			t = aoe_xrealloc(t, (size_t)(nt + 1) * sizeof(*t));
			snprintf(t[nt].name, sizeof(t[nt].name), "%s",
			    r.e.op_type);
			t[nt].n = 0;
			t[nt].gain = 0;
			nt++;
		}
		t[i].n++;
		t[i].gain += g;
		gain += g;
		total++;
		if (r.e.time_us >= r.e.base_us)
			nogain++;
	}
	if (rc == 0) {
		printf("file %s\nsoc_version %s\nentries %ld\nno_gain %ld\n"
		    "mean_gain %.2f%%\n", r.path, soc[0] ? soc : "-", total,
		    nogain, total ? 100 * gain / total : 0.0);
		for (i = 0; i < nt; i++)
			printf("op_type %s %ld %.2f%%\n", t[i].name, t[i].n,
			    100 * t[i].gain / t[i].n);
	}
	free(t);
	close_target(&r);
	return rc;
}

/*
 * export and import: tar archives through libarchive.
 */

static int
add_filter(struct archive *a, const char *path)
{
	size_t l = strlen(path);
#define SUF(s) (l >= strlen(s) && strcmp(path + l - strlen(s), s) == 0)
	if (SUF(".tar.gz") || SUF(".tgz"))
		return archive_write_add_filter_gzip(a);
	if (SUF(".tar.xz") || SUF(".txz"))
		return archive_write_add_filter_xz(a);
	if (SUF(".tar.zst") || SUF(".tzst"))
		return archive_write_add_filter_zstd(a);
	if (SUF(".tar"))
		return archive_write_add_filter_none(a);
#undef SUF
	return aoe_err(AOE_EUNSUP, "'%s': the archive name must end in "
	    ".tar, .tar.gz, .tgz, .tar.xz or .tar.zst", path);
}

int
aoe_bank_export(const aoe_bank_opts *o, int argc, char **argv)
{
	char dir[PATH_MAX], file[PATH_MAX], soc[128] = "", hex[65], when[32];
	char buf[65536], *man = NULL;
	struct archive *a = NULL;
	struct archive_entry *ae;
	aoe_sha256 sh;
	long n = 0;
	int64_t size = 0;
	cJSON *m, *files, *f;
	size_t got;
	FILE *fp = NULL;
	aw w;
	int rc, lk;

	if (o->output == NULL || argc > 1)
		return aoe_err(AOE_EDATA, "export needs --output archive");
	if (argc == 1) {
		operand_file(o, argv[0], file);
	} else if ((rc = aoe_bank_target(o, dir, file)) < 0)
		return rc;
	{
		struct archive *t = archive_write_new();
		rc = add_filter(t, o->output);
		archive_write_free(t);
		if (rc < 0)
			return rc;
	}
	if (o->soc)
		snprintf(soc, sizeof(soc), "%s", o->soc);
	/* Pass 1: check the bank and checksum it (one open file). */
	lk = -1;
	{
		rdr r;
		if ((rc = rdr_open(&r, file, soc, sizeof(soc), 0)) < 0)
			return rc;
		while ((rc = rdr_next(&r)) == 1)
			n++;
		if (rc == 0) {
			fp = fdopen(dup(fileno(r.fp)), "r");
			rewind(fp);
		}
		rdr_close(&r);
		if (rc < 0)
			return rc;
	}
	if (soc[0] == '\0')
		snprintf(soc, sizeof(soc), "%s", o->soc ? o->soc :
		    aoe_soc_version());
	aoe_sha256_init(&sh);
	while ((got = fread(buf, 1, sizeof(buf), fp)) > 0) {
		aoe_sha256_update(&sh, buf, got);
		size += (int64_t)got;
	}
	aoe_sha256_hex(&sh, hex);
	rewind(fp);
	iso_now(when, sizeof(when));
	m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "format", "aoe-bank-archive");
	cJSON_AddNumberToObject(m, "version", 1);
	cJSON_AddStringToObject(m, "soc_version", soc);
	cJSON_AddStringToObject(m, "tool_version", AOE_VERSION);
	cJSON_AddStringToObject(m, "created_at", when);
	files = cJSON_AddArrayToObject(m, "files");
	f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "name", OPS_FILE);
	cJSON_AddNumberToObject(f, "entries", (double)n);
	cJSON_AddNumberToObject(f, "size", (double)size);
	cJSON_AddStringToObject(f, "sha256", hex);
	cJSON_AddItemToArray(files, f);
	man = cJSON_Print(m);
	cJSON_Delete(m);

	if ((rc = aw_open(&w, o->output)) < 0)
		goto out;
	a = archive_write_new();
	archive_write_set_format_pax_restricted(a);
	if ((rc = add_filter(a, o->output)) < 0 ||
	    archive_write_open_fd(a, fileno(w.fp)) != ARCHIVE_OK) {
		if (rc >= 0)
			rc = aoe_err(AOE_EIO, "cannot write '%s': %s",
			    o->output, archive_error_string(a));
		aw_abort(&w);
		goto out;
	}
	ae = archive_entry_new();
	archive_entry_set_pathname(ae, "manifest.json");
	archive_entry_set_filetype(ae, AE_IFREG);
	archive_entry_set_perm(ae, 0644);
	archive_entry_set_mtime(ae, time(NULL), 0);
	archive_entry_set_size(ae, (la_int64_t)strlen(man));
	rc = archive_write_header(a, ae) != ARCHIVE_OK ||
	    archive_write_data(a, man, strlen(man)) < 0;
	archive_entry_clear(ae);
	archive_entry_set_pathname(ae, OPS_FILE);
	archive_entry_set_filetype(ae, AE_IFREG);
	archive_entry_set_perm(ae, 0644);
	archive_entry_set_mtime(ae, time(NULL), 0);
	archive_entry_set_size(ae, size);
	if (!rc)
		rc = archive_write_header(a, ae) != ARCHIVE_OK;
	while (!rc && (got = fread(buf, 1, sizeof(buf), fp)) > 0)
		rc = archive_write_data(a, buf, got) < 0;
	archive_entry_free(ae);
	if (!rc)
		rc = archive_write_close(a) != ARCHIVE_OK;
	if (rc) {
		rc = aoe_err(AOE_EIO, "cannot write '%s': %s", o->output,
		    archive_error_string(a) ? archive_error_string(a) :
		    strerror(errno));
		aw_abort(&w);
		goto out;
	}
	rc = aw_commit(&w);
	if (rc == 0 && !o->quiet)
		aoe_warnx("%s: %ld entries, soc_version %s", o->output, n,
		    soc);
out:
	(void)lk;
	if (a)
		archive_write_free(a);
	if (fp)
		fclose(fp);
	free(man);
	return rc;
}

/* Check one archive entry's header; 0 or an error naming why. */
static int
check_member(const char *arch, struct archive_entry *ae,
    const aoe_bank_opts *o, const char **name)
{
	const char *p = archive_entry_pathname(ae), *s;
	mode_t ft = archive_entry_filetype(ae);

	if (p == NULL)
		return aoe_err(AOE_EDATA, "%s: an entry has no name", arch);
	if (p[0] == '/')
		return aoe_err(AOE_EDATA, "%s: entry '%s' has an absolute "
		    "path; refused", arch, p);
	for (s = p; *s; ) {
		size_t l = strcspn(s, "/");
		if (l == 2 && s[0] == '.' && s[1] == '.')
			return aoe_err(AOE_EDATA, "%s: entry '%s' contains "
			    "'..'; refused", arch, p);
		s += l;
		s += strspn(s, "/");
	}
	if (archive_entry_hardlink(ae) || ft == AE_IFLNK ||
	    archive_entry_symlink(ae))
		return aoe_err(AOE_EDATA, "%s: entry '%s' is a link; refused",
		    arch, p);
	if (ft == AE_IFCHR || ft == AE_IFBLK || ft == AE_IFIFO ||
	    ft == AE_IFSOCK)
		return aoe_err(AOE_EDATA, "%s: entry '%s' is a device or "
		    "fifo; refused", arch, p);
	if (ft != AE_IFREG)
		return aoe_err(AOE_EDATA, "%s: entry '%s' is not a regular "
		    "file; refused", arch, p);
	if (archive_entry_size(ae) > o->max_size)
		return aoe_err(AOE_ENOMEM, "%s: entry '%s' is %lld bytes, "
		    "over the limit of %lld; refused", arch, p,
		    (long long)archive_entry_size(ae),
		    (long long)o->max_size);
	while (p[0] == '.' && p[1] == '/')
		p += 2;
	if (strcmp(p, "manifest.json") != 0 && strcmp(p, OPS_FILE) != 0)
		return aoe_err(AOE_EDATA, "%s: unexpected entry '%s'; "
		    "refused", arch, p);
	*name = p;
	return 0;
}

int
aoe_bank_import(const aoe_bank_opts *o, int argc, char **argv)
{
	char dir[PATH_MAX], file[PATH_MAX], parent[PATH_MAX], tmp[PATH_MAX + 32];
	char hex[65], buf[65536], msoc[128] = "", *man = NULL, *sl;
	char label[PATH_MAX + 32];
	const char *arch, *name = NULL, *want;
	struct archive *a;
	struct archive_entry *ae;
	aoe_sha256 sh;
	int64_t size = 0, mlen = 0;
	int rc = 0, fd = -1, have_ops = 0, r;
	cJSON *m = NULL, *f;
	la_ssize_t got;
	long n = 0;

	tmp[0] = '\0';
	if (argc != 1)
		return aoe_err(AOE_EDATA, "import needs one archive");
	arch = argv[0];
	/* Errors in the extracted file name it in the archive. */
	snprintf(label, sizeof(label), "%s:%s", arch, OPS_FILE);
	a = archive_read_new();
	archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	if (archive_read_open_filename(a, strcmp(arch, "-") ? arch : NULL,
	    65536) != ARCHIVE_OK) {
		rc = aoe_err(errno == ENOENT ? AOE_EIO : AOE_EDATA,
		    "cannot open '%s': %s", arch, archive_error_string(a));
		goto out;
	}
	/*
	 * The nearest existing directory on the bank's path holds the
	 * extracted file: nothing is created before the archive is accepted.
	 */
	if ((rc = aoe_bank_target(o, dir, file)) < 0)
		goto out;
	snprintf(parent, sizeof(parent), "%s", dir);
	while (!is_dir(parent)) {
		if ((sl = strrchr(parent, '/')) == NULL) {
			strcpy(parent, ".");
			break;
		}
		if (sl == parent)
			sl[1] = '\0';
		else
			*sl = '\0';
	}
	aoe_sha256_init(&sh);
	while ((r = archive_read_next_header(a, &ae)) == ARCHIVE_OK) {
		if ((rc = check_member(arch, ae, o, &name)) < 0)
			goto out;
		if (strcmp(name, "manifest.json") == 0) {
			if (man || archive_entry_size(ae) > (1 << 20)) {
				rc = aoe_err(AOE_EDATA, "%s: a second or "
				    "oversized manifest.json", arch);
				goto out;
			}
			man = aoe_xmalloc((size_t)archive_entry_size(ae) + 1);
			while ((got = archive_read_data(a, man + mlen,
			    (size_t)(archive_entry_size(ae) - mlen))) > 0)
				mlen += got;
			if (got < 0 || mlen != archive_entry_size(ae)) {
				rc = aoe_err(AOE_EDATA, "%s: manifest.json: "
				    "%s", arch, got < 0 ?
				    archive_error_string(a) : "truncated");
				goto out;
			}
			man[mlen] = '\0';
			continue;
		}
		if (have_ops++) {
			rc = aoe_err(AOE_EDATA, "%s: two %s entries", arch,
			    OPS_FILE);
			goto out;
		}
		snprintf(tmp, sizeof(tmp), "%s/.aoe-import.XXXXXX", parent);
		if ((fd = mkstemp(tmp)) < 0) {
			rc = aoe_err(AOE_EIO, "cannot create a file in '%s': "
			    "%s", parent, strerror(errno));
			tmp[0] = '\0';
			goto out;
		}
		while ((got = archive_read_data(a, buf, sizeof(buf))) > 0) {
			size += got;
			if (size > o->max_size) {
				rc = aoe_err(AOE_ENOMEM, "%s: %s is over the "
				    "size limit", arch, OPS_FILE);
				goto out;
			}
			aoe_sha256_update(&sh, buf, (size_t)got);
			if (write(fd, buf, (size_t)got) != got) {
				rc = aoe_err(AOE_EIO, "cannot write '%s': %s",
				    tmp, strerror(errno));
				goto out;
			}
		}
		if (got < 0) {
			rc = aoe_err(AOE_EDATA, "%s: %s", arch,
			    archive_error_string(a));
			goto out;
		}
	}
	if (r != ARCHIVE_EOF) {
		rc = aoe_err(AOE_EDATA, "%s: not a valid archive: %s", arch,
		    archive_error_string(a));
		goto out;
	}
	if (man == NULL || !have_ops) {
		rc = aoe_err(AOE_EDATA, "%s: no %s in the archive", arch,
		    man ? OPS_FILE : "manifest.json");
		goto out;
	}
	aoe_sha256_hex(&sh, hex);
	if ((m = cJSON_Parse(man)) == NULL || jstr(m, "soc_version") == NULL ||
	    !aoe_soc_valid(jstr(m, "soc_version")) ||
	    !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(m, "files"))) {
		rc = aoe_err(AOE_EDATA, "%s: manifest.json is malformed",
		    arch);
		goto out;
	}
	f = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(m, "files"), 0);
	if (f == NULL || jstr(f, "sha256") == NULL ||
	    strcmp(jstr(f, "sha256"), hex) != 0 ||
	    !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(f, "size")) ||
	    cJSON_GetObjectItemCaseSensitive(f, "size")->valuedouble !=
	    (double)size) {
		rc = aoe_err(AOE_EDATA, "%s: %s does not match the manifest's "
		    "checksum", arch, OPS_FILE);
		goto out;
	}
	snprintf(msoc, sizeof(msoc), "%s", jstr(m, "soc_version"));
	want = o->soc ? o->soc : aoe_soc_version();
	if (strcmp(msoc, want) != 0) {
		rc = aoe_err(AOE_EUNSUP, "%s: the bank is for soc_version "
		    "'%s', not '%s'; name it with --soc-version %s to import "
		    "it", arch, msoc, want, msoc);
		goto out;
	}
	if ((rc = aoe_bank_target(o, dir, file)) < 0)
		goto out;
	/* Check the extracted file completely, then merge it in. */
	{
		char soc[128];
		rdr r2;
		snprintf(soc, sizeof(soc), "%s", msoc);
		if ((rc = rdr_open(&r2, tmp, soc, sizeof(soc), 0)) < 0)
			goto out;
		r2.path = label;
		while ((rc = rdr_next(&r2)) == 1)
			n++;
		rdr_close(&r2);
		if (rc < 0)
			goto out;
		f = cJSON_GetObjectItemCaseSensitive(f, "entries");
		if (!cJSON_IsNumber(f) || f->valuedouble != (double)n) {
			rc = aoe_err(AOE_EDATA, "%s: the manifest counts "
			    "%.0f entries, %s holds %ld", arch, cJSON_IsNumber(f) ?
			    f->valuedouble : -1.0, OPS_FILE, n);
			goto out;
		}
	}
	{
		char soc[128];
		mcount c;
		src s;
		snprintf(soc, sizeof(soc), "%s", msoc);
		memset(&s, 0, sizeof(s));
		if ((rc = rdr_open(&s.r, tmp, soc, sizeof(soc), 0)) < 0)
			goto out;
		s.r.path = label;
		rc = write_into_bank(o, dir, file, soc, sizeof(soc), &s, 1,
		    o->policy, &c);
		rdr_close(&s.r);
		if (rc == 0 && !o->quiet)
			aoe_warnx("%s: %s%ld entries from %s: %ld added, %ld "
			    "replaced, %ld kept, %ld collisions", file,
			    o->dry_run ? "dry run, " : "", n, arch, c.added,
			    c.updated, c.kept, c.collisions);
	}
out:
	if (fd >= 0)
		close(fd);
	if (tmp[0])
		unlink(tmp);
	cJSON_Delete(m);
	free(man);
	archive_read_free(a);
	return rc;
}

/*
 * The lookup index libaoe uses: the custom bank, then the built-in one.
 */
typedef struct bidx {
	char path[PATH_MAX];
	const char *name;
	char *data;		/* the file, mapped read-only */
	size_t len;
	size_t n;
	uint64_t *keys;
	const char **lines;	/* each ends at a newline */
} bidx;

static struct {
	pthread_mutex_t mu;
	int loaded;
	bidx b[2];
	int override;
	char over[2][PATH_MAX];
	uint64_t warned[64];
	int nwarned;
} B = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* The key of the line l .. end (end is its newline). */
static int
scan_key(const char *l, const char *end, uint64_t *k)
{
	const char *p = l;

	while ((p = memmem(p, (size_t)(end - p), "\"key\"", 5)) != NULL) {
		const char *q = p + 5;
		char d[24];
		size_t n;
		while (q < end && (*q == ' ' || *q == '\t'))
			q++;
		if (q < end && *q == ':') {
			q++;
			while (q < end && (*q == ' ' || *q == '\t'))
				q++;
			if (q >= end || *q != '"')
				return -1;
			for (n = 0, q++; q + n < end && q[n] >= '0' &&
			    q[n] <= '9'; n++)
				;
			if (n == 0 || n > 20 || q + n >= end || q[n] != '"')
				return -1;
			memcpy(d, q, n);
			d[n] = '\0';
			return parse_key(d, k);
		}
		p += 5;
	}
	return -1;
}

typedef struct kl {
	uint64_t k;
	const char *l;
} kl;

static int
cmp_kl(const void *a, const void *b)
{
	const kl *x = a, *y = b;

	return x->k < y->k ? -1 : x->k > y->k;
}

/*
 * Index a bank file: mapped, not read, so that loading costs a scan of
 * the keys and no copy; a writer's rename leaves the mapped file intact.
 */
static void
idx_load(bidx *b, const char *path, const char *name)
{
	size_t len, i, cap = 0, bad = 0;
	const char *p, *nl;
	struct stat st;
	void *data;
	int sorted = 1, fd;

	memset(b, 0, sizeof(*b));
	b->name = name;
	snprintf(b->path, sizeof(b->path), "%s", path);
	if (access(path, F_OK) != 0)
		return;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 ||
	    fstat(fd, &st) < 0) {
		aoe_warnx("%s bank ignored: cannot open '%s': %s", name, path,
		    strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	if (!S_ISREG(st.st_mode) || st.st_size == 0) {
		if (!S_ISREG(st.st_mode))
			aoe_warnx("%s bank ignored: '%s' is not a regular "
			    "file", name, path);
		close(fd);
		return;
	}
	len = (size_t)st.st_size;
	data = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	close(fd);
	if (data == MAP_FAILED) {
		aoe_warnx("%s bank ignored: cannot read '%s': %s", name, path,
		    strerror(errno));
		return;
	}
	b->data = data;
	b->len = len;
	for (p = b->data; p < b->data + len; p = nl + 1) {
		uint64_t k;
		if ((nl = memchr(p, '\n', (size_t)(b->data + len - p))) ==
		    NULL) {
			bad++;	/* a truncated last line is not an entry */
			break;
		}
		if (scan_key(p, nl, &k) < 0) {
			bad++;
			continue;
		}
		if (b->n == cap) {
			cap = cap ? cap * 2 : 1024;
			b->keys = aoe_xrealloc(b->keys, cap * sizeof(uint64_t));
			b->lines = aoe_xrealloc(b->lines, cap * sizeof(char *));
		}
		if (b->n && k <= b->keys[b->n - 1])
			sorted = 0;
		b->keys[b->n] = k;
		b->lines[b->n++] = p;
	}
	if (bad)
		aoe_warnx("%s bank '%s': %zu malformed lines ignored (run "
		    "aoe-bank verify)", name, path, bad);
	if (!sorted) {
		kl *v = aoe_xcalloc(b->n, sizeof(kl));
		for (i = 0; i < b->n; i++) {
			v[i].k = b->keys[i];
			v[i].l = b->lines[i];
		}
		qsort(v, b->n, sizeof(kl), cmp_kl);
		for (i = 0; i < b->n; i++) {
			b->keys[i] = v[i].k;
			b->lines[i] = v[i].l;
		}
		free(v);
		aoe_warnx("%s bank '%s' is not sorted (run aoe-bank verify)",
		    name, path);
	}
}

static void
idx_free(bidx *b)
{
	if (b->data)
		munmap(b->data, b->len);
	free(b->keys);
	free(b->lines);
	memset(b, 0, sizeof(*b));
}

static void
bank_load_locked(void)
{
	char dir[PATH_MAX], path[PATH_MAX];

	if (B.loaded)
		return;
	if (B.override) {
		idx_load(&B.b[0], B.over[0], "custom");
		idx_load(&B.b[1], B.over[1], "built-in");
	} else {
		if (aoe_bank_dir(0, NULL, dir, sizeof(dir)) < 0) {
			aoe_warnx("custom bank ignored: %s", aoe_errmsg());
			dir[0] = '\0';
		}
		snprintf(path, sizeof(path), "%s/%s", dir, OPS_FILE);
		idx_load(&B.b[0], dir[0] ? path : "", "custom");
		snprintf(path, sizeof(path), "%s/%s/%s", aoe_bank_builtin_dir(),
		    aoe_soc_version(), OPS_FILE);
		idx_load(&B.b[1], path, "built-in");
	}
	B.loaded = 1;
}

void
aoe_bank_use(const char *custom, const char *builtin)
{
	pthread_mutex_lock(&B.mu);
	idx_free(&B.b[0]);
	idx_free(&B.b[1]);
	B.loaded = 0;
	B.nwarned = 0;
	B.override = custom || builtin;
	snprintf(B.over[0], PATH_MAX, "%s", custom ? custom : "");
	snprintf(B.over[1], PATH_MAX, "%s", builtin ? builtin : "");
	pthread_mutex_unlock(&B.mu);
}

size_t
aoe_bank_loaded_entries(void)
{
	size_t n;

	pthread_mutex_lock(&B.mu);
	bank_load_locked();
	n = B.b[0].n + B.b[1].n;
	pthread_mutex_unlock(&B.mu);
	return n;
}

/* Warn once per key (under B.mu). */
static void
warn_once(uint64_t key, const char *fmt, const char *a, const char *b)
{
	int i;

	for (i = 0; i < B.nwarned; i++)
		if (B.warned[i] == key)
			return;
	if (B.nwarned < 64)
		B.warned[B.nwarned++] = key;
	aoe_warnx(fmt, a, (unsigned long long)key, b);
}

int
aoe_bank_find(const aoe_graph *g, const aoe_node *n, int nthreads,
    aoe_sched *s, const char **from)
{
	char *sig, why[256];
	uint64_t key;
	int i, hit = 0;

	if (from)
		*from = "miss";
	sig = aoe_xmalloc(65536);
	if (aoe_op_signature(g, n, nthreads, sig, 65536) < 0) {
		free(sig);
		return 0;
	}
	key = aoe_op_key(sig);
	pthread_mutex_lock(&B.mu);
	bank_load_locked();
	for (i = 0; i < 2 && !hit; i++) {
		bidx *b = &B.b[i];
		size_t lo = 0, hi = b->n;
		cJSON *j;
		const char *es, *soc;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (b->keys[mid] < key)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo >= b->n || b->keys[lo] != key)
			continue;
		if ((j = cJSON_ParseWithLength(b->lines[lo], (size_t)((const
		    char *)memchr(b->lines[lo], '\n', (size_t)(b->data +
		    b->len - b->lines[lo])) - b->lines[lo]))) == NULL) {
			warn_once(key, "%s bank: entry %llu is malformed; "
			    "ignored%s", b->name, "");
			continue;
		}
		es = jstr(j, "signature");
		soc = jstr(j, "soc_version");
		if (soc == NULL || strcmp(soc, aoe_soc_version()) != 0) {
			warn_once(key, "%s bank: entry %llu is for another "
			    "soc_version; ignored%s", b->name, "");
		} else if (es == NULL || strcmp(es, sig) != 0) {
			warn_once(key, "%s bank: entry %llu has another "
			    "signature (a hash collision) for node '%s'; "
			    "ignored", b->name, n->name);
			if (from)
				*from = "collision";
		} else if (sched_from_json(cJSON_GetObjectItemCaseSensitive(j,
		    "schedule"), s, why, sizeof(why)) < 0) {
			memset(s, 0, sizeof(*s));
			warn_once(key, "%s bank: entry %llu: %s; ignored",
			    b->name, why);
		} else {
			hit = 1;
			if (from)
				*from = b->name;
		}
		cJSON_Delete(j);
	}
	pthread_mutex_unlock(&B.mu);
	free(sig);
	return hit;
}

/*
 * The lookup aoe_graph_prepare() makes.  The thread count is the node's
 * own (a subgraph decision), else the run's, else the number of online
 * CPUs.
 */
int
aoe_bank_lookup(const aoe_graph *g, const aoe_node *n, int nthreads,
    aoe_sched *s)
{
	int t = n->nthreads > 0 ? n->nthreads : nthreads;

	if (t <= 0)
		t = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (t <= 0)
		t = 1;
	return aoe_bank_find(g, n, t, s, NULL);
}

/*
 * The subgraph bank, read once per process (or again after
 * aoe_bank_graph_use()).
 */
static struct {
	int loaded;
	char *file;
	int n;
	struct gent {
		uint64_t key;
		char *sig;
		aoe_sched d;
		int warned;
	} *v;
} GB;

void
aoe_bank_graph_use(const char *file)
{
	int i;

	for (i = 0; i < GB.n; i++)
		free(GB.v[i].sig);
	free(GB.v);
	free(GB.file);
	memset(&GB, 0, sizeof(GB));
	GB.file = file ? aoe_xstrdup(file) : NULL;
}

static void
gbank_load(void)
{
	char dir[PATH_MAX], file[PATH_MAX + 32], *line = NULL;
	const char *soc = aoe_soc_version();
	size_t cap = 0;
	FILE *fp;
	int e = errno;

	GB.loaded = 1;
	if (GB.file)
		snprintf(file, sizeof(file), "%s", GB.file);
	else if (aoe_bank_dir(1, NULL, dir, sizeof(dir)) < 0)
		return;
	else
		snprintf(file, sizeof(file), "%s/graphs.jsonl", dir);
	if ((fp = fopen(file, "r")) == NULL) {
		errno = e;
		return;
	}
	while (getline(&line, &cap, fp) >= 0) {
		cJSON *j = cJSON_Parse(line), *s, *it;
		const cJSON *k, *sg, *sv;
		unsigned long long key;
		char *end;
		struct gent ge;

		if (j == NULL)
			continue;
		k = cJSON_GetObjectItemCaseSensitive(j, "key");
		sg = cJSON_GetObjectItemCaseSensitive(j, "signature");
		sv = cJSON_GetObjectItemCaseSensitive(j, "soc_version");
		s = cJSON_GetObjectItemCaseSensitive(j, "schedule");
		memset(&ge, 0, sizeof(ge));
		if (!cJSON_IsString(k) || !cJSON_IsString(sg) ||
		    !cJSON_IsString(sv) || !cJSON_IsObject(s) ||
		    strcmp(sv->valuestring, soc) != 0)
			goto next;
		errno = 0;
		key = strtoull(k->valuestring, &end, 10);
		if (errno || *end || key != aoe_op_key(sg->valuestring))
			goto next;
		cJSON_ArrayForEach(it, s)
			if (cJSON_IsNumber(it) && it->string)
				aoe_sched_set(&ge.d, it->string,
				    (int64_t)it->valuedouble);
		ge.key = key;
		ge.sig = aoe_xstrdup(sg->valuestring);
		GB.v = aoe_xrealloc(GB.v, (size_t)(GB.n + 1) * sizeof(*GB.v));
		GB.v[GB.n++] = ge;
next:
		cJSON_Delete(j);
	}
	free(line);
	fclose(fp);
	errno = e;
}

int
aoe_bank_graph_find(const char *sig, aoe_sched *d)
{
	uint64_t key = aoe_op_key(sig);
	int i;

	if (!GB.loaded)
		gbank_load();
	for (i = 0; i < GB.n; i++) {
		if (GB.v[i].key != key)
			continue;
		if (strcmp(GB.v[i].sig, sig) == 0) {
			*d = GB.v[i].d;
			return 1;
		}
		if (!GB.v[i].warned)
			aoe_warnx("subgraph bank entry %llu: its signature "
			    "is not the subgraph's (a hash collision); "
			    "ignored", (unsigned long long)key);
		GB.v[i].warned = 1;
	}
	return 0;
}

int
aoe_bank_graph_entries(void)
{
	if (!GB.loaded)
		gbank_load();
	return GB.n;
}
