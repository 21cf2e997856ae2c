/*
 * k8s_bridge/store.c - object caches keyed by namespace/name.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "map.h"
#include "store.h"
#include "util.h"
#include "topogang/k8s.h"

#define LAST_APPLIED "kubectl.kubernetes.io/last-applied-configuration"

static char *dup_or_null(const char *s)
{
	return s ? br_xstrdup(s) : NULL;
}

/* Whether the pod names its gang in a dialect the loader reads already. */
static bool has_dialect(const cJSON *labels, const cJSON *annots)
{
	const char *key;
	bool annot;
	unsigned i;

	for (i = 0; (key = tg_k8s_dialect_key(NULL, i, &annot)); i++)
		if (br_jget(annot ? annots : labels, key))
			return true;
	return false;
}

/* Upstream scheduling.k8s.io gangs, spoken as a Koordinator PodGroup. */
static void translate_group(cJSON *j, cJSON *md)
{
	const char *pg = br_jpath_str(j, "spec.schedulingGroup.podGroupName");
	cJSON *labels;

	if (!pg || !*pg)
		return;
	labels = cJSON_GetObjectItemCaseSensitive(md, "labels");
	if (has_dialect(labels, br_jget(md, "annotations")))
		return;
	if (!cJSON_IsObject(labels)) {
		cJSON_DeleteItemFromObjectCaseSensitive(md, "labels");
		labels = cJSON_AddObjectToObject(md, "labels");
	}
	/* Koordinator's first key: its pod-group label */
	if (labels)
		cJSON_AddStringToObject(labels,
					tg_k8s_dialect_key("koordinator", 0,
							   NULL), pg);
}

/*
 * The gang annotation ("NAMESPACE/NAME") counts only for a gang of the
 * pod's own namespace: a pod of another tenant cannot make itself a bound
 * member of someone else's gang (and pin, delay or reset it).  NULL
 * otherwise.
 */
static char *own_gang(const br_obj *o, const char *gang)
{
	const char *ns = o->ns && *o->ns ? o->ns : "default";
	size_t n = strlen(ns);

	if (!gang || strncmp(gang, ns, n) != 0 || gang[n] != '/' ||
	    !gang[n + 1])
		return NULL;
	return br_xstrdup(gang);
}

static void pod_fields(br_obj *o, const cJSON *j)
{
	const cJSON *spec = br_jget(j, "spec"), *st = br_jget(j, "status");
	const cJSON *md = br_jget(j, "metadata"), *c, *gates, *del;
	const char *phase = br_jstr(st, "phase"), *v;

	v = br_jstr(st, "nominatedNodeName");
	o->nominated = v && *v ? br_xstrdup(v) : NULL;
	o->ann_gang = own_gang(o, br_jstr(br_jget(md, "annotations"),
					   BR_ANN_GANG));
	o->ann_domain = dup_or_null(br_jstr(br_jget(md, "annotations"),
					    BR_ANN_DOMAIN));
	del = br_jget(md, "deletionTimestamp");
	o->deleting = del && !cJSON_IsNull(del);
	gates = br_jget(spec, "schedulingGates");
	o->gated = cJSON_IsArray(gates) && cJSON_GetArraySize(gates) > 0;
	o->terminal = phase && (strcmp(phase, "Succeeded") == 0 ||
				strcmp(phase, "Failed") == 0);
	o->running = phase && strcmp(phase, "Running") == 0;
	cJSON_ArrayForEach(c, br_jget(st, "conditions")) {
		const char *type = br_jstr(c, "type");
		const char *status = br_jstr(c, "status");

		if (!type || !status)
			continue;
		if (strcmp(type, "PodScheduled") == 0 &&
		    strcmp(status, "False") == 0)
			o->cond_msg = br_xstrdup(br_jstr(c, "message") ?
						 br_jstr(c, "message") : "");
		if (strcmp(type, "DisruptionTarget") == 0 &&
		    strcmp(status, "True") == 0)
			o->disruption = true;
	}
}

static void move(cJSON *to, cJSON *from, const char *key)
{
	cJSON *v = cJSON_DetachItemFromObjectCaseSensitive(from, key);

	if (v)
		cJSON_AddItemToObject(to, key, v);
}

