/*
 * k8s_bridge/informer.c - list + watch caches.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "informer.h"
#include "log.h"

#define INF_BACKOFF_MAX_MS	30000
#define INF_SHORT_WATCH_MS	1000
#define INF_RELIST_MIN_MS	1000	/* a re-list after a watch error */

enum { ACT_NONE = 0, ACT_LIST, ACT_WATCH };

struct br_informer {
	br_http *h;
	const br_config *cfg;
	const br_resdef *def;
	br_informer_fn fn;
	void *ud;
	unsigned vi;		/* index into def->versions */
	char api[160];		/* "group/version" */
	br_store store;
	br_store next;		/* the list being read */
	bool listing_next;
	char *rv;		/* last version seen */
	char *list_rv;
	char *cont;
	bool synced, installed, relisting, expired;
	bool relist;		/* the watch failed: list again (backoff) */
	unsigned relist_failures;	/* in a row, for that backoff */
	uint64_t rng;		/* watch timeout jitter */
	int action;		/* what is due at due_ms */
	int64_t due_ms;
	unsigned failures;
	br_req *req;		/* in flight */
	br_jframe frame;
	uint64_t watch_events;
	br_informer_stats st;
};

static void start_list(br_informer *inf);
static void start_watch(br_informer *inf);

static const char *res_name(const br_informer *inf)
{
	return inf->def->resource;
}

static void set_api(br_informer *inf)
{
	const char *v = inf->def->versions[inf->vi];

	if (*inf->def->group)
		snprintf(inf->api, sizeof(inf->api), "%s/%s", inf->def->group,
			 v);
	else
		snprintf(inf->api, sizeof(inf->api), "%s", v);
}

br_informer *br_informer_create(br_http *h, const br_config *cfg,
				const br_resdef *def, br_informer_fn fn,
				void *ud)
{
	br_informer *inf = br_xcalloc(1, sizeof(*inf));

	inf->h = h;
	inf->cfg = cfg;
	inf->def = def;
	inf->fn = fn;
	inf->ud = ud;
	inf->installed = true;
	inf->rng = (uint64_t)br_wall_us() ^ ((uint64_t)(uintptr_t)inf << 16) ^
		   0x9e3779b97f4a7c15ull;
	inf->action = ACT_LIST;
	inf->due_ms = 0;
	set_api(inf);
	br_store_init(&inf->store);
	br_store_init(&inf->next);
	br_jframe_init(&inf->frame, BR_MAX_OBJECT);
	return inf;
}

void br_informer_destroy(br_informer *inf)
{
	if (!inf)
		return;
	if (inf->req) {
		br_req *r = inf->req;

		inf->req = NULL;
		r->ud = NULL;	/* the callbacks see a dead informer */
		br_http_cancel(inf->h, r);
	}
	br_store_free(&inf->store);
	br_store_free(&inf->next);
	br_jframe_free(&inf->frame);
	free(inf->rv);
	free(inf->list_rv);
	free(inf->cont);
	free(inf);
}

const br_resdef *br_informer_def(const br_informer *inf)
{
	return inf->def;
}

const br_store *br_informer_store(const br_informer *inf)
{
	return &inf->store;
}

br_store *br_informer_store_mut(br_informer *inf)
{
	return &inf->store;
}

bool br_informer_synced(const br_informer *inf)
{
	return inf->synced;
}

bool br_informer_installed(const br_informer *inf)
{
	return inf->installed;
}

const char *br_informer_api_version(const br_informer *inf)
{
	return inf->api;
}

const br_informer_stats *br_informer_get_stats(const br_informer *inf)
{
	return &inf->st;
}

static void set_rv(char **dst, const char *rv)
{
	free(*dst);
	*dst = rv ? br_xstrdup(rv) : NULL;
}

static void schedule(br_informer *inf, int action, int64_t delay_ms)
{
	inf->action = action;
	inf->due_ms = br_now_ms() + delay_ms;
}

static int64_t backoff(br_informer *inf)
{
	int64_t d = 1000;
	unsigned i;

	inf->failures++;
	for (i = 1; i < inf->failures && d < INF_BACKOFF_MAX_MS; i++)
		d *= 2;
	return BR_MIN(d, INF_BACKOFF_MAX_MS);
}

static char *base_path(const br_informer *inf)
{
	if (*inf->def->group)
		return br_xasprintf("/apis/%s/%s/%s", inf->def->group,
				    inf->def->versions[inf->vi],
				    inf->def->resource);
	return br_xasprintf("/api/%s/%s", inf->def->versions[inf->vi],
			    inf->def->resource);
}

