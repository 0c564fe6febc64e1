/*
 * sig.c - the canonical signature of an operator case, its 64-bit key,
 * the soc_version of this host, and a small SHA-256 for bank archives.
 *
 * The signature and the key are part of the bank format (aoe-bank(5)):
 * changing either one invalidates every bank ever written, so both are
 * fixed forever.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aoe.h"
#include "kernel.h"
#include "bankpriv.h"

/* FNV-1a 64: the key of a signature. */
uint64_t
aoe_op_key(const char *sig)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *sig; sig++) {
		h ^= (unsigned char)*sig;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static uint64_t
fnv_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ULL;

	while (n-- > 0) {
		h ^= *s++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* A growing string. */
typedef struct sbuf {
	char *s;
	size_t n, cap;
} sbuf;

static void
sb_printf(sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int r;

	for (;;) {
		va_start(ap, fmt);
		r = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
		va_end(ap);
		if (r >= 0 && (size_t)r < b->cap - b->n) {
			b->n += (size_t)r;
			return;
		}
		b->cap = b->cap * 2 + (size_t)(r > 0 ? r : 0) + 64;
		b->s = aoe_xrealloc(b->s, b->cap);
	}
}

static void
sb_tensor(sbuf *b, const aoe_tensor *t)
{
	int d;

	sb_printf(b, "%s[", aoe_dtype_name(t->dtype));
	for (d = 0; d < t->ndim; d++)
		sb_printf(b, "%s%lld", d ? "," : "", (long long)t->dims[d]);
	sb_printf(b, "]");
}

static int
cmp_attr(const void *a, const void *b)
{
	const aoe_attr *x = *(const aoe_attr *const *)a;
	const aoe_attr *y = *(const aoe_attr *const *)b;

	return strcmp(x->name, y->name);
}

static void
sb_attr(sbuf *b, const aoe_attr *a)
{
	int i;

	sb_printf(b, "%s:", a->name);
	switch (a->type) {
	case AOE_A_FLOAT:
		sb_printf(b, "f=%.9g", (double)a->f);
		break;
	case AOE_A_INT:
		sb_printf(b, "i=%lld", (long long)a->i);
		break;
	case AOE_A_STRING:
		sb_printf(b, "s=%zu:%s", strlen(a->s ? a->s : ""),
		    a->s ? a->s : "");
		break;
	case AOE_A_FLOATS:
		sb_printf(b, "fs=[");
		for (i = 0; i < a->n; i++)
			sb_printf(b, "%s%.9g", i ? "," : "",
			    (double)a->floats[i]);
		sb_printf(b, "]");
		break;
	case AOE_A_INTS:
		sb_printf(b, "is=[");
		for (i = 0; i < a->n; i++)
			sb_printf(b, "%s%lld", i ? "," : "",
			    (long long)a->ints[i]);
		sb_printf(b, "]");
		break;
	case AOE_A_STRINGS:
		sb_printf(b, "ss=[");
		for (i = 0; i < a->n; i++)
			sb_printf(b, "%s%zu:%s", i ? "," : "",
			    strlen(a->strings[i]), a->strings[i]);
		sb_printf(b, "]");
		break;
	case AOE_A_TENSOR:
		if (a->t) {
			sb_printf(b, "t=");
			sb_tensor(b, a->t);
			sb_printf(b, "#%016llx", (unsigned long long)
			    (a->t->data ? fnv_bytes(a->t->data,
			    aoe_tensor_nbytes(a->t)) : 0));
		} else
			sb_printf(b, "t=none");
		break;
	case AOE_A_GRAPH:
		sb_printf(b, "g");
		break;
	default:
		sb_printf(b, "u");
		break;
	}
}

/*
 * The canonical signature (aoe-bank(5)):
 *
 *   op=TYPE;threads=N;in=T|T|-;out=T;attrs=a:k=v;b:k=v
 *
 * where T is dtype[d0,d1,...] with a "c" after a constant input and "-"
 * for an absent optional one, and the attributes are sorted by name
 * (less those libaoe adds itself, named "_aoe_...", and a residual fused
 * into a Conv).  Names of nodes and tensors are not part of it.
 */
int
aoe_op_signature(const aoe_graph *g, const aoe_node *n, int nthreads,
    char *buf, size_t len)
{
	sbuf b = { NULL, 0, 0 };
	const aoe_attr **at;
	int i, nput, nsig, rc = 0;

	b.cap = 256;
	b.s = aoe_xmalloc(b.cap);
	b.s[0] = '\0';
	if (n->domain && n->domain[0] && strcmp(n->domain, "ai.onnx") != 0)
		sb_printf(&b, "op=%s:%s", n->domain, n->op_type);
	else
		sb_printf(&b, "op=%s", n->op_type);
	sb_printf(&b, ";threads=%d;in=", nthreads);
	/*
	 * A residual fused into a Conv (its input 3, attribute _aoe_add:
	 * the input count before) or a bias into a MatMul (input 2,
	 * _aoe_bias likewise) is not part of the op's signature.
	 */
	nsig = n->nin;
	if (aoe_attr_find(n, "_aoe_add") != NULL)
		nsig = (int)aoe_attr_int(n, "_aoe_add", n->nin);
	else if (aoe_attr_find(n, "_aoe_bias") != NULL)
		nsig = (int)aoe_attr_int(n, "_aoe_bias", n->nin);
	if (nsig < 0 || nsig > n->nin)
		nsig = n->nin;
	for (i = 0; i < nsig; i++) {
		const aoe_tensor *t = n->in[i] >= 0 ? aoe_in(g, n, i) : NULL;
		if (i)
			sb_printf(&b, "|");
		if (t == NULL) {
			sb_printf(&b, "-");
			continue;
		}
		if (t->ndim < 0)
			rc = aoe_err(AOE_EDATA, "node '%s': input %d has no "
			    "static shape", n->name, i);
		sb_tensor(&b, t);
		if (t->kind == AOE_T_CONST)
			sb_printf(&b, "c");
	}
	sb_printf(&b, ";out=");
	for (i = 0; i < n->nout; i++) {
		const aoe_tensor *t = n->out[i] >= 0 ? aoe_out(g, n, i) : NULL;
		if (i)
			sb_printf(&b, "|");
		if (t == NULL)
			sb_printf(&b, "-");
		else
			sb_tensor(&b, t);
	}
	sb_printf(&b, ";attrs=");
	at = aoe_xcalloc((size_t)n->nattr + 1, sizeof(*at));
	for (i = 0; i < n->nattr; i++)
		at[i] = &n->attrs[i];
	qsort(at, (size_t)n->nattr, sizeof(*at), cmp_attr);
	for (nput = 0, i = 0; i < n->nattr; i++) {
		/*
		 * Attributes libaoe adds itself (a fused activation, "_aoe_")
		 * change no schedule: a fused op keeps its op-bank entries.
		 */
		if (strncmp(at[i]->name, "_aoe_", 5) == 0)
			continue;
		if (nput++)
			sb_printf(&b, ";");
		sb_attr(&b, at[i]);
	}
	free(at);
	if (rc == 0 && b.n >= len)
		rc = aoe_err(AOE_ENOMEM, "node '%s': signature of %zu bytes "
		    "is longer than %zu", n->name, b.n, len);
	if (rc == 0)
		memcpy(buf, b.s, b.n + 1);
	free(b.s);
	return rc;
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

/*
 * SHA-256 (FIPS 180-4), for the checksums of bank archives.
 */
static const uint32_t K256[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b,
	0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
	0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7,
	0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
	0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152,
	0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
	0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
	0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08,
	0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f,
	0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void
sha_block(aoe_sha256 *c, const uint8_t *p)
{
	uint32_t w[64], a, b, d, e, f, g, h, cc, t1, t2;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		    (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (i = 16; i < 64; i++)
		w[i] = (ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^
		    (w[i - 2] >> 10)) + w[i - 7] + (ROR(w[i - 15], 7) ^
		    ROR(w[i - 15], 18) ^ (w[i - 15] >> 3)) + w[i - 16];
	a = c->h[0]; b = c->h[1]; cc = c->h[2]; d = c->h[3];
	e = c->h[4]; f = c->h[5]; g = c->h[6]; h = c->h[7];
	for (i = 0; i < 64; i++) {
		t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) +
		    ((e & f) ^ (~e & g)) + K256[i] + w[i];
		t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) +
		    ((a & b) ^ (a & cc) ^ (b & cc));
		h = g; g = f; f = e; e = d + t1;
		d = cc; cc = b; b = a; a = t1 + t2;
	}
	c->h[0] += a; c->h[1] += b; c->h[2] += cc; c->h[3] += d;
	c->h[4] += e; c->h[5] += f; c->h[6] += g; c->h[7] += h;
}

void
aoe_sha256_init(aoe_sha256 *c)
{
	static const uint32_t iv[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372,
	    0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };

	memcpy(c->h, iv, sizeof(iv));
	c->len = 0;
	c->nbuf = 0;
}

void
aoe_sha256_update(aoe_sha256 *c, const void *data, size_t n)
{
	const uint8_t *p = data;

	c->len += n;
	if (c->nbuf) {
		while (n > 0 && c->nbuf < 64) {
			c->buf[c->nbuf++] = *p++;
			n--;
		}
		if (c->nbuf < 64)
			return;
		sha_block(c, c->buf);
		c->nbuf = 0;
	}
	for (; n >= 64; n -= 64, p += 64)
		sha_block(c, p);
	memcpy(c->buf, p, n);
	c->nbuf = n;
}

void
aoe_sha256_hex(aoe_sha256 *c, char out[65])
{
	uint64_t bits = c->len * 8;
	uint8_t pad = 0x80, z = 0, len[8];
	int i;

	aoe_sha256_update(c, &pad, 1);
	while (c->nbuf != 56)
		aoe_sha256_update(c, &z, 1);
	for (i = 0; i < 8; i++)
		len[i] = (uint8_t)(bits >> (56 - 8 * i));
	aoe_sha256_update(c, len, 8);
	for (i = 0; i < 8; i++)
		snprintf(out + 8 * i, 9, "%08x", c->h[i]);
}
