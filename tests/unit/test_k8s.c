/*
 * tests/unit/test_k8s.c - the Kubernetes snapshot loader.
 *
 * Each case loads a small cluster (inline YAML/JSON, or a file under
 * $TG_SRCDIR/tests/data/k8s) and checks what the core gets: layers, nodes,
 * allocations and the gangs, down to their pod sets (through the private
 * layout in shared/src/gang.h), then places the gangs where the outcome
 * is the point (the seed's Koordinator examples).  tg_topology_check()
 * runs after every successful build.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "tap.h"
#include "oom.h"
#include "testdata.h"
#include "topogang/topogang.h"
#include "gang.h"	/* the private layout, to check what was built */

/* ---- helpers ----------------------------------------------------------- */

typedef struct load {
	tg_k8s *k;
	tg_topology *t;
	tg_err err;
	tg_errinfo ei;
} load;

static void load_free(load *l)
{
	tg_k8s_destroy(l->k);
	tg_topology_destroy(l->t);
	memset(l, 0, sizeof(*l));
}

/* Adds \p text (named \p src) and builds; levels/scheduler optional. */
static load load_text(const char *src, const char *text)
{
	load l;

	memset(&l, 0, sizeof(l));
	l.k = tg_k8s_create();
	l.err = tg_k8s_add(l.k, text, strlen(text), src, &l.ei);
	if (!l.err)
		l.err = tg_k8s_build(l.k, &l.t, &l.ei);
	if (!l.err) {
		tg_errinfo ce;
		tg_err e = tg_topology_check(l.t, &ce);

		if (!ok(e == TG_OK, "%s: topology check passes", src))
			diag("%s", ce.msg);
	} else {
		ok(l.t == NULL, "%s: no topology after an error", src);
		is_int(tg_k8s_ngangs(l.k), 0, "%s: no gangs after an error",
		       src);
	}
	return l;
}

/* Asserts that \p l loaded; its message where not. */
static void loaded_ok(const load *l, const char *what)
{
	is_int(l->err, TG_OK, "%s loads", what);
	if (l->err)
		diag("%s", l->ei.msg);
}

static load load_file(const char *name)
{
	load l;

	memset(&l, 0, sizeof(l));
	l.k = tg_k8s_create();
	l.err = tg_k8s_add_file(l.k, td_path("k8s", name), &l.ei);
	if (!l.err)
		l.err = tg_k8s_build(l.k, &l.t, &l.ei);
	if (l.err)
		diag("%s: %s", name, l.ei.msg);
	return l;
}

static tg_gang *gang(const load *l, const char *name)
{
	unsigned i;

	for (i = 0; i < tg_k8s_ngangs(l->k); i++)
		if (strcmp(tg_gang_name(tg_k8s_gang(l->k, i)), name) == 0)
			return tg_k8s_gang(l->k, i);
	return NULL;
}

static const char *warning_like(const load *l, const char *needle)
{
	unsigned i;

	for (i = 0; i < tg_k8s_nwarnings(l->k); i++)
		if (strstr(tg_k8s_warning(l->k, i), needle))
			return tg_k8s_warning(l->k, i);
	return NULL;
}

#define has_warning(l, needle) \
	ok(warning_like((l), (needle)) != NULL, "warning: %s", (needle))

static const char *failed_msg(const load *l, const char *gang);
static void placed_as(const load *l, const char *name, const char *want,
		      const char *desc);

static const tgi_layer_req *req_of(const tgi_layer_req *arr, unsigned n,
				   const char *layer)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (strcmp(arr[i].layer, layer) == 0)
			return &arr[i];
	return NULL;
}

static int gather_of(const tg_gang *g, const char *layer)
{
	const tgi_layer_req *r = req_of(g->gather, g->ngather, layer);

	return r ? (int)r->a : -1;
}

static int slice_of(const tg_gang *g, const char *layer)
{
	const tgi_layer_req *r = req_of(g->slice, g->nslice, layer);

	return r ? (int)r->a : -1;
}

/* "a,b,c": a pod set's members. */
static const char *members(const tg_gang *g, unsigned ps)
{
	static char buf[4096];
	unsigned i;

	buf[0] = '\0';
	if (!g || ps >= g->nps)
		return "(none)";
	for (i = 0; i < g->ps[ps]->count; i++) {
		size_t n = strlen(buf);

		snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? "," : "",
			 g->ps[ps]->members[i] ? g->ps[ps]->members[i] : "?");
	}
	return buf;
}

/* Places \p g; "STATUS DOMAIN node,node,..." ("" victims). */
static const char *place(tg_topology *t, const tg_gang *g, char *victims,
			 size_t vn)
{
	static char buf[4096];
	tg_decision *d = NULL;
	tg_errinfo ei;
	unsigned i;

	buf[0] = '\0';
	if (victims)
		victims[0] = '\0';
	if (!g || tg_place(t, g, &d, &ei) != TG_OK)
		return "(error)";
	snprintf(buf, sizeof(buf), "%s %s ",
		 tg_status_name(tg_decision_status(d)), tg_decision_domain(d));
	for (i = 0; i < tg_decision_nplacements(d); i++) {
		const tg_placement *p = tg_decision_placement(d, i);
		size_t n = strlen(buf);

		snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? "," : "",
			 tg_topology_node_name(t, p->node));
	}
	for (i = 0; victims && i < tg_decision_nvictims(d); i++) {
		size_t n = strlen(victims);

		snprintf(victims + n, vn - n, "%s%s", i ? "," : "",
			 tg_decision_victim(d, i)->pod);
	}
	tg_decision_free(d);
	return buf;
}

static void addf(char *buf, size_t n, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf + len, n - len, fmt, ap);
	va_end(ap);
}

/* Everything the loader built, as text (to compare two loads). */
static void summary(const load *l, char *buf, size_t n)
{
	unsigned i, j, r;

	buf[0] = '\0';
	if (l->err) {
		addf(buf, n, "error %s", l->ei.msg);
		return;
	}
	for (i = 0; i < tg_topology_nlayers(l->t); i++)
		addf(buf, n, "layer %s [%s]\n", tg_topology_layer_name(l->t, i),
		     tg_topology_layer_key(l->t, i) ?
		     tg_topology_layer_key(l->t, i) : "");
	for (i = 0; i < tg_topology_nnodes(l->t); i++) {
		tg_domain_id d = tg_topology_node_domain(l->t, i);

		addf(buf, n, "node %s %s", tg_topology_node_name(l->t, i),
		     d == TG_NONE ? "-" : tg_topology_domain_path(l->t, d));
		for (r = 0; r < tg_topology_nresources(l->t); r++)
			addf(buf, n, " %s=%lld/%lld",
			     tg_topology_resource_name(l->t, r),
			     (long long)tg_topology_node_free(l->t, i, r),
			     (long long)tg_topology_node_allocatable(l->t, i,
								      r));
		addf(buf, n, "\n");
	}
	addf(buf, n, "allocs %u\n", tg_topology_nallocs(l->t));
	for (i = 0; i < tg_k8s_nfailed(l->k); i++) {
		const char *why = NULL;

		addf(buf, n, "failed %s: %s\n", tg_k8s_failed(l->k, i, &why),
		     why);
		for (j = 0; j < tg_k8s_failed_npods(l->k, i); j++)
			addf(buf, n, " pod %s\n",
			     tg_k8s_failed_pod(l->k, i, j));
	}
	for (i = 0; i < tg_k8s_nwarnings(l->k); i++)
		addf(buf, n, "warning %s\n", tg_k8s_warning(l->k, i));
	for (i = 0; i < tg_k8s_ngangs(l->k); i++) {
		const tg_gang *g = tg_k8s_gang(l->k, i);

		addf(buf, n, "gang %s prio=%lld preempt=%d\n", g->name,
		     (long long)g->priority, g->can_preempt);
		for (j = 0; j < g->ngather; j++)
			addf(buf, n, " gather %s %u\n", g->gather[j].layer,
			     g->gather[j].a);
		for (j = 0; j < g->nslice; j++)
			addf(buf, n, " slice %s %u\n", g->slice[j].layer,
			     g->slice[j].a);
		for (j = 0; j < g->nspread; j++)
			addf(buf, n, " spread %s %u %d\n", g->spread[j].layer,
			     g->spread[j].a, g->spread[j].hard);
		for (j = 0; j < g->nps; j++) {
			addf(buf, n, " podset %s", g->ps[j]->name);
			for (r = 0; r < TG_MAX_RESOURCES; r++)
				if (g->ps[j]->shape.v[r])
					addf(buf, n, " r%u=%lld", r,
					     (long long)g->ps[j]->shape.v[r]);
			addf(buf, n, " max=%u sel=%u terms=%u tol=%u aff=%u "
			     "[%s]\n", g->ps[j]->max_per_node, g->ps[j]->nsel,
			     g->ps[j]->nterms, g->ps[j]->ntol, g->ps[j]->naff,
			     members(g, j));
		}
		addf(buf, n, " -> %s\n", place(l->t, g, NULL, 0));
	}
	for (i = 0; i < tg_k8s_nwarnings(l->k); i++)
		addf(buf, n, "warning %s\n", tg_k8s_warning(l->k, i));
}

/* ---- the seed's Koordinator examples ----------------------------------- */

static void test_seed_prefer(void)
{
	static char sy[65536], sj[65536];
	load y = load_file("seed-prefer.yaml");
	load j = load_file("seed-prefer.json");
	const tg_gang *g;

	is_int(y.err, TG_OK, "seed-prefer.yaml loads");
	is_int(j.err, TG_OK, "seed-prefer.json loads");
	if (y.err || j.err)
		goto out;
	is_int(tg_topology_nnodes(y.t), 12, "12 nodes");
	is_int(tg_topology_nlayers(y.t), 2, "two layers");
	is_str(tg_topology_layer_name(y.t, 0), "SpineLayer",
	       "layer 0 is SpineLayer (ClusterNetworkTopology default)");
	is_str(tg_topology_layer_key(y.t, 0),
	       "network.topology.nvidia.com/spine", "... read from spine");
	is_str(tg_topology_layer_name(y.t, 1), "BlockLayer", "layer 1");
	is_str(tg_topology_domain_path(y.t, tg_topology_node_domain(y.t, 4)),
	       "spine-0/block-1", "node-4 sits in spine-0/block-1");
	is_int(tg_topology_node_allocatable(y.t, 0, TG_RES_CPU), 8000,
	       "8 cpu = 8000m");
	is_int(tg_topology_node_allocatable(y.t, 0, TG_RES_MEMORY),
	       34359738368LL, "32Gi");
	is_int(tg_k8s_ngangs(y.k), 1, "one gang");
	g = tg_k8s_gang(y.k, 0);
	is_str(tg_gang_name(g), "default/topology-demo-job", "its name");
	is_int(tg_gang_nmembers(g), 4, "4 members");
	is_int(tg_gang_npodsets(g), 1, "one pod set");
	is_str(tg_gang_member(g, 0), "default/training-pod-0",
	       "tg_gang_member: rank 0 is the pod, namespace/name");
	is_str(tg_gang_member(g, 3), "default/training-pod-3",
	       "tg_gang_member: rank 3");
	ok(tg_gang_member(g, 4) == NULL, "tg_gang_member: past the end");
	is_str(members(g, 0),
	       "default/training-pod-0,default/training-pod-1,"
	       "default/training-pod-2,default/training-pod-3",
	       "members follow network-topology-index, not file order");
	is_int(gather_of(g, "BlockLayer"), TG_GATHER_PREFER,
	       "PreferGather on BlockLayer");
	is_int(gather_of(g, "SpineLayer"), TG_GATHER_PREFER,
	       "PreferGather on SpineLayer");
	is_int(g->ps[0]->shape.v[TG_RES_CPU], 8000, "shape: 8 cpu");
	is_int(g->ps[0]->shape.v[TG_RES_PODS], 1, "shape: one pod slot");
	{
		/* the read-back accessors (the bridge's mixed mode) */
		tg_gather how = TG_GATHER_NONE;
		unsigned i, pref = 0;

		is_int(tg_gang_podset_count(g, 0), 4, "read back: 4 members");
		is_int(tg_gang_podset_shape(g, 0)->v[TG_RES_CPU], 8000,
		       "read back: the shape");
		is_str(tg_gang_podset_member(g, 0, 3), "default/training-pod-3",
		       "read back: member 3");
		ok(!tg_gang_podset_member(g, 0, 4) && !tg_gang_podset_shape(g, 1)
		   && tg_gang_podset_count(g, 1) == 0,
		   "read back: out of range is NULL / 0");
		is_int(tg_gang_ngathers(g), 2, "read back: two gather requests");
		for (i = 0; i < tg_gang_ngathers(g); i++)
			pref += tg_gang_gather_at(g, i, &how) != NULL &&
				how == TG_GATHER_PREFER;
		is_int(pref, 2, "read back: both PreferGather");
		ok(!tg_gang_gather_at(g, 2, &how) && tg_gang_nspreads(g) == 0 &&
		   !tg_gang_spread_at(g, 0, NULL, NULL),
		   "read back: no spread");
	}
	{
		tg_gang *sg = tg_gang_create("default/spread");
		unsigned skew = 0;
		bool hard = false;

		ok(sg && tg_gang_add_spread(sg, "block", 2, true) == TG_OK &&
		   tg_gang_nspreads(sg) == 1 &&
		   strcmp(tg_gang_spread_at(sg, 0, &skew, &hard), "block") == 0
		   && skew == 2 && hard, "read back: a spread request");
		tg_gang_destroy(sg);
	}
	is_str(place(y.t, g, NULL, 0),
	       "placed SpineLayer/spine-1 node-5,node-6,node-7,node-8",
	       "placed on spine-1, node-5..node-8 (the seed's answer)");
	summary(&y, sy, sizeof(sy));
	summary(&j, sj, sizeof(sj));
	is_str(sj, sy, "the JSON List and the YAML stream give the same "
	       "result");
out:
	load_free(&y);
	load_free(&j);
}

static void test_seed_preempt(void)
{
	static char sy[65536], sj[65536];
	char victims[1024];
	load y = load_file("seed-preempt.yaml");
	load j = load_file("seed-preempt.json");
	const tg_gang *g;
	tg_node_id n5;

	is_int(y.err, TG_OK, "seed-preempt.yaml loads");
	is_int(j.err, TG_OK, "seed-preempt.json (a JSON stream) loads");
	if (y.err || j.err)
		goto out;
	is_int(tg_topology_nallocs(y.t), 3, "three running pods");
	ok(tg_topology_node_find(y.t, "node-5", &n5) == TG_OK, "node-5");
	is_int(tg_topology_node_free(y.t, n5, TG_RES_CPU), 0,
	       "node-5's cpu is taken");
	g = gang(&y, "default/high-priority-training");
	ok(g != NULL, "the high-priority gang");
	if (!g)
		goto out;
	is_int(tg_gang_priority(g), 1000000, "priority from PriorityClass");
	is_int(g->can_preempt, 1, "PreemptLowerPriority may preempt");
	is_int(gather_of(g, "SpineLayer"), TG_GATHER_MUST,
	       "MustGather on SpineLayer");
	is_str(place(y.t, g, victims, sizeof(victims)),
	       "preempting SpineLayer/spine-1 node-5,node-6,node-7,node-8",
	       "preempts inside spine-1");
	is_str(victims, "default/low-priority-pod-5",
	       "the one victim is low-priority-pod-5");
	summary(&y, sy, sizeof(sy));
	summary(&j, sj, sizeof(sj));
	is_str(sj, sy, "YAML and JSON stream give the same result");
out:
	load_free(&y);
	load_free(&j);
}

/* The same cluster, documents in another order: the same result. */
static void test_order_independence(void)
{
	static char s1[65536], s2[65536];
	char *text = td_read("k8s", "seed-preempt.yaml", NULL);
	char *docs[64], *p;
	int nd = 0, i;
	load a, b;

	ok(text != NULL, "read seed-preempt.yaml");
	if (!text)
		return;
	/* split on "---\n" and reverse */
	for (p = strstr(text, "---\n"); p && nd < 64; p = strstr(p, "---\n")) {
		*p = '\0';
		p += 4;
		docs[nd++] = p;
	}
	{
		static char rev[65536];

		rev[0] = '\0';
		for (i = nd - 1; i >= 0; i--)
			addf(rev, sizeof(rev), "---\n%s", docs[i]);
		a = load_file("seed-preempt.yaml");
		b = load_text("reversed.yaml", rev);
	}
	is_int(b.err, TG_OK, "reversed documents load");
	summary(&a, s1, sizeof(s1));
	summary(&b, s2, sizeof(s2));
	is_str(s2, s1, "document order does not change the result");
	load_free(&a);
	load_free(&b);
	free(text);
}

/* ---- small clusters ---------------------------------------------------- */

#define NODE(name, labels, alloc)					\
	"---\napiVersion: v1\nkind: Node\nmetadata: {name: " name	\
	", labels: {" labels "}}\nstatus: {allocatable: {" alloc "}}\n"
#define POD(name, meta, spec)						\
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name	\
	", namespace: default" meta "}\nspec: {" spec "}\n"
#define CPU(x)								\
	"containers: [{name: c, resources: {requests: {cpu: \"" x "\"}}}]"
#define TS(t) ", creationTimestamp: \"2026-01-01T00:00:0" t "Z\""

