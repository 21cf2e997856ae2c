/*
 * tests/unit/test_jobidx.c - slurm_plugin/tgjobidx.h, the map from job
 * id to the index of select/topogang's model job (issue 16: one lookup
 * per preemption candidate per job_test): random sets, replacements and
 * deletions against a plain array, with the job ids slurmctld hands out
 * (consecutive, so their homes crowd) and random ones, across growth.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "tgjobidx.h"

#define KEYS 20000

static unsigned long seed = 1;

static unsigned rn(unsigned n)
{
	seed = seed * 6364136223846793005ul + 1442695040888963407ul;
	return (unsigned)(seed >> 33) % n;
}

/* Every key's entry as the reference says; every stored one reachable
 * from its home without crossing an empty slot. */
static unsigned check(const tgjx_t *x, const uint32_t *ref,
		      const uint32_t *keys, unsigned nkeys)
{
	unsigned bad = 0, i, used = 0;
	size_t j;

	for (i = 0; i < nkeys; i++)
		bad += tgjx_get(x, keys[i]) != ref[i];
	for (j = 0; j < x->n; j++) {
		size_t k;

		if (!x->s[j].val)
			continue;
		used++;
		for (k = tgjx_home(x, x->s[j].key); k != j;
		     k = (k + 1) & (x->n - 1))
			if (!x->s[k].val) {
				bad++;
				break;
			}
	}
	return bad + (used != x->used);
}

static void run(const char *what, bool consecutive, unsigned ops)
{
	static uint32_t keys[KEYS], ref[KEYS];
	tgjx_t x = { NULL, 0, 0 };
	unsigned i, bad = 0, checks = 0, present = 0, most = 0, oom = 0;

	for (i = 0; i < KEYS; i++) {
		keys[i] = consecutive ? 1000 + i : (uint32_t)rn(1u << 30) * 4;
		ref[i] = 0;
	}
	for (i = 0; i < ops; i++) {
		/* a window of live ids that moves on, as jobs come and go */
		unsigned lo = consecutive ? i * (KEYS - 2000) / ops : 0;
		unsigned k = lo + rn(consecutive ? 2000 : KEYS);

		if (rn(3)) {
			uint32_t idx = rn(100000);

			if (tgjx_set(&x, keys[k], idx)) {
				oom++;
				continue;
			}
			present += !ref[k];
			ref[k] = idx + 1;
		} else {
			tgjx_del(&x, keys[k]);
			present -= !!ref[k];
			ref[k] = 0;
		}
		if (present > most)
			most = present;
		if (i % 997 == 0 || i + 1 == ops) {
			bad += check(&x, ref, keys, KEYS);
			checks++;
		}
	}
	is_int(bad + oom, 0, "%s ids: %u operations, %u full checks, up to "
	       "%u present, %zu slots at the end: every lookup as the "
	       "reference, every entry reachable", what, ops, checks, most,
	       x.n);
	tgjx_del(&x, 1);	/* never a key (odd, below 1000): nothing */
	is_int(x.used, present, "%s ids: deleting an absent id changes "
	       "nothing", what);
	tgjx_free(&x);
	is_int(tgjx_get(&x, keys[0]), 0, "%s ids: a freed map is empty",
	       what);
}

int main(void)
{
	tgjx_t x = { NULL, 0, 0 };

	is_int(tgjx_get(&x, 7), 0, "an empty map has nothing");
	tgjx_del(&x, 7);
	ok(x.n == 0, "deleting from an empty map allocates nothing");
	run("consecutive", true, 200000);
	run("random", false, 200000);
	return done_testing();
}