/* ---- applying changes -------------------------------------------------- */

static void emit(br_informer *inf, int type, const br_obj *old,
		 const br_obj *cur)
{
	inf->st.events++;
	if (inf->fn)
		inf->fn(inf->ud, inf, type, old, cur);
}

static void apply_put(br_informer *inf, br_obj *o)
{
	br_obj *old;

	if (inf->def->is_pod && o->terminal) {
		/* a terminal pod holds nothing: as if deleted */
		old = br_store_take(&inf->store, o->key);
		if (old)
			emit(inf, BR_EV_DELETED, old, NULL);
		br_obj_free(old);
		br_obj_free(o);
		return;
	}
	old = br_store_put(&inf->store, o);
	emit(inf, old ? BR_EV_MODIFIED : BR_EV_ADDED, old, o);
	br_obj_free(old);
}

static void apply_delete(br_informer *inf, const char *key)
{
	br_obj *old = br_store_take(&inf->store, key);

	if (old)
		emit(inf, BR_EV_DELETED, old, NULL);
	br_obj_free(old);
}

/* Forgets everything (a CRD gone): deletions for every object. */
static void clear_store(br_informer *inf)
{
	while (inf->store.n) {
		br_obj *o = br_store_take(&inf->store,
					  inf->store.all[inf->store.n - 1]->key);

		emit(inf, BR_EV_DELETED, o, NULL);
		br_obj_free(o);
	}
}

/* The list is complete: the differences become events. */
static void swap_in_list(br_informer *inf)
{
	size_t i;

	for (i = inf->store.n; i > 0; i--) {
		br_obj *o = inf->store.all[i - 1];

		if (!br_store_get(&inf->next, o->key)) {
			o = br_store_take(&inf->store, o->key);
			emit(inf, BR_EV_DELETED, o, NULL);
			br_obj_free(o);
		}
	}
	while (inf->next.n) {
		br_obj *o = br_store_take(&inf->next,
					  inf->next.all[inf->next.n - 1]->key);
		br_obj *old = br_store_get(&inf->store, o->key);

		if (old && strcmp(old->rv, o->rv) == 0 &&
		    old->len == o->len && memcmp(old->text, o->text,
						  o->len) == 0) {
			br_obj_free(o);
			continue;
		}
		apply_put(inf, o);
	}
	br_store_free(&inf->next);
	br_store_init(&inf->next);
}

/* ---- list -------------------------------------------------------------- */

static void went_absent(br_informer *inf)
{
	if (inf->installed || !inf->synced)
		br_log(BR_LOG_INFO, "resource not installed; will probe again",
		       "resource", res_name(inf), "api", inf->api, NULL);
	inf->installed = false;
	inf->synced = true;
	inf->vi = 0;
	set_api(inf);
	clear_store(inf);
	br_store_free(&inf->next);
	br_store_init(&inf->next);
	set_rv(&inf->rv, NULL);
	schedule(inf, ACT_LIST, inf->cfg->reprobe_s * 1000);
}

static void list_failed(br_informer *inf, const br_req *r)
{
	char why[400];
	int64_t d = backoff(inf);
	char ds[32];

	inf->st.errors++;
	snprintf(ds, sizeof(ds), "%lld", (long long)d);
	br_log(BR_LOG_WARN, "list failed; retrying", "resource",
	       res_name(inf), "error", br_req_reason(r, why, sizeof(why)),
	       "retry_ms", ds, NULL);
	br_store_free(&inf->next);
	br_store_init(&inf->next);
	set_rv(&inf->cont, NULL);
	schedule(inf, ACT_LIST, d);
}

