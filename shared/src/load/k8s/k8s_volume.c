/*
 * shared/src/load/k8s/k8s_volume.c - what a pending pod's volumes and
 * resource claims ask of its node.
 *
 * As kube-scheduler's VolumeBinding plugin (k8s.io/kubernetes
 * pkg/scheduler/framework/plugins/volumebinding/binder.go, v1.31-v1.37:
 * GetPodVolumes, FindPodVolumes, checkVolumeProvisions):
 *  - a bound claim (spec.volumeName and pv.kubernetes.io/bind-completed,
 *    isPVCFullyBound): the PersistentVolume's spec.nodeAffinity.required
 *    is a placement constraint of the pod (ANDed with its own node
 *    affinity, k8s_affinity.c);
 *  - an unbound claim of a WaitForFirstConsumer StorageClass with a
 *    provisioner (dynamic provisioning): the class's allowedTopologies,
 *    when set, constrain the node (MatchTopologySelectorTerms), and the
 *    claim is listed (tg_k8s_claim()) for the host to stamp
 *    volume.kubernetes.io/selected-node on it once the gang is decided
 *    and to bind the pod only once the claim is bound (kube-scheduler's
 *    PreBind, the bridge's volbind.c);
 *  - such a claim that carries the annotation already (provisioning under
 *    way): the pod may go only to that node (FindPodVolumes' fast path),
 *    and it is listed with the node.
 * What the loader does not model is refused, never ignored: a claim
 * missing from the snapshot or being deleted, an unbound claim of no
 * class, of a class missing or of binding mode Immediate (kube-scheduler:
 * "unbound immediate PersistentVolumeClaims"), an unbound
 * WaitForFirstConsumer claim whose class has no provisioner
 * (kubernetes.io/no-provisioner: static local volumes, which
 * kube-scheduler would match to an Available PersistentVolume;
 * topogang does not choose PersistentVolumes) or for which an Available
 * PersistentVolume of its class exists (the same), a PersistentVolume
 * missing, every spec.resourceClaims (dynamic resource allocation), a
 * volume with only legacy zone labels (VolumeZone, below), and a node
 * affinity term with matchFields or every term empty (k8s_affinity.c).
 * Each is an error naming the pod, the volume and the reason: its gang is
 * reported, not placed (tg_k8s_failed()).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s_load.h"

/*
 * Not modeled and not refused: ReadWriteOncePod conflicts (kube-scheduler's
 * VolumeRestrictions refuses a pod whose ReadWriteOncePod claim another
 * pod uses; topogang does not look, and the kubelet then cannot start the
 * second pod), attach limits per node (NodeVolumeLimits), and storage
 * capacity of CSI drivers that publish CSIStorageCapacity
 * (checkVolumeProvisions' hasEnoughCapacity: a node without room is then
 * found out by the provisioner, which removes the selected-node
 * annotation, and the gang is placed again).
 */

/* The PV controller's mark of a finished binding (volume.AnnBindCompleted) */
#define ANN_BIND_COMPLETED	"pv.kubernetes.io/bind-completed"
/* The node the scheduler chose for a WaitForFirstConsumer claim
 * (volume.AnnSelectedNode) */
#define ANN_SELECTED_NODE	"volume.kubernetes.io/selected-node"
/* The claim's class in the annotation that came before
 * spec.storageClassName, read first (GetPersistentVolumeClaimClass) */
#define ANN_BETA_CLASS		"volume.beta.kubernetes.io/storage-class"
/* A class with no dynamic provisioning (volume.NotSupportedProvisioner) */
#define NO_PROVISIONER		"kubernetes.io/no-provisioner"

/*
 * The zone and region labels kube-scheduler's VolumeZone plugin reads on
 * a PersistentVolume (legacy volumes, mostly in-tree cloud disks, carry
 * them instead of node affinity).  That filter is not modeled: a bound
 * volume with one of them and no spec.nodeAffinity.required is refused
 * (placing the pod as if unconstrained could pick a node in another zone
 * that cannot attach the disk).  With node affinity, the affinity is the
 * constraint read; the labels are not checked as well.
 */
