/*
 * tap.h - the TAP helpers of the C unit tests (tests/unit-*.c): one "ok"
 * or "not ok" line a check, the plan printed at the end, and a seeded
 * random number source so that every run draws the same cases.
 */
#ifndef TESTS_TAP_H
#define TESTS_TAP_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "aoe.h"

static int n_test, n_fail;

/* One check: "ok N - what", or "not ok" with libaoe's last error. */
static void __attribute__((format(printf, 2, 3), unused))
ok(int cond, const char *fmt, ...)
{
	va_list ap;

	n_test++;
	if (!cond)
		n_fail++;
	printf("%sok %d - ", cond ? "" : "not ", n_test);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!cond)
		printf("# last error: %s\n", aoe_errmsg());
}

/* A check that cannot run here, and why. */
static void __attribute__((format(printf, 2, 3), unused))
skip(const char *why, const char *fmt, ...)
{
	va_list ap;

	n_test++;
	printf("ok %d - ", n_test);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" # SKIP %s\n", why);
}

/* Print the plan; the exit status of the test program. */
static int __attribute__((unused))
done_testing(void)
{
	printf("1..%d\n", n_test);
	return n_fail != 0;
}

static uint64_t rstate = 88172645463325252ULL;

/* Uniform in [-1, 1), from a fixed seed (xorshift64). */
static float __attribute__((unused))
frand(void)
{
	rstate ^= rstate << 13;
	rstate ^= rstate >> 7;
	rstate ^= rstate << 17;
	return (float)((double)(rstate >> 11) / 9007199254740992.0 * 2 - 1);
}

#endif
