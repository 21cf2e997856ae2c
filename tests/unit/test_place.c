/*
 * tests/unit/test_place.c - placement on the seed example and the anchors'
 * cases (../shared/research/anchors.md §9), through the C API.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "topogang/topogang.h"

/* nodes: "name spine block" triples; cpu in cores for every node */
static tg_topology *mk(const char *l0, const char *l1, const char *spec[][3],
		       unsigned n, int64_t cpu)
{
	tg_topology *t = tg_topology_create();
	unsigned i;

	if (l0)
		tg_topology_add_layer(t, l0, NULL);
	if (l1)
		tg_topology_add_layer(t, l1, NULL);
	for (i = 0; i < n; i++) {
		const char *path[2] = { spec[i][1], spec[i][2] };
		tg_node_id id;

		if (tg_topology_add_node(t, spec[i][0], path, &id))
			return NULL;
		tg_topology_node_set_resource(t, id, TG_RES_CPU, cpu * 1000);
		tg_topology_node_set_resource(t, id, TG_RES_MEMORY,
					      32ll << 30);
		tg_topology_node_set_resource(t, id, TG_RES_PODS, 110);
	}
	return tg_topology_build(t, NULL) == TG_OK ? t : NULL;
}

static tg_gang *gang(const char *name, unsigned n, int64_t cpu)
{
	tg_gang *g = tg_gang_create(name);
	tg_shape sh;
	unsigned i, ps;
	char pod[64];

	memset(&sh, 0, sizeof(sh));
	sh.v[TG_RES_CPU] = cpu;
	tg_gang_add_podset(g, "w", &sh, n, &ps);
	for (i = 0; i < n; i++) {
		snprintf(pod, sizeof(pod), "pod-%u", i + 1);
		tg_gang_podset_set_member(g, ps, i, pod);
	}
	return g;
}

static char *nodes_of(const tg_topology *t, const tg_decision *d)
{
	static char buf[1024];
	unsigned i;

	buf[0] = 0;
	for (i = 0; i < tg_decision_nplacements(d); i++) {
		const tg_placement *p = tg_decision_placement(d, i);

		if (i)
			strcat(buf, " ");
		strcat(buf, tg_topology_node_name(t, p->node));
	}
	return buf;
}

static const char *seed12[][3] = {
	{ "node-0", "spine-0", "block-0" }, { "node-1", "spine-0", "block-0" },
	{ "node-2", "spine-0", "block-0" }, { "node-3", "spine-0", "block-1" },
	{ "node-4", "spine-0", "block-1" }, { "node-5", "spine-1", "block-2" },
	{ "node-6", "spine-1", "block-2" }, { "node-7", "spine-1", "block-3" },
	{ "node-8", "spine-1", "block-3" }, { "node-9", "spine-2", "block-4" },
	{ "node-10", "spine-2", "block-4" },
	{ "node-11", "spine-2", "block-4" },
};

static void test_seed(void)
{
	tg_topology *t = mk("SpineLayer", "BlockLayer", seed12, 12, 8);
	tg_gang *g = gang("default/topology-demo-job", 4, 8000);
	tg_decision *d = NULL;
	char *pic;

	tg_gang_set_gather(g, "BlockLayer", TG_GATHER_PREFER);
	tg_gang_set_gather(g, "SpineLayer", TG_GATHER_PREFER);
	is_int(tg_place(t, g, &d, NULL), TG_OK, "seed: place");
	is_int(tg_decision_status(d), TG_STATUS_PLACED, "seed: placed");
	is_str(nodes_of(t, d), "node-5 node-6 node-7 node-8",
	       "seed: PreferGather gang lands on node-5..node-8");
	is_str(tg_decision_domain(d), "SpineLayer/spine-1", "seed: domain");
	like(tg_decision_message(d), "escalated to SpineLayer",
	     "seed: message says the gang escalated");
	ok(tg_decision_bandwidth_gbps(d) == 200, "seed: spine bandwidth %g",
	   tg_decision_bandwidth_gbps(d));
	is_int(tg_decision_apply(t, g, d), TG_OK, "seed: apply");
	is_int(tg_topology_check(t, NULL), TG_OK, "seed: invariants hold");
	is_int(tg_topology_node_free(t, 5, TG_RES_CPU), 0,
	       "seed: node-5 used");
	pic = tg_draw(t, d);
	like(pic, "[node-5 r0]", "draw marks rank 0");
	like(pic, "SpineLayer spine-1", "draw names the spine");
	tg_free(pic);
	tg_decision_free(d);
	tg_gang_destroy(g);

	/* must gather at block for 4: nothing fits, message lists blocks */
	g = gang("default/must-block", 4, 8000);
	tg_gang_set_gather(g, "BlockLayer", TG_GATHER_MUST);
	is_int(tg_place(t, g, &d, NULL), TG_OK, "must-block: place");
	is_int(tg_decision_status(d), TG_STATUS_UNSCHEDULABLE,
	       "must-block: unschedulable");
	like(tg_decision_message(d), "no BlockLayer domain can hold 4 "
	     "members: BlockLayer/spine-0/block-0: 3",
	     "must-block: message lists what each block holds");
	like(tg_decision_message(d), "4 insufficient cpu",
	     "must-block: message counts busy nodes");
	tg_decision_free(d);
	tg_gang_destroy(g);

	g = gang("default/bad-layer", 1, 1000);
	tg_gang_set_gather(g, "RackLayer", TG_GATHER_MUST);
	is_int(tg_place(t, g, &d, NULL), TG_OK, "unknown layer: a decision");
	is_int(tg_decision_status(d), TG_STATUS_UNSCHEDULABLE,
	       "unknown layer: unschedulable");
	like(tg_decision_message(d), "unknown topology layer 'RackLayer'",
	     "unknown layer: named");
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);
}

/* A1: prefer gather fills one spine block by block; ties by name */
static void test_a1(void)
{
	static const char *n8[][3] = {
		{ "node-8", "s1", "b1" }, { "node-1", "s1", "b1" },
		{ "node-7", "s1", "b2" }, { "node-2", "s1", "b2" },
		{ "node-6", "s2", "b3" }, { "node-3", "s2", "b3" },
		{ "node-5", "s2", "b4" }, { "node-4", "s2", "b4" },
	};
	tg_topology *t = mk("SpineLayer", "BlockLayer", n8, 8, 16);
	tg_gang *g = gang("default/gang", 4, 16000);
	tg_decision *d;

	tg_gang_set_gather(g, "BlockLayer", TG_GATHER_PREFER);
	tg_gang_set_gather(g, "SpineLayer", TG_GATHER_PREFER);
	tg_place(t, g, &d, NULL);
	is_str(nodes_of(t, d), "node-1 node-8 node-2 node-7",
	       "A1: pod-1..4 -> node-1, node-8, node-2, node-7");
	tg_decision_free(d);
	tg_gang_destroy(g);
	g = gang("default/small", 2, 8000);
	tg_place(t, g, &d, NULL);
	is_str(nodes_of(t, d), "node-1 node-1",
	       "A1 companion: both pods on node-1");
	is_str(tg_decision_domain(d), "node/node-1", "A1 companion: domain");
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);
}

/* A3: minimise racks before nodes */
static void test_a3(void)
{
	static const char *n[][3] = {
		{ "x3", "b1", "r1" }, { "x5", "b1", "r2" },
		{ "x1", "b1", "r3" }, { "x6", "b1", "r3" },
		{ "x2", "b1", "r3" }, { "x4", "b1", "r3" },
	};
	tg_topology *t = mk("block", "rack", n, 6, 1);
	tg_gang *g = gang("default/a3", 4, 1000);
	tg_decision *d;

	tg_topology_node_set_resource(t, 0, TG_RES_CPU, 2000);
	tg_topology_node_set_resource(t, 1, TG_RES_CPU, 2000);
	tg_gang_set_gather(g, "block", TG_GATHER_MUST);
	tg_place(t, g, &d, NULL);
	is_str(nodes_of(t, d), "x1 x2 x4 x6", "A3: one rack, four nodes");
	is_str(tg_decision_domain(d), "rack/b1/r3", "A3: rack r3");
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);
}

/* A4: preferred level split, largest first, last domain best-fit */
static void test_a4(void)
{
	static const char *n[][3] = {
		{ "n1", "b1", NULL }, { "n2", "b2", NULL }, { "n3", "b3", NULL },
	};
	tg_topology *t = tg_topology_create();
	tg_gang *g = gang("default/a4", 5, 1000);
	tg_decision *d;
	unsigned i;
	int64_t cpu[] = { 2000, 1000, 4000 };

	tg_topology_add_layer(t, "block", NULL);
	for (i = 0; i < 3; i++) {
		const char *path[1] = { n[i][1] };

		tg_topology_add_node(t, n[i][0], path, NULL);
		tg_topology_node_set_resource(t, i, TG_RES_CPU, cpu[i]);
	}
	tg_topology_build(t, NULL);
	tg_gang_set_gather(g, "block", TG_GATHER_PREFER);
	tg_place(t, g, &d, NULL);
	is_str(nodes_of(t, d), "n3 n3 n3 n3 n2",
	       "A4: b3 takes 4, b2 (tightest) takes 1");
	is_str(tg_decision_domain(d), "cluster", "A4: spans the cluster");
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);
}

