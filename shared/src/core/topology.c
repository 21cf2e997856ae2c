/*
 * shared/src/core/topology.c - the topology model: layers, nodes, the domain
 * tree, allocations, the invariant checker and the bandwidth model.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static const char *const builtin_res[] = {
	"cpu", "memory", "nvidia.com/gpu", "pods"
};

tg_topology *tg_topology_create(void)
{
	tg_topology *t = tgi_calloc(1, sizeof(*t));
	unsigned i;

	if (!t)
		return NULL;
	tgi_strtab_init(&t->strs);
	for (i = 0; i < 4; i++) {
		t->res_name[i] = tgi_strdup(builtin_res[i]);
		if (!t->res_name[i])
			goto fail;
		t->nres = i + 1;	/* what destroy frees */
	}
	t->stride = 4;
	return t;
fail:
	tg_topology_destroy(t);
	return NULL;
}

void tg_topology_destroy(tg_topology *t)
{
	size_t i;

	if (!t)
		return;
	if (t->scratch && t->scratch_free)
		t->scratch_free(t->scratch);
	for (i = 0; i < t->nlayers; i++) {
		tgi_free(t->layer_name[i]);
		tgi_free(t->layer_key[i]);
	}
	for (i = 0; i < t->nres; i++)
		tgi_free(t->res_name[i]);
	tgi_strtab_free(&t->strs);
	tgi_free(t->name);
	tgi_free(t->path);
	tgi_free(t->alloc);
	tgi_free(t->freev);
	tgi_free(t->gpu_free);
	tgi_free(t->gfree);
	tgi_free(t->ngpus);
	tgi_free(t->layout);
	tgi_free(t->flags);
	tgi_free(t->lab_head);
	tgi_free(t->taint_head);
	tgi_free(t->node_of_name);
	tgi_free(t->labels);
	tgi_free(t->taints);
	tgi_free(t->layouts);
	tgi_free(t->order);
	tgi_free(t->pos);
	tgi_free(t->leaf);
	for (i = 0; i < t->ndom; i++)
		tgi_free(t->dom[i].path);
	tgi_free(t->dom);
	for (i = 0; i < t->nwarn; i++)
		tgi_free(t->warn[i]);
	tgi_free(t->warn);
	tgi_free(t->allocs);
	tgi_free(t->budgets);
	tgi_free(t->lsets);
	tgi_free(t->lpairs);
	tgi_free(t->lset_slots);
	for (i = 0; i < t->lsmemcap; i++)
		tgi_free(t->lsmem[i].a);
	tgi_free(t->lsmem);
	tgi_free(t->lpost_slots);
	tgi_free(t->lposts);
	tgi_free(t->cls);
	tgi_free(t->cls_shape);
	tgi_free(t->cls_slots);
	tgi_free(t->alloc_of_pod);
	tgi_free(t->gnext);
	tgi_free(t->gang_of);
	tgi_free(t);
}

static bool name_ok(const char *s)
{
	size_t n;

	if (!s)
		return false;
	n = strlen(s);
	return n > 0 && n <= TG_MAX_NAME;
}

tg_err tg_topology_add_layer(tg_topology *t, const char *name,
			     const char *key)
{
	char *n, *k = NULL;

	if (!t || !name_ok(name) || (key && !name_ok(key)))
		return TG_EINVAL;
	if (t->nnodes || t->built)
		return TG_ESTATE;
	if (t->nlayers >= TG_MAX_LAYERS)
		return TG_ELIMIT;
	if (tg_topology_layer_find(t, name) != TG_NONE ||
	    (key && tg_topology_layer_find(t, key) != TG_NONE))
		return TG_EEXIST;
	n = tgi_strdup(name);
	if (key)
		k = tgi_strdup(key);
	if (!n || (key && !k)) {
		tgi_free(n);
		tgi_free(k);
		return TG_ENOMEM;
	}
	t->layer_name[t->nlayers] = n;
	t->layer_key[t->nlayers] = k;
	/* slot nlayers is the node level: a node bandwidth set before
	 * this layer moves down with it */
	t->layer_bw[t->nlayers + 1] = t->layer_bw[t->nlayers];
	t->layer_bw_set[t->nlayers + 1] = t->layer_bw_set[t->nlayers];
	t->layer_bw[t->nlayers] = 0;
	t->layer_bw_set[t->nlayers] = false;
	t->nlayers++;
	return TG_OK;
}

unsigned tg_topology_nlayers(const tg_topology *t)
{
	return t ? t->nlayers : 0;
}

const char *tg_topology_layer_name(const tg_topology *t, unsigned layer)
{
	return t && layer < t->nlayers ? t->layer_name[layer] : NULL;
}

const char *tg_topology_layer_key(const tg_topology *t, unsigned layer)
{
	return t && layer < t->nlayers ? t->layer_key[layer] : NULL;
}

unsigned tg_topology_layer_find(const tg_topology *t, const char *name)
{
	unsigned i;

	if (!t || !name)
		return TG_NONE;
	for (i = 0; i < t->nlayers; i++)
		if (strcmp(t->layer_name[i], name) == 0 ||
		    (t->layer_key[i] && strcmp(t->layer_key[i], name) == 0))
			return i;
	return TG_NONE;
}

tg_err tgi_topology_set_node_key(tg_topology *t, const char *key)
{
	if (t->built)
		return TG_ESTATE;
	return tgi_strtab_intern(&t->strs, key, &t->node_key);
}

unsigned tgi_layer_resolve(const tg_topology *t, const char *name)
{
	unsigned l = tg_topology_layer_find(t, name);

	if (l != TG_NONE)
		return l;
	if (!strcmp(name, "kubernetes.io/hostname") ||
	    !strcmp(name, "NodeTopologyLayer") || !strcmp(name, "node") ||
	    !strcmp(name, "hostname"))
		return t->nlayers;
	return TG_NONE;
}

/* Grows the per-node resource columns to hold \p need resources. */
static tg_err restride(tg_topology *t, unsigned need)
{
	int64_t *na = NULL, *nf = NULL, *ns = NULL;
	size_t i, ncap = t->ncap ? t->ncap : 1;
	unsigned r;

	if (need <= t->stride)
		return TG_OK;
	na = tgi_calloc(ncap * need, sizeof(*na));
	nf = tgi_calloc(ncap * need, sizeof(*nf));
	if (t->clscap)
		ns = tgi_calloc(t->clscap * need, sizeof(*ns));
	if (!na || !nf || (t->clscap && !ns))
		goto fail;
	for (i = 0; i < t->nnodes; i++)
		for (r = 0; r < t->stride; r++) {
			na[i * need + r] = t->alloc[i * t->stride + r];
			nf[i * need + r] = t->freev[i * t->stride + r];
		}
	for (i = 0; i < t->ncls; i++)
		for (r = 0; r < t->stride; r++)
			ns[i * need + r] = t->cls_shape[i * t->stride + r];
	tgi_free(t->alloc);
	tgi_free(t->freev);
	tgi_free(t->cls_shape);
	t->alloc = na;
	t->freev = nf;
	t->cls_shape = ns;
	t->stride = need;
	t->gen++;
	return TG_OK;
fail:
	tgi_free(na);
	tgi_free(nf);
	tgi_free(ns);
	return TG_ENOMEM;
}

tg_err tg_topology_resource(tg_topology *t, const char *name, unsigned *id)
{
	unsigned i;

	if (!t || !name_ok(name) || !id)
		return TG_EINVAL;
	for (i = 0; i < t->nres; i++)
		if (strcmp(t->res_name[i], name) == 0) {
			*id = i;
			return TG_OK;
		}
	if (!strcmp(name, "gpu") || !strcmp(name, "gpus")) {
		*id = TG_RES_GPU;
		return TG_OK;
	}
	if (t->nres >= TG_MAX_RESOURCES)
		return TG_ELIMIT;
	t->res_name[t->nres] = tgi_strdup(name);
	if (!t->res_name[t->nres])
		return TG_ENOMEM;
	*id = t->nres++;
	return TG_OK;
}

unsigned tg_topology_nresources(const tg_topology *t)
{
	return t ? t->nres : 0;
}

const char *tg_topology_resource_name(const tg_topology *t, unsigned id)
{
	return t && id < t->nres ? t->res_name[id] : NULL;
}

static uint32_t *name_slot(const tg_topology *t, const char *name)
{
	size_t j, mask = t->nname_slots - 1;

	j = tgi_hash(name, strlen(name)) & mask;
	while (t->node_of_name[j]) {
		uint32_t n = t->node_of_name[j] - 1;

		if (!strcmp(tgi_strtab_get(&t->strs, t->name[n]), name))
			break;
		j = (j + 1) & mask;
	}
	return &t->node_of_name[j];
}

static tg_err name_rehash(tg_topology *t, size_t nslots)
{
	uint32_t *old = t->node_of_name;
	size_t i;

	t->node_of_name = tgi_calloc(nslots, sizeof(uint32_t));
	if (!t->node_of_name) {
		t->node_of_name = old;
		return TG_ENOMEM;
	}
	t->nname_slots = nslots;
	for (i = 0; i < t->nnodes; i++)
		*name_slot(t, tgi_strtab_get(&t->strs, t->name[i])) =
			(uint32_t)i + 1;
	tgi_free(old);
	return TG_OK;
}

static tg_err grow_nodes(tg_topology *t)
{
	size_t ncap = t->ncap ? t->ncap * 2 : 64;
	size_t L = t->nlayers ? t->nlayers : 1;
	void *p;

#define GROW(field, per)						\
	do {								\
		p = tgi_realloc(t->field, ncap * (per) * sizeof(*t->field)); \
		if (!p)							\
			return TG_ENOMEM;				\
		t->field = p;						\
	} while (0)
	GROW(name, 1);
	GROW(path, L);
	GROW(alloc, t->stride);
	GROW(freev, t->stride);
	GROW(gpu_free, 1);
	GROW(gfree, 1);
	GROW(ngpus, 1);
	GROW(layout, 1);
	GROW(flags, 1);
	GROW(lab_head, 1);
	GROW(taint_head, 1);
#undef GROW
	t->ncap = ncap;
	return TG_OK;
}

