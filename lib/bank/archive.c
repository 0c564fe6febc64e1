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

int
aoe_bank_import(const aoe_bank_opts *o, const char *archive,
    aoe_bank_counts *c)
{
	char dir[PATH_MAX], file[PATH_MAX], parent[PATH_MAX], tmp[PATH_MAX + 32];
	char hex[65], buf[65536], msoc[128] = "", *man = NULL, *sl;
	char label[PATH_MAX + 32];
	const char *arch, *name = NULL, *want;
	struct archive *a;
	struct archive_entry *ae;
	aoe_sha256 sh;
	int64_t size = 0, mlen = 0;
	int rc = 0, fd = -1, have_ops = 0, r;
	cJSON *m = NULL, *f;
	la_ssize_t got;
	long n = 0;

	tmp[0] = '\0';
	memset(c, 0, sizeof(*c));
	arch = archive;
	/* Errors in the extracted file name it in the archive. */
	snprintf(label, sizeof(label), "%s:%s", arch, OPS_FILE);
	a = archive_read_new();
	archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	if (archive_read_open_filename(a, strcmp(arch, "-") ? arch : NULL,
	    65536) != ARCHIVE_OK) {
		rc = aoe_err(errno == ENOENT ? AOE_EIO : AOE_EDATA,
		    "cannot open '%s': %s", arch, archive_error_string(a));
		goto out;
	}
	/*
	 * The nearest existing directory on the bank's path holds the
	 * extracted file: nothing is created before the archive is accepted.
	 */
	if ((rc = aoe_bank_target(o, dir, file)) < 0)
		goto out;
	snprintf(parent, sizeof(parent), "%s", dir);
	while (!bank_is_dir(parent)) {
		if ((sl = strrchr(parent, '/')) == NULL) {
			strcpy(parent, ".");
			break;
		}
		if (sl == parent)
			sl[1] = '\0';
		else
			*sl = '\0';
	}
	aoe_sha256_init(&sh);
	while ((r = archive_read_next_header(a, &ae)) == ARCHIVE_OK) {
		if ((rc = check_member(arch, ae, o, &name)) < 0)
			goto out;
		if (strcmp(name, "manifest.json") == 0) {
			if (man || archive_entry_size(ae) > (1 << 20)) {
				rc = aoe_err(AOE_EDATA, "%s: a second or "
				    "oversized manifest.json", arch);
				goto out;
			}
			man = aoe_xmalloc((size_t)archive_entry_size(ae) + 1);
			while ((got = archive_read_data(a, man + mlen,
			    (size_t)(archive_entry_size(ae) - mlen))) > 0)
				mlen += got;
			if (got < 0 || mlen != archive_entry_size(ae)) {
				rc = aoe_err(AOE_EDATA, "%s: manifest.json: "
				    "%s", arch, got < 0 ?
				    archive_error_string(a) : "truncated");
				goto out;
			}
			man[mlen] = '\0';
			continue;
		}
		if (have_ops++) {
			rc = aoe_err(AOE_EDATA, "%s: two %s entries", arch,
			    OPS_FILE);
			goto out;
		}
		snprintf(tmp, sizeof(tmp), "%s/.aoe-import.XXXXXX", parent);
		if ((fd = mkstemp(tmp)) < 0) {
			rc = aoe_err(AOE_EIO, "cannot create a file in '%s': "
			    "%s", parent, strerror(errno));
			tmp[0] = '\0';
			goto out;
		}
		while ((got = archive_read_data(a, buf, sizeof(buf))) > 0) {
			size += got;
			if (size > o->max_size) {
				rc = aoe_err(AOE_ENOMEM, "%s: %s is over the "
				    "size limit", arch, OPS_FILE);
				goto out;
			}
			aoe_sha256_update(&sh, buf, (size_t)got);
			if (write(fd, buf, (size_t)got) != got) {
				rc = aoe_err(AOE_EIO, "cannot write '%s': %s",
				    tmp, strerror(errno));
				goto out;
			}
		}
		if (got < 0) {
			rc = aoe_err(AOE_EDATA, "%s: %s", arch,
			    archive_error_string(a));
			goto out;
		}
	}
	if (r != ARCHIVE_EOF) {
		rc = aoe_err(AOE_EDATA, "%s: not a valid archive: %s", arch,
		    archive_error_string(a));
		goto out;
	}
	if (man == NULL || !have_ops) {
		rc = aoe_err(AOE_EDATA, "%s: no %s in the archive", arch,
		    man ? OPS_FILE : "manifest.json");
		goto out;
	}
	aoe_sha256_hex(&sh, hex);
	if ((m = cJSON_Parse(man)) == NULL || bank_jstr(m, "soc_version") == NULL ||
	    !aoe_soc_valid(bank_jstr(m, "soc_version")) ||
	    !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(m, "files"))) {
		rc = aoe_err(AOE_EDATA, "%s: manifest.json is malformed",
		    arch);
		goto out;
	}
	f = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(m, "files"), 0);
	if (f == NULL || bank_jstr(f, "sha256") == NULL ||
	    strcmp(bank_jstr(f, "sha256"), hex) != 0 ||
	    !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(f, "size")) ||
	    cJSON_GetObjectItemCaseSensitive(f, "size")->valuedouble !=
	    (double)size) {
		rc = aoe_err(AOE_EDATA, "%s: %s does not match the manifest's "
		    "checksum", arch, OPS_FILE);
		goto out;
	}
	snprintf(msoc, sizeof(msoc), "%s", bank_jstr(m, "soc_version"));
	want = o->soc ? o->soc : aoe_soc_version();
	if (strcmp(msoc, want) != 0) {
		rc = aoe_err(AOE_EUNSUP, "%s: the bank is for soc_version "
		    "'%s', not '%s'; name it with --soc-version %s to import "
		    "it", arch, msoc, want, msoc);
		goto out;
	}
	if ((rc = aoe_bank_target(o, dir, file)) < 0)
		goto out;
	/* Check the extracted file completely, then merge it in. */
	{
		char soc[128];
		rdr r2;
		snprintf(soc, sizeof(soc), "%s", msoc);
		if ((rc = bank_rdr_open(&r2, tmp, soc, sizeof(soc), 0)) < 0)
			goto out;
		r2.path = label;
		while ((rc = bank_rdr_next(&r2)) == 1)
			n++;
		bank_rdr_close(&r2);
		if (rc < 0)
			goto out;
		f = cJSON_GetObjectItemCaseSensitive(f, "entries");
		if (!cJSON_IsNumber(f) || f->valuedouble != (double)n) {
			rc = aoe_err(AOE_EDATA, "%s: the manifest counts "
			    "%.0f entries, %s holds %ld", arch, cJSON_IsNumber(f) ?
			    f->valuedouble : -1.0, OPS_FILE, n);
			goto out;
		}
	}
	{
		char soc[128];
		src s;
		snprintf(soc, sizeof(soc), "%s", msoc);
		memset(&s, 0, sizeof(s));
		if ((rc = bank_rdr_open(&s.r, tmp, soc, sizeof(soc), 0)) < 0)
			goto out;
		s.r.path = label;
		rc = bank_write(o, dir, file, soc, sizeof(soc), &s, 1,
		    o->policy, c);
		bank_rdr_close(&s.r);
		c->read = n;
	}
out:
	if (fd >= 0)
		close(fd);
	if (tmp[0])
		unlink(tmp);
	cJSON_Delete(m);
	free(man);
	archive_read_free(a);
	return rc;
}

