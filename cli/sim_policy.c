/*
 * cli/sim_policy.c - the placement policies the simulator compares.
 *
 * Each baseline re-implements the published behaviour of the scheduler
 * users would pick instead of topogang, from its source as read for
 * ../shared/research/anchors.md (commits listed there) and the seed
 * documents; where a scheduler has knobs, the baseline takes the
 * configuration that is kindest to it, and says so.  Common ground, for
 * every policy (see sim.h): whole jobs are admitted or not (gang
 * admission in front of the pod-by-pod schedulers), one member per node,
 * members ask for GPUs only (pods in training jobs ask CPU and memory
 * in proportion to their GPUs, so scoring GPUs scores those too), and
 * eviction is instantaneous.
 *
 *  topogang      tg_place(): the core, with its gang-aware preemption.
 *  k8s-default   kube-scheduler's default profile, pod by pod.
 *  pod-affinity  the same with a preferred pod affinity to the job's own
 *                pods on the rack (lowest) layer.
 *  slurm-tree    Slurm select/cons_tres + topology/tree best fit over
 *                leaf switches, with partition_prio preemption.
 *  koordinator   Koordinator's network-topology gang solver (offer slots,
 *                min-waste) and its job-level preemption, which evicts
 *                pods, not whole gangs.
 *  random        every member on a uniformly random node that fits.
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

enum { P_TOPOGANG, P_K8S, P_AFFINITY, P_SLURM, P_KOORD, P_RANDOM, P_N };

const char *const sim_policy_names[] = {
	"topogang", "k8s-default", "pod-affinity", "slurm-tree",
	"koordinator", "random", NULL
};

static int policy_kind(const char *name)
{
	int i;

	for (i = 0; name && i < P_N; i++)
		if (!strcmp(name, sim_policy_names[i]))
			return i;
	return -1;
}

bool sim_policy_known(const char *name)
{
	return policy_kind(name) >= 0;
}

bool sim_policy_preempts(const char *name)
{
	int k = policy_kind(name);

	return k >= 0 && k != P_RANDOM;
}

/* A pod of a running job on a node, for the preemption of baselines. */
typedef struct occ {
	unsigned job;
	unsigned gpus;
	int64_t prio;
	double start;
	bool gone;	/* evicted in this attempt */
} occ;

/* Koordinator's tree: one vertex per (layer, bare label value). */
typedef struct kvert {
	uint32_t parent;	/* vertex; the root is its own parent */
	uint32_t first, n;	/* children: kchild[first .. first+n) */
	unsigned layer;		/* nlayers for a node vertex */
	const char *name;
	tg_node_id node;	/* node vertices */
} kvert;

struct sim_policy {
	int kind;
	const sim_world *w;
	uint64_t rng;
	/* scratch, per attempt */
	int32_t *fr;		/* free GPUs */
	uint8_t *used;		/* node holds a member of this job */
	uint8_t *vmark;		/* job is a victim */
	unsigned *vlist, nv;
	/* occupants of nodes (preemption), CSR */
	uint32_t *ohead;	/* nnodes + 1 */
	occ *occ;
	unsigned nocc, capocc;
	/* pod affinity: members of this job per rack */
	uint32_t *affcnt;	/* ndomains */
	/* slurm-tree */
	uint32_t *dpar;		/* domain parent, root its own */
	unsigned *dlvl;		/* Slurm switch level: leaf 0 */
	uint32_t *leaves, nleaves;	/* leaf domains in order */
	uint32_t *lnodes, *lhead;	/* CSR: nodes of each leaf */
	uint32_t *lanc;		/* [leaf * (nlayers + 1) + k] */
	uint32_t *cnt;		/* per domain */
	uint64_t *dist;		/* per leaf */
	tg_node_id *sel;	/* selected nodes */
	unsigned *cand, *ovl;
	/* koordinator */
	kvert *kv;
	uint32_t nkv, *kchild, *ksort;
	int64_t *kslot, *kscore, *kcost;
	uint32_t *nodevert;	/* node -> its vertex, TG_NONE if dropped */
	uint32_t *kcands;
	tg_node_id *korder;
	int64_t *ktake;
	unsigned nkorder;
};

/* ---- common scratch ---- */

static void scratch_reset(sim_policy *p)
{
	const sim_world *w = p->w;
	unsigned i;

	memcpy(p->fr, w->free, w->nnodes * sizeof(*p->fr));
	memset(p->used, 0, w->nnodes);
	for (i = 0; i < p->nv; i++)
		p->vmark[p->vlist[i]] = 0;
	p->nv = 0;
}

static void mark_victim(sim_policy *p, unsigned job)
{
	if (!p->vmark[job]) {
		p->vmark[job] = 1;
		p->vlist[p->nv++] = job;
	}
}

static void emit_victims(sim_policy *p, sim_choice *c)
{
	unsigned i;

	for (i = 0; i < p->nv; i++)
		c->victims[i] = p->vlist[i];
	c->nvictims = p->nv;
}

/* Builds the per-node occupants from the running jobs (start order). */
static tg_err build_occ(sim_policy *p)
{
	const sim_world *w = p->w;
	unsigned i, m, n, tot = 0;

	memset(p->ohead, 0, (w->nnodes + 1) * sizeof(*p->ohead));
	for (i = 0; i < w->nrun; i++) {
		const sim_live *lv = &w->live[w->run[i]];

		for (m = 0; m < lv->nmembers; m++)
			p->ohead[lv->nodes[m] + 1]++;
		tot += lv->nmembers;
	}
	if (tot > p->capocc) {
		occ *no = realloc(p->occ, (tot + 1) * sizeof(*no));

		if (!no)
			return TG_ENOMEM;
		p->occ = no;
		p->capocc = tot;
	}
	for (n = 0; n < w->nnodes; n++)
		p->ohead[n + 1] += p->ohead[n];
	for (i = 0; i < w->nrun; i++) {
		unsigned job = w->run[i];
		const sim_live *lv = &w->live[job];

		for (m = 0; m < lv->nmembers; m++) {
			/* fill from the end of the node's range, then
			 * ohead[n] ends at the range's start */
			occ *o = &p->occ[--p->ohead[lv->nodes[m] + 1]];

			o->job = job;
			o->gpus = lv->gpus;
			o->prio = lv->priority;
			o->start = lv->start;
			o->gone = false;
		}
	}
	/* each node's cursor ran from its range's end down to its start,
	 * so ohead[n + 1] now holds the start of node n: shift down */
	for (n = 0; n < w->nnodes; n++)
		p->ohead[n] = p->ohead[n + 1];
	p->ohead[w->nnodes] = tot;
	p->nocc = tot;
	return TG_OK;
}