static void on_list_done(br_req *r, void *ud)
{
	br_informer *inf = ud;
	cJSON *j, *items, *it;
	const char *rv, *cont;
	char reason[64];

	if (!inf || r->cancelled)
		return;
	inf->req = NULL;
	if (r->status == 404 && inf->def->optional) {
		if (inf->def->versions[inf->vi + 1]) {
			inf->vi++;
			set_api(inf);
			start_list(inf);
			return;
		}
		went_absent(inf);
		return;
	}
	if (r->status == 410 && inf->cont) {
		br_log(BR_LOG_INFO, "continue token expired; listing again",
		       "resource", res_name(inf), "reason",
		       br_req_status_reason(r, reason, sizeof(reason)), NULL);
		br_store_free(&inf->next);
		br_store_init(&inf->next);
		set_rv(&inf->cont, NULL);
		start_list(inf);
		return;
	}
	if (r->status != 200) {
		list_failed(inf, r);
		return;
	}
	j = cJSON_ParseWithLength(r->resp.s ? r->resp.s : "", r->resp.len);
	items = j ? cJSON_GetObjectItemCaseSensitive(j, "items") : NULL;
	if (!j || (!cJSON_IsArray(items) && !cJSON_IsNull(items) && items)) {
		snprintf(r->error, sizeof(r->error), "malformed list body");
		r->status = 0;
		cJSON_Delete(j);
		list_failed(inf, r);
		return;
	}
	rv = br_jpath_str(j, "metadata.resourceVersion");
	cont = br_jpath_str(j, "metadata.continue");
	if (!inf->cont)
		set_rv(&inf->list_rv, rv);
	cJSON_ArrayForEach(it, items) {
		br_obj *o = br_obj_from_json(it, inf->def->kind, inf->api,
					     inf->def->is_pod);

		if (!o)
			continue;
		if (inf->def->is_pod && o->terminal) {
			br_obj_free(o);
			continue;
		}
		br_obj_free(br_store_put(&inf->next, o));
	}
	if (cont && *cont) {
		set_rv(&inf->cont, cont);
		cJSON_Delete(j);
		start_list(inf);
		return;
	}
	cJSON_Delete(j);
	set_rv(&inf->cont, NULL);
	if (!inf->installed)
		br_log(BR_LOG_INFO, "resource installed", "resource",
		       res_name(inf), "api", inf->api, NULL);
	inf->installed = true;
	swap_in_list(inf);
	set_rv(&inf->rv, inf->list_rv);
	inf->st.lists++;
	if (inf->relisting)
		inf->st.relists++;
	inf->relisting = false;
	inf->failures = 0;
	if (!inf->synced) {
		char n[32];

		snprintf(n, sizeof(n), "%zu", inf->store.n);
		br_log(BR_LOG_INFO, "cache synced", "resource", res_name(inf),
		       "api", inf->api, "objects", n, "rv",
		       inf->rv ? inf->rv : "", NULL);
	}
	inf->synced = true;
	start_watch(inf);
}

static void start_list(br_informer *inf)
{
	char *base = base_path(inf), *sel = NULL, *cont = NULL, *path;
	br_req *r;

	if (inf->def->field_selector)
		sel = br_urlencode(inf->def->field_selector);
	if (inf->cont)
		cont = br_urlencode(inf->cont);
	path = br_xasprintf("%s?limit=%u%s%s%s%s", base, inf->cfg->page_size,
			    cont ? "&continue=" : "", cont ? cont : "",
			    sel ? "&fieldSelector=" : "", sel ? sel : "");
	r = br_req_create("GET", path);
	r->timeout_ms = 120000;
	free(base);
	free(sel);
	free(cont);
	free(path);
	inf->action = ACT_NONE;
	inf->req = r;
	if (br_http_submit(inf->h, r, on_list_done, NULL, inf) != 0)
		inf->req = NULL;	/* on_list_done ran already */
}

/* ---- watch ------------------------------------------------------------- */

