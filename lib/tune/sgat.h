/*
 * sgat.h - subgraph tuning (aoe-sgat): private to lib/tune/sgat.c and
 * tools/aoe-sgat.c; not part of the public header.
 */
#ifndef AOE_SGAT_H
#define AOE_SGAT_H

#include <stdio.h>

#include "tune.h"

typedef struct sgat_opts {
	int threads;		/* --threads; 0: online CPUs */
	int run_loop;		/* RUN_LOOP */
	int budget_trials;	/* measurements a subgraph, 0: all */
	int repeat_tune;	/* REPEAT_TUNE */
	int use_bank;		/* operator bank schedules (--no-bank: 0) */
	int progress;
	int reload;		/* --reload: the journal must exist */
	int regions;		/* layout regions (--no-regions: 0) */
	double timeout_s;
	double total_seconds;	/* --total-seconds: the whole run; 0: none */
	double noise_floor;
	const char *journal;
	const char *shape;	/* --input-shape */
	uint64_t seed;
} sgat_opts;

void sgat_opts_init(sgat_opts *o);
/* Tune the subgraphs of one graph, writing records to out. */
int sgat_tune(const sgat_opts *o, const char *path, FILE *out);

#endif