static void test_priority_order(void)
{
	static const char text[] =
		"---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
		"metadata: {name: normal}\nvalue: 100\nglobalDefault: true\n"
		"---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
		"metadata: {name: high}\nvalue: 1000\n"
		"preemptionPolicy: Never\n"
		NODE("n1", "", "cpu: \"64\"")
		POD("p-a", TS("2"), CPU("1"))
		POD("p-b", TS("5"), "priority: 5000, " CPU("1"))
		POD("p-c", TS("5"), "priorityClassName: high, " CPU("1"))
		POD("p-d", TS("1"), CPU("1"))
		POD("job-10", TS("3"), CPU("1"))
		POD("job-9", TS("3"), CPU("1"))
		POD("p-none", "", CPU("1"))
		POD("p-crit", TS("9"), "priorityClassName: "
		    "system-node-critical, " CPU("1"))
		POD("p-gone", "", "priorityClassName: nosuch, " CPU("1"));
	static const char *const want[] = {
		"default/p-crit", "default/p-b", "default/p-c",
		"default/p-d", "default/p-a", "default/job-9",
		"default/job-10", "default/p-gone", "default/p-none",
	};
	load l = load_text("prio.yaml", text);
	unsigned i;

	loaded_ok(&l, "priority cluster");
	is_int(tg_k8s_ngangs(l.k), 9, "nine lone pods, nine gangs");
	for (i = 0; i < 9 && i < tg_k8s_ngangs(l.k); i++)
		is_str(tg_gang_name(tg_k8s_gang(l.k, i)), want[i],
		       "decision order %u", i);
	ok(gang(&l, "default/p-c") &&
	   !gang(&l, "default/p-c")->can_preempt,
	   "preemptionPolicy Never from the class: may not preempt");
	ok(gang(&l, "default/p-a") && gang(&l, "default/p-a")->can_preempt,
	   "the default may preempt");
	is_int(tg_gang_priority(gang(&l, "default/p-a")), 100,
	       "globalDefault class applies");
	is_int(tg_gang_priority(gang(&l, "default/p-crit")), 2000001000,
	       "built-in system-node-critical");
	is_int(tg_gang_priority(gang(&l, "default/p-gone")), 100,
	       "unknown class: the global default");
	has_warning(&l, "no PriorityClass 'nosuch'");
	load_free(&l);
}

static void test_requests(void)
{
	static const char text[] =
		NODE("n1", "", "cpu: \"64\", memory: 64Gi, nvidia.com/gpu: "
		     "\"8\", rdma/ib: \"4\", pods: \"110\", "
		     "ephemeral-storage: 100Gi")
		"---\napiVersion: v1\nkind: Pod\n"
		"metadata: {name: big, namespace: default}\n"
		"spec:\n"
		"  nodeName: n1\n"
		"  overhead: {cpu: 100m}\n"
		"  initContainers:\n"
		"  - name: side\n"
		"    restartPolicy: Always\n"
		"    resources: {requests: {cpu: 500m, memory: 100Mi}}\n"
		"  - name: init\n"
		"    resources: {requests: {cpu: \"4\"}}\n"
		"  containers:\n"
		"  - name: a\n"
		"    resources:\n"
		"      requests: {cpu: \"1\", memory: 1Gi, rdma/ib: \"1\"}\n"
		"  - name: b\n"
		"    resources:\n"
		"      requests: {memory: 512Mi}\n"
		"      limits: {cpu: \"2\", memory: 8Gi, nvidia.com/gpu: 2}\n"
		"status: {phase: Running}\n"
		"---\napiVersion: v1\nkind: Pod\n"
		"metadata: {name: done, namespace: default}\n"
		"spec: {nodeName: n1, " CPU("60") "}\n"
		"status: {phase: Succeeded}\n";
	load l = load_text("requests.yaml", text);
	unsigned rdma;

	loaded_ok(&l, "requests cluster");
	if (l.err) {
		diag("%s", l.ei.msg);
		return;
	}
	is_int(tg_topology_nallocs(l.t), 1, "the Succeeded pod holds nothing");
	/* cpu: max(1 + 2 + 0.5, 4 + 0.5) + 0.1 = 4.6 */
	is_int(tg_topology_node_free(l.t, 0, TG_RES_CPU), 64000 - 4600,
	       "cpu = max(containers + sidecar, init + sidecar) + overhead");
	is_int(tg_topology_node_free(l.t, 0, TG_RES_MEMORY),
	       64LL * 1073741824 - (1073741824LL + 536870912 + 104857600),
	       "memory: requests win over limits");
	is_int(tg_topology_node_free(l.t, 0, TG_RES_GPU), 6,
	       "nvidia.com/gpu: the limit stands in for the request");
	is_int(tg_topology_node_free_gpus(l.t, 0), 0xfc,
	       "GPUs 0 and 1 held");
	ok(tg_topology_resource(l.t, "rdma/ib", &rdma) == TG_OK,
	   "rdma/ib is a resource");
	is_int(tg_topology_node_free(l.t, 0, rdma), 3,
	       "extended resource taken");
	ok(tg_topology_nresources(l.t) == 5,
	   "only requested resources are tracked (not ephemeral-storage)");
	load_free(&l);
}

static void test_scheduler_plugins(void)
{
	static const char text[] =
		NODE("n1", "", "cpu: \"64\"")
		"---\napiVersion: scheduling.x-k8s.io/v1alpha1\n"
		"kind: PodGroup\nmetadata: {name: ready, namespace: default}\n"
		"spec: {minMember: 3}\n"
		"---\napiVersion: scheduling.x-k8s.io/v1alpha1\n"
		"kind: PodGroup\nmetadata: {name: short, namespace: default}\n"
		"spec: {minMember: 4}\n"
		POD("r-1", ", labels: {scheduling.x-k8s.io/pod-group: ready}",
		    CPU("1"))
		POD("r-0", ", labels: {scheduling.x-k8s.io/pod-group: ready}",
		    CPU("1"))
		POD("r-2", ", labels: {scheduling.x-k8s.io/pod-group: ready}",
		    "nodeName: n1, " CPU("1"))
		POD("s-0", ", labels: {scheduling.x-k8s.io/pod-group: short}",
		    CPU("1"))
		POD("s-1", ", labels: {scheduling.x-k8s.io/pod-group: short}",
		    CPU("1"))
		POD("o-0", ", labels: {scheduling.x-k8s.io/pod-group: orphan}",
		    CPU("1"));
	load l = load_text("sp.yaml", text);
	const tg_gang *g;

	loaded_ok(&l, "scheduler-plugins cluster");
	is_int(tg_k8s_ngangs(l.k), 1, "one gang (one not ready, one "
	       "waiting for its PodGroup)");
	g = gang(&l, "default/ready");
	ok(g != NULL, "gang default/ready");
	is_str(members(g, 0), "default/r-0,default/r-1",
	       "its two pending pods, in name order");
	has_warning(&l, "gang default/ready: 1 member already running");
	ok(gang(&l, "default/short") == NULL, "default/short is not a gang");
	is_str(failed_msg(&l, "default/short"), "the gang needs 4 pods and "
	       "fewer are pending or running; it waits for the rest",
	       "2 of 4 pods: it waits for the rest, saying its size");
	ok(gang(&l, "default/orphan") == NULL,
	   "a group without its PodGroup is no gang");
	is_str(failed_msg(&l, "default/orphan"), "PodGroup default/orphan "
	       "(scheduling.x-k8s.io) not found; the gang waits for it",
	       "it waits for its PodGroup, named");
	is_int(tg_topology_nallocs(l.t), 1, "the running member is counted");
	load_free(&l);
}

static const char koord_text[] =
	NODE("n1", "", "cpu: \"64\"")
	"---\napiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: PodGroup\n"
	"metadata: {name: old, namespace: default}\nspec: {minMember: 2}\n"
	POD("w-b", ", labels: {pod-group.scheduling.sigs.k8s.io/name: "
	    "old}", CPU("1"))
	POD("w-a", ", labels: {pod-group.scheduling.sigs.k8s.io/name: "
	    "old}", CPU("1"))
	POD("x-0", ", annotations: {"
	    "gang.scheduling.koordinator.sh/name: lite, "
	    "gang.scheduling.koordinator.sh/min-available: \"3\", "
	    "gang.scheduling.koordinator.sh/network-topology-index: "
	    "\"1\", "
	    "gang.scheduling.koordinator.sh/network-topology-spec: "
	    "'{\"gatherStrategy\":[{\"layer\":\"BlockLayer\","
	    "\"strategy\":\"MustGather\",\"podCountMultiple\":2},"
	    "{\"layer\":\"SpineLayer\",\"strategy\":"
	    "\"PreferGather\"}]}'}", CPU("1"))
	POD("x-1", ", annotations: {"
	    "gang.scheduling.koordinator.sh/name: lite, "
	    "gang.scheduling.koordinator.sh/network-topology-index: "
	    "\"0\"}", CPU("1"))
	POD("x-2", ", annotations: {"
	    "gang.scheduling.koordinator.sh/name: lite}", CPU("1"))
	POD("x-10", ", annotations: {"
	    "gang.scheduling.koordinator.sh/name: lite}", CPU("1"))
	/* a GangGroup of two PodGroups */
	"---\napiVersion: scheduling.sigs.k8s.io/v1alpha1\n"
	"kind: PodGroup\nmetadata:\n  name: llm-master\n"
	"  namespace: default\n  annotations:\n"
	"    gang.scheduling.koordinator.sh/groups: "
	"'[\"default/llm-master\", \"default/llm-worker\"]'\n"
	"spec: {minMember: 1}\n"
	"---\napiVersion: scheduling.sigs.k8s.io/v1alpha1\n"
	"kind: PodGroup\nmetadata:\n  name: llm-worker\n"
	"  namespace: default\n  annotations:\n"
	"    gang.scheduling.koordinator.sh/groups: "
	"'[\"default/llm-master\", \"default/llm-worker\"]'\n"
	"spec: {minMember: 2}\n"
	POD("master-0", ", labels: {pod-group.scheduling.sigs.k8s.io: "
	    "llm-master}", CPU("2"))
	POD("worker-0", ", labels: {pod-group.scheduling.sigs.k8s.io: "
	    "llm-worker}", CPU("4"))
	POD("worker-1", ", labels: {pod-group.scheduling.sigs.k8s.io: "
	    "llm-worker}", CPU("4"));

/*
 * Pods that name a group object the snapshot lacks wait for it, as the
 * dialects' schedulers make them wait (scheduler-plugins' PodGroupNotFound,
 * Koordinator's "gang has not init", KAI's pod groups): listed with
 * tg_k8s_failed_waits() and a message naming the object, never placed as
 * a gang of the pods present.  Once the object comes, the gang is built
 * with its minMember.  Gangs defined on the pods need no object.
 */
#define SPG(name, min)							\
	"---\napiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"	\
	"metadata: {name: " name ", namespace: default}\n"		\
	"spec: {minMember: " min "}\n"
#define SPOD(name, pg)							\
	POD(name, ", labels: {scheduling.x-k8s.io/pod-group: " pg "}",	\
	    CPU("1"))

/* The index of listed gang \p name, or -1. */
static int failed_index(const load *l, const char *name)
{
	unsigned i;

	for (i = 0; i < tg_k8s_nfailed(l->k); i++)
		if (strcmp(tg_k8s_failed(l->k, i, NULL), name) == 0)
			return (int)i;
	return -1;
}

static void test_pods_before_podgroup(void)
{
	static const char pods[] =
		NODE("n1", "", "cpu: \"64\"")
		SPOD("t-0", "train") SPOD("t-1", "train");
	static const char later[] =
		NODE("n1", "", "cpu: \"64\"")
		SPOD("t-0", "train") SPOD("t-1", "train") SPG("train", "3");
	static const char all[] =
		NODE("n1", "", "cpu: \"64\"")
		SPOD("t-0", "train") SPOD("t-1", "train") SPOD("t-2", "train")
		SPG("train", "3");
	load l = load_text("early.yaml", pods);
	int i;

	loaded_ok(&l, "pods before their PodGroup");
	is_int(tg_k8s_ngangs(l.k), 0, "no gang is built of the pods present");
	i = failed_index(&l, "default/train");
	if (ok(i >= 0, "the gang is listed")) {
		const char *why = NULL;

		ok(tg_k8s_failed_waits(l.k, (unsigned)i), "as waiting, not "
		   "failed");
		tg_k8s_failed(l.k, (unsigned)i, &why);
		is_str(why, "PodGroup default/train (scheduling.x-k8s.io) not "
		       "found; the gang waits for it", "the message names the "
		       "PodGroup");
		is_int(tg_k8s_failed_npods(l.k, (unsigned)i), 2,
		       "with its two pending pods");
		is_str(tg_k8s_failed_pod(l.k, (unsigned)i, 1), "default/t-1",
		       "named");
	}
	ok(!tg_k8s_failed_waits(l.k, 1) && !tg_k8s_failed_waits(NULL, 0),
	   "tg_k8s_failed_waits: false out of range");
	ok(warning_like(&l, "form the gang") == NULL,
	   "no gang formed with a warning");
	load_free(&l);

	l = load_text("later.yaml", later);
	loaded_ok(&l, "the PodGroup came, minMember 3, two pods");
	is_int(tg_k8s_ngangs(l.k), 0, "not ready: not built");
	is_str(failed_msg(&l, "default/train"), "the gang needs 3 pods and "
	       "fewer are pending or running; it waits for the rest",
	       "listed as waiting for its members");
	ok(tg_k8s_nfailed(l.k) == 1 && tg_k8s_failed_waits(l.k, 0),
	   "waiting, not failed");
	ok(warning_like(&l, "not ready") == NULL, "and no warning besides");
	load_free(&l);

	l = load_text("all.yaml", all);
	loaded_ok(&l, "the PodGroup and its three pods");
	is_int(tg_k8s_nfailed(l.k), 0, "nothing waits");
	is_str(members(gang(&l, "default/train"), 0),
	       "default/t-0,default/t-1,default/t-2", "one gang of the three");
	placed_as(&l, "default/train", "placed node/n1 n1,n1,n1",
		  "placed with its PodGroup's minMember");
	load_free(&l);
}

/* Each dialect: which wait for a group object, which form from pods. */
static void test_group_object_waits(void)
{
	static const char text[] =
		NODE("n1", "", "cpu: \"64\"")
		/* Koordinator's pod-group label (and the older one) */
		POD("kl-0", ", labels: {pod-group.scheduling.sigs.k8s.io: kl}",
		    CPU("1"))
		POD("ko-0", ", labels: {pod-group.scheduling.sigs.k8s.io/name: "
		    "ko}", CPU("1"))
		/* the label wins over the gang annotations (Koordinator
		 * inits a gang from a pod only when it has no label) */
		POD("kb-0", ", labels: {pod-group.scheduling.sigs.k8s.io: kb}, "
		    "annotations: {gang.scheduling.koordinator.sh/name: kb, "
		    "gang.scheduling.koordinator.sh/min-available: \"1\"}",
		    CPU("1"))
		/* Koordinator's annotation gang: no object */
		POD("ka-0", ", annotations: {gang.scheduling.koordinator.sh/"
		    "name: ka, gang.scheduling.koordinator.sh/min-available: "
		    "\"1\"}", CPU("1"))
		/* KAI */
		POD("ai-0", ", annotations: {pod-group-name: ai}", CPU("1"))
		/* Kueue plain-pod group: no object */
		POD("q-0", ", labels: {kueue.x-k8s.io/pod-group-name: q}, "
		    "annotations: {kueue.x-k8s.io/pod-group-total-count: "
		    "\"1\"}", CPU("1"))
		/* LeaderWorkerSet replica: no object */
		POD("w-0", ", labels: {leaderworkerset.sigs.k8s.io/name: w, "
		    "leaderworkerset.sigs.k8s.io/group-index: \"0\"}, "
		    "annotations: {leaderworkerset.sigs.k8s.io/size: \"1\"}",
		    CPU("1"));
	static const struct {
		const char *gang, *wait;
	} want[] = {
		{ "default/ai", "PodGroup default/ai (scheduling.run.ai) not "
		  "found; the gang waits for it" },
		{ "default/kb", "PodGroup default/kb (scheduling.sigs.k8s.io) "
		  "not found; the gang waits for it" },
		{ "default/kl", "PodGroup default/kl (scheduling.sigs.k8s.io) "
		  "not found; the gang waits for it" },
		{ "default/ko", "PodGroup default/ko (scheduling.sigs.k8s.io) "
		  "not found; the gang waits for it" },
		{ "default/ka", NULL },
		{ "default/q", NULL },
		{ "default/w-0", NULL },
	};
	load l = load_text("dialects.yaml", text);
	size_t i;

	loaded_ok(&l, "one group per dialect, no group object");
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int f = failed_index(&l, want[i].gang);

		if (want[i].wait) {
			ok(f >= 0 && tg_k8s_failed_waits(l.k, (unsigned)f) &&
			   !gang(&l, want[i].gang), "%s waits", want[i].gang);
			is_str(failed_msg(&l, want[i].gang), want[i].wait,
			       "%s: named", want[i].gang);
		} else {
			ok(f < 0 && gang(&l, want[i].gang), "%s is built "
			   "from its pods (%s)", want[i].gang,
			   failed_msg(&l, want[i].gang));
		}
	}
	is_int(tg_k8s_nfailed(l.k), 4, "four wait, no more");
	load_free(&l);
}

/* A GangGroup one of whose PodGroups is missing waits whole; a real error
 * in one of its groups replaces the wait. */
