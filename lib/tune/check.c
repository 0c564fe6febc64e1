/*
 * check.c - the preconditions of a tuning run, as AOE lists them, adapted
 * to a CPU host: free disk and memory, enough host CPUs, profiling and
 * static memory off, the process not pinned, the graph static, one
 * device, and nobody else tuning it (the device lock).
 *
 * A tuning run on a busy, pinned or profiling machine measures the wrong
 * thing and writes a bank that makes later runs slower; aoe-check and the
 * tuners refuse to start there.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tune.h"

#define GB (1024.0 * 1024.0 * 1024.0)

void
aoe_check_opts_set(aoe_check_opts *o, const aoe_settings *s)
{
	memset(o, 0, sizeof(*o));
	o->job_type = 2;
	o->processes = 1;
	o->tuning_parallel = s->tuning_parallel;
	o->te_parallel = aoe_settings_te_parallel(s);
	o->run_loop = s->run_loop;
	o->min_disk_gb = s->min_disk_gb;
	snprintf(o->work_path, sizeof(o->work_path), "%s", s->work_path);
	snprintf(o->ini, sizeof(o->ini), "%s", s->ini);
}

int
aoe_check_opts_init(aoe_check_opts *o)
{
	aoe_settings s;
	int rc;

	memset(o, 0, sizeof(*o));
	if ((rc = aoe_settings_load(&s)) < 0)
		return rc;
	aoe_check_opts_set(o, &s);
	return 0;
}

static aoe_check_item *
item(aoe_check_result *r, const char *check, int status, const char *limit,
    const char *fmt, ...)
{
	aoe_check_item *it = &r->item[r->n++];
	va_list ap;

	memset(it, 0, sizeof(*it));
	snprintf(it->check, sizeof(it->check), "%s", check);
	it->status = status;
	snprintf(it->limit, sizeof(it->limit), "%s", limit);
	va_start(ap, fmt);
	vsnprintf(it->measured, sizeof(it->measured), fmt, ap);
	va_end(ap);
	if (status == AOE_CHECK_WARN)
		r->nwarn++;
	if (status == AOE_CHECK_FAIL)
		r->nfail++;
	return it;
}

static void
note(aoe_check_item *it, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(it->note, sizeof(it->note), fmt, ap);
	va_end(ap);
}

static const char *
home_dir(void)
{
	const char *h = getenv("HOME");
	struct passwd *pw;

	if (h && *h)
		return h;
	if ((pw = getpwuid(getuid())) != NULL && pw->pw_dir)
		return pw->pw_dir;
	return "/";
}

static void
check_disk(const aoe_check_opts *o, aoe_check_result *r)
{
	const char *home = home_dir();
	struct statvfs sv;
	aoe_check_item *it;
	char lim[64];
	double free_gb;

	snprintf(lim, sizeof(lim), ">= %.0fG", o->min_disk_gb);
	if (statvfs(home, &sv) < 0) {
		it = item(r, "disk", AOE_CHECK_FAIL, lim, "unknown");
		note(it, "cannot statvfs '%s': %s", home, strerror(errno));
		return;
	}
	free_gb = (double)sv.f_bavail * (double)sv.f_frsize / GB;
	it = item(r, "disk", free_gb >= o->min_disk_gb ? AOE_CHECK_OK :
	    AOE_CHECK_FAIL, lim, "%.1fG", free_gb);
	note(it, "free in $HOME (%s)%s", home, it->status ? ": tuning "
	    "writes candidates, records and banks there" : "");
}

/* A number read from the first word of file path; < 0 if none. */
static double
file_number(const char *path, int *unlimited)
{
	char buf[128];
	FILE *fp;
	double v = -1;

	if ((fp = fopen(path, "r")) == NULL)
		return -1;
	if (fgets(buf, sizeof(buf), fp)) {
		if (strncmp(buf, "max", 3) == 0) {
			if (unlimited)
				*unlimited = 1;
		} else if (sscanf(buf, "%lf", &v) != 1)
			v = -1;
	}
	fclose(fp);
	return v;
}

