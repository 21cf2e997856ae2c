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

/*
 * Candidacy that follows change (issue 16): select/topogang keeps one
 * model between job tests and, as the preemption candidates change,
 * gives only the gangs whose candidacy or priority changed their new
 * class with tg_topology_set_gang_preemption(), where it used to remove
 * and add back every candidate.  Random sequences of jobs beginning and
 * ending, candidate sets and priorities changing, each step mirrored on
 * three models: incremental (the new way), re-add (the old way: every
 * candidate and every former one removed and added again) and a fresh
 * model with the running jobs added in a shuffled order.  After every
 * step a random preemptor is placed on all three: the decisions must be
 * the same, field by field.
 */
#define INC_NODES	32	/* 2 spines x 4 blocks x 4 nodes */
#define INC_JOBS	256	/* job ids of one sequence */
#define INC_MAXM	4	/* members of a job at most */

typedef struct inc_job {
	bool running, cand;
	int64_t prio;
	unsigned n;
	unsigned node[INC_MAXM];
	int64_t cpu[INC_MAXM];
	uint64_t gpus[INC_MAXM];
} inc_job;

static unsigned long inc_seed;

static unsigned inc_rn(unsigned n)
{
	inc_seed = inc_seed * 6364136223846793005ul + 1442695040888963407ul;
	return (unsigned)(inc_seed >> 33) % n;
}

static tg_topology *inc_cluster(void)
{
	tg_topology *t = tg_topology_create();
	char name[16], sp[16], bl[16];
	unsigned i;

	tg_topology_add_layer(t, "spine", NULL);
	tg_topology_add_layer(t, "block", NULL);
	for (i = 0; i < INC_NODES; i++) {
		const char *path[2] = { sp, bl };

		snprintf(name, sizeof(name), "node-%u", i);
		snprintf(sp, sizeof(sp), "spine-%u", i / 16);
		snprintf(bl, sizeof(bl), "block-%u", i / 4);
		tg_topology_add_node(t, name, path, NULL);
		tg_topology_node_set_resource(t, i, TG_RES_CPU, 8000);
		tg_topology_node_set_gpus(t, i, 8, NULL);
	}
	tg_topology_build(t, NULL);
	return t;
}

static void inc_add(tg_topology *t, unsigned id, const inc_job *j)
{
	char pod[32], g[16];
	tg_alloc_spec a;
	tg_shape sh;
	unsigned m;

	snprintf(g, sizeof(g), "job-%u", id);
	for (m = 0; m < j->n; m++) {
		memset(&a, 0, sizeof(a));
		memset(&sh, 0, sizeof(sh));
		sh.v[TG_RES_CPU] = j->cpu[m];
		sh.v[TG_RES_GPU] = __builtin_popcountll(j->gpus[m]);
		snprintf(pod, sizeof(pod), "job-%u/%u", id, m);
		a.pod = pod;
		a.gang = g;
		a.node = j->node[m];
		a.shape = &sh;
		a.gpus = j->gpus[m];
		a.priority = j->prio;
		a.preemptible = j->cand;
		if (tg_topology_add_alloc(t, &a))
			diag("cannot add %s", pod);
	}
}

/* A new running job on free room (explicit GPUs, as the plugin gives
 * Slurm's); false when the cluster has none for it. */
static bool inc_begin(inc_job *jobs, unsigned id, int64_t *cpu_free,
		      uint64_t *gpu_free)
{
	inc_job *j = &jobs[id];
	unsigned m, n = 1 + inc_rn(INC_MAXM), tries;

	memset(j, 0, sizeof(*j));
	j->prio = inc_rn(4);
	for (m = 0; m < n; m++) {
		for (tries = 0; tries < 8; tries++) {
			unsigned nd = inc_rn(INC_NODES), k, want = inc_rn(5);
			int64_t c = 1000 * (1 + inc_rn(4));
			uint64_t gm = 0;

			if (cpu_free[nd] < c)
				continue;
			for (k = 0; k < 8 && want; k++)
				if (gpu_free[nd] & (1ull << k)) {
					gm |= 1ull << k;
					want--;
				}
			if (want)
				continue;
			cpu_free[nd] -= c;
			gpu_free[nd] &= ~gm;
			j->node[j->n] = nd;
			j->cpu[j->n] = c;
			j->gpus[j->n++] = gm;
			break;
		}
	}
	if (!j->n)
		return false;
	j->running = true;
	return true;
}

