/*
 * index.c - the lookup index libaoe uses when a model is prepared, for the
 * operator bank (ops.jsonl) and the subgraph bank (graphs.jsonl) alike:
 * the custom bank, then the built-in one.  Each file is mapped once per
 * process, its keys are indexed by one linear scan (the file is sorted),
 * and an entry is parsed only when a lookup's key hits it.  One mutex
 * guards both indexes.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bank.h"

typedef struct bidx {
	char path[PATH_MAX];
	const char *name;
	char *data;		/* the file, mapped read-only */
	size_t len;
	size_t n;
	uint64_t *keys;
	const char **lines;	/* each ends at a newline */
	int stale_warned;	/* of another kernel generation */
} bidx;

/* The custom and the built-in bank of one kind, loaded on first use. */
typedef struct bset {
	const char *file;	/* OPS_FILE or GRAPHS_FILE */
	const char *name[2];	/* for messages */
	int loaded;
	bidx b[2];
	int override;
	char over[2][PATH_MAX];
} bset;

static struct {
	pthread_mutex_t mu;
	bset ops, graphs;
	uint64_t warned[64];
	int nwarned;
} B = {
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.ops = { OPS_FILE, { "custom", "built-in" } },
	.graphs = { GRAPHS_FILE, { "custom subgraph", "built-in subgraph" } },
};

/* The key of the line l .. end (end is its newline). */
static int
scan_key(const char *l, const char *end, uint64_t *k)
{
	const char *p = l;

	while ((p = memmem(p, (size_t)(end - p), "\"key\"", 5)) != NULL) {
		const char *q = p + 5;
		char d[24];
		size_t n;
		while (q < end && (*q == ' ' || *q == '\t'))
			q++;
		if (q < end && *q == ':') {
			q++;
			while (q < end && (*q == ' ' || *q == '\t'))
				q++;
			if (q >= end || *q != '"')
				return -1;
			for (n = 0, q++; q + n < end && q[n] >= '0' &&
			    q[n] <= '9'; n++)
				;
			if (n == 0 || n > 20 || q + n >= end || q[n] != '"')
				return -1;
			memcpy(d, q, n);
			d[n] = '\0';
			return aoe_bank_parse_key(d, k);
		}
		p += 5;
	}
	return -1;
}

typedef struct kl {
	uint64_t k;
	const char *l;
} kl;

static int
cmp_kl(const void *a, const void *b)
{
	const kl *x = a, *y = b;

	return x->k < y->k ? -1 : x->k > y->k;
}

/*
 * Index a bank file: mapped, not read, so that loading costs a scan of
 * the keys and no copy; a writer's rename leaves the mapped file intact.
 */
static void
idx_load(bidx *b, const char *path, const char *name)
{
	size_t len, i, cap = 0, bad = 0;
	const char *p, *nl;
	struct stat st;
	void *data;
	int sorted = 1, fd;

	memset(b, 0, sizeof(*b));
	b->name = name;
	snprintf(b->path, sizeof(b->path), "%s", path);
	if (access(path, F_OK) != 0)
		return;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 ||
	    fstat(fd, &st) < 0) {
		aoe_warnx("%s bank ignored: cannot open '%s': %s", name, path,
		    strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	if (!S_ISREG(st.st_mode) || st.st_size == 0) {
		if (!S_ISREG(st.st_mode))
			aoe_warnx("%s bank ignored: '%s' is not a regular "
			    "file", name, path);
		close(fd);
		return;
	}
	len = (size_t)st.st_size;
	data = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	close(fd);
	if (data == MAP_FAILED) {
		aoe_warnx("%s bank ignored: cannot read '%s': %s", name, path,
		    strerror(errno));
		return;
	}
	b->data = data;
	b->len = len;
	for (p = b->data; p < b->data + len; p = nl + 1) {
		uint64_t k;
		if ((nl = memchr(p, '\n', (size_t)(b->data + len - p))) ==
		    NULL) {
			bad++;	/* a truncated last line is not an entry */
			break;
		}
		if (scan_key(p, nl, &k) < 0) {
			bad++;
			continue;
		}
		if (b->n == cap) {
			cap = cap ? cap * 2 : 1024;
			b->keys = aoe_xrealloc(b->keys, cap * sizeof(uint64_t));
			b->lines = aoe_xrealloc(b->lines, cap * sizeof(char *));
		}
		if (b->n && k <= b->keys[b->n - 1])
			sorted = 0;
		b->keys[b->n] = k;
		b->lines[b->n++] = p;
	}
	if (bad)
		aoe_warnx("%s bank '%s': %zu malformed lines ignored (run "
		    "aoe-bank verify)", name, path, bad);
	if (!sorted) {
		kl *v = aoe_xcalloc(b->n, sizeof(kl));
		for (i = 0; i < b->n; i++) {
			v[i].k = b->keys[i];
			v[i].l = b->lines[i];
		}
		qsort(v, b->n, sizeof(kl), cmp_kl);
		for (i = 0; i < b->n; i++) {
			b->keys[i] = v[i].k;
			b->lines[i] = v[i].l;
		}
		free(v);
		aoe_warnx("%s bank '%s' is not sorted (run aoe-bank verify)",
		    name, path);
	}
}

static void
idx_free(bidx *b)
{
	if (b->data)
		munmap(b->data, b->len);
	free(b->keys);
	free(b->lines);
	memset(b, 0, sizeof(*b));
}

static void
bset_load_locked(bset *s)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];
	int graphs = s == &B.graphs;

	if (s->loaded)
		return;
	if (s->override) {
		idx_load(&s->b[0], s->over[0], s->name[0]);
		idx_load(&s->b[1], s->over[1], s->name[1]);
	} else {
		if (aoe_bank_dir(graphs, NULL, dir, sizeof(dir)) < 0) {
			aoe_warnx("%s bank ignored: %s", s->name[0],
			    aoe_errmsg());
			dir[0] = '\0';
		}
		snprintf(path, sizeof(path), "%s/%s", dir, s->file);
		idx_load(&s->b[0], dir[0] ? path : "", s->name[0]);
		snprintf(path, sizeof(path), "%s/%s/%s", aoe_bank_builtin_dir(),
		    aoe_soc_version(), s->file);
		idx_load(&s->b[1], path, s->name[1]);
	}
	s->loaded = 1;
}

