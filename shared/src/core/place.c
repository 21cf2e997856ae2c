/*
 * shared/src/core/place.c - gang placement.
 *
 * See place.h for the algorithm.  Vocabulary:
 *   level   a layer index, or nlayers for single nodes; TG_NONE = root
 *   slots   how many members of one pod set's shape fit (offer slots)
 *   pos     a node's position in tree order (t->order)
 *
 * Nothing here changes the topology's state; scratch arrays live in
 * t->scratch and are reused from one decision to the next.
 */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gang.h"
#include "model.h"
#include "place_int.h"

enum {
	WHY_UNSCHED = 0,
	WHY_TAINT,
	WHY_SELECTOR,
	WHY_AFFINITY,
	WHY_POD_AFFINITY,
	WHY_NOT_IN_TREE,
	WHY_SPREAD,
	WHY_SPREAD_KEY,
	WHY_RES0		/* WHY_RES0 + r: insufficient resource r */
};
#define NWHY (WHY_RES0 + TG_MAX_RESOURCES)

/* The request of one pod set, as node_slots() checks it. */
typedef struct slot_req {
	unsigned m;			/* resources besides pods */
	unsigned rr[TG_MAX_RESOURCES];	/* their ids */
	int64_t wv[TG_MAX_RESOURCES];	/* amounts, > 0 */
	int64_t lim[TG_MAX_RESOURCES];	/* INT64_MAX / amount */
	bool pods;			/* pods asked for (always) */
	int64_t pods_want, pods_lim;
} slot_req;

/*
 * What a node's offer slots depend on besides the topology's state, for
 * a simple pod set (no selectors, affinity or tolerations) on an
 * untouched scratch: the slot cache's key.  Cleared with memset before
 * it is filled, so that memcmp() compares it.
 */
typedef struct slot_key {
	slot_req sr;
	unsigned cap, slice;
	uint8_t in_tree;
} slot_key;

typedef struct scratch {
	size_t npos, ndom;
	int32_t *nslots;	/* per pos: slots of the pod set being filled
				 * (<= TG_MAX_MEMBERS: half the traffic) */
	int64_t *dslots;	/* per domain */
	uint32_t *take;		/* per pos: members taken in this decision */
	int64_t *used;		/* per pos * width: resources taken */
	unsigned width;		/* row of used[]: t->nres when allocated */
	uint64_t *gpu_used;	/* per pos */
	uint32_t *touched;	/* positions with take > 0 */
	size_t ntouched;
	uint32_t *fill;		/* (pos, count) pairs of the current fill */
	size_t nfill, fillcap;
	/*
	 * Slot cache of the lowest-layer domains (see node_slots()): with
	 * cstamp[d] != 0, nslots[] over domain d holds the slots of ckey,
	 * their sum is csum[d] and their maximum cmax[d]; they are ckey's
	 * slots on the current state when cstamp[d] == dom[d].gen + 1 and
	 * cgen == t->gen.  Any other write of nslots[] over d zeroes
	 * cstamp[d].
	 */
	uint32_t *cstamp;	/* per domain */
	int64_t *csum;
	int32_t *cmax;
	slot_key ckey;
	bool ckey_set;
	uint32_t cgen;
	unsigned fill_ps;	/* the pod set fill() is placing */
	/*
	 * The fewest child domains a fill of the main pod set takes in each
	 * candidate of level need_level (fewest_children()), set by
	 * scan_units() and read by pack_cmp(); need_level is TG_NONE when
	 * the candidates' children are nodes or a spread splits them.
	 */
	uint32_t *dneed;	/* per domain */
	int64_t *cbuf;		/* per domain: children's slots, sorted */
	unsigned need_level;
} scratch;


/*
 * A label-selector spread (tgi_sspread) resolved against the topology:
 * its units are the domains of its level (domain id - lo) or, at the node
 * level, the tree positions.  A hard one whose topologyKey is neither
 * (bykey, level SP_KEY) has the key's values on the nodes as its units,
 * as kube-scheduler counts every spread (a pair of key and value, not a
 * tree path): unit_of[] maps a node to its value's unit, TG_NONE for a
 * node without the key; vals[] holds each unit's value (string id),
 * units in the values' byte order.  cnt[] holds the matching pods per
 * unit, this attempt's members included; base[] the same before the
 * attempt.  gmin is the minimum over eligible units (0 when fewer are
 * eligible than minDomains), nat how many eligible units sit at it.
 */
#define SP_KEY	(TG_NONE - 1)	/* rspread.level of a bykey spread */
#define KEY_SCAN_MAX	16	/* fill_key(): members placed by a scan of
				 * the nodes (no grouping) */

typedef struct rspread {
	const tgi_sspread *sp;
	unsigned level;
	bool bykey;
	uint32_t *unit_of, *vals;
	uint32_t lo, nunits;
	int32_t *cnt, *base;
	uint8_t *elig;
	uint32_t *touched;
	uint32_t ntouched, nelig, nat, base_nat;
	int32_t gmin, base_gmin;
	bool zero;			/* fewer eligible than minDomains */
	bool self[TG_MAX_PODSETS];	/* the pod set's members count */
	int64_t kself;			/* members that count */
} rspread;

/* fill_key()'s nodes of one signature (their unit of every bykey spread
 * alike): positions pos[lo, hi) of its array in position order, cur the
 * first with room left. */
typedef struct kgroup {
	uint32_t lo, hi, cur;
} kgroup;

/* Everything resolved about one request against one topology. */
typedef struct req {
	const tg_gang *g;
	unsigned hard;			/* lowest MUST level; TG_NONE = root */
	unsigned prefer;		/* deepest PREFER level or TG_NONE */
	unsigned slice[TG_MAX_LAYERS + 1];	/* per level, 0 = none */
	unsigned spread_level;		/* TG_NONE = none */
	unsigned spread_skew;
	bool spread_hard;
	bool topo;			/* any topology request at all */
	unsigned main;			/* pod set with most members */
	unsigned nres;
	unsigned res[TG_MAX_RESOURCES];	/* requested resource ids */
	/* pod (anti-)affinity: the label values of a term's key on the
	 * nodes of the pods it names, sorted, in aff_vals[off .. off + n) */
	uint32_t *aff_vals;
	size_t naff_vals, capaff_vals;
	size_t pod_aff_off[TG_MAX_PODSETS][TG_MAX_TERMS];
	size_t pod_aff_n[TG_MAX_PODSETS][TG_MAX_TERMS];
	rspread *sp;			/* label-selector spreads */
	unsigned nsp;
	bool sp_filter;			/* a hard one: node slots depend on it */
	bool sp_bykey;			/* a bykey one among them */
	bool key_fill;			/* members fill one at a time over a
					 * bykey spread (fill_key()) */
	bool key_clash;			/* ... where a layer spread or a slice
					 * needs fill(): refused */
	bool key_big;			/* ... past TG_MAX_KEY_FILL: refused */
	uint64_t key_members;		/* members fill_key() places */
	uint32_t key_ngroups;		/* bykey value combinations, at most
					 * the nodes (key_work()) */
	uint8_t sp_ignored[TG_MAX_SPREADS];	/* soft ones on unknown
						 * layers (g->sspread) */
	unsigned nsp_ignored;
	unsigned scope_level;		/* TG_NONE: the whole cluster */
	uint32_t scope_unit;		/* domain id, or position (node) */
	uint32_t why[NWHY];		/* nodes excluded per reason (main) */
	/* non-fatal notes: the soft spreads on unknown layers, ignored
	 * (indices into g->spread; note_text() words them) */
	uint8_t ignored[TG_MAX_LAYERS + 1];
	unsigned nignored;
} req;

static void scratch_free(void *p)
{
	scratch *s = p;

	if (!s)
		return;
	tgi_free(s->nslots);
	tgi_free(s->dslots);
	tgi_free(s->take);
	tgi_free(s->used);
	tgi_free(s->gpu_used);
	tgi_free(s->touched);
	tgi_free(s->fill);
	tgi_free(s->cstamp);
	tgi_free(s->csum);
	tgi_free(s->cmax);
	tgi_free(s->dneed);
	tgi_free(s->cbuf);
	tgi_free(s);
}

static scratch *scratch_get(tg_topology *t)
{
	scratch *s = t->scratch;
	size_t n = t->nnodes ? t->nnodes : 1, d = t->ndom ? t->ndom : 1;

	if (s && s->npos >= n && s->ndom >= d && s->width >= t->nres)
		return s;
	if (s)
		scratch_free(s);
	t->scratch = NULL;
	s = tgi_calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	t->scratch_free = scratch_free;
	s->npos = n;
	s->ndom = d;
	s->width = t->nres;
	s->nslots = tgi_calloc(n, sizeof(int32_t));
	s->dslots = tgi_calloc(d, sizeof(int64_t));
	s->take = tgi_calloc(n, sizeof(uint32_t));
	s->used = tgi_calloc(n * s->width, sizeof(int64_t));
	s->gpu_used = tgi_calloc(n, sizeof(uint64_t));
	s->touched = tgi_calloc(n, sizeof(uint32_t));
	s->cstamp = tgi_calloc(d, sizeof(uint32_t));
	s->csum = tgi_calloc(d, sizeof(int64_t));
	s->cmax = tgi_calloc(d, sizeof(int32_t));
	s->dneed = tgi_calloc(d, sizeof(uint32_t));
	s->cbuf = tgi_calloc(d, sizeof(int64_t));
	s->need_level = TG_NONE;
	if (!s->nslots || !s->dslots || !s->take ||
	    !s->used || !s->gpu_used || !s->touched || !s->cstamp ||
	    !s->csum || !s->cmax || !s->dneed || !s->cbuf) {
		scratch_free(s);
		return NULL;
	}
	t->scratch = s;
	return s;
}

/* ---- decisions ---- */

static void decision_free_fields(tg_decision *d)
{
	unsigned i;

	tgi_free(d->gang);
	tgi_free(d->domain);
	tgi_free(d->message);
	if (d->names)
		for (i = 0; i < d->npl; i++)
			tgi_free(d->names[i]);
	tgi_free(d->names);
	tgi_free(d->pl);
	tgi_free(d->vic);
}

void tg_decision_free(tg_decision *d)
{
	if (!d)
		return;
	decision_free_fields(d);
	tgi_free(d);
}

tg_status tg_decision_status(const tg_decision *d)
{
	return d ? d->status : TG_STATUS_UNSCHEDULABLE;
}

const char *tg_status_name(tg_status s)
{
	switch (s) {
	case TG_STATUS_PLACED:
		return "placed";
	case TG_STATUS_PREEMPTING:
		return "preempting";
	case TG_STATUS_UNSCHEDULABLE:
		return "unschedulable";
	}
	return "unknown";
}

const char *tg_decision_gang(const tg_decision *d)
{
	return d ? d->gang : NULL;
}

const char *tg_decision_domain(const tg_decision *d)
{
	return d && d->domain ? d->domain : "";
}

unsigned tg_decision_nplacements(const tg_decision *d)
{
	return d ? d->npl : 0;
}

const tg_placement *tg_decision_placement(const tg_decision *d, unsigned i)
{
	return d && i < d->npl ? &d->pl[i] : NULL;
}

unsigned tg_decision_nvictims(const tg_decision *d)
{
	return d ? d->nvic : 0;
}

const tg_victim *tg_decision_victim(const tg_decision *d, unsigned i)
{
	return d && i < d->nvic ? &d->vic[i] : NULL;
}

double tg_decision_bandwidth_gbps(const tg_decision *d)
{
	return d ? d->bw : 0;
}

const char *tg_decision_message(const tg_decision *d)
{
	return d && d->message ? d->message : "";
}

/* ---- levels and names ---- */

static const char *level_name(const tg_topology *t, unsigned level)
{
	if (level == TG_NONE)
		return "cluster";
	if (level >= t->nlayers)
		return "node";
	return t->layer_name[level];
}

/* Number of domains at a level (nodes in the tree for the node level). */
static uint32_t level_lo(const tg_topology *t, unsigned level)
{
	if (level == TG_NONE)
		return 0;
	return level >= t->nlayers ? 0 : t->layer_lo[level];
}

static uint32_t level_hi(const tg_topology *t, unsigned level)
{
	if (level == TG_NONE)
		return 1;
	return level >= t->nlayers ? (uint32_t)t->ntree : t->layer_hi[level];
}

/* Domain of node position \p p at \p level (a layer). */
static uint32_t ancestor(const tg_topology *t, uint32_t node, unsigned level)
{
	uint32_t d = t->leaf[node];

	if (level == TG_NONE)
		return 0;
	while (d != TG_NONE && d && t->dom[d].layer > level)
		d = t->dom[d].parent;
	return d;
}

/* "SpineLayer/spine-0/..." for a unit at a level. */
static tg_err unit_name(const tg_topology *t, unsigned level, uint32_t u,
			tg_buf *b, bool with_layer)
{
	if (level == TG_NONE)
		return tg_buf_adds(b, "cluster");
	if (level >= t->nlayers) {
		if (with_layer)
			tg_buf_adds(b, "node/");
		return tg_buf_adds(b, tgi_strtab_get(&t->strs,
					t->name[t->order[u]]));
	}
	if (with_layer)
		tg_buf_addf(b, "%s/", t->layer_name[level]);
	return tg_buf_adds(b, t->dom[u].path);
}

/* ---- request resolution ---- */

/*
 * The levels of the label-selector spreads (q->sp[i].level; the arrays
 * come later, spread_prepare()).  A hard one on a key that is no layer
 * spreads over the key's values on the nodes (bykey); one over a layer
 * at or above the hard (MUST) one, or at the level of a
 * tg_gang_add_spread() spread is a bad request (TG_ENOENT, \p err says
 * why); a soft one on an unknown layer is noted and left out.
 */
static tg_err resolve_sspreads(const tg_topology *t, const tg_gang *g,
			       req *q, tg_buf *err)
{
	unsigned i, l;

	if (!g->nsspread)
		return TG_OK;
	q->sp = tgi_calloc(g->nsspread, sizeof(*q->sp));
	if (!q->sp)
		return TG_ENOMEM;
	for (i = 0; i < g->nsspread; i++) {
		const tgi_sspread *sp = &g->sspread[i];

		l = tgi_layer_resolve(t, sp->layer);
		if (l == TG_NONE && !sp->hard) {
			q->sp_ignored[q->nsp_ignored++] = (uint8_t)i;
			continue;	/* said by sspread_notes() */
		}
		if (l == TG_NONE) {
			q->sp[q->nsp].sp = sp;
			q->sp[q->nsp].level = SP_KEY;
			q->sp[q->nsp].bykey = true;
			q->sp_filter = q->sp_bykey = true;
			q->nsp++;
			continue;
		}
		if (sp->hard && q->hard != TG_NONE && q->hard >= l) {
			tg_buf_addf(err, "gang %s: must gather on %s but "
				     "spread over %s, which is not below it",
				     g->name, level_name(t, q->hard),
				     level_name(t, l));
			return TG_ENOENT;
		}
		if (l == q->spread_level) {
			tg_buf_addf(err, "gang %s: a spread over its own "
				     "members and one over a label selector "
				     "on the same layer %s", g->name,
				     level_name(t, l));
			return TG_ENOENT;
		}
		q->sp[q->nsp].sp = sp;
		q->sp[q->nsp].level = l;
		q->sp_filter = q->sp_filter || sp->hard;
		q->topo = true;
		q->nsp++;
	}
	return TG_OK;
}

/* "gang G: unknown topology layer 'X'<what> (layers: ...)". */
static tg_err unknown_layer(const tg_topology *t, const tg_gang *g,
			    const char *bad, const char *what, tg_buf *err)
{
	unsigned l;

	tg_buf_addf(err, "gang %s: unknown topology layer '%s'%s", g->name,
		     bad, what);
	tg_buf_adds(err, " (layers:");
	for (l = 0; l < t->nlayers; l++) {
		bool key = t->layer_key[l] &&
			   strcmp(t->layer_key[l], t->layer_name[l]);

		tg_buf_addf(err, "%s %s%s%s%s", l ? "," : "",
			     t->layer_name[l], key ? " [" : "",
			     key ? t->layer_key[l] : "", key ? "]" : "");
	}
	tg_buf_adds(err, t->nlayers ? ", node)" : " node)");
	return TG_EINVAL;
}

/* Gather levels (the lowest MUST and PREFER) and the main pod set. */
static tg_err resolve_gather(const tg_topology *t, const tg_gang *g, req *q,
			     tg_buf *err)
{
	unsigned i, l, best = 0;

	for (i = 0; i < g->ngather; i++) {
		l = tgi_layer_resolve(t, g->gather[i].layer);
		if (l == TG_NONE)
			return unknown_layer(t, g, g->gather[i].layer, "",
					     err);
		/* every MUST holds when the lowest one does */
		if (g->gather[i].a == TG_GATHER_MUST &&
		    (q->hard == TG_NONE || l > q->hard))
			q->hard = l;
		if (g->gather[i].a == TG_GATHER_PREFER &&
		    (q->prefer == TG_NONE || l > q->prefer))
			q->prefer = l;
	}
	for (i = 0; i < g->nps; i++)
		if (g->ps[i]->count > g->ps[best]->count)
			best = i;
	q->main = best;
	return TG_OK;
}

/* Slice sizes per level: each divides the main pod set, and a slice
 * above is a multiple of one below. */
