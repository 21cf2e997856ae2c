/*
 * k8s_bridge/volbind.c - WaitForFirstConsumer claims of a placed gang
 * (see volbind.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "log.h"
#include "map.h"
#include "util.h"
#include "volbind.h"

/* Claims named in one report (the rest are counted) */
#define VB_NAMES_MAX	8
/* A gang's wait state is dropped when it was not held for this many
 * timeouts (the gang went: bound, deleted) */
#define VB_FORGET_TIMEOUTS	2

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
};

br_volbind *br_volbind_create(void)
{
	br_volbind *vb = br_xcalloc(1, sizeof(*vb));

	br_map_init(&vb->gangs, free);
	br_map_init(&vb->cycle, free);
	return vb;
}

void br_volbind_destroy(br_volbind *vb)
{
	if (!vb)
		return;
	br_map_free(&vb->gangs);
	br_map_free(&vb->cycle);
	free(vb);
}

/* "ns/name" into \p ns and \p name. */
static void split(const char *key, char *ns, size_t nn, char *name,
		  size_t n)
{
	const char *sl = strchr(key, '/');

	snprintf(ns, nn, "%.*s", sl ? (int)(sl - key) : 0, key);
	snprintf(name, n, "%s", sl ? sl + 1 : key);
}

/* The merge PATCH of claim \p claim's selected-node annotation. */
static br_req *select_req(const char *claim, const char *node)
{
	cJSON *j = cJSON_CreateObject(), *ann;
	char ns[254], name[254];

	split(claim, ns, sizeof(ns), name, sizeof(name));
	ann = cJSON_AddObjectToObject(cJSON_AddObjectToObject(j, "metadata"),
				      "annotations");
	cJSON_AddStringToObject(ann, BR_ANN_SELECTED_NODE, node);
	return br_sched_json_req("PATCH", br_xasprintf("/api/v1/namespaces/"
						   "%s/persistentvolumeclaims"
						   "/%s", ns, name),
				 "application/merge-patch+json", j);
}

/* The claims being waited on, and the PATCHes to send. */
typedef struct vbwait {
	unsigned n;		/* claims of the gang not bound */
	char names[VB_NAMES_MAX * 300];
	br_req **reqs;
	const char **rclaim, **rnode;
	size_t nreqs;
	const char *clash;	/* a claim an earlier gang of this cycle
				 * stamped with another node: nothing is
				 * stamped (the gang is pinned next cycle) */
	const char *clash_node;
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

/* The listed claims of \p d's members (stamping those without a node). */
static void gang_claims(const br_volbind *vb, const tg_k8s *k,
			const tg_topology *t, const tg_decision *d,
			vbwait *w)
{
	size_t nc = tg_k8s_nclaims(k), i;
	br_map where;
	unsigned m;

	br_map_init(&where, NULL);
	for (m = 0; m < tg_decision_nplacements(d); m++) {
		const tg_placement *pl = tg_decision_placement(d, m);

		br_map_put(&where, pl->pod,
			   (void *)tg_topology_node_name(t, pl->node));
	}
	w->reqs = br_xcalloc(nc ? nc : 1, sizeof(*w->reqs));
	w->rclaim = br_xcalloc(nc ? nc : 1, sizeof(*w->rclaim));
	w->rnode = br_xcalloc(nc ? nc : 1, sizeof(*w->rnode));
	for (i = 0; i < nc; i++) {
		const char *pod, *node, *c = tg_k8s_claim(k, i, &pod, &node);
		const char *want = br_map_get(&where, pod);
		size_t len = strlen(w->names);

		if (!want)
			continue;	/* not a member of this gang */
		if (w->n < VB_NAMES_MAX)
			snprintf(w->names + len, sizeof(w->names) - len,
				 "%s%s (node %s)", w->n ? ", " : "", c,
				 node ? node : want);
		w->n++;
		if (node || !to_stamp(vb, w, c, want))
			continue;	/* provisioning under way, or stamped */
		w->rclaim[w->nreqs] = c;
		w->rnode[w->nreqs] = want;
		w->reqs[w->nreqs++] = select_req(c, want);
	}
	br_map_free(&where);
}

/* Sends the PATCHes (none when the gang clashes with an earlier one on
 * a claim); logs each.  The claims stamped are this cycle's. */
static void stamp(br_volbind *vb, br_sched *s, const char *gang,
		  vbwait *w)
{
	char why[400];
	size_t i;

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

		if (r->done && r->status >= 200 && r->status < 300)
			br_log(BR_LOG_INFO, "claim given its node "
			       "(" BR_ANN_SELECTED_NODE "); the gang's "
			       "binding waits for it to be bound", "gang",
			       gang, "claim", w->rclaim[i], "node",
			       w->rnode[i], NULL);
		else
			br_log(BR_LOG_WARN, "cannot set "
			       BR_ANN_SELECTED_NODE " on a claim; retried "
			       "next cycle", "gang", gang, "claim",
			       w->rclaim[i], "error",
			       br_req_reason(r, why, sizeof(why)), NULL);
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
		split(pod, ns, sizeof(ns), name, sizeof(name));
		br_sched_event(s, "Warning", "FailedScheduling", "Scheduling",
			       msg, "Pod", ns, name, o->uid);
		reqs[nr++] = br_sched_status_req(ns, name, "SchedulerError",
						 msg, NULL);
	}
	if (nr && br_sched_leading(s))
		br_sched_run_batch(s, reqs, nr);
	for (m = 0; m < nr; m++)
		br_req_free(reqs[m]);
	free(reqs);
}

