/*****************************************************************************\
 *  tgjob.c - a Slurm job's topogang request, for every Slurm version
 *  (see tgjob.h).  Compiled against the Slurm source tree of the plugin
 *  it goes into; reads only job record fields that 22.05 and 24.11 share.
\*****************************************************************************/

#include "config.h"

#define _GNU_SOURCE

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"

#include "src/common/slurm_xlator.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/slurmctld/slurmctld.h"
#include "tg_slurm_gres.h"

#include "src/common/bitstring.h"
#include "src/common/job_resources.h"
#include "src/common/node_conf.h"

#include "topogang/place.h"

#include "tgjob.h"
#include "tgreason.h"

uint32_t tgj_gpu_plugin_id = 0;

/* struct job_details (22.05) became job_details_t (24.11). */
typedef __typeof__(*((job_record_t *) 0)->details) tg_details_t;

/* GPUs the job asks for on each of \p members nodes. */
typedef struct gpu_req_arg {
	uint32_t members, tasks;
	uint64_t n;
} gpu_req_arg_t;

static int _gpu_req_one(void *x, void *arg)
{
	gres_state_t *gs = x;
	gpu_req_arg_t *a = arg;
	gres_job_state_t *js = gs->gres_data;
	uint64_t v = 0;

	if (gs->plugin_id != tgj_gpu_plugin_id || !js)
		return 0;
	if (js->gres_per_node)
		v = js->gres_per_node;
	else if (js->gres_per_job)
		v = (js->gres_per_job + a->members - 1) / a->members;
	else if (js->gres_per_task)
		v = js->gres_per_task *
		    ((a->tasks + a->members - 1) / a->members);
	else if (js->gres_per_socket)
		v = js->gres_per_socket;
	a->n += v;
	return 0;
}

extern uint64_t tgj_req_gpus(job_record_t *job_ptr, uint32_t members)
{
	gpu_req_arg_t a = { .members = members };

	if (!job_ptr->gres_list_req || !tgj_gpu_plugin_id || !members)
		return 0;
	a.tasks = job_ptr->details->num_tasks ? job_ptr->details->num_tasks :
		  members;
	(void) list_for_each(job_ptr->gres_list_req, _gpu_req_one, &a);
	return a.n;
}

/* The largest memory per GPU of the job's gpu requests (--mem-per-gpu,
 * else the partition's or the cluster's DefMemPerGPU). */
static int _gpu_mem_one(void *x, void *arg)
{
	gres_state_t *gs = x;
	gres_job_state_t *js = gs->gres_data;
	uint64_t *max = arg, v;

	if (gs->plugin_id != tgj_gpu_plugin_id || !js)
		return 0;
	v = js->mem_per_gres ? js->mem_per_gres : js->def_mem_per_gres;
	if (v > *max)
		*max = v;
	return 0;
}

extern uint64_t tgj_gpu_mem(job_record_t *job_ptr)
{
	uint64_t max = 0;

	if (!job_ptr->gres_list_req || !tgj_gpu_plugin_id ||
	    (job_ptr->bit_flags & JOB_MEM_SET) ||
	    !(slurm_conf.select_type_param & CR_MEMORY))
		return 0;
	(void) list_for_each(job_ptr->gres_list_req, _gpu_mem_one, &max);
	return max;
}

extern bool tgj_exclusive(job_record_t *job_ptr)
{
	tg_details_t *d = job_ptr->details;

	if (d->whole_node & WHOLE_NODE_REQUIRED)
		return true;
	if (d->share_res == 0)
		return true;
	if (job_ptr->part_ptr && (job_ptr->part_ptr->max_share == 0))
		return true;
	/* Without a memory request cons_tres hands out a node's whole
	 * memory when memory is consumable. */
	if (!d->pn_min_memory &&
	    (slurm_conf.select_type_param & CR_MEMORY) &&
	    !tgj_gpu_mem(job_ptr))
		return true;
	return false;
}

/*
 * Whether the job is a set of tasks that may share nodes (-n N -c C
 * [--gpus-per-task] [--mem-per-cpu], no -N above 1, no --exclusive, no
 * --ntasks-per-node, no -w): then each task is a member of the gang and
 * the core may put several on a node, as it does with pods (this is the
 * shape the bridge's mixed mode submits a gang in).
 */
