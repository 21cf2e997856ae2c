/*
 * shared/src/load/fabric/graph.c - a switch graph (devices and links,
 * from ibnetdiscover or NetQ) into a tree of switch groups (fabric.h):
 * leaves are the switches with hosts, leaves sharing a host are one
 * group, a switch's level is one more than its nearest leaf's, and
 * switches of one level reaching a common group below are one group.
 * Union-find does both groupings; nothing depends on input order (groups
 * are named after their first member in tg_name_cmp() order, hosts are
 * added in that order too).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric_int.h"

static uint32_t uf_find(uint32_t *uf, uint32_t x)
{
	uint32_t r = x;

	while (uf[r] != r)
		r = uf[r];
	while (uf[x] != r) {
		uint32_t n = uf[x];

		uf[x] = r;
		x = n;
	}
	return r;
}

static void uf_union(uint32_t *uf, uint32_t a, uint32_t b)
{
	a = uf_find(uf, a);
	b = uf_find(uf, b);
	if (a != b)
		uf[a > b ? a : b] = a > b ? b : a;
}

/* The host name an InfiniBand CA description gives: its first word when
 * it has one or two words ("a05-p1-dgx-01-c01 mlx5_0"). */
static bool host_from_desc(const char *d, char *out)
{
	const char *w0 = NULL, *p = d;
	size_t n0 = 0;
	unsigned words = 0;

	while (*p) {
		while (tgi_fab_blank(*p))
			p++;
		if (!*p)
			break;
		if (words == 0)
			w0 = p;
		words++;
		while (*p && !tgi_fab_blank(*p))
			p++;
		if (words == 1)
			n0 = (size_t)(p - w0);
	}
	if (words < 1 || words > 2 || n0 > TG_MAX_NAME)
		return false;
	memcpy(out, w0, n0);
	out[n0] = '\0';
	return true;
}

/* A switch's display name: "MF0;NAME:MODEL" gives NAME; else the whole
 * description when it is a label value; else empty (use the id). */
static void switch_name(const char *d, char *out, size_t cap)
{
	const char *semi = strchr(d, ';'), *colon;
	char buf[64];
	size_t n;

	out[0] = '\0';
	if (semi && (colon = strchr(semi + 1, ':')) &&
	    !strchr(colon + 1, ';') && !strchr(colon + 1, ':') &&
	    !memchr(d, ':', (size_t)(semi - d))) {
		n = (size_t)(colon - semi - 1);
		if (n == 0 || n >= cap)
			return;
		memcpy(out, semi + 1, n);
		out[n] = '\0';
	} else {
		n = strlen(d);
		if (n == 0 || n >= cap)
			return;
		memcpy(out, d, n + 1);
	}
	if (tg_export_label_value(out, buf) != out)
		out[0] = '\0';
}

typedef struct gb_ctx {
	tg_fabric *f;
	tg_errinfo *ei;
	uint32_t *swidx;	/* device -> switch index, TG_NONE */
	uint32_t *swdev;	/* switch index -> device */
	uint32_t nsw;
	uint32_t *swname;	/* switch -> strs id of its unique name */
	uint32_t *hostof;	/* device -> strs id of its host, 0 none */
	uint8_t *named;		/* device: a CA whose description names a
				 * host (kept or not) */
	uint8_t *edge;		/* switch: hosts hang off it (level 0 or
				 * nothing) */
	uint32_t *adj0, *adj;	/* CSR: switch neighbours */
	uint32_t *hadj0, *hadj;	/* CSR: host (strs id) neighbours */
	uint32_t *level;
	uint32_t *uf;
	uint32_t *uplink;	/* switch root -> a parent switch, TG_NONE */
	uint32_t *hostleaf;	/* strs id -> a leaf switch + 1 */
	uint32_t *hosts;	/* distinct host strs ids */
	size_t nhosts;
} gb_ctx;

