/*
 * shared/src/load/k8s/k8s.c - Kubernetes cluster snapshots as the core's model.
 *
 * tg_k8s_add() only parses text and files the objects it finds; all the
 * meaning is in tg_k8s_build(), which runs in passes over a sorted index of
 * the objects, so the result never depends on input order:
 *
 *   1. index: objects sorted by (kind, API group, namespace, name); a later
 *      copy of the same object replaces an earlier one (with a warning);
 *   2. PriorityClasses, then every Pod: priority, requests, state (bound,
 *      pending, skipped) and its group (dialect, namespace, name);
 *   3. groups: PodGroup CRs, minimum sizes, GangGroups, topology requests;
 *   4. levels (tg_k8s_set_levels, ClusterNetworkTopology "default", a KAI
 *      or Kueue Topology, else a preset the node labels match);
 *   5. the topology: layers, nodes in natural name order, build; bound pods
 *      become allocations;
 *   6. one tg_gang per ready group (or lone pending pod), pod sets by
 *      (role, shape, node constraints), then decision order.
 *
 * An object that cannot be read costs only what depends on it: a pending
 * pod's or PodGroup's gang fails (tg_k8s_failed(), the message names the
 * input, the object and the field), a Node is left out, a bound pod's node
 * takes no new pod, a Topology is ignored (warnings).  Only running out of
 * memory or a bound of the whole build ends it with one error; the caller
 * then gets nothing.  Whatever is skipped
 * on purpose (gated pods, unknown kinds, soft constraints the core does
 * not model) is a warning.
 *
 * Defaults: a node without status.allocatable.pods takes 110 (the
 * kubelet's default; one warning counts them); a pod without a namespace
 * is in "default".
 */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s_internal.h"

/*
 * Bounds on what the loader keeps; hitting one is TG_ELIMIT: objects over
 * all inputs, tg_k8s_add() calls, bytes of an annotation parsed as JSON,
 * label keys of one layer ("any of"), PodGroups in one GangGroup.
 * Warnings past K8S_MAX_WARNINGS are counted in one "... more" line.
 */
#define K8S_MAX_OBJECTS		(1u << 24)
#define K8S_MAX_SOURCES		65536
#define K8S_MAX_WARNINGS	1000
#define K8S_MAX_ANNOT_JSON	65536
#define K8S_MAX_ANYOF		8
#define K8S_MAX_GANG_GROUPS	64
/* Bound-pod matches of pod affinity terms kept for reuse (a cache). */
#define K8S_MAX_AFF_CACHE	(1u << 24)
#define K8S_DEFAULT_PODS	110

/* Gang dialect label and annotation keys (research/k8s-api.md §2). */
#define L_KOORD_PG	"pod-group.scheduling.sigs.k8s.io"
#define L_KOORD_PG_OLD	"pod-group.scheduling.sigs.k8s.io/name"
#define L_SP_PG		"scheduling.x-k8s.io/pod-group"
#define A_KOORD_NAME	"gang.scheduling.koordinator.sh/name"
#define A_KOORD_MIN	"gang.scheduling.koordinator.sh/min-available"
#define A_KOORD_GROUPS	"gang.scheduling.koordinator.sh/groups"
#define A_KOORD_SPEC \
	"gang.scheduling.koordinator.sh/network-topology-spec"
#define A_KOORD_INDEX \
	"gang.scheduling.koordinator.sh/network-topology-index"
#define A_KAI_PG	"pod-group-name"
#define A_KAI_TOPO	"kai.scheduler/topology"
#define A_KAI_REQ	"kai.scheduler/topology-required-placement"
#define A_KAI_PREF	"kai.scheduler/topology-preferred-placement"
#define A_KAI_SEG_SIZE	"kai.scheduler/segment-size"
#define A_KAI_SEG_REQ	"kai.scheduler/segment-topology-required-placement"
#define A_KAI_SEG_PREF \
	"kai.scheduler/segment-topology-preferred-placement"
#define L_KAI_SUBGROUP	"kai.scheduler/subgroup-name"
#define A_KUEUE_REQ	"kueue.x-k8s.io/podset-required-topology"
#define A_KUEUE_PREF	"kueue.x-k8s.io/podset-preferred-topology"
#define A_KUEUE_UNC	"kueue.x-k8s.io/podset-unconstrained-topology"
#define A_KUEUE_SLICE	"kueue.x-k8s.io/podset-slice-required-topology"
#define A_KUEUE_SSIZE	"kueue.x-k8s.io/podset-slice-size"
#define A_KUEUE_SLICES	\
	"kueue.x-k8s.io/podset-slice-required-topology-constraints"
#define L_KUEUE_GROUP	"kueue.x-k8s.io/pod-group-name"
#define A_KUEUE_TOTAL	"kueue.x-k8s.io/pod-group-total-count"
#define L_LWS_NAME	"leaderworkerset.sigs.k8s.io/name"
#define L_LWS_GROUP	"leaderworkerset.sigs.k8s.io/group-index"
#define L_LWS_WORKER	"leaderworkerset.sigs.k8s.io/worker-index"
#define A_LWS_SIZE	"leaderworkerset.sigs.k8s.io/size"
#define A_LWS_EXCL	"leaderworkerset.sigs.k8s.io/exclusive-topology"
#define L_JOB_INDEX	"batch.kubernetes.io/job-completion-index"
#define L_KF_INDEX	"training.kubeflow.org/replica-index"
#define L_KF_TYPE	"training.kubeflow.org/replica-type"
#define K_HOSTNAME	"kubernetes.io/hostname"

#define G_SP		"scheduling.x-k8s.io"
#define G_KOORD		"scheduling.sigs.k8s.io"
#define G_KAI		"scheduling.run.ai"
#define G_KOORD_CNT	"scheduling.koordinator.sh"
#define G_KAI_TOPO	"kai.scheduler"
#define G_KUEUE		"kueue.x-k8s.io"
#define G_SCHED		"scheduling.k8s.io"

/* Object classes, in index order. */
enum {
	C_NODE = 0,
	C_POD,
	C_PODGROUP,
	C_CNT,
	C_TOPOLOGY,
	C_PRIOCLASS,
	C_PDB,
	C_NAMESPACE,
	C_OTHER,
	C_N
};

typedef struct kobj {
	cJSON *j;		/* borrowed from a document of k->docs, or
				 * owned (own_tree); NULL while a pod added
				 * by tg_k8s_add_object() is not parsed yet,
				 * and again once it has been read */
	const char *kind;	/* interned; from the List when absent */
	const char *group;	/* interned API group, "" for the core one */
	const char *ns;		/* "" when cluster-scoped or absent */
	const char *name;	/* "" when absent */
	const char *text;	/* tg_k8s_add_object(): the caller's text */
	uint32_t len;
	uint32_t src;		/* index into k->srcs */
	uint32_t seq;		/* order of arrival */
	int8_t cls;
	bool own_tree;		/* j is this object's, not a document's */
} kobj;

struct tg_k8s {
	char *levels[TG_MAX_LAYERS];
	unsigned nlevels;
	bool have_levels;
	char *scheduler;
	cJSON **docs;		/* one cJSON array per tg_k8s_add() */
	tgi_strtab names;	/* kinds and API groups of the objects */
	size_t ndocs, capdocs;
	kobj *objs;
	size_t nobjs, capobjs;
	char **srcs;
	size_t nsrcs, capsrcs;
	char **warns;
	size_t nwarns, capwarns, ndropped;
	tg_gang **gangs;
	size_t ngangs;
	struct kfail {		/* gangs that could not be read */
		char *gang, *msg;
		char **pods;
		size_t npods;
	} *fails;
	size_t nfails, capfails;
	bool built;
	bool spent;		/* a build dropped node trees: no retry */
};

/* ---- handle, warnings -------------------------------------------------- */

tg_k8s *tg_k8s_create(void)
{
	tg_k8s *k = tgi_calloc(1, sizeof(tg_k8s));

	if (k)
		tgi_strtab_init(&k->names);
	return k;
}

static void obj_free(kobj *o)
{
	if (o->own_tree)
		cJSON_Delete(o->j);
}

static void free_gangs(tg_gang **g, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		tg_gang_destroy(g[i]);
	tgi_free(g);
}

static void free_fails(tg_k8s *k)
{
	size_t i, j;

	for (i = 0; i < k->nfails; i++) {
		struct kfail *f = &k->fails[i];

		tgi_free(f->gang);
		tgi_free(f->msg);
		for (j = 0; j < f->npods; j++)
			tgi_free(f->pods[j]);
		tgi_free(f->pods);
	}
	tgi_free(k->fails);
	k->fails = NULL;
	k->nfails = k->capfails = 0;
}

void tg_k8s_destroy(tg_k8s *k)
{
	size_t i;

	if (!k)
		return;
	for (i = 0; i < k->nlevels; i++)
		tgi_free(k->levels[i]);
	tgi_free(k->scheduler);
	for (i = 0; i < k->ndocs; i++)
		cJSON_Delete(k->docs[i]);
	tgi_free(k->docs);
	for (i = 0; i < k->nobjs; i++)
		obj_free(&k->objs[i]);
	tgi_free(k->objs);
	tgi_strtab_free(&k->names);
	for (i = 0; i < k->nsrcs; i++)
		tgi_free(k->srcs[i]);
	tgi_free(k->srcs);
	for (i = 0; i < k->nwarns; i++)
		tgi_free(k->warns[i]);
	tgi_free(k->warns);
	free_gangs(k->gangs, k->ngangs);
	free_fails(k);
	tgi_free(k);
}

static tg_err warn_add(tg_k8s *k, const char *msg)
{
	char *d;

	if (tgi_grow(&k->warns, &k->capwarns, k->nwarns + 1, sizeof(char *)))
		return TG_ENOMEM;
	d = tgi_strdup(msg);
	if (!d)
		return TG_ENOMEM;
	k->warns[k->nwarns++] = d;
	return TG_OK;
}

