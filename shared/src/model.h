/*
 * shared/src/model.h - the topology's private layout, shared by the core's
 * files (topology.c, place.c, draw.c).  Hosts never see it.
 *
 * Nodes are stored column-wise (one array per field) so that the offer-slot
 * pass of a placement walks flat arrays.  After tg_topology_build() the
 * nodes inside the tree are listed in tree order in order[0..ntree); every
 * domain covers one contiguous range [lo, hi) of that list, so a domain's
 * nodes are found without walking the tree.  Nodes outside the tree follow
 * in order[ntree..nnodes).
 *
 * Domains are numbered layer by layer (the root is 0, then every layer-0
 * domain in path order, then layer 1 ...), so the children of a domain are
 * consecutive ids and every layer is one id range.
 */
#ifndef TG_MODEL_H
#define TG_MODEL_H

#include "internal.h"

#define TGI_NODE_UNSCHED	0x01	/* cordoned / drained */
#define TGI_NODE_IN_TREE	0x02	/* has a full path */
#define TGI_NODE_TAINTED	0x08	/* has taints: the slow path checks
					 * them (saves reading taint_head) */
#define TGI_NODE_OWN_ACCEL	0x04	/* build made it its own accelerator
					 * domain (undone if build fails) */

typedef struct tgi_domain {
	uint32_t parent;	/* TG_NONE for the root */
	uint32_t child0;	/* first child domain id (children consecutive) */
	uint32_t nchild;
	uint32_t layer;		/* TG_NONE for the root */
	uint32_t value;		/* strtab id of the bare value */
	uint32_t lo, hi;	/* node range in order[] */
	uint32_t gen;		/* lowest layer: bumped whenever a node's
				 * free resources change (tgi_node_changed) */
	char *path;		/* "v0/v1/.../vL"; "" for the root */
} tgi_domain;

typedef struct tgi_label {
	uint32_t key, value, next;	/* next: index+1 in labels[], 0 = end */
} tgi_label;

typedef struct tgi_taint {
	uint32_t key, value, next;
	int effect;
} tgi_taint;

/*
 * An allocation's class: what many allocations share (a gang's members
 * have one), interned in t->cls so that an allocation record stays at
 * 24 bytes.  The shape row is t->cls_shape[cls * stride ...].
 */
typedef struct tgi_acls {
	int64_t priority;
	int64_t expires;	/* nominated: lapses at this time, 0 = never */
	uint32_t budget;	/* strtab id, 0 = none */
	uint32_t lset;		/* label set index + 1, 0 = none */
	uint32_t hnext;		/* next class in its hash chain + 1 */
	bool preemptible;
} tgi_acls;

/*
 * A pod's namespace and labels, interned in t->lsets so that allocations
 * of pods alike (one Deployment's) share them through their class.  Its
 * pairs are t->lpairs[2 * off ..], (key, value) strtab ids sorted by key
 * id.  Label sets live until tg_topology_destroy().
 */
typedef struct tgi_lset {
	uint32_t ns;		/* strtab id, 0 = none */
	uint32_t off, n;
	uint32_t hnext;		/* next set in its hash chain + 1 */
} tgi_lset;

/* Allocations of one label set (indices into t->allocs, ascending). */
typedef struct tgi_lsmem {
	uint32_t *a;
	size_t n, cap;
} tgi_lsmem;

/* A label pair's postings: a chain through t->lposts (index + 1). */
typedef struct tgi_lpslot {
	uint64_t kv;		/* key id << 32 | value id; 0 = empty */
	uint32_t head, n;
} tgi_lpslot;

typedef struct tgi_lpost {
	uint32_t ls;		/* label set index + 1 */
	uint32_t next;		/* index + 1 in t->lposts, 0 = end */
} tgi_lpost;

typedef struct tgi_alloc {
	uint32_t pod, gang;	/* strtab ids */
	uint32_t node;
	uint32_t cls : 29;	/* index in t->cls */
	uint32_t nominated : 1;
	uint32_t live : 1;
	uint32_t suspended : 1;	/* resources handed back for a what-if */
	uint64_t gpus;
} tgi_alloc;

typedef struct tgi_budget {
	uint32_t name;
	int64_t allowed;
} tgi_budget;

struct tg_topology {
	bool built;
	unsigned nlayers;
	char *layer_name[TG_MAX_LAYERS];
	char *layer_key[TG_MAX_LAYERS];
	double layer_bw[TG_MAX_LAYERS + 1];	/* [nlayers] = inside a node */
	bool layer_bw_set[TG_MAX_LAYERS + 1];
	double root_bw;

	unsigned nres;
	char *res_name[TG_MAX_RESOURCES];

	tgi_strtab strs;

