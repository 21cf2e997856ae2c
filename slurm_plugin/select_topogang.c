/*****************************************************************************\
 *  select_topogang.c - topology-aware gang placement for Slurm 22.05.
 *
 *  select/topogang keeps select/cons_tres doing what it does (cores,
 *  memory, GRES, steps, job state) and decides which nodes a job gets:
 *  it loads the packaged select_cons_tres.so, forwards every entry point
 *  to it, and in select_p_job_test() first asks libtopogang's core where
 *  the job goes on the site's topology.conf and slurmctld's live node and
 *  job state, then narrows the candidate bitmap to those nodes before
 *  cons_tres allocates inside them.
 *
 *  Preemption: when the core says "preempting", exactly its victims are
 *  handed to cons_tres as the preemptee candidates, so Slurm preempts only
 *  those; the freed nodes stay reserved for the preemptor (ReserveTime in
 *  topogang.conf) so no other job takes them in between.
 *
 *  Safety: the plugin never calls fatal() after start-up and never blocks
 *  slurmctld.  A bad topology.conf or topogang.conf at reconfigure is one
 *  error() naming file and line, and the previous one stays.  When the
 *  core cannot decide, cons_tres's own choice stands, with an error().
 *
 *  Per-job requests come from the topogang SPANK plugin (--topo-gather,
 *  --topo-spread), through the job's control environment
 *  (job_ptr->spank_job_env) or, for jobs submitted through slurmrestd, the
 *  words topo-gather=/topo-spread= of the job's comment, from partition
 *  defaults in topogang.conf, and
 *  from Slurm's own --switches=1[@time].
 *
 *  The core's model of the cluster is kept between calls and brought up
 *  to date in each (see _model_sync), so a scheduling pass does not parse
 *  topology.conf once per pending job.
\*****************************************************************************/

#include "config.h"

#define _GNU_SOURCE

#include <dlfcn.h>
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
#include "src/common/gres.h"
#include "src/common/job_resources.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/read_config.h"
#include "src/common/run_in_daemon.h"
#include "src/common/select.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"

#include "topogang/topology.h"
#include "topogang/gang.h"
#include "topogang/place.h"
#include "topogang/topoconf.h"
#include "topogang/util.h"

#include "tgconf.h"
#include "tghet.h"
#include "tghold.h"
#include "tgjob.h"
#include "tgreason.h"
/* the model's job-id map on Slurm's allocator */
#define TGJX_CALLOC(n, size) xcalloc((n), (size))
#define TGJX_FREE(p) xfree(p)
#include "tgjobidx.h"

/*
 * These variables are required by the generic plugin interface.  If they
 * are not found in the plugin, the plugin loader will ignore it.
 *
 * plugin_name - a string giving a human-readable description of the
 * plugin.  There is no maximum length, but the symbol must refer to
 * a valid string.
 *
 * plugin_type - a string suggesting the type of the plugin or its
 * applicability to a particular form of data or method of data handling.
 * Slurm uses the higher-level plugin interface which requires this string
 * to be of the form "select/<name>".
 *
 * plugin_id - a number unique among the select plugins of PluginDir:
 * slurmctld and every client load all select_*.so there and stop on a
 * duplicate.  Slurm asks "is this cons_tres" by this number (scontrol
 * create reservation CoreCnt= or TRES=cpu=: state_control.c
 * state_control_corecnt_supported()) and writes it into the job state
 * with each job.  So select/topogang answers select/cons_tres's own id
 * (SELECT_PLUGIN_CONS_TRES) wherever that is no duplicate: when no
 * directory of PluginDir holds select_cons_tres.so (topogang loads it by
 * its full path).  Core reservations then work and the job state is
 * select/cons_tres's, readable after a roll-back.  With
 * select_cons_tres.so in PluginDir it keeps its own, TOPOGANG_PLUGIN_ID
 * (0x7467 is "tg").  init() chooses, as select/cray_aries chooses its
 * id from SelectTypeParameters; see _choose_plugin_id.
 *
 * plugin_version - an unsigned 32-bit integer containing the Slurm version
 * (major.minor.micro combined into a single number).
 */
const char plugin_name[] = "Topology-aware gang placement (topogang)";
const char plugin_type[] = "select/topogang";
#define TOPOGANG_PLUGIN_ID 29799
uint32_t plugin_id = TOPOGANG_PLUGIN_ID;
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/*
 * slurmctld globals this plugin reads.  Clients and slurmd load every
 * select plugin too, and a data symbol, unlike a function, must resolve
 * when the plugin is loaded: these definitions satisfy it there, and in
 * slurmctld the executable's own (exported) copies take precedence, as in
 * select/cons_tres (cons_common.c).  They are exported for that reason.
 */
List job_list;
time_t last_job_update;

#ifndef TOPOGANG_CONS_TRES
#define TOPOGANG_CONS_TRES \
	"/usr/lib/x86_64-linux-gnu/slurm-wlm/select_cons_tres.so"
#endif

#define PRIO_PENDING	(INT64_C(1) << 33)	/* above every uint32 */
#define POD_SLOTS_SHARED (INT64_C(1) << 20)

/* ---- the inner plugin (select/cons_tres), loaded by path ---- */

/* Same order as slurm_select_ops_t and node_select_syms in select.c. */
static const char *inner_syms[] = {
	"plugin_id",
	"select_p_state_save",
	"select_p_state_restore",
	"select_p_job_init",
	"select_p_node_init",
	"select_p_job_test",
	"select_p_job_begin",
	"select_p_job_ready",
	"select_p_job_expand",
	"select_p_job_resized",
	"select_p_job_signal",
	"select_p_job_fini",
	"select_p_job_suspend",
	"select_p_job_resume",
	"select_p_step_pick_nodes",
	"select_p_step_start",
	"select_p_step_finish",
	"select_p_select_nodeinfo_pack",
	"select_p_select_nodeinfo_unpack",
	"select_p_select_nodeinfo_alloc",
	"select_p_select_nodeinfo_free",
	"select_p_select_nodeinfo_set_all",
	"select_p_select_nodeinfo_set",
	"select_p_select_nodeinfo_get",
	"select_p_select_jobinfo_alloc",
	"select_p_select_jobinfo_free",
	"select_p_select_jobinfo_set",
	"select_p_select_jobinfo_get",
	"select_p_select_jobinfo_copy",
	"select_p_select_jobinfo_pack",
	"select_p_select_jobinfo_unpack",
	"select_p_select_jobinfo_sprint",
	"select_p_select_jobinfo_xstrdup",
	"select_p_get_info_from_plugin",
	"select_p_update_node_config",
	"select_p_reconfigure",
	"select_p_resv_test",
};

static void *inner_handle = NULL;
static slurm_select_ops_t inner;
static int (*inner_init)(void) = NULL;
static char inner_path[PATH_MAX];

/* ---- slurmctld-side state, all under state_lock ---- */

static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static bool active = false;		/* SelectType=select/topogang in
					 * slurmctld */
static tgs_conf site_conf;
static char conf_path[PATH_MAX];
static char *topo_text = NULL;	/* last topology.conf that loaded
					 * (tg_file_read(): tg_free()) */
static size_t topo_len = 0;
static char topo_path[PATH_MAX];

static void _model_drop(void);


/* ---- helpers ---- */

