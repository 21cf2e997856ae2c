/*
 * k8s_bridge/leader.c - Lease-based leader election.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leader.h"
#include "log.h"

struct br_leader {
	br_http *h;
	const br_config *cfg;
	void (*on_change)(void *, bool);
	void *ud;
	bool leading;
	int64_t renewed_ms;	/* last successful renewal, when sent */
	int64_t next_ms;
	br_req *req;		/* in flight */
	int64_t sent_ms;
	/* the record last observed */
	char *holder;
	char *obs_renew;	/* renewTime text */
	char *obs_rv;
	int64_t observed_ms;	/* local time the record last changed */
	int64_t obs_duration_s;
	/* what a PUT keeps */
	char *acquire;
	int64_t transitions;
	uint64_t ntransitions;	/* times this replica became leader */
	char *path;		/* .../leases/NAME */
	char *cpath;		/* .../leases */
};

static void set(char **dst, const char *v)
{
	free(*dst);
	*dst = v ? br_xstrdup(v) : NULL;
}

br_leader *br_leader_create(br_http *h, const br_config *cfg,
			    void (*on_change)(void *ud, bool leading),
			    void *ud)
{
	br_leader *l = br_xcalloc(1, sizeof(*l));

	l->h = h;
	l->cfg = cfg;
	l->on_change = on_change;
	l->ud = ud;
	l->cpath = br_xasprintf("/apis/coordination.k8s.io/v1/namespaces/%s/"
				"leases", cfg->lease_namespace);
	l->path = br_xasprintf("%s/%s", l->cpath, cfg->lease_name);
	l->holder = br_xstrdup("");
	return l;
}

void br_leader_destroy(br_leader *l)
{
	if (!l)
		return;
	if (l->req) {
		br_req *r = l->req;

		l->req = NULL;
		r->ud = NULL;
		br_http_cancel(l->h, r);
	}
	free(l->holder);
	free(l->obs_renew);
	free(l->obs_rv);
	free(l->acquire);
	free(l->path);
	free(l->cpath);
	free(l);
}

static void set_leading(br_leader *l, bool on, const char *why)
{
	if (l->leading == on)
		return;
	l->leading = on;
	if (on)
		l->ntransitions++;
	br_log(on ? BR_LOG_INFO : BR_LOG_WARN,
	       on ? "became leader" : "stopped leading", "identity",
	       l->cfg->identity, "lease", l->path, "reason", why, NULL);
	if (l->on_change)
		l->on_change(l->ud, on);
}

bool br_leader_leading(br_leader *l, int64_t now_ms)
{
	if (!l->cfg->leader_elect)
		return true;
	if (l->leading &&
	    now_ms - l->renewed_ms > (int64_t)(l->cfg->renew_deadline_s *
						1000))
		set_leading(l, false, "no renewal within the renew deadline");
	return l->leading;
}

const char *br_leader_holder(const br_leader *l)
{
	return l->holder;
}

uint64_t br_leader_transitions(const br_leader *l)
{
	return l->ntransitions;
}

static char *lease_body(br_leader *l, const char *holder, int64_t dur,
			const char *acquire, const char *renew, int64_t trans,
			const char *rv)
{
	cJSON *j = cJSON_CreateObject(), *md, *spec;
	char *s;

	cJSON_AddStringToObject(j, "apiVersion", "coordination.k8s.io/v1");
	cJSON_AddStringToObject(j, "kind", "Lease");
	md = cJSON_AddObjectToObject(j, "metadata");
	cJSON_AddStringToObject(md, "name", l->cfg->lease_name);
	cJSON_AddStringToObject(md, "namespace", l->cfg->lease_namespace);
	if (rv)
		cJSON_AddStringToObject(md, "resourceVersion", rv);
	spec = cJSON_AddObjectToObject(j, "spec");
	cJSON_AddStringToObject(spec, "holderIdentity", holder);
	cJSON_AddNumberToObject(spec, "leaseDurationSeconds", (double)dur);
	if (acquire)
		cJSON_AddStringToObject(spec, "acquireTime", acquire);
	cJSON_AddStringToObject(spec, "renewTime", renew);
	cJSON_AddNumberToObject(spec, "leaseTransitions", (double)trans);
	s = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	if (!s)
		abort();
	return s;
}

static int64_t duration_s(const br_leader *l)
{
	return (int64_t)ceil(l->cfg->lease_duration_s);
}

static void on_write_done(br_req *r, void *ud);

/* A Lease request: outside the client's rate limit and done at once on a
 * 429 (kube-scheduler's leader election has a client of its own; the
 * retry period is the Lease's own timing). */
static br_req *lease_req(const char *method, const char *path)
{
	br_req *r = br_req_create(method, path);

	r->limiter = BR_RL_NONE;
	r->no_retry_after = true;
	return r;
}

static void lease_send(br_leader *l, const char *method, const char *path,
		 char *body)
{
	br_req *r = lease_req(method, path);

	br_req_set_body(r, "application/json", body);
	free(body);
	r->timeout_ms = (long)BR_MIN(l->cfg->renew_deadline_s * 1000, 5000);
	l->req = r;
	l->sent_ms = br_now_ms();
	if (br_http_submit(l->h, r, on_write_done, NULL, l) != 0)
		l->req = NULL;
}