/* ---- topogang ---- */

static tg_err place_topogang(sim_policy *p, const sim_req *r, sim_choice *c,
			     bool *placed, tg_errinfo *ei)
{
	tg_gang *g;
	tg_decision *d = NULL;
	tg_errinfo e2;
	tg_shape sh;
	unsigned ps, i;
	tg_err err = TG_ENOMEM;

	*placed = false;
	if (!(g = tg_gang_create(r->name)))
		return TG_ENOMEM;
	memset(&sh, 0, sizeof(sh));
	sh.v[TG_RES_GPU] = r->gpus;
	tg_gang_set_priority(g, r->priority);
	tg_gang_set_can_preempt(g, r->may_preempt);
	if ((err = tg_gang_add_podset(g, "m", &sh, r->members, &ps)) ||
	    (r->members > 1 &&
	     (err = tg_gang_podset_set_max_per_node(g, ps, 1))))
		goto out;
	e2.msg[0] = '\0';
	if ((err = tg_place(p->w->t, g, &d, &e2))) {
		sim_seterr(ei, "topogang: %s: %s", r->name, e2.msg);
		goto out;
	}
	if (tg_decision_status(d) == TG_STATUS_UNSCHEDULABLE)
		goto out;
	if (tg_decision_nplacements(d) != r->members) {
		sim_seterr(ei, "topogang: %s: %u placements for %u members",
		       r->name, tg_decision_nplacements(d), r->members);
		err = TG_ESTATE;
		goto out;
	}
	for (i = 0; i < r->members; i++) {
		const tg_placement *pl = tg_decision_placement(d, i);

		c->node[i] = pl->node;
		c->gpus[i] = pl->gpus;
	}
	scratch_reset(p);
	for (i = 0; i < tg_decision_nvictims(d); i++) {
		const tg_victim *v = tg_decision_victim(d, i);
		unsigned job;

		if (!sim_gang_job(v->gang, &job) || job >= p->w->njobs) {
			sim_seterr(ei, "topogang: %s: victim gang '%s' is no job",
			       r->name, v->gang ? v->gang : "(none)");
			err = TG_ESTATE;
			goto out;
		}
		mark_victim(p, job);
	}
	emit_victims(p, c);
	c->bw = tg_decision_bandwidth_gbps(d);
	*placed = true;
out:
	tg_decision_free(d);
	tg_gang_destroy(g);
	return err;
}

/* ---- kube-scheduler (k8s-default, pod-affinity) ----
 *
 * Source: kubernetes pkg/scheduler (v1.30): the default profile filters
 * with NodeResourcesFit and scores with NodeResourcesFit LeastAllocated
 * (weight 1): (allocatable - requested) * 100 / allocatable in integer
 * arithmetic, the pod's own request included; InterPodAffinity (weight
 * 2) adds, for a preferred term of weight 100, 100 per matching pod in
 * the node's domain of the term's topology key, normalized over the
 * feasible nodes to 0..100 ((s - min) * 100 / (max - min), 0 when all
 * equal).  selectHost picks the highest total; ties are broken
 * uniformly at random (reservoir sampling).  Every node is scored
 * (percentageOfNodesToScore = 100, which GPU clusters set; the adaptive
 * default would score only some 40% of 1,024 nodes and be worse).
 * BalancedAllocation, TaintToleration, NodeAffinity and ImageLocality
 * give every node the same score here and are left out.
 *
 * Preemption (DefaultPreemption PostFilter), per pod: on every node,
 * remove every pod of lower priority; if the pod fits, add them back
 * most important first (higher priority, then earlier start) while it
 * still fits: the rest are that node's victims.  Pick the node with the
 * lowest highest victim priority, then the lowest sum of priorities,
 * then the fewest victims, then the latest earliest start among the
 * highest-priority victims, then the first.  Victims are pods: the job
 * a victim pod belongs to dies with it (a training job does not survive
 * losing a rank), which the engine counts; its other pods are still
 * there for the rest of this job's placement.
 */

static tg_node_id kube_pick(sim_policy *p, const sim_req *r, bool affinity)
{
	const sim_world *w = p->w;
	const unsigned nl = w->nlayers;
	int64_t amin = INT64_MAX, amax = INT64_MIN, best = INT64_MIN;
	tg_node_id pick = TG_NONE;
	unsigned n, cntmax = 0;

	if (affinity && nl) {
		for (n = 0; n < w->nnodes; n++) {
			uint32_t d = w->ndom[(size_t)n * nl + nl - 1];
			int64_t a;

			if (p->used[n] || p->fr[n] < (int32_t)r->gpus)
				continue;
			a = d == TG_NONE ? 0 : 100 * (int64_t)p->affcnt[d];
			if (a < amin)
				amin = a;
			if (a > amax)
				amax = a;
		}
	}
	for (n = 0; n < w->nnodes; n++) {
		int64_t s;

		if (p->used[n] || p->fr[n] < (int32_t)r->gpus)
			continue;
		s = ((int64_t)(p->fr[n] - (int32_t)r->gpus) * 100) /
		    (w->ngpus[n] ? w->ngpus[n] : 1);
		if (affinity && nl && amax > amin) {
			uint32_t d = w->ndom[(size_t)n * nl + nl - 1];
			int64_t a = d == TG_NONE ? 0 :
				    100 * (int64_t)p->affcnt[d];

			s += 2 * ((a - amin) * 100 / (amax - amin));
		}
		if (s > best) {
			best = s;
			pick = n;
			cntmax = 1;
		} else if (s == best) {
			cntmax++;
			if (sim_rand(&p->rng) % cntmax == 0)
				pick = n;
		}
	}
	return pick;
}

