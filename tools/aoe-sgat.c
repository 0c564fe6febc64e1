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
    "                [--no-bank] [--no-check] [--progress | --no-progress]\n"
    "                [--reload] [--seed n] [--threads n] [--timeout s]\n"
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

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "budget-trials", required_argument, NULL, 'n' },
		{ "commit", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "input-shape", required_argument, NULL, 's' },
		{ "journal", required_argument, NULL, 'j' },
		{ "no-bank", no_argument, NULL, 'B' },
		{ "no-check", no_argument, NULL, 'C' },
		{ "no-progress", no_argument, NULL, 'q' },
		{ "output", required_argument, NULL, 'o' },
		{ "progress", no_argument, NULL, 'p' },
		{ "reload", no_argument, NULL, 'r' },
		{ "seed", required_argument, NULL, 'S' },
		{ "threads", required_argument, NULL, 't' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "tune-ops-file", required_argument, NULL, 'f' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	sgat_opts o;
	aoe_check_opts co;
	aoe_settings set;
	const char *output = NULL;
	char *tmpout = NULL, *shapes = NULL;
	int lockfd = -1;
	int check = 1, commit = 0, progress = -1, c, rc = 0;
	FILE *out;

	aoe_setprogname(argv[0]);
	sgat_opts_init(&o);
	while ((c = getopt_long(argc, argv, "ho:V", longopts, NULL)) != -1) {
		switch (c) {
		case 'B':
			o.use_bank = 0;
			break;
		case 'c':
			commit = 1;
			break;
		case 'C':
			check = 0;
			break;
		case 'f':
			aoe_warnx("--tune-ops-file selects operators; subgraph "
			    "tuning has none to select (use aoe-opat)");
			exit(AOE_EXIT_USAGE);
		case 'h':
			usage(AOE_EXIT_OK);
			break;
		case 'j':
			o.journal = optarg;
			break;
		case 'n':
			o.budget_trials = (int)aoe_optnum("budget-trials", optarg,
			    1, 1000000);
			break;
		case 'o':
			output = optarg;
			break;
		case 'p':
			progress = 1;
			break;
		case 'q':
			progress = 0;
			break;
		case 'r':
			o.reload = 1;
			break;
		case 's':
			aoe_shape_spec_add(&shapes, optarg);
			break;
		case 'S':
			o.seed = (uint64_t)aoe_optnum("seed", optarg, 0,
			    INT64_MAX);
			break;
		case 't':
			o.threads = (int)aoe_optnum("threads", optarg, 1, 1024);
			break;
		case 'T':
			o.timeout_s = (double)aoe_optnum("timeout", optarg, 1,
			    86400);
			break;
		case 'V':
			printf("aoe-sgat %s\n", AOE_VERSION);
			return AOE_EXIT_OK;
		default:
			usage(AOE_EXIT_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc != 1)
		usage(AOE_EXIT_USAGE);
	if (o.reload && o.journal == NULL) {
		aoe_warnx("--reload needs --journal");
		usage(AOE_EXIT_USAGE);
	}
	o.shape = shapes;

	/* A tuner must not capture its graphs, nor inherit forced fusions. */
	unsetenv("AOE_MODE");
	unsetenv("AOE_FUSE");
	if ((rc = aoe_settings_load(&set)) < 0)
		goto fail;
	aoe_check_opts_set(&co, &set);
	o.run_loop = set.run_loop;
	o.repeat_tune = set.repeat_tune;
	o.progress = progress >= 0 ? progress : isatty(2);
	if (check) {
		co.job_type = 1;
		co.graph = argv[0];
		co.shape = shapes;
		if ((rc = aoe_check_ready(&co)) != 0) {
			if (rc > 0)
				return AOE_EXIT_FALSE;
			goto fail;
		}
	}
	/* One tuning run at a time on this device (aoe-check's lock check). */
	if ((lockfd = aoe_device_lock(NULL)) < 0) {
		rc = lockfd;
		goto fail;
	}
	/*
	 * Records go to a private temporary file, which --commit reads, and
	 * are copied to the output only when everything succeeded.
	 */
	{
		const char *td = getenv("TMPDIR");
		size_t l = strlen(td && *td ? td : "/tmp") + 32;
		int fd;
		tmpout = aoe_xmalloc(l);
		snprintf(tmpout, l, "%s/aoe-sgat.XXXXXX", td && *td ? td :
		    "/tmp");
		if ((fd = mkstemp(tmpout)) < 0 ||
		    (out = fdopen(fd, "w")) == NULL) {
			rc = aoe_err(AOE_EIO, "cannot create '%s': %s",
			    tmpout, strerror(errno));
			if (fd >= 0)
				close(fd);
			else {
				free(tmpout);
				tmpout = NULL;
			}
			goto fail;
		}
	}
	rc = sgat_tune(&o, argv[0], out);
	if (rc == 0 && fflush(out) != 0)
		rc = aoe_err(AOE_EIO, "cannot write '%s': %s", tmpout,
		    strerror(errno));
	fclose(out);
	if (rc == 0 && commit)
		rc = commit_records(tmpout, !o.progress);
	if (rc == 0) {
		uint8_t *data;
		size_t len;
		aoe_ofile of;
		if ((rc = aoe_read_file(tmpout, &data, &len)) == 0) {
			if ((rc = aoe_ofile_open(&of, output)) == 0) {
				if (fwrite(data, 1, len, of.fp) != len) {
					rc = aoe_err(AOE_EIO, "cannot write "
					    "'%s': %s", output ? output :
					    "standard output", strerror(errno));
					aoe_ofile_abort(&of);
				} else
					rc = aoe_ofile_close(&of);
			}
			free(data);
		}
	}
	if (rc < 0)
		goto fail;
	unlink(tmpout);
	free(tmpout);
	free(shapes);
	aoe_device_unlock(lockfd);
	return AOE_EXIT_OK;
fail:
	aoe_warnx("%s", aoe_errmsg());
	if (tmpout)
		unlink(tmpout);
	free(tmpout);
	free(shapes);
	if (lockfd >= 0)
		aoe_device_unlock(lockfd);
	return aoe_exit_status(rc);
}
