/*
 * aoe_bank.h - the knowledge bank: where banks live, the lookup of
 * operator and subgraph entries, and the aoe-bank commands.
 */
#ifndef AOE_BANK_H
#define AOE_BANK_H

#include "aoe_runtime.h"


/*
 * The custom bank directory: operators $TUNE_BANK_PATH/<soc> (graphs:
 * $TUNE_BANK_PATH), else under $HOME/Ascend/latest/data/aoe/custom/.
 * soc NULL means this host's.  -AOE_EIO if TUNE_BANK_PATH is not an
 * existing writable directory.
 */
int aoe_bank_dir(int graphs, const char *soc, char *buf, size_t len);
/* The built-in banks: $AOE_BUILTIN_BANK or PREFIX/share/aoe/bank. */
const char *aoe_bank_builtin_dir(void);
/*
 * Look a node up at a thread count: custom bank, then built-in.  1 and
 * s filled on a hit (*from "custom" or "built-in"), else 0 (*from "miss"
 * or "collision").  The banks are read once per process.
 */
int aoe_bank_find(const aoe_graph *g, const aoe_node *n, int nthreads,
    aoe_sched *s, const char **from);
/* Use these bank files instead of the defaults (NULL, NULL: defaults). */
void aoe_bank_use(const char *custom_file, const char *builtin_file);

enum { AOE_MERGE_FASTEST, AOE_MERGE_NEWEST, AOE_MERGE_OURS,
	AOE_MERGE_THEIRS };
typedef struct aoe_bank_opts {
	const char *bank;	/* --bank: directory or file; NULL: default */
	const char *soc;	/* --soc-version; NULL: this host's */
	int graphs;		/* --graphs: the subgraph bank */
	int policy;		/* --policy, AOE_MERGE_* */
	const char *output;	/* --output */
	int jsonl;		/* --jsonl */
	int dry_run;		/* --dry-run */
	int quiet;		/* --quiet */
	int64_t max_size;	/* --max-size: import limit per member */
	const char *op_type;	/* --op-type */
	double older_than_days;	/* --older-than; < 0 unset */
	const char *tool_version;	/* --tool-version */
	int no_gain;		/* --no-gain */
	int threads;		/* --threads (lookup) */
} aoe_bank_opts;
void aoe_bank_opts_init(aoe_bank_opts *o);
/*
 * The aoe-bank commands.  Each returns 0, 1 for a negative answer (diff:
 * the banks differ; show: a key is missing), or a negative error.
 */
int aoe_bank_commit(const aoe_bank_opts *o, int argc, char **argv);
int aoe_bank_merge(const aoe_bank_opts *o, int argc, char **argv);
int aoe_bank_diff(const aoe_bank_opts *o, int argc, char **argv);
int aoe_bank_export(const aoe_bank_opts *o, int argc, char **argv);
int aoe_bank_import(const aoe_bank_opts *o, int argc, char **argv);
int aoe_bank_verify(const aoe_bank_opts *o, int argc, char **argv);
int aoe_bank_prune(const aoe_bank_opts *o, int argc, char **argv);
int aoe_bank_show(const aoe_bank_opts *o, int argc, char **argv);
int aoe_bank_list(const aoe_bank_opts *o, int argc, char **argv);
int aoe_bank_stats(const aoe_bank_opts *o, int argc, char **argv);
/* The bank file a command works on (see aoe-bank(1)'s --bank). */
int aoe_bank_target(const aoe_bank_opts *o, char *dir, char *file);


#endif
