/*
 * k8s_bridge/sched.c - the scheduling loop (see sched.h for the design).
 *
 * Everything placement decides comes from the core: tg_place(),
 * tg_decision_apply() and the decision's accessors.  This file turns the
 * caches into the core's input and the decisions into API writes.
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <topogang/topogang.h>

#include "event.h"
#include "log.h"
#include "map.h"
#include "mixed.h"
#include "sched.h"
#include "volbind.h"

/* Bounds and timings. */
/* Bytes handed to one snapshot: the whole cluster with
 * TOPOGANG_BRIDGE_NO_DELTAS, else only the cycle's overlays (the objects
 * themselves are in the core's cache, lent from the stores and bounded
 * by the loader's K8S_MAX_OBJECTS) */
#define SNAP_MAX		(4ull << 30)
/* Upstream PodGroups are given to the core as Koordinator ones (the
 * group of scheduling.sigs.k8s.io) */
#define UPG_API		"scheduling.sigs.k8s.io/v1alpha1"
#define BIND_ATTEMPTS		3
#define BIND_RETRY_MS		200
#define VICTIM_RETRY_MS		10000
#define BATCH_DEBOUNCE_MS	50	/* quiet time before a cycle */
#define BATCH_ARRIVAL_MS	10	/* the same when only new pending
					 * pods and group objects came
					 * (br_sched_quiet_ms) */
#define BATCH_MAX_WAIT_MS	500	/* longest a change waits */
#define SAFETY_CYCLE_MS		30000
#define SNAP_ERROR_RETRY_MS	5000
#define CYCLE_BUDGET_MS		2000	/* of deciding in one cycle; the
					 * gangs left go to the next cycle,
					 * at once (logged) */
#define CYCLE_BUDGET_ENV	"TOPOGANG_BRIDGE_CYCLE_BUDGET_MS"
					/* tests only: another budget (0:
					 * one gang a cycle, budget_ms) */
#define MAX_WARNINGS_KEPT	10000
#define LOG_NODES_MAX		16
#define EVENTS_INFLIGHT		8	/* events posted at once */
#define EVENTS_QUEUED		100000	/* queued; then dropped */
#define SERIES_WINDOW_MS	360000	/* an identical event within 6 min
					 * joins the series (client-go's
					 * tools/events finishes a series
					 * after 6 min without one) */
#define SERIES_PATCH_MS		1000	/* a series is patched at most
					 * once a second (repeats in
					 * between are counted) */
#define SERIES_MAX		100000	/* series kept; then plain */

typedef struct gstate {
	unsigned attempts;	/* consecutive failed attempts */
	int64_t next_ms;	/* not before (backoff) */
	int64_t last_ms;	/* last attempt */
	uint64_t seq;		/* cluster events at the last attempt */
	bool need_event;	/* unschedulable: wait for a cluster event */
	int64_t waiting_ms;	/* preempting since, 0 = not */
	int64_t partial_ms;	/* half-bound since, 0 = not */
	int64_t seen;		/* cycle it was last in the queue */
	int64_t reached;	/* cycle it was last decided (not skipped
				 * over the budget) */
} gstate;

typedef struct vstate {
	char *uid;
	int64_t next_ms;	/* next eviction attempt */
	bool marked;		/* DisruptionTarget written */
} vstate;

/* A pod we bound that the watch has not shown bound yet.  It stays until
 * the watch shows the pod bound (anywhere) or the pod goes (deleted, or
 * another UID under the name): never on a timer, as kube-scheduler never
 * expires a bound assumption (a slow watch or a long re-list would
 * otherwise give its node away twice).
 * A held one (volbind.h) is a member of a placed gang whose binding
 * waits for its WaitForFirstConsumer claims: not bound, it keeps its
 * node as a reservation (nominated to it in the snapshot) while the gang
 * is held again every cycle (refreshed: cycle), and goes when it is not
 * (hold_release). */
typedef struct assumed {
	char *uid, *node, *gang, *domain;
	unsigned rank;
	bool held;		/* the volume hold's reservation */
	int64_t cycle;		/* held: the cycle that held it last */
	int64_t held_ms;	/* held: when */
} assumed;

typedef struct strvec {
	char **v;
	size_t n, cap;
} strvec;

typedef struct reqvec {
	br_req **r;
	size_t n, cap;
} reqvec;

/* An events.k8s.io/v1 Event and its repeats (series). */
typedef struct evseries {
	char *name, *ns;	/* the Event object */
	uint32_t count;		/* occurrences; > 1: a series */
	uint32_t sent;		/* count the API has */
	int64_t first_ms;	/* created */
	int64_t last_ms;	/* last observed */
	int64_t last_us;	/* the same, wall clock */
	bool dirty;		/* in series_dirty */
} evseries;

typedef struct pgcount {
	unsigned scheduled;	/* members bound (or assumed) by us */
	unsigned running;	/* of those, phase Running */
	bool pending;		/* in our queue */
} pgcount;

struct br_sched {
	br_sched_env env;
	br_map gangs;		/* gstate by gang name */
	br_map victims;		/* vstate by pod key */
	br_map assumed;		/* assumed by pod key */
	br_volbind *vb;		/* gangs waiting on their claims */
	br_map warned_nodes;	/* node name: event sent */
	br_map warnings;	/* loader warnings logged */
	uint64_t seq;		/* cluster events seen */
	uint64_t shown;		/* changes the /ui picture shows: the
				 * cluster events and bound pods arrived */
	uint64_t model_shown;	/* shown when the last model was taken */
	bool arrivals_only;	/* dirty only from new pending pods of ours
				 * and new group objects (mark_arrival) */
	bool dirty;
	int64_t dirty_since_ms, last_change_ms;
	int64_t next_due_ms;
	int64_t last_cycle_ms;
	int64_t last_end_ms;	/* when the last cycle ended */
	int64_t last_snap_ms;	/* how long its snapshot took */
	int64_t cycle_no;
	int64_t error_until_ms;
	int64_t budget_ms;	/* CYCLE_BUDGET_MS, or CYCLE_BUDGET_ENV's */
	bool busy, stopped;
	br_req **batch;		/* the writes in flight */
	size_t nbatch;
	unsigned pending, waiting;
	uint64_t ev_ctr;
	/* events wait here: bindings and status writes go first */
	br_req **evq;
	size_t evhead, evn, evcap;
	br_req *evfly[EVENTS_INFLIGHT];
	uint64_t ev_dropped;
	br_map series;		/* evseries by identity (send_event) */
	/* kept from the watch events, so that a cycle with nothing to
	 * decide needs no model (model_needed) */
	size_t npending;	/* pods pending for our scheduler name */
	bool nodes_changed;	/* a Node changed in what placement reads
				 * since the last model (warnings, events) */
	br_map pgc;		/* pgcount of bound members by gang */
	/* what the core derived from bound pods, kept between models
	 * (tg_k8s_cache; the worker's while a cycle runs); dropped when an
	 * informer lists again (a re-list after 410 or 504) */
	tg_k8s_cache *kcache;
	uint64_t kcache_lists;
	/* the cache holds the objects, fed the stores' changes (deltas);
	 * fed: it has every change up to the last model's handoff (false:
	 * the next takes every object again); false deltas: every model
	 * hands the cluster over (TOPOGANG_BRIDGE_NO_DELTAS, or no cache) */
	bool deltas, fed;
	pthread_t reaper;	/* frees the last cycle (reap) */
	bool reaping;		/* reaper to join */
	bool reaped;		/* it is done (atomic) */
	strvec series_dirty;	/* identities with repeats to patch */
	int64_t series_next_ms;
};

/* One cycle's working set. */
typedef struct plan {
	tg_gang *g;
	tg_decision *d;
	gstate *gs;
	bool partial;		/* completing a half-bound gang */
	bool held;		/* placed, but its victims still terminate */
	bool vol_held;		/* placed, its binding held for its claims
				 * (or the hold just released: volbind.h) */
	const char *domain;	/* recorded on the pods: the gang's domain
				 * (a repair keeps the original one) */
} plan;

typedef struct bound_info {
	char *domain;
	strvec keys;		/* bound members (ns/name) */
} bound_info;

struct view;

/*
 * One cycle's working set.  Made on the I/O thread; between the start of
 * the worker (cycle_work) and its end the worker alone touches it, and
 * of the scheduler's state only the gang states (s->gangs: no one else
 * reads them then); what it would write elsewhere (metrics, the queue
 * gauges, the next timer) it keeps here, and the I/O thread applies it
 * after the join.  Freed whole by reap(), on a thread of its own.
 */
typedef struct cyc {
	br_sched *s;
	int64_t now;
	int64_t t0_us;		/* wall clock at the start */
	uint64_t seq;		/* s->seq at the start */
	tg_k8s *k;
	tg_topology *t;
	br_map bound;		/* gang name -> bound_info */
	br_map terminating;	/* node name -> a bound pod terminating */
	br_map podix;		/* pod key -> its object in the view: the
				 * pending pods and the bound gang members
				 * (the worker's lookups; never the live
				 * cache, which the I/O thread changes) */
	strvec foreign;		/* owner rule: pod, gang, owner, gang's
				 * owner, by four (logged by the I/O
				 * thread, once each: log_foreign) */
	plan *pl;
	size_t npl, cappl;
	struct view *views;	/* nodes, pods, pcs, pdbs, feeds, upg;
				 * with deltas: pods (what build_indexes
				 * reads, the assumed ones), claims (the
				 * stamped ones) */
	unsigned nviews;
	struct view *pods;	/* in views */
	/* deltas: the changes for the core's cache since the last model
	 * (applied by the worker before the build); dclear: every object
	 * again, the cache emptied first */
	struct kdelta *dl;
	size_t ndl, capdl;
	struct dsrc *dsrc;	/* the informers they come from */
	unsigned ndsrc;
	bool dclear;
	/* results of the worker */
	bool built;		/* the model is there */
	bool done;		/* the worker finished (atomic) */
	double snap_ms;		/* the build */
	double add_ms;		/* of which giving the objects to the core */
	bool kept;		/* the core updated its kept topology */
	unsigned pending, waiting;
	int64_t next_due_ms;
	unsigned skipped;	/* gangs not decided: over the budget */
	br_hist decision;
	uint64_t unschedulable, preempting;
} cyc;

static void reap_join(br_sched *s);
static void deltas_track(br_sched *s);

/* ---- small things ------------------------------------------------------ */

static void sv_push(strvec *v, const char *s)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 8;
		v->v = br_xrealloc(v->v, v->cap * sizeof(char *));
	}
	v->v[v->n++] = br_xstrdup(s);
}

static void rv_push(reqvec *v, br_req *r)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 64;
		v->r = br_xrealloc(v->r, v->cap * sizeof(*v->r));
	}
	v->r[v->n++] = r;
}

static void sv_free(strvec *v)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		free(v->v[i]);
	free(v->v);
	v->v = NULL;
	v->n = v->cap = 0;
}

static void free_bound(void *p)
{
	bound_info *b = p;

	free(b->domain);
	sv_free(&b->keys);
	free(b);
}

static void free_series(void *p)
{
	evseries *e = p;

	free(e->name);
	free(e->ns);
	free(e);
}

static void free_vstate(void *p)
{
	vstate *v = p;

	free(v->uid);
	free(v);
}

static void free_assumed(void *p)
{
	assumed *a = p;

	free(a->uid);
	free(a->node);
	free(a->gang);
	free(a->domain);
	free(a);
}

static bool streq0(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

void br_split_key(const char *key, char *ns, size_t nn, char *name,
		  size_t n)
{
	const char *slash = strchr(key, '/');

	if (!slash) {
		snprintf(ns, nn, "default");
		snprintf(name, n, "%s", key);
		return;
	}
	snprintf(ns, nn, "%.*s", (int)(slash - key), key);
	snprintf(name, n, "%s", slash + 1);
}

static const char *ms_str(char *buf, size_t n, double ms)
{
	snprintf(buf, n, "%.3f", ms);
	return buf;
}

static bool leading(br_sched *s)
{
	if (s->stopped)
		return false;
	return s->env.leading ? s->env.leading(s->env.ud) : true;
}

/* Runs requests (caller-owned) to completion; cancellable by stop. */
static void run_batch(br_sched *s, br_req **reqs, size_t n)
{
	size_t i;

	s->batch = reqs;
	s->nbatch = n;
	for (i = 0; i < n; i++)
		if (reqs[i] && !reqs[i]->done && br_http_submit(s->env.h,
								reqs[i], NULL,
								NULL, NULL))
			reqs[i]->done = true;
	br_http_wait(s->env.h, reqs, n);
	s->batch = NULL;
	s->nbatch = 0;
}

static void sleep_ms(br_sched *s, int64_t ms)
{
	int64_t until = br_now_ms() + ms;

	while (br_now_ms() < until && !s->stopped)
		br_http_turn(s->env.h);
}

/* ---- create / events --------------------------------------------------- */

/* CYCLE_BUDGET_MS, or what CYCLE_BUDGET_ENV says (tests drive a cycle
 * past the budget with 0); a bad value is said and the default kept. */
static int64_t cycle_budget(void)
{
	const char *v = getenv(CYCLE_BUDGET_ENV);
	char *end;
	long long n;

	if (!v)
		return CYCLE_BUDGET_MS;
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno || end == v || *end || n < 0 || n > CYCLE_BUDGET_MS) {
		br_log(BR_LOG_WARN, CYCLE_BUDGET_ENV " is not a count of ms "
		       "from 0 to CYCLE_BUDGET_MS; CYCLE_BUDGET_MS kept",
		       "value", v, NULL);
		return CYCLE_BUDGET_MS;
	}
	br_log(BR_LOG_INFO, "cycle budget from " CYCLE_BUDGET_ENV " (tests "
	       "only)", "budget_ms", v, NULL);
	return n;
}

br_sched *br_sched_create(const br_sched_env *env)
{
	br_sched *s = br_xcalloc(1, sizeof(*s));

	s->env = *env;
	br_map_init(&s->gangs, free);
	br_map_init(&s->victims, free_vstate);
	br_map_init(&s->assumed, free_assumed);
	s->vb = br_volbind_create();
	br_map_init(&s->warned_nodes, NULL);
	br_map_init(&s->warnings, NULL);
	br_map_init(&s->series, free_series);
	br_map_init(&s->pgc, free);
	s->dirty = true;
	s->nodes_changed = true;
	s->budget_ms = cycle_budget();
	/* NULL: every build parses everything (the environment switch
	 * is for comparisons and for tests that want long snapshots) */
	if (!getenv("TOPOGANG_BRIDGE_NO_MODEL_CACHE"))
		s->kcache = tg_k8s_cache_create();
	else
		br_log(BR_LOG_INFO, "the core's model cache is off "
		       "(TOPOGANG_BRIDGE_NO_MODEL_CACHE)", NULL);
	s->deltas = s->kcache && !getenv("TOPOGANG_BRIDGE_NO_DELTAS");
	if (s->kcache && !s->deltas)
		br_log(BR_LOG_INFO, "every model is handed the whole cluster "
		       "(TOPOGANG_BRIDGE_NO_DELTAS)", NULL);
	if (s->deltas)
		deltas_track(s);
	return s;
}

void br_sched_destroy(br_sched *s)
{
	unsigned i;

	if (!s)
		return;
	reap_join(s);
	tg_k8s_cache_destroy(s->kcache);
	for (i = 0; i < EVENTS_INFLIGHT; i++)
		if (s->evfly[i])
			br_http_cancel(s->env.h, s->evfly[i]);
	if (s->evn)
		br_log(BR_LOG_INFO, "events not sent at exit", NULL);
	while (s->evn) {
		br_req_free(s->evq[s->evhead]);
		s->evhead = (s->evhead + 1) % s->evcap;
		s->evn--;
	}
	free(s->evq);
	br_map_free(&s->gangs);
	br_map_free(&s->victims);
	br_map_free(&s->assumed);
	br_volbind_destroy(s->vb);
	br_map_free(&s->warned_nodes);
	br_map_free(&s->warnings);
	br_map_free(&s->series);
	br_map_free(&s->pgc);
	sv_free(&s->series_dirty);
	free(s);
}