/* victims of one node for a pod of \p g GPUs and priority \p prio:
 * marks them in occ (gone), returns whether the pod fits that way */
typedef struct kcost {
	int64_t maxprio, sumprio;
	unsigned nvict;
	double start;	/* earliest start of the highest-priority victims */
} kcost;

static int occ_more_important(const void *pa, const void *pb)
{
	const occ *a = *(occ *const *)pa, *b = *(occ *const *)pb;

	if (a->prio != b->prio)
		return a->prio > b->prio ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->job < b->job ? -1 : a->job > b->job;
}

/* Lower-priority live occupants of node n, most important first, into
 * \p v; returns how many, and their GPUs in *sum. */
static unsigned lower_occ(sim_policy *p, tg_node_id n, int64_t prio,
			  occ **v, int64_t *sum)
{
	unsigned k = 0, i;

	*sum = 0;
	for (i = p->ohead[n]; i < p->ohead[n + 1]; i++) {
		occ *o = &p->occ[i];

		if (o->gone || o->prio >= prio)
			continue;
		v[k++] = o;
		*sum += o->gpus;
	}
	qsort(v, k, sizeof(*v), occ_more_important);
	return k;
}

static bool kcost_less(const kcost *a, const kcost *b)
{
	if (a->maxprio != b->maxprio)
		return a->maxprio < b->maxprio;
	if (a->sumprio != b->sumprio)
		return a->sumprio < b->sumprio;
	if (a->nvict != b->nvict)
		return a->nvict < b->nvict;
	return a->start > b->start;
}

static tg_err kube_preempt(sim_policy *p, const sim_req *r, tg_node_id *out)
{
	const sim_world *w = p->w;
	occ **v = NULL;
	kcost best, c;
	tg_node_id bn = TG_NONE;
	unsigned n, k, i, maxk = 0;
	int64_t sum, avail;

	*out = TG_NONE;
	memset(&best, 0, sizeof(best));
	for (n = 0; n < w->nnodes; n++)
		if (p->ohead[n + 1] - p->ohead[n] > maxk)
			maxk = p->ohead[n + 1] - p->ohead[n];
	if (!(v = malloc((maxk + 1) * sizeof(*v))))
		return TG_ENOMEM;
	for (n = 0; n < w->nnodes; n++) {
		if (p->used[n] || w->ngpus[n] < r->gpus)
			continue;
		k = lower_occ(p, n, r->priority, v, &sum);
		avail = p->fr[n] + sum;
		if (!k || avail < (int64_t)r->gpus)
			continue;
		memset(&c, 0, sizeof(c));
		c.maxprio = INT64_MIN;
		for (i = 0; i < k; i++) {
			if (avail - v[i]->gpus >= (int64_t)r->gpus) {
				avail -= v[i]->gpus;	/* reprieved */
				continue;
			}
			if (v[i]->prio > c.maxprio) {
				c.maxprio = v[i]->prio;
				c.start = v[i]->start;
			} else if (v[i]->prio == c.maxprio &&
				   v[i]->start < c.start) {
				c.start = v[i]->start;
			}
			c.sumprio += v[i]->prio;
			c.nvict++;
		}
		if (!c.nvict)
			continue;	/* fits already: not a candidate */
		if (bn == TG_NONE || kcost_less(&c, &best)) {
			best = c;
			bn = n;
		}
	}
	if (bn != TG_NONE) {
		k = lower_occ(p, bn, r->priority, v, &sum);
		avail = p->fr[bn] + sum;
		for (i = 0; i < k; i++) {
			if (avail - v[i]->gpus >= (int64_t)r->gpus) {
				avail -= v[i]->gpus;
				continue;
			}
			v[i]->gone = true;
			p->fr[bn] += (int32_t)v[i]->gpus;
			mark_victim(p, v[i]->job);
		}
	}
	free(v);
	*out = bn;
	return TG_OK;
}

static tg_err place_kube(sim_policy *p, const sim_req *r, sim_choice *c,
			 bool *placed, bool affinity)
{
	const sim_world *w = p->w;
	const unsigned nl = w->nlayers;
	bool occ_built = false;
	unsigned i;
	tg_err err = TG_OK;

	*placed = false;
	scratch_reset(p);
	for (i = 0; i < r->members; i++) {
		tg_node_id n = kube_pick(p, r, affinity);

		if (n == TG_NONE && r->may_preempt) {
			if (!occ_built && (err = build_occ(p)))
				goto out;
			occ_built = true;
			if ((err = kube_preempt(p, r, &n)))
				goto out;
		}
		if (n == TG_NONE)
			goto out;
		c->node[i] = n;
		p->fr[n] -= (int32_t)r->gpus;
		p->used[n] = 1;
		if (affinity && nl) {
			uint32_t d = w->ndom[(size_t)n * nl + nl - 1];

			if (d != TG_NONE)
				p->affcnt[d]++;
		}
	}
	emit_victims(p, c);
	*placed = true;
out:
	if (affinity && nl)
		for (unsigned k = 0; k < i; k++) {
			uint32_t d = w->ndom[(size_t)c->node[k] * nl + nl - 1];

			if (d != TG_NONE)
				p->affcnt[d]--;
		}
	return err;
}