static void gb_free(gb_ctx *g)
{
	tgi_free(g->swidx);
	tgi_free(g->swdev);
	tgi_free(g->swname);
	tgi_free(g->hostof);
	tgi_free(g->named);
	tgi_free(g->edge);
	tgi_free(g->adj0);
	tgi_free(g->adj);
	tgi_free(g->hadj0);
	tgi_free(g->hadj);
	tgi_free(g->level);
	tgi_free(g->uf);
	tgi_free(g->uplink);
	tgi_free(g->hostleaf);
	tgi_free(g->hosts);
}

/* Display names of the switches, unique: a name two switches share falls
 * back to their ids, and an id equal to another switch's name to hashed
 * ids for both. */
static tg_err gb_switch_names(gb_ctx *g)
{
	tg_fabric *f = g->f;
	tgi_strtab seen;
	uint32_t *count = NULL;
	size_t ncount = 0, cap = 0, i;
	char nm[TG_MAX_NAME + 1], show[FAB_SHOW + 4];
	tg_err err = TG_ENOMEM;

	tgi_strtab_init(&seen);
	for (i = 0; i < g->nsw; i++) {
		const fdev *d = &f->devs[g->swdev[i]];
		uint32_t id;

		switch_name(tgi_strtab_get(&f->strs, d->desc), nm,
			    sizeof(nm));
		if (!nm[0])
			continue;
		if (tgi_strtab_intern(&seen, nm, &id) ||
		    tgi_grow(&count, &cap, (size_t)id + 1, sizeof(uint32_t)))
			goto out;
		while (ncount <= id)
			count[ncount++] = 0;
		count[id]++;
	}
	for (i = 0; i < g->nsw; i++) {
		const fdev *d = &f->devs[g->swdev[i]];
		const char *use;

		switch_name(tgi_strtab_get(&f->strs, d->desc), nm,
			    sizeof(nm));
		use = nm;
		if (!nm[0] || count[tgi_strtab_find(&seen, nm)] > 1)
			use = tgi_strtab_get(&f->ids, d->id);
		if (tg_export_label_value(use, show) != use) {
			/* an id no label can hold: hash it like a value */
			use = show;
		}
		if (tgi_strtab_intern(&f->strs, use, &g->swname[i]))
			goto out;
	}
	/* an id that equals another switch's name: hashed ids for both */
	tgi_free(count);
	count = tgi_calloc(f->strs.n + 1, sizeof(uint32_t));
	if (!count)
		goto out;
	for (i = 0; i < g->nsw; i++)
		count[g->swname[i]]++;
	for (i = 0; i < g->nsw; i++) {
		const char *id = tgi_strtab_get(&f->ids,
						f->devs[g->swdev[i]].id);

		if (count[g->swname[i]] < 2)
			continue;
		snprintf(nm, sizeof(nm), "x%016llx",
			 (unsigned long long)tgi_hash(id, strlen(id)));
		if (tgi_strtab_intern(&f->strs, nm, &g->swname[i]))
			goto out;
	}
	err = TG_OK;
out:
	tgi_free(count);
	tgi_strtab_free(&seen);
	return err;
}

/* Host names of the CAs: from their descriptions, through the host-map
 * rule. */
static tg_err gb_host_names(gb_ctx *g)
{
	tg_fabric *f = g->f;
	char nm[TG_MAX_NAME + 1], raw[TG_MAX_NAME + 1], show[FAB_SHOW + 4];
	size_t i;

	for (i = 0; i < f->ndevs; i++) {
		const fdev *d = &f->devs[i];
		int kept;

		if (d->kind != DEV_HOST)
			continue;
		if (!d->desc || !host_from_desc(tgi_strtab_get(&f->strs,
							       d->desc),
						raw)) {
			f->sum.unnamed++;
			continue;
		}
		g->named[i] = 1;
		kept = tgi_fab_host_map(f, raw, nm);
		if (kept == 0) {
			f->sum.dropped++;
			continue;
		}
		if (kept < 0 || !tgi_fab_name_ok(nm)) {
			f->sum.unnamed++;
			if (tgi_fab_warn(f, "%s: host '%s' (port %s): %s; "
					 "skipped", tgi_fab_src(f, d->src),
					 tgi_fab_show(raw, strlen(raw), show,
						      sizeof(show)),
					 tgi_strtab_get(&f->ids, d->id),
					 kept < 0 ? "the host-map rule makes "
					 "the name too long" :
					 "not a valid node name"))
				return TG_ENOMEM;
			continue;
		}
		if (tgi_strtab_intern(&f->strs, nm, &g->hostof[i]))
			return TG_ENOMEM;
	}
	return TG_OK;
}