/* Drops the state of gangs no longer held. */
static void forget(br_volbind *vb, int64_t now_ms, int64_t timeout_s)
{
	char **dead = NULL;
	size_t n = 0, cap = 0, slot, i;
	br_map_ent *e;

	for (e = br_map_first(&vb->gangs, &slot); e;
	     e = br_map_next(&vb->gangs, &slot, e)) {
		const vbgang *g = e->val;

		if (now_ms - g->seen_ms <= VB_FORGET_TIMEOUTS * timeout_s *
		    1000)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			dead = br_xrealloc(dead, cap * sizeof(*dead));
		}
		dead[n++] = e->key;
	}
	for (i = 0; i < n; i++)
		br_map_del(&vb->gangs, dead[i]);
	free(dead);
}

void br_volbind_cycle(br_volbind *vb)
{
	br_map_free(&vb->cycle);
	br_map_init(&vb->cycle, free);
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

	forget(vb, now_ms, timeout_s);
	if (!tg_k8s_nclaims(k)) {
		br_map_del(&vb->gangs, gang);
		return BR_VOLBIND_BIND;
	}
	memset(&w, 0, sizeof(w));
	gang_claims(vb, k, t, d, &w);
	if (w.n) {
		stamp(vb, s, gang, &w);
		g = br_map_get(&vb->gangs, gang);
		if (!g) {
			g = br_xcalloc(1, sizeof(*g));
			g->since_ms = now_ms;
			br_map_put(&vb->gangs, gang, g);
		}
		g->seen_ms = now_ms;
		res = BR_VOLBIND_HELD;
		if (now_ms - g->since_ms > timeout_s * 1000) {
			char *msg = br_xasprintf(
				"binding volumes: %u claim%s not bound within "
				"%lld s of the gang's placement (binding."
				"volumeBindTimeoutSeconds): %s%s; the gang is "
				"retried", w.n, w.n > 1 ? "s" : "",
				(long long)timeout_s, w.names,
				w.n > VB_NAMES_MAX ? ", ..." : "");

			br_log(BR_LOG_WARN, "volume binding timed out; the "
			       "gang is retried", "gang", gang, "claims",
			       w.names, NULL);
			report(s, d, pods, msg);
			free(msg);
			g->since_ms = now_ms;
			res = BR_VOLBIND_RELEASED;
		}
	} else {
		br_map_del(&vb->gangs, gang);
	}
	for (i = 0; i < w.nreqs; i++)
		br_req_free(w.reqs[i]);
	free(w.reqs);
	free(w.rclaim);
	free(w.rnode);
	return res;
}