/*
 * The memory a cgroup (v2) leaves this process: memory.max less
 * memory.current of its own cgroup (from /proc/self/cgroup), else of
 * the root of the hierarchy, which is a container's own cgroup.
 * AOE_CGROUP_ROOT names another root (for the tests).  < 0: no limit.
 */
static double
cgroup_available(double *limit)
{
	const char *root = getenv("AOE_CGROUP_ROOT");
	char line[4096], path[4400], rel[4096] = "";
	double max, cur;
	FILE *fp;
	int unl = 0, i;

	if (root == NULL || *root == '\0')
		root = "/sys/fs/cgroup";
	if ((fp = fopen("/proc/self/cgroup", "r")) != NULL) {
		while (fgets(line, sizeof(line), fp))
			if (strncmp(line, "0::", 3) == 0) {
				snprintf(rel, sizeof(rel), "%s", line + 3);
				rel[strcspn(rel, "\n")] = '\0';
			}
		fclose(fp);
	}
	for (i = 0; i < 2; i++) {
		if (i == 0 && (rel[0] == '\0' || strcmp(rel, "/") == 0))
			continue;
		snprintf(path, sizeof(path), "%s%s/memory.max", root,
		    i == 0 ? rel : "");
		unl = 0;
		if ((max = file_number(path, &unl)) < 0) {
			if (unl)
				return -1;
			continue;
		}
		snprintf(path, sizeof(path), "%s%s/memory.current", root,
		    i == 0 ? rel : "");
		cur = file_number(path, NULL);
		*limit = max;
		return cur < 0 ? max : cur < max ? max - cur : 0;
	}
	return -1;
}

/* Memory available: the kernel's MemAvailable, within a cgroup's limit. */
static double
mem_available_in(double *cglimit)
{
	char line[256];
	FILE *fp;
	double kb = -1, avail, cg;

	*cglimit = -1;
	if ((fp = fopen("/proc/meminfo", "r")) != NULL) {
		while (fgets(line, sizeof(line), fp))
			if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1)
				break;
		fclose(fp);
	}
	avail = kb < 0 ? -1 : kb * 1024;
	if ((cg = cgroup_available(cglimit)) >= 0 && (avail < 0 || cg < avail))
		avail = cg;
	return avail;
}


/* Parse a CPU list ("0-3,8,10-11") into a set; -1 if malformed. */
static int
parse_cpulist(const char *s, cpu_set_t *set)
{
	long a, b;
	char *end;

	CPU_ZERO(set);
	while (*s && *s != '\n') {
		a = strtol(s, &end, 10);
		if (end == s || a < 0)
			return -1;
		b = a;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			if (end == s + 1 || b < a)
				return -1;
			s = end;
		}
		for (; a <= b && a < CPU_SETSIZE; a++)
			CPU_SET((int)a, set);
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return -1;
	}
	return 0;
}

static int
read_cpulist(const char *path, cpu_set_t *set)
{
	char buf[4096];
	FILE *fp;
	int rc = -1;

	if ((fp = fopen(path, "r")) == NULL)
		return -1;
	if (fgets(buf, sizeof(buf), fp) && buf[0] != '\n' && buf[0])
		rc = parse_cpulist(buf, set);
	fclose(fp);
	return rc;
}

static const char *
cpulist_str(const cpu_set_t *set, char *buf, size_t n)
{
	size_t len = 0;
	int i, j;

	buf[0] = '\0';
	for (i = 0; i < CPU_SETSIZE && len + 24 < n; i = j) {
		if (!CPU_ISSET(i, set)) {
			j = i + 1;
			continue;
		}
		for (j = i + 1; j < CPU_SETSIZE && CPU_ISSET(j, set); j++)
			;
		len += (size_t)snprintf(buf + len, n - len,
		    j - 1 > i ? "%s%d-%d" : "%s%d", len ? "," : "", i, j - 1);
	}
	return buf;
}

/*
 * The CPUs this process may be given: the cgroup's cpuset (v2, then v1)
 * within the online CPUs.  A container limited to some CPUs is not
 * "pinned"; a process narrowed below its cgroup is.
 */
