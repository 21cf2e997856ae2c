/*
 * shared/src/load/k8s/k8s_levels.c - the topology's levels, first source that
 * gives some: tg_k8s_set_levels(), Koordinator's ClusterNetworkTopology
 * "default", a KAI or Kueue Topology (the one a pending gang names, else
 * the first by name), else a preset whose keys the nodes carry.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s_load.h"

static tg_err level_push(bctx *b, const kobj *o, const char *name,
			 const char *key, const char *alias)
{
	klevel *l;

	if (b->nlevels >= TG_MAX_LAYERS) {
		if (o)
			return tgk_oerr(b, o, NULL, TG_ELIMIT,
					"more than %d topology levels",
					TG_MAX_LAYERS);
		return tgi_errf(b->ei, TG_ELIMIT,
				"more than %d topology levels", TG_MAX_LAYERS);
	}
	l = &b->levels[b->nlevels++];
	memset(l, 0, sizeof(*l));
	l->name = name;
	l->keys[0] = key;
	l->nkeys = 1;
	l->alias = alias;
	return TG_OK;
}

/* The entries of spec.networkTopologySpec, checked, into \p ents. */
static tg_err cnt_entries(bctx *b, const kobj *o, const cJSON *list,
			  const cJSON **ents)
{
	const cJSON *e;
	char path[300];
	size_t i = 0, j;
	tg_err err;

	cJSON_ArrayForEach(e, list) {
		const cJSON *tl, *pl, *lk;

		tgk_pidx(path, sizeof(path), "spec.networkTopologySpec",
			 (unsigned)i);
		if (!cJSON_IsObject(e))
			return tgk_oerr(b, o, e, TG_EINVAL,
					"%s: expected an object", path);
		err = tgk_field(b, o, e, path, "topologyLayer", T_STR, &tl);
		if (!err)
			err = tgk_field(b, o, e, path, "parentTopologyLayer",
					T_STR, &pl);
		if (!err)
			err = tgk_field(b, o, e, path, "labelKey", T_ARR, &lk);
		if (err)
			return err;
		if (!tl || !*tl->valuestring)
			return tgk_oerr(b, o, e, TG_EINVAL,
					"%s.topologyLayer: missing", path);
		for (j = 0; j < i; j++)
			if (strcmp(tgk_jstr(ents[j], "topologyLayer"),
				   tl->valuestring) == 0)
				return tgk_oerr(b, o, e, TG_EINVAL,
						"%s.topologyLayer: '%.60s' "
						"appears twice", path,
						tl->valuestring);
		ents[i++] = e;
	}
	return TG_OK;
}

/* The one entry not done yet whose parent is \p parent (*ni), or none. */
static tg_err cnt_child(bctx *b, const kobj *o, const cJSON **ents,
			const bool *done, size_t n, const char *parent,
			const cJSON **next, size_t *ni)
{
	size_t i;

	*next = NULL;
	for (i = 0; i < n; i++) {
		const char *pl = tgk_jstr(ents[i], "parentTopologyLayer");

		if (done[i])
			continue;
		if (!pl || !*pl)
			pl = "ClusterTopologyLayer";
		if (strcmp(pl, parent) != 0)
			continue;
		if (*next)
			return tgk_oerr(b, o, ents[i], TG_EINVAL,
					"spec.networkTopologySpec: layers "
					"'%.60s' and '%.60s' share the parent "
					"'%.60s'; not a chain",
					tgk_jstr(*next, "topologyLayer"),
					tgk_jstr(ents[i], "topologyLayer"),
					parent);
		*next = ents[i];
		*ni = i;
	}
	return TG_OK;
}

/* Entry \p e (number \p ni) as a level: its layer, its label keys. */
static tg_err cnt_level(bctx *b, const kobj *o, const cJSON *e, size_t ni)
{
	const cJSON *lk = tgk_jget(e, "labelKey"), *k2;
	char path[300];
	unsigned nk = 0;
	klevel *l;
	tg_err err;

	tgk_pidx(path, sizeof(path), "spec.networkTopologySpec",
		 (unsigned)ni);
	if (cJSON_GetArraySize(lk) < 1)
		return tgk_oerr(b, o, e, TG_EINVAL, "%s.labelKey: missing",
				path);
	err = level_push(b, o, tgk_jstr(e, "topologyLayer"), NULL, NULL);
	if (err)
		return err;
	l = &b->levels[b->nlevels - 1];
	l->nkeys = 0;
	cJSON_ArrayForEach(k2, lk) {
		if (!cJSON_IsString(k2) || !*k2->valuestring)
			return tgk_oerr(b, o, k2, TG_EINVAL, "%s.labelKey: "
					"expected non-empty strings", path);
		if (nk < K8S_MAX_ANYOF)
			l->keys[nk++] = k2->valuestring;
	}
	l->nkeys = nk;
	if (cJSON_GetArraySize(lk) > K8S_MAX_ANYOF) {
		err = tgk_owarn(b, o, "%s.labelKey: only the first %d keys are "
				"used", path, K8S_MAX_ANYOF);
		if (err)
			return tgi_errf(b->ei, err, "out of memory");
	}
	return TG_OK;
}