/* A5: GB200 NVL36, dc required, aizone slices of 48, rack slices of 16 */
static void test_a5(void)
{
	tg_topology *t = tg_topology_create();
	tg_gang *g = tg_gang_create("default/a5");
	tg_decision *d;
	tg_shape sh;
	unsigned r, i, ps, cnt[8] = { 0 };
	char name[32], rack[8], blk[8], az[8];

	tg_topology_add_layer(t, "datacenter", NULL);
	tg_topology_add_layer(t, "aizone", NULL);
	tg_topology_add_layer(t, "block", NULL);
	tg_topology_add_layer(t, "rack", NULL);
	for (r = 0; r < 8; r++)
		for (i = 0; i < 18; i++) {
			const char *path[4] = { "dc0", az, blk, rack };
			tg_node_id id;

			snprintf(az, sizeof(az), "aizone%u", r / 4);
			snprintf(blk, sizeof(blk), "block%u", r / 2);
			snprintf(rack, sizeof(rack), "r%u", r);
			snprintf(name, sizeof(name), "r%u-n%02u", r, i);
			tg_topology_add_node(t, name, path, &id);
			tg_topology_node_set_gpus(t, id, 2, NULL);
		}
	tg_topology_build(t, NULL);
	memset(&sh, 0, sizeof(sh));
	sh.v[TG_RES_GPU] = 2;
	tg_gang_add_podset(g, "w", &sh, 96, &ps);
	tg_gang_set_gather(g, "datacenter", TG_GATHER_MUST);
	tg_gang_add_slice(g, "aizone", 48);
	tg_gang_add_slice(g, "rack", 16);
	is_int(tg_place(t, g, &d, NULL), TG_OK, "A5: place");
	is_int(tg_decision_status(d), TG_STATUS_PLACED, "A5: placed");
	for (i = 0; i < tg_decision_nplacements(d); i++) {
		const char *nm = tg_topology_node_name(t,
				tg_decision_placement(d, i)->node);

		cnt[nm[1] - '0']++;
	}
	ok(cnt[0] == 16 && cnt[1] == 16 && cnt[2] == 16 && cnt[3] == 0 &&
	   cnt[4] == 16 && cnt[5] == 16 && cnt[6] == 16 && cnt[7] == 0,
	   "A5: 16 pods on each of r0 r1 r2 r4 r5 r6 (%u %u %u %u %u %u %u "
	   "%u)", cnt[0], cnt[1], cnt[2], cnt[3], cnt[4], cnt[5], cnt[6],
	   cnt[7]);
	/* ranks: each slice of 16 consecutive ranks in one rack */
	{
		bool slices_ok = true;

		for (i = 0; i < 96; i++) {
			const char *a = tg_topology_node_name(t,
				tg_decision_placement(d, i)->node);
			const char *b = tg_topology_node_name(t,
				tg_decision_placement(d, i - i % 16)->node);

			if (a[1] != b[1])
				slices_ok = false;
		}
		ok(slices_ok, "A5: every 16 consecutive ranks share a rack");
	}
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);
}

/* A6: KAI packs into the rack that already has allocations; KAI doc zones */
static void test_a6(void)
{
	static const char *n[][3] = {
		{ "node0", "rack1", NULL }, { "node1", "rack2", NULL },
	};
	tg_topology *t = tg_topology_create();
	tg_gang *g = tg_gang_create("default/pending_job0");
	tg_decision *d;
	tg_shape sh;
	tg_alloc_spec a;
	unsigned i, ps;

	tg_topology_add_layer(t, "topology.kubernetes.io/rack", NULL);
	for (i = 0; i < 2; i++) {
		const char *path[1] = { n[i][1] };

		tg_topology_add_node(t, n[i][0], path, NULL);
		tg_topology_node_set_gpus(t, i, 3, NULL);
	}
	tg_topology_build(t, NULL);
	memset(&sh, 0, sizeof(sh));
	sh.v[TG_RES_GPU] = 1;
	memset(&a, 0, sizeof(a));
	a.pod = "running_job0";
	a.node = 0;
	a.shape = &sh;
	is_int(tg_topology_add_alloc(t, &a), TG_OK, "A6: running job");
	tg_gang_add_podset(g, "t", &sh, 2, &ps);
	tg_gang_set_gather(g, "topology.kubernetes.io/rack", TG_GATHER_MUST);
	tg_place(t, g, &d, NULL);
	is_str(nodes_of(t, d), "node0 node0", "A6: both tasks on node0");
	ok(tg_decision_placement(d, 0)->gpus == 2 &&
	   tg_decision_placement(d, 1)->gpus == 4,
	   "A6: GPUs 1 and 2 (GPU 0 is taken)");
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);
}

static void test_kai_zones(void)
{
	static const char *n[][3] = {
		{ "a1-0", "zoneA", "A1" }, { "a1-1", "zoneA", "A1" },
		{ "a2-0", "zoneA", "A2" }, { "a3-0", "zoneA", "A3" },
		{ "a4-0", "zoneA", "A4" },
		{ "b1-0", "zoneB", "B1" }, { "b1-1", "zoneB", "B1" },
		{ "b2-0", "zoneB", "B2" }, { "b2-1", "zoneB", "B2" },
		{ "b3-0", "zoneB", "B3" }, { "b3-1", "zoneB", "B3" },
	};
	tg_topology *t = mk("zone", "rack", n, 11, 4);
	tg_gang *g = gang("default/kai-doc", 3, 4000);
	tg_decision *d;

	tg_gang_set_gather(g, "zone", TG_GATHER_MUST);
	tg_gang_set_gather(g, "rack", TG_GATHER_PREFER);
	tg_place(t, g, &d, NULL);
	is_str(nodes_of(t, d), "a1-0 a1-1 a2-0",
	       "KAI doc: zone A, 2 pods on rack A1, 1 on A2");
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);
}

/* A7: Volcano hard tier: tier-1 holds 2, gang of 3 */
static void test_a7(void)
{
	static const char *n[][3] = {
		{ "s0-n1", "s2", "s0" }, { "s0-n2", "s2", "s0" },
		{ "s1-n3", "s2", "s1" }, { "s1-n4", "s2", "s1" },
	};
	tg_topology *t = mk("tier2", "tier1", n, 4, 2);
	tg_gang *g = gang("default/pg1", 3, 2000);
	tg_decision *d;

	tg_gang_set_gather(g, "tier1", TG_GATHER_MUST);
	tg_place(t, g, &d, NULL);
	is_int(tg_decision_status(d), TG_STATUS_UNSCHEDULABLE,
	       "A7: highestTierAllowed=1 -> nothing");
	like(tg_decision_message(d), "tier1/s2/s0: 2",
	     "A7: message lists tier-1 domains");
	tg_decision_free(d);
	tg_gang_destroy(g);
	g = gang("default/pg1", 3, 2000);
	tg_gang_set_gather(g, "tier2", TG_GATHER_MUST);
	tg_place(t, g, &d, NULL);
	is_int(tg_decision_status(d), TG_STATUS_PLACED,
	       "A7: highestTierAllowed=2 -> placed");
	is_int(tg_decision_nplacements(d), 3, "A7: 3 binds");
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);
}

/* NVLink islands: a 4-GPU member gets one island */
static void test_islands(void)
{
	static const uint8_t isl[8] = { 0, 0, 0, 0, 1, 1, 1, 1 };
	tg_topology *t = tg_topology_create();
	tg_gang *g = tg_gang_create("default/tp4");
	tg_decision *d;
	tg_shape sh;
	tg_alloc_spec a;
	unsigned ps;

	tg_topology_add_node(t, "dgx", NULL, NULL);
	tg_topology_node_set_gpus(t, 0, 8, isl);
	tg_topology_build(t, NULL);
	memset(&sh, 0, sizeof(sh));
	sh.v[TG_RES_GPU] = 1;
	memset(&a, 0, sizeof(a));
	a.pod = "other";
	a.shape = &sh;
	a.gpus = 1u << 5;	/* GPU 5 busy: island 1 has 3 free */
	tg_topology_add_alloc(t, &a);
	sh.v[TG_RES_GPU] = 3;
	tg_gang_add_podset(g, "w", &sh, 1, &ps);
	tg_place(t, g, &d, NULL);
	ok(tg_decision_placement(d, 0)->gpus == 0xd0,
	   "3 GPUs from the tightest island (4,6,7): got 0x%llx",
	   (unsigned long long)tg_decision_placement(d, 0)->gpus);
	tg_decision_free(d);
	tg_gang_destroy(g);
	g = tg_gang_create("default/tp4b");
	sh.v[TG_RES_GPU] = 4;
	tg_gang_add_podset(g, "w", &sh, 1, &ps);
	tg_place(t, g, &d, NULL);
	ok(tg_decision_placement(d, 0)->gpus == 0x0f,
	   "4 GPUs from island 0: got 0x%llx",
	   (unsigned long long)tg_decision_placement(d, 0)->gpus);
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);
}