static int on_event(void *ud, const char *text, size_t len)
{
	br_informer *inf = ud;
	cJSON *ev = cJSON_ParseWithLength(text, len);
	const char *type = br_jstr(ev, "type");
	cJSON *obj = ev ? cJSON_GetObjectItemCaseSensitive(ev, "object") : NULL;
	char *rv = NULL;
	int ret = 0;

	if (!type || !cJSON_IsObject(obj)) {
		/* client-go: an event that does not decode ends the watch
		 * with an error, and the reflector lists again */
		br_log(BR_LOG_WARN, "malformed watch event; listing again",
		       "resource", res_name(inf), NULL);
		inf->relist = true;
		cJSON_Delete(ev);
		return 1;
	}
	if (strcmp(type, "ERROR") != 0)
		inf->watch_events++;	/* errors do not make a watch good */
	if (strcmp(type, "ERROR") == 0) {
		const cJSON *code = br_jget(obj, "code");
		const char *msg = br_jstr(obj, "message");

		if (cJSON_IsNumber(code) && code->valueint == 410) {
			inf->expired = true;
			br_log(BR_LOG_INFO, "watch expired; listing again",
			       "resource", res_name(inf), "reason",
			       br_jstr(obj, "reason"), "message", msg, NULL);
		} else {
			/* any other ERROR (a 504 "Too large resource
			 * version": this server's cache is behind the
			 * version) ends the watch; client-go lists again
			 * rather than watch from the same version */
			char c[16];

			snprintf(c, sizeof(c), "%d", cJSON_IsNumber(code) ?
				 code->valueint : 0);
			inf->relist = true;
			br_log(BR_LOG_WARN, "watch error event; listing again",
			       "resource", res_name(inf), "code", c,
			       "reason", br_jstr(obj, "reason"),
			       "too_large_rv", br_status_too_large_rv(obj) ?
			       "true" : "false", "message", msg, NULL);
		}
		cJSON_Delete(ev);
		return 1;
	}
	/* copied: making the object moves fields out of the tree */
	if (br_jpath_str(obj, "metadata.resourceVersion"))
		rv = br_xstrdup(br_jpath_str(obj, "metadata.resourceVersion"));
	if (strcmp(type, "BOOKMARK") == 0) {
		if (rv && *rv)
			set_rv(&inf->rv, rv);
		free(rv);
		cJSON_Delete(ev);
		return 0;
	}
	if (strcmp(type, "ADDED") == 0 || strcmp(type, "MODIFIED") == 0) {
		br_obj *o = br_obj_from_json(obj, inf->def->kind, inf->api,
					     inf->def->is_pod);

		if (o)
			apply_put(inf, o);
	} else if (strcmp(type, "DELETED") == 0) {
		const char *ns = br_jpath_str(obj, "metadata.namespace");
		const char *name = br_jpath_str(obj, "metadata.name");

		if (name) {
			char *key;

			if (inf->def->is_pod && (!ns || !*ns))
				ns = "default";
			key = ns && *ns ? br_xasprintf("%s/%s", ns, name) :
					  br_xstrdup(name);
			apply_delete(inf, key);
			free(key);
		}
	} else {
		br_log(BR_LOG_WARN, "unknown watch event type", "resource",
		       res_name(inf), "type", type, NULL);
	}
	if (rv && *rv)
		set_rv(&inf->rv, rv);
	free(rv);
	cJSON_Delete(ev);
	return ret;
}

static int on_watch_data(br_req *r, const char *p, size_t n, void *ud)
{
	br_informer *inf = ud;
	int rc;

	BR_UNUSED(r);
	if (!inf)
		return 1;
	rc = br_jframe_feed(&inf->frame, p, n, on_event, inf);
	if (rc < 0) {
		br_log(BR_LOG_WARN, "bad watch stream; listing again",
		       "resource", res_name(inf), "error", inf->frame.err,
		       NULL);
		inf->relist = true;
	}
	return rc;
}

/*
 * The watch cannot go on from its version: a 504 "Too large resource
 * version" (as a status or an ERROR event: the server's cache is behind
 * the version, e.g. another API server of the cluster), another ERROR
 * event, or an event that does not decode.  client-go's reflector lists
 * again in these cases (never re-watches from the same version); the
 * re-list backs off (INF_RELIST_MIN_MS doubling to INF_BACKOFF_MAX_MS)
 * while the failures go on.  True when a re-list was scheduled.
 */
static bool relist_wanted(br_informer *inf, const br_req *r)
{
	int64_t d = INF_RELIST_MIN_MS;
	unsigned i;
	char ds[32], why[400];

	if (!inf->relist && r->status != 504)
		return false;
	if (!inf->relist)
		br_log(BR_LOG_WARN, "watch refused; listing again", "resource",
		       res_name(inf), "error",
		       br_req_reason(r, why, sizeof(why)), NULL);
	inf->relist = false;
	if (inf->watch_events > 0)
		inf->relist_failures = 0;	/* it had been working */
	for (i = 0; i < inf->relist_failures && d < INF_BACKOFF_MAX_MS; i++)
		d *= 2;
	d = BR_MIN(d, INF_BACKOFF_MAX_MS);
	inf->relist_failures++;
	inf->relisting = true;
	inf->st.errors++;
	set_rv(&inf->cont, NULL);
	snprintf(ds, sizeof(ds), "%lld", (long long)d);
	br_log(BR_LOG_INFO, "re-list scheduled", "resource", res_name(inf),
	       "in_ms", ds, NULL);
	schedule(inf, ACT_LIST, d);
	return true;
}