static void _log_decision(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static void _log_decision(const char *fmt, ...)
{
	va_list ap;
	char buf[2048];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* DebugFlags=SelectType, or topogang.conf's older Debug=yes */
	if ((slurm_conf.debug_flags & DEBUG_FLAG_SELECT_TYPE) ||
	    site_conf.debug)
		info("%s: %s", plugin_type, buf);
	else
		verbose("%s: %s", plugin_type, buf);
}

/*
 * The first select_cons_tres.so of PluginDir (a colon-separated list) as
 * Slurm's plugin loader finds it (plugin_load_and_link: a regular file,
 * symbolic links followed), in \p buf; false when none is there.
 */
static bool _plugindir_cons_tres(char *buf, size_t len)
{
	char *dirs = xstrdup(slurm_conf.plugindir), *save = NULL, *d;
	bool found = false;

	for (d = dirs ? strtok_r(dirs, ":", &save) : NULL; d && !found;
	     d = strtok_r(NULL, ":", &save)) {
		char try[PATH_MAX];
		struct stat st;

		snprintf(try, sizeof(try), "%s/select_cons_tres.so", d);
		if (!stat(try, &st) && S_ISREG(st.st_mode) &&
		    !access(try, R_OK)) {
			snprintf(buf, len, "%s", try);
			found = true;
		}
	}
	xfree(dirs);
	return found;
}

/* select_cons_tres.so in PluginDir, else TOPOGANG_CONS_TRES. */
static void _inner_path(char *buf, size_t len)
{
	if (!_plugindir_cons_tres(buf, len))
		snprintf(buf, len, "%s", TOPOGANG_CONS_TRES);
}

/*
 * plugin_id (see above): select/cons_tres's when select_cons_tres.so is
 * not in PluginDir, so no other select plugin has it, else our own.
 * Every process that loads select/topogang (slurmctld, slurmd, the
 * clients) reads the same slurm.conf and PluginDir and so chooses the
 * same.  Runs in init(), before Slurm checks the ids for duplicates.
 */
static void _choose_plugin_id(void)
{
	char path[PATH_MAX];

	plugin_id = _plugindir_cons_tres(path, sizeof(path)) ?
		    TOPOGANG_PLUGIN_ID : SELECT_PLUGIN_CONS_TRES;
}

static int _inner_load(void)
{
	void **ptrs = (void **) &inner;
	size_t i, n = sizeof(inner_syms) / sizeof(inner_syms[0]);

	if (inner_handle)
		return SLURM_SUCCESS;
	if (n * sizeof(void *) != sizeof(inner)) {
		error("%s: internal: %zu symbols for a %zu-byte ops table",
		      plugin_type, n, sizeof(inner));
		return SLURM_ERROR;
	}
	_inner_path(inner_path, sizeof(inner_path));
	/* RTLD_LAZY: cons_tres refers to slurmctld-only symbols that
	 * slurmd and the clients do not have. */
	inner_handle = dlopen(inner_path, RTLD_LAZY);
	if (!inner_handle) {
		error("%s: cannot load %s: %s", plugin_type, inner_path,
		      dlerror());
		return SLURM_ERROR;
	}
	for (i = 0; i < n; i++) {
		ptrs[i] = dlsym(inner_handle, inner_syms[i]);
		if (!ptrs[i]) {
			error("%s: %s lacks %s", plugin_type, inner_path,
			      inner_syms[i]);
			dlclose(inner_handle);
			inner_handle = NULL;
			return SLURM_ERROR;
		}
	}
	/*
	 * slurmd loads only SelectType, so nobody else runs cons_tres's
	 * init() there (it sets cons_tres's callbacks and flags).  slurmctld
	 * and the clients load every select plugin and run it once more on
	 * the same handle, which cons_tres takes (it only sets the same
	 * values again).  Its fini() is left to slurmctld for that reason.
	 */
	inner_init = (int (*)(void)) dlsym(inner_handle, "init");
	if (inner_init && (*inner_init)() != SLURM_SUCCESS) {
		error("%s: %s: init() failed", plugin_type, inner_path);
		return SLURM_ERROR;
	}
	return SLURM_SUCCESS;
}

/* Pending reasons: tgreason.c (tgr_set, tgr_drop). */

/* Nodes held for preemptors: tghold.c (tgh_*). */

/* ---- configuration ---- */

static char *_slurm_conf_dir_file(const char *name)
{
	return get_extra_conf_path((char *) name);
}

/* What a file was when last read: a reconfigure re-reads only changed
 * files (slurmctld calls select_p_reconfigure on every partition or node
 * update too), and an error already reported is not repeated. */
typedef struct fsig {
	bool exists;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtim;
} fsig_t;

static fsig_t conf_sig, topo_sig;
static char topo_sig_path[PATH_MAX];
static bool tried_once = false;

static void _sig(const char *path, fsig_t *sig)
{
	struct stat st;

	memset(sig, 0, sizeof(*sig));
	if (stat(path, &st))
		return;
	sig->exists = true;
	sig->dev = st.st_dev;
	sig->ino = st.st_ino;
	sig->size = st.st_size;
	sig->mtim = st.st_mtim;
}

static bool _sig_eq(const fsig_t *a, const fsig_t *b)
{
	return a->exists == b->exists && a->dev == b->dev &&
	       a->ino == b->ino && a->size == b->size &&
	       a->mtim.tv_sec == b->mtim.tv_sec &&
	       a->mtim.tv_nsec == b->mtim.tv_nsec;
}

/*
 * Reads topogang.conf and the topology file it names.  On success they
 * replace what was there; on failure what was there stays and one
 * error() says why, naming the file and line.  Unless \p force, files
 * unchanged since the last attempt are not read again.
 */
static int _load(bool force)
{
	tgs_conf nc;
	char msg[TGS_ERRLEN] = "", path[PATH_MAX], tpath[PATH_MAX];
	const char *keep;
	char *p, *text = NULL;
	tg_errinfo ei;
	tg_topology *t = NULL;
	fsig_t csig, tsig;
	size_t len = 0;
	unsigned i;

	keep = topo_text ? "keeping the previous configuration" :
	       "placing every job with select/cons_tres alone until it is "
	       "fixed";
	p = _slurm_conf_dir_file("topogang.conf");
	snprintf(path, sizeof(path), "%s", p);
	xfree(p);
	_sig(path, &csig);
	tgs_conf_init(&nc);
	if (tgs_conf_load(&nc, path, true, msg, sizeof(msg))) {
		if (force || !tried_once || !_sig_eq(&csig, &conf_sig))
			error("%s: %s; %s", plugin_type, msg, keep);
		conf_sig = csig;
		tried_once = true;
		return SLURM_ERROR;
	}
	if (nc.topology_file[0] == '/') {
		snprintf(tpath, sizeof(tpath), "%s", nc.topology_file);
	} else {
		p = _slurm_conf_dir_file(nc.topology_file[0] ?
					 nc.topology_file : "topology.conf");
		snprintf(tpath, sizeof(tpath), "%s", p);
		xfree(p);
	}
	_sig(tpath, &tsig);
	if (!force && tried_once && _sig_eq(&csig, &conf_sig) &&
	    _sig_eq(&tsig, &topo_sig) && !strcmp(tpath, topo_sig_path)) {
		tgs_conf_free(&nc);
		return topo_text ? SLURM_SUCCESS : SLURM_ERROR;
	}
	conf_sig = csig;
	topo_sig = tsig;
	snprintf(topo_sig_path, sizeof(topo_sig_path), "%s", tpath);
	tried_once = true;
	if (topo_text)
		keep = "keeping the previous topology";

	memset(&ei, 0, sizeof(ei));
	if (tg_file_read(tpath, TG_MAX_FILE, &text, &len, &ei)) {
		error("%s: %s; %s", plugin_type, ei.msg, keep);
		goto fail_conf;
	}

	/* Validate: load, give every node one CPU, build. */
	memset(&ei, 0, sizeof(ei));
	t = tg_topology_create();
	if (!t) {
		error("%s: out of memory loading %s", plugin_type, tpath);
		goto fail_text;
	}
	if (tg_topoconf_load(t, text, len, tpath, &ei)) {
		error("%s: %s; %s", plugin_type, ei.msg, keep);
		goto fail_topo;
	}
	for (i = 0; i < tg_topology_nnodes(t); i++)
		(void) tg_topology_node_set_resource(t, i, TG_RES_CPU, 1000);
	if (tg_topology_build(t, &ei)) {
		error("%s: %s: %s; %s", plugin_type, tpath, ei.msg, keep);
		goto fail_topo;
	}
	for (i = 0; i < nc.nalias; i++)
		if (tg_topology_layer_find(t, nc.alias[i].layer) == TG_NONE)
			error("%s: %s: LayerName=%s names layer '%s', which "
			      "%s does not have", plugin_type, path,
			      nc.alias[i].name, nc.alias[i].layer, tpath);
	for (i = 0; i < tg_topology_nwarnings(t) && i < 8; i++)
		error("%s: %s", plugin_type, tg_topology_warning(t, i));

	slurm_mutex_lock(&state_lock);
	_model_drop();
	tg_free(topo_text);
	topo_text = text;
	topo_len = len;
	snprintf(topo_path, sizeof(topo_path), "%s", tpath);
	snprintf(conf_path, sizeof(conf_path), "%s", path);
	tgs_conf_free(&site_conf);
	site_conf = nc;
	slurm_mutex_unlock(&state_lock);
	info("%s: loaded %s (%u nodes, %u layers) and %s", plugin_type,
	     tpath, tg_topology_nnodes(t), tg_topology_nlayers(t), path);
	tg_topology_destroy(t);
	return SLURM_SUCCESS;

fail_topo:
	tg_topology_destroy(t);
fail_text:
	tg_free(text);
fail_conf:
	tgs_conf_free(&nc);
	return SLURM_ERROR;
}

/* ---- translating slurmctld's state into the core's model ---- */

static uint64_t _gres_node_gpus(node_record_t *node_ptr)
{
	gres_node_state_t *ns = tgj_node_gpu_state(node_ptr);

	return ns ? ns->gres_cnt_avail : 0;
}

/* The node's GPUs have gres.conf Links= in slurmctld (see below). */
static bool _gres_has_links(const gres_node_state_t *ns)
{
	return ns && ns->links_cnt && ns->link_len > 0 &&
	       (uint64_t) ns->link_len == ns->gres_cnt_avail;
}

static unsigned _uf_find(uint8_t *up, unsigned i)
{
	while (up[i] != i)
		i = up[i] = up[up[i]];
	return i;
}

/*
 * The node's NVLink islands from gres.conf Links= (slurmd reports them,
 * gres_node_state_t.links_cnt): GPUs joined by a positive link count are
 * in one island.  Fills \p island[0..ngpus) with island numbers from 0
 * in GPU order and returns true; false (one island) when the node has no
 * Links= for all its GPUs.
 */
static bool _gres_node_islands(node_record_t *node_ptr, unsigned ngpus,
			       uint8_t *island)
{
	gres_node_state_t *ns = tgj_node_gpu_state(node_ptr);
	uint8_t up[TG_MAX_GPUS], num[TG_MAX_GPUS];
	unsigned g, l, next = 0;

	if (!ns || !ns->links_cnt || !ngpus || ngpus > TG_MAX_GPUS ||
	    ns->link_len != (int) ngpus)
		return false;
	for (g = 0; g < ngpus; g++)
		up[g] = (uint8_t) g;
	for (g = 0; g < ngpus; g++) {
		if (!ns->links_cnt[g])
			return false;
		for (l = 0; l < ngpus; l++)
			if (l != g && ns->links_cnt[g][l] > 0)
				up[_uf_find(up, g)] = (uint8_t) _uf_find(up, l);
	}
	memset(num, 0xff, sizeof(num));
	for (g = 0; g < ngpus; g++) {
		unsigned r = _uf_find(up, g);

		if (num[r] == 0xff)
			num[r] = (uint8_t) next++;
		island[g] = num[r];
	}
	return true;
}

/*
 * The core's model of the cluster, kept between job_test calls (under
 * state_lock): rebuilding it from topology.conf for every call costs a
 * parse of the file and one allocation per busy node, which on thousands
 * of nodes is most of a scheduling pass.  Each call brings it up to date
 * instead: node resources and eligibility are set afresh, running jobs
 * that ended are removed and new ones added, the jobs whose preemption
 * candidacy (or rank) changed since the last call change class in place
 * (tg_topology_set_gang_preemption()), and held nodes are re-added.
 * It is rebuilt when the topology is reloaded, when a node's GPU count
 * or its Links= change, and after MODEL_MAX_ADDS allocations (the core
 * interns every allocation name for the topology's life).
 *
 * A sync costs what changed, not the cluster's size: a scheduling pass
 * calls job_test for every job it considers, and a sweep of every node
 * and every job record per call made the model's upkeep cost more than
 * the placement (0.9 ms against 0.1 ms a call on 4,096 nodes and 300
 * jobs).  Node resources and GPU layouts are swept at most once a second
 * (and after select_p_node_init, select_p_update_node_config, a rebuild),
 * eligibility is updated only for nodes whose bit changed since the last
 * call, and the running jobs come from the job_begin / job_fini hooks,
 * with a full scan of the job list at most once a second (and after
 * job_init, state_restore, suspend or resume) as the reference.
 * Preemption candidates: slurmctld hands every job_test its list (every
 * preemptable running job, thousands on a big cluster); re-adding each
 * candidate's allocations per call cost 64 ms a call at 8,000
 * candidates on 4,096 nodes.  Now a call compares the list with the
 * last call's (the same list, job for job, as between jobs of one
 * partition and QOS, costs one pass over it) and otherwise looks each
 * job up in a hash of the model's jobs; only jobs whose candidacy or
 * rank changed touch the core, each at the cost of its own allocations
 * (the core indexes allocations by gang).
 */
#define MODEL_MAX_ADDS	(1u << 18)

typedef struct mjob {
	uint32_t job_id;
	bool cand;			/* its allocations are preemptible */
	bool seen;			/* still running (per sync) */
	uint32_t mark;			/* model.epoch: in this call's
					 * candidate list */
	int64_t rank;			/* the rank its allocations carry
					 * (tgj_preempt_rank()) */
} mjob_t;

/* A preemption candidate of a call: job id and rank, in list order. */
typedef struct pcand {
	uint32_t job_id;
	int64_t rank;
} pcand_t;

typedef struct model {
	tg_topology *t;			/* NULL: rebuild */
	uint32_t *tg2slurm;		/* tg node id -> node index */
	uint32_t ntg;
	bool *links;			/* node had Links= when built */
	mjob_t *jobs;			/* running jobs in t, unordered */
	size_t njobs, cap;
	tgjx_t idx;			/* job id -> index in jobs */
	uint32_t *held;			/* job ids of held-node allocations */
	size_t nheld, heldcap;
	uint64_t adds;
	bool *unsched;			/* node set unschedulable by the last
					 * sync */
	bool excl;			/* pod slots were set for an exclusive
					 * job by the last sync */
	time_t nodes_t;			/* second of the last node sweep */
	time_t jobs_t;			/* second of the last job-list scan */
	bool dirty;			/* a hook asks for a full sync */
	uint32_t *begun, *ended;	/* job ids since the last sync */
	size_t nbegun, begcap, nended, endcap;
	size_t ncand;			/* model jobs added as preemptible */
	pcand_t *prev, *cur;		/* last call's candidates, this
					 * call's (list order) */
	size_t nprev, ncur, pcap;
	bool prev_ok;			/* every job of prev is as prev says
					 * and none was added since */
	uint32_t epoch;
} model_t;

static model_t model;

static void _model_drop(void)
{
	tg_topology_destroy(model.t);
	xfree(model.tg2slurm);
	xfree(model.links);
	xfree(model.jobs);
	tgjx_free(&model.idx);
	xfree(model.held);
	xfree(model.unsched);
	xfree(model.begun);
	xfree(model.ended);
	xfree(model.prev);
	xfree(model.cur);
	memset(&model, 0, sizeof(model));
}

static mjob_t *_mjob_find(uint32_t job_id)
{
	uint32_t k = tgjx_get(&model.idx, job_id);

	return k ? &model.jobs[k - 1] : NULL;
}

/* Records job \p job_id at model.jobs[\p i] in the index. */
static void _mjob_index(uint32_t job_id, size_t i)
{
	/* xcalloc() does not return NULL: never -1 here */
	(void) tgjx_set(&model.idx, job_id, (uint32_t) i);
}

/* Drops model.jobs[i] (the last takes its place). */
static void _mjob_unlist(size_t i)
{
	size_t last = model.njobs - 1;

	tgjx_del(&model.idx, model.jobs[i].job_id);
	if (i != last) {
		model.jobs[i] = model.jobs[last];
		_mjob_index(model.jobs[i].job_id, i);
	}
	model.njobs--;
}

/* A fresh model from topology.conf; nodes get their GPU counts. */
static int _model_build(char *why, size_t wlen)
{
	tg_errinfo ei;
	node_record_t *node_ptr;
	uint8_t island[TG_MAX_GPUS];
	unsigned i;

	memset(&ei, 0, sizeof(ei));
	_model_drop();
	model.t = tg_topology_create();
	if (!model.t) {
		snprintf(why, wlen, "out of memory");
		return SLURM_ERROR;
	}
	if (tg_topoconf_load(model.t, topo_text, topo_len, topo_path, &ei)) {
		snprintf(why, wlen, "%s", ei.msg);
		goto fail;
	}
	model.ntg = tg_topology_nnodes(model.t);
	model.tg2slurm = xcalloc(model.ntg ? model.ntg : 1,
				 sizeof(uint32_t));
	model.links = xcalloc(model.ntg ? model.ntg : 1, sizeof(bool));
	model.unsched = xcalloc(model.ntg ? model.ntg : 1, sizeof(bool));
	for (i = 0; i < model.ntg; i++) {
		uint64_t gpus;

		node_ptr = find_node_record(
			(char *) tg_topology_node_name(model.t, i));
		model.tg2slurm[i] = node_ptr ? node_ptr->index : NO_VAL;
		if (!node_ptr)
			continue;
		model.links[i] = _gres_has_links(
				tgj_node_gpu_state(node_ptr));
		if (tg_topology_node_add_label(model.t, i, TGJ_NODE_LABEL,
					       node_ptr->name)) {
			snprintf(why, wlen, "out of memory");
			goto fail;
		}
		gpus = MIN(_gres_node_gpus(node_ptr), TG_MAX_GPUS);
		if (gpus && tg_topology_node_set_gpus(model.t, i,
				(unsigned) gpus,
				_gres_node_islands(node_ptr, (unsigned) gpus,
						   island) ? island : NULL)) {
			snprintf(why, wlen, "node %s: bad GPU count",
				 node_ptr->name);
			goto fail;
		}
	}
	if (tg_topology_build(model.t, &ei)) {
		snprintf(why, wlen, "%s", ei.msg);
		goto fail;
	}
	return SLURM_SUCCESS;
fail:
	_model_drop();
	return SLURM_ERROR;
}

/* Adds a running job's allocations, one per node it holds. */
static void _model_add_job(job_record_t *jp, bool cand)
{
	model.adds += tgj_add_job(model.t, jp, cand);
}

static void _model_remove_job(uint32_t job_id)
{
	char gang[32];

	snprintf(gang, sizeof(gang), "JobId=%u", job_id);
	(void) tg_topology_remove_gang(model.t, gang);
}

/* Node \p i of the model has another GPU count or Links= than when the
 * model was built. */
static bool _model_node_changed(unsigned i, node_record_t *node_ptr)
{
	gres_node_state_t *ns = tgj_node_gpu_state(node_ptr);
	uint64_t gpus = ns ? ns->gres_cnt_avail : 0;

	return tg_topology_node_ngpus(model.t, i) != MIN(gpus, TG_MAX_GPUS) ||
	       model.links[i] != _gres_has_links(ns);
}

/*
 * A running job whose nodes changed (resized, expanded): its allocations
 * leave the model and the next _model_sync adds it afresh from its
 * job_resrcs.
 */
static void _model_forget(uint32_t job_id)
{
	mjob_t *mj;

	if (!model.t || !(mj = _mjob_find(job_id)))
		return;
	_model_remove_job(job_id);
	model.ncand -= mj->cand;
	_mjob_unlist((size_t) (mj - model.jobs));
}

/* Notes a job id for the next sync (job_begin / job_fini). */
static void _model_note(uint32_t **ids, size_t *n, size_t *cap,
			uint32_t job_id)
{
	if (!model.t || model.dirty)
		return;
	if (*n >= 4096) {
		/* many changes: one full scan instead */
		model.dirty = true;
		return;
	}
	if (*n >= *cap) {
		*cap = *cap ? *cap * 2 : 64;
		xrecalloc(*ids, *cap, sizeof(uint32_t));
	}
	(*ids)[(*n)++] = job_id;
}

/* A full sync at the next job_test (suspend, resume, restore ...). */
static void _model_dirty(void)
{
	if (!active)
		return;
	slurm_mutex_lock(&state_lock);
	model.dirty = true;
	slurm_mutex_unlock(&state_lock);
}

/* Adds running job \p jp to the model, not preemptible (_model_cands
 * makes it a candidate when it is one). */
static void _model_insert_job(job_record_t *jp)
{
	mjob_t *mj;

	if (model.njobs >= model.cap) {
		model.cap = model.cap ? model.cap * 2 : 256;
		xrecalloc(model.jobs, model.cap, sizeof(mjob_t));
	}
	mj = &model.jobs[model.njobs];
	memset(mj, 0, sizeof(*mj));
	mj->job_id = jp->job_id;
	mj->seen = true;
	mj->rank = tgj_preempt_rank(jp);
	_mjob_index(jp->job_id, model.njobs++);
	model.prev_ok = false;
	_model_add_job(jp, false);
}

/* A job the model may hold: running, with its resources. */
static bool _model_wants(job_record_t *jp, job_record_t *job_ptr)
{
	return jp && jp != job_ptr && IS_JOB_RUNNING(jp) && jp->job_resrcs &&
	       jp->job_resrcs->node_bitmap;
}

/* Model job \p mj (running job \p jp, NULL when it is not running as
 * noted) becomes a candidate or not (\p is_cand), with rank \p rank:
 * its allocations change class in place, as removing and adding it
 * again would leave them. */
static void _model_set_cand(mjob_t *mj, job_record_t *jp, bool is_cand,
			    int64_t rank)
{
	char gang[32];
	tg_err err;

	snprintf(gang, sizeof(gang), "JobId=%u", mj->job_id);
	err = tg_topology_set_gang_preemption(model.t, gang, rank, is_cand);
	if (err && err != TG_ENOENT) {
		/* out of memory: the old way (or none: the scan that
		 * model.dirty asks for drops a job not running) */
		_model_remove_job(mj->job_id);
		if (jp)
			_model_add_job(jp, is_cand);
	}
	model.ncand -= mj->cand;
	mj->cand = is_cand;
	model.ncand += is_cand;
	mj->rank = rank;
}

/* Every running job from the job list: add the new, drop the gone
 * (candidacy is _model_cands'). */
static void _model_scan_jobs(job_record_t *job_ptr)
{
	job_record_t *jp;
	ListIterator it;
	mjob_t *mj;
	size_t i;

	for (i = 0; i < model.njobs; i++)
		model.jobs[i].seen = false;
	it = list_iterator_create(job_list);
	while ((jp = list_next(it))) {
		if (!_model_wants(jp, job_ptr))
			continue;
		if ((mj = _mjob_find(jp->job_id)))
			mj->seen = true;
		else
			_model_insert_job(jp);
	}
	list_iterator_destroy(it);
	for (i = model.njobs; i-- > 0;) {
		if (model.jobs[i].seen)
			continue;
		_model_remove_job(model.jobs[i].job_id);
		model.ncand -= model.jobs[i].cand;
		_mjob_unlist(i);	/* the last, already seen, moves in */
	}
}

/* The jobs begun and ended since the last sync: what _model_scan_jobs
 * would change. */
static void _model_update_jobs(job_record_t *job_ptr)
{
	job_record_t *jp;
	size_t i;

	for (i = 0; i < model.nended; i++)
		_model_forget(model.ended[i]);
	if (_mjob_find(job_ptr->job_id))
		_model_forget(job_ptr->job_id);
	for (i = 0; i < model.nbegun; i++) {
		jp = find_job_record(model.begun[i]);
		if (!_model_wants(jp, job_ptr) || _mjob_find(jp->job_id))
			continue;
		_model_insert_job(jp);
	}
}

static int _pcand_one(void *x, void *arg)
{
	job_record_t *jp = x;

	(void) arg;
	model.cur[model.ncur].job_id = jp->job_id;
	model.cur[model.ncur++].rank = tgj_preempt_rank(jp);
	return 0;
}

/* This call's candidates in model.cur; true when they are the last
 * call's, job for job and rank for rank, and the model is as it left
 * them. */
static bool _model_cands_same(List cands)
{
	int n = cands ? list_count(cands) : 0;

	if ((size_t) n > model.pcap) {
		model.pcap = (size_t) n + (size_t) n / 2;
		xrecalloc(model.prev, model.pcap, sizeof(pcand_t));
		xrecalloc(model.cur, model.pcap, sizeof(pcand_t));
	}
	model.ncur = 0;
	if (n)
		(void) list_for_each(cands, _pcand_one, NULL);
	if (!model.prev_ok || model.ncur != model.nprev)
		return false;
	for (size_t i = 0; i < model.ncur; i++)
		if (model.cur[i].job_id != model.prev[i].job_id ||
		    model.cur[i].rank != model.prev[i].rank)
			return false;
	return true;
}

/*
 * Preemption candidates: the model jobs in \p cands become preemptible
 * (with their rank now), the last call's others stop being, and nothing
 * else is touched.  A candidate or former one that is not running as
 * the model says sets model.dirty (a full scan is due); every
 * preemptible model job stays in model.prev.
 */
static void _model_cands(job_record_t *job_ptr, List cands)
{
	job_record_t *jp;
	mjob_t *mj;
	pcand_t *swap;
	size_t i;

	if (_model_cands_same(cands))
		return;
	if (++model.epoch == 0)		/* marks of 0 mean none */
		for (i = 0, model.epoch = 1; i < model.njobs; i++)
			model.jobs[i].mark = 0;
	for (i = 0; i < model.ncur; i++) {
		pcand_t *c = &model.cur[i];

		if (!(mj = _mjob_find(c->job_id)))
			continue;	/* not running here, or job_ptr */
		mj->mark = model.epoch;
		if (mj->cand && mj->rank == c->rank)
			continue;
		if (!(jp = find_job_record(c->job_id)) ||
		    !_model_wants(jp, job_ptr)) {
			model.dirty = true;	/* the scan drops it */
			continue;
		}
		_model_set_cand(mj, jp, true, c->rank);
	}
	/* the last call's candidates that are not this call's (every
	 * preemptible model job was one) */
	for (i = 0; model.ncand && i < model.nprev; i++) {
		if (!(mj = _mjob_find(model.prev[i].job_id)) || !mj->cand ||
		    mj->mark == model.epoch)
			continue;
		jp = find_job_record(mj->job_id);
		if (!_model_wants(jp, job_ptr)) {
			model.dirty = true;	/* the scan drops it */
			jp = NULL;
		}
		_model_set_cand(mj, jp, false,
				jp ? tgj_preempt_rank(jp) : mj->rank);
	}
	swap = model.prev;
	model.prev = model.cur;
	model.cur = swap;
	model.nprev = model.ncur;
	model.prev_ok = true;
}

/* Nodes freed by preemption for jobs other than \p job_ptr: nominated
 * allocations of the whole node (_model_sync). */
static void _model_add_held(job_record_t *job_ptr)
{
	node_record_t *node_ptr;
	tgh_hold_t *h;
	unsigned i, r;

	for (i = 0; i < tgh_count(); i++) {
		char pod[64], gang[32];
		tg_shape ns;
		tg_node_id id;
		int n;

		if (!(h = tgh_at(i)) || h->job_id == job_ptr->job_id)
			continue;
		snprintf(gang, sizeof(gang), "JobId=%u", h->job_id);
		n = bit_size(h->nodes);
		for (int k = 0; k < n; k++) {
			tg_alloc_spec a;

			if (!bit_test(h->nodes, k) ||
			    k >= node_record_count ||
			    !(node_ptr = node_record_table_ptr[k]) ||
			    tg_topology_node_find(model.t, node_ptr->name,
						  &id))
				continue;
			memset(&ns, 0, sizeof(ns));
			for (r = 0; r < TG_RES_PODS; r++)
				ns.v[r] = tg_topology_node_allocatable(model.t,
								       id, r);
			ns.v[TG_RES_PODS] = 1;
			memset(&a, 0, sizeof(a));
			snprintf(pod, sizeof(pod), "JobId=%u/%s(held)",
				 h->job_id, node_ptr->name);
			a.pod = pod;
			a.gang = gang;
			a.node = id;
			a.shape = &ns;
			a.priority = PRIO_PENDING;
			a.nominated = true;
			(void) tg_topology_add_alloc(model.t, &a);
			model.adds++;
		}
		if (model.nheld >= model.heldcap) {
			model.heldcap = model.heldcap ? model.heldcap * 2 : 16;
			xrecalloc(model.held, model.heldcap, sizeof(uint32_t));
		}
		model.held[model.nheld++] = h->job_id;
	}
}

/*
 * Brings the model up to date for one job_test: nodes outside \p bitmap
 * may not be used, every node offers one pod slot when \p exclusive (so
 * only empty nodes fit) and many otherwise, running jobs are
 * allocations (preemptible when in \p cands), and nodes held for other
 * preemptors are nominated allocations.  See model_t for what is swept
 * and when.
 */
static int _model_sync(job_record_t *job_ptr, bitstr_t *bitmap,
		       bool exclusive, List cands, char *why, size_t wlen)
{
	node_record_t *node_ptr;
	time_t now = time(NULL);
	bool sweep;
	size_t i;

	if (model.t && model.adds > MODEL_MAX_ADDS)
		_model_drop();
	sweep = !model.t || model.dirty || model.nodes_t != now;
	for (i = 0; sweep && model.t && i < model.ntg; i++) {
		if (model.tg2slurm[i] == NO_VAL)
			continue;
		if ((int) model.tg2slurm[i] >= node_record_count ||
		    !(node_ptr = node_record_table_ptr[model.tg2slurm[i]]) ||
		    _model_node_changed(i, node_ptr))
			_model_drop();
	}
	if (!model.t && _model_build(why, wlen))
		return SLURM_ERROR;

	/* Nodes: resources once a second, pod slots when the kind of job
	 * changes, eligibility where it changed. */
	for (i = 0; i < model.ntg; i++) {
		bool unsched;

		if (model.tg2slurm[i] == NO_VAL) {
			if (sweep)
				tg_topology_node_set_unschedulable(model.t, i,
								   true);
			continue;
		}
		node_ptr = node_record_table_ptr[model.tg2slurm[i]];
		if ((sweep &&
		     (tg_topology_node_set_resource(model.t, i, TG_RES_CPU,
				(int64_t) node_ptr->cpus_efctv * 1000) ||
		      tg_topology_node_set_resource(model.t, i, TG_RES_MEMORY,
				(int64_t) (node_ptr->real_memory -
					   MIN(node_ptr->mem_spec_limit,
					       node_ptr->real_memory)) << 20))) ||
		    ((sweep || exclusive != model.excl) &&
		     tg_topology_node_set_resource(model.t, i, TG_RES_PODS,
				exclusive ? 1 : POD_SLOTS_SHARED))) {
			snprintf(why, wlen, "node %s: bad resources",
				 node_ptr->name);
			_model_drop();
			return SLURM_ERROR;
		}
		unsched = !bit_test(bitmap, node_ptr->index);
		if (sweep || unsched != model.unsched[i]) {
			tg_topology_node_set_unschedulable(model.t, i,
							   unsched);
			model.unsched[i] = unsched;
		}
	}
	model.excl = exclusive;
	if (sweep)
		model.nodes_t = now;

	/* Held nodes are re-added below. */
	for (i = 0; i < model.nheld; i++)
		_model_remove_job(model.held[i]);
	model.nheld = 0;

	/* Running jobs, then their candidacy. */
	if (model.dirty || model.jobs_t != now)
		_model_scan_jobs(job_ptr);
	else
		_model_update_jobs(job_ptr);
	if (model.dirty || model.jobs_t != now)
		model.jobs_t = now;
	model.dirty = false;
	_model_cands(job_ptr, cands);
	if (model.dirty) {
		/* a candidate not running as noted: from the job list */
		_model_scan_jobs(job_ptr);
		model.dirty = false;
		model.prev_ok = false;
		_model_cands(job_ptr, cands);
		model.dirty = false;
	}
	model.nbegun = model.nended = 0;

	_model_add_held(job_ptr);
	return SLURM_SUCCESS;
}

typedef struct ctx {
	job_record_t *job_ptr;
	tg_topology *t;			/* the model's, not owned */
	tg_gang *g;
	tg_decision *d;
	uint32_t *tg2slurm;		/* the model's, not owned */
	uint32_t ntg;
	bool must;			/* a MUST layer or a hard spread */
	bool slice;			/* a --topo-slice */
	bool wr_switches;		/* will-run: a placement must keep to
					 * --switches=N (_will_run_switches) */
	unsigned nreq;			/* required nodes (-w) */
	char gather_txt[512];
	const char *gather_src;
	unsigned nhet;			/* components of a heterogeneous job
					 * placed as one gang (0: not one) */
	job_record_t *het[TG_MAX_PODSETS];	/* their pod sets' jobs */
	unsigned het_ps;		/* job_ptr's pod set */
} ctx_t;

static void _ctx_free(ctx_t *c)
{
	tg_decision_free(c->d);
	tg_gang_destroy(c->g);
}

/*
 * Heterogeneous jobs (sbatch A : B) are one gang: a pod set per
 * component, placed together by the core, each component then getting
 * its own part.  In 22.05 only sched/backfill starts them: it calls
 * job_test per component (WILL_RUN), and once every component can start
 * now it starts them one after another (_het_job_start_now, a job_test
 * RUN_NOW each, earlier components' nodes taken out of later ones'
 * bitmaps, so components never share a node).  The first component's
 * call places the whole gang and keeps the parts (het_plan); the other
 * components take theirs.  A component asked again (a new pass) places
 * the gang afresh.  Components of a job with -w, --contiguous, more
 * than TG_MAX_PODSETS components or a component already running are
 * placed one by one, as other jobs.  A heterogeneous gang does not
 * preempt (slurmctld preempts per component; see topogang.conf(5)).
 */
/* the plan and the components: tghet.c (shared with 24.11) */
static tghet_plan_t het_plan;

static void _het_plan_drop(void)
{
	tghet_plan_drop(&het_plan);
}

/*
 * The most CPUs the job can get on one node of \p bitmap: the largest
 * eligible node's usable CPUs, capped by its partition's MaxCPUsPerNode
 * (cons_tres counts a node's CPUs the same way).
 */
static uint32_t _max_node_cpus(job_record_t *job_ptr, bitstr_t *bitmap)
{
	uint32_t max_cpus = 0, cap = INFINITE;
	int k;

	if (job_ptr->part_ptr && job_ptr->part_ptr->max_cpus_per_node &&
	    job_ptr->part_ptr->max_cpus_per_node != INFINITE)
		cap = job_ptr->part_ptr->max_cpus_per_node;
	for (k = 0; k < node_record_count; k++) {
		node_record_t *node_ptr = node_record_table_ptr[k];

		if (node_ptr && node_ptr->cpus_efctv > max_cpus &&
		    bit_test(bitmap, k))
			max_cpus = node_ptr->cpus_efctv;
	}
	return MIN(max_cpus, cap);
}

/* The pod sets of a heterogeneous gang, one per component (c->het). */
static int _het_members(ctx_t *c, job_record_t *job_ptr, bitstr_t *bitmap,
			uint32_t min_nodes, uint32_t max_nodes, bool *all_excl,
			tg_shape *shape, uint32_t *members, char *why,
			size_t wlen)
{
	uint32_t max_cpus = _max_node_cpus(job_ptr, bitmap);
	bool excl[TG_MAX_PODSETS];
	unsigned k;

	*all_excl = true;
	for (k = 0; k < c->nhet; k++) {
		job_record_t *jp = c->het[k];
		bool self = jp == job_ptr;
		/* A task-shaped component (mixed mode's pod sets) still
		 * takes one node a task here: tasks of one component sharing
		 * a node while components stay apart is not expressed yet. */
		bool per_task;

		if (tgj_shape(jp, self ? min_nodes : jp->details->min_nodes,
			       self ? max_nodes : jp->details->max_nodes,
			       max_cpus, &shape[k], &members[k], &excl[k],
			       &per_task)) {
			snprintf(why, wlen, "heterogeneous component JobId=%u: "
				 "its CPUs need more than %u nodes",
				 jp->job_id, jp->details->max_nodes);
			return SLURM_ERROR;
		}
		if (self)
			c->het_ps = k;
		*all_excl = *all_excl && excl[k];
	}
	for (k = 0; k < c->nhet && !*all_excl; k++) {
		/*
		 * Nodes are shared: an exclusive component asks a whole node
		 * (the largest eligible one), and every member asks more than
		 * half a node's pod slots, so two components never share a
		 * node (slurmctld gives them disjoint nodes).
		 */
		if (excl[k])
			shape[k].v[TG_RES_CPU] = (int64_t) max_cpus * 1000;
		shape[k].v[TG_RES_PODS] = POD_SLOTS_SHARED / 2 + 1;
	}
	return SLURM_SUCCESS;
}

static int _het_gang(ctx_t *c, const tg_shape *shape,
		     const uint32_t *members, char *why, size_t wlen)
{
	char name[32];
	unsigned k, ps;

	for (k = 0; k < c->nhet; k++) {
		snprintf(name, sizeof(name), "JobId=%u", c->het[k]->job_id);
		if (tg_gang_add_podset(c->g, name, &shape[k], members[k],
				       &ps) ||
		    tg_gang_podset_set_max_per_node(c->g, ps, 1)) {
			snprintf(why, wlen, "out of memory");
			return SLURM_ERROR;
		}
	}
	return SLURM_SUCCESS;
}

/* Pod set \p ps's nodes of the decision (every pod set's: UINT_MAX). */
static bitstr_t *_decision_part(ctx_t *c, unsigned ps)
{
	return tghet_decision_part(c->d, ps, c->tg2slurm, c->ntg);
}

/* Keeps a heterogeneous gang's placement for its other components. */
static void _het_plan_keep(ctx_t *c, time_t now)
{
	tghet_plan_keep(&het_plan, c->het, c->nhet, c->het_ps, c->must, c->d,
			c->tg2slurm, c->ntg, now);
}

/*
 * Sets up one job_test: the model brought up to date (see _model_sync)
 * and the job's gang.  Returns SLURM_ERROR with \p why when the core
 * could not be set up.
 */
static int _build(ctx_t *c, job_record_t *job_ptr, bitstr_t *bitmap,
		  uint32_t min_nodes, uint32_t max_nodes,
		  List cands, char *why, size_t wlen)
{
	tg_shape gs, het_shape[TG_MAX_PODSETS];
	uint32_t members = 0, max_cpus = 0, het_members[TG_MAX_PODSETS];
	bool exclusive, per_task;
	tgj_req req;

	c->job_ptr = job_ptr;
	/* only a job asking more CPUs than nodes needs the largest node
	 * (see tgj_shape) */
	if (job_ptr->details->min_cpus > min_nodes)
		max_cpus = _max_node_cpus(job_ptr, bitmap);
	if (tgj_shape(job_ptr, min_nodes, max_nodes, max_cpus, &gs,
		       &members, &exclusive, &per_task)) {
		snprintf(why, wlen, "the job's CPUs need more than %u nodes",
			 max_nodes);
		return SLURM_ERROR;
	}
	c->nhet = tghet_components(job_ptr, c->het);
	if (c->nhet && _het_members(c, job_ptr, bitmap, min_nodes, max_nodes,
				    &exclusive, het_shape, het_members, why,
				    wlen))
		return SLURM_ERROR;
	if (_model_sync(job_ptr, bitmap, exclusive, cands, why, wlen))
		return SLURM_ERROR;
	c->t = model.t;
	c->tg2slurm = model.tg2slurm;
	c->ntg = model.ntg;

	/* The job's gang. */
	{
		char name[32];

		snprintf(name, sizeof(name), "JobId=%u",
			 c->nhet ? job_ptr->het_job_id : job_ptr->job_id);
		c->g = tg_gang_create(name);
	}
	if (!c->g) {
		snprintf(why, wlen, "out of memory");
		return SLURM_ERROR;
	}
	if (c->nhet ? _het_gang(c, het_shape, het_members, why, wlen) :
	    tgj_members(c->g, job_ptr, &gs, members, per_task,
				&c->nreq, why, wlen))
		return SLURM_ERROR;
	tg_gang_set_priority(c->g, PRIO_PENDING);
	/* Only slurmctld's preemptee candidates are preemptible, so a job
	 * that may not preempt finds no victim; the message says so. */
	tg_gang_set_can_preempt(c->g, !c->nhet);
	if (tgj_request(job_ptr, &site_conf, c->t, c->g, members,
			plugin_type, &req, why, wlen))
		return SLURM_ERROR;
	c->must = req.must;
	c->slice = req.slice;
	c->gather_src = req.src;
	snprintf(c->gather_txt, sizeof(c->gather_txt), "%s", req.txt);
	return SLURM_SUCCESS;
}

static job_record_t *_victim_job(const tg_victim *v)
{
	unsigned long id;
	char *end;

	if (!v->gang || strncmp(v->gang, "JobId=", 6))
		return NULL;
	errno = 0;
	id = strtoul(v->gang + 6, &end, 10);
	if (errno || *end || !id || id > UINT32_MAX)
		return NULL;
	return find_job_record((uint32_t) id);
}

static int _ptr_eq(void *x, void *key)
{
	return x == key;
}

/* Calls cons_tres on \p bitmap narrowed to \p want. */
static int _inner_narrowed(job_record_t *job_ptr, bitstr_t *bitmap,
			   bitstr_t *want, uint32_t min_nodes,
			   uint32_t max_nodes, uint32_t req_nodes,
			   uint16_t mode, List cands, List *preemptee_job_list,
			   bitstr_t *exc_core_bitmap)
{
	bit_and(bitmap, want);
	return (*(inner.job_test))(job_ptr, bitmap, min_nodes, max_nodes,
				   req_nodes, mode, cands, preemptee_job_list,
				   exc_core_bitmap);
}

/* Errors once per job and condition: tgreason.c (tgr_once). */

/* ---- handing the decision to cons_tres where the model falls short ---- */

#define FALLBACK_MAX_TRIES 16	/* narrowed select/cons_tres calls per
				 * fallback: the domains tried first */

/* Jobs started by select/cons_tres's choice because the core's model
 * said no (see _fallback); logged at reconfigure and on each. */
static uint64_t fallback_nospace = 0, fallback_refused = 0;

typedef struct dom_try {
	tg_domain_id d;
	uint32_t n;			/* eligible nodes in it */
	const char *path;
} dom_try_t;

static int _dom_try_cmp(const void *a, const void *b)
{
	const dom_try_t *x = a, *y = b;

	if (x->n != y->n)
		return (x->n > y->n) - (x->n < y->n);
	return strcmp(x->path, y->path);
}

/* The domain of layer \p layer above model node \p i, TG_NONE if none. */
static tg_domain_id _node_domain_at(const tg_topology *t, unsigned i,
				    unsigned layer)
{
	tg_domain_id d = tg_topology_node_domain(t, i);

	while (d != TG_NONE && d != 0 &&
	       tg_topology_domain_layer(t, d) != layer)
		d = tg_topology_domain_parent(t, d);
	return d != 0 && d != TG_NONE ? d : TG_NONE;
}

/* The Slurm nodes of \p bitmap in domain \p d of layer \p layer. */
static bitstr_t *_domain_bitmap(ctx_t *c, bitstr_t *bitmap, unsigned layer,
				tg_domain_id d)
{
	bitstr_t *b = bit_alloc(node_record_count);

	for (unsigned i = 0; i < c->ntg; i++)
		if (c->tg2slurm[i] != NO_VAL &&
		    bit_test(bitmap, c->tg2slurm[i]) &&
		    _node_domain_at(c->t, i, layer) == d)
			bit_set(b, c->tg2slurm[i]);
	return b;
}

/*
 * The domains of \p layer holding at least \p min_nodes nodes of \p
 * bitmap and fewer than \p all, fewest first (the core's best fit), ties
 * by path; at most \p max of them in \p out.  Returns their number.
 */
static unsigned _domain_tries(ctx_t *c, bitstr_t *bitmap, unsigned layer,
			      uint32_t min_nodes, uint32_t all,
			      dom_try_t *out, unsigned max)
{
	unsigned nd = tg_topology_ndomains(c->t), n = 0, d, i;
	dom_try_t *v = xcalloc(nd ? nd : 1, sizeof(*v));

	for (i = 0; i < c->ntg; i++) {
		tg_domain_id x;

		if (c->tg2slurm[i] == NO_VAL ||
		    !bit_test(bitmap, c->tg2slurm[i]) ||
		    (x = _node_domain_at(c->t, i, layer)) == TG_NONE ||
		    x >= nd)
			continue;
		v[x].d = x;
		v[x].n++;
	}
	for (d = 0, i = 0; d < nd; d++)
		if (v[d].n >= min_nodes && v[d].n < all) {
			v[i] = v[d];
			v[i++].path = tg_topology_domain_path(c->t, d);
		}
	qsort(v, i, sizeof(*v), _dom_try_cmp);
	n = MIN(i, max);
	memcpy(out, v, n * sizeof(*v));
	if (i > max && tgr_once(c->job_ptr->job_id, "fallback-tries"))
		info("%s: %pJ: %u domains of layer %s could hold it; only the "
		     "first %u (FALLBACK_MAX_TRIES) are tried one by one",
		     plugin_type, c->job_ptr, i,
		     tg_topology_layer_name(c->t, layer), max);
	xfree(v);
	return n;
}

/* The deepest layer the job's request must gather in; TG_NONE if none. */
static unsigned _must_layer(ctx_t *c)
{
	unsigned i, best = TG_NONE;

	for (i = 0; i < tg_gang_ngathers(c->g); i++) {
		tg_gather how;
		const char *name = tg_gang_gather_at(c->g, i, &how);
		unsigned l;

		if (how != TG_GATHER_MUST || !name ||
		    (l = tg_topology_layer_find(c->t, name)) == TG_NONE)
			continue;
		if (best == TG_NONE || l > best)
			best = l;
	}
	return best;
}

typedef struct jt_args {
	uint32_t min_nodes, max_nodes, req_nodes;
	uint16_t mode;
	List cands;
	List *preemptee_job_list;
	bitstr_t *exc_core_bitmap;
} jt_args_t;

/* select/cons_tres on \p orig narrowed to \p want (all of it: NULL),
 * its answer left in \p bitmap. */
static int _inner_on(job_record_t *job_ptr, bitstr_t *bitmap,
		     bitstr_t *orig, bitstr_t *want, const jt_args_t *a)
{
	if (a->preemptee_job_list)
		FREE_NULL_LIST(*a->preemptee_job_list);
	bit_copybits(bitmap, orig);
	if (want)
		bit_and(bitmap, want);
	return (*(inner.job_test))(job_ptr, bitmap, a->min_nodes,
				   a->max_nodes, a->req_nodes, a->mode,
				   a->cands, a->preemptee_job_list,
				   a->exc_core_bitmap);
}

/* Tries the domains of \p layer one by one; SLURM_SUCCESS on the first
 * where cons_tres starts the job (its path in \p where). */
static int _fallback_layer(ctx_t *c, bitstr_t *bitmap, bitstr_t *orig,
			   unsigned layer, const jt_args_t *a,
			   unsigned *budget, char *where, size_t wlen)
{
	dom_try_t tries[FALLBACK_MAX_TRIES];
	unsigned n, k;

	n = _domain_tries(c, orig, layer, a->min_nodes,
			  (uint32_t) bit_set_count(orig), tries, *budget);
	for (k = 0; k < n; k++) {
		bitstr_t *b = _domain_bitmap(c, orig, layer, tries[k].d);
		int rc = _inner_on(c->job_ptr, bitmap, orig, b, a);

		FREE_NULL_BITMAP(b);
		(*budget)--;
		if (rc == SLURM_SUCCESS) {
			snprintf(where, wlen, "%s", tries[k].path);
			return SLURM_SUCCESS;
		}
	}
	return SLURM_ERROR;
}

/*
 * The end of a fallback or will-run try over \p orig: on failure the
 * preemptee list goes and \p bitmap is as \p given; both copies freed.
 */
static int _try_end(int rc, bitstr_t *bitmap, bitstr_t *orig,
		    bitstr_t *given, const jt_args_t *a)
{
	if (rc != SLURM_SUCCESS) {
		if (a->preemptee_job_list)
			FREE_NULL_LIST(*a->preemptee_job_list);
		bit_copybits(bitmap, given);
	}
	FREE_NULL_BITMAP(orig);
	FREE_NULL_BITMAP(given);
	return rc;
}

/*
 * The core and select/cons_tres disagree in run-now mode: the core's
 * model has no room for the job (or cons_tres refused the nodes the core
 * chose) where cons_tres may start it.  cons_tres decides, on the core's
 * order of preference, and a request's MUST stays hard:
 *  - first cons_tres on every candidate node: when it cannot start the
 *    job there it cannot start it now, and the job waits with the core's
 *    reason (one call, as cons_tres alone would make);
 *  - then, unless it had to preempt, the tightest place it can start in:
 *    the domains of the must layer (a gather ... :must, --switches=1)
 *    one by one, else of each layer from the leaves up, fewest eligible
 *    nodes first, at most FALLBACK_MAX_TRIES calls; without a must
 *    layer, cons_tres's own choice when no domain takes the job;
 *  - a hard spread or a slice, which only the core can check, never
 *    falls back.
 * Returns cons_tres's answer; on failure \p bitmap is as given.  \p where
 * says where the job went.
 */
static int _fallback(ctx_t *c, bitstr_t *bitmap, const jt_args_t *a,
		     char *where, size_t wlen)
{
	bitstr_t *given = bit_copy(bitmap), *orig = bit_copy(bitmap);
	unsigned must = _must_layer(c), budget = FALLBACK_MAX_TRIES, l;
	int rc;

	(void) tgh_trim(c->job_ptr->job_id, orig);
	snprintf(where, wlen, "select/cons_tres's choice");
	if ((c->must && must == TG_NONE) || c->slice) {
		rc = SLURM_ERROR;	/* a hard spread, a slice */
		goto out;
	}
	rc = _inner_on(c->job_ptr, bitmap, orig, NULL, a);
	if (rc != SLURM_SUCCESS ||
	    (a->preemptee_job_list && *a->preemptee_job_list &&
	     list_count(*a->preemptee_job_list) && must == TG_NONE))
		goto out;
	if (must != TG_NONE) {
		rc = _fallback_layer(c, bitmap, orig, must, a, &budget, where,
				     wlen);
		goto out;
	}
	for (l = tg_topology_nlayers(c->t); l-- > 0 && budget;)
		if (_fallback_layer(c, bitmap, orig, l, a, &budget, where,
				    wlen) == SLURM_SUCCESS)
			goto out;
	/* no domain took it: cons_tres's own choice, again */
	snprintf(where, wlen, "select/cons_tres's choice");
	rc = _inner_on(c->job_ptr, bitmap, orig, NULL, a);
out:
	return _try_end(rc, bitmap, orig, given, a);
}

/*
 * When a job with a must layer (a gather ...:must, --switches=1) could
 * start, for backfill's plan (WILL_RUN): cons_tres's estimate restricted
 * to each domain of the must layer in turn (the domains _domain_tries
 * gives, at most FALLBACK_MAX_TRIES), the earliest kept, ties in that
 * order; its nodes are left in \p bitmap and its start in
 * job_ptr->start_time, so backfill reserves them and smaller jobs do not
 * starve the job.  SLURM_ERROR (bitmap as given) when no domain has an
 * estimate or the job has no must layer (a hard spread): _will_run_core
 * answers then.
 */
static int _will_run_must(ctx_t *c, bitstr_t *bitmap, const jt_args_t *a)
{
	dom_try_t tries[FALLBACK_MAX_TRIES];
	unsigned must = _must_layer(c), n, k, best = UINT_MAX;
	bitstr_t *orig, *given, *b;
	time_t best_t = 0;
	int rc = SLURM_ERROR;

	if (must == TG_NONE)
		return SLURM_ERROR;
	given = bit_copy(bitmap);
	orig = bit_copy(bitmap);
	(void) tgh_trim(c->job_ptr->job_id, orig);
	n = _domain_tries(c, orig, must, a->min_nodes, UINT32_MAX, tries,
			  FALLBACK_MAX_TRIES);
	for (k = 0; k < n; k++) {
		b = _domain_bitmap(c, orig, must, tries[k].d);
		if (_inner_on(c->job_ptr, bitmap, orig, b, a) ==
		    SLURM_SUCCESS &&
		    (best == UINT_MAX || c->job_ptr->start_time < best_t)) {
			best = k;
			best_t = c->job_ptr->start_time;
		}
		FREE_NULL_BITMAP(b);
	}
	if (best != UINT_MAX) {
		/* again on the best, for its nodes and preemptees */
		b = _domain_bitmap(c, orig, must, tries[best].d);
		rc = _inner_on(c->job_ptr, bitmap, orig, b, a);
		FREE_NULL_BITMAP(b);
		if (rc == SLURM_SUCCESS)
			_log_decision("JobId=%u mode=%u: no room now; "
				      "select/cons_tres's estimate in %s: "
				      "start %ld", c->job_ptr->job_id,
				      a->mode, tries[best].path,
				      (long) c->job_ptr->start_time);
	}
	return _try_end(rc, bitmap, orig, given, a);
}

/* A running job of the model and when it ends (_will_run_core). */
typedef struct wr_end {
	uint32_t job_id;
	time_t end;
	bool cand;
} wr_end_t;

static int _wr_end_cmp(const void *a, const void *b)
{
	const wr_end_t *x = a, *y = b;

	if (x->end != y->end)
		return (x->end > y->end) - (x->end < y->end);
	return (x->job_id > y->job_id) - (x->job_id < y->job_id);
}

/* The model's running jobs but \p job_ptr, by end time (none before
 * \p now + 1: an overdue job ends at the earliest next second). */
static wr_end_t *_wr_ends(job_record_t *job_ptr, time_t now, size_t *n)
{
	wr_end_t *v = xcalloc(model.njobs ? model.njobs : 1, sizeof(*v));
	job_record_t *jp;

	*n = 0;
	for (size_t i = 0; i < model.njobs; i++) {
		if (!(jp = find_job_record(model.jobs[i].job_id)) ||
		    jp == job_ptr)
			continue;
		v[*n].job_id = jp->job_id;
		v[*n].end = MAX(jp->end_time, now + 1);
		v[(*n)++].cand = model.jobs[i].cand;
	}
	qsort(v, *n, sizeof(*v), _wr_end_cmp);
	return v;
}

/* Leaves exactly the first \p p jobs of \p v out of the model (\p *cur
 * of them are out now): removes or adds back the difference. */
static void _wr_set(const wr_end_t *v, size_t *cur, size_t p)
{
	job_record_t *jp;

	for (; *cur < p; (*cur)++)
		_model_remove_job(v[*cur].job_id);
	for (; *cur > p; (*cur)--)
		if ((jp = find_job_record(v[*cur - 1].job_id)))
			_model_add_job(jp, v[*cur - 1].cand);
}

/* The core's placement of the job with the first \p p jobs of \p v out of
 * the model; NULL unless it is placed without preempting (and, for
 * c->wr_switches, on at most --switches=N leaf switches). */
static tg_decision *_wr_place(ctx_t *c, const wr_end_t *v, size_t *cur,
			      size_t p)
{
	tg_decision *d = NULL;
	tg_errinfo ei;
	char why[TGS_ERRLEN];

	memset(&ei, 0, sizeof(ei));
	_wr_set(v, cur, p);
	if (tg_place(c->t, c->g, &d, &ei) != TG_OK ||
	    tg_decision_status(d) != TG_STATUS_PLACED ||
	    (c->wr_switches &&
	     tgj_switches_wait(c->job_ptr, c->t, d, time(NULL), why,
			       sizeof(why)))) {
		tg_decision_free(d);
		return NULL;
	}
	return d;
}

/*
 * The earliest end time of running jobs after which the core places the
 * job (its decision replaces c->d), 0 if none: the model's running jobs
 * leave it in end-time order, all of one end time together, and a
 * binary search over those end times finds the first that frees room
 * (one placement per halving: about log2 of the running jobs, whatever
 * their number; it takes room to grow as jobs end, which holds for the
 * core's fill).  The model is as before on return.
 */
static time_t _wr_core_time(ctx_t *c, time_t now)
{
	size_t n, ng = 0, cur = 0, lo = 0, hi, mid, *grp;
	wr_end_t *v = _wr_ends(c->job_ptr, now, &n);
	tg_decision *best, *d;
	time_t t = 0;

	grp = xcalloc(n ? n : 1, sizeof(*grp));
	for (size_t i = 0; i < n; i++)	/* prefix lengths, one per time */
		if (i + 1 == n || v[i + 1].end != v[i].end)
			grp[ng++] = i + 1;
	if (!ng || !(best = _wr_place(c, v, &cur, grp[ng - 1])))
		goto out;		/* no room even on an empty cluster */
	hi = ng - 1;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((d = _wr_place(c, v, &cur, grp[mid]))) {
			tg_decision_free(best);
			best = d;
			hi = mid;
		} else {
			lo = mid + 1;
		}
	}
	tg_decision_free(c->d);
	c->d = best;
	t = v[grp[hi] - 1].end;
out:
	_wr_set(v, &cur, 0);
	xfree(grp);
	xfree(v);
	return t;
}

