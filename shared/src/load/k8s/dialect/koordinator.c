/*
 * shared/src/load/k8s/dialect/koordinator.c - Koordinator's gangs
 * (research/k8s-api.md §2): the coscheduling PodGroup
 * (scheduling.sigs.k8s.io) named by the pod-group label, or the
 * annotation-only gang (gang.scheduling.koordinator.sh/name and
 * /min-available, no object); topology requests in
 * gang.scheduling.koordinator.sh/network-topology-spec (on the PodGroup,
 * else on the pods); GangGroups (/groups) join PodGroups into one gang.
 * Pods with the pod-group label wait for their PodGroup when it is
 * missing (the gang cache inits a labelled gang only from it: PreFilter's
 * "gang has not init"), even when they carry the gang annotations too;
 * the annotation gang (a bare key) never waits (k8s_group.c).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "load/k8s/k8s_dialect.h"

#define L_KOORD_PG	"pod-group.scheduling.sigs.k8s.io"
#define L_KOORD_PG_OLD	"pod-group.scheduling.sigs.k8s.io/name"
#define A_KOORD_NAME	"gang.scheduling.koordinator.sh/name"
#define A_KOORD_MIN	"gang.scheduling.koordinator.sh/min-available"
#define A_KOORD_GROUPS	"gang.scheduling.koordinator.sh/groups"
#define A_KOORD_SPEC \
	"gang.scheduling.koordinator.sh/network-topology-spec"

/* gang.scheduling.koordinator.sh/network-topology-spec */
static tg_err koord_spec(bctx *b, kgroup *g, const kobj *o,
			 const cJSON *annots, bool *found)
{
	const cJSON *v = tgk_jget(annots, A_KOORD_SPEC), *gs, *e;
	char path[300];
	cJSON *j;
	unsigned i = 0;
	size_t len;
	tg_err err = TG_OK;

	*found = false;
	if (!cJSON_IsString(v))
		return TG_OK;
	*found = true;
	tgk_pjoin(path, sizeof(path), "metadata.annotations", A_KOORD_SPEC);
	len = strlen(v->valuestring);
	if (len > K8S_MAX_ANNOT_JSON)
		return tgk_oerr(b, o, v, TG_ELIMIT, "%s: longer than %d bytes",
				path, K8S_MAX_ANNOT_JSON);
	j = cJSON_ParseWithLength(v->valuestring, len);
	if (!j || !cJSON_IsObject(j)) {
		cJSON_Delete(j);
		return tgk_oerr(b, o, v, TG_EINVAL, "%s: bad JSON '%.80s'",
				path,
				v->valuestring);
	}
	gs = cJSON_GetObjectItemCaseSensitive(j, "gatherStrategy");
	if (gs && !cJSON_IsArray(gs) && !cJSON_IsNull(gs)) {
		err = tgk_oerr(b, o, v, TG_EINVAL,
			       "%s: gatherStrategy: expected a list", path);
		goto out;
	}
	cJSON_ArrayForEach(e, gs) {
		const char *layer = tgk_jstr(e, "layer");
		const char *st = tgk_jstr(e, "strategy");
		const cJSON *pcm = tgk_jget(e, "podCountMultiple");
		int64_t m = 0;
		int how;

		if (!cJSON_IsObject(e) || !layer || !*layer) {
			err = tgk_oerr(b, o, v, TG_EINVAL,
				       "%s: gatherStrategy[%u].layer: missing",
				       path, i);
			goto out;
		}
		if (st && strcmp(st, "MustGather") == 0) {
			how = TG_GATHER_MUST;
		} else if (st && strcmp(st, "PreferGather") == 0) {
			how = TG_GATHER_PREFER;
		} else {
			err = tgk_oerr(b, o, v, TG_EINVAL,
				       "%s: gatherStrategy[%u].strategy: "
				       "unknown strategy '%.40s'", path, i,
				       st ? st : "(missing)");
			goto out;
		}
		if (pcm && !cJSON_IsNull(pcm) &&
		    (!tgk_num_int(pcm, &m) || m < 1 || m > TG_MAX_MEMBERS)) {
			err = tgk_oerr(b, o, v, TG_EINVAL,
				       "%s: gatherStrategy[%u]."
				       "podCountMultiple: not a positive "
				       "integer", path, i);
			goto out;
		}
		err = tgk_req_gather(b, g, o, v, layer, how);
		if (!err && m > 0)
			err = tgk_req_slice(b, g, o, v, layer,
					    (unsigned)m);
		if (err)
			goto out;
		i++;
	}
out:
	cJSON_Delete(j);
	return err;
}


