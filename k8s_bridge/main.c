/*
 * k8s_bridge/main.c - topogang-bridge: a topology-aware gang scheduler
 * for Kubernetes on the shared placement core.
 *
 * One I/O thread, one loop: the curl multi handle (informers' lists and
 * watches, the lease, the scheduler's writes) and the HTTP endpoint's
 * sockets are waited on together; timers run on every turn.  The
 * scheduler runs a cycle from the loop when one is due; while the
 * cycle's worker thread builds the model and decides (sched.h), and
 * while its writes wait for the API server, it turns the same loop, so
 * watches, the lease and /healthz keep going.
 *
 * Exit status: 0 after SIGTERM/SIGINT (the lease released), 2 for bad
 * usage or configuration (one line on stderr), 1 for a failure to start.
 *
 * With --label-nodes it is the node labeller instead (labeller.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <topogang/topogang.h>

#include "bconfig.h"
#include "http.h"
#include "httpd.h"
#include "informer.h"
#include "labeller.h"
#include "leader.h"
#include "log.h"
#include "metrics.h"
#include "mixed.h"
#include "sched.h"
#include "ui.h"
#include "feed.h"

/* What the daemon lists and watches. */
static const br_resdef R_NODES = {
	"nodes", "", { "v1" }, "Node", NULL, false, false };
static const br_resdef R_PODS = {
	"pods", "", { "v1" }, "Pod",
	"status.phase!=Succeeded,status.phase!=Failed", false, true };
static const br_resdef R_PCS = {
	"priorityclasses", "scheduling.k8s.io", { "v1" }, "PriorityClass",
	NULL, true, false };
static const br_resdef R_PDBS = {
	"poddisruptionbudgets", "policy", { "v1" }, "PodDisruptionBudget",
	NULL, true, false };
/* v1alpha3 since Kubernetes 1.37 (v1alpha2 in 1.36 only; same fields). */
static const br_resdef R_UPG = {
	"podgroups", "scheduling.k8s.io", { "v1alpha3", "v1alpha2" },
	"PodGroup", NULL, true, false };
/*
 * What else the core's loader reads (feed.c): the gang dialects' group
 * objects from the core's dialect table (never a copy here), the topology
 * objects, namespaces, PersistentVolumeClaims and PersistentVolumes.
 */
#define NINF (BR_MAX_FEED + 5)
#define NINF_USED (nfeed + 5)	/* those created */

static br_resdef R_FEED[BR_MAX_FEED];
static unsigned nfeed;

typedef struct app {
	br_config cfg;
	br_http *h;
	br_httpd *httpd;
	br_leader *leader;
	br_sched *sched;
	br_mixed *mixed;	/* mixed mode, NULL = off */
	br_ui *ui;		/* /ui, NULL = off */
	br_metrics m;
	br_informer *inf[NINF];	/* nodes pods pcs pdbs upg feed... */
	br_informer *feed[BR_MAX_FEED];
	bool was_leading;
	bool synced_logged;
} app;

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static bool all_synced(const app *a)
{
	unsigned i;

	for (i = 0; i < NINF_USED; i++)
		if (!br_informer_synced(a->inf[i]))
			return false;
	return true;
}

static bool leading(void *ud)
{
	app *a = ud;

	return !stop_signal && br_leader_leading(a->leader, br_now_ms());
}

static void on_inf_event(void *ud, br_informer *inf, int type,
			 const br_obj *old, const br_obj *cur)
{
	app *a = ud;

	if (a->sched)
		br_sched_on_event(a->sched, inf, type, old, cur);
}

static void on_leader(void *ud, bool on)
{
	app *a = ud;

	if (!on && a->sched)
		br_sched_stop(a->sched);
	if (!on)
		br_ui_reset(a->ui);	/* a standby's picture would go stale */
	if (on && a->sched)
		br_sched_on_event(a->sched, NULL, 0, NULL, NULL);
}

static void observe(const br_req *r, void *ud)
{
	app *a = ud;

	a->m.api_requests++;
	if (r->cancelled)
		return;
	if (r->status == 0 || r->status >= 400)
		a->m.api_errors[r->status < 600 ? r->status : 0]++;
}

/* ---- /healthz /readyz /metrics ----------------------------------------- */

static void gauge(tg_buf *b, const char *name, const char *help, double v)
{
	br_metrics_header(b, name, "gauge", help);
	tg_buf_addf(b, "%s %g\n", name, v);
}

static void per_informer(const app *a, tg_buf *b, const char *name,
			 const char *type, const char *help, int what)
{
	unsigned i;

	br_metrics_header(b, name, type, help);
	for (i = 0; i < NINF_USED; i++) {
		const br_informer *inf = a->inf[i];
		const br_informer_stats *st = br_informer_get_stats(inf);
		const br_resdef *d = br_informer_def(inf);
		double v = what == 0 ? (double)br_informer_store(inf)->n :
			   what == 1 ? (double)st->watch_restarts :
			   what == 2 ? (double)st->relists :
			   what == 3 ? (double)br_informer_installed(inf) :
			   (double)br_informer_store(inf)->bytes;

		tg_buf_addf(b, "%s{resource=\"%s%s%s\"} %g\n", name,
			    d->resource, *d->group ? "." : "", d->group, v);
	}
}

