/*
 * shared/src/core/check.c - tg_topology_check(): the model's invariants
 * (hwloc's hwloc_topology_check()), run by the tests after every load.
 *
 * Apart from topology.c because it also checks place.c's slot cache
 * (tgi_place_check()): the model does not call the placement code.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "place_int.h"

/* Nodes in tree order; each domain inside its parent, on the layer below
 * it, after its elder sibling; each tree node inside its domain. */
static tg_err check_tree(const tg_topology *t, tg_errinfo *ei)
{
	size_t i, d;

	for (i = 1; i < t->ntree; i++) {
		uint32_t a = t->order[i - 1], b = t->order[i];

		if (tgi_node_cmp(&a, &b, (void *)t) >= 0)
			return tgi_errf(ei, TG_ESTATE, "nodes %s and %s out "
					"of tree order",
					tg_topology_node_name(t, a),
					tg_topology_node_name(t, b));
	}
	for (d = 1; d < t->ndom; d++) {
		const tgi_domain *x = &t->dom[d], *p = &t->dom[x->parent];

		if (x->lo >= x->hi || x->lo < p->lo || x->hi > p->hi ||
		    x->hi > t->ntree)
			return tgi_errf(ei, TG_ESTATE, "domain %s: node range "
					"[%u,%u) outside its parent's [%u,%u)",
					x->path, x->lo, x->hi, p->lo, p->hi);
		if ((x->layer == 0 && x->parent != 0) ||
		    (x->layer > 0 && p->layer != x->layer - 1))
			return tgi_errf(ei, TG_ESTATE, "domain %s: parent on "
					"the wrong layer", x->path);
		if (d > t->layer_lo[x->layer] &&
		    t->dom[d - 1].layer == x->layer &&
		    tg_name_cmp(t->dom[d - 1].path, x->path) >= 0 &&
		    t->dom[d - 1].parent == x->parent)
			return tgi_errf(ei, TG_ESTATE, "domains %s and %s out "
					"of order", t->dom[d - 1].path,
					x->path);
	}
	for (i = 0; i < t->ntree; i++) {
		uint32_t n = t->order[i];
		const tgi_domain *x;

		if (t->leaf[n] == TG_NONE)
			return tgi_errf(ei, TG_ESTATE, "node %s in the tree "
					"without a domain",
					tg_topology_node_name(t, n));
		x = &t->dom[t->leaf[n]];
		if (i < x->lo || i >= x->hi)
			return tgi_errf(ei, TG_ESTATE, "node %s outside its "
					"domain %s", tg_topology_node_name(t, n),
					x->path);
	}
	return TG_OK;
}

/* Sums the live allocations per node (\p used) and their GPUs (\p held);
 * no GPU held twice. */
static tg_err sum_allocs(const tg_topology *t, int64_t *used, uint64_t *held,
			 tg_errinfo *ei)
{
	size_t i;
	unsigned r;

	for (i = 0; i < t->nallocs; i++) {
		const tgi_alloc *a = &t->allocs[i];

		if (!a->live || a->suspended)
			continue;
		for (r = 0; r < t->stride; r++)
			used[(size_t)a->node * t->stride + r] +=
				tgi_alloc_shape(t, i)[r];
		if (held[a->node] & a->gpus)
			return tgi_errf(ei, TG_ESTATE, "node %s: a GPU held "
					"by two allocations (%s)",
					tg_topology_node_name(t, a->node),
					tgi_strtab_get(&t->strs, a->pod));
		held[a->node] |= a->gpus;
	}
	return TG_OK;
}

/* free = allocatable - used for every resource; the free GPU mask is
 * the complement of the held one. */
static tg_err check_free(const tg_topology *t, const int64_t *used,
			 const uint64_t *held, tg_errinfo *ei)
{
	size_t i;
	unsigned r;

	for (i = 0; i < t->nnodes; i++) {
		uint64_t all = t->ngpus[i] == 64 ? ~0ull :
			       (1ull << t->ngpus[i]) - 1;

		for (r = 0; r < t->stride; r++) {
			size_t k = i * t->stride + r;

			if (t->freev[k] != t->alloc[k] - used[k])
				return tgi_errf(ei, TG_ESTATE, "node %s: free "
					"%s %lld != allocatable %lld - used "
					"%lld", tg_topology_node_name(t, i),
					t->res_name[r],
					(long long)t->freev[k],
					(long long)t->alloc[k],
					(long long)used[k]);
		}
		if ((t->gpu_free[i] & held[i]) ||
		    (t->gpu_free[i] | held[i]) != all)
			return tgi_errf(ei, TG_ESTATE, "node %s: free GPU "
					"mask inconsistent with allocations",
					tg_topology_node_name(t, i));
	}
	return TG_OK;
}

