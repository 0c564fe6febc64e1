/*
 * bank.h - the bank's lookups that graph preparation makes, for
 * libaoe's own files.  Not installed.
 */
#ifndef AOE_BANK_INT_H
#define AOE_BANK_INT_H

#include "aoe_bank.h"
#include "passes.h"

/*
 * The lookup aoe_graph_prepare() makes for each node: an entry for the
 * node's canonical signature on this soc_version, at the node's own
 * thread count or else nthreads, fills s and returns 1, else 0; see
 * aoe_bank_find() below.
 */
int aoe_bank_lookup(const aoe_graph *g, const aoe_node *n, int nthreads,
    aoe_sched *s);
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
/* Entries indexed for lookup (loads the banks). */
size_t aoe_bank_loaded_entries(void);

#endif
