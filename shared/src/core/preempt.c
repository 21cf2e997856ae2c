/*
 * shared/src/core/preempt.c - topology-aware, gang-aware preemption.
 *
 * When a gang cannot be placed, tg_place() (decide.c) asks for the
 * cheapest set of lower-priority gangs whose eviction lets it in.  This
 * file chooses the victims; it never places: whether the gang fits a
 * domain is asked through the tgi_fitter that decide.c hands it (which
 * runs the slot search of place.c), so place.c and preempt.c do not call
 * each other.  The rules:
 *
 *  1. Victims are whole gangs: every member preemptible and of strictly
 *     lower priority than the preemptor; running allocations only
 *     (lower-priority reservations are already free to it).
 *  2. With every such gang gone the preemptor must fit somewhere, else
 *     the answer is no, with what each domain could offer even then.
 *  3. For each domain of the hard (required) layer, or the whole cluster
 *     without one: the victim gangs with a member inside, cheapest first
 *     (lower priority, then fewer pods, then name); the shortest prefix
 *     that lets the gang in (binary search: freeing more never hurts),
 *     then every victim but the last is given back ("reprieved") if the
 *     gang still fits without evicting it.
 *  4. The domain: fewest disruption-budget violations, then the lowest
 *     highest victim priority, fewest victim pods, lowest sum of victim
 *     priorities, least waste (offer slots left with every eligible
 *     victim there gone), then path order.
 *  5. The decision is "preempting": the victims (every pod of each victim
 *     gang, wherever it runs) and the nominated placement, made on the
 *     state without them.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "gang.h"
#include "preempt_int.h"

typedef struct vgang {
	uint32_t gang;		/* strtab id */
	uint32_t rank;		/* place in the cheapest-first order */
	int64_t prio;		/* highest member priority */
	int64_t prio_sum;	/* sum over members */
	uint32_t first, n;	/* members: vmem[first .. first+n) */
} vgang;

typedef struct cost {
	int64_t pdb, maxprio, pods, sumprio, waste;
	uint32_t unit;
} cost;

struct tgi_victims {
	tg_topology *t;
	const tg_gang *g;
	vgang *v;
	uint32_t nv;
	int64_t npods;		/* members of all eligible gangs */
	uint32_t *vmem;		/* allocation indices grouped by gang */
	unsigned level;		/* hard level, then the level to free */
	uint32_t *uoff;		/* victim gangs of unit u: ugang[uoff[u]..], */
	uint32_t *ugang;	/* cheapest first */
	uint32_t *byrank;	/* the victim gangs, cheapest first */
	int64_t *save;		/* fast path: cur[] before a reprieve try */
	const tgi_fitter *f;	/* while choosing */
	int64_t *cur;		/* fast path: slots per node position */
	uint32_t *best, nbest;	/* the chosen gangs */
	cost bestco;
};

typedef struct tgi_victims pctx;

/* The hard (lowest MUST) level of a gang; TG_NONE = none. */
static unsigned hard_level(const tg_topology *t, const tg_gang *g)
{
	unsigned i, l, hard = TG_NONE;

	for (i = 0; i < g->ngather; i++) {
		if (g->gather[i].a != TG_GATHER_MUST)
			continue;
		l = tgi_layer_resolve(t, g->gather[i].layer);
		if (l != TG_NONE && (hard == TG_NONE || l > hard))
			hard = l;
	}
	return hard;
}

/* Groups allocations by gang: any fixed order does (names order the
 * gangs later, and the victims in the decision).  \p ctx: the topology. */
static int alloc_gang_cmp(const void *pa, const void *pb, void *ctx)
{
	const tg_topology *t = ctx;
	const tgi_alloc *a = &t->allocs[*(const uint32_t *)pa];
	const tgi_alloc *b = &t->allocs[*(const uint32_t *)pb];

	if (a->gang != b->gang)
		return a->gang < b->gang ? -1 : 1;
	return a->pod < b->pod ? -1 : a->pod > b->pod;
}

