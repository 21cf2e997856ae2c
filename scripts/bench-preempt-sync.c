/*
 * scripts/bench-preempt-sync.c - what select/topogang's model upkeep
 * costs per job_test with preemption on (issue 16), built by
 * scripts/bench-preempt-sync against two versions of the core.
 *
 * The cluster of scripts/bench-slurm-emulator: 4,096 nodes of 64 CPUs, 128
 * leaf switches of 32 nodes under 8 spines.  N running one-node jobs (8
 * CPUs each, spread over the nodes), every one a preemption candidate, as
 * when a high-priority partition's job is tested over a low one.  One
 * call is what the plugin does for one job_test with that candidate list:
 *
 *   readd    the plugin before issue 16 (select_topogang.c at main):
 *            the candidates' ids sorted (_cand_ids), each looked up in
 *            the model's sorted job array (_mjob_find), its gang removed
 *            (tg_topology_remove_gang) and its allocation added back
 *            preemptible (tgj_add_job), then the placement;
 *   same     the plugin now, the same list as the last call (jobs of one
 *            partition and QOS): one pass comparing it with the last
 *            call's (_model_cands_same), then the placement;
 *   changed  the plugin now, a list that changed: each call one running
 *            job ends and one begins (the core's gang removed and
 *            added, as the job_fini / job_begin hooks make the next sync
 *            do), every candidate looked up in a hash of the model's
 *            jobs, the new one made preemptible in place
 *            (tg_topology_set_gang_preemption), then the placement.
 *
 * The placement is a 32-node gang of 16 CPUs a member preferring one
 * leaf switch (it fits without preempting: the common case, where
 * slurmctld hands candidates to every test), or with --preempting 32
 * whole nodes that must share a leaf (every leaf is busy: it preempts).
 * Prints one line per mode: the median and the 10th and 90th percentile
 * of the call's wall time (CLOCK_MONOTONIC), and a hash of the decisions
 * (the same in every mode and both builds, or the modes decide
 * differently).  "same" and "changed" need tg_topology_set_gang_preemption
 * (not in a core before issue 16: then they are skipped).
 *
 *   bench-preempt-sync N [CALLS] [--preempting] [--modes readd,same,...]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topogang/topogang.h"

/* declared here too: a core before issue 16 has neither the declaration
 * nor the function (weak: NULL there) */
extern tg_err tg_topology_set_gang_preemption(tg_topology *t,
					      const char *gang,
					      int64_t priority,
					      bool preemptible)
	__attribute__((weak));

#define NODES	4096
#define LEAF	32
#define SPINE	16		/* leaves a spine */
#define NODE_CPU 64
#define JOB_CPU	8

typedef struct job {
	uint32_t id;
	unsigned node;
	bool cand;
} job;

typedef struct bench {
	tg_topology *t;
	job *jobs;		/* the model's jobs, by id (readd: sorted) */
	size_t njobs;
	uint32_t *slots;	/* changed: id -> index + 1 */
	size_t nslots;
	uint32_t *list, *prev;	/* candidate ids, list order */
	size_t nlist, nprev;
	uint32_t next_id;
	bool preempting;
} bench;

static void die(const char *what)
{
	fprintf(stderr, "bench-preempt-sync: %s\n", what);
	exit(2);
}

static tg_topology *fabric(void)
{
	tg_topology *t = tg_topology_create();
	char name[32], sp[32], lf[32];
	const char *path[2] = { sp, lf };
	unsigned i;

	if (!t || tg_topology_add_layer(t, "spine", NULL) ||
	    tg_topology_add_layer(t, "leaf", NULL))
		die("fabric");
	for (i = 0; i < NODES; i++) {
		snprintf(name, sizeof(name), "node-%u", i);
		snprintf(sp, sizeof(sp), "spine-%u", i / LEAF / SPINE);
		snprintf(lf, sizeof(lf), "leaf-%u", i / LEAF);
		if (tg_topology_add_node(t, name, path, NULL) ||
		    tg_topology_node_set_resource(t, i, TG_RES_CPU,
						  NODE_CPU * 1000))
			die("fabric node");
	}
	if (tg_topology_build(t, NULL))
		die("build");
	return t;
}

/* The plugin's tgj_add_job for a one-node job. */
static void add_job(tg_topology *t, const job *j)
{
	char pod[64], gang[32];
	tg_alloc_spec a;
	tg_shape sh;

	memset(&a, 0, sizeof(a));
	memset(&sh, 0, sizeof(sh));
	sh.v[TG_RES_CPU] = JOB_CPU * 1000;
	sh.v[TG_RES_PODS] = 1;
	snprintf(gang, sizeof(gang), "JobId=%u", j->id);
	snprintf(pod, sizeof(pod), "JobId=%u/node-%u", j->id, j->node);
	a.pod = pod;
	a.gang = gang;
	a.node = j->node;
	a.shape = &sh;
	a.priority = 1;
	a.preemptible = j->cand;
	if (tg_topology_add_alloc(t, &a))
		die("add_alloc");
}

