/*****************************************************************************\
 *  topology_topogang.c - topology-aware gang placement for Slurm 24.11.
 *
 *  topology/topogang is a topology plugin: SelectType=select/cons_tres
 *  stays Slurm's own, and cons_tres calls topology_p_eval_nodes() with
 *  what it has worked out for the job (src/plugins/select/cons_tres/
 *  job_test.c, _select_nodes): the candidate nodes (node_map), each
 *  node's available cores and resources after every constraint
 *  (avail_core, avail_res_array), min/req/max nodes.  The plugin asks
 *  libtopogang's core where the gang goes on a model built from exactly
 *  that view (nodes outside node_map are unschedulable, each candidate
 *  offers its avail_cpus and avail_gpus), narrows node_map to the core's
 *  nodes and lets Slurm's own evaluation (common_topo_choose_nodes, as
 *  topology/default does) pick cores and GRES inside them.  A placement
 *  therefore never needs resources cons_tres does not have.
 *
 *  Where the core and cons_tres disagree (cons_tres refuses the core's
 *  nodes), cons_tres's own answer on the whole node_map stands (Slurm's
 *  default evaluation), logged once per job; a job whose request has a
 *  must layer waits instead, with the reason.  Nothing here blocks or
 *  calls fatal() after start-up.
 *
 *  topology.conf (tree or block form) is read by the core's loader
 *  (shared/src/load/topoconf.c), topogang.conf by tgconf.c; per-job requests
 *  (--topo-gather/--topo-spread/--topo-slice, --switches, -w) by tgjob.c,
 *  shared with select/topogang for 22.05.  24.11's `scontrol reconfigure`
 *  starts a new slurmctld; the files that last loaded are kept in
 *  StateSaveLocation/topogang/, so a broken file at reconfigure logs one
 *  error naming file and line and the previous topology stays.
 *
 *  Preemption: cons_tres removes slurmctld's preemptee candidates one by
 *  one around eval_nodes; see docs/slurm.md for how victims are
 *  chosen on 24.11.
\*****************************************************************************/

#include "config.h"

#define _GNU_SOURCE

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"

#include "src/common/slurm_xlator.h"
#include "src/common/bitstring.h"
#include "src/common/core_array.h"
#include "src/common/hostlist.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/pack.h"
#include "src/common/read_config.h"
#include "src/common/run_in_daemon.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/interfaces/gres.h"
#include "src/interfaces/preempt.h"
#include "src/interfaces/topology.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"
#include "src/plugins/topology/common/common_topo.h"

#include "topogang/topology.h"
#include "topogang/gang.h"
#include "topogang/place.h"
#include "topogang/topoconf.h"

/* slurmctld's own data: weak, so that clients and slurmd, which load
 * the plugin too, need not have it (only slurmctld reaches the code). */
#pragma weak last_job_update
#pragma weak last_node_update
#pragma weak job_list
#pragma weak queue_job_scheduler

#include "tgconf.h"
#include "tghet.h"
#include "tghold.h"
#include "tgjob.h"
#include "tgreason.h"

/*
 * plugin_id: packed in front of the `scontrol show topology` reply; a
 * client rejects a reply whose id is not its own plugin's, so every host
 * must run this plugin.  Slurm's own topology plugins are 100-103
 * (slurm/slurm.h); 0x7467 is "tg", as select/topogang's.
 */
const char plugin_name[] = "topology topogang (topology-aware gangs)";
const char plugin_type[] = "topology/topogang";
const uint32_t plugin_id = 29799;
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

#define POD_SLOTS_SHARED (INT64_C(1) << 20)	/* tasks on a shared node */
#define MEM_UNMODELLED	(INT64_C(1) << 60)	/* cons_tres checked memory */
#define MAX_LOGGED_JOBS	1024	/* jobs whose fallback was logged (ring) */
#define SAVE_DIR	"topogang"	/* under StateSaveLocation */

static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static bool active = false;		/* slurmctld with a topology */
static tgs_conf site_conf;
static tg_topology *topo = NULL;	/* built; no allocations, ever */
static uint32_t *tg2slurm = NULL;	/* tg node -> node index, NO_VAL */
static unsigned ntg = 0;

/* What _model_set() last gave each node of topo (set: anything yet), so
 * that an evaluation writes only the nodes whose offer changed. */
typedef struct nodeval {
	int64_t cpu, gpu, pods;
	bool in, set;
} nodeval_t;
static nodeval_t *mval = NULL;		/* ntg entries */
static bitstr_t **dom_nodes = NULL;	/* per domain: its nodes */
static unsigned ndom = 0;
static char topo_file[PATH_MAX];	/* the file that loaded */
static uint32_t logged[MAX_LOGGED_JOBS];
static unsigned nlogged = 0;

/* A domain that is a switch or block: not the unnamed root above the
 * top layer (state_lock held). */
static bool _named(unsigned d)
{
	return tg_topology_domain_value(topo, d)[0] != '\0';
}

static unsigned _nnamed(void)
{
	unsigned n = 0;

	for (unsigned d = 0; topo && d < ndom; d++)
		n += _named(d);
	return n;
}

/* ---- configuration ---- */

static void _log_decision(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static void _log_decision(const char *fmt, ...)
{
	va_list ap;
	char buf[1024];

	if (!site_conf.debug)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	info("%s: %s", plugin_type, buf);
}

static void _free_tables(tg_topology *t, uint32_t *map, bitstr_t **doms,
			 unsigned nd)
{
	for (unsigned d = 0; doms && d < nd; d++)
		FREE_NULL_BITMAP(doms[d]);
	xfree(doms);
	xfree(map);
	tg_topology_destroy(t);
}

/* Maps the built model's nodes to Slurm's node indexes (NO_VAL: not a
 * Slurm node) and fills each domain's node bitmap. */
static void _tables(tg_topology *t, uint32_t **map, bitstr_t ***doms)
{
	unsigned n = tg_topology_nnodes(t), nd = tg_topology_ndomains(t);
	bitstr_t **bits = xcalloc(nd ? nd : 1, sizeof(*bits));
	uint32_t *m = xcalloc(n ? n : 1, sizeof(*m));

	for (unsigned d = 0; d < nd; d++)
		bits[d] = bit_alloc(node_record_count);
	for (unsigned i = 0; i < n; i++) {
		node_record_t *node_ptr = find_node_record(
			(char *) tg_topology_node_name(t, i));

		m[i] = node_ptr ? node_ptr->index : NO_VAL;
		if (!node_ptr)
			continue;
		for (tg_domain_id d = tg_topology_node_domain(t, i);
		     d != TG_NONE; d = tg_topology_domain_parent(t, d))
			bit_set(bits[d], node_ptr->index);
	}
	*map = m;
	*doms = bits;
}

/*
 * Loads topology.conf at \p path (tree or block form) with the core's
 * loader and builds it, each Slurm node labelled with its name (for -w).
 * NULL with \p why (file and line) on a bad file.
 */
static tg_topology *_topo_build(const char *path, bool gpus, char *why,
			       size_t wlen)
{
	tg_topology *t = tg_topology_create();
	tg_errinfo ei;

	memset(&ei, 0, sizeof(ei));
	if (!t) {
		snprintf(why, wlen, "%s: out of memory", path);
		return NULL;
	}
	if (tg_topoconf_load_file(t, path, &ei)) {
		snprintf(why, wlen, "%s", ei.msg);
		goto fail;
	}
	for (unsigned i = 0; i < tg_topology_nnodes(t); i++) {
		const char *name = tg_topology_node_name(t, i);

		node_record_t *node_ptr = find_node_record((char *) name);
		gres_node_state_t *ns;

		if (node_ptr &&
		    tg_topology_node_add_label(t, i, TGJ_NODE_LABEL, name)) {
			snprintf(why, wlen, "%s: out of memory", path);
			goto fail;
		}
		/* whole nodes, for preemption (_victims_compute) */
		if (gpus && node_ptr && (ns = tgj_node_gpu_state(node_ptr)) &&
		    ns->gres_cnt_avail &&
		    tg_topology_node_set_gpus(t, i, (unsigned)
				MIN(ns->gres_cnt_avail, TG_MAX_GPUS), NULL)) {
			snprintf(why, wlen, "node %s: bad GPU count", name);
			goto fail;
		}
	}
	if (tg_topology_build(t, &ei)) {
		snprintf(why, wlen, "%s: %s", path, ei.msg);
		goto fail;
	}
	return t;
fail:
	tg_topology_destroy(t);
	return NULL;
}

/* StateSaveLocation/topogang/NAME into \p buf. */
static void _saved_path(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s/%s", slurm_conf.state_save_location,
		 SAVE_DIR, name);
}

/* Copies \p src to the saved copy \p name (best effort: a failure is
 * logged and only costs the fallback at the next reconfigure). */
