/*
 * k8s_bridge/sched.h - the scheduling loop: caches in, decisions from the
 * core, API writes out.
 *
 * A cycle (only while leading, only once every cache has synced):
 *
 *  0. Threads: the loop (I/O thread) never waits for the model.  It
 *     takes the changes since the last model from the stores' change
 *     logs (a reference on each object put; see 1) and a reference on
 *     the pods the worker reads itself (objects are immutable and
 *     refcounted, store.h), starts a worker
 *     thread that builds the model and decides the queue, and turns the
 *     loop (watches, the Lease, /healthz, Events) until the worker is
 *     done; the writes then run on the loop as before, and the model
 *     and references are freed on a reaper thread.  Deciding has a
 *     budget (CYCLE_BUDGET_MS; TOPOGANG_BRIDGE_CYCLE_BUDGET_MS for
 *     tests): a cycle decides one gang at least, the gangs left go to
 *     the next cycle, at once, and what they hold stays theirs (a volume
 *     hold is kept while its gang is not reached: hold_kept()).  A cycle
 *     with nothing to decide (no pod pending for us,
 *     nothing assumed, no victim, no Node changed since the last model,
 *     nothing new for /ui's picture, not mixed mode) builds no model at
 *     all: it writes the PodGroup statuses from counts kept from the pod
 *     events and sets its timers (topogang_modelless_cycles_total).
 *  1. Snapshot: the cached objects (nodes, pods bound anywhere and pods
 *     pending for our scheduler name, PriorityClasses, PodDisruption-
 *     Budgets, the dialect CRs) are held by the core's tg_k8s_cache,
 *     fed deltas: the worker puts the objects whose keys the stores
 *     logged since the last model (tg_k8s_cache_put_lent, by reference
 *     to the store's own text, each with its copy's serial, a Node's
 *     since) and removes the gone ones, then builds from the cache's
 *     objects (tg_k8s_use_cache_objects) with this cycle's rewrites
 *     (assumed pods, held members, stamped claims) added as overlays;
 *     the first model, a re-list and an overflowed log clear the cache
 *     and put every object (TOPOGANG_BRIDGE_NO_DELTAS: every object
 *     added one by one each model, as before).
 *     tg_k8s_build gives the topology and the pending gangs in
 *     decision order (priority, then age, then name).  The loader parses
 *     a pod only when the build reads it and keeps the tree of pending
 *     pods only (a bound pod keeps its labels), so a cycle holds no
 *     copy of the cluster.  The core's tg_k8s_cache (s->kcache, kept
 *     between cycles, cleared when an informer lists again) holds the
 *     Nodes' parsed trees and what the loader derived from each bound
 *     pod, so a build parses only what changed and the pending pods,
 *     and the last build's topology, which a build whose Nodes, levels
 *     and resources are the same updates (the nodes whose bound pods
 *     changed) instead of building (Nodes go to the core under their
 *     first copy's serial while their sig stays: br_obj.since,
 *     store.h).  At 12,500 nodes + 100,000 pods a gang's snapshot is
 *     about 70-100 ms (under 1 ms of it applying the deltas) instead of
 *     215-240 handing the cluster over (docs/benchmarks.md).  The build
 *     is still O(cluster) in filing the cached objects, the pods'
 *     records and the kept allocations (off the loop, see 0), which is
 *     why changes are batched (50 ms quiet, 10 ms when only new pending
 *     pods of ours and new CR objects came: br_sched_quiet_ms; 500 ms
 *     at most), a cycle with a model starts
 *     no sooner after the last one than its snapshot took (at most half
 *     the time goes to snapshots), pods and Nodes are slimmed in the
 *     cache (store.h).  The model lives in the worker's malloc arena
 *     and goes back with it (no malloc_trim: trimming every arena held
 *     the loop's arena lock for hundreds of milliseconds at 12,500
 *     nodes, and the steady RSS was the same without it).  Pods
 *     bound by this daemon but not yet seen bound by the watch
 *     ("assumed", as in kube-scheduler) are given bound, until the watch
 *     shows them bound or they go: never on a timer (a late confirmation
 *     must not give a node away twice).
 *  2. Queue: gangs come in the core's order; a gang that was
 *     unschedulable backs off (initial doubling to max) and then waits
 *     for a cluster event (a node changed in what placement reads: not
 *     a heartbeat; a pod went away, ...) or the
 *     flush interval before it is tried again.
 *  3. Decisions: tg_place, then tg_decision_apply so that the next gang
 *     sees the first one's placement or reservation.  Every gang still
 *     pending is decided again in every cycle.  A preempting gang's
 *     members carry status.nominatedNodeName, which the core's loader
 *     reads back as reservations: the reservation is held in the core
 *     from cycle to cycle.  Once its victims are terminating the core
 *     places the gang on its nominated nodes (their resources are the
 *     nominee's); the bridge binds only when the victims are gone, since
 *     the kubelet still runs them until then.
 *  4. Writes, in batches on the one multi handle:
 *     placed:       POST pods/binding per member (pod UID, annotations
 *                   topogang.io/gang, /domain, /rank), events Scheduled.
 *     preempting:   victims get DisruptionTarget then the Eviction API
 *                   (a 429 from a disruption budget is retried after
 *                   Retry-After; or DELETE when configured), event
 *                   Preempted; members get status.nominatedNodeName and
 *                   PodScheduled=False with the core's message.
 *     unschedulable: PodScheduled=False reason Unschedulable with the
 *                   core's message on every member (strategic merge
 *                   patch of pods/status) when the message changed, and
 *                   a FailedScheduling event on every attempt.
 *     PodGroups:    the scheduler-plugins / Koordinator PodGroup of each
 *                   gang we handle gets status.phase (Pending, Scheduling,
 *                   Scheduled, Running), scheduled, running and
 *                   scheduleStartTime (merge patch of podgroups/status),
 *                   when they changed.
 *  Events: an Event identical to one sent in the last 6 minutes (same
 *  object, type, reason, action and note) joins its series: the first
 *  one's series.count and lastObservedTime are patched, at most once a
 *  second, instead of a new Event (client-go's events recorder).
 *
 * Mixed mode (env.mixed, mixed.h): the snapshot is built as above, then
 * br_mixed_cycle() does the rest: Slurm decides, through slurmrestd.
 *
 * Half-bound gangs (binding is not atomic): a binding that fails for good
 * leaves a gang with some members bound.  The daemon does not unbind
 * (impossible) and does not evict at once: the gang stays queued, and
 * from then on its pending members are placed with node selectors that
 * pin them to the domain recorded on the bound members (topogang.io/
 * domain).  So the gang completes where it started, which is the usual
 * case (the domain was just reserved for it; a crash of the daemon
 * mid-gang ends here too).  Only when the rest cannot be placed in that
 * domain for repair_grace seconds are the bound members evicted, so that
 * their controller recreates them and the gang is placed whole again;
 * never while the rest is preempting its way into the domain (the grace
 * counts from the end of the preemption).
 * Why: evicting first would restart pods that are fine and lose the
 * domain; retrying alone could leave a gang half-bound forever.
 */
