/*
 * measure.c - measure candidate schedules of one node safely.
 *
 * The parent keeps the whole graph prepared with the default schedules
 * and never runs a kernel itself, so that every measurement starts from
 * the same state (cold thread pool, no warm caches of the parent's).
 * For each candidate it forks a
 * child, which fills the node's non-constant inputs with fresh random
 * data, runs the default schedule to get the reference, applies the
 * candidate (re-preparing the node, e.g. repacking weights), runs it and
 * compares (a NaN, an Inf or a difference beyond the tolerance is
 * "wrong"), and only then takes the host's measure lock exclusively and
 * times RUN_LOOP repeats.  Preparation and checking hold the lock shared,
 * so they run in parallel with each other but never during a timed run;
 * a gate file gives a waiting timer priority over new shared holders.  A
 * child that crashes, aborts or outlives its time limit (not counting
 * waiting for the lock) is killed and marks only its candidate.  Both
 * sides of that protocol are here, for aoe-sgat's children too: the
 * child's (opat_child_lock, opat_child_exclusive, opat_child_report)
 * and the parent's (opat_children_run, opat_child_result).
 *
 * With names in the options, the child instead times the candidate in
 * the model: every node of those names inside whole runs of the graph
 * (model_child), which is how aoe-opat confirms its winners.
 *
 * AOE_INJECT_FAULT=kind[:op_type] (kind: crash, hang, wrong, nan, abort)
 * makes every measuring child misbehave that way, for the tests; the
 * reference run (the default schedule, before the fault) never is.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "opat.h"

#define RTOL 1e-4		/* relative L2 error allowed */
#define EL_TOL 1e-3		/* per element, relative to max |ref| */
#define ATOL 1e-5
#define MIN_REP_US 200.0	/* a timed repeat runs the node this long */

static const char *const status_names[] = { "ok", "wrong", "crash",
	"timeout", "abort", "invalid" };

const char *
opat_status_name(int st)
{
	return st >= 0 && st < OPAT_NSTATUS ? status_names[st] : "invalid";
}

int
opat_status_from_name(const char *s)
{
	int i;

	for (i = 0; s && i < OPAT_NSTATUS; i++)
		if (strcmp(s, status_names[i]) == 0)
			return i;
	return -1;
}

const char *
opat_jstr(const cJSON *o, const char *name)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsString(x) ? x->valuestring : NULL;
}

double
opat_jnum(const cJSON *o, const char *name, double def)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsNumber(x) ? x->valuedouble : def;
}

/*
 * An integer field: def when it is missing or not a number, or not an
 * integer in [lo, hi] (a line from elsewhere may hold any number, and
 * a cast of one out of int's range is undefined).
 */
int
opat_jint(const cJSON *o, const char *name, int def, int lo, int hi)
{
	double v = opat_jnum(o, name, def);

	return v >= lo && v <= hi && v == (double)(int)v ? (int)v : def;
}

/* A timing line's fields (opat.c's journal and replay, remote.c). */
void
opat_timing_from_json(const cJSON *o, opat_timing *t)
{
	const char *reason = opat_jstr(o, "reason");

	memset(t, 0, sizeof(*t));
	t->status = opat_status_from_name(opat_jstr(o, "status"));
	if (t->status < 0)
		t->status = OPAT_INVALID;
	t->us = opat_jnum(o, "us", 0);
	t->mean_us = opat_jnum(o, "mean_us", t->us);
	t->min_us = opat_jnum(o, "min_us", t->us);
	t->spread = opat_jnum(o, "spread", 0);
	t->runs = opat_jint(o, "runs", 0, 0, INT_MAX);
	t->inner = opat_jint(o, "inner", 0, 0, INT_MAX);
	t->cost_s = opat_jnum(o, "cost_s", 0);
	if (reason)
		snprintf(t->reason, sizeof(t->reason), "%s", reason);
	if (t->status == OPAT_OK && !(t->us > 0)) {
		t->status = OPAT_INVALID;
		snprintf(t->reason, sizeof(t->reason), "no time");
	}
}