static void mark(br_sched *s, bool event)
{
	int64_t now = br_now_ms();

	if (!s->dirty)
		s->dirty_since_ms = now;
	s->dirty = true;
	s->last_change_ms = now;
	s->arrivals_only = false;
	if (event) {
		s->seq++;
		s->shown++;
	}
}

/* A new pending pod of ours or a new object of the feed (group objects
 * and the other CRs the core reads): see br_sched_quiet_ms(). */
static void mark_arrival(br_sched *s)
{
	bool only = !s->dirty || s->arrivals_only;

	mark(s, true);
	s->arrivals_only = only;
}

static bool is_feed(const br_sched *s, const br_informer *inf)
{
	unsigned i;

	for (i = 0; i < s->env.nfeed; i++)
		if (s->env.feed[i] == inf)
			return true;
	return inf == s->env.upg;
}

/*
 * PodGroups whose status this scheduler writes, as scheduler-plugins'
 * coscheduling does (the same v1alpha1 schema in both groups).
 */
static bool pg_status_feed(const br_informer *inf)
{
	const br_resdef *d = br_informer_def(inf);

	return strcmp(d->kind, "PodGroup") == 0 &&
	       (strcmp(d->group, "scheduling.x-k8s.io") == 0 ||
		strcmp(d->group, "scheduling.sigs.k8s.io") == 0);
}

static bool pending_ours(const br_sched *s, const br_obj *o)
{
	return o && !o->node &&
	       strcmp(o->sched, s->env.cfg->scheduler_name) == 0;
}

/* A bound member of a gang, as the PodGroup status counts it. */
static void pg_track(br_map *m, const br_obj *o, int d)
{
	pgcount *pc;

	if (!o || !o->node || !o->ann_gang || o->deleting)
		return;
	pc = br_map_get(m, o->ann_gang);
	if (!pc) {
		pc = br_xcalloc(1, sizeof(*pc));
		br_map_put(m, o->ann_gang, pc);
	}
	pc->scheduled += d;
	if (o->running)
		pc->running += d;
	if (!pc->scheduled && !pc->running)
		br_map_del(m, o->ann_gang);
}

/*
 * The counts kept from the pod events (every event, leading or not):
 * pods pending for us, and the bound members of each gang.  An event
 * takes the old object's share away and adds the new one's, so the
 * counts equal a walk of the cache at every moment (re-lists come as
 * events too: informer.c swap_in_list); br_sched_check() compares them.
 */
static void track_pod(br_sched *s, const br_obj *old, const br_obj *cur)
{
	if (pending_ours(s, old))
		s->npending--;
	if (pending_ours(s, cur))
		s->npending++;
	pg_track(&s->pgc, old, -1);
	pg_track(&s->pgc, cur, 1);
}

/* One map's counts against the other's; false (\p err) at the first
 * difference. */
static bool pg_same(const br_map *a, const br_map *b, const char *what,
		    char *err, size_t n)
{
	br_map_ent *e;
	size_t slot;

	for (e = br_map_first(a, &slot); e; e = br_map_next(a, &slot, e)) {
		const pgcount *x = e->val, *y = br_map_get(b, e->key);

		if (!y || x->scheduled != y->scheduled ||
		    x->running != y->running) {
			snprintf(err, n, "gang %s: %s %u scheduled, %u "
				 "running; the other %u, %u", e->key, what,
				 x->scheduled, x->running,
				 y ? y->scheduled : 0, y ? y->running : 0);
			return false;
		}
	}
	return true;
}

bool br_sched_check(const br_sched *s, char *err, size_t n)
{
	const br_store *st = br_informer_store(s->env.pods);
	size_t i, pending = 0;
	br_map walk;
	bool ok;

	br_map_init(&walk, free);
	for (i = 0; i < st->n; i++) {
		pending += pending_ours(s, st->all[i]);
		pg_track(&walk, st->all[i], 1);
	}
	ok = pg_same(&s->pgc, &walk, "kept", err, n) &&
	     pg_same(&walk, &s->pgc, "cache walk", err, n);
	if (ok && pending != s->npending) {
		snprintf(err, n, "pods pending for us: %zu kept, %zu in the "
			 "cache", s->npending, pending);
		ok = false;
	}
	br_map_free(&walk);
	return ok;
}

void br_sched_on_event(br_sched *s, br_informer *inf, int type,
		       const br_obj *old, const br_obj *cur)
{
	const char *ours = s->env.cfg->scheduler_name;

	if (!inf) {
		mark(s, true);
		return;
	}
	if (inf == s->env.pdbs) {
		/* a budget changed: blocked evictions may pass now */
		br_map_ent *e;
		size_t slot;

		for (e = br_map_first(&s->victims, &slot); e;
		     e = br_map_next(&s->victims, &slot, e))
			((vstate *)e->val)->next_ms = 0;
	}
	if (inf != s->env.pods) {
		if (type == BR_EV_MODIFIED && old && cur &&
		    old->sig == cur->sig && pg_status_feed(inf))
			return;	/* a status write (ours): nothing new */
		if (type == BR_EV_MODIFIED && old && cur &&
		    old->sig == cur->sig && inf == s->env.nodes)
			return;	/* a kubelet heartbeat, new images: nothing
				 * placement reads (see store.h) */
		if (inf == s->env.nodes)
			s->nodes_changed = true;
		if (type == BR_EV_ADDED && is_feed(s, inf))
			mark_arrival(s);
		else
			mark(s, true);
		return;
	}
	track_pod(s, old, cur);
	{
		const br_obj *o = cur ? cur : old;
		bool other = !o->node && strcmp(o->sched, ours) != 0 &&
			     (!old || !old->node);

		if (other)
			return;	/* another scheduler's pending pod */
	}
	switch (type) {
	case BR_EV_ADDED:
		if (cur->node) {
			/* no event for the queue (it takes room, gives
			 * none), but the /ui picture shows it */
			mark(s, false);
			s->shown++;
		} else
			mark_arrival(s);	/* pending for us */
		break;
	case BR_EV_DELETED:
		mark(s, true);
		break;
	default:
		if (old->sig != cur->sig || !streq0(old->node, cur->node) ||
		    old->deleting != cur->deleting || old->gated != cur->gated)
			mark(s, true);
		else if (old->running != cur->running && cur->ann_gang)
			mark(s, false);	/* its PodGroup's running */
	}
}

int64_t br_sched_quiet_ms(const br_sched *s)
{
	return s->arrivals_only ? BATCH_ARRIVAL_MS : BATCH_DEBOUNCE_MS;
}

bool br_sched_due(const br_sched *s, int64_t now)
{
	if (s->busy || now < s->error_until_ms)
		return false;
	/* the last cycle's model is still being freed: joining would wait */
	if (s->reaping && !__atomic_load_n(&s->reaped, __ATOMIC_ACQUIRE))
		return false;
	/* snapshots cost O(cluster): at most half the time goes to them */
	if (now - s->last_end_ms < s->last_snap_ms)
		return false;
	if (s->dirty && (now - s->last_change_ms >= br_sched_quiet_ms(s) ||
			 now - s->dirty_since_ms >= BATCH_MAX_WAIT_MS))
		return true;
	if (s->next_due_ms && now >= s->next_due_ms)
		return true;
	return now - s->last_cycle_ms >= SAFETY_CYCLE_MS;
}

bool br_sched_busy(const br_sched *s)
{
	return s->busy;
}

void br_sched_stop(br_sched *s)
{
	size_t i;

	s->stopped = true;
	for (i = 0; i < s->nbatch; i++)
		if (s->batch[i] && !s->batch[i]->done)
			br_http_cancel(s->env.h, s->batch[i]);
}

unsigned br_sched_pending(const br_sched *s)
{
	return s->pending;
}

size_t br_sched_model_objects(const br_sched *s)
{
	return tg_k8s_cache_nobjects(s->kcache);
}

unsigned br_sched_waiting(const br_sched *s)
{
	return s->waiting;
}

/* ---- API writes -------------------------------------------------------- */

static void on_fire_done(br_req *r, void *ud)
{
	char why[300];

	BR_UNUSED(ud);
	if (r->status < 200 || r->status >= 300)
		br_log(BR_LOG_DEBUG, "write failed", "path", r->path, "error",
		       br_req_reason(r, why, sizeof(why)), NULL);
}

/* Queues a request behind the others (events are for people: bindings
 * and status writes go first); over EVENTS_QUEUED the oldest goes. */
static void event_queue(br_sched *s, br_req *r)
{
	r->limiter = BR_RL_EVENTS;	/* a rate limit of their own */
	if (s->evn == EVENTS_QUEUED) {
		/* over the bound: the oldest goes, and it is counted */
		br_req_free(s->evq[s->evhead]);
		s->evhead = (s->evhead + 1) % s->evcap;
		s->evn--;
		if (!s->ev_dropped++)
			br_log(BR_LOG_WARN, "event queue full; dropping the "
			       "oldest events", NULL);
		s->env.m->events_dropped++;
	}
	if (s->evn == s->evcap) {
		size_t cap = s->evcap ? s->evcap * 2 : 256, i;
		br_req **q = br_xcalloc(cap, sizeof(*q));

		for (i = 0; i < s->evn; i++)
			q[i] = s->evq[(s->evhead + i) % s->evcap];
		free(s->evq);
		s->evq = q;
		s->evcap = cap;
		s->evhead = 0;
	}
	s->evq[(s->evhead + s->evn) % s->evcap] = r;
	s->evn++;
}

/*
 * Event series, as client-go's events recorder (tools/events) keeps them
 * for kube-scheduler: an Event identical to one sent less than
 * SERIES_WINDOW_MS ago (same regarding object, type, reason, action and
 * note; one reporting controller and instance) is not created again: the
 * first one's series.count and series.lastObservedTime are patched
 * (strategic merge, as the recorder does), at most every SERIES_PATCH_MS.
 * True when the event joined a series.
 */
static bool event_repeat(br_sched *s, const char *id)
{
	evseries *e = br_map_get(&s->series, id);
	int64_t now = br_now_ms();

	if (!e || now - e->last_ms > SERIES_WINDOW_MS)
		return false;
	e->count++;
	e->last_ms = now;
	e->last_us = br_wall_us();
	if (!e->dirty) {
		e->dirty = true;
		sv_push(&s->series_dirty, id);
	}
	return true;
}

static void series_flush(br_sched *s)
{
	int64_t now = br_now_ms();
	strvec keep = { 0 };
	size_t i;

	if (now < s->series_next_ms || !s->series_dirty.n)
		return;
	s->series_next_ms = now + SERIES_PATCH_MS;
	for (i = 0; i < s->series_dirty.n; i++) {
		evseries *e = br_map_get(&s->series, s->series_dirty.v[i]);
		char ts[40], *path, *body;
		cJSON *j, *ser;
		br_req *r;

		if (!e)
			continue;
		if (now - e->first_ms < SERIES_PATCH_MS) {
			/* the create may still be on its way */
			sv_push(&keep, s->series_dirty.v[i]);
			continue;
		}
		e->dirty = false;
		if (e->count == e->sent)
			continue;
		j = cJSON_CreateObject();
		ser = cJSON_AddObjectToObject(j, "series");
		cJSON_AddNumberToObject(ser, "count", (double)e->count);
		cJSON_AddStringToObject(ser, "lastObservedTime",
					br_rfc3339(ts, sizeof(ts), e->last_us,
						   true));
		body = cJSON_PrintUnformatted(j);
		cJSON_Delete(j);
		if (!body)
			continue;
		path = br_event_path(e->ns, e->name);
		r = br_req_create("PATCH", path);
		br_req_set_body(r, "application/strategic-merge-patch+json",
				body);
		free(path);
		cJSON_free(body);
		e->sent = e->count;
		event_queue(s, r);
	}
	sv_free(&s->series_dirty);
	s->series_dirty = keep;
}

/* An events.k8s.io/v1 Event, fire and forget; repeats make a series. */
static void send_event(br_sched *s, const char *type, const char *reason,
		       const char *action, const char *note,
		       const char *kind, const char *ns, const char *name,
		       const char *uid)
{
	char nm[320], inst[160], evns[256], *path, *body, *id;
	int64_t us = br_wall_us();
	br_event ev;
	br_req *r;
	evseries *e;

	id = br_xasprintf("%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s",
			  type, reason, action, kind, ns, name, uid ? uid : "",
			  note);
	if (event_repeat(s, id)) {
		free(id);
		return;
	}
	snprintf(inst, sizeof(inst), "%.50s-%.70s", s->env.cfg->scheduler_name,
		 s->env.cfg->identity);
	ev.type = type;
	ev.reason = reason;
	ev.action = action;
	ev.note = note;
	ev.kind = kind;
	ev.ns = ns;
	ev.name = name;
	ev.uid = uid;
	ev.controller = s->env.cfg->scheduler_name;
	ev.instance = inst;
	body = br_event_body(&ev, us, s->ev_ctr++, nm, sizeof(nm), evns,
			     sizeof(evns));
	if (!body) {
		free(id);
		return;
	}
	path = br_event_path(evns, NULL);
	r = br_req_create("POST", path);
	br_req_set_body(r, "application/json", body);
	free(path);
	free(body);
	event_queue(s, r);
	if (s->series.n < SERIES_MAX) {
		e = br_xcalloc(1, sizeof(*e));
		e->name = br_xstrdup(nm);
		e->ns = br_xstrdup(evns);
		e->count = e->sent = 1;
		e->first_ms = e->last_ms = br_now_ms();
		e->last_us = us;
		br_map_put(&s->series, id, e);	/* replaces a finished
						 * one */
	}
	free(id);
}

/* Series not observed for SERIES_WINDOW_MS are finished: forgotten. */
static void series_expire(br_sched *s, int64_t now)
{
	strvec dead = { 0 };
	br_map_ent *en;
	size_t slot, i;

	for (en = br_map_first(&s->series, &slot); en;
	     en = br_map_next(&s->series, &slot, en)) {
		const evseries *e = en->val;

		if (now - e->last_ms > SERIES_WINDOW_MS && !e->dirty)
			sv_push(&dead, en->key);
	}
	for (i = 0; i < dead.n; i++)
		br_map_del(&s->series, dead.v[i]);
	sv_free(&dead);
}

static void on_event_done(br_req *r, void *ud)
{
	br_sched *s = ud;
	unsigned i;

	on_fire_done(r, NULL);
	if (!s)
		return;
	reap_join(s);
	for (i = 0; i < EVENTS_INFLIGHT; i++)
		if (s->evfly[i] == r)
			s->evfly[i] = NULL;
	if (r->status >= 200 && r->status < 300)
		s->env.m->events_sent++;
	if (r->status == 404 && strcmp(r->method, "PATCH") == 0) {
		/* the series' Event is gone (expired): the next repeat
		 * creates a new one */
		const char *slash = strrchr(r->path, '/');
		br_map_ent *en;
		size_t slot;

		for (en = br_map_first(&s->series, &slot); slash && en;
		     en = br_map_next(&s->series, &slot, en))
			if (strcmp(((evseries *)en->val)->name,
				   slash + 1) == 0) {
				char *k = br_xstrdup(en->key);

				br_map_del(&s->series, k);
				free(k);
				break;
			}
	}
}

void br_sched_pump(br_sched *s)
{
	unsigned i;

	if (s->busy)
		return;		/* a cycle is writing: it goes first */
	series_flush(s);
	for (i = 0; i < EVENTS_INFLIGHT && s->evn; i++) {
		br_req *r;

		if (s->evfly[i])
			continue;
		r = s->evq[s->evhead];
		s->evhead = (s->evhead + 1) % s->evcap;
		s->evn--;
		s->evfly[i] = r;
		if (br_http_submit(s->env.h, r, on_event_done, NULL, s) != 0)
			s->evfly[i] = NULL;
	}
}

br_req *br_sched_json_req(const char *method, char *path, const char *ctype,
			  cJSON *j)
{
	char *body = cJSON_PrintUnformatted(j);
	br_req *r = br_req_create(method, path);

	br_req_set_body(r, ctype, body ? body : "{}");
	cJSON_Delete(j);
	free(path);
	cJSON_free(body);
	return r;
}

