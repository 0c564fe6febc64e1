/*
 * fuzz.h - what the libFuzzer harnesses share: a scratch directory of
 * their own (removed at exit), so that no bank, lock or result file of the
 * host is touched, and input written to a file for the code that reads
 * files by path.
 */
#ifndef AOE_FUZZ_H
#define AOE_FUZZ_H

#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aoe.h"

static char fz_dir[512];

static int
fz_rm(const char *p, const struct stat *st, int type, struct FTW *f)
{
	(void)st; (void)type; (void)f;
	return remove(p);
}

static void
fz_cleanup(void)
{
	if (fz_dir[0])
		nftw(fz_dir, fz_rm, 16, FTW_DEPTH | FTW_PHYS);
}

/* The scratch directory, with the banks and locks pointed into it. */
static void
fz_init(void)
{
	const char *t = getenv("TMPDIR");
	char p[600];

	if (fz_dir[0])
		return;
	snprintf(fz_dir, sizeof(fz_dir), "%s/aoe-fuzz.XXXXXX",
	    t && *t ? t : "/tmp");
	if (mkdtemp(fz_dir) == NULL) {
		perror("mkdtemp");
		abort();
	}
	atexit(fz_cleanup);
	snprintf(p, sizeof(p), "%s/bank", fz_dir);
	mkdir(p, 0755);
	setenv("TUNE_BANK_PATH", p, 1);
	snprintf(p, sizeof(p), "%s/builtin", fz_dir);
	mkdir(p, 0755);
	setenv("AOE_BUILTIN_BANK", p, 1);
	snprintf(p, sizeof(p), "%s/device.lock", fz_dir);
	setenv("AOE_DEVICE_LOCK", p, 1);
	snprintf(p, sizeof(p), "%s/measure.lock", fz_dir);
	setenv("AOE_MEASURE_LOCK", p, 1);
	setenv("HOME", fz_dir, 1);
	unsetenv("AOE_MODE");
}

/* Write d to the scratch file name; its path in path. */
static void
fz_write(const char *name, const uint8_t *d, size_t n, char *path,
    size_t len)
{
	FILE *fp;

	snprintf(path, len, "%s/%s", fz_dir, name);
	if ((fp = fopen(path, "wb")) == NULL ||
	    (n && fwrite(d, 1, n, fp) != n) || fclose(fp) != 0) {
		perror(path);
		abort();
	}
}

#endif