static int
allowed_cpus(cpu_set_t *set)
{
	cpu_set_t online, cg;

	if (read_cpulist("/sys/devices/system/cpu/online", &online) < 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		CPU_ZERO(&online);
		for (long i = 0; i < n && i < CPU_SETSIZE; i++)
			CPU_SET((int)i, &online);
	}
	if (read_cpulist("/sys/fs/cgroup/cpuset.cpus.effective", &cg) == 0 ||
	    read_cpulist("/sys/fs/cgroup/cpuset/cpuset.effective_cpus",
	    &cg) == 0 ||
	    read_cpulist("/sys/fs/cgroup/cpuset/cpuset.cpus", &cg) == 0)
		CPU_AND(set, &online, &cg);
	else
		*set = online;
	if (CPU_COUNT(set) == 0)
		*set = online;
	return CPU_COUNT(set);
}

static void
check_cpus(const aoe_check_opts *o, aoe_check_result *r, int cores)
{
	aoe_check_item *it;
	char lim[64];
	long need;

	if (o->job_type == 1)
		need = (long)o->processes * (2L * o->tuning_parallel +
		    o->te_parallel);
	else
		need = (long)o->processes * (o->te_parallel +
		    o->tuning_parallel + (cores / 2 < 8 ? cores / 2 : 8) + 50);
	snprintf(lim, sizeof(lim), ">= %ld", need);
	it = item(r, "cpus", cores >= need ? AOE_CHECK_OK : AOE_CHECK_WARN,
	    lim, "%d", cores);
	if (o->job_type == 1)
		note(it, "subgraph tuning: processes %d x (2 x "
		    "TUNING_PARALLEL_NUM %d + TE_PARALLEL_COMPILER %d)%s",
		    o->processes, o->tuning_parallel, o->te_parallel,
		    it->status ? "; fewer CPUs only make tuning slower" : "");
	else
		note(it, "operator tuning: processes %d x "
		    "(TE_PARALLEL_COMPILER %d + TUNING_PARALLEL_NUM %d + "
		    "min(cores/2, 8) %d + 50)%s", o->processes,
		    o->te_parallel, o->tuning_parallel,
		    cores / 2 < 8 ? cores / 2 : 8,
		    it->status ? "; fewer CPUs only make tuning slower" : "");
}

static void
check_affinity(aoe_check_result *r, const cpu_set_t *allowed)
{
	cpu_set_t mine, both;
	aoe_check_item *it;
	char a[256], b[256];

	if (sched_getaffinity(0, sizeof(mine), &mine) < 0) {
		it = item(r, "affinity", AOE_CHECK_WARN, "-", "unknown");
		note(it, "sched_getaffinity: %s", strerror(errno));
		return;
	}
	CPU_AND(&both, &mine, allowed);
	cpulist_str(&mine, a, sizeof(a));
	cpulist_str(allowed, b, sizeof(b));
	if (CPU_COUNT(&both) < CPU_COUNT(allowed)) {
		it = item(r, "affinity", AOE_CHECK_FAIL, b, "%s", a);
		note(it, "the process is pinned to CPUs %s of %s (taskset, "
		    "numactl or a parent's affinity): run without pinning",
		    a, b);
	} else {
		it = item(r, "affinity", AOE_CHECK_OK, b, "%s", a);
		note(it, "not pinned");
	}
}

static void
check_env_off(aoe_check_result *r, const char *check, const char *var,
    const char *why)
{
	const char *v = getenv(var);
	aoe_check_item *it;
	char lim[64];

	snprintf(lim, sizeof(lim), "off");
	if (aoe_env_true(var)) {
		it = item(r, check, AOE_CHECK_FAIL, lim, "%s", v);
		note(it, "%s=%s: %s; unset it while tuning", var, v, why);
	} else {
		it = item(r, check, AOE_CHECK_OK, lim, "%s", v ? v : "unset");
		note(it, "%s %s", var, v ? "is off" : "is unset");
	}
}

