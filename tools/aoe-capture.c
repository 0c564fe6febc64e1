/*
 * aoe-capture - capture the static graphs that tuning works on.
 *
 * Given a model, it binds the input shapes, prepares the graph (shape
 * inference and constant folding) and writes the static aoe-graph(5).
 * Given "-- COMMAND", it runs any program that uses libaoe with AOE_MODE
 * and AOE_CAPTURE_DIR set; libaoe writes every distinct graph the
 * program compiles into the capture directory, and aoe-capture lists
 * them.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "aoe.h"

extern char **environ;

static const char usage_text[] =
    "usage: aoe-capture [-hV] [--input-shape spec] [--output file] model\n"
    "       aoe-capture --input-shape spec [--output dir]\n"
    "                   --dynamic-batch-size list | --dynamic-image-size list |\n"
    "                   --dynamic-dims list model\n"
    "       aoe-capture [--dir dir] [--job-type 1|2] [--null] -- command "
    "[arg ...]\n";

static void
usage(int status)
{
	fputs(usage_text, status ? stderr : stdout);
	exit(status);
}

/*
 * One operator case, for the summary: the key of its canonical signature
 * (aoe_op_signature, as the bank keys it).
 */
typedef struct opcase {
	const char *op_type;
	uint64_t sig;
} opcase;

static uint64_t
node_sig(const aoe_graph *g, const aoe_node *n)
{
	/* As long a signature as aoe_bank_find() computes. */
	char *sig = aoe_xmalloc(65536);
	uint64_t h;

	if (aoe_op_signature(g, n, 1, sig, 65536) == 0)
		h = aoe_op_key(sig);
	else	/* no canonical case: the node is one of its own */
		h = aoe_op_key(n->name) ^ 0x8000000000000000ULL;
	free(sig);
	return h;
}

static int
cmp_case(const void *a, const void *b)
{
	const opcase *x = a, *y = b;
	int c = strcmp(x->op_type, y->op_type);

	if (c)
		return c;
	return x->sig < y->sig ? -1 : x->sig > y->sig;
}

/* The cases of a graph's nodes, those of its subgraphs included. */
typedef struct cases {
	opcase *c;
	int n, cap;
} cases;

static int
add_case(aoe_graph *g, aoe_node *nd, const char *path, void *arg)
{
	cases *cs = arg;

	(void)path;
	if (cs->n == cs->cap) {
		cs->cap = cs->cap ? 2 * cs->cap : 64;
		cs->c = aoe_xrealloc(cs->c, (size_t)cs->cap * sizeof(*cs->c));
	}
	cs->c[cs->n].op_type = nd->op_type;
	cs->c[cs->n++].sig = node_sig(g, nd);
	return 0;
}

/*
 * Print, per op type, the nodes and their distinct cases on stderr: the
 * graph's live nodes and those of its If branches and Loop and Scan
 * bodies (the If, Loop or Scan itself is one node).
 */
static void
summary(aoe_graph *g)
{
	cases cs = { NULL, 0, 0 };
	opcase *c;
	int n, i, j, nodes, ncases, tn = 0, tc = 0;

	aoe_graph_each_node(g, add_case, &cs);
	c = cs.c;
	n = cs.n;
	qsort(c, (size_t)n, sizeof(*c), cmp_case);
	fprintf(stderr, "%-24s %6s %6s\n", "op_type", "nodes", "cases");
	for (i = 0; i < n; i = j) {
		nodes = ncases = 0;
		for (j = i; j < n && strcmp(c[j].op_type, c[i].op_type) == 0;
		    j++) {
			nodes++;
			if (j == i || c[j].sig != c[j - 1].sig)
				ncases++;
		}
		fprintf(stderr, "%-24s %6d %6d\n", c[i].op_type, nodes,
		    ncases);
		tn += nodes;
		tc += ncases;
	}
	fprintf(stderr, "%-24s %6d %6d\n", "total", tn, tc);
	free(c);
}

