/*
 * unit-session - the session API (aoe_session.h): model info with its
 * dynamic dimensions, runs at several widths against graphs prepared by
 * hand, the shape cache and its bound, caller and library outputs,
 * models from memory, concurrent runs, and every kind of bad call.
 *
 * usage: unit-session rec.onnx example.onnx [ppocrv4_rec.onnx]
 * (rec.onnx is mkexample -w's; the PP-OCRv4 rec model is optional.)
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"

#define diag(...) (printf("# "), printf(__VA_ARGS__), putchar('\n'))

static const char *rec;

/* A float32 input of shape 1x3xHxW filled from seed. */
static aoe_value
image(int64_t h, int64_t w, uint64_t seed)
{
	aoe_value v;
	aoe_tensor t;

	memset(&v, 0, sizeof(v));
	v.dtype = AOE_TYPE_FLOAT;
	v.ndim = 4;
	v.dims[0] = 1;
	v.dims[1] = 3;
	v.dims[2] = h;
	v.dims[3] = w;
	v.nbytes = (size_t)(3 * h * w) * sizeof(float);
	v.data = aoe_xmalloc(v.nbytes);
	memset(&t, 0, sizeof(t));
	t.dtype = AOE_F32;
	t.ndim = 4;
	memcpy(t.dims, v.dims, sizeof(t.dims[0]) * 4);
	t.data = v.data;
	aoe_tensor_fill_random(&t, seed);
	return v;
}

/*
 * The output of path for input v, by the graph API: load, bind, prepare,
 * run (no bank, as the sessions here).  NULL on failure.
 */
static float *
reference(const char *path, const aoe_value *v, int nthreads, size_t *nb)
{
	aoe_run_opts o;
	aoe_graph *g;
	aoe_tensor *t;
	float *out = NULL;
	int d;

	aoe_run_opts_init(&o);
	o.use_bank = 0;
	if (nthreads)
		o.nthreads = nthreads;
	if (aoe_model_load(path, &g) < 0)
		return NULL;
	t = g->tensors[g->inputs[0]];
	t->ndim = v->ndim;
	for (d = 0; d < v->ndim; d++)
		t->dims[d] = v->dims[d];
	if (aoe_graph_prepare(g, &o) == 0) {
		memcpy(t->data, v->data, v->nbytes);
		if (aoe_graph_run(g, &o) == 0) {
			t = g->tensors[g->outputs[0]];
			*nb = aoe_tensor_nbytes(t);
			out = aoe_xmalloc(*nb);
			memcpy(out, t->data, *nb);
		}
	}
	aoe_graph_free(g);
	return out;
}

/* Relative L2 distance of two float arrays. */
static double
rel_l2(const float *a, const float *b, size_t n)
{
	double num = 0, den = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
		den += (double)b[i] * b[i];
	}
	return den > 0 ? sqrt(num / den) : sqrt(num);
}

static aoe_session *
open_rec(int cache, int nthreads)
{
	aoe_session_options o;
	aoe_session *s;

	aoe_session_options_init(&o);
	o.use_bank = 0;
	o.cache_size = cache;
	o.nthreads = nthreads;
	return aoe_session_open(rec, &o, &s) == 0 ? s : NULL;
}

/*
 * An input of 128 KB or more at 2 threads is copied in by both, each a
 * band of rows of every plane: the output is the graph API's, bit for
 * bit, and a second run on another input is the second's.
 */
static void
test_big_input(void)
{
	aoe_session *s = open_rec(0, 2);
	int k;

	for (k = 0; k < 2 && s; k++) {
		aoe_value in = image(32, 1000, 40 + k), out;
		size_t nb;
		float *ref = reference(rec, &in, 2, &nb);
		int rc;

		memset(&out, 0, sizeof(out));
		rc = aoe_session_run(s, &in, &out);
		ok(rc == 0 && ref && nb == out.nbytes && memcmp(ref, out.data,
		    nb) == 0, "a 1x3x32x1000 input (375 KB) at 2 threads, "
		    "run %d: the graph API's output, bit for bit", k + 1);
		aoe_value_free(&out);
		free(ref);
		free(in.data);
	}
	aoe_session_close(s);
}

