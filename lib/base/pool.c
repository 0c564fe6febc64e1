/*
 * pool.c - the thread pool every kernel runs its parallel loops on.
 *
 * A parallel loop is a number of chunks.  The calling thread publishes
 * the job, wakes the workers and then takes chunks itself, one at a time,
 * from shared counters; so do the workers as they arrive.  The caller
 * waits only for chunks that a worker has actually started: a worker that
 * is slow to wake (its core is busy with another process) finds the
 * counters exhausted and does nothing.  That is the difference from an
 * OpenMP parallel region, whose closing barrier waits for every thread of
 * the team, so that one descheduled thread stalls the whole op for a time
 * slice; on a loaded two-core machine that made two threads many times
 * slower than one.
 *
 * The chunks are cut into one contiguous share a thread, each with its
 * own counter: a thread takes the chunks of its own share first, then
 * those left in the others' (it steals from their fronts).  So chunk c of
 * n goes to thread c * nthreads / n whenever every thread keeps up, and
 * two loops in a row that cut their data alike (a GEMM's rows, then a
 * depthwise Conv's channels) find each one's part of the data in the
 * cache of the core that wrote it; the order of claims alone (caller
 * first, then whoever comes) would scatter them.
 *
 * A counter is one 64-bit word: the job's generation in the high half,
 * the next chunk in the low half.  A thread claims a chunk by a
 * compare-and-swap on that word, so it can never claim a chunk of a job
 * other than the one whose parameters it read: the parameters are guarded
 * like a seqlock by their own copy of the generation, and a claim only
 * succeeds while the word still holds that generation.
 *
 * A loop cut into one part a thread (a GEMM's columns) cannot be
 * balanced by stealing: its parts are as large as a thread's share.  On
 * a shared machine the cores do not run alike (two vCPUs of a Zen 5
 * host: one 30-40% slower than the other for seconds at a time, its
 * core's other hardware thread busy), and the slower part holds up the
 * node.  Such loops cut their work with aoe_pool_cut, by the threads'
 * speeds that the pool measures on the loops so cut: each part's share
 * of the work over its thread's time, kept per loop function (kernels
 * differ in what they suffer from another core's cache) as a moving
 * average.  AOE_POOL_BALANCE=0 cuts evenly.
 *
 * Workers spin for a while after each job (inference runs ops back to
 * back), then sleep on a futex.  They are started on first use, and the
 * pool is reset in the child of a fork(), which has none of them.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <immintrin.h>

#include "base.h"

#define POOL_MAX	64		/* threads, the caller included */
#define CHUNK_MAX	0x7fffffffLL	/* chunks a job can have */

/* A thread's share of the chunks: generation << 32 | next chunk. */
static struct share {
	_Alignas(64) _Atomic uint64_t next;
} shares[POOL_MAX];

/*
 * The chunks a worker ran in a job, generation << 32 | count, stored
 * once, when it finds no chunk left to take; the caller sums them.  One
 * counter that every finished chunk added to moved its cache line from
 * core to core at every chunk, while both ran: on a guest whose two
 * vCPUs sit on different CCDs, a third of a microsecond or more each
 * (see FAR_NS), and eight chunks a job at 2 threads (aoe_nchunks).
 */
static struct fin {
	_Alignas(64) _Atomic uint64_t v;
} fins[POOL_MAX];

static struct {
	pthread_mutex_t mu;		/* one job at a time */
	int started;			/* workers running */
	_Atomic uint32_t gen;		/* the newest job's generation */
	_Atomic uint32_t seq;		/* generation of the parameters */
	_Atomic(aoe_chunk_fn) fn;
	_Atomic(void *) ctx;
	_Atomic int64_t nchunks;
	_Atomic int nthreads;
	_Atomic uint32_t wake;		/* futex word, bumped for each job */
	_Atomic int sleepers;
	_Atomic int timed;		/* the job's parts are timed */
	int spin_us;			/* AOE_SPIN_US */
} pool = { .mu = PTHREAD_MUTEX_INITIALIZER, .spin_us = -1 };

/* Set while a thread runs a chunk: a nested loop then runs inline. */
static _Thread_local int in_chunk;
static _Thread_local int in_shared;	/* in take_chunks: a shared loop */