static void _save_copy(const char *src, const char *name)
{
	char dir[PATH_MAX], dst[PATH_MAX], tmp[PATH_MAX + 8], buf[65536];
	FILE *in, *out;
	size_t n;
	bool ok = true;

	snprintf(dir, sizeof(dir), "%s/%s", slurm_conf.state_save_location,
		 SAVE_DIR);
	(void) mkdir(dir, 0700);
	_saved_path(name, dst, sizeof(dst));
	snprintf(tmp, sizeof(tmp), "%s.new", dst);
	if (!(in = fopen(src, "r")))
		return;
	if (!(out = fopen(tmp, "w"))) {
		error("%s: cannot save a copy of %s in %s: %m", plugin_type,
		      src, tmp);
		fclose(in);
		return;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			ok = false;
	if (ferror(in))
		ok = false;
	fclose(in);
	if (fclose(out) || !ok || rename(tmp, dst)) {
		error("%s: cannot save a copy of %s as %s: %m", plugin_type,
		      src, dst);
		(void) unlink(tmp);
	}
}

/* topogang.conf, else (\p why set) the copy that last loaded. */
static int _conf_load(tgs_conf *nc, char *cpath, size_t clen, bool *saved)
{
	char msg[TGS_ERRLEN] = "", copy[PATH_MAX];
	char *p = get_extra_conf_path("topogang.conf");

	snprintf(cpath, clen, "%s", p);
	xfree(p);
	*saved = false;
	tgs_conf_init(nc);
	if (!tgs_conf_load(nc, cpath, true, msg, sizeof(msg)))
		return SLURM_SUCCESS;
	_saved_path("topogang.conf", copy, sizeof(copy));
	tgs_conf_init(nc);
	if (!access(copy, R_OK) &&
	    !tgs_conf_load(nc, copy, false, NULL, 0)) {
		error("%s: %s; using the copy that last loaded, %s",
		      plugin_type, msg, copy);
		*saved = true;
		return SLURM_SUCCESS;
	}
	error("%s: %s; placing every job with Slurm's own evaluation until "
	      "it is fixed", plugin_type, msg);
	return SLURM_ERROR;
}

/* The topology file topogang.conf names (default: topology.conf beside
 * slurm.conf). */
static void _topo_path(const tgs_conf *nc, char *tpath, size_t tlen)
{
	char *p;

	if (nc->topology_file[0] == '/') {
		snprintf(tpath, tlen, "%s", nc->topology_file);
		return;
	}
	p = get_extra_conf_path(nc->topology_file[0] ?
				(char *) nc->topology_file : "topology.conf");
	snprintf(tpath, tlen, "%s", p);
	xfree(p);
}

/*
 * Reads topogang.conf and the topology file it names.  On success they
 * replace what was there and copies are saved under StateSaveLocation;
 * on failure one error() names file and line, and what was loaded stays
 * -- in this process, or (a reconfigure starts a new slurmctld in 24.11)
 * the saved copies.
 */
static int _load(void)
{
	tgs_conf nc;
	char cpath[PATH_MAX], tpath[PATH_MAX], why[TGS_ERRLEN + PATH_MAX];
	char copy[PATH_MAX], why2[TGS_ERRLEN + PATH_MAX];
	bool conf_saved;
	tg_topology *t;
	uint32_t *map;
	bitstr_t **doms;

	if (_conf_load(&nc, cpath, sizeof(cpath), &conf_saved))
		return SLURM_ERROR;
	_topo_path(&nc, tpath, sizeof(tpath));
	if (!(t = _topo_build(tpath, false, why, sizeof(why)))) {
		if (topo) {
			error("%s: %s; keeping the previous topology",
			      plugin_type, why);
			tgs_conf_free(&nc);
			return SLURM_ERROR;
		}
		_saved_path("topology.conf", copy, sizeof(copy));
		if (access(copy, R_OK) ||
		    !(t = _topo_build(copy, false, why2, sizeof(why2)))) {
			error("%s: %s; placing every job with Slurm's own "
			      "evaluation until it is fixed", plugin_type,
			      why);
			tgs_conf_free(&nc);
			return SLURM_ERROR;
		}
		error("%s: %s; using the topology that last loaded, %s",
		      plugin_type, why, copy);
		snprintf(tpath, sizeof(tpath), "%s", copy);
	} else {
		_save_copy(tpath, "topology.conf");
	}
	if (!conf_saved)
		_save_copy(cpath, "topogang.conf");
	for (unsigned i = 0; i < nc.nalias; i++)
		if (tg_topology_layer_find(t, nc.alias[i].layer) == TG_NONE)
			error("%s: %s: LayerName=%s names layer '%s', which "
			      "%s does not have", plugin_type, cpath,
			      nc.alias[i].name, nc.alias[i].layer, tpath);
	for (unsigned i = 0; i < tg_topology_nwarnings(t) && i < 8; i++)
		error("%s: %s", plugin_type, tg_topology_warning(t, i));
	_tables(t, &map, &doms);

	slurm_mutex_lock(&state_lock);
	_free_tables(topo, tg2slurm, dom_nodes, ndom);
	topo = t;
	tg2slurm = map;
	dom_nodes = doms;
	ntg = tg_topology_nnodes(t);
	xfree(mval);
	mval = xcalloc(ntg ? ntg : 1, sizeof(*mval));
	ndom = tg_topology_ndomains(t);
	tgs_conf_free(&site_conf);
	site_conf = nc;
	snprintf(topo_file, sizeof(topo_file), "%s", tpath);
	active = true;
	info("%s: loaded %s (%u nodes, %u layers, %u domains) and %s",
	     plugin_type, tpath, ntg, tg_topology_nlayers(t), _nnamed(), cpath);
	slurm_mutex_unlock(&state_lock);
	return SLURM_SUCCESS;
}

/* ---- placement (topology_p_eval_nodes) ---- */

/* True the first time \p job_id is seen (a small ring: a job logs its
 * fallback once, not once per scheduling pass). */
static bool _first_log(uint32_t job_id)
{
	for (unsigned i = 0; i < MIN(nlogged, MAX_LOGGED_JOBS); i++)
		if (logged[i] == job_id)
			return false;
	logged[nlogged++ % MAX_LOGGED_JOBS] = job_id;
	return true;
}

/* Writes \p v into node \p i of topo (state_lock held). */
static int _model_node(unsigned i, const nodeval_t *v)
{
	nodeval_t *m = &mval[i];

	if (m->set && (m->cpu == v->cpu) && (m->gpu == v->gpu) &&
	    (m->pods == v->pods) && (m->in == v->in))
		return SLURM_SUCCESS;
	m->set = false;
	/* memory is cons_tres's business (checked per node) */
	if (tg_topology_node_set_resource(topo, i, TG_RES_CPU, v->cpu) ||
	    tg_topology_node_set_resource(topo, i, TG_RES_MEMORY,
					  MEM_UNMODELLED) ||
	    tg_topology_node_set_resource(topo, i, TG_RES_GPU, v->gpu) ||
	    tg_topology_node_set_resource(topo, i, TG_RES_PODS, v->pods))
		return SLURM_ERROR;
	tg_topology_node_set_unschedulable(topo, i, !v->in);
	*m = *v;
	m->set = true;
	return SLURM_SUCCESS;
}

/* A node's GPUs no job holds, by slurmctld's GRES counts. */
static int64_t _free_gpus(node_record_t *np)
{
	gres_node_state_t *gs = np ? tgj_node_gpu_state(np) : NULL;

	return (gs && gs->gres_cnt_avail > gs->gres_cnt_alloc) ?
	       (int64_t) (gs->gres_cnt_avail - gs->gres_cnt_alloc) : 0;
}

/*
 * The model's nodes as cons_tres offers them to this job (state_lock),
 * each with \p pods pod slots.  A node offers the CPUs and GPUs cons_tres
 * gives this job (avail_cpus, limited by its tasks; avail_gpus), or with
 * \p free_view the node's free CPUs (max_cpus: job_test.c line 3196) and
 * free GPUs (slurmctld's GRES counts: a job that asks none is offered
 * none), for a heterogeneous gang whose other components ask more than
 * this one.
 * Only the nodes whose offer differs from the previous evaluation's are
 * written: an unchanged model keeps the core's cached slot counts.
 */
static int _model_set(topology_eval_t *te, int64_t pods, bool free_view)
{
	for (unsigned i = 0; i < ntg; i++) {
		uint32_t x = tg2slurm[i];
		avail_res_t *ar = NULL;
		nodeval_t v = { .pods = pods };

		if (x != NO_VAL && bit_test(te->node_map, x))
			ar = te->avail_res_array[x];
		v.in = ar && ar->avail_cpus > 0;
		if (v.in) {
			v.cpu = (int64_t) (free_view ?
					   MAX(ar->max_cpus, ar->avail_cpus) :
					   ar->avail_cpus) * 1000;
			v.gpu = (int64_t) ar->avail_gpus;
		}
		if (v.in && free_view)
			v.gpu = MAX(v.gpu, _free_gpus(node_record_table_ptr[x]));
		if (_model_node(i, &v))
			return SLURM_ERROR;
	}
	return SLURM_SUCCESS;
}

typedef enum {
	DEC_PLACED,		/* *want holds the core's nodes */
	DEC_WAIT,		/* the job waits: why is its reason */
	DEC_FALLBACK,		/* Slurm's own evaluation decides */
} dec_t;

typedef struct decide {
	job_record_t *job_ptr;
	tg_gang *g;
	tg_decision *d;
	tgj_req req;
	char why[TGS_ERRLEN + 128];
	bitstr_t *want;
	unsigned nhet;			/* components of a heterogeneous job
					 * placed as one gang (0: not one) */
	job_record_t *het[TG_MAX_PODSETS];	/* their pod sets' jobs */
	unsigned het_ps;		/* job_ptr's pod set */
} decide_t;

/* ---- heterogeneous jobs (sbatch A : B) as one gang ---- */

/*
 * A heterogeneous job is one gang: a pod set per component, placed
 * together by the core, each component then getting its part, as
 * select/topogang does on 22.05.  24.11 starts heterogeneous jobs from
 * sched/backfill only (job_scheduler.c line 1595 skips them): backfill
 * tests each component (will-run), and once every one can start now
 * _het_job_start_now (backfill.c line 4345) starts them one after
 * another in het_job_list order, each through select_nodes -> cons_tres
 * -> topology_p_eval_nodes, the nodes of the components started before
 * taken out of the next one's (used_bitmap), so components never share
 * a node.  cons_tres evaluates one component at a time and shows this
 * plugin that component's view only, so:
 *
 *  - an evaluation of a component with no plan part places the whole
 *    gang on that view (node_map), each node offering its free CPUs
 *    (avail_res_t.max_cpus, not capped by this component's tasks), and
 *    keeps every component's part (het_plan) once cons_tres accepted
 *    its own;
 *  - a later component takes its part (node_map narrowed to it);
 *    refused, a must request waits, any other gets Slurm's evaluation;
 *  - a component asked again (a new pass) places the gang afresh; a
 *    plan older than TGHET_PLAN_TTL serves nobody.
 *
 * An exclusive component's view holds idle nodes only; where another
 * component shares nodes, the partly busy nodes of the evaluated
 * component's partition are offered too, with their free CPUs and GPUs
 * (_het_offer_busy), so that component can go beside a running job.
 * Components with -w, --contiguous, more than TG_MAX_PODSETS components
 * or a component no longer pending are placed one by one, as other
 * jobs.  A heterogeneous gang does not preempt (slurmctld
 * preempts per component).
 */
/* the plan and the components: ../tghet.c (shared with 22.05) */
static tghet_plan_t het_plan;		/* under state_lock */

static void _het_plan_drop(void)
{
	tghet_plan_drop(&het_plan);
}

/* A copy of the plan's part for \p job_ptr, when the plan made for its
 * job has one it has not taken yet (state_lock held). */
static bitstr_t *_het_plan_part(job_record_t *job_ptr, time_t now,
				bool *must, char *domain, size_t dlen)
{
	bitstr_t *part = tghet_plan_part(&het_plan, job_ptr, now);

	if (!part)
		return NULL;
	*must = het_plan.must;
	snprintf(domain, dlen, "%s", het_plan.domain);
	return bit_copy(part);
}

/* Pod set \p ps's nodes of the decision (every pod set's: UINT_MAX;
 * state_lock held). */
static bitstr_t *_decision_part(const tg_decision *d, unsigned ps)
{
	return tghet_decision_part(d, ps, tg2slurm, ntg);
}

/* Keeps a heterogeneous gang's placement for its other components. */
static void _het_plan_keep(const decide_t *c)
{
	slurm_mutex_lock(&state_lock);
	tghet_plan_keep(&het_plan, c->het, c->nhet,
			c->het_ps, c->req.must, c->d, tg2slurm, ntg,
			time(NULL));
	slurm_mutex_unlock(&state_lock);
}

static void _het_offer_busy(topology_eval_t *te);

/*
 * The gang of a heterogeneous job's components on the evaluated one's
 * view (state_lock held): a pod set per component, one member a node
 * (max_per_node 1).  Exclusive components ask the largest candidate
 * node whole; where some component shares nodes, every member asks more
 * than half a node's pod slots, so no two share a node (slurmctld gives
 * the components disjoint nodes).
 */
static int _het_gang(topology_eval_t *te, decide_t *c)
{
	tg_shape sh[TG_MAX_PODSETS];
	uint32_t members[TG_MAX_PODSETS], total = 0, max_cpus = 0;
	bool excl[TG_MAX_PODSETS], all_excl = true, per_task;
	char name[32];
	unsigned k, ps;

	for (int i = 0; next_node_bitmap(te->node_map, &i); i++)
		max_cpus = MAX(max_cpus, node_record_table_ptr[i]->cpus_efctv);
	for (k = 0; k < c->nhet; k++) {
		job_record_t *jp = c->het[k];
		bool self = jp == te->job_ptr;

		if (tgj_shape(jp, self ? te->min_nodes : jp->details->min_nodes,
			      self ? te->max_nodes : jp->details->max_nodes,
			      max_cpus, &sh[k], &members[k], &excl[k],
			      &per_task)) {
			snprintf(c->why, sizeof(c->why), "heterogeneous "
				 "component JobId=%u: its CPUs need more than "
				 "%u nodes", jp->job_id,
				 jp->details->max_nodes);
			return SLURM_ERROR;
		}
		if (self)
			c->het_ps = k;
		/* cons_tres checks memory per node */
		sh[k].v[TG_RES_MEMORY] = 0;
		all_excl = all_excl && excl[k];
		total += members[k];
	}
	for (k = 0; k < c->nhet && !all_excl; k++) {
		if (excl[k])
			sh[k].v[TG_RES_CPU] = (int64_t) max_cpus * 1000;
		sh[k].v[TG_RES_PODS] = POD_SLOTS_SHARED / 2 + 1;
	}
	if (_model_set(te, all_excl ? 1 : POD_SLOTS_SHARED, true)) {
		snprintf(c->why, sizeof(c->why), "bad node resources");
		return SLURM_ERROR;
	}
	if (!all_excl)
		_het_offer_busy(te);
	snprintf(name, sizeof(name), "JobId=%u", te->job_ptr->het_job_id);
	if (!(c->g = tg_gang_create(name)))
		goto oom;
	for (k = 0; k < c->nhet; k++) {
		snprintf(name, sizeof(name), "JobId=%u", c->het[k]->job_id);
		if (tg_gang_add_podset(c->g, name, &sh[k], members[k], &ps) ||
		    tg_gang_podset_set_max_per_node(c->g, ps, 1))
			goto oom;
	}
	if (tgj_request(te->job_ptr, &site_conf, topo, c->g, total,
			plugin_type, &c->req, c->why, sizeof(c->why)))
		goto oom;
	tg_gang_set_can_preempt(c->g, false);
	return SLURM_SUCCESS;
oom:
	if (!c->why[0])
		snprintf(c->why, sizeof(c->why), "out of memory");
	return SLURM_ERROR;
}

/* The gang for the job and cons_tres's view (state_lock held). */
static int _gang(topology_eval_t *te, decide_t *c)
{
	job_record_t *job_ptr = te->job_ptr;
	uint32_t members = 0, max_cpus = 0;
	bool exclusive, per_task;
	unsigned nreq = 0;
	tg_shape sh;
	char name[32];

	if ((c->nhet = tghet_components(job_ptr, c->het)))
		return _het_gang(te, c);
	for (int i = 0; next_node_bitmap(te->node_map, &i); i++)
		if (te->avail_res_array[i] &&
		    te->avail_res_array[i]->avail_cpus > max_cpus)
			max_cpus = te->avail_res_array[i]->avail_cpus;
	if (tgj_shape(job_ptr, te->min_nodes, te->max_nodes, max_cpus, &sh,
		      &members, &exclusive, &per_task)) {
		snprintf(c->why, sizeof(c->why), "the job's CPUs need more "
			 "than %u nodes", te->max_nodes);
		return SLURM_ERROR;
	}
	/* cons_tres has checked memory per node (avail_res_array) */
	sh.v[TG_RES_MEMORY] = 0;
	if (_model_set(te, (per_task && !exclusive) ? POD_SLOTS_SHARED : 1,
		       false)) {
		snprintf(c->why, sizeof(c->why), "bad node resources");
		return SLURM_ERROR;
	}
	snprintf(name, sizeof(name), "JobId=%u", job_ptr->job_id);
	if (!(c->g = tg_gang_create(name)) ||
	    tgj_members(c->g, job_ptr, &sh, members, per_task, &nreq,
			c->why, sizeof(c->why)) ||
	    tgj_request(job_ptr, &site_conf, topo, c->g, members, plugin_type,
			&c->req, c->why, sizeof(c->why))) {
		if (!c->why[0])
			snprintf(c->why, sizeof(c->why), "out of memory");
		return SLURM_ERROR;
	}
	/* Victims are cons_tres's business around this call (it removes
	 * preemptee candidates and calls again): the model holds only what
	 * is available now. */
	tg_gang_set_can_preempt(c->g, false);
	return SLURM_SUCCESS;
}

/* The core's answer for the job (state_lock held). */
static dec_t _decide(topology_eval_t *te, decide_t *c)
{
	job_record_t *job_ptr = te->job_ptr;
	tg_errinfo ei;

	memset(&ei, 0, sizeof(ei));
	c->job_ptr = job_ptr;
	if (_gang(te, c)) {
		if (site_conf.fallback)
			return DEC_FALLBACK;
		goto cannot;
	}
	if (tg_gang_check(topo, c->g, &ei)) {
		/* the request itself is wrong (an unknown layer ...) */
		snprintf(c->why, sizeof(c->why), "topogang: %s", ei.msg);
		return DEC_WAIT;
	}
	if (tg_place(topo, c->g, &c->d, &ei)) {
		snprintf(c->why, sizeof(c->why), "%s",
			 ei.msg[0] ? ei.msg : "placement failed");
		if (site_conf.fallback)
			return DEC_FALLBACK;
		goto cannot;
	}
	if (tg_decision_status(c->d) != TG_STATUS_PLACED) {
		snprintf(c->why, sizeof(c->why), "topogang: %s",
			 tg_decision_message(c->d));
		/* a prefer-only request that does not fit at all: cons_tres
		 * has the last word (it fails too, or sees what the model
		 * does not) */
		return c->req.must ? DEC_WAIT : DEC_FALLBACK;
	}
	if (tgj_switches_wait(job_ptr, topo, c->d, time(NULL), c->why,
			      sizeof(c->why)))
		return DEC_WAIT;
	c->want = _decision_part(c->d, c->nhet ? c->het_ps : UINT_MAX);
	return DEC_PLACED;
cannot:
	snprintf(c->why + strlen(c->why), sizeof(c->why) - strlen(c->why),
		 " (Fallback=no: the job waits)");
	return DEC_WAIT;
}

/*
 * Slurm's own evaluation (cores, GRES, tasks) inside the core's nodes.
 * node_map and avail_core are put back when cons_tres refuses them, as
 * common_topo_choose_nodes does between its own retries; it changes the
 * cores of the nodes left in node_map only, so only those are saved.
 */
static int _choose_in(topology_eval_t *te, bitstr_t *want)
{
	bitstr_t *orig_map = bit_copy(te->node_map);
	uint32_t orig_max = te->max_nodes;
	bitstr_t **row;
	int *idx, n = 0, cnt, rc;

	bit_and(te->node_map, want);
	cnt = bit_set_count(te->node_map);
	te->max_nodes = MIN(te->max_nodes, cnt);
	row = xcalloc(cnt + 1, sizeof(*row));
	idx = xcalloc(cnt + 1, sizeof(*idx));
	for (int i = 0; next_node_bitmap(te->node_map, &i); i++)
		if (te->avail_core[i]) {
			idx[n] = i;
			row[n++] = bit_copy(te->avail_core[i]);
		}
	rc = common_topo_choose_nodes(te);
	if (rc != SLURM_SUCCESS) {
		bit_copybits(te->node_map, orig_map);
		for (int k = 0; k < n; k++) {
			bitstr_t **dst = &te->avail_core[idx[k]];

			if (!*dst) {	/* as core_array_or() */
				*dst = row[k];
				row[k] = NULL;
			} else {
				bit_or(*dst, row[k]);
			}
		}
		te->max_nodes = orig_max;
	}
	for (int k = 0; k < n; k++)
		FREE_NULL_BITMAP(row[k]);
	xfree(row);
	xfree(idx);
	FREE_NULL_BITMAP(orig_map);
	return rc;
}

/*
 * The job waits: the core's message becomes its pending reason.  Nodes
 * are still chosen by Slurm's default evaluation, and best_switch is
 * cleared, as topology/tree does for --switches (eval_nodes_tree.c line
 * 723): cons_tres then passes a test-only evaluation (sbatch's submit
 * check, will-run) and refuses every other one ("waiting for switches",
 * job_test.c line 1344), so the job pends, with the reason, instead of
 * being refused at submit when no empty cluster could hold it.
 */
static int _wait(topology_eval_t *te, const char *why)
{
	job_record_t *job_ptr = te->job_ptr;
	int rc;

	if (tgr_set(job_ptr, why))
		info("%s: %pJ waits: %s", plugin_type, job_ptr, why);
	rc = common_topo_choose_nodes(te);
	job_ptr->best_switch = false;
	return rc;
}

/*
 * The core placed the job: Slurm's evaluation inside its nodes; if
 * cons_tres refuses them, a job with a must layer waits and any other
 * gets Slurm's own evaluation on every node.  The node list is formatted
 * only for a log line.
 */
static int _placed(topology_eval_t *te, decide_t *c)
{
	job_record_t *job_ptr = te->job_ptr;
	char *nodes;
	int rc = _choose_in(te, c->want);

	if (rc == SLURM_SUCCESS) {
		/* the reason stays until the job starts (tgreason drops it
		 * then): the test-only evaluation of a waiting job, on all
		 * nodes, succeeds between the scheduler's refusals */
		if (c->nhet)
			_het_plan_keep(c);
		if (site_conf.debug && c->nhet) {
			bitstr_t *all;

			/* the gang's nodes, under the state lock (tg2slurm) */
			slurm_mutex_lock(&state_lock);
			all = _decision_part(c->d, UINT_MAX);
			slurm_mutex_unlock(&state_lock);

			nodes = bitmap2node_name(all);
			_log_decision("JobId=%u+%u(%u) gather=%s (%s) placed "
				      "on %s in %s (heterogeneous JobId=%u, "
				      "%u components as one gang)",
				      job_ptr->het_job_id,
				      job_ptr->het_job_offset, job_ptr->job_id,
				      c->req.txt, c->req.src, nodes,
				      tg_decision_domain(c->d),
				      job_ptr->het_job_id, c->nhet);
			xfree(nodes);
			FREE_NULL_BITMAP(all);
		} else if (site_conf.debug) {
			nodes = bitmap2node_name(c->want);
			_log_decision("JobId=%u gather=%s (%s) placed on %s "
				      "in %s", job_ptr->job_id, c->req.txt,
				      c->req.src, nodes,
				      tg_decision_domain(c->d));
			xfree(nodes);
		}
		return rc;
	}
	nodes = bitmap2node_name(c->want);
	snprintf(c->why, sizeof(c->why), "topogang: select/cons_tres refused "
		 "%s, the core's placement in %s", nodes,
		 tg_decision_domain(c->d));
	xfree(nodes);
	if (c->req.must)
		return _wait(te, c->why);
	if (_first_log(job_ptr->job_id))
		error("%s: %pJ: %s; Slurm's own evaluation chooses",
		      plugin_type, job_ptr, c->why);
	return common_topo_choose_nodes(te);
}

/*
 * A heterogeneous job's component: \p part, its part of the gang placed
 * for an earlier component (see het_plan), \p domain the gang's.
 */
static int _het_part(topology_eval_t *te, bitstr_t *part, bool must,
		     const char *domain)
{
	job_record_t *job_ptr = te->job_ptr;
	char why[TGS_ERRLEN + 128], *nodes = bitmap2node_name(part);
	int rc = _choose_in(te, part);

	if (rc == SLURM_SUCCESS) {
		_log_decision("JobId=%u+%u(%u) placed on %s in %s, its part of "
			      "heterogeneous JobId=%u", job_ptr->het_job_id,
			      job_ptr->het_job_offset, job_ptr->job_id,
			      nodes, domain, job_ptr->het_job_id);
		xfree(nodes);
		return rc;
	}
	snprintf(why, sizeof(why), "topogang: select/cons_tres refused %s, "
		 "this component's part of heterogeneous JobId=%u in %s",
		 nodes, job_ptr->het_job_id, domain);
	xfree(nodes);
	if (must)
		return _wait(te, why);
	if (_first_log(job_ptr->job_id))
		error("%s: %pJ: %s; Slurm's own evaluation chooses",
		      plugin_type, job_ptr, why);
	return common_topo_choose_nodes(te);
}

static void _known_note(job_record_t *jp);
static bitstr_t *_held_trim(topology_eval_t *te, char *why, size_t wlen);

/* The job's nodes: a heterogeneous component's part, or the core's
 * decision (called with state_lock held; releases it). */
static int _eval(topology_eval_t *te)
{
	job_record_t *job_ptr = te->job_ptr;
	char domain[sizeof(het_plan.domain)];
	bitstr_t *part;
	bool must = false;
	decide_t c;
	dec_t how;
	int rc;

	if ((part = _het_plan_part(job_ptr, time(NULL), &must, domain,
				   sizeof(domain)))) {
		slurm_mutex_unlock(&state_lock);
		job_ptr->best_switch = true;
		rc = _het_part(te, part, must, domain);
		FREE_NULL_BITMAP(part);
		return rc;
	}
	memset(&c, 0, sizeof(c));
	how = _decide(te, &c);
	slurm_mutex_unlock(&state_lock);

	job_ptr->best_switch = true;
	switch (how) {
	case DEC_WAIT:
		rc = _wait(te, c.why);
		break;
	case DEC_FALLBACK:
		if (_first_log(job_ptr->job_id))
			error("%s: %pJ: the core cannot place it (%s); Slurm's "
			      "own evaluation chooses", plugin_type, job_ptr,
			      c.why);
		rc = common_topo_choose_nodes(te);
		break;
	case DEC_PLACED:
	default:
		rc = _placed(te, &c);
		break;
	}
	FREE_NULL_BITMAP(c.want);
	tg_decision_free(c.d);
	tg_gang_destroy(c.g);
	return rc;
}

/*
 * The nodes held for other preemptors (ReserveTime) are left out of
 * node_map.  A job that does not fit in the rest is evaluated on the
 * whole node_map with best_switch cleared, as _wait() does: cons_tres
 * then passes a test-only evaluation (sbatch's submit check, which
 * ignores allocations and must not refuse the job for a hold of a few
 * seconds) and refuses every other one, so the job waits, with the
 * hold as its reason.
 */
extern int topology_p_eval_nodes(topology_eval_t *te)
{
	job_record_t *job_ptr = te->job_ptr;
	char why[TGS_ERRLEN] = "";
	bitstr_t *full;
	int rc;

	te->eval_nodes = NULL;		/* Slurm's default evaluation */
	te->trump_others = false;
	slurm_mutex_lock(&state_lock);
	_known_note(job_ptr);		/* for preempt/topogang's victims */
	if (!active) {
		slurm_mutex_unlock(&state_lock);
		return common_topo_choose_nodes(te);
	}
	full = _held_trim(te, why, sizeof(why));
	rc = _eval(te);
	if (rc != SLURM_SUCCESS && full) {
		bit_copybits(te->node_map, full);
		if (tgr_set(job_ptr, why))
			_log_decision("JobId=%u waits: %s", job_ptr->job_id,
				      why);
		rc = common_topo_choose_nodes(te);
		job_ptr->best_switch = false;
	}
	FREE_NULL_BITMAP(full);
	return rc;
}

/* ---- victims, for preempt/topogang ---- */

/*
 * The running jobs, for the victims' model.  preempt_p_preemptable() is
 * called from inside list_for_each(job_list) (src/interfaces/preempt.c
 * line 315, slurm_find_preemptable_jobs), which holds the list's write
 * lock (src/common/list.c line 599): walking job_list again there is
 * refused ("Resource deadlock avoided", fatal).  So the plugin keeps the
 * ids of the jobs that may run ("known"), and _vic_compute() fetches each
 * with find_job_record() (a hash lookup, no list lock):
 *
 *  - every job topology_p_eval_nodes() sees is noted: cons_tres evaluates
 *    every job it starts through it (job_test.c line 918), under the job
 *    lock, just before the job starts;
 *  - a thread of this plugin scans job_list under the job read lock
 *    (ids of running and suspended jobs) when slurmctld starts (running
 *    jobs recovered from the state files were never evaluated) and
 *    whenever the check below fails, never periodically.
 *
 * _vic_compute() checks the known jobs against Slurm's own view before
 * trusting them: slurmctld counts the jobs on each node (run_job_cnt and
 * sus_job_cnt of node_record_t, kept by make_node_alloc(), node_mgr.c
 * line 4520, under the node write lock its caller holds here).  Where a
 * node counts more jobs than the known running ones cover, a job started
 * that the plugin has not seen: the answer is "wait a pass" (no victim:
 * cons_tres preempts nothing and the job stays pending), the scan is
 * woken and, once it has run, a scheduling pass is queued
 * (queue_job_scheduler()).  A preemptor that finds the check failing for
 * MAX_STALE_PASSES computations in a row gets Slurm's own order instead,
 * logged once, naming the limit: nothing can make it wait for ever.
 */
#define MAX_RUN_IDS	(1u << 20)	/* job ids the plugin keeps */
#define MAX_STALE_PASSES 5	/* "wait a pass" answers per preemptor */

/*
 * Fault injection for the tests (tests/slurm/test-slurm2411-preempt-race),
 * read from slurmctld's environment at init(): TOPOGANG_FAULT=unseen-jobs
 * stops noting evaluated jobs (only scans know them), =no-scan also makes
 * every scan find nothing.  Unset, neither happens.
 */
#define FAULT_ENV	"TOPOGANG_FAULT"
static enum { FAULT_NONE, FAULT_UNSEEN, FAULT_NO_SCAN } fault = FAULT_NONE;

/* A set of job ids (open addressing, 0 is empty: Slurm has no job 0). */
typedef struct idset {
	uint32_t *slot;
	size_t cap, n;		/* cap: a power of two, or 0 */
} idset_t;

static idset_t known;			/* under state_lock */
static bool known_full = false;		/* MAX_RUN_IDS was reached */
static uint64_t scan_gen = 0;		/* scans done */
static bool scan_want = true;		/* a scan is asked for */
static bool scan_sched = false;		/* queue a pass after it */
static pthread_t scan_thread;
static bool scan_started = false, scan_stop = false;
static pthread_cond_t scan_cond = PTHREAD_COND_INITIALIZER;

static size_t _id_slot(const idset_t *s, uint32_t id)
{
	size_t i = ((size_t) id * 2654435761u) & (s->cap - 1);

	while (s->slot[i] && (s->slot[i] != id))
		i = (i + 1) & (s->cap - 1);
	return i;
}

static void _ids_free(idset_t *s)
{
	xfree(s->slot);
	s->cap = s->n = 0;
}

/* Adds \p id; false when the set holds MAX_RUN_IDS already. */
static bool _ids_put(idset_t *s, uint32_t id)
{
	size_t i;

	if (!id)
		return true;
	if ((s->n + 1) * 2 > s->cap) {
		idset_t g = { .cap = s->cap ? s->cap * 2 : 256 };

		if (s->n >= MAX_RUN_IDS)
			return false;
		g.slot = xcalloc(g.cap, sizeof(*g.slot));
		for (size_t k = 0; k < s->cap; k++)
			if (s->slot[k])
				g.slot[_id_slot(&g, s->slot[k])] = s->slot[k];
		g.n = s->n;
		xfree(s->slot);
		*s = g;
	}
	i = _id_slot(s, id);
	if (!s->slot[i]) {
		s->slot[i] = id;
		s->n++;
	}
	return true;
}

static bool _job_on_nodes(job_record_t *jp)
{
	return jp && (IS_JOB_RUNNING(jp) || IS_JOB_SUSPENDED(jp));
}

/* Keeps the ids of jobs that run or are suspended now (job lock held by
 * the caller: find_job_record()). */
static void _ids_prune(idset_t *s)
{
	idset_t k = { 0 };

	for (size_t i = 0; i < s->cap; i++)
		if (s->slot[i] && _job_on_nodes(find_job_record(s->slot[i])))
			(void) _ids_put(&k, s->slot[i]);
	_ids_free(s);
	*s = k;
}

/* topology_p_eval_nodes(): the job may start now (state_lock held, and
 * slurmctld's job lock). */
static void _known_note(job_record_t *jp)
{
	if (fault != FAULT_NONE)
		return;
	if (known.n && ((known.n + 1) * 2 > known.cap))
		_ids_prune(&known);	/* before the set grows */
	if (!_ids_put(&known, jp->job_id))
		known_full = true;
}

typedef struct scan {
	idset_t ids;
	bool full;
} scan_t;

static int _scan_one(void *x, void *arg)
{
	job_record_t *jp = x;
	scan_t *sc = arg;

	if (_job_on_nodes(jp) && !_ids_put(&sc->ids, jp->job_id))
		sc->full = true;
	return 0;
}

/* One scan: the known set becomes job_list's running jobs.  The set is
 * replaced under the job lock, so that no evaluation falls between the
 * walk and the swap. */
static void _scan(void)
{
	slurmctld_lock_t job_read_lock = { .job = READ_LOCK };
	scan_t sc = { { 0 } };
	bool sched;

	lock_slurmctld(job_read_lock);
	if (job_list && (fault != FAULT_NO_SCAN))
		/* slurmctld creates job_list after init() */
		(void) list_for_each_ro(job_list, _scan_one, &sc);
	slurm_mutex_lock(&state_lock);
	_ids_free(&known);
	known = sc.ids;
	known_full = sc.full;
	scan_gen++;
	sched = scan_sched;
	scan_sched = false;
	slurm_mutex_unlock(&state_lock);
	unlock_slurmctld(job_read_lock);
	if (sc.full)
		error("%s: more than %u running jobs (MAX_RUN_IDS); victims "
		      "by Slurm's preemption order", plugin_type, MAX_RUN_IDS);
	if (sched && queue_job_scheduler)
		queue_job_scheduler();	/* the waiting preemptors' pass */
}

static void *_scan_loop(void *arg)
{
	(void) arg;
	slurm_mutex_lock(&state_lock);
	while (!scan_stop) {
		if (!scan_want) {
			pthread_cond_wait(&scan_cond, &state_lock);
			continue;
		}
		scan_want = false;
		slurm_mutex_unlock(&state_lock);
		_scan();
		slurm_mutex_lock(&state_lock);
	}
	slurm_mutex_unlock(&state_lock);
	return NULL;
}

static void _fault_init(void)
{
	const char *f = getenv(FAULT_ENV);

	fault = FAULT_NONE;
	if (!f || !f[0])
		return;
	if (!strcmp(f, "unseen-jobs"))
		fault = FAULT_UNSEEN;
	else if (!strcmp(f, "no-scan"))
		fault = FAULT_NO_SCAN;
	else
		error("%s: %s=%s: unknown fault (unseen-jobs, no-scan); "
		      "ignored", plugin_type, FAULT_ENV, f);
	if (fault != FAULT_NONE)
		info("%s: fault injection %s=%s (tests only)", plugin_type,
		     FAULT_ENV, f);
}

/* Asks for a scan and a scheduling pass after it (state_lock held). */
static void _scan_wake(void)
{
	scan_want = true;
	scan_sched = true;
	pthread_cond_broadcast(&scan_cond);
}

#define PRIO_PENDING	(INT64_C(1) << 62)	/* above every running job */

typedef enum {
	VIC_ANY = -1,		/* no opinion: Slurm's rule decides */
	VIC_NONE = 0,		/* the job waits: no victim */
	VIC_SET = 1,		/* exactly the core's victims */
} vic_t;

/* The answer being computed (_vic_compute) for job_id. */
static struct {
	uint32_t job_id;
	vic_t how;
	uint32_t *ids;		/* victims' job ids, sorted */
	unsigned n;
	char last[512];		/* last decision logged for job_id */
} vc;

/*
 * The core's answers, kept while what they were computed from stays the
 * same.  preempt_p_preemptable() asks once per preemptee candidate, for
 * each preemptor, in every main and backfill pass (node_scheduler.c line
 * 1182, backfill.c lines 468-653); a computation builds a whole-node
 * model and places the preemptor, so it is done once per preemptor and
 * state, not once per call: an answer serves while the fingerprint of its
 * inputs (_vic_fp: the running jobs the plugin knows and their nodes, the
 * nodes' states and job counts, the scans done, the preemptor's request)
 * is unchanged.  A call whose preemptor and slurmctld's update stamps
 * (last_job_update, last_node_update) match the previous call's skips
 * the fingerprint too.  MAX_VIC_CACHE preemptors are kept, by job id
 * modulo MAX_VIC_CACHE; a preemptor whose slot another took computes
 * again.
 */
#define MAX_VIC_CACHE	256	/* preemptors whose answer is kept */

typedef struct vic_entry {
	uint32_t job_id;	/* 0: empty */
	uint64_t fp;		/* _vic_fp() of the inputs */
	vic_t how;
	uint32_t *ids;		/* victims' job ids, sorted */
	unsigned n;
} vic_entry_t;

static vic_entry_t vcache[MAX_VIC_CACHE];
static struct {
	uint32_t job_id;
	time_t job_upd, node_upd;
	uint64_t gen;
	vic_entry_t *e;
} vlast;			/* the previous call's stamps */
static uint64_t vic_calls = 0, vic_runs = 0;

static void _vcache_drop(void)
{
	for (unsigned i = 0; i < MAX_VIC_CACHE; i++)
		xfree(vcache[i].ids);
	memset(vcache, 0, sizeof(vcache));
	memset(&vlast, 0, sizeof(vlast));
}

static int _u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;

	return (x > y) - (x < y);
}