static int pod_name_cmp(const void *pa, const void *pb, void *ctx)
{
	const tg_topology *t = ctx;
	const tgi_alloc *a = &t->allocs[*(const uint32_t *)pa];
	const tgi_alloc *b = &t->allocs[*(const uint32_t *)pb];

	return tg_name_cmp(tgi_strtab_get(&t->strs, a->pod),
			   tgi_strtab_get(&t->strs, b->pod));
}

/* Groups running allocations into gangs; keeps the eligible ones. */
static tg_err collect(pctx *c)
{
	tg_topology *t = c->t;
	uint32_t *idx, n = 0, i, j;

	idx = tgi_malloc((t->nallocs ? t->nallocs : 1) * sizeof(uint32_t));
	c->vmem = tgi_malloc((t->nallocs ? t->nallocs : 1) *
			     sizeof(uint32_t));
	c->v = tgi_malloc((t->nallocs ? t->nallocs : 1) * sizeof(vgang));
	if (!idx || !c->vmem || !c->v) {
		tgi_free(idx);
		return TG_ENOMEM;
	}
	for (i = 0; i < t->nallocs; i++)
		if (t->allocs[i].live && !t->allocs[i].nominated)
			idx[n++] = i;
	tgi_sort(idx, n, sizeof(uint32_t), alloc_gang_cmp, t);
	c->nv = 0;
	for (i = 0; i < n; i = j) {
		const tgi_alloc *a = &t->allocs[idx[i]];
		bool ok = true;
		vgang *v = &c->v[c->nv];
		uint32_t m;

		for (j = i; j < n && t->allocs[idx[j]].gang == a->gang; j++)
			;
		v->gang = a->gang;
		v->prio = INT64_MIN;
		v->prio_sum = 0;
		for (m = i; m < j; m++) {
			const tgi_alloc *x = &t->allocs[idx[m]];
			const tgi_acls *xc = tgi_alloc_cls(t, idx[m]);

			if (!xc->preemptible ||
			    xc->priority >= c->g->priority || x->suspended)
				ok = false;
			if (xc->priority > v->prio)
				v->prio = xc->priority;
			v->prio_sum += xc->priority;
		}
		if (!ok)
			continue;
		v->first = i;
		v->n = j - i;
		memcpy(&c->vmem[i], &idx[i], (j - i) * sizeof(uint32_t));
		c->nv++;
	}
	tgi_free(idx);
	return TG_OK;
}

static void suspend_gang(pctx *c, uint32_t v, bool on)
{
	uint32_t m;

	for (m = 0; m < c->v[v].n; m++) {
		if (on)
			tgi_alloc_suspend(c->t, c->vmem[c->v[v].first + m]);
		else
			tgi_alloc_resume(c->t, c->vmem[c->v[v].first + m]);
	}
}

/* Does the gang fit in the unit with victims list[0..m) gone?
 * *slots gets the unit's offer slots then (when asked). */
static tg_err fits(pctx *c, uint32_t unit, const uint32_t *list, uint32_t m,
		   bool *yes, int64_t *slots)
{
	uint32_t i;
	tg_err err;

	for (i = 0; i < m; i++)
		suspend_gang(c, list[i], true);
	err = c->f->fits(c->f->arg, c->level, unit, yes, slots);
	for (i = 0; i < m; i++)
		suspend_gang(c, list[i], false);
	return err;
}

/* Cheapest first: lower priority, fewer pods, name.  \p ctx: the pctx. */
static int vcmp(const void *pa, const void *pb, void *ctx)
{
	const pctx *c = ctx;
	const vgang *a = &c->v[*(const uint32_t *)pa];
	const vgang *b = &c->v[*(const uint32_t *)pb];

	if (a->prio != b->prio)
		return a->prio < b->prio ? -1 : 1;
	if (a->n != b->n)
		return a->n < b->n ? -1 : 1;
	return tg_name_cmp(tgi_strtab_get(&c->t->strs, a->gang),
			   tgi_strtab_get(&c->t->strs, b->gang));
}

