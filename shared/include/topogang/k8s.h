/*
 * topogang/k8s.h - Kubernetes cluster snapshots as the core's model.
 *
 * Takes the objects `kubectl get nodes,pods,podgroups,... -o json|yaml`
 * prints (a v1 List, a single object, or a stream of objects) and turns
 * them into a topology (nodes, free resources, running allocations) and
 * the pending gangs in decision order: higher priority first, then older
 * (metadata.creationTimestamp), then by name.
 *
 * Topology levels come from, first match wins: tg_k8s_set_levels(); the
 * Koordinator ClusterNetworkTopology named "default"; a KAI Topology
 * (kai.scheduler/v1alpha1) or Kueue Topology (kueue.x-k8s.io v1beta1,
 * v1beta2), the one a pending gang names, else the first by name; else a
 * preset whose keys the nodes carry (topograph fabric.topograph.run/tier-N
 * + accelerator.topograph.run/domain, network.topology.nvidia.com/{spine,block,...},
 * topology.kubernetes.io/{region,zone}).
 *
 * Gang dialects: Koordinator, scheduler-plugins, KAI/Run:ai, Kueue,
 * LeaderWorkerSet (tg_k8s_dialect_name()); a pending pod in no group is a
 * gang of one.
 *
 * Pods' topologySpreadConstraints and required pod (anti-)affinity follow
 * kube-scheduler (docs/kubernetes.md, "Kubernetes placement rules"): bound pods
 * record their namespace and labels with their allocation, members
 * theirs with the gang, so that the gangs of one pass, each decision
 * applied before the next, count each other; Namespace objects give the
 * labels a namespaceSelector matches.
 *
 * Everything the loader cannot use is reported: tg_k8s_warning().
 * Malformed text is one error naming the input; an object with a bad
 * field costs only its gang or its node (tg_k8s_failed(), a warning),
 * with a message naming the object and the field ("Pod default/x:
 * spec.containers[0].resources.requests.cpu: bad quantity '8x'").
 */
#ifndef TOPOGANG_K8S_H
#define TOPOGANG_K8S_H

#include "topogang/place.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tg_k8s tg_k8s;

/*
 * Creates an empty snapshot.  NULL when out of memory.
 * \note The caller destroys it with tg_k8s_destroy().
 */
tg_k8s *tg_k8s_create(void);
/*
 * Frees the snapshot: its objects, gangs, warnings and failures (every
 * string it handed out).  The topology tg_k8s_build() gave is the
 * caller's and stays.  Accepts NULL.
 */
void tg_k8s_destroy(tg_k8s *k);

/* Ordered level label keys, farthest first (the --levels flag). */
tg_err tg_k8s_set_levels(tg_k8s *k, const char *const *keys, unsigned n);
/* Only pending pods with this spec.schedulerName are requests. */
tg_err tg_k8s_set_scheduler_name(tg_k8s *k, const char *name);

/*
 * Adds objects from JSON or YAML text (detected); \p source names the
 * input in messages ("cluster.json").
 */
tg_err tg_k8s_add(tg_k8s *k, const char *buf, size_t len, const char *source,
		  tg_errinfo *ei);
/*
 * tg_k8s_add() of the file at \p path (at most TG_MAX_FILE bytes, else
 * TG_ELIMIT), named by its path in messages; TG_EIO (with the system's
 * reason) when it cannot be read, TG_ESTATE after tg_k8s_build().  On an
 * error nothing of the file is kept.
 * \note The file's text is read and freed within the call.
 */
tg_err tg_k8s_add_file(tg_k8s *k, const char *path, tg_errinfo *ei);

/*
 * Adds one object, for hosts that keep their objects as JSON text and
 * build often (the bridge's caches): \p json is one JSON object of
 * \p kind and \p api_version ("v1", "policy/v1") named \p ns (NULL or ""
 * when cluster-scoped) and \p name, as the host read them from it; they
 * are trusted.  Pods are parsed by tg_k8s_build() one at a time, and a
 * bound pod's tree is dropped as soon as it is read (its labels stay), so
 * a build's memory follows the pending work, not the cluster; other
 * kinds are parsed now.  \p source names the input in messages;
 * consecutive calls with the same source share one entry.
 * \note \p json, \p ns and \p name are borrowed: they must stay valid
 * and unchanged until tg_k8s_build() has returned (or tg_k8s_destroy()).
 * The other strings are copied.
 */
