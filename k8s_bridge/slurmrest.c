/*
 * k8s_bridge/slurmrest.c - slurmrestd bodies (data_parser v0.0.38 of
 * 22.05, v0.0.40 to v0.0.42 of 24.11): the version both sides speak, jobs
 * in, submits out (see slurmrest.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <topogang/hostlist.h>

#include "map.h"
#include "slurmrest.h"
#include "util.h"

static char *dupj(const cJSON *o, const char *key)
{
	const char *s = br_jstr(o, key);

	return br_xstrdup(s ? s : "");
}

void br_slurm_error(const char *body, char *err, size_t errlen)
{
	cJSON *j = body ? cJSON_Parse(body) : NULL;
	const cJSON *e, *errs = br_jget(j, "errors");

	err[0] = '\0';
	cJSON_ArrayForEach(e, errs) {
		const char *msg = br_jstr(e, "description");
		const char *where = br_jstr(e, "source");
		const cJSON *code = br_jget(e, "error_number");

		if (!code)
			code = br_jget(e, "errno");
		if (!msg || !*msg)
			msg = br_jstr(e, "error");
		snprintf(err, errlen, "%s%s%s (error %d)",
			 where ? where : "", where ? ": " : "",
			 msg ? msg : "?", cJSON_IsNumber(code) ?
			 code->valueint : 0);
		break;
	}
	cJSON_Delete(j);
}

int br_hosts_expand(const char *expr, char ***names, unsigned *n,
		    char *err, size_t errlen)
{
	tg_errinfo ei;

	*names = NULL;
	*n = 0;
	if (!expr || !*expr)
		return 0;
	ei.msg[0] = '\0';
	if (tg_hostlist_expand(expr, names, n, &ei) != TG_OK) {
		snprintf(err, errlen, "node list '%.200s': %s", expr, ei.msg);
		return -1;
	}
	return 0;
}

void br_hosts_free(char **names, unsigned n)
{
	tg_hostlist_free(names, n);
}

static void sjob_free(br_sjob *j)
{
	unsigned h;

	free(j->name);
	free(j->comment);
	free(j->user);
	free(j->state);
	free(j->reason);
	free(j->nodes);
	free(j->partition);
	for (h = 0; h < j->nhosts; h++)
		free(j->hosts[h]);
	free(j->hosts);
	free(j->slots);
	free(j->comp_start);
}

void br_sjobs_free(br_sjobs *js)
{
	size_t i;

	for (i = 0; i < js->n; i++)
		sjob_free(&js->v[i]);
	free(js->v);
	js->v = NULL;
	js->n = 0;
}

/* The data_parser versions the bridge speaks, newest first. */
static const unsigned known_vers[] = { 42, 41, 40, 38 };

/* "v0.0.40" from a slurmrestd path key, else 0. */
static unsigned path_ver(const char *k)
{
	static const char pre[] = "/slurm/v0.0.";
	char *end;
	unsigned long v;

	if (strncmp(k, pre, sizeof(pre) - 1) != 0)
		return 0;
	k += sizeof(pre) - 1;
	if (*k < '0' || *k > '9')
		return 0;
	v = strtoul(k, &end, 10);
	if (v < 1 || v > 999 || strncmp(end, "/job/submit", 11) != 0 ||
	    (end[11] != '\0' && end[11] != '/'))
		return 0;
	return (unsigned)v;
}

int br_slurm_pick_version(const char *spec, unsigned *ver, char *err,
			  size_t errlen)
{
	cJSON *root = spec ? cJSON_Parse(spec) : NULL;
	const cJSON *paths = br_jget(root, "paths"), *p;
	bool served[1000] = { false };
	size_t i, len = 0;
	unsigned v;
	char list[200] = "";

	*ver = 0;
	if (!cJSON_IsObject(paths)) {
		snprintf(err, errlen, "slurmrestd /openapi/v3: %s", !root ?
			 "not JSON" : "no \"paths\" object");
		cJSON_Delete(root);
		return -1;
	}
	cJSON_ArrayForEach(p, paths)
		if (p->string && (v = path_ver(p->string)))
			served[v] = true;
	cJSON_Delete(root);
	for (i = 0; i < sizeof(known_vers) / sizeof(*known_vers); i++)
		if (served[known_vers[i]]) {
			*ver = known_vers[i];
			return 0;
		}
	for (v = 0; v < 1000; v++)
		if (served[v] && len < sizeof(list) - 16)
			len += (size_t)snprintf(list + len, sizeof(list) - len,
						"%sv0.0.%u", len ? " " : "", v);
	snprintf(err, errlen, "slurmrestd serves no data_parser version the "
		 "bridge speaks: it serves %s, the bridge", len ? list :
		 "none (no /slurm/v0.0.N/job/submit path)");
	for (i = sizeof(known_vers) / sizeof(*known_vers); i-- > 0; ) {
		len = strlen(err);
		snprintf(err + len, errlen - len, " v0.0.%u%s", known_vers[i],
			 i ? "," : "");
	}
	return -1;
}