static void
test_info(void)
{
	aoe_session *s = open_rec(0, 1);
	aoe_tensor_info in, out;

	ok(s != NULL, "opens a model with a dynamic width");
	if (s == NULL)
		return;
	ok(aoe_session_ninputs(s) == 1 && aoe_session_noutputs(s) == 1,
	    "one input, one output");
	ok(aoe_session_input(s, 0, &in) == 0 && strcmp(in.name, "image") ==
	    0 && in.dtype == AOE_TYPE_FLOAT && in.ndim == 4 && in.dims[0] ==
	    1 && in.dims[2] == 32 && in.dims[3] == -1 && in.dim_names[3] &&
	    strcmp(in.dim_names[3], "W") == 0 && in.dim_names[2] == NULL,
	    "input: name, type, fixed dims and the dynamic width named W");
	ok(aoe_session_output(s, 0, &out) == 0 && out.ndim == 4 &&
	    out.dims[1] == 32 && out.dims[3] == -1 && out.dim_names[3] &&
	    strcmp(out.dim_names[3], "W4") == 0, "output: 1x32x8xW4");
	ok(aoe_session_input(s, 1, &in) == -AOE_EDATA &&
	    strstr(aoe_errmsg(), "input 1 does not exist") != NULL,
	    "input 1 does not exist: %s", aoe_errmsg());
	aoe_session_close(s);
}

/* Three widths, each against a graph prepared by hand for it. */
static void
test_widths(void)
{
	static const int64_t w[] = { 64, 128, 96, 64 };
	aoe_session *s = open_rec(0, 2);
	aoe_session_stats st;
	size_t i, nb;

	for (i = 0; i < 4 && s; i++) {
		aoe_value in = image(32, w[i], 7 + i), out;
		float *ref = reference(rec, &in, 2, &nb);
		int rc;

		memset(&out, 0, sizeof(out));
		rc = aoe_session_run(s, &in, &out);
		ok(rc == 0 && out.lib_owned && out.ndim == 4 && out.dims[3] ==
		    w[i] / 4 && out.nbytes == (size_t)(32 * 8 * w[i] / 4) * 4,
		    "width %lld runs: output 1x32x8x%lld", (long long)w[i],
		    (long long)w[i] / 4);
		ok(rc == 0 && ref && nb == out.nbytes && memcmp(ref, out.data,
		    nb) == 0, "width %lld: the graph API's output, bit for bit",
		    (long long)w[i]);
		aoe_value_free(&out);
		ok(out.data == NULL && out.lib_owned == 0,
		    "aoe_value_free releases the library's buffer");
		free(ref);
		free(in.data);
	}
	ok(s && aoe_session_stats_get(s, &st) == 0 && st.runs == 4 &&
	    st.prepares == 3 && st.hits == 1 && st.cached == 3 &&
	    st.evictions == 0, "three widths prepared once each, the "
	    "fourth run a hit");
	aoe_session_close(s);
}

/* A bound of 2: least recently used out. */
static void
test_cache(void)
{
	static const int64_t w[] = { 64, 128, 96, 128, 64, 128 };
	static const long prep[] = { 1, 2, 3, 3, 4, 4 };
	static const long ev[] = { 0, 0, 1, 1, 2, 2 };
	aoe_session *s = open_rec(2, 1);
	aoe_session_stats st;
	size_t i;
	int good = s != NULL;

	for (i = 0; i < 6 && s; i++) {
		aoe_value in = image(32, w[i], 1), out;
		memset(&out, 0, sizeof(out));
		if (aoe_session_run(s, &in, &out) < 0 ||
		    aoe_session_stats_get(s, &st) < 0 || st.prepares !=
		    prep[i] || st.evictions != ev[i] || st.cached > 2) {
			good = 0;
			diag("run %zu (width %lld): prepares %ld evictions "
			    "%ld cached %d", i, (long long)w[i], st.prepares,
			    st.evictions, st.cached);
		}
		aoe_value_free(&out);
		free(in.data);
	}
	ok(good, "cache_size 2: 64 128 96 128 64 128 prepares 4 shapes, "
	    "evicts the least recently used twice");
	aoe_session_close(s);
}