tg_err tg_topology_add_node(tg_topology *t, const char *name,
			    const char *const *path, tg_node_id *id)
{
	uint32_t nid, *slot, vals[TG_MAX_LAYERS];
	size_t n;
	unsigned l, r;
	tg_err err;

	if (!t || !name_ok(name))
		return TG_EINVAL;
	if (t->built)
		return TG_ESTATE;
	if (t->nnodes >= TG_MAX_NODES)
		return TG_ELIMIT;
	for (l = 0; path && l < t->nlayers; l++)
		if (path[l] && strlen(path[l]) > TG_MAX_NAME)
			return TG_EINVAL;
	if ((t->nnodes + 1) * 2 > t->nname_slots &&
	    (err = name_rehash(t, t->nname_slots ? t->nname_slots * 2 : 128)))
		return err;
	slot = name_slot(t, name);
	if (*slot)
		return TG_EEXIST;
	if (t->nnodes == t->ncap && (err = grow_nodes(t)))
		return err;
	if ((err = tgi_strtab_intern(&t->strs, name, &nid)))
		return err;
	for (l = 0; l < t->nlayers; l++) {
		vals[l] = 0;
		if (path && path[l] && *path[l] &&
		    (err = tgi_strtab_intern(&t->strs, path[l], &vals[l])))
			return err;
	}
	n = t->nnodes;
	t->name[n] = nid;
	for (l = 0; l < t->nlayers; l++)
		t->path[n * t->nlayers + l] = vals[l];
	for (r = 0; r < t->stride; r++) {
		t->alloc[n * t->stride + r] = 0;
		t->freev[n * t->stride + r] = 0;
	}
	t->gpu_free[n] = 0;
	t->gfree[n] = 0;
	t->ngpus[n] = 0;
	t->layout[n] = 0;
	t->flags[n] = 0;
	t->lab_head[n] = 0;
	t->taint_head[n] = 0;
	*slot = (uint32_t)n + 1;
	t->nnodes++;
	if (id)
		*id = (tg_node_id)n;
	return TG_OK;
}

static bool node_ok(const tg_topology *t, tg_node_id n)
{
	return t && n < t->nnodes;
}

tg_err tg_topology_node_set_resource(tg_topology *t, tg_node_id n,
				     unsigned res, int64_t allocatable)
{
	size_t i;
	int64_t used;
	tg_err err;

	if (!node_ok(t, n) || res >= t->nres || allocatable < 0)
		return TG_EINVAL;
	if (res == TG_RES_GPU && allocatable <= TG_MAX_GPUS &&
	    t->ngpus[n] != allocatable)
		return tg_topology_node_set_gpus(t, n, (unsigned)allocatable,
						 NULL);
	if ((err = restride(t, res + 1)))
		return err;
	i = (size_t)n * t->stride + res;
	used = t->alloc[i] - t->freev[i];
	t->alloc[i] = allocatable;
	t->freev[i] = allocatable - used;
	tgi_gfree_sync(t, n);
	return TG_OK;
}

static tg_err layout_intern(tg_topology *t, const uint8_t *isl,
			    unsigned ngpus, uint16_t *id)
{
	uint8_t lay[TG_MAX_GPUS];
	size_t i;

	memset(lay, 0, sizeof(lay));
	if (isl)
		memcpy(lay, isl, ngpus);
	for (i = 0; i < t->nlayouts; i++)
		if (!memcmp(t->layouts[i], lay, sizeof(lay))) {
			*id = (uint16_t)i;
			return TG_OK;
		}
	if (t->nlayouts >= UINT16_MAX)
		return TG_ELIMIT;
	if (tgi_grow(&t->layouts, &t->laycap, t->nlayouts + 1,
		     sizeof(*t->layouts)))
		return TG_ENOMEM;
	memcpy(t->layouts[t->nlayouts], lay, sizeof(lay));
	*id = (uint16_t)t->nlayouts++;
	return TG_OK;
}

tg_err tg_topology_node_set_gpus(tg_topology *t, tg_node_id n,
				 unsigned ngpus, const uint8_t *island)
{
	uint16_t lay;
	size_t i;
	int64_t used;
	uint64_t all;
	tg_err err;

	if (!node_ok(t, n) || ngpus > TG_MAX_GPUS)
		return TG_EINVAL;
	if (t->ngpus[n] != 0 && t->gpu_free[n] !=
	    (t->ngpus[n] == 64 ? ~0ull : (1ull << t->ngpus[n]) - 1))
		return TG_ESTATE;	/* GPUs already handed out */
	if ((err = layout_intern(t, island, ngpus, &lay)))
		return err;
	all = ngpus == 64 ? ~0ull : (1ull << ngpus) - 1;
	t->ngpus[n] = (uint8_t)ngpus;
	t->layout[n] = lay;
	t->gpu_free[n] = all;
	i = (size_t)n * t->stride + TG_RES_GPU;
	used = t->alloc[i] - t->freev[i];
	t->alloc[i] = ngpus;
	t->freev[i] = (int64_t)ngpus - used;
	tgi_gfree_sync(t, n);
	return TG_OK;
}

tg_err tg_topology_node_add_label(tg_topology *t, tg_node_id n,
				  const char *key, const char *value)
{
	uint32_t k, v;
	tg_err err;

	if (!node_ok(t, n) || !name_ok(key) || !value ||
	    strlen(value) > TG_MAX_NAME)
		return TG_EINVAL;
	if ((err = tgi_strtab_intern(&t->strs, key, &k)) ||
	    (err = tgi_strtab_intern(&t->strs, value, &v)))
		return err;
	if (tgi_grow(&t->labels, &t->labcap, t->nlabels + 1,
		     sizeof(*t->labels)))
		return TG_ENOMEM;
	t->labels[t->nlabels].key = k;
	t->labels[t->nlabels].value = v;
	t->labels[t->nlabels].next = t->lab_head[n];
	t->lab_head[n] = (uint32_t)++t->nlabels;
	t->gen++;
	return TG_OK;
}

tg_err tg_topology_node_add_taint(tg_topology *t, tg_node_id n,
				  const char *key, const char *value,
				  tg_taint_effect effect)
{
	uint32_t k, v = 0;
	tg_err err;

	if (!node_ok(t, n) || !name_ok(key) ||
	    (value && strlen(value) > TG_MAX_NAME) ||
	    effect < TG_TAINT_NO_SCHEDULE || effect > TG_TAINT_NO_EXECUTE)
		return TG_EINVAL;
	if ((err = tgi_strtab_intern(&t->strs, key, &k)) ||
	    (value && (err = tgi_strtab_intern(&t->strs, value, &v))))
		return err;
	if (tgi_grow(&t->taints, &t->taintcap, t->ntaints + 1,
		     sizeof(*t->taints)))
		return TG_ENOMEM;
	t->taints[t->ntaints].key = k;
	t->taints[t->ntaints].value = v;
	t->taints[t->ntaints].effect = effect;
	t->taints[t->ntaints].next = t->taint_head[n];
	t->taint_head[n] = (uint32_t)++t->ntaints;
	t->flags[n] |= TGI_NODE_TAINTED;
	t->gen++;
	return TG_OK;
}

tg_err tg_topology_node_set_unschedulable(tg_topology *t, tg_node_id n,
					  bool unschedulable)
{
	if (!node_ok(t, n))
		return TG_EINVAL;
	if (unschedulable)
		t->flags[n] |= TGI_NODE_UNSCHED;
	else
		t->flags[n] &= (uint8_t)~TGI_NODE_UNSCHED;
	t->gen++;
	return TG_OK;
}

