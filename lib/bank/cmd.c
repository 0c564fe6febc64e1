/*
 * cmd.c - what the aoe-bank commands merge, diff, verify, prune, show,
 * list and stats compute; aoe-bank(1) prints it.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bank.h"

/* The guarded temporary files and the handlers they replaced. */
static const char *volatile guarded[4];
static volatile sig_atomic_t nguarded;
static struct sigaction old_act[3];
static const int guard_sigs[3] = { SIGINT, SIGTERM, SIGHUP };

static void
guard_signal(int sig)
{
	int i;

	for (i = 0; i < nguarded; i++)
		if (guarded[i] && guarded[i][0])
			unlink(guarded[i]);
	signal(sig, SIG_DFL);
	raise(sig);
}

void
bank_tmp_guard(const char *path)
{
	struct sigaction sa;
	int i;

	if (path == NULL || nguarded >= 4)
		return;
	guarded[nguarded] = path;
	if (nguarded++ > 0)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = guard_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < 3; i++)
		sigaction(guard_sigs[i], &sa, &old_act[i]);
}

void
bank_tmp_unguard(void)
{
	int i;

	if (nguarded == 0)
		return;
	for (i = 0; i < 3; i++)
		sigaction(guard_sigs[i], &old_act[i], NULL);
	nguarded = 0;
}

/*
 * merge: several banks into one (the bank, or --output).
 */
int
aoe_bank_merge(const aoe_bank_opts *o, int argc, char **argv,
    aoe_bank_counts *c)
{
	char dir[PATH_MAX], file[PATH_MAX], soc[128] = "";
	char (*files)[PATH_MAX];
	aoe_ofile w;
	src *in;
	int i, rc = 0;

	memset(c, 0, sizeof(*c));
	if (argc < 1)
		return aoe_err(AOE_EDATA, "merge needs at least one bank");
	if (o->soc)
		snprintf(soc, sizeof(soc), "%s", o->soc);
	files = aoe_xcalloc((size_t)argc, PATH_MAX);
	for (i = 0; i < argc; i++)
		bank_operand_file(o, argv[i], files[i]);
	in = aoe_xcalloc((size_t)argc, sizeof(src));
	if (o->output == NULL) {
		/* Into the bank itself: it is "ours", the first input. */
		if ((rc = aoe_bank_target(o, dir, file)) < 0)
			goto out;
		if (!o->graphs)
			bank_soc(o, soc, sizeof(soc));
		for (i = 0; i < argc && rc == 0; i++) {
			rc = bank_rdr_open(&in[i].r, files[i], soc,
			    sizeof(soc), 0);
			in[i].r.check = 1;
		}
		if (rc == 0)
			rc = bank_write(o, dir, file, soc, sizeof(soc), in,
			    argc, o->policy, c);
		goto out;
	}
	for (i = 0; i < argc && rc == 0; i++) {
		rc = bank_rdr_open(&in[i].r, files[i], soc, sizeof(soc), 0);
		in[i].r.check = 1;
	}
	if (rc == 0 && (rc = aoe_ofile_open(&w, o->output)) == 0) {
		bank_tmp_guard(w.tmp);
		if (getenv("AOE_BANK_SLOW_WRITE"))	/* the tests' kill */
			sleep(30);
		if ((rc = bank_merge_sources(in, argc, o->policy, w.fp,
		    c)) < 0)
			aoe_ofile_abort(&w);
		else
			rc = aoe_ofile_close(&w);
		bank_tmp_unguard();
	}
	if (rc == 0) {
		snprintf(c->file, sizeof(c->file), "%s", o->output);
		snprintf(c->soc, sizeof(c->soc), "%s", soc);
	}
out:
	for (i = 0; i < argc; i++)
		bank_rdr_close(&in[i].r);
	free(in);
	free(files);
	return rc;
}

/*
 * diff: added, removed and changed entries of two banks.
 */
static void
diff_report(aoe_bank_change_fn fn, void *arg, const char *what,
    const ent *a, const ent *b)
{
	aoe_bank_entry va, vb;

	if (a)
		bank_entry_view(a, &va);
	if (b)
		bank_entry_view(b, &vb);
	fn(arg, what, a ? &va : NULL, b ? &vb : NULL);
}

