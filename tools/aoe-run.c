/*
 * aoe-run - run a model with libaoe and report its latency.
 *
 * This is the workload users tune: it opens an ONNX or aoe-graph model
 * through libaoe's session API (aoe_session.h), as any program that
 * embeds libaoe does, binds dynamic shapes, fills the inputs (random, or
 * from files), runs warm-up and timed iterations, and prints the
 * latency.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aoe.h"

#define MAXRUNS 1000000

static const char usage_text[] =
    "usage: aoe-run [-hpqV] [--input-shape spec] [--input name=file]\n"
    "               [--no-bank] [--output-dir dir] [--runs n] [--seed n]\n"
    "               [--threads n] [--warmup n] model\n";

static void
usage(int status)
{
	fputs(usage_text, status ? stderr : stdout);
	exit(status);
}

/*
 * Load an input from a file: an ONNX TensorProto (.pb) or raw
 * little-endian data of exactly the input's size.
 */
static int
load_input(aoe_tensor *t, const char *path)
{
	size_t len, want = aoe_tensor_nbytes(t);
	uint8_t *buf;
	int rc;

	if (strlen(path) > 3 && strcmp(path + strlen(path) - 3, ".pb") == 0) {
		aoe_tensor tmp;
		char a[128], b[128];

		memset(&tmp, 0, sizeof(tmp));
		if ((rc = aoe_onnx_load_tensor(path, &tmp)) < 0) {
			free(tmp.name);
			free(tmp.data);
			return rc;
		}
		if (tmp.dtype != t->dtype || aoe_tensor_nbytes(&tmp) != want)
			rc = aoe_err(AOE_EDATA, "%s: tensor is %s %s, input "
			    "'%s' is %s %s", path, aoe_dtype_name(tmp.dtype),
			    aoe_shape_str(&tmp, a, sizeof(a)), t->name,
			    aoe_dtype_name(t->dtype),
			    aoe_shape_str(t, b, sizeof(b)));
		else
			memcpy(t->data, tmp.data, want);
		free(tmp.name);
		free(tmp.data);
		return rc;
	}
	if ((rc = aoe_read_file(path, &buf, &len)) < 0)
		return rc;
	if (len != want) {
		free(buf);
		return aoe_err(AOE_EDATA, "%s: has %zu bytes, input '%s' "
		    "needs %zu", path, len, t->name, want);
	}
	memcpy(t->data, buf, len);
	free(buf);
	return 0;
}

static int
write_outputs(aoe_session *s, const aoe_value *out, const char *dir)
{
	char path[4096];
	aoe_tensor_info info;
	FILE *fp;
	int i, d;

	if (mkdir(dir, 0777) < 0 && errno != EEXIST)
		return aoe_err(AOE_EIO, "cannot create '%s': %s", dir,
		    strerror(errno));
	for (i = 0; i < aoe_session_noutputs(s); i++) {
		const char *p;
		size_t j;

		aoe_session_output(s, i, &info);
		/*
		 * Output names may hold '/' and worse: keep [A-Za-z0-9._-]
		 * and turn the rest into '_' (as bench/ort-run.js does).
		 */
		snprintf(path, sizeof(path), "%s/", dir);
		for (p = info.name, j = strlen(path); *p && j + 5 <
		    sizeof(path) - 6; p++)
			path[j++] = isalnum((unsigned char)*p) || *p == '.' ||
			    *p == '_' || *p == '-' ? *p : '_';
		path[j] = '\0';
		strcat(path, ".bin");
		if ((fp = fopen(path, "wb")) == NULL ||
		    fwrite(out[i].data, 1, out[i].nbytes, fp) !=
		    out[i].nbytes || fclose(fp) != 0)
			return aoe_err(AOE_EIO, "cannot write '%s': %s", path,
			    strerror(errno));
		strcpy(path + strlen(path) - 4, ".shape");
		if ((fp = fopen(path, "w")) == NULL)
			return aoe_err(AOE_EIO, "cannot write '%s': %s", path,
			    strerror(errno));
		for (d = 0; d < out[i].ndim; d++)
			fprintf(fp, "%s%lld", d ? "," : "",
			    (long long)out[i].dims[d]);
		fputc('\n', fp);
		if (fclose(fp) != 0)
			return aoe_err(AOE_EIO, "cannot write '%s': %s", path,
			    strerror(errno));
	}
	return 0;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The command line beyond the run options. */
typedef struct cli {
	char **inputs;		/* --input name=file */
	int ninputs;
	char *outdir, *shapes;
	long long warmup, runs, seed;
	int quiet;
} cli;

static const struct option longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "input", required_argument, NULL, 'i' },
	{ "input-shape", required_argument, NULL, 's' },
	{ "no-bank", no_argument, NULL, 'B' },
	{ "output-dir", required_argument, NULL, 'o' },
	{ "profile", no_argument, NULL, 'p' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "runs", required_argument, NULL, 'r' },
	{ "seed", required_argument, NULL, 'S' },
	{ "threads", required_argument, NULL, 't' },
	{ "version", no_argument, NULL, 'V' },
	{ "warmup", required_argument, NULL, 'w' },
	{ NULL, 0, NULL, 0 }
};