/*
 * Will-run for a job the core cannot place now whatever cons_tres
 * estimates (a hard spread; a must layer with no estimate in any of its
 * domains): the core places it again on the model as the running jobs
 * end (_wr_core_time), and its start is that end time or cons_tres's
 * estimate on the nodes the core chose, the later; when cons_tres has
 * none there, the core's nodes and time.  So backfill reserves nodes
 * for it and never sees "now" for a job that cannot start now.
 * SLURM_ERROR (bitmap as given) only when the core cannot place the job
 * even with every running job gone.
 */
static int _will_run_core(ctx_t *c, bitstr_t *bitmap, const jt_args_t *a)
{
	job_record_t *job_ptr = c->job_ptr;
	bitstr_t *given = bit_copy(bitmap), *orig = bit_copy(bitmap), *want;
	time_t now = time(NULL), t;
	int rc = SLURM_ERROR;
	const char *how = "select/cons_tres's estimate on them";

	(void) tgh_trim(job_ptr->job_id, orig);
	if (!(t = _wr_core_time(c, now)))
		return _try_end(rc, bitmap, orig, given, a);
	want = _decision_part(c, UINT_MAX);
	bit_and(want, orig);
	rc = _inner_on(job_ptr, bitmap, orig, want, a);
	if (rc != SLURM_SUCCESS) {
		if (a->preemptee_job_list)
			FREE_NULL_LIST(*a->preemptee_job_list);
		bit_copybits(bitmap, want);
		job_ptr->start_time = t;
		how = "select/cons_tres has none on them";
		rc = SLURM_SUCCESS;
	} else if (job_ptr->start_time < t) {
		job_ptr->start_time = t;
	}
	FREE_NULL_BITMAP(want);
	if (c->wr_switches)
		_log_decision("JobId=%u mode=%u: no room now on %u leaf "
			      "switches; the core places it on %u in %s "
			      "when running jobs end at %ld (%s): start %ld",
			      job_ptr->job_id, a->mode, job_ptr->req_switch,
			      job_ptr->req_switch, tg_decision_domain(c->d),
			      (long) t, how, (long) job_ptr->start_time);
	else
		_log_decision("JobId=%u mode=%u: no room now; the core places "
			      "it in %s when running jobs end at %ld (%s): "
			      "start %ld", job_ptr->job_id, a->mode,
			      tg_decision_domain(c->d), (long) t, how,
			      (long) job_ptr->start_time);
	return _try_end(rc, bitmap, orig, given, a);
}