/* Ranks the victim gangs cheapest first, once (names compared once). */
static tg_err rank_gangs(pctx *c)
{
	uint32_t *idx = tgi_malloc((c->nv ? c->nv : 1) * sizeof(uint32_t));
	uint32_t i;

	if (!idx)
		return TG_ENOMEM;
	for (i = 0; i < c->nv; i++)
		idx[i] = i;
	tgi_sort(idx, c->nv, sizeof(uint32_t), vcmp, c);
	for (i = 0; i < c->nv; i++)
		c->v[idx[i]].rank = i;
	tgi_free(c->byrank);
	c->byrank = idx;
	return TG_OK;
}

/* Node position range of a unit at the hard level. */
static void unit_pos(const pctx *c, uint32_t unit, uint32_t *lo,
		     uint32_t *hi)
{
	const tg_topology *t = c->t;

	if (c->level == TG_NONE) {
		*lo = 0;
		*hi = (uint32_t)t->nnodes;
	} else if (c->level >= t->nlayers) {
		*lo = unit;
		*hi = unit + 1;
	} else {
		*lo = t->dom[unit].lo;
		*hi = t->dom[unit].hi;
	}
}

static int cost_cmp(const cost *a, const cost *b)
{
	if (a->pdb != b->pdb)
		return a->pdb < b->pdb ? -1 : 1;
	if (a->maxprio != b->maxprio)
		return a->maxprio < b->maxprio ? -1 : 1;
	if (a->pods != b->pods)
		return a->pods < b->pods ? -1 : 1;
	if (a->sumprio != b->sumprio)
		return a->sumprio < b->sumprio ? -1 : 1;
	if (a->waste != b->waste)
		return a->waste < b->waste ? -1 : 1;
	return a->unit < b->unit ? -1 : a->unit > b->unit;
}

/* Budget violations of evicting the gangs in list[0..m). */
static int64_t pdb_violations(const pctx *c, const uint32_t *list,
			      uint32_t m)
{
	const tg_topology *t = c->t;
	int64_t viol = 0;
	size_t b;

	for (b = 0; b < t->nbudgets; b++) {
		int64_t n = 0;
		uint32_t i, k;

		for (i = 0; i < m; i++)
			for (k = 0; k < c->v[list[i]].n; k++)
				if (tgi_alloc_cls(t, c->vmem[c->v[list[i]].first
							     + k])->budget ==
				    t->budgets[b].name)
					n++;
		if (n > t->budgets[b].allowed)
			viol += n - t->budgets[b].allowed;
	}
	return viol;
}

/* Fast path: re-counts the slots of a victim gang's nodes in [lo, hi);
 * \p save (when not NULL) gets each member's node's slots before. */
static void fast_update(pctx *c, uint32_t v, uint32_t lo, uint32_t hi,
			int64_t *sum, int64_t *save)
{
	uint32_t k;

	for (k = 0; k < c->v[v].n; k++) {
		uint32_t node = c->t->allocs[c->vmem[c->v[v].first + k]].node;
		uint32_t p = c->t->pos[node];

		if (p < lo || p >= hi)
			continue;
		if (save)
			save[k] = c->cur[p];
		*sum -= c->cur[p];
		c->cur[p] = c->f->node_slots(c->f->arg, node);
		*sum += c->cur[p];
	}
}

/* Fast path: undoes fast_update(..., save) once the gang is back in the
 * state it was in before it (members in reverse: a node may hold several),
 * without re-counting: node_slots() depends on the node's state only. */
static void fast_restore(pctx *c, uint32_t v, uint32_t lo, uint32_t hi,
			 int64_t *sum, const int64_t *save)
{
	uint32_t k;

	for (k = c->v[v].n; k-- > 0;) {
		uint32_t node = c->t->allocs[c->vmem[c->v[v].first + k]].node;
		uint32_t p = c->t->pos[node];

		if (p < lo || p >= hi)
			continue;
		*sum -= c->cur[p];
		c->cur[p] = save[k];
		*sum += c->cur[p];
	}
}

/*
 * The same search as below for gangs that fit a domain exactly when the
 * sum of its nodes' offer slots reaches their size: suspend victims in
 * order until the sum does (the shortest prefix), then reprieve, each
 * step re-counting only the victim's own nodes.  *m 0: no prefix fits.
 * *slots: -1 (not counted).  *waste: the domain's slots with every
 * victim there gone less \p need when the prefix is the whole list (the
 * sum then), else INT64_MIN (waste_fast() counts it if a tie needs it).
 */