/* Missing labels: the node is named, never silently used */
static void test_missing_labels(void)
{
	static const char *n[][3] = {
		{ "n1", "s1", "b1" }, { "n2", "s1", NULL }, { "n3", "s1", "b1" },
	};
	tg_topology *t = mk("spine", "block", n, 3, 8);
	tg_gang *g = gang("default/g", 3, 8000);
	tg_decision *d;

	is_int(tg_topology_nwarnings(t), 1, "missing label: one warning");
	like(tg_topology_warning(t, 0), "node n2: no block label",
	     "missing label: names node and layer");
	tg_gang_set_gather(g, "block", TG_GATHER_PREFER);
	tg_place(t, g, &d, NULL);
	is_int(tg_decision_status(d), TG_STATUS_UNSCHEDULABLE,
	       "missing label: topology gang cannot use n2");
	like(tg_decision_message(d), "1 node left out for missing topology",
	     "missing label: message says so");
	tg_decision_free(d);
	tg_gang_destroy(g);
	g = gang("default/plain", 3, 8000);
	tg_place(t, g, &d, NULL);
	is_int(tg_decision_status(d), TG_STATUS_PLACED,
	       "missing label: a gang without topology request may use n2");
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);
}

/* Spread: hard maxSkew 1 over 3 racks with 4 members */
static void test_spread(void)
{
	static const char *n[][3] = {
		{ "a1", "z", "r1" }, { "a2", "z", "r1" }, { "b1", "z", "r2" },
		{ "b2", "z", "r2" }, { "c1", "z", "r3" }, { "c2", "z", "r3" },
	};
	tg_topology *t = mk("zone", "rack", n, 6, 8);
	tg_gang *g = gang("default/spread", 4, 4000);
	tg_decision *d;

	tg_gang_add_spread(g, "rack", 1, true);
	tg_place(t, g, &d, NULL);
	is_int(tg_decision_status(d), TG_STATUS_PLACED, "spread: placed");
	is_str(nodes_of(t, d), "a1 a1 b1 c1", "spread: 2,1,1 over racks");
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);
}


/* ---- label-selector spreads (Kubernetes topologySpreadConstraints) ---- */

/* spines s1..s3, one 8-core node each; node "nX" carries pool=a, s3's
 * pool=b */
static tg_topology *spines3(void)
{
	static const char *n[][3] = {
		{ "n1", "s1", "b1" }, { "n2", "s2", "b2" }, { "n3", "s3", "b3" },
	};
	tg_topology *t = tg_topology_create();
	unsigned i;

	tg_topology_add_layer(t, "spine", NULL);
	tg_topology_add_layer(t, "block", NULL);
	for (i = 0; i < 3; i++) {
		const char *path[2] = { n[i][1], n[i][2] };
		tg_node_id id;

		tg_topology_add_node(t, n[i][0], path, &id);
		tg_topology_node_set_resource(t, id, TG_RES_CPU, 8000);
		tg_topology_node_set_resource(t, id, TG_RES_PODS, 110);
		tg_topology_node_add_label(t, id, "pool", i < 2 ? "a" : "b");
	}
	return tg_topology_build(t, NULL) == TG_OK ? t : NULL;
}

static void add_pod(tg_topology *t, const char *pod, const char *node,
		    const char *app, int64_t cpu)
{
	tg_label l = { "app", app };
	tg_alloc_spec sp;
	tg_shape sh;

	memset(&sh, 0, sizeof(sh));
	sh.v[TG_RES_CPU] = cpu;
	memset(&sp, 0, sizeof(sp));
	sp.pod = pod;
	tg_topology_node_find(t, node, &sp.node);
	sp.shape = &sh;
	sp.ns = "default";
	sp.labels = app ? &l : NULL;
	sp.nlabels = app ? 1 : 0;
	if (tg_topology_add_alloc(t, &sp))
		ok(0, "add_pod %s", pod);
}

/* *\p sp: a spread of maxSkew 1 over \p layer counting the app=web pods
 * of namespace default. */
static void web_spec(tg_spread_spec *sp, const char *layer, bool hard)
{
	static const char *const vals[] = { "web" };
	static const tg_label_expr e = { "app", TG_SEL_IN, vals, 1 };

	memset(sp, 0, sizeof(*sp));
	sp->layer = layer;
	sp->max_skew = 1;
	sp->hard = hard;
	sp->ns = "default";
	sp->selector = true;
	sp->exprs = &e;
	sp->nexprs = 1;
}

/* A gang of \p n app=web pods spread over \p layer (maxSkew 1). */
static tg_gang *web_on(const char *name, unsigned n, bool hard,
		       unsigned min_domains, bool ignore_aff,
		       const char *layer)
{
	tg_label l = { "app", "web" };
	tg_spread_spec sp;
	tg_gang *g = gang(name, n, 2000);
	unsigned i;

	web_spec(&sp, layer, hard);
	sp.min_domains = min_domains;
	sp.ignore_node_affinity = ignore_aff;
	if (tg_gang_add_spread_spec(g, &sp))
		ok(0, "tg_gang_add_spread_spec");
	for (i = 0; i < n; i++) {
		char pod[96];

		snprintf(pod, sizeof(pod), "%s-%u", name, i);
		tg_gang_podset_set_member(g, 0, i, pod);
		tg_gang_podset_set_member_labels(g, 0, i, "default", &l, 1);
	}
	return g;
}

static tg_gang *web(const char *name, unsigned n, bool hard,
		    unsigned min_domains, bool ignore_aff)
{
	return web_on(name, n, hard, min_domains, ignore_aff, "spine");
}

/* Places and applies; returns the spines of the placements, "" when
 * unschedulable (*msg gets the message). */
static const char *place_web(tg_topology *t, tg_gang *g, char *msg,
			     size_t len)
{
	static char buf[256];
	tg_decision *d = NULL;
	unsigned i;

	buf[0] = 0;
	if (tg_place(t, g, &d, NULL))
		return "error";
	if (msg)
		snprintf(msg, len, "%s", tg_decision_message(d));
	if (tg_decision_status(d) == TG_STATUS_PLACED) {
		if (tg_decision_apply(t, g, d))
			ok(0, "apply %s", tg_gang_name(g));
		for (i = 0; i < tg_decision_nplacements(d); i++) {
			tg_node_id n = tg_decision_placement(d, i)->node;

			if (i)
				strcat(buf, " ");
			strcat(buf, tg_topology_domain_path(t,
				tg_topology_domain_parent(t,
					tg_topology_node_domain(t, n))));
		}
	}
	tg_decision_free(d);
	tg_gang_destroy(g);
	return buf;
}

