/*****************************************************************************\
 *  tghold.c - nodes held for a preemptor, shared by select/topogang
 *  (Slurm 22.05) and topology/topogang (Slurm 24.11); see tghold.h.
 *
 *  The file TGH_FILE in StateSaveLocation, one line a taken hold:
 *    TGH1                                   (the format's version, first)
 *    JOBID EXPIRES NODES PICKS              (EXPIRES: seconds since the
 *                                            epoch; NODES: a Slurm host
 *                                            list; PICKS: "-" or
 *                                            NODE=MASK,... the core's
 *                                            GPUs, MASK in decimal)
 *  Node names, not indexes, so a node table rebuilt at a restart still
 *  finds its nodes.
\*****************************************************************************/

#include "config.h"

#define _GNU_SOURCE

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"

#include "src/common/slurm_xlator.h"
#include "src/common/bitstring.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "topogang/util.h"

#include "tghold.h"
#include "tgreason.h"

/*
 * The one Slurm call here whose signature differs between the versions
 * built: node_name2bitmap() gained an invalid_hostlist argument in 23.02
 * (src/common/node_conf.h).  Everything else used here (job_record_t,
 * details->preempt_start_time, find_job_record, bitmap2node_name,
 * find_node_record, node_record_table_ptr, slurm_conf) is the same in
 * 22.05 and 24.11.
 */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
#define _names2bitmap(names, bitmap) \
	node_name2bitmap((names), false, (bitmap), NULL)
#else
#define _names2bitmap(names, bitmap) node_name2bitmap((names), false, (bitmap))
#endif

static const char *ptype = "select/topogang";
/* taken and tentative holds together; each kind has its own bound */
static tgh_hold_t holds[TGH_MAX_HOLDS + TGH_MAX_PROPOSALS];
static unsigned nholds = 0;		/* ntaken + nprop */
static unsigned ntaken = 0, nprop = 0;
static uint64_t next_seq = 0;		/* the next proposal's seq */
static bool restored = false;
static int save_err = 0;		/* errno of the last failed save, so
					 * one failure is logged once */

extern void tgh_init(const char *plugin_type)
{
	ptype = plugin_type;
}

static void _drop_at(unsigned i)
{
	if (holds[i].taken)
		ntaken--;
	else
		nprop--;
	FREE_NULL_BITMAP(holds[i].nodes);
	xfree(holds[i].picks);
	holds[i] = holds[--nholds];
}

extern void tgh_free(void)
{
	while (nholds)
		_drop_at(nholds - 1);
}

static tgh_hold_t *_find_any(uint32_t job_id)
{
	for (unsigned i = 0; i < nholds; i++)
		if (holds[i].job_id == job_id)
			return &holds[i];
	return NULL;
}

extern tgh_hold_t *tgh_find(uint32_t job_id)
{
	tgh_hold_t *h = _find_any(job_id);

	return h && h->taken ? h : NULL;
}

extern void tgh_drop(uint32_t job_id)
{
	tgh_hold_t *h = _find_any(job_id);
	bool taken;

	if (!h)
		return;
	taken = h->taken;
	_drop_at((unsigned) (h - holds));
	if (taken)
		(void) tgh_save(slurm_conf.state_save_location);
}

/* Logs that \p job_id's committed preemption gets no hold. */
static void _full(uint32_t job_id)
{
	if (tgr_once(job_id, "holds-full"))
		error("%s: more than %d jobs hold nodes freed by preemption "
		      "(TGH_MAX_HOLDS); JobId=%u's nodes are not held", ptype,
		      TGH_MAX_HOLDS, job_id);
}

/* Drops the oldest tentative hold, to make room for a new proposal. */
static void _drop_oldest_proposal(uint32_t for_job)
{
	unsigned i, old = nholds;

	for (i = 0; i < nholds; i++)
		if (!holds[i].taken &&
		    (old == nholds || holds[i].seq < holds[old].seq))
			old = i;
	if (old == nholds)
		return;
	if (tgr_once(holds[old].job_id, "proposals-full"))
		error("%s: more than %d preemptors wait for slurmctld to "
		      "commit their preemption (TGH_MAX_PROPOSALS); the "
		      "oldest proposal, JobId=%u's, is dropped for JobId=%u's "
		      "(if slurmctld commits it, its nodes are not held)",
		      ptype, TGH_MAX_PROPOSALS, holds[old].job_id, for_job);
	_drop_at(old);
}

/*
 * A new hold for \p job_id (its old one replaced), taken or tentative.
 * A taken one past TGH_MAX_HOLDS is refused (NULL, an error says so); a
 * tentative one past TGH_MAX_PROPOSALS replaces the oldest proposal.
 */
