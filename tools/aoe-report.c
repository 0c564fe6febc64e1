/*
 * aoe-report - turn tuning records into AOE result files and a summary.
 *
 * Records are JSON Lines (see aoe-bank(5)): one per operator case from
 * aoe-opat, one per subgraph from aoe-sgat, and optionally one "model"
 * record from aoe-sgat with the whole model's baseline and result times.
 * Each record file is one tuning task.  aoe-report writes
 * aoe_result_opat_<timestamp>_pid<pid>.json and/or
 * aoe_result_sgat_<timestamp>_pid<pid>.json into the work directory, in
 * the schema of aoe-result(5), with one report_<timestamp>_<tid> entry per
 * task, and prints a table on stdout.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "aoe.h"

static const char usage_text[] =
    "usage: aoe-report [-hqV] [--output-dir dir] [--plot file]\n"
    "                  [--plot-top n] [--tuning-name name] [record-file ...]\n";

static void
usage(int status)
{
	fputs(usage_text, status ? stderr : stdout);
	exit(status);
}

/* The records of one tuning task (one record file), split by job type. */
typedef struct recs {
	cJSON *opat;		/* array of operator-case records */
	cJSON *sgat;		/* array of subgraph records */
	cJSON *model;		/* the last "model" record, or NULL */
	double tuning_s;	/* sum of tuning_time_s */
	char *name;		/* its tuning_name */
} recs;

/* Every task read. */
typedef struct tasks {
	recs *t;
	int n;
	int bad;		/* records refused */
	const char *name;	/* --tuning-name, or NULL */
} tasks;

static int
num(const cJSON *o, const char *name, double *v)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, name);

	if (!cJSON_IsNumber(x) || x->valuedouble != x->valuedouble)
		return -1;
	*v = x->valuedouble;
	return 0;
}

static const char *
str(const cJSON *o, const char *name)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsString(x) ? x->valuestring : NULL;
}

static const char *outcomes[] = { "add", "update", "reserved",
	"unsatisfied", "failed", NULL };

/* Check one record and file it; returns 0 or a message in why. */
static int
take(recs *r, cJSON *o, char *why, size_t n)
{
	const char *kind = str(o, "kind"), *out = str(o, "outcome");
	double b = 0, a = 0, t;
	int i;

	if (!cJSON_IsObject(o)) {
		snprintf(why, n, "not a JSON object");
		return -1;
	}
	if (kind && strcmp(kind, "model") == 0) {
		if (num(o, "baseline_us", &b) < 0 || num(o, "result_us", &a) <
		    0 || b <= 0 || a <= 0) {
			snprintf(why, n, "model record needs positive "
			    "baseline_us and result_us");
			return -1;
		}
		cJSON_Delete(r->model);
		r->model = o;
		return 0;
	}
	if (kind && strcmp(kind, "opat") != 0 && strcmp(kind, "sgat") != 0) {
		snprintf(why, n, "unknown kind '%s'", kind);
		return -1;
	}
	for (i = 0; outcomes[i]; i++)
		if (out && strcmp(out, outcomes[i]) == 0)
			break;
	if (outcomes[i] == NULL) {
		snprintf(why, n, "\"outcome\" must be add, update, reserved, "
		    "unsatisfied or failed");
		return -1;
	}
	if (strcmp(out, "failed") != 0 && (num(o, "before_us", &b) < 0 ||
	    num(o, "after_us", &a) < 0 || b < 0 || a < 0)) {
		snprintf(why, n, "\"before_us\" and \"after_us\" must be "
		    "non-negative numbers");
		return -1;
	}
	/* Admission: only a case that got faster goes into the bank. */
	if ((strcmp(out, "add") == 0 || strcmp(out, "update") == 0) &&
	    !(a < b)) {
		snprintf(why, n, "outcome %s, but \"after_us\" is not below "
		    "\"before_us\"", out);
		return -1;
	}
	if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, "key")) &&
	    !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(o, "key")) &&
	    str(o, "repo_key") == NULL) {
		snprintf(why, n, "no \"key\" or \"repo_key\"");
		return -1;
	}
	if (num(o, "tuning_time_s", &t) == 0 && t > 0)
		r->tuning_s += t;
	if ((kind && strcmp(kind, "sgat") == 0) || str(o, "repo_key"))
		cJSON_AddItemToArray(r->sgat, o);
	else
		cJSON_AddItemToArray(r->opat, o);
	return 0;
}

