/*
 * shared/src/load/k8s/k8s_node.c - Nodes as the topology's nodes: labels,
 * allocatable resources, GPUs and their NVLink islands, taints; then the
 * layers and tg_topology_build().
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s_load.h"

static int node_cmp(const void *a, const void *c)
{
	return tg_name_cmp((*(const kobj *const *)a)->name,
			   (*(const kobj *const *)c)->name);
}

tg_err tgk_taint_effect(const char *s, int *out)
{
	if (!*s)
		*out = -1;
	else if (strcmp(s, "NoSchedule") == 0)
		*out = TG_TAINT_NO_SCHEDULE;
	else if (strcmp(s, "PreferNoSchedule") == 0)
		*out = TG_TAINT_PREFER_NO_SCHEDULE;
	else if (strcmp(s, "NoExecute") == 0)
		*out = TG_TAINT_NO_EXECUTE;
	else
		return TG_EINVAL;
	return TG_OK;
}

tg_err tgk_node_core(bctx *b, const kobj *o, tg_err err, const char *what)
{
	if (!err)
		return TG_OK;
	if (err == TG_ENOMEM)
		return tgi_errf(b->ei, err, "out of memory");
	return tgk_oerr(b, o, NULL, err, "%s: %s", what, tg_strerror(err));
}

/*
 * The NVLink islands of topogang discovery's label: islands separated by
 * '.', the GPU ranges of one island by '_' ("0-3.4-7", "0_2.1_3").  GPUs
 * the label does not name are islands of their own.  False when the
 * value is malformed or names a GPU twice or past \p n.
 */
static bool parse_islands(const char *s, unsigned n, uint8_t *isl)
{
	bool seen[TG_MAX_GPUS] = { false };
	unsigned island = 0, g, a, bnd;
	const char *q = s;

	if (!*s || n > TG_MAX_GPUS)
		return false;
	for (;;) {
		char *end;
		unsigned long x, y;

		if (*q < '0' || *q > '9')
			return false;
		x = strtoul(q, &end, 10);
		y = x;
		q = end;
		if (*q == '-') {
			q++;
			if (*q < '0' || *q > '9')
				return false;
			y = strtoul(q, &end, 10);
			q = end;
		}
		if (x > y || y >= n)
			return false;
		for (a = (unsigned)x, bnd = (unsigned)y; a <= bnd; a++) {
			if (seen[a])
				return false;
			seen[a] = true;
			isl[a] = (uint8_t)island;
		}
		if (*q == '_') {
			q++;
		} else if (*q == '.') {
			q++;
			island++;
		} else if (!*q) {
			break;
		} else {
			return false;
		}
	}
	for (g = 0; g < n; g++)
		if (!seen[g])
			isl[g] = (uint8_t)++island;
	return island < TG_MAX_GPUS;
}

/* The node's labels, each one the topology keeps. */
static tg_err node_labels(bctx *b, const kobj *o, tg_node_id id,
			  const cJSON *labels)
{
	const cJSON *c;
	char p[300];
	tg_err err;

	cJSON_ArrayForEach(c, labels) {
		if (strlen(c->string) > TG_MAX_NAME) {
			err = tgk_owarn(b, o, "label key '%.60s...' longer "
					"than %d bytes; ignored", c->string,
					TG_MAX_NAME);
			if (err)
				return tgi_errf(b->ei, err, "out of memory");
			continue;
		}
		err = tg_topology_node_add_label(b->t, id, c->string,
						 c->valuestring);
		if (err)
			return tgk_node_core(b, o, err,
					     tgk_pjoin(p, sizeof(p),
						       "metadata.labels",
						       c->string));
	}
	err = tg_topology_node_add_label(b->t, id, K_NODE_NAME, o->name);
	return err ? tgk_node_core(b, o, err, "metadata.name") : TG_OK;
}

/* \p q GPUs at \p p, in the NVLink islands the node's label gives. */
static tg_err node_gpus(bctx *b, const kobj *o, tg_node_id id, int64_t q,
			const char *p)
{
	unsigned n = q > TG_MAX_GPUS ? TG_MAX_GPUS : (unsigned)q;
	const char *il = tgk_jstr(tgk_jget(tgk_jget(o->j, "metadata"),
					   "labels"), TG_LABEL_NVLINK_ISLANDS);
	uint8_t isl[TG_MAX_GPUS];
	bool have;
	tg_err err;

	if (q > TG_MAX_GPUS) {
		err = tgk_owarn(b, o, "%s: %lld GPUs; only %d are tracked", p,
				(long long)q, TG_MAX_GPUS);
		if (err)
			return tgi_errf(b->ei, err, "out of memory");
	}
	have = il && parse_islands(il, n, isl);
	if (il && !have) {
		err = tgk_owarn(b, o, "label %s: bad value '%.60s' (want e.g. "
				"0-3.4-7); one NVLink island assumed",
				TG_LABEL_NVLINK_ISLANDS, il);
		if (err)
			return tgi_errf(b->ei, err, "out of memory");
	}
	err = tg_topology_node_set_gpus(b->t, id, n, have ? isl : NULL);
	return err ? tgk_node_core(b, o, err, p) : TG_OK;
}

