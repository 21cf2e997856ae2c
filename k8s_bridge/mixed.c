/*
 * k8s_bridge/mixed.c - mixed mode: Kubernetes gangs as Slurm jobs (see
 * mixed.h for what it does, slurmrest.h for what it says to slurmrestd).
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include <float.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "map.h"
#include "mixed.h"
#include "sched.h"
#include "slurmrest.h"
#include "store.h"

#define SUBMIT_GRACE_MS		30000	/* a submitted job must show up */
#define SUBMIT_RETRY_MS		5000	/* after a refused submit */
#define CANCEL_RETRY_MS		10000
#define EVICT_RETRY_MS		10000
#define ASSUME_MS		30000	/* a binding the watch has not shown */
#define MSG_MAX			600
#define BR_MIXED_MAX_SLOTS	(1u << 24)	/* task slots of one job bound */

/* ---- configuration ----------------------------------------------------- */

static int cerr(char *err, size_t errlen, const char *src, const char *path,
		const char *what)
{
	snprintf(err, errlen, "%s: mixed.%s: %s", src, path, what);
	return -1;
}

static int cstr(const cJSON *v, char **dst, const char *src,
		const char *path, char *err, size_t errlen)
{
	if (!cJSON_IsString(v))
		return cerr(err, errlen, src, path, "must be a string");
	if (strlen(v->valuestring) > 1024)
		return cerr(err, errlen, src, path, "longer than 1024 bytes");
	free(*dst);
	*dst = br_xstrdup(v->valuestring);
	return 0;
}

static int cnum(const cJSON *v, double lo, double hi, double *out,
		const char *src, const char *path, char *err, size_t errlen)
{
	char why[128];

	return br_jnum(v, lo, hi, out, why, sizeof(why)) ?
		cerr(err, errlen, src, path, why) : 0;
}

void br_mixed_conf_free(br_mixed_conf *mc)
{
	unsigned i;

	if (!mc)
		return;
	free(mc->url);
	free(mc->token_file);
	free(mc->user);
	free(mc->partition);
	free(mc->qos);
	for (i = 0; i < mc->ntiers; i++) {
		free(mc->tiers[i].partition);
		free(mc->tiers[i].qos);
	}
	free(mc->node_label);
	for (i = 0; i < mc->nlayers; i++) {
		free(mc->layer_k8s[i]);
		free(mc->layer_slurm[i]);
	}
	free(mc->gpu_resource);
	free(mc->gres_name);
	free(mc->time_limit);
	free(mc->workdir);
	free(mc);
}

static int tier_cmp(const void *a, const void *b)
{
	const br_mixed_tier *x = a, *y = b;

	return x->min_priority < y->min_priority ? 1 :
	       x->min_priority > y->min_priority ? -1 : 0;
}

static int load_tiers(br_mixed_conf *mc, const cJSON *v, const char *src,
		      char *err, size_t errlen)
{
	const cJSON *t;
	unsigned i = 0;

	if (!cJSON_IsArray(v))
		return cerr(err, errlen, src, "tiers", "must be a list");
	cJSON_ArrayForEach(t, v) {
		br_mixed_tier *tr;
		const cJSON *f;
		char path[64];
		double d = 0;

		snprintf(path, sizeof(path), "tiers[%u]", i);
		if (mc->ntiers == BR_MIXED_MAX_TIERS)
			return cerr(err, errlen, src, path, "more than 16 "
				    "tiers");
		if (!cJSON_IsObject(t))
			return cerr(err, errlen, src, path, "must be a "
				    "mapping (minPriority, partition, qos)");
		tr = &mc->tiers[mc->ntiers++];
		cJSON_ArrayForEach(f, t) {
			char kp[96];

			snprintf(kp, sizeof(kp), "%s.%s", path, f->string);
			if (strcmp(f->string, "minPriority") == 0) {
				if (cnum(f, -2147483648.0, 2147483647.0, &d,
					 src, kp, err, errlen))
					return -1;
				tr->min_priority = (int64_t)d;
			} else if (strcmp(f->string, "partition") == 0) {
				if (cstr(f, &tr->partition, src, kp, err,
					 errlen))
					return -1;
			} else if (strcmp(f->string, "qos") == 0) {
				if (cstr(f, &tr->qos, src, kp, err, errlen))
					return -1;
			} else {
				return cerr(err, errlen, src, kp,
					    "unknown key");
			}
		}
		if (!br_jget(t, "minPriority"))
			return cerr(err, errlen, src, path, "minPriority is "
				    "required");
		if (!tr->partition && !tr->qos)
			return cerr(err, errlen, src, path, "needs a "
				    "partition or a qos");
		i++;
	}
	qsort(mc->tiers, mc->ntiers, sizeof(mc->tiers[0]), tier_cmp);
	return 0;
}

static int load_layers(br_mixed_conf *mc, const cJSON *v, const char *src,
		       char *err, size_t errlen)
{
	const cJSON *l;

	if (!cJSON_IsObject(v))
		return cerr(err, errlen, src, "layerMap", "must be a mapping "
			    "(Kubernetes layer: topogang.conf layer)");
	cJSON_ArrayForEach(l, v) {
		char path[300];

		snprintf(path, sizeof(path), "layerMap.%.250s", l->string);
		if (mc->nlayers == BR_MIXED_MAX_LAYERS)
			return cerr(err, errlen, src, path, "more than 16 "
				    "layers");
		if (!cJSON_IsString(l) || !*l->valuestring ||
		    strcspn(l->valuestring, " \t,:=") !=
		    strlen(l->valuestring))
			return cerr(err, errlen, src, path, "must be a layer "
				    "name (no blanks, ',', ':' or '=')");
		mc->layer_k8s[mc->nlayers] = br_xstrdup(l->string);
		mc->layer_slurm[mc->nlayers++] = br_xstrdup(l->valuestring);
	}
	return 0;
}

static int load_nodemap(br_mixed_conf *mc, const cJSON *v, const char *src,
			char *err, size_t errlen)
{
	const char *s;

	if (!cJSON_IsString(v))
		return cerr(err, errlen, src, "nodeMap", "must be "
			    "\"same-name\" or \"label KEY\"");
	s = v->valuestring;
	free(mc->node_label);
	mc->node_label = NULL;
	if (strcmp(s, "same-name") == 0)
		return 0;
	if (strncmp(s, "label ", 6) == 0 && s[6] && !strchr(s + 6, ' ')) {
		mc->node_label = br_xstrdup(s + 6);
		return 0;
	}
	return cerr(err, errlen, src, "nodeMap", "must be \"same-name\" or "
		    "\"label KEY\"");
}

