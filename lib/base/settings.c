/*
 * settings.c - aoe's settings, AOE's names, read in one place: the
 * defaults, then aoe.ini ($AOE_INI, else ./aoe.ini when there is one),
 * then the environment, which wins.  Numbers are range-checked and
 * True/False values must be spelled one of the accepted ways; a bad
 * value is -AOE_EDATA with a message naming the setting, where it was
 * read and what is allowed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "aoe_base.h"

/* The ranges of the numeric settings (aoe(7)). */
#define TUNING_PARALLEL_MAX 64
#define TE_PARALLEL_MAX 32
#define RUN_LOOP_MAX 2048
#define MIN_DISK_GB_MAX 1000000000

int
aoe_envnum(const char *name, long long min, long long max, int *out)
{
	const char *v = getenv(name);
	long long x;

	if (v == NULL || *v == '\0')
		return 0;
	if (aoe_strtonum(v, min, max, &x) < 0)
		return aoe_err(AOE_EDATA, "%s '%s' is not a number from %lld "
		    "to %lld", name, v, min, max);
	*out = (int)x;
	return 1;
}

int
aoe_parse_bool(const char *v)
{
	static const char *const yes[] = { "true", "1", "on", "yes" };
	static const char *const no[] = { "false", "0", "off", "no" };
	size_t i;

	if (v == NULL)
		return -1;
	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcasecmp(v, yes[i]) == 0)
			return 1;
		if (strcasecmp(v, no[i]) == 0)
			return 0;
	}
	return -1;
}

int
aoe_env_true(const char *name)
{
	return aoe_parse_bool(getenv(name)) == 1;
}

int
aoe_env_mode(void)
{
	const char *v = getenv("AOE_MODE");

	if (v == NULL || *v == '\0')
		return 0;
	if (strcmp(v, "1") == 0 || strcmp(v, "2") == 0 ||
	    strcmp(v, "4") == 0)
		return v[0] - '0';
	return aoe_err(AOE_EDATA, "AOE_MODE='%s' is not valid: use 1 "
	    "(subgraph tuning) or 2 (operator tuning)", v);
}

/* A numeric setting, read at where (a file:line or "the environment"). */
static int
number(const char *name, const char *val, const char *where, long long min,
    long long max, int *out)
{
	long long v;

	if (aoe_strtonum(val, min, max, &v) < 0)
		return aoe_err(AOE_EDATA, "%s '%s' is %s (allowed %lld to "
		    "%lld) in %s", name, val, errno == ERANGE ?
		    "out of range" : "not a number", min, max, where);
	*out = (int)v;
	return 0;
}

/* A True/False setting, read at where. */
static int
boolean(const char *name, const char *val, const char *where, int *out)
{
	int b;

	if ((b = aoe_parse_bool(val)) < 0)
		return aoe_err(AOE_EDATA, "%s '%s' is neither True nor False "
		    "(allowed true, 1, on, yes or false, 0, off, no) in %s",
		    name, val, where);
	*out = b;
	return 0;
}

static char *
trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' ||
	    e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/* Read the KEY = value lines of aoe.ini; sections and comments are skipped. */
