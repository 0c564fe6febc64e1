/*
 * aoe-bank - keep the knowledge bank: commit tuning records, merge, diff,
 * export, import, verify, prune, show, list, stats and look up.
 *
 * The commands compute in lib/bank (store.c: commit; cmd.c: merge, diff,
 * verify, prune, show, list, stats; archive.c: export, import); this file
 * parses the command line, reads commit's record files, and prints what
 * the commands return.  lookup prepares graphs as a run does (lib/engine)
 * and so is here, above the bank.
 */
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "aoe.h"

static const char usage_text[] =
    "usage: aoe-bank [-hnqV] [--bank dir] [--graphs] [--help] [--quiet]\n"
    "                [--soc-version name] [--version] command [args]\n"
    "       aoe-bank commit [record-file ...]\n"
    "       aoe-bank merge [--output file] [--policy fastest|newest|ours|"
    "theirs] bank ...\n"
    "       aoe-bank diff [--jsonl] bank1 bank2\n"
    "       aoe-bank export --output archive [bank]\n"
    "       aoe-bank import [--dry-run] [--max-size bytes] "
    "[--policy p] archive\n"
    "       aoe-bank verify [bank ...]\n"
    "       aoe-bank prune [--dry-run] [--op-type type] [--older-than days]\n"
    "                [--tool-version v] [--no-gain] [--stale]\n"
    "       aoe-bank show key ...\n"
    "       aoe-bank list [--jsonl] [--op-type type] [bank]\n"
    "       aoe-bank stats [bank]\n"
    "       aoe-bank lookup [--jsonl] [--threads n] graph ...\n";

/* The summary lines on stderr, unless --quiet. */
static void
say(const aoe_bank_opts *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
say(const aoe_bank_opts *o, const char *fmt, ...)
{
	char buf[PATH_MAX * 2 + 256];
	va_list ap;

	if (o->quiet)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	aoe_warnx("%s", buf);
}

/* diff checks standard output once it printed everything. */
static int
flush_stdout(int rc)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (rc < 0)
			return rc;
		return aoe_err(AOE_EIO, "cannot write standard output: %s",
		    strerror(errno ? errno : EIO));
	}
	return rc;
}

/*
 * commit: each record file ("-", or none: stdin) is read whole, its
 * lines checked, before any bank is written.
 */
static long nrecords;	/* records read by read_records() */

