/*
 * aoe-opat - operator tuning: measure real candidate schedules of each
 * distinct operator case safely and write tuning records (and, with
 * --commit, the bank).
 *
 * The driver runs the whole loop; --list, --generate, --measure and
 * --select expose its stages as JSON Lines filters that compose in pipes
 * and under GNU parallel (see aoe-opat(1)).
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opat.h"

static const char usage_text[] =
    "usage: aoe-opat [-hV] [--alone] [--budget-seconds s] [--budget-trials n]\n"
    "                [--commit] [--input-shape spec] [--journal file] [--no-bank]\n"
    "                [--no-check] [--progress | --no-progress] [-o file]\n"
    "                [--replay timings] [--seed n] [--sshloginfile file]\n"
    "                [--strategy name]\n"
    "                [--threads n] [--timeout s] [--timings file]\n"
    "                [--total-seconds s] [--total-trials n]\n"
    "                [--tune-ops-file file] [graph | tasks ...]\n"
    "       aoe-opat --list | --generate [options] [graph ...]\n"
    "       aoe-opat --measure [options] [candidates ...]\n"
    "       aoe-opat --select [--commit] [-o file] [timings ...]\n"
    "       aoe-opat --space node [--input-shape spec] graph\n"
    "       aoe-opat --soc-version\n";

enum { M_TUNE, M_LIST, M_GENERATE, M_MEASURE, M_SELECT, M_SPACE };

static void
usage(int status)
{
	fputs(usage_text, status ? stderr : stdout);
	exit(status);
}

/* AOE's --tune_ops_file: tune_ops_name and tune_ops_type lists. */
static int
read_ops_file(const char *path, opat_opts *o)
{
	uint8_t *data;
	size_t len;
	cJSON *j, *it;
	const char *lists[2] = { "tune_ops_name", "tune_ops_type" };
	int rc, i, any = 0;

	if ((rc = aoe_read_file(path, &data, &len)) < 0)
		return rc;
	data = aoe_xrealloc(data, len + 1);
	data[len] = '\0';
	j = cJSON_Parse((char *)data);
	free(data);
	if (!cJSON_IsObject(j)) {
		cJSON_Delete(j);
		return aoe_err(AOE_EDATA, "%s: not a JSON object", path);
	}
	for (i = 0; i < 2; i++) {
		const cJSON *l = cJSON_GetObjectItemCaseSensitive(j, lists[i]);
		char ***v = i ? &o->ops_types : &o->ops_names;
		int *n = i ? &o->nops_types : &o->nops_names;
		if (l == NULL)
			continue;
		if (!cJSON_IsArray(l)) {
			cJSON_Delete(j);
			return aoe_err(AOE_EDATA, "%s: \"%s\" is not an array "
			    "of strings", path, lists[i]);
		}
		cJSON_ArrayForEach(it, l) {
			if (!cJSON_IsString(it)) {
				cJSON_Delete(j);
				return aoe_err(AOE_EDATA, "%s: \"%s\" is not an "
				    "array of strings", path, lists[i]);
			}
			*v = aoe_xrealloc(*v, (*n + 1) * sizeof(char *));
			(*v)[(*n)++] = aoe_xstrdup(it->valuestring);
			any = 1;
		}
	}
	cJSON_Delete(j);
	if (!any)
		return aoe_err(AOE_EDATA, "%s: neither tune_ops_name nor "
		    "tune_ops_type lists an operator", path);
	return 0;
}

/* Copy stdin to a temporary file, so that it can be loaded by path. */
static char *
stdin_file(void)
{
	char tmpl[] = "/tmp/aoe-opat-stdin.XXXXXX", buf[65536];
	size_t n;
	int fd;
	FILE *fp;

	if ((fd = mkstemp(tmpl)) < 0 || (fp = fdopen(fd, "w")) == NULL)
		return NULL;
	while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0)
		fwrite(buf, 1, n, fp);
	if (fclose(fp) != 0) {
		unlink(tmpl);
		return NULL;
	}
	return aoe_xstrdup(tmpl);
}

/*
 * aoe-check(1)'s checks, with the graph and memory checks on each graph
 * operand (a graph that does not load is left for the run to report);
 * 1 when a check fails.
 */