br_req *br_sched_binding_req(const char *ns, const char *name,
			     const char *uid, const char *node,
			     const char *gang, const char *domain,
			     unsigned rank, const char *xkey,
			     const char *xval)
{
	cJSON *j = cJSON_CreateObject(), *md, *ann, *tg;
	char rk[16];

	cJSON_AddStringToObject(j, "apiVersion", "v1");
	cJSON_AddStringToObject(j, "kind", "Binding");
	md = cJSON_AddObjectToObject(j, "metadata");
	cJSON_AddStringToObject(md, "name", name);
	cJSON_AddStringToObject(md, "namespace", ns);
	cJSON_AddStringToObject(md, "uid", uid);
	ann = cJSON_AddObjectToObject(md, "annotations");
	cJSON_AddStringToObject(ann, BR_ANN_GANG, gang);
	cJSON_AddStringToObject(ann, BR_ANN_DOMAIN, domain);
	snprintf(rk, sizeof(rk), "%u", rank);
	cJSON_AddStringToObject(ann, BR_ANN_RANK, rk);
	if (xkey && xval)
		cJSON_AddStringToObject(ann, xkey, xval);
	tg = cJSON_AddObjectToObject(j, "target");
	cJSON_AddStringToObject(tg, "apiVersion", "v1");
	cJSON_AddStringToObject(tg, "kind", "Node");
	cJSON_AddStringToObject(tg, "name", node);
	return br_sched_json_req("POST", br_xasprintf("/api/v1/namespaces/%s/"
						  "pods/%s/binding", ns, name),
				 "application/json", j);
}

br_req *br_sched_status_req(const char *ns, const char *name,
			    const char *reason, const char *msg,
			    const char *nominated)
{
	cJSON *j = cJSON_CreateObject(), *st, *conds, *c;
	char ts[40];

	st = cJSON_AddObjectToObject(j, "status");
	if (nominated && *nominated)
		cJSON_AddStringToObject(st, "nominatedNodeName", nominated);
	else if (nominated)
		cJSON_AddNullToObject(st, "nominatedNodeName");
	if (msg) {
		conds = cJSON_AddArrayToObject(st, "conditions");
		c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "type", "PodScheduled");
		cJSON_AddStringToObject(c, "status", "False");
		cJSON_AddStringToObject(c, "reason", reason);
		cJSON_AddStringToObject(c, "message", msg);
		cJSON_AddNullToObject(c, "lastProbeTime");
		cJSON_AddStringToObject(c, "lastTransitionTime",
					br_rfc3339(ts, sizeof(ts),
						   br_wall_us(), false));
		cJSON_AddItemToArray(conds, c);
	}
	return br_sched_json_req("PATCH", br_xasprintf("/api/v1/namespaces/%s/"
						   "pods/%s/status", ns, name),
				 "application/strategic-merge-patch+json", j);
}

static br_req *disruption_req(br_sched *s, const char *ns, const char *name,
			      const char *gang)
{
	cJSON *j = cJSON_CreateObject(), *st, *conds, *c;
	char ts[40], *msg;

	st = cJSON_AddObjectToObject(j, "status");
	conds = cJSON_AddArrayToObject(st, "conditions");
	c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "type", "DisruptionTarget");
	cJSON_AddStringToObject(c, "status", "True");
	cJSON_AddStringToObject(c, "reason", "PreemptionByScheduler");
	msg = br_xasprintf("%s: preempting to accommodate a higher priority "
			   "gang %s", s->env.cfg->scheduler_name, gang);
	cJSON_AddStringToObject(c, "message", msg);
	free(msg);
	cJSON_AddStringToObject(c, "lastTransitionTime",
				br_rfc3339(ts, sizeof(ts), br_wall_us(),
					   false));
	cJSON_AddItemToArray(conds, c);
	return br_sched_json_req("PATCH", br_xasprintf("/api/v1/namespaces/%s/"
						   "pods/%s/status", ns, name),
				 "application/strategic-merge-patch+json", j);
}

/* Eviction (PDB-aware) or DELETE, with the pod's UID as precondition. */
static br_req *evict_req(br_sched *s, const char *ns, const char *name,
			 const char *uid)
{
	cJSON *j = cJSON_CreateObject(), *opt, *pre;
	char *path, *body;
	br_req *r;

	if (s->env.cfg->preempt_delete) {
		cJSON_AddStringToObject(j, "apiVersion", "v1");
		cJSON_AddStringToObject(j, "kind", "DeleteOptions");
		if (s->env.cfg->eviction_grace_s >= 0)
			cJSON_AddNumberToObject(j, "gracePeriodSeconds",
				(double)s->env.cfg->eviction_grace_s);
		pre = cJSON_AddObjectToObject(j, "preconditions");
		cJSON_AddStringToObject(pre, "uid", uid);
		path = br_xasprintf("/api/v1/namespaces/%s/pods/%s", ns, name);
		body = cJSON_PrintUnformatted(j);
		r = br_req_create("DELETE", path);
	} else {
		cJSON *md;

		cJSON_AddStringToObject(j, "apiVersion", "policy/v1");
		cJSON_AddStringToObject(j, "kind", "Eviction");
		md = cJSON_AddObjectToObject(j, "metadata");
		cJSON_AddStringToObject(md, "name", name);
		cJSON_AddStringToObject(md, "namespace", ns);
		opt = cJSON_AddObjectToObject(j, "deleteOptions");
		if (s->env.cfg->eviction_grace_s >= 0)
			cJSON_AddNumberToObject(opt, "gracePeriodSeconds",
				(double)s->env.cfg->eviction_grace_s);
		pre = cJSON_AddObjectToObject(opt, "preconditions");
		cJSON_AddStringToObject(pre, "uid", uid);
		path = br_xasprintf("/api/v1/namespaces/%s/pods/%s/eviction",
				    ns, name);
		body = cJSON_PrintUnformatted(j);
		r = br_req_create("POST", path);
	}
	cJSON_Delete(j);
	br_req_set_body(r, "application/json", body ? body : "{}");
	free(path);
	cJSON_free(body);
	/* a budget's 429 is retried by the victim's own timer (and at once
	 * when a budget changes), not held in the client */
	r->no_retry_after = true;
	return r;
}

/* ---- the snapshot ------------------------------------------------------ */

/*
 * A cycle's view of the caches (taken on the I/O thread when the cycle
 * starts, view_take): a reference on every object the snapshot reads
 * (objects never change, an update replaces them: store.h), the API
 * version each informer listed under, and a copy of the assumption of
 * every assumed pod.  The worker thread reads only the view, never the
 * live stores, which the I/O thread goes on updating from the watches.
 * The references go when the cycle's model is freed (reap).
 */
typedef struct view {
	const br_informer *inf;
	char *api;		/* br_informer_api_version() at the start */
	br_obj **o;
	assumed **as;		/* pods: the assumption, NULL = none */
	char **sel;		/* claims: the node stamped on it that the
				 * cache does not show yet
				 * (br_volbind_presented), NULL = none */
	bool since;		/* Nodes: each given to the core under
				 * br_obj.since, not its serial */
	size_t n;
} view;

static assumed *assumed_copy(const assumed *a)
{
	assumed *c = br_xcalloc(1, sizeof(*c));

	c->uid = br_xstrdup(a->uid);
	c->node = br_xstrdup(a->node);
	c->gang = br_xstrdup(a->gang);
	c->domain = br_xstrdup(a->domain);
	c->rank = a->rank;
	c->held = a->held;
	c->cycle = a->cycle;
	c->held_ms = a->held_ms;
	return c;
}

static const assumed *assumed_for(const br_sched *s, const br_obj *o)
{
	const assumed *a = br_map_get(&s->assumed, o->key);

	return a && strcmp(a->uid, o->uid) == 0 ? a : NULL;
}

/* The PersistentVolumeClaim cache (a feed, feed.c), NULL when none. */
static const br_informer *claim_informer(const br_sched *s)
{
	unsigned i;

	for (i = 0; i < s->env.nfeed; i++) {
		const br_resdef *d = br_informer_def(s->env.feed[i]);

		if (strcmp(d->resource, "persistentvolumeclaims") == 0 &&
		    !*d->group)
			return s->env.feed[i];
	}
	return NULL;
}

/*
 * References on \p inf's objects; for pods only those the snapshot reads
 * (bound, ours, or assumed: a pending pod of another scheduler holds
 * nothing).
 */
static void view_take(const br_sched *s, view *v, const br_informer *inf,
		      bool pods, bool slim)
{
	const br_store *st = br_informer_store(inf);
	const char *ours = s->env.cfg->scheduler_name;
	bool claims = inf == claim_informer(s);
	size_t i;

	memset(v, 0, sizeof(*v));
	v->inf = inf;
	v->api = br_xstrdup(br_informer_api_version(inf));
	v->o = br_xcalloc(st->n + 1, sizeof(*v->o));
	if (pods)
		v->as = br_xcalloc(st->n + 1, sizeof(*v->as));
	if (claims)
		v->sel = br_xcalloc(st->n + 1, sizeof(*v->sel));
	for (i = 0; i < st->n; i++) {
		br_obj *o = st->all[i];
		const assumed *a = pods && !o->node ? assumed_for(s, o) : NULL;
		const char *sel = claims ? br_volbind_presented(s->vb, o) :
				  NULL;

		if (pods && !o->node && !a && strcmp(o->sched, ours) != 0)
			continue;	/* not ours, holds nothing */
		/* slim (deltas: the core has the objects): the pods
		 * build_indexes() reads, the claims stamped */
		if (slim && (pods ? o->node && !a && !o->ann_gang &&
				    !o->deleting : !sel))
			continue;
		if (a)
			v->as[v->n] = assumed_copy(a);
		if (sel)
			v->sel[v->n] = br_xstrdup(sel);
		v->o[v->n++] = br_obj_ref(o);
	}
}

static void view_free(view *v)
{
	size_t i;

	for (i = 0; i < v->n; i++) {
		br_obj_free(v->o[i]);
		if (v->as && v->as[i])
			free_assumed(v->as[i]);
		if (v->sel)
			free(v->sel[i]);
	}
	free(v->o);
	free(v->as);
	free(v->sel);
	free(v->api);
	memset(v, 0, sizeof(*v));
}

/*
 * The caches go to the core's loader object by object, by reference
 * (tg_k8s_add_object): the loader parses a pod only when the build reads
 * it and keeps the tree of pending pods only, so a cycle holds no copy of
 * the cluster.  Texts made for the snapshot (assumed pods, upstream
 * PodGroups) live in sn->made until the build is over.
 */
typedef struct snap {
	cyc *c;
	size_t total;
	tg_errinfo ei;
	tg_err err;
	char **made;
	size_t nmade, capmade;
} snap;

static bool snap_obj(snap *sn, const view *v, const br_obj *o,
		     const char *text, size_t len, uint64_t version)
{
	const br_resdef *def = br_informer_def(v->inf);

	if (sn->total + len > SNAP_MAX) {
		sn->err = TG_ELIMIT;
		snprintf(sn->ei.msg, sizeof(sn->ei.msg),
			 "snapshot larger than %llu bytes",
			 (unsigned long long)SNAP_MAX);
		return false;
	}
	sn->total += len;
	sn->err = tg_k8s_add_object_version(sn->c->k, text, len, def->kind,
					    v->api, o->ns, o->name, "cache",
					    version, &sn->ei);
	return !sn->err;
}

/* Text made for the snapshot: kept until the build is over. */
static void snap_keep(snap *sn, char *t)
{
	if (sn->nmade == sn->capmade) {
		sn->capmade = sn->capmade ? sn->capmade * 2 : 16;
		sn->made = br_xrealloc(sn->made, sn->capmade * sizeof(char *));
	}
	sn->made[sn->nmade++] = t;
}

/* Object \p o as changed into \p j (freed here). */
static bool snap_json(snap *sn, const view *v, const br_obj *o, cJSON *j)
{
	char *t = cJSON_PrintUnformatted(j);

	cJSON_Delete(j);
	if (!t)
		return snap_obj(sn, v, o, o->text, o->len, o->serial);
	snap_keep(sn, t);
	return snap_obj(sn, v, o, t, strlen(t), 0);	/* made: no version */
}

/* \p parent's object member \p key, made (or made an object) when it is
 * not one; NULL on no memory or when \p parent is not an object. */
static cJSON *json_object_member(cJSON *parent, const char *key)
{
	cJSON *m;

	if (!cJSON_IsObject(parent))
		return NULL;
	m = cJSON_GetObjectItemCaseSensitive(parent, key);
	if (cJSON_IsObject(m))
		return m;
	cJSON_DeleteItemFromObjectCaseSensitive(parent, key);
	return cJSON_AddObjectToObject(parent, key);
}

/* Sets \p obj's member \p key to the string \p val (any old one goes). */
static void json_set_string(cJSON *obj, const char *key, const char *val)
{
	if (!obj)
		return;
	cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
	cJSON_AddStringToObject(obj, key, val);
}

/* A pod bound by us, not yet seen bound: written bound. */
static bool snap_assumed(snap *sn, const view *v, const br_obj *o,
			 const assumed *a)
{
	cJSON *j = br_obj_parse(o), *spec, *ann;
	char rk[16];

	if (!j)
		return snap_obj(sn, v, o, o->text, o->len, o->serial);
	spec = cJSON_GetObjectItemCaseSensitive(j, "spec");
	if (cJSON_IsObject(spec))
		json_set_string(spec, "nodeName", a->node);
	ann = json_object_member(cJSON_GetObjectItemCaseSensitive(j,
					"metadata"), "annotations");
	if (ann) {
		snprintf(rk, sizeof(rk), "%u", a->rank);
		json_set_string(ann, BR_ANN_GANG, a->gang);
		json_set_string(ann, BR_ANN_DOMAIN, a->domain);
		json_set_string(ann, BR_ANN_RANK, rk);
	}
	return snap_json(sn, v, o, j);
}

/* A member of a gang held for its claims: written nominated to its node
 * (a reservation, free to its own gang), still pending. */
static bool snap_held(snap *sn, const view *v, const br_obj *o,
		      const assumed *a)
{
	cJSON *j = br_obj_parse(o);

	if (!j)
		return snap_obj(sn, v, o, o->text, o->len, o->serial);
	json_set_string(json_object_member(j, "status"), "nominatedNodeName",
			a->node);
	return snap_json(sn, v, o, j);
}

/* A claim stamped by us, the stamp not yet seen: written with it. */
static bool snap_stamped(snap *sn, const view *v, const br_obj *o,
			 const char *node)
{
	cJSON *j = br_obj_parse(o);

	if (!j)
		return snap_obj(sn, v, o, o->text, o->len, o->serial);
	json_set_string(json_object_member(cJSON_GetObjectItemCaseSensitive(j,
					"metadata"), "annotations"),
			BR_ANN_SELECTED_NODE, node);
	return snap_json(sn, v, o, j);
}

/* The view's objects into the snapshot; \p overlays: only the per-cycle
 * rewrites (pods assumed or held, claims stamped) over the cache's
 * objects, which the snapshot reads from the cache. */
static bool snap_view(snap *sn, const view *v, bool overlays)
{
	size_t i;

	for (i = 0; i < v->n; i++) {
		const br_obj *o = v->o[i];
		const assumed *a = v->as ? v->as[i] : NULL;
		const char *sel = v->sel ? v->sel[i] : NULL;
		bool ok = a && a->held ? snap_held(sn, v, o, a) :
			  a ? snap_assumed(sn, v, o, a) :
			  sel ? snap_stamped(sn, v, o, sel) :
			  overlays ? true :
			  snap_obj(sn, v, o, o->text, o->len,
				   v->since ? o->since : o->serial);

		if (!ok)
			return false;
	}
	return true;
}

/*
 * Upstream PodGroups (scheduling.k8s.io/v1alpha2) as Koordinator ones,
 * filed under the Koordinator kind (the informer's own kind and version
 * would name the upstream API).
 */
/* Upstream PodGroup \p o as a Koordinator one's text (cJSON_free());
 * NULL when out of memory. */
