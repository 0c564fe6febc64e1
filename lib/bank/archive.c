/*
 * archive.c - aoe-bank export and import: a bank file and its manifest
 * (soc_version, entries, size, SHA-256) in a tar archive, through
 * libarchive.  An import checks everything before it merges: every
 * member's kind and path, the size limit, the checksum, the soc_version
 * and every entry.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "bank.h"

static int
add_filter(struct archive *a, const char *path)
{
	size_t l = strlen(path);
#define SUF(s) (l >= strlen(s) && strcmp(path + l - strlen(s), s) == 0)
	if (SUF(".tar.gz") || SUF(".tgz"))
		return archive_write_add_filter_gzip(a);
	if (SUF(".tar.xz") || SUF(".txz"))
		return archive_write_add_filter_xz(a);
	if (SUF(".tar.zst") || SUF(".tzst"))
		return archive_write_add_filter_zstd(a);
	if (SUF(".tar"))
		return archive_write_add_filter_none(a);
#undef SUF
	return aoe_err(AOE_EUNSUP, "'%s': the archive name must end in "
	    ".tar, .tar.gz, .tgz, .tar.xz or .tar.zst", path);
}

/* The kind of bank file name is: 1 subgraph (graphs.jsonl), else 0. */
static int
name_kind(const char *file)
{
	const char *b = strrchr(file, '/');

	return strcmp(b ? b + 1 : file, GRAPHS_FILE) == 0;
}

static const char *const kind_name[] = { "op", "subgraph" };

/* The kind of an entry: 1 when it is a subgraph's, else 0. */
static int
ent_kind(const ent *e)
{
	return bank_jstr(e->j, "op_type") == NULL &&
	    bank_jstr(e->j, "subgraph") != NULL;
}

/* One bank file being exported. */
typedef struct xfile {
	int kind;			/* 0 operators, 1 subgraphs */
	char file[PATH_MAX];
	FILE *fp;			/* its checked contents */
	long n;
	int64_t size;
	char hex[65];
} xfile;

/*
 * Pass 1 for one file: check every entry (and that each is of the
 * file's kind) and checksum it.  0, 1 when it is missing and optional,
 * or < 0.
 */
static int
export_check(xfile *x, char *soc, size_t soclen, int optional)
{
	char buf[65536], s2[128];
	aoe_sha256 sh;
	size_t got;
	rdr r;
	int rc;

	if (optional && access(x->file, F_OK) < 0 && errno == ENOENT)
		return 1;
	snprintf(s2, sizeof(s2), "%s", soc);
	if ((rc = bank_rdr_open(&r, x->file, s2, sizeof(s2), 0)) < 0)
		return rc;
	while ((rc = bank_rdr_next(&r)) == 1) {
		char why[768];
		if (ent_kind(&r.e) != x->kind) {
			rc = aoe_err(AOE_EDATA, "%s:%ld: a %s entry in a%s "
			    "bank; refused", x->file, r.lineno,
			    kind_name[ent_kind(&r.e)], x->kind ? " subgraph" :
			    "n operator");
			break;
		}
		/* An archive goes to other hosts: only legal schedules. */
		if (bank_check_sched(&r.e, why, sizeof(why)) < 0) {
			rc = aoe_err(AOE_EDATA, "%s:%ld: %s; not exported",
			    x->file, r.lineno, why);
			break;
		}
		x->n++;
	}
	if (rc == 0) {
		x->fp = fdopen(dup(fileno(r.fp)), "r");
		rewind(x->fp);
	}
	bank_rdr_close(&r);
	if (rc < 0)
		return rc;
	if (soc[0] == '\0')
		snprintf(soc, soclen, "%s", s2);
	else if (s2[0] && strcmp(s2, soc) != 0)
		return aoe_err(AOE_EDATA, "%s: soc_version '%s', not the other "
		    "bank's '%s'", x->file, s2, soc);
	aoe_sha256_init(&sh);
	while ((got = fread(buf, 1, sizeof(buf), x->fp)) > 0) {
		aoe_sha256_update(&sh, buf, got);
		x->size += (int64_t)got;
	}
	aoe_sha256_hex(&sh, x->hex);
	rewind(x->fp);
	return 0;
}