/* Names: unique display names for the switches, host names for CAs. */
static tg_err gb_names(gb_ctx *g)
{
	tg_fabric *f = g->f;
	size_t i;
	tg_err err;

	g->swidx = tgi_malloc(f->ndevs * sizeof(uint32_t) + 1);
	g->swdev = tgi_malloc(f->ndevs * sizeof(uint32_t) + 1);
	g->swname = tgi_calloc(f->ndevs + 1, sizeof(uint32_t));
	g->hostof = tgi_calloc(f->ndevs + 1, sizeof(uint32_t));
	g->named = tgi_calloc(f->ndevs + 1, 1);
	if (!g->swidx || !g->swdev || !g->swname || !g->hostof || !g->named)
		return TG_ENOMEM;
	g->nsw = 0;
	for (i = 0; i < f->ndevs; i++) {
		g->swidx[i] = TG_NONE;
		if (f->devs[i].kind == DEV_SWITCH) {
			g->swidx[i] = g->nsw;
			g->swdev[g->nsw++] = (uint32_t)i;
		}
	}
	err = gb_switch_names(g);
	if (!err)
		err = gb_host_names(g);
	return err;
}

/* Adjacency lists, switch-switch and switch-host, as CSR arrays. */
static tg_err gb_adjacency(gb_ctx *g)
{
	tg_fabric *f = g->f;
	size_t i, ns = 0, nh = 0;
	uint32_t *fill = NULL, *hfill = NULL;

	g->adj0 = tgi_calloc((size_t)g->nsw + 1, sizeof(uint32_t));
	g->hadj0 = tgi_calloc((size_t)g->nsw + 1, sizeof(uint32_t));
	g->edge = tgi_calloc((size_t)g->nsw + 1, 1);
	if (!g->adj0 || !g->hadj0 || !g->edge)
		return TG_ENOMEM;
	for (i = 0; i < f->nlinks; i++) {
		uint32_t a = g->swidx[f->links[i].a];
		uint32_t b = g->swidx[f->links[i].b];

		if (a != TG_NONE && g->named[f->links[i].b])
			g->edge[a] = 1;
		if (b != TG_NONE && g->named[f->links[i].a])
			g->edge[b] = 1;

		if (a != TG_NONE && b != TG_NONE) {
			g->adj0[a + 1]++;
			g->adj0[b + 1]++;
			ns += 2;
		} else if (a != TG_NONE && g->hostof[f->links[i].b]) {
			g->hadj0[a + 1]++;
			nh++;
		} else if (b != TG_NONE && g->hostof[f->links[i].a]) {
			g->hadj0[b + 1]++;
			nh++;
		}
	}
	for (i = 0; i < g->nsw; i++) {
		g->adj0[i + 1] += g->adj0[i];
		g->hadj0[i + 1] += g->hadj0[i];
	}
	g->adj = tgi_malloc(ns * sizeof(uint32_t) + 1);
	g->hadj = tgi_malloc(nh * sizeof(uint32_t) + 1);
	fill = tgi_malloc(((size_t)g->nsw + 1) * sizeof(uint32_t));
	hfill = tgi_malloc(((size_t)g->nsw + 1) * sizeof(uint32_t));
	if (!g->adj || !g->hadj || !fill || !hfill) {
		tgi_free(fill);
		tgi_free(hfill);
		return TG_ENOMEM;
	}
	memcpy(fill, g->adj0, ((size_t)g->nsw + 1) * sizeof(uint32_t));
	memcpy(hfill, g->hadj0, ((size_t)g->nsw + 1) * sizeof(uint32_t));
	for (i = 0; i < f->nlinks; i++) {
		uint32_t a = g->swidx[f->links[i].a];
		uint32_t b = g->swidx[f->links[i].b];

		if (a != TG_NONE && b != TG_NONE) {
			g->adj[fill[a]++] = b;
			g->adj[fill[b]++] = a;
		} else if (a != TG_NONE && g->hostof[f->links[i].b]) {
			g->hadj[hfill[a]++] = g->hostof[f->links[i].b];
		} else if (b != TG_NONE && g->hostof[f->links[i].a]) {
			g->hadj[hfill[b]++] = g->hostof[f->links[i].a];
		}
	}
	tgi_free(fill);
	tgi_free(hfill);
	return TG_OK;
}

