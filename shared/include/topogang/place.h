/*
 * topogang/place.h - gang placement and its decision.
 *
 * tg_place() decides where one gang goes on the topology's current free
 * resources.  It never changes the topology's state: tg_decision_apply()
 * does, so that a host can decide gangs one after another.
 *
 * The algorithm (deterministic; the same topology and gang always give
 * the same decision, bit for bit):
 *  1. Offer slots: for every node, how many members of the gang's main
 *     shape it can take (min over requested resources of free / request,
 *     capped per node, 0 for ineligible nodes); rolled up the tree, each
 *     domain at a slice layer rounded down to a multiple of the slice.
 *  2. Level: starting from single nodes and going up one layer at a time
 *     to the hard (lowest MUST) layer, or the root, the first level with
 *     a domain holding the whole gang gives the candidates.
 *  3. Bin-pack: among candidates whose children are domains, the fewest
 *     children the fill takes first (a gang no leaf holds goes to the
 *     spine where it spans the fewest leaves, not to a fragmented spine
 *     it fits exactly; no spread requested); then the fewest offer slots
 *     (least waste), then the fewer slots of each ancestor in turn, then
 *     the total order on full paths (label by label with tg_name_cmp(),
 *     farthest first: the tree order; comparing the joined strings would
 *     not keep a domain's children together).
 *  4. Fill: inside the chosen domain, the least span, layer by layer:
 *     as few children as can hold the members, then among those choices
 *     the fewest domains in all at each lower layer in turn, then the
 *     fewest nodes (6 nodes over spines with 5 free on leaves of 1 and
 *     4, 2 on one leaf and 1 go 4 + 2 on two leaves, not 5 + 1 on
 *     three).  Among fills of the least span, the largest free children
 *     stay whole (10 members over free blocks of 8, 6 and 4 nodes go
 *     6 + 4, not 8 + 2; one child holding them all is the tightest
 *     such child); the chosen children take, most slots first (ties:
 *     path order), the most members that still give the least span
 *     (each whole but the last where it can); each is filled the same
 *     way in turn.  Ties between children of equal slots: the first
 *     path is used, the later one left whole.  Gangs of several pod
 *     sets, and fills whose exact choice would pass a work bound, take
 *     the fewest children with the largest left whole, each whole but
 *     the last (docs/placement.md says when).
 *  When several pod sets (or a spread) make a candidate fail, the next
 *  one in bin-pack order is tried, every candidate of the level.
 *  5. Ranks follow the fill order, so consecutive ranks are topological
 *     neighbours (NCCL rings); GPUs inside a node come from one NVLink
 *     island when one can hold the member.
 *
 * Label-selector spreads (tg_gang_add_spread_spec()): a hard one makes a
 * node take none when its domain would exceed the skew even if every
 * other member that counts raised the minimum (step 1); the search starts
 * at the level above the spread's; where the fill splits members over
 * the spread's domains, or over a wider domain's (when no domain of the
 * level above holds the gang), they go one at a time to a domain where
 * every hard spread's skew holds, the fewest matching pods first, then
 * the most room, then path order, each member that counts raising its
 * domain's count.  A hard one over a node label that is no layer (its
 * domains the label's values, across the tree) is a node filter; where
 * more than one member counts toward it (or the gang has several pod
 * sets), members go one at a time to a node with room where its skew
 * holds, the domain with the fewest matching pods first, then a node
 * already taken, then position order; each member looks at one node of
 * each combination of such spreads' values, and the gang's members
 * times those combinations (at most the nodes) may not pass
 * TG_MAX_KEY_FILL: past it the gang is unschedulable, its message
 * naming the bound.
 */
#ifndef TOPOGANG_PLACE_H
#define TOPOGANG_PLACE_H

#include "topogang/gang.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tg_status {
	TG_STATUS_PLACED = 0,
	TG_STATUS_PREEMPTING,
	TG_STATUS_UNSCHEDULABLE
} tg_status;