/* The task's name: --tuning-name, else the file's, less .jsonl/.json. */
static char *
task_name(const tasks *ts, const char *path)
{
	const char *b = strrchr(path, '/'), *sfx[] = { ".jsonl", ".json",
	    NULL };
	char *s;
	size_t n;
	int i;

	if (ts->name)
		return aoe_xstrdup(ts->name);
	if (strcmp(path, "-") == 0)
		return aoe_xstrdup("aoe");
	b = b ? b + 1 : path;
	n = strlen(b);
	for (i = 0; sfx[i]; i++)
		if (n > strlen(sfx[i]) && strcmp(b + n - strlen(sfx[i]),
		    sfx[i]) == 0) {
			n -= strlen(sfx[i]);
			break;
		}
	if (n == 0)
		return aoe_xstrdup("aoe");
	s = aoe_xstrdup(b);
	s[n] = '\0';
	return s;
}

static void
task_free(recs *r)
{
	cJSON_Delete(r->opat);
	cJSON_Delete(r->sgat);
	cJSON_Delete(r->model);
	free(r->name);
}

/* One record file: one tuning task (dropped if it holds no record). */
static int
read_records(const char *path, void *arg)
{
	tasks *ts = arg;
	recs *r;
	uint8_t *buf;
	size_t len;
	char *line, *save = NULL, why[256];
	int rc, lineno = 0, status = 0;

	if ((rc = aoe_read_file(path, &buf, &len)) < 0) {
		aoe_warnx("%s", aoe_errmsg());
		return aoe_exit_status(rc);
	}
	buf = aoe_xrealloc(buf, len + 1);
	buf[len] = '\0';
	if (memchr(buf, '\0', len) != NULL) {
		aoe_warnx("%s: binary data, not JSON Lines", path);
		free(buf);
		ts->bad++;
		return AOE_EXIT_DATA;
	}
	ts->t = aoe_xrealloc(ts->t, (ts->n + 1) * sizeof(*ts->t));
	r = &ts->t[ts->n++];
	memset(r, 0, sizeof(*r));
	r->opat = cJSON_CreateArray();
	r->sgat = cJSON_CreateArray();
	r->name = task_name(ts, path);
	for (line = strtok_r((char *)buf, "\n", &save); line;
	    line = strtok_r(NULL, "\n", &save)) {
		cJSON *o;

		lineno++;
		if (strspn(line, " \t\r") == strlen(line))
			continue;
		if ((o = cJSON_Parse(line)) == NULL) {
			aoe_warnx("%s:%d: malformed JSON", path, lineno);
			ts->bad++;
			status = AOE_EXIT_DATA;
			continue;
		}
		if (take(r, o, why, sizeof(why)) < 0) {
			aoe_warnx("%s:%d: bad record: %s", path, lineno, why);
			cJSON_Delete(o);
			ts->bad++;
			status = AOE_EXIT_DATA;
		}
	}
	free(buf);
	if (cJSON_GetArraySize(r->opat) == 0 &&
	    cJSON_GetArraySize(r->sgat) == 0)
		task_free(&ts->t[--ts->n]);
	return status;
}

/* "26.12%": (before - after) / before, two decimals. */
static void
gain(double before, double after, char *buf, size_t n)
{
	snprintf(buf, n, "%.2f%%", before > 0 ? (before - after) / before *
	    100.0 : 0.0);
}

/* The first op name a record covers (or its key). */
static const char *
first_name(const cJSON *o, char *buf, size_t n)
{
	const cJSON *names = cJSON_GetObjectItemCaseSensitive(o, "names");
	const cJSON *key = cJSON_GetObjectItemCaseSensitive(o, "key");

	if (cJSON_IsArray(names) && cJSON_IsString(names->child))
		return names->child->valuestring;
	if (cJSON_IsString(names))
		return names->valuestring;
	if (cJSON_IsString(key))
		return key->valuestring;
	if (cJSON_IsNumber(key)) {
		snprintf(buf, n, "%.0f", key->valuedouble);
		return buf;
	}
	return str(o, "repo_key") ? str(o, "repo_key") : "?";
}

