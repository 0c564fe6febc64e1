/*
 * unit-threads - what ThreadSanitizer checks (make check-tsan), and
 * plain make check runs too: the thread pool (lib/base/pool.c) called
 * from several host threads at once, each chunk's writes seen by the
 * caller; loops cut by the threads' speeds (aoe_pool_cut) giving a
 * thread that works three times slower less, and cutting evenly from
 * inside a chunk; and a bank read by several threads (lookups, list, verify)
 * while a thread of this process and a child process commit to it.
 * Every commit adds a new key, so at the end the bank verifies and holds
 * every key committed: none is lost to a concurrent writer.  First, in a
 * process of its own, the pool's first loop: the worker started for it
 * joins it, on a CPU of its own.
 *
 *   unit-threads scratch-dir
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "aoe.h"
#include "kernel.h"

static int nt, nfail;

static void
ok(int cond, const char *what)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", ++nt, what);
	if (!cond)
		nfail++;
}

/*
 * The first loop of a child's pool: each chunk of a loop of two waits (a
 * second at most) for the other to start, so the caller cannot run both
 * unless the worker started for the loop misses it (as it did, whenever
 * it started after the loop was published).  0 when the two ran on two
 * threads and two CPUs, 1 when not, 2 with one CPU.
 */
static _Atomic int arrived;
static int chunk_cpu[2], chunk_tid[2];

static void
rendezvous(void *ctx, int64_t i, int tid)
{
	double t0 = aoe_now_us();

	chunk_cpu[i] = sched_getcpu();
	chunk_tid[i] = tid;
	atomic_fetch_add(&arrived, 1);
	while (atomic_load(&arrived) < 2 && aoe_now_us() - t0 < 1e6)
		;
}

static int
first_loop_child(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) != 0 ||
	    CPU_COUNT(&set) < 2)
		return 2;
	aoe_parallel(2, 2, rendezvous, NULL);
	printf("# first loop: chunks on threads %d and %d, CPUs %d and %d\n",
	    chunk_tid[0], chunk_tid[1], chunk_cpu[0], chunk_cpu[1]);
	fflush(stdout);
	return atomic_load(&arrived) == 2 && chunk_tid[0] != chunk_tid[1] &&
	    chunk_cpu[0] != chunk_cpu[1] ? 0 : 1;
}

/* The pool: each chunk writes its own slots, plainly. */
#define NCHUNK 257
struct job {
	int64_t out[NCHUNK];
	int round;
};

static void
chunk(void *ctx, int64_t i, int tid)
{
	struct job *j = ctx;

	j->out[i] = i * 3 + j->round;
}

static void *
pool_user(void *arg)
{
	struct job *j = aoe_xcalloc(1, sizeof(*j));
	int r, bad = 0;
	int64_t i;

	for (r = 0; r < 300; r++) {
		j->round = r;
		aoe_parallel(4, NCHUNK, chunk, j);
		for (i = 0; i < NCHUNK; i++)
			if (j->out[i] != i * 3 + r)
				bad++;
	}
	free(j);
	*(int *)arg = bad;
	return NULL;
}

/*
 * A loop cut by aoe_pool_cut: part t is cut[t] to cut[t + 1] units of
 * about a microsecond each, done three times over on thread 1, as on a
 * core three times slower.
 */
struct cutjob {
	int64_t cut[3];
	int64_t nested[3];	/* a cut asked for from inside a chunk */
	int nest;
};
static volatile double sink[2];	/* a part's result, kept */

static void
slow_chunk(void *ctx, int64_t c, int tid)
{
	struct cutjob *j = ctx;
	int64_t u, k, reps = tid == 1 ? 3 : 1;
	double v = 1;

	if (j->nest && c == 0)
		aoe_pool_cut(slow_chunk, 2, 64, j->nested);
	for (u = j->cut[c]; u < j->cut[c + 1]; u++)
		for (k = 0; k < 300 * reps; k++)
			v = v * 1.0000001 + 1e-9;
	sink[c] = v;
}

