/*
 * tests/unit/test_alloc_fail.c - allocation failures (libuv's OOM test,
 * curl's torture mode).
 *
 * A counting allocator, installed with tg_set_allocator(), fails the Nth
 * allocation (malloc or realloc) for N = 1, 2, ... until a run needs
 * fewer than N.  The scenario builds the seed's 12-node topology, records
 * running work, places a gang and applies it, places a higher-priority
 * gang that preempts and applies that, removes work and draws the
 * fabric.  Two ways to fail:
 *
 *  - "from N on": the Nth and every later allocation fail.  The first
 *    call that needs memory must say so (TG_ENOMEM, or NULL from a
 *    create/draw function), the model must still pass
 *    tg_topology_check() afterwards, and after destroying everything
 *    no block may be left allocated.
 *  - "only N": only the Nth fails.  The failing call reports TG_ENOMEM
 *    (or NULL) and the scenario calls it again, which must then work:
 *    a failed call leaves its object as it was.  The run must end with
 *    the same decisions and pictures as a run without failures, and
 *    nothing leaked.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "topogang/topogang.h"

/* ---- the allocator ---- */

static long fail_at;		/* 1-based; 0 = never */
static bool fail_on;		/* fail every allocation from fail_at on */
static bool paused;		/* no failures (checks between steps) */
static long ncalls;		/* allocations asked for */
static long live;		/* blocks not yet freed */
static bool injected;		/* a failure was injected in this run */

static bool should_fail(void)
{
	if (paused)
		return false;
	ncalls++;
	if (fail_at && (ncalls == fail_at || (fail_on && ncalls > fail_at))) {
		injected = true;
		return true;
	}
	return false;
}

static void *t_malloc(size_t n)
{
	void *p;

	if (should_fail())
		return NULL;
	p = malloc(n);
	if (p)
		live++;
	return p;
}

static void *t_realloc(void *p, size_t n)
{
	void *q;

	if (should_fail())
		return NULL;
	q = realloc(p, n);
	if (q && !p)
		live++;
	return q;
}

static void t_free(void *p)
{
	if (p)
		live--;
	free(p);
}

/* ---- the scenario ---- */

static const char *seed12[][3] = {
	{ "node-0", "spine-0", "block-0" }, { "node-1", "spine-0", "block-0" },
	{ "node-2", "spine-0", "block-0" }, { "node-3", "spine-0", "block-1" },
	{ "node-4", "spine-0", "block-1" }, { "node-5", "spine-1", "block-2" },
	{ "node-6", "spine-1", "block-2" }, { "node-7", "spine-1", "block-3" },
	{ "node-8", "spine-1", "block-3" }, { "node-9", "spine-2", "block-4" },
	{ "node-10", "spine-2", "block-4" },
	{ "node-11", "spine-2", "block-4" },
};

typedef struct run {
	bool retry;		/* call a failed step again */
	const char *step;	/* the step that failed first */
	tg_err err;		/* its error */
	bool unexpected;	/* an error other than TG_ENOMEM */
	unsigned nfailed;	/* steps that failed */
	bool check_failed;	/* tg_topology_check() after a failure */
	bool partial;		/* a failed apply left some of it done */
	char check_msg[512];
	char out[16384];	/* decisions and pictures */
	size_t len;
} run;

static void out_add(run *r, const char *s)
{
	size_t n = strlen(s);

	if (r->len + n >= sizeof(r->out))
		n = sizeof(r->out) - 1 - r->len;
	memcpy(r->out + r->len, s, n);
	r->len += n;
	r->out[r->len] = '\0';
}

static void out_decision(run *r, const tg_topology *t, const tg_decision *d)
{
	char line[512];
	unsigned i;

	snprintf(line, sizeof(line), "%s %s in %s: %s\n",
		 tg_decision_gang(d), tg_status_name(tg_decision_status(d)),
		 tg_decision_domain(d), tg_decision_message(d));
	out_add(r, line);
	for (i = 0; i < tg_decision_nplacements(d); i++) {
		const tg_placement *p = tg_decision_placement(d, i);

		snprintf(line, sizeof(line), "  r%u %s %s 0x%llx\n", p->rank,
			 p->pod, tg_topology_node_name(t, p->node),
			 (unsigned long long)p->gpus);
		out_add(r, line);
	}
	for (i = 0; i < tg_decision_nvictims(d); i++) {
		snprintf(line, sizeof(line), "  victim %s\n",
			 tg_decision_victim(d, i)->pod);
		out_add(r, line);
	}
}