tg_err tg_k8s_add_object(tg_k8s *k, const char *json, size_t len,
			 const char *kind, const char *api_version,
			 const char *ns, const char *name, const char *source,
			 tg_errinfo *ei);

/*
 * tg_k8s_add_object() with a \p version: a number the host changes
 * whenever the object's text changes (a serial it gives each copy of an
 * object it reads), 0 when it has none.  With a cache attached
 * (tg_k8s_set_cache()) a Node or a bound or ended Pod whose (namespace,
 * name, version) the cache has seen is not parsed again: the build takes
 * the Node's tree, or what it derived from the pod, from the cache.  The
 * host must never give two texts of one object that differ in anything
 * the loader reads the same nonzero version (metadata.resourceVersion
 * it never reads: the bridge keeps a Node's version across heartbeats).
 */
tg_err tg_k8s_add_object_version(tg_k8s *k, const char *json, size_t len,
				 const char *kind, const char *api_version,
				 const char *ns, const char *name,
				 const char *source, uint64_t version,
				 tg_errinfo *ei);

/*
 * A cache kept between the snapshots of a host that builds often: the
 * parsed trees of Nodes, and what builds derive from bound and ended pods
 * (their node, requests, priority fields, creation time, gang, labels and
 * required anti-affinity), by (namespace, name, version): a build with a
 * cache parses only the Nodes and pods that are new, changed or pending.
 * A pod's PriorityClass is resolved again at every build.  A record is
 * kept only for a pod read without a warning or an error, so a build
 * with a cache gives the same topology, gangs, warnings and failures as
 * one without; the records of objects a build did not see are dropped at
 * its end, the pods' all when the gang dialects change.  At most
 * K8S_MAX_CACHED pod records (2^22, the loader's bound: past it, pods are
 * parsed as without a cache, which changes no result).
 * \note The caller destroys it with tg_k8s_cache_destroy() (NULL is
 * accepted) after the last snapshot that uses it is destroyed; one
 * snapshot at a time, from its first add to its build.
 */
typedef struct tg_k8s_cache tg_k8s_cache;
/* An empty cache; NULL when out of memory. */
tg_k8s_cache *tg_k8s_cache_create(void);
/* Frees the cache and every record (Nodes' trees included); accepts
 * NULL.  Never while a snapshot attached to it is not yet destroyed. */
void tg_k8s_cache_destroy(tg_k8s_cache *c);
/* Drops every record and object (a host's re-list starts from scratch);
 * never while a snapshot attached to it is between its first add and
 * its build. */
void tg_k8s_cache_clear(tg_k8s_cache *c);
/* Records held (pods and Nodes); 0 for NULL. */
size_t tg_k8s_cache_size(const tg_k8s_cache *c);
/* Of the last build that used \p c: the objects it took from the cache
 * (*hits) and those it parsed (*misses); 0 for NULL.  Either pointer may
 * be NULL. */
void tg_k8s_cache_stats(const tg_k8s_cache *c, size_t *hits, size_t *misses);
/*
 * Whether the last build that used \p c updated the topology the cache
 * kept instead of building one: the cache keeps the nodes, layers and
 * allocations of its last build, and a build whose Nodes (every one a
 * tree the cache lent, as many as then), levels, resources asked for
 * before the nodes, closed nodes and disruption budgets' names are the
 * same takes a copy of it, with the allocations of the nodes where
 * bound pods came, went or changed made again.  The result is the same
 * as a full build's.  False for NULL.
 */
bool tg_k8s_cache_reused(const tg_k8s_cache *c);
/*
 * Attaches \p c (NULL: none) to the snapshot, before its first
 * tg_k8s_add_object_version(); TG_ESTATE after the build.
 * \note \p c is borrowed: it must outlive the snapshot.
 */
