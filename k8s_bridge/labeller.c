/*
 * k8s_bridge/labeller.c - `topogang-bridge --label-nodes` (see labeller.h).
 *
 * What a pass does, in order:
 *   1. discovery (the core: tg_nodeinfo_*, and tg_topoconf_load_file() +
 *      tg_export(TG_EXPORT_K8S_PATCH) for the fabric) gives the wanted
 *      labels and annotations: exactly what `topogang discover node
 *      --output patch` and `topogang export --k8s-patch` print;
 *   2. GET /api/v1/nodes/NAME;
 *   3. one PATCH (application/merge-patch+json) with the labels that are
 *      missing (and, with --drift correct, those that disagree) and the
 *      annotations that differ; none when nothing is to change;
 *   4. one events.k8s.io/v1 Event per new disagreement.
 * Discovery runs again before every pass, so that a changed fabric file
 * (a ConfigMap update) or a changed host is seen; a pass whose discovery
 * fails keeps the previous result and logs why.
 *
 * The connection flags (--server, --kubeconfig, in-cluster, --log-level)
 * are the bridge's own: everything this file does not know goes to
 * br_config_from_args().
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <topogang/topogang.h>

#include "bconfig.h"
#include "event.h"
#include "http.h"
#include "labeller.h"
#include "log.h"
#include "util.h"

#define LB_MAX_ARGS	256		/* command-line words */
#define LB_MAX_DRIFT	64		/* disagreements remembered */
#define LB_SMI_MAX	(1u << 20)	/* bytes of nvidia-smi text */
#define LB_INTERVAL_S	300.0		/* default pass interval */
#define LB_INTERVAL_MAX	86400.0
#define LB_CONTROLLER	"topogang-labeller"

typedef struct lb_drift {
	char *key, *have, *want;
} lb_drift;

typedef struct lb {
	/* options */
	const char *node, *xml, *smi, *topoconf;
	double interval_s;
	bool once, correct;

	br_config cfg;
	br_http *h;
	char *node_esc;		/* URL-escaped node name */
	cJSON *labels;		/* wanted: key -> value */
	cJSON *annots;
	char *fabric_warn;	/* last "not in the fabric file" note */
	lb_drift drift[LB_MAX_DRIFT];
	unsigned ndrift;
	char *last_err;		/* the pass error last logged */
	char *disc_err;		/* the discovery error last logged */
	unsigned long ev_ctr;
} lb;

static volatile sig_atomic_t lb_stop;

static void lb_on_signal(int sig)
{
	lb_stop = sig;
}

bool br_labeller_wanted(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--label-nodes") == 0)
			return true;
	return false;
}

/* ---- command line ------------------------------------------------------ */

/*
 * argv[*i] is --name ("--name V" or "--name=V"): 1 with *v set, 0 when it
 * is not, -1 when the value is missing.
 */
static int lb_opt(int argc, char **argv, int *i, const char *name,
		  const char **v)
{
	size_t n = strlen(name);
	const char *a = argv[*i];

	if (strncmp(a, name, n) != 0)
		return 0;
	if (a[n] == '=') {
		*v = a + n + 1;
		return 1;
	}
	if (a[n])
		return 0;
	if (*i + 1 >= argc)
		return -1;
	*v = argv[++*i];
	return 1;
}

/* Takes the labeller's flags; the rest go to \p rest (rest[0] = argv[0]).
 * 0, or -1 with \p err filled. */