/*
 * Runs one step: \p call is evaluated, and evaluated again once when it
 * fails with TG_ENOMEM and the run retries.  A step that still fails
 * ends the scenario.
 */
#define STEP(r, what, call) do {					\
	tg_err e_ = (call);						\
									\
	if (e_ == TG_ENOMEM && (r)->retry) {				\
		note((r), (what), e_);					\
		e_ = (call);						\
	}								\
	if (e_ != TG_OK) {						\
		note((r), (what), e_);					\
		goto out;						\
	}								\
} while (0)

/* The same for calls that return a pointer, NULL when out of memory. */
#define STEP_PTR(r, what, var, call) do {				\
	(var) = (call);							\
	if (!(var) && (r)->retry) {					\
		note((r), (what), TG_ENOMEM);				\
		(var) = (call);						\
	}								\
	if (!(var)) {							\
		note((r), (what), TG_ENOMEM);				\
		goto out;						\
	}								\
} while (0)

static void note(run *r, const char *what, tg_err err)
{
	if (!r->nfailed++) {
		r->step = what;
		r->err = err;
	}
	if (err != TG_ENOMEM)
		r->unexpected = true;
}

static void note(run *r, const char *what, tg_err err);

static bool add_run(run *r, tg_topology *t, const char *pod,
		    const char *node, int64_t cpu, unsigned gpus,
		    int64_t prio)
{
	tg_alloc_spec a;
	tg_shape sh;

	memset(&a, 0, sizeof(a));
	memset(&sh, 0, sizeof(sh));
	sh.v[TG_RES_CPU] = cpu;
	sh.v[TG_RES_GPU] = gpus;
	sh.v[TG_RES_MEMORY] = 1ll << 30;
	STEP(r, "node_find", tg_topology_node_find(t, node, &a.node));
	a.pod = pod;
	a.gang = pod;
	a.shape = &sh;
	a.priority = prio;
	a.preemptible = true;
	STEP(r, "add_alloc", tg_topology_add_alloc(t, &a));
	return true;
out:
	return false;
}

static bool add_node(run *r, tg_topology *t, unsigned i)
{
	static const uint8_t isl[8] = { 0, 0, 0, 0, 1, 1, 1, 1 };
	const char *path[2] = { seed12[i][1], seed12[i][2] };
	tg_node_id id;

	STEP(r, "add_node", tg_topology_add_node(t, seed12[i][0], path, &id));
	STEP(r, "set cpu", tg_topology_node_set_resource(t, id, TG_RES_CPU,
							 8000));
	STEP(r, "set memory", tg_topology_node_set_resource(t, id,
		 TG_RES_MEMORY, 32ll << 30));
	STEP(r, "set pods", tg_topology_node_set_resource(t, id, TG_RES_PODS,
							  110));
	STEP(r, "set_gpus", tg_topology_node_set_gpus(t, id, i % 3 ? 0 : 8,
						      isl));
	STEP(r, "add_label", tg_topology_node_add_label(t, id, "pool",
		 i % 2 ? "odd" : "even"));
	if (i == 11)
		STEP(r, "add_taint", tg_topology_node_add_taint(t, id,
			 "dedicated", "infra", TG_TAINT_NO_SCHEDULE));
	return true;
out:
	return false;
}

/* A resource interned after the nodes exist. */
static bool add_ib(run *r, tg_topology *t)
{
	unsigned ib, i;

	STEP(r, "resource", tg_topology_resource(t, "rdma/ib", &ib));
	for (i = 0; i < 12; i += 4)
		STEP(r, "set rdma/ib", tg_topology_node_set_resource(t, i, ib,
								     4));
	return true;
out:
	return false;
}

static bool set_members(run *r, tg_gang *g, unsigned ps, const char *prefix,
			unsigned n)
{
	char pod[64];
	unsigned i;

	for (i = 0; i < n; i++) {
		snprintf(pod, sizeof(pod), "%s-%u", prefix, i + 1);
		STEP(r, "set_member", tg_gang_podset_set_member(g, ps, i,
								pod));
	}
	return true;
out:
	return false;
}

