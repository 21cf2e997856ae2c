/*
 * tests/unit/test_preempt.c - topology-aware gang preemption, nominations
 * and reservations (issue #3): the seed's example 2, the anchors' A2
 * cases, and the rules of the issue one by one.
 */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "topogang/topogang.h"

static const char *seed12[][3] = {
	{ "node-0", "spine-0", "block-0" }, { "node-1", "spine-0", "block-0" },
	{ "node-2", "spine-0", "block-0" }, { "node-3", "spine-0", "block-1" },
	{ "node-4", "spine-0", "block-1" }, { "node-5", "spine-1", "block-2" },
	{ "node-6", "spine-1", "block-2" }, { "node-7", "spine-1", "block-3" },
	{ "node-8", "spine-1", "block-3" }, { "node-9", "spine-2", "block-4" },
	{ "node-10", "spine-2", "block-4" },
	{ "node-11", "spine-2", "block-4" },
};

static tg_topology *mk(const char *spec[][3], unsigned n, int64_t cpu)
{
	tg_topology *t = tg_topology_create();
	unsigned i;

	tg_topology_add_layer(t, "SpineLayer", NULL);
	tg_topology_add_layer(t, "BlockLayer", NULL);
	for (i = 0; i < n; i++) {
		const char *path[2] = { spec[i][1], spec[i][2] };

		tg_topology_add_node(t, spec[i][0], path, NULL);
		tg_topology_node_set_resource(t, i, TG_RES_CPU, cpu * 1000);
	}
	tg_topology_build(t, NULL);
	return t;
}

static void run(tg_topology *t, const char *pod, const char *gang,
		const char *node, int64_t cpu, int64_t prio, bool preemptible)
{
	tg_alloc_spec a;
	tg_shape sh;
	tg_node_id id;

	memset(&a, 0, sizeof(a));
	memset(&sh, 0, sizeof(sh));
	sh.v[TG_RES_CPU] = cpu * 1000;
	tg_topology_node_find(t, node, &id);
	a.pod = pod;
	a.gang = gang;
	a.node = id;
	a.shape = &sh;
	a.priority = prio;
	a.preemptible = preemptible;
	if (tg_topology_add_alloc(t, &a))
		diag("cannot add %s", pod);
}

static tg_gang *gang(const char *name, unsigned n, int64_t cpu,
		     int64_t prio, const char *must)
{
	tg_gang *g = tg_gang_create(name);
	tg_shape sh;
	unsigned i, ps;
	char pod[64];

	memset(&sh, 0, sizeof(sh));
	sh.v[TG_RES_CPU] = cpu * 1000;
	tg_gang_add_podset(g, "w", &sh, n, &ps);
	for (i = 0; i < n; i++) {
		snprintf(pod, sizeof(pod), "%s-%u", name, i + 1);
		tg_gang_podset_set_member(g, ps, i, pod);
	}
	tg_gang_set_priority(g, prio);
	if (must)
		tg_gang_set_gather(g, must, TG_GATHER_MUST);
	return g;
}

static char *nodes_of(const tg_topology *t, const tg_decision *d)
{
	static char buf[1024];
	unsigned i;

	buf[0] = 0;
	for (i = 0; i < tg_decision_nplacements(d); i++) {
		if (i)
			strcat(buf, " ");
		strcat(buf, tg_topology_node_name(t,
			tg_decision_placement(d, i)->node));
	}
	return buf;
}

static char *victims_of(const tg_decision *d)
{
	static char buf[1024];
	unsigned i;

	buf[0] = 0;
	for (i = 0; i < tg_decision_nvictims(d); i++) {
		if (i)
			strcat(buf, " ");
		strcat(buf, tg_decision_victim(d, i)->pod);
	}
	return buf;
}

static void test_seed_example2(void)
{
	tg_topology *t = mk(seed12, 12, 8);
	tg_gang *g = gang("hp", 4, 8, 1000, "SpineLayer");
	tg_decision *d;

	run(t, "low-priority-pod-0", NULL, "node-0", 8, 1, true);
	run(t, "low-priority-pod-1", NULL, "node-1", 8, 1, true);
	run(t, "low-priority-pod-5", NULL, "node-5", 8, 1, true);
	is_int(tg_place(t, g, &d, NULL), TG_OK, "seed 2: place");
	is_int(tg_decision_status(d), TG_STATUS_PREEMPTING,
	       "seed 2: preempting");
	is_str(victims_of(d), "low-priority-pod-5",
	       "seed 2: only the pod on node-5 is a victim");
	is_str(nodes_of(t, d), "node-5 node-6 node-7 node-8",
	       "seed 2: nominated node-5..node-8");
	like(tg_decision_message(d), "SpineLayer/spine-1: 3",
	     "seed 2: message keeps the per-spine offer");
	is_int(tg_decision_apply(t, g, d), TG_OK, "seed 2: apply");
	is_int(tg_topology_check(t, NULL), TG_OK, "seed 2: invariants");
	is_int(tg_topology_nallocs(t), 6, "seed 2: 2 low + 4 nominated");
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);
}

