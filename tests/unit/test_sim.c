/*
 * tests/unit/test_sim.c - the trace-driven simulator (cli/sim.c,
 * cli/sim_policy.c): traces, fabrics, the runtime model, each policy on
 * tiny hand-checked states and traces, preemption, determinism, and a
 * regression check that topogang is not worse than any baseline on a
 * small fixed trace ($TG_SRCDIR/tests/data/sim, see its README).
 *
 * Every engine run here uses sim_config.check: the topology's invariant
 * checker and the engine's free-GPU ledger are compared after every
 * change, so no policy can over-commit a node unnoticed.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "tap.h"

static char datadir[1024];

static sim_fabric *spec(const char *s)
{
	sim_fabric *f = NULL;
	tg_errinfo ei;

	ei.msg[0] = '\0';
	if (sim_fabric_spec(s, &f, &ei))
		diag("spec %s: %s", s, ei.msg);
	return f;
}

static bool trace(sim_trace *tr, const char *csv)
{
	tg_errinfo ei;

	ei.msg[0] = '\0';
	if (sim_trace_parse(tr, csv, strlen(csv), "t.csv", &ei)) {
		diag("trace: %s", ei.msg);
		return false;
	}
	return true;
}

static bool run(const sim_fabric *f, const sim_trace *tr, const char *pol,
		const sim_config *base, sim_result *r)
{
	sim_config c = *base;
	tg_errinfo ei;
	tg_err err;

	c.keep_jobs = true;
	c.check = true;
	ei.msg[0] = '\0';
	err = sim_run(f, tr, pol, &c, r, &ei);
	if (err)
		diag("%s: %s (%s)", pol, ei.msg, tg_strerror(err));
	return err == TG_OK;
}

static bool near(double a, double b)
{
	return fabs(a - b) < 1e-9 * (1 + fabs(a) + fabs(b));
}

/* ---- the runtime model ---- */

static void test_model(void)
{
	ok(near(sim_stretch(0.5, 400, 200), 1.5),
	   "model: half the bandwidth, f = 0.5: 1.5x");
	ok(near(sim_stretch(0.5, 400, 400), 1.0),
	   "model: the best placement runs the trace duration");
	ok(near(sim_stretch(0.0, 400, 25), 1.0),
	   "model: f = 0: placement does not matter");
	ok(near(sim_stretch(1.0, 400, 100), 4.0),
	   "model: f = 1: time scales with 1/bandwidth");
	ok(near(sim_stretch(0.5, 7200, 0), 1.0),
	   "model: no bandwidth known: no stretch");
	ok(near(SIM_DEFAULT_COMM, 0.5), "model: default f is 0.5");
}

/* ---- traces ---- */

static void trace_err(const char *csv, const char *want, const char *what)
{
	sim_trace tr;
	tg_errinfo ei;
	tg_err err;

	ei.msg[0] = '\0';
	err = sim_trace_parse(&tr, csv, strlen(csv), "t.csv", &ei);
	ok(err != TG_OK, "trace: %s is an error", what);
	like(ei.msg, want, "trace: %s: message", what);
	sim_trace_free(&tr);
}

static void test_trace(void)
{
	sim_trace tr;
	char big[SIM_MAX_LINE + 64];

	ok(trace(&tr, "# a comment\n"
		      "job_type,gpus,duration_s,submit_s,job_id,nodes,"
		      "priority\r\n"
		      "x,16,100,50,b,2,7\r\n"
		      "y,1,10.5,0,a,,\n"
		      "\n"
		      "z,8,1,50,c,1,-3\n"), "trace: parses, any column order");
	is_int(tr.njobs, 3, "trace: three jobs");
	is_str(tr.jobs[0].id, "a", "trace: sorted by submit time");
	is_str(tr.jobs[1].id, "b", "trace: equal submits keep file order");
	is_int(tr.jobs[1].nodes, 2, "trace: nodes");
	is_int(tr.jobs[1].gpus, 16, "trace: gpus");
	is_int(tr.jobs[1].priority, 7, "trace: priority");
	is_int(tr.jobs[2].priority, -3, "trace: negative priority");
	is_int(tr.jobs[0].nodes, 0, "trace: empty nodes = not given");
	ok(near(tr.jobs[0].duration, 10.5), "trace: fractional seconds");
	is_int(tr.jobs[0].line, 4, "trace: line numbers kept");
	ok(tr.has_nodes && tr.has_priority, "trace: optional columns seen");
	sim_trace_free(&tr);

	trace_err("job_id,submit_s,duration_s\n1,0,1\n", "no gpus column",
		  "missing column");
	trace_err("job_id,submit_s,duration_s,gpus\n1,0,1,4\n2,0,1,x\n",
		  "t.csv:3: gpus 'x'", "bad count");
	trace_err("job_id,submit_s,duration_s,gpus\n1,-5,1,4\n",
		  "t.csv:2: submit_s", "negative time");
	trace_err("job_id,submit_s,duration_s,gpus\n1,0,1,0\n",
		  "gpus '0'", "zero GPUs");
	trace_err("job_id,submit_s,duration_s,gpus,nodes\n1,0,1,12,5\n",
		  "12 GPUs do not split evenly over 5 nodes", "uneven nodes");
	trace_err("job_id,submit_s,duration_s,gpus\n\"1\",0,1,4\n",
		  "quoted fields", "quotes");
	trace_err("job_id,submit_s,duration_s,gpus\n1,0,1\n",
		  "3 fields, the header has 4", "short row");
	trace_err("job_id,gpus,gpus,submit_s,duration_s\n",
		  "column gpus given twice", "duplicate column");
	trace_err("", "no header", "empty file");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	trace_err(big, "longer than 4096 bytes", "bounded line");
}