int br_mixed_conf_load(br_mixed_conf **out, const cJSON *v, const char *src,
		       char *err, size_t errlen)
{
	br_mixed_conf *mc;
	const cJSON *f;
	int r = 0;

	if (!cJSON_IsObject(v)) {
		snprintf(err, errlen, "%s: mixed: must be a mapping", src);
		return -1;
	}
	br_mixed_conf_free(*out);
	mc = br_xcalloc(1, sizeof(*mc));
	*out = mc;
	mc->user = br_xstrdup("root");
	mc->uid = -1;
	mc->gpu_resource = br_xstrdup("nvidia.com/gpu");
	mc->gres_name = br_xstrdup("gpu");
	mc->workdir = br_xstrdup("/tmp");
	mc->poll_s = 1;
	mc->timeout_s = 5;
	cJSON_ArrayForEach(f, v) {
		const char *k = f->string;

		if (strcmp(k, "slurmrestd") == 0)
			r = cstr(f, &mc->url, src, k, err, errlen);
		else if (strcmp(k, "jwtTokenFile") == 0)
			r = cstr(f, &mc->token_file, src, k, err, errlen);
		else if (strcmp(k, "user") == 0)
			r = cstr(f, &mc->user, src, k, err, errlen);
		else if (strcmp(k, "uid") == 0) {
			double d = 0;

			r = cnum(f, 0, 4294967294.0, &d, src, k, err, errlen);
			if (!r && d != (double)(uint32_t)d)
				r = cerr(err, errlen, src, k, "must be a whole "
					 "number");
			mc->uid = r ? -1 : (int64_t)d;
		} else if (strcmp(k, "partition") == 0)
			r = cstr(f, &mc->partition, src, k, err, errlen);
		else if (strcmp(k, "qos") == 0)
			r = cstr(f, &mc->qos, src, k, err, errlen);
		else if (strcmp(k, "tiers") == 0)
			r = load_tiers(mc, f, src, err, errlen);
		else if (strcmp(k, "nodeMap") == 0)
			r = load_nodemap(mc, f, src, err, errlen);
		else if (strcmp(k, "layerMap") == 0)
			r = load_layers(mc, f, src, err, errlen);
		else if (strcmp(k, "gpuResource") == 0)
			r = cstr(f, &mc->gpu_resource, src, k, err, errlen);
		else if (strcmp(k, "gresName") == 0) {
			r = cstr(f, &mc->gres_name, src, k, err, errlen);
			/* asked as --gpus-per-task: "gpu" or "gpu:TYPE" */
			if (!r && strcmp(mc->gres_name, "gpu") != 0 &&
			    (strncmp(mc->gres_name, "gpu:", 4) != 0 ||
			     !mc->gres_name[4] ||
			     strchr(mc->gres_name + 4, ':')))
				r = cerr(err, errlen, src, k, "must be "
					 "\"gpu\" or \"gpu:TYPE\" (the "
					 "members' GPUs are asked as "
					 "--gpus-per-task)");
		}
		else if (strcmp(k, "timeLimit") == 0)
			r = cstr(f, &mc->time_limit, src, k, err, errlen);
		else if (strcmp(k, "workdir") == 0)
			r = cstr(f, &mc->workdir, src, k, err, errlen);
		else if (strcmp(k, "pollSeconds") == 0)
			r = cnum(f, 0.05, 3600, &mc->poll_s, src, k, err,
				 errlen);
		else if (strcmp(k, "timeoutSeconds") == 0)
			r = cnum(f, 0.1, 600, &mc->timeout_s, src, k, err,
				 errlen);
		else
			r = cerr(err, errlen, src, k, "unknown key");
		if (r)
			return -1;
	}
	if (!mc->url || strncmp(mc->url, "http", 4) != 0)
		return cerr(err, errlen, src, "slurmrestd", "required: the "
			    "slurmrestd URL (http://HOST:PORT)");
	if (!mc->token_file)
		return cerr(err, errlen, src, "jwtTokenFile", "required: a "
			    "file with the JWT (scontrol token)");
	while (strlen(mc->url) > 1 && mc->url[strlen(mc->url) - 1] == '/')
		mc->url[strlen(mc->url) - 1] = '\0';
	if (mc->uid < 0) {
		const struct passwd *pw = getpwnam(mc->user);

		if (pw)
			mc->uid = (int64_t)pw->pw_uid;
	}
	return 0;
}

/* ---- state ------------------------------------------------------------- */

typedef struct submit_st {
	int64_t at_ms;		/* sent */
	uint32_t id;		/* 0 until answered */
	bool inflight;
} submit_st;

struct br_mixed {
	const br_config *cfg;
	const br_mixed_conf *mc;
	br_config scfg;		/* the slurmrestd client's */
	br_http *sh;
	br_http *kh;
	br_metrics *m;
	br_informer *nodes, *pods;
	br_sjobs jobs;		/* the last list */
	br_snodes snodes;	/* the last nodes answer (feed_nodes) */
	br_req *nlist;		/* in flight: the nodes */
	int64_t next_nodes_ms;
	bool nodes_bad;		/* the last nodes poll failed (logged) */
	uint64_t nodes_sig, n_node_errors;
	bool listed;		/* at least once */
	bool up;		/* the last poll answered */
	bool changed;
	int64_t recheck_ms;	/* a cycle is wanted then (0 = none) */
	int64_t next_poll_ms;
	br_req *list;		/* in flight: the spec or the jobs */
	unsigned ver;		/* data_parser v0.0.N both speak; 0: not
				 * negotiated yet */
	char api[32];		/* "/slurm/v0.0.N" */
	unsigned logged_ver;	/* the version last logged */
	char why[600];		/* why not up */
	uint64_t list_sig;	/* what the last list said, hashed */
	br_map subs;		/* gang -> submit_st */
	br_map cancels;		/* job id -> int64_t ms of the last try */
	br_map evicts;		/* pod key -> int64_t ms of the last try */
	br_map notes;		/* pod key -> last message written */
	br_map foreign;		/* job id -> 1: marked as ours by its
				 * comment, run by another user (warned) */
	bool owner_unknown;	/* marked jobs whose owner cannot be told
				 * are listed (logged once) */
	br_map binding;		/* pod key -> int64_t ms: bound by us, the
				 * watch has not shown it yet */
	/* counters */
	uint64_t n_submitted, n_submit_errors, n_cancelled, n_evicted;
	uint64_t n_polls, n_poll_errors;
};

br_http *br_mixed_http(br_mixed *x)
{
	return x->sh;
}

br_mixed *br_mixed_create(const br_config *cfg, br_http *kh, br_metrics *m,
			  br_informer *nodes, br_informer *pods, char *err,
			  size_t errlen)
{
	br_mixed *x = br_xcalloc(1, sizeof(*x));

	x->cfg = cfg;
	x->mc = cfg->mixed;
	x->kh = kh;
	x->m = m;
	x->nodes = nodes;
	x->pods = pods;
	x->scfg.server = br_xstrdup(x->mc->url);
	x->scfg.token_file = br_xstrdup(x->mc->token_file);
	x->scfg.slurm_user = br_xstrdup(x->mc->user);
	x->sh = br_http_create(&x->scfg, err, errlen);
	if (!x->sh) {
		br_config_free(&x->scfg);
		free(x);
		return NULL;
	}
	br_map_init(&x->subs, free);
	br_map_init(&x->cancels, free);
	br_map_init(&x->evicts, free);
	br_map_init(&x->notes, free);
	br_map_init(&x->foreign, NULL);
	br_map_init(&x->binding, free);
	snprintf(x->why, sizeof(x->why), "slurmrestd not polled yet");
	return x;
}

void br_mixed_destroy(br_mixed *x)
{
	if (!x)
		return;
	br_http_destroy(x->sh);	/* cancels (and frees) what is in flight */
	br_sjobs_free(&x->jobs);
	br_snodes_free(&x->snodes);
	br_map_free(&x->subs);
	br_map_free(&x->cancels);
	br_map_free(&x->evicts);
	br_map_free(&x->notes);
	br_map_free(&x->foreign);
	br_map_free(&x->binding);
	br_config_free(&x->scfg);
	free(x);
}

bool br_mixed_ready(const br_mixed *x, const char **why)
{
	if (why)
		*why = x->why;
	return x->up;
}

static void gauge(tg_buf *b, const char *name, const char *type,
		  const char *help, double v)
{
	br_metrics_header(b, name, type, help);
	tg_buf_addf(b, "%s %g\n", name, v);
}

void br_mixed_metrics(const br_mixed *x, tg_buf *b)
{
	size_t i, ours = 0, run = 0;

	for (i = 0; i < x->jobs.n; i++)
		if (br_sjob_ours(&x->jobs.v[i], x->cfg->scheduler_name,
				 x->mc->user, x->mc->uid) &&
		    br_sjob_live(&x->jobs.v[i])) {
			ours++;
			run += br_sjob_running(&x->jobs.v[i]);
		}
	gauge(b, "topogang_slurm_up", "gauge", "1 when slurmrestd answered "
	      "the last poll (the shared pool is usable).", x->up ? 1 : 0);
	gauge(b, "topogang_slurm_jobs", "gauge", "Live Slurm jobs of the "
	      "bridge's gangs.", (double)ours);
	gauge(b, "topogang_slurm_jobs_running", "gauge", "Running Slurm jobs "
	      "of the bridge's gangs.", (double)run);
	gauge(b, "topogang_slurm_submitted_total", "counter", "Gangs "
	      "submitted as Slurm jobs.", (double)x->n_submitted);
	gauge(b, "topogang_slurm_submit_errors_total", "counter", "Submits "
	      "slurmrestd refused or did not answer.",
	      (double)x->n_submit_errors);
	gauge(b, "topogang_slurm_cancelled_total", "counter", "Slurm jobs "
	      "cancelled (their gang's pods went away).",
	      (double)x->n_cancelled);
	gauge(b, "topogang_slurm_evicted_total", "counter", "Pods evicted "
	      "because their Slurm job stopped holding their node.",
	      (double)x->n_evicted);
	gauge(b, "topogang_slurm_poll_errors_total", "counter", "Job list "
	      "polls that failed.", (double)x->n_poll_errors);
	for (i = run = 0; i < x->snodes.n; i++)
		run += x->snodes.v[i].unusable;
	gauge(b, "topogang_slurm_nodes", "gauge", "Nodes in slurmrestd's "
	      "last nodes answer.", (double)x->snodes.n);
	gauge(b, "topogang_slurm_nodes_unusable", "gauge", "Of them, nodes "
	      "Slurm does not give to jobs (DOWN, DRAIN, FAIL, "
	      "NOT_RESPONDING, FUTURE).", (double)run);
	gauge(b, "topogang_slurm_node_poll_errors_total", "counter", "Node "
	      "list polls that failed.", (double)x->n_node_errors);
}

