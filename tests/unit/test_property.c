/*
 * tests/unit/test_property.c - property tests of placement on random
 * clusters.
 *
 * Every case draws a cluster (0-3 layers, label values reused under
 * different parents, labels sometimes missing, nodes of random sizes with
 * GPUs in NVLink islands, cordons, taints, labels), random running work
 * (priorities, gangs, preemptible or not, some reservations, sometimes
 * over-committing a node) and a random gang (1-3 pod sets, a priority,
 * MUST/PREFER on random layers, slices, max per node, node selectors),
 * places the gang and checks:
 *
 *  (a) never over-commit: what the gang takes fits what was free, GPU
 *      sets are disjoint, and after tg_decision_apply() no resource that
 *      was >= 0 is below zero and tg_topology_check() passes;
 *  (b) all or nothing: placed means one placement per member, every
 *      member once, ranks 0..n-1 in pod-set order; unschedulable means
 *      no placement and no victim, and tg_place()/tg_decision_apply()
 *      leave the topology as it was;
 *  (c) constraints hold: every MUST layer is one domain, every slice of
 *      `size` consecutive members of a pod set is inside one domain of
 *      its layer, node selectors, max per node, cordons and taints;
 *  (d) determinism: the same cluster built from nodes added in another
 *      order, and a second tg_place() on the same one, give the same
 *      placements (by node name), GPUs, domain and message;
 *  (e) completeness: on clusters of at most 6 nodes, a gang of one pod
 *      set without constraints is placed whenever a brute-force search
 *      finds nodes that can hold it (the cluster level is always
 *      allowed then), and only then;
 *  (f) preemption: victims are whole gangs of lower priority, all of
 *      them preemptible, or lower-priority reservations on nodes the
 *      gang uses; a gang that may not preempt never does;
 *  (h), (i) the fill, on fabrics of its own (see fill_case()): fewest
 *      children at every layer, and the largest free nodes kept whole
 *      (brute force);
 *  (j) the fill's span on small 3-layer fabrics (see lex_case()): the
 *      fewest domains at each layer in turn, then nodes, equal to a
 *      brute-force lexicographic least over node subsets.
 *
 * (a) to (d) hold for preempting decisions too, counting what the
 * victims give back.
 *
 * The generator is a fixed-seed xorshift64*; the seed is printed, and
 * TG_SEED=<n> replays another one (TG_CASES=<n> changes the number of
 * cases).  A failure names its case so that it can be studied alone.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "topogang/topogang.h"

#define DEFAULT_SEED	20240611u
#define DEFAULT_CASES	300
#define MAXN		20	/* nodes per cluster */
#define MAXA		24	/* running allocations */
#define MAXPS		3
#define MAXM		48	/* members of a gang */
#define MAXDIAG		3	/* diagnostics printed per property */

/* ---- the generator ---- */

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ull;
}

/* 0..n-1 */
static unsigned rn(unsigned n)
{
	return n ? (unsigned)(rnd() % n) : 0;
}

static bool chance(unsigned one_in)
{
	return rn(one_in) == 0;
}

/* ---- a cluster, as data (so that it can be built twice) ---- */

typedef struct cnode {
	char name[16];
	char val[3][12];
	bool has[3];
	int64_t cpu, mem, pods, ib;
	unsigned ngpus;
	uint8_t isl[8];
	bool isl_null;
	const char *pool, *tier;	/* labels, NULL = none */
	bool cordon;
	int taint;			/* effect, -1 = none */
} cnode;

typedef struct crun {
	char pod[16];
	char gang[16];		/* "" = the pod is its own gang */
	unsigned node;
	tg_shape sh;
	int64_t prio;
	bool preemptible, nominated;
} crun;

typedef struct cluster {
	unsigned nlayers;
	char lname[3][24], lkey[3][40];
	bool keyed[3];
	bool use_ib;
	unsigned nnodes;
	cnode n[MAXN];
	unsigned nrun;
	crun run[MAXA];
} cluster;

typedef struct cpodset {
	char name[8];
	tg_shape sh;
	unsigned count, max_per_node;
	const char *sel_key, *sel_val;
	bool named;
} cpodset;

typedef struct creq {
	char layer[40];
	unsigned a;	/* gather: tg_gather; slice: size */
} creq;

typedef struct cgang {
	char name[24];
	int64_t prio;
	bool no_preempt;
	unsigned nps;
	cpodset ps[MAXPS];
	unsigned ngather, nslice;
	creq gather[3], slice[2];
	bool bad_request;	/* unknown layer or slices that cannot be */
} cgang;

static const char *const layer_names[3][2] = {
	{ "zone", "SpineLayer" },
	{ "block", "BlockLayer" },
	{ "rack", "NVLinkDomain" },
};

static void gen_cluster(cluster *c, unsigned caseno, bool plain,
			bool crowded)
{
	unsigned i, l, fan[3];
	bool ib_resource = chance(3);

	memset(c, 0, sizeof(*c));
	c->nlayers = chance(10) ? 0 : 1 + rn(3);
	for (l = 0; l < c->nlayers; l++) {
		snprintf(c->lname[l], sizeof(c->lname[l]), "%s",
			 layer_names[l][rn(2)]);
		c->keyed[l] = chance(2);
		snprintf(c->lkey[l], sizeof(c->lkey[l]),
			 "topology.example.com/%s", c->lname[l]);
		fan[l] = 1 + rn(3);
	}
	c->use_ib = ib_resource;
	c->nnodes = plain || chance(2) ? 1 + rn(6) : 1 + rn(MAXN);
	for (i = 0; i < c->nnodes; i++) {
		cnode *n = &c->n[i];
		static const unsigned gpus[] = { 0, 0, 2, 4, 8 };
		unsigned g;

		/* names that sort differently by bytes and naturally */
		snprintf(n->name, sizeof(n->name), chance(2) ? "node-%u" :
			 "n%02u", i + (caseno % 3) * 7);
		for (l = 0; l < c->nlayers; l++) {
			/* values repeat under different parents */
			snprintf(n->val[l], sizeof(n->val[l]), "%c%u",
				 "abc"[l], rn(fan[l]));
			n->has[l] = !chance(16);
		}
		n->cpu = chance(10) ? 0 : (int64_t)(1 + rn(4)) * 4000;
		n->mem = chance(10) ? 0 : (int64_t)(1 + rn(4)) << 34;
		n->pods = 2 + rn(10);
		n->ib = c->use_ib ? rn(3) : 0;
		n->ngpus = gpus[rn(5)];
		n->isl_null = chance(3);
		for (g = 0; g < n->ngpus; g++)
			n->isl[g] = (uint8_t)(chance(2) ? g / 2 : g * 2 /
					      n->ngpus);
		n->pool = chance(3) ? NULL : chance(2) ? "a" : "b";
		n->tier = chance(3) ? NULL : chance(2) ? "x" : "y";
		n->cordon = chance(12);
		n->taint = chance(10) ? (int)rn(3) : -1;
	}
	c->nrun = crowded ? c->nnodes + rn(c->nnodes + 4) : rn(c->nnodes + 4);
	if (c->nrun > MAXA)
		c->nrun = MAXA;
	for (i = 0; i < c->nrun; i++) {
		crun *r = &c->run[i];

		snprintf(r->pod, sizeof(r->pod), "run-%u", i);
		r->node = rn(c->nnodes);
		r->sh.v[TG_RES_CPU] = (int64_t)(crowded ? 1 + rn(4) : rn(3)) *
				      2000;
		r->sh.v[TG_RES_MEMORY] = (int64_t)rn(3) << 33;
		r->sh.v[TG_RES_GPU] = rn(3);
		if (c->use_ib)
			r->sh.v[4] = rn(2);
		/* running gangs of a few pods, some of them reservations;
		 * (e) needs a cluster where nothing can be preempted */
		if (chance(2))
			snprintf(r->gang, sizeof(r->gang), "rg-%u",
				 rn(crowded ? 8 : 4));
		r->prio = crowded ? rn(2) : rn(3);
		r->preemptible = !chance(crowded ? 12 : 3);
		r->nominated = !plain && chance(8);
	}
}

/* A layer reference: a layer by name or key, or the node level. */
static void pick_layer(const cluster *c, char *out, size_t size,
		       unsigned *level)
{
	unsigned l = rn(c->nlayers + 1);

	*level = l;
	if (l == c->nlayers)
		snprintf(out, size, "%s", chance(2) ?
			 "kubernetes.io/hostname" : "node");
	else
		snprintf(out, size, "%s", chance(2) ? c->lname[l] :
			 c->keyed[l] ? c->lkey[l] : c->lname[l]);
}

