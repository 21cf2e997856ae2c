/*
 * k8s_bridge/volbind.c - WaitForFirstConsumer claims of a placed gang
 * (see volbind.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "log.h"
#include "map.h"
#include "util.h"
#include "volbind.h"

/* Claims named in one report (the rest are counted), and the bytes they
 * can take: each "ns/name (node NODE)", names of at most 253 bytes, so
 * the bound is never reached */
#define VB_NAMES_MAX	8
#define VB_NAMES_BYTES	(VB_NAMES_MAX * 800)
/* A gang's wait state is dropped when it was not held for this many
 * timeouts (the gang went: bound, deleted) */
#define VB_FORGET_TIMEOUTS	2
/* A PATCH failing for a while (transient errors) is logged at most this
 * often (the others are counted: unlogged_before) */
#define VB_WARN_MS		10000

/* A claim this daemon stamped (the PATCH answered 2xx) */
typedef struct vbstamp {
	char *node;		/* the node stamped */
	char *rv;		/* the claim's resourceVersion the PATCH was
				 * sent against: while the cache still has
				 * it, the cache has not seen the stamp */
	int64_t seen_ms;	/* last listed */
} vbstamp;

static void stamp_free(void *p)
{
	vbstamp *st = p;

	if (st) {
		free(st->node);
		free(st->rv);
		free(st);
	}
}

typedef struct vbgang {
	int64_t since_ms;	/* waiting since (restarted by a report) */
	int64_t seen_ms;	/* last held */
} vbgang;

struct br_volbind {
	br_map gangs;		/* vbgang by gang name */
	br_map cycle;		/* claim -> the node a gang of this cycle
				 * stamped on it (one node a claim a
				 * cycle, across gangs: a claim two gangs
				 * share) */
	br_map stamps;		/* vbstamp by claim key */
	br_map bypod;		/* pod key -> index + 1 of its first listed
				 * claim (br_volbind_cycle) */
	const br_store *claims;	/* the claim cache (br_volbind_cycle) */
	int64_t warn_ms;	/* a failed PATCH last logged */
	unsigned nwarn;		/* failed PATCHes not logged since */
};

br_volbind *br_volbind_create(void)
{
	br_volbind *vb = br_xcalloc(1, sizeof(*vb));

	br_map_init(&vb->gangs, free);
	br_map_init(&vb->cycle, free);
	br_map_init(&vb->stamps, stamp_free);
	br_map_init(&vb->bypod, NULL);
	return vb;
}

void br_volbind_destroy(br_volbind *vb)
{
	if (!vb)
		return;
	br_map_free(&vb->gangs);
	br_map_free(&vb->cycle);
	br_map_free(&vb->stamps);
	br_map_free(&vb->bypod);
	free(vb);
}

