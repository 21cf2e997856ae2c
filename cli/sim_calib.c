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

/* The replay's state: the fabric, the scheduler's running jobs, the
 * policy and its scratch. */
typedef struct calib {
	tg_topology *t;
	sim_world w;
	sim_policy *pol;
	sim_choice ch;
	cjob *jobs;
	unsigned njobs, capjobs, nn;
	tg_node_id *sel, *mine;	/* the scheduler's nodes, the policy's */
	const char *source;
	unsigned line;
	sim_calib *out;
	tg_errinfo *ei;
} calib;

/* One record's fields: KIND JOB GPUS NODES|MEMBERS. */
typedef struct crec {
	const char *kind, *job;
	unsigned gpus, members;
} crec;

static tg_err calib_init(calib *c, const sim_fabric *f, const char *policy)
{
	unsigned nn;
	tg_err err;

	if ((err = sim_fabric_instantiate(f, &c->t, c->ei)))
		return err;
	if ((err = sim_world_init(&c->w, c->t)))
		return err;
	nn = c->nn = c->w.nnodes;
	c->sel = malloc((nn + 1) * sizeof(*c->sel));
	c->mine = malloc((nn + 1) * sizeof(*c->mine));
	c->ch.node = malloc((nn + 1) * sizeof(*c->ch.node));
	c->ch.gpus = calloc(nn + 1, sizeof(*c->ch.gpus));
	c->ch.victims = malloc(sizeof(*c->ch.victims));
	if (!c->sel || !c->mine || !c->ch.node || !c->ch.gpus ||
	    !c->ch.victims)
		return TG_ENOMEM;
	return sim_policy_create(policy, &c->w, 1, &c->pol, c->ei);
}

static void calib_fini(calib *c)
{
	unsigned i;

	for (i = 0; i < c->njobs; i++)
		free(c->jobs[i].nodes);
	free(c->jobs);
	sim_policy_destroy(c->pol);
	free(c->ch.node);
	free(c->ch.gpus);
	free(c->ch.victims);
	free(c->sel);
	free(c->mine);
	sim_world_fini(&c->w);
	tg_topology_destroy(c->t);
}

/* "end JOB": the job's GPUs free again. */
static tg_err calib_end(calib *c, const char *id, const char *extra)
{
	char gang[SIM_GANG_MAX];
	cjob *j = extra ? NULL : find_job(c->jobs, c->njobs, id);
	unsigned i;

	if (!j) {
		sim_seterr(c->ei, "%s:%u: 'end %s': %s", c->source, c->line,
			   id, extra ? "extra fields" : "no such running job");
		return TG_EINVAL;
	}
	sim_gang_name((unsigned)(j - c->jobs), gang);
	tg_topology_remove_gang(c->t, gang);
	for (i = 0; i < j->n; i++)
		c->w.free[j->nodes[i]] += (int32_t)j->gpus;
	free(j->nodes);
	j->nodes = NULL;
	return TG_OK;
}

/* A start's or fixed's NODES (comma-separated) into c->sel. */
static tg_err calib_nodes(calib *c, crec *r, char *list)
{
	char *tok, *sv;
	unsigned i;

	for (tok = strtok_r(list, ",", &sv); tok;
	     tok = strtok_r(NULL, ",", &sv)) {
		tg_node_id id;

		if (r->members == c->nn ||
		    tg_topology_node_find(c->t, tok, &id)) {
			sim_seterr(c->ei, "%s:%u: node '%s': %s", c->source,
				   c->line, tok, r->members == c->nn ?
				   "more nodes than the fabric has" :
				   "not in the fabric");
			return TG_EINVAL;
		}
		for (i = 0; i < r->members; i++)
			if (c->sel[i] == id)
				break;
		if (i < r->members || c->w.free[id] < (int32_t)r->gpus) {
			sim_seterr(c->ei, "%s:%u: node '%s' %s", c->source,
				   c->line, tok, i < r->members ? "twice" :
				   "has not the GPUs free (an end missing?)");
			return TG_EINVAL;
		}
		c->sel[r->members++] = id;
	}
	if (find_job(c->jobs, c->njobs, r->job)) {
		sim_seterr(c->ei, "%s:%u: job %s started twice", c->source,
			   c->line, r->job);
		return TG_EINVAL;
	}
	return TG_OK;
}