/* ---- polling ----------------------------------------------------------- */

static uint64_t fnv(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (h ^ 0xff) * 1099511628211ull;
}

/* A poll (the spec or the jobs) failed: x->why says why. */
static void poll_failed(br_mixed *x, bool was)
{
	x->n_poll_errors++;
	x->up = false;
	if (was || x->n_poll_errors == 1)
		br_log(BR_LOG_WARN, "slurmrestd unreachable: nothing is placed "
		       "on the shared nodes until it answers", "error", x->why,
		       NULL);
	if (was)
		x->changed = true;
}

/* x->why from an answer that is not a 200. */
static void http_why(br_mixed *x, const br_req *r)
{
	char why[300];

	br_slurm_error(r->resp.s, why, sizeof(why));
	snprintf(x->why, sizeof(x->why), "slurmrestd %s: %s", x->mc->url,
		 r->status ? (*why ? why : "HTTP error") : r->error);
	if (r->status)
		snprintf(x->why + strlen(x->why), sizeof(x->why) -
			 strlen(x->why), " (HTTP %ld)", r->status);
}

/*
 * The GET /openapi/v3 answer: the data_parser version both sides speak
 * (br_slurm_pick_version), logged when it is picked or changes; the jobs
 * are polled at once.
 */
static void on_spec(br_req *r, void *ud)
{
	br_mixed *x = ud;
	unsigned v;

	x->list = NULL;
	if (r->cancelled)
		return;
	x->n_polls++;
	if (r->status != 200) {
		http_why(x, r);
		poll_failed(x, x->up);
		return;
	}
	if (br_slurm_pick_version(r->resp.s, &v, x->why, sizeof(x->why))) {
		poll_failed(x, x->up);
		return;
	}
	x->ver = v;
	snprintf(x->api, sizeof(x->api), BR_SLURM_API_FMT, v);
	if (x->logged_ver != v) {
		char ver[16];

		snprintf(ver, sizeof(ver), "v0.0.%u", v);
		br_log(BR_LOG_INFO, "slurmrestd data_parser version "
		       "negotiated: the newest both sides speak", "version",
		       ver, "url", x->mc->url, NULL);
		x->logged_ver = v;
	}
	x->next_poll_ms = 0;
}

/*
 * Jobs whose comment marks them as the bridge's but that run as another
 * user than mixed.user are no gang's (br_sjob_ours()): one warning per
 * job while it is listed.  Marked jobs whose owner cannot be told (no
 * user_name, and no user_id or no mixed.uid) are no gang's either, but
 * that is the bridge's setup, not another user: one error for them all,
 * again only after they are gone and come back.
 */
static void warn_foreign(br_mixed *x)
{
	br_map now;
	size_t i;
	const br_sjob *unknown = NULL;

	br_map_init(&now, NULL);
	for (i = 0; i < x->jobs.n; i++) {
		const br_sjob *j = &x->jobs.v[i];
		char id[16];

		if (br_sjob_owner_unknown(j, x->cfg->scheduler_name,
					  x->mc->uid)) {
			unknown = unknown ? unknown : j;
			continue;
		}
		if (!br_sjob_marked(j, x->cfg->scheduler_name) ||
		    br_sjob_ours(j, x->cfg->scheduler_name, x->mc->user,
				 x->mc->uid))
			continue;
		snprintf(id, sizeof(id), "%u", j->id);
		if (!br_map_get(&x->foreign, id))
			br_log(BR_LOG_WARN, "a Slurm job carries the bridge's "
			       "comment but runs as another user: not a "
			       "gang's job (ignored)", "job", id, "user",
			       j->user, "expected_user", x->mc->user, "name",
			       j->name, NULL);
		br_map_put(&now, id, (void *)1);
	}
	br_map_free(&x->foreign);
	x->foreign = now;
	if (unknown && !x->owner_unknown) {
		char id[16];

		snprintf(id, sizeof(id), "%u", unknown->id);
		br_log(BR_LOG_ERROR, "slurmrestd lists the bridge's jobs "
		       "without user_name (it cannot resolve their uid), and "
		       "their user_id cannot be compared: no user_id, or "
		       "mixed.user is not a user here and mixed.uid is not "
		       "set; these jobs are not taken as the bridge's until "
		       "mixed.uid is set", "job", id, "user", x->mc->user,
		       NULL);
	}
	x->owner_unknown = unknown != NULL;
}

static void on_list(br_req *r, void *ud)
{
	br_mixed *x = ud;
	br_sjobs js;
	char err[512];
	uint64_t sig = 1469598103934665603ull;
	size_t i;
	bool was = x->up;

	x->list = NULL;
	if (r->cancelled)
		return;
	x->n_polls++;
	if (r->status != 200) {
		http_why(x, r);
		/* a slurmrestd upgraded or restarted with other plugins:
		 * negotiate again */
		if (r->status == 404)
			x->ver = 0;
		goto fail;
	}
	if (br_sjobs_parse(r->resp.s, x->ver, &js, err, sizeof(err))) {
		snprintf(x->why, sizeof(x->why), "%s", err);
		goto fail;
	}
	br_sjobs_free(&x->jobs);
	x->jobs = js;
	x->listed = true;
	x->up = true;
	x->why[0] = '\0';
	warn_foreign(x);
	for (i = 0; i < js.n; i++) {
		char id[16];

		snprintf(id, sizeof(id), "%u", js.v[i].id);
		sig = fnv(fnv(fnv(fnv(sig, id), js.v[i].state),
			      js.v[i].nodes), js.v[i].reason);
	}
	if (!was) {
		br_log(BR_LOG_INFO, "slurmrestd answers; the shared pool is "
		       "ready", "url", x->mc->url, NULL);
		x->changed = true;
	}
	if (sig != x->list_sig)
		x->changed = true;
	x->list_sig = sig;
	return;
fail:
	poll_failed(x, was);
}

/*
 * A request to slurmrestd with the configured timeout: \p rest under
 * \p prefix (x->api, the negotiated version's: "/jobs", "/job/submit";
 * "" for "/openapi/v3").
 */
static br_req *api_req(const br_mixed *x, const char *method,
		       const char *prefix, const char *rest)
{
	char *path = br_xasprintf("%s%s", prefix, rest);
	br_req *r = br_req_create(method, path);

	free(path);
	r->timeout_ms = (long)(x->mc->timeout_s * 1000);
	return r;
}

/*
 * The GET nodes answer: Slurm's view of the pool's nodes, fed into the
 * model at the end of each cycle (br_mixed_feed_nodes).  A failure keeps the
 * last view and is logged when it starts: the jobs, not the nodes, say
 * what the bridge may bind.
 */
static void on_nodes(br_req *r, void *ud)
{
	br_mixed *x = ud;
	uint64_t sig = 1469598103934665603ull;
	char err[600], why[300];
	br_snodes ns;
	size_t i;

	x->nlist = NULL;
	if (r->cancelled)
		return;
	if (r->status != 200) {
		br_slurm_error(r->resp.s, why, sizeof(why));
		snprintf(err, sizeof(err), "slurmrestd %s: %s", x->mc->url,
			 r->status ? (*why ? why : "HTTP error") : r->error);
		if (r->status)
			snprintf(err + strlen(err), sizeof(err) - strlen(err),
				 " (HTTP %ld)", r->status);
	}
	if (r->status != 200 ||
	    br_snodes_parse(r->resp.s, x->ver, &ns, err, sizeof(err))) {
		x->n_node_errors++;
		/* unreachable: the jobs poll says so (poll_failed) */
		if (!x->nodes_bad && r->status)
			br_log(BR_LOG_WARN, "slurmrestd nodes unreadable: the "
			       "pool's picture keeps Slurm's last view of the "
			       "nodes", "error", err, NULL);
		x->nodes_bad = x->nodes_bad || r->status;
		return;
	}
	x->nodes_bad = false;
	for (i = 0; i < ns.n; i++) {
		char v[48];

		snprintf(v, sizeof(v), "%d %u %llu", ns.v[i].unusable,
			 ns.v[i].alloc_cpus,
			 (unsigned long long)ns.v[i].alloc_memory);
		sig = fnv(fnv(fnv(sig, ns.v[i].name), ns.v[i].state), v);
	}
	br_snodes_free(&x->snodes);
	x->snodes = ns;
	if (sig != x->nodes_sig)
		x->changed = true;
	x->nodes_sig = sig;
}

