/*
 * shared/src/core/gang.c - building a gang request.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "gang.h"

static bool str_ok(const char *s)
{
	return s && *s && strlen(s) <= TG_MAX_NAME;
}

tg_gang *tg_gang_create(const char *name)
{
	tg_gang *g;

	if (!str_ok(name))
		return NULL;
	g = tgi_calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->name = tgi_strdup(name);
	if (!g->name) {
		tgi_free(g);
		return NULL;
	}
	g->can_preempt = true;
	return g;
}

static void free_strv(char **v, unsigned n)
{
	unsigned i;

	if (!v)
		return;
	for (i = 0; i < n; i++)
		tgi_free(v[i]);
	tgi_free(v);
}

static tg_err push_str(char ***v, unsigned n, const char *s);

static void expr_free(tgi_expr *x)
{
	tgi_free(x->key);
	free_strv(x->values, x->nvalues);
	memset(x, 0, sizeof(*x));
}

static void mlabels_free(tgi_mlabels *m)
{
	tgi_free(m->ns);
	free_strv(m->keys, m->n);
	free_strv(m->vals, m->n);
	memset(m, 0, sizeof(*m));
}

static void sspread_free(tgi_sspread *sp)
{
	unsigned i;

	tgi_free(sp->layer);
	tgi_free(sp->ns);
	for (i = 0; i < sp->nexprs; i++)
		expr_free(&sp->exprs[i]);
	tgi_free(sp->exprs);
	memset(sp, 0, sizeof(*sp));
}

static void podset_free(tgi_podset *p)
{
	unsigned i, j;

	if (!p)
		return;
	if (p->mlab)
		for (i = 0; i < p->count; i++)
			mlabels_free(&p->mlab[i]);
	tgi_free(p->mlab);
	tgi_free(p->name);
	free_strv(p->members, p->count);
	free_strv(p->sel_key, p->nsel);
	free_strv(p->sel_val, p->nsel);
	/* every term: a term being opened may hold an expression array
	 * before it counts in nterms */
	for (i = 0; i < TG_MAX_TERMS; i++) {
		for (j = 0; j < p->terms[i].n; j++) {
			tgi_free(p->terms[i].exprs[j].key);
			free_strv(p->terms[i].exprs[j].values,
				  p->terms[i].exprs[j].nvalues);
		}
		tgi_free(p->terms[i].exprs);
	}
	for (i = 0; i < p->ntol; i++) {
		tgi_free(p->tol[i].key);
		tgi_free(p->tol[i].value);
	}
	for (i = 0; i < p->naff; i++) {
		tgi_free(p->aff[i].key);
		free_strv(p->aff[i].pods, p->aff[i].npods);
	}
	tgi_free(p);
}

void tg_gang_destroy(tg_gang *g)
{
	unsigned i;

	if (!g)
		return;
	tgi_free(g->name);
	for (i = 0; i < g->ngather; i++)
		tgi_free(g->gather[i].layer);
	for (i = 0; i < g->nslice; i++)
		tgi_free(g->slice[i].layer);
	for (i = 0; i < g->nspread; i++)
		tgi_free(g->spread[i].layer);
	for (i = 0; i < g->nsspread; i++)
		sspread_free(&g->sspread[i]);
	for (i = 0; i < g->nps; i++)
		podset_free(g->ps[i]);
	tgi_free(g);
}

const char *tg_gang_name(const tg_gang *g)
{
	return g ? g->name : NULL;
}

void tg_gang_set_priority(tg_gang *g, int64_t priority)
{
	if (g)
		g->priority = priority;
}

int64_t tg_gang_priority(const tg_gang *g)
{
	return g ? g->priority : 0;
}

void tg_gang_set_can_preempt(tg_gang *g, bool can)
{
	if (g)
		g->can_preempt = can;
}

