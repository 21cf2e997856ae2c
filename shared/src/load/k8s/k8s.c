/*
 * shared/src/load/k8s/k8s.c - Kubernetes cluster snapshots as the core's
 * model: the handle and tg_k8s_add*().
 *
 * tg_k8s_add() only parses text and files the objects it finds; all the
 * meaning is in tg_k8s_build() (k8s_build.c), which runs in passes over a
 * sorted index of the objects, so the result never depends on input
 * order.  k8s_load.h lists the loader's files and what each holds.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s_dialect.h"

/* ---- handle, warnings -------------------------------------------------- */

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

void tgk_free_fails(tg_k8s *k)
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

tg_k8s *tg_k8s_create(void)
{
	tg_k8s *k = tgi_calloc(1, sizeof(tg_k8s));
	unsigned i;

	if (!k)
		return NULL;
	tgi_strtab_init(&k->names);
	for (i = 0; i < tgk_ndialects; i++)
		k->dialects[i] = tgk_dialects[i];
	k->ndialects = tgk_ndialects;
	return k;
}

tg_err tgk_dialect_register(tg_k8s *k, const tgk_dialect *d)
{
	if (!k || !d || !d->name || !d->keys || !d->keys[0].key)
		return TG_EINVAL;
	if (k->built || k->nobjs)
		return TG_ESTATE;
	if (k->ndialects >= K8S_MAX_DIALECTS)
		return TG_ELIMIT;
	k->dialects[k->ndialects++] = d;
	return TG_OK;
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
	tgk_free_fails(k);
	tgk_free_claims(k);
	tgi_free(k);
}

tg_err tgk_warn_add(tg_k8s *k, const char *msg)
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

tg_err tgk_warnf(tg_k8s *k, const char *fmt, ...)
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
	return tgk_warn_add(k, msg);
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

static bool ends_with(const char *s, const char *sfx)
{
	size_t n = strlen(s), m = strlen(sfx);

	return n >= m && strcmp(s + n - m, sfx) == 0;
}

static int classify(const tg_k8s *k, const char *kind, const char *group)
{
	unsigned i;

	for (i = 0; i < k->ndialects; i++) {
		const tgk_dialect *d = k->dialects[i];

		if (d->group_kind && strcmp(kind, d->group_kind) == 0 &&
		    strcmp(group, d->group_api) == 0)
			return C_PODGROUP;
	}
	if (strcmp(kind, "Node") == 0 && !*group)
		return C_NODE;
	if (strcmp(kind, "Pod") == 0 && !*group)
		return C_POD;
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
	if (strcmp(kind, "PersistentVolumeClaim") == 0 && !*group)
		return C_PVC;
	if (strcmp(kind, "PersistentVolume") == 0 && !*group)
		return C_PV;
	if (strcmp(kind, "StorageClass") == 0 &&
	    strcmp(group, "storage.k8s.io") == 0)
		return C_SC;
	return C_OTHER;
}

tg_err tgk_kind_of(tg_k8s *k, const char *kind, const char *api,
		   tgk_kind *out)
{
	const char *slash = api ? strchr(api, '/') : NULL;
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
	out->kind = tgi_strtab_get(&k->names, kid);
	out->group = tgi_strtab_get(&k->names, gid);
	out->cls = (int8_t)classify(k, out->kind, out->group);
	return TG_OK;
}

/* Files one object; \p kind and \p api may come from its List; \p ki
 * (NULL: worked out here) is what tgk_kind_of() says of them. */
static tg_err file_obj(tg_k8s *k, cJSON *j, const char *kind,
		       const char *api, uint32_t src, const tgk_kind *ki)
{
	const cJSON *md = tgk_jget(j, "metadata");
	tgk_kind own;
	kobj *o;

	if (k->nobjs >= K8S_MAX_OBJECTS)
		return TG_ELIMIT;
	if (tgi_grow(&k->objs, &k->capobjs, k->nobjs + 1, sizeof(kobj)))
		return TG_ENOMEM;
	if (!ki && tgk_kind_of(k, kind, api, &own))
		return TG_ENOMEM;
	ki = ki ? ki : &own;
	o = &k->objs[k->nobjs];
	memset(o, 0, sizeof(*o));
	o->j = j;
	o->kind = ki->kind;
	o->group = ki->group;
	o->name = tgk_jstr(md, "name");
	o->name = o->name ? o->name : "";
	o->ns = tgk_jstr(md, "namespace");
	o->ns = o->ns ? o->ns : "";
	o->src = src;
	o->seq = (uint32_t)k->nobjs;
	o->cls = ki->cls;
	if ((o->cls == C_POD || o->cls == C_PODGROUP || o->cls == C_PDB ||
	     o->cls == C_PVC) && !*o->ns)
		o->ns = "default";
	if (o->cls == C_NODE || o->cls == C_CNT || o->cls == C_TOPOLOGY ||
	    o->cls == C_PRIOCLASS || o->cls == C_NAMESPACE || o->cls == C_PV ||
	    o->cls == C_SC)
		o->ns = "";
	k->nobjs++;
	return TG_OK;
}