static int
write_member(struct archive *a, struct archive_entry *ae, const char *name,
    int64_t size)
{
	archive_entry_clear(ae);
	archive_entry_set_pathname(ae, name);
	archive_entry_set_filetype(ae, AE_IFREG);
	archive_entry_set_perm(ae, 0644);
	archive_entry_set_mtime(ae, time(NULL), 0);
	archive_entry_set_size(ae, size);
	return archive_write_header(a, ae) != ARCHIVE_OK;
}

/*
 * export: the operator and the subgraph bank (with o->graphs only the
 * subgraph bank; a bank operand: that file, or in a directory both
 * files) into one archive whose manifest records each file's kind.
 */
int
aoe_bank_export(const aoe_bank_opts *o, const char *bank,
    aoe_bank_counts *c)
{
	char dir[PATH_MAX], soc[128] = "", when[32], buf[65536];
	char *man = NULL;
	struct archive *a = NULL;
	struct archive_entry *ae = NULL;
	aoe_bank_opts oo = *o;
	xfile x[2];
	int nx = 0, i, k, rc = 0, optional, have = 0;
	cJSON *m, *files, *f, *kinds;
	size_t got;
	aoe_ofile w;

	memset(c, 0, sizeof(*c));
	memset(x, 0, sizeof(x));
	if (o->output == NULL)
		return aoe_err(AOE_EDATA, "export needs --output archive");
	{
		struct archive *t = archive_write_new();
		rc = add_filter(t, o->output);
		archive_write_free(t);
		if (rc < 0)
			return rc;
	}
	if (bank && (strcmp(bank, "-") == 0 || !bank_is_dir(bank))) {
		/* One file: its kind is its name's, or --graphs. */
		snprintf(x[0].file, PATH_MAX, "%s", bank);
		x[0].kind = o->graphs || name_kind(bank);
		nx = 1;
	} else
		for (k = o->graphs; k < 2; k++) {
			oo.graphs = k;
			x[nx].kind = k;
			if (bank)
				bank_operand_file(&oo, bank, x[nx].file);
			else if ((rc = aoe_bank_target(&oo, dir,
			    x[nx].file)) < 0)
				return rc;
			nx++;
		}
	if (o->soc)
		snprintf(soc, sizeof(soc), "%s", o->soc);
	/* Pass 1: check the banks and checksum them. */
	optional = nx > 1;
	for (i = 0; i < nx && rc >= 0; i++) {
		/* the operator bank first: it fixes the soc_version */
		if ((rc = export_check(&x[i], soc, sizeof(soc), optional)) == 0)
			have++;
	}
	if (rc >= 0 && have == 0)
		rc = aoe_err(AOE_EIO, "cannot open '%s' or '%s': No such file "
		    "or directory", x[0].file, x[1].file);
	if (rc < 0)
		goto out;
	rc = 0;
	if (soc[0] == '\0')
		snprintf(soc, sizeof(soc), "%s", o->soc ? o->soc :
		    aoe_soc_version());
	aoe_iso_now(when, sizeof(when));
	m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "format", "aoe-bank-archive");
	cJSON_AddNumberToObject(m, "version", 2);
	cJSON_AddStringToObject(m, "soc_version", soc);
	cJSON_AddStringToObject(m, "tool_version", AOE_VERSION);
	cJSON_AddStringToObject(m, "created_at", when);
	kinds = cJSON_AddArrayToObject(m, "kinds");
	files = cJSON_AddArrayToObject(m, "files");
	for (i = 0; i < nx; i++) {
		if (x[i].fp == NULL)
			continue;
		cJSON_AddItemToArray(kinds, cJSON_CreateString(
		    kind_name[x[i].kind]));
		f = cJSON_CreateObject();
		cJSON_AddStringToObject(f, "name", x[i].kind ? GRAPHS_FILE :
		    OPS_FILE);
		cJSON_AddStringToObject(f, "kind", kind_name[x[i].kind]);
		cJSON_AddNumberToObject(f, "entries", (double)x[i].n);
		cJSON_AddNumberToObject(f, "size", (double)x[i].size);
		cJSON_AddStringToObject(f, "sha256", x[i].hex);
		cJSON_AddItemToArray(files, f);
	}
	man = cJSON_Print(m);
	cJSON_Delete(m);

	if ((rc = aoe_ofile_open(&w, o->output)) < 0)
		goto out;
	bank_tmp_guard(w.tmp);
	a = archive_write_new();
	archive_write_set_format_pax_restricted(a);
	if ((rc = add_filter(a, o->output)) < 0 ||
	    archive_write_open_fd(a, fileno(w.fp)) != ARCHIVE_OK) {
		if (rc >= 0)
			rc = aoe_err(AOE_EIO, "cannot write '%s': %s",
			    o->output, archive_error_string(a));
		aoe_ofile_abort(&w);
		goto out;
	}
	ae = archive_entry_new();
	rc = write_member(a, ae, "manifest.json", (int64_t)strlen(man)) ||
	    archive_write_data(a, man, strlen(man)) < 0;
	for (i = 0; i < nx && !rc; i++) {
		if (x[i].fp == NULL)
			continue;
		rc = write_member(a, ae, x[i].kind ? GRAPHS_FILE : OPS_FILE,
		    x[i].size);
		while (!rc && (got = fread(buf, 1, sizeof(buf), x[i].fp)) > 0)
			rc = archive_write_data(a, buf, got) < 0;
		c->read += x[i].n;
	}
	if (!rc)
		rc = archive_write_close(a) != ARCHIVE_OK;
	if (rc) {
		rc = aoe_err(AOE_EIO, "cannot write '%s': %s", o->output,
		    archive_error_string(a) ? archive_error_string(a) :
		    strerror(errno));
		aoe_ofile_abort(&w);
		goto out;
	}
	if ((rc = aoe_ofile_close(&w)) == 0) {
		snprintf(c->file, sizeof(c->file), "%s", o->output);
		snprintf(c->soc, sizeof(c->soc), "%s", soc);
		c->total = c->read;
	}