static void gen_gang(const cluster *c, cgang *g, unsigned caseno, bool plain,
		     bool crowded)
{
	unsigned i, lv, used[3], nused = 0;

	memset(g, 0, sizeof(*g));
	snprintf(g->name, sizeof(g->name), "ns/g%u", caseno);
	g->nps = !plain && chance(4) ? 2 + rn(2) : 1;
	for (i = 0; i < g->nps; i++) {
		cpodset *p = &g->ps[i];

		snprintf(p->name, sizeof(p->name), "ps%u", i);
		p->count = i == 0 ? 1 + rn(crowded ? 6 : chance(6) ? 24 : 8) :
			   1 + rn(3);
		p->sh.v[TG_RES_CPU] = (int64_t)rn(3) * 2000;
		p->sh.v[TG_RES_MEMORY] = (int64_t)rn(3) << 32;
		p->sh.v[TG_RES_GPU] = chance(4) ? 1 + rn(4) : 0;
		if (c->use_ib && chance(4))
			p->sh.v[4] = 1;
		p->max_per_node = !plain && chance(5) ? 1 + rn(2) : 0;
		if (!plain && chance(6)) {
			p->sel_key = chance(2) ? "pool" : "tier";
			p->sel_val = p->sel_key[0] == 'p' ? "a" : "x";
		}
		p->named = chance(2);
	}
	if (plain)
		return;
	g->prio = crowded ? 2 + rn(2) : chance(2) ? 0 : rn(4);
	g->no_preempt = !crowded && chance(4);
	g->ngather = chance(3) ? 0 : 1 + rn(2);
	for (i = 0; i < g->ngather; i++) {
		unsigned k;

		pick_layer(c, g->gather[i].layer, sizeof(g->gather[i].layer),
			   &lv);
		for (k = 0; k < nused; k++)
			if (used[k] == lv)
				break;
		if (k < nused) {	/* one request per layer */
			g->ngather = i;
			break;
		}
		used[nused++] = lv;
		g->gather[i].a = chance(2) ? TG_GATHER_MUST : TG_GATHER_PREFER;
	}
	if (chance(40)) {
		snprintf(g->gather[g->ngather].layer,
			 sizeof(g->gather[0].layer), "no-such-layer");
		g->gather[g->ngather++].a = TG_GATHER_PREFER;
		g->bad_request = true;
	}
	if (chance(3)) {
		unsigned cnt = g->ps[0].count, size, lv2, size2;

		/* a divisor of the largest pod set (pod set 0 when it ties) */
		for (i = 1; i < g->nps; i++)
			if (g->ps[i].count > cnt)
				g->ps[0].count = cnt = g->ps[i].count + 1;
		do
			size = 1 + rn(cnt);
		while (cnt % size && !chance(12));
		if (cnt % size)
			g->bad_request = true;
		pick_layer(c, g->slice[0].layer, sizeof(g->slice[0].layer),
			   &lv);
		g->slice[0].a = size;
		g->nslice = 1;
		if (chance(3) && c->nlayers) {
			pick_layer(c, g->slice[1].layer,
				   sizeof(g->slice[1].layer), &lv2);
			/* nested: the upper slice a multiple of the lower */
			do
				size2 = 1 + rn(cnt);
			while (cnt % size2 && !chance(12));
			if (lv2 != lv) {
				unsigned up = lv < lv2 ? size : size2;
				unsigned lo = lv < lv2 ? size2 : size;

				if (cnt % size2 || up % lo)
					g->bad_request = true;
				g->slice[1].a = size2;
				g->nslice = 2;
			}
		}
	}
}

static tg_topology *build(const cluster *c, const unsigned *perm)
{
	tg_topology *t = tg_topology_create();
	unsigned i, j, l, ib;

	if (!t)
		return NULL;
	for (l = 0; l < c->nlayers; l++)
		if (tg_topology_add_layer(t, c->lname[l], c->keyed[l] ?
					  c->lkey[l] : NULL))
			goto fail;
	if (c->use_ib && (tg_topology_resource(t, "rdma/ib", &ib) ||
			  ib != 4))
		goto fail;
	for (j = 0; j < c->nnodes; j++) {
		const cnode *n = &c->n[perm ? perm[j] : j];
		const char *path[3];
		tg_node_id id;

		for (l = 0; l < c->nlayers; l++)
			path[l] = n->has[l] ? n->val[l] : NULL;
		if (tg_topology_add_node(t, n->name, path, &id) ||
		    tg_topology_node_set_resource(t, id, TG_RES_CPU, n->cpu) ||
		    tg_topology_node_set_resource(t, id, TG_RES_MEMORY,
						  n->mem) ||
		    tg_topology_node_set_resource(t, id, TG_RES_PODS,
						  n->pods) ||
		    tg_topology_node_set_gpus(t, id, n->ngpus,
					      n->isl_null ? NULL : n->isl) ||
		    (c->use_ib &&
		     tg_topology_node_set_resource(t, id, 4, n->ib)) ||
		    (n->pool &&
		     tg_topology_node_add_label(t, id, "pool", n->pool)) ||
		    (n->tier &&
		     tg_topology_node_add_label(t, id, "tier", n->tier)) ||
		    (n->taint >= 0 &&
		     tg_topology_node_add_taint(t, id, "dedicated", "x",
						(tg_taint_effect)n->taint)) ||
		    tg_topology_node_set_unschedulable(t, id, n->cordon))
			goto fail;
	}
	if (tg_topology_build(t, NULL))
		goto fail;
	for (i = 0; i < c->nrun; i++) {
		tg_alloc_spec a;

		memset(&a, 0, sizeof(a));
		a.pod = c->run[i].pod;
		a.gang = c->run[i].gang[0] ? c->run[i].gang : NULL;
		a.shape = &c->run[i].sh;
		a.priority = c->run[i].prio;
		a.preemptible = c->run[i].preemptible;
		a.nominated = c->run[i].nominated;
		if (tg_topology_node_find(t, c->n[c->run[i].node].name,
					  &a.node) ||
		    tg_topology_add_alloc(t, &a))
			goto fail;
	}
	return t;
fail:
	tg_topology_destroy(t);
	return NULL;
}

static tg_gang *make_gang(const cgang *cg)
{
	tg_gang *g = tg_gang_create(cg->name);
	unsigned i, m, ps;
	char pod[40];

	if (!g)
		return NULL;
	tg_gang_set_priority(g, cg->prio);
	tg_gang_set_can_preempt(g, !cg->no_preempt);
	for (i = 0; i < cg->nps; i++) {
		const cpodset *p = &cg->ps[i];

		if (tg_gang_add_podset(g, p->name, &p->sh, p->count, &ps) ||
		    ps != i ||
		    tg_gang_podset_set_max_per_node(g, ps, p->max_per_node) ||
		    (p->sel_key && tg_gang_podset_add_node_selector(g, ps,
				p->sel_key, p->sel_val)))
			goto fail;
		for (m = 0; p->named && m < p->count; m++) {
			snprintf(pod, sizeof(pod), "%s/m%u-%u", cg->name, i, m);
			if (tg_gang_podset_set_member(g, ps, m, pod))
				goto fail;
		}
	}
	for (i = 0; i < cg->ngather; i++)
		if (tg_gang_set_gather(g, cg->gather[i].layer,
				       (tg_gather)cg->gather[i].a))
			goto fail;
	for (i = 0; i < cg->nslice; i++)
		if (tg_gang_add_slice(g, cg->slice[i].layer, cg->slice[i].a))
			goto fail;
	return g;
fail:
	tg_gang_destroy(g);
	return NULL;
}

/* ---- what a topology holds, to compare before and after ---- */

typedef struct snap {
	unsigned nallocs, nres;
	int64_t freev[MAXN][8];
	uint64_t gpus[MAXN];
} snap;

static void take_snap(const tg_topology *t, snap *s)
{
	unsigned n, r;

	memset(s, 0, sizeof(*s));
	s->nallocs = tg_topology_nallocs(t);
	s->nres = tg_topology_nresources(t);
	for (n = 0; n < tg_topology_nnodes(t) && n < MAXN; n++) {
		for (r = 0; r < s->nres && r < 8; r++)
			s->freev[n][r] = tg_topology_node_free(t, n, r);
		s->gpus[n] = tg_topology_node_free_gpus(t, n);
	}
}

static bool same_snap(const snap *a, const snap *b)
{
	return !memcmp(a, b, sizeof(*a));
}

/* ---- property bookkeeping ---- */

enum { P_PLACE, P_A, P_B, P_C, P_D, P_E, P_F, P_G, NPROP };

static const char *const prop_name[NPROP] = {
	"tg_place returns TG_OK with a decision",
	"(a) never over-commit",
	"(b) all or nothing",
	"(c) MUST, slices, selectors, max per node, cordons, taints",
	"(d) deterministic across input order and repeated calls",
	"(e) tiny clusters: placed exactly when brute force fits it",
	"(f) victims: whole lower-priority preemptible gangs, or "
	"lower-priority reservations on the nodes used",
	"(g) no victim gang could be reprieved: each has a member on a "
	"node the nominated placement uses",
};

static unsigned nbad[NPROP], curcase;

