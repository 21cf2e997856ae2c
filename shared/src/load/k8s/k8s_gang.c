/*
 * shared/src/load/k8s/k8s_gang.c - one tg_gang per ready group: members in
 * member order, pod sets by (role, shape, node constraints), the topology
 * requests; then the gangs in decision order (priority, age, name).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s_load.h"

tg_err tgk_gcore(gctx *c, const kobj *o, tg_err err, const char *what)
{
	if (!err)
		return TG_OK;
	if (err == TG_ENOMEM)
		return tgi_errf(c->b->ei, err, "out of memory");
	if (err == TG_ELIMIT) {
		snprintf(c->limited, sizeof(c->limited), "%.190s", what);
		return err;
	}
	return tgk_oerr(c->b, o, NULL, err, "%s: %s", what, tg_strerror(err));
}

/* The pod-set signature: role, then the node constraints as JSON (its
 * own, then its PersistentVolumes'). */
static tg_err pod_sig(bctx *b, kpod *p)
{
	static const char *const keys[] = { "nodeSelector", "affinity",
					    "tolerations" };
	tg_buf s;
	size_t i;

	tg_buf_init(&s, 1u << 24);
	tg_buf_adds(&s, p->role);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const cJSON *v = tgk_jget(p->spec, keys[i]);
		char *txt;

		tg_buf_add(&s, "\x1e", 1);
		if (!v)
			continue;
		txt = cJSON_PrintUnformatted(v);
		if (!txt) {
			tg_buf_free(&s);
			return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
		}
		tg_buf_adds(&s, txt);
		cJSON_free(txt);
	}
	/* the node selectors of its volumes (k8s_volume.c) */
	for (i = 0; i < p->nvsels; i++) {
		char *txt = cJSON_PrintUnformatted(p->vsels[i].terms);

		if (!txt) {
			tg_buf_free(&s);
			return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
		}
		tg_buf_add(&s, "\x1e", 1);
		tg_buf_adds(&s, txt);
		cJSON_free(txt);
	}
	if (s.err == TG_ELIMIT) {
		tg_buf_free(&s);
		return tgk_oerr(b, p->o, NULL, TG_ELIMIT,
				"spec: node constraints longer than 16 MiB");
	}
	p->sig = tg_buf_take(&s);
	return p->sig ? TG_OK : tgi_errf(b->ei, TG_ENOMEM, "out of memory");
}

static int member_cmp(const void *a, const void *c)
{
	const kpod *x = *(const kpod *const *)a;
	const kpod *y = *(const kpod *const *)c;
	int r;

	if ((x->index < 0) != (y->index < 0))
		return x->index < 0 ? 1 : -1;
	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	r = tg_name_cmp(x->o->name, y->o->name);
	return r ? r : strcmp(x->id, y->id);
}

typedef struct kps {
	kpod *first;
	unsigned count;
	unsigned id;		/* index in the tg_gang */
	char name[TG_MAX_NAME + 1];
} kps;

static tg_err gang_reqs(gctx *c)
{
	bctx *b = c->b;
	const kobj *o = c->g->cr ? c->g->cr : c->m[0]->o;
	size_t i;
	tg_err err = TG_OK;

	for (i = 0; i < c->g->nreqs && !err; i++) {
		const kreq *r = &c->g->reqs[i];
		const char *layer = tgk_level_of(b, r->layer);
		char what[300];

		snprintf(what, sizeof(what), "topology request on '%.200s'",
			 layer);
		if (r->type == R_GATHER)
			err = tg_gang_set_gather(c->gang, layer,
						 (tg_gather)r->how);
		else if (r->type == R_SLICE)
			err = tg_gang_add_slice(c->gang, layer, r->size);
		else
			err = tg_gang_add_spread(c->gang, layer, r->size,
						 r->hard);
		err = tgk_gcore(c, o, err, what);
	}
	return err;
}

