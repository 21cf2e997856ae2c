/*
 * shared/src/load/k8s/dialect/kueue.c - Kueue's plain-pod groups (the
 * kueue.x-k8s.io/pod-group-name label; the size in
 * kueue.x-k8s.io/pod-group-total-count, which also sizes other dialects'
 * gangs that give none) and its Topology Aware Scheduling annotations
 * (podset-required/preferred-topology, slices), read on any member.
 */
#include "config.h"

#include <string.h>

#include "load/k8s/k8s_dialect.h"

#define A_KUEUE_REQ	"kueue.x-k8s.io/podset-required-topology"
#define A_KUEUE_PREF	"kueue.x-k8s.io/podset-preferred-topology"
#define A_KUEUE_UNC	"kueue.x-k8s.io/podset-unconstrained-topology"
#define A_KUEUE_SLICE	"kueue.x-k8s.io/podset-slice-required-topology"
#define A_KUEUE_SSIZE	"kueue.x-k8s.io/podset-slice-size"
#define A_KUEUE_SLICES	\
	"kueue.x-k8s.io/podset-slice-required-topology-constraints"
#define L_KUEUE_GROUP	"kueue.x-k8s.io/pod-group-name"
#define A_KUEUE_TOTAL	"kueue.x-k8s.io/pod-group-total-count"

/* podset-slice-required-topology-constraints: 1 to 3 slice levels. */
static tg_err kueue_slices(bctx *b, kgroup *g, const kobj *o,
			   const cJSON *multi)
{
	size_t len = strlen(multi->valuestring);
	cJSON *j = NULL, *e;
	char path[300];
	int cnt = 0;
	tg_err err = TG_OK;

	tgk_pjoin(path, sizeof(path), "metadata.annotations", A_KUEUE_SLICES);
	if (len <= K8S_MAX_ANNOT_JSON)
		j = cJSON_ParseWithLength(multi->valuestring, len);
	if (!j || !cJSON_IsArray(j) || cJSON_GetArraySize(j) < 1 ||
	    cJSON_GetArraySize(j) > 3) {
		cJSON_Delete(j);
		return tgk_oerr(b, o, multi, TG_EINVAL, "%s: expected a JSON "
				"list of 1 to 3 {\"topology\",\"size\"}: "
				"'%.60s'", path, multi->valuestring);
	}
	cJSON_ArrayForEach(e, j) {
		const char *topo = tgk_jstr(e, "topology");
		int64_t n;

		if (!topo || !tgk_num_int(tgk_jget(e, "size"), &n) || n < 1 ||
		    n > TG_MAX_MEMBERS) {
			err = tgk_oerr(b, o, multi, TG_EINVAL, "%s: entry %d "
				       "needs a topology and a positive size",
				       path, cnt);
			break;
		}
		err = tgk_req_slice(b, g, o, multi, topo, (unsigned)n);
		if (err)
			break;
		cnt++;
	}
	cJSON_Delete(j);
	return err;
}

/* podset-slice-required-topology with podset-slice-size, or the list. */
static tg_err kueue_slice(bctx *b, kgroup *g, const kpod *p)
{
	const kobj *o = p->o;
	const cJSON *sl = tgk_jget(p->annots, A_KUEUE_SLICE);
	const cJSON *ss = tgk_jget(p->annots, A_KUEUE_SSIZE);
	const cJSON *multi = tgk_jget(p->annots, A_KUEUE_SLICES);
	char path[300];
	int64_t n;
	tg_err err;

	if ((sl != NULL) != (ss != NULL))
		return tgk_oerr(b, o, sl ? sl : ss, TG_EINVAL,
				"metadata.annotations: %s needs %s",
				sl ? A_KUEUE_SLICE : A_KUEUE_SSIZE,
				sl ? A_KUEUE_SSIZE : A_KUEUE_SLICE);
	if (sl && multi)
		return tgk_oerr(b, o, multi, TG_EINVAL,
				"metadata.annotations: %s and %s are mutually "
				"exclusive", A_KUEUE_SLICE, A_KUEUE_SLICES);
	if (multi)
		return kueue_slices(b, g, o, multi);
	if (!sl)
		return TG_OK;
	if (!tg_i64_parse(ss->valuestring, &n) || n < 1 ||
	    n > TG_MAX_MEMBERS)
		return tgk_oerr(b, o, ss, TG_EINVAL,
				"%s: not a positive integer '%.40s'",
				tgk_pjoin(path, sizeof(path),
					  "metadata.annotations",
					  A_KUEUE_SSIZE), ss->valuestring);
	err = tgk_req_slice(b, g, o, sl, sl->valuestring, (unsigned)n);
	return err;
}

/* kueue.x-k8s.io/podset-* annotations of one member. */
static tg_err kueue_pod(bctx *b, kgroup *g, const kpod *p, bool group_reqs)
{
	static const char *const ok[] = { "1", "t", "T", "TRUE", "true",
		"True", "0", "f", "F", "FALSE", "false", "False" };
	const kobj *o = p->o;
	const cJSON *req = tgk_jget(p->annots, A_KUEUE_REQ);
	const cJSON *pref = tgk_jget(p->annots, A_KUEUE_PREF);
	const cJSON *unc = tgk_jget(p->annots, A_KUEUE_UNC);
	char path[300];
	size_t i;
	tg_err err = TG_OK;

	TG_UNUSED(group_reqs);
	for (i = 0; unc && i < sizeof(ok) / sizeof(ok[0]); i++)
		if (strcmp(unc->valuestring, ok[i]) == 0)
			break;
	if (unc && i == sizeof(ok) / sizeof(ok[0]))
		return tgk_oerr(b, o, unc, TG_EINVAL,
				"%s: not a boolean '%.40s'",
				tgk_pjoin(path, sizeof(path),
					  "metadata.annotations", A_KUEUE_UNC),
				unc->valuestring);
	if (req) {
		err = tgk_req_gather(b, g, o, req, req->valuestring,
				     TG_GATHER_MUST);
		if (!err && pref)
			err = tgk_gwarn_once(b, g, "%s and %s both set; the "
					     "required one is used",
					     A_KUEUE_REQ, A_KUEUE_PREF);
	} else if (pref) {
		err = tgk_req_gather(b, g, o, pref, pref->valuestring,
				     TG_GATHER_PREFER);
	}
	return err ? err : kueue_slice(b, g, p);
}

static const tgk_key kueue_keys[] = {
	{ .key = L_KUEUE_GROUP, .rank = 50 },
	{ .key = NULL },
};

const tgk_dialect tgk_kueue = {
	.name = "kueue",
	.keys = kueue_keys,
	.size_key = A_KUEUE_TOTAL,
	.size_use = TGK_SIZE_ANY,
	.pod = kueue_pod,
};