static const char *a1nodes[][3] = {
	{ "node-8", "s1", "b1" }, { "node-1", "s1", "b1" },
	{ "node-7", "s1", "b2" }, { "node-2", "s1", "b2" },
	{ "node-6", "s2", "b3" }, { "node-3", "s2", "b3" },
	{ "node-5", "s2", "b4" }, { "node-4", "s2", "b4" },
};

static void test_a2(void)
{
	tg_topology *t = mk(a1nodes, 8, 16);
	tg_gang *g = gang("pod", 4, 16, 1000, "SpineLayer");
	tg_decision *d;

	run(t, "existing-pod-1", NULL, "node-1", 16, 1, true);
	run(t, "existing-pod-2", NULL, "node-4", 16, 1, true);
	tg_place(t, g, &d, NULL);
	is_int(tg_decision_status(d), TG_STATUS_PREEMPTING,
	       "A2 success: preempting");
	is_str(victims_of(d), "existing-pod-1",
	       "A2 success: only existing-pod-1");
	is_str(nodes_of(t, d), "node-1 node-8 node-2 node-7",
	       "A2 success: nominations node-1, node-8, node-2, node-7");
	like(tg_decision_message(d), "SpineLayer/s1: 3, SpineLayer/s2: 3",
	     "A2 success: the scheduling failure message");
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);

	t = mk(a1nodes, 8, 16);
	g = gang("pod", 4, 16, 1000, "SpineLayer");
	run(t, "existing-pod-1", NULL, "node-1", 16, 1000, true);
	run(t, "existing-pod-3", NULL, "node-2", 16, 1, true);
	run(t, "existing-pod-2", NULL, "node-4", 16, 1000, true);
	tg_place(t, g, &d, NULL);
	is_int(tg_decision_status(d), TG_STATUS_UNSCHEDULABLE,
	       "A2 failure: unschedulable");
	is_int(tg_decision_nvictims(d), 0, "A2 failure: no victims");
	like(tg_decision_message(d), "SpineLayer/s1: 2",
	     "A2 failure: before preemption s1 offers 2");
	like(tg_decision_message(d), "evicted: no SpineLayer domain can hold "
	     "4 members: SpineLayer/s1: 3, SpineLayer/s2: 3",
	     "A2 failure: even with victims gone each spine offers 3");
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);
}