static tg_err unit_victims_fast(pctx *c, uint32_t lo, uint32_t hi,
				uint32_t *list, uint32_t n, uint32_t *m,
				int64_t *slots, int64_t *waste)
{
	const int64_t need = c->f->need;
	int64_t sum = 0;
	uint32_t p, i;

	*m = 0;
	*waste = INT64_MIN;
	for (p = lo; p < hi; p++) {
		c->cur[p] = c->f->node_slots(c->f->arg, c->t->order[p]);
		sum += c->cur[p];
	}
	for (i = 0; i < n && !*m; i++) {
		suspend_gang(c, list[i], true);
		fast_update(c, list[i], lo, hi, &sum, NULL);
		if (sum >= need)
			*m = i + 1;
	}
	if (!*m) {
		for (i = 0; i < n; i++)
			suspend_gang(c, list[i], false);
		return TG_OK;
	}
	/* the waste (slots with every victim here gone) only breaks ties:
	 * known now when every victim here is gone, else computed when a
	 * tie needs it (waste_fast()) */
	*slots = -1;
	if (*m == n)
		*waste = sum - need;
	/* reprieve every victim but the last the gang can do without */
	for (i = *m - 1; i-- > 0;) {
		suspend_gang(c, list[i], false);
		fast_update(c, list[i], lo, hi, &sum, c->save);
		if (sum >= need) {
			memmove(&list[i], &list[i + 1],
				(*m - i - 1) * sizeof(uint32_t));
			(*m)--;
		} else {
			suspend_gang(c, list[i], true);
			fast_restore(c, list[i], lo, hi, &sum, c->save);
		}
	}
	for (i = 0; i < *m; i++)
		suspend_gang(c, list[i], false);
	return TG_OK;
}

/* Fast path: the unit's slots with all of its victim gangs gone. */
static int64_t waste_fast(pctx *c, uint32_t unit, uint32_t *list)
{
	uint32_t lo, hi, p, i, n = 0, u;
	int64_t sum = 0;

	unit_pos(c, unit, &lo, &hi);
	u = c->level == TG_NONE ? 0 : unit - (c->level >= c->t->nlayers ? 0 :
					      c->t->layer_lo[c->level]);
	for (i = c->uoff[u]; i < c->uoff[u + 1]; i++)
		list[n++] = c->ugang[i];
	for (i = 0; i < n; i++)
		suspend_gang(c, list[i], true);
	for (p = lo; p < hi; p++)
		sum += c->f->node_slots(c->f->arg, c->t->order[p]);
	for (i = 0; i < n; i++)
		suspend_gang(c, list[i], false);
	return sum - c->f->need;
}

/* The unit (at the hard level) of a node; TG_NONE outside the tree. */
static uint32_t unit_of(const pctx *c, uint32_t node)
{
	const tg_topology *t = c->t;
	uint32_t d;

	if (c->level == TG_NONE)
		return 0;
	if (t->leaf[node] == TG_NONE)
		return TG_NONE;
	if (c->level >= t->nlayers)
		return t->pos[node];
	for (d = t->leaf[node]; t->dom[d].layer > c->level;)
		d = t->dom[d].parent;
	return d - t->layer_lo[c->level];
}

/* Lists, per unit of the hard level, the victim gangs with a member in
 * it, cheapest first (a counting sort over the victims' members taken in
 * rank order; rank_gangs() first). */