static bool same_node(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/*
 * The merge PATCH of claim \p claim's selected-node annotation, on the
 * claim's resourceVersion \p rv (a conflict, 409, when the claim changed
 * since the cache read it, as kube-scheduler's Update).
 */
static br_req *select_req(const char *claim, const char *node,
			  const char *rv)
{
	cJSON *j = cJSON_CreateObject(), *ann, *md;
	char ns[254], name[254], *body, *path;
	br_req *r;

	br_split_key(claim, ns, sizeof(ns), name, sizeof(name));
	md = cJSON_AddObjectToObject(j, "metadata");
	ann = cJSON_AddObjectToObject(md, "annotations");
	body = md && ann &&
	       cJSON_AddStringToObject(md, "resourceVersion", rv) &&
	       cJSON_AddStringToObject(ann, BR_ANN_SELECTED_NODE, node) ?
	       cJSON_PrintUnformatted(j) : NULL;
	cJSON_Delete(j);
	if (!body)
		return NULL;	/* out of memory: nothing sent */
	path = br_xasprintf("/api/v1/namespaces/%s/persistentvolumeclaims/%s",
			    ns, name);
	r = br_req_create("PATCH", path);
	br_req_set_body(r, "application/merge-patch+json", body);
	cJSON_free(body);
	free(path);
	return r;
}

/* The claims being waited on, and the PATCHes to send. */
typedef struct vbwait {
	unsigned n;		/* claims of the gang not bound */
	br_map seen;		/* those claims (a claim two members share
				 * is counted once) */
	tg_buf names;		/* the first VB_NAMES_MAX of them */
	br_req **reqs;
	const char **rclaim, **rnode;
	char **rrv;		/* the resourceVersions sent (owned) */
	size_t nreqs;
	const char *clash;	/* a claim an earlier gang of this cycle
				 * stamped with another node: nothing is
				 * stamped (the gang is pinned next cycle) */
	const char *clash_node;
	const char *lost;	/* a claim stamped by this daemon that came
				 * back without that node (the provisioner
				 * removed it: it cannot provision there) */
	char lost_node[254];
	const char *fatal;	/* a claim whose PATCH failed for good */
	char fatal_why[400];
} vbwait;

/*
 * Whether unbound claim \p c wanted on \p want is to be stamped: not when
 * a member before it in the gang stamps it, nor when an earlier gang of
 * this cycle stamped it (on another node: w->clash).
 */
static bool to_stamp(const br_volbind *vb, vbwait *w, const char *c,
		     const char *want)
{
	const char *other = br_map_get(&vb->cycle, c);
	size_t j;

	if (other) {
		if (strcmp(other, want) != 0 && !w->clash) {
			w->clash = c;
			w->clash_node = other;
		}
		return false;
	}
	for (j = 0; j < w->nreqs && strcmp(w->rclaim[j], c); j++)
		;
	return j == w->nreqs;	/* else shared by two members: the first's */
}

/* Claim \p c (listed with \p node) of a member placed on \p want. */
static void one_claim(br_volbind *vb, const char *c, const char *node,
		      const char *want, int64_t now_ms, vbwait *w)
{
	vbstamp *st = br_map_get(&vb->stamps, c);
	const br_obj *co;

	if (br_map_get(&w->seen, c))
		return;		/* shared by two members: counted once */
	br_map_put(&w->seen, c, (void *)1);
	if (w->n < VB_NAMES_MAX)
		tg_buf_addf(&w->names, "%s%s (node %s)", w->n ? ", " : "", c,
			    node ? node : want);
	w->n++;
	if (st)
		st->seen_ms = now_ms;
	if (st && !same_node(node, st->node) && !w->lost) {
		/* the provisioner's reschedule: the gang is placed afresh
		 * (its stamp forgotten) */
		w->lost = c;
		snprintf(w->lost_node, sizeof(w->lost_node), "%s", st->node);
		br_map_del(&vb->stamps, c);
	}
	if (node || !to_stamp(vb, w, c, want))
		return;		/* provisioning under way, or stamped */
	co = vb->claims ? br_store_get(vb->claims, c) : NULL;
	if (!co)
		return;		/* not cached (any more): next cycle */
	w->reqs[w->nreqs] = select_req(c, want, co->rv);
	if (!w->reqs[w->nreqs]) {
		br_log(BR_LOG_ERROR, "out of memory building a claim's "
		       "PATCH; retried next cycle", "claim", c, NULL);
		return;
	}
	w->rclaim[w->nreqs] = c;
	w->rnode[w->nreqs] = want;
	/* a copy: the cached object may be replaced while the PATCH runs
	 * (the loop runs meanwhile, its own watch event among others) */
	w->rrv[w->nreqs++] = br_xstrdup(co->rv);
}

/* The first of pod \p pod's listed claims (vb->bypod), or nc. */
static size_t first_claim(const br_volbind *vb, size_t nc, const char *pod)
{
	uintptr_t i = (uintptr_t)br_map_get(&vb->bypod, pod);

	return i ? i - 1 : nc;
}

/*
 * The listed claims of \p d's members (stamping those without a node):
 * each member's from vb->bypod (a pod's claims are listed together).
 */
static void gang_claims(br_volbind *vb, const tg_k8s *k,
			const tg_topology *t, const tg_decision *d,
			int64_t now_ms, vbwait *w)
{
	size_t nc = tg_k8s_nclaims(k), total = 0, i;
	unsigned m, np = tg_decision_nplacements(d);
	const char *pod, *node, *c;

	for (m = 0; m < np; m++) {
		const char *mp = tg_decision_placement(d, m)->pod;

		for (i = first_claim(vb, nc, mp);
		     (c = tg_k8s_claim(k, i, &pod, &node)) &&
		     strcmp(pod, mp) == 0; i++)
			total++;
	}
	w->reqs = br_xcalloc(total + 1, sizeof(*w->reqs));
	w->rclaim = br_xcalloc(total + 1, sizeof(*w->rclaim));
	w->rnode = br_xcalloc(total + 1, sizeof(*w->rnode));
	w->rrv = br_xcalloc(total + 1, sizeof(*w->rrv));
	for (m = 0; total && m < np; m++) {
		const tg_placement *pl = tg_decision_placement(d, m);
		const char *want = tg_topology_node_name(t, pl->node);

		for (i = first_claim(vb, nc, pl->pod);
		     (c = tg_k8s_claim(k, i, &pod, &node)) &&
		     strcmp(pod, pl->pod) == 0; i++)
			one_claim(vb, c, node, want, now_ms, w);
	}
}

/*
 * PATCH \p i of \p w failed.  A status that no retry changes (a 4xx but
 * a conflict, 409, or a rate limit, 429: forbidden, invalid, not found)
 * ends the hold at once (w->fatal: reported); the others are retried
 * next cycle, logged at most once every VB_WARN_MS.
 */
static void stamp_failed(br_volbind *vb, const char *gang, vbwait *w,
			 size_t i, int64_t now_ms)
{
	const br_req *r = w->reqs[i];
	char why[400], n[24];

	br_req_reason(r, why, sizeof(why));
	br_map_del(&vb->cycle, w->rclaim[i]);
	if (r->done && !r->cancelled && r->status >= 400 &&
	    r->status < 500 && r->status != 409 && r->status != 429) {
		if (!w->fatal) {
			w->fatal = w->rclaim[i];
			snprintf(w->fatal_why, sizeof(w->fatal_why), "%s",
				 why);
		}
		return;
	}
	if (vb->warn_ms && now_ms - vb->warn_ms < VB_WARN_MS) {
		vb->nwarn++;
		return;
	}
	snprintf(n, sizeof(n), "%u", vb->nwarn);
	br_log(BR_LOG_WARN, "cannot set " BR_ANN_SELECTED_NODE " on a "
	       "claim; retried next cycle", "gang", gang, "claim",
	       w->rclaim[i], "error", why, "unlogged_before", n, NULL);
	vb->warn_ms = now_ms;
	vb->nwarn = 0;
}

/* Sends the PATCHes (none when the gang clashes with an earlier one on
 * a claim); logs each.  The claims stamped are this cycle's. */
static void stamp(br_volbind *vb, br_sched *s, const char *gang,
		  vbwait *w, int64_t now_ms)
{
	size_t i;

	if (w->lost)
		return;		/* the hold ends: placed afresh */
	if (w->clash) {
		br_log(BR_LOG_INFO, "claim given another node this cycle by "
		       "another gang; the gang is held, decided again on "
		       "that node", "gang", gang, "claim", w->clash, "node",
		       w->clash_node, NULL);
		return;
	}
	if (!w->nreqs || !br_sched_leading(s))
		return;
	for (i = 0; i < w->nreqs; i++)
		br_map_put(&vb->cycle, w->rclaim[i], br_xstrdup(w->rnode[i]));
	br_sched_run_batch(s, w->reqs, w->nreqs);
	for (i = 0; i < w->nreqs; i++) {
		const br_req *r = w->reqs[i];

		if (r->done && r->status >= 200 && r->status < 300) {
			vbstamp *st = br_xcalloc(1, sizeof(*st));

			st->node = br_xstrdup(w->rnode[i]);
			st->rv = br_xstrdup(w->rrv[i]);
			st->seen_ms = now_ms;
			br_map_put(&vb->stamps, w->rclaim[i], st);
			br_log(BR_LOG_INFO, "claim given its node "
			       "(" BR_ANN_SELECTED_NODE "); the gang's "
			       "binding waits for it to be bound", "gang",
			       gang, "claim", w->rclaim[i], "node",
			       w->rnode[i], NULL);
		} else {
			stamp_failed(vb, gang, w, i, now_ms);
		}
	}
}

/* Every member: PodScheduled=False (SchedulerError) and an event. */
static void report(br_sched *s, const tg_decision *d, const br_store *pods,
		   const char *msg)
{
	unsigned m, n = tg_decision_nplacements(d), nr = 0;
	br_req **reqs = br_xcalloc(n ? n : 1, sizeof(*reqs));
	char ns[254], name[254];

	for (m = 0; m < n; m++) {
		const char *pod = tg_decision_placement(d, m)->pod;
		const br_obj *o = br_store_get(pods, pod);

		if (!o)
			continue;
		br_split_key(pod, ns, sizeof(ns), name, sizeof(name));
		br_sched_event(s, "Warning", "FailedScheduling", "Scheduling",
			       msg, "Pod", ns, name, o->uid);
		/* a preemptor's nomination goes with the hold */
		reqs[nr++] = br_sched_status_req(ns, name, "SchedulerError",
						 msg, o->nominated ? "" : NULL);
	}
	if (nr && br_sched_leading(s))
		br_sched_run_batch(s, reqs, nr);
	for (m = 0; m < nr; m++)
		br_req_free(reqs[m]);
	free(reqs);
}

/* Drops the entries of \p m (a map of structs whose int64_t at \p off is
 * when they were last seen) not seen for VB_FORGET_TIMEOUTS timeouts:
 * gangs no longer held, claims no longer listed (bound, gone). */
static void forget(br_map *m, size_t off, int64_t now_ms, int64_t timeout_s)
{
	char **dead = NULL;
	size_t n = 0, cap = 0, slot, i;
	br_map_ent *e;

	for (e = br_map_first(m, &slot); e; e = br_map_next(m, &slot, e)) {
		int64_t seen;

		memcpy(&seen, (const char *)e->val + off, sizeof(seen));
		if (now_ms - seen <= VB_FORGET_TIMEOUTS * timeout_s * 1000)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			dead = br_xrealloc(dead, cap * sizeof(*dead));
		}
		dead[n++] = e->key;
	}
	for (i = 0; i < n; i++)
		br_map_del(m, dead[i]);
	free(dead);
}

