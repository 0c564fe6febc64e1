/*
 * bank.h - the bank's internals, for libaoe's own files (and its
 * white-box tests): the lookups that graph preparation makes (index.c);
 * entries and the checking reader of a bank file (entry.c); the lock,
 * the k-way merge and the atomic writer of a bank (store.c), which the
 * commands (cmd.c, archive.c) share.  Not installed.
 */
#ifndef AOE_BANK_INT_H
#define AOE_BANK_INT_H

#include <cjson/cJSON.h>

#include "aoe_bank.h"
#include "passes.h"

/*
 * The lookup aoe_graph_prepare() makes for each node: an entry for the
 * node's canonical signature on this soc_version, at the node's own
 * thread count or else nthreads, fills s and returns 1, else 0; see
 * aoe_bank_find().
 */
int aoe_bank_lookup(const aoe_graph *g, const aoe_node *n, int nthreads,
    aoe_sched *s);
/*
 * The subgraph bank: graphs.jsonl in the custom bank directory, then in
 * the built-in one's soc_version directory, indexed and looked up as the
 * operator bank is (entries of another soc_version or whose signature is
 * not the chain's are ignored).  aoe_bank_graph_use() reads that file
 * instead of the custom one, and no built-in one (NULL: the defaults),
 * on the next lookup.  aoe_bank_graph_find() gives the decisions for a
 * chain signature (1 and d, else 0); aoe_bank_graph_entries() the number
 * of entries indexed.
 */
void aoe_bank_graph_use(const char *file);
int aoe_bank_graph_find(const char *sig, aoe_sched *d);
int aoe_bank_graph_entries(void);

/* Entries indexed for lookup (loads the banks). */
size_t aoe_bank_loaded_entries(void);

#define OPS_FILE "ops.jsonl"
#define GRAPHS_FILE "graphs.jsonl"

/* A checked entry: the fields point into j, j was parsed from line. */
typedef struct ent {
	uint64_t key;
	cJSON *j;
	const char *op_type, *sig, *soc, *when, *tver;
	int64_t kgen;		/* "kernels", 1 when absent */
	double time_us, base_us;
	char *line;		/* the entry's text, without the newline */
} ent;

const char *bank_jstr(const cJSON *o, const char *name);
int bank_is_dir(const char *path);
/*
 * o's "kernels" (AOE_KERNELS_GEN), def when absent; -1 with why (when
 * not NULL) when malformed.
 */
int bank_kernels_gen(const cJSON *o, int64_t def, int64_t *gen, char *why,
    size_t wl);
/* Whether e was measured under another kernel generation than this aoe's. */
static inline int
bank_ent_stale(const ent *e)
{
	return e->kgen != AOE_KERNELS_GEN;
}
/* A number >= 0 named name in o: 0 and *v, or -1 with why. */
int bank_num_field(const cJSON *o, const char *name, double *v, char *why,
    size_t wl);
/* Parse and check one entry (line is kept); 0, or -1 with why. */
int bank_parse_entry(char *line, ent *e, char *why, size_t wl);
/*
 * Whether e's schedule lies in its search space, rebuilt from its
 * signature (aoe_space_check_sig()), or a subgraph entry's decisions in
 * theirs; 0, or -1 with why naming key, op and knob.
 */
int bank_check_sched(const ent *e, char *why, size_t wl);
/* A subgraph's decisions d for chain signature sig; 0, or -1 with why. */
int bank_check_decisions(const char *sig, const aoe_sched *d, char *why,
    size_t wl);
/* The public view of e. */
void bank_entry_view(const ent *e, aoe_bank_entry *v);

/*
 * A streaming reader of a bank file that checks every line, the order
 * of the keys and the soc_version.  After an error it may go on (verify
 * does), so that every bad line is reported.
 */
typedef struct rdr {
	const char *path;
	FILE *fp;
	char *buf;
	size_t cap;
	long lineno;
	int started;
	uint64_t prev;
	char *soc;		/* the soc_version every entry must have */
	size_t soclen;
	int fixed;		/* soc was set by the caller */
	int check;		/* check each schedule (bank_check_sched) */
	ent e;
	int valid;		/* e holds an entry */
} rdr;

/*
 * Open path ("-" is stdin); a missing file is empty when optional.  soc
 * is the soc_version the entries must have, or "" to take the first
 * entry's (written back into soc).
 */
int bank_rdr_open(rdr *r, const char *path, char *soc, size_t soclen,
    int optional);
void bank_rdr_close(rdr *r);
/* 1: r->e is the next entry; 0: end of file; < 0: a bad line. */
int bank_rdr_next(rdr *r);

/*
 * Take the bank directory's lock (creating the directory); fd or < 0.
 * With the lock held, temporary files that killed writers left behind
 * are removed.
 */
int bank_lock(const char *dir);
void bank_unlock(int fd);
int bank_put_line(FILE *fp, const char *line);

/*
 * The k-way merge shared by commit, merge and import: sources are readers
 * or sorted arrays; equal keys are resolved by policy.  Counts are
 * relative to source 0, the bank being written.
 */
typedef struct src {
	rdr r;
	ent *arr;
	size_t n, i;
	ent *cur;
	int isarr;
} src;

int bank_merge_sources(src *in, int k, int policy, FILE *out,
    aoe_bank_counts *c);
/*
 * Merge the sources into the bank file under its lock (o->dry_run: count
 * only), the bank being source 0; c->file is set to file.
 */
int bank_write(const aoe_bank_opts *o, const char *dir, const char *file,
    char *soc, size_t soclen, src *extra, int nextra, int policy,
    aoe_bank_counts *c);
/*
 * An operand naming a bank: a directory stands for its bank file
 * (ops.jsonl, or graphs.jsonl with o->graphs); file gets PATH_MAX bytes.
 */
void bank_operand_file(const aoe_bank_opts *o, const char *path,
    char *file);
/* The soc_version a bank written by a command must hold ("" if open). */
void bank_soc(const aoe_bank_opts *o, char *soc, size_t len);

/*
 * Temporary files a command is writing outside the bank's directory (an
 * import's extracted files, merge -o's and export's output), removed
 * when SIGINT, SIGTERM or SIGHUP kills the command: bank_tmp_guard()
 * adds one (at most 4; the path must outlive the guard) and installs
 * the handlers, bank_tmp_unguard() forgets them all and restores the
 * handlers.
 */
void bank_tmp_guard(const char *path);
void bank_tmp_unguard(void);

#endif