/*
 * Will-run for a --switches=N job (N > 1) still within its wait whose
 * placement now spans more leaf switches: as _will_run_core, the running
 * jobs leaving the model in end-time order until the core places it on
 * at most N leaf switches; its start is that end time or cons_tres's
 * estimate on those nodes, the later.  So backfill reserves nodes for it
 * (cons_tres's own will-run does the same for topology/tree).
 */
static int _will_run_switches(ctx_t *c, bitstr_t *bitmap,
			      const jt_args_t *a)
{
	int rc;

	if (c->nhet)
		return SLURM_ERROR;
	c->wr_switches = true;
	rc = _will_run_core(c, bitmap, a);
	c->wr_switches = false;
	return rc;
}

/* Will-run for a job with a must layer or a hard spread: inside one
 * domain of the layer, else the core's own time. */
static int _will_run(ctx_t *c, bitstr_t *bitmap, const jt_args_t *a)
{
	if (c->nhet)
		return SLURM_ERROR;
	if (_will_run_must(c, bitmap, a) == SLURM_SUCCESS)
		return SLURM_SUCCESS;
	return _will_run_core(c, bitmap, a);
}

/*
 * Run-now and the core says no room (\p refused false) or cons_tres
 * refused the core's nodes (\p refused true): _fallback decides.  On
 * success the job starts where cons_tres put it, logged once and
 * counted; otherwise it waits with \p why as its reason.
 */