static void inc_end(inc_job *j, int64_t *cpu_free, uint64_t *gpu_free)
{
	for (unsigned m = 0; m < j->n; m++) {
		cpu_free[j->node[m]] += j->cpu[m];
		gpu_free[j->node[m]] |= j->gpus[m];
	}
	j->running = false;
}

/* Everything a decision says, as one string (static buffer). */
static const char *inc_sig(const tg_topology *t, const tg_decision *d)
{
	static char buf[16384];
	size_t o;
	unsigned i;

	o = (size_t)snprintf(buf, sizeof(buf), "%d|%s|%s|",
			     (int)tg_decision_status(d),
			     tg_decision_domain(d), tg_decision_message(d));
	for (i = 0; i < tg_decision_nplacements(d) && o < sizeof(buf); i++) {
		const tg_placement *p = tg_decision_placement(d, i);

		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s@%s:%llx ",
				      p->pod, tg_topology_node_name(t, p->node),
				      (unsigned long long)p->gpus);
	}
	for (i = 0; i < tg_decision_nvictims(d) && o < sizeof(buf); i++) {
		const tg_victim *v = tg_decision_victim(d, i);

		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "v:%s/%s@%s ",
				      v->gang, v->pod,
				      tg_topology_node_name(t, v->node));
	}
	return buf;
}

static tg_gang *inc_preemptor(unsigned step)
{
	char name[32], pod[48];
	tg_gang *g;
	tg_shape sh;
	unsigned n = 1 + inc_rn(12), ps, i;
	static const char *layer[] = { NULL, "block", "spine" };

	snprintf(name, sizeof(name), "pre-%u", step);
	g = tg_gang_create(name);
	memset(&sh, 0, sizeof(sh));
	sh.v[TG_RES_CPU] = 1000 * (1 + inc_rn(8));
	sh.v[TG_RES_GPU] = inc_rn(9);
	tg_gang_add_podset(g, "w", &sh, n, &ps);
	for (i = 0; i < n; i++) {
		snprintf(pod, sizeof(pod), "%s-%u", name, i);
		tg_gang_podset_set_member(g, ps, i, pod);
	}
	tg_gang_set_priority(g, 2 + inc_rn(3));
	if ((i = inc_rn(3)))
		tg_gang_set_gather(g, layer[i], inc_rn(2) ? TG_GATHER_MUST :
				   TG_GATHER_PREFER);
	return g;
}

/* One random sequence; counts steps whose decisions differ, and those
 * that preempt. */