/* ---- slurm-tree ----
 *
 * Source: Slurm 22.05 src/plugins/select/cons_tres/job_test.c,
 * _eval_nodes_topo() with _topo_choose_best_switch() and
 * _topo_compare_switches() (not master's topology/tree/eval_nodes_tree.c,
 * which differs), with one weight for every node and no required nodes.
 * The nodes that can take a member are counted under every switch; the
 * top switch is the highest-level one with enough of them (here the core
 * above the fabric's top layer, as a site lists it with SwitchName=core
 * Switches=...); then, until enough nodes are taken, every leaf switch
 * with nodes left is scanned in order, and a leaf replaces the best so
 * far when it is closer (sum of switch hops to the leaves taken so far)
 * and not a worse fit, or as close and a better fit.  Fit compares two
 * switches: both hold the rest -> fewer nodes is better; one does -> it;
 * neither -> compare their parents the same way while they differ, then
 * more nodes is better, then lower level.  The chosen leaf gives its
 * nodes in node order until enough, and only its own count drops to
 * zero: the counts of the switches above it stay those of the start, as
 * in 22.05.  Hops between two leaf switches are twice the levels up to
 * their common switch (topology/tree switches_dist).  Switches are in
 * the topology's order on full paths (Slurm keeps the file order; the
 * calibration fabric lists them so).
 *
 * Calibrated against slurmctld 22.05.8 (select/cons_tres, topology/tree)
 * with tests/slurm/slurm-replay.py and `topogang sim --calibrate`: see
 * docs/simulator.md.  The earlier reading (master's code: a closer leaf
 * must fit the whole rest, taken leaves leave their ancestors' counts)
 * disagreed with slurmctld on jobs spanning aggregation switches.
 *
 * Preemption (cons_tres job_test.c _run_now with preempt/partition_prio
 * or qos, PreemptMode=REQUEUE, preempt_reorder_count=1): candidates are
 * the running jobs of lower priority, lower priority first, then fewer
 * nodes; they are removed one at a time and the node selection is run
 * after each; when it fits, the candidates are reordered by how many of
 * their nodes lie in the selection (most first) and the removal starts
 * over once; the victims are the removed candidates that overlap the
 * final selection.  Victims are whole jobs.
 */

static int slurm_cmp(const sim_policy *p, uint32_t i, uint32_t j,
		     unsigned rem, bool *i_fit_out)
{
	for (;;) {
		bool ifit = p->cnt[i] >= rem, jfit = p->cnt[j] >= rem;

		*i_fit_out = ifit;
		if (ifit && jfit) {
			if (p->cnt[i] < p->cnt[j])
				return 1;
			if (p->cnt[i] > p->cnt[j])
				return -1;
			break;
		} else if (ifit) {
			return 1;
		} else if (jfit) {
			return -1;
		}
		if ((p->dpar[i] != i || p->dpar[j] != j) &&
		    p->dpar[i] != p->dpar[j]) {
			i = p->dpar[i];
			j = p->dpar[j];
			continue;
		}
		break;
	}
	if (p->cnt[i] > p->cnt[j])
		return 1;
	if (p->cnt[i] < p->cnt[j])
		return -1;
	if (p->dlvl[i] < p->dlvl[j])
		return 1;
	if (p->dlvl[i] > p->dlvl[j])
		return -1;
	return 0;
}

static uint64_t leaf_hops(const sim_policy *p, uint32_t a, uint32_t b)
{
	const unsigned k1 = p->w->nlayers + 1;
	unsigned k;

	if (a == b)
		return 0;
	for (k = 1; k < k1; k++)
		if (p->lanc[(size_t)a * k1 + k] == p->lanc[(size_t)b * k1 + k])
			break;
	return 2ull * k;
}

/* Selects \p m nodes with \p g free GPUs in p->fr into p->sel. */
static bool slurm_select(sim_policy *p, unsigned g, unsigned m)
{
	const sim_world *w = p->w;
	const unsigned nl = w->nlayers;
	unsigned n, l, rem = m, taken = 0, i, x;

	if (!nl) {
		/* no switches: nodes in order */
		for (n = 0; n < w->nnodes && taken < m; n++)
			if (p->fr[n] >= (int32_t)g)
				p->sel[taken++] = n;
		return taken == m;
	}
	memset(p->cnt, 0, w->ndomains * sizeof(*p->cnt));
	for (n = 0; n < w->nnodes; n++) {
		const uint32_t *dd = &w->ndom[(size_t)n * nl];

		if (p->fr[n] < (int32_t)g || dd[nl - 1] == TG_NONE)
			continue;
		p->cnt[0]++;
		for (l = 0; l < nl; l++)
			p->cnt[dd[l]]++;
	}
	if (p->cnt[0] < m)
		return false;
	memset(p->dist, 0, p->nleaves * sizeof(*p->dist));
	while (rem > 0) {
		int best = -1;

		for (i = 0; i < p->nleaves; i++) {
			uint32_t li = p->leaves[i];
			bool ifit;
			int tcs;

			if (!p->cnt[li])
				continue;
			if (best < 0) {
				best = (int)i;
				continue;
			}
			tcs = slurm_cmp(p, li, p->leaves[best], rem, &ifit);
			if ((p->dist[i] < p->dist[best] && tcs >= 0) ||
			    (p->dist[i] == p->dist[best] && tcs > 0))
				best = (int)i;
		}
		if (best < 0)
			break;
		for (i = 0; i < p->nleaves; i++)
			p->dist[i] += leaf_hops(p, (uint32_t)best, i);
		for (x = p->lhead[best]; x < p->lhead[best + 1] && rem; x++) {
			n = p->lnodes[x];
			if (p->fr[n] < (int32_t)g)
				continue;
			p->sel[taken++] = n;
			rem--;
		}
		p->cnt[p->leaves[best]] = 0;
	}
	return rem == 0;
}

static const sim_policy *cand_sort_p;

static int slurm_cand_cmp(const void *pa, const void *pb)
{
	const sim_policy *p = cand_sort_p;
	unsigned a = *(const unsigned *)pa, b = *(const unsigned *)pb;
	const sim_live *la = &p->w->live[a], *lb = &p->w->live[b];

	if (la->priority != lb->priority)
		return la->priority < lb->priority ? -1 : 1;
	if (la->nmembers != lb->nmembers)
		return la->nmembers < lb->nmembers ? -1 : 1;
	return 0;
}

