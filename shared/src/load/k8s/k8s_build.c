/*
 * shared/src/load/k8s/k8s_build.c - tg_k8s_build(): the object index, then the
 * passes over it, so that the result never depends on input order:
 *
 *   1. index: objects sorted by (class, kind, API group, namespace,
 *      name); a later copy of the same object replaces an earlier one
 *      (with a warning);
 *   2. PriorityClasses, then every Pod: priority, requests, state (bound,
 *      pending, skipped) and its group (dialect, namespace, name);
 *   3. groups: group objects, minimum sizes, GangGroups, topology
 *      requests (the dialects: k8s_dialect.h);
 *   4. levels (tg_k8s_set_levels, ClusterNetworkTopology "default", a KAI
 *      or Kueue Topology, else a preset the node labels match);
 *   5. the topology: layers, nodes in natural name order, build; bound
 *      pods become allocations (with a tg_k8s_cache: the topology an
 *      earlier build kept, when its nodes, levels and resources are
 *      this build's, its allocations updated; k8s_cache.c, k8s_alloc.c);
 *   6. one tg_gang per ready group (or lone pending pod), pod sets by
 *      (role, shape, node constraints), then decision order.
 *
 * An object that cannot be read costs only what depends on it: a pending
 * pod's or group object's gang fails (tg_k8s_failed(), the message names
 * the input, the object and the field), a Node is left out, a bound pod's
 * node takes no new pod, a Topology is ignored (warnings).  Only running
 * out of memory or a bound of the whole build ends it with one error; the
 * caller then gets nothing.  Whatever is skipped on purpose (gated pods,
 * unknown kinds, soft constraints the core does not model) is a warning.
 *
 * Defaults: a node without status.allocatable.pods takes 110 (the
 * kubelet's default; one warning counts them); a pod without a namespace
 * is in "default".
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s_load.h"

static int kobj_cmp(const kobj *x, const kobj *y)
{
	int r;

	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	/* one kind per class but for C_PODGROUP (dialects) and C_OTHER;
	 * kinds and groups are interned (k->names): equal pointers are
	 * equal strings, and so are most namespaces */
	if (x->kind != y->kind && (r = strcmp(x->kind, y->kind)) != 0)
		return r;
	if (x->group != y->group && (r = strcmp(x->group, y->group)) != 0)
		return r;
	if (x->ns != y->ns && (r = strcmp(x->ns, y->ns)) != 0)
		return r;
	if ((r = strcmp(x->name, y->name)) != 0)
		return r;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int obj_cmp(const void *a, const void *c)
{
	return kobj_cmp(*(const kobj *const *)a, *(const kobj *const *)c);
}

/*
 * b->idx: every object in kobj_cmp() order.  The cached objects filed in
 * the last build's order (k->objs[sorted0, sorted1)) are a sorted run
 * unless something changed their order (checked): then only the rest (the
 * added objects, new cached ones) is sorted, and merged with the run; the
 * order is a total one (ties by arrival), so the result is qsort()'s.
 */
static tg_err sort_index(bctx *b)
{
	tg_k8s *k = b->k;
	size_t a = k->sorted0, z = k->sorted1, i, n = 0, r, s;
	kobj **rest;

	for (i = a + 1; i < z; i++)
		if (kobj_cmp(&k->objs[i - 1], &k->objs[i]) > 0)
			break;
	if (z - a < 2 || i < z) {
		for (i = 0; i < k->nobjs; i++)
			b->idx[i] = &k->objs[i];
		qsort(b->idx, k->nobjs, sizeof(kobj *), obj_cmp);
		return TG_OK;
	}
	rest = tgi_calloc(k->nobjs - (z - a) + 1, sizeof(kobj *));
	if (!rest)
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	for (i = 0; i < k->nobjs; i++)
		if (i < a || i >= z)
			rest[n++] = &k->objs[i];
	qsort(rest, n, sizeof(kobj *), obj_cmp);
	for (i = 0, r = 0, s = a; r < n || s < z; i++)
		b->idx[i] = s == z || (r < n && kobj_cmp(rest[r],
							&k->objs[s]) < 0) ?
			    rest[r++] : &k->objs[s++];
	tgi_free(rest);
	return TG_OK;
}