/*
 * One device: the device is this host's CPU, but a workload launched as
 * several ranks (RANK_SIZE, as Ascend's distributed training sets it, or
 * WORLD_SIZE) would tune in every rank at once, and AOE does not tune
 * multi-device runs.
 */
static void
check_device(aoe_check_result *r)
{
	static const char *const vars[] = { "RANK_SIZE", "WORLD_SIZE" };
	aoe_check_item *it;
	long long n;
	size_t i;
	const char *v;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		if ((v = getenv(vars[i])) == NULL || *v == '\0')
			continue;
		if (aoe_strtonum(v, 1, 1000000, &n) < 0) {
			it = item(r, "device", AOE_CHECK_WARN, "1", "%s", v);
			note(it, "%s='%s' is not a device count", vars[i], v);
			return;
		}
		if (n > 1) {
			it = item(r, "device", AOE_CHECK_FAIL, "1", "%lld", n);
			note(it, "%s=%lld: a multi-device run, which AOE does "
			    "not tune; tune it as one process (%s=1)",
			    vars[i], n, vars[i]);
			return;
		}
	}
	it = item(r, "device", AOE_CHECK_OK, "1", "1");
	note(it, "one device: this host's CPU");
}

static const char *
human(double bytes, char *buf, size_t n)
{
	if (bytes >= GB)
		snprintf(buf, n, "%.1fG", bytes / GB);
	else
		snprintf(buf, n, "%.1fM", bytes / (1024 * 1024));
	return buf;
}

/*
 * Load the graph and prepare it, without handing it to the tools (that
 * is what AOE_MODE would do): the graph check and the memory check need
 * its shapes and its memory plan.
 */
static int
check_graph(const aoe_check_opts *o, aoe_check_result *r, int cores)
{
	aoe_run_opts ro;
	aoe_graph *g = NULL;
	aoe_check_item *it;
	char *mode = NULL, lim[64], msg[512], h1[32], h2[32];
	double cglim, avail = mem_available_in(&cglim), planned = 0, need;
	int rc, i;

	if (o->graph == NULL) {
		it = item(r, "graph", AOE_CHECK_OK, "static", "-");
		note(it, "no --graph given");
		it = item(r, "memory", AOE_CHECK_OK, "-", "%s available",
		    human(avail, h2, sizeof(h2)));
		note(it, "no --graph given: the model's memory is not known%s",
		    cglim >= 0 ? " (within the cgroup's memory.max)" : "");
		return 0;
	}
	if ((rc = aoe_model_load(o->graph, &g)) < 0)
		return rc;
	if (o->shape && *o->shape && (rc = aoe_bind_shapes(g, o->shape)) < 0) {
		aoe_graph_free(g);
		return rc;
	}
	if (getenv("AOE_MODE")) {
		mode = aoe_xstrdup(getenv("AOE_MODE"));
		unsetenv("AOE_MODE");
	}
	aoe_run_opts_init(&ro);
	ro.static_memory = 0;
	ro.profile = 0;
	ro.use_bank = 0;
	ro.plan_only = 1;	/* its size is measured, not allocated */
	rc = aoe_graph_prepare(g, &ro);
	if (mode) {
		setenv("AOE_MODE", mode, 1);
		free(mode);
	}
	if (rc < 0) {
		snprintf(msg, sizeof(msg), "%s", aoe_errmsg());
		it = item(r, "graph", AOE_CHECK_FAIL, "static", "%s",
		    rc == -AOE_EDATA && strstr(msg, "dynamic shape") ?
		    "dynamic" : "does not prepare");
		note(it, "%s: %s%s", o->graph, msg, strstr(msg,
		    "dynamic shape") ? " (aoe-capture writes a static graph)" :
		    "");
		it = item(r, "memory", AOE_CHECK_OK, "-", "%s available",
		    human(avail, h2, sizeof(h2)));
		note(it, "not measured: the graph does not prepare");
		aoe_graph_free(g);
		return 0;
	}
	it = item(r, "graph", AOE_CHECK_OK, "static", "static");
	note(it, "%s: %d nodes, every shape known", o->graph, g->norder);
	planned = (double)g->arena_size + (double)g->scratch_size;
	for (i = 0; i < g->ntensors; i++)
		if (g->tensors[i]->kind == AOE_T_CONST)
			planned += (double)aoe_tensor_nbytes(g->tensors[i]);
	need = planned * o->tuning_parallel;
	snprintf(lim, sizeof(lim), ">= %s", human(need, h1, sizeof(h1)));
	it = item(r, "memory", avail < 0 ? AOE_CHECK_WARN : avail >= need ?
	    AOE_CHECK_OK : AOE_CHECK_FAIL, lim, "%s available",
	    human(avail, h2, sizeof(h2)));
	note(it, "model memory %s x TUNING_PARALLEL_NUM %d%s%s%s",
	    human(planned, h1, sizeof(h1)), o->tuning_parallel,
	    cglim >= 0 ? " (within the cgroup's memory.max " : "",
	    cglim >= 0 ? human(cglim, h2, sizeof(h2)) : "",
	    cglim >= 0 ? ")" : "");
	aoe_graph_free(g);
	(void)cores;
	return 0;
}

