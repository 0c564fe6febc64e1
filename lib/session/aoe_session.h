/*
 * aoe_session.h - libaoe's session API, the interface for programs that
 * embed libaoe (installed; pkg-config aoe; see aoe_session_open(3)).
 *
 * A session is one model, opened from a file or from memory, run any
 * number of times.  Every input shape combination a run brings is
 * prepared once (shape inference, the subgraph and operator banks looked
 * up for that shape, kernels, memory) and kept in a cache of bounded
 * size, least recently used out.  With AOE_MODE=1 or 2 in the
 * environment every shape prepared is handed to the tuning tools, as
 * aoe-run(1) does.
 *
 * Functions return 0 (or a count), or a negative AOE_E* code; the
 * calling thread's aoe_errmsg() then says why.
 */
#ifndef AOE_SESSION_H
#define AOE_SESSION_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AOE_SESSION_API 1	/* this header's version */
#define AOE_SESSION_MAXDIM 8	/* the largest rank a tensor has */

/*
 * Element types: ONNX's TensorProto.DataType codes.  (Those of aoe.h,
 * under other names, so that the two headers go together.)
 */
#define AOE_TYPE_FLOAT	1
#define AOE_TYPE_UINT8	2
#define AOE_TYPE_INT8	3
#define AOE_TYPE_INT32	6
#define AOE_TYPE_INT64	7
#define AOE_TYPE_BOOL	9
#define AOE_TYPE_FLOAT16 10
#define AOE_TYPE_DOUBLE	11

/* Error codes, returned negated; the exit statuses of aoe(7). */
#ifndef AOE_BASE_H
enum {
	AOE_OK = 0,
	AOE_EDATA = 3,		/* malformed or invalid input */
	AOE_EUNSUP = 4,		/* valid input that aoe does not support */
	AOE_EIO = 5,		/* a file or system call failed */
	AOE_ENOMEM = 6,		/* out of memory or over a size limit */
	AOE_EINTERNAL = 7	/* a bug in aoe */
};
#endif

typedef struct aoe_session aoe_session;

typedef struct aoe_session_options {
	int nthreads;		/* threads a run uses; 0: the online CPUs */
	int use_bank;		/* 1 (the default): schedules from banks */
	const char *bank_path;	/* as TUNE_BANK_PATH; NULL: the default */
	int cache_size;		/* shapes kept prepared, 1-1024 (8) */
	int profile;		/* 1: time every node (aoe_session_profile) */
} aoe_session_options;

/* A model's input or output as the model declares it. */
typedef struct aoe_tensor_info {
	const char *name;	/* valid while the session is open */
	int dtype;		/* AOE_TYPE_* */
	int ndim;		/* -1: the rank is unknown */
	int64_t dims[AOE_SESSION_MAXDIM];	/* -1: a dynamic dimension */
	const char *dim_names[AOE_SESSION_MAXDIM];	/* its name, or NULL */
} aoe_tensor_info;

/* A tensor handed to or returned by a run. */
typedef struct aoe_value {
	int dtype;
	int ndim;
	int64_t dims[AOE_SESSION_MAXDIM];
	void *data;		/* row-major elements */
	size_t nbytes;		/* the bytes at data */
	int lib_owned;		/* 1: data is libaoe's; aoe_value_free() */
} aoe_value;

/* What a session has done (aoe_session_stats). */
typedef struct aoe_session_stats {
	long runs;		/* runs that succeeded */
	long prepares;		/* shape combinations prepared */
	long hits;		/* runs that found their shape prepared */
	long evictions;		/* prepared shapes dropped for the bound */
	int cached;		/* shapes prepared now */
	int bank_nodes;		/* of the last shape run: nodes whose */
	int nodes;		/* schedule came from a bank, of all */
} aoe_session_stats;

void aoe_session_options_init(aoe_session_options *o);
int aoe_session_open(const char *path, const aoe_session_options *o,
    aoe_session **sp);
int aoe_session_open_buffer(const void *buf, size_t len,
    const aoe_session_options *o, aoe_session **sp);
void aoe_session_close(aoe_session *s);

int aoe_session_ninputs(const aoe_session *s);
int aoe_session_noutputs(const aoe_session *s);
int aoe_session_input(const aoe_session *s, int i, aoe_tensor_info *info);
int aoe_session_output(const aoe_session *s, int i, aoe_tensor_info *info);

int aoe_session_run(aoe_session *s, const aoe_value *inputs,
    aoe_value *outputs);
void aoe_value_free(aoe_value *v);

int aoe_session_stats_get(const aoe_session *s, aoe_session_stats *st);
int aoe_session_profile(aoe_session *s, FILE *fp);

/* The calling thread's last error message. */
const char *aoe_errmsg(void);
/* A dtype's name ("float32", "int64"), or "unknown". */
const char *aoe_dtype_name(int dtype);
/* libaoe's version, e.g. "0.1.0". */
const char *aoe_version(void);

#ifdef __cplusplus
}
#endif

#endif