static tg_err layer_req(tgi_layer_req *arr, unsigned *n, unsigned max,
			const char *layer, unsigned a, bool hard)
{
	unsigned i;
	char *s;

	if (!str_ok(layer))
		return TG_EINVAL;
	for (i = 0; i < *n; i++)
		if (!strcmp(arr[i].layer, layer)) {
			arr[i].a = a;
			arr[i].hard = hard;
			return TG_OK;
		}
	if (*n >= max)
		return TG_ELIMIT;
	s = tgi_strdup(layer);
	if (!s)
		return TG_ENOMEM;
	arr[*n].layer = s;
	arr[*n].a = a;
	arr[*n].hard = hard;
	(*n)++;
	return TG_OK;
}

tg_err tg_gang_set_gather(tg_gang *g, const char *layer, tg_gather how)
{
	if (!g || how < TG_GATHER_NONE || how > TG_GATHER_MUST)
		return TG_EINVAL;
	return layer_req(g->gather, &g->ngather, TG_MAX_LAYERS + 2, layer,
			 how, false);
}

tg_err tg_gang_add_slice(tg_gang *g, const char *layer, unsigned size)
{
	if (!g || size == 0)
		return TG_EINVAL;
	return layer_req(g->slice, &g->nslice, TG_MAX_LAYERS + 1, layer,
			 size, false);
}

tg_err tg_gang_add_spread(tg_gang *g, const char *layer, unsigned max_skew,
			  bool hard)
{
	if (!g || max_skew == 0)
		return TG_EINVAL;
	return layer_req(g->spread, &g->nspread, TG_MAX_LAYERS + 1, layer,
			 max_skew, hard);
}

/* Copies a label expression into \p x (cleared); frees what it made on
 * failure. */
static tg_err expr_copy(tgi_expr *x, const tg_label_expr *e)
{
	unsigned i;

	memset(x, 0, sizeof(*x));
	if (!e || !str_ok(e->key) || e->op < TG_SEL_IN ||
	    e->op > TG_SEL_LT || (e->nvalues && !e->values))
		return TG_EINVAL;
	if ((e->op == TG_SEL_GT || e->op == TG_SEL_LT) && e->nvalues != 1)
		return TG_EINVAL;
	if ((e->op == TG_SEL_IN || e->op == TG_SEL_NOT_IN) && !e->nvalues)
		return TG_EINVAL;
	if (e->nvalues > 256)
		return TG_ELIMIT;
	x->key = tgi_strdup(e->key);
	x->op = e->op;
	if (!x->key)
		return TG_ENOMEM;
	for (i = 0; i < e->nvalues; i++) {
		if (!e->values[i] || push_str(&x->values, x->nvalues,
					      e->values[i])) {
			tg_err err = e->values[i] ? TG_ENOMEM : TG_EINVAL;

			expr_free(x);
			return err;
		}
		x->nvalues++;
	}
	return TG_OK;
}

tg_err tg_gang_add_spread_spec(tg_gang *g, const tg_spread_spec *s)
{
	tgi_sspread *sp;
	unsigned i;
	tg_err err;

	if (!g || !s || !str_ok(s->layer) || s->max_skew == 0 ||
	    (s->ns && strlen(s->ns) > TG_MAX_NAME) ||
	    (s->nexprs && !s->exprs) || (s->min_domains && !s->hard))
		return TG_EINVAL;
	if (s->nexprs > TG_MAX_TERMS)
		return TG_ELIMIT;
	if (g->nsspread >= TG_MAX_SPREADS)
		return TG_ELIMIT;
	sp = &g->sspread[g->nsspread];
	memset(sp, 0, sizeof(*sp));
	sp->max_skew = s->max_skew;
	sp->min_domains = s->min_domains;
	sp->hard = s->hard;
	sp->ignore_node_affinity = s->ignore_node_affinity;
	sp->honor_taints = s->honor_taints;
	sp->selector = s->selector;
	sp->layer = tgi_strdup(s->layer);
	sp->ns = tgi_strdup(s->ns ? s->ns : "");
	sp->exprs = tgi_calloc(s->nexprs ? s->nexprs : 1, sizeof(tgi_expr));
	err = sp->layer && sp->ns && sp->exprs ? TG_OK : TG_ENOMEM;
	for (i = 0; !err && i < s->nexprs; i++) {
		err = expr_copy(&sp->exprs[i], &s->exprs[i]);
		if (!err)
			sp->nexprs++;
	}
	if (err) {
		sspread_free(sp);
		return err;
	}
	g->nsspread++;
	return TG_OK;
}