static void on_write_done(br_req *r, void *ud)
{
	br_leader *l = ud;
	char why[300];

	if (!l || r->cancelled)
		return;
	l->req = NULL;
	if (r->status == 200 || r->status == 201) {
		cJSON *j = cJSON_ParseWithLength(r->resp.s ? r->resp.s : "",
						 r->resp.len);

		l->renewed_ms = l->sent_ms;
		set(&l->holder, l->cfg->identity);
		set(&l->obs_rv, br_jpath_str(j, "metadata.resourceVersion"));
		set(&l->obs_renew, br_jpath_str(j, "spec.renewTime"));
		set(&l->acquire, br_jpath_str(j, "spec.acquireTime"));
		l->observed_ms = l->sent_ms;
		cJSON_Delete(j);
		set_leading(l, true, r->status == 201 ? "created the lease" :
			    "acquired or renewed");
		return;
	}
	if (r->status == 409) {
		br_log(BR_LOG_DEBUG, "lease write lost a race", "error",
		       br_req_reason(r, why, sizeof(why)), NULL);
		/* the record changed under us: someone else holds it */
		if (l->leading)
			set_leading(l, false, "lease taken by another replica");
		return;
	}
	br_log(BR_LOG_WARN, "lease write failed", "error",
	       br_req_reason(r, why, sizeof(why)), NULL);
}

static void on_get_done(br_req *r, void *ud)
{
	br_leader *l = ud;
	cJSON *j;
	const char *holder, *renew, *rv, *acq;
	const cJSON *dur, *tr;
	int64_t now = br_now_ms(), d;
	char ts[40], why[300];

	if (!l || r->cancelled)
		return;
	l->req = NULL;
	br_rfc3339(ts, sizeof(ts), br_wall_us(), true);
	if (r->status == 404) {
		lease_send(l, "POST", l->cpath,
		     lease_body(l, l->cfg->identity, duration_s(l), ts, ts, 0,
				NULL));
		return;
	}
	if (r->status != 200) {
		br_log(BR_LOG_WARN, "cannot read the lease", "error",
		       br_req_reason(r, why, sizeof(why)), NULL);
		return;
	}
	j = cJSON_ParseWithLength(r->resp.s ? r->resp.s : "", r->resp.len);
	holder = br_jpath_str(j, "spec.holderIdentity");
	renew = br_jpath_str(j, "spec.renewTime");
	rv = br_jpath_str(j, "metadata.resourceVersion");
	acq = br_jpath_str(j, "spec.acquireTime");
	dur = br_jpath(j, "spec.leaseDurationSeconds");
	tr = br_jpath(j, "spec.leaseTransitions");
	holder = holder ? holder : "";
	if (strcmp(holder, l->holder) != 0 || !l->obs_renew || !renew ||
	    strcmp(renew, l->obs_renew) != 0 || !l->obs_rv || !rv ||
	    strcmp(rv, l->obs_rv) != 0) {
		l->observed_ms = now;
		if (strcmp(holder, l->holder) != 0)
			br_log(BR_LOG_INFO, "lease holder", "holder", holder,
			       NULL);
	}
	set(&l->holder, holder);
	set(&l->obs_renew, renew);
	set(&l->obs_rv, rv);
	l->obs_duration_s = cJSON_IsNumber(dur) ? (int64_t)dur->valuedouble :
			    duration_s(l);
	l->transitions = cJSON_IsNumber(tr) ? (int64_t)tr->valuedouble : 0;
	if (*holder && strcmp(holder, l->cfg->identity) != 0 &&
	    now < l->observed_ms + l->obs_duration_s * 1000) {
		/* held by another replica and not expired */
		if (l->leading)
			set_leading(l, false, "lease held by another replica");
		cJSON_Delete(j);
		return;
	}
	if (strcmp(holder, l->cfg->identity) == 0) {
		d = l->transitions;
	} else {
		d = l->transitions + 1;
		acq = ts;
	}
	lease_send(l, "PUT", l->path,
	     lease_body(l, l->cfg->identity, duration_s(l), acq ? acq : ts, ts,
			d, rv));
	cJSON_Delete(j);
}

void br_leader_tick(br_leader *l, int64_t now_ms)
{
	br_req *r;

	if (!l->cfg->leader_elect) {
		if (!l->leading)
			set_leading(l, true, "leader election disabled");
		return;
	}
	br_leader_leading(l, now_ms);
	if (l->req || now_ms < l->next_ms)
		return;
	l->next_ms = now_ms + (int64_t)(l->cfg->retry_period_s * 1000);
	r = lease_req("GET", l->path);
	r->timeout_ms = (long)BR_MIN(l->cfg->renew_deadline_s * 1000, 5000);
	l->req = r;
	l->sent_ms = now_ms;
	if (br_http_submit(l->h, r, on_get_done, NULL, l) != 0)
		l->req = NULL;
}

void br_leader_release(br_leader *l)
{
	br_req *r;
	char ts[40];
	char *body;

	if (!l->cfg->leader_elect || !l->leading)
		return;
	if (l->req) {
		br_req *old = l->req;

		l->req = NULL;
		old->ud = NULL;
		br_http_cancel(l->h, old);
	}
	br_rfc3339(ts, sizeof(ts), br_wall_us(), true);
	body = lease_body(l, "", 1, l->acquire, ts, l->transitions,
			  l->obs_rv);
	r = lease_req("PUT", l->path);
	br_req_set_body(r, "application/json", body);
	free(body);
	r->timeout_ms = 2000;
	if (br_http_submit(l->h, r, NULL, NULL, NULL) == 0)
		br_http_wait(l->h, &r, 1);
	if (r->status == 200)
		br_log(BR_LOG_INFO, "lease released", "lease", l->path, NULL);
	br_req_free(r);
	set_leading(l, false, "shutting down");
}