static bool same_obj(const kobj *x, const kobj *y)
{
	/* kinds and groups are interned (k->names): pointers compare */
	return x->cls == y->cls && x->kind == y->kind &&
	       x->group == y->group && strcmp(x->name, y->name) == 0 &&
	       strcmp(x->ns, y->ns) == 0;
}

/* Whether cached object idx[i] has an added copy before it in the run of
 * copies of one object (sorted by arrival: the cache's are filed last,
 * after every added one). */
static bool overlaid(kobj *const *idx, size_t i)
{
	size_t j;

	for (j = i; j > 0 && same_obj(idx[i], idx[j - 1]); j--)
		if (!idx[j - 1]->cached)
			return true;
	return false;
}

static tg_err build_index(bctx *b)
{
	tg_k8s *k = b->k;
	size_t i, n = 0, c;
	tg_err err;

	b->idx = tgi_calloc(k->nobjs ? k->nobjs : 1, sizeof(kobj *));
	if (!b->idx)
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	err = sort_index(b);
	if (err)
		return err;
	tgk_cache_order(k, b->idx, k->nobjs);
	/* a later copy of the same object replaces the earlier one; an
	 * added object replaces a cached one (an overlay) silently */
	for (i = 0; i < k->nobjs; i++) {
		kobj *o = b->idx[i];

		if (o->cached && *o->name && overlaid(b->idx, i))
			continue;
		if (i + 1 < k->nobjs && same_obj(o, b->idx[i + 1]) &&
		    *o->name && (o->cached || !b->idx[i + 1]->cached)) {
			char nm[300];

			err = tgk_warnf(k, "%s %s appears more than once; the "
					"last copy is used", o->kind,
					tgk_oname(o, nm, sizeof(nm)));
			if (err)
				return tgi_errf(b->ei, err, "out of memory");
			continue;
		}
		b->idx[n++] = o;
	}
	b->nidx = n;
	for (c = 0, i = 0; c <= C_N; c++) {
		while (i < n && b->idx[i]->cls < (int)c)
			i++;
		b->first[c] = i;
	}
	b->first[C_N] = n;
	/* kinds the loader does not use: one warning per kind */
	for (i = b->first[C_OTHER]; i < n;) {
		size_t j = i;

		while (j < n && strcmp(b->idx[j]->kind, b->idx[i]->kind) == 0)
			j++;
		err = tgk_warnf(k, "%zu object%s of kind %s ignored", j - i,
				j - i == 1 ? "" : "s", b->idx[i]->kind);
		if (err)
			return tgi_errf(b->ei, err, "out of memory");
		i = j;
	}
	return TG_OK;
}