/*
 * A number field of a job record: v0.0.38 writes a plain number (null
 * or absent: unset); v0.0.40 and later an object {"set", "infinite",
 * "number"} (a plain number is taken too).  1 with *out, 0 when unset or
 * infinite, -1 when v0.0.40+ writes anything else there (\p err names the
 * field).  v0.0.38 stays lenient: anything else is unset.
 */
static int jnum(const cJSON *o, const char *key, unsigned ver, double *out,
		char *err, size_t errlen)
{
	const cJSON *v = br_jget(o, key), *n;

	if (cJSON_IsNumber(v)) {
		*out = v->valuedouble;
		return 1;
	}
	if (ver < 40 || !v || cJSON_IsNull(v))
		return 0;
	n = br_jget(v, "number");
	if (!cJSON_IsObject(v) || !cJSON_IsBool(br_jget(v, "set")) ||
	    (cJSON_IsTrue(br_jget(v, "set")) &&
	     !cJSON_IsTrue(br_jget(v, "infinite")) && !cJSON_IsNumber(n))) {
		snprintf(err, errlen, "field \"%s\" is not a {set, infinite, "
			 "number} object (data_parser v0.0.%u)", key, ver);
		return -1;
	}
	if (!cJSON_IsTrue(br_jget(v, "set")) ||
	    cJSON_IsTrue(br_jget(v, "infinite")))
		return 0;
	*out = n->valuedouble;
	return 1;
}

/* A count (tasks, cpus, ...): jnum's in 0..2^32-1, else \p dflt. */
static int num(const cJSON *o, const char *key, unsigned ver, unsigned dflt,
	       unsigned *out, char *err, size_t errlen)
{
	double d = 0;
	int r = jnum(o, key, ver, &d, err, errlen);

	*out = r == 1 && d >= 0 && d <= 4294967295.0 ? (unsigned)d : dflt;
	return r < 0 ? -1 : 0;
}

/* A uid: a whole number in 0..2^32-2 (2^32-1 is NO_VAL), else -1. */
static int64_t uid_of(const cJSON *v)
{
	if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) ||
	    v->valuedouble >= 4294967295.0 ||
	    v->valuedouble != (double)(uint32_t)v->valuedouble)
		return -1;
	return (int64_t)v->valuedouble;
}

/* A Slurm job id: a whole number in 1..2^32-1, else 0. */
static uint32_t job_id(const cJSON *v)
{
	if (!cJSON_IsNumber(v) || !(v->valuedouble >= 1) ||
	    v->valuedouble > 4294967295.0 ||
	    v->valuedouble != (double)(uint32_t)v->valuedouble)
		return 0;
	return (uint32_t)v->valuedouble;
}

/*
 * What one allocation entry gives its host: v0.0.38 and v0.0.40 (an
 * allocated_nodes entry) its allocated cores, counted in its sockets'
 * cores dictionaries; v0.0.41 and later (a nodes.allocation entry) its
 * CPUs, "cpus": {"count": N}.
 */
static unsigned node_cores(const cJSON *n, unsigned ver)
{
	const cJSON *s, *c;
	unsigned k = 0;

	if (ver >= 41) {
		c = br_jget(br_jget(n, "cpus"), "count");
		return cJSON_IsNumber(c) && c->valuedouble >= 0 &&
		       c->valuedouble < 4294967295.0 ?
		       (unsigned)c->valuedouble : 0;
	}
	cJSON_ArrayForEach(s, br_jget(n, "sockets"))
		cJSON_ArrayForEach(c, br_jget(s, "cores"))
			k += cJSON_IsString(c) &&
			     strncmp(c->valuestring, "allocated", 9) == 0;
	return k;
}

/*
 * j->slots from the record's job_resources (see br_sjob): a host's
 * allocated cores, as CPUs (cores x the job's cpus / its cores: threads),
 * over cpus_per_task.  v0.0.41 and later list the hosts under
 * job_resources.nodes.allocation, by "name", with their CPUs.
 */