#ifndef BR_SCHED_H
#define BR_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include <cJSON.h>

#include "bconfig.h"
#include "http.h"
#include "informer.h"
#include "metrics.h"

typedef struct br_sched_env {
	br_http *h;
	const br_config *cfg;
	br_metrics *m;
	br_informer *nodes, *pods, *pcs, *pdbs;
	br_informer *const *feed;	/* CRs the core reads */
	unsigned nfeed;
	br_informer *upg;	/* scheduling.k8s.io v1alpha2 PodGroups */
	struct br_mixed *mixed;	/* mixed mode (mixed.h): Slurm places */
	bool (*leading)(void *ud);	/* checked before every batch */
	/* after each cycle, while its model lives: the topology with the
	 * cycle's decisions applied (the /ui picture, ui.h); NULL = none */
	void (*on_model)(void *ud, const tg_topology *t, const tg_k8s *k,
			 const tg_decision *const *d, size_t nd);
	void *ud;
} br_sched_env;

typedef struct br_sched br_sched;

/* \note Destroy with br_sched_destroy(); \p env's pointers outlive it. */
br_sched *br_sched_create(const br_sched_env *env);
void br_sched_destroy(br_sched *s);

/* An informer's change (called from informer callbacks: flags only). */
void br_sched_on_event(br_sched *s, br_informer *inf, int type,
		       const br_obj *old, const br_obj *cur);