static void test_ganggroup_waits(void)
{
	static const char text[] =
		NODE("n1", "", "cpu: \"64\"")
		"---\napiVersion: scheduling.sigs.k8s.io/v1alpha1\n"
		"kind: PodGroup\nmetadata: {name: ga, namespace: default, "
		"annotations: {gang.scheduling.koordinator.sh/groups: "
		"'[\"default/ga\",\"default/gb\"]'}}\nspec: {minMember: 1}\n"
		POD("a-0", ", labels: {pod-group.scheduling.sigs.k8s.io: ga}",
		    CPU("1"))
		POD("b-0", ", labels: {pod-group.scheduling.sigs.k8s.io: gb}",
		    CPU("1"));
	static const char nopods[] =
		NODE("n1", "", "cpu: \"64\"")
		"---\napiVersion: scheduling.sigs.k8s.io/v1alpha1\n"
		"kind: PodGroup\nmetadata: {name: ga, namespace: default, "
		"annotations: {gang.scheduling.koordinator.sh/groups: "
		"'[\"default/ga\",\"default/gb\"]'}}\nspec: {minMember: 1}\n"
		"---\napiVersion: scheduling.sigs.k8s.io/v1alpha1\n"
		"kind: PodGroup\nmetadata: {name: gb, namespace: default, "
		"annotations: {gang.scheduling.koordinator.sh/groups: "
		"'[\"default/ga\",\"default/gb\"]'}}\nspec: {minMember: 1}\n"
		POD("a-0", ", labels: {pod-group.scheduling.sigs.k8s.io: ga}",
		    CPU("1"));
	load l = load_text("gg.yaml", text);
	int f;

	loaded_ok(&l, "a GangGroup with one PodGroup missing");
	is_int(tg_k8s_ngangs(l.k), 0, "no part of it is built");
	f = failed_index(&l, "default/ga");
	ok(f >= 0 && tg_k8s_failed_waits(l.k, (unsigned)f) &&
	   tg_k8s_failed_npods(l.k, (unsigned)f) == 2,
	   "the set waits as one, both pods listed");
	is_str(failed_msg(&l, "default/ga"), "PodGroup default/gb "
	       "(scheduling.sigs.k8s.io) not found; the gang waits for it",
	       "naming the missing PodGroup");
	load_free(&l);

	l = load_text("gg-nopods.yaml", nopods);
	loaded_ok(&l, "a GangGroup one of whose groups has no pods yet");
	is_int(tg_k8s_ngangs(l.k), 0, "not built");
	f = failed_index(&l, "default/ga");
	ok(f >= 0 && tg_k8s_failed_waits(l.k, (unsigned)f),
	   "the set waits");
	is_str(failed_msg(&l, "default/ga"), "GangGroup member 'default/gb' "
	       "has no pods in the snapshot; the gang waits for it",
	       "naming the member without pods");
	load_free(&l);
}

static void test_koordinator(void)
{
	const char *text = koord_text;
	load l = load_text("koord.yaml", text);
	const tg_gang *g;

	loaded_ok(&l, "Koordinator cluster");
	g = gang(&l, "default/old");
	ok(g != NULL, "the deprecated label groups pods");
	is_str(members(g, 0), "default/w-a,default/w-b", "in name order");
	g = gang(&l, "default/lite");
	ok(g != NULL, "the annotation gang");
	is_str(members(g, 0),
	       "default/x-1,default/x-0,default/x-2,default/x-10",
	       "indexed first by index, unindexed last by natural name");
	if (g) {
		is_int(gather_of(g, "BlockLayer"), TG_GATHER_MUST,
		       "MustGather on BlockLayer");
		is_int(gather_of(g, "SpineLayer"), TG_GATHER_PREFER,
		       "PreferGather on SpineLayer");
		is_int(slice_of(g, "BlockLayer"), 2,
		       "podCountMultiple 2 is a slice of 2");
	}
	g = gang(&l, "default/llm-master");
	ok(g != NULL, "the GangGroup is one gang, named by its first group");
	ok(gang(&l, "default/llm-worker") == NULL, "... not two");
	if (g) {
		is_int(tg_gang_npodsets(g), 2, "two pod sets");
		is_str(g->ps[0]->name, "llm-master", "the master's set");
		is_str(members(g, 1), "default/worker-0,default/worker-1",
		       "the workers' set");
		is_str(g->ps[1]->name, "llm-worker", "named by its group");
	}
	load_free(&l);
}

static void test_kai(void)
{
	static const char text[] =
		NODE("n1", "ex.com/zone: z1, ex.com/rack: r1",
		     "cpu: \"64\"")
		NODE("n2", "ex.com/zone: z1, ex.com/rack: r2",
		     "cpu: \"64\"")
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\n"
		"metadata: {name: aaa}\n"
		"spec: {levels: [{nodeLabel: ex.com/zone}]}\n"
		"---\napiVersion: kai.scheduler/v1alpha1\nkind: Topology\n"
		"metadata: {name: topo-a}\n"
		"spec:\n  levels:\n"
		"  - {nodeLabel: ex.com/zone, alias: zone}\n"
		"  - {nodeLabel: ex.com/rack, alias: rack}\n"
		"  - {nodeLabel: kubernetes.io/hostname}\n"
		"---\napiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\n"
		"metadata: {name: pg-kai, namespace: default}\n"
		"spec:\n  minMember: 2\n  preemptibility: non-preemptible\n"
		"  topologyConstraint: {topology: topo-a, "
		"requiredTopologyLevel: zone, "
		"preferredTopologyLevel: ex.com/rack}\n"
		POD("k-0", ", annotations: {pod-group-name: pg-kai}", CPU("1"))
		POD("k-1", ", annotations: {pod-group-name: pg-kai}", CPU("1"))
		POD("s-0", ", annotations: {kai.scheduler/topology: topo-a, "
		    "kai.scheduler/topology-required-placement: rack, "
		    "kai.scheduler/segment-size: \"2\", "
		    "kai.scheduler/segment-topology-required-placement: "
		    "rack}", CPU("1"));
	load l = load_text("kai.yaml", text);
	const tg_gang *g;

	loaded_ok(&l, "KAI cluster");
	is_int(tg_topology_nlayers(l.t), 2,
	       "levels from the Topology the gang names; hostname is the "
	       "node level");
	is_str(tg_topology_layer_name(l.t, 1), "ex.com/rack",
	       "layer name = node label");
	g = gang(&l, "default/pg-kai");
	ok(g != NULL, "KAI PodGroup gang");
	if (g) {
		is_int(tg_gang_nmembers(g), 2, "two members");
		is_int(gather_of(g, "ex.com/zone"), TG_GATHER_MUST,
		       "required 'zone' (alias) -> MUST on ex.com/zone");
		is_int(gather_of(g, "ex.com/rack"), TG_GATHER_PREFER,
		       "preferred rack -> PREFER");
	}
	g = gang(&l, "default/s-0");
	ok(g != NULL, "lone pod with KAI annotations");
	if (g) {
		is_int(gather_of(g, "ex.com/rack"), TG_GATHER_MUST,
		       "pod annotation required placement");
		is_int(slice_of(g, "ex.com/rack"), 2, "segment of 2 on rack");
	}
	load_free(&l);
}

static void test_kueue(void)
{
	static const char text[] =
		NODE("n1", "cloud.com/block: b1, cloud.com/rack: r1",
		     "cpu: \"64\"")
		"---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: Topology\n"
		"metadata: {name: default}\n"
		"spec: {levels: [{nodeLabel: cloud.com/block}, "
		"{nodeLabel: cloud.com/rack}, "
		"{nodeLabel: kubernetes.io/hostname}]}\n"
		POD("a-0", ", labels: {kueue.x-k8s.io/pod-group-name: ga}, "
		    "annotations: {kueue.x-k8s.io/pod-group-total-count: \"2\", "
		    "kueue.x-k8s.io/podset-required-topology: cloud.com/block, "
		    "kueue.x-k8s.io/podset-slice-required-topology: "
		    "cloud.com/rack, kueue.x-k8s.io/podset-slice-size: \"2\"}",
		    CPU("1"))
		POD("a-1", ", labels: {kueue.x-k8s.io/pod-group-name: ga}, "
		    "annotations: {kueue.x-k8s.io/pod-group-total-count: \"2\"}",
		    CPU("1"))
		POD("b-0", ", annotations: {"
		    "kueue.x-k8s.io/podset-preferred-topology: cloud.com/rack, "
		    "kueue.x-k8s.io/podset-slice-required-topology-constraints:"
		    " '[{\"topology\":\"cloud.com/block\",\"size\":4},"
		    "{\"topology\":\"cloud.com/rack\",\"size\":2}]'}", CPU("1"))
		POD("c-0", ", labels: {kueue.x-k8s.io/pod-group-name: gc}, "
		    "annotations: {kueue.x-k8s.io/pod-group-total-count: \"3\"}",
		    CPU("1"))
		POD("g-0", "", "schedulingGates: [{name: kueue.x-k8s.io/"
		    "topology}], " CPU("1"))
		POD("u-0", ", annotations: {"
		    "kueue.x-k8s.io/podset-unconstrained-topology: \"true\"}",
		    CPU("1"));
	load l = load_text("kueue.yaml", text);
	const tg_gang *g;

	loaded_ok(&l, "Kueue cluster");
	is_int(tg_topology_nlayers(l.t), 2, "Kueue Topology levels");
	g = gang(&l, "default/ga");
	ok(g != NULL, "plain-pod group");
	if (g) {
		is_int(tg_gang_nmembers(g), 2, "two members");
		is_int(gather_of(g, "cloud.com/block"), TG_GATHER_MUST,
		       "required -> MUST");
		is_int(slice_of(g, "cloud.com/rack"), 2, "slice of 2 on rack");
	}
	g = gang(&l, "default/b-0");
	ok(g != NULL, "lone pod with multi-layer slices");
	if (g) {
		is_int(gather_of(g, "cloud.com/rack"), TG_GATHER_PREFER,
		       "preferred -> PREFER");
		is_int(slice_of(g, "cloud.com/block"), 4, "block slice 4");
		is_int(slice_of(g, "cloud.com/rack"), 2, "rack slice 2");
	}
	ok(gang(&l, "default/gc") == NULL, "incomplete group is not ready");
	is_str(failed_msg(&l, "default/gc"), "the gang needs 3 pods and "
	       "fewer are pending or running; it waits for the rest",
	       "it waits for its members");
	ok(gang(&l, "default/g-0") == NULL, "gated pod skipped");
	has_warning(&l, "Pod default/g-0: spec.schedulingGates not empty");
	g = gang(&l, "default/u-0");
	ok(g && g->ngather == 0, "unconstrained: no request");
	load_free(&l);
}

/*
 * A Kueue Topology whose last level is kubernetes.io/hostname: a node
 * without that label is not in Kueue's topology, so it is left out of
 * topology-aware placement, with a warning (it was taken as "the node
 * itself" and used silently).
 */
static void test_kueue_hostname(void)
{
	static const char text[] =
		NODE("n1", "cloud.com/block: b1, kubernetes.io/hostname: n1",
		     "cpu: \"8\"")
		NODE("n2", "cloud.com/block: b1", "cpu: \"8\"")
		"---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: Topology\n"
		"metadata: {name: default}\n"
		"spec: {levels: [{nodeLabel: cloud.com/block}, "
		"{nodeLabel: kubernetes.io/hostname}]}\n"
		POD("a-0", ", labels: {kueue.x-k8s.io/pod-group-name: ga}, "
		    "annotations: {kueue.x-k8s.io/pod-group-total-count: "
		    "\"2\", kueue.x-k8s.io/podset-required-topology: "
		    "cloud.com/block}", CPU("8"))
		POD("a-1", ", labels: {kueue.x-k8s.io/pod-group-name: ga}, "
		    "annotations: {kueue.x-k8s.io/pod-group-total-count: "
		    "\"2\"}", CPU("8"));
	load l = load_text("kueue-hostname.yaml", text);
	tg_decision *d = NULL;
	const tg_gang *g;

	loaded_ok(&l, "Kueue Topology ending in hostname");
	if (l.err)
		return;
	has_warning(&l, "node n2: no kubernetes.io/hostname label (the "
		    "topology's node level); left out of topology-aware "
		    "placement");
	g = gang(&l, "default/ga");
	ok(g != NULL, "the gang of two");
	if (g && tg_place(l.t, g, &d, NULL) == TG_OK) {
		is_int(tg_decision_status(d), TG_STATUS_UNSCHEDULABLE,
		       "two whole-node pods: n2 is not eligible, as in Kueue");
		like(tg_decision_message(d), "1 node left out for missing "
		     "topology labels", "the decision says why");
	}
	tg_decision_free(d);
	load_free(&l);
}

static const char lws_text[] =
	NODE("n1", "", "cpu: \"64\", nvidia.com/gpu: \"8\"")
#define LWS(name, grp, idx, extra)					\
	", labels: {leaderworkerset.sigs.k8s.io/name: llm, "	\
	"leaderworkerset.sigs.k8s.io/group-index: \"" grp "\", "	\
	"leaderworkerset.sigs.k8s.io/worker-index: \"" idx "\"}, "	\
	"annotations: {leaderworkerset.sigs.k8s.io/size: \"4\"" extra "}"
	POD("llm-0-3", LWS("llm-0-3", "0", "3", ""),
	    "containers: [{name: w, resources: {limits: "
	    "{nvidia.com/gpu: \"8\"}}}]")
	POD("llm-0", LWS("llm-0", "0", "0",
			 ", leaderworkerset.sigs.k8s.io/"
			 "exclusive-topology: ex.com/rack"), CPU("1"))
	POD("llm-0-1", LWS("llm-0-1", "0", "1", ""),
	    "containers: [{name: w, resources: {limits: "
	    "{nvidia.com/gpu: \"8\"}}}]")
	POD("llm-0-2", LWS("llm-0-2", "0", "2", ""),
	    "containers: [{name: w, resources: {limits: "
	    "{nvidia.com/gpu: \"8\"}}}]")
	POD("llm-1", LWS("llm-1", "1", "0", ""), CPU("1"));

static void test_lws(void)
{
	const char *text = lws_text;
#undef LWS
	load l = load_text("lws.yaml", text);
	const tg_gang *g;

	loaded_ok(&l, "LWS cluster");
	g = gang(&l, "default/llm-0");
	ok(g != NULL, "group 0 is a gang named <lws>-<group>");
	if (g) {
		is_int(tg_gang_npodsets(g), 2, "leader and worker pod sets");
		is_str(g->ps[0]->name, "leader", "leader first");
		is_str(members(g, 0), "default/llm-0", "the leader");
		is_str(g->ps[1]->name, "worker", "then workers");
		is_str(members(g, 1),
		       "default/llm-0-1,default/llm-0-2,default/llm-0-3",
		       "by worker-index");
		is_int(g->ps[1]->shape.v[TG_RES_GPU], 8, "8 GPUs per worker");
		is_int(gather_of(g, "ex.com/rack"), TG_GATHER_MUST,
		       "exclusive-topology gathers");
	}
	has_warning(&l, "exclusivity is not enforced");
	ok(gang(&l, "default/llm-1") == NULL, "group 1 has 1 of 4");
	is_str(failed_msg(&l, "default/llm-1"), "the gang needs 4 pods and "
	       "fewer are pending or running; it waits for the rest",
	       "group 1 waits for its members");
	load_free(&l);
}

static const char constraints_text[] =
	NODE("n1", "topology.kubernetes.io/zone: a, gpu: \"yes\", "
	     "cores: \"8\"", "cpu: \"64\"")
	NODE("n2", "topology.kubernetes.io/zone: b, gpu: \"yes\", "
	     "cores: \"8\"", "cpu: \"64\"")
	"---\napiVersion: v1\nkind: Pod\n"
	"metadata: {name: db-0, namespace: default, labels: "
	"{app: db, tier: x}}\n"
	"spec: {nodeName: n2, " CPU("1") "}\n"
	"---\napiVersion: v1\nkind: Pod\n"
	"metadata: {name: db-1, namespace: other, labels: {app: db}}\n"
	"spec: {nodeName: n1, " CPU("1") "}\n"
#define TWIN(name)							\
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name	\
	", namespace: default}\n"					\
	"spec:\n  affinity:\n    podAffinity:\n"			\
	"      requiredDuringSchedulingIgnoredDuringExecution:\n"	\
	"      - labelSelector: {matchLabels: {tier: x, app: db}}\n"	\
	"        topologyKey: kubernetes.io/hostname\n"		\
	"        namespaces: [default, other]\n"			\
	"      - labelSelector: {matchLabels: {app: db}}\n"		\
	"        topologyKey: kubernetes.io/hostname\n"		\
	"        namespaceSelector: {}\n"				\
	"  " CPU("1") "\n"
	TWIN("twin-a") TWIN("twin-b")
