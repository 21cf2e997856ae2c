/*****************************************************************************\
 *  tgreason.c - the core's pending reasons on Slurm jobs (see tgreason.h).
\*****************************************************************************/

#include "config.h"

#define _GNU_SOURCE

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"

#include "src/common/slurm_xlator.h"
#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"

/* slurmctld's own data: weak, so that clients and slurmd, which load
 * the plugin too, need not have it (only slurmctld reaches the code). */
#pragma weak last_job_update
#pragma weak job_list

#include "tgreason.h"

typedef struct reason {
	uint32_t job_id;
	char *msg;			/* malloc'd, state_desc to show */
} reason_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static reason_t reasons[TGR_MAX_REASONS];
static unsigned nreasons = 0;
static pthread_t thread;
static bool started = false, stop = false;
static bool kicked = false;	/* a reason set in this pass: walk after it */

static reason_t *_find(uint32_t job_id)
{
	for (unsigned i = 0; i < nreasons; i++)
		if (reasons[i].job_id == job_id)
			return &reasons[i];
	return NULL;
}

extern void tgr_drop(uint32_t job_id)
{
	slurm_mutex_lock(&lock);
	for (unsigned i = 0; i < nreasons; i++) {
		if (reasons[i].job_id != job_id)
			continue;
		free(reasons[i].msg);
		reasons[i] = reasons[--nreasons];
		break;
	}
	slurm_mutex_unlock(&lock);
}

typedef struct once {
	uint32_t job_id;
	uint32_t cond;			/* FNV-1a of the condition */
} once_t;

static once_t once_tab[TGR_MAX_ONCE];
static unsigned once_n = 0, once_next = 0;

extern bool tgr_once(uint32_t job_id, const char *cond)
{
	uint32_t h = 2166136261u;
	bool fresh = true;

	for (; *cond; cond++)
		h = (h ^ (uint8_t) *cond) * 16777619u;
	slurm_mutex_lock(&lock);
	for (unsigned i = 0; i < once_n && fresh; i++)
		if (once_tab[i].job_id == job_id && once_tab[i].cond == h)
			fresh = false;
	if (fresh) {
		once_tab[once_next].job_id = job_id;
		once_tab[once_next].cond = h;
		once_next = (once_next + 1) % TGR_MAX_ONCE;
		if (once_n < TGR_MAX_ONCE)
			once_n++;
	}
	slurm_mutex_unlock(&lock);
	return fresh;
}

/* Remembers \p msg for the job (under lock); true when it is new. */
static bool _remember(job_record_t *job_ptr, const char *msg, char **out)
{
	reason_t *r = _find(job_ptr->job_id);
	bool fresh = !r || strcmp(r->msg, msg);
	char *dup;

	*out = r ? r->msg : NULL;
	if (!fresh)
		return false;
	dup = strndup(msg, TGR_MAX_LEN);
	if (!dup)
		return false;
	if (!r) {
		if (nreasons >= TGR_MAX_REASONS) {
			/* drop the oldest */
			free(reasons[0].msg);
			memmove(&reasons[0], &reasons[1],
				(nreasons - 1) * sizeof(reasons[0]));
			nreasons--;
		}
		r = &reasons[nreasons++];
		r->job_id = job_ptr->job_id;
	} else {
		free(r->msg);
	}
	r->msg = dup;
	*out = dup;
	return true;
}

extern bool tgr_set(job_record_t *job_ptr, const char *msg)
{
	char *cur;
	bool fresh;

	slurm_mutex_lock(&lock);
	fresh = _remember(job_ptr, msg, &cur);
	if (cur && (!job_ptr->state_desc ||
		    strcmp(job_ptr->state_desc, cur))) {
		xfree(job_ptr->state_desc);
		job_ptr->state_desc = xstrdup(cur);
		last_job_update = time(NULL);
	}
	/* slurmctld wipes the message once this selection has failed, still
	 * under the job lock it holds now: the thread walks as soon as that
	 * lock is released, not a second later */
	kicked = true;
	pthread_cond_signal(&cond);
	slurm_mutex_unlock(&lock);
	return fresh;
}