bool br_mixed_tick(br_mixed *x, int64_t now)
{
	bool ch;

	br_http_poll(x->sh, 0, NULL, 0);
	if (!x->list && now >= x->next_poll_ms) {
		br_req *r = x->ver ? api_req(x, "GET", x->api, "/jobs") :
			api_req(x, "GET", "", "/openapi/v3");

		x->next_poll_ms = now + (int64_t)(x->mc->poll_s * 1000);
		x->list = r;
		if (br_http_submit(x->sh, r, x->ver ? on_list : on_spec, NULL,
				   x) != 0) {
			x->list = NULL;
			br_req_free(r);
		}
	}
	/* the nodes, as often as the jobs, once a version is agreed */
	if (x->ver && x->up && !x->nlist && now >= x->next_nodes_ms) {
		br_req *r = api_req(x, "GET", x->api, "/nodes");

		x->next_nodes_ms = now + (int64_t)(x->mc->poll_s * 1000);
		x->nlist = r;
		if (br_http_submit(x->sh, r, on_nodes, NULL, x) != 0) {
			x->nlist = NULL;
			br_req_free(r);
		}
	}
	if (x->recheck_ms && now >= x->recheck_ms) {
		x->recheck_ms = 0;
		x->changed = true;
	}
	ch = x->changed;
	x->changed = false;
	return ch;
}

/* ---- slurmrestd writes (asynchronous) ---------------------------------- */

static void recheck(br_mixed *x, int64_t at)
{
	if (!x->recheck_ms || at < x->recheck_ms)
		x->recheck_ms = at;
}

typedef struct sub_ctx {
	br_mixed *x;
	char *gang;
} sub_ctx;

static void on_submit(br_req *r, void *ud)
{
	sub_ctx *c = ud;
	br_mixed *x = c->x;
	submit_st *st = br_map_get(&x->subs, c->gang);
	char err[512], id[16];
	uint32_t jid = 0;

	if (st)
		st->inflight = false;
	if (r->cancelled) {
		if (st)
			br_map_del(&x->subs, c->gang);
	} else if (br_sjob_submit_result(r->resp.s, r->status, &jid, err,
					 sizeof(err)) == 0) {
		x->n_submitted++;
		if (st)
			st->id = jid;
		snprintf(id, sizeof(id), "%u", jid);
		br_log(BR_LOG_INFO, "gang submitted to Slurm", "gang",
		       c->gang, "job", id, NULL);
		x->next_poll_ms = 0;	/* see it soon */
	} else {
		x->n_submit_errors++;
		br_log(BR_LOG_WARN, "slurmrestd refused the gang's job", "gang",
		       c->gang, "error", r->status ? err : r->error, NULL);
		if (st) {	/* retried after SUBMIT_RETRY_MS */
			st->id = 0;
			st->at_ms = br_now_ms();
			recheck(x, st->at_ms + SUBMIT_RETRY_MS + 1);
		}
	}
	free(c->gang);
	free(c);
}

static void on_cancel(br_req *r, void *ud)
{
	char why[300];

	BR_UNUSED(ud);
	if (r->cancelled)
		return;
	if (r->status != 200) {
		br_slurm_error(r->resp.s, why, sizeof(why));
		br_log(BR_LOG_WARN, "slurmrestd did not cancel a job", "path",
		       r->path, "error", r->status ? why : r->error, NULL);
	}
}

static void cancel_job(br_mixed *x, const br_sjob *j, int64_t now,
		       const char *why)
{
	char id[16], rest[32];
	int64_t *last;
	br_req *r;

	snprintf(id, sizeof(id), "%u", j->id);
	last = br_map_get(&x->cancels, id);
	if (last && now - *last < CANCEL_RETRY_MS) {
		recheck(x, *last + CANCEL_RETRY_MS);
		return;
	}
	if (!last) {
		last = br_xmalloc(sizeof(*last));
		br_map_put(&x->cancels, id, last);
		x->n_cancelled++;
	}
	*last = now;
	br_log(BR_LOG_INFO, "cancelling the Slurm job", "job", id, "gang",
	       j->name, "state", j->state, "why", why, NULL);
	snprintf(rest, sizeof(rest), "/job/%u", j->id);
	r = api_req(x, "DELETE", x->api, rest);
	if (br_http_submit(x->sh, r, on_cancel, NULL, x) != 0)
		br_req_free(r);
}

/* ---- one cycle --------------------------------------------------------- */

/* A bound pod of ours: its gang and job. */
typedef struct bpod {
	const br_obj *o;
	uint32_t job;
} bpod;

typedef struct mcyc {
	br_mixed *x;
	br_sched *s;
	tg_k8s *k;
	tg_topology *t;
	int64_t now;
	bpod *bound;
	size_t nbound;
	br_map k8s_node;	/* Slurm node name -> Kubernetes node name */
	br_req **reqs;		/* the API writes of this cycle */
	char **rkey;		/* for bindings: the pod key, else NULL */
	size_t nreq, capreq;
} mcyc;

static void add_req_key(mcyc *c, br_req *r, const char *key)
{
	if (c->nreq == c->capreq) {
		c->capreq = c->capreq ? c->capreq * 2 : 32;
		c->reqs = br_xrealloc(c->reqs, c->capreq * sizeof(*c->reqs));
		c->rkey = br_xrealloc(c->rkey, c->capreq * sizeof(*c->rkey));
	}
	c->rkey[c->nreq] = key ? br_xstrdup(key) : NULL;
	c->reqs[c->nreq++] = r;
}

static void add_req(mcyc *c, br_req *r)
{
	add_req_key(c, r, NULL);
}

static const br_sjob *job_by_id(const br_mixed *x, uint32_t id)
{
	size_t i;

	for (i = 0; i < x->jobs.n; i++)
		if (x->jobs.v[i].id == id)
			return &x->jobs.v[i];
	return NULL;
}

/* The gang's live job of ours (the oldest when there are several). */
static const br_sjob *job_of(const br_mixed *x, const char *gang)
{
	const br_sjob *best = NULL;
	size_t i;

	for (i = 0; i < x->jobs.n; i++) {
		const br_sjob *j = &x->jobs.v[i];

		if (br_sjob_live(j) && strcmp(j->name, gang) == 0 &&
		    br_sjob_ours(j, x->cfg->scheduler_name, x->mc->user,
				 x->mc->uid) &&
		    (!best || j->id < best->id))
			best = j;
	}
	return best;
}

static void collect_bound(mcyc *c)
{
	const br_store *st = br_informer_store(c->x->pods);
	size_t i, cap = 0;

	for (i = 0; i < st->n; i++) {
		const br_obj *o = st->all[i];
		cJSON *j;
		const char *v;
		int64_t id;

		if (!o->node || !o->ann_gang)
			continue;
		j = br_obj_parse(o);
		v = br_jstr(br_jpath(j, "metadata.annotations"),
			    BR_ANN_SLURM_JOB);
		if (v && tg_i64_parse(v, &id) && id > 0 && id <= 4294967295) {
			if (c->nbound == cap) {
				cap = cap ? cap * 2 : 32;
				c->bound = br_xrealloc(c->bound,
						       cap * sizeof(bpod));
			}
			c->bound[c->nbound].o = o;
			c->bound[c->nbound++].job = (uint32_t)id;
		}
		cJSON_Delete(j);
	}
}

static void build_node_map(mcyc *c)
{
	const br_store *st = br_informer_store(c->x->nodes);
	const char *key = c->x->mc->node_label;
	size_t i;

	br_map_init(&c->k8s_node, free);
	for (i = 0; i < st->n; i++) {
		const br_obj *o = st->all[i];
		const char *v = o->name;
		cJSON *j = NULL;

		if (key) {
			j = br_obj_parse(o);
			v = br_jstr(br_jpath(j, "metadata.labels"), key);
		}
		if (v && *v)
			br_map_put(&c->k8s_node, v, br_xstrdup(o->name));
		cJSON_Delete(j);
	}
}

/* Writes PodScheduled=False (reason \p reason, \p msg) and the job
 * annotation on a pending pod, when they changed. */