typedef struct vjobs {
	tg_topology *t;
	job_record_t *preemptor;
	bool (*base)(job_record_t *, job_record_t *);
} vjobs_t;

/* Each running job, preemptible when Slurm's rule says so. */
static int _vic_add_job(void *x, void *arg)
{
	job_record_t *jp = x;
	vjobs_t *v = arg;
	uint16_t mode;
	bool cand;

	if (!_job_on_nodes(jp) || jp == v->preemptor)
		return 0;
	mode = slurm_job_preempt_mode(jp);
	cand = jp->part_ptr && v->base(jp, v->preemptor) &&
	       (mode == PREEMPT_MODE_REQUEUE || mode == PREEMPT_MODE_CANCEL);
	(void) tgj_add_job(v->t, jp, cand);
	return 0;
}

/* Whole nodes: their capacity, eligible when in the preemptor's
 * partition and up. */
static void _vic_nodes(tg_topology *t, job_record_t *preemptor, bool excl)
{
	bitstr_t *part = preemptor->part_ptr ?
			 preemptor->part_ptr->node_bitmap : NULL;

	for (unsigned i = 0; i < tg_topology_nnodes(t); i++) {
		node_record_t *np = find_node_record(
			(char *) tg_topology_node_name(t, i));
		bool ok = np && part && bit_test(part, np->index) &&
			  !IS_NODE_DOWN(np) && !IS_NODE_DRAIN(np) &&
			  !IS_NODE_NO_RESPOND(np);

		tg_topology_node_set_unschedulable(t, i, !ok);
		if (!np)
			continue;
		(void) tg_topology_node_set_resource(t, i, TG_RES_CPU,
				(int64_t) np->cpus_efctv * 1000);
		(void) tg_topology_node_set_resource(t, i, TG_RES_MEMORY,
				(int64_t) (np->real_memory -
					   MIN(np->mem_spec_limit,
					       np->real_memory)) << 20);
		(void) tg_topology_node_set_resource(t, i, TG_RES_PODS,
				excl ? 1 : POD_SLOTS_SHARED);
	}
}

