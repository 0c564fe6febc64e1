/*
 * session.c - the session API (aoe_session.h): a model opened once and
 * run many times, with every input shape combination prepared once and
 * kept in a bounded cache, least recently used out.
 *
 * The session keeps the model's bytes, not a graph: preparing a graph
 * rewrites it (folding, fusion, layout) for one shape, so each shape is
 * loaded afresh from the bytes, its inputs bound, and prepared as a run
 * prepares it (lib/engine/prepare.c: the banks are looked up for that
 * shape, and under AOE_MODE the graph is handed to the tuning tools).
 *
 * Runs of one session are serialised by its mutex, so that several
 * threads may run it at once; they run one at a time.  Everything the
 * info calls return is fixed when the session opens.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine.h"
#include "aoe_session.h"

#define CACHE_MAX 1024
#define CACHE_DEFAULT 8

/* One prepared shape combination. */
typedef struct shape_ent {
	int64_t *dims;		/* per input: its rank, then its dims */
	aoe_graph *g;
	unsigned long long used;	/* the clock of its last run */
} shape_ent;

struct aoe_session {
	pthread_mutex_t mu;
	uint8_t *model;		/* the model's bytes */
	size_t len;
	char *path;		/* the file it came from, or NULL */
	aoe_run_opts ro;
	int ninputs, noutputs;
	aoe_tensor_info *in, *out;
	aoe_graph *decl;	/* as loaded: the names info points into */
	int cap, n;
	shape_ent *cache;
	shape_ent *last;	/* the entry of the last run */
	unsigned long long clock;
	aoe_session_stats st;
};

const char *
aoe_version(void)
{
	return AOE_VERSION;
}

void
aoe_session_options_init(aoe_session_options *o)
{
	memset(o, 0, sizeof(*o));
	o->use_bank = 1;
	o->cache_size = CACHE_DEFAULT;
}

static void
info_of(const aoe_tensor *t, aoe_tensor_info *info)
{
	int d;

	memset(info, 0, sizeof(*info));
	info->name = t->name;
	info->dtype = t->dtype;
	info->ndim = t->ndim;
	for (d = 0; d < t->ndim && d < AOE_MAXDIM; d++) {
		info->dims[d] = t->dims[d];
		info->dim_names[d] = t->dims[d] < 0 ? t->dim_param[d] : NULL;
	}
}

/*
 * The bank path of the options, as TUNE_BANK_PATH: operator entries in
 * DIR/<soc_version>/ops.jsonl, subgraph entries in DIR/graphs.jsonl.
 * The banks are the process's, so the path is too.
 */
static int
use_bank_path(const char *dir)
{
	char ops[PATH_MAX], builtin[PATH_MAX], graphs[PATH_MAX];
	struct stat sb;

	if (stat(dir, &sb) < 0)
		return aoe_err(AOE_EIO, "bank path '%s': %s", dir,
		    strerror(errno));
	if (!S_ISDIR(sb.st_mode))
		return aoe_err(AOE_EIO, "bank path '%s' is not a directory",
		    dir);
	snprintf(builtin, sizeof(builtin), "%s/%s/ops.jsonl",
	    aoe_bank_builtin_dir(), aoe_soc_version());
	if (snprintf(ops, sizeof(ops), "%s/%s/ops.jsonl", dir,
	    aoe_soc_version()) >= (int)sizeof(ops) ||
	    snprintf(graphs, sizeof(graphs), "%s/graphs.jsonl", dir) >=
	    (int)sizeof(graphs))
		return aoe_err(AOE_EIO, "bank path '%s' is too long", dir);
	aoe_bank_use(ops, builtin);
	aoe_bank_graph_use(graphs);
	return 0;
}

/*
 * A session takes and gives tensors (aoe_value): a model whose inputs
 * or outputs are sequences, or whose inputs are optionals, is refused
 * here rather than misread at run time.  An optional output holding a
 * tensor is given when present (copy_outputs).
 */
static int
check_values(const aoe_graph *g)
{
	int i;

	for (i = 0; i < g->ninputs; i++) {
		const aoe_tensor *t = g->tensors[g->inputs[i]];
		if (aoe_is_value(t))
			return aoe_err(AOE_EUNSUP, "input '%s' is %s: a session "
			    "takes tensors only", t->name, t->vkind ==
			    AOE_V_SEQ ? "a sequence" : "an optional");
	}
	for (i = 0; i < g->noutputs; i++) {
		const aoe_tensor *t = g->tensors[g->outputs[i]];
		if (t->vkind == AOE_V_SEQ)
			return aoe_err(AOE_EUNSUP, "output '%s' is a sequence: "
			    "a session gives tensors only", t->name);
	}
	return 0;
}

