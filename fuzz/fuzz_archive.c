/*
 * fuzz_archive - aoe-bank import of an archive (libarchive): into an empty
 * scratch bank each time, then verified.
 */
#include "fuzz.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_init();
	return 0;
}

static void
arch_bad(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

int
LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	char path[1024], bank[700], file[PATH_MAX];
	aoe_bank_opts o;
	aoe_bank_counts c;

	if (n > 256 * 1024)
		return 0;
	fz_write("in.tar", d, n, path, sizeof(path));
	snprintf(bank, sizeof(bank), "%s/imp", fz_dir);
	mkdir(bank, 0755);
	aoe_bank_opts_init(&o);
	o.bank = bank;
	o.quiet = 1;
	o.max_size = 1 << 20;
	if (aoe_bank_import(&o, path, &c) == 0 && c.file[0]) {
		/* What import wrote verifies. */
		snprintf(file, sizeof(file), "%s", c.file);
		if (aoe_bank_verify(&o, file, arch_bad, NULL, &c) < 0) {
			fprintf(stderr, "imported bank does not verify: %s\n",
			    aoe_errmsg());
			abort();
		}
		unlink(file);
	}
	return 0;
}
