/*
 * tests/unit/test_label_index.c - property test of the topology's label
 * index (shared/src/model.h: lsmem, lpost), through which label spreads
 * count matching pods (tgi_spread_tally(), place.c).
 *
 * Random clusters get random sequences of allocations added, removed,
 * suspended and resumed, revived, whole gangs removed, reservations
 * expired, and compactions; after every few steps random spreads
 * (namespace, nil or not, In / NotIn / Exists / DoesNotExist
 * expressions, repeated values, labels with empty values) are counted
 * per node through the index and by a fresh walk over every allocation
 * with a selector evaluated here; the test fails when the two differ
 * once, or when tg_topology_check() finds the index inconsistent.
 * Now and then a run goes on with a copy (tgi_topology_clone(), what
 * tg_k8s_cache keeps between builds) instead of the original, checked
 * the same way; test_clone_nokey() copies a layer without a label key.
 * TG_LABEL_INDEX_CASES sets the number of clusters (default 200).
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "topogang/topogang.h"
#include "gang.h"
#include "model.h"
#include "core/place_int.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static unsigned rn(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

static const char *const ns_of[] = { NULL, "a", "b" };
static const char *const key_of[] = { "app", "tier", "x" };
static const char *const val_of[] = { "1", "2", "3", "" };

#define MAXNODES	24
#define MAXPODS		2400

/* The selector as the spread's comment says (gang.h), evaluated on an
 * allocation's label set through the model alone. */
static const char *label_of(const tg_topology *t, uint32_t ls,
			    const char *key)
{
	uint32_t k = tgi_strtab_find(&t->strs, key), v;

	if (!k)
		return NULL;
	v = tgi_lset_value(t, ls, k);
	return v == TG_NONE ? NULL : v ? tgi_strtab_get(&t->strs, v) : "";
}

static bool brute_selects(const tg_topology *t, const tgi_sspread *sp,
			  uint32_t ls)
{
	const char *ns = ls && t->lsets[ls - 1].ns ?
			 tgi_strtab_get(&t->strs, t->lsets[ls - 1].ns) : "";
	unsigned i, j;

	if (!sp->selector || strcmp(ns, sp->ns))
		return false;
	for (i = 0; i < sp->nexprs; i++) {
		const tgi_expr *e = &sp->exprs[i];
		const char *v = label_of(t, ls, e->key);
		bool in = false;

		for (j = 0; v && j < e->nvalues; j++)
			in |= !strcmp(v, e->values[j]);
		if ((e->op == TG_SEL_IN && !in) ||
		    (e->op == TG_SEL_NOT_IN && in) ||
		    (e->op == TG_SEL_EXISTS && !v) ||
		    (e->op == TG_SEL_DOES_NOT_EXIST && v))
			return false;
	}
	return true;
}

static tg_topology *make_cluster(unsigned nn)
{
	tg_topology *t = tg_topology_create();
	unsigned i;
	char name[16];

	tg_topology_add_layer(t, "spine", "example.com/spine");
	for (i = 0; i < nn; i++) {
		const char *path[1] = { i % 3 ? "s1" : "s2" };
		tg_node_id n;

		snprintf(name, sizeof(name), "n%u", i);
		tg_topology_add_node(t, name, path, &n);
	}
	if (tg_topology_build(t, NULL) != TG_OK) {
		tg_topology_destroy(t);
		return NULL;
	}
	return t;
}

static void add_one(tg_topology *t, unsigned nn, unsigned id)
{
	tg_label l[3];
	tg_alloc_spec s;
	char pod[16], gang[16];
	unsigned nl = 0, k;

	for (k = 0; k < 3; k++)
		if (rn(3))
			l[nl++] = (tg_label){ key_of[k], val_of[rn(4)] };
	snprintf(pod, sizeof(pod), "p%u", id);
	snprintf(gang, sizeof(gang), "g%u", rn(8));
	memset(&s, 0, sizeof(s));
	s.pod = pod;
	s.gang = gang;
	s.node = rn(nn);
	s.ns = ns_of[rn(3)];
	s.labels = l;
	s.nlabels = nl;
	s.nominated = !rn(6);
	s.expires = s.nominated ? 1 + rn(5) : 0;
	tg_topology_add_alloc(t, &s);
}

/* Allocations removed since the last compaction (pod names are never
 * reused: each is the last of its name, as tgi_alloc_revive() wants). */
static uint32_t removed[64];
static unsigned nremoved;

