/*****************************************************************************\
 *  tgreason.h - the core's pending reasons on Slurm jobs, for every Slurm
 *  version (select/topogang on 22.05, topology/topogang on 24.11).
 *
 *  slurmctld sets state_reason = WAIT_RESOURCES and frees state_desc after
 *  every failed node selection, after the plugin has returned, so a
 *  message written during the selection does not survive.  tgreason keeps
 *  the core's message per pending job (at most TGR_MAX_REASONS jobs,
 *  TGR_MAX_LEN bytes each) and a thread puts it back as soon as the
 *  scheduling pass that wiped it releases the job lock (and once a second
 *  besides): it looks under the job read lock and takes the write lock only
 *  when a reason was wiped.  Names are
 *  prefixed tgr_.  Only slurmctld calls these.
\*****************************************************************************/

#ifndef _TOPOGANG_TGREASON_H
#define _TOPOGANG_TGREASON_H

#include <stdbool.h>
#include <stdint.h>

#define TGR_MAX_REASONS	4096	/* pending jobs with a core message; the
				 * oldest is dropped past it */
#define TGR_MAX_LEN	1000	/* bytes of state_desc written */
#define TGR_KICK_MS	100	/* walks that put reasons back start at
				 * least this long after the last one
				 * ended (a pass that sets a reason
				 * wakes the thread; it then waits for
				 * the job lock that pass holds) */

/* Starts the thread; \p ptype names the plugin in messages. */
extern void tgr_start(const char *ptype);

/* Stops the thread and forgets every reason. */
extern void tgr_stop(void);

/*
 * Sets the job's pending reason now and remembers it.  Returns true when
 * the message is new for the job (log it then, once).  Caller holds the
 * job write lock (as in a node selection).
 */
extern bool tgr_set(job_record_t *job_ptr, const char *msg);

/* Forgets the job's reason (it was placed, or the core has none). */
extern void tgr_drop(uint32_t job_id);

#define TGR_MAX_ONCE	4096	/* (job, condition) pairs tgr_once
				 * remembers; the oldest is forgotten past it
				 * (and may be logged again) */

/*
 * True the first time it is asked for \p job_id and \p cond (a short
 * text naming the condition, without what changes from pass to pass):
 * errors and fallbacks about a job are logged then, once, not on every
 * scheduling pass.
 */
extern bool tgr_once(uint32_t job_id, const char *cond);

#endif /* _TOPOGANG_TGREASON_H */