/* Read these files on the next lookup (NULL, NULL: the defaults). */
static void
bset_use(bset *s, const char *custom, const char *builtin)
{
	pthread_mutex_lock(&B.mu);
	idx_free(&s->b[0]);
	idx_free(&s->b[1]);
	s->loaded = 0;
	B.nwarned = 0;
	s->override = custom || builtin;
	snprintf(s->over[0], PATH_MAX, "%s", custom ? custom : "");
	snprintf(s->over[1], PATH_MAX, "%s", builtin ? builtin : "");
	pthread_mutex_unlock(&B.mu);
}

static size_t
bset_entries(bset *s)
{
	size_t n;

	pthread_mutex_lock(&B.mu);
	bset_load_locked(s);
	n = s->b[0].n + s->b[1].n;
	pthread_mutex_unlock(&B.mu);
	return n;
}

/* Warn once per key (under B.mu). */
static void
warn_once(uint64_t key, const char *fmt, const char *a, const char *b)
{
	int i;

	for (i = 0; i < B.nwarned; i++)
		if (B.warned[i] == key)
			return;
	if (B.nwarned < 64)
		B.warned[B.nwarned++] = key;
	aoe_warnx(fmt, a, (unsigned long long)key, b);
}

/*
 * Look sig up: the custom bank, then the built-in one, each entry of
 * sig's key in turn (a valid bank has one).  An entry applies when it is
 * of this soc_version, its signature is sig and its schedule is valid;
 * one that does not is ignored with a warning.  With valid set, a valid
 * schedule is also one that valid(arg, ...) accepts.  node names
 * the lookup in the warnings ("" for none).  1 and s filled on a hit
 * (*from the bank's name), else 0 (*from "miss", "collision" or
 * "illegal").
 */
