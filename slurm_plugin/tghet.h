/*****************************************************************************\
 *  tghet.h - a heterogeneous job placed as one gang, the parts both
 *  plugins share: select/topogang (Slurm 22.05) and topology/topogang
 *  (Slurm 24.11).  Each plugin's file says how its Slurm version starts
 *  the components (select_topogang.c and slurm2411/topology_topogang.c,
 *  above their het_plan); what is the same is here: which components
 *  form the gang, the plan that keeps each component's part of the
 *  core's decision for the components tested after the first, and that
 *  decision's nodes as a Slurm node bitmap.  Names are prefixed tghet_.
 *  Callers hold slurmctld's job read lock and the plugin's own lock over
 *  the plan; only slurmctld calls these.
\*****************************************************************************/

#ifndef _TOPOGANG_TGHET_H
#define _TOPOGANG_TGHET_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "topogang/gang.h"
#include "topogang/place.h"

#define TGHET_PLAN_TTL	30	/* seconds a plan serves its components;
				 * an older one serves nobody */

/* A heterogeneous gang's placement, kept for its later components. */
typedef struct tghet_plan {
	uint32_t het_job_id;		/* 0: none */
	time_t made;
	bool must;			/* the gang's request was a must */
	char domain[128];		/* the decision's domain path */
	unsigned n;
	uint32_t job_id[TG_MAX_PODSETS];	/* component k's job */
	bitstr_t *nodes[TG_MAX_PODSETS];	/* its part (node indexes) */
	bool taken[TG_MAX_PODSETS];		/* its part was handed out */
} tghet_plan_t;

/*
 * The components of \p job_ptr's heterogeneous job when they are placed
 * as one gang, in het_job_list order, into \p comp (TG_MAX_PODSETS
 * entries); 0 when not: not a heterogeneous job, more than
 * TG_MAX_PODSETS components, or a component not pending or asking for
 * -w, --contiguous or no node.
 */
extern unsigned tghet_components(job_record_t *job_ptr, job_record_t **comp);

/*
 * Pod set \p ps's nodes of decision \p d (every pod set's: UINT_MAX) as
 * a node_record_count bitmap, through \p tg2slurm (the core's node id ->
 * node index, NO_VAL for none; \p ntg entries).  Caller frees.
 */
extern bitstr_t *tghet_decision_part(const tg_decision *d, unsigned ps,
				     const uint32_t *tg2slurm, uint32_t ntg);

/* Forgets \p plan (its bitmaps freed). */
extern void tghet_plan_drop(tghet_plan_t *plan);

/*
 * Makes \p plan (its old one dropped) from decision \p d for the \p n
 * components \p comp, made at \p now; the part of \p comp[own], the
 * component tested now, is marked taken.  \p tg2slurm, \p ntg: as
 * tghet_decision_part().
 */
extern void tghet_plan_keep(tghet_plan_t *plan, job_record_t *const *comp,
			    unsigned n, unsigned own, bool must,
			    const tg_decision *d, const uint32_t *tg2slurm,
			    uint32_t ntg, time_t now);

/*
 * The part of \p plan for \p job_ptr when the plan made for its job has
 * one it has not handed out yet (marked taken now); NULL otherwise.  A
 * plan older than TGHET_PLAN_TTL at \p now is dropped.  The bitmap is
 * the plan's, valid until the plan is dropped or kept again.
 */
extern bitstr_t *tghet_plan_part(tghet_plan_t *plan, job_record_t *job_ptr,
				 time_t now);

#endif /* _TOPOGANG_TGHET_H */