#undef TWIN
	"---\napiVersion: v1\nkind: Pod\n"
	"metadata: {name: sel, namespace: default, labels: {app: x}}\n"
	"spec:\n"
	"  nodeSelector: {gpu: \"yes\"}\n"
	"  tolerations:\n"
	"  - {key: nvidia.com/gpu, operator: Exists, "
	"effect: NoSchedule}\n"
	"  - {operator: Exists}\n"
	"  affinity:\n"
	"    nodeAffinity:\n"
	"      requiredDuringSchedulingIgnoredDuringExecution:\n"
	"        nodeSelectorTerms:\n"
	"        - matchExpressions:\n"
	"          - {key: topology.kubernetes.io/zone, operator: In, "
	"values: [a, b]}\n"
	"          - {key: cores, operator: Gt, values: [\"4\"]}\n"
	"        - {}\n"
	"      preferredDuringSchedulingIgnoredDuringExecution:\n"
	"      - {weight: 1, preference: {matchExpressions: "
	"[{key: x, operator: In, values: [a]}]}}\n"
	"    podAffinity:\n"
	"      requiredDuringSchedulingIgnoredDuringExecution:\n"
	"      - labelSelector: {matchLabels: {app: db}}\n"
	"        topologyKey: topology.kubernetes.io/zone\n"
	"  topologySpreadConstraints:\n"
	"  - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, "
	"whenUnsatisfiable: DoNotSchedule, "
	"labelSelector: {matchLabels: {app: x}}}\n"
	"  - {maxSkew: 2, topologyKey: kubernetes.io/hostname, "
	"whenUnsatisfiable: ScheduleAnyway, "
	"labelSelector: {matchExpressions: [{key: app, operator: "
	"Exists}]}}\n"
	"  - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, "
	"whenUnsatisfiable: DoNotSchedule, "
	"labelSelector: {matchLabels: {app: other}}}\n"
	"  " CPU("1") "\n"
#define ANTI(name)							\
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name	\
	", namespace: default, labels: {app: web, "		\
	"scheduling.x-k8s.io/pod-group: web}}\n"		\
	"spec:\n  affinity:\n    podAntiAffinity:\n"		\
	"      requiredDuringSchedulingIgnoredDuringExecution:\n"	\
	"      - labelSelector: {matchLabels: {app: web}}\n"	\
	"        topologyKey: kubernetes.io/hostname\n"		\
	"      - labelSelector: {matchLabels: {app: db}}\n"	\
	"        topologyKey: topology.kubernetes.io/zone\n"	\
	"  " CPU("1") "\n"
	ANTI("web-0") ANTI("web-1")
#undef ANTI
	"---\napiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
	"metadata: {name: web, namespace: default}\nspec: {minMember: 2}\n";

static void test_constraints(void)
{
	const char *text = constraints_text;
	load l = load_text("constraints.yaml", text);
	const tg_gang *g;

	loaded_ok(&l, "constraints cluster");
	g = gang(&l, "default/sel");
	ok(g != NULL, "the constrained pod");
	if (g) {
		const tgi_podset *p = g->ps[0];

		is_int(p->nsel, 1, "nodeSelector");
		is_str(p->sel_key[0], "gpu", "... on gpu");
		is_str(p->sel_val[0], "yes", "... = yes (a quoted string)");
		is_int(p->nterms, 1, "one node affinity term (the empty "
		       "term, matching no node, left out of the OR)");
		is_int(p->terms[0].n, 2, "two expressions");
		is_int(p->terms[0].exprs[1].op, TG_SEL_GT, "Gt");
		is_int(p->ntol, 2, "two tolerations");
		ok(p->tol[1].key == NULL && p->tol[1].exists,
		   "empty key + Exists tolerates everything");
		is_int(p->tol[0].effect, TG_TAINT_NO_SCHEDULE, "effect");
		is_int(p->naff, 1, "pod affinity to the bound db pod");
		if (p->naff) {
			is_str(p->aff[0].key, "topology.kubernetes.io/zone",
			       "over zone");
			is_int(p->aff[0].npods, 1, "one pod");
			is_str(p->aff[0].pods[0], "default/db-0", "db-0");
			is_int(p->aff[0].anti, 0, "affinity");
		}
		is_int(g->nspread, 0, "no spread over own members only");
		is_int(g->nsspread, 3, "three label-selector spreads");
		if (g->nsspread == 3) {
			const tgi_sspread *z = &g->sspread[0];
			const tgi_sspread *h = &g->sspread[1];

			ok(!strcmp(z->layer, "topology.kubernetes.io/zone") &&
			   z->hard && z->max_skew == 1 && z->selector &&
			   z->nexprs == 1 && !strcmp(z->exprs[0].key, "app") &&
			   z->exprs[0].op == TG_SEL_IN &&
			   !strcmp(z->exprs[0].values[0], "x") &&
			   !strcmp(z->ns, "default") &&
			   !z->ignore_node_affinity && !z->honor_taints,
			   "zone spread: hard, app In (x), namespace default, "
			   "policy defaults");
			ok(!strcmp(h->layer, "kubernetes.io/hostname") &&
			   !h->hard && h->max_skew == 2 && h->nexprs == 1 &&
			   h->exprs[0].op == TG_SEL_EXISTS,
			   "hostname spread: soft, app Exists");
			ok(!strcmp(g->sspread[2].exprs[0].values[0], "other"),
			   "a spread over other pods (app=other) is kept");
		}
		like(place(l.t, g, NULL, 0), "placed ",
		     "placed");
		like(place(l.t, g, NULL, 0), " n2",
		       "affinity to db-0's zone puts it on n2");
	}
	{
		const tg_gang *a = gang(&l, "default/twin-a");
		const tg_gang *b = gang(&l, "default/twin-b");

		ok(a && b, "two pods with the same terms");
		if (a && b && a->ps[0]->naff == 2 && b->ps[0]->naff == 2) {
			is_int(a->ps[0]->aff[0].npods, 1,
			       "matchLabels app+tier: one pod");
			is_str(b->ps[0]->aff[0].pods[0], "default/db-0",
			       "the same answer for the second (cached)");
			is_int(b->ps[0]->aff[1].npods, 2,
			       "namespaceSelector {}: every namespace");
			is_str(b->ps[0]->aff[1].pods[1], "other/db-1",
			       "... other/db-1 too");
		} else {
			ok(0, "two affinity terms each");
		}
	}
	has_warning(&l, "preferred node affinity is not modeled");
	{
		unsigned w;

		for (w = 0; w < tg_k8s_nwarnings(l.k); w++)
			if (strstr(tg_k8s_warning(l.k, w), "spread"))
				break;
		ok(w == tg_k8s_nwarnings(l.k), "no warning about spreads");
	}
	g = gang(&l, "default/web");
	ok(g != NULL, "the web gang");
	if (g) {
		is_int(g->ps[0]->max_per_node, 1,
		       "hostname anti-affinity with its own pods: 1 per node");
		is_int(g->ps[0]->naff, 1, "anti-affinity to db pods");
		if (g->ps[0]->naff)
			ok(g->ps[0]->aff[0].anti &&
			   g->ps[0]->aff[0].npods == 1,
			   "anti, naming db-0");
		is_str(place(l.t, g, NULL, 0), "unschedulable  ",
		       "one per node, away from db's zone: only n1 fits");
	}
	load_free(&l);
}


/*
 * Issue 12, pod (anti-)affinity as kube-scheduler: namespaceSelector over
 * Namespace objects, no cap on the values a term names, running pods'
 * anti-affinity keeping an incoming pod away (the symmetric rule), and
 * pods placed earlier in the pass counting.
 */
#define AFF_NODE(n, z)							\
	"---\napiVersion: v1\nkind: Node\nmetadata: {name: " n ", "	\
	"labels: {kubernetes.io/hostname: " n ", "			\
	"topology.kubernetes.io/zone: " z "}}\n"			\
	"status: {allocatable: {cpu: '8', pods: '110'}}\n"
#define AFF_POD(ns, name, labels, t, spec)				\
	"---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name	\
	", namespace: " ns ", labels: {" labels "}, "			\
	"creationTimestamp: '2026-01-01T00:00:0" t "Z'}\n"		\
	"spec:\n" spec "  " CPU("1") "\n"
#define AFF_TERM(kind, sel, key, extra)					\
	"  affinity:\n    " kind ":\n"					\
	"      requiredDuringSchedulingIgnoredDuringExecution:\n"	\
	"      - labelSelector: {matchLabels: {" sel "}}\n"		\
	"        topologyKey: " key "\n" extra
static const char aff_text[] =
	AFF_NODE("n1", "z1") AFF_NODE("n2", "z1") AFF_NODE("n3", "z2")
	"---\napiVersion: v1\nkind: Namespace\nmetadata: {name: team-a, "
	"labels: {team: a}}\n"
	"---\napiVersion: v1\nkind: Namespace\nmetadata: {name: team-b, "
	"labels: {team: b}}\n"
	/* running: team-a/db-0 on n1; on n2 a filler (so that bin-packing
	 * prefers n2) and guard, whose anti-affinity keeps app=web away */
	AFF_POD("team-a", "db-0", "app: db", "0", "  nodeName: n1\n")
	AFF_POD("default", "filler", "app: filler", "0", "  nodeName: n2\n")
	AFF_POD("default", "guard", "app: guard", "0", "  nodeName: n2\n"
		AFF_TERM("podAntiAffinity", "app: web",
			 "kubernetes.io/hostname", ""))
	/* web-1: near a db of a team=a namespace (zone z1: n1, n2); n2 is
	 * tighter, but guard keeps it off: n1 */
	AFF_POD("default", "web-1", "app: web", "1",
		AFF_TERM("podAffinity", "app: db",
			 "topology.kubernetes.io/zone",
			 "        namespaceSelector: {matchLabels: {team: a}}\n"))
	/* web-2: near a db in team-b: there is none */
	AFF_POD("default", "web-2", "app: web", "2",
		AFF_TERM("podAffinity", "app: db",
			 "topology.kubernetes.io/zone",
			 "        namespaces: [team-b]\n"))
	/* cache-1: away from web pods, zone z2: n3 */
	AFF_POD("default", "cache-1", "app: cache", "3",
		AFF_TERM("podAntiAffinity", "app: web",
			 "kubernetes.io/hostname", "")
		"  nodeSelector: {topology.kubernetes.io/zone: z2}\n")
	/* web-3 on n3 only: cache-1, placed earlier in the pass, keeps it
	 * off (the symmetric rule in the same pass) */
	AFF_POD("default", "web-3", "app: web", "4",
		"  nodeSelector: {kubernetes.io/hostname: n3}\n")
	/* cache-2 in z1, away from web pods: web-1 (placed earlier in the
	 * pass) is on n1, so n2 */
	AFF_POD("default", "cache-2", "app: cache", "5",
		AFF_TERM("podAntiAffinity", "app: web",
			 "kubernetes.io/hostname", "")
		"  nodeSelector: {topology.kubernetes.io/zone: z1}\n");

static void test_pod_affinity_k8s(void)
{
	load l = load_text("affinity.yaml", aff_text);
	char out[1024] = "";
	unsigned i;

	loaded_ok(&l, "affinity cluster");
	for (i = 0; !l.err && i < tg_k8s_ngangs(l.k); i++) {
		tg_gang *g = tg_k8s_gang(l.k, i);
		tg_decision *d = NULL;
		size_t n = strlen(out);

		if (tg_place(l.t, g, &d, NULL)) {
			ok(0, "place %s", tg_gang_name(g));
			continue;
		}
		snprintf(out + n, sizeof(out) - n, "%s%s=%s", i ? " " : "",
			 tg_gang_name(g), tg_decision_nplacements(d) ?
			 tg_topology_node_name(l.t,
				tg_decision_placement(d, 0)->node) : "-");
		if (tg_decision_status(d) == TG_STATUS_PLACED)
			tg_decision_apply(l.t, g, d);
		tg_decision_free(d);
	}
	is_str(out, "default/web-1=n1 default/web-2=- default/cache-1=n3 "
	       "default/web-3=- default/cache-2=n2", "namespaceSelector, "
	       "namespaces, the symmetric rule and pods placed earlier in "
	       "the pass");
	ok(!warning_like(&l, "is not evaluated"),
	   "no warning: namespaceSelector is evaluated");
	has_warning(&l, "Namespace default is not in the snapshot: a "
		    "namespaceSelector sees only its label "
		    "kubernetes.io/metadata.name");
	ok(!warning_like(&l, "Namespace team-a"), "team-a is in it");
	load_free(&l);
}
#undef AFF_NODE
#undef AFF_POD
#undef AFF_TERM

static void test_presets(void)
{
	static const char topograph[] =
		NODE("a", "fabric.topograph.run/tier-0: l1, "
		     "fabric.topograph.run/tier-1: s1, "
		     "fabric.topograph.run/tier-2: c1, "
		     "accelerator.topograph.run/domain: nvl1, "
		     "network.topology.nvidia.com/leaf: l1", "cpu: \"1\"")
		NODE("b", "fabric.topograph.run/tier-0: l2, "
		     "fabric.topograph.run/tier-1: s1, "
		     "fabric.topograph.run/tier-2: c1", "cpu: \"1\"");
	static const char gen1[] =
		NODE("a", "network.topology.nvidia.com/spine: s1, "
		     "network.topology.nvidia.com/block: b1", "cpu: \"1\"");
	static const char gen2[] =
		NODE("a", "network.topology.nvidia.com/core: c1, "
		     "network.topology.nvidia.com/spine: s1, "
		     "network.topology.nvidia.com/leaf: l1, "
		     "network.topology.nvidia.com/accelerator: x",
		     "cpu: \"1\"");
	static const char zone[] =
		NODE("a", "topology.kubernetes.io/zone: z1, "
		     "topology.kubernetes.io/region: r1", "cpu: \"1\"")
		NODE("b", "topology.kubernetes.io/region: r1", "cpu: \"1\"");
	load l;
	const char *keys[] = { "x/y", "kubernetes.io/hostname" };

	l = load_text("topograph.yaml", topograph);
	is_int(tg_topology_nlayers(l.t), 4, "topograph: 3 tiers + domain");
	is_str(tg_topology_layer_key(l.t, 0), "fabric.topograph.run/tier-2",
	       "highest tier first");
	is_str(tg_topology_layer_key(l.t, 2), "fabric.topograph.run/tier-0",
	       "tier-0 last of the tiers");
	is_str(tg_topology_layer_key(l.t, 3),
	       "accelerator.topograph.run/domain", "then the NVL domain");
	has_warning(&l, "node b: no accelerator.topograph.run/domain label");
	ok(tg_topology_node_domain(l.t, 1) != TG_NONE,
	   "node b (no accelerator domain) is its own NVL domain");
	load_free(&l);

	/* 16 tiers fill the topology; a 17th is refused, not dropped (the
	 * loader kept the first 15 it met, in label order) */
	{
		char many[4096];
		size_t n = 0;
		unsigned k;

		for (k = 0; k < 17; k++) {
			n += (size_t)snprintf(many + n, sizeof(many) - n,
				"---\napiVersion: v1\nkind: Node\n"
				"metadata: {name: n%u, labels: {", k);
			n += (size_t)snprintf(many + n, sizeof(many) - n,
				"fabric.topograph.run/tier-%u: t}}\n"
				"status: {allocatable: {cpu: \"1\"}}\n", k);
		}
		l = load_text("tiers17.yaml", many);
		is_int(l.err, TG_ELIMIT, "17 topograph tiers: TG_ELIMIT");
		like(l.ei.msg, "more than 16 tiers",
		     "17 topograph tiers: the message names the bound");
		load_free(&l);
		n = (size_t)snprintf(many, sizeof(many),
			"---\napiVersion: v1\nkind: Node\n"
			"metadata: {name: n, labels: {");
		for (k = 0; k < 16; k++)
			n += (size_t)snprintf(many + n, sizeof(many) - n,
				"%sfabric.topograph.run/tier-%u: t%u",
				k ? ", " : "", k, k);
		snprintf(many + n, sizeof(many) - n,
			 "}}\nstatus: {allocatable: {cpu: \"1\"}}\n");
		l = load_text("tiers16.yaml", many);
		loaded_ok(&l, "16 topograph tiers");
		if (!l.err)
			is_int(tg_topology_nlayers(l.t), 16,
			       "16 topograph tiers: 16 layers");
		load_free(&l);
	}

	l = load_text("gen1.yaml", gen1);
	is_int(tg_topology_nlayers(l.t), 2, "gen1: the keys nodes carry");
	is_str(tg_topology_layer_key(l.t, 0),
	       "network.topology.nvidia.com/spine", "spine");
	is_str(tg_topology_layer_key(l.t, 1),
	       "network.topology.nvidia.com/block", "block");
	load_free(&l);

	l = load_text("gen2.yaml", gen2);
	is_int(tg_topology_nlayers(l.t), 4, "gen2: core spine leaf accel");
	is_str(tg_topology_layer_key(l.t, 2),
	       "network.topology.nvidia.com/leaf", "leaf third");
	load_free(&l);

	l = load_text("zone.yaml", zone);
	is_int(tg_topology_nlayers(l.t), 2, "region, zone");
	is_str(tg_topology_layer_key(l.t, 0), "topology.kubernetes.io/region",
	       "region first");
	has_warning(&l, "node b: no topology.kubernetes.io/zone label");
	ok(tg_topology_node_domain(l.t, 1) == TG_NONE,
	   "node b is left out of the tree (the core's warning copied)");
	load_free(&l);

	/* --levels wins; a trailing hostname is the node level */
	memset(&l, 0, sizeof(l));
	l.k = tg_k8s_create();
	is_int(tg_k8s_set_levels(l.k, keys, 2), TG_OK, "set_levels");
	is_int(tg_k8s_add(l.k, gen1, strlen(gen1), "lv.yaml", &l.ei), TG_OK,
	       "add");
	is_int(tg_k8s_build(l.k, &l.t, &l.ei), TG_OK, "build");
	is_int(tg_topology_nlayers(l.t), 1, "one level given (+ hostname)");
	is_str(tg_topology_layer_name(l.t, 0), "x/y", "the given key");
	is_int(tg_k8s_set_levels(l.k, keys, 1), TG_ESTATE,
	       "no set_levels after build");
	load_free(&l);
}