static void on_watch_done(br_req *r, void *ud)
{
	br_informer *inf = ud;
	char why[400], ds[32];
	int64_t d;

	if (!inf || r->cancelled)
		return;
	inf->req = NULL;
	if (br_jframe_partial(&inf->frame))
		br_log(BR_LOG_INFO, "watch stream cut inside an event; the "
		       "partial event is dropped", "resource", res_name(inf),
		       NULL);
	br_jframe_reset(&inf->frame);
	if (inf->expired || r->status == 410) {
		inf->expired = false;
		inf->relisting = true;
		set_rv(&inf->cont, NULL);
		start_list(inf);
		return;
	}
	if (r->status == 404 && inf->def->optional) {
		went_absent(inf);
		return;
	}
	inf->st.watch_restarts++;
	if (relist_wanted(inf, r))
		return;
	if ((r->status == 200 || (r->status == 0 && r->streaming)) &&
	    (inf->watch_events > 0 || r->elapsed_ms >= INF_SHORT_WATCH_MS)) {
		/* a normal end, or a dropped stream: from the last version */
		inf->failures = 0;
		inf->relist_failures = 0;
		if (r->status == 0 && r->timed_out && inf->cfg->watch_idle_s &&
		    r->elapsed_ms < r->timeout_ms)
			br_log(BR_LOG_WARN, "watch silent too long (half-open "
			       "connection?); watching again", "resource",
			       res_name(inf), "error", r->error, "rv",
			       inf->rv ? inf->rv : "", NULL);
		else if (r->status == 0)
			br_log(BR_LOG_INFO, "watch stream dropped; watching "
			       "again", "resource", res_name(inf), "error",
			       r->error, "rv", inf->rv ? inf->rv : "", NULL);
		start_watch(inf);
		return;
	}
	inf->st.errors++;
	d = backoff(inf);
	snprintf(ds, sizeof(ds), "%lld", (long long)d);
	br_log(BR_LOG_WARN, "watch failed; watching again", "resource",
	       res_name(inf), "error", br_req_reason(r, why, sizeof(why)),
	       "retry_ms", ds, NULL);
	schedule(inf, ACT_WATCH, d);
}

/*
 * timeoutSeconds of a watch: watchTimeoutSeconds x [1, 2), as client-go's
 * reflector (minWatchTimeout x (1 + rand)), so that the dozen watches of
 * the daemon do not end (and restart) together.
 */
static int64_t jittered_timeout(br_informer *inf)
{
	int64_t t = inf->cfg->watch_timeout_s;

	inf->rng ^= inf->rng << 13;	/* xorshift64 */
	inf->rng ^= inf->rng >> 7;
	inf->rng ^= inf->rng << 17;
	return t + (int64_t)((inf->rng >> 11) % (uint64_t)t);
}

static void start_watch(br_informer *inf)
{
	char *base = base_path(inf), *sel = NULL, *rv, *path;
	int64_t t = jittered_timeout(inf);
	br_req *r;

	if (!inf->rv || !*inf->rv) {
		/* nothing to watch from: list again */
		free(base);
		inf->relisting = true;
		start_list(inf);
		return;
	}
	if (inf->def->field_selector)
		sel = br_urlencode(inf->def->field_selector);
	rv = br_urlencode(inf->rv);
	path = br_xasprintf("%s?watch=1&resourceVersion=%s"
			    "&allowWatchBookmarks=true&timeoutSeconds=%lld%s%s",
			    base, rv, (long long)t,
			    sel ? "&fieldSelector=" : "", sel ? sel : "");
	r = br_req_create("GET", path);
	r->timeout_ms = (long)(t + 60) * 1000;
	r->low_speed_s = (long)inf->cfg->watch_idle_s;
	free(base);
	free(sel);
	free(rv);
	free(path);
	br_jframe_reset(&inf->frame);
	inf->watch_events = 0;
	inf->action = ACT_NONE;
	inf->req = r;
	if (br_http_submit(inf->h, r, on_watch_done, on_watch_data, inf) != 0)
		inf->req = NULL;
}

void br_informer_tick(br_informer *inf, int64_t now_ms)
{
	int a = inf->action;

	if (inf->req || a == ACT_NONE || now_ms < inf->due_ms)
		return;
	inf->action = ACT_NONE;
	if (a == ACT_LIST)
		start_list(inf);
	else
		start_watch(inf);
}
