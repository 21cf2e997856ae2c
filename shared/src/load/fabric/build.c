/*
 * shared/src/load/fabric/build.c - tg_fabric_build(): what the inputs
 * recorded (a switch graph, a host table, NVLink domains) becomes layers
 * and nodes of an empty topology (fabric.h says how).  The graph's
 * levels and groups are worked out in graph.c; the hosts of every shape
 * are added here, in tg_name_cmp() order, with their NVLink domain as
 * the lowest layer when the fabric has any.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric_int.h"

/* A string id with its text, for sorting without a global context. */
typedef struct fnid {
	const char *s;
	uint32_t id;
} fnid;

static int fnid_cmp(const void *a, const void *b)
{
	return tg_name_cmp(((const fnid *)a)->s, ((const fnid *)b)->s);
}

/* Sorts string ids of \p st in tg_name_cmp() order of their text. */
tg_err tgi_fab_sort_ids(const tgi_strtab *st, uint32_t *ids, size_t n)
{
	fnid *tmp = tgi_malloc((n + 1) * sizeof(fnid));
	size_t i;

	if (!tmp)
		return TG_ENOMEM;
	for (i = 0; i < n; i++) {
		tmp[i].s = tgi_strtab_get(st, ids[i]);
		tmp[i].id = ids[i];
	}
	qsort(tmp, n, sizeof(fnid), fnid_cmp);
	for (i = 0; i < n; i++)
		ids[i] = tmp[i].id;
	tgi_free(tmp);
	return TG_OK;
}

/* ---- NVLink domains in the tree ----------------------------------------- */

/* The first host seen of an NVLink domain, and where it hangs. */
typedef struct nvl_span {
	uint32_t domain;
	uint32_t host;
	const char *path[TG_MAX_LAYERS];
	bool warned;
} nvl_span;

/* The NVLink domain (strs id) of host \p h, 0 when none. */
static uint32_t nvl_domain(const tg_fabric *f, uint32_t h)
{
	if (h >= f->nnvlof || !f->nvl_of[h])
		return 0;
	return f->nvl[f->nvl_of[h] - 1].domain;
}

/* "a/b/c" of \p n values into \p out. */
static const char *path_text(const char *const *path, unsigned n, char *out,
			     size_t cap)
{
	size_t k = 0;
	unsigned i;

	out[0] = '\0';
	for (i = 0; i < n && k + 1 < cap; i++)
		k += (size_t)snprintf(out + k, cap - k, "%s%s", i ? "/" : "",
				      path[i] ? path[i] : "?");
	return out;
}

/* Warns once per domain whose hosts hang off different switches. */
static tg_err nvl_span_check(tg_fabric *f, nvl_span **sp, size_t *nsp,
			     size_t *cap, uint32_t dom, uint32_t host,
			     const char *const *path, unsigned nlev)
{
	char a[512], b[512];
	nvl_span *s = NULL;
	size_t i;
	unsigned k;

	for (i = 0; i < *nsp && !s; i++)
		if ((*sp)[i].domain == dom)
			s = &(*sp)[i];
	if (!s) {
		if (tgi_grow(sp, cap, *nsp + 1, sizeof(nvl_span)))
			return TG_ENOMEM;
		s = &(*sp)[(*nsp)++];
		memset(s, 0, sizeof(*s));
		s->domain = dom;
		s->host = host;
		for (k = 0; k < nlev; k++)
			s->path[k] = path[k];
		return TG_OK;
	}
	if (s->warned)
		return TG_OK;
	for (k = 0; k < nlev; k++)
		if (!s->path[k] != !path[k] ||
		    (path[k] && strcmp(s->path[k], path[k]) != 0))
			break;
	if (k == nlev)
		return TG_OK;
	s->warned = true;
	return tgi_fab_warn(f, "NVLink domain '%s' spans switches: %s is under "
			"%s, %s under %s; each part is a domain of its own",
			tgi_strtab_get(&f->strs, dom),
			tgi_strtab_get(&f->strs, s->host),
			path_text(s->path, nlev, a, sizeof(a)),
			tgi_strtab_get(&f->strs, host),
			path_text(path, nlev, b, sizeof(b)));
}