static bool build_demo(run *r, tg_gang *g)
{
	static const char *const pools[] = { "even", "odd" };
	tg_label_expr e;
	tg_shape sh;
	unsigned ps;

	memset(&sh, 0, sizeof(sh));
	sh.v[TG_RES_CPU] = 8000;
	memset(&e, 0, sizeof(e));
	e.key = "pool";
	e.op = TG_SEL_IN;
	e.values = pools;
	e.nvalues = 2;
	STEP(r, "add_podset", tg_gang_add_podset(g, "w", &sh, 4, &ps));
	if (!set_members(r, g, ps, "pod", 4))
		return false;
	STEP(r, "affinity", tg_gang_podset_add_affinity_expr(g, ps, 0, &e));
	STEP(r, "toleration", tg_gang_podset_add_toleration(g, ps, "other",
		 true, NULL, -1));
	STEP(r, "gather block", tg_gang_set_gather(g, "BlockLayer",
						   TG_GATHER_PREFER));
	STEP(r, "gather spine", tg_gang_set_gather(g, "SpineLayer",
						   TG_GATHER_PREFER));
	return true;
out:
	return false;
}

/* A leader with 2 GPUs on an even node and 3 full-node workers, all in
 * one spine: only evicting running work makes room. */
static bool build_hp(run *r, tg_gang *g)
{
	tg_shape sh;
	unsigned ps;

	memset(&sh, 0, sizeof(sh));
	sh.v[TG_RES_GPU] = 2;
	tg_gang_set_priority(g, 1000);
	STEP(r, "add_podset leader", tg_gang_add_podset(g, "leader", &sh, 1,
							&ps));
	STEP(r, "node_selector", tg_gang_podset_add_node_selector(g, ps,
		 "pool", "even"));
	sh.v[TG_RES_GPU] = 0;
	sh.v[TG_RES_CPU] = 8000;
	STEP(r, "add_podset worker", tg_gang_add_podset(g, "worker", &sh, 3,
							&ps));
	if (!set_members(r, g, ps, "hp-w", 3))
		return false;
	STEP(r, "gather spine", tg_gang_set_gather(g, "SpineLayer",
						   TG_GATHER_MUST));
	return true;
out:
	return false;
}

/* What allocations hold, to see that a failed apply changed nothing. */
typedef struct state {
	unsigned nallocs;
	int64_t freev[12][4];
	uint64_t gpus[12];
} state;

static void take_state(const tg_topology *t, state *st)
{
	unsigned n, r;

	memset(st, 0, sizeof(*st));
	st->nallocs = tg_topology_nallocs(t);
	for (n = 0; n < 12; n++) {
		for (r = 0; r < 4; r++)
			st->freev[n][r] = tg_topology_node_free(t, n, r);
		st->gpus[n] = tg_topology_node_free_gpus(t, n);
	}
}

/* tg_decision_apply() is all or nothing: a failure changes nothing. */
static bool apply_step(run *r, tg_topology *t, const tg_gang *g,
		       const tg_decision *d, const char *what)
{
	state a, b;
	unsigned tries;
	tg_err err;

	for (tries = 0; tries < 2; tries++) {
		take_state(t, &a);
		err = tg_decision_apply(t, g, d);
		if (err == TG_OK)
			return true;
		note(r, what, err);
		take_state(t, &b);
		if (memcmp(&a, &b, sizeof(a)))
			r->partial = true;
		if (!r->retry || err != TG_ENOMEM)
			break;
	}
	return false;
}

/* After a failed step: the model must still be consistent. */
static void check_after_failure(run *r, const tg_topology *t, bool built)
{
	tg_errinfo ei;

	if (!t || !built || !r->nfailed || r->check_failed)
		return;
	paused = true;
	ei.msg[0] = '\0';
	if (tg_topology_check(t, &ei) != TG_OK) {
		r->check_failed = true;
		snprintf(r->check_msg, sizeof(r->check_msg), "%s", ei.msg);
	}
	paused = false;
}

