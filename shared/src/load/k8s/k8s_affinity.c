/*
 * shared/src/load/k8s/k8s_affinity.c - a pod set's node constraints:
 * nodeSelector, node affinity, tolerations, pod affinity and anti-affinity
 * (its own terms and running pods' terms that select it), as kube-scheduler
 * reads them (README, "Kubernetes placement rules").
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s_load.h"

enum { PW_PREFNODE = 2, PW_PREFPOD = 4, PW_OWNANTI = 8,
       PW_OWNAFF = 16, PW_NSSEL = 32, PW_EMPTYTOL = 64 };

static tg_err pwarn(gctx *c, const kobj *o, unsigned bit, const char *msg)
{
	tg_err err;

	if (c->warned & bit)
		return TG_OK;
	c->warned |= bit;
	err = tgk_owarn(c->b, o, "%s", msg);
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
			return tgk_oerr(b, o, v, TG_EINVAL,
					"%s: expected strings", path);
		}
		(*out)[i++] = v->valuestring;
	}
	*n = i;
	return TG_OK;
}

/* One matchExpressions entry \p e (at \p q) into term \p term. */
static tg_err node_expr(gctx *c, unsigned ps, const kobj *o, const cJSON *e,
			const char *q, unsigned term)
{
	static const char *const ops[] = { "In", "NotIn", "Exists",
					   "DoesNotExist", "Gt", "Lt" };
	bctx *b = c->b;
	const cJSON *key, *op, *vals;
	tg_label_expr x;
	const char **v = NULL;
	unsigned nv = 0, k2;
	int64_t dummy;
	tg_err err;

	if (!cJSON_IsObject(e))
		return tgk_oerr(b, o, e, TG_EINVAL, "%s: expected an object",
				q);
	err = tgk_field(b, o, e, q, "key", T_STR, &key);
	if (!err)
		err = tgk_field(b, o, e, q, "operator", T_STR, &op);
	if (!err)
		err = tgk_field(b, o, e, q, "values", T_ARR, &vals);
	if (err)
		return err;
	if (!key || !*key->valuestring || !op)
		return tgk_oerr(b, o, e, TG_EINVAL,
				"%s: needs a key and an operator", q);
	for (k2 = 0; k2 < 6; k2++)
		if (strcmp(op->valuestring, ops[k2]) == 0)
			break;
	if (k2 == 6)
		return tgk_oerr(b, o, op, TG_EINVAL, "%s.operator: unknown "
				"operator '%.40s'", q, op->valuestring);
	err = strings(b, o, vals, q, &v, &nv);
	if (err)
		return err;
	if (((k2 == TG_SEL_IN || k2 == TG_SEL_NOT_IN) && nv == 0) ||
	    ((k2 == TG_SEL_EXISTS || k2 == TG_SEL_DOES_NOT_EXIST) &&
	     nv != 0) ||
	    ((k2 == TG_SEL_GT || k2 == TG_SEL_LT) &&
	     (nv != 1 || !tg_i64_parse(v[0], &dummy)))) {
		tgi_free(v);
		return tgk_oerr(b, o, e, TG_EINVAL, "%s.values: wrong values "
				"for operator %s", q, ops[k2]);
	}
	x.key = key->valuestring;
	x.op = (tg_sel_op)k2;
	x.values = v;
	x.nvalues = nv;
	err = tg_gang_podset_add_affinity_expr(c->gang, ps, term, &x);
	tgi_free(v);
	return err ? tgk_gcore(c, o, err, q) : TG_OK;
}

/*
 * Required node selectors ANDed: the pod's own node affinity and those
 * of its volumes (k8s_volume.c: bound PersistentVolumes' node affinity,
 * StorageClass allowedTopologies, a claim's selected node).  Each is a list of terms
 * (ORed); the core takes one list of terms per pod set, so the result is
 * their product: every choice of one term per selector is one core term
 * holding the expressions of the chosen ones.  An empty term matches no
 * node (kube-scheduler), so it is left out of the OR; a selector whose
 * terms are all empty matches nothing and fails the gang.  matchFields
 * (kube-scheduler: metadata.name In/NotIn) is not modeled: a term with
 * any fails the gang, naming the object and the field, on the pod's path
 * and a PersistentVolume's alike, never ignored (ignoring it widened the
 * term, or left the pod unconstrained when every term had only fields).
 */