/* Containers keep their resources (and restartPolicy: sidecars). */
static cJSON *slim_containers(cJSON *list)
{
	cJSON *out = cJSON_CreateArray(), *c;

	cJSON_ArrayForEach(c, list) {
		cJSON *s = cJSON_CreateObject();

		if (!s)
			continue;
		if (cJSON_IsObject(c)) {
			move(s, c, "name");
			move(s, c, "resources");
			move(s, c, "restartPolicy");
		}
		cJSON_AddItemToArray(out, s);
	}
	return out;
}

/*
 * A pod's volumes as the loader reads them (k8s_volume.c): each volume's
 * name (so that "spec.volumes[i]" in a message is the pod's own i), and
 * of a claim only its claimName, of a generic ephemeral volume only that
 * it is one (the claim is POD-VOLUME); other sources are dropped.
 */
static cJSON *slim_volumes(cJSON *list)
{
	cJSON *out = cJSON_CreateArray(), *v;

	cJSON_ArrayForEach(v, list) {
		cJSON *s = cJSON_CreateObject(), *pvc;

		if (!s)
			continue;
		move(s, v, "name");
		pvc = cJSON_GetObjectItemCaseSensitive(v,
						       "persistentVolumeClaim");
		if (cJSON_IsObject(pvc))
			move(cJSON_AddObjectToObject(s, "persistentVolumeClaim"),
			     pvc, "claimName");
		if (cJSON_IsObject(br_jget(v, "ephemeral")))
			cJSON_AddObjectToObject(s, "ephemeral");
		cJSON_AddItemToArray(out, s);
	}
	return out;
}

/*
 * What the core's loader reads of a pod (shared/src/k8s.c): metadata,
 * the scheduling fields of spec (resourceClaims and the volumes' claims
 * included), container resources and the phase.
 */
static cJSON *slim_pod(cJSON *j)
{
	static const char *const meta[] = {
		"name", "namespace", "uid", "resourceVersion",
		"creationTimestamp", "deletionTimestamp", "labels",
		"annotations", "ownerReferences", NULL };
	static const char *const spec[] = {
		"nodeName", "schedulerName", "priority", "priorityClassName",
		"preemptionPolicy", "overhead", "nodeSelector", "affinity",
		"tolerations", "topologySpreadConstraints", "schedulingGates",
		"schedulingGroup", "resourceClaims", NULL };
	cJSON *out = cJSON_CreateObject(), *md, *sp, *st, *f;
	unsigned i;

	if (!out)
		return NULL;
	move(out, j, "apiVersion");
	move(out, j, "kind");
	md = cJSON_AddObjectToObject(out, "metadata");
	sp = cJSON_AddObjectToObject(out, "spec");
	st = cJSON_AddObjectToObject(out, "status");
	f = cJSON_GetObjectItemCaseSensitive(j, "metadata");
	for (i = 0; md && meta[i]; i++)
		move(md, f, meta[i]);
	f = cJSON_GetObjectItemCaseSensitive(j, "spec");
	for (i = 0; sp && spec[i]; i++)
		move(sp, f, spec[i]);
	if (sp && cJSON_IsArray(br_jget(f, "containers")))
		cJSON_AddItemToObject(sp, "containers",
				      slim_containers(cJSON_GetObjectItem
						      (f, "containers")));
	if (sp && cJSON_IsArray(br_jget(f, "volumes")))
		cJSON_AddItemToObject(sp, "volumes",
				      slim_volumes(cJSON_GetObjectItem(f,
								"volumes")));
	if (sp && cJSON_IsArray(br_jget(f, "initContainers")))
		cJSON_AddItemToObject(sp, "initContainers",
				      slim_containers(cJSON_GetObjectItem
						      (f, "initContainers")));
	f = cJSON_GetObjectItemCaseSensitive(j, "status");
	if (st) {
		move(st, f, "phase");
		move(st, f, "nominatedNodeName");
	}
	return out;
}