/*
 * Speeds (relative, 1 on average) by loop function, for aoe_pool_cut;
 * read and written under pool.mu, or by the caller of a loop that runs
 * inline.  A function not in the table is cut evenly.
 */
#define SPEED_FNS 32
#define SPEED_MIN_US 20.0	/* a timed job shorter than this: ignored */
static struct speed {
	aoe_chunk_fn fn;
	double v[POOL_MAX];
} speeds[SPEED_FNS];
static _Atomic int balance = -1;	/* AOE_POOL_BALANCE */

/* What the last aoe_pool_cut of this thread cut, for its next loop. */
static _Thread_local struct {
	aoe_chunk_fn fn;
	int nthreads;
	double frac[POOL_MAX];
} cut_last;

/* The time each part of a timed job took, and on which thread. */
static struct part_time {
	_Alignas(64) double us;
	int tid;
} part_times[POOL_MAX];

static void
futex_wait(_Atomic uint32_t *w, uint32_t v)
{
	syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, v, NULL, NULL,
	    0);
}

static void
futex_wake_all(_Atomic uint32_t *w)
{
	syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, INT_MAX, NULL,
	    NULL, 0);
}

/* The first chunk of share t of n chunks among nt threads. */
static int64_t
share_lo(int64_t n, int nt, int t)
{
	return n * t / nt;
}

/*
 * Take chunks of the job of generation gen (n chunks, nt shares) until
 * none is left: those of share tid first, then the others' in turn; tid
 * is the taker's thread number.  Returns how many it ran.
 */
static int64_t
take_chunks(uint32_t gen, aoe_chunk_fn fn, void *ctx, int64_t n, int nt,
    int tid, int timed)
{
	int64_t ran = 0;
	int k;

	in_chunk = 1;
	in_shared = 1;
	for (k = 0; k < nt; k++) {
		int r = (tid + k) % nt;
		_Atomic uint64_t *w = &shares[r].next;
		int64_t end = share_lo(n, nt, r + 1);
		uint64_t st = atomic_load_explicit(w, memory_order_acquire);

		for (;;) {
			int64_t idx = (int64_t)(st & 0xffffffffu);
			if ((uint32_t)(st >> 32) != gen || idx >= end)
				break;
			if (!atomic_compare_exchange_weak_explicit(w, &st,
			    st + 1, memory_order_acq_rel,
			    memory_order_acquire))
				continue;
			if (timed) {
				double t0 = aoe_now_us();
				fn(ctx, idx, tid);
				part_times[idx].us = aoe_now_us() - t0;
				part_times[idx].tid = tid;
			} else
				fn(ctx, idx, tid);
			ran++;
			st = atomic_load_explicit(w, memory_order_acquire);
		}
	}
	in_chunk = 0;
	in_shared = 0;
	return ran;
}

int
aoe_pool_shared(void)
{
	return in_shared;
}

/*
 * A new worker: its number, the CPUs it may use once started, and the
 * jobs it has seen: those before the one it is started for, which it
 * then joins however late it starts.
 */
struct start {
	int tid, placed;
	uint32_t seen;
	cpu_set_t allowed;
};

