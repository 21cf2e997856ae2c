/*
 * topogang/topology.h - the topology model.
 *
 * A topology is a tree.  Its layers are named and ordered farthest ->
 * closest (region, zone, spine, block, rack, NVL72 clique ...); the root
 * (the whole cluster) sits above the first layer and nodes are the leaves
 * below the last.  A domain is identified by its full path of label values
 * ("spine-1/block-3"), never by its bare value: two "block-1" under
 * different spines are two domains.
 *
 * Life cycle:
 *   tg_topology_create()
 *   tg_topology_add_layer() ...           (all layers first)
 *   tg_topology_add_node() + node setters (any number of nodes)
 *   tg_topology_build()                   (freezes layers and nodes)
 *   tg_topology_add_alloc() / tg_place() / tg_decision_apply() ...
 *   tg_topology_destroy()
 *
 * Nodes whose path misses a value on some layer cannot be placed into any
 * domain.  They are kept (gangs without any topology request may still use
 * them) and each one is reported by tg_topology_warning(); a missing label
 * is never silently ignored.
 *
 * Resources are interned names with an id.  Ids 0..3 always exist:
 * TG_RES_CPU (millicores), TG_RES_MEMORY (bytes), TG_RES_GPU (whole GPUs,
 * "nvidia.com/gpu") and TG_RES_PODS (pod slots).  Other names ("rdma/ib",
 * "hugepages-2Mi") get ids on first use.
 *
 * One topology is not thread-safe (tg_place() uses scratch space inside
 * it); two topologies may be used from two threads at once: the library
 * keeps no mutable state outside its handles, save the allocator set once
 * by tg_set_allocator() before any other call (tests/unit/test_reentrant).
 */
#ifndef TOPOGANG_TOPOLOGY_H
#define TOPOGANG_TOPOLOGY_H

#include <stdbool.h>
#include "topogang/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tg_topology tg_topology;
typedef uint32_t tg_node_id;
typedef uint32_t tg_domain_id;

enum {
	TG_RES_CPU = 0,
	TG_RES_MEMORY = 1,
	TG_RES_GPU = 2,
	TG_RES_PODS = 3
};

/* A resource vector indexed by resource id. */
typedef struct tg_shape {
	int64_t v[TG_MAX_RESOURCES];
} tg_shape;

typedef enum tg_taint_effect {
	TG_TAINT_NO_SCHEDULE = 0,
	TG_TAINT_PREFER_NO_SCHEDULE,
	TG_TAINT_NO_EXECUTE
} tg_taint_effect;

/*
 * Creates an empty topology.  Returns NULL when out of memory.
 * \note The caller destroys it with tg_topology_destroy().
 */
tg_topology *tg_topology_create(void);

/* Destroys a topology and everything it owns.  Accepts NULL. */
void tg_topology_destroy(tg_topology *t);

/*
 * Appends a layer below the existing ones (so call farthest first).
 * \p name is what requests refer to ("SpineLayer", "block"); \p key is the
 * node label key the layer is read from, or NULL.  Requests may name a
 * layer by its name or by its key.  Only before the first node is added.
 */
tg_err tg_topology_add_layer(tg_topology *t, const char *name,
			     const char *key);

/* The number of layers added so far (root excluded); 0 for NULL. */
unsigned tg_topology_nlayers(const tg_topology *t);
/*
 * The name of \p layer (0 = farthest), as tg_topology_add_layer() got it.
 * \note Owned by \p t: valid until tg_topology_destroy(); NULL for an
 * index out of range.
 */
const char *tg_topology_layer_name(const tg_topology *t, unsigned layer);
/*
 * The node label key \p layer is read from; NULL when the layer was added
 * without one, or for an index out of range.
 * \note Owned by \p t: valid until tg_topology_destroy().
 */
const char *tg_topology_layer_key(const tg_topology *t, unsigned layer);
/* Finds a layer by name or label key; TG_NONE when there is none. */
unsigned tg_topology_layer_find(const tg_topology *t, const char *name);