typedef struct nodesel {
	const kobj *o;
	char base[120];		/* path of nodeSelectorTerms */
	const cJSON *t[TG_MAX_TERMS];
	unsigned n;
} nodesel;

static tg_err nsel_read(gctx *c, const kobj *o, const cJSON *terms,
			const char *base, nodesel *s)
{
	bctx *b = c->b;
	const cJSON *t;
	char path[300];
	unsigned ti = 0;
	tg_err err;

	s->o = o;
	s->n = 0;
	snprintf(s->base, sizeof(s->base), "%s", base);
	cJSON_ArrayForEach(t, terms) {
		const cJSON *me, *mf;

		tgk_pidx(path, sizeof(path), base, ti++);
		if (!cJSON_IsObject(t))
			return tgk_oerr(b, o, t, TG_EINVAL,
					"%s: expected an object", path);
		err = tgk_field(b, o, t, path, "matchExpressions", T_ARR, &me);
		if (!err)
			err = tgk_field(b, o, t, path, "matchFields", T_ARR,
					&mf);
		if (err)
			return err;
		if (cJSON_GetArraySize(mf) > 0)
			return tgk_oerr(b, o, mf, TG_EINVAL, "%s.matchFields: "
					"node field selectors (metadata.name) "
					"are not supported; the pod is not "
					"placed", path);
		if (cJSON_GetArraySize(me) == 0)
			continue;	/* matches no node */
		if (s->n == TG_MAX_TERMS)
			return tgk_gcore(c, o, TG_ELIMIT, base);
		s->t[s->n++] = t;
	}
	if (ti > 0 && s->n == 0)
		return tgk_oerr(b, o, terms, TG_EINVAL, "%s: every term is "
				"empty (an empty term matches no node); the "
				"pod is not placed", base);
	return TG_OK;
}

/* The product of \p n selectors as the pod set's terms. */
static tg_err nsel_product(gctx *c, unsigned ps, const nodesel *s,
			   unsigned n)
{
	unsigned total = 1, term, i;
	char q[300];
	tg_err err;

	for (i = 0; i < n; i++) {
		if (!s[i].n)
			continue;
		if (total * s[i].n > TG_MAX_TERMS) {
			char what[190];

			snprintf(what, sizeof(what), "node affinity terms of "
				 "the pod and its volumes multiplied past "
				 "TG_MAX_TERMS (%d) at %s %.60s", TG_MAX_TERMS,
				 s[i].o->kind, s[i].o->name);
			return tgk_gcore(c, s[i].o, TG_ELIMIT, what);
		}
		total *= s[i].n;
	}
	for (term = 0; term < total; term++) {
		unsigned rest = term;

		for (i = 0; i < n; i++) {
			const cJSON *t, *e;
			unsigned k, ei = 0;

			if (!s[i].n)
				continue;
			k = rest % s[i].n;
			rest /= s[i].n;
			t = s[i].t[k];
			cJSON_ArrayForEach(e, tgk_jget(t, "matchExpressions")) {
				snprintf(q, sizeof(q), "%.200s[%u]."
					 "matchExpressions[%u]", s[i].base, k,
					 ei++);
				err = node_expr(c, ps, s[i].o, e, q, term);
				if (err)
					return err;
			}
		}
	}
	return TG_OK;
}