/* ---- fabrics ---- */

static void spec_err(const char *s, const char *want)
{
	sim_fabric *f = NULL;
	tg_errinfo ei;

	ei.msg[0] = '\0';
	ok(sim_fabric_spec(s, &f, &ei) != TG_OK && !f, "spec '%s' rejected",
	   s);
	like(ei.msg, want, "spec '%s': message", s);
}

static void test_fabric(void)
{
	sim_fabric *f = spec("zone:2,spine:4,block:8,node:18,gpu:8");
	tg_topology *t = NULL;
	tg_errinfo ei;
	tg_node_id n;
	char path[1100];

	ok(f != NULL, "spec: the issue's example parses");
	if (!f)
		return;
	is_int(sim_fabric_nnodes(f), 1152, "spec: 2*4*8*18 nodes");
	is_int(sim_fabric_ngpus(f), 9216, "spec: 8 GPUs each");
	is_str(sim_fabric_describe(f),
	       "2 zone x 4 spine x 8 block x 18 nodes x 8 GPUs = 1152 nodes, "
	       "9216 GPUs", "spec: described");
	ok(sim_fabric_set_bandwidth(f, "block=800,node=3600", &ei) == TG_OK,
	   "spec: per-layer bandwidth");
	ok(sim_fabric_set_bandwidth(f, "rack=100", &ei) == TG_ENOENT,
	   "spec: bandwidth of an unknown layer");
	like(ei.msg, "no layer 'rack'", "spec: names the layer");
	ok(sim_fabric_instantiate(f, &t, &ei) == TG_OK && t,
	   "spec: instantiates");
	if (t) {
		is_int(tg_topology_nlayers(t), 3, "spec: three layers");
		is_str(tg_topology_layer_key(t, 1), "topogang.io/spine",
		       "spec: label keys");
		tg_topology_node_find(t, "node-0", &n);
		is_str(tg_topology_domain_path(t, tg_topology_node_domain(t,
									 n)),
		       "zone-0/spine-0/block-0", "spec: first node's path");
		tg_topology_node_find(t, "node-1151", &n);
		is_str(tg_topology_domain_path(t, tg_topology_node_domain(t,
									 n)),
		       "zone-1/spine-7/block-63",
		       "spec: values count across the layer");
		ok(tg_topology_layer_bandwidth(t, 2) == 800 &&
		   tg_topology_layer_bandwidth(t, 3) == 3600 &&
		   tg_topology_layer_bandwidth(t, 1) == 200,
		   "spec: bandwidths set, others the core's defaults");
		ok(tg_topology_check(t, &ei) == TG_OK, "spec: invariants");
		tg_topology_destroy(t);
	}
	sim_fabric_destroy(f);

	f = spec("node:4,gpu:4");
	ok(f && sim_fabric_nnodes(f) == 4 && sim_fabric_ngpus(f) == 16,
	   "spec: a flat fabric");
	sim_fabric_destroy(f);
	spec_err("spine:0,node:2", "not NAME:COUNT");
	spec_err("spine:2", "no node:N");
	spec_err("node:4,spine:2", "after node:/gpu:");
	spec_err("gpu:8,node:2", "gpu:G comes after node:N");
	spec_err("a:2,a:3,node:1", "layer 'a' twice");
	spec_err("a:1024,b:1024,c:1024,node:1", "more than 1048576 nodes");
	spec_err("sp ine:2,node:1", "not NAME:COUNT");
	spec_err("node:2,gpu:65", "G in 1..64");

	snprintf(path, sizeof(path), "%s/crux_clos_847.conf", datadir);
	f = NULL;
	ei.msg[0] = '\0';
	ok(sim_fabric_load(path, 8, &f, &ei) == TG_OK && f,
	   "fabric: the Crux topology.conf loads");
	if (f) {
		is_int(sim_fabric_nnodes(f), 847, "fabric: 847 hosts");
		is_int(sim_fabric_ngpus(f), 6776, "fabric: 8 GPUs per host");
		like(sim_fabric_describe(f),
		     "layers switch-l2 > switch-l1 > switch-l0",
		     "fabric: three switch levels");
		sim_fabric_destroy(f);
	} else {
		diag("%s", ei.msg);
	}
	f = NULL;
	ok(sim_fabric_load("no-such-file", 8, &f, &ei) == TG_EINVAL,
	   "fabric: neither a file nor a spec");
	like(ei.msg, "not a fabric spec", "fabric: says so");
}