const kobj *tgk_find_obj(const bctx *b, int cls, const char *kind,
			 const char *group, const char *ns, const char *name)
{
	size_t lo = b->first[cls], hi = b->first[cls + 1];

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const kobj *o = b->idx[mid];
		int r = strcmp(o->kind, kind);

		if (!r)
			r = strcmp(o->group, group);
		if (!r)
			r = strcmp(o->ns, ns);
		if (!r)
			r = strcmp(o->name, name);
		if (!r)
			return o;
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void bctx_free(bctx *b)
{
	size_t i;

	for (i = 0; i < b->npods; i++) {
		if (!b->pods[i].id_lent)
			tgi_free(b->pods[i].id);
		tgi_free(b->pods[i].sig);
		tgi_free(b->pods[i].vsels);
		cJSON_Delete(b->pods[i].vown);
		if (!b->pods[i].lent) {
			cJSON_Delete(b->pods[i].own_labels);
			cJSON_Delete(b->pods[i].own_anti);
		}
	}
	for (i = 0; i < b->nnslabels; i++)
		cJSON_Delete(b->nslabels[i]);
	tgi_free(b->nslabels);
	tgi_strtab_free(&b->nsnames);
	tgi_free(b->anti);
	for (i = 0; i < b->nagrp; i++)
		tgi_free(b->agrp[i].m);
	tgi_free(b->agrp);
	tgi_strtab_free(&b->antikeys);
	tgi_free(b->pend);
	if (b->avpv_built)
		tgi_strtab_free(&b->avcls);
	tgi_free(b->avpv);
	tgk_cache_give_pods(b);
	tgi_free(b->bound);
	for (i = 0; i < b->nslots; i++)
		tgi_free(b->shapes[i]);
	tgi_free(b->shapes);
	for (i = 0; i < b->ngroups; i++) {
		size_t j;

		tgi_free(b->groups[i].name);
		tgi_free(b->groups[i].gname);
		tgi_free(b->groups[i].members);
		tgi_free(b->groups[i].fail);
		for (j = 0; j < b->groups[i].nreqs; j++)
			tgi_free(b->groups[i].reqs[j].layer);
		tgi_free(b->groups[i].reqs);
	}
	tgi_free(b->groups);
	tgi_strtab_free(&b->gkeys);
	tgi_strtab_free(&b->rnames);
	tgi_strtab_free(&b->affkeys);
	tgi_strtab_free(&b->lblkeys);
	tgi_strtab_free(&b->badnodes);
	for (i = 0; i < b->nlbl; i++)
		tgi_free(b->lbl[i].pods);
	tgi_free(b->lbl);
	for (i = 0; i < b->naff; i++)
		tgi_free(b->aff[i].pods);
	tgi_free(b->aff);
	for (i = 0; i < b->ngangs; i++)
		tg_gang_destroy(b->gangs[i].g);
	tgi_free(b->gangs);
	tgi_free(b->pcs);
	tgi_free(b->idx);
	tg_topology_destroy(b->t);
}

tg_err tg_k8s_build(tg_k8s *k, tg_topology **topo, tg_errinfo *ei)
{
	size_t nwarns0, i;
	bctx b;
	bool kept = false;
	tg_err err;

	if (!k || !topo)
		return tgi_errf(ei, TG_EINVAL, "tg_k8s_build: bad arguments");
	if (k->built || k->spent)
		return tgi_errf(ei, TG_ESTATE,
				"tg_k8s_build: already built");
	*topo = NULL;
	memset(&b, 0, sizeof(b));
	b.k = k;
	b.ei = ei ? ei : &b.lei;
	tgi_strtab_init(&b.gkeys);
	tgi_strtab_init(&b.badnodes);
	tgi_strtab_init(&b.rnames);
	tgi_strtab_init(&b.affkeys);
	tgi_strtab_init(&b.lblkeys);
	nwarns0 = k->nwarns;
	b.t = tg_topology_create();
	if (!b.t) {
		err = tgi_errf(ei, TG_ENOMEM, "out of memory");
		goto fail;
	}
	err = k->cache_objs && k->cache ? tgk_cache_file_objects(k, b.ei) :
					  TG_OK;
	if (!err)
		err = build_index(&b);
	if (!err)
		err = tgk_load_prioclasses(&b);
	if (!err)
		err = tgk_load_pods(&b);
	if (!err)
		err = tgk_load_groups(&b);
	if (!err)
		err = tgk_pick_levels(&b);
	if (!err)
		kept = tgk_keep_take(&b, &err);
	if (!err && !kept) {
		err = tgk_add_topology(&b);
		if (!err)
			tgk_keep_topology(&b);
		if (!err)
			tgk_cache_nodes(&b);
	}
	if (!err)
		tgk_drop_node_trees(&b);
	if (!err)
		err = kept ? tgk_update_allocs(&b) : tgk_add_allocs(&b);
	if (!err)
		err = tgk_keep_give(&b, kept);
	if (!err)
		err = tgk_build_gangs(&b);
	if (!err && k->ndropped) {
		char msg[80];

		snprintf(msg, sizeof(msg), "... and %zu more warnings",
			 k->ndropped);
		err = tgk_warn_add(k, msg);
		if (err)
			err = tgi_errf(ei, err, "out of memory");
	}
	if (!err) {
		k->gangs = tgi_calloc(b.ngangs ? b.ngangs : 1,
				      sizeof(tg_gang *));
		if (!k->gangs)
			err = tgi_errf(ei, TG_ENOMEM, "out of memory");
	}
	if (err)
		goto fail;
	for (i = 0; i < b.ngangs; i++)
		k->gangs[i] = b.gangs[i].g;
	k->ngangs = b.ngangs;
	b.ngangs = 0;
	tgk_cache_end(&b);
	*topo = b.t;
	b.t = NULL;
	k->built = true;
	bctx_free(&b);
	return TG_OK;

fail:
	/* nothing from a failed build stays behind, warnings included */
	for (i = nwarns0; i < k->nwarns; i++)
		tgi_free(k->warns[i]);
	k->nwarns = nwarns0;
	k->ndropped = 0;
	tgk_free_fails(k);
	tgk_free_claims(k);
	bctx_free(&b);
	return err;
}