static void
test_outputs(void)
{
	aoe_session *s = open_rec(0, 1);
	aoe_value in = image(32, 64, 3), out, lib;
	size_t nb = 32 * 8 * 16 * sizeof(float);
	float *buf = aoe_xcalloc(1, nb + 64);

	memset(&out, 0, sizeof(out));
	memset(&lib, 0, sizeof(lib));
	out.data = buf;
	out.nbytes = nb + 64;
	ok(s && aoe_session_run(s, &in, &out) == 0 && out.data == buf &&
	    !out.lib_owned && out.nbytes == nb && aoe_session_run(s, &in,
	    &lib) == 0 && memcmp(buf, lib.data, nb) == 0,
	    "a caller's buffer gets the output, and its shape");
	out.nbytes = nb - 4;
	ok(s && aoe_session_run(s, &in, &out) == -AOE_EDATA &&
	    strstr(aoe_errmsg(), "output 'b1.relu': the buffer has") != NULL,
	    "too small a buffer: %s", aoe_errmsg());
	aoe_value_free(&lib);
	free(buf);
	free(in.data);
	aoe_session_close(s);
}

/* Each call fails with code and a message holding want. */
static void
bad_run(aoe_session *s, aoe_value *in, const char *want, const char *what)
{
	aoe_value out;

	memset(&out, 0, sizeof(out));
	ok(aoe_session_run(s, in, &out) == -AOE_EDATA && strstr(aoe_errmsg(),
	    want) != NULL && out.data == NULL, "%s: %s", what, aoe_errmsg());
}

static void
test_errors(void)
{
	aoe_session_options o;
	aoe_session *s = open_rec(0, 1), *t = (aoe_session *)1;
	aoe_value in = image(32, 64, 3), v;
	static const char junk[] = "this is no model";

	v = in;
	v.dtype = AOE_TYPE_INT64;
	bad_run(s, &v, "input 'image': element type is int64, the model's "
	    "is float32", "a wrong dtype");
	v = in;
	v.ndim = 3;
	bad_run(s, &v, "input 'image': rank 3, the model wants 4",
	    "a wrong rank");
	v = in;
	v.dims[2] = 16;
	bad_run(s, &v, "dimension 2 is fixed at 32", "a wrong fixed dim");
	v = in;
	v.nbytes -= 4;
	bad_run(s, &v, "bytes given, shape 1x3x32x64 of float32 needs 24576",
	    "too few bytes");
	v = in;
	v.data = NULL;
	bad_run(s, &v, "input 'image': no data", "no data");
	v = in;
	v.dims[3] = -5;
	bad_run(s, &v, "dimension 3 is -5", "a negative dim");
	ok(aoe_session_run(s, NULL, &v) == -AOE_EDATA && strstr(aoe_errmsg(),
	    "no inputs given: the model has 1") != NULL, "no inputs: %s",
	    aoe_errmsg());
	ok(aoe_session_open("/nonexistent/m.onnx", NULL, &t) == -AOE_EIO &&
	    t == NULL && strstr(aoe_errmsg(), "/nonexistent/m.onnx") != NULL,
	    "a missing file: %s", aoe_errmsg());
	ok(aoe_session_open_buffer(junk, sizeof(junk), NULL, &t) ==
	    -AOE_EDATA && strstr(aoe_errmsg(), "not a valid ONNX model") !=
	    NULL, "a buffer that is no model: %s", aoe_errmsg());
	aoe_session_options_init(&o);
	o.cache_size = 5000;
	ok(aoe_session_open(rec, &o, &t) == -AOE_EDATA &&
	    strstr(aoe_errmsg(), "cache_size 5000 is out of range") != NULL,
	    "a cache bound out of range: %s", aoe_errmsg());
	aoe_session_options_init(&o);
	o.bank_path = "/nonexistent/bank";
	ok(aoe_session_open(rec, &o, &t) == -AOE_EIO &&
	    strstr(aoe_errmsg(), "bank path '/nonexistent/bank'") != NULL,
	    "a bank path that is not there: %s", aoe_errmsg());
	ok(aoe_session_profile(s, stderr) == -AOE_EDATA, "no profile before "
	    "a run: %s", aoe_errmsg());
	free(in.data);
	aoe_session_close(s);
}