int
aoe_bank_diff(const aoe_bank_opts *o, const char *bank1, const char *bank2,
    aoe_bank_change_fn fn, void *arg)
{
	char f[2][PATH_MAX], soc[2][128] = { "", "" };
	rdr r[2];
	int rc, ra, rb, differ = 0;

	bank_operand_file(o, bank1, f[0]);
	bank_operand_file(o, bank2, f[1]);
	memset(r, 0, sizeof(r));
	if ((rc = bank_rdr_open(&r[0], f[0], soc[0], sizeof(soc[0]),
	    0)) < 0 || (rc = bank_rdr_open(&r[1], f[1], soc[1],
	    sizeof(soc[1]), 0)) < 0)
		goto out;
	ra = bank_rdr_next(&r[0]);
	rb = bank_rdr_next(&r[1]);
	for (;;) {
		if (ra < 0 || rb < 0) {
			rc = ra < 0 ? ra : rb;
			goto out;
		}
		if (ra == 0 && rb == 0)
			break;
		if (rb == 0 || (ra == 1 && r[0].e.key < r[1].e.key)) {
			diff_report(fn, arg, "removed", &r[0].e, NULL);
			differ = 1;
			ra = bank_rdr_next(&r[0]);
		} else if (ra == 0 || r[1].e.key < r[0].e.key) {
			diff_report(fn, arg, "added", NULL, &r[1].e);
			differ = 1;
			rb = bank_rdr_next(&r[1]);
		} else {
			if (strcmp(r[0].e.line, r[1].e.line) != 0) {
				diff_report(fn, arg, "changed", &r[0].e,
				    &r[1].e);
				differ = 1;
			}
			ra = bank_rdr_next(&r[0]);
			rb = bank_rdr_next(&r[1]);
		}
	}
	rc = differ;
out:
	bank_rdr_close(&r[0]);
	bank_rdr_close(&r[1]);
	return rc;
}

/*
 * verify: format, order, duplicates, key/signature, soc_version.
 */
int
aoe_bank_verify(const aoe_bank_opts *o, const char *bank,
    void (*bad)(void *arg, const char *msg), void *arg, aoe_bank_counts *c)
{
	char dir[PATH_MAX], msg[PATH_MAX + 1100];
	const char *want = o->soc, *base;
	long nbad = 0, n = 0;
	rdr r;
	int rc, kind;

	memset(c, 0, sizeof(*c));
	if (bank)
		bank_operand_file(o, bank, c->file);
	else if ((rc = aoe_bank_target(o, dir, c->file)) < 0)
		return rc;
	/* A bank named as an operand too (aoe-bank(1)). */
	if (!o->graphs && want == NULL)
		want = aoe_soc_version();
	if (want)
		snprintf(c->soc, sizeof(c->soc), "%s", want);
	if ((rc = bank_rdr_open(&r, c->file, c->soc, sizeof(c->soc), 0)) < 0)
		return rc;
	/* A bank keeps its kind: graphs.jsonl (or --graphs) subgraphs. */
	base = strrchr(c->file, '/');
	kind = o->graphs || strcmp(base ? base + 1 : c->file,
	    GRAPHS_FILE) == 0;
	r.check = 1;
	while ((rc = bank_rdr_next(&r)) != 0) {
		if (rc < 0) {
			if (-rc == AOE_EIO)
				break;
			snprintf(msg, sizeof(msg), "%s", aoe_errmsg());
			bad(arg, msg);
			nbad++;
		} else if ((bank_jstr(r.e.j, "op_type") == NULL &&
		    bank_jstr(r.e.j, "subgraph") != NULL) != kind) {
			snprintf(msg, sizeof(msg), "%s:%ld: %s entry in %s "
			    "bank", c->file, r.lineno, kind ? "an operator" :
			    "a subgraph", kind ? "a subgraph" : "an operator");
			bad(arg, msg);
			nbad++;
		} else
			n++;
		if (nbad >= 20) {
			snprintf(msg, sizeof(msg), "%s: too many errors, "
			    "giving up", c->file);
			bad(arg, msg);
			break;
		}
	}
	bank_rdr_close(&r);
	if (rc < 0 && -rc == AOE_EIO)
		return rc;
	if (nbad)
		return aoe_err(AOE_EDATA, "%s: %ld bad lines", c->file, nbad);
	c->read = n;
	return 0;
}

/*
 * prune: drop entries by op type, age, tool version, kernel generation,
 * or no gain.
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
	if (o->stale && bank_ent_stale(e))
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
aoe_bank_prune(const aoe_bank_opts *o, aoe_bank_entry_fn fn, void *arg,
    aoe_bank_counts *c)
{
	char dir[PATH_MAX], file[PATH_MAX], soc[128] = "";
	time_t now = time(NULL);
	aoe_bank_entry v;
	aoe_ofile w;
	rdr r;
	int lk, rc;

	memset(c, 0, sizeof(*c));
	if (!o->op_type && !o->tool_version && !o->no_gain && !o->stale &&
	    o->older_than_days < 0)
		return aoe_err(AOE_EDATA, "prune needs --op-type, "
		    "--older-than, --tool-version, --no-gain or --stale");
	if ((rc = aoe_bank_target(o, dir, file)) < 0)
		return rc;
	if (o->soc)
		snprintf(soc, sizeof(soc), "%s", o->soc);
	if ((lk = bank_lock(dir)) < 0)
		return lk;
	if ((rc = bank_rdr_open(&r, file, soc, sizeof(soc), 0)) < 0)
		goto out;
	if ((rc = aoe_ofile_open(&w, file)) < 0) {
		bank_rdr_close(&r);
		goto out;
	}
	while ((rc = bank_rdr_next(&r)) == 1) {
		if (prune_match(o, &r.e, now)) {
			c->removed++;
			if (fn) {
				bank_entry_view(&r.e, &v);
				fn(arg, &v);
			}
		} else {
			c->total++;
			if (bank_put_line(w.fp, r.e.line) < 0) {
				rc = aoe_err(AOE_EIO, "cannot write '%s': %s",
				    w.tmp, strerror(errno));
				break;
			}
		}
	}
	bank_rdr_close(&r);
	if (rc < 0 || o->dry_run)
		aoe_ofile_abort(&w);
	else
		rc = aoe_ofile_close(&w);
	if (rc == 0) {
		snprintf(c->file, sizeof(c->file), "%s", file);
		snprintf(c->soc, sizeof(c->soc), "%s", soc);
	}
out:
	bank_unlock(lk);
	return rc;
}

/*
 * show, list, stats: read a bank (an operand, or o's when there is none;
 * o's may be missing, an empty bank).
 */
