/*
 * tests/unit/test_reentrant.c - two threads, two topologies, at once.
 *
 * The core keeps no mutable file-level state (issue 13): every sort takes
 * its context (tgi_sort()), so two threads that each work on their own
 * topology cannot disturb each other.  Each thread here builds its own
 * topology from scratch (the tree-order sort), records running work,
 * places a gang of two pod sets (the pack-order sort of candidates, the
 * fill's sort) and a high-priority gang that preempts (the victim sorts),
 * ITERATIONS times, and every round must give the decisions a single
 * thread gave before the threads started.  The two topologies differ in
 * layers, names and size, so a comparator that reads the other thread's
 * topology gives another order (or reads past its arrays).
 *
 * With file-level sort state (the code before issue 13) this fails: the
 * rounds differ or the process crashes.  `make check-tsan` in tests/
 * also builds it with ThreadSanitizer, which names the race itself.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "topogang/topogang.h"

#define ITERATIONS	150
#define SIG_MAX		(64u << 10)

typedef struct shape_spec {
	const char *name;	/* "A" or "B" */
	unsigned nlayers;
	const char *layer[3];
	unsigned fan[3];	/* children per domain, per layer */
	unsigned per_leaf;	/* nodes per lowest domain */
	const char *must;	/* the preemptor's required layer */
} shape_spec;

static const shape_spec specs[2] = {
	{ "A", 2, { "spine", "block", NULL }, { 6, 5, 0 }, 6, "spine" },
	{ "B", 3, { "zone", "rack", "shelf" }, { 3, 4, 3 }, 4, "rack" },
};

typedef struct job {
	const shape_spec *sp;
	char ref[SIG_MAX];	/* the single-threaded signature */
	unsigned bad;		/* rounds that differed */
	char first_bad[SIG_MAX];
	tg_err err;
} job;

/* A small LCG: the node insertion order, the same in every round. */
static uint32_t lcg(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static tg_topology *build(const shape_spec *sp, unsigned *nnodes)
{
	tg_topology *t = tg_topology_create();
	unsigned nleaf = 1, l, i, n, k;
	char **names, buf[3][32], name[96];
	uint32_t seed = 7, *perm;

	for (l = 0; l < sp->nlayers; l++) {
		tg_topology_add_layer(t, sp->layer[l], NULL);
		nleaf *= sp->fan[l];
	}
	n = nleaf * sp->per_leaf;
	perm = malloc(n * sizeof(*perm));
	names = calloc(n, sizeof(*names));
	for (i = 0; i < n; i++)
		perm[i] = i;
	for (i = n; i > 1; i--) {	/* shuffled: the sort has work */
		uint32_t j = lcg(&seed) % i, x = perm[i - 1];

		perm[i - 1] = perm[j];
		perm[j] = x;
	}
	for (k = 0; k < n; k++) {
		unsigned id = perm[k], leaf = id / sp->per_leaf, rest = leaf;
		const char *path[3];
		tg_node_id nid;

		for (l = sp->nlayers; l-- > 0;) {
			snprintf(buf[l], sizeof(buf[l]), "%s%s-%u", sp->name,
				 sp->layer[l], rest % sp->fan[l]);
			rest /= sp->fan[l];
			path[l] = buf[l];
		}
		snprintf(name, sizeof(name), "%s-node-%u", sp->name, id);
		tg_topology_add_node(t, name, path, &nid);
		tg_topology_node_set_resource(t, nid, TG_RES_CPU, 4000);
	}
	free(perm);
	free(names);
	*nnodes = n;
	return t;
}

/* Running work: pairs of nodes hold a low-priority gang of two pods, of
 * priorities 1..3; every fifth node is left free. */
static tg_err run_work(tg_topology *t, const shape_spec *sp, unsigned n)
{
	unsigned i;
	tg_err err = TG_OK;

	for (i = 0; i < n && !err; i++) {
		tg_alloc_spec a;
		tg_shape sh;
		char pod[64], gang[64], node[96];

		if (i % 5 == 4)
			continue;
		memset(&a, 0, sizeof(a));
		memset(&sh, 0, sizeof(sh));
		sh.v[TG_RES_CPU] = (i % 3 + 1) * 1000;
		snprintf(node, sizeof(node), "%s-node-%u", sp->name, i);
		snprintf(pod, sizeof(pod), "low-%u", i);
		snprintf(gang, sizeof(gang), "lowgang-%u", i / 2);
		if ((err = tg_topology_node_find(t, node, &a.node)))
			break;
		a.pod = pod;
		a.gang = gang;
		a.shape = &sh;
		a.priority = i % 3 + 1;
		a.preemptible = true;
		err = tg_topology_add_alloc(t, &a);
	}
	return err;
}

static tg_gang *mk_gang(const char *name, int64_t prio, const char *must,
			unsigned n1, int64_t cpu1, unsigned n2, int64_t cpu2)
{
	tg_gang *g = tg_gang_create(name);
	tg_shape sh;
	unsigned i, ps;
	char pod[64];

	memset(&sh, 0, sizeof(sh));
	sh.v[TG_RES_CPU] = cpu1;
	tg_gang_add_podset(g, "w", &sh, n1, &ps);
	for (i = 0; i < n1; i++) {
		snprintf(pod, sizeof(pod), "%s-w-%u", name, i);
		tg_gang_podset_set_member(g, ps, i, pod);
	}
	if (n2) {
		sh.v[TG_RES_CPU] = cpu2;
		tg_gang_add_podset(g, "ps", &sh, n2, &ps);
		for (i = 0; i < n2; i++) {
			snprintf(pod, sizeof(pod), "%s-ps-%u", name, i);
			tg_gang_podset_set_member(g, ps, i, pod);
		}
	}
	tg_gang_set_priority(g, prio);
	tg_gang_set_can_preempt(g, true);
	if (must)
		tg_gang_set_gather(g, must, TG_GATHER_MUST);
	return g;
}

static void sig_decision(char *sig, size_t cap, const tg_topology *t,
			 const tg_decision *d)
{
	size_t len = strlen(sig);
	unsigned i;

#define ADD(...) do {							\
	if (len < cap)							\
		len += (size_t)snprintf(sig + len, cap - len, __VA_ARGS__); \
} while (0)
	ADD("[%s %d %s |", tg_decision_gang(d), (int)tg_decision_status(d),
	    tg_decision_domain(d) ? tg_decision_domain(d) : "-");
	for (i = 0; i < tg_decision_nplacements(d); i++) {
		const tg_placement *p = tg_decision_placement(d, i);

		ADD(" %s@%s", p->pod, tg_topology_node_name(t, p->node));
	}
	ADD(" | victims");
	for (i = 0; i < tg_decision_nvictims(d); i++)
		ADD(" %s", tg_decision_victim(d, i)->pod);
	ADD(" | %s]\n", tg_decision_message(d));
#undef ADD
}