/* ---- the world and policies on hand-built states ---- */

typedef struct fixture {
	sim_fabric *f;
	tg_topology *t;
	sim_world w;
	sim_live live[4];
	unsigned run[4];
	tg_node_id node[64];
	uint64_t gpus[64];
	unsigned victims[4];
	sim_choice c;
} fixture;

static bool fx_open(fixture *x, const char *s)
{
	tg_errinfo ei;

	memset(x, 0, sizeof(*x));
	if (!(x->f = spec(s)) || sim_fabric_instantiate(x->f, &x->t, &ei) ||
	    sim_world_init(&x->w, x->t))
		return false;
	x->w.live = x->live;
	x->w.njobs = 4;
	x->w.run = x->run;
	x->c.node = x->node;
	x->c.gpus = x->gpus;
	x->c.victims = x->victims;
	return true;
}

static void fx_close(fixture *x)
{
	sim_world_fini(&x->w);
	tg_topology_destroy(x->t);
	sim_fabric_destroy(x->f);
}

/* takes \p g GPUs on node \p n as background work (not preemptible) */
static void busy(fixture *x, const char *node, unsigned g)
{
	static unsigned k;
	char pod[32];
	tg_alloc_spec as;
	tg_shape sh;
	tg_node_id n;

	tg_topology_node_find(x->t, node, &n);
	memset(&sh, 0, sizeof(sh));
	sh.v[TG_RES_GPU] = g;
	memset(&as, 0, sizeof(as));
	snprintf(pod, sizeof(pod), "bg-%u", k++);
	as.pod = pod;
	as.node = n;
	as.shape = &sh;
	as.gpus = g >= 64 ? ~0ull : (1ull << g) - 1;
	tg_topology_add_alloc(x->t, &as);
	sim_world_refresh(&x->w);
}

/* places members x gpus with \p pol; the chosen node names joined */
static const char *pick(fixture *x, const char *pol, unsigned members,
			unsigned gpus, uint64_t seed)
{
	static char out[512];
	sim_policy *p = NULL;
	sim_req r;
	tg_errinfo ei;
	bool placed = false;
	size_t off = 0;
	unsigned i;

	memset(&r, 0, sizeof(r));
	r.job = 3;
	r.name = "job-3";
	r.members = members;
	r.gpus = gpus;
	if (sim_policy_create(pol, &x->w, seed, &p, &ei) ||
	    sim_policy_place(p, &r, &x->c, &placed, &ei)) {
		sim_policy_destroy(p);
		return "(error)";
	}
	sim_policy_destroy(p);
	if (!placed)
		return "(none)";
	out[0] = '\0';
	for (i = 0; i < members; i++)
		off += (size_t)snprintf(out + off, sizeof(out) - off, "%s%s",
					i ? "," : "",
					tg_topology_node_name(x->t,
							      x->node[i]));
	return out;
}