/* status.allocatable (else .capacity): the resources pods ask for. */
static tg_err node_resources(bctx *b, const kobj *o, tg_node_id id,
			     const cJSON *status, const cJSON *alloc,
			     size_t *nopods)
{
	const char *apath = tgk_jget(status, "allocatable") ?
		"status.allocatable" : "status.capacity";
	const cJSON *c;
	char p[300];
	bool pods = false;
	tg_err err;

	cJSON_ArrayForEach(c, alloc) {
		char tb[64];
		const char *txt = tgk_qty_text(c, tb, sizeof(tb));
		uint32_t s;
		unsigned rid;
		int64_t q;

		tgk_pjoin(p, sizeof(p), apath, c->string);
		if (!txt || tg_k8s_quantity(txt, strcmp(c->string, "cpu") == 0,
					    &q) != TG_OK)
			return tgk_oerr(b, o, c, TG_EINVAL,
					"%s: bad quantity '%.60s'", p,
					txt ? txt : "(not a string)");
		if (strcmp(c->string, "nvidia.com/gpu") == 0) {
			err = node_gpus(b, o, id, q, p);
			if (err)
				return err;
			continue;
		}
		if (strcmp(c->string, "cpu") == 0)
			rid = TG_RES_CPU;
		else if (strcmp(c->string, "memory") == 0)
			rid = TG_RES_MEMORY;
		else if (strcmp(c->string, "pods") == 0)
			rid = TG_RES_PODS;
		else if ((s = tgi_strtab_find(&b->rnames, c->string)))
			rid = b->rid[s];
		else
			continue;	/* nobody asks for it */
		pods = pods || rid == TG_RES_PODS;
		err = tg_topology_node_set_resource(b->t, id, rid, q);
		if (err)
			return tgk_node_core(b, o, err, p);
	}
	if (!pods) {
		(*nopods)++;
		err = tg_topology_node_set_resource(b->t, id, TG_RES_PODS,
						    K8S_DEFAULT_PODS);
		if (err)
			return tgk_node_core(b, o, err, "pods");
	}
	return TG_OK;
}

static tg_err node_taints(bctx *b, const kobj *o, tg_node_id id,
			  const cJSON *taints)
{
	const cJSON *c;
	char p[300];
	unsigned ti = 0;
	tg_err err;

	cJSON_ArrayForEach(c, taints) {
		const cJSON *k2, *v, *e;
		int eff;

		tgk_pidx(p, sizeof(p), "spec.taints", ti++);
		if (!cJSON_IsObject(c))
			return tgk_oerr(b, o, c, TG_EINVAL,
					"%s: expected an object", p);
		err = tgk_field(b, o, c, p, "key", T_STR, &k2);
		if (!err)
			err = tgk_field(b, o, c, p, "value", T_STR, &v);
		if (!err)
			err = tgk_field(b, o, c, p, "effect", T_STR, &e);
		if (err)
			return err;
		if (!k2 || !*k2->valuestring || !e ||
		    tgk_taint_effect(e->valuestring, &eff) || eff < 0)
			return tgk_oerr(b, o, c, TG_EINVAL,
					"%s: needs a key and an effect "
					"(NoSchedule, PreferNoSchedule, "
					"NoExecute)", p);
		err = tg_topology_node_add_taint(b->t, id, k2->valuestring,
						 v ? v->valuestring : NULL,
						 (tg_taint_effect)eff);
		if (err)
			return tgk_node_core(b, o, err, p);
	}
	return TG_OK;
}

static tg_err add_node(bctx *b, const kobj *o, size_t *nopods)
{
	const cJSON *labels, *spec, *status, *alloc, *taints, *un;
	const char *path[TG_MAX_LAYERS];
	tg_node_id id;
	unsigned i, j;
	tg_err err;

	err = tgk_obj_meta(b, o, &labels, NULL);
	if (!err)
		err = tgk_field(b, o, o->j, "", "spec", T_OBJ, &spec);
	if (!err)
		err = tgk_field(b, o, o->j, "", "status", T_OBJ, &status);
	if (!err)
		err = tgk_field(b, o, status, "status", "allocatable", T_OBJ,
				&alloc);
	if (!err && !alloc)
		err = tgk_field(b, o, status, "status", "capacity", T_OBJ,
				&alloc);
	if (!err)
		err = tgk_field(b, o, spec, "spec", "taints", T_ARR, &taints);
	if (!err)
		err = tgk_field(b, o, spec, "spec", "unschedulable", T_BOOL,
				&un);
	if (err)
		return err;
	for (i = 0; i < b->nlevels; i++) {
		path[i] = NULL;
		for (j = 0; j < b->levels[i].nkeys && !path[i]; j++) {
			path[i] = tgk_jstr(labels, b->levels[i].keys[j]);
			if (path[i] && !*path[i])
				path[i] = NULL;
		}
	}
	err = tg_topology_add_node(b->t, o->name, b->nlevels ? path : NULL,
				   &id);
	if (err)
		return tgk_node_core(b, o, err, "cannot add the node");
	err = node_labels(b, o, id, labels);
	if (!err)
		err = node_resources(b, o, id, status, alloc, nopods);
	if (err)
		return err;
	if (un && cJSON_IsTrue(un)) {
		err = tg_topology_node_set_unschedulable(b->t, id, true);
		if (err)
			return tgk_node_core(b, o, err, "spec.unschedulable");
	}
	return node_taints(b, o, id, taints);
}

