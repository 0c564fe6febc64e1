/*
 * aoe_base.h - libaoe's bottom layer: the exit-status table, errors, messages,
 * allocation, number parsing, files written whole, the clock, the input
 * loop, CPU detection, hashes and the thread pool.  It calls nothing
 * else in libaoe.
 */
#ifndef AOE_BASE_H
#define AOE_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define AOE_VERSION "0.1.0"

/*
 * The exit-status table shared by every aoe tool (see aoe(7)).
 */
enum {
	AOE_EXIT_OK = 0,	/* success */
	AOE_EXIT_FALSE = 1,	/* a negative answer: differ, not ready */
	AOE_EXIT_USAGE = 2,	/* bad command line */
	AOE_EXIT_DATA = 3,	/* malformed or invalid input data */
	AOE_EXIT_UNSUP = 4,	/* valid input that aoe does not support */
	AOE_EXIT_IO = 5,	/* a file or system call failed */
	AOE_EXIT_NOMEM = 6,	/* out of memory or over a size limit */
	AOE_EXIT_INTERNAL = 7	/* a bug in aoe */
};

/*
 * Error codes returned (negated) by library functions.  Each maps to the
 * exit status with the same meaning through aoe_exit_status().
 */
enum {
	AOE_OK = 0,
	AOE_EDATA = 3,
	AOE_EUNSUP = 4,
	AOE_EIO = 5,
	AOE_ENOMEM = 6,
	AOE_EINTERNAL = 7
};

/* Set the calling thread's error message and return -code. */
int aoe_err(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The last message set by aoe_err() in this thread. */
const char *aoe_errmsg(void);
/* Map a negative library return value to an exit status. */
int aoe_exit_status(int rc);

/* Program name for messages, set by aoe_setprogname(argv[0]). */
void aoe_setprogname(const char *argv0);
const char *aoe_progname(void);
/* Print "prog: message" (and ": strerror(errno)" for warn) to stderr. */
void aoe_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void aoe_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Allocation that aborts the program on failure (for small metadata). */
void *aoe_xmalloc(size_t n);
void *aoe_xcalloc(size_t n, size_t sz);
void *aoe_xrealloc(void *p, size_t n);
char *aoe_xstrdup(const char *s);

/*
 * Parse a decimal integer in [min, max]; the whole string must be a
 * number.  Returns 0, or -1 with errno set (EINVAL, ERANGE).
 */
int aoe_strtonum(const char *s, long long min, long long max,
    long long *out);

/*
 * A number given to option --opt, in [min, max]; anything else prints a
 * message and exits with AOE_EXIT_USAGE.  For tools' option parsing.
 */
long long aoe_optnum(const char *opt, const char *s, long long min,
    long long max);
/*
 * The settings (lib/base/settings.c), AOE's names: the defaults, then
 * aoe.ini ($AOE_INI, else ./aoe.ini when there is one), then the
 * environment, which wins.
 */
typedef struct aoe_settings {
	int tuning_parallel;	/* TUNING_PARALLEL_NUM, 1-64 (8) */
	int te_parallel;	/* TE_PARALLEL_COMPILER, 1-32 (8) */
	int te_parallel_given;	/* 1: TE_PARALLEL_COMPILER was set */
	int run_loop;		/* RUN_LOOP, 1-2048 (10) */
	int min_disk_gb;	/* AOE_MIN_DISK_GB, 0-1000000000 (20) */
	int repeat_tune;	/* REPEAT_TUNE: re-tune bank hits (0) */
	int static_memory;	/* GE_USE_STATIC_MEMORY (0) */
	int profiling;		/* PROFILING_MODE (0) */
	int mode;		/* AOE_MODE: 0 unset, 1, 2 or 4 */
	char work_path[1024];	/* AOE_WORK_PATH, else WORK_PATH (".") */
	char bank_path[1024];	/* TUNE_BANK_PATH, or "" */
	char soc_version[128];	/* AOE_SOC_VERSION, or "" */
	char ini[1024];		/* the aoe.ini read, or "" */
} aoe_settings;
/*
 * Load every setting.  aoe.ini's keys are WORK_PATH, TUNING_PARALLEL_NUM,
 * TE_PARALLEL_COMPILER and RUN_LOOP; the environment has those (with
 * AOE_WORK_PATH for WORK_PATH) and the rest.  A number out of range, a
 * REPEAT_TUNE that is neither True nor False, or an AOE_MODE other than
 * 1, 2 or 4 is -AOE_EDATA naming the setting, where it was read and what
 * is allowed; an AOE_INI that cannot be read is -AOE_EIO.  AOE_MODE=4 is
 * loaded: libaoe refuses it when a graph is captured.  A value that is
 * not on is off for GE_USE_STATIC_MEMORY and PROFILING_MODE, as the
 * runtime reads them.
 */
int aoe_settings_load(aoe_settings *s);
/*
 * The TE_PARALLEL_COMPILER the tuners use: as set, else the default (8)
 * or the online CPUs if fewer.
 */
int aoe_settings_te_parallel(const aoe_settings *s);
/*
 * A True/False value, in any case: 1 for true, 1, on or yes; 0 for false,
 * 0, off or no; -1 for anything else or NULL.
 */
int aoe_parse_bool(const char *v);
/* Whether an environment variable is on: true, 1, on or yes. */
int aoe_env_true(const char *name);
/* AOE_MODE: 0 when unset or empty, 1, 2 or 4, else -AOE_EDATA. */
int aoe_env_mode(void);
/*
 * An integer environment variable in [min, max]: 1 and *out set, 0 when it
 * is unset or empty, or -AOE_EDATA naming the variable.
 */
int aoe_envnum(const char *name, long long min, long long max, int *out);

/* Read a whole file ("-" is stdin) into memory; *len gets its size. */
int aoe_read_file(const char *path, uint8_t **data, size_t *len);

/*
 * An output file that is written whole or not at all: the data goes to a
 * temporary file beside the destination (".name.XXXXXX"), which
 * aoe_ofile_close() syncs, renames over the destination, and whose
 * directory it then syncs, so that a crash leaves the old file or the
 * new one.  NULL or "-" is stdout.  A destination that exists and is not a
 * regular file (/dev/null, a fifo, a terminal) is written in place, since
 * a rename would replace it.  On any failure the destination is left as
 * it was.
 */
typedef struct aoe_ofile {
	FILE *fp;
	char *path;	/* the destination; NULL for stdout */
	char *tmp;	/* the temporary file; NULL when written in place */
} aoe_ofile;

int aoe_ofile_open(aoe_ofile *o, const char *path);
int aoe_ofile_close(aoe_ofile *o);
void aoe_ofile_abort(aoe_ofile *o);

/* Monotonic clock in microseconds. */
double aoe_now_us(void);

/* A thread count: n when positive, else the online CPUs (at least 1). */
int aoe_nthreads(int n);


/*
 * The shared input loop (as mblaze's): call fn for each operand, or for
 * "-" (stdin) when there are none.  Returns the worst status fn returned.
 */
int aoe_each_operand(int argc, char **argv, int (*fn)(const char *, void *),
    void *arg);


/* This host's soc_version, e.g. "GenuineIntel_f6_m85_x86-64-v4". */
const char *aoe_soc_version(void);
/* 1 if s is a safe soc_version (a file name of [A-Za-z0-9._-]). */
int aoe_soc_valid(const char *s);



#endif