const char *
opat_lock_path(void)
{
	const char *p = getenv("AOE_MEASURE_LOCK");

	return p && *p ? p : "/tmp/aoe-measure.lock";
}

static int
node_run(aoe_graph *g, aoe_node *n, int nthreads)
{
	aoe_kctx k;

	memset(&k, 0, sizeof(k));
	k.g = g;
	k.n = n;
	k.nthreads = aoe_node_threads(n, nthreads);
	k.sched = &n->sched;
	k.scratch = g->scratch;
	return n->op->run(&k);
}

/* The fault to inject for this node, or NULL. */
static const char *
fault_for(const aoe_node *n)
{
	static char kind[32];
	const char *v = getenv("AOE_INJECT_FAULT"), *c;

	if (v == NULL || *v == '\0')
		return NULL;
	c = strchr(v, ':');
	if (c && strcmp(c + 1, n->op_type) != 0)
		return NULL;
	snprintf(kind, sizeof(kind), "%.*s", c ? (int)(c - v) : (int)strlen(v),
	    v);
	return kind;
}

int
opat_verify(const aoe_tensor *t, const void *ref, char *why, size_t len)
{
	int64_t j, cnt = aoe_tensor_numel(t), at = 0;
	double num = 0, den = 0, maxref = 0, worst = 0;

	if (t->dtype != AOE_F32) {
		if (memcmp(t->data, ref, aoe_tensor_nbytes(t)) != 0) {
			snprintf(why, len, "output '%s' differs from the "
			    "reference", t->name);
			return -1;
		}
		return 0;
	}
	for (j = 0; j < cnt; j++) {
		double r = ((const float *)ref)[j];
		if (fabs(r) > maxref)
			maxref = fabs(r);
	}
	for (j = 0; j < cnt; j++) {
		double a = ((const float *)t->data)[j];
		double r = ((const float *)ref)[j];
		double d = fabs(a - r);
		if (!isfinite(a) && isfinite(r)) {
			snprintf(why, len, "output '%s'[%lld] is %g, the "
			    "reference %g", t->name, (long long)j, a, r);
			return -1;
		}
		if (!isfinite(r))
			continue;
		if (d > worst) {
			worst = d;
			at = j;
		}
		num += d * d;
		den += r * r;
	}
	if (worst > EL_TOL * maxref + ATOL ||
	    sqrt(num) > RTOL * sqrt(den) + ATOL) {
		snprintf(why, len, "output '%s'[%lld] is %g, the reference %g "
		    "(relative L2 error %.3g)", t->name, (long long)at,
		    ((const float *)t->data)[at], ((const float *)ref)[at],
		    den > 0 ? sqrt(num / den) : sqrt(num));
		return -1;
	}
	return 0;
}

