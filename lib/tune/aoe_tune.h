/*
 * aoe_tune.h - tuning: the preconditions (aoe-check), the device
 * lock and measuring children; the search and measurement of
 * lib/tune/opat.h and lib/tune/sgat.h build on it.
 */
#ifndef AOE_TUNE_H
#define AOE_TUNE_H

#include "aoe_engine.h"

/* The preconditions of a tuning run (lib/tune/check.c, aoe-check(1)). */
enum { AOE_CHECK_OK = 0, AOE_CHECK_WARN, AOE_CHECK_FAIL };
#define AOE_CHECK_MAX 16
typedef struct aoe_check_opts {
	int job_type;		/* 1 subgraph, 2 operator tuning */
	int processes;		/* tuning processes on this host */
	int tuning_parallel;	/* TUNING_PARALLEL_NUM, 1-64 */
	int te_parallel;	/* TE_PARALLEL_COMPILER, 1-32 */
	int run_loop;		/* RUN_LOOP, 1-2048 */
	double min_disk_gb;	/* free space needed in $HOME */
	const char *graph;	/* a model to check, or NULL */
	const char *shape;	/* --input-shape bindings for it, or NULL */
	const char *lock_path;	/* the device lock, NULL for the default */
	char work_path[1024];	/* WORK_PATH */
	char ini[1024];		/* the aoe.ini read, or "" */
} aoe_check_opts;
typedef struct aoe_check_item {
	char check[16];
	int status;		/* AOE_CHECK_OK, _WARN or _FAIL */
	char measured[64];
	char limit[64];
	char note[512];
} aoe_check_item;
typedef struct aoe_check_result {
	int n, nwarn, nfail;
	aoe_check_item item[AOE_CHECK_MAX];
} aoe_check_result;
/*
 * The checks' defaults, with the settings of aoe_settings_load() (aoe.ini
 * and the environment); a bad setting is its error.
 */
int aoe_check_opts_init(aoe_check_opts *o);
/* The same from settings already loaded. */
void aoe_check_opts_set(aoe_check_opts *o, const aoe_settings *s);
/* Run every check; returns 0 (see r->nfail), or an error for bad input. */
int aoe_check_run(const aoe_check_opts *o, aoe_check_result *r);
/*
 * Run the checks as a tool does before tuning: each FAIL is printed on
 * stderr as "not ready: CHECK MEASURED (limit LIMIT): NOTE"; 0 ready, 1
 * not, or an error.
 */
int aoe_check_ready(const aoe_check_opts *o);
/*
 * Take the device lock (flock) and write the owner ("user=U pid=P") in
 * it; returns the descriptor to keep open, or -AOE_EIO naming the
 * owner when another process holds it.
 */
int aoe_device_lock(const char *path);
/* Release a lock taken by aoe_device_lock(). */
void aoe_device_unlock(int fd);

#endif