static void job_slots(br_sjob *j, const cJSON *e, unsigned ver,
		      unsigned cpus)
{
	const cJSON *jr = br_jget(e, "job_resources"), *an, *n;
	const char *key = ver >= 41 ? "name" : "nodename";
	unsigned *cores, h, next = 0, total = 0;
	bool indexed = false;
	br_map at;	/* host name -> its index + 1 */

	an = ver >= 41 ? br_jget(br_jget(jr, "nodes"), "allocation") :
		br_jget(jr, "allocated_nodes");
	if (!j->nhosts)
		return;
	j->slots = br_xcalloc(j->nhosts, sizeof(*j->slots));
	cores = br_xcalloc(j->nhosts, sizeof(*cores));
	br_map_init(&at, NULL);
	cJSON_ArrayForEach(n, an) {
		const char *name = br_jstr(n, key);
		uintptr_t k;

		if (!name)
			continue;
		/*
		 * slurmrestd lists them in the job's node order: try the host
		 * after the last one; else (and from then on) a hash lookup,
		 * not a scan per entry (a job on 10,000 nodes).
		 */
		if (!indexed && next < j->nhosts &&
		    strcmp(j->hosts[next], name) == 0) {
			h = next++;
		} else {
			if (!indexed) {
				for (h = j->nhosts; h-- > 0; )
					br_map_put(&at, j->hosts[h],
						   (void *)(uintptr_t)(h + 1));
				indexed = true;
			}
			k = (uintptr_t)br_map_get(&at, name);
			if (!k)
				continue;
			h = (unsigned)(k - 1);
		}
		/* a node listed twice counts once, as its last entry */
		total -= cores[h];
		cores[h] = node_cores(n, ver);
		total += cores[h];
	}
	br_map_free(&at);
	for (h = 0; h < j->nhosts; h++) {
		uint64_t c = cores[h];

		if (!total) {
			j->slots[h] = 1;	/* no allocation details */
			continue;
		}
		if (cpus > total)
			c = c * cpus / total;
		c /= j->cpus_per_task;
		/* a node has at most 65535 CPUs (22.05's uint16_t cpus) */
		j->slots[h] = (unsigned)(c < BR_SJOB_MAX_SLOTS ? c :
					 BR_SJOB_MAX_SLOTS);
	}
	free(cores);
}

/* Appends the het component \p c (its record then freed) to \p l. */
static void het_append(br_sjob *l, br_sjob *c)
{
	unsigned h, n = l->nhosts + c->nhosts;
	char *nodes;

	if (!l->comp_start) {
		l->comp_start = br_xcalloc(2, sizeof(*l->comp_start));
		l->comp_start[1] = l->nhosts;
	}
	l->comp_start = br_xrealloc(l->comp_start, (l->ncomp + 2) *
				    sizeof(*l->comp_start));
	l->hosts = br_xrealloc(l->hosts, (n + 1) * sizeof(*l->hosts));
	l->slots = br_xrealloc(l->slots, (n + 1) * sizeof(*l->slots));
	for (h = 0; h < c->nhosts; h++) {
		l->hosts[l->nhosts + h] = c->hosts[h];
		l->slots[l->nhosts + h] = c->slots ? c->slots[h] : 1;
	}
	l->nhosts = n;
	l->ncomp++;
	l->comp_start[l->ncomp] = n;
	l->tasks += c->tasks;
	nodes = br_xasprintf("%s%s%s", l->nodes, *l->nodes && *c->nodes ?
			     "," : "", c->nodes);
	free(l->nodes);
	l->nodes = nodes;
	/* the hosts' strings are the leader's now */
	free(c->hosts);
	c->hosts = NULL;
	c->nhosts = 0;
}

/*
 * Folds every component of a heterogeneous job into its leader (see
 * br_sjob), in offset order; a component whose leader is not listed
 * stays a record of its own.
 */
static void het_fold(br_sjobs *js)
{
	size_t i, k, n = 0;
	unsigned off, max = 0;

	for (i = 0; i < js->n; i++)
		if (js->v[i].het_id && js->v[i].het_off > max)
			max = js->v[i].het_off;
	for (off = 1; off <= max; off++)
		for (i = 0; i < js->n; i++) {
			br_sjob *c = &js->v[i], *l = NULL;

			if (!c->het_id || c->het_off != off)
				continue;
			for (k = 0; k < js->n; k++)
				if (js->v[k].id == c->het_id &&
				    js->v[k].het_off == 0)
					l = &js->v[k];
			if (l && l->ncomp == off) {
				het_append(l, c);
				c->het_off = UINT32_MAX;	/* folded */
			}
		}
	for (i = 0; i < js->n; i++) {
		br_sjob *j = &js->v[i];

		if (j->het_off == UINT32_MAX) {
			sjob_free(j);
			continue;
		}
		js->v[n++] = *j;
	}
	js->n = n;
}