const char *
aoe_device_lock_path(void)
{
	const char *p = getenv("AOE_DEVICE_LOCK");

	return p && *p ? p : "/tmp/aoe-device.lock";
}

/* The owner written in a lock file, or "an unknown process". */
static void
lock_owner(int fd, char *buf, size_t n)
{
	ssize_t k;

	k = pread(fd, buf, n - 1, 0);
	if (k <= 0) {
		snprintf(buf, n, "an unknown process");
		return;
	}
	buf[k] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (buf[0] == '\0')
		snprintf(buf, n, "an unknown process");
}

/* The descriptor of the device lock this process holds, or -1. */
static int held_fd = -1;

pid_t
aoe_fork_child(void)
{
	pid_t parent = getpid(), pid;

	if ((pid = fork()) != 0)
		return pid;
	if (held_fd >= 0) {
		close(held_fd);
		held_fd = -1;
	}
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(127);
	return 0;
}

/*
 * A tuner started by the front end dies with it: pipelines/aoe exports
 * AOE_FRONT_PID, its own pid, and a tuner that takes the device lock
 * watches that process (a pidfd, else polling) and ends itself, its
 * measuring children with it (aoe_fork_child's parent-death signal),
 * when the front end is gone, so that the lock is free for the next
 * run (`aoe --reload` after a kill -9 of the front end).
 */
static pid_t front_pid;

static void *
front_watch(void *arg)
{
	int pfd = -1;

	(void)arg;
#ifdef SYS_pidfd_open
	pfd = (int)syscall(SYS_pidfd_open, front_pid, 0);
#endif
	for (;;) {
		if (pfd >= 0) {
			struct pollfd p = { .fd = pfd, .events = POLLIN };
			if (poll(&p, 1, -1) > 0)
				break;
		} else {
			if (kill(front_pid, 0) < 0 && errno == ESRCH)
				break;
			usleep(200000);
		}
	}
	aoe_warnx("the front end (pid %ld) is gone: stopping",
	    (long)front_pid);
	kill(getpid(), SIGTERM);
	sleep(2);
	kill(getpid(), SIGKILL);
	return NULL;
}

static void
watch_front_end(void)
{
	const char *v = getenv("AOE_FRONT_PID");
	long long pid;
	pthread_t t;

	if (front_pid || v == NULL || *v == '\0' ||
	    aoe_strtonum(v, 2, 1LL << 30, &pid) < 0)
		return;
	front_pid = (pid_t)pid;
	if (kill(front_pid, 0) < 0 && errno == ESRCH) {
		aoe_warnx("the front end (pid %ld) is gone: stopping",
		    (long)front_pid);
		_exit(AOE_EXIT_FALSE);
	}
	if (pthread_create(&t, NULL, front_watch, NULL) == 0)
		pthread_detach(t);
}