static tgh_hold_t *_add(uint32_t job_id, bitstr_t *nodes,
			const gpu_pick_t *picks, unsigned npicks, bool taken)
{
	tgh_hold_t *h = _find_any(job_id);

	if (h)
		_drop_at((unsigned) (h - holds));
	if (taken && ntaken >= TGH_MAX_HOLDS) {
		_full(job_id);
		return NULL;
	}
	if (!taken && nprop >= TGH_MAX_PROPOSALS)
		_drop_oldest_proposal(job_id);
	h = &holds[nholds++];
	memset(h, 0, sizeof(*h));
	h->job_id = job_id;
	h->taken = taken;
	if (taken)
		ntaken++;
	else {
		nprop++;
		h->seq = next_seq++;
	}
	h->nodes = bit_copy(nodes);
	h->npicks = npicks;
	if (npicks) {
		h->picks = xcalloc(npicks, sizeof(*picks));
		memcpy(h->picks, picks, npicks * sizeof(*picks));
	}
	return h;
}

extern void tgh_propose(job_record_t *job_ptr, bitstr_t *nodes,
			const gpu_pick_t *picks, unsigned npicks,
			time_t reserve_time)
{
	tgh_hold_t *h = _add(job_ptr->job_id, nodes, picks, npicks, false);

	if (!h)
		return;
	h->pst = job_ptr->details ? job_ptr->details->preempt_start_time : 0;
	h->expires = reserve_time;	/* a duration until taken */
}

extern void tgh_update(job_record_t *job_ptr, time_t now)
{
	bool changed = false;
	unsigned i = 0;

	while (i < nholds) {
		tgh_hold_t *h = &holds[i];
		job_record_t *jp = find_job_record(h->job_id);
		char *nodes;

		if (!jp || !IS_JOB_PENDING(jp)) {
			changed |= h->taken;
			_drop_at(i);
			continue;
		}
		if (!h->taken && jp->details &&
		    jp->details->preempt_start_time != h->pst &&
		    ntaken >= TGH_MAX_HOLDS) {
			_full(h->job_id);
			_drop_at(i);
			continue;
		} else if (!h->taken && jp->details &&
			   jp->details->preempt_start_time != h->pst) {
			/* slurmctld preempted for it: take the hold */
			h->taken = true;
			ntaken++;
			nprop--;
			h->expires += now;
			changed = true;
			nodes = bitmap2node_name(h->nodes);
			info("%s: %pJ: slurmctld preempted for it; %s held for "
			     "it until it starts (at most until %ld)", ptype,
			     jp, nodes, (long) h->expires);
			xfree(nodes);
		} else if (!h->taken && job_ptr) {
			/* slurmctld did not preempt for it (its own checks
			 * after the selection refused, or another node set
			 * won): nothing to hold */
			debug("%s: %pJ: no preemption committed; its "
			      "proposed hold is dropped", ptype, jp);
			_drop_at(i);
			continue;
		} else if (h->taken && h->expires <= now) {
			info("%s: %pJ: its hold on nodes freed by preemption "
			     "lapsed", ptype, jp);
			_drop_at(i);
			changed = true;
			continue;
		}
		i++;
	}
	if (changed)
		(void) tgh_save(slurm_conf.state_save_location);
}

extern int tgh_trim(uint32_t job_id, bitstr_t *bitmap)
{
	int n = 0, sz = bit_size(bitmap);

	for (unsigned i = 0; i < nholds; i++) {
		int k, hs;

		if (holds[i].job_id == job_id || !holds[i].taken)
			continue;
		hs = bit_size(holds[i].nodes);
		for (k = 0; k < hs && k < sz; k++)
			if (bit_test(holds[i].nodes, k) &&
			    bit_test(bitmap, k)) {
				bit_clear(bitmap, k);
				n++;
			}
	}
	return n;
}

extern unsigned tgh_count(void)
{
	return nholds;
}

extern tgh_hold_t *tgh_at(unsigned i)
{
	return i < nholds && holds[i].taken ? &holds[i] : NULL;
}

extern unsigned tgh_ntaken(void)
{
	return ntaken;
}

extern unsigned tgh_nproposed(void)
{
	return nprop;
}

/* ---- the state file ---- */

static void _save_err(const char *path, const char *what)
{
	if (errno && errno == save_err)
		return;
	save_err = errno ? errno : -1;
	error("%s: cannot %s %s: %m; the holds of preemptors are not saved "
	      "(a slurmctld restart would forget them)", ptype, what, path);
}

/* One hold's line: "JOBID EXPIRES NODES PICKS\n" (xfree()). */
static char *_line(const tgh_hold_t *h)
{
	char *nodes = bitmap2node_name(h->nodes), *line = NULL;
	unsigned k, n = 0;

	xstrfmtcat(line, "%u %ld %s ", h->job_id, (long) h->expires, nodes);
	for (k = 0; k < h->npicks; k++) {
		if ((int) h->picks[k].node >= node_record_count ||
		    !node_record_table_ptr[h->picks[k].node])
			continue;
		xstrfmtcat(line, "%s%s=%" PRIu64, n++ ? "," : "",
			   node_record_table_ptr[h->picks[k].node]->name,
			   h->picks[k].gpus);
	}
	xstrcat(line, n ? "\n" : "-\n");
	xfree(nodes);
	return line;
}