static char *upstream_group_text(const br_obj *o)
{
	cJSON *j = br_obj_parse(o), *out, *md, *spec;
	const cJSON *min = br_jpath(j, "spec.schedulingPolicy.gang."
				    "minCount");
	const char *ts = br_jpath_str(j, "metadata.creationTimestamp");
	char *t;

	out = cJSON_CreateObject();
	cJSON_AddStringToObject(out, "apiVersion", UPG_API);
	cJSON_AddStringToObject(out, "kind", "PodGroup");
	md = cJSON_AddObjectToObject(out, "metadata");
	cJSON_AddStringToObject(md, "name", o->name);
	cJSON_AddStringToObject(md, "namespace", *o->ns ? o->ns : "default");
	if (ts)
		cJSON_AddStringToObject(md, "creationTimestamp", ts);
	spec = cJSON_AddObjectToObject(out, "spec");
	cJSON_AddNumberToObject(spec, "minMember", cJSON_IsNumber(min) ?
				min->valuedouble : 1);
	t = cJSON_PrintUnformatted(out);
	cJSON_Delete(out);
	cJSON_Delete(j);
	return t;
}

static bool snap_upstream_groups(snap *sn, const view *v)
{
	size_t i;

	for (i = 0; i < v->n; i++) {
		const br_obj *o = v->o[i];
		const char *ns = *o->ns ? o->ns : "default";
		char *t = upstream_group_text(o);

		if (!t)
			continue;
		snap_keep(sn, t);
		sn->total += strlen(t);
		sn->err = tg_k8s_add_object(sn->c->k, t, strlen(t),
					    "PodGroup", UPG_API, ns, o->name,
					    "cache", &sn->ei);
		if (sn->err)
			return false;
	}
	return true;
}

/* ---- the core's cache fed deltas --------------------------------------- */

/* An informer whose objects the model reads, as the worker names them
 * (its kind and API version at the handoff). */
typedef struct dsrc {
	const br_informer *inf;
	char *kind, *api;
	bool upg;		/* upstream PodGroups (made texts) */
	bool since;		/* Nodes: the version is br_obj.since */
} dsrc;

/* One change: a put of \p o (a reference the cache takes), or a remove
 * of (\p ns, \p name) when \p o is NULL. */
typedef struct kdelta {
	unsigned src;
	br_obj *o;
	char *ns, *name;
} kdelta;

/* The informers the model reads, into \p infs (room for nfeed + 5). */
static unsigned model_infs(const br_sched *s, br_informer **infs)
{
	unsigned n = 0, i;

	infs[n++] = s->env.nodes;
	infs[n++] = s->env.pods;
	infs[n++] = s->env.pcs;
	infs[n++] = s->env.pdbs;
	for (i = 0; i < s->env.nfeed; i++)
		infs[n++] = s->env.feed[i];
	if (s->env.upg)
		infs[n++] = s->env.upg;
	return n;
}

/* Every model store keeps a change log (br_store_track()). */
static void deltas_track(br_sched *s)
{
	br_informer **infs = br_xcalloc(s->env.nfeed + 5, sizeof(*infs));
	unsigned n = model_infs(s, infs), i;

	for (i = 0; i < n; i++)
		if (infs[i])
			br_store_track(br_informer_store_mut(infs[i]));
	free(infs);
}

/* Whether the model holds \p o: a pod only when bound or ours (a
 * pending pod of another scheduler holds nothing). */
static bool model_obj(const br_sched *s, const br_informer *inf,
		      const br_obj *o)
{
	return inf != s->env.pods || o->node ||
	       strcmp(o->sched, s->env.cfg->scheduler_name) == 0;
}

static void delta_push(cyc *c, unsigned src, br_obj *o, const char *key)
{
	kdelta *d;

	if (c->ndl == c->capdl) {
		c->capdl = c->capdl ? c->capdl * 2 : 64;
		c->dl = br_xrealloc(c->dl, c->capdl * sizeof(*c->dl));
	}
	d = &c->dl[c->ndl++];
	memset(d, 0, sizeof(*d));
	d->src = src;
	if (o) {
		d->o = br_obj_ref(o);
		return;
	}
	/* "namespace/name", or "name" (cluster-scoped) */
	if (strchr(key, '/')) {
		d->ns = br_xstrdup(key);
		*strchr(d->ns, '/') = '\0';
		d->name = br_xstrdup(strchr(key, '/') + 1);
	} else {
		d->ns = br_xstrdup("");
		d->name = br_xstrdup(key);
	}
}

/* Whether sources \p a and \p b file their objects under one identity
 * (kind and API group): a Koordinator PodGroup feed and the upstream
 * PodGroups, handed to the core as Koordinator ones. */
static bool shared_ident(const dsrc *a, const dsrc *b)
{
	size_t la, lb;

	if (a == b || !a->kind || !b->kind || strcmp(a->kind, b->kind))
		return false;
	la = strcspn(a->api, "/");
	lb = strcspn(b->api, "/");
	return la == lb && strncmp(a->api, b->api, la) == 0;
}

/*
 * Key \p key of source \p i changed: a put of what its store holds, or a
 * remove.  Where another source files under the same identity, the
 * identity is removed and filed again from every such source in source
 * order (the upstream PodGroups last: the copy the whole handoff keeps),
 * so that which copy the cache holds never depends on the order of the
 * events, and removing one copy never drops the other.
 */
static void delta_key(br_sched *s, cyc *c, br_informer **infs, unsigned n,
		      unsigned i, const char *key)
{
	br_obj *o = br_store_get(br_informer_store(infs[i]), key);
	unsigned m;
	bool shared = false;

	for (m = 0; m < n; m++)
		shared = shared || (infs[m] &&
				    shared_ident(&c->dsrc[i], &c->dsrc[m]));
	if (!shared) {
		delta_push(c, i, o && model_obj(s, infs[i], o) ? o : NULL, key);
		return;
	}
	delta_push(c, i, NULL, key);
	for (m = 0; m < n; m++) {
		if (!infs[m] ||
		    (m != i && !shared_ident(&c->dsrc[i], &c->dsrc[m])))
			continue;
		o = br_store_get(br_informer_store(infs[m]), key);
		if (o && model_obj(s, infs[m], o))
			delta_push(c, m, o, NULL);
	}
}

/*
 * The changes since the last model (I/O thread, no worker running): the
 * keys each store logged, each a put of the object it now holds or a
 * remove; every object (the cache emptied first) when the cache is not
 * fed yet, after a re-list, or when a log overflowed.  The work follows
 * the changes, not the cluster.
 */
static void deltas_take(br_sched *s, cyc *c)
{
	br_informer **infs = br_xcalloc(s->env.nfeed + 5, sizeof(*infs));
	unsigned n = model_infs(s, infs), i;
	char ***keys = br_xcalloc(n, sizeof(*keys));
	size_t *nk = br_xcalloc(n, sizeof(*nk)), j;
	bool whole = !s->fed;

	c->dsrc = br_xcalloc(n, sizeof(*c->dsrc));
	for (i = 0; i < n; i++) {
		dsrc *ds = &c->dsrc[c->ndsrc++];

		if (!infs[i])
			continue;
		ds->inf = infs[i];
		ds->upg = infs[i] == s->env.upg;
		ds->since = infs[i] == s->env.nodes;
		ds->kind = br_xstrdup(ds->upg ? "PodGroup" :
				      br_informer_def(infs[i])->kind);
		ds->api = br_xstrdup(ds->upg ? UPG_API :
				     br_informer_api_version(infs[i]));
		if (!br_store_changes(br_informer_store_mut(infs[i]),
				      &keys[i], &nk[i])) {
			if (s->fed)	/* past its bound: said, not silent */
				br_log(BR_LOG_WARN, "change log past "
				       "BR_STORE_MAX_CHANGES; the model is "
				       "filed again whole", "kind", ds->kind,
				       NULL);
			whole = true;
		}
	}
	c->dclear = whole;
	for (i = 0; i < n; i++) {
		const br_store *st = infs[i] ? br_informer_store(infs[i]) :
				     NULL;

		for (j = 0; whole && st && j < st->n; j++)
			if (model_obj(s, infs[i], st->all[j]))
				delta_push(c, i, st->all[j], NULL);
		for (j = 0; j < nk[i]; j++) {
			if (!whole)
				delta_key(s, c, infs, n, i, keys[i][j]);
			free(keys[i][j]);
		}
		free(keys[i]);
	}
	s->fed = true;
	free(keys);
	free(nk);
	free(infs);
}

static void release_obj(void *ud)
{
	br_obj_free(ud);
}

/* One put; a failure costs only that object (logged). */
static void delta_put(br_sched *s, const dsrc *ds, br_obj *o)
{
	tg_errinfo ei;
	tg_err err;
	char *t;

	memset(&ei, 0, sizeof(ei));
	if (ds->upg) {
		t = upstream_group_text(o);
		err = t ? tg_k8s_cache_put(s->kcache, t, strlen(t), ds->kind,
					   ds->api, *o->ns ? o->ns : "default",
					   o->name, "cache", o->serial, &ei) :
			  TG_ENOMEM;
		cJSON_free(t);
		br_obj_free(o);
	} else {
		err = tg_k8s_cache_put_lent(s->kcache, o->text, o->len,
					    ds->kind, ds->api, o->ns, o->name,
					    "cache", ds->since ? o->since :
					    o->serial, release_obj, o, &ei);
	}
	if (err)
		br_log(BR_LOG_WARN, "object left out of the model", "kind",
		       ds->kind, "error", ei.msg[0] ? ei.msg :
		       tg_strerror(err), NULL);
}

/* The changes into the core's cache (worker thread: the cache is its
 * while the cycle runs); each put's reference goes to the cache. */
static void deltas_apply(cyc *c)
{
	br_sched *s = c->s;
	size_t i;

	if (c->dclear)
		tg_k8s_cache_clear(s->kcache);
	for (i = 0; i < c->ndl; i++) {
		kdelta *d = &c->dl[i];
		const dsrc *ds = &c->dsrc[d->src];

		if (d->o)
			delta_put(s, ds, d->o);
		else
			tg_k8s_cache_remove(s->kcache, ds->kind, ds->api,
					    ds->upg && !*d->ns ? "default" :
					    d->ns, d->name);
		d->o = NULL;
	}
}

static void deltas_free(cyc *c)
{
	size_t i;

	for (i = 0; i < c->ndl; i++) {
		br_obj_free(c->dl[i].o);
		free(c->dl[i].ns);
		free(c->dl[i].name);
	}
	free(c->dl);
	for (i = 0; i < c->ndsrc; i++) {
		free(c->dsrc[i].kind);
		free(c->dsrc[i].api);
	}
	free(c->dsrc);
}

/* Builds the core's model from the view (worker thread); false (logged)
 * when it cannot. */
static bool build_snapshot(cyc *c)
{
	br_sched *s = c->s;
	const br_config *cfg = s->env.cfg;
	snap sn;
	unsigned i;
	size_t m;
	bool ok;
	int64_t t0 = br_wall_us();

	if (c->dsrc)
		deltas_apply(c);
	c->k = tg_k8s_create();
	if (!c->k)
		return false;
	tg_k8s_set_scheduler_name(c->k, cfg->scheduler_name);
	tg_k8s_set_cache(c->k, s->kcache);
	if (c->dsrc)
		tg_k8s_use_cache_objects(c->k);
	if (cfg->nlevels)
		tg_k8s_set_levels(c->k, (const char *const *)cfg->levels,
				  cfg->nlevels);
	memset(&sn, 0, sizeof(sn));
	sn.c = c;
	ok = true;
	for (i = 0; ok && i < c->nviews; i++)
		ok = c->dsrc ? snap_view(&sn, &c->views[i], true) :
		     c->views[i].inf == s->env.upg ?
		     snap_upstream_groups(&sn, &c->views[i]) :
		     snap_view(&sn, &c->views[i], false);
	c->add_ms = (br_wall_us() - t0) / 1000.0;
	if (ok) {
		sn.err = tg_k8s_build(c->k, &c->t, &sn.ei);
		ok = !sn.err;
	}
	c->kept = ok && tg_k8s_cache_reused(s->kcache);
	/* the loader read the texts it borrowed: the made ones can go */
	for (m = 0; m < sn.nmade; m++)
		cJSON_free(sn.made[m]);
	free(sn.made);
	if (!ok) {
		br_log(BR_LOG_ERROR, "cannot build the snapshot; retrying",
		       "error", sn.ei.msg, "code", tg_strerror(sn.err), NULL);
		return false;
	}
	c->snap_ms = (br_wall_us() - t0) / 1000.0;
	return true;
}

/* Configured bandwidths (worker thread: the model is the cycle's). */
static void set_bandwidths(cyc *c)
{
	const br_config *cfg = c->s->env.cfg;
	unsigned i;

	for (i = 0; i < cfg->nbw; i++) {
		unsigned l = tg_topology_layer_find(c->t, cfg->bw[i].layer);

		if (l != TG_NONE)
			tg_topology_set_layer_bandwidth(c->t, l,
							cfg->bw[i].gbps);
	}
	if (cfg->node_bw > 0)
		tg_topology_set_node_bandwidth(c->t, cfg->node_bw);
}

/* Loader warnings and node events (I/O thread, after the build). */
static void after_build(cyc *c)
{
	br_sched *s = c->s;
	unsigned i;

	if (s->warnings.n > MAX_WARNINGS_KEPT)
		br_map_free(&s->warnings);
	for (i = 0; i < tg_k8s_nwarnings(c->k); i++) {
		const char *w = tg_k8s_warning(c->k, i);

		if (br_map_get(&s->warnings, w))
			continue;
		br_map_put(&s->warnings, w, (void *)1);
		br_log(BR_LOG_WARN, "snapshot", "warning", w, NULL);
	}
	for (i = 0; i < tg_topology_nwarnings(c->t); i++) {
		const char *w = tg_topology_warning(c->t, i);
		char node[260];
		const char *colon;
		const br_obj *no;

		if (strncmp(w, "node ", 5) != 0 ||
		    !(colon = strchr(w + 5, ':')) ||
		    (size_t)(colon - w - 5) >= sizeof(node))
			continue;
		snprintf(node, sizeof(node), "%.*s", (int)(colon - w - 5),
			 w + 5);
		if (br_map_get(&s->warned_nodes, node))
			continue;
		br_map_put(&s->warned_nodes, node, (void *)1);
		no = br_store_get(br_informer_store(s->env.nodes), node);
		br_log(BR_LOG_WARN, "node missing topology labels", "node",
		       node, "warning", w, NULL);
		send_event(s, "Warning", "MissingTopologyLabels", "Scheduling",
			   w, "Node", "", node, no ? no->uid : NULL);
	}
}

/* ---- indexes: bound members by gang (pending ones are the core's) ----- */

static void build_indexes(cyc *c)
{
	const view *v = c->pods;
	size_t i;

	br_map_init(&c->bound, free_bound);
	br_map_init(&c->terminating, NULL);
	br_map_init(&c->podix, NULL);
	for (i = 0; i < v->n; i++) {
		const br_obj *o = v->o[i];
		const assumed *a = v->as[i] && !v->as[i]->held ? v->as[i] :
				   NULL;	/* held: pending */
		const char *gang = a ? a->gang : o->ann_gang;

		if (o->node && o->deleting)
			br_map_put(&c->terminating, o->node, (void *)o);
		if (!o->node)
			br_map_put(&c->podix, o->key, (void *)o);
		if (o->node || a) {
			bound_info *b;

			if (!gang || o->deleting)
				continue;
			if (o->node)
				br_map_put(&c->podix, o->key, (void *)o);
			b = br_map_get(&c->bound, gang);
			if (!b) {
				b = br_xcalloc(1, sizeof(*b));
				b->domain = br_xstrdup(a ? a->domain :
						       o->ann_domain ?
						       o->ann_domain : "");
				br_map_put(&c->bound, gang, b);
			}
			sv_push(&b->keys, o->key);
		}
	}
}

/*
 * Who owns a pod, for the gang annotation's owner rule, into \p buf as
 * "KIND/ID"; "" when nobody.  The workload a gang's pods share: a
 * LeaderWorkerSet's or a JobSet's pods have several controllers (the
 * leader's and the workers' StatefulSets, a Job per replicated job), so
 * their workload's label stands for it ("LeaderWorkerSet/NAME",
 * "JobSet/NAME", as their controllers label every pod); else the
 * controller: the kind and uid of the ownerReferences entry with
 * controller: true ("Job/UID").
 */
