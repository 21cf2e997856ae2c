/*
 * topogang/gang.h - a gang request.
 *
 * A gang is all-or-nothing: every member is placed or none is.  Members
 * come in pod sets (a leader set and a worker set, say); all members of a
 * pod set have one shape and one set of node constraints.  Ranks follow
 * pod-set order, then member order inside a pod set: rank 0 is the first
 * member of the first pod set.
 *
 * Topology requests name layers by name or label key; they are resolved
 * against the topology when the gang is placed, and an unknown layer makes
 * the placement fail with a message naming it.
 *
 * Gather semantics (per layer, as Koordinator's gatherStrategy):
 *   TG_GATHER_MUST    all members inside one domain of this layer; the
 *                     lowest MUST layer is the hard boundary (one of
 *                     its domains lies inside one domain of every
 *                     layer above it).
 *   TG_GATHER_PREFER  try to fit inside one domain of this layer; when no
 *                     domain can hold the gang, escalate one layer up.
 * Kueue's "required: L" is MUST at L, "preferred: L" is PREFER at L.
 * Placement always starts from the tightest level (one node) and escalates
 * upward; preferences only matter for messages.  Without any request the
 * gang is still gathered as tightly as possible, up to the whole cluster.
 */
#ifndef TOPOGANG_GANG_H
#define TOPOGANG_GANG_H

#include "topogang/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tg_gang tg_gang;

typedef enum tg_gather {
	TG_GATHER_NONE = 0,
	TG_GATHER_PREFER,
	TG_GATHER_MUST
} tg_gather;

typedef enum tg_sel_op {
	TG_SEL_IN = 0,
	TG_SEL_NOT_IN,
	TG_SEL_EXISTS,
	TG_SEL_DOES_NOT_EXIST,
	TG_SEL_GT,
	TG_SEL_LT
} tg_sel_op;

/* One label-selector expression; values are copied by the setters. */
typedef struct tg_label_expr {
	const char *key;
	tg_sel_op op;
	const char *const *values;
	unsigned nvalues;
} tg_label_expr;

#define TG_MAX_PODSETS	16
#define TG_MAX_TERMS	16	/* affinity terms or expressions per list */

/*
 * Creates an empty gang.  \p name is how decisions and messages name it
 * ("default/llm-train"); it is copied.  NULL when out of memory or when
 * \p name is NULL, "" or longer than TG_MAX_NAME bytes.
 * \note The caller destroys it with tg_gang_destroy().
 */
tg_gang *tg_gang_create(const char *name);
/* Destroys a gang and every string it copied.  Accepts NULL. */
void tg_gang_destroy(tg_gang *g);
/*
 * The gang's name, as tg_gang_create() got it; NULL for NULL.
 * \note Owned by the gang: valid until tg_gang_destroy().
 */
const char *tg_gang_name(const tg_gang *g);

/*
 * Sets the gang's priority (default 0; any int64_t, higher wins).  The
 * members' allocations carry it (tg_decision_apply()); preemption may
 * evict only work of strictly lower priority, and a reservation of
 * strictly lower priority gives way (place.h).  Ignores a NULL \p g.
 */
void tg_gang_set_priority(tg_gang *g, int64_t priority);
/* The gang's priority (tg_gang_set_priority()); 0 for NULL. */
int64_t tg_gang_priority(const tg_gang *g);
/* Whether the gang may preempt lower-priority work (default true). */
void tg_gang_set_can_preempt(tg_gang *g, bool can);

/* Per-layer gather strategy; a later call for the same layer replaces. */
tg_err tg_gang_set_gather(tg_gang *g, const char *layer, tg_gather how);

/*
 * Slices: every \p size consecutive members (by rank) share one domain of
 * \p layer (Kueue podset-slice, Koordinator podCountMultiple, KAI
 * segments).  Nested slices must divide each other.
 */
tg_err tg_gang_add_slice(tg_gang *g, const char *layer, unsigned size);