/*
 * Whether the counts kept from the events (pods pending for us, bound
 * members by gang) equal a walk of the pod cache; false with the first
 * difference in \p err.  For tests.
 */
bool br_sched_check(const br_sched *s, char *err, size_t n);

/* Whether a cycle is due now. */
bool br_sched_due(const br_sched *s, int64_t now_ms);
/*
 * How long the changes since the last cycle wait, with no new one, before
 * a cycle starts: 10 ms when they are only new pending pods of ours and
 * new objects of the CRs the core reads (a gang created: its PodGroup and
 * pods come in one burst; a gang whose members come slower is not ready
 * yet when its size is known, so the core builds no gang of it and it
 * waits for a later cycle, which costs a cycle, not a decision; pods
 * that came before their PodGroup wait for it, reported unschedulable,
 * and the PodGroup's arrival starts the cycle that places them; a
 * minMember below the replicas places the later ones on their own,
 * more often at 10 ms than at 50: docs/benchmarks.md), else 50 ms
 * (updates and deletions batched).  Either way a change waits at most
 * 500 ms.
 */
int64_t br_sched_quiet_ms(const br_sched *s);
/* Runs one cycle (drives the loop while it waits for the server). */
void br_sched_cycle(br_sched *s);
/*
 * Posts queued Events, a few at a time, when no cycle is writing: an
 * Event is for people, a binding is the job, so bindings go first (as
 * kube-scheduler's asynchronous event broadcaster).  Called every loop
 * turn.
 */
void br_sched_pump(br_sched *s);
/* Leadership lost: cancels the writes in flight; a cycle stops. */
void br_sched_stop(br_sched *s);
/* Whether a cycle is running (the loop must not start another). */
bool br_sched_busy(const br_sched *s);

/* Gangs in the last cycle's queue, and how many were waiting on
 * victims, for /metrics. */
unsigned br_sched_pending(const br_sched *s);
unsigned br_sched_waiting(const br_sched *s);
/* Objects the core's model cache holds (fed as deltas; 0 with
 * TOPOGANG_BRIDGE_NO_DELTAS, which hands the cluster over whole).  Not
 * while a cycle's worker runs. */
size_t br_sched_model_objects(const br_sched *s);

/*
 * For mixed mode (mixed.c), which writes as the cycle does: an Event
 * (queued behind the writes), an eviction (Eviction API or DELETE, as
 * configured), a batch of requests run to completion (cancelled when
 * leadership is lost), and whether this replica still leads.
 */
void br_sched_event(br_sched *s, const char *type, const char *reason,
		    const char *action, const char *note, const char *kind,
		    const char *ns, const char *name, const char *uid);
br_req *br_sched_evict_req(br_sched *s, const char *ns, const char *name,
			   const char *uid);
void br_sched_run_batch(br_sched *s, br_req **reqs, size_t n);
bool br_sched_leading(br_sched *s);
/*
 * Requests built the same way on both paths.  br_sched_json_req: \p method
 * \p path with \p j as its \p ctype body; takes \p path (freed) and \p j
 * (deleted).  br_sched_status_req: PATCH pods/status (strategic merge),
 * PodScheduled=False with \p reason and \p msg (NULL: no condition) and/or
 * the nomination ("" clears it, NULL leaves it).
 */
br_req *br_sched_json_req(const char *method, char *path, const char *ctype,
			  cJSON *j);
br_req *br_sched_status_req(const char *ns, const char *name,
			    const char *reason, const char *msg,
			    const char *nominated);
/*
 * POST pods/binding of \p ns/\p name (\p uid) to \p node, annotated
 * topogang.io/gang, /domain and /rank, and \p xkey: \p xval as well
 * when both are given (mixed mode: topogang.io/slurm-job).
 */
br_req *br_sched_binding_req(const char *ns, const char *name,
			     const char *uid, const char *node,
			     const char *gang, const char *domain,
			     unsigned rank, const char *xkey,
			     const char *xval);

/*
 * Object key \p key ("ns/name") into \p ns and \p name (each bounded:
 * \p nn, \p n bytes); a key without a slash is \p name in namespace
 * "default".
 */
void br_split_key(const char *key, char *ns, size_t nn, char *name,
		  size_t n);

#endif /* BR_SCHED_H */
