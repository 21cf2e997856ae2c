/*
 * k8s_bridge/feed.c - the resources the core's loader reads besides the
 * daemon's own (feed.h).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <topogang/topogang.h>

#include "feed.h"

/*
 * After the dialects' group objects: the topology objects, namespaces
 * and the volume objects.
 */
static const br_resdef R_FEED_MORE[] = {
	{ "clusternetworktopologies", "scheduling.koordinator.sh",
	  { "v1alpha1" }, "ClusterNetworkTopology", NULL, true, false },
	{ "topologies", "kai.scheduler", { "v1alpha1" }, "Topology", NULL,
	  true, false },
	{ "topologies", "kueue.x-k8s.io", { "v1beta2", "v1beta1" },
	  "Topology", NULL, true, false },
	/* namespace labels, for pod (anti-)affinity's namespaceSelector */
	{ "namespaces", "", { "v1" }, "Namespace", NULL, true, false },
	/* a pending pod's claims and their volumes' node affinity
	 * (shared/src/load/k8s/k8s_volume.c) */
	{ "persistentvolumeclaims", "", { "v1" }, "PersistentVolumeClaim",
	  NULL, true, false },
	{ "persistentvolumes", "", { "v1" }, "PersistentVolume", NULL, true,
	  false },
	/* unbound claims' classes: WaitForFirstConsumer, provisioner,
	 * allowedTopologies (k8s_volume.c) */
	{ "storageclasses", "storage.k8s.io", { "v1" }, "StorageClass", NULL,
	  true, false },
};
#define NMORE (sizeof(R_FEED_MORE) / sizeof(R_FEED_MORE[0]))
_Static_assert(NMORE == BR_FEED_NMORE, "BR_FEED_NMORE is R_FEED_MORE's size");

#define NVERS (sizeof(((br_resdef *)0)->versions) / \
	       sizeof(((br_resdef *)0)->versions[0]))

int br_feed_init(br_resdef *out, unsigned cap, unsigned max_dialect,
		 unsigned *n, char *err, size_t errlen)
{
	const char *name, *kind, *api, *res;
	const char *const *vers;
	unsigned i, j, v, nf = 0;

	*n = 0;
	if (max_dialect + NMORE > cap) {
		snprintf(err, errlen, "feeds: room for %u, not %u + %zu", cap,
			 max_dialect, NMORE);
		return -1;
	}
	for (i = 0; (name = tg_k8s_dialect_name(i)); i++) {
		if (tg_k8s_dialect_group(name, &kind, &api, &res, &vers) != TG_OK)
			continue;	/* gangs without an object */
		if (!vers || !vers[0]) {
			snprintf(err, errlen, "dialect %s: no version of %s/%s "
				 "to watch", name, api, res);
			return -1;
		}
		for (j = 0; j < nf; j++)
			if (!strcmp(out[j].group, api) &&
			    !strcmp(out[j].resource, res))
				break;
		if (j < nf)
			continue;
		if (nf == max_dialect) {
			snprintf(err, errlen, "more than BR_MAX_DIALECT_FEEDS "
				 "(%u) dialect group objects (dialect %s's "
				 "%s/%s would be one more)", max_dialect,
				 name, api, res);
			return -1;
		}
		memset(&out[nf], 0, sizeof(out[nf]));
		for (v = 0; vers[v]; v++) {
			if (v + 1 >= NVERS) {
				snprintf(err, errlen, "dialect %s: more "
					 "versions of %s/%s than an informer "
					 "tries (%zu)", name, api, res,
					 NVERS - 1);
				return -1;
			}
			out[nf].versions[v] = vers[v];
		}
		out[nf].resource = res;
		out[nf].group = api;
		out[nf].kind = kind;
		out[nf].optional = true;
		nf++;
	}
	for (j = 0; j < NMORE; j++)
		out[nf++] = R_FEED_MORE[j];
	*n = nf;
	return 0;
}
