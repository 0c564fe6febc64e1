/*
 * opat.h - operator tuning (aoe-opat) and the measuring harness that
 * aoe-sgat shares: private to lib/tune/opat.c, search.c, measure.c and
 * sgat.c, tools/aoe-opat.c and the white-box tests; not part of the
 * public header.
 */
#ifndef AOE_OPAT_H
#define AOE_OPAT_H

#include <stdio.h>
#include <cjson/cJSON.h>

#include "tune.h"

/* Search strategies. */
enum { OPAT_AUTO, OPAT_EXHAUSTIVE, OPAT_RANDOM, OPAT_EVOLUTION };

/* Status of one measured candidate (the timing's "status"). */
enum { OPAT_OK, OPAT_WRONG, OPAT_CRASH, OPAT_TIMEOUT, OPAT_ABORT,
	OPAT_INVALID, OPAT_NSTATUS };

const char *opat_status_name(int st);
int opat_status_from_name(const char *s);
const char *opat_strategy_name(int s);

/* One measurement. */
typedef struct opat_timing {
	int status;
	double us;		/* median of the repeats, per run */
	double mean_us, min_us;
	double spread;		/* relative standard deviation of repeats */
	double cost_s;		/* wall time the measurement took */
	int runs, inner;	/* repeats, and runs per timed repeat */
	char reason[256];
} opat_timing;

/*
 * The search over one space.  Candidates are proposed in batches and fed
 * back with their times (a failed candidate costs infinity).
 */
typedef struct opat_search {
	int strategy;
	const aoe_space *sp;
	uint64_t seed;
	int n, cap;		/* points proposed so far */
	aoe_sched *pts;
	double *cost;		/* us, or -1 while unknown, or HUGE_VAL */
	char **canon;
	uint64_t next_idx;	/* exhaustive: next index to try */
	int done;
	int *hidx, hcap;	/* open-addressing index of canon[] */
	double *prior;		/* analytical log-time estimate of pts[] */
	/* The node's GEMM geometry for the analytical model (gemm, conv). */
	int geo;		/* 0: none, 1: GEMM, 2: Conv */
	double gm, gn, gk, gbatch;	/* C is gm x gn, depth gk, gbatch times */
	int wino_ok;		/* a 3x3 unit-stride 2-D Conv */
	int const_a, const_b;	/* the weights are A (Conv) or B (GEMM) */
	int transb;		/* GEMM: B is stored n-major (Gemm transB) */
	/*
	 * A space small enough to enumerate (evolution): its legal points,
	 * their analytical estimates and knob value indices, whether each
	 * was proposed; and the ridge regression of the residuals on the
	 * knob values that ranks them (one weight per knob value).
	 */
	int ne;			/* points, 0 not yet, -1 not enumerable */
	uint64_t *eidx;		/* space index of each point */
	double *eprior, *ejit;
	unsigned char *ekv, *eused;	/* ne x nknobs value indices */
	int nfeat, foff[AOE_SCHED_MAX];	/* knob k's weights at foff[k] */
	double *w;		/* nfeat weights, plus the mean residual */
	int fit_n;		/* measured points the weights were fitted to */
} opat_search;

void opat_search_init(opat_search *s, int strategy, const aoe_space *sp,
    uint64_t seed);
void opat_search_free(opat_search *s);
/* Note a point already measured (the default, say) without proposing it. */
void opat_search_add(opat_search *s, const aoe_sched *p, double us);
/* Propose up to max new points into out; 0 when the space is exhausted. */
int opat_search_next(opat_search *s, int max, aoe_sched *out);
/*
 * Feed the time of a proposed point: HUGE_VAL when it failed, NAN when
 * it has no time (missing from a replay set), which the model ignores.
 */
void opat_search_feed(opat_search *s, const aoe_sched *p, double us);
/* Legal points of the space, counting up to limit (then limit). */
uint64_t opat_space_legal(const aoe_space *sp, uint64_t limit);
/*
 * The canonical text of a schedule in a space: every knob (absent ones at
 * their default), sorted by name, "a=1,b=2".
 */
void opat_canon(const aoe_space *sp, const aoe_sched *s, char *buf,
    size_t len);
