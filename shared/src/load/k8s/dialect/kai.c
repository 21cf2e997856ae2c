/*
 * shared/src/load/k8s/dialect/kai.c - KAI Scheduler / Run:ai gangs: the
 * PodGroup (scheduling.run.ai) the pod-group-name annotation names; its
 * spec.topologyConstraint (a kai.scheduler Topology and required /
 * preferred levels) or, without one, the kai.scheduler/topology-*
 * annotations of the members; segments (kai.scheduler/segment-*) as
 * slices; spec.preemptibility for the running pods.  Pods whose PodGroup
 * is missing wait for it (KAI schedules pod groups only; k8s_group.c).
 */
#include "config.h"

#include <string.h>

#include "load/k8s/k8s_dialect.h"

#define A_KAI_PG	"pod-group-name"
#define A_KAI_TOPO	"kai.scheduler/topology"
#define A_KAI_REQ	"kai.scheduler/topology-required-placement"
#define A_KAI_PREF	"kai.scheduler/topology-preferred-placement"
#define A_KAI_SEG_SIZE	"kai.scheduler/segment-size"
#define A_KAI_SEG_REQ	"kai.scheduler/segment-topology-required-placement"
#define A_KAI_SEG_PREF \
	"kai.scheduler/segment-topology-preferred-placement"

/* spec.preemptibility: "preemptible", "non-preemptible" or absent. */
static tg_err kai_preemptibility(bctx *b, kgroup *g, const kobj *o,
				 const cJSON *pre)
{
	if (!pre || !*pre->valuestring) {
		g->preemptible = true;	/* decided by priority, per pod */
		return TG_OK;
	}
	if (strcmp(pre->valuestring, "preemptible") == 0)
		g->preemptible = true;
	else if (strcmp(pre->valuestring, "non-preemptible") == 0)
		g->preemptible = false;
	else
		return tgk_oerr(b, o, pre, TG_EINVAL, "spec.preemptibility: "
				"unknown value '%.40s'", pre->valuestring);
	return TG_OK;
}

/* spec.topologyConstraint: the Topology and the levels. */
static tg_err kai_constraint(bctx *b, kgroup *g, const kobj *o,
			     const cJSON *tc)
{
	const char *pp = "spec.topologyConstraint";
	const cJSON *t, *rq, *pf;
	tg_err err;

	err = tgk_field(b, o, tc, pp, "topology", T_STR, &t);
	if (!err)
		err = tgk_field(b, o, tc, pp, "requiredTopologyLevel", T_STR,
				&rq);
	if (!err)
		err = tgk_field(b, o, tc, pp, "preferredTopologyLevel", T_STR,
				&pf);
	if (err)
		return err;
	g->cr_reqs = true;
	if (t && *t->valuestring)
		g->topo = t->valuestring;
	if (rq && *rq->valuestring)
		err = tgk_req_gather(b, g, o, rq, rq->valuestring,
				     TG_GATHER_MUST);
	if (!err && pf && *pf->valuestring)
		err = tgk_req_gather(b, g, o, pf, pf->valuestring,
				     TG_GATHER_PREFER);
	return err;
}

static tg_err kai_group(bctx *b, kgroup *g, const kobj *o, const cJSON *spec,
			const cJSON *annots, int64_t *min)
{
	const cJSON *tc, *pre, *sub;
	tg_err err;

	TG_UNUSED(annots);
	TG_UNUSED(min);
	err = tgk_field(b, o, spec, "spec", "topologyConstraint", T_OBJ, &tc);
	if (!err)
		err = tgk_field(b, o, spec, "spec", "preemptibility", T_STR,
				&pre);
	if (!err)
		err = tgk_field(b, o, spec, "spec", "subGroups", T_ARR, &sub);
	if (!err)
		err = kai_preemptibility(b, g, o, pre);
	if (err)
		return err;
	if (sub && cJSON_GetArraySize(sub) > 0) {
		err = tgk_gwarn_once(b, g, "spec.subGroups are not modeled; "
				     "the gang is placed as one");
		if (err)
			return err;
	}
	return tc ? kai_constraint(b, g, o, tc) : TG_OK;
}

/* The kai.scheduler annotations of one member (the podgrouper copies the
 * top owner's into the PodGroup; a snapshot may carry them on pods). */
static tg_err kai_pod(bctx *b, kgroup *g, const kpod *p, bool group_reqs)
{
	const kobj *o = p->o;
	const cJSON *topo = tgk_jget(p->annots, A_KAI_TOPO);
	const cJSON *req = tgk_jget(p->annots, A_KAI_REQ);
	const cJSON *pref = tgk_jget(p->annots, A_KAI_PREF);
	const cJSON *segsz = tgk_jget(p->annots, A_KAI_SEG_SIZE);
	const cJSON *segreq = tgk_jget(p->annots, A_KAI_SEG_REQ);
	const cJSON *segpref = tgk_jget(p->annots, A_KAI_SEG_PREF);
	tg_err err = TG_OK;

	if (!group_reqs) {
		if (topo && !g->topo && *topo->valuestring)
			g->topo = topo->valuestring;
		if (req)
			err = tgk_req_gather(b, g, o, req, req->valuestring,
					     TG_GATHER_MUST);
		if (!err && pref)
			err = tgk_req_gather(b, g, o, pref, pref->valuestring,
					     TG_GATHER_PREFER);
		if (err)
			return err;
	}
	if (segsz) {
		char path[300];
		int64_t n;

		if (!tg_i64_parse(segsz->valuestring, &n) || n < 1 ||
		    n > TG_MAX_MEMBERS)
			return tgk_oerr(b, o, segsz, TG_EINVAL,
					"%s: not a positive integer '%.40s'",
					tgk_pjoin(path, sizeof(path),
						  "metadata.annotations",
						  A_KAI_SEG_SIZE),
					segsz->valuestring);
		if (segreq)
			err = tgk_req_slice(b, g, o, segreq,
					    segreq->valuestring, (unsigned)n);
		else if (!segpref)
			err = tgk_gwarn_once(b, g,
				    "%s without a segment placement; ignored",
				    A_KAI_SEG_SIZE);
	}
	if (!err && segpref)
		err = tgk_gwarn_once(b, g,
			    "%s is a preference the core does not model; "
			    "ignored", A_KAI_SEG_PREF);
	return err;
}

/*
 * A running pod of a PodGroup that sets spec.preemptibility follows it;
 * else KAI's default: priorities under 100 are preemptible.
 */
static bool kai_preemptible(const kgroup *g, const kpod *p)
{
	const cJSON *pre = tgk_jget(tgk_jget(g->cr ? g->cr->j : NULL, "spec"),
				    "preemptibility");

	if (cJSON_IsString(pre) && *pre->valuestring)
		return g->preemptible;
	return p->prio < 100;
}

static const tgk_key kai_keys[] = {
	{ .key = A_KAI_PG, .annotation = true, .rank = 40 },
	{ .key = NULL },
};

static const char *const kai_versions[] = { "v2alpha2", NULL };

const tgk_dialect tgk_kai = {
	.name = "kai",
	.keys = kai_keys,
	.group_kind = "PodGroup",
	.group_api = "scheduling.run.ai",
	.group_resource = "podgroups",
	.group_versions = kai_versions,
	.group = kai_group,
	.pod = kai_pod,
	.preemptible = kai_preemptible,
};