static void test_unknown_layer(void)
{
	static const char text[] =
		NODE("n1", "network.topology.nvidia.com/spine: s1", "cpu: \"8\"")
		POD("p", ", annotations: {kueue.x-k8s.io/podset-required-"
		    "topology: NoSuchLayer}", CPU("1"));
	load l = load_text("unknown.yaml", text);
	tg_decision *d = NULL;
	tg_errinfo ei;
	const tg_gang *g = gang(&l, "default/p");

	is_int(l.err, TG_OK, "loads");
	ok(g && gather_of(g, "NoSuchLayer") == TG_GATHER_MUST,
	   "an unknown layer is passed on as given");
	if (g && tg_place(l.t, g, &d, &ei) == TG_OK) {
		is_int(tg_decision_status(d), TG_STATUS_UNSCHEDULABLE,
		       "the core refuses it");
		like(tg_decision_message(d), "NoSuchLayer",
		     "and names the layer");
		tg_decision_free(d);
	}
	load_free(&l);
}

static void test_misc(void)
{
	static const char text[] =
		"{\"apiVersion\":\"v1\",\"kind\":\"NodeList\",\"items\":["
		"{\"metadata\":{\"name\":\"n1\"},\"status\":{\"allocatable\":"
		"{\"cpu\":\"4\"}}},"
		"{\"metadata\":{\"name\":\"n1\"},\"status\":{\"allocatable\":"
		"{\"cpu\":\"8\"}}}]}\n"
		"{\"apiVersion\":\"v1\",\"kind\":\"Service\","
		"\"metadata\":{\"name\":\"s\"}}\n"
		"[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":"
		"{\"name\":\"mine\"},\"spec\":{\"schedulerName\":\"topo\","
		"\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":"
		"{\"cpu\":0.25}}}]}},"
		"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":"
		"{\"name\":\"theirs\"},\"spec\":{\"containers\":[]}},"
		"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":"
		"{\"name\":\"on-ghost\"},\"spec\":{\"nodeName\":\"ghost\","
		"\"containers\":[]}}]";
	load l;
	tg_topology *t2 = NULL;

	memset(&l, 0, sizeof(l));
	l.k = tg_k8s_create();
	is_int(tg_k8s_set_scheduler_name(l.k, "topo"), TG_OK,
	       "scheduler name");
	is_int(tg_k8s_add(l.k, text, strlen(text), "misc.json", &l.ei), TG_OK,
	       "a NodeList, an object and an array in one JSON stream");
	is_int(tg_k8s_build(l.k, &l.t, &l.ei), TG_OK, "build");
	is_int(tg_topology_nnodes(l.t), 1, "the duplicate node counts once");
	is_int(tg_topology_node_allocatable(l.t, 0, TG_RES_CPU), 8000,
	       "... the later copy");
	is_int(tg_topology_node_allocatable(l.t, 0, TG_RES_PODS), 110,
	       "pods default to 110");
	has_warning(&l, "Node n1 appears more than once");
	has_warning(&l, "1 object of kind Service ignored");
	has_warning(&l, "1 pending pod of other schedulers than 'topo' "
		    "ignored");
	has_warning(&l, "bound to node 'ghost', which is not in the snapshot");
	has_warning(&l, "1 node without status.allocatable.pods");
	is_int(tg_k8s_ngangs(l.k), 1, "one pending pod for us");
	ok(gang(&l, "default/mine") &&
	   gang(&l, "default/mine")->ps[0]->shape.v[TG_RES_CPU] == 250,
	   "a JSON number quantity: 0.25 cpu = 250m");
	is_int(tg_k8s_build(l.k, &t2, &l.ei), TG_ESTATE, "build only once");
	is_int(tg_k8s_add(l.k, "{}", 2, "x", &l.ei), TG_ESTATE,
	       "no add after build");
	ok(tg_k8s_gang(l.k, 5) == NULL && tg_k8s_warning(l.k, 999) == NULL,
	   "out of range: NULL");
	load_free(&l);
	tg_k8s_destroy(NULL);
	ok(tg_k8s_ngangs(NULL) == 0 && tg_k8s_nwarnings(NULL) == 0,
	   "NULL handle is empty");
}

/* ---- errors ------------------------------------------------------------ */

#define PG_POD(group)							\
	POD("m", ", labels: {pod-group.scheduling.sigs.k8s.io: " group "}",\
	    CPU("1"))
#define KPG(annot, spec)						\
	"---\napiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: PodGroup\n"\
	"metadata: {name: pg, namespace: default" annot "}\n"		\
	"spec: {" spec "}\n" PG_POD("pg")

/*
 * What an entry of errors[] expects: a tg_err from the add or the build;
 * F_GANG: the build succeeds and the pod's gang fails with the message
 * (tg_k8s_failed()); F_WARN: the build succeeds, the object is left out
 * with a warning holding the message.
 */
enum { F_GANG = 100, F_WARN };

static const struct {
	const char *src;
	const char *text;
	int err;
	const char *msg;	/* exact when it starts with '=' */
} errors[] = {
	{ "cluster.json",
	  "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
	  "\"x\",\"namespace\":\"default\"},\"spec\":{\"containers\":[{"
	  "\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"8x\"}}}]}}",
	  F_GANG,
	  "=cluster.json: Pod default/x: spec.containers[0].resources."
	  "requests.cpu: bad quantity '8x'" },
	{ "cluster.yaml",
	  "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n"
	  "  containers:\n  - name: c\n    resources:\n      requests:\n"
	  "        cpu: 8x\n",
	  F_GANG,
	  "=cluster.yaml:10: Pod default/x: spec.containers[0].resources."
	  "requests.cpu: bad quantity '8x'" },
	{ "gpu.yaml",
	  POD("g", "", "containers: [{name: c, resources: {limits: "
	      "{nvidia.com/gpu: two}}}]"),
	  F_GANG,
	  "Pod default/g: spec.containers[0].resources.limits"
	  "[nvidia.com/gpu]: bad quantity 'two'" },
	{ "neg.yaml", POD("n", "", CPU("-1")), F_GANG,
	  "bad quantity '-1'" },
	{ "bad.json", "{\"kind\": \"Node\",\n \"metadata\": {\n  \"name\": }}",
	  TG_EPARSE, "bad.json:3: malformed JSON near '}}'" },
	{ "short.json", "{\"kind\": \"Node\"", TG_EPARSE,
	  "short.json:1: malformed JSON" },
	{ "two.json", "{\"kind\": \"Node\"} x", TG_EPARSE,
	  "two.json:1: malformed JSON near 'x'" },
	{ "bad.yaml", "kind: Node\nmetadata: {name: x\nstatus: 1\n",
	  TG_EPARSE, "bad.yaml:" },
	{ "indent.yaml", "a: b\n c: d\n", TG_EPARSE, "indent.yaml:2: " },
	{ "annot.yaml",
	  KPG(", annotations: {gang.scheduling.koordinator.sh/"
	      "network-topology-spec: '{not json'}", "minMember: 1"),
	  F_GANG,
	  "=annot.yaml:4: PodGroup default/pg: metadata.annotations"
	  "[gang.scheduling.koordinator.sh/network-topology-spec]: bad JSON "
	  "'{not json'" },
	{ "strategy.yaml",
	  KPG(", annotations: {gang.scheduling.koordinator.sh/"
	      "network-topology-spec: '{\"gatherStrategy\":[{\"layer\":"
	      "\"L\",\"strategy\":\"Gather\"}]}'}", "minMember: 1"),
	  F_GANG,
	  "gatherStrategy[0].strategy: unknown strategy 'Gather'" },
	{ "pcm.yaml",
	  KPG(", annotations: {gang.scheduling.koordinator.sh/"
	      "network-topology-spec: '{\"gatherStrategy\":[{\"layer\":"
	      "\"L\",\"strategy\":\"MustGather\",\"podCountMultiple\":0}]}'}",
	      "minMember: 1"),
	  F_GANG, "podCountMultiple: not a positive integer" },
	{ "min.yaml", KPG("", "minMember: -1"), F_GANG,
	  "PodGroup default/pg: spec.minMember: -1 is out of range" },
	{ "minf.yaml", KPG("", "minMember: 1.5"), F_GANG,
	  "spec.minMember: expected an integer" },
	{ "dup.yaml", "kind: Node\nmetadata: {name: a}\nkind: Pod\n",
	  TG_EPARSE, "=dup.yaml:1: duplicate key 'kind' in the mapping "
	  "starting here" },
	{ "dup.json", "{\"kind\":\"Node\",\"kind\":\"Pod\"}", TG_EPARSE,
	  "=dup.json: duplicate key 'kind'" },
	{ "merge.yaml", "a: &x {b: 1}\nc:\n  <<: *x\n", TG_EPARSE,
	  "=merge.yaml:3: merge keys (<<) are not supported" },
	{ "unknown-alias.yaml", "a: *nope\n", TG_EPARSE,
	  "unknown anchor 'nope'" },
	{ "bomb.yaml",
	  "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	  "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
	  "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
	  "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
	  "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
	  "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
	  "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n",
	  TG_ELIMIT, "aliases expand to more than 1048576 nodes" },
	{ "tag.yaml", "a: !!binary aGVsbG8=\n", TG_EPARSE,
	  "=tag.yaml:1: unsupported tag 'tag:yaml.org,2002:binary'" },
	{ "label.yaml", NODE("n1", "gpu: true", "cpu: \"1\""), F_WARN,
	  "Node n1: metadata.labels.gpu: expected a string" },
	{ "taint.yaml",
	  "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
	  "spec: {taints: [{key: a, effect: Sometimes}]}\n",
	  F_WARN, "Node n1: spec.taints[0]: needs a key and an effect" },
	{ "op.yaml",
	  POD("o", "", "affinity: {nodeAffinity: {requiredDuringScheduling"
	      "IgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions:"
	      " [{key: a, operator: Like, values: [b]}]}]}}}, " CPU("1")),
	  F_GANG,
	  "nodeSelectorTerms[0].matchExpressions[0].operator: unknown "
	  "operator 'Like'" },
	{ "fields.yaml",
	  POD("f", "", "affinity: {nodeAffinity: {requiredDuringScheduling"
	      "IgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions:"
	      " [{key: a, operator: Exists}]}, {matchFields: [{key: "
	      "metadata.name, operator: In, values: [n1]}]}]}}}, " CPU("1")),
	  F_GANG,
	  "Pod default/f: spec.affinity.nodeAffinity.requiredDuringScheduling"
	  "IgnoredDuringExecution.nodeSelectorTerms[1].matchFields: node "
	  "field selectors (metadata.name) are not supported" },
	{ "allempty.yaml",
	  POD("e", "", "affinity: {nodeAffinity: {requiredDuringScheduling"
	      "IgnoredDuringExecution: {nodeSelectorTerms: [{}, "
	      "{matchExpressions: []}]}}}, " CPU("1")),
	  F_GANG,
	  "nodeSelectorTerms: every term is empty (an empty term matches no "
	  "node); the pod is not placed" },
	{ "gt.yaml",
	  POD("o", "", "affinity: {nodeAffinity: {requiredDuringScheduling"
	      "IgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions:"
	      " [{key: a, operator: Gt, values: [b]}]}]}}}, " CPU("1")),
	  F_GANG, "wrong values for operator Gt" },
	{ "slice.yaml",
	  POD("s", ", annotations: {kueue.x-k8s.io/podset-slice-required-"
	      "topology: rack}", CPU("1")),
	  F_GANG, "kueue.x-k8s.io/podset-slice-required-topology needs "
	  "kueue.x-k8s.io/podset-slice-size" },
	{ "slices.yaml",
	  POD("s", ", annotations: {kueue.x-k8s.io/podset-slice-required-"
	      "topology-constraints: '[{\"topology\":\"r\"}]'}", CPU("1")),
	  F_GANG, "entry 0 needs a topology and a positive size" },
	{ "index.yaml",
	  POD("i", ", annotations: {gang.scheduling.koordinator.sh/"
	      "network-topology-index: abc}", CPU("1")),
	  F_GANG, "network-topology-index]: bad value 'abc'" },
	{ "scalar.yaml", "- a\n- b\n", TG_EPARSE,
	  "document 1 is not an object" },
	{ "items.json", "{\"kind\":\"List\",\"items\":[1]}", TG_EPARSE,
	  "=items.json: items[0]: not an object" },
	{ "time.yaml", POD("t", ", creationTimestamp: yesterday", CPU("1")),
	  F_GANG, "metadata.creationTimestamp: bad time 'yesterday'" },
	{ "pc.yaml",
	  "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
	  "metadata: {name: p}\n", TG_EINVAL, "PriorityClass p: value: "
	  "missing" },
	{ "cnt.yaml",
	  "---\napiVersion: scheduling.koordinator.sh/v1alpha1\n"
	  "kind: ClusterNetworkTopology\nmetadata: {name: default}\n"
	  "spec: {networkTopologySpec: [{topologyLayer: A, labelKey: [a]},"
	  " {topologyLayer: B, labelKey: [b]}]}\n", F_WARN,
	  "layers 'A' and 'B' share the parent 'ClusterTopologyLayer'; not "
	  "a chain" },
	{ "spec.yaml", "---\napiVersion: v1\nkind: Pod\nmetadata: {name: x}\n",
	  F_GANG, "Pod default/x: spec: missing" },
	{ "name.yaml", "---\napiVersion: v1\nkind: Node\nmetadata: {}\n",
	  F_WARN, "metadata.name: missing" },
	{ "nul.yaml", "a: \"x\\0y\"\n", TG_EPARSE, "NUL byte" },
	{ "deep.json", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
	  "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", TG_EPARSE,
	  "document 1 is not an object" },
};

/*
 * Volumes (issue 15): a bound claim's PersistentVolume node affinity is
 * ANDed with the pod's own (their terms multiplied); what is not modeled
 * (unbound or missing claims, missing volumes, resourceClaims) fails the
 * pod's gang with a message naming it, never ignored.
 */
#define PV(name, terms)							\
	"---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: "	\
	name "}\nspec: {capacity: {storage: 1Gi}, local: {path: /m}, "	\
	"nodeAffinity: {required: {nodeSelectorTerms: [" terms "]}}}\n"
#define HOST(h) "{matchExpressions: [{key: kubernetes.io/hostname, "	\
	"operator: In, values: [" h "]}]}"
#define PVC(name, vol, ann)						\
	"---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " \
	name ", namespace: default" ann "}\nspec: {volumeName: \"" vol "\"}\n"
#define BOUND ", annotations: {pv.kubernetes.io/bind-completed: \"yes\"}"
#define VOL(c) ", volumes: [{name: v, persistentVolumeClaim: {claimName: " \
	c "}}]"
static const char volumes_text[] =
	NODE("n1", "topology.kubernetes.io/zone: a, "
	     "kubernetes.io/hostname: n1", "cpu: \"8\"")
	NODE("n2", "topology.kubernetes.io/zone: a, "
	     "kubernetes.io/hostname: n2", "cpu: \"8\"")
	NODE("n3", "topology.kubernetes.io/zone: b, "
	     "kubernetes.io/hostname: n3", "cpu: \"8\"")
	PV("pv-2", HOST("n2"))
	PVC("c-2", "pv-2", BOUND)
	POD("p2", "", CPU("1") VOL("c-2"))
	PV("pv-zb-or-n1", "{matchExpressions: [{key: topology.kubernetes.io/"
	   "zone, operator: In, values: [b]}]}, " HOST("n1"))
	PVC("c-zb", "pv-zb-or-n1", BOUND)
	POD("mt", "", CPU("1") VOL("c-zb") ", affinity: {nodeAffinity: "
	    "{requiredDuringSchedulingIgnoredDuringExecution: "
	    "{nodeSelectorTerms: [{matchExpressions: [{key: "
	    "kubernetes.io/hostname, operator: NotIn, values: [n3]}]}]}}}")
	PVC("c-unb", "", "")
	POD("unb", "", CPU("1") VOL("c-unb"))
	PVC("c-half", "pv-2", "")
	POD("half", "", CPU("1") VOL("c-half"))
	POD("miss", "", CPU("1") VOL("nothere"))
	PVC("c-ghost", "ghost", BOUND)
	POD("nopv", "", CPU("1") VOL("c-ghost"))
	POD("dra", "", CPU("1") ", resourceClaims: [{name: g, "
	    "resourceClaimName: gc}]")
	POD("eph", "", CPU("1") ", volumes: [{name: s, ephemeral: "
	    "{volumeClaimTemplate: {spec: {}}}}]")
	PV("pv-empty", "")
	PVC("c-empty", "pv-empty", BOUND)
	POD("emptypv", "", CPU("1") VOL("c-empty"))
	/* node field selectors and all-empty terms: refused, not dropped
	 * (dropping them left the pod unconstrained) */
	PV("pv-fields", "{matchFields: [{key: metadata.name, operator: In, "
	   "values: [n3]}]}")
	PVC("c-fields", "pv-fields", BOUND)
	POD("fieldspv", "", CPU("1") VOL("c-fields"))
	PV("pv-mixed", HOST("n1") ", {matchExpressions: [{key: a, operator: "
	   "Exists}], matchFields: [{key: metadata.name, operator: NotIn, "
	   "values: [n3]}]}")
	PVC("c-mixed", "pv-mixed", BOUND)
	POD("mixedpv", "", CPU("1") VOL("c-mixed"))
	PV("pv-blank", "{}, {matchExpressions: [], matchFields: []}")
	PVC("c-blank", "pv-blank", BOUND)
	POD("blankpv", "", CPU("1") VOL("c-blank"))
	/* legacy zone labels and no node affinity (VolumeZone): refused */
	"---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: "
	"pv-zone, labels: {failure-domain.beta.kubernetes.io/zone: b}}\n"
	"spec: {capacity: {storage: 1Gi}}\n"
	PVC("c-zone", "pv-zone", BOUND)
	POD("zonepv", "", CPU("1") VOL("c-zone"))
	/* a volume without node affinity or zone labels: unconstrained */
	"---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: "
	"pv-nfs}\nspec: {capacity: {storage: 1Gi}}\n"
	PVC("c-nfs", "pv-nfs", BOUND)
	POD("nfs", "", CPU("1") VOL("c-nfs"))
	/* a claim the pod does not own: not its ephemeral volume's */
	PVC("eph2-s", "pv-2", BOUND)
	POD("eph2", "", CPU("1") ", volumes: [{name: s, ephemeral: "
	    "{volumeClaimTemplate: {spec: {}}}}]");