static cJSON *
summary(const cJSON *arr)
{
	const cJSON *o;
	int add = 0, upd = 0, res = 0, uns = 0;
	cJSON *s = cJSON_CreateObject();

	cJSON_ArrayForEach(o, arr) {
		const char *out = str(o, "outcome");
		if (strcmp(out, "add") == 0)
			add++;
		else if (strcmp(out, "update") == 0)
			upd++;
		else if (strcmp(out, "reserved") == 0)
			res++;
		else
			uns++;		/* unsatisfied and failed */
	}
	cJSON_AddNumberToObject(s, "repo_add_num", add);
	cJSON_AddNumberToObject(s, "repo_hit_num", res + upd);
	cJSON_AddNumberToObject(s, "repo_reserved_num", res);
	cJSON_AddNumberToObject(s, "repo_unsatisfied_num", uns);
	cJSON_AddNumberToObject(s, "repo_update_num", upd);
	cJSON_AddNumberToObject(s, "total_num", add + res + upd + uns);
	return s;
}

/* Operator (us) or subgraph (ms) entry for repo_modified_*. */
static cJSON *
entry(const cJSON *o, int sgat)
{
	cJSON *e = cJSON_CreateObject();
	double b = 0, a = 0;
	char g[32], kb[32];

	num(o, "before_us", &b);
	num(o, "after_us", &a);
	gain(b, a, g, sizeof(g));
	if (sgat) {
		cJSON_AddStringToObject(e, "repo_key", str(o, "repo_key") ?
		    str(o, "repo_key") : first_name(o, kb, sizeof(kb)));
		cJSON_AddNumberToObject(e, "performance_before_tune(ms)",
		    b / 1000.0);
		cJSON_AddNumberToObject(e, "performance_after_tune(ms)",
		    a / 1000.0);
	} else {
		const cJSON *names = cJSON_GetObjectItemCaseSensitive(o,
		    "names");
		cJSON_AddStringToObject(e, "op_name", first_name(o, kb,
		    sizeof(kb)));
		cJSON_AddStringToObject(e, "op_type", str(o, "op_type") ?
		    str(o, "op_type") : "");
		cJSON_AddNumberToObject(e, "performance_before_tune(us)", b);
		cJSON_AddNumberToObject(e, "performance_after_tune(us)", a);
		if (cJSON_IsArray(names))
			cJSON_AddItemToObject(e, "op_names",
			    cJSON_Duplicate(names, 1));
	}
	cJSON_AddStringToObject(e, "performance_improvement", g);
	return e;
}