/* A Node's Ready condition, without its heartbeat and transition times. */
static cJSON *slim_conditions(cJSON *list)
{
	cJSON *out = cJSON_CreateArray(), *c;

	cJSON_ArrayForEach(c, list) {
		const char *type = br_jstr(c, "type");
		cJSON *s;

		if (!type || strcmp(type, "Ready") != 0)
			continue;
		s = cJSON_CreateObject();
		if (!s)
			continue;
		move(s, c, "type");
		move(s, c, "status");
		move(s, c, "reason");
		cJSON_AddItemToArray(out, s);
	}
	return out;
}

/*
 * What placement reads of a Node (shared/src/load/k8s/k8s_node.c and
 * k8s_field.c: metadata, labels and annotations, spec.taints,
 * spec.unschedulable, status.allocatable or .capacity) and its readiness.
 * A real Node is mostly status.images, the other conditions, nodeInfo,
 * addresses and volumes (10-50 KB); a kubelet heartbeat changes only
 * those and the conditions' times, so the slim object (and its sig) stays
 * the same.
 */
static cJSON *slim_node(cJSON *j)
{
	static const char *const meta[] = {
		"name", "uid", "resourceVersion", "creationTimestamp",
		"deletionTimestamp", "labels", "annotations", NULL };
	static const char *const spec[] = { "taints", "unschedulable", NULL };
	static const char *const status[] = { "allocatable", "capacity",
					      NULL };
	const char *const *keep[] = { meta, spec, status };
	const char *part[] = { "metadata", "spec", "status" };
	cJSON *out = cJSON_CreateObject(), *f;
	unsigned i, k;

	if (!out)
		return NULL;
	move(out, j, "apiVersion");
	move(out, j, "kind");
	for (k = 0; k < 3; k++) {
		cJSON *to;

		f = cJSON_GetObjectItemCaseSensitive(j, part[k]);
		if (!f || !cJSON_IsObject(f)) {
			/* not an object: the loader says so */
			move(out, j, part[k]);
			continue;
		}
		to = cJSON_AddObjectToObject(out, part[k]);
		for (i = 0; to && keep[k][i]; i++)
			move(to, f, keep[k][i]);
		if (to && k == 2 && cJSON_IsArray(br_jget(f, "conditions")))
			cJSON_AddItemToObject(to, "conditions",
					      slim_conditions(cJSON_GetObjectItem
							      (f, "conditions")));
	}
	return out;
}

/*
 * FNV-1a of the object's metadata and spec (and status, \p with_status:
 * a Node's allocatable and readiness matter to placement, a pod's or a
 * PodGroup's status writes do not).
 */
static uint64_t sig_of(const cJSON *slim, bool with_status)
{
	const char *parts[] = { "metadata", "spec", "status" };
	uint64_t h = 1469598103934665603ull;
	unsigned i;

	for (i = 0; i < (with_status ? 3u : 2u); i++) {
		const cJSON *v = br_jget(slim, parts[i]);
		char *t = v ? cJSON_PrintUnformatted(v) : NULL;
		const char *p;

		if (!t)
			continue;
		for (p = t; *p; p++) {
			h ^= (unsigned char)*p;
			h *= 1099511628211ull;
		}
		cJSON_free(t);
	}
	return h;
}

/* br_obj.serial: copies are made on the I/O thread, but count safely */
static uint64_t obj_serial;