static void *
worker(void *arg)
{
	struct start *st = arg;
	int tid = st->tid;
	uint32_t seen = st->seen, ran_gen = 0;
	double spin = pool.spin_us;

	/* Running where pool_grow put it, it may go where the caller may. */
	if (st->placed)
		(void)sched_setaffinity(0, sizeof(st->allowed), &st->allowed);
	free(st);

	for (;;) {
		double t0 = aoe_now_us();
		uint32_t w, gen;
		aoe_chunk_fn fn;
		void *ctx;
		int64_t n, ran;
		int nt, timed, i = 0;

		/* Poll the clock only every 64 pauses: it costs more. */
		while ((w = atomic_load_explicit(&pool.wake,
		    memory_order_acquire)) == seen) {
			if ((++i & 63) != 0 || aoe_now_us() - t0 < spin) {
				_mm_pause();
				continue;
			}
			atomic_fetch_add(&pool.sleepers, 1);
			futex_wait(&pool.wake, seen);
			atomic_fetch_sub(&pool.sleepers, 1);
			t0 = aoe_now_us();
		}
		seen = w;
		gen = atomic_load_explicit(&pool.gen, memory_order_acquire);
		if (atomic_load_explicit(&pool.seq, memory_order_acquire) !=
		    gen)
			continue;
		fn = atomic_load_explicit(&pool.fn, memory_order_relaxed);
		ctx = atomic_load_explicit(&pool.ctx, memory_order_relaxed);
		n = atomic_load_explicit(&pool.nchunks, memory_order_relaxed);
		nt = atomic_load_explicit(&pool.nthreads,
		    memory_order_relaxed);
		timed = atomic_load_explicit(&pool.timed,
		    memory_order_relaxed);
		atomic_thread_fence(memory_order_acquire);
		/*
		 * A job it has run already: it woke for a job that its
		 * caller finished alone, then read the next one's
		 * parameters, and this is the wake-up for that one.  It
		 * took what it could there; a second report of none would
		 * overwrite the first.
		 */
		if (atomic_load_explicit(&pool.seq, memory_order_relaxed) !=
		    gen || tid >= nt || gen == ran_gen)
			continue;
		ran = take_chunks(gen, fn, ctx, n, nt, tid, timed);
		ran_gen = gen;
		/* The chunks' results are visible to whoever sees this. */
		atomic_store_explicit(&fins[tid].v, (uint64_t)gen << 32 |
		    (uint64_t)ran, memory_order_release);
	}
	return NULL;
}

static void
pool_atfork_child(void)
{
	pthread_mutex_init(&pool.mu, NULL);
	pool.started = 0;
	atomic_store(&pool.sleepers, 0);
}

/* Start worker st, on CPU cpu alone at first (see pool_grow), or -1. */
static int
spawn(struct start *st, int cpu)
{
	pthread_attr_t a;
	pthread_t t;
	int rc;

	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&a, 1 << 20);
	st->placed = 0;
	if (cpu >= 0) {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		st->placed = pthread_attr_setaffinity_np(&a, sizeof(one),
		    &one) == 0;
	}
	rc = pthread_create(&t, &a, worker, st);
	pthread_attr_destroy(&a);
	return rc;
}

/*
 * Start workers up to nthreads - 1; returns how many run.  The child of
 * a fork() has none: pool_atfork_child, registered before the first
 * worker starts, says so.  (Asking getpid() instead, on every job, cost
 * a microsecond a job in a virtual machine, where it is a real system
 * call: a third of a small job's time.)
 */
static int
pool_grow(int nthreads)
{
	cpu_set_t allowed;
	int self, c, placed;

	if (pool.spin_us < 0) {
		int v = 100;
		if (aoe_envnum("AOE_SPIN_US", 0, 100000, &v) < 0) {
			aoe_warnx("%s; using 100", aoe_errmsg());
			v = 100;
		}
		pool.spin_us = v;
	}
	if (pool.started >= nthreads - 1)
		return pool.started;
	/*
	 * Each worker starts on a CPU of its own, the next the caller may
	 * use after the last one taken, beginning past the caller's: left
	 * to itself, the scheduler of a 2-vCPU guest (Linux 6.18, AMD EPYC
	 * Zen 5, two vCPUs on two CCDs) ran a new thread on its creator's
	 * CPU for 4-5 ms while the other idled, or not at all until the
	 * creator's time slice ended; a measuring child, whose timed runs
	 * last a few milliseconds, then timed two threads as one, or worse
	 * (a 3x3 Conv of squeezenet1_1 at 2 threads 115 us against 59, in
	 * half the children).  Once running the worker widens its affinity
	 * again (worker), and stays where it is while that CPU is free.
	 */
	placed = (self = sched_getcpu()) >= 0 && sched_getaffinity(0,
	    sizeof(allowed), &allowed) == 0 && CPU_COUNT(&allowed) > 1;
	c = self;
	while (pool.started < nthreads - 1) {
		struct start *st = aoe_xcalloc(1, sizeof(*st));
		int k, cpu = -1, rc;

		st->tid = pool.started + 1;
		st->seen = atomic_load(&pool.wake);
		st->allowed = allowed;
		for (k = 0; placed && k < CPU_SETSIZE && cpu < 0; k++)
			if (CPU_ISSET(c = (c + 1) % CPU_SETSIZE, &allowed))
				cpu = c;
		/* A CPU the kernel will not give: start it unplaced. */
		if ((rc = spawn(st, cpu)) != 0 && cpu >= 0)
			rc = spawn(st, -1);
		if (rc != 0) {
			free(st);
			break;
		}
		pool.started++;
	}
	return pool.started;
}