/*
 * Levels and groups.  Leaves (level 0) are unioned through shared hosts;
 * a breadth-first walk gives every other switch its level (switches that
 * hosts hang off, all of them dropped by the host-map rule, get none and
 * are left out: they are some other unit's leaves, not parents); then,
 * level by level, the parents of one group are unioned.
 */
static tg_err gb_tree(gb_ctx *g, unsigned *nlevels)
{
	tg_fabric *f = g->f;
	uint32_t *queue = NULL, s, top = 0;
	size_t qh = 0, qt = 0, nstrs = f->strs.n + 1;
	unsigned l;
	tg_err err = TG_OK;

	g->level = tgi_malloc(((size_t)g->nsw + 1) * sizeof(uint32_t));
	g->uf = tgi_malloc(((size_t)g->nsw + 1) * sizeof(uint32_t));
	g->uplink = tgi_malloc(((size_t)g->nsw + 1) * sizeof(uint32_t));
	g->hostleaf = tgi_calloc(nstrs, sizeof(uint32_t));
	g->hosts = tgi_malloc(nstrs * sizeof(uint32_t));
	queue = tgi_malloc(((size_t)g->nsw + 1) * sizeof(uint32_t));
	if (!g->level || !g->uf || !g->uplink || !g->hostleaf || !g->hosts ||
	    !queue) {
		err = TG_ENOMEM;
		goto out;
	}
	for (s = 0; s < g->nsw; s++) {
		g->uf[s] = s;
		g->uplink[s] = TG_NONE;
		g->level[s] = TG_NONE;
	}
	g->nhosts = 0;
	for (s = 0; s < g->nsw; s++) {
		uint32_t k;

		for (k = g->hadj0[s]; k < g->hadj0[s + 1]; k++) {
			uint32_t h = g->hadj[k];

			if (!g->hostleaf[h]) {
				g->hostleaf[h] = s + 1;
				g->hosts[g->nhosts++] = h;
			} else {
				uf_union(g->uf, s, g->hostleaf[h] - 1);
			}
		}
		if (g->hadj0[s + 1] > g->hadj0[s]) {
			g->level[s] = 0;
			queue[qt++] = s;
		}
	}
	while (qh < qt) {
		uint32_t k;

		s = queue[qh++];
		for (k = g->adj0[s]; k < g->adj0[s + 1]; k++) {
			uint32_t p = g->adj[k];

			/* a switch hosts hang off is a leaf or nothing:
			 * the host-map rule may have dropped its hosts */
			if (g->level[p] != TG_NONE || g->edge[p])
				continue;
			g->level[p] = g->level[s] + 1;
			if (g->level[p] > top)
				top = g->level[p];
			queue[qt++] = p;
		}
	}
	if (top + 1 > TG_MAX_LAYERS) {
		err = TG_ELIMIT;
		goto out;
	}
	/* level by level: parents of one group are one group */
	for (l = 0; l < top; l++) {
		for (s = 0; s < g->nsw; s++) {
			uint32_t k, r;

			if (g->level[s] != l)
				continue;
			r = uf_find(g->uf, s);
			for (k = g->adj0[s]; k < g->adj0[s + 1]; k++) {
				uint32_t p = g->adj[k];

				if (g->level[p] != l + 1)
					continue;
				if (g->uplink[r] == TG_NONE)
					g->uplink[r] = p;
				else
					uf_union(g->uf, p, g->uplink[r]);
			}
		}
	}
	f->sum.unlinked = 0;
	for (s = 0; s < g->nsw; s++)
		if (g->level[s] == TG_NONE)
			f->sum.unlinked++;
	*nlevels = g->nhosts ? top + 1 : 0;
out:
	tgi_free(queue);
	return err;
}

