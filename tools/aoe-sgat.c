/*
 * aoe-sgat - subgraph tuning: measure each distinct subgraph of a graph
 * as a whole under its fusion and threading decisions, keep the winners
 * beyond the noise, time the whole model without and with them, and
 * write tuning records (and, with --commit, the subgraph bank).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "sgat.h"

static const char usage_text[] =
    "usage: aoe-sgat [-hV] [--budget-trials n] [--commit] [--input-shape spec]\n"
    "                [--journal file]\n"
    "                [--no-bank] [--no-check] [--no-regions]\n"
    "                [--progress | --no-progress]\n"
    "                [--reload] [--seed n] [--threads n] [--timeout s]\n"
    "                [--total-seconds s]\n"
    "                [--tune-ops-file file] [-o file] graph\n";

static void
usage(int status)
{
	fputs(usage_text, status ? stderr : stdout);
	exit(status);
}

/*
 * Commit the subgraph records of path (not the model record) and say
 * what the commit did, as aoe-bank commit does.
 */
static int
commit_records(const char *path, int quiet)
{
	char *line = NULL, msg[PATH_MAX + 256];
	cJSON **recs = NULL;
	aoe_bank_counts c[2];
	aoe_bank_opts bo;
	size_t cap = 0;
	long lineno = 0;
	int n = 0, i, rc = 0;
	FILE *in;

	if ((in = fopen(path, "r")) == NULL)
		return aoe_err(AOE_EIO, "cannot open '%s': %s", path,
		    strerror(errno));
	while (rc == 0 && getline(&line, &cap, in) >= 0) {
		cJSON *rec;
		lineno++;
		if (strstr(line, "\"kind\":\"sgat\"") == NULL)
			continue;
		if ((rec = cJSON_Parse(line)) == NULL) {
			rc = aoe_err(AOE_EDATA, "%s:%ld: malformed JSON", path,
			    lineno);
			break;
		}
		recs = aoe_xrealloc(recs, (size_t)(n + 1) * sizeof(*recs));
		recs[n++] = rec;
	}
	free(line);
	fclose(in);
	if (rc == 0) {
		aoe_bank_opts_init(&bo);
		bo.graphs = 1;
		rc = aoe_bank_commit_records(&bo, (const cJSON *const *)recs,
		    n, c);
	}
	for (i = 0; i < n; i++)
		cJSON_Delete(recs[i]);
	free(recs);
	for (i = 0; rc == 0 && !quiet && i < 2; i++)
		if (c[i].file[0]) {
			aoe_bank_commit_line(&c[i], msg, sizeof(msg));
			aoe_warnx("%s", msg);
		}
	return rc;
}

/* The command line beyond the tuner's options. */
typedef struct cli {
	const char *output;
	char *shapes;
	int check, commit, progress;
} cli;