/*
 * The job's state as v0.0.38 writes it (job_state_string()): v0.0.40 and
 * later write an array, the base state first, then its flags; a flag
 * names the state as 22.05 does, COMPLETING first.  NULL when job_state
 * is not an array of strings (v0.0.40+).
 */
static char *job_state(const cJSON *e, unsigned ver)
{
	static const char *const flags[] = {
		"COMPLETING", "STAGE_OUT", "CONFIGURING", "RESIZING",
		"REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD", "SPECIAL_EXIT",
		"STOPPED", "REVOKED", "RESV_DEL_HOLD", "SIGNALING", NULL
	};
	const cJSON *st = br_jget(e, "job_state"), *f;
	const char *const *k;

	if (ver < 40)
		return dupj(e, "job_state");
	if (!cJSON_IsArray(st) || !cJSON_IsString(cJSON_GetArrayItem(st, 0)))
		return NULL;
	cJSON_ArrayForEach(f, st)
		if (!cJSON_IsString(f))
			return NULL;
	for (k = flags; *k; k++)
		cJSON_ArrayForEach(f, st)
			if (f != st->child && strcmp(f->valuestring, *k) == 0)
				return br_xstrdup(*k);
	return br_xstrdup(st->child->valuestring);
}

/* The numbers of one record (see br_sjob); -1 with \p err naming one. */
static int job_nums(br_sjob *j, const cJSON *e, unsigned ver,
		    unsigned *cpus, char *err, size_t errlen)
{
	double pt = 0;
	unsigned cpt;

	if (jnum(e, "preempt_time", ver, &pt, err, errlen) < 0 ||
	    num(e, "tasks", ver, 0, &j->tasks, err, errlen) ||
	    num(e, "cpus", ver, 0, cpus, err, errlen) ||
	    num(e, "cpus_per_task", ver, 0, &cpt, err, errlen) ||
	    num(e, "het_job_id", ver, 0, &j->het_id, err, errlen) ||
	    num(e, "het_job_offset", ver, 0, &j->het_off, err, errlen))
		return -1;
	/* a time past int64 (1e300) still says "preempted" */
	if (pt > 0)
		j->preempt_time = pt < 9.2e18 ? (int64_t)pt : INT64_MAX;
	/*
	 * v0.0.38 of 22.05 writes cpus_per_task as null unless a --cpu-freq
	 * was given (jobs.c tests cpu_freq_min): then the job's CPUs over
	 * its tasks.
	 */
	j->cpus_per_task = cpt;
	if (!j->cpus_per_task && j->tasks)
		j->cpus_per_task = *cpus / j->tasks;
	if (!j->cpus_per_task)
		j->cpus_per_task = 1;
	if (!j->het_id)
		j->het_off = 0;
	if (j->het_off >= 4096)
		j->het_off = 4095;
	return 0;
}

/*
 * One jobs entry into \p j (its id already set); \p names counts the
 * node names so far.  -1 with \p err (what, and in which job).
 */
static int job_rec(br_sjob *j, const cJSON *e, unsigned ver, size_t *names,
		   char *err, size_t errlen)
{
	char why[400], **hosts;
	unsigned nh, h, cpus = 0;

	j->name = dupj(e, "name");
	j->comment = dupj(e, "comment");
	j->user = dupj(e, "user_name");
	j->uid = uid_of(br_jget(e, "user_id"));
	j->reason = dupj(e, "state_reason");
	j->nodes = dupj(e, "nodes");
	j->partition = dupj(e, "partition");
	j->ncomp = 1;
	j->state = job_state(e, ver);
	if (!j->state) {
		j->state = br_xstrdup("");
		snprintf(err, errlen, "slurmrestd job %u: field \"job_state\" "
			 "is not an array of state names (data_parser "
			 "v0.0.%u)", j->id, ver);
		return -1;
	}
	if (job_nums(j, e, ver, &cpus, why, sizeof(why))) {
		snprintf(err, errlen, "slurmrestd job %u: %s", j->id, why);
		return -1;
	}
	if (br_hosts_expand(j->nodes, &hosts, &nh, why, sizeof(why))) {
		snprintf(err, errlen, "slurmrestd job %u: %s", j->id, why);
		return -1;
	}
	/* a small answer must not make the bridge hold GBs */
	if (nh > BR_SJOBS_MAX_NAMES - *names) {
		snprintf(err, errlen, "slurmrestd job %u: node list '%.100s' "
			 "passes %u node names in one jobs answer", j->id,
			 j->nodes, (unsigned)BR_SJOBS_MAX_NAMES);
		br_hosts_free(hosts, nh);
		return -1;
	}
	*names += nh;
	/* the bridge's copies (a het job's leader takes its components'
	 * hosts, het_fold) */
	j->hosts = br_xcalloc(nh + 1, sizeof(*j->hosts));
	for (h = 0; h < nh; h++)
		j->hosts[h] = br_xstrdup(hosts[h]);
	j->nhosts = nh;
	br_hosts_free(hosts, nh);
	job_slots(j, e, ver, cpus);
	return 0;
}