static int endpoint(void *ud, const char *path, tg_buf *body,
		    const char **ctype)
{
	app *a = ud;
	bool lead = br_leader_leading(a->leader, br_now_ms());
	const char *why = "";

	if (a->ui && strncmp(path, "/ui", 3) == 0 &&
	    (!path[3] || path[3] == '/'))
		return br_ui_serve(a->ui, path, body, ctype);
	if (strcmp(path, "/healthz") == 0 || strcmp(path, "/livez") == 0) {
		tg_buf_adds(body, "ok\n");
		return 200;
	}
	if (strcmp(path, "/readyz") == 0) {
		if (!all_synced(a)) {
			tg_buf_adds(body, "caches not synced\n");
			return 503;
		}
		if (a->mixed && !br_mixed_ready(a->mixed, &why)) {
			/* the shared pool: nothing can be placed there */
			tg_buf_addf(body, "shared pool not ready: %s\n", why);
			return 503;
		}
		tg_buf_addf(body, "ok (%s)\n", lead ? "leader" : "standby");
		return 200;
	}
	if (strcmp(path, "/metrics") == 0) {
		*ctype = "text/plain; version=0.0.4; charset=utf-8";
		br_metrics_render(&a->m, body);
		gauge(body, "topogang_leader", "1 when this replica leads.",
		      lead ? 1 : 0);
		gauge(body, "topogang_caches_synced",
		      "1 when every cache has been listed.",
		      all_synced(a) ? 1 : 0);
		gauge(body, "topogang_pending_gangs",
		      "Gangs in the last cycle's queue.",
		      br_sched_pending(a->sched));
		gauge(body, "topogang_preempting_gangs",
		      "Gangs waiting for their victims to go.",
		      br_sched_waiting(a->sched));
		gauge(body, "topogang_api_requests_queued",
		      "API requests waiting for the client-side rate limit "
		      "or a Retry-After.", br_http_queued(a->h));
		per_informer(a, body, "topogang_cache_objects", "gauge",
			     "Objects in each cache.", 0);
		per_informer(a, body, "topogang_watch_restarts_total",
			     "counter", "Watches started again (stream "
			     "ended, dropped or failed).", 1);
		per_informer(a, body, "topogang_relists_total", "counter",
			     "Lists after a 410 (Expired or Gone).", 2);
		per_informer(a, body, "topogang_resource_installed", "gauge",
			     "1 when the resource is served (CRDs).", 3);
		per_informer(a, body, "topogang_cache_bytes", "gauge",
			     "Bytes of object text in each cache.", 4);
		if (a->mixed)
			br_mixed_metrics(a->mixed, body);
		return 200;
	}
	tg_buf_adds(body, "not found\n");
	return 404;
}

/* A cycle's model, for /ui (from the bridge's own state only). */
static void on_model(void *ud, const tg_topology *t, const tg_k8s *k,
		     const tg_decision *const *d, size_t nd)
{
	app *a = ud;

	if (a->ui)
		br_ui_update(a->ui, t, k, d, nd,
			     br_informer_store(a->inf[1]));
}

/* ---- the loop ---------------------------------------------------------- */

static void ticks(app *a)
{
	int64_t now = br_now_ms();
	bool lead;
	unsigned i;

	for (i = 0; i < NINF_USED; i++)
		br_informer_tick(a->inf[i], now);
	/* campaign only with synced caches (kube-scheduler waits for its
	 * informers before leader election): a replica that cannot list
	 * must not take the Lease from one that can */
	if (!stop_signal && all_synced(a))
		br_leader_tick(a->leader, now);
	lead = br_leader_leading(a->leader, now);
	if (a->was_leading && !lead)
		br_sched_stop(a->sched);
	a->was_leading = lead;
	if (stop_signal)
		br_sched_stop(a->sched);
	br_sched_pump(a->sched);
	if (a->mixed && br_mixed_tick(a->mixed, now))
		br_sched_on_event(a->sched, NULL, 0, NULL, NULL);
	if (!a->synced_logged && all_synced(a)) {
		a->synced_logged = true;
		br_log(BR_LOG_INFO, "all caches synced", NULL);
	}
}

static void turn_wait(app *a, long wait_ms)
{
	struct curl_waitfd fds[BR_HTTPD_MAX_CONNS + 1];
	unsigned n = a->httpd ? br_httpd_fds(a->httpd, fds,
					      BR_HTTPD_MAX_CONNS + 1) : 0;

	br_http_poll(a->h, wait_ms, fds, n);
	if (a->httpd)
		br_httpd_process(a->httpd, fds, n);
	ticks(a);
}

static void turn(void *ud)
{
	turn_wait(ud, 20);
}

static int run(app *a)
{
	while (!stop_signal) {
		int64_t now;

		turn_wait(a, 100);
		now = br_now_ms();
		if (all_synced(a) && br_leader_leading(a->leader, now) &&
		    br_sched_due(a->sched, now))
			br_sched_cycle(a->sched);
	}
	return 0;
}