typedef struct tg_placement {
	const char *pod;	/* member name */
	unsigned podset;
	unsigned rank;
	tg_node_id node;
	uint64_t gpus;		/* GPU indices chosen (bit i = GPU i) */
} tg_placement;

typedef struct tg_victim {
	const char *pod;
	const char *gang;
	tg_node_id node;
	int64_t priority;
	bool reservation;	/* a lower-priority nomination given way,
				 * not a running pod: its gang must be
				 * decided again */
} tg_victim;

typedef struct tg_decision tg_decision;

/*
 * Places \p g on \p t.  On TG_OK *out holds a decision whatever its
 * status (an unschedulable gang is a decision, with a message).  Errors
 * are for bad arguments (TG_EINVAL with \p ei) and memory.
 * \note The caller frees *out with tg_decision_free(); it refers to names
 * in \p t and must not outlive it.
 */
tg_err tg_place(tg_topology *t, const tg_gang *g, tg_decision **out,
		tg_errinfo *ei);

/*
 * Applies a placed decision: records one allocation per member (pod name
 * = member name, gang = gang name) and takes its resources.  For a
 * preempting decision, removes the victims and records the members as
 * nominated allocations.  All or nothing.
 */
tg_err tg_decision_apply(tg_topology *t, const tg_gang *g,
			 const tg_decision *d);

/* Frees a decision and every string it owns (its placements' pod names
 * among them).  Accepts NULL. */
void tg_decision_free(tg_decision *d);

/*
 * Checks a gang's request against a topology without placing it: every
 * layer it names exists, slices divide the gang and each other, a spread
 * sits below the hard layer.  TG_OK, or TG_EINVAL with \p ei saying what.
 */
tg_err tg_gang_check(const tg_topology *t, const tg_gang *g, tg_errinfo *ei);

/* Placed, preempting (placed once the victims are gone) or
 * unschedulable (tg_decision_message() says why); TG_STATUS_UNSCHEDULABLE
 * for NULL. */
tg_status tg_decision_status(const tg_decision *d);
/*
 * "placed", "preempting" or "unschedulable"; "unknown" for a value that
 * is no tg_status.
 * \note A static string; never free it.
 */
const char *tg_status_name(tg_status s);
/* The gang's name. */
const char *tg_decision_gang(const tg_decision *d);
/* The domain the gang was placed in, "LAYER/path", "node/NAME" or
 * "cluster"; "" when unschedulable. */
const char *tg_decision_domain(const tg_decision *d);
/* Placements in rank order. */
unsigned tg_decision_nplacements(const tg_decision *d);
/*
 * The placement of rank \p i (0 .. tg_decision_nplacements() - 1); NULL out
 * of range.  Placed and preempting decisions have one per member, an
 * unschedulable one none.
 * \note Owned by the decision, its pod name too: valid until
 * tg_decision_free().
 */
const tg_placement *tg_decision_placement(const tg_decision *d, unsigned i);
/* The number of victims (tg_decision_victim()); 0 for NULL. */
unsigned tg_decision_nvictims(const tg_decision *d);
/*
 * Victim \p i; NULL out of range.  The allocations tg_decision_apply()
 * removes: the running pods a preempting decision evicts (whole gangs),
 * and lower-priority reservations on nodes the decision uses
 * (reservation true; a placed decision may have these too).
 * \note Owned by the decision, valid until tg_decision_free(); its pod
 * and gang names belong to the topology the decision came from (valid
 * until tg_topology_destroy()).
 */
const tg_victim *tg_decision_victim(const tg_decision *d, unsigned i);
/* Estimated bottleneck all-reduce bandwidth, Gbit/s; 0 if unschedulable. */
double tg_decision_bandwidth_gbps(const tg_decision *d);
/* A message a person can act on; never NULL.  At most 64 KiB (it names
 * at most a dozen domains, so only names near their limits come close):
 * a longer one is cut and ends in " [message cut at 65536 bytes]". */
const char *tg_decision_message(const tg_decision *d);

#ifdef __cplusplus
}
#endif
#endif /* TOPOGANG_PLACE_H */