int br_sjobs_parse(const char *body, unsigned ver, br_sjobs *out, char *err,
		   size_t errlen)
{
	cJSON *root = body ? cJSON_Parse(body) : NULL;
	const cJSON *jobs, *e;
	char why[400];
	size_t n = 0, names = 0;

	memset(out, 0, sizeof(*out));
	if (!root) {
		snprintf(err, errlen, "slurmrestd jobs: not JSON");
		return -1;
	}
	br_slurm_error(body, why, sizeof(why));
	jobs = br_jget(root, "jobs");
	if (!cJSON_IsArray(jobs)) {
		snprintf(err, errlen, "slurmrestd jobs: no jobs array%s%s",
			 *why ? ": " : "", why);
		cJSON_Delete(root);
		return -1;
	}
	out->v = br_xcalloc((size_t)cJSON_GetArraySize(jobs) + 1,
			    sizeof(*out->v));
	cJSON_ArrayForEach(e, jobs) {
		br_sjob *j = &out->v[n];

		j->id = job_id(br_jget(e, "job_id"));
		if (!j->id)
			continue;
		out->n = ++n;
		if (job_rec(j, e, ver, &names, err, errlen)) {
			cJSON_Delete(root);
			br_sjobs_free(out);
			return -1;
		}
	}
	cJSON_Delete(root);
	het_fold(out);
	return 0;
}

/* ---- nodes ---- */

static void snode_free(br_snode *n)
{
	free(n->name);
	free(n->state);
	free(n->reason);
}

void br_snodes_free(br_snodes *ns)
{
	size_t i;

	for (i = 0; i < ns->n; i++)
		snode_free(&ns->v[i]);
	free(ns->v);
	ns->v = NULL;
	ns->n = 0;
}

/* Whether \p s (a base state or a flag, any case) makes a node one
 * Slurm does not give to jobs. */
static bool state_unusable(const char *s)
{
	static const char *const bad[] = {
		"DOWN", "FUTURE", "DRAIN", "DRAINED", "DRAINING", "FAIL",
		"FAILING", "NOT_RESPONDING", NULL
	};
	const char *const *k;

	for (k = bad; *k; k++)
		if (strcasecmp(s, *k) == 0)
			return true;
	return false;
}

/* The state of one nodes entry into \p n; -1 when it has another shape
 * (v0.0.38: a string and a "state_flags" array of strings; v0.0.40+: an
 * array of strings, the base state first). */
static int node_state(br_snode *n, const cJSON *e, unsigned ver)
{
	const cJSON *st = br_jget(e, "state"), *f, *flags = st;
	char *p;

	if (ver < 40) {
		if (!cJSON_IsString(st))
			return -1;
		n->state = br_xstrdup(st->valuestring);
		flags = br_jget(e, "state_flags");
		if (flags && !cJSON_IsArray(flags))
			return -1;
	} else {
		if (!cJSON_IsArray(st) ||
		    !cJSON_IsString(cJSON_GetArrayItem(st, 0)))
			return -1;
		n->state = br_xstrdup(st->child->valuestring);
	}
	for (p = n->state; *p; p++)
		if (*p >= 'a' && *p <= 'z')
			*p = (char)(*p - 'a' + 'A');
	n->unusable = state_unusable(n->state);
	cJSON_ArrayForEach(f, flags) {
		if (!cJSON_IsString(f))
			return -1;
		n->unusable = n->unusable || state_unusable(f->valuestring);
	}
	return 0;
}