tg_err tg_gang_add_podset(tg_gang *g, const char *name, const tg_shape *shape,
			  unsigned count, unsigned *ps)
{
	tgi_podset *p;
	unsigned r;

	if (!g || !str_ok(name) || !shape || count == 0)
		return TG_EINVAL;
	for (r = 0; r < TG_MAX_RESOURCES; r++)
		if (shape->v[r] < 0)
			return TG_EINVAL;
	if (g->nps >= TG_MAX_PODSETS || count > TG_MAX_MEMBERS ||
	    g->nmembers + count > TG_MAX_MEMBERS)
		return TG_ELIMIT;
	p = tgi_calloc(1, sizeof(*p));
	if (!p)
		return TG_ENOMEM;
	p->name = tgi_strdup(name);
	p->members = tgi_calloc(count, sizeof(char *));
	if (!p->name || !p->members) {
		tgi_free(p->name);
		tgi_free(p->members);
		tgi_free(p);
		return TG_ENOMEM;
	}
	p->shape = *shape;
	p->count = count;
	g->ps[g->nps] = p;
	if (ps)
		*ps = g->nps;
	g->nps++;
	g->nmembers += count;
	return TG_OK;
}

static tgi_podset *podset(tg_gang *g, unsigned ps)
{
	return g && ps < g->nps ? g->ps[ps] : NULL;
}

tg_err tg_gang_podset_set_member(tg_gang *g, unsigned ps, unsigned i,
				 const char *pod)
{
	tgi_podset *p = podset(g, ps);
	char *s;

	if (!p || i >= p->count || !str_ok(pod))
		return TG_EINVAL;
	s = tgi_strdup(pod);
	if (!s)
		return TG_ENOMEM;
	tgi_free(p->members[i]);
	p->members[i] = s;
	return TG_OK;
}

tg_err tg_gang_podset_set_max_per_node(tg_gang *g, unsigned ps,
				       unsigned max)
{
	tgi_podset *p = podset(g, ps);

	if (!p)
		return TG_EINVAL;
	p->max_per_node = max;
	return TG_OK;
}

tg_err tg_gang_podset_set_member_labels(tg_gang *g, unsigned ps, unsigned i,
					const char *ns, const tg_label *labels,
					unsigned nlabels)
{
	tgi_podset *p = podset(g, ps);
	tgi_mlabels m;
	unsigned j, k;
	tg_err err = TG_OK;

	if (!p || i >= p->count || (nlabels && !labels) ||
	    (ns && strlen(ns) > TG_MAX_NAME))
		return TG_EINVAL;
	if (nlabels > TG_MAX_POD_LABELS)
		return TG_ELIMIT;
	for (j = 0; j < nlabels; j++) {
		if (!str_ok(labels[j].key) || !labels[j].value ||
		    strlen(labels[j].value) > TG_MAX_NAME)
			return TG_EINVAL;
		for (k = 0; k < j; k++)
			if (!strcmp(labels[k].key, labels[j].key))
				return TG_EINVAL;
	}
	if (!p->mlab && !(p->mlab = tgi_calloc(p->count, sizeof(*p->mlab))))
		return TG_ENOMEM;
	memset(&m, 0, sizeof(m));
	if (ns && !(m.ns = tgi_strdup(ns)))
		err = TG_ENOMEM;
	for (j = 0; !err && j < nlabels; j++) {
		err = push_str(&m.keys, m.n, labels[j].key);
		if (!err && (err = push_str(&m.vals, m.n, labels[j].value)))
			tgi_free(m.keys[m.n]);
		if (!err)
			m.n++;
	}
	if (err) {
		mlabels_free(&m);
		return err;
	}
	mlabels_free(&p->mlab[i]);
	p->mlab[i] = m;
	return TG_OK;
}