static const char *const zone_labels[] = {
	"topology.kubernetes.io/zone", "topology.kubernetes.io/region",
	"failure-domain.beta.kubernetes.io/zone",
	"failure-domain.beta.kubernetes.io/region",
};

static const char *zone_label(const kobj *v)
{
	const cJSON *l = tgk_jget(tgk_jget(v->j, "metadata"), "labels");
	size_t i;

	for (i = 0; i < sizeof(zone_labels) / sizeof(zone_labels[0]); i++)
		if (tgk_jget(l, zone_labels[i]))
			return zone_labels[i];
	return NULL;
}

/* Whether \p c (an ephemeral volume's claim) names \p pod its controller. */
static bool owned_by(const kobj *c, const kobj *pod)
{
	const cJSON *refs = tgk_jget(tgk_jget(c->j, "metadata"),
				     "ownerReferences");
	const char *uid = tgk_jstr(tgk_jget(pod->j, "metadata"), "uid");
	const cJSON *r;

	if (!cJSON_IsArray(refs))
		return false;
	cJSON_ArrayForEach(r, refs) {
		const cJSON *ctl = tgk_jget(r, "controller");

		if (cJSON_IsTrue(ctl) && tgk_jstr(r, "kind") &&
		    strcmp(tgk_jstr(r, "kind"), "Pod") == 0 &&
		    tgk_jstr(r, "name") &&
		    strcmp(tgk_jstr(r, "name"), pod->name) == 0 &&
		    (!uid || (tgk_jstr(r, "uid") &&
			      strcmp(tgk_jstr(r, "uid"), uid) == 0)))
			return true;
	}
	return false;
}

/*
 * Adds node selector \p terms (at \p path in \p o) to \p p's, once:
 * a volume named twice adds nothing, nor do equal terms (several claims
 * of one class add its allowedTopologies once, several claims selected
 * to one node that node once: ANDed, they would only multiply terms).
 */
static tg_err add_vsel(bctx *b, kpod *p, const kobj *o, const cJSON *terms,
		       const char *path, const char *vpath)
{
	unsigned k;

	for (k = 0; k < p->nvsels && p->vsels[k].terms != terms &&
		    !cJSON_Compare(p->vsels[k].terms, terms, true); k++)
		;
	if (k < p->nvsels)
		return TG_OK;
	if (p->nvsels == K8S_MAX_POD_PVS)
		return tgk_oerr(b, p->o, NULL, TG_ELIMIT, "%s: more than "
				"K8S_MAX_POD_PVS (%d) node selectors from "
				"volumes (PersistentVolume node affinity, "
				"StorageClass allowedTopologies, selected "
				"nodes)", vpath, K8S_MAX_POD_PVS);
	if (!p->vsels) {
		p->vsels = tgi_calloc(K8S_MAX_POD_PVS, sizeof(*p->vsels));
		if (!p->vsels)
			return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	}
	p->vsels[p->nvsels].o = o;
	p->vsels[p->nvsels].terms = terms;
	p->vsels[p->nvsels++].path = path;
	return TG_OK;
}

/* A node selector made here, owned by \p p (p->vown). */
static tg_err own_terms(bctx *b, kpod *p, cJSON *terms)
{
	if (!terms)
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	if (!p->vown)
		p->vown = cJSON_CreateArray();
	if (!p->vown) {
		cJSON_Delete(terms);
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	}
	cJSON_AddItemToArray(p->vown, terms);
	return TG_OK;
}

/* One term's matchExpressions entry: \p key In \p values (copied). */
static bool add_in(cJSON *exprs, const char *key, const cJSON *values)
{
	cJSON *e = cJSON_CreateObject(), *v = cJSON_Duplicate(values, true);

	if (!e || !v || !cJSON_AddItemToArray(exprs, e)) {
		cJSON_Delete(e);
		cJSON_Delete(v);
		return false;
	}
	if (!cJSON_AddStringToObject(e, "key", key) ||
	    !cJSON_AddStringToObject(e, "operator", "In") ||
	    !cJSON_AddItemToObject(e, "values", v)) {
		cJSON_Delete(v);	/* not attached: ours */
		return false;
	}
	return true;
}

