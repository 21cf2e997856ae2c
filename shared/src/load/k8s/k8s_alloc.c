/*
 * shared/src/load/k8s/k8s_alloc.c - bound pods and nominations as the
 * topology's allocations, with their PodDisruptionBudgets.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "k8s_dialect.h"

/*
 * PodDisruptionBudgets: how many of its pods may go now.  status.
 * disruptionsAllowed when the controller filled it in, else from
 * spec.maxUnavailable / spec.minAvailable over the running pods it
 * selects (percentages rounded up, as the disruption controller does).
 */
static tg_err pdb_allowed(bctx *b, const kobj *o, int64_t matched,
			  int64_t *allowed)
{
	const cJSON *spec = tgk_jget(o->j, "spec");
	const cJSON *st = tgk_jget(o->j, "status");
	const cJSON *v;
	int64_t n;
	bool max;

	v = tgk_jget(st, "disruptionsAllowed");
	if (v && tgk_num_int(v, &n) && n >= 0) {
		*allowed = n;
		return TG_OK;
	}
	v = tgk_jget(spec, "maxUnavailable");
	max = v && !cJSON_IsNull(v);
	if (!max)
		v = tgk_jget(spec, "minAvailable");
	if (!v || cJSON_IsNull(v)) {
		*allowed = matched;	/* neither: no limit on disruption */
		return TG_OK;
	}
	if (cJSON_IsString(v) && strlen(v->valuestring) > 1 &&
	    v->valuestring[strlen(v->valuestring) - 1] == '%') {
		char num[32];
		size_t l = strlen(v->valuestring) - 1;
		int64_t pct;

		if (l >= sizeof(num))
			goto bad;
		memcpy(num, v->valuestring, l);
		num[l] = '\0';
		if (!tg_i64_parse(num, &pct) || pct < 0 || pct > 100)
			goto bad;
		n = (matched * pct + 99) / 100;
	} else if (!(tgk_num_int(v, &n) || (cJSON_IsString(v) &&
					 tg_i64_parse(v->valuestring, &n))) ||
		   n < 0) {
		goto bad;
	}
	*allowed = max ? n : (matched - n > 0 ? matched - n : 0);
	return TG_OK;
bad:
	return tgk_oerr(b, o, v, TG_EINVAL, "spec.%s: expected an integer or a "
			"percentage", max ? "maxUnavailable" : "minAvailable");
}

/* The budget (first PDB by name) each bound pod belongs to. */
static tg_err add_budgets(bctx *b, const char **budget)
{
	size_t i, j;
	tg_err err;

	for (i = b->first[C_PDB]; i < b->first[C_PDB + 1]; i++) {
		const kobj *o = b->idx[i];
		const cJSON *sel = tgk_jget(tgk_jget(o->j, "spec"), "selector");
		int64_t matched = 0, allowed = 0;
		bool m;

		for (j = 0; j < b->npods; j++) {
			kpod *p = &b->pods[j];

			if (p->state != S_BOUND || strcmp(p->o->ns, o->ns))
				continue;
			err = tgk_sel_match(b, o, sel, "spec.selector",
					    p->labels,
					    &m);
			if (err)
				return err;
			if (!m)
				continue;
			if (!p->terminating)
				matched++;
			if (!budget[j])
				budget[j] = o->name;
		}
		err = pdb_allowed(b, o, matched, &allowed);
		if (err)
			return err;
		{
			char nm[TG_MAX_NAME + 2];

			snprintf(nm, sizeof(nm), "%s/%s", o->ns, o->name);
			err = tg_topology_set_budget(b->t, nm, allowed);
			if (err)
				return tgi_errf(b->ei, err, "out of memory");
		}
	}
	return TG_OK;
}

/*
 * A pod's labels (a checked map of strings) as core labels; TG_ELIMIT
 * past TG_MAX_POD_LABELS.  The strings stay the tree's.
 */
tg_err tgk_core_labels(const cJSON *labels, tg_label *out, unsigned *n)
{
	const cJSON *c;

	*n = 0;
	cJSON_ArrayForEach(c, labels) {
		if (!cJSON_IsString(c) || !c->string)
			continue;
		if (*n == TG_MAX_POD_LABELS)
			return TG_ELIMIT;
		out[*n].key = c->string;
		out[*n].value = c->valuestring;
		(*n)++;
	}
	return TG_OK;
}