tg_err tgi_warn(tg_topology *t, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	/* the whole line, however long its names (it was cut at 511) */
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (tgi_grow(&t->warn, &t->warncap, t->nwarn + 1, sizeof(char *)))
		return TG_ENOMEM;
	s = n < 0 ? tgi_strdup(fmt) : tgi_malloc((size_t)n + 1);
	if (!s)
		return TG_ENOMEM;
	if (n >= 0) {
		va_start(ap, fmt);
		vsnprintf(s, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	t->warn[t->nwarn++] = s;
	return TG_OK;
}

/* Tree order of two nodes (\p ctx: the topology), for tgi_sort(). */
int tgi_node_cmp(const void *pa, const void *pb, void *ctx)
{
	const tg_topology *t = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	bool ia = t->flags[a] & TGI_NODE_IN_TREE;
	bool ib = t->flags[b] & TGI_NODE_IN_TREE;
	unsigned l;
	int c;

	if (ia != ib)
		return ia ? -1 : 1;
	if (ia)
		for (l = 0; l < t->nlayers; l++) {
			uint32_t va = t->path[(size_t)a * t->nlayers + l];
			uint32_t vb = t->path[(size_t)b * t->nlayers + l];

			if (va == vb)
				continue;
			c = tg_name_cmp(tgi_strtab_get(&t->strs, va),
					tgi_strtab_get(&t->strs, vb));
			if (c)
				return c;
		}
	return tg_name_cmp(tgi_strtab_get(&t->strs, t->name[a]),
			   tgi_strtab_get(&t->strs, t->name[b]));
}

static bool accel_layer(const tg_topology *t, unsigned l)
{
	static const char *const words[] = {
		"nvlink", "accelerator", "clique", "nvl", "imex"
	};
	char buf[2 * TG_MAX_NAME + 2];
	size_t i;

	snprintf(buf, sizeof(buf), "%s %s", t->layer_name[l],
		 t->layer_key[l] ? t->layer_key[l] : "");
	for (i = 0; buf[i]; i++)
		buf[i] = (char)tolower((unsigned char)buf[i]);
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(buf, words[i]))
			return true;
	return false;
}

static void default_bandwidth(tg_topology *t)
{
	double tier[] = { 400, 200, 100, 50 };
	unsigned k = 0;
	int l;

	if (!t->layer_bw_set[t->nlayers])
		t->layer_bw[t->nlayers] = 7200;
	for (l = (int)t->nlayers - 1; l >= 0; l--) {
		double bw;

		if (accel_layer(t, (unsigned)l))
			bw = 7200;
		else
			bw = tier[k < 3 ? k++ : 3];
		if (!t->layer_bw_set[l])
			t->layer_bw[l] = bw;
	}
	t->root_bw = t->nlayers ? t->layer_bw[0] / 2 : t->layer_bw[0];
	if (t->nlayers == 0)
		t->root_bw = 400;
	if (t->root_bw < 25)
		t->root_bw = 25;
}

static char *make_path(const tg_topology *t, uint32_t node, unsigned upto)
{
	tg_buf b;
	unsigned l;

	tg_buf_init(&b, (TG_MAX_NAME + 1) * (TG_MAX_LAYERS + 1));
	for (l = 0; l <= upto; l++) {
		if (l)
			tg_buf_add(&b, "/", 1);
		tg_buf_adds(&b, tgi_strtab_get(&t->strs,
				t->path[(size_t)node * t->nlayers + l]));
	}
	return tg_buf_take(&b);
}

/* No node is added after a build: give the columns' slack back. */
static void shrink_nodes(tg_topology *t)
{
	size_t n = t->nnodes ? t->nnodes : 1;
	size_t L = t->nlayers ? t->nlayers : 1;
	void *p;

	if (t->ncap <= n)
		return;
#define SHRINK(field, per)						\
	do {								\
		p = tgi_realloc(t->field, n * (per) * sizeof(*t->field)); \
		if (p)							\
			t->field = p;					\
		else							\
			return;	/* keeping the bigger one is fine */	\
	} while (0)
	SHRINK(name, 1);
	SHRINK(path, L);
	SHRINK(alloc, t->stride);
	SHRINK(freev, t->stride);
	SHRINK(gpu_free, 1);
	SHRINK(gfree, 1);
	SHRINK(ngpus, 1);
	SHRINK(layout, 1);
	SHRINK(flags, 1);
	SHRINK(lab_head, 1);
	SHRINK(taint_head, 1);
#undef SHRINK
	t->ncap = n;
}

/* Does node \p n carry the node-level label (non-empty)? */
static bool node_has_key(const tg_topology *t, uint32_t n)
{
	const char *v = tg_topology_node_label(t, n,
			tgi_strtab_get(&t->strs, t->node_key));

	return v && *v;
}

/* Undoes what a failed build did, so that it may be called again. */
static void build_undo(tg_topology *t, size_t nwarn)
{
	size_t i;

	for (i = 0; i < t->nnodes; i++) {
		if (t->flags[i] & TGI_NODE_OWN_ACCEL)
			t->path[i * t->nlayers + t->nlayers - 1] = 0;
		t->flags[i] &= (uint8_t)~(TGI_NODE_IN_TREE |
					  TGI_NODE_OWN_ACCEL);
	}
	t->ntree = 0;
	tgi_free(t->order);
	tgi_free(t->pos);
	tgi_free(t->leaf);
	t->order = t->pos = t->leaf = NULL;
	for (i = 0; i < t->ndom; i++)
		tgi_free(t->dom[i].path);
	tgi_free(t->dom);
	t->dom = NULL;
	t->ndom = 0;
	while (t->nwarn > nwarn)
		tgi_free(t->warn[--t->nwarn]);
}

/*
 * Build step 1 for node \p i: is its path full (a missing accelerator
 * label on the last layer makes it its own accelerator domain)?  Marks
 * it TGI_NODE_IN_TREE, or warns why it stays out.
 */
static tg_err build_mark_node(tg_topology *t, size_t i)
{
	uint32_t *p = &t->path[i * t->nlayers];
	unsigned missing = 0, first = TG_NONE, l;
	const char *nm = tgi_strtab_get(&t->strs, t->name[i]);

	for (l = 0; l < t->nlayers; l++)
		if (!p[l]) {
			missing++;
			if (first == TG_NONE)
				first = l;
		}
	if (missing == 1 && first == t->nlayers - 1 &&
	    t->nlayers > 1 && accel_layer(t, first)) {
		/* Koordinator: a node without its accelerator label is its
		 * own accelerator domain. */
		if (tgi_strtab_intern(&t->strs, nm, &p[first]))
			return TG_ENOMEM;
		t->flags[i] |= TGI_NODE_OWN_ACCEL;
		if (tgi_warn(t, "node %s: no %s label (layer %s); "
			     "treated as its own %s domain", nm,
			     t->layer_key[first] ? t->layer_key[first]
			     : t->layer_name[first],
			     t->layer_name[first],
			     t->layer_name[first]))
			return TG_ENOMEM;
		missing = 0;
	}
	if (missing)
		return tgi_warn(t, "node %s: no %s label (layer %s); "
				"left out of topology-aware placement",
				nm, t->layer_key[first] ?
				t->layer_key[first] :
				t->layer_name[first],
				t->layer_name[first]) ? TG_ENOMEM : TG_OK;
	if (t->node_key && !node_has_key(t, (uint32_t)i))
		/* Kueue refuses such a node: its node level names it by
		 * that label */
		return tgi_warn(t, "node %s: no %s label (the topology's "
				"node level); left out of "
				"topology-aware placement", nm,
				tgi_strtab_get(&t->strs, t->node_key)) ?
		       TG_ENOMEM : TG_OK;
	t->flags[i] |= TGI_NODE_IN_TREE;
	t->ntree++;
	return TG_OK;
}

/* Build step 2: t->order (tree order), t->pos, t->leaf (none yet). */
static tg_err build_order(tg_topology *t)
{
	size_t i;

	t->order = tgi_malloc((t->nnodes ? t->nnodes : 1) * sizeof(uint32_t));
	t->pos = tgi_malloc((t->nnodes ? t->nnodes : 1) * sizeof(uint32_t));
	t->leaf = tgi_malloc((t->nnodes ? t->nnodes : 1) * sizeof(uint32_t));
	if (!t->order || !t->pos || !t->leaf)
		return TG_ENOMEM;
	for (i = 0; i < t->nnodes; i++)
		t->order[i] = (uint32_t)i;
	tgi_sort(t->order, t->nnodes, sizeof(uint32_t), tgi_node_cmp, t);
	for (i = 0; i < t->nnodes; i++) {
		t->pos[t->order[i]] = (uint32_t)i;
		t->leaf[i] = TG_NONE;
	}
	return TG_OK;
}

/* Does the tree node at position \p i start a new domain on layer \p l?
 * (\p diff: it starts one on the layer above, so here too.) */
static bool starts_domain(const tg_topology *t, size_t i, unsigned l,
			  bool diff)
{
	uint32_t n, pn;

	if (diff || i == 0)
		return true;
	n = t->order[i];
	pn = t->order[i - 1];
	return t->path[(size_t)n * t->nlayers + l] !=
	       t->path[(size_t)pn * t->nlayers + l];
}

/* Build step 3: counts the domains per layer, allocates them and fills
 * the root. */
static tg_err build_count(tg_topology *t)
{
	size_t i, count[TG_MAX_LAYERS + 1], ndom = 1;
	unsigned l;

	memset(count, 0, sizeof(count));
	for (i = 0; i < t->ntree; i++) {
		bool diff = false;

		for (l = 0; l < t->nlayers; l++) {
			diff = starts_domain(t, i, l, diff);
			if (diff)
				count[l]++;
		}
	}
	t->layer_lo[0] = 1;
	for (l = 0; l < t->nlayers; l++) {
		t->layer_lo[l] = (uint32_t)ndom;
		ndom += count[l];
		t->layer_hi[l] = (uint32_t)ndom;
	}
	t->dom = tgi_calloc(ndom, sizeof(*t->dom));
	if (!t->dom)
		return TG_ENOMEM;
	t->ndom = ndom;
	t->dom[0].parent = TG_NONE;
	t->dom[0].layer = TG_NONE;
	t->dom[0].lo = 0;
	t->dom[0].hi = (uint32_t)t->nnodes;
	t->dom[0].child0 = t->nlayers ? t->layer_lo[0] : 0;
	t->dom[0].nchild = t->nlayers ? (uint32_t)count[0] : 0;
	t->dom[0].path = tgi_strdup("");
	return t->dom[0].path ? TG_OK : TG_ENOMEM;
}

/* Build step 4: fills the domains, walking the tree nodes in order. */
static tg_err build_fill(tg_topology *t)
{
	size_t i, idx[TG_MAX_LAYERS];
	uint32_t cur[TG_MAX_LAYERS];
	unsigned l;

	for (l = 0; l < t->nlayers; l++)
		idx[l] = t->layer_lo[l];
	for (i = 0; i < t->ntree; i++) {
		uint32_t n = t->order[i];
		bool diff = false;

		for (l = 0; l < t->nlayers; l++) {
			tgi_domain *d;

			diff = starts_domain(t, i, l, diff);
			if (!diff) {
				t->dom[cur[l]].hi = (uint32_t)i + 1;
				continue;
			}
			cur[l] = (uint32_t)idx[l]++;
			d = &t->dom[cur[l]];
			d->parent = l ? cur[l - 1] : 0;
			d->layer = l;
			d->value = t->path[(size_t)n * t->nlayers + l];
			d->lo = (uint32_t)i;
			d->hi = (uint32_t)i + 1;
			d->child0 = TG_NONE;
			d->nchild = 0;
			d->path = make_path(t, n, l);
			if (!d->path)
				return TG_ENOMEM;
			if (l) {
				tgi_domain *pd = &t->dom[cur[l - 1]];

				if (pd->child0 == TG_NONE)
					pd->child0 = cur[l];
				pd->nchild++;
			}
		}
		t->leaf[n] = t->nlayers ? cur[t->nlayers - 1] : 0;
	}
	for (i = 1; i < t->ndom; i++)
		if (t->dom[i].child0 == TG_NONE)
			t->dom[i].child0 = 0;
	return TG_OK;
}

/* Orders a layer's domains by value, then by index (tgi_sort). */
static int hyg_cmp(const void *x, const void *y, void *ctx)
{
	const tg_topology *t = ctx;
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	uint32_t va = t->dom[a].value, vb = t->dom[b].value;

	if (va != vb)
		return va < vb ? -1 : 1;
	return a < b ? -1 : a > b;
}

/*
 * Build step 5, hygiene: warns about a bare value under two parents, for
 * each domain and the next one of its layer with the same value, in
 * domain order.  Sorted by value (it was a pairwise look that stopped
 * after the first layer of more than 4,096 domains), so every layer is
 * checked at any size.
 */
static tg_err build_hygiene(tg_topology *t)
{
	unsigned l;
	uint32_t *ord = NULL, *next = NULL;
	size_t cap = 0;

	for (l = 1; l < t->nlayers; l++) {
		uint32_t lo = t->layer_lo[l], n = t->layer_hi[l] - lo, i;

		if (n < 2)
			continue;
		if (n > cap) {
			tgi_free(ord);
			tgi_free(next);
			ord = tgi_malloc(n * sizeof(*ord));
			next = tgi_malloc(n * sizeof(*next));
			if (!ord || !next) {
				tgi_free(ord);
				tgi_free(next);
				return TG_ENOMEM;
			}
			cap = n;
		}
		for (i = 0; i < n; i++) {
			ord[i] = lo + i;
			next[i] = TG_NONE;
		}
		tgi_sort(ord, n, sizeof(*ord), hyg_cmp, t);
		for (i = 0; i + 1 < n; i++)
			if (t->dom[ord[i]].value == t->dom[ord[i + 1]].value)
				next[ord[i] - lo] = ord[i + 1];
		for (i = 0; i < n; i++) {
			uint32_t a = lo + i, b = next[i];

			if (b == TG_NONE)
				continue;
			if (tgi_warn(t, "layer %s: value %s appears under %s "
				     "and %s (two different domains)",
				     t->layer_name[l],
				     tgi_strtab_get(&t->strs, t->dom[a].value),
				     t->dom[t->dom[a].parent].path,
				     t->dom[t->dom[b].parent].path)) {
				tgi_free(ord);
				tgi_free(next);
				return TG_ENOMEM;
			}
		}
	}
	tgi_free(ord);
	tgi_free(next);
	return TG_OK;
}

tg_err tg_topology_build(tg_topology *t, tg_errinfo *ei)
{
	size_t i, nwarn0;
	tg_err err = TG_OK;

	if (!t)
		return TG_EINVAL;
	if (t->built)
		return tgi_errf(ei, TG_ESTATE, "topology already built");
	nwarn0 = t->nwarn;
	t->ntree = 0;
	for (i = 0; i < t->nnodes && !err; i++)
		err = build_mark_node(t, i);
	if (err || (err = build_order(t)) || (err = build_count(t)) ||
	    (err = build_fill(t)) || (err = build_hygiene(t))) {
		build_undo(t, nwarn0);
		return tgi_errf(ei, err, "out of memory building the "
				"topology");
	}
	default_bandwidth(t);
	shrink_nodes(t);
	t->built = true;
	t->gen++;
	return TG_OK;
}

unsigned tg_topology_nnodes(const tg_topology *t)
{
	return t ? (unsigned)t->nnodes : 0;
}

const char *tg_topology_node_name(const tg_topology *t, tg_node_id n)
{
	return node_ok(t, n) ? tgi_strtab_get(&t->strs, t->name[n]) : NULL;
}

tg_err tg_topology_node_find(const tg_topology *t, const char *name,
			     tg_node_id *id)
{
	uint32_t *slot;

	if (!t || !name || !t->nname_slots)
		return TG_ENOENT;
	slot = name_slot(t, name);
	if (!*slot)
		return TG_ENOENT;
	if (id)
		*id = *slot - 1;
	return TG_OK;
}

int64_t tg_topology_node_allocatable(const tg_topology *t, tg_node_id n,
				     unsigned res)
{
	if (!node_ok(t, n) || res >= t->stride)
		return 0;
	return t->alloc[(size_t)n * t->stride + res];
}

int64_t tg_topology_node_free(const tg_topology *t, tg_node_id n,
			      unsigned res)
{
	if (!node_ok(t, n))
		return 0;
	return tgi_free_of(t, n, res);
}

uint64_t tg_topology_node_free_gpus(const tg_topology *t, tg_node_id n)
{
	return node_ok(t, n) ? t->gpu_free[n] : 0;
}

unsigned tg_topology_node_ngpus(const tg_topology *t, tg_node_id n)
{
	return node_ok(t, n) ? t->ngpus[n] : 0;
}

const char *tg_topology_node_label(const tg_topology *t, tg_node_id n,
				   const char *key)
{
	uint32_t k, i;

	if (!node_ok(t, n) || !key)
		return NULL;
	k = tgi_strtab_find(&t->strs, key);
	if (!k)
		return NULL;
	for (i = t->lab_head[n]; i; i = t->labels[i - 1].next)
		if (t->labels[i - 1].key == k)
			return tgi_strtab_get(&t->strs, t->labels[i - 1].value);
	return NULL;
}

tg_domain_id tg_topology_node_domain(const tg_topology *t, tg_node_id n)
{
	return node_ok(t, n) && t->built ? t->leaf[n] : TG_NONE;
}

unsigned tg_topology_ndomains(const tg_topology *t)
{
	return t ? (unsigned)t->ndom : 0;
}

unsigned tg_topology_domain_layer(const tg_topology *t, tg_domain_id d)
{
	return t && d < t->ndom ? t->dom[d].layer : TG_NONE;
}

tg_domain_id tg_topology_domain_parent(const tg_topology *t, tg_domain_id d)
{
	return t && d < t->ndom ? t->dom[d].parent : TG_NONE;
}

const char *tg_topology_domain_value(const tg_topology *t, tg_domain_id d)
{
	return t && d < t->ndom ? tgi_strtab_get(&t->strs, t->dom[d].value)
				: NULL;
}

const char *tg_topology_domain_path(const tg_topology *t, tg_domain_id d)
{
	return t && d < t->ndom ? t->dom[d].path : NULL;
}

tg_err tg_topology_domain_find(const tg_topology *t, const char *path,
			       tg_domain_id *id)
{
	size_t i;

	if (!t || !path)
		return TG_EINVAL;
	for (i = 0; i < t->ndom; i++)
		if (!strcmp(t->dom[i].path, path)) {
			if (id)
				*id = (tg_domain_id)i;
			return TG_OK;
		}
	return TG_ENOENT;
}

unsigned tg_topology_nwarnings(const tg_topology *t)
{
	return t ? (unsigned)t->nwarn : 0;
}

const char *tg_topology_warning(const tg_topology *t, unsigned i)
{
	return t && i < t->nwarn ? t->warn[i] : NULL;
}

/* ---- GPUs ---- */

uint64_t tgi_pick_gpus(const uint8_t *lay, unsigned ngpus, uint64_t free,
		       unsigned want)
{
	unsigned cnt[TG_MAX_GPUS], i, best = TG_NONE, isl;
	uint64_t pick = 0;

	if (!want)
		return 0;
	if ((unsigned)__builtin_popcountll(free) < want)
		return 0;
	memset(cnt, 0, sizeof(cnt));
	for (i = 0; i < ngpus; i++)
		if (free >> i & 1)
			cnt[lay[i] % TG_MAX_GPUS]++;
	/* tightest island that holds all */
	for (isl = 0; isl < TG_MAX_GPUS; isl++)
		if (cnt[isl] >= want && (best == TG_NONE || cnt[isl] < cnt[best]))
			best = isl;
	if (best != TG_NONE) {
		for (i = 0; i < ngpus && want; i++)
			if ((free >> i & 1) && lay[i] % TG_MAX_GPUS == best) {
				pick |= 1ull << i;
				want--;
			}
		return pick;
	}
	/* otherwise the fullest islands first */
	while (want) {
		best = TG_NONE;
		for (isl = 0; isl < TG_MAX_GPUS; isl++)
			if (cnt[isl] && (best == TG_NONE || cnt[isl] > cnt[best]))
				best = isl;
		if (best == TG_NONE)
			return 0;
		for (i = 0; i < ngpus && want; i++)
			if ((free >> i & 1) && lay[i] % TG_MAX_GPUS == best &&
			    !(pick >> i & 1)) {
				pick |= 1ull << i;
				want--;
			}
		cnt[best] = 0;
	}
	return pick;
}

void tgi_node_take(tg_topology *t, uint32_t n, const int64_t *shape,
		   uint64_t gpus)
{
	unsigned r;

	for (r = 0; r < t->stride; r++)
		t->freev[(size_t)n * t->stride + r] -= shape[r];
	t->gpu_free[n] &= ~gpus;
	tgi_gfree_sync(t, n);
}

/* ---- allocations ---- */

static uint32_t *alloc_slot(const tg_topology *t, uint32_t podid)
{
	size_t j, mask = t->nalloc_slots - 1;

	j = (size_t)(podid * 2654435761u) & mask;
	while (t->alloc_of_pod[j]) {
		if (t->allocs[t->alloc_of_pod[j] - 1].pod == podid)
			break;
		j = (j + 1) & mask;
	}
	return &t->alloc_of_pod[j];
}

uint32_t tgi_alloc_find(const tg_topology *t, const char *pod)
{
	uint32_t id, *slot;

	if (!t->nalloc_slots)
		return TG_NONE;
	id = tgi_strtab_find(&t->strs, pod);
	if (!id)
		return TG_NONE;
	slot = alloc_slot(t, id);
	if (!*slot || !t->allocs[*slot - 1].live)
		return TG_NONE;
	return *slot - 1;
}

/* The gang index's slot of gang id \p gid (empty when it has none). */
static uint32_t *gang_slot(const tg_topology *t, uint32_t gid)
{
	size_t j, mask = t->ngang_slots - 1;

	j = (size_t)(gid * 2654435761u) & mask;
	while (t->gang_of[j]) {
		if (t->allocs[t->gang_of[j] - 1].gang == gid)
			break;
		j = (j + 1) & mask;
	}
	return &t->gang_of[j];
}

/* Puts allocation \p i at the head of its gang's chain (a slot is
 * free: gang_reserve()). */
static void gang_link(tg_topology *t, uint32_t i)
{
	uint32_t *slot = gang_slot(t, t->allocs[i].gang);

	if (!*slot)
		t->ngangs++;
	t->gnext[i] = *slot;
	*slot = i + 1;
}

/*
 * Rebuilds the gang index in \p nslots slots (a power of two) from every
 * allocation, removed ones included (tgi_alloc_revive() finds those in
 * their chains).  TG_ENOMEM leaves it as it was.
 */
static tg_err gang_rehash(tg_topology *t, size_t nslots)
{
	uint32_t *ns = tgi_calloc(nslots, sizeof(uint32_t));
	size_t i;

	if (!ns)
		return TG_ENOMEM;
	tgi_free(t->gang_of);
	t->gang_of = ns;
	t->ngang_slots = nslots;
	t->ngangs = 0;
	for (i = 0; i < t->nallocs; i++)
		gang_link(t, (uint32_t)i);
	return TG_OK;
}

/* Room in the gang index for one more gang: slots at most 2/3 full. */
static tg_err gang_reserve(tg_topology *t)
{
	size_t n = t->ngang_slots ? t->ngang_slots : 64;

	if ((t->ngangs + 1) * 3 <= t->ngang_slots * 2)
		return TG_OK;
	while ((t->ngangs + 1) * 3 > n * 2)
		n *= 2;
	return gang_rehash(t, n);
}

/*
 * The gang index is built on first use (a host that never removes or
 * changes a gang, as `topogang bench` and the bridge's snapshots, pays
 * nothing for it; from then on 4 bytes an allocation and 4 to 12 a
 * gang).  TG_ENOMEM leaves it off.
 */
static tg_err gang_index_on(tg_topology *t)
{
	size_t n = 64;

	if (t->ngang_slots)
		return TG_OK;
	t->gnext = tgi_malloc((t->alloccap ? t->alloccap : 1) *
			      sizeof(uint32_t));
	if (!t->gnext)
		return TG_ENOMEM;
	/* every allocation its own gang at most: slots 2/3 full */
	while ((t->nallocs + 1) * 3 > n * 2)
		n *= 2;
	if (gang_rehash(t, n)) {
		tgi_free(t->gnext);
		t->gnext = NULL;
		return TG_ENOMEM;
	}
	return TG_OK;
}

/* The head (index + 1) of gang \p gang's chain; 0 when none (*err
 * TG_ENOMEM when the index could not be built). */
static uint32_t gang_head(tg_topology *t, const char *gang, tg_err *err)
{
	uint32_t id;

	if ((*err = gang_index_on(t)) ||
	    !(id = tgi_strtab_find(&t->strs, gang)))
		return 0;
	return *gang_slot(t, id);
}

static tg_err cls_rehash(tg_topology *t, size_t nslots);

/*
 * Drops the classes no allocation uses any more (after the allocations
 * were compacted); keeps everything as it was when out of memory.
 */
static void cls_compact(tg_topology *t)
{
	uint32_t *map = NULL;
	tgi_acls *nc = NULL;
	int64_t *ns = NULL;
	size_t i, n = 0, slots = 16;

	if (!t->ncls)
		return;
	map = tgi_malloc(t->ncls * sizeof(uint32_t));
	nc = tgi_malloc(t->ncls * sizeof(*nc));
	ns = tgi_malloc(t->ncls * t->stride * sizeof(int64_t) + 1);
	if (!map || !nc || !ns)
		goto out;
	for (i = 0; i < t->ncls; i++)
		map[i] = TG_NONE;
	for (i = 0; i < t->nallocs; i++) {
		uint32_t k = t->allocs[i].cls;

		if (map[k] == TG_NONE) {
			nc[n] = t->cls[k];
			memcpy(&ns[n * t->stride], &t->cls_shape[k * t->stride],
			       t->stride * sizeof(int64_t));
			map[k] = (uint32_t)n++;
		}
	}
	while (slots < 2 * n)
		slots *= 2;
	tgi_free(t->cls);
	tgi_free(t->cls_shape);
	t->cls = nc;
	t->cls_shape = ns;
	t->clscap = t->ncls;
	t->ncls = n;
	nc = NULL;
	ns = NULL;
	for (i = 0; i < t->nallocs; i++)
		t->allocs[i].cls = map[t->allocs[i].cls];
	if (cls_rehash(t, slots) != TG_OK) {
		/* the chains name old indices: no lookups until the next
		 * cls_intern() rehashes (a class may then be duplicated,
		 * which is harmless) */
		t->ncls_slots = 0;
	}
out:
	tgi_free(map);
	tgi_free(nc);
	tgi_free(ns);
}

/*
 * Drops removed allocations (tombstones) once they outnumber the live
 * ones, so a long-running host does not grow without bound.  Indices of
 * allocations change: only called where no index is held (tg_place()).
 */
void tgi_alloc_compact(tg_topology *t)
{
	size_t i, j = 0;

	if (t->nallocs - t->nlive < 1024 || t->nallocs - t->nlive < t->nlive)
		return;
	for (i = 0; i < t->nallocs; i++) {
		if (!t->allocs[i].live)
			continue;
		if (i != j)
			t->allocs[j] = t->allocs[i];
		j++;
	}
	t->nallocs = j;
	cls_compact(t);
	memset(t->alloc_of_pod, 0, t->nalloc_slots * sizeof(uint32_t));
	for (i = 0; i < t->nallocs; i++)
		*alloc_slot(t, t->allocs[i].pod) = (uint32_t)i + 1;
	/* the gang index in its slots as they are: no allocation */
	if (t->ngang_slots) {
		memset(t->gang_of, 0, t->ngang_slots * sizeof(uint32_t));
		t->ngangs = 0;
		for (i = 0; i < t->nallocs; i++)
			gang_link(t, (uint32_t)i);
	}
	/* the member lists only shrink: no allocation */
	for (i = 0; i < t->lsmemcap; i++)
		t->lsmem[i].n = 0;
	for (i = 0; i < t->nallocs; i++) {
		tgi_lsmem *m = &t->lsmem[tgi_alloc_cls(t, i)->lset];

		m->a[m->n++] = (uint32_t)i;
	}
}

static tg_err alloc_rehash(tg_topology *t, size_t nslots)
{
	uint32_t *old = t->alloc_of_pod;
	size_t i;

	t->alloc_of_pod = tgi_calloc(nslots, sizeof(uint32_t));
	if (!t->alloc_of_pod) {
		t->alloc_of_pod = old;
		return TG_ENOMEM;
	}
	t->nalloc_slots = nslots;
	for (i = 0; i < t->nallocs; i++)
		if (t->allocs[i].live)
			*alloc_slot(t, t->allocs[i].pod) = (uint32_t)i + 1;
	tgi_free(old);
	return TG_OK;
}

tg_err tgi_topology_reserve_allocs(tg_topology *t, size_t more)
{
	size_t want = t->nallocs + more;
	size_t ns = t->nalloc_slots ? t->nalloc_slots : 64;
	tg_err err;

	if ((err = tgi_strtab_reserve(&t->strs, t->strs.n + more)))
		return err;
	while ((want + 1) * 3 > ns * 2)
		ns *= 2;
	if (ns > t->nalloc_slots && (err = alloc_rehash(t, ns)))
		return err;
	if (want > t->alloccap) {
		tgi_alloc *na = tgi_realloc(t->allocs, want * sizeof(*na));
		uint32_t *nn;

		if (!na)
			return TG_ENOMEM;
		t->allocs = na;
		if (t->ngang_slots) {
			nn = tgi_realloc(t->gnext, want * sizeof(*nn));
			if (!nn)
				return TG_ENOMEM;
			t->gnext = nn;
		}
		t->alloccap = want;
	}
	return TG_OK;
}

static uint64_t cls_hash(const tg_topology *t, const tgi_acls *c,
			 const int64_t *shape)
{
	uint64_t h = 1469598103934665603ull;
	unsigned r;

	h = (h ^ (uint64_t)c->priority) * 1099511628211ull;
	h = (h ^ (uint64_t)c->expires) * 1099511628211ull;
	h = (h ^ c->budget) * 1099511628211ull;
	h = (h ^ c->preemptible) * 1099511628211ull;
	h = (h ^ c->lset) * 1099511628211ull;
	/* zero amounts left out: a wider stride (restride()) keeps the
	 * hash of every class */
	for (r = 0; r < t->stride; r++)
		if (shape[r])
			h = (h ^ (uint64_t)shape[r] ^ ((uint64_t)r << 56)) *
			    1099511628211ull;
	return h ^ (h >> 29);
}

static tg_err cls_rehash(tg_topology *t, size_t nslots)
{
	uint32_t *ns = tgi_calloc(nslots, sizeof(uint32_t));
	size_t i;

	if (!ns)
		return TG_ENOMEM;
	tgi_free(t->cls_slots);
	t->cls_slots = ns;
	t->ncls_slots = nslots;
	for (i = 0; i < t->ncls; i++) {
		size_t h = cls_hash(t, &t->cls[i],
				    &t->cls_shape[i * t->stride]) &
			   (nslots - 1);

		t->cls[i].hnext = ns[h];
		ns[h] = (uint32_t)i + 1;
	}
	return TG_OK;
}

/*
 * The class of \p c with shape row \p shape (stride values): an equal
 * one, or a new one.  Classes are dropped only by tgi_alloc_compact().
 */
static tg_err cls_intern(tg_topology *t, const tgi_acls *c,
			 const int64_t *shape, uint32_t *out)
{
	size_t h, i, oldcap;
	uint32_t k;
	tg_err err;

	if (t->ncls_slots) {
		h = cls_hash(t, c, shape) & (t->ncls_slots - 1);
		for (k = t->cls_slots[h]; k; k = t->cls[k - 1].hnext) {
			const tgi_acls *x = &t->cls[k - 1];

			if (x->priority == c->priority &&
			    x->expires == c->expires &&
			    x->budget == c->budget &&
			    x->preemptible == c->preemptible &&
			    x->lset == c->lset &&
			    !memcmp(&t->cls_shape[(size_t)(k - 1) * t->stride],
				    shape, t->stride * sizeof(int64_t))) {
				*out = k - 1;
				return TG_OK;
			}
		}
	}
	if (t->ncls >= (1u << 29) - 1)
		return TG_ELIMIT;
	oldcap = t->clscap;
	if (tgi_grow(&t->cls, &t->clscap, t->ncls + 1, sizeof(*t->cls)))
		return TG_ENOMEM;
	if (t->clscap != oldcap) {
		int64_t *ns = tgi_realloc(t->cls_shape, t->clscap *
					  t->stride * sizeof(int64_t));

		if (!ns) {
			t->clscap = oldcap;
			return TG_ENOMEM;
		}
		t->cls_shape = ns;
	}
	if ((t->ncls + 1) * 2 > t->ncls_slots &&
	    (err = cls_rehash(t, t->ncls_slots ? t->ncls_slots * 2 : 16)))
		return err;
	i = t->ncls;
	t->cls[i] = *c;
	memcpy(&t->cls_shape[i * t->stride], shape,
	       t->stride * sizeof(int64_t));
	h = cls_hash(t, c, shape) & (t->ncls_slots - 1);
	t->cls[i].hnext = t->cls_slots[h];
	t->cls_slots[h] = (uint32_t)i + 1;
	t->ncls++;
	*out = (uint32_t)i;
	return TG_OK;
}

/* ---- the label index (model.h: lsmem, lpost) ---- */

static uint64_t lpost_hash(uint64_t kv)
{
	kv ^= kv >> 33;
	kv *= 0xff51afd7ed558ccdull;
	kv ^= kv >> 33;
	return kv;
}

static tgi_lpslot *lpost_slot(const tg_topology *t, uint64_t kv)
{
	size_t h = lpost_hash(kv) & (t->nlpost_slots - 1);

	while (t->lpost_slots[h].kv && t->lpost_slots[h].kv != kv)
		h = (h + 1) & (t->nlpost_slots - 1);
	return &t->lpost_slots[h];
}

uint32_t tgi_lpost_first(const tg_topology *t, uint32_t key, uint32_t value,
			 uint32_t *n)
{
	const tgi_lpslot *s;

	*n = 0;
	if (!t->nlpost_slots || !(key | value))
		return 0;
	s = lpost_slot(t, (uint64_t)key << 32 | value);
	if (!s->kv)
		return 0;
	*n = s->n;
	return s->head;
}

/* Room for \p more postings (and as many new pairs), so that
 * lpost_add() cannot fail; slots at most half full. */
static tg_err lpost_reserve(tg_topology *t, size_t more)
{
	tgi_lpslot *ns;
	size_t i, nslots = t->nlpost_slots ? t->nlpost_slots : 64;

	if (tgi_grow(&t->lposts, &t->lpostcap, t->nlposts + more,
		     sizeof(*t->lposts)))
		return TG_ENOMEM;
	while ((t->nlpost_keys + more) * 2 > nslots)
		nslots *= 2;
	if (nslots == t->nlpost_slots)
		return TG_OK;
	ns = tgi_calloc(nslots, sizeof(*ns));
	if (!ns)
		return TG_ENOMEM;
	for (i = 0; i < t->nlpost_slots; i++) {
		const tgi_lpslot *o = &t->lpost_slots[i];
		size_t h;

		if (!o->kv)
			continue;
		h = lpost_hash(o->kv) & (nslots - 1);
		while (ns[h].kv)
			h = (h + 1) & (nslots - 1);
		ns[h] = *o;
	}
	tgi_free(t->lpost_slots);
	t->lpost_slots = ns;
	t->nlpost_slots = nslots;
	return TG_OK;
}

static void lpost_add(tg_topology *t, uint32_t key, uint32_t value,
		      uint32_t ls)
{
	uint64_t kv = (uint64_t)key << 32 | value;
	tgi_lpslot *s;

	if (!kv)
		return;
	s = lpost_slot(t, kv);
	if (!s->kv) {
		s->kv = kv;
		t->nlpost_keys++;
	}
	t->lposts[t->nlposts].ls = ls;
	t->lposts[t->nlposts].next = s->head;
	s->head = (uint32_t)++t->nlposts;
	s->n++;
}

/* Room in the member list of label set \p ls for one more allocation. */
static tg_err lsmem_reserve(tg_topology *t, uint32_t ls)
{
	size_t old = t->lsmemcap;

	if (tgi_grow(&t->lsmem, &t->lsmemcap, (size_t)ls + 1,
		     sizeof(*t->lsmem)))
		return TG_ENOMEM;
	if (t->lsmemcap > old)
		memset(&t->lsmem[old], 0,
		       (t->lsmemcap - old) * sizeof(*t->lsmem));
	return tgi_grow(&t->lsmem[ls].a, &t->lsmem[ls].cap,
			t->lsmem[ls].n + 1, sizeof(uint32_t));
}

static uint64_t lset_hash(uint32_t ns, const uint32_t *pairs, unsigned n)
{
	uint64_t h = 1469598103934665603ull ^ ns;
	unsigned i;

	for (i = 0; i < 2 * n; i++)
		h = (h ^ pairs[i]) * 1099511628211ull;
	return h ^ (h >> 29);
}

static tg_err lset_rehash(tg_topology *t, size_t nslots)
{
	uint32_t *ns = tgi_calloc(nslots, sizeof(uint32_t));
	size_t i, h;

	if (!ns)
		return TG_ENOMEM;
	tgi_free(t->lset_slots);
	t->lset_slots = ns;
	t->nlset_slots = nslots;
	for (i = 0; i < t->nlsets; i++) {
		const tgi_lset *x = &t->lsets[i];

		h = lset_hash(x->ns, &t->lpairs[2 * (size_t)x->off], x->n) &
		    (nslots - 1);
		t->lsets[i].hnext = ns[h];
		ns[h] = (uint32_t)i + 1;
	}
	return TG_OK;
}

tg_err tgi_lset_intern(tg_topology *t, const char *ns, const tg_label *l,
		       unsigned n, uint32_t *out)
{
	uint32_t pairs[2 * TG_MAX_POD_LABELS], nsid = 0, k;
	unsigned i, j;
	size_t h;
	tgi_lset *x;
	tg_err err;

	*out = 0;
	if (n > TG_MAX_POD_LABELS)
		return TG_ELIMIT;
	if (!ns && !n)
		return TG_OK;
	if (ns && (err = tgi_strtab_intern(&t->strs, ns, &nsid)))
		return err;
	for (i = 0; i < n; i++) {
		uint32_t key, val;

		if (!name_ok(l[i].key) || !l[i].value ||
		    strlen(l[i].value) > TG_MAX_NAME)
			return TG_EINVAL;
		if ((err = tgi_strtab_intern(&t->strs, l[i].key, &key)) ||
		    (err = tgi_strtab_intern(&t->strs, l[i].value, &val)))
			return err;
		/* insertion by key id; a repeated key is an error */
		for (j = i; j > 0 && pairs[2 * (j - 1)] > key; j--) {
			pairs[2 * j] = pairs[2 * (j - 1)];
			pairs[2 * j + 1] = pairs[2 * (j - 1) + 1];
		}
		if (j > 0 && pairs[2 * (j - 1)] == key)
			return TG_EINVAL;
		pairs[2 * j] = key;
		pairs[2 * j + 1] = val;
	}
	if (t->nlset_slots) {
		h = lset_hash(nsid, pairs, n) & (t->nlset_slots - 1);
		for (k = t->lset_slots[h]; k; k = t->lsets[k - 1].hnext) {
			x = &t->lsets[k - 1];
			if (x->ns == nsid && x->n == n &&
			    !memcmp(&t->lpairs[2 * (size_t)x->off], pairs,
				    2 * n * sizeof(uint32_t))) {
				*out = k;
				return TG_OK;
			}
		}
	}
	if (t->nlsets >= UINT32_MAX / 2 ||
	    t->nlpairs / 2 + n >= UINT32_MAX / 2)
		return TG_ELIMIT;
	if (tgi_grow(&t->lsets, &t->lsetcap, t->nlsets + 1,
		     sizeof(*t->lsets)) ||
	    tgi_grow(&t->lpairs, &t->lpaircap, t->nlpairs + 2 * n + 1,
		     sizeof(uint32_t)))
		return TG_ENOMEM;
	if ((t->nlsets + 1) * 2 > t->nlset_slots &&
	    (err = lset_rehash(t, t->nlset_slots ? t->nlset_slots * 2 : 16)))
		return err;
	if ((err = lpost_reserve(t, (size_t)n + 1)))
		return err;
	x = &t->lsets[t->nlsets];
	x->ns = nsid;
	x->off = (uint32_t)(t->nlpairs / 2);
	x->n = n;
	memcpy(&t->lpairs[t->nlpairs], pairs, 2 * n * sizeof(uint32_t));
	t->nlpairs += 2 * (size_t)n;
	h = lset_hash(nsid, pairs, n) & (t->nlset_slots - 1);
	x->hnext = t->lset_slots[h];
	t->lset_slots[h] = (uint32_t)t->nlsets + 1;
	t->nlsets++;
	*out = (uint32_t)t->nlsets;
	lpost_add(t, 0, nsid, *out);
	for (i = 0; i < n; i++)
		lpost_add(t, pairs[2 * i], pairs[2 * i + 1], *out);
	return TG_OK;
}

uint32_t tgi_lset_value(const tg_topology *t, uint32_t ls, uint32_t key)
{
	const tgi_lset *x;
	const uint32_t *p;
	uint32_t lo = 0, hi;

	if (!ls || ls > t->nlsets || !key)
		return TG_NONE;
	x = &t->lsets[ls - 1];
	p = &t->lpairs[2 * (size_t)x->off];
	hi = x->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (p[2 * mid] == key)
			return p[2 * mid + 1];
		if (p[2 * mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return TG_NONE;
}

tg_err tg_topology_add_alloc(tg_topology *t, const tg_alloc_spec *s)
{
	int64_t shape[TG_MAX_RESOURCES];
	uint32_t pod, gang, budget = 0, *slot, cls;
	tgi_acls c;
	size_t i;
	unsigned r, want, have;
	uint64_t gpus;
	tg_err err;

	if (!t || !s || !name_ok(s->pod) || (s->gang && !name_ok(s->gang)) ||
	    (s->budget && !name_ok(s->budget)) || s->node >= t->nnodes)
		return TG_EINVAL;
	if (!t->built)
		return TG_ESTATE;
	memset(shape, 0, sizeof(shape));
	if (s->shape)
		for (r = 0; r < TG_MAX_RESOURCES; r++) {
			if (s->shape->v[r] < 0)
				return TG_EINVAL;
			if (s->shape->v[r] && r >= t->nres)
				return TG_EINVAL;
			shape[r] = s->shape->v[r];
		}
	if (!shape[TG_RES_PODS])
		shape[TG_RES_PODS] = 1;
	/* one lookup of the name (a big cluster's bound pods are added at
	 * every snapshot): interned here, the name of a live allocation
	 * is there already */
	if ((err = tgi_strtab_intern(&t->strs, s->pod, &pod)))
		return err;
	if (t->nalloc_slots && *(slot = alloc_slot(t, pod)) &&
	    t->allocs[*slot - 1].live)
		return TG_EEXIST;
	for (r = t->stride; r < t->nres; r++)
		if (shape[r] && (err = restride(t, r + 1)))
			return err;
	/* slots at most 2/3 full */
	if ((t->nallocs + 1) * 3 > t->nalloc_slots * 2 &&
	    (err = alloc_rehash(t, t->nalloc_slots ? t->nalloc_slots * 2 : 64)))
		return err;
	gang = pod;
	if ((s->gang && (err = tgi_strtab_intern(&t->strs, s->gang,
						 &gang))) ||
	    (s->budget && (err = tgi_strtab_intern(&t->strs, s->budget,
						   &budget))))
		return err;
	if (s->nlabels > TG_MAX_POD_LABELS)
		return TG_ELIMIT;
	if ((s->nlabels && !s->labels) || (s->ns && !name_ok(s->ns)))
		return TG_EINVAL;
	memset(&c, 0, sizeof(c));
	if ((err = tgi_lset_intern(t, s->ns, s->labels, s->nlabels,
				   &c.lset)))
		return err;
	c.priority = s->priority;
	c.expires = s->nominated ? s->expires : 0;
	c.budget = budget;
	c.preemptible = s->preemptible;
	if ((err = cls_intern(t, &c, shape, &cls)) ||
	    (err = lsmem_reserve(t, c.lset)))
		return err;
	if (t->nallocs + 1 > t->alloccap) {
		/* 1.5x: allocation tables are the bulk of a big cluster */
		size_t ncap = t->alloccap < 64 ? 64 :
			      t->alloccap + t->alloccap / 2;
		tgi_alloc *na = tgi_realloc(t->allocs, ncap * sizeof(*na));
		uint32_t *nn;

		if (!na)
			return TG_ENOMEM;
		t->allocs = na;
		if (t->ngang_slots) {
			nn = tgi_realloc(t->gnext, ncap * sizeof(*nn));
			if (!nn)
				return TG_ENOMEM;
			t->gnext = nn;
		}
		t->alloccap = ncap;
	}
	if (t->ngang_slots && (err = gang_reserve(t)))
		return err;
	/* GPUs: the given ones, plus free ones picked for the rest */
	gpus = s->gpus;
	if (t->ngpus[s->node] < TG_MAX_GPUS)	/* the mask's width */
		gpus &= (1ull << t->ngpus[s->node]) - 1;
	/* a GPU another allocation holds is not held twice: the count is
	 * kept with free GPUs where there are some (over-commit otherwise) */
	gpus &= t->gpu_free[s->node];
	want = shape[TG_RES_GPU] > TG_MAX_GPUS ? TG_MAX_GPUS :
	       (unsigned)shape[TG_RES_GPU];
	have = (unsigned)__builtin_popcountll(gpus);
	if (want > have && t->ngpus[s->node])
		gpus |= tgi_pick_gpus(t->layouts[t->layout[s->node]],
				      t->ngpus[s->node],
				      t->gpu_free[s->node] & ~gpus,
				      want - have);
	i = t->nallocs++;
	t->allocs[i].pod = pod;
	t->allocs[i].gang = gang;
	t->allocs[i].node = s->node;
	t->allocs[i].gpus = gpus;
	t->allocs[i].cls = cls;
	t->allocs[i].nominated = s->nominated;
	t->allocs[i].suspended = false;
	t->allocs[i].live = true;
	t->lsmem[c.lset].a[t->lsmem[c.lset].n++] = (uint32_t)i;
	if (s->nominated)
		t->nnominated++;
	slot = alloc_slot(t, pod);
	*slot = (uint32_t)i + 1;
	if (t->ngang_slots)
		gang_link(t, (uint32_t)i);
	t->nlive++;
	tgi_node_take(t, s->node, shape, gpus);
	return TG_OK;
}

/* Removes live allocation \p i: its resources go back to the node.  The
 * pod's hash slot keeps pointing at the dead entry (a tombstone that a
 * later allocation of the same pod name reuses), and so does its gang
 * chain until tgi_alloc_compact(). */
static void remove_at(tg_topology *t, uint32_t i)
{
	tgi_alloc *a = &t->allocs[i];

	tgi_alloc_suspend(t, i);
	a->live = false;
	a->suspended = false;
	t->nlive--;
	if (a->nominated)
		t->nnominated--;
}

tg_err tg_topology_remove_alloc(tg_topology *t, const char *pod)
{
	uint32_t i;

	if (!t || !pod)
		return TG_EINVAL;
	i = tgi_alloc_find(t, pod);
	if (i == TG_NONE)
		return TG_ENOENT;
	remove_at(t, i);
	return TG_OK;
}

void tgi_alloc_suspend(tg_topology *t, uint32_t i)
{
	tgi_alloc *a = &t->allocs[i];
	const int64_t *sh = tgi_alloc_shape(t, i);
	unsigned r;

	if (!a->live || a->suspended)
		return;
	for (r = 0; r < t->stride; r++)
		t->freev[(size_t)a->node * t->stride + r] += sh[r];
	t->gpu_free[a->node] |= a->gpus;
	tgi_gfree_sync(t, a->node);
	a->suspended = true;
}

void tgi_alloc_resume(tg_topology *t, uint32_t i)
{
	tgi_alloc *a = &t->allocs[i];

	if (!a->live || !a->suspended)
		return;
	tgi_node_take(t, a->node, tgi_alloc_shape(t, i), a->gpus);
	a->suspended = false;
}

void tgi_alloc_revive(tg_topology *t, uint32_t i)
{
	tgi_alloc *a = &t->allocs[i];
	uint32_t k;

	if (a->live)
		return;
	a->live = true;
	a->suspended = false;
	t->nlive++;
	if (a->nominated)
		t->nnominated++;
	tgi_node_take(t, a->node, tgi_alloc_shape(t, i), a->gpus);
	*alloc_slot(t, a->pod) = i + 1;
	/* back on its gang's chain if tg_topology_remove_gang() cut it
	 * off (the gang keeps its slot: the chain's dead head) */
	if (!t->ngang_slots)
		return;
	for (k = *gang_slot(t, a->gang); k && k != i + 1; k = t->gnext[k - 1])
		;
	if (!k)
		gang_link(t, i);
}

unsigned tg_topology_remove_gang(tg_topology *t, const char *gang)
{
	uint32_t head, k, id;
	unsigned n = 0;
	tg_err err;
	size_t i;

	if (!t || !gang)
		return 0;
	if (!(head = gang_head(t, gang, &err))) {
		if (err != TG_ENOMEM || !(id = tgi_strtab_find(&t->strs, gang)))
			return 0;
		/* no memory for the index: a scan, as before it */
		for (i = 0; i < t->nallocs; i++)
			if (t->allocs[i].live && t->allocs[i].gang == id) {
				remove_at(t, (uint32_t)i);
				n++;
			}
		return n;
	}
	for (k = head; k; k = t->gnext[k - 1])
		if (t->allocs[k - 1].live) {
			remove_at(t, k - 1);
			n++;
		}
	/* every member is gone: the chain is its head alone (which keeps
	 * the gang's slot), so removing and adding a gang again and again
	 * does not lengthen it */
	t->gnext[head - 1] = 0;
	return n;
}

tg_err tg_topology_set_gang_preemption(tg_topology *t, const char *gang,
				       int64_t priority, bool preemptible)
{
	int64_t shape[TG_MAX_RESOURCES];
	uint32_t head, k, *ncls, n = 0, i, from = TG_NONE, to = 0;
	tg_err err = TG_OK;
	tgi_acls c;

	if (!t || !gang)
		return TG_EINVAL;
	if (!(head = gang_head(t, gang, &err)))
		return err ? err : TG_ENOENT;
	for (k = head; k; k = t->gnext[k - 1])
		n += t->allocs[k - 1].live;
	if (!n)
		return TG_ENOENT;
	/* every new class first, so that running out of memory changes
	 * nothing (classes nobody uses go at the next compaction) */
	ncls = tgi_malloc(n * sizeof(*ncls));
	if (!ncls)
		return TG_ENOMEM;
	for (k = head, i = 0; k; k = t->gnext[k - 1]) {
		uint32_t old = t->allocs[k - 1].cls;

		if (!t->allocs[k - 1].live)
			continue;
		if (old != from) {	/* members mostly share a class */
			/* copies: interning may move the class tables */
			memcpy(shape, &t->cls_shape[(size_t)old * t->stride],
			       t->stride * sizeof(int64_t));
			c = t->cls[old];
			c.priority = priority;
			c.preemptible = preemptible;
			c.hnext = 0;
			if ((err = cls_intern(t, &c, shape, &to)))
				goto out;
			from = old;
		}
		ncls[i++] = to;
	}
	for (k = head, i = 0; k; k = t->gnext[k - 1])
		if (t->allocs[k - 1].live)
			t->allocs[k - 1].cls = ncls[i++];
out:
	tgi_free(ncls);
	return err;
}

unsigned tg_topology_expire(tg_topology *t, int64_t now)
{
	size_t i;
	unsigned n = 0;

	if (!t)
		return 0;
	for (i = 0; i < t->nallocs; i++)
		if (t->allocs[i].live && t->allocs[i].nominated &&
		    tgi_alloc_cls(t, i)->expires &&
		    tgi_alloc_cls(t, i)->expires <= now) {
			tg_topology_remove_alloc(t, tgi_strtab_get(&t->strs,
						 t->allocs[i].pod));
			n++;
		}
	return n;
}

tg_err tg_topology_set_budget(tg_topology *t, const char *name,
			      int64_t allowed)
{
	uint32_t id;
	size_t i;
	tg_err err;

	if (!t || !name_ok(name) || allowed < 0)
		return TG_EINVAL;
	if ((err = tgi_strtab_intern(&t->strs, name, &id)))
		return err;
	for (i = 0; i < t->nbudgets; i++)
		if (t->budgets[i].name == id) {
			t->budgets[i].allowed = allowed;
			return TG_OK;
		}
	if (tgi_grow(&t->budgets, &t->budgetcap, t->nbudgets + 1,
		     sizeof(*t->budgets)))
		return TG_ENOMEM;
	t->budgets[t->nbudgets].name = id;
	t->budgets[t->nbudgets].allowed = allowed;
	t->nbudgets++;
	return TG_OK;
}

int64_t tgi_budget_allowed(const tg_topology *t, uint32_t name)
{
	size_t i;

	for (i = 0; name && i < t->nbudgets; i++)
		if (t->budgets[i].name == name)
			return t->budgets[i].allowed;
	return -1;
}

unsigned tg_topology_nallocs(const tg_topology *t)
{
	return t ? (unsigned)t->nlive : 0;
}

/* ---- bandwidth ---- */

tg_err tg_topology_set_layer_bandwidth(tg_topology *t, unsigned layer,
				       double gbps)
{
	if (!t || layer >= t->nlayers || !(gbps > 0))
		return TG_EINVAL;
	t->layer_bw[layer] = gbps;
	t->layer_bw_set[layer] = true;
	if (t->built)
		default_bandwidth(t);
	return TG_OK;
}

tg_err tg_topology_set_node_bandwidth(tg_topology *t, double gbps)
{
	if (!t || !(gbps > 0))
		return TG_EINVAL;
	t->layer_bw[t->nlayers] = gbps;
	t->layer_bw_set[t->nlayers] = true;
	return TG_OK;
}

double tg_topology_layer_bandwidth(const tg_topology *t, unsigned layer)
{
	if (!t)
		return 0;
	if (layer == TG_NONE)
		return t->root_bw;
	if (layer > t->nlayers)
		return 0;
	return t->layer_bw[layer];
}

/* ---- copies (a kept topology handed out, tgi_topology_clone) ---- */

/* *\p dst = a copy of \p n bytes at \p src (NULL stays NULL); false when
 * out of memory. */
static bool dup_mem(void *dst, const void *src, size_t n)
{
	void **d = dst;

	*d = NULL;
	if (!src)
		return true;
	*d = tgi_malloc(n ? n : 1);
	if (!*d)
		return false;
	memcpy(*d, src, n);
	return true;
}

/* The strings and per-node arrays of \p t into \p c (whose pointers are
 * \p t's until replaced: \p c is destroyed on failure, so every pointer
 * is first made NULL or its own). */
static bool clone_nodes(tg_topology *c, const tg_topology *t)
{
	/* the node arrays hold nnodes rows (ncap may be more: a shrink
	 * that ran out of memory keeps bigger ones) */
	size_t nc = t->nnodes, L = t->nlayers ? t->nlayers : 1, i;
	bool ok;

	c->ncap = nc;

	ok = dup_mem(&c->name, t->name, nc * sizeof(*t->name)) &&
	     dup_mem(&c->path, t->path, nc * L * sizeof(*t->path)) &&
	     dup_mem(&c->alloc, t->alloc, nc * t->stride * sizeof(int64_t)) &&
	     dup_mem(&c->freev, t->freev, nc * t->stride * sizeof(int64_t)) &&
	     dup_mem(&c->gpu_free, t->gpu_free, nc * sizeof(*t->gpu_free)) &&
	     dup_mem(&c->gfree, t->gfree, nc * sizeof(*t->gfree)) &&
	     dup_mem(&c->ngpus, t->ngpus, nc * sizeof(*t->ngpus)) &&
	     dup_mem(&c->layout, t->layout, nc * sizeof(*t->layout)) &&
	     dup_mem(&c->flags, t->flags, nc * sizeof(*t->flags)) &&
	     dup_mem(&c->lab_head, t->lab_head, nc * sizeof(uint32_t)) &&
	     dup_mem(&c->taint_head, t->taint_head, nc * sizeof(uint32_t)) &&
	     dup_mem(&c->node_of_name, t->node_of_name,
		     t->nname_slots * sizeof(uint32_t)) &&
	     dup_mem(&c->labels, t->labels, t->labcap * sizeof(*t->labels)) &&
	     dup_mem(&c->taints, t->taints, t->taintcap * sizeof(*t->taints)) &&
	     dup_mem(&c->layouts, t->layouts, t->laycap * sizeof(*t->layouts));
	if (!ok)
		return false;
	if (t->built &&
	    (!dup_mem(&c->order, t->order, t->nnodes * sizeof(uint32_t)) ||
	     !dup_mem(&c->pos, t->pos, t->nnodes * sizeof(uint32_t)) ||
	     !dup_mem(&c->leaf, t->leaf, t->nnodes * sizeof(uint32_t))))
		return false;
	if (!dup_mem(&c->dom, t->dom, t->ndom * sizeof(*t->dom)))
		return false;
	for (i = 0; i < t->ndom; i++)
		c->dom[i].path = NULL;
	c->ndom = t->ndom;
	for (i = 0; i < t->ndom; i++)
		if (t->dom[i].path &&
		    !(c->dom[i].path = tgi_strdup(t->dom[i].path)))
			return false;
	if (!dup_mem(&c->warn, t->warn, t->warncap * sizeof(char *)))
		return false;
	for (i = 0; i < t->nwarn; i++)
		c->warn[i] = NULL;
	c->nwarn = t->nwarn;
	for (i = 0; i < t->nwarn; i++)
		if (!(c->warn[i] = tgi_strdup(t->warn[i])))
			return false;
	return true;
}

/* The allocations' tables of \p t into \p c (see clone_nodes()). */
static bool clone_allocs(tg_topology *c, const tg_topology *t)
{
	size_t i;

	if (!dup_mem(&c->allocs, t->allocs, t->alloccap * sizeof(*t->allocs)) ||
	    !dup_mem(&c->cls, t->cls, t->clscap * sizeof(*t->cls)) ||
	    !dup_mem(&c->cls_shape, t->cls_shape,
		     t->clscap * t->stride * sizeof(int64_t)) ||
	    !dup_mem(&c->cls_slots, t->cls_slots,
		     t->ncls_slots * sizeof(uint32_t)) ||
	    !dup_mem(&c->alloc_of_pod, t->alloc_of_pod,
		     t->nalloc_slots * sizeof(uint32_t)) ||
	    !dup_mem(&c->gnext, t->gnext, t->ngang_slots ?
		     t->alloccap * sizeof(uint32_t) : 0) ||
	    !dup_mem(&c->gang_of, t->gang_of,
		     t->ngang_slots * sizeof(uint32_t)) ||
	    !dup_mem(&c->budgets, t->budgets,
		     t->budgetcap * sizeof(*t->budgets)) ||
	    !dup_mem(&c->lsets, t->lsets, t->lsetcap * sizeof(*t->lsets)) ||
	    !dup_mem(&c->lpairs, t->lpairs, t->lpaircap * sizeof(uint32_t)) ||
	    !dup_mem(&c->lset_slots, t->lset_slots,
		     t->nlset_slots * sizeof(uint32_t)) ||
	    !dup_mem(&c->lpost_slots, t->lpost_slots,
		     t->nlpost_slots * sizeof(*t->lpost_slots)) ||
	    !dup_mem(&c->lposts, t->lposts, t->lpostcap * sizeof(*t->lposts)))
		return false;
	if (!t->ngang_slots)
		c->gnext = NULL;
	if (!dup_mem(&c->lsmem, t->lsmem, t->lsmemcap * sizeof(*t->lsmem)))
		return false;
	for (i = 0; i < t->lsmemcap; i++)
		c->lsmem[i].a = NULL;
	c->lsmemcap = t->lsmemcap;
	for (i = 0; i < t->lsmemcap; i++)
		if (!dup_mem(&c->lsmem[i].a, t->lsmem[i].a,
			     t->lsmem[i].cap * sizeof(uint32_t)))
			return false;
	return true;
}

tg_topology *tgi_topology_clone(const tg_topology *t)
{
	tg_topology *c = tgi_malloc(sizeof(*c));
	unsigned i;

	if (!c)
		return NULL;
	memcpy(c, t, sizeof(*c));
	c->scratch = NULL;
	c->scratch_free = NULL;
	/* what destroy frees is the copy's or NULL before anything can
	 * fail */
	for (i = 0; i < TG_MAX_LAYERS; i++)
		c->layer_name[i] = c->layer_key[i] = NULL;
	for (i = 0; i < TG_MAX_RESOURCES; i++)
		c->res_name[i] = NULL;
	tgi_strtab_init(&c->strs);
	c->ndom = c->nwarn = c->lsmemcap = 0;
	c->name = c->path = c->lab_head = c->taint_head = NULL;
	c->alloc = c->freev = c->cls_shape = NULL;
	c->gpu_free = NULL;
	c->gfree = c->ngpus = c->flags = NULL;
	c->layout = NULL;
	c->node_of_name = c->order = c->pos = c->leaf = NULL;
	c->labels = NULL;
	c->taints = NULL;
	c->layouts = NULL;
	c->dom = NULL;
	c->warn = NULL;
	c->allocs = NULL;
	c->cls = NULL;
	c->cls_slots = c->alloc_of_pod = c->gnext = c->gang_of = NULL;
	c->budgets = NULL;
	c->lsets = NULL;
	c->lpairs = c->lset_slots = NULL;
	c->lsmem = NULL;
	c->lpost_slots = NULL;
	c->lposts = NULL;
	for (i = 0; i < t->nlayers; i++)
		if (!(c->layer_name[i] = tgi_strdup(t->layer_name[i])) ||
		    (t->layer_key[i] &&	/* a layer may have no key */
		     !(c->layer_key[i] = tgi_strdup(t->layer_key[i]))))
			goto fail;
	for (i = 0; i < t->nres; i++)
		if (!(c->res_name[i] = tgi_strdup(t->res_name[i])))
			goto fail;
	if (tgi_strtab_clone(&c->strs, &t->strs))
		goto fail;
	if (!clone_nodes(c, t) || !clone_allocs(c, t))
		goto fail;
	return c;
fail:
	tg_topology_destroy(c);
	return NULL;
}

size_t tgi_alloc_count(const tg_topology *t)
{
	return t->nallocs;
}

void tgi_alloc_get(const tg_topology *t, size_t i, tgi_alloc_info *out)
{
	const tgi_alloc *a = &t->allocs[i];
	const tgi_acls *c = &t->cls[a->cls];

	out->live = a->live;
	out->nominated = a->nominated;
	out->pod = a->pod;
	out->node = a->node;
	out->gang = tgi_strtab_get(&t->strs, a->gang);
	out->budget = c->budget ? tgi_strtab_get(&t->strs, c->budget) : NULL;
	out->priority = c->priority;
	out->preemptible = c->preemptible;
}

void tgi_alloc_remove(tg_topology *t, size_t i)
{
	if (i < t->nallocs && t->allocs[i].live)
		remove_at(t, (uint32_t)i);
}
