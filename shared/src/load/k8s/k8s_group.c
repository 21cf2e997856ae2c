/*
 * shared/src/load/k8s/k8s_group.c - groups: which gang each pod names
 * (the dialects' keys), the group objects, the gangs' sizes, readiness,
 * priority, age and topology requests, and the groups that form one gang
 * together (a dialect's link(), e.g. Koordinator's GangGroups).  What is
 * particular to a dialect is in its file under dialect/ (k8s_dialect.h).
 *
 * A group that needs a group object the snapshot lacks (a scheduler-
 * plugins, Koordinator-labelled or KAI PodGroup) waits for it: not built,
 * listed with tg_k8s_failed_waits() and a message naming the object
 * ("PodGroup ns/name (API group) not found; ..."), never formed from the
 * pods present (group_wait_cr()).  Gangs defined on the pods (Koordinator's
 * gang annotations, Kueue pod groups, LeaderWorkerSet replicas) need none.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s_dialect.h"

/* ---- membership --------------------------------------------------------- */

/* The key of a group in b->gkeys: its dialect and "ns/name". */
static void group_key(char *buf, size_t n, int dialect, const char *ns,
		      const char *name)
{
	snprintf(buf, n, "%c%s%s%s", '0' + 1 + dialect, ns, *ns ? "/" : "",
		 name);
}

tg_err tgk_group_get(bctx *b, int dialect, const char *ns, const char *gname,
		     size_t *out)
{
	char key[600];
	uint32_t id;
	kgroup *g;

	group_key(key, sizeof(key), dialect, ns, gname);
	if (tgi_strtab_intern(&b->gkeys, key, &id))
		return TG_ENOMEM;
	if (id <= b->ngroups) {
		*out = id - 1;
		return TG_OK;
	}
	if (tgi_grow(&b->groups, &b->capgroups, b->ngroups + 1,
		     sizeof(kgroup)))
		return TG_ENOMEM;
	g = &b->groups[b->ngroups];
	memset(g, 0, sizeof(*g));
	g->dialect = dialect;
	g->ns = ns;
	g->gname = tgi_strdup(gname);
	g->name = tgi_malloc(strlen(ns) + strlen(gname) + 2);
	if (!g->gname || !g->name) {
		tgi_free(g->gname);
		tgi_free(g->name);
		return TG_ENOMEM;
	}
	snprintf(g->name, strlen(ns) + strlen(gname) + 2, "%s/%s", ns, gname);
	g->root = b->ngroups;
	g->setsize = 1;
	g->ready = true;
	g->prio = INT64_MIN;
	g->created = INT64_MAX;
	g->preemptible = true;
	*out = b->ngroups++;
	return TG_OK;
}

int tgk_member(const bctx *b, const cJSON *labels, const cJSON *annots,
	       const char **gname, char *buf, size_t n)
{
	const tgk_key *best = NULL;
	int dialect = -1;
	unsigned i;

	*gname = NULL;
	for (i = 0; i < b->k->ndialects; i++) {
		const tgk_key *key;

		for (key = b->k->dialects[i]->keys; key->key; key++) {
			const char *v, *w = NULL;

			if (best && key->rank >= best->rank)
				continue;
			v = tgk_nonempty(key->annotation ? annots : labels,
					 key->key);
			if (!v || (key->with &&
				   !(w = tgk_nonempty(labels, key->with))))
				continue;
			if (w) {
				snprintf(buf, n, "%s-%s", v, w);
				v = buf;
			}
			best = key;
			dialect = (int)i;
			*gname = v;
		}
	}
	return dialect;
}

const tgk_dialect *tgk_dialect_of(const bctx *b, const kgroup *g)
{
	return g->dialect >= 0 ? b->k->dialects[g->dialect] : NULL;
}

/*
 * The group's gang is reported unschedulable with its first error (an
 * error replaces what it waited for: the gang could not be read either
 * way).
 */
tg_err tgk_group_set_fail(bctx *b, kgroup *g, const char *msg)
{
	if (g->fail && !g->wait)
		return TG_OK;
	tgi_free(g->fail);
	g->wait = false;
	g->fail = tgi_strdup(msg);
	return g->fail ? TG_OK : tgi_errf(b->ei, TG_ENOMEM, "out of memory");
}

