/*
 * fuzz_report - aoe-report's input: its main, built from
 * tools/aoe-report.c with main renamed, on a file of records, writing its
 * result files into the scratch directory.
 */
#include <getopt.h>

#include "fuzz.h"

int aoe_report_main(int argc, char **argv);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_init();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	char path[1024], out[700];
	char *argv[] = { "aoe-report", "-q", "-o", out, "-n", "fuzz", path,
		NULL };

	if (n > 256 * 1024)
		return 0;
	fz_write("records.jsonl", d, n, path, sizeof(path));
	snprintf(out, sizeof(out), "%s/out", fz_dir);
	mkdir(out, 0755);
	optind = 0;		/* glibc: start getopt over */
	(void)aoe_report_main(7, argv);
	nftw(out, fz_rm, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}