int
aoe_device_lock(const char *path)
{
	char owner[256], line[256], when[32];
	struct passwd *pw;
	time_t now = time(NULL);
	int fd, n;

	if (path == NULL)
		path = aoe_device_lock_path();
	/*
	 * Open an existing file without O_CREAT: in a sticky /tmp another
	 * user's file cannot be opened with it (protected_regular).
	 */
	while ((fd = open(path, O_RDWR | O_CLOEXEC)) < 0) {
		if (errno != ENOENT)
			return aoe_err(AOE_EIO, "cannot open '%s': %s", path,
			    strerror(errno));
		if ((fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
		    0666)) >= 0) {
			(void)fchmod(fd, 0666);
			break;
		}
		if (errno != EEXIST)
			return aoe_err(AOE_EIO, "cannot create '%s': %s",
			    path, strerror(errno));
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;
		lock_owner(fd, owner, sizeof(owner));
		close(fd);
		if (e == EWOULDBLOCK)
			return aoe_err(AOE_EIO, "the device is being tuned by "
			    "%s (lock '%s')", owner, path);
		return aoe_err(AOE_EIO, "cannot lock '%s': %s", path,
		    strerror(e));
	}
	pw = getpwuid(getuid());
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", localtime(&now));
	n = snprintf(line, sizeof(line), "user=%s pid=%ld since=%s\n",
	    pw ? pw->pw_name : "?", (long)getpid(), when);
	if (ftruncate(fd, 0) < 0 || pwrite(fd, line, (size_t)n, 0) != n) {
		int e = errno;
		close(fd);
		return aoe_err(AOE_EIO, "cannot write '%s': %s", path,
		    strerror(e));
	}
	held_fd = fd;
	watch_front_end();
	return fd;
}

void
aoe_device_unlock(int fd)
{
	if (fd < 0)
		return;
	if (fd == held_fd)
		held_fd = -1;
	(void)ftruncate(fd, 0);
	flock(fd, LOCK_UN);
	close(fd);
}

static void
check_lock(const aoe_check_opts *o, aoe_check_result *r)
{
	const char *path = o->lock_path ? o->lock_path :
	    aoe_device_lock_path();
	aoe_check_item *it;
	char owner[256];
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		it = item(r, "lock", errno == ENOENT ? AOE_CHECK_OK :
		    AOE_CHECK_WARN, "free", errno == ENOENT ? "free" :
		    "unknown");
		note(it, errno == ENOENT ? "nobody is tuning this device "
		    "(%s)" : "cannot open '%s'", path);
		return;
	}
	if (flock(fd, LOCK_SH | LOCK_NB) < 0) {
		lock_owner(fd, owner, sizeof(owner));
		it = item(r, "lock", AOE_CHECK_FAIL, "free", "held");
		note(it, "the device is being tuned by %s (lock '%s'): one "
		    "tuning run per device at a time", owner, path);
	} else {
		flock(fd, LOCK_UN);
		it = item(r, "lock", AOE_CHECK_OK, "free", "free");
		note(it, "nobody is tuning this device (%s)", path);
	}
	close(fd);
}

/*
 * A busy machine: the 1-minute load average (/proc/loadavg, or
 * AOE_LOADAVG for the tests) from other processes, and a timed run of
 * another tuner holding the measuring lock, both make every time taken
 * now too slow and too noisy to decide on.  A warning: tuning still
 * works, its spreads are wider and fewer decisions beat them.
 */