out:
	bank_tmp_unguard();
	if (ae)
		archive_entry_free(ae);
	if (a)
		archive_write_free(a);
	for (i = 0; i < nx; i++)
		if (x[i].fp)
			fclose(x[i].fp);
	free(man);
	return rc;
}

/* Check one archive entry's header; 0 or an error naming why. */
static int
check_member(const char *arch, struct archive_entry *ae,
    const aoe_bank_opts *o, const char **name)
{
	const char *p = archive_entry_pathname(ae), *s;
	mode_t ft = archive_entry_filetype(ae);

	if (p == NULL)
		return aoe_err(AOE_EDATA, "%s: an entry has no name", arch);
	if (p[0] == '/')
		return aoe_err(AOE_EDATA, "%s: entry '%s' has an absolute "
		    "path; refused", arch, p);
	for (s = p; *s; ) {
		size_t l = strcspn(s, "/");
		if (l == 2 && s[0] == '.' && s[1] == '.')
			return aoe_err(AOE_EDATA, "%s: entry '%s' contains "
			    "'..'; refused", arch, p);
		s += l;
		s += strspn(s, "/");
	}
	if (archive_entry_hardlink(ae) || ft == AE_IFLNK ||
	    archive_entry_symlink(ae))
		return aoe_err(AOE_EDATA, "%s: entry '%s' is a link; refused",
		    arch, p);
	if (ft == AE_IFCHR || ft == AE_IFBLK || ft == AE_IFIFO ||
	    ft == AE_IFSOCK)
		return aoe_err(AOE_EDATA, "%s: entry '%s' is a device or "
		    "fifo; refused", arch, p);
	if (ft != AE_IFREG)
		return aoe_err(AOE_EDATA, "%s: entry '%s' is not a regular "
		    "file; refused", arch, p);
	if (archive_entry_size(ae) > o->max_size)
		return aoe_err(AOE_ENOMEM, "%s: entry '%s' is %lld bytes, "
		    "over the limit of %lld; refused", arch, p,
		    (long long)archive_entry_size(ae),
		    (long long)o->max_size);
	while (p[0] == '.' && p[1] == '/')
		p += 2;
	if (strcmp(p, "manifest.json") != 0 && strcmp(p, OPS_FILE) != 0 &&
	    strcmp(p, GRAPHS_FILE) != 0)
		return aoe_err(AOE_EDATA, "%s: unexpected entry '%s'; "
		    "refused", arch, p);
	*name = p;
	return 0;
}

/* An import in progress: the archive, and what has been read of it. */
typedef struct xtract {
	char tmp[PATH_MAX + 32];	/* extracted to this file ("": none) */
	int fd;
	aoe_sha256 sh;			/* with this checksum */
	int64_t size;			/* and size */
	const cJSON *mf;		/* its manifest entry */
	long n;
} xtract;