/* A bound pod's allocation as the topology is given it (its GPUs
 * aside); the strings are the build's or its own. */
typedef struct kspec {
	tg_alloc_spec spec;
	char bname[TG_MAX_NAME + 2];
	tg_label lab[TG_MAX_POD_LABELS];
} kspec;

/*
 * What bound pod \p i's allocation is, into \p ks; *has false when it
 * has none (its node is not in the snapshot, warned unless \p quiet; a
 * victim on a node promised to a nominee).  \p quiet: the second time
 * in one build (the warnings were given the first).
 */
static tg_err bound_spec(bctx *b, size_t i, const uint8_t *nominee,
			 const char *budget, bool quiet, kspec *ks, bool *has)
{
	kpod *p = &b->pods[i];
	const kgroup *g = NULL;
	const tgk_dialect *d;
	tg_alloc_spec *spec = &ks->spec;
	tg_node_id n;
	tg_err err;

	*has = false;
	if (!tgk_cache_nid(b, p, &n)) {
		if (tg_topology_node_find(b->t, p->node, &n) != TG_OK) {
			err = quiet ? TG_OK :
			      tgk_owarn(b, p->o, "bound to node '%.100s', "
					"which is not in the snapshot; not "
					"counted", p->node);
			return err ? tgi_errf(b->ei, err, "out of memory") :
			       TG_OK;
		}
		tgk_cache_set_nid(b, p, n);
	}
	if (p->group != SIZE_MAX)
		g = &b->groups[tgk_uf_find(b, p->group)];
	memset(spec, 0, sizeof(*spec));
	spec->pod = p->id;
	spec->gang = g ? g->name : NULL;
	spec->node = n;
	spec->shape = p->shape;
	spec->priority = p->prio;
	spec->preemptible = true;
	/* the dialect of its own group (not its GangGroup's root) */
	if (p->group != SIZE_MAX &&
	    (d = tgk_dialect_of(b, &b->groups[p->group])) && d->preemptible)
		spec->preemptible = d->preemptible(&b->groups[p->group], p);
	if (p->terminating) {
		/* a victim on its way out: on a node promised to a
		 * nominee its resources are the nominee's already;
		 * elsewhere it still holds them, but is no victim */
		if (nominee[n])
			return TG_OK;
		spec->preemptible = false;
	}
	if (budget) {
		snprintf(ks->bname, sizeof(ks->bname), "%s/%s", p->o->ns,
			 budget);
		spec->budget = ks->bname;
	}
	/* what spreads and pod affinity selectors count; not a pod
	 * on its way out (kube-scheduler skips those too) */
	if (!p->terminating) {
		if (tgk_core_labels(p->labels, ks->lab, &spec->nlabels)) {
			err = quiet ? TG_OK :
			      tgk_owarn(b, p->o, "more than %d labels; not "
					"counted by label selectors",
					TG_MAX_POD_LABELS);
			if (err)
				return err;
			spec->nlabels = 0;
		}
		spec->ns = p->o->ns;
		spec->labels = ks->lab;
	}
	*has = true;
	return TG_OK;
}

/* Bound pod \p i's allocation \p ks added, its GPUs the lowest ones
 * \p used leaves on its node (GPU indices are not in the API). */
static tg_err bound_add(bctx *b, size_t i, kspec *ks, uint64_t *used)
{
	kpod *p = &b->pods[i];
	tg_alloc_spec *spec = &ks->spec;
	tg_node_id n = spec->node;
	int64_t want = p->shape->v[TG_RES_GPU];
	unsigned gi, ng = tg_topology_node_ngpus(b->t, n);
	tg_err err;

	for (gi = 0; gi < ng && gi < TG_MAX_GPUS && want > 0; gi++) {
		if (!(used[n] & (1ull << gi))) {
			spec->gpus |= 1ull << gi;
			want--;
		}
	}
	used[n] |= spec->gpus;
	err = tg_topology_add_alloc(b->t, spec);
	if (err)
		return tgk_node_core(b, p->o, err, "cannot record the pod");
	/* with a cache: where the kept topology has it */
	tgk_cache_set_alloc(b, p, tgi_alloc_count(b->t) - 1);
	return TG_OK;
}