static int
capture_model(const char *model, const char *shapes, const char *out)
{
	aoe_run_opts o;
	aoe_graph *g = NULL;
	int rc;

	/* Our own compile is not a workload's: never hand it on. */
	unsetenv("AOE_MODE");
	aoe_run_opts_init(&o);
	o.use_bank = 0;
	o.static_memory = 0;
	o.profile = 0;
	if ((rc = aoe_model_load(model, &g)) < 0)
		goto out;
	if (shapes && (rc = aoe_bind_shapes(g, shapes)) < 0)
		goto out;
	/* The graph as the model has it: fusion is for tuning to decide. */
	o.fuse_mode = AOE_FUSE_OFF;
	if ((rc = aoe_graph_prepare(g, &o)) < 0)
		goto out;
	if (out == NULL || strcmp(out, "-") == 0) {
		if ((rc = aoe_json_save(g, stdout)) == 0 &&
		    fflush(stdout) != 0)
			rc = aoe_err(AOE_EIO, "write error on standard "
			    "output: %s", strerror(errno));
	} else
		rc = aoe_graph_write(g, out);
	if (rc == 0)
		summary(g);
out:
	aoe_graph_free(g);
	return rc;
}

/*
 * AOE's dynamic-shape profiles: an --input-shape whose dynamic dimensions
 * are -1, and the values each profile gives them.  --dynamic-batch-size
 * "1,4,8" is three profiles of one value, for every -1;
 * --dynamic-image-size "32,320;48,640" two of a height and a width, for
 * each pair of -1s; --dynamic-dims "1,320;2,640" two that fill the -1s in
 * order.
 */
enum { DYN_NONE, DYN_BATCH, DYN_IMAGE, DYN_DIMS };
static const char *const dyn_opt[] = { "", "--dynamic-batch-size",
	"--dynamic-image-size", "--dynamic-dims" };

/* The spec with profile prof's values for its -1s; NULL on error. */
static char *
expand_profile(const char *spec, int kind, const char *prof)
{
	char *copy = aoe_xstrdup(prof), *tok, *save = NULL, *out, *o;
	long long v[AOE_MAXDIM * 8];
	const char *p;
	int nv = 0, nmin = 0, k = 0;

	for (tok = strtok_r(copy, ",", &save); tok;
	    tok = strtok_r(NULL, ",", &save)) {
		if (nv == (int)(sizeof(v) / sizeof(v[0])) ||
		    aoe_strtonum(tok, 1, INT32_MAX, &v[nv]) < 0) {
			aoe_warnx("%s: '%s' is not a dimension (1 to %d)",
			    dyn_opt[kind], tok, INT32_MAX);
			free(copy);
			return NULL;
		}
		nv++;
	}
	free(copy);
	for (p = spec; (p = strstr(p, "-1")) != NULL; p += 2)
		nmin++;
	if (nmin == 0 || (kind == DYN_BATCH && nv != 1) ||
	    (kind == DYN_IMAGE && (nv != 2 || nmin % 2)) ||
	    (kind == DYN_DIMS && nv != nmin)) {
		aoe_warnx("%s profile '%s' does not fit --input-shape '%s' "
		    "(%d dynamic dimensions, given as -1)", dyn_opt[kind],
		    prof, spec, nmin);
		return NULL;
	}
	out = aoe_xmalloc(strlen(spec) + (size_t)nmin * 12 + 1);
	for (o = out, p = spec; *p; ) {
		if (strncmp(p, "-1", 2) == 0) {
			o += sprintf(o, "%lld", v[kind == DYN_BATCH ? 0 :
			    kind == DYN_IMAGE ? k % 2 : k]);
			k++;
			p += 2;
		} else
			*o++ = *p++;
	}
	*o = '\0';
	return out;
}

/*
 * Capture one graph a profile into DIR/graph_<k>.json, listing each file
 * on standard output: the shapes that tuning then covers.
 */