static bool _job_per_task(job_record_t *job_ptr, bool exclusive)
{
	tg_details_t *d = job_ptr->details;

	return !exclusive && d->num_tasks > 1 && d->num_tasks != NO_VAL &&
	       d->min_nodes <= 1 && (!d->max_nodes || d->max_nodes > 1) &&
	       (!d->ntasks_per_node || d->ntasks_per_node == NO_VAL16) &&
	       !d->req_node_bitmap &&
	       (!d->pn_min_memory || (d->pn_min_memory & MEM_PER_CPU) ||
		tgj_gpu_mem(job_ptr));
}

/*
 * One member's shape, the same for a task (tgj_shape's per-task branch)
 * and a node: \p cpus CPUs, the GPUs of \p job_ptr's request shared
 * over \p n members, and \p mem MB of memory unless memory comes from
 * GRES (--mem-per-gpu or DefMemPerGPU: cons_tres then counts the GPUs'
 * memory and clears the rest) or is not consumable (no CR_MEMORY).
 */
static void _shape_fill(job_record_t *job_ptr, tg_shape *sh, uint64_t cpus,
			uint64_t mem, uint32_t n)
{
	uint64_t gpu_mem = tgj_gpu_mem(job_ptr);

	sh->v[TG_RES_GPU] = (int64_t) tgj_req_gpus(job_ptr, n);
	if (gpu_mem)
		mem = gpu_mem * (uint64_t) sh->v[TG_RES_GPU];
	if (!(slurm_conf.select_type_param & CR_MEMORY))
		mem = 0;
	sh->v[TG_RES_CPU] = (int64_t) cpus * 1000;
	sh->v[TG_RES_MEMORY] = (int64_t) mem << 20;
	sh->v[TG_RES_PODS] = 1;
}

extern int tgj_shape(job_record_t *job_ptr, uint32_t min_nodes,
		      uint32_t max_nodes, uint32_t max_node_cpus,
		      tg_shape *sh, uint32_t *members, bool *exclusive,
		      bool *per_task)
{
	tg_details_t *d = job_ptr->details;
	uint64_t cpus, mem;
	uint32_t m = min_nodes;

	memset(sh, 0, sizeof(*sh));
	*exclusive = tgj_exclusive(job_ptr);
	*per_task = _job_per_task(job_ptr, *exclusive);
	if (*per_task) {
		/* one member per task: -c CPUs, its memory and GPUs */
		cpus = d->cpus_per_task && d->cpus_per_task != NO_VAL16 ?
		       d->cpus_per_task : 1;
		_shape_fill(job_ptr, sh, cpus,
			    (d->pn_min_memory & ~MEM_PER_CPU) * cpus,
			    d->num_tasks);
		*members = d->num_tasks;
		return SLURM_SUCCESS;
	}
	if (d->ntasks_per_node && d->ntasks_per_node != NO_VAL16 &&
	    d->num_tasks && d->num_tasks != NO_VAL &&
	    d->num_tasks > (uint64_t) m * d->ntasks_per_node) {
		/* -n with --ntasks-per-node: as many nodes as the tasks
		 * need, as cons_tres counts them */
		m = (d->num_tasks + d->ntasks_per_node - 1) /
		    d->ntasks_per_node;
		if (max_nodes && m > max_nodes)
			return SLURM_ERROR;
	}
	if (max_node_cpus && d->min_cpus > (uint64_t) m * max_node_cpus) {
		/* -n without -N (exclusive or not): as many nodes as the
		 * CPUs need, as cons_tres grows the node count */
		m = (d->min_cpus + max_node_cpus - 1) / max_node_cpus;
		if (max_nodes && m > max_nodes)
			return SLURM_ERROR;
	}
	cpus = (d->min_cpus + m - 1) / m;
	if (d->pn_min_cpus > cpus)
		cpus = d->pn_min_cpus;
	if (d->ntasks_per_node && d->ntasks_per_node != NO_VAL16) {
		uint64_t c = (uint64_t) d->ntasks_per_node *
			     (d->cpus_per_task ? d->cpus_per_task : 1);

		if (c > cpus)
			cpus = c;
	}
	if (!cpus)
		cpus = 1;
	if (d->pn_min_memory & MEM_PER_CPU)
		mem = (d->pn_min_memory & ~MEM_PER_CPU) * cpus;
	else
		mem = d->pn_min_memory;
	_shape_fill(job_ptr, sh, cpus, mem, m);
	*members = m;
	return SLURM_SUCCESS;
}


