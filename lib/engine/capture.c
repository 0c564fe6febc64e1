/*
 * capture.c - hand the graphs a workload compiles to the tuning tools.
 *
 * When AOE_MODE is set, aoe_graph_prepare() calls aoe_capture_hook() with
 * each graph it has prepared.  With AOE_CAPTURE_DIR set (aoe-capture sets
 * it) the static graph is written there once, named by its hash; without
 * it the graph is tuned inline by aoe-opat (AOE_MODE=2) or aoe-sgat
 * (AOE_MODE=1) and the workload then goes on.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine.h"

/*
 * The hash: 64-bit words mixed by multiplication, finished with
 * MurmurHash3's fmix64.  It dedups files; it is not cryptographic.
 */
typedef struct hstate {
	uint64_t h;
} hstate;

static void
hmix(hstate *s, uint64_t w)
{
	s->h ^= w;
	s->h *= 0x9E3779B97F4A7C15ULL;
	s->h ^= s->h >> 29;
}

static void
hbytes(hstate *s, const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t w;
	size_t i;

	hmix(s, (uint64_t)n);
	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&w, b + i, 8);
		hmix(s, w);
	}
	for (w = 0; i < n; i++)
		w = w << 8 | b[i];
	hmix(s, w);
}

static void
hstr(hstate *s, const char *str)
{
	hbytes(s, str ? str : "", str ? strlen(str) + 1 : 0);
}

static uint64_t
hfinal(const hstate *s)
{
	uint64_t h = s->h;

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

static void
htensor(hstate *s, const aoe_tensor *t)
{
	int d;

	if (t == NULL) {
		hmix(s, 0x9d);	/* an absent optional input */
		return;
	}
	hstr(s, t->name);
	hmix(s, (uint64_t)t->dtype);
	hmix(s, (uint64_t)(int64_t)t->ndim);
	for (d = 0; d < t->ndim; d++)
		hmix(s, (uint64_t)t->dims[d]);
	hmix(s, (uint64_t)t->kind);
	if (t->kind != AOE_T_CONST)
		return;
	if (t->data)
		hbytes(s, t->data, aoe_tensor_nbytes(t));
	else
		hstr(s, t->src_name);
}

static void hgraph(hstate *s, const aoe_graph *g);

static void
hattr(hstate *s, const aoe_attr *a)
{
	int i;

	hstr(s, a->name);
	hmix(s, (uint64_t)a->type);
	switch (a->type) {
	case AOE_A_INT:
		hmix(s, (uint64_t)a->i);
		break;
	case AOE_A_FLOAT:
		hbytes(s, &a->f, sizeof(a->f));
		break;
	case AOE_A_STRING:
		hstr(s, a->s);
		break;
	case AOE_A_INTS:
		hbytes(s, a->ints, (size_t)a->n * sizeof(int64_t));
		break;
	case AOE_A_FLOATS:
		hbytes(s, a->floats, (size_t)a->n * sizeof(float));
		break;
	case AOE_A_STRINGS:
		for (i = 0; i < a->n; i++)
			hstr(s, a->strings[i]);
		break;
	case AOE_A_TENSOR:
		htensor(s, a->t);
		break;
	case AOE_A_GRAPH:
		/* A subgraph is part of the compile: nested, as written. */
		if (a->g)
			hgraph(s, a->g);
		break;
	default:
		break;
	}
}

static void
hgraph(hstate *s, const aoe_graph *g)
{
	int i, j;

	hmix(s, (uint64_t)g->ninputs);
	for (i = 0; i < g->ninputs; i++)
		htensor(s, g->tensors[g->inputs[i]]);
	hmix(s, (uint64_t)g->noutputs);
	for (i = 0; i < g->noutputs; i++)
		htensor(s, g->tensors[g->outputs[i]]);
	for (i = 0; i < g->nnodes; i++) {
		const aoe_node *n = &g->nodes[i];
		if (n->dead)
			continue;
		hstr(s, n->name);
		hstr(s, n->op_type);
		hstr(s, n->domain);
		hmix(s, (uint64_t)n->nin);
		for (j = 0; j < n->nin; j++)
			htensor(s, aoe_in(g, n, j));
		hmix(s, (uint64_t)n->nout);
		for (j = 0; j < n->nout; j++)
			htensor(s, aoe_out(g, n, j));
		hmix(s, (uint64_t)n->nattr);
		for (j = 0; j < n->nattr; j++)
			hattr(s, &n->attrs[j]);
	}
}

int
aoe_graph_hash(const aoe_graph *g, uint64_t *h)
{
	hstate s = { 0x6165652d67726170ULL };	/* "aoe-grap" */

	hgraph(&s, g);
	*h = hfinal(&s);
	return 0;
}

int
aoe_graph_write(const aoe_graph *g, const char *path)
{
	aoe_ofile o;
	int rc;

	if ((rc = aoe_ofile_open(&o, path)) < 0)
		return rc;
	if ((rc = aoe_json_save(g, o.fp)) < 0) {
		aoe_ofile_abort(&o);
		return rc;
	}
	return aoe_ofile_close(&o);
}

/* Note a graph handed to the tools in DIR/.captured when it exists. */
static void
note_captured(const char *dir, const char *file)
{
	char path[PATH_MAX], line[64];
	int fd, n;

	snprintf(path, sizeof(path), "%s/.captured", dir);
	if ((fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)) < 0)
		return;
	n = snprintf(line, sizeof(line), "%s\n", file);
	if (write(fd, line, (size_t)n) != n)
		aoe_warnx("cannot record '%s' in '%s'", file, path);
	close(fd);
}