tg_err tg_k8s_set_cache(tg_k8s *k, tg_k8s_cache *c);

/*
 * The cluster as a model the cache keeps, fed from watch events: the
 * cache holds the objects themselves, a host puts an object when it is
 * added or changed and removes it when it is deleted, and a snapshot
 * that uses the cache's objects (tg_k8s_use_cache_objects()) is built
 * from all of them without the host handing the cluster over again.
 *
 * tg_k8s_cache_put() takes one object as tg_k8s_add_object_version()
 * does (the same arguments and bounds; \p version as there: a Node or a
 * bound pod put again with the version the cache holds is not read
 * again, and the host must never give two texts of one object that
 * differ in anything the loader reads the same nonzero version), and
 * replaces the one with the same identity: its kind, API group (the part
 * of \p api_version before '/', "" for the core group), namespace as
 * given and name.  An object is read now as tg_k8s_add_object() reads
 * it: a Node or an object of another kind than Pod is parsed (a Node's
 * tree is kept for the builds), a pod's text is kept for the build, which
 * reads it then (a bad field costs its gang or its node, as ever).  An
 * object that cannot be read costs only itself: the call fails with the
 * add's error (TG_EPARSE naming \p source and the place), the cache
 * drops what it held of that identity, and every build goes on without
 * it.  At most K8S_MAX_OBJECTS (2^24, the loader's bound) objects:
 * TG_ELIMIT past it.  tg_k8s_cache_put() copies the text, namespace and
 * name; tg_k8s_cache_put_lent() borrows them (they must stay valid and
 * unchanged) and calls \p release(\p ud) once the cache lets go of them:
 * when the object is replaced or removed, at tg_k8s_cache_clear() or
 * tg_k8s_cache_destroy(), or before it returns when it fails; a put of
 * the version the cache holds replaces the text (and releases the old)
 * but reads nothing again.  The other strings are copied.
 *
 * tg_k8s_cache_remove() drops the object of that identity: TG_ENOENT
 * when the cache holds none, TG_EINVAL for bad arguments.
 * tg_k8s_cache_clear() drops every object too (a host's re-list: it then
 * puts every object again).  What builds derived from a removed object
 * goes at the end of the next build.
 *
 * tg_k8s_use_cache_objects() makes tg_k8s_build() read every object the
 * cache holds besides the ones added to the snapshot; an object added
 * with the identity of a cached one replaces it for this snapshot only
 * (an overlay: a host's per-build rewrite of an object, such as a pod it
 * bound that the watch has not shown bound yet), without the warning two
 * added copies give.  The result is the same as a snapshot given every
 * object by tg_k8s_add_object_version(), whatever the order of the puts.
 * TG_EINVAL without a cache (tg_k8s_set_cache() first), TG_ESTATE after
 * the build.
 * \note Never put, remove or clear while a snapshot attached to the
 * cache is between its first add and the end of its build: the build
 * reads the cache's texts and trees.  Each function is for one thread at
 * a time, as the rest of the cache.
 */

/*
 * Puts one object into the cache (see above): added, or replacing the
 * one of its identity.  TG_EINVAL for bad arguments, TG_ELIMIT past the
 * loader's bounds, TG_EPARSE (and the identity dropped) when it cannot
 * be read, TG_ENOMEM.
 * \note \p json, \p ns and \p name are copied.
 */
tg_err tg_k8s_cache_put(tg_k8s_cache *c, const char *json, size_t len,
			const char *kind, const char *api_version,
			const char *ns, const char *name, const char *source,
			uint64_t version, tg_errinfo *ei);
/*
 * tg_k8s_cache_put() without the copy: TG_EINVAL without \p release.
 * \note \p json, \p ns and \p name are borrowed until \p release(\p ud),
 * which the cache calls exactly once: when it lets go of the object, or
 * before it returns an error.
 */
tg_err tg_k8s_cache_put_lent(tg_k8s_cache *c, const char *json, size_t len,
			     const char *kind, const char *api_version,
			     const char *ns, const char *name,
			     const char *source, uint64_t version,
			     void (*release)(void *ud), void *ud,
			     tg_errinfo *ei);
