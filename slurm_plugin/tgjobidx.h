/*
 * slurm_plugin/tgjobidx.h - a map from job id to an array index, for
 * select/topogang's model of the running jobs (_mjob_find): one lookup
 * per preemption candidate and job_test, so O(1), not a binary search.
 * Open addressing with linear probing, at most half full, deletion by
 * backward shift (no tombstones, so lookups never slow down as jobs come
 * and go).
 *
 * Header-only (static inline), pure C: the plugin and its unit test
 * (tests/unit/test_jobidx.c) compile the same code.  The includer may
 * define TGJX_CALLOC(n, size) and TGJX_FREE(p) first (the plugin: Slurm's
 * xcalloc and xfree); the defaults are calloc and free.
 */
#ifndef TG_JOBIDX_H
#define TG_JOBIDX_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#ifndef TGJX_CALLOC
#define TGJX_CALLOC(n, size) calloc((n), (size))
#define TGJX_FREE(p) free(p)
#endif

#define TGJX_MIN_SLOTS 512	/* the first table; it doubles from there */

typedef struct tgjx_slot {
	uint32_t key;
	uint32_t val;		/* index + 1; 0 = an empty slot */
} tgjx_slot_t;

typedef struct tgjx {
	tgjx_slot_t *s;
	size_t n;		/* slots: a power of two, or 0 */
	size_t used;
} tgjx_t;

static inline size_t tgjx_home(const tgjx_t *x, uint32_t key)
{
	return (size_t) (key * 2654435761u) & (x->n - 1);
}

/* The slot holding \p key, or the empty one where it would go (x->n > 0). */
static inline size_t tgjx_slot(const tgjx_t *x, uint32_t key)
{
	size_t j = tgjx_home(x, key);

	while (x->s[j].val && x->s[j].key != key)
		j = (j + 1) & (x->n - 1);
	return j;
}

/* The index stored for \p key + 1; 0 when it has none. */
static inline uint32_t tgjx_get(const tgjx_t *x, uint32_t key)
{
	return x->n ? x->s[tgjx_slot(x, key)].val : 0;
}

/* Sets \p key to index \p idx (added or replaced).  -1 (the map as it
 * was) when a bigger table cannot be allocated. */
static inline int tgjx_set(tgjx_t *x, uint32_t key, uint32_t idx)
{
	size_t j, i;

	if ((x->used + 1) * 2 > x->n) {
		tgjx_t y = { NULL, x->n ? x->n * 2 : TGJX_MIN_SLOTS, 0 };

		if (!(y.s = TGJX_CALLOC(y.n, sizeof(tgjx_slot_t))))
			return -1;
		for (i = 0; i < x->n; i++)
			if (x->s[i].val) {
				y.s[tgjx_slot(&y, x->s[i].key)] = x->s[i];
				y.used++;
			}
		TGJX_FREE(x->s);
		*x = y;
	}
	j = tgjx_slot(x, key);
	if (!x->s[j].val)
		x->used++;
	x->s[j].key = key;
	x->s[j].val = idx + 1;
	return 0;
}

/* Drops \p key (nothing when it has none): the entries after it in its
 * probe run move back so that none is cut off from its home. */
static inline void tgjx_del(tgjx_t *x, uint32_t key)
{
	size_t j, k, h, mask = x->n - 1;

	if (!x->n || !x->s[j = tgjx_slot(x, key)].val)
		return;
	x->s[j].val = 0;
	x->used--;
	for (k = (j + 1) & mask; x->s[k].val; k = (k + 1) & mask) {
		h = tgjx_home(x, x->s[k].key);
		/* stays where it is when its home is cyclically in (j, k] */
		if (j <= k ? (h > j && h <= k) : (h > j || h <= k))
			continue;
		x->s[j] = x->s[k];
		x->s[k].val = 0;
		j = k;
	}
}

static inline void tgjx_free(tgjx_t *x)
{
	TGJX_FREE(x->s);
	x->s = NULL;
	x->n = x->used = 0;
}

#endif /* TG_JOBIDX_H */