/* Member \p k of pod set \p ps: pod \p p's namespace and labels. */
static tg_err member_labels(gctx *c, unsigned ps, unsigned k, const kpod *p)
{
	tg_label lab[TG_MAX_POD_LABELS];
	unsigned n;
	tg_err err = tgk_core_labels(p->labels, lab, &n);

	if (err == TG_ELIMIT) {
		snprintf(c->limited, sizeof(c->limited), "metadata.labels: "
			 "more than %d labels", TG_MAX_POD_LABELS);
		return err;
	}
	return tgk_gcore(c, p->o, tg_gang_podset_set_member_labels(c->gang, ps,
			k, p->o->ns, lab, n), "metadata.labels");
}

static bool same_set(const kpod *x, const kpod *y)
{
	return strcmp(x->sig, y->sig) == 0 && x->shape == y->shape;
}

/*
 * The members' pod sets: same role, shape and node constraints; the
 * leader's set first, then by first member; names unique.
 */
static tg_err make_sets(gctx *c, kps *sets, size_t *nsets)
{
	size_t i, j, n = 0;

	for (i = 0; i < c->nm; i++) {
		for (j = 0; j < n && !same_set(sets[j].first, c->m[i]); j++)
			;
		if (j == n) {
			if (n == TG_MAX_PODSETS) {
				snprintf(c->limited, sizeof(c->limited),
					 "more than %d pod sets (distinct "
					 "shapes or constraints)",
					 TG_MAX_PODSETS);
				return TG_ELIMIT;
			}
			sets[n++].first = c->m[i];
		}
		sets[j].count++;
	}
	for (i = 1; i < n; i++) {
		if (strcmp(sets[i].first->role, "leader") == 0) {
			kps t = sets[i];

			memmove(sets + 1, sets, i * sizeof(kps));
			sets[0] = t;
			break;
		}
	}
	for (i = 0; i < c->nm; i++) {
		for (j = 0; j < n && !same_set(sets[j].first, c->m[i]); j++)
			;
		c->m[i]->set = j;
	}
	for (i = 0; i < n; i++) {
		const char *role = *sets[i].first->role ?
			sets[i].first->role : "pods";
		unsigned dup = 1;

		for (j = 0; j < i; j++) {
			const char *r2 = *sets[j].first->role ?
				sets[j].first->role : "pods";

			if (strcmp(r2, role) == 0)
				dup++;
		}
		if (dup > 1)
			snprintf(sets[i].name, sizeof(sets[i].name),
				 "%.200s-%u", role, dup);
		else
			snprintf(sets[i].name, sizeof(sets[i].name), "%.200s",
				 role);
	}
	*nsets = n;
	return TG_OK;
}

/* The tg_gang: pod sets, members, node constraints, requests. */
static tg_err fill_gang(gctx *c, kps *sets, size_t nsets)
{
	kgroup *g = c->g;
	size_t i, j;
	tg_err err = TG_OK;

	c->gang = tg_gang_create(g->name);
	if (!c->gang)
		return tgi_errf(c->b->ei, TG_ENOMEM, "out of memory");
	tg_gang_set_priority(c->gang, g->prio == INT64_MIN ? 0 : g->prio);
	tg_gang_set_can_preempt(c->gang, !g->never);
	for (i = 0; i < nsets && !err; i++) {
		unsigned k2 = 0;

		err = tgk_gcore(c, sets[i].first->o,
				tg_gang_add_podset(c->gang, sets[i].name,
						   sets[i].first->shape,
						   sets[i].count, &sets[i].id),
				"pod set");
		for (j = 0; j < c->nm && !err; j++) {
			if (c->m[j]->set != i)
				continue;
			err = tgk_gcore(c, c->m[j]->o,
					tg_gang_podset_set_member(c->gang,
						sets[i].id, k2, c->m[j]->id),
					"member");
			if (!err)
				err = member_labels(c, sets[i].id, k2,
						    c->m[j]);
			k2++;
		}
		if (!err)
			err = tgk_podset_apply(c, sets[i].id, sets[i].first);
	}
	if (!err)
		err = gang_reqs(c);
	return err ? err : tgk_spread_reqs(c);
}