/* A group's name: its member whose name sorts first; the group table
 * lists every group's members. */
static tg_err gb_groups(gb_ctx *g, uint32_t *gname)
{
	tg_fabric *f = g->f;
	uint32_t s, *gidx = NULL, *start = NULL, *members = NULL;
	const char **names = NULL;
	size_t ng = 0, i;
	tg_err err = TG_ENOMEM;

	for (s = 0; s < g->nsw; s++)
		gname[s] = 0;
	for (s = 0; s < g->nsw; s++) {
		uint32_t r;
		const char *a, *b;

		if (g->level[s] == TG_NONE)
			continue;
		r = uf_find(g->uf, s);
		if (!gname[r]) {
			gname[r] = g->swname[s];
			continue;
		}
		a = tgi_strtab_get(&f->strs, g->swname[s]);
		b = tgi_strtab_get(&f->strs, gname[r]);
		if (tg_name_cmp(a, b) < 0)
			gname[r] = g->swname[s];
	}
	tgi_fab_groups_free(f);
	gidx = tgi_malloc(((size_t)g->nsw + 1) * sizeof(uint32_t));
	start = tgi_calloc((size_t)g->nsw + 2, sizeof(uint32_t));
	members = tgi_malloc(((size_t)g->nsw + 1) * sizeof(uint32_t));
	names = tgi_malloc(((size_t)g->nsw + 1) * sizeof(char *));
	if (!gidx || !start || !members || !names)
		goto out;
	for (s = 0; s < g->nsw; s++) {
		gidx[s] = TG_NONE;
		if (g->level[s] != TG_NONE && uf_find(g->uf, s) == s)
			gidx[s] = (uint32_t)ng++;
	}
	f->groups = tgi_calloc(ng + 1, sizeof(fgroup));
	if (!f->groups)
		goto out;
	/* bucket the switches by group */
	for (s = 0; s < g->nsw; s++)
		if (g->level[s] != TG_NONE)
			start[gidx[uf_find(g->uf, s)] + 1]++;
	for (i = 0; i < ng; i++)
		start[i + 1] += start[i];
	for (s = 0; s < g->nsw; s++)
		if (g->level[s] != TG_NONE)
			members[start[gidx[uf_find(g->uf, s)]]++] =
				g->swname[s];
	for (i = ng; i > 0; i--)
		start[i] = start[i - 1];
	start[0] = 0;
	for (s = 0; s < g->nsw; s++) {
		fgroup *gr;
		uint32_t *m, nm, k;

		if (gidx[s] == TG_NONE)
			continue;
		gr = &f->groups[f->ngroups++];
		gr->name = gname[s];
		gr->level = g->level[s];
		m = members + start[gidx[s]];
		nm = start[gidx[s] + 1] - start[gidx[s]];
		if (tgi_fab_sort_ids(&f->strs, m, nm))
			goto out;
		for (k = 0; k < nm; k++)
			names[k] = tgi_strtab_get(&f->strs, m[k]);
		gr->members = tg_hostlist_compress(names, nm);
		gr->nmembers = nm;
		if (!gr->members)
			goto out;
	}
	err = TG_OK;
out:
	tgi_free(gidx);
	tgi_free(start);
	tgi_free(members);
	tgi_free(names);
	return err;
}

