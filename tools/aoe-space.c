/*
 * aoe-space - print the search spaces of a model's nodes.
 *
 * For each live node (or the one named, or those of one op type) it
 * prints the knobs the kernel reads, their legal values, the
 * constraints between them and the default schedule, as text or as one
 * JSON object per line; or the number of points; or random legal
 * schedules drawn with a seed.  The tuner uses the same library calls
 * (aoe_space_for() and friends, see aoe.h).
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "aoe.h"

static const char usage_text[] =
    "usage: aoe-space [-chjV] [--input-shape spec] [--node name]\n"
    "                 [--op-type type] [--sample n] [--seed n] model\n";

static void
usage(int status)
{
	fputs(usage_text, status ? stderr : stdout);
	exit(status);
}

static void
print_text(const aoe_space *sp)
{
	const aoe_knob *k;
	int i, j;

	printf("%s %s: %llu points\n", sp->n->name, sp->op_type,
	    (unsigned long long)aoe_space_size(sp));
	for (i = 0; i < sp->nknobs; i++) {
		k = &sp->knobs[i];
		printf("  %-10s", k->name);
		if (k->nvals > 0)
			for (j = 0; j < k->nvals; j++)
				printf("%s%lld", j ? "," : " {",
				    (long long)k->vals[j]);
		else
			printf(" {%lld..%lld step %lld", (long long)k->lo,
			    (long long)k->hi, (long long)k->step);
		printf("} default %lld\n", (long long)k->def);
	}
	printf("  constraints: %s\n", sp->constraints);
}

static void
print_sched(const aoe_space *sp, const aoe_sched *s, int json)
{
	int i;

	if (json) {
		printf("{\"node\":\"%s\",\"op_type\":\"%s\",\"schedule\":{",
		    sp->n->name, sp->op_type);
		for (i = 0; i < s->n; i++)
			printf("%s\"%s\":%lld", i ? "," : "", s->k[i].name,
			    (long long)s->k[i].v);
		printf("}}\n");
		return;
	}
	printf("%s\t", sp->n->name);
	for (i = 0; i < s->n; i++)
		printf("%s%s=%lld", i ? "," : "", s->k[i].name,
		    (long long)s->k[i].v);
	putchar('\n');
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "count", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "input-shape", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "node", required_argument, NULL, 'n' },
		{ "op-type", required_argument, NULL, 'o' },
		{ "sample", required_argument, NULL, 'S' },
		{ "seed", required_argument, NULL, 'r' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	aoe_run_opts o;
	aoe_graph *g = NULL;
	aoe_space sp;
	aoe_sched s;
	char *shapes = NULL;
	const char *node = NULL, *optype = NULL;
	long long nsample = 0, seed = 1;
	uint64_t state;
	int json = 0, count = 0, c, i, j, rc = 0, matched = 0;

	aoe_setprogname(argv[0]);
	aoe_run_opts_init(&o);
	o.use_bank = 0;
	while ((c = getopt_long(argc, argv, "chjV", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			count = 1;
			break;
		case 'h':
			usage(AOE_EXIT_OK);
			break;
		case 'j':
			json = 1;
			break;
		case 'n':
			node = optarg;
			break;
		case 'o':
			optype = optarg;
			break;
		case 'r':
			seed = aoe_optnum("seed", optarg, 0, INT64_MAX);
			break;
		case 's':
			aoe_shape_spec_add(&shapes, optarg);
			break;
		case 'S':
			nsample = aoe_optnum("sample", optarg, 1, 1000000);
			break;
		case 'V':
			printf("aoe-space %s\n", AOE_VERSION);
			return AOE_EXIT_OK;
		default:
			usage(AOE_EXIT_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc != 1 || (node && optype) || (count && nsample))
		usage(AOE_EXIT_USAGE);

	if ((rc = aoe_model_load(argv[0], &g)) < 0)
		goto fail;
	if (shapes && (rc = aoe_bind_shapes(g, shapes)) < 0)
		goto fail;
	/* The nodes as the model has them, as aoe-opat tunes them. */
	o.fuse_mode = AOE_FUSE_OFF;
	if ((rc = aoe_graph_prepare(g, &o)) < 0)
		goto fail;
	state = (uint64_t)seed;
	for (i = 0; i < g->norder; i++) {
		aoe_node *n = &g->nodes[g->order[i]];
		if (n->dead || (node && strcmp(n->name, node) != 0) ||
		    (optype && strcmp(n->op_type, optype) != 0))
			continue;
		matched++;
		if ((rc = aoe_space_for(g, n, &sp)) < 0)
			goto fail;
		if (count)
			printf("%s\t%s\t%llu\n", n->name, n->op_type,
			    (unsigned long long)aoe_space_size(&sp));
		else if (nsample)
			for (j = 0; j < nsample; j++) {
				if ((rc = aoe_space_sample(&sp, &state,
				    &s)) < 0)
					goto fail;
				print_sched(&sp, &s, json);
			}
		else if (json) {
			if ((rc = aoe_space_print_json(&sp, NULL, stdout)) < 0)
				goto fail;
		} else
			print_text(&sp);
	}
	if (matched == 0) {
		rc = aoe_err(AOE_EDATA, "%s: no live node %s '%s'", argv[0],
		    node ? "named" : "of type", node ? node : optype ?
		    optype : "");
		goto fail;
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		rc = aoe_err(AOE_EIO, "write error: %s", strerror(errno));
		goto fail;
	}
	aoe_graph_free(g);
	free(shapes);
	return AOE_EXIT_OK;
fail:
	aoe_warnx("%s", aoe_errmsg());
	aoe_graph_free(g);
	free(shapes);
	return aoe_exit_status(rc);
}