static cJSON *
job_object(const recs *r, int sgat)
{
	const cJSON *arr = sgat ? r->sgat : r->opat, *o;
	cJSON *j = cJSON_CreateObject(), *mod, *add, *upd, *failed = NULL;
	int nfail = 0;
	char g[32], kb[32];

	cJSON_ArrayForEach(o, arr)
		if (strcmp(str(o, "outcome"), "failed") == 0)
			nfail++;
	if (sgat) {
		double b = 0, a = 0;
		if (r->model) {
			num(r->model, "baseline_us", &b);
			num(r->model, "result_us", &a);
		}
		gain(b, a, g, sizeof(g));
		cJSON_AddNumberToObject(j, "model_baseline_performance(ms)",
		    b / 1000.0);
		cJSON_AddNumberToObject(j, "model_result_performance(ms)",
		    a / 1000.0);
		cJSON_AddStringToObject(j, "model_performance_improvement", g);
	} else {
		cJSON_AddStringToObject(j, "opat_tune_result", nfail ?
		    "tune failed" : "tune success");
		/*
		 * aoe-opat's whole-model check (not in AOE's files): the
		 * model without and with the run's decisions, and the
		 * operators backed out because it was slower with them.
		 */
		if (r->model) {
			double b = 0, a = 0;
			cJSON *bo = NULL;
			num(r->model, "baseline_us", &b);
			num(r->model, "result_us", &a);
			gain(b, a, g, sizeof(g));
			cJSON_AddNumberToObject(j,
			    "model_baseline_performance(ms)", b / 1000.0);
			cJSON_AddNumberToObject(j,
			    "model_result_performance(ms)", a / 1000.0);
			cJSON_AddStringToObject(j,
			    "model_performance_improvement", g);
			bo = cJSON_AddArrayToObject(j,
			    "backed_out_operators");
			cJSON_ArrayForEach(o, arr)
				if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
				    o, "backed_out")))
					cJSON_AddItemToArray(bo,
					    cJSON_CreateString(first_name(o, kb,
					    sizeof(kb))));
		}
	}
	mod = cJSON_AddObjectToObject(j, sgat ? "repo_modified_subgraphs" :
	    "repo_modified_operators");
	add = cJSON_AddArrayToObject(mod, sgat ? "add_repo_subgraphs" :
	    "add_repo_operators");
	upd = cJSON_AddArrayToObject(mod, sgat ? "update_repo_subgraphs" :
	    "update_repo_operators");
	cJSON_ArrayForEach(o, arr) {
		const char *out = str(o, "outcome");
		if (strcmp(out, "add") == 0)
			cJSON_AddItemToArray(add, entry(o, sgat));
		else if (strcmp(out, "update") == 0)
			cJSON_AddItemToArray(upd, entry(o, sgat));
		else if (strcmp(out, "failed") == 0) {
			if (failed == NULL)
				failed = cJSON_CreateArray();
			cJSON_AddItemToArray(failed, cJSON_CreateString(
			    first_name(o, kb, sizeof(kb))));
		}
	}
	cJSON_AddItemToObject(j, "repo_summary", summary(arr));
	if (failed)
		cJSON_AddItemToObject(j, sgat ? "tune_failed_subgraphs" :
		    "tune_failed_operators", failed);
	return j;
}

/* Timestamp as AOE writes it: YYYYmmddHHMMSSmmm. */
static void
stamp(char *buf, size_t n)
{
	struct timeval tv;
	struct tm tm;

	gettimeofday(&tv, NULL);
	localtime_r(&tv.tv_sec, &tm);
	snprintf(buf, n, "%04d%02d%02d%02d%02d%02d%03d",
	    (tm.tm_year + 1900) % 10000, (tm.tm_mon + 1) % 100,
	    tm.tm_mday % 100, tm.tm_hour % 100, tm.tm_min % 100,
	    tm.tm_sec % 100, (int)(tv.tv_usec / 1000) % 1000);
}

/*
 * Write the result file of one job type atomically, with one entry per
 * task that has records of that type.
 */
static int
write_result(const char *dir, const tasks *tt, int sgat, char *path,
    size_t pn)
{
	cJSON *root = cJSON_CreateObject(), *task, *basic, *b;
	char ts[64], first[64] = "", key[96];
	char *text;
	aoe_ofile of;
	int i, rc;

	for (i = 0; i < tt->n; i++) {
		const recs *r = &tt->t[i];
		if (cJSON_GetArraySize(sgat ? r->sgat : r->opat) == 0)
			continue;
		/* Tasks reported within a millisecond wait for the next. */
		do {
			stamp(ts, sizeof(ts));
			snprintf(key, sizeof(key), "report_%s_%ld", ts,
			    (long)gettid());
			if (cJSON_HasObjectItem(root, key))
				usleep(200);
		} while (cJSON_HasObjectItem(root, key));
		if (!first[0])
			snprintf(first, sizeof(first), "%s", ts);
		task = cJSON_AddArrayToObject(root, key);
		basic = cJSON_CreateObject();
		b = cJSON_AddObjectToObject(basic, "basic");
		cJSON_AddStringToObject(b, "tuning_name", r->name);
		cJSON_AddNumberToObject(b, "tuning_time(s)",
		    (double)(long long)(r->tuning_s * 1000 + 0.5) / 1000.0);
		cJSON_AddItemToArray(task, basic);
		b = cJSON_CreateObject();
		cJSON_AddItemToObject(b, sgat ? "SGAT" : "OPAT",
		    job_object(r, sgat));
		cJSON_AddItemToArray(task, b);
	}
	text = cJSON_Print(root);
	cJSON_Delete(root);
	snprintf(path, pn, "%s/aoe_result_%s_%s_pid%ld.json", dir,
	    sgat ? "sgat" : "opat", first, (long)getpid());
	if ((rc = aoe_ofile_open(&of, path)) < 0) {
		free(text);
		return rc;
	}
	if (fputs(text, of.fp) == EOF || fputc('\n', of.fp) == EOF) {
		rc = aoe_err(AOE_EIO, "cannot write '%s': %s", path,
		    strerror(errno));
		aoe_ofile_abort(&of);
		free(text);
		return rc;
	}
	free(text);
	if ((rc = aoe_ofile_close(&of)) < 0)
		return rc;
	return 0;
}

