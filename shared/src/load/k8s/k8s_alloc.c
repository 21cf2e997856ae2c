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

/* Bound pod \p i as an allocation on its node. */
static tg_err bound_alloc(bctx *b, size_t i, uint64_t *used,
			  const uint8_t *nominee, const char *budget)
{
	kpod *p = &b->pods[i];
	const kgroup *g = NULL;
	const tgk_dialect *d;
	char bname[TG_MAX_NAME + 2];
	tg_label lab[TG_MAX_POD_LABELS];
	tg_alloc_spec spec;
	tg_node_id n;
	int64_t want;
	unsigned gi, ng;
	tg_err err;

	if (!tgk_cache_nid(b, p, &n)) {
		if (tg_topology_node_find(b->t, p->node, &n) != TG_OK) {
			err = tgk_owarn(b, p->o, "bound to node '%.100s', "
					"which is not in the snapshot; not "
					"counted", p->node);
			return err ? tgi_errf(b->ei, err, "out of memory") :
			       TG_OK;
		}
		tgk_cache_set_nid(b, p, n);
	}
	if (p->group != SIZE_MAX)
		g = &b->groups[tgk_uf_find(b, p->group)];
	memset(&spec, 0, sizeof(spec));
	spec.pod = p->id;
	spec.gang = g ? g->name : NULL;
	spec.node = n;
	spec.shape = p->shape;
	spec.priority = p->prio;
	spec.preemptible = true;
	/* the dialect of its own group (not its GangGroup's root) */
	if (p->group != SIZE_MAX &&
	    (d = tgk_dialect_of(b, &b->groups[p->group])) && d->preemptible)
		spec.preemptible = d->preemptible(&b->groups[p->group], p);
	if (p->terminating) {
		/* a victim on its way out: on a node promised to a
		 * nominee its resources are the nominee's already;
		 * elsewhere it still holds them, but is no victim */
		if (nominee[n])
			return TG_OK;
		spec.preemptible = false;
	}
	if (budget) {
		snprintf(bname, sizeof(bname), "%s/%s", p->o->ns, budget);
		spec.budget = bname;
	}
	/* what spreads and pod affinity selectors count; not a pod
	 * on its way out (kube-scheduler skips those too) */
	if (!p->terminating) {
		if (tgk_core_labels(p->labels, lab, &spec.nlabels)) {
			err = tgk_owarn(b, p->o, "more than %d labels; not "
					"counted by label selectors",
					TG_MAX_POD_LABELS);
			if (err)
				return err;
			spec.nlabels = 0;
		}
		spec.ns = p->o->ns;
		spec.labels = lab;
	}
	/* GPU indices are not in the API: lowest free ones */
	want = p->shape->v[TG_RES_GPU];
	ng = tg_topology_node_ngpus(b->t, n);
	for (gi = 0; gi < ng && gi < TG_MAX_GPUS && want > 0; gi++) {
		if (!(used[n] & (1ull << gi))) {
			spec.gpus |= 1ull << gi;
			want--;
		}
	}
	used[n] |= spec.gpus;
	err = tg_topology_add_alloc(b->t, &spec);
	if (err)
		return tgk_node_core(b, p->o, err, "cannot record the pod");
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

tg_err tgk_add_allocs(bctx *b)
{
	size_t i, nn = tg_topology_nnodes(b->t);
	uint64_t *used;
	uint8_t *nominee;
	const char **budget;
	tg_err err = TG_OK;

	used = tgi_calloc(nn ? nn : 1, sizeof(uint64_t));
	nominee = tgi_calloc(nn ? nn : 1, 1);
	budget = tgi_calloc(b->npods ? b->npods : 1, sizeof(char *));
	if (!used || !nominee || !budget) {
		tgi_free(used);
		tgi_free(nominee);
		tgi_free(budget);
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	}
	/* every bound pod's name at once (pods over-count them) */
	err = tgi_topology_reserve_allocs(b->t, b->npods);
	if (err)
		err = tgi_errf(b->ei, err, "room for %zu pods' allocations: "
			       "%s", b->npods, tg_strerror(err));
	if (!err)
		err = add_budgets(b, budget);
	/* nodes some pending pod is nominated to (after a preemption) */
	for (i = 0; i < b->npods && !err; i++) {
		tg_node_id n;

		if (b->pods[i].state == S_PENDING && b->pods[i].nominated &&
		    tg_topology_node_find(b->t, b->pods[i].nominated, &n) ==
		    TG_OK)
			nominee[n] = 1;
	}
	for (i = 0; i < b->npods && !err; i++)
		if (b->pods[i].state == S_BOUND)
			err = bound_alloc(b, i, used, nominee, budget[i]);
	for (i = 0; i < b->npods && !err; i++) {
		const kpod *p = &b->pods[i];

		if (p->state == S_PENDING && p->nominated &&
		    p->group != SIZE_MAX)
			err = nominate(b, p);
	}
	tgi_free(used);
	tgi_free(nominee);
	tgi_free(budget);
	return err;
}