/* Bound pod \p i as an allocation on its node. */
static tg_err bound_alloc(bctx *b, size_t i, uint64_t *used,
			  const uint8_t *nominee, const char *budget)
{
	kpod *p = &b->pods[i];
	kspec ks;
	bool has;
	tg_err err = bound_spec(b, i, nominee, budget, false, &ks, &has);

	if (err || !has)
		return err;
	err = bound_add(b, i, &ks, used);
	if (err)
		return err;
	p->allocated = true;
	b->bound[b->nbound++] = p;
	return TG_OK;
}

/* A nomination holds its node for its gang (a reservation). */
static tg_err nominate(bctx *b, const kpod *p)
{
	tg_alloc_spec spec;
	tg_node_id n;
	tg_err err;

	if (tg_topology_node_find(b->t, p->nominated, &n) != TG_OK) {
		err = tgk_owarn(b, p->o, "nominated to node '%.100s', which is "
				"not in the snapshot; ignored",
				p->nominated);
		return err ? tgi_errf(b->ei, err, "out of memory") : TG_OK;
	}
	memset(&spec, 0, sizeof(spec));
	spec.pod = p->id;
	spec.gang = b->groups[tgk_uf_find(b, p->group)].name;
	spec.node = n;
	spec.shape = p->shape;
	spec.priority = p->prio;
	spec.preemptible = true;
	spec.nominated = true;
	err = tg_topology_add_alloc(b->t, &spec);
	return err ? tgk_node_core(b, p->o, err, "cannot record the "
				   "nomination") : TG_OK;
}

/* What adding the allocations needs, for tgk_add_allocs() and
 * tgk_update_allocs(). */
typedef struct kalloc {
	uint64_t *used;		/* GPUs given out, by node */
	uint8_t *nominee;	/* nodes a pending pod is nominated to */
	const char **budget;	/* each pod's budget (by pod index) */
} kalloc;

static void kalloc_free(kalloc *a)
{
	tgi_free(a->used);
	tgi_free(a->nominee);
	tgi_free(a->budget);
}

/* The arrays, the budgets set, the nominees found. */
static tg_err kalloc_init(bctx *b, kalloc *a)
{
	size_t i, nn = tg_topology_nnodes(b->t);
	tg_err err;

	a->used = tgi_calloc(nn ? nn : 1, sizeof(uint64_t));
	a->nominee = tgi_calloc(nn ? nn : 1, 1);
	a->budget = tgi_calloc(b->npods ? b->npods : 1, sizeof(char *));
	if (!a->used || !a->nominee || !a->budget)
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	err = add_budgets(b, a->budget);
	/* nodes some pending pod is nominated to (after a preemption) */
	for (i = 0; i < b->npods && !err; i++) {
		tg_node_id n;

		if (b->pods[i].state == S_PENDING && b->pods[i].nominated &&
		    tg_topology_node_find(b->t, b->pods[i].nominated, &n) ==
		    TG_OK)
			a->nominee[n] = 1;
	}
	return err;
}

/* Every pending pod's nomination, in pod order (after the bound pods). */
static tg_err nominations(bctx *b)
{
	size_t i;
	tg_err err = TG_OK;

	for (i = 0; i < b->npods && !err; i++) {
		const kpod *p = &b->pods[i];

		if (p->state == S_PENDING && p->nominated &&
		    p->group != SIZE_MAX)
			err = nominate(b, p);
	}
	return err;
}

tg_err tgk_add_allocs(bctx *b)
{
	kalloc a;
	size_t i;
	tg_err err;

	memset(&a, 0, sizeof(a));
	/* every bound pod's name at once (pods over-count them) */
	err = tgi_topology_reserve_allocs(b->t, b->npods);
	if (err)
		err = tgi_errf(b->ei, err, "room for %zu pods' allocations: "
			       "%s", b->npods, tg_strerror(err));
	if (!err)
		err = kalloc_init(b, &a);
	for (i = 0; i < b->npods && !err; i++)
		if (b->pods[i].state == S_BOUND)
			err = bound_alloc(b, i, a.used, a.nominee,
					  a.budget[i]);
	if (!err)
		err = nominations(b);
	kalloc_free(&a);
	return err;
}