static tg_err resolve_slices(const tg_topology *t, const tg_gang *g, req *q,
			     tg_buf *err)
{
	unsigned i, j, l;

	for (i = 0; i < g->nslice; i++) {
		unsigned sz = g->slice[i].a, cnt = g->ps[q->main]->count;

		l = tgi_layer_resolve(t, g->slice[i].layer);
		if (l == TG_NONE)
			return unknown_layer(t, g, g->slice[i].layer, "",
					     err);
		if (cnt % sz) {
			tg_buf_addf(err, "gang %s: %u members do not divide "
				     "into slices of %u on layer %s", g->name,
				     cnt, sz, g->slice[i].layer);
			return TG_EINVAL;
		}
		q->slice[l] = sz;
	}
	for (i = 0; i <= t->nlayers; i++)
		for (j = i + 1; j <= t->nlayers; j++)
			if (q->slice[i] && q->slice[j] &&
			    q->slice[i] % q->slice[j]) {
				tg_buf_addf(err, "gang %s: slice of %u on %s "
					     "is not a multiple of the slice "
					     "of %u on %s", g->name,
					     q->slice[i], level_name(t, i),
					     q->slice[j], level_name(t, j));
				return TG_EINVAL;
			}
	return TG_OK;
}

/* The layer spread (the lowest layer named wins); soft ones on unknown
 * layers are ignored and named later, hard ones are an error. */
static tg_err resolve_spread(const tg_topology *t, const tg_gang *g, req *q,
			     tg_buf *err)
{
	unsigned i, l;

	for (i = 0; i < g->nspread; i++) {
		l = tgi_layer_resolve(t, g->spread[i].layer);
		if (l == TG_NONE) {
			if (g->spread[i].hard)
				return unknown_layer(t, g, g->spread[i].layer,
						     " in a hard spread",
						     err);
			/* every one is named (a gang has at most
			 * TG_MAX_LAYERS + 1 spreads) */
			if (q->nignored < TG_MAX_LAYERS + 1)
				q->ignored[q->nignored++] = (uint8_t)i;
			continue;
		}
		if (q->spread_level == TG_NONE || l < q->spread_level) {
			q->spread_level = l;
			q->spread_skew = g->spread[i].a;
			q->spread_hard = g->spread[i].hard;
		}
	}
	if (q->spread_level != TG_NONE && q->hard != TG_NONE &&
	    q->hard >= q->spread_level) {
		tg_buf_addf(err, "gang %s: must gather on %s but spread "
			     "over %s, which is not below it", g->name,
			     level_name(t, q->hard),
			     level_name(t, q->spread_level));
		return TG_EINVAL;
	}
	return TG_OK;
}

/* The resources any pod set asks for, each once, pods last. */
static tg_err resolve_resources(const tg_topology *t, const tg_gang *g,
				req *q, tg_buf *err)
{
	bool seen[TG_MAX_RESOURCES] = { false };
	unsigned i, r;

	for (i = 0; i < g->nps; i++)
		for (r = 0; r < TG_MAX_RESOURCES; r++) {
			if (!g->ps[i]->shape.v[r] || seen[r] || r == TG_RES_PODS)
				continue;
			if (r >= t->nres) {
				tg_buf_addf(err, "gang %s: pod set %s asks "
					     "for an unregistered resource "
					     "id %u", g->name,
					     g->ps[i]->name, r);
				return TG_EINVAL;
			}
			seen[r] = true;
			q->res[q->nres++] = r;
		}
	q->res[q->nres++] = TG_RES_PODS;
	return TG_OK;
}

static tg_err resolve(const tg_topology *t, const tg_gang *g, req *q,
		      tg_buf *err)
{
	tg_err e;

	memset(q, 0, sizeof(*q));
	q->g = g;
	q->hard = TG_NONE;
	q->prefer = TG_NONE;
	q->spread_level = TG_NONE;
	/* (and a label spread over a layer: resolve_sspreads()) */
	q->topo = g->ngather || g->nslice || g->nspread;
	if ((e = resolve_gather(t, g, q, err)) ||
	    (e = resolve_slices(t, g, q, err)) ||
	    (e = resolve_spread(t, g, q, err)))
		return e;
	e = resolve_sspreads(t, g, q, err);
	if (e)
		return e == TG_ENOENT ? TG_EINVAL : e;
	return resolve_resources(t, g, q, err);
}

/* ---- eligibility ---- */

/* Whether a label with value \p v (NULL: absent) satisfies \p e. */
static bool expr_holds(const tgi_expr *e, const char *v)
{
	unsigned i;
	int64_t a, b;

	switch (e->op) {
	case TG_SEL_EXISTS:
		return v != NULL;
	case TG_SEL_DOES_NOT_EXIST:
		return v == NULL;
	case TG_SEL_IN:
	case TG_SEL_NOT_IN:
		if (!v)
			return e->op == TG_SEL_NOT_IN;
		for (i = 0; i < e->nvalues; i++)
			if (!strcmp(v, e->values[i]))
				return e->op == TG_SEL_IN;
		return e->op == TG_SEL_NOT_IN;
	case TG_SEL_GT:
	case TG_SEL_LT:
		if (!v || !tg_i64_parse(v, &a) ||
		    !tg_i64_parse(e->values[0], &b))
			return false;
		return e->op == TG_SEL_GT ? a > b : a < b;
	}
	return false;
}

static bool expr_match(const tg_topology *t, uint32_t n, const tgi_expr *e)
{
	return expr_holds(e, tg_topology_node_label(t, n, e->key));
}

static bool tolerated(const tgi_podset *p, const tgi_taint *tn,
		      const tgi_strtab *st)
{
	unsigned i;

	for (i = 0; i < p->ntol; i++) {
		const tgi_toleration *o = &p->tol[i];

		if (o->effect >= 0 && o->effect != tn->effect)
			continue;
		if (!o->key)
			return true;
		if (strcmp(o->key, tgi_strtab_get(st, tn->key)))
			continue;
		if (o->exists)
			return true;
		if (!strcmp(o->value ? o->value : "",
			    tgi_strtab_get(st, tn->value)))
			return true;
	}
	return false;
}

/* Whether node \p n's taints (NoSchedule, NoExecute) are tolerated. */
static bool taints_ok(const tg_topology *t, const tgi_podset *p, uint32_t n)
{
	uint32_t i;

	for (i = t->taint_head[n]; i; i = t->taints[i - 1].next)
		if (t->taints[i - 1].effect != TG_TAINT_PREFER_NO_SCHEDULE &&
		    !tolerated(p, &t->taints[i - 1], &t->strs))
			return false;
	return true;
}

/* Why node \p n fails the pod set's node selector or required node
 * affinity (WHY_SELECTOR, WHY_AFFINITY); -1 if it passes. */
static int node_affinity_why(const tg_topology *t, const tgi_podset *p,
			     uint32_t n)
{
	unsigned k, j;

	for (k = 0; k < p->nsel; k++) {
		const char *v = tg_topology_node_label(t, n, p->sel_key[k]);

		if (!v || strcmp(v, p->sel_val[k]))
			return WHY_SELECTOR;
	}
	if (p->nterms) {
		bool any = false;

		for (k = 0; k < p->nterms && !any; k++) {
			bool all = true;

			for (j = 0; j < p->terms[k].n && all; j++)
				all = expr_match(t, n, &p->terms[k].exprs[j]);
			any = all;
		}
		if (!any)
			return WHY_AFFINITY;
	}
	return -1;
}

/* The unit of node \p n for spread \p r (an index into its arrays);
 * TG_NONE outside the tree (bykey: without the key). */
static uint32_t spread_unit(const tg_topology *t, const rspread *r,
			    uint32_t n)
{
	if (r->bykey)
		return r->unit_of[n];
	if (t->leaf[n] == TG_NONE)
		return TG_NONE;
	if (r->level >= t->nlayers)
		return t->pos[n];
	return ancestor(t, n, r->level) - r->lo;
}

/* Whether node \p n carries the key of every bykey spread (a hard
 * spread's filter refuses a node without its key, and kube-scheduler
 * counts no pod on it for any of the pod's hard spreads). */
static bool spread_keys_ok(const req *q, uint32_t n)
{
	unsigned i;

	for (i = 0; q->sp_bykey && i < q->nsp; i++)
		if (q->sp[i].bykey && q->sp[i].unit_of &&
		    q->sp[i].unit_of[n] == TG_NONE)
			return false;
	return true;
}

/* Whether a label spread keeps pod set \p ps off node \p n whatever the
 * rest of the gang does: even with every other member that counts
 * raising the minimum, the node's domain would exceed the skew
 * (WHY_SPREAD); WHY_SPREAD_KEY for a node without a bykey spread's key;
 * -1 when none does. */
static int spread_blocks(const tg_topology *t, const req *q, unsigned ps,
			 uint32_t n)
{
	unsigned i;

	if (!spread_keys_ok(q, n))
		return WHY_SPREAD_KEY;
	for (i = 0; i < q->nsp; i++) {
		const rspread *r = &q->sp[i];
		uint32_t u;
		int64_t self, lift;

		if (!r->sp->hard || !r->cnt)
			continue;
		u = spread_unit(t, r, n);
		if (u == TG_NONE)
			continue;	/* WHY_NOT_IN_TREE */
		self = r->self[ps] ? 1 : 0;
		lift = r->zero ? 0 : r->kself - self;
		if ((int64_t)r->base[u] + self - (r->base_gmin + lift) >
		    (int64_t)r->sp->max_skew)
			return WHY_SPREAD;
	}
	return -1;
}

/* Whether label value \p vid is among those of term \p k of \p ps. */
static bool aff_has(const req *q, unsigned ps, unsigned k, uint32_t vid)
{
	const uint32_t *v = q->aff_vals;
	size_t lo = 0, hi = q->pod_aff_n[ps][k];

	if (!hi)
		return false;
	v += q->pod_aff_off[ps][k];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] == vid)
			return true;
		if (v[mid] < vid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* Why node \p n cannot take a member of pod set \p ps; -1 if it can. */
static int ineligible(const tg_topology *t, const req *q, unsigned ps,
		      uint32_t n)
{
	const tgi_podset *p = q->g->ps[ps];
	unsigned k;
	int why;

	if (t->flags[n] & TGI_NODE_UNSCHED)
		return WHY_UNSCHED;
	if (q->topo && !(t->flags[n] & TGI_NODE_IN_TREE))
		return WHY_NOT_IN_TREE;
	if (!taints_ok(t, p, n))
		return WHY_TAINT;
	if ((why = node_affinity_why(t, p, n)) >= 0)
		return why;
	for (k = 0; k < p->naff; k++) {
		const char *v = tg_topology_node_label(t, n, p->aff[k].key);
		bool in = v && aff_has(q, ps, k, tgi_strtab_find(&t->strs, v));

		if (p->aff[k].anti ? in : !in)
			return WHY_POD_AFFINITY;
	}
	return q->sp_filter ? spread_blocks(t, q, ps, n) : -1;
}

static int u32_cmp(const void *a, const void *b, void *ctx)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	TG_UNUSED(ctx);
	return x < y ? -1 : x > y;
}

/*
 * Resolves pod (anti-)affinity terms to the label values they name: the
 * values of the term's key on the nodes of the live allocations it
 * names, as many as there are.
 */
static tg_err resolve_pod_affinity(const tg_topology *t, req *q)
{
	unsigned ps, k, j;

	for (ps = 0; ps < q->g->nps; ps++) {
		const tgi_podset *p = q->g->ps[ps];

		for (k = 0; k < p->naff; k++) {
			size_t off = q->naff_vals, m, w;

			for (j = 0; j < p->aff[k].npods; j++) {
				uint32_t a = tgi_alloc_find(t,
							    p->aff[k].pods[j]);
				const char *v;

				if (a == TG_NONE)
					continue;
				v = tg_topology_node_label(t,
						t->allocs[a].node,
						p->aff[k].key);
				if (!v)
					continue;
				if (tgi_grow(&q->aff_vals, &q->capaff_vals,
					     q->naff_vals + 1,
					     sizeof(uint32_t)))
					return TG_ENOMEM;
				q->aff_vals[q->naff_vals++] =
					tgi_strtab_find(&t->strs, v);
			}
			/* sorted, each value once */
			if (q->naff_vals > off)
				tgi_sort(q->aff_vals + off,
					 q->naff_vals - off,
					 sizeof(uint32_t), u32_cmp, NULL);
			for (m = off, w = off; m < q->naff_vals; m++)
				if (w == off || q->aff_vals[w - 1] !=
						q->aff_vals[m])
					q->aff_vals[w++] = q->aff_vals[m];
			q->naff_vals = w;
			q->pod_aff_off[ps][k] = off;
			q->pod_aff_n[ps][k] = w - off;
		}
	}
	return TG_OK;
}

/* ---- label-selector spreads ---- */

typedef const char *(*label_fn)(const void *ctx, const char *key);

/* Whether a pod in namespace \p ns whose labels \p get reads is one
 * that spread \p sp counts. */
static bool spread_selects(const tgi_sspread *sp, const char *ns,
			   label_fn get, const void *ctx)
{
	unsigned i;

	if (!sp->selector || strcmp(ns ? ns : "", sp->ns))
		return false;
	for (i = 0; i < sp->nexprs; i++)
		if (!expr_holds(&sp->exprs[i], get(ctx, sp->exprs[i].key)))
			return false;
	return true;
}

typedef struct lset_ctx {
	const tg_topology *t;
	uint32_t ls;
} lset_ctx;

static const char *lset_label(const void *ctx, const char *key)
{
	const lset_ctx *c = ctx;
	uint32_t k = tgi_strtab_find(&c->t->strs, key);
	uint32_t v = k ? tgi_lset_value(c->t, c->ls, k) : TG_NONE;

	return v == TG_NONE ? NULL : tgi_strtab_get(&c->t->strs, v);
}

static const char *member_label(const void *ctx, const char *key)
{
	const tgi_mlabels *m = ctx;
	unsigned i;

	for (i = 0; i < m->n; i++)
		if (!strcmp(m->keys[i], key))
			return m->vals[i];
	return NULL;
}

/* Minimum over the eligible units and how many sit at it. */
static void spread_min(rspread *r)
{
	uint32_t i;

	r->gmin = 0;
	r->nat = 0;
	if (r->zero)
		return;
	r->gmin = INT32_MAX;
	for (i = 0; i < r->nunits; i++) {
		if (!r->elig[i])
			continue;
		if (r->cnt[i] < r->gmin) {
			r->gmin = r->cnt[i];
			r->nat = 1;
		} else if (r->cnt[i] == r->gmin) {
			r->nat++;
		}
	}
	if (!r->nat)
		r->gmin = 0;
}

/* One more member that counts in unit \p u. */
static void spread_add(rspread *r, uint32_t u)
{
	if (r->cnt[u] == r->base[u])
		r->touched[r->ntouched++] = u;
	if (r->cnt[u] < INT32_MAX)
		r->cnt[u]++;
	if (r->elig[u] && !r->zero && r->cnt[u] - 1 == r->gmin &&
	    --r->nat == 0)
		spread_min(r);
}

/* Forgets the members of the last attempt. */
static void spread_reset(const req *q)
{
	unsigned i;
	uint32_t j;

	for (i = 0; i < q->nsp; i++) {
		rspread *r = &q->sp[i];

		if (!r->cnt)
			continue;
		for (j = 0; j < r->ntouched; j++)
			r->cnt[r->touched[j]] = r->base[r->touched[j]];
		r->ntouched = 0;
		r->gmin = r->base_gmin;
		r->nat = r->base_nat;
	}
}

/* Whether node \p n is one the spread's domains are made of. */
static bool spread_node_ok(const tg_topology *t, const rspread *r,
			   const tgi_podset *p, uint32_t n)
{
	if (!r->sp->ignore_node_affinity && node_affinity_why(t, p, n) >= 0)
		return false;
	if (r->sp->honor_taints &&
	    ((t->flags[n] & TGI_NODE_UNSCHED) || !taints_ok(t, p, n)))
		return false;
	return true;
}

/* tgi_spread_tally() for one label set \p ls (index + 1, 0: none). */
static void tally_lset(const tg_topology *t, const tgi_sspread *sp,
		       uint32_t ls, int32_t *per_node)
{
	lset_ctx c = { t, ls };
	const char *ns = ls ? tgi_strtab_get(&t->strs, t->lsets[ls - 1].ns) :
			 "";
	const tgi_lsmem *m;
	size_t j;

	if (ls >= t->lsmemcap || !spread_selects(sp, ns, lset_label, &c))
		return;
	m = &t->lsmem[ls];
	for (j = 0; j < m->n; j++) {
		const tgi_alloc *x = &t->allocs[m->a[j]];

		if (x->live && !x->suspended && per_node[x->node] < INT32_MAX)
			per_node[x->node]++;
	}
}

/* The label sets of one posting chain, each through tally_lset(). */
static void tally_chain(const tg_topology *t, const tgi_sspread *sp,
			uint32_t key, uint32_t value, int32_t *per_node)
{
	uint32_t n, p;

	for (p = tgi_lpost_first(t, key, value, &n); p;
	     p = t->lposts[p - 1].next)
		tally_lset(t, sp, t->lposts[p - 1].ls, per_node);
}

/* A string's id, or 0 with *ok false when it was never interned ("" is
 * id 0 and always there). */
static uint32_t str_id(const tg_topology *t, const char *s, bool *ok)
{
	uint32_t id = tgi_strtab_find(&t->strs, s);

	*ok = id || !*s;
	return id;
}

/*
 * The candidate label sets are those of the shortest posting list among
 * the spread's namespace's and each In expression's values (a set
 * carries one value of a key: the values' lists are disjoint); every set
 * is read only for a spread of namespace "" (sets without one).
 */