/*
 * A StorageClass's allowedTopologies (TopologySelectorTerms, ORed; each
 * term's matchLabelExpressions ANDed, each `key In values`) as node
 * selector terms into *out (NULL: none set, every node).  An empty term
 * stays empty: it matches no node, as in MatchTopologySelectorTerms.
 */
static tg_err topo_terms(bctx *b, kpod *p, const kobj *sc, cJSON **out)
{
	const cJSON *at, *t, *le, *e, *key, *vals;
	cJSON *terms, *term, *exprs;
	char q[120], q2[200];
	unsigned i = 0, k;
	tg_err err;

	*out = NULL;
	err = tgk_field(b, sc, sc->j, "", "allowedTopologies", T_ARR, &at);
	if (err || cJSON_GetArraySize(at) == 0)
		return err;
	terms = cJSON_CreateArray();
	err = own_terms(b, p, terms);
	if (err)
		return err;
	cJSON_ArrayForEach(t, at) {
		tgk_pidx(q, sizeof(q), "allowedTopologies", i++);
		if (!cJSON_IsObject(t))
			return tgk_oerr(b, sc, t, TG_EINVAL,
					"%s: expected an object", q);
		err = tgk_field(b, sc, t, q, "matchLabelExpressions", T_ARR,
				&le);
		if (err)
			return err;
		term = cJSON_CreateObject();
		exprs = term && cJSON_AddItemToArray(terms, term) ?
			cJSON_AddArrayToObject(term, "matchExpressions") :
			NULL;
		if (!exprs)
			goto oom;
		k = 0;
		cJSON_ArrayForEach(e, le) {
			tgk_pidx(q2, sizeof(q2), q, k++);
			err = tgk_field(b, sc, e, q2, "key", T_STR, &key);
			if (!err)
				err = tgk_field(b, sc, e, q2, "values", T_ARR,
						&vals);
			if (err)
				return err;
			if (!key || !*key->valuestring ||
			    cJSON_GetArraySize(vals) == 0)
				return tgk_oerr(b, sc, e, TG_EINVAL, "%s.%s: "
						"needs a key and values", q,
						"matchLabelExpressions");
			if (!add_in(exprs, key->valuestring, vals))
				goto oom;
		}
	}
	*out = terms;
	return TG_OK;
oom:
	return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
}

/*
 * The node \p node (a claim's selected node) as node selector terms into
 * *out: its name (kube-scheduler compares node.Name), as the label
 * K_NODE_NAME the loader gives every node; the Node must be in the
 * snapshot.
 */
static tg_err node_terms(bctx *b, kpod *p, const kobj *c, const char *node,
			 cJSON **out)
{
	const kobj *n = tgk_find_obj(b, C_NODE, "Node", "", "", node);
	cJSON *terms, *term, *exprs, *vals;
	tg_err err;

	*out = NULL;
	if (!n)
		return tgk_oerr(b, c, NULL, TG_EINVAL, "metadata.annotations"
				"[" ANN_SELECTED_NODE "]: node %.100s is not in "
				"the snapshot; the pod waits for it (or for the "
				"provisioner to remove the annotation)", node);
	terms = cJSON_CreateArray();
	err = own_terms(b, p, terms);
	if (err)
		return err;
	term = cJSON_CreateObject();
	exprs = term && cJSON_AddItemToArray(terms, term) ?
		cJSON_AddArrayToObject(term, "matchExpressions") : NULL;
	vals = cJSON_CreateArray();
	if (!exprs || !vals || !cJSON_AddItemToArray(vals,
			cJSON_CreateString(node)) ||
	    !add_in(exprs, K_NODE_NAME, vals)) {
		cJSON_Delete(vals);
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	}
	cJSON_Delete(vals);
	*out = terms;
	return TG_OK;
}