/* Koordinator's ClusterNetworkTopology "default": parent order. */
static tg_err levels_cnt(bctx *b, const kobj *o)
{
	const cJSON *spec, *list;
	const char *parent = "ClusterTopologyLayer";
	size_t n, i, steps;
	const cJSON **ents;
	bool *done;
	tg_err err;

	err = tgk_field(b, o, o->j, "", "spec", T_OBJ, &spec);
	if (!err)
		err = tgk_field(b, o, spec, "spec", "networkTopologySpec",
				T_ARR, &list);
	if (err)
		return err;
	n = (size_t)cJSON_GetArraySize(list);
	ents = tgi_calloc(n ? n : 1, sizeof(*ents));
	done = tgi_calloc(n ? n : 1, sizeof(*done));
	if (!ents || !done) {
		err = tgi_errf(b->ei, TG_ENOMEM, "out of memory");
		goto out;
	}
	err = cnt_entries(b, o, list, ents);
	/* walk down from the cluster, one child per layer */
	for (steps = 0; steps <= n && !err; steps++) {
		const cJSON *next;
		size_t ni = 0;

		err = cnt_child(b, o, ents, done, n, parent, &next, &ni);
		if (err || !next)
			break;
		done[ni] = true;
		parent = tgk_jstr(next, "topologyLayer");
		if (strcmp(parent, "NodeTopologyLayer") == 0)
			break;
		err = cnt_level(b, o, next, ni);
	}
	for (i = 0; i < n && !err; i++) {
		const char *tl = tgk_jstr(ents[i], "topologyLayer");

		if (done[i] || strcmp(tl, "NodeTopologyLayer") == 0 ||
		    strcmp(tl, "ClusterTopologyLayer") == 0)
			continue;
		err = tgk_owarn(b, o, "layer '%.60s' is not below "
				"ClusterTopologyLayer's chain; ignored", tl);
		if (err)
			err = tgi_errf(b->ei, err, "out of memory");
	}
out:
	tgi_free(ents);
	tgi_free(done);
	return err;
}

/* A KAI or Kueue Topology: spec.levels[].nodeLabel, coarse to fine. */
static tg_err levels_topology(bctx *b, const kobj *o)
{
	const cJSON *spec, *list, *e;
	char path[300];
	unsigned i = 0, n;
	tg_err err;

	err = tgk_field(b, o, o->j, "", "spec", T_OBJ, &spec);
	if (!err)
		err = tgk_field(b, o, spec, "spec", "levels", T_ARR, &list);
	if (err)
		return err;
	n = (unsigned)cJSON_GetArraySize(list);
	if (n < 1)
		return tgk_oerr(b, o, spec, TG_EINVAL, "spec.levels: missing");
	cJSON_ArrayForEach(e, list) {
		const cJSON *nl, *al = NULL;

		tgk_pidx(path, sizeof(path), "spec.levels", i);
		if (!cJSON_IsObject(e))
			return tgk_oerr(b, o, e, TG_EINVAL,
					"%s: expected an object", path);
		err = tgk_field(b, o, e, path, "nodeLabel", T_STR, &nl);
		if (!err && strcmp(o->group, G_KAI_TOPO) == 0)
			err = tgk_field(b, o, e, path, "alias", T_STR, &al);
		if (err)
			return err;
		if (!nl || !*nl->valuestring)
			return tgk_oerr(b, o, e, TG_EINVAL,
					"%s.nodeLabel: missing",
					path);
		if (strcmp(nl->valuestring, K_HOSTNAME) == 0) {
			if (i + 1 != n)
				return tgk_oerr(b, o, nl, TG_EINVAL,
						"%s.nodeLabel: %s may only be "
						"the last level", path,
						K_HOSTNAME);
			b->host_level = true;
			break;	/* the node level, not a layer */
		}
		err = level_push(b, o, nl->valuestring, nl->valuestring,
				 al && *al->valuestring ? al->valuestring :
							  NULL);
		if (err)
			return err;
		i++;
	}
	return TG_OK;
}

static int tier_cmp(const void *a, const void *c)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)c;

	return x < y ? 1 : x > y ? -1 : 0;	/* highest first */
}