/* One option c (with optarg); exits on --help, --version and misuse. */
static void
option(int c, aoe_session_options *o, cli *a)
{
	switch (c) {
	case 'h':
		usage(AOE_EXIT_OK);
		break;
	case 'i':
		if (strchr(optarg, '=') == NULL) {
			aoe_warnx("--input '%s': expected name=file", optarg);
			exit(AOE_EXIT_USAGE);
		}
		a->inputs = aoe_xrealloc(a->inputs, (size_t)(a->ninputs + 1) *
		    sizeof(char *));
		a->inputs[a->ninputs++] = optarg;
		break;
	case 's':
		aoe_shape_spec_add(&a->shapes, optarg);
		break;
	case 'B':
		o->use_bank = 0;
		break;
	case 'o':
		a->outdir = optarg;
		break;
	case 'p':
		o->profile = 1;
		break;
	case 'q':
		a->quiet = 1;
		break;
	case 'r':
		a->runs = aoe_optnum("runs", optarg, 1, MAXRUNS);
		break;
	case 'S':
		a->seed = aoe_optnum("seed", optarg, 0, INT64_MAX);
		break;
	case 't':
		o->nthreads = (int)aoe_optnum("threads", optarg, 1, 1024);
		break;
	case 'V':
		printf("aoe-run %s\n", AOE_VERSION);
		exit(AOE_EXIT_OK);
	case 'w':
		a->warmup = aoe_optnum("warmup", optarg, 0, MAXRUNS);
		break;
	default:
		usage(AOE_EXIT_USAGE);
	}
}

/* Whether --input item s names tensor t (s is "name=file"). */
static int
names(const char *s, const aoe_tensor *t)
{
	size_t l = strcspn(s, "=");

	return strlen(t->name) == l && strncmp(s, t->name, l) == 0;
}

/*
 * The inputs as the model declares them, in a graph of inputs alone:
 * their dynamic dimensions bound by --input-shape (aoe_bind_shapes, as
 * aoe-capture binds them), every one then static.
 */
static int
input_shapes(aoe_session *s, const char *spec, aoe_graph **gp)
{
	aoe_graph *g = aoe_graph_new("inputs");
	aoe_tensor_info info;
	int i, d, ti, rc;

	*gp = g;
	g->inputs = aoe_xcalloc((size_t)aoe_session_ninputs(s) + 1,
	    sizeof(int));
	for (i = 0; i < aoe_session_ninputs(s); i++) {
		aoe_session_input(s, i, &info);
		ti = aoe_graph_tensor(g, info.name);
		aoe_tensor_set(g->tensors[ti], info.dtype, info.ndim,
		    info.dims);
		for (d = 0; d < info.ndim; d++)
			if (info.dim_names[d])
				g->tensors[ti]->dim_param[d] =
				    aoe_xstrdup(info.dim_names[d]);
		g->tensors[ti]->kind = AOE_T_INPUT;
		g->inputs[g->ninputs++] = ti;
	}
	if (spec && (rc = aoe_bind_shapes(g, spec)) < 0)
		return rc;
	return aoe_graph_check_inputs(g);
}

/*
 * The inputs: random ones, as the measurements' (aoe-opat(1)), but for
 * those read from files; an --input that names no input is an error.
 * Each gets its buffer in g, and its value in v.
 */