/*
 * Held \p wait_ms: past \p timeout_s, or a claim stamped here that came
 * back without its node, the gang is reported and its hold ends
 * (RELEASED); else HELD.
 */
static br_volbind_res held(br_sched *s, const tg_decision *d,
			   const br_store *pods, const vbwait *w,
			   int64_t wait_ms, int64_t timeout_s)
{
	const char *gang = tg_decision_gang(d);
	char *msg;

	if (w->fatal) {
		msg = br_xasprintf("binding volumes: cannot set "
				   BR_ANN_SELECTED_NODE " on claim %s: %s; "
				   "the gang is retried", w->fatal,
				   w->fatal_why);
		br_log(BR_LOG_WARN, "cannot set " BR_ANN_SELECTED_NODE " on a "
		       "claim (not retryable); the gang is retried", "gang",
		       gang, "claim", w->fatal, "error", w->fatal_why, NULL);
	} else if (w->lost) {
		msg = br_xasprintf("binding volumes: claim %s no longer names "
				   "node %s (" BR_ANN_SELECTED_NODE " removed "
				   "or changed: its provisioner cannot "
				   "provision there); the gang is placed "
				   "afresh", w->lost, w->lost_node);
		br_log(BR_LOG_WARN, "claim's selected node removed; the gang "
		       "is placed afresh", "gang", gang, "claim", w->lost,
		       "node", w->lost_node, NULL);
	} else if (wait_ms > timeout_s * 1000) {
		msg = br_xasprintf("binding volumes: %u claim%s not bound "
				   "within %lld s of the gang's placement "
				   "(binding.volumeBindTimeoutSeconds): %s%s; "
				   "the gang is retried", w->n,
				   w->n > 1 ? "s" : "", (long long)timeout_s,
				   w->names.s ? w->names.s : "",
				   w->n > VB_NAMES_MAX ? ", ..." : "");
		br_log(BR_LOG_WARN, "volume binding timed out; the gang is "
		       "retried", "gang", gang, "claims",
		       w->names.s ? w->names.s : "", NULL);
	} else {
		return BR_VOLBIND_HELD;
	}
	report(s, d, pods, msg);
	free(msg);
	return BR_VOLBIND_RELEASED;
}