static int
open_model(uint8_t *buf, size_t len, const char *path,
    const aoe_session_options *o, aoe_session **sp)
{
	aoe_session_options def;
	aoe_session *s;
	aoe_graph *g;
	int i, rc;

	*sp = NULL;
	if (o == NULL) {
		aoe_session_options_init(&def);
		o = &def;
	}
	if (o->nthreads < 0 || o->nthreads > 1024)
		rc = aoe_err(AOE_EDATA, "nthreads %d is out of range 0-1024",
		    o->nthreads);
	else if (o->cache_size < 0 || o->cache_size > CACHE_MAX)
		rc = aoe_err(AOE_EDATA, "cache_size %d is out of range 1-%d",
		    o->cache_size, CACHE_MAX);
	else if (o->bank_path && o->use_bank)
		rc = use_bank_path(o->bank_path);
	else
		rc = 0;
	if (rc < 0 || (rc = aoe_model_load_mem(buf, len, path, &g)) < 0) {
		free(buf);
		return rc;
	}
	if ((rc = check_values(g)) < 0) {
		aoe_graph_free(g);
		free(buf);
		return rc;
	}
	s = aoe_xcalloc(1, sizeof(*s));
	pthread_mutex_init(&s->mu, NULL);
	s->model = buf;
	s->len = len;
	s->path = path ? aoe_xstrdup(path) : NULL;
	s->decl = g;
	aoe_run_opts_init(&s->ro);
	if (o->nthreads > 0)
		s->ro.nthreads = o->nthreads;
	s->ro.use_bank = o->use_bank;
	s->ro.profile |= o->profile;
	s->cap = o->cache_size ? o->cache_size : CACHE_DEFAULT;
	s->cache = aoe_xcalloc((size_t)s->cap, sizeof(*s->cache));
	s->ninputs = g->ninputs;
	s->noutputs = g->noutputs;
	s->in = aoe_xcalloc((size_t)g->ninputs + 1, sizeof(*s->in));
	s->out = aoe_xcalloc((size_t)g->noutputs + 1, sizeof(*s->out));
	for (i = 0; i < g->ninputs; i++)
		info_of(g->tensors[g->inputs[i]], &s->in[i]);
	for (i = 0; i < g->noutputs; i++)
		info_of(g->tensors[g->outputs[i]], &s->out[i]);
	*sp = s;
	return 0;
}

int
aoe_session_open(const char *path, const aoe_session_options *o,
    aoe_session **sp)
{
	uint8_t *buf;
	size_t len;
	int rc;

	*sp = NULL;
	if (path == NULL)
		return aoe_err(AOE_EDATA, "no model path");
	if ((rc = aoe_read_file(path, &buf, &len)) < 0)
		return rc;
	return open_model(buf, len, path, o, sp);
}

int
aoe_session_open_buffer(const void *buf, size_t len,
    const aoe_session_options *o, aoe_session **sp)
{
	uint8_t *copy;

	*sp = NULL;
	if (buf == NULL || len == 0)
		return aoe_err(AOE_EDATA, "the model buffer is empty");
	copy = aoe_xmalloc(len);
	memcpy(copy, buf, len);
	return open_model(copy, len, NULL, o, sp);
}

static void
ent_clear(shape_ent *e)
{
	aoe_graph_free(e->g);
	free(e->dims);
	memset(e, 0, sizeof(*e));
}

