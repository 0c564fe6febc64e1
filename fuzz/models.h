/*
 * models.h - small prepared graphs with a node of every kernel family that
 * has a search space (gemm, conv, elem, norm, pool, shape, rnn, einsum,
 * train, scatter, rearr, quant): ONNX's node tests, and the bundled
 * example.  The harnesses of schedules and banks run on them.
 */
#ifndef AOE_FUZZ_MODELS_H
#define AOE_FUZZ_MODELS_H

#include "fuzz.h"

#ifndef FZ_NODEDIR
#define FZ_NODEDIR "/usr/share/libonnx-testdata/data/node"
#endif
#ifndef FZ_EXAMPLE
#define FZ_EXAMPLE "share/aoe/models/example.onnx"
#endif

static const char *const fz_model_names[] = {
	"test_gemm_default_no_bias", "test_matmul_2d",
	"test_conv_with_strides_padding", "test_convtranspose", "test_add",
	"test_sigmoid", "test_relu", "test_softmax_axis_0",
	"test_layer_normalization_2d_axis0", "test_batchnorm_example",
	"test_instancenorm_example", "test_maxpool_2d_default",
	"test_averagepool_2d_default",
	"test_reduce_mean_default_axes_keepdims_example",
	"test_transpose_default", "test_concat_2d_axis_0",
	"test_flatten_axis0", "test_lstm_defaults",
	"test_gru_defaults", "test_einsum_batch_matmul", "test_sce_mean",
	"test_scatter_elements_with_axis", "test_depthtospace_example",
	"test_qlinearmatmul_2D", "test_quantizelinear", NULL
};

#define FZ_MAXMODELS 32
static aoe_graph *fz_g[FZ_MAXMODELS];
static int fz_ng;
static char fz_path[FZ_MAXMODELS][1024];
/* 1: the model runs with its default schedules (on its random data). */
static int fz_runs[FZ_MAXMODELS];
static aoe_run_opts fz_ro;

static int
fz_prepare(aoe_graph *g)
{
	int i;

	if (aoe_graph_check_inputs(g) < 0 || aoe_graph_prepare(g, &fz_ro) < 0)
		return -1;
	for (i = 0; i < g->ninputs; i++) {
		aoe_tensor *t = g->tensors[g->inputs[i]];
		size_t nb = aoe_tensor_nbytes(t);
		if (t->data == NULL) {
			t->data = aoe_xcalloc(1, nb ? nb : 1);
			t->owned = 1;
		}
	}
	aoe_graph_fill_inputs(g, 1);
	return 0;
}

/* Load and prepare the models (bank lookups as use_bank says). */
static void
fz_load_models(int use_bank)
{
	char path[1024];
	const char *ex = getenv("AOE_FUZZ_EXAMPLE");
	int i;

	aoe_run_opts_init(&fz_ro);
	fz_ro.nthreads = 1;
	fz_ro.profile = 0;
	fz_ro.use_bank = use_bank;
	for (i = -1; i < 0 || fz_model_names[i]; i++) {
		aoe_graph *g;
		if (i < 0)
			snprintf(path, sizeof(path), "%s", ex ? ex : FZ_EXAMPLE);
		else
			snprintf(path, sizeof(path), "%s/%s/model.onnx",
			    FZ_NODEDIR, fz_model_names[i]);
		if (aoe_model_load(path, &g) < 0)
			continue;
		if (fz_prepare(g) < 0) {
			fprintf(stderr, "fuzz: %s does not prepare: %s\n",
			    path, aoe_errmsg());
			aoe_graph_free(g);
			continue;
		}
		snprintf(fz_path[fz_ng], sizeof(fz_path[0]), "%s", path);
		fz_runs[fz_ng] = aoe_graph_run(g, &fz_ro) == 0;
		fz_g[fz_ng++] = g;
	}
	if (fz_ng == 0) {
		fprintf(stderr, "fuzz: no model loads\n");
		abort();
	}
}

#endif