#undef PV
#undef HOST
#undef PVC
#undef BOUND
#undef VOL

static const char *failed_msg(const load *l, const char *gang)
{
	const char *why;
	unsigned i;

	for (i = 0; i < tg_k8s_nfailed(l->k); i++)
		if (strcmp(tg_k8s_failed(l->k, i, &why), gang) == 0)
			return why;
	return "";
}

/* Gang \p name of \p l placed: is_str on place()'s answer, or the reason
 * it was not built. */
static void placed_as(const load *l, const char *name, const char *want,
		      const char *desc)
{
	const tg_gang *g = gang(l, name);

	if (g)
		is_str(place(l->t, g, NULL, 0), want, "%s", desc);
	else
		ok(0, "%s: gang %s is built (%s)", desc, name,
		   failed_msg(l, name));
}

static void test_volumes(void)
{
	load l = load_text("volumes.yaml", volumes_text);
	const tg_gang *g;

	loaded_ok(&l, "volumes cluster");
	g = gang(&l, "default/p2");
	ok(g && g->ps[0]->nterms == 1 && g->ps[0]->terms[0].n == 1,
	   "a bound claim: its PV's node affinity is the pod's one term");
	if (g)
		is_str(place(l.t, g, NULL, 0), "placed node/n2 n2",
		       "... the pod goes to n2, the volume's node");
	g = gang(&l, "default/mt");
	ok(g && g->ps[0]->nterms == 2 && g->ps[0]->terms[0].n == 2 &&
	   g->ps[0]->terms[1].n == 2,
	   "the pod's term times the PV's two: two terms of two expressions");
	if (g)
		is_str(place(l.t, g, NULL, 0), "placed node/n1 n1",
		       "(zone b or n1) and not n3: n1");
	like(failed_msg(&l, "default/unb"), "spec.volumes[0]: "
	     "PersistentVolumeClaim default/c-unb is not bound to a "
	     "PersistentVolume (it names no StorageClass (immediate "
	     "binding))", "an unbound claim of no class fails the gang, "
	     "saying so");
	like(failed_msg(&l, "default/half"), "c-half is not bound to a "
	     "PersistentVolume (spec.volumeName set, no "
	     "pv.kubernetes.io/bind-completed annotation yet)",
	     "a claim without the bind-completed mark is not bound yet (as "
	     "kube-scheduler's isPVCFullyBound)");
	like(failed_msg(&l, "default/miss"), "PersistentVolumeClaim "
	     "default/nothere not found; the pod is not placed",
	     "a missing claim fails the gang");
	like(failed_msg(&l, "default/nopv"), "PersistentVolume ghost (of "
	     "claim default/c-ghost) not found",
	     "a missing volume fails the gang");
	like(failed_msg(&l, "default/dra"), "Pod default/dra: "
	     "spec.resourceClaims: dynamic resource allocation (DRA) is "
	     "not supported", "resourceClaims fail the gang, naming DRA");
	like(failed_msg(&l, "default/eph"), "default/eph-s not found (the "
	     "ephemeral volume's claim", "an ephemeral volume's claim "
	     "POD-VOLUME is looked up");
	like(failed_msg(&l, "default/eph2"), "default/eph2-s was not created "
	     "for this pod", "... and must be owned by the pod");
	like(failed_msg(&l, "default/emptypv"), "PersistentVolume pv-empty: "
	     "spec.nodeAffinity.required.nodeSelectorTerms: none",
	     "a volume whose node affinity has no term fails the gang, "
	     "naming the volume");
	like(failed_msg(&l, "default/fieldspv"), "PersistentVolume "
	     "pv-fields: spec.nodeAffinity.required.nodeSelectorTerms[0]."
	     "matchFields: node field selectors (metadata.name) are not "
	     "supported; the pod is not placed", "a volume term with only "
	     "matchFields fails the gang, naming the volume and the field");
	like(failed_msg(&l, "default/mixedpv"), "PersistentVolume pv-mixed: "
	     "spec.nodeAffinity.required.nodeSelectorTerms[1].matchFields",
	     "... and so does one beside expressions, after a usable term");
	like(failed_msg(&l, "default/blankpv"), "PersistentVolume pv-blank: "
	     "spec.nodeAffinity.required.nodeSelectorTerms: every term is "
	     "empty (an empty term matches no node)", "a volume whose terms "
	     "are all empty fails the gang (it matches no node)");
	like(failed_msg(&l, "default/zonepv"), "PersistentVolume pv-zone: "
	     "metadata.labels.failure-domain.beta.kubernetes.io/zone: a zone "
	     "label without spec.nodeAffinity (kube-scheduler's VolumeZone) "
	     "is not supported; the pod of claim default/c-zone is not "
	     "placed", "a volume with only a legacy zone label fails the "
	     "gang, naming the volume and the label");
	g = gang(&l, "default/nfs");
	ok(g && g->ps[0]->nterms == 0, "a volume without node affinity or "
	   "zone labels places nothing");
	ok(gang(&l, "default/p2") != NULL, "... only those gangs fail");
	ok(!warning_like(&l, "PersistentVolume"),
	   "claims and volumes are read, not 'ignored'");
	load_free(&l);
}

/*
 * WaitForFirstConsumer claims (issue 15), as kube-scheduler's
 * VolumeBinding (binder.go: GetPodVolumes, FindPodVolumes,
 * checkVolumeProvisions): an unbound claim of a class with a provisioner
 * narrows the pod's nodes to the class's allowedTopologies and is listed
 * for the host to stamp the selected node on (tg_k8s_claim); one with
 * the annotation already pins the pod to that node; static volumes
 * (no-provisioner, an Available PV of the class), Immediate classes and
 * missing classes are refused, naming the case.
 */
#define SC(name, prov, mode, extra)					\
	"---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\n"	\
	"metadata: {name: " name "}\nprovisioner: " prov "\n"		\
	"volumeBindingMode: " mode "\n" extra
#define WPVC(name, cls, ann)						\
	"---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: " \
	name ", namespace: default" ann "}\nspec: {storageClassName: " cls \
	", accessModes: [ReadWriteOnce], resources: {requests: {storage: " \
	"1Gi}}}\n"
#define T1(z) "{matchLabelExpressions: [{key: topology.kubernetes.io/zone, " \
	"values: [" z "]}]}"
#define SEL(n) ", annotations: {volume.kubernetes.io/selected-node: " n "}"
#define VOL(c) ", volumes: [{name: v, persistentVolumeClaim: {claimName: " \
	c "}}]"
static const char wffc_text[] =
	NODE("n1", "topology.kubernetes.io/zone: a, "
	     "kubernetes.io/hostname: n1", "cpu: \"8\"")
	NODE("n2", "topology.kubernetes.io/zone: a, "
	     "kubernetes.io/hostname: n2", "cpu: \"8\"")
	NODE("n3", "topology.kubernetes.io/zone: b, "
	     "kubernetes.io/hostname: n3", "cpu: \"8\"")
	/* a hostname label that is not the node's name */
	NODE("n4", "topology.kubernetes.io/zone: d, "
	     "kubernetes.io/hostname: n4-host", "cpu: \"8\"")
	/* no hostname label at all */
	NODE("n5", "topology.kubernetes.io/zone: e", "cpu: \"8\"")
	SC("zb", "csi.example.com", "WaitForFirstConsumer",
	   "allowedTopologies: [{matchLabelExpressions: [{key: "
	   "topology.kubernetes.io/zone, values: [b]}]}]\n")
	SC("zc", "csi.example.com", "WaitForFirstConsumer",
	   "allowedTopologies: [{matchLabelExpressions: [{key: "
	   "topology.kubernetes.io/zone, values: [c]}]}]\n")
	SC("any", "csi.example.com", "WaitForFirstConsumer", "")
	SC("local", "kubernetes.io/no-provisioner", "WaitForFirstConsumer", "")
	SC("imm", "csi.example.com", "Immediate", "")
	SC("withpv", "csi.example.com", "WaitForFirstConsumer", "")
	"---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv-av}\n"
	"spec: {storageClassName: withpv, capacity: {storage: 1Gi}}\n"
	WPVC("c-zb", "zb", "")
	POD("dyn", "", CPU("1") VOL("c-zb"))
	WPVC("c-zc", "zc", "")
	POD("nowhere", "", CPU("1") VOL("c-zc"))
	WPVC("c-any", "any", "")
	POD("free", "", CPU("1") VOL("c-any"))
	WPVC("c-sel", "any", SEL("n2"))
	POD("sel", "", CPU("1") VOL("c-sel"))
	/* a selected node the class's allowedTopologies do not admit, and
	 * one on a class without a provisioner: as checkVolumeProvisions */
	WPVC("c-selzb", "zb", SEL("n1"))
	POD("selzb", "", CPU("1") VOL("c-selzb"))
	WPVC("c-sellocal", "local", SEL("n1"))
	POD("sellocal", "", CPU("1") VOL("c-sellocal"))
	WPVC("c-gone", "any", SEL("n9"))
	POD("gone", "", CPU("1") VOL("c-gone"))
	WPVC("c-local", "local", "")
	POD("static", "", CPU("1") VOL("c-local"))
	WPVC("c-imm", "imm", "")
	POD("imm", "", CPU("1") VOL("c-imm"))
	WPVC("c-av", "withpv", "")
	POD("avail", "", CPU("1") VOL("c-av"))
	WPVC("c-nosc", "ghost", "")
	POD("nosc", "", CPU("1") VOL("c-nosc"))
	/* the class named by the beta annotation wins over the spec's */
	WPVC("c-beta", "imm", ", annotations: {volume.beta.kubernetes.io/"
	     "storage-class: zb}")
	POD("beta", "", CPU("1") VOL("c-beta"))
	/* three claims of a class with three terms, two claims selected to
	 * one node: each class's topology, each node, ANDed once (3 x 3 x 3
	 * = 27 terms is over TG_MAX_TERMS) */
	SC("z3", "csi.example.com", "WaitForFirstConsumer",
	   "allowedTopologies: [{matchLabelExpressions: [{key: "
	   "topology.kubernetes.io/zone, values: [a]}]}, "
	   "{matchLabelExpressions: [{key: kubernetes.io/hostname, values: "
	   "[n3]}]}, {matchLabelExpressions: [{key: "
	   "topology.kubernetes.io/zone, values: [c]}]}]\n")
	WPVC("c-m1", "z3", "") WPVC("c-m2", "z3", "") WPVC("c-m3", "z3", "")
	POD("multi", "", CPU("1") ", volumes: [{name: a, persistentVolumeClaim"
	    ": {claimName: c-m1}}, {name: b, persistentVolumeClaim: "
	    "{claimName: c-m2}}, {name: c, persistentVolumeClaim: {claimName: "
	    "c-m3}}]")
	/* two classes of 4 and 5 terms: 20 > TG_MAX_TERMS (16), the warning
	 * names the class where the product crossed it */
	SC("t4", "csi.example.com", "WaitForFirstConsumer",
	   "allowedTopologies: [" T1("a") ", " T1("b") ", " T1("c") ", "
	   T1("d") "]\n")
	SC("t5", "csi.example.com", "WaitForFirstConsumer",
	   "allowedTopologies: [" T1("a") ", " T1("b") ", " T1("c") ", "
	   T1("d") ", " T1("e") "]\n")
	WPVC("c-t4", "t4", "") WPVC("c-t5", "t5", "")
	POD("many", "", CPU("1") ", volumes: [{name: a, persistentVolumeClaim"
	    ": {claimName: c-t4}}, {name: b, persistentVolumeClaim: "
	    "{claimName: c-t5}}]")
	WPVC("c-s1", "any", SEL("n1")) WPVC("c-s2", "any", SEL("n1"))
	POD("msel", "", CPU("1") ", volumes: [{name: a, persistentVolumeClaim"
	    ": {claimName: c-s1}}, {name: b, persistentVolumeClaim: "
	    "{claimName: c-s2}}]")
	/* a claim to provision, then a volume that fails the pod: the
	 * refused pod's claim is not listed */
	WPVC("c-n4", "any", SEL("n4"))
	POD("seln4", "", CPU("1") VOL("c-n4"))
	WPVC("c-n5", "any", SEL("n5"))
	POD("seln5", "", CPU("1") VOL("c-n5"))
	WPVC("c-half", "any", "")
	POD("half", "", CPU("1") ", volumes: [{name: a, persistentVolumeClaim"
	    ": {claimName: c-half}}, {name: b, persistentVolumeClaim: "
	    "{claimName: c-nothere}}]");
#undef SC
#undef WPVC
#undef T1
#undef SEL
#undef VOL

/* "pod claim node" of every listed claim, ';'-separated. */
static const char *claims_str(const load *l)
{
	static char buf[1024];
	const char *pod, *node, *c;
	size_t i, n;

	buf[0] = '\0';
	for (i = 0; (c = tg_k8s_claim(l->k, i, &pod, &node)); i++) {
		n = strlen(buf);
		snprintf(buf + n, sizeof(buf) - n, "%s%s %s %s", i ? ";" : "",
			 pod, c, node ? node : "-");
	}
	ok(i == tg_k8s_nclaims(l->k), "tg_k8s_nclaims: %zu", i);
	return buf;
}

static void test_wffc(void)
{
	load l = load_text("wffc.yaml", wffc_text);
	const tg_gang *g;

	loaded_ok(&l, "WaitForFirstConsumer cluster");
	g = gang(&l, "default/dyn");
	ok(g && g->ps[0]->nterms == 1, "allowedTopologies: one node term");
	if (g)
		is_str(place(l.t, g, NULL, 0), "placed node/n3 n3",
		       "... the pod goes to zone b (n3), where the class "
		       "provisions");
	placed_as(&l, "default/nowhere", "unschedulable  ",
		  "allowedTopologies no node matches: unschedulable");
	g = gang(&l, "default/free");
	ok(g && g->ps[0]->nterms == 0, "a class without allowedTopologies "
	   "narrows nothing");
	placed_as(&l, "default/sel", "placed node/n2 n2",
		  "a claim with volume.kubernetes.io/selected-node: n2 keeps "
		  "the pod on n2 (FindPodVolumes' fast path)");
	placed_as(&l, "default/beta", "placed node/n3 n3",
		  "volume.beta.kubernetes.io/storage-class names the class "
		  "(zb), as GetPersistentVolumeClaimClass");
	placed_as(&l, "default/selzb", "unschedulable  ",
		  "a selected node outside the class's allowedTopologies: "
		  "unschedulable");
	like(failed_msg(&l, "default/sellocal"), "StorageClass local has no "
	     "provisioner", "a selected node on a class without a "
	     "provisioner: refused");
	placed_as(&l, "default/seln4", "placed node/n4 n4",
		  "a selected node is matched by name, not by its "
		  "kubernetes.io/hostname label (n4-host)");
	placed_as(&l, "default/seln5", "placed node/n5 n5",
		  "a selected node without a kubernetes.io/hostname label: "
		  "matched by name");
	has_warning(&l, "gang default/many: node affinity terms of the pod "
		    "and its volumes multiplied past TG_MAX_TERMS (16) at "
		    "StorageClass t5");
	like(failed_msg(&l, "default/half"), "c-nothere not found",
	     "a pod whose second volume fails is refused");
	g = gang(&l, "default/multi");
	ok(g && g->ps[0]->nterms == 3, "three claims of a 3-term class: its "
	   "3 terms once (%u)", g ? g->ps[0]->nterms : 0);
	g = gang(&l, "default/msel");
	ok(g && g->ps[0]->nterms == 1, "two claims selected to n1: one term "
	   "(%u)", g ? g->ps[0]->nterms : 0);
	if (g)
		is_str(place(l.t, g, NULL, 0), "placed node/n1 n1",
		       "... placed on n1");
	is_str(claims_str(&l), "default/beta default/c-beta -;"
	       "default/dyn default/c-zb -;default/free default/c-any -;"
	       "default/many default/c-t4 -;default/many default/c-t5 -;"
	       "default/msel default/c-s1 n1;default/msel default/c-s2 n1;"
	       "default/multi default/c-m1 -;default/multi default/c-m2 -;"
	       "default/multi default/c-m3 -;"
	       "default/nowhere default/c-zc -;default/sel default/c-sel n2;"
	       "default/seln4 default/c-n4 n4;default/seln5 default/c-n5 n5;"
	       "default/selzb default/c-selzb n1",
	       "the claims to provision are listed, with the selected node "
	       "when there is one");
	like(failed_msg(&l, "default/gone"), "PersistentVolumeClaim "
	     "default/c-gone: metadata.annotations[volume.kubernetes.io/"
	     "selected-node]: node n9 is not in the snapshot",
	     "a selected node that is not there fails the gang, saying so");
	like(failed_msg(&l, "default/static"), "c-local is not bound and its "
	     "WaitForFirstConsumer StorageClass local has no provisioner "
	     "(kubernetes.io/no-provisioner): static PersistentVolumes of a "
	     "WaitForFirstConsumer class are not supported",
	     "no-provisioner (static local volumes): refused, naming the "
	     "case");
	like(failed_msg(&l, "default/avail"), "PersistentVolume pv-av of its "
	     "WaitForFirstConsumer StorageClass withpv is Available: static "
	     "PersistentVolumes", "an Available PV of the class: refused "
	     "(kube-scheduler would bind it)");
	like(failed_msg(&l, "default/imm"), "c-imm is not bound to a "
	     "PersistentVolume (its StorageClass binds at once "
	     "(volumeBindingMode not WaitForFirstConsumer): imm)",
	     "an unbound claim of an Immediate class: refused");
	like(failed_msg(&l, "default/nosc"), "(its StorageClass is not in "
	     "the snapshot: ghost)", "a class missing: refused");
	load_free(&l);
}