static void note_pod(mcyc *c, const br_obj *o, const char *reason,
		     const char *msg, uint32_t job, const char *ev_reason)
{
	char ns[254], name[254], id[16];
	const char *last = br_map_get(&c->x->notes, o->key);

	if (last && strcmp(last, msg) == 0 && o->cond_msg &&
	    strcmp(o->cond_msg, msg) == 0)
		return;
	br_map_put(&c->x->notes, o->key, br_xstrdup(msg));
	br_split_key(o->key, ns, sizeof(ns), name, sizeof(name));
	add_req(c, br_sched_status_req(ns, name, reason, msg, NULL));
	if (job) {
		cJSON *j = cJSON_CreateObject(), *md, *ann;

		snprintf(id, sizeof(id), "%u", job);
		md = cJSON_AddObjectToObject(j, "metadata");
		ann = cJSON_AddObjectToObject(md, "annotations");
		cJSON_AddStringToObject(ann, BR_ANN_SLURM_JOB, id);
		add_req(c, br_sched_json_req("PATCH", br_xasprintf(
				"/api/v1/namespaces/%s/pods/%s", ns, name),
				"application/merge-patch+json", j));
	}
	br_sched_event(c->s, "Normal", ev_reason, "Scheduling", msg, "Pod", ns,
		       name, o->uid);
}

/* note_pod() on every pending member of \p g; returns how many. */
static unsigned note_members(mcyc *c, const tg_gang *g, const char *reason,
			     const char *msg, uint32_t job)
{
	const br_store *pods = br_informer_store(c->x->pods);
	unsigned ps, m, n = 0;

	for (ps = 0; ps < tg_gang_npodsets(g); ps++)
		for (m = 0; m < tg_gang_podset_count(g, ps); m++) {
			const char *key = tg_gang_podset_member(g, ps, m);
			const br_obj *o = key ? br_store_get(pods, key) : NULL;

			if (o && !o->node) {
				note_pod(c, o, reason, msg, job, reason);
				n++;
			}
		}
	return n;
}

/* The gang's topology request in topogang.conf's words. */
static const char *slurm_layer(const br_mixed_conf *mc, const char *l)
{
	unsigned i;

	for (i = 0; i < mc->nlayers; i++)
		if (strcmp(mc->layer_k8s[i], l) == 0)
			return mc->layer_slurm[i];
	return l;
}

/*
 * The gang's gathers (\p kind TG_REQUEST_GATHER) or spreads in the core's
 * request grammar, with topogang.conf's layer names, into \p buf (""
 * when it has none).  -1 with \p why filled when a request cannot be
 * written (more than TG_REQUEST_MAX_ITEMS, a skew past the grammar's).
 */
static int request_text(const br_mixed_conf *mc, const tg_gang *g,
			tg_request_kind kind, char *buf, size_t len,
			char *why, size_t wlen)
{
	tg_request r;
	tg_errinfo ei = { "" };
	unsigned i, n;

	tg_request_init(&r, kind);
	buf[0] = '\0';
	n = kind == TG_REQUEST_GATHER ? tg_gang_ngathers(g) :
	    tg_gang_nspreads(g);
	for (i = 0; i < n; i++) {
		tg_request_item it;
		const char *l;

		memset(&it, 0, sizeof(it));
		it.skew = 1;
		if (kind == TG_REQUEST_GATHER) {
			l = tg_gang_gather_at(g, i, &it.how);
			if (!l || it.how == TG_GATHER_NONE)
				continue;
		} else {
			l = tg_gang_spread_at(g, i, &it.skew, &it.hard);
			if (!l)
				continue;
			if (!it.skew)
				it.skew = 1;
		}
		snprintf(it.layer, sizeof(it.layer), "%s", slurm_layer(mc, l));
		if (tg_request_add(&r, &it, &ei)) {
			snprintf(why, wlen, "%s", ei.msg);
			return -1;
		}
	}
	if (r.n && tg_request_format(&r, buf, len)) {
		snprintf(why, wlen, "the topology request is longer than %zu "
			 "bytes", len);
		return -1;
	}
	return 0;
}

/* A pod set's task shape: -c (CPUs up), --gpus-per-task, --mem-per-cpu
 * (MiB, up). */
static br_sjob_task task_of(const tg_shape *sh, unsigned rid, unsigned n)
{
	br_sjob_task t;
	uint64_t per;

	memset(&t, 0, sizeof(t));
	t.tasks = n;
	t.cpus_per_task = (unsigned)((sh->v[TG_RES_CPU] + 999) / 1000);
	if (!t.cpus_per_task)
		t.cpus_per_task = 1;
	if (rid < TG_MAX_RESOURCES && sh->v[rid] > 0)
		t.gpus_per_task = (unsigned)sh->v[rid];
	per = (uint64_t)t.cpus_per_task << 20;
	if (sh->v[TG_RES_MEMORY] > 0)
		t.mem_per_cpu = ((uint64_t)sh->v[TG_RES_MEMORY] + per - 1) /
				per;
	return t;
}

static bool task_eq(const br_sjob_task *a, const br_sjob_task *b)
{
	return a->cpus_per_task == b->cpus_per_task &&
	       a->gpus_per_task == b->gpus_per_task &&
	       a->mem_per_cpu == b->mem_per_cpu;
}

/*
 * A member's volume that has a claim (persistentVolumeClaim, ephemeral),
 * into \p buf ("POD: spec.volumes[i] (claim NAME)"); false when none.
 * Slurm places the job without the claims' PersistentVolumes, whose node
 * affinity it cannot honour: such a gang is not submitted (the core's
 * own placement follows them, k8s_volume.c).
 */
static bool member_claim(mcyc *c, const tg_gang *g, char *buf, size_t n)
{
	const br_store *pods = br_informer_store(c->x->pods);
	unsigned r, nm = tg_gang_nmembers(g);

	for (r = 0; r < nm; r++) {
		const char *m = tg_gang_member(g, r);
		const br_obj *o = m ? br_store_get(pods, m) : NULL;
		cJSON *j = o ? br_obj_parse(o) : NULL;
		const cJSON *v;
		unsigned i = 0;
		bool hit = false;

		cJSON_ArrayForEach(v, br_jpath(j, "spec.volumes")) {
			const char *cn = br_jpath_str(v, "persistentVolumeClaim."
						      "claimName");

			if (cn || br_jget(v, "ephemeral")) {
				snprintf(buf, n, "%s: spec.volumes[%u] (%s%s)",
					 m, i, cn ? "claim " : "ephemeral "
					 "volume ", cn ? cn :
					 br_jstr(v, "name") ? br_jstr(v, "name") :
					 "");
				hit = true;
				break;
			}
			i++;
		}
		cJSON_Delete(j);
		if (hit)
			return true;
	}
	return false;
}

/* A gang with a volume claim is not submitted; its members say why. */
static bool refuse_claims(mcyc *c, const tg_gang *g)
{
	char why[MSG_MAX], note[MSG_MAX + 160];

	if (!member_claim(c, g, why, sizeof(why)))
		return false;
	snprintf(note, sizeof(note), "not submitted to Slurm: %s: Slurm "
		 "cannot honour a PersistentVolume's node affinity; mixed "
		 "mode does not place pods with volume claims", why);
	note_members(c, g, "UnsupportedVolume", note, 0);
	return true;
}