/* Lists claim \p c of pending pod \p p for the host (tg_k8s_claim()). */
static tg_err record_claim(bctx *b, const kpod *p, const kobj *c,
			   const char *node)
{
	tg_k8s *k = b->k;
	struct kclaim *e;
	size_t i;
	char name[600];

	snprintf(name, sizeof(name), "%s/%s", c->ns, c->name);
	/* a pod's claims are listed together (its volumes in turn): a
	 * claim named twice is found among the last ones */
	for (i = k->nclaims; i > 0 && strcmp(k->claims[i - 1].pod, p->id) == 0;
	     i--)
		if (strcmp(k->claims[i - 1].claim, name) == 0)
			return TG_OK;
	if (k->nclaims == K8S_MAX_CLAIMS)
		return tgk_oerr(b, c, NULL, TG_ELIMIT, "more than "
				"K8S_MAX_CLAIMS (%d) claims waiting for "
				"provisioning", K8S_MAX_CLAIMS);
	if (tgi_grow(&k->claims, &k->capclaims, k->nclaims + 1,
		     sizeof(*k->claims)))
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	e = &k->claims[k->nclaims];
	e->pod = tgi_strdup(p->id);
	e->claim = tgi_strdup(name);
	e->node = node ? tgi_strdup(node) : NULL;
	if (!e->pod || !e->claim || (node && !e->node)) {
		tgi_free(e->pod);
		tgi_free(e->claim);
		tgi_free(e->node);
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	}
	k->nclaims++;
	return TG_OK;
}

/* Whether PersistentVolume \p v is Available (no claimRef, not deleted). */
static bool pv_available(const kobj *v)
{
	const cJSON *ref = tgk_jget(tgk_jget(v->j, "spec"), "claimRef");

	return (!ref || cJSON_IsNull(ref)) &&
	       !tgk_jget(tgk_jget(v->j, "metadata"), "deletionTimestamp");
}

/* b->avpv: the first Available PersistentVolume of each class, once a
 * build (a claim does not scan every PersistentVolume). */
static tg_err index_available(bctx *b)
{
	size_t i, n = b->first[C_PV + 1] - b->first[C_PV];
	uint32_t id;

	tgi_strtab_init(&b->avcls);
	b->avpv_built = true;
	b->avpv = tgi_calloc(n + 2, sizeof(*b->avpv));
	if (!b->avpv)
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	for (i = b->first[C_PV]; i < b->first[C_PV + 1]; i++) {
		const kobj *v = b->idx[i];
		const char *vc = tgk_jstr(tgk_jget(v->j, "spec"),
					  "storageClassName");

		if (!vc || !pv_available(v))
			continue;
		if (tgi_strtab_intern(&b->avcls, vc, &id))
			return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
		if (id < n + 2 && !b->avpv[id])
			b->avpv[id] = v;
	}
	return TG_OK;
}

/*
 * An Available PersistentVolume of class \p cls (no claimRef): one
 * kube-scheduler's findMatchingVolumes could choose for an unbound claim
 * before provisioning one, into *pv (NULL when there is none).
 */
static tg_err available_pv(bctx *b, const char *cls, const kobj **pv)
{
	tg_err err = b->avpv_built ? TG_OK : index_available(b);
	uint32_t id = err ? 0 : tgi_strtab_find(&b->avcls, cls);

	*pv = id ? b->avpv[id] : NULL;
	return err;
}

/* Unbound claim \p c refused: \p why, \p cls. */
static tg_err not_bound(bctx *b, const kpod *p, const char *path,
			const kobj *c, const char *why, const char *cls)
{
	return tgk_oerr(b, p->o, NULL, TG_EINVAL, "%s: PersistentVolumeClaim "
			"%s/%.100s is not bound to a PersistentVolume (%s"
			"%.100s); the pod is not placed until the claim is "
			"bound", path, p->o->ns, c->name, why, cls);
}