/*
 * A "topo-gather=..." or "topo-spread=..." word of the job's comment:
 * jobs submitted through slurmrestd run no SPANK plugin, so the bridge's
 * mixed mode writes its request there (--comment "topogang-bridge
 * gang=ns/g topo-gather=spine:must").  Copies the value into \p buf;
 * false when the comment has no such word.
 */
static bool _comment_opt(const char *comment, const char *key, char *buf,
			 size_t len)
{
	size_t kl = strlen(key);
	const char *p = comment;

	while (p && *p) {
		size_t wl;

		while (*p == ' ' || *p == '\t')
			p++;
		wl = strcspn(p, " \t");
		if (wl > kl && !strncmp(p, key, kl) && p[kl] == '=') {
			snprintf(buf, len, "%.*s", (int)(wl - kl - 1),
				 p + kl + 1);
			return true;
		}
		p += wl;
	}
	return false;
}

/*
 * The text of one of the job's requests: its SPANK variable \p var (set by
 * --topo-X), else "\p key=" in its comment (mixed mode's jobs, which run
 * no SPANK plugin; only when \p key is given).  Returns where it came
 * from ("--topo-X" as \p opt, or "comment"), NULL when the job has none;
 * a value too long for \p buf is an error in \p buf's place.
 */
static const char *_job_opt(job_record_t *job_ptr, const char *var,
			    const char *opt, const char *key, char *buf,
			    size_t len)
{
	size_t vl = strlen(var);
	uint32_t i;

	for (i = 0; i < job_ptr->spank_job_env_size; i++) {
		const char *e = job_ptr->spank_job_env[i];

		if (!e || strncmp(e, var, vl) || e[vl] != '=')
			continue;
		if ((size_t) snprintf(buf, len, "%s", e + vl + 1) >= len)
			buf[0] = '\0';	/* refused by the parser */
		return opt;
	}
	if (key && _comment_opt(job_ptr->comment, key, buf, len))
		return "comment";
	return NULL;
}

/*
 * The job's request of \p kind (its option, --topo-gather, --topo-spread
 * or --topo-slice, or the comment's topo-gather=/topo-spread=) into \p q,
 * read by the core's grammar; *from says where it came from.  False when
 * it has none, or a bad one (logged once a job; \p q is then empty).
 */
static bool _job_req(job_record_t *job_ptr, const char *plugin_type,
		     tg_request_kind kind, tg_request *q, const char **from)
{
	static const struct {
		const char *var, *opt, *key, *bad;
	} o[] = {
		[TG_REQUEST_GATHER] = { TGS_SPANK_GATHER_VAR, "--topo-gather",
					"topo-gather", "using the partition "
					"default" },
		[TG_REQUEST_SPREAD] = { TGS_SPANK_SPREAD_VAR, "--topo-spread",
					"topo-spread", "ignored" },
		[TG_REQUEST_SLICE] = { TGS_SPANK_SLICE_VAR, "--topo-slice",
				       NULL, "ignored" },
	};
	char val[TGS_MAX_LINE];
	tg_errinfo ei = { "" };

	tg_request_init(q, kind);
	*from = _job_opt(job_ptr, o[kind].var, o[kind].opt, o[kind].key, val,
			 sizeof(val));
	if (!*from)
		return false;
	if (!tg_request_parse(q, kind, val, &ei))
		return true;
	if (tgr_once(job_ptr->job_id, o[kind].opt + 2))
		error("%s: %pJ: %s (%s): %s; %s", plugin_type, job_ptr,
		      o[kind].opt + 2, *from, ei.msg, o[kind].bad);
	tg_request_init(q, kind);
	return false;
}

/* The job's gather request: --topo-gather (or its comment's topo-gather=),
 * else its partition's, else DefaultGather.  *src says where it came
 * from, for the log. */
static void _job_gather(job_record_t *job_ptr, const tgs_conf *conf,
			const char *plugin_type, tg_request *g,
			const char **src)
{
	const tg_request *pg;
	const char *from;

	*src = "none";
	if (_job_req(job_ptr, plugin_type, TG_REQUEST_GATHER, g, &from)) {
		*src = from;
		return;
	}
	pg = tgs_conf_part_gather(conf, job_ptr->part_ptr ?
				  job_ptr->part_ptr->name : NULL);
	if (pg) {
		*g = *pg;
		*src = "topogang.conf";
	}
}

/* Appends " WHAT=" (unless \p what is NULL) and the formatted request to
 * the log text; a text that does not fit ends in "...". */