static int
set_inputs(aoe_graph *g, const cli *a, aoe_value *v)
{
	int i, j, d, rc;

	for (i = 0; i < g->ninputs; i++) {
		aoe_tensor *t = g->tensors[g->inputs[i]];
		size_t nb = aoe_tensor_nbytes(t);
		t->data = aoe_xcalloc(1, nb ? nb : 1);
		t->owned = 1;
	}
	aoe_graph_fill_inputs(g, (uint64_t)a->seed);
	for (i = 0; i < g->ninputs; i++) {
		aoe_tensor *t = g->tensors[g->inputs[i]];
		const char *file = NULL;
		for (j = 0; j < a->ninputs; j++)
			if (names(a->inputs[j], t))
				file = a->inputs[j] + strlen(t->name) + 1;
		if (file && (rc = load_input(t, file)) < 0)
			return rc;
		v[i].dtype = t->dtype;
		v[i].ndim = t->ndim;
		for (d = 0; d < t->ndim; d++)
			v[i].dims[d] = t->dims[d];
		v[i].data = t->data;
		v[i].nbytes = aoe_tensor_nbytes(t);
	}
	for (j = 0; j < a->ninputs; j++) {
		for (i = 0; i < g->ninputs; i++)
			if (names(a->inputs[j], g->tensors[g->inputs[i]]))
				break;
		if (i == g->ninputs)
			return aoe_err(AOE_EDATA, "--input '%.*s' is not an "
			    "input of the model", (int)strcspn(a->inputs[j],
			    "="), a->inputs[j]);
	}
	return 0;
}

/*
 * One run.  The first gets the outputs in libaoe's buffers, which the
 * later runs reuse as their own (the shape stays).
 */
static int
run_once(aoe_session *s, const aoe_value *in, aoe_value *out)
{
	int i, rc;

	if ((rc = aoe_session_run(s, in, out)) < 0)
		return rc;
	for (i = 0; i < aoe_session_noutputs(s); i++)
		out[i].lib_owned = 0;
	return 0;
}

/* The warm-up runs, then the timed ones, and their latency line. */
static int
time_runs(aoe_session *s, const aoe_value *in, aoe_value *out, int nthreads,
    const cli *a, const char *model)
{
	long long runs = a->runs, i;
	double *times, t0;
	int rc;

	for (i = 0; i < a->warmup; i++)
		if ((rc = run_once(s, in, out)) < 0)
			return rc;
	/* Profile only the timed runs. */
	if (a->warmup)
		aoe_session_profile(s, NULL);
	times = aoe_xcalloc((size_t)runs, sizeof(double));
	for (i = 0; i < runs; i++) {
		t0 = aoe_now_us();
		if ((rc = run_once(s, in, out)) < 0) {
			free(times);
			return rc;
		}
		times[i] = (aoe_now_us() - t0) / 1000.0;
	}
	qsort(times, (size_t)runs, sizeof(double), cmp_double);
	if (!a->quiet)
		printf("aoe model=%s threads=%d warmup=%lld runs=%lld "
		    "median=%.4f p90=%.4f min=%.4f\n", model, nthreads,
		    a->warmup, runs, runs % 2 ? times[runs / 2] :
		    (times[runs / 2 - 1] + times[runs / 2]) / 2,
		    times[(runs * 9 + 9) / 10 - 1], times[0]);
	free(times);
	return 0;
}

int
main(int argc, char **argv)
{
	aoe_session_options o;
	aoe_session *s = NULL;
	aoe_graph *g = NULL;
	aoe_value *in = NULL, *out = NULL;
	cli a = { NULL, 0, NULL, NULL, 3, 10, 1, 0 };
	int c, i, rc, nthreads;

	aoe_setprogname(argv[0]);
	aoe_session_options_init(&o);
	o.profile = aoe_env_true("PROFILING_MODE");
	while ((c = getopt_long(argc, argv, "hi:o:pqr:s:t:Vw:", longopts,
	    NULL)) != -1)
		option(c, &o, &a);
	argc -= optind;
	argv += optind;
	if (argc != 1)
		usage(AOE_EXIT_USAGE);
	nthreads = aoe_nthreads(o.nthreads);

	if ((rc = aoe_session_open(argv[0], &o, &s)) < 0 ||
	    (rc = input_shapes(s, a.shapes, &g)) < 0)
		goto fail;
	in = aoe_xcalloc((size_t)g->ninputs + 1, sizeof(*in));
	out = aoe_xcalloc((size_t)aoe_session_noutputs(s) + 1, sizeof(*out));
	if ((rc = set_inputs(g, &a, in)) < 0 ||
	    (rc = time_runs(s, in, out, nthreads, &a, argv[0])) < 0)
		goto fail;
	if (o.profile)
		aoe_session_profile(s, stderr);
	if (a.outdir && (rc = write_outputs(s, out, a.outdir)) < 0)
		goto fail;
	rc = 0;
fail:
	if (rc < 0)
		aoe_warnx("%s", aoe_errmsg());
	for (i = 0; out && i < aoe_session_noutputs(s); i++)
		free(out[i].data);
	free(in);
	free(out);
	aoe_graph_free(g);
	aoe_session_close(s);
	free(a.inputs);
	free(a.shapes);
	return rc < 0 ? aoe_exit_status(rc) : AOE_EXIT_OK;
}