static const char *pod_owner(const br_obj *o, char *buf, size_t n)
{
	static const char *const wl[][2] = {
		{ "leaderworkerset.sigs.k8s.io/name", "LeaderWorkerSet" },
		{ "jobset.sigs.k8s.io/jobset-name", "JobSet" } };
	cJSON *j = br_obj_parse(o);
	const cJSON *labels = br_jpath(j, "metadata.labels"), *refs, *r;
	size_t i;

	buf[0] = '\0';
	for (i = 0; i < sizeof(wl) / sizeof(wl[0]) && !buf[0]; i++)
		if (br_jstr(labels, wl[i][0]))
			snprintf(buf, n, "%s/%s", wl[i][1],
				 br_jstr(labels, wl[i][0]));
	refs = buf[0] ? NULL : br_jpath(j, "metadata.ownerReferences");
	cJSON_ArrayForEach(r, refs)
		if (cJSON_IsTrue(br_jget(r, "controller")) &&
		    br_jstr(r, "uid")) {
			snprintf(buf, n, "%s/%s", br_jstr(r, "kind") ?
				 br_jstr(r, "kind") : "", br_jstr(r, "uid"));
			break;
		}
	cJSON_Delete(j);
	return buf;
}

/* The KIND of a pod_owner() text, into \p buf. */
static const char *owner_kind(const char *owner, char *buf, size_t n)
{
	snprintf(buf, n, "%.*s", (int)strcspn(owner, "/"), owner);
	return buf;
}

/*
 * The gang annotation's owner rule: a bound pod of the gang's namespace
 * is no member when its controller (pod_owner()) has the kind of a
 * pending member's controller but matches none of the pending members'
 * controllers of that kind: another incarnation of the workload, or
 * another workload of the same kind.  Controllers of another kind (an
 * MPIJob's workers beside its launcher's Job) and pods without one are
 * not judged: the namespace is the boundary.  A foreign pod does not
 * pin, delay or reset the gang, and a repair does not evict it; it is
 * recorded in c->foreign for log_foreign().  Worker thread: the pods
 * come from the cycle's view (c->podix), never the cache.  Returns \p b,
 * or NULL when no bound member is left.
 */
static bound_info *owned_members(cyc *c, const tg_gang *g, bound_info *b)
{
	br_map owners, kinds;	/* pending members' owners; kind -> one */
	char got[300], kind[128];
	unsigned r, n = tg_gang_nmembers(g);
	size_t i, k = 0;

	if (!b)
		return NULL;
	br_map_init(&owners, NULL);
	br_map_init(&kinds, free);
	for (r = 0; r < n; r++) {
		const char *m = tg_gang_member(g, r);
		const br_obj *o = m ? br_map_get(&c->podix, m) : NULL;

		if (!o || !*pod_owner(o, got, sizeof(got)))
			continue;
		br_map_put(&owners, got, (void *)1);
		if (!br_map_get(&kinds, owner_kind(got, kind, sizeof(kind))))
			br_map_put(&kinds, kind, br_xstrdup(got));
	}
	for (i = 0; i < b->keys.n; i++) {
		const br_obj *o = br_map_get(&c->podix, b->keys.v[i]);
		const char *want = NULL;

		if (o && *pod_owner(o, got, sizeof(got)) &&
		    !br_map_get(&owners, got))
			want = br_map_get(&kinds, owner_kind(got, kind,
							      sizeof(kind)));
		if (!want) {
			b->keys.v[k++] = b->keys.v[i];
			continue;
		}
		sv_push(&c->foreign, b->keys.v[i]);
		sv_push(&c->foreign, tg_gang_name(g));
		sv_push(&c->foreign, got);
		sv_push(&c->foreign, want);
		free(b->keys.v[i]);
	}
	br_map_free(&owners);
	br_map_free(&kinds);
	b->keys.n = k;
	if (k)
		return b;
	br_map_del(&c->bound, tg_gang_name(g));
	return NULL;
}

/*
 * The owner rule's foreign pods (owned_members), logged on the I/O
 * thread once per pod and gang (kept with the loader warnings, under
 * their bound).
 */
static void log_foreign(cyc *c)
{
	br_sched *s = c->s;
	size_t i;

	for (i = 0; i + 3 < c->foreign.n; i += 4) {
		const char *const *f = (const char *const *)&c->foreign.v[i];
		char key[600];

		snprintf(key, sizeof(key), "foreign owner\n%s\n%s", f[0],
			 f[1]);
		if (br_map_get(&s->warnings, key))
			continue;
		if (s->warnings.n > MAX_WARNINGS_KEPT)
			br_map_free(&s->warnings);
		br_map_put(&s->warnings, key, (void *)1);
		br_log(BR_LOG_WARN, "a bound pod carries the gang annotation "
		       "but another controller of the kind that owns the "
		       "gang's pods: not a member (it does not pin the gang)",
		       "gang", f[1], "pod", f[0], "owner", f[2],
		       "gang_owner", f[3], NULL);
	}
}

/*
 * Pins a half-bound gang's pending members to the domain recorded on its
 * bound members: a node selector per layer of the domain's path.  False
 * when the domain cannot be expressed (gone, or a layer without a label).
 */
static bool pin_to_domain(cyc *c, tg_gang *g, const char *domain)
{
	unsigned nl = tg_topology_nlayers(c->t), l, ps;
	tg_domain_id d = TG_NONE;

	if (!domain || !*domain)
		return false;
	if (strcmp(domain, "cluster") == 0)
		return true;
	if (strncmp(domain, "node/", 5) == 0) {
		tg_node_id n;
		const char *host;

		if (tg_topology_node_find(c->t, domain + 5, &n) != TG_OK)
			return false;
		host = tg_topology_node_label(c->t, n,
					      "kubernetes.io/hostname");
		if (!host)
			return false;
		for (ps = 0; ps < tg_gang_npodsets(g); ps++)
			if (tg_gang_podset_add_node_selector(
				    g, ps, "kubernetes.io/hostname", host))
				return false;
		return true;
	}
	for (l = 0; l < nl; l++) {
		const char *name = tg_topology_layer_name(c->t, l);
		size_t n = strlen(name);

		if (strncmp(domain, name, n) == 0 && domain[n] == '/' &&
		    tg_topology_domain_find(c->t, domain + n + 1, &d) ==
		    TG_OK && tg_topology_domain_layer(c->t, d) == l)
			break;
		d = TG_NONE;
	}
	if (d == TG_NONE)
		return false;
	for (; d != 0 && d != TG_NONE; d = tg_topology_domain_parent(c->t, d)) {
		unsigned dl = tg_topology_domain_layer(c->t, d);
		const char *key = tg_topology_layer_key(c->t, dl);
		const char *val = tg_topology_domain_value(c->t, d);

		if (!key)
			return false;
		for (ps = 0; ps < tg_gang_npodsets(g); ps++)
			if (tg_gang_podset_add_node_selector(g, ps, key, val))
				return false;
	}
	return true;
}

/* ---- the queue --------------------------------------------------------- */

static gstate *gang_state(br_sched *s, const char *name)
{
	gstate *gs = br_map_get(&s->gangs, name);

	if (!gs) {
		gs = br_xcalloc(1, sizeof(*gs));
		br_map_put(&s->gangs, name, gs);
	}
	return gs;
}

static int64_t backoff_ms(const br_sched *s, unsigned attempts)
{
	int64_t d = s->env.cfg->backoff_initial_ms;
	unsigned i;

	for (i = 1; i < attempts && d < s->env.cfg->backoff_max_ms; i++)
		d *= 2;
	return BR_MIN(d, s->env.cfg->backoff_max_ms);
}

/* When the gang may be tried again; 0 = now. */
static int64_t eligible_at(const br_sched *s, const gstate *gs, uint64_t seq)
{
	int64_t t = gs->next_ms;

	if (gs->waiting_ms || gs->partial_ms)
		return 0;	/* holding a reservation, or repairing */
	if (gs->need_event && gs->seq == seq) {
		int64_t flush = gs->last_ms +
				s->env.cfg->unschedulable_flush_s * 1000;

		t = BR_MAX(t, flush);
	}
	return t;
}

static void failed(br_sched *s, gstate *gs, int64_t now, bool need_event)
{
	gs->attempts++;
	gs->next_ms = now + backoff_ms(s, gs->attempts);
	gs->need_event = need_event;
}

/* ---- one decision ------------------------------------------------------ */

static void log_decision(cyc *c, const plan *p, double ms)
{
	const tg_decision *d = p->d;
	unsigned i, n = tg_decision_nplacements(d);
	tg_buf nodes, vic;
	char bw[32], mem[16], lat[32], nv[16];

	tg_buf_init(&nodes, 8192);
	tg_buf_init(&vic, 8192);
	for (i = 0; i < n && i < LOG_NODES_MAX; i++)
		tg_buf_addf(&nodes, "%s%s", i ? "," : "",
			    tg_topology_node_name(c->t,
				tg_decision_placement(d, i)->node));
	if (n > LOG_NODES_MAX)
		tg_buf_addf(&nodes, ",...(%u)", n);
	for (i = 0; i < tg_decision_nvictims(d) && i < LOG_NODES_MAX; i++)
		tg_buf_addf(&vic, "%s%s", i ? "," : "",
			    tg_decision_victim(d, i)->pod);
	if (tg_decision_nvictims(d) > LOG_NODES_MAX)
		tg_buf_addf(&vic, ",...(%u)", tg_decision_nvictims(d));
	snprintf(bw, sizeof(bw), "%g", tg_decision_bandwidth_gbps(d));
	snprintf(mem, sizeof(mem), "%u", tg_gang_nmembers(p->g));
	snprintf(nv, sizeof(nv), "%u", tg_decision_nvictims(d));
	br_log(tg_decision_status(d) == TG_STATUS_UNSCHEDULABLE ?
	       BR_LOG_WARN : BR_LOG_INFO, "decision",
	       "gang", tg_decision_gang(d),
	       "status", tg_status_name(tg_decision_status(d)),
	       "domain", tg_decision_domain(d),
	       "members", mem,
	       "bandwidth_gbps", bw,
	       "nodes", nodes.s ? nodes.s : "",
	       "victims", vic.s ? vic.s : "",
	       "nvictims", nv,
	       "repair", p->partial ? "true" : "false",
	       "latency_ms", ms_str(lat, sizeof(lat), ms),
	       "message", tg_decision_message(d), NULL);
	tg_buf_free(&nodes);
	tg_buf_free(&vic);
}

/*
 * Decides the queue in order, on the worker thread: it may touch only
 * the cycle (c) and the gang states (s->gangs); metrics, Events, the
 * caches and the rest of the scheduler belong to the I/O thread (see
 * cyc; test-bridge-tsan checks).  Past CYCLE_BUDGET_MS of
 * deciding (s->budget_ms), the gangs left wait for the next cycle, which
 * comes at once (c->skipped, logged): a cycle's length has a bound, and
 * so has the time its writes wait.  A cycle decides one gang at least,
 * whatever the budget (so that each makes progress).  What the gangs
 * left hold stays theirs: a preemptor's nominations are in the API, and
 * a volume hold is kept while its gang is not reached (hold_kept()).
 */
static void decide(cyc *c)
{
	br_sched *s = c->s;
	unsigned i, n = tg_k8s_ngangs(c->k);
	int64_t start = br_now_ms();
	unsigned reached = 0;

	c->pending = n;
	for (i = 0; i < n; i++) {
		tg_gang *g = tg_k8s_gang(c->k, i);
		const char *name = tg_gang_name(g);
		gstate *gs = gang_state(s, name);
		bound_info *b = owned_members(c, g,
					      br_map_get(&c->bound, name));
		tg_decision *d = NULL;
		tg_errinfo ei;
		int64_t t0, at;
		tg_err err;
		plan *p;
		double ms;

		gs->seen = s->cycle_no;
		at = eligible_at(s, gs, c->seq);
		if (at > c->now) {
			if (!c->next_due_ms || at < c->next_due_ms)
				c->next_due_ms = at;
			continue;
		}
		if (reached && br_now_ms() - start >= s->budget_ms) {
			c->skipped++;
			c->next_due_ms = c->now;
			continue;
		}
		reached++;
		gs->reached = s->cycle_no;
		if (b && !gs->partial_ms)
			gs->partial_ms = c->now;
		if (!b)
			gs->partial_ms = 0;
		if (b && !pin_to_domain(c, g, b->domain)) {
			br_log(BR_LOG_WARN, "half-bound gang: its domain "
			       "cannot be pinned; placed anywhere", "gang",
			       name, "domain", b->domain, NULL);
		}
		ei.msg[0] = '\0';
		t0 = br_wall_us();
		err = tg_place(c->t, g, &d, &ei);
		ms = (br_wall_us() - t0) / 1000.0;
		br_hist_observe(&c->decision, ms / 1000.0);
		gs->last_ms = c->now;
		gs->seq = c->seq;
		if (err) {
			br_log(BR_LOG_ERROR, "the core refused the gang",
			       "gang", name, "error", ei.msg, "code",
			       tg_strerror(err), NULL);
			failed(s, gs, c->now, true);
			continue;
		}
		if (c->npl == c->cappl) {
			c->cappl = c->cappl ? c->cappl * 2 : 16;
			c->pl = br_xrealloc(c->pl, c->cappl * sizeof(plan));
		}
		p = &c->pl[c->npl++];
		memset(p, 0, sizeof(*p));
		p->g = g;
		p->d = d;
		p->gs = gs;
		p->partial = b != NULL;
		p->domain = b && *b->domain ? b->domain :
			    tg_decision_domain(d);
		log_decision(c, p, ms);
		switch (tg_decision_status(d)) {
		case TG_STATUS_PLACED:
		case TG_STATUS_PREEMPTING:
			err = tg_decision_apply(c->t, g, d);
			if (err)
				br_log(BR_LOG_ERROR, "cannot apply a decision",
				       "gang", name, "code", tg_strerror(err),
				       NULL);
			if (tg_decision_status(d) == TG_STATUS_PREEMPTING) {
				c->preempting++;
				c->waiting++;
			}
			break;
		default:
			c->unschedulable++;
			break;
		}
	}
}

/* ---- writes: bindings -------------------------------------------------- */

typedef struct bindjob {
	plan *p;
	const tg_placement *pl;
	char ns[254], name[254];
	char *uid;
	const char *node;
	br_req *r;
	unsigned tries;
	bool ok;
} bindjob;

static bool retryable(const br_req *r)
{
	return !r->cancelled && (r->status == 0 || r->status == 429 ||
				 r->status >= 500);
}

/*
 * A 409 on a binding is a success only when the pod is bound to the node
 * we wanted already: the cache says so (same UID), or the answer's Status
 * does: reason Conflict, details naming this pod's binding (kind
 * pods/binding, name), and the message the API server's binding storage
 * ends with, `pod NAME is already assigned to node "NODE"`, NODE exactly
 * the wanted node (compared whole and quoted: gpu-1 is not gpu-10).  Any
 * other conflict (a UID precondition, a pod being deleted, bound
 * elsewhere) is a failure.
 */
static bool already_there(br_sched *s, const bindjob *j)
{
	char key[520], *want;
	const br_obj *o;
	cJSON *st;
	const cJSON *det;
	const char *reason, *kind, *name, *msg;
	size_t lm, lw;
	bool yes = false;

	snprintf(key, sizeof(key), "%s/%s", j->ns, j->name);
	o = br_store_get(br_informer_store(s->env.pods), key);
	if (o && o->node && strcmp(o->node, j->node) == 0 &&
	    strcmp(o->uid, j->uid) == 0)
		return true;
	if (o && strcmp(o->uid, j->uid) != 0)
		return false;	/* another pod under the name */
	st = j->r->resp.len ? cJSON_ParseWithLength(j->r->resp.s,
						    j->r->resp.len) : NULL;
	reason = br_jstr(st, "reason");
	det = br_jget(st, "details");
	kind = br_jstr(det, "kind");
	name = br_jstr(det, "name");
	msg = br_jstr(st, "message");
	if (reason && strcmp(reason, "Conflict") == 0 && kind &&
	    strcmp(kind, "pods/binding") == 0 && name &&
	    strcmp(name, j->name) == 0 && msg) {
		want = br_xasprintf("pod %s is already assigned to node "
				    "\"%s\"", j->name, j->node);
		lm = strlen(msg);
		lw = strlen(want);
		yes = lm >= lw && strcmp(msg + lm - lw, want) == 0;
		free(want);
	}
	cJSON_Delete(st);
	return yes;
}