static void
cut_tests(void)
{
	struct cutjob j;
	int64_t c[5];
	int r, moved = 0;
	double t0;

	aoe_pool_cut(chunk, 2, 10, c);
	ok(c[0] == 0 && c[1] == 5 && c[2] == 10, "cut: even for a loop "
	    "never timed");
	aoe_pool_cut(chunk, 4, 3, c);
	ok(c[0] == 0 && c[1] <= c[2] && c[2] <= c[3] && c[3] <= c[4] &&
	    c[4] == 3, "cut: fewer units than threads, in order, all of them");
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		printf("ok %d # skip one CPU\n", ++nt);
		printf("ok %d # skip one CPU\n", ++nt);
		return;
	}
	memset(&j, 0, sizeof(j));
	/*
	 * A loop whose worker came too late (its part taken by the caller)
	 * is not timed: on a loaded machine that can be most of them, so
	 * the bound is time, not loops.
	 */
	t0 = aoe_now_us();
	for (r = 0; !moved && aoe_now_us() - t0 < 10e6; r++) {
		aoe_pool_cut(slow_chunk, 2, 64, j.cut);
		moved = j.cut[1] >= 40;
		aoe_parallel(2, 2, slow_chunk, &j);
	}
	ok(moved, "cut: a thread three times slower gets at most 24 of 64 "
	    "units");
	if (!moved)
		printf("# cut after %d loops: %lld %lld %lld\n", r,
		    (long long)j.cut[0], (long long)j.cut[1],
		    (long long)j.cut[2]);
	j.nest = 1;
	aoe_pool_cut(slow_chunk, 2, 64, j.cut);
	aoe_parallel(2, 2, slow_chunk, &j);
	ok(j.nested[0] == 0 && j.nested[1] == 32 && j.nested[2] == 64,
	    "cut: from inside a chunk, even (no wait on the pool's lock)");
}

/* Nodes with distinct signatures: MatMul [1,k] x [k,8], k = 1..NKEYS. */
#define NKEYS 24
static aoe_graph *gs[NKEYS];
static char *sigs[NKEYS];

static aoe_graph *
matmul(int k)
{
	aoe_graph *g = aoe_graph_new("mm");
	int64_t da[2] = { 1, k }, db[2] = { k, 8 };
	int in[2], y;
	aoe_tensor *b;
	aoe_run_opts o;

	g->opset = 17;
	g->inputs = aoe_xcalloc(1, sizeof(int));
	g->outputs = aoe_xcalloc(1, sizeof(int));
	in[0] = aoe_graph_tensor(g, "a");
	aoe_tensor_set(g->tensors[in[0]], AOE_F32, 2, da);
	g->tensors[in[0]]->kind = AOE_T_INPUT;
	g->inputs[g->ninputs++] = in[0];
	in[1] = aoe_graph_tensor(g, "b");
	b = g->tensors[in[1]];
	aoe_tensor_set(b, AOE_F32, 2, db);
	b->kind = AOE_T_CONST;
	aoe_tensor_alloc_const(b);
	y = aoe_graph_tensor(g, "y");
	aoe_graph_add_node(g, "mm", "MatMul", 2, in, 1, &y);
	g->outputs[g->noutputs++] = y;
	aoe_run_opts_init(&o);
	o.nthreads = 1;
	o.use_bank = 0;
	o.plan_only = 1;
	if (aoe_graph_prepare(g, &o) < 0) {
		printf("Bail out! MatMul k=%d does not prepare: %s\n", k,
		    aoe_errmsg());
		exit(1);
	}
	return g;
}

static cJSON *
record(int i)
{
	char buf[70000];
	aoe_space sp;
	cJSON *s = cJSON_CreateObject(), *r;
	int j;

	if (aoe_space_for(gs[i], &gs[i]->nodes[0], &sp) < 0) {
		printf("Bail out! no space: %s\n", aoe_errmsg());
		exit(1);
	}
	for (j = 0; j < sp.def.n; j++)
		cJSON_AddNumberToObject(s, sp.def.k[j].name,
		    (double)sp.def.k[j].v);
	snprintf(buf, sizeof(buf), "{\"kind\":\"opat\",\"outcome\":\"add\","
	    "\"key\":\"%llu\",\"op_type\":\"MatMul\",\"names\":[\"mm\"],"
	    "\"signature\":\"%s\",\"after_us\":5,\"before_us\":10,"
	    "\"soc_version\":\"%s\",\"threads\":1}",
	    (unsigned long long)aoe_op_key(sigs[i]), sigs[i],
	    aoe_soc_version());
	r = cJSON_Parse(buf);
	cJSON_AddItemToObject(r, "schedule", s);
	return r;
}

static const char *dir;
static atomic_int writing;
static int commit_failed;

/* Commit keys i = from, from + step, ... one at a time. */
static int
commit_keys(int from, int step)
{
	aoe_bank_opts o;
	aoe_bank_counts c[2];
	int i, bad = 0;

	aoe_bank_opts_init(&o);
	o.bank = dir;
	o.quiet = 1;
	for (i = from; i < NKEYS; i += step) {
		cJSON *r = record(i);
		const cJSON *rs[1] = { r };
		if (aoe_bank_commit_records(&o, rs, 1, c) < 0) {
			fprintf(stderr, "# commit %d: %s\n", i, aoe_errmsg());
			bad++;
		}
		cJSON_Delete(r);
	}
	return bad;
}