/*
 * A Node that cannot be read (\p err, b->ei says why) is left out with a
 * warning: when it was added already, it takes no new pod.
 */
static tg_err node_fail(bctx *b, const kobj *o, tg_err err)
{
	char msg[sizeof(b->ei->msg)];
	tg_node_id id;
	bool added;

	if (tgk_fail_msg(b, err, msg, sizeof(msg)))
		return err;
	added = *o->name && tg_topology_node_find(b->t, o->name, &id) == TG_OK;
	if (added) {
		err = tg_topology_node_set_unschedulable(b->t, id, true);
		if (err)
			return tgk_node_core(b, o, err, "unschedulable");
	}
	err = tgk_warnf(b->k, "%s; the node is left out%s", msg,
			added ? " (it takes no new pod)" : "");
	return err ? tgi_errf(b->ei, err, "out of memory") : TG_OK;
}

tg_err tgk_add_topology(bctx *b)
{
	size_t n = b->first[C_NODE + 1] - b->first[C_NODE], i, nopods = 0;
	const kobj **nodes;
	unsigned l;
	tg_err err = TG_OK;

	for (l = 0; l < b->nlevels; l++) {
		const klevel *lv = &b->levels[l];

		err = tg_topology_add_layer(b->t, lv->name, lv->keys[0]);
		if (err == TG_ENOMEM)
			return tgi_errf(b->ei, err, "out of memory");
		if (err)
			return tgi_errf(b->ei, err,
					"topology level '%s' (label %s): %s",
					lv->name, lv->keys[0],
					tg_strerror(err));
	}
	/* as Kueue: a node without the label of the node level is not in
	 * the topology (tg_topology_build() warns for each) */
	if (b->host_level && tgi_topology_set_node_key(b->t, K_HOSTNAME))
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	if (n > TG_MAX_NODES)
		return tgi_errf(b->ei, TG_ELIMIT, "more than %u nodes",
				TG_MAX_NODES);
	nodes = tgi_calloc(n ? n : 1, sizeof(*nodes));
	if (!nodes)
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	memcpy(nodes, b->idx + b->first[C_NODE], n * sizeof(*nodes));
	qsort(nodes, n, sizeof(*nodes), node_cmp);
	for (i = 0; i < n && !err; i++) {
		err = add_node(b, nodes[i], &nopods);
		if (err)
			err = node_fail(b, nodes[i], err);
	}
	tgi_free(nodes);
	for (i = 1; i < b->badnodes.n && !err; i++) {
		const char *nm = tgi_strtab_get(&b->badnodes, (uint32_t)i);
		tg_node_id id;

		if (tg_topology_node_find(b->t, nm, &id) == TG_OK &&
		    (err = tg_topology_node_set_unschedulable(b->t, id, true)))
			err = tgi_errf(b->ei, err, "node '%s': %s", nm,
				       tg_strerror(err));
	}
	if (err)
		return err;
	if (nopods) {
		err = tgk_warnf(b->k,
				"%zu node%s without status.allocatable.pods; "
				"%d assumed", nopods, nopods == 1 ? "" : "s",
				K8S_DEFAULT_PODS);
		if (err)
			return tgi_errf(b->ei, err, "out of memory");
	}
	err = tg_topology_build(b->t, b->ei);
	if (err)
		return err;
	for (l = 0; l < tg_topology_nwarnings(b->t); l++) {
		err = tgk_warnf(b->k, "%s", tg_topology_warning(b->t, l));
		if (err)
			return tgi_errf(b->ei, err, "out of memory");
	}
	return TG_OK;
}

/* The topology has the nodes: trees the loader owns can go. */
void tgk_drop_node_trees(bctx *b)
{
	size_t i;

	for (i = b->first[C_NODE]; i < b->first[C_NODE + 1]; i++) {
		kobj *o = b->idx[i];

		if (o->own_tree) {
			cJSON_Delete(o->j);
			o->j = NULL;
			b->k->spent = true;
		} else if (o->lent_tree) {
			o->j = NULL;	/* the cache's: kept there */
			b->k->spent = true;
		}
	}
}