/* The gang of a pending preemptor on whole nodes (state_lock held). */
static tg_gang *_vic_gang(tg_topology *t, job_record_t *jp, bool *excl,
			  tgj_req *req, char *why, size_t wlen)
{
	uint32_t members = 0, max_cpus = 0;
	unsigned nreq = 0;
	bool per_task;
	tg_shape sh;
	char name[32];
	tg_gang *g;

	for (int i = 0; i < node_record_count; i++)
		if (node_record_table_ptr[i] &&
		    node_record_table_ptr[i]->cpus_efctv > max_cpus)
			max_cpus = node_record_table_ptr[i]->cpus_efctv;
	if (tgj_shape(jp, jp->details->min_nodes, jp->details->max_nodes,
		      max_cpus, &sh, &members, excl, &per_task)) {
		snprintf(why, wlen, "the job's CPUs need more nodes");
		return NULL;
	}
	snprintf(name, sizeof(name), "JobId=%u", jp->job_id);
	if (!(g = tg_gang_create(name)) ||
	    tgj_members(g, jp, &sh, members, per_task, &nreq, why, wlen) ||
	    tgj_request(jp, &site_conf, t, g, members, plugin_type, req, why,
			wlen)) {
		tg_gang_destroy(g);
		return NULL;
	}
	tg_gang_set_priority(g, PRIO_PENDING);
	tg_gang_set_can_preempt(g, true);
	return g;
}