static void test_world(void)
{
	fixture x;
	tg_node_id a[2];

	if (!ok(fx_open(&x, "spine:2,leaf:2,node:2"), "world: opens"))
		return;
	a[0] = 0;
	a[1] = 1;
	is_int(sim_world_level(&x.w, a, 2), 1, "world: same leaf");
	a[1] = 2;
	is_int(sim_world_level(&x.w, a, 2), 0, "world: same spine");
	a[1] = 4;
	is_int(sim_world_level(&x.w, a, 2), TG_NONE, "world: across root");
	is_int(sim_world_level(&x.w, a, 1), 2, "world: one node");
	ok(sim_world_level_bw(&x.w, 2) == 7200 &&
	   sim_world_level_bw(&x.w, 1) == 400 &&
	   sim_world_level_bw(&x.w, 0) == 200 &&
	   sim_world_level_bw(&x.w, TG_NONE) == 100,
	   "world: level bandwidths are the core's");
	fx_close(&x);
}

static void test_policies(void)
{
	fixture x;
	const char *s;

	/* least-allocated spreading vs best fit: node-0 half full */
	if (fx_open(&x, "leaf:2,node:2")) {
		busy(&x, "node-0", 4);
		s = pick(&x, "k8s-default", 1, 4, 1);
		ok(strcmp(s, "node-0") && s[0] == 'n',
		   "k8s-default: a 4-GPU pod goes to an emptier node (%s)", s);
		is_str(pick(&x, "topogang", 1, 4, 1), "node-0",
		       "topogang: best fit on the half-full node");
		is_str(pick(&x, "slurm-tree", 1, 4, 1), "node-0",
		       "slurm-tree: tightest leaf, first node");
		is_str(pick(&x, "koordinator", 1, 4, 1), "node-0",
		       "koordinator: fewest offer slots");
		{
			char first[512];

			snprintf(first, sizeof(first), "%s",
				 pick(&x, "random", 3, 8, 1));
			is_str(pick(&x, "random", 3, 8, 1), first,
			       "random: the same seed, the same nodes");
		}
		is_str(pick(&x, "topogang", 4, 8, 1), "(none)",
		       "topogang: 4 whole nodes do not fit 3 free");
		is_str(pick(&x, "k8s-default", 4, 8, 1), "(none)",
		       "k8s-default: all or nothing");
		fx_close(&x);
	}
	/* pod affinity: fill the first member's rack, then spill */
	if (fx_open(&x, "spine:2,leaf:2,node:2")) {
		tg_node_id n[3];

		s = pick(&x, "pod-affinity", 3, 8, 7);
		memcpy(n, x.node, sizeof(n));
		is_int(sim_world_level(&x.w, n, 2), 1,
		       "pod-affinity: the 2nd member joins the 1st's rack (%s)",
		       s);
		ok(sim_world_level(&x.w, n, 3) != 1,
		   "pod-affinity: the 3rd spills out of the full rack");
		s = pick(&x, "topogang", 3, 8, 7);
		memcpy(n, x.node, sizeof(n));
		is_int(sim_world_level(&x.w, n, 3), 0,
		       "topogang: 3 members inside one spine (%s)", s);
		fx_close(&x);
	}
	/* Slurm tree: tightest leaf that fits; else the leaf under the
	 * tightest fitting parent, then a closer leaf only if it is not a
	 * worse fit (hand-traced from 22.05's _eval_nodes_topo, see
	 * sim_policy.c, and what slurmctld 22.05.8 did with the same
	 * fabric and busy nodes: node-[2-3,8-11], across the spines,
	 * although spine-1 holds all six) */
	if (fx_open(&x, "spine:2,leaf:2,node:4")) {
		busy(&x, "node-0", 8);
		busy(&x, "node-1", 8);
		busy(&x, "node-4", 8);
		is_str(pick(&x, "slurm-tree", 2, 8, 1), "node-2,node-3",
		       "slurm-tree: 2 nodes in the 2-node leaf");
		is_str(pick(&x, "slurm-tree", 3, 8, 1), "node-5,node-6,node-7",
		       "slurm-tree: 3 nodes in the 3-node leaf");
		is_str(pick(&x, "slurm-tree", 6, 8, 1),
		       "node-8,node-9,node-10,node-11,node-2,node-3",
		       "slurm-tree: 6 nodes: the leaf under the spine that "
		       "fits, then the tighter far leaf over the near one");
		is_str(pick(&x, "topogang", 3, 8, 1), "node-5,node-6,node-7",
		       "topogang: the same best fit");
		fx_close(&x);
	}
	/* Koordinator keys vertices by bare label value: "b1" under s1
	 * and under s2 are one vertex (anchors.md 1.3) */
	{
		static const char *const paths[6][2] = {
			{ "s1", "b1" }, { "s1", "b1" }, { "s1", "b2" },
			{ "s1", "b2" }, { "s2", "b1" }, { "s2", "b1" },
		};
		tg_topology *t = tg_topology_create();
		tg_errinfo ei;
		unsigned i;
		tg_node_id n;
		char name[16];

		tg_topology_add_layer(t, "spine", NULL);
		tg_topology_add_layer(t, "block", NULL);
		for (i = 0; i < 6; i++) {
			snprintf(name, sizeof(name), "n%u", i);
			tg_topology_add_node(t, name, paths[i], &n);
			tg_topology_node_set_gpus(t, n, 8, NULL);
		}
		tg_topology_build(t, &ei);
		memset(&x, 0, sizeof(x));
		if (sim_fabric_topology(t, "merge", &x.f, &ei) == TG_OK &&
		    sim_fabric_instantiate(x.f, &x.t, &ei) == TG_OK &&
		    sim_world_init(&x.w, x.t) == TG_OK) {
			x.w.live = x.live;
			x.w.njobs = 4;
			x.w.run = x.run;
			x.c.node = x.node;
			x.c.gpus = x.gpus;
			x.c.victims = x.victims;
			busy(&x, "n0", 8);
			busy(&x, "n5", 8);
			is_str(pick(&x, "koordinator", 2, 8, 1), "n1,n4",
			       "koordinator: the merged b1 spans both spines");
			is_str(pick(&x, "topogang", 2, 8, 1), "n2,n3",
			       "topogang: s1/b2, one real block");
			is_str(pick(&x, "slurm-tree", 2, 8, 1), "n2,n3",
			       "slurm-tree: full paths too");
			fx_close(&x);
		} else {
			ok(0, "koordinator fixture: %s", ei.msg);
		}
		tg_topology_destroy(t);
	}
}