	/* nodes, column-wise */
	size_t nnodes, ncap;
	unsigned stride;	/* resources stored per node (<= nres) */
	uint32_t *name;		/* strtab id */
	uint32_t *path;		/* nnodes * nlayers strtab ids (0 = missing) */
	int64_t *alloc;		/* nnodes * stride */
	int64_t *freev;		/* nnodes * stride */
	uint64_t *gpu_free;	/* free GPU indices */
	uint8_t *gfree;		/* free GPU count, 0..255 (saturating): the
				 * first test of a placement's node pass */
	uint8_t *ngpus;
	uint16_t *layout;	/* island layout id */
	uint8_t *flags;
	uint32_t *lab_head;	/* index+1 into labels[], 0 = none */
	uint32_t *taint_head;
	uint32_t *node_of_name;	/* hash slots: node id + 1 */
	size_t nname_slots;

	tgi_label *labels;
	size_t nlabels, labcap;
	tgi_taint *taints;
	size_t ntaints, taintcap;

	/* island layouts: layouts[id][gpu] = island */
	uint8_t (*layouts)[TG_MAX_GPUS];
	size_t nlayouts, laycap;

	/* after build */
	uint32_t *order;	/* positions -> node ids */
	uint32_t *pos;		/* node id -> position */
	uint32_t *leaf;		/* node id -> deepest domain or TG_NONE */
	size_t ntree;
	tgi_domain *dom;
	size_t ndom;
	uint32_t layer_lo[TG_MAX_LAYERS + 1];	/* domain id ranges per layer */
	uint32_t layer_hi[TG_MAX_LAYERS + 1];

	char **warn;
	size_t nwarn, warncap;

	uint32_t node_key;	/* strtab id of the label every node in the
				 * tree must carry (a Topology whose last
				 * level is kubernetes.io/hostname); 0 =
				 * none */

	/* allocations */
	tgi_alloc *allocs;
	size_t nallocs, alloccap, nlive;
	size_t nnominated;	/* live reservations */
	tgi_acls *cls;		/* allocation classes */
	int64_t *cls_shape;	/* ncls * stride */
	size_t ncls, clscap;
	uint32_t *cls_slots;	/* hash heads: class index + 1 */
	size_t ncls_slots;
	uint32_t *alloc_of_pod;	/* hash slots: alloc index + 1 */
	size_t nalloc_slots;
	/*
	 * The gang index, so that a gang's allocations are found without
	 * walking every allocation (tg_topology_remove_gang(),
	 * tg_topology_set_gang_preemption()): gang_of[] are open-addressing
	 * slots holding index + 1 of a gang's newest allocation, keyed by
	 * that allocation's gang id (as alloc_of_pod is by pod id), and
	 * gnext[i] is index + 1 of the next allocation of allocation i's
	 * gang (0 = end).  Chains may hold removed allocations (readers
	 * skip them) until tgi_alloc_compact(); removing a whole gang cuts
	 * its chain to the (dead) head.  Built on first use
	 * (ngang_slots 0 until then).
	 */
	uint32_t *gnext;	/* alloccap entries */
	uint32_t *gang_of;
	size_t ngang_slots, ngangs;

	tgi_budget *budgets;
	size_t nbudgets, budgetcap;

	tgi_lset *lsets;	/* pod label sets (tgi_lset) */
	size_t nlsets, lsetcap;
	uint32_t *lpairs;
	size_t nlpairs, lpaircap;	/* in uint32_t */
	uint32_t *lset_slots;	/* hash heads: set index + 1 */
	size_t nlset_slots;
	/*
	 * The index label spreads count through (place.c), kept as
	 * allocations come and go so that a decision reads the pods a
	 * selector takes instead of walking every allocation:
	 * lsmem[ls] lists the allocations of label set ls (0: none) in
	 * index order, removed ones included until tgi_alloc_compact()
	 * (readers skip what is not live or is suspended); lpost maps a
	 * (key, value) label pair, or (0, namespace) for a set's
	 * namespace, to the label sets carrying it (tgi_lpost_first()).
	 */
	tgi_lsmem *lsmem;	/* nlsets + 1 */
	size_t lsmemcap;
	tgi_lpslot *lpost_slots;	/* open addressing, power of two */
	size_t nlpost_slots, nlpost_keys;
	tgi_lpost *lposts;
	size_t nlposts, lpostcap;

	uint32_t gen;		/* bumped on any change that can alter a
				 * node's offer slots other than its free
				 * resources (labels, taints, flags, build),
				 * and on free-resource changes of nodes
				 * outside the tree */

	void *scratch;		/* place.c's reusable buffers */
	void (*scratch_free)(void *);
};