static void
print_table(const tasks *tt)
{
	const cJSON *o;
	char g[32], kb[32];
	int i, t;

	printf("%-40s %-20s %12s %12s %9s  %s\n", "op", "type", "before_us",
	    "after_us", "gain", "outcome");
	for (t = 0; t < tt->n; t++)
	for (i = 0; i < 2; i++)
		cJSON_ArrayForEach(o, (i ? tt->t[t].sgat : tt->t[t].opat)) {
			double b = 0, a = 0;
			num(o, "before_us", &b);
			num(o, "after_us", &a);
			gain(b, a, g, sizeof(g));
			printf("%-40s %-20s %12.1f %12.1f %9s  %s\n",
			    first_name(o, kb, sizeof(kb)), i ? "subgraph" :
			    str(o, "op_type") ? str(o, "op_type") : "?", b, a,
			    g, str(o, "outcome"));
		}
}

/* The longest case label, in bytes (the bars' left margin fits it). */
#define LABEL 40

/* A case as the plot draws it. */
typedef struct pcase {
	const cJSON *rec;
	const char *name, *type;
	double before, after, saved;	/* saved: in the model, us */
	int count;			/* operators or instances it covers */
} pcase;

/* Most time saved first, then the slowest. */
static int
by_saved(const void *a, const void *b)
{
	const pcase *x = a, *y = b;

	if (x->saved != y->saved)
		return x->saved > y->saved ? -1 : 1;
	if (x->before != y->before)
		return x->before > y->before ? -1 : 1;
	return 0;
}

/*
 * A case's label, as a double-quoted gnuplot data field: its op type and
 * first name, the tail of a long name (where ONNX names differ), and how
 * many operators share it, then suffix; no '"'.
 */
static void
put_label(FILE *fp, const pcase *c, const char *suffix)
{
	char count[16] = "", buf[160], *p;
	int room;
	size_t n;

	if (c->count > 1)
		snprintf(count, sizeof(count), " x%d", c->count);
	/* At most LABEL bytes, so that the labels fit the margin. */
	room = LABEL - (int)strlen(count) - (int)strlen(suffix) -
	    (c->type ? (int)strlen(c->type) + 1 : 0);
	if (room < 8)
		room = 8;
	n = strlen(c->name);
	if ((int)n > room)
		snprintf(buf, sizeof(buf), "%s%s...%s%s%s", c->type ? c->type :
		    "", c->type ? " " : "", c->name + n - (room - 3), count,
		    suffix);
	else
		snprintf(buf, sizeof(buf), "%s%s%s%s%s", c->type ? c->type :
		    "", c->type ? " " : "", c->name, count, suffix);
	for (p = buf; *p; p++)
		if (*p == '"' || *p == '\n' || *p == '\\')
			*p = '_';
	fprintf(fp, "\"%s\"", buf);
}

/* S as a single-quoted gnuplot string: a quote is doubled. */
static void
put_quoted(FILE *fp, const char *s)
{
	fputc('\'', fp);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', fp);
		fputc(*s, fp);
	}
	fputc('\'', fp);
}

/*
 * Ten colours that stay apart (Tableau 10): the curves drawn are never
 * more, so no two share one.
 */
#define NCOLOURS 10
static const char colours[] = "#4e79a7 #f28e2b #e15759 #76b7b2 #59a14f "
    "#edc948 #b07aa1 #ff9da7 #9c755f #17becf";

