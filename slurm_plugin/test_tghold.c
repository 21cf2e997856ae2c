/*
 * slurm_plugin/test_tghold.c - unit tests of tghold.c, the holds of nodes
 * freed by preemption (TAP; run by tests/slurm/test-tghold).
 *
 * tghold.c and tgreason.c are compiled against Slurm 22.05's headers and
 * linked with Slurm's own libslurmfull (bitstrings, xmalloc, logging, the
 * node table and bitmap2node_name: the real ones).  slurmctld is a
 * program, not a library, so the three of its calls they use are defined
 * here: find_job_record() over a job table this test fills, and
 * lock_slurmctld()/unlock_slurmctld() as no-ops (one thread; tgreason's
 * thread is never started).
 */
#include "config.h"

#define _GNU_SOURCE

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "slurm/slurm.h"
#include "src/common/slurm_xlator.h"
#include "src/common/bitstring.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/read_config.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"

#include "tap.h"
#include "tghold.h"

#define NJOBS	(TGH_MAX_HOLDS + TGH_MAX_PROPOSALS + 16)
#define NNODES	4

static job_record_t jobs[NJOBS + 1];
static struct job_details details[NJOBS + 1];
static node_record_t node_tab[NNODES];
static node_record_t *node_ptrs[NNODES];

/* slurmctld's (src/slurmctld/job_mgr.c): the job table is this test's. */
extern job_record_t *find_job_record(uint32_t job_id)
{
	return job_id && job_id <= NJOBS && jobs[job_id].job_id ? &jobs[job_id]
								 : NULL;
}

/* slurmctld's (src/slurmctld/locks.c): one thread here. */
extern void lock_slurmctld(slurmctld_lock_t lock_levels)
{
	(void) lock_levels;
}

extern void unlock_slurmctld(slurmctld_lock_t lock_levels)
{
	(void) lock_levels;
}

static void _setup(char *dir)
{
	static char names[NNODES][8];

	for (int i = 0; i < NNODES; i++) {
		snprintf(names[i], sizeof(names[i]), "n%d", i + 1);
		node_tab[i].name = names[i];
		node_tab[i].index = i;
		node_ptrs[i] = &node_tab[i];
	}
	node_record_table_ptr = node_ptrs;
	node_record_count = NNODES;
	for (uint32_t id = 1; id <= NJOBS; id++) {
		jobs[id].job_id = id;
		jobs[id].job_state = JOB_PENDING;
		jobs[id].details = &details[id];
	}
	slurm_conf.state_save_location = dir;
	tgh_init("test/tghold");
}

/* Proposes a hold of node 0 for \p id. */
static void _propose(uint32_t id)
{
	bitstr_t *b = bit_alloc(NNODES);

	bit_set(b, 0);
	tgh_propose(&jobs[id], b, NULL, 0, 60);
	FREE_NULL_BITMAP(b);
}

/* slurmctld commits \p id's preemption (node_scheduler.c sets this). */
static void _commit(uint32_t id, time_t now)
{
	details[id].preempt_start_time = now;
}

/*
 * Proposals never keep a committed hold out: more waiting preemptors
 * than TGH_MAX_PROPOSALS (24.11 keeps each proposal until its job is
 * recomputed: tgh_update(NULL, ...)) and a commit still gets its hold.
 */
static void test_proposals_bounded(void)
{
	const uint32_t n = TGH_MAX_PROPOSALS + 5, last = n;
	time_t now = 1000;

	for (uint32_t id = 1; id <= n; id++)
		_propose(id);
	tgh_update(NULL, now);
	is_int(tgh_nproposed(), TGH_MAX_PROPOSALS,
	       "proposals: at most TGH_MAX_PROPOSALS kept");
	is_int(tgh_ntaken(), 0, "proposals: none taken before a commit");
	_commit(last, now);
	_commit(1, now);		/* its proposal was the oldest: dropped */
	_commit(100, now);
	tgh_update(NULL, now);
	ok(tgh_find(last) != NULL,
	   "proposals: the newest proposal, committed, is held");
	ok(tgh_find(100) != NULL, "proposals: a kept proposal, committed, "
	   "is held");
	ok(tgh_find(1) == NULL, "proposals: the oldest proposal was dropped "
	   "past TGH_MAX_PROPOSALS (an error names it)");
	is_int(tgh_ntaken(), 2, "proposals: two holds taken");
	is_int(tgh_nproposed(), TGH_MAX_PROPOSALS - 2,
	       "proposals: the taken ones no longer count as proposals");
	tgh_free();
	is_int(tgh_ntaken() + tgh_nproposed(), 0, "tgh_free forgets all");
	for (uint32_t id = 1; id <= n; id++)
		details[id].preempt_start_time = 0;
}

/* Taken holds have their own bound; past it, a commit gets no hold (an
 * error says so) and its proposal is dropped; proposals still come. */
static void test_taken_bounded(void)
{
	time_t now = 2000;
	uint32_t id;
	tgh_hold_t *h;

	for (id = 1; id <= TGH_MAX_HOLDS + 1; id++) {
		_propose(id);
		_commit(id, now);
		tgh_update(NULL, now);
	}
	is_int(tgh_ntaken(), TGH_MAX_HOLDS, "taken: at most TGH_MAX_HOLDS");
	ok(tgh_find(TGH_MAX_HOLDS + 1) == NULL,
	   "taken: the commit past TGH_MAX_HOLDS gets no hold");
	is_int(tgh_nproposed(), 0, "taken: its proposal is dropped");
	for (; id <= TGH_MAX_HOLDS + 10; id++)
		_propose(id);
	is_int(tgh_nproposed(), 9,
	       "taken: proposals still come while the holds are full");
	h = tgh_find(7);
	ok(h && h->expires == now + 60,
	   "taken: a hold lasts ReserveTime from its commit");
	jobs[7].job_state = JOB_RUNNING;	/* it started */
	tgh_update(NULL, now);
	ok(tgh_find(7) == NULL && tgh_ntaken() == TGH_MAX_HOLDS - 1,
	   "taken: a started job's hold is dropped, its slot freed");
	_propose(TGH_MAX_HOLDS + 20);
	_commit(TGH_MAX_HOLDS + 20, now);
	tgh_update(NULL, now);
	ok(tgh_find(TGH_MAX_HOLDS + 20) != NULL,
	   "taken: the freed slot serves the next commit");
	tgh_update(NULL, now + 61);
	is_int(tgh_ntaken(), 0, "taken: lapsed holds are dropped");
	tgh_free();
}

int main(void)
{
	char dir[] = "/tmp/test_tghold.XXXXXX";
	log_options_t lo = LOG_OPTS_STDERR_ONLY;
	char path[sizeof(dir) + 32];

	lo.stderr_level = LOG_LEVEL_QUIET;
	log_init("test_tghold", lo, 0, NULL);
	if (!mkdtemp(dir)) {
		printf("1..0 # SKIP mkdtemp: cannot make a temporary dir\n");
		return 0;
	}
	_setup(dir);
	test_proposals_bounded();
	test_taken_bounded();
	snprintf(path, sizeof(path), "%s/%s", dir, TGH_FILE);
	(void) unlink(path);
	(void) rmdir(dir);
	log_fini();
	return done_testing();
}
