/*
 * tests/oom.h - an allocator for tg_set_allocator() that fails every
 * allocation from the oom_at-th on (0 = never) and counts live blocks, for
 * the allocation-failure sweeps of the unit tests.
 */
#ifndef TG_TEST_OOM_H
#define TG_TEST_OOM_H

#include <stdbool.h>
#include <stdlib.h>

static long oom_at, oom_calls, oom_live;
static bool oom_hit;

static void *oom_malloc(size_t n)
{
	void *p;

	if (oom_at && ++oom_calls >= oom_at) {
		oom_hit = true;
		return NULL;
	}
	p = malloc(n);
	if (p)
		oom_live++;
	return p;
}

static void *oom_realloc(void *p, size_t n)
{
	void *q;

	if (oom_at && ++oom_calls >= oom_at) {
		oom_hit = true;
		return NULL;
	}
	q = realloc(p, n);
	if (q && !p)
		oom_live++;
	return q;
}

static void oom_free(void *p)
{
	if (p)
		oom_live--;
	free(p);
}

#endif /* TG_TEST_OOM_H */