static void test_label_spread(void)
{
	tg_topology *t = spines3();
	char msg[2048], a[3][16];
	tg_gang *g;
	unsigned i;

	/* one web pod running in s1: the next two go to s2 and s3, in
	 * turn, each seeing the one placed before it */
	add_pod(t, "default/web-0", "n1", "web", 1000);
	add_pod(t, "default/db-0", "n2", "db", 1000);
	snprintf(a[0], 16, "%s", place_web(t, web("default/web-1", 1, true,
						  0, false), NULL, 0));
	snprintf(a[1], 16, "%s", place_web(t, web("default/web-2", 1, true,
						  0, false), NULL, 0));
	ok(strcmp(a[0], "s1") && strcmp(a[1], "s1") && strcmp(a[0], a[1]) &&
	   *a[0] && *a[1], "label spread: running and earlier pods count "
	   "(%s, %s)", a[0], a[1]);
	/* 1,1,1: any spine; then 2,?,?: the fourth avoids that one */
	snprintf(a[2], 16, "%s", place_web(t, web("default/web-3", 1, true,
						  0, false), NULL, 0));
	ok(*a[2], "label spread: 1,1,1 takes a fourth anywhere (%s)", a[2]);
	is_str(place_web(t, web("default/web-4", 2, true, 0, false), NULL, 0),
	       strcmp(a[2], "s1") == 0 ? "s2 s3" : strcmp(a[2], "s2") == 0 ?
	       "s1 s3" : "s1 s2", "label spread: a gang of two fills the "
	       "two spines at the minimum");
	tg_topology_destroy(t);

	/* s3 full: the third pod has no spine left */
	t = spines3();
	add_pod(t, "default/big", "n3", NULL, 8000);
	ok(*place_web(t, web("default/web-1", 1, true, 0, false), NULL, 0),
	   "full spine: first placed");
	ok(*place_web(t, web("default/web-2", 1, true, 0, false), NULL, 0),
	   "full spine: second placed");
	is_str(place_web(t, web("default/web-3", 1, true, 0, false), msg,
			 sizeof(msg)), "", "full spine: the third is "
	       "unschedulable");
	ok(strstr(msg, "topology spread on 'spine' (maxSkew 1, "
		  "DoNotSchedule)") && strstr(msg, "spine/s3: 0") &&
	   strstr(msg, "in a domain over the maximum skew"),
	   "full spine: the message names the constraint: %s", msg);
	/* ScheduleAnyway: a preference only */
	ok(*place_web(t, web("default/web-5", 1, false, 0, false), NULL, 0),
	   "full spine: a soft spread places it");
	tg_topology_destroy(t);

	/* a label spread on a key that is not a layer: soft is noted and
	 * left out; hard filters every node without the key (no node here
	 * carries it), as kube-scheduler's Filter does */
	t = spines3();
	{
		tg_spread_spec sp;
		unsigned hard;

		for (hard = 0; hard < 2; hard++) {
			g = gang(hard ? "default/zh" : "default/zs", 1, 1000);
			memset(&sp, 0, sizeof(sp));
			sp.layer = "topology.kubernetes.io/zone";
			sp.max_skew = 1;
			sp.hard = hard;
			sp.selector = true;
			tg_gang_add_spread_spec(g, &sp);
			is_str(place_web(t, g, msg, sizeof(msg)) [0] ? "placed" :
			       "unschedulable", hard ? "unschedulable" : "placed",
			       "%s spread on an unknown key", hard ? "hard" :
			       "soft");
			ok(strstr(msg, hard ? "topology spread on "
				  "'topology.kubernetes.io/zone' (maxSkew 1, "
				  "DoNotSchedule) counting pods in namespace "
				  "'' that match its selector: no node carries "
				  "the key (minimum 0 over 0 eligible domains); "
				  "3/3 nodes can take none: 3 without a hard "
				  "spread's topology key" :
				  "soft spread on unknown layer "
				  "'topology.kubernetes.io/zone' ignored") != NULL,
			   "... said: %s", msg);
		}
	}
	tg_topology_destroy(t);

	/* minDomains 4 over 3 spines: the minimum is 0, at most one each */
	t = spines3();
	place_web(t, web("default/w1", 3, true, 4, false), NULL, 0);
	is_str(place_web(t, web("default/w2", 1, true, 4, false), msg,
			 sizeof(msg)), "", "minDomains: a fourth pod over 3 "
	       "spines is unschedulable");
	ok(strstr(msg, "fewer than minDomains") != NULL,
	   "minDomains: said: %s", msg);
	tg_topology_destroy(t);

	/* a gang of three under a spread over blocks (one a spine): no
	 * spine holds it, so the cluster does, one member a block */
	t = spines3();
	{
		tg_spread_spec sp;

		g = web("default/b", 3, true, 0, false);
		web_spec(&sp, "block", true);
		tg_gang_add_spread_spec(g, &sp);
		is_str(place_web(t, g, msg, sizeof(msg)), "s1 s2 s3",
		       "spread over blocks: one a block across spines (%s)",
		       msg);
	}
	tg_topology_destroy(t);

	/* nodeAffinityPolicy: pool=a keeps s3 out of the domains (Honor),
	 * so two pods per spine fit; with Ignore s3 holds the minimum at 0 */
	t = spines3();
	g = web("default/h", 4, true, 0, false);
	tg_gang_podset_add_node_selector(g, 0, "pool", "a");
	is_str(place_web(t, g, msg, sizeof(msg)), "s1 s1 s2 s2",
	       "nodeAffinityPolicy Honor: s3 is no domain (%s)", msg);
	tg_topology_destroy(t);
	/* nodeTaintsPolicy: n3 tainted NoSchedule (not tolerated); Honor
	 * leaves s3 out (two pods per spine fit), Ignore keeps it at 0 */
	{
		tg_spread_spec sp;
		unsigned honor;

		for (honor = 0; honor < 2; honor++) {
			tg_node_id n3;

			t = spines3();
			tg_topology_node_find(t, "n3", &n3);
			tg_topology_node_add_taint(t, n3, "gpu", NULL,
						   TG_TAINT_NO_SCHEDULE);
			g = gang("default/taint", 4, 2000);
			web_spec(&sp, "spine", true);
			sp.honor_taints = honor;
			tg_gang_add_spread_spec(g, &sp);
			for (i = 0; i < 4; i++) {
				tg_label l = { "app", "web" };

				tg_gang_podset_set_member_labels(g, 0, i,
						"default", &l, 1);
			}
			is_str(place_web(t, g, msg, sizeof(msg)),
			       honor ? "s1 s1 s2 s2" : "",
			       "nodeTaintsPolicy %s", honor ? "Honor: s3 is no "
			       "domain" : "Ignore: the tainted s3 holds the "
			       "minimum at 0");
			tg_topology_destroy(t);
		}
	}
	t = spines3();
	g = web("default/i", 3, true, 0, true);
	tg_gang_podset_add_node_selector(g, 0, "pool", "a");
	is_str(place_web(t, g, msg, sizeof(msg)), "",
	       "nodeAffinityPolicy Ignore: empty s3 keeps the others at 1");
	tg_topology_destroy(t);
}


/*
 * Two spines of three nodes, each spine with one node of each zone
 * (zone z<i % 3>): the zone label is no topology layer and cuts across
 * the tree; n7 in s2 has no zone label.  8 cpu each.
 */
static tg_topology *zones6(void)
{
	tg_topology *t = tg_topology_create();
	unsigned i;

	tg_topology_add_layer(t, "spine", NULL);
	tg_topology_add_layer(t, "block", NULL);
	for (i = 0; i < 7; i++) {
		const char *path[2] = { i < 3 ? "s1" : "s2",
					i < 3 ? "b1" : "b2" };
		char name[8], zone[8];
		tg_node_id id;

		snprintf(name, sizeof(name), "n%u", i + 1);
		snprintf(zone, sizeof(zone), "z%u", i % 3);
		tg_topology_add_node(t, name, path, &id);
		tg_topology_node_set_resource(t, id, TG_RES_CPU, 8000);
		tg_topology_node_set_resource(t, id, TG_RES_PODS, 110);
		if (i < 6)
			tg_topology_node_add_label(t, id, "zone", zone);
	}
	return tg_topology_build(t, NULL) == TG_OK ? t : NULL;
}

/* Places \p g and applies; adds its members per zone to z[0..3) (z[3]:
 * no zone); false when unschedulable (*msg: the message). */
static bool place_zones(tg_topology *t, tg_gang *g, unsigned *z, char *msg,
			size_t len)
{
	tg_decision *d = NULL;
	unsigned i;
	bool placed;

	if (tg_place(t, g, &d, NULL)) {
		tg_gang_destroy(g);
		return false;
	}
	snprintf(msg, len, "%s", tg_decision_message(d));
	placed = tg_decision_status(d) == TG_STATUS_PLACED;
	if (placed && tg_decision_apply(t, g, d))
		ok(0, "apply %s", tg_gang_name(g));
	for (i = 0; placed && i < tg_decision_nplacements(d); i++) {
		const char *v = tg_topology_node_label(t,
				tg_decision_placement(d, i)->node, "zone");

		z[v ? (unsigned)(v[1] - '0') : 3]++;
	}
	tg_decision_free(d);
	tg_gang_destroy(g);
	return placed;
}

/* Whether zones z0, z1, z2 hold \p a, \p b, \p c and no member went to
 * a node without a zone. */
static bool zones_are(const unsigned *z, unsigned a, unsigned b, unsigned c)
{
	return z[0] == a && z[1] == b && z[2] == c && !z[3];
}

/*
 * A hard spread over a node label that is no topology layer (issue 15:
 * kube-scheduler spreads over any key; the core refused it as "not a
 * topology layer", so 9 plain pods spread over topology.kubernetes.io/zone
 * stayed pending in test-realapi-crosscheck).  The domains are the key's
 * values (a pair of key and value, filtering.go's TpValueToMatchNum),
 * whatever the tree; a node without the key takes no member and counts
 * no pod (filtering.go Filter: ErrReasonNodeLabelNotMatch).
 */