/* ---- the engine ---- */

static const char *const all[] = {
	"topogang", "k8s-default", "pod-affinity", "slurm-tree",
	"koordinator", "random"
};
#define NPOL (sizeof(all) / sizeof(all[0]))

/* Stretch by placement, hand-checked: A and C hold one node in each
 * leaf for 1000 s, B leaves at t=10, so E (2 nodes, best in one leaf:
 * 400 Gbit/s) must cross the root (200): 0.5 + 0.5 * 2 = 1.5x. */
static void test_runtime(void)
{
	static const char *const pols[] = { "topogang", "slurm-tree" };
	sim_fabric *f = spec("leaf:2,node:2");
	sim_config c;
	sim_trace tr;
	sim_result r;
	unsigned i;

	sim_config_default(&c);
	if (!f || !trace(&tr, "job_id,submit_s,duration_s,gpus,nodes\n"
				"A,0,1000,8,1\nB,0,10,8,1\nC,0,1000,8,1\n"
				"E,20,100,16,2\n"))
		return;
	for (i = 0; i < 2; i++) {
		if (!ok(run(f, &tr, pols[i], &c, &r), "%s: runs", pols[i]))
			continue;
		is_int(r.jobs[0].nodes[0], 0, "%s: A on node-0", pols[i]);
		is_int(r.jobs[1].nodes[0], 1, "%s: B best-fits node-1",
		       pols[i]);
		is_int(r.jobs[2].nodes[0], 2, "%s: C on node-2", pols[i]);
		ok(near(r.jobs[3].start, 20) && near(r.jobs[3].end, 170),
		   "%s: E runs 20..170 (got %g..%g)", pols[i],
		   r.jobs[3].start, r.jobs[3].end);
		ok(near(r.jobs[3].stretch, 1.5), "%s: E stretched 1.5x",
		   pols[i]);
		is_int(r.jobs[3].level, TG_NONE, "%s: E crosses the root",
		       pols[i]);
		ok(r.jobs[3].gbps == 200 && r.jobs[3].best_gbps == 400,
		   "%s: 200 of a best 400 Gbit/s", pols[i]);
		ok(near(r.smallest_frac, 1), "%s: no smaller domain was free",
		   pols[i]);
		ok(near(r.stretch_mean, (1 + 1 + 1 + 1.5) / 4),
		   "%s: mean stretch", pols[i]);
		ok(near(r.wait_mean, 0) && r.completed == 4,
		   "%s: nobody waited", pols[i]);
		ok(near(r.makespan, 1000), "%s: makespan", pols[i]);
		ok(near(r.util, (8000 + 80 + 8000 + 16 * 150) / (32 * 1000.0)),
		   "%s: GPU utilisation %g", pols[i], r.util);
		sim_result_free(&r);
	}
	c.comm_fraction = 0;
	if (run(f, &tr, "topogang", &c, &r)) {
		ok(near(r.jobs[3].end, 120), "f = 0: E is not stretched");
		sim_result_free(&r);
	}
	sim_trace_free(&tr);
	sim_fabric_destroy(f);
}

