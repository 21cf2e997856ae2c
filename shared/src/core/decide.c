/*
 * shared/src/core/decide.c - tg_place(): one decision for one gang.
 *
 *  1. Reservations: nominations of strictly lower priority, and the
 *     gang's own, are free to it; their allocations are suspended for the
 *     decision and given back after it.
 *  2. The search: place.c's slot search and fill on the whole cluster.
 *  3. Preemption, when the gang is unschedulable and may preempt:
 *     preempt.c chooses the victims, asking through a tgi_fitter (below)
 *     whether the gang fits a domain with some of them gone; the
 *     nominated placement is made here, on the state without them.
 *  4. A lower-priority reservation on a node the decision uses becomes a
 *     victim too.
 *
 * The call graph of the core (an arrow: "calls"; no cycle):
 *
 *                     decide.c  (tg_place)
 *                    /        \
 *                   v          v
 *   place.c (slot search,    preempt.c (victim choice; asks
 *   fill, decisions)          "does it fit?" through the
 *           \                 tgi_fitter decide.c gives it)
 *            \               /
 *             v             v
 *     topology.c, gang.c (the model)  ->  util.c
 *
 *   check.c (tg_topology_check) -> topology.c, place.c (slot cache)
 *
 * place.c and preempt.c never call each other; topology.c calls neither
 * (it frees place.c's scratch through the function pointer place.c left
 * in the topology).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "gang.h"
#include "place_int.h"
#include "preempt_int.h"

/* ---- the fitter preempt.c asks ---- */

typedef struct fitarg {
	tg_topology *t;
	const tg_gang *g;
	tgi_slotctx *sc;	/* fast path; NULL: none */
} fitarg;

static tg_err fit_place(void *arg, unsigned level, uint32_t unit, bool *yes,
			int64_t *slots)
{
	fitarg *a = arg;
	tg_decision *d = NULL;
	tg_err err;

	err = tgi_place_scoped(a->t, a->g, level, unit, &d, NULL);
	if (err)
		return err;
	*yes = d->status == TG_STATUS_PLACED;
	if (slots)
		*slots = d->scope_slots;
	tg_decision_free(d);
	return TG_OK;
}

static int64_t fit_node_slots(void *arg, uint32_t node)
{
	return tgi_slotctx_node(((fitarg *)arg)->sc, node);
}

/* ---- preemption ---- */

/* Appends "; preemption: \p why" to the decision's message. */
static tg_err fail_message(tg_decision *d, const char *why)
{
	tg_buf b;
	char *m;

	tg_buf_init(&b, TGI_MAX_MESSAGE);
	tg_buf_addf(&b, "%s; preemption: %s", d->message, why);
	m = tg_buf_take_cut(&b);
	if (!m)
		return TG_ENOMEM;
	tgi_free(d->message);
	d->message = m;
	return TG_OK;
}

/*
 * With every eligible gang gone, is there room at all?  *level gets the
 * level to free a domain on: the tightest one where the gang fits then
 * (Koordinator's order: gather first, then evict as little as possible
 * inside), never above the hard layer.  With no required layer that
 * keeps a gang compact instead of evicting the cheapest pods all over the
 * cluster.  *room false: \p d's message says why not.
 */