/*
 * Records that node \p n's free resources changed: its lowest-layer
 * domain's generation moves on (the whole topology's for a node outside
 * the tree), so that place.c's per-domain slot cache recomputes it.
 * Generations skip UINT32_MAX (the cache stores gen + 1, 0 = none).
 */
static inline void tgi_node_changed(tg_topology *t, uint32_t n)
{
	if (t->built && t->leaf[n] != TG_NONE) {
		tgi_domain *d = &t->dom[t->leaf[n]];

		if (++d->gen == UINT32_MAX)
			d->gen = 0;
	} else {
		t->gen++;
	}
}

/* Refreshes the saturated free-GPU count of node \p n (after any change
 * of its free resources). */
static inline void tgi_gfree_sync(tg_topology *t, uint32_t n)
{
	int64_t f = TG_RES_GPU < t->stride ?
		    t->freev[(size_t)n * t->stride + TG_RES_GPU] : 0;

	t->gfree[n] = (uint8_t)(f <= 0 ? 0 : f >= 255 ? 255 : f);
	tgi_node_changed(t, n);
}

static inline int64_t tgi_free_of(const tg_topology *t, uint32_t n,
				  unsigned r)
{
	return r < t->stride ? t->freev[(size_t)n * t->stride + r] : 0;
}

/* The class and the shape row of allocation \p i. */
static inline const tgi_acls *tgi_alloc_cls(const tg_topology *t, size_t i)
{
	return &t->cls[t->allocs[i].cls];
}

static inline const int64_t *tgi_alloc_shape(const tg_topology *t, size_t i)
{
	return &t->cls_shape[(size_t)t->allocs[i].cls * t->stride];
}

/*
 * Interns a namespace and labels as a label set: *out gets its index + 1
 * (0 for no namespace and no labels).  TG_EINVAL for a bad or repeated
 * key, TG_ELIMIT past TG_MAX_POD_LABELS.
 */
tg_err tgi_lset_intern(tg_topology *t, const char *ns, const tg_label *l,
		       unsigned n, uint32_t *out);

/* The value id of label \p key (a strtab id) in label set \p ls (index
 * + 1): 0 for "", TG_NONE when the set has no such label. */
uint32_t tgi_lset_value(const tg_topology *t, uint32_t ls, uint32_t key);

/*
 * The label sets carrying label \p key = \p value (strtab ids), or with
 * \p key 0 those of namespace \p value: the first posting (index + 1
 * into t->lposts, follow .next; 0 = none), how many in *n.
 */
uint32_t tgi_lpost_first(const tg_topology *t, uint32_t key, uint32_t value,
			 uint32_t *n);

/* Records a warning (formatted); TG_ENOMEM only. */
tg_err tgi_warn(tg_topology *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Picks \p want GPUs among \p free on a node with island layout \p lay:
 * the tightest island that holds them, else the fullest islands first;
 * lowest indices first inside an island.  0 if not enough. */
uint64_t tgi_pick_gpus(const uint8_t *lay, unsigned ngpus, uint64_t free,
		       unsigned want);

/* Takes \p shape and \p gpus from node \p n (no checks). */
void tgi_node_take(tg_topology *t, uint32_t n, const int64_t *shape,
		   uint64_t gpus);

/* The allocation index of a pod name, TG_NONE when none. */
uint32_t tgi_alloc_find(const tg_topology *t, const char *pod);

/* What-if: gives an allocation's resources back (suspend) or takes them
 * again (resume); the allocation stays recorded.  Idempotent. */
void tgi_alloc_suspend(tg_topology *t, uint32_t a);
void tgi_alloc_resume(tg_topology *t, uint32_t a);

/* Undoes tg_topology_remove_alloc() of allocation \p a, which must be
 * the last allocation of its pod name (a failed apply puts back what it
 * removed). */
void tgi_alloc_revive(tg_topology *t, uint32_t a);

/* Drops removed allocations once they outnumber live ones; changes
 * allocation indices. */
void tgi_alloc_compact(tg_topology *t);

/* The budget allowance of a budget name id; -1 = no such budget. */
int64_t tgi_budget_allowed(const tg_topology *t, uint32_t name);

/* Layer index of a request's layer name: a layer, nlayers for the node
 * level (kubernetes.io/hostname, NodeTopologyLayer, node, hostname), or
 * TG_NONE when unknown. */
unsigned tgi_layer_resolve(const tg_topology *t, const char *name);

/* Tree order of nodes *a and *b (uint32_t ids) of topology \p ctx: the
 * order tg_topology_build() sorts them in (a tgi_cmp_fn). */
int tgi_node_cmp(const void *a, const void *b, void *ctx);

#endif /* TG_MODEL_H */