static void
run_inline(int64_t nchunks, aoe_chunk_fn fn, void *ctx)
{
	int64_t i, was = in_chunk;

	in_chunk = 1;
	for (i = 0; i < nchunks; i++)
		fn(ctx, i, 0);
	in_chunk = (int)was;
}

/*
 * Whether the cores are far apart, measured: a cache line's round trip
 * between this thread and a new one on another CPU, bouncing it back and
 * forth, the least over rounds of 16 trips.  On an AMD EPYC Zen 5 guest
 * it is 130-150 ns while its two vCPUs share a CCD and 410-490 ns while
 * they sit on two (the host moves them); there, storing over lines that
 * both cores hold takes 1.7 and 8 ns a line (bench/xcore).  Far is over 250 ns.  The
 * partner has 50 ms to start; a round that takes over 100 us (the
 * partner was moved or preempted: the first often takes milliseconds)
 * does not count; fewer than 3 rounds of 16 within 20 ms (one CPU, or a
 * busy machine) count as near.  It usually takes about a millisecond,
 * once a process.  AOE_FAR_CORES (0 or 1) says instead.
 */
#define FAR_NS 250.0
#define FAR_TRIPS 16

static struct {
	_Alignas(64) _Atomic uint32_t ball;
	_Alignas(64) _Atomic int state;	/* 1 started, 2 told to stop */
} far_line;

static void *
far_partner(void *arg)
{
	uint32_t v = 1;

	(void)arg;
	atomic_store(&far_line.state, 1);
	while (atomic_load_explicit(&far_line.state, memory_order_relaxed) !=
	    2) {
		if (atomic_load_explicit(&far_line.ball,
		    memory_order_acquire) == v) {
			atomic_store_explicit(&far_line.ball, v + 1,
			    memory_order_release);
			v += 2;
		} else
			_mm_pause();
	}
	return NULL;
}

static int
far_probe(void)
{
	pthread_t t;
	pthread_attr_t a;
	cpu_set_t set;
	double best = -1, t0, dt, end;
	uint32_t v = 0;
	int rounds = 0, i, c, rc, self = sched_getcpu();

	if (sched_getaffinity(0, sizeof(set), &set) != 0 ||
	    CPU_COUNT(&set) < 2)
		return 0;
	atomic_store(&far_line.ball, 0);
	atomic_store(&far_line.state, 0);
	/* The partner on another CPU that this process may use. */
	pthread_attr_init(&a);
	if (self >= 0 && CPU_ISSET(self, &set)) {
		CPU_CLR(self, &set);
		for (c = 0; c < CPU_SETSIZE && !CPU_ISSET(c, &set); c++)
			;
		CPU_ZERO(&set);
		CPU_SET(c, &set);
		pthread_attr_setaffinity_np(&a, sizeof(set), &set);
	}
	rc = pthread_create(&t, &a, far_partner, NULL);
	pthread_attr_destroy(&a);
	if (rc != 0)
		return 0;
	end = aoe_now_us() + 50000;
	while (atomic_load(&far_line.state) == 0 && aoe_now_us() < end)
		sched_yield();
	end = aoe_now_us() + 20000;
	while (atomic_load(&far_line.state) == 1 && rounds < 8 &&
	    aoe_now_us() < end) {
		t0 = aoe_now_us();
		for (i = 0; i < FAR_TRIPS; i++) {
			atomic_store_explicit(&far_line.ball, v + 1,
			    memory_order_release);
			while (atomic_load_explicit(&far_line.ball,
			    memory_order_acquire) != v + 2 &&
			    aoe_now_us() < end)
				_mm_pause();
			v += 2;
		}
		dt = aoe_now_us() - t0;
		if (atomic_load(&far_line.ball) != v)
			break;
		if (dt > 100)
			continue;
		if (best < 0 || dt < best)
			best = dt;
		rounds++;
	}
	atomic_store(&far_line.state, 2);
	pthread_join(t, NULL);
	return rounds >= 3 && best * 1000 / FAR_TRIPS > FAR_NS;
}