static int
check_ready(aoe_check_opts *co, char **paths, int n, const char *shapes)
{
	int i, rc, checked = 0;

	co->shape = shapes;
	for (i = 0; i < n; i++) {
		if (strcmp(paths[i], "-") == 0 || opat_is_tasks(paths[i]))
			continue;
		co->graph = paths[i];
		if ((rc = aoe_check_ready(co)) > 0)
			return rc;
		checked += rc == 0;
	}
	co->graph = NULL;
	return checked ? 0 : aoe_check_ready(co);
}

static int
print_space(opat_run *r, const char *graph, const char *node,
    const char *shape)
{
	char *only[1];
	aoe_space sp;
	aoe_graph *g;
	aoe_node *n;
	int rc;

	only[0] = (char *)node;
	if ((rc = opat_add_graph(r, graph, shape, only, 1)) < 0)
		return rc;
	/* A subgraph's node by its path, "if0/then_branch/conv0". */
	if (!aoe_graph_find_path(r->graphs[0].g, node, &g, &n))
		return aoe_err(AOE_EDATA, "%s: no live node '%s'", graph, node);
	if ((rc = aoe_space_for(g, n, &sp)) < 0)
		return rc;
	/* Named by the path it was asked by, as the records name it. */
	return aoe_space_print_json(&sp, node, r->out);
}

