/*
 * shared/src/load/k8s/dialect/lws.c - LeaderWorkerSet: each replica (the
 * leaderworkerset.sigs.k8s.io/name and /group-index labels) is a gang of
 * leaderworkerset.sigs.k8s.io/size pods (a size that also sizes other
 * dialects' gangs of its pods when they give none); /exclusive-topology
 * gathers the replica in one domain of that level.
 */
#include "config.h"

#include "load/k8s/k8s_dialect.h"

#define L_LWS_GROUP	"leaderworkerset.sigs.k8s.io/group-index"
#define A_LWS_SIZE	"leaderworkerset.sigs.k8s.io/size"
#define A_LWS_EXCL	"leaderworkerset.sigs.k8s.io/exclusive-topology"

static tg_err lws_pod(bctx *b, kgroup *g, const kpod *p, bool group_reqs)
{
	const cJSON *ex = tgk_jget(p->annots, A_LWS_EXCL);
	tg_err err;

	TG_UNUSED(group_reqs);
	if (!ex || !*ex->valuestring)
		return TG_OK;
	err = tgk_req_gather(b, g, p->o, ex, ex->valuestring, TG_GATHER_MUST);
	if (err)
		return err;
	return tgk_gwarn_once(b, g, "%s: the group is gathered in one '%.80s' "
			      "domain; exclusivity is not enforced",
			      A_LWS_EXCL, ex->valuestring);
}

static const tgk_key lws_keys[] = {
	{ .key = L_LWS_NAME, .rank = 60, .with = L_LWS_GROUP },
	{ .key = NULL },
};

const tgk_dialect tgk_lws = {
	.name = "leaderworkerset",
	.keys = lws_keys,
	.size_key = A_LWS_SIZE,
	.size_use = TGK_SIZE_MEMBER,
	.pod = lws_pod,
};