static void scenario(run *r)
{
	tg_topology *t = NULL;
	tg_gang *g1 = NULL, *g2 = NULL;
	tg_decision *d1 = NULL, *d2 = NULL;
	char *pic = NULL;
	tg_errinfo ei;
	unsigned i, before;
	bool built = false;

	STEP_PTR(r, "tg_topology_create", t, tg_topology_create());
	STEP(r, "add_layer spine", tg_topology_add_layer(t, "SpineLayer",
		 "example.com/spine"));
	STEP(r, "add_layer block", tg_topology_add_layer(t, "BlockLayer",
		 NULL));
	for (i = 0; i < 12; i++)
		if (!add_node(r, t, i))
			goto out;
	if (!add_ib(r, t))
		goto out;
	STEP(r, "build", tg_topology_build(t, &ei));
	built = true;
	STEP(r, "check", tg_topology_check(t, &ei));
	if (!add_run(r, t, "low-0", "node-0", 8000, 0, 1) ||
	    !add_run(r, t, "low-1", "node-1", 8000, 0, 1) ||
	    !add_run(r, t, "low-5", "node-5", 8000, 0, 1) ||
	    !add_run(r, t, "gpu-3", "node-3", 1000, 0, 1) ||
	    !add_run(r, t, "gpu-6", "node-6", 2000, 6, 1) ||
	    !add_run(r, t, "gpu-9", "node-9", 2000, 4, 5))
		goto out;
	STEP(r, "remove_alloc gpu-3", tg_topology_remove_alloc(t, "gpu-3"));

	/* a gang that fits: place, apply, draw */
	STEP_PTR(r, "tg_gang_create", g1,
		 tg_gang_create("default/topology-demo-job"));
	if (!build_demo(r, g1))
		goto out;
	STEP(r, "tg_place demo", tg_place(t, g1, &d1, &ei));
	out_decision(r, t, d1);
	before = tg_topology_nallocs(t);
	if (!apply_step(r, t, g1, d1, "tg_decision_apply demo"))
		goto out;
	if (tg_topology_nallocs(t) != before + 4)
		note(r, "apply demo: allocation count", TG_ESTATE);
	STEP_PTR(r, "tg_draw demo", pic, tg_draw(t, d1));
	out_add(r, pic);
	tg_free(pic);
	pic = NULL;

	/* a gang that preempts: place, apply, draw */
	STEP_PTR(r, "tg_gang_create hp", g2, tg_gang_create("default/hp"));
	if (!build_hp(r, g2))
		goto out;
	STEP(r, "tg_place hp", tg_place(t, g2, &d2, &ei));
	out_decision(r, t, d2);
	before = tg_topology_nallocs(t);
	if (!apply_step(r, t, g2, d2, "tg_decision_apply hp"))
		goto out;
	if (tg_topology_nallocs(t) != before + 4 - tg_decision_nvictims(d2))
		note(r, "apply hp: allocation count", TG_ESTATE);
	STEP_PTR(r, "tg_draw hp", pic, tg_draw(t, d2));
	out_add(r, pic);
	tg_free(pic);
	pic = NULL;

	/* the same gang again: its own reservations are free to it, and
	 * applying swaps them for running allocations */
	tg_decision_free(d2);
	d2 = NULL;
	STEP(r, "tg_place hp again", tg_place(t, g2, &d2, &ei));
	out_decision(r, t, d2);
	before = tg_topology_nallocs(t);
	if (!apply_step(r, t, g2, d2, "tg_decision_apply hp again"))
		goto out;
	if (tg_topology_nallocs(t) != before)
		note(r, "apply hp again: allocation count", TG_ESTATE);

	/* the gang's class in place (select/topogang's candidacy), which
	 * builds the gang index on first use */
	STEP(r, "tg_topology_set_gang_preemption hp",
	     tg_topology_set_gang_preemption(t, "default/hp", 5, true));
	STEP(r, "check after set_gang_preemption", tg_topology_check(t, &ei));

	/* work leaves; the fabric again */
	if (tg_topology_remove_gang(t, "default/hp") != 4)
		note(r, "remove_gang", TG_ESTATE);
	STEP(r, "check at the end", tg_topology_check(t, &ei));
	STEP_PTR(r, "tg_draw end", pic, tg_draw(t, NULL));
	out_add(r, pic);
	tg_free(pic);
	pic = NULL;
out:
	check_after_failure(r, t, built);
	tg_free(pic);
	tg_decision_free(d1);
	tg_decision_free(d2);
	tg_gang_destroy(g1);
	tg_gang_destroy(g2);
	tg_topology_destroy(t);
}

/* ---- the loops ---- */

static run ref;