static void fail(unsigned prop, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fail(unsigned prop, const char *fmt, ...)
{
	va_list ap;

	if (nbad[prop]++ >= MAXDIAG)
		return;
	printf("# case %u: %s: ", curcase, prop_name[prop]);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* The domain of node \p n at \p level (nlayers: the node itself). */
static uint32_t unit_of(const tg_topology *t, tg_node_id n, unsigned level)
{
	tg_domain_id d;

	if (level >= tg_topology_nlayers(t))
		return n;
	d = tg_topology_node_domain(t, n);
	while (d != TG_NONE && d != 0 &&
	       tg_topology_domain_layer(t, d) != level)
		d = tg_topology_domain_parent(t, d);
	return d;
}

static unsigned level_of(const tg_topology *t, const char *layer)
{
	unsigned l = tg_topology_layer_find(t, layer);

	if (l != TG_NONE)
		return l;
	if (!strcmp(layer, "kubernetes.io/hostname") || !strcmp(layer, "node"))
		return tg_topology_nlayers(t);
	return TG_NONE;
}

static void member_name(const cgang *cg, unsigned ps, unsigned m, char *out,
			size_t size)
{
	if (cg->ps[ps].named)
		snprintf(out, size, "%s/m%u-%u", cg->name, ps, m);
	else
		snprintf(out, size, "%s-%s-%u", cg->name, cg->ps[ps].name, m);
}

static bool hard_taint(const cnode *n)
{
	return n->taint == TG_TAINT_NO_SCHEDULE ||
	       n->taint == TG_TAINT_NO_EXECUTE;
}

static const cnode *cnode_of(const cluster *c, const tg_topology *t,
			     tg_node_id id)
{
	const char *nm = tg_topology_node_name(t, id);
	unsigned i;

	for (i = 0; nm && i < c->nnodes; i++)
		if (!strcmp(c->n[i].name, nm))
			return &c->n[i];
	return NULL;
}

/* (b) and (c) on a placed decision */
static void check_placed(const cluster *c, const cgang *cg,
			 const tg_topology *t, const tg_decision *d)
{
	unsigned i, j, ps, m, rank = 0, total = 0;
	char want[64];
	bool topo = cg->ngather || cg->nslice;

	for (ps = 0; ps < cg->nps; ps++)
		total += cg->ps[ps].count;
	if (tg_decision_nplacements(d) != total) {
		fail(P_B, "placed %u of %u members",
		     tg_decision_nplacements(d), total);
		return;
	}
	for (ps = 0; ps < cg->nps; ps++)
		for (m = 0; m < cg->ps[ps].count; m++, rank++) {
			const tg_placement *p = tg_decision_placement(d, rank);
			const cnode *n = cnode_of(c, t, p->node);

			member_name(cg, ps, m, want, sizeof(want));
			if (p->rank != rank || p->podset != ps ||
			    strcmp(p->pod, want))
				fail(P_B, "rank %u: got %s (pod set %u, rank "
				     "%u), want %s (pod set %u)", rank, p->pod,
				     p->podset, p->rank, want, ps);
			if (!n) {
				fail(P_B, "rank %u: unknown node %u", rank,
				     p->node);
				continue;
			}
			if (n->cordon || hard_taint(n))
				fail(P_C, "%s on cordoned or tainted %s",
				     p->pod, n->name);
			if (cg->ps[ps].sel_key) {
				const char *v = !strcmp(cg->ps[ps].sel_key,
							"pool") ? n->pool :
						n->tier;

				if (!v || strcmp(v, cg->ps[ps].sel_val))
					fail(P_C, "%s on %s: selector %s=%s "
					     "not met", p->pod, n->name,
					     cg->ps[ps].sel_key,
					     cg->ps[ps].sel_val);
			}
			if (topo && tg_topology_nlayers(t) &&
			    tg_topology_node_domain(t, p->node) == TG_NONE)
				fail(P_C, "%s on %s, which is outside the tree",
				     p->pod, n->name);
		}
	/* max per node */
	for (i = 0; i < total; i++) {
		const tg_placement *p = tg_decision_placement(d, i);
		unsigned cap = cg->ps[p->podset].max_per_node, same = 0;

		for (j = 0; j < total; j++) {
			const tg_placement *q = tg_decision_placement(d, j);

			if (q->podset == p->podset && q->node == p->node)
				same++;
		}
		if (cap && same > cap) {
			fail(P_C, "pod set %u: %u members on %s, cap %u",
			     p->podset, same,
			     tg_topology_node_name(t, p->node), cap);
			break;
		}
	}
	/* every MUST layer: one domain */
	for (i = 0; i < cg->ngather; i++) {
		unsigned lv = level_of(t, cg->gather[i].layer);
		uint32_t u0;

		if (cg->gather[i].a != TG_GATHER_MUST || lv == TG_NONE)
			continue;
		u0 = unit_of(t, tg_decision_placement(d, 0)->node, lv);
		for (j = 1; j < total; j++)
			if (unit_of(t, tg_decision_placement(d, j)->node,
				    lv) != u0)
				break;
		if (j < total)
			fail(P_C, "MUST %s: rank 0 on %s, rank %u on %s",
			     cg->gather[i].layer, tg_topology_node_name(t,
				tg_decision_placement(d, 0)->node), j,
			     tg_topology_node_name(t,
				tg_decision_placement(d, j)->node));
	}
	/* slices: each run of `size` consecutive members of a pod set
	 * inside one domain */
	for (i = 0; i < cg->nslice; i++) {
		unsigned lv = level_of(t, cg->slice[i].layer);
		unsigned size = cg->slice[i].a, base = 0;

		for (ps = 0; ps < cg->nps; base += cg->ps[ps].count, ps++)
			for (m = 0; m < cg->ps[ps].count; m++) {
				unsigned r0 = base + m - m % size;
				const tg_placement *a, *b;

				a = tg_decision_placement(d, r0);
				b = tg_decision_placement(d, base + m);
				if (unit_of(t, a->node, lv) !=
				    unit_of(t, b->node, lv)) {
					fail(P_C, "slice %u on %s: rank %u on "
					     "%s, rank %u on %s", size,
					     cg->slice[i].layer, r0,
					     tg_topology_node_name(t, a->node),
					     base + m, tg_topology_node_name(t,
						b->node));
					m = cg->ps[ps].count;
				}
			}
	}
}

static const crun *crun_of(const cluster *c, const char *pod)
{
	unsigned i;

	for (i = 0; i < c->nrun; i++)
		if (!strcmp(c->run[i].pod, pod))
			return &c->run[i];
	return NULL;
}

static const char *gang_of(const crun *r)
{
	return r->gang[0] ? r->gang : r->pod;
}

/* (f): victims are whole lower-priority preemptible gangs, or
 * lower-priority reservations on nodes the gang uses */
static void check_victims(const cluster *c, const cgang *cg,
			  const tg_topology *t, const tg_decision *d)
{
	unsigned i, j, nv = tg_decision_nvictims(d);
	tg_status st = tg_decision_status(d);

	if (st == TG_STATUS_PREEMPTING && (!nv || cg->no_preempt))
		fail(P_F, "preempting with %u victims, can_preempt %d", nv,
		     !cg->no_preempt);
	for (i = 0; i < nv; i++) {
		const tg_victim *v = tg_decision_victim(d, i);
		const crun *r = crun_of(c, v->pod);
		tg_node_id id = TG_NONE;
		bool used = false;

		if (!r) {
			fail(P_F, "victim %s is not running work", v->pod);
			continue;
		}
		tg_topology_node_find(t, c->n[r->node].name, &id);
		for (j = 0; j < i; j++)
			if (!strcmp(tg_decision_victim(d, j)->pod, v->pod))
				fail(P_F, "victim %s listed twice", v->pod);
		if (v->node != id || v->priority != r->prio ||
		    strcmp(v->gang, gang_of(r)))
			fail(P_F, "victim %s: node/priority/gang differ",
			     v->pod);
		if (r->prio >= cg->prio)
			fail(P_F, "victim %s has priority %lld, the gang %lld",
			     v->pod, (long long)r->prio, (long long)cg->prio);
		for (j = 0; j < tg_decision_nplacements(d); j++)
			if (tg_decision_placement(d, j)->node == id)
				used = true;
		if (v->reservation) {
			if (!r->nominated || !used)
				fail(P_F, "reservation victim %s: nominated "
				     "%d, on a node the gang uses %d", v->pod,
				     r->nominated, used);
			continue;
		}
		if (st != TG_STATUS_PREEMPTING)
			fail(P_F, "running victim %s of a %s decision", v->pod,
			     tg_status_name(st));
		/* (g): a victim gang none of whose pods sits on a node the
		 * placement uses could stay: the placement would not change */
		{
			bool touches = false;

			for (j = 0; j < nv && !touches; j++) {
				const tg_victim *w = tg_decision_victim(d, j);
				unsigned k;

				if (w->reservation || strcmp(w->gang, v->gang))
					continue;
				for (k = 0; k < tg_decision_nplacements(d);
				     k++)
					if (tg_decision_placement(d, k)->node ==
					    w->node)
						touches = true;
			}
			if (!touches)
				fail(P_G, "victim gang %s has no pod on a node "
				     "the gang uses: it could be reprieved",
				     v->gang);
		}
		if (r->nominated || !r->preemptible)
			fail(P_F, "victim %s: nominated %d, preemptible %d",
			     v->pod, r->nominated, r->preemptible);
		/* the whole gang goes, and all of it could */
		for (j = 0; j < c->nrun; j++) {
			const crun *o = &c->run[j];
			unsigned k;

			if (o->nominated || strcmp(gang_of(o), gang_of(r)))
				continue;
			if (!o->preemptible || o->prio >= cg->prio)
				fail(P_F, "gang %s evicted, but %s is not "
				     "preemptible or not of lower priority",
				     gang_of(r), o->pod);
			for (k = 0; k < nv; k++)
				if (!strcmp(tg_decision_victim(d, k)->pod,
					    o->pod))
					break;
			if (k == nv) {
				fail(P_F, "gang %s evicted without %s",
				     gang_of(r), o->pod);
				break;
			}
		}
	}
}

/* (a): what the decision takes fits what was free plus what its victims
 * free, then apply and look again */
static void check_apply(const cluster *c, const cgang *cg, tg_topology *t,
			const tg_gang *g, const tg_decision *d,
			const snap *before)
{
	int64_t take[MAXN][8], freed[MAXN][8];
	uint64_t gpus[MAXN];
	bool vic[MAXN];
	unsigned i, n, r, total = tg_decision_nplacements(d);
	unsigned nv = tg_decision_nvictims(d);
	snap after;
	tg_errinfo ei;
	tg_err err;

	memset(take, 0, sizeof(take));
	memset(freed, 0, sizeof(freed));
	memset(gpus, 0, sizeof(gpus));
	memset(vic, 0, sizeof(vic));
	for (i = 0; i < nv; i++) {
		const tg_victim *v = tg_decision_victim(d, i);
		const crun *x = crun_of(c, v->pod);

		if (!x || v->node >= MAXN)
			return;	/* reported by check_victims() */
		vic[v->node] = true;
		for (r = 0; r < before->nres && r < 8; r++)
			freed[v->node][r] += r == TG_RES_PODS &&
					     !x->sh.v[r] ? 1 : x->sh.v[r];
	}
	for (i = 0; i < total; i++) {
		const tg_placement *p = tg_decision_placement(d, i);
		const tg_shape *sh = &cg->ps[p->podset].sh;
		unsigned want = (unsigned)sh->v[TG_RES_GPU];

		for (r = 0; r < before->nres && r < 8; r++)
			take[p->node][r] += r == TG_RES_PODS ? 1 : sh->v[r];
		if (p->gpus & gpus[p->node])
			fail(P_A, "%s: GPUs 0x%llx shared with another member",
			     p->pod, (unsigned long long)p->gpus);
		if (!vic[p->node] && (p->gpus & ~before->gpus[p->node]))
			fail(P_A, "%s: GPUs 0x%llx not free (free 0x%llx)",
			     p->pod, (unsigned long long)p->gpus,
			     (unsigned long long)before->gpus[p->node]);
		if ((unsigned)__builtin_popcountll(p->gpus) != want)
			fail(P_A, "%s: %u GPUs, asked for %u", p->pod,
			     (unsigned)__builtin_popcountll(p->gpus), want);
		gpus[p->node] |= p->gpus;
	}
	for (n = 0; n < MAXN; n++)
		for (r = 0; r < before->nres && r < 8; r++)
			if (take[n][r] &&
			    before->freev[n][r] + freed[n][r] - take[n][r] < 0)
				fail(P_A, "node %s: %s %lld free (%lld more "
				     "from victims), %lld taken",
				     tg_topology_node_name(t, n),
				     tg_topology_resource_name(t, r),
				     (long long)before->freev[n][r],
				     (long long)freed[n][r],
				     (long long)take[n][r]);

	err = tg_decision_apply(t, g, d);
	if (err != TG_OK) {
		fail(P_A, "apply: %s", tg_strerror(err));
		return;
	}
	take_snap(t, &after);
	if (after.nallocs != before->nallocs + total - nv)
		fail(P_A, "apply: %u allocations, want %u + %u - %u",
		     after.nallocs, before->nallocs, total, nv);
	for (n = 0; n < tg_topology_nnodes(t); n++) {
		for (r = 0; r < before->nres && r < 8; r++) {
			int64_t want = before->freev[n][r] + freed[n][r] -
				       take[n][r];

			if (before->freev[n][r] >= 0 && after.freev[n][r] < 0)
				fail(P_A, "apply: node %s %s below zero "
				     "(%lld)", tg_topology_node_name(t, n),
				     tg_topology_resource_name(t, r),
				     (long long)after.freev[n][r]);
			if (after.freev[n][r] != want)
				fail(P_A, "apply: node %s %s: %lld free, "
				     "want %lld", tg_topology_node_name(t, n),
				     tg_topology_resource_name(t, r),
				     (long long)after.freev[n][r],
				     (long long)want);
		}
		if (!vic[n] && after.gpus[n] != (before->gpus[n] & ~gpus[n]))
			fail(P_A, "apply: node %s GPU mask 0x%llx, want "
			     "0x%llx", tg_topology_node_name(t, n),
			     (unsigned long long)after.gpus[n],
			     (unsigned long long)(before->gpus[n] & ~gpus[n]));
	}
	if (tg_topology_check(t, &ei) != TG_OK)
		fail(P_A, "check after apply: %s", ei.msg);
	if (tg_decision_apply(t, g, d) == TG_OK)
		fail(P_A, "applying twice is not refused");
	take_snap(t, &after);
	if (after.nallocs != before->nallocs + total - nv)
		fail(P_B, "a refused second apply left %u allocations, "
		     "want %u", after.nallocs, before->nallocs + total - nv);
}

/* (d): two decisions are the same, by node name */
static bool same_decision(const tg_topology *t1, const tg_decision *d1,
			  const tg_topology *t2, const tg_decision *d2,
			  const char *what)
{
	unsigned i;

	if (tg_decision_status(d1) != tg_decision_status(d2) ||
	    tg_decision_nplacements(d1) != tg_decision_nplacements(d2)) {
		fail(P_D, "%s: %s with %u placements vs %s with %u", what,
		     tg_status_name(tg_decision_status(d1)),
		     tg_decision_nplacements(d1),
		     tg_status_name(tg_decision_status(d2)),
		     tg_decision_nplacements(d2));
		return false;
	}
	for (i = 0; i < tg_decision_nplacements(d1); i++) {
		const tg_placement *a = tg_decision_placement(d1, i);
		const tg_placement *b = tg_decision_placement(d2, i);

		if (strcmp(a->pod, b->pod) || a->rank != b->rank ||
		    a->podset != b->podset || a->gpus != b->gpus ||
		    strcmp(tg_topology_node_name(t1, a->node),
			   tg_topology_node_name(t2, b->node))) {
			fail(P_D, "%s: rank %u: %s on %s GPUs 0x%llx vs %s "
			     "on %s GPUs 0x%llx", what, i, a->pod,
			     tg_topology_node_name(t1, a->node),
			     (unsigned long long)a->gpus, b->pod,
			     tg_topology_node_name(t2, b->node),
			     (unsigned long long)b->gpus);
			return false;
		}
	}
	if (tg_decision_nvictims(d1) != tg_decision_nvictims(d2)) {
		fail(P_D, "%s: %u victims vs %u", what,
		     tg_decision_nvictims(d1), tg_decision_nvictims(d2));
		return false;
	}
	for (i = 0; i < tg_decision_nvictims(d1); i++) {
		const tg_victim *a = tg_decision_victim(d1, i);
		const tg_victim *b = tg_decision_victim(d2, i);

		if (strcmp(a->pod, b->pod) ||
		    a->reservation != b->reservation ||
		    strcmp(tg_topology_node_name(t1, a->node),
			   tg_topology_node_name(t2, b->node))) {
			fail(P_D, "%s: victim %u: %s vs %s", what, i, a->pod,
			     b->pod);
			return false;
		}
	}
	if (strcmp(tg_decision_domain(d1), tg_decision_domain(d2)) ||
	    strcmp(tg_decision_message(d1), tg_decision_message(d2)) ||
	    tg_decision_bandwidth_gbps(d1) != tg_decision_bandwidth_gbps(d2)) {
		fail(P_D, "%s: '%s' / '%s' vs '%s' / '%s'", what,
		     tg_decision_domain(d1), tg_decision_message(d1),
		     tg_decision_domain(d2), tg_decision_message(d2));
		return false;
	}
	return true;
}

/* (e): can `k` members of `sh` go somewhere?  Every way to split k over
 * the eligible nodes, tried one by one. */
typedef struct fitctx {
	unsigned nn, k;
	int64_t cap[MAXN][8];	/* free per requested resource */
	unsigned ngpu[MAXN];	/* free GPUs (count and mask) */
	int64_t want[8];
	unsigned nres;
} fitctx;

static bool split_fits(const fitctx *f, unsigned node, unsigned left)
{
	unsigned m, r;

	if (left == 0)
		return true;
	if (node == f->nn)
		return false;
	for (m = 0; m <= left; m++) {
		bool fits = true;

		if (m == 0) {	/* nothing on this node always fits */
			if (split_fits(f, node + 1, left))
				return true;
			continue;
		}

		for (r = 0; r < f->nres && fits; r++)
			if (f->want[r] && f->want[r] * m > f->cap[node][r])
				fits = false;
		if (f->want[TG_RES_GPU] &&
		    (int64_t)m * f->want[TG_RES_GPU] > f->ngpu[node])
			fits = false;
		if (!fits)
			break;
		if (split_fits(f, node + 1, left - m))
			return true;
	}
	return false;
}

static bool brute_fits(const cluster *c, const tg_topology *t,
		       const cgang *cg, const snap *s)
{
	fitctx f;
	unsigned i, r;

	memset(&f, 0, sizeof(f));
	f.k = cg->ps[0].count;
	f.nres = s->nres < 8 ? s->nres : 8;
	for (r = 0; r < f.nres; r++)
		f.want[r] = cg->ps[0].sh.v[r];
	f.want[TG_RES_PODS] = 1;
	for (i = 0; i < tg_topology_nnodes(t); i++) {
		const cnode *n = cnode_of(c, t, i);
		int64_t cnt = s->freev[i][TG_RES_GPU];
		unsigned bits = (unsigned)__builtin_popcountll(s->gpus[i]);

		if (!n || n->cordon || hard_taint(n))
			continue;
		for (r = 0; r < f.nres; r++)
			f.cap[f.nn][r] = s->freev[i][r];
		f.ngpu[f.nn] = cnt < 0 ? 0 : (unsigned)cnt < bits ?
			       (unsigned)cnt : bits;
		f.nn++;
	}
	return split_fits(&f, 0, f.k);
}

/* The case as text, for TG_CASE=<n> (one case, described). */
static void dump_case(const cluster *c, const cgang *cg,
		      const tg_topology *t, const tg_decision *d)
{
	unsigned i, l;
	char *pic;

	diag("layers:");
	for (l = 0; l < c->nlayers; l++)
		diag("  %s%s%s", c->lname[l], c->keyed[l] ? " key " : "",
		     c->keyed[l] ? c->lkey[l] : "");
	for (i = 0; i < c->nnodes; i++) {
		const cnode *n = &c->n[i];
		tg_node_id id;

		tg_topology_node_find(t, n->name, &id);
		diag("node %s %s/%s/%s cpu %lld/%lld mem %lld pods %lld/%lld "
		     "ib %lld gpus %u/%lld mask 0x%llx pool %s tier %s%s "
		     "taint %d", n->name,
		     c->nlayers > 0 && n->has[0] ? n->val[0] : "-",
		     c->nlayers > 1 && n->has[1] ? n->val[1] : "-",
		     c->nlayers > 2 && n->has[2] ? n->val[2] : "-",
		     (long long)tg_topology_node_free(t, id, TG_RES_CPU),
		     (long long)n->cpu,
		     (long long)tg_topology_node_free(t, id, TG_RES_MEMORY),
		     (long long)tg_topology_node_free(t, id, TG_RES_PODS),
		     (long long)n->pods, (long long)n->ib, n->ngpus,
		     (long long)tg_topology_node_free(t, id, TG_RES_GPU),
		     (unsigned long long)tg_topology_node_free_gpus(t, id),
		     n->pool ? n->pool : "-", n->tier ? n->tier : "-",
		     n->cordon ? " cordoned" : "", n->taint);
	}
	for (i = 0; i < c->nrun; i++)
		diag("run %s gang %s on %s prio %lld%s%s cpu %lld gpu %lld",
		     c->run[i].pod, c->run[i].gang[0] ? c->run[i].gang : "-",
		     c->n[c->run[i].node].name, (long long)c->run[i].prio,
		     c->run[i].preemptible ? " preemptible" : "",
		     c->run[i].nominated ? " nominated" : "",
		     (long long)c->run[i].sh.v[TG_RES_CPU],
		     (long long)c->run[i].sh.v[TG_RES_GPU]);
	diag("gang %s: priority %lld%s", cg->name, (long long)cg->prio,
	     cg->no_preempt ? ", may not preempt" : "");
	for (i = 0; i < cg->nps; i++)
		diag("  pod set %s: %u x cpu %lld mem %lld gpu %lld ib %lld, "
		     "max/node %u, selector %s=%s", cg->ps[i].name,
		     cg->ps[i].count, (long long)cg->ps[i].sh.v[TG_RES_CPU],
		     (long long)cg->ps[i].sh.v[TG_RES_MEMORY],
		     (long long)cg->ps[i].sh.v[TG_RES_GPU],
		     (long long)cg->ps[i].sh.v[4], cg->ps[i].max_per_node,
		     cg->ps[i].sel_key ? cg->ps[i].sel_key : "-",
		     cg->ps[i].sel_val ? cg->ps[i].sel_val : "-");
	for (i = 0; i < cg->ngather; i++)
		diag("  gather %s %s", cg->gather[i].layer,
		     cg->gather[i].a == TG_GATHER_MUST ? "MUST" : "PREFER");
	for (i = 0; i < cg->nslice; i++)
		diag("  slice %s %u", cg->slice[i].layer, cg->slice[i].a);
	diag("decision: %s in '%s': %s",
	     tg_status_name(tg_decision_status(d)), tg_decision_domain(d),
	     tg_decision_message(d));
	for (i = 0; i < tg_decision_nplacements(d); i++) {
		const tg_placement *p = tg_decision_placement(d, i);

		diag("  rank %u %s on %s GPUs 0x%llx", p->rank, p->pod,
		     tg_topology_node_name(t, p->node),
		     (unsigned long long)p->gpus);
	}
	pic = tg_draw(t, d);
	if (pic)
		printf("%s", pic);
	tg_free(pic);
}

/* ---- one case ---- */

static unsigned nplaced, npreempt, nunsched, nbrute, nbrute_fit, nvictims;
static bool verbose;

static void one_case(unsigned caseno)
{
	cluster c;
	cgang cg;
	unsigned perm[MAXN], i;
	tg_topology *t1 = NULL, *t2 = NULL;
	tg_gang *g = NULL;
	tg_decision *d1 = NULL, *d2 = NULL, *d3 = NULL;
	snap before, after;
	tg_errinfo ei;
	tg_err err;

	curcase = caseno;
	/* one case in four is for (e): tiny, one pod set, no constraint;
	 * one in four is crowded with lower-priority work (for (f)) */
	gen_cluster(&c, caseno, caseno % 4 == 3, caseno % 4 == 1);
	gen_gang(&c, &cg, caseno, caseno % 4 == 3, caseno % 4 == 1);
	for (i = 0; i < c.nnodes; i++)
		perm[i] = i;
	for (i = c.nnodes; i > 1; i--) {
		unsigned j = rn(i), x = perm[i - 1];

		perm[i - 1] = perm[j];
		perm[j] = x;
	}
	t1 = build(&c, NULL);
	t2 = build(&c, perm);
	g = make_gang(&cg);
	if (!t1 || !t2 || !g) {
		fail(P_PLACE, "could not build the case");
		goto out;
	}
	if (tg_topology_check(t1, &ei) != TG_OK)
		fail(P_A, "check after build: %s", ei.msg);
	take_snap(t1, &before);

	err = tg_place(t1, g, &d1, &ei);
	if (err != TG_OK || !d1) {
		fail(P_PLACE, "%s: %s", tg_strerror(err), ei.msg);
		goto out;
	}
	if (verbose)
		dump_case(&c, &cg, t1, d1);
	take_snap(t1, &after);
	if (!same_snap(&before, &after))
		fail(P_B, "tg_place changed the topology");
	if (tg_place(t2, g, &d2, NULL) != TG_OK ||
	    tg_place(t1, g, &d3, NULL) != TG_OK) {
		fail(P_PLACE, "second placement failed");
		goto out;
	}
	same_decision(t1, d1, t2, d2, "shuffled input order");
	same_decision(t1, d1, t1, d3, "placing twice");

	if (cg.bad_request &&
	    tg_decision_status(d1) != TG_STATUS_UNSCHEDULABLE)
		fail(P_C, "a bad request was %s",
		     tg_status_name(tg_decision_status(d1)));

	/* (e) tiny, one pod set, no constraints at all */
	if (c.nnodes <= 6 && cg.nps == 1 && !cg.ngather && !cg.nslice &&
	    cg.prio == 0 &&
	    !cg.ps[0].sel_key && !cg.ps[0].max_per_node &&
	    cg.ps[0].count <= 12) {
		bool fits = brute_fits(&c, t1, &cg, &before);
		bool placed = tg_decision_status(d1) == TG_STATUS_PLACED;

		nbrute++;
		nbrute_fit += fits;
		if (fits != placed)
			fail(P_E, "brute force says %s, tg_place says %s (%s)",
			     fits ? "it fits" : "it does not fit",
			     tg_status_name(tg_decision_status(d1)),
			     tg_decision_message(d1));
	}

	switch (tg_decision_status(d1)) {
	case TG_STATUS_PLACED:
	case TG_STATUS_PREEMPTING:
		if (tg_decision_status(d1) == TG_STATUS_PLACED)
			nplaced++;
		else
			npreempt++;
		nvictims += tg_decision_nvictims(d1);
		if (!*tg_decision_domain(d1))
			fail(P_B, "placed without a domain");
		check_placed(&c, &cg, t1, d1);
		check_victims(&c, &cg, t1, d1);
		check_apply(&c, &cg, t1, g, d1, &before);
		break;
	case TG_STATUS_UNSCHEDULABLE:
		nunsched++;
		if (tg_decision_nplacements(d1) != 0 ||
		    tg_decision_nvictims(d1) != 0)
			fail(P_B, "unschedulable with %u placements, %u "
			     "victims", tg_decision_nplacements(d1),
			     tg_decision_nvictims(d1));
		if (!*tg_decision_message(d1))
			fail(P_B, "unschedulable without a message");
		if (*tg_decision_domain(d1))
			fail(P_B, "unschedulable in domain %s",
			     tg_decision_domain(d1));
		if (tg_decision_apply(t1, g, d1) != TG_ESTATE)
			fail(P_B, "applying an unschedulable decision is "
			     "not TG_ESTATE");
		take_snap(t1, &after);
		if (!same_snap(&before, &after))
			fail(P_B, "an unschedulable gang changed the "
			     "topology");
		break;
	default:
		fail(P_B, "unexpected status %s",
		     tg_status_name(tg_decision_status(d1)));
	}
out:
	tg_decision_free(d1);
	tg_decision_free(d2);
	tg_decision_free(d3);
	tg_gang_destroy(g);
	tg_topology_destroy(t1);
	tg_topology_destroy(t2);
}

/* ---- the fill: fewest children, largest free children kept whole ---- */

/*
 * (h) and (i), on their own random fabrics (1-3 layers of 1-6 children,
 * 1-4 nodes of 8 GPUs under each lowest domain, 0-8 GPUs busy on each)
 * and a gang of one pod set of G GPUs a member without constraints.  A
 * node's offer slots are then its free GPUs / G, a domain's their sum.
 * In the domain the gang was placed in (the lowest holding every
 * member) and in every domain below it that got members:
 *  (h) the number of children used is the fewest whose slots can hold
 *      the members the domain got;
 *  (i) where the children are nodes, the untouched ones, sorted by
 *      slots, are the lexicographic largest of every set of that many
 *      that can hold them (brute force over the subsets).  Where the
 *      children are domains the fewest domains at the lower layers come
 *      first ((j) below) and this rule only breaks ties among those.
 */
#define FMAXN	(6 * 6 * 6 * 4)
#define FMAXC	6

typedef struct fnode {
	unsigned path[3];	/* child index at each layer */
	unsigned busy;		/* GPUs */
	unsigned got;		/* members placed */
} fnode;

typedef struct fcase {
	unsigned nl, nn, gpus, members;
	fnode n[FMAXN];
} fcase;

static unsigned nfill_cases, nfill_placed, nfill_units, nfill_bad[2];

/*
 * The nodes of a random case over \p fan: 1 .. maxper nodes a lowest
 * domain, each busy \p once_in times in \p busy_then GPUs (else 0-8);
 * then the members, 2 .. the slots.
 */
static void gen_nodes(fcase *f, const unsigned *fan, unsigned gpus_log,
		      unsigned maxper, unsigned once_in, unsigned busy_then)
{
	unsigned a, b, c, i, per, slots = 0;

	f->nn = 0;
	f->gpus = 1u << rn(gpus_log);
	for (a = 0; a < fan[0]; a++)
		for (b = 0; b < fan[1]; b++)
			for (c = 0; c < fan[2]; c++) {
				per = 1 + rn(maxper);
				for (i = 0; i < per; i++) {
					fnode *x = &f->n[f->nn++];

					x->path[0] = a;
					x->path[1] = b;
					x->path[2] = c;
					x->busy = chance(once_in) ? busy_then :
								    rn(9);
					x->got = 0;
					slots += (8 - x->busy) / f->gpus;
				}
			}
	f->members = 2 + rn(slots > 2 ? slots - 1 : 1);
}

static void fill_gen(fcase *f)
{
	unsigned fan[3], l;

	f->nl = 1 + rn(3);
	for (l = 0; l < 3; l++)
		fan[l] = l < f->nl ? 1 + rn(FMAXC) : 1;
	gen_nodes(f, fan, 4, 4, 3, 0);
}

static tg_topology *fill_build(const fcase *f)
{
	tg_topology *t = tg_topology_create();
	unsigned i, l;

	for (l = 0; l < f->nl; l++) {
		char nm[16];

		snprintf(nm, sizeof(nm), "L%u", l);
		tg_topology_add_layer(t, nm, NULL);
	}
	for (i = 0; i < f->nn; i++) {
		char nm[16], v[3][16];
		const char *path[3];
		tg_node_id id;

		snprintf(nm, sizeof(nm), "n%03u", i);
		for (l = 0; l < f->nl; l++) {
			snprintf(v[l], sizeof(v[l]), "v%u", f->n[i].path[l]);
			path[l] = v[l];
		}
		if (tg_topology_add_node(t, nm, path, &id) ||
		    tg_topology_node_set_gpus(t, id, 8, NULL) ||
		    tg_topology_node_set_resource(t, id, TG_RES_PODS, 110))
			goto fail;
	}
	if (tg_topology_build(t, NULL))
		goto fail;
	for (i = 0; i < f->nn; i++) {
		char pod[16];
		tg_shape sh;
		tg_alloc_spec sp;

		if (!f->n[i].busy)
			continue;
		memset(&sh, 0, sizeof(sh));
		memset(&sp, 0, sizeof(sp));
		sh.v[TG_RES_GPU] = f->n[i].busy;
		snprintf(pod, sizeof(pod), "busy-%u", i);
		sp.pod = pod;
		sp.node = (tg_node_id)i;
		sp.shape = &sh;
		if (tg_topology_add_alloc(t, &sp))
			goto fail;
	}
	return t;
fail:
	tg_topology_destroy(t);
	return NULL;
}

static int udesc(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* The best untouched set of m of the nc children holding k (brute
 * force): into best[], sorted, most slots first; false if none. */
static bool fill_brute(const unsigned *slots, unsigned nc, unsigned m,
		       unsigned k, unsigned *best)
{
	unsigned mask, c, rest[FMAXC];
	bool found = false;

	for (mask = 0; mask < (1u << nc); mask++) {
		unsigned cnt = 0, sum = 0, nr = 0;

		for (c = 0; c < nc; c++)
			if (mask >> c & 1) {
				cnt++;
				sum += slots[c];
			} else {
				rest[nr++] = slots[c];
			}
		if (cnt != m || sum < k)
			continue;
		qsort(rest, nr, sizeof(unsigned), udesc);
		for (c = 0; found && c < nr && rest[c] == best[c]; c++)
			;
		if (!found || (c < nr && rest[c] > best[c]))
			memcpy(best, rest, nr * sizeof(unsigned));
		found = true;
	}
	return found;
}

/*
 * The unit at depth \p level whose path begins with \p path: its
 * children are the distinct path[level] values (the nodes at depth nl).
 * \p inside: at or below the domain the gang was placed in.
 */
static void fill_check_unit(const fcase *f, unsigned level,
			    const unsigned *path, bool inside)
{
	unsigned slots[FMAXC * 4], got[FMAXC * 4], key[FMAXC * 4], nc = 0;
	unsigned i, c, l, used = 0, k = 0, m, sum;
	unsigned sorted[FMAXC * 4], best[FMAXC * 4], mine[FMAXC * 4];
	unsigned nmine = 0;

	for (i = 0; i < f->nn; i++) {
		unsigned kv = level == f->nl ? i : f->n[i].path[level];
		bool in = true;

		for (l = 0; l < level; l++)
			in = in && f->n[i].path[l] == path[l];
		if (!in)
			continue;
		for (c = 0; c < nc; c++)
			if (key[c] == kv)
				break;
		if (c == nc) {
			key[nc] = kv;
			slots[nc] = got[nc] = 0;
			nc++;
		}
		slots[c] += (8 - f->n[i].busy) / f->gpus;
		got[c] += f->n[i].got;
	}
	for (c = 0; c < nc; c++) {
		k += got[c];
		used += got[c] > 0;
	}
	if (used >= 2)
		inside = true;
	if (inside) {
		nfill_units++;
		memcpy(sorted, slots, nc * sizeof(unsigned));
		qsort(sorted, nc, sizeof(unsigned), udesc);
		for (m = 0, sum = 0; m < nc && sum < k; m++)
			sum += sorted[m];
		if (used != m && nfill_bad[0]++ < MAXDIAG)
			printf("# fill case %u: depth %u: %u children used, "
			       "%u would do\n", curcase, level, used, m);
		for (c = 0; c < nc; c++)
			if (!got[c])
				mine[nmine++] = slots[c];
		qsort(mine, nmine, sizeof(unsigned), udesc);
		if (used == m && nc <= FMAXC && level == f->nl &&
		    fill_brute(slots, nc, m, k, best) &&
		    memcmp(mine, best, nmine * sizeof(unsigned)) &&
		    nfill_bad[1]++ < MAXDIAG)
			printf("# fill case %u: depth %u: untouched children "
			       "of %u, %u, ... slots; %u, %u, ... possible\n",
			       curcase, level, mine[0],
			       nmine > 1 ? mine[1] : 0, best[0],
			       nmine > 1 ? best[1] : 0);
	}
	if (level == f->nl)
		return;
	for (c = 0; c < nc; c++)
		if (got[c]) {
			unsigned p2[3] = { path[0], path[1], path[2] };

			p2[level] = key[c];
			fill_check_unit(f, level + 1, p2, inside);
		}
}

static void fill_case(unsigned caseno)
{
	static fcase f;
	tg_topology *t;
	tg_gang *g;
	tg_decision *d = NULL;
	tg_shape sh;
	unsigned i, ps;
	const unsigned root[3] = { 0, 0, 0 };

	curcase = caseno;
	fill_gen(&f);
	t = fill_build(&f);
	g = tg_gang_create("default/fill");
	memset(&sh, 0, sizeof(sh));
	sh.v[TG_RES_GPU] = f.gpus;
	if (!t || !g || tg_gang_add_podset(g, "w", &sh, f.members, &ps) ||
	    tg_place(t, g, &d, NULL)) {
		nfill_bad[0]++;
		printf("# fill case %u: could not build or place\n", caseno);
		goto out;
	}
	nfill_cases++;
	if (tg_decision_status(d) != TG_STATUS_PLACED)
		goto out;
	nfill_placed++;
	for (i = 0; i < tg_decision_nplacements(d); i++)
		f.n[tg_decision_placement(d, i)->node].got++;
	fill_check_unit(&f, 0, root, false);
out:
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);
}

/*
 * (j) the least span at every layer: small 3-layer fabrics (2-3, 1-3,
 * 1-2 children, 1-2 nodes of 8 GPUs under each lowest domain, half of
 * them full, the rest 0-8 GPUs busy), a gang of one pod set of G GPUs a
 * member.  In the lowest domain holding every member, the decision's
 * span (domains used at each layer below it, then nodes) equals the
 * lexicographic least over every set of nodes there that can take the
 * members (slots >= members >= nodes; brute force over the subsets of
 * the at most FLEX_MAXN nodes with room, larger cases are skipped).
 */
#define FLEX_MAXN	16

static unsigned nlex_cases, nlex_checked, nlex_bad;

static void lex_gen(fcase *f)
{
	unsigned fan[3];

	f->nl = 3;
	fan[0] = 2 + rn(2);
	fan[1] = 1 + rn(3);
	fan[2] = 1 + rn(2);
	gen_nodes(f, fan, 3, 2, 2, 8);
}

/* The span of the nodes in[0 .. n) (indices into f->n) below depth
 * \p top: distinct domains at each depth top .. nl - 1, then nodes. */
static void lex_span(const fcase *f, unsigned top, const unsigned *in,
		     unsigned n, unsigned *span)
{
	unsigned l, i, j, cnt;

	for (l = top; l < f->nl; l++) {
		for (i = 0, cnt = 0; i < n; i++) {
			for (j = 0; j < i; j++) {
				unsigned x;

				for (x = 0; x <= l; x++)
					if (f->n[in[i]].path[x] !=
					    f->n[in[j]].path[x])
						break;
				if (x > l)
					break;	/* same domain as an earlier */
			}
			cnt += j == i;
		}
		span[l - top] = cnt;
	}
	span[f->nl - top] = n;
}

static void lex_check(const fcase *f)
{
	unsigned path[3] = { 0, 0, 0 }, top, i, l, n = 0, ng = 0;
	unsigned node[FMAXN], gotn[FMAXN] = { 0 }, span[4], best[4], cur[4];
	unsigned sub[FLEX_MAXN], mask, d;
	bool found = false;

	/* the lowest domain holding every member */
	for (top = 0; top < f->nl; top++) {
		unsigned v = FMAXN;
		bool one = true;

		for (i = 0; i < f->nn; i++) {
			for (l = 0; l < top; l++)
				if (f->n[i].path[l] != path[l])
					break;
			if (l < top || !f->n[i].got)
				continue;
			if (v == FMAXN)
				v = f->n[i].path[top];
			one = one && f->n[i].path[top] == v;
		}
		if (!one)
			break;
		path[top] = v;
	}
	for (i = 0; i < f->nn; i++) {
		for (l = 0; l < top; l++)
			if (f->n[i].path[l] != path[l])
				break;
		if (l < top)
			continue;
		if (f->n[i].got)
			gotn[ng++] = i;
		if ((8 - f->n[i].busy) / f->gpus > 0)
			node[n++] = i;
	}
	if (n > FLEX_MAXN)
		return;
	nlex_checked++;
	d = f->nl - top + 1;
	lex_span(f, top, gotn, ng, span);
	for (mask = 1; mask < (1u << n); mask++) {
		unsigned k = 0, slots = 0;

		for (i = 0; i < n; i++)
			if (mask >> i & 1) {
				sub[k++] = node[i];
				slots += (8 - f->n[node[i]].busy) / f->gpus;
			}
		if (k > f->members || slots < f->members)
			continue;
		lex_span(f, top, sub, k, cur);
		for (l = 0; found && l < d && cur[l] == best[l]; l++)
			;
		if (!found || (l < d && cur[l] < best[l]))
			memcpy(best, cur, sizeof(cur));
		found = true;
	}
	if (found && !memcmp(span, best, d * sizeof(unsigned)))
		return;
	if (nlex_bad++ < MAXDIAG)
		printf("# lex case %u: %u members below depth %u: span "
		       "%u/%u/%u/%u, least %u/%u/%u/%u\n", curcase,
		       f->members, top, span[0], d > 1 ? span[1] : 0,
		       d > 2 ? span[2] : 0, d > 3 ? span[3] : 0, best[0],
		       d > 1 ? best[1] : 0, d > 2 ? best[2] : 0,
		       d > 3 ? best[3] : 0);
}

static void lex_case(unsigned caseno)
{
	static fcase f;
	tg_topology *t;
	tg_gang *g;
	tg_decision *d = NULL;
	tg_shape sh;
	unsigned i, ps;

	curcase = caseno;
	lex_gen(&f);
	t = fill_build(&f);
	g = tg_gang_create("default/lex");
	memset(&sh, 0, sizeof(sh));
	sh.v[TG_RES_GPU] = f.gpus;
	if (!t || !g || tg_gang_add_podset(g, "w", &sh, f.members, &ps) ||
	    tg_place(t, g, &d, NULL)) {
		nlex_bad++;
		printf("# lex case %u: could not build or place\n", caseno);
		goto out;
	}
	if (tg_decision_status(d) != TG_STATUS_PLACED)
		goto out;
	nlex_cases++;
	for (i = 0; i < tg_decision_nplacements(d); i++)
		f.n[tg_decision_placement(d, i)->node].got++;
	lex_check(&f);
out:
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);
}

/*
 * ---- Kubernetes spread and pod anti-affinity, through the loader ----
 *
 * Random dumps (3-10 nodes over spines and blocks, running pods with
 * labels and some with required anti-affinity, pending lone pods with
 * hard or soft topologySpreadConstraints and anti-affinity) are loaded
 * with tg_k8s and decided in order, each decision applied.  Checked:
 *  (s) a pod placed under a DoNotSchedule spread: the matching pods in
 *      its domain before it, + 1 when it matches, - the minimum over
 *      every domain, is at most maxSkew (running pods and pods placed
 *      earlier counted);
 *  (t) no required anti-affinity broken in either direction: no pod
 *      with a term shares the term's domain with a pod it selects,
 *      whenever either of the two was placed by topogang.
 */
#define KP_MAXN	10
#define KP_MAXP	16

typedef struct kpod_rec {
	char name[16];
	unsigned ns, app, node;		/* node: KP_MAXN = not placed */
	bool pending, placed;
	bool anti;
	unsigned anti_key, anti_app;	/* key: 0 host, 1 spine, 2 block */
	bool spread, hard;
	unsigned sp_key, sp_app, sp_skew;
} kpod_rec;

static const char *const kp_ns[] = { "default", "other" };
static const char *const kp_app[] = { "a", "b", "c" };
static const char *const kp_key[] = { "kubernetes.io/hostname",
				      "example.com/spine",
				      "example.com/block" };

static unsigned kp_dom(const unsigned (*lab)[3], unsigned node, unsigned key)
{
	return key == 0 ? node : lab[node][key];
}

static unsigned kspread_bad, kanti_bad, kspread_n, kanti_n, kplaced;

static void kp_case(unsigned caseno)
{
	static char text[65536];
	static const char *const levels[] = { "example.com/spine",
					      "example.com/block" };
	unsigned nn = 3 + rn(8), np = 2 + rn(KP_MAXP - 2), i, j, k;
	unsigned lab[KP_MAXN][3];	/* [1] spine, [2] block (global) */
	kpod_rec pod[KP_MAXP];
	size_t len = 0;
	tg_k8s *kk = tg_k8s_create();
	tg_topology *t = NULL;
	tg_errinfo ei;

#define OUT(...) (len += (size_t)snprintf(text + len, sizeof(text) - len, \
					   __VA_ARGS__))
	for (i = 0; i < nn; i++) {
		lab[i][1] = rn(3);
		lab[i][2] = lab[i][1] * 2 + rn(2);	/* blocks unique */
		OUT("---\napiVersion: v1\nkind: Node\nmetadata: {name: n%u, "
		    "labels: {kubernetes.io/hostname: n%u, example.com/spine: "
		    "s%u, example.com/block: b%u}}\nstatus: {allocatable: "
		    "{cpu: '%u', pods: '110'}}\n", i, i, lab[i][1], lab[i][2],
		    1 + rn(3));
	}
	for (i = 0; i < np; i++) {
		kpod_rec *p = &pod[i];

		memset(p, 0, sizeof(*p));
		snprintf(p->name, sizeof(p->name), "p%02u", i);
		p->ns = chance(4);
		p->app = rn(3);
		p->pending = chance(2);
		p->node = p->pending ? KP_MAXN : rn(nn);
		p->anti = chance(3);
		p->anti_key = rn(3);
		p->anti_app = rn(3);
		p->spread = p->pending && !chance(3);
		p->hard = !chance(4);
		p->sp_key = rn(3);
		p->sp_app = chance(3) ? rn(3) : p->app;
		p->sp_skew = 1 + chance(3);
		OUT("---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s, "
		    "namespace: %s, labels: {app: %s}, creationTimestamp: "
		    "'2026-01-01T00:00:%02uZ'}\nspec:\n", p->name,
		    kp_ns[p->ns], kp_app[p->app], i);
		if (!p->pending)
			OUT("  nodeName: n%u\n", p->node);
		OUT("  containers:\n  - name: c\n    resources: {requests: "
		    "{cpu: '%s'}}\n", p->pending ? "1" : "100m");
		if (p->anti)
			OUT("  affinity:\n    podAntiAffinity:\n      "
			    "requiredDuringSchedulingIgnoredDuringExecution:\n"
			    "      - labelSelector: {matchLabels: {app: %s}}\n"
			    "        topologyKey: %s\n", kp_app[p->anti_app],
			    kp_key[p->anti_key]);
		if (p->spread)
			OUT("  topologySpreadConstraints:\n  - maxSkew: %u\n"
			    "    topologyKey: %s\n    whenUnsatisfiable: %s\n"
			    "    labelSelector: {matchLabels: {app: %s}}\n",
			    p->sp_skew, kp_key[p->sp_key], p->hard ?
			    "DoNotSchedule" : "ScheduleAnyway",
			    kp_app[p->sp_app]);
		if (!p->pending)
			OUT("status: {phase: Running}\n");
	}