static int
capture_profiles(const char *model, const char *shapes, int kind,
    const char *list, const char *dir)
{
	char *copy = aoe_xstrdup(list), *prof, *save = NULL, *spec;
	char path[PATH_MAX];
	int k = 0, rc = 0;

	if (shapes == NULL) {
		aoe_warnx("%s needs --input-shape with -1 for each dynamic "
		    "dimension", dyn_opt[kind]);
		free(copy);
		return AOE_EXIT_USAGE;
	}
	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		aoe_warnx("cannot create '%s': %s", dir, strerror(errno));
		free(copy);
		return AOE_EXIT_IO;
	}
	for (prof = strtok_r(copy, kind == DYN_BATCH ? "," : ";", &save);
	    prof; prof = strtok_r(NULL, kind == DYN_BATCH ? "," : ";",
	    &save)) {
		if ((spec = expand_profile(shapes, kind, prof)) == NULL) {
			free(copy);
			return AOE_EXIT_USAGE;
		}
		snprintf(path, sizeof(path), "%s/graph_%d.json", dir, ++k);
		fprintf(stderr, "%s: profile %d: %s\n", aoe_progname(), k,
		    spec);
		rc = capture_model(model, spec, path);
		free(spec);
		if (rc < 0) {
			aoe_warnx("%s", aoe_errmsg());
			free(copy);
			return aoe_exit_status(rc);
		}
		printf("%s\n", path);
	}
	free(copy);
	if (k == 0) {
		aoe_warnx("%s: no profile given", dyn_opt[kind]);
		return AOE_EXIT_USAGE;
	}
	return fflush(stdout) == 0 ? AOE_EXIT_OK : AOE_EXIT_IO;
}

/*
 * Run the command with AOE_MODE and AOE_CAPTURE_DIR set, then list the
 * graphs it handed over (DIR/.captured, appended by libaoe), each once.
 */