static void test_key_spread(void)
{
	tg_topology *t = zones6();
	unsigned z[4] = { 0 }, i;
	char msg[2048];
	bool all = true;

	/* a web pod running in z0 (n1); a db pod there does not count */
	add_pod(t, "default/web-0", "n1", "web", 1000);
	add_pod(t, "default/db-0", "n2", "db", 1000);
	z[0] = 1;
	/* five lone pods, each seeing those before: 2, 2, 2 */
	for (i = 0; i < 5; i++) {
		char name[32];

		snprintf(name, sizeof(name), "default/web-%u", i + 1);
		all = place_zones(t, web_on(name, 1, true, 0, false, "zone"),
				  z, msg, sizeof(msg)) && all;
	}
	ok(all && zones_are(z, 2, 2, 2), "key spread: five lone pods over "
	   "zones across the tree: 2 2 2 (%u %u %u, none %u): %s", z[0],
	   z[1], z[2], z[3], msg);
	/* a gang of seven: members one at a time, the skew kept: 4 3 3 or
	 * a rotation (the tree's order is not the zones') */
	ok(place_zones(t, web_on("default/g7", 7, true, 0, false, "zone"), z,
		       msg, sizeof(msg)),
	   "key spread: a gang of 7 is placed: %s", msg);
	ok(z[0] + z[1] + z[2] == 13 && !z[3] &&
	   z[0] + 1 >= z[1] && z[1] + 1 >= z[0] && z[0] + 1 >= z[2] &&
	   z[2] + 1 >= z[0] && z[1] + 1 >= z[2] && z[2] + 1 >= z[1],
	   "key spread: its members keep the skew (%u %u %u, none %u)",
	   z[0], z[1], z[2], z[3]);
	tg_topology_destroy(t);

	/* z2 full (n3 and n6): the second pod has 1 0 0 over z0 z1 left,
	 * the third would make z0 or z1 hold 2 against z2's 0 */
	t = zones6();
	add_pod(t, "default/big-3", "n3", NULL, 8000);
	add_pod(t, "default/big-6", "n6", NULL, 8000);
	memset(z, 0, sizeof(z));
	all = place_zones(t, web_on("default/a", 1, true, 0, false, "zone"),
			  z, msg, sizeof(msg));
	all = place_zones(t, web_on("default/b", 1, true, 0, false, "zone"),
			  z, msg, sizeof(msg)) && all;
	ok(all && zones_are(z, 1, 1, 0), "key spread, z2 full: two pods, z0 "
	   "and z1 (%u %u %u)", z[0], z[1], z[2]);
	ok(!place_zones(t, web_on("default/c", 1, true, 0, false, "zone"), z,
			msg, sizeof(msg)), "key spread, z2 full: the third is "
	   "unschedulable (n7 has no zone)");
	like(msg, "topology spread on 'zone' (maxSkew 1, DoNotSchedule) "
	     "counting pods in namespace 'default' that match its selector: "
	     "zone=z0: 1, zone=z1: 1, zone=z2: 0 (minimum 0 over 3 "
	     "eligible domains); 7/7 nodes can take none: 4 in a domain "
	     "over the maximum skew, 1 without a hard spread's topology key, "
	     "2 insufficient cpu", "key spread: the message counts each value");
	/* a gang without the spread may use n7: 3 whole nodes are left,
	 * two of z0 and z1 and n7 */
	memset(z, 0, sizeof(z));
	ok(place_zones(t, gang("default/free", 3, 8000), z, msg,
		       sizeof(msg)) && z[3] == 1, "a gang without the spread "
	   "uses n7 too: %s", msg);
	tg_topology_destroy(t);

	/* minDomains 4 over 3 zones: the minimum is 0, one pod a zone */
	t = zones6();
	memset(z, 0, sizeof(z));
	ok(place_zones(t, web_on("default/m", 3, true, 4, false, "zone"), z,
		       msg, sizeof(msg)) && zones_are(z, 1, 1, 1),
	   "key spread, minDomains 4: a gang of 3, one a zone");
	ok(!place_zones(t, web_on("default/m4", 1, true, 4, false, "zone"), z,
			msg, sizeof(msg)) && strstr(msg, "fewer than minDomains"),
	   "key spread, minDomains 4: a fourth is unschedulable: %s", msg);
	tg_topology_destroy(t);

	/* a gang whose members count toward a key spread and a hostname
	 * one: not supported, said */
	t = zones6();
	{
		tg_gang *g = web_on("default/both", 2, true, 0, false, "zone");
		tg_spread_spec sp;

		web_spec(&sp, "kubernetes.io/hostname", true);
		tg_gang_add_spread_spec(g, &sp);
		ok(!place_zones(t, g, z, msg, sizeof(msg)),
		   "key and hostname spreads over a gang's own members: "
		   "unschedulable");
		like(msg, "2 members count toward the topology spread on "
		     "'zone', which is no topology layer", "... saying why");
		like(msg, "(not supported)", "... and that it is not "
		     "supported");
	}
	tg_topology_destroy(t);
}

/*
 * Twelve nodes of 8 cpu (n0..n11), zone z<i % 3>, no layer: a gang of 30
 * (2 cpu each) spread over the zones is more than fill_key() scans node
 * by node, so its nodes go in groups by zone; the order is the same:
 * the zone with the fewest first, a node already taken first, then
 * position: 10 a zone, each zone's first two nodes full (4) and its
 * third holding 2.
 */
static void test_key_fill_groups(void)
{
	tg_topology *t = tg_topology_create();
	tg_decision *d = NULL;
	tg_gang *g = web_on("default/g30", 30, true, 0, false, "zone");
	unsigned i, per[12] = { 0 };
	char want[64] = "", got[64] = "";

	for (i = 0; i < 12; i++) {
		char name[8], zone[8];
		tg_node_id id;

		snprintf(name, sizeof(name), "n%u", i);
		snprintf(zone, sizeof(zone), "z%u", i % 3);
		tg_topology_add_node(t, name, NULL, &id);
		tg_topology_node_set_resource(t, id, TG_RES_CPU, 8000);
		tg_topology_node_set_resource(t, id, TG_RES_PODS, 110);
		tg_topology_node_add_label(t, id, "zone", zone);
	}
	tg_topology_build(t, NULL);
	tg_place(t, g, &d, NULL);
	ok(d && tg_decision_status(d) == TG_STATUS_PLACED, "key fill in "
	   "groups: a gang of 30 over 3 zones is placed: %s",
	   d ? tg_decision_message(d) : "");
	for (i = 0; d && i < tg_decision_nplacements(d); i++)
		per[tg_decision_placement(d, i)->node]++;
	for (i = 0; i < 12; i++) {
		size_t l = strlen(got);

		snprintf(got + l, sizeof(got) - l, "%u", per[i]);
		l = strlen(want);
		snprintf(want + l, sizeof(want) - l, "%u",
			 i < 6 ? 4 : i < 9 ? 2 : 0);
	}
	is_str(got, want, "key fill in groups: nodes n0..n11 hold 4 4 4 4 "
	       "4 4 2 2 2 0 0 0");
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);
}

/*
 * TG_MAX_KEY_FILL: 4,096 nodes of 1 cpu, each its own value of "rail"
 * (no layer); a gang of 2-cpu members spread over rail fits nowhere.
 * 4,096 members: 4,096 x 4,096 is the bound itself, so the gang is
 * decided (unschedulable for want of cpu); 4,097 are over it: refused,
 * the message naming the bound.
 */
static void test_key_fill_bound(void)
{
	tg_topology *t = tg_topology_create();
	unsigned i, k;

	for (i = 0; i < 4096; i++) {
		char name[16], rail[16];
		tg_node_id id;

		snprintf(name, sizeof(name), "n%u", i);
		snprintf(rail, sizeof(rail), "r%u", i);
		tg_topology_add_node(t, name, NULL, &id);
		tg_topology_node_set_resource(t, id, TG_RES_CPU, 1000);
		tg_topology_node_set_resource(t, id, TG_RES_PODS, 110);
		tg_topology_node_add_label(t, id, "rail", rail);
	}
	tg_topology_build(t, NULL);
	ok(4096u * 4096u == TG_MAX_KEY_FILL, "key fill bound: 4,096 x 4,096 "
	   "is TG_MAX_KEY_FILL (%u)", TG_MAX_KEY_FILL);
	for (k = 4096; k <= 4097; k++) {
		tg_gang *g = web_on("default/rails", k, true, 0, false,
				    "rail");
		tg_decision *d = NULL;
		const char *m;

		tg_place(t, g, &d, NULL);
		m = d ? tg_decision_message(d) : "";
		ok(d && tg_decision_status(d) == TG_STATUS_UNSCHEDULABLE,
		   "key fill bound: %u members unschedulable", k);
		if (k == 4096)
			ok(!strstr(m, "TG_MAX_KEY_FILL") &&
			   strstr(m, "insufficient cpu"), "key fill bound: "
			   "4,096 members, at the bound, are decided (no room)"
			   ": %.200s", m);
		else
			like(m, "gang default/rails: its members count toward "
			     "the topology spread on 'rail', which is no "
			     "topology layer: they are placed one at a time, "
			     "each looking at one node of each of up to 4096 "
			     "combinations of such spreads' values on the "
			     "nodes; 4097 members x 4096 is over "
			     "TG_MAX_KEY_FILL (16777216) (not supported)",
			     "key fill bound: 4,097 members are refused, "
			     "naming the bound");
		tg_decision_free(d);
		tg_gang_destroy(g);
	}
	tg_topology_destroy(t);
}

/* Required anti-affinity over more values than the old cap of 64: 99 of
 * 100 racks hold a pod to avoid; the member goes to the last one. */
static void test_anti_many(void)
{
	tg_topology *t = tg_topology_create();
	const char *pods[99];
	char names[99][16], node[16], rack[16];
	tg_decision *d = NULL;
	tg_gang *g;
	unsigned i;

	for (i = 0; i < 100; i++) {
		tg_node_id id;

		snprintf(node, sizeof(node), "n%u", i);
		snprintf(rack, sizeof(rack), "r%u", i);
		tg_topology_add_node(t, node, NULL, &id);
		tg_topology_node_set_resource(t, id, TG_RES_CPU, 8000);
		tg_topology_node_add_label(t, id, "rack", rack);
	}
	tg_topology_build(t, NULL);
	for (i = 0; i < 99; i++) {
		tg_alloc_spec sp;

		snprintf(names[i], sizeof(names[i]), "p%u", i);
		snprintf(node, sizeof(node), "n%u", i);
		memset(&sp, 0, sizeof(sp));
		sp.pod = names[i];
		tg_topology_node_find(t, node, &sp.node);
		tg_topology_add_alloc(t, &sp);
		pods[i] = names[i];
	}
	g = gang("default/away", 1, 1000);
	tg_gang_podset_add_pod_affinity(g, 0, "rack", true, pods, 99);
	tg_place(t, g, &d, NULL);
	is_str(nodes_of(t, d), "n99", "anti-affinity over 99 racks: the one "
	       "left (no cap on a term's values)");
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);
}


