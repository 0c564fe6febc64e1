/*
 * aoe_bank.h - the knowledge bank: where banks live, the lookup of
 * operator and subgraph entries, and the aoe-bank commands.
 */
#ifndef AOE_BANK_H
#define AOE_BANK_H

#include "aoe_passes.h"

/*
 * The lookup aoe_graph_prepare() makes for each node: an entry for the
 * node's canonical signature on this soc_version, at the node's own
 * thread count or else nthreads, fills s and returns 1, else 0; see
 * aoe_bank_find() below.
 */
int aoe_bank_lookup(const aoe_graph *g, const aoe_node *n, int nthreads,
    aoe_sched *s);

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
/* Entries indexed for lookup (loads the banks). */
size_t aoe_bank_loaded_entries(void);

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

/*
 * The subgraph bank ($TUNE_BANK_PATH/graphs.jsonl, entries of this
 * soc_version), read once per process or again after
 * aoe_bank_graph_use(), which reads that file instead (NULL: the
 * default).  aoe_bank_graph_find() gives the decisions for a chain
 * signature (1 and d, else 0); aoe_bank_graph_entries() their count.
 */
void aoe_bank_graph_use(const char *file);
int aoe_bank_graph_find(const char *sig, aoe_sched *d);
int aoe_bank_graph_entries(void);

#endif