static void inc_sequence(unsigned steps, unsigned *differ, unsigned *checks,
			 unsigned *preempting, unsigned *changed)
{
	static inc_job jobs[INC_JOBS];
	int64_t cpu_free[INC_NODES];
	uint64_t gpu_free[INC_NODES];
	tg_topology *inc = inc_cluster(), *old = inc_cluster();
	bool was[INC_JOBS];
	unsigned next = 0, s, i, k;
	char g[16];

	memset(jobs, 0, sizeof(jobs));
	for (i = 0; i < INC_NODES; i++) {
		cpu_free[i] = 8000;
		gpu_free[i] = 0xff;
	}
	for (s = 0; s < steps; s++) {
		unsigned r = inc_rn(100);
		tg_topology *fresh;
		tg_decision *d[3];
		tg_gang *pg;
		unsigned order[INC_JOBS], nord = 0;

		for (i = 0; i < INC_JOBS; i++)
			was[i] = jobs[i].cand;
		if (r < 35 && next < INC_JOBS) {
			/* jobs begin (not candidates yet) */
			for (k = 1 + inc_rn(6); k-- && next < INC_JOBS;)
				if (inc_begin(jobs, next, cpu_free, gpu_free)) {
					inc_add(inc, next, &jobs[next]);
					inc_add(old, next, &jobs[next]);
					next++;
				}
		} else if (r < 55) {
			/* jobs end */
			for (k = 1 + inc_rn(4); k-- && next;) {
				i = inc_rn(next);
				if (!jobs[i].running)
					continue;
				inc_end(&jobs[i], cpu_free, gpu_free);
				jobs[i].cand = false;
				snprintf(g, sizeof(g), "job-%u", i);
				tg_topology_remove_gang(inc, g);
				tg_topology_remove_gang(old, g);
			}
		} else if (r < 85) {
			/* another preemptor's candidates: a few flip */
			for (k = inc_rn(8); k--;) {
				i = next ? inc_rn(next) : 0;
				if (jobs[i].running)
					jobs[i].cand = !jobs[i].cand;
			}
		} else {
			/* a partition's or QOS's priority changes */
			for (k = 1 + inc_rn(3); k-- && next;) {
				i = inc_rn(next);
				if (jobs[i].running)
					jobs[i].prio = inc_rn(4);
			}
		}
		/* the new way: only what changed (the priority is compared
		 * too, as the plugin does) */
		for (i = 0; i < next; i++) {
			static int64_t prio_in[INC_JOBS];

			if (!jobs[i].running)
				continue;
			if (s && was[i] == jobs[i].cand &&
			    prio_in[i] == jobs[i].prio)
				continue;
			prio_in[i] = jobs[i].prio;
			snprintf(g, sizeof(g), "job-%u", i);
			if (tg_topology_set_gang_preemption(inc, g,
							    jobs[i].prio,
							    jobs[i].cand))
				diag("set_gang_preemption %s failed", g);
			(*changed)++;
		}
		/* the old way: every candidate and every former one again */
		for (i = 0; i < next; i++) {
			if (!jobs[i].running || (!jobs[i].cand && !was[i]))
				continue;
			snprintf(g, sizeof(g), "job-%u", i);
			tg_topology_remove_gang(old, g);
			inc_add(old, i, &jobs[i]);
		}
		/* a fresh model, the running jobs in a shuffled order */
		fresh = inc_cluster();
		for (i = 0; i < next; i++)
			if (jobs[i].running)
				order[nord++] = i;
		for (i = nord; i > 1; i--) {
			unsigned x = inc_rn(i), tmp = order[i - 1];

			order[i - 1] = order[x];
			order[x] = tmp;
		}
		for (i = 0; i < nord; i++)
			inc_add(fresh, order[i], &jobs[order[i]]);
		if (tg_topology_check(inc, NULL) != TG_OK)
			(*differ)++;
		pg = inc_preemptor(s);
		tg_place(inc, pg, &d[0], NULL);
		tg_place(old, pg, &d[1], NULL);
		tg_place(fresh, pg, &d[2], NULL);
		if (d[0] && d[1] && d[2]) {
			char a[16384];

			snprintf(a, sizeof(a), "%s", inc_sig(inc, d[0]));
			if (strcmp(a, inc_sig(old, d[1])) ||
			    strcmp(a, inc_sig(fresh, d[2]))) {
				if (!*differ) {
					diag("incremental: %s", a);
					diag("re-added:    %s", inc_sig(old, d[1]));
					diag("fresh:       %s",
					     inc_sig(fresh, d[2]));
				}
				(*differ)++;
			}
			*preempting += tg_decision_status(d[0]) ==
				       TG_STATUS_PREEMPTING;
		} else {
			(*differ)++;
		}
		(*checks)++;
		for (i = 0; i < 3; i++)
			tg_decision_free(d[i]);
		tg_gang_destroy(pg);
		tg_topology_destroy(fresh);
	}
	tg_topology_destroy(inc);
	tg_topology_destroy(old);
}

static void test_incremental(void)
{
	unsigned c, differ = 0, checks = 0, preempting = 0, changed = 0;

	for (c = 0; c < 40; c++) {
		inc_seed = 1000 + c;
		inc_sequence(60, &differ, &checks, &preempting, &changed);
	}
	is_int(differ, 0, "candidacy by change: the incremental model decides "
	       "as the re-added and a fresh one (%u decisions, %u steps "
	       "changing %u gangs in place)", checks, checks, changed);
	ok(preempting >= checks / 20, "candidacy by change: preemption "
	   "exercised (%u preempting decisions of %u)", preempting, checks);
}

int main(void)
{
	test_incremental();
	test_compaction();
	test_seed_example2();
	test_a2();
	test_rules();
	test_reservations();
	test_budget();
	return done_testing();
}
