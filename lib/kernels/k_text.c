/*
 * k_text.c - TfIdfVectorizer (opset 9): the n-gram counts of each row of
 * a sequence of token ids, as term frequencies (TF), inverse document
 * frequencies (IDF: the weight of each n-gram present) or both (TFIDF).
 *
 * The pool holds the n-grams looked for, grouped by length: ngram_counts[i]
 * is where the (i+1)-grams start in pool_int64s, and n-gram j of the pool
 * (in pool order) is counted in output column ngram_indexes[j], with
 * weights[j] (default 1).  The n-grams of a row are its tokens taken every
 * skip_distance positions, for distances 1 to max_skip_count + 1, of
 * lengths min_gram_length to max_gram_length; a unigram is counted once a
 * position, whatever the distance (as ONNX's reference and ONNX Runtime
 * count).  Token ids are int32 or int64; a pool of strings (pool_strings)
 * and string inputs are not supported.  No knob: it is not tuned.
 */
#include <stdlib.h>
#include <string.h>

#include "aoe_kernels.h"
#include "kernel.h"

enum { TF, IDF, TFIDF };

typedef struct tfidf {
	int mode;
	int64_t min_n, max_n, max_skip;
	const int64_t *counts, *pool, *index;
	int ncounts, npool, nindex;
	const float *weights;
	int nweights;
	int64_t width;		/* output columns: the largest index + 1 */
} tfidf;

/* Read and check the node's attributes into t. */
static int
tfidf_attrs(const aoe_node *n, tfidf *t)
{
	const char *mode = aoe_attr_str(n, "mode", NULL);
	int i;

	memset(t, 0, sizeof(*t));
	if (aoe_attr_find(n, "pool_strings") != NULL)
		return aoe_err(AOE_EUNSUP, "TfIdfVectorizer '%s': a pool of "
		    "strings (data type 8) is not supported", n->name);
	if (mode == NULL || (strcmp(mode, "TF") != 0 &&
	    strcmp(mode, "IDF") != 0 && strcmp(mode, "TFIDF") != 0))
		return aoe_err(AOE_EDATA, "TfIdfVectorizer '%s': mode must be "
		    "TF, IDF or TFIDF", n->name);
	t->mode = mode[0] == 'T' ? (mode[2] ? TFIDF : TF) : IDF;
	t->min_n = aoe_attr_int(n, "min_gram_length", 0);
	t->max_n = aoe_attr_int(n, "max_gram_length", 0);
	t->max_skip = aoe_attr_int(n, "max_skip_count", 0);
	t->counts = aoe_attr_ints(n, "ngram_counts", &t->ncounts);
	t->index = aoe_attr_ints(n, "ngram_indexes", &t->nindex);
	t->pool = aoe_attr_ints(n, "pool_int64s", &t->npool);
	t->weights = aoe_attr_floats(n, "weights", &t->nweights);
	if (t->min_n < 1 || t->max_n < t->min_n || t->max_skip < 0 ||
	    t->max_skip > 1 << 20 || t->max_n > t->ncounts)
		return aoe_err(AOE_EDATA, "TfIdfVectorizer '%s': need 1 <= "
		    "min_gram_length <= max_gram_length <= the ngram_counts "
		    "given, and max_skip_count >= 0", n->name);
	if (t->pool == NULL || t->counts == NULL || t->index == NULL)
		return aoe_err(AOE_EDATA, "TfIdfVectorizer '%s': needs "
		    "pool_int64s, ngram_counts and ngram_indexes", n->name);
	for (i = 0; i < t->ncounts; i++)
		if (t->counts[i] < 0 || t->counts[i] > t->npool ||
		    (i && t->counts[i] < t->counts[i - 1]))
			return aoe_err(AOE_EDATA, "TfIdfVectorizer '%s': "
			    "ngram_counts must rise within the pool", n->name);
	/* The pool's n-grams, in order: one index (and weight) each. */
	{
		int64_t ngrams = 0, end;
		for (i = 0; i < t->ncounts; i++) {
			end = i + 1 < t->ncounts ? t->counts[i + 1] : t->npool;
			if ((end - t->counts[i]) % (i + 1) != 0)
				return aoe_err(AOE_EDATA, "TfIdfVectorizer "
				    "'%s': the %d-grams of the pool are not a "
				    "whole number", n->name, i + 1);
			ngrams += (end - t->counts[i]) / (i + 1);
		}
		if (ngrams != t->nindex || (t->weights != NULL &&
		    t->nweights != t->nindex))
			return aoe_err(AOE_EDATA, "TfIdfVectorizer '%s': %d "
			    "ngram_indexes (and weights) for %lld n-grams",
			    n->name, t->nindex, (long long)ngrams);
	}
	t->width = 0;
	for (i = 0; i < t->nindex; i++) {
		if (t->index[i] < 0 || t->index[i] > 1 << 28)
			return aoe_err(AOE_EDATA, "TfIdfVectorizer '%s': "
			    "ngram index %lld is out of range", n->name,
			    (long long)t->index[i]);
		if (t->index[i] + 1 > t->width)
			t->width = t->index[i] + 1;
	}
	return 0;
}