static int slurm_ovl_cmp(const void *pa, const void *pb)
{
	const sim_policy *p = cand_sort_p;
	unsigned a = *(const unsigned *)pa, b = *(const unsigned *)pb;

	if (p->ovl[a] != p->ovl[b])
		return p->ovl[a] > p->ovl[b] ? -1 : 1;
	return 0;
}

/* stable sorts for small arrays: insertion sort with a comparator */
static void isort(unsigned *v, unsigned n,
		  int (*cmp)(const void *, const void *))
{
	unsigned i, j;

	for (i = 1; i < n; i++) {
		unsigned x = v[i];

		for (j = i; j > 0 && cmp(&v[j - 1], &x) > 0; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

static void release_job(sim_policy *p, unsigned job)
{
	const sim_live *lv = &p->w->live[job];
	unsigned m;

	for (m = 0; m < lv->nmembers; m++)
		p->fr[lv->nodes[m]] += (int32_t)lv->gpus;
}

static tg_err place_slurm(sim_policy *p, const sim_req *r, sim_choice *c,
			  bool *placed)
{
	const sim_world *w = p->w;
	unsigned i, nc = 0, pass, k, m;

	*placed = false;
	scratch_reset(p);
	if (slurm_select(p, r->gpus, r->members))
		goto done;
	if (!r->may_preempt)
		return TG_OK;
	for (i = 0; i < w->nrun; i++)
		if (w->live[w->run[i]].priority < r->priority)
			p->cand[nc++] = w->run[i];
	cand_sort_p = p;
	isort(p->cand, nc, slurm_cand_cmp);
	for (pass = 0; pass < 2; pass++) {
		bool fit = false;

		scratch_reset(p);
		for (k = 0; k < nc && !fit; k++) {
			release_job(p, p->cand[k]);
			fit = slurm_select(p, r->gpus, r->members);
		}
		if (!fit)
			return TG_OK;
		memset(p->used, 0, w->nnodes);
		for (i = 0; i < r->members; i++)
			p->used[p->sel[i]] = 1;
		for (i = 0; i < nc; i++) {
			const sim_live *lv = &w->live[p->cand[i]];

			p->ovl[p->cand[i]] = 0;
			for (m = 0; m < lv->nmembers; m++)
				p->ovl[p->cand[i]] += p->used[lv->nodes[m]];
		}
		if (pass == 0) {
			isort(p->cand, nc, slurm_ovl_cmp);
			continue;
		}
		/* victims: removed candidates overlapping the selection */
		for (i = 0; i < k; i++)
			if (p->ovl[p->cand[i]])
				mark_victim(p, p->cand[i]);
	}
done:
	for (i = 0; i < r->members; i++)
		c->node[i] = p->sel[i];
	emit_victims(p, c);
	*placed = true;
	return TG_OK;
}

/* ---- koordinator ----
 *
 * Source: koordinator-sh/koordinator
 * pkg/scheduler/frameworkext/networktopology/tree.go (the tree) and
 * pkg/scheduler/plugins/coscheduling/core/network_topology_solver.go
 * (PlacePods), anchors.md section 1.1.  The tree is built node by node
 * (node order) walking its labels top-down; a vertex is keyed by (layer,
 * bare label value) across the whole cluster, so two "block-1" under
 * two spines are one vertex, child of the first spine seen; nodes are
 * the leaf vertices.  Offer slots: how many members fit each node (one
 * member per node for a multi-member job), summed up the tree.
 * Candidates: from the root down, level by level, the vertices with
 * enough slots whose parent had enough; the deepest such level.  The
 * best candidate: fewer slots, compared vertex by vertex up the
 * ancestors, then the higher score, then the name (bytewise).
 * Distribution: inside it, children with more slots first (same chain
 * comparison), each taking what it can.  Jobs of one member go through
 * the same solver (a PodGroup of one).
 *
 * Preemption (coscheduling/core/preemption.go, job level): on the nodes
 * where the member does not fit, every pod of lower priority is removed
 * (in a copy); a node costs the sum over the distinct victim jobs on it
 * of their priority's rank among the victims' priorities; the solver is
 * run again with score = -cost; on each planned node the victims are
 * given back in descending priority while the planned pods still fit;
 * the rest are evicted.  Victims are pods: nothing makes the solver
 * prefer evicting whole gangs, and a gang that loses one pod dies
 * whole, which the engine counts.
 */

static int knamecmp(const kvert *a, const kvert *b)
{
	return strcmp(a->name, b->name);
}

/* topologyNodeLessFunc(a, b, lower): a sorts first */
static bool koord_less(const sim_policy *p, uint32_t a, uint32_t b,
		       bool lower)
{
	uint32_t x = a, y = b;
	int c;

	for (;;) {
		if (p->kslot[x] != p->kslot[y])
			return (p->kslot[x] < p->kslot[y]) == lower;
		if (x == 0 || y == 0)
			break;
		x = p->kv[x].parent;
		y = p->kv[y].parent;
	}
	if (p->kscore[a] != p->kscore[b])
		return p->kscore[a] > p->kscore[b];
	c = knamecmp(&p->kv[a], &p->kv[b]);
	return c < 0;
}

static const sim_policy *ksort_p;

static int koord_child_cmp(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	if (koord_less(ksort_p, a, b, false))
		return -1;
	if (koord_less(ksort_p, b, a, false))
		return 1;
	return a < b ? -1 : a > b;
}

static int64_t koord_distribute(sim_policy *p, uint32_t v, int64_t want)
{
	const kvert *kv = &p->kv[v];
	int64_t got = 0, t;
	uint32_t i, *ch;

	if (kv->layer == p->w->nlayers) {
		t = p->kslot[v] < want ? p->kslot[v] : want;
		if (t > 0) {
			p->korder[p->nkorder] = kv->node;
			p->ktake[p->nkorder++] = t;
		}
		return t > 0 ? t : 0;
	}
	ch = &p->ksort[kv->first];
	memcpy(ch, &p->kchild[kv->first], kv->n * sizeof(*ch));
	ksort_p = p;
	qsort(ch, kv->n, sizeof(*ch), koord_child_cmp);
	for (i = 0; i < kv->n; i++) {
		t = koord_distribute(p, ch[i], want - got);
		got += t;
	}
	return got;
}

/* offer slots of every vertex from p->fr, scores from p->kcost */
static void koord_slots(sim_policy *p, const sim_req *r, bool scored)
{
	const sim_world *w = p->w;
	unsigned n;

	memset(p->kslot, 0, p->nkv * sizeof(*p->kslot));
	memset(p->kscore, 0, p->nkv * sizeof(*p->kscore));
	for (n = 0; n < w->nnodes; n++) {
		uint32_t v = p->nodevert[n];
		int64_t s;

		if (v == TG_NONE)
			continue;
		s = p->fr[n] < (int32_t)r->gpus ? 0 :
		    r->members > 1 ? 1 : p->fr[n] / (int32_t)r->gpus;
		for (;;) {
			p->kslot[v] += s;
			if (scored)
				p->kscore[v] -= p->kcost[n];
			if (v == 0)
				break;
			v = p->kv[v].parent;
		}
	}
}

/* Runs the solver: fills p->korder/ktake; false when nothing fits. */
static bool koord_solve(sim_policy *p, const sim_req *r)
{
	uint32_t *cur = p->kcands, ncur = 1, ncand = 0, i, j, best;
	uint32_t *nxt, nnxt;

	p->nkorder = 0;
	/* level by level: kcands holds [current level | next level] */
	cur[0] = 0;
	best = TG_NONE;
	for (;;) {
		uint32_t nc = 0, bestl = TG_NONE;

		nxt = cur + ncur;
		nnxt = 0;
		for (i = 0; i < ncur; i++) {
			const kvert *kv = &p->kv[cur[i]];

			if (p->kslot[cur[i]] < (int64_t)r->members)
				continue;
			nc++;
			if (bestl == TG_NONE ||
			    koord_less(p, cur[i], bestl, true))
				bestl = cur[i];
			for (j = 0; j < kv->n; j++)
				nxt[nnxt++] = p->kchild[kv->first + j];
		}
		if (nc) {
			ncand = nc;
			best = bestl;
		}
		if (!nnxt)
			break;
		memmove(p->kcands, nxt, nnxt * sizeof(*nxt));
		cur = p->kcands;
		ncur = nnxt;
	}
	if (!ncand)
		return false;
	return koord_distribute(p, best, r->members) == (int64_t)r->members;
}

static tg_err koord_preempt(sim_policy *p, const sim_req *r, bool *ok)
{
	const sim_world *w = p->w;
	int64_t *prios = NULL, need;
	unsigned n, i, np = 0, k, x;
	occ **v = NULL;
	tg_err err = TG_ENOMEM;

	*ok = false;
	if ((err = build_occ(p)))
		return err;
	err = TG_ENOMEM;
	if (!(prios = malloc((p->nocc + 1) * sizeof(*prios))) ||
	    !(v = malloc((p->nocc + 1) * sizeof(*v))))
		goto out;
	/* the victims' distinct priorities, ascending: their ranks */
	for (i = 0; i < p->nocc; i++)
		if (p->occ[i].prio < r->priority)
			prios[np++] = p->occ[i].prio;
	for (i = 1; i < np; i++) {
		int64_t x2 = prios[i];

		for (k = i; k > 0 && prios[k - 1] > x2; k--)
			prios[k] = prios[k - 1];
		prios[k] = x2;
	}
	for (i = k = 0; i < np; i++)
		if (!k || prios[k - 1] != prios[i])
			prios[k++] = prios[i];
	np = k;
	/* nodes where the member does not fit: remove lower pods */
	for (n = 0; n < w->nnodes; n++) {
		int64_t sum;
		unsigned nvj, j;

		p->kcost[n] = 0;
		if (p->fr[n] >= (int32_t)r->gpus)
			continue;
		nvj = lower_occ(p, n, r->priority, v, &sum);
		p->fr[n] += (int32_t)sum;
		for (j = 0; j < nvj; j++) {
			unsigned rk = 0;

			while (rk < np && prios[rk] != v[j]->prio)
				rk++;
			p->kcost[n] += rk + 1;	/* one pod per job here */
		}
	}
	koord_slots(p, r, true);
	if (!koord_solve(p, r)) {
		err = TG_OK;
		goto out;
	}
	/* reprieve on planned nodes; restore the rest of the copy */
	need = r->gpus;
	for (x = 0; x < p->nkorder; x++) {
		tg_node_id nd = p->korder[x];
		int64_t sum, avail;
		unsigned nvj, j;

		if (w->free[nd] >= (int32_t)r->gpus)
			continue;	/* nothing was removed there */
		nvj = lower_occ(p, nd, r->priority, v, &sum);
		avail = w->free[nd] + sum;
		for (j = 0; j < nvj; j++) {
			if (avail - v[j]->gpus >= need * p->ktake[x]) {
				avail -= v[j]->gpus;
				continue;
			}
			mark_victim(p, v[j]->job);
		}
	}
	*ok = true;
	err = TG_OK;
out:
	free(prios);
	free(v);
	return err;
}

static tg_err place_koord(sim_policy *p, const sim_req *r, sim_choice *c,
			  bool *placed)
{
	unsigned x, t, i = 0;
	bool ok;
	tg_err err;

	*placed = false;
	scratch_reset(p);
	koord_slots(p, r, false);
	if (!koord_solve(p, r)) {
		if (!r->may_preempt)
			return TG_OK;
		if ((err = koord_preempt(p, r, &ok)))
			return err;
		if (!ok)
			return TG_OK;
	}
	for (x = 0; x < p->nkorder; x++)
		for (t = 0; t < p->ktake[x] && i < r->members; t++)
			c->node[i++] = p->korder[x];
	if (i != r->members)
		return TG_OK;
	emit_victims(p, c);
	*placed = true;
	return TG_OK;
}

/* Builds the Koordinator tree. */
static const sim_world *kb_w;

static int dom_val_cmp(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	int c = strcmp(tg_topology_domain_value(kb_w->t, a),
		       tg_topology_domain_value(kb_w->t, b));

	return c ? c : (a < b ? -1 : a > b);
}

static tg_err koord_build(sim_policy *p)
{
	const sim_world *w = p->w;
	const unsigned nl = w->nlayers;
	uint32_t *grp = NULL, *gvert = NULL, *doms = NULL, *cnt = NULL;
	uint32_t ngrp = 0, n, d, l, i, maxv;
	tg_err err = TG_ENOMEM;

	maxv = 1 + w->ndomains + w->nnodes;
	p->kv = calloc(maxv, sizeof(*p->kv));
	p->kchild = malloc(maxv * sizeof(*p->kchild));
	p->ksort = malloc(maxv * sizeof(*p->ksort));
	p->kslot = malloc(maxv * sizeof(*p->kslot));
	p->kscore = malloc(maxv * sizeof(*p->kscore));
	p->kcands = malloc(2 * maxv * sizeof(*p->kcands));
	p->kcost = calloc(w->nnodes + 1, sizeof(*p->kcost));
	p->nodevert = malloc((w->nnodes + 1) * sizeof(*p->nodevert));
	p->korder = malloc((w->nnodes + 1) * sizeof(*p->korder));
	p->ktake = malloc((w->nnodes + 1) * sizeof(*p->ktake));
	grp = malloc((w->ndomains + 1) * sizeof(*grp));
	doms = malloc((w->ndomains + 1) * sizeof(*doms));
	cnt = calloc(maxv + 1, sizeof(*cnt));
	if (!p->kv || !p->kchild || !p->ksort || !p->kslot || !p->kscore ||
	    !p->kcands || !p->kcost || !p->nodevert || !p->korder ||
	    !p->ktake || !grp || !doms || !cnt)
		goto out;
	/* group domains by (layer, bare value) */
	kb_w = w;
	for (l = 0; l < nl; l++) {
		uint32_t nd = 0;

		for (d = 1; d < w->ndomains; d++)
			if (tg_topology_domain_layer(w->t, d) == l)
				doms[nd++] = d;
		qsort(doms, nd, sizeof(*doms), dom_val_cmp);
		for (i = 0; i < nd; i++) {
			if (i && strcmp(tg_topology_domain_value(w->t,
								 doms[i]),
					tg_topology_domain_value(w->t,
								 doms[i - 1])))
				ngrp++;
			else if (!i)
				ngrp++;
			grp[doms[i]] = ngrp - 1;
		}
	}
	if (!(gvert = malloc((ngrp + 1) * sizeof(*gvert))))
		goto out;
	for (i = 0; i < ngrp; i++)
		gvert[i] = TG_NONE;
	/* vertices in node order */
	p->nkv = 1;
	p->kv[0].parent = 0;
	p->kv[0].layer = TG_NONE;
	p->kv[0].name = "";
	for (n = 0; n < w->nnodes; n++) {
		uint32_t cur = 0, v;
		bool drop = false;

		for (l = 0; l < nl; l++)
			if (w->ndom[(size_t)n * nl + l] == TG_NONE)
				drop = true;
		p->nodevert[n] = TG_NONE;
		if (drop)
			continue;
		for (l = 0; l < nl; l++) {
			d = w->ndom[(size_t)n * nl + l];
			if (gvert[grp[d]] == TG_NONE) {
				v = p->nkv++;
				p->kv[v].parent = cur;
				p->kv[v].layer = l;
				p->kv[v].name = tg_topology_domain_value(w->t,
									 d);
				gvert[grp[d]] = v;
			}
			cur = gvert[grp[d]];
		}
		v = p->nkv++;
		p->kv[v].parent = cur;
		p->kv[v].layer = nl;
		p->kv[v].name = tg_topology_node_name(w->t, n);
		p->kv[v].node = n;
		p->nodevert[n] = v;
	}
	/* children CSR in creation order */
	for (i = 1; i < p->nkv; i++)
		p->kv[p->kv[i].parent].n++;
	for (i = 0, d = 0; i < p->nkv; i++) {
		p->kv[i].first = d;
		d += p->kv[i].n;
		cnt[i] = p->kv[i].first;
	}
	for (i = 1; i < p->nkv; i++)
		p->kchild[cnt[p->kv[i].parent]++] = i;
	err = TG_OK;
out:
	free(grp);
	free(gvert);
	free(doms);
	free(cnt);
	return err;
}

/* ---- random ----
 *
 * Each member on a node drawn uniformly among those with room (and no
 * member of the job yet).  No preemption.  What a scheduler that knows
 * nothing would do; the floor of the comparison.
 */
static tg_err place_random(sim_policy *p, const sim_req *r, sim_choice *c,
			   bool *placed)
{
	const sim_world *w = p->w;
	unsigned i, n, k, cnt;

	*placed = false;
	scratch_reset(p);
	for (i = 0; i < r->members; i++) {
		for (n = cnt = 0; n < w->nnodes; n++)
			cnt += !p->used[n] && p->fr[n] >= (int32_t)r->gpus;
		if (!cnt)
			return TG_OK;
		k = (unsigned)(sim_rand(&p->rng) % cnt);
		for (n = 0; n < w->nnodes; n++)
			if (!p->used[n] && p->fr[n] >= (int32_t)r->gpus &&
			    k-- == 0)
				break;
		c->node[i] = n;
		p->used[n] = 1;
		p->fr[n] -= (int32_t)r->gpus;
	}
	c->nvictims = 0;
	*placed = true;
	return TG_OK;
}

/* ---- life cycle ---- */

static tg_err slurm_build(sim_policy *p)
{
	const sim_world *w = p->w;
	const unsigned nl = w->nlayers, k1 = nl + 1;
	uint32_t d, i, n, k, *lidx = NULL;
	tg_err err = TG_ENOMEM;

	p->dpar = malloc((w->ndomains + 1) * sizeof(*p->dpar));
	p->dlvl = malloc((w->ndomains + 1) * sizeof(*p->dlvl));
	p->cnt = calloc(w->ndomains + 1, sizeof(*p->cnt));
	p->leaves = malloc((w->ndomains + 1) * sizeof(*p->leaves));
	p->lhead = calloc(w->ndomains + 2, sizeof(*p->lhead));
	p->lnodes = malloc((w->nnodes + 1) * sizeof(*p->lnodes));
	lidx = malloc((w->ndomains + 1) * sizeof(*lidx));
	if (!p->dpar || !p->dlvl || !p->cnt || !p->leaves || !p->lhead ||
	    !p->lnodes || !lidx)
		goto out;
	p->nleaves = 0;
	for (d = 0; d < w->ndomains; d++) {
		unsigned l = tg_topology_domain_layer(w->t, d);

		p->dpar[d] = d ? tg_topology_domain_parent(w->t, d) : 0;
		p->dlvl[d] = l == TG_NONE ? nl : nl - 1 - l;
		lidx[d] = TG_NONE;
		if (nl && l == nl - 1) {
			lidx[d] = p->nleaves;
			p->leaves[p->nleaves++] = d;
		}
	}
	p->dist = calloc(p->nleaves + 1, sizeof(*p->dist));
	p->lanc = malloc(((size_t)p->nleaves * k1 + 1) * sizeof(*p->lanc));
	if (!p->dist || !p->lanc)
		goto out;
	for (i = 0; i < p->nleaves; i++) {
		d = p->leaves[i];
		for (k = 0; k < k1; k++) {
			p->lanc[(size_t)i * k1 + k] = d;
			d = p->dpar[d];
		}
	}
	for (n = 0; nl && n < w->nnodes; n++) {
		d = w->ndom[(size_t)n * nl + nl - 1];
		if (d != TG_NONE)
			p->lhead[lidx[d] + 1]++;
	}
	for (i = 0; i < p->nleaves; i++)
		p->lhead[i + 1] += p->lhead[i];
	for (n = 0; nl && n < w->nnodes; n++) {
		d = w->ndom[(size_t)n * nl + nl - 1];
		if (d != TG_NONE)
			p->lnodes[p->lhead[lidx[d]]++] = n;
	}
	for (i = p->nleaves; i > 0; i--)
		p->lhead[i] = p->lhead[i - 1];
	p->lhead[0] = 0;
	err = TG_OK;
out:
	free(lidx);
	return err;
}

void sim_policy_destroy(sim_policy *p)
{
	if (!p)
		return;
	free(p->fr);
	free(p->used);
	free(p->vmark);
	free(p->vlist);
	free(p->ohead);
	free(p->occ);
	free(p->affcnt);
	free(p->dpar);
	free(p->dlvl);
	free(p->leaves);
	free(p->lnodes);
	free(p->lhead);
	free(p->lanc);
	free(p->cnt);
	free(p->dist);
	free(p->sel);
	free(p->cand);
	free(p->ovl);
	free(p->kv);
	free(p->kchild);
	free(p->ksort);
	free(p->kslot);
	free(p->kscore);
	free(p->kcost);
	free(p->nodevert);
	free(p->kcands);
	free(p->korder);
	free(p->ktake);
	free(p);
}

tg_err sim_policy_create(const char *name, const sim_world *w,
			 uint64_t seed, sim_policy **out, tg_errinfo *ei)
{
	int kind = policy_kind(name);
	sim_policy *p;
	const char *s;
	tg_err err = TG_ENOMEM;

	*out = NULL;
	if (kind < 0) {
		sim_seterr(ei, "unknown policy '%s' (topogang, k8s-default, "
		       "pod-affinity, slurm-tree, koordinator, random)",
		       name ? name : "");
		return TG_EINVAL;
	}
	if (!(p = calloc(1, sizeof(*p))))
		return TG_ENOMEM;
	p->kind = kind;
	p->w = w;
	/* each policy its own stream, the same for a seed */
	p->rng = seed;
	for (s = name; *s; s++)
		p->rng = (p->rng ^ (unsigned char)*s) * 0x100000001b3ull;
	p->fr = malloc((w->nnodes + 1) * sizeof(*p->fr));
	p->used = calloc(w->nnodes + 1, 1);
	p->vmark = calloc(w->njobs + 1, 1);
	p->vlist = malloc((w->njobs + 1) * sizeof(*p->vlist));
	p->ohead = calloc(w->nnodes + 2, sizeof(*p->ohead));
	p->affcnt = calloc(w->ndomains + 1, sizeof(*p->affcnt));
	p->sel = malloc((w->nnodes + 1) * sizeof(*p->sel));
	p->cand = malloc((w->njobs + 1) * sizeof(*p->cand));
	p->ovl = calloc(w->njobs + 1, sizeof(*p->ovl));
	if (!p->fr || !p->used || !p->vmark || !p->vlist || !p->ohead ||
	    !p->affcnt || !p->sel || !p->cand || !p->ovl)
		goto fail;
	if (kind == P_SLURM && (err = slurm_build(p)))
		goto fail;
	if (kind == P_KOORD && (err = koord_build(p)))
		goto fail;
	*out = p;
	return TG_OK;
fail:
	sim_policy_destroy(p);
	return err;
}

tg_err sim_policy_place(sim_policy *p, const sim_req *r, sim_choice *c,
			bool *placed, tg_errinfo *ei)
{
	*placed = false;
	c->nvictims = 0;
	c->bw = 0;
	if (!r->members || r->gpus > TG_MAX_GPUS)
		return TG_OK;
	switch (p->kind) {
	case P_TOPOGANG:
		return place_topogang(p, r, c, placed, ei);
	case P_K8S:
		return place_kube(p, r, c, placed, false);
	case P_AFFINITY:
		return place_kube(p, r, c, placed, true);
	case P_SLURM:
		return place_slurm(p, r, c, placed);
	case P_KOORD:
		return place_koord(p, r, c, placed);
	default:
		return place_random(p, r, c, placed);
	}
}