static int lb_args(lb *L, int argc, char **argv, char **rest, int *nrest,
		   char *err, size_t errlen)
{
	static const char *const names[] = {
		"--node-name", "--xml", "--nvidia-smi", "--topology-conf",
		"--interval", "--drift"
	};
	const char *drift = "report", *interval = NULL;
	const char **dst[] = {
		&L->node, &L->xml, &L->smi, &L->topoconf, &interval, &drift
	};
	int i, r;
	unsigned k;

	*nrest = 0;
	if (argc > LB_MAX_ARGS) {
		snprintf(err, errlen, "more than %d arguments", LB_MAX_ARGS);
		return -1;
	}
	rest[(*nrest)++] = argv[0];
	for (i = 1; i < argc; i++) {
		const char *v = NULL;
		bool took = false;

		if (strcmp(argv[i], "--label-nodes") == 0)
			continue;
		if (strcmp(argv[i], "--once") == 0) {
			L->once = true;
			continue;
		}
		for (k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
			r = lb_opt(argc, argv, &i, names[k], &v);
			if (r < 0) {
				snprintf(err, errlen, "%s: needs a value",
					 names[k]);
				return -1;
			}
			if (!r)
				continue;
			took = true;
			*dst[k] = v;
			break;
		}
		if (!took)
			rest[(*nrest)++] = argv[i];
	}
	rest[*nrest] = NULL;
	if (strcmp(drift, "report") == 0) {
		L->correct = false;
	} else if (strcmp(drift, "correct") == 0) {
		L->correct = true;
	} else {
		snprintf(err, errlen, "--drift: report or correct, not "
			 "'%.40s'", drift);
		return -1;
	}
	L->interval_s = LB_INTERVAL_S;
	if (interval && (!tg_f64_parse(interval, 0, LB_INTERVAL_MAX,
				       &L->interval_s) ||
			 L->interval_s <= 0)) {
		snprintf(err, errlen, "--interval: expected seconds, more "
			 "than 0 and at most %g, not '%.40s'",
			 LB_INTERVAL_MAX, interval);
		return -1;
	}
	if (!L->node || !*L->node)
		L->node = getenv("NODE_NAME");
	if (!L->node || !*L->node) {
		snprintf(err, errlen, "--label-nodes: no node name: set "
			 "NODE_NAME (the downward API's spec.nodeName) or "
			 "pass --node-name NAME");
		return -1;
	}
	return 0;
}

/* ---- discovery ---------------------------------------------------------- */

static tg_nodeinfo *lb_read_smi(const char *path, char *err, size_t errlen)
{
	tg_errinfo ei = { "" };
	tg_nodeinfo *ni = NULL;
	size_t len = 0;
	char *buf = br_read_file(path, LB_SMI_MAX, &len, err, errlen);

	if (!buf)
		return NULL;
	if (tg_nodeinfo_parse_nvidia_smi(buf, len, path, &ni, &ei)) {
		snprintf(err, errlen, "%s", ei.msg);
		ni = NULL;
	}
	free(buf);
	return ni;
}

/* What is inside the node: --nvidia-smi alone, --xml (NVLink merged from
 * --nvidia-smi when the XML has none), else this host through hwloc. */
static tg_nodeinfo *lb_nodeinfo(const lb *L, char *err, size_t errlen)
{
	tg_errinfo ei = { "" };
	tg_nodeinfo *ni = NULL, *smi = NULL;
	tg_err e;

	if (L->smi) {
		smi = lb_read_smi(L->smi, err, errlen);
		if (!smi)
			return NULL;
		if (!L->xml)
			return smi;
	}
	e = L->xml ? tg_nodeinfo_load_hwloc_file(L->xml, &ni, &ei) :
		     tg_nodeinfo_discover(&ni, &ei);
	if (e) {
		snprintf(err, errlen, "%s%s", L->xml ? "" : "this host: ",
			 ei.msg);
		tg_nodeinfo_destroy(smi);
		return NULL;
	}
	if (smi && !tg_nodeinfo_nvlink_known(ni) &&
	    tg_nodeinfo_merge_nvlink(ni, smi, &ei)) {
		snprintf(err, errlen, "%s and %s: %s", L->xml, L->smi, ei.msg);
		tg_nodeinfo_destroy(smi);
		tg_nodeinfo_destroy(ni);
		return NULL;
	}
	tg_nodeinfo_destroy(smi);
	return ni;
}

/*
 * The fabric labels of this node from the topology.conf: merged into
 * \p labels.  A node the file does not name gets none, and *warn says so
 * (caller frees).  0, or -1 with \p err filled.
 */