static tg_err room_with_all_gone(tg_topology *t, const tg_gang *g,
				 tgi_victims *v, tg_decision *d,
				 unsigned *level, bool *room)
{
	tg_decision *all = NULL;
	const uint32_t nv = tgi_victims_ngangs(v);
	const int64_t pods = tgi_victims_npods(v);
	tg_buf b;
	tg_err err;

	*room = false;
	tgi_victims_suspend_all(v, true);
	err = tgi_place_scoped(t, g, TG_NONE, 0, &all, NULL);
	tgi_victims_suspend_all(v, false);
	if (err)
		return err;
	if (all->status != TG_STATUS_PLACED) {
		tg_buf_init(&b, TGI_MAX_MESSAGE);
		tg_buf_addf(&b, "%s; preemption cannot help: unschedulable "
			     "even with all %u lower-priority gang%s (%lld "
			     "pod%s) evicted: %s", d->message,
			     nv, nv == 1 ? "" : "s", (long long)pods,
			     pods == 1 ? "" : "s", all->message);
		tgi_free(d->message);
		d->message = tg_buf_take_cut(&b);
		err = d->message ? TG_OK : TG_ENOMEM;
		tg_decision_free(all);
		return err;
	}
	*level = tgi_victims_hard_level(v);
	if (*level == TG_NONE ||
	    (all->lca_level != TG_NONE && all->lca_level > *level))
		*level = all->lca_level;
	*room = true;
	tg_decision_free(all);
	return TG_OK;
}

/*
 * The "preempting" decision: the nominated placement in the chosen unit
 * of \p level, made on the state without the chosen victims, with every
 * pod of each victim gang (in name order) and the message.  *fin NULL
 * (and \p d's message saying so) if the unit did not hold the gang.
 */
static tg_err preempting_decision(tg_topology *t, const tg_gang *g,
				  tgi_victims *v, unsigned level,
				  const tg_decision *d, tg_decision **fin,
				  tg_errinfo *ei)
{
	uint32_t *pods = NULL, npods = 0, i;
	tg_buf b;
	tg_err err;

	tgi_victims_suspend_chosen(v, true);
	err = tgi_place_scoped(t, g, level, tgi_victims_chosen_unit(v), fin,
			       ei);
	tgi_victims_suspend_chosen(v, false);
	if (err)
		return err;
	if ((*fin)->status != TG_STATUS_PLACED) {
		tg_decision_free(*fin);
		*fin = NULL;
		return TG_OK;
	}
	(*fin)->status = TG_STATUS_PREEMPTING;
	err = tgi_victims_chosen_pods(v, &pods, &npods);
	for (i = 0; i < npods && !err; i++)
		err = tgi_decision_add_victim(*fin, t, pods[i], false);
	tgi_free(pods);
	if (err)
		return err;
	tg_buf_init(&b, TGI_MAX_MESSAGE);
	tgi_victims_describe(v, &b);
	tg_buf_addf(&b, "; nominated: %s; before preemption: %s",
		     (*fin)->message, d->message);
	tgi_free((*fin)->message);
	(*fin)->message = tg_buf_take_cut(&b);
	return (*fin)->message ? TG_OK : TG_ENOMEM;
}

/*
 * \p *dp is unschedulable: look for the cheapest set of lower-priority
 * gangs to evict.  On success *dp is replaced by a "preempting"
 * decision; otherwise its message says why preemption cannot help.
 */
static tg_err preempt(tg_topology *t, const tg_gang *g, tg_decision **dp,
		      tg_errinfo *ei)
{
	tg_decision *d = *dp, *fin = NULL;
	tgi_victims *v = NULL;
	fitarg fa = { t, g, NULL };
	tgi_fitter f = { fit_place, NULL, 0, &fa };
	unsigned level = TG_NONE;
	bool ok;
	tg_err err;

	if ((err = tgi_victims_new(t, g, &v)))
		goto out;
	if (!tgi_victims_ngangs(v)) {
		err = fail_message(d, "no running gang of lower priority "
				   "to evict");
		goto out;
	}
	if ((err = room_with_all_gone(t, g, v, d, &level, &ok)) || !ok)
		goto out;
	err = tgi_slotctx_new(t, g, &fa.sc);
	if (err == TG_ENOENT)
		err = TG_OK;	/* the general search, by placements */
	if (err)
		goto out;
	if (fa.sc) {
		f.node_slots = fit_node_slots;
		f.need = tgi_slotctx_need(fa.sc);
	}
	if ((err = tgi_victims_choose(v, level, &f, &ok)))
		goto out;
	if (!ok) {
		err = fail_message(d, "no single domain of the required "
				   "layer can be freed for the whole gang");
		goto out;
	}
	if ((err = preempting_decision(t, g, v, level, d, &fin, ei)))
		goto out;
	if (!fin) {
		err = fail_message(d, "internal: the chosen domain did "
				   "not hold the gang");
		goto out;
	}
	tg_decision_free(d);
	*dp = fin;
	fin = NULL;
out:
	tg_decision_free(fin);
	tgi_slotctx_free(fa.sc);
	tgi_victims_free(v);
	if (err)
		tgi_errf(ei, err, "preemption for gang %s: %s", g->name,
			 tg_strerror(err));
	return err;
}

