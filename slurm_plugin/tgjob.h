/*****************************************************************************\
 *  tgjob.h - a Slurm job's topogang request, for every Slurm version.
 *
 *  What a job asks of the core does not depend on the Slurm version: its
 *  --topo-gather / --topo-spread / --topo-slice (the SPANK plugin's
 *  variables, or the words of its comment for jobs that come through
 *  slurmrestd), its partition's default from topogang.conf, Slurm's own
 *  --switches, and the per-node shape of its members.  tgjob.c reads the
 *  job record fields that 22.05 and 24.11 share (spank_job_env, comment,
 *  details, req_switch, gres_list_req) and is compiled once per Slurm
 *  source tree, into select/topogang (22.05) and topology/topogang
 *  (24.11).  Names are prefixed tgj_.
\*****************************************************************************/

#ifndef _TOPOGANG_TGJOB_H
#define _TOPOGANG_TGJOB_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <time.h>

#include "src/slurmctld/slurmctld.h"
#include "tg_slurm_gres.h"

#include "topogang/gang.h"
#include "topogang/place.h"
#include "topogang/topology.h"

#include "tgconf.h"

/* What tgj_request() added to a gang, for the log and the reasons. */
typedef struct tgj_req {
	bool must;		/* a MUST layer, a hard spread or
				 * --switches=1 within its wait */
	bool slice;		/* a --topo-slice (only the core can
				 * check it) */
	char txt[512];		/* "spine:must spread=... slice=..." */
	const char *src;	/* where the gather came from */
} tgj_req;

/* The gpu GRES plugin id (gres_build_id("gpu")), set by the adapter's
 * init(); 0: GPUs are not modelled. */
extern uint32_t tgj_gpu_plugin_id;

/*
 * Memory per GPU (MB) when the job's memory comes from its GRES, as
 * select/cons_tres decides it (no --mem/--mem-per-cpu, a --mem-per-gpu
 * or DefMemPerGPU, memory consumable); 0 otherwise.
 */
extern uint64_t tgj_gpu_mem(job_record_t *job_ptr);

/* The job may not share its nodes (--exclusive, OverSubscribe=EXCLUSIVE,
 * or no memory request, not even through --mem-per-gpu, while memory is
 * consumable). */
extern bool tgj_exclusive(job_record_t *job_ptr);

/*
 * The per-node shape of the job's members and their number: one member
 * per node, or (tasks that may share nodes: -n N without -N, see
 * tgj_per_task) one per task.  \p max_node_cpus is the largest candidate
 * node's CPU count (for -n without -N).  Returns SLURM_ERROR when the
 * CPUs need more than \p max_nodes nodes.
 */
extern int tgj_shape(job_record_t *job_ptr, uint32_t min_nodes,
		     uint32_t max_nodes, uint32_t max_node_cpus,
		     tg_shape *sh, uint32_t *members, bool *exclusive,
		     bool *per_task);

/* GPUs the job asks for on each of \p members nodes. */
extern uint64_t tgj_req_gpus(job_record_t *job_ptr, uint32_t members);

/*
 * Adds the job's gather, spread and slice requests (option, comment,
 * partition default, DefaultGather) and --switches=1 within its wait to
 * \p g, layer names mapped through \p conf's LayerName aliases.  \p
 * members sizes the messages.  \p ptype names the plugin in error()s.
 * Returns SLURM_SUCCESS, or SLURM_ERROR with \p why (out of memory, an
 * impossible slice).
 */
extern int tgj_request(job_record_t *job_ptr, const tgs_conf *conf,
		       const tg_topology *t, tg_gang *g, uint32_t members,
		       const char *ptype, tgj_req *out, char *why,
		       size_t wlen);

/* Each node of the core's model carries its Slurm name as this label,
 * for the required nodes of -w/--nodelist (tgj_members). */
#define TGJ_NODE_LABEL	"topogang.slurm/node"

/*
 * Adds the job's members to \p g: one per node (\p per_task: one per
 * task); with -w/--nodelist the required nodes each take one member
 * restricted to them by TGJ_NODE_LABEL, the others go elsewhere.  *\p
 * nreq is the number of required nodes.  SLURM_ERROR (out of memory)
 * with \p why.
 */
extern int tgj_members(tg_gang *g, job_record_t *job_ptr, const tg_shape *gs,
		       uint32_t members, bool per_task, unsigned *nreq,
		       char *why, size_t wlen);

/*
 * --switches=N@time with N > 1: true (and \p why) while the decision
 * \p d spans more than N leaf switches and the job has not waited its
 * time.
 */
extern bool tgj_switches_wait(job_record_t *job_ptr, const tg_topology *t,
			      const tg_decision *d, time_t now, char *why,
			      size_t wlen);

/* The node's gpu GRES state, NULL when it has none (or GPUs are not
 * modelled).  Owned by slurmctld. */
extern gres_node_state_t *tgj_node_gpu_state(node_record_t *node_ptr);

/*
 * How costly a running job is as a victim, as Slurm's preemption ranks
 * candidates: its partition's PriorityTier, then its QOS priority.  The
 * job priority itself is not used: with priority/basic it only says which
 * job was submitted first, and Kubernetes' and the CLI's answers for the
 * same request would then differ from slurmctld's (tests/parity).
 */
extern int64_t tgj_preempt_rank(const job_record_t *jp);

/*
 * Adds a running job's allocations to \p t, one per node it holds (pod
 * "JobId=N/NODE", gang "JobId=N"), preemptible when \p cand.  Returns how
 * many were added.
 */
extern unsigned tgj_add_job(tg_topology *t, job_record_t *jp, bool cand);

#endif /* _TOPOGANG_TGJOB_H */