/* L (low, 2 nodes) runs; H (high, 1 node) arrives at 100 and needs
 * one of L's nodes: every preempting policy kills L (16 GPUs x 100 s),
 * H runs 100..150, L runs again 150..1150; random waits. */
static void test_preempt(void)
{
	sim_fabric *f = spec("leaf:1,node:2");
	sim_config c;
	sim_trace tr;
	sim_result r;
	unsigned i;

	sim_config_default(&c);
	if (!f || !trace(&tr, "job_id,submit_s,duration_s,gpus,nodes,"
				"priority\nL,0,1000,16,2,0\n"
				"H,100,50,8,1,100\n"))
		return;
	for (i = 0; i < NPOL; i++) {
		bool pre = sim_policy_preempts(all[i]);

		if (!ok(run(f, &tr, all[i], &c, &r), "%s: runs", all[i]))
			continue;
		if (pre) {
			is_int(r.preemptions, 1, "%s: L preempted once",
			       all[i]);
			ok(near(r.gpuh_lost, 1600 / 3600.0),
			   "%s: 16 GPUs x 100 s lost (%g GPU-h)", all[i],
			   r.gpuh_lost);
			ok(near(r.jobs[1].start, 100) &&
			   near(r.jobs[1].end, 150), "%s: H runs 100..150",
			   all[i]);
			ok(near(r.jobs[0].start, 150) &&
			   near(r.jobs[0].end, 1150),
			   "%s: L reruns 150..1150", all[i]);
			ok(near(r.jobs[0].wait, 50) &&
			   r.jobs[0].preempted == 1,
			   "%s: L waited 50 s", all[i]);
		} else {
			is_int(r.preemptions, 0, "%s: never preempts",
			       all[i]);
			ok(near(r.jobs[1].start, 1000),
			   "%s: H waits for L", all[i]);
		}
		sim_result_free(&r);
	}
	c.preempt = false;
	if (run(f, &tr, "topogang", &c, &r)) {
		ok(r.preemptions == 0 && near(r.jobs[1].start, 1000),
		   "--no-preempt: topogang waits too");
		sim_result_free(&r);
	}
	sim_trace_free(&tr);
	sim_fabric_destroy(f);
}

static void test_engine_errors(void)
{
	sim_fabric *f = spec("leaf:2,node:2");
	sim_config c;
	sim_trace tr;
	sim_result r;
	tg_errinfo ei;

	sim_config_default(&c);
	if (!f)
		return;
	if (trace(&tr, "job_id,submit_s,duration_s,gpus\nx,0,10,12\n")) {
		ok(sim_run(f, &tr, "topogang", &c, &r, &ei) == TG_EINVAL,
		   "engine: 12 GPUs on 8-GPU nodes without nodes");
		like(ei.msg, "t.csv:2: job x: 12 GPUs do not split",
		     "engine: names the line");
		sim_result_free(&r);
		sim_trace_free(&tr);
	}
	if (trace(&tr, "job_id,submit_s,duration_s,gpus\nbig,0,10,64\n"
			"ok,0,10,16\n")) {
		if (run(f, &tr, "k8s-default", &c, &r)) {
			ok(r.rejected == 1 && r.completed == 1 &&
			   r.jobs[0].rejected, "engine: a job larger than "
			   "the fabric never fits and is counted");
			sim_result_free(&r);
		}
		ok(sim_run(f, &tr, "fifo", &c, &r, &ei) == TG_EINVAL,
		   "engine: unknown policy");
		sim_trace_free(&tr);
	}
	sim_fabric_destroy(f);
	{
		char b[SIM_GANG_MAX];
		unsigned j = 0;

		sim_gang_name(42, b);
		ok(sim_gang_job(b, &j) && j == 42, "gang names round-trip");
		ok(!sim_gang_job("job-4x", &j) && !sim_gang_job("bg-1", &j),
		   "gang names: others are no job");
	}
}