static int
read_records(aoe_bank_batch *b, const char *path)
{
	char *buf = NULL, why[256];
	size_t cap = 0;
	ssize_t n;
	long lineno = 0;
	struct stat st;
	FILE *fp;
	int rc = 0;

	if (strcmp(path, "-") == 0)
		fp = stdin;
	else if ((fp = fopen(path, "r")) == NULL)
		return aoe_err(AOE_EIO, "cannot open '%s': %s", path,
		    strerror(errno));
	else if (fstat(fileno(fp), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(fp);
		return aoe_err(AOE_EIO, "cannot open '%s': Is a directory",
		    path);
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
		nrecords++;
		if (aoe_bank_batch_add(b, rec, why, sizeof(why)) < 0)
			rc = aoe_err(AOE_EDATA, "%s:%ld: %s", path, lineno,
			    why);
		cJSON_Delete(rec);
		if (rc < 0)
			break;
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
cmd_commit(const aoe_bank_opts *o, int argc, char **argv)
{
	aoe_bank_batch *b = aoe_bank_batch_new(o);
	aoe_bank_counts c[2];
	char msg[PATH_MAX + 256];
	int i, rc = 0;

	for (i = 0; i < (argc ? argc : 1) && rc == 0; i++)
		rc = read_records(b, argc ? argv[i] : "-");
	/* Empty input is a failed stage upstream, not "0 added". */
	if (rc == 0 && nrecords == 0)
		rc = aoe_err(AOE_EDATA, "no tuning records in %s", argc == 1 ?
		    argv[0] : argc ? "the input files" : "the input");
	if (rc == 0)
		rc = aoe_bank_batch_commit(b, c);
	aoe_bank_batch_free(b);
	for (i = 0; rc == 0 && i < 2; i++)
		if (c[i].file[0]) {
			aoe_bank_commit_line(&c[i], msg, sizeof(msg));
			say(o, "%s", msg);
		}
	return rc;
}

static int
cmd_merge(const aoe_bank_opts *o, int argc, char **argv)
{
	aoe_bank_counts c;
	int rc;

	if ((rc = aoe_bank_merge(o, argc, argv, &c)) == 0)
		say(o, "%s: %ld entries, %ld added, %ld replaced, %ld kept, "
		    "%ld collisions", c.file, c.total, c.added, c.updated,
		    c.kept, c.collisions);
	return rc;
}

/* diff's lines: "changed KEY OP OLD -> NEW us (+D%)", or JSON Lines. */
static void
print_change(void *arg, const char *what, const aoe_bank_entry *a,
    const aoe_bank_entry *b)
{
	const aoe_bank_opts *o = arg;
	const aoe_bank_entry *e = a ? a : b;

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

static int
cmd_diff(const aoe_bank_opts *o, int argc, char **argv)
{
	return flush_stdout(aoe_bank_diff(o, argv[0], argv[1], print_change,
	    (void *)o));
}

static int
cmd_export(const aoe_bank_opts *o, int argc, char **argv)
{
	aoe_bank_counts c;
	int rc;

	if ((rc = aoe_bank_export(o, argc ? argv[0] : NULL, &c)) == 0)
		say(o, "%s: %ld entries, soc_version %s", c.file, c.read,
		    c.soc);
	return rc;
}

static int
cmd_import(const aoe_bank_opts *o, int argc, char **argv)
{
	aoe_bank_counts c;
	int rc;

	if ((rc = aoe_bank_import(o, argv[0], &c)) == 0)
		say(o, "%s: %s%ld entries from %s: %ld added, %ld replaced, "
		    "%ld kept, %ld collisions", c.file, o->dry_run ?
		    "dry run, " : "", c.read, argv[0], c.added, c.updated,
		    c.kept, c.collisions);
	return rc;
}

static void
warn_line(void *arg, const char *msg)
{
	aoe_warnx("%s", msg);
}

/* One bank: "FILE: ok, N entries, soc_version S" on stdout. */
static int
verify_one(const aoe_bank_opts *o, const char *bank)
{
	aoe_bank_counts c;
	int rc;

	if ((rc = aoe_bank_verify(o, bank, warn_line, NULL, &c)) == 0 &&
	    !o->quiet)
		printf("%s: ok, %ld entries%s%s\n", c.file, c.read, c.soc[0] ?
		    ", soc_version " : "", c.soc);
	return rc;
}

static int
cmd_verify(const aoe_bank_opts *o, int argc, char **argv)
{
	int i, rc, worst = 0, nbad = 0;

	if (argc <= 1)
		return verify_one(o, argc ? argv[0] : NULL);
	for (i = 0; i < argc; i++)
		if ((rc = verify_one(o, argv[i])) < 0) {
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

/* prune --dry-run's lines: "KEY OP" for each entry it would drop. */
static void
print_pruned(void *arg, const aoe_bank_entry *e)
{
	printf("%llu %s\n", (unsigned long long)e->key, e->op_type);
}

static int
cmd_prune(const aoe_bank_opts *o, int argc, char **argv)
{
	aoe_bank_counts c;
	int rc;

	if (argc > 0)
		return aoe_err(AOE_EDATA, "prune takes no operands (use "
		    "--bank)");
	rc = aoe_bank_prune(o, o->dry_run ? print_pruned : NULL, NULL, &c);
	if (rc == 0 && !o->dry_run)
		say(o, "%s: %ld pruned, %ld kept", c.file, c.removed, c.total);
	return rc;
}

static void
print_line(void *arg, const aoe_bank_entry *e)
{
	puts(e->line);
}

static int
cmd_show(const aoe_bank_opts *o, int argc, char **argv)
{
	uint64_t *keys;
	int i, rc;

	keys = aoe_xcalloc((size_t)argc, sizeof(uint64_t));
	for (i = 0; i < argc; i++)
		if (aoe_bank_parse_key(argv[i], &keys[i]) < 0) {
			free(keys);
			return aoe_err(AOE_EDATA, "'%s' is not a key",
			    argv[i]);
		}
	rc = aoe_bank_show(o, keys, argc, print_line, NULL);
	free(keys);
	if (rc < 0)
		return rc;
	return rc == argc ? 0 : 1;
}

/* list's lines: "KEY OP TIME BASELINE GAIN%", or the entries. */
static void
print_entry(void *arg, const aoe_bank_entry *e)
{
	const aoe_bank_opts *o = arg;

	if (o->jsonl)
		puts(e->line);
	else
		printf("%llu %s %.3f %.3f %.2f%%\n", (unsigned long long)
		    e->key, e->op_type, e->time_us, e->baseline_us,
		    e->baseline_us > 0 ? 100 * (e->baseline_us - e->time_us) /
		    e->baseline_us : 0.0);
}

static int
cmd_list(const aoe_bank_opts *o, int argc, char **argv)
{
	return aoe_bank_list(o, argc ? argv[0] : NULL, print_entry,
	    (void *)o);
}

static int
cmd_stats(const aoe_bank_opts *o, int argc, char **argv)
{
	aoe_bank_stats st;
	int i, rc;

	if ((rc = aoe_bank_stats_of(o, argc ? argv[0] : NULL, &st)) < 0)
		return rc;
	printf("file %s\nsoc_version %s\nentries %ld\nno_gain %ld\n"
	    "stale %ld\nmean_gain %.2f%%\n", st.file,
	    st.soc[0] ? st.soc : "-", st.entries, st.no_gain, st.stale,
	    100 * st.mean_gain);
	for (i = 0; i < st.ntypes; i++)
		printf("op_type %s %ld %.2f%%\n", st.types[i].name,
		    st.types[i].n, 100 * st.types[i].mean_gain);
	aoe_bank_stats_free(&st);
	return 0;
}

/* What lookup's walk carries from node to node. */
struct lookup_walk {
	const char *graph;
	int jsonl, threads;
	long hits, live;
};

/* One node of a graph or of its subgraphs (named by path): hit or not. */
static int
lookup_node(aoe_graph *g, aoe_node *n, const char *path, void *arg)
{
	struct lookup_walk *w = arg;
	int t = n->nthreads > 0 ? n->nthreads : w->threads;
	char sig[8192];
	const char *from;
	aoe_sched s;

	w->live++;
	memset(&s, 0, sizeof(s));
	w->hits += aoe_bank_find(g, n, t, &s, &from);
	if (aoe_op_signature(g, n, t, sig, sizeof(sig)) < 0)
		strcpy(sig, "");
	if (w->jsonl) {
		cJSON *j = cJSON_CreateObject();
		char kb[32], *p;
		snprintf(kb, sizeof(kb), "%llu",
		    (unsigned long long)aoe_op_key(sig));
		cJSON_AddStringToObject(j, "graph", w->graph);
		cJSON_AddStringToObject(j, "node", path);
		cJSON_AddStringToObject(j, "op_type", n->op_type);
		cJSON_AddStringToObject(j, "key", kb);
		cJSON_AddStringToObject(j, "signature", sig);
		cJSON_AddStringToObject(j, "from", from);
		p = cJSON_PrintUnformatted(j);
		puts(p);
		free(p);
		cJSON_Delete(j);
	} else
		printf("%s %s %s %llu %s\n", w->graph, path, n->op_type,
		    (unsigned long long)aoe_op_key(sig), from);
	return 0;
}

/*
 * lookup: for each graph, which ops hit, from which bank; the ops of If
 * branches and Loop and Scan bodies too, by path.
 */
static int
lookup_graphs(const aoe_bank_opts *o, int argc, char **argv)
{
	char dir[PATH_MAX], file[PATH_MAX], bi[PATH_MAX];
	aoe_run_opts ro;
	int i, rc = 0, worst = 0, nbad = 0;

	if (argc < 1)
		return aoe_err(AOE_EDATA, "lookup needs a graph");
	if (o->bank) {
		if ((rc = aoe_bank_target(o, dir, file)) < 0)
			return rc;
		snprintf(bi, sizeof(bi), "%s/%s/%s", aoe_bank_builtin_dir(),
		    aoe_soc_version(), "ops.jsonl");
		aoe_bank_use(file, bi);
	}
	aoe_run_opts_init(&ro);
	ro.use_bank = 0;
	if (o->threads > 0)
		ro.nthreads = o->threads;
	for (i = 0; i < argc; i++) {
		struct lookup_walk w = { argv[i], o->jsonl, ro.nthreads, 0, 0 };
		aoe_graph *g = NULL;
		if ((rc = aoe_model_load(argv[i], &g)) < 0 ||
		    (rc = aoe_graph_prepare(g, &ro)) < 0) {
			/* One graph's error is main()'s to print. */
			if (argc > 1)
				aoe_warnx("%s", aoe_errmsg());
			aoe_graph_free(g);
			if (worst == 0 || rc < worst)
				worst = rc;
			nbad++;
			continue;
		}
		aoe_graph_each_node(g, lookup_node, &w);
		if (!o->quiet)
			aoe_warnx("%s: %ld of %ld ops hit", argv[i], w.hits,
			    w.live);
		aoe_graph_free(g);
	}
	/* Each failure was told above; main() prints this summary. */
	if (worst && argc > 1)
		(void)aoe_err(-worst, "%d of %d graphs could not be looked up",
		    nbad, argc);
	return worst;
}

static const struct {
	const char *name;
	int (*fn)(const aoe_bank_opts *, int, char **);
	int min, max;		/* operands */
} cmds[] = {
	{ "commit", cmd_commit, 0, 1 << 20 },
	{ "merge", cmd_merge, 1, 1024 },
	{ "diff", cmd_diff, 2, 2 },
	{ "export", cmd_export, 0, 1 },
	{ "import", cmd_import, 1, 1 },
	{ "verify", cmd_verify, 0, 1 << 20 },
	{ "prune", cmd_prune, 0, 0 },
	{ "show", cmd_show, 1, 1 << 20 },
	{ "list", cmd_list, 0, 1 },
	{ "stats", cmd_stats, 0, 1 },
	{ "lookup", lookup_graphs, 1, 1 << 20 },
};

static void
usage(int status)
{
	fputs(usage_text, status ? stderr : stdout);
	exit(status);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "bank", required_argument, NULL, 'b' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "graphs", no_argument, NULL, 'G' },
		{ "help", no_argument, NULL, 'h' },
		{ "jsonl", no_argument, NULL, 'j' },
		{ "max-size", required_argument, NULL, 'M' },
		{ "no-gain", no_argument, NULL, 'N' },
		{ "older-than", required_argument, NULL, 'A' },
		{ "op-type", required_argument, NULL, 't' },
		{ "output", required_argument, NULL, 'o' },
		{ "policy", required_argument, NULL, 'p' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "soc-version", required_argument, NULL, 's' },
		{ "stale", no_argument, NULL, 'S' },
		{ "threads", required_argument, NULL, 'T' },
		{ "tool-version", required_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const policies[] = { "fastest", "newest", "ours",
	    "theirs" };
	aoe_bank_opts o;
	size_t i;
	int c, rc;

	aoe_setprogname(argv[0]);
	aoe_bank_opts_init(&o);
	while ((c = getopt_long(argc, argv, "b:hno:p:qs:V", longopts,
	    NULL)) != -1) {
		switch (c) {
		case 'b':
			o.bank = optarg;
			break;
		case 'n':
			o.dry_run = 1;
			break;
		case 'G':
			o.graphs = 1;
			break;
		case 'h':
			usage(AOE_EXIT_OK);
			break;
		case 'j':
			o.jsonl = 1;
			break;
		case 'M':
			o.max_size = aoe_optnum("max-size", optarg, 1,
			    (long long)1 << 40);
			break;
		case 'N':
			o.no_gain = 1;
			break;
		case 'S':
			o.stale = 1;
			break;
		case 'A':
			o.older_than_days = (double)aoe_optnum("older-than",
			    optarg, 0, 100000);
			break;
		case 't':
			o.op_type = optarg;
			break;
		case 'o':
			o.output = optarg;
			break;
		case 'p':
			for (i = 0; i < 4; i++)
				if (strcmp(optarg, policies[i]) == 0)
					break;
			if (i == 4) {
				aoe_warnx("--policy '%s': expected fastest, "
				    "newest, ours or theirs", optarg);
				exit(AOE_EXIT_USAGE);
			}
			o.policy = (int)i;
			break;
		case 'q':
			o.quiet = 1;
			break;
		case 's':
			if (!aoe_soc_valid(optarg)) {
				aoe_warnx("--soc-version '%s': not a safe name "
				    "(letters, digits, '.', '_' and '-')",
				    optarg);
				exit(AOE_EXIT_USAGE);
			}
			o.soc = optarg;
			break;
		case 'T':
			o.threads = (int)aoe_optnum("threads", optarg, 1, 1024);
			break;
		case 'v':
			o.tool_version = optarg;
			break;
		case 'V':
			printf("aoe-bank %s (kernel generation %d)\n",
			    AOE_VERSION, AOE_KERNELS_GEN);
			return AOE_EXIT_OK;
		default:
			usage(AOE_EXIT_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1)
		usage(AOE_EXIT_USAGE);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (strcmp(argv[0], cmds[i].name) == 0)
			break;
	if (i == sizeof(cmds) / sizeof(cmds[0])) {
		aoe_warnx("unknown command '%s'", argv[0]);
		usage(AOE_EXIT_USAGE);
	}
	if (argc - 1 < cmds[i].min || argc - 1 > cmds[i].max) {
		aoe_warnx("%s: wrong number of operands", cmds[i].name);
		usage(AOE_EXIT_USAGE);
	}
	if (strcmp(argv[0], "export") == 0 && o.output == NULL) {
		aoe_warnx("export: --output is required");
		usage(AOE_EXIT_USAGE);
	}
	rc = cmds[i].fn(&o, argc - 1, argv + 1);
	if (rc < 0) {
		aoe_warnx("%s", aoe_errmsg());
		return aoe_exit_status(rc);
	}
	return rc;
}