/* Every case of the records, with what it saved. */
static pcase *
plot_cases(const tasks *tt, int *np)
{
	pcase *pc = NULL;
	const cJSON *o;
	char kb[32];
	int t, i, n = 0;

	for (t = 0; t < tt->n; t++)
	for (i = 0; i < 2; i++)
		cJSON_ArrayForEach(o, (i ? tt->t[t].sgat : tt->t[t].opat)) {
			const cJSON *names = cJSON_GetObjectItemCaseSensitive(o,
			    "names");
			const char *out = str(o, "outcome");
			double inst = 1;
			pcase *c;

			pc = aoe_xrealloc(pc, (n + 1) * sizeof(*pc));
			c = &pc[n++];
			memset(c, 0, sizeof(*c));
			c->rec = o;
			c->name = first_name(o, kb, sizeof(kb));
			if (c->name == kb)
				c->name = str(o, "key") ? str(o, "key") : "?";
			c->type = str(o, "op_type");
			num(o, "before_us", &c->before);
			num(o, "after_us", &c->after);
			if (i == 0 && cJSON_IsArray(names))
				inst = cJSON_GetArraySize(names);
			else if (num(o, "instances", &inst) < 0)
				inst = 1;
			c->count = inst > 1 ? (int)inst : 1;
			/* Only a schedule the bank took saves anything. */
			if (out && (strcmp(out, "add") == 0 ||
			    strcmp(out, "update") == 0) && c->after < c->before)
				c->saved = (c->before - c->after) * c->count;
		}
	*np = n;
	return pc;
}

/*
 * Draw the records with gnuplot, into an SVG or PNG by the file's
 * suffix, readable from one case to hundreds: the time each case saved
 * as bars sorted by it, the top cases labelled and the rest summed in
 * one bar; then the convergence (best time so far over the baseline, by
 * trial) of the top cases that have a history, at most ten, each its
 * own colour, the key beside the plot.
 */