/* One nodes entry into \p n; -1 with \p err naming the node and field. */
static int node_rec(br_snode *n, const cJSON *e, unsigned ver, char *err,
		    size_t errlen)
{
	static const char *const keys[] = {
		"cpus", "alloc_cpus", "real_memory", "alloc_memory"
	};
	static const double max[] = {
		BR_SNODE_MAX_CPUS, BR_SNODE_MAX_CPUS,
		(double)BR_SNODE_MAX_MEMORY_MB, (double)BR_SNODE_MAX_MEMORY_MB
	};
	static const char *const maxname[] = {
		"BR_SNODE_MAX_CPUS", "BR_SNODE_MAX_CPUS",
		"BR_SNODE_MAX_MEMORY_MB", "BR_SNODE_MAX_MEMORY_MB"
	};
	double v[4] = { 0, 0, 0, 0 };
	char why[300];
	unsigned k;

	n->reason = dupj(e, "reason");
	if (node_state(n, e, ver)) {
		snprintf(err, errlen, "slurmrestd node %s: field \"state\" is "
			 "not %s (data_parser v0.0.%u)", n->name, ver < 40 ?
			 "a state name with a state_flags list" : "an array "
			 "of state names", ver);
		return -1;
	}
	for (k = 0; k < 4; k++) {
		if (jnum(e, keys[k], ver, &v[k], why, sizeof(why)) < 0) {
			snprintf(err, errlen, "slurmrestd node %s: %s",
				 n->name, why);
			return -1;
		}
		/* !(v <= max) is true for NaN as well */
		if (!(v[k] >= 0) || !(v[k] <= max[k]) ||
		    v[k] != (double)(uint64_t)v[k]) {
			snprintf(err, errlen, "slurmrestd node %s: field \"%s\" "
				 "is %g: not a whole number in 0..%.0f (%s)",
				 n->name, keys[k], v[k], max[k], maxname[k]);
			return -1;
		}
	}
	n->cpus = (unsigned)v[0];
	n->alloc_cpus = (unsigned)v[1];
	n->real_memory = (uint64_t)v[2];
	n->alloc_memory = (uint64_t)v[3];
	return 0;
}

int br_snodes_parse(const char *body, unsigned ver, br_snodes *out,
		    char *err, size_t errlen)
{
	cJSON *root = body ? cJSON_Parse(body) : NULL;
	const cJSON *nodes, *e;
	char why[400];
	int sz;

	memset(out, 0, sizeof(*out));
	if (!root) {
		snprintf(err, errlen, "slurmrestd nodes: not JSON");
		return -1;
	}
	br_slurm_error(body, why, sizeof(why));
	nodes = br_jget(root, "nodes");
	if (!cJSON_IsArray(nodes)) {
		snprintf(err, errlen, "slurmrestd nodes: no nodes array%s%s",
			 *why ? ": " : "", why);
		goto fail;
	}
	sz = cJSON_GetArraySize(nodes);
	if (sz < 0 || (unsigned)sz > BR_SNODES_MAX) {
		snprintf(err, errlen, "slurmrestd nodes: %d nodes, more than "
			 "%u (BR_SNODES_MAX)", sz, (unsigned)BR_SNODES_MAX);
		goto fail;
	}
	out->v = br_xcalloc((size_t)sz + 1, sizeof(*out->v));
	cJSON_ArrayForEach(e, nodes) {
		br_snode *n = &out->v[out->n];
		const char *name = br_jstr(e, "name");

		if (!name || !*name) {
			snprintf(err, errlen, "slurmrestd nodes: entry %zu has "
				 "no name", out->n);
			goto fail;
		}
		n->name = br_xstrdup(name);
		out->n++;
		if (node_rec(n, e, ver, err, errlen))
			goto fail;
	}
	cJSON_Delete(root);
	return 0;
fail:
	cJSON_Delete(root);
	br_snodes_free(out);
	return -1;
}

static bool state_is(const br_sjob *j, const char *const *set)
{
	for (; *set; set++)
		if (strcmp(j->state, *set) == 0)
			return true;
	return false;
}

bool br_sjob_live(const br_sjob *j)
{
	static const char *const live[] = {
		"PENDING", "RUNNING", "CONFIGURING", "SUSPENDED", "REQUEUED",
		"REQUEUE_HOLD", "REQUEUE_FED", "RESIZING", "SIGNALING",
		"STAGE_OUT", "COMPLETING", NULL
	};

	return state_is(j, live);
}

bool br_sjob_running(const br_sjob *j)
{
	static const char *const run[] = { "RUNNING", "CONFIGURING", NULL };

	return state_is(j, run) && j->nhosts > 0;
}

bool br_sjob_preempting(const br_sjob *j)
{
	return br_sjob_running(j) && j->preempt_time > 0;
}

bool br_sjob_marked(const br_sjob *j, const char *sched)
{
	size_t ml = strlen(BR_SLURM_MARK), sl = strlen(sched);

	/* "topogang-bridge/<scheduler> gang=..." */
	return strncmp(j->comment, BR_SLURM_MARK, ml) == 0 &&
	       j->comment[ml] == '/' &&
	       strncmp(j->comment + ml + 1, sched, sl) == 0 &&
	       (j->comment[ml + 1 + sl] == ' ' ||
		j->comment[ml + 1 + sl] == '\0');
}

