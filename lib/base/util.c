/*
 * util.c - errors, messages, allocation, number parsing, files, clocks.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base.h"

static __thread char errbuf[1024];
static const char *prog = "aoe";

int
aoe_err(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errbuf, sizeof(errbuf), fmt, ap);
	va_end(ap);
	return -code;
}

const char *
aoe_errmsg(void)
{
	return errbuf[0] ? errbuf : "unknown error";
}

int
aoe_exit_status(int rc)
{
	if (rc >= 0)
		return AOE_EXIT_OK;
	switch (-rc) {
	case AOE_EDATA:
		return AOE_EXIT_DATA;
	case AOE_EUNSUP:
		return AOE_EXIT_UNSUP;
	case AOE_EIO:
		return AOE_EXIT_IO;
	case AOE_ENOMEM:
		return AOE_EXIT_NOMEM;
	default:
		return AOE_EXIT_INTERNAL;
	}
}

void
aoe_setprogname(const char *argv0)
{
	const char *p = strrchr(argv0, '/');

	prog = p ? p + 1 : argv0;
}

const char *
aoe_progname(void)
{
	return prog;
}

void
aoe_warnx(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void
aoe_warn(const char *fmt, ...)
{
	va_list ap;
	int e = errno;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", strerror(e));
}

static void
nomem(void)
{
	fprintf(stderr, "%s: out of memory\n", prog);
	exit(AOE_EXIT_NOMEM);
}

void *
aoe_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		nomem();
	return p;
}

void *
aoe_xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz ? sz : 1);

	if (p == NULL)
		nomem();
	return p;
}

void *
aoe_xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (p == NULL)
		nomem();
	return p;
}

char *
aoe_xstrdup(const char *s)
{
	char *p;

	if (s == NULL)
		return NULL;
	p = strdup(s);
	if (p == NULL)
		nomem();
	return p;
}

int
aoe_strtonum(const char *s, long long min, long long max, long long *out)
{
	char *end;
	long long v;

	if (s == NULL || *s == '\0') {
		errno = EINVAL;
		return -1;
	}
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*end != '\0' || end == s) {
		errno = EINVAL;
		return -1;
	}
	if (errno == ERANGE || v < min || v > max) {
		errno = ERANGE;
		return -1;
	}
	*out = v;
	return 0;
}

/*
 * Sync the directory that holds path, so that a rename in it survives a
 * crash.  A failure is not reported: the data itself is already synced.
 */
static void
fsync_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int fd;

	if (slash == NULL)
		dir = aoe_xstrdup(".");
	else if (slash == path)
		dir = aoe_xstrdup("/");
	else {
		dir = aoe_xmalloc((size_t)(slash - path) + 1);
		memcpy(dir, path, (size_t)(slash - path));
		dir[slash - path] = '\0';
	}
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	free(dir);
}

int
aoe_ofile_open(aoe_ofile *o, const char *path)
{
	struct stat st;
	const char *slash, *base;
	int fd, e;

	memset(o, 0, sizeof(*o));
	if (path == NULL || strcmp(path, "-") == 0) {
		o->fp = stdout;
		return 0;
	}
	o->path = aoe_xstrdup(path);
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode)) {
			e = EISDIR;
			goto fail;
		}
		if ((o->fp = fopen(path, "w")) == NULL) {
			e = errno;
			goto fail;
		}
		return 0;
	}
	/* ".name.XXXXXX" beside the destination (aoe-bank(5) names it). */
	slash = strrchr(path, '/');
	base = slash ? slash + 1 : path;
	if (*base == '\0') {
		e = EISDIR;
		goto fail;
	}
	o->tmp = aoe_xmalloc(strlen(path) + 16);
	sprintf(o->tmp, "%.*s.%s.XXXXXX", (int)(base - path), path, base);
	if ((fd = mkstemp(o->tmp)) < 0) {
		e = errno;
		goto fail;
	}
	(void)fchmod(fd, 0644);
	if ((o->fp = fdopen(fd, "w")) == NULL) {
		e = errno;
		close(fd);
		unlink(o->tmp);
		goto fail;
	}
	return 0;
fail:
	free(o->path);
	free(o->tmp);
	memset(o, 0, sizeof(*o));
	return aoe_err(AOE_EIO, "cannot create '%s': %s", path, strerror(e));
}

