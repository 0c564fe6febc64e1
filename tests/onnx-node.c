/*
 * onnx-node - run ONNX node tests (model.onnx with test_data_set_N/
 * input_N.pb and output_N.pb) through libaoe and print TAP.
 *
 * A test whose model uses an operator libaoe does not have, or a variant
 * that a kernel refuses as unsupported, is skipped with the reason; every
 * other test must match the expected outputs.  The summary on stderr
 * counts the skips by reason (strings, the training-preview domain,
 * sequences and optionals, unsupported operators, other limitations).
 * A test of random draws (Bernoulli, Random*, Multinomial) compares
 * dtypes, shapes and the range of the values, and says so.
 *
 * usage: onnx-node [-v] dir...
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aoe.h"

static int verbose;
/* Set by run_set when the test's graph draws random numbers. */
static int random_test;

/*
 * Operators whose outputs are random draws: their tests can compare only
 * what the draws cannot change (see compare).
 */
static int
random_graph(const aoe_graph *g)
{
	static const char *const ops[] = { "Bernoulli", "Multinomial",
	    "RandomNormal", "RandomNormalLike", "RandomUniform",
	    "RandomUniformLike" };
	size_t j;
	int i;

	for (i = 0; i < g->nnodes; i++)
		for (j = 0; j < sizeof(ops) / sizeof(ops[0]); j++)
			if (strcmp(g->nodes[i].op_type, ops[j]) == 0)
				return 1;
	return 0;
}

/* ONNX's backend tests compare with rtol 1e-3, atol 1e-7; we allow 1e-5. */
#define RTOL 1e-3
#define ATOL 1e-5

/* Compare got with want; on mismatch, describe it in msg. */
static int
compare(const aoe_tensor *got, aoe_tensor *want, char *msg, size_t n)
{
	char a[128], b[128];
	int64_t i, numel;
	double rtol = RTOL;

	/*
	 * The test data stores bfloat16 as uint16 bits.  ONNX 1.12's Cast
	 * tests truncate float32 to bfloat16 while the spec names no
	 * rounding; libaoe rounds to nearest even, as ONNX Runtime and
	 * torch do, so bfloat16 values compare within one bfloat16 ulp.
	 */
	if (got->dtype == AOE_BF16 && want->dtype == AOE_U16) {
		want->dtype = AOE_BF16;
		rtol = 1.0 / 128;
	}
	if (got->dtype != want->dtype) {
		snprintf(msg, n, "output '%s' is %s, expected %s", got->name,
		    aoe_dtype_name(got->dtype), aoe_dtype_name(want->dtype));
		return -1;
	}
	if (got->ndim != want->ndim || memcmp(got->dims, want->dims,
	    (size_t)got->ndim * sizeof(int64_t)) != 0) {
		snprintf(msg, n, "output '%s' has shape %s, expected %s",
		    got->name, aoe_shape_str(got, a, sizeof(a)),
		    aoe_shape_str(want, b, sizeof(b)));
		return -1;
	}
	if (got->dtype == AOE_F16) {
		if (memcmp(got->data, want->data, aoe_tensor_nbytes(got))) {
			snprintf(msg, n, "output '%s' float16 bits differ",
			    got->name);
			return -1;
		}
		return 0;
	}
	numel = aoe_tensor_numel(got);
	if (random_test) {
		/*
		 * Random values cannot match another generator's: when the
		 * expected values are all 0 or 1 (Bernoulli), so must ours
		 * be; otherwise ours must be finite.
		 */
		int bin = 1;

		for (i = 0; i < numel && bin; i++)
			bin = aoe_tensor_elem(want, i) == 0 ||
			    aoe_tensor_elem(want, i) == 1;
		for (i = 0; i < numel; i++) {
			double x = aoe_tensor_elem(got, i);
			if (bin ? x == 0 || x == 1 : isfinite(x))
				continue;
			snprintf(msg, n, "output '%s'[%lld] is %.9g, not %s",
			    got->name, (long long)i, x, bin ? "0 or 1" :
			    "finite");
			return -1;
		}
		return 0;
	}
	for (i = 0; i < numel; i++) {
		double x = aoe_tensor_elem(got, i);
		double y = aoe_tensor_elem(want, i);
		if (isnan(x) && isnan(y))
			continue;
		if (isinf(x) || isinf(y)) {
			if (x == y)
				continue;
		} else if (fabs(x - y) <= ATOL + rtol * fabs(y))
			continue;
		snprintf(msg, n, "output '%s'[%lld] is %.9g, expected %.9g",
		    got->name, (long long)i, x, y);
		return -1;
	}
	return 0;
}