static tg_err unit_lists(pctx *c, uint32_t nunits)
{
	uint32_t *unit, *last, v, k, r, i, total = 0;

	for (v = 0; v < c->nv; v++)
		total += c->v[v].n;
	unit = tgi_malloc((total ? total : 1) * sizeof(uint32_t));
	last = tgi_malloc((nunits ? nunits : 1) * sizeof(uint32_t));
	c->uoff = tgi_calloc(nunits + 1, sizeof(uint32_t));
	c->ugang = tgi_malloc((total ? total : 1) * sizeof(uint32_t));
	if (!unit || !last || !c->uoff || !c->ugang) {
		tgi_free(unit);
		tgi_free(last);
		return TG_ENOMEM;
	}
	memset(last, 0xff, nunits * sizeof(uint32_t));
	/* a gang counts once per unit: its members come together */
	for (r = 0, i = 0; r < c->nv; r++) {
		v = c->byrank[r];
		for (k = 0; k < c->v[v].n; k++, i++) {
			unit[i] = unit_of(c, c->t->allocs[
					c->vmem[c->v[v].first + k]].node);
			if (unit[i] == TG_NONE || last[unit[i]] == v) {
				unit[i] = TG_NONE;
				continue;
			}
			last[unit[i]] = v;
			c->uoff[unit[i] + 1]++;
		}
	}
	for (i = 0; i < nunits; i++)
		c->uoff[i + 1] += c->uoff[i];
	memcpy(last, c->uoff, nunits * sizeof(uint32_t));
	for (r = 0, i = 0; r < c->nv; r++) {
		v = c->byrank[r];
		for (k = 0; k < c->v[v].n; k++, i++)
			if (unit[i] != TG_NONE)
				c->ugang[last[unit[i]]++] = v;
	}
	tgi_free(unit);
	tgi_free(last);
	return TG_OK;
}

/*
 * The general search inside one unit, by placements: the shortest prefix
 * of \p list that lets the gang in (binary search: freeing more never
 * hurts), then every victim but the last given back if the gang still
 * fits without it.  *m 0: not even the whole list lets it in.  *slots:
 * the unit's offer slots with the whole list gone.
 */
static tg_err unit_victims_general(pctx *c, uint32_t unit, uint32_t *list,
				   uint32_t n, uint32_t *m, int64_t *slots)
{
	uint32_t a, b, i, k;
	bool yes;
	tg_err err;

	*m = 0;
	if ((err = fits(c, unit, list, n, &yes, slots)) || !yes)
		return err;
	for (a = 1, b = n; a < b;) {
		k = a + (b - a) / 2;
		if ((err = fits(c, unit, list, k, &yes, NULL)))
			return err;
		if (yes)
			b = k;
		else
			a = k + 1;
	}
	k = a;
	/* reprieve: give back every victim the gang can do without */
	for (i = 0; i < k; i++)
		suspend_gang(c, list[i], true);
	for (i = k - 1; i-- > 0;) {
		suspend_gang(c, list[i], false);
		err = c->f->fits(c->f->arg, c->level, unit, &yes, NULL);
		if (err)
			break;
		if (yes) {
			memmove(&list[i], &list[i + 1],
				(k - i - 1) * sizeof(uint32_t));
			k--;
		} else {
			suspend_gang(c, list[i], true);
		}
	}
	for (i = 0; i < k; i++)
		suspend_gang(c, list[i], false);
	if (!err)
		*m = k;
	return err;
}

/* The cost of evicting list[0..m) from \p unit (offer slots \p slots
 * then; -1: not counted yet). */
static void unit_cost(const pctx *c, uint32_t unit, const uint32_t *list,
		      uint32_t m, int64_t slots, cost *co)
{
	int64_t most = 0;
	uint32_t i;

	co->unit = unit;
	co->pdb = pdb_violations(c, list, m);
	co->maxprio = INT64_MIN;
	co->pods = co->sumprio = 0;
	for (i = 0; i < m; i++) {
		const vgang *x = &c->v[list[i]];

		if (x->prio > co->maxprio)
			co->maxprio = x->prio;
		co->pods += x->n;
		co->sumprio += x->prio_sum;
	}
	for (i = 0; i < c->g->nps; i++)
		if (c->g->ps[i]->count > most)
			most = c->g->ps[i]->count;
	co->waste = slots < 0 ? INT64_MIN : slots - most;
}

/*
 * The cheapest victim set inside one unit: \p list gets the chosen gangs
 * (a prefix of the unit's list, reprieved ones removed), *nout their
 * number; *nout 0 when the unit cannot take the gang at all.
 */
