/*
 * k8s_bridge/slurmrest.c - slurmrestd v0.0.38 bodies: jobs in, submits
 * out (see slurmrest.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static unsigned num(const cJSON *o, const char *key, unsigned dflt)
{
	const cJSON *v = br_jget(o, key);

	if (!cJSON_IsNumber(v) || v->valuedouble < 0 ||
	    v->valuedouble > 4294967295.0)
		return dflt;
	return (unsigned)v->valuedouble;
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

/* Allocated cores of one allocated_nodes entry. */
static unsigned node_cores(const cJSON *n)
{
	const cJSON *s, *c;
	unsigned k = 0;

	cJSON_ArrayForEach(s, br_jget(n, "sockets"))
		cJSON_ArrayForEach(c, br_jget(s, "cores"))
			k += cJSON_IsString(c) &&
			     strncmp(c->valuestring, "allocated", 9) == 0;
	return k;
}

/*
 * j->slots from the record's job_resources (see br_sjob): a host's
 * allocated cores, as CPUs (cores x the job's cpus / its cores: threads),
 * over cpus_per_task.
 */
static void job_slots(br_sjob *j, const cJSON *e)
{
	const cJSON *an = br_jget(br_jget(e, "job_resources"),
				  "allocated_nodes"), *n;
	unsigned *cores, h, next = 0, total = 0, cpus = num(e, "cpus", 0);
	bool indexed = false;
	br_map at;	/* host name -> its index + 1 */

	if (!j->nhosts)
		return;
	j->slots = br_xcalloc(j->nhosts, sizeof(*j->slots));
	cores = br_xcalloc(j->nhosts, sizeof(*cores));
	br_map_init(&at, NULL);
	cJSON_ArrayForEach(n, an) {
		const char *name = br_jstr(n, "nodename");
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
		cores[h] = node_cores(n);
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

int br_sjobs_parse(const char *body, br_sjobs *out, char *err,
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
		const cJSON *pt = br_jget(e, "preempt_time");
		char **hosts;
		unsigned nh, h;

		j->id = job_id(br_jget(e, "job_id"));
		if (!j->id)
			continue;
		j->name = dupj(e, "name");
		j->comment = dupj(e, "comment");
		j->state = dupj(e, "job_state");
		j->reason = dupj(e, "state_reason");
		j->nodes = dupj(e, "nodes");
		j->partition = dupj(e, "partition");
		/* a time past int64 (1e300) still says "preempted" */
		if (cJSON_IsNumber(pt) && pt->valuedouble > 0)
			j->preempt_time = pt->valuedouble < 9.2e18 ?
				(int64_t)pt->valuedouble : INT64_MAX;
		n++;
		out->n = n;
		if (br_hosts_expand(j->nodes, &hosts, &nh, why,
				    sizeof(why))) {
			snprintf(err, errlen, "slurmrestd job %u: %s", j->id,
				 why);
			cJSON_Delete(root);
			br_sjobs_free(out);
			return -1;
		}
		/* a small answer must not make the bridge hold GBs */
		if (nh > BR_SJOBS_MAX_NAMES - names) {
			snprintf(err, errlen, "slurmrestd job %u: node list "
				 "'%.100s' passes %u node names in one jobs "
				 "answer", j->id, j->nodes,
				 (unsigned)BR_SJOBS_MAX_NAMES);
			br_hosts_free(hosts, nh);
			cJSON_Delete(root);
			br_sjobs_free(out);
			return -1;
		}
		names += nh;
		/* the bridge's copies (a het job's leader takes its
		 * components' hosts, het_fold) */
		j->hosts = br_xcalloc(nh + 1, sizeof(*j->hosts));
		for (h = 0; h < nh; h++)
			j->hosts[h] = br_xstrdup(hosts[h]);
		j->nhosts = nh;
		br_hosts_free(hosts, nh);
		j->tasks = num(e, "tasks", 0);
		/*
		 * v0.0.38 of 22.05 writes cpus_per_task as null unless a
		 * --cpu-freq was given (jobs.c tests cpu_freq_min): then the
		 * job's CPUs over its tasks.
		 */
		j->cpus_per_task = num(e, "cpus_per_task", 0);
		if (!j->cpus_per_task && j->tasks)
			j->cpus_per_task = num(e, "cpus", 0) / j->tasks;
		if (!j->cpus_per_task)
			j->cpus_per_task = 1;
		job_slots(j, e);
		j->ncomp = 1;
		j->het_id = num(e, "het_job_id", 0);
		j->het_off = j->het_id ? num(e, "het_job_offset", 0) : 0;
		if (j->het_off >= 4096)
			j->het_off = 4095;
	}
	cJSON_Delete(root);
	het_fold(out);
	return 0;
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

bool br_sjob_ours(const br_sjob *j, const char *sched)
{
	size_t ml = strlen(BR_SLURM_MARK), sl = strlen(sched);

	/* "topogang-bridge/<scheduler> gang=..." */
	return strncmp(j->comment, BR_SLURM_MARK, ml) == 0 &&
	       j->comment[ml] == '/' &&
	       strncmp(j->comment + ml + 1, sched, sl) == 0 &&
	       (j->comment[ml + 1 + sl] == ' ' ||
		j->comment[ml + 1 + sl] == '\0');
}

/* One job description (a het job's component): the spec's common fields
 * and the task shape \p t. */
static void job_desc(cJSON *job, const br_sjob_spec *sp,
		     const br_sjob_task *t)
{
	char buf[64], *comment;
	cJSON *env;

	cJSON_AddStringToObject(job, "name", sp->name);
	comment = br_xasprintf("%s/%s gang=%s%s%s%s%s", BR_SLURM_MARK,
			       sp->sched, sp->name,
			       *sp->gather ? " topo-gather=" : "", sp->gather,
			       *sp->spread ? " topo-spread=" : "", sp->spread);
	cJSON_AddStringToObject(job, "comment", comment);
	free(comment);
	/* a task per member; Slurm may put several on a node */
	snprintf(buf, sizeof(buf), "%u", t->tasks);
	cJSON_AddStringToObject(job, "tasks", buf);
	snprintf(buf, sizeof(buf), "%u",
		 t->cpus_per_task ? t->cpus_per_task : 1);
	cJSON_AddStringToObject(job, "cpus_per_task", buf);
	if (t->gpus_per_task) {
		/* "gpu" -> "N", "gpu:TYPE" -> "TYPE:N" */
		const char *type = sp->gres_name ?
			strchr(sp->gres_name, ':') : NULL;

		snprintf(buf, sizeof(buf), "%s%s%u", type ? type + 1 : "",
			 type ? ":" : "", t->gpus_per_task);
		cJSON_AddStringToObject(job, "gpus_per_task", buf);
	}
	if (t->mem_per_cpu) {
		snprintf(buf, sizeof(buf), "%lluM",
			 (unsigned long long)t->mem_per_cpu);
		cJSON_AddStringToObject(job, "memory_per_cpu", buf);
	}
	if (sp->partition && *sp->partition)
		cJSON_AddStringToObject(job, "partition", sp->partition);
	if (sp->qos && *sp->qos)
		cJSON_AddStringToObject(job, "qos", sp->qos);
	if (sp->time_limit && *sp->time_limit)
		cJSON_AddStringToObject(job, "time_limit", sp->time_limit);
	cJSON_AddStringToObject(job, "current_working_directory",
				sp->workdir);
	cJSON_AddStringToObject(job, "standard_output", "/dev/null");
	cJSON_AddStringToObject(job, "standard_error", "/dev/null");
	env = cJSON_AddObjectToObject(job, "environment");
	cJSON_AddStringToObject(env, "PATH", "/usr/bin:/bin");
	cJSON_AddStringToObject(env, "TOPOGANG_GANG", sp->name);
}

char *br_sjob_submit_body(const br_sjob_spec *sp)
{
	cJSON *root = cJSON_CreateObject(), *jobs;
	char *script, *out;
	unsigned c;

	if (sp->ncomps > 1) {
		/* heterogeneous: a component a pod set */
		jobs = cJSON_AddArrayToObject(root, "jobs");
		for (c = 0; c < sp->ncomps; c++) {
			cJSON *job = cJSON_CreateObject();

			job_desc(job, sp, &sp->comps[c]);
			cJSON_AddItemToArray(jobs, job);
		}
	} else {
		br_sjob_task t;

		t.tasks = sp->tasks;
		t.cpus_per_task = sp->cpus_per_task;
		t.gpus_per_task = sp->gpus_per_task;
		t.mem_per_cpu = sp->mem_per_cpu;
		job_desc(cJSON_AddObjectToObject(root, "job"), sp, &t);
	}
	/*
	 * The job only holds the allocation: the pods are the work.  It
	 * ignores SIGTERM (and so does its sleep), so that when Slurm
	 * preempts it with a GraceTime the nodes stay held until the bridge
	 * has evicted the pods and cancels the job.
	 */
	script = br_xasprintf("#!/bin/sh\n# topogang-bridge: holds the nodes "
			      "of Kubernetes gang %s\ntrap '' TERM\n"
			      "while :; do sleep 3600; done\n", sp->name);
	cJSON_AddStringToObject(root, "script", script);
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