/* One warning naming the hosts of \p ids (a compressed hostlist). */
static tg_err warn_hosts(tg_fabric *f, const uint32_t *ids, size_t n,
			 const char *what)
{
	const char **names;
	char *hl;
	size_t i;
	tg_err err;

	if (!n)
		return TG_OK;
	names = tgi_malloc(n * sizeof(char *));
	if (!names)
		return TG_ENOMEM;
	for (i = 0; i < n; i++)
		names[i] = tgi_strtab_get(&f->strs, ids[i]);
	hl = tg_hostlist_compress(names, (unsigned)n);
	tgi_free(names);
	if (!hl)
		return TG_ENOMEM;
	err = tgi_fab_warn(f, "%zu host%s %s: %.300s%s", n, n == 1 ? "" : "s",
		       what, hl, strlen(hl) > 300 ? "..." : "");
	tg_free(hl);
	return err;
}

/*
 * Adds the hosts to \p t, in tg_name_cmp() order: \p hosts (nh strs
 * ids, sorted) of the switch fabric, whose \p nlev switch values \p fn
 * fills, and the hosts that only the NVLink list names (no switch
 * values).  With NVLink domains the lowest layer "nvlink" (key
 * TG_LABEL_ACCEL) is added first and each path gets the host's domain
 * (missing when it has none).  Counts into f->sum.
 */
tg_err tgi_fab_add_hosts(tg_fabric *f, tg_topology *t, const uint32_t *hosts,
			 size_t nh, unsigned nlev, tgi_fab_path_fn fn,
			 void *ctx, tg_errinfo *ei)
{
	uint32_t *extra = NULL, *nodom = NULL, *doms = NULL;
	nvl_span *sp = NULL;
	size_t nx = 0, nnd = 0, nsp = 0, spcap = 0, i = 0, j = 0, k;
	tg_err err = TG_OK;

	if (f->nnvl) {
		err = tg_topology_add_layer(t, "nvlink", TG_LABEL_ACCEL);
		if (err)
			return tgi_errf(ei, err, "cannot add layer nvlink: %s",
					tg_strerror(err));
		extra = tgi_malloc((f->nnvl + 1) * sizeof(uint32_t));
		nodom = tgi_malloc((nh + 1) * sizeof(uint32_t));
		doms = tgi_malloc((f->nnvl + 1) * sizeof(uint32_t));
		if (!extra || !nodom || !doms)
			goto nomem;
		for (k = 0; k < f->nnvl; k++)
			f->nvl[k].used = false;
		for (k = 0; k < nh; k++)
			if (hosts[k] < f->nnvlof && f->nvl_of[hosts[k]])
				f->nvl[f->nvl_of[hosts[k]] - 1].used = true;
		for (k = 0; k < f->nnvl; k++)
			if (!f->nvl[k].used)
				extra[nx++] = f->nvl[k].host;
		if (tgi_fab_sort_ids(&f->strs, extra, nx))
			goto nomem;
		/* distinct domains, for the summary */
		for (k = 0; k < f->nnvl; k++)
			doms[k] = f->nvl[k].domain;
		if (tgi_fab_sort_ids(&f->strs, doms, f->nnvl))
			goto nomem;
		f->sum.nvl_domains = 0;
		for (k = 0; k < f->nnvl; k++)
			if (!k || doms[k] != doms[k - 1])
				f->sum.nvl_domains++;
		f->sum.nvl_hosts = (unsigned)f->nnvl;
	}
	while (i < nh || j < nx) {
		const char *path[TG_MAX_LAYERS + 1];
		bool sw = j == nx || (i < nh &&
			  tg_name_cmp(tgi_strtab_get(&f->strs, hosts[i]),
				      tgi_strtab_get(&f->strs, extra[j])) < 0);
		uint32_t h = sw ? hosts[i++] : extra[j++], dom;
		const char *hn = tgi_strtab_get(&f->strs, h);

		for (k = 0; k < nlev; k++)
			path[k] = NULL;
		if (sw)
			fn(ctx, h, path);
		if (f->nnvl) {
			dom = nvl_domain(f, h);
			path[nlev] = dom ? tgi_strtab_get(&f->strs, dom) :
				     NULL;
			if (!dom)
				nodom[nnd++] = h;
			else if (sw && nvl_span_check(f, &sp, &nsp, &spcap,
						      dom, h, path, nlev))
				goto nomem;
		}
		err = tg_topology_add_node(t, hn, path, NULL);
		if (err) {
			err = tgi_errf(ei, err, "cannot add node %s: %s", hn,
				       tg_strerror(err));
			goto out;
		}
	}
	f->sum.hosts = (unsigned)(nh + nx);
	if (warn_hosts(f, nodom, nnd, "of the switch fabric are in no "
		       "NVLink domain of the compute-node list") ||
	    (nh && warn_hosts(f, extra, nx, "of the compute-node list are "
			      "on no switch of the fabric")))
		goto nomem;
	goto out;
nomem:
	err = tgi_errf(ei, TG_ENOMEM, "out of memory building the fabric");
out:
	tgi_free(extra);
	tgi_free(nodom);
	tgi_free(doms);
	tgi_free(sp);
	return err;
}