void
aoe_session_close(aoe_session *s)
{
	int i;

	if (s == NULL)
		return;
	for (i = 0; i < s->n; i++)
		ent_clear(&s->cache[i]);
	free(s->cache);
	free(s->in);
	free(s->out);
	aoe_graph_free(s->decl);
	free(s->model);
	free(s->path);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

int
aoe_session_ninputs(const aoe_session *s)
{
	return s->ninputs;
}

int
aoe_session_noutputs(const aoe_session *s)
{
	return s->noutputs;
}

int
aoe_session_input(const aoe_session *s, int i, aoe_tensor_info *info)
{
	if (i < 0 || i >= s->ninputs)
		return aoe_err(AOE_EDATA, "input %d does not exist: the model "
		    "has %d", i, s->ninputs);
	*info = s->in[i];
	return 0;
}

int
aoe_session_output(const aoe_session *s, int i, aoe_tensor_info *info)
{
	if (i < 0 || i >= s->noutputs)
		return aoe_err(AOE_EDATA, "output %d does not exist: the model "
		    "has %d", i, s->noutputs);
	*info = s->out[i];
	return 0;
}

/* "1x3x48x320", or "1x3x48xW" with a dynamic dim's name, for messages. */
static const char *
dims_str(int ndim, const int64_t *dims, const char *const *names, char *buf,
    size_t len)
{
	size_t n = 0;
	int d;

	buf[0] = '\0';
	for (d = 0; d < ndim && n < len; d++)
		if (dims[d] < 0)
			n += (size_t)snprintf(buf + n, len - n, "%s%s",
			    d ? "x" : "", names && names[d] ? names[d] : "?");
		else
			n += (size_t)snprintf(buf + n, len - n, "%s%lld",
			    d ? "x" : "", (long long)dims[d]);
	if (ndim == 0)
		snprintf(buf, len, "a scalar");
	return buf;
}

/*
 * Check input i of a run against the model: its dtype, rank, fixed
 * dimensions and bytes.
 */
static int
check_input(const aoe_session *s, int i, const aoe_value *v)
{
	const aoe_tensor_info *m = &s->in[i];
	char a[128], b[128];
	size_t need = aoe_dtype_size(v->dtype);
	int d;

	if (v->dtype != m->dtype)
		return aoe_err(AOE_EDATA, "input '%s': element type is %s, "
		    "the model's is %s", m->name, aoe_dtype_name(v->dtype),
		    aoe_dtype_name(m->dtype));
	if (v->ndim < 0 || v->ndim > AOE_MAXDIM || (m->ndim >= 0 &&
	    v->ndim != m->ndim))
		return aoe_err(AOE_EDATA, "input '%s': rank %d, the model "
		    "wants %d", m->name, v->ndim, m->ndim);
	for (d = 0; d < v->ndim; d++) {
		if (v->dims[d] < 0 || v->dims[d] > INT32_MAX)
			return aoe_err(AOE_EDATA, "input '%s': dimension %d "
			    "is %lld", m->name, d, (long long)v->dims[d]);
		if (m->ndim >= 0 && m->dims[d] >= 0 &&
		    m->dims[d] != v->dims[d])
			return aoe_err(AOE_EDATA, "input '%s': shape %s does "
			    "not match the model's %s (dimension %d is fixed "
			    "at %lld)", m->name, dims_str(v->ndim, v->dims, NULL,
			    a, sizeof(a)), dims_str(m->ndim, m->dims,
			    m->dim_names, b, sizeof(b)), d, (long long)m->dims[d]);
		if (v->dims[d] && need > (size_t)AOE_MAX_TENSOR_BYTES /
		    (size_t)v->dims[d])
			return aoe_err(AOE_ENOMEM, "input '%s': shape %s is "
			    "too large", m->name, dims_str(v->ndim, v->dims,
			    NULL, a, sizeof(a)));
		need *= (size_t)v->dims[d];
	}
	if (v->nbytes < need)
		return aoe_err(AOE_EDATA, "input '%s': %zu bytes given, shape "
		    "%s of %s needs %zu", m->name, v->nbytes, dims_str(v->ndim,
		    v->dims, NULL, a, sizeof(a)), aoe_dtype_name(v->dtype), need);
	if (need && v->data == NULL)
		return aoe_err(AOE_EDATA, "input '%s': no data", m->name);
	return 0;
}

static int
same_shapes(const aoe_session *s, const shape_ent *e, const aoe_value *in)
{
	const int64_t *p;
	int i;

	for (i = 0; i < s->ninputs; i++) {
		p = e->dims + i * (AOE_MAXDIM + 1);
		if (p[0] != in[i].ndim || memcmp(p + 1, in[i].dims,
		    (size_t)in[i].ndim * sizeof(int64_t)) != 0)
			return 0;
	}
	return 1;
}

/* Load the model afresh, bind the run's input shapes and prepare it. */
static int
prepare_shape(aoe_session *s, const aoe_value *in, aoe_graph **gp)
{
	aoe_graph *g;
	int i, d, rc;

	if ((rc = aoe_model_load_mem(s->model, s->len, s->path, &g)) < 0)
		return rc;
	for (i = 0; i < s->ninputs; i++) {
		aoe_tensor *t = g->tensors[g->inputs[i]];
		t->ndim = in[i].ndim;
		for (d = 0; d < in[i].ndim; d++)
			t->dims[d] = in[i].dims[d];
	}
	if ((rc = aoe_graph_prepare(g, &s->ro)) < 0) {
		aoe_graph_free(g);
		return rc;
	}
	*gp = g;
	return 0;
}

/* The prepared graph for the inputs' shapes: cached, or prepared now. */
static int
shape_graph(aoe_session *s, const aoe_value *in, shape_ent **ep)
{
	shape_ent *e = NULL;
	aoe_graph *g;
	int i, rc;

	for (i = 0; i < s->n; i++)
		if (same_shapes(s, &s->cache[i], in)) {
			e = &s->cache[i];
			s->st.hits++;
			break;
		}
	if (e == NULL) {
		if ((rc = prepare_shape(s, in, &g)) < 0)
			return rc;
		s->st.prepares++;
		if (s->n < s->cap)
			e = &s->cache[s->n++];
		else {
			/* Full: the least recently used goes. */
			e = &s->cache[0];
			for (i = 1; i < s->n; i++)
				if (s->cache[i].used < e->used)
					e = &s->cache[i];
			ent_clear(e);
			s->st.evictions++;
		}
		e->g = g;
		e->dims = aoe_xcalloc((size_t)s->ninputs * (AOE_MAXDIM + 1) +
		    1, sizeof(int64_t));
		for (i = 0; i < s->ninputs; i++) {
			int64_t *p = e->dims + i * (AOE_MAXDIM + 1);
			p[0] = in[i].ndim;
			memcpy(p + 1, in[i].dims, (size_t)in[i].ndim *
			    sizeof(int64_t));
		}
	}
	e->used = ++s->clock;
	*ep = e;
	return 0;
}

/*
 * Copy the graph's outputs out: into the caller's buffers where given
 * (each checked before any is written), else into new ones.
 */
static int
copy_outputs(aoe_session *s, const aoe_graph *g, aoe_value *out)
{
	int i, d;

	for (i = 0; i < s->noutputs; i++) {
		const aoe_tensor *t = g->tensors[g->outputs[i]];
		size_t nb = aoe_tensor_nbytes(t);
		if (t->layout != 0)
			return aoe_err(AOE_EINTERNAL, "output '%s' is in a "
			    "blocked layout", t->name);
		if (t->optional && !t->present)
			return aoe_err(AOE_EDATA, "output '%s' is an optional "
			    "that this run left empty", t->name);
		if (out[i].data && !out[i].lib_owned && out[i].nbytes < nb)
			return aoe_err(AOE_EDATA, "output '%s': the buffer has "
			    "%zu bytes, the output needs %zu", t->name,
			    out[i].nbytes, nb);
	}
	for (i = 0; i < s->noutputs; i++) {
		const aoe_tensor *t = g->tensors[g->outputs[i]];
		size_t nb = aoe_tensor_nbytes(t);
		aoe_value *v = &out[i];
		if (v->data == NULL || v->lib_owned) {
			if (v->lib_owned)
				free(v->data);
			v->data = aoe_xmalloc(nb ? nb : 1);
			v->lib_owned = 1;
		}
		v->dtype = t->dtype;
		v->ndim = t->ndim;
		for (d = 0; d < t->ndim; d++)
			v->dims[d] = t->dims[d];
		v->nbytes = nb;
		if (nb)
			memcpy(v->data, t->data, nb);
	}
	return 0;
}

/*
 * An input copied in by the threads of the run, each the same band of
 * rows of every plane (a 4-D tensor's last two axes), the band a
 * Conv's rows split puts on that thread; others, and small ones, by
 * the caller alone.
 */
#define COPY_MIN ((size_t)1 << 17)

struct copy_ctx {
	char *dst;
	const char *src;
	int64_t planes, rows, rowb;	/* planes, rows a plane, bytes a row */
	int nb;				/* bands a plane */
};

static void
copy_chunk(void *arg, int64_t c, int tid)
{
	const struct copy_ctx *x = arg;
	int64_t band = c / x->planes, p = c % x->planes;
	int64_t r0 = aoe_chunk_lo(x->rows, x->nb, band);
	int64_t r1 = aoe_chunk_lo(x->rows, x->nb, band + 1);
	size_t o = (size_t)((p * x->rows + r0) * x->rowb);

	(void)tid;
	memcpy(x->dst + o, x->src + o, (size_t)((r1 - r0) * x->rowb));
}

static void
copy_input(aoe_tensor *t, const void *src, size_t nb, int nthreads)
{
	struct copy_ctx x;

	if (nthreads < 2 || nb < COPY_MIN || t->ndim != 4 ||
	    t->dims[2] < nthreads) {
		memcpy(t->data, src, nb);
		return;
	}
	x.dst = t->data;
	x.src = src;
	x.planes = t->dims[0] * t->dims[1];
	x.rows = t->dims[2];
	x.rowb = (int64_t)(nb / (size_t)(x.planes * x.rows));
	x.nb = nthreads;
	aoe_parallel(nthreads, x.planes * nthreads, copy_chunk, &x);
}

static int
run_locked(aoe_session *s, const aoe_value *in, aoe_value *out)
{
	shape_ent *e;
	aoe_graph *g;
	int i, rc;

	for (i = 0; i < s->ninputs; i++)
		if ((rc = check_input(s, i, &in[i])) < 0)
			return rc;
	if ((rc = shape_graph(s, in, &e)) < 0)
		return rc;
	s->last = e;
	g = e->g;
	for (i = 0; i < s->ninputs; i++) {
		aoe_tensor *t = g->tensors[g->inputs[i]];
		size_t nb = aoe_tensor_nbytes(t);
		if (nb)
			copy_input(t, in[i].data, nb,
			    aoe_nthreads(s->ro.nthreads));
	}
	if ((rc = aoe_graph_run(g, &s->ro)) < 0 ||
	    (rc = copy_outputs(s, g, out)) < 0)
		return rc;
	s->st.runs++;
	return 0;
}

int
aoe_session_run(aoe_session *s, const aoe_value *inputs, aoe_value *outputs)
{
	int rc;

	if (s == NULL)
		return aoe_err(AOE_EDATA, "no session");
	if ((inputs == NULL && s->ninputs) || (outputs == NULL &&
	    s->noutputs))
		return aoe_err(AOE_EDATA, "no %s given: the model has %d",
		    inputs == NULL ? "inputs" : "outputs", inputs == NULL ?
		    s->ninputs : s->noutputs);
	pthread_mutex_lock(&s->mu);
	rc = run_locked(s, inputs, outputs);
	pthread_mutex_unlock(&s->mu);
	return rc;
}

void
aoe_value_free(aoe_value *v)
{
	if (v == NULL || !v->lib_owned)
		return;
	free(v->data);
	v->data = NULL;
	v->nbytes = 0;
	v->lib_owned = 0;
}

/* Count a node, and whether its schedule came from the bank. */
static int
count_node(aoe_graph *g, aoe_node *n, const char *path, void *arg)
{
	aoe_session_stats *st = arg;

	(void)g;
	(void)path;
	st->nodes++;
	st->bank_nodes += n->sched_from_bank;
	return 0;
}

/* The bank line of a node whose schedule came from the bank. */
static const char *sched_str(const aoe_sched *sc, char *buf, size_t len);

static int
bank_line(aoe_graph *g, aoe_node *n, const char *path, void *arg)
{
	char buf[512];

	(void)g;
	if (n->sched_from_bank)
		fprintf(arg, "bank %-40s %-20s %s\n", path, n->op_type,
		    sched_str(&n->sched, buf, sizeof(buf)));
	return 0;
}

int
aoe_session_stats_get(const aoe_session *s, aoe_session_stats *st)
{
	aoe_session *w = (aoe_session *)s;

	pthread_mutex_lock(&w->mu);
	*st = s->st;
	st->cached = s->n;
	st->nodes = st->bank_nodes = 0;
	/* Those of If branches and Loop and Scan bodies count too. */
	if (s->last)
		aoe_graph_each_node(s->last->g, count_node, st);
	pthread_mutex_unlock(&w->mu);
	return 0;
}

/* The schedule's knobs as "k=v,k=v", or "-". */
static const char *
sched_str(const aoe_sched *sc, char *buf, size_t len)
{
	size_t n = 0;
	int i;

	snprintf(buf, len, "-");
	for (i = 0; i < sc->n && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s=%lld", i ? "," :
		    "", sc->k[i].name, (long long)sc->k[i].v);
	return buf;
}

int
aoe_session_profile(aoe_session *s, FILE *fp)
{
	aoe_session_stats st;
	aoe_graph *g;
	int i;

	pthread_mutex_lock(&s->mu);
	if (s->last == NULL) {
		pthread_mutex_unlock(&s->mu);
		return fp ? aoe_err(AOE_EDATA, "no run to profile yet") : 0;
	}
	g = s->last->g;
	if (fp) {
		if (s->ro.profile)
			aoe_profile_print(g, fp);
		/* Subgraphs' nodes by path: "if0/then_branch/conv0". */
		memset(&st, 0, sizeof(st));
		aoe_graph_each_node(g, count_node, &st);
		fprintf(fp, "schedules from the bank: %d of %d nodes\n",
		    (int)st.bank_nodes, (int)st.nodes);
		aoe_graph_each_node(g, bank_line, fp);
	}
	for (i = 0; i < g->nnodes; i++) {
		g->nodes[i].prof_us = 0;
		g->nodes[i].prof_runs = 0;
	}
	pthread_mutex_unlock(&s->mu);
	return 0;
}