static int lb_fabric(const lb *L, cJSON *labels, char **warn, char *err,
		     size_t errlen)
{
	tg_errinfo ei = { "" };
	tg_topology *t = tg_topology_create();
	char *out = NULL;
	cJSON *list = NULL, *it;
	struct stat st;
	int rc = -1;

	*warn = NULL;
	if (!t) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (stat(L->topoconf, &st) != 0 && errno == ENOENT) {
		/* the optional ConfigMap is not there (yet): node labels
		 * only, and the file is looked for again every pass */
		*warn = br_xasprintf("%s: no such file: no fabric labels "
				     "until it appears", L->topoconf);
		tg_topology_destroy(t);
		return 0;
	}
	if (tg_topoconf_load_file(t, L->topoconf, &ei) ||
	    tg_topology_build(t, &ei) ||
	    tg_export(t, TG_EXPORT_K8S_PATCH, NULL, &out, &ei)) {
		snprintf(err, errlen, "%s%s%s",
			 strstr(ei.msg, L->topoconf) ? "" : L->topoconf,
			 strstr(ei.msg, L->topoconf) ? "" : ": ", ei.msg);
		goto out;
	}
	list = cJSON_Parse(out);
	cJSON_ArrayForEach(it, list) {
		const cJSON *l, *kv;

		if (!br_jstr(it, "name") ||
		    strcmp(br_jstr(it, "name"), L->node) != 0)
			continue;
		l = br_jpath(it, "patch.metadata.labels");
		cJSON_ArrayForEach(kv, l)
			if (cJSON_IsString(kv)) {
				cJSON_DeleteItemFromObjectCaseSensitive(
					labels, kv->string);
				cJSON_AddStringToObject(labels, kv->string,
							kv->valuestring);
			}
		rc = 0;
		goto out;
	}
	if (!list) {
		snprintf(err, errlen, "%s: out of memory", L->topoconf);
		goto out;
	}
	*warn = br_xasprintf("%s does not name node %s: no fabric labels",
			     L->topoconf, L->node);
	rc = 0;
out:
	cJSON_Delete(list);
	tg_free(out);
	tg_topology_destroy(t);
	return rc;
}

/* Discovery into L->labels / L->annots (replaced only on success). */
static int lb_discover(lb *L, char *err, size_t errlen)
{
	tg_errinfo ei = { "" };
	tg_nodeinfo *ni = lb_nodeinfo(L, err, errlen);
	char *out = NULL, *warn = NULL;
	cJSON *patch, *labels, *annots;

	if (!ni)
		return -1;
	if (tg_nodeinfo_export(ni, TG_NODEINFO_PATCH, L->node, &out, &ei)) {
		snprintf(err, errlen, "%s", ei.msg);
		tg_nodeinfo_destroy(ni);
		return -1;
	}
	tg_nodeinfo_destroy(ni);
	patch = cJSON_Parse(out);
	tg_free(out);
	labels = cJSON_DetachItemFromObjectCaseSensitive(
		(cJSON *)br_jget(patch, "metadata"), "labels");
	annots = cJSON_DetachItemFromObjectCaseSensitive(
		(cJSON *)br_jget(patch, "metadata"), "annotations");
	cJSON_Delete(patch);
	if (!labels || !annots) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (L->topoconf && lb_fabric(L, labels, &warn, err, errlen))
		goto fail;
	if (warn && (!L->fabric_warn || strcmp(warn, L->fabric_warn)))
		br_log(BR_LOG_WARN, warn, "node", L->node, NULL);
	free(L->fabric_warn);
	L->fabric_warn = warn;
	cJSON_Delete(L->labels);
	cJSON_Delete(L->annots);
	L->labels = labels;
	L->annots = annots;
	return 0;
fail:
	cJSON_Delete(labels);
	cJSON_Delete(annots);
	return -1;
}

/* ---- drift memory ------------------------------------------------------- */

static lb_drift *lb_drift_find(lb *L, const char *key)
{
	unsigned i;

	for (i = 0; i < L->ndrift; i++)
		if (strcmp(L->drift[i].key, key) == 0)
			return &L->drift[i];
	return NULL;
}