static void table_path(void *ctx, uint32_t h, const char **path)
{
	tg_fabric *f = ctx;
	const frow *r = &f->rows[f->row_of[h] - 1];
	unsigned k;

	for (k = 0; k < f->nlayers; k++)
		path[k] = tgi_strtab_get(&f->strs, r->path[k]);
}
static tg_err build_table(tg_fabric *f, tg_topology *t, tg_errinfo *ei)
{
	uint32_t *order = NULL;
	unsigned k;
	size_t i;
	tg_err err;

	if (!f->nrows)
		return tgi_errf(ei, TG_EINVAL, "%s: no host rows (%u rows: "
				"%u dropped by the host-map rule, %u without "
				"a valid name)", tgi_fab_src(f, 0),
				f->sum.host_ports, f->sum.dropped,
				f->sum.unnamed);
	for (k = 0; k < f->nlayers; k++) {
		char key[64];

		snprintf(key, sizeof(key), TG_LABEL_TIER_PREFIX "%u",
			 f->nlayers - 1 - k);
		err = tg_topology_add_layer(t, f->layer_name[k], key);
		if (err)
			return tgi_errf(ei, err, "cannot add layer %s: %s",
					f->layer_name[k], tg_strerror(err));
	}
	order = tgi_malloc(f->nrows * sizeof(uint32_t));
	if (!order)
		return tgi_errf(ei, TG_ENOMEM, "out of memory");
	for (i = 0; i < f->nrows; i++)
		order[i] = f->rows[i].host;
	if (tgi_fab_sort_ids(&f->strs, order, f->nrows)) {
		tgi_free(order);
		return tgi_errf(ei, TG_ENOMEM, "out of memory");
	}
	err = tgi_fab_add_hosts(f, t, order, f->nrows, f->nlayers, table_path, f, ei);
	tgi_free(order);
	if (err)
		return err;
	f->sum.levels = f->nlayers;
	f->sum.groups = 0;
	return TG_OK;
}

tg_err tg_fabric_build(tg_fabric *f, tg_topology *t, tg_errinfo *ei)
{
	if (!f || !t)
		return tgi_errf(ei, TG_EINVAL, "tg_fabric_build: NULL");
	if (f->failed)
		return tgi_errf(ei, TG_ESTATE, "an input of the fabric failed "
				"to load");
	if (!f->any_input)
		return tgi_errf(ei, TG_EINVAL, "the fabric has no input");
	if (tg_topology_nlayers(t) || tg_topology_nnodes(t))
		return tgi_errf(ei, TG_ESTATE, "the topology already has "
				"layers or nodes");
	if (f->shape == TGI_FAB_TABLE)
		return build_table(f, t, ei);
	if (f->shape == TGI_FAB_GRAPH)
		return tgi_fab_build_graph(f, t, ei);
	/* NVLink domains alone: one layer */
	if (!f->nnvl)
		return tgi_errf(ei, TG_EINVAL, "%s: no compute node with an "
				"NVLink domain", tgi_fab_src(f, 0));
	f->sum.levels = 0;
	f->sum.groups = 0;
	return tgi_fab_add_hosts(f, t, NULL, 0, 0, NULL, NULL, ei);
}