static void test_errors(void)
{
	static char deep[4096];
	size_t i;
	load l;

	for (i = 0; i < sizeof(errors) / sizeof(errors[0]); i++) {
		const char *msg, *want = errors[i].msg;

		l = load_text(errors[i].src, errors[i].text);
		msg = l.ei.msg;
		if (errors[i].err == F_GANG) {
			is_int(l.err, TG_OK, "%s: builds", errors[i].src);
			is_int(tg_k8s_nfailed(l.k), 1, "%s: the gang fails",
			       errors[i].src);
			if (!tg_k8s_failed(l.k, 0, &msg))
				msg = "";
		} else if (errors[i].err == F_WARN) {
			is_int(l.err, TG_OK, "%s: builds", errors[i].src);
			msg = warning_like(&l, want[0] == '=' ? want + 1 :
					   want);
			ok(msg != NULL, "%s: left out with a warning",
			   errors[i].src);
			msg = msg ? msg : "";
		} else {
			is_int(l.err, errors[i].err, "%s: error code",
			       errors[i].src);
		}
		if (want[0] == '=')
			is_str(msg, want + 1, "%s: message", errors[i].src);
		else
			like(msg, want, "%s: message", errors[i].src);
		load_free(&l);
	}
	/* YAML nesting is bounded */
	memcpy(deep, "x: ", 3);
	for (i = 3; i < 303; i++)
		deep[i] = '[';
	deep[i] = '\0';
	l = load_text("deep.yaml", deep);
	is_int(l.err, TG_ELIMIT, "YAML deeper than 256 levels");
	like(l.ei.msg, "deep.yaml:1: nested deeper than 256 levels",
	     "... says so");
	load_free(&l);
}

/*
 * Fault isolation (issue 12): an object that cannot be read costs only
 * what depends on it; every other gang is still built.
 */
static void test_fault_isolation(void)
{
	/* a Node whose labels are a list (fuzz_k8s: the label-preset scan
	 * handed a NULL key to strncmp) */
	static const char lablist[] =
		"kind: Node\nmetadata: {name: n1, labels: [x]}\n";
	/* one pending pod whose network-topology-spec is not JSON, one
	 * valid gang of two */
	static const char onebad[] =
		NODE("n1", "", "cpu: \"4\"") NODE("n2", "", "cpu: \"4\"")
		POD("bad", ", annotations: {gang.scheduling.koordinator.sh/"
		    "network-topology-spec: '{oops'}", CPU("1"))
		POD("w1", ", labels: {pod-group.scheduling.sigs.k8s.io: ok}",
		    CPU("4"))
		POD("w2", ", labels: {pod-group.scheduling.sigs.k8s.io: ok}",
		    CPU("4"))
		"---\napiVersion: scheduling.sigs.k8s.io/v1alpha1\n"
		"kind: PodGroup\nmetadata: {name: ok, namespace: default}\n"
		"spec: {minMember: 2}\n";
	/* a bound pod with a bad quantity: its node takes no new pod */
	static const char boundbad[] =
		NODE("n1", "", "cpu: \"4\"") NODE("n2", "", "cpu: \"4\"")
		POD("run", "", "nodeName: n1, " CPU("lots"))
		POD("p", "", CPU("1"));
	/* a Kueue Topology that contradicts itself (hostname not last) */
	static const char badtopo[] =
		"---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: Topology\n"
		"metadata: {name: t}\nspec: {levels: [{nodeLabel: "
		"kubernetes.io/hostname}, {nodeLabel: rack}]}\n"
		NODE("n1", "topology.kubernetes.io/zone: z1", "cpu: \"4\"")
		POD("p", "", CPU("1"));
	/* a GangGroup: one PodGroup's pod cannot be read, so the set fails */
	static const char gg[] =
		NODE("n1", "", "cpu: \"8\"")
		POD("a", ", labels: {pod-group.scheduling.sigs.k8s.io: ga}, "
		    "annotations: {gang.scheduling.koordinator.sh/groups: "
		    "'[\"default/ga\",\"default/gb\"]'}", CPU("1"))
		POD("b", ", labels: {pod-group.scheduling.sigs.k8s.io: gb}, "
		    "annotations: {gang.scheduling.koordinator.sh/groups: "
		    "'[\"default/ga\",\"default/gb\"]'}", CPU("1x"))
		POD("c", "", CPU("1"));
	const char *why = NULL;
	load l;

	l = load_text("lablist.yaml", lablist);
	is_int(l.err, TG_OK, "labels as a list: builds (was a crash)");
	ok(warning_like(&l, "Node n1: metadata.labels: expected an object; "
			"the node is left out") != NULL,
	   "labels as a list: the node is left out, named");
	load_free(&l);

	l = load_text("onebad.yaml", onebad);
	is_int(l.err, TG_OK, "one broken pod: the build goes on");
	is_int(tg_k8s_ngangs(l.k), 1, "the valid gang is built");
	is_str(place(l.t, gang(&l, "default/ok"), NULL, 0),
	       "placed cluster n1,n2", "and placed");
	is_int(tg_k8s_nfailed(l.k), 1, "one failed gang");
	is_str(tg_k8s_failed(l.k, 0, &why), "default/bad", "its name");
	like(why, "onebad.yaml:14: Pod default/bad: metadata.annotations"
	     "[gang.scheduling.koordinator.sh/network-topology-spec]: bad "
	     "JSON '{oops'", "the message names the object and the field");
	is_int(tg_k8s_failed_npods(l.k, 0), 1, "its one pod");
	is_str(tg_k8s_failed_pod(l.k, 0, 0), "default/bad", "named");
	ok(tg_k8s_failed(l.k, 1, NULL) == NULL &&
	   tg_k8s_failed_pod(l.k, 0, 1) == NULL && !tg_k8s_nfailed(NULL),
	   "out of range: NULL");
	load_free(&l);

	l = load_text("boundbad.yaml", boundbad);
	is_int(l.err, TG_OK, "a broken bound pod: the build goes on");
	ok(warning_like(&l, "Pod default/run: spec.containers[0].resources."
			"requests.cpu: bad quantity 'lots'; node 'n1' takes "
			"no new pod") != NULL, "the warning names pod and node");
	is_str(place(l.t, gang(&l, "default/p"), NULL, 0), "placed node/n2 n2",
	       "the pending pod avoids n1");
	load_free(&l);

	l = load_text("badtopo.yaml", badtopo);
	is_int(l.err, TG_OK, "a self-contradicting Topology: builds");
	ok(warning_like(&l, "Topology t: spec.levels[0].nodeLabel: "
			"kubernetes.io/hostname may only be the last level; "
			"left out") != NULL, "the warning names it");
	is_int(tg_topology_nlayers(l.t), 1, "levels from the preset (zone)");
	is_int(tg_k8s_ngangs(l.k), 1, "the pod is still a gang");
	load_free(&l);

	/* a member whose labels hold a number still fails its own gang
	 * (its group label can be read), not a gang of its own */
	l = load_text("member.yaml",
		      NODE("n1", "", "cpu: \"8\"")
		      POD("m1", ", labels: {pod-group.scheduling.sigs.k8s.io: "
			  "g, rank: 1}", CPU("1"))
		      POD("m2", ", labels: {pod-group.scheduling.sigs.k8s.io: "
			  "g}", CPU("1")));
	is_int(l.err, TG_OK, "a member with a bad label: builds");
	is_str(tg_k8s_failed(l.k, 0, &why), "default/g", "its gang fails");
	like(why, "Pod default/m1: metadata.labels.rank: expected a string",
	     "naming the member and the label");
	is_int(tg_k8s_failed_npods(l.k, 0), 2, "both members listed");
	is_int(tg_k8s_ngangs(l.k), 0, "the rest of the gang is not placed "
	       "without it");
	load_free(&l);

	/* a PodGroup with a bad field and only running pods: a warning */
	l = load_text("running.yaml",
		      "---\napiVersion: scheduling.sigs.k8s.io/v1alpha1\n"
		      "kind: PodGroup\nmetadata: {name: pg, namespace: "
		      "default}\nspec: {minMember: -1}\n"
		      NODE("n1", "", "cpu: \"4\"")
		      POD("m", ", labels: {pod-group.scheduling.sigs.k8s.io: "
			  "pg}", "nodeName: n1, " CPU("1")));
	is_int(l.err, TG_OK, "a bad PodGroup with running pods: builds");
	ok(warning_like(&l, "PodGroup default/pg: spec.minMember: -1 is out "
			"of range [0, 2147483647]; ignored (no pending pod)")
	   != NULL, "a warning names it");
	is_int(tg_k8s_nfailed(l.k), 0, "no failed gang: nothing is pending");
	load_free(&l);

	l = load_text("gg.yaml", gg);
	is_int(l.err, TG_OK, "a GangGroup with a broken member: builds");
	is_int(tg_k8s_nfailed(l.k), 1, "the GangGroup fails as one");
	is_str(tg_k8s_failed(l.k, 0, &why), "default/ga", "named by its "
	       "representative");
	like(why, "Pod default/b: spec.containers[0].resources.requests.cpu: "
	     "bad quantity '1x'", "the message names the broken pod");
	is_int(tg_k8s_failed_npods(l.k, 0), 2, "both pods of the set");
	is_int(tg_k8s_ngangs(l.k), 1, "the lone pod c is built");
	load_free(&l);
}

/* A failed add leaves what was added before; a failed build leaves no
 * topology, no gangs and no warnings from the attempt. */
static void test_transactions(void)
{
	static const char good[] = NODE("n1", "", "cpu: \"4\"")
				   POD("p", "", CPU("1"));
	static const char bad[] = NODE("n2", "", "cpu: \"4\"")
				  "---\n{unclosed";
	static const char badpod[] = POD("q", "", CPU("huge"))
				     "---\napiVersion: v1\nkind: Widget\n"
				     "metadata: {name: w}\n";
	tg_k8s *k = tg_k8s_create();
	tg_topology *t = NULL;
	tg_errinfo ei;

	is_int(tg_k8s_add(k, good, strlen(good), "good.yaml", &ei), TG_OK,
	       "good text");
	is_int(tg_k8s_add(k, bad, strlen(bad), "bad.yaml", &ei), TG_EPARSE,
	       "bad text");
	is_int(tg_k8s_build(k, &t, &ei), TG_OK, "build with the good part");
	is_int(tg_topology_nnodes(t), 1, "n2 from the failed add is not in");
	is_int(tg_k8s_ngangs(k), 1, "the pending pod");
	tg_topology_destroy(t);
	tg_k8s_destroy(k);

	k = tg_k8s_create();
	t = (tg_topology *)&ei;	/* must be reset to NULL */
	is_int(tg_k8s_add(k, badpod, strlen(badpod), "badpod.yaml", &ei),
	       TG_OK, "parses");
	is_int(tg_k8s_build(k, &t, &ei), TG_OK, "a bad pod fails its gang, "
	       "not the build");
	is_int(tg_k8s_nfailed(k), 1, "one failed gang");
	tg_topology_destroy(t);
	tg_k8s_destroy(k);

	/* a failed build (levels the topology refuses) leaves nothing */
	{
		static const char *const twice[] = { "a", "a" };

		k = tg_k8s_create();
		t = (tg_topology *)&ei;	/* must be reset to NULL */
		is_int(tg_k8s_add(k, badpod, strlen(badpod), "badpod.yaml",
				  &ei), TG_OK, "parses");
		is_int(tg_k8s_set_levels(k, twice, 2), TG_OK, "levels a,a");
		ok(tg_k8s_build(k, &t, &ei) != TG_OK, "build fails");
		ok(t == NULL, "no topology");
		is_int(tg_k8s_nwarnings(k), 0, "no warnings from the failed "
		       "build");
		is_int(tg_k8s_nfailed(k), 0, "no failed gangs either");
		tg_k8s_destroy(k);
	}

	k = tg_k8s_create();
	is_int(tg_k8s_add_file(k, "/nonexistent/cluster.yaml", &ei), TG_EIO,
	       "missing file");
	like(ei.msg, "/nonexistent/cluster.yaml", "names the file");
	is_int(tg_k8s_add(k, "", 0, "empty.yaml", &ei), TG_OK,
	       "empty text is an empty snapshot");
	is_int(tg_k8s_build(k, &t, &ei), TG_OK, "which builds");
	is_int(tg_topology_nnodes(t), 0, "to nothing");
	tg_topology_destroy(t);
	tg_k8s_destroy(k);
}

/* ---- YAML as Kubernetes writes it, and a little more ------------------- */

static void test_yaml(void)
{
	static const char text[] =
		"# comment\n"
		"---\n"
		"---\n"			/* an empty document */
		"apiVersion: v1\n"
		"kind: List\n"
		"items:\n"
		"- apiVersion: v1\n"
		"  kind: Node\n"
		"  metadata:\n"
		"    name: n1\n"
		"    labels:\n"
		"      enabled: yes\n"	/* YAML 1.2: a string */
		"      zone: 0777\n"	/* an int: not a label */
		"  status:\n"
		"    allocatable: &res\n"
		"      cpu: 1e1\n"	/* a float, read as written */
		"      memory: 1.5Gi\n"
		"      pods: 0x10\n"	/* hex int: 16 */
		"- apiVersion: v1\n"
		"  kind: Node\n"
		"  metadata: {name: n2}\n"
		"  status:\n"
		"    allocatable: *res\n"
		"...\n"
		"---\n"
		"apiVersion: v1\n"
		"kind: Pod\n"
		"metadata: {name: p, namespace: ns1}\n"
		"spec:\n"
		"  containers:\n"
		"  - name: a\n"
		"    resources:\n"
		"      requests:\n"
		"        cpu: 0.1\n"	/* a float: must not become 101m */
		"        memory: !!str 100\n"
		"  - name: b\n"
		"    resources:\n"
		"      requests:\n"
		"        cpu: 1e-3\n";
	load l = load_text("features.yaml", text);
	const tg_gang *g;

	/* the label "zone: 0777" is an int in the core schema: the node
	 * is left out, and the pod bound to it is not counted */
	is_int(l.err, TG_OK, "an unquoted 0777 label is not a string: "
	       "the build goes on");
	ok(warning_like(&l, "features.yaml:13: Node n1: metadata.labels."
			"zone: expected a string; the node is left out"),
	   "... and the warning says where");
	{
		tg_node_id x;

		ok(tg_topology_node_find(l.t, "n1", &x) != TG_OK, "n1 left out");
	}
	load_free(&l);
	{
		static char fixed[sizeof(text)];
		char *z;

		memcpy(fixed, text, sizeof(text));
		z = strstr(fixed, "0777");
		memcpy(z, "z777", 4);
		l = load_text("features.yaml", fixed);
	}
	loaded_ok(&l, "with a string label it");
	if (l.err) {
		diag("%s", l.ei.msg);
		load_free(&l);
		return;
	}
	is_int(tg_topology_nnodes(l.t), 2, "two nodes (empty doc skipped)");
	is_str(tg_topology_node_label(l.t, 0, "enabled"), "yes",
	       "'yes' stays a string");
	is_int(tg_topology_node_allocatable(l.t, 1, TG_RES_CPU), 10000,
	       "an alias copies the anchored mapping (1e1 = 10 cpu)");
	is_int(tg_topology_node_allocatable(l.t, 1, TG_RES_MEMORY),
	       1610612736, "1.5Gi");
	is_int(tg_topology_node_allocatable(l.t, 0, TG_RES_PODS), 16,
	       "0x10 pods");
	g = gang(&l, "ns1/p");
	ok(g != NULL, "the pod in ns1");
	if (g) {
		is_int(g->ps[0]->shape.v[TG_RES_CPU], 101,
		       "cpu 0.1 + 1e-3 = 101m, exactly");
		is_int(g->ps[0]->shape.v[TG_RES_MEMORY], 100,
		       "!!str 100 = 100 bytes");
	}
	load_free(&l);
}


/* ---- tg_k8s_add_object: the same cluster, one object at a time ------- */

/* A JSON stream split into objects, each as text, as a host keeps them. */
typedef struct objs {
	cJSON *tree[64];
	char *text[64];
	unsigned n;
} objs;