/*
 * Interns a resource name and returns its id in *id.  TG_ELIMIT past
 * TG_MAX_RESOURCES distinct names.
 */
tg_err tg_topology_resource(tg_topology *t, const char *name, unsigned *id);
/* The number of resource names interned so far (at least 4: ids 0..3
 * always exist); 0 for NULL. */
unsigned tg_topology_nresources(const tg_topology *t);
/*
 * The name of resource \p id ("cpu", "nvidia.com/gpu", "rdma/ib"); NULL
 * for an id not interned.
 * \note Owned by \p t: valid until tg_topology_destroy().
 */
const char *tg_topology_resource_name(const tg_topology *t, unsigned id);

/*
 * Adds a node.  \p path holds one label value per layer (farthest first);
 * a NULL entry (or a NULL \p path) means "missing".  Node names are
 * unique (TG_EEXIST).  Only before tg_topology_build().
 */
tg_err tg_topology_add_node(tg_topology *t, const char *name,
			    const char *const *path, tg_node_id *id);

/* Sets the allocatable amount of a resource on a node (free = it). */
tg_err tg_topology_node_set_resource(tg_topology *t, tg_node_id n,
				     unsigned res, int64_t allocatable);

/*
 * Declares the node's GPUs and their NVLink islands: \p island[i] is the
 * island of GPU i (GPUs in one island share NVLink; e.g. 0,0,0,0,1,1,1,1).
 * \p island may be NULL (one island).  Also sets TG_RES_GPU allocatable.
 */
tg_err tg_topology_node_set_gpus(tg_topology *t, tg_node_id n,
				 unsigned ngpus, const uint8_t *island);

/* Adds a node label (used by node selectors and affinity terms). */
tg_err tg_topology_node_add_label(tg_topology *t, tg_node_id n,
				  const char *key, const char *value);

/* Adds a taint; value may be NULL. */
tg_err tg_topology_node_add_taint(tg_topology *t, tg_node_id n,
				  const char *key, const char *value,
				  tg_taint_effect effect);

/* Marks a node unschedulable (cordoned, drained, down). */
tg_err tg_topology_node_set_unschedulable(tg_topology *t, tg_node_id n,
					  bool unschedulable);

/*
 * Freezes the structure: builds the domain tree, orders it by the total
 * order on full paths and records a warning (tg_topology_warning()) for
 * every node left out of the tree: a node missing a layer's value is
 * left out, even when it has values below the missing one (a block but
 * no spine); that is a warning, not an error.  A node missing only the
 * lowest layer's value when that layer is an NVLink domain (see the
 * bandwidth model below) becomes its own domain there, with a warning.
 * TG_ESTATE (with \p ei) when already built, TG_ENOMEM with nothing
 * built (the topology stays as it was), TG_EINVAL for a NULL \p t.
 */
tg_err tg_topology_build(tg_topology *t, tg_errinfo *ei);

/*
 * Checks the model's invariants (tree order, ranges, free <= allocatable,
 * allocations consistent with free resources, the index label spreads
 * count through).  TG_OK or TG_ESTATE with a
 * message naming the first broken invariant.
 */
tg_err tg_topology_check(const tg_topology *t, tg_errinfo *ei);

/* The number of nodes; node ids are 0 .. tg_topology_nnodes() - 1, in
 * the order they were added.  0 for NULL. */
unsigned tg_topology_nnodes(const tg_topology *t);
/*
 * The name of node \p n; NULL for an id out of range.
 * \note Owned by \p t: valid until tg_topology_destroy().
 */
const char *tg_topology_node_name(const tg_topology *t, tg_node_id n);
/*
 * Looks a node up by its exact name and sets *id (when \p id is not
 * NULL).  TG_ENOENT when no node has that name (or \p t or \p name is
 * NULL).
 */
tg_err tg_topology_node_find(const tg_topology *t, const char *name,
			     tg_node_id *id);