static int group_cmp(const void *x, const void *y)
{
	const fgroup *a = x, *b = y;

	if (a->level != b->level)
		return a->level < b->level ? -1 : 1;
	return tg_name_cmp(a->sname, b->sname);
}

/* The switch path of a graph host: a group stands on its level and those
 * up to its parent's. */
typedef struct graph_paths {
	tg_fabric *f;
	gb_ctx *g;
	uint32_t *gname;
	unsigned nlevels;
} graph_paths;

static void graph_path(void *ctx, uint32_t h, const char **path)
{
	graph_paths *gp = ctx;
	gb_ctx *g = gp->g;
	uint32_t s = g->hostleaf[h] - 1;
	unsigned k, n = gp->nlevels;

	for (;;) {
		uint32_t r = uf_find(g->uf, s), up = g->uplink[r];
		unsigned lo = g->level[s];
		unsigned hi = up == TG_NONE ? n : g->level[up];

		for (k = lo; k < hi; k++)
			path[n - 1 - k] = tgi_strtab_get(&gp->f->strs,
							 gp->gname[r]);
		if (up == TG_NONE)
			break;
		s = up;
	}
}

tg_err tgi_fab_build_graph(tg_fabric *f, tg_topology *t, tg_errinfo *ei)
{
	gb_ctx g;
	graph_paths gp;
	uint32_t *gname = NULL;
	unsigned nlevels = 0, k;
	size_t i;
	tg_err err;

	memset(&g, 0, sizeof(g));
	g.f = f;
	g.ei = ei;
	f->sum.unnamed = f->sum.dropped = 0;
	err = gb_names(&g);
	if (!err)
		err = gb_adjacency(&g);
	if (!err)
		err = gb_tree(&g, &nlevels);
	if (err == TG_ELIMIT) {
		err = tgi_errf(ei, err, "%s: the switch tree is deeper than "
			       "%d levels", tgi_fab_src(f, 0), TG_MAX_LAYERS);
		goto out;
	}
	if (err)
		goto nomem;
	if (!g.nhosts) {
		err = tgi_errf(ei, TG_EINVAL, "%s: no host is attached to a "
			       "switch (%u host ports: %u without a host name, "
			       "%u dropped by the host-map rule)",
			       tgi_fab_src(f, 0), f->sum.host_ports,
			       f->sum.unnamed, f->sum.dropped);
		goto out;
	}
	gname = tgi_malloc(((size_t)g.nsw + 1) * sizeof(uint32_t));
	if (!gname || gb_groups(&g, gname))
		goto nomem;
	for (i = 0; i < f->ngroups; i++)
		f->groups[i].sname = tgi_strtab_get(&f->strs,
						    f->groups[i].name);
	qsort(f->groups, f->ngroups, sizeof(fgroup), group_cmp);
	f->sum.levels = nlevels;
	f->sum.groups = (unsigned)f->ngroups;
	f->sum.hosts = (unsigned)g.nhosts;

	for (k = nlevels; k > 0; k--) {
		char name[32], key[64];

		snprintf(name, sizeof(name), "switch-l%u", k - 1);
		snprintf(key, sizeof(key), TG_LABEL_TIER_PREFIX "%u", k - 1);
		err = tg_topology_add_layer(t, name, key);
		if (err) {
			err = tgi_errf(ei, err, "cannot add layer %s: %s",
				       name, tg_strerror(err));
			goto out;
		}
	}
	if (tgi_fab_sort_ids(&f->strs, g.hosts, g.nhosts))
		goto nomem;
	gp.f = f;
	gp.g = &g;
	gp.gname = gname;
	gp.nlevels = nlevels;
	err = tgi_fab_add_hosts(f, t, g.hosts, g.nhosts, nlevels, graph_path, &gp,
			ei);
	goto out;
nomem:
	err = tgi_errf(ei, TG_ENOMEM, "out of memory building the fabric");
out:
	tgi_free(gname);
	gb_free(&g);
	return err;
}

