/*
 * progress.c - the progress a tuning run shows on stderr (aoe-opat,
 * aoe-sgat): one line redrawn in place on a terminal, a line for each
 * case as it ends, and a summary at the end.  Never on stdout.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "tune.h"

static const char *const outcomes[TPROG_NOUT] = { "add", "update",
	"reserved", "unsatisfied", "failed" };

void
aoe_tprog_init(aoe_tprog *p, int on, int ncases)
{
	memset(p, 0, sizeof(*p));
	p->on = on;
	p->tty = isatty(2);
	p->ncases = ncases;
	p->t0 = aoe_now_us();
}

/* Minutes and seconds, or hours and minutes, of s seconds. */
static void
hms(double s, char *buf, size_t len)
{
	long t = s > 0 ? (long)(s + 0.5) : 0;

	if (t >= 3600)
		snprintf(buf, len, "%ldh%02ldm", t / 3600, t / 60 % 60);
	else
		snprintf(buf, len, "%ldm%02lds", t / 60, t % 60);
}

/* The terminal's width, so that the line never wraps (a wrapped line
 * cannot be redrawn with a carriage return). */
static int
columns(void)
{
	struct winsize ws;

	if (ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	return 80;
}

void
aoe_tprog_update(aoe_tprog *p, const char *what, const char *step,
    double gain, double eta_s)
{
	char line[512], eta[32];
	int n, w;

	if (!p->on || !p->tty)
		return;
	if (eta_s >= 0)
		hms(eta_s, eta, sizeof(eta));
	else
		snprintf(eta, sizeof(eta), "?");
	n = snprintf(line, sizeof(line), "[%d done, %d left] %.48s  %s  "
	    "gain %+.1f%%  ETA %s", p->ndone, p->ncases - p->ndone, what,
	    step, 100 * gain, eta);
	w = columns() - 1;
	if (n > w && w > 0 && w < (int)sizeof(line))
		line[w] = '\0';
	fprintf(stderr, "\r\033[K%s", line);
	fflush(stderr);
}

/* The index of outcome o in outcomes[], or -1. */
static int
outcome_index(const char *o)
{
	int i;

	for (i = 0; o && i < TPROG_NOUT; i++)
		if (strcmp(o, outcomes[i]) == 0)
			return i;
	return -1;
}

void
aoe_tprog_case(aoe_tprog *p, const char *what, const char *outcome,
    double before_us, double after_us, int trials, double spent_s,
    double eta_s)
{
	char eta[32];
	int i, won;

	p->ndone++;
	if ((i = outcome_index(outcome)) >= 0)
		p->nout[i]++;
	won = outcome && (strcmp(outcome, "add") == 0 ||
	    strcmp(outcome, "update") == 0);
	if (before_us > 0 && after_us > 0) {
		p->before_us += before_us;
		if (won)
			p->saved_us += before_us - after_us;
	}
	if (!p->on)
		return;
	hms(eta_s, eta, sizeof(eta));
	fprintf(stderr, "%s[%d/%d] %s: %s", p->tty ? "\r\033[K" : "",
	    p->ndone, p->ncases, what, outcome ? outcome : "?");
	if (before_us > 0 && after_us > 0 && won)
		fprintf(stderr, " %.1f -> %.1f us (gain %.1f%%)", before_us,
		    after_us, 100 * (before_us - after_us) / before_us);
	else if (before_us > 0 && after_us > 0 && after_us < before_us)
		fprintf(stderr, ", %.1f us kept (best candidate %.1f us, "
		    "not beyond the noise)", before_us, after_us);
	else if (before_us > 0)
		fprintf(stderr, ", %.1f us kept", before_us);
	fprintf(stderr, ", %d trials, %.1f s; %d left", trials, spent_s,
	    p->ncases - p->ndone);
	if (p->ndone < p->ncases && eta_s >= 0)
		fprintf(stderr, ", ETA %s", eta);
	fputc('\n', stderr);
	fflush(stderr);
}

void
aoe_tprog_backout(aoe_tprog *p, const char *was, const char *now,
    double before_us, double after_us)
{
	aoe_tprog_recount(p, was, now, before_us > 0 && after_us > 0 ?
	    after_us - before_us : 0);
	p->nbacked++;
}

void
aoe_tprog_recount(aoe_tprog *p, const char *was, const char *now,
    double saved_us)
{
	int i = outcome_index(was), j = outcome_index(now);

	if (i >= 0 && p->nout[i] > 0)
		p->nout[i]--;
	if (j >= 0)
		p->nout[j]++;
	p->saved_us += saved_us;
}

void
aoe_tprog_end(aoe_tprog *p, const char *what)
{
	char took[32];
	int i;

	if (!p->on)
		return;
	hms((aoe_now_us() - p->t0) / 1e6, took, sizeof(took));
	fprintf(stderr, "%s%s: %d %s in %s:", p->tty ? "\r\033[K" : "",
	    aoe_progname(), p->ndone, what, took);
	for (i = 0; i < TPROG_NOUT; i++)
		fprintf(stderr, "%s %d %s", i ? "," : "", p->nout[i],
		    outcomes[i]);
	if (p->nbacked)
		fprintf(stderr, " (%d backed out by the whole-model check)",
		    p->nbacked);
	if (p->before_us > 0)
		fprintf(stderr, "; %.1f of %.1f us saved (%.1f%%)",
		    p->saved_us, p->before_us, 100 * p->saved_us /
		    p->before_us);
	fputc('\n', stderr);
	fflush(stderr);
}

void
aoe_tprog_note(aoe_tprog *p, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int w;

	if (!p->on || !p->tty)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	w = columns() - 1;
	if (w > 0 && w < (int)sizeof(line))
		line[w] = '\0';
	fprintf(stderr, "\r\033[K%s", line);
	fflush(stderr);
}