static const char *const gen1[] = {
	"network.topology.nvidia.com/datacenter",
	"network.topology.nvidia.com/spine",
	"network.topology.nvidia.com/block",
	"network.topology.nvidia.com/accelerator",
};
static const char *const gen2[] = {
	"network.topology.nvidia.com/core",
	"network.topology.nvidia.com/spine",
	"network.topology.nvidia.com/leaf",
	"network.topology.nvidia.com/accelerator",
};
static const char *const zone[] = {
	"topology.kubernetes.io/region",
	"topology.kubernetes.io/zone",
};
static const char tierp[] = "fabric.topograph.run/tier-";
static const char accel[] = "accelerator.topograph.run/domain";

/* One node label key into \p ps. */
static tg_err preset_key(bctx *b, kpreset *ps, const char *key)
{
	unsigned i, t;

	if (strncmp(key, tierp, sizeof(tierp) - 1) == 0 &&
	    tg_u32_parse(key + sizeof(tierp) - 1, &t) &&
	    key[sizeof(tierp) - 1] >= '0' && key[sizeof(tierp) - 1] <= '9') {
		for (i = 0; i < ps->ntiers; i++)
			if (ps->tiers[i] == t)
				break;
		if (i == ps->ntiers && ps->ntiers == TG_MAX_LAYERS)
			/* a level dropped would be silent */
			return tgi_errf(b->ei, TG_ELIMIT, "node labels %sN: "
					"more than %d tiers (a topology holds "
					"at most %d levels)", tierp,
					TG_MAX_LAYERS, TG_MAX_LAYERS);
		if (i == ps->ntiers)
			ps->tiers[ps->ntiers++] = t;
	} else if (strcmp(key, accel) == 0) {
		ps->has_accel = true;
	}
	for (i = 0; i < 4; i++) {
		if (strcmp(key, gen1[i]) == 0)
			ps->seen[i] = true;
		if (strcmp(key, gen2[i]) == 0)
			ps->seen[i == 1 ? 1 : i == 3 ? 3 : i == 0 ? 4 : 5] =
				true;
	}
	for (i = 0; i < 2; i++)
		if (strcmp(key, zone[i]) == 0)
			ps->has_zone[i] = true;
	return TG_OK;
}

/* The preset keys every Node carries, into \p ps. */
static tg_err preset_scan(bctx *b, kpreset *ps)
{
	size_t j;
	tg_err err;

	for (j = b->first[C_NODE]; j < b->first[C_NODE + 1]; j++) {
		const cJSON *labels = tgk_jget(tgk_jget(b->idx[j]->j,
							"metadata"),
					       "labels"), *c;

		/* a Node whose labels are not a map of strings is refused
		 * by add_node(); it adds no level */
		if (!cJSON_IsObject(labels))
			continue;
		cJSON_ArrayForEach(c, labels) {
			if (!c->string || !cJSON_IsString(c))
				continue;
			err = preset_key(b, ps, c->string);
			if (err)
				return err;
		}
	}
	return TG_OK;
}

/* Presets matched against the labels the nodes carry. */
static tg_err levels_preset(bctx *b)
{
	kpreset ps;
	const bool *seen = ps.seen;
	unsigned i;
	tg_err err;

	memset(&ps, 0, sizeof(ps));
	/* the Nodes the cache scanned last time: the same keys */
	if (!tgk_cache_preset(b, &ps)) {
		err = preset_scan(b, &ps);
		if (err)
			return err;
		tgk_cache_set_preset(b, &ps);
	}
	if (ps.ntiers || ps.has_accel) {
		if (ps.ntiers > 1)
			qsort(ps.tiers, ps.ntiers, sizeof(unsigned), tier_cmp);
		for (i = 0; i < ps.ntiers; i++) {
			snprintf(b->tierkeys[i], sizeof(b->tierkeys[i]),
				 "%s%u", tierp, ps.tiers[i]);
			err = level_push(b, NULL, b->tierkeys[i],
					 b->tierkeys[i], NULL);
			if (err)
				return err;
		}
		return ps.has_accel ? level_push(b, NULL, accel, accel, NULL) :
				      TG_OK;
	}
	if (seen[0] || seen[1] || seen[2] || seen[3] || seen[4] || seen[5]) {
		bool g2 = !seen[0] && !seen[2] && (seen[4] || seen[5]);
		const char *const *keys = g2 ? gen2 : gen1;
		bool on[4];

		on[0] = g2 ? seen[4] : seen[0];
		on[1] = seen[1];
		on[2] = g2 ? seen[5] : seen[2];
		on[3] = seen[3];
		for (i = 0; i < 4; i++) {
			if (!on[i])
				continue;
			err = level_push(b, NULL, keys[i], keys[i], NULL);
			if (err)
				return err;
		}
		return TG_OK;
	}
	for (i = 0; i < 2; i++) {
		if (!ps.has_zone[i])
			continue;
		err = level_push(b, NULL, zone[i], zone[i], NULL);
		if (err)
			return err;
	}
	return TG_OK;
}