/* Whether the kept topology's allocation of bound pod \p p is what
 * \p ks would add (its GPUs aside); *at gets its index. */
static bool kept_same(const bctx *b, const kpod *p, const kspec *ks,
		      size_t *at)
{
	const tg_alloc_spec *s = &ks->spec;
	tgi_alloc_info ai;
	uint32_t pod;

	if (!tgk_cache_alloc(b, p, at, &pod) || *at >= tgi_alloc_count(b->t))
		return false;
	tgi_alloc_get(b->t, *at, &ai);
	return ai.live && !ai.nominated && ai.pod == pod &&
	       ai.node == s->node && ai.priority == s->priority &&
	       ai.preemptible == s->preemptible &&
	       strcmp(ai.gang, s->gang ? s->gang : s->pod) == 0 &&
	       (ai.budget ? s->budget && strcmp(ai.budget, s->budget) == 0 :
			    !s->budget);
}

/*
 * Pass 1 of tgk_update_allocs(): every bound pod's allocation worked out
 * in pod order (the warnings a full build gives), the pods allocated
 * listed (b->bound) as a full build lists them; kept ones marked in
 * \p seen, the nodes of the others in \p dirty.
 */
static tg_err update_match(bctx *b, kalloc *a, uint8_t *seen, uint8_t *dirty)
{
	size_t i, at;
	kspec ks;
	bool has;
	tg_err err;

	for (i = 0; i < b->npods; i++) {
		kpod *p = &b->pods[i];

		if (p->state != S_BOUND)
			continue;
		err = bound_spec(b, i, a->nominee, a->budget[i], false, &ks,
				 &has);
		if (err)
			return err;
		if (!has)
			continue;
		p->allocated = true;
		b->bound[b->nbound++] = p;
		if (kept_same(b, p, &ks, &at))
			seen[at] = 1;
		else
			dirty[ks.spec.node] = 1;
	}
	return TG_OK;
}

/*
 * The kept topology's allocations made this build's (tgk_keep_take()
 * gave b->t the topology of an earlier build whose nodes, levels and
 * resources are this one's): a node where any bound pod came, went,
 * moved or changed what its allocation holds has all its allocations
 * removed and added again in pod order, as a full build adds them (the
 * GPUs each gets depend on those before it); other nodes keep theirs.
 * Nominations are all made again.  Same topology, warnings and
 * decisions as tgk_add_allocs() on a fresh one (tests/unit/
 * test_k8s_cache.c).
 */
tg_err tgk_update_allocs(bctx *b)
{
	size_t i, n0 = tgi_alloc_count(b->t);
	size_t nn = tg_topology_nnodes(b->t);
	uint8_t *seen = tgi_calloc(n0 ? n0 : 1, 1);
	uint8_t *dirty = tgi_calloc(nn ? nn : 1, 1);
	kalloc a;
	kspec ks;
	bool has;
	tg_err err;

	memset(&a, 0, sizeof(a));
	err = seen && dirty ? kalloc_init(b, &a) :
	      tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	if (!err)
		err = update_match(b, &a, seen, dirty);
	/* gone, moved or changed: their nodes are done again */
	for (i = 0; i < n0 && !err; i++) {
		tgi_alloc_info ai;

		tgi_alloc_get(b->t, i, &ai);
		if (ai.live && !ai.nominated && !seen[i])
			dirty[ai.node] = 1;
	}
	for (i = 0; i < n0 && !err; i++) {
		tgi_alloc_info ai;

		tgi_alloc_get(b->t, i, &ai);
		if (ai.live && (ai.nominated || dirty[ai.node]))
			tgi_alloc_remove(b->t, i);
	}
	for (i = 0; i < b->npods && !err; i++) {
		kpod *p = &b->pods[i];

		if (p->state != S_BOUND || !p->allocated)
			continue;
		err = bound_spec(b, i, a.nominee, a.budget[i], true, &ks,
				 &has);
		if (!err && has && dirty[ks.spec.node])
			err = bound_add(b, i, &ks, a.used);
	}
	if (!err)
		err = nominations(b);
	kalloc_free(&a);
	tgi_free(seen);
	tgi_free(dirty);
	return err;
}