void tgi_spread_tally(const tg_topology *t, const tgi_sspread *sp,
		      int32_t *per_node)
{
	uint32_t nsid, best, n, k, vid;
	const tgi_expr *be = NULL;
	unsigned i, v, w;
	bool ok;

	if (!sp->selector)
		return;
	if (!*sp->ns) {
		for (k = 0; k <= t->nlsets; k++)
			tally_lset(t, sp, k, per_node);
		return;
	}
	if (!(nsid = tgi_strtab_find(&t->strs, sp->ns)))
		return;
	tgi_lpost_first(t, 0, nsid, &best);
	for (i = 0; i < sp->nexprs; i++) {
		const tgi_expr *e = &sp->exprs[i];
		uint32_t sum = 0;

		if (e->op != TG_SEL_IN)
			continue;
		k = tgi_strtab_find(&t->strs, e->key);
		for (v = 0; k && v < e->nvalues; v++) {
			vid = str_id(t, e->values[v], &ok);
			if (ok) {
				tgi_lpost_first(t, k, vid, &n);
				sum += n;
			}
		}
		if (sum < best) {
			best = sum;
			be = e;
		}
	}
	if (!be) {
		tally_chain(t, sp, 0, nsid, per_node);
		return;
	}
	if (!best || !(k = tgi_strtab_find(&t->strs, be->key)))
		return;
	for (v = 0; v < be->nvalues; v++) {
		for (w = 0; w < v && strcmp(be->values[w], be->values[v]); w++)
			;
		vid = str_id(t, be->values[v], &ok);
		if (w == v && ok)
			tally_chain(t, sp, k, vid, per_node);
	}
}

static int str_cmp(const void *a, const void *b, void *ctx)
{
	const tg_topology *t = ctx;

	return strcmp(tgi_strtab_get(&t->strs, *(const uint32_t *)a),
		      tgi_strtab_get(&t->strs, *(const uint32_t *)b));
}

/* The unit of value \p v (a string id) among \p r's sorted values. */
static uint32_t key_unit(const tg_topology *t, const rspread *r, uint32_t v)
{
	uint32_t lo = 0, hi = r->nunits;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = str_cmp(&r->vals[mid], &v, (void *)t);

		if (!c)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return TG_NONE;		/* not reached: every value is there */
}

/*
 * A bykey spread's units: the distinct values of its key on the nodes,
 * in byte order (the order its message lists them in), and each node's
 * unit (TG_NONE without the key).
 */
static tg_err key_units(const tg_topology *t, rspread *r)
{
	size_t nn = t->nnodes ? t->nnodes : 1;
	uint32_t k = tgi_strtab_find(&t->strs, r->sp->layer), n, i, j, m = 0;

	r->unit_of = tgi_malloc(nn * sizeof(uint32_t));
	r->vals = tgi_malloc(nn * sizeof(uint32_t));
	if (!r->unit_of || !r->vals)
		return TG_ENOMEM;
	for (n = 0; n < t->nnodes; n++) {
		r->unit_of[n] = TG_NONE;
		/* the key's value id (a key never interned: on no node) */
		for (j = k ? t->lab_head[n] : 0; j; j = t->labels[j - 1].next)
			if (t->labels[j - 1].key == k) {
				r->unit_of[n] = t->labels[j - 1].value;
				r->vals[m++] = r->unit_of[n];
				break;
			}
	}
	if (m)
		tgi_sort(r->vals, m, sizeof(uint32_t), str_cmp, (void *)t);
	for (i = 0, r->nunits = 0; i < m; i++)
		if (!r->nunits || r->vals[r->nunits - 1] != r->vals[i])
			r->vals[r->nunits++] = r->vals[i];
	for (n = 0; n < t->nnodes; n++)
		if (r->unit_of[n] != TG_NONE)
			r->unit_of[n] = key_unit(t, r, r->unit_of[n]);
	return TG_OK;
}

/*
 * fill_key()'s work: the gang's members, each looking at one node of each
 * combination of the bykey spreads' values (key_groups()): their product,
 * at most the nodes; past TG_MAX_KEY_FILL the gang is refused
 * (q->key_big).
 */
static void key_work(const tg_topology *t, req *q)
{
	uint64_t g = 1;
	unsigned i;

	for (i = 0; i < q->nsp; i++)
		if (q->sp[i].bykey)
			g = TG_MIN(g * TG_MAX(q->sp[i].nunits, 1), t->nnodes);
	q->key_ngroups = (uint32_t)g;
	q->key_members = 0;
	for (i = 0; i < q->g->nps; i++)
		q->key_members += q->g->ps[i]->count;
	q->key_big = q->key_members * q->key_ngroups > TG_MAX_KEY_FILL;
}

/*
 * Counts, for every label spread, the matching pods per unit: live
 * allocations on eligible nodes whose namespace and labels the selector
 * takes (tgi_spread_tally()); marks the eligible units; works out which
 * pod sets count.
 */
static tg_err spread_prepare(const tg_topology *t, req *q)
{
	const tgi_podset *mp = q->g->ps[q->main];
	int32_t *pn = NULL;
	unsigned i, ps;
	uint32_t j, n;

	if (!q->nsp)
		return TG_OK;
	/* every bykey spread's units first: spread_keys_ok() reads them */
	for (i = 0; i < q->nsp; i++)
		if (q->sp[i].bykey && key_units(t, &q->sp[i]))
			return TG_ENOMEM;
	pn = tgi_calloc(t->nnodes ? t->nnodes : 1, sizeof(int32_t));
	if (!pn)
		return TG_ENOMEM;
	for (i = 0; i < q->nsp; i++) {
		rspread *r = &q->sp[i];
		const tgi_sspread *sp = r->sp;

		r->lo = r->level >= t->nlayers ? 0 : t->layer_lo[r->level];
		if (!r->bykey)
			r->nunits = r->level >= t->nlayers ?
				    (uint32_t)t->ntree :
				    t->layer_hi[r->level] - r->lo;
		r->cnt = tgi_calloc(r->nunits + 1, sizeof(int32_t));
		r->base = tgi_calloc(r->nunits + 1, sizeof(int32_t));
		r->elig = tgi_calloc(r->nunits + 1, 1);
		r->touched = tgi_calloc(r->nunits + 1, sizeof(uint32_t));
		if (!r->cnt || !r->base || !r->elig || !r->touched) {
			tgi_free(pn);
			return TG_ENOMEM;
		}
		tgi_spread_tally(t, sp, pn);
		for (n = 0; n < t->nnodes; n++) {
			uint32_t u = spread_unit(t, r, n);
			int32_t c = pn[n];

			pn[n] = 0;
			if (u == TG_NONE || !spread_node_ok(t, r, mp, n) ||
			    (sp->hard && !spread_keys_ok(q, n)))
				continue;
			if (!r->elig[u]) {
				r->elig[u] = 1;
				r->nelig++;
			}
			r->cnt[u] = c > INT32_MAX - r->cnt[u] ? INT32_MAX :
				    r->cnt[u] + c;
		}
		memcpy(r->base, r->cnt, r->nunits * sizeof(int32_t));
		r->zero = sp->min_domains && r->nelig < sp->min_domains;
		spread_min(r);
		r->base_gmin = r->gmin;
		r->base_nat = r->nat;
		for (ps = 0; ps < q->g->nps; ps++) {
			const tgi_podset *p = q->g->ps[ps];

			for (j = 0; j < p->count && !r->self[ps]; j++) {
				static const tgi_mlabels none;
				const tgi_mlabels *m = p->mlab ? &p->mlab[j] :
						       &none;

				r->self[ps] = spread_selects(sp, m->ns,
						member_label, m);
				if (!p->mlab)
					break;	/* all alike */
			}
			if (r->self[ps])
				r->kself += p->count;
		}
		/* one member that counts, alone: the filter is exact */
		q->key_fill = q->key_fill || (r->bykey && r->kself > 0 &&
					      (r->kself > 1 || q->g->nps > 1));
	}
	tgi_free(pn);
	/* fill_key() knows no layer spread and no slice */
	for (i = 0; i < q->nsp; i++)
		q->key_clash = q->key_clash || !q->sp[i].bykey;
	for (i = 0; i <= t->nlayers; i++)
		q->key_clash = q->key_clash || q->slice[i] > 1;
	q->key_clash = q->key_fill && (q->key_clash ||
				       q->spread_level != TG_NONE);
	if (q->key_fill && !q->key_clash)
		key_work(t, q);
	return TG_OK;
}

/* Frees what resolve() and its helpers allocated in \p q. */
static void req_release(req *q)
{
	unsigned i;

	if (!q)
		return;
	for (i = 0; q->sp && i < q->nsp; i++) {
		tgi_free(q->sp[i].cnt);
		tgi_free(q->sp[i].base);
		tgi_free(q->sp[i].elig);
		tgi_free(q->sp[i].touched);
		tgi_free(q->sp[i].unit_of);
		tgi_free(q->sp[i].vals);
	}
	tgi_free(q->sp);
	tgi_free(q->aff_vals);
	q->sp = NULL;
	q->aff_vals = NULL;
	q->nsp = 0;
}

static bool simple_podset(const tgi_podset *p)
{
	return !p->nsel && !p->nterms && !p->naff;
}

/*
 * Offer slots of one eligible node at position \p i, checking q->res in
 * order (the first resource that does not fit is counted in \p why).
 */
static int64_t slots_generic(const tg_topology *t, const req *q,
			     const scratch *s, const tgi_podset *p,
			     uint32_t i, uint32_t n, uint32_t *why)
{
	const unsigned stride = t->stride;
	int64_t best = INT64_MAX;
	unsigned k;

	for (k = 0; k < q->nres && best; k++) {
		unsigned r = q->res[k];
		int64_t want, have, fit;

		want = r == TG_RES_PODS ? (p->shape.v[r] ? p->shape.v[r] : 1)
					: p->shape.v[r];
		if (!want)
			continue;
		if (r >= stride) {
			fit = 0;
		} else {
			size_t ix = (size_t)n * stride + r;

			if (r == TG_RES_PODS && t->alloc[ix] == 0)
				continue;	/* not tracked */
			have = t->freev[ix] - s->used[(size_t)i * s->width + r];
			fit = have < want ? 0 : have < 2 * want ? 1 :
			      have / want;
		}
		if (fit < best) {
			best = fit;
			if (!fit && why)
				why[WHY_RES0 + r]++;
		}
	}
	return best;
}

/*
 * Offer slots of an eligible node (before caps and slices) from its free
 * row \p fv, less \p u (taken by this decision; NULL = nothing);
 * \p pods_alloc is non-zero when the node tracks pods (its allocatable
 * pod count, or 1 when it has free pods).  With \p why, counts the
 * first resource (in sr order) that does not fit.  The value is the
 * minimum over resources of free / amount; a division only when its
 * quotient can lower that minimum.
 */
static inline int64_t fit_node(const slot_req *sr, const int64_t *fv,
			       const int64_t *u, int64_t pods_alloc,
			       uint32_t *why)
{
	int64_t best = INT64_MAX, have, fit;
	unsigned j;

	for (j = 0; j < sr->m; j++) {
		const unsigned r = sr->rr[j];
		const int64_t want = sr->wv[j];

		have = fv[r] - (u ? u[r] : 0);
		if (have < want) {
			if (why)
				why[WHY_RES0 + r]++;
			return 0;
		}
		if (have < 2 * want)
			fit = 1;
		else if (best <= sr->lim[j] && have >= best * want)
			continue;	/* have / want >= best */
		else
			fit = have / want;
		if (fit < best)
			best = fit;
	}
	/* pods last; a node that tracks none (allocatable 0) is not
	 * limited by them */
	if (!sr->pods || (fv[TG_RES_PODS] <= 0 && pods_alloc == 0))
		return best;
	have = fv[TG_RES_PODS] - (u ? u[TG_RES_PODS] : 0);
	if (have < sr->pods_want) {
		if (why)
			why[WHY_RES0 + TG_RES_PODS]++;
		return 0;
	}
	if (have < 2 * sr->pods_want)
		return 1;	/* best >= 1 here */
	if (best <= sr->pods_lim && have >= best * sr->pods_want)
		return best;
	fit = have / sr->pods_want;
	return fit < best ? fit : best;
}

/* Everything node_slots() works out once for one pass over positions. */
typedef struct slot_pass {
	const tg_topology *t;
	const req *q;
	scratch *s;
	unsigned ps;
	slot_req sr;
	bool simple, taken, trim, beyond;
	unsigned slice, cap;
	uint8_t in_tree, mask, gwant;
	uint32_t *why;
} slot_pass;

/*
 * Offer slots of the pass's pod set on positions [lo, hi) into nslots[];
 * adds their sum to *sum and raises *max to their maximum.
 */
static inline __attribute__((always_inline)) void
pass_range(const slot_pass *c, uint32_t lo, uint32_t hi, int64_t *sum,
	   int32_t *max)
{
	const tg_topology *t = c->t;
	const unsigned stride = t->stride;
	const int64_t *freev = t->freev, *allocv = t->alloc;
	const uint8_t *gfree = t->gfree;
	const uint32_t *order = t->order;
	const uint8_t *flags = t->flags;
	const uint32_t *take = c->s->take;
	int32_t *nslots = c->s->nslots;
	const uint8_t gwant = c->gwant, in_tree = c->in_tree, mask = c->mask;
	uint32_t *why = c->why;
	int64_t total = 0;
	int32_t top = *max;
	uint32_t i;

	for (i = lo; i < hi; i++) {
		const uint32_t n = order[i];
		const int64_t *fv;
		int32_t v;

		if (gfree[n] < gwant && !why) {
			nslots[i] = 0;	/* what this decision took only
					 * lowers it further */
			continue;
		}
		fv = &freev[(size_t)n * stride];
		int64_t pa, best;

		pa = fv[TG_RES_PODS] > 0 ? 1 :
		     allocv[(size_t)n * stride + TG_RES_PODS];

		if (!c->simple || (flags[n] & mask) != in_tree) {
			int reason;

			if (c->simple && !(flags[n] & TGI_NODE_TAINTED))
				reason = (flags[n] & TGI_NODE_UNSCHED) ?
					 WHY_UNSCHED : WHY_NOT_IN_TREE;
			else
				reason = ineligible(t, c->q, c->ps, n);
			if (reason >= 0) {
				nslots[i] = 0;
				if (why)
					why[reason]++;
				continue;
			}
		}
		if (c->beyond)
			best = slots_generic(t, c->q, c->s,
					     c->q->g->ps[c->ps], i, n, why);
		else if (c->taken && take[i])
			best = fit_node(&c->sr, fv,
					&c->s->used[(size_t)i * c->s->width],
					pa, why);
		else
			best = fit_node(&c->sr, fv, NULL, pa, why);
		if (best == INT64_MAX)
			best = TG_MAX_MEMBERS;
		if (c->trim) {
			if (c->cap && best > c->cap)
				best = c->cap;
			if (c->slice > 1)
				best -= best % c->slice;
		}
		v = (int32_t)(best > TG_MAX_MEMBERS ? TG_MAX_MEMBERS : best);
		nslots[i] = v;
		total += v;
		if (v > top)
			top = v;
	}
	*sum += total;
	*max = top;
}

/* nslots[] over the lowest-layer domains that [lo, hi) meets is no
 * longer what the slot cache says. */
static void cache_forget(const tg_topology *t, scratch *s, uint32_t lo,
			 uint32_t hi)
{
	uint32_t i = lo;

	if (!t->nlayers)
		return;
	while (i < hi && i < t->ntree) {
		uint32_t d = t->leaf[t->order[i]];

		s->cstamp[d] = 0;
		i = t->dom[d].hi;
	}
}

/*
 * Offer slots of pod set \p ps on every position in [lo, hi), given the
 * resources already taken by this decision (s->used).  With \p why,
 * counts the reason each node takes none.
 *
 * This runs over every node in every decision, so it does no more than
 * it must; the result, and the reason counted for a node that takes
 * none, are those of slots_generic() (q->res in order, pods last):
 *  - the resources the pod set asks for are listed once, pods apart;
 *    without \p why only the minimum matters, so GPUs go first;
 *  - the wide used[] row of a position is read only when this decision
 *    took something there (take > 0): everywhere else it is all zero;
 *  - the allocatable pod count is read only when the free one is not
 *    positive (free <= allocatable, so a positive free count means the
 *    node tracks pods);
 *  - a division only when its quotient can lower the minimum;
 *  - a simple pod set on an untouched scratch (the search of every
 *    decision) goes through the slot cache: a lowest-layer domain whose
 *    nodes' free resources did not change since the same shape was last
 *    computed there (its generation, tgi_node_changed()) keeps its
 *    nslots[], so a decision recomputes only the domains that changed.
 */
/* The pass over pod set \p ps of request \p q: what it asks for (GPUs
 * first when only the minimum counts), its cap, slice and filters. */