static int
tfidf_infer(aoe_graph *g, aoe_node *n)
{
	const aoe_tensor *x = aoe_in(g, n, 0);
	int64_t dims[2];
	tfidf t;
	int rc;

	if ((rc = tfidf_attrs(n, &t)) < 0)
		return rc;
	if (x->dtype != AOE_I32 && x->dtype != AOE_I64)
		return aoe_err(AOE_EUNSUP, "TfIdfVectorizer '%s': input of "
		    "type %s; only int32 and int64 token ids are supported",
		    n->name, aoe_dtype_name(x->dtype));
	if (x->ndim != 1 && x->ndim != 2)
		return aoe_err(AOE_EDATA, "TfIdfVectorizer '%s': the input "
		    "must be [C] or [N, C]", n->name);
	if (x->ndim == 1) {
		dims[0] = t.width;
		return aoe_set_output(g, n, 0, AOE_F32, 1, dims);
	}
	dims[0] = x->dims[0];
	dims[1] = t.width;
	return aoe_set_output(g, n, 0, AOE_F32, 2, dims);
}

/* Token i of row r. */
static int64_t
token(const aoe_tensor *x, int64_t r, int64_t c, int64_t i)
{
	return x->dtype == AOE_I64 ? ((const int64_t *)x->data)[r * c + i] :
	    ((const int32_t *)x->data)[r * c + i];
}

/*
 * The pool's index of the n-gram of row r starting at s every d tokens,
 * or -1.  Pools are small: a linear search of the n-grams of length n.
 */
static int64_t
find_ngram(const tfidf *t, const aoe_tensor *x, int64_t r, int64_t c,
    int64_t s, int64_t d, int64_t n)
{
	int64_t first = 0, beg = t->counts[n - 1], end, j, k;
	int i;

	end = n < t->ncounts ? t->counts[n] : t->npool;
	for (i = 0; i < n - 1; i++)
		first += ((i + 1 < t->ncounts ? t->counts[i + 1] : t->npool) -
		    t->counts[i]) / (i + 1);
	for (j = beg; j + n <= end; j += n) {
		for (k = 0; k < n; k++)
			if (t->pool[j + k] != token(x, r, c, s + k * d))
				break;
		if (k == n)
			return first + (j - beg) / n;
	}
	return -1;
}

static int
tfidf_run(aoe_kctx *k)
{
	const aoe_tensor *x = aoe_in(k->g, k->n, 0);
	float *y = aoe_out(k->g, k->n, 0)->data;
	int64_t rows = x->ndim == 2 ? x->dims[0] : 1;
	int64_t c = x->dims[x->ndim - 1], r, d, s, n, j, least;
	int64_t *freq;
	tfidf t;
	int rc;

	if ((rc = tfidf_attrs(k->n, &t)) < 0)
		return rc;
	memset(y, 0, (size_t)(rows * t.width) * sizeof(float));
	freq = aoe_xcalloc((size_t)t.nindex + 1, sizeof(int64_t));
	for (r = 0; r < rows; r++) {
		memset(freq, 0, (size_t)t.nindex * sizeof(int64_t));
		least = t.min_n;
		for (d = 1; d <= t.max_skip + 1; d++) {
			for (s = 0; s < c && s + d * (least - 1) < c; s++)
				for (n = least; n <= t.max_n &&
				    s + d * (n - 1) < c; n++)
					if ((j = find_ngram(&t, x, r, c, s, d,
					    n)) >= 0)
						freq[j]++;
			/* Unigrams are counted at the first distance only. */
			if (least == 1 && ++least > t.max_n)
				break;
		}
		for (j = 0; j < t.nindex; j++) {
			float w = t.weights ? t.weights[j] : 1.0f;
			float *o = &y[r * t.width + t.index[j]];
			if (t.mode == TF)
				*o = (float)freq[j];
			else if (t.mode == IDF)
				*o = freq[j] > 0 ? w : 0.0f;
			else
				*o = (float)freq[j] * w;
		}
	}
	free(freq);
	return 0;
}

const aoe_op aoe_ops_text[] = {
	{ "TfIdfVectorizer", tfidf_infer, tfidf_run, NULL, NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};