/*
 * A preemptor placed on the nodes it was nominated to, where a victim is
 * still terminating: the core counts the victim's resources as the
 * nominee's already, but the kubelet still runs it (and would refuse the
 * new pod for want of resources).  The reservation holds (the nomination
 * is in the API, and the core reads it back every cycle); binding waits
 * until the victims are gone.
 */
static bool victims_terminating(cyc *c, plan *p)
{
	const br_store *pods = br_informer_store(c->s->env.pods);
	unsigned m;

	for (m = 0; m < tg_decision_nplacements(p->d); m++) {
		const tg_placement *pl = tg_decision_placement(p->d, m);
		const char *node = tg_topology_node_name(c->t, pl->node);
		const br_obj *o = br_store_get(pods, pl->pod);
		const br_obj *v = br_map_get(&c->terminating, node);

		if (o && o->nominated && strcmp(o->nominated, node) == 0 && v) {
			if (!p->gs->waiting_ms)
				p->gs->waiting_ms = c->now;
			c->s->waiting++;
			br_log(BR_LOG_INFO, "binding waits for a victim to "
			       "terminate", "gang", tg_decision_gang(p->d),
			       "node", node, "victim", v->key, NULL);
			return true;
		}
	}
	return false;
}

/*
 * The volume hold's reservations (volbind.h): gang \p p held for its
 * claims keeps the nodes it was decided on this cycle.
 */
static void hold_members(cyc *c, const plan *p)
{
	br_sched *s = c->s;
	const br_store *pods = br_informer_store(s->env.pods);
	bool fresh = false;
	unsigned m;

	for (m = 0; m < tg_decision_nplacements(p->d); m++) {
		const tg_placement *pl = tg_decision_placement(p->d, m);
		const br_obj *o = br_store_get(pods, pl->pod);
		const assumed *old = br_map_get(&s->assumed, pl->pod);
		assumed *a;

		if (!o || o->node || (old && !old->held))
			continue;	/* gone, bound, or bound by us */
		fresh |= !old;
		a = br_xcalloc(1, sizeof(*a));
		a->uid = br_xstrdup(o->uid);
		a->node = br_xstrdup(tg_topology_node_name(c->t, pl->node));
		a->gang = br_xstrdup(tg_decision_gang(p->d));
		a->domain = br_xstrdup(p->domain);
		a->rank = pl->rank;
		a->held = true;
		a->cycle = s->cycle_no;
		a->held_ms = c->now;
		br_map_put(&s->assumed, pl->pod, a);
	}
	if (fresh)
		br_log(BR_LOG_INFO, "gang keeps its nodes while its claims "
		       "are bound (reserved for it)", "gang",
		       tg_decision_gang(p->d), NULL);
}

#define HOLD_OVER	"gang's nodes no longer kept for it (volume hold over)"

/* The reservations of \p d's members held for their claims go; logged
 * when there were some and \p why is not NULL. */
static void hold_release_members(br_sched *s, const tg_decision *d,
				 const char *why)
{
	unsigned m, n = 0;

	for (m = 0; m < tg_decision_nplacements(d); m++) {
		const char *pod = tg_decision_placement(d, m)->pod;
		const assumed *a = br_map_get(&s->assumed, pod);

		if (a && a->held) {
			br_map_del(&s->assumed, pod);
			n++;
		}
	}
	if (n && why)
		br_log(BR_LOG_INFO, HOLD_OVER, "gang", tg_decision_gang(d),
		       "why", why, NULL);
}

/*
 * Whether the volume hold \p a outlives this cycle without being held
 * again: its gang was in the queue but not reached (over the budget,
 * c->skipped), and was held less than binding.volumeBindTimeoutSeconds
 * ago (the longest a hold lasts; a gang never reached again gives its
 * nodes back then).
 */
static bool hold_kept(const br_sched *s, const assumed *a, int64_t now)
{
	const gstate *gs = br_map_get(&s->gangs, a->gang);

	return gs && gs->seen == s->cycle_no && gs->reached != s->cycle_no &&
	       now - a->held_ms <= s->env.cfg->volume_bind_timeout_s * 1000;
}

/*
 * The volume hold's reservations not held again this cycle go (\p all:
 * every one, the leadership lost): the gang was bound, is no longer
 * placed, or is gone; those of gangs not reached this cycle stay a while
 * (hold_kept).  Logged once a gang.
 */
static void hold_release(br_sched *s, bool all, int64_t now,
			 const char *why)
{
	strvec dead = { 0 };
	br_map gangs;
	br_map_ent *e;
	size_t slot, i;

	br_map_init(&gangs, NULL);
	for (e = br_map_first(&s->assumed, &slot); e;
	     e = br_map_next(&s->assumed, &slot, e)) {
		const assumed *a = e->val;

		if (!a->held || (!all && (a->cycle == s->cycle_no ||
					  hold_kept(s, a, now))))
			continue;
		sv_push(&dead, e->key);
		if (!br_map_get(&gangs, a->gang)) {
			br_map_put(&gangs, a->gang, (void *)1);
			br_log(BR_LOG_INFO, HOLD_OVER, "gang", a->gang,
			       "why", why, NULL);
			br_volbind_ended(s->vb, a->gang);
		}
	}
	br_map_free(&gangs);
	for (i = 0; i < dead.n; i++)
		br_map_del(&s->assumed, dead.v[i]);
	sv_free(&dead);
}

/* The bindings of the placed gangs (not those whose victims still go). */
static bindjob *bind_jobs(cyc *c, size_t *njobs)
{
	br_sched *s = c->s;
	bindjob *jobs = NULL;
	size_t nj = 0, cap = 0, i;

	br_volbind_cycle(s->vb, c->k, claim_informer(s) ?
			 br_informer_store(claim_informer(s)) : NULL);
	for (i = 0; i < c->npl; i++) {
		plan *p = &c->pl[i];
		unsigned m;

		if (tg_decision_status(p->d) != TG_STATUS_PLACED)
			continue;
		if (victims_terminating(c, p)) {
			p->held = true;
			continue;
		}
		/* WaitForFirstConsumer claims: stamped, bound first;
		 * the gang keeps its nodes meanwhile */
		switch (br_volbind_hold(s->vb, s, c->k, c->t, p->d,
					br_informer_store(s->env.pods), c->now,
					s->env.cfg->volume_bind_timeout_s)) {
		case BR_VOLBIND_HELD: {
			int64_t at = c->now + BR_VOLBIND_POLL_MS;

			hold_members(c, p);
			p->vol_held = true;
			/* decided again at the next poll, whatever made it
			 * wait before (an unschedulable attempt) */
			p->gs->need_event = false;
			p->gs->next_ms = 0;
			if (!s->next_due_ms || at < s->next_due_ms)
				s->next_due_ms = at;
			continue;
		}
		case BR_VOLBIND_RELEASED:
			/* kube-scheduler's Unreserve and backoff: the
			 * nodes go to the gangs waiting for them first */
			hold_release_members(s, p->d, "binding."
					     "volumeBindTimeoutSeconds, or a "
					     "claim's node removed");
			/* a preemptor's reservation goes too (its
			 * nominations cleared by the report) */
			p->gs->waiting_ms = 0;
			failed(s, p->gs, c->now, false);
			mark(s, true);
			p->vol_held = true;
			continue;
		case BR_VOLBIND_BIND:
			hold_release_members(s, p->d, NULL);
			break;
		}
		for (m = 0; m < tg_decision_nplacements(p->d); m++) {
			const tg_placement *pl = tg_decision_placement(p->d, m);
			const br_obj *o = br_store_get(
				br_informer_store(s->env.pods), pl->pod);
			bindjob *j;

			if (nj == cap) {
				cap = cap ? cap * 2 : 64;
				jobs = br_xrealloc(jobs, cap * sizeof(*jobs));
			}
			j = &jobs[nj++];
			memset(j, 0, sizeof(*j));
			j->p = p;
			j->pl = pl;
			br_split_key(pl->pod, j->ns, sizeof(j->ns), j->name,
				  sizeof(j->name));
			j->uid = br_xstrdup(o ? o->uid : "");
			j->node = tg_topology_node_name(c->t, pl->node);
		}
	}
	*njobs = nj;
	return jobs;
}

/* Sends the bindings, retrying the transient failures (BIND_ATTEMPTS). */
static void send_binds(br_sched *s, bindjob *jobs, size_t nj)
{
	br_req **reqs = br_xcalloc(nj, sizeof(*reqs));
	unsigned attempt;
	size_t i, k;

	for (attempt = 0; attempt < BIND_ATTEMPTS; attempt++) {
		size_t n = 0;

		if (!leading(s))
			break;
		for (i = 0; i < nj; i++) {
			bindjob *j = &jobs[i];

			if (j->ok || (j->r && !retryable(j->r)))
				continue;
			br_req_free(j->r);
			j->r = br_sched_binding_req(j->ns, j->name, j->uid,
						    j->node,
						    tg_decision_gang(j->p->d),
						    j->p->domain, j->pl->rank,
						    NULL, NULL);
			j->tries++;
			reqs[n++] = j->r;
		}
		if (!n)
			break;
		run_batch(s, reqs, n);
		for (i = 0; i < nj; i++) {
			bindjob *j = &jobs[i];

			if (j->ok || !j->r || !j->r->done)
				continue;
			if ((j->r->status >= 200 && j->r->status < 300) ||
			    (j->r->status == 409 && already_there(s, j)))
				j->ok = true;
		}
		for (i = 0, k = 0; i < nj; i++)
			if (!jobs[i].ok && jobs[i].r && retryable(jobs[i].r))
				k++;
		if (!k)
			break;
		sleep_ms(s, BIND_RETRY_MS << attempt);
	}
	free(reqs);
}

/* One member bound: assumed until the watch shows it, event Scheduled. */
static void bound_one(br_sched *s, plan *p, const bindjob *j)
{
	assumed *a = br_xcalloc(1, sizeof(*a));
	char key[520], note[600];

	snprintf(key, sizeof(key), "%s/%s", j->ns, j->name);
	a->uid = br_xstrdup(j->uid);
	a->node = br_xstrdup(j->node);
	a->gang = br_xstrdup(tg_decision_gang(p->d));
	a->domain = br_xstrdup(p->domain);
	a->rank = j->pl->rank;
	br_map_put(&s->assumed, key, a);
	s->env.m->pods_bound++;
	snprintf(note, sizeof(note), "Successfully assigned %s to %s", key,
		 j->node);
	send_event(s, "Normal", "Scheduled", "Binding", note, "Pod", j->ns,
		   j->name, j->uid);
}

/* The results of one gang's bindings. */
static void bind_result(cyc *c, plan *p, const bindjob *jobs, size_t nj)
{
	br_sched *s = c->s;
	unsigned ok = 0, bad = 0;
	int64_t now = br_now_ms();
	char nok[16], nbad[16], lat[32];
	size_t k;

	for (k = 0; k < nj; k++) {
		const bindjob *j = &jobs[k];
		char why[400];

		if (j->p != p)
			continue;
		if (j->ok) {
			ok++;
			bound_one(s, p, j);
			continue;
		}
		bad++;
		s->env.m->bind_failures++;
		br_log(BR_LOG_WARN, "binding failed", "pod", j->pl->pod,
		       "node", j->node, "gang", tg_decision_gang(p->d),
		       "error", j->r ? br_req_reason(j->r, why, sizeof(why)) :
		       "not sent (not leading)", NULL);
	}
	snprintf(nok, sizeof(nok), "%u", ok);
	snprintf(nbad, sizeof(nbad), "%u", bad);
	if (!bad) {
		s->env.m->gangs_scheduled++;
		if (p->partial)
			s->env.m->gangs_repaired++;
		br_hist_observe(&s->env.m->bind, (now - c->now) / 1000.0);
		br_log(BR_LOG_INFO, "gang bound", "gang",
		       tg_decision_gang(p->d), "domain", p->domain, "pods", nok,
		       "bind_ms", ms_str(lat, sizeof(lat),
					 (double)(now - c->now)), NULL);
		memset(p->gs, 0, sizeof(*p->gs));
		p->gs->seen = s->cycle_no;
		return;
	}
	br_log(BR_LOG_WARN, ok ? "gang half-bound; its pending members will "
	       "be pinned to its domain" : "gang not bound; re-queued",
	       "gang", tg_decision_gang(p->d), "domain", p->domain, "bound",
	       nok, "failed", nbad, NULL);
	if (ok && !p->gs->partial_ms)
		p->gs->partial_ms = now;
	failed(s, p->gs, now, false);
	s->dirty = true;
}

static void do_binds(cyc *c)
{
	size_t nj, i;
	bindjob *jobs = bind_jobs(c, &nj);

	/* gangs not reached (over the budget) keep theirs a while */
	hold_release(c->s, false, c->now, "not held again: bound, no longer "
		     "placed, or gone");
	if (!nj) {
		free(jobs);
		return;
	}
	send_binds(c->s, jobs, nj);
	for (i = 0; i < c->npl; i++) {
		plan *p = &c->pl[i];

		if (tg_decision_status(p->d) == TG_STATUS_PLACED && !p->held &&
		    !p->vol_held)
			bind_result(c, p, jobs, nj);
	}
	for (i = 0; i < nj; i++) {
		br_req_free(jobs[i].r);
		free(jobs[i].uid);
	}
	free(jobs);
}

/* ---- writes: preemption ------------------------------------------------ */

/* The victims' writes of a cycle: DisruptionTarget marks, evictions. */
typedef struct vwrites {
	reqvec marks, evs;
	strvec mkeys, ekeys;
	const char **egang;
	size_t capg;
} vwrites;

/* A nomination cleared (NULL message: only the nomination goes). */
static void clear_nomination(reqvec *noms, const char *pod)
{
	char ns[254], name[254];

	br_split_key(pod, ns, sizeof(ns), name, sizeof(name));
	rv_push(noms, br_sched_status_req(ns, name, "Unschedulable", NULL,
					  ""));
}

/* A gang whose victims did not go within the nomination timeout gives
 * its reservation up and backs off.  True when that happened. */
static bool preempt_timed_out(cyc *c, plan *p, reqvec *noms)
{
	br_sched *s = c->s;
	unsigned m;

	if (c->now - p->gs->waiting_ms <= s->env.cfg->nomination_timeout_s *
	    1000)
		return false;
	br_log(BR_LOG_WARN, "preemption timed out; the gang backs off",
	       "gang", tg_decision_gang(p->d), NULL);
	p->gs->waiting_ms = 0;
	p->gs->attempts = 0;
	failed(s, p->gs, c->now, true);
	p->gs->next_ms = c->now + s->env.cfg->unschedulable_flush_s * 1000;
	for (m = 0; m < tg_decision_nplacements(p->d); m++)
		clear_nomination(noms, tg_decision_placement(p->d, m)->pod);
	return true;
}

/* The victims of \p p: marks and evictions due now; lower nominations
 * given way are cleared. */
static void plan_victims(cyc *c, plan *p, int64_t now, vwrites *w,
			 reqvec *noms)
{
	br_sched *s = c->s;
	const br_store *pods = br_informer_store(s->env.pods);
	const char *gang = tg_decision_gang(p->d);
	unsigned v;

	for (v = 0; v < tg_decision_nvictims(p->d); v++) {
		const tg_victim *vi = tg_decision_victim(p->d, v);
		const br_obj *o = br_store_get(pods, vi->pod);
		vstate *vs;
		char ns[254], name[254];

		if (vi->reservation) {
			/* a lower nomination given way: clear it, its gang
			 * is decided again */
			if (o && o->nominated && !o->node)
				clear_nomination(noms, vi->pod);
			continue;
		}
		if (!o || o->deleting)
			continue;	/* gone or going */
		vs = br_map_get(&s->victims, vi->pod);
		if (vs && strcmp(vs->uid, o->uid) != 0) {
			br_map_del(&s->victims, vi->pod);
			vs = NULL;
		}
		if (vs && now < vs->next_ms)
			continue;
		if (!vs) {
			vs = br_xcalloc(1, sizeof(*vs));
			vs->uid = br_xstrdup(o->uid);
			br_map_put(&s->victims, vi->pod, vs);
		}
		vs->next_ms = now + VICTIM_RETRY_MS;
		br_split_key(vi->pod, ns, sizeof(ns), name, sizeof(name));
		if (!o->disruption && !vs->marked) {
			sv_push(&w->mkeys, vi->pod);
			rv_push(&w->marks, disruption_req(s, ns, name, gang));
		}
		if (w->ekeys.n == w->capg) {
			w->capg = w->capg ? w->capg * 2 : 16;
			w->egang = br_xrealloc(w->egang,
					       w->capg * sizeof(*w->egang));
		}
		w->egang[w->ekeys.n] = gang;
		sv_push(&w->ekeys, vi->pod);
		rv_push(&w->evs, evict_req(s, ns, name, o->uid));
	}
}

