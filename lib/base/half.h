/*
 * half.h - float16 and bfloat16 conversions for libaoe (the kernels and
 * aoe_tensor_elem): one value at a time, and runs of them (F16C where
 * the build has it).
 * float16 conversions round to nearest even and keep denormals,
 * infinities and NaNs; so does float to bfloat16, whose NaNs stay quiet
 * NaNs.  Not installed.
 */
#ifndef AOE_HALF_H
#define AOE_HALF_H

#include <stdint.h>
#include <string.h>
#ifdef __F16C__
#include <immintrin.h>
#endif

static inline float
h2f(uint16_t h)
{
	uint32_t s = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f;
	uint32_t m = h & 0x3ff, u;
	float f;

	if (e == 0) {
		f = (float)m * 0x1p-24f;
		return s ? -f : f;
	}
	if (e == 31)
		u = s | 0x7f800000 | (m << 13);
	else
		u = s | ((e + 112) << 23) | (m << 13);
	memcpy(&f, &u, 4);
	return f;
}

static inline uint16_t
f2h(float f)
{
	uint32_t u, sign;
	uint16_t o;

	memcpy(&u, &f, 4);
	sign = (u >> 16) & 0x8000;
	u &= 0x7fffffff;
	if (u >= 0x47800000) {
		/* At least 65536, infinity or NaN (kept quiet). */
		if (u > 0x7f800000)
			o = (uint16_t)(0x7e00 | ((u >> 13) & 0x3ff));
		else
			o = 0x7c00;
	} else if (u < 0x38800000) {
		/* A float16 denormal or zero: let the FPU round. */
		float t, magic;
		uint32_t mu = (uint32_t)((127 - 15) + (23 - 10) + 1) << 23, tu;

		memcpy(&magic, &mu, 4);
		memcpy(&t, &u, 4);
		t += magic;
		memcpy(&tu, &t, 4);
		o = (uint16_t)(tu - mu);
	} else {
		uint32_t odd = (u >> 13) & 1;

		u += ((uint32_t)(15 - 127) << 23) + 0xfff + odd;
		o = (uint16_t)(u >> 13);
	}
	return (uint16_t)(o | sign);
}

/* Double to float16 directly, rounding once. */
static inline uint16_t
d2h(double d)
{
	uint64_t u, m, rem, half, r;
	uint16_t sign;
	int e, sh;

	memcpy(&u, &d, 8);
	sign = (uint16_t)((u >> 48) & 0x8000);
	u &= 0x7fffffffffffffffULL;
	if (u >= 0x7ff0000000000000ULL)
		return sign | (u > 0x7ff0000000000000ULL ?
		    (uint16_t)(0x7e00 | ((u >> 42) & 0x3ff)) : 0x7c00);
	e = (int)(u >> 52) - 1023;
	if (e >= 16)
		return sign | 0x7c00;
	if (e < -25)
		return sign;
	m = (u & 0xfffffffffffffULL) | (1ULL << 52);
	sh = e >= -14 ? 42 : 42 + (-14 - e);
	r = m >> sh;
	rem = m & ((1ULL << sh) - 1);
	half = 1ULL << (sh - 1);
	if (rem > half || (rem == half && (r & 1)))
		r++;
	if (e >= -14)
		return sign | (uint16_t)((uint64_t)(e + 14) * 1024 + r);
	return sign | (uint16_t)r;
}

static inline void
h2f_n(const uint16_t *s, float *d, int64_t n)
{
	int64_t i = 0;

#ifdef __F16C__
	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(d + i, _mm256_cvtph_ps(
		    _mm_loadu_si128((const __m128i *)(s + i))));
#endif
	for (; i < n; i++)
		d[i] = h2f(s[i]);
}

static inline void
f2h_n(const float *s, uint16_t *d, int64_t n)
{
	int64_t i = 0;

#ifdef __F16C__
	for (; i + 8 <= n; i += 8)
		_mm_storeu_si128((__m128i *)(d + i), _mm256_cvtps_ph(
		    _mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT));
#endif
	for (; i < n; i++)
		d[i] = f2h(s[i]);
}

/* bfloat16 is the top half of a float32. */
static inline float
bf2f(uint16_t b)
{
	uint32_t u = (uint32_t)b << 16;
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static inline uint16_t
f2bf(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	if ((u & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((u >> 16) | 0x40);
	u += 0x7fff + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

static inline void
bf2f_n(const uint16_t *s, float *d, int64_t n)
{
	int64_t i;

	for (i = 0; i < n; i++)
		d[i] = bf2f(s[i]);
}

static inline void
f2bf_n(const float *s, uint16_t *d, int64_t n)
{
	int64_t i;

	for (i = 0; i < n; i++)
		d[i] = f2bf(s[i]);
}

#endif