/* DIR/REL/TOOL when it is executable (REL may be ""); else NULL. */
static char *
tool_in(const char *file, const char *rel, const char *tool)
{
	const char *p = strrchr(file, '/');
	char *cand;

	if (p == NULL)
		return NULL;
	cand = aoe_xmalloc((size_t)(p - file) + strlen(rel) + strlen(tool) +
	    3);
	sprintf(cand, "%.*s/%s%s", (int)(p - file), file, rel, tool);
	if (access(cand, X_OK) == 0)
		return cand;
	free(cand);
	return NULL;
}

/*
 * The tuner next to the running program; else, for a program that runs
 * libaoe.so (python3 with the aoe module), in the bin (installed) or
 * tools (the build tree) beside the library's directory; else on PATH.
 * NULL if none.
 */
static char *
find_tool(const char *tool)
{
	char self[PATH_MAX], *path, *dir, *save = NULL, *cand, *p;
	ssize_t n;
	Dl_info dl;

	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) > 0) {
		self[n] = '\0';
		if ((cand = tool_in(self, "", tool)) != NULL)
			return cand;
	} else
		self[0] = '\0';
	if (dladdr((void *)aoe_capture_hook, &dl) != 0 && dl.dli_fname &&
	    strcmp(dl.dli_fname, self) != 0 &&
	    ((cand = tool_in(dl.dli_fname, "../bin/", tool)) != NULL ||
	    (cand = tool_in(dl.dli_fname, "../tools/", tool)) != NULL))
		return cand;
	if ((p = getenv("PATH")) == NULL)
		return NULL;
	path = aoe_xstrdup(p);
	for (dir = strtok_r(path, ":", &save); dir;
	    dir = strtok_r(NULL, ":", &save)) {
		cand = aoe_xmalloc(strlen(dir) + strlen(tool) + 2);
		sprintf(cand, "%s/%s", *dir ? dir : ".", tool);
		if (access(cand, X_OK) == 0) {
			free(path);
			return cand;
		}
		free(cand);
	}
	free(path);
	return NULL;
}