typedef struct import {
	const char *arch;		/* its name, for messages */
	struct archive *a;
	char *man;			/* manifest.json, NUL-terminated */
	xtract x[2];			/* ops.jsonl, graphs.jsonl */
} import;

/*
 * The nearest existing directory on dir's path: the extracted file goes
 * there, so that nothing is created before the archive is accepted.
 */
static void
nearest_dir(const char *dir, char *parent, size_t len)
{
	char *sl;

	snprintf(parent, len, "%s", dir);
	while (!bank_is_dir(parent)) {
		if ((sl = strrchr(parent, '/')) == NULL) {
			snprintf(parent, len, ".");
			break;
		}
		if (sl == parent)
			sl[1] = '\0';
		else
			*sl = '\0';
	}
}

/* Read the current member, manifest.json, into im->man. */
static int
read_manifest(import *im, struct archive_entry *ae)
{
	int64_t mlen = 0, sz = archive_entry_size(ae);
	la_ssize_t got;

	if (im->man || sz > (1 << 20))
		return aoe_err(AOE_EDATA, "%s: a second or oversized "
		    "manifest.json", im->arch);
	im->man = aoe_xmalloc((size_t)sz + 1);
	while ((got = archive_read_data(im->a, im->man + mlen,
	    (size_t)(sz - mlen))) > 0)
		mlen += got;
	if (got < 0 || mlen != sz)
		return aoe_err(AOE_EDATA, "%s: manifest.json: %s", im->arch,
		    got < 0 ? archive_error_string(im->a) : "truncated");
	im->man[mlen] = '\0';
	return 0;
}

/* Extract the current member, a bank file, into a file in parent. */
static int
extract_bank(import *im, const aoe_bank_opts *o, const char *parent,
    int kind)
{
	const char *name = kind ? GRAPHS_FILE : OPS_FILE;
	xtract *x = &im->x[kind];
	char buf[65536];
	la_ssize_t got;

	if (x->tmp[0])
		return aoe_err(AOE_EDATA, "%s: two %s entries", im->arch,
		    name);
	snprintf(x->tmp, sizeof(x->tmp), "%s/.aoe-import.XXXXXX", parent);
	if ((x->fd = mkstemp(x->tmp)) < 0) {
		x->tmp[0] = '\0';
		return aoe_err(AOE_EIO, "cannot create a file in '%s': %s",
		    parent, strerror(errno));
	}
	bank_tmp_guard(x->tmp);
	if (getenv("AOE_BANK_SLOW_WRITE"))	/* the tests' kill */
		sleep(30);
	aoe_sha256_init(&x->sh);
	while ((got = archive_read_data(im->a, buf, sizeof(buf))) > 0) {
		x->size += got;
		if (x->size > o->max_size)
			return aoe_err(AOE_ENOMEM, "%s: %s is over the size "
			    "limit", im->arch, name);
		aoe_sha256_update(&x->sh, buf, (size_t)got);
		if (write(x->fd, buf, (size_t)got) != got)
			return aoe_err(AOE_EIO, "cannot write '%s': %s",
			    x->tmp, strerror(errno));
	}
	if (got < 0)
		return aoe_err(AOE_EDATA, "%s: %s", im->arch,
		    archive_error_string(im->a));
	return 0;
}

/* Every member, each checked before it is read. */
static int
read_members(import *im, const aoe_bank_opts *o, const char *parent)
{
	struct archive_entry *ae;
	const char *name = NULL;
	int r, rc;

	while ((r = archive_read_next_header(im->a, &ae)) == ARCHIVE_OK) {
		if ((rc = check_member(im->arch, ae, o, &name)) < 0)
			return rc;
		rc = strcmp(name, "manifest.json") == 0 ?
		    read_manifest(im, ae) : extract_bank(im, o, parent,
		    strcmp(name, GRAPHS_FILE) == 0);
		if (rc < 0)
			return rc;
	}
	if (r != ARCHIVE_EOF)
		return aoe_err(AOE_EDATA, "%s: not a valid archive: %s",
		    im->arch, archive_error_string(im->a));
	if (im->man == NULL || (!im->x[0].tmp[0] && !im->x[1].tmp[0]))
		return aoe_err(AOE_EDATA, "%s: no %s in the archive", im->arch,
		    im->man ? "bank file" : "manifest.json");
	return 0;
}