static int _disagree(ctx_t *c, bitstr_t *bitmap, const jt_args_t *a,
		     bool refused, const char *why)
{
	char where[256], *sel;
	uint64_t *count = refused ? &fallback_refused : &fallback_nospace;
	int rc = _fallback(c, bitmap, a, where, sizeof(where));

	if (rc != SLURM_SUCCESS) {
		if (!tgr_set(c->job_ptr, why))
			return rc;
		if (refused && c->must &&
		    tgr_once(c->job_ptr->job_id, "refused-must"))
			error("%s: %pJ: %s; the job waits (its request has a "
			      "must layer)", plugin_type, c->job_ptr, why);
		else
			_log_decision("JobId=%u gather=%s (%s): %s",
				      c->job_ptr->job_id, c->gather_txt,
				      c->gather_src, why);
		return rc;
	}
	tgr_drop(c->job_ptr->job_id);
	(*count)++;
	sel = bitmap2node_name(bitmap);
	if (tgr_once(c->job_ptr->job_id, refused ? "fallback-refused" :
		  "fallback-nospace"))
		info("%s: %pJ gather=%s (%s): %s; select/cons_tres can start "
		     "it: placed on %s (%s), fallback %" PRIu64 " of this "
		     "kind since start", plugin_type, c->job_ptr,
		     c->gather_txt, c->gather_src, why, sel, where, *count);
	xfree(sel);
	return rc;
}