/*
 * Claim \p c (of volume \p path) is not bound: as kube-scheduler's
 * GetPodVolumes and FindPodVolumes.  A WaitForFirstConsumer claim that a
 * provisioner will provision adds its class's allowedTopologies, or its
 * selected node when it has one, to p->vsels and is listed in k->claims;
 * every other unbound claim is an error.
 */
static tg_err claim_unbound(bctx *b, kpod *p, const char *path,
			    const kobj *c, const cJSON *vn)
{
	const kobj *o = p->o, *sc, *pv = NULL;
	const cJSON *md = tgk_jget(c->j, "metadata");
	const char *node = tgk_jstr(tgk_jget(md, "annotations"),
				    ANN_SELECTED_NODE);
	const char *cls = tgk_jstr(tgk_jget(md, "annotations"),
				   ANN_BETA_CLASS);
	const char *mode, *prov;
	cJSON *terms;
	tg_err err;

	if (!cls)
		cls = tgk_jstr(tgk_jget(c->j, "spec"), "storageClassName");
	sc = cls && *cls ? tgk_find_obj(b, C_SC, "StorageClass",
					"storage.k8s.io", "", cls) : NULL;
	mode = sc ? tgk_jstr(sc->j, "volumeBindingMode") : NULL;
	if (vn && *vn->valuestring && !node)
		return not_bound(b, p, path, c, "spec.volumeName set, no "
				 ANN_BIND_COMPLETED " annotation yet", "");
	if (!cls || !*cls)
		return not_bound(b, p, path, c, "it names no StorageClass "
				 "(immediate binding)", "");
	if (!sc)
		return not_bound(b, p, path, c, "its StorageClass is not in "
				 "the snapshot: ", cls);
	if (!mode || strcmp(mode, "WaitForFirstConsumer") != 0)
		return not_bound(b, p, path, c, "its StorageClass binds at "
				 "once (volumeBindingMode not "
				 "WaitForFirstConsumer): ", cls);
	prov = tgk_jstr(sc->j, "provisioner");
	if (!prov || !*prov || strcmp(prov, NO_PROVISIONER) == 0)
		return tgk_oerr(b, o, NULL, TG_EINVAL, "%s: "
				"PersistentVolumeClaim %s/%.100s is not bound "
				"and its WaitForFirstConsumer StorageClass "
				"%.100s has no provisioner (" NO_PROVISIONER
				"): static PersistentVolumes of a "
				"WaitForFirstConsumer class are not supported "
				"(topogang does not choose a PersistentVolume "
				"for a claim); the pod is not placed until the "
				"claim is bound", path, o->ns, c->name, cls);
	if (node) {
		/* provisioning under way: that node only (FindPodVolumes),
		 * which the class's topology must admit as well */
		err = node_terms(b, p, c, node, &terms);
		if (!err)
			err = add_vsel(b, p, c, terms, "metadata.annotations["
				       ANN_SELECTED_NODE "]", path);
	} else {
		err = available_pv(b, cls, &pv);
	}
	if (!node && pv)
		return tgk_oerr(b, o, NULL, TG_EINVAL, "%s: "
				"PersistentVolumeClaim %s/%.100s is not bound "
				"and PersistentVolume %.100s of its "
				"WaitForFirstConsumer StorageClass %.100s is "
				"Available: static PersistentVolumes of a "
				"WaitForFirstConsumer class are not supported "
				"(kube-scheduler could bind the claim to it; "
				"topogang does not choose a PersistentVolume "
				"for a claim); the pod is not placed until the "
				"claim is bound", path, o->ns, c->name,
				pv->name, cls);
	/* dynamic provisioning: the class's topology, then the host stamps
	 * the chosen node on the claim (checkVolumeProvisions) */
	if (!err)
		err = topo_terms(b, p, sc, &terms);
	if (!err && terms)
		err = add_vsel(b, p, sc, terms, "allowedTopologies", path);
	return err ? err : record_claim(b, p, c, node);
}