bool br_sjob_ours(const br_sjob *j, const char *sched, const char *user,
		  int64_t uid)
{
	if (!br_sjob_marked(j, sched))
		return false;
	if (*j->user)
		return strcmp(j->user, user) == 0;
	return j->uid >= 0 && uid >= 0 && j->uid == uid;
}

bool br_sjob_owner_unknown(const br_sjob *j, const char *sched, int64_t uid)
{
	return br_sjob_marked(j, sched) && !*j->user &&
	       (j->uid < 0 || uid < 0);
}

/* {"set": true, "infinite": false, "number": v}: v0.0.40+'s numbers. */
static void add_nval(cJSON *o, const char *key, double v)
{
	cJSON *n = cJSON_AddObjectToObject(o, key);

	cJSON_AddBoolToObject(n, "set", 1);
	cJSON_AddBoolToObject(n, "infinite", 0);
	cJSON_AddNumberToObject(n, "number", v);
}

long br_slurm_minutes(const char *s)
{
	long f[4] = { 0, 0, 0, 0 }, days = 0, m;
	unsigned n = 0;
	char *end;
	const char *p = s;

	if (!s || !*s)
		return -1;
	if (strchr(s, '-')) {
		days = strtol(s, &end, 10);
		if (end == s || *end != '-' || days < 0 || days > 100000)
			return -1;
		p = end + 1;
	}
	for (;;) {
		if (*p < '0' || *p > '9' || n == 3)
			return -1;
		f[n++] = strtol(p, &end, 10);
		if (f[n - 1] > 10000000)
			return -1;
		if (*end == '\0')
			break;
		if (*end != ':')
			return -1;
		p = end + 1;
	}
	/* Slurm's time_str2mins: "M", "M:S", "H:M:S", "D-H", "D-H:M",
	 * "D-H:M:S"; seconds round up */
	if (strchr(s, '-'))
		m = days * 1440 + f[0] * 60 + (n > 1 ? f[1] : 0) +
		    (n > 2 && f[2] ? 1 : 0);
	else if (n == 3)
		m = f[0] * 60 + f[1] + (f[2] ? 1 : 0);
	else
		m = f[0] + (n == 2 && f[1] ? 1 : 0);
	return m;
}

/* The task shape of one job description, as \p ver writes it. */
static void desc_tasks(cJSON *job, const br_sjob_spec *sp,
		       const br_sjob_task *t, unsigned ver)
{
	unsigned cpt = t->cpus_per_task ? t->cpus_per_task : 1;
	char buf[160];
	/* "gpu" -> "N", "gpu:TYPE" -> "TYPE:N" */
	const char *gres = sp->gres_name && *sp->gres_name ?
		sp->gres_name : "gpu", *type = strchr(gres, ':');

	if (ver >= 40) {
		/* numbers; --gpus-per-task is tres_per_task in 24.11 */
		cJSON_AddNumberToObject(job, "tasks", t->tasks);
		cJSON_AddNumberToObject(job, "cpus_per_task", cpt);
		if (t->gpus_per_task) {
			snprintf(buf, sizeof(buf), "gres/%.100s:%u", gres,
				 t->gpus_per_task);
			cJSON_AddStringToObject(job, "tres_per_task", buf);
		}
		if (t->mem_per_cpu)
			add_nval(job, "memory_per_cpu",
				 (double)t->mem_per_cpu);
		return;
	}
	/* a task per member; Slurm may put several on a node */
	snprintf(buf, sizeof(buf), "%u", t->tasks);
	cJSON_AddStringToObject(job, "tasks", buf);
	snprintf(buf, sizeof(buf), "%u", cpt);
	cJSON_AddStringToObject(job, "cpus_per_task", buf);
	if (t->gpus_per_task) {
		snprintf(buf, sizeof(buf), "%.100s%s%u", type ? type + 1 : "",
			 type ? ":" : "", t->gpus_per_task);
		cJSON_AddStringToObject(job, "gpus_per_task", buf);
	}
	if (t->mem_per_cpu) {
		snprintf(buf, sizeof(buf), "%lluM",
			 (unsigned long long)t->mem_per_cpu);
		cJSON_AddStringToObject(job, "memory_per_cpu", buf);
	}
}

/* One job description (a het job's component): the spec's common fields
 * and the task shape \p t, as \p ver writes them. */