/* The core could not decide: cons_tres chooses (Fallback=yes) or the job
 * waits with the error as its reason (Fallback=no). */
static void _core_failed(job_record_t *job_ptr, const char *why,
			 bool *fallback)
{
	char msg[TGS_ERRLEN + 64];

	if (site_conf.fallback) {
		if (tgr_once(job_ptr->job_id, "core-failed"))
			error("%s: %pJ: the core cannot decide (%s); "
			      "select/cons_tres chooses", plugin_type,
			      job_ptr, why);
		*fallback = true;
		return;
	}
	snprintf(msg, sizeof(msg), "topogang: cannot decide: %s", why);
	if (tgr_set(job_ptr, msg) && tgr_once(job_ptr->job_id, "core-failed"))
		error("%s: %pJ: the core cannot decide (%s); the job waits "
		      "(Fallback=no)", plugin_type, job_ptr, why);
}

/* The job's gpu request when it is one record (not several types). */
static gres_job_state_t *_gres_job_gpu_req(job_record_t *job_ptr)
{
	ListIterator it;
	gres_state_t *gs;
	gres_job_state_t *js = NULL;
	int n = 0;

	if (!job_ptr->gres_list_req || !tgj_gpu_plugin_id)
		return NULL;
	it = list_iterator_create(job_ptr->gres_list_req);
	while ((gs = list_next(it)))
		if (gs->plugin_id == tgj_gpu_plugin_id && gs->gres_data) {
			js = gs->gres_data;
			n++;
		}
	list_iterator_destroy(it);
	return n == 1 ? js : NULL;
}

/* Bit \p g of a node is a GPU of type \p type_id (0: any). */
static bool _gpu_type_ok(gres_node_state_t *ns, uint32_t type_id, int g)
{
	int t;

	if (!type_id)
		return true;
	for (t = 0; t < ns->topo_cnt; t++)
		if (ns->topo_type_id && ns->topo_type_id[t] == type_id &&
		    ns->topo_gres_bitmap && ns->topo_gres_bitmap[t] &&
		    g < bit_size(ns->topo_gres_bitmap[t]) &&
		    bit_test(ns->topo_gres_bitmap[t], g))
			return true;
	return false;
}

/*
 * The core's GPU indices for a partial-node job (one NVLink island when
 * one holds the job's GPUs on that node) in place of the ones cons_tres
 * picked.  In 22.05, cons_tres's job_test leaves its pick in the job's
 * gres_bit_select[node] (gres_select_filter_select_and_set); slurmctld
 * then copies it into the job's gres_bit_alloc and the node's
 * gres_bit_alloc when the job starts (gres_ctld_job_alloc, from
 * select_g_select_nodeinfo_set), so rewriting the selection here changes
 * both records consistently.  The rewrite is skipped, and cons_tres's
 * pick stays, unless it is safe: the same count, every chosen GPU free on
 * the node and of the requested type, no --gres-flags=enforce-binding
 * (cons_tres chose by socket then), one gpu request.  A preemptor's
 * picks are the ones the core made when it chose the victims, kept with
 * its held nodes until it starts.
 */
static void _steer_gpus(job_record_t *job_ptr, const gpu_pick_t *picks,
			unsigned npicks)
{
	gres_job_state_t *js = _gres_job_gpu_req(job_ptr);
	job_resources_t *jr = job_ptr->job_resrcs;
	unsigned i;

	if (!js || !js->gres_bit_select || !jr || !jr->node_bitmap ||
	    (job_ptr->bit_flags & GRES_ENFORCE_BIND))
		return;
	for (i = 0; i < npicks; i++) {
		const gpu_pick_t *p = &picks[i];
		gres_node_state_t *ns;
		node_record_t *node_ptr;
		bitstr_t *b;
		uint32_t k = p->node;
		int g, sz, want = __builtin_popcountll(p->gpus);
		bool same = true, ok = true;
		char *was, *now;

		if (!p->gpus || (int) k >= node_record_count ||
		    (int) k >= bit_size(jr->node_bitmap) ||
		    !bit_test(jr->node_bitmap, k) ||
		    !(b = js->gres_bit_select[k]) ||
		    !(node_ptr = node_record_table_ptr[k]) ||
		    !(ns = tgj_node_gpu_state(node_ptr)))
			continue;
		sz = bit_size(b);
		if (bit_set_count(b) != want ||
		    (js->gres_cnt_node_select &&
		     js->gres_cnt_node_select[k] != (uint64_t) want) ||
		    (ns->gres_bit_alloc && bit_size(ns->gres_bit_alloc) != sz))
			continue;
		for (g = 0; g < 64 && ok; g++) {
			bool in = (p->gpus >> g) & 1;

			if (!in) {
				if (g < sz && bit_test(b, g))
					same = false;
				continue;
			}
			if (g >= sz ||
			    (ns->gres_bit_alloc &&
			     bit_test(ns->gres_bit_alloc, g)) ||
			    !_gpu_type_ok(ns, js->type_id, g))
				ok = false;
			else if (!bit_test(b, g))
				same = false;
		}
		if (!ok || same)
			continue;
		was = bit_fmt_full(b);
		bit_clear_all(b);
		for (g = 0; g < sz; g++)
			if ((p->gpus >> g) & 1)
				bit_set(b, g);
		now = bit_fmt_full(b);
		info("%s: %pJ: GPUs %s of %s (one NVLink island where one "
		     "holds them) instead of select/cons_tres's %s",
		     plugin_type, job_ptr, now, node_ptr->name, was);
		xfree(was);
		xfree(now);
	}
}

/* The decision's GPU choices as (node index, mask); *n of them. */
static gpu_pick_t *_decision_picks(ctx_t *c, unsigned *n)
{
	unsigned i, np = tg_decision_nplacements(c->d);
	gpu_pick_t *picks;

	*n = 0;
	if (!np)
		return NULL;
	picks = xcalloc(np, sizeof(*picks));
	for (i = 0; i < np; i++) {
		const tg_placement *p = tg_decision_placement(c->d, i);

		unsigned k;

		if (!p->gpus || p->node >= c->ntg ||
		    c->tg2slurm[p->node] == NO_VAL)
			continue;
		/* several tasks on a node: the node's pick is their union */
		for (k = 0; k < *n; k++)
			if (picks[k].node == c->tg2slurm[p->node])
				break;
		if (k < *n) {
			picks[k].gpus |= p->gpus;
			continue;
		}
		picks[*n].node = c->tg2slurm[p->node];
		picks[*n].gpus = p->gpus;
		(*n)++;
	}
	return picks;
}

typedef struct typed_arg {
	gres_node_state_t *ns;
	bool ok;
} typed_arg_t;

/* One gpu request of a type: the node has enough GPUs of it. */
static int _typed_one(void *x, void *arg)
{
	gres_state_t *gs = x;
	gres_job_state_t *js = gs->gres_data;
	typed_arg_t *a = arg;
	uint64_t have = 0, need;

	if (gs->plugin_id != tgj_gpu_plugin_id || !js || !js->type_id)
		return 0;
	need = js->gres_per_node ? js->gres_per_node :
	       js->gres_per_socket ? js->gres_per_socket : 1;
	for (int t = 0; a->ns && t < a->ns->type_cnt; t++)
		if (a->ns->type_id && a->ns->type_id[t] == js->type_id &&
		    a->ns->type_cnt_avail)
			have += a->ns->type_cnt_avail[t];
	if (have < need)
		a->ok = false;
	return 0;
}

static int _is_typed_gpu(void *x, void *key)
{
	gres_state_t *gs = x;
	gres_job_state_t *js = gs->gres_data;

	(void) key;
	return gs->plugin_id == tgj_gpu_plugin_id && js && js->type_id;
}

/*
 * GPU types (--gpus=a100:2, --gres=gpu:a100:1): the core counts GPUs,
 * not their types, so the nodes without enough GPUs of a type the job
 * asks for are not offered to the core (cons_tres skips them too).
 * Returns \p bitmap without them (caller frees), NULL when the job asks
 * for no GPU type.
 */
static bitstr_t *_gpu_type_filter(job_record_t *job_ptr, bitstr_t *bitmap)
{
	bitstr_t *b;
	int k;

	if (!job_ptr->gres_list_req || !tgj_gpu_plugin_id ||
	    !list_find_first(job_ptr->gres_list_req, _is_typed_gpu, NULL))
		return NULL;
	b = bit_copy(bitmap);
	for (k = 0; k < node_record_count && k < bit_size(b); k++) {
		typed_arg_t a = { .ok = true };

		if (!bit_test(b, k) || !node_record_table_ptr[k])
			continue;
		a.ns = tgj_node_gpu_state(node_record_table_ptr[k]);
		(void) list_for_each(job_ptr->gres_list_req, _typed_one, &a);
		if (!a.ok)
			bit_clear(b, k);
	}
	return b;
}

/* _inner_narrowed() with \p a's arguments and \p cands. */
static int _inner_jt(job_record_t *job_ptr, bitstr_t *bitmap, bitstr_t *want,
		     List cands, const jt_args_t *a)
{
	return _inner_narrowed(job_ptr, bitmap, want, a->min_nodes,
			       a->max_nodes, a->req_nodes, a->mode, cands,
			       a->preemptee_job_list, a->exc_core_bitmap);
}

/* A preemptor waits for the nodes it freed, \p own (_topo_job_test). */
static int _test_held(job_record_t *job_ptr, bitstr_t *bitmap,
		      tgh_hold_t *own, const jt_args_t *a)
{
	bool run_now = SELECT_IS_MODE_RUN_NOW(a->mode);
	char why[TGS_ERRLEN + 64], *nodes = NULL;
	bitstr_t *orig;
	int rc;

	if (!bit_super_set(own->nodes, bitmap) && run_now) {
		bitstr_t *miss = bit_copy(own->nodes);

		bit_and_not(miss, bitmap);
		nodes = bitmap2node_name(miss);
		snprintf(why, sizeof(why), "topogang: waiting for preempted "
			 "jobs to leave %s (held for this job)", nodes);
		tgr_set(job_ptr, why);
		FREE_NULL_BITMAP(miss);
		xfree(nodes);
		return SLURM_ERROR;
	}
	orig = bit_copy(bitmap);
	rc = _inner_jt(job_ptr, bitmap, own->nodes, a->cands, a);
	if (rc == SLURM_SUCCESS) {
		if (run_now && !(a->preemptee_job_list &&
				 *a->preemptee_job_list))
			_steer_gpus(job_ptr, own->picks, own->npicks);
		if (run_now) {
			nodes = bitmap2node_name(bitmap);
			info("%s: %pJ placed on %s, the nodes its preemption "
			     "freed", plugin_type, job_ptr, nodes);
		}
	} else {
		bit_copybits(bitmap, orig);
		if (run_now) {
			nodes = bitmap2node_name(own->nodes);
			snprintf(why, sizeof(why), "topogang: waiting for "
				 "held nodes %s", nodes);
			tgr_set(job_ptr, why);
		}
	}
	FREE_NULL_BITMAP(orig);
	xfree(nodes);
	return rc;
}

/* A heterogeneous job's component: \p part, its part of the gang's
 * placement made for an earlier component (_topo_job_test). */