static void lb_drift_forget(lb *L, const char *key)
{
	lb_drift *d = lb_drift_find(L, key);

	if (!d)
		return;
	free(d->key);
	free(d->have);
	free(d->want);
	*d = L->drift[--L->ndrift];
}

/* Whether this disagreement was reported already. */
static bool lb_drift_known(lb *L, const char *key, const char *have,
			   const char *want)
{
	lb_drift *d = lb_drift_find(L, key);

	return d && strcmp(d->have, have) == 0 && strcmp(d->want, want) == 0;
}

static void lb_drift_remember(lb *L, const char *key, const char *have,
			      const char *want)
{
	lb_drift *d;

	lb_drift_forget(L, key);
	if (L->ndrift == LB_MAX_DRIFT)
		return;		/* reported again next pass: never lost */
	d = &L->drift[L->ndrift++];
	d->key = br_xstrdup(key);
	d->have = br_xstrdup(have);
	d->want = br_xstrdup(want);
}

/* ---- API calls ---------------------------------------------------------- */

/* A request, waited for; the caller frees it with br_req_free(). */
static br_req *lb_call(lb *L, const char *method, const char *path,
		       const char *ctype, const char *body)
{
	br_req *r = br_req_create(method, path);

	if (body)
		br_req_set_body(r, ctype, body);
	if (br_http_submit(L->h, r, NULL, NULL, NULL) == 0)
		br_http_wait(L->h, &r, 1);
	return r;
}

static bool lb_2xx(const br_req *r)
{
	return r->status >= 200 && r->status < 300;
}

/* One Warning Event on the Node; true when the server took it. */
static bool lb_event(lb *L, const char *uid, const char *key,
		     const char *have, const char *want)
{
	char nm[320], inst[160], evns[64], note[BR_EVENT_NOTE_MAX + 1];
	char why[400], *body, *path;
	br_event ev;
	br_req *r;
	bool ok;

	snprintf(inst, sizeof(inst), LB_CONTROLLER "-%.100s", L->node);
	snprintf(note, sizeof(note), "label %.200s is '%.63s' on the Node; "
		 "discovery says '%.63s'%s", key, have, want, L->correct ?
		 ": corrected" : ": left as is (--drift report)");
	memset(&ev, 0, sizeof(ev));
	ev.type = "Warning";
	ev.reason = "TopologyLabelDrift";
	ev.action = "Labeling";
	ev.note = note;
	ev.kind = "Node";
	ev.ns = "";	/* a cluster object: the event in "default" */
	ev.name = L->node;
	ev.uid = uid;
	ev.controller = LB_CONTROLLER;
	ev.instance = inst;
	body = br_event_body(&ev, br_wall_us(),
			     (unsigned)(L->ev_ctr++ & 0xfff), nm, sizeof(nm),
			     evns, sizeof(evns));
	if (!body)
		return false;
	path = br_event_path(evns, NULL);
	r = lb_call(L, "POST", path, "application/json", body);
	free(path);
	free(body);
	ok = lb_2xx(r);
	if (!ok)
		br_log(BR_LOG_WARN, "drift event not posted (retried next "
		       "pass)", "node", L->node, "label", key, "error",
		       br_req_reason(r, why, sizeof(why)), NULL);
	br_req_free(r);
	return ok;
}

/* Appends "key" to a comma list. */
static void lb_list(tg_buf *b, const char *key)
{
	if (b->len)
		tg_buf_adds(b, ",");
	tg_buf_adds(b, key);
}

/* One pass: read the Node, patch it, report drift.  0, or -1 with \p err
 * filled. */