static int
capture_command(char **cmd, const char *dir, int mode, int zero)
{
	char list[PATH_MAX + 16], abs[PATH_MAX], m[2] = { (char)('0' + mode),
	    '\0' };
	posix_spawn_file_actions_t fa;
	char *buf = NULL, *line, *save = NULL, **seen = NULL;
	size_t len = 0;
	int fd, st, rc, nseen = 0, i, status;
	pid_t pid;

	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		aoe_warnx("cannot create '%s': %s", dir, strerror(errno));
		return AOE_EXIT_IO;
	}
	/* The command may change directory: give it an absolute path. */
	if (realpath(dir, abs) == NULL) {
		aoe_warnx("cannot resolve '%s': %s", dir, strerror(errno));
		return AOE_EXIT_IO;
	}
	snprintf(list, sizeof(list), "%s/.captured", abs);
	if ((fd = open(list, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644)) < 0) {
		aoe_warnx("cannot create '%s': %s", list, strerror(errno));
		return AOE_EXIT_IO;
	}
	close(fd);
	if (setenv("AOE_MODE", m, 1) < 0 ||
	    setenv("AOE_CAPTURE_DIR", abs, 1) < 0) {
		aoe_warnx("setenv: %s", strerror(errno));
		return AOE_EXIT_NOMEM;
	}
	/* Our standard output is the list: the command's goes to stderr. */
	fflush(NULL);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, STDOUT_FILENO);
	rc = posix_spawnp(&pid, cmd[0], &fa, NULL, cmd, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		aoe_warnx("cannot run '%s': %s", cmd[0], strerror(rc));
		unlink(list);
		return AOE_EXIT_IO;
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			aoe_warnx("waitpid: %s", strerror(errno));
			return AOE_EXIT_IO;
		}
	status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);

	if ((rc = aoe_read_file(list, (uint8_t **)&buf, &len)) < 0) {
		aoe_warnx("%s", aoe_errmsg());
		return AOE_EXIT_IO;
	}
	unlink(list);
	buf = aoe_xrealloc(buf, len + 1);
	buf[len] = '\0';
	for (line = strtok_r(buf, "\n", &save); line;
	    line = strtok_r(NULL, "\n", &save)) {
		for (i = 0; i < nseen && strcmp(seen[i], line) != 0; i++)
			;
		if (i < nseen)
			continue;
		seen = aoe_xrealloc(seen, (size_t)(nseen + 1) *
		    sizeof(*seen));
		seen[nseen++] = line;
		printf("%s/%s%c", dir, line, zero ? '\0' : '\n');
	}
	free(seen);
	free(buf);
	if (fflush(stdout) != 0) {
		aoe_warnx("write error on standard output: %s",
		    strerror(errno));
		return AOE_EXIT_IO;
	}
	if (status != 0) {
		if (WIFSIGNALED(st))
			aoe_warnx("'%s' was killed by signal %d", cmd[0],
			    WTERMSIG(st));
		return status;
	}
	if (nseen == 0) {
		aoe_warnx("'%s' compiled no graph with libaoe: nothing "
		    "captured", cmd[0]);
		return AOE_EXIT_FALSE;
	}
	fprintf(stderr, "%s: %d graph%s captured in %s\n", aoe_progname(),
	    nseen, nseen == 1 ? "" : "s", dir);
	return AOE_EXIT_OK;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "dynamic-batch-size", required_argument, NULL, 'B' },
		{ "dynamic-dims", required_argument, NULL, 'D' },
		{ "dynamic-image-size", required_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ "input-shape", required_argument, NULL, 's' },
		{ "job-type", required_argument, NULL, 'j' },
		{ "null", no_argument, NULL, 'z' },
		{ "output", required_argument, NULL, 'o' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	char *shapes = NULL, *out = NULL, *dir = NULL, **cmd = NULL;
	const char *dyn = NULL;
	int c, mode = 0, zero = 0, optc, rc, kind = DYN_NONE;
	long long v;

	aoe_setprogname(argv[0]);
	/* Options end at "--"; what follows is the command. */
	for (optc = 1; optc < argc && strcmp(argv[optc], "--") != 0; optc++)
		;
	if (optc < argc)
		cmd = argv + optc + 1;
	while ((c = getopt_long(optc, argv, "d:hj:o:s:Vz", longopts,
	    NULL)) != -1) {
		switch (c) {
		case 'B':
		case 'D':
		case 'I':
			if (dyn) {
				aoe_warnx("give one of --dynamic-batch-size, "
				    "--dynamic-image-size and --dynamic-dims");
				usage(AOE_EXIT_USAGE);
			}
			dyn = optarg;
			kind = c == 'B' ? DYN_BATCH : c == 'I' ? DYN_IMAGE :
			    DYN_DIMS;
			break;
		case 'd':
			dir = optarg;
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
			if (aoe_strtonum(optarg, 1, 2, &v) < 0) {
				aoe_warnx("--job-type '%s' is not valid: use "
				    "1 (subgraph) or 2 (operator tuning)",
				    optarg);
				return AOE_EXIT_USAGE;
			}
			mode = (int)v;
			break;
		case 'o':
			out = optarg;
			break;
		case 's':
			aoe_shape_spec_add(&shapes, optarg);
			break;
		case 'V':
			printf("aoe-capture %s\n", AOE_VERSION);
			return AOE_EXIT_OK;
		case 'z':
			zero = 1;
			break;
		default:
			usage(AOE_EXIT_USAGE);
		}
	}
	if (cmd) {
		if (optind != optc || cmd[0] == NULL) {
			aoe_warnx("expected: -- command [arg ...]");
			usage(AOE_EXIT_USAGE);
		}
		if (shapes || out || dyn) {
			aoe_warnx("--input-shape, --output and the dynamic "
			    "profiles apply to a model, not to a command");
			usage(AOE_EXIT_USAGE);
		}
		return capture_command(cmd, dir ? dir : "aoe_capture",
		    mode ? mode : 2, zero);
	}
	if (optind + 1 != optc)
		usage(AOE_EXIT_USAGE);
	if (dir || mode || zero) {
		aoe_warnx("--dir, --job-type and --null apply to a command "
		    "after --, not to a model");
		usage(AOE_EXIT_USAGE);
	}
	if (dyn) {
		rc = capture_profiles(argv[optind], shapes, kind, dyn, out ?
		    out : "aoe_capture");
		free(shapes);
		return rc;
	}
	rc = capture_model(argv[optind], shapes, out);
	free(shapes);
	if (rc < 0) {
		aoe_warnx("%s", aoe_errmsg());
		return aoe_exit_status(rc);
	}
	return AOE_EXIT_OK;
}