static const struct option longopts[] = {
	{ "budget-trials", required_argument, NULL, 'n' },
	{ "commit", no_argument, NULL, 'c' },
	{ "help", no_argument, NULL, 'h' },
	{ "input-shape", required_argument, NULL, 's' },
	{ "journal", required_argument, NULL, 'j' },
	{ "no-bank", no_argument, NULL, 'B' },
	{ "no-check", no_argument, NULL, 'C' },
	{ "no-progress", no_argument, NULL, 'q' },
	{ "no-regions", no_argument, NULL, 'R' },
	{ "output", required_argument, NULL, 'o' },
	{ "progress", no_argument, NULL, 'p' },
	{ "reload", no_argument, NULL, 'r' },
	{ "seed", required_argument, NULL, 'S' },
	{ "threads", required_argument, NULL, 't' },
	{ "timeout", required_argument, NULL, 'T' },
	{ "total-seconds", required_argument, NULL, 'a' },
	{ "tune-ops-file", required_argument, NULL, 'f' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

/* One option c (with optarg); exits on --help, --version and misuse. */
static void
option(int c, sgat_opts *o, cli *a)
{
	switch (c) {
	case 'a':
		o->total_seconds = (double)aoe_optnum("total-seconds", optarg,
		    0, 86400 * 365);
		break;
	case 'B':
		o->use_bank = 0;
		break;
	case 'c':
		a->commit = 1;
		break;
	case 'C':
		a->check = 0;
		break;
	case 'f':
		aoe_warnx("--tune-ops-file selects operators; subgraph "
		    "tuning has none to select (use aoe-opat)");
		exit(AOE_EXIT_USAGE);
	case 'h':
		usage(AOE_EXIT_OK);
		break;
	case 'j':
		o->journal = optarg;
		break;
	case 'n':
		o->budget_trials = (int)aoe_optnum("budget-trials", optarg, 1,
		    1000000);
		break;
	case 'o':
		a->output = optarg;
		break;
	case 'p':
		a->progress = 1;
		break;
	case 'q':
		a->progress = 0;
		break;
	case 'r':
		o->reload = 1;
		break;
	case 'R':
		o->regions = 0;
		break;
	case 's':
		aoe_shape_spec_add(&a->shapes, optarg);
		break;
	case 'S':
		o->seed = (uint64_t)aoe_optnum("seed", optarg, 0, INT64_MAX);
		break;
	case 't':
		o->threads = (int)aoe_optnum("threads", optarg, 1, 1024);
		break;
	case 'T':
		o->timeout_s = (double)aoe_optnum("timeout", optarg, 1, 86400);
		break;
	case 'V':
		printf("aoe-sgat %s\n", AOE_VERSION);
		exit(AOE_EXIT_OK);
	default:
		usage(AOE_EXIT_USAGE);
	}
}

/*
 * The private temporary file the records go to, which --commit reads;
 * *path is malloc'ed (NULL when none was made).
 */
static int
tmp_open(char **path, FILE **out)
{
	const char *td = getenv("TMPDIR");
	size_t l;
	int fd;

	if (td == NULL || *td == '\0')
		td = "/tmp";
	l = strlen(td) + 32;
	*path = aoe_xmalloc(l);
	snprintf(*path, l, "%s/aoe-sgat.XXXXXX", td);
	if ((fd = mkstemp(*path)) < 0 || (*out = fdopen(fd, "w")) == NULL) {
		int rc = aoe_err(AOE_EIO, "cannot create '%s': %s", *path,
		    strerror(errno));
		if (fd >= 0)
			close(fd);
		else {
			free(*path);
			*path = NULL;
		}
		return rc;
	}
	return 0;
}

/* Copy the records in tmp to output ("-" or NULL: stdout), whole. */
static int
copy_out(const char *tmp, const char *output)
{
	uint8_t *data;
	size_t len;
	aoe_ofile of;
	int rc;

	if ((rc = aoe_read_file(tmp, &data, &len)) < 0)
		return rc;
	if ((rc = aoe_ofile_open(&of, output)) == 0) {
		if (fwrite(data, 1, len, of.fp) != len) {
			rc = aoe_err(AOE_EIO, "cannot write '%s': %s",
			    output ? output : "standard output",
			    strerror(errno));
			aoe_ofile_abort(&of);
		} else
			rc = aoe_ofile_close(&of);
	}
	free(data);
	return rc;
}

/* The preconditions of subgraph tuning, unless --no-check. */
static int
check_ready(const aoe_settings *set, const char *graph, const cli *a)
{
	aoe_check_opts co;

	aoe_check_opts_set(&co, set);
	co.job_type = 1;
	co.graph = graph;
	co.shape = a->shapes;
	return aoe_check_ready(&co);
}

int
main(int argc, char **argv)
{
	sgat_opts o;
	aoe_settings set;
	cli a = { NULL, NULL, 1, 0, -1 };
	char *tmpout = NULL;
	int lockfd = -1, c, rc = 0;
	FILE *out;

	aoe_setprogname(argv[0]);
	sgat_opts_init(&o);
	while ((c = getopt_long(argc, argv, "ho:V", longopts, NULL)) != -1)
		option(c, &o, &a);
	argc -= optind;
	argv += optind;
	if (argc != 1)
		usage(AOE_EXIT_USAGE);
	if (o.reload && o.journal == NULL) {
		aoe_warnx("--reload needs --journal");
		usage(AOE_EXIT_USAGE);
	}
	o.shape = a.shapes;

	/* A tuner must not capture its graphs, nor inherit forced fusions. */
	unsetenv("AOE_MODE");
	unsetenv("AOE_FUSE");
	if ((rc = aoe_settings_load(&set)) < 0)
		goto fail;
	o.run_loop = set.run_loop;
	o.repeat_tune = set.repeat_tune;
	o.progress = a.progress >= 0 ? a.progress : isatty(2);
	if (a.check && (rc = check_ready(&set, argv[0], &a)) != 0) {
		if (rc > 0)
			return AOE_EXIT_FALSE;
		goto fail;
	}
	/* One tuning run at a time on this device (aoe-check's lock check). */
	if ((lockfd = aoe_device_lock(NULL)) < 0) {
		rc = lockfd;
		goto fail;
	}
	/* Records reach the output only when everything succeeded. */
	if ((rc = tmp_open(&tmpout, &out)) < 0)
		goto fail;
	rc = sgat_tune(&o, argv[0], out);
	if (rc == 0 && fflush(out) != 0)
		rc = aoe_err(AOE_EIO, "cannot write '%s': %s", tmpout,
		    strerror(errno));
	fclose(out);
	if (rc == 0 && a.commit)
		rc = commit_records(tmpout, !o.progress);
	if (rc == 0)
		rc = copy_out(tmpout, a.output);
	if (rc < 0)
		goto fail;
	unlink(tmpout);
	free(tmpout);
	free(a.shapes);
	aoe_device_unlock(lockfd);
	return AOE_EXIT_OK;
fail:
	aoe_warnx("%s", aoe_errmsg());
	if (tmpout)
		unlink(tmpout);
	free(tmpout);
	free(a.shapes);
	if (lockfd >= 0)
		aoe_device_unlock(lockfd);
	return aoe_exit_status(rc);
}