/* The group's gang waits, \p msg saying for what (unless it failed or
 * waits already): it is reported as waiting, not built. */
tg_err tgk_group_set_wait(bctx *b, kgroup *g, const char *msg)
{
	if (g->fail)
		return TG_OK;
	g->fail = tgi_strdup(msg);
	g->wait = true;
	return g->fail ? TG_OK : tgi_errf(b->ei, TG_ENOMEM, "out of memory");
}

/* tgk_group_set_fail() with the error \p err just set in b->ei. */
tg_err tgk_group_fail(bctx *b, kgroup *g, tg_err err)
{
	char msg[sizeof(b->ei->msg)];

	if (!err || tgk_fail_msg(b, err, msg, sizeof(msg)))
		return err;
	return tgk_group_set_fail(b, g, msg);
}

/* ---- warnings, requests ------------------------------------------------- */

static tg_err vgwarn(bctx *b, kgroup *g, const char *fmt, va_list ap)
{
	char msg[400];
	tg_err err;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	err = tgk_warnf(b->k, "gang %s: %s", g->name, msg);
	return err ? tgi_errf(b->ei, err, "out of memory") : TG_OK;
}

tg_err tgk_gwarn(bctx *b, kgroup *g, const char *fmt, ...)
{
	va_list ap;
	tg_err err;

	va_start(ap, fmt);
	err = vgwarn(b, g, fmt, ap);
	va_end(ap);
	return err;
}

/*
 * Once per gang and format: the formats given are kept (K8S_MAX_ONCE of
 * them; past that a warning is given again rather than lost).
 */
tg_err tgk_gwarn_once(bctx *b, kgroup *g, const char *fmt, ...)
{
	va_list ap;
	unsigned i;
	tg_err err;

	for (i = 0; i < g->nonce; i++)
		if (g->once[i] == fmt)
			return TG_OK;
	if (g->nonce < K8S_MAX_ONCE)
		g->once[g->nonce++] = fmt;
	va_start(ap, fmt);
	err = vgwarn(b, g, fmt, ap);
	va_end(ap);
	return err;
}

static tg_err req_add(bctx *b, kgroup *g, const kobj *o, const cJSON *at,
		      int type, const char *layer, int how, unsigned size,
		      bool hard)
{
	static const char *const what[] = { "gather", "slice", "spread" };
	size_t i;
	kreq *r;

	if (!*layer || strlen(layer) > TG_MAX_NAME)
		return tgk_oerr(b, o, at, TG_EINVAL,
				"topology level '%.60s' is empty or longer "
				"than %d bytes", layer, TG_MAX_NAME);
	for (i = 0; i < g->nreqs; i++) {
		r = &g->reqs[i];
		if (r->type != type || strcmp(r->layer, layer) != 0)
			continue;
		if (type == R_GATHER) {
			r->how = TG_MAX(r->how, how);
			return TG_OK;
		}
		if (r->size == size && r->hard == hard)
			return TG_OK;
		return tgk_gwarn_once(b, g, "members ask for different %ss on "
				      "'%.100s'; the first one is used",
				      what[type], layer);
	}
	if (tgi_grow(&g->reqs, &g->capreqs, g->nreqs + 1, sizeof(kreq)))
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	r = &g->reqs[g->nreqs];
	r->layer = tgi_strdup(layer);
	if (!r->layer)
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	r->type = type;
	r->how = how;
	r->size = size;
	r->hard = hard;
	g->nreqs++;
	return TG_OK;
}

tg_err tgk_req_gather(bctx *b, kgroup *g, const kobj *o, const cJSON *at,
		      const char *layer, int how)
{
	return req_add(b, g, o, at, R_GATHER, layer, how, 0, false);
}

tg_err tgk_req_slice(bctx *b, kgroup *g, const kobj *o, const cJSON *at,
		     const char *layer, unsigned size)
{
	return req_add(b, g, o, at, R_SLICE, layer, 0, size, false);
}

/* ---- one group: its object, size, priority, requests -------------------- */

