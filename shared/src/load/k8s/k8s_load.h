/*
 * shared/src/load/k8s/k8s_load.h - the Kubernetes loader's private model,
 * shared by its files (not installed; the dialect files read
 * k8s_dialect.h, which includes this).
 *
 * The files, in the order tg_k8s_build() runs them (k8s_build.c):
 *
 *   k8s.c            the handle, tg_k8s_add*(): text into filed objects
 *   k8s_field.c      typed fields of an object; errors and warnings that
 *                    name the input, the object and the field
 *   k8s_build.c      the object index, the passes, tg_k8s_build()
 *   k8s_pod.c        PriorityClasses, pods: shape, priority, state, index
 *   k8s_group.c      groups: membership, PodGroups, sizes, GangGroups
 *   k8s_dialect.c    the dialect table; dialect/ has one file per dialect
 *   k8s_levels.c     topology levels (flag, ClusterNetworkTopology,
 *                    Topology, presets)
 *   k8s_node.c       nodes and the topology
 *   k8s_alloc.c      bound pods and nominations as allocations, budgets
 *   k8s_gang.c       one tg_gang per group: pod sets, requests, order
 *   k8s_affinity.c   node affinity, tolerations, pod (anti-)affinity
 *   k8s_spread.c     topologySpreadConstraints
 *   k8s_volume.c     volumes (PersistentVolumeClaims), resourceClaims
 *   quantity.c       tg_k8s_quantity()
 */
#ifndef TG_K8S_LOAD_H
#define TG_K8S_LOAD_H

#include "k8s_internal.h"
#include "topogang/k8s.h"

/*
 * Bounds on what the loader keeps; hitting one is TG_ELIMIT: objects over
 * all inputs, tg_k8s_add() calls, bytes of an annotation parsed as JSON,
 * label keys of one layer ("any of"), PodGroups in one GangGroup,
 * dialects of one handle (the table's and tgk_dialect_register()'s).
 * Warnings past K8S_MAX_WARNINGS are counted in one "... more" line.
 */
#define K8S_MAX_OBJECTS		(1u << 24)
#define K8S_MAX_SOURCES		65536
#define K8S_MAX_WARNINGS	1000
#define K8S_MAX_ANNOT_JSON	65536
#define K8S_MAX_ANYOF		8
#define K8S_MAX_GANG_GROUPS	64
#define K8S_MAX_DIALECTS	16
/* Bound-pod matches of pod affinity terms kept for reuse (a cache). */
#define K8S_MAX_AFF_CACHE	(1u << 24)
/* Warnings given once per gang (tgk_gwarn_once()): distinct kinds. */
#define K8S_MAX_ONCE		16
#define K8S_DEFAULT_PODS	110
/* Records of a tg_k8s_cache (bound and ended pods). */
#define K8S_MAX_CACHED		(1u << 22)
/* A kept topology (tgk_keep_take()) is built afresh once its removed
 * allocations number more than this and more than its live ones (they
 * stay in it, at their indices, until then). */
#define K8S_KEEP_DEAD		1024
/* Node selectors one pod's volumes may add (bound PersistentVolumes with
 * node affinity, StorageClass allowedTopologies, selected nodes). */
#define K8S_MAX_POD_PVS		16
/* Claims waiting for provisioning listed by one build (tg_k8s_claim()). */
#define K8S_MAX_CLAIMS		100000

/* Keys more than one file reads. */
#define K_HOSTNAME	"kubernetes.io/hostname"
/* A label the loader gives every node: its name (metadata.name), which
 * the core's selectors read as any label (a claim's selected node,
 * k8s_volume.c).  The ':' makes it no valid Kubernetes label key: no
 * node of the snapshot can carry or spoof it. */
#define K_NODE_NAME	"topogang.io/node:name"
#define L_LWS_NAME	"leaderworkerset.sigs.k8s.io/name"

/* API groups of the kinds that are not gang dialects' group objects. */
#define G_KOORD_CNT	"scheduling.koordinator.sh"
#define G_KAI_TOPO	"kai.scheduler"
#define G_KUEUE		"kueue.x-k8s.io"
#define G_SCHED		"scheduling.k8s.io"

struct tgk_dialect;