#undef OUT
	if (len >= sizeof(text) ||
	    tg_k8s_set_levels(kk, levels, 2) ||
	    tg_k8s_add(kk, text, len, "kprop", &ei) ||
	    tg_k8s_build(kk, &t, &ei)) {
		fail(0, "case %u: the dump does not load: %s", caseno,
		     ei.msg);
		tg_k8s_destroy(kk);
		return;
	}
	for (i = 0; i < tg_k8s_ngangs(kk); i++) {
		tg_gang *g = tg_k8s_gang(kk, i);
		tg_decision *d = NULL;
		kpod_rec *p = NULL;
		tg_node_id n;

		for (j = 0; j < np; j++) {
			char full[40];

			snprintf(full, sizeof(full), "%s/%s", kp_ns[pod[j].ns],
				 pod[j].name);
			if (!strcmp(full, tg_gang_name(g)))
				p = &pod[j];
		}
		if (!p || tg_place(t, g, &d, &ei) || !d) {
			fail(0, "case %u: gang %s: %s", caseno,
			     tg_gang_name(g), p ? ei.msg : "unknown");
			continue;
		}
		if (tg_decision_status(d) != TG_STATUS_PLACED) {
			tg_decision_free(d);
			continue;
		}
		n = tg_decision_placement(d, 0)->node;
		sscanf(tg_topology_node_name(t, n), "n%u", &p->node);
		if (p->spread && p->hard) {
			unsigned cnt[KP_MAXN] = { 0 }, mn = UINT32_MAX;
			bool seen[KP_MAXN] = { false };

			for (j = 0; j < np; j++)
				if (&pod[j] != p && pod[j].node < nn &&
				    pod[j].ns == p->ns &&
				    pod[j].app == p->sp_app)
					cnt[kp_dom(lab, pod[j].node,
						   p->sp_key)]++;
			for (j = 0; j < nn; j++)
				seen[kp_dom(lab, j, p->sp_key)] = true;
			for (j = 0; j < KP_MAXN; j++)
				if (seen[j] && cnt[j] < mn)
					mn = cnt[j];
			kspread_n++;
			if (cnt[kp_dom(lab, p->node, p->sp_key)] +
			    (p->app == p->sp_app) - mn > p->sp_skew) {
				kspread_bad++;
				if (kspread_bad <= MAXDIAG)
					diag("case %u: %s on n%u: skew over "
					     "%u on %s", caseno, p->name,
					     p->node, p->sp_skew,
					     kp_key[p->sp_key]);
			}
		}
		p->placed = true;
		kplaced++;
		tg_decision_apply(t, g, d);
		tg_decision_free(d);
	}
	for (i = 0; i < np; i++) {
		for (j = 0; j < np; j++) {
			const kpod_rec *a = &pod[i], *b = &pod[j];

			if (i == j || !a->anti || a->node >= nn ||
			    b->node >= nn || (!a->placed && !b->placed))
				continue;
			k = a->anti_key;
			kanti_n++;
			if (b->ns == a->ns && b->app == a->anti_app &&
			    kp_dom(lab, a->node, k) == kp_dom(lab, b->node, k)) {
				kanti_bad++;
				if (kanti_bad <= MAXDIAG)
					diag("case %u: %s (n%u) avoids app=%s "
					     "by %s, %s is on n%u", caseno,
					     a->name, a->node,
					     kp_app[a->anti_app], kp_key[k],
					     b->name, b->node);
			}
		}
	}
	tg_topology_destroy(t);
	tg_k8s_destroy(kk);
}