static int lb_pass(lb *L, char *err, size_t errlen)
{
	char *path = br_xasprintf("/api/v1/nodes/%s", L->node_esc), why[400];
	cJSON *node = NULL, *patch = NULL, *md, *pl, *pa, *w;
	const cJSON *have, *hann;
	const char *uid;
	tg_buf added, corrected;
	char *body = NULL;
	br_req *r;
	int rc = -1;

	tg_buf_init(&added, 1u << 16);
	tg_buf_init(&corrected, 1u << 16);
	r = lb_call(L, "GET", path, NULL, NULL);
	if (r->status == 404) {
		snprintf(err, errlen, "node %s: no such Node object (404)",
			 L->node);
		goto out;
	}
	if (r->status != 200) {
		snprintf(err, errlen, "GET node %s: %s", L->node,
			 br_req_reason(r, why, sizeof(why)));
		goto out;
	}
	node = cJSON_ParseWithLength(r->resp.s, r->resp.len);
	if (!cJSON_IsObject(node)) {
		snprintf(err, errlen, "GET node %s: the answer is not a JSON "
			 "object", L->node);
		goto out;
	}
	have = br_jpath(node, "metadata.labels");
	hann = br_jpath(node, "metadata.annotations");
	uid = br_jpath_str(node, "metadata.uid");
	patch = cJSON_CreateObject();
	md = cJSON_AddObjectToObject(patch, "metadata");
	pl = cJSON_AddObjectToObject(md, "labels");
	pa = cJSON_AddObjectToObject(md, "annotations");
	cJSON_ArrayForEach(w, L->labels) {
		const char *want = w->valuestring, *cur = br_jstr(have,
								  w->string);

		if (!cur) {
			cJSON_AddStringToObject(pl, w->string, want);
			lb_list(&added, w->string);
			lb_drift_forget(L, w->string);
		} else if (strcmp(cur, want) != 0) {
			if (L->correct) {
				cJSON_AddStringToObject(pl, w->string, want);
				lb_list(&corrected, w->string);
			}
		} else {
			lb_drift_forget(L, w->string);
		}
	}
	cJSON_ArrayForEach(w, L->annots) {
		const char *cur = br_jstr(hann, w->string);

		if (!cur || strcmp(cur, w->valuestring) != 0)
			cJSON_AddStringToObject(pa, w->string,
						w->valuestring);
	}
	if (!pa->child)
		cJSON_DeleteItemFromObjectCaseSensitive(md, "annotations");
	if (!pl->child)
		cJSON_DeleteItemFromObjectCaseSensitive(md, "labels");
	if (md->child) {
		body = cJSON_PrintUnformatted(patch);
		br_req_free(r);
		r = lb_call(L, "PATCH", path, "application/merge-patch+json",
			    body ? body : "{}");
		if (!lb_2xx(r)) {
			snprintf(err, errlen, "PATCH node %s: %s", L->node,
				 br_req_reason(r, why, sizeof(why)));
			goto out;
		}
		br_log(BR_LOG_INFO, "node labelled", "node", L->node,
		       "added", added.len ? added.s : "", "corrected",
		       corrected.len ? corrected.s : "", "annotations",
		       br_jget(md, "annotations") ? "updated" : "", NULL);
	} else {
		br_log(BR_LOG_DEBUG, "node labels up to date", "node",
		       L->node, NULL);
	}
	/* every new disagreement: one Event */
	cJSON_ArrayForEach(w, L->labels) {
		const char *cur = br_jstr(have, w->string);
		char *copy;

		if (!cur || strcmp(cur, w->valuestring) == 0 ||
		    lb_drift_known(L, w->string, cur, w->valuestring))
			continue;
		copy = br_xstrdup(cur);
		br_log(BR_LOG_WARN, "label drift", "node", L->node, "label",
		       w->string, "on_node", copy, "discovered",
		       w->valuestring, "action", L->correct ? "corrected" :
		       "reported", NULL);
		if (lb_event(L, uid, w->string, copy, w->valuestring))
			lb_drift_remember(L, w->string, copy,
					  w->valuestring);
		free(copy);
	}
	rc = 0;
out:
	cJSON_free(body);
	cJSON_Delete(patch);
	cJSON_Delete(node);
	br_req_free(r);
	tg_buf_free(&added);
	tg_buf_free(&corrected);
	free(path);
	return rc;
}

/* Logs an error unless it is the one logged last in *slot; NULL:
 * recovered. */