static void slot_pass_init(slot_pass *c, const tg_topology *t, const req *q,
			   scratch *s, unsigned ps, uint32_t *why)
{
	const tgi_podset *p = q->g->ps[ps];
	const unsigned stride = t->stride;
	unsigned k, j;

	/* no memset: the slot_req arrays are written up to sr.m only */
	c->sr.m = 0;
	c->sr.pods = false;
	c->sr.pods_want = c->sr.pods_lim = 0;
	c->beyond = false;
	c->t = t;
	c->q = q;
	c->s = s;
	c->ps = ps;
	c->why = why;
	c->simple = simple_podset(p) && !p->ntol && !q->sp_filter;
	c->taken = s->ntouched > 0;
	c->slice = q->slice[t->nlayers];
	c->cap = p->max_per_node;
	c->trim = c->cap || c->slice > 1;
	c->in_tree = q->topo ? TGI_NODE_IN_TREE : 0;
	c->mask = TGI_NODE_UNSCHED | TGI_NODE_TAINTED | c->in_tree;
	for (k = 0; k < q->nres; k++) {
		unsigned r = q->res[k];
		int64_t want = r == TG_RES_PODS ? (p->shape.v[r] ?
						   p->shape.v[r] : 1) :
			       p->shape.v[r];

		if (want <= 0)
			continue;	/* shapes are >= 0 */
		if (r >= stride)
			c->beyond = true;	/* never fits: slots_generic */
		if (r == TG_RES_PODS) {
			/* resolve() lists pods last */
			c->sr.pods = true;
			c->sr.pods_want = want;
			c->sr.pods_lim = INT64_MAX / want;
			continue;
		}
		c->sr.rr[c->sr.m] = r;
		c->sr.wv[c->sr.m] = want;
		c->sr.lim[c->sr.m] = INT64_MAX / want;
		c->sr.m++;
	}
	if (!why) {
		/* the value is a minimum: check the scarce GPUs first, so
		 * that most nodes that take none are out after one test */
		for (j = 1; j < c->sr.m && c->sr.rr[0] != TG_RES_GPU; j++)
			if (c->sr.rr[j] == TG_RES_GPU) {
				unsigned xr = c->sr.rr[0];
				int64_t xw = c->sr.wv[0], xl = c->sr.lim[0];

				c->sr.rr[0] = c->sr.rr[j];
				c->sr.wv[0] = c->sr.wv[j];
				c->sr.lim[0] = c->sr.lim[j];
				c->sr.rr[j] = xr;
				c->sr.wv[j] = xw;
				c->sr.lim[j] = xl;
			}
	}
	/* GPUs asked for: most nodes that take none fail on one byte */
	c->gwant = 0;
	for (j = 0; j < c->sr.m; j++)
		if (c->sr.rr[j] == TG_RES_GPU && c->sr.wv[j] <= 255)
			c->gwant = (uint8_t)c->sr.wv[j];
}

/*
 * node_slots() through the slot cache, for a simple pass over a range that
 * begins with a whole lowest-layer domain: a domain whose stamp is
 * current keeps its cached sum and maximum.
 */
static void node_slots_cached(slot_pass *c, uint32_t lo, uint32_t hi)
{
	const tg_topology *t = c->t;
	scratch *s = c->s;
	slot_key key;
	int64_t sum = 0;
	int32_t mx = 0;
	uint32_t i;
	unsigned j;

	/* the slot cache; unused slot_req entries stay zero in the key */
	memset(&key, 0, sizeof(key));
	key.sr.m = c->sr.m;
	for (j = 0; j < c->sr.m; j++) {
		key.sr.rr[j] = c->sr.rr[j];
		key.sr.wv[j] = c->sr.wv[j];
		key.sr.lim[j] = c->sr.lim[j];
	}
	key.sr.pods = c->sr.pods;
	key.sr.pods_want = c->sr.pods_want;
	key.sr.pods_lim = c->sr.pods_lim;
	key.cap = c->cap;
	key.slice = c->slice;
	key.in_tree = c->in_tree;
	if (!s->ckey_set || s->cgen != t->gen ||
	    memcmp(&key, &s->ckey, sizeof(key))) {
		memset(s->cstamp, 0, s->ndom * sizeof(uint32_t));
		s->ckey = key;
		s->cgen = t->gen;
		s->ckey_set = true;
	}
	i = lo;
	while (i < hi && i < t->ntree) {
		const uint32_t d = t->leaf[t->order[i]];
		const tgi_domain *x = &t->dom[d];
		const uint32_t end = x->hi < hi ? x->hi : hi;

		if (x->lo == i && x->hi <= hi) {
			if (s->cstamp[d] != x->gen + 1) {
				sum = 0;
				mx = 0;
				pass_range(c, i, end, &sum, &mx);
				s->csum[d] = sum;
				s->cmax[d] = mx;
				s->cstamp[d] = x->gen + 1;
			}
		} else {
			pass_range(c, i, end, &sum, &mx);
			s->cstamp[d] = 0;
		}
		i = end;
	}
	if (i < hi)
		pass_range(c, i, hi, &sum, &mx);	/* outside the tree */
}

static void node_slots(const tg_topology *t, const req *q, scratch *s,
		       unsigned ps, uint32_t lo, uint32_t hi, uint32_t *why)
{
	slot_pass c;
	int64_t sum = 0;
	int32_t mx = 0;

	slot_pass_init(&c, t, q, s, ps, why);
	/* the cache only for ranges that begin with a whole lowest-layer
	 * domain (a search, not the preemption's single nodes) */
	if (why || c.taken || !c.simple || c.beyond || !t->nlayers ||
	    lo >= t->ntree || t->dom[t->leaf[t->order[lo]]].lo != lo ||
	    t->dom[t->leaf[t->order[lo]]].hi > hi) {
		pass_range(&c, lo, hi, &sum, &mx);
		cache_forget(t, s, lo, hi);
		return;
	}
	node_slots_cached(&c, lo, hi);
}

/*
 * Offer slots of node \p n for cache key \p k, worked out from scratch
 * (for tgi_place_check(): no shortcut of pass_range() taken).
 */
static int32_t key_slots(const tg_topology *t, const slot_key *k, uint32_t n)
{
	const int64_t *fv = &t->freev[(size_t)n * t->stride];
	int64_t best;
	uint32_t i;

	if (t->flags[n] & TGI_NODE_UNSCHED)
		return 0;
	if (k->in_tree && !(t->flags[n] & TGI_NODE_IN_TREE))
		return 0;
	for (i = t->taint_head[n]; i; i = t->taints[i - 1].next)
		if (t->taints[i - 1].effect != TG_TAINT_PREFER_NO_SCHEDULE)
			return 0;	/* a simple pod set tolerates none */
	best = fit_node(&k->sr, fv, NULL,
			t->alloc[(size_t)n * t->stride + TG_RES_PODS], NULL);
	if (best == INT64_MAX)
		best = TG_MAX_MEMBERS;
	if (k->cap && best > k->cap)
		best = k->cap;
	if (k->slice > 1)
		best -= best % k->slice;
	return (int32_t)(best > TG_MAX_MEMBERS ? TG_MAX_MEMBERS : best);
}

tg_err tgi_place_check(const tg_topology *t, tg_errinfo *ei)
{
	const scratch *s = t->scratch;
	uint32_t d, i;

	if (!s || !s->ckey_set || !t->nlayers || s->ndom < t->ndom)
		return TG_OK;
	for (d = t->layer_lo[t->nlayers - 1]; d < t->layer_hi[t->nlayers - 1];
	     d++) {
		const tgi_domain *x = &t->dom[d];
		int64_t sum = 0;
		int32_t mx = 0;
		bool current = s->cstamp[d] == x->gen + 1 &&
			       s->cgen == t->gen;

		if (!s->cstamp[d])
			continue;
		for (i = x->lo; i < x->hi; i++) {
			int32_t v = s->nslots[i];

			if (current && v != key_slots(t, &s->ckey,
						      t->order[i]))
				return tgi_errf(ei, TG_ESTATE, "slot cache: "
					"node %s holds %d members, the cache "
					"says %d (domain %s)",
					tg_topology_node_name(t, t->order[i]),
					(int)key_slots(t, &s->ckey,
						       t->order[i]),
					(int)v, x->path);
			sum += v;
			if (v > mx)
				mx = v;
		}
		if (sum != s->csum[d] || mx != s->cmax[d])
			return tgi_errf(ei, TG_ESTATE, "slot cache: domain %s "
					"sums %lld (max %d), the cache says "
					"%lld (max %d)", x->path,
					(long long)sum, (int)mx,
					(long long)s->csum[d],
					(int)s->cmax[d]);
	}
	return TG_OK;
}

/* Rolls node slots up into domains below \p top (inclusive). */
static void rollup(const tg_topology *t, const req *q, scratch *s,
		   uint32_t top)
{
	int l;
	uint32_t d, i;
	unsigned top_layer = t->dom[top].layer;
	int first = top_layer == TG_NONE ? 0 : (int)top_layer;

	for (l = (int)t->nlayers - 1; l >= first; l--) {
		unsigned sl = q->slice[l];
		uint32_t lo = t->layer_lo[l], hi = t->layer_hi[l];

		if (top_layer != TG_NONE) {
			/* only domains inside top: a contiguous id range */
			uint32_t a = top, b = top;

			while (t->dom[a].layer < (unsigned)l) {
				a = t->dom[a].child0;
				b = t->dom[b].child0 + t->dom[b].nchild - 1;
			}
			lo = a;
			hi = b + 1;
		}
		for (d = lo; d < hi; d++) {
			int64_t sum = 0;

			if ((unsigned)l == t->nlayers - 1) {
				if (s->cstamp[d])
					sum = s->csum[d];	/* cached */
				else
					for (i = t->dom[d].lo;
					     i < t->dom[d].hi; i++)
						sum += s->nslots[i];
			} else {
				uint32_t c;

				for (c = t->dom[d].child0;
				     c < t->dom[d].child0 + t->dom[d].nchild;
				     c++)
					sum += s->dslots[c];
			}
			if (sl > 1)
				sum -= sum % sl;
			s->dslots[d] = sum;
		}
	}
	if (top == 0) {
		int64_t sum = 0;

		if (t->nlayers)
			for (d = t->layer_lo[0]; d < t->layer_hi[0]; d++)
				sum += s->dslots[d];
		else
			for (i = 0; i < t->ntree; i++)
				sum += s->nslots[i];
		for (i = (uint32_t)t->ntree; i < t->nnodes; i++)
			sum += s->nslots[i];
		s->dslots[0] = sum;
	}
}

static inline int64_t unit_slots(const tg_topology *t, const scratch *s,
				 unsigned level, uint32_t u)
{
	return level >= t->nlayers && level != TG_NONE ? s->nslots[u]
						       : s->dslots[u];
}

/*
 * Bin-pack order of two units at one level: where their children are
 * domains, the fewer of them the fill takes first (s->dneed); then fewer
 * slots, then the fewer slots of each ancestor in turn, then path order
 * (= unit order).
 */
static int pack_cmp(const tg_topology *t, const scratch *s, unsigned level,
		    uint32_t a, uint32_t b)
{
	int64_t sa = unit_slots(t, s, level, a), sb = unit_slots(t, s, level, b);
	uint32_t da, db;

	if (level == s->need_level && level != TG_NONE &&
	    s->dneed[a] != s->dneed[b])
		return s->dneed[a] < s->dneed[b] ? -1 : 1;
	if (sa != sb)
		return sa < sb ? -1 : 1;
	if (level == TG_NONE)
		return 0;
	if (level >= t->nlayers) {
		da = t->leaf[t->order[a]];
		db = t->leaf[t->order[b]];
		if (da == TG_NONE || db == TG_NONE)
			return a < b ? -1 : a > b;
	} else {
		da = t->dom[a].parent;
		db = t->dom[b].parent;
	}
	while (da != db && da && db) {
		if (s->dslots[da] != s->dslots[db])
			return s->dslots[da] < s->dslots[db] ? -1 : 1;
		da = t->dom[da].parent;
		db = t->dom[db].parent;
	}
	return a < b ? -1 : a > b;
}

/* ---- the fill ---- */

static tg_err fill_push(scratch *s, uint32_t pos, uint32_t cnt)
{
	if (tgi_grow(&s->fill, &s->fillcap, 2 * (s->nfill + 1),
		     sizeof(uint32_t)))
		return TG_ENOMEM;
	s->fill[2 * s->nfill] = pos;
	s->fill[2 * s->nfill + 1] = cnt;
	s->nfill++;
	return TG_OK;
}

/* children of a unit at level: [*lo, *hi) units at level+1 */
static void children(const tg_topology *t, unsigned level, uint32_t u,
		     uint32_t *lo, uint32_t *hi)
{
	if (level == TG_NONE && t->nlayers == 0) {
		*lo = 0;
		*hi = (uint32_t)t->nnodes;
		return;
	}
	if (level == t->nlayers - 1 || (level == TG_NONE && !t->nlayers)) {
		*lo = t->dom[u].lo;
		*hi = t->dom[u].hi;
		return;
	}
	*lo = t->dom[u].child0;
	*hi = t->dom[u].child0 + t->dom[u].nchild;
}

static unsigned next_level(const tg_topology *t, unsigned level)
{
	return level == TG_NONE ? (t->nlayers ? 0 : t->nlayers) : level + 1;
}

typedef struct sort_ctx {
	const tg_topology *t;
	const scratch *s;
	unsigned level;
} sort_ctx;

/*
 * Sorts units of one level by \p cmp, a total order (ties go by unit id),
 * so the order is the one any sort gives: insertion sort here for the
 * short child lists of a fill (inlined with the comparator: the fill of
 * a large gang sorts thousands of them), tgi_sort() for long ones.
 */
