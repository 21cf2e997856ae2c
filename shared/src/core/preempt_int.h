/*
 * shared/src/core/preempt_int.h - what preempt.c (victim choice) offers
 * decide.c.  preempt.c never places: it asks whether the gang fits
 * through a tgi_fitter, which decide.c fills with the slot search of
 * place.c.
 */
#ifndef TG_PREEMPT_INT_H
#define TG_PREEMPT_INT_H

#include "model.h"

/*
 * How the victim search asks whether the gang fits, on the topology's
 * current state (suspended allocations count as free).
 */
typedef struct tgi_fitter {
	/*
	 * The gang confined to unit \p unit of \p level (TG_NONE: the
	 * cluster; nlayers: the node at that tree position): *yes when it
	 * is placed there; *slots (when not NULL) the unit's offer slots.
	 */
	tg_err (*fits)(void *arg, unsigned level, uint32_t unit, bool *yes,
		       int64_t *slots);
	/*
	 * The fast path, NULL when the gang needs the search above: offer
	 * slots of one node, for a gang that fits a domain exactly when
	 * the sum of its nodes' slots reaches \p need.
	 */
	int64_t (*node_slots)(void *arg, uint32_t node);
	int64_t need;
	void *arg;
} tgi_fitter;

/* The lower-priority gangs a gang may evict, and the choice among them. */
typedef struct tgi_victims tgi_victims;

/*
 * Collects the eligible victim gangs of \p g: running (not nominated)
 * allocations grouped by gang, every member preemptible, not suspended
 * and of strictly lower priority.  *out: free with tgi_victims_free();
 * it reads \p t and \p g, which must outlive it.
 */
tg_err tgi_victims_new(tg_topology *t, const tg_gang *g, tgi_victims **out);
uint32_t tgi_victims_ngangs(const tgi_victims *v);
int64_t tgi_victims_npods(const tgi_victims *v);
/* The gang's hard (lowest MUST) level; TG_NONE = none. */
unsigned tgi_victims_hard_level(const tgi_victims *v);
/* Suspends (\p on) or resumes every eligible gang's allocations. */
void tgi_victims_suspend_all(tgi_victims *v, bool on);

/*
 * For each unit of \p level, the cheapest victim set that lets the gang
 * in (see preempt.c), and the cheapest unit: *found false when no unit
 * can be freed for the whole gang.  Leaves the state as it found it.
 */
tg_err tgi_victims_choose(tgi_victims *v, unsigned level,
			  const tgi_fitter *f, bool *found);
/* After a choice: the unit, and suspending or resuming its victims. */
uint32_t tgi_victims_chosen_unit(const tgi_victims *v);
void tgi_victims_suspend_chosen(tgi_victims *v, bool on);
/* Every pod of the chosen gangs, in name order (allocation indices);
 * *pods freed by the caller with tgi_free(). */
tg_err tgi_victims_chosen_pods(const tgi_victims *v, uint32_t **pods,
			       uint32_t *npods);
/* "preempting N pods of M lower-priority gangs (...) to free DOMAIN". */
void tgi_victims_describe(const tgi_victims *v, tg_buf *b);
void tgi_victims_free(tgi_victims *v);

#endif /* TG_PREEMPT_INT_H */