static int _test_het_part(job_record_t *job_ptr, bitstr_t *bitmap,
			  bitstr_t *part, const jt_args_t *a, bool *fallback)
{
	bool run_now = SELECT_IS_MODE_RUN_NOW(a->mode);
	char why[TGS_ERRLEN + 64], *nodes;
	bitstr_t *orig = bit_copy(bitmap), *want = bit_copy(part);
	int rc = _inner_jt(job_ptr, bitmap, want, NULL, a);

	nodes = bitmap2node_name(want);
	if (rc != SLURM_SUCCESS) {
		bit_copybits(bitmap, orig);
		snprintf(why, sizeof(why), "topogang: select/cons_tres refused "
			 "%s, this component's part of heterogeneous JobId=%u "
			 "in %s", nodes, job_ptr->het_job_id, het_plan.domain);
		if (het_plan.must) {
			if (tgr_set(job_ptr, why) &&
			    tgr_once(job_ptr->job_id, "het-refused-must"))
				error("%s: %pJ: %s; the job waits (its request "
				      "has a must layer)", plugin_type, job_ptr,
				      why);
		} else {
			if (run_now &&
			    tgr_once(job_ptr->job_id, "het-refused"))
				error("%s: %pJ: %s; select/cons_tres chooses",
				      plugin_type, job_ptr, why);
			*fallback = true;
		}
	} else {
		tgr_drop(job_ptr->job_id);
		if (run_now)
			info("%s: %pJ placed on %s in %s, its part of "
			     "heterogeneous JobId=%u", plugin_type, job_ptr,
			     nodes, het_plan.domain, job_ptr->het_job_id);
		else
			_log_decision("JobId=%u mode=%u placed on %s in %s "
				      "(heterogeneous JobId=%u)",
				      job_ptr->job_id, a->mode, nodes,
				      het_plan.domain, job_ptr->het_job_id);
	}
	xfree(nodes);
	FREE_NULL_BITMAP(want);
	FREE_NULL_BITMAP(orig);
	return rc;
}

/* The core found no room: a run-now test asks cons_tres; a will-run test
 * gets cons_tres's time, or for a must layer or a hard spread one inside
 * a domain of the must layer, else the core's (_will_run). */
static int _test_unsched(ctx_t *c, bitstr_t *bitmap, const jt_args_t *a,
			 bool *fallback)
{
	job_record_t *job_ptr = c->job_ptr;
	char why[TGS_ERRLEN + 64];

	snprintf(why, sizeof(why), "topogang: %s", tg_decision_message(c->d));
	if (SELECT_IS_MODE_RUN_NOW(a->mode) && !c->nhet)
		/* no room in the model: cons_tres may see some (not for a
		 * heterogeneous gang: its components would start apart) */
		return _disagree(c, bitmap, a, false, why);
	if (tgr_set(job_ptr, why))
		_log_decision("JobId=%u gather=%s (%s) mode=%u: %s",
			      job_ptr->job_id, c->gather_txt, c->gather_src,
			      a->mode, why);
	if (SELECT_IS_MODE_WILL_RUN(a->mode) && !c->must)
		*fallback = true;	/* cons_tres says when it could start */
	else if (SELECT_IS_MODE_WILL_RUN(a->mode))
		/* when: inside one domain of its must layer, or the core's */
		return _will_run(c, bitmap, a);
	return SLURM_ERROR;
}

/* The core's victims, as job records (list_destroy()). */
static List _victim_list(ctx_t *c)
{
	List victims = list_create(NULL);

	for (unsigned i = 0; i < tg_decision_nvictims(c->d); i++) {
		const tg_victim *v = tg_decision_victim(c->d, i);
		job_record_t *vj = _victim_job(v);

		if (!vj || v->reservation ||
		    list_find_first(victims, _ptr_eq, vj))
			continue;
		list_append(victims, vj);
	}
	return victims;
}

/*
 * cons_tres refused the core's nodes \p nodes with \p rc (\p bitmap put
 * back): a run-now test asks cons_tres on all of them; a must request
 * waits (a will-run test first gets a time from _will_run);
 * any other falls back to cons_tres.
 */
static int _test_refused(ctx_t *c, bitstr_t *bitmap, const jt_args_t *a,
			 const char *nodes, int rc, bool *fallback)
{
	job_record_t *job_ptr = c->job_ptr;
	bool run_now = SELECT_IS_MODE_RUN_NOW(a->mode);
	char why[TGS_ERRLEN + 64];

	snprintf(why, sizeof(why), "topogang: select/cons_tres refused %s "
		 "chosen in %s", nodes, tg_decision_domain(c->d));
	if (run_now && !c->nhet)
		return _disagree(c, bitmap, a, true, why);
	if (c->must) {
		if (!run_now &&
		    (rc = _will_run(c, bitmap, a)) == SLURM_SUCCESS)
			return rc;
		if (tgr_set(job_ptr, why) &&
		    tgr_once(job_ptr->job_id, "refused-must"))
			error("%s: %pJ: %s; the job waits (its request has a "
			      "must layer)", plugin_type, job_ptr, why);
		return rc;
	}
	if (run_now && tgr_once(job_ptr->job_id, "refused"))
		error("%s: %pJ: %s; select/cons_tres chooses", plugin_type,
		      job_ptr, why);
	*fallback = true;
	return rc;
}

/* " over JobId=..(..), to be suspended; heterogeneous ..." for the log of
 * a placement cons_tres started without a preemptee list (xfree()). */
static char *_over_txt(ctx_t *c, List victims)
{
	char *over = NULL;

	/*
	 * Preempting, and cons_tres started the job without a preemptee
	 * list: the victims' cores are in a lower row
	 * (PreemptMode=SUSPEND,GANG), and the gang scheduler suspends them,
	 * exactly these since only they share the job's nodes.
	 */
	if (victims && list_count(victims)) {
		ListIterator it = list_iterator_create(victims);
		job_record_t *vj;

		while ((vj = list_next(it)))
			xstrfmtcat(over, "%sJobId=%u(%s)", over ? "," : " over ",
				   vj->job_id, vj->nodes);
		list_iterator_destroy(it);
		xstrcat(over, ", to be suspended");
	}
	if (c->nhet) {
		bitstr_t *b = _decision_part(c, UINT_MAX);
		char *all = bitmap2node_name(b);

		FREE_NULL_BITMAP(b);
		xstrfmtcat(over, "; heterogeneous JobId=%u, %u components as "
			   "one gang on %s", c->job_ptr->het_job_id, c->nhet,
			   all);
		xfree(all);
	}
	return over;
}

/* Logs a preempting decision cons_tres accepted (a hold of the nodes
 * proposed for a run-now test, taken once slurmctld commits). */
static void _log_preempting(ctx_t *c, bitstr_t *bitmap, bitstr_t *want,
			    const char *nodes, gpu_pick_t *picks,
			    unsigned npicks, const jt_args_t *a)
{
	job_record_t *job_ptr = c->job_ptr;
	char *vnames = NULL, *sel = bitmap2node_name(bitmap);
	ListIterator it;
	job_record_t *vj;

	if (a->preemptee_job_list && *a->preemptee_job_list) {
		it = list_iterator_create(*a->preemptee_job_list);
		while ((vj = list_next(it)))
			xstrfmtcat(vnames, "%sJobId=%u(%s)", vnames ? "," : "",
				   vj->job_id, vj->nodes);
		list_iterator_destroy(it);
	}
	if (SELECT_IS_MODE_RUN_NOW(a->mode)) {
		/* tentative: taken once slurmctld commits (tghold.h) */
		tgh_propose(job_ptr, want, picks, npicks,
			    site_conf.reserve_time);
		info("%s: %pJ gather=%s (%s) preempting %s for %s in %s: %s",
		     plugin_type, job_ptr, c->gather_txt, c->gather_src,
		     vnames, nodes, tg_decision_domain(c->d),
		     tg_decision_message(c->d));
	} else {
		_log_decision("JobId=%u mode=%u would preempt for %s in %s",
			      job_ptr->job_id, a->mode, sel,
			      tg_decision_domain(c->d));
	}
	xfree(vnames);
	xfree(sel);
}

/* cons_tres accepted the core's nodes \p want: steer the GPUs, keep a
 * heterogeneous gang's plan, hold a preemptor's nodes, log. */
static void _test_accepted(ctx_t *c, bitstr_t *bitmap, bitstr_t *want,
			   const char *nodes, List victims,
			   const jt_args_t *a, time_t now)
{
	job_record_t *job_ptr = c->job_ptr;
	bool run_now = SELECT_IS_MODE_RUN_NOW(a->mode);
	bool listed = a->preemptee_job_list && *a->preemptee_job_list;
	unsigned npicks = 0;
	gpu_pick_t *picks;

	tgr_drop(job_ptr->job_id);
	if (c->nhet)
		_het_plan_keep(c, now);
	picks = _decision_picks(c, &npicks);
	if (run_now && !listed)
		_steer_gpus(job_ptr, picks, npicks);
	if (tg_decision_status(c->d) == TG_STATUS_PREEMPTING &&
	    (!run_now || listed)) {
		_log_preempting(c, bitmap, want, nodes, picks, npicks, a);
	} else if (run_now) {
		char *sel = bitmap2node_name(bitmap);
		char *over = _over_txt(c, victims);

		info("%s: %pJ gather=%s (%s) placed on %s in %s (%g Gbit/s)%s",
		     plugin_type, job_ptr, c->gather_txt, c->gather_src, sel,
		     tg_decision_domain(c->d),
		     tg_decision_bandwidth_gbps(c->d), over ? over : "");
		xfree(over);
		xfree(sel);
	} else {
		_log_decision("JobId=%u mode=%u placed on %s in %s",
			      job_ptr->job_id, a->mode, nodes,
			      tg_decision_domain(c->d));
	}
	xfree(picks);
}

/* The core's decision in \p c, built and placed (_topo_job_test). */
static int _test_core(ctx_t *c, bitstr_t *bitmap, const jt_args_t *a,
		      time_t now, bool *fallback)
{
	job_record_t *job_ptr = c->job_ptr;
	char why[TGS_ERRLEN + 64] = "";
	bitstr_t *orig, *want;
	List victims = NULL;
	char *nodes;
	int rc;

	if (tg_decision_status(c->d) != TG_STATUS_UNSCHEDULABLE &&
	    tgj_switches_wait(job_ptr, c->t, c->d, now, why, sizeof(why))) {
		if (tgr_set(job_ptr, why))
			_log_decision("JobId=%u mode=%u: %s", job_ptr->job_id,
				      a->mode, why);
		if (SELECT_IS_MODE_WILL_RUN(a->mode))
			/* when it fits on N: backfill reserves that */
			return _will_run_switches(c, bitmap, a);
		return SLURM_ERROR;
	}
	if (tg_decision_status(c->d) == TG_STATUS_UNSCHEDULABLE)
		return _test_unsched(c, bitmap, a, fallback);
	orig = bit_copy(bitmap);
	if (tg_decision_status(c->d) == TG_STATUS_PREEMPTING) {
		want = _decision_part(c, UINT_MAX);
		victims = _victim_list(c);
	} else {
		want = _decision_part(c, c->nhet ? c->het_ps : UINT_MAX);
	}
	rc = _inner_jt(job_ptr, bitmap, want, victims, a);
	nodes = bitmap2node_name(want);
	if (rc != SLURM_SUCCESS) {
		bit_copybits(bitmap, orig);
		rc = _test_refused(c, bitmap, a, nodes, rc, fallback);
	} else {
		_test_accepted(c, bitmap, want, nodes, victims, a, now);
	}
	xfree(nodes);
	FREE_NULL_LIST(victims);
	FREE_NULL_BITMAP(want);
	FREE_NULL_BITMAP(orig);
	return rc;
}

/* select_p_job_test for a job the core places; see select_p_job_test. */
static int _topo_job_test(job_record_t *job_ptr, bitstr_t *bitmap,
			  uint32_t min_nodes, uint32_t max_nodes,
			  uint32_t req_nodes, uint16_t mode,
			  List preemptee_candidates,
			  List *preemptee_job_list,
			  bitstr_t *exc_core_bitmap, bool *fallback)
{
	ctx_t c;
	char why[TGS_ERRLEN + 64];
	tg_errinfo ei;
	bitstr_t *part, *typed = NULL;
	tgh_hold_t *own;
	time_t now = time(NULL);
	int rc = SLURM_ERROR;
	jt_args_t jt = {
		.min_nodes = min_nodes, .max_nodes = max_nodes,
		.req_nodes = req_nodes, .mode = mode,
		.cands = preemptee_candidates,
		.preemptee_job_list = preemptee_job_list,
		.exc_core_bitmap = exc_core_bitmap,
	};

	memset(&c, 0, sizeof(c));
	memset(&ei, 0, sizeof(ei));
	*fallback = false;
	tgh_update(job_ptr, now);

	if ((own = tgh_find(job_ptr->job_id)))
		return _test_held(job_ptr, bitmap, own, &jt);
	if ((part = tghet_plan_part(&het_plan, job_ptr, now)))
		return _test_het_part(job_ptr, bitmap, part, &jt, fallback);

	why[0] = '\0';
	typed = _gpu_type_filter(job_ptr, bitmap);
	if (_build(&c, job_ptr, typed ? typed : bitmap, min_nodes, max_nodes,
		   preemptee_candidates, why, sizeof(why))) {
		_core_failed(job_ptr, why, fallback);
		goto out;
	}
	if (tg_gang_check(c.t, c.g, &ei)) {
		/* the request itself is wrong (an unknown layer ...) */
		snprintf(why, sizeof(why), "topogang: %s", ei.msg);
		if (tgr_set(job_ptr, why) &&
		    tgr_once(job_ptr->job_id, "bad-request"))
			info("%s: %pJ: %s", plugin_type, job_ptr, why);
		goto out;
	}
	if (tg_place(c.t, c.g, &c.d, &ei)) {
		_core_failed(job_ptr, ei.msg[0] ? ei.msg : "placement failed",
			     fallback);
		goto out;
	}
	rc = _test_core(&c, bitmap, &jt, now, fallback);
out:
	FREE_NULL_BITMAP(typed);
	_ctx_free(&c);
	return rc;
}