static pthread_once_t far_once = PTHREAD_ONCE_INIT;
static int far_result;

static void
far_init(void)
{
	int v;

	switch (aoe_envnum("AOE_FAR_CORES", 0, 1, &v)) {
	case 1:
		far_result = v;
		return;
	case 0:
		break;
	default:
		aoe_warnx("%s; measuring", aoe_errmsg());
	}
	far_result = far_probe();
}

int
aoe_cores_far(void)
{
	pthread_once(&far_once, far_init);
	return far_result;
}

/* The speeds of fn's threads: its entry, a new one, or NULL. */
static struct speed *
speed_of(aoe_chunk_fn fn, int add)
{
	size_t h = ((uintptr_t)fn >> 4) % SPEED_FNS, k;
	int i;

	for (k = 0; k < SPEED_FNS; k++) {
		struct speed *e = &speeds[(h + k) % SPEED_FNS];
		if (e->fn == fn)
			return e;
		if (e->fn == NULL) {
			if (!add)
				return NULL;
			e->fn = fn;
			for (i = 0; i < POOL_MAX; i++)
				e->v[i] = 1;
			return e;
		}
	}
	return NULL;
}

static int
balance_on(void)
{
	if (balance < 0) {
		int v = 1;
		if (aoe_envnum("AOE_POOL_BALANCE", 0, 1, &v) < 0) {
			aoe_warnx("%s; using 1", aoe_errmsg());
			v = 1;
		}
		balance = v;
	}
	return balance;
}

void
aoe_pool_cut(aoe_chunk_fn fn, int nthreads, int64_t n, int64_t *cut)
{
	const struct speed *e = NULL;
	double sum = 0, acc = 0;
	int t;

	if (nthreads > POOL_MAX)
		nthreads = POOL_MAX;
	if (nthreads < 1)
		nthreads = 1;
	cut[0] = 0;
	/* The table is written under pool.mu; a stale read only cuts worse. */
	if (nthreads > 1 && !in_chunk && balance_on() &&
	    pthread_mutex_trylock(&pool.mu) == 0) {
		e = speed_of(fn, 0);
		pthread_mutex_unlock(&pool.mu);
	}
	for (t = 0; t < nthreads; t++)
		sum += e ? e->v[t] : 1;
	for (t = 1; t < nthreads; t++) {
		/* Every part non-empty while the units allow. */
		int64_t one = n >= nthreads, c, lo, hi;

		acc += e ? e->v[t - 1] : 1;
		c = e ? (int64_t)((double)n * acc / sum + 0.5) :
		    n * t / nthreads;
		lo = cut[t - 1] + one;
		hi = n - one * (nthreads - t);
		cut[t] = c < lo ? lo : c > hi ? hi : c;
	}
	cut[nthreads] = n;
	cut_last.fn = fn;
	cut_last.nthreads = nthreads;
	for (t = 0; t < nthreads; t++)
		cut_last.frac[t] = n > 0 ? (double)(cut[t + 1] - cut[t]) / n :
		    0;
}

/*
 * After a timed job of nthreads parts, each run by its own thread: the
 * work each did over its time, against the mean, into fn's speeds, a
 * moving average that gives the newest job SPEED_NEW of the weight.  The
 * slow phases of a shared host's vCPUs come and go in milliseconds: at 2
 * threads (Zen 5, alternating processes, medians of run medians against
 * ONNX Runtime's) 3/8 against 1/8 took regnet_x_400mf from 1.081 to
 * 1.063 and 1.113 to 1.080 (at 1/2), resnet50 1.042 to 1.004,
 * squeezenet1_1 1.037 to 0.974, mobilenet_v2 0.917 to 0.932; a weight of
 * 1 (the last job alone) 1.105.
 */