/* Logs the core's victims for the job when they changed. */
static void _vic_log(job_record_t *jp, const tg_topology *t,
		     const tg_decision *d, const tgj_req *req)
{
	char txt[512] = "", *nodes;
	hostlist_t *hl = hostlist_create(NULL);
	size_t off = 0;

	for (unsigned i = 0; i < tg_decision_nvictims(d) &&
			     off < sizeof(txt); i++) {
		const tg_victim *v = tg_decision_victim(d, i);

		off += snprintf(txt + off, sizeof(txt) - off, "%s%s(%s)",
				off ? "," : "", v->gang,
				tg_topology_node_name(t, v->node));
	}
	for (unsigned i = 0; i < tg_decision_nplacements(d); i++)
		hostlist_push_host(hl, tg_topology_node_name(t,
				   tg_decision_placement(d, i)->node));
	hostlist_uniq(hl);
	nodes = hostlist_ranged_string_xmalloc(hl);
	hostlist_destroy(hl);
	if (vc.job_id != jp->job_id || strcmp(vc.last, txt))
		_log_decision("JobId=%u gather=%s (%s) preempting %s for %s "
			      "in %s", jp->job_id, req->txt, req->src, txt,
			      nodes, tg_decision_domain(d));
	vc.job_id = jp->job_id;
	snprintf(vc.last, sizeof(vc.last), "%s", txt);
	xfree(nodes);
}