static void _txt_add(tgj_req *r, const char *what, const tg_request *q)
{
	char buf[TG_REQUEST_MAX_TEXT];
	size_t off = strlen(r->txt), len = sizeof(r->txt);
	int n;

	tg_request_format(q, buf, sizeof(buf));
	n = snprintf(r->txt + off, len - off, "%s%s%s", what ? " " : "",
		     what ? what : "", what ? "=" : "");
	if (n > 0 && (size_t) n < len - off)
		off += (size_t) n;
	if ((size_t) snprintf(r->txt + off, len - off, "%s", buf) >=
	    len - off && len > 4)
		memcpy(r->txt + len - 4, "...", 4);
}

/* A request's layer through topogang.conf's LayerName aliases. */
static const char *_layer(void *conf, const char *name)
{
	return tgs_conf_layer(conf, name);
}

static int _add_spread(job_record_t *job_ptr, const tgs_conf *conf,
		       const char *ptype, tg_gang *g, tgj_req *r, char *why,
		       size_t wlen)
{
	tg_request spread;
	tg_errinfo ei = { "" };
	const char *from;

	if (!_job_req(job_ptr, ptype, TG_REQUEST_SPREAD, &spread, &from) ||
	    !spread.n)
		return SLURM_SUCCESS;
	_txt_add(r, "spread", &spread);
	/* a hard spread is required, as a must layer: the job waits for
	 * it (will-run: the core's own time, _will_run_core in
	 * select_topogang.c) */
	for (unsigned i = 0; i < spread.n; i++)
		if (spread.item[i].hard)
			r->must = true;
	if (tg_request_apply(&spread, g, _layer, (void *) conf, &ei)) {
		snprintf(why, wlen, "--topo-spread %s", ei.msg);
		return SLURM_ERROR;
	}
	return SLURM_SUCCESS;
}

static int _add_slice(job_record_t *job_ptr, const tgs_conf *conf,
		      const char *ptype, tg_gang *g, uint32_t members,
		      tgj_req *r, char *why, size_t wlen)
{
	tg_request slice;
	tg_errinfo ei = { "" };
	const char *from;

	if (!_job_req(job_ptr, ptype, TG_REQUEST_SLICE, &slice, &from) ||
	    !slice.n)
		return SLURM_SUCCESS;
	r->slice = true;
	_txt_add(r, "slice", &slice);
	if (tg_request_apply(&slice, g, _layer, (void *) conf, &ei)) {
		snprintf(why, wlen, "--topo-%s (a job of %u nodes)", ei.msg,
			 members);
		return SLURM_ERROR;
	}
	return SLURM_SUCCESS;
}

/*
 * --switches=1[@time]: every node under one leaf switch (the lowest
 * layer) until the job has waited its time, as cons_tres does.  Counts
 * above 1 are the adapter's (a placement spanning more waits).
 */
static int _add_switches(job_record_t *job_ptr, const tg_topology *t,
			 tg_gang *g, tgj_req *r, char *why, size_t wlen)
{
	time_t now = time(NULL);
	unsigned leaf;
	size_t off;

	if (job_ptr->req_switch != 1 || !tg_topology_nlayers(t))
		return SLURM_SUCCESS;
	leaf = tg_topology_nlayers(t) - 1;
	if (!job_ptr->wait4switch_start)
		job_ptr->wait4switch_start = now;
	if (now - job_ptr->wait4switch_start >=
	    (time_t) job_ptr->wait4switch)
		return SLURM_SUCCESS;
	if (tg_gang_set_gather(g, tg_topology_layer_name(t, leaf),
			       TG_GATHER_MUST)) {
		snprintf(why, wlen, "out of memory");
		return SLURM_ERROR;
	}
	r->must = true;
	off = strlen(r->txt);
	snprintf(r->txt + off, sizeof(r->txt) - off, "+switches=1(%s:must)",
		 tg_topology_layer_name(t, leaf));
	return SLURM_SUCCESS;
}

