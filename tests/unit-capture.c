/*
 * unit-capture - TAP unit tests of the graph hash, the capture hook and
 * the device lock.  Run from the top of the tree (needs the example).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "aoe.h"
#include "engine.h"
#include "tap.h"


#define EXAMPLE "share/aoe/models/example.onnx"

static aoe_graph *
prepared(const char *path)
{
	aoe_run_opts o;
	aoe_graph *g = NULL;

	aoe_run_opts_init(&o);
	if (aoe_model_load(path, &g) < 0 || aoe_graph_prepare(g, &o) < 0) {
		aoe_graph_free(g);
		return NULL;
	}
	return g;
}

static void
test_hash(const char *dir)
{
	aoe_graph *a = prepared(EXAMPLE), *b = prepared(EXAMPLE), *c;
	char path[1024];
	uint64_t ha = 0, hb = 1, hc = 2;
	aoe_attr *at;

	ok(a && b, "the example prepares");
	if (!a || !b)
		return;
	aoe_graph_hash(a, &ha);
	aoe_graph_hash(b, &hb);
	ok(ha == hb, "two compiles of one model hash the same");
	snprintf(path, sizeof(path), "%s/g.json", dir);
	ok(aoe_graph_write(a, path) == 0, "aoe_graph_write");
	c = prepared(path);
	ok(c != NULL, "the written graph prepares");
	if (c)
		aoe_graph_hash(c, &hc);
	ok(ha == hc, "the written graph hashes as its source");
	aoe_graph_free(c);
	for (int i = 0; i < b->nnodes; i++)
		if (strcmp(b->nodes[i].op_type, "Gemm") == 0) {
			at = (aoe_attr *)aoe_attr_find(&b->nodes[i], "transB");
			if (at)
				at->i = 0;
		}
	aoe_graph_hash(b, &hb);
	ok(ha != hb, "an attribute changes the hash");
	((float *)a->tensors[aoe_graph_find(a, "head.fc.bias")]->data)[0]
	    += 1;
	aoe_graph_hash(a, &hc);
	ok(ha != hc, "constant data changes the hash");
	snprintf(path, sizeof(path), "%s/no/such/dir/g.json", dir);
	ok(aoe_graph_write(a, path) == -AOE_EIO &&
	    strstr(aoe_errmsg(), "cannot create") &&
	    strstr(aoe_errmsg(), "No such file"),
	    "aoe_graph_write to a missing directory fails");
	aoe_graph_free(a);
	aoe_graph_free(b);
}

static void
test_hook(void)
{
	aoe_graph *g = prepared(EXAMPLE);

	unsetenv("AOE_MODE");
	ok(g && aoe_capture_hook(g) == 0, "no AOE_MODE: the hook does "
	    "nothing");
	setenv("AOE_MODE", "4", 1);
	ok(aoe_capture_hook(g) == -AOE_EUNSUP &&
	    strcmp(aoe_errmsg(), "AOE_MODE=4 (gradient split tuning) is not "
	    "supported by aoe") == 0, "AOE_MODE=4 is refused");
	setenv("AOE_MODE", "two", 1);
	ok(aoe_capture_hook(g) == -AOE_EDATA, "AOE_MODE=two is refused");
	unsetenv("AOE_MODE");
	aoe_graph_free(g);
}

/* aoe-check's prepare: the memory is sized, none allocated, no run. */
static void
test_plan_only(void)
{
	aoe_graph *a = prepared(EXAMPLE), *g = NULL;
	aoe_run_opts o;

	aoe_run_opts_init(&o);
	o.plan_only = 1;
	ok(a && aoe_model_load(EXAMPLE, &g) == 0 &&
	    aoe_graph_prepare(g, &o) == 0, "a plan-only prepare");
	if (a == NULL || g == NULL) {
		aoe_graph_free(a);
		aoe_graph_free(g);
		return;
	}
	ok(g->arena_size > 0 && g->arena_size == a->arena_size &&
	    g->scratch_size == a->scratch_size && g->arena == NULL &&
	    g->scratch == NULL, "it plans the arena a run would have, "
	    "and allocates none of it");
	ok(aoe_graph_run(g, &o) == -AOE_EINTERNAL &&
	    strcmp(aoe_errmsg(), "graph is not prepared") == 0,
	    "the plan-only graph does not run");
	aoe_graph_free(a);
	aoe_graph_free(g);
}

static void
test_lock(const char *dir)
{
	char path[1024], buf[256], want[64];
	FILE *fp;
	pid_t pid;
	int fd, st;

	snprintf(path, sizeof(path), "%s/device.lock", dir);
	fd = aoe_device_lock(path);
	ok(fd >= 0, "aoe_device_lock takes a free lock");
	buf[0] = '\0';
	if ((fp = fopen(path, "r")) != NULL) {
		if (fgets(buf, sizeof(buf), fp) == NULL)
			buf[0] = '\0';
		fclose(fp);
	}
	snprintf(want, sizeof(want), " pid=%ld ", (long)getpid());
	ok(strncmp(buf, "user=", 5) == 0 && strstr(buf, want),
	    "the owner is written in the lock");
	if ((pid = fork()) == 0) {
		int r = aoe_device_lock(path);
		_exit(r == -AOE_EIO && strstr(aoe_errmsg(),
		    "the device is being tuned by user=") &&
		    strstr(aoe_errmsg(), want) ? 0 : 1);
	}
	ok(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	    WEXITSTATUS(st) == 0, "another process is refused, with the "
	    "owner named");
	{
		aoe_check_opts o;
		aoe_check_result r;
		int i, failed = 0;

		aoe_check_opts_init(&o);
		o.lock_path = path;
		o.min_disk_gb = 0;
		ok(aoe_check_run(&o, &r) == 0, "aoe_check_run");
		for (i = 0; i < r.n; i++)
			if (strcmp(r.item[i].check, "lock") == 0)
				failed = r.item[i].status == AOE_CHECK_FAIL;
		ok(failed, "aoe_check_run sees the lock held");
	}
	aoe_device_unlock(fd);
	fd = aoe_device_lock(path);
	ok(fd >= 0, "the lock is free once released");
	aoe_device_unlock(fd);
}

int
main(void)
{
	char dir[] = "/tmp/aoe-unit-capture.XXXXXX";
	char cmd[128];

	aoe_setprogname("unit-capture");
	if (mkdtemp(dir) == NULL)
		return 1;
	test_hash(dir);
	test_hook();
	test_plan_only();
	test_lock(dir);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# cannot remove %s\n", dir);
	return done_testing();
}