/* One random step; *next is the next fresh pod number. */
static void step(tg_topology *t, unsigned nn, unsigned *next)
{
	unsigned r = rn(100);
	char name[16];
	uint32_t a;

	if (r < 45 || !t->nallocs) {
		add_one(t, nn, (*next)++);
	} else if (r < 70) {
		snprintf(name, sizeof(name), "p%u", rn(*next));
		a = tgi_alloc_find(t, name);
		if (tg_topology_remove_alloc(t, name) == TG_OK)
			removed[nremoved++ % 64] = a;
	} else if (r < 80) {
		tgi_alloc_suspend(t, rn((unsigned)t->nallocs));
	} else if (r < 88) {
		tgi_alloc_resume(t, rn((unsigned)t->nallocs));
	} else if (r < 92) {
		/* revive a removed allocation */
		if (nremoved)
			tgi_alloc_revive(t, removed[rn(nremoved < 64 ?
						       nremoved : 64)]);
	} else if (r < 94) {
		snprintf(name, sizeof(name), "g%u", rn(8));
		tg_topology_remove_gang(t, name);
	} else if (r < 96) {
		tg_topology_expire(t, rn(6));
	} else {
		size_t before = t->nallocs;

		tgi_alloc_compact(t);
		if (t->nallocs != before)
			nremoved = 0;	/* indices changed */
	}
}

static void random_spread(tgi_sspread *sp, tgi_expr *e, char **vals)
{
	static char *nss[] = { "", "a", "b", "c" };
	static char *keys[] = { "app", "tier", "x", "nokey" };
	static char *vs[] = { "1", "2", "3", "", "novalue" };
	unsigned i, j, nv = 0;

	memset(sp, 0, sizeof(*sp));
	sp->ns = nss[rn(4)];
	sp->selector = rn(8) != 0;
	sp->nexprs = rn(4);
	for (i = 0; i < sp->nexprs; i++) {
		e[i].key = keys[rn(4)];
		e[i].op = (tg_sel_op)rn(4);
		e[i].values = &vals[nv];
		e[i].nvalues = e[i].op <= TG_SEL_NOT_IN ? 1 + rn(3) : 0;
		for (j = 0; j < e[i].nvalues; j++)
			vals[nv++] = vs[rn(5)];	/* repeats allowed */
	}
	sp->exprs = e;
}

/* Whether the index and a full walk agree on one random spread. */
static bool same_counts(const tg_topology *t, unsigned nn)
{
	int32_t idx[MAXNODES], full[MAXNODES];
	tgi_sspread sp;
	tgi_expr e[4];
	char *vals[16];
	size_t a;
	unsigned n;

	random_spread(&sp, e, vals);
	memset(idx, 0, sizeof(idx));
	memset(full, 0, sizeof(full));
	tgi_spread_tally(t, &sp, idx);
	for (a = 0; a < t->nallocs; a++) {
		const tgi_alloc *x = &t->allocs[a];

		if (x->live && !x->suspended &&
		    brute_selects(t, &sp, tgi_alloc_cls(t, a)->lset))
			full[x->node]++;
	}
	for (n = 0; n < nn; n++)
		if (idx[n] != full[n]) {
			diag("node %u: index %d, full count %d (ns '%s', "
			     "%u exprs)", n, idx[n], full[n], sp.ns,
			     sp.nexprs);
			return false;
		}
	return true;
}

/*
 * tgi_topology_reserve_allocs(): room for many allocations at once (a
 * snapshot's bound pods) with no table grown while they are added, and
 * the same allocations as without it.
 */
static void test_reserve(void)
{
	tg_topology *t = make_cluster(8), *u = make_cluster(8);
	size_t slots, strslots, cap;
	unsigned i, found = 0;
	tg_errinfo ei;
	tg_err err;

	if (!t || !u) {
		ok(0, "reserve: clusters built");
		tg_topology_destroy(t);
		tg_topology_destroy(u);
		return;
	}
	is_int(tgi_topology_reserve_allocs(t, 3000), TG_OK,
	       "reserve: room for 3,000 allocations");
	slots = t->nalloc_slots;
	strslots = t->strs.nslots;
	cap = t->alloccap;
	for (i = 0; i < 3000; i++) {
		tg_alloc_spec s;
		char pod[16];

		memset(&s, 0, sizeof(s));
		snprintf(pod, sizeof(pod), "p%u", i);
		s.pod = pod;
		s.gang = i % 2 ? "g" : NULL;
		s.node = i % 8;
		s.priority = 1;
		if (tg_topology_add_alloc(t, &s) != TG_OK ||
		    tg_topology_add_alloc(u, &s) != TG_OK)
			break;
	}
	ok(i == 3000 && t->nalloc_slots == slots &&
	   t->strs.nslots == strslots && t->alloccap == cap,
	   "reserve: 3,000 added, no table grown (slots %zu -> %zu, "
	   "names %zu -> %zu, entries %zu -> %zu)", slots, t->nalloc_slots,
	   strslots, t->strs.nslots, cap, t->alloccap);
	for (i = 0; i < 3000; i++) {
		char pod[16];

		snprintf(pod, sizeof(pod), "p%u", i);
		found += tgi_alloc_find(t, pod) == i &&
			 tgi_alloc_find(u, pod) == i;
	}
	is_int(found, 3000, "reserve: each allocation found, as without it");
	{
		tg_alloc_spec s;

		memset(&s, 0, sizeof(s));
		s.pod = "p7";
		s.node = 0;
		err = tg_topology_add_alloc(t, &s);
	}
	is_int(err, TG_EEXIST, "reserve: a pod added twice is TG_EEXIST");
	is_int(tg_topology_check(t, &ei), TG_OK, "reserve: topology check");
	is_int(tg_topology_nallocs(t), tg_topology_nallocs(u),
	       "reserve: as many allocations as without it");
	tg_topology_destroy(t);
	tg_topology_destroy(u);
}