br_obj *br_obj_from_json(cJSON *j, const char *kind, const char *api_version,
			 bool is_pod)
{
	cJSON *slim = NULL;
	cJSON *md = cJSON_GetObjectItemCaseSensitive(j, "metadata");
	cJSON *ann;
	const char *ns, *name, *ts;
	/* a core Node (list items lack kind: the informer's is passed) */
	bool is_node = !is_pod && kind && strcmp(kind, "Node") == 0 &&
		       (!api_version || strcmp(api_version, "v1") == 0);
	br_obj *o;

	name = br_jstr(md, "name");
	if (!name || !*name)
		return NULL;
	cJSON_DeleteItemFromObjectCaseSensitive(md, "managedFields");
	ann = cJSON_GetObjectItemCaseSensitive(md, "annotations");
	if (cJSON_IsObject(ann))
		cJSON_DeleteItemFromObjectCaseSensitive(ann, LAST_APPLIED);
	if (!br_jget(j, "kind") && kind)
		cJSON_AddStringToObject(j, "kind", kind);
	if (!br_jget(j, "apiVersion") && api_version)
		cJSON_AddStringToObject(j, "apiVersion", api_version);
	if (is_pod)
		translate_group(j, md);
	o = br_xcalloc(1, sizeof(*o));
	o->refs = 1;
	o->serial = __atomic_add_fetch(&obj_serial, 1, __ATOMIC_RELAXED);
	o->since = o->serial;
	ns = br_jstr(md, "namespace");
	if (is_pod && (!ns || !*ns))
		ns = "default";
	{
		/* the identity strings in one block (an object is never
		 * changed, a new version is a new object): a cache of
		 * 100,000 pods saves six allocations each */
		const cJSON *spec = br_jget(j, "spec");
		const char *f[6];
		size_t len[6], n = 0, i;
		char **to[6] = { &o->ns, &o->name, &o->uid, &o->rv,
				 &o->node, &o->sched };
		char *p;

		f[0] = ns ? ns : "";
		f[1] = name;
		f[2] = br_jstr(md, "uid") ? br_jstr(md, "uid") : "";
		f[3] = br_jstr(md, "resourceVersion") ?
		       br_jstr(md, "resourceVersion") : "";
		f[4] = is_pod ? br_jstr(spec, "nodeName") : NULL;
		f[5] = is_pod ? br_jstr(spec, "schedulerName") : NULL;
		if (is_pod && (!f[5] || !*f[5]))
			f[5] = "default-scheduler";
		for (i = 0; i < 6; i++) {
			len[i] = f[i] ? strlen(f[i]) : 0;
			n += len[i] + 1;
		}
		n += len[0] + 1 + len[1] + 1;	/* the key */
		o->key = p = br_xmalloc(n);
		if (*f[0]) {
			memcpy(p, f[0], len[0]);
			p[len[0]] = '/';
			memcpy(p + len[0] + 1, f[1], len[1] + 1);
			p += len[0] + len[1] + 2;
		} else {
			memcpy(p, f[1], len[1] + 1);
			p += len[1] + 1;
		}
		for (i = 0; i < 6; i++) {
			if (!f[i] || (i == 4 && !*f[i]))
				continue;	/* node: NULL when pending */
			memcpy(p, f[i], len[i] + 1);
			*to[i] = p;
			p += len[i] + 1;
		}
	}
	ts = br_jstr(md, "creationTimestamp");
	if (!ts || !br_parse_rfc3339(ts, &o->created_us))
		o->created_us = 0;
	if (is_pod || is_node) {
		if (is_pod)
			pod_fields(o, j);
		slim = is_pod ? slim_pod(j) : slim_node(j);
		if (!slim) {
			br_obj_free(o);
			return NULL;
		}
	}
	{
		/* resourceVersion changes on every write: not part of it */
		cJSON *t = slim ? slim : j;
		cJSON *m = cJSON_GetObjectItemCaseSensitive(t, "metadata");
		cJSON *rv = cJSON_DetachItemFromObjectCaseSensitive(
			m, "resourceVersion");

		o->sig = sig_of(t, is_node);
		if (rv)
			cJSON_AddItemToObject(m, "resourceVersion", rv);
	}
	o->text = cJSON_PrintUnformatted(slim ? slim : j);
	cJSON_Delete(slim);
	if (!o->text) {
		br_obj_free(o);
		return NULL;
	}
	o->len = strlen(o->text);
	return o;
}

br_obj *br_obj_ref(br_obj *o)
{
	if (o)
		__atomic_add_fetch(&o->refs, 1, __ATOMIC_RELAXED);
	return o;
}