/* Compare the node's outputs with the reference; 0 or -1 with why. */
static int
compare(aoe_graph *g, aoe_node *n, void **ref, char *why, size_t len)
{
	int i;

	for (i = 0; i < n->nout; i++) {
		aoe_tensor *t = aoe_out(g, n, i);
		if (t != NULL && ref[i] != NULL &&
		    opat_verify(t, ref[i], why, len) < 0)
			return -1;
	}
	return 0;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void
opat_say(int fd, const char *s)
{
	size_t n = strlen(s);

	while (n > 0) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/*
 * Say the result of n timed repeats rep[] (each a mean over inner runs)
 * and end the child.  The spread is the interquartile range relative to
 * the median: another process's burst on a shared host moves one
 * repeat, not the quartiles.
 */
void
opat_child_report(double *rep, int n, int inner, int fd)
{
	char line[256];
	double sum = 0, med, iqr;
	int i;

	for (i = 0; i < n; i++)
		sum += rep[i];
	qsort(rep, (size_t)n, sizeof(double), cmp_double);
	med = n % 2 ? rep[n / 2] : (rep[n / 2 - 1] + rep[n / 2]) / 2;
	iqr = rep[(3 * n) / 4 < n ? (3 * n) / 4 : n - 1] - rep[n / 4];
	snprintf(line, sizeof(line), "ok %.6g %.6g %.6g %.6g %d %d\n",
	    med, sum / n, rep[0], med > 0 ? iqr / med : 0, n, inner);
	opat_say(fd, line);
	_exit(0);
}

/*
 * Pin a measuring child that runs one thread to the last CPU it may use,
 * so that every candidate is timed on the same CPU.  On a shared VM one
 * vCPU ran the same binary 8-15% faster than the other (AMD EPYC Zen 5,
 * mobilenet_v2, 4 alternations), and a child stays where it starts: two
 * candidates timed in children on different CPUs differed by that much
 * whatever their schedules.  Children of more threads are left alone.
 */
void
opat_child_pin(int nthreads)
{
	cpu_set_t set;
	int c, last = -1;

	if (nthreads != 1 || sched_getaffinity(0, sizeof(set), &set) != 0)
		return;
	for (c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			last = c;
	if (last < 0 || CPU_COUNT(&set) < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET(last, &set);
	(void)sched_setaffinity(0, sizeof(set), &set);
}

/*
 * The run options of a measuring child: no bank (the schedules are the
 * candidates'), every fusion, no profiling.  opat_child_opts also pins
 * a child of one thread (opat_child_pin); opat_model_graph, which
 * prepares the model in the parent for its children, does not.
 */
static void
child_run_opts(aoe_run_opts *ro, int nthreads)
{
	aoe_run_opts_init(ro);
	ro->nthreads = nthreads;
	ro->use_bank = 0;
	ro->static_memory = 0;
	ro->profile = 0;
	ro->fuse_mode = AOE_FUSE_ALL;
}

void
opat_child_opts(aoe_run_opts *ro, int nthreads)
{
	opat_child_pin(nthreads);
	child_run_opts(ro, nthreads);
}

int
opat_model_graph(const char *path, const char *shape, int nthreads,
    aoe_graph **gp)
{
	aoe_run_opts ro;
	int rc;

	*gp = NULL;
	if ((rc = aoe_model_load(path, gp)) < 0)
		return rc;
	child_run_opts(&ro, nthreads);
	if ((shape && *shape && (rc = aoe_bind_shapes(*gp, shape)) < 0) ||
	    (rc = aoe_graph_prepare(*gp, &ro)) < 0) {
		aoe_graph_free(*gp);
		*gp = NULL;
	}
	return rc;
}

/*
 * Take the measure lock: shared while preparing and checking, exclusive
 * for timed runs (the gate gives a waiting timer priority over new
 * shared holders).  Returns the lock's descriptor; the gate's in *gate.
 */
int
opat_child_lock(const char *path, int *gate, int fd)
{
	char gate_path[4096], line[4400];
	int lk;

	snprintf(gate_path, sizeof(gate_path), "%s.gate", path);
	if ((lk = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666)) < 0 ||
	    (*gate = open(gate_path, O_RDWR | O_CREAT | O_CLOEXEC, 0666)) < 0) {
		snprintf(line, sizeof(line), "invalid cannot open lock '%s': "
		    "%s\n", path, strerror(errno));
		opat_say(fd, line);
		_exit(0);
	}
	opat_say(fd, "waiting\n");
	flock(*gate, LOCK_EX);
	flock(lk, LOCK_SH);
	flock(*gate, LOCK_UN);
	opat_say(fd, "running\n");
	return lk;
}

void
opat_child_exclusive(int lk, int gate, int fd)
{
	flock(lk, LOCK_UN);
	opat_say(fd, "waiting\n");
	flock(gate, LOCK_EX);
	flock(lk, LOCK_EX);
	opat_say(fd, "locked\n");
}

/* The child: check the candidate, then time it.  Never returns. */
static void
child(aoe_graph *g, aoe_node *n, const aoe_sched *s, uint64_t seed,
    void **ref, const opat_meas_opts *o, int fd)
{
	char why[512], line[768];
	const char *fault = fault_for(n);
	double *rep, t0, t1;
	int lk, gate, i, j, inner;

	signal(SIGPIPE, SIG_DFL);
	lk = opat_child_lock(o->lock_path, &gate, fd);
	/*
	 * The reference: fresh inputs, the default schedule.  It is computed
	 * here, not in the parent, which never runs a kernel.
	 */
	for (i = 0; i < n->nin; i++) {
		aoe_tensor *it = aoe_in(g, n, i);
		if (it && it->kind != AOE_T_CONST)
			aoe_tensor_fill_random(it, seed + 977 * (uint64_t)i);
	}
	if (node_run(g, n, o->nthreads) < 0) {
		snprintf(line, sizeof(line), "invalid the default schedule "
		    "fails: %s\n", aoe_errmsg());
		opat_say(fd, line);
		_exit(0);
	}
	for (i = 0; i < n->nout; i++)
		if (ref[i])
			memcpy(ref[i], aoe_out(g, n, i)->data,
			    aoe_tensor_nbytes(aoe_out(g, n, i)));
	if (aoe_space_apply(g, n, s) < 0) {
		snprintf(line, sizeof(line), "invalid %s\n", aoe_errmsg());
		opat_say(fd, line);
		_exit(0);
	}
	if (fault && strcmp(fault, "crash") == 0) {
		volatile int *volatile bad = NULL;
		*bad = 1;
	}
	if (fault && strcmp(fault, "abort") == 0)
		abort();
	if (fault && strcmp(fault, "hang") == 0)
		for (;;)
			pause();
	if (node_run(g, n, o->nthreads) < 0) {
		snprintf(line, sizeof(line), "invalid %s\n", aoe_errmsg());
		opat_say(fd, line);
		_exit(0);
	}
	if (fault && n->nout > 0 && aoe_out(g, n, 0) &&
	    aoe_out(g, n, 0)->dtype == AOE_F32 &&
	    aoe_tensor_numel(aoe_out(g, n, 0)) > 0) {
		float *p = aoe_out(g, n, 0)->data;
		if (strcmp(fault, "wrong") == 0)
			p[0] += 1.0f + fabsf(p[0]);
		else if (strcmp(fault, "nan") == 0)
			p[0] = NAN;
	}
	if (compare(g, n, ref, why, sizeof(why)) < 0) {
		snprintf(line, sizeof(line), "wrong %s\n", why);
		opat_say(fd, line);
		_exit(0);
	}
	/* Timed runs are exclusive on the host. */
	opat_child_exclusive(lk, gate, fd);
	t0 = aoe_now_us();
	node_run(g, n, o->nthreads);
	t1 = aoe_now_us() - t0;
	inner = t1 >= MIN_REP_US ? 1 : (int)(MIN_REP_US / (t1 > 1 ? t1 : 1));
	if (inner > 1000)
		inner = 1000;
	if (inner < 1)
		inner = 1;
	rep = aoe_xcalloc((size_t)o->run_loop, sizeof(double));
	for (i = 0; i < o->run_loop; i++) {
		t0 = aoe_now_us();
		for (j = 0; j < inner; j++)
			node_run(g, n, o->nthreads);
		rep[i] = (aoe_now_us() - t0) / inner;
	}
	flock(lk, LOCK_UN);
	flock(gate, LOCK_UN);
	opat_child_report(rep, o->run_loop, inner, fd);
}

/*
 * The in-model child (o->names set): the whole graph, prepared as
 * aoe-run prepares it (the default fusion decisions, no bank), with s on
 * every node named in o->names.  Its outputs are checked against those
 * of the default schedules on the same fresh inputs; then RUN_LOOP timed
 * runs of the graph, each repeat the mean time of those nodes in it.
 * Never returns.
 */
static void
model_child(aoe_graph *g, const aoe_sched *s, uint64_t seed,
    const opat_meas_opts *o, int fd)
{
	aoe_run_opts ro;
	char why[512], line[768];
	void **ref;
	double *rep;
	int *idx, lk, gate, i, j, nn = 0;

	signal(SIGPIPE, SIG_DFL);
	lk = opat_child_lock(o->lock_path, &gate, fd);
	opat_child_opts(&ro, o->nthreads);
	if (!o->prepared && aoe_graph_prepare(g, &ro) < 0)
		goto invalid;
	aoe_graph_fill_inputs(g, seed);
	if (aoe_graph_run(g, &ro) < 0)
		goto invalid;
	ref = aoe_xcalloc((size_t)g->noutputs + 1, sizeof(void *));
	for (i = 0; i < g->noutputs; i++) {
		aoe_tensor *t = g->tensors[g->outputs[i]];
		ref[i] = aoe_xmalloc(aoe_tensor_nbytes(t) + 1);
		memcpy(ref[i], t->data, aoe_tensor_nbytes(t));
	}
	idx = aoe_xcalloc((size_t)g->norder + 1, sizeof(int));
	for (i = 0; i < g->norder; i++) {
		aoe_node *n = &g->nodes[g->order[i]];
		for (j = 0; j < o->nnames; j++)
			if (strcmp(n->name, o->names[j]) == 0)
				break;
		if (j == o->nnames)
			continue;
		if (aoe_space_apply(g, n, s) < 0)
			goto invalid;
		idx[nn++] = g->order[i];
	}
	if (nn == 0) {
		/* Fused into another node: nothing of it runs alone. */
		opat_say(fd, "invalid absent: no node of the case runs in the "
		    "model\n");
		_exit(0);
	}
	aoe_graph_fill_inputs(g, seed);
	if (aoe_graph_run(g, &ro) < 0)
		goto invalid;
	for (i = 0; i < g->noutputs; i++)
		if (opat_verify(g->tensors[g->outputs[i]], ref[i], why,
		    sizeof(why)) < 0) {
			snprintf(line, sizeof(line), "wrong %s\n", why);
			opat_say(fd, line);
			_exit(0);
		}
	opat_child_exclusive(lk, gate, fd);
	ro.profile = 1;
	aoe_graph_run(g, &ro);
	rep = aoe_xcalloc((size_t)o->run_loop, sizeof(double));
	for (i = 0; i < o->run_loop; i++) {
		for (j = 0; j < nn; j++)
			g->nodes[idx[j]].prof_us = 0;
		aoe_graph_run(g, &ro);
		for (j = 0; j < nn; j++)
			rep[i] += g->nodes[idx[j]].prof_us / nn;
	}
	flock(lk, LOCK_UN);
	flock(gate, LOCK_UN);
	opat_child_report(rep, o->run_loop, 1, fd);
invalid:
	snprintf(line, sizeof(line), "invalid %s\n", aoe_errmsg());
	opat_say(fd, line);
	_exit(0);
}

/*
 * The parent's side of the protocol: one child process a measurement,
 * at most `parallel` at once.
 */
typedef struct slot {
	pid_t pid;
	int fd, idx;
	double deadline, start;
	int waiting, flooded;
	char buf[2048];
	size_t len;
} slot;

static int
ends_with(const char *s, const char *t)
{
	size_t a = strlen(s), b = strlen(t);

	return a >= b && strcmp(s + a - b, t) == 0;
}

void
opat_child_result(char *out, int wst, int killed, opat_timing *t)
{
	char *line = out, *nl, *last = NULL;

	while ((nl = strchr(line, '\n')) != NULL) {
		*nl = '\0';
		if (strcmp(line, "locked") != 0 &&
		    strcmp(line, "waiting") != 0 &&
		    strcmp(line, "running") != 0)
			last = line;
		line = nl + 1;
	}
	memset(t, 0, sizeof(*t));
	if (killed) {
		t->status = OPAT_TIMEOUT;
		snprintf(t->reason, sizeof(t->reason), "killed after the time "
		    "limit");
	} else if (WIFSIGNALED(wst)) {
		int sig = WTERMSIG(wst);
		t->status = sig == SIGABRT ? OPAT_ABORT : OPAT_CRASH;
		snprintf(t->reason, sizeof(t->reason), "killed by signal %d "
		    "(%s)", sig, strsignal(sig));
	} else if (last == NULL) {
		t->status = OPAT_CRASH;
		snprintf(t->reason, sizeof(t->reason), "exited with status %d "
		    "without a result", WIFEXITED(wst) ? WEXITSTATUS(wst) : -1);
	} else if (strncmp(last, "ok ", 3) == 0) {
		char end;
		/*
		 * A child that ran to its report did not crash: a line it
		 * got wrong says nothing about the candidate, which is
		 * invalid, not timed.
		 */
		if (sscanf(last + 3, "%lf %lf %lf %lf %d %d %c", &t->us,
		    &t->mean_us, &t->min_us, &t->spread, &t->runs,
		    &t->inner, &end) != 6 || !(t->us >= 0) || t->runs < 1 ||
		    t->inner < 1) {
			memset(t, 0, sizeof(*t));
			t->status = OPAT_INVALID;
			snprintf(t->reason, sizeof(t->reason), "garbled "
			    "result '%.200s'", last);
		} else
			t->status = OPAT_OK;
	} else if (strncmp(last, "wrong ", 6) == 0) {
		t->status = OPAT_WRONG;
		snprintf(t->reason, sizeof(t->reason), "%s", last + 6);
	} else {
		t->status = OPAT_INVALID;
		snprintf(t->reason, sizeof(t->reason), "%s",
		    strncmp(last, "invalid ", 8) == 0 ? last + 8 : last);
	}
}

/* Start a child for measurement idx in the free slot c. */
static int
slot_start(slot *c, int idx, double timeout_s, opat_child_fn fn, void *arg)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return aoe_err(AOE_EIO, "pipe: %s", strerror(errno));
	c->start = aoe_now_us();
	if ((c->pid = aoe_fork_child()) < 0) {
		close(p[0]);
		close(p[1]);
		c->pid = -1;
		return aoe_err(AOE_EIO, "fork: %s", strerror(errno));
	}
	if (c->pid == 0) {
		close(p[0]);
		fn(idx, p[1], arg);
		_exit(AOE_EXIT_INTERNAL);	/* fn never returns */
	}
	close(p[1]);
	c->fd = p[0];
	c->idx = idx;
	c->len = 0;
	c->buf[0] = '\0';
	c->waiting = 0;
	c->flooded = 0;
	c->deadline = c->start + timeout_s * 1e6;
	return 0;
}

/*
 * Read what child c has to say; 1 when it has nothing more to say (end
 * of file, or more than its buffer holds), else 0.
 */
static int
slot_read(slot *c, double now, double timeout_s)
{
	ssize_t r;

	r = read(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len);
	if (r < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (r <= 0)
		return 1;
	c->len += (size_t)r;
	c->buf[c->len] = '\0';
	/*
	 * Waiting for the lock is not hanging: the clock runs only while
	 * the child works.
	 */
	c->waiting = ends_with(c->buf, "waiting\n");
	c->deadline = now + timeout_s * 1e6;
	if (c->len >= sizeof(c->buf) - 1) {
		c->flooded = 1;
		return 1;
	}
	return 0;
}

/* Collect the ended (or killed) child of slot c into t. */
static void
slot_finish(slot *c, int killed, opat_timing *t)
{
	int wst = 0;

	if (c->flooded)
		kill(c->pid, SIGKILL);
	while (waitpid(c->pid, &wst, 0) < 0 && errno == EINTR)
		;
	close(c->fd);
	opat_child_result(c->buf, wst, killed, t);
	if (c->flooded) {
		memset(t, 0, sizeof(*t));
		t->status = OPAT_INVALID;
		snprintf(t->reason, sizeof(t->reason), "said more than %zu "
		    "bytes", sizeof(c->buf) - 1);
	}
	t->cost_s = (aoe_now_us() - c->start) / 1e6;
	c->pid = -1;
}

int
opat_children_run(int n, int parallel, double timeout_s, opat_child_fn fn,
    void *arg, opat_timing *t)
{
	slot *sl;
	struct pollfd *pf;
	int nslot = parallel > 0 ? parallel : 1, running = 0, next = 0;
	int i, rc = 0;

	if (nslot > n)
		nslot = n > 0 ? n : 1;
	sl = aoe_xcalloc((size_t)nslot, sizeof(*sl));
	pf = aoe_xcalloc((size_t)nslot, sizeof(*pf));
	for (i = 0; i < nslot; i++)
		sl[i].pid = -1;
	/* What a caller that goes on after an error of the harness sees. */
	for (i = 0; i < n; i++) {
		memset(&t[i], 0, sizeof(t[i]));
		t[i].status = OPAT_INVALID;
		snprintf(t[i].reason, sizeof(t[i].reason), "not measured");
	}
	fflush(NULL);
	while (next < n || running > 0) {
		double now, wait_ms;

		for (i = 0; i < nslot && next < n; i++) {
			if (sl[i].pid >= 0)
				continue;
			if ((rc = slot_start(&sl[i], next, timeout_s, fn,
			    arg)) < 0)
				goto out;
			next++;
			running++;
		}
		/*
		 * Wait for output, an exit or the nearest deadline of a
		 * child that is not waiting for the lock.
		 */
		now = aoe_now_us();
		wait_ms = 1000;
		for (i = 0; i < nslot; i++) {
			pf[i].fd = sl[i].pid >= 0 ? sl[i].fd : -1;
			pf[i].events = POLLIN;
			pf[i].revents = 0;
			if (sl[i].pid >= 0 && !sl[i].waiting &&
			    (sl[i].deadline - now) / 1000 < wait_ms)
				wait_ms = (sl[i].deadline - now) / 1000;
		}
		if (wait_ms < 0)
			wait_ms = 0;
		if (poll(pf, (nfds_t)nslot, (int)wait_ms + 1) < 0 &&
		    errno != EINTR) {
			rc = aoe_err(AOE_EIO, "poll: %s", strerror(errno));
			goto out;
		}
		now = aoe_now_us();
		for (i = 0; i < nslot; i++) {
			int eof = 0, killed = 0;
			if (sl[i].pid < 0)
				continue;
			if (pf[i].revents & (POLLIN | POLLHUP | POLLERR))
				eof = slot_read(&sl[i], now, timeout_s);
			if (!eof && !sl[i].waiting && now >= sl[i].deadline) {
				kill(sl[i].pid, SIGKILL);
				killed = eof = 1;
			}
			if (!eof)
				continue;
			slot_finish(&sl[i], killed, &t[sl[i].idx]);
			running--;
		}
	}
out:
	for (i = 0; i < nslot; i++)
		if (sl[i].pid > 0) {
			kill(sl[i].pid, SIGKILL);
			waitpid(sl[i].pid, NULL, 0);
			close(sl[i].fd);
		}
	for (i = 0; rc < 0 && i < n; i++)
		if (strcmp(t[i].reason, "not measured") == 0)
			snprintf(t[i].reason, sizeof(t[i].reason), "not "
			    "measured: %s", aoe_errmsg());
	free(sl);
	free(pf);
	return rc;
}

/* What a measuring child of opat_measure needs besides its index. */
typedef struct meas_arg {
	aoe_graph *g;
	aoe_node *n;
	const aoe_sched *s;
	const uint64_t *seeds;
	void **ref;
	const opat_meas_opts *o;
	int lk;
} meas_arg;

static void
meas_child(int i, int fd, void *arg)
{
	meas_arg *a = arg;

	close(a->lk);
	if (a->o->names)
		model_child(a->g, &a->s[i], a->seeds[i], a->o, fd);
	child(a->g, a->n, &a->s[i], a->seeds[i], a->ref, a->o, fd);
}

int
opat_measure(aoe_graph *g, int ni, const aoe_sched *s, const uint64_t *seeds,
    int n, const opat_meas_opts *o, opat_timing *t)
{
	/* In the model the children check the graph's outputs, not ni's. */
	aoe_node *nd = o->names ? NULL : &g->nodes[ni];
	meas_arg a;
	void *ref[16];
	int lk, i, rc;

	if (nd != NULL && nd->nout > 16)
		return aoe_err(AOE_EUNSUP, "%s '%s': too many outputs",
		    nd->op_type, nd->name);
	if ((lk = open(o->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0666)) < 0)
		return aoe_err(AOE_EIO, "cannot open '%s': %s", o->lock_path,
		    strerror(errno));
	memset(ref, 0, sizeof(ref));
	for (i = 0; nd != NULL && i < nd->nout; i++) {
		aoe_tensor *ot = aoe_out(g, nd, i);
		if (ot && ot->data)
			ref[i] = aoe_xmalloc(aoe_tensor_nbytes(ot) + 1);
	}
	a.g = g;
	a.n = nd;
	a.s = s;
	a.seeds = seeds;
	a.ref = ref;
	a.o = o;
	a.lk = lk;
	rc = opat_children_run(n, o->parallel, o->timeout_s, meas_child, &a,
	    t);
	for (i = 0; i < 16; i++)
		free(ref[i]);
	close(lk);
	return rc;
}

double
opat_margin(double noise_floor, double spread_before, double spread_after)
{
	double m = noise_floor;

	if (spread_before > m)
		m = spread_before;
	if (spread_after > m)
		m = spread_after;
	return m;
}

/* A round of the whole-model check: child i runs side i ^ first. */
typedef struct abba_arg {
	opat_child_fn fn;
	void *arg;
	int first;
} abba_arg;

static void
abba_child(int i, int fd, void *arg)
{
	abba_arg *a = arg;

	a->fn(i ^ a->first, fd, a->arg);
}

int
opat_whole_check(const char *what, double timeout_s, opat_child_fn fn,
    void *arg, double *us, double *spread)
{
	abba_arg a;
	opat_timing t[2];
	double m[2][OPAT_MCHECK], iqr[2][OPAT_MCHECK];
	int round, side, rc;

	a.fn = fn;
	a.arg = arg;
	for (round = 0; round < OPAT_MCHECK; round++) {
		a.first = round & 1;
		if ((rc = opat_children_run(2, 1, timeout_s, abba_child, &a,
		    t)) < 0)
			return rc;
		for (side = 0; side < 2; side++) {
			const opat_timing *ts = &t[side ^ a.first];
			if (ts->status != OPAT_OK)
				return aoe_err(AOE_EDATA, "%s: the whole model "
				    "%s the decisions: %s", what, side ?
				    "with" : "without", ts->reason);
			m[side][round] = ts->us;
			iqr[side][round] = ts->us * ts->spread;
		}
	}
	for (side = 0; side < 2; side++) {
		qsort(m[side], OPAT_MCHECK, sizeof(double), cmp_double);
		qsort(iqr[side], OPAT_MCHECK, sizeof(double), cmp_double);
		us[side] = m[side][0];
		spread[side] = iqr[side][OPAT_MCHECK / 2];
	}
	return 0;
}

double
opat_whole_reserve(double child_s, double run_s, int run_loop)
{
	int n = run_loop > OPAT_MREP ? run_loop : OPAT_MREP;

	return 2 * OPAT_MCHECK * (child_s + n * run_s);
}

void
opat_slower_hook(const char *name, double *us, double *spread)
{
	const char *v = getenv(name);
	char *end;
	double f;

	if (v == NULL || *v == '\0')
		return;
	f = strtod(v, &end);
	if (*end != '\0' || !(f > 0 && f <= 100))
		return;
	us[1] = us[0] * f;
	spread[0] = spread[1] = 0;
}

int
opat_whole_slower(const double *us, const double *spread, double noise_floor)
{
	double d = us[1] - us[0];

	return d > spread[0] + spread[1] && d > noise_floor * us[0];
}