/* GPUS, then MEMBERS (pending) or NODES (start, fixed). */
static tg_err calib_fields(calib *c, crec *r, const char *f3, char *f4)
{
	uint64_t v;

	if (*f3 == '0' || !tg_u64_parse(f3, TG_MAX_GPUS, &v) || !v) {
		sim_seterr(c->ei, "%s:%u: GPUS '%s': not in 1..%d", c->source,
			   c->line, f3, TG_MAX_GPUS);
		return TG_EINVAL;
	}
	r->gpus = (unsigned)v;
	r->members = 0;
	if (strcmp(r->kind, "pending"))
		return calib_nodes(c, r, f4);
	if (*f4 == '0' || !tg_u64_parse(f4, c->nn, &v) || !v) {
		sim_seterr(c->ei, "%s:%u: MEMBERS '%s': not in 1..%u",
			   c->source, c->line, f4, c->nn);
		return TG_EINVAL;
	}
	r->members = (unsigned)v;
	return TG_OK;
}

/* The policy's choice on the same state, compared with the scheduler's;
 * *done when the record ends here (pending). */
static tg_err calib_compare(calib *c, const crec *r, bool *done)
{
	sim_calib *out = c->out;
	char gang[SIM_GANG_MAX];
	sim_req rq;
	bool placed;
	tg_err err;

	*done = false;
	memset(&rq, 0, sizeof(rq));
	sim_gang_name(out->decisions, gang);
	rq.name = gang;
	rq.members = r->members;
	rq.gpus = r->gpus;
	memset(c->ch.gpus, 0, (c->nn + 1) * sizeof(*c->ch.gpus));
	if ((err = sim_policy_place(c->pol, &rq, &c->ch, &placed, c->ei)))
		return err;
	memcpy(c->mine, c->ch.node, r->members * sizeof(*c->mine));
	out->decisions++;
	if (!strcmp(r->kind, "pending")) {
		*done = true;
		out->sched_pending++;
		if (!placed) {
			out->matches++;
			return TG_OK;
		}
		return add_miss(out, c->t, r->job, c->line, NULL, 0, c->mine,
				r->members);
	}
	if (placed) {
		qsort(c->mine, r->members, sizeof(*c->mine), node_cmp);
		qsort(c->sel, r->members, sizeof(*c->sel), node_cmp);
	}
	if (placed && !memcmp(c->mine, c->sel, r->members * sizeof(*c->sel))) {
		out->matches++;
		return TG_OK;
	}
	return add_miss(out, c->t, r->job, c->line, c->sel, r->members,
			c->mine, placed ? r->members : 0);
}

/* The scheduler's choice applied: a running job, in the topology too
 * (the topogang policy reads it). */