static void lb_report(lb *L, char **slot, const char *what, const char *msg)
{
	if (!msg) {
		if (*slot)
			br_log(BR_LOG_INFO, "recovered", "node", L->node,
			       "from", *slot, NULL);
		free(*slot);
		*slot = NULL;
		return;
	}
	if (*slot && strcmp(*slot, msg) == 0) {
		br_log(BR_LOG_DEBUG, "still failing", "error", msg, NULL);
		return;
	}
	br_log(BR_LOG_ERROR, what, "node", L->node, "error", msg, NULL);
	free(*slot);
	*slot = br_xstrdup(msg);
}

int br_labeller_main(int argc, char **argv)
{
	lb L;
	char err[1024], ival[32];
	char *rest[LB_MAX_ARGS + 1];
	int nrest, rc = 2, r;
	unsigned i;
	struct sigaction sa;

	memset(&L, 0, sizeof(L));
	br_config_init(&L.cfg);
	if (lb_args(&L, argc, argv, rest, &nrest, err, sizeof(err))) {
		fprintf(stderr, "topogang-bridge: %s\n", err);
		goto fail_args;
	}
	r = br_config_from_args(&L.cfg, nrest, rest, err, sizeof(err));
	if (r != 0) {
		if (r < 0)
			fprintf(stderr, "topogang-bridge: %s\n", err);
		rc = r < 0 ? 2 : 0;
		goto fail_args;
	}
	br_log_set_level(L.cfg.log_level);
	if (lb_discover(&L, err, sizeof(err))) {
		fprintf(stderr, "topogang-bridge: %s\n", err);
		goto fail_args;
	}
	L.node_esc = br_urlencode(L.node);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = lb_on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	L.h = br_http_create(&L.cfg, err, sizeof(err));
	if (!L.h) {
		fprintf(stderr, "topogang-bridge: %s\n", err);
		rc = 1;
		goto fail_http;
	}
	snprintf(ival, sizeof(ival), "%g", L.interval_s);
	br_log(BR_LOG_INFO, "starting node labeller", "version",
	       PACKAGE_VERSION, "node", L.node, "server", L.cfg.server, "via",
	       L.cfg.conn_source, "source", L.xml ? L.xml : L.smi ? L.smi :
	       "this host (hwloc)", "fabric", L.topoconf ? L.topoconf : "",
	       "interval", ival, "drift", L.correct ? "correct" : "report",
	       NULL);
	for (;;) {
		int64_t end;

		if (lb_pass(&L, err, sizeof(err))) {
			if (L.once) {
				fprintf(stderr, "topogang-bridge: %s\n", err);
				rc = 1;
				break;
			}
			lb_report(&L, &L.last_err, "label pass failed "
				  "(retried)", err);
		} else {
			lb_report(&L, &L.last_err, NULL, NULL);
			if (L.once) {
				rc = 0;
				break;
			}
		}
		end = br_now_ms() + (int64_t)(L.interval_s * 1000);
		while (!lb_stop && br_now_ms() < end)
			br_http_poll(L.h, (long)BR_MIN(200, end - br_now_ms()),
				     NULL, 0);
		if (lb_stop) {
			br_log(BR_LOG_INFO, "stopping", "signal",
			       lb_stop == SIGTERM ? "TERM" : "INT", NULL);
			rc = 0;
			break;
		}
		if (lb_discover(&L, err, sizeof(err)))
			lb_report(&L, &L.disc_err, "discovery failed (the "
				  "last good result is kept)", err);
		else
			lb_report(&L, &L.disc_err, NULL, NULL);
	}
	br_http_destroy(L.h);
fail_http:
	free(L.node_esc);
fail_args:
	for (i = 0; i < L.ndrift; i++) {
		free(L.drift[i].key);
		free(L.drift[i].have);
		free(L.drift[i].want);
	}
	cJSON_Delete(L.labels);
	cJSON_Delete(L.annots);
	free(L.fabric_warn);
	free(L.last_err);
	free(L.disc_err);
	br_config_free(&L.cfg);
	return rc;
}