void br_volbind_ended(br_volbind *vb, const char *gang)
{
	br_map_del(&vb->gangs, gang);
}

void br_volbind_cycle(br_volbind *vb, const tg_k8s *k,
		      const br_store *claims)
{
	size_t i, nc = tg_k8s_nclaims(k);
	const char *pod;

	br_map_free(&vb->cycle);
	br_map_init(&vb->cycle, free);
	br_map_free(&vb->bypod);
	br_map_init(&vb->bypod, NULL);
	for (i = 0; i < nc; i++) {
		tg_k8s_claim(k, i, &pod, NULL);
		if (!br_map_get(&vb->bypod, pod))
			br_map_put(&vb->bypod, pod, (void *)(uintptr_t)(i + 1));
	}
	vb->claims = claims;
}

const char *br_volbind_presented(const br_volbind *vb, const br_obj *o)
{
	const vbstamp *st = br_map_get(&vb->stamps, o->key);

	return st && o->rv && strcmp(st->rv, o->rv) == 0 ? st->node : NULL;
}

br_volbind_res br_volbind_hold(br_volbind *vb, br_sched *s,
			       const tg_k8s *k, const tg_topology *t,
			       const tg_decision *d, const br_store *pods,
			       int64_t now_ms, int64_t timeout_s)
{
	const char *gang = tg_decision_gang(d);
	br_volbind_res res = BR_VOLBIND_BIND;
	vbwait w;
	vbgang *g;
	size_t i;

	forget(&vb->gangs, offsetof(vbgang, seen_ms), now_ms, timeout_s);
	forget(&vb->stamps, offsetof(vbstamp, seen_ms), now_ms, timeout_s);
	if (!tg_k8s_nclaims(k)) {
		br_map_del(&vb->gangs, gang);
		return BR_VOLBIND_BIND;
	}
	memset(&w, 0, sizeof(w));
	br_map_init(&w.seen, NULL);
	tg_buf_init(&w.names, VB_NAMES_BYTES);
	gang_claims(vb, k, t, d, now_ms, &w);
	if (w.n) {
		stamp(vb, s, gang, &w, now_ms);
		g = br_map_get(&vb->gangs, gang);
		if (!g) {
			g = br_xcalloc(1, sizeof(*g));
			br_map_put(&vb->gangs, gang, g);
		}
		/* a new hold (or one interrupted: br_volbind_ended()):
		 * its wait starts now */
		if (!g->seen_ms)
			g->since_ms = now_ms;
		g->seen_ms = now_ms;
		res = held(s, d, pods, &w, now_ms - g->since_ms, timeout_s);
		if (res == BR_VOLBIND_RELEASED)
			g->since_ms = now_ms;
	} else {
		br_map_del(&vb->gangs, gang);
	}
	for (i = 0; i < w.nreqs; i++) {
		br_req_free(w.reqs[i]);
		free(w.rrv[i]);
	}
	free(w.reqs);
	free(w.rclaim);
	free(w.rnode);
	free(w.rrv);
	br_map_free(&w.seen);
	tg_buf_free(&w.names);
	return res;
}