/* Nominations and the reason, on every member whose own differ. */
static void plan_nominations(cyc *c, plan *p, reqvec *noms)
{
	const br_store *pods = br_informer_store(c->s->env.pods);
	const char *msg = tg_decision_message(p->d);
	unsigned m;

	for (m = 0; m < tg_decision_nplacements(p->d); m++) {
		const tg_placement *pl = tg_decision_placement(p->d, m);
		const char *node = tg_topology_node_name(c->t, pl->node);
		const br_obj *o = br_store_get(pods, pl->pod);
		char ns[254], name[254];

		if (!o || (o->nominated && strcmp(o->nominated, node) == 0 &&
			   o->cond_msg && strcmp(o->cond_msg, msg) == 0))
			continue;
		br_split_key(pl->pod, ns, sizeof(ns), name, sizeof(name));
		rv_push(noms, br_sched_status_req(ns, name, "Unschedulable",
						  msg, node));
	}
}

/* The evictions' answers: counted, logged, retried after Retry-After. */
static void eviction_results(br_sched *s, vwrites *w)
{
	const br_store *pods = br_informer_store(s->env.pods);
	size_t i;

	for (i = 0; i < w->evs.n; i++) {
		br_req *r = w->evs.r[i];
		const char *key = w->ekeys.v[i];
		vstate *vs = br_map_get(&s->victims, key);
		char why[400], ns[254], name[254], note[600];
		const br_obj *o = br_store_get(pods, key);

		if (r->status >= 200 && r->status < 300) {
			s->env.m->preemption_victims++;
			br_log(BR_LOG_INFO, "victim evicted", "pod", key,
			       "gang", w->egang[i], "mode",
			       s->env.cfg->preempt_delete ? "delete" : "evict",
			       NULL);
			br_split_key(key, ns, sizeof(ns), name, sizeof(name));
			snprintf(note, sizeof(note), "Preempted by gang %.250s",
				 w->egang[i]);
			send_event(s, "Normal", "Preempted", "Preempting", note,
				   "Pod", ns, name, o ? o->uid : NULL);
			continue;
		}
		if (r->status == 404)
			continue;	/* gone already */
		if (r->status == 429) {
			s->env.m->evictions_blocked++;
			if (vs)
				vs->next_ms = br_now_ms() + 1000 *
					(r->retry_after_s > 0 ?
					 r->retry_after_s : 10);
		}
		br_log(BR_LOG_WARN, "eviction refused; retrying later", "pod",
		       key, "gang", w->egang[i], "error",
		       br_req_reason(r, why, sizeof(why)), NULL);
	}
}

static void free_reqs(reqvec *v)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		br_req_free(v->r[i]);
	free(v->r);
	memset(v, 0, sizeof(*v));
}

static void do_preempt(cyc *c)
{
	br_sched *s = c->s;
	vwrites w;
	reqvec noms = { NULL, 0, 0 };
	int64_t now = br_now_ms();
	size_t i;

	memset(&w, 0, sizeof(w));
	for (i = 0; i < c->npl; i++) {
		plan *p = &c->pl[i];

		if (tg_decision_status(p->d) != TG_STATUS_PREEMPTING) {
			if (!p->held)
				p->gs->waiting_ms = 0;
			continue;
		}
		if (!p->gs->waiting_ms)
			p->gs->waiting_ms = c->now;
		if (preempt_timed_out(c, p, &noms))
			continue;
		plan_victims(c, p, now, &w, &noms);
		plan_nominations(c, p, &noms);
	}
	if (noms.n && leading(s))
		run_batch(s, noms.r, noms.n);
	if (w.marks.n && leading(s)) {
		run_batch(s, w.marks.r, w.marks.n);
		for (i = 0; i < w.marks.n; i++) {
			vstate *vs = br_map_get(&s->victims, w.mkeys.v[i]);

			if (vs && w.marks.r[i]->status >= 200 &&
			    w.marks.r[i]->status < 300)
				vs->marked = true;
		}
	}
	if (w.evs.n && leading(s)) {
		run_batch(s, w.evs.r, w.evs.n);
		eviction_results(s, &w);
	}
	free_reqs(&w.marks);
	free_reqs(&w.evs);
	free_reqs(&noms);
	sv_free(&w.mkeys);
	sv_free(&w.ekeys);
	free(w.egang);
}

/* ---- writes: unschedulable --------------------------------------------- */

/*
 * One pending pod that cannot be scheduled now (\p pod is its
 * namespace/name): a FailedScheduling event per attempt, as kube-scheduler
 * (repeats join a series), and PodScheduled=False with \p reason and
 * \p msg when the condition changed.
 */
static void unsched_pod(br_sched *s, const char *pod, const char *reason,
			const char *msg, reqvec *v)
{
	const br_obj *o = pod ? br_store_get(br_informer_store(s->env.pods),
					     pod) : NULL;
	char ns[254], name[254];

	if (!o)
		return;
	br_split_key(o->key, ns, sizeof(ns), name, sizeof(name));
	send_event(s, "Warning", "FailedScheduling", "Scheduling", msg, "Pod",
		   ns, name, o->uid);
	if (o->cond_msg && strcmp(o->cond_msg, msg) == 0 && !o->nominated)
		return;
	rv_push(v, br_sched_status_req(ns, name, reason, msg,
				       o->nominated ? "" : NULL));
}

/*
 * Gangs the loader could not read (an object of theirs has a bad field):
 * their pods get PodScheduled=False, reason SchedulerError, with the
 * loader's message naming the object and the field, and an event; the
 * other gangs were decided as usual.  Retried with the gang's backoff.
 * A gang waiting for its group object or its members
 * (tg_k8s_failed_waits(): pods that came before their PodGroup, fewer
 * pods than its size) is reported the same way with reason
 * Unschedulable and no backoff: again after a cluster event (or
 * unschedulableFlushSeconds), and decided in the first cycle whose
 * snapshot has the object.
 */
static void failed_gangs(cyc *c, int64_t now, reqvec *v)
{
	br_sched *s = c->s;
	unsigned i, j;

	for (i = 0; i < tg_k8s_nfailed(c->k); i++) {
		const char *why = NULL, *name = tg_k8s_failed(c->k, i, &why);
		bool wait = tg_k8s_failed_waits(c->k, i);
		gstate *gs = gang_state(s, name);

		gs->seen = s->cycle_no;
		if (eligible_at(s, gs, s->seq) > c->now)
			continue;
		gs->last_ms = c->now;
		gs->seq = s->seq;
		if (wait) {
			gs->need_event = true;	/* no attempt counted */
		} else {
			failed(s, gs, now, true);
			s->env.m->gangs_unschedulable++;
		}
		br_log(wait ? BR_LOG_INFO : BR_LOG_WARN,
		       wait ? "gang waits" :
		       "gang cannot be read", "gang", name,
		       wait ? "reason" : "error", why, NULL);
		for (j = 0; j < tg_k8s_failed_npods(c->k, i); j++)
			unsched_pod(s, tg_k8s_failed_pod(c->k, i, j),
				    wait ? "Unschedulable" : "SchedulerError",
				    why, v);
	}
}

static void send_reqs(br_sched *s, reqvec *v)
{
	size_t i;

	if (v->n && leading(s))
		run_batch(s, v->r, v->n);
	for (i = 0; i < v->n; i++)
		br_req_free(v->r[i]);
	free(v->r);
}

static void do_unschedulable(cyc *c)
{
	br_sched *s = c->s;
	reqvec v = { NULL, 0, 0 };
	size_t i, m;
	int64_t now = br_now_ms();

	for (i = 0; i < c->npl; i++) {
		plan *p = &c->pl[i];
		const char *msg = tg_decision_message(p->d);

		if (tg_decision_status(p->d) != TG_STATUS_UNSCHEDULABLE)
			continue;
		failed(s, p->gs, now, true);
		/* the members as the core's loader found them (the loader
		 * gives each the pod's namespace/name) */
		for (m = 0; m < tg_gang_nmembers(p->g); m++)
			unsched_pod(s, tg_gang_member(p->g, (unsigned)m),
				    "Unschedulable", msg, &v);
	}
	failed_gangs(c, now, &v);
	send_reqs(s, &v);
}

/* Mixed mode (Slurm places): only the gangs the loader could not read. */
static void do_failed_gangs(cyc *c)
{
	reqvec v = { NULL, 0, 0 };

	failed_gangs(c, br_now_ms(), &v);
	send_reqs(c->s, &v);
}

/* ---- repair: half-bound gangs that cannot complete --------------------- */

static void do_repairs(cyc *c)
{
	br_sched *s = c->s;
	const br_store *pods = br_informer_store(s->env.pods);
	br_req **reqs = NULL;
	size_t n = 0, cap = 0, i, m;

	for (i = 0; i < c->npl; i++) {
		plan *p = &c->pl[i];
		const char *gang = tg_decision_gang(p->d);
		bound_info *b;

		if (p->partial && tg_decision_status(p->d) ==
		    TG_STATUS_PREEMPTING) {
			/* completing in its domain, victims on their way:
			 * no repair; the grace counts from when that ends */
			p->gs->partial_ms = c->now;
			continue;
		}
		if (!p->partial || !p->gs->partial_ms ||
		    tg_decision_status(p->d) == TG_STATUS_PLACED ||
		    c->now - p->gs->partial_ms <
		    s->env.cfg->repair_grace_s * 1000)
			continue;
		b = br_map_get(&c->bound, gang);
		if (!b)
			continue;
		br_log(BR_LOG_WARN, "half-bound gang cannot complete in its "
		       "domain; evicting its bound members so that it is "
		       "placed whole", "gang", gang, "domain", b->domain,
		       NULL);
		s->env.m->gangs_reset++;
		p->gs->partial_ms = 0;
		for (m = 0; m < b->keys.n; m++) {
			const br_obj *o = br_store_get(pods, b->keys.v[m]);
			char ns[254], name[254];

			if (!o || o->deleting)
				continue;
			br_split_key(o->key, ns, sizeof(ns), name, sizeof(name));
			if (n == cap) {
				cap = cap ? cap * 2 : 16;
				reqs = br_xrealloc(reqs, cap * sizeof(*reqs));
			}
			reqs[n++] = evict_req(s, ns, name, o->uid);
			br_map_del(&s->assumed, o->key);
		}
	}
	if (n && leading(s))
		run_batch(s, reqs, n);
	for (i = 0; i < n; i++)
		br_req_free(reqs[i]);
	free(reqs);
}

/* ---- PodGroup status -------------------------------------------------- */

static pgcount *pg_count(br_map *m, const char *gang)
{
	pgcount *pc = br_map_get(m, gang);

	if (!pc) {
		pc = br_xcalloc(1, sizeof(*pc));
		br_map_put(m, gang, pc);
	}
	return pc;
}

/* Order of the phases this scheduler writes. */
static int pg_rank(const char *phase)
{
	static const char *const order[] = { "Pending", "Scheduling",
					     "Scheduled", "Running", NULL };
	int i;

	for (i = 0; order[i]; i++)
		if (strcmp(phase, order[i]) == 0)
			return i;
	return -1;
}

static int64_t jint(const cJSON *v, int64_t dflt)
{
	return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : dflt;
}

/*
 * The status of the PodGroups of gangs this scheduler handles, as
 * scheduler-plugins' coscheduling writes it (its PostBind: status.
 * scheduled counts bound members, phase Scheduling until minMember are
 * bound, then Scheduled, and scheduleStartTime when scheduling starts),
 * plus what its PodGroup controller adds from the pods: running, and
 * phase Running once minMember run.  A gang still waiting with nothing
 * bound is Pending.  Finished and Failed need the terminal pods, which
 * the caches do not hold: left to a controller that has them; for the
 * same reason a gang none of whose members is pending any more is not
 * moved back to an earlier phase (its members are finishing).  Merge
 * patch of the status subresource (custom resources take no strategic
 * merge), only when something changed.
 */
/* Members bound (or assumed) and running, by gang; pending gangs.  The
 * bound ones are kept from the watch events (s->pgc), not counted from
 * the cache: O(gangs), not O(pods). */
static void pg_counts(cyc *c, br_map *counts)
{
	br_sched *s = c->s;
	const br_store *pods = br_informer_store(s->env.pods);
	br_map_ent *e;
	size_t slot;
	unsigned g;

	for (e = br_map_first(&s->pgc, &slot); e;
	     e = br_map_next(&s->pgc, &slot, e)) {
		const pgcount *from = e->val;
		pgcount *pc = pg_count(counts, e->key);

		pc->scheduled = from->scheduled;
		pc->running = from->running;
	}
	for (e = br_map_first(&s->assumed, &slot); e;
	     e = br_map_next(&s->assumed, &slot, e)) {
		const assumed *a = e->val;
		const br_obj *o = br_store_get(pods, e->key);

		if (o && !o->node && !a->held && strcmp(o->uid, a->uid) == 0)
			pg_count(counts, a->gang)->scheduled++;
	}
	for (g = 0; c->k && g < tg_k8s_ngangs(c->k); g++)
		pg_count(counts, tg_gang_name(tg_k8s_gang(c->k, g)))->pending =
			true;
}

/* The phase \p pc gives a PodGroup whose status is \p j's; NULL when
 * nothing is to be written. */
static const char *pg_phase(const pgcount *pc, const cJSON *j, bool *start)
{
	int64_t min = jint(br_jpath(j, "spec.minMember"), 1);
	const char *cur = br_jpath_str(j, "status.phase"), *phase;

	cur = cur ? cur : "";
	if (strcmp(cur, "Finished") == 0 || strcmp(cur, "Failed") == 0)
		return NULL;	/* the controller's word */
	if (min > 0 && pc->running >= min)
		phase = "Running";
	else if (min > 0 && pc->scheduled >= min)
		phase = "Scheduled";
	else if (pc->scheduled)
		phase = "Scheduling";
	else
		phase = "Pending";
	/* members going away (finished: the caches hold no terminal pods,
	 * so no count of them) is not a step back */
	if (!pc->pending && pg_rank(phase) < pg_rank(cur))
		return NULL;
	*start = pc->scheduled && !br_jpath_str(j, "status.scheduleStartTime");
	if (strcmp(cur, phase) == 0 && !*start &&
	    jint(br_jpath(j, "status.scheduled"), 0) == pc->scheduled &&
	    jint(br_jpath(j, "status.running"), 0) == pc->running)
		return NULL;
	return phase;
}

/* The merge patch of one PodGroup's status, or NULL (nothing new). */
static br_req *pg_status_req(const br_informer *inf, const br_obj *o,
			     const br_map *counts)
{
	char gang[600], ts[40], *path, *body;
	const char *ns = *o->ns ? o->ns : "default", *phase;
	const pgcount *pc;
	cJSON *j, *out, *stj;
	bool start = false;
	br_req *r;

	snprintf(gang, sizeof(gang), "%s/%s", ns, o->name);
	pc = br_map_get(counts, gang);
	if (!pc || (!pc->scheduled && !pc->pending))
		return NULL;	/* not ours (or not yet) */
	j = br_obj_parse(o);
	phase = pg_phase(pc, j, &start);
	cJSON_Delete(j);
	if (!phase)
		return NULL;
	out = cJSON_CreateObject();
	stj = cJSON_AddObjectToObject(out, "status");
	cJSON_AddStringToObject(stj, "phase", phase);
	cJSON_AddNumberToObject(stj, "scheduled", pc->scheduled);
	cJSON_AddNumberToObject(stj, "running", pc->running);
	if (start)
		cJSON_AddStringToObject(stj, "scheduleStartTime",
					br_rfc3339(ts, sizeof(ts),
						   br_wall_us(), false));
	body = cJSON_PrintUnformatted(out);
	cJSON_Delete(out);
	path = br_xasprintf("/apis/%s/namespaces/%s/podgroups/%s/status",
			    br_informer_api_version(inf), ns, o->name);
	r = br_req_create("PATCH", path);
	br_req_set_body(r, "application/merge-patch+json", body ? body : "{}");
	free(path);
	cJSON_free(body);
	br_log(BR_LOG_INFO, "podgroup status", "gang", gang, "phase", phase,
	       NULL);
	return r;
}