static void submit(mcyc *c, const tg_gang *g, unsigned nmembers)
{
	br_mixed *x = c->x;
	const br_mixed_conf *mc = x->mc;
	const char *name = tg_gang_name(g);
	char gather[TG_REQUEST_MAX_TEXT], spread[TG_REQUEST_MAX_TEXT];
	char why[MSG_MAX];
	br_sjob_spec sp;
	unsigned ps, rid = 0, gpus = 0, i, ncomps = 0;
	int64_t cpu_m = 0, mem_b = 0;
	br_sjob_task comps[BR_MIXED_MAX_COMPS];
	bool het = false;
	int64_t prio = tg_gang_priority(g);
	submit_st *st;
	sub_ctx *ctx;
	char *body;
	br_req *r;

	memset(&sp, 0, sizeof(sp));
	if (request_text(mc, g, TG_REQUEST_GATHER, gather, sizeof(gather),
			 why, sizeof(why)) ||
	    request_text(mc, g, TG_REQUEST_SPREAD, spread, sizeof(spread),
			 why, sizeof(why))) {
		char note[MSG_MAX + 64];

		snprintf(note, sizeof(note), "not submitted to Slurm: %s",
			 why);
		note_members(c, g, "SlurmRequestInvalid", note, 0);
		return;
	}
	if (tg_topology_resource(c->t, mc->gpu_resource, &rid) != TG_OK)
		rid = TG_MAX_RESOURCES;
	/*
	 * A task shape a pod set: pod sets that differ make a
	 * heterogeneous job, a component each (het_comps); else one job,
	 * each request at its largest over the pod sets.
	 */
	for (ps = 0; ps < tg_gang_npodsets(g); ps++) {
		const tg_shape *sh = tg_gang_podset_shape(g, ps);
		unsigned cnt = tg_gang_podset_count(g, ps);

		if (!sh || !cnt)
			continue;
		if (rid < TG_MAX_RESOURCES && sh->v[rid] > (int64_t)gpus)
			gpus = (unsigned)sh->v[rid];
		if (sh->v[TG_RES_CPU] > cpu_m)
			cpu_m = sh->v[TG_RES_CPU];
		if (sh->v[TG_RES_MEMORY] > mem_b)
			mem_b = sh->v[TG_RES_MEMORY];
		if (ncomps < BR_MIXED_MAX_COMPS)
			comps[ncomps] = task_of(sh, rid, cnt);
		if (ncomps && ncomps < BR_MIXED_MAX_COMPS &&
		    !task_eq(&comps[0], &comps[ncomps]))
			het = true;
		ncomps++;
	}
	if (het && ncomps <= BR_MIXED_MAX_COMPS) {
		sp.comps = comps;
		sp.ncomps = ncomps;
	}
	sp.name = name;
	sp.sched = x->cfg->scheduler_name;
	sp.gather = gather;
	sp.spread = spread;
	sp.partition = mc->partition;
	sp.qos = mc->qos;
	for (i = 0; i < mc->ntiers; i++)
		if (prio >= mc->tiers[i].min_priority) {
			sp.partition = mc->tiers[i].partition;
			sp.qos = mc->tiers[i].qos;
			break;
		}
	sp.tasks = nmembers;
	sp.cpus_per_task = (unsigned)((cpu_m + 999) / 1000);
	if (!sp.cpus_per_task)
		sp.cpus_per_task = 1;
	sp.gpus_per_task = gpus;
	/* --mem-per-cpu: the member's memory over its CPUs, in MiB, up */
	sp.mem_per_cpu = ((uint64_t)mem_b + ((uint64_t)sp.cpus_per_task << 20)
			  - 1) / ((uint64_t)sp.cpus_per_task << 20);
	sp.gres_name = mc->gres_name;
	sp.time_limit = mc->time_limit;
	sp.workdir = mc->workdir;
	body = br_sjob_submit_body(&sp, x->ver);
	r = api_req(x, "POST", x->api, "/job/submit");
	br_req_set_body(r, "application/json", body);
	free(body);
	st = br_xcalloc(1, sizeof(*st));
	st->at_ms = c->now;
	st->inflight = true;
	br_map_put(&x->subs, name, st);
	ctx = br_xcalloc(1, sizeof(*ctx));
	ctx->x = x;
	ctx->gang = br_xstrdup(name);
	{
		char n[16], pr[24], gp[16], cp[16], mm[24], hc[16];

		snprintf(n, sizeof(n), "%u", nmembers);
		snprintf(pr, sizeof(pr), "%lld", (long long)prio);
		snprintf(gp, sizeof(gp), "%u", gpus);
		snprintf(cp, sizeof(cp), "%u", sp.cpus_per_task);
		snprintf(mm, sizeof(mm), "%llu",
			 (unsigned long long)sp.mem_per_cpu);
		snprintf(hc, sizeof(hc), "%u", sp.ncomps);
		br_log(BR_LOG_INFO, "submitting the gang to Slurm", "gang",
		       name, "tasks", n, "cpus_per_task", cp, "gpus_per_task",
		       gp, "mem_per_cpu_mb", mm, "het_components", hc,
		       "priority", pr,
		       "partition", sp.partition ? sp.partition : "",
		       "qos", sp.qos ? sp.qos : "", "topo_gather", gather,
		       "topo_spread", spread, NULL);
	}
	if (br_http_submit(x->sh, r, on_submit, NULL, ctx) != 0) {
		st->inflight = false;
		free(ctx->gang);
		free(ctx);
		br_req_free(r);
	}
}

/*
 * Whether Slurm job \p j can take gang \p g as it stands: a
 * heterogeneous job's components must still be the gang's pod sets, and
 * its task slots at most BR_MIXED_MAX_SLOTS (*nslots: their count).
 * Logs (and notes the members) when not.
 */
static bool bind_fits(mcyc *c, const tg_gang *g, const br_sjob *j,
		      const char *id, uint64_t *nslots)
{
	const char *name = tg_gang_name(g);
	unsigned ps, h, nsets = 0;

	for (ps = 0; ps < tg_gang_npodsets(g); ps++)
		nsets += tg_gang_podset_count(g, ps) > 0;
	if (j->ncomp > 1 && (j->ncomp != nsets ||
			     j->ncomp > BR_MIXED_MAX_COMPS)) {
		char a[16], b[16];

		/* a component a pod set, as submitted: not so any more */
		snprintf(a, sizeof(a), "%u", j->ncomp);
		snprintf(b, sizeof(b), "%u", nsets);
		br_log(BR_LOG_WARN, "the heterogeneous job's components are "
		       "not the gang's pod sets; waiting", "gang", name, "job",
		       id, "components", a, "pod_sets", b, NULL);
		return false;
	}
	*nslots = 0;
	for (h = 0; h < j->nhosts; h++)
		*nslots += j->slots ? j->slots[h] : 1;
	if (*nslots > BR_MIXED_MAX_SLOTS) {
		/* a bad answer: no array of billions of slots */
		char note[MSG_MAX];

		snprintf(note, sizeof(note), "Slurm job %u has %llu task "
			 "slots (more than %u): not bound", j->id,
			 (unsigned long long)*nslots, BR_MIXED_MAX_SLOTS);
		br_log(BR_LOG_WARN, "Slurm job with too many task slots; "
		       "the gang waits", "gang", name, "job", id, NULL);
		note_members(c, g, "SlurmJobTooLarge", note, j->id);
		return false;
	}
	return true;
}

/*
 * The job's free task slots, a Kubernetes node name a slot, in the job's
 * node order (a het job's components one after the other: rank order;
 * cfirst[ci], the first slot of component ci, cfirst[ncomp] the end);
 * pods already bound on a node take its first slots.  Returns the count,
 * or -1 (logged, members noted) when a Slurm node maps to no Kubernetes
 * node.
 */
static long bind_slots(mcyc *c, const tg_gang *g, const br_sjob *j,
		       const char *id, const char **free_nodes,
		       unsigned cfirst[BR_MIXED_MAX_COMPS + 1])
{
	unsigned h, ci = 0, nfree = 0;
	unsigned *taken = br_xcalloc(j->nhosts + 1, sizeof(*taken));
	size_t i;

	cfirst[0] = 0;
	for (h = 0; h < j->nhosts; h++) {
		const char *kn = br_map_get(&c->k8s_node, j->hosts[h]);
		unsigned used = 0, k, slots = j->slots ? j->slots[h] : 1;

		while (j->comp_start && ci + 1 < j->ncomp &&
		       h >= j->comp_start[ci + 1])
			cfirst[++ci] = nfree;

		if (!kn) {
			char note[MSG_MAX];

			snprintf(note, sizeof(note), "Slurm job %u holds node "
				 "%s, which maps to no Kubernetes node "
				 "(mixed.nodeMap)", j->id, j->hosts[h]);
			br_log(BR_LOG_WARN, "Slurm node without a Kubernetes "
			       "node; the gang waits", "gang", tg_gang_name(g),
			       "job", id, "slurm_node", j->hosts[h], NULL);
			note_members(c, g, "SlurmNodeUnmapped", note, j->id);
			free(taken);
			return -1;
		}
		for (i = 0; i < c->nbound; i++)
			if (c->bound[i].job == j->id &&
			    strcmp(c->bound[i].o->node, kn) == 0)
				used++;
		for (k = 0; k < h; k++)	/* a node in two components */
			if (strcmp(j->hosts[k], j->hosts[h]) == 0)
				used -= BR_MIN(used, taken[k]);
		taken[h] = BR_MIN(used, slots);
		for (k = used; k < slots; k++)
			free_nodes[nfree++] = kn;
	}
	free(taken);
	while (++ci <= (j->ncomp > 1 ? j->ncomp : 1) &&
	       ci <= BR_MIXED_MAX_COMPS)
		cfirst[ci] = nfree;
	return nfree;
}