/* The bounds of pod labels and label spreads: errors, never cut. */
static void test_label_limits(void)
{
	static tg_label lab[TG_MAX_POD_LABELS + 1];
	static char keys[TG_MAX_POD_LABELS + 1][12];
	tg_topology *t = spines3();
	tg_gang *g = gang("default/lim", 1, 1000);
	tg_spread_spec sp;
	tg_alloc_spec as;
	unsigned i;
	tg_err e = TG_OK;

	for (i = 0; i <= TG_MAX_POD_LABELS; i++) {
		snprintf(keys[i], sizeof(keys[i]), "k%u", i);
		lab[i].key = keys[i];
		lab[i].value = "";
	}
	memset(&as, 0, sizeof(as));
	as.pod = "default/many";
	as.labels = lab;
	as.nlabels = TG_MAX_POD_LABELS + 1;
	is_int(tg_topology_add_alloc(t, &as), TG_ELIMIT,
	       "an allocation with more than TG_MAX_POD_LABELS labels");
	as.nlabels = TG_MAX_POD_LABELS;
	is_int(tg_topology_add_alloc(t, &as), TG_OK, "... with that many");
	is_int(tg_gang_podset_set_member_labels(g, 0, 0, "default", lab,
						TG_MAX_POD_LABELS + 1),
	       TG_ELIMIT, "a member with more than TG_MAX_POD_LABELS labels");
	lab[1].key = "k0";
	is_int(tg_gang_podset_set_member_labels(g, 0, 0, "default", lab, 2),
	       TG_EINVAL, "a repeated label key");
	as.pod = "default/dup";
	as.nlabels = 2;
	is_int(tg_topology_add_alloc(t, &as), TG_EINVAL,
	       "an allocation with a repeated label key");
	memset(&sp, 0, sizeof(sp));
	sp.layer = "spine";
	sp.max_skew = 1;
	sp.selector = true;
	for (i = 0; i < TG_MAX_SPREADS && !e; i++)
		e = tg_gang_add_spread_spec(g, &sp);
	is_int(e, TG_OK, "TG_MAX_SPREADS label spreads");
	is_int(tg_gang_add_spread_spec(g, &sp), TG_ELIMIT, "one more");
	sp.min_domains = 2;
	is_int(tg_gang_add_spread_spec(g, &sp), TG_EINVAL,
	       "minDomains on a soft spread");
	tg_gang_destroy(g);
	tg_topology_destroy(t);
}

/* tg_gang_member: ranks across pod sets, named or not. */
static void test_members(void)
{
	tg_gang *g = tg_gang_create("default/lws");
	tg_shape sh;
	unsigned ps;

	memset(&sh, 0, sizeof(sh));
	sh.v[TG_RES_CPU] = 1000;
	tg_gang_add_podset(g, "leader", &sh, 1, &ps);
	tg_gang_podset_set_member(g, ps, 0, "default/lws-0");
	tg_gang_add_podset(g, "worker", &sh, 2, &ps);
	tg_gang_podset_set_member(g, ps, 1, "default/lws-0-2");
	is_str(tg_gang_member(g, 0), "default/lws-0", "rank 0: the leader");
	ok(tg_gang_member(g, 1) == NULL, "rank 1: a worker left unnamed");
	is_str(tg_gang_member(g, 2), "default/lws-0-2",
	       "rank 2: the second worker (pod-set order, then member)");
	ok(tg_gang_member(g, 3) == NULL, "rank 3: out of range");
	ok(tg_gang_member(NULL, 0) == NULL, "NULL gang");
	tg_gang_podset_set_member(g, ps, 1, "default/renamed");
	is_str(tg_gang_member(g, 2), "default/renamed", "named again");
	tg_gang_destroy(g);
}

/*
 * The slot cache (per lowest-layer domain, kept from one decision to the
 * next): after random allocations, releases, reservations, cordons,
 * taints and applied gangs, tg_topology_check() (which checks the cache
 * against a recomputation) passes and every decision equals the one a
 * fresh topology, built by replaying the same operations, gives.
 */
enum { OP_ALLOC, OP_REMOVE, OP_CORDON, OP_TAINT };

typedef struct cache_op {
	int kind;
	unsigned node, gpus;
	uint64_t mask;
	bool flag;
	char pod[24];
} cache_op;

#define CACHE_NODES	96	/* 4 spines of 4 blocks of 6 nodes */
#define CACHE_STEPS	160

static uint64_t cache_rng = 88172645463325252ull;

static unsigned cache_rn(unsigned n)
{
	cache_rng ^= cache_rng << 13;
	cache_rng ^= cache_rng >> 7;
	cache_rng ^= cache_rng << 17;
	return (unsigned)(cache_rng % n);
}

static tg_err cache_apply(tg_topology *t, const cache_op *o)
{
	tg_alloc_spec sp;
	tg_shape sh;

	switch (o->kind) {
	case OP_ALLOC:
		memset(&sh, 0, sizeof(sh));
		sh.v[TG_RES_GPU] = o->gpus;
		sh.v[TG_RES_CPU] = 1000;
		memset(&sp, 0, sizeof(sp));
		sp.pod = o->pod;
		sp.node = o->node;
		sp.shape = &sh;
		sp.gpus = o->mask;
		sp.preemptible = true;
		sp.nominated = o->flag;
		sp.priority = o->flag ? 5 : 0;
		return tg_topology_add_alloc(t, &sp);
	case OP_REMOVE:
		return tg_topology_remove_alloc(t, o->pod);
	case OP_CORDON:
		return tg_topology_node_set_unschedulable(t, o->node, o->flag);
	default:
		return tg_topology_node_add_taint(t, o->node, "maint", NULL,
						  TG_TAINT_NO_SCHEDULE);
	}
}

static tg_topology *cache_build(const cache_op *ops, unsigned nops)
{
	tg_topology *t = tg_topology_create();
	char name[16], spine[16], block[16];
	const char *path[2] = { spine, block };
	unsigned i;

	tg_topology_add_layer(t, "spine", NULL);
	tg_topology_add_layer(t, "block", NULL);
	for (i = 0; i < CACHE_NODES; i++) {
		tg_node_id id;

		snprintf(name, sizeof(name), "n%02u", i);
		snprintf(spine, sizeof(spine), "s%u", i / 24);
		snprintf(block, sizeof(block), "b%u", i / 6);
		if (tg_topology_add_node(t, name, path, &id) ||
		    tg_topology_node_set_gpus(t, id, 8, NULL) ||
		    tg_topology_node_set_resource(t, id, TG_RES_CPU, 64000) ||
		    tg_topology_node_set_resource(t, id, TG_RES_PODS, 110))
			return NULL;
	}
	if (tg_topology_build(t, NULL))
		return NULL;
	for (i = 0; i < nops; i++)
		cache_apply(t, &ops[i]);
	return t;
}

static tg_gang *cache_gang(unsigned members, unsigned gpus, bool preempt)
{
	tg_gang *g = tg_gang_create("probe");
	tg_shape sh;
	unsigned ps;

	memset(&sh, 0, sizeof(sh));
	sh.v[TG_RES_GPU] = gpus;
	sh.v[TG_RES_CPU] = 1000;
	tg_gang_add_podset(g, "w", &sh, members, &ps);
	tg_gang_set_gather(g, "block", TG_GATHER_PREFER);
	tg_gang_set_priority(g, 10);
	tg_gang_set_can_preempt(g, preempt);
	return g;
}

static bool cache_same(const tg_decision *a, const tg_decision *b)
{
	unsigned i;

	if (tg_decision_status(a) != tg_decision_status(b) ||
	    strcmp(tg_decision_domain(a), tg_decision_domain(b)) ||
	    strcmp(tg_decision_message(a), tg_decision_message(b)) ||
	    tg_decision_nplacements(a) != tg_decision_nplacements(b) ||
	    tg_decision_nvictims(a) != tg_decision_nvictims(b))
		return false;
	for (i = 0; i < tg_decision_nplacements(a); i++)
		if (tg_decision_placement(a, i)->node !=
		    tg_decision_placement(b, i)->node ||
		    tg_decision_placement(a, i)->gpus !=
		    tg_decision_placement(b, i)->gpus)
			return false;
	for (i = 0; i < tg_decision_nvictims(a); i++)
		if (strcmp(tg_decision_victim(a, i)->pod,
			   tg_decision_victim(b, i)->pod))
			return false;
	return true;
}