/* The group object: size, age, priority, then the dialect's fields. */
static tg_err group_cr(bctx *b, kgroup *g, const tgk_dialect *d,
		       int64_t *min)
{
	const kobj *o = g->cr;
	const cJSON *labels, *annots, *spec, *pcn;
	bool present;
	tg_err err;

	g->cr_reqs = false;
	err = tgk_obj_meta(b, o, &labels, &annots);
	if (!err)
		err = tgk_field(b, o, o->j, "", "spec", T_OBJ, &spec);
	if (!err)
		err = tgk_field_int(b, o, spec, "spec", "minMember", 0,
				    INT32_MAX, &present, min);
	if (!err && !present)
		*min = -1;
	if (!err)
		err = tgk_obj_created(b, o, &g->created);
	if (!err)
		err = tgk_field(b, o, spec, "spec", "priorityClassName", T_STR,
				&pcn);
	if (err)
		return err;
	if (pcn && *pcn->valuestring) {
		const pclass *pc = tgk_find_pc(b, pcn->valuestring);

		if (pc) {
			g->prio = pc->value;
			g->never = pc->never;
		} else {
			err = tgk_owarn(b, o, "spec.priorityClassName: no "
					"PriorityClass '%.100s' in the "
					"snapshot", pcn->valuestring);
			if (err)
				return tgi_errf(b->ei, err, "out of memory");
		}
	}
	return d->group ? d->group(b, g, o, spec, annots, min) : TG_OK;
}

/*
 * Whether the group needs its group object: its dialect has one, and the
 * key that names the group on its first pod (the lowest-ranked key of the
 * dialect the pod carries, as tgk_member() picks) is not a "bare" one.
 * Koordinator's pod-group label needs its PodGroup even on a pod that
 * also carries the gang annotations, as Koordinator's gang cache inits a
 * gang from a pod's annotations only when the pod has no such label.
 */
static bool wants_cr(const tgk_dialect *d, const kpod *p0)
{
	const tgk_key *key, *named = NULL;

	if (!d || !d->group_kind)
		return false;
	for (key = d->keys; key->key; key++) {
		if (named && key->rank >= named->rank)
			continue;
		if (tgk_nonempty(key->annotation ? p0->annots : p0->labels,
				 key->key) &&
		    (!key->with || tgk_nonempty(p0->labels, key->with)))
			named = key;
	}
	return !named || !named->bare;
}

/*
 * A group whose group object is not in the snapshot waits for it, as the
 * schedulers of those dialects make it wait: scheduler-plugins'
 * coscheduling Permit answers PodGroupNotFound, Koordinator's gang
 * PreFilter "gang has not init" (its gang cache inits a labelled gang only
 * from its PodGroup), KAI schedules pod groups only.  In a cluster the
 * pods often come a few milliseconds before their controller creates the
 * object; forming a gang of the pods present would place a partial gang
 * with the wrong size.
 */
static tg_err group_wait_cr(bctx *b, kgroup *g, const tgk_dialect *d)
{
	char msg[700];

	snprintf(msg, sizeof(msg), "%s %s (%s) not found; the gang waits "
		 "for it", d->group_kind, g->name, d->group_api);
	return tgk_group_set_wait(b, g, msg);
}

/*
 * A group with fewer pods than its size waits for the rest, reported as
 * waiting (tg_k8s_failed_waits()), as scheduler-plugins' coscheduling
 * PreFilter and Koordinator's gang PreFilter make its pods unschedulable
 * until enough siblings exist.  The message names the size, not the
 * count: it stays the same while the members arrive, so each pod's
 * PodScheduled condition is written once, not once per arrival.
 */
static tg_err group_wait_members(bctx *b, kgroup *g, int64_t min)
{
	char msg[160];

	g->ready = false;
	snprintf(msg, sizeof(msg), "the gang needs %lld pods and fewer are "
		 "pending or running; it waits for the rest", (long long)min);
	return tgk_group_set_wait(b, g, msg);
}

/* A size annotation of the first pod into *min (-1 when absent). */
static tg_err size_of(bctx *b, const kpod *p0, const char *key, int64_t *min)
{
	bool have;
	tg_err err;

	err = tgk_annot_int(b, p0->o, p0->annots, "metadata.annotations", key,
			    0, min, &have);
	if (!err && !have)
		*min = -1;
	return err;
}

/*
 * The gang's size without a group object: its dialect's size key, else
 * those other dialects lend: the pod's own controller's first
 * (TGK_SIZE_MEMBER, when the pod carries that dialect's first key), then
 * any (TGK_SIZE_ANY), each in table order.
 */
