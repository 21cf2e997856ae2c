/*
 * tests/oom.h - an allocator for tg_set_allocator() that fails every
 * allocation from the oom_at-th on (0 = never; with oom_once only the
 * oom_at-th) and counts live blocks, and oom_sweep(), the
 * allocation-failure sweep of the unit tests.  Include after tap.h.
 */
#ifndef TG_TEST_OOM_H
#define TG_TEST_OOM_H

#include <stdbool.h>
#include <stdlib.h>

#include "topogang/topogang.h"

static long oom_at, oom_calls, oom_live;
static bool oom_hit;
/* oom_once: fail the oom_at-th allocation only, not those after it;
 * oom_paused: count and fail nothing (while a test reads a result). */
static bool oom_once, oom_paused;

/* Whether this allocation is one to fail; counts it. */
static bool oom_fail_now(void)
{
	if (!oom_at || oom_paused)
		return false;
	oom_calls++;
	if (oom_once ? oom_calls != oom_at : oom_calls < oom_at)
		return false;
	oom_hit = true;
	return true;
}

static void *oom_malloc(size_t n)
{
	void *p;

	if (oom_fail_now())
		return NULL;
	p = malloc(n);
	if (p)
		oom_live++;
	return p;
}

static void *oom_realloc(void *p, size_t n)
{
	void *q;

	if (oom_fail_now())
		return NULL;
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

/*
 * Runs scenario(ctx) with every allocation from the N-th on failing, for
 * N = 1, 2, ... until a run fails none.  Four assertions, named \p what:
 * the run without a failure returns TG_OK, one was reached, every failed
 * run returned TG_ENOMEM, and none leaked a block.
 */
static inline void oom_sweep(tg_err (*scenario)(void *), void *ctx,
			     const char *what)
{
	long n;
	unsigned wrong = 0, leaks = 0;
	bool done = false;

	tg_set_allocator(oom_malloc, oom_realloc, oom_free);
	for (n = 1; n < 100000 && !done; n++) {
		tg_err err;

		oom_at = n;
		oom_calls = oom_live = 0;
		oom_hit = oom_once = oom_paused = false;
		err = scenario(ctx);
		if (!oom_hit) {
			done = true;
			is_int(err, TG_OK, "%s: the run without a failure "
			       "works (%ld allocations)", what, n - 1);
		} else if (err != TG_ENOMEM && !wrong++) {
			diag("allocation %ld: %s", n, tg_strerror(err));
		}
		if (oom_live && !leaks++)
			diag("allocation %ld: %ld blocks leaked", n, oom_live);
	}
	tg_set_allocator(NULL, NULL, NULL);
	oom_at = 0;
	ok(done, "%s: every allocation was failed once", what);
	is_int(wrong, 0, "%s: every failure says TG_ENOMEM", what);
	is_int(leaks, 0, "%s: nothing leaks", what);
}

#endif /* TG_TEST_OOM_H */