/* The preemptor whose victims wait for the scan (_vic_stale()). */
static struct {
	uint32_t job_id;
	unsigned passes;
} stale;

/*
 * The known running jobs into the victims' model \p v, the others
 * dropped from the set; true when they account for every job slurmctld
 * counts on each node (state_lock and slurmctld's job and node locks
 * held: preempt_p_preemptable()'s callers hold them).
 */
static bool _vic_jobs(vjobs_t *v)
{
	uint32_t *cnt = xcalloc(node_record_count ? node_record_count : 1,
				sizeof(*cnt));
	idset_t run = { 0 };
	node_record_t *np;
	bool whole = true;

	for (size_t i = 0; i < known.cap; i++) {
		job_record_t *jp = known.slot[i] ?
				   find_job_record(known.slot[i]) : NULL;

		if (!_job_on_nodes(jp))
			continue;
		(void) _ids_put(&run, jp->job_id);
		(void) _vic_add_job(jp, v);
		for (int k = 0; jp->node_bitmap &&
			     next_node_bitmap(jp->node_bitmap, &k); k++)
			cnt[k]++;
	}
	_ids_free(&known);
	known = run;
	for (int k = 0; (np = next_node(&k)); k++)
		if (np->run_job_cnt + np->sus_job_cnt > cnt[k]) {
			whole = false;
			break;
		}
	xfree(cnt);
	return whole;
}

/*
 * For a heterogeneous gang whose components share nodes: the nodes of
 * the evaluated component's partition that run jobs and are not in its
 * node_map (an exclusive component's view holds idle nodes only) join
 * the model with their free CPUs (cpus_efctv less the CPUs of the known
 * running jobs there: job_resrcs->cpus) and free GPUs, so a shared
 * component can go beside a running job, as on 22.05.  A node whose jobs
 * the known set does not all cover, or that is down, drained or not
 * responding, is not offered; cons_tres checks the component's own
 * evaluation on its part (state_lock held, and the job lock).
 */
static void _het_offer_busy(topology_eval_t *te)
{
	bitstr_t *part = te->job_ptr->part_ptr ?
			 te->job_ptr->part_ptr->node_bitmap : NULL;
	uint32_t *used, *njobs;

	if (!part)
		return;
	used = xcalloc(node_record_count + 1, sizeof(*used));
	njobs = xcalloc(node_record_count + 1, sizeof(*njobs));
	for (size_t i = 0; i < known.cap; i++) {
		job_record_t *jp = known.slot[i] ?
				   find_job_record(known.slot[i]) : NULL;
		job_resources_t *jr = jp ? jp->job_resrcs : NULL;
		int off = 0;

		if (!_job_on_nodes(jp) || !jr || !jr->node_bitmap || !jr->cpus)
			continue;
		for (int k = 0; next_node_bitmap(jr->node_bitmap, &k);
		     k++, off++) {
			if (k >= node_record_count || off >= jr->nhosts)
				break;
			used[k] += jr->cpus[off];
			njobs[k]++;
		}
	}
	for (unsigned i = 0; i < ntg; i++) {
		uint32_t x = tg2slurm[i];
		node_record_t *np = x != NO_VAL ? node_record_table_ptr[x] :
				    NULL;
		nodeval_t v = { .pods = POD_SLOTS_SHARED, .in = true };

		if (!np || bit_test(te->node_map, x) || !bit_test(part, x) ||
		    !np->run_job_cnt || np->sus_job_cnt ||
		    njobs[x] < np->run_job_cnt || IS_NODE_DOWN(np) ||
		    IS_NODE_DRAIN(np) || IS_NODE_NO_RESPOND(np) ||
		    IS_NODE_COMPLETING(np) || used[x] >= np->cpus_efctv)
			continue;
		v.cpu = (int64_t) (np->cpus_efctv - used[x]) * 1000;
		v.gpu = _free_gpus(np);
		(void) _model_node(i, &v);
	}
	xfree(used);
	xfree(njobs);
}

/*
 * A job runs that the plugin has not seen: "wait a pass" (VIC_NONE) and
 * wake the scan, or, after MAX_STALE_PASSES for \p jp, Slurm's order
 * (VIC_ANY), logged once (state_lock held).
 */
static vic_t _vic_stale(job_record_t *jp)
{
	if (stale.job_id != jp->job_id) {
		stale.job_id = jp->job_id;
		stale.passes = 0;
	}
	if (++stale.passes <= MAX_STALE_PASSES) {
		_scan_wake();
		_log_decision("JobId=%u: a running job is not in the model "
			      "yet; no victims this pass (%u of %u), "
			      "rescanning the running jobs", jp->job_id,
			      stale.passes, MAX_STALE_PASSES);
		return VIC_NONE;
	}
	if (stale.passes == MAX_STALE_PASSES + 1)
		error("%s: %pJ: slurmctld counts jobs on nodes that the "
		      "running-job scan does not find, after %u passes "
		      "(MAX_STALE_PASSES); Slurm's preemption order stands",
		      plugin_type, jp, MAX_STALE_PASSES);
	return VIC_ANY;
}

/*
 * ReserveTime (topogang.conf): the nodes the core chose for a preemptor
 * stay held for it while its victims leave, so that no other job takes
 * the nodes freed for it.  The holds are select/topogang's (22.05), one
 * implementation: ../tghold.c.  A hold is proposed when the core picks
 * victims (_vic_set: the preemptor's nodes) and taken once slurmctld
 * commits the preemption -- select_nodes() sets the preemptor's
 * details->preempt_start_time when it preempts (node_scheduler.c line
 * 2829) -- until ReserveTime seconds after that, or until the preemptor
 * no longer waits.  Every other job's evaluation (run-now, will-run,
 * backfill, test-only) sees node_map without the held nodes
 * (_held_trim).  Taken holds are saved in StateSaveLocation whenever they
 * change and read back at slurmctld's start (topology_p_build_config),
 * so a restart (24.11's `scontrol reconfigure` is one) keeps them.
 * Unlike on 22.05, a proposal is not dropped when the next job is
 * tested: the core's answer is cached while nothing it reads changes
 * (_vic_answer), so a later selection may commit on it without a new
 * proposal.  A proposal lasts until slurmctld commits it, the core
 * answers for that job again (_vic_compute), or the job no longer waits.
 */

/*
 * Takes the nodes held for other preemptors out of \p te's node_map
 * (state_lock held).  Returns the node_map as it was (caller frees), with
 * \p why naming the holds, or NULL when no hold touched it.
 */
static bitstr_t *_held_trim(topology_eval_t *te, char *why, size_t wlen)
{
	bitstr_t *full = NULL;
	size_t off = 0;
	char *nodes;

	/* takes the holds slurmctld committed, drops the ended ones */
	tgh_update(NULL, time(NULL));
	for (unsigned i = 0; i < tgh_count(); i++) {
		tgh_hold_t *h = tgh_at(i);

		if (!h || h->job_id == te->job_ptr->job_id ||
		    !bit_overlap_any(full ? full : te->node_map, h->nodes))
			continue;
		if (!full)
			full = bit_copy(te->node_map);
		bit_and_not(te->node_map, h->nodes);
		nodes = bitmap2node_name(h->nodes);
		if (off < wlen)
			off += snprintf(why + off, wlen - off, "%s%s held for "
					"JobId=%u, whose victims are leaving "
					"(ReserveTime=%u)", off ? "; " :
					"topogang: ", nodes, h->job_id,
					site_conf.reserve_time);
		_log_decision("JobId=%u: %s held for JobId=%u, whose victims "
			      "are leaving (ReserveTime=%u)",
			      te->job_ptr->job_id, nodes, h->job_id,
			      site_conf.reserve_time);
		xfree(nodes);
	}
	return full;
}

