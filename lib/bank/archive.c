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

int
aoe_bank_export(const aoe_bank_opts *o, const char *bank,
    aoe_bank_counts *c)
{
	char dir[PATH_MAX], file[PATH_MAX], soc[128] = "", hex[65], when[32];
	char buf[65536], *man = NULL;
	struct archive *a = NULL;
	struct archive_entry *ae;
	aoe_sha256 sh;
	long n = 0;
	int64_t size = 0;
	cJSON *m, *files, *f;
	size_t got;
	FILE *fp = NULL;
	aoe_ofile w;
	int rc;

	memset(c, 0, sizeof(*c));
	if (o->output == NULL)
		return aoe_err(AOE_EDATA, "export needs --output archive");
	if (bank)
		bank_operand_file(o, bank, file);
	else if ((rc = aoe_bank_target(o, dir, file)) < 0)
		return rc;
	{
		struct archive *t = archive_write_new();
		rc = add_filter(t, o->output);
		archive_write_free(t);
		if (rc < 0)
			return rc;
	}
	if (o->soc)
		snprintf(soc, sizeof(soc), "%s", o->soc);
	/* Pass 1: check the bank and checksum it (one open file). */
	{
		rdr r;
		if ((rc = bank_rdr_open(&r, file, soc, sizeof(soc), 0)) < 0)
			return rc;
		while ((rc = bank_rdr_next(&r)) == 1)
			n++;
		if (rc == 0) {
			fp = fdopen(dup(fileno(r.fp)), "r");
			rewind(fp);
		}
		bank_rdr_close(&r);
		if (rc < 0)
			return rc;
	}
	if (soc[0] == '\0')
		snprintf(soc, sizeof(soc), "%s", o->soc ? o->soc :
		    aoe_soc_version());
	aoe_sha256_init(&sh);
	while ((got = fread(buf, 1, sizeof(buf), fp)) > 0) {
		aoe_sha256_update(&sh, buf, got);
		size += (int64_t)got;
	}
	aoe_sha256_hex(&sh, hex);
	rewind(fp);
	aoe_iso_now(when, sizeof(when));
	m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "format", "aoe-bank-archive");
	cJSON_AddNumberToObject(m, "version", 1);
	cJSON_AddStringToObject(m, "soc_version", soc);
	cJSON_AddStringToObject(m, "tool_version", AOE_VERSION);
	cJSON_AddStringToObject(m, "created_at", when);
	files = cJSON_AddArrayToObject(m, "files");
	f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "name", OPS_FILE);
	cJSON_AddNumberToObject(f, "entries", (double)n);
	cJSON_AddNumberToObject(f, "size", (double)size);
	cJSON_AddStringToObject(f, "sha256", hex);
	cJSON_AddItemToArray(files, f);
	man = cJSON_Print(m);
	cJSON_Delete(m);

	if ((rc = aoe_ofile_open(&w, o->output)) < 0)
		goto out;
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
	archive_entry_set_pathname(ae, "manifest.json");
	archive_entry_set_filetype(ae, AE_IFREG);
	archive_entry_set_perm(ae, 0644);
	archive_entry_set_mtime(ae, time(NULL), 0);
	archive_entry_set_size(ae, (la_int64_t)strlen(man));
	rc = archive_write_header(a, ae) != ARCHIVE_OK ||
	    archive_write_data(a, man, strlen(man)) < 0;
	archive_entry_clear(ae);
	archive_entry_set_pathname(ae, OPS_FILE);
	archive_entry_set_filetype(ae, AE_IFREG);
	archive_entry_set_perm(ae, 0644);
	archive_entry_set_mtime(ae, time(NULL), 0);
	archive_entry_set_size(ae, size);
	if (!rc)
		rc = archive_write_header(a, ae) != ARCHIVE_OK;
	while (!rc && (got = fread(buf, 1, sizeof(buf), fp)) > 0)
		rc = archive_write_data(a, buf, got) < 0;
	archive_entry_free(ae);
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
		c->read = c->total = n;
	}
out:
	if (a)
		archive_write_free(a);
	if (fp)
		fclose(fp);
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
	if (strcmp(p, "manifest.json") != 0 && strcmp(p, OPS_FILE) != 0)
		return aoe_err(AOE_EDATA, "%s: unexpected entry '%s'; "
		    "refused", arch, p);
	*name = p;
	return 0;
}