/*
 * The label index (model.h): every allocation, live or removed, once in
 * its label set's list, lists ascending; every posting names a label
 * set that carries its pair, as many postings as the sets' pairs and
 * namespaces.  Linear in allocations and postings.
 */
static tg_err check_label_index(const tg_topology *t, tg_errinfo *ei)
{
	size_t ls, j, total = 0;

	for (ls = 0; ls < t->lsmemcap; ls++) {
		const tgi_lsmem *m = &t->lsmem[ls];

		for (j = 0; j < m->n; j++)
			if (m->a[j] >= t->nallocs ||
			    t->cls[t->allocs[m->a[j]].cls].lset != ls ||
			    (j && m->a[j] <= m->a[j - 1]))
				return tgi_errf(ei, TG_ESTATE, "label index: "
						"label set %zu lists allocation "
						"%u wrongly", ls, m->a[j]);
		total += m->n;
	}
	if (total != t->nallocs)
		return tgi_errf(ei, TG_ESTATE, "label index: %zu allocations "
				"listed of %zu", total, t->nallocs);
	/* each posting names a set carrying its pair; as many as pairs */
	total = 0;
	for (ls = 1; ls <= t->nlsets; ls++)
		total += t->lsets[ls - 1].n + (t->lsets[ls - 1].ns != 0);
	for (j = 0; j < t->nlpost_slots; j++) {
		const tgi_lpslot *sl = &t->lpost_slots[j];
		uint32_t key = (uint32_t)(sl->kv >> 32), val = (uint32_t)sl->kv;
		uint32_t q, n = 0;

		for (q = sl->kv ? sl->head : 0; q; q = t->lposts[q - 1].next) {
			uint32_t x = t->lposts[q - 1].ls;

			if (!x || x > t->nlsets ||
			    (key ? tgi_lset_value(t, x, key) != val :
			     t->lsets[x - 1].ns != val))
				return tgi_errf(ei, TG_ESTATE, "label index: "
						"label set %u posted wrongly",
						x);
			n++;
		}
		if (n != sl->n)
			return tgi_errf(ei, TG_ESTATE, "label index: a posting "
					"list counts %u of %u", sl->n, n);
		total -= n;
	}
	if (total)
		return tgi_errf(ei, TG_ESTATE, "label index: %zu label pairs "
				"not posted", total);
	return TG_OK;
}

/*
 * The gang index (model.h): each chain holds allocations of its slot's
 * gang only, no chain is longer than the allocations, and every live
 * allocation is on a chain, once.  Linear in allocations and slots.
 */
static tg_err check_gang_index(const tg_topology *t, tg_errinfo *ei)
{
	size_t j, live = 0, len;
	uint32_t k, gid;

	if (!t->ngang_slots)
		return TG_OK;	/* not built yet (built on first use) */

	for (j = 0; j < t->ngang_slots; j++) {
		if (!t->gang_of[j])
			continue;
		gid = t->allocs[t->gang_of[j] - 1].gang;
		len = 0;
		for (k = t->gang_of[j]; k; k = t->gnext[k - 1]) {
			if (k > t->nallocs || t->allocs[k - 1].gang != gid ||
			    ++len > t->nallocs)
				return tgi_errf(ei, TG_ESTATE, "gang index: "
						"gang %s chains allocation %u "
						"wrongly",
						tgi_strtab_get(&t->strs, gid),
						k - 1);
			live += t->allocs[k - 1].live;
		}
	}
	if (live != t->nlive)
		return tgi_errf(ei, TG_ESTATE, "gang index: %zu live "
				"allocations chained of %zu", live, t->nlive);
	return TG_OK;
}

tg_err tg_topology_check(const tg_topology *t, tg_errinfo *ei)
{
	int64_t *used = NULL;
	uint64_t *held = NULL;
	tg_err err;

	if (!t)
		return TG_EINVAL;
	if (!t->built)
		return tgi_errf(ei, TG_ESTATE, "topology not built");
	if ((err = check_tree(t, ei)))
		return err;
	used = tgi_calloc(t->nnodes * t->stride + 1, sizeof(*used));
	held = tgi_calloc(t->nnodes + 1, sizeof(*held));
	if (!used || !held)
		err = tgi_errf(ei, TG_ENOMEM, "out of memory");
	if (!err)
		err = sum_allocs(t, used, held, ei);
	if (!err)
		err = check_free(t, used, held, ei);
	if (!err)
		err = check_label_index(t, ei);
	if (!err)
		err = check_gang_index(t, ei);
	if (!err)
		err = tgi_place_check(t, ei);
	tgi_free(used);
	tgi_free(held);
	return err;
}