/* ---- the plugin's entry points ---- */

extern int init(void)
{
	_choose_plugin_id();
	if (_inner_load() != SLURM_SUCCESS)
		return SLURM_ERROR;
	if (!running_in_slurmctld() ||
	    xstrcmp(slurm_conf.select_type, plugin_type)) {
		/* sinfo, srun, slurmd ...: forward only, quietly */
		debug("%s: forwarding to %s", plugin_type, inner_path);
		return SLURM_SUCCESS;
	}
	tgj_gpu_plugin_id = gres_build_id("gpu");
	tgs_conf_init(&site_conf);
	if (_load(true) == SLURM_SUCCESS)
		active = true;
	tgr_start(plugin_type);
	tgh_init(plugin_type);
	info("%s: forwarding to %s (plugin_id %u); topology placement %s",
	     plugin_type, inner_path, *(inner.plugin_id),
	     active ? "on" : "OFF until the configuration is fixed");
	if (plugin_id == SELECT_PLUGIN_CONS_TRES)
		info("%s: plugin_id %u, select/cons_tres's (no "
		     "select_cons_tres.so in PluginDir): core reservations "
		     "(CoreCnt=, TRES=cpu=) work and the job state is "
		     "select/cons_tres's", plugin_type, plugin_id);
	else
		info("%s: plugin_id %u, its own (select_cons_tres.so is in "
		     "PluginDir): scontrol refuses core reservations "
		     "(CoreCnt=, TRES=cpu=) and the job state needs "
		     "select_topogang.so to be read; see topogang.conf(5), "
		     "PLUGIN ID AND ROLLING BACK", plugin_type, plugin_id);
	return SLURM_SUCCESS;
}

extern int fini(void)
{
	tgr_stop();
	slurm_mutex_lock(&state_lock);
	tgh_free();
	_model_drop();
	_het_plan_drop();
	tg_free(topo_text);
	topo_text = NULL;
	tgs_conf_free(&site_conf);
	active = false;
	slurm_mutex_unlock(&state_lock);
	/* cons_tres stays loaded: slurmctld may hold its own handle. */
	return SLURM_SUCCESS;
}

/*
 * Saves the holds of preemptors with slurmctld's state (tghold.h).
 * slurmctld calls this holding none of its locks (save_all_state); the
 * holds look at job records, so the job read lock is taken, before the
 * plugin's own lock as in a node selection.
 */
extern int select_p_state_save(char *dir_name)
{
	slurmctld_lock_t job_read_lock = { .job = READ_LOCK };

	if (active) {
		lock_slurmctld(job_read_lock);
		slurm_mutex_lock(&state_lock);
		tgh_update(NULL, time(NULL));
		(void) tgh_save(dir_name);
		slurm_mutex_unlock(&state_lock);
		unlock_slurmctld(job_read_lock);
	}
	return (*(inner.state_save))(dir_name);
}

/* Reads the holds of preemptors back at slurmctld's start (tghold.h). */
extern int select_p_state_restore(char *dir_name)
{
	_model_dirty();
	if (active) {
		slurm_mutex_lock(&state_lock);
		(void) tgh_restore(dir_name);
		slurm_mutex_unlock(&state_lock);
	}
	return (*(inner.state_restore))(dir_name);
}

extern int select_p_job_init(List job_list_arg)
{
	_model_dirty();
	return (*(inner.job_init))(job_list_arg);
}

extern int select_p_node_init(void)
{
	_model_dirty();
	return (*(inner.node_init))();
}

/*
 * select_p_job_test - see select/cons_tres.  TEST_ONLY (is the job ever
 * runnable) and jobs naming nodes (-w), contiguous jobs and zero-node
 * jobs go to cons_tres untouched.  Otherwise the core decides and the
 * bitmap is narrowed to its nodes before cons_tres allocates.
 */
extern int select_p_job_test(job_record_t *job_ptr, bitstr_t *bitmap,
			     uint32_t min_nodes, uint32_t max_nodes,
			     uint32_t req_nodes, uint16_t mode,
			     List preemptee_candidates,
			     List *preemptee_job_list,
			     bitstr_t *exc_core_bitmap)
{
	bool fallback = false;
	int rc;

	if (!active || !job_ptr || !job_ptr->details || !bitmap ||
	    SELECT_IS_MODE_TEST_ONLY(mode))
		goto forward;
	if (SELECT_IS_MODE_RESV(mode) || !min_nodes ||
	    job_ptr->details->contiguous || !topo_text) {
		/* cons_tres chooses, but not nodes held for preemptors */
		slurm_mutex_lock(&state_lock);
		tgh_update(job_ptr, time(NULL));
		(void) tgh_trim(job_ptr->job_id, bitmap);
		slurm_mutex_unlock(&state_lock);
		goto forward;
	}

	slurm_mutex_lock(&state_lock);
	rc = _topo_job_test(job_ptr, bitmap, min_nodes, max_nodes, req_nodes,
			    mode, preemptee_candidates, preemptee_job_list,
			    exc_core_bitmap, &fallback);
	/* cons_tres chooses: not on nodes held for other preemptors */
	if (fallback)
		(void) tgh_trim(job_ptr->job_id, bitmap);
	slurm_mutex_unlock(&state_lock);
	if (!fallback)
		return rc;
forward:
	return (*(inner.job_test))(job_ptr, bitmap, min_nodes, max_nodes,
				   req_nodes, mode, preemptee_candidates,
				   preemptee_job_list, exc_core_bitmap);
}

extern int select_p_job_begin(job_record_t *job_ptr)
{
	if (active && job_ptr) {
		slurm_mutex_lock(&state_lock);
		tgh_drop(job_ptr->job_id);
		tgr_drop(job_ptr->job_id);
		_model_note(&model.begun, &model.nbegun, &model.begcap,
			    job_ptr->job_id);
		slurm_mutex_unlock(&state_lock);
	}
	return (*(inner.job_begin))(job_ptr);
}

extern int select_p_job_ready(job_record_t *job_ptr)
{
	return (*(inner.job_ready))(job_ptr);
}

/*
 * Resized and expanded jobs: cons_tres changes the job's resources; the
 * core's model forgets the job and takes its new nodes at the next
 * job_test (the placement of the job itself is not revisited: a shrunk
 * job keeps the nodes it has, which cons_tres chooses by the order of
 * the job's node list, and --dependency=expand jobs get nodes through
 * their own job_test).
 */
extern int select_p_job_expand(job_record_t *from_job_ptr,
			       job_record_t *to_job_ptr)
{
	if (active && from_job_ptr && to_job_ptr) {
		slurm_mutex_lock(&state_lock);
		_model_forget(from_job_ptr->job_id);
		_model_forget(to_job_ptr->job_id);
		slurm_mutex_unlock(&state_lock);
	}
	return (*(inner.job_expand))(from_job_ptr, to_job_ptr);
}

extern int select_p_job_resized(job_record_t *job_ptr,
				node_record_t *node_ptr)
{
	if (active && job_ptr) {
		slurm_mutex_lock(&state_lock);
		_model_forget(job_ptr->job_id);
		slurm_mutex_unlock(&state_lock);
	}
	return (*(inner.job_resized))(job_ptr, node_ptr);
}

extern int select_p_job_signal(job_record_t *job_ptr, int signal)
{
	return (*(inner.job_signal))(job_ptr, signal);
}

extern int select_p_job_fini(job_record_t *job_ptr)
{
	if (active && job_ptr) {
		slurm_mutex_lock(&state_lock);
		_model_note(&model.ended, &model.nended, &model.endcap,
			    job_ptr->job_id);
		slurm_mutex_unlock(&state_lock);
	}
	return (*(inner.job_fini))(job_ptr);
}

extern int select_p_job_suspend(job_record_t *job_ptr, bool indf_susp)
{
	_model_dirty();
	return (*(inner.job_suspend))(job_ptr, indf_susp);
}

extern int select_p_job_resume(job_record_t *job_ptr, bool indf_susp)
{
	_model_dirty();
	return (*(inner.job_resume))(job_ptr, indf_susp);
}

extern bitstr_t *select_p_step_pick_nodes(job_record_t *job_ptr,
					  select_jobinfo_t *jobinfo,
					  uint32_t node_count,
					  bitstr_t **avail_nodes)
{
	return (*(inner.step_pick_nodes))(job_ptr, jobinfo, node_count,
					  avail_nodes);
}

extern int select_p_step_start(step_record_t *step_ptr)
{
	return (*(inner.step_start))(step_ptr);
}

extern int select_p_step_finish(step_record_t *step_ptr, bool killing_step)
{
	return (*(inner.step_finish))(step_ptr, killing_step);
}

extern int select_p_select_nodeinfo_pack(select_nodeinfo_t *nodeinfo,
					 buf_t *buffer,
					 uint16_t protocol_version)
{
	return (*(inner.nodeinfo_pack))(nodeinfo, buffer, protocol_version);
}

extern int select_p_select_nodeinfo_unpack(select_nodeinfo_t **nodeinfo,
					   buf_t *buffer,
					   uint16_t protocol_version)
{
	return (*(inner.nodeinfo_unpack))(nodeinfo, buffer,
					  protocol_version);
}

extern select_nodeinfo_t *select_p_select_nodeinfo_alloc(void)
{
	return (*(inner.nodeinfo_alloc))();
}

extern int select_p_select_nodeinfo_free(select_nodeinfo_t *nodeinfo)
{
	return (*(inner.nodeinfo_free))(nodeinfo);
}

extern int select_p_select_nodeinfo_set_all(void)
{
	return (*(inner.nodeinfo_set_all))();
}

extern int select_p_select_nodeinfo_set(job_record_t *job_ptr)
{
	return (*(inner.nodeinfo_set))(job_ptr);
}

extern int select_p_select_nodeinfo_get(select_nodeinfo_t *nodeinfo,
					enum select_nodedata_type dinfo,
					enum node_states state, void *data)
{
	return (*(inner.nodeinfo_get))(nodeinfo, dinfo, state, data);
}

extern select_jobinfo_t *select_p_select_jobinfo_alloc(void)
{
	return (*(inner.jobinfo_alloc))();
}

extern int select_p_select_jobinfo_free(select_jobinfo_t *jobinfo)
{
	return (*(inner.jobinfo_free))(jobinfo);
}

extern int select_p_select_jobinfo_set(select_jobinfo_t *jobinfo,
				       enum select_jobdata_type data_type,
				       void *data)
{
	return (*(inner.jobinfo_set))(jobinfo, data_type, data);
}

extern int select_p_select_jobinfo_get(select_jobinfo_t *jobinfo,
				       enum select_jobdata_type data_type,
				       void *data)
{
	return (*(inner.jobinfo_get))(jobinfo, data_type, data);
}

extern select_jobinfo_t *select_p_select_jobinfo_copy(
	select_jobinfo_t *jobinfo)
{
	return (*(inner.jobinfo_copy))(jobinfo);
}

extern int select_p_select_jobinfo_pack(select_jobinfo_t *jobinfo,
					buf_t *buffer,
					uint16_t protocol_version)
{
	return (*(inner.jobinfo_pack))(jobinfo, buffer, protocol_version);
}

extern int select_p_select_jobinfo_unpack(select_jobinfo_t **jobinfo,
					  buf_t *buffer,
					  uint16_t protocol_version)
{
	return (*(inner.jobinfo_unpack))(jobinfo, buffer, protocol_version);
}

extern char *select_p_select_jobinfo_sprint(select_jobinfo_t *jobinfo,
					    char *buf, size_t size, int mode)
{
	return (*(inner.jobinfo_sprint))(jobinfo, buf, size, mode);
}

extern char *select_p_select_jobinfo_xstrdup(select_jobinfo_t *jobinfo,
					     int mode)
{
	return (*(inner.jobinfo_xstrdup))(jobinfo, mode);
}

extern int select_p_get_info_from_plugin(enum select_plugindata_info info,
					 job_record_t *job_ptr, void *data)
{
	return (*(inner.get_info_from_plugin))(info, job_ptr, data);
}

extern int select_p_update_node_config(int index)
{
	_model_dirty();
	return (*(inner.update_node_config))(index);
}

/*
 * Re-reads topogang.conf and topology.conf.  A bad file is one error()
 * naming it and its line; the previous configuration stays.
 */
extern int select_p_reconfigure(void)
{
	if (running_in_slurmctld() &&
	    !xstrcmp(slurm_conf.select_type, plugin_type)) {
		/* the node table may have changed: rebuild the model */
		slurm_mutex_lock(&state_lock);
		_model_drop();
		_het_plan_drop();
		info("%s: since start, %" PRIu64 " jobs started by "
		     "select/cons_tres's choice where the core's model had no "
		     "room and %" PRIu64 " where cons_tres refused the core's "
		     "nodes (model gaps; see topogang.conf(5), FALLBACK)",
		     plugin_type, fallback_nospace, fallback_refused);
		slurm_mutex_unlock(&state_lock);
		if (_load(false) == SLURM_SUCCESS)
			active = true;
	}
	return (*(inner.reconfigure))();
}

extern bitstr_t *select_p_resv_test(resv_desc_msg_t *resv_desc_ptr,
				    uint32_t node_cnt,
				    bitstr_t *avail_bitmap,
				    bitstr_t **core_bitmap)
{
	return (*(inner.resv_test))(resv_desc_ptr, node_cnt, avail_bitmap,
				    core_bitmap);
}