/* ---- reservations ---- */

/*
 * Suspends the reservations free to \p g (strictly lower priority, or
 * its own): *held gets their allocation indices (NULL when none; the
 * caller resumes them and frees it).
 */
static tg_err hold_reservations(tg_topology *t, const tg_gang *g,
				uint32_t gid, uint32_t **held, size_t *nheld)
{
	size_t i;

	*held = NULL;
	*nheld = 0;
	for (i = 0; t->nnominated && i < t->nallocs; i++) {
		const tgi_alloc *x = &t->allocs[i];

		if (!x->live || !x->nominated || x->suspended ||
		    (tgi_alloc_cls(t, i)->priority >= g->priority &&
		     x->gang != gid))
			continue;
		if (!*held && !(*held = tgi_malloc(t->nallocs *
						   sizeof(uint32_t))))
			return TG_ENOMEM;
		(*held)[(*nheld)++] = (uint32_t)i;
		tgi_alloc_suspend(t, (uint32_t)i);
	}
	return TG_OK;
}

/* A held lower-priority reservation on a node the decision uses is a
 * victim of it. */
static tg_err reservation_victims(const tg_topology *t, uint32_t gid,
				  const uint32_t *held, size_t nheld,
				  tg_decision *d)
{
	size_t i;
	unsigned p;
	tg_err err = TG_OK;

	if (d->status == TG_STATUS_UNSCHEDULABLE)
		return TG_OK;
	for (i = 0; !err && i < nheld; i++) {
		const tgi_alloc *x = &t->allocs[held[i]];

		if (x->gang == gid)
			continue;
		for (p = 0; p < d->npl; p++)
			if (d->pl[p].node == x->node) {
				err = tgi_decision_add_victim(d, t, held[i],
							      true);
				break;
			}
	}
	return err;
}

tg_err tg_place(tg_topology *t, const tg_gang *g, tg_decision **out,
		tg_errinfo *ei)
{
	uint32_t *held = NULL, gid;
	size_t nheld = 0, i;
	tg_decision *d = NULL;
	tg_err err;

	if (!t || !g || !out)
		return tgi_errf(ei, TG_EINVAL, "tg_place: NULL argument");
	*out = NULL;
	if (!t->built)
		return tgi_errf(ei, TG_ESTATE, "tg_place: topology not built");
	if (!g->nps)
		return tgi_errf(ei, TG_EINVAL, "gang %s: no members", g->name);

	tgi_alloc_compact(t);
	gid = tgi_strtab_find(&t->strs, g->name);
	err = hold_reservations(t, g, gid, &held, &nheld);
	if (err) {
		tgi_errf(ei, err, "out of memory");
		goto out;
	}
	err = tgi_place_scoped(t, g, TG_NONE, 0, &d, ei);
	if (!err && d->status == TG_STATUS_UNSCHEDULABLE && !d->bad_request &&
	    g->can_preempt)
		err = preempt(t, g, &d, ei);
	if (!err)
		err = reservation_victims(t, gid, held, nheld, d);
out:
	for (i = 0; i < nheld; i++)
		tgi_alloc_resume(t, held[i]);
	tgi_free(held);
	if (err) {
		tg_decision_free(d);
		return err;
	}
	*out = d;
	return TG_OK;
}