/* Whether a member of \p g was bound a moment ago (the watch lags). */
static bool bind_recent(mcyc *c, const tg_gang *g)
{
	unsigned ps, m;

	for (ps = 0; ps < tg_gang_npodsets(g); ps++)
		for (m = 0; m < tg_gang_podset_count(g, ps); m++) {
			const char *key = tg_gang_podset_member(g, ps, m);
			const int64_t *at = key ?
				br_map_get(&c->x->binding, key) : NULL;

			if (at && c->now - *at < ASSUME_MS)
				return true;
		}
	return false;
}

/*
 * Whether the \p nfree free slots hold the pending members, a het job's
 * each component its pod set's; logs when not.
 */
static bool bind_enough(const tg_gang *g, const br_sjob *j, const char *id,
			unsigned nfree,
			const unsigned cfirst[BR_MIXED_MAX_COMPS + 1])
{
	unsigned ps, ci = 0;
	bool short_comp = false;
	char a[16], b[16];

	for (ps = 0; ps < tg_gang_npodsets(g) && j->ncomp > 1; ps++) {
		unsigned want = tg_gang_podset_count(g, ps);

		if (!want)
			continue;
		if (cfirst[ci + 1] - cfirst[ci] < want)
			short_comp = true;
		ci++;
	}
	if (nfree >= tg_gang_nmembers(g) && !short_comp)
		return true;
	snprintf(a, sizeof(a), "%u", nfree);
	snprintf(b, sizeof(b), "%u", tg_gang_nmembers(g));
	br_log(BR_LOG_WARN, "the Slurm job has fewer free task slots than the "
	       "gang has pending members; waiting", "gang", tg_gang_name(g),
	       "job", id, "free", a, "members", b, NULL);
	return false;
}

/*
 * Binds the pending members of \p g to the free slots in rank order (a
 * het job: pod set ci on component ci's slots; else all in turn), from
 * rank \p rank on; returns how many.
 */
static unsigned bind_members(mcyc *c, const tg_gang *g, const br_sjob *j,
			     const char *id, const char **free_nodes,
			     unsigned nfree,
			     const unsigned cfirst[BR_MIXED_MAX_COMPS + 1],
			     unsigned rank)
{
	const br_store *pods = br_informer_store(c->x->pods);
	const char *name = tg_gang_name(g);
	unsigned cnext[BR_MIXED_MAX_COMPS], ps, m, ci, n = 0;
	char domain[300];

	snprintf(domain, sizeof(domain), "slurm/%.280s", j->nodes);
	for (ci = 0; ci < BR_MIXED_MAX_COMPS; ci++)
		cnext[ci] = j->ncomp > 1 ? cfirst[ci] : 0;
	ci = 0;
	for (ps = 0; ps < tg_gang_npodsets(g); ps++) {
		if (!tg_gang_podset_count(g, ps))
			continue;
		for (m = 0; m < tg_gang_podset_count(g, ps); m++) {
			const char *key = tg_gang_podset_member(g, ps, m);
			const br_obj *o = key ? br_store_get(pods, key) : NULL;
			char ns[254], pn[254], note[MSG_MAX];
			unsigned *at_slot = &cnext[j->ncomp > 1 ? ci : 0];
			const char *node;
			int64_t *at;

			if (!o || o->node || *at_slot >= nfree)
				continue;
			node = free_nodes[(*at_slot)++];
			br_split_key(o->key, ns, sizeof(ns), pn, sizeof(pn));
			add_req_key(c, br_sched_binding_req(ns, pn, o->uid,
							    node, name, domain,
							    rank++,
							    BR_ANN_SLURM_JOB,
							    id), o->key);
			at = br_xmalloc(sizeof(*at));
			*at = c->now;
			br_map_put(&c->x->binding, o->key, at);
			snprintf(note, sizeof(note), "Successfully assigned %s "
				 "to %s (Slurm job %u)", o->key, node, j->id);
			br_sched_event(c->s, "Normal", "Scheduled", "Binding",
				       note, "Pod", ns, pn, o->uid);
			br_map_del(&c->x->notes, o->key);
			n++;
		}
		ci++;
	}
	return n;
}

/* Binds the gang's pending members on its running job's nodes. */
static void bind_gang(mcyc *c, const tg_gang *g, const br_sjob *j)
{
	unsigned cfirst[BR_MIXED_MAX_COMPS + 1], nb = 0, n;
	const char **free_nodes;
	uint64_t nslots = 0;
	long nfree;
	size_t i;
	char id[16];

	snprintf(id, sizeof(id), "%u", j->id);
	if (!bind_fits(c, g, j, id, &nslots))
		return;
	free_nodes = br_xcalloc(nslots + 1, sizeof(*free_nodes));
	nfree = bind_slots(c, g, j, id, free_nodes, cfirst);
	if (nfree < 0 || bind_recent(c, g) ||
	    !bind_enough(g, j, id, (unsigned)nfree, cfirst)) {
		free(free_nodes);
		return;
	}
	for (i = 0; i < c->nbound; i++)
		nb += c->bound[i].job == j->id;
	n = bind_members(c, g, j, id, free_nodes, (unsigned)nfree, cfirst, nb);
	br_log(BR_LOG_INFO, "binding the gang where Slurm placed it", "gang",
	       tg_gang_name(g), "job", id, "nodes", j->nodes, NULL);
	c->x->m->gangs_scheduled++;
	c->x->m->pods_bound += n;
	free(free_nodes);
}

static bool host_in(const br_sjob *j, const br_map *k8s_node,
		    const char *node)
{
	unsigned h;

	for (h = 0; h < j->nhosts; h++) {
		const char *kn = br_map_get(k8s_node, j->hosts[h]);

		if (kn && strcmp(kn, node) == 0)
			return true;
	}
	return false;
}

/* Bound pods whose job no longer holds their node: evicted. */
static void evict_orphans(mcyc *c)
{
	size_t i;

	for (i = 0; i < c->nbound; i++) {
		const br_obj *o = c->bound[i].o;
		const br_sjob *j = job_by_id(c->x, c->bound[i].job);
		char ns[254], name[254], note[MSG_MAX], id[16];
		int64_t *last;

		if (o->deleting || (j && br_sjob_running(j) &&
				    !br_sjob_preempting(j) &&
				    host_in(j, &c->k8s_node, o->node)))
			continue;
		last = br_map_get(&c->x->evicts, o->key);
		if (last && c->now - *last < EVICT_RETRY_MS) {
			recheck(c->x, *last + EVICT_RETRY_MS);
			continue;
		}
		if (!last) {
			last = br_xmalloc(sizeof(*last));
			br_map_put(&c->x->evicts, o->key, last);
			c->x->n_evicted++;
			c->x->m->preemption_victims++;
		}
		*last = c->now;
		snprintf(id, sizeof(id), "%u", c->bound[i].job);
		if (j && br_sjob_preempting(j))
			snprintf(note, sizeof(note), "Slurm preempts job %u "
				 "(GraceTime): evicting; the job is cancelled "
				 "once the gang's pods are gone", j->id);
		else if (j)
			snprintf(note, sizeof(note), "Slurm job %u is %s%s%s "
				 "(preempted, requeued or ended): evicting",
				 j->id, j->state, *j->reason &&
				 strcmp(j->reason, "None") ? ": " : "",
				 strcmp(j->reason, "None") ? j->reason : "");
		else
			snprintf(note, sizeof(note), "Slurm job %s is gone "
				 "(ended or cancelled): evicting", id);
		br_log(BR_LOG_INFO, "evicting a pod whose Slurm job no longer "
		       "holds its node", "pod", o->key, "node", o->node, "job",
		       id, "state", j ? (br_sjob_preempting(j) ?
					 "PREEMPTING" : j->state) : "gone",
		       NULL);
		br_split_key(o->key, ns, sizeof(ns), name, sizeof(name));
		add_req(c, br_sched_evict_req(c->s, ns, name, o->uid));
		br_sched_event(c->s, "Warning", "SlurmJobEnded", "Preempting",
			       note, "Pod", ns, name, o->uid);
	}
}

/* Our live jobs whose gang has no pod left (or a second job for one
 * gang): cancelled. */