/*
 * Compare got with want, both of one kind: the tensors, the elements of
 * sequences in order, or whether optionals hold a value and which.
 */
static int
compare_value(const aoe_tensor *got, aoe_tensor *want, char *msg,
    size_t n)
{
	int i, ng, nw;

	if (got->optional && got->present != want->present) {
		snprintf(msg, n, "optional '%s' is %s, expected %s", got->name,
		    got->present ? "present" : "empty", want->present ?
		    "present" : "empty");
		return -1;
	}
	if (got->optional && !got->present)
		return 0;
	if (got->vkind != AOE_V_SEQ)
		return compare(got, want, msg, n);
	ng = got->seq ? got->seq->n : 0;
	nw = want->seq ? want->seq->n : 0;
	if (ng != nw) {
		snprintf(msg, n, "sequence '%s' has %d elements, expected %d",
		    got->name, ng, nw);
		return -1;
	}
	for (i = 0; i < ng; i++) {
		aoe_tensor e = *got->seq->t[i];
		char sub[1024];

		e.name = got->name;
		if (compare(&e, want->seq->t[i], sub, sizeof(sub)) < 0) {
			snprintf(msg, n, "element %d: %s", i, sub);
			return -1;
		}
	}
	return 0;
}

/* A new tensor of t's kind (tensor, sequence, optional), no data. */
static aoe_tensor *
value_of_kind(const aoe_tensor *t)
{
	aoe_tensor *v = aoe_xcalloc(1, sizeof(*v));

	v->name = aoe_xstrdup(t->name);
	v->vkind = t->vkind;
	v->optional = t->optional;
	v->dtype = t->dtype;
	v->seq_len = -1;
	return v;
}

enum { PASS, FAIL, SKIP };

/*
 * Run one data set.  libaoe needs static shapes, so an operator whose
 * shape-like inputs (shape, axes, pads, starts...) are graph inputs is
 * refused at first; the test is then run again with every input bound as
 * a constant, which is how such inputs reach libaoe from a real model.
 */
