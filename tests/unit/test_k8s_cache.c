/*
 * tests/unit/test_k8s_cache.c - tg_k8s_cache against full builds.
 *
 * A random cluster (nodes in spines and blocks, PriorityClasses, a
 * PodGroup per gang, bound pods of every kind the loader reads: gang
 * members, anti-affinity, extended resources, init containers, ended,
 * terminating, of a missing PriorityClass, malformed) changes step by
 * step: nodes added, changed and removed, pods bound, changed and
 * deleted, pending gangs added, a PriorityClass changed or deleted, now
 * and then a "re-list" (tg_k8s_cache_clear()).  After every step the same objects
 * are built twice, once with the cache the steps share and once without
 * any, and the two must agree: the topology (tg_topology_check(), nodes,
 * resources, free amounts, allocations), the warnings, the failed gangs,
 * the gangs, and the decisions of tg_place() for every gang in order,
 * each placed one applied before the next.  The cache must have been
 * used (hits), and a clear must leave none; the topology the cache keeps
 * must have been updated (tg_k8s_cache_reused()) in some builds and in
 * none after a Node changed.  The description includes each node's
 * free GPU indices and the topology's warnings, so an update that gives
 * GPUs out in another order than a full build differs.
 * test_node_ids() changes the node list step by step: the node ids
 * records keep must be found again whenever it changes.  test_keep()
 * walks the kept topology through pods coming, going and moving before
 * others on their node, a class's value, a PodDisruptionBudget added,
 * changed (amount, selector) and removed, Nodes changed, removed and
 * added, a resource first asked for by a pending pod, a clear.
 * test_keep_keys(): a level's label key past the first changes (a
 * ClusterNetworkTopology labelKey list), the Nodes stay: built afresh,
 * each node's domain as a full build's.  test_oom() fails every
 * allocation of three builds in turn, the second of which updates the
 * kept topology (its take, update, copy and give).
 *
 * The same steps also feed a second cache deltas (tg_k8s_cache_put() of
 * what is new or changed, tg_k8s_cache_remove() of what is gone, re-puts
 * of versions it holds, all in a random order; a clear and every object
 * again at a re-list; now and then a Node put as text that is not JSON,
 * which must be refused and cost only that Node), and a build from its
 * objects (tg_k8s_use_cache_objects()), sometimes with an overlay (a pod
 * added with another node, for that build only), must equal the full
 * build of the same objects; at the end the objects put in reverse order
 * into a fresh cache build the same.  test_objects_api(): the objects'
 * API edges and when a lent text is released.
 *
 * TG_SEED=N runs seed N only (a failure prints its seed).
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "oom.h"
#include "topogang/topogang.h"

#define NSTEPS		40
#define MAXOBJ		1024
#define TEXT_MAX	2048

typedef struct obj {
	char kind[32], api[48], ns[16], name[32];
	char text[TEXT_MAX];
	uint64_t version;
	bool live;
} obj;

typedef struct world {
	obj o[MAXOBJ];
	unsigned n;
	uint64_t rng, version;
	unsigned nnodes, npods, ngangs;
	unsigned node0;		/* the first node bound pods use */
	int hi_prio;
} world;

static unsigned rnd(world *w, unsigned n)
{
	w->rng = w->rng * 6364136223846793005ull + 1442695040888963407ull;
	return (unsigned)((w->rng >> 33) % n);
}

static obj *put(world *w, const char *kind, const char *api, const char *ns,
		const char *name)
{
	unsigned i;
	obj *o = NULL;

	for (i = 0; i < w->n; i++)
		if (w->o[i].live && strcmp(w->o[i].kind, kind) == 0 &&
		    strcmp(w->o[i].ns, ns) == 0 &&
		    strcmp(w->o[i].name, name) == 0)
			o = &w->o[i];
	for (i = 0; !o && i < w->n; i++)
		if (!w->o[i].live)
			o = &w->o[i];
	if (!o) {
		if (w->n == MAXOBJ)
			return NULL;
		o = &w->o[w->n++];
	}
	snprintf(o->kind, sizeof(o->kind), "%s", kind);
	snprintf(o->api, sizeof(o->api), "%s", api);
	snprintf(o->ns, sizeof(o->ns), "%s", ns);
	snprintf(o->name, sizeof(o->name), "%s", name);
	o->version = ++w->version;
	o->live = true;
	return o;
}