/* One informer per resource: nodes, pods, pcs, pdbs, upg, then R_FEED. */
static void informers_create(app *a)
{
	static const br_resdef *const first[] = {
		&R_NODES, &R_PODS, &R_PCS, &R_PDBS, &R_UPG };
	unsigned i;

	for (i = 0; i < 5; i++)
		a->inf[i] = br_informer_create(a->h, &a->cfg, first[i],
					       on_inf_event, a);
	for (i = 0; i < nfeed; i++) {
		a->feed[i] = br_informer_create(a->h, &a->cfg, &R_FEED[i],
						on_inf_event, a);
		a->inf[5 + i] = a->feed[i];
	}
}

int main(int argc, char **argv)
{
	app a;
	char err[1024];
	int rc = 1, r;
	unsigned i;
	br_sched_env env;
	struct sigaction sa;

	tg_set_allocator(malloc, realloc, free); /* we free() its strings */
	if (br_labeller_wanted(argc, argv))
		return br_labeller_main(argc, argv);
	memset(&a, 0, sizeof(a));
	br_config_init(&a.cfg);
	r = br_config_from_args(&a.cfg, argc, argv, err, sizeof(err));
	if (r != 0) {
		if (r < 0)
			fprintf(stderr, "topogang-bridge: %s\n", err);
		br_config_free(&a.cfg);
		return r < 0 ? 2 : 0;
	}
	br_log_set_level(a.cfg.log_level);
	if (br_feed_init(R_FEED, BR_MAX_FEED, BR_MAX_DIALECT_FEEDS, &nfeed, err,
			 sizeof(err))) {
		fprintf(stderr, "topogang-bridge: %s\n", err);
		br_config_free(&a.cfg);
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);

	a.h = br_http_create(&a.cfg, err, sizeof(err));
	if (!a.h) {
		fprintf(stderr, "topogang-bridge: %s\n", err);
		goto fail_http;
	}
	br_http_set_observer(a.h, observe, &a);
	br_http_set_loop(a.h, turn, &a);
	if (*a.cfg.listen) {
		a.httpd = br_httpd_create(a.cfg.listen, endpoint, &a, err,
					  sizeof(err));
		if (!a.httpd) {
			fprintf(stderr, "topogang-bridge: %s\n", err);
			goto fail_httpd;
		}
	}
	informers_create(&a);
	if (a.cfg.mixed) {
		a.mixed = br_mixed_create(&a.cfg, a.h, &a.m, a.inf[0], a.inf[1],
					  err, sizeof(err));
		if (!a.mixed) {
			fprintf(stderr, "topogang-bridge: mixed mode: %s\n", err);
			for (i = 0; i < NINF_USED; i++)
				br_informer_destroy(a.inf[i]);
			br_httpd_destroy(a.httpd);
			goto fail_httpd;
		}
		br_http_set_loop(br_mixed_http(a.mixed), turn, &a);
		br_log(BR_LOG_INFO, "mixed mode: Slurm places the gangs",
		       "slurmrestd", a.cfg.mixed->url, NULL);
	}
	a.leader = br_leader_create(a.h, &a.cfg, on_leader, &a);
	memset(&env, 0, sizeof(env));
	env.h = a.h;
	env.cfg = &a.cfg;
	env.m = &a.m;
	env.nodes = a.inf[0];
	env.pods = a.inf[1];
	env.pcs = a.inf[2];
	env.pdbs = a.inf[3];
	env.upg = a.inf[4];
	env.mixed = a.mixed;
	env.feed = a.feed;
	env.nfeed = nfeed;
	env.leading = leading;
	env.on_model = on_model;
	env.ud = &a;
	if (a.cfg.ui)
		a.ui = br_ui_create();
	a.sched = br_sched_create(&env);
	{
		char port[16];

		snprintf(port, sizeof(port), "%d",
			 a.httpd ? br_httpd_port(a.httpd) : 0);
		br_log(BR_LOG_INFO, "starting", "version", PACKAGE_VERSION,
		       "server", a.cfg.server, "via", a.cfg.conn_source,
		       "scheduler_name", a.cfg.scheduler_name, "identity",
		       a.cfg.identity, "lease", a.cfg.leader_elect ?
		       a.cfg.lease_name : "(leader election off)",
		       "lease_namespace", a.cfg.lease_namespace,
		       "listen_port", port, "config",
		       a.cfg.config_file ? a.cfg.config_file : "", NULL);
	}
	rc = run(&a);
	br_log(BR_LOG_INFO, "stopping", "signal",
	       stop_signal == SIGTERM ? "TERM" : "INT", NULL);
	br_sched_stop(a.sched);
	br_leader_release(a.leader);
	br_sched_destroy(a.sched);
	br_ui_destroy(a.ui);
	br_mixed_destroy(a.mixed);
	br_leader_destroy(a.leader);
	for (i = 0; i < NINF_USED; i++)
		br_informer_destroy(a.inf[i]);
	br_httpd_destroy(a.httpd);
fail_httpd:
	br_http_destroy(a.h);
fail_http:
	br_config_free(&a.cfg);
	return rc;
}
