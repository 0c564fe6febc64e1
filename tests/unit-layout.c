/*
 * unit-layout.c - the blocked layout NCHW8c (lib/kernels/k_layout.c): reorders
 * put every value where kernel.h says, zero the padding lanes, and come
 * back to the same tensor, on awkward channel and pixel counts.
 */
#include <stdlib.h>
#include <string.h>

#include "aoe.h"
#include "kernel.h"
#include "tap.h"

static void
check_reorder(int64_t n, int64_t c, int64_t sp, int nt)
{
	int64_t cb = (c + 7) / 8, i, ch, s, bad = 0, pad = 0;
	size_t plain = (size_t)(n * c * sp), blk = (size_t)(n * cb * 8 * sp);
	float *x = malloc((plain + 1) * sizeof(float));
	float *y = malloc((blk + 1) * sizeof(float));
	float *z = malloc((plain + 1) * sizeof(float));

	for (size_t k = 0; k < plain; k++)
		x[k] = frand();
	for (size_t k = 0; k < blk; k++)
		y[k] = 12345;
	aoe_to_8c(x, y, n, c, sp, nt);
	for (i = 0; i < n; i++)
		for (ch = 0; ch < cb * 8; ch++)
			for (s = 0; s < sp; s++) {
				float v = y[((i * cb + ch / 8) * sp + s) * 8 +
				    ch % 8];
				if (ch >= c)
					pad += v != 0;
				else
					bad += v != x[(i * c + ch) * sp + s];
			}
	memset(z, 0, (plain + 1) * sizeof(float));
	aoe_from_8c(y, z, n, c, sp, nt);
	ok(bad == 0 && pad == 0 && memcmp(x, z, plain * sizeof(float)) == 0,
	    "reorder %lldx%lldx%lld on %d threads: to NCHW8c and back",
	    (long long)n, (long long)c, (long long)sp, nt);
	free(x);
	free(y);
	free(z);
}

int
main(void)
{
	static const int64_t cs[] = { 1, 3, 8, 9, 17, 64 };
	static const int64_t sps[] = { 1, 7, 8, 13, 3136 };

	for (size_t a = 0; a < sizeof(cs) / sizeof(cs[0]); a++)
		for (size_t b = 0; b < sizeof(sps) / sizeof(sps[0]); b++)
			check_reorder(a % 2 ? 2 : 1, cs[a], sps[b],
			    b % 2 ? 2 : 1);
	return done_testing();
}
