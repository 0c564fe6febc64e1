/*
 * aoe-check - check the preconditions of a tuning run.
 *
 * Each of AOE's preconditions, adapted to a CPU host (see lib/tune/check.c): a
 * table of OK, WARN and FAIL with the measured value and the limit, or
 * JSON.  Exit 0 when the machine is ready to tune, 1 when it is not.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "aoe.h"

static const char usage_text[] =
    "usage: aoe-check [-hV] [--graph file] [--input-shape spec]\n"
    "                 [--job-type 1|2] [--json] [--lock file]\n"
    "                 [--min-disk-gb n] [--processes n]\n";

static const char *const status_name[] = { "OK", "WARN", "FAIL" };

static void
usage(int status)
{
	fputs(usage_text, status ? stderr : stdout);
	exit(status);
}

static int
print_json(const aoe_check_opts *o, const aoe_check_result *r)
{
	cJSON *root = cJSON_CreateObject(), *arr, *it;
	char *text;
	int i, rc = 0;

	cJSON_AddBoolToObject(root, "ready", r->nfail == 0);
	cJSON_AddNumberToObject(root, "job_type", o->job_type);
	cJSON_AddNumberToObject(root, "TUNING_PARALLEL_NUM",
	    o->tuning_parallel);
	cJSON_AddNumberToObject(root, "TE_PARALLEL_COMPILER", o->te_parallel);
	cJSON_AddNumberToObject(root, "RUN_LOOP", o->run_loop);
	cJSON_AddStringToObject(root, "WORK_PATH", o->work_path);
	if (o->ini[0])
		cJSON_AddStringToObject(root, "ini", o->ini);
	arr = cJSON_AddArrayToObject(root, "checks");
	for (i = 0; i < r->n; i++) {
		it = cJSON_CreateObject();
		cJSON_AddStringToObject(it, "check", r->item[i].check);
		cJSON_AddStringToObject(it, "status",
		    status_name[r->item[i].status]);
		cJSON_AddStringToObject(it, "measured", r->item[i].measured);
		cJSON_AddStringToObject(it, "limit", r->item[i].limit);
		cJSON_AddStringToObject(it, "note", r->item[i].note);
		cJSON_AddItemToArray(arr, it);
	}
	text = cJSON_Print(root);
	cJSON_Delete(root);
	if (text == NULL)
		return aoe_err(AOE_ENOMEM, "out of memory");
	if (puts(text) == EOF)
		rc = aoe_err(AOE_EIO, "write error on standard output");
	free(text);
	return rc;
}

static void
print_table(const aoe_check_result *r)
{
	int i;

	printf("%-10s %-6s %-18s %-18s %s\n", "check", "status", "measured",
	    "limit", "note");
	for (i = 0; i < r->n; i++)
		printf("%-10s %-6s %-18s %-18s %s\n", r->item[i].check,
		    status_name[r->item[i].status], r->item[i].measured,
		    r->item[i].limit, r->item[i].note);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "graph", required_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' },
		{ "input-shape", required_argument, NULL, 's' },
		{ "job-type", required_argument, NULL, 'j' },
		{ "json", no_argument, NULL, 'J' },
		{ "lock", required_argument, NULL, 'l' },
		{ "min-disk-gb", required_argument, NULL, 'D' },
		{ "processes", required_argument, NULL, 'p' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	aoe_check_opts o;
	aoe_check_result r;
	const char *graph = NULL, *lock = NULL;
	char *shapes = NULL;
	long long job = 0, procs = 0, disk = -1;
	int c, json = 0, rc;

	aoe_setprogname(argv[0]);
	while ((c = getopt_long(argc, argv, "g:hj:Vp:s:", longopts,
	    NULL)) != -1) {
		switch (c) {
		case 'D':
			disk = aoe_optnum("min-disk-gb", optarg, 0, 1000000000);
			break;
		case 'g':
			graph = optarg;
			break;
		case 'h':
			usage(AOE_EXIT_OK);
			break;
		case 'j':
			if (strcmp(optarg, "4") == 0) {
				aoe_warnx("--job-type 4 (gradient split "
				    "tuning) is not supported by aoe");
				return AOE_EXIT_UNSUP;
			}
			job = aoe_optnum("job-type", optarg, 1, 2);
			break;
		case 'J':
			json = 1;
			break;
		case 'l':
			lock = optarg;
			break;
		case 's':
			aoe_shape_spec_add(&shapes, optarg);
			break;
		case 'p':
			procs = aoe_optnum("processes", optarg, 1, 1024);
			break;
		case 'V':
			printf("aoe-check %s\n", AOE_VERSION);
			return AOE_EXIT_OK;
		default:
			usage(AOE_EXIT_USAGE);
		}
	}
	if (optind != argc)
		usage(AOE_EXIT_USAGE);

	if ((rc = aoe_check_opts_init(&o)) < 0)
		goto fail;
	if (job)
		o.job_type = (int)job;
	if (procs)
		o.processes = (int)procs;
	if (disk >= 0)
		o.min_disk_gb = (double)disk;
	o.graph = graph;
	o.shape = shapes;
	o.lock_path = lock;
	rc = aoe_check_run(&o, &r);
	free(shapes);
	if (rc < 0)
		goto fail;
	if (json) {
		if ((rc = print_json(&o, &r)) < 0)
			goto fail;
	} else
		print_table(&r);
	if (fflush(stdout) != 0) {
		rc = aoe_err(AOE_EIO, "write error on standard output: %s",
		    strerror(errno));
		goto fail;
	}
	if (r.nfail) {
		aoe_warnx("not ready to tune: %d check%s failed", r.nfail,
		    r.nfail == 1 ? "" : "s");
		return AOE_EXIT_FALSE;
	}
	return AOE_EXIT_OK;
fail:
	aoe_warnx("%s", aoe_errmsg());
	return aoe_exit_status(rc);
}