static tg_err push_str(char ***v, unsigned n, const char *s)
{
	char **nv;

	nv = tgi_realloc(*v, (n + 1) * sizeof(char *));
	if (!nv)
		return TG_ENOMEM;
	*v = nv;
	nv[n] = tgi_strdup(s);
	return nv[n] ? TG_OK : TG_ENOMEM;
}

tg_err tg_gang_podset_add_node_selector(tg_gang *g, unsigned ps,
					const char *key, const char *value)
{
	tgi_podset *p = podset(g, ps);
	tg_err err;

	if (!p || !str_ok(key) || !value || strlen(value) > TG_MAX_NAME)
		return TG_EINVAL;
	if (p->nsel >= TG_MAX_TERMS * 4)
		return TG_ELIMIT;
	if ((err = push_str(&p->sel_key, p->nsel, key)))
		return err;
	if ((err = push_str(&p->sel_val, p->nsel, value))) {
		tgi_free(p->sel_key[p->nsel]);
		return err;
	}
	p->nsel++;
	return TG_OK;
}

tg_err tg_gang_podset_add_affinity_expr(tg_gang *g, unsigned ps,
					unsigned term,
					const tg_label_expr *e)
{
	tgi_podset *p = podset(g, ps);
	tgi_term *tm;
	tgi_expr *ne;
	tg_err err;

	if (!p)
		return TG_EINVAL;
	if (term > p->nterms || term >= TG_MAX_TERMS)
		return term >= TG_MAX_TERMS ? TG_ELIMIT : TG_EINVAL;
	tm = &p->terms[term];
	if (tm->n >= TG_MAX_TERMS)
		return TG_ELIMIT;
	ne = tgi_realloc(tm->exprs, (tm->n + 1) * sizeof(*ne));
	if (!ne)
		return TG_ENOMEM;
	tm->exprs = ne;
	if ((err = expr_copy(&ne[tm->n], e)))
		return err;
	tm->n++;
	if (term == p->nterms)
		p->nterms++;
	return TG_OK;
}

tg_err tg_gang_podset_add_toleration(tg_gang *g, unsigned ps,
				     const char *key, bool exists,
				     const char *value, int effect)
{
	tgi_podset *p = podset(g, ps);
	tgi_toleration *t;

	if (!p || (key && !str_ok(key)) || (!key && !exists) ||
	    effect > TG_TAINT_NO_EXECUTE)
		return TG_EINVAL;
	if (p->ntol >= TG_MAX_TERMS * 4)
		return TG_ELIMIT;
	t = &p->tol[p->ntol];
	memset(t, 0, sizeof(*t));
	if ((key && !(t->key = tgi_strdup(key))) ||
	    (value && !(t->value = tgi_strdup(value)))) {
		tgi_free(t->key);
		tgi_free(t->value);
		return TG_ENOMEM;
	}
	t->exists = exists;
	t->effect = effect < 0 ? -1 : effect;
	p->ntol++;
	return TG_OK;
}

tg_err tg_gang_podset_add_pod_affinity(tg_gang *g, unsigned ps,
				       const char *topology_key, bool anti,
				       const char *const *pods,
				       unsigned npods)
{
	tgi_podset *p = podset(g, ps);
	tgi_podaff *a;
	unsigned i;

	if (!p || !str_ok(topology_key) || (npods && !pods))
		return TG_EINVAL;
	if (p->naff >= TG_MAX_TERMS)
		return TG_ELIMIT;
	a = &p->aff[p->naff];
	memset(a, 0, sizeof(*a));
	a->key = tgi_strdup(topology_key);
	a->anti = anti;
	if (!a->key)
		return TG_ENOMEM;
	for (i = 0; i < npods; i++) {
		if (!str_ok(pods[i]) || push_str(&a->pods, a->npods,
						 pods[i])) {
			free_strv(a->pods, a->npods);
			tgi_free(a->key);
			return str_ok(pods[i]) ? TG_ENOMEM : TG_EINVAL;
		}
		a->npods++;
	}
	p->naff++;
	return TG_OK;
}