/* Object classes, in index order.  C_PODGROUP: a dialect's group object. */
enum {
	C_NODE = 0,
	C_POD,
	C_PODGROUP,
	C_CNT,
	C_TOPOLOGY,
	C_PRIOCLASS,
	C_PDB,
	C_NAMESPACE,
	C_PVC,
	C_PV,
	C_SC,		/* storage.k8s.io StorageClass */
	C_OTHER,
	C_N
};

typedef struct kobj {
	cJSON *j;		/* borrowed from a document of k->docs, or
				 * owned (own_tree); NULL while a pod added
				 * by tg_k8s_add_object() is not parsed yet,
				 * and again once it has been read */
	const char *kind;	/* interned; from the List when absent */
	const char *group;	/* interned API group, "" for the core one */
	const char *ns;		/* "" when cluster-scoped or absent */
	const char *name;	/* "" when absent */
	const char *text;	/* tg_k8s_add_object(): the caller's text */
	uint32_t len;
	uint32_t src;		/* index into k->srcs */
	uint32_t seq;		/* order of arrival */
	uint64_t version;	/* tg_k8s_add_object_version(); 0: none */
	int8_t cls;
	bool own_tree;		/* j is this object's, not a document's */
	bool lent_tree;		/* j is a tg_k8s_cache's (a Node's) */
	uint32_t cid;		/* cached: its id in the cache's objects */
	bool cached;		/* filed from the cache's objects
				 * (tg_k8s_use_cache_objects()): an object
				 * added with its identity replaces it */
} kobj;

struct tg_k8s {
	char *levels[TG_MAX_LAYERS];
	unsigned nlevels;
	bool have_levels;
	char *scheduler;
	cJSON **docs;		/* one cJSON array per tg_k8s_add() */
	tgi_strtab names;	/* kinds and API groups of the objects */
	size_t ndocs, capdocs;
	kobj *objs;
	size_t nobjs, capobjs;
	char **srcs;
	size_t nsrcs, capsrcs;
	char **warns;
	size_t nwarns, capwarns, ndropped;
	tg_gang **gangs;
	size_t ngangs;
	struct kclaim {		/* claims pending pods wait on
				 * (k8s_volume.c, tg_k8s_claim()) */
		char *pod, *claim;	/* "ns/name" */
		char *node;	/* selected node; NULL: none yet */
	} *claims;
	size_t nclaims, capclaims;
	struct kfail {		/* gangs that could not be read, or
				 * wait for their group object */
		char *gang, *msg;
		char **pods;
		size_t npods;
		bool wait;	/* waits (tg_k8s_failed_waits()) */
	} *fails;
	size_t nfails, capfails;
	/* the dialect table's, then those of tgk_dialect_register() */
	const struct tgk_dialect *dialects[K8S_MAX_DIALECTS];
	unsigned ndialects;
	bool built;
	bool spent;		/* a build dropped node trees: no retry */
	struct tg_k8s_cache *cache;	/* borrowed (tg_k8s_set_cache()) */
	bool cache_objs;	/* the build files the cache's objects
				 * (tg_k8s_use_cache_objects()) */
	/* objs[sorted0, sorted1): cached objects filed in the index order
	 * of the last build (tgk_cache_file_objects()), likely sorted */
	size_t sorted0, sorted1;
};

typedef struct pclass {
	const char *name;
	int64_t value;
	bool never;		/* preemptionPolicy: Never */
	bool global;		/* globalDefault */
} pclass;

enum { R_GATHER = 0, R_SLICE, R_SPREAD };

typedef struct kreq {
	int type;
	char *layer;		/* owned */
	int how;		/* tg_gather of a gather */
	unsigned size;		/* slice size, spread max skew */
	bool hard;		/* spread: DoNotSchedule */
} kreq;

enum { S_SKIP = 0, S_BOUND, S_PENDING };

/*
 * A node selector a pending pod's volume adds (ANDed with its own node
 * affinity): a bound PersistentVolume's spec.nodeAffinity.required, a
 * WaitForFirstConsumer StorageClass's allowedTopologies, or the node a
 * claim being provisioned was given.  \p terms is a list of
 * nodeSelectorTerms (matchExpressions only) at \p path in \p o.
 */
typedef struct kvsel {
	const kobj *o;
	const cJSON *terms;
	const char *path;	/* static text */
} kvsel;