/* A schedule as a flat JSON object (back: aoe_sched_from_json()). */
cJSON *opat_sched_json(const aoe_sched *s);

/*
 * Measuring: a node of a prepared graph, timed in child processes.
 */
typedef struct opat_meas_opts {
	int nthreads;
	int run_loop;		/* RUN_LOOP */
	int parallel;		/* TE_PARALLEL_COMPILER: children at once */
	double timeout_s;	/* per candidate */
	const char *lock_path;	/* the measure lock */
	uint64_t seed;
	/*
	 * In the model: the nodes of these names, with the candidate, timed
	 * inside whole runs of the graph (NULL: the node alone).
	 */
	char **names;
	int nnames;
	/*
	 * With names: the graph is prepared as a model child prepares it
	 * (opat_model_graph), once, so that the children skip that.
	 */
	int prepared;
} opat_meas_opts;

const char *opat_lock_path(void);
/*
 * Load the model at path (its inputs bound by shape, "" for none) and
 * prepare it as the in-model children of opat_measure run it: forked
 * from it (opat_meas_opts.prepared, and the whole-model check's), they
 * skip the preparation, which packs every weight of the model.  0, or
 * an error.
 */
int opat_model_graph(const char *path, const char *shape, int nthreads,
    aoe_graph **gp);
/*
 * Measure n schedules of node ni of g: each in its own child process,
 * checked against the default schedule's result on fresh random inputs,
 * then timed under the host's exclusive lock.  seeds[i] picks candidate
 * i's inputs.  Fills t[0..n).  Returns 0, or an error of the harness.
 */
int opat_measure(aoe_graph *g, int ni, const aoe_sched *s,
    const uint64_t *seeds, int n, const opat_meas_opts *o, opat_timing *t);

/*
 * The measuring children's protocol (lib/tune/measure.c,
 * lib/tune/sgat.c): write s to the parent; take the measure lock shared while preparing (saying
 * "waiting", then "running"; returns the lock's descriptor, the gate's
 * in *gate), then exclusively for the timed runs ("waiting", "locked");
 * and say the result of n timed repeats rep[] ("ok median mean min spread
 * n inner", spread the interquartile range over the median) and exit.
 */
void opat_say(int fd, const char *s);
int opat_child_lock(const char *path, int *gate, int fd);
/*
 * A measuring child's run options: no bank, every fusion, no profile;
 * and opat_child_pin, which it calls: a child of one thread pinned to
 * the last CPU it may use, so that all are timed on one CPU.
 */
void opat_child_opts(aoe_run_opts *ro, int nthreads);
void opat_child_pin(int nthreads);
void opat_child_exclusive(int lk, int gate, int fd);
void opat_child_report(double *rep, int n, int inner, int fd)
    __attribute__((noreturn));

/*
 * The parent's side: run n measuring children, at most parallel at once
 * (each forked with aoe_fork_child).  Child i runs fn(i, fd, arg), which
 * speaks the protocol above on fd and never returns.  A child silent for
 * timeout_s seconds while not waiting for the lock is killed.  t[i] gets
 * child i's result (opat_child_result) and cost_s its wall time.  Returns
 * 0, or an error of the harness (pipe, fork, poll), the children still
 * running then killed.
 */
typedef void (*opat_child_fn)(int i, int fd, void *arg);
int opat_children_run(int n, int parallel, double timeout_s,
    opat_child_fn fn, void *arg, opat_timing *t);
/*
 * The whole-model check of aoe-opat and aoe-sgat: OPAT_MCHECK rounds of
 * two children, fn(0, ...) timing the model without the run's decisions
 * and fn(1, ...) with them (each at least OPAT_MREP timed runs),
 * alternating which goes first (ABBA).  Each side's time us[] is the
 * least of its rounds' medians, its spread[] (in microseconds) the median
 * of the rounds' interquartile ranges.  The least, not the median: on a
 * shared host the speed of a whole process can change (ppocr_cls ran in
 * 0.32 or 0.48 ms as the process drew: bench/results/procspeed-*.txt),
 * and a busy host only adds; a side needs one fast round of five.
 * 0, or an error (what names the model).
 */