static void *
writer(void *arg)
{
	commit_failed = commit_keys(0, 2);
	atomic_fetch_sub(&writing, 1);
	return NULL;
}

static void
count(void *arg, const aoe_bank_entry *e)
{
	(*(long *)arg)++;
}

static void
bad_line(void *arg, const char *msg)
{
	fprintf(stderr, "# bad: %s\n", msg);
	(*(long *)arg)++;
}

static char bankfile[PATH_MAX];

static void *
reader(void *arg)
{
	aoe_bank_opts o;
	aoe_bank_counts c;
	long n, bad, errs = 0;
	aoe_sched s;
	const char *from;
	int i = 0;

	aoe_bank_opts_init(&o);
	o.bank = dir;
	o.quiet = 1;
	while (atomic_load(&writing) > 0 || i < 3) {
		n = bad = 0;
		/* A bank read whole: never half written. */
		if (access(bankfile, F_OK) == 0) {
			if (aoe_bank_list(&o, bankfile, count, &n) < 0)
				errs++;
			if (aoe_bank_verify(&o, bankfile, bad_line, &bad, &c) <
			    0 || bad)
				errs++;
		}
		if (i % 5 == 4)
			aoe_bank_use(bankfile, NULL);	/* read it again */
		(void)aoe_bank_find(gs[i % NKEYS], &gs[i % NKEYS]->nodes[0],
		    1, &s, &from);
		i++;
	}
	*(long *)arg = errs;
	return NULL;
}

int
main(int argc, char **argv)
{
	pthread_t th[4];
	int bad[3], i, st, nk;
	long errs[3], n = 0;
	pid_t pid;
	aoe_bank_opts o;
	char sig[65536];

	if (argc != 2) {
		fprintf(stderr, "usage: unit-threads scratch-dir\n");
		return 2;
	}
	dir = argv[1];
	setenv("TUNE_BANK_PATH", dir, 1);
	setenv("AOE_BUILTIN_BANK", dir, 1);
	printf("1..10\n");

	/* The pool's first loop, in a process of its own. */
	fflush(stdout);
	if ((pid = fork()) == 0)
		_exit(first_loop_child());
	waitpid(pid, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 2)
		printf("ok %d # skip one CPU\n", ++nt);
	else
		ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "pool: the worker "
		    "started for the first loop runs a part of it, on another "
		    "CPU");

	/* The pool from three host threads at once. */
	for (i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, pool_user, &bad[i]);
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	ok(bad[0] + bad[1] + bad[2] == 0, "pool: three host threads, 300 "
	    "loops each, every chunk's result seen by its caller");
	cut_tests();

	for (i = 0; i < NKEYS; i++) {
		gs[i] = matmul(i + 1);
		if (aoe_op_signature(gs[i], &gs[i]->nodes[0], 1, sig,
		    sizeof(sig)) < 0) {
			printf("Bail out! signature: %s\n", aoe_errmsg());
			return 1;
		}
		sigs[i] = aoe_xstrdup(sig);
	}
	aoe_bank_opts_init(&o);
	o.bank = dir;
	{
		char d[PATH_MAX];
		if (aoe_bank_target(&o, d, bankfile) < 0) {
			printf("Bail out! bank target: %s\n", aoe_errmsg());
			return 1;
		}
	}
	aoe_bank_use(bankfile, NULL);

	/* A child process commits the odd keys, a thread the even ones. */
	fflush(stdout);
	if ((pid = fork()) == 0)
		_exit(commit_keys(1, 2) ? 1 : 0);
	atomic_store(&writing, 1);
	pthread_create(&th[3], NULL, writer, NULL);
	for (i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, reader, &errs[i]);
	pthread_join(th[3], NULL);
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0 && commit_failed == 0,
	    "bank: a thread and a child process commit, each under the lock");
	ok(errs[0] + errs[1] + errs[2] == 0, "bank: three readers list and "
	    "verify it throughout, never a bad line");
	nk = 0;
	{
		aoe_bank_counts c;
		long b = 0;
		ok(aoe_bank_verify(&o, bankfile, bad_line, &b, &c) == 0 &&
		    b == 0, "bank: verifies after the writers are done");
	}
	aoe_bank_list(&o, bankfile, count, &n);
	nk = (int)n;
	printf("# %d entries, %d keys committed\n", nk, NKEYS);
	ok(nk == NKEYS, "bank: no committed key lost");
	for (i = 0; i < NKEYS; i++) {
		free(sigs[i]);
		aoe_graph_free(gs[i]);
	}
	return nfail != 0;
}