typedef struct kpod {
	const kobj *o;
	char *id;		/* "ns/name" */
	const cJSON *labels, *annots, *spec;
	int64_t prio;
	bool never;
	int64_t created;	/* microseconds since 1970; INT64_MAX unknown */
	const tg_shape *shape;	/* interned in bctx.shapes */
	const char *node;	/* spec.nodeName */
	int state;
	size_t group;		/* SIZE_MAX: none */
	int64_t index;		/* member index, -1: none */
	const char *role;	/* interned in k->names; "" for none */
	char *sig;		/* owned pod-set signature */
	bool allocated;		/* bound and recorded as an allocation */
	bool terminating;	/* bound, metadata.deletionTimestamp set */
	const char *nominated;	/* pending: status.nominatedNodeName */
	bool other;		/* pending for another scheduler */
	size_t set;		/* its pod set while its gang is built */
	cJSON *own_labels;	/* labels kept when the tree was dropped */
	cJSON *own_anti;	/* spec.affinity.podAntiAffinity, kept so */
	struct kvsel *vsels;	/* pending: the node selectors its volumes
				 * add (k8s_volume.c) */
	unsigned nvsels;
	cJSON *vown;		/* selectors made here (allowedTopologies,
				 * the selected node), owned */
	bool lent;		/* own_labels and own_anti are the cache's */
	bool building;		/* a member of the gang being built */
	bool broken;		/* could not be read: its gang fails */
	uint32_t crec;		/* its tg_k8s_cache record; 0: none */
	bool id_lent;		/* id is the cache's key (not freed here) */
} kpod;

typedef struct kgroup {
	char *name;		/* "ns/name", the gang's name */
	int dialect;		/* index into k->dialects; -1: a lone pod */
	const char *ns;
	char *gname;		/* the group's own name */
	const kobj *cr;		/* its group object, if in the snapshot */
	bool cr_reqs;		/* the group object gave topology requests:
				 * its dialect's pod annotations are not read */
	size_t *members;	/* pending pods */
	size_t nmembers, capmembers;
	unsigned nbound;
	size_t root;		/* GangGroup representative */
	size_t setsize;		/* groups in its GangGroup (root only) */
	bool ready;
	int64_t prio;
	bool never;
	int64_t created;
	bool preemptible;	/* its bound pods may be victims (a dialect's
				 * group hook may say otherwise) */
	const char *topo;	/* the Topology object it names (KAI) */
	kreq *reqs;
	size_t nreqs, capreqs;
	const char *once[K8S_MAX_ONCE];	/* warnings given (their formats) */
	unsigned nonce;
	char *fail;		/* why an object of the gang cannot be read:
				 * the gang is reported, not built */
	bool wait;		/* fail says what it waits for (its group
				 * object): reported as waiting, not failed */
} kgroup;

typedef struct klevel {
	const char *name;
	const char *keys[K8S_MAX_ANYOF];
	unsigned nkeys;
	const char *alias;	/* KAI alias, or NULL */
} klevel;

typedef struct kgang {
	tg_gang *g;
	int64_t prio;
	int64_t created;
} kgang;