#define OPAT_MCHECK 5
#define OPAT_MREP 11
int opat_whole_check(const char *what, double timeout_s, opat_child_fn fn,
    void *arg, double *us, double *spread);
/*
 * The seconds opat_whole_check takes, kept from --total-seconds: its
 * 2 * OPAT_MCHECK children, each child_s of its own (start, preparing)
 * and its repeats (the larger of run_loop and OPAT_MREP) of run_s.
 */
double opat_whole_reserve(double child_s, double run_s, int run_loop);
/*
 * The margin a winner must beat: the noise floor, or the larger of the
 * two measured spreads.
 */
double opat_margin(double noise_floor, double spread_before,
    double spread_after);
/*
 * Whether the model with the decisions (us[1]) is slower than without
 * (us[0]) beyond both spreads and the noise floor (a fraction).
 */
int opat_whole_slower(const double *us, const double *spread,
    double noise_floor);
/*
 * The tools' test hook name=f (AOE_OPAT_SLOWER_MODEL,
 * AOE_SGAT_SLOWER_MODEL): the whole model's time with the decisions
 * (us[1]) f times its time without, both spreads none, so that a busy
 * host cannot decide a test; f over 0, at most 100, or nothing changes.
 */
void opat_slower_hook(const char *name, double *us, double *spread);
/*
 * Turn what a child said (out, its lines, which this cuts at their
 * newlines) and how it ended (wait status wst, or killed at its time
 * limit) into t, cost_s left 0.  The last line other than "waiting",
 * "running" and "locked" is the result: "ok" with the six numbers is
 * ok; "wrong why" wrong; "invalid why", an "ok" line that does not parse
 * (garbled) and anything else invalid; no result line a crash, as is a
 * signal (SIGABRT an abort); a kill at the time limit is a timeout.
 */
void opat_child_result(char *out, int wst, int killed, opat_timing *t);

/*
 * Check a computed output against its reference: bit for bit unless it is
 * float32, else within the tolerances of lib/tune/measure.c (relative L2 1e-4,
 * each element 1e-3 of the largest |ref|), with no NaN or Inf where the
 * reference is finite.  0, or -1 with why.  Used by aoe-opat and aoe-sgat.
 */
int opat_verify(const aoe_tensor *t, const void *ref, char *why,
    size_t len);

/*
 * 64-bit FNV-1a (aoe_fnv1a) of string s, continuing from h, or from
 * AOE_FNV_INIT when h is 0.
 */
uint64_t opat_hash(uint64_t h, const char *s);

/*
 * A tuning run.
 */
typedef struct opat_opts {
	int threads;
	int run_loop;		/* RUN_LOOP */
	int te_parallel;	/* TE_PARALLEL_COMPILER */
	int tuning_parallel;	/* TUNING_PARALLEL_NUM: candidates a batch */
	int repeat_tune;	/* REPEAT_TUNE */
	int strategy;
	long long budget_trials;	/* per case */
	double budget_seconds;	/* per case */
	double total_seconds;	/* whole run, shared by time; 0: none */
	long long total_trials;	/* whole run, shared by time; 0: none */
	long long min_trials;	/* floor of a case's share */
	uint64_t seed;
	double timeout_s;
	double noise_floor;	/* smallest margin that counts as a win */
	double min_gain_us;	/* and the smallest time saved */
	int commit;
	int in_model;		/* confirm winners in the model, not alone */
	int use_bank;
	int progress;
	const char *journal;
	const char *replay;
	const char *sshloginfile;	/* measure on these hosts (remote.c) */
	char **ops_names, **ops_types;
	int nops_names, nops_types;
} opat_opts;

typedef struct opat_map opat_map;

typedef struct opat_graph {
	char *path;		/* absolute */
	char *shape;		/* --input-shape, or "" */
	aoe_graph *g;
	/*
	 * Per node of g: 1 when the fusion that the runtime runs removes it
	 * (a Relu folded into its Conv, a chain merged into one node), so
	 * that no bank entry of it can ever apply: it is not tuned.  NULL
	 * for a subgraph.
	 */
	char *gone;
	/*
	 * A subgraph (If branch, Loop or Scan body) of the graph of the
	 * entry before it that has sub 0, which owns it; prefix makes its
	 * nodes' names paths from that graph ("if0/then_branch/").
	 */
	int sub;
	char *prefix;
} opat_graph;