/*
 * A ClusterNetworkTopology or Topology that cannot be read or contradicts
 * itself (\p err, b->ei says why) is left out with a warning: the levels
 * come from the next source (gangs that name it then fail on their own).
 */
static tg_err levels_fail(bctx *b, tg_err err)
{
	char msg[sizeof(b->ei->msg)];

	if (tgk_fail_msg(b, err, msg, sizeof(msg)))
		return err;
	b->nlevels = 0;
	err = tgk_warnf(b->k, "%s; left out: the levels come from the next "
			"source", msg);
	return err ? tgi_errf(b->ei, err, "out of memory") : TG_OK;
}

tg_err tgk_pick_levels(bctx *b)
{
	const kobj *o, *best = NULL, *named = NULL;
	bool several = false;
	size_t i;
	tg_err err;

	if (b->k->have_levels) {
		for (i = 0; i < b->k->nlevels; i++) {
			const char *key = b->k->levels[i];

			if (i + 1 == b->k->nlevels && i > 0 &&
			    strcmp(key, K_HOSTNAME) == 0) {
				b->host_level = true;
				break;
			}
			err = level_push(b, NULL, key, key, NULL);
			if (err)
				return err;
		}
		return TG_OK;
	}
	o = tgk_find_obj(b, C_CNT, "ClusterNetworkTopology", G_KOORD_CNT,
			 "", "default");
	if (o) {
		err = levels_cnt(b, o);
		if (err != TG_EINVAL && err != TG_ELIMIT)
			return err;
		err = levels_fail(b, err);
		if (err)
			return err;
	}
	if (b->first[C_CNT] < b->first[C_CNT + 1]) {
		err = tgk_warnf(b->k,
				"ClusterNetworkTopology objects other than "
				"'default' are ignored");
		if (err)
			return tgi_errf(b->ei, err, "out of memory");
	}
	/* a Topology a pending gang names, else the first by name */
	for (i = 0; i < b->ngroups; i++) {
		kgroup *g = &b->groups[i];
		const kobj *t;

		if (!g->topo || !g->nmembers || !g->ready)
			continue;
		t = tgk_find_obj(b, C_TOPOLOGY, "Topology", G_KAI_TOPO, "",
				 g->topo);
		if (!t)
			t = tgk_find_obj(b, C_TOPOLOGY, "Topology", G_KUEUE,
					 "", g->topo);
		if (!t) {
			err = tgk_gwarn(b, g, "names Topology '%.100s', which "
					"is not in the snapshot", g->topo);
			if (err)
				return err;
			continue;
		}
		if (!named) {
			named = t;
		} else if (t != named) {
			several = true;
			if (strcmp(t->name, named->name) < 0)
				named = t;
		}
	}
	if (several) {
		err = tgk_warnf(b->k, "pending gangs name several Topologies; "
				"'%s' is used", named->name);
		if (err)
			return tgi_errf(b->ei, err, "out of memory");
	}
	for (i = b->first[C_TOPOLOGY]; i < b->first[C_TOPOLOGY + 1]; i++) {
		o = b->idx[i];
		if (!best || strcmp(o->name, best->name) < 0)
			best = o;
	}
	if (named)
		best = named;
	if (best) {
		err = levels_topology(b, best);
		if (err != TG_EINVAL && err != TG_ELIMIT)
			return err;
		err = levels_fail(b, err);
		if (err)
			return err;
	}
	return levels_preset(b);
}

bool tgk_is_level(const bctx *b, const char *name)
{
	unsigned i, j;

	for (i = 0; i < b->nlevels; i++) {
		if (strcmp(b->levels[i].name, name) == 0 ||
		    (b->levels[i].alias &&
		     strcmp(b->levels[i].alias, name) == 0))
			return true;
		for (j = 0; j < b->levels[i].nkeys; j++)
			if (strcmp(b->levels[i].keys[j], name) == 0)
				return true;
	}
	return false;
}

/* Maps a KAI alias to its node label. */
const char *tgk_level_of(const bctx *b, const char *name)
{
	unsigned i;

	for (i = 0; i < b->nlevels; i++)
		if (b->levels[i].alias &&
		    strcmp(b->levels[i].alias, name) == 0)
			return b->levels[i].keys[0];
	return name;
}