/* The first 100 jobs of the Acme trace, compressed 10x, on 128 nodes. */
static void test_acme(void)
{
	sim_result r[NPOL], r2;
	sim_fabric *f = spec("spine:4,block:4,node:8,gpu:8");
	sim_config c;
	sim_trace tr;
	tg_errinfo ei;
	char path[1100];
	unsigned i;
	bool okall = true;

	snprintf(path, sizeof(path), "%s/acme_kalos_first100.csv", datadir);
	ei.msg[0] = '\0';
	if (!f || !ok(sim_trace_load(&tr, path, &ei) == TG_OK,
		      "acme: the small fixed trace loads")) {
		diag("%s", ei.msg);
		sim_fabric_destroy(f);
		return;
	}
	sim_config_default(&c);
	c.time_scale = 10;
	memset(r, 0, sizeof(r));
	for (i = 0; i < NPOL; i++) {
		okall &= run(f, &tr, all[i], &c, &r[i]);
		ok(r[i].completed == 100 && r[i].rejected == 0 &&
		   r[i].util > 0 && r[i].util <= 1,
		   "acme: %s completes every job, utilisation %.3f", all[i],
		   r[i].util);
	}
	ok(okall, "acme: every policy runs with the checker on");
	for (i = 1; okall && i < NPOL; i++) {
		ok(r[0].stretch_multi <= r[i].stretch_multi + 1e-9,
		   "acme: topogang stretch %.4f <= %s %.4f",
		   r[0].stretch_multi, all[i], r[i].stretch_multi);
		ok(r[0].smallest_frac >= r[i].smallest_frac - 1e-9,
		   "acme: topogang smallest-domain %.3f >= %s %.3f",
		   r[0].smallest_frac, all[i], r[i].smallest_frac);
		ok(r[0].wait_mean <= r[i].wait_mean + 1e-6,
		   "acme: topogang mean wait %.0f s <= %s %.0f s",
		   r[0].wait_mean, all[i], r[i].wait_mean);
	}
	/* determinism: the same seed gives the same run, bit for bit */
	for (i = 0; okall && i < NPOL; i++) {
		if (!run(f, &tr, all[i], &c, &r2))
			continue;
		ok(r2.digest == r[i].digest &&
		   r2.wait_mean == r[i].wait_mean &&
		   r2.stretch_mean == r[i].stretch_mean &&
		   r2.frag == r[i].frag, "acme: %s twice, the same run",
		   all[i]);
		sim_result_free(&r2);
	}
	c.seed = 2;
	if (okall && run(f, &tr, "random", &c, &r2)) {
		ok(r2.digest != r[NPOL - 1].digest,
		   "acme: random with another seed differs");
		sim_result_free(&r2);
	}
	c.seed = 1;
	c.high_fraction = 0.2;
	for (i = 0; okall && i < NPOL; i++) {
		sim_result a, b;

		if (run(f, &tr, all[i], &c, &a)) {
			if (run(f, &tr, all[i], &c, &b)) {
				ok(a.digest == b.digest &&
				   a.gpuh_lost == b.gpuh_lost,
				   "acme: %s with a priority mix: "
				   "deterministic (%u preempted)", all[i],
				   a.preemptions);
				sim_result_free(&b);
			}
			ok(sim_policy_preempts(all[i]) || !a.preemptions,
			   "acme: %s preempts only if it can", all[i]);
			sim_result_free(&a);
		}
	}
	for (i = 0; i < NPOL; i++)
		sim_result_free(&r[i]);
	sim_trace_free(&tr);
	sim_fabric_destroy(f);
}

/* ---- calibration: a policy against recorded decisions ---- */

static bool calib(const sim_fabric *f, const char *ev, const char *pol,
		  sim_calib *c, tg_errinfo *ei)
{
	ei->msg[0] = '\0';
	return sim_calibrate(f, ev, strlen(ev), "ev.txt", pol, c, ei) ==
	       TG_OK;
}

static void calib_err(const sim_fabric *f, const char *ev,
		      const char *want, const char *what)
{
	sim_calib c;
	tg_errinfo ei;

	ok(!calib(f, ev, "slurm-tree", &c, &ei), "calibrate: %s is an error",
	   what);
	like(ei.msg, want, "calibrate: %s: message", what);
	sim_calib_free(&c);
}

