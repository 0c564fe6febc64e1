/*
 * fuzz_records - the JSON Lines records the tools read: aoe-opat's
 * timings (--select, --replay), each line as a timing, and tuning
 * records committed to a scratch bank (aoe-bank commit's batch), empty
 * for each input.
 */
#include <cjson/cJSON.h>

#include "fuzz.h"
#include "opat.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_init();
	return 0;
}

static void
rec_lines(const uint8_t *d, size_t n)
{
	char *buf = aoe_xmalloc(n + 1), *line, *save = NULL, why[256];
	aoe_bank_batch *b;
	aoe_bank_opts o;
	aoe_bank_counts c[2];
	char bank[700];
	int admitted = 0;

	memcpy(buf, d, n);
	buf[n] = '\0';
	snprintf(bank, sizeof(bank), "%s/commit", fz_dir);
	mkdir(bank, 0755);
	aoe_bank_opts_init(&o);
	o.bank = bank;
	o.quiet = 1;
	b = aoe_bank_batch_new(&o);
	for (line = strtok_r(buf, "\n", &save); line;
	    line = strtok_r(NULL, "\n", &save)) {
		cJSON *j = cJSON_Parse(line);
		opat_timing t;
		if (j == NULL)
			continue;
		opat_timing_from_json(j, &t);
		if (aoe_bank_batch_add(b, j, why, sizeof(why)) == 0)
			admitted++;
		cJSON_Delete(j);
	}
	if (admitted)
		(void)aoe_bank_batch_commit(b, c);
	aoe_bank_batch_free(b);
	free(buf);
	/*
	 * An empty bank for each input: one kept across inputs grows with
	 * every admitted record, and each commit merges (and checks) all of
	 * it again, and an input's result would hang on the inputs before.
	 */
	nftw(bank, fz_rm, 16, FTW_DEPTH | FTW_PHYS);
}

int
LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	char path[1024], *argv[1];
	opat_run r;

	if (n > 256 * 1024)
		return 0;
	fz_write("records.jsonl", d, n, path, sizeof(path));
	argv[0] = path;
	memset(&r, 0, sizeof(r));
	opat_opts_init(&r.o);
	r.o.use_bank = 0;
	r.out = fopen("/dev/null", "w");
	(void)opat_select_stream(&r, 1, argv);
	fclose(r.out);
	opat_run_free(&r);
	memset(&r, 0, sizeof(r));
	opat_opts_init(&r.o);
	r.o.use_bank = 0;
	(void)opat_load_replay(&r, path);
	opat_run_free(&r);
	rec_lines(d, n);
	return 0;
}