static tg_err unit_victims(pctx *c, uint32_t unit, uint32_t *list,
			   uint32_t *nout, cost *co)
{
	uint32_t lo, hi, n = 0, v, m, u;
	int64_t slots = 0, waste = INT64_MIN;
	tg_err err;

	*nout = 0;
	unit_pos(c, unit, &lo, &hi);
	u = c->level == TG_NONE ? 0 : unit - (c->level >= c->t->nlayers ? 0 :
					      c->t->layer_lo[c->level]);
	for (v = c->uoff[u]; v < c->uoff[u + 1]; v++)
		list[n++] = c->ugang[v];
	if (!n)
		return TG_OK;
	/* cheapest first already (unit_lists()) */
	if (c->f->node_slots)
		err = unit_victims_fast(c, lo, hi, list, n, &m, &slots,
					&waste);
	else
		err = unit_victims_general(c, unit, list, n, &m, &slots);
	if (err || !m)
		return err;
	unit_cost(c, unit, list, m, slots, co);
	if (waste != INT64_MIN)
		co->waste = waste;
	*nout = m;
	return TG_OK;
}

static void unit_label(const pctx *c, uint32_t unit, tg_buf *b)
{
	const tg_topology *t = c->t;

	if (c->level == TG_NONE)
		tg_buf_adds(b, "the cluster");
	else if (c->level >= t->nlayers)
		tg_buf_addf(b, "node/%s", tgi_strtab_get(&t->strs,
			     t->name[t->order[unit]]));
	else
		tg_buf_addf(b, "%s/%s", t->layer_name[c->level],
			     t->dom[unit].path);
}

/* ---- the interface decide.c drives ---- */

tg_err tgi_victims_new(tg_topology *t, const tg_gang *g, tgi_victims **out)
{
	pctx *c = tgi_calloc(1, sizeof(*c));
	uint32_t i;
	tg_err err;

	*out = NULL;
	if (!c)
		return TG_ENOMEM;
	c->t = t;
	c->g = g;
	c->level = hard_level(t, g);
	if ((err = collect(c))) {
		tgi_victims_free(c);
		return err;
	}
	for (i = 0; i < c->nv; i++)
		c->npods += c->v[i].n;
	*out = c;
	return TG_OK;
}

uint32_t tgi_victims_ngangs(const tgi_victims *c)
{
	return c->nv;
}

int64_t tgi_victims_npods(const tgi_victims *c)
{
	return c->npods;
}

unsigned tgi_victims_hard_level(const tgi_victims *c)
{
	return c->level;
}

void tgi_victims_suspend_all(tgi_victims *c, bool on)
{
	uint32_t i;

	for (i = 0; i < c->nv; i++)
		suspend_gang(c, i, on);
}

void tgi_victims_suspend_chosen(tgi_victims *c, bool on)
{
	uint32_t i;

	for (i = 0; i < c->nbest; i++)
		suspend_gang(c, c->best[i], on);
}

/* The units of the level to free: [*ulo, *uhi). */
static void level_units(const pctx *c, uint32_t *ulo, uint32_t *uhi)
{
	const tg_topology *t = c->t;

	if (c->level == TG_NONE) {
		*ulo = 0;
		*uhi = 1;
	} else if (c->level >= t->nlayers) {
		*ulo = 0;
		*uhi = (uint32_t)t->ntree;
	} else {
		*ulo = t->layer_lo[c->level];
		*uhi = t->layer_hi[c->level];
	}
}

/* The most members of one victim gang (at least 1). */
static uint32_t most_members(const pctx *c)
{
	uint32_t i, most = 1;

	for (i = 0; i < c->nv; i++)
		if (c->v[i].n > most)
			most = c->v[i].n;
	return most;
}

/* Keeps the cheaper of the best so far and unit \p co's \p list. */
static void keep_cheaper(pctx *c, cost *co, const uint32_t *list,
			 uint32_t nlist, uint32_t *wbuf)
{
	cost *bc = &c->bestco;

	if (c->nbest && (co->waste == INT64_MIN || bc->waste == INT64_MIN) &&
	    co->pdb == bc->pdb && co->maxprio == bc->maxprio &&
	    co->pods == bc->pods && co->sumprio == bc->sumprio) {
		/* a tie on everything but the waste: count it */
		if (co->waste == INT64_MIN)
			co->waste = waste_fast(c, co->unit, wbuf);
		if (bc->waste == INT64_MIN)
			bc->waste = waste_fast(c, bc->unit, wbuf);
	}
	if (!c->nbest || cost_cmp(co, bc) < 0) {
		*bc = *co;
		memcpy(c->best, list, nlist * sizeof(uint32_t));
		c->nbest = nlist;
	}
}