static void reset(long at, bool from_on)
{
	fail_at = at;
	fail_on = from_on;
	paused = false;
	ncalls = 0;
	live = 0;
	injected = false;
}

static void torture(bool from_on)
{
	const char *mode = from_on ? "from N on" : "only N";
	static run r;
	long n, nruns = 0, bad_err = 0, bad_leak = 0, bad_out = 0;
	long bad_check = 0, no_fail = 0, absorbed = 0, bad_partial = 0;

	for (n = 1;; n++) {
		reset(n, from_on);
		memset(&r, 0, sizeof(r));
		r.retry = !from_on;
		scenario(&r);
		if (!injected)
			break;	/* the run needed fewer than n */
		nruns++;
		if (r.unexpected && !bad_err++)
			diag("%s, N=%ld: %s failed with %s", mode, n, r.step,
			     tg_strerror(r.err));
		if (!r.nfailed)
			absorbed++;
		if (from_on && !r.nfailed && !no_fail++)
			diag("%s, N=%ld: allocation %ld failed, no step said "
			     "so", mode, n, n);
		if (live != 0 && !bad_leak++)
			diag("%s, N=%ld: %ld blocks leaked (first failing "
			     "step: %s)", mode, n, live,
			     r.step ? r.step : "none");
		if (r.partial && !bad_partial++)
			diag("%s, N=%ld: %s failed and left part of the "
			     "decision applied", mode, n, r.step);
		if (r.check_failed && !bad_check++)
			diag("%s, N=%ld: after %s failed, check: %s", mode, n,
			     r.step, r.check_msg);
		if (!from_on && strcmp(r.out, ref.out) && !bad_out++) {
			size_t i = 0;

			while (r.out[i] && r.out[i] == ref.out[i])
				i++;
			diag("%s, N=%ld: after %s failed once, the output "
			     "differs at byte %zu:", mode, n,
			     r.step ? r.step : "(no step)", i);
			diag("got:  ...%.160s", r.out + (i > 40 ? i - 40 : 0));
			diag("want: ...%.160s",
			     ref.out + (i > 40 ? i - 40 : 0));
		}
		if (n > 1000000)
			break;
	}
	diag("%s: %ld runs with a failure, then one of %ld allocations ran "
	     "clean; %ld runs absorbed their failure", mode, nruns, n - 1,
	     absorbed);
	ok(nruns > 100, "%s: the scenario makes more than 100 allocations "
	   "(%ld)", mode, nruns);
	ok(!bad_err, "%s: every failing call said TG_ENOMEM (or NULL) "
	   "(%ld runs said something else)", mode, bad_err);
	if (from_on)
		ok(!no_fail, "%s: no failure went unreported (%ld runs)", mode,
		   no_fail);
	ok(!bad_leak, "%s: nothing leaked after destroying everything (%ld "
	   "runs leaked)", mode, bad_leak);
	ok(!bad_check, "%s: tg_topology_check() passes after a failed call "
	   "(%ld runs)", mode, bad_check);
	ok(!bad_partial, "%s: a failed tg_decision_apply() changes nothing "
	   "(%ld runs)", mode, bad_partial);
	if (!from_on)
		ok(!bad_out, "%s: calling a failed step again gives the output "
		   "of a run without failures (%ld runs differ)", mode,
		   bad_out);
}

int main(void)
{
	tg_set_allocator(t_malloc, t_realloc, t_free);

	/* the reference: no failure */
	reset(0, false);
	ref.retry = false;
	scenario(&ref);
	is_int(ref.nfailed, 0, "reference run: every step works");
	if (ref.nfailed)
		diag("step %s: %s", ref.step, tg_strerror(ref.err));
	is_int(live, 0, "reference run: nothing leaked");
	like(ref.out, "default/topology-demo-job placed",
	     "reference run: the demo gang is placed");
	like(ref.out, "default/hp preempting",
	     "reference run: the high-priority gang preempts");
	like(ref.out, "default/hp placed",
	     "reference run: placed again over its own reservations");
	diag("reference run: %ld allocations", ncalls);

	torture(true);
	torture(false);

	tg_set_allocator(NULL, NULL, NULL);
	{
		tg_topology *t = tg_topology_create();

		ok(t != NULL, "the default allocator is back");
		tg_topology_destroy(t);
	}
	return done_testing();
}