static void job_desc(cJSON *job, const br_sjob_spec *sp,
		     const br_sjob_task *t, unsigned ver)
{
	char *comment, *gang;
	cJSON *env;
	long min = ver >= 40 ? br_slurm_minutes(sp->time_limit) : -1;

	cJSON_AddStringToObject(job, "name", sp->name);
	comment = br_xasprintf("%s/%s gang=%s%s%s%s%s", BR_SLURM_MARK,
			       sp->sched, sp->name,
			       *sp->gather ? " topo-gather=" : "", sp->gather,
			       *sp->spread ? " topo-spread=" : "", sp->spread);
	cJSON_AddStringToObject(job, "comment", comment);
	free(comment);
	desc_tasks(job, sp, t, ver);
	if (sp->partition && *sp->partition)
		cJSON_AddStringToObject(job, "partition", sp->partition);
	if (sp->qos && *sp->qos)
		cJSON_AddStringToObject(job, "qos", sp->qos);
	/* v0.0.40+: minutes; a string Slurm cannot read goes as it is, for
	 * slurmrestd to refuse by name */
	if (min >= 0)
		add_nval(job, "time_limit", (double)min);
	else if (sp->time_limit && *sp->time_limit)
		cJSON_AddStringToObject(job, "time_limit", sp->time_limit);
	cJSON_AddStringToObject(job, "current_working_directory",
				sp->workdir);
	cJSON_AddStringToObject(job, "standard_output", "/dev/null");
	cJSON_AddStringToObject(job, "standard_error", "/dev/null");
	if (ver < 40) {
		env = cJSON_AddObjectToObject(job, "environment");
		cJSON_AddStringToObject(env, "PATH", "/usr/bin:/bin");
		cJSON_AddStringToObject(env, "TOPOGANG_GANG", sp->name);
		return;
	}
	/* v0.0.40+: ["NAME=value", ...] */
	env = cJSON_AddArrayToObject(job, "environment");
	cJSON_AddItemToArray(env, cJSON_CreateString("PATH=/usr/bin:/bin"));
	gang = br_xasprintf("TOPOGANG_GANG=%s", sp->name);
	cJSON_AddItemToArray(env, cJSON_CreateString(gang));
	free(gang);
}

char *br_sjob_submit_body(const br_sjob_spec *sp, unsigned ver)
{
	cJSON *root = cJSON_CreateObject(), *jobs, *first;
	char *script, *out;
	unsigned c;

	if (sp->ncomps > 1) {
		/* heterogeneous: a component a pod set */
		jobs = cJSON_AddArrayToObject(root, "jobs");
		for (c = 0; c < sp->ncomps; c++) {
			cJSON *job = cJSON_CreateObject();

			job_desc(job, sp, &sp->comps[c], ver);
			cJSON_AddItemToArray(jobs, job);
		}
		first = cJSON_GetArrayItem(jobs, 0);
	} else {
		br_sjob_task t;

		t.tasks = sp->tasks;
		t.cpus_per_task = sp->cpus_per_task;
		t.gpus_per_task = sp->gpus_per_task;
		t.mem_per_cpu = sp->mem_per_cpu;
		first = cJSON_AddObjectToObject(root, "job");
		job_desc(first, sp, &t, ver);
	}
	/*
	 * The job only holds the allocation: the pods are the work.  It
	 * ignores SIGTERM (and so does its sleep), so that when Slurm
	 * preempts it with a GraceTime the nodes stay held until the bridge
	 * has evicted the pods and cancels the job.  v0.0.38 reads the
	 * script beside the job; v0.0.42 deprecates that for the script in
	 * the (first) job, which v0.0.40 and v0.0.41 read too.
	 */
	script = br_xasprintf("#!/bin/sh\n# topogang-bridge: holds the nodes "
			      "of Kubernetes gang %s\ntrap '' TERM\n"
			      "while :; do sleep 3600; done\n", sp->name);
	cJSON_AddStringToObject(ver >= 40 ? first : root, "script", script);
	free(script);
	out = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (!out)
		return br_xstrdup("{}");
	script = br_xstrdup(out);
	cJSON_free(out);
	return script;
}

int br_sjob_submit_result(const char *body, long status, uint32_t *id,
			  char *err, size_t errlen)
{
	cJSON *j = body ? cJSON_Parse(body) : NULL;
	const cJSON *v = br_jget(j, "job_id");
	uint32_t jid = job_id(v);
	char why[400];

	br_slurm_error(body, why, sizeof(why));
	if (status == 200 && jid && !*why) {
		*id = jid;
		cJSON_Delete(j);
		return 0;
	}
	snprintf(err, errlen, "HTTP %ld: %s", status,
		 *why ? why : !j ? "not JSON" : v && !cJSON_IsNull(v) ?
		 "job_id in the answer is not a Slurm job id" :
		 "no job_id in the answer");
	cJSON_Delete(j);
	return -1;
}