/* The allocatable amount of resource \p res on node \p n, as set by
 * tg_topology_node_set_resource() (or tg_topology_node_set_gpus()); 0
 * when unset or for an id out of range. */
int64_t tg_topology_node_allocatable(const tg_topology *t, tg_node_id n,
				     unsigned res);
/* What is left of resource \p res on node \p n: allocatable minus every
 * live allocation (nominated ones included).  Below zero when the node is
 * over-committed (tg_topology_add_alloc()); 0 for an id out of range. */
int64_t tg_topology_node_free(const tg_topology *t, tg_node_id n,
			      unsigned res);
/* The free GPUs of node \p n as a mask (bit i = GPU i free); 0 for an id
 * out of range. */
uint64_t tg_topology_node_free_gpus(const tg_topology *t, tg_node_id n);
/* The GPUs declared on node \p n (tg_topology_node_set_gpus()); 0 when
 * none were or for an id out of range. */
unsigned tg_topology_node_ngpus(const tg_topology *t, tg_node_id n);
/* The node's label value for \p key, or NULL. */
const char *tg_topology_node_label(const tg_topology *t, tg_node_id n,
				   const char *key);
/* The node's leaf domain, TG_NONE when it is outside the tree. */
tg_domain_id tg_topology_node_domain(const tg_topology *t, tg_node_id n);

/* Domains (after build).  Domain 0 is the root (the cluster). */
unsigned tg_topology_ndomains(const tg_topology *t);
/* Layer of a domain: 0..nlayers-1, TG_NONE for the root. */
unsigned tg_topology_domain_layer(const tg_topology *t, tg_domain_id d);
/* The parent of domain \p d (0, the root, for a domain of the first
 * layer); TG_NONE for the root itself and for an id out of range. */
tg_domain_id tg_topology_domain_parent(const tg_topology *t, tg_domain_id d);
/* The bare label value ("block-3"), "" for the root. */
const char *tg_topology_domain_value(const tg_topology *t, tg_domain_id d);
/* The full path ("spine-1/block-3"), "" for the root. */
const char *tg_topology_domain_path(const tg_topology *t, tg_domain_id d);
/*
 * Looks a domain up by its full path ("spine-1/block-3"; "" is the root)
 * and sets *id (when \p id is not NULL).  TG_ENOENT when no domain has
 * that path (before tg_topology_build() none has), TG_EINVAL for a NULL
 * \p t or \p path.  A linear scan: O(domains).
 */
tg_err tg_topology_domain_find(const tg_topology *t, const char *path,
			       tg_domain_id *id);

/* Warnings recorded by build (nodes left out, label problems):
 * tg_topology_nwarnings() counts them. */
unsigned tg_topology_nwarnings(const tg_topology *t);
/*
 * Warning \p i, one line naming the node or layer; NULL past the end.
 * \note Owned by \p t: valid until tg_topology_destroy().
 */
const char *tg_topology_warning(const tg_topology *t, unsigned i);

/* A pod label (key, value); the value may be "". */
typedef struct tg_label {
	const char *key;
	const char *value;
} tg_label;

/*
 * Allocations: running or bound work that consumes resources on a node.
 * Members of one gang share \p gang; preemption removes whole gangs.
 * A pod's namespace and labels (Kubernetes) are what topology spreads
 * and pod affinity with a label selector count (gang.h); allocations
 * alike share one interned copy.
 */
typedef struct tg_alloc_spec {
	const char *pod;	/* unique name, e.g. "ns/pod" or "job 42" */
	const char *gang;	/* gang name; NULL = the pod is its own gang */
	tg_node_id node;
	const tg_shape *shape;	/* NULL = nothing but one pod slot */
	uint64_t gpus;		/* GPU indices held (bit i = GPU i) */
	int64_t priority;
	bool preemptible;	/* false: never a victim */
	bool nominated;		/* a reservation, not yet running */
	int64_t expires;	/* nominated: lapses at this time, 0 = never */
	const char *budget;	/* disruption budget name, NULL = none */
	const char *ns;		/* namespace; NULL = "" */
	const tg_label *labels;	/* nlabels distinct keys, at most
				 * TG_MAX_POD_LABELS (else TG_ELIMIT) */
	unsigned nlabels;
} tg_alloc_spec;