#define SPEED_NEW 0.375
static void
speed_update(aoe_chunk_fn fn, int nthreads)
{
	double r[POOL_MAX], mean = 0, tot = 0;
	struct speed *e;
	int t;

	for (t = 0; t < nthreads; t++) {
		const struct part_time *p = &part_times[t];
		if (p->tid != t || cut_last.frac[t] <= 0)
			return;
		tot += p->us;
		r[t] = cut_last.frac[t] / (p->us > 0.1 ? p->us : 0.1);
		mean += r[t];
	}
	if (tot < SPEED_MIN_US * nthreads || (e = speed_of(fn, 1)) == NULL)
		return;
	mean /= nthreads;
	for (t = 0; t < nthreads; t++) {
		double v = r[t] / mean;
		v = v < 0.5 ? 0.5 : v > 2 ? 2 : v;
		e->v[t] += SPEED_NEW * (v - e->v[t]);
	}
}

void
aoe_parallel(int nthreads, int64_t nchunks, aoe_chunk_fn fn, void *ctx)
{
	static int registered;
	uint32_t gen;
	int64_t ran;
	int spins = 0, i, timed;

	if (nchunks <= 0)
		return;
	if (nthreads > POOL_MAX)
		nthreads = POOL_MAX;
	/* A cut made for this loop, and this loop only. */
	timed = cut_last.fn == fn && cut_last.nthreads == nthreads &&
	    nchunks == nthreads;
	cut_last.fn = NULL;
	if (nthreads < 2 || nchunks < 2 || nchunks > CHUNK_MAX || in_chunk ||
	    pthread_mutex_trylock(&pool.mu) != 0) {
		run_inline(nchunks, fn, ctx);
		return;
	}
	if (!registered) {
		pthread_atfork(NULL, NULL, pool_atfork_child);
		registered = 1;
	}
	if (pool_grow(nthreads) < 1) {
		pthread_mutex_unlock(&pool.mu);
		run_inline(nchunks, fn, ctx);
		return;
	}
	if (nthreads > pool.started + 1)
		nthreads = pool.started + 1;
	/* Publish: parameters and shares under their seqlock, then gen. */
	/* Generation 0 marks the parameters as being written. */
	if ((gen = atomic_load_explicit(&pool.gen, memory_order_relaxed) +
	    1) == 0)
		gen = 1;
	atomic_store_explicit(&pool.seq, 0, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&pool.fn, fn, memory_order_relaxed);
	atomic_store_explicit(&pool.ctx, ctx, memory_order_relaxed);
	atomic_store_explicit(&pool.nchunks, nchunks, memory_order_relaxed);
	atomic_store_explicit(&pool.nthreads, nthreads, memory_order_relaxed);
	atomic_store_explicit(&pool.timed, timed, memory_order_relaxed);
	for (i = 0; i < nthreads; i++)
		atomic_store_explicit(&shares[i].next, (uint64_t)gen << 32 |
		    (uint64_t)share_lo(nchunks, nthreads, i),
		    memory_order_relaxed);
	atomic_store_explicit(&pool.seq, gen, memory_order_release);
	atomic_store_explicit(&pool.gen, gen, memory_order_release);
	atomic_fetch_add_explicit(&pool.wake, 1, memory_order_release);
	if (atomic_load(&pool.sleepers) > 0)
		futex_wake_all(&pool.wake);
	ran = take_chunks(gen, fn, ctx, nchunks, nthreads, 0, timed);
	/*
	 * Every chunk is taken; wait for those still running elsewhere:
	 * until the workers that ran the others have said so (a worker that
	 * took none counts for nothing, whether it said so or not).
	 */
	for (;;) {
		int64_t sum = ran;
		for (i = 1; i < nthreads; i++) {
			uint64_t f = atomic_load_explicit(&fins[i].v,
			    memory_order_acquire);
			if ((uint32_t)(f >> 32) == gen)
				sum += (int64_t)(f & 0xffffffffu);
		}
		if (sum >= nchunks)
			break;
		if (++spins < 4096)
			_mm_pause();
		else
			sched_yield();
	}
	if (timed)
		speed_update(fn, nthreads);
	pthread_mutex_unlock(&pool.mu);
}