typedef struct opat_case {
	uint64_t key;
	char keystr[32];
	char *sig;
	char op_type[64];
	char **names;
	int nnames;
	int gi, node;		/* the graph and node measured */
	int seq;		/* order of discovery */
	int hit;		/* the bank has an entry */
	char hit_from[16];
	aoe_sched base_s;	/* the baseline: default or bank entry */
	opat_timing base;
	double share;		/* baseline time x names */
	double spent;		/* seconds charged to the case */
	opat_map *rmap;		/* replay timings by canonical schedule */
	int late;		/* --total-seconds ended before its turn */
	int nbase;		/* measurements of the baseline (1 or 2) */
} opat_case;

struct selcase;

typedef struct opat_run {
	opat_opts o;
	FILE *out;		/* records, candidates, timings */
	FILE *tfp;		/* --timings, or NULL */
	opat_graph *graphs;
	int ngraphs;
	opat_case *cases;
	int ncases;
	double total_share;
	FILE *jfp;
	char jid[32];
	opat_map *jtim, *jrec, *replay;
	struct selcase *sel;
	int nsel;
	int ndone, nfailed;
	int nhosts;		/* --sshloginfile's hosts, checked */
	double t0;
	/*
	 * Progress: the current case's expected seconds, those of the
	 * cases after it, the expected and wall seconds of the cases done
	 * (their ratio scales the expectations), when the current case
	 * began, and its scale before any case is done.
	 */
	aoe_tprog prog;
	double cur_est, eta_rest, est_done, act_done, case_t0, cur_scale;
	/*
	 * The records held back for the whole-model check (tune in the
	 * model, not from a replay set): written and committed after it.
	 */
	cJSON *held;
	/*
	 * --total-seconds: when the run must end (aoe_now_us(); HUGE_VAL
	 * for none), and the seconds before it kept for the whole-model
	 * check.
	 */
	double deadline, reserve_s;
	/*
	 * While a case is confirmed in the model: its graph prepared as the
	 * measuring children run it (opat_model_graph), or NULL.
	 */
	aoe_graph *mgraph;
} opat_run;

void opat_opts_init(opat_opts *o);
int opat_strategy_from_name(const char *s);
/*
 * AOE_INJECT_FAULT (kind[:op_type], kind crash, hang, wrong, nan or
 * abort; see measure.c) is unset or well-formed: 0, else -AOE_EDATA.
 */
int opat_fault_check(void);
int opat_add_graph(opat_run *r, const char *path, const char *shape,
    char **only, int nonly);
int opat_add_tasks(opat_run *r, const char *path);
int opat_is_tasks(const char *path);
int opat_load_replay(opat_run *r, const char *path);
int opat_tune(opat_run *r);
int opat_list(opat_run *r);
int opat_generate(opat_run *r);
int opat_measure_stream(opat_run *r, int argc, char **argv);
int opat_select_stream(opat_run *r, int argc, char **argv);
void opat_run_free(opat_run *r);

/* A timing line's fields into t (an "ok" without a time is invalid). */
void opat_timing_from_json(const cJSON *o, opat_timing *t);
/* Member name of o as a string (or NULL), as a number (or def). */
const char *opat_jstr(const cJSON *o, const char *name);
double opat_jnum(const cJSON *o, const char *name, double def);
int opat_jint(const cJSON *o, const char *name, int def, int lo, int hi);

/*
 * --sshloginfile (lib/tune/remote.c): check that every host answers with
 * this host's soc_version; measure candidates of a case on the hosts
 * through GNU parallel, lost[i] set for a candidate whose timing never
 * came back (its host failed).
 */
int opat_remote_check(opat_run *r);
int opat_remote_measure(opat_run *r, const opat_case *c, const aoe_sched *s,
    int n, opat_timing *t, int *lost);

#endif
