/*****************************************************************************\
 *  tghold.h - nodes held for a preemptor, one implementation for both
 *  plugins: select/topogang (Slurm 22.05) and topology/topogang (Slurm
 *  24.11).  Only types and calls both versions share are used (tghold.c
 *  names the one call whose signature differs).
 *
 *  When the core chooses victims for a job, the nodes they free are held
 *  for that job (the preemptor) until it starts or ReserveTime passes, so
 *  no other job takes them while the victims leave.  A hold goes through
 *  two steps:
 *   - tentative, when the core's victims go to slurmctld: on 22.05 when
 *     select_p_job_test hands it a preemptee list in run-now mode, on
 *     24.11 when preempt/topogang orders the preemptee candidates
 *     (topology_topogang.c _vic_set).  slurmctld may still refuse the
 *     selection after that (an accounting limit, its node-count checks,
 *     another node set tried) and then preempts nothing;
 *   - taken, once slurmctld has committed the preemption: it sets the
 *     preemptor's details->preempt_start_time when it signals or requeues
 *     the victims (node_scheduler.c select_nodes after _preempt_jobs, in
 *     both versions).  tgh_update() notices the new time and takes the
 *     hold; a tentative hold still uncommitted when the next job is
 *     tested is dropped.  Taken and tentative holds have their own
 *     bounds (TGH_MAX_HOLDS, TGH_MAX_PROPOSALS): on 24.11 a proposal
 *     stays until its job is recomputed or no longer waits, and many
 *     waiting preemptors must not use up the slots a committed
 *     preemption needs.
 *  Only taken holds are enforced (tgh_trim, tgh_find) and saved: they are
 *  written to StateSaveLocation/TGH_FILE whenever they change (and at
 *  every select_p_state_save on 22.05), and read back at slurmctld's
 *  start (22.05: select_p_state_restore; 24.11: the first
 *  topology_p_build_config), so they survive a slurmctld restart, which
 *  on 24.11 `scontrol reconfigure` is.  Names are prefixed tgh_.  Callers
 *  hold the plugin's state lock; only slurmctld calls these.
\*****************************************************************************/

#ifndef _TOPOGANG_TGHOLD_H
#define _TOPOGANG_TGHOLD_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define TGH_MAX_HOLDS	1024	/* taken holds (preemptions slurmctld
				 * committed); past it a preemptor's nodes
				 * are not held (an error says so).
				 * Tentative holds never count here */
#define TGH_MAX_PROPOSALS 1024	/* tentative holds (proposals not yet
				 * committed); past it the oldest proposal
				 * is dropped for the new one (an error
				 * names its job), so waiting preemptors
				 * never keep a committed hold out */
#define TGH_FILE	"topogang_holds"	/* in StateSaveLocation */
#define TGH_MAX_FILE	(8u << 20)	/* bytes of TGH_FILE read back */

/* The core's GPU indices for a job on one node (node index, mask). */
typedef struct gpu_pick {
	uint32_t node;
	uint64_t gpus;
} gpu_pick_t;

typedef struct tgh_hold {
	uint32_t job_id;
	bitstr_t *nodes;		/* node indexes held for the job */
	gpu_pick_t *picks;		/* the core's GPUs on them */
	unsigned npicks;
	time_t expires;			/* taken: when it lapses; tentative:
					 * ReserveTime, counted from when it is
					 * taken */
	bool taken;			/* slurmctld committed the preemption */
	time_t pst;			/* the job's preempt_start_time when the
					 * tentative hold was made */
	uint64_t seq;			/* tentative: order of the proposals
					 * (the oldest is dropped first) */
} tgh_hold_t;

/* Names the plugin in messages. */
extern void tgh_init(const char *ptype);

/* Forgets every hold (fini). */
extern void tgh_free(void);

/*
 * A tentative hold of \p nodes (and the core's \p picks on them) for
 * \p job_ptr, which slurmctld is about to preempt for; it replaces the
 * job's earlier one, if any, and is taken by tgh_update() once slurmctld
 * commits, to last \p reserve_time seconds from then.
 */
extern void tgh_propose(job_record_t *job_ptr, bitstr_t *nodes,
			const gpu_pick_t *picks, unsigned npicks,
			time_t reserve_time);

/*
 * Brings the holds up to date at \p now before a node selection for
 * \p job_ptr (NULL: none, e.g. a state save): takes the tentative holds
 * whose preemption slurmctld committed; drops the tentative ones it did
 * not (unless \p job_ptr is NULL), the lapsed ones and those whose job
 * no longer waits.  Saves them when they changed.
 */
extern void tgh_update(job_record_t *job_ptr, time_t now);

/* The taken hold of \p job_id, NULL if none. */
extern tgh_hold_t *tgh_find(uint32_t job_id);

/* Drops \p job_id's hold (it started, or was cancelled). */
extern void tgh_drop(uint32_t job_id);

/* Takes the nodes held for jobs other than \p job_id out of \p bitmap;
 * returns how many it took out. */
extern int tgh_trim(uint32_t job_id, bitstr_t *bitmap);

/* The holds, for the core's model: how many slots (taken and
 * tentative), and the i-th if it is taken (NULL otherwise). */
extern unsigned tgh_count(void);
extern tgh_hold_t *tgh_at(unsigned i);

/* How many holds are taken and how many tentative (for tests and logs). */
extern unsigned tgh_ntaken(void);
extern unsigned tgh_nproposed(void);

/*
 * Writes the taken holds to \p dir/TGH_FILE (atomically: a new file
 * renamed over the old).  An error is logged once per kind until a
 * write succeeds.  Returns SLURM_SUCCESS or SLURM_ERROR.
 */
extern int tgh_save(const char *dir);

/*
 * Reads \p dir/TGH_FILE back (once per process: a reconfigure keeps the
 * holds in memory).  A missing file is no hold; a bad line is one
 * error() naming the file and line, and that hold is dropped.  Never
 * fails slurmctld's start: returns SLURM_SUCCESS.
 */
extern int tgh_restore(const char *dir);

#endif /* _TOPOGANG_TGHOLD_H */