static tg_err group_size(bctx *b, const kgroup *g, const tgk_dialect *d,
			 const kpod *p0, int64_t *min)
{
	int use;
	unsigned i;
	tg_err err;

	if (!g->cr && d && d->size_key) {
		err = size_of(b, p0, d->size_key, min);
		if (err)
			return err;
	}
	for (use = TGK_SIZE_MEMBER; use <= TGK_SIZE_ANY; use++) {
		for (i = 0; i < b->k->ndialects && *min < 0; i++) {
			const tgk_dialect *o = b->k->dialects[i];
			const tgk_key *k0 = &o->keys[0];

			if (o->size_use != use || !o->size_key ||
			    (use == TGK_SIZE_MEMBER &&
			     !tgk_nonempty(k0->annotation ? p0->annots :
					   p0->labels, k0->key)))
				continue;
			err = size_of(b, p0, o->size_key, min);
			if (err)
				return err;
		}
	}
	return TG_OK;
}

/*
 * Priority and age: the group object's, else the members'.  A group
 * object naming a PriorityClass the snapshot lacks leaves the priority to
 * the first member (g->prio is set from then on).
 */
static tg_err group_prio(bctx *b, kgroup *g)
{
	bool named = g->cr && tgk_jstr(tgk_jget(g->cr->j, "spec"),
				       "priorityClassName");
	size_t i;
	tg_err err;

	for (i = 0; i < g->nmembers; i++) {
		const kpod *p = &b->pods[g->members[i]];

		if (!named || g->prio == INT64_MIN) {
			if (i && p->prio != g->prio) {
				err = tgk_gwarn_once(b, g, "members have "
						     "different priorities; "
						     "the highest is used");
				if (err)
					return err;
			}
			g->prio = TG_MAX(g->prio, p->prio);
			g->never = g->never || p->never;
		}
		if (!g->cr || g->created == INT64_MAX)
			g->created = TG_MIN(g->created, p->created);
	}
	return TG_OK;
}

/* Topology requests of the members: every dialect's pod() on each. */
static tg_err group_reqs(bctx *b, kgroup *g)
{
	size_t i;
	unsigned di;
	tg_err err;

	for (i = 0; i < g->nmembers; i++) {
		const kpod *p = &b->pods[g->members[i]];

		for (di = 0; di < b->k->ndialects; di++) {
			const tgk_dialect *d = b->k->dialects[di];

			if (!d->pod)
				continue;
			err = d->pod(b, g, p, g->dialect == (int)di &&
				     g->cr_reqs);
			if (err)
				return err;
		}
	}
	return TG_OK;
}

static tg_err group_load(bctx *b, kgroup *g)
{
	const tgk_dialect *d = tgk_dialect_of(b, g);
	const kpod *p0;
	int64_t min = -1;
	tg_err err;

	if (d && d->group_kind)
		g->cr = tgk_find_obj(b, C_PODGROUP, d->group_kind,
				     d->group_api, g->ns, g->gname);
	if (g->cr) {
		err = group_cr(b, g, d, &min);
		if (err)
			return err;
	}
	if (!g->nmembers)
		return TG_OK;	/* all running: only names allocations */
	p0 = &b->pods[g->members[0]];
	if (!g->cr && wants_cr(d, p0))
		return group_wait_cr(b, g, d);
	err = group_size(b, g, d, p0, &min);
	if (err)
		return err;
	if (min > (int64_t)g->nmembers + g->nbound)
		return group_wait_members(b, g, min);
	if (g->nbound) {
		err = tgk_gwarn_once(b, g, "%u member%s already running; the "
				     "%zu pending ones are placed on their "
				     "own", g->nbound,
				     g->nbound == 1 ? "" : "s", g->nmembers);
		if (err)
			return err;
	}
	err = group_prio(b, g);
	return err ? err : group_reqs(b, g);
}

/* ---- groups that form one gang ------------------------------------------ */

size_t tgk_uf_find(bctx *b, size_t i)
{
	while (b->groups[i].root != i) {
		b->groups[i].root = b->groups[b->groups[i].root].root;
		i = b->groups[i].root;
	}
	return i;
}