/*
 * Run a tool with argv and wait for it.  The child does not inherit
 * AOE_MODE (its own compiles must not be captured again), and its
 * standard output goes to our standard error: the workload's output
 * stays its own.  0 or an error naming the tool and the graph.
 */
static int
run_child(const char *path, char **argv, const char *tool,
    const char *graph)
{
	pid_t pid;
	int st;

	fflush(NULL);
	if ((pid = fork()) < 0)
		return aoe_err(AOE_EIO, "cannot fork: %s", strerror(errno));
	if (pid == 0) {
		unsetenv("AOE_MODE");
		unsetenv("AOE_CAPTURE_DIR");
		dup2(STDERR_FILENO, STDOUT_FILENO);
		execv(path, argv);
		aoe_warn("cannot run '%s'", path);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return aoe_err(AOE_EIO, "waitpid: %s",
			    strerror(errno));
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	st = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	/* Not a bug: the machine is not ready to tune (aoe-check(1)). */
	if (st == AOE_EXIT_FALSE)
		return aoe_err(AOE_EUNSUP, "%s did not %s graph '%s': a "
		    "precondition failed (exit status 1)", tool,
		    strcmp(tool, "aoe-report") == 0 ? "report on" : "tune",
		    graph);
	return aoe_err(st >= AOE_EDATA && st <= AOE_EINTERNAL ? st :
	    AOE_EINTERNAL, "%s failed on graph '%s' (exit status %d)",
	    tool, graph, st);
}

/*
 * Run "TOOL --commit [AOE_TUNE_FLAGS] [-o RECORDS] GRAPH", the flags
 * (budgets, seeds) split at blanks, as the aoe front end takes them.
 */
static int
run_tuner(const char *path, const char *tool, const char *graph,
    const char *records)
{
	const char *flags = getenv("AOE_TUNE_FLAGS");
	char *copy = aoe_xstrdup(flags ? flags : ""), *w, *save = NULL;
	char **argv = aoe_xcalloc(strlen(copy) / 2 + 7, sizeof(char *));
	int argc = 0, rc;

	argv[argc++] = (char *)tool;
	argv[argc++] = "--commit";
	for (w = strtok_r(copy, " \t\n", &save); w;
	    w = strtok_r(NULL, " \t\n", &save))
		argv[argc++] = w;
	/* The records to a file, for aoe-report: not on stderr. */
	if (records) {
		argv[argc++] = "-o";
		argv[argc++] = (char *)records;
	}
	argv[argc++] = (char *)graph;
	argv[argc] = NULL;
	rc = run_child(path, argv, tool, graph);
	free(argv);
	free(copy);
	return rc;
}

/* Graphs tuned inline by this process, so that each is tuned once. */
static pthread_mutex_t tuned_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *tuned;
static size_t ntuned;

static int
tune_inline(aoe_graph *g, uint64_t h, const char *mode)
{
	const char *tmpdir = getenv("TMPDIR");
	const char *tool = strcmp(mode, "1") == 0 ? "aoe-sgat" : "aoe-opat";
	char dir[PATH_MAX], file[PATH_MAX + 32], recs[PATH_MAX + 32], *path;
	struct stat st;
	size_t i;
	int rc;

	pthread_mutex_lock(&tuned_mu);
	for (i = 0; i < ntuned; i++)
		if (tuned[i] == h) {
			pthread_mutex_unlock(&tuned_mu);
			return 0;
		}
	tuned = aoe_xrealloc(tuned, (ntuned + 1) * sizeof(*tuned));
	tuned[ntuned++] = h;
	pthread_mutex_unlock(&tuned_mu);

	if ((path = find_tool(tool)) == NULL)
		return aoe_err(AOE_EUNSUP, "AOE_MODE=%s: cannot tune graph "
		    "'%s': %s is not installed (neither next to this program "
		    "nor on PATH); capture it with aoe-capture instead", mode,
		    g->name ? g->name : "main", tool);
	snprintf(dir, sizeof(dir), "%s/aoe-tune.XXXXXX",
	    tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (mkdtemp(dir) == NULL) {
		free(path);
		return aoe_err(AOE_EIO, "cannot create '%s': %s", dir,
		    strerror(errno));
	}
	snprintf(file, sizeof(file), "%s/graph_%016llx.json", dir,
	    (unsigned long long)h);
	snprintf(recs, sizeof(recs), "%s/records.jsonl", dir);
	if ((rc = aoe_graph_write(g, file)) == 0) {
		fprintf(stderr, "%s: in tune mode, training graph handled by "
		    "tools\n%s: Aoe tuning graph.\n", aoe_progname(),
		    aoe_progname());
		rc = run_tuner(path, tool, file, recs);
	}
	/*
	 * AOE's result file in the working directory, as the front end
	 * writes it: aoe-report on the records (AOE_WORK_PATH, aoe.ini's
	 * WORK_PATH or the current directory).
	 */
	if (rc == 0 && stat(recs, &st) == 0 && st.st_size > 0) {
		char *rp = find_tool("aoe-report");
		if (rp == NULL)
			rc = aoe_err(AOE_EUNSUP, "AOE_MODE=%s: aoe-report is "
			    "not installed: no result file for graph '%s'",
			    mode, g->name ? g->name : "main");
		else {
			char *av[] = { "aoe-report", "--tuning-name",
			    (char *)aoe_progname(), recs, NULL };
			rc = run_child(rp, av, "aoe-report", file);
			free(rp);
		}
	}
	free(path);
	unlink(file);
	unlink(recs);
	rmdir(dir);
	return rc;
}

static int capture(aoe_graph *g);

/*
 * A subgraph (an If branch, a Loop body) is captured as a graph of its
 * own: the values it reads from the graphs around it (lib/runtime/ctl.c)
 * are its inputs while it is written.
 */
int
aoe_capture_hook(aoe_graph *g)
{
	int *saved = g->inputs, nsaved = g->ninputs, i, rc;

	if (g->nouter == 0)
		return capture(g);
	g->inputs = aoe_xcalloc((size_t)(g->ninputs + g->nouter) + 1,
	    sizeof(int));
	memcpy(g->inputs, saved, (size_t)nsaved * sizeof(int));
	for (i = 0; i < g->nouter; i++)
		if (g->tensors[g->outer[i]]->kind == AOE_T_INPUT)
			g->inputs[g->ninputs++] = g->outer[i];
	rc = capture(g);
	free(g->inputs);
	g->inputs = saved;
	g->ninputs = nsaved;
	return rc;
}

static int
capture(aoe_graph *g)
{
	const char *mode = getenv("AOE_MODE"), *dir;
	char file[64], path[PATH_MAX + 64];
	struct stat st;
	uint64_t h;
	int rc;

	if ((rc = aoe_env_mode()) <= 0)
		return rc;
	if (rc == 4)
		return aoe_err(AOE_EUNSUP, "AOE_MODE=4 (gradient split "
		    "tuning) is not supported by aoe");
	if ((rc = aoe_graph_hash(g, &h)) < 0)
		return rc;
	dir = getenv("AOE_CAPTURE_DIR");
	if (dir == NULL || *dir == '\0')
		return tune_inline(g, h, mode);

	snprintf(file, sizeof(file), "graph_%016llx.json",
	    (unsigned long long)h);
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (mkdir(dir, 0777) < 0 && errno != EEXIST)
		return aoe_err(AOE_EIO, "cannot create '%s': %s", dir,
		    strerror(errno));
	if (stat(path, &st) == 0) {
		/* Captured before (by this process or another): dedup. */
		note_captured(dir, file);
		return 0;
	}
	if ((rc = aoe_graph_write(g, path)) < 0)
		return rc;
	note_captured(dir, file);
	fprintf(stderr, "%s: in tune mode, training graph handled by tools: "
	    "%s\n", aoe_progname(), path);
	return 0;
}