tg_err tgi_victims_choose(tgi_victims *c, unsigned level,
			  const tgi_fitter *f, bool *found)
{
	const tg_topology *t = c->t;
	uint32_t *list = NULL, *wbuf = NULL, nlist, u, ulo, uhi;
	cost co;
	tg_err err;

	*found = false;
	c->level = level;
	c->f = f;
	c->nbest = 0;
	list = tgi_malloc(c->nv * sizeof(uint32_t));
	wbuf = tgi_malloc(c->nv * sizeof(uint32_t));
	if (!c->best)
		c->best = tgi_malloc(c->nv * sizeof(uint32_t));
	if (!list || !wbuf || !c->best) {
		err = TG_ENOMEM;
		goto out;
	}
	level_units(c, &ulo, &uhi);
	if ((err = rank_gangs(c)) || (err = unit_lists(c, uhi - ulo)))
		goto out;
	if (f->node_slots && !c->cur &&
	    (!(c->cur = tgi_malloc((t->nnodes ? t->nnodes : 1) *
				   sizeof(int64_t))) ||
	     !(c->save = tgi_malloc(most_members(c) * sizeof(int64_t))))) {
		err = TG_ENOMEM;
		goto out;
	}
	for (u = ulo; u < uhi; u++) {
		if ((err = unit_victims(c, u, list, &nlist, &co)))
			goto out;
		if (nlist)
			keep_cheaper(c, &co, list, nlist, wbuf);
	}
	*found = c->nbest > 0;
out:
	c->f = NULL;
	tgi_free(list);
	tgi_free(wbuf);
	return err;
}

uint32_t tgi_victims_chosen_unit(const tgi_victims *c)
{
	return c->bestco.unit;
}

tg_err tgi_victims_chosen_pods(const tgi_victims *c, uint32_t **pods,
			       uint32_t *npods)
{
	uint32_t *vp, np = 0, i, k;

	*pods = NULL;
	*npods = 0;
	for (i = 0; i < c->nbest; i++)
		np += c->v[c->best[i]].n;
	vp = tgi_malloc((np ? np : 1) * sizeof(uint32_t));
	if (!vp)
		return TG_ENOMEM;
	for (i = 0, np = 0; i < c->nbest; i++)
		for (k = 0; k < c->v[c->best[i]].n; k++)
			vp[np++] = c->vmem[c->v[c->best[i]].first + k];
	tgi_sort(vp, np, sizeof(uint32_t), pod_name_cmp, c->t);
	*pods = vp;
	*npods = np;
	return TG_OK;
}

void tgi_victims_describe(const tgi_victims *c, tg_buf *b)
{
	const tg_topology *t = c->t;
	const int64_t pods = c->bestco.pods;
	uint32_t i, n = c->nbest;

	tg_buf_addf(b, "preempting %lld pod%s of %u lower-priority gang%s "
		     "(", (long long)pods, pods == 1 ? "" : "s",
		     n, n == 1 ? "" : "s");
	for (i = 0; i < n && i < 8; i++)
		tg_buf_addf(b, "%s%s priority %lld", i ? ", " : "",
			     tgi_strtab_get(&t->strs, c->v[c->best[i]].gang),
			     (long long)c->v[c->best[i]].prio);
	if (n > 8)
		tg_buf_addf(b, " and %u more", n - 8);
	tg_buf_adds(b, ") to free ");
	unit_label(c, c->bestco.unit, b);
}

void tgi_victims_free(tgi_victims *c)
{
	if (!c)
		return;
	tgi_free(c->v);
	tgi_free(c->vmem);
	tgi_free(c->uoff);
	tgi_free(c->ugang);
	tgi_free(c->cur);
	tgi_free(c->best);
	tgi_free(c->byrank);
	tgi_free(c->save);
	tgi_free(c);
}