/* The core's victims from its decision \p d into vc. */
static void _vic_set(job_record_t *jp, const tg_topology *t,
		     const tg_decision *d, const tgj_req *req)
{
	bitstr_t *want = bit_alloc(node_record_count);

	vc.ids = xcalloc(tg_decision_nvictims(d) + 1, sizeof(*vc.ids));
	for (unsigned i = 0; i < tg_decision_nvictims(d); i++) {
		const char *gn = tg_decision_victim(d, i)->gang;
		unsigned long id;

		if (!gn || strncmp(gn, "JobId=", 6))
			continue;
		id = strtoul(gn + 6, NULL, 10);
		if (!vc.n || vc.ids[vc.n - 1] != id)
			vc.ids[vc.n++] = (uint32_t) id;
	}
	qsort(vc.ids, vc.n, sizeof(*vc.ids), _u32_cmp);
	vc.how = VIC_SET;
	_vic_log(jp, t, d, req);
	for (unsigned i = 0; i < tg_decision_nplacements(d); i++) {
		node_record_t *np = find_node_record((char *) tg_topology_node_name(
			t, tg_decision_placement(d, i)->node));

		if (np)
			bit_set(want, np->index);
	}
	/* a hold slurmctld already committed stays as it is (after a
	 * restart the core is asked again while the victims leave) */
	if (site_conf.reserve_time && !tgh_find(jp->job_id))
		tgh_propose(jp, want, NULL, 0, site_conf.reserve_time);
	FREE_NULL_BITMAP(want);
}

/* The core's victims for \p jp on the live cluster (state_lock held). */
static void _vic_compute(job_record_t *jp,
			 bool (*base)(job_record_t *, job_record_t *))
{
	char why[TGS_ERRLEN + 128] = "";
	tg_decision *d = NULL;
	tg_gang *g = NULL;
	tg_errinfo ei;
	tgj_req req;
	bool excl = false;
	vjobs_t v;
	tg_topology *t = _topo_build(topo_file, true, why, sizeof(why));

	memset(&ei, 0, sizeof(ei));
	memset(&req, 0, sizeof(req));
	xfree(vc.ids);
	vc.n = 0;
	vc.how = VIC_ANY;
	/* the holds slurmctld committed are taken; jp's own uncommitted
	 * proposal gives way to this answer (_vic_set proposes again) */
	tgh_update(NULL, time(NULL));
	if (!tgh_find(jp->job_id))
		tgh_drop(jp->job_id);
	if (!t || !(g = _vic_gang(t, jp, &excl, &req, why, sizeof(why))))
		goto out;
	_vic_nodes(t, jp, excl);
	v.t = t;
	v.preemptor = jp;
	v.base = base;
	if (known_full) {
		snprintf(why, sizeof(why), "more than %u running jobs "
			 "(MAX_RUN_IDS)", MAX_RUN_IDS);
		goto out;
	}
	if (!_vic_jobs(&v)) {
		vc.how = _vic_stale(jp);
		goto out;
	}
	stale.job_id = 0;
	if (tg_gang_check(t, g, &ei) || tg_place(t, g, &d, &ei))
		goto out;
	switch (tg_decision_status(d)) {
	case TG_STATUS_PREEMPTING:
		_vic_set(jp, t, d, &req);
		break;
	case TG_STATUS_UNSCHEDULABLE:
		/* a must request no preemption can satisfy waits */
		vc.how = req.must ? VIC_NONE : VIC_ANY;
		break;
	default:
		break;		/* it fits without preemption */
	}
out:
	if (vc.how == VIC_ANY && why[0] && _first_log(jp->job_id))
		error("%s: %pJ: no victims from the core (%s); Slurm's "
		      "preemption order stands", plugin_type, jp, why);
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);
}

/* splitmix64's finaliser: a well-mixed 64-bit hash of \p x. */
static uint64_t _mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/*
 * The fingerprint of what _vic_compute() reads for \p jp: each running
 * job the plugin knows (id, state, start, nodes, partition, preemption
 * mode), each node (state, job counts), the scans done and whether the
 * known set is full, and the preemptor's request (partition, nodes,
 * CPUs, sharing, --switches and whether its wait is over, the comment
 * that carries mixed mode's request).  Jobs are summed, so
 * the known set's slot order does not matter (state_lock held, and
 * slurmctld's job and node locks).
 */
static uint64_t _vic_fp(job_record_t *jp)
{
	uint64_t h = _mix(scan_gen) ^ _mix(known_full);
	job_details_t *dp = jp->details;
	node_record_t *np;

	for (size_t i = 0; i < known.cap; i++) {
		job_record_t *r = known.slot[i] ?
				  find_job_record(known.slot[i]) : NULL;
		uint64_t x;

		if (!_job_on_nodes(r))
			continue;
		x = _mix(((uint64_t) r->job_id << 32) ^ r->job_state);
		x = _mix(x ^ (uint64_t) r->start_time);
		x = _mix(x ^ (uint64_t) (uintptr_t) r->part_ptr);
		x = _mix(x ^ slurm_job_preempt_mode(r));
		for (int k = 0; r->node_bitmap &&
			     next_node_bitmap(r->node_bitmap, &k); k++)
			x = _mix(x ^ (uint64_t) k);
		h += x;
	}
	for (int k = 0; (np = next_node(&k)); k++)
		h = _mix(h ^ ((uint64_t) np->node_state << 32) ^
			 ((uint64_t) np->run_job_cnt << 16) ^
			 np->sus_job_cnt ^ ((uint64_t) k << 48));
	h = _mix(h ^ ((uint64_t) jp->job_id << 32) ^
		 (uint64_t) (uintptr_t) jp->part_ptr);
	/* --switches=1 asks a leaf switch until its wait is over */
	h = _mix(h ^ jp->req_switch ^ ((uint64_t) (jp->wait4switch_start &&
		 (time(NULL) - jp->wait4switch_start >=
		  (time_t) jp->wait4switch)) << 32));
	for (const char *p = jp->comment; p && *p; p++)
		h = _mix(h ^ (unsigned char) *p);
	if (dp)
		h = _mix(h ^ ((uint64_t) dp->min_nodes << 32) ^
			 dp->max_nodes ^ ((uint64_t) dp->min_cpus << 16) ^
			 ((uint64_t) dp->share_res << 40) ^
			 ((uint64_t) dp->whole_node << 48));
	return h;
}

/*
 * The answer for \p jp: kept (see vcache), or computed and kept (state
 * lock held, and slurmctld's job and node locks).
 */
static const vic_entry_t *_vic_answer(job_record_t *jp,
				      bool (*base)(job_record_t *,
						   job_record_t *))
{
	vic_entry_t *e = &vcache[jp->job_id % MAX_VIC_CACHE];
	uint64_t fp;

	vic_calls++;
	if (vlast.e && vlast.job_id == jp->job_id &&
	    vlast.job_upd == last_job_update &&
	    vlast.node_upd == last_node_update && vlast.gen == scan_gen &&
	    vlast.e->job_id == jp->job_id)
		return vlast.e;
	fp = _vic_fp(jp);
	if (e->job_id != jp->job_id || e->fp != fp) {
		vic_runs++;
		_vic_compute(jp, base);
		xfree(e->ids);
		e->job_id = jp->job_id;
		e->fp = fp;
		e->how = vc.how;
		e->ids = vc.ids;
		e->n = vc.n;
		vc.ids = NULL;
		vc.n = 0;
		_log_decision("JobId=%u: victims computed (%"PRIu64
			      " computations for %"PRIu64" calls)",
			      jp->job_id, vic_runs, vic_calls);
	}
	vlast.job_id = jp->job_id;
	vlast.job_upd = last_job_update;
	vlast.node_upd = last_node_update;
	vlast.gen = scan_gen;
	vlast.e = e;
	return e;
}

/*
 * Called by preempt/topogang's preempt_p_preemptable() once Slurm's own
 * rule (\p base) admits \p preemptee: whether the core picks it as a
 * victim for \p preemptor.  1 yes, 0 no, -1 no opinion (topology/topogang
 * not active, the core cannot decide, or the job fits without
 * preemption): Slurm's rule stands.  Exported (topology_p_ prefix, so
 * the plugin's export list keeps it) for preempt_topogang.so, which finds
 * it with dlsym.
 */
extern int topology_p_topogang_victim(job_record_t *preemptor,
				      job_record_t *preemptee,
				      bool (*base)(job_record_t *,
						   job_record_t *))
{
	const vic_entry_t *e;
	int r = VIC_ANY;

	slurm_mutex_lock(&state_lock);
	if (!active || !topo_file[0] || !scan_started)
		goto out;
	e = _vic_answer(preemptor, base);
	if (e->how == VIC_SET)
		r = bsearch(&preemptee->job_id, e->ids, e->n,
			    sizeof(*e->ids), _u32_cmp) ? 1 : 0;
	else
		r = e->how;
out:
	slurm_mutex_unlock(&state_lock);
	return r;
}

/* ---- the rest of the topology interface ---- */

extern int init(void)
{
	if (!running_in_slurmctld()) {
		/* scontrol, srun, slurmd, slurmstepd: pack/print only */
		debug("%s loaded", plugin_type);
		return SLURM_SUCCESS;
	}
	tgj_gpu_plugin_id = gres_build_id("gpu");
	tgs_conf_init(&site_conf);
	_fault_init();
	tgr_start(plugin_type);
	tgh_init(plugin_type);
	scan_stop = false;
	if (pthread_create(&scan_thread, NULL, _scan_loop, NULL))
		error("%s: cannot start the running-job scan: %m; victims by "
		      "Slurm's preemption order", plugin_type);
	else
		scan_started = true;
	info("%s loaded; SelectType=%s places inside the core's nodes",
	     plugin_type, slurm_conf.select_type);
	return SLURM_SUCCESS;
}

