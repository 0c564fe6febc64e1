/*
 * embed - a program that embeds libaoe through its session API alone
 * (aoe_session.h), as a user's would: it is built against the installed
 * tree with pkg-config by tests/install.t, and runs under AOE_MODE in
 * tests/session-mode.t.
 *
 * usage: embed model [d0,d1,... ...]
 *
 * It runs the model once for each shape given for its first input (the
 * declared one when none is), the inputs filled with a fixed ramp, and
 * prints each output's name, shape and sum.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <aoe_session.h>

/* Parse "d0,d1,..." into v. */
static int
parse_shape(const char *s, aoe_value *v)
{
	char *end;
	long long d;

	v->ndim = 0;
	while (*s) {
		d = strtoll(s, &end, 10);
		if (end == s || d < 0 || d > 1 << 20 || v->ndim == 8 ||
		    (*end != ',' && *end != '\0'))
			return -1;
		v->dims[v->ndim++] = d;
		s = *end ? end + 1 : end;
	}
	return 0;
}

/* An input of info's type and v's shape, a ramp of values. */
static int
make_input(const aoe_tensor_info *info, aoe_value *v)
{
	size_t n = 1, i;
	int d;

	v->dtype = info->dtype;
	for (d = 0; d < v->ndim; d++)
		n *= (size_t)v->dims[d];
	if (info->dtype != AOE_TYPE_FLOAT && info->dtype != AOE_TYPE_INT64)
		return -1;
	v->nbytes = n * (info->dtype == AOE_TYPE_FLOAT ? 4 : 8);
	if ((v->data = malloc(v->nbytes ? v->nbytes : 1)) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		if (info->dtype == AOE_TYPE_FLOAT)
			((float *)v->data)[i] = (float)(i % 17) / 17.0f - 0.5f;
		else
			((int64_t *)v->data)[i] = (int64_t)(i % 7);
	}
	return 0;
}

static void
print_outputs(aoe_session *s, const aoe_value *out)
{
	aoe_tensor_info info;
	double sum;
	size_t i, n;
	int k, d;

	for (k = 0; k < aoe_session_noutputs(s); k++) {
		aoe_session_output(s, k, &info);
		printf("%s ", info.name);
		for (d = 0; d < out[k].ndim; d++)
			printf("%s%" PRId64, d ? "x" : "", out[k].dims[d]);
		n = out[k].nbytes / 4;
		for (sum = 0, i = 0; out[k].dtype == AOE_TYPE_FLOAT && i < n;
		    i++)
			sum += ((const float *)out[k].data)[i];
		printf(" sum=%.4f\n", sum);
	}
}

int
main(int argc, char **argv)
{
	aoe_session_options o;
	aoe_session *s;
	aoe_tensor_info info;
	aoe_value in, out[16];
	int a, k, d;

	if (argc < 2) {
		fprintf(stderr, "usage: embed model [d0,d1,... ...]\n");
		return 2;
	}
	aoe_session_options_init(&o);
	if (aoe_session_open(argv[1], &o, &s) < 0) {
		fprintf(stderr, "embed: %s\n", aoe_errmsg());
		return 1;
	}
	if (aoe_session_ninputs(s) != 1 || aoe_session_noutputs(s) > 16) {
		fprintf(stderr, "embed: wants one input, at most 16 outputs\n");
		return 1;
	}
	aoe_session_input(s, 0, &info);
	for (a = 2; a < argc || a == 2; a++) {
		memset(&in, 0, sizeof(in));
		memset(out, 0, sizeof(out));
		if (a < argc && parse_shape(argv[a], &in) < 0) {
			fprintf(stderr, "embed: bad shape '%s'\n", argv[a]);
			return 2;
		}
		if (a >= argc) {
			in.ndim = info.ndim;
			for (d = 0; d < info.ndim; d++)
				in.dims[d] = info.dims[d] < 0 ? 1 :
				    info.dims[d];
		}
		if (make_input(&info, &in) < 0 ||
		    aoe_session_run(s, &in, out) < 0) {
			fprintf(stderr, "embed: %s\n", aoe_errmsg());
			return 1;
		}
		print_outputs(s, out);
		for (k = 0; k < aoe_session_noutputs(s); k++)
			aoe_value_free(&out[k]);
		free(in.data);
	}
	aoe_session_close(s);
	return 0;
}
