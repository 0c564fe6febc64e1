/*
 * remote.c - aoe-opat --sshloginfile: candidates prepared and measured
 * on other hosts of the same soc_version, through GNU parallel.
 *
 * A batch of candidates becomes op-task lines, a few a job, piped to
 * parallel(1), which runs `aoe-opat --measure` on the hosts of the login
 * file over ssh (at most TE_PARALLEL_COMPILER jobs a host): each host
 * builds and checks in parallel and times under its own measure lock,
 * so timing stays exclusive on every host.  The timing lines come back
 * on parallel's output and are matched to the batch by id.  A job whose
 * host fails is retried on another host; a candidate whose timing never
 * comes back is lost (not a trial), and the search goes on.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "opat.h"

/* ssh that never asks and never hangs on a host that is gone. */
#define SSH_DEFAULT "ssh -o BatchMode=yes -o ConnectTimeout=5 " \
    "-o ServerAliveInterval=5 -o ServerAliveCountMax=3 " \
    "-o ControlMaster=auto -o ControlPath=/tmp/aoe-ssh-%C " \
    "-o ControlPersist=60"

static const char *
ssh_cmd(void)
{
	const char *s = getenv("AOE_SSH");

	return s && *s ? s : SSH_DEFAULT;
}

/* The aoe-opat the hosts run: $AOE_REMOTE_OPAT, else this program. */
static char *
remote_exe(void)
{
	const char *e = getenv("AOE_REMOTE_OPAT");
	char buf[4096];
	ssize_t n;

	if (e && *e)
		return aoe_xstrdup(e);
	if ((n = readlink("/proc/self/exe", buf, sizeof(buf) - 1)) <= 0)
		return aoe_xstrdup("aoe-opat");
	buf[n] = '\0';
	/* Replaced while running (an upgrade): the new one at that path. */
	if (n > 10 && strcmp(buf + n - 10, " (deleted)") == 0)
		buf[n - 10] = '\0';
	return aoe_xstrdup(buf);
}

/* Quote s for a POSIX shell, into a new string. */
static char *
shquote(const char *s)
{
	size_t n = strlen(s), i, j = 0;
	char *q = aoe_xmalloc(4 * n + 3);

	q[j++] = '\'';
	for (i = 0; i < n; i++) {
		if (s[i] == '\'') {
			memcpy(q + j, "'\\''", 4);
			j += 4;
		} else
			q[j++] = s[i];
	}
	q[j++] = '\'';
	q[j] = '\0';
	return q;
}

/*
 * Run parallel with argv, stdin from the file in, stdout to the file
 * out (stderr passed on); its exit status, or an error.
 */