/* Drops the object of that identity (kind, API group, namespace as put,
 * name); TG_ENOENT when the cache holds none, TG_EINVAL for bad
 * arguments. */
tg_err tg_k8s_cache_remove(tg_k8s_cache *c, const char *kind,
			   const char *api_version, const char *ns,
			   const char *name);
/* Objects the cache holds (tg_k8s_cache_put()); 0 for NULL. */
size_t tg_k8s_cache_nobjects(const tg_k8s_cache *c);
/* The snapshot's build reads every object its cache holds, the objects
 * added to it replacing those of their identity (see above); TG_EINVAL
 * without a cache, TG_ESTATE after the build. */
tg_err tg_k8s_use_cache_objects(tg_k8s *k);

/*
 * Builds the topology and the gangs from everything added.  May be called
 * once: a second call is TG_ESTATE, and so is a call after a failed one
 * that got past the nodes when some came from tg_k8s_add_object() (their
 * parsed trees are dropped as it goes); a failed build leaves none of
 * its warnings, no failures and no gangs behind.
 * tg_k8s_add() and the setters are TG_ESTATE after a build.
 * \note *topo belongs to the caller (tg_topology_destroy()); the
 * gangs belong to \p k.
 */
tg_err tg_k8s_build(tg_k8s *k, tg_topology **topo, tg_errinfo *ei);

/* The number of pending gangs tg_k8s_build() made (0 before it, and for
 * NULL); the failed ones (tg_k8s_nfailed()) are not counted. */
unsigned tg_k8s_ngangs(const tg_k8s *k);
/*
 * Pending gang \p i in decision order; NULL out of range.
 * \note Owned by \p k: valid until tg_k8s_destroy(); never destroy it.
 */
tg_gang *tg_k8s_gang(const tg_k8s *k, unsigned i);

/*
 * Fault isolation: an object that cannot be read costs only what depends
 * on it.  A pending pod or PodGroup with a bad field (an annotation that
 * is not the JSON it should be, a quantity that does not parse, a field
 * of the wrong type) makes its gang fail: the gang is not among
 * tg_k8s_gang() but listed here, with a message naming the input, the
 * object and the field; every other gang is built.  A Node that cannot be
 * read is left out, a bound pod that cannot be read keeps its node from
 * taking new pods, a Topology or ClusterNetworkTopology that contradicts
 * itself is ignored: each with a warning (tg_k8s_warning()).  The list
 * also holds the gangs that wait for their group object or their
 * members (tg_k8s_failed_waits()).
 *
 * tg_k8s_failed() returns the gang's name ("namespace/name") and sets
 * *reason; tg_k8s_failed_pod() the pending pods ("namespace/name") of
 * that gang.  In the order of the gangs' first pods (namespace, name).
 * \note The strings are valid until tg_k8s_destroy(); NULL when \p i or
 * \p j is out of range.
 */
unsigned tg_k8s_nfailed(const tg_k8s *k);
const char *tg_k8s_failed(const tg_k8s *k, unsigned i, const char **reason);
/*
 * Whether listed gang \p i is not failed but waits: its pods name a group
 * object (a scheduler-plugins, Koordinator or KAI PodGroup; the upstream
 * scheduling.k8s.io one as a Koordinator PodGroup) the snapshot lacks.
 * *reason then names it ("PodGroup NAMESPACE/NAME (API group) not
 * found; the gang waits for it"), as those schedulers make such pods
 * wait (scheduler-plugins' PodGroupNotFound, Koordinator's "gang has not
 * init"); or the gang has fewer pods, pending and running, than its size
 * ("the gang needs N pods and fewer are pending or running; it waits for
 * the rest"; coscheduling's PreFilter), or a GangGroup member has no pods
 * yet.  A host reports the pods unschedulable, not failed (no backoff),
 * and a later snapshot with what was missing builds the gang.  Gangs
 * whose dialect defines them on the pods alone (Koordinator's gang
 * annotations, Kueue pod groups, LeaderWorkerSet replicas) never wait for
 * an object.  false when \p i is out of range.
 */