static tg_err node_affinity(gctx *c, unsigned ps, const kpod *p,
			    const cJSON *na)
{
	bctx *b = c->b;
	const kobj *o = p->o;
	const char *base = "spec.affinity.nodeAffinity";
	const cJSON *req = NULL, *terms = NULL, *pref = NULL;
	nodesel *s;
	char q[300], q2[300];
	unsigned n = 0, i;
	tg_err err = TG_OK;

	if (na)
		err = tgk_field(b, o, na, base,
				"requiredDuringSchedulingIgnoredDuringExecution",
				T_OBJ, &req);
	if (!err && na)
		err = tgk_field(b, o, na, base,
				"preferredDuringSchedulingIgnoredDuringExecution",
				T_ARR, &pref);
	if (err)
		return err;
	if (cJSON_GetArraySize(pref) > 0) {
		err = pwarn(c, o, PW_PREFNODE, "preferred node affinity is not "
			    "modeled; ignored");
		if (err)
			return err;
	}
	tgk_pjoin(q, sizeof(q), base,
		  "requiredDuringSchedulingIgnoredDuringExecution");
	err = tgk_field(b, o, req, q, "nodeSelectorTerms", T_ARR, &terms);
	if (err)
		return err;
	s = tgi_calloc(p->nvsels + 1, sizeof(nodesel));
	if (!s)
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	tgk_pjoin(q2, sizeof(q2), q, "nodeSelectorTerms");
	err = nsel_read(c, o, terms, q2, &s[n++]);
	for (i = 0; !err && i < p->nvsels; i++)
		err = nsel_read(c, p->vsels[i].o, p->vsels[i].terms,
				p->vsels[i].path, &s[n++]);
	if (!err)
		err = nsel_product(c, ps, s, n);
	tgi_free(s);
	return err;
}

