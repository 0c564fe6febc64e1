/*
 * cpu.c - what this CPU is: the soc_version that names the measuring
 * hardware in every bank entry, and whether the AVX-512 kernels may run.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base.h"

/*
 * Whether the AVX-512 kernels may run: the CPU has AVX-512F (and the
 * system saves its registers), and AOE_MAX_ISA=avx2 does not cap libaoe
 * to what an AVX2-only machine runs.  Read once.
 */
static int isa_avx512;
static pthread_once_t isa_once = PTHREAD_ONCE_INIT;

static void
isa_init(void)
{
	const char *e = getenv("AOE_MAX_ISA");

	__builtin_cpu_init();
	isa_avx512 = __builtin_cpu_supports("avx512f") != 0;
	if (e == NULL || e[0] == '\0' || strcasecmp(e, "avx512") == 0)
		return;
	if (strcasecmp(e, "avx2") == 0)
		isa_avx512 = 0;
	else
		aoe_warnx("AOE_MAX_ISA '%s' is neither avx2 nor avx512: "
		    "ignored", e);
}

static _Thread_local int isa_override = -1;

int
aoe_cpu_avx512(void)
{
	if (isa_override >= 0)
		return isa_override;
	pthread_once(&isa_once, isa_init);
	return isa_avx512;
}

int
aoe_cpu_isa_override(int avx512)
{
	int old = isa_override;

	isa_override = avx512 < 0 ? -1 : avx512 != 0;
	return old;
}

int
aoe_cpu_isa_forced(void)
{
	return isa_override;
}

int
aoe_soc_avx512(const char *soc)
{
	const char *p = soc ? strstr(soc, "x86-64-v") : NULL;

	if (p == NULL || p[8] < '1' || p[8] > '9')
		return -1;
	return p[8] >= '4';
}
/*
 * soc_version: vendor, family, model and x86-64 ISA level, e.g.
 * "GenuineIntel_f6_m85_x86-64-v4"; AOE_SOC_VERSION overrides it.
 */
static char soc[128];
static pthread_once_t soc_once = PTHREAD_ONCE_INIT;

static int
has_flags(const char *flags, const char *const *want)
{
	char pat[64];

	for (; *want; want++) {
		snprintf(pat, sizeof(pat), " %s ", *want);
		if (strstr(flags, pat) == NULL)
			return 0;
	}
	return 1;
}

int
aoe_soc_valid(const char *s)
{
	size_t i;

	if (s == NULL || s[0] == '\0' || s[0] == '.' || strlen(s) > 100)
		return 0;
	for (i = 0; s[i]; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '.' &&
		    s[i] != '_' && s[i] != '-')
			return 0;
	return 1;
}

static void
soc_detect(void)
{
	static const char *const v2[] = { "cx16", "lahf_lm", "popcnt",
	    "sse4_1", "sse4_2", "ssse3", NULL };
	static const char *const v3[] = { "avx", "avx2", "bmi1", "bmi2",
	    "f16c", "fma", "movbe", "xsave", NULL };
	static const char *const v4[] = { "avx512f", "avx512bw", "avx512cd",
	    "avx512dq", "avx512vl", NULL };
	char line[8192], vendor[64] = "", impl[32] = "", part[32] = "";
	char *flags = NULL, *p;
	const char *env = getenv("AOE_SOC_VERSION");
	int family = -1, model = -1, level = 1;
	size_t i;
	FILE *fp;

	if (env && env[0]) {
		snprintf(soc, sizeof(soc), "%s", env);
		if (!aoe_soc_valid(soc)) {
			for (i = 0; soc[i]; i++)
				if (!isalnum((unsigned char)soc[i]) &&
				    soc[i] != '.' && soc[i] != '-')
					soc[i] = '_';
			if (soc[0] == '.')
				soc[0] = '_';
			aoe_warnx("AOE_SOC_VERSION '%s' is not a safe file "
			    "name; using '%s'", env, soc);
		}
		return;
	}
	if ((fp = fopen("/proc/cpuinfo", "r")) != NULL) {
		while (fgets(line, sizeof(line), fp) != NULL) {
			if ((p = strchr(line, ':')) == NULL) {
				if (line[0] == '\n' && vendor[0])
					break;	/* the first processor only */
				continue;
			}
			*p++ = '\0';
			p += strspn(p, " \t");
			p[strcspn(p, "\n")] = '\0';
			for (i = strlen(line); i > 0 && (line[i - 1] == ' ' ||
			    line[i - 1] == '\t'); i--)
				line[i - 1] = '\0';
			if (strcmp(line, "vendor_id") == 0)
				snprintf(vendor, sizeof(vendor), "%s", p);
			else if (strcmp(line, "cpu family") == 0)
				family = atoi(p);
			else if (strcmp(line, "model") == 0)
				model = atoi(p);
			else if (strcmp(line, "flags") == 0 && !flags) {
				size_t l = strlen(p);
				flags = aoe_xmalloc(l + 3);
				snprintf(flags, l + 3, " %s ", p);
			} else if (strcmp(line, "CPU implementer") == 0)
				snprintf(impl, sizeof(impl), "%s", p);
			else if (strcmp(line, "CPU part") == 0)
				snprintf(part, sizeof(part), "%s", p);
		}
		fclose(fp);
	}
	if (vendor[0] && flags) {
		if (has_flags(flags, v2))
			level = 2;
		if (level == 2 && has_flags(flags, v3))
			level = 3;
		/*
		 * Level 4 only when libaoe may use it: under AOE_MAX_ISA=avx2
		 * it tunes and runs as on an AVX2 machine, and its banks say so.
		 */
		if (level == 3 && has_flags(flags, v4) && aoe_cpu_avx512())
			level = 4;
		snprintf(soc, sizeof(soc), "%s_f%d_m%d_x86-64-v%d", vendor,
		    family, model, level);
	} else if (impl[0])
		snprintf(soc, sizeof(soc), "arm_i%s_p%s_aarch64", impl, part);
	else
		snprintf(soc, sizeof(soc), "unknown");
	free(flags);
	for (i = 0; soc[i]; i++)
		if (!isalnum((unsigned char)soc[i]) && soc[i] != '.' &&
		    soc[i] != '-')
			soc[i] = '_';
}

const char *
aoe_soc_version(void)
{
	pthread_once(&soc_once, soc_detect);
	return soc;
}