void br_obj_free(br_obj *o)
{
	if (!o || __atomic_sub_fetch(&o->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	free(o->key);	/* and ns, name, uid, rv, node, sched with it */
	if (o->text)
		cJSON_free(o->text);
	free(o->nominated);
	free(o->ann_gang);
	free(o->ann_domain);
	free(o->cond_msg);
	free(o);
}

cJSON *br_obj_parse(const br_obj *o)
{
	return cJSON_ParseWithLength(o->text, o->len);
}

/* ---- the hash table ---------------------------------------------------- */

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

void br_store_init(br_store *s)
{
	memset(s, 0, sizeof(*s));
}

void br_store_free(br_store *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		br_obj_free(s->all[i]);
	free(s->all);
	free(s->slots);
	if (s->chg) {
		br_map_free(s->chg);
		free(s->chg);
	}
	memset(s, 0, sizeof(*s));
}

void br_store_track(br_store *s)
{
	if (s->chg)
		return;
	s->chg = br_xcalloc(1, sizeof(*s->chg));
	br_map_init(s->chg, NULL);
	s->overflow = true;	/* the consumer starts with every object */
}

/* \p key changed (a tracked store). */
static void note(br_store *s, const char *key)
{
	if (!s->chg || s->overflow)
		return;
	if (s->chg->n >= s->n + BR_STORE_MAX_CHANGES) {
		br_map_free(s->chg);
		br_map_init(s->chg, NULL);
		s->overflow = true;
		return;
	}
	if (!br_map_get(s->chg, key))
		br_map_put(s->chg, key, (void *)1);
}

bool br_store_changes(br_store *s, char ***keys, size_t *n)
{
	br_map_ent *e;
	size_t slot, i = 0;
	bool whole;

	*keys = NULL;
	*n = 0;
	if (!s->chg)
		return false;
	whole = s->overflow;
	if (!whole && s->chg->n) {
		*keys = br_xcalloc(s->chg->n, sizeof(char *));
		for (e = br_map_first(s->chg, &slot); e;
		     e = br_map_next(s->chg, &slot, e))
			(*keys)[i++] = br_xstrdup(e->key);
		*n = i;
	}
	br_map_free(s->chg);
	br_map_init(s->chg, NULL);
	s->overflow = false;
	return !whole;
}

br_obj *br_store_get(const br_store *s, const char *key)
{
	br_obj *o;

	if (!s->nslots)
		return NULL;
	for (o = s->slots[hash(key) & (s->nslots - 1)]; o; o = o->chain)
		if (strcmp(o->key, key) == 0)
			return o;
	return NULL;
}

static void rehash(br_store *s)
{
	size_t n = s->nslots ? s->nslots * 2 : 64, i;

	free(s->slots);
	s->slots = br_xcalloc(n, sizeof(br_obj *));
	s->nslots = n;
	for (i = 0; i < s->n; i++) {
		br_obj *o = s->all[i];
		size_t b = hash(o->key) & (n - 1);

		o->chain = s->slots[b];
		s->slots[b] = o;
	}
}

static void unchain(br_store *s, br_obj *o)
{
	br_obj **pp = &s->slots[hash(o->key) & (s->nslots - 1)];

	while (*pp && *pp != o)
		pp = &(*pp)->chain;
	if (*pp)
		*pp = o->chain;
	o->chain = NULL;
}

br_obj *br_store_put(br_store *s, br_obj *o)
{
	br_obj *old = br_store_get(s, o->key);
	size_t b;

	if (old) {
		if (old->sig == o->sig)
			o->since = old->since;
		unchain(s, old);
		o->idx = old->idx;
		s->all[o->idx] = o;
		s->bytes -= old->len;
	} else {
		if (s->n + 1 > s->nslots)
			rehash(s);
		if (s->n == s->cap) {
			s->cap = s->cap ? s->cap * 2 : 64;
			s->all = br_xrealloc(s->all,
					     s->cap * sizeof(br_obj *));
		}
		o->idx = s->n;
		s->all[s->n++] = o;
	}
	b = hash(o->key) & (s->nslots - 1);
	o->chain = s->slots[b];
	s->slots[b] = o;
	s->bytes += o->len;
	note(s, o->key);
	return old;
}

br_obj *br_store_take(br_store *s, const char *key)
{
	br_obj *o = br_store_get(s, key);

	if (!o)
		return NULL;
	unchain(s, o);
	s->all[o->idx] = s->all[s->n - 1];
	s->all[o->idx]->idx = o->idx;
	s->n--;
	s->bytes -= o->len;
	note(s, o->key);
	return o;
}