typedef struct bctx {
	tg_k8s *k;
	tg_errinfo *ei;
	tg_topology *t;
	kobj **idx;		/* all objects by (class, group, ns, name) */
	size_t nidx;
	size_t first[C_N + 1];	/* class ranges of idx */
	pclass *pcs;		/* PriorityClasses by name */
	size_t npcs;
	const pclass *pcdef;	/* the global default */
	kpod *pods;
	size_t npods, capkpods;	/* capkpods: entries of pods (a cache's
				 * may be larger than this build needs) */
	kpod **bound;		/* allocated bound pods, in pod order */
	size_t nbound;
	kgroup *groups;
	size_t ngroups, capgroups;
	tgi_strtab gkeys;	/* group key -> group index + 1 */
	tgi_strtab rnames;	/* requested resource names */
	tgi_strtab affkeys;	/* pod affinity terms evaluated so far */
	struct affent {
		uint32_t *pods;	/* indices into bound */
		uint32_t n;
	} *aff;
	size_t naff, capaff, affcells;
	tgi_strtab nsnames;	/* namespaces missing from the snapshot */
	cJSON **nslabels;	/* their labels: kubernetes.io/metadata.name */
	size_t nnslabels, capnslabels;
	struct antient {
		const kpod *x;
		const cJSON *terms;	/* its required anti-affinity */
	} *anti;		/* pods with required anti-affinity */
	size_t nanti;
	bool anti_built;
	/* their terms grouped: one group for the pods of one namespace
	 * with the same term (a Deployment's), evaluated once against a
	 * pod set; a term whose selector is bad is a group of its own */
	tgi_strtab antikeys;	/* namespace + term text -> group + 1 */
	struct antigrp {
		const kpod *x;		/* its first pod */
		const cJSON *t;		/* that pod's term */
		struct antimem {
			uint32_t i;	/* index into anti */
			uint32_t k;	/* the term's place in its list */
			const cJSON *t;
		} *m;
		size_t n, cap;
	} *agrp;
	size_t nagrp, capagrp;
	const kpod **pend;	/* pending pods of ours, in pod order */
	size_t npend;
	bool pend_built;
	/* the first Available PersistentVolume of each class (k8s_volume.c:
	 * available_pv), by the class's id in avcls */
	tgi_strtab avcls;
	const kobj **avpv;
	bool avpv_built;
	tgi_strtab lblkeys;	/* "key\x1fvalue" of bound pods' labels */
	struct lblent {
		uint32_t *pods;	/* indices into bound, ascending */
		size_t n, cap;
	} *lbl;
	size_t nlbl, caplbl;
	bool lbl_built;
	unsigned rid[TG_MAX_RESOURCES + 1];
	klevel levels[TG_MAX_LAYERS];
	unsigned nlevels;
	bool host_level;	/* the levels end in kubernetes.io/hostname:
				 * a node without it is out of the tree */
	char tierkeys[TG_MAX_LAYERS][80];
	kgang *gangs;
	size_t ngangs, capgangs;
	tg_shape **shapes;	/* pods' shapes, interned (open addressing) */
	size_t nshapes, nslots;
	tgi_strtab badnodes;	/* nodes with a bound pod that cannot be
				 * read: they take no new pods */
	size_t kw0, kdrop0;	/* warnings before the topology's (kept) */
	tg_errinfo lei;		/* b->ei when the caller gives none */
	/* the extended resource names one pod's parse asked for, in order
	 * (k8s_cache.c replays them so that ids come out the same) */
	const char *rcap[TG_MAX_RESOURCES];
	unsigned nrcap;
	bool rcapture;
	/* shapes the cache gave, by their standard requests (pods without
	 * extended resources), so that most skip tgk_shape_intern() */
	struct kshmemo {
		int64_t std[TG_RES_PODS + 1];
		const tg_shape *sh;
	} shmemo[64];
	/* and the fields its priority came from (pod_priority()) */
	struct kprio {
		bool read;		/* pod_priority() ran */
		bool present;		/* spec.priority given */
		bool has_pol, pol_never;	/* spec.preemptionPolicy */
		int64_t spec;		/* spec.priority */
		char pcn[TG_MAX_NAME + 1];	/* priorityClassName, "" */
	} pcap;
} bctx;

/* One gang being built (k8s_gang.c, k8s_affinity.c, k8s_spread.c). */
typedef struct gctx {
	bctx *b;
	kgroup *g;
	tg_gang *gang;
	kpod **m;		/* members in member order */
	size_t nm;
	char limited[200];	/* set when a core limit was hit */
	unsigned warned;	/* per pod set */
} gctx;

/* ---- k8s.c: the handle ------------------------------------------------- */