extern int tgj_request(job_record_t *job_ptr, const tgs_conf *conf,
		       const tg_topology *t, tg_gang *g, uint32_t members,
		       const char *ptype, tgj_req *r, char *why,
		       size_t wlen)
{
	tg_request gather;
	tg_errinfo ei = { "" };

	memset(r, 0, sizeof(*r));
	_job_gather(job_ptr, conf, ptype, &gather, &r->src);
	_txt_add(r, NULL, &gather);
	if (_add_spread(job_ptr, conf, ptype, g, r, why, wlen) ||
	    _add_slice(job_ptr, conf, ptype, g, members, r, why, wlen))
		return SLURM_ERROR;
	for (unsigned i = 0; i < gather.n; i++)
		if (gather.item[i].how == TG_GATHER_MUST)
			r->must = true;
	if (tg_request_apply(&gather, g, _layer, (void *) conf, &ei)) {
		snprintf(why, wlen, "%s", ei.msg);
		return SLURM_ERROR;
	}
	return _add_switches(job_ptr, t, g, r, why, wlen);
}

/*
 * The gang's members: one per node.  With -w/--nodelist, the required
 * nodes each take one member ("required", restricted to those nodes by
 * the TGJ_NODE_LABEL label) and the others go elsewhere ("node", on any node
 * but those), so the core's placement always holds the required nodes
 * and is still chosen by topology around them.
 */
extern int tgj_members(tg_gang *g, job_record_t *job_ptr, const tg_shape *gs,
		       uint32_t members, bool per_task, unsigned *nreqp,
		       char *why, size_t wlen)
{
	bitstr_t *req = job_ptr->details->req_node_bitmap;
	const char **names = NULL;
	tg_label_expr e;
	unsigned ps, nreq = 0;
	int k, n;
	int rc = SLURM_ERROR;

	if (req) {
		n = MIN(bit_size(req), node_record_count);
		names = xcalloc(bit_set_count(req) + 1, sizeof(*names));
		for (k = 0; k < n; k++)
			if (bit_test(req, k) && node_record_table_ptr[k])
				names[nreq++] = node_record_table_ptr[k]->name;
	}
	if (nreq > members)
		members = nreq;
	memset(&e, 0, sizeof(e));
	e.key = TGJ_NODE_LABEL;
	e.values = names;
	e.nvalues = nreq;
	if (nreq) {
		e.op = TG_SEL_IN;
		if (tg_gang_add_podset(g, "required", gs, nreq, &ps) ||
		    tg_gang_podset_set_max_per_node(g, ps, 1) ||
		    tg_gang_podset_add_affinity_expr(g, ps, 0, &e))
			goto oom;
		*nreqp = nreq;
	}
	if (members > nreq) {
		e.op = TG_SEL_NOT_IN;
		if (tg_gang_add_podset(g, per_task ? "task" : "node", gs,
				       members - nreq, &ps) ||
		    (!per_task &&
		     tg_gang_podset_set_max_per_node(g, ps, 1)) ||
		    (nreq && tg_gang_podset_add_affinity_expr(g, ps, 0, &e)))
			goto oom;
	}
	rc = SLURM_SUCCESS;
	goto out;
oom:
	snprintf(why, wlen, "out of memory");
out:
	xfree(names);
	return rc;
}

/*
 * --switches=N@time with N > 1 (N = 1 is a must-gather at the leaf
 * layer, see _build): as select/cons_tres with topology/tree does in
 * 22.05 (_eval_nodes_topo), a placement on more than N leaf switches
 * waits until the job has waited its time (capped by slurmctld with
 * SchedulerParameters=max_switch_wait), then it is taken.  The core's fill
 * already spans the fewest leaf switches inside the domain it chose.
 * True (and \p why) when the job must wait.
 */
extern bool tgj_switches_wait(job_record_t *job_ptr, const tg_topology *t,
			      const tg_decision *d, time_t now, char *why,
			      size_t wlen)
{
	tg_domain_id *leaves;
	unsigned i, j, n = 0, np = tg_decision_nplacements(d);
	time_t waited;

	if (job_ptr->req_switch <= 1 || !np)
		return false;
	if (!job_ptr->wait4switch_start)
		job_ptr->wait4switch_start = now;
	waited = now - job_ptr->wait4switch_start;
	if (waited >= (time_t) job_ptr->wait4switch)
		return false;
	leaves = xcalloc(np, sizeof(*leaves));
	for (i = 0; i < np; i++) {
		tg_domain_id leaf = tg_topology_node_domain(t,
				tg_decision_placement(d, i)->node);

		for (j = 0; j < n && leaves[j] != leaf; j++)
			;
		if (j == n)
			leaves[n++] = leaf;
	}
	xfree(leaves);
	if (n <= job_ptr->req_switch)
		return false;
	snprintf(why, wlen, "topogang: --switches=%u: the placement in %s "
		 "spans %u leaf switches; waiting %ld s more for one on %u",
		 job_ptr->req_switch, tg_decision_domain(d), n,
		 (long) ((time_t) job_ptr->wait4switch - waited),
		 job_ptr->req_switch);
	return true;
}