/*
 * Claim \p claim of volume \p path: bound (its PersistentVolume's node
 * affinity, if any, goes to p->vsels) or waiting for provisioning
 * (claim_unbound).  An error when the claim cannot be used as it is.
 */
static tg_err claim_sel(bctx *b, kpod *p, const char *path,
			const char *claim, bool ephemeral)
{
	const kobj *o = p->o, *c, *v;
	const cJSON *md, *spec, *vn, *na, *req, *terms;
	tg_err err;

	c = tgk_find_obj(b, C_PVC, "PersistentVolumeClaim", "", o->ns, claim);
	if (!c)
		return tgk_oerr(b, o, NULL, TG_ENOENT, "%s: "
				"PersistentVolumeClaim %s/%.100s not found%s; "
				"the pod is not placed", path, o->ns, claim,
				ephemeral ? " (the ephemeral volume's claim "
				"is not created yet)" : "");
	if (ephemeral && !owned_by(c, o))
		return tgk_oerr(b, o, NULL, TG_EINVAL, "%s: "
				"PersistentVolumeClaim %s/%.100s was not "
				"created for this pod (the pod is not its "
				"owner)", path, o->ns, claim);
	md = tgk_jget(c->j, "metadata");
	if (tgk_jget(md, "deletionTimestamp") &&
	    !cJSON_IsNull(tgk_jget(md, "deletionTimestamp")))
		return tgk_oerr(b, o, NULL, TG_EINVAL, "%s: "
				"PersistentVolumeClaim %s/%.100s is being "
				"deleted", path, o->ns, claim);
	err = tgk_field(b, c, c->j, "", "spec", T_OBJ, &spec);
	if (!err)
		err = tgk_field(b, c, spec, "spec", "volumeName", T_STR, &vn);
	if (!err)
		err = tgk_check_strmap(b, c, tgk_jget(md, "annotations"),
				       "metadata.annotations");
	if (err)
		return err;
	/* bound as kube-scheduler's volumeBinder.isPVCFullyBound reads it:
	 * spec.volumeName and the PV controller's bind-completed mark */
	if (!vn || !*vn->valuestring ||
	    !tgk_jget(tgk_jget(md, "annotations"), ANN_BIND_COMPLETED))
		return claim_unbound(b, p, path, c, vn);
	v = tgk_find_obj(b, C_PV, "PersistentVolume", "", "", vn->valuestring);
	if (!v)
		return tgk_oerr(b, o, NULL, TG_ENOENT, "%s: PersistentVolume "
				"%.100s (of claim %s/%.100s) not found; the pod "
				"is not placed", path, vn->valuestring, o->ns,
				claim);
	err = tgk_field(b, v, v->j, "", "spec", T_OBJ, &spec);
	if (!err)
		err = tgk_field(b, v, spec, "spec", "nodeAffinity", T_OBJ, &na);
	if (!err)
		err = tgk_field(b, v, na, "spec.nodeAffinity", "required",
				T_OBJ, &req);
	if (!err && !req && zone_label(v))
		return tgk_oerr(b, v, NULL, TG_EINVAL, "metadata.labels.%s: "
				"a zone label without spec.nodeAffinity "
				"(kube-scheduler's VolumeZone) is not "
				"supported; the pod of claim %s/%.100s is not "
				"placed", zone_label(v), o->ns, claim);
	if (err || !req)
		return err;
	err = tgk_field(b, v, req, "spec.nodeAffinity.required",
			"nodeSelectorTerms", T_ARR, &terms);
	if (err)
		return err;
	if (cJSON_GetArraySize(terms) == 0)
		return tgk_oerr(b, v, req, TG_EINVAL, "spec.nodeAffinity."
				"required.nodeSelectorTerms: none (no node "
				"would match)");
	return add_vsel(b, p, v, terms,
			"spec.nodeAffinity.required.nodeSelectorTerms", path);
}