int
aoe_ofile_close(aoe_ofile *o)
{
	int e = 0;

	if (o->fp == NULL)
		return 0;
	if (o->fp == stdout) {
		o->fp = NULL;
		if (fflush(stdout) != 0 || ferror(stdout))
			return aoe_err(AOE_EIO, "cannot write standard "
			    "output: %s", strerror(errno ? errno : EIO));
		return 0;
	}
	errno = 0;
	if (fflush(o->fp) != 0 || ferror(o->fp) ||
	    (o->tmp && fsync(fileno(o->fp)) != 0))
		e = errno ? errno : EIO;
	if (fclose(o->fp) != 0 && e == 0)
		e = errno;
	o->fp = NULL;
	if (e == 0 && o->tmp && rename(o->tmp, o->path) != 0)
		e = errno;
	if (e != 0) {
		if (o->tmp)
			unlink(o->tmp);
		aoe_err(AOE_EIO, "cannot write '%s': %s", o->path,
		    strerror(e));
	} else if (o->tmp)
		fsync_dir(o->path);
	free(o->path);
	free(o->tmp);
	o->path = o->tmp = NULL;
	return e ? -AOE_EIO : 0;
}

void
aoe_ofile_abort(aoe_ofile *o)
{
	if (o->fp && o->fp != stdout)
		fclose(o->fp);
	if (o->tmp)
		unlink(o->tmp);
	free(o->path);
	free(o->tmp);
	memset(o, 0, sizeof(*o));
}

void
aoe_iso_now(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	if (strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0 && len > 0)
		buf[0] = '\0';
}

int
aoe_read_file(const char *path, uint8_t **data, size_t *len)
{
	int fd, e;
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf;
	ssize_t r;
	struct stat st;

	if (strcmp(path, "-") == 0)
		fd = STDIN_FILENO;
	else if ((fd = open(path, O_RDONLY)) < 0)
		return aoe_err(AOE_EIO, "cannot open '%s': %s", path,
		    strerror(errno));
	if (fstat(fd, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			close(fd);
			return aoe_err(AOE_EIO, "cannot read '%s': %s", path,
			    strerror(EISDIR));
		}
		if (S_ISREG(st.st_mode) && st.st_size > 0)
			cap = (size_t)st.st_size + 1;
	}
	buf = malloc(cap);
	if (buf == NULL)
		goto nomem;
	for (;;) {
		if (n == cap) {
			uint8_t *nb = realloc(buf, cap * 2);
			if (nb == NULL)
				goto nomem;
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n);
		if (r == 0)
			break;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			e = errno;
			free(buf);
			if (fd != STDIN_FILENO)
				close(fd);
			return aoe_err(AOE_EIO, "cannot read '%s': %s", path,
			    strerror(e));
		}
		n += (size_t)r;
	}
	if (fd != STDIN_FILENO)
		close(fd);
	*data = buf;
	*len = n;
	return 0;
nomem:
	free(buf);
	if (fd != STDIN_FILENO)
		close(fd);
	return aoe_err(AOE_ENOMEM, "cannot read '%s': out of memory", path);
}

double
aoe_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

int
aoe_nthreads(int n)
{
	long c;

	if (n > 0)
		return n;
	c = sysconf(_SC_NPROCESSORS_ONLN);
	return c < 1 ? 1 : c > INT_MAX ? INT_MAX : (int)c;
}

int
aoe_each_operand(int argc, char **argv, int (*fn)(const char *, void *),
    void *arg)
{
	int i, r, worst = 0;

	if (argc == 0)
		return fn("-", arg);
	for (i = 0; i < argc; i++) {
		r = fn(argv[i], arg);
		if (r > worst)
			worst = r;
	}
	return worst;
}

long long
aoe_optnum(const char *opt, const char *s, long long min, long long max)
{
	long long v;

	if (aoe_strtonum(s, min, max, &v) < 0) {
		aoe_warnx("--%s '%s' is %s (allowed %lld to %lld)", opt, s,
		    errno == ERANGE ? "out of range" : "not a number", min,
		    max);
		exit(AOE_EXIT_USAGE);
	}
	return v;
}

int
aoe_str_in(const char *s, const char *const *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(s, list[i]) == 0)
			return 1;
	return 0;
}