static int
run_parallel(char **argv, const char *in, const char *out, int *status)
{
	pid_t pid;
	int fi, fo, wst;

	if ((fi = open(in, O_RDONLY)) < 0)
		return aoe_err(AOE_EIO, "cannot open '%s': %s", in,
		    strerror(errno));
	if ((fo = open(out, O_WRONLY | O_TRUNC)) < 0) {
		close(fi);
		return aoe_err(AOE_EIO, "cannot open '%s': %s", out,
		    strerror(errno));
	}
	fflush(NULL);
	if ((pid = fork()) < 0) {
		close(fi);
		close(fo);
		return aoe_err(AOE_EIO, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		dup2(fi, 0);
		dup2(fo, 1);
		close(fi);
		close(fo);
		execvp(argv[0], argv);
		fprintf(stderr, "%s: cannot run %s: %s\n", aoe_progname(),
		    argv[0], strerror(errno));
		_exit(127);
	}
	close(fi);
	close(fo);
	while (waitpid(pid, &wst, 0) < 0)
		if (errno != EINTR)
			return aoe_err(AOE_EIO, "waitpid: %s", strerror(errno));
	*status = WIFEXITED(wst) ? WEXITSTATUS(wst) : 128 + WTERMSIG(wst);
	if (*status == 127)
		return aoe_err(AOE_EUNSUP, "GNU parallel is not installed "
		    "(--sshloginfile runs it)");
	return 0;
}

/* A temporary file's name, created empty. */
static int
tmpfile_name(char *buf, size_t len, const char *what)
{
	int fd;

	snprintf(buf, len, "/tmp/aoe-opat-%s.XXXXXX", what);
	if ((fd = mkstemp(buf)) < 0)
		return aoe_err(AOE_EIO, "cannot create a temporary file: %s",
		    strerror(errno));
	close(fd);
	return 0;
}

/* The hosts of a login file, as parallel names them (no "n/"). */
static int
login_hosts(const char *path, char ***hosts, int *n)
{
	FILE *fp;
	char line[1024], *s, *e;

	*hosts = NULL;
	*n = 0;
	if ((fp = fopen(path, "r")) == NULL)
		return aoe_err(AOE_EIO, "cannot open '%s': %s", path,
		    strerror(errno));
	while (fgets(line, sizeof(line), fp)) {
		s = line + strspn(line, " \t");
		if (*s == '#' || *s == '\n' || *s == '\0')
			continue;
		for (e = s + strlen(s); e > s && strchr(" \t\r\n", e[-1]); e--)
			;
		*e = '\0';
		if ((e = strchr(s, '/')) != NULL && strspn(s, "0123456789") ==
		    (size_t)(e - s))
			s = e + 1;
		*hosts = aoe_xrealloc(*hosts, (*n + 1) * sizeof(char *));
		(*hosts)[(*n)++] = aoe_xstrdup(s);
	}
	fclose(fp);
	if (*n == 0)
		return aoe_err(AOE_EDATA, "%s: no hosts", path);
	return 0;
}

/*
 * Check the hosts before any measuring: each answers with its
 * soc_version, which must be this host's (entries measured on other
 * hardware are never applied here).  0, or an error naming the host.
 */
int
opat_remote_check(opat_run *r)
{
	char in[64], out[64], *exe = remote_exe(), *qexe, cmd[8192];
	char **hosts = NULL, *line = NULL, *argv[16];
	const char *mine = aoe_soc_version();
	size_t cap = 0;
	ssize_t len;
	int nh = 0, i, st, rc, *seen = NULL, a = 0;
	FILE *fp;

	qexe = shquote(exe);
	if ((rc = login_hosts(r->o.sshloginfile, &hosts, &nh)) < 0)
		goto out;
	seen = aoe_xcalloc((size_t)nh, sizeof(int));
	if ((rc = tmpfile_name(in, sizeof(in), "in")) < 0)
		goto out;
	if ((rc = tmpfile_name(out, sizeof(out), "out")) < 0) {
		unlink(in);
		goto out;
	}
	snprintf(cmd, sizeof(cmd), "%s --soc-version", qexe);
	argv[a++] = "parallel";
	argv[a++] = "--nonall";
	argv[a++] = "--tag";
	argv[a++] = "--sshloginfile";
	argv[a++] = (char *)r->o.sshloginfile;
	argv[a++] = "--ssh";
	argv[a++] = (char *)ssh_cmd();
	argv[a++] = cmd;
	argv[a] = NULL;
	rc = run_parallel(argv, in, out, &st);
	if (rc == 0 && (fp = fopen(out, "r")) != NULL) {
		while ((len = getline(&line, &cap, fp)) > 0) {
			char *tab = strchr(line, '\t');
			if (tab == NULL)
				continue;
			*tab++ = '\0';
			tab[strcspn(tab, "\r\n")] = '\0';
			for (i = 0; i < nh; i++)
				if (strcmp(hosts[i], line) == 0)
					break;
			if (i == nh)
				continue;
			if (strcmp(tab, mine) != 0) {
				rc = aoe_err(AOE_EDATA, "host '%s' reports "
				    "soc_version '%s', this host '%s': refused "
				    "(timings from other hardware never apply "
				    "here)", line, tab, mine);
				break;
			}
			seen[i] = 1;
		}
		fclose(fp);
	}
	for (i = 0; rc == 0 && i < nh; i++)
		if (!seen[i])
			rc = aoe_err(AOE_EIO, "host '%s' did not answer with its "
			    "soc_version (ssh '%s' %s --soc-version failed: "
			    "see above)", hosts[i], hosts[i], exe);
	unlink(in);
	unlink(out);
out:
	for (i = 0; i < nh; i++)
		free(hosts[i]);
	free(hosts);
	free(seen);
	free(line);
	free(exe);
	free(qexe);
	if (rc == 0)
		r->nhosts = nh;
	return rc;
}

/*
 * Measure the n candidates s[] of case c on the hosts; fills t[] and
 * lost[] (1: its timing never came back).  0, or an error of the
 * harness (parallel missing, no temporary file).
 */
int
opat_remote_measure(opat_run *r, const opat_case *c, const aoe_sched *s,
    int n, opat_timing *t, int *lost)
{
	char in[64], out[64], *exe = remote_exe(), *qexe, cmd[8192];
	char jobs[16], retries[16], per[24], *line = NULL, *argv[24];
	size_t cap = 0;
	ssize_t len;
	int i, st, rc, a = 0;
	FILE *fp;

	for (i = 0; i < n; i++)
		lost[i] = 1;
	qexe = shquote(exe);
	if ((rc = tmpfile_name(in, sizeof(in), "in")) < 0)
		goto out;
	if ((rc = tmpfile_name(out, sizeof(out), "out")) < 0) {
		unlink(in);
		goto out;
	}
	if ((fp = fopen(in, "w")) == NULL) {
		rc = aoe_err(AOE_EIO, "cannot open '%s': %s", in,
		    strerror(errno));
		goto rm;
	}
	for (i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();
		char *txt;
		cJSON_AddStringToObject(o, "key", c->keystr);
		cJSON_AddStringToObject(o, "op_type", c->op_type);
		cJSON_AddStringToObject(o, "graph", r->graphs[c->gi].path);
		if (r->graphs[c->gi].shape[0])
			cJSON_AddStringToObject(o, "input_shape",
			    r->graphs[c->gi].shape);
		/* The measured node's path name (a subgraph's included). */
		cJSON_AddStringToObject(o, "node", c->names[0]);
		cJSON_AddNumberToObject(o, "id", i);
		cJSON_AddItemToObject(o, "schedule", opat_sched_json(&s[i]));
		txt = cJSON_PrintUnformatted(o);
		fprintf(fp, "%s\n", txt);
		free(txt);
		cJSON_Delete(o);
	}
	if (fclose(fp) != 0) {
		rc = aoe_err(AOE_EIO, "cannot write '%s': %s", in,
		    strerror(errno));
		goto rm;
	}
	/*
	 * The hosts' aoe-opat measures as this one would: the same threads,
	 * repeats, time limit and seed.
	 */
	snprintf(cmd, sizeof(cmd), "env RUN_LOOP=%d %s --measure --threads "
	    "%d --timeout %.0f --seed %llu", r->o.run_loop, qexe,
	    r->o.threads, r->o.timeout_s, (unsigned long long)r->o.seed);
	snprintf(jobs, sizeof(jobs), "%d", r->o.te_parallel);
	/*
	 * As few jobs as keep every host's TE_PARALLEL_COMPILER slots busy:
	 * each job costs an ssh session and a load of the graph.
	 */
	i = r->nhosts * r->o.te_parallel;
	snprintf(per, sizeof(per), "-N%d", (n + i - 1) / (i > 0 ? i : 1));
	snprintf(retries, sizeof(retries), "%d", r->nhosts > 1 ? 2 : 1);
	argv[a++] = "parallel";
	argv[a++] = "--pipe";
	argv[a++] = per;
	argv[a++] = "--sshloginfile";
	argv[a++] = (char *)r->o.sshloginfile;
	argv[a++] = "--ssh";
	argv[a++] = (char *)ssh_cmd();
	argv[a++] = "-j";
	argv[a++] = jobs;
	argv[a++] = "--retries";
	argv[a++] = retries;
	argv[a++] = "--halt";
	argv[a++] = "never";
	argv[a++] = cmd;
	argv[a] = NULL;
	if ((rc = run_parallel(argv, in, out, &st)) < 0)
		goto rm;
	if ((fp = fopen(out, "r")) == NULL) {
		rc = aoe_err(AOE_EIO, "cannot open '%s': %s", out,
		    strerror(errno));
		goto rm;
	}
	while ((len = getline(&line, &cap, fp)) > 0) {
		cJSON *o = cJSON_Parse(line);
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
		if (cJSON_IsNumber(id) && id->valueint >= 0 &&
		    id->valueint < n && lost[id->valueint] &&
		    cJSON_GetObjectItemCaseSensitive(o, "status")) {
			opat_timing_from_json(o, &t[id->valueint]);
			lost[id->valueint] = 0;
		}
		cJSON_Delete(o);
	}
	fclose(fp);
	for (i = 0; i < n; i++)
		if (lost[i]) {
			memset(&t[i], 0, sizeof(t[i]));
			t[i].status = OPAT_INVALID;
			snprintf(t[i].reason, sizeof(t[i].reason), "lost: its "
			    "host failed (parallel exit %d)", st);
		}
rm:
	unlink(in);
	unlink(out);
out:
	free(line);
	free(exe);
	free(qexe);
	return rc;
}