/*
 * Spread: members spread over the domains of \p layer so that member
 * counts differ by at most \p max_skew between domains used.  \p hard:
 * DoNotSchedule, else ScheduleAnyway (best effort).  A spread replaces
 * gathering below the layer's parent.
 */
tg_err tg_gang_add_spread(tg_gang *g, const char *layer, unsigned max_skew,
			  bool hard);

/*
 * A topology spread as Kubernetes defines it (a pod's
 * topologySpreadConstraints entry): the pods that count are every
 * allocation whose namespace is \p ns and whose labels match the
 * selector (running pods, pods placed earlier by tg_decision_apply())
 * and the gang's own members as they are placed, when their labels
 * (tg_gang_podset_set_member_labels()) match.  For a domain of \p layer,
 * skew = matching pods in it + 1 (when the member matches) - the minimum
 * over the eligible domains; when fewer domains are eligible than
 * \p min_domains that minimum is 0.  A domain is eligible when one of
 * its nodes is in the tree and passes the gang's largest pod set's node
 * selector and node affinity (unless \p ignore_node_affinity) and, with
 * \p honor_taints, its taints (a cordoned node counts as tainted then);
 * only pods on eligible nodes are counted.  \p hard (DoNotSchedule)
 * makes skew <= \p max_skew a filter for every member; otherwise it is a
 * preference: members go to the domains with the fewest matching pods.
 * \p layer names a topology layer, the node level, or (hard only) any
 * node label key: its domains are then the key's values on the nodes
 * (kube-scheduler's), a node without the key takes no member and counts
 * no pod for the gang's hard spreads, and a gang with more than one
 * member counting toward it is placed member by member over the nodes
 * (which a spread over a layer or a slice in the same gang cannot be
 * combined with: unschedulable, saying so).  A soft one on a key that is
 * no layer is left out with a note.
 */
typedef struct tg_spread_spec {
	const char *layer;	/* a layer's name or label key (topologyKey) */
	unsigned max_skew;	/* >= 1 */
	bool hard;		/* DoNotSchedule, else ScheduleAnyway */
	unsigned min_domains;	/* minDomains; 0 = unset; hard only */
	bool ignore_node_affinity;	/* nodeAffinityPolicy: Ignore */
	bool honor_taints;		/* nodeTaintsPolicy: Honor */
	const char *ns;		/* the namespace whose pods count */
	bool selector;		/* false: a nil selector, no pod counts */
	const tg_label_expr *exprs;	/* all must hold; none: every pod */
	unsigned nexprs;	/* at most TG_MAX_TERMS */
} tg_spread_spec;

/*
 * Adds a label-selector spread (copied); TG_ELIMIT past TG_MAX_SPREADS.
 * tg_gang_spread_at() lists these after the tg_gang_add_spread() ones.
 */
tg_err tg_gang_add_spread_spec(tg_gang *g, const tg_spread_spec *s);

/*
 * Adds a pod set of \p count members of \p shape.  Returns its index in
 * *ps.  Member names default to "<gang>-<podset>-<i>"; set them with
 * tg_gang_podset_set_member().
 */
tg_err tg_gang_add_podset(tg_gang *g, const char *name, const tg_shape *shape,
			  unsigned count, unsigned *ps);
tg_err tg_gang_podset_set_member(tg_gang *g, unsigned ps, unsigned i,
				 const char *pod);
/*
 * The namespace and labels of member \p i (copied), recorded with its
 * allocation by tg_decision_apply() and matched by label-selector
 * spreads.  Members of one pod set are taken as alike: a pod set counts
 * toward a spread when any of its members matches the selector.
 * TG_ELIMIT past TG_MAX_POD_LABELS, TG_EINVAL for a repeated key.
 */
tg_err tg_gang_podset_set_member_labels(tg_gang *g, unsigned ps, unsigned i,
					const char *ns, const tg_label *labels,
					unsigned nlabels);

/* Cap on members of this pod set on one node (podAntiAffinity on the
 * hostname against its own pods gives 1); 0 = no cap. */