/* The listed claims from \p first on go. */
static void drop_claims(tg_k8s *k, size_t first)
{
	size_t i;

	for (i = first; i < k->nclaims; i++) {
		tgi_free(k->claims[i].pod);
		tgi_free(k->claims[i].claim);
		tgi_free(k->claims[i].node);
	}
	k->nclaims = first;
}

/* The claim volume \p v names (NULL: none), into \p buf when ephemeral. */
static tg_err volume_claim(bctx *b, const kpod *p, const cJSON *v,
			   const char *path, char *buf, size_t n,
			   const char **claim, bool *ephemeral)
{
	const kobj *o = p->o;
	const cJSON *pvc, *eph, *cn, *vn;
	char q[300];
	tg_err err;

	*claim = NULL;
	*ephemeral = false;
	if (!cJSON_IsObject(v))
		return tgk_oerr(b, o, v, TG_EINVAL, "%s: expected an object",
				path);
	err = tgk_field(b, o, v, path, "persistentVolumeClaim", T_OBJ, &pvc);
	if (!err)
		err = tgk_field(b, o, v, path, "ephemeral", T_OBJ, &eph);
	if (!err)
		err = tgk_field(b, o, v, path, "name", T_STR, &vn);
	if (err)
		return err;
	if (pvc) {
		tgk_pjoin(q, sizeof(q), path, "persistentVolumeClaim");
		err = tgk_field(b, o, pvc, q, "claimName", T_STR, &cn);
		if (err)
			return err;
		if (!cn || !*cn->valuestring)
			return tgk_oerr(b, o, pvc, TG_EINVAL,
					"%s.claimName: missing", q);
		*claim = cn->valuestring;
	} else if (eph) {
		/* the claim the ephemeral controller makes: POD-VOLUME */
		if (!vn || !*vn->valuestring)
			return tgk_oerr(b, o, v, TG_EINVAL, "%s.name: missing",
					path);
		snprintf(buf, n, "%s-%s", o->name, vn->valuestring);
		*claim = buf;
		*ephemeral = true;
	}
	return TG_OK;
}

tg_err tgk_pod_volumes(bctx *b, kpod *p)
{
	const kobj *o = p->o;
	const cJSON *rc, *vols, *v;
	char path[64], buf[2 * TG_MAX_NAME + 2];
	const char *claim;
	unsigned i = 0;
	size_t first;
	bool eph;
	tg_err err;

	err = tgk_field(b, o, p->spec, "spec", "resourceClaims", T_ARR, &rc);
	if (err)
		return err;
	if (cJSON_GetArraySize(rc) > 0)
		return tgk_oerr(b, o, rc, TG_EINVAL, "spec.resourceClaims: "
				"dynamic resource allocation (DRA) is not "
				"supported; the pod is not placed");
	err = tgk_field(b, o, p->spec, "spec", "volumes", T_ARR, &vols);
	if (err)
		return err;
	first = b->k->nclaims;
	cJSON_ArrayForEach(v, vols) {
		tgk_pidx(path, sizeof(path), "spec.volumes", i++);
		err = volume_claim(b, p, v, path, buf, sizeof(buf), &claim,
				   &eph);
		if (!err && claim)
			err = claim_sel(b, p, path, claim, eph);
		if (err) {
			/* the pod is refused: its claims are not listed */
			drop_claims(b->k, first);
			return err;
		}
	}
	return TG_OK;
}

void tgk_free_claims(tg_k8s *k)
{
	drop_claims(k, 0);
	tgi_free(k->claims);
	k->claims = NULL;
	k->nclaims = k->capclaims = 0;
}

size_t tg_k8s_nclaims(const tg_k8s *k)
{
	return k ? k->nclaims : 0;
}

const char *tg_k8s_claim(const tg_k8s *k, size_t i, const char **pod,
			 const char **node)
{
	if (!k || i >= k->nclaims)
		return NULL;
	if (pod)
		*pod = k->claims[i].pod;
	if (node)
		*node = k->claims[i].node;
	return k->claims[i].claim;
}