unsigned tg_gang_npodsets(const tg_gang *g)
{
	return g ? g->nps : 0;
}

unsigned tg_gang_nmembers(const tg_gang *g)
{
	return g ? g->nmembers : 0;
}

const char *tg_gang_member(const tg_gang *g, unsigned rank)
{
	unsigned ps;

	if (!g)
		return NULL;
	for (ps = 0; ps < g->nps; ps++) {
		if (rank < g->ps[ps]->count)
			return g->ps[ps]->members[rank];
		rank -= g->ps[ps]->count;
	}
	return NULL;
}

unsigned tg_gang_ngathers(const tg_gang *g)
{
	return g ? g->ngather : 0;
}

const char *tg_gang_gather_at(const tg_gang *g, unsigned i, tg_gather *how)
{
	if (!g || i >= g->ngather)
		return NULL;
	if (how)
		*how = (tg_gather)g->gather[i].a;
	return g->gather[i].layer;
}

unsigned tg_gang_nspreads(const tg_gang *g)
{
	return g ? g->nspread + g->nsspread : 0;
}

const char *tg_gang_spread_at(const tg_gang *g, unsigned i,
			      unsigned *max_skew, bool *hard)
{
	if (!g || i >= g->nspread + g->nsspread)
		return NULL;
	if (i >= g->nspread) {
		const tgi_sspread *sp = &g->sspread[i - g->nspread];

		if (max_skew)
			*max_skew = sp->max_skew;
		if (hard)
			*hard = sp->hard;
		return sp->layer;
	}
	if (max_skew)
		*max_skew = g->spread[i].a;
	if (hard)
		*hard = g->spread[i].hard;
	return g->spread[i].layer;
}

unsigned tg_gang_podset_count(const tg_gang *g, unsigned ps)
{
	return g && ps < g->nps ? g->ps[ps]->count : 0;
}

const tg_shape *tg_gang_podset_shape(const tg_gang *g, unsigned ps)
{
	return g && ps < g->nps ? &g->ps[ps]->shape : NULL;
}

const char *tg_gang_podset_member(const tg_gang *g, unsigned ps, unsigned i)
{
	if (!g || ps >= g->nps || i >= g->ps[ps]->count)
		return NULL;
	return g->ps[ps]->members[i];
}

/*
 * The request grammar's items onto a gang (topogang/request.h); here, not
 * in request.c, so that the SPANK plugin builds the grammar without the
 * gang.
 */
tg_err tg_request_apply(const tg_request *r, tg_gang *g,
			tg_request_layer_fn map, void *ctx, tg_errinfo *ei)
{
	static const char *const what[] = {
		[TG_REQUEST_GATHER] = "gather",
		[TG_REQUEST_SLICE] = "slice",
		[TG_REQUEST_SPREAD] = "spread",
	};
	unsigned i;

	if (!r || !g || r->kind < TG_REQUEST_GATHER ||
	    r->kind > TG_REQUEST_SPREAD)
		return tgi_errf(ei, TG_EINVAL, "no request or gang");
	for (i = 0; i < r->n; i++) {
		const tg_request_item *it = &r->item[i];
		const char *l = map ? map(ctx, it->layer) : it->layer;
		tg_err err = TG_EINVAL;

		switch (r->kind) {
		case TG_REQUEST_GATHER:
			err = tg_gang_set_gather(g, l, it->how);
			break;
		case TG_REQUEST_SLICE:
			err = tg_gang_add_slice(g, l, it->size);
			break;
		case TG_REQUEST_SPREAD:
			err = tg_gang_add_spread(g, l, it->skew, it->hard);
			break;
		}
		if (err)
			return tgi_errf(ei, err, "%s %.200s%s%.200s: %s",
					what[r->kind], it->layer,
					l != it->layer ? " as " : "",
					l != it->layer ? l : "",
					tg_strerror(err));
	}
	return TG_OK;
}
