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
#pragma weak job_list

#include "tgconf.h"
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

/* The model's nodes as cons_tres offers them to this job (state_lock). */
static int _model_set(topology_eval_t *te, bool exclusive, bool per_task)
{
	int64_t pods = (per_task && !exclusive) ? POD_SLOTS_SHARED : 1;

	for (unsigned i = 0; i < ntg; i++) {
		uint32_t x = tg2slurm[i];
		avail_res_t *ar = NULL;
		bool in;

		if (x != NO_VAL && bit_test(te->node_map, x))
			ar = te->avail_res_array[x];
		in = ar && ar->avail_cpus > 0;
		if (tg_topology_node_set_resource(topo, i, TG_RES_CPU,
				in ? (int64_t) ar->avail_cpus * 1000 : 0) ||
		    tg_topology_node_set_resource(topo, i, TG_RES_MEMORY,
						  MEM_UNMODELLED) ||
		    tg_topology_node_set_resource(topo, i, TG_RES_GPU,
				in ? (int64_t) ar->avail_gpus : 0) ||
		    tg_topology_node_set_resource(topo, i, TG_RES_PODS, pods))
			return SLURM_ERROR;
		tg_topology_node_set_unschedulable(topo, i, !in);
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
} decide_t;

/* The gang for the job and cons_tres's view (state_lock held). */
static int _gang(topology_eval_t *te, decide_t *c)
{
	job_record_t *job_ptr = te->job_ptr;
	uint32_t members = 0, max_cpus = 0;
	bool exclusive, per_task;
	unsigned nreq = 0;
	tg_shape sh;
	char name[32];

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
	if (_model_set(te, exclusive, per_task)) {
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
	unsigned np;

	memset(&ei, 0, sizeof(ei));
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
	c->want = bit_alloc(node_record_count);
	np = tg_decision_nplacements(c->d);
	for (unsigned i = 0; i < np; i++) {
		tg_node_id n = tg_decision_placement(c->d, i)->node;

		if (n < ntg && tg2slurm[n] != NO_VAL)
			bit_set(c->want, tg2slurm[n]);
	}
	return DEC_PLACED;
cannot:
	snprintf(c->why + strlen(c->why), sizeof(c->why) - strlen(c->why),
		 " (Fallback=no: the job waits)");
	return DEC_WAIT;
}

/*
 * Slurm's own evaluation (cores, GRES, tasks) inside the core's nodes.
 * node_map and avail_core are put back when cons_tres refuses them, as
 * common_topo_choose_nodes does between its own retries.
 */
static int _choose_in(topology_eval_t *te, bitstr_t *want)
{
	bitstr_t *orig_map = bit_copy(te->node_map);
	bitstr_t **orig_core = copy_core_array(te->avail_core);
	uint32_t orig_max = te->max_nodes;
	int rc;

	bit_and(te->node_map, want);
	te->max_nodes = MIN(te->max_nodes, bit_set_count(te->node_map));
	rc = common_topo_choose_nodes(te);
	if (rc != SLURM_SUCCESS) {
		bit_copybits(te->node_map, orig_map);
		core_array_or(te->avail_core, orig_core);
		te->max_nodes = orig_max;
	}
	FREE_NULL_BITMAP(orig_map);
	free_core_array(&orig_core);
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

extern int topology_p_eval_nodes(topology_eval_t *te)
{
	job_record_t *job_ptr = te->job_ptr;
	decide_t c;
	dec_t how;
	char *nodes = NULL;
	int rc;

	te->eval_nodes = NULL;		/* Slurm's default evaluation */
	te->trump_others = false;
	slurm_mutex_lock(&state_lock);
	if (!active) {
		slurm_mutex_unlock(&state_lock);
		return common_topo_choose_nodes(te);
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
		nodes = bitmap2node_name(c.want);
		rc = _choose_in(te, c.want);
		if (rc == SLURM_SUCCESS) {
			/* the reason stays until the job starts (tgreason
			 * drops it then): the test-only evaluation of a
			 * waiting job, on all nodes, succeeds between the
			 * scheduler's refusals */
			_log_decision("JobId=%u gather=%s (%s) placed on %s "
				      "in %s", job_ptr->job_id, c.req.txt,
				      c.req.src, nodes,
				      tg_decision_domain(c.d));
			break;
		}
		snprintf(c.why, sizeof(c.why), "topogang: select/cons_tres "
			 "refused %s, the core's placement in %s", nodes,
			 tg_decision_domain(c.d));
		if (c.req.must) {
			rc = _wait(te, c.why);
			break;
		}
		if (_first_log(job_ptr->job_id))
			error("%s: %pJ: %s; Slurm's own evaluation chooses",
			      plugin_type, job_ptr, c.why);
		rc = common_topo_choose_nodes(te);
		break;
	}
	xfree(nodes);
	FREE_NULL_BITMAP(c.want);
	tg_decision_free(c.d);
	tg_gang_destroy(c.g);
	return rc;
}

/* ---- victims, for preempt/topogang ---- */

/*
 * The running jobs, for the victims' model.  preempt_p_preemptable() is
 * called from inside list_for_each(job_list) (src/interfaces/preempt.c,
 * slurm_find_preemptable_jobs), which holds the list's lock: walking
 * job_list again there is refused ("Resource deadlock avoided", fatal).
 * So a thread of this plugin notes the running jobs' ids every
 * RUN_SCAN_MS under the job read lock, and _vic_compute() fetches each
 * with find_job_record() (a hash lookup, no list lock).  A job started
 * since the last scan is missing from the model until the next one: the
 * core may then name too few victims (cons_tres finds no fit and the job
 * waits one more pass), or see room where there is none and give no
 * opinion, and then Slurm's own preemption order picks the victims.  The
 * parity suite saw the latter when the preemptor came within 500 ms of
 * its victims' start (docs/slurm.md, "Known gap").
 */
#define RUN_SCAN_MS	500
#define MAX_RUN_IDS	(1u << 20)	/* running jobs noted */

static uint32_t *run_ids = NULL;	/* under state_lock */
static size_t nrun = 0;
static pthread_t scan_thread;
static bool scan_started = false, scan_stop = false;
static pthread_cond_t scan_cond = PTHREAD_COND_INITIALIZER;

typedef struct scan {
	uint32_t *ids;
	size_t n, cap;
	bool full;
} scan_t;

static int _scan_one(void *x, void *arg)
{
	job_record_t *jp = x;
	scan_t *sc = arg;

	if (!(IS_JOB_RUNNING(jp) || IS_JOB_SUSPENDED(jp)))
		return 0;
	if (sc->n >= MAX_RUN_IDS) {
		sc->full = true;
		return 0;
	}
	if (sc->n == sc->cap) {
		sc->cap = sc->cap ? sc->cap * 2 : 256;
		xrecalloc(sc->ids, sc->cap, sizeof(*sc->ids));
	}
	sc->ids[sc->n++] = jp->job_id;
	return 0;
}

static void _scan(void)
{
	slurmctld_lock_t job_read_lock = { .job = READ_LOCK };
	scan_t sc = { 0 };

	lock_slurmctld(job_read_lock);
	if (job_list)		/* slurmctld creates it after init() */
		(void) list_for_each_ro(job_list, _scan_one, &sc);
	unlock_slurmctld(job_read_lock);
	if (sc.full)
		error("%s: more than %u running jobs; victims are chosen "
		      "among the first %u", plugin_type, MAX_RUN_IDS,
		      MAX_RUN_IDS);
	slurm_mutex_lock(&state_lock);
	xfree(run_ids);
	run_ids = sc.ids;
	nrun = sc.n;
	slurm_mutex_unlock(&state_lock);
}

static void *_scan_loop(void *arg)
{
	(void) arg;
	for (;;) {
		struct timespec ts;

		_scan();
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (long) RUN_SCAN_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		slurm_mutex_lock(&state_lock);
		if (!scan_stop)
			pthread_cond_timedwait(&scan_cond, &state_lock, &ts);
		if (scan_stop) {
			slurm_mutex_unlock(&state_lock);
			break;
		}
		slurm_mutex_unlock(&state_lock);
	}
	return NULL;
}

#define PRIO_PENDING	(INT64_C(1) << 62)	/* above every running job */

typedef enum {
	VIC_ANY = -1,		/* no opinion: Slurm's rule decides */
	VIC_NONE = 0,		/* the job waits: no victim */
	VIC_SET = 1,		/* exactly the core's victims */
} vic_t;

/* The last answer, for every candidate of one slurm_find_preemptable_jobs
 * call (they come one after another under the job lock). */
static struct {
	uint32_t job_id;
	time_t at, upd;
	vic_t how;
	uint32_t *ids;		/* victims' job ids, sorted */
	unsigned n;
	char last[512];		/* last decision logged for job_id */
} vc;

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

	if (!(IS_JOB_RUNNING(jp) || IS_JOB_SUSPENDED(jp)) ||
	    jp == v->preemptor)
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
	snprintf(vc.last, sizeof(vc.last), "%s", txt);
	xfree(nodes);
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
	if (!t || !(g = _vic_gang(t, jp, &excl, &req, why, sizeof(why))))
		goto out;
	_vic_nodes(t, jp, excl);
	v.t = t;
	v.preemptor = jp;
	v.base = base;
	for (size_t i = 0; i < nrun; i++) {
		job_record_t *rp = find_job_record(run_ids[i]);

		if (rp)
			(void) _vic_add_job(rp, &v);
	}
	if (tg_gang_check(t, g, &ei) || tg_place(t, g, &d, &ei))
		goto out;
	switch (tg_decision_status(d)) {
	case TG_STATUS_PREEMPTING:
		vc.ids = xcalloc(tg_decision_nvictims(d) + 1,
				 sizeof(*vc.ids));
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
		_vic_log(jp, t, d, &req);
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
	time_t now = time(NULL);
	int r = VIC_ANY;

	slurm_mutex_lock(&state_lock);
	if (!active || !topo_file[0] || !scan_started)
		goto out;
	if (vc.job_id != preemptor->job_id || vc.at != now ||
	    vc.upd != last_job_update) {
		_vic_compute(preemptor, base);
		vc.job_id = preemptor->job_id;
		vc.at = now;
		vc.upd = last_job_update;
	}
	if (vc.how == VIC_SET)
		r = bsearch(&preemptee->job_id, vc.ids, vc.n,
			    sizeof(*vc.ids), _u32_cmp) ? 1 : 0;
	else
		r = vc.how;
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
	tgr_start(plugin_type);
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
	tgs_conf_free(&site_conf);
	xfree(vc.ids);
	memset(&vc, 0, sizeof(vc));
	xfree(run_ids);
	nrun = 0;
	active = false;
	slurm_mutex_unlock(&state_lock);
	return SLURM_SUCCESS;
}

/* slurmctld's start (24.11's reconfigure is a start too): the node table
 * is read, the files are loaded. */
extern int topology_p_build_config(void)
{
	if (!running_in_slurmctld() || !node_record_count)
		return SLURM_SUCCESS;
	(void) _load();
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