/* One round: build, record work, place two gangs, check. */
static tg_err round_sig(const shape_spec *sp, char *sig, size_t cap)
{
	tg_topology *t;
	tg_gang *g[2];
	unsigned n, i;
	tg_err err;

	sig[0] = '\0';
	t = build(sp, &n);
	if ((err = tg_topology_build(t, NULL)) || (err = run_work(t, sp, n)))
		goto out;
	/* two pod sets over the block/rack level: candidates in pack order */
	g[0] = mk_gang("two", 5, NULL, 6, 2000, 3, 1000);
	/* needs a whole spine/rack emptied of low-priority work */
	g[1] = mk_gang("big", 10, sp->must, sp->per_leaf * 3, 4000, 0, 0);
	for (i = 0; i < 2 && !err; i++) {
		tg_decision *d = NULL;

		err = tg_place(t, g[i], &d, NULL);
		if (!err)
			sig_decision(sig, cap, t, d);
		tg_decision_free(d);
	}
	if (!err)
		err = tg_topology_check(t, NULL);
	tg_gang_destroy(g[0]);
	tg_gang_destroy(g[1]);
out:
	tg_topology_destroy(t);
	return err;
}

static void *worker(void *arg)
{
	job *j = arg;
	char *sig = malloc(SIG_MAX);
	unsigned r;

	for (r = 0; r < ITERATIONS && sig; r++) {
		tg_err err = round_sig(j->sp, sig, SIG_MAX);

		if (err && !j->err)
			j->err = err;
		if (!err && strcmp(sig, j->ref)) {
			if (!j->bad++)
				memcpy(j->first_bad, sig, SIG_MAX);
		}
	}
	free(sig);
	return NULL;
}

int main(void)
{
	static job jobs[2];
	pthread_t th[2];
	unsigned i;

	for (i = 0; i < 2; i++) {
		jobs[i].sp = &specs[i];
		is_int(round_sig(&specs[i], jobs[i].ref, SIG_MAX), TG_OK,
		       "topology %s: a single-threaded round works",
		       specs[i].name);
		like(jobs[i].ref, "[big 1 ",
		     "topology %s: the reference round preempts (status 1)",
		     specs[i].name);
		like(jobs[i].ref, "[two 0 ",
		     "topology %s: the reference round places the two-set "
		     "gang", specs[i].name);
	}
	ok(strcmp(jobs[0].ref, jobs[1].ref) != 0,
	   "the two topologies give different decisions");
	for (i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, worker, &jobs[i])) {
			diag("pthread_create failed");
			return 1;
		}
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < 2; i++) {
		is_int(jobs[i].err, TG_OK, "topology %s: every round of %d "
		       "in a thread works", specs[i].name, ITERATIONS);
		if (!ok(jobs[i].bad == 0, "topology %s: %d rounds beside "
			"the other thread equal the single-threaded one "
			"(%u differ)", specs[i].name, ITERATIONS,
			jobs[i].bad))
			printf("# first differing round:\n# %.2000s\n"
			       "# expected:\n# %.2000s\n",
			       jobs[i].first_bad, jobs[i].ref);
	}
	return done_testing();
}