static void test_rules(void)
{
	tg_topology *t;
	tg_gang *g;
	tg_decision *d;

	/* equal priority is never preempted */
	t = mk(seed12, 12, 8);
	run(t, "eq", NULL, "node-5", 8, 10, true);
	run(t, "eq2", NULL, "node-0", 8, 10, true);
	run(t, "eq3", NULL, "node-1", 8, 10, true);
	g = gang("g", 4, 8, 10, "SpineLayer");
	tg_place(t, g, &d, NULL);
	is_int(tg_decision_status(d), TG_STATUS_UNSCHEDULABLE,
	       "equal priority: no preemption");
	like(tg_decision_message(d), "no running gang of lower priority",
	     "equal priority: message says why");
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);

	/* non-preemptible is never a victim */
	t = mk(seed12, 12, 8);
	run(t, "np0", NULL, "node-0", 8, 1, false);
	run(t, "np1", NULL, "node-1", 8, 1, false);
	run(t, "np5", NULL, "node-5", 8, 1, false);
	run(t, "lp9", NULL, "node-9", 8, 1, true);
	g = gang("g", 4, 8, 100, "SpineLayer");
	tg_place(t, g, &d, NULL);
	is_int(tg_decision_status(d), TG_STATUS_UNSCHEDULABLE,
	       "non-preemptible: not evicted");
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);

	/* a victim gang spanning two spines is evicted whole, and counted
	 * whole: a 1-pod gang elsewhere is cheaper */
	t = mk(seed12, 12, 8);
	run(t, "wide-a", "wide", "node-5", 8, 1, true);
	run(t, "wide-b", "wide", "node-0", 8, 1, true);
	run(t, "solo", NULL, "node-1", 8, 1, true);
	g = gang("g", 4, 8, 100, "SpineLayer");
	tg_place(t, g, &d, NULL);
	is_int(tg_decision_status(d), TG_STATUS_PREEMPTING,
	       "two-domain victim: preempting");
	is_str(victims_of(d), "solo",
	       "two-domain victim: the 1-pod gang, not the 2-pod one");
	is_str(nodes_of(t, d), "node-1 node-2 node-3 node-4",
	       "two-domain victim: spine-0 freed");
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);

	t = mk(seed12, 12, 8);
	run(t, "wide-a", "wide", "node-5", 8, 1, true);
	run(t, "wide-b", "wide", "node-9", 8, 1, true);
	run(t, "p6", NULL, "node-0", 8, 5, true);
	run(t, "p7", NULL, "node-1", 8, 5, true);
	g = gang("g", 4, 8, 100, "SpineLayer");
	tg_place(t, g, &d, NULL);
	is_str(victims_of(d), "wide-a wide-b",
	       "whole gang: both members of the victim gang go");
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);

	/* reprieve: the cheapest prefix evicts the priority-1 pod first,
	 * which alone does not free a node; the priority-2 whole-node pod
	 * is needed, and with it the first one is given back */
	t = mk(seed12, 12, 8);
	run(t, "a-small", NULL, "node-5", 2, 1, true);
	run(t, "np-5", NULL, "node-5", 6, 50, false);
	run(t, "b-big", NULL, "node-6", 8, 2, true);
	{
		static const char *full[] = { "node-0", "node-1", "node-2",
			"node-3", "node-4", "node-7", "node-8", "node-9",
			"node-10", "node-11" };
		unsigned i;

		for (i = 0; i < 10; i++)
			run(t, full[i], NULL, full[i], 8, 50, false);
	}
	g = gang("g2", 1, 8, 100, "BlockLayer");
	tg_place(t, g, &d, NULL);
	is_int(tg_decision_status(d), TG_STATUS_PREEMPTING,
	       "reprieve: preempting");
	is_str(victims_of(d), "b-big", "reprieve: a-small is given back");
	is_str(nodes_of(t, d), "node-6", "reprieve: on node-6");
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);

	/* preemptionPolicy Never */
	t = mk(seed12, 12, 8);
	run(t, "lp0", NULL, "node-0", 8, 1, true);
	run(t, "lp1", NULL, "node-1", 8, 1, true);
	run(t, "lp5", NULL, "node-5", 8, 1, true);
	g = gang("g", 4, 8, 100, "SpineLayer");
	tg_gang_set_can_preempt(g, false);
	tg_place(t, g, &d, NULL);
	is_int(tg_decision_status(d), TG_STATUS_UNSCHEDULABLE,
	       "preemptionPolicy Never: no victims");
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);
}