static void test_slot_cache(void)
{
	static cache_op ops[4 * CACHE_STEPS];
	static const unsigned sizes[4] = { 1, 2, 4, 8 };
	unsigned nops = 0, npods = 0, step, bad_check = 0, bad_same = 0;
	unsigned decided = 0, placed = 0, preempting = 0, applied = 0;
	tg_topology *w = cache_build(NULL, 0);
	tg_errinfo ei;

	ok(w != NULL, "slot cache: topology built");
	if (!w)
		return;
	ei.msg[0] = 0;
	for (step = 0; step < CACHE_STEPS; step++) {
		unsigned what = cache_rn(100), k;
		cache_op *o = &ops[nops];
		tg_decision *dw = NULL, *dc = NULL;
		tg_topology *c;
		tg_gang *g;

		memset(o, 0, sizeof(*o));
		if (what < 45) {
			o->kind = OP_ALLOC;
			o->node = cache_rn(CACHE_NODES);
			o->gpus = sizes[cache_rn(4)];
			o->flag = cache_rn(8) == 0;
			snprintf(o->pod, sizeof(o->pod), "p%u", npods++);
			if (tg_topology_node_free(w, o->node, TG_RES_GPU) >=
			    o->gpus && cache_apply(w, o) == TG_OK)
				nops++;
		} else if (what < 70 && npods) {
			o->kind = OP_REMOVE;
			snprintf(o->pod, sizeof(o->pod), "p%u",
				 cache_rn(npods));
			if (cache_apply(w, o) == TG_OK)
				nops++;
		} else if (what < 82) {
			o->kind = OP_CORDON;
			o->node = cache_rn(CACHE_NODES);
			o->flag = cache_rn(2);
			cache_apply(w, o);
			nops++;
		} else if (what < 85) {
			o->kind = OP_TAINT;
			o->node = cache_rn(CACHE_NODES);
			cache_apply(w, o);
			nops++;
		}
		/* a probe: warm topology against a replayed cold one; a
		 * few shapes, so that the cache is reused and re-keyed */
		g = cache_gang(1 + cache_rn(40), sizes[cache_rn(4)],
			       cache_rn(3) == 0);
		c = cache_build(ops, nops);
		if (!g || !c || tg_place(w, g, &dw, NULL) ||
		    tg_place(c, g, &dc, NULL)) {
			bad_same++;
		} else {
			decided++;
			if (!cache_same(dw, dc)) {
				if (bad_same++ < 3)
					diag("step %u: warm %s in %s, cold %s "
					     "in %s", step,
					     tg_status_name(
						tg_decision_status(dw)),
					     tg_decision_domain(dw),
					     tg_status_name(
						tg_decision_status(dc)),
					     tg_decision_domain(dc));
			}
			if (tg_decision_status(dw) == TG_STATUS_PLACED)
				placed++;
			if (tg_decision_status(dw) == TG_STATUS_PREEMPTING)
				preempting++;
			/* apply a placed probe now and then, as allocations
			 * the replay repeats */
			for (k = 0; tg_decision_status(dw) ==
				    TG_STATUS_PLACED && cache_rn(2) == 0 &&
			     k < tg_decision_nplacements(dw) &&
			     nops < 4 * CACHE_STEPS; k++) {
				const tg_placement *pl =
					tg_decision_placement(dw, k);

				o = &ops[nops];
				memset(o, 0, sizeof(*o));
				o->kind = OP_ALLOC;
				o->node = pl->node;
				o->gpus = (unsigned)__builtin_popcountll(
						pl->gpus);
				o->mask = pl->gpus;
				snprintf(o->pod, sizeof(o->pod), "p%u",
					 npods++);
				if (cache_apply(w, o) == TG_OK) {
					nops++;
					applied++;
				}
			}
		}
		if (tg_topology_check(w, &ei) != TG_OK && bad_check++ < 3)
			diag("step %u: %s", step, ei.msg);
		tg_decision_free(dw);
		tg_decision_free(dc);
		tg_gang_destroy(g);
		tg_topology_destroy(c);
	}
	ok(!bad_check, "slot cache: tg_topology_check() passes after every "
	   "step (%u failures)", bad_check);
	ok(!bad_same && decided == CACHE_STEPS, "slot cache: %u warm decisions "
	   "equal the replayed cold ones (%u differ)", decided, bad_same);
	ok(placed >= CACHE_STEPS / 5 && preempting >= 1 &&
	   decided - placed - preempting >= 1 && applied >= 5,
	   "slot cache: both outcomes and preemption exercised (%u placed, "
	   "%u preempting, %u applied members)", placed, preempting,
	   applied);
	tg_topology_destroy(w);
}

/*
 * The search tries every candidate domain, however many (it kept 64):
 * 70 two-node leaves under one top, one node busy in each of the first
 * 65; a gang of two one-member pod sets fits only in leaves 65-69, the
 * last in pack order.  Also at the node level (140 candidates).
 */
static tg_topology *many_leaves(unsigned nleaf, unsigned nbusy)
{
	tg_topology *t = tg_topology_create();
	unsigned i, j;

	tg_topology_add_layer(t, "top", NULL);
	tg_topology_add_layer(t, "leaf", NULL);
	for (i = 0; i < nleaf; i++)
		for (j = 0; j < 2; j++) {
			char nm[32], lf[32];
			const char *path[2] = { "top", lf };
			tg_node_id id;

			snprintf(nm, sizeof(nm), "n%03u-%u", i, j);
			snprintf(lf, sizeof(lf), "b%03u", i);
			tg_topology_add_node(t, nm, path, &id);
			tg_topology_node_set_resource(t, id, TG_RES_CPU,
						      i < nbusy && !j ? 0 :
						      8000);
			tg_topology_node_set_resource(t, id, TG_RES_PODS,
						      110);
		}
	return tg_topology_build(t, NULL) == TG_OK ? t : NULL;
}

static void test_many_candidates(void)
{
	tg_topology *t = many_leaves(70, 65);
	tg_gang *g = tg_gang_create("default/two");
	tg_decision *d;
	tg_shape sh;
	unsigned ps;

	memset(&sh, 0, sizeof(sh));
	sh.v[TG_RES_CPU] = 8000;
	tg_gang_add_podset(g, "a", &sh, 1, &ps);
	tg_gang_add_podset(g, "b", &sh, 1, &ps);
	tg_gang_set_gather(g, "leaf", TG_GATHER_MUST);
	tg_place(t, g, &d, NULL);
	is_int(tg_decision_status(d), TG_STATUS_PLACED,
	       "70 candidates: the 66th in pack order is found");
	is_str(nodes_of(t, d), "n065-0 n065-1", "70 candidates: leaf b065");
	tg_decision_free(d);
	tg_topology_destroy(t);

	/* every leaf has one busy node: the message counts the gang */
	t = many_leaves(70, 70);
	tg_place(t, g, &d, NULL);
	is_int(tg_decision_status(d), TG_STATUS_UNSCHEDULABLE,
	       "70 half-busy leaves: unschedulable");
	like(tg_decision_message(d), "no leaf domain can hold the gang's 2 "
	     "members in 2 pod sets (offer slots for pod set a, 1 member)",
	     "two pod sets: the message counts the whole gang");
	tg_decision_free(d);
	tg_topology_destroy(t);
	tg_gang_destroy(g);
}

/*
 * The fill keeps the fabric whole: 10 whole-node members over free
 * blocks of 8, 6 and 4 nodes use two blocks either way; 6 + 4 keeps the
 * only 8-node block whole (the fill used to take the largest first:
 * 8 + 2).  Among blocks of equal size the first path is used.
 */
static void test_fill_whole(void)
{
	static const char *n[18][3];
	static char names[18][8];
	tg_topology *t;
	tg_gang *g;
	tg_decision *d;
	unsigned i;

	for (i = 0; i < 18; i++) {
		snprintf(names[i], sizeof(names[i]), "n%02u", i);
		n[i][0] = names[i];
		n[i][1] = "s";
		n[i][2] = i < 8 ? "b8" : i < 14 ? "b6" : "b4";
	}
	t = mk("spine", "block", n, 18, 8);
	g = gang("default/ten", 10, 8000);
	tg_place(t, g, &d, NULL);
	is_int(tg_decision_status(d), TG_STATUS_PLACED, "fill 8/6/4: placed");
	is_str(nodes_of(t, d), "n08 n09 n10 n11 n12 n13 n14 n15 n16 n17",
	       "fill 8/6/4: 10 members on blocks of 6 and 4, the 8 whole");
	tg_decision_free(d);
	tg_gang_destroy(g);
	/* 7 members: one block of 8 would hold them; no block of 6 or 4
	 * does, so b8 (the tightest holding all) */
	g = gang("default/seven", 7, 8000);
	tg_place(t, g, &d, NULL);
	is_str(nodes_of(t, d), "n00 n01 n02 n03 n04 n05 n06",
	     "fill 8/6/4: 7 members in the one block that holds them");
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);
}

/* \p nleaf leaves of four whole-node nodes, \p per_spine a spine; leaf
 * l < \p nfree has free0[l] nodes free, every other node is free. */
static tg_topology *leaf_fabric(unsigned nleaf, unsigned per_spine,
				const unsigned *free0, unsigned nfree)
{
	tg_topology *t = tg_topology_create();
	unsigned l, j;

	tg_topology_add_layer(t, "spine", NULL);
	tg_topology_add_layer(t, "leaf", NULL);
	for (l = 0; l < nleaf; l++)
		for (j = 0; j < 4; j++) {
			char nm[16], sp[8], lf[8];
			const char *path[2] = { sp, lf };
			tg_node_id id;
			bool busy = l < nfree && j >= free0[l];

			snprintf(nm, sizeof(nm), "n%02u", l * 4 + j);
			snprintf(sp, sizeof(sp), "s%u", l / per_spine);
			snprintf(lf, sizeof(lf), "l%u", l);
			tg_topology_add_node(t, nm, path, &id);
			tg_topology_node_set_resource(t, id, TG_RES_CPU,
						      busy ? 0 : 8000);
			tg_topology_node_set_resource(t, id, TG_RES_PODS,
						      110);
		}
	return tg_topology_build(t, NULL) == TG_OK ? t : NULL;
}

/*
 * The emulator's case (docs/benchmarks.md): a whole-node gang no leaf
 * holds goes to the spine where it takes the fewest leaves, before the
 * spine that fits it most tightly.  Two spines of five 4-node leaves;
 * spine s0 has exactly 6 free nodes, over four leaves (2, 2, 1, 1), s1
 * is empty.  6 members used to go to s0 (least waste) on four leaves;
 * s1 holds them on two.  Where both spines take as many leaves (s0 free
 * 4 + 2), the least waste still decides.
 */
static tg_topology *two_spines(const unsigned *free0)
{
	return leaf_fabric(10, 5, free0, 5);
}