static tg_err koord_group(bctx *b, kgroup *g, const kobj *o,
			  const cJSON *spec, const cJSON *annots, int64_t *min)
{
	TG_UNUSED(spec);
	TG_UNUSED(min);
	return koord_spec(b, g, o, annots, &g->cr_reqs);
}

static tg_err koord_pod(bctx *b, kgroup *g, const kpod *p, bool group_reqs)
{
	bool found;

	return group_reqs ? TG_OK : koord_spec(b, g, p->o, p->annots, &found);
}

/*
 * GangGroups: the PodGroups a group's /groups annotation lists (on its
 * PodGroup, else on its first pod) form one gang with it.
 */
static tg_err koord_link(bctx *b, size_t gi)
{
	kgroup *g = &b->groups[gi];
	const kpod *p0 = &b->pods[g->members[0]];
	const kobj *o = g->cr ? g->cr : p0->o;
	const cJSON *v, *e;
	char path[300];
	cJSON *j = NULL;
	int cnt = 0;
	bool found;
	tg_err err = TG_OK;

	v = tgk_jget(tgk_jget(tgk_jget(o->j, "metadata"), "annotations"),
		     A_KOORD_GROUPS);
	if (!v && g->cr) {
		o = p0->o;
		v = tgk_jget(p0->annots, A_KOORD_GROUPS);
	}
	if (!cJSON_IsString(v))
		return TG_OK;
	tgk_pjoin(path, sizeof(path), "metadata.annotations", A_KOORD_GROUPS);
	if (strlen(v->valuestring) <= K8S_MAX_ANNOT_JSON)
		j = cJSON_Parse(v->valuestring);
	if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) > K8S_MAX_GANG_GROUPS) {
		cJSON_Delete(j);
		return tgk_group_fail(b, g, tgk_oerr(b, o, v, TG_EINVAL,
				      "%s: expected a JSON list of at most %d "
				      "\"namespace/name\": '%.60s'", path,
				      K8S_MAX_GANG_GROUPS, v->valuestring));
	}
	cJSON_ArrayForEach(e, j) {
		if (!cJSON_IsString(e) || !strchr(e->valuestring, '/')) {
			err = tgk_group_fail(b, g, tgk_oerr(b, o, v, TG_EINVAL,
					     "%s: entry %d is not "
					     "\"namespace/name\"", path, cnt));
			break;
		}
		cnt++;
		err = tgk_group_join(b, gi, e->valuestring, &found);
		if (!err && !found) {
			char msg[200];

			g->ready = false;
			snprintf(msg, sizeof(msg), "GangGroup member '%.100s' "
				 "has no pods in the snapshot; the gang waits "
				 "for it", e->valuestring);
			err = tgk_group_set_wait(b, g, msg);
		}
		if (err)
			break;
	}
	cJSON_Delete(j);
	return err;
}

static const tgk_key koord_keys[] = {
	{ .key = L_KOORD_PG, .rank = 10 },
	{ .key = L_KOORD_PG_OLD, .rank = 10 },
	{ .key = A_KOORD_NAME, .annotation = true, .rank = 30, .bare = true },
	{ .key = NULL },
};

static const char *const koord_versions[] = { "v1alpha1", NULL };

const tgk_dialect tgk_koordinator = {
	.name = "koordinator",
	.keys = koord_keys,
	.group_kind = "PodGroup",
	.group_api = "scheduling.sigs.k8s.io",
	.group_resource = "podgroups",
	.group_versions = koord_versions,
	.size_key = A_KOORD_MIN,
	.size_use = TGK_SIZE_OWN,
	.group = koord_group,
	.pod = koord_pod,
	.link = koord_link,
};