static void test_reservations(void)
{
	tg_topology *t = mk(seed12, 12, 8);
	tg_gang *hp = gang("hp", 4, 8, 1000, "SpineLayer");
	tg_gang *low, *top;
	tg_decision *d;
	tg_alloc_spec a;
	tg_shape sh;
	unsigned i;

	run(t, "lp0", NULL, "node-0", 8, 1, true);
	run(t, "lp1", NULL, "node-1", 8, 1, true);
	run(t, "lp5", NULL, "node-5", 8, 1, true);
	tg_place(t, hp, &d, NULL);
	is_int(tg_decision_status(d), TG_STATUS_PREEMPTING,
	       "reservation: preempting");
	/* the host records the nominations with an expiry */
	memset(&sh, 0, sizeof(sh));
	sh.v[TG_RES_CPU] = 8000;
	for (i = 0; i < tg_decision_nplacements(d); i++) {
		memset(&a, 0, sizeof(a));
		a.pod = tg_decision_placement(d, i)->pod;
		a.gang = "hp";
		a.node = tg_decision_placement(d, i)->node;
		a.shape = &sh;
		a.priority = 1000;
		a.preemptible = true;
		a.nominated = true;
		a.expires = 100;
		tg_topology_add_alloc(t, &a);
	}
	tg_topology_remove_alloc(t, "lp5");	/* the victim terminated */
	tg_decision_free(d);

	/* a lower-priority gang cannot take spine-1 meanwhile */
	low = gang("low", 4, 8, 500, "SpineLayer");
	tg_place(t, low, &d, NULL);
	ok(tg_decision_status(d) != TG_STATUS_PLACED ||
	   strstr(nodes_of(t, d), "node-5") == NULL,
	   "reservation: lower priority does not land on reserved nodes");
	ok(tg_decision_status(d) == TG_STATUS_PREEMPTING,
	   "reservation: lower gang preempts elsewhere instead");
	ok(strstr(nodes_of(t, d), "node-6") == NULL,
	   "reservation: reserved node-6 untouched (%s)", nodes_of(t, d));
	tg_decision_free(d);

	/* the preemptor itself gets its reserved nodes */
	tg_place(t, hp, &d, NULL);
	is_int(tg_decision_status(d), TG_STATUS_PLACED,
	       "reservation: the preemptor is placed");
	is_str(nodes_of(t, d), "node-5 node-6 node-7 node-8",
	       "reservation: on its nominated nodes");
	tg_decision_free(d);

	/* a higher-priority gang may take it; the reservation is displaced */
	top = gang("top", 4, 8, 5000, "SpineLayer");
	tg_place(t, top, &d, NULL);
	ok(tg_decision_nvictims(d) >= 1 &&
	   tg_decision_victim(d, 0)->reservation,
	   "higher priority: displaces the reservation (%s)",
	   victims_of(d));
	tg_decision_free(d);
	tg_gang_destroy(top);

	/* the reservation lapses */
	is_int(tg_topology_expire(t, 99), 0, "expire: not yet");
	is_int(tg_topology_expire(t, 100), 4, "expire: 4 nominations lapse");
	tg_place(t, low, &d, NULL);
	is_int(tg_decision_status(d), TG_STATUS_PLACED,
	       "after the lapse the lower gang fits");
	is_str(nodes_of(t, d), "node-5 node-6 node-7 node-8",
	       "after the lapse: spine-1");
	tg_decision_free(d);
	is_int(tg_topology_check(t, NULL), TG_OK, "reservations: invariants");
	tg_gang_destroy(low);
	tg_gang_destroy(hp);
	tg_topology_destroy(t);
}

static void test_budget(void)
{
	tg_topology *t = mk(seed12, 12, 8);
	tg_gang *g = gang("g", 4, 8, 100, "SpineLayer");
	tg_decision *d;
	tg_alloc_spec a;
	tg_shape sh;

	/* spine-1's victim is protected by a budget allowing 0 */
	memset(&sh, 0, sizeof(sh));
	sh.v[TG_RES_CPU] = 8000;
	memset(&a, 0, sizeof(a));
	a.pod = "guarded";
	a.node = 5;
	a.shape = &sh;
	a.priority = 1;
	a.preemptible = true;
	a.budget = "default/pdb";
	tg_topology_set_budget(t, "default/pdb", 0);
	tg_topology_add_alloc(t, &a);
	run(t, "free0", NULL, "node-0", 8, 3, true);
	run(t, "free1", NULL, "node-1", 8, 3, true);
	tg_place(t, g, &d, NULL);
	is_str(victims_of(d), "free0",
	       "budget: prefers a victim set violating no budget");
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);
}

/* removed allocations do not pile up: placing compacts them */
static void test_compaction(void)
{
	tg_topology *t = mk(seed12, 12, 8);
	tg_gang *g = gang("g", 1, 8, 1, NULL);
	tg_decision *d;
	char pod[32];
	unsigned i;

	for (i = 0; i < 5000; i++) {
		snprintf(pod, sizeof(pod), "churn-%u", i);
		run(t, pod, NULL, seed12[i % 12][0], 1, 0, true);
		if (i % 10)
			tg_topology_remove_alloc(t, pod);
	}
	is_int(tg_topology_nallocs(t), 500, "churn: 500 live");
	tg_place(t, g, &d, NULL);
	is_int(tg_topology_check(t, NULL), TG_OK, "churn: check after "
	       "compaction");
	is_int(tg_topology_nallocs(t), 500, "churn: still 500 live");
	is_int(tg_topology_remove_alloc(t, "churn-10"), TG_OK,
	       "churn: a live one is found after compaction");
	is_int(tg_topology_remove_alloc(t, "churn-11"), TG_ENOENT,
	       "churn: a removed one stays removed");
	run(t, "churn-11", NULL, "node-0", 1, 0, true);
	is_int(tg_topology_nallocs(t), 500, "churn: re-added");
	is_int(tg_topology_check(t, NULL), TG_OK, "churn: check");
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);
}

int main(void)
{
	test_compaction();
	test_seed_example2();
	test_a2();
	test_rules();
	test_reservations();
	test_budget();
	return done_testing();
}