static void
check_busy(aoe_check_result *r, int cores)
{
	/* opat_lock_path()'s, spelled out: measure.c calls this file */
	const char *v = getenv("AOE_LOADAVG");
	const char *mp = getenv("AOE_MEASURE_LOCK");
	aoe_check_item *it;
	double load = -1, lim = cores > 2 ? cores / 2.0 : 1.0;
	char buf[128] = "", l[32], *end;
	FILE *fp;
	int fd;

	if (mp == NULL || *mp == '\0')
		mp = "/tmp/aoe-measure.lock";
	if (v && *v) {
		load = strtod(v, &end);
		if (end == v || load < 0)
			load = -1;
	} else if ((fp = fopen("/proc/loadavg", "r")) != NULL) {
		if (fgets(buf, sizeof(buf), fp) == NULL ||
		    sscanf(buf, "%lf", &load) != 1)
			load = -1;
		fclose(fp);
	}
	snprintf(l, sizeof(l), "< %.1f", lim);
	if (load < 0) {
		it = item(r, "load", AOE_CHECK_WARN, l, "unknown");
		note(it, "cannot read the load average%s%s%s", v && *v ?
		    " (AOE_LOADAVG '" : "", v && *v ? v : "", v && *v ? "')" :
		    "");
	} else if (load < lim) {
		it = item(r, "load", AOE_CHECK_OK, l, "%.2f", load);
		note(it, "the machine is idle enough to time on (1-minute "
		    "load average, %d CPUs)", cores);
	} else {
		it = item(r, "load", AOE_CHECK_WARN, l, "%.2f", load);
		note(it, "the machine is busy (1-minute load average %.2f on "
		    "%d CPUs): times taken now are slow and noisy; tune when "
		    "it is idle", load, cores);
	}
	if ((fd = open(mp, O_RDONLY | O_CLOEXEC)) < 0) {
		it = item(r, "timing", AOE_CHECK_OK, "free", "free");
		note(it, "no timed run holds the measuring lock (%s)", mp);
		return;
	}
	if (flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK) {
		it = item(r, "timing", AOE_CHECK_WARN, "free", "held");
		note(it, "another timed run holds the measuring lock (%s): "
		    "the machine is busy measuring", mp);
	} else {
		flock(fd, LOCK_UN);
		it = item(r, "timing", AOE_CHECK_OK, "free", "free");
		note(it, "no timed run holds the measuring lock (%s)", mp);
	}
	close(fd);
}

static void
check_bank(aoe_check_result *r)
{
	const char *p = getenv("TUNE_BANK_PATH");
	aoe_check_item *it;
	struct stat st;

	if (p == NULL || *p == '\0') {
		it = item(r, "bank", AOE_CHECK_OK, "writable dir", "default");
		note(it, "TUNE_BANK_PATH unset: the default bank under $HOME");
		return;
	}
	if (stat(p, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    access(p, W_OK) < 0) {
		it = item(r, "bank", AOE_CHECK_FAIL, "writable dir", "%s",
		    "not usable");
		note(it, "TUNE_BANK_PATH '%s' is not an existing writable "
		    "directory", p);
		return;
	}
	it = item(r, "bank", AOE_CHECK_OK, "writable dir", "writable");
	note(it, "TUNE_BANK_PATH %s", p);
}

int
aoe_check_run(const aoe_check_opts *o, aoe_check_result *r)
{
	cpu_set_t allowed;
	int cores, rc;

	memset(r, 0, sizeof(*r));
	if (o->job_type != 1 && o->job_type != 2)
		return aoe_err(AOE_EUNSUP, "job type %d is not supported: "
		    "1 (subgraph) or 2 (operator tuning)", o->job_type);
	cores = allowed_cpus(&allowed);
	check_disk(o, r);
	if ((rc = check_graph(o, r, cores)) < 0)
		return rc;
	check_cpus(o, r, cores);
	check_affinity(r, &allowed);
	check_env_off(r, "profiling", "PROFILING_MODE",
	    "per-node timing slows every measured run");
	check_env_off(r, "static-mem", "GE_USE_STATIC_MEMORY",
	    "no buffer reuse changes what is measured");
	check_device(r);
	check_lock(o, r);
	check_busy(r, cores);
	check_bank(r);
	return 0;
}

int
aoe_check_ready(const aoe_check_opts *co)
{
	aoe_check_result cr;
	int i, rc;

	if ((rc = aoe_check_run(co, &cr)) < 0)
		return rc;
	for (i = 0; i < cr.n; i++)
		if (cr.item[i].status == AOE_CHECK_FAIL)
			aoe_warnx("not ready: %s %s (limit %s): %s",
			    cr.item[i].check, cr.item[i].measured,
			    cr.item[i].limit, cr.item[i].note);
	return cr.nfail ? 1 : 0;
}