tg_err tgk_group_join(bctx *b, size_t gi, const char *nsname, bool *found)
{
	char key[600];
	uint32_t id;
	size_t ra, rb;

	group_key(key, sizeof(key), b->groups[gi].dialect, "", nsname);
	id = tgi_strtab_find(&b->gkeys, key);
	*found = id != 0;
	if (!id || !b->groups[id - 1].nmembers)
		return TG_OK;	/* absent, or all running */
	ra = tgk_uf_find(b, gi);
	rb = tgk_uf_find(b, id - 1);
	if (ra == rb)
		return TG_OK;
	/* the smaller name represents the set */
	if (tg_name_cmp(b->groups[rb].name, b->groups[ra].name) < 0) {
		size_t t = ra;

		ra = rb;
		rb = t;
	}
	b->groups[rb].root = ra;
	b->groups[ra].setsize += b->groups[rb].setsize;
	return TG_OK;
}

/* Folds members, readiness, priority and requests of \p g into \p rg. */
static tg_err fold(bctx *b, kgroup *g, kgroup *rg)
{
	size_t k2;
	tg_err err;

	if (g->fail) {
		err = g->wait ? tgk_group_set_wait(b, rg, g->fail) :
				tgk_group_set_fail(b, rg, g->fail);
		if (err)
			return err;
	}
	rg->ready = rg->ready && g->ready;
	rg->prio = TG_MAX(rg->prio, g->prio);
	rg->never = rg->never || g->never;
	rg->created = TG_MIN(rg->created, g->created);
	if (tgi_grow(&rg->members, &rg->capmembers,
		     rg->nmembers + g->nmembers, sizeof(size_t)))
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	memcpy(rg->members + rg->nmembers, g->members,
	       g->nmembers * sizeof(size_t));
	rg->nmembers += g->nmembers;
	g->nmembers = 0;
	for (k2 = 0; k2 < g->nreqs; k2++) {
		kreq *q = &g->reqs[k2];

		err = req_add(b, rg, b->pods[rg->members[0]].o, NULL, q->type,
			      q->layer, q->how, q->size, q->hard);
		if (err)
			return err;
	}
	if (!rg->topo)
		rg->topo = g->topo;
	return TG_OK;
}

/* Pods of a gang of several groups get their group in their role. */
static tg_err group_roles(bctx *b, kgroup *g)
{
	size_t m;
	uint32_t id;
	tg_err err;

	for (m = 0; m < g->nmembers; m++) {
		kpod *p = &b->pods[g->members[m]];
		const kgroup *own = &b->groups[p->group];
		size_t len = strlen(own->gname) + strlen(p->role) + 2;
		char *role = tgi_malloc(len);

		if (!role)
			return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
		snprintf(role, len, "%s%s%s", own->gname, *p->role ? "/" : "",
			 p->role);
		err = tgi_strtab_intern(&b->k->names, role, &id);
		tgi_free(role);
		if (err)
			return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
		p->role = tgi_strtab_get(&b->k->names, id);
	}
	return TG_OK;
}

/* The dialects' links, then each set of groups folded into its root. */
static tg_err link_groups(bctx *b)
{
	size_t i, n = b->ngroups;
	tg_err err;

	for (i = 0; i < n; i++) {
		const tgk_dialect *d = tgk_dialect_of(b, &b->groups[i]);

		if (!d || !d->link || !b->groups[i].nmembers)
			continue;
		err = d->link(b, i);
		if (err)
			return err;
	}
	for (i = 0; i < n; i++) {
		size_t r = tgk_uf_find(b, i);

		if (r == i || !b->groups[i].nmembers)
			continue;
		err = fold(b, &b->groups[i], &b->groups[r]);
		if (err)
			return err;
	}
	for (i = 0; i < n; i++) {
		kgroup *g = &b->groups[i];

		if (g->root != i || g->setsize < 2 || g->fail)
			continue;
		err = group_roles(b, g);
		if (err)
			return err;
	}
	return TG_OK;
}

tg_err tgk_load_groups(bctx *b)
{
	size_t i;
	tg_err err;

	for (i = 0; i < b->ngroups; i++) {
		kgroup *g = &b->groups[i];

		if (g->fail)
			continue;
		err = tgk_group_fail(b, g, group_load(b, g));
		if (err)
			return err;
	}
	return link_groups(b);
}