static void remove_job(tg_topology *t, uint32_t id)
{
	char gang[32];

	snprintf(gang, sizeof(gang), "JobId=%u", id);
	tg_topology_remove_gang(t, gang);
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static int job_cmp(const void *a, const void *b)
{
	return u32_cmp(&((const job *)a)->id, &((const job *)b)->id);
}

static size_t home(const bench *b, uint32_t id)
{
	return (size_t)(id * 2654435761u) & (b->nslots - 1);
}

static job *hfind(const bench *b, uint32_t id)
{
	size_t j = home(b, id);

	while (b->slots[j]) {
		if (b->jobs[b->slots[j] - 1].id == id)
			return &b->jobs[b->slots[j] - 1];
		j = (j + 1) & (b->nslots - 1);
	}
	return NULL;
}

static void rehash(bench *b)
{
	size_t i, j;

	memset(b->slots, 0, b->nslots * sizeof(uint32_t));
	for (i = 0; i < b->njobs; i++) {
		for (j = home(b, b->jobs[i].id); b->slots[j];
		     j = (j + 1) & (b->nslots - 1))
			;
		b->slots[j] = (uint32_t)i + 1;
	}
}

static void setup(bench *b, size_t n, bool cand)
{
	size_t i;

	memset(b, 0, sizeof(*b));
	b->t = fabric();
	b->jobs = calloc(n + 1, sizeof(job));
	b->list = calloc(n + 1, sizeof(uint32_t));
	b->prev = calloc(n + 1, sizeof(uint32_t));
	for (b->nslots = 512; b->nslots < 2 * (n + 1); b->nslots *= 2)
		;
	b->slots = calloc(b->nslots, sizeof(uint32_t));
	if (!b->jobs || !b->list || !b->prev || !b->slots)
		die("out of memory");
	for (i = 0; i < n; i++) {
		b->jobs[i].id = 1000 + (uint32_t)i;
		/* spread: consecutive jobs on different leaves */
		b->jobs[i].node = (unsigned)((i * 37) % NODES);
		b->jobs[i].cand = cand;
		add_job(b->t, &b->jobs[i]);
		/* slurmctld lists candidates by priority: not by id */
		b->list[n - 1 - i] = b->jobs[i].id;
	}
	b->njobs = b->nlist = n;
	b->next_id = 1000 + (uint32_t)n;
	rehash(b);
	memcpy(b->prev, b->list, n * sizeof(uint32_t));
	b->nprev = n;
}

static tg_gang *preemptor(bool preempting)
{
	tg_gang *g = tg_gang_create("JobId=1");
	char pod[32];
	tg_shape sh;
	unsigned ps, i;

	memset(&sh, 0, sizeof(sh));
	sh.v[TG_RES_CPU] = (preempting ? NODE_CPU : 16) * 1000;
	sh.v[TG_RES_PODS] = 1;
	if (!g || tg_gang_add_podset(g, "node", &sh, 32, &ps) ||
	    tg_gang_podset_set_max_per_node(g, ps, 1))
		die("gang");
	for (i = 0; i < 32; i++) {
		snprintf(pod, sizeof(pod), "JobId=1/%u", i);
		tg_gang_podset_set_member(g, ps, i, pod);
	}
	tg_gang_set_priority(g, 1 << 20);
	tg_gang_set_gather(g, "leaf", preempting ? TG_GATHER_MUST :
			   TG_GATHER_PREFER);
	return g;
}

static uint64_t place(bench *b, const tg_gang *g)
{
	tg_decision *d = NULL;
	uint64_t h = 1469598103934665603ull;
	unsigned i;

	if (tg_place(b->t, g, &d, NULL) || !d)
		die("tg_place");
	h = (h ^ (uint64_t)tg_decision_status(d)) * 1099511628211ull;
	for (i = 0; i < tg_decision_nplacements(d); i++)
		h = (h ^ tg_decision_placement(d, i)->node) *
		    1099511628211ull;
	for (i = 0; i < tg_decision_nvictims(d); i++)
		h = (h ^ tg_decision_victim(d, i)->node) * 1099511628211ull;
	tg_decision_free(d);
	return h;
}

/* The plugin before issue 16: every candidate re-added. */
static void call_readd(bench *b)
{
	uint32_t *ids = malloc((b->nlist + 1) * sizeof(uint32_t));
	size_t i;

	if (!ids)
		die("out of memory");
	memcpy(ids, b->list, b->nlist * sizeof(uint32_t));
	qsort(ids, b->nlist, sizeof(uint32_t), u32_cmp);
	for (i = 0; i < b->nlist; i++) {
		job key = { .id = ids[i] }, *j;

		j = bsearch(&key, b->jobs, b->njobs, sizeof(job), job_cmp);
		if (!j)
			continue;
		remove_job(b->t, j->id);
		j->cand = true;
		add_job(b->t, j);
	}
	free(ids);
}

/* The plugin now, when the list is the last call's. */
static bool call_same(bench *b)
{
	size_t i;

	if (b->nlist != b->nprev)
		return false;
	for (i = 0; i < b->nlist; i++)
		if (b->list[i] != b->prev[i])
			return false;
	return true;
}

/* The plugin now, a changed list: the oldest job ends, a new one
 * begins (not a candidate until the diff), the diff by lookups. */
static void call_changed(bench *b)
{
	job *j = &b->jobs[0], nj;
	size_t i;
	char gang[32];

	/* the hooks: one ends (its place taken by the last), one begins */
	remove_job(b->t, j->id);
	nj.id = b->next_id++;
	nj.node = j->node;
	nj.cand = false;
	*j = nj;
	add_job(b->t, j);
	rehash(b);	/* the plugin shifts one probe run; this costs more */
	memmove(&b->list[1], &b->list[0], (b->nlist - 1) * sizeof(uint32_t));
	b->list[0] = nj.id;	/* the youngest: first to go */
	if (call_same(b))
		die("the list did not change");
	for (i = 0; i < b->nlist; i++) {
		job *c = hfind(b, b->list[i]);

		if (!c || c->cand)
			continue;
		snprintf(gang, sizeof(gang), "JobId=%u", c->id);
		if (tg_topology_set_gang_preemption(b->t, gang, 1, true))
			die("set_gang_preemption");
		c->cand = true;
	}
	/* former candidates not in the list: none here (the ended one
	 * left the model), found by one lookup each */
	for (i = 0; i < b->nprev; i++)
		(void)hfind(b, b->prev[i]);
	memcpy(b->prev, b->list, b->nlist * sizeof(uint32_t));
	b->nprev = b->nlist;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void run(const char *mode, size_t n, unsigned calls, bool preempting)
{
	bench b;
	tg_gang *g = preemptor(preempting);
	double *us = calloc(calls, sizeof(double));
	uint64_t hash = 0, h;
	unsigned c;

	if (!us)
		die("out of memory");
	/* readd starts from non-candidates as the plugin's model had
	 * them before the first call; the others from the list's state */
	setup(&b, n, strcmp(mode, "readd") != 0);
	qsort(b.jobs, b.njobs, sizeof(job), job_cmp);
	rehash(&b);
	for (c = 0; c < calls + 1; c++) {
		double t0 = now_us();

		if (!strcmp(mode, "readd"))
			call_readd(&b);
		else if (!strcmp(mode, "same"))
			(void)call_same(&b);
		else
			call_changed(&b);
		h = place(&b, g);
		if (c)		/* the first call warms the slot cache */
			us[c - 1] = now_us() - t0;
		if (c == 1)
			hash = h;
	}
	qsort(us, calls, sizeof(double), dbl_cmp);
	printf("%-8s candidates=%zu nodes=%u calls=%u %s median_us=%.1f "
	       "p10_us=%.1f p90_us=%.1f decision=%016" PRIx64 "\n", mode, n,
	       NODES, calls, preempting ? "preempting" : "fits", us[calls / 2],
	       us[calls / 10], us[calls * 9 / 10], hash);
	fflush(stdout);
	free(us);
	free(b.jobs);
	free(b.list);
	free(b.prev);
	free(b.slots);
	tg_gang_destroy(g);
	tg_topology_destroy(b.t);
}

int main(int argc, char **argv)
{
	const char *modes = "readd,same,changed";
	unsigned calls = 21;
	bool preempting = false;
	size_t n = 0;
	const char *m, *e;
	char mode[16];
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--preempting"))
			preempting = true;
		else if (!strcmp(argv[i], "--modes") && i + 1 < argc)
			modes = argv[++i];
		else if (!n)
			n = strtoul(argv[i], NULL, 10);
		else
			calls = (unsigned)strtoul(argv[i], NULL, 10);
	}
	if (!n || !calls)
		die("usage: bench-preempt-sync N [CALLS] [--preempting] "
		    "[--modes readd,same,changed]");
	for (m = modes; *m; m = *e ? e + 1 : e) {
		e = m + strcspn(m, ",");
		snprintf(mode, sizeof(mode), "%.*s", (int)(e - m), m);
		if (strcmp(mode, "readd") && strcmp(mode, "same") &&
		    strcmp(mode, "changed"))
			die("modes: readd, same, changed");
		if (strcmp(mode, "readd") && !tg_topology_set_gang_preemption) {
			printf("%-8s candidates=%zu skipped: this core has no "
			       "tg_topology_set_gang_preemption\n", mode, n);
			continue;
		}
		run(mode, n, calls, preempting);
	}
	return 0;
}
