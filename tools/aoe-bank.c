/*
 * aoe-bank - keep the knowledge bank: commit tuning records, merge, diff,
 * export, import, verify, prune, show, list, stats and look up.
 *
 * This file only parses the command line and dispatches; the commands
 * live in lib/bank/bank.c, except lookup, which prepares graphs as a run
 * does (lib/engine) and so sits above the bank.
 */
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

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
    "                [--tool-version v] [--no-gain]\n"
    "       aoe-bank show key ...\n"
    "       aoe-bank list [--jsonl] [--op-type type] [bank]\n"
    "       aoe-bank stats [bank]\n"
    "       aoe-bank lookup [--jsonl] [--threads n] graph ...\n";

/*
 * lookup: for each graph, which ops hit, from which bank.
 */
static int
lookup_graphs(const aoe_bank_opts *o, int argc, char **argv)
{
	char dir[PATH_MAX], file[PATH_MAX], bi[PATH_MAX];
	aoe_run_opts ro;
	int i, k, rc = 0, worst = 0, nbad = 0, t;

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
	t = ro.nthreads;
	for (i = 0; i < argc; i++) {
		aoe_graph *g = NULL;
		long hits = 0, live = 0;
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
		for (k = 0; k < g->norder; k++) {
			aoe_node *n = &g->nodes[g->order[k]];
			char sig[8192];
			const char *from;
			aoe_sched s;
			if (n->dead)
				continue;
			live++;
			memset(&s, 0, sizeof(s));
			hits += aoe_bank_find(g, n, n->nthreads > 0 ?
			    n->nthreads : t, &s, &from);
			if (aoe_op_signature(g, n, n->nthreads > 0 ?
			    n->nthreads : t, sig, sizeof(sig)) < 0)
				strcpy(sig, "");
			if (o->jsonl) {
				cJSON *j = cJSON_CreateObject();
				char kb[32], *p;
				snprintf(kb, sizeof(kb), "%llu",
				    (unsigned long long)aoe_op_key(sig));
				cJSON_AddStringToObject(j, "graph", argv[i]);
				cJSON_AddStringToObject(j, "node", n->name);
				cJSON_AddStringToObject(j, "op_type",
				    n->op_type);
				cJSON_AddStringToObject(j, "key", kb);
				cJSON_AddStringToObject(j, "signature", sig);
				cJSON_AddStringToObject(j, "from", from);
				p = cJSON_PrintUnformatted(j);
				puts(p);
				free(p);
				cJSON_Delete(j);
			} else
				printf("%s %s %s %llu %s\n", argv[i], n->name,
				    n->op_type, (unsigned long long)
				    aoe_op_key(sig), from);
		}
		if (!o->quiet)
			aoe_warnx("%s: %ld of %ld ops hit", argv[i], hits, live);
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
	{ "commit", aoe_bank_commit, 0, 1 << 20 },
	{ "merge", aoe_bank_merge, 1, 1024 },
	{ "diff", aoe_bank_diff, 2, 2 },
	{ "export", aoe_bank_export, 0, 1 },
	{ "import", aoe_bank_import, 1, 1 },
	{ "verify", aoe_bank_verify, 0, 1 << 20 },
	{ "prune", aoe_bank_prune, 0, 0 },
	{ "show", aoe_bank_show, 1, 1 << 20 },
	{ "list", aoe_bank_list, 0, 1 },
	{ "stats", aoe_bank_stats, 0, 1 },
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
			o.soc = optarg;
			break;
		case 'T':
			o.threads = (int)aoe_optnum("threads", optarg, 1, 1024);
			break;
		case 'v':
			o.tool_version = optarg;
			break;
		case 'V':
			printf("aoe-bank %s\n", AOE_VERSION);
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
