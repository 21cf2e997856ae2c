/*
 * cli/sim_calib.c - a policy's node choice against a real scheduler's,
 * decision by decision, on the same state (issue #7: calibrating the
 * slurm-tree baseline against slurmctld).
 *
 * The input is the event stream tests/slurm/slurm-replay.py records
 * while it replays a trace through a real slurmctld:
 *
 *	start JOB GPUS NODE[,NODE...]	the scheduler started JOB there
 *	end JOB				JOB ended
 *	pending JOB GPUS MEMBERS	the scheduler did not start JOB
 *					although enough nodes had GPUS free
 *	fixed JOB GPUS NODE[,NODE...]	JOB runs there by request (-w):
 *					state, not a decision to compare
 *
 * ('#' starts a comment).  Before applying each start, the policy is
 * asked where it would put the same job (one member of GPUS GPUs on each
 * of as many nodes) on the state the stream has built so far; the two
 * node sets are compared, then the scheduler's choice is applied, so the
 * state always follows the real scheduler.
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

typedef struct cjob {
	char id[SIM_MAX_ID + 1];
	unsigned gpus, n;
	tg_node_id *nodes;
} cjob;

static int node_cmp(const void *pa, const void *pb)
{
	tg_node_id a = *(const tg_node_id *)pa, b = *(const tg_node_id *)pb;

	return a < b ? -1 : a > b;
}

/* "a,b,c" of node names, sorted by node id; NULL when out of memory. */
static char *names(const tg_topology *t, tg_node_id *v, unsigned n)
{
	size_t len = 2, off = 0;
	unsigned i;
	char *s;

	if (n)
		qsort(v, n, sizeof(*v), node_cmp);
	for (i = 0; i < n; i++)
		len += strlen(tg_topology_node_name(t, v[i])) + 1;
	if (!(s = malloc(len)))
		return NULL;
	s[0] = '\0';
	if (!n)
		memcpy(s, "-", 2);
	for (i = 0; i < n; i++)
		off += (size_t)snprintf(s + off, len - off, "%s%s",
					i ? "," : "",
					tg_topology_node_name(t, v[i]));
	return s;
}

/* "leafA,leafB" of the distinct leaf domains of sorted nodes. */
static char *leaves(const tg_topology *t, const tg_node_id *v, unsigned n)
{
	size_t len = 2, off = 0;
	unsigned i;
	tg_domain_id prev = TG_NONE;
	char *s;

	for (i = 0; i < n; i++)
		len += strlen(tg_topology_domain_path(
			t, tg_topology_node_domain(t, v[i]))) + 1;
	if (!(s = malloc(len)))
		return NULL;
	s[0] = '\0';
	if (!n)
		memcpy(s, "-", 2);
	for (i = 0; i < n; i++) {
		tg_domain_id d = tg_topology_node_domain(t, v[i]);
		const char *p, *slash;

		if (d == prev)
			continue;
		p = tg_topology_domain_path(t, d);
		slash = strrchr(p, '/');
		off += (size_t)snprintf(s + off, len - off, "%s%s",
					off ? "," : "", slash ? slash + 1 : p);
		prev = d;
	}
	return s;
}

void sim_calib_free(sim_calib *c)
{
	unsigned i;

	if (!c)
		return;
	for (i = 0; i < c->nmiss; i++) {
		free(c->miss[i].sched);
		free(c->miss[i].policy);
		free(c->miss[i].sched_leaves);
		free(c->miss[i].policy_leaves);
	}
	free(c->miss);
	memset(c, 0, sizeof(*c));
}

static cjob *find_job(cjob *j, unsigned n, const char *id)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (j[i].nodes && !strcmp(j[i].id, id))
			return &j[i];
	return NULL;
}

static tg_err add_miss(sim_calib *c, const tg_topology *t, const char *id,
		       unsigned line, tg_node_id *sched, unsigned ns,
		       tg_node_id *pol, unsigned np)
{
	sim_calib_miss *m;

	if (c->nmiss == c->capmiss) {
		unsigned cap = c->capmiss ? 2 * c->capmiss : 16;
		sim_calib_miss *v = realloc(c->miss, cap * sizeof(*v));

		if (!v)
			return TG_ENOMEM;
		c->miss = v;
		c->capmiss = cap;
	}
	m = &c->miss[c->nmiss];
	memset(m, 0, sizeof(*m));
	snprintf(m->job, sizeof(m->job), "%s", id);
	m->line = line;
	m->sched = names(t, sched, ns);
	m->policy = names(t, pol, np);
	m->sched_leaves = leaves(t, sched, ns);
	m->policy_leaves = leaves(t, pol, np);
	c->nmiss++;
	if (!m->sched || !m->policy || !m->sched_leaves ||
	    !m->policy_leaves)
		return TG_ENOMEM;
	return TG_OK;
}