bool tg_k8s_failed_waits(const tg_k8s *k, unsigned i);
/* The number of pending pods of failed gang \p i (the \p j range of
 * tg_k8s_failed_pod()); 0 out of range. */
unsigned tg_k8s_failed_npods(const tg_k8s *k, unsigned i);
const char *tg_k8s_failed_pod(const tg_k8s *k, unsigned i, unsigned j);

/*
 * Claims pending pods wait on, from tg_k8s_build(): unbound
 * PersistentVolumeClaims of a WaitForFirstConsumer StorageClass with a
 * provisioner (dynamic provisioning), as kube-scheduler's VolumeBinding
 * plugin handles them.  tg_k8s_claim() returns claim \p i
 * ("namespace/name") and sets *pod to the pending pod that uses it
 * ("namespace/name") and *node to the node already in its
 * volume.kubernetes.io/selected-node annotation, or NULL when it has none
 * yet.  The pod is placed only where the claim can be provisioned (its
 * class's allowedTopologies, or that node); once its gang is placed, the
 * host stamps the placement's node on every claim with *node NULL and
 * binds the gang's pods only when no claim of theirs is listed any more
 * (the claims are bound).  A pod with two claims is listed twice, a
 * claim used by two pending pods once per pod; in the order the pods
 * were read.
 * \note The strings are valid until tg_k8s_destroy(); NULL when \p i is
 * out of range.
 */
size_t tg_k8s_nclaims(const tg_k8s *k);
const char *tg_k8s_claim(const tg_k8s *k, size_t i, const char **pod,
			 const char **node);

/*
 * Warnings of tg_k8s_add() and tg_k8s_build(), in the order they arose:
 * tg_k8s_nwarnings() counts them.  At most 1000 are kept (the loader's
 * K8S_MAX_WARNINGS); tg_k8s_build() then adds one line "... and N more
 * warnings".  A failed tg_k8s_add() or tg_k8s_build() keeps none of its
 * own.
 */
unsigned tg_k8s_nwarnings(const tg_k8s *k);
/*
 * Warning \p i, one line naming the input and the object; NULL past the
 * end.
 * \note Owned by \p k: valid until tg_k8s_destroy().
 */
const char *tg_k8s_warning(const tg_k8s *k, unsigned i);

/*
 * The gang dialects the loader reads, for hosts that must know the keys
 * that make a pod a member of a gang (the bridge: whether a pod names its
 * gang already).  tg_k8s_dialect_name() gives the \p i-th dialect's name
 * ("koordinator", "scheduler-plugins", "kueue", "kai",
 * "leaderworkerset"); tg_k8s_dialect_key() the \p i-th label or
 * annotation key of dialect \p dialect, or of all of them when \p dialect
 * is NULL, in the order the loader tries them (the first a pod carries
 * names its gang; LeaderWorkerSet's also needs its group-index label), and
 * sets *annotation (when not NULL) to whether it is an annotation key.
 * \note Static strings; NULL past the last one or for an unknown dialect.
 */
const char *tg_k8s_dialect_name(unsigned i);
const char *tg_k8s_dialect_key(const char *dialect, unsigned i,
			       bool *annotation);

/*
 * The group object of dialect \p dialect, for hosts that watch it (an
 * informer): its kind ("PodGroup"), API group, resource ("podgroups") and
 * the versions to ask for, preferred first, NULL-ended (the loader reads
 * any version).  Each out pointer may be NULL.  TG_EINVAL for an unknown
 * dialect or one whose gangs have no object (Kueue, LeaderWorkerSet).
 * \note Static strings.
 */
tg_err tg_k8s_dialect_group(const char *dialect, const char **kind,
			    const char **api, const char **resource,
			    const char *const **versions);

/*
 * Parses a Kubernetes quantity ("8", "500m", "32Gi", "1e3") into an
 * integer: with \p milli, thousandths (cpu millicores), else whole units
 * rounded up.  TG_EINVAL for anything else.
 */
tg_err tg_k8s_quantity(const char *s, bool milli, int64_t *out);

#ifdef __cplusplus
}
#endif
#endif /* TOPOGANG_K8S_H */