/* An import in progress: the archive, and what has been read of it. */
typedef struct import {
	const char *arch;		/* its name, for messages */
	struct archive *a;
	char *man;			/* manifest.json, NUL-terminated */
	int have_ops;			/* ops.jsonl was extracted */
	char tmp[PATH_MAX + 32];	/* to this file ("": none) */
	int fd;
	aoe_sha256 sh;			/* with this checksum */
	int64_t size;			/* and size */
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

/* Extract the current member, ops.jsonl, into a file in parent. */
static int
extract_ops(import *im, const aoe_bank_opts *o, const char *parent)
{
	char buf[65536];
	la_ssize_t got;

	if (im->have_ops++)
		return aoe_err(AOE_EDATA, "%s: two %s entries", im->arch,
		    OPS_FILE);
	snprintf(im->tmp, sizeof(im->tmp), "%s/.aoe-import.XXXXXX", parent);
	if ((im->fd = mkstemp(im->tmp)) < 0) {
		im->tmp[0] = '\0';
		return aoe_err(AOE_EIO, "cannot create a file in '%s': %s",
		    parent, strerror(errno));
	}
	while ((got = archive_read_data(im->a, buf, sizeof(buf))) > 0) {
		im->size += got;
		if (im->size > o->max_size)
			return aoe_err(AOE_ENOMEM, "%s: %s is over the size "
			    "limit", im->arch, OPS_FILE);
		aoe_sha256_update(&im->sh, buf, (size_t)got);
		if (write(im->fd, buf, (size_t)got) != got)
			return aoe_err(AOE_EIO, "cannot write '%s': %s",
			    im->tmp, strerror(errno));
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

	aoe_sha256_init(&im->sh);
	while ((r = archive_read_next_header(im->a, &ae)) == ARCHIVE_OK) {
		if ((rc = check_member(im->arch, ae, o, &name)) < 0)
			return rc;
		rc = strcmp(name, "manifest.json") == 0 ?
		    read_manifest(im, ae) : extract_ops(im, o, parent);
		if (rc < 0)
			return rc;
	}
	if (r != ARCHIVE_EOF)
		return aoe_err(AOE_EDATA, "%s: not a valid archive: %s",
		    im->arch, archive_error_string(im->a));
	if (im->man == NULL || !im->have_ops)
		return aoe_err(AOE_EDATA, "%s: no %s in the archive", im->arch,
		    im->man ? OPS_FILE : "manifest.json");
	return 0;
}

/*
 * The manifest *mp of the import: well formed, with the extracted file's
 * checksum and size, for soc_version want (msoc gets the manifest's);
 * *fp is its entry for ops.jsonl.
 */
static int
check_manifest(const import *im, const char *want, cJSON **mp,
    const cJSON **fp, char *msoc, size_t len)
{
	char hex[65];
	aoe_sha256 sh = im->sh;
	const cJSON *f;
	cJSON *m;

	aoe_sha256_hex(&sh, hex);
	if ((*mp = m = cJSON_Parse(im->man)) == NULL ||
	    bank_jstr(m, "soc_version") == NULL ||
	    !aoe_soc_valid(bank_jstr(m, "soc_version")) ||
	    !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(m, "files")))
		return aoe_err(AOE_EDATA, "%s: manifest.json is malformed",
		    im->arch);
	*fp = f = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(m,
	    "files"), 0);
	if (f == NULL || bank_jstr(f, "sha256") == NULL ||
	    strcmp(bank_jstr(f, "sha256"), hex) != 0 ||
	    !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(f, "size")) ||
	    cJSON_GetObjectItemCaseSensitive(f, "size")->valuedouble !=
	    (double)im->size)
		return aoe_err(AOE_EDATA, "%s: %s does not match the "
		    "manifest's checksum", im->arch, OPS_FILE);
	snprintf(msoc, len, "%s", bank_jstr(m, "soc_version"));
	if (strcmp(msoc, want) != 0)
		return aoe_err(AOE_EUNSUP, "%s: the bank is for soc_version "
		    "'%s', not '%s'; name it with --soc-version %s to import "
		    "it", im->arch, msoc, want, msoc);
	return 0;
}

/* Read the extracted file through, counting its entries into *n. */
static int
count_entries(const import *im, const char *msoc, const char *label,
    const cJSON *f, long *n)
{
	char soc[128];
	rdr r;
	int rc;

	snprintf(soc, sizeof(soc), "%s", msoc);
	if ((rc = bank_rdr_open(&r, im->tmp, soc, sizeof(soc), 0)) < 0)
		return rc;
	r.path = label;
	r.check = 1;
	while ((rc = bank_rdr_next(&r)) == 1)
		(*n)++;
	bank_rdr_close(&r);
	if (rc < 0)
		return rc;
	f = cJSON_GetObjectItemCaseSensitive(f, "entries");
	if (!cJSON_IsNumber(f) || f->valuedouble != (double)*n)
		return aoe_err(AOE_EDATA, "%s: the manifest counts %.0f "
		    "entries, %s holds %ld", im->arch, cJSON_IsNumber(f) ?
		    f->valuedouble : -1.0, OPS_FILE, *n);
	return 0;
}

int
aoe_bank_import(const aoe_bank_opts *o, const char *archive,
    aoe_bank_counts *c)
{
	char dir[PATH_MAX], file[PATH_MAX], parent[PATH_MAX];
	char label[PATH_MAX + 32], msoc[128] = "", soc[128];
	const cJSON *f = NULL;
	cJSON *m = NULL;
	import im;
	long n = 0;
	int rc;
	src s;

	memset(c, 0, sizeof(*c));
	memset(&im, 0, sizeof(im));
	im.arch = archive;
	im.fd = -1;
	/* Errors in the extracted file name it in the archive. */
	snprintf(label, sizeof(label), "%s:%s", archive, OPS_FILE);
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
	if ((rc = aoe_bank_target(o, dir, file)) < 0)
		goto out;
	nearest_dir(dir, parent, sizeof(parent));
	if ((rc = read_members(&im, o, parent)) < 0 ||
	    (rc = check_manifest(&im, o->soc ? o->soc : aoe_soc_version(),
	    &m, &f, msoc, sizeof(msoc))) < 0 ||
	    (rc = aoe_bank_target(o, dir, file)) < 0)
		goto out;
	/* Check the extracted file completely, then merge it in. */
	if ((rc = count_entries(&im, msoc, label, f, &n)) < 0)
		goto out;
	snprintf(soc, sizeof(soc), "%s", msoc);
	memset(&s, 0, sizeof(s));
	if ((rc = bank_rdr_open(&s.r, im.tmp, soc, sizeof(soc), 0)) < 0)
		goto out;
	s.r.path = label;
	rc = bank_write(o, dir, file, soc, sizeof(soc), &s, 1, o->policy, c);
	bank_rdr_close(&s.r);
	c->read = n;
out:
	if (im.fd >= 0)
		close(im.fd);
	if (im.tmp[0])
		unlink(im.tmp);
	cJSON_Delete(m);
	free(im.man);
	archive_read_free(im.a);
	return rc;
}