static void node(world *w, unsigned i)
{
	obj *o;
	char name[16];
	unsigned b = rnd(w, 4);

	snprintf(name, sizeof(name), "n%02u", i);
	o = put(w, "Node", "v1", "", name);
	if (!o)
		return;
	snprintf(o->text, sizeof(o->text),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{"
		 "\"name\":\"%s\",\"labels\":{\"kubernetes.io/hostname\":"
		 "\"%s\",\"network.topology.nvidia.com/spine\":\"s%u\","
		 "\"network.topology.nvidia.com/block\":\"b%u\"}},"
		 "\"spec\":{%s},\"status\":{\"allocatable\":{\"cpu\":\"%u\","
		 "\"memory\":\"256Gi\",\"pods\":\"110\","
		 "\"nvidia.com/gpu\":\"8\"%s}}}",
		 name, name, b / 2, b, rnd(w, 8) ? "" :
		 "\"taints\":[{\"key\":\"k\",\"effect\":\"NoSchedule\"}]",
		 16 + 16 * rnd(w, 3),
		 rnd(w, 2) ? ",\"example.com/nic\":\"4\"" : "");
}

/* A bound pod of a random kind (a gang member, anti-affinity, ended,
 * terminating, malformed, ...). */
static void bound_pod(world *w, const char *name)
{
	static const char *const prio[] = { "", "high", "low", "nosuch" };
	static const char *const ext[] = { "", ",\"example.com/nic\":\"1\"",
					   ",\"rdma/ib\":\"1\"" };
	unsigned kind = rnd(w, 10), pc = rnd(w, 8) == 0 ? 3 : rnd(w, 3);
	char labels[200], extra[600], prio_f[60];
	obj *o = put(w, "Pod", "v1", "default", name);

	if (!o)
		return;
	snprintf(labels, sizeof(labels), "\"app\":\"a%u\"%s", rnd(w, 4),
		 kind == 1 ? ",\"scheduling.x-k8s.io/pod-group\":\"g0\"" :
		 kind == 2 ? ",\"scheduling.x-k8s.io/pod-group\":\"g1\"" : "");
	extra[0] = '\0';
	if (kind == 3)
		snprintf(extra, sizeof(extra), ",\"affinity\":{"
			 "\"podAntiAffinity\":{\"requiredDuringScheduling"
			 "IgnoredDuringExecution\":[{\"topologyKey\":\"%s\","
			 "\"labelSelector\":{\"matchLabels\":{\"app\":"
			 "\"a%u\"}}}]}}", rnd(w, 2) ? "kubernetes.io/hostname" :
			 "network.topology.nvidia.com/block", rnd(w, 4));
	else if (kind == 4)
		snprintf(extra, sizeof(extra), ",\"initContainers\":[{"
			 "\"name\":\"i\",\"resources\":{\"requests\":{"
			 "\"cpu\":\"6\"%s}}}]", ext[rnd(w, 3)]);
	prio_f[0] = '\0';
	if (pc)
		snprintf(prio_f, sizeof(prio_f), ",\"priorityClassName\":"
			 "\"%s\"", prio[pc]);
	snprintf(o->text, sizeof(o->text),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{"
		 "\"name\":\"%s\",\"namespace\":\"default\","
		 "\"creationTimestamp\":\"2026-01-01T00:%02u:00Z\"%s,"
		 "\"labels\":{%s}},\"spec\":{\"nodeName\":\"n%02u\","
		 "\"schedulerName\":\"topogang\"%s,\"containers\":[{"
		 "\"name\":\"c\",\"resources\":{\"requests\":{"
		 "\"cpu\":\"%s\",\"nvidia.com/gpu\":\"%u\"%s}}}]%s},"
		 "\"status\":{\"phase\":\"%s\"}}",
		 name, rnd(w, 60), kind == 6 ?
		 ",\"deletionTimestamp\":\"2026-01-01T01:00:00Z\"" : "",
		 labels, w->node0 + rnd(w, w->nnodes - w->node0 + 2), prio_f,
		 kind == 7 ? "8x" : rnd(w, 2) ? "2" : "500m", rnd(w, 3),
		 ext[rnd(w, 3)], extra, kind == 5 ? "Succeeded" : "Running");
}

/* A pending gang of 2-4 pods and its PodGroup. */
static void pending_gang(world *w)
{
	char g[16], name[32];
	unsigned i, n = 2 + rnd(w, 3), gpu = 1 + rnd(w, 4);
	obj *o;

	snprintf(g, sizeof(g), "p%u", w->ngangs++);
	o = put(w, "PodGroup", "scheduling.x-k8s.io/v1alpha1", "default", g);
	if (!o)
		return;
	snprintf(o->text, sizeof(o->text),
		 "{\"apiVersion\":\"scheduling.x-k8s.io/v1alpha1\","
		 "\"kind\":\"PodGroup\",\"metadata\":{\"name\":\"%s\","
		 "\"namespace\":\"default\"},\"spec\":{\"minMember\":%u}}",
		 g, n);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s-%u", g, i);
		o = put(w, "Pod", "v1", "default", name);
		if (!o)
			return;
		snprintf(o->text, sizeof(o->text),
			 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{"
			 "\"name\":\"%s\",\"namespace\":\"default\","
			 "\"labels\":{\"app\":\"a%u\","
			 "\"scheduling.x-k8s.io/pod-group\":\"%s\"}},"
			 "\"spec\":{\"schedulerName\":\"topogang\"%s,"
			 "\"containers\":[{\"name\":\"c\",\"resources\":{"
			 "\"requests\":{\"cpu\":\"1\",\"nvidia.com/gpu\":"
			 "\"%u\"}}}]%s},\"status\":{\"phase\":\"Pending\"}}",
			 name, rnd(w, 4), g,
			 rnd(w, 2) ? ",\"priorityClassName\":\"high\"" : "",
			 gpu, rnd(w, 3) ? "" :
			 ",\"affinity\":{\"podAntiAffinity\":{\"required"
			 "DuringSchedulingIgnoredDuringExecution\":[{"
			 "\"topologyKey\":\"kubernetes.io/hostname\","
			 "\"labelSelector\":{\"matchLabels\":{\"app\":\"a1\"}}"
			 "}]}}");
	}
}

static void prioclasses(world *w)
{
	static const char *const names[] = { "high", "low" };
	unsigned i;

	for (i = 0; i < 2; i++) {
		obj *o = put(w, "PriorityClass", "scheduling.k8s.io/v1", "",
			     names[i]);

		if (o)
			snprintf(o->text, sizeof(o->text),
				 "{\"apiVersion\":\"scheduling.k8s.io/v1\","
				 "\"kind\":\"PriorityClass\",\"metadata\":{"
				 "\"name\":\"%s\"},\"value\":%d%s}", names[i],
				 i ? 10 : w->hi_prio, i && w->hi_prio == 2000 ?
				 ",\"globalDefault\":true" : "");
	}
}

static obj *pick(world *w, const char *kind)
{
	unsigned tries;

	for (tries = 0; tries < 64 && w->n; tries++) {
		obj *o = &w->o[rnd(w, w->n)];

		if (o->live && strcmp(o->kind, kind) == 0)
			return o;
	}
	return NULL;
}

/* One change of the cluster. */
static void delta(world *w)
{
	char name[32];
	obj *o;

	switch (rnd(w, 9)) {
	case 0:
		node(w, w->nnodes++);
		break;
	case 1:		/* a node changes: labels, taints, allocatable */
		node(w, rnd(w, w->nnodes));
		break;
	case 2:
		if ((o = pick(w, "Node")) != NULL)
			o->live = false;
		break;
	case 3:
	case 4:
		snprintf(name, sizeof(name), "b%u", w->npods++);
		bound_pod(w, name);
		break;
	case 5:		/* a pod changes: a new version of its text */
		if ((o = pick(w, "Pod")) != NULL && o->name[0] == 'b') {
			/* a copy: put() writes the name into o->name */
			snprintf(name, sizeof(name), "%s", o->name);
			bound_pod(w, name);
		}
		break;
	case 6:
		if ((o = pick(w, "Pod")) != NULL)
			o->live = false;
		break;
	case 7:
		pending_gang(w);
		break;
	default:
		if (rnd(w, 3) == 0) {
			/* a value and the global default change */
			w->hi_prio = w->hi_prio == 1000 ? 2000 : 1000;
			prioclasses(w);
		} else if (rnd(w, 4) == 0) {
			/* a class goes: its pods' priority is the default */
			obj *pc = put(w, "PriorityClass",
				      "scheduling.k8s.io/v1", "", "high");

			if (pc)
				pc->live = false;
		} else if ((o = pick(w, "Pod")) != NULL && o->name[0] == 'p') {
			/* a pending pod gets bound: a new text */
			snprintf(name, sizeof(name), "%s", o->name);
			bound_pod(w, name);
		}
		break;
	}
}

typedef struct built {
	tg_k8s *k;
	tg_topology *t;
	tg_err err;
	tg_errinfo ei;
} built;

static bool same_id(const obj *a, const obj *b)
{
	return strcmp(a->kind, b->kind) == 0 && strcmp(a->api, b->api) == 0 &&
	       strcmp(a->ns, b->ns) == 0 && strcmp(a->name, b->name) == 0;
}

static tg_err add(tg_k8s *k, const obj *o, tg_errinfo *ei)
{
	return tg_k8s_add_object_version(k, o->text, strlen(o->text), o->kind,
					 o->api, o->ns, o->name, "cache",
					 o->version, ei);
}

/*
 * The live objects of \p w, \p ov (when not NULL) in place of the one
 * with its identity; with \p delta, only \p ov is added and the rest
 * comes from the objects \p c holds (tg_k8s_use_cache_objects()).
 */
static built build_ov(world *w, tg_k8s_cache *c, const obj *ov, bool delta)
{
	built b;
	unsigned i;

	memset(&b, 0, sizeof(b));
	b.k = tg_k8s_create();
	if (!b.k) {
		b.err = TG_ENOMEM;
		return b;
	}
	tg_k8s_set_scheduler_name(b.k, "topogang");
	tg_k8s_set_cache(b.k, c);
	if (delta)
		b.err = tg_k8s_use_cache_objects(b.k);
	for (i = 0; i < w->n && !b.err && !delta; i++) {
		const obj *o = &w->o[i];

		if (o->live && !(ov && same_id(o, ov)))
			b.err = add(b.k, o, &b.ei);
	}
	if (ov && !b.err)
		b.err = add(b.k, ov, &b.ei);
	if (!b.err)
		b.err = tg_k8s_build(b.k, &b.t, &b.ei);
	return b;
}

static built build(world *w, tg_k8s_cache *c)
{
	return build_ov(w, c, NULL, false);
}

static void built_free(built *b)
{
	tg_topology_destroy(b->t);
	tg_k8s_destroy(b->k);
}

static void addf(char *buf, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void addf(char *buf, size_t n, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	if (len + 1 >= n)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, n - len, fmt, ap);
	va_end(ap);
}

/*
 * Everything a build gives, as text: warnings, failures, the topology
 * (nodes, resources, free amounts, allocations), then each gang's
 * decision, placed ones applied in order.
 */
static char *describe(built *b)
{
	size_t n = 1 << 20;
	char *s = calloc(1, n);
	unsigned i, j, r;
	const char *why;

	if (!s)
		return NULL;
	addf(s, n, "err %d\n", (int)b->err);
	for (i = 0; i < tg_k8s_nwarnings(b->k); i++)
		addf(s, n, "warn %s\n", tg_k8s_warning(b->k, i));
	for (i = 0; i < tg_k8s_nfailed(b->k); i++) {
		addf(s, n, "fail %s", tg_k8s_failed(b->k, i, &why));
		addf(s, n, " (%s)", why);
		for (j = 0; j < tg_k8s_failed_npods(b->k, i); j++)
			addf(s, n, " %s", tg_k8s_failed_pod(b->k, i, j));
		addf(s, n, "\n");
	}
	if (b->err)
		return s;
	addf(s, n, "allocs %u\n", tg_topology_nallocs(b->t));
	for (r = 0; r < tg_topology_nlayers(b->t); r++)
		addf(s, n, "layer %s %s\n", tg_topology_layer_name(b->t, r),
		     tg_topology_layer_key(b->t, r));
	for (r = 0; r < tg_topology_nresources(b->t); r++)
		addf(s, n, "res %u %s\n", r, tg_topology_resource_name(b->t, r));
	for (i = 0; i < tg_topology_nnodes(b->t); i++) {
		addf(s, n, "node %s", tg_topology_node_name(b->t, i));
		for (r = 0; r < tg_topology_nresources(b->t); r++)
			addf(s, n, " %lld",
			     (long long)tg_topology_node_free(b->t, i, r));
		/* which GPUs: the kept topology's must be a full build's */
		addf(s, n, " gpus %llx", (unsigned long long)
		     tg_topology_node_free_gpus(b->t, i));
		/* and where: its domain (the levels' label keys read) */
		addf(s, n, " in %s\n", tg_topology_node_domain(b->t, i) ==
		     TG_NONE ? "-" : tg_topology_domain_path(b->t,
		     tg_topology_node_domain(b->t, i)));
	}
	for (i = 0; i < tg_topology_nwarnings(b->t); i++)
		addf(s, n, "twarn %s\n", tg_topology_warning(b->t, i));
	for (i = 0; i < tg_k8s_ngangs(b->k); i++) {
		tg_gang *g = tg_k8s_gang(b->k, i);
		tg_decision *d = NULL;

		addf(s, n, "gang %s:", tg_gang_name(g));
		if (tg_place(b->t, g, &d, NULL) != TG_OK) {
			addf(s, n, " (error)\n");
			continue;
		}
		addf(s, n, " %s %s", tg_status_name(tg_decision_status(d)),
		     tg_decision_domain(d));
		for (j = 0; j < tg_decision_nplacements(d); j++)
			addf(s, n, " %s", tg_topology_node_name(b->t,
				tg_decision_placement(d, j)->node));
		for (j = 0; j < tg_decision_nvictims(d); j++)
			addf(s, n, " -%s", tg_decision_victim(d, j)->pod);
		addf(s, n, "\n");
		if (tg_decision_status(d) == TG_STATUS_PLACED)
			tg_decision_apply(b->t, g, d);
		tg_decision_free(d);
	}
	return s;
}

/* The first line where \p a and \p c differ. */
static void first_diff(const char *a, const char *c)
{
	while (*a && *a == *c) {
		const char *ea = strchr(a, '\n'), *ec = strchr(c, '\n');

		if (!ea || !ec || ea - a != ec - c ||
		    strncmp(a, c, (size_t)(ea - a)) != 0)
			break;
		a = ea + 1;
		c = ec + 1;
	}
	diag("cached: %.300s", a);
	diag("full:   %.300s", c);
}

/* The live Nodes and their versions, as one number (a sum of each
 * one's: versions are never reused). */
static uint64_t nodes_now(const world *w)
{
	uint64_t h = 0;
	unsigned i;

	for (i = 0; i < w->n; i++)
		if (w->o[i].live && strcmp(w->o[i].kind, "Node") == 0)
			h += w->o[i].version * 2654435761u + 1;
	return h;
}

static size_t live_objs(const world *w)
{
	size_t n = 0;
	unsigned i;

	for (i = 0; i < w->n; i++)
		n += w->o[i].live;
	return n;
}

/*
 * A cache fed deltas: what it was given (identity and version), to give
 * it the differences from the world after each step, in a random order.
 */
typedef struct feed {
	tg_k8s_cache *c;
	obj *got;		/* MAXOBJ: identity and version; text unused */
	unsigned ngot;
	unsigned puts, removes, reputs, bad;
} feed;

typedef struct op {
	const obj *put;		/* NULL: remove got[rm] */
	unsigned rm;
} op;

static void feed_put(feed *fd, const obj *o)
{
	tg_errinfo ei;
	unsigned i, free_slot = fd->ngot;

	if (tg_k8s_cache_put(fd->c, o->text, strlen(o->text), o->kind, o->api,
			     o->ns, o->name, "cache", o->version, &ei)) {
		diag("put %s %s: %s", o->kind, o->name, ei.msg);
		return;
	}
	for (i = 0; i < fd->ngot; i++) {
		if (fd->got[i].live && same_id(&fd->got[i], o))
			break;
		if (!fd->got[i].live && free_slot == fd->ngot)
			free_slot = i;
	}
	if (i == fd->ngot) {
		i = free_slot;
		if (i == fd->ngot)
			fd->ngot++;
	}
	memcpy(&fd->got[i], o, offsetof(obj, text));
	fd->got[i].version = o->version;
	fd->got[i].live = true;
}

/* Gives \p fd what changed in \p w since the last call: removes of the
 * objects gone, puts of those new or changed, and re-puts of a few
 * unchanged ones (the same version), shuffled. */
static void feed_sync(feed *fd, world *w)
{
	static op ops[2 * MAXOBJ];
	unsigned n = 0, i, j;

	for (i = 0; i < fd->ngot; i++) {
		if (!fd->got[i].live)
			continue;
		for (j = 0; j < w->n; j++)
			if (w->o[j].live && same_id(&w->o[j], &fd->got[i]))
				break;
		if (j == w->n) {
			ops[n].put = NULL;
			ops[n++].rm = i;
		}
	}
	for (j = 0; j < w->n; j++) {
		if (!w->o[j].live)
			continue;
		for (i = 0; i < fd->ngot; i++)
			if (fd->got[i].live && same_id(&w->o[j], &fd->got[i]))
				break;
		if (i == fd->ngot || fd->got[i].version != w->o[j].version ||
		    rnd(w, 16) == 0) {
			fd->reputs += i < fd->ngot &&
				      fd->got[i].version == w->o[j].version;
			ops[n++].put = &w->o[j];
		}
	}
	for (i = n; i > 1; i--) {	/* any order gives the same model */
		op t;

		j = rnd(w, i);
		t = ops[i - 1];
		ops[i - 1] = ops[j];
		ops[j] = t;
	}
	for (i = 0; i < n; i++) {
		if (ops[i].put) {
			feed_put(fd, ops[i].put);
			fd->puts++;
			continue;
		}
		if (tg_k8s_cache_remove(fd->c, fd->got[ops[i].rm].kind,
					fd->got[ops[i].rm].api,
					fd->got[ops[i].rm].ns,
					fd->got[ops[i].rm].name) == TG_OK)
			fd->removes++;
		fd->got[ops[i].rm].live = false;
	}
}

/* A Node's new text that is not JSON: its put fails and the cache no
 * longer has it; the world loses it too (a full build of a world with
 * it would fail as a whole). */
static void feed_bad_node(feed *fd, world *w)
{
	static const char bad[] = "{\"apiVersion\":\"v1\",\"kind\":"
				  "\"Node\",\"metadata\":{\"name\":";
	obj *o = pick(w, "Node");
	tg_errinfo ei;
	unsigned i;

	if (!o)
		return;
	if (tg_k8s_cache_put(fd->c, bad, sizeof(bad) - 1, "Node", "v1", "",
			     o->name, "cache", ++w->version, &ei) ==
	    TG_EPARSE && strstr(ei.msg, "cache"))
		fd->bad++;
	o->live = false;
	for (i = 0; i < fd->ngot; i++)
		if (fd->got[i].live && same_id(&fd->got[i], o))
			fd->got[i].live = false;
}

/* Now and then an overlay: a pod of the world with another text for one
 * build, bound to another node (a pending one: bound, as the bridge
 * presents a pod it bound before the watch shows it), version 0 (the
 * bridge's made texts); NULL when none. */
static const obj *overlay(world *w, obj *ov)
{
	obj *o = rnd(w, 3) == 0 ? pick(w, "Pod") : NULL;
	const char *spec;
	char *nn;
	size_t at;

	if (!o || !(spec = strstr(o->text, "\"spec\":{")))
		return NULL;
	*ov = *o;
	ov->version = 0;
	nn = strstr(ov->text, "\"nodeName\":\"n");
	if (nn && nn[15] == '"') {	/* "nodeName":"nNN" */
		snprintf(nn + 13, 3, "%02u", w->node0 + rnd(w, 4));
		nn[15] = '"';
		return ov;
	}
	if (nn)
		return NULL;
	at = (size_t)(spec - o->text) + 8;
	snprintf(ov->text + at, sizeof(ov->text) - at,
		 "\"nodeName\":\"n%02u\",%s", w->node0 + rnd(w, 4),
		 o->text + at);
	return ov;
}

/* The world put into a fresh cache in reverse order, built from its
 * objects, described. */
static char *describe_reversed(world *w)
{
	tg_k8s_cache *c = tg_k8s_cache_create();
	built b;
	char *d;
	unsigned i;

	for (i = w->n; i > 0; i--) {
		const obj *o = &w->o[i - 1];

		if (o->live)
			tg_k8s_cache_put(c, o->text, strlen(o->text), o->kind,
					 o->api, o->ns, o->name, "cache",
					 o->version, NULL);
	}
	b = build_ov(w, c, NULL, true);
	d = describe(&b);
	built_free(&b);
	tg_k8s_cache_destroy(c);
	return d;
}

/* One step's delta-fed build against the full one \p df (of the same
 * objects, \p ov in place); true when they agree. */
static bool delta_same(feed *fd, world *w, const obj *ov, const char *df,
		       uint64_t seed, unsigned step)
{
	built d = build_ov(w, fd->c, ov, true);
	char *dd = describe(&d);
	tg_errinfo ce;
	bool same = dd && df && strcmp(dd, df) == 0 && !d.err &&
		    tg_topology_check(d.t, &ce) == TG_OK;

	if (!same) {
		diag("seed %llu step %u: the delta-fed build differs (%s)",
		     (unsigned long long)seed, step, d.err ? d.ei.msg : "");
		if (dd && df)
			first_diff(dd, df);
	}
	free(dd);
	built_free(&d);
	return same;
}

static void run_seed(uint64_t seed)
{
	static world w;
	static obj got[MAXOBJ];
	tg_k8s_cache *c = tg_k8s_cache_create();
	size_t hits, misses, total_hits = 0;
	unsigned step, i, bad = 0, checks = 0, cleared_ok = 0, nclear = 0;
	unsigned reused = 0, node_steps = 0, node_reused = 0, dbad = 0;
	unsigned novl = 0;
	feed fd;
	char *drev, *dlast;
	built f0;

	memset(&w, 0, sizeof(w));
	w.rng = seed * 2654435761u + 1;
	w.hi_prio = 1000;
	prioclasses(&w);
	for (i = 0; i < 10; i++)
		node(&w, w.nnodes++);
	for (i = 0; i < 30; i++) {
		char name[32];

		snprintf(name, sizeof(name), "b%u", w.npods++);
		bound_pod(&w, name);
	}
	pending_gang(&w);
	pending_gang(&w);
	memset(&fd, 0, sizeof(fd));
	memset(got, 0, sizeof(got));
	fd.c = tg_k8s_cache_create();
	fd.got = got;
	for (step = 0; step < NSTEPS; step++) {
		built a, f;
		char *da, *df;
		tg_errinfo ce;
		bool clear = step % 13 == 12, nodes = false;
		uint64_t n0 = nodes_now(&w);
		obj ovs;
		const obj *ov;

		if (step) {
			unsigned nd = 1 + rnd(&w, 5);

			for (i = 0; i < nd; i++)
				delta(&w);
			if (step % 7 == 3)
				feed_bad_node(&fd, &w);
			/* a Node added and removed in one step is none */
			nodes = nodes_now(&w) != n0;
		}
		if (clear) {
			tg_k8s_cache_clear(c);
			/* a re-list: emptied, then every object again */
			tg_k8s_cache_clear(fd.c);
			memset(got, 0, sizeof(got));
			fd.ngot = 0;
			nclear++;
		}
		feed_sync(&fd, &w);
		ov = overlay(&w, &ovs);
		novl += ov != NULL;
		a = build_ov(&w, c, ov, false);
		f = build_ov(&w, NULL, ov, false);
		tg_k8s_cache_stats(c, &hits, &misses);
		total_hits += hits;
		reused += !a.err && tg_k8s_cache_reused(c);
		if (nodes && !clear && step && !a.err) {
			node_steps++;
			node_reused += tg_k8s_cache_reused(c);
			if (tg_k8s_cache_reused(c))
				diag("seed %llu step %u: updated after a Node "
				     "changed (%u objects)",
				     (unsigned long long)seed, step, w.n);
		}
		if (clear && hits == 0 && tg_k8s_cache_size(c) > 0)
			cleared_ok++;
		if (!a.err && tg_topology_check(a.t, &ce) != TG_OK) {
			diag("seed %llu step %u: topology check: %s",
			     (unsigned long long)seed, step, ce.msg);
			bad++;
		}
		da = describe(&a);
		df = describe(&f);
		checks++;
		if (!delta_same(&fd, &w, ov, df, seed, step))
			dbad++;
		if (!da || !df || strcmp(da, df) != 0) {
			if (!bad)
				diag("seed %llu step %u: the cached build "
				     "differs (hits %zu, misses %zu)",
				     (unsigned long long)seed, step, hits,
				     misses);
			if (!bad && da && df)
				first_diff(da, df);
			bad++;
		}
		free(da);
		free(df);
		built_free(&a);
		built_free(&f);
	}
	ok(bad == 0, "seed %llu: %u builds with the cache equal full ones "
	   "(topology, warnings, failures, gangs, decisions)",
	   (unsigned long long)seed, checks);
	ok(total_hits > 0, "seed %llu: the cache was used (%zu pods not "
	   "parsed again)", (unsigned long long)seed, total_hits);
	is_int(cleared_ok, nclear, "seed %llu: a build after "
	       "tg_k8s_cache_clear() reads every pod again",
	       (unsigned long long)seed);
	ok(reused > 0, "seed %llu: %u of %u builds updated the kept topology",
	   (unsigned long long)seed, reused, checks);
	is_int(node_reused, 0, "seed %llu: none after a Node changed (%u "
	       "steps)", (unsigned long long)seed, node_steps);
	is_int(dbad, 0, "seed %llu: %u builds from a cache fed deltas equal "
	       "full ones (%u puts, %u removes, %u re-puts of a version it "
	       "held, %u malformed Nodes refused, %u overlays, %u re-lists)",
	       (unsigned long long)seed, checks, fd.puts, fd.removes,
	       fd.reputs, fd.bad, novl, nclear);
	ok(fd.removes > 0 && fd.reputs > 0 && fd.bad > 0 && novl > 0,
	   "seed %llu: the steps removed, re-put, refused and overlaid",
	   (unsigned long long)seed);
	is_int(tg_k8s_cache_nobjects(fd.c), live_objs(&w),
	       "seed %llu: the cache holds the live objects",
	       (unsigned long long)seed);
	/* the same objects put in another order: the same result */
	f0 = build(&w, NULL);
	dlast = describe(&f0);
	drev = describe_reversed(&w);
	ok(drev && dlast && strcmp(drev, dlast) == 0, "seed %llu: objects "
	   "put in reverse order build the same", (unsigned long long)seed);
	if (drev && dlast && strcmp(drev, dlast) != 0)
		first_diff(drev, dlast);
	free(drev);
	free(dlast);
	built_free(&f0);
	tg_k8s_cache_destroy(fd.c);
	tg_k8s_cache_destroy(c);
}

/* The API's edges: NULLs, a cache set after the build. */
static void test_api(void)
{
	tg_k8s *k = tg_k8s_create();
	tg_k8s_cache *c = tg_k8s_cache_create();
	tg_topology *t = NULL;
	size_t h = 1, m = 1;

	tg_k8s_cache_destroy(NULL);
	tg_k8s_cache_clear(NULL);
	is_int(tg_k8s_cache_size(NULL), 0, "size of NULL is 0");
	tg_k8s_cache_stats(NULL, &h, &m);
	ok(h == 0 && m == 0, "stats of NULL are 0");
	is_int(tg_k8s_set_cache(NULL, c), TG_EINVAL, "set_cache(NULL) fails");
	is_int(tg_k8s_set_cache(k, c), TG_OK, "set_cache before the build");
	is_int(tg_k8s_build(k, &t, NULL), TG_OK, "an empty build");
	is_int(tg_k8s_set_cache(k, c), TG_ESTATE,
	       "set_cache after the build is TG_ESTATE");
	tg_topology_destroy(t);
	tg_k8s_destroy(k);
	tg_k8s_cache_destroy(c);
}

static void count_release(void *ud)
{
	(*(unsigned *)ud)++;
}

/* The objects' API: bad arguments, a remove of nothing, a lent text
 * released when replaced, when its put fails and at the end. */
static void test_objects_api(void)
{
	static const char node[] = "{\"apiVersion\":\"v1\",\"kind\":"
		"\"Node\",\"metadata\":{\"name\":\"n1\"}}";
	tg_k8s_cache *c = tg_k8s_cache_create();
	tg_k8s *k = tg_k8s_create();
	unsigned rel = 0;
	tg_errinfo ei;

	is_int(tg_k8s_cache_put(NULL, node, sizeof(node) - 1, "Node", "v1",
				"", "n1", "x", 1, &ei), TG_EINVAL,
	       "put into NULL fails");
	is_int(tg_k8s_cache_put_lent(c, node, sizeof(node) - 1, "Node", "v1",
				     "", "n1", "x", 1, NULL, NULL, &ei),
	       TG_EINVAL, "put_lent without a release function fails");
	is_int(tg_k8s_cache_remove(c, "Node", "v1", "", "n1"), TG_ENOENT,
	       "remove of an object the cache does not hold: TG_ENOENT");
	is_int(tg_k8s_use_cache_objects(k), TG_EINVAL,
	       "use_cache_objects without a cache fails");
	is_int(tg_k8s_cache_put_lent(c, node, sizeof(node) - 1, "Node", "v1",
				     "", "n1", "x", 1, count_release, &rel,
				     &ei), TG_OK, "a lent put");
	is_int(tg_k8s_cache_put_lent(c, node, sizeof(node) - 1, "Node", "v1",
				     "", "n1", "x", 1, count_release, &rel,
				     &ei), TG_OK, "again, the same version");
	is_int(rel, 1, "the text it replaced is released");
	is_int(tg_k8s_cache_put_lent(c, "{", 1, "Node", "v1", "", "n1", "x",
				     2, count_release, &rel, &ei), TG_EPARSE,
	       "a Node that is not JSON is refused");
	ok(rel == 3 && tg_k8s_cache_nobjects(c) == 0, "its text and the old "
	   "one are released, the cache holds none (%u released)", rel);
	tg_k8s_cache_put_lent(c, node, sizeof(node) - 1, "Node", "v1", "",
			      "n1", "x", 3, count_release, &rel, &ei);
	tg_k8s_destroy(k);
	tg_k8s_cache_destroy(c);
	is_int(rel, 4, "destroy releases what the cache held");
}

/*
 * Many pods and nodes replaced by others: the cache's tables are made
 * afresh (the keys of gone objects dropped) and still give what a full
 * build gives.
 */
static void test_turnover(void)
{
	static world w;
	tg_k8s_cache *c = tg_k8s_cache_create();
	size_t hits = 0, misses = 0;
	unsigned round, i, same = 0;

	memset(&w, 0, sizeof(w));
	w.rng = 77;
	w.hi_prio = 1000;
	prioclasses(&w);
	for (round = 0; round < 4; round++) {
		built a, f;
		char *da, *df;

		/* 340 new pods and 280 new nodes a round, the old ones
		 * gone */
		for (i = 0; i < w.n; i++)
			if (strcmp(w.o[i].kind, "PriorityClass") != 0)
				w.o[i].live = false;
		for (i = 0; i < 280; i++)
			node(&w, 1000 * round + i);
		w.node0 = 1000 * round;
		w.nnodes = 1000 * round + 280;
		for (i = 0; i < 340; i++) {
			char name[32];

			snprintf(name, sizeof(name), "b%u", w.npods++);
			bound_pod(&w, name);
		}
		pending_gang(&w);
		a = build(&w, c);
		built_free(&a);
		/* again, from the cache */
		a = build(&w, c);
		tg_k8s_cache_stats(c, &hits, &misses);
		f = build(&w, NULL);
		da = describe(&a);
		df = describe(&f);
		if (da && df && strcmp(da, df) == 0 && hits > 300)
			same++;
		else if (da && df)
			first_diff(da, df);
		free(da);
		free(df);
		built_free(&a);
		built_free(&f);
	}
	is_int(same, 4, "after turnover the cache's builds equal full ones "
	       "and come from it (last: %zu objects not parsed)", hits);
	ok(tg_k8s_cache_size(c) < 600, "only what is live is kept (%zu "
	   "records)", tg_k8s_cache_size(c));
	tg_k8s_cache_destroy(c);
}

/* The cached build of \p w equals a full one, and took pods from the
 * cache; the first difference is printed when not. */
static bool same_as_full(world *w, tg_k8s_cache *c, const char *what)
{
	built a = build(w, c), f = build(w, NULL);
	char *da = describe(&a), *df = describe(&f);
	size_t hits = 0, misses = 0;
	tg_errinfo ce;
	bool same;

	tg_k8s_cache_stats(c, &hits, &misses);
	same = da && df && strcmp(da, df) == 0 && hits > 0 && !a.err &&
	       tg_topology_check(a.t, &ce) == TG_OK;
	if (!same && da && df) {
		diag("%s: hits %zu", what, hits);
		first_diff(da, df);
	}
	free(da);
	free(df);
	built_free(&a);
	built_free(&f);
	return same;
}

static void node_gone(world *w, const char *name)
{
	unsigned i;

	for (i = 0; i < w->n; i++)
		if (w->o[i].live && strcmp(w->o[i].kind, "Node") == 0 &&
		    strcmp(w->o[i].name, name) == 0)
			w->o[i].live = false;
}

/*
 * The node ids records keep (tgk_cache_nodes()): used while the
 * topology's node list is the one they were found in, found again
 * after a node is removed or added before others (the ids after it
 * move) or changed.  Each step's cached build must equal a full one.
 */
static void test_node_ids(void)
{
	static world w;
	tg_k8s_cache *c = tg_k8s_cache_create();
	built a;
	unsigned i;

	memset(&w, 0, sizeof(w));
	w.rng = 4242;
	w.hi_prio = 1000;
	prioclasses(&w);
	for (i = 0; i < 8; i++)
		node(&w, w.nnodes++);
	for (i = 0; i < 60; i++) {
		char name[32];

		snprintf(name, sizeof(name), "b%u", w.npods++);
		bound_pod(&w, name);
	}
	pending_gang(&w);
	a = build(&w, c);	/* records made, then their ids found */
	built_free(&a);
	ok(same_as_full(&w, c, "same nodes"), "node ids: the same nodes "
	   "again (ids from the records)");
	node_gone(&w, "n01");
	ok(same_as_full(&w, c, "n01 removed"), "node ids: a node removed "
	   "before others (their ids move)");
	ok(same_as_full(&w, c, "n01 still gone"), "node ids: the ids found "
	   "after the removal are used");
	node(&w, 1);
	ok(same_as_full(&w, c, "n01 back"), "node ids: a node added back "
	   "before others");
	node(&w, 0);
	node(&w, 5);
	ok(same_as_full(&w, c, "n00, n05 changed"), "node ids: nodes "
	   "changed (new versions)");
	node_gone(&w, "n07");
	node(&w, w.nnodes++);
	ok(same_as_full(&w, c, "n07 gone, n08 new"), "node ids: the last "
	   "node replaced by another (same count)");
	tg_k8s_cache_destroy(c);
}

/* A bound pod of \p gpus GPUs on node \p nd, of class \p pc ("": none). */
static void gpu_pod(world *w, const char *name, unsigned nd, unsigned gpus,
		    const char *pc)
{
	obj *o = put(w, "Pod", "v1", "default", name);

	if (o)
		snprintf(o->text, sizeof(o->text),
			 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{"
			 "\"name\":\"%s\",\"namespace\":\"default\","
			 "\"labels\":{\"app\":\"g\"}},\"spec\":{"
			 "\"nodeName\":\"n%02u\",\"schedulerName\":\"topogang\""
			 "%s%s%s,\"containers\":[{\"name\":\"c\",\"resources\":{"
			 "\"requests\":{\"cpu\":\"1\",\"nvidia.com/gpu\":\"%u\"}}}]},"
			 "\"status\":{\"phase\":\"Running\"}}", name, nd,
			 *pc ? ",\"priorityClassName\":\"" : "", pc,
			 *pc ? "\"" : "", gpus);
}

/* Node \p i again, with a label key that makes a preset level. */
static void accel_node(world *w, unsigned i)
{
	static const char at[] = "\"labels\":{";
	char name[16], *p, rest[TEXT_MAX];
	unsigned j;

	node(w, i);
	snprintf(name, sizeof(name), "n%02u", i);
	for (j = 0; j < w->n; j++) {
		obj *o = &w->o[j];

		if (!o->live || strcmp(o->kind, "Node") != 0 ||
		    strcmp(o->name, name) != 0 || !(p = strstr(o->text, at)))
			continue;
		p += sizeof(at) - 1;
		snprintf(rest, sizeof(rest), "%s", p);
		snprintf(p, sizeof(o->text) - (size_t)(p - o->text),
			 "\"network.topology.nvidia.com/accelerator\":\"a%u\","
			 "%s", i, rest);
	}
}

static void pod_gone(world *w, const char *name)
{
	unsigned i;

	for (i = 0; i < w->n; i++)
		if (w->o[i].live && strcmp(w->o[i].kind, "Pod") == 0 &&
		    strcmp(w->o[i].name, name) == 0)
			w->o[i].live = false;
}

/* PodDisruptionBudget default/pdb over pods labelled \p key=\p value
 * (NULL: the budget gone). */
static void pdb(world *w, const char *key, const char *value, unsigned min)
{
	obj *o = put(w, "PodDisruptionBudget", "policy/v1", "default", "pdb");

	if (o && !key)
		o->live = false;
	else if (o)
		snprintf(o->text, sizeof(o->text),
			 "{\"apiVersion\":\"policy/v1\",\"kind\":"
			 "\"PodDisruptionBudget\",\"metadata\":{\"name\":\"pdb\","
			 "\"namespace\":\"default\"},\"spec\":{\"minAvailable\":"
			 "%u,\"selector\":{\"matchLabels\":{\"%s\":\"%s\"}}}}",
			 min, key, value);
}

/* One step of test_keep(): the cached build equals a full one and did
 * (or did not) update the kept topology. */
static void keep_step(world *w, tg_k8s_cache *c, bool want, const char *what)
{
	bool same = same_as_full(w, c, what);

	ok(same && tg_k8s_cache_reused(c) == want, "kept topology: %s "
	   "(%s; same as a full build: %s)", what, want ? "updated" :
	   "built afresh", same ? "yes" : "no");
}

/* A build with an empty cache: nothing kept to update. */
static void keep_first(world *w, tg_k8s_cache *c, const char *what)
{
	built a = build(w, c);

	ok(!a.err && !tg_k8s_cache_reused(c), "kept topology: %s (built "
	   "afresh)", what);
	built_free(&a);
}

/*
 * The kept topology (tg_k8s_cache_reused()): updated while the nodes,
 * levels and resources stay, built afresh when they change; a node's
 * GPUs given out again in pod order when a pod before others on it
 * comes or goes; allocations whose class changes made again.
 */
static void test_keep(void)
{
	static world w;
	tg_k8s_cache *c = tg_k8s_cache_create();
	obj *o;
	unsigned i;

	memset(&w, 0, sizeof(w));
	w.rng = 777;
	w.hi_prio = 1000;
	prioclasses(&w);
	for (i = 0; i < 6; i++)
		node(&w, w.nnodes++);
	gpu_pod(&w, "m1", 1, 2, "");
	gpu_pod(&w, "m3", 1, 2, "low");
	gpu_pod(&w, "m5", 2, 4, "high");
	pending_gang(&w);
	keep_first(&w, c, "the first build");
	keep_step(&w, c, true, "nothing changed");
	gpu_pod(&w, "m0", 1, 3, "");
	keep_step(&w, c, true, "a pod before the others on its node");
	pod_gone(&w, "m1");
	keep_step(&w, c, true, "a pod gone (the GPUs after it move)");
	gpu_pod(&w, "m3", 3, 2, "low");
	keep_step(&w, c, true, "a pod moved to another node");
	w.hi_prio = 2000;
	prioclasses(&w);
	keep_step(&w, c, true, "a PriorityClass's value changed");
	pdb(&w, "app", "g", 1);
	keep_step(&w, c, false, "a PodDisruptionBudget added");
	pdb(&w, "app", "g", 2);
	keep_step(&w, c, true, "its minAvailable changed");
	pdb(&w, "app", "h", 2);
	keep_step(&w, c, true, "its selector takes no pod any more");
	pdb(&w, NULL, NULL, 0);
	keep_step(&w, c, false, "it is gone");
	pending_gang(&w);
	keep_step(&w, c, true, "a pending gang added");
	node(&w, 4);
	keep_step(&w, c, false, "a Node changed");
	accel_node(&w, 2);
	keep_step(&w, c, false, "a Node with a label that adds a level");
	keep_step(&w, c, true, "nothing changed since");
	node(&w, 2);
	keep_step(&w, c, false, "that label gone again");
	keep_step(&w, c, true, "nothing changed since");
	node_gone(&w, "n05");
	keep_step(&w, c, false, "a Node removed");
	node(&w, w.nnodes++);
	keep_step(&w, c, false, "a Node added");
	o = put(&w, "Pod", "v1", "default", "x0");
	if (o)
		snprintf(o->text, sizeof(o->text),
			 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{"
			 "\"name\":\"x0\",\"namespace\":\"default\"},\"spec\":{"
			 "\"schedulerName\":\"topogang\",\"containers\":[{"
			 "\"name\":\"c\",\"resources\":{\"requests\":{"
			 "\"vendor.io/fpga\":\"1\"}}}]},\"status\":{"
			 "\"phase\":\"Pending\"}}");
	keep_step(&w, c, false, "a resource no node had asked for first");
	keep_step(&w, c, true, "nothing changed since");
	tg_k8s_cache_clear(c);
	keep_first(&w, c, "after tg_k8s_cache_clear()");
	keep_step(&w, c, true, "and the build after it");
	tg_k8s_cache_destroy(c);
}

/* Node \p i with labels a (n00 only), b and c (its rack by either). */
static void cnt_node(world *w, unsigned i)
{
	obj *o;
	char name[16];

	snprintf(name, sizeof(name), "n%02u", i);
	o = put(w, "Node", "v1", "", name);
	if (o)
		snprintf(o->text, sizeof(o->text),
			 "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{"
			 "\"name\":\"%s\",\"labels\":{\"kubernetes.io/hostname\":"
			 "\"%s\",%s\"example.com/b\":\"b%u\",\"example.com/c\":"
			 "\"c%u\"}},\"spec\":{},\"status\":{\"allocatable\":{"
			 "\"cpu\":\"16\",\"memory\":\"64Gi\",\"pods\":\"110\"}}}",
			 name, name, i ? "" : "\"example.com/a\":\"a0\",", i / 2,
			 i % 2);
}

/* Koordinator's ClusterNetworkTopology with one level, RackLayer, whose
 * label is the first of \p keys (a JSON list's items) a node carries. */
static void cnt_levels(world *w, const char *keys)
{
	obj *o = put(w, "ClusterNetworkTopology",
		     "scheduling.koordinator.sh/v1alpha1", "", "default");

	if (o)
		snprintf(o->text, sizeof(o->text),
			 "{\"apiVersion\":\"scheduling.koordinator.sh/v1alpha1\","
			 "\"kind\":\"ClusterNetworkTopology\",\"metadata\":{"
			 "\"name\":\"default\"},\"spec\":{\"networkTopologySpec\":"
			 "[{\"topologyLayer\":\"RackLayer\",\"labelKey\":[%s]}]}}",
			 keys);
}

/*
 * A level's label keys past the first (a ClusterNetworkTopology layer's
 * labelKey list: a node's domain is its first key the node carries)
 * changed while the first and the Nodes stayed: the kept topology's node
 * paths were read with the old keys, so it is built afresh.
 */
static void test_keep_keys(void)
{
	static world w;
	tg_k8s_cache *c = tg_k8s_cache_create();
	unsigned i;

	memset(&w, 0, sizeof(w));
	w.rng = 99;
	for (i = 0; i < 4; i++)
		cnt_node(&w, w.nnodes++);
	cnt_levels(&w, "\"example.com/a\",\"example.com/b\"");
	keep_first(&w, c, "levels a, b");
	keep_step(&w, c, true, "levels a, b again");
	cnt_levels(&w, "\"example.com/a\",\"example.com/c\"");
	keep_step(&w, c, false, "levels a, c (the second key changed)");
	keep_step(&w, c, true, "levels a, c again");
	cnt_levels(&w, "\"example.com/a\"");
	keep_step(&w, c, false, "levels a (the second key gone)");
	tg_k8s_cache_destroy(c);
}

/* Builds in oom_run(): the second updates the kept topology. */
#define OOM_BUILDS 3

/* A small world, builds with one cache and a change between them (the
 * first change a bound pod added and another gone, so that the second
 * build updates the kept topology; then random ones): what they give
 * ("" when a build failed), or the first error; *reused: the second
 * build updated the kept topology. */
static tg_err oom_run(char **out, bool *reused)
{
	static world w;
	tg_k8s_cache *c;
	built a;
	unsigned i;
	tg_err err = TG_OK;

	for (i = 0; i < OOM_BUILDS; i++)
		out[i] = NULL;
	*reused = false;
	memset(&w, 0, sizeof(w));
	w.rng = 5;
	w.hi_prio = 1000;
	prioclasses(&w);
	for (i = 0; i < 4; i++)
		node(&w, w.nnodes++);
	for (i = 0; i < 8; i++) {
		char name[32];

		snprintf(name, sizeof(name), "b%u", w.npods++);
		bound_pod(&w, name);
	}
	pending_gang(&w);
	c = tg_k8s_cache_create();
	if (!c)
		return TG_ENOMEM;
	for (i = 0; i < OOM_BUILDS && !err; i++) {
		a = build(&w, c);
		err = a.err;
		oom_paused = true;	/* reading the result allocates */
		if (!err)
			out[i] = describe(&a);
		if (i == 1)
			*reused = tg_k8s_cache_reused(c);
		oom_paused = false;
		built_free(&a);
		if (i == 0) {
			char name[32];

			snprintf(name, sizeof(name), "b%u", w.npods++);
			bound_pod(&w, name);
			pod_gone(&w, "b1");
		} else {
			delta(&w);
			delta(&w);
		}
	}
	tg_k8s_cache_destroy(c);
	return err;
}

/*
 * Every allocation failed in turn: a build with the cache either fails
 * with TG_ENOMEM or gives what it gives without a failure (a record
 * that could not be made is a pod parsed again, a kept topology that
 * could not be copied is built again), and nothing leaks.
 */
static void test_oom(bool once)
{
	const char *how = once ? "oom, one failure" : "oom, from N on";
	char *ref[OOM_BUILDS], *o[OOM_BUILDS];
	unsigned wrong = 0, leaks = 0, differ = 0, i;
	long n;
	bool done = false, reused, ref_reused;

	if (oom_run(ref, &ref_reused) != TG_OK || !ref[0] || !ref[1] ||
	    !ref[2]) {
		ok(0, "oom: the reference run works");
		return;
	}
	ok(ref_reused, "%s: the reference run's second build updates the "
	   "kept topology", how);
	tg_set_allocator(oom_malloc, oom_realloc, oom_free);
	for (n = 1; n < 200000 && !done; n++) {
		tg_err err;
		bool same = true;

		oom_at = n;
		oom_calls = oom_live = 0;
		oom_hit = oom_paused = false;
		oom_once = once;
		err = oom_run(o, &reused);
		if (!oom_hit)
			done = true;
		if (err != TG_OK && err != TG_ENOMEM && !wrong++)
			diag("allocation %ld: %s", n, tg_strerror(err));
		for (i = 0; i < OOM_BUILDS; i++)
			same = same && o[i] && strcmp(o[i], ref[i]) == 0;
		if (err == TG_OK && !same && !differ++)
			diag("allocation %ld: a build that worked differs", n);
		for (i = 0; i < OOM_BUILDS; i++)
			free(o[i]);
		if (oom_live && !leaks++)
			diag("allocation %ld: %ld blocks leaked", n, oom_live);
	}
	tg_set_allocator(NULL, NULL, NULL);
	oom_at = 0;
	oom_once = false;
	ok(done, "%s: every allocation was failed (%ld)", how, n - 1);
	is_int(wrong, 0, "%s: every failure says TG_ENOMEM", how);
	is_int(differ, 0, "%s: a build that works gives the full build's "
	       "result, however many records could not be made", how);
	is_int(leaks, 0, "%s: nothing leaks", how);
	for (i = 0; i < OOM_BUILDS; i++)
		free(ref[i]);
}

int main(void)
{
	const char *env = getenv("TG_SEED");
	uint64_t s;

	test_api();
	test_objects_api();
	test_turnover();
	test_node_ids();
	test_keep();
	test_keep_keys();
	test_oom(false);
	test_oom(true);
	if (env && *env) {
		run_seed(strtoull(env, NULL, 10));
		return done_testing();
	}
	for (s = 1; s <= 12; s++)
		run_seed(s);
	return done_testing();
}