static tg_err add_doc(tg_k8s *k, cJSON *d, const char *source, uint32_t src,
		      unsigned docno, tg_errinfo *ei)
{
	const char *kind = tgk_jstr(d, "kind");
	const char *api = tgk_jstr(d, "apiVersion");
	const cJSON *items = tgk_jget(d, "items");
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
			const char *ik = tgk_jstr(it, "kind");
			const char *ia = tgk_jstr(it, "apiVersion");

			if (!cJSON_IsObject(it)) {
				unsigned line = tgi_json_line(it);

				if (!line)
					line = tgi_json_line(d);
				if (line)
					return tgi_errf(ei, TG_EPARSE,
							"%s:%u: items[%u]: "
							"not an object",
							source, line, idx);
				return tgi_errf(ei, TG_EPARSE,
						"%s: items[%u]: not an object",
						source, idx);
			}
			if (!ik && *ikind) {
				ik = ikind;
				ia = ia ? ia : api;
			}
			if (!ik) {
				err = tgk_warnf(k, "%s: items[%u] has no kind; "
						"ignored", source, idx);
			} else {
				err = file_obj(k, it, ik, ia, src, NULL);
				if (err == TG_ELIMIT)
					return tgi_errf(ei, err,
							"%s: more than %u "
							"objects", source,
							K8S_MAX_OBJECTS);
			}
			if (err)
				return tgi_errf(ei, err, "%s: out of memory",
						source);
			idx++;
		}
		return TG_OK;
	}
	if (!kind) {
		err = tgk_warnf(k, "%s: document %u has no kind; ignored",
				source,
				docno);
	} else {
		err = file_obj(k, d, kind, api, src, NULL);
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
tg_err tgk_parse_one(const char *text, size_t len, const char *source,
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
	return tg_k8s_add_object_version(k, json, len, kind, api_version, ns,
					 name, source, 0, ei);
}

tg_err tg_k8s_add_object_version(tg_k8s *k, const char *json, size_t len,
				 const char *kind, const char *api_version,
				 const char *ns, const char *name,
				 const char *source, uint64_t version,
				 tg_errinfo *ei)
{
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
	if (len > TG_MAX_FILE || strlen(ns) > TG_MAX_NAME ||
	    strlen(name) > TG_MAX_NAME)
		return tgi_errf(ei, TG_ELIMIT, "%s: %s %s/%s: larger than the "
				"loader's bounds", source, kind, ns, name);
	return tgk_add_one(k, json, len, kind, api_version, ns, name, source,
			   version, false, NULL, ei);
}

tg_err tgk_add_one(tg_k8s *k, const char *json, size_t len,
		   const char *kind, const char *api_version, const char *ns,
		   const char *name, const char *source, uint64_t version,
		   bool cached, const tgk_kind *ki, tg_errinfo *ei)
{
	uint32_t src;
	cJSON *j = NULL;
	bool lent = false;
	kobj *o;
	tg_err err;

	err = source_id(k, source, &src);
	if (err)
		return tgi_errf(ei, err, "%s: %s", source, err == TG_ELIMIT ?
				"too many inputs" : "out of memory");
	/* pods are parsed in the build, one at a time; a Node may be in
	 * the cache; the rest now */
	if (strcmp(kind, "Node") == 0 && strcmp(api_version, "v1") == 0) {
		err = tgk_cache_node(k, name, version, json, len, source, &j,
				     &lent, ei);
		if (err)
			return err;
	} else if (strcmp(kind, "Pod") != 0 || strcmp(api_version, "v1") != 0) {
		err = tgk_parse_one(json, len, source, &j, ei);
		if (err)
			return err;
	}
	err = file_obj(k, j, kind, api_version, src, ki);
	if (err) {
		if (!lent)
			cJSON_Delete(j);
		if (err == TG_ELIMIT)
			return tgi_errf(ei, err, "%s: more than %u objects",
					source, K8S_MAX_OBJECTS);
		return tgi_errf(ei, err, "%s: out of memory", source);
	}
	o = &k->objs[k->nobjs - 1];
	o->own_tree = !lent;
	o->lent_tree = lent;
	o->cached = cached;
	o->name = name;
	if (o->cls == C_NODE || o->cls == C_CNT || o->cls == C_TOPOLOGY ||
	    o->cls == C_PRIOCLASS || o->cls == C_NAMESPACE || o->cls == C_PV ||
	    o->cls == C_SC)
		o->ns = "";
	else if (*ns)
		o->ns = ns;
	else if (o->cls == C_POD || o->cls == C_PODGROUP || o->cls == C_PDB ||
		 o->cls == C_PVC)
		o->ns = "default";
	else
		o->ns = "";
	if (!j) {
		o->text = json;
		o->len = (uint32_t)len;
		o->version = version;
	}
	return TG_OK;
}

tg_err tg_k8s_use_cache_objects(tg_k8s *k)
{
	if (!k)
		return TG_EINVAL;
	if (k->built || k->spent)
		return TG_ESTATE;
	if (!k->cache)
		return TG_EINVAL;
	k->cache_objs = true;
	return TG_OK;
}

tg_err tg_k8s_add_file(tg_k8s *k, const char *path, tg_errinfo *ei)
{
	char *buf = NULL;
	size_t len = 0;
	tg_err err;

	if (!k || !path)
		return tgi_errf(ei, TG_EINVAL,
				"tg_k8s_add_file: bad arguments");
	err = tgi_read_file(path, &buf, &len, ei);
	if (err)
		return err;
	err = tg_k8s_add(k, buf, len, path, ei);
	tgi_free(buf);
	return err;
}