static int
run_set(const char *dir, const char *set, int as_const, char *msg, size_t n)
{
	char path[4096], a[128], b[128];
	aoe_graph *g = NULL;
	aoe_run_opts o;
	aoe_tensor **ins = NULL;
	int *gin = NULL, i, k, rc, nin = 0, result = FAIL;

	snprintf(path, sizeof(path), "%s/model.onnx", dir);
	if ((rc = aoe_onnx_load(path, &g)) < 0) {
		snprintf(msg, n, "%s", aoe_errmsg());
		return rc == -AOE_EUNSUP ? SKIP : FAIL;
	}
	random_test = random_graph(g);
	{
		char *unsup = aoe_graph_unsupported(g);
		if (unsup) {
			snprintf(msg, n, "unsupported operators: %s", unsup);
			free(unsup);
			aoe_graph_free(g);
			return SKIP;
		}
	}
	/* Bind each input's shape to that of its data. */
	ins = aoe_xcalloc((size_t)g->ninputs + 1, sizeof(*ins));
	gin = aoe_xcalloc((size_t)g->ninputs + 1, sizeof(*gin));
	for (i = 0; i < g->ninputs; i++) {
		aoe_tensor *t = g->tensors[g->inputs[i]];
		snprintf(path, sizeof(path), "%s/%s/input_%d.pb", dir, set, i);
		ins[i] = value_of_kind(t);
		gin[i] = g->inputs[i];
		nin++;
		if ((rc = aoe_onnx_load_value(path, ins[i])) < 0) {
			snprintf(msg, n, "%s", aoe_errmsg());
			result = rc == -AOE_EUNSUP ? SKIP : FAIL;
			goto out;
		}
		if (t->dtype == AOE_BF16 && ins[i]->dtype == AOE_U16)
			ins[i]->dtype = AOE_BF16;	/* its bits */
		if (t->dtype != ins[i]->dtype) {
			/* The .pb stores e.g. bfloat16 as its bits. */
			snprintf(msg, n, "input '%s' is declared %s (%d), its "
			    "data is %s", t->name, aoe_dtype_name(t->dtype),
			    t->dtype, aoe_dtype_name(ins[i]->dtype));
			result = SKIP;
			goto out;
		}
		if (aoe_is_value(t)) {
			/*
			 * A sequence's elements have the shape they share
			 * (the rank may vary); an empty optional keeps the
			 * declared shape.
			 */
			if ((t->vkind == AOE_V_SEQ && (ins[i]->seq == NULL ||
			    ins[i]->seq->n == 0)) || (t->optional &&
			    !ins[i]->present))
				continue;
			aoe_tensor_set(t, ins[i]->dtype, ins[i]->ndim,
			    ins[i]->dims);
			continue;
		}
		/*
		 * Some of ONNX 1.12's data disagree with their model's
		 * declared rank (CastLike's 'like' in the bfloat16 tests):
		 * say so, and bind the data's shape, as for any other input.
		 */
		if (t->ndim >= 0 && t->ndim != ins[i]->ndim)
			printf("# %s: input '%s' is declared %s, its data is "
			    "%s: bound to the data\n", dir, t->name,
			    aoe_shape_str(t, a, sizeof(a)),
			    aoe_shape_str(ins[i], b, sizeof(b)));
		aoe_tensor_set(t, ins[i]->dtype, ins[i]->ndim, ins[i]->dims);
		if (as_const && !aoe_is_value(t)) {
			t->kind = AOE_T_CONST;
			t->data = ins[i]->data;
			t->owned = 1;
			ins[i]->data = NULL;
		}
	}
	if (as_const) {
		/* Constants are no longer inputs; sequences still are. */
		for (k = 0, i = 0; i < g->ninputs; i++)
			if (g->tensors[g->inputs[i]]->kind == AOE_T_INPUT)
				g->inputs[k++] = g->inputs[i];
		g->ninputs = k;
	}
	aoe_run_opts_init(&o);
	o.nthreads = 2;
	o.use_bank = 0;
	if ((rc = aoe_graph_prepare(g, &o)) < 0) {
		snprintf(msg, n, "%s", aoe_errmsg());
		result = rc == -AOE_EUNSUP ? SKIP : FAIL;
		goto out;
	}
	for (i = 0; i < nin; i++) {
		aoe_tensor *t = g->tensors[gin[i]];
		if (t->kind != AOE_T_INPUT)
			continue;
		if (aoe_is_value(t)) {
			if ((rc = aoe_value_copy(t, ins[i])) < 0) {
				snprintf(msg, n, "%s", aoe_errmsg());
				goto out;
			}
		} else
			memcpy(t->data, ins[i]->data,
			    aoe_tensor_nbytes(ins[i]));
	}
	if ((rc = aoe_graph_run(g, &o)) < 0) {
		snprintf(msg, n, "run: %s", aoe_errmsg());
		goto out;
	}
	result = PASS;
	for (i = 0; i < g->noutputs && result == PASS; i++) {
		aoe_tensor *got = g->tensors[g->outputs[i]];
		aoe_tensor *want = value_of_kind(got);

		snprintf(path, sizeof(path), "%s/%s/output_%d.pb", dir, set,
		    i);
		if (aoe_onnx_load_value(path, want) < 0) {
			snprintf(msg, n, "%s", aoe_errmsg());
			result = FAIL;
		} else if (compare_value(got, want, msg, n) < 0)
			result = FAIL;
		aoe_tensor_free(want);
	}
out:
	for (i = 0; i < nin; i++)
		aoe_tensor_free(ins[i]);
	free(ins);
	free(gin);
	aoe_graph_free(g);
	return result;
}