/*
 * The manifest *mp of the import: well formed, naming each extracted
 * file with its kind (an operator file ops.jsonl, a subgraph file
 * graphs.jsonl; version 1 archives hold ops.jsonl alone), checksum and
 * size, for soc_version want (msoc gets the manifest's).
 */
static int
check_manifest(import *im, const char *want, cJSON **mp, char *msoc,
    size_t len)
{
	const cJSON *f, *files;
	double dv;
	int k, ver;
	cJSON *m;

	if ((*mp = m = cJSON_Parse(im->man)) == NULL ||
	    bank_jstr(m, "soc_version") == NULL ||
	    !aoe_soc_valid(bank_jstr(m, "soc_version")) ||
	    !cJSON_IsArray(files = cJSON_GetObjectItemCaseSensitive(m,
	    "files")) ||
	    !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(m, "version")))
		return aoe_err(AOE_EDATA, "%s: manifest.json is malformed",
		    im->arch);
	/* Compared as a double: a cast of any number to int may be undefined. */
	dv = cJSON_GetObjectItemCaseSensitive(m, "version")->valuedouble;
	if (dv != 1 && dv != 2)
		return aoe_err(AOE_EUNSUP, "%s: manifest version %g is not "
		    "supported (1 or 2)", im->arch, dv);
	ver = (int)dv;
	cJSON_ArrayForEach(f, files) {
		const char *name = bank_jstr(f, "name");
		const char *kind = bank_jstr(f, "kind");
		if (name == NULL || (strcmp(name, OPS_FILE) != 0 &&
		    strcmp(name, GRAPHS_FILE) != 0))
			return aoe_err(AOE_EDATA, "%s: manifest.json names an "
			    "unexpected file", im->arch);
		k = strcmp(name, GRAPHS_FILE) == 0;
		if (ver == 1 && k)
			return aoe_err(AOE_EDATA, "%s: a version 1 manifest "
			    "with %s", im->arch, name);
		if (ver == 2 && (kind == NULL ||
		    strcmp(kind, kind_name[k]) != 0))
			return aoe_err(AOE_EDATA, "%s: manifest.json says %s "
			    "holds %s entries, not %s; refused", im->arch,
			    name, kind ? kind : "no kind of", kind_name[k]);
		if (im->x[k].mf)
			return aoe_err(AOE_EDATA, "%s: manifest.json names %s "
			    "twice", im->arch, name);
		im->x[k].mf = f;
	}
	for (k = 0; k < 2; k++) {
		xtract *x = &im->x[k];
		const char *name = k ? GRAPHS_FILE : OPS_FILE;
		aoe_sha256 sh = x->sh;
		char hex[65];
		if (!x->tmp[0] && !x->mf)
			continue;
		if (!x->tmp[0] || !x->mf)
			return aoe_err(AOE_EDATA, "%s: %s is %s", im->arch,
			    name, x->mf ? "in the manifest, not in the "
			    "archive" : "not in the manifest");
		aoe_sha256_hex(&sh, hex);
		if (bank_jstr(x->mf, "sha256") == NULL ||
		    strcmp(bank_jstr(x->mf, "sha256"), hex) != 0 ||
		    !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(x->mf,
		    "size")) || cJSON_GetObjectItemCaseSensitive(x->mf,
		    "size")->valuedouble != (double)x->size)
			return aoe_err(AOE_EDATA, "%s: %s does not match the "
			    "manifest's checksum", im->arch, name);
	}
	snprintf(msoc, len, "%s", bank_jstr(m, "soc_version"));
	if (strcmp(msoc, want) != 0)
		return aoe_err(AOE_EUNSUP, "%s: the bank is for soc_version "
		    "'%s', not '%s'; name it with --soc-version %s to import "
		    "it", im->arch, msoc, want, msoc);
	return 0;
}

/*
 * Read an extracted file through, counting its entries into x->n; each
 * must be of the file's kind (a subgraph entry in an operator file, as
 * old archives of `--graphs export` held, is refused).
 */