tg_err tgk_warn_add(tg_k8s *k, const char *msg);
tg_err tgk_warnf(tg_k8s *k, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A kind and API version as the index keeps them: interned in
 * k->names, classified (C_*). */
typedef struct tgk_kind {
	const char *kind, *group;
	int8_t cls;
} tgk_kind;
tg_err tgk_kind_of(tg_k8s *k, const char *kind, const char *api,
		   tgk_kind *out);
/* tg_k8s_add_object_version() without the checks of its arguments
 * (\p cached: one of the cache's objects, kobj.cached; \p ki: what
 * tgk_kind_of() gave for \p kind and \p api_version, NULL: worked out). */
tg_err tgk_add_one(tg_k8s *k, const char *json, size_t len,
		   const char *kind, const char *api_version, const char *ns,
		   const char *name, const char *source, uint64_t version,
		   bool cached, const tgk_kind *ki, tg_errinfo *ei);
/* One object's text as a tree, its keys checked. */
tg_err tgk_parse_one(const char *text, size_t len, const char *source,
		     cJSON **out, tg_errinfo *ei);
void tgk_free_fails(tg_k8s *k);

/* ---- k8s_field.c: typed fields, errors --------------------------------- */

enum { T_OBJ = 1, T_ARR, T_STR, T_NUM, T_BOOL };

const char *tgk_jstr(const cJSON *obj, const char *key);
const cJSON *tgk_jget(const cJSON *obj, const char *key);
/* A non-empty string member, else NULL. */
const char *tgk_nonempty(const cJSON *map, const char *key);
/* \p m when it is a map of strings (labels, annotations), else NULL. */
const cJSON *tgk_strmap(const cJSON *m);
/* "ns/name" or "name" of an object, into \p buf. */
const char *tgk_oname(const kobj *o, char *buf, size_t n);
/* One error naming the input, the line when known, the object. */
tg_err tgk_oerr(bctx *b, const kobj *o, const cJSON *at, tg_err err,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* A warning naming the object. */
tg_err tgk_owarn(bctx *b, const kobj *o, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* prefix + ".key" or "[key]"; prefix + "[i]" */
const char *tgk_pjoin(char *buf, size_t n, const char *prefix,
		      const char *key);
const char *tgk_pidx(char *buf, size_t n, const char *prefix, unsigned i);
/*
 * Member \p key of \p parent as type \p t: *out NULL when absent or null,
 * an error when of another type.
 */
tg_err tgk_field(bctx *b, const kobj *o, const cJSON *parent,
		 const char *ppath, const char *key, int t, const cJSON **out);
/* An integer-valued JSON number. */
bool tgk_num_int(const cJSON *v, int64_t *out);
tg_err tgk_field_int(bctx *b, const kobj *o, const cJSON *parent,
		     const char *ppath, const char *key, int64_t min,
		     int64_t max, bool *present, int64_t *out);
/* Checks a map of strings (labels, annotations, nodeSelector). */
tg_err tgk_check_strmap(bctx *b, const kobj *o, const cJSON *m,
			const char *path);
/* Parses a whole decimal integer annotation or label value. */
tg_err tgk_annot_int(bctx *b, const kobj *o, const cJSON *map,
		     const char *mpath, const char *key, int64_t min,
		     int64_t *out, bool *present);
tg_err tgk_obj_created(bctx *b, const kobj *o, int64_t *out);
/* metadata.labels and .annotations (NULL: not read), checked. */
tg_err tgk_obj_meta(bctx *b, const kobj *o, const cJSON **labels,
		    const cJSON **annots);
/* A label selector against a label map; an error for a bad selector. */
tg_err tgk_sel_match(bctx *b, const kobj *o, const cJSON *sel,
		     const char *path, const cJSON *labels, bool *match);
/*
 * Fault isolation: the error \p err just set in b->ei becomes \p msg and
 * b->ei is cleared; TG_ENOMEM is returned as is (it ends the build).
 */
tg_err tgk_fail_msg(bctx *b, tg_err err, char *msg, size_t n);

/* ---- k8s_build.c: the index -------------------------------------------- */

/* Finds an object of class \p cls by kind, group, namespace and name. */
const kobj *tgk_find_obj(const bctx *b, int cls, const char *kind,
			 const char *group, const char *ns, const char *name);

/* ---- k8s_pod.c --------------------------------------------------------- */

tg_err tgk_load_prioclasses(bctx *b);
const pclass *tgk_find_pc(const bctx *b, const char *name);
tg_err tgk_load_pods(bctx *b);
/* A resource name's id in the topology (registered on first use). */
tg_err tgk_res_id(bctx *b, const char *name, unsigned *id);
/* One copy of each distinct shape per build: *out is the build's. */
tg_err tgk_shape_intern(bctx *b, const tg_shape *sh, const tg_shape **out);
/* The text of a quantity: a string, or a number as written. */
const char *tgk_qty_text(const cJSON *v, char *buf, size_t n);

/* ---- k8s_group.c ------------------------------------------------------- */

/* The group of dialect \p dialect (-1: none) named \p gname in \p ns. */
tg_err tgk_group_get(bctx *b, int dialect, const char *ns, const char *gname,
		     size_t *out);
/* Which gang a pod's labels and annotations name: its dialect (-1 none). */
int tgk_member(const bctx *b, const cJSON *labels, const cJSON *annots,
	       const char **gname, char *buf, size_t n);
tg_err tgk_group_set_fail(bctx *b, kgroup *g, const char *msg);
/* The group's gang waits, \p msg saying for what (tg_k8s_failed_waits()). */
tg_err tgk_group_set_wait(bctx *b, kgroup *g, const char *msg);
tg_err tgk_group_fail(bctx *b, kgroup *g, tg_err err);
size_t tgk_uf_find(bctx *b, size_t i);
/* A warning about the gang ("gang ns/name: ..."). */
/* A gather of the gang in one \p layer domain: TG_GATHER_MUST or _PREFER.
 * \p o and \p at name the object and field in errors. */
tg_err tgk_req_gather(bctx *b, kgroup *g, const kobj *o, const cJSON *at,
		      const char *layer, int how);
/* Slices of \p size pods, each in one \p layer domain. */
tg_err tgk_req_slice(bctx *b, kgroup *g, const kobj *o, const cJSON *at,
		     const char *layer, unsigned size);
tg_err tgk_gwarn(bctx *b, kgroup *g, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same, given once per gang for each \p fmt. */
tg_err tgk_gwarn_once(bctx *b, kgroup *g, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
tg_err tgk_load_groups(bctx *b);

/* ---- k8s_levels.c ------------------------------------------------------ */

tg_err tgk_pick_levels(bctx *b);
bool tgk_is_level(const bctx *b, const char *name);
/* Maps a KAI alias to its node label. */
const char *tgk_level_of(const bctx *b, const char *name);

/* ---- k8s_node.c -------------------------------------------------------- */

tg_err tgk_taint_effect(const char *s, int *out);
/* A core setter's error on object \p o, as one error naming it. */
tg_err tgk_node_core(bctx *b, const kobj *o, tg_err err, const char *what);
tg_err tgk_add_topology(bctx *b);
void tgk_drop_node_trees(bctx *b);

/* ---- k8s_alloc.c ------------------------------------------------------- */

/* A pod's labels as core labels; TG_ELIMIT past TG_MAX_POD_LABELS. */
tg_err tgk_core_labels(const cJSON *labels, tg_label *out, unsigned *n);
tg_err tgk_add_allocs(bctx *b);

/* ---- k8s_gang.c, k8s_affinity.c, k8s_spread.c -------------------------- */

tg_err tgk_build_gangs(bctx *b);
/* A core setter's error: ELIMIT skips the gang (c->limited says why). */
tg_err tgk_gcore(gctx *c, const kobj *o, tg_err err, const char *what);
/* A pod set's node constraints, from its first member. */
tg_err tgk_podset_apply(gctx *c, unsigned ps, const kpod *p);
/* topologySpreadConstraints of every member, each distinct one once. */
tg_err tgk_spread_reqs(gctx *c);

/* ---- k8s_cache.c: tg_k8s_cache -------------------------------------- */

/* The preset level keys the nodes carry (k8s_levels.c). */
typedef struct kpreset {
	unsigned tiers[TG_MAX_LAYERS], ntiers;
	bool has_accel;
	bool seen[6];	/* 0 datacenter, 1 spine, 2 block, 3 accelerator,
			 * 4 core, 5 leaf */
	bool has_zone[2];
} kpreset;
/* The preset keys of the last scan of every Node (into \p ps) when this
 * snapshot's Nodes are those it scanned: each a tree the cache lent, none
 * parsed since, as many; false (\p ps untouched) when not. */
bool tgk_cache_preset(const bctx *b, kpreset *ps);
/* A scan of every Node of this snapshot gave \p ps. */
void tgk_cache_set_preset(bctx *b, const kpreset *ps);

/* Before the pods: drops every record when the dialects they were read
 * under changed since the last build (a pod's PriorityClass is resolved
 * again at each build, not cached). */
void tgk_cache_begin(bctx *b);
/* A pod the cache knows at this version: *hit set and \p p filled as
 * pod_parse() and pod_drop_tree() would; an error only for memory. */
tg_err tgk_cache_take(bctx *b, const kobj *o, kpod *p, bool *hit);
/* Records \p p, just read without a warning (its trees go to the
 * cache, p->lent); nothing when it cannot be cached. */
void tgk_cache_put(bctx *b, const kobj *o, kpod *p);
/* After the build: drops the records of pods and Nodes it did not see. */
void tgk_cache_end(bctx *b);
/* After tg_topology_build(): whether the node ids records hold are this
 * topology's (its node names, in order, are those they were found in);
 * false (records' ids forgotten) when not, or out of memory. */
void tgk_cache_nodes(bctx *b);
/* The build's pod array (\p n, zeroed): the one the last build gave back
 * (tgk_cache_give_pods()) when it is large enough, else a new one. */
kpod *tgk_cache_take_pods(bctx *b, size_t n);
/* The build's pod array back, kept for the next build (freed without a
 * cache). */
void tgk_cache_give_pods(bctx *b);
/* A bound pod's node id as its record holds it for this topology; false
 * when it holds none (then tgk_cache_set_nid() after the lookup). */
bool tgk_cache_nid(const bctx *b, const kpod *p, tg_node_id *n);
void tgk_cache_set_nid(bctx *b, const kpod *p, tg_node_id n);
/*
 * The kept topology (the nodes, layers and allocations of an earlier
 * build, updated instead of built again).  tgk_keep_take(), after the
 * levels: true when the cache keeps one built from the same Nodes (every
 * Node of this snapshot a tree the cache lent, as many as then), levels,
 * resources asked for before the nodes, closed nodes and budgets; b->t
 * is then that topology (the fresh one destroyed) and the warnings its
 * nodes gave are given again; the allocations are for
 * tgk_update_allocs().  False: the caller builds the topology
 * (tgk_add_topology(), then tgk_keep_topology() for its warnings, then
 * tgk_add_allocs()).  tgk_keep_give() after the allocations: the cache
 * keeps b->t's state and b->t becomes a copy the caller may change.
 */
bool tgk_keep_take(bctx *b, tg_err *err);
void tgk_keep_topology(bctx *b);
tg_err tgk_keep_give(bctx *b, bool kept);
/* Where the kept topology has bound pod \p p's allocation (its index
 * and pod name id); false when it has none. */
bool tgk_cache_alloc(const bctx *b, const kpod *p, size_t *at,
		     uint32_t *pod);
/* Bound pod \p p's allocation is b->t's allocation \p at. */
void tgk_cache_set_alloc(bctx *b, const kpod *p, size_t at);
/*
 * A Node's tree for tg_k8s_add_object_version(): the cache's when it
 * holds this version (*lent set), else parsed, and given to the cache
 * when it can take it (*lent set: the tree is the cache's, read only,
 * until the build's end); TG_OK with *out NULL never happens.
 */
tg_err tgk_cache_node(tg_k8s *k, const char *name, uint64_t version,
		      const char *json, size_t len, const char *source,
		      cJSON **out, bool *lent, tg_errinfo *ei);
/*
 * Before the index (tg_k8s_use_cache_objects()): files every object the
 * cache holds (tgk_add_one(), kobj.cached), in the order of their keys'
 * ids; build_index() then drops those an added object replaces.  An
 * error only for memory or a bound of the loader.
 */
tg_err tgk_cache_file_objects(tg_k8s *k, tg_errinfo *ei);
/* After the index is sorted (\p idx, \p n objects, copies included):
 * the order of the cached ones, for the next build to file them in (a
 * sorted run: build_index() then sorts only the rest and merges). */
void tgk_cache_order(tg_k8s *k, kobj *const *idx, size_t n);

/* ---- k8s_volume.c ------------------------------------------------------ */

/*
 * A pending pod's resourceClaims (refused) and volumes: each claim
 * (persistentVolumeClaim, generic ephemeral) must be in the snapshot and
 * either bound to a PersistentVolume there (its node affinity goes to
 * p->vsels) or an unbound WaitForFirstConsumer claim that a provisioner
 * will provision (the class's allowedTopologies or the selected node go
 * to p->vsels, the claim to k->claims).  An error (naming the pod, the
 * volume and why) fails its gang.
 */
tg_err tgk_pod_volumes(bctx *b, kpod *p);
/* ---- k8s_alloc.c (with k8s_cache.c's kept topology) ------------------ */

/* tgk_add_allocs() on a kept topology: see k8s_alloc.c. */
tg_err tgk_update_allocs(bctx *b);

/* Frees k->claims. */
void tgk_free_claims(tg_k8s *k);

#endif /* TG_K8S_LOAD_H */