static void
test_buffer(const char *example)
{
	aoe_session *a = NULL, *b = NULL;
	aoe_value in = image(64, 64, 11), oa, ob;
	uint8_t *buf;
	size_t len;

	memset(&oa, 0, sizeof(oa));
	memset(&ob, 0, sizeof(ob));
	ok(aoe_read_file(example, &buf, &len) == 0 &&
	    aoe_session_open_buffer(buf, len, NULL, &a) == 0 &&
	    aoe_session_open(example, NULL, &b) == 0,
	    "opens the example from a file and from memory");
	free(buf);
	ok(a && b && aoe_session_run(a, &in, &oa) == 0 &&
	    aoe_session_run(b, &in, &ob) == 0 && oa.nbytes == 40 &&
	    memcmp(oa.data, ob.data, 40) == 0,
	    "the two give the same 10 probabilities");
	aoe_value_free(&oa);
	aoe_value_free(&ob);
	free(in.data);
	aoe_session_close(a);
	aoe_session_close(b);
}

/* Threads running one session at once, each its own widths. */
typedef struct job {
	aoe_session *s;
	int id, bad;
	float *ref[3];
	aoe_value in[3];
} job;

static void *
runner(void *arg)
{
	job *j = arg;
	aoe_value out;
	int k;

	for (k = 0; k < 12; k++) {
		int w = (k + j->id) % 3;
		memset(&out, 0, sizeof(out));
		if (aoe_session_run(j->s, &j->in[w], &out) < 0 ||
		    memcmp(out.data, j->ref[w], out.nbytes) != 0)
			j->bad++;
		aoe_value_free(&out);
	}
	return NULL;
}

static void
test_threads(void)
{
	aoe_session *s = open_rec(2, 1);
	pthread_t th[4];
	job j[4];
	size_t nb;
	int i, k, bad = 0;

	for (i = 0; i < 4; i++) {
		j[i].s = s;
		j[i].id = i;
		j[i].bad = 0;
		for (k = 0; k < 3; k++) {
			j[i].in[k] = image(32, 32 * (k + 1), 5 + k);
			j[i].ref[k] = reference(rec, &j[i].in[k], 1, &nb);
		}
	}
	for (i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, runner, &j[i]);
	for (i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		bad += j[i].bad;
		for (k = 0; k < 3; k++) {
			free(j[i].ref[k]);
			free(j[i].in[k].data);
		}
	}
	ok(s && bad == 0, "4 threads x 12 runs of one session, 3 widths, a "
	    "cache of 2: every output right (%d wrong)", bad);
	aoe_session_close(s);
}

/* PP-OCRv4 rec at three widths, when the real model is there. */
static void
test_ppocr(const char *path)
{
	static const int64_t w[] = { 160, 320, 240 };
	aoe_session_options o;
	aoe_session *s = NULL;
	aoe_session_stats st;
	size_t i, nb;

	if (path == NULL || access(path, R_OK) != 0) {
		for (i = 0; i < 4; i++)
			skip("no PP-OCRv4 rec model (bench/fetch-models.sh)",
			    "PP-OCRv4 rec");
		return;
	}
	aoe_session_options_init(&o);
	o.use_bank = 0;
	ok(aoe_session_open(path, &o, &s) == 0, "opens PP-OCRv4 rec");
	for (i = 0; i < 3 && s; i++) {
		aoe_value in = image(48, w[i], 3 + i), out;
		float *ref = reference(path, &in, 0, &nb);
		memset(&out, 0, sizeof(out));
		ok(aoe_session_run(s, &in, &out) == 0 && ref && nb ==
		    out.nbytes && out.dims[1] == w[i] / 8 && rel_l2(out.data,
		    ref, nb / 4) < 1e-5, "PP-OCRv4 rec at width %lld: %lld "
		    "steps, the graph API's output", (long long)w[i],
		    (long long)out.dims[1]);
		aoe_value_free(&out);
		free(ref);
		free(in.data);
	}
	if (s && aoe_session_stats_get(s, &st) == 0)
		diag("PP-OCRv4 rec: %ld prepares, %d cached", st.prepares,
		    st.cached);
	aoe_session_close(s);
}

int
main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: unit-session rec.onnx example.onnx "
		    "[ppocrv4_rec.onnx]\n");
		return 2;
	}
	aoe_setprogname(argv[0]);
	rec = argv[1];
	test_info();
	test_widths();
	test_big_input();
	test_cache();
	test_outputs();
	test_errors();
	test_buffer(argv[2]);
	test_threads();
	test_ppocr(argc > 3 ? argv[3] : NULL);
	return done_testing();
}
