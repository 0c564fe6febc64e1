/*
 * fuzz_graph - aoe-graph(5) JSON (lib/ir/json.c): load, prepare and one
 * run within small limits (run.h), then write it back.
 */
#include "run.h"

int
LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	aoe_graph *g = NULL;
	FILE *fp;

	fz_init();
	/* Relative const files resolve from the fuzz directory. */
	fz_model(d, n, "fuzz.json");
	if (n <= FZ_MAX_INPUT && aoe_json_load_mem(d, n, "fuzz.json", &g) ==
	    0) {
		if ((fp = fopen("/dev/null", "w")) != NULL) {
			(void)aoe_json_save(g, fp);
			fclose(fp);
		}
		aoe_graph_free(g);
	}
	return 0;
}
