/*
 * tune.h - what the tuning files share inside libaoe: measuring
 * children and the device lock.  Not installed.
 */
#ifndef AOE_TUNE_INT_H
#define AOE_TUNE_INT_H

#include "aoe_tune.h"
#include "engine.h"

/*
 * fork() for a measuring child: the child does not keep the device lock
 * open and is killed when its parent dies, so that a tuning run killed
 * with kill -9 leaves no child behind holding the device.
 */
pid_t aoe_fork_child(void);
/* The device lock's path: $AOE_DEVICE_LOCK, else /tmp/aoe-device.lock. */
const char *aoe_device_lock_path(void);

/*
 * Progress on stderr (lib/tune/progress.c): on a terminal a line redrawn
 * in place (aoe_tprog_update, aoe_tprog_note); whenever on, a line for
 * each case as it ends (aoe_tprog_case) and a summary (aoe_tprog_end).
 * An ETA below 0 is unknown.
 */
#define TPROG_NOUT 5		/* add, update, reserved, unsatisfied, failed */
typedef struct aoe_tprog {
	int on, tty;
	int ncases, ndone;
	int nout[TPROG_NOUT];
	int nbacked;
	double t0, before_us, saved_us;
} aoe_tprog;

void aoe_tprog_init(aoe_tprog *p, int on, int ncases);
/* step: where the case is, e.g. "trial 3/12". */
void aoe_tprog_update(aoe_tprog *p, const char *what, const char *step,
    double gain, double eta_s);
void aoe_tprog_case(aoe_tprog *p, const char *what, const char *outcome,
    double before_us, double after_us, int trials, double spent_s,
    double eta_s);
/*
 * A case that aoe_tprog_case counted as an add or update and a later
 * check backed out: the summary counts it as its new outcome, without
 * the time it would have saved.
 */
void aoe_tprog_backout(aoe_tprog *p, const char *was, const char *now,
    double before_us, double after_us);
/*
 * A case counted as was that now counts as now (either NULL for none),
 * and saved_us more saved in all.
 */
void aoe_tprog_recount(aoe_tprog *p, const char *was, const char *now,
    double saved_us);
void aoe_tprog_end(aoe_tprog *p, const char *what);
void aoe_tprog_note(aoe_tprog *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