extern int fini(void)
{
	if (scan_started) {
		slurm_mutex_lock(&state_lock);
		scan_stop = true;
		pthread_cond_broadcast(&scan_cond);
		slurm_mutex_unlock(&state_lock);
		pthread_join(scan_thread, NULL);
		scan_started = false;
	}
	tgr_stop();
	slurm_mutex_lock(&state_lock);
	_free_tables(topo, tg2slurm, dom_nodes, ndom);
	topo = NULL;
	tg2slurm = NULL;
	dom_nodes = NULL;
	ndom = ntg = 0;
	xfree(mval);
	tgs_conf_free(&site_conf);
	xfree(vc.ids);
	memset(&vc, 0, sizeof(vc));
	_vcache_drop();
	vic_calls = vic_runs = 0;
	tgh_free();
	_het_plan_drop();
	_ids_free(&known);
	known_full = false;
	scan_want = true;
	scan_sched = false;
	memset(&stale, 0, sizeof(stale));
	active = false;
	slurm_mutex_unlock(&state_lock);
	return SLURM_SUCCESS;
}

/* slurmctld's start (24.11's reconfigure is a start too): the node table
 * is read, the files are loaded, the holds of preemptors saved before
 * the restart are read back (tghold.h; node names, so the table must be
 * built). */
extern int topology_p_build_config(void)
{
	if (!running_in_slurmctld() || !node_record_count)
		return SLURM_SUCCESS;
	(void) _load();
	slurm_mutex_lock(&state_lock);
	(void) tgh_restore(slurm_conf.state_save_location);
	slurm_mutex_unlock(&state_lock);
	/* never fatal: without a topology Slurm's evaluation places */
	return SLURM_SUCCESS;
}

/* The leaf domains (lowest layer) the mask touches, whole. */
extern int topology_p_whole_topo(bitstr_t *node_mask)
{
	unsigned leaf;

	slurm_mutex_lock(&state_lock);
	if (topo && tg_topology_nlayers(topo)) {
		leaf = tg_topology_nlayers(topo) - 1;
		for (unsigned d = 0; d < ndom; d++)
			if (tg_topology_domain_layer(topo, d) == leaf &&
			    bit_overlap_any(dom_nodes[d], node_mask))
				bit_or(node_mask, dom_nodes[d]);
	}
	slurm_mutex_unlock(&state_lock);
	return SLURM_SUCCESS;
}

/* A domain's nodes by its name (the switch or block name) or full path;
 * valid until the next build_config (Slurm does not free it). */
extern bitstr_t *topology_p_get_bitmap(char *name)
{
	bitstr_t *b = NULL;

	slurm_mutex_lock(&state_lock);
	for (unsigned d = 0; topo && name && name[0] && d < ndom; d++)
		if (!strcmp(tg_topology_domain_value(topo, d), name) ||
		    !strcmp(tg_topology_domain_path(topo, d), name)) {
			b = dom_nodes[d];
			break;
		}
	slurm_mutex_unlock(&state_lock);
	return b;
}

/* Node ranks are not used: the core orders domains itself. */
extern bool topology_p_generate_node_ranking(void)
{
	return false;
}

extern int topology_p_get_node_addr(char *node_name, char **paddr,
				    char **ppattern)
{
	return common_topo_get_node_addr(node_name, paddr, ppattern);
}

extern int topology_p_split_hostlist(hostlist_t *hl, hostlist_t ***sp_hl,
				     int *count, uint16_t tree_width)
{
	return common_topo_split_hostlist_treewidth(hl, sp_hl, count,
						    tree_width);
}

/* What `scontrol show topology` shows: one record per domain, as
 * topology/tree prints switches. */
typedef struct topoinfo_rec {
	uint16_t level;		/* 0 = leaf */
	char *name;		/* the domain's value (switch/block name) */
	char *nodes;		/* hostlist */
	char *children;		/* child domains, comma separated */
} topoinfo_rec_t;

typedef struct topoinfo {
	uint32_t n;
	topoinfo_rec_t *rec;
} topoinfo_t;

extern int topology_p_topology_free(void *ptr)
{
	topoinfo_t *ti = ptr;

	if (!ti)
		return SLURM_SUCCESS;
	for (uint32_t i = 0; i < ti->n && ti->rec; i++) {
		xfree(ti->rec[i].name);
		xfree(ti->rec[i].nodes);
		xfree(ti->rec[i].children);
	}
	xfree(ti->rec);
	xfree(ti);
	return SLURM_SUCCESS;
}

/* The records of the loaded topology (state_lock held). */
static topoinfo_t *_topoinfo(void)
{
	topoinfo_t *ti = xmalloc(sizeof(*ti));
	unsigned nl = topo ? tg_topology_nlayers(topo) : 0;

	ti->rec = xcalloc(_nnamed() + 1, sizeof(*ti->rec));
	for (unsigned d = 0; topo && d < ndom; d++) {
		topoinfo_rec_t *r;

		if (!_named(d))
			continue;
		r = &ti->rec[ti->n++];

		r->level = nl - 1 - tg_topology_domain_layer(topo, d);
		r->name = xstrdup(tg_topology_domain_value(topo, d));
		r->nodes = bitmap2node_name(dom_nodes[d]);
		for (unsigned k = 0; k < ndom; k++)
			if (tg_topology_domain_parent(topo, k) == d &&
			    _named(k))
				xstrfmtcat(r->children, "%s%s",
					   r->children ? "," : "",
					   tg_topology_domain_value(topo, k));
	}
	return ti;
}

extern int topology_p_get(topology_data_t type, void *data)
{
	switch (type) {
	case TOPO_DATA_TOPOLOGY_PTR: {
		dynamic_plugin_data_t **pp = data;

		*pp = xmalloc(sizeof(dynamic_plugin_data_t));
		slurm_mutex_lock(&state_lock);
		(*pp)->data = _topoinfo();
		slurm_mutex_unlock(&state_lock);
		(*pp)->plugin_id = plugin_id;
		return SLURM_SUCCESS;
	}
	case TOPO_DATA_REC_CNT:
		/* node_scheduler.c: more than one record and node sets of
		 * equal weight go to one job test, as with topology/tree */
		slurm_mutex_lock(&state_lock);
		*(int *) data = (int) _nnamed();
		slurm_mutex_unlock(&state_lock);
		return SLURM_SUCCESS;
	case TOPO_DATA_EXCLUSIVE_TOPO:
		*(int *) data = 0;
		return SLURM_SUCCESS;
	default:
		error("%s: unsupported topology_p_get type %d", plugin_type,
		      type);
		return SLURM_ERROR;
	}
}

extern int topology_p_topology_pack(void *ptr, buf_t *buffer,
				    uint16_t protocol_version)
{
	topoinfo_t *ti = ptr;

	pack32(ti->n, buffer);
	for (uint32_t i = 0; i < ti->n; i++) {
		pack16(ti->rec[i].level, buffer);
		packstr(ti->rec[i].name, buffer);
		packstr(ti->rec[i].nodes, buffer);
		packstr(ti->rec[i].children, buffer);
	}
	return SLURM_SUCCESS;
}

/* Bounds what a reply may make a client allocate. */
#define MAX_TOPO_RECORDS	(1u << 20)

extern int topology_p_topology_unpack(void **pp, buf_t *buffer,
				      uint16_t protocol_version)
{
	topoinfo_t *ti = xmalloc(sizeof(*ti));

	*pp = ti;
	safe_unpack32(&ti->n, buffer);
	if (ti->n > MAX_TOPO_RECORDS) {
		error("%s: a topology of %u records (more than %u)",
		      plugin_type, ti->n, MAX_TOPO_RECORDS);
		ti->n = 0;
		goto unpack_error;
	}
	ti->rec = xcalloc(ti->n ? ti->n : 1, sizeof(*ti->rec));
	for (uint32_t i = 0; i < ti->n; i++) {
		safe_unpack16(&ti->rec[i].level, buffer);
		safe_unpackstr(&ti->rec[i].name, buffer);
		safe_unpackstr(&ti->rec[i].nodes, buffer);
		safe_unpackstr(&ti->rec[i].children, buffer);
	}
	return SLURM_SUCCESS;
unpack_error:
	topology_p_topology_free(ti);
	*pp = NULL;
	return SLURM_ERROR;
}

static void _print_rec(const topoinfo_rec_t *r, char **out)
{
	xstrfmtcat(*out, "SwitchName=%s Level=%u", r->name, r->level);
	if (r->nodes && r->nodes[0])
		xstrfmtcat(*out, " Nodes=%s", r->nodes);
	if (r->children)
		xstrfmtcat(*out, " Switches=%s", r->children);
	xstrcat(*out, "\n");
}

/* Every record; with \p name, that switch, or the switches holding
 * those nodes. */
extern int topology_p_topology_print(void *ptr, char *name, char **out)
{
	topoinfo_t *ti = ptr;
	uint32_t i;

	*out = NULL;
	for (i = 0; name && name[0] && i < ti->n; i++)
		if (!xstrcmp(ti->rec[i].name, name)) {
			_print_rec(&ti->rec[i], out);
			return SLURM_SUCCESS;
		}
	for (i = 0; i < ti->n; i++) {
		if (name && name[0]) {
			hostset_t *hs = ti->rec[i].nodes ?
				hostset_create(ti->rec[i].nodes) : NULL;
			int in = hs && hostset_within(hs, name);

			if (hs)
				hostset_destroy(hs);
			if (!in)
				continue;
		}
		_print_rec(&ti->rec[i], out);
	}
	if (!*out)
		error("Topology information contains no switch or node "
		      "named %s", name ? name : "");
	return SLURM_SUCCESS;
}

/*
 * Backfill's fragmentation score of the available nodes: how many of
 * them sit in leaf domains that are only partly available (nodes a
 * whole-leaf gang cannot use).  Lower is better.
 */
extern uint32_t topology_p_get_fragmentation(bitstr_t *node_mask)
{
	uint32_t frag = 0;
	unsigned leaf;

	slurm_mutex_lock(&state_lock);
	if (topo && tg_topology_nlayers(topo)) {
		leaf = tg_topology_nlayers(topo) - 1;
		for (unsigned d = 0; d < ndom; d++) {
			int have, all;

			if (tg_topology_domain_layer(topo, d) != leaf)
				continue;
			have = bit_overlap(dom_nodes[d], node_mask);
			all = bit_set_count(dom_nodes[d]);
			if (have && have < all)
				frag += have;
		}
	}
	slurm_mutex_unlock(&state_lock);
	return frag;
}