static int
bset_find(bset *set, const char *sig, const char *node, aoe_sched *s,
    int (*valid)(void *, const aoe_sched *, char *, size_t), void *arg,
    const char **from)
{
	char why[256], what[300];
	uint64_t key = aoe_op_key(sig);
	int64_t gen;
	int i, hit = 0;

	if (from)
		*from = "miss";
	snprintf(what, sizeof(what), node[0] ? " for node '%s'" : "%s", node);
	pthread_mutex_lock(&B.mu);
	bset_load_locked(set);
	for (i = 0; i < 2 && !hit; i++) {
		bidx *b = &set->b[i];
		size_t lo = 0, hi = b->n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (b->keys[mid] < key)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; !hit && lo < b->n && b->keys[lo] == key; lo++) {
			const char *l = b->lines[lo], *es, *soc;
			cJSON *j;
			if ((j = cJSON_ParseWithLength(l, (size_t)((const
			    char *)memchr(l, '\n', (size_t)(b->data + b->len -
			    l)) - l))) == NULL) {
				warn_once(key, "%s bank: entry %llu is "
				    "malformed; ignored%s", b->name, "");
				continue;
			}
			es = bank_jstr(j, "signature");
			soc = bank_jstr(j, "soc_version");
			if (soc == NULL || strcmp(soc,
			    aoe_soc_version()) != 0) {
				warn_once(key, "%s bank: entry %llu is for "
				    "another soc_version; ignored%s", b->name,
				    "");
			} else if (bank_kernels_gen(j, 1, &gen, NULL, 0) < 0 ||
			    gen != AOE_KERNELS_GEN) {
				/* Once a bank: a stale bank has many. */
				if (!b->stale_warned)
					aoe_warnx("%s bank: entries measured "
					    "under another kernel generation "
					    "(this aoe's is %d) are ignored, "
					    "entry %llu the first; tune again "
					    "or drop them (aoe-bank prune "
					    "--stale)", b->name,
					    AOE_KERNELS_GEN,
					    (unsigned long long)key);
				b->stale_warned = 1;
				if (from)
					*from = "stale";
			} else if (es == NULL || strcmp(es, sig) != 0) {
				warn_once(key, "%s bank: entry %llu has "
				    "another signature (a hash collision)%s; "
				    "ignored", b->name, what);
				if (from)
					*from = "collision";
			} else if (aoe_sched_from_json(
			    cJSON_GetObjectItemCaseSensitive(j, "schedule"),
			    s, why, sizeof(why)) < 0) {
				warn_once(key, "%s bank: entry %llu: %s; "
				    "ignored", b->name, why);
			} else if (valid && valid(arg, s, why, sizeof(why)) <
			    0) {
				/* A kernel never sees a schedule off its space. */
				char msg[600];
				snprintf(msg, sizeof(msg), "%s: illegal schedule: "
				    "%s", what, why);
				warn_once(key, "%s bank: entry %llu%s; ignored",
				    b->name, msg);
				memset(s, 0, sizeof(*s));
				if (from)
					*from = "illegal";
			} else {
				hit = 1;
				if (from)
					*from = b->name;
			}
			cJSON_Delete(j);
		}
	}
	pthread_mutex_unlock(&B.mu);
	return hit;
}

void
aoe_bank_use(const char *custom, const char *builtin)
{
	bset_use(&B.ops, custom, builtin);
}

size_t
aoe_bank_loaded_entries(void)
{
	return bset_entries(&B.ops);
}

/* The node an operator entry is for. */
typedef struct node_of {
	const aoe_graph *g;
	const aoe_node *n;
} node_of;

/*
 * Whether s is a point of the node's search space, for this CPU; a node
 * without a space takes no knobs.  Built only for an entry that matches,
 * so that a miss costs no space.
 */
static int
in_space(void *arg, const aoe_sched *s, char *why, size_t len)
{
	const node_of *nn = arg;
	aoe_space sp;

	if (aoe_space_for(nn->g, nn->n, &sp) < 0) {
		memset(&sp, 0, sizeof(sp));
		snprintf(sp.op_type, sizeof(sp.op_type), "%s",
		    nn->n->op_type);
	}
	return aoe_space_validate(&sp, s, why, len);
}

int
aoe_bank_find(const aoe_graph *g, const aoe_node *n, int nthreads,
    aoe_sched *s, const char **from)
{
	node_of nn = { g, n };
	char *sig;
	int hit;

	if (from)
		*from = "miss";
	sig = aoe_xmalloc(65536);
	if (aoe_op_signature(g, n, nthreads, sig, 65536) < 0) {
		free(sig);
		return 0;
	}
	hit = bset_find(&B.ops, sig, n->name, s, in_space, &nn, from);
	free(sig);
	return hit;
}

/*
 * The lookup aoe_graph_prepare() makes.  The thread count is the node's
 * own (a subgraph decision), else the run's, else the number of online
 * CPUs.
 */
int
aoe_bank_lookup(const aoe_graph *g, const aoe_node *n, int nthreads,
    aoe_sched *s)
{
	return aoe_bank_find(g, n, aoe_nthreads(n->nthreads > 0 ?
	    n->nthreads : nthreads), s, NULL);
}


void
aoe_bank_graph_use(const char *file)
{
	bset_use(&B.graphs, file, NULL);
}

/* Whether d is a point of the chain's decision space. */
static int
in_dspace(void *arg, const aoe_sched *d, char *why, size_t len)
{
	return bank_check_decisions(arg, d, why, len) < 0 ? -AOE_EDATA : 0;
}

int
aoe_bank_graph_find(const char *sig, aoe_sched *d)
{
	return bset_find(&B.graphs, sig, "", d, in_dspace, (void *)sig,
	    NULL);
}

int
aoe_bank_graph_entries(void)
{
	size_t n = bset_entries(&B.graphs);

	return n > INT_MAX ? INT_MAX : (int)n;
}
