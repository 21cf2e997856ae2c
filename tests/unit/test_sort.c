/*
 * tests/unit/test_sort.c - tgi_sort(), the core's stable sort with a
 * context (shared/src/core/util.c, built into this test: it is not
 * exported).
 *
 * Random arrays of many lengths (across the insertion blocks and every
 * merge level), element sizes 4, 8 and 12 (the two fast swaps and the
 * byte loop), keys drawn from a small range so that most elements tie:
 * the result must equal a plain insertion sort's (stable by
 * construction), and the context must reach the comparator.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "internal.h"

typedef struct rec12 {
	uint32_t key, seq, pad;
} rec12;

typedef struct cmpctx {
	unsigned calls;
	unsigned shift;		/* keys compared as key >> shift */
} cmpctx;

static int cmp4(const void *a, const void *b, void *ctx)
{
	cmpctx *c = ctx;
	uint32_t x = *(const uint32_t *)a >> c->shift;
	uint32_t y = *(const uint32_t *)b >> c->shift;

	c->calls++;
	return x < y ? -1 : x > y;
}

static int cmp8(const void *a, const void *b, void *ctx)
{
	cmpctx *c = ctx;
	uint64_t x = *(const uint64_t *)a >> (32 + c->shift);
	uint64_t y = *(const uint64_t *)b >> (32 + c->shift);

	c->calls++;
	return x < y ? -1 : x > y;
}

static int cmp12(const void *a, const void *b, void *ctx)
{
	cmpctx *c = ctx;
	uint32_t x = ((const rec12 *)a)->key >> c->shift;
	uint32_t y = ((const rec12 *)b)->key >> c->shift;

	c->calls++;
	return x < y ? -1 : x > y;
}

/* The reference: insertion sort, stable by construction. */
static void ref_sort(char *base, size_t n, size_t size, tgi_cmp_fn cmp,
		     void *ctx)
{
	char tmp[16];
	size_t i, j;

	for (i = 1; i < n; i++) {
		memcpy(tmp, base + i * size, size);
		for (j = i; j > 0 && cmp(base + (j - 1) * size, tmp, ctx) > 0;
		     j--)
			memcpy(base + j * size, base + (j - 1) * size, size);
		memcpy(base + j * size, tmp, size);
	}
}

static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* Fills n elements: a key from [0, range) and the input position (the
 * low bits, ignored by the comparator through shift), so a stable sort
 * is told apart from an unstable one. */
static void fill(char *a, size_t n, size_t size, uint32_t range,
		 uint32_t *seed)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint32_t key = rnd(seed) % range;

		if (size == 4) {
			uint32_t v = key << 16 | (uint32_t)i;

			memcpy(a + i * 4, &v, 4);
		} else if (size == 8) {
			uint64_t v = (uint64_t)(key << 16) << 32 | i;

			memcpy(a + i * 8, &v, 8);
		} else {
			rec12 r = { key << 16, (uint32_t)i, 0xabcd };

			memcpy(a + i * 12, &r, 12);
		}
	}
}

int main(void)
{
	static const size_t sizes[] = { 4, 8, 12 };
	static const tgi_cmp_fn cmps[] = { cmp4, cmp8, cmp12 };
	static const size_t lens[] = { 0, 1, 2, 3, 19, 20, 21, 39, 40, 41,
				       64, 100, 257, 1000, 4099 };
	static const uint32_t ranges[] = { 1, 2, 7, 1000000 };
	uint32_t seed = 12345;
	unsigned bad = 0, cases = 0, nocalls = 0, z, l, r, rep;
	char *a = malloc(4099 * 12), *b = malloc(4099 * 12);

	for (z = 0; z < 3; z++)
		for (l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
			for (r = 0; r < 4; r++)
				for (rep = 0; rep < 3; rep++) {
					size_t n = lens[l], sz = sizes[z];
					cmpctx c1 = { 0, 16 }, c2 = { 0, 16 };

					fill(a, n, sz, ranges[r], &seed);
					memcpy(b, a, n * sz);
					tgi_sort(a, n, sz, cmps[z], &c1);
					ref_sort(b, n, sz, cmps[z], &c2);
					cases++;
					if (memcmp(a, b, n * sz)) {
						if (!bad++)
							diag("differs: size %zu"
							     " n %zu range %u",
							     sz, n, ranges[r]);
					}
					if (n > 1 && !c1.calls)
						nocalls++;
				}
	ok(bad == 0, "tgi_sort equals a stable insertion sort: %u cases, "
	   "%u differ", cases, bad);
	ok(nocalls == 0, "the context reaches the comparator (%u cases "
	   "without a call)", nocalls);
	{
		/* n log n comparisons, not n^2: 4099 elements, distinct */
		cmpctx c = { 0, 0 };
		size_t i;

		for (i = 0; i < 4099; i++) {
			uint32_t v = rnd(&seed);

			memcpy(a + i * 4, &v, 4);
		}
		tgi_sort(a, 4099, 4, cmp4, &c);
		for (i = 1; i < 4099; i++)
			if (cmp4(a + (i - 1) * 4, a + i * 4, &c) > 0)
				break;
		ok(i == 4099, "4099 random keys in order");
		ok(c.calls < 4099u * 13 * 3, "%u comparisons for 4099 "
		   "elements (under 3 n log2 n)", c.calls);
	}
	free(a);
	free(b);
	return done_testing();
}