static void test_fewest_leaves(void)
{
	static const unsigned frag[5] = { 2, 2, 1, 1, 0 };
	static const unsigned two[5] = { 4, 2, 0, 0, 0 };
	tg_topology *t = two_spines(frag);
	tg_gang *g = gang("default/six", 6, 8000);
	tg_decision *d = NULL;

	is_int(tg_place(t, g, &d, NULL), TG_OK, "fewest leaves: place");
	is_str(tg_decision_domain(d), "spine/s1",
	       "fewest leaves: the empty spine, not the exact fit");
	is_str(nodes_of(t, d), "n20 n21 n22 n23 n24 n25",
	       "fewest leaves: two leaves of s1");
	like(tg_decision_message(d), "bin-pack: spine/s1 takes 2 of its "
	     "leaf domains and offers 20 slots (fewest leaf domains, then "
	     "least waste, among 2 candidates; s0: 6 slots on 4)",
	     "fewest leaves: the message says why");
	tg_decision_free(d);
	tg_topology_destroy(t);

	t = two_spines(two);
	is_int(tg_place(t, g, &d, NULL), TG_OK, "equal leaves: place");
	is_str(nodes_of(t, d), "n00 n01 n02 n03 n04 n05",
	       "equal leaves: two leaves either way, least waste: s0");
	tg_decision_free(d);
	tg_topology_destroy(t);
	tg_gang_destroy(g);
}

/*
 * The fewest domains at every layer (issue 12; docs/benchmarks.md, the
 * Slurm 24.11 bench's JobId=23): a 6-node gang no spine holds, at the
 * core.  Three spines of two 4-node leaves: s0 has 5 free nodes on
 * leaves of 1 and 4, s1 2 on one leaf, s2 1.  The fill took s0 whole
 * and s2's node (two spines, three leaves); s0's 4-node leaf and s1's
 * two are two spines and two leaves.
 */
static tg_topology *three_spines(const unsigned *free0)
{
	return leaf_fabric(6, 2, free0, 6);
}

static void test_fewest_every_layer(void)
{
	static const unsigned frag[6] = { 1, 4, 2, 0, 1, 0 };
	tg_topology *t = three_spines(frag);
	tg_gang *g = gang("default/six", 6, 8000);
	tg_decision *d = NULL;

	is_int(tg_place(t, g, &d, NULL), TG_OK, "every layer: place");
	is_str(tg_decision_domain(d), "cluster",
	       "every layer: no spine holds 6, the core");
	is_str(nodes_of(t, d), "n04 n05 n06 n07 n08 n09",
	       "every layer: s0's 4-node leaf and s1's 2, two leaves");
	tg_decision_free(d);
	tg_gang_destroy(g);
	/* a spread over the leaves splits members: the least-span choice
	 * (4 on one leaf of s0) would be water-filled over s0's leaves,
	 * so such a gang keeps the one-layer rule */
	g = gang("default/spread", 6, 8000);
	tg_gang_add_spread(g, "leaf", 1, false);
	d = NULL;
	is_int(tg_place(t, g, &d, NULL), TG_OK, "every layer, spread: place");
	is_str(nodes_of(t, d), "n00 n04 n05 n06 n07 n16",
	       "every layer, spread on leaf: s0 whole and s2's node, as the "
	       "one-layer rule");
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);
	/* the tie-break between children of equal span (fill_exact()):
	 * s0 has 4 free nodes on one leaf, s1 and s2 3 each; a 6-node gang
	 * is 2 spines, 2 leaves and 6 nodes whether it takes s0 or not, and
	 * the largest free child is left whole: s1 and s2 */
	{
		static const unsigned tie[6] = { 4, 0, 3, 0, 3, 0 };

		t = three_spines(tie);
		g = gang("default/tie", 6, 8000);
		d = NULL;
		is_int(tg_place(t, g, &d, NULL), TG_OK, "tie-break: place");
		is_str(nodes_of(t, d), "n08 n09 n10 n16 n17 n18",
		       "tie-break: s0's 4 free nodes stay whole, s1 and s2 "
		       "give 3 each");
		tg_decision_free(d);
		tg_gang_destroy(g);
		tg_topology_destroy(t);
	}
}

/*
 * Messages with names at their limits: 16 layers of 253-byte values, 13
 * lowest domains of one 1-CPU node each.  The unschedulable message
 * lists 12 domains of 4 KiB paths (52 KiB): it used to overflow an 8 KiB
 * buffer and tg_place() failed with "out of memory".  With preemption
 * the message doubles past TGI_MAX_MESSAGE (64 KiB) and is cut, saying
 * so.  An error longer than tg_errinfo's 511 bytes ends in "...".
 * Every soft spread on an unknown layer is named (only the last was).
 */
static void test_long_messages(void)
{
	tg_topology *t = tg_topology_create();
	tg_gang *g;
	tg_decision *d = NULL;
	tg_errinfo ei;
	tg_alloc_spec sp;
	tg_shape sh;
	char val[16][254], lname[16][8];
	const char *path[16];
	unsigned i, l;
	tg_err err;

	for (l = 0; l < 16; l++) {
		snprintf(lname[l], sizeof(lname[l]), "L%u", l);
		tg_topology_add_layer(t, lname[l], NULL);
		memset(val[l], 'a' + l, 253);
		val[l][253] = '\0';
		path[l] = val[l];
	}
	for (i = 0; i < 13; i++) {
		char nm[16];
		tg_node_id id;

		snprintf(nm, sizeof(nm), "n%02u", i);
		val[15][0] = (char)('A' + i);	/* 13 lowest domains */
		tg_topology_add_node(t, nm, path, &id);
		tg_topology_node_set_resource(t, id, TG_RES_CPU, 1000);
		tg_topology_node_set_resource(t, id, TG_RES_PODS, 110);
	}
	is_int(tg_topology_build(t, NULL), TG_OK, "long names: build");
	g = gang("default/two", 2, 1000);
	tg_gang_set_gather(g, "L15", TG_GATHER_MUST);
	err = tg_place(t, g, &d, &ei);
	is_int(err, TG_OK, "long names: a decision, not an error");
	if (!err) {
		is_int(tg_decision_status(d), TG_STATUS_UNSCHEDULABLE,
		       "long names: unschedulable");
		like(tg_decision_message(d), " and 1 more; ",
		     "long names: the whole list, then the rest");
		ok(!strstr(tg_decision_message(d), "[message cut"),
		   "long names: not cut (%zu bytes)",
		   strlen(tg_decision_message(d)));
	}
	tg_decision_free(d);
	d = NULL;

	/* a lower-priority pod on n00: preemption cannot help, and its
	 * message holds both searches' lists (over 100 KiB) */
	memset(&sh, 0, sizeof(sh));
	memset(&sp, 0, sizeof(sp));
	sh.v[TG_RES_CPU] = 1000;
	sp.pod = "low";
	sp.node = 0;
	sp.shape = &sh;
	sp.preemptible = true;
	tg_topology_add_alloc(t, &sp);
	tg_gang_set_priority(g, 10);
	tg_gang_set_can_preempt(g, true);
	err = tg_place(t, g, &d, &ei);
	is_int(err, TG_OK, "long names, preemption: a decision");
	if (!err) {
		like(tg_decision_message(d), "[message cut at 65536 bytes]",
		     "long names, preemption: cut, and says so");
		ok(strlen(tg_decision_message(d)) < 65536 + 64,
		   "long names, preemption: within TGI_MAX_MESSAGE");
	}
	tg_decision_free(d);
	d = NULL;
	tg_gang_destroy(g);

	/* an unknown layer: gang and layer names of 253 bytes */
	{
		char gname[254], lay[254];

		memset(gname, 'g', 253);
		memset(lay, 'x', 253);
		gname[253] = lay[253] = '\0';
		g = gang(gname, 1, 1000);
		tg_gang_set_gather(g, lay, TG_GATHER_MUST);
	}
	is_int(tg_gang_check(t, g, &ei), TG_EINVAL, "unknown layer: EINVAL");
	is_int(strlen(ei.msg), 511, "unknown layer: the error fills msg");
	like(ei.msg + 508, "...", "unknown layer: and ends in '...'");
	tg_gang_destroy(g);

	/* two soft spreads on unknown layers: both named */
	g = gang("default/spread", 1, 1000);
	tg_gang_add_spread(g, "nope-1", 1, false);
	tg_gang_add_spread(g, "nope-2", 1, false);
	if (tg_place(t, g, &d, NULL) == TG_OK) {
		like(tg_decision_message(d), "; soft spread on unknown layer "
		     "'nope-1' ignored; soft spread on unknown layer 'nope-2' "
		     "ignored", "soft spreads: every one named");
	}
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);
}

int main(void)
{
	test_seed();
	test_a1();
	test_a3();
	test_a4();
	test_a5();
	test_a6();
	test_kai_zones();
	test_a7();
	test_islands();
	test_missing_labels();
	test_spread();
	test_label_spread();
	test_key_spread();
	test_key_fill_groups();
	test_key_fill_bound();
	test_anti_many();
	test_label_limits();
	test_members();
	test_slot_cache();
	test_many_candidates();
	test_fill_whole();
	test_fewest_leaves();
	test_fewest_every_layer();
	test_long_messages();
	return done_testing();
}