static int
read_ini(aoe_settings *s, const char *path)
{
	char line[2048], *k, *v, *eq, where[1100];
	FILE *fp;
	int rc = 0, lineno = 0;

	if ((fp = fopen(path, "r")) == NULL)
		return aoe_err(AOE_EIO, "cannot open '%s': %s", path,
		    strerror(errno));
	snprintf(s->ini, sizeof(s->ini), "%s", path);
	while (rc == 0 && fgets(line, sizeof(line), fp) != NULL) {
		lineno++;
		k = trim(line);
		if (*k == '\0' || *k == '#' || *k == ';' || *k == '[')
			continue;
		if ((eq = strchr(k, '=')) == NULL) {
			rc = aoe_err(AOE_EDATA, "%s:%d: expected KEY = value",
			    path, lineno);
			break;
		}
		*eq = '\0';
		k = trim(k);
		v = trim(eq + 1);
		snprintf(where, sizeof(where), "%s:%d", path, lineno);
		if (strcmp(k, "WORK_PATH") == 0)
			snprintf(s->work_path, sizeof(s->work_path), "%s", v);
		else if (strcmp(k, "TUNING_PARALLEL_NUM") == 0)
			rc = number(k, v, where, 1, TUNING_PARALLEL_MAX,
			    &s->tuning_parallel);
		else if (strcmp(k, "TE_PARALLEL_COMPILER") == 0) {
			rc = number(k, v, where, 1, TE_PARALLEL_MAX,
			    &s->te_parallel);
			s->te_parallel_given = 1;
		} else if (strcmp(k, "RUN_LOOP") == 0)
			rc = number(k, v, where, 1, RUN_LOOP_MAX, &s->run_loop);
		/* Other keys belong to other tools. */
	}
	fclose(fp);
	return rc;
}

/* The value of an environment variable, NULL when unset or empty. */
static const char *
env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

static int
read_env(aoe_settings *s)
{
	static const char here[] = "the environment";
	const char *v;
	int rc;

	if ((v = env("AOE_WORK_PATH")) != NULL)
		snprintf(s->work_path, sizeof(s->work_path), "%s", v);
	if ((v = env("TUNING_PARALLEL_NUM")) != NULL &&
	    (rc = number("TUNING_PARALLEL_NUM", v, here, 1,
	    TUNING_PARALLEL_MAX, &s->tuning_parallel)) < 0)
		return rc;
	if ((v = env("TE_PARALLEL_COMPILER")) != NULL) {
		if ((rc = number("TE_PARALLEL_COMPILER", v, here, 1,
		    TE_PARALLEL_MAX, &s->te_parallel)) < 0)
			return rc;
		s->te_parallel_given = 1;
	}
	if ((v = env("RUN_LOOP")) != NULL &&
	    (rc = number("RUN_LOOP", v, here, 1, RUN_LOOP_MAX,
	    &s->run_loop)) < 0)
		return rc;
	if ((v = env("AOE_MIN_DISK_GB")) != NULL &&
	    (rc = number("AOE_MIN_DISK_GB", v, here, 0, MIN_DISK_GB_MAX,
	    &s->min_disk_gb)) < 0)
		return rc;
	if ((v = env("REPEAT_TUNE")) != NULL &&
	    (rc = boolean("REPEAT_TUNE", v, here, &s->repeat_tune)) < 0)
		return rc;
	if ((rc = aoe_env_mode()) < 0)
		return rc;
	s->mode = rc;
	/* As libaoe's runtime reads them: anything not on is off. */
	s->static_memory = aoe_env_true("GE_USE_STATIC_MEMORY");
	s->profiling = aoe_env_true("PROFILING_MODE");
	if ((v = env("TUNE_BANK_PATH")) != NULL)
		snprintf(s->bank_path, sizeof(s->bank_path), "%s", v);
	if ((v = env("AOE_SOC_VERSION")) != NULL)
		snprintf(s->soc_version, sizeof(s->soc_version), "%s", v);
	return 0;
}

int
aoe_settings_te_parallel(const aoe_settings *s)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (s->te_parallel_given || s->te_parallel < n)
		return s->te_parallel;
	return n > 0 ? (int)n : 1;
}

int
aoe_settings_load(aoe_settings *s)
{
	const char *ini = env("AOE_INI");
	int rc;

	memset(s, 0, sizeof(*s));
	s->tuning_parallel = 8;
	s->te_parallel = 8;
	s->run_loop = 10;
	s->min_disk_gb = 20;
	snprintf(s->work_path, sizeof(s->work_path), ".");
	if (ini != NULL) {
		if ((rc = read_ini(s, ini)) < 0)
			return rc;
	} else if (access("aoe.ini", F_OK) == 0 &&
	    (rc = read_ini(s, "aoe.ini")) < 0)
		return rc;
	return read_env(s);
}