static tg_err gang_build(bctx *b, kgroup *g)
{
	gctx c;
	kps *sets = NULL;
	size_t nsets = 0, i;
	tg_err err = TG_OK;

	memset(&c, 0, sizeof(c));
	c.b = b;
	c.g = g;
	c.nm = g->nmembers;
	c.m = tgi_calloc(c.nm, sizeof(kpod *));
	sets = tgi_calloc(TG_MAX_PODSETS + 1, sizeof(kps));
	if (!c.m || !sets) {
		err = tgi_errf(b->ei, TG_ENOMEM, "out of memory");
		goto out;
	}
	if (c.nm > TG_MAX_MEMBERS) {
		snprintf(c.limited, sizeof(c.limited), "more than %u members",
			 TG_MAX_MEMBERS);
		err = TG_ELIMIT;
		goto out;
	}
	for (i = 0; i < c.nm; i++) {
		c.m[i] = &b->pods[g->members[i]];
		err = pod_sig(b, c.m[i]);
		if (err)
			goto out;
	}
	qsort(c.m, c.nm, sizeof(kpod *), member_cmp);
	for (i = 0; i < c.nm; i++)
		c.m[i]->building = true;	/* not "other" pods */
	err = make_sets(&c, sets, &nsets);
	if (!err)
		err = fill_gang(&c, sets, nsets);
	if (!err) {
		if (tgi_grow(&b->gangs, &b->capgangs, b->ngangs + 1,
			     sizeof(kgang))) {
			err = tgi_errf(b->ei, TG_ENOMEM, "out of memory");
			goto out;
		}
		b->gangs[b->ngangs].g = c.gang;
		b->gangs[b->ngangs].prio = g->prio;
		b->gangs[b->ngangs].created = g->created;
		b->ngangs++;
		c.gang = NULL;
	}
out:
	if (err == TG_ELIMIT && c.limited[0])
		err = tgk_gwarn(b, g, "%s: over a limit of the core; skipped",
				c.limited);
	tg_gang_destroy(c.gang);
	for (i = 0; c.m && i < c.nm; i++)
		if (c.m[i])
			c.m[i]->building = false;
	tgi_free(sets);
	tgi_free(c.m);
	return err;
}

static int gang_cmp(const void *a, const void *c)
{
	const kgang *x = a, *y = c;

	if (x->prio != y->prio)
		return x->prio > y->prio ? -1 : 1;
	if (x->created != y->created)
		return x->created < y->created ? -1 : 1;
	return tg_name_cmp(tg_gang_name(x->g), tg_gang_name(y->g));
}

/* Reports the gang of \p g, which cannot be read or waits for its group
 * object: k->fails. */
static tg_err fail_add(bctx *b, kgroup *g)
{
	tg_k8s *k = b->k;
	struct kfail *f;
	size_t i;

	if (tgi_grow(&k->fails, &k->capfails, k->nfails + 1, sizeof(*f)))
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	f = &k->fails[k->nfails++];
	memset(f, 0, sizeof(*f));
	f->gang = tgi_strdup(g->name);
	f->msg = tgi_strdup(g->fail);
	f->wait = g->wait;
	f->pods = tgi_calloc(g->nmembers, sizeof(char *));
	if (!f->gang || !f->msg || !f->pods)
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	for (i = 0; i < g->nmembers; i++) {
		f->pods[i] = tgi_strdup(b->pods[g->members[i]].id);
		if (!f->pods[i])
			return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
		f->npods++;
	}
	return TG_OK;
}

tg_err tgk_build_gangs(bctx *b)
{
	size_t i;
	tg_err err;

	for (i = 0; i < b->ngroups; i++) {
		kgroup *g = &b->groups[i];

		if (g->root != i)
			continue;
		if (!g->nmembers) {
			/* nothing pending: only its running pods' names */
			err = g->fail ? tgk_warnf(b->k,
						  "%s; ignored (no pending "
						  "pod)", g->fail) : TG_OK;
			if (err)
				return tgi_errf(b->ei, err, "out of memory");
			continue;
		}
		if (!g->fail && g->ready) {
			err = tgk_group_fail(b, g, gang_build(b, g));
			if (err)
				return err;
		}
		if (g->fail) {
			err = fail_add(b, g);
			if (err)
				return err;
		}
	}
	if (b->ngangs > 1)
		qsort(b->gangs, b->ngangs, sizeof(kgang), gang_cmp);
	return TG_OK;
}

bool tg_k8s_failed_waits(const tg_k8s *k, unsigned i)
{
	return k && i < k->nfails && k->fails[i].wait;
}
