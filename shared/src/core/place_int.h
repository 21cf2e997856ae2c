/*
 * shared/src/core/place_int.h - what place.c (slot search, fill,
 * decisions) offers decide.c (tg_place()) and check.c.
 */
#ifndef TG_PLACE_INT_H
#define TG_PLACE_INT_H

#include "gang.h"
#include "model.h"

/*
 * The longest decision message (bytes): one lists at most a dozen
 * domains (each at most TGI_MAX_DOMAIN), so only names near their own
 * limits reach it; a longer message is cut and says so
 * (tg_buf_take_cut()).
 */
#define TGI_MAX_MESSAGE		(64u << 10)
/* "LAYER/v0/v1/..." of any domain: a layer name and a full path. */
#define TGI_MAX_DOMAIN		((TG_MAX_LAYERS + 1) * (TG_MAX_NAME + 1) + 8)

struct tg_decision {
	char *gang;
	tg_status status;
	bool bad_request;	/* unschedulable because the request is bad */
	char *domain;
	char *message;
	double bw;
	int64_t scope_slots;	/* offer slots of the scope (main pod set) */
	unsigned lca_level;	/* placed: level of the lowest domain holding
				 * every member (nlayers: one node) */
	tg_placement *pl;
	unsigned npl;
	char **names;
	tg_victim *vic;
	unsigned nvic;
};

/*
 * Placement only (no reservations, no preemption), confined to one unit:
 * \p scope_level TG_NONE = the whole cluster; a layer with \p scope_unit
 * a domain id; nlayers with \p scope_unit a node position.
 */
tg_err tgi_place_scoped(tg_topology *t, const tg_gang *g,
			unsigned scope_level, uint32_t scope_unit,
			tg_decision **out, tg_errinfo *ei);

/*
 * Adds one to per_node[n] for every live, not suspended allocation on
 * node n that label spread \p sp counts (its namespace and selector).
 * It reads the topology's label index (model.h: lsmem, lpost), so its
 * cost follows the label sets the selector can take and their pods, not
 * the number of allocations.
 */
void tgi_spread_tally(const tg_topology *t, const tgi_sspread *sp,
		      int32_t *per_node);

/* Appends allocation \p a to the decision's victims. */
tg_err tgi_decision_add_victim(tg_decision *d, const tg_topology *t,
			       uint32_t a, bool reservation);

/*
 * Offer slots of one node for a gang on the topology's current free
 * resources, for a gang whose placement inside a domain depends on the
 * sum of its nodes' slots alone: one pod set, no spread, no slice above
 * the node level.  TG_ENOENT for any other gang.  The context uses the
 * topology's placement scratch: no tg_place() while it is alive, except
 * tgi_place_scoped() between calls (decide.c's preemption uses both).
 */
typedef struct tgi_slotctx tgi_slotctx;

tg_err tgi_slotctx_new(tg_topology *t, const tg_gang *g, tgi_slotctx **out);
int64_t tgi_slotctx_node(tgi_slotctx *c, uint32_t node);
/* Members the gang needs: a domain holds it when its sum reaches this. */
int64_t tgi_slotctx_need(const tgi_slotctx *c);
void tgi_slotctx_free(tgi_slotctx *c);

/*
 * Checks the placement scratch's slot cache against the topology: every
 * lowest-layer domain the cache calls current holds the slots a fresh
 * computation gives, and every cached sum and maximum matches the slots
 * it describes.  Called by tg_topology_check() (check.c).
 */
tg_err tgi_place_check(const tg_topology *t, tg_errinfo *ei);

#endif /* TG_PLACE_INT_H */