static const struct option longopts[] = {
	{ "alone", no_argument, NULL, 'l' },
	{ "budget-seconds", required_argument, NULL, 'b' },
	{ "budget-trials", required_argument, NULL, 'n' },
	{ "commit", no_argument, NULL, 'c' },
	{ "generate", no_argument, NULL, 'G' },
	{ "help", no_argument, NULL, 'h' },
	{ "input-shape", required_argument, NULL, 's' },
	{ "journal", required_argument, NULL, 'j' },
	{ "list", no_argument, NULL, 'L' },
	{ "measure", no_argument, NULL, 'M' },
	{ "no-bank", no_argument, NULL, 'B' },
	{ "no-check", no_argument, NULL, 'C' },
	{ "no-progress", no_argument, NULL, 'q' },
	{ "output", required_argument, NULL, 'o' },
	{ "progress", no_argument, NULL, 'p' },
	{ "replay", required_argument, NULL, 'r' },
	{ "seed", required_argument, NULL, 'S' },
	{ "select", no_argument, NULL, 'E' },
	{ "soc-version", no_argument, NULL, 'v' },
	{ "space", required_argument, NULL, 'P' },
	{ "sshloginfile", required_argument, NULL, 'H' },
	{ "strategy", required_argument, NULL, 'y' },
	{ "threads", required_argument, NULL, 't' },
	{ "timeout", required_argument, NULL, 'T' },
	{ "timings", required_argument, NULL, 'i' },
	{ "total-seconds", required_argument, NULL, 'a' },
	{ "total-trials", required_argument, NULL, 'A' },
	{ "tune-ops-file", required_argument, NULL, 'f' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

/* What the command line asks for besides the run's options. */
typedef struct args {
	int mode;
	int check;		/* aoe-check's checks first (M_TUNE) */
	int progress;		/* -1: when stderr is a terminal */
	const char *output, *timings, *opsfile, *space_node;
	char *shapes;		/* --input-shape, all of them */
} args;

/* Take option c (its argument arg) into the run's options o or a. */
static void
option(int c, char *arg, opat_opts *o, args *a)
{
	switch (c) {
	case 'a':
		o->total_seconds = (double)aoe_optnum("total-seconds", arg, 0,
		    100000000);
		break;
	case 'A':
		o->total_trials = aoe_optnum("total-trials", arg, 0,
		    1000000000);
		break;
	case 'b':
		o->budget_seconds = (double)aoe_optnum("budget-seconds", arg,
		    1, 100000000);
		break;
	case 'l':
		o->in_model = 0;
		break;
	case 'B':
		o->use_bank = 0;
		break;
	case 'c':
		o->commit = 1;
		break;
	case 'C':
		a->check = 0;
		break;
	case 'E':
		a->mode = M_SELECT;
		break;
	case 'f':
		a->opsfile = arg;
		break;
	case 'G':
		a->mode = M_GENERATE;
		break;
	case 'h':
		usage(AOE_EXIT_OK);
		break;
	case 'H':
		o->sshloginfile = arg;
		break;
	case 'i':
		a->timings = arg;
		break;
	case 'j':
		o->journal = arg;
		break;
	case 'L':
		a->mode = M_LIST;
		break;
	case 'M':
		a->mode = M_MEASURE;
		break;
	case 'n':
		o->budget_trials = aoe_optnum("budget-trials", arg, 1,
		    100000000);
		break;
	case 'o':
		a->output = arg;
		break;
	case 'p':
		a->progress = 1;
		break;
	case 'P':
		a->mode = M_SPACE;
		a->space_node = arg;
		break;
	case 'q':
		a->progress = 0;
		break;
	case 'r':
		o->replay = arg;
		break;
	case 's':
		aoe_shape_spec_add(&a->shapes, arg);
		break;
	case 'S':
		o->seed = (uint64_t)aoe_optnum("seed", arg, 0, INT64_MAX);
		break;
	case 't':
		o->threads = (int)aoe_optnum("threads", arg, 1, 1024);
		break;
	case 'T':
		o->timeout_s = (double)aoe_optnum("timeout", arg, 1, 86400);
		break;
	case 'v':
		/* What --sshloginfile asks each host. */
		printf("%s\n", aoe_soc_version());
		exit(AOE_EXIT_OK);
	case 'V':
		printf("aoe-opat %s\n", AOE_VERSION);
		exit(AOE_EXIT_OK);
	case 'y':
		if ((o->strategy = opat_strategy_from_name(arg)) < 0) {
			aoe_warnx("--strategy '%s': use exhaustive, random, "
			    "evolution or auto", arg);
			exit(AOE_EXIT_USAGE);
		}
		break;
	default:
		usage(AOE_EXIT_USAGE);
	}
}

/*
 * The settings (aoe.ini, then the environment) into the run and the
 * checks, with --tune-ops-file and whether to show progress.
 */
static int
apply_settings(opat_run *r, aoe_check_opts *co, const args *a)
{
	aoe_settings set;
	int rc;

	if ((rc = aoe_settings_load(&set)) < 0)
		return rc;
	aoe_check_opts_set(co, &set);
	r->o.run_loop = set.run_loop;
	r->o.tuning_parallel = set.tuning_parallel;
	r->o.te_parallel = aoe_settings_te_parallel(&set);
	r->o.repeat_tune = set.repeat_tune;
	if (a->opsfile && (rc = read_ops_file(a->opsfile, &r->o)) < 0)
		return rc;
	r->o.progress = a->progress >= 0 ? a->progress : isatty(2);
	if (a->mode != M_TUNE)
		r->o.progress = 0;
	return 0;
}

/*
 * Add the graphs and task files named (none: stdin, copied to a file
 * whose name goes to *stdin_copy).  One that fails to load is told and
 * its error kept in *worst; the others go on.  0, or an error.
 */
static int
add_operands(opat_run *r, char **paths, int n, const char *shapes,
    char **stdin_copy, int *worst)
{
	int i, rc;

	for (i = 0; i < (n ? n : 1); i++) {
		const char *path = n ? paths[i] : "-";
		if (strcmp(path, "-") == 0) {
			if (*stdin_copy == NULL &&
			    (*stdin_copy = stdin_file()) == NULL)
				return aoe_err(AOE_EIO, "cannot copy stdin: "
				    "%s", strerror(errno));
			path = *stdin_copy;
		}
		if (opat_is_tasks(path))
			rc = opat_add_tasks(r, path);
		else
			rc = opat_add_graph(r, path, shapes, NULL, 0);
		if (rc < 0) {
			aoe_warnx("%s", aoe_errmsg());
			if (rc < *worst)
				*worst = rc;
		}
	}
	return 0;
}

/* --list, --generate or the tuning run, over the cases found. */
static int
run_cases(opat_run *r, const args *a)
{
	int rc;

	if (a->mode == M_LIST)
		return opat_list(r);
	if (a->mode == M_GENERATE)
		return opat_generate(r);
	if (r->o.replay && (rc = opat_load_replay(r, r->o.replay)) < 0)
		return rc;
	rc = opat_tune(r);
	if (rc == 0 && r->nfailed)
		aoe_warnx("%d of %d cases failed (see their records)",
		    r->nfailed, r->ncases);
	return rc;
}

/* What the run holds besides its output, freed on every way out. */
static void
release(opat_run *r, args *a, char *stdin_copy, int lockfd)
{
	if (r->tfp)
		fclose(r->tfp);
	if (stdin_copy)
		unlink(stdin_copy);
	opat_run_free(r);
	free(stdin_copy);
	free(a->shapes);
	if (lockfd >= 0)
		aoe_device_unlock(lockfd);
}

int
main(int argc, char **argv)
{
	opat_run r;
	aoe_check_opts co;
	args a = { M_TUNE, 1, -1, NULL, NULL, NULL, NULL, NULL };
	char *stdin_copy = NULL;
	aoe_ofile of = { NULL, NULL, NULL };
	int c, rc = 0, worst = 0, lockfd = -1;

	aoe_setprogname(argv[0]);
	memset(&r, 0, sizeof(r));
	opat_opts_init(&r.o);
	r.o.use_bank = 1;
	while ((c = getopt_long(argc, argv, "ho:V", longopts, NULL)) != -1)
		option(c, optarg, &r.o, &a);
	argc -= optind;
	argv += optind;
	if ((a.mode == M_SPACE && argc != 1) ||
	    (r.o.replay && a.mode != M_TUNE) ||
	    (r.o.sshloginfile && (a.mode != M_TUNE || r.o.replay)))
		usage(AOE_EXIT_USAGE);

	/* A tuner must not capture or tune the graphs it loads itself. */
	unsetenv("AOE_MODE");
	if ((rc = apply_settings(&r, &co, &a)) < 0)
		goto fail;
	if ((rc = aoe_ofile_open(&of, a.output)) < 0)
		goto fail;
	r.out = of.fp;
	if (a.timings && (r.tfp = fopen(a.timings, "a")) == NULL) {
		rc = aoe_err(AOE_EIO, "cannot open '%s': %s", a.timings,
		    strerror(errno));
		goto fail;
	}

	rc = 0;
	if (a.mode == M_MEASURE)
		worst = opat_measure_stream(&r, argc, argv);
	else if (a.mode == M_SELECT)
		worst = opat_select_stream(&r, argc, argv);
	else if (a.mode == M_SPACE)
		rc = print_space(&r, argv[0], a.space_node, a.shapes);
	else {
		if (a.mode == M_TUNE && a.check &&
		    (rc = check_ready(&co, argv, argc, a.shapes)) != 0) {
			if (rc > 0) {
				aoe_ofile_abort(&of);
				return AOE_EXIT_FALSE;
			}
			goto fail;
		}
		/*
		 * One tuning run at a time on this device (aoe-check's lock
		 * check).
		 */
		if (a.mode == M_TUNE &&
		    (lockfd = aoe_device_lock(NULL)) < 0) {
			rc = lockfd;
			goto fail;
		}
		if ((rc = add_operands(&r, argv, argc, a.shapes, &stdin_copy,
		    &worst)) < 0)
			goto fail;
		if (r.ncases == 0 && worst == 0)
			aoe_warnx("no tunable operators%s", a.opsfile ?
			    " selected" : "");
		rc = run_cases(&r, &a);
	}
	if (rc < 0)
		goto fail;
	if (rc == 0 && worst < 0)
		rc = worst;
	r.out = stdout;
	if ((c = aoe_ofile_close(&of)) < 0) {
		rc = c;
		goto fail;
	}
	release(&r, &a, stdin_copy, lockfd);
	return rc < 0 ? aoe_exit_status(rc) : rc > 0 ? AOE_EXIT_FALSE :
	    AOE_EXIT_OK;
fail:
	if (rc < 0)
		aoe_warnx("%s", aoe_errmsg());
	aoe_ofile_abort(&of);
	release(&r, &a, stdin_copy, lockfd);
	return aoe_exit_status(rc);
}
