/*
 * aoe_bank.h - the knowledge bank: where banks live, the lookup of
 * operator and subgraph entries, and what the aoe-bank commands compute
 * (aoe-bank(1) prints it).
 */
#ifndef AOE_BANK_H
#define AOE_BANK_H

#include <limits.h>

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
	int stale;		/* --stale: of another kernel generation */
	int threads;		/* --threads (lookup) */
} aoe_bank_opts;
void aoe_bank_opts_init(aoe_bank_opts *o);
/* The bank file a command works on (see aoe-bank(1)'s --bank). */
int aoe_bank_target(const aoe_bank_opts *o, char *dir, char *file);
/* A key as written in a bank: decimal, unsigned 64-bit; 0 or -1. */
int aoe_bank_parse_key(const char *s, uint64_t *key);

/*
 * What a command did to or found in a bank.  The counts of a write are
 * relative to the bank written: an entry is added (new to it), updated
 * (replacing its entry), kept (its entry stayed over another's), or
 * ignored as a key collision.
 */
typedef struct aoe_bank_counts {
	char file[PATH_MAX];	/* the bank file written or read */
	char soc[128];		/* its soc_version; "" when not fixed */
	long added, updated, kept, collisions;
	long skipped;		/* commit: records not admitted */
	long removed;		/* prune: entries dropped */
	long read;		/* entries read (import, export, verify) */
	long total;		/* entries in the file written */
} aoe_bank_counts;

/* One bank entry as a command hands it out (valid during the call). */
typedef struct aoe_bank_entry {
	uint64_t key;
	const char *op_type;	/* or the subgraph's name */
	const char *signature;
	const char *soc_version, *tool_version, *measured_at;
	double time_us, baseline_us;
	const char *line;	/* the entry as stored, without the newline */
} aoe_bank_entry;
typedef void (*aoe_bank_entry_fn)(void *arg, const aoe_bank_entry *e);

/*
 * commit: tuning records into the banks, as aoe-bank commit.  A batch
 * holds the entries of admitted records (outcome add or update); a
 * record of another outcome, or aoe-sgat's model record, is skipped.
 * aoe_bank_batch_add() returns 0 (held), 1 (skipped) or -AOE_EDATA with
 * why.  aoe_bank_batch_commit() checks the held entries (records of one
 * key with two signatures are a collision, refused before anything is
 * written), then merges them, the fastest of each key winning, into the
 * operator bank and the subgraph bank under each one's lock, written
 * atomically.  c[0] is the operator bank's counts, c[1] the subgraph
 * bank's; a bank not written has file "".  The operator bank is written
 * also when no record was admitted, so that its counts say so.
 */
struct cJSON;
typedef struct aoe_bank_batch aoe_bank_batch;
aoe_bank_batch *aoe_bank_batch_new(const aoe_bank_opts *o);
int aoe_bank_batch_add(aoe_bank_batch *b, const struct cJSON *rec,
    char *why, size_t wl);
int aoe_bank_batch_commit(aoe_bank_batch *b, aoe_bank_counts c[2]);
void aoe_bank_batch_free(aoe_bank_batch *b);
/*
 * The same for n records at once; a bad one fails the commit with
 * "record i: why" (i from 1) and no bank written.
 */
int aoe_bank_commit_records(const aoe_bank_opts *o,
    const struct cJSON *const *recs, int n, aoe_bank_counts c[2]);
/*
 * The line a tool prints for a bank a commit wrote: "file: 4 added, 0
 * updated, 0 kept (not faster), 0 collisions, 10 records skipped; 4
 * entries".
 */
void aoe_bank_commit_line(const aoe_bank_counts *c, char *buf, size_t len);

/*
 * merge: the banks into the bank (which is "ours", the first source) or
 * into o->output.
 */
int aoe_bank_merge(const aoe_bank_opts *o, int n, char **banks,
    aoe_bank_counts *c);
/*
 * diff: fn gets each change in key order: "added" (a NULL), "removed"
 * (b NULL) or "changed".  1 when the banks differ, 0 when not.
 */
typedef void (*aoe_bank_change_fn)(void *arg, const char *change,
    const aoe_bank_entry *a, const aoe_bank_entry *b);
int aoe_bank_diff(const aoe_bank_opts *o, const char *bank1,
    const char *bank2, aoe_bank_change_fn fn, void *arg);
/* export: the bank (NULL: o's) to the archive o->output. */
int aoe_bank_export(const aoe_bank_opts *o, const char *bank,
    aoe_bank_counts *c);
/* import: an archive into the bank; c->read is the archive's entries. */
int aoe_bank_import(const aoe_bank_opts *o, const char *archive,
    aoe_bank_counts *c);
/*
 * verify: check every line of a bank (NULL: o's; either way of this
 * host's soc_version unless o->soc or o->graphs says otherwise), each
 * schedule in the space rebuilt from its signature.  Each bad
 * line's message goes to bad; the first 20 are reported, then the check
 * gives up.  0 and c->read entries, or -AOE_EDATA ("N bad lines").
 */
int aoe_bank_verify(const aoe_bank_opts *o, const char *bank,
    void (*bad)(void *arg, const char *msg), void *arg, aoe_bank_counts *c);
/*
 * prune: drop the entries o's --op-type, --older-than, --tool-version or
 * --no-gain match; fn (when not NULL) gets each one.  With o->dry_run the
 * bank is not written.  c->removed and c->total (the entries kept).
 */
int aoe_bank_prune(const aoe_bank_opts *o, aoe_bank_entry_fn fn, void *arg,
    aoe_bank_counts *c);
/*
 * show: fn gets each entry of o's bank once for each of keys that is its
 * key; the number of those calls, or < 0.
 */
int aoe_bank_show(const aoe_bank_opts *o, const uint64_t *keys, int nk,
    aoe_bank_entry_fn fn, void *arg);
/* list: each entry of a bank (NULL: o's), of o->op_type if set. */
int aoe_bank_list(const aoe_bank_opts *o, const char *bank,
    aoe_bank_entry_fn fn, void *arg);
/* stats: a bank's (NULL: o's) entries and gains, by op type. */
typedef struct aoe_bank_stats {
	char file[PATH_MAX];	/* "<stdin>" for "-" */
	char soc[128];		/* "" for an empty bank */
	long entries, no_gain;
	long stale;		/* of another kernel generation */
	double mean_gain;	/* of (baseline - time) / baseline */
	int ntypes;
	struct aoe_bank_type_stats {
		char name[64];
		long n;
		double mean_gain;
	} *types;		/* in order of first appearance */
} aoe_bank_stats;
int aoe_bank_stats_of(const aoe_bank_opts *o, const char *bank,
    aoe_bank_stats *st);
void aoe_bank_stats_free(aoe_bank_stats *st);

#endif