static int
run_test(const char *dir, char *msg, size_t n)
{
	DIR *d;
	struct dirent *e;
	char **sets = NULL;
	int nsets = 0, i, r = PASS, worst = PASS;

	if ((d = opendir(dir)) == NULL) {
		snprintf(msg, n, "cannot open '%s': %s", dir,
		    strerror(errno));
		return FAIL;
	}
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, "test_data_set_", 14) == 0) {
			sets = aoe_xrealloc(sets, (size_t)(nsets + 1) *
			    sizeof(char *));
			sets[nsets++] = aoe_xstrdup(e->d_name);
		}
	closedir(d);
	if (nsets == 0) {
		snprintf(msg, n, "no test_data_set_* in '%s'", dir);
		return FAIL;
	}
	for (i = 0; i < nsets; i++) {
		if (worst == PASS) {
			r = run_set(dir, sets[i], 0, msg, n);
			if (r == SKIP && strstr(msg, "must be a constant"))
				r = run_set(dir, sets[i], 1, msg, n);
			if (r != PASS)
				worst = r;
		}
		free(sets[i]);
	}
	free(sets);
	return worst;
}

/*
 * The reasons a skip can have, by a phrase of its message; the last is
 * every other named limitation.
 */
static const struct {
	const char *phrase, *label;
} classes[] = {
	{ "data type 8", "strings" },
	{ "to string", "strings" },
	{ "operators: StringNormalizer", "strings" },
	{ "ai.onnx.preview.training", "ai.onnx.preview.training" },
	{ "sequences and maps", "sequences and optionals" },
	{ "unsupported operators", "unsupported operators" },
	{ "", "other limitations" },
};
#define NCLASS ((int)(sizeof(classes) / sizeof(classes[0])))

static int
skip_class(const char *msg)
{
	int i, j;

	for (i = 0; i < NCLASS - 1; i++)
		if (strstr(msg, classes[i].phrase))
			break;
	/* Rows of one label count as its first. */
	for (j = 0; j < i; j++)
		if (strcmp(classes[j].label, classes[i].label) == 0)
			return j;
	return i;
}

int
main(int argc, char **argv)
{
	char msg[2048];
	int i, npass = 0, nfail = 0, nskip = 0, r, nwhy[NCLASS] = { 0 };

	aoe_setprogname(argv[0]);
	if (argc > 1 && strcmp(argv[1], "-v") == 0) {
		verbose = 1;
		argc--;
		argv++;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: onnx-node [-v] dir...\n");
		return AOE_EXIT_USAGE;
	}
	printf("1..%d\n", argc - 1);
	for (i = 1; i < argc; i++) {
		const char *name = strrchr(argv[i], '/');

		name = name && name[1] ? name + 1 : argv[i];
		msg[0] = '\0';
		r = run_test(argv[i], msg, sizeof(msg));
		if (r == PASS) {
			npass++;
			printf("ok %d - %s%s\n", i, name, random_test ?
			    " (random values: dtype, shape and range compared)"
			    : "");
		} else if (r == SKIP) {
			nskip++;
			nwhy[skip_class(msg)]++;
			printf("ok %d - %s # skip %s\n", i, name, msg);
		} else {
			nfail++;
			printf("not ok %d - %s: %s\n", i, name, msg);
		}
		fflush(stdout);
	}
	fprintf(stderr, "onnx node tests: %d passed, %d failed, %d skipped",
	    npass, nfail, nskip);
	for (i = 0, r = 0; i < NCLASS; i++)
		if (nwhy[i])
			fprintf(stderr, "%s%d %s", r++ ? ", " : " (", nwhy[i],
			    classes[i].label);
	fprintf(stderr, "%s\n", r ? ")" : "");
	return nfail ? AOE_EXIT_FALSE : AOE_EXIT_OK;
}