/* ---- running jobs in the core's model ---- */

static int _is_gpu(void *x, void *key)
{
	gres_state_t *gs = x;

	(void) key;
	return gs->plugin_id == tgj_gpu_plugin_id && gs->gres_data;
}

extern gres_node_state_t *tgj_node_gpu_state(node_record_t *node_ptr)
{
	gres_state_t *gs;

	if (!node_ptr->gres_list || !tgj_gpu_plugin_id)
		return NULL;
	gs = list_find_first(node_ptr->gres_list, _is_gpu, NULL);
	return gs ? gs->gres_data : NULL;
}

typedef struct job_gpus_arg {
	int j;
	uint64_t n, mask;
} job_gpus_arg_t;

static int _job_gpus_one(void *x, void *arg)
{
	gres_state_t *gs = x;
	job_gpus_arg_t *a = arg;
	gres_job_state_t *js = gs->gres_data;

	if (gs->plugin_id != tgj_gpu_plugin_id || !js ||
	    a->j >= (int) js->node_cnt)
		return 0;
	if (js->gres_cnt_node_alloc)
		a->n += js->gres_cnt_node_alloc[a->j];
	if (js->gres_bit_alloc && js->gres_bit_alloc[a->j]) {
		bitstr_t *b = js->gres_bit_alloc[a->j];
		int64_t sz = bit_size(b);

		for (int64_t k = 0; k < sz && k < 64; k++)
			if (bit_test(b, k))
				a->mask |= UINT64_C(1) << k;
	}
	return 0;
}

/* GPUs a running job holds on its j-th node: count and index mask. */
static uint64_t _job_gpus(job_record_t *job_ptr, int j, uint64_t *mask)
{
	job_gpus_arg_t a = { .j = j };

	*mask = 0;
	if (!job_ptr->gres_list_alloc || !tgj_gpu_plugin_id)
		return 0;
	(void) list_for_each(job_ptr->gres_list_alloc, _job_gpus_one, &a);
	*mask = a.mask;
	return a.n;
}

extern int64_t tgj_preempt_rank(const job_record_t *jp)
{
	int64_t tier = jp->part_ptr ? jp->part_ptr->priority_tier : 0;
	int64_t qos = jp->qos_ptr ? jp->qos_ptr->priority : 0;

	return (tier << 32) + qos;
}

extern unsigned tgj_add_job(tg_topology *t, job_record_t *jp, bool cand)
{
	job_resources_t *jr = jp->job_resrcs;
	node_record_t *node_ptr;
	char pod[64], gang[32];
	tg_shape as;
	tg_node_id id;
	int j = 0, n;
	unsigned adds = 0;

	if (!jr || !jr->node_bitmap)
		return 0;
	n = bit_size(jr->node_bitmap);
	snprintf(gang, sizeof(gang), "JobId=%u", jp->job_id);
	for (int k = 0; k < n; k++) {
		tg_alloc_spec a;
		uint64_t mask = 0;

		if (!bit_test(jr->node_bitmap, k))
			continue;
		node_ptr = node_record_table_ptr[k];
		if (!node_ptr ||
		    tg_topology_node_find(t, node_ptr->name, &id)) {
			j++;
			continue;
		}
		memset(&as, 0, sizeof(as));
		as.v[TG_RES_CPU] = jr->cpus ? (int64_t) jr->cpus[j] * 1000 : 0;
		as.v[TG_RES_MEMORY] = jr->memory_allocated ?
			(int64_t) jr->memory_allocated[j] << 20 : 0;
		as.v[TG_RES_GPU] = (int64_t) _job_gpus(jp, j, &mask);
		as.v[TG_RES_PODS] = 1;
		memset(&a, 0, sizeof(a));
		snprintf(pod, sizeof(pod), "JobId=%u/%s", jp->job_id,
			 node_ptr->name);
		a.pod = pod;
		a.gang = gang;
		a.node = id;
		a.shape = &as;
		a.gpus = mask;
		a.priority = tgj_preempt_rank(jp);
		a.preemptible = cand;
		(void) tg_topology_add_alloc(t, &a);
		adds++;
		j++;
	}
	return adds;
}
