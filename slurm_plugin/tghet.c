/*****************************************************************************\
 *  tghet.c - a heterogeneous job placed as one gang, shared by
 *  select/topogang (Slurm 22.05) and topology/topogang (Slurm 24.11);
 *  see tghet.h.  Compiled against each version's headers: the one type
 *  whose name differs, the list iterator (22.05 ListIterator, 24.11
 *  list_itr_t), is named by its struct tag, struct listIterator, which
 *  both versions' src/common/list.h declare.
\*****************************************************************************/

#include "config.h"

#define _GNU_SOURCE

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"

#include "src/common/slurm_xlator.h"
#include "src/common/bitstring.h"
#include "src/common/list.h"
#include "src/common/node_conf.h"
#include "src/slurmctld/slurmctld.h"

#include "tghet.h"

extern unsigned tghet_components(job_record_t *job_ptr, job_record_t **comp)
{
	job_record_t *leader, *jp;
	struct listIterator *it;
	unsigned n = 0;
	bool ok = true, self = false;

	if (!job_ptr->het_job_id ||
	    !(leader = find_job_record(job_ptr->het_job_id)) ||
	    !leader->het_job_list)
		return 0;
	it = list_iterator_create(leader->het_job_list);
	while ((jp = list_next(it))) {
		if (n >= TG_MAX_PODSETS || !jp->details ||
		    jp->het_job_id != job_ptr->het_job_id ||
		    !IS_JOB_PENDING(jp) || jp->details->req_node_bitmap ||
		    jp->details->contiguous || !jp->details->min_nodes) {
			ok = false;
			break;
		}
		self = self || jp == job_ptr;
		comp[n++] = jp;
	}
	list_iterator_destroy(it);
	return ok && self && n > 1 ? n : 0;
}

extern bitstr_t *tghet_decision_part(const tg_decision *d, unsigned ps,
				     const uint32_t *tg2slurm, uint32_t ntg)
{
	bitstr_t *b = bit_alloc(node_record_count);

	for (unsigned i = 0; i < tg_decision_nplacements(d); i++) {
		const tg_placement *p = tg_decision_placement(d, i);

		if ((ps == UINT_MAX || p->podset == ps) && p->node < ntg &&
		    tg2slurm[p->node] != NO_VAL)
			bit_set(b, tg2slurm[p->node]);
	}
	return b;
}

extern void tghet_plan_drop(tghet_plan_t *plan)
{
	for (unsigned k = 0; k < plan->n; k++)
		FREE_NULL_BITMAP(plan->nodes[k]);
	memset(plan, 0, sizeof(*plan));
}

extern void tghet_plan_keep(tghet_plan_t *plan, job_record_t *const *comp,
			    unsigned n, unsigned own, bool must,
			    const tg_decision *d, const uint32_t *tg2slurm,
			    uint32_t ntg, time_t now)
{
	tghet_plan_drop(plan);
	if (!n)
		return;
	plan->het_job_id = comp[0]->het_job_id;
	plan->made = now;
	plan->must = must;
	snprintf(plan->domain, sizeof(plan->domain), "%s",
		 tg_decision_domain(d));
	plan->n = n;
	for (unsigned k = 0; k < n; k++) {
		plan->job_id[k] = comp[k]->job_id;
		plan->nodes[k] = tghet_decision_part(d, k, tg2slurm, ntg);
		plan->taken[k] = k == own;
	}
}

extern bitstr_t *tghet_plan_part(tghet_plan_t *plan, job_record_t *job_ptr,
				 time_t now)
{
	if (!job_ptr->het_job_id || plan->het_job_id != job_ptr->het_job_id)
		return NULL;
	if (now - plan->made > TGHET_PLAN_TTL) {
		tghet_plan_drop(plan);
		return NULL;
	}
	for (unsigned k = 0; k < plan->n; k++) {
		if (plan->job_id[k] != job_ptr->job_id)
			continue;
		if (plan->taken[k])
			return NULL;	/* asked again: a new pass */
		plan->taken[k] = true;
		return plan->nodes[k];
	}
	return NULL;
}
