/*
 * shared/src/load/k8s/dialect/coscheduling.c - scheduler-plugins'
 * coscheduling gangs: the PodGroup (scheduling.x-k8s.io) a pod's
 * scheduling.x-k8s.io/pod-group label names; its spec.minMember is the
 * gang's size.  Nothing else is its own: the loader's common reading of a
 * group object does it all.  Pods whose PodGroup is missing wait for it
 * (coscheduling's Permit answers PodGroupNotFound; k8s_group.c).
 */
#include "config.h"

#include "load/k8s/k8s_dialect.h"

static const tgk_key sp_keys[] = {
	{ .key = "scheduling.x-k8s.io/pod-group", .rank = 20 },
	{ .key = NULL },
};

static const char *const sp_versions[] = { "v1alpha1", NULL };

const tgk_dialect tgk_coscheduling = {
	.name = "scheduler-plugins",
	.keys = sp_keys,
	.group_kind = "PodGroup",
	.group_api = "scheduling.x-k8s.io",
	.group_resource = "podgroups",
	.group_versions = sp_versions,
};