static void test_calibrate(void)
{
	/* the hand-made case of test-slurm-tree-calib: slurmctld 22.05.8
	 * put 6 nodes on node-[2-3,8-11] */
	sim_fabric *f = spec("spine:2,leaf:2,node:4");
	sim_calib c;
	tg_errinfo ei;

	if (!ok(f != NULL, "calibrate: fabric"))
		return;
	if (ok(calib(f, "# by hand\n"
		     "fixed a 8 node-0\nfixed b 8 node-1\nfixed c 8 node-4\n"
		     "start six 8 node-2,node-3,node-8,node-9,node-10,node-11\n",
		     "slurm-tree", &c, &ei), "calibrate: reads (%s)", ei.msg)) {
		is_int(c.decisions, 1, "calibrate: fixed starts are state, "
		       "not decisions");
		is_int(c.matches, 1, "calibrate: slurm-tree matches "
		       "slurmctld across the spines");
		sim_calib_free(&c);
	}
	/* a different choice is reported with both node sets and leaves;
	 * the state follows the scheduler, not the policy */
	if (ok(calib(f, "start x 8 node-8\n"	/* empty: node-0 */
		     "start y 4 node-9\n"	/* leaf-2 tightest: same */
		     "start w 4 node-0\n"	/* node-9 has 4 left */
		     "end x\n"
		     "start z 8 node-8\n",	/* leaf-0 has 3: node-1 */
		     "slurm-tree", &c, &ei),
	       "calibrate: reads a stream (%s)", ei.msg)) {
		is_int(c.decisions, 4, "calibrate: 4 decisions");
		is_int(c.matches, 1, "calibrate: one as slurm-tree would");
		is_int(c.nmiss, 3, "calibrate: 3 mismatches");
		if (c.nmiss == 3) {
			is_str(c.miss[0].sched, "node-8",
			       "calibrate: the scheduler's nodes");
			is_str(c.miss[0].policy, "node-0",
			       "calibrate: slurm-tree's: first leaf, first "
			       "node");
			is_str(c.miss[0].sched_leaves, "leaf-2",
			       "calibrate: the scheduler's leaf");
			is_str(c.miss[0].policy_leaves, "leaf-0",
			       "calibrate: the policy's leaf");
			is_int(c.miss[1].line, 3, "calibrate: the line");
			is_str(c.miss[1].policy, "node-9",
			       "calibrate: 4 GPUs: the rest of node-9");
			is_str(c.miss[2].policy, "node-1",
			       "calibrate: after the end, leaf-0 is the "
			       "tightest for 8 GPUs");
		}
		sim_calib_free(&c);
	}
	if (ok(calib(f, "fixed a 8 node-0\npending p 8 16\npending q 8 2\n",
		     "slurm-tree", &c, &ei), "calibrate: pendings (%s)",
	       ei.msg)) {
		is_int(c.sched_pending, 2, "calibrate: 2 left pending");
		is_int(c.matches, 1, "calibrate: 16 nodes do not fit 15: "
		       "slurm-tree agrees");
		if (c.nmiss == 1)
			is_str(c.miss[0].sched, "-",
			       "calibrate: pending shows as '-'");
		sim_calib_free(&c);
	}
	if (ok(calib(f, "start t 8 node-4,node-5\nend t\n", "topogang", &c,
		     &ei), "calibrate: any policy (%s)", ei.msg)) {
		is_int(c.decisions, 1, "calibrate: topogang: 1 decision");
		sim_calib_free(&c);
	}
	calib_err(f, "start a 8 node-99\n", "ev.txt:1: node 'node-99'",
		  "an unknown node");
	calib_err(f, "start a 8 node-1\nstart b 1 node-1\n",
		  "ev.txt:2: node 'node-1' has not the GPUs free",
		  "GPUs not free");
	calib_err(f, "end a\n", "ev.txt:1: 'end a': no such running job",
		  "an end without a start");
	calib_err(f, "start a 8 node-1\nstart a 8 node-2\n",
		  "ev.txt:2: job a started twice", "a start twice");
	calib_err(f, "begin a 8 node-1\n", "ev.txt:1: expected",
		  "an unknown event");
	calib_err(f, "start a 0 node-1\n", "ev.txt:1: GPUS '0'",
		  "zero GPUs");
	calib_err(f, "start a 8 node-1,node-1\n", "node 'node-1' twice",
		  "a node twice");
	sim_fabric_destroy(f);
}

int main(void)
{
	const char *src = getenv("TG_SRCDIR");

	snprintf(datadir, sizeof(datadir), "%s/tests/data/sim",
		 src ? src : "..");
	test_model();
	test_trace();
	test_fabric();
	test_world();
	test_policies();
	test_runtime();
	test_preempt();
	test_engine_errors();
	test_acme();
	test_calibrate();
	return done_testing();
}