static void cancel_orphans(mcyc *c)
{
	br_mixed *x = c->x;
	size_t i, b;
	unsigned n = tg_k8s_ngangs(c->k), g;

	for (i = 0; i < x->jobs.n; i++) {
		const br_sjob *j = &x->jobs.v[i];
		const br_sjob *first;
		const submit_st *st;
		bool has = false;

		if (!br_sjob_live(j) ||
		    !br_sjob_ours(j, x->cfg->scheduler_name, x->mc->user,
				 x->mc->uid) ||
		    strcmp(j->state, "COMPLETING") == 0)
			continue;
		first = job_of(x, j->name);
		if (first && first->id != j->id) {
			cancel_job(x, j, c->now, "a second job for the gang");
			continue;
		}
		st = br_map_get(&x->subs, j->name);
		if (st && c->now - st->at_ms < SUBMIT_GRACE_MS / 6) {
			/* its pods may not be cached yet: look again */
			recheck(x, st->at_ms + SUBMIT_GRACE_MS / 6 + 1);
			continue;
		}
		for (b = 0; b < c->nbound && !has; b++)
			has = c->bound[b].job == j->id &&
			      !c->bound[b].o->deleting;
		for (g = 0; g < n && !has; g++)
			has = strcmp(tg_gang_name(tg_k8s_gang(c->k, g)),
				     j->name) == 0;
		if (!has)
			cancel_job(x, j, c->now, "the gang has no pod left");
	}
}

/* Forgets what no longer exists: pods gone, jobs gone, old submits. */
static void prune(br_mixed *x, int64_t now)
{
	const br_store *pods = br_informer_store(x->pods);
	char **dead = NULL;
	size_t nd = 0, cap = 0, i, slot;
	br_map *maps[] = { &x->notes, &x->evicts, &x->cancels, &x->subs,
			   &x->binding };
	unsigned mi;

	for (mi = 0; mi < 5; mi++) {
		br_map_ent *e;

		for (e = br_map_first(maps[mi], &slot); e;
		     e = br_map_next(maps[mi], &slot, e)) {
			bool gone;

			if (mi < 2) {
				gone = !br_store_get(pods, e->key);
			} else if (mi == 2) {
				int64_t id;

				gone = !tg_i64_parse(e->key, &id) ||
				       !job_by_id(x, (uint32_t)id);
			} else if (mi == 3) {
				const submit_st *st = e->val;

				gone = !st->inflight &&
				       now - st->at_ms > 2 * SUBMIT_GRACE_MS;
			} else {
				const br_obj *o = br_store_get(pods, e->key);

				gone = !o || o->node ||
				       now - *(int64_t *)e->val >= ASSUME_MS;
			}
			if (!gone)
				continue;
			if (nd == cap) {
				cap = cap ? cap * 2 : 16;
				dead = br_xrealloc(dead, cap * sizeof(*dead));
			}
			dead[nd++] = br_xstrdup(e->key);
		}
		for (i = 0; i < nd; i++) {
			br_map_del(maps[mi], dead[i]);
			free(dead[i]);
		}
		nd = 0;
	}
	free(dead);
}

/* ---- Slurm's nodes into the pool's picture ---------------------------- */

/* What Slurm holds on \p id beyond the pods \p t has there, as one
 * allocation (see br_mixed_feed_nodes); true when one was added. */
static bool feed_alloc(tg_topology *t, tg_node_id id, const br_snode *n)
{
	int64_t cpu = (int64_t)n->alloc_cpus * 1000 -
		      (tg_topology_node_allocatable(t, id, TG_RES_CPU) -
		       tg_topology_node_free(t, id, TG_RES_CPU));
	int64_t mem = (int64_t)(n->alloc_memory << 20) -
		      (tg_topology_node_allocatable(t, id, TG_RES_MEMORY) -
		       tg_topology_node_free(t, id, TG_RES_MEMORY));
	tg_alloc_spec a;
	tg_shape sh;
	char pod[300];

	if (cpu <= 0 && mem <= 0)
		return false;
	memset(&sh, 0, sizeof(sh));
	sh.v[TG_RES_CPU] = cpu > 0 ? cpu : 0;
	sh.v[TG_RES_MEMORY] = mem > 0 ? mem : 0;
	snprintf(pod, sizeof(pod), "slurm/%.250s", n->name);
	memset(&a, 0, sizeof(a));
	a.pod = pod;
	a.gang = "slurm";
	a.node = id;
	a.shape = &sh;
	a.preemptible = false;
	return tg_topology_add_alloc(t, &a) == TG_OK;
}

unsigned br_mixed_feed_nodes(const br_snodes *ns, tg_topology *t,
			     const br_map *k8s_node)
{
	unsigned changed = 0;
	size_t i;

	for (i = 0; t && i < ns->n; i++) {
		const br_snode *n = &ns->v[i];
		const char *kn = br_map_get(k8s_node, n->name);
		tg_node_id id;
		bool ch = false;

		if (!kn || tg_topology_node_find(t, kn, &id) != TG_OK)
			continue;
		if (n->unusable &&
		    tg_topology_node_set_unschedulable(t, id, true) == TG_OK)
			ch = true;
		ch = feed_alloc(t, id, n) || ch;
		changed += ch;
	}
	return changed;
}

void br_mixed_cycle(br_mixed *x, br_sched *s, tg_k8s *k, tg_topology *t)
{
	mcyc c;
	unsigned n = tg_k8s_ngangs(k), i;
	size_t r;

	memset(&c, 0, sizeof(c));
	c.x = x;
	c.s = s;
	c.k = k;
	c.t = t;
	c.now = br_now_ms();
	if (!x->up || !x->listed) {
		char msg[MSG_MAX];

		/* what Slurm holds is unknown: touch nothing */
		snprintf(msg, sizeof(msg), "waiting for Slurm: %.400s; nothing "
			 "is placed on the shared nodes meanwhile", x->why);
		build_node_map(&c);
		for (i = 0; i < n; i++)
			note_members(&c, tg_k8s_gang(k, i), "SlurmUnavailable",
				     msg, 0);
		goto write;
	}
	prune(x, c.now);
	collect_bound(&c);
	build_node_map(&c);
	evict_orphans(&c);
	cancel_orphans(&c);
	for (i = 0; i < n; i++) {
		const tg_gang *g = tg_k8s_gang(k, i);
		const char *name = tg_gang_name(g);
		const br_sjob *j = job_of(x, name);
		submit_st *st = br_map_get(&x->subs, name);
		char msg[MSG_MAX];

		if (!j) {
			size_t b;
			unsigned nb = 0;

			if (st && (st->inflight ||
				   c.now - st->at_ms < (st->id ?
				   SUBMIT_GRACE_MS : SUBMIT_RETRY_MS))) {
				/* answered soon, or listed soon */
				if (!st->inflight)
					recheck(x, st->at_ms + (st->id ?
						SUBMIT_GRACE_MS :
						SUBMIT_RETRY_MS) + 1);
				continue;
			}
			for (b = 0; b < c.nbound; b++)
				nb += strcmp(c.bound[b].o->ann_gang, name) ==
				      0 && !c.bound[b].o->deleting;
			if (nb) {
				/* its job ended with members still bound:
				 * they are being evicted; the gang is
				 * submitted whole once they are gone */
				continue;
			}
			if (!refuse_claims(&c, g))
				submit(&c, g, tg_gang_nmembers(g));
			continue;
		}
		if (br_sjob_preempting(j)) {
			/* its pods go; then the job is cancelled */
			continue;
		}
		if (br_sjob_running(j)) {
			bind_gang(&c, g, j);
			continue;
		}
		if (strcmp(j->state, "PENDING") == 0)
			snprintf(msg, sizeof(msg), "Slurm job %u (%s) pending: "
				 "%s", j->id, j->partition, j->reason);
		else
			snprintf(msg, sizeof(msg), "Slurm job %u (%s) is %s",
				 j->id, j->partition, j->state);
		note_members(&c, g, "SlurmJobPending", msg, j->id);
	}
	/* Slurm's view of the nodes into the pool's picture, after every
	 * binding decision (its allocations include our jobs' own) */
	br_mixed_feed_nodes(&x->snodes, c.t, &c.k8s_node);
write:
	if (c.nreq && br_sched_leading(s))
		br_sched_run_batch(s, c.reqs, c.nreq);
	for (r = 0; r < c.nreq; r++) {
		char why[300];
		bool ok = c.reqs[r]->done && c.reqs[r]->status >= 200 &&
			  c.reqs[r]->status < 300;

		if (!ok && c.rkey[r])	/* not bound: may be tried again */
			br_map_del(&x->binding, c.rkey[r]);
		if (c.reqs[r]->done && !ok)
			br_log(BR_LOG_WARN, "write failed", "method",
			       c.reqs[r]->method, "path", c.reqs[r]->path,
			       "error", br_req_reason(c.reqs[r], why,
						      sizeof(why)), NULL);
		br_req_free(c.reqs[r]);
		free(c.rkey[r]);
	}
	free(c.reqs);
	free(c.rkey);
	free(c.bound);
	br_map_free(&c.k8s_node);
}