static void do_podgroups(cyc *c)
{
	br_sched *s = c->s;
	reqvec v = { NULL, 0, 0 };
	unsigned f;
	br_map counts;
	size_t i;

	for (f = 0; f < s->env.nfeed; f++)
		if (pg_status_feed(s->env.feed[f]) &&
		    br_informer_store(s->env.feed[f])->n)
			break;
	if (f == s->env.nfeed)
		return;		/* no PodGroup of that kind cached */
	br_map_init(&counts, free);
	pg_counts(c, &counts);
	for (f = 0; f < s->env.nfeed; f++) {
		br_informer *inf = s->env.feed[f];
		const br_store *st = br_informer_store(inf);

		if (!pg_status_feed(inf))
			continue;
		for (i = 0; i < st->n; i++) {
			br_req *r = pg_status_req(inf, st->all[i], &counts);

			if (r)
				rv_push(&v, r);
		}
	}
	br_map_free(&counts);
	if (v.n && leading(s)) {
		run_batch(s, v.r, v.n);
		for (i = 0; i < v.n; i++)
			if (v.r[i]->status < 200 || v.r[i]->status >= 300) {
				char why[300];

				br_log(BR_LOG_WARN, "podgroup status not "
				       "written", "path", v.r[i]->path,
				       "error", br_req_reason(v.r[i], why,
							      sizeof(why)),
				       NULL);
			}
	}
	for (i = 0; i < v.n; i++)
		br_req_free(v.r[i]);
	free(v.r);
}

/* ---- the cycle --------------------------------------------------------- */

static void expire_state(br_sched *s, int64_t now)
{
	const br_store *pods = br_informer_store(s->env.pods);
	strvec dead = { 0 };
	br_map_ent *e;
	size_t slot, i;

	series_expire(s, now);

	for (e = br_map_first(&s->assumed, &slot); e;
	     e = br_map_next(&s->assumed, &slot, e)) {
		const assumed *a = e->val;
		const br_obj *o = br_store_get(pods, e->key);

		/* confirmed (bound, here or elsewhere) or gone */
		if (!o || strcmp(o->uid, a->uid) != 0 || o->node)
			sv_push(&dead, e->key);
	}
	for (i = 0; i < dead.n; i++)
		br_map_del(&s->assumed, dead.v[i]);
	sv_free(&dead);
	for (e = br_map_first(&s->victims, &slot); e;
	     e = br_map_next(&s->victims, &slot, e))
		if (!br_store_get(pods, e->key))
			sv_push(&dead, e->key);
	for (i = 0; i < dead.n; i++)
		br_map_del(&s->victims, dead.v[i]);
	sv_free(&dead);
	/* gangs no longer queued for a while */
	for (e = br_map_first(&s->gangs, &slot); e;
	     e = br_map_next(&s->gangs, &slot, e)) {
		const gstate *gs = e->val;

		if (s->cycle_no - gs->seen > 100)
			sv_push(&dead, e->key);
	}
	for (i = 0; i < dead.n; i++)
		br_map_del(&s->gangs, dead.v[i]);
	sv_free(&dead);
}

static void next_timers(cyc *c)
{
	br_sched *s = c->s;
	br_map_ent *e;
	size_t slot;
	int64_t t = s->next_due_ms;

	for (e = br_map_first(&s->victims, &slot); e;
	     e = br_map_next(&s->victims, &slot, e)) {
		const vstate *v = e->val;

		if (!t || v->next_ms < t)
			t = v->next_ms;
	}
	if (s->waiting) {
		int64_t w = c->now + 1000;	/* re-check reservations */

		if (!t || w < t)
			t = w;
	}
	for (e = br_map_first(&s->gangs, &slot); e;
	     e = br_map_next(&s->gangs, &slot, e)) {
		const gstate *gs = e->val;
		int64_t at;

		if (gs->seen != s->cycle_no)
			continue;
		at = eligible_at(s, gs, s->seq);
		if (gs->partial_ms) {
			at = gs->partial_ms +
			     s->env.cfg->repair_grace_s * 1000 + 1;
			at = BR_MAX(at, gs->next_ms);
		}
		if (at > c->now && (!t || at < t))
			t = at;
	}
	s->next_due_ms = t;
}

/* ---- the worker -------------------------------------------------------- */

/* References on every cache the snapshot reads (I/O thread). */
static void views_take(br_sched *s, cyc *c)
{
	unsigned i;

	c->views = br_xcalloc(s->env.nfeed + 5, sizeof(view));
	if (s->deltas) {
		/* the core's cache has the objects: the changes, the
		 * overlays and what the worker reads itself */
		deltas_take(s, c);
		c->pods = &c->views[c->nviews];
		view_take(s, &c->views[c->nviews++], s->env.pods, true, true);
		if (claim_informer(s))
			view_take(s, &c->views[c->nviews++],
				  claim_informer(s), false, true);
		return;
	}
	view_take(s, &c->views[c->nviews++], s->env.nodes, false, false);
	c->views[0].since = true;	/* heartbeats keep the version */
	c->pods = &c->views[c->nviews];
	view_take(s, &c->views[c->nviews++], s->env.pods, true, false);
	view_take(s, &c->views[c->nviews++], s->env.pcs, false, false);
	view_take(s, &c->views[c->nviews++], s->env.pdbs, false, false);
	for (i = 0; i < s->env.nfeed; i++)
		view_take(s, &c->views[c->nviews++], s->env.feed[i], false,
			  false);
	if (s->env.upg)
		view_take(s, &c->views[c->nviews++], s->env.upg, false,
			  false);
}

/* The model and the decisions, on the worker thread (see cyc). */
/* A re-list (after a 410 or a 504) starts the core's cache from
 * scratch (I/O thread, no worker running). */
static void kcache_relisted(br_sched *s)
{
	br_informer *const infs[] = { s->env.nodes, s->env.pods, s->env.pcs,
				      s->env.pdbs, s->env.upg };
	uint64_t n = 0;
	unsigned i;

	for (i = 0; i < sizeof(infs) / sizeof(infs[0]); i++)
		if (infs[i])
			n += br_informer_get_stats(infs[i])->lists;
	for (i = 0; i < s->env.nfeed; i++)
		if (s->env.feed[i])
			n += br_informer_get_stats(s->env.feed[i])->lists;
	if (n != s->kcache_lists)
		s->fed = false;	/* deltas: every object again */
	if (n != s->kcache_lists && tg_k8s_cache_size(s->kcache)) {
		char nr[24];

		snprintf(nr, sizeof(nr), "%zu", tg_k8s_cache_size(s->kcache));
		tg_k8s_cache_clear(s->kcache);
		br_log(BR_LOG_INFO, "an informer listed again; the model cache "
		       "starts empty", "records", nr, NULL);
	}
	s->kcache_lists = n;
}

static void *cycle_work(void *arg)
{
	cyc *c = arg;

	c->built = build_snapshot(c);
	if (c->built) {
		set_bandwidths(c);
		if (!c->s->env.mixed) {
			build_indexes(c);
			decide(c);
		}
	}
	__atomic_store_n(&c->done, true, __ATOMIC_RELEASE);
	br_http_wakeup(c->s->env.h);
	return NULL;
}

/*
 * Runs cycle_work on a thread while this one turns the loop (watches,
 * the Lease, /healthz, Events), as it does while writes are in flight.
 */
static void run_worker(br_sched *s, cyc *c)
{
	pthread_t th;
	int err = pthread_create(&th, NULL, cycle_work, c);

	if (err) {
		br_log(BR_LOG_WARN, "no worker thread; this cycle runs on the "
		       "loop", "error", strerror(err), NULL);
		cycle_work(c);
		return;
	}
	while (!__atomic_load_n(&c->done, __ATOMIC_ACQUIRE))
		br_http_turn(s->env.h);
	pthread_join(th, NULL);
}

/* Frees a cycle's model and view (any thread: nothing else refers to
 * them any more). */
static void cyc_free(cyc *c)
{
	size_t i;

	for (i = 0; i < c->npl; i++)
		tg_decision_free(c->pl[i].d);
	free(c->pl);
	br_map_free(&c->bound);
	br_map_free(&c->terminating);
	br_map_free(&c->podix);
	sv_free(&c->foreign);
	tg_topology_destroy(c->t);
	tg_k8s_destroy(c->k);
	for (i = 0; i < c->nviews; i++)
		view_free(&c->views[i]);
	free(c->views);
	deltas_free(c);
	free(c);
}

static void *reap_work(void *arg)
{
	cyc *c = arg;
	br_sched *s = c->s;

	cyc_free(c);
	__atomic_store_n(&s->reaped, true, __ATOMIC_RELEASE);
	/* br_sched_due() was false while this ran: the loop may be
	 * waiting a whole poll timeout; wake it (thread-safe, see http.h) */
	br_http_wakeup(s->env.h);
	return NULL;
}

/* Joins the last reaper (at once when it is done: br_sched_due waits
 * for it). */
static void reap_join(br_sched *s)
{
	if (s->reaping) {
		pthread_join(s->reaper, NULL);
		s->reaping = false;
	}
}

/* Frees the cycle on a thread of its own: 100,000 objects' references
 * and the model are tens of milliseconds the loop need not wait.  No
 * malloc_trim() (see sched.h). */
static void reap(br_sched *s, cyc *c)
{
	reap_join(s);
	__atomic_store_n(&s->reaped, false, __ATOMIC_RELEASE);
	if (pthread_create(&s->reaper, NULL, reap_work, c) == 0) {
		s->reaping = true;
		return;
	}
	reap_work(c);
}

/* What the worker kept for the I/O thread: metrics, gauges, timer. */
static void cycle_results(br_sched *s, cyc *c)
{
	char n1[16], n2[24];

	if (c->built)
		br_hist_observe(&s->env.m->snapshot, c->snap_ms / 1000.0);
	br_hist_merge(&s->env.m->decision, &c->decision);
	s->env.m->gangs_unschedulable += c->unschedulable;
	s->env.m->gangs_preempting += c->preempting;
	s->pending = c->pending;
	s->waiting = c->waiting;
	s->next_due_ms = c->next_due_ms;
	if (c->skipped) {
		snprintf(n1, sizeof(n1), "%u", c->skipped);
		snprintf(n2, sizeof(n2), "%lld", (long long)s->budget_ms);
		br_log(BR_LOG_WARN, "cycle over its budget of "
		       "CYCLE_BUDGET_MS; the gangs left are decided in the "
		       "next cycle", "left", n1, "budget_ms", n2, NULL);
	}
}

/* ---- the cycle, on the I/O thread ------------------------------------- */

static void log_cycle(const br_sched *s, const cyc *c, int64_t t1)
{
	char n1[16], n2[16], a[32], b[32], w[32], ad[32];

	snprintf(n1, sizeof(n1), "%u", s->pending);
	snprintf(n2, sizeof(n2), "%zu", c->npl);
	br_log(BR_LOG_INFO, "cycle", "queued", n1, "decided", n2,
	       "snapshot_ms", ms_str(a, sizeof(a), c->snap_ms),
	       "add_ms", ms_str(ad, sizeof(ad), c->add_ms),
	       "model", c->kept ? "kept" : "built",
	       "decide_ms", ms_str(b, sizeof(b),
				   (double)(t1 - c->now) - c->snap_ms),
	       "write_ms", ms_str(w, sizeof(w), (double)(br_now_ms() - t1)),
	       NULL);
}

/* The writes of a cycle's decisions (I/O thread, turning the loop). */
static void cycle_writes(br_sched *s, cyc *c)
{
	if (leading(s))
		do_binds(c);
	if (leading(s))
		do_preempt(c);
	if (leading(s))
		do_unschedulable(c);
	if (leading(s))
		do_repairs(c);
	if (leading(s))
		do_podgroups(c);
	next_timers(c);
}

/*
 * Whether a cycle needs the core's model: something could be decided
 * (a pod pending for us), or written from the model (assumptions to
 * keep, victims to evict, node warnings after a Node changed, the /ui
 * picture when something it shows changed since the last model (a
 * cluster event, a pod that came bound: s->shown; not a heartbeat, nor
 * a pod's phase), mixed mode's
 * Slurm view, which Slurm changes without an event here).  Otherwise
 * the cycle does only what the kept counts allow (PodGroup status,
 * timers): O(changes), not O(cluster).
 */
static bool model_needed(const br_sched *s)
{
	return s->npending || s->assumed.n || s->victims.n ||
	       s->nodes_changed || s->env.mixed ||
	       (s->env.cfg->ui && s->shown != s->model_shown);
}

/* A cycle without a model (see model_needed); its time goes to the
 * snapshot histogram, as the model's would. */
static void modelless_cycle(br_sched *s, cyc *c)
{
	s->env.m->cycles_modelless++;
	s->pending = 0;
	s->waiting = 0;
	if (leading(s))
		do_podgroups(c);
	next_timers(c);
	s->last_snap_ms = 0;
	br_hist_observe(&s->env.m->snapshot,
			(br_wall_us() - c->t0_us) / 1e6);
}

void br_sched_cycle(br_sched *s)
{
	cyc *c;
	size_t i;
	int64_t t1;

	if (s->busy)
		return;
	s->stopped = false;
	if (!leading(s)) {
		hold_release(s, true, 0, "not leading");
		return;
	}
	s->busy = true;
	reap_join(s);
	c = br_xcalloc(1, sizeof(*c));
	c->s = s;
	c->now = br_now_ms();
	c->seq = s->seq;
	br_map_init(&c->bound, free_bound);
	br_map_init(&c->terminating, NULL);
	br_map_init(&c->podix, NULL);
	s->cycle_no++;
	s->env.m->cycles++;
	s->dirty = false;
	s->arrivals_only = false;
	s->next_due_ms = 0;
	s->last_cycle_ms = c->now;
	c->t0_us = br_wall_us();
	expire_state(s, c->now);
	if (!model_needed(s)) {
		modelless_cycle(s, c);
		goto out;
	}
	s->nodes_changed = false;
	s->model_shown = s->shown;
	kcache_relisted(s);
	views_take(s, c);
	run_worker(s, c);
	t1 = br_now_ms();
	cycle_results(s, c);
	if (!c->built) {
		s->error_until_ms = c->now + SNAP_ERROR_RETRY_MS;
		s->dirty = true;
		s->nodes_changed = true;
		goto out;
	}
	after_build(c);
	log_foreign(c);
	if (s->env.mixed) {
		/* Slurm places (mixed.h) */
		br_mixed_cycle(s->env.mixed, s, c->k, c->t);
		if (leading(s))
			do_failed_gangs(c);
		goto out;
	}
	cycle_writes(s, c);
	s->last_snap_ms = (int64_t)c->snap_ms;
	if (c->npl)
		log_cycle(s, c, t1);
out:
	if (c->t && s->env.on_model) {
		const tg_decision **ds = br_xcalloc(c->npl + 1, sizeof(*ds));
		size_t nd = 0;

		for (i = 0; i < c->npl; i++)
			if (c->pl[i].d)
				ds[nd++] = c->pl[i].d;
		s->env.on_model(s->env.ud, c->t, c->k, ds, nd);
		free(ds);
	}
	reap(s, c);
	s->last_end_ms = br_now_ms();
	s->busy = false;
}

/* ---- for mixed mode (see sched.h) -------------------------------------- */

void br_sched_event(br_sched *s, const char *type, const char *reason,
		    const char *action, const char *note, const char *kind,
		    const char *ns, const char *name, const char *uid)
{
	send_event(s, type, reason, action, note, kind, ns, name, uid);
}

br_req *br_sched_evict_req(br_sched *s, const char *ns, const char *name,
			   const char *uid)
{
	return evict_req(s, ns, name, uid);
}

void br_sched_run_batch(br_sched *s, br_req **reqs, size_t n)
{
	run_batch(s, reqs, n);
}

bool br_sched_leading(br_sched *s)
{
	return leading(s);
}
