/*****************************************************************************\
 *  preempt_topogang.c - preempt/topogang for Slurm 24.11: the core picks
 *  the victims.
 *
 *  cons_tres preempts by removing slurmctld's preemptee candidates one at
 *  a time, in the order this plugin's PREEMPT_DATA_PRIO gives, and
 *  testing the job again after each removal (src/plugins/select/cons_tres/
 *  job_test.c, _run_now); the victims are the removed jobs whose nodes
 *  the chosen nodes overlap.  Which topology domain frees up first thus
 *  depends on that order, not on the topology.  The candidates come from
 *  src/interfaces/preempt.c (slurm_find_preemptable_jobs ->
 *  _add_preemptable_job -> _is_job_preempt_exempt_internal), which asks
 *  preempt_p_preemptable(preemptee, preemptor) of every running job.
 *
 *  preempt/topogang answers as preempt/partition_prio does (a higher
 *  PriorityTier preempts a lower one whose PreemptMode is not OFF), and
 *  then admits only the jobs that libtopogang's core picks as victims for
 *  the preemptor on the whole cluster (topology/topogang's
 *  topology_p_topogang_victim, found with dlsym): cons_tres then removes
 *  exactly those and topology/topogang places the job on the nodes they
 *  free.  Without topology/topogang, or where the core has no opinion
 *  (the job fits without preemption, the core cannot decide), the
 *  partition_prio answer stands.  See docs/slurm.md.
\*****************************************************************************/

#include "config.h"

#define _GNU_SOURCE

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"

#include "src/common/slurm_xlator.h"
#include "src/common/bitstring.h"
#include "src/common/log.h"
#include "src/common/read_config.h"
#include "src/common/xstring.h"
#include "src/interfaces/preempt.h"
#include "src/slurmctld/slurmctld.h"

const char plugin_name[] = "Preemption by partition priority, victims by "
			   "topogang";
const char plugin_type[] = "preempt/topogang";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

#define VICTIM_SYM	"topology_p_topogang_victim"

typedef int (*victim_fn)(job_record_t *, job_record_t *,
			 bool (*)(job_record_t *, job_record_t *));

static victim_fn victim = NULL;
static bool looked = false;

/* preempt/partition_prio's rule (src/plugins/preempt/partition_prio). */
static bool _base(job_record_t *preemptee, job_record_t *preemptor)
{
	if (!preemptee->part_ptr || !preemptor->part_ptr ||
	    (preemptee->part_ptr->priority_tier >=
	     preemptor->part_ptr->priority_tier) ||
	    (preemptee->part_ptr->preempt_mode == PREEMPT_MODE_OFF))
		return false;
	return true;
}

/* topology/topogang's entry, when it is the loaded topology plugin (its
 * soname, as the plugin loader dlopen()ed it from PluginDir). */
static victim_fn _victim(void)
{
	void *h;

	if (looked)
		return victim;
	looked = true;
	if (!(h = dlopen("topology_topogang.so", RTLD_LAZY | RTLD_NOLOAD))) {
		info("%s: topology/topogang is not loaded; victims by "
		     "partition priority alone", plugin_type);
		return NULL;
	}
	victim = (victim_fn) dlsym(h, VICTIM_SYM);
	dlclose(h);		/* the plugin loader keeps its own handle */
	if (!victim)
		error("%s: topology_topogang.so has no %s; victims by "
		      "partition priority alone", plugin_type, VICTIM_SYM);
	return victim;
}

extern int init(void)
{
	verbose("%s loaded", plugin_type);
	return SLURM_SUCCESS;
}

extern void fini(void)
{
	victim = NULL;
	looked = false;
}

extern bool preempt_p_job_preempt_check(job_queue_rec_t *preemptor,
					job_queue_rec_t *preemptee)
{
	return preemptor->part_ptr && preemptee->part_ptr &&
	       bit_overlap_any(preemptor->part_ptr->node_bitmap,
			       preemptee->part_ptr->node_bitmap) &&
	       (preemptor->part_ptr->priority_tier >
		preemptee->part_ptr->priority_tier);
}

extern bool preempt_p_preemptable(job_record_t *preemptee,
				  job_record_t *preemptor)
{
	victim_fn v;
	int r;

	if (!_base(preemptee, preemptor))
		return false;
	if (!running_in_slurmctld() || !(v = _victim()))
		return true;
	r = v(preemptor, preemptee, _base);
	return r < 0 ? true : r > 0;
}

static uint16_t _mode(job_record_t *job_ptr)
{
	part_record_t *part_ptr = job_ptr->part_ptr;

	if (part_ptr && (part_ptr->preempt_mode != NO_VAL16))
		return part_ptr->preempt_mode & ~PREEMPT_MODE_GANG;
	return slurm_conf.preempt_mode & ~PREEMPT_MODE_GANG;
}

/* partition_prio's order: PriorityTier, then smaller jobs first. */
static uint32_t _prio(job_record_t *job_ptr)
{
	uint32_t p = job_ptr->part_ptr ?
		     job_ptr->part_ptr->priority_tier << 16 : 0;

	return p + MIN(job_ptr->node_cnt, 0xffff);
}

extern int preempt_p_get_data(job_record_t *job_ptr,
			      slurm_preempt_data_type_t data_type, void *data)
{
	switch (data_type) {
	case PREEMPT_DATA_ENABLED:
		*(bool *) data = slurm_conf.preempt_mode != PREEMPT_MODE_OFF;
		return SLURM_SUCCESS;
	case PREEMPT_DATA_MODE:
		*(uint16_t *) data = _mode(job_ptr);
		return SLURM_SUCCESS;
	case PREEMPT_DATA_PRIO:
		*(uint32_t *) data = _prio(job_ptr);
		return SLURM_SUCCESS;
	case PREEMPT_DATA_GRACE_TIME:
		*(uint32_t *) data = job_ptr->part_ptr ?
				     job_ptr->part_ptr->grace_time : 0;
		return SLURM_SUCCESS;
	default:
		error("%s: unknown enum %d", plugin_type, data_type);
		return SLURM_ERROR;
	}
}