static int
plot(const tasks *tt, const char *file, int top)
{
	const char *sfx = strrchr(file, '.'), *term;
	char dat[] = "/tmp/aoe-plot-XXXXXX", hist[] = "/tmp/aoe-hist-XXXXXX";
	FILE *fp, *hp, *gp;
	pcase *pc;
	double total_b = 0, total_s = 0, rest_s = 0, max_s = 0, trials;
	int fd, hd, i, n, shown, nrest, nhist = 0, rc = 0, st, height, bars;
	int improved = 0;

	if (sfx && strcmp(sfx, ".svg") == 0)
		term = "svg size 1100,%d dynamic noenhanced font 'sans,11'";
	else if (sfx && strcmp(sfx, ".png") == 0)
		term = "pngcairo size 1100,%d noenhanced font 'sans,10'";
	else
		return aoe_err(AOE_EUNSUP, "--plot '%s': the file must end in "
		    ".svg or .png", file);
	pc = plot_cases(tt, &n);
	qsort(pc, n, sizeof(*pc), by_saved);
	for (i = 0; i < n; i++) {
		total_b += pc[i].before * pc[i].count;
		total_s += pc[i].saved;
		improved += pc[i].saved > 0;
	}
	shown = n < top ? n : top;
	nrest = n - shown;
	for (i = shown; i < n; i++)
		rest_s += pc[i].saved;
	if ((fd = mkstemp(dat)) < 0 || (hd = mkstemp(hist)) < 0) {
		free(pc);
		return aoe_err(AOE_EIO, "cannot create a temporary file: %s",
		    strerror(errno));
	}
	fp = fdopen(fd, "w");
	hp = fdopen(hd, "w");
	/* Bars top down: row shown (the first) to 1, the rest at 0. */
	for (i = 0; i < shown; i++) {
		const pcase *c = &pc[i];
		fprintf(fp, "%d ", shown - i + (nrest > 0));
		put_label(fp, c, "");
		fprintf(fp, " %g %g %g %g\n", c->saved, c->before, c->after,
		    c->saved > 0 && c->before > 0 ? 100 * (c->before -
		    c->after) / c->before : 0);
		if (c->saved > max_s)
			max_s = c->saved;
	}
	/*
	 * The rest in one row, as words rather than a bar: their sum would
	 * dwarf the bars above.
	 */
	if (nrest > 0)
		fprintf(fp, "1 \"(the other %d cases)\" %g -1 0 0\n", nrest,
		    rest_s);
	/* Curves: the top cases with a history, improved ones first. */
	for (i = 0; i < n && nhist < NCOLOURS; i++) {
		const cJSON *h = cJSON_GetObjectItemCaseSensitive(pc[i].rec,
		    "history"), *p;
		double last = -1, best = -1, b0 = -1;
		if (!cJSON_IsArray(h) || cJSON_GetArraySize(h) == 0 ||
		    (i >= shown && nhist > 0))
			continue;
		/* A case whose finds the bank did not take says so. */
		put_label(hp, &pc[i], pc[i].saved > 0 ? "" : " (kept)");
		fputc('\n', hp);
		cJSON_ArrayForEach(p, h)
			if (cJSON_GetArraySize(p) == 2) {
				last = cJSON_GetArrayItem(p, 0)->valuedouble;
				best = cJSON_GetArrayItem(p, 1)->valuedouble;
				if (b0 < 0)
					b0 = best;
				fprintf(hp, "%g %g\n", last, b0 > 0 ? best / b0 :
				    1);
			}
		/* The best holds until the last trial. */
		if (best >= 0 && num(pc[i].rec, "trials", &trials) == 0 &&
		    trials > last)
			fprintf(hp, "%g %g\n", trials, b0 > 0 ? best / b0 : 1);
		fprintf(hp, "\n\n");
		nhist++;
	}
	fclose(fp);
	fclose(hp);
	if ((gp = popen("gnuplot", "w")) == NULL) {
		rc = aoe_err(AOE_EIO, "cannot run gnuplot: %s",
		    strerror(errno));
		goto out;
	}
	bars = shown + (nrest > 0);
	height = 140 + 18 * bars + (nhist ? 420 : 0);
	fprintf(gp, "set terminal ");
	fprintf(gp, term, height);
	fprintf(gp, "\nset output ");
	put_quoted(gp, file);
	fprintf(gp, "\nset multiplot\nset size 1,%g\nset origin 0,%g\n",
	    (double)(height - (nhist ? 420 : 0)) / height,
	    nhist ? 420.0 / height : 0.0);
	if (nrest)
		fprintf(gp, "set title \"time saved per case: the %d that "
		    "saved most of %d cases", shown, n);
	else
		fprintf(gp, "set title \"time saved per case: all %d cases",
		    n);
	fprintf(gp, " (%d improved); %.1f of %.1f us saved (%.1f%%)\"\n",
	    improved, total_s, total_b, total_b > 0 ? 100 * total_s /
	    total_b : 0);
	fprintf(gp, "unset key\nset style fill solid 0.85 border -1\n"
	    "set xlabel 'microseconds saved (per run, all the operators "
	    "of the case)'\nset xrange [0:%g]\nset yrange [0.3:%g]\n"
	    "set ytics scale 0 font ',9'\nset grid xtics\n"
	    "set lmargin %d\nset rmargin 4\n", max_s > 0 ? max_s * 1.3 : 1,
	    bars + 0.7, LABEL * 6 / 7 + 4);
	/* The rest's row (before -1) is its sum, written out. */
	fprintf(gp, "plot '%s' using ($4 >= 0 ? 0.5*$3 : 0):1:($4 >= 0 ? "
	    "0.5*$3 : 0):(0.38):ytic(2) with boxxyerror lc rgb "
	    "(word('%s', 1)), '' using ($4 >= 0 ? $3 : 0):1:($4 < 0 ? "
	    "sprintf(' %%.1f us saved in all', $3) : $3 > 0 ? "
	    "sprintf(' %%.1f us (-%%.0f%%%%)', $3, $6) : ' kept') with labels "
	    "left font ',8'\n", dat, colours);
	if (nhist) {
		fprintf(gp, "set size 1,%g\nset origin 0,0\nunset ytics\n"
		    "set ytics\nunset grid\nset grid\nunset xrange\n"
		    "unset yrange\nset yrange [*:1.02]\nset rmargin 42\n"
		    "set lmargin 10\n", 420.0 / height);
		fprintf(gp, "set title 'convergence: best time found so far "
		    "over the baseline, %s%d cases'\nset xlabel 'trial'\n"
		    "set ylabel 'best / baseline'\nset key outside right top "
		    "vertical font ',8'\n", nhist < n ? "the top " : "all ",
		    nhist);
		fprintf(gp, "plot for [i=0:%d] '%s' index i using 1:2 with "
		    "steps lw 2 lc rgb word('%s', i + 1) title "
		    "columnheader(1)\n", nhist - 1, hist, colours);
	}
	fprintf(gp, "unset multiplot\n");
	st = pclose(gp);
	if (st != 0)
		rc = aoe_err(AOE_EIO, "gnuplot failed to draw '%s'", file);
out:
	free(pc);
	unlink(dat);
	unlink(hist);
	return rc;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "output-dir", required_argument, NULL, 'o' },
		{ "plot", required_argument, NULL, 'p' },
		{ "plot-top", required_argument, NULL, 't' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "tuning-name", required_argument, NULL, 'n' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	tasks tt;
	aoe_settings set;
	const char *dir = NULL, *plotfile = NULL, *name = NULL;
	char path[4096];
	struct stat st;
	int c, i, j, quiet = 0, status, rc, top = 20;

	aoe_setprogname(argv[0]);
	while ((c = getopt_long(argc, argv, "hn:o:p:qt:V", longopts, NULL)) !=
	    -1) {
		switch (c) {
		case 'h':
			usage(AOE_EXIT_OK);
			break;
		case 'n':
			name = optarg;
			break;
		case 'o':
			dir = optarg;
			break;
		case 'p':
			plotfile = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		case 't':
			top = (int)aoe_optnum("plot-top", optarg, 1, 500);
			break;
		case 'V':
			printf("aoe-report %s\n", AOE_VERSION);
			return AOE_EXIT_OK;
		default:
			usage(AOE_EXIT_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	/* AOE's WORK_PATH: AOE_WORK_PATH, or aoe.ini's, or ".". */
	if (dir == NULL) {
		if ((rc = aoe_settings_load(&set)) < 0) {
			aoe_warnx("%s", aoe_errmsg());
			return aoe_exit_status(rc);
		}
		dir = set.work_path[0] ? set.work_path : ".";
	}
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		aoe_warnx("work directory '%s': %s", dir, errno ? strerror(errno) :
		    "not a directory");
		return AOE_EXIT_IO;
	}
	memset(&tt, 0, sizeof(tt));
	tt.name = name;
	status = aoe_each_operand(argc, argv, read_records, &tt);
	if (status != 0) {
		/* Report nothing from a partly bad input: results stay true. */
		if (tt.bad)
			aoe_warnx("%d bad record%s; no result file written",
			    tt.bad, tt.bad == 1 ? "" : "s");
		else
			aoe_warnx("no result file written");
		goto out;
	}
	if (tt.n == 0) {
		aoe_warnx("no tuning records");
		status = AOE_EXIT_DATA;
		goto out;
	}
	if (plotfile && (rc = plot(&tt, plotfile, top)) < 0) {
		aoe_warnx("%s", aoe_errmsg());
		status = aoe_exit_status(rc);
		goto out;
	}
	if (!quiet)
		print_table(&tt);
	for (j = 0; j < 2; j++) {
		for (i = 0; i < tt.n; i++)
			if (cJSON_GetArraySize(j ? tt.t[i].sgat :
			    tt.t[i].opat))
				break;
		if (i == tt.n)
			continue;
		if ((rc = write_result(dir, &tt, j, path, sizeof(path))) <
		    0) {
			aoe_warnx("%s", aoe_errmsg());
			status = aoe_exit_status(rc);
			goto out;
		}
		fprintf(stderr, "%s: wrote %s\n", aoe_progname(), path);
	}
out:
	for (i = 0; i < tt.n; i++)
		task_free(&tt.t[i]);
	free(tt.t);
	return status;
}