/*
 * Walks the remembered reasons: forgets those of jobs that no longer wait
 * and, for a pending job waiting for resources whose reason was wiped,
 * puts it back when \p fix (under the job write lock) or only says so
 * (under the read lock).  Returns whether any was wiped.  Under lock.
 */
static bool _walk(bool fix)
{
	bool any = false;

	for (unsigned i = 0; i < nreasons;) {
		job_record_t *job_ptr = find_job_record(reasons[i].job_id);

		if (!job_ptr || !IS_JOB_PENDING(job_ptr)) {
			free(reasons[i].msg);
			reasons[i] = reasons[--nreasons];
			continue;
		}
		if ((job_ptr->state_reason == WAIT_RESOURCES) &&
		    (!job_ptr->state_desc ||
		     strcmp(job_ptr->state_desc, reasons[i].msg))) {
			any = true;
			if (fix) {
				xfree(job_ptr->state_desc);
				job_ptr->state_desc = xstrdup(reasons[i].msg);
				last_job_update = time(NULL);
			}
		}
		i++;
	}
	return any;
}

/*
 * Once a second, and after every pass that set a reason (kicked: the walk
 * then waits for the job lock the pass holds, so the message is back as
 * soon as the pass ends, and squeue shows it, not "Resources", almost all
 * the time): a look under the job read lock, and the write lock only when
 * a reason was wiped (slurmctld clears state_desc after each failed
 * selection), so most walks block no writer.  Walks are at least
 * TGR_KICK_MS apart (from the end of one to the start of the next), so a
 * scheduler that sets reasons many times a second costs at most
 * 1000 / TGR_KICK_MS walks a second.
 */
static void *_loop(void *arg)
{
	slurmctld_lock_t job_write_lock = { .job = WRITE_LOCK };
	slurmctld_lock_t job_read_lock = { .job = READ_LOCK };

	struct timespec last = { 0, 0 };	/* end of the last walk */

	(void) arg;
	for (;;) {
		struct timespec ts, now;
		bool any;
		long gap_ms;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		slurm_mutex_lock(&lock);
		while (!stop && !kicked &&
		       !pthread_cond_timedwait(&cond, &lock, &ts))
			;
		if (stop) {
			slurm_mutex_unlock(&lock);
			break;
		}
		kicked = false;
		any = nreasons > 0;
		slurm_mutex_unlock(&lock);
		if (!any)
			continue;
		/* walks at least TGR_KICK_MS apart, end to start */
		clock_gettime(CLOCK_MONOTONIC, &now);
		gap_ms = (now.tv_sec - last.tv_sec) * 1000L +
			 (now.tv_nsec - last.tv_nsec) / 1000000L;
		if (gap_ms >= 0 && gap_ms < TGR_KICK_MS)
			nanosleep(&(struct timespec){ .tv_nsec =
				(TGR_KICK_MS - gap_ms) * 1000000L }, NULL);
		lock_slurmctld(job_read_lock);
		slurm_mutex_lock(&lock);
		any = _walk(false);
		slurm_mutex_unlock(&lock);
		unlock_slurmctld(job_read_lock);
		if (any) {
			lock_slurmctld(job_write_lock);
			slurm_mutex_lock(&lock);
			(void) _walk(true);
			slurm_mutex_unlock(&lock);
			unlock_slurmctld(job_write_lock);
		}
		clock_gettime(CLOCK_MONOTONIC, &last);
	}
	return NULL;
}

extern void tgr_start(const char *ptype)
{
	if (started)
		return;
	stop = false;
	if (pthread_create(&thread, NULL, _loop, NULL))
		error("%s: cannot start the pending-reason thread: %m; "
		      "pending reasons show only between scheduling passes",
		      ptype);
	else
		started = true;
}

extern void tgr_stop(void)
{
	if (started) {
		slurm_mutex_lock(&lock);
		stop = true;
		pthread_cond_broadcast(&cond);
		slurm_mutex_unlock(&lock);
		pthread_join(thread, NULL);
		started = false;
	}
	slurm_mutex_lock(&lock);
	for (unsigned i = 0; i < nreasons; i++)
		free(reasons[i].msg);
	nreasons = 0;
	slurm_mutex_unlock(&lock);
}