static int
count_entries(const import *im, xtract *x, int kind, const char *msoc)
{
	const char *name = kind ? GRAPHS_FILE : OPS_FILE;
	char soc[128], label[PATH_MAX + 32];
	const cJSON *f;
	rdr r;
	int rc;

	snprintf(label, sizeof(label), "%s:%s", im->arch, name);
	snprintf(soc, sizeof(soc), "%s", msoc);
	if ((rc = bank_rdr_open(&r, x->tmp, soc, sizeof(soc), 0)) < 0)
		return rc;
	r.path = label;
	r.check = 1;
	while ((rc = bank_rdr_next(&r)) == 1) {
		if (ent_kind(&r.e) != kind) {
			rc = aoe_err(AOE_EDATA, "%s:%ld: a %s entry in the "
			    "archive's %s bank; refused", label, r.lineno,
			    kind_name[ent_kind(&r.e)], kind ? "subgraph" :
			    "operator");
			break;
		}
		x->n++;
	}
	bank_rdr_close(&r);
	if (rc < 0)
		return rc;
	f = cJSON_GetObjectItemCaseSensitive(x->mf, "entries");
	if (!cJSON_IsNumber(f) || f->valuedouble != (double)x->n)
		return aoe_err(AOE_EDATA, "%s: the manifest counts %.0f "
		    "entries, %s holds %ld", im->arch, cJSON_IsNumber(f) ?
		    f->valuedouble : -1.0, name, x->n);
	return 0;
}

int
aoe_bank_import(const aoe_bank_opts *o, const char *archive,
    aoe_bank_counts *c)
{
	char dir[2][PATH_MAX], file[2][PATH_MAX], parent[PATH_MAX];
	char msoc[128] = "", soc[128];
	aoe_bank_opts oo = *o;
	aoe_bank_counts cc;
	cJSON *m = NULL;
	import im;
	int rc, k;
	src s;

	memset(c, 0, sizeof(*c));
	memset(&im, 0, sizeof(im));
	im.arch = archive;
	im.x[0].fd = im.x[1].fd = -1;
	im.a = archive_read_new();
	archive_read_support_filter_all(im.a);
	archive_read_support_format_tar(im.a);
	if (archive_read_open_filename(im.a, strcmp(archive, "-") ? archive :
	    NULL, 65536) != ARCHIVE_OK) {
		rc = aoe_err(errno == ENOENT ? AOE_EIO : AOE_EDATA,
		    "cannot open '%s': %s", archive,
		    archive_error_string(im.a));
		goto out;
	}
	for (k = 0; k < 2; k++) {
		oo.graphs = k;
		if ((rc = aoe_bank_target(&oo, dir[k], file[k])) < 0)
			goto out;
	}
	/* Extracted files go beside the bank that gets them first. */
	nearest_dir(dir[o->graphs], parent, sizeof(parent));
	if ((rc = read_members(&im, o, parent)) < 0 ||
	    (rc = check_manifest(&im, o->soc ? o->soc : aoe_soc_version(),
	    &m, msoc, sizeof(msoc))) < 0)
		goto out;
	/* --graphs: the subgraph bank only, from an archive that has one. */
	if (o->graphs && !im.x[1].tmp[0]) {
		rc = aoe_err(AOE_EDATA, "%s: the archive holds operator "
		    "entries only, not subgraph entries; import it without "
		    "--graphs", archive);
		goto out;
	}
	/* Check the extracted files completely, then merge them in. */
	for (k = o->graphs; k < 2; k++)
		if (im.x[k].tmp[0] &&
		    (rc = count_entries(&im, &im.x[k], k, msoc)) < 0)
			goto out;
	for (k = o->graphs; k < 2; k++) {
		if (!im.x[k].tmp[0])
			continue;
		oo.graphs = k;
		snprintf(soc, sizeof(soc), "%s", msoc);
		memset(&s, 0, sizeof(s));
		if ((rc = bank_rdr_open(&s.r, im.x[k].tmp, soc, sizeof(soc),
		    0)) < 0)
			goto out;
		s.r.path = archive;
		rc = bank_write(&oo, dir[k], file[k], soc, sizeof(soc), &s, 1,
		    o->policy, &cc);
		bank_rdr_close(&s.r);
		if (rc < 0)
			goto out;
		if (c->file[0] == '\0')
			*c = cc;
		else {
			c->added += cc.added;
			c->updated += cc.updated;
			c->kept += cc.kept;
			c->collisions += cc.collisions;
			c->total += cc.total;
		}
		c->read += im.x[k].n;
	}
out:
	for (k = 0; k < 2; k++) {
		if (im.x[k].fd >= 0)
			close(im.x[k].fd);
		if (im.x[k].tmp[0])
			unlink(im.x[k].tmp);
	}
	bank_tmp_unguard();
	cJSON_Delete(m);
	free(im.man);
	archive_read_free(im.a);
	return rc;
}