tg_err tg_gang_podset_set_max_per_node(tg_gang *g, unsigned ps,
				       unsigned max);

/* Required node labels (nodeSelector): all must match. */
tg_err tg_gang_podset_add_node_selector(tg_gang *g, unsigned ps,
					const char *key, const char *value);
/*
 * Required node affinity: the node must match at least one term; a term
 * matches when all its expressions do.  Call with a new term index
 * (0, 1, ...) to open a term.
 */
tg_err tg_gang_podset_add_affinity_expr(tg_gang *g, unsigned ps,
					unsigned term,
					const tg_label_expr *expr);
/* A toleration: \p key NULL with \p exists tolerates every taint;
 * \p effect < 0 matches every effect. */
tg_err tg_gang_podset_add_toleration(tg_gang *g, unsigned ps,
				     const char *key, bool exists,
				     const char *value, int effect);
/*
 * Inter-pod (anti-)affinity against existing allocations whose pod name
 * is listed in \p pods (the host evaluates the label selector): with
 * \p anti false the member must land in a domain of the node label
 * \p topology_key that holds one of them; with \p anti true it must not.
 */
tg_err tg_gang_podset_add_pod_affinity(tg_gang *g, unsigned ps,
				       const char *topology_key, bool anti,
				       const char *const *pods,
				       unsigned npods);

/* The number of pod sets (tg_gang_add_podset()); 0 for NULL. */
unsigned tg_gang_npodsets(const tg_gang *g);
/* The number of members over all pod sets, so ranks are 0 ..
 * tg_gang_nmembers() - 1; 0 for NULL. */
unsigned tg_gang_nmembers(const tg_gang *g);
/*
 * The pod named for member \p rank (0 .. tg_gang_nmembers() - 1, in rank
 * order: pod-set order, then member order), as given to
 * tg_gang_podset_set_member() (the Kubernetes loader gives
 * "namespace/name").  NULL for a member left unnamed (decisions call it
 * "<gang>-<podset>-<i>") and for a rank out of range.
 * \note Owned by the gang: valid until the member is named again or
 * tg_gang_destroy().
 */
const char *tg_gang_member(const tg_gang *g, unsigned rank);

/*
 * Reading a gang back (hosts that hand the request to another scheduler,
 * e.g. the bridge's mixed mode submitting it to Slurm).  Out of range:
 * NULL / 0.  Strings live as long as the gang.
 */
unsigned tg_gang_ngathers(const tg_gang *g);
/* The i-th gather request's layer (as given), its strategy in *how. */
const char *tg_gang_gather_at(const tg_gang *g, unsigned i, tg_gather *how);
/* The number of spread requests: tg_gang_add_spread()'s, then
 * tg_gang_add_spread_spec()'s; 0 for NULL. */
unsigned tg_gang_nspreads(const tg_gang *g);
/* The i-th spread request's layer; skew and hardness in *max_skew, *hard. */
const char *tg_gang_spread_at(const tg_gang *g, unsigned i,
			      unsigned *max_skew, bool *hard);
/* The member count of pod set \p ps; 0 out of range. */
unsigned tg_gang_podset_count(const tg_gang *g, unsigned ps);
/*
 * The shape of one member of pod set \p ps (a copy made by
 * tg_gang_add_podset()); NULL out of range.
 * \note Owned by the gang: valid until tg_gang_destroy().
 */
const tg_shape *tg_gang_podset_shape(const tg_gang *g, unsigned ps);
/*
 * The pod named for member \p i of pod set \p ps by
 * tg_gang_podset_set_member() ("namespace/name" from the Kubernetes
 * loader); NULL for a member left unnamed and out of range
 * (tg_gang_member() takes a rank instead).
 * \note Owned by the gang: valid until the member is named again or
 * tg_gang_destroy().
 */
const char *tg_gang_podset_member(const tg_gang *g, unsigned ps, unsigned i);

#ifdef __cplusplus
}
#endif
#endif /* TOPOGANG_GANG_H */