/* A copy of a topology with a layer that has no label key (which
 * tg_topology_add_layer() allows): the same layers, no crash. */
static void test_clone_nokey(void)
{
	tg_topology *t = tg_topology_create(), *k = NULL;
	const char *path[2] = { "s1", "r1" };
	tg_node_id n;

	if (t && tg_topology_add_layer(t, "spine", NULL) == TG_OK &&
	    tg_topology_add_layer(t, "rack", "example.com/rack") == TG_OK &&
	    tg_topology_add_node(t, "n0", path, &n) == TG_OK &&
	    tg_topology_build(t, NULL) == TG_OK)
		k = tgi_topology_clone(t);
	ok(k && tg_topology_nlayers(k) == 2 &&
	   !tg_topology_layer_key(k, 0) &&
	   strcmp(tg_topology_layer_key(k, 1), "example.com/rack") == 0 &&
	   strcmp(tg_topology_layer_name(k, 0), "spine") == 0,
	   "a copy of a topology whose first layer has no label key");
	tg_topology_destroy(k);
	tg_topology_destroy(t);
}

int main(void)
{
	const char *env = getenv("TG_LABEL_INDEX_CASES");
	unsigned ncases = env ? (unsigned)atoi(env) : 200;
	unsigned c, bad = 0, checks = 0, compacted = 0, clones = 0;

	for (c = 0; c < ncases; c++) {
		unsigned nn = 1 + rn(MAXNODES), next = 0, s, nsteps;
		tg_topology *t = make_cluster(nn);
		size_t before;

		nremoved = 0;
		if (!t) {
			ok(0, "case %u: cluster built", c);
			continue;
		}
		/* some cases run long enough for compactions (>= 1024
		 * removed allocations) */
		nsteps = c % 10 == 0 ? 6000 : 200 + rn(400);
		for (s = 0; s < nsteps && next < MAXPODS * 4; s++) {
			before = t->nallocs;
			step(t, nn, &next);
			compacted += t->nallocs < before;
			if (s % 7 == 0 || s + 1 == nsteps) {
				tg_errinfo ei;

				checks++;
				if (tg_topology_check(t, &ei) != TG_OK) {
					diag("tg_topology_check: %s", ei.msg);
					bad++;
					break;
				}
				if (!same_counts(t, nn)) {
					bad++;
					diag("case %u, step %u", c, s);
					break;
				}
				/* now and then go on with a copy
				 * (tgi_topology_clone(), the kept
				 * topology's): it must count and change
				 * as the original would, sharing nothing */
				if (!rn(4)) {
					tg_topology *k = tgi_topology_clone(t);

					if (!k) {
						bad++;
						diag("case %u: no clone", c);
						break;
					}
					tg_topology_destroy(t);
					t = k;
					clones++;
					if (tg_topology_check(t, &ei) != TG_OK ||
					    !same_counts(t, nn)) {
						bad++;
						diag("case %u, step %u: the clone "
						     "differs (%s)", c, s, ei.msg);
						break;
					}
				}
			}
		}
		tg_topology_destroy(t);
	}
	ok(bad == 0, "label index counts equal a full count: %u of %u "
	   "checks differ over %u clusters", bad, checks, ncases);
	ok(compacted > 0, "compactions happened (%u)", compacted);
	ok(clones > 0, "the runs went on with copies %u times", clones);
	test_clone_nokey();
	test_reserve();
	return done_testing();
}