static void kp_run(uint64_t seed, unsigned ncases)
{
	unsigned i;

	for (i = 0; i < ncases; i++) {
		rng = (seed + 7) * 0x9e3779b97f4a7c15ull ^
		      (i + 1) * 0xbf58476d1ce4e5b9ull;
		if (!rng)
			rng = 1;
		rnd();
		kp_case(i);
	}
	ok(!kspread_bad, "k8s: DoNotSchedule skew never exceeded, running "
	   "and earlier pods counted (%u spread pods placed, %u over)",
	   kspread_n, kspread_bad);
	ok(!kanti_bad, "k8s: required anti-affinity never broken in either "
	   "direction (%u pairs, %u broken)", kanti_n, kanti_bad);
	ok(kspread_n >= ncases / 4 && kplaced >= ncases,
	   "k8s: the generator places pods (%u) and spread ones (%u)",
	   kplaced, kspread_n);
}

static bool env_u64(const char *name, uint64_t *out)
{
	const char *s = getenv(name);
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return false;
	v = strtoull(s, &end, 0);
	if (*end) {
		diag("ignoring %s=%s: not a number", name, s);
		return false;
	}
	*out = v;
	return true;
}

/*
 * Runs \p fn on cases 0 .. ncases - 1 (only case \p only when \p one),
 * each from its own seed: (seed + salt) * golden ^ (case + 1) * mul, so
 * that case N replays alone.
 */