static void objs_split(objs *o, const char *buf)
{
	const char *p = buf, *end = NULL;

	memset(o, 0, sizeof(*o));
	while (o->n < 64) {
		cJSON *j;

		while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
			p++;
		if (!*p)
			break;
		j = cJSON_ParseWithOpts(p, &end, 0);
		if (!j)
			break;
		p = end;
		if (cJSON_IsArray(cJSON_GetObjectItem(j, "items"))) {
			/* a List: its items, as an informer keeps them */
			cJSON *items = cJSON_GetObjectItem(j, "items");

			while (o->n < 64 && cJSON_GetArraySize(items) > 0) {
				cJSON *it = cJSON_DetachItemFromArray(items, 0);

				o->tree[o->n] = it;
				o->text[o->n++] = cJSON_PrintUnformatted(it);
			}
			cJSON_Delete(j);
			continue;
		}
		o->tree[o->n] = j;
		o->text[o->n++] = cJSON_PrintUnformatted(j);
	}
}

static void objs_free(objs *o)
{
	unsigned i;

	for (i = 0; i < o->n; i++) {
		cJSON_Delete(o->tree[i]);
		cJSON_free(o->text[i]);
	}
}

static const char *jstr_at(const cJSON *j, const char *a, const char *b)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, a);

	if (b)
		v = cJSON_GetObjectItemCaseSensitive(v, b);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Adds object \p i of \p o as the informer cache would. */
static tg_err add_obj(tg_k8s *k, const objs *o, unsigned i, const char *src,
		      tg_errinfo *ei)
{
	return tg_k8s_add_object(k, o->text[i], strlen(o->text[i]),
				 jstr_at(o->tree[i], "kind", NULL),
				 jstr_at(o->tree[i], "apiVersion", NULL),
				 jstr_at(o->tree[i], "metadata", "namespace"),
				 jstr_at(o->tree[i], "metadata", "name"), src,
				 ei);
}

/* Adds every object (in reverse: order must not matter) and builds. */
static load load_objs(const objs *o, const char *src)
{
	load l;
	unsigned i;

	memset(&l, 0, sizeof(l));
	l.k = tg_k8s_create();
	tg_k8s_set_scheduler_name(l.k, "topogang");
	for (i = o->n; i-- > 0 && !l.err;)
		l.err = add_obj(l.k, o, i, src, &l.ei);
	if (!l.err)
		l.err = tg_k8s_build(l.k, &l.t, &l.ei);
	if (l.err)
		diag("%s: %s", src, l.ei.msg);
	return l;
}


/*
 * The symmetric anti-affinity rule when the running pod's tree is dropped
 * (tg_k8s_add_object): its podAntiAffinity is kept with its labels.
 * guard on n1 (the tighter node) keeps app=web away: web goes to n2.
 */
static const char guard_text[] =
	"{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":"
	"\"n1\",\"labels\":{\"kubernetes.io/hostname\":\"n1\"}},\"status\":"
	"{\"allocatable\":{\"cpu\":\"8\",\"pods\":\"10\"}}}\n"
	"{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":"
	"\"n2\",\"labels\":{\"kubernetes.io/hostname\":\"n2\"}},\"status\":"
	"{\"allocatable\":{\"cpu\":\"8\",\"pods\":\"10\"}}}\n"
	"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
	"\"guard\",\"namespace\":\"default\",\"labels\":{\"app\":\"guard\"}},"
	"\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\","
	"\"resources\":{\"requests\":{\"cpu\":\"4\"}}}],\"affinity\":"
	"{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuring"
	"Execution\":[{\"labelSelector\":{\"matchLabels\":{\"app\":\"web\"}},"
	"\"topologyKey\":\"kubernetes.io/hostname\"}]}}},"
	"\"status\":{\"phase\":\"Running\"}}\n"
	"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
	"\"web\",\"namespace\":\"default\",\"labels\":{\"app\":\"web\"}},"
	"\"spec\":{\"schedulerName\":\"topogang\",\"containers\":[{\"name\":"
	"\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]},"
	"\"status\":{\"phase\":\"Pending\"}}\n";

static void test_guard_objects(void)
{
	objs o;
	load l;

	objs_split(&o, guard_text);
	is_int(o.n, 4, "guard: four objects");
	l = load_objs(&o, "guard");
	loaded_ok(&l, "guard, one object at a time");
	if (!l.err)
		like(place(l.t, gang(&l, "default/web"), NULL, 0), " n2",
		     "a dropped pod tree keeps its anti-affinity: web on n2");
	load_free(&l);
	objs_free(&o);
}

static load load_stream(const char *text, const char *src)
{
	load l;

	memset(&l, 0, sizeof(l));
	l.k = tg_k8s_create();
	tg_k8s_set_scheduler_name(l.k, "topogang");
	l.err = tg_k8s_add(l.k, text, strlen(text), src, &l.ei);
	if (!l.err)
		l.err = tg_k8s_build(l.k, &l.t, &l.ei);
	return l;
}

/*
 * Bound pods with labels that a budget and a pending pod's anti-affinity
 * select: what a bound pod keeps once its tree is dropped.
 */
static const char objects_text[] =
	"{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":"
	"\"n1\",\"labels\":{\"kubernetes.io/hostname\":\"n1\","
	"\"network.topology.nvidia.com/block\":\"b1\"}},\"status\":"
	"{\"allocatable\":{\"cpu\":\"8\",\"memory\":\"8Gi\",\"pods\":\"10\"}}}\n"
	"{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":"
	"\"n2\",\"labels\":{\"kubernetes.io/hostname\":\"n2\","
	"\"network.topology.nvidia.com/block\":\"b2\"}},\"status\":"
	"{\"allocatable\":{\"cpu\":\"8\",\"memory\":\"8Gi\",\"pods\":\"10\"}}}\n"
	"{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\","
	"\"metadata\":{\"name\":\"high\"},\"value\":1000}\n"
	"{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\","
	"\"metadata\":{\"name\":\"db\",\"namespace\":\"ns1\"},\"spec\":"
	"{\"minAvailable\":1,\"selector\":{\"matchLabels\":{\"app\":\"db\"}}}}\n"
	"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"db-0\","
	"\"namespace\":\"ns1\",\"labels\":{\"app\":\"db\"}},\"spec\":"
	"{\"nodeName\":\"n1\",\"containers\":[{\"resources\":{\"requests\":"
	"{\"cpu\":\"2\"}}}]},\"status\":{\"phase\":\"Running\"}}\n"
	"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"db-1\","
	"\"namespace\":\"ns1\",\"labels\":{\"app\":\"db\"}},\"spec\":"
	"{\"nodeName\":\"n2\",\"containers\":[{\"resources\":{\"requests\":"
	"{\"cpu\":\"2\"}}}]},\"status\":{\"phase\":\"Running\"}}\n"
	"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"done\","
	"\"namespace\":\"ns1\"},\"spec\":{\"nodeName\":\"n2\",\"containers\":"
	"[{\"resources\":{\"requests\":{\"cpu\":\"6\"}}}]},\"status\":"
	"{\"phase\":\"Succeeded\"}}\n"
	"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web\","
	"\"namespace\":\"ns1\",\"labels\":{\"app\":\"web\"}},\"spec\":"
	"{\"schedulerName\":\"topogang\",\"priorityClassName\":\"high\","
	"\"affinity\":{\"podAntiAffinity\":{\"requiredDuringScheduling"
	"IgnoredDuringExecution\":[{\"topologyKey\":\"kubernetes.io/hostname\","
	"\"labelSelector\":{\"matchLabels\":{\"app\":\"db\"}}}]}},"
	"\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]},"
	"\"status\":{\"phase\":\"Pending\"}}\n";

static void same_as_stream(const char *name, const char *text)
{
	static char want[65536], got[65536];
	objs o;
	load a, b;

	objs_split(&o, text);
	a = load_stream(text, name);
	b = load_objs(&o, name);
	is_int(b.err, TG_OK, "%s: %u objects one at a time build", name, o.n);
	summary(&a, want, sizeof(want));
	summary(&b, got, sizeof(got));
	is_str(got, want, "%s: the same model as tg_k8s_add of the stream",
	       name);
	if (!a.err && !b.err) {
		unsigned i;

		for (i = 0; i < tg_k8s_ngangs(a.k); i++) {
			char va[1024], vb[1024], pa[4096];

			snprintf(pa, sizeof(pa), "%s",
				 place(a.t, tg_k8s_gang(a.k, i), va,
				       sizeof(va)));
			is_str(place(b.t, tg_k8s_gang(b.k, i), vb, sizeof(vb)),
			       pa, "%s: gang %s decided alike", name,
			       tg_gang_name(tg_k8s_gang(a.k, i)));
			is_str(vb, va, "%s: the same victims", name);
		}
	}
	load_free(&a);
	load_free(&b);
	objs_free(&o);
}

static void test_add_object(void)
{
	char *text;
	objs o;
	load l;
	tg_errinfo ei;
	tg_k8s *k;
	const char *badpod =
		"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":"
		"{\"name\":\"x\"},\"spec\":{\"nodeName\":\"n1\",";
	const char *badqty =
		"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":"
		"{\"name\":\"q\"},\"spec\":{\"nodeName\":\"n1\",\"containers\":"
		"[{\"resources\":{\"requests\":{\"cpu\":\"8x\"}}}]}}";

	text = td_read("k8s", "seed-preempt.json", NULL);
	if (text)
		same_as_stream("seed-preempt.json", text);
	free(text);
	text = td_read("k8s", "seed-prefer.json", NULL);
	if (text)
		same_as_stream("seed-prefer.json", text);
	free(text);
	same_as_stream("labels.json", objects_text);

	/* what a dropped tree keeps: labels for budgets and affinity */
	objs_split(&o, objects_text);
	l = load_objs(&o, "labels.json");
	if (!l.err) {
		tg_node_id n1;

		ok(tg_topology_node_find(l.t, "n1", &n1) == TG_OK, "n1");
		is_int(tg_topology_node_free(l.t, n1, TG_RES_CPU), 6000,
		       "a bound pod's requests count (cpu 8 - 2)");
		is_int(tg_topology_nallocs(l.t), 2,
		       "two running pods; the finished one holds nothing");
		is_str(place(l.t, gang(&l, "ns1/web"), NULL, 0),
		       "unschedulable  ",
		       "anti-affinity against the bound pods' labels");
	}
	load_free(&l);
	objs_free(&o);

	/* errors name the object; arguments and state are checked */
	k = tg_k8s_create();
	is_int(tg_k8s_add_object(k, badpod, strlen(badpod), "Pod", "v1",
				 "default", "x", "cache", &ei), TG_OK,
	       "a pod's text is read by the build, not by add");
	is_int(tg_k8s_build(k, NULL, &ei), TG_EINVAL, "build needs *topo");
	{
		tg_topology *t = NULL;

		const char *why = NULL;

		is_int(tg_k8s_build(k, &t, &ei), TG_OK,
		       "malformed pod text: the build goes on");
		is_str(tg_k8s_failed(k, 0, &why), "default/x",
		       "the pod's gang fails");
		like(why, "Pod default/x: cache:1: malformed JSON",
		     "the message names the object and the input");
		is_str(tg_k8s_failed_pod(k, 0, 0), "default/x", "its pod");
		tg_topology_destroy(t);
	}
	tg_k8s_destroy(k);
	k = tg_k8s_create();
	is_int(tg_k8s_add_object(k, badqty, strlen(badqty), "Pod", "v1", "",
				 "q", "cache", &ei), TG_OK, "bad quantity added");
	{
		tg_topology *t = NULL;

		/* a bound pod: its node n1 (not in this snapshot) would
		 * take no new pod */
		is_int(tg_k8s_build(k, &t, &ei), TG_OK,
		       "bad quantity: the build goes on");
		like(tg_k8s_warning(k, 0), "cache: Pod default/q: spec."
		     "containers[0].resources.requests.cpu: bad quantity '8x'"
		     "; node 'n1' takes no new pod",
		     "as tg_k8s_add says it, in namespace default");
		tg_topology_destroy(t);
	}
	tg_k8s_destroy(k);
	k = tg_k8s_create();
	is_int(tg_k8s_add_object(k, "{", 1, "Node", "v1", NULL, "n", "cache",
				 &ei), TG_EPARSE,
	       "other kinds are parsed at once");
	is_int(tg_k8s_add_object(k, "{}", 2, "", "v1", NULL, "n", "cache",
				 &ei), TG_EINVAL, "a kind is needed");
	is_int(tg_k8s_add_object(NULL, "{}", 2, "Node", "v1", NULL, "n", "c",
				 &ei), TG_EINVAL, "NULL handle");
	tg_k8s_destroy(k);
}

/* ---- allocation failures ----------------------------------------------- */

/*
 * Fails the Nth allocation for N = 1, 2, ... until a run needs fewer.
 * Each run must end either in TG_ENOMEM from add or build, or, where the
 * failed allocation was one the library can do without, in exactly the
 * result of a run without failures (summary(), placements included);
 * and nothing the library allocated may be left afterwards.  (cJSON and
 * libyaml allocate through malloc, outside the hook.)
 */
static void oom_run(const char *name, const char *text, const objs *o)
{
	static char want[65536], got[65536];
	long n, bad = 0, leaks = 0;
	char first[600] = "";

	for (n = 0; n < 200000; n++) {
		load l;
		tg_err err;

		memset(&l, 0, sizeof(l));
		oom_at = n;
		oom_calls = oom_live = 0;
		oom_hit = oom_paused = false;
		oom_once = true;
		tg_set_allocator(oom_malloc, oom_realloc, oom_free);
		l.k = tg_k8s_create();
		l.err = TG_ENOMEM;
		if (l.k && o) {
			unsigned i;

			l.err = TG_OK;
			for (i = 0; i < o->n && !l.err; i++)
				l.err = add_obj(l.k, o, i, name, &l.ei);
			if (!l.err)
				l.err = tg_k8s_build(l.k, &l.t, &l.ei);
		} else if (l.k) {
			l.err = tg_k8s_add(l.k, text, strlen(text), name,
					   &l.ei);
			if (!l.err)
				l.err = tg_k8s_build(l.k, &l.t, &l.ei);
		}
		oom_paused = true;
		err = l.err;
		if (err == TG_OK)
			summary(&l, n ? got : want, sizeof(got));
		load_free(&l);
		tg_set_allocator(NULL, NULL, NULL);
		if (n == 0)
			continue;	/* the reference run */
		if (oom_hit && err != TG_ENOMEM &&
		    (err != TG_OK || strcmp(got, want) != 0) && !bad++)
			snprintf(first, sizeof(first), "N=%ld: %s", n,
				 err ? tg_strerror(err) :
				 "succeeded with another result");
		if (oom_live && !leaks++ && !first[0])
			snprintf(first, sizeof(first), "N=%ld: %ld blocks "
				 "leaked", n, oom_live);
		if (!oom_hit)
			break;
	}
	ok(bad == 0 && leaks == 0, "%s: %ld allocation failures, each "
	   "TG_ENOMEM or harmless, nothing leaked", name, n - 1);
	if (first[0])
		diag("%s", first);
}

static void test_oom(void)
{
	char *text = td_read("k8s", "seed-preempt.yaml", NULL);

	oom_run("seed-preempt.yaml", text ? text : "", NULL);
	free(text);
	oom_run("koord.yaml", koord_text, NULL);
	oom_run("constraints.yaml", constraints_text, NULL);
	oom_run("lws.yaml", lws_text, NULL);
	/* fault isolation: a broken Node, bound pod, pending pod, GangGroup */
	oom_run("broken.yaml",
		"kind: Node\nmetadata: {name: n0, labels: [x]}\n"
		NODE("n1", "", "cpu: \"4\"") NODE("n2", "", "cpu: \"4\"")
		POD("run", "", "nodeName: n1, " CPU("lots"))
		POD("bad", ", annotations: {gang.scheduling.koordinator.sh/"
		    "network-topology-spec: '{oops'}", CPU("1"))
		POD("a", ", labels: {pod-group.scheduling.sigs.k8s.io: ga}, "
		    "annotations: {gang.scheduling.koordinator.sh/groups: "
		    "'[\"default/ga\",\"default/gb\"]'}", CPU("1"))
		POD("b", ", labels: {pod-group.scheduling.sigs.k8s.io: gb}, "
		    "annotations: {gang.scheduling.koordinator.sh/groups: "
		    "'[\"default/ga\",\"default/gb\"]'}", CPU("1x"))
		POD("w", "", CPU("1")), NULL);
	/* gangs waiting for their PodGroups, one a GangGroup set */
	oom_run("waits.yaml",
		NODE("n1", "", "cpu: \"4\"")
		SPOD("t-0", "train") SPOD("t-1", "train")
		POD("a", ", labels: {pod-group.scheduling.sigs.k8s.io: ga}, "
		    "annotations: {gang.scheduling.koordinator.sh/groups: "
		    "'[\"default/ga\",\"default/gb\"]'}", CPU("1"))
		POD("b", ", labels: {pod-group.scheduling.sigs.k8s.io: gb}",
		    CPU("1")), NULL);
	{
		objs o;

		objs_split(&o, objects_text);
		oom_run("labels.json, one object at a time", NULL, &o);
		objs_free(&o);
	}
}

int main(void)
{
	test_seed_prefer();
	test_seed_preempt();
	test_order_independence();
	test_priority_order();
	test_requests();
	test_scheduler_plugins();
	test_pods_before_podgroup();
	test_group_object_waits();
	test_ganggroup_waits();
	test_koordinator();
	test_kai();
	test_kueue();
	test_kueue_hostname();
	test_lws();
	test_constraints();
	test_volumes();
	test_wffc();
	test_pod_affinity_k8s();
	test_guard_objects();
	test_presets();
	test_unknown_layer();
	test_misc();
	test_errors();
	test_transactions();
	test_fault_isolation();
	test_yaml();
	test_add_object();
	test_oom();
	return done_testing();
}
