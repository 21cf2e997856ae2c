/*
 * shared/src/load/k8s/k8s_volume.c - what a pending pod's volumes and
 * resource claims ask of its node.
 *
 * As kube-scheduler's VolumeBinding plugin for a claim that is bound: the
 * PersistentVolume's spec.nodeAffinity.required is a placement constraint
 * of the pod (ANDed with its own node affinity, k8s_affinity.c).  What the
 * loader does not model is refused, never ignored: a claim missing from
 * the snapshot, being deleted or not bound yet (kube-scheduler would pick
 * a node for a WaitForFirstConsumer claim, stamp
 * volume.kubernetes.io/selected-node on it and wait for provisioning;
 * topogang does not), a PersistentVolume missing, and every
 * spec.resourceClaims (dynamic resource allocation), a volume with only
 * legacy zone labels (VolumeZone, below), and a node affinity term with
 * matchFields or every term empty (k8s_affinity.c).  Each is an error
 * naming the pod, the volume and the reason: its gang is reported, not
 * placed (tg_k8s_failed()).
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
 * second pod), and attach limits per node (NodeVolumeLimits).
 */

/* The PV controller's mark of a finished binding (volume.AnnBindCompleted) */
#define ANN_BIND_COMPLETED	"pv.kubernetes.io/bind-completed"

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
 * The PersistentVolume bound to claim \p claim of volume \p path: *pv, or
 * NULL when it has no node affinity.  An error when the claim cannot be
 * used as it is.
 */
static tg_err claim_pv(bctx *b, const kpod *p, const char *path,
		       const char *claim, bool ephemeral, const kobj **pv)
{
	const kobj *o = p->o, *c, *v;
	const cJSON *md, *spec, *vn, *na, *req, *terms;
	tg_err err;

	*pv = NULL;
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
	if (err)
		return err;
	/* bound as kube-scheduler's volumeBinder.isPVCFullyBound reads it:
	 * spec.volumeName and the PV controller's bind-completed mark */
	if (!vn || !*vn->valuestring ||
	    !tgk_jget(tgk_jget(md, "annotations"), ANN_BIND_COMPLETED))
		return tgk_oerr(b, o, NULL, TG_EINVAL, "%s: "
				"PersistentVolumeClaim %s/%.100s is not bound "
				"to a PersistentVolume%s: unbound claims "
				"(WaitForFirstConsumer provisioning, the "
				"volume.kubernetes.io/selected-node "
				"annotation) are not supported; the pod is "
				"not placed until the claim is bound", path,
				o->ns, claim, vn && *vn->valuestring ?
				" (spec.volumeName set, no " ANN_BIND_COMPLETED
				" annotation yet)" : "");
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
	*pv = v;
	return TG_OK;
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
	const kobj *o = p->o, *pv;
	const cJSON *rc, *vols, *v;
	char path[64], buf[2 * TG_MAX_NAME + 2];
	const char *claim;
	unsigned i = 0, k;
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
	cJSON_ArrayForEach(v, vols) {
		tgk_pidx(path, sizeof(path), "spec.volumes", i++);
		err = volume_claim(b, p, v, path, buf, sizeof(buf), &claim,
				   &eph);
		if (!err && claim)
			err = claim_pv(b, p, path, claim, eph, &pv);
		if (err)
			return err;
		if (!claim || !pv)
			continue;
		for (k = 0; k < p->npvs && p->pvs[k] != pv; k++)
			;
		if (k < p->npvs)
			continue;	/* the same volume twice */
		if (p->npvs == K8S_MAX_POD_PVS)
			return tgk_oerr(b, o, v, TG_ELIMIT, "%s: more than "
					"K8S_MAX_POD_PVS (%d) PersistentVolumes "
					"with node affinity", path,
					K8S_MAX_POD_PVS);
		if (!p->pvs) {
			p->pvs = tgi_calloc(K8S_MAX_POD_PVS, sizeof(*p->pvs));
			if (!p->pvs)
				return tgi_errf(b->ei, TG_ENOMEM,
						"out of memory");
		}
		p->pvs[p->npvs++] = pv;
	}
	return TG_OK;
}