static tg_err calib_apply(calib *c, const crec *r)
{
	char gang[SIM_GANG_MAX];
	tg_shape shape;
	cjob *j;
	unsigned i;
	tg_err err;

	if (c->njobs == c->capjobs) {
		unsigned cap = c->capjobs ? 2 * c->capjobs : 64;
		cjob *v;

		if (cap > SIM_MAX_JOBS) {
			sim_seterr(c->ei, "%s:%u: more than %u starts",
				   c->source, c->line, SIM_MAX_JOBS);
			return TG_EINVAL;
		}
		if (!(v = realloc(c->jobs, cap * sizeof(*v))))
			return TG_ENOMEM;
		c->jobs = v;
		c->capjobs = cap;
	}
	j = &c->jobs[c->njobs];
	if (!(j->nodes = malloc(r->members * sizeof(*j->nodes))))
		return TG_ENOMEM;
	c->njobs++;
	snprintf(j->id, sizeof(j->id), "%s", r->job);
	j->gpus = r->gpus;
	j->n = r->members;
	memcpy(j->nodes, c->sel, r->members * sizeof(*c->sel));
	sim_gang_name(c->njobs - 1, gang);
	memset(&shape, 0, sizeof(shape));
	shape.v[TG_RES_GPU] = r->gpus;
	for (i = 0; i < r->members; i++) {
		uint64_t fm = tg_topology_node_free_gpus(c->t, c->sel[i]);
		tg_alloc_spec as;
		char pod[SIM_GANG_MAX + 16];
		unsigned k, got = 0;

		snprintf(pod, sizeof(pod), "%s-%u", gang, i);
		memset(&as, 0, sizeof(as));
		as.pod = pod;
		as.gang = gang;
		as.node = c->sel[i];
		as.shape = &shape;
		for (k = 0; k < 64 && got < r->gpus; k++)
			if (fm & (1ull << k)) {
				as.gpus |= 1ull << k;
				got++;
			}
		as.preemptible = true;
		if ((err = tg_topology_add_alloc(c->t, &as))) {
			sim_seterr(c->ei, "%s:%u: recording job %s: %s",
				   c->source, c->line, r->job,
				   tg_strerror(err));
			return err;
		}
		c->w.free[c->sel[i]] -= (int32_t)r->gpus;
	}
	return TG_OK;
}

/* One line of the log (\p ln, cut at its comment). */
static tg_err calib_line(calib *c, char *ln)
{
	char *f1, *f2, *f3, *f4, *sv;
	crec r;
	bool done;
	tg_err err;

	f1 = strtok_r(ln, " \t", &sv);
	if (!f1)
		return TG_OK;
	f2 = strtok_r(NULL, " \t", &sv);
	f3 = strtok_r(NULL, " \t", &sv);
	f4 = strtok_r(NULL, " \t", &sv);
	if (!f2 || strlen(f2) > SIM_MAX_ID) {
		sim_seterr(c->ei, "%s:%u: expected 'start|end|pending JOB "
			   "...' (a job id of 1-%d bytes)", c->source,
			   c->line, SIM_MAX_ID);
		return TG_EINVAL;
	}
	if (!strcmp(f1, "end"))
		return calib_end(c, f2, f3);
	if ((strcmp(f1, "start") && strcmp(f1, "pending") &&
	     strcmp(f1, "fixed")) || !f3 || !f4 ||
	    strtok_r(NULL, " \t", &sv)) {
		sim_seterr(c->ei, "%s:%u: expected 'start|fixed JOB GPUS "
			   "NODES', 'end JOB' or 'pending JOB GPUS "
			   "MEMBERS'", c->source, c->line);
		return TG_EINVAL;
	}
	r.kind = f1;
	r.job = f2;
	if ((err = calib_fields(c, &r, f3, f4)))
		return err;
	if (strcmp(f1, "fixed")) {
		if ((err = calib_compare(c, &r, &done)) || done)
			return err;
	}
	return calib_apply(c, &r);
}

tg_err sim_calibrate(const sim_fabric *f, const char *buf, size_t len,
		     const char *source, const char *policy, sim_calib *out,
		     tg_errinfo *ei)
{
	const char *p = buf, *end = buf + len;
	calib c;
	tg_err err;

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	c.source = source;
	c.out = out;
	c.ei = ei;
	snprintf(out->policy, sizeof(out->policy), "%s", policy);
	err = calib_init(&c, f, policy);
	while (!err && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char ln[SIM_MAX_LINE + 1], *x;

		c.line++;
		if (n > SIM_MAX_LINE) {
			sim_seterr(ei, "%s:%u: line longer than %d bytes",
				   source, c.line, SIM_MAX_LINE);
			err = TG_EINVAL;
			break;
		}
		memcpy(ln, p, n);
		ln[n] = '\0';
		p += n + (nl ? 1 : 0);
		if (n && ln[n - 1] == '\r')
			ln[n - 1] = '\0';
		if ((x = strchr(ln, '#')))
			*x = '\0';
		err = calib_line(&c, ln);
	}
	calib_fini(&c);
	if (err)
		sim_calib_free(out);
	return err;
}