tg_err sim_calibrate(const sim_fabric *f, const char *buf, size_t len,
		     const char *source, const char *policy, sim_calib *out,
		     tg_errinfo *ei)
{
	tg_topology *t = NULL;
	sim_world w;
	sim_policy *pol = NULL;
	sim_choice ch;
	sim_req rq;
	cjob *jobs = NULL;
	tg_node_id *sel = NULL, *mine = NULL;
	unsigned njobs = 0, capjobs = 0, line = 0, nn, i;
	const char *p = buf, *end = buf + len;
	char gang[SIM_GANG_MAX];
	tg_shape shape;
	tg_err err;

	memset(out, 0, sizeof(*out));
	memset(&w, 0, sizeof(w));
	memset(&ch, 0, sizeof(ch));
	snprintf(out->policy, sizeof(out->policy), "%s", policy);
	if ((err = sim_fabric_instantiate(f, &t, ei)))
		return err;
	if ((err = sim_world_init(&w, t)))
		goto fail;
	nn = w.nnodes;
	err = TG_ENOMEM;
	sel = malloc((nn + 1) * sizeof(*sel));
	mine = malloc((nn + 1) * sizeof(*mine));
	ch.node = malloc((nn + 1) * sizeof(*ch.node));
	ch.gpus = calloc(nn + 1, sizeof(*ch.gpus));
	ch.victims = malloc(sizeof(*ch.victims));
	if (!sel || !mine || !ch.node || !ch.gpus || !ch.victims)
		goto fail;
	if ((err = sim_policy_create(policy, &w, 1, &pol, ei)))
		goto fail;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char ln[SIM_MAX_LINE + 1], *f1, *f2, *f3, *f4, *sv, *x;
		unsigned long long gpus = 0, members = 0;
		cjob *j;
		bool placed;

		line++;
		if (n > SIM_MAX_LINE) {
			sim_seterr(ei, "%s:%u: line longer than %d bytes", source,
			       line, SIM_MAX_LINE);
			err = TG_EINVAL;
			goto fail;
		}
		memcpy(ln, p, n);
		ln[n] = '\0';
		p += n + (nl ? 1 : 0);
		if (n && ln[n - 1] == '\r')
			ln[n - 1] = '\0';
		if ((x = strchr(ln, '#')))
			*x = '\0';
		f1 = strtok_r(ln, " \t", &sv);
		if (!f1)
			continue;
		f2 = strtok_r(NULL, " \t", &sv);
		f3 = strtok_r(NULL, " \t", &sv);
		f4 = strtok_r(NULL, " \t", &sv);
		err = TG_EINVAL;
		if (!f2 || strlen(f2) > SIM_MAX_ID) {
			sim_seterr(ei, "%s:%u: expected 'start|end|pending JOB "
			       "...' (a job id of 1-%d bytes)", source, line,
			       SIM_MAX_ID);
			goto fail;
		}
		if (!strcmp(f1, "end")) {
			if (f3 || !(j = find_job(jobs, njobs, f2))) {
				sim_seterr(ei, "%s:%u: 'end %s': %s", source,
				       line, f2, f3 ? "extra fields" :
				       "no such running job");
				goto fail;
			}
			sim_gang_name((unsigned)(j - jobs), gang);
			tg_topology_remove_gang(t, gang);
			for (i = 0; i < j->n; i++)
				w.free[j->nodes[i]] += (int32_t)j->gpus;
			free(j->nodes);
			j->nodes = NULL;
			continue;
		}
		if ((strcmp(f1, "start") && strcmp(f1, "pending") &&
		     strcmp(f1, "fixed")) || !f3 || !f4 ||
		    strtok_r(NULL, " \t", &sv)) {
			sim_seterr(ei, "%s:%u: expected 'start|fixed JOB GPUS "
			       "NODES', 'end JOB' or 'pending JOB GPUS "
			       "MEMBERS'", source, line);
			goto fail;
		}
		{
			char *e;

			gpus = strtoull(f3, &e, 10);
			if (*f3 < '1' || *f3 > '9' || *e ||
			    gpus > TG_MAX_GPUS) {
				sim_seterr(ei, "%s:%u: GPUS '%s': not in 1..%d",
				       source, line, f3, TG_MAX_GPUS);
				goto fail;
			}
		}
		if (!strcmp(f1, "pending")) {
			char *e;

			members = strtoull(f4, &e, 10);
			if (*f4 < '1' || *f4 > '9' || *e || members > nn) {
				sim_seterr(ei, "%s:%u: MEMBERS '%s': not in "
				       "1..%u", source, line, f4, nn);
				goto fail;
			}
		} else {
			char *tok, *sv2;

			for (tok = strtok_r(f4, ",", &sv2); tok;
			     tok = strtok_r(NULL, ",", &sv2)) {
				tg_node_id id;

				if (members == nn ||
				    tg_topology_node_find(t, tok, &id)) {
					sim_seterr(ei, "%s:%u: node '%s': %s",
					       source, line, tok,
					       members == nn ? "more nodes "
					       "than the fabric has" :
					       "not in the fabric");
					goto fail;
				}
				for (i = 0; i < members; i++)
					if (sel[i] == id)
						break;
				if (i < members ||
				    w.free[id] < (int32_t)gpus) {
					sim_seterr(ei, "%s:%u: node '%s' %s",
					       source, line, tok,
					       i < members ? "twice" :
					       "has not the GPUs free "
					       "(an end missing?)");
					goto fail;
				}
				sel[members++] = id;
			}
			if (find_job(jobs, njobs, f2)) {
				sim_seterr(ei, "%s:%u: job %s started twice",
				       source, line, f2);
				goto fail;
			}
		}
		if (!strcmp(f1, "fixed"))
			goto apply;
		/* the policy's choice on the same state */
		memset(&rq, 0, sizeof(rq));
		sim_gang_name(out->decisions, gang);
		rq.name = gang;
		rq.members = (unsigned)members;
		rq.gpus = (unsigned)gpus;
		memset(ch.gpus, 0, (nn + 1) * sizeof(*ch.gpus));
		if ((err = sim_policy_place(pol, &rq, &ch, &placed, ei)))
			goto fail;
		memcpy(mine, ch.node, members * sizeof(*mine));
		out->decisions++;
		if (!strcmp(f1, "pending")) {
			out->sched_pending++;
			if (placed)
				err = add_miss(out, t, f2, line, NULL, 0,
					       mine, (unsigned)members);
			else
				out->matches++;
			if (err)
				goto fail;
			continue;
		}
		if (placed) {
			qsort(mine, members, sizeof(*mine), node_cmp);
			qsort(sel, members, sizeof(*sel), node_cmp);
		}
		if (placed && !memcmp(mine, sel, members * sizeof(*sel)))
			out->matches++;
		else if ((err = add_miss(out, t, f2, line, sel,
					 (unsigned)members, mine,
					 placed ? (unsigned)members : 0)))
			goto fail;
apply:
		/* apply the scheduler's choice */
		if (njobs == capjobs) {
			unsigned cap = capjobs ? 2 * capjobs : 64;
			cjob *v;

			if (cap > SIM_MAX_JOBS) {
				sim_seterr(ei, "%s:%u: more than %u starts",
				       source, line, SIM_MAX_JOBS);
				err = TG_EINVAL;
				goto fail;
			}
			if (!(v = realloc(jobs, cap * sizeof(*v)))) {
				err = TG_ENOMEM;
				goto fail;
			}
			jobs = v;
			capjobs = cap;
		}
		j = &jobs[njobs];
		if (!(j->nodes = malloc(members * sizeof(*j->nodes)))) {
			err = TG_ENOMEM;
			goto fail;
		}
		njobs++;
		snprintf(j->id, sizeof(j->id), "%s", f2);
		j->gpus = (unsigned)gpus;
		j->n = (unsigned)members;
		memcpy(j->nodes, sel, members * sizeof(*sel));
		/* in the topology too: the topogang policy reads it */
		sim_gang_name(njobs - 1, gang);
		memset(&shape, 0, sizeof(shape));
		shape.v[TG_RES_GPU] = gpus;
		for (i = 0; i < members; i++) {
			uint64_t fm = tg_topology_node_free_gpus(t, sel[i]);
			tg_alloc_spec as;
			char pod[SIM_GANG_MAX + 16];
			unsigned k, got = 0;

			snprintf(pod, sizeof(pod), "%s-%u", gang, i);
			memset(&as, 0, sizeof(as));
			as.pod = pod;
			as.gang = gang;
			as.node = sel[i];
			as.shape = &shape;
			for (k = 0; k < 64 && got < gpus; k++)
				if (fm & (1ull << k)) {
					as.gpus |= 1ull << k;
					got++;
				}
			as.preemptible = true;
			if ((err = tg_topology_add_alloc(t, &as))) {
				sim_seterr(ei, "%s:%u: recording job %s: %s",
				       source, line, f2, tg_strerror(err));
				goto fail;
			}
			w.free[sel[i]] -= (int32_t)gpus;
		}
	}
	err = TG_OK;
fail:
	for (i = 0; i < njobs; i++)
		free(jobs[i].nodes);
	free(jobs);
	sim_policy_destroy(pol);
	free(ch.node);
	free(ch.gpus);
	free(ch.victims);
	free(sel);
	free(mine);
	sim_world_fini(&w);
	tg_topology_destroy(t);
	if (err)
		sim_calib_free(out);
	return err;
}