static int
open_target(const aoe_bank_opts *o, const char *bank, rdr *r, char *file,
    char *soc, size_t soclen)
{
	char dir[PATH_MAX];
	int rc;

	if (bank)
		bank_operand_file(o, bank, file);
	else if ((rc = aoe_bank_target(o, dir, file)) < 0)
		return rc;
	if (o->soc)
		snprintf(soc, soclen, "%s", o->soc);
	if ((rc = bank_rdr_open(r, file, soc, soclen, bank == NULL)) < 0)
		return rc;
	r->path = strcmp(file, "-") ? file : "<stdin>";
	return 0;
}

int
aoe_bank_show(const aoe_bank_opts *o, const uint64_t *keys, int nk,
    aoe_bank_entry_fn fn, void *arg)
{
	char file[PATH_MAX], soc[128] = "";
	aoe_bank_entry v;
	int i, found = 0, rc;
	rdr r;

	if ((rc = open_target(o, NULL, &r, file, soc, sizeof(soc))) < 0)
		return rc;
	while ((rc = bank_rdr_next(&r)) == 1)
		for (i = 0; i < nk; i++)
			if (keys[i] == r.e.key) {
				bank_entry_view(&r.e, &v);
				fn(arg, &v);
				found++;
			}
	bank_rdr_close(&r);
	return rc < 0 ? rc : found;
}

int
aoe_bank_list(const aoe_bank_opts *o, const char *bank, aoe_bank_entry_fn fn,
    void *arg)
{
	char file[PATH_MAX], soc[128] = "";
	aoe_bank_entry v;
	rdr r;
	int rc;

	if ((rc = open_target(o, bank, &r, file, soc, sizeof(soc))) < 0)
		return rc;
	while ((rc = bank_rdr_next(&r)) == 1) {
		if (o->op_type && strcmp(o->op_type, r.e.op_type) != 0)
			continue;
		bank_entry_view(&r.e, &v);
		fn(arg, &v);
	}
	bank_rdr_close(&r);
	return rc;
}

int
aoe_bank_stats_of(const aoe_bank_opts *o, const char *bank,
    aoe_bank_stats *st)
{
	char file[PATH_MAX];
	double gain = 0;
	rdr r;
	int i, rc;

	memset(st, 0, sizeof(*st));
	if ((rc = open_target(o, bank, &r, file, st->soc,
	    sizeof(st->soc))) < 0)
		return rc;
	snprintf(st->file, sizeof(st->file), "%s", r.path);
	while ((rc = bank_rdr_next(&r)) == 1) {
		double g = r.e.base_us > 0 ? (r.e.base_us - r.e.time_us) /
		    r.e.base_us : 0;
		for (i = 0; i < st->ntypes; i++)
			if (strcmp(st->types[i].name, r.e.op_type) == 0)
				break;
		if (i == st->ntypes) {
			st->types = aoe_xrealloc(st->types,
			    (size_t)(st->ntypes + 1) * sizeof(*st->types));
			snprintf(st->types[i].name, sizeof(st->types[i].name),
			    "%s", r.e.op_type);
			st->types[i].n = 0;
			st->types[i].mean_gain = 0;
			st->ntypes++;
		}
		/* Sums until the end, then means. */
		st->types[i].n++;
		st->types[i].mean_gain += g;
		gain += g;
		st->entries++;
		if (r.e.time_us >= r.e.base_us)
			st->no_gain++;
		if (bank_ent_stale(&r.e))
			st->stale++;
	}
	bank_rdr_close(&r);
	if (rc < 0) {
		aoe_bank_stats_free(st);
		return rc;
	}
	st->mean_gain = st->entries ? gain / st->entries : 0;
	for (i = 0; i < st->ntypes; i++)
		st->types[i].mean_gain /= st->types[i].n;
	return 0;
}

void
aoe_bank_stats_free(aoe_bank_stats *st)
{
	free(st->types);
	st->types = NULL;
	st->ntypes = 0;
}