extern int tgh_save(const char *dir)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	FILE *f;
	int ok;

	if (!dir || !*dir)
		return SLURM_ERROR;
	if (snprintf(path, sizeof(path), "%s/%s", dir, TGH_FILE) >=
	    (int) sizeof(path)) {
		errno = ENAMETOOLONG;
		_save_err(dir, "write holds under");
		return SLURM_ERROR;
	}
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	if (!(f = fopen(tmp, "w"))) {
		_save_err(tmp, "create");
		return SLURM_ERROR;
	}
	ok = fputs("TGH1\n", f) >= 0;
	for (unsigned i = 0; ok && i < nholds; i++) {
		char *line;

		if (!holds[i].taken)
			continue;
		line = _line(&holds[i]);
		ok = fputs(line, f) >= 0;
		xfree(line);
	}
	ok = ok && !fflush(f) && !fsync(fileno(f));
	if (fclose(f))
		ok = 0;
	if (!ok || rename(tmp, path)) {
		_save_err(path, "write");
		(void) unlink(tmp);
		return SLURM_ERROR;
	}
	save_err = 0;
	return SLURM_SUCCESS;
}

/* NODE=MASK,... onto \p h; false on a bad or unknown entry. */
static bool _parse_picks(char *s, tgh_hold_t *h)
{
	char *save = NULL, *e;

	if (!strcmp(s, "-"))
		return true;
	for (e = strtok_r(s, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(e, '=');
		node_record_t *node_ptr;
		uint64_t mask;

		if (!eq)
			return false;
		*eq = '\0';
		if (!(node_ptr = find_node_record(e)) ||
		    !tg_u64_parse(eq + 1, UINT64_MAX, &mask))
			return false;
		xrecalloc(h->picks, h->npicks + 1, sizeof(*h->picks));
		h->picks[h->npicks].node = node_ptr->index;
		h->picks[h->npicks++].gpus = mask;
	}
	return true;
}

/* One line "JOBID EXPIRES NODES PICKS" into a taken hold. */
static bool _parse_line(char *line, const char *path, unsigned lineno)
{
	char *f[5], *save = NULL;
	unsigned n = 0;
	uint64_t id, exp;
	bitstr_t *nodes = NULL;
	tgh_hold_t *h;

	for (char *w = strtok_r(line, " ", &save); w && n < 5;
	     w = strtok_r(NULL, " ", &save))
		f[n++] = w;
	if (n != 4 || !tg_u64_parse(f[0], UINT32_MAX, &id) || !id ||
	    !tg_u64_parse(f[1], INT64_MAX, &exp)) {
		error("%s: %s:%u: not \"JOBID EXPIRES NODES PICKS\"; that "
		      "hold is dropped", ptype, path, lineno);
		return false;
	}
	if (_names2bitmap(f[2], &nodes)) {
		error("%s: %s:%u: JobId=%" PRIu64 ": unknown nodes in %s; that "
		      "hold is dropped", ptype, path, lineno, id, f[2]);
		FREE_NULL_BITMAP(nodes);
		return false;
	}
	h = _add((uint32_t) id, nodes, NULL, 0, true);
	FREE_NULL_BITMAP(nodes);
	if (!h)
		return false;
	h->expires = (time_t) exp;
	if (!_parse_picks(f[3], h)) {
		error("%s: %s:%u: JobId=%u: bad GPU picks; the hold stays, "
		      "without them", ptype, path, lineno, h->job_id);
		xfree(h->picks);
		h->npicks = 0;
	}
	return true;
}

extern int tgh_restore(const char *dir)
{
	char path[PATH_MAX], *text = NULL, *line, *save = NULL;
	size_t len = 0;
	unsigned lineno = 0, n = 0;
	tg_errinfo ei;

	if (restored || !dir || !*dir)
		return SLURM_SUCCESS;
	restored = true;
	snprintf(path, sizeof(path), "%s/%s", dir, TGH_FILE);
	memset(&ei, 0, sizeof(ei));
	if (tg_file_read(path, TGH_MAX_FILE, &text, &len, &ei)) {
		if (access(path, F_OK))
			return SLURM_SUCCESS;	/* none saved */
		error("%s: %s; no hold of a preemptor restored", ptype,
		      ei.msg);
		return SLURM_SUCCESS;
	}
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (++lineno == 1) {
			if (strcmp(line, "TGH1")) {
				error("%s: %s:1: not a TGH1 holds file; no "
				      "hold of a preemptor restored", ptype,
				      path);
				break;
			}
			continue;
		}
		n += _parse_line(line, path, lineno);
	}
	tg_free(text);
	if (n)
		info("%s: restored %u hold(s) of nodes freed by preemption "
		     "from %s", ptype, n, path);
	return SLURM_SUCCESS;
}