static tg_err tolerations(gctx *c, unsigned ps, const kpod *p)
{
	bctx *b = c->b;
	const kobj *o = p->o;
	const cJSON *list, *t;
	char path[300];
	unsigned i = 0;
	tg_err err;

	err = tgk_field(b, o, p->spec, "spec", "tolerations", T_ARR, &list);
	if (err)
		return err;
	cJSON_ArrayForEach(t, list) {
		const cJSON *key, *op, *val, *eff;
		bool exists;
		int effect;

		tgk_pidx(path, sizeof(path), "spec.tolerations", i++);
		if (!cJSON_IsObject(t))
			return tgk_oerr(b, o, t, TG_EINVAL,
					"%s: expected an object", path);
		err = tgk_field(b, o, t, path, "key", T_STR, &key);
		if (!err)
			err = tgk_field(b, o, t, path, "operator", T_STR, &op);
		if (!err)
			err = tgk_field(b, o, t, path, "value", T_STR, &val);
		if (!err)
			err = tgk_field(b, o, t, path, "effect", T_STR, &eff);
		if (err)
			return err;
		if (op && *op->valuestring &&
		    strcmp(op->valuestring, "Equal") != 0 &&
		    strcmp(op->valuestring, "Exists") != 0)
			return tgk_oerr(b, o, op, TG_EINVAL,
					"%s.operator: unknown operator '%.40s'",
					path, op->valuestring);
		exists = op && strcmp(op->valuestring, "Exists") == 0;
		if (tgk_taint_effect(eff ? eff->valuestring : "", &effect))
			return tgk_oerr(b, o, eff, TG_EINVAL,
					"%s.effect: unknown effect '%.40s'",
					path,
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
			return tgk_gcore(c, o, err, path);
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
	const kobj *o = tgk_find_obj(b, C_NAMESPACE, "Namespace", "", "",
				     ns);
	cJSON *l;
	uint32_t id;

	if (o)
		return tgk_jget(tgk_jget(o->j, "metadata"), "labels");
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
	if (tgk_warnf(b->k, "Namespace %s is not in the snapshot: a "
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

		return l && tgk_sel_match(b, o, nssel, "namespaceSelector", l,
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
	const cJSON *ml = tgk_jget(sel, "matchLabels"), *e;
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
		err = tgk_sel_match(b, o, sel, q, pp->labels, &m);
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
		err = tgk_sel_match(b, o, sel, q, bp->labels, &m);
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

/* A required term's topologyKey and namespaces, checked. */
static tg_err term_read(bctx *b, const kobj *o, const cJSON *t,
			const char *path, const cJSON **tk,
			const cJSON **nsl, const cJSON **nss)
{
	const cJSON *v;
	char q[300];
	bool m;
	tg_err err;

	if (!cJSON_IsObject(t))
		return tgk_oerr(b, o, t, TG_EINVAL, "%s: expected an object",
				path);
	err = tgk_field(b, o, t, path, "topologyKey", T_STR, tk);
	if (!err)
		err = tgk_field(b, o, t, path, "namespaces", T_ARR, nsl);
	if (!err)
		err = tgk_field(b, o, t, path, "namespaceSelector", T_OBJ,
				nss);
	if (err)
		return err;
	if (!*tk || !*(*tk)->valuestring)
		return tgk_oerr(b, o, t, TG_EINVAL, "%s.topologyKey: missing",
				path);
	cJSON_ArrayForEach(v, *nsl)
		if (!cJSON_IsString(v))
			return tgk_oerr(b, o, v, TG_EINVAL,
					"%s.namespaces: expected strings",
					path);
	if (*nss && (*nss)->child) {
		tgk_pjoin(q, sizeof(q), path, "namespaceSelector");
		return tgk_sel_match(b, o, *nss, q, NULL, &m);
	}
	return TG_OK;
}

/*
 * One required pod (anti-)affinity term of pod set \p ps (its first
 * member \p p): the gang's own members it selects become a gather (or
 * one per node), the others (running, or of gangs placed earlier in the
 * pass) the core's pod affinity to named pods.
 */
static tg_err aff_term(gctx *c, unsigned ps, const kpod *p, const cJSON *t,
		       const char *path, bool anti, const char **names)
{
	bctx *b = c->b;
	const kobj *o = p->o;
	const cJSON *tk, *sel, *nsl, *nss;
	bool self = false, other = false, m;
	char q[300];
	unsigned nn = 0;
	size_t i;
	tg_err err;

	err = term_read(b, o, t, path, &tk, &nsl, &nss);
	if (err)
		return err;
	sel = tgk_jget(t, "labelSelector");
	tgk_pjoin(q, sizeof(q), path, "labelSelector");
	err = tgk_sel_match(b, o, sel, q, p->labels, &self);
	for (i = 0; i < c->nm && !self && !other && !err; i++) {
		if (c->m[i] == p ||
		    !ns_ok(b, o, nsl, nss, o->ns, c->m[i]->o->ns))
			continue;
		err = tgk_sel_match(b, o, sel, q, c->m[i]->labels, &m);
		other = m;
	}
	if (!err)
		err = aff_bound(b, t, o, nsl, nss, sel, q, names, &nn);
	if (err)
		return err;
	if (anti && (self || other)) {
		if (self && strcmp(tk->valuestring, K_HOSTNAME) == 0)
			err = tgk_gcore(c, o, tg_gang_podset_set_max_per_node(
						c->gang, ps, 1), path);
		else
			err = pwarn(c, o, PW_OWNANTI, "anti-affinity among the "
				    "gang's own pods is only modeled per node; "
				    "ignored");
		if (err)
			return err;
	}
	if (!anti && !nn && (self || other)) {
		/* co-location with its own members: one domain */
		if (tgk_is_level(b, tk->valuestring))
			return tgk_req_gather(b, c->g, o, tk, tk->valuestring,
					      TG_GATHER_MUST);
		return pwarn(c, o, PW_OWNAFF, "affinity among the gang's own "
			     "pods over a key that is not a topology level; "
			     "ignored");
	}
	if (nn || !anti) {
		err = tg_gang_podset_add_pod_affinity(c->gang, ps,
						      tk->valuestring, anti,
						      names, nn);
		if (err)
			return tgk_gcore(c, o, err, path);
	}
	return TG_OK;
}

static tg_err pod_affinity(gctx *c, unsigned ps, const kpod *p,
			   const cJSON *aff, bool anti)
{
	bctx *b = c->b;
	const kobj *o = p->o;
	const char *kind = anti ? "podAntiAffinity" : "podAffinity";
	const cJSON *pa, *req, *pref, *t;
	const char **names = NULL;
	char base[300], path[300];
	unsigned ti = 0;
	tg_err err;

	tgk_pjoin(base, sizeof(base), "spec.affinity", kind);
	err = tgk_field(b, o, aff, "spec.affinity", kind, T_OBJ, &pa);
	if (!err)
		err = tgk_field(b, o, pa, base,
				"requiredDuringSchedulingIgnoredDuringExecution",
				T_ARR, &req);
	if (!err)
		err = tgk_field(b, o, pa, base,
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
		snprintf(path, sizeof(path), "%.200s.requiredDuringScheduling"
			 "IgnoredDuringExecution[%u]", base, ti++);
		err = aff_term(c, ps, p, t, path, anti, names);
		if (err)
			break;
	}
	tgi_free(names);
	return err;
}

/* A pod's required pod anti-affinity terms (a non-empty list) or NULL. */
static const cJSON *anti_terms(const kpod *x)
{
	const cJSON *a = x->own_anti ? x->own_anti :
			 tgk_jget(tgk_jget(x->spec, "affinity"),
				  "podAntiAffinity");
	const cJSON *r = tgk_jget(a,
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
	if (!cJSON_IsObject(t) || !cJSON_IsString(tgk_jget(t, "topologyKey")) ||
	    !ns_ok(b, x->o, tgk_jget(t, "namespaces"),
		   tgk_jget(t, "namespaceSelector"), x->o->ns, p->o->ns))
		return TG_OK;
	err = tgk_sel_match(b, x->o, tgk_jget(t, "labelSelector"),
			    "spec.affinity.podAntiAffinity.labelSelector",
			    p->labels, m);
	if (err == TG_ENOMEM)
		return err;
	if (err) {
		*m = false;
		return tgk_owarn(b, x->o, "%s; the term is not counted",
				 b->ei ? b->ei->msg : "bad label selector");
	}
	return TG_OK;
}

/*
 * Files term \p t (the \p k-th of its list) of b->anti[i] in its group:
 * the pods of one namespace with the same term text share one, since
 * term_selects() reads of the pod only its namespace then.  A term whose
 * label selector is bad (term_selects() warns, naming the pod) or whose
 * text is too long for a key (K8S_MAX_ANNOT_JSON) is a group of its
 * own; a term with no topologyKey selects nothing and is left out.
 */
static tg_err anti_group(bctx *b, uint32_t i, uint32_t k, const cJSON *t)
{
	const kpod *x = b->anti[i].x;
	tg_errinfo keep = *b->ei;
	struct antigrp *g;
	char *text = NULL;
	tg_buf kb;
	uint32_t id;
	bool m;
	tg_err err;

	if (!cJSON_IsObject(t) || !cJSON_IsString(tgk_jget(t, "topologyKey")))
		return TG_OK;
	err = tgk_sel_match(b, x->o, tgk_jget(t, "labelSelector"), "", NULL,
			    &m);
	*b->ei = keep;
	if (err == TG_ENOMEM)
		return tgi_errf(b->ei, err, "out of memory");
	if (!err && !(text = cJSON_PrintUnformatted(t)))
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	tg_buf_init(&kb, K8S_MAX_ANNOT_JSON);
	if (text)
		tg_buf_addf(&kb, "%s\x1f%s", x->o->ns, text);
	cJSON_free(text);
	if (kb.err == TG_ENOMEM) {
		tg_buf_free(&kb);
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	}
	if (!text || kb.err) {
		tg_buf_free(&kb);
		tg_buf_init(&kb, 64);
		tg_buf_addf(&kb, "\x1e%u\x1f%u", i, k);
	}
	err = kb.err ? kb.err : tgi_strtab_intern(&b->antikeys, kb.s, &id);
	tg_buf_free(&kb);
	if (!err && id > b->nagrp) {
		err = tgi_grow(&b->agrp, &b->capagrp, id, sizeof(*b->agrp));
		if (!err) {
			g = &b->agrp[b->nagrp++];
			memset(g, 0, sizeof(*g));
			g->x = x;
			g->t = t;
		}
	}
	g = err ? NULL : &b->agrp[id - 1];
	if (!err)
		err = tgi_grow(&g->m, &g->cap, g->n + 1, sizeof(*g->m));
	if (err)
		return tgi_errf(b->ei, err, "out of memory");
	g->m[g->n++] = (struct antimem){ i, k, t };
	return TG_OK;
}

/* The pods whose required anti-affinity may keep others away: running
 * ones, and pending ones of ours (once placed earlier in the pass); their
 * terms grouped (anti_group()). */
static tg_err anti_index(bctx *b)
{
	size_t i;
	tg_err err = TG_OK;

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
	for (i = 0; i < b->nanti && !err; i++) {
		const cJSON *t;
		uint32_t k = 0;

		cJSON_ArrayForEach(t, b->anti[i].terms) {
			if ((err = anti_group(b, (uint32_t)i, k++, t)))
				break;
		}
	}
	return err;
}

static int antimem_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct antimem *a = pa, *b = pb;

	TG_UNUSED(ctx);
	if (a->i != b->i)
		return a->i < b->i ? -1 : 1;
	return a->k < b->k ? -1 : a->k > b->k;
}

/*
 * The terms of running pods that select \p p (not those of the gang
 * being built: pod_affinity() has them), in pod order then term order,
 * into *out (the caller frees it): each group's term evaluated once.
 */
static tg_err anti_hits(bctx *b, const kpod *p, struct antimem **out,
			size_t *nout)
{
	struct antimem *h = NULL;
	size_t nh = 0, cap = 0, gi, j;
	tg_err err = TG_OK;

	for (gi = 0; gi < b->nagrp && !err; gi++) {
		const struct antigrp *g = &b->agrp[gi];
		bool m;

		if (g->n == 1 && b->anti[g->m[0].i].x->building)
			continue;
		if ((err = term_selects(b, g->x, g->t, p, &m)) || !m)
			continue;
		if (tgi_grow(&h, &cap, nh + g->n, sizeof(*h))) {
			err = tgi_errf(b->ei, TG_ENOMEM, "out of memory");
			break;
		}
		for (j = 0; j < g->n; j++)
			if (!b->anti[g->m[j].i].x->building)
				h[nh++] = g->m[j];
	}
	if (nh)
		tgi_sort(h, nh, sizeof(*h), antimem_cmp, NULL);
	*out = h;
	*nout = nh;
	return err;
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
	const cJSON *own = anti_terms(p), *u;
	const char *keys[TG_MAX_TERMS], **names[TG_MAX_TERMS];
	unsigned nk = 0, n[TG_MAX_TERMS], k;
	struct antimem *hit = NULL;
	size_t nhit = 0, i;
	tg_err err;

	if (!b->anti_built && (err = anti_index(b)))
		return err;
	err = anti_hits(b, p, &hit, &nhit);
	for (i = 0; i < nhit && !err; i++) {
		const kpod *x = b->anti[hit[i].i].x;
		const char *tk = tgk_jstr(hit[i].t, "topologyKey");
		bool covered = false;

		cJSON_ArrayForEach(u, own) {
			if (!cJSON_IsObject(u) ||
			    !tgk_jstr(u, "topologyKey")
			    || strcmp(tgk_jstr(u, "topologyKey"), tk))
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
					 "anti-affinity of running "
					 "pods over more than %d "
					 "topology keys", TG_MAX_TERMS);
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
	tgi_free(hit);
	for (k = 0; k < nk; k++) {
		if (!err)
			err = tgk_gcore(c, p->o,
					tg_gang_podset_add_pod_affinity(
					    c->gang, ps, keys[k], true,
					    names[k], n[k]),
					"anti-affinity of running pods");
		tgi_free(names[k]);
	}
	return err;
}

/* A pod set's node constraints, from its first member. */
tg_err tgk_podset_apply(gctx *c, unsigned ps, const kpod *p)
{
	bctx *b = c->b;
	const kobj *o = p->o;
	const cJSON *nsel, *aff, *na, *e;
	char path[300];
	tg_err err;

	c->warned = 0;
	err = tgk_field(b, o, p->spec, "spec", "nodeSelector", T_OBJ, &nsel);
	if (!err)
		err = tgk_check_strmap(b, o, nsel, "spec.nodeSelector");
	if (err)
		return err;
	cJSON_ArrayForEach(e, nsel) {
		err = tg_gang_podset_add_node_selector(c->gang, ps, e->string,
						       e->valuestring);
		if (err)
			return tgk_gcore(c, o, err,
					 tgk_pjoin(path, sizeof(path),
						   "spec.nodeSelector",
						   e->string));
	}
	err = tgk_field(b, o, p->spec, "spec", "affinity", T_OBJ, &aff);
	if (!err)
		err = tgk_field(b, o, aff, "spec.affinity", "nodeAffinity",
				T_OBJ,
				&na);
	if (!err && (na || p->nvsels))
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