static void run_cases(void (*fn)(unsigned), uint64_t seed, uint64_t salt,
		      uint64_t mul, uint64_t ncases, bool one, uint64_t only)
{
	unsigned i;

	for (i = 0; i < ncases; i++) {
		if (one && i != only)
			continue;
		rng = (seed + salt) * 0x9e3779b97f4a7c15ull ^ (i + 1) * mul;
		if (!rng)
			rng = 1;
		rnd();
		fn(i);
	}
}

int main(void)
{
	uint64_t seed = DEFAULT_SEED, ncases = DEFAULT_CASES, v, only = 0;
	unsigned i;
	bool one = false;

	if (env_u64("TG_SEED", &v))
		seed = v;
	if (env_u64("TG_CASES", &v) && v > 0 && v < 1000000)
		ncases = v;
	if (env_u64("TG_CASE", &v) && v < ncases) {
		one = verbose = true;
		only = v;
	}
	diag("seed %llu, %llu cases (TG_SEED=%llu replays them)",
	     (unsigned long long)seed, (unsigned long long)ncases,
	     (unsigned long long)seed);
	run_cases(one_case, seed, 1, 0xbf58476d1ce4e5b9ull, ncases, one, only);
	/* the fill's properties, on their own fabrics */
	run_cases(fill_case, seed, 7, 0x94d049bb133111ebull, ncases, one,
		  only);
	ok(!nfill_bad[0], "(h) fill: fewest children at every layer: %u "
	   "gangs placed of %u, %u domains checked, %u violations",
	   nfill_placed, nfill_cases, nfill_units, nfill_bad[0]);
	ok(!nfill_bad[1], "(i) fill: the untouched nodes are the largest "
	   "a fewest-nodes choice leaves: %u violations", nfill_bad[1]);
	run_cases(lex_case, seed, 11, 0x94d049bb133111ebull, ncases, one,
		  only);
	ok(!nlex_bad, "(j) fill: the least span at every layer (domains, "
	   "then nodes): %u gangs placed, %u brute-forced, %u violations",
	   nlex_cases, nlex_checked, nlex_bad);
	ok(one || nlex_checked >= ncases / 4,
	   "the least-span cases brute-force many gangs (%u)", nlex_checked);
	ok(nfill_placed >= ncases / 2 && nfill_units >= ncases,
	   "the fill cases place most gangs and check many domains");
	if (!one)
		kp_run(seed, (unsigned)(ncases < 2000 ? ncases : 2000));
	for (i = 0; i < NPROP; i++)
		ok(!nbad[i], "%s: %llu cases, %u violations", prop_name[i],
		   (unsigned long long)ncases, nbad[i]);
	diag("%u placed, %u preempting (%u victims in all), %u "
	     "unschedulable, %u brute-force checks (%u fit)", nplaced,
	     npreempt, nvictims, nunsched, nbrute, nbrute_fit);
	/* the generator must keep exercising both outcomes */
	ok(nplaced >= ncases / 5, "at least a fifth of the gangs placed "
	   "(%u)", nplaced);
	ok(nunsched >= ncases / 10, "at least a tenth unschedulable (%u)",
	   nunsched);
	ok(npreempt >= ncases / 100, "at least one in 100 preempting (%u)",
	   npreempt);
	ok(nbrute >= ncases / 5 && nbrute_fit >= nbrute / 4 &&
	   nbrute - nbrute_fit >= nbrute / 10,
	   "a fifth of the cases brute-forced, both outcomes (%u, %u fit)",
	   nbrute, nbrute_fit);
	return done_testing();
}