/*
 * Records an allocation and takes its resources from the node.  An
 * allocation may over-commit a node (the cluster is what it is); the
 * node's free amount then stays below zero, and tg_topology_check()
 * does not complain.  TG_EEXIST for a duplicate pod name.
 */
tg_err tg_topology_add_alloc(tg_topology *t, const tg_alloc_spec *spec);

/* Removes an allocation by pod name and gives its resources back. */
tg_err tg_topology_remove_alloc(tg_topology *t, const char *pod);

/* The number of live allocations (nominated ones included, removed and
 * expired ones not); 0 for NULL. */
unsigned tg_topology_nallocs(const tg_topology *t);

/* Removes every allocation of a gang; returns how many (0 if none).
 * Costs the gang's allocations, not all of them (a gang index). */
unsigned tg_topology_remove_gang(tg_topology *t, const char *gang);

/*
 * Gives every live allocation of gang \p gang priority \p priority and
 * preemptibility \p preemptible, in place: the same as removing the gang
 * and adding its allocations back with these (placement and preemption
 * decide the same), without touching the nodes' resources or the
 * allocations' GPUs, at the cost of the gang's allocations.  For a host
 * whose preemption candidates change between decisions (select/topogang
 * changes only the gangs whose candidacy changed).  TG_ENOENT when the
 * gang has no live allocation, TG_EINVAL for a NULL argument, TG_ENOMEM
 * (nothing changed).
 */
tg_err tg_topology_set_gang_preemption(tg_topology *t, const char *gang,
				       int64_t priority, bool preemptible);

/*
 * Reservations (nominated allocations) whose \p expires is set and not
 * after \p now are removed; returns how many.  Time is the host's
 * (seconds since the epoch, say), only compared.
 */
unsigned tg_topology_expire(tg_topology *t, int64_t now);

/*
 * A disruption budget (a Kubernetes PodDisruptionBudget, say): at most
 * \p allowed of the allocations naming it may be evicted at once.
 * Preemption prefers victim sets that violate fewer budgets.
 */
tg_err tg_topology_set_budget(tg_topology *t, const char *name,
			      int64_t allowed);

/*
 * Bandwidth model: the bottleneck all-reduce bandwidth, in Gbit/s, of
 * ranks spread over domains of a layer (or inside one node).  Defaults:
 * layers whose name or key mentions nvlink, accelerator, clique or nvl
 * 7200 (900 GB/s NVLink); the layer closest to the nodes 400 (NDR);
 * the next 200, then 100, then 50; inside one node 7200.
 * tg_topology_set_layer_bandwidth() overrides one layer's, before or
 * after tg_topology_build(); TG_EINVAL for a layer out of range or
 * unless \p gbps > 0.
 */
tg_err tg_topology_set_layer_bandwidth(tg_topology *t, unsigned layer,
				       double gbps);
/*
 * Sets the bandwidth inside one node (default 7200), before or after
 * tg_topology_build().  TG_EINVAL unless \p gbps > 0.
 */
tg_err tg_topology_set_node_bandwidth(tg_topology *t, double gbps);
/* \p layer TG_NONE = crossing the root; nlayers = inside one node. */
double tg_topology_layer_bandwidth(const tg_topology *t, unsigned layer);

/*
 * Natural order used everywhere for names and paths: digit runs compare
 * as numbers ("node-2" < "node-10"), then bytewise.  Exposed so hosts
 * order their output the same way.
 */
int tg_name_cmp(const char *a, const char *b);

#ifdef __cplusplus
}
#endif
#endif /* TOPOGANG_TOPOLOGY_H */