static inline __attribute__((always_inline)) void
sort_units(const tg_topology *t, const scratch *s, unsigned level,
	   uint32_t *v, uint32_t n, tgi_cmp_fn cmp)
{
	sort_ctx c = { t, s, level };
	uint32_t i, j;

	if (n > 32) {
		tgi_sort(v, n, sizeof(uint32_t), cmp, &c);
		return;
	}
	for (i = 1; i < n; i++) {
		uint32_t x = v[i];

		for (j = i; j > 0 && cmp(&v[j - 1], &x, &c) > 0; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/* Fill order: most slots first, then path order. */
static int desc_cmp(const void *pa, const void *pb, void *ctx)
{
	const sort_ctx *c = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	int64_t sa = unit_slots(c->t, c->s, c->level, a);
	int64_t sb = unit_slots(c->t, c->s, c->level, b);

	if (sa != sb)
		return sa > sb ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* Reverses each run of equal slots in v[0, n): fill order to walk order
 * (the later path first) and back. */
static void runs_reverse(const tg_topology *t, const scratch *s, unsigned cl,
			 uint32_t *v, uint32_t n)
{
	uint32_t i = 0, j, a, b;

	while (i < n) {
		j = i + 1;
		while (j < n && unit_slots(t, s, cl, v[j]) ==
				unit_slots(t, s, cl, v[i]))
			j++;
		for (a = i, b = j - 1; a < b; a++, b--) {
			uint32_t x = v[a];

			v[a] = v[b];
			v[b] = x;
		}
		i = j;
	}
}

/*
 * Chooses the children of a fill of \p k members among the \p n units in
 * \p idx (at level \p cl) and moves them to the front of \p idx, in fill
 * order; returns how many.
 *
 *  - as few children as can hold k: m, the length of the shortest prefix
 *    of the children sorted by slots (most first) that holds k;
 *  - among the sets of m children that hold k, the one whose untouched
 *    children, sorted by slots, are lexicographically the largest: the
 *    largest free domains stay whole (and the waste is the least such a
 *    set allows: the untouched slots decide the used ones).  Greedy in
 *    walk order (most slots first, the later path first among equal
 *    slots): a child stays untouched when the children after it can
 *    still hold the rest with as many children as are left to choose
 *    (the next ones: a window slid along), else it is used;
 *  - fill order: most slots first, then path order; every child is
 *    filled but the last, which takes the rest (at least one member,
 *    as m is minimal).
 *
 * \p idx comes in path order (so that the sort finds equal slots in
 * order).  When the children cannot hold k, or all with room are
 * needed, they are returned as sorted; when one holds k, the tightest
 * (first path among equal slots): neither needs the walk.  O(n log n),
 * the sort.
 */
static uint32_t fill_choose(const tg_topology *t, const scratch *s,
			    unsigned cl, uint32_t *idx, uint32_t n, int64_t k)
{
	uint32_t i, m, used = 0, left, wend;
	int64_t sum = 0, need = k, win = 0;

	sort_units(t, s, cl, idx, n, desc_cmp);	/* path order in */
	for (m = 0; m < n && sum < k; m++) {
		int64_t v = unit_slots(t, s, cl, idx[m]);

		if (v <= 0)
			break;
		sum += v;
	}
	if (sum < k || m == n || unit_slots(t, s, cl, idx[m]) <= 0)
		return m;	/* every child with room is used */
	if (m == 1) {
		/* the tightest child holding k, the first path of its
		 * slots: the last that holds k, back to its run's start */
		for (i = 1; i < n && unit_slots(t, s, cl, idx[i]) >= k; i++)
			;
		for (i--; i > 0 && unit_slots(t, s, cl, idx[i - 1]) ==
				   unit_slots(t, s, cl, idx[i]); i--)
			;
		idx[0] = idx[i];
		return 1;
	}
	runs_reverse(t, s, cl, idx, n);		/* walk order */
	/* win: the slots of idx[i + 1, wend), wend = min(n, i + 1 + left) */
	left = m;
	for (wend = 1; wend < n && wend <= left; wend++)
		win += unit_slots(t, s, cl, idx[wend]);
	for (i = 0; i < n && left > 0; i++) {
		if (!(wend - (i + 1) == left && win >= need)) {
			need -= unit_slots(t, s, cl, idx[i]);
			idx[used++] = idx[i];	/* used <= i */
			left--;
		}
		if (i + 1 < wend)
			win -= unit_slots(t, s, cl, idx[i + 1]);
		while (wend < n && wend < i + 2 + left)
			win += unit_slots(t, s, cl, idx[wend++]);
	}
	runs_reverse(t, s, cl, idx, used);
	return used;
}

/*
 * Spreads \p k members of pod set s->fill_ps over the children
 * idx[0 .. n) (units of level \p cl) for the label spreads at \p cl:
 * one at a time to a child with room where every hard one keeps its
 * skew, the one with the fewest matching pods (of the first such
 * spread) first, then the most room, then path order.  Members that
 * count are added to the counts as they go, so the minimum moves with
 * them.  Writes the members per child into \p got; TG_ESTATE when a
 * member has nowhere to go.
 */
static tg_err spread_split(const tg_topology *t, const req *q,
			   const scratch *s, unsigned cl, const uint32_t *idx,
			   uint32_t n, int64_t k, int64_t *got)
{
	const unsigned ps = s->fill_ps;
	rspread *first = NULL;
	unsigned i;
	uint32_t c;

	for (i = 0; i < q->nsp; i++)
		if (q->sp[i].level == cl &&
		    (!first || (q->sp[i].sp->hard && !first->sp->hard)))
			first = &q->sp[i];
	while (k > 0) {
		uint32_t best = TG_NONE;
		int64_t bkey = 0, broom = 0;

		for (c = 0; c < n; c++) {
			int64_t room = unit_slots(t, s, cl, idx[c]) - got[c];
			uint32_t u = cl >= t->nlayers ? idx[c] :
				     idx[c] - first->lo;
			int64_t key;
			bool ok = true;

			/* no room also for nodes outside the tree (their
			 * position is past the units) */
			if (room <= 0 || u >= first->nunits)
				continue;
			key = first->cnt[u] + (first->self[ps] ? 0 : got[c]);
			for (i = 0; i < q->nsp && ok; i++) {
				const rspread *r = &q->sp[i];
				uint32_t v = cl >= t->nlayers ? idx[c] :
					     idx[c] - r->lo;

				if (r->level == cl && r->sp->hard)
					ok = (int64_t)r->cnt[v] +
					     (r->self[ps] ? 1 : 0) - r->gmin <=
					     (int64_t)r->sp->max_skew;
			}
			if (!ok)
				continue;
			if (best == TG_NONE || key < bkey ||
			    (key == bkey && room > broom)) {
				best = c;
				bkey = key;
				broom = room;
			}
		}
		if (best == TG_NONE)
			return TG_ESTATE;
		got[best]++;
		k--;
		for (i = 0; i < q->nsp; i++)
			if (q->sp[i].level == cl && q->sp[i].self[ps])
				spread_add(&q->sp[i], cl >= t->nlayers ?
					   idx[best] : idx[best] - q->sp[i].lo);
	}
	return TG_OK;
}

/* The shallowest label-spread level below \p cl; TG_NONE when none
 * (bykey spreads have no level). */
static unsigned spread_below(const req *q, unsigned cl)
{
	unsigned i, best = TG_NONE;

	for (i = 0; i < q->nsp; i++)
		if (!q->sp[i].bykey &&
		    (cl == TG_NONE || q->sp[i].level > cl) &&
		    (best == TG_NONE || q->sp[i].level < best))
			best = q->sp[i].level;
	return best;
}

static tg_err fill(const tg_topology *t, const req *q, scratch *s,
		   unsigned level, uint32_t u, int64_t k);

/*
 * Places \p k members inside unit \p u at \p level straight over its
 * descendants at \p sl, a label-spread level more than one below: a
 * spread whose minimum runs over the whole cluster cannot be split one
 * layer at a time (the search gets here only when no domain of the
 * level above \p sl could hold the gang).
 */
static tg_err fill_over(const tg_topology *t, const req *q, scratch *s,
			unsigned level, uint32_t u, unsigned sl, int64_t k)
{
	uint32_t lo, hi, a, b, c, *idx;
	int64_t *got;
	tg_err err;

	if (sl >= t->nlayers) {
		lo = level == TG_NONE ? 0 : t->dom[u].lo;
		hi = level == TG_NONE ? (uint32_t)t->ntree : t->dom[u].hi;
	} else if (level == TG_NONE) {
		lo = t->layer_lo[sl];
		hi = t->layer_hi[sl];
	} else {
		a = b = u;
		while (t->dom[a].layer < sl) {
			a = t->dom[a].child0;
			b = t->dom[b].child0 + t->dom[b].nchild - 1;
		}
		lo = a;
		hi = b + 1;
	}
	idx = tgi_malloc((hi - lo + 1) * sizeof(uint32_t));
	got = tgi_calloc(hi - lo + 1, sizeof(int64_t));
	err = idx && got ? TG_OK : TG_ENOMEM;
	for (c = 0; !err && c < hi - lo; c++)
		idx[c] = lo + c;
	if (!err)
		err = spread_split(t, q, s, sl, idx, hi - lo, k, got);
	for (c = 0; !err && c < hi - lo; c++)
		if (got[c])
			err = fill(t, q, s, sl, idx[c], got[c]);
	tgi_free(idx);
	tgi_free(got);
	return err;
}

static bool spread_at(const req *q, unsigned level)
{
	unsigned i;

	for (i = 0; i < q->nsp; i++)
		if (q->sp[i].level == level)
			return true;
	return false;
}

/*
 * ---- the exact fill: fewest domains at every layer ----
 *
 * A fill of k members inside a domain is judged by its span, the vector
 * (children used, domains used one layer lower, ..., nodes used),
 * compared lexicographically: the fewest children first (as
 * fill_choose()), then the fewest domains at each lower layer in turn,
 * then the fewest nodes.  The fewest grandchildren depend on WHICH
 * children are used and how many members each takes (6 members over
 * spines of 5 free nodes on leaves of 1 and 4, 2 on one leaf and 1:
 * 4 + 2 spans two leaves, 5 + 1 three), so the choice is a knapsack
 * over member counts: a unit's profile P[j] is the least span of j
 * members inside it, and a domain's profile is the min-plus sum of its
 * children's (spans add up over disjoint children, and the
 * lexicographic order is kept by addition, so the least span of a
 * split is the sum of the children's least spans: the result is exact).
 * A lowest switch's profile is the greedy prefix of its nodes, most
 * slots first (exact for one layer).
 *
 * A gang of several pod sets is filled one pod set after another, so a
 * least span for the first could leave the next no room where the
 * previous fill did (and the preemption search, which frees just enough
 * for the whole gang, relies on the fill using what it frees): those
 * gangs keep fill_choose().
 *
 * Where the children are lowest switches and every node with room has
 * the same slots (whole-node members), fill_choose() already gives the
 * least span and is used (same_node_slots()).
 *
 * Spans are packed into 64-bit words (see below): k of 2^(64 / (layers
 * below + 1)) or more falls back to fill_choose() too.
 *
 * The work is about (k + 1) x (sum over the children of min(k, their
 * slots) + 1) per layer below the domain, counted in slice steps; over
 * FILL_EXACT_CELLS the fill of that domain falls back to fill_choose()
 * (fewest children, the largest whole, every chosen child filled but
 * the last: not always the fewest domains below), and the children's
 * fills are tried exactly again at their own size.  At the bound a
 * decision took about 47 us against 13 us with fill_choose() (150
 * members of 4 GPUs over 4 spines of 16 18-node leaves, -O2, 2 vCPUs).
 */
#define FILL_EXACT_CELLS	(1u << 16)
#define SPAN_INF		UINT64_MAX

/*
 * A span is packed into one 64-bit word, w = 64 / (layers below the
 * domain + 1) bits a count, the nodes in the lowest bits and each layer
 * above them in turn: spans then add and compare as integers.  Every
 * count is at most k, so k < 2^w is required (k < 65,536 with three
 * layers below; a deep fabric with a large k falls back to
 * fill_choose(), see fill_exact()).
 */
static unsigned slice_step(const req *q, unsigned level)
{
	return q->slice[level] > 1 ? q->slice[level] : 1;
}

/*
 * One 0/1 knapsack step: folds a child with profile \p c (up to jc
 * members, in steps of g), each use of it counting \p one, into \p p
 * (0..j members, in place, the largest j first).
 */
static void span_fold(uint64_t *p, uint32_t j, const uint64_t *c,
		      uint32_t jc, unsigned g, uint64_t one)
{
	uint32_t a, b;

	for (a = j; a >= g; a--) {
		uint64_t best = p[a];

		for (b = g; b <= jc && b <= a; b += g) {
			uint64_t r = p[a - b], e = c[b];

			if (r != SPAN_INF && e != SPAN_INF &&
			    r + one + e < best)
				best = r + one + e;
		}
		p[a] = best;
	}
}

static void span_empty(uint64_t *p, uint32_t j)
{
	uint32_t a;

	p[0] = 0;
	for (a = 1; a <= j; a++)
		p[a] = SPAN_INF;
}

/*
 * The profile of domain \p v at layer \p lv for 0..j members into
 * \p p (j + 1 spans of \p w bits a count).
 */
static tg_err span_profile(const tg_topology *t, const req *q,
			   const scratch *s, unsigned lv, uint32_t v,
			   uint32_t j, unsigned w, uint64_t *p)
{
	unsigned g;
	uint32_t lo, hi, c, n = 0, jc;
	uint64_t *cp, one;
	tg_err err = TG_OK;

	children(t, lv, v, &lo, &hi);
	if (lv == t->nlayers - 1) {
		/* nodes: the greedy prefix, most slots first */
		int64_t *sl = tgi_malloc((hi - lo + 1) * sizeof(int64_t));
		int64_t sum = 0, tmp;
		uint32_t a, m = 0;

		if (!sl)
			return TG_ENOMEM;
		for (c = lo; c < hi; c++)
			if (s->nslots[c] > 0)
				sl[n++] = s->nslots[c];
		for (a = 1; a < n; a++)	/* insertion sort, most first */
			for (c = a; c > 0 && sl[c - 1] < sl[c]; c--) {
				tmp = sl[c];
				sl[c] = sl[c - 1];
				sl[c - 1] = tmp;
			}
		g = slice_step(q, t->nlayers);
		p[0] = 0;
		for (a = 1; a <= j; a++) {
			while (sum < a && m < n)
				sum += sl[m++];
			p[a] = sum >= a && a % g == 0 ? m : SPAN_INF;
		}
		tgi_free(sl);
		return TG_OK;
	}
	g = slice_step(q, lv + 1);
	one = (uint64_t)1 << (w * (t->nlayers - lv - 1));
	span_empty(p, j);
	cp = tgi_malloc(((size_t)j + 1) * sizeof(uint64_t));
	if (!cp)
		return TG_ENOMEM;
	for (c = lo; c < hi && !err; c++) {
		if (s->dslots[c] <= 0)
			continue;
		jc = (uint32_t)TG_MIN((int64_t)j, s->dslots[c]);
		err = span_profile(t, q, s, lv + 1, c, jc, w, cp);
		if (!err)
			span_fold(p, j, cp, jc, g, one);
	}
	tgi_free(cp);
	return err;
}

/* Suffix tables: sfx + i * (k + 1) holds the least spans of the units
 * ord[i .. n) for 0..k members. */
static void span_suffix(uint64_t *sfx, uint32_t k, const uint64_t *prof,
			const size_t *off, const uint32_t *jc,
			const uint32_t *ord, uint32_t n, unsigned g,
			uint64_t one)
{
	size_t row = (size_t)k + 1;
	uint32_t i;

	span_empty(sfx + (size_t)n * row, k);
	for (i = n; i-- > 0;) {
		memcpy(sfx + (size_t)i * row, sfx + (size_t)(i + 1) * row,
		       row * sizeof(uint64_t));
		span_fold(sfx + (size_t)i * row, k, prof + off[ord[i]],
			  jc[ord[i]], g, one);
	}
}

/*
 * The most members (up to \p rem, in steps of g) unit ord[i] can take
 * with the units after it still reaching the least span sfx[i][rem];
 * 0 when skipping it reaches it too and \p skip allows.
 */
static uint32_t span_take(const uint64_t *sfx, uint32_t k,
			  const uint64_t *prof, const size_t *off,
			  const uint32_t *jc, const uint32_t *ord, uint32_t i,
			  uint32_t rem, unsigned g, uint64_t one, bool skip)
{
	size_t row = (size_t)k + 1;
	uint64_t want = sfx[(size_t)i * row + rem];
	const uint64_t *nx = sfx + (size_t)(i + 1) * row;
	const uint64_t *e = prof + off[ord[i]];
	uint32_t b;

	if (skip && nx[rem] == want)
		return 0;
	for (b = TG_MIN(jc[ord[i]], rem); b >= g; b--)
		if (b % g == 0 && nx[rem - b] != SPAN_INF &&
		    e[b] != SPAN_INF && nx[rem - b] + one + e[b] == want)
			return b;
	return 0;
}

/*
 * Whether every node with room under the lowest switches idx[0 .. n)
 * has the same slots s (whole-node members: 1): then any fill spans
 * ceil(k / s) nodes at least, and fill_choose() (fewest switches, each
 * whole but the last) spans that many, so it is already the least span.
 */
static bool same_node_slots(const tg_topology *t, const scratch *s,
			    const uint32_t *idx, uint32_t n)
{
	int64_t one = 0;
	uint32_t c, i;

	for (c = 0; c < n; c++)
		for (i = t->dom[idx[c]].lo; i < t->dom[idx[c]].hi; i++) {
			if (s->nslots[i] <= 0)
				continue;
			if (!one)
				one = s->nslots[i];
			else if (s->nslots[i] != one)
				return false;
		}
	return true;
}

/*
 * The exact fill's choice (see above) of the children of a fill of
 * \p k members among the \p n units in \p idx (domains at level \p cl,
 * path order in): moves the chosen ones to the front of \p idx in fill
 * order (most slots first, then path order), their members to
 * \p amt, and returns how many; TG_NONE when the work would pass
 * FILL_EXACT_CELLS or the children cannot hold k (the caller then
 * uses fill_choose()).  Ties between spans: the children are walked
 * most slots first, the later path first among equal slots (as
 * fill_choose()), and a child is left untouched whenever the children
 * after it still reach the least span (the largest free children stay
 * whole); the chosen ones are then walked in fill order, each taking
 * the most members that still reach it (every one but the last filled
 * whole where the span allows).
 */
static uint32_t fill_exact(const tg_topology *t, const req *q,
			   const scratch *s, unsigned cl, uint32_t *idx,
			   uint32_t n, int64_t k, int64_t *amt, tg_err *err)
{
	unsigned w = 64 / (t->nlayers - cl + 1), g = slice_step(q, cl);
	uint32_t i, m = 0, used = 0, rem, *jc = NULL, *ord = NULL;
	uint64_t cells = 0, sum = 0;
	uint64_t one = (uint64_t)1 << (w * (t->nlayers - cl));
	size_t *off = NULL, tot = 0, row = (size_t)k + 1;
	uint64_t *prof = NULL, *sfx = NULL;
	uint32_t ret = TG_NONE;

	*err = TG_OK;
	/* a spread below splits members instead of packing them: the span
	 * model does not hold there (as need_orders()) */
	if (k <= 0 || k > FILL_EXACT_CELLS || k % g || q->g->nps > 1 ||
	    (q->spread_level != TG_NONE && q->spread_level > cl) || q->nsp ||
	    (w < 64 && (uint64_t)k >> w))
		return TG_NONE;
	for (i = 0; i < n; i++)
		if (s->dslots[idx[i]] > 0) {
			idx[m++] = idx[i];	/* path order kept */
			/* member counts, not slice steps: the fold and
			 * the tables run per member */
			cells += (uint64_t)TG_MIN(k, s->dslots[idx[i]]) + 1;
			sum += (uint64_t)s->dslots[idx[i]];
		}
	cells *= ((uint64_t)k + 1) * (t->nlayers - cl);
	if (sum < (uint64_t)k || cells > FILL_EXACT_CELLS ||
	    (cl == t->nlayers - 1 && g == 1 && same_node_slots(t, s, idx, m)))
		return TG_NONE;
	n = m;
	sort_units(t, s, cl, idx, n, desc_cmp);
	runs_reverse(t, s, cl, idx, n);		/* walk order */
	jc = tgi_malloc((n + 1) * sizeof(uint32_t));
	ord = tgi_malloc((n + 1) * sizeof(uint32_t));
	off = tgi_malloc((n + 1) * sizeof(size_t));
	if (!jc || !ord || !off)
		goto fail;
	for (i = 0; i < n; i++) {
		jc[i] = (uint32_t)TG_MIN(k, s->dslots[idx[i]]);
		off[i] = tot;
		tot += (size_t)jc[i] + 1;
		ord[i] = i;
	}
	prof = tgi_malloc((tot + 1) * sizeof(uint64_t));
	sfx = tgi_malloc(((size_t)n + 1) * row * sizeof(uint64_t));
	if (!prof || !sfx)
		goto fail;
	for (i = 0; i < n && !*err; i++)
		*err = span_profile(t, q, s, cl, idx[i], jc[i], w,
				    prof + off[i]);
	if (*err)
		goto out;
	span_suffix(sfx, (uint32_t)k, prof, off, jc, ord, n, g, one);
	if (sfx[k] == SPAN_INF)
		goto out;			/* slices: none reaches k */
	/* which children: the largest left whole where the span allows */
	rem = (uint32_t)k;
	for (i = 0; i < n && rem > 0; i++) {
		uint32_t b = span_take(sfx, (uint32_t)k, prof, off, jc, ord,
				       i, rem, g, one, true);

		if (b) {
			ord[used++] = i;
			rem -= b;
		}
	}
	/* how many each: fill order over the chosen ones */
	for (i = 1; i < used; i++) {		/* walk -> fill order */
		uint32_t x = ord[i], j;

		for (j = i; j > 0 &&
		     desc_cmp(&idx[ord[j - 1]], &idx[x],
			      &(sort_ctx){ t, s, cl }) > 0; j--)
			ord[j] = ord[j - 1];
		ord[j] = x;
	}
	span_suffix(sfx, (uint32_t)k, prof, off, jc, ord, used, g, one);
	rem = (uint32_t)k;
	for (i = 0; i < used; i++) {
		amt[i] = span_take(sfx, (uint32_t)k, prof, off, jc, ord, i,
				   rem, g, one, false);
		rem -= (uint32_t)amt[i];
		ord[i] = idx[ord[i]];
	}
	memcpy(idx, ord, used * sizeof(uint32_t));
	ret = used;
	goto out;
fail:
	*err = TG_ENOMEM;
out:
	tgi_free(sfx);
	tgi_free(prof);
	tgi_free(off);
	tgi_free(ord);
	tgi_free(jc);
	return ret;
}

/*
 * Fills the children idx[0 .. n) (units at \p cl, path order) with up to
 * *rem members: fill_exact(), or fill_choose() when it declines;
 * *rem keeps what they could not hold.
 */
static tg_err fill_children(const tg_topology *t, const req *q, scratch *s,
			    unsigned cl, uint32_t *idx, uint32_t n,
			    int64_t *rem)
{
	int64_t *amt = NULL;
	uint32_t c, m = TG_NONE;
	tg_err err = TG_OK;

	if (cl < t->nlayers && n > 1) {
		uint32_t lo = idx[0];

		amt = tgi_malloc(n * sizeof(int64_t));
		if (!amt)
			return TG_ENOMEM;
		m = fill_exact(t, q, s, cl, idx, n, *rem, amt, &err);
		if (m == TG_NONE)
			for (c = 0; c < n; c++)
				idx[c] = lo + c;	/* path order again */
	}
	if (!err && m != TG_NONE) {
		for (c = 0; c < m && !err; c++) {
			err = fill(t, q, s, cl, idx[c], amt[c]);
			*rem -= amt[c];
		}
	} else if (!err) {
		n = fill_choose(t, s, cl, idx, n, *rem);
		for (c = 0; c < n && *rem > 0 && !err; c++) {
			int64_t take = TG_MIN(*rem, unit_slots(t, s, cl,
								idx[c]));

			err = fill(t, q, s, cl, idx[c], take);
			*rem -= take;
		}
	}
	tgi_free(amt);
	return err;
}

/*
 * Places \p k members inside unit \p u at \p level: where the children
 * are domains, the least span, layer by layer (fill_exact(); over its
 * budget, or over nodes, as few children as can hold them, and among
 * those sets the one that keeps the largest free children whole:
 * fill_choose()); each chosen child is filled the same way in turn.
 * With spread at the children's level, members go round robin to the
 * children with the fewest so far.
 */
static tg_err fill(const tg_topology *t, const req *q, scratch *s,
		   unsigned level, uint32_t u, int64_t k)
{
	unsigned cl;
	uint32_t lo, hi, c, *idx, n;
	int64_t rem = k;
	tg_err err = TG_OK;

	if (k <= 0)
		return TG_OK;
	if (level != TG_NONE && level >= t->nlayers)
		return fill_push(s, u, (uint32_t)k);
	/* the root's children: layer-0 domains (the nodes outside the tree
	 * are taken last, below); without layers, the nodes */
	cl = next_level(t, level);
	if (q->nsp && q->spread_level == TG_NONE && !spread_at(q, cl)) {
		unsigned sl = spread_below(q, cl);

		if (sl != TG_NONE)
			return fill_over(t, q, s, level, u, sl, k);
	}
	children(t, level, u, &lo, &hi);
	n = hi - lo;
	idx = tgi_malloc((n ? n : 1) * sizeof(uint32_t));
	if (!idx)
		return TG_ENOMEM;
	for (c = 0; c < hi - lo; c++)
		idx[c] = lo + c;

	if (q->nsp && spread_at(q, cl)) {
		/* label spreads: members one at a time, skews kept */
		int64_t *got = tgi_calloc(n ? n : 1, sizeof(int64_t));

		err = got ? spread_split(t, q, s, cl, idx, n, k, got) :
			    TG_ENOMEM;
		for (c = 0; c < n && !err; c++)
			if (got[c])
				err = fill(t, q, s, cl, idx[c], got[c]);
		tgi_free(got);
		tgi_free(idx);
		return err;
	}
	if (q->spread_level != TG_NONE && cl == q->spread_level) {
		/* spread: water-fill the children */
		int64_t *cnt = tgi_calloc(n, sizeof(int64_t));
		int64_t mn, mx;

		if (!cnt) {
			tgi_free(idx);
			return TG_ENOMEM;
		}
		while (rem > 0) {
			uint32_t best = TG_NONE;

			for (c = 0; c < hi - lo; c++) {
				int64_t room = unit_slots(t, s, cl, idx[c]) -
					       cnt[c];

				if (room <= 0)
					continue;
				if (best == TG_NONE || cnt[c] < cnt[best] ||
				    (cnt[c] == cnt[best] &&
				     room > unit_slots(t, s, cl, idx[best]) -
					    cnt[best]))
					best = c;
			}
			if (best == TG_NONE)
				break;
			cnt[best]++;
			rem--;
		}
		mn = INT64_MAX;
		mx = 0;
		for (c = 0; c < hi - lo; c++) {
			if (unit_slots(t, s, cl, idx[c]) <= 0)
				continue;
			if (cnt[c] < mn)
				mn = cnt[c];
			if (cnt[c] > mx)
				mx = cnt[c];
		}
		if (rem > 0 || (q->spread_hard && mn != INT64_MAX &&
				mx - mn > (int64_t)q->spread_skew))
			err = TG_ESTATE;
		for (c = 0; c < hi - lo && !err; c++)
			if (cnt[c])
				err = fill(t, q, s, cl, idx[c], cnt[c]);
		tgi_free(cnt);
		tgi_free(idx);
		return err;
	}

	err = fill_children(t, q, s, cl, idx, n, &rem);
	tgi_free(idx);
	if (!err && rem > 0 && level == TG_NONE && !q->topo &&
	    t->ntree < t->nnodes) {
		/* unconstrained gangs may use nodes outside the tree */
		uint32_t i;

		for (i = (uint32_t)t->ntree; i < t->nnodes && rem > 0; i++) {
			int64_t take = TG_MIN(rem, s->nslots[i]);

			if (take > 0) {
				err = fill_push(s, i, (uint32_t)take);
				rem -= take;
			}
		}
	}
	if (!err && rem > 0)
		err = TG_ESTATE;
	return err;
}

/* ---- spreads over a key that is no level (bykey) ---- */

/* Whether one more member of pod set \p ps on node \p n keeps every
 * hard bykey spread's skew, the members placed so far counted. */
static bool key_fits(const req *q, unsigned ps, uint32_t n)
{
	unsigned i;

	for (i = 0; i < q->nsp; i++) {
		const rspread *r = &q->sp[i];
		uint32_t u;

		if (!r->bykey)
			continue;
		u = r->unit_of[n];
		if (u == TG_NONE)
			return false;
		if (r->elig[u] && (int64_t)r->cnt[u] + (r->self[ps] ? 1 : 0) -
				  r->gmin > (int64_t)r->sp->max_skew)
			return false;
	}
	return true;
}

/* Whether positions \p x and \p y have the same unit of every bykey
 * spread (key_fits() and the counts read alike for both). */
static bool same_sig(const tg_topology *t, const req *q, uint32_t x,
		     uint32_t y)
{
	unsigned i;

	for (i = 0; i < q->nsp; i++)
		if (q->sp[i].bykey && q->sp[i].unit_of[t->order[x]] !=
				      q->sp[i].unit_of[t->order[y]])
			return false;
	return true;
}

typedef struct kctx {
	const tg_topology *t;
	const req *q;
} kctx;

/* Positions by their unit of every bykey spread, then position. */
static int sig_cmp(const void *a, const void *b, void *ctx)
{
	const kctx *c = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	unsigned i;

	for (i = 0; i < c->q->nsp; i++) {
		const rspread *r = &c->q->sp[i];
		uint32_t ux, uy;

		if (!r->bykey)
			continue;
		ux = r->unit_of[c->t->order[x]];
		uy = r->unit_of[c->t->order[y]];
		if (ux != uy)
			return ux < uy ? -1 : 1;
	}
	return x < y ? -1 : x > y;
}

/*
 * The positions [lo, hi) whose node has every bykey spread's key (one
 * without takes no member: key_fits()) into \p pos (room for hi - lo),
 * grouped by signature when \p by_sig, else each a group of its own (no
 * sort: cheaper for a few members, or as many groups as nodes); the
 * groups in \p grp (as many), *\p ngrp of them, each group's positions
 * in position order.
 */
static void key_groups(const tg_topology *t, const req *q, uint32_t lo,
		       uint32_t hi, bool by_sig, uint32_t *pos, kgroup *grp,
		       uint32_t *ngrp)
{
	kctx c = { t, q };
	uint32_t p, m = 0, i;
	unsigned j;

	for (p = lo; p < hi; p++) {
		for (j = 0; j < q->nsp; j++)
			if (q->sp[j].bykey &&
			    q->sp[j].unit_of[t->order[p]] == TG_NONE)
				break;
		if (j == q->nsp)
			pos[m++] = p;
	}
	if (by_sig && m > 1)
		tgi_sort(pos, m, sizeof(uint32_t), sig_cmp, &c);
	*ngrp = 0;
	for (i = 0; i < m; i++) {
		if (i && by_sig && same_sig(t, q, pos[i - 1], pos[i]))
			continue;
		if (*ngrp)
			grp[*ngrp - 1].hi = i;
		grp[*ngrp].lo = grp[*ngrp].cur = i;
		grp[(*ngrp)++].hi = m;
	}
}

/* fill_key()'s order among nodes whose domains hold as many matching
 * pods: a node already taken (\p ga members) first, then position. */
static bool taken_first(int64_t ga, uint32_t a, int64_t gb, uint32_t b)
{
	if ((ga > 0) != (gb > 0))
		return ga > 0;
	return a < b;
}

/*
 * Places \p k members of pod set s->fill_ps inside unit \p u at \p level
 * one at a time over its nodes, for a gang whose members count toward a
 * bykey spread (q->key_fill: the key's domains cut across the tree, so
 * fill() cannot split members over them): each member goes to a node
 * with room where every bykey spread keeps its skew with the members
 * before it counted, the node whose domain holds the fewest matching
 * pods (of the first such spread) first, then a node already taken,
 * then position order.  TG_ESTATE when a member has nowhere to go.
 * More than KEY_SCAN_MAX members over at least twice as many nodes as
 * the bykey spreads' values combine to, the nodes are grouped by their
 * domains (alike for the skew and the count: key_groups()); within a
 * group members go in position order, so each member looks at one node
 * a group (the group's first with room): O(nodes log nodes + members x
 * groups), not members x nodes, which is bounded (TG_MAX_KEY_FILL,
 * key_work()).  The decisions are the same either way.
 */
static tg_err fill_key(const tg_topology *t, const req *q, scratch *s,
		       unsigned level, uint32_t u, int64_t k)
{
	const unsigned ps = s->fill_ps;
	rspread *first = NULL;
	uint32_t lo, hi, p, best, ng, gi, *pos;
	int64_t *got;
	kgroup *grp;
	unsigned i;
	tg_err err = TG_OK;

	if (level == TG_NONE) {
		lo = 0;
		hi = (uint32_t)t->nnodes;
	} else if (level >= t->nlayers) {
		lo = u;
		hi = u + 1;
	} else {
		lo = t->dom[u].lo;
		hi = t->dom[u].hi;
	}
	for (i = 0; i < q->nsp && !first; i++)
		if (q->sp[i].bykey)
			first = &q->sp[i];
	got = tgi_calloc(hi - lo + 1, sizeof(int64_t));
	pos = tgi_malloc((hi - lo + 1) * sizeof(uint32_t));
	grp = tgi_malloc((hi - lo + 1) * sizeof(kgroup));
	if (!got || !pos || !grp) {
		err = TG_ENOMEM;
		goto out;
	}
	key_groups(t, q, lo, hi, k > KEY_SCAN_MAX &&
		   (uint64_t)q->key_ngroups * 2 <= hi - lo, pos, grp, &ng);
	for (; k > 0; k--) {
		int64_t bkey = 0;

		best = TG_NONE;
		for (gi = 0; gi < ng; gi++) {
			kgroup *g = &grp[gi];
			int64_t key;
			uint32_t n;

			while (g->cur < g->hi &&
			       s->nslots[pos[g->cur]] -
			       got[pos[g->cur] - lo] <= 0)
				g->cur++;
			if (g->cur == g->hi)
				continue;
			p = pos[g->cur];
			n = t->order[p];
			if (!key_fits(q, ps, n))
				continue;
			key = first->cnt[first->unit_of[n]];
			if (best == TG_NONE || key < bkey ||
			    (key == bkey && taken_first(got[p - lo], p,
							got[best - lo],
							best))) {
				best = p;
				bkey = key;
			}
		}
		if (best == TG_NONE) {
			err = TG_ESTATE;
			goto out;
		}
		got[best - lo]++;
		for (i = 0; i < q->nsp; i++)
			if (q->sp[i].bykey && q->sp[i].self[ps])
				spread_add(&q->sp[i],
					   q->sp[i].unit_of[t->order[best]]);
	}
	for (p = lo; p < hi && !err; p++)
		if (got[p - lo])
			err = fill_push(s, p, (uint32_t)got[p - lo]);
out:
	tgi_free(grp);
	tgi_free(pos);
	tgi_free(got);
	return err;
}

/* ---- bookkeeping of one attempt ---- */

static void take_fill(const tg_topology *t, const req *q, scratch *s,
		      unsigned ps)
{
	const tgi_podset *p = q->g->ps[ps];
	size_t f;
	unsigned r;

	for (f = 0; f < s->nfill; f++) {
		uint32_t pos = s->fill[2 * f], cnt = s->fill[2 * f + 1];

		if (!s->take[pos])
			s->touched[s->ntouched++] = pos;
		s->take[pos] += cnt;
		for (r = 0; r < t->nres && r < s->width; r++)
			s->used[(size_t)pos * s->width + r] +=
				(r == TG_RES_PODS && !p->shape.v[r] ? 1 :
				 p->shape.v[r]) * (int64_t)cnt;
	}
}

static void reset_taken(scratch *s)
{
	size_t i;

	for (i = 0; i < s->ntouched; i++) {
		uint32_t pos = s->touched[i];

		s->take[pos] = 0;
		s->gpu_used[pos] = 0;
		memset(&s->used[(size_t)pos * s->width], 0,
		       s->width * sizeof(int64_t));
	}
	s->ntouched = 0;
}

/* Fill record of every pod set of one successful attempt. */
typedef struct attempt {
	uint32_t *pairs[TG_MAX_PODSETS];
	size_t npairs[TG_MAX_PODSETS];
} attempt;

static void attempt_free(attempt *a)
{
	unsigned i;

	for (i = 0; i < TG_MAX_PODSETS; i++) {
		tgi_free(a->pairs[i]);
		a->pairs[i] = NULL;
		a->npairs[i] = 0;
	}
}

static tg_err save_fill(scratch *s, attempt *a, unsigned ps)
{
	a->pairs[ps] = tgi_malloc((s->nfill ? s->nfill : 1) * 2 *
				  sizeof(uint32_t));
	if (!a->pairs[ps])
		return TG_ENOMEM;
	memcpy(a->pairs[ps], s->fill, s->nfill * 2 * sizeof(uint32_t));
	a->npairs[ps] = s->nfill;
	return TG_OK;
}

/*
 * Tries to place the whole gang inside unit \p u at \p level: the main
 * pod set first, then the others on what is left.  TG_ESTATE when it
 * does not fit.  On TG_OK, \p a holds the fills.
 */
static tg_err attempt_unit(tg_topology *t, const req *q, scratch *s,
			   unsigned level, uint32_t u, attempt *a)
{
	const tg_gang *g = q->g;
	unsigned i, ps;
	uint32_t lo, hi, top;
	tg_err err;

	reset_taken(s);
	spread_reset(q);
	for (i = 0; i < g->nps; i++) {
		ps = i == 0 ? q->main : (i <= q->main ? i - 1 : i);
		s->fill_ps = ps;
		if (i > 0) {
			/* recompute slots for this pod set inside u */
			if (level == TG_NONE) {
				lo = 0;
				hi = (uint32_t)t->nnodes;
				top = 0;
			} else if (level >= t->nlayers) {
				lo = u;
				hi = u + 1;
				top = TG_NONE;
			} else {
				lo = t->dom[u].lo;
				hi = t->dom[u].hi;
				top = u;
			}
			node_slots(t, q, s, ps, lo, hi, NULL);
			if (top != TG_NONE)
				rollup(t, q, s, top);
		}
		s->nfill = 0;
		if (unit_slots(t, s, level, u) < g->ps[ps]->count)
			return TG_ESTATE;
		err = q->key_fill ? fill_key(t, q, s, level, u,
					     g->ps[ps]->count) :
				    fill(t, q, s, level, u, g->ps[ps]->count);
		if (err)
			return err;
		take_fill(t, q, s, ps);
		if ((err = save_fill(s, a, ps)))
			return err;
	}
	return TG_OK;
}

/* ---- messages ---- */

/* The request's non-fatal notes, each "; ..." */
static void note_text(const req *q, tg_buf *b)
{
	unsigned i;

	for (i = 0; i < q->nignored; i++)
		tg_buf_addf(b, "; soft spread on unknown layer '%s' ignored",
			     q->g->spread[q->ignored[i]].layer);
}

static void why_text(const tg_topology *t, const uint32_t *why,
		     tg_buf *b)
{
	static const char *const words[] = {
		"unschedulable", "untolerated taint",
		"not matching the node selector",
		"not matching node affinity",
		"failing pod (anti-)affinity",
		"missing topology labels",
		"in a domain over the maximum skew",
		"without a hard spread's topology key"
	};
	unsigned i;
	bool first = true;

	for (i = 0; i < NWHY; i++) {
		if (!why[i])
			continue;
		tg_buf_addf(b, "%s%u ", first ? "" : ", ", why[i]);
		if (i < WHY_RES0)
			tg_buf_adds(b, words[i]);
		else
			tg_buf_addf(b, "insufficient %s",
				     t->res_name[i - WHY_RES0]);
		first = false;
	}
}

/* "SpineLayer/spine-0: 3, SpineLayer/spine-1: 3" for the units of a level. */
static void level_list(const tg_topology *t, const scratch *s,
		       unsigned level, uint32_t lo, uint32_t hi, tg_buf *b)
{
	uint32_t u, shown = 0, total = hi - lo;
	const unsigned max_shown = 12;
	uint32_t *idx;

	idx = tgi_malloc((total ? total : 1) * sizeof(uint32_t));
	if (!idx) {
		b->err = TG_ENOMEM;
		return;
	}
	for (u = 0; u < total; u++)
		idx[u] = lo + u;
	/* most slots first when the list is long, path order otherwise */
	if (total > max_shown) {
		uint32_t i, j;

		for (i = 0; i < max_shown; i++)
			for (j = i + 1; j < total; j++)
				if (unit_slots(t, s, level, idx[j]) >
				    unit_slots(t, s, level, idx[i]) ||
				    (unit_slots(t, s, level, idx[j]) ==
				     unit_slots(t, s, level, idx[i]) &&
				     idx[j] < idx[i])) {
					uint32_t x = idx[i];

					idx[i] = idx[j];
					idx[j] = x;
				}
	}
	for (u = 0; u < total && shown < max_shown; u++, shown++) {
		tg_buf_adds(b, shown ? ", " : "");
		unit_name(t, level, idx[u], b, true);
		tg_buf_addf(b, ": %lld", (long long)
			     unit_slots(t, s, level, idx[u]));
	}
	if (total > shown)
		tg_buf_addf(b, " and %u more", total - shown);
	tgi_free(idx);
}

static void unit_range(const tg_topology *t, const req *q, unsigned level,
		       uint32_t *lo, uint32_t *hi);

/* ---- the decision ---- */

static tg_err decision_new(const tg_gang *g, tg_decision **out)
{
	tg_decision *d = tgi_calloc(1, sizeof(*d));

	if (!d)
		return TG_ENOMEM;
	d->gang = tgi_strdup(g->name);
	if (!d->gang) {
		tgi_free(d);
		return TG_ENOMEM;
	}
	d->status = TG_STATUS_UNSCHEDULABLE;
	*out = d;
	return TG_OK;
}

static tg_err set_message(tg_decision *d, tg_buf *b)
{
	char *m = tg_buf_take_cut(b);

	if (!m)
		return TG_ENOMEM;
	tgi_free(d->message);
	d->message = m;
	return TG_OK;
}

/*
 * "<gang>-<podset>-<i>" unless the member is named; NULL when longer than
 * 4 * TG_MAX_NAME bytes or out of memory.  Once per member, so no printf.
 */
static char *member_name(const tg_gang *g, unsigned ps, unsigned i)
{
	const tgi_podset *p = g->ps[ps];
	char digits[16], *d;
	size_t lg, lp, ld = 0, len;
	unsigned v = i;

	if (p->members[i])
		return tgi_strdup(p->members[i]);
	do {
		digits[sizeof(digits) - 1 - ld++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	lg = strlen(g->name);
	lp = strlen(p->name);
	len = lg + 1 + lp + 1 + ld;
	if (len > 4 * TG_MAX_NAME)
		return NULL;
	d = tgi_malloc(len + 1);
	if (!d)
		return NULL;
	memcpy(d, g->name, lg);
	d[lg] = '-';
	memcpy(d + lg + 1, p->name, lp);
	d[lg + 1 + lp] = '-';
	memcpy(d + lg + lp + 2, digits + sizeof(digits) - ld, ld);
	d[len] = '\0';
	return d;
}

/*
 * tgi_pick_gpus() on node \p n, short-cut when the member takes exactly
 * the node's free GPUs: whatever the islands (tightest island, or the
 * fullest ones first) the picker then returns them all.
 */
static uint64_t pick_gpus(const tg_topology *t, uint32_t n, uint64_t free,
			  unsigned want)
{
	const unsigned ng = t->ngpus[n];
	const uint64_t all = ng >= 64 ? ~0ull : (1ull << ng) - 1;

	if (!(free & ~all) && (unsigned)__builtin_popcountll(free) == want)
		return free;
	return tgi_pick_gpus(t->layouts[t->layout[n]], ng, free, want);
}

/* Turns the fills of an attempt into placements with ranks and GPUs. */
static tg_err build_placements(tg_topology *t, const req *q, scratch *s,
			       const attempt *a, tg_decision *d)
{
	const tg_gang *g = q->g;
	unsigned ps, rank = 0, i;
	size_t f;

	d->pl = tgi_calloc(g->nmembers, sizeof(*d->pl));
	d->names = tgi_calloc(g->nmembers, sizeof(char *));
	if (!d->pl || !d->names)
		return TG_ENOMEM;
	reset_taken(s);
	for (ps = 0; ps < g->nps; ps++) {
		const tgi_podset *p = g->ps[ps];
		unsigned want = p->shape.v[TG_RES_GPU] > TG_MAX_GPUS ?
				TG_MAX_GPUS : (unsigned)p->shape.v[TG_RES_GPU];

		i = 0;
		for (f = 0; f < a->npairs[ps]; f++) {
			uint32_t pos = a->pairs[ps][2 * f];
			uint32_t cnt = a->pairs[ps][2 * f + 1], m;
			uint32_t n = t->order[pos];

			if (!s->take[pos])
				s->touched[s->ntouched++] = pos;
			s->take[pos] = 1;
			for (m = 0; m < cnt; m++, i++, rank++) {
				tg_placement *pl = &d->pl[rank];
				uint64_t gp = 0;

				if (want && t->ngpus[n])
					gp = pick_gpus(t, n, t->gpu_free[n] &
						       ~s->gpu_used[pos],
						       want);
				s->gpu_used[pos] |= gp;
				d->names[rank] = member_name(g, ps, i);
				if (!d->names[rank])
					return TG_ENOMEM;
				d->npl = rank + 1;
				pl->pod = d->names[rank];
				pl->podset = ps;
				pl->rank = rank;
				pl->node = n;
				pl->gpus = gp;
			}
		}
	}
	reset_taken(s);
	return TG_OK;
}

/* The lowest domain holding every placement, as a level and unit. */
static void placement_lca(const tg_topology *t, const tg_decision *d,
			  unsigned *level, uint32_t *unit)
{
	unsigned i;
	int l;
	uint32_t n0 = d->pl[0].node;
	bool one_node = true;

	for (i = 1; i < d->npl; i++)
		if (d->pl[i].node != n0)
			one_node = false;
	if (one_node) {
		*level = t->nlayers;
		*unit = t->pos[n0];
		return;
	}
	for (i = 0; i < d->npl; i++)
		if (t->leaf[d->pl[i].node] == TG_NONE) {
			*level = TG_NONE;
			*unit = 0;
			return;
		}
	for (l = (int)t->nlayers - 1; l >= 0; l--) {
		uint32_t a = ancestor(t, n0, (unsigned)l);
		bool same = true;

		for (i = 1; i < d->npl && same; i++)
			same = ancestor(t, d->pl[i].node, (unsigned)l) == a;
		if (same) {
			*level = (unsigned)l;
			*unit = a;
			return;
		}
	}
	*level = TG_NONE;
	*unit = 0;
}

/* "; soft spread on unknown layer 'K' ignored" for each label spread so. */
static void sspread_notes(const req *q, tg_buf *b)
{
	unsigned i;

	for (i = 0; i < q->nsp_ignored; i++)
		tg_buf_addf(b, "; soft spread on unknown layer '%s' ignored",
			     q->g->sspread[q->sp_ignored[i]].layer);
}

/*
 * "; bin-pack: LAYER/PATH offers N slots (least waste among M
 * candidates; the next few: slots)" for a single pod set placed at
 * \p level among several candidates; where the candidates' fewest
 * children (need_orders()) differ, so that they decided, it names them:
 * "takes 2 of its CHILD domains and offers N slots (fewest CHILD
 * domains, then least waste, among M candidates; PATH: N slots on 5,
 * ...)".
 */
static void binpack_text(const tg_topology *t, const req *q, const scratch *s,
			 unsigned level, tg_buf *b)
{
	const int64_t k = q->g->ps[q->main]->count;
	const char *cl = "";
	uint32_t lo, hi, u, chosen = TG_NONE, ncand = 0, shown = 0;
	bool need = false;

	unit_range(t, q, level, &lo, &hi);
	for (u = lo; u < hi; u++)
		if (unit_slots(t, s, level, u) >= k &&
		    (ncand++, chosen == TG_NONE ||
		     pack_cmp(t, s, level, u, chosen) < 0))
			chosen = u;
	if (ncand <= 1)
		return;
	for (u = lo; u < hi && s->need_level == level; u++)
		if (unit_slots(t, s, level, u) >= k &&
		    s->dneed[u] != s->dneed[chosen])
			need = true;
	if (need)
		cl = t->layer_name[level + 1];
	tg_buf_addf(b, "; bin-pack: %s/%s ", t->layer_name[level],
		     t->dom[chosen].path);
	if (need)
		tg_buf_addf(b, "takes %u of its %s domains and ",
			     s->dneed[chosen], cl);
	tg_buf_addf(b, "offers %lld slots (", (long long)
		     unit_slots(t, s, level, chosen));
	if (need)
		tg_buf_addf(b, "fewest %s domains, then ", cl);
	tg_buf_addf(b, "least waste%s among %u candidates; ",
		     need ? "," : "", ncand);
	for (u = lo; u < hi && shown < 3; u++) {
		if (u == chosen || unit_slots(t, s, level, u) < k)
			continue;
		tg_buf_addf(b, "%s%s: %lld%s", shown++ ? ", " : "",
			     t->dom[u].path, (long long)
			     unit_slots(t, s, level, u), need ? " slots" : "");
		if (need)
			tg_buf_addf(b, " on %u", s->dneed[u]);
	}
	if (ncand - 1 > shown)
		tg_buf_addf(b, " and %u more", ncand - 1 - shown);
	tg_buf_adds(b, ")");
}

static tg_err describe_success(tg_topology *t, const req *q, tg_decision *d,
			       unsigned found_level, const scratch *s)
{
	unsigned level, i, nnodes = 0;
	uint32_t unit;
	tg_buf b;
	tg_err err;

	placement_lca(t, d, &level, &unit);
	d->lca_level = level;
	tg_buf_init(&b, TGI_MAX_DOMAIN);
	unit_name(t, level, unit, &b, true);
	if (!(d->domain = tg_buf_take(&b)))
		return TG_ENOMEM;
	d->bw = level == TG_NONE ? t->root_bw : t->layer_bw[level];
	for (i = 0; i < d->npl; i++)
		if (i == 0 || d->pl[i].node != d->pl[i - 1].node)
			nnodes++;
	tg_buf_init(&b, TGI_MAX_MESSAGE);
	tg_buf_addf(&b, "placed %u member%s on %u node%s in %s", d->npl,
		     d->npl == 1 ? "" : "s", nnodes, nnodes == 1 ? "" : "s",
		     d->domain);
	sspread_notes(q, &b);
	if (q->prefer != TG_NONE && found_level != TG_NONE &&
	    found_level < q->prefer) {
		tg_buf_addf(&b, "; no %s domain could hold them, so the "
			     "gang escalated to %s", level_name(t, q->prefer),
			     level_name(t, found_level));
	} else if (q->prefer != TG_NONE && found_level == TG_NONE) {
		tg_buf_addf(&b, "; no %s domain could hold them, so the "
			     "gang spans the cluster",
			     level_name(t, q->prefer));
	}
	if (q->g->nps == 1 && found_level != TG_NONE &&
	    found_level < t->nlayers)
		binpack_text(t, q, s, found_level, &b);
	tg_buf_addf(&b, "; estimated all-reduce bandwidth %g Gbit/s",
		     d->bw);
	note_text(q, &b);
	err = set_message(d, &b);
	return err;
}

/*
 * "; topology spread on '<key>' (maxSkew 1, DoNotSchedule) over pods
 * matching its selector in namespace ns: SpineLayer/s1: 1, ...
 * (minimum 0 over 3 eligible domains)" for each hard label spread.
 */
static void spread_text(const tg_topology *t, const req *q, tg_buf *b)
{
	const unsigned max_shown = 12;
	unsigned i;
	uint32_t u, shown;

	for (i = 0; i < q->nsp; i++) {
		const rspread *r = &q->sp[i];

		if (!r->sp->hard)
			continue;
		tg_buf_addf(b, "; topology spread on '%s' (maxSkew %u, "
			     "DoNotSchedule", r->sp->layer, r->sp->max_skew);
		if (r->sp->min_domains)
			tg_buf_addf(b, ", minDomains %u",
				     r->sp->min_domains);
		tg_buf_addf(b, ") counting pods in namespace '%s' that "
			     "match its selector: ", r->sp->ns);
		if (r->bykey && !r->nunits)
			tg_buf_adds(b, "no node carries the key");
		for (u = 0, shown = 0; u < r->nunits && shown < max_shown;
		     u++) {
			if (!r->elig[u])
				continue;
			tg_buf_adds(b, shown++ ? ", " : "");
			if (r->bykey)
				tg_buf_addf(b, "%s=%s", r->sp->layer,
					     tgi_strtab_get(&t->strs,
							    r->vals[u]));
			else
				unit_name(t, r->level, r->lo + u, b, true);
			tg_buf_addf(b, ": %d", (int)r->base[u]);
		}
		if (r->nelig > shown)
			tg_buf_addf(b, " and %u more", r->nelig - shown);
		tg_buf_addf(b, " (minimum %d over %u eligible domain%s%s)",
			     (int)r->base_gmin, r->nelig,
			     r->nelig == 1 ? "" : "s",
			     r->zero ? ", fewer than minDomains: taken as "
				       "0" : "");
	}
}

static tg_err describe_failure(tg_topology *t, const req *q, tg_decision *d,
			       scratch *s)
{
	const tg_gang *g = q->g;
	unsigned lvl = q->hard;
	int64_t k = g->ps[q->main]->count;
	tg_buf b;

	tg_buf_init(&b, TGI_MAX_MESSAGE);
	/* main slots are in s->nslots / s->dslots from the search */
	if (lvl == TG_NONE) {
		tg_buf_addf(&b, "the cluster can hold %lld of %lld "
			     "members", (long long)s->dslots[0],
			     (long long)k);
		if (g->nps > 1 && s->dslots[0] >= k)
			tg_buf_adds(&b, " of the largest pod set, but not "
				     "every pod set together");
	} else {
		if (g->nps > 1)
			/* the list counts the main pod set's slots: say so,
			 * or "1 member" reads as the whole gang */
			tg_buf_addf(&b, "no %s domain can hold the gang's "
				     "%u members in %u pod sets (offer slots "
				     "for pod set %s, %lld member%s): ",
				     level_name(t, lvl), g->nmembers, g->nps,
				     g->ps[q->main]->name, (long long)k,
				     k == 1 ? "" : "s");
		else
			tg_buf_addf(&b, "no %s domain can hold %lld "
				     "member%s: ", level_name(t, lvl),
				     (long long)k, k == 1 ? "" : "s");
		if (level_hi(t, lvl) == level_lo(t, lvl))
			tg_buf_adds(&b, "there are none");
		else
			level_list(t, s, lvl, level_lo(t, lvl),
				   level_hi(t, lvl), &b);
	}
	if (q->spread_level != TG_NONE)
		tg_buf_addf(&b, "; spread over %s with max skew %u",
			     level_name(t, q->spread_level), q->spread_skew);
	spread_text(t, q, &b);
	sspread_notes(q, &b);
	{
		uint32_t nwhy = 0, i;

		for (i = 0; i < NWHY; i++)
			nwhy += q->why[i];
		if (nwhy) {
			tg_buf_addf(&b, "; %u/%zu nodes can take none: ",
				     nwhy, t->nnodes);
			why_text(t, q->why, &b);
		}
	}
	if (q->topo && t->ntree < t->nnodes)
		tg_buf_addf(&b, "; %zu node%s left out for missing topology "
			     "labels (see warnings)", t->nnodes - t->ntree,
			     t->nnodes - t->ntree == 1 ? "" : "s");
	note_text(q, &b);
	return set_message(d, &b);
}

tg_err tg_gang_check(const tg_topology *t, const tg_gang *g, tg_errinfo *ei)
{
	req *q;
	tg_buf eb;
	tg_err err;

	if (!t || !g)
		return tgi_errf(ei, TG_EINVAL, "tg_gang_check: NULL argument");
	if (!g->nps)
		return tgi_errf(ei, TG_EINVAL, "gang %s: no members", g->name);
	q = tgi_calloc(1, sizeof(*q));
	if (!q)
		return tgi_errf(ei, TG_ENOMEM, "out of memory");
	tg_buf_init(&eb, TGI_MAX_MESSAGE);
	err = resolve((tg_topology *)t, g, q, &eb);
	if (err == TG_EINVAL)
		tgi_errf(ei, err, "%s", eb.s ? eb.s : "bad request");
	else if (err)
		tgi_errf(ei, err, "out of memory");
	tg_buf_free(&eb);
	req_release(q);
	tgi_free(q);
	return err;
}

/* Pack order of two units (pack_cmp()) for sort_units(). */
static int unit_pack_cmp(const void *pa, const void *pb, void *ctx)
{
	const sort_ctx *c = ctx;

	return pack_cmp(c->t, c->s, c->level, *(const uint32_t *)pa,
			*(const uint32_t *)pb);
}

/* Units of \p level inside the request's scope: [*lo, *hi). */
static void unit_range(const tg_topology *t, const req *q, unsigned level,
		       uint32_t *lo, uint32_t *hi)
{
	uint32_t a, b;

	*lo = *hi = 0;
	if (q->scope_level == TG_NONE) {
		*lo = level_lo(t, level);
		*hi = level_hi(t, level);
		return;
	}
	if (level == TG_NONE || level < q->scope_level)
		return;
	if (level == q->scope_level) {
		*lo = q->scope_unit;
		*hi = q->scope_unit + 1;
		return;
	}
	a = b = q->scope_unit;
	if (level >= t->nlayers) {
		*lo = t->dom[a].lo;
		*hi = t->dom[a].hi;
		return;
	}
	while (t->dom[a].layer < level) {
		a = t->dom[a].child0;
		b = t->dom[b].child0 + t->dom[b].nchild - 1;
	}
	*lo = a;
	*hi = b + 1;
}

/* Offer slots of the main pod set inside the scope, rolled up. */
static void main_slots(tg_topology *t, const req *q, scratch *s,
		       uint32_t *why)
{
	reset_taken(s);
	spread_reset(q);
	if (q->scope_level == TG_NONE) {
		node_slots(t, q, s, q->main, 0, (uint32_t)t->nnodes, why);
		rollup(t, q, s, 0);
	} else if (q->scope_level >= t->nlayers) {
		node_slots(t, q, s, q->main, q->scope_unit,
			   q->scope_unit + 1, why);
	} else {
		node_slots(t, q, s, q->main, t->dom[q->scope_unit].lo,
			   t->dom[q->scope_unit].hi, why);
		rollup(t, q, s, q->scope_unit);
	}
}

/* The first level to search: single nodes, or the level a spread's
 * domains are split from (their parent's). */
static unsigned search_start(const tg_topology *t, const req *q)
{
	unsigned start = t->nlayers, i;

	if (q->spread_level != TG_NONE)
		start = q->spread_level == 0 ? TG_NONE : q->spread_level - 1;
	for (i = 0; i < q->nsp; i++) {
		/* a spread's domains are split from their parent's level */
		unsigned pl = q->sp[i].level == 0 ? TG_NONE :
			      q->sp[i].level - 1;

		if (q->sp[i].bykey)
			continue;	/* over the nodes, in any unit */
		if (start != TG_NONE && (pl == TG_NONE || pl < start))
			start = pl;
	}
	return start;
}

/* Slots, most first (fewest_children()). */
static int slots_desc(const void *pa, const void *pb, void *ctx)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

	(void)ctx;
	return a > b ? -1 : a < b;
}

/*
 * The fewest child domains of domain \p u that hold \p k members: the
 * shortest prefix of their slots, most first, that reaches k, as
 * fill_choose() takes them.  O(c log c) for c children.
 */
static uint32_t fewest_children(const tg_topology *t, scratch *s, uint32_t u,
				int64_t k)
{
	const uint32_t c0 = t->dom[u].child0, n = t->dom[u].nchild;
	uint32_t c, m;
	int64_t sum = 0;

	for (c = 0; c < n; c++)
		s->cbuf[c] = s->dslots[c0 + c];
	tgi_sort(s->cbuf, n, sizeof(int64_t), slots_desc, NULL);
	for (m = 0; m < n && sum < k; m++)
		sum += s->cbuf[m];
	return m;
}

/*
 * Whether the candidates of \p level are ordered by the fewest children
 * first (pack_cmp()): a layer above the lowest, whose children are
 * domains the fill takes as few of as it can; not where a spread splits
 * the members instead.
 */
static bool need_orders(const tg_topology *t, const req *q, unsigned level)
{
	return level != TG_NONE && level + 1 < t->nlayers &&
	       q->spread_level == TG_NONE && !q->nsp;
}

/*
 * The units of \p level (in scope) that hold \p k members of the main pod
 * set: *ncand of them, *best the first in pack order.  A whole cached
 * domain without a node that holds k is skipped at once.  Where
 * need_orders(), each candidate's fewest children go to s->dneed first.
 */
static void scan_units(const tg_topology *t, const req *q, scratch *s,
		       unsigned level, int64_t k, uint32_t *ncand,
		       uint32_t *best)
{
	const bool nodes = level >= t->nlayers && level != TG_NONE;
	uint32_t lo, hi, u, next_dom;

	*ncand = 0;
	*best = TG_NONE;
	unit_range(t, q, level, &lo, &hi);
	s->need_level = TG_NONE;
	if (need_orders(t, q, level)) {
		for (u = lo; u < hi; u++)
			if (s->dslots[u] >= k)
				s->dneed[u] = fewest_children(t, s, u, k);
		s->need_level = level;
	}
	next_dom = nodes && t->nlayers ? lo : TG_NONE;
	for (u = lo; u < hi; u++) {
		if (u == next_dom && u < t->ntree) {
			const uint32_t dd = t->leaf[t->order[u]];

			next_dom = t->dom[dd].hi;
			if (s->cstamp[dd] && s->cmax[dd] < k &&
			    t->dom[dd].lo == u && next_dom <= hi) {
				u = next_dom - 1;
				continue;
			}
		}
		if ((nodes ? s->nslots[u] : s->dslots[u]) < k)
			continue;	/* unit_slots() */
		(*ncand)++;
		if (*best == TG_NONE || pack_cmp(t, s, level, u, *best) < 0)
			*best = u;
	}
}

/*
 * Tries every one of the \p ncand candidates of \p level in pack order
 * (several pod sets or a spread): *placed on the first that takes the
 * gang.  Every candidate, however many: the units of one level are
 * disjoint, and a failed attempt rewrites slots inside its own unit only
 * (node_slots() and rollup() below it), so the main pod set's slots of
 * the units still to try stay as the search left them.  The whole pass
 * costs one walk over the candidates' nodes.
 */
static tg_err try_candidates(tg_topology *t, const req *q, scratch *s,
			     unsigned level, int64_t k, uint32_t ncand,
			     attempt *a, bool *placed)
{
	uint32_t lo, hi, u, c, *cand;
	tg_err err = TG_ESTATE;

	cand = tgi_malloc(ncand * sizeof(uint32_t));
	if (!cand)
		return TG_ENOMEM;
	unit_range(t, q, level, &lo, &hi);
	for (u = lo, c = 0; u < hi; u++)
		if (unit_slots(t, s, level, u) >= k)
			cand[c++] = u;
	sort_units(t, s, level, cand, ncand, unit_pack_cmp);
	for (c = 0; c < ncand; c++) {
		err = attempt_unit(t, q, s, level, cand[c], a);
		if (err == TG_OK)
			break;
		attempt_free(a);
		if (err != TG_ESTATE)
			break;
	}
	tgi_free(cand);
	*placed = err == TG_OK;
	return err == TG_ESTATE ? TG_OK : err;
}

/* One level of the search: *placed when a unit of it takes the gang. */
static tg_err search_level(tg_topology *t, const req *q, scratch *s,
			   unsigned level, int64_t k, attempt *a, bool *placed)
{
	const tg_gang *g = q->g;
	uint32_t ncand, best;
	tg_err err;

	*placed = false;
	scan_units(t, q, s, level, k, &ncand, &best);
	if (ncand == 1 || (ncand && g->nps == 1 && !q->nsp &&
			   q->spread_level == TG_NONE)) {
		err = attempt_unit(t, q, s, level, best, a);
		if (err == TG_OK) {
			*placed = true;
			return TG_OK;
		}
		attempt_free(a);
		if (err != TG_ESTATE || ncand == 1)
			return err == TG_ESTATE ? TG_OK : err;
	}
	if (ncand > 1)
		return try_candidates(t, q, s, level, k, ncand, a, placed);
	return TG_OK;
}

/*
 * The search: levels from single nodes (or a spread's parent level) up
 * to the hard layer, the scope or the root; *level the level where the
 * gang was placed (*placed).
 */
static tg_err search(tg_topology *t, const req *q, scratch *s,
		     unsigned scope_level, attempt *a, bool *placed,
		     unsigned *level)
{
	const tg_gang *g = q->g;
	const int64_t k = g->ps[q->main]->count;
	unsigned l, stop = q->hard;
	tg_err err;

	*placed = false;
	if (scope_level != TG_NONE && (stop == TG_NONE || scope_level > stop))
		stop = scope_level;
	for (l = search_start(t, q);; l = l == 0 ? TG_NONE : l - 1) {
		*level = l;
		if (l != TG_NONE && stop != TG_NONE && l < stop)
			break;
		if ((err = search_level(t, q, s, l, k, a, placed)))
			return err;
		if (*placed || l == TG_NONE || l == stop)
			break;
		if (g->nps > 1 || q->spread_level != TG_NONE || q->nsp)
			main_slots(t, q, s, NULL);
	}
	return TG_OK;
}

/* The message of a request fill_key() cannot place: a spread over a
 * layer or a slice beside it (q->key_clash), or past TG_MAX_KEY_FILL
 * (q->key_big). */
static tg_err key_text(const req *q, tg_decision *d)
{
	tg_buf b;
	unsigned i;

	tg_buf_init(&b, TGI_MAX_MESSAGE);
	for (i = 0; i < q->nsp && !q->sp[i].bykey; i++)
		;
	if (q->key_clash)
		tg_buf_addf(&b, "gang %s: %lld members count toward the "
			     "topology spread on '%s', which is no topology "
			     "layer: they are placed one at a time over the "
			     "nodes, which a spread over a layer or a slice "
			     "cannot be combined with (not supported)",
			     q->g->name, (long long)q->sp[i].kself,
			     q->sp[i].sp->layer);
	else
		tg_buf_addf(&b, "gang %s: its members count toward the "
			     "topology spread on '%s', which is no topology "
			     "layer: they are placed one at a time, each "
			     "looking at one node of each of up to %u "
			     "combinations of such spreads' values on the "
			     "nodes; %llu members x %u is over TG_MAX_KEY_FILL "
			     "(%u) (not supported)", q->g->name,
			     q->sp[i].sp->layer, q->key_ngroups,
			     (unsigned long long)q->key_members,
			     q->key_ngroups, TG_MAX_KEY_FILL);
	return set_message(d, &b);
}

tg_err tgi_place_scoped(tg_topology *t, const tg_gang *g,
			unsigned scope_level, uint32_t scope_unit,
			tg_decision **out, tg_errinfo *ei)
{
	req *q = NULL;
	scratch *s;
	tg_decision *d = NULL;
	tg_buf eb;
	attempt a;
	unsigned level;
	tg_err err;
	bool placed = false;

	memset(&a, 0, sizeof(a));
	*out = NULL;
	if ((err = decision_new(g, &d)))
		return tgi_errf(ei, err, "out of memory");
	q = tgi_calloc(1, sizeof(*q));	/* req_release() on any path */
	s = scratch_get(t);
	if (!q || !s) {
		err = TG_ENOMEM;
		goto fail;
	}
	tg_buf_init(&eb, TGI_MAX_MESSAGE);
	err = resolve(t, g, q, &eb);
	if (err == TG_EINVAL) {
		/* a bad request is a decision: unschedulable, with why */
		if ((err = set_message(d, &eb)))
			goto fail;
		d->bad_request = true;
		goto done;
	}
	tg_buf_free(&eb);
	if (err)
		goto fail;
	q->scope_level = scope_level;
	q->scope_unit = scope_unit;
	if ((err = resolve_pod_affinity(t, q)) ||
	    (err = spread_prepare(t, q)))
		goto fail;
	if (q->key_clash || q->key_big) {
		if ((err = key_text(q, d)))
			goto fail;
		d->bad_request = true;
		goto done;
	}

	/* offer slots of the main pod set everywhere in scope */
	/* (why nodes take none is counted only if the gang fails) */
	main_slots(t, q, s, NULL);
	d->scope_slots = scope_level == TG_NONE ? s->dslots[0] :
			 unit_slots(t, s, scope_level, scope_unit);
	if ((err = search(t, q, s, scope_level, &a, &placed, &level)))
		goto fail;
	if (placed) {
		if ((err = build_placements(t, q, s, &a, d)))
			goto fail;
		d->status = TG_STATUS_PLACED;
		if ((err = describe_success(t, q, d, level, s)))
			goto fail;
	} else {
		main_slots(t, q, s, q->why);
		if ((err = describe_failure(t, q, d, s)))
			goto fail;
	}
done:
	attempt_free(&a);
	req_release(q);
	tgi_free(q);
	*out = d;
	return TG_OK;
fail:
	attempt_free(&a);
	req_release(q);
	tgi_free(q);
	tg_decision_free(d);
	return tgi_errf(ei, err, "placing gang %s: %s", g->name,
			tg_strerror(err));
}

/* ---- offer slots of single nodes, for decide.c's preemption ---- */

struct tgi_slotctx {
	tg_topology *t;
	req *q;
	scratch *s;
};

tg_err tgi_slotctx_new(tg_topology *t, const tg_gang *g, tgi_slotctx **out)
{
	tgi_slotctx *c;
	tg_buf eb;
	unsigned l;
	tg_err err;

	*out = NULL;
	if (g->nps != 1 || g->nspread || g->nsspread)
		return TG_ENOENT;
	c = tgi_calloc(1, sizeof(*c));
	if (!c)
		return TG_ENOMEM;
	c->t = t;
	c->q = tgi_calloc(1, sizeof(*c->q));
	c->s = scratch_get(t);
	if (!c->q || !c->s) {
		err = TG_ENOMEM;
		goto fail;
	}
	tg_buf_init(&eb, TGI_MAX_MESSAGE);
	err = resolve(t, g, c->q, &eb);
	tg_buf_free(&eb);
	if (err)
		goto fail;
	for (l = 0; l < t->nlayers; l++)
		if (c->q->slice[l]) {
			err = TG_ENOENT;	/* sums are not enough */
			goto fail;
		}
	c->q->scope_level = TG_NONE;
	c->q->scope_unit = 0;
	if ((err = resolve_pod_affinity(t, c->q)))
		goto fail;
	reset_taken(c->s);
	*out = c;
	return TG_OK;
fail:
	tgi_slotctx_free(c);
	return err;
}

int64_t tgi_slotctx_node(tgi_slotctx *c, uint32_t node)
{
	uint32_t pos = c->t->pos[node];

	node_slots(c->t, c->q, c->s, c->q->main, pos, pos + 1, NULL);
	return c->s->nslots[pos];
}

int64_t tgi_slotctx_need(const tgi_slotctx *c)
{
	return c->q->g->ps[c->q->main]->count;
}

void tgi_slotctx_free(tgi_slotctx *c)
{
	if (!c)
		return;
	req_release(c->q);
	tgi_free(c->q);
	tgi_free(c);
}

tg_err tgi_decision_add_victim(tg_decision *d, const tg_topology *t,
			       uint32_t a, bool reservation)
{
	tg_victim *nv;
	const tgi_alloc *x = &t->allocs[a];

	nv = tgi_realloc(d->vic, (d->nvic + 1) * sizeof(*nv));
	if (!nv)
		return TG_ENOMEM;
	d->vic = nv;
	nv[d->nvic].pod = tgi_strtab_get(&t->strs, x->pod);
	nv[d->nvic].gang = tgi_strtab_get(&t->strs, x->gang);
	nv[d->nvic].node = x->node;
	nv[d->nvic].priority = tgi_alloc_cls(t, a)->priority;
	nv[d->nvic].reservation = reservation;
	d->nvic++;
	return TG_OK;
}

tg_err tg_decision_apply(tg_topology *t, const tg_gang *g,
			 const tg_decision *d)
{
	unsigned i, j, nown = 0;
	uint32_t *own;
	tg_err err;

	if (!t || !g || !d)
		return TG_EINVAL;
	if (d->status == TG_STATUS_UNSCHEDULABLE)
		return TG_ESTATE;
	for (i = 0; i < d->nvic; i++)
		if (tgi_alloc_find(t, d->vic[i].pod) == TG_NONE)
			return TG_ENOENT;
	/*
	 * The victims and the gang's own reservations give way first (the
	 * members may hold their GPUs), noted so that a failure below puts
	 * them back: all or nothing.
	 */
	own = tgi_malloc((d->npl + d->nvic) * sizeof(*own));
	if (!own)
		return TG_ENOMEM;
	for (i = 0; i < d->nvic; i++)
		own[nown++] = tgi_alloc_find(t, d->vic[i].pod);
	for (i = 0; i < d->npl; i++) {
		uint32_t x = tgi_alloc_find(t, d->pl[i].pod);

		if (x != TG_NONE && t->allocs[x].nominated)
			own[nown++] = x;
	}
	for (i = 0; i < nown; i++)
		tg_topology_remove_alloc(t, tgi_strtab_get(&t->strs,
					 t->allocs[own[i]].pod));
	for (i = 0; i < d->npl; i++) {
		const tg_placement *p = &d->pl[i];
		const tgi_podset *ps = g->ps[p->podset];
		tg_label lab[TG_MAX_POD_LABELS];
		tg_alloc_spec sp;

		memset(&sp, 0, sizeof(sp));
		if (ps->mlab) {
			/* ranks run over pod sets in order, members in
			 * order inside one (build_placements()) */
			const tgi_mlabels *m = NULL;
			unsigned k, first = 0;

			for (k = 0; k < p->podset; k++)
				first += g->ps[k]->count;
			if (p->rank >= first && p->rank - first < ps->count)
				m = &ps->mlab[p->rank - first];
			for (k = 0; m && k < m->n; k++) {
				lab[k].key = m->keys[k];
				lab[k].value = m->vals[k];
			}
			if (m) {
				sp.ns = m->ns;
				sp.labels = lab;
				sp.nlabels = m->n;
			}
		}
		sp.pod = p->pod;
		sp.gang = g->name;
		sp.node = p->node;
		sp.shape = &g->ps[p->podset]->shape;
		sp.gpus = p->gpus;
		sp.priority = g->priority;
		sp.preemptible = true;
		sp.nominated = d->status == TG_STATUS_PREEMPTING;
		err = tg_topology_add_alloc(t, &sp);
		if (err) {
			for (j = 0; j < i; j++)
				tg_topology_remove_alloc(t, d->pl[j].pod);
			for (j = 0; j < nown; j++)
				tgi_alloc_revive(t, own[j]);
			tgi_free(own);
			return err;
		}
	}
	tgi_free(own);
	return TG_OK;
}