static tg_err warnf(tg_k8s *k, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static tg_err warnf(tg_k8s *k, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (k->nwarns >= K8S_MAX_WARNINGS) {
		k->ndropped++;
		return TG_OK;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return warn_add(k, msg);
}

unsigned tg_k8s_nwarnings(const tg_k8s *k)
{
	return k ? (unsigned)k->nwarns : 0;
}

const char *tg_k8s_warning(const tg_k8s *k, unsigned i)
{
	return k && i < k->nwarns ? k->warns[i] : NULL;
}

unsigned tg_k8s_ngangs(const tg_k8s *k)
{
	return k ? (unsigned)k->ngangs : 0;
}

tg_gang *tg_k8s_gang(const tg_k8s *k, unsigned i)
{
	return k && i < k->ngangs ? k->gangs[i] : NULL;
}

unsigned tg_k8s_nfailed(const tg_k8s *k)
{
	return k ? (unsigned)k->nfails : 0;
}

const char *tg_k8s_failed(const tg_k8s *k, unsigned i, const char **reason)
{
	if (!k || i >= k->nfails)
		return NULL;
	if (reason)
		*reason = k->fails[i].msg;
	return k->fails[i].gang;
}

unsigned tg_k8s_failed_npods(const tg_k8s *k, unsigned i)
{
	return k && i < k->nfails ? (unsigned)k->fails[i].npods : 0;
}

const char *tg_k8s_failed_pod(const tg_k8s *k, unsigned i, unsigned j)
{
	return k && i < k->nfails && j < k->fails[i].npods ?
		k->fails[i].pods[j] : NULL;
}

tg_err tg_k8s_set_levels(tg_k8s *k, const char *const *keys, unsigned n)
{
	char *copy[TG_MAX_LAYERS];
	unsigned i;

	if (!k || (n && !keys))
		return TG_EINVAL;
	if (k->built)
		return TG_ESTATE;
	if (n > TG_MAX_LAYERS)
		return TG_ELIMIT;
	for (i = 0; i < n; i++) {
		if (!keys[i] || !*keys[i] || strlen(keys[i]) > TG_MAX_NAME)
			return TG_EINVAL;
	}
	for (i = 0; i < n; i++) {
		copy[i] = tgi_strdup(keys[i]);
		if (!copy[i]) {
			while (i-- > 0)
				tgi_free(copy[i]);
			return TG_ENOMEM;
		}
	}
	for (i = 0; i < k->nlevels; i++)
		tgi_free(k->levels[i]);
	for (i = 0; i < n; i++)
		k->levels[i] = copy[i];
	k->nlevels = n;
	k->have_levels = true;
	return TG_OK;
}

tg_err tg_k8s_set_scheduler_name(tg_k8s *k, const char *name)
{
	char *d;

	if (!k)
		return TG_EINVAL;
	if (k->built)
		return TG_ESTATE;
	d = NULL;
	if (name && *name) {
		if (strlen(name) > TG_MAX_NAME)
			return TG_EINVAL;
		d = tgi_strdup(name);
		if (!d)
			return TG_ENOMEM;
	}
	tgi_free(k->scheduler);
	k->scheduler = d;
	return TG_OK;
}

/* ---- adding text ------------------------------------------------------- */

static const char *jstr(const cJSON *obj, const char *key)
{
	const cJSON *v;

	if (!cJSON_IsObject(obj))
		return NULL;
	v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const cJSON *jget(const cJSON *obj, const char *key)
{
	if (!cJSON_IsObject(obj))
		return NULL;
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

static bool ends_with(const char *s, const char *sfx)
{
	size_t n = strlen(s), m = strlen(sfx);

	return n >= m && strcmp(s + n - m, sfx) == 0;
}

static int classify(const char *kind, const char *group)
{
	if (strcmp(kind, "Node") == 0 && !*group)
		return C_NODE;
	if (strcmp(kind, "Pod") == 0 && !*group)
		return C_POD;
	if (strcmp(kind, "PodGroup") == 0 &&
	    (strcmp(group, G_SP) == 0 || strcmp(group, G_KOORD) == 0 ||
	     strcmp(group, G_KAI) == 0))
		return C_PODGROUP;
	if (strcmp(kind, "ClusterNetworkTopology") == 0 &&
	    strcmp(group, G_KOORD_CNT) == 0)
		return C_CNT;
	if (strcmp(kind, "Topology") == 0 &&
	    (strcmp(group, G_KAI_TOPO) == 0 || strcmp(group, G_KUEUE) == 0))
		return C_TOPOLOGY;
	if (strcmp(kind, "PriorityClass") == 0 && strcmp(group, G_SCHED) == 0)
		return C_PRIOCLASS;
	if (strcmp(kind, "PodDisruptionBudget") == 0 &&
	    strcmp(group, "policy") == 0)
		return C_PDB;
	if (strcmp(kind, "Namespace") == 0 && !*group)
		return C_NAMESPACE;
	return C_OTHER;
}

/* Files one object; \p kind and \p api may come from its List. */
static tg_err file_obj(tg_k8s *k, cJSON *j, const char *kind,
		       const char *api, uint32_t src)
{
	const cJSON *md = jget(j, "metadata");
	const char *slash;
	kobj *o;

	if (k->nobjs >= K8S_MAX_OBJECTS)
		return TG_ELIMIT;
	if (tgi_grow(&k->objs, &k->capobjs, k->nobjs + 1, sizeof(kobj)))
		return TG_ENOMEM;
	o = &k->objs[k->nobjs];
	memset(o, 0, sizeof(*o));
	o->j = j;
	slash = api ? strchr(api, '/') : NULL;
	{
		char *grp = tgi_strndup(slash ? api : "",
					slash ? (size_t)(slash - api) : 0);
		uint32_t kid, gid;
		tg_err err = grp ? TG_OK : TG_ENOMEM;

		if (!err)
			err = tgi_strtab_intern(&k->names, kind, &kid);
		if (!err)
			err = tgi_strtab_intern(&k->names, grp, &gid);
		tgi_free(grp);
		if (err)
			return TG_ENOMEM;
		o->kind = tgi_strtab_get(&k->names, kid);
		o->group = tgi_strtab_get(&k->names, gid);
	}
	o->name = jstr(md, "name");
	o->name = o->name ? o->name : "";
	o->ns = jstr(md, "namespace");
	o->ns = o->ns ? o->ns : "";
	o->src = src;
	o->seq = (uint32_t)k->nobjs;
	o->cls = (int8_t)classify(o->kind, o->group);
	if ((o->cls == C_POD || o->cls == C_PODGROUP || o->cls == C_PDB) &&
	    !*o->ns)
		o->ns = "default";
	if (o->cls == C_NODE || o->cls == C_CNT || o->cls == C_TOPOLOGY ||
	    o->cls == C_PRIOCLASS || o->cls == C_NAMESPACE)
		o->ns = "";
	k->nobjs++;
	return TG_OK;
}

static tg_err add_doc(tg_k8s *k, cJSON *d, const char *source, uint32_t src,
		      unsigned docno, tg_errinfo *ei)
{
	const char *kind = jstr(d, "kind"), *api = jstr(d, "apiVersion");
	const cJSON *items = jget(d, "items");
	cJSON *it;
	tg_err err;

	if (!cJSON_IsObject(d)) {
		unsigned line = tgi_json_line(d);

		if (line)
			return tgi_errf(ei, TG_EPARSE,
					"%s:%u: document %u is not an object",
					source, line, docno);
		return tgi_errf(ei, TG_EPARSE,
				"%s: document %u is not an object", source,
				docno);
	}
	if (cJSON_IsArray(items) && (!kind || ends_with(kind, "List"))) {
		char ikind[128] = "";
		unsigned idx = 0;

		/* "NodeList" items are Nodes; a plain "List" says nothing. */
		if (kind && strcmp(kind, "List") != 0 &&
		    strlen(kind) - 4 < sizeof(ikind)) {
			memcpy(ikind, kind, strlen(kind) - 4);
			ikind[strlen(kind) - 4] = '\0';
		}
		cJSON_ArrayForEach(it, items) {
			const char *ik = jstr(it, "kind");
			const char *ia = jstr(it, "apiVersion");

			if (!cJSON_IsObject(it)) {
				unsigned line = tgi_json_line(it);

				if (!line)
					line = tgi_json_line(d);
				if (line)
					return tgi_errf(ei, TG_EPARSE,
						"%s:%u: items[%u]: not an "
						"object", source, line, idx);
				return tgi_errf(ei, TG_EPARSE,
						"%s: items[%u]: not an object",
						source, idx);
			}
			if (!ik && *ikind) {
				ik = ikind;
				ia = ia ? ia : api;
			}
			if (!ik) {
				err = warnf(k, "%s: items[%u] has no kind; "
					    "ignored", source, idx);
			} else {
				err = file_obj(k, it, ik, ia, src);
				if (err == TG_ELIMIT)
					return tgi_errf(ei, err,
						"%s: more than %u objects",
						source, K8S_MAX_OBJECTS);
			}
			if (err)
				return tgi_errf(ei, err, "%s: out of memory",
						source);
			idx++;
		}
		return TG_OK;
	}
	if (!kind) {
		err = warnf(k, "%s: document %u has no kind; ignored", source,
			    docno);
	} else {
		err = file_obj(k, d, kind, api, src);
		if (err == TG_ELIMIT)
			return tgi_errf(ei, err, "%s: more than %u objects",
					source, K8S_MAX_OBJECTS);
	}
	return err ? tgi_errf(ei, err, "%s: out of memory", source) : TG_OK;
}

static bool looks_json(const char *buf, size_t len)
{
	size_t i = 0;

	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	for (; i < len; i++) {
		char c = buf[i];

		if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
			continue;
		return c == '{' || c == '[';
	}
	return false;
}

tg_err tg_k8s_add(tg_k8s *k, const char *buf, size_t len, const char *source,
		  tg_errinfo *ei)
{
	size_t nobjs0, nwarns0, ndropped0, i;
	cJSON *docs = NULL, *d;
	uint32_t src;
	unsigned docno = 0;
	tg_err err;

	if (!k || (!buf && len))
		return tgi_errf(ei, TG_EINVAL, "tg_k8s_add: bad arguments");
	if (k->built)
		return tgi_errf(ei, TG_ESTATE,
				"tg_k8s_add: the snapshot is already built");
	if (!source || !*source)
		source = "input";
	if (len > TG_MAX_FILE)
		return tgi_errf(ei, TG_ELIMIT, "%s: larger than %u bytes",
				source, TG_MAX_FILE);
	if (k->nsrcs >= K8S_MAX_SOURCES)
		return tgi_errf(ei, TG_ELIMIT, "%s: more than %u inputs",
				source, K8S_MAX_SOURCES);
	/* Room for the commit first, so that it cannot fail. */
	if (tgi_grow(&k->srcs, &k->capsrcs, k->nsrcs + 1, sizeof(char *)) ||
	    tgi_grow(&k->docs, &k->capdocs, k->ndocs + 1, sizeof(cJSON *)))
		return tgi_errf(ei, TG_ENOMEM, "%s: out of memory", source);
	k->srcs[k->nsrcs] = tgi_strdup(source);
	if (!k->srcs[k->nsrcs])
		return tgi_errf(ei, TG_ENOMEM, "%s: out of memory", source);
	src = (uint32_t)k->nsrcs;

	if (!buf)
		buf = "";
	if (looks_json(buf, len))
		err = tgi_json_parse_stream(buf, len, source, &docs, ei);
	else
		err = tgi_yaml_parse_stream(buf, len, source, &docs, ei);
	if (!err)
		err = tgi_json_check_keys(docs, source, ei);
	if (err)
		goto fail_docs;

	nobjs0 = k->nobjs;
	nwarns0 = k->nwarns;
	ndropped0 = k->ndropped;
	cJSON_ArrayForEach(d, docs) {
		const cJSON *inner;

		docno++;
		if (!cJSON_IsArray(d)) {
			err = add_doc(k, d, source, src, docno, ei);
			if (err)
				goto fail_objs;
			continue;
		}
		/* a JSON array of objects */
		cJSON_ArrayForEach(inner, d) {
			err = add_doc(k, (cJSON *)inner, source, src, docno,
				      ei);
			if (err)
				goto fail_objs;
		}
	}
	k->docs[k->ndocs++] = docs;
	k->nsrcs++;
	return TG_OK;

fail_objs:
	for (i = nobjs0; i < k->nobjs; i++)
		obj_free(&k->objs[i]);
	k->nobjs = nobjs0;
	for (i = nwarns0; i < k->nwarns; i++)
		tgi_free(k->warns[i]);
	k->nwarns = nwarns0;
	k->ndropped = ndropped0;
fail_docs:
	cJSON_Delete(docs);
	tgi_free(k->srcs[k->nsrcs]);
	k->srcs[k->nsrcs] = NULL;
	return err;
}

/* The index of \p source in k->srcs: the last one again, or a new one. */
static tg_err source_id(tg_k8s *k, const char *source, uint32_t *src)
{
	if (k->nsrcs && strcmp(k->srcs[k->nsrcs - 1], source) == 0) {
		*src = (uint32_t)(k->nsrcs - 1);
		return TG_OK;
	}
	if (k->nsrcs >= K8S_MAX_SOURCES)
		return TG_ELIMIT;
	if (tgi_grow(&k->srcs, &k->capsrcs, k->nsrcs + 1, sizeof(char *)))
		return TG_ENOMEM;
	k->srcs[k->nsrcs] = tgi_strdup(source);
	if (!k->srcs[k->nsrcs])
		return TG_ENOMEM;
	*src = (uint32_t)k->nsrcs++;
	return TG_OK;
}

/* One object's text as a tree, its keys checked. */
static tg_err parse_one(const char *text, size_t len, const char *source,
			cJSON **out, tg_errinfo *ei)
{
	cJSON *docs = NULL, *d;
	tg_err err;

	*out = NULL;
	err = tgi_json_parse_stream(text, len, source, &docs, ei);
	if (!err)
		err = tgi_json_check_keys(docs, source, ei);
	if (err) {
		cJSON_Delete(docs);
		return err;
	}
	d = cJSON_GetArraySize(docs) == 1 ? cJSON_DetachItemFromArray(docs, 0)
					  : NULL;
	cJSON_Delete(docs);
	if (!cJSON_IsObject(d)) {
		cJSON_Delete(d);
		return tgi_errf(ei, TG_EPARSE, "%s: expected one JSON object",
				source);
	}
	*out = d;
	return TG_OK;
}

tg_err tg_k8s_add_object(tg_k8s *k, const char *json, size_t len,
			 const char *kind, const char *api_version,
			 const char *ns, const char *name, const char *source,
			 tg_errinfo *ei)
{
	size_t nn, nm;
	uint32_t src;
	cJSON *j = NULL;
	kobj *o;
	tg_err err;

	if (!k || !json || !kind || !*kind || !api_version || !name)
		return tgi_errf(ei, TG_EINVAL,
				"tg_k8s_add_object: bad arguments");
	if (k->built)
		return tgi_errf(ei, TG_ESTATE,
				"tg_k8s_add_object: the snapshot is already "
				"built");
	if (!source || !*source)
		source = "input";
	ns = ns ? ns : "";
	nn = strlen(ns);
	nm = strlen(name);
	if (len > TG_MAX_FILE || nn > TG_MAX_NAME || nm > TG_MAX_NAME)
		return tgi_errf(ei, TG_ELIMIT, "%s: %s %s/%s: larger than "
				"the loader's bounds", source, kind, ns, name);
	err = source_id(k, source, &src);
	if (err)
		return tgi_errf(ei, err, "%s: %s", source, err == TG_ELIMIT ?
				"too many inputs" : "out of memory");
	/* pods are parsed in the build, one at a time; the rest now */
	if (strcmp(kind, "Pod") != 0 || strcmp(api_version, "v1") != 0) {
		err = parse_one(json, len, source, &j, ei);
		if (err)
			return err;
	}
	err = file_obj(k, j, kind, api_version, src);
	if (err) {
		cJSON_Delete(j);
		if (err == TG_ELIMIT)
			return tgi_errf(ei, err, "%s: more than %u objects",
					source, K8S_MAX_OBJECTS);
		return tgi_errf(ei, err, "%s: out of memory", source);
	}
	o = &k->objs[k->nobjs - 1];
	o->own_tree = true;
	o->name = name;
	if (o->cls == C_NODE || o->cls == C_CNT || o->cls == C_TOPOLOGY ||
	    o->cls == C_PRIOCLASS || o->cls == C_NAMESPACE)
		o->ns = "";
	else if (*ns)
		o->ns = ns;
	else if (o->cls == C_POD || o->cls == C_PODGROUP || o->cls == C_PDB)
		o->ns = "default";
	else
		o->ns = "";
	if (!j) {
		o->text = json;
		o->len = (uint32_t)len;
	}
	return TG_OK;
}

tg_err tg_k8s_add_file(tg_k8s *k, const char *path, tg_errinfo *ei)
{
	char *buf = NULL;
	size_t len = 0;
	tg_err err;

	if (!k || !path)
		return tgi_errf(ei, TG_EINVAL, "tg_k8s_add_file: bad arguments");
	err = tgi_read_file(path, &buf, &len, ei);
	if (err)
		return err;
	err = tg_k8s_add(k, buf, len, path, ei);
	tgi_free(buf);
	return err;
}


/* ---- build: context, errors, typed fields ------------------------------ */

typedef struct pclass {
	const char *name;
	int64_t value;
	bool never;		/* preemptionPolicy: Never */
	bool global;		/* globalDefault */
} pclass;

enum { R_GATHER = 0, R_SLICE, R_SPREAD };

typedef struct kreq {
	int type;
	char *layer;		/* owned */
	int how;		/* tg_gather of a gather */
	unsigned size;		/* slice size, spread max skew */
	bool hard;		/* spread: DoNotSchedule */
} kreq;

enum { S_SKIP = 0, S_BOUND, S_PENDING };
enum { D_NONE = 0, D_KOORD, D_SP, D_KAI, D_KUEUE, D_LWS };

typedef struct kpod {
	const kobj *o;
	char *id;		/* "ns/name" */
	const cJSON *labels, *annots, *spec;
	int64_t prio;
	bool never;
	int64_t created;	/* microseconds since 1970; INT64_MAX unknown */
	const tg_shape *shape;	/* interned in bctx.shapes */
	const char *node;	/* spec.nodeName */
	int state;
	size_t group;		/* SIZE_MAX: none */
	int64_t index;		/* member index, -1: none */
	const char *role;	/* interned in k->names; "" for none */
	char *sig;		/* owned pod-set signature */
	bool allocated;		/* bound and recorded as an allocation */
	bool terminating;	/* bound, metadata.deletionTimestamp set */
	const char *nominated;	/* pending: status.nominatedNodeName */
	bool other;		/* pending for another scheduler */
	size_t set;		/* its pod set while its gang is built */
	cJSON *own_labels;	/* labels kept when the tree was dropped */
	cJSON *own_anti;	/* spec.affinity.podAntiAffinity, kept so */
	bool building;		/* a member of the gang being built */
	bool broken;		/* could not be read: its gang fails */
} kpod;

/* Warnings given once per gang. */
enum {
	W_PRIO = 1u << 0,
	W_CONFLICT = 1u << 1,
	W_PARTIAL = 1u << 2,
	W_SPREAD = 1u << 3,
	W_EXCL = 1u << 4,
	W_SEGPREF = 1u << 5,
	W_SUBGROUPS = 1u << 6,
	W_KUEUE_BOTH = 1u << 7,
	W_SEGSIZE = 1u << 8,
	W_NOCR = 1u << 9,
};

typedef struct kgroup {
	char *name;		/* "ns/name", the gang's name */
	int dialect;
	const char *ns;
	char *gname;		/* the group's own name */
	const kobj *cr;		/* its PodGroup, if in the snapshot */
	size_t *members;	/* pending pods */
	size_t nmembers, capmembers;
	unsigned nbound;
	size_t root;		/* GangGroup representative */
	size_t setsize;		/* groups in its GangGroup (root only) */
	bool ready;
	int64_t prio;
	bool never;
	int64_t created;
	bool preemptible;	/* its bound pods may be victims */
	const char *kai_topo;	/* the KAI Topology it names */
	kreq *reqs;
	size_t nreqs, capreqs;
	unsigned warned;
	char *fail;		/* why an object of the gang cannot be read:
				 * the gang is reported, not built */
} kgroup;

typedef struct klevel {
	const char *name;
	const char *keys[K8S_MAX_ANYOF];
	unsigned nkeys;
	const char *alias;	/* KAI alias, or NULL */
} klevel;

typedef struct kgang {
	tg_gang *g;
	int64_t prio;
	int64_t created;
} kgang;

typedef struct bctx {
	tg_k8s *k;
	tg_errinfo *ei;
	tg_topology *t;
	kobj **idx;		/* all objects by (class, group, ns, name) */
	size_t nidx;
	size_t first[C_N + 1];	/* class ranges of idx */
	pclass *pcs;		/* PriorityClasses by name */
	size_t npcs;
	const pclass *pcdef;	/* the global default */
	kpod *pods;
	size_t npods;
	kpod **bound;		/* allocated bound pods, in pod order */
	size_t nbound;
	kgroup *groups;
	size_t ngroups, capgroups;
	tgi_strtab gkeys;	/* group key -> group index + 1 */
	tgi_strtab rnames;	/* requested resource names */
	tgi_strtab affkeys;	/* pod affinity terms evaluated so far */
	struct affent {
		uint32_t *pods;	/* indices into bound */
		uint32_t n;
	} *aff;
	size_t naff, capaff, affcells;
	tgi_strtab nsnames;	/* namespaces missing from the snapshot */
	cJSON **nslabels;	/* their labels: kubernetes.io/metadata.name */
	size_t nnslabels, capnslabels;
	struct antient {
		const kpod *x;
		const cJSON *terms;	/* its required anti-affinity */
	} *anti;		/* pods with required anti-affinity */
	size_t nanti;
	bool anti_built;
	const kpod **pend;	/* pending pods of ours, in pod order */
	size_t npend;
	bool pend_built;
	tgi_strtab lblkeys;	/* "key\x1fvalue" of bound pods' labels */
	struct lblent {
		uint32_t *pods;	/* indices into bound, ascending */
		size_t n, cap;
	} *lbl;
	size_t nlbl, caplbl;
	bool lbl_built;
	unsigned rid[TG_MAX_RESOURCES + 1];
	klevel levels[TG_MAX_LAYERS];
	unsigned nlevels;
	bool host_level;	/* the levels end in kubernetes.io/hostname:
				 * a node without it is out of the tree */
	char tierkeys[TG_MAX_LAYERS][80];
	kgang *gangs;
	size_t ngangs, capgangs;
	tg_shape **shapes;	/* pods' shapes, interned (open addressing) */
	size_t nshapes, nslots;
	tgi_strtab badnodes;	/* nodes with a bound pod that cannot be
				 * read: they take no new pods */
	tg_errinfo lei;		/* b->ei when the caller gives none */
} bctx;

static const char *oname(const kobj *o, char *buf, size_t n)
{
	if (*o->ns)
		snprintf(buf, n, "%s/%s", o->ns, o->name);
	else
		snprintf(buf, n, "%s", o->name);
	return buf;
}

static tg_err oerr(bctx *b, const kobj *o, const cJSON *at, tg_err err,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* One error naming the input, the line when known, the object. */
static tg_err oerr(bctx *b, const kobj *o, const cJSON *at, tg_err err,
		   const char *fmt, ...)
{
	char msg[400], nm[300];
	const char *src = b->k->srcs[o->src];
	unsigned line;
	va_list ap;

	if (err == TG_ENOMEM)
		return tgi_errf(b->ei, err, "out of memory");
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	line = tgi_json_line(at);
	if (!line)
		line = tgi_json_line(o->j);
	if (line)
		return tgi_errf(b->ei, err, "%s:%u: %s %s: %s", src, line,
				o->kind, oname(o, nm, sizeof(nm)), msg);
	return tgi_errf(b->ei, err, "%s: %s %s: %s", src, o->kind,
			oname(o, nm, sizeof(nm)), msg);
}

static tg_err owarn(bctx *b, const kobj *o, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static tg_err owarn(bctx *b, const kobj *o, const char *fmt, ...)
{
	char msg[400], nm[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return warnf(b->k, "%s %s: %s", o->kind, oname(o, nm, sizeof(nm)),
		     msg);
}

static bool simple_key(const char *k)
{
	if (!*k)
		return false;
	for (; *k; k++) {
		char c = *k;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '-'))
			return false;
	}
	return true;
}

/* prefix + ".key" or "[key]" */
static const char *pjoin(char *buf, size_t n, const char *prefix,
			 const char *key)
{
	if (simple_key(key))
		snprintf(buf, n, "%s%s%.200s", prefix, *prefix ? "." : "",
			 key);
	else
		snprintf(buf, n, "%s[%.200s]", prefix, key);
	return buf;
}

static const char *pidx(char *buf, size_t n, const char *prefix, unsigned i)
{
	snprintf(buf, n, "%s[%u]", prefix, i);
	return buf;
}

enum { T_OBJ = 1, T_ARR, T_STR, T_NUM, T_BOOL };

static const char *tname(int t)
{
	switch (t) {
	case T_OBJ:
		return "an object";
	case T_ARR:
		return "a list";
	case T_STR:
		return "a string";
	case T_NUM:
		return "a number";
	default:
		return "a boolean";
	}
}

static bool is_type(const cJSON *v, int t)
{
	switch (t) {
	case T_OBJ:
		return cJSON_IsObject(v);
	case T_ARR:
		return cJSON_IsArray(v);
	case T_STR:
		return cJSON_IsString(v);
	case T_NUM:
		return cJSON_IsNumber(v);
	default:
		return cJSON_IsBool(v);
	}
}

/*
 * Member \p key of \p parent as type \p t: *out NULL when absent or null,
 * an error when of another type.
 */
static tg_err field(bctx *b, const kobj *o, const cJSON *parent,
		    const char *ppath, const char *key, int t,
		    const cJSON **out)
{
	const cJSON *v = jget(parent, key);
	char path[300];

	*out = NULL;
	if (!v || cJSON_IsNull(v))
		return TG_OK;
	if (!is_type(v, t))
		return oerr(b, o, v, TG_EINVAL, "%s: expected %s",
			    pjoin(path, sizeof(path), ppath, key), tname(t));
	*out = v;
	return TG_OK;
}

/* An integer-valued JSON number. */
static bool num_int(const cJSON *v, int64_t *out)
{
	double d;

	if (!cJSON_IsNumber(v))
		return false;
	d = v->valuedouble;
	if (!(d >= -9007199254740992.0 && d <= 9007199254740992.0) ||
	    d != floor(d))
		return false;
	*out = (int64_t)d;
	return true;
}

static tg_err field_int(bctx *b, const kobj *o, const cJSON *parent,
			const char *ppath, const char *key, int64_t min,
			int64_t max, bool *present, int64_t *out)
{
	const cJSON *v;
	char path[300];
	tg_err err;

	*present = false;
	err = field(b, o, parent, ppath, key, T_NUM, &v);
	if (err || !v)
		return err;
	if (!num_int(v, out))
		return oerr(b, o, v, TG_EINVAL, "%s: expected an integer",
			    pjoin(path, sizeof(path), ppath, key));
	if (*out < min || *out > max)
		return oerr(b, o, v, TG_EINVAL,
			    "%s: %lld is out of range [%lld, %lld]",
			    pjoin(path, sizeof(path), ppath, key),
			    (long long)*out, (long long)min, (long long)max);
	*present = true;
	return TG_OK;
}

/* Checks a map of strings (labels, annotations, nodeSelector). */
static tg_err check_strmap(bctx *b, const kobj *o, const cJSON *m,
			   const char *path)
{
	const cJSON *c;
	char p[300];

	cJSON_ArrayForEach(c, m) {
		if (!cJSON_IsString(c))
			return oerr(b, o, c, TG_EINVAL, "%s: expected a string",
				    pjoin(p, sizeof(p), path, c->string));
	}
	return TG_OK;
}

/* Parses a whole decimal integer annotation or label value. */
static tg_err annot_int(bctx *b, const kobj *o, const cJSON *map,
			const char *mpath, const char *key, int64_t min,
			int64_t *out, bool *present)
{
	const cJSON *v = jget(map, key);
	char p[300];

	*present = false;
	if (!cJSON_IsString(v))
		return TG_OK;
	if (!tgi_parse_i64(v->valuestring, out) || *out < min)
		return oerr(b, o, v, TG_EINVAL, "%s: bad value '%.60s'",
			    pjoin(p, sizeof(p), mpath, key), v->valuestring);
	*present = true;
	return TG_OK;
}

/* RFC 3339 time ("2026-08-01T00:20:00Z", fractions and offsets too). */
static bool parse_time(const char *s, int64_t *out)
{
	int v[6], i, pos[6] = { 0, 5, 8, 11, 14, 17 }, len[6] = { 4, 2, 2, 2,
								 2, 2 };
	int64_t y, m, d, days, secs, us = 0, scale = 100000;
	const char *p;

	if (strlen(s) < 20 || s[4] != '-' || s[7] != '-' ||
	    (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || s[13] != ':' ||
	    s[16] != ':')
		return false;
	for (i = 0; i < 6; i++) {
		int j;

		v[i] = 0;
		for (j = 0; j < len[i]; j++) {
			char c = s[pos[i] + j];

			if (c < '0' || c > '9')
				return false;
			v[i] = v[i] * 10 + (c - '0');
		}
	}
	if (v[1] < 1 || v[1] > 12 || v[2] < 1 || v[2] > 31 || v[3] > 23 ||
	    v[4] > 59 || v[5] > 60)
		return false;
	p = s + 19;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return false;
		for (; *p >= '0' && *p <= '9'; p++) {
			us += scale * (*p - '0');
			scale /= 10;
		}
	}
	/* days from civil (Howard Hinnant) */
	y = v[0];
	m = v[1];
	d = v[2];
	y -= m <= 2;
	{
		int64_t era = (y >= 0 ? y : y - 399) / 400;
		int64_t yoe = y - era * 400;
		int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
		int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;

		days = era * 146097 + doe - 719468;
	}
	secs = days * 86400 + v[3] * 3600 + v[4] * 60 + v[5];
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int sign = *p == '-' ? -1 : 1;

		if (!(p[1] >= '0' && p[1] <= '9' && p[2] >= '0' &&
		      p[2] <= '9' && p[3] == ':' && p[4] >= '0' &&
		      p[4] <= '9' && p[5] >= '0' && p[5] <= '9'))
			return false;
		secs -= sign * (((p[1] - '0') * 10 + (p[2] - '0')) * 3600 +
				((p[4] - '0') * 10 + (p[5] - '0')) * 60);
		p += 6;
	} else {
		return false;
	}
	if (*p)
		return false;
	*out = secs * 1000000 + us;
	return true;
}

static tg_err obj_created(bctx *b, const kobj *o, int64_t *out)
{
	const cJSON *md = jget(o->j, "metadata"), *ts;
	tg_err err;

	*out = INT64_MAX;
	err = field(b, o, md, "metadata", "creationTimestamp", T_STR, &ts);
	if (err || !ts)
		return err;
	if (!parse_time(ts->valuestring, out))
		return oerr(b, o, ts, TG_EINVAL,
			    "metadata.creationTimestamp: bad time '%.60s'",
			    ts->valuestring);
	return TG_OK;
}

/* metadata.labels and .annotations, checked. */
static tg_err obj_meta(bctx *b, const kobj *o, const cJSON **labels,
		       const cJSON **annots)
{
	const cJSON *md;
	tg_err err;

	err = field(b, o, o->j, "", "metadata", T_OBJ, &md);
	if (err)
		return err;
	if (!*o->name)
		return oerr(b, o, md, TG_EINVAL, "metadata.name: missing");
	if (strlen(o->name) > TG_MAX_NAME || strlen(o->ns) > TG_MAX_NAME)
		return oerr(b, o, md, TG_EINVAL,
			    "metadata.name: longer than %d bytes",
			    TG_MAX_NAME);
	err = field(b, o, md, "metadata", "labels", T_OBJ, labels);
	if (!err)
		err = check_strmap(b, o, *labels, "metadata.labels");
	if (!err && annots) {
		err = field(b, o, md, "metadata", "annotations", T_OBJ,
			    annots);
		if (!err)
			err = check_strmap(b, o, *annots,
					   "metadata.annotations");
	}
	return err;
}

/* ---- the object index -------------------------------------------------- */

static int obj_cmp(const void *a, const void *c)
{
	const kobj *x = *(const kobj *const *)a;
	const kobj *y = *(const kobj *const *)c;
	int r;

	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	if (x->cls == C_OTHER && (r = strcmp(x->kind, y->kind)) != 0)
		return r;
	if ((r = strcmp(x->group, y->group)) != 0)
		return r;
	if ((r = strcmp(x->ns, y->ns)) != 0)
		return r;
	if ((r = strcmp(x->name, y->name)) != 0)
		return r;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static bool same_obj(const kobj *x, const kobj *y)
{
	return x->cls == y->cls && strcmp(x->kind, y->kind) == 0 &&
	       strcmp(x->group, y->group) == 0 && strcmp(x->ns, y->ns) == 0 &&
	       strcmp(x->name, y->name) == 0;
}

static tg_err build_index(bctx *b)
{
	tg_k8s *k = b->k;
	size_t i, n = 0, c;
	tg_err err;

	b->idx = tgi_calloc(k->nobjs ? k->nobjs : 1, sizeof(kobj *));
	if (!b->idx)
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	for (i = 0; i < k->nobjs; i++)
		b->idx[i] = &k->objs[i];
	qsort(b->idx, k->nobjs, sizeof(kobj *), obj_cmp);
	/* a later copy of the same object replaces the earlier one */
	for (i = 0; i < k->nobjs; i++) {
		kobj *o = b->idx[i];

		if (i + 1 < k->nobjs && same_obj(o, b->idx[i + 1]) &&
		    *o->name) {
			char nm[300];

			err = warnf(k, "%s %s appears more than once; the "
				    "last copy is used", o->kind,
				    oname(o, nm, sizeof(nm)));
			if (err)
				return tgi_errf(b->ei, err, "out of memory");
			continue;
		}
		b->idx[n++] = o;
	}
	b->nidx = n;
	for (c = 0, i = 0; c <= C_N; c++) {
		while (i < n && b->idx[i]->cls < (int)c)
			i++;
		b->first[c] = i;
	}
	b->first[C_N] = n;
	/* kinds the loader does not use: one warning per kind */
	for (i = b->first[C_OTHER]; i < n;) {
		size_t j = i;

		while (j < n && strcmp(b->idx[j]->kind, b->idx[i]->kind) == 0)
			j++;
		err = warnf(k, "%zu object%s of kind %s ignored", j - i,
			    j - i == 1 ? "" : "s", b->idx[i]->kind);
		if (err)
			return tgi_errf(b->ei, err, "out of memory");
		i = j;
	}
	return TG_OK;
}

/* Finds an object of class \p cls by group, namespace and name. */
static const kobj *find_obj(const bctx *b, int cls, const char *group,
			    const char *ns, const char *name)
{
	size_t lo = b->first[cls], hi = b->first[cls + 1];

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const kobj *o = b->idx[mid];
		int r = strcmp(o->group, group);

		if (!r)
			r = strcmp(o->ns, ns);
		if (!r)
			r = strcmp(o->name, name);
		if (!r)
			return o;
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* ---- PriorityClasses --------------------------------------------------- */

static int pc_cmp(const void *a, const void *c)
{
	return strcmp(((const pclass *)a)->name, ((const pclass *)c)->name);
}

static tg_err load_prioclasses(bctx *b)
{
	static const struct {
		const char *name;
		int64_t value;
	} builtin[] = {
		{ "system-cluster-critical", 2000000000 },
		{ "system-node-critical", 2000001000 },
	};
	size_t n = b->first[C_PRIOCLASS + 1] - b->first[C_PRIOCLASS], i;
	tg_err err;

	b->pcs = tgi_calloc(n + 2, sizeof(pclass));
	if (!b->pcs)
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		const kobj *o = b->idx[b->first[C_PRIOCLASS] + i];
		pclass *pc = &b->pcs[b->npcs];
		const cJSON *labels, *gd, *pp;
		bool present;

		err = obj_meta(b, o, &labels, NULL);
		if (err)
			return err;
		pc->name = o->name;
		err = field_int(b, o, o->j, "", "value", INT32_MIN, 2000001000,
				&present, &pc->value);
		if (err)
			return err;
		if (!present)
			return oerr(b, o, NULL, TG_EINVAL, "value: missing");
		err = field(b, o, o->j, "", "globalDefault", T_BOOL, &gd);
		if (!err)
			err = field(b, o, o->j, "", "preemptionPolicy", T_STR,
				    &pp);
		if (err)
			return err;
		pc->global = gd && cJSON_IsTrue(gd);
		if (pp && strcmp(pp->valuestring, "Never") != 0 &&
		    strcmp(pp->valuestring, "PreemptLowerPriority") != 0)
			return oerr(b, o, pp, TG_EINVAL,
				    "preemptionPolicy: unknown policy '%.60s'",
				    pp->valuestring);
		pc->never = pp && strcmp(pp->valuestring, "Never") == 0;
		b->npcs++;
	}
	/* pcs[0..n) is in name order: the index sorts them so */
	for (i = 0; i < 2; i++) {
		pclass key = { builtin[i].name, 0, false, false };

		if (!bsearch(&key, b->pcs, n, sizeof(pclass), pc_cmp)) {
			b->pcs[b->npcs] = key;
			b->pcs[b->npcs].value = builtin[i].value;
			b->npcs++;
		}
	}
	qsort(b->pcs, b->npcs, sizeof(pclass), pc_cmp);
	/* several defaults: the lowest value wins, as in the admission */
	for (i = 0; i < b->npcs; i++) {
		if (b->pcs[i].global &&
		    (!b->pcdef || b->pcs[i].value < b->pcdef->value))
			b->pcdef = &b->pcs[i];
	}
	return TG_OK;
}

static const pclass *find_pc(const bctx *b, const char *name)
{
	pclass key = { name, 0, false, false };

	return bsearch(&key, b->pcs, b->npcs, sizeof(pclass), pc_cmp);
}

/* ---- pods -------------------------------------------------------------- */

static tg_err res_id(bctx *b, const char *name, unsigned *id)
{
	uint32_t s;
	tg_err err;

	if (strcmp(name, "cpu") == 0)
		*id = TG_RES_CPU;
	else if (strcmp(name, "memory") == 0)
		*id = TG_RES_MEMORY;
	else if (strcmp(name, "nvidia.com/gpu") == 0)
		*id = TG_RES_GPU;
	else if (strcmp(name, "pods") == 0)
		*id = TG_RES_PODS;
	else {
		s = tgi_strtab_find(&b->rnames, name);
		if (s) {
			*id = b->rid[s];
			return TG_OK;
		}
		if (strlen(name) > TG_MAX_NAME)
			return TG_EINVAL;
		err = tg_topology_resource(b->t, name, id);
		if (err)
			return err;
		if (*id >= TG_MAX_RESOURCES)
			return TG_ELIMIT;
		if (tgi_strtab_intern(&b->rnames, name, &s))
			return TG_ENOMEM;
		if (s > TG_MAX_RESOURCES)
			return TG_ELIMIT;
		b->rid[s] = *id;
	}
	return TG_OK;
}

/* The text of a quantity: a string, or a number as written. */
static const char *qty_text(const cJSON *v, char *buf, size_t n)
{
	if (cJSON_IsString(v))
		return v->valuestring;
	if (!cJSON_IsNumber(v))
		return NULL;
	if (v->valuestring) {
		int64_t dummy;

		if (tg_k8s_quantity(v->valuestring, false, &dummy) == TG_OK)
			return v->valuestring;
	}
	if (!isfinite(v->valuedouble))
		return NULL;
	snprintf(buf, n, "%.15g", v->valuedouble);
	if (strtod(buf, NULL) != v->valuedouble)
		snprintf(buf, n, "%.17g", v->valuedouble);
	return buf;
}

/* A map of resource name -> quantity into \p v, bit set in \p mask. */
static tg_err res_map(bctx *b, const kobj *o, const cJSON *map,
		      const char *path, int64_t *v, uint64_t *mask,
		      bool only_new)
{
	const cJSON *c;
	char p[300], tb[64];
	tg_err err;

	cJSON_ArrayForEach(c, map) {
		const char *txt = qty_text(c, tb, sizeof(tb));
		unsigned id;
		int64_t q;

		pjoin(p, sizeof(p), path, c->string);
		if (!txt || tg_k8s_quantity(txt, strcmp(c->string, "cpu") == 0,
					    &q) != TG_OK) {
			if (!txt && cJSON_IsNumber(c))
				txt = "(not finite)";
			return oerr(b, o, c, TG_EINVAL,
				    "%s: bad quantity '%.60s'", p,
				    txt ? txt : "(not a string)");
		}
		err = res_id(b, c->string, &id);
		if (err == TG_ELIMIT)
			return oerr(b, o, c, err,
				    "%s: more than %d resource names", p,
				    TG_MAX_RESOURCES);
		if (err)
			return oerr(b, o, c, err, "%s: bad resource name", p);
		if (only_new && (*mask & (1ull << id)))
			continue;
		v[id] = q;
		*mask |= 1ull << id;
	}
	return TG_OK;
}

static bool add_ok(int64_t a, int64_t c, int64_t *out)
{
	if (c > 0 && a > INT64_MAX - c)
		return false;
	*out = a + c;
	return true;
}

/* One container's effective requests (limits stand in for requests). */
static tg_err container_req(bctx *b, const kobj *o, const cJSON *c,
			    const char *path, int64_t *v)
{
	const cJSON *res, *req, *lim;
	char p[300], p2[300];
	uint64_t mask = 0;
	tg_err err;

	memset(v, 0, sizeof(int64_t) * TG_MAX_RESOURCES);
	if (!cJSON_IsObject(c))
		return oerr(b, o, c, TG_EINVAL, "%s: expected an object", path);
	err = field(b, o, c, path, "resources", T_OBJ, &res);
	if (err || !res)
		return err;
	pjoin(p, sizeof(p), path, "resources");
	err = field(b, o, res, p, "requests", T_OBJ, &req);
	if (!err)
		err = field(b, o, res, p, "limits", T_OBJ, &lim);
	if (!err)
		err = res_map(b, o, req, pjoin(p2, sizeof(p2), p, "requests"),
			      v, &mask, false);
	if (!err)
		err = res_map(b, o, lim, pjoin(p2, sizeof(p2), p, "limits"),
			      v, &mask, true);
	return err;
}

/*
 * Pods share a few shapes: one copy of each (a build of 100,000 pods
 * would otherwise hold 100,000 copies of a 256-byte shape).  Equal
 * shapes get the same pointer.
 */
static tg_err shape_intern(bctx *b, const tg_shape *sh, const tg_shape **out)
{
	uint64_t h = tgi_hash((const char *)sh, sizeof(*sh));
	size_t i, m;

	if ((b->nshapes + 1) * 2 > b->nslots) {
		size_t ns = b->nslots ? b->nslots * 2 : 64;
		tg_shape **sl = tgi_calloc(ns, sizeof(*sl));

		if (!sl)
			return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
		for (i = 0; i < b->nslots; i++) {
			if (!b->shapes[i])
				continue;
			m = tgi_hash((const char *)b->shapes[i],
				     sizeof(tg_shape)) & (ns - 1);
			while (sl[m])
				m = (m + 1) & (ns - 1);
			sl[m] = b->shapes[i];
		}
		tgi_free(b->shapes);
		b->shapes = sl;
		b->nslots = ns;
	}
	for (m = h & (b->nslots - 1); b->shapes[m];
	     m = (m + 1) & (b->nslots - 1))
		if (memcmp(b->shapes[m], sh, sizeof(*sh)) == 0) {
			*out = b->shapes[m];
			return TG_OK;
		}
	b->shapes[m] = tgi_malloc(sizeof(tg_shape));
	if (!b->shapes[m])
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	memcpy(b->shapes[m], sh, sizeof(*sh));
	b->nshapes++;
	*out = b->shapes[m];
	return TG_OK;
}

static tg_err pod_shape(bctx *b, kpod *p)
{
	const kobj *o = p->o;
	int64_t sum[TG_MAX_RESOURCES] = { 0 }, side[TG_MAX_RESOURCES] = { 0 };
	int64_t imax[TG_MAX_RESOURCES] = { 0 }, c[TG_MAX_RESOURCES];
	const cJSON *list, *it, *ovh;
	tg_shape sh;
	char path[300];
	unsigned i, r;
	tg_err err;

	memset(&sh, 0, sizeof(sh));
	err = field(b, o, p->spec, "spec", "containers", T_ARR, &list);
	if (err)
		return err;
	i = 0;
	cJSON_ArrayForEach(it, list) {
		err = container_req(b, o, it,
				    pidx(path, sizeof(path), "spec.containers",
					 i++), c);
		if (err)
			return err;
		for (r = 0; r < TG_MAX_RESOURCES; r++)
			if (!add_ok(sum[r], c[r], &sum[r]))
				goto overflow;
	}
	err = field(b, o, p->spec, "spec", "initContainers", T_ARR, &list);
	if (err)
		return err;
	i = 0;
	cJSON_ArrayForEach(it, list) {
		const char *rp = jstr(it, "restartPolicy");
		bool sidecar = rp && strcmp(rp, "Always") == 0;

		err = container_req(b, o, it,
				    pidx(path, sizeof(path),
					 "spec.initContainers", i++), c);
		if (err)
			return err;
		for (r = 0; r < TG_MAX_RESOURCES; r++) {
			int64_t use;

			if (sidecar) {
				if (!add_ok(side[r], c[r], &side[r]))
					goto overflow;
				use = side[r];
			} else if (!add_ok(side[r], c[r], &use)) {
				goto overflow;
			}
			imax[r] = TG_MAX(imax[r], use);
		}
	}
	err = field(b, o, p->spec, "spec", "overhead", T_OBJ, &ovh);
	if (err)
		return err;
	{
		uint64_t mask = 0;

		memset(c, 0, sizeof(c));
		err = res_map(b, o, ovh, "spec.overhead", c, &mask, false);
		if (err)
			return err;
	}
	for (r = 0; r < TG_MAX_RESOURCES; r++) {
		int64_t v;

		if (!add_ok(sum[r], side[r], &v))
			goto overflow;
		v = TG_MAX(v, imax[r]);
		if (!add_ok(v, c[r], &v))
			goto overflow;
		sh.v[r] = v;
	}
	sh.v[TG_RES_PODS] = 1;
	return shape_intern(b, &sh, &p->shape);
overflow:
	return oerr(b, o, p->spec, TG_EINVAL,
		    "spec: resource requests add up past 2^63");
}

static tg_err pod_priority(bctx *b, kpod *p)
{
	const kobj *o = p->o;
	const cJSON *pcn, *pol;
	const pclass *pc = NULL;
	bool present;
	tg_err err;

	err = field(b, o, p->spec, "spec", "priorityClassName", T_STR, &pcn);
	if (!err)
		err = field(b, o, p->spec, "spec", "preemptionPolicy", T_STR,
			    &pol);
	if (!err)
		err = field_int(b, o, p->spec, "spec", "priority", INT32_MIN,
				INT32_MAX, &present, &p->prio);
	if (err)
		return err;
	if (pcn && *pcn->valuestring) {
		pc = find_pc(b, pcn->valuestring);
		if (!pc && !present) {
			err = owarn(b, o, "spec.priorityClassName: no "
				    "PriorityClass '%.100s' in the snapshot; "
				    "using %s", pcn->valuestring,
				    b->pcdef ? "the global default" : "0");
			if (err)
				return tgi_errf(b->ei, err, "out of memory");
		}
	}
	if (!pc)
		pc = b->pcdef;
	if (!present)
		p->prio = pc ? pc->value : 0;
	if (pol && strcmp(pol->valuestring, "Never") != 0 &&
	    strcmp(pol->valuestring, "PreemptLowerPriority") != 0)
		return oerr(b, o, pol, TG_EINVAL,
			    "spec.preemptionPolicy: unknown policy '%.60s'",
			    pol->valuestring);
	p->never = pol ? strcmp(pol->valuestring, "Never") == 0 :
			 (pc && pc->never);
	return TG_OK;
}

static tg_err group_get(bctx *b, int dialect, const char *ns,
			const char *gname, size_t *out)
{
	char key[600];
	uint32_t id;
	kgroup *g;

	snprintf(key, sizeof(key), "%c%s/%s", '0' + dialect, ns, gname);
	if (tgi_strtab_intern(&b->gkeys, key, &id))
		return TG_ENOMEM;
	if (id <= b->ngroups) {
		*out = id - 1;
		return TG_OK;
	}
	if (tgi_grow(&b->groups, &b->capgroups, b->ngroups + 1,
		     sizeof(kgroup)))
		return TG_ENOMEM;
	g = &b->groups[b->ngroups];
	memset(g, 0, sizeof(*g));
	g->dialect = dialect;
	g->ns = ns;
	g->gname = tgi_strdup(gname);
	g->name = tgi_malloc(strlen(ns) + strlen(gname) + 2);
	if (!g->gname || !g->name) {
		tgi_free(g->gname);
		tgi_free(g->name);
		return TG_ENOMEM;
	}
	snprintf(g->name, strlen(ns) + strlen(gname) + 2, "%s/%s", ns, gname);
	g->root = b->ngroups;
	g->setsize = 1;
	g->ready = true;
	g->prio = INT64_MIN;
	g->created = INT64_MAX;
	g->preemptible = true;
	*out = b->ngroups++;
	return TG_OK;
}

static const char *nonempty(const cJSON *map, const char *key)
{
	const char *v = jstr(map, key);

	return v && *v ? v : NULL;
}

/* Which gang a pod belongs to; *dialect D_NONE when none. */
static void pod_dialect(const kpod *p, int *dialect, const char **gname,
			char *buf, size_t n)
{
	const char *v, *w;

	*dialect = D_NONE;
	*gname = NULL;
	if ((v = nonempty(p->labels, L_KOORD_PG)) ||
	    (v = nonempty(p->labels, L_KOORD_PG_OLD)))
		*dialect = D_KOORD;
	else if ((v = nonempty(p->labels, L_SP_PG)))
		*dialect = D_SP;
	else if ((v = nonempty(p->annots, A_KOORD_NAME)))
		*dialect = D_KOORD;
	else if ((v = nonempty(p->annots, A_KAI_PG)))
		*dialect = D_KAI;
	else if ((v = nonempty(p->labels, L_KUEUE_GROUP)))
		*dialect = D_KUEUE;
	else if ((v = nonempty(p->labels, L_LWS_NAME)) &&
		 (w = nonempty(p->labels, L_LWS_GROUP))) {
		*dialect = D_LWS;
		snprintf(buf, n, "%s-%s", v, w);
		v = buf;
	}
	*gname = v;
}

static tg_err pod_index_role(bctx *b, kpod *p)
{
	static const struct {
		const char *key;
		bool annot;
	} ix[] = {
		{ A_KOORD_INDEX, true },
		{ L_JOB_INDEX, false },
		{ L_JOB_INDEX, true },
		{ L_KF_INDEX, false },
		{ L_LWS_WORKER, false },
	};
	const char *w, *role = "";
	size_t i;
	bool present;
	tg_err err;

	p->index = -1;
	for (i = 0; i < sizeof(ix) / sizeof(ix[0]); i++) {
		err = annot_int(b, p->o, ix[i].annot ? p->annots : p->labels,
				ix[i].annot ? "metadata.annotations" :
					      "metadata.labels",
				ix[i].key, 0, &p->index, &present);
		if (err)
			return err;
		if (present)
			break;
	}
	if ((w = jstr(p->labels, L_LWS_WORKER)) && nonempty(p->labels,
							     L_LWS_NAME))
		role = strcmp(w, "0") == 0 ? "leader" : "worker";
	else if ((w = nonempty(p->labels, L_KF_TYPE)))
		role = w;
	else if ((w = nonempty(p->labels, L_KAI_SUBGROUP)))
		role = w;
	{
		uint32_t id;	/* a handful of roles: interned */

		if (tgi_strtab_intern(&b->k->names, role, &id))
			return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
		p->role = tgi_strtab_get(&b->k->names, id);
	}
	return TG_OK;
}

static tg_err pod_parse(bctx *b, const kobj *o, kpod *p)
{
	const cJSON *st, *nn, *ph, *gates, *del, *sn;
	const char *phase;
	size_t n;
	tg_err err;

	p->o = o;
	p->group = SIZE_MAX;
	p->index = -1;
	err = obj_meta(b, o, &p->labels, &p->annots);
	if (err)
		return err;
	n = strlen(o->ns) + strlen(o->name) + 2;
	p->id = tgi_malloc(n);
	if (!p->id)
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	snprintf(p->id, n, "%s/%s", o->ns, o->name);
	if (n - 1 > TG_MAX_NAME)
		return oerr(b, o, NULL, TG_EINVAL,
			    "metadata: namespace/name longer than %d bytes",
			    TG_MAX_NAME);
	err = field(b, o, o->j, "", "spec", T_OBJ, &p->spec);
	if (!err)
		err = field(b, o, o->j, "", "status", T_OBJ, &st);
	if (!err)
		err = field(b, o, p->spec, "spec", "nodeName", T_STR, &nn);
	if (!err)
		err = field(b, o, st, "status", "phase", T_STR, &ph);
	if (!err)
		err = field(b, o, p->spec, "spec", "schedulingGates", T_ARR,
			    &gates);
	if (!err)
		err = field(b, o, p->spec, "spec", "schedulerName", T_STR, &sn);
	if (err)
		return err;
	if (!p->spec)
		return oerr(b, o, NULL, TG_EINVAL, "spec: missing");
	phase = ph ? ph->valuestring : "";
	if (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0)
		return TG_OK;	/* terminal: holds nothing */
	del = jget(jget(o->j, "metadata"), "deletionTimestamp");
	if (nn && *nn->valuestring) {
		p->state = S_BOUND;
		p->node = nn->valuestring;
		p->terminating = del && !cJSON_IsNull(del);
	} else {
		const char *sched = sn && *sn->valuestring ?
			sn->valuestring : "default-scheduler";

		if (b->k->scheduler && strcmp(sched, b->k->scheduler) != 0) {
			p->other = true;	/* counted in one warning */
			return TG_OK;
		}
		if (gates && cJSON_GetArraySize(gates) > 0) {
			err = owarn(b, o, "spec.schedulingGates not empty; "
				    "skipped");
			return err ? tgi_errf(b->ei, err, "out of memory") :
				     TG_OK;
		}
		if (del && !cJSON_IsNull(del)) {
			err = owarn(b, o, "pending pod being deleted; skipped");
			return err ? tgi_errf(b->ei, err, "out of memory") :
				     TG_OK;
		}
		p->state = S_PENDING;
		{
			const cJSON *nom;

			err = field(b, o, st, "status", "nominatedNodeName",
				    T_STR, &nom);
			if (err)
				return err;
			if (nom && *nom->valuestring)
				p->nominated = nom->valuestring;
		}
	}
	err = pod_priority(b, p);
	if (!err)
		err = obj_created(b, o, &p->created);
	if (!err)
		err = pod_shape(b, p);
	if (!err)
		err = pod_index_role(b, p);
	if (err)
		return err;
	/* the gang it belongs to */
	{
		char buf[600];
		const char *gname;
		int d;

		pod_dialect(p, &d, &gname, buf, sizeof(buf));
		if (d == D_NONE && p->state == S_BOUND)
			return TG_OK;
		if (d == D_NONE)
			gname = o->name;
		if (strlen(o->ns) + 1 + strlen(gname) > TG_MAX_NAME)
			return oerr(b, o, NULL, TG_EINVAL,
				    "gang name '%s/%.60s...' longer than %d "
				    "bytes", o->ns, gname, TG_MAX_NAME);
		if (group_get(b, d, o->ns, gname, &p->group))
			return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	}
	return TG_OK;
}

/*
 * A pod added by tg_k8s_add_object() is parsed here, when its turn comes;
 * once read, only a pending pod keeps its tree (the gang build reads it
 * again).  A bound pod keeps its labels (selectors of budgets and pod
 * affinity), the rest goes: so a build holds the trees of the pending
 * pods, not of the cluster.
 */
static tg_err pod_tree(bctx *b, kobj *o)
{
	char msg[sizeof(b->ei->msg)], nm[300];
	tg_err err;

	if (o->j || !o->text)
		return TG_OK;
	err = parse_one(o->text, o->len, b->k->srcs[o->src], &o->j, b->ei);
	if (!err)
		return TG_OK;
	if (err == TG_ENOMEM || !b->ei)
		return err;
	snprintf(msg, sizeof(msg), "%s", b->ei->msg);
	return tgi_errf(b->ei, err, "%s %s: %s", o->kind,
			oname(o, nm, sizeof(nm)), msg);
}

static tg_err pod_drop_tree(bctx *b, kobj *o, kpod *p)
{
	if (!o->text || !o->j || p->state == S_PENDING)
		return TG_OK;
	if (p->node) {
		uint32_t id;

		/* a few thousand nodes for a hundred thousand pods */
		if (tgi_strtab_intern(&b->k->names, p->node, &id))
			return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
		p->node = tgi_strtab_get(&b->k->names, id);
	}
	if (p->labels)
		p->own_labels = cJSON_DetachItemViaPointer(
			cJSON_GetObjectItemCaseSensitive(o->j, "metadata"),
			(cJSON *)p->labels);
	p->labels = p->own_labels;
	{
		cJSON *aff = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(o->j, "spec"),
			"affinity");
		cJSON *anti = cJSON_GetObjectItemCaseSensitive(aff,
			"podAntiAffinity");

		if (anti)	/* for the existing pods' anti-affinity */
			p->own_anti = cJSON_DetachItemViaPointer(aff, anti);
	}
	p->annots = NULL;
	p->spec = NULL;
	cJSON_Delete(o->j);
	o->j = NULL;
	return TG_OK;
}

/*
 * Fault isolation: an object that cannot be read costs only what depends
 * on it (its gang, its node), never the whole build.  The error \p err
 * just set in b->ei becomes \p msg and b->ei is cleared; TG_ENOMEM is
 * returned as is (it still ends the build).
 */
static tg_err fail_msg(bctx *b, tg_err err, char *msg, size_t n)
{
	if (err == TG_ENOMEM)
		return err;
	snprintf(msg, n, "%s", b->ei->msg[0] ? b->ei->msg : tg_strerror(err));
	b->ei->msg[0] = '\0';
	return TG_OK;
}

/* The group's gang is reported unschedulable with its first error. */
static tg_err group_set_fail(bctx *b, kgroup *g, const char *msg)
{
	if (g->fail)
		return TG_OK;
	g->fail = tgi_strdup(msg);
	return g->fail ? TG_OK : tgi_errf(b->ei, TG_ENOMEM, "out of memory");
}

/* group_set_fail() with the error \p err just set in b->ei. */
static tg_err group_fail(bctx *b, kgroup *g, tg_err err)
{
	char msg[sizeof(b->ei->msg)];

	if (!err || fail_msg(b, err, msg, sizeof(msg)))
		return err;
	return group_set_fail(b, g, msg);
}

/* \p m when it is a map of strings (labels, annotations), else NULL. */
static const cJSON *strmap(const cJSON *m)
{
	const cJSON *c;

	if (!cJSON_IsObject(m))
		return NULL;
	cJSON_ArrayForEach(c, m)
		if (!cJSON_IsString(c))
			return NULL;
	return m;
}

/*
 * A pod that cannot be read (\p err, b->ei says why).  Pending for this
 * scheduler: a member of its gang (from its labels when they can be read,
 * else a gang of its own), which is reported unschedulable with that
 * message.  Bound: what it uses is unknown, so its node takes no new pod
 * (a warning says so).  Ended, or another scheduler's: a warning, or
 * counted with the others.
 */
static tg_err pod_fail(bctx *b, const kobj *o, kpod *p, tg_err err)
{
	char msg[sizeof(b->ei->msg)], buf[600];
	const cJSON *md = jget(o->j, "metadata"), *spec = jget(o->j, "spec");
	const char *node = jstr(spec, "nodeName");
	const char *sn = jstr(spec, "schedulerName");
	const char *phase = jstr(jget(o->j, "status"), "phase"), *gname;
	uint32_t id;
	size_t n;
	int d;

	if (fail_msg(b, err, msg, sizeof(msg)))
		return err;
	p->state = S_SKIP;
	p->group = SIZE_MAX;
	p->labels = p->annots = p->spec = NULL;
	p->node = p->nominated = NULL;
	p->other = false;
	if (phase && (strcmp(phase, "Succeeded") == 0 ||
		      strcmp(phase, "Failed") == 0))
		err = warnf(b->k, "%s; ignored (the pod has ended)", msg);
	else if (node && *node) {
		err = tgi_strtab_intern(&b->badnodes, node, &id);
		if (!err)
			err = warnf(b->k, "%s; node '%.100s' takes no new pod: "
				    "what this pod uses there is unknown", msg,
				    node);
	} else if (b->k->scheduler &&
		   strcmp(sn && *sn ? sn : "default-scheduler",
			  b->k->scheduler) != 0) {
		p->other = true;
	} else if (!*o->name || strlen(o->ns) + 1 + strlen(o->name) >
		   TG_MAX_NAME) {
		err = warnf(b->k, "%s; ignored", msg);
	} else {
		kpod raw = *p;

		/* its group from the keys that can be read (jstr() checks
		 * each one), so that the gang it belongs to fails whole */
		raw.labels = cJSON_IsObject(jget(md, "labels")) ?
			jget(md, "labels") : NULL;
		raw.annots = cJSON_IsObject(jget(md, "annotations")) ?
			jget(md, "annotations") : NULL;
		pod_dialect(&raw, &d, &gname, buf, sizeof(buf));
		p->labels = strmap(raw.labels);
		p->annots = strmap(raw.annots);
		if (d == D_NONE || strlen(o->ns) + 1 + strlen(gname) >
		    TG_MAX_NAME) {
			d = D_NONE;
			gname = o->name;
		}
		n = strlen(o->ns) + strlen(o->name) + 2;
		if (!p->id && (p->id = tgi_malloc(n)) != NULL)
			snprintf(p->id, n, "%s/%s", o->ns, o->name);
		if (!p->id || group_get(b, d, o->ns, gname, &p->group))
			return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
		p->state = S_PENDING;
		p->broken = true;
		return group_set_fail(b, &b->groups[p->group], msg);
	}
	return err ? tgi_errf(b->ei, err, "out of memory") : TG_OK;
}

static tg_err load_pods(bctx *b)
{
	size_t n = b->first[C_POD + 1] - b->first[C_POD], i, other = 0;
	tg_err err;

	b->pods = tgi_calloc(n ? n : 1, sizeof(kpod));
	b->bound = tgi_calloc(n ? n : 1, sizeof(kpod *));
	if (!b->pods || !b->bound)
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		kpod *p = &b->pods[i];
		kgroup *g;

		b->npods = i + 1;
		err = pod_tree(b, b->idx[b->first[C_POD] + i]);
		if (!err)
			err = pod_parse(b, b->idx[b->first[C_POD] + i], p);
		if (err)
			err = pod_fail(b, b->idx[b->first[C_POD] + i], p, err);
		if (!err)
			err = pod_drop_tree(b, b->idx[b->first[C_POD] + i], p);
		if (err)
			return err;
		if (p->other)
			other++;
		if (p->group == SIZE_MAX)
			continue;
		g = &b->groups[p->group];
		if (p->state == S_BOUND) {
			g->nbound++;
			continue;
		}
		if (tgi_grow(&g->members, &g->capmembers, g->nmembers + 1,
			     sizeof(size_t)))
			return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
		g->members[g->nmembers++] = i;
	}
	if (other) {
		err = warnf(b->k, "%zu pending pod%s of other schedulers than "
			    "'%s' ignored", other, other == 1 ? "" : "s",
			    b->k->scheduler);
		if (err)
			return tgi_errf(b->ei, err, "out of memory");
	}
	return TG_OK;
}

/* ---- groups: PodGroups, sizes, topology requests ----------------------- */

static tg_err gwarn(bctx *b, kgroup *g, unsigned once, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* A warning about a gang, given once per gang for each \p once bit. */
static tg_err gwarn(bctx *b, kgroup *g, unsigned once, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	tg_err err;

	if (once && (g->warned & once))
		return TG_OK;
	g->warned |= once;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	err = warnf(b->k, "gang %s: %s", g->name, msg);
	return err ? tgi_errf(b->ei, err, "out of memory") : TG_OK;
}

static tg_err req_add(bctx *b, kgroup *g, const kobj *o, const cJSON *at,
		      int type, const char *layer, int how, unsigned size,
		      bool hard)
{
	static const char *const what[] = { "gather", "slice", "spread" };
	size_t i;
	kreq *r;

	if (!*layer || strlen(layer) > TG_MAX_NAME)
		return oerr(b, o, at, TG_EINVAL,
			    "topology level '%.60s' is empty or longer than "
			    "%d bytes", layer, TG_MAX_NAME);
	for (i = 0; i < g->nreqs; i++) {
		r = &g->reqs[i];
		if (r->type != type || strcmp(r->layer, layer) != 0)
			continue;
		if (type == R_GATHER) {
			r->how = TG_MAX(r->how, how);
			return TG_OK;
		}
		if (r->size == size && r->hard == hard)
			return TG_OK;
		return gwarn(b, g, W_CONFLICT,
			     "members ask for different %ss on '%.100s'; "
			     "the first one is used", what[type], layer);
	}
	if (tgi_grow(&g->reqs, &g->capreqs, g->nreqs + 1, sizeof(kreq)))
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	r = &g->reqs[g->nreqs];
	r->layer = tgi_strdup(layer);
	if (!r->layer)
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	r->type = type;
	r->how = how;
	r->size = size;
	r->hard = hard;
	g->nreqs++;
	return TG_OK;
}

/* gang.scheduling.koordinator.sh/network-topology-spec */
static tg_err koord_spec(bctx *b, kgroup *g, const kobj *o,
			 const cJSON *annots, bool *found)
{
	const cJSON *v = jget(annots, A_KOORD_SPEC), *gs, *e;
	char path[300];
	cJSON *j;
	unsigned i = 0;
	size_t len;
	tg_err err = TG_OK;

	*found = false;
	if (!cJSON_IsString(v))
		return TG_OK;
	*found = true;
	pjoin(path, sizeof(path), "metadata.annotations", A_KOORD_SPEC);
	len = strlen(v->valuestring);
	if (len > K8S_MAX_ANNOT_JSON)
		return oerr(b, o, v, TG_ELIMIT, "%s: longer than %d bytes",
			    path, K8S_MAX_ANNOT_JSON);
	j = cJSON_ParseWithLength(v->valuestring, len);
	if (!j || !cJSON_IsObject(j)) {
		cJSON_Delete(j);
		return oerr(b, o, v, TG_EINVAL, "%s: bad JSON '%.80s'", path,
			    v->valuestring);
	}
	gs = cJSON_GetObjectItemCaseSensitive(j, "gatherStrategy");
	if (gs && !cJSON_IsArray(gs) && !cJSON_IsNull(gs)) {
		err = oerr(b, o, v, TG_EINVAL,
			   "%s: gatherStrategy: expected a list", path);
		goto out;
	}
	cJSON_ArrayForEach(e, gs) {
		const char *layer = jstr(e, "layer"), *st = jstr(e, "strategy");
		const cJSON *pcm = jget(e, "podCountMultiple");
		int64_t m = 0;
		int how;

		if (!cJSON_IsObject(e) || !layer || !*layer) {
			err = oerr(b, o, v, TG_EINVAL,
				   "%s: gatherStrategy[%u].layer: missing",
				   path, i);
			goto out;
		}
		if (st && strcmp(st, "MustGather") == 0) {
			how = TG_GATHER_MUST;
		} else if (st && strcmp(st, "PreferGather") == 0) {
			how = TG_GATHER_PREFER;
		} else {
			err = oerr(b, o, v, TG_EINVAL,
				   "%s: gatherStrategy[%u].strategy: unknown "
				   "strategy '%.40s'", path, i,
				   st ? st : "(missing)");
			goto out;
		}
		if (pcm && !cJSON_IsNull(pcm) &&
		    (!num_int(pcm, &m) || m < 1 || m > TG_MAX_MEMBERS)) {
			err = oerr(b, o, v, TG_EINVAL,
				   "%s: gatherStrategy[%u].podCountMultiple: "
				   "not a positive integer", path, i);
			goto out;
		}
		err = req_add(b, g, o, v, R_GATHER, layer, how, 0, false);
		if (!err && m > 0)
			err = req_add(b, g, o, v, R_SLICE, layer, 0,
				      (unsigned)m, false);
		if (err)
			goto out;
		i++;
	}
out:
	cJSON_Delete(j);
	return err;
}

/* kueue.x-k8s.io/podset-* annotations of one member. */
static tg_err kueue_reqs(bctx *b, kgroup *g, const kpod *p)
{
	const kobj *o = p->o;
	const cJSON *req = jget(p->annots, A_KUEUE_REQ);
	const cJSON *pref = jget(p->annots, A_KUEUE_PREF);
	const cJSON *unc = jget(p->annots, A_KUEUE_UNC);
	const cJSON *sl = jget(p->annots, A_KUEUE_SLICE);
	const cJSON *ss = jget(p->annots, A_KUEUE_SSIZE);
	const cJSON *multi = jget(p->annots, A_KUEUE_SLICES);
	char path[300];
	tg_err err = TG_OK;

	if (unc) {
		static const char *const ok[] = { "1", "t", "T", "TRUE", "true",
			"True", "0", "f", "F", "FALSE", "false", "False" };
		size_t i;

		for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
			if (strcmp(unc->valuestring, ok[i]) == 0)
				break;
		if (i == sizeof(ok) / sizeof(ok[0]))
			return oerr(b, o, unc, TG_EINVAL,
				    "%s: not a boolean '%.40s'",
				    pjoin(path, sizeof(path),
					  "metadata.annotations", A_KUEUE_UNC),
				    unc->valuestring);
	}
	if (req) {
		err = req_add(b, g, o, req, R_GATHER, req->valuestring,
			      TG_GATHER_MUST, 0, false);
		if (!err && pref)
			err = gwarn(b, g, W_KUEUE_BOTH,
				    "%s and %s both set; the required one is "
				    "used", A_KUEUE_REQ, A_KUEUE_PREF);
	} else if (pref) {
		err = req_add(b, g, o, pref, R_GATHER, pref->valuestring,
			      TG_GATHER_PREFER, 0, false);
	}
	if (err)
		return err;
	if ((sl != NULL) != (ss != NULL))
		return oerr(b, o, sl ? sl : ss, TG_EINVAL,
			    "metadata.annotations: %s needs %s",
			    sl ? A_KUEUE_SLICE : A_KUEUE_SSIZE,
			    sl ? A_KUEUE_SSIZE : A_KUEUE_SLICE);
	if (sl && multi)
		return oerr(b, o, multi, TG_EINVAL,
			    "metadata.annotations: %s and %s are mutually "
			    "exclusive", A_KUEUE_SLICE, A_KUEUE_SLICES);
	if (sl) {
		int64_t n;

		if (!tgi_parse_i64(ss->valuestring, &n) || n < 1 ||
		    n > TG_MAX_MEMBERS)
			return oerr(b, o, ss, TG_EINVAL,
				    "%s: not a positive integer '%.40s'",
				    pjoin(path, sizeof(path),
					  "metadata.annotations",
					  A_KUEUE_SSIZE), ss->valuestring);
		err = req_add(b, g, o, sl, R_SLICE, sl->valuestring, 0,
			      (unsigned)n, false);
	}
	if (!err && multi) {
		size_t len = strlen(multi->valuestring);
		cJSON *j = NULL, *e;
		int cnt = 0;

		pjoin(path, sizeof(path), "metadata.annotations",
		      A_KUEUE_SLICES);
		if (len <= K8S_MAX_ANNOT_JSON)
			j = cJSON_ParseWithLength(multi->valuestring, len);
		if (!j || !cJSON_IsArray(j) || cJSON_GetArraySize(j) < 1 ||
		    cJSON_GetArraySize(j) > 3) {
			cJSON_Delete(j);
			return oerr(b, o, multi, TG_EINVAL,
				    "%s: expected a JSON list of 1 to 3 "
				    "{\"topology\",\"size\"}: '%.60s'", path,
				    multi->valuestring);
		}
		cJSON_ArrayForEach(e, j) {
			const char *topo = jstr(e, "topology");
			int64_t n;

			if (!topo || !num_int(jget(e, "size"), &n) || n < 1 ||
			    n > TG_MAX_MEMBERS) {
				err = oerr(b, o, multi, TG_EINVAL,
					   "%s: entry %d needs a topology and "
					   "a positive size", path, cnt);
				break;
			}
			err = req_add(b, g, o, multi, R_SLICE, topo, 0,
				      (unsigned)n, false);
			if (err)
				break;
			cnt++;
		}
		cJSON_Delete(j);
	}
	return err;
}

/* The kai.scheduler annotations of one member (the podgrouper copies the
 * top owner's into the PodGroup; a snapshot may carry them on pods). */
static tg_err kai_reqs(bctx *b, kgroup *g, const kpod *p, bool have_cr_tc)
{
	const kobj *o = p->o;
	const cJSON *topo = jget(p->annots, A_KAI_TOPO);
	const cJSON *req = jget(p->annots, A_KAI_REQ);
	const cJSON *pref = jget(p->annots, A_KAI_PREF);
	const cJSON *segsz = jget(p->annots, A_KAI_SEG_SIZE);
	const cJSON *segreq = jget(p->annots, A_KAI_SEG_REQ);
	const cJSON *segpref = jget(p->annots, A_KAI_SEG_PREF);
	tg_err err = TG_OK;

	if (!have_cr_tc) {
		if (topo && !g->kai_topo && *topo->valuestring)
			g->kai_topo = topo->valuestring;
		if (req)
			err = req_add(b, g, o, req, R_GATHER, req->valuestring,
				      TG_GATHER_MUST, 0, false);
		if (!err && pref)
			err = req_add(b, g, o, pref, R_GATHER,
				      pref->valuestring, TG_GATHER_PREFER, 0,
				      false);
		if (err)
			return err;
	}
	if (segsz) {
		char path[300];
		int64_t n;

		if (!tgi_parse_i64(segsz->valuestring, &n) || n < 1 ||
		    n > TG_MAX_MEMBERS)
			return oerr(b, o, segsz, TG_EINVAL,
				    "%s: not a positive integer '%.40s'",
				    pjoin(path, sizeof(path),
					  "metadata.annotations",
					  A_KAI_SEG_SIZE), segsz->valuestring);
		if (segreq)
			err = req_add(b, g, o, segreq, R_SLICE,
				      segreq->valuestring, 0, (unsigned)n,
				      false);
		else if (!segpref)
			err = gwarn(b, g, W_SEGSIZE,
				    "%s without a segment placement; ignored",
				    A_KAI_SEG_SIZE);
	}
	if (!err && segpref)
		err = gwarn(b, g, W_SEGPREF,
			    "%s is a preference the core does not model; "
			    "ignored", A_KAI_SEG_PREF);
	return err;
}

/* A label selector against a label map; an error for a bad selector. */
static tg_err sel_match(bctx *b, const kobj *o, const cJSON *sel,
			const char *path, const cJSON *labels, bool *match)
{
	const cJSON *ml, *me, *c;
	char p[300];
	unsigned i = 0;

	*match = false;
	if (!sel || cJSON_IsNull(sel))
		return TG_OK;	/* a nil selector selects nothing */
	if (!cJSON_IsObject(sel))
		return oerr(b, o, sel, TG_EINVAL, "%s: expected an object",
			    path);
	ml = jget(sel, "matchLabels");
	me = jget(sel, "matchExpressions");
	if (ml && !cJSON_IsNull(ml) && !cJSON_IsObject(ml))
		return oerr(b, o, ml, TG_EINVAL,
			    "%s.matchLabels: expected an object", path);
	if (me && !cJSON_IsNull(me) && !cJSON_IsArray(me))
		return oerr(b, o, me, TG_EINVAL,
			    "%s.matchExpressions: expected a list", path);
	*match = true;
	cJSON_ArrayForEach(c, ml) {
		const char *v = jstr(labels, c->string);

		if (!cJSON_IsString(c))
			return oerr(b, o, c, TG_EINVAL,
				    "%s.matchLabels: expected strings", path);
		if (!v || strcmp(v, c->valuestring) != 0)
			*match = false;
	}
	cJSON_ArrayForEach(c, me) {
		const char *key = jstr(c, "key"), *op = jstr(c, "operator");
		const cJSON *vals = jget(c, "values"), *v;
		const char *have;
		bool in = false;

		pidx(p, sizeof(p), path, i++);
		if (!key || !op)
			return oerr(b, o, c, TG_EINVAL,
				    "%s.matchExpressions%s: needs a key and "
				    "an operator", path, p + strlen(path));
		if (vals && !cJSON_IsNull(vals) && !cJSON_IsArray(vals))
			return oerr(b, o, c, TG_EINVAL,
				    "%s.matchExpressions%s.values: expected "
				    "a list", path, p + strlen(path));
		have = jstr(labels, key);
		cJSON_ArrayForEach(v, vals) {
			if (!cJSON_IsString(v))
				return oerr(b, o, v, TG_EINVAL,
					    "%s.matchExpressions%s.values: "
					    "expected strings", path,
					    p + strlen(path));
			if (have && strcmp(have, v->valuestring) == 0)
				in = true;
		}
		if (strcmp(op, "In") == 0) {
			if (!in)
				*match = false;
		} else if (strcmp(op, "NotIn") == 0) {
			if (in)
				*match = false;
		} else if (strcmp(op, "Exists") == 0) {
			if (!have)
				*match = false;
		} else if (strcmp(op, "DoesNotExist") == 0) {
			if (have)
				*match = false;
		} else {
			return oerr(b, o, c, TG_EINVAL,
				    "%s.matchExpressions%s.operator: unknown "
				    "operator '%.40s'", path,
				    p + strlen(path), op);
		}
	}
	return TG_OK;
}

static bool is_level(const bctx *b, const char *name)
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

/* The PodGroup of a group: size, priority, requests. */
static tg_err group_cr(bctx *b, kgroup *g, int64_t *min, bool *koord_spec_cr,
		       bool *kai_tc)
{
	const kobj *o = g->cr;
	const cJSON *labels, *annots, *spec, *pcn, *tc, *pre, *sub;
	bool present;
	tg_err err;

	*koord_spec_cr = false;
	*kai_tc = false;
	err = obj_meta(b, o, &labels, &annots);
	if (!err)
		err = field(b, o, o->j, "", "spec", T_OBJ, &spec);
	if (!err)
		err = field_int(b, o, spec, "spec", "minMember", 0, INT32_MAX,
				&present, min);
	if (!err && !present)
		*min = -1;
	if (!err)
		err = obj_created(b, o, &g->created);
	if (!err)
		err = field(b, o, spec, "spec", "priorityClassName", T_STR,
			    &pcn);
	if (err)
		return err;
	if (pcn && *pcn->valuestring) {
		const pclass *pc = find_pc(b, pcn->valuestring);

		if (pc) {
			g->prio = pc->value;
			g->never = pc->never;
		} else {
			err = owarn(b, o, "spec.priorityClassName: no "
				    "PriorityClass '%.100s' in the snapshot",
				    pcn->valuestring);
			if (err)
				return tgi_errf(b->ei, err, "out of memory");
		}
	}
	if (g->dialect == D_KOORD) {
		err = koord_spec(b, g, o, annots, koord_spec_cr);
		if (err)
			return err;
	}
	if (g->dialect != D_KAI)
		return TG_OK;
	err = field(b, o, spec, "spec", "topologyConstraint", T_OBJ, &tc);
	if (!err)
		err = field(b, o, spec, "spec", "preemptibility", T_STR, &pre);
	if (!err)
		err = field(b, o, spec, "spec", "subGroups", T_ARR, &sub);
	if (err)
		return err;
	if (pre && *pre->valuestring) {
		if (strcmp(pre->valuestring, "preemptible") == 0)
			g->preemptible = true;
		else if (strcmp(pre->valuestring, "non-preemptible") == 0)
			g->preemptible = false;
		else
			return oerr(b, o, pre, TG_EINVAL,
				    "spec.preemptibility: unknown value "
				    "'%.40s'", pre->valuestring);
	} else {
		g->preemptible = true;	/* decided by priority, per pod */
	}
	if (sub && cJSON_GetArraySize(sub) > 0) {
		err = gwarn(b, g, W_SUBGROUPS,
			    "spec.subGroups are not modeled; the gang is "
			    "placed as one");
		if (err)
			return err;
	}
	if (tc) {
		const cJSON *t, *rq, *pf;
		const char *pp = "spec.topologyConstraint";

		err = field(b, o, tc, pp, "topology", T_STR, &t);
		if (!err)
			err = field(b, o, tc, pp, "requiredTopologyLevel",
				    T_STR, &rq);
		if (!err)
			err = field(b, o, tc, pp, "preferredTopologyLevel",
				    T_STR, &pf);
		if (err)
			return err;
		*kai_tc = true;
		if (t && *t->valuestring)
			g->kai_topo = t->valuestring;
		if (rq && *rq->valuestring)
			err = req_add(b, g, o, rq, R_GATHER, rq->valuestring,
				      TG_GATHER_MUST, 0, false);
		if (!err && pf && *pf->valuestring)
			err = req_add(b, g, o, pf, R_GATHER, pf->valuestring,
				      TG_GATHER_PREFER, 0, false);
	}
	return err;
}

static int kai_pset(const kgroup *g)
{
	const cJSON *pre = jget(jget(g->cr ? g->cr->j : NULL, "spec"),
				"preemptibility");

	return cJSON_IsString(pre) && *pre->valuestring;
}

static tg_err group_load(bctx *b, kgroup *g)
{
	static const char *const crgroup[] = { NULL, G_KOORD, G_SP, G_KAI,
					       NULL, NULL };
	const kpod *p0;
	int64_t min = -1;
	bool have, koord_cr = false, kai_tc = false;
	size_t i;
	tg_err err;

	if (crgroup[g->dialect])
		g->cr = find_obj(b, C_PODGROUP, crgroup[g->dialect], g->ns,
				 g->gname);
	if (g->cr) {
		err = group_cr(b, g, &min, &koord_cr, &kai_tc);
		if (err)
			return err;
	}
	if (!g->nmembers)
		return TG_OK;	/* all running: only names allocations */
	p0 = &b->pods[g->members[0]];
	if (!g->cr && (g->dialect == D_SP || g->dialect == D_KAI ||
		       (g->dialect == D_KOORD &&
			!nonempty(p0->annots, A_KOORD_NAME)))) {
		err = gwarn(b, g, W_NOCR,
			    "no PodGroup '%s' in the snapshot; its %zu "
			    "pending pod%s form the gang", g->gname,
			    g->nmembers, g->nmembers == 1 ? "" : "s");
		if (err)
			return err;
	}
	if (!g->cr) {
		const char *key = g->dialect == D_KOORD ? A_KOORD_MIN :
				  g->dialect == D_KUEUE ? A_KUEUE_TOTAL :
				  g->dialect == D_LWS ? A_LWS_SIZE : NULL;

		if (key) {
			err = annot_int(b, p0->o, p0->annots,
					"metadata.annotations", key, 0, &min,
					&have);
			if (err)
				return err;
			if (!have)
				min = -1;
		}
	}
	/* no size from the dialect: the LWS group size, Kueue's count */
	if (min < 0 && nonempty(p0->labels, L_LWS_NAME)) {
		err = annot_int(b, p0->o, p0->annots, "metadata.annotations",
				A_LWS_SIZE, 0, &min, &have);
		if (err)
			return err;
		if (!have)
			min = -1;
	}
	if (min < 0) {
		err = annot_int(b, p0->o, p0->annots, "metadata.annotations",
				A_KUEUE_TOTAL, 0, &min, &have);
		if (err)
			return err;
		if (!have)
			min = -1;
	}
	if (min > (int64_t)g->nmembers + g->nbound) {
		g->ready = false;
		return gwarn(b, g, 0, "%zu pending and %u running pod%s of "
			     "the %lld needed; not ready", g->nmembers,
			     g->nbound, g->nmembers + g->nbound == 1 ? "" : "s",
			     (long long)min);
	}
	if (g->nbound) {
		err = gwarn(b, g, W_PARTIAL,
			    "%u member%s already running; the %zu pending "
			    "ones are placed on their own", g->nbound,
			    g->nbound == 1 ? "" : "s", g->nmembers);
		if (err)
			return err;
	}
	/* priority, age: the PodGroup's, else the members' */
	for (i = 0; i < g->nmembers; i++) {
		const kpod *p = &b->pods[g->members[i]];
		bool cr_prio = g->cr && jstr(jget(g->cr->j, "spec"),
					      "priorityClassName") &&
			       g->prio != INT64_MIN;

		if (!cr_prio) {
			if (i && p->prio != g->prio) {
				err = gwarn(b, g, W_PRIO,
					    "members have different "
					    "priorities; the highest is used");
				if (err)
					return err;
			}
			g->prio = TG_MAX(g->prio, p->prio);
			g->never = g->never || p->never;
		}
		if (!g->cr || g->created == INT64_MAX)
			g->created = TG_MIN(g->created, p->created);
	}
	/* topology requests of the members */
	for (i = 0; i < g->nmembers; i++) {
		const kpod *p = &b->pods[g->members[i]];
		const cJSON *ex;

		if (!koord_cr) {
			err = koord_spec(b, g, p->o, p->annots, &have);
			if (err)
				return err;
		}
		err = kueue_reqs(b, g, p);
		if (!err)
			err = kai_reqs(b, g, p, kai_tc);
		if (err)
			return err;
		ex = jget(p->annots, A_LWS_EXCL);
		if (ex && *ex->valuestring) {
			err = req_add(b, g, p->o, ex, R_GATHER,
				      ex->valuestring, TG_GATHER_MUST, 0,
				      false);
			if (!err)
				err = gwarn(b, g, W_EXCL,
					    "%s: the group is gathered in one "
					    "'%.80s' domain; exclusivity is "
					    "not enforced", A_LWS_EXCL,
					    ex->valuestring);
			if (err)
				return err;
		}
	}
	return TG_OK;
}

static size_t uf_find(bctx *b, size_t i)
{
	while (b->groups[i].root != i) {
		b->groups[i].root = b->groups[b->groups[i].root].root;
		i = b->groups[i].root;
	}
	return i;
}

/* Koordinator GangGroups: PodGroups listed together become one gang. */
static tg_err gang_groups(bctx *b)
{
	size_t i, n = b->ngroups;
	tg_err err;

	for (i = 0; i < n; i++) {
		kgroup *g = &b->groups[i];
		const cJSON *v = NULL, *e;
		const kobj *o;
		cJSON *j;
		char path[300];
		int cnt = 0;

		if (g->dialect != D_KOORD || !g->nmembers)
			continue;
		o = g->cr ? g->cr : b->pods[g->members[0]].o;
		v = jget(jget(jget(o->j, "metadata"), "annotations"),
			 A_KOORD_GROUPS);
		if (!v && g->cr) {
			o = b->pods[g->members[0]].o;
			v = jget(b->pods[g->members[0]].annots,
				 A_KOORD_GROUPS);
		}
		if (!cJSON_IsString(v))
			continue;
		pjoin(path, sizeof(path), "metadata.annotations",
		      A_KOORD_GROUPS);
		j = NULL;
		if (strlen(v->valuestring) <= K8S_MAX_ANNOT_JSON)
			j = cJSON_Parse(v->valuestring);
		if (!cJSON_IsArray(j) ||
		    cJSON_GetArraySize(j) > K8S_MAX_GANG_GROUPS) {
			cJSON_Delete(j);
			err = group_fail(b, g, oerr(b, o, v, TG_EINVAL,
				    "%s: expected a JSON list of at most %d "
				    "\"namespace/name\": '%.60s'", path,
				    K8S_MAX_GANG_GROUPS, v->valuestring));
			if (err)
				return err;
			continue;
		}
		cJSON_ArrayForEach(e, j) {
			char key[600];
			uint32_t id;
			size_t ra, rb;

			if (!cJSON_IsString(e) ||
			    !strchr(e->valuestring, '/')) {
				err = group_fail(b, g, oerr(b, o, v, TG_EINVAL,
					    "%s: entry %d is not "
					    "\"namespace/name\"", path, cnt));
				if (err) {
					cJSON_Delete(j);
					return err;
				}
				break;
			}
			cnt++;
			snprintf(key, sizeof(key), "%c%s", '0' + D_KOORD,
				 e->valuestring);
			id = tgi_strtab_find(&b->gkeys, key);
			if (!id) {
				g->ready = false;
				err = gwarn(b, g, 0, "GangGroup member '%.100s' "
					    "has no pods in the snapshot; not "
					    "ready", e->valuestring);
				if (err) {
					cJSON_Delete(j);
					return err;
				}
				continue;
			}
			if (!b->groups[id - 1].nmembers)
				continue;	/* all running */
			ra = uf_find(b, i);
			rb = uf_find(b, id - 1);
			if (ra == rb)
				continue;
			/* the smaller name represents the set */
			if (tg_name_cmp(b->groups[rb].name,
					b->groups[ra].name) < 0) {
				size_t t = ra;

				ra = rb;
				rb = t;
			}
			b->groups[rb].root = ra;
			b->groups[ra].setsize += b->groups[rb].setsize;
		}
		cJSON_Delete(j);
	}
	/* fold members, readiness, priority and requests into the root */
	for (i = 0; i < n; i++) {
		size_t r = uf_find(b, i), k2;
		kgroup *g = &b->groups[i], *rg = &b->groups[r];

		if (r == i || !g->nmembers)
			continue;
		if (g->fail) {
			err = group_set_fail(b, rg, g->fail);
			if (err)
				return err;
		}
		rg->ready = rg->ready && g->ready;
		rg->prio = TG_MAX(rg->prio, g->prio);
		rg->never = rg->never || g->never;
		rg->created = TG_MIN(rg->created, g->created);
		if (tgi_grow(&rg->members, &rg->capmembers,
			     rg->nmembers + g->nmembers, sizeof(size_t)))
			return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
		memcpy(rg->members + rg->nmembers, g->members,
		       g->nmembers * sizeof(size_t));
		rg->nmembers += g->nmembers;
		g->nmembers = 0;
		for (k2 = 0; k2 < g->nreqs; k2++) {
			kreq *q = &g->reqs[k2];

			err = req_add(b, rg, b->pods[rg->members[0]].o, NULL,
				      q->type, q->layer, q->how, q->size,
				      q->hard);
			if (err)
				return err;
		}
		if (!rg->kai_topo)
			rg->kai_topo = g->kai_topo;
	}
	/* pods of a GangGroup get their PodGroup in their role */
	for (i = 0; i < n; i++) {
		kgroup *g = &b->groups[i];
		size_t m;

		if (g->root != i || g->setsize < 2 || g->fail)
			continue;
		for (m = 0; m < g->nmembers; m++) {
			kpod *p = &b->pods[g->members[m]];
			const kgroup *own = &b->groups[p->group];
			size_t len = strlen(own->gname) + strlen(p->role) + 2;
			char *role = tgi_malloc(len);

			if (!role)
				return tgi_errf(b->ei, TG_ENOMEM,
						"out of memory");
			uint32_t id;

			snprintf(role, len, "%s%s%s", own->gname,
				 *p->role ? "/" : "", p->role);
			err = tgi_strtab_intern(&b->k->names, role, &id);
			tgi_free(role);
			if (err)
				return tgi_errf(b->ei, TG_ENOMEM,
						"out of memory");
			p->role = tgi_strtab_get(&b->k->names, id);
		}
	}
	return TG_OK;
}

static tg_err load_groups(bctx *b)
{
	size_t i;
	tg_err err;

	for (i = 0; i < b->ngroups; i++) {
		kgroup *g = &b->groups[i];

		if (g->fail)
			continue;
		err = group_fail(b, g, group_load(b, g));
		if (err)
			return err;
	}
	return gang_groups(b);
}

/* ---- levels ------------------------------------------------------------ */

static tg_err level_push(bctx *b, const kobj *o, const char *name,
			 const char *key, const char *alias)
{
	klevel *l;

	if (b->nlevels >= TG_MAX_LAYERS) {
		if (o)
			return oerr(b, o, NULL, TG_ELIMIT,
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

/* Koordinator's ClusterNetworkTopology "default": parent order. */
static tg_err levels_cnt(bctx *b, const kobj *o)
{
	const cJSON *spec, *list, *e;
	const char *parent = "ClusterTopologyLayer";
	char path[300];
	size_t n, i, used = 0, steps;
	const cJSON **ents;
	bool *done;
	tg_err err;

	err = field(b, o, o->j, "", "spec", T_OBJ, &spec);
	if (!err)
		err = field(b, o, spec, "spec", "networkTopologySpec", T_ARR,
			    &list);
	if (err)
		return err;
	n = (size_t)cJSON_GetArraySize(list);
	ents = tgi_calloc(n ? n : 1, sizeof(*ents));
	done = tgi_calloc(n ? n : 1, sizeof(*done));
	if (!ents || !done) {
		err = tgi_errf(b->ei, TG_ENOMEM, "out of memory");
		goto out;
	}
	i = 0;
	cJSON_ArrayForEach(e, list) {
		const cJSON *tl, *pl, *lk;
		size_t j;

		pidx(path, sizeof(path), "spec.networkTopologySpec",
		     (unsigned)i);
		if (!cJSON_IsObject(e)) {
			err = oerr(b, o, e, TG_EINVAL,
				   "%s: expected an object", path);
			goto out;
		}
		err = field(b, o, e, path, "topologyLayer", T_STR, &tl);
		if (!err)
			err = field(b, o, e, path, "parentTopologyLayer", T_STR,
				    &pl);
		if (!err)
			err = field(b, o, e, path, "labelKey", T_ARR, &lk);
		if (err)
			goto out;
		if (!tl || !*tl->valuestring) {
			err = oerr(b, o, e, TG_EINVAL,
				   "%s.topologyLayer: missing", path);
			goto out;
		}
		for (j = 0; j < i; j++) {
			if (strcmp(jstr(ents[j], "topologyLayer"),
				   tl->valuestring) == 0) {
				err = oerr(b, o, e, TG_EINVAL,
					   "%s.topologyLayer: '%.60s' "
					   "appears twice", path,
					   tl->valuestring);
				goto out;
			}
		}
		ents[i++] = e;
	}
	/* walk down from the cluster, one child per layer */
	for (steps = 0; steps <= n; steps++) {
		const cJSON *next = NULL, *lk, *k2;
		size_t ni = 0;
		unsigned nk = 0;
		klevel *l;

		for (i = 0; i < n; i++) {
			const char *pl = jstr(ents[i], "parentTopologyLayer");

			if (done[i])
				continue;
			if (!pl || !*pl)
				pl = "ClusterTopologyLayer";
			if (strcmp(pl, parent) != 0)
				continue;
			if (next) {
				err = oerr(b, o, ents[i], TG_EINVAL,
					   "spec.networkTopologySpec: layers "
					   "'%.60s' and '%.60s' share the "
					   "parent '%.60s'; not a chain",
					   jstr(next, "topologyLayer"),
					   jstr(ents[i], "topologyLayer"),
					   parent);
				goto out;
			}
			next = ents[i];
			ni = i;
		}
		if (!next)
			break;
		done[ni] = true;
		used++;
		parent = jstr(next, "topologyLayer");
		if (strcmp(parent, "NodeTopologyLayer") == 0)
			break;
		lk = jget(next, "labelKey");
		pidx(path, sizeof(path), "spec.networkTopologySpec",
		     (unsigned)ni);
		if (cJSON_GetArraySize(lk) < 1) {
			err = oerr(b, o, next, TG_EINVAL,
				   "%s.labelKey: missing", path);
			goto out;
		}
		err = level_push(b, o, parent, NULL, NULL);
		if (err)
			goto out;
		l = &b->levels[b->nlevels - 1];
		l->nkeys = 0;
		cJSON_ArrayForEach(k2, lk) {
			if (!cJSON_IsString(k2) || !*k2->valuestring) {
				err = oerr(b, o, k2, TG_EINVAL,
					   "%s.labelKey: expected non-empty "
					   "strings", path);
				goto out;
			}
			if (nk < K8S_MAX_ANYOF)
				l->keys[nk++] = k2->valuestring;
		}
		l->nkeys = nk;
		if (cJSON_GetArraySize(lk) > K8S_MAX_ANYOF) {
			err = owarn(b, o, "%s.labelKey: only the first %d keys "
				    "are used", path, K8S_MAX_ANYOF);
			if (err) {
				err = tgi_errf(b->ei, err, "out of memory");
				goto out;
			}
		}
	}
	for (i = 0; i < n; i++) {
		const char *tl = jstr(ents[i], "topologyLayer");

		if (done[i] || strcmp(tl, "NodeTopologyLayer") == 0 ||
		    strcmp(tl, "ClusterTopologyLayer") == 0)
			continue;
		err = owarn(b, o, "layer '%.60s' is not below "
			    "ClusterTopologyLayer's chain; ignored", tl);
		if (err) {
			err = tgi_errf(b->ei, err, "out of memory");
			goto out;
		}
	}
	TG_UNUSED(used);
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

	err = field(b, o, o->j, "", "spec", T_OBJ, &spec);
	if (!err)
		err = field(b, o, spec, "spec", "levels", T_ARR, &list);
	if (err)
		return err;
	n = (unsigned)cJSON_GetArraySize(list);
	if (n < 1)
		return oerr(b, o, spec, TG_EINVAL, "spec.levels: missing");
	cJSON_ArrayForEach(e, list) {
		const cJSON *nl, *al = NULL;

		pidx(path, sizeof(path), "spec.levels", i);
		if (!cJSON_IsObject(e))
			return oerr(b, o, e, TG_EINVAL,
				    "%s: expected an object", path);
		err = field(b, o, e, path, "nodeLabel", T_STR, &nl);
		if (!err && strcmp(o->group, G_KAI_TOPO) == 0)
			err = field(b, o, e, path, "alias", T_STR, &al);
		if (err)
			return err;
		if (!nl || !*nl->valuestring)
			return oerr(b, o, e, TG_EINVAL, "%s.nodeLabel: missing",
				    path);
		if (strcmp(nl->valuestring, K_HOSTNAME) == 0) {
			if (i + 1 != n)
				return oerr(b, o, nl, TG_EINVAL,
					    "%s.nodeLabel: %s may only be the "
					    "last level", path, K_HOSTNAME);
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

/* Presets matched against the labels the nodes carry. */
static tg_err levels_preset(bctx *b)
{
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
	unsigned tiers[TG_MAX_LAYERS], ntiers = 0, i;
	bool has_accel = false, seen[6] = { false }, has_zone[2] = { false };
	size_t j;
	tg_err err;

	for (j = b->first[C_NODE]; j < b->first[C_NODE + 1]; j++) {
		const cJSON *labels = jget(jget(b->idx[j]->j, "metadata"),
					   "labels"), *c;

		/* a Node whose labels are not a map of strings is refused
		 * by add_node(); it adds no level */
		if (!cJSON_IsObject(labels))
			continue;
		cJSON_ArrayForEach(c, labels) {
			const char *key = c->string;
			unsigned t;

			if (!key || !cJSON_IsString(c))
				continue;

			if (strncmp(key, tierp, sizeof(tierp) - 1) == 0 &&
			    tgi_parse_u32(key + sizeof(tierp) - 1, &t) &&
			    key[sizeof(tierp) - 1] >= '0' &&
			    key[sizeof(tierp) - 1] <= '9') {
				for (i = 0; i < ntiers; i++)
					if (tiers[i] == t)
						break;
				if (i == ntiers && ntiers == TG_MAX_LAYERS)
					/* a level dropped would be silent */
					return tgi_errf(b->ei, TG_ELIMIT,
						"node labels %sN: more than "
						"%d tiers (a topology holds "
						"at most %d levels)", tierp,
						TG_MAX_LAYERS, TG_MAX_LAYERS);
				if (i == ntiers)
					tiers[ntiers++] = t;
			} else if (strcmp(key, accel) == 0) {
				has_accel = true;
			}
			for (i = 0; i < 4; i++) {
				if (strcmp(key, gen1[i]) == 0)
					seen[i] = true;
				if (strcmp(key, gen2[i]) == 0)
					seen[i == 1 ? 1 : i == 3 ? 3 :
					     i == 0 ? 4 : 5] = true;
			}
			for (i = 0; i < 2; i++)
				if (strcmp(key, zone[i]) == 0)
					has_zone[i] = true;
		}
	}
	if (ntiers || has_accel) {
		if (ntiers > 1)
			qsort(tiers, ntiers, sizeof(unsigned), tier_cmp);
		for (i = 0; i < ntiers; i++) {
			snprintf(b->tierkeys[i], sizeof(b->tierkeys[i]),
				 "%s%u", tierp, tiers[i]);
			err = level_push(b, NULL, b->tierkeys[i],
					 b->tierkeys[i], NULL);
			if (err)
				return err;
		}
		return has_accel ? level_push(b, NULL, accel, accel, NULL) :
				   TG_OK;
	}
	/* seen[]: 0 datacenter, 1 spine, 2 block, 3 accelerator, 4 core,
	 * 5 leaf */
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
		if (!has_zone[i])
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

	if (fail_msg(b, err, msg, sizeof(msg)))
		return err;
	b->nlevels = 0;
	err = warnf(b->k, "%s; left out: the levels come from the next "
		    "source", msg);
	return err ? tgi_errf(b->ei, err, "out of memory") : TG_OK;
}

static tg_err pick_levels(bctx *b)
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
	o = find_obj(b, C_CNT, G_KOORD_CNT, "", "default");
	if (o) {
		err = levels_cnt(b, o);
		if (err != TG_EINVAL && err != TG_ELIMIT)
			return err;
		err = levels_fail(b, err);
		if (err)
			return err;
	}
	if (b->first[C_CNT] < b->first[C_CNT + 1]) {
		err = warnf(b->k, "ClusterNetworkTopology objects other than "
			    "'default' are ignored");
		if (err)
			return tgi_errf(b->ei, err, "out of memory");
	}
	/* a Topology a pending gang names, else the first by name */
	for (i = 0; i < b->ngroups; i++) {
		kgroup *g = &b->groups[i];
		const kobj *t;

		if (!g->kai_topo || !g->nmembers || !g->ready)
			continue;
		t = find_obj(b, C_TOPOLOGY, G_KAI_TOPO, "", g->kai_topo);
		if (!t)
			t = find_obj(b, C_TOPOLOGY, G_KUEUE, "", g->kai_topo);
		if (!t) {
			err = gwarn(b, g, 0, "names Topology '%.100s', which "
				    "is not in the snapshot", g->kai_topo);
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
		err = warnf(b->k, "pending gangs name several Topologies; "
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

/* ---- nodes, the topology, allocations ---------------------------------- */

static int node_cmp(const void *a, const void *c)
{
	return tg_name_cmp((*(const kobj *const *)a)->name,
			   (*(const kobj *const *)c)->name);
}

static tg_err taint_effect(const char *s, int *out)
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

static tg_err node_core(bctx *b, const kobj *o, tg_err err, const char *what)
{
	if (!err)
		return TG_OK;
	if (err == TG_ENOMEM)
		return tgi_errf(b->ei, err, "out of memory");
	return oerr(b, o, NULL, err, "%s: %s", what, tg_strerror(err));
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

static tg_err add_node(bctx *b, const kobj *o, size_t *nopods)
{
	const cJSON *labels, *spec, *status, *alloc, *taints, *un, *c;
	const char *path[TG_MAX_LAYERS];
	char p[300];
	bool pods = false;
	tg_node_id id;
	unsigned i, j, ti = 0;
	tg_err err;

	err = obj_meta(b, o, &labels, NULL);
	if (!err)
		err = field(b, o, o->j, "", "spec", T_OBJ, &spec);
	if (!err)
		err = field(b, o, o->j, "", "status", T_OBJ, &status);
	if (!err)
		err = field(b, o, status, "status", "allocatable", T_OBJ,
			    &alloc);
	if (!err && !alloc)
		err = field(b, o, status, "status", "capacity", T_OBJ, &alloc);
	if (!err)
		err = field(b, o, spec, "spec", "taints", T_ARR, &taints);
	if (!err)
		err = field(b, o, spec, "spec", "unschedulable", T_BOOL, &un);
	if (err)
		return err;
	for (i = 0; i < b->nlevels; i++) {
		path[i] = NULL;
		for (j = 0; j < b->levels[i].nkeys && !path[i]; j++) {
			path[i] = jstr(labels, b->levels[i].keys[j]);
			if (path[i] && !*path[i])
				path[i] = NULL;
		}
	}
	err = tg_topology_add_node(b->t, o->name, b->nlevels ? path : NULL,
				   &id);
	if (err)
		return node_core(b, o, err, "cannot add the node");
	cJSON_ArrayForEach(c, labels) {
		if (strlen(c->string) > TG_MAX_NAME) {
			err = owarn(b, o, "label key '%.60s...' longer than %d "
				    "bytes; ignored", c->string, TG_MAX_NAME);
			if (err)
				return tgi_errf(b->ei, err, "out of memory");
			continue;
		}
		err = tg_topology_node_add_label(b->t, id, c->string,
						 c->valuestring);
		if (err)
			return node_core(b, o, err,
					 pjoin(p, sizeof(p), "metadata.labels",
					       c->string));
	}
	cJSON_ArrayForEach(c, alloc) {
		char tb[64];
		const char *txt = qty_text(c, tb, sizeof(tb));
		const char *apath = jget(status, "allocatable") ?
			"status.allocatable" : "status.capacity";
		uint32_t s;
		unsigned rid;
		int64_t q;

		pjoin(p, sizeof(p), apath, c->string);
		if (!txt || tg_k8s_quantity(txt, strcmp(c->string, "cpu") == 0,
					    &q) != TG_OK)
			return oerr(b, o, c, TG_EINVAL,
				    "%s: bad quantity '%.60s'", p,
				    txt ? txt : "(not a string)");
		if (strcmp(c->string, "nvidia.com/gpu") == 0) {
			unsigned n = q > TG_MAX_GPUS ? TG_MAX_GPUS :
						       (unsigned)q;

			if (q > TG_MAX_GPUS) {
				err = owarn(b, o, "%s: %lld GPUs; only %d are "
					    "tracked", p, (long long)q,
					    TG_MAX_GPUS);
				if (err)
					return tgi_errf(b->ei, err,
							"out of memory");
			}
			{
				const char *il = jstr(jget(jget(o->j,
					"metadata"), "labels"),
					TG_LABEL_NVLINK_ISLANDS);
				uint8_t isl[TG_MAX_GPUS];
				bool have = il && parse_islands(il, n, isl);

				if (il && !have) {
					err = owarn(b, o, "label %s: bad value "
						    "'%.60s' (want e.g. "
						    "0-3.4-7); one NVLink "
						    "island assumed",
						    TG_LABEL_NVLINK_ISLANDS,
						    il);
					if (err)
						return tgi_errf(b->ei, err,
							"out of memory");
				}
				err = tg_topology_node_set_gpus(b->t, id, n,
						have ? isl : NULL);
			}
			if (err)
				return node_core(b, o, err, p);
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
			return node_core(b, o, err, p);
	}
	if (!pods) {
		(*nopods)++;
		err = tg_topology_node_set_resource(b->t, id, TG_RES_PODS,
						    K8S_DEFAULT_PODS);
		if (err)
			return node_core(b, o, err, "pods");
	}
	if (un && cJSON_IsTrue(un)) {
		err = tg_topology_node_set_unschedulable(b->t, id, true);
		if (err)
			return node_core(b, o, err, "spec.unschedulable");
	}
	cJSON_ArrayForEach(c, taints) {
		const cJSON *k2, *v, *e;
		int eff;

		pidx(p, sizeof(p), "spec.taints", ti++);
		if (!cJSON_IsObject(c))
			return oerr(b, o, c, TG_EINVAL,
				    "%s: expected an object", p);
		err = field(b, o, c, p, "key", T_STR, &k2);
		if (!err)
			err = field(b, o, c, p, "value", T_STR, &v);
		if (!err)
			err = field(b, o, c, p, "effect", T_STR, &e);
		if (err)
			return err;
		if (!k2 || !*k2->valuestring || !e ||
		    taint_effect(e->valuestring, &eff) || eff < 0)
			return oerr(b, o, c, TG_EINVAL,
				    "%s: needs a key and an effect "
				    "(NoSchedule, PreferNoSchedule, "
				    "NoExecute)", p);
		err = tg_topology_node_add_taint(b->t, id, k2->valuestring,
						 v ? v->valuestring : NULL,
						 (tg_taint_effect)eff);
		if (err)
			return node_core(b, o, err, p);
	}
	return TG_OK;
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

	if (fail_msg(b, err, msg, sizeof(msg)))
		return err;
	added = *o->name && tg_topology_node_find(b->t, o->name, &id) == TG_OK;
	if (added) {
		err = tg_topology_node_set_unschedulable(b->t, id, true);
		if (err)
			return node_core(b, o, err, "unschedulable");
	}
	err = warnf(b->k, "%s; the node is left out%s", msg,
		    added ? " (it takes no new pod)" : "");
	return err ? tgi_errf(b->ei, err, "out of memory") : TG_OK;
}

static tg_err add_topology(bctx *b)
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
		err = warnf(b->k, "%zu node%s without status.allocatable.pods; "
			    "%d assumed", nopods, nopods == 1 ? "" : "s",
			    K8S_DEFAULT_PODS);
		if (err)
			return tgi_errf(b->ei, err, "out of memory");
	}
	err = tg_topology_build(b->t, b->ei);
	if (err)
		return err;
	for (l = 0; l < tg_topology_nwarnings(b->t); l++) {
		err = warnf(b->k, "%s", tg_topology_warning(b->t, l));
		if (err)
			return tgi_errf(b->ei, err, "out of memory");
	}
	return TG_OK;
}

/* The topology has the nodes: trees the loader owns can go. */
static void drop_node_trees(bctx *b)
{
	size_t i;

	for (i = b->first[C_NODE]; i < b->first[C_NODE + 1]; i++) {
		kobj *o = b->idx[i];

		if (o->own_tree) {
			cJSON_Delete(o->j);
			o->j = NULL;
			b->k->spent = true;
		}
	}
}

/*
 * PodDisruptionBudgets: how many of its pods may go now.  status.
 * disruptionsAllowed when the controller filled it in, else from
 * spec.maxUnavailable / spec.minAvailable over the running pods it
 * selects (percentages rounded up, as the disruption controller does).
 */
static tg_err pdb_allowed(bctx *b, const kobj *o, int64_t matched,
			  int64_t *allowed)
{
	const cJSON *spec = jget(o->j, "spec"), *st = jget(o->j, "status");
	const cJSON *v;
	int64_t n;
	bool max;

	v = jget(st, "disruptionsAllowed");
	if (v && num_int(v, &n) && n >= 0) {
		*allowed = n;
		return TG_OK;
	}
	v = jget(spec, "maxUnavailable");
	max = v && !cJSON_IsNull(v);
	if (!max)
		v = jget(spec, "minAvailable");
	if (!v || cJSON_IsNull(v)) {
		*allowed = matched;	/* neither: no limit on disruption */
		return TG_OK;
	}
	if (cJSON_IsString(v) && strlen(v->valuestring) > 1 &&
	    v->valuestring[strlen(v->valuestring) - 1] == '%') {
		char num[32];
		size_t l = strlen(v->valuestring) - 1;
		int64_t pct;

		if (l >= sizeof(num))
			goto bad;
		memcpy(num, v->valuestring, l);
		num[l] = '\0';
		if (!tgi_parse_i64(num, &pct) || pct < 0 || pct > 100)
			goto bad;
		n = (matched * pct + 99) / 100;
	} else if (!(num_int(v, &n) || (cJSON_IsString(v) &&
					 tgi_parse_i64(v->valuestring, &n))) ||
		   n < 0) {
		goto bad;
	}
	*allowed = max ? n : (matched - n > 0 ? matched - n : 0);
	return TG_OK;
bad:
	return oerr(b, o, v, TG_EINVAL, "spec.%s: expected an integer or a "
		    "percentage", max ? "maxUnavailable" : "minAvailable");
}

/* The budget (first PDB by name) each bound pod belongs to. */
static tg_err add_budgets(bctx *b, const char **budget)
{
	size_t i, j;
	tg_err err;

	for (i = b->first[C_PDB]; i < b->first[C_PDB + 1]; i++) {
		const kobj *o = b->idx[i];
		const cJSON *sel = jget(jget(o->j, "spec"), "selector");
		int64_t matched = 0, allowed = 0;
		bool m;

		for (j = 0; j < b->npods; j++) {
			kpod *p = &b->pods[j];

			if (p->state != S_BOUND || strcmp(p->o->ns, o->ns))
				continue;
			err = sel_match(b, o, sel, "spec.selector", p->labels,
					&m);
			if (err)
				return err;
			if (!m)
				continue;
			if (!p->terminating)
				matched++;
			if (!budget[j])
				budget[j] = o->name;
		}
		err = pdb_allowed(b, o, matched, &allowed);
		if (err)
			return err;
		{
			char nm[TG_MAX_NAME + 2];

			snprintf(nm, sizeof(nm), "%s/%s", o->ns, o->name);
			err = tg_topology_set_budget(b->t, nm, allowed);
			if (err)
				return tgi_errf(b->ei, err, "out of memory");
		}
	}
	return TG_OK;
}

/*
 * A pod's labels (a checked map of strings) as core labels; TG_ELIMIT
 * past TG_MAX_POD_LABELS.  The strings stay the tree's.
 */
static tg_err core_labels(const cJSON *labels, tg_label *out, unsigned *n)
{
	const cJSON *c;

	*n = 0;
	cJSON_ArrayForEach(c, labels) {
		if (!cJSON_IsString(c) || !c->string)
			continue;
		if (*n == TG_MAX_POD_LABELS)
			return TG_ELIMIT;
		out[*n].key = c->string;
		out[*n].value = c->valuestring;
		(*n)++;
	}
	return TG_OK;
}

static tg_err add_allocs(bctx *b)
{
	size_t i, nn = tg_topology_nnodes(b->t);
	uint64_t *used;
	uint8_t *nominee;
	const char **budget;
	tg_err err = TG_OK;

	used = tgi_calloc(nn ? nn : 1, sizeof(uint64_t));
	nominee = tgi_calloc(nn ? nn : 1, 1);
	budget = tgi_calloc(b->npods ? b->npods : 1, sizeof(char *));
	if (!used || !nominee || !budget) {
		tgi_free(used);
		tgi_free(nominee);
		tgi_free(budget);
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	}
	err = add_budgets(b, budget);
	/* nodes some pending pod is nominated to (after a preemption) */
	for (i = 0; i < b->npods && !err; i++) {
		tg_node_id n;

		if (b->pods[i].state == S_PENDING && b->pods[i].nominated &&
		    tg_topology_node_find(b->t, b->pods[i].nominated, &n) ==
		    TG_OK)
			nominee[n] = 1;
	}
	for (i = 0; i < b->npods && !err; i++) {
		kpod *p = &b->pods[i];
		const kgroup *g = NULL;
		char bname[TG_MAX_NAME + 2];
		tg_label lab[TG_MAX_POD_LABELS];
		tg_alloc_spec spec;
		tg_node_id n;
		int64_t want;
		unsigned gi, ng;

		if (p->state != S_BOUND)
			continue;
		if (tg_topology_node_find(b->t, p->node, &n) != TG_OK) {
			err = owarn(b, p->o, "bound to node '%.100s', which is "
				    "not in the snapshot; not counted",
				    p->node);
			if (err)
				err = tgi_errf(b->ei, err, "out of memory");
			continue;
		}
		if (p->group != SIZE_MAX)
			g = &b->groups[uf_find(b, p->group)];
		memset(&spec, 0, sizeof(spec));
		spec.pod = p->id;
		spec.gang = g ? g->name : NULL;
		spec.node = n;
		spec.shape = p->shape;
		spec.priority = p->prio;
		spec.preemptible = true;
		if (p->group != SIZE_MAX &&
		    b->groups[p->group].dialect == D_KAI)
			spec.preemptible = kai_pset(&b->groups[p->group]) ?
				b->groups[p->group].preemptible :
				p->prio < 100;
		if (p->terminating) {
			/* a victim on its way out: on a node promised to a
			 * nominee its resources are the nominee's already;
			 * elsewhere it still holds them, but is no victim */
			if (nominee[n])
				continue;
			spec.preemptible = false;
		}
		if (budget[i]) {
			snprintf(bname, sizeof(bname), "%s/%s", p->o->ns,
				 budget[i]);
			spec.budget = bname;
		}
		/* what spreads and pod affinity selectors count; not a pod
		 * on its way out (kube-scheduler skips those too) */
		if (!p->terminating) {
			if (core_labels(p->labels, lab, &spec.nlabels)) {
				err = owarn(b, p->o, "more than %d labels; "
					    "not counted by label selectors",
					    TG_MAX_POD_LABELS);
				if (err)
					break;
				spec.nlabels = 0;
			}
			spec.ns = p->o->ns;
			spec.labels = lab;
		}
		/* GPU indices are not in the API: lowest free ones */
		want = p->shape->v[TG_RES_GPU];
		ng = tg_topology_node_ngpus(b->t, n);
		for (gi = 0; gi < ng && gi < TG_MAX_GPUS && want > 0; gi++) {
			if (!(used[n] & (1ull << gi))) {
				spec.gpus |= 1ull << gi;
				want--;
			}
		}
		used[n] |= spec.gpus;
		err = tg_topology_add_alloc(b->t, &spec);
		if (err) {
			err = node_core(b, p->o, err, "cannot record the pod");
			break;
		}
		p->allocated = true;
		b->bound[b->nbound++] = p;
	}
	/* nominations hold their nodes for their gang (a reservation) */
	for (i = 0; i < b->npods && !err; i++) {
		kpod *p = &b->pods[i];
		tg_alloc_spec spec;
		tg_node_id n;

		if (p->state != S_PENDING || !p->nominated ||
		    p->group == SIZE_MAX)
			continue;
		if (tg_topology_node_find(b->t, p->nominated, &n) != TG_OK) {
			err = owarn(b, p->o, "nominated to node '%.100s', "
				    "which is not in the snapshot; ignored",
				    p->nominated);
			if (err)
				err = tgi_errf(b->ei, err, "out of memory");
			continue;
		}
		memset(&spec, 0, sizeof(spec));
		spec.pod = p->id;
		spec.gang = b->groups[uf_find(b, p->group)].name;
		spec.node = n;
		spec.shape = p->shape;
		spec.priority = p->prio;
		spec.preemptible = true;
		spec.nominated = true;
		err = tg_topology_add_alloc(b->t, &spec);
		if (err)
			err = node_core(b, p->o, err, "cannot record the "
					"nomination");
	}
	tgi_free(used);
	tgi_free(nominee);
	tgi_free(budget);
	return err;
}

/* ---- gangs ------------------------------------------------------------- */

/* A core setter's error: ELIMIT skips the gang (b->limited says why). */
typedef struct gctx {
	bctx *b;
	kgroup *g;
	tg_gang *gang;
	kpod **m;		/* members in member order */
	size_t nm;
	char limited[200];	/* set when a core limit was hit */
	unsigned warned;	/* per pod set */
} gctx;

enum { PW_MATCHFIELDS = 1, PW_PREFNODE = 2, PW_PREFPOD = 4, PW_OWNANTI = 8,
       PW_OWNAFF = 16, PW_NSSEL = 32, PW_EMPTYTOL = 64 };

static tg_err gcore(gctx *c, const kobj *o, tg_err err, const char *what)
{
	if (!err)
		return TG_OK;
	if (err == TG_ENOMEM)
		return tgi_errf(c->b->ei, err, "out of memory");
	if (err == TG_ELIMIT) {
		snprintf(c->limited, sizeof(c->limited), "%.190s", what);
		return err;
	}
	return oerr(c->b, o, NULL, err, "%s: %s", what, tg_strerror(err));
}

static tg_err pwarn(gctx *c, const kobj *o, unsigned bit, const char *msg)
{
	tg_err err;

	if (c->warned & bit)
		return TG_OK;
	c->warned |= bit;
	err = owarn(c->b, o, "%s", msg);
	return err ? tgi_errf(c->b->ei, err, "out of memory") : TG_OK;
}

static tg_err strings(bctx *b, const kobj *o, const cJSON *arr,
		      const char *path, const char ***out, unsigned *n)
{
	const cJSON *v;
	unsigned i = 0, cnt = (unsigned)cJSON_GetArraySize(arr);

	*out = tgi_calloc(cnt ? cnt : 1, sizeof(char *));
	*n = 0;
	if (!*out)
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	cJSON_ArrayForEach(v, arr) {
		if (!cJSON_IsString(v)) {
			tgi_free(*out);
			*out = NULL;
			return oerr(b, o, v, TG_EINVAL,
				    "%s: expected strings", path);
		}
		(*out)[i++] = v->valuestring;
	}
	*n = i;
	return TG_OK;
}

static tg_err node_affinity(gctx *c, unsigned ps, const kpod *p,
			    const cJSON *na)
{
	bctx *b = c->b;
	const kobj *o = p->o;
	const char *base = "spec.affinity.nodeAffinity";
	const cJSON *req, *terms, *pref, *t;
	char path[300], q[300];
	unsigned ti = 0, term = 0;
	tg_err err;

	err = field(b, o, na, base,
		    "requiredDuringSchedulingIgnoredDuringExecution", T_OBJ,
		    &req);
	if (!err)
		err = field(b, o, na, base,
			    "preferredDuringSchedulingIgnoredDuringExecution",
			    T_ARR, &pref);
	if (err)
		return err;
	if (cJSON_GetArraySize(pref) > 0) {
		err = pwarn(c, o, PW_PREFNODE, "preferred node affinity is "
			    "not modeled; ignored");
		if (err)
			return err;
	}
	pjoin(q, sizeof(q), base,
	      "requiredDuringSchedulingIgnoredDuringExecution");
	err = field(b, o, req, q, "nodeSelectorTerms", T_ARR, &terms);
	if (err)
		return err;
	cJSON_ArrayForEach(t, terms) {
		const cJSON *me, *mf, *e;
		unsigned ei = 0, added = 0;

		pidx(path, sizeof(path), "spec.affinity.nodeAffinity."
		     "requiredDuringSchedulingIgnoredDuringExecution."
		     "nodeSelectorTerms", ti++);
		if (!cJSON_IsObject(t))
			return oerr(b, o, t, TG_EINVAL,
				    "%s: expected an object", path);
		err = field(b, o, t, path, "matchExpressions", T_ARR, &me);
		if (!err)
			err = field(b, o, t, path, "matchFields", T_ARR, &mf);
		if (err)
			return err;
		if (cJSON_GetArraySize(mf) > 0) {
			err = pwarn(c, o, PW_MATCHFIELDS, "node affinity "
				    "matchFields are not modeled; ignored");
			if (err)
				return err;
		}
		cJSON_ArrayForEach(e, me) {
			static const char *const ops[] = { "In", "NotIn",
				"Exists", "DoesNotExist", "Gt", "Lt" };
			const cJSON *key, *op, *vals;
			tg_label_expr x;
			const char **v = NULL;
			unsigned nv = 0, k2;
			int64_t dummy;

			snprintf(q, sizeof(q), "%.250s.matchExpressions[%u]",
				 path, ei++);
			if (!cJSON_IsObject(e))
				return oerr(b, o, e, TG_EINVAL,
					    "%s: expected an object", q);
			err = field(b, o, e, q, "key", T_STR, &key);
			if (!err)
				err = field(b, o, e, q, "operator", T_STR, &op);
			if (!err)
				err = field(b, o, e, q, "values", T_ARR, &vals);
			if (err)
				return err;
			if (!key || !*key->valuestring || !op)
				return oerr(b, o, e, TG_EINVAL,
					    "%s: needs a key and an operator",
					    q);
			for (k2 = 0; k2 < 6; k2++)
				if (strcmp(op->valuestring, ops[k2]) == 0)
					break;
			if (k2 == 6)
				return oerr(b, o, op, TG_EINVAL,
					    "%s.operator: unknown operator "
					    "'%.40s'", q, op->valuestring);
			err = strings(b, o, vals, q, &v, &nv);
			if (err)
				return err;
			if (((k2 == TG_SEL_IN || k2 == TG_SEL_NOT_IN) &&
			     nv == 0) ||
			    ((k2 == TG_SEL_EXISTS ||
			      k2 == TG_SEL_DOES_NOT_EXIST) && nv != 0) ||
			    ((k2 == TG_SEL_GT || k2 == TG_SEL_LT) &&
			     (nv != 1 || !tgi_parse_i64(v[0], &dummy)))) {
				tgi_free(v);
				return oerr(b, o, e, TG_EINVAL,
					    "%s.values: wrong values for "
					    "operator %s", q, ops[k2]);
			}
			x.key = key->valuestring;
			x.op = (tg_sel_op)k2;
			x.values = v;
			x.nvalues = nv;
			err = tg_gang_podset_add_affinity_expr(c->gang, ps,
							       term, &x);
			tgi_free(v);
			if (err)
				return gcore(c, o, err, q);
			added++;
		}
		if (added)
			term++;
	}
	return TG_OK;
}

static tg_err tolerations(gctx *c, unsigned ps, const kpod *p)
{
	bctx *b = c->b;
	const kobj *o = p->o;
	const cJSON *list, *t;
	char path[300];
	unsigned i = 0;
	tg_err err;

	err = field(b, o, p->spec, "spec", "tolerations", T_ARR, &list);
	if (err)
		return err;
	cJSON_ArrayForEach(t, list) {
		const cJSON *key, *op, *val, *eff;
		bool exists;
		int effect;

		pidx(path, sizeof(path), "spec.tolerations", i++);
		if (!cJSON_IsObject(t))
			return oerr(b, o, t, TG_EINVAL,
				    "%s: expected an object", path);
		err = field(b, o, t, path, "key", T_STR, &key);
		if (!err)
			err = field(b, o, t, path, "operator", T_STR, &op);
		if (!err)
			err = field(b, o, t, path, "value", T_STR, &val);
		if (!err)
			err = field(b, o, t, path, "effect", T_STR, &eff);
		if (err)
			return err;
		if (op && *op->valuestring &&
		    strcmp(op->valuestring, "Equal") != 0 &&
		    strcmp(op->valuestring, "Exists") != 0)
			return oerr(b, o, op, TG_EINVAL,
				    "%s.operator: unknown operator '%.40s'",
				    path, op->valuestring);
		exists = op && strcmp(op->valuestring, "Exists") == 0;
		if (taint_effect(eff ? eff->valuestring : "", &effect))
			return oerr(b, o, eff, TG_EINVAL,
				    "%s.effect: unknown effect '%.40s'", path,
				    eff->valuestring);
		if ((!key || !*key->valuestring) && !exists) {
			err = pwarn(c, o, PW_EMPTYTOL, "a toleration with an "
				    "empty key needs operator Exists; ignored");
			if (err)
				return err;
			continue;
		}
		err = tg_gang_podset_add_toleration(
			c->gang, ps, key && *key->valuestring ?
			key->valuestring : NULL, exists,
			exists || !val ? NULL : val->valuestring, effect);
		if (err)
			return gcore(c, o, err, path);
	}
	return TG_OK;
}

/*
 * The labels of namespace \p ns: its Namespace object's, else (no such
 * object in the snapshot, with a warning once) the one label the API
 * server gives every namespace, kubernetes.io/metadata.name.  NULL only
 * when out of memory.
 */
static const cJSON *ns_labels(bctx *b, const char *ns)
{
	const kobj *o = find_obj(b, C_NAMESPACE, "", "", ns);
	cJSON *l;
	uint32_t id;

	if (o)
		return jget(jget(o->j, "metadata"), "labels");
	id = tgi_strtab_find(&b->nsnames, ns);
	if (id && id <= b->nnslabels)
		return b->nslabels[id - 1];
	l = cJSON_CreateObject();
	if (!l || !cJSON_AddStringToObject(l, "kubernetes.io/metadata.name",
					   ns) ||
	    tgi_grow(&b->nslabels, &b->capnslabels, b->nnslabels + 1,
		     sizeof(cJSON *)) ||
	    tgi_strtab_intern(&b->nsnames, ns, &id) ||
	    id != b->nnslabels + 1) {
		cJSON_Delete(l);
		return NULL;
	}
	b->nslabels[b->nnslabels++] = l;
	if (warnf(b->k, "Namespace %s is not in the snapshot: a "
		  "namespaceSelector sees only its label "
		  "kubernetes.io/metadata.name", ns))
		return NULL;
	return l;
}

/*
 * Whether a term's namespaces take in \p cand for a pod in \p own, as
 * kube-scheduler reads them: those listed plus those whose labels match
 * namespaceSelector; {} is every namespace; neither: the pod's own.
 * The selector was checked (sel_match) before.
 */
static bool ns_ok(bctx *b, const kobj *o, const cJSON *nslist,
		  const cJSON *nssel, const char *own, const char *cand)
{
	const cJSON *v;
	bool m = false;

	if (cJSON_IsObject(nssel) && !nssel->child)
		return true;	/* {} selects every namespace */
	cJSON_ArrayForEach(v, nslist)
		if (cJSON_IsString(v) && strcmp(v->valuestring, cand) == 0)
			return true;
	if (cJSON_IsObject(nssel)) {
		const cJSON *l = ns_labels(b, cand);

		return l && sel_match(b, o, nssel, "namespaceSelector", l,
				      &m) == TG_OK && m;
	}
	return cJSON_GetArraySize(nslist) == 0 && strcmp(own, cand) == 0;
}

/* Indexes the bound pods by label, for selectors with matchLabels. */
static tg_err lbl_index(bctx *b)
{
	size_t i;

	b->lbl_built = true;
	for (i = 0; i < b->nbound; i++) {
		const cJSON *c;

		cJSON_ArrayForEach(c, b->bound[i]->labels) {
			char key[1024];
			struct lblent *e;
			uint32_t id;
			int n = snprintf(key, sizeof(key), "%s\x1f%s",
					 c->string, c->valuestring);

			if (n < 0 || (size_t)n >= sizeof(key))
				continue;	/* never matched by the index */
			if (tgi_strtab_intern(&b->lblkeys, key, &id))
				return TG_ENOMEM;
			if (id > b->nlbl) {
				if (tgi_grow(&b->lbl, &b->caplbl, id,
					     sizeof(*b->lbl)))
					return TG_ENOMEM;
				memset(&b->lbl[b->nlbl], 0,
				       (id - b->nlbl) * sizeof(*b->lbl));
				b->nlbl = id;
			}
			e = &b->lbl[id - 1];
			if (tgi_grow(&e->pods, &e->cap, e->n + 1,
				     sizeof(uint32_t)))
				return TG_ENOMEM;
			e->pods[e->n++] = (uint32_t)i;
		}
	}
	return TG_OK;
}

/*
 * The candidates among the bound pods for a selector: those carrying its
 * rarest matchLabels pair, or all (*all) when it has none.
 */
static tg_err lbl_candidates(bctx *b, const cJSON *sel, const uint32_t **c,
			     size_t *n, bool *all)
{
	const cJSON *ml = jget(sel, "matchLabels"), *e;
	tg_err err;

	*all = true;
	*c = NULL;
	*n = 0;
	if (!cJSON_IsObject(ml) || !ml->child)
		return TG_OK;
	if (!b->lbl_built && (err = lbl_index(b)) != TG_OK)
		return err;
	cJSON_ArrayForEach(e, ml) {
		char key[1024];
		uint32_t id;
		int len;

		if (!cJSON_IsString(e))
			continue;
		len = snprintf(key, sizeof(key), "%s\x1f%s", e->string,
			       e->valuestring);
		if (len < 0 || (size_t)len >= sizeof(key))
			continue;
		id = tgi_strtab_find(&b->lblkeys, key);
		if (!id || id > b->nlbl) {
			*all = false;	/* nobody carries it */
			*c = NULL;
			*n = 0;
			return TG_OK;
		}
		if (*all || b->lbl[id - 1].n < *n) {
			*all = false;
			*c = b->lbl[id - 1].pods;
			*n = b->lbl[id - 1].n;
		}
	}
	return TG_OK;
}

/*
 * Appends to \p names the pending pods of other gangs a term selects:
 * those placed earlier in the same pass are allocations by then
 * (tg_decision_apply()), and count as kube-scheduler's assumed pods do.
 */
static tg_err aff_pending(bctx *b, const kobj *o, const cJSON *nsl,
			  const cJSON *nss, const cJSON *sel, const char *q,
			  const char **names, unsigned *nn)
{
	size_t i;
	bool m;
	tg_err err;

	if (!b->pend_built) {
		b->pend_built = true;
		b->pend = tgi_calloc(b->npods + 1, sizeof(kpod *));
		if (!b->pend)
			return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
		for (i = 0; i < b->npods; i++)
			if (b->pods[i].state == S_PENDING && !b->pods[i].other)
				b->pend[b->npend++] = &b->pods[i];
	}
	for (i = 0; i < b->npend; i++) {
		const kpod *pp = b->pend[i];

		if (pp->building || !ns_ok(b, o, nsl, nss, o->ns, pp->o->ns))
			continue;
		err = sel_match(b, o, sel, q, pp->labels, &m);
		if (err)
			return err;
		if (m)
			names[(*nn)++] = pp->id;
	}
	return TG_OK;
}

/*
 * The bound pods a pod (anti-)affinity term selects, as names, then the
 * pending ones of other gangs (not cached).  Pods of
 * one template repeat the same terms: results are cached by the term's
 * text and the pod's namespace, K8S_MAX_AFF_CACHE indices in all.
 */
static tg_err aff_bound(bctx *b, const cJSON *term, const kobj *o,
			const cJSON *nsl, const cJSON *nss, const cJSON *sel,
			const char *q, const char **names, unsigned *nn)
{
	char *txt = cJSON_PrintUnformatted(term), *key;
	const uint32_t *cand;
	size_t len, i, ncand;
	uint32_t id, *idx;
	bool m, all;
	tg_err err;

	*nn = 0;
	if (!txt)
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	len = strlen(txt) + strlen(o->ns) + 2;
	key = tgi_malloc(len);
	if (!key) {
		cJSON_free(txt);
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	}
	snprintf(key, len, "%s\x1f%s", txt, o->ns);
	cJSON_free(txt);
	id = tgi_strtab_find(&b->affkeys, key);
	if (id && id <= b->naff) {
		const struct affent *e = &b->aff[id - 1];

		for (i = 0; i < e->n; i++)
			names[(*nn)++] = b->bound[e->pods[i]]->id;
		tgi_free(key);
		return aff_pending(b, o, nsl, nss, sel, q, names, nn);
	}
	err = lbl_candidates(b, sel, &cand, &ncand, &all);
	if (err) {
		tgi_free(key);
		return tgi_errf(b->ei, err, "out of memory");
	}
	for (i = 0; i < (all ? b->nbound : ncand); i++) {
		const kpod *bp = b->bound[all ? i : cand[i]];

		if (!ns_ok(b, o, nsl, nss, o->ns, bp->o->ns))
			continue;
		err = sel_match(b, o, sel, q, bp->labels, &m);
		if (err) {
			tgi_free(key);
			return err;
		}
		if (m)
			names[(*nn)++] = bp->id;
	}
	if (b->affcells + *nn > K8S_MAX_AFF_CACHE) {
		tgi_free(key);
		/* not kept: evaluated again next time */
		return aff_pending(b, o, nsl, nss, sel, q, names, nn);
	}
	idx = tgi_calloc(*nn ? *nn : 1, sizeof(uint32_t));
	if (!idx || tgi_grow(&b->aff, &b->capaff, b->naff + 1,
			     sizeof(*b->aff)) ||
	    tgi_strtab_intern(&b->affkeys, key, &id)) {
		tgi_free(idx);
		tgi_free(key);
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	}
	tgi_free(key);
	if (id != b->naff + 1) {	/* ids are dense; never happens */
		tgi_free(idx);
		return TG_OK;
	}
	for (i = 0, len = 0; i < b->nbound && len < *nn; i++)
		if (b->bound[i]->id == names[len])
			idx[len++] = (uint32_t)i;
	b->aff[b->naff].pods = idx;
	b->aff[b->naff].n = *nn;
	b->naff++;
	b->affcells += *nn;
	return aff_pending(b, o, nsl, nss, sel, q, names, nn);
}

static tg_err pod_affinity(gctx *c, unsigned ps, const kpod *p,
			   const cJSON *aff, bool anti)
{
	bctx *b = c->b;
	const kobj *o = p->o;
	const char *kind = anti ? "podAntiAffinity" : "podAffinity";
	const cJSON *pa, *req, *pref, *t;
	const char **names = NULL;
	char base[300], path[300], q[300];
	unsigned ti = 0;
	tg_err err;

	pjoin(base, sizeof(base), "spec.affinity", kind);
	err = field(b, o, aff, "spec.affinity", kind, T_OBJ, &pa);
	if (!err)
		err = field(b, o, pa, base,
			    "requiredDuringSchedulingIgnoredDuringExecution",
			    T_ARR, &req);
	if (!err)
		err = field(b, o, pa, base,
			    "preferredDuringSchedulingIgnoredDuringExecution",
			    T_ARR, &pref);
	if (err)
		return err;
	if (cJSON_GetArraySize(pref) > 0) {
		err = pwarn(c, o, PW_PREFPOD, "preferred pod (anti-)affinity "
			    "is not modeled; ignored");
		if (err)
			return err;
	}
	if (!req)
		return TG_OK;
	names = tgi_calloc(b->nbound + b->npods + 1, sizeof(char *));
	if (!names)
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	cJSON_ArrayForEach(t, req) {
		const cJSON *tk, *sel, *nsl, *nss, *v;
		bool self = false, other = false, m;
		unsigned nn = 0;
		size_t i;

		snprintf(path, sizeof(path), "%.200s.requiredDuringScheduling"
			 "IgnoredDuringExecution[%u]", base, ti++);
		if (!cJSON_IsObject(t)) {
			err = oerr(b, o, t, TG_EINVAL,
				   "%s: expected an object", path);
			break;
		}
		err = field(b, o, t, path, "topologyKey", T_STR, &tk);
		if (!err)
			err = field(b, o, t, path, "namespaces", T_ARR, &nsl);
		if (!err)
			err = field(b, o, t, path, "namespaceSelector", T_OBJ,
				    &nss);
		if (err)
			break;
		if (!tk || !*tk->valuestring) {
			err = oerr(b, o, t, TG_EINVAL,
				   "%s.topologyKey: missing", path);
			break;
		}
		cJSON_ArrayForEach(v, nsl) {
			if (!cJSON_IsString(v)) {
				err = oerr(b, o, v, TG_EINVAL,
					   "%s.namespaces: expected strings",
					   path);
				break;
			}
		}
		if (err)
			break;
		if (nss && nss->child) {
			pjoin(q, sizeof(q), path, "namespaceSelector");
			err = sel_match(b, o, nss, q, NULL, &m);
			if (err)
				break;
		}
		sel = jget(t, "labelSelector");
		pjoin(q, sizeof(q), path, "labelSelector");
		err = sel_match(b, o, sel, q, p->labels, &self);
		if (err)
			break;
		for (i = 0; i < c->nm && !self && !other; i++) {
			if (c->m[i] == p ||
			    !ns_ok(b, o, nsl, nss, o->ns, c->m[i]->o->ns))
				continue;
			err = sel_match(b, o, sel, q, c->m[i]->labels, &m);
			if (err)
				break;
			other = m;
		}
		if (err)
			break;
		err = aff_bound(b, t, o, nsl, nss, sel, q, names, &nn);
		if (err)
			break;
		if (anti && (self || other)) {
			if (self && strcmp(tk->valuestring, K_HOSTNAME) == 0)
				err = gcore(c, o,
					    tg_gang_podset_set_max_per_node(
						    c->gang, ps, 1), path);
			else
				err = pwarn(c, o, PW_OWNANTI,
					    "anti-affinity among the gang's "
					    "own pods is only modeled per "
					    "node; ignored");
			if (err)
				break;
		}
		if (!anti && !nn && (self || other)) {
			/* co-location with its own members: one domain */
			if (is_level(b, tk->valuestring))
				err = req_add(b, c->g, o, tk, R_GATHER,
					      tk->valuestring, TG_GATHER_MUST,
					      0, false);
			else
				err = pwarn(c, o, PW_OWNAFF,
					    "affinity among the gang's own "
					    "pods over a key that is not a "
					    "topology level; ignored");
			if (err)
				break;
			continue;
		}
		if (nn || !anti) {
			err = tg_gang_podset_add_pod_affinity(
				c->gang, ps, tk->valuestring, anti, names, nn);
			if (err) {
				err = gcore(c, o, err, path);
				break;
			}
		}
	}
	tgi_free(names);
	return err;
}

/* A pod's required pod anti-affinity terms (a non-empty list) or NULL. */
static const cJSON *anti_terms(const kpod *x)
{
	const cJSON *a = x->own_anti ? x->own_anti :
			 jget(jget(x->spec, "affinity"), "podAntiAffinity");
	const cJSON *r = jget(a,
			      "requiredDuringSchedulingIgnoredDuringExecution");

	return cJSON_IsArray(r) && r->child ? r : NULL;
}

/*
 * Whether \p x's anti-affinity term \p t selects pod \p p (its
 * namespaces, then its label selector).  A term kube-apiserver would
 * have refused selects nothing, with a warning.
 */
static tg_err term_selects(bctx *b, const kpod *x, const cJSON *t,
			   const kpod *p, bool *m)
{
	tg_err err;

	*m = false;
	if (!cJSON_IsObject(t) || !cJSON_IsString(jget(t, "topologyKey")) ||
	    !ns_ok(b, x->o, jget(t, "namespaces"),
		   jget(t, "namespaceSelector"), x->o->ns, p->o->ns))
		return TG_OK;
	err = sel_match(b, x->o, jget(t, "labelSelector"),
			"spec.affinity.podAntiAffinity.labelSelector",
			p->labels, m);
	if (err == TG_ENOMEM)
		return err;
	if (err) {
		*m = false;
		return owarn(b, x->o, "%s; the term is not counted",
			     b->ei ? b->ei->msg : "bad label selector");
	}
	return TG_OK;
}

/* The pods whose required anti-affinity may keep others away: running
 * ones, and pending ones of ours (once placed earlier in the pass). */
static tg_err anti_index(bctx *b)
{
	size_t i;

	b->anti_built = true;
	b->anti = tgi_calloc(b->npods + 1, sizeof(*b->anti));
	if (!b->anti)
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	for (i = 0; i < b->npods; i++) {
		const kpod *x = &b->pods[i];
		const cJSON *t;

		if ((x->allocated || (x->state == S_PENDING && !x->other)) &&
		    (t = anti_terms(x))) {
			b->anti[b->nanti].x = x;
			b->anti[b->nanti++].terms = t;
		}
	}
	return TG_OK;
}

/*
 * The symmetric rule (kube-scheduler's "existing pods' anti-affinity"):
 * a pod whose required anti-affinity term selects \p p keeps the pod set
 * out of the term's topology domain holding it.  Added as anti-affinity
 * to named pods, one term per topology key; a pod the pod set's own
 * term over the same key already selects is left to that term.
 */
static tg_err anti_symmetric(gctx *c, unsigned ps, const kpod *p)
{
	bctx *b = c->b;
	const cJSON *own = anti_terms(p), *t, *u;
	const char *keys[TG_MAX_TERMS], **names[TG_MAX_TERMS];
	unsigned nk = 0, n[TG_MAX_TERMS], k;
	size_t i;
	tg_err err = TG_OK;

	if (!b->anti_built && (err = anti_index(b)))
		return err;
	for (i = 0; i < b->nanti && !err; i++) {
		const kpod *x = b->anti[i].x;

		if (x->building)
			continue;	/* the gang's own: pod_affinity() */
		cJSON_ArrayForEach(t, b->anti[i].terms) {
			const char *tk;
			bool m, covered = false;

			if ((err = term_selects(b, x, t, p, &m)))
				break;
			if (!m)
				continue;
			tk = jstr(t, "topologyKey");
			cJSON_ArrayForEach(u, own) {
				if (!cJSON_IsObject(u) || !jstr(u, "topologyKey")
				    || strcmp(jstr(u, "topologyKey"), tk))
					continue;
				if ((err = term_selects(b, p, u, x, &covered)) ||
				    covered)
					break;
			}
			if (err || covered)
				continue;
			for (k = 0; k < nk && strcmp(keys[k], tk); k++)
				;
			if (k == nk) {
				if (nk == TG_MAX_TERMS) {
					snprintf(c->limited, sizeof(c->limited),
						 "anti-affinity of running pods "
						 "over more than %d topology "
						 "keys", TG_MAX_TERMS);
					err = TG_ELIMIT;
					break;
				}
				names[nk] = tgi_calloc(b->nanti, sizeof(char *));
				if (!names[nk]) {
					err = tgi_errf(b->ei, TG_ENOMEM,
						       "out of memory");
					break;
				}
				keys[nk] = tk;
				n[nk++] = 0;
			}
			if (!n[k] || names[k][n[k] - 1] != x->id)
				names[k][n[k]++] = x->id;
		}
	}
	for (k = 0; k < nk; k++) {
		if (!err)
			err = gcore(c, p->o, tg_gang_podset_add_pod_affinity(
					    c->gang, ps, keys[k], true,
					    names[k], n[k]),
				    "anti-affinity of running pods");
		tgi_free(names[k]);
	}
	return err;
}

/* A pod set's node constraints, from its first member. */
static tg_err podset_apply(gctx *c, unsigned ps, const kpod *p)
{
	bctx *b = c->b;
	const kobj *o = p->o;
	const cJSON *nsel, *aff, *na, *e;
	char path[300];
	tg_err err;

	c->warned = 0;
	err = field(b, o, p->spec, "spec", "nodeSelector", T_OBJ, &nsel);
	if (!err)
		err = check_strmap(b, o, nsel, "spec.nodeSelector");
	if (err)
		return err;
	cJSON_ArrayForEach(e, nsel) {
		err = tg_gang_podset_add_node_selector(c->gang, ps, e->string,
						       e->valuestring);
		if (err)
			return gcore(c, o, err,
				     pjoin(path, sizeof(path),
					   "spec.nodeSelector", e->string));
	}
	err = field(b, o, p->spec, "spec", "affinity", T_OBJ, &aff);
	if (!err)
		err = field(b, o, aff, "spec.affinity", "nodeAffinity", T_OBJ,
			    &na);
	if (!err && na)
		err = node_affinity(c, ps, p, na);
	if (!err)
		err = tolerations(c, ps, p);
	if (!err && aff)
		err = pod_affinity(c, ps, p, aff, false);
	if (!err && aff)
		err = pod_affinity(c, ps, p, aff, true);
	if (!err)
		err = anti_symmetric(c, ps, p);
	return err;
}

/* The pod-set signature: role, then the node constraints as JSON. */
static tg_err pod_sig(bctx *b, kpod *p)
{
	static const char *const keys[] = { "nodeSelector", "affinity",
					    "tolerations" };
	tgi_buf s;
	size_t i;

	tgi_buf_init(&s, 1u << 24);
	tgi_buf_adds(&s, p->role);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const cJSON *v = jget(p->spec, keys[i]);
		char *txt;

		tgi_buf_add(&s, "\x1e", 1);
		if (!v)
			continue;
		txt = cJSON_PrintUnformatted(v);
		if (!txt) {
			tgi_buf_free(&s);
			return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
		}
		tgi_buf_adds(&s, txt);
		cJSON_free(txt);
	}
	if (s.err == TG_ELIMIT) {
		tgi_buf_free(&s);
		return oerr(b, p->o, NULL, TG_ELIMIT,
			    "spec: node constraints longer than 16 MiB");
	}
	p->sig = tgi_buf_take(&s);
	return p->sig ? TG_OK : tgi_errf(b->ei, TG_ENOMEM, "out of memory");
}

static int member_cmp(const void *a, const void *c)
{
	const kpod *x = *(const kpod *const *)a;
	const kpod *y = *(const kpod *const *)c;
	int r;

	if ((x->index < 0) != (y->index < 0))
		return x->index < 0 ? 1 : -1;
	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	r = tg_name_cmp(x->o->name, y->o->name);
	return r ? r : strcmp(x->id, y->id);
}

typedef struct kps {
	kpod *first;
	unsigned count;
	unsigned id;		/* index in the tg_gang */
	char name[TG_MAX_NAME + 1];
} kps;

/* Maps a KAI alias to its node label. */
static const char *level_of(const bctx *b, const char *name)
{
	unsigned i;

	for (i = 0; i < b->nlevels; i++)
		if (b->levels[i].alias &&
		    strcmp(b->levels[i].alias, name) == 0)
			return b->levels[i].keys[0];
	return name;
}

static tg_err gang_reqs(gctx *c)
{
	bctx *b = c->b;
	const kobj *o = c->g->cr ? c->g->cr : c->m[0]->o;
	size_t i;
	tg_err err = TG_OK;

	for (i = 0; i < c->g->nreqs && !err; i++) {
		const kreq *r = &c->g->reqs[i];
		const char *layer = level_of(b, r->layer);
		char what[300];

		snprintf(what, sizeof(what), "topology request on '%.200s'",
			 layer);
		if (r->type == R_GATHER)
			err = tg_gang_set_gather(c->gang, layer,
						 (tg_gather)r->how);
		else if (r->type == R_SLICE)
			err = tg_gang_add_slice(c->gang, layer, r->size);
		else
			err = tg_gang_add_spread(c->gang, layer, r->size,
						 r->hard);
		err = gcore(c, o, err, what);
	}
	return err;
}

/* Member \p k of pod set \p ps: pod \p p's namespace and labels. */
static tg_err member_labels(gctx *c, unsigned ps, unsigned k, const kpod *p)
{
	tg_label lab[TG_MAX_POD_LABELS];
	unsigned n;
	tg_err err = core_labels(p->labels, lab, &n);

	if (err == TG_ELIMIT) {
		snprintf(c->limited, sizeof(c->limited), "metadata.labels: "
			 "more than %d labels", TG_MAX_POD_LABELS);
		return err;
	}
	return gcore(c, p->o, tg_gang_podset_set_member_labels(c->gang, ps,
			k, p->o->ns, lab, n), "metadata.labels");
}

/*
 * A label selector as core expressions: matchLabels as In, then
 * matchExpressions, then matchLabelKeys as In with the pod's own value
 * (a key the pod does not carry adds nothing, as kube-scheduler does).
 * The strings stay the tree's; vals is the caller's to free.
 */
typedef struct ksel {
	tg_label_expr e[TG_MAX_TERMS];
	const char **vals;
	unsigned n;
	bool selector;		/* false: nil, selects nothing */
} ksel;

static tg_err sel_exprs(bctx *b, const kobj *o, const cJSON *sel,
			const char *path, const cJSON *labels,
			const cJSON *mlk, ksel *out)
{
	const cJSON *c, *v;
	size_t nv = 0, iv = 0;
	bool m;
	tg_err err;

	memset(out, 0, sizeof(*out));
	err = sel_match(b, o, sel, path, labels, &m);	/* checks it */
	if (err)
		return err;
	out->selector = sel && cJSON_IsObject(sel);
	cJSON_ArrayForEach(c, jget(sel, "matchLabels"))
		nv++;
	cJSON_ArrayForEach(c, jget(sel, "matchExpressions"))
		nv += (size_t)cJSON_GetArraySize(jget(c, "values"));
	cJSON_ArrayForEach(c, mlk)
		nv++;
	out->vals = tgi_calloc(nv ? nv : 1, sizeof(char *));
	if (!out->vals)
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	cJSON_ArrayForEach(c, jget(sel, "matchLabels")) {
		if (out->n == TG_MAX_TERMS)
			return TG_ELIMIT;
		out->vals[iv] = c->valuestring;
		out->e[out->n++] = (tg_label_expr){ c->string, TG_SEL_IN,
						   &out->vals[iv++], 1 };
	}
	cJSON_ArrayForEach(c, jget(sel, "matchExpressions")) {
		const char *op = jstr(c, "operator");
		tg_label_expr *e;

		if (out->n == TG_MAX_TERMS)
			return TG_ELIMIT;
		e = &out->e[out->n++];
		e->key = jstr(c, "key");
		e->op = strcmp(op, "In") == 0 ? TG_SEL_IN :
			strcmp(op, "NotIn") == 0 ? TG_SEL_NOT_IN :
			strcmp(op, "Exists") == 0 ? TG_SEL_EXISTS :
			TG_SEL_DOES_NOT_EXIST;
		e->values = &out->vals[iv];
		e->nvalues = 0;
		cJSON_ArrayForEach(v, jget(c, "values")) {
			out->vals[iv++] = v->valuestring;
			e->nvalues++;
		}
		if ((e->op == TG_SEL_IN || e->op == TG_SEL_NOT_IN) &&
		    !e->nvalues)
			return oerr(b, o, c, TG_EINVAL, "%s.matchExpressions: "
				    "%s needs values", path, op);
	}
	cJSON_ArrayForEach(c, mlk) {
		const char *have;

		if (!cJSON_IsString(c))
			return oerr(b, o, c, TG_EINVAL, "%s: matchLabelKeys: "
				    "expected strings", path);
		if (!(have = jstr(labels, c->valuestring)))
			continue;
		if (out->n == TG_MAX_TERMS)
			return TG_ELIMIT;
		out->vals[iv] = have;
		out->e[out->n++] = (tg_label_expr){ c->valuestring, TG_SEL_IN,
						   &out->vals[iv++], 1 };
	}
	return TG_OK;
}

/* "Honor" or "Ignore" (absent: \p dflt) into *honor. */
static tg_err policy(bctx *b, const kobj *o, const cJSON *c, const char *path,
		     const char *key, bool dflt, bool *honor)
{
	const cJSON *v;
	char q[300];
	tg_err err = field(b, o, c, path, key, T_STR, &v);

	*honor = dflt;
	if (err || !v)
		return err;
	if (strcmp(v->valuestring, "Honor") != 0 &&
	    strcmp(v->valuestring, "Ignore") != 0)
		return oerr(b, o, v, TG_EINVAL, "%s: unknown value '%.40s' "
			    "(Honor or Ignore)", pjoin(q, sizeof(q), path,
						       key), v->valuestring);
	*honor = strcmp(v->valuestring, "Honor") == 0;
	return TG_OK;
}

/*
 * One topologySpreadConstraints entry of member \p p as a core spread;
 * an entry equal to one another member gave (\p seen) is added once.
 */
static tg_err spread_one(gctx *c, const kpod *p, const cJSON *e,
			 const char *path, tgi_strtab *seen)
{
	bctx *b = c->b;
	const kobj *o = p->o;
	const cJSON *key, *wu, *mlk;
	int64_t skew, mind;
	bool present, have_mind, honor_aff, honor_taints;
	char q[300];
	ksel ks;
	tgi_buf kb;
	tg_spread_spec sp;
	uint32_t id;
	unsigned i, j;
	tg_err err;

	if (!cJSON_IsObject(e))
		return oerr(b, o, e, TG_EINVAL, "%s: expected an object",
			    path);
	err = field_int(b, o, e, path, "maxSkew", 1, INT32_MAX, &present,
			&skew);
	if (!err)
		err = field(b, o, e, path, "topologyKey", T_STR, &key);
	if (!err)
		err = field(b, o, e, path, "whenUnsatisfiable", T_STR, &wu);
	if (!err)
		err = field_int(b, o, e, path, "minDomains", 1, INT32_MAX,
				&have_mind, &mind);
	if (!err)
		err = field(b, o, e, path, "matchLabelKeys", T_ARR, &mlk);
	if (!err)
		err = policy(b, o, e, path, "nodeAffinityPolicy", true,
			     &honor_aff);
	if (!err)
		err = policy(b, o, e, path, "nodeTaintsPolicy", false,
			     &honor_taints);
	if (err)
		return err;
	if (!present || !key || !*key->valuestring || !wu)
		return oerr(b, o, e, TG_EINVAL, "%s: needs maxSkew, "
			    "topologyKey and whenUnsatisfiable", path);
	if (strcmp(wu->valuestring, "DoNotSchedule") != 0 &&
	    strcmp(wu->valuestring, "ScheduleAnyway") != 0)
		return oerr(b, o, wu, TG_EINVAL, "%s.whenUnsatisfiable: "
			    "unknown value '%.40s'", path, wu->valuestring);
	memset(&sp, 0, sizeof(sp));
	sp.hard = strcmp(wu->valuestring, "DoNotSchedule") == 0;
	if (have_mind && !sp.hard)
		return oerr(b, o, e, TG_EINVAL, "%s.minDomains: only with "
			    "whenUnsatisfiable DoNotSchedule", path);
	err = sel_exprs(b, o, jget(e, "labelSelector"),
			pjoin(q, sizeof(q), path, "labelSelector"), p->labels,
			mlk, &ks);
	if (err == TG_ELIMIT) {
		tgi_free(ks.vals);
		snprintf(c->limited, sizeof(c->limited), "%.150s: more than "
			 "%d selector expressions", path, TG_MAX_TERMS);
		return err;
	}
	if (err) {
		tgi_free(ks.vals);
		return err;
	}
	sp.layer = level_of(b, key->valuestring);
	sp.max_skew = (unsigned)skew;
	sp.min_domains = have_mind ? (unsigned)mind : 0;
	sp.ignore_node_affinity = !honor_aff;
	sp.honor_taints = honor_taints;
	sp.ns = o->ns;
	sp.selector = ks.selector;
	sp.exprs = ks.e;
	sp.nexprs = ks.n;
	/* the same constraint from another member: once */
	tgi_buf_init(&kb, 1u << 20);
	tgi_buf_addf(&kb, "%s\x1f%u\x1f%d\x1f%u\x1f%d%d%d", sp.layer,
		     sp.max_skew, sp.hard, sp.min_domains,
		     sp.ignore_node_affinity, sp.honor_taints, sp.selector);
	for (i = 0; i < ks.n; i++) {
		tgi_buf_addf(&kb, "\x1e%s\x1f%d", ks.e[i].key, ks.e[i].op);
		for (j = 0; j < ks.e[i].nvalues; j++)
			tgi_buf_addf(&kb, "\x1f%s", ks.e[i].values[j]);
	}
	/* a key too long to keep: added anyway (the core's bounds say) */
	err = kb.err == TG_ENOMEM ? TG_ENOMEM : TG_OK;
	if (!err && (kb.err || !tgi_strtab_find(seen, kb.s ? kb.s : ""))) {
		char what[400];

		if (!kb.err)
			err = tgi_strtab_intern(seen, kb.s ? kb.s : "", &id);
		snprintf(what, sizeof(what), "%.200s (at most %d spreads a "
			 "gang, 256 values an expression)", path,
			 TG_MAX_SPREADS);
		if (!err)
			err = gcore(c, o, tg_gang_add_spread_spec(c->gang, &sp),
				    what);
	}
	tgi_buf_free(&kb);
	tgi_free(ks.vals);
	if (err == TG_ENOMEM)
		return tgi_errf(b->ei, err, "out of memory");
	return err;
}

/* topologySpreadConstraints of every member, each distinct one once. */
static tg_err spread_reqs(gctx *c)
{
	tgi_strtab seen;
	size_t m;
	tg_err err = TG_OK;

	tgi_strtab_init(&seen);
	for (m = 0; m < c->nm && !err; m++) {
		const kpod *p = c->m[m];
		const cJSON *list, *e;
		char path[300];
		unsigned i = 0;

		err = field(c->b, p->o, p->spec, "spec",
			    "topologySpreadConstraints", T_ARR, &list);
		cJSON_ArrayForEach(e, list) {
			if (err)
				break;
			pidx(path, sizeof(path),
			     "spec.topologySpreadConstraints", i++);
			err = spread_one(c, p, e, path, &seen);
		}
	}
	tgi_strtab_free(&seen);
	return err;
}

static tg_err gang_build(bctx *b, kgroup *g)
{
	gctx c;
	kps *sets = NULL;
	size_t nsets = 0, i, j;
	tg_err err = TG_OK;

	memset(&c, 0, sizeof(c));
	c.b = b;
	c.g = g;
	c.nm = g->nmembers;
	c.m = tgi_calloc(c.nm, sizeof(kpod *));
	sets = tgi_calloc(TG_MAX_PODSETS + 1, sizeof(kps));
	if (!c.m || !sets) {
		err = tgi_errf(b->ei, TG_ENOMEM, "out of memory");
		goto out;
	}
	if (c.nm > TG_MAX_MEMBERS) {
		snprintf(c.limited, sizeof(c.limited), "more than %u members",
			 TG_MAX_MEMBERS);
		err = TG_ELIMIT;
		goto out;
	}
	for (i = 0; i < c.nm; i++) {
		c.m[i] = &b->pods[g->members[i]];
		err = pod_sig(b, c.m[i]);
		if (err)
			goto out;
	}
	qsort(c.m, c.nm, sizeof(kpod *), member_cmp);
	for (i = 0; i < c.nm; i++)
		c.m[i]->building = true;	/* not "other" pods */
	/* pod sets: same role, shape and node constraints */
	for (i = 0; i < c.nm; i++) {
		kpod *p = c.m[i];

		for (j = 0; j < nsets; j++) {
			const kpod *f = sets[j].first;

			if (strcmp(f->sig, p->sig) == 0 &&
			    f->shape == p->shape)
				break;
		}
		if (j == nsets) {
			if (nsets == TG_MAX_PODSETS) {
				snprintf(c.limited, sizeof(c.limited),
					 "more than %d pod sets (distinct "
					 "shapes or constraints)",
					 TG_MAX_PODSETS);
				err = TG_ELIMIT;
				goto out;
			}
			sets[nsets++].first = p;
		}
		sets[j].count++;
	}
	/* the leader's set first, then by first member; names unique */
	for (i = 1; i < nsets; i++) {
		if (strcmp(sets[i].first->role, "leader") == 0) {
			kps t = sets[i];

			memmove(sets + 1, sets, i * sizeof(kps));
			sets[0] = t;
			break;
		}
	}
	for (i = 0; i < c.nm; i++) {
		kpod *p = c.m[i];

		for (j = 0; j < nsets; j++)
			if (strcmp(sets[j].first->sig, p->sig) == 0 &&
			    sets[j].first->shape == p->shape)
				break;
		p->set = j;
	}
	for (i = 0; i < nsets; i++) {
		const char *role = *sets[i].first->role ?
			sets[i].first->role : "pods";
		unsigned dup = 1;

		for (j = 0; j < i; j++) {
			const char *r2 = *sets[j].first->role ?
				sets[j].first->role : "pods";

			if (strcmp(r2, role) == 0)
				dup++;
		}
		if (dup > 1)
			snprintf(sets[i].name, sizeof(sets[i].name),
				 "%.200s-%u", role, dup);
		else
			snprintf(sets[i].name, sizeof(sets[i].name), "%.200s",
				 role);
	}
	c.gang = tg_gang_create(g->name);
	if (!c.gang) {
		err = tgi_errf(b->ei, TG_ENOMEM, "out of memory");
		goto out;
	}
	tg_gang_set_priority(c.gang, g->prio == INT64_MIN ? 0 : g->prio);
	tg_gang_set_can_preempt(c.gang, !g->never);
	for (i = 0; i < nsets && !err; i++) {
		unsigned k2 = 0;

		err = gcore(&c, sets[i].first->o,
			    tg_gang_add_podset(c.gang, sets[i].name,
					       sets[i].first->shape,
					       sets[i].count, &sets[i].id),
			    "pod set");
		for (j = 0; j < c.nm && !err; j++) {
			if (c.m[j]->set != i)
				continue;
			err = gcore(&c, c.m[j]->o,
				    tg_gang_podset_set_member(c.gang,
							      sets[i].id, k2,
							      c.m[j]->id),
				    "member");
			if (!err)
				err = member_labels(&c, sets[i].id, k2,
						    c.m[j]);
			k2++;
		}
		if (!err)
			err = podset_apply(&c, sets[i].id, sets[i].first);
	}
	if (!err)
		err = gang_reqs(&c);
	if (!err)
		err = spread_reqs(&c);
	if (!err) {
		if (tgi_grow(&b->gangs, &b->capgangs, b->ngangs + 1,
			     sizeof(kgang))) {
			err = tgi_errf(b->ei, TG_ENOMEM, "out of memory");
			goto out;
		}
		b->gangs[b->ngangs].g = c.gang;
		b->gangs[b->ngangs].prio = g->prio;
		b->gangs[b->ngangs].created = g->created;
		b->ngangs++;
		c.gang = NULL;
	}
out:
	if (err == TG_ELIMIT && c.limited[0]) {
		err = gwarn(b, g, 0, "%s: over a limit of the core; skipped",
			    c.limited);
	}
	tg_gang_destroy(c.gang);
	for (i = 0; c.m && i < c.nm; i++)
		if (c.m[i])
			c.m[i]->building = false;
	tgi_free(sets);
	tgi_free(c.m);
	return err;
}

static int gang_cmp(const void *a, const void *c)
{
	const kgang *x = a, *y = c;

	if (x->prio != y->prio)
		return x->prio > y->prio ? -1 : 1;
	if (x->created != y->created)
		return x->created < y->created ? -1 : 1;
	return tg_name_cmp(tg_gang_name(x->g), tg_gang_name(y->g));
}

/* Reports the gang of \p g, which cannot be read: k->fails. */
static tg_err fail_add(bctx *b, kgroup *g)
{
	tg_k8s *k = b->k;
	struct kfail *f;
	size_t i;

	if (tgi_grow(&k->fails, &k->capfails, k->nfails + 1, sizeof(*f)))
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	f = &k->fails[k->nfails++];
	memset(f, 0, sizeof(*f));
	f->gang = tgi_strdup(g->name);
	f->msg = tgi_strdup(g->fail);
	f->pods = tgi_calloc(g->nmembers, sizeof(char *));
	if (!f->gang || !f->msg || !f->pods)
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	for (i = 0; i < g->nmembers; i++) {
		f->pods[i] = tgi_strdup(b->pods[g->members[i]].id);
		if (!f->pods[i])
			return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
		f->npods++;
	}
	return TG_OK;
}

static tg_err build_gangs(bctx *b)
{
	size_t i;
	tg_err err;

	for (i = 0; i < b->ngroups; i++) {
		kgroup *g = &b->groups[i];

		if (g->root != i)
			continue;
		if (!g->nmembers) {
			/* nothing pending: only its running pods' names */
			err = g->fail ? warnf(b->k, "%s; ignored (no pending "
					      "pod)", g->fail) : TG_OK;
			if (err)
				return tgi_errf(b->ei, err, "out of memory");
			continue;
		}
		if (!g->fail && g->ready) {
			err = group_fail(b, g, gang_build(b, g));
			if (err)
				return err;
		}
		if (g->fail) {
			err = fail_add(b, g);
			if (err)
				return err;
		}
	}
	if (b->ngangs > 1)
		qsort(b->gangs, b->ngangs, sizeof(kgang), gang_cmp);
	return TG_OK;
}

/* ---- build ------------------------------------------------------------- */

static void bctx_free(bctx *b)
{
	size_t i;

	for (i = 0; i < b->npods; i++) {
		tgi_free(b->pods[i].id);
		tgi_free(b->pods[i].sig);
		cJSON_Delete(b->pods[i].own_labels);
		cJSON_Delete(b->pods[i].own_anti);
	}
	for (i = 0; i < b->nnslabels; i++)
		cJSON_Delete(b->nslabels[i]);
	tgi_free(b->nslabels);
	tgi_strtab_free(&b->nsnames);
	tgi_free(b->anti);
	tgi_free(b->pend);
	tgi_free(b->pods);
	tgi_free(b->bound);
	for (i = 0; i < b->nslots; i++)
		tgi_free(b->shapes[i]);
	tgi_free(b->shapes);
	for (i = 0; i < b->ngroups; i++) {
		size_t j;

		tgi_free(b->groups[i].name);
		tgi_free(b->groups[i].gname);
		tgi_free(b->groups[i].members);
		tgi_free(b->groups[i].fail);
		for (j = 0; j < b->groups[i].nreqs; j++)
			tgi_free(b->groups[i].reqs[j].layer);
		tgi_free(b->groups[i].reqs);
	}
	tgi_free(b->groups);
	tgi_strtab_free(&b->gkeys);
	tgi_strtab_free(&b->rnames);
	tgi_strtab_free(&b->affkeys);
	tgi_strtab_free(&b->lblkeys);
	tgi_strtab_free(&b->badnodes);
	for (i = 0; i < b->nlbl; i++)
		tgi_free(b->lbl[i].pods);
	tgi_free(b->lbl);
	for (i = 0; i < b->naff; i++)
		tgi_free(b->aff[i].pods);
	tgi_free(b->aff);
	for (i = 0; i < b->ngangs; i++)
		tg_gang_destroy(b->gangs[i].g);
	tgi_free(b->gangs);
	tgi_free(b->pcs);
	tgi_free(b->idx);
	tg_topology_destroy(b->t);
}

tg_err tg_k8s_build(tg_k8s *k, tg_topology **topo, tg_errinfo *ei)
{
	size_t nwarns0, i;
	bctx b;
	tg_err err;

	if (!k || !topo)
		return tgi_errf(ei, TG_EINVAL, "tg_k8s_build: bad arguments");
	if (k->built || k->spent)
		return tgi_errf(ei, TG_ESTATE,
				"tg_k8s_build: already built");
	*topo = NULL;
	memset(&b, 0, sizeof(b));
	b.k = k;
	b.ei = ei ? ei : &b.lei;
	tgi_strtab_init(&b.gkeys);
	tgi_strtab_init(&b.badnodes);
	tgi_strtab_init(&b.rnames);
	tgi_strtab_init(&b.affkeys);
	tgi_strtab_init(&b.lblkeys);
	nwarns0 = k->nwarns;
	b.t = tg_topology_create();
	if (!b.t) {
		err = tgi_errf(ei, TG_ENOMEM, "out of memory");
		goto fail;
	}
	err = build_index(&b);
	if (!err)
		err = load_prioclasses(&b);
	if (!err)
		err = load_pods(&b);
	if (!err)
		err = load_groups(&b);
	if (!err)
		err = pick_levels(&b);
	if (!err)
		err = add_topology(&b);
	if (!err)
		drop_node_trees(&b);
	if (!err)
		err = add_allocs(&b);
	if (!err)
		err = build_gangs(&b);
	if (!err && k->ndropped) {
		char msg[80];

		snprintf(msg, sizeof(msg), "... and %zu more warnings",
			 k->ndropped);
		err = warn_add(k, msg);
		if (err)
			err = tgi_errf(ei, err, "out of memory");
	}
	if (!err) {
		k->gangs = tgi_calloc(b.ngangs ? b.ngangs : 1,
				      sizeof(tg_gang *));
		if (!k->gangs)
			err = tgi_errf(ei, TG_ENOMEM, "out of memory");
	}
	if (err)
		goto fail;
	for (i = 0; i < b.ngangs; i++)
		k->gangs[i] = b.gangs[i].g;
	k->ngangs = b.ngangs;
	b.ngangs = 0;
	*topo = b.t;
	b.t = NULL;
	k->built = true;
	bctx_free(&b);
	return TG_OK;

fail:
	/* nothing from a failed build stays behind, warnings included */
	for (i = nwarns0; i < k->nwarns; i++)
		tgi_free(k->warns[i]);
	k->nwarns = nwarns0;
	k->ndropped = 0;
	free_fails(k);
	bctx_free(&b);
	return err;
}
