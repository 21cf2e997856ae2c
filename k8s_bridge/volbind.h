/*
 * k8s_bridge/volbind.h - WaitForFirstConsumer claims of a placed gang:
 * the selected node stamped on them, the binding held until they are
 * bound (kube-scheduler's VolumeBinding PreBind).
 *
 * The core's loader lists the unbound WaitForFirstConsumer claims of the
 * pending pods that a provisioner will provision (tg_k8s_claim(),
 * shared/src/load/k8s/k8s_volume.c), and places their pods only where
 * the claim's StorageClass can provision (allowedTopologies) or, once a
 * claim carries volume.kubernetes.io/selected-node, on that node only.
 * For a gang the core placed, br_volbind_hold():
 *  - sets volume.kubernetes.io/selected-node: <the member's node> on each
 *    listed claim that has none (a merge PATCH of the claim's metadata
 *    on its cached resourceVersion: a 409 when it changed meanwhile, as
 *    kube-scheduler's bindAPIUpdate updates the claim), for every
 *    member of the gang before any member is bound;
 *  - holds the whole gang's binding while any member's claim is still
 *    listed (not bound: spec.volumeName and pv.kubernetes.io/
 *    bind-completed, kube-scheduler's isPVCFullyBound), so that a gang is
 *    never half-bound because of one claim.  The next cycles decide the
 *    gang again (its members pinned to the selected nodes) and bind it
 *    once no claim is listed: the claims' bound PersistentVolumes then
 *    constrain the members as for any bound claim;
 *  - while the gang is held its members keep their nodes: the caller
 *    (sched.c) writes them in every snapshot as nominated to their
 *    decided nodes (a reservation of the core: free to the gang itself
 *    and to gangs of strictly higher priority, as any nomination),
 *    so that the gangs decided meanwhile are decided around them, as
 *    kube-scheduler assumes a pod on its node (Reserve) before PreBind
 *    waits for its volumes.  The reservation follows the gang's latest
 *    decision and goes when the gang is not held again (bound, no longer
 *    placed, a member or claim gone, the leadership lost);
 *  - past binding.volumeBindTimeoutSeconds (BR_VOLUME_BIND_TIMEOUT_S,
 *    kube-scheduler's bindTimeoutSeconds) of waiting, reports the gang:
 *    PodScheduled=False reason SchedulerError on every member naming the
 *    claims still unbound, a FailedScheduling event, and the wait starts
 *    again (the gang is retried): its nodes are given back and it waits
 *    its backoff first (kube-scheduler's Unreserve, then the backoff
 *    queue).  The annotations stay, as kube-scheduler leaves them;
 *  - a claim this daemon stamped that comes back without the annotation
 *    or naming another node (a provisioner that cannot provision there
 *    removes it: external-provisioner's reschedule) ends the hold as the
 *    timeout does (reported, nodes given back, backoff), and the gang is
 *    then placed afresh.  A stamp the claim cache has not shown yet is
 *    presented in the snapshot (br_volbind_presented()).
 * kube-scheduler source followed: k8s.io/kubernetes
 * pkg/scheduler/framework/plugins/volumebinding/binder.go (v1.31-v1.37:
 * AssumePodVolumes, BindPodVolumes, bindAPIUpdate, checkBindings).
 */
#ifndef BR_VOLBIND_H
#define BR_VOLBIND_H

#include <stdbool.h>
#include <stdint.h>

#include <topogang/topogang.h>

#include "sched.h"
#include "store.h"

/* A held gang is decided again this often (kube-scheduler's
 * BindPodVolumes polls its claims once a second) */
#define BR_VOLBIND_POLL_MS	1000

/* The annotation (volume.AnnSelectedNode) */
#define BR_ANN_SELECTED_NODE	"volume.kubernetes.io/selected-node"

typedef struct br_volbind br_volbind;

/* \note Destroy with br_volbind_destroy() (NULL accepted). */
br_volbind *br_volbind_create(void);
void br_volbind_destroy(br_volbind *vb);

/* What br_volbind_hold() says of a placed gang */
typedef enum br_volbind_res {
	BR_VOLBIND_BIND = 0,	/* no claim to wait for: bind it */
	BR_VOLBIND_HELD,	/* held: its members keep their nodes */
	BR_VOLBIND_RELEASED	/* held past the timeout (reported): its
				 * nodes are given back, the gang is
				 * retried after its backoff */
} br_volbind_res;

/*
 * A cycle's holds begin (\p k: the cycle's model, whose listed claims
 * are indexed by pod once; \p claims: the PersistentVolumeClaim cache,
 * whose resourceVersions the PATCHes are sent on): a claim is
 * stamped with one node a cycle, across gangs (two gangs can share a
 * claim: the later one is held without stamping, and decided next cycle
 * on the node the claim then names).
 */
void br_volbind_cycle(br_volbind *vb, const tg_k8s *k,
		      const br_store *claims);

/*
 * Gang \p gang's hold ended without a report (the gang not placed again,
 * its reservation given back): held again later, its timeout starts
 * afresh.
 */
void br_volbind_ended(br_volbind *vb, const char *gang);

/*
 * The node this daemon stamped on claim \p o (a PersistentVolumeClaim of
 * the cache) when the cached object is still the one the PATCH was sent
 * against (its resourceVersion): the watch has not shown the stamp yet,
 * and the snapshot presents the claim with it (as an assumed pod is
 * presented bound), so that a cycle meanwhile pins its pods to that node
 * and never stamps another.  NULL otherwise.
 * \note Valid until the next br_volbind_hold() or br_volbind_cycle().
 */
const char *br_volbind_presented(const br_volbind *vb, const br_obj *o);

/*
 * Whether the binding of placed gang \p d (decided on \p t from \p k)
 * waits for its claims; stamps the selected node on those that have
 * none, and reports a wait longer than \p timeout_s (see above).  \p pods
 * is the pod cache (UIDs for Events).  Writes through \p s (I/O thread,
 * while the cycle writes).
 */
br_volbind_res br_volbind_hold(br_volbind *vb, br_sched *s, const tg_k8s *k,
		     const tg_topology *t, const tg_decision *d,
		     const br_store *pods, int64_t now_ms,
		     int64_t timeout_s);

#endif /* BR_VOLBIND_H */
