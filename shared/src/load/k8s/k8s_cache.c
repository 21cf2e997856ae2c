/*
 * shared/src/load/k8s/k8s_cache.c - tg_k8s_cache: the Nodes' parsed trees
 * and what builds derive from bound and ended pods, kept between the
 * snapshots of a host that builds often (the bridge), so that a build
 * parses only the objects that are new or changed, and pending pods.
 *
 * A Node added with a version the cache holds lends the cache's tree to
 * the snapshot (kobj.lent_tree: the loader only reads node trees, and
 * drops its pointer with the others once the topology is built); a new
 * version's tree is parsed and given to the cache.
 *
 * A record is keyed by the pod's "namespace/name" and holds the host's
 * version of the text it came from (tg_k8s_add_object_version()); a pod
 * whose version matches is filled from the record exactly as pod_parse()
 * and pod_drop_tree() would fill it: state, node, termination, priority,
 * preemption policy, creation time, member index and role, its group
 * (dialect and name), its requests and its labels and required
 * anti-affinity (the trees, lent to the build).  The requests are kept by
 * resource name, and the extended names are asked for again in the
 * order the pod's parse asked for them, so the topology's resource ids
 * come out as without a cache.  Only pods read without a warning or an
 * error get a record: a build with a cache gives the same topology,
 * gangs, warnings and failures as one without (tests/unit/test_k8s_cache.c
 * checks it against random changes).
 *
 * What a record depends on besides the pod's text: the PriorityClass it
 * names (or the global default), resolved again at every build from the
 * fields the parse read (priorityClassName, priority,
 * preemptionPolicy), a missing class read as a miss (the parse warns);
 * and the gang dialects (its group): their fingerprint is kept, and every
 * pod record is dropped when it changes.
 *
 * What a build takes from the cache besides: a cached pod's id (the
 * record's key, lent: not copied) and node name (the record's string);
 * its node's id in the topology, which the record keeps with the node
 * epoch it was found in: tgk_cache_nodes() compares the built topology's
 * node names, in id order, with those of the last one (a new epoch when
 * any differs, or their count), so a record's id is used only while the
 * node list is the one it was found in, and looked up by name otherwise;
 * and the last build's pod array, zeroed (not made afresh: at 100,000
 * pods it is 20 MB whose pages every build faulted in again).
 *
 * The objects themselves (tg_k8s_cache_put(), a host fed by watch
 * events): c->objs by "kind\x1fgroup\x1fnamespace\x1fname" (okeys), each
 * its text (the host's, lent until its release function is called, or
 * the cache's copy), version and source.  A put reads the object as
 * tg_k8s_add_object() would now: a Node's tree is parsed into the Nodes'
 * trees (counted as a Node parsed since the last build, so the kept
 * topology is not taken: nmisses), any kind but Pod parsed to see that it
 * can be, a pod not (the build reads it); one that cannot be read is
 * refused and what the cache held of it dropped.  A build that uses them
 * (tg_k8s_use_cache_objects()) files every one before its index
 * (tgk_cache_file_objects(), kobj.cached), through the same path as
 * tg_k8s_add_object_version(), so the Nodes' trees, the pods' records
 * and the kept topology serve it as they serve a host that hands every
 * object over; the index drops a cached object that an added one of the
 * same identity replaces (an overlay, for that build only).  Records and
 * trees of removed objects go at the end of the next build, as those of
 * objects a host stops giving.  The keys of removed objects stay until
 * they outnumber the live ones (compact_objs()).
 *
 * Generations: c->gen numbers the snapshot being made; what a snapshot
 * takes or gives is stamped with it, and tgk_cache_end() (after a build
 * that worked) drops what is not, then starts the next generation.  Keys
 * of gone objects stay in the string tables until they outnumber the
 * live ones; the tables are then made afresh (compact()).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k8s_load.h"

typedef struct kcres {
	char *name;		/* an extended resource name */
	int64_t v;
} kcres;

typedef struct kcrec {
	uint64_t version;	/* 0: no record */
	uint64_t gen;		/* the last build that saw it */
	int8_t state;		/* S_SKIP or S_BOUND */
	bool terminating, has_shape, has_role;
	int dialect;		/* its group's; -2: no group */
	int64_t created, index;
	const char *node, *role;	/* in the cache's strs */
	char *gname;
	/* its priority's fields (bctx.pcap); prio_read false: none */
	bool prio_read, present, has_pol, pol_never;
	int64_t spec;
	char *pcn;		/* NULL: no class named */
	int64_t std[TG_RES_PODS + 1];
	kcres *res;
	unsigned nres;
	cJSON *labels, *anti;
	/* its node's id in the topologies of node epoch nepoch (0: none) */
	uint64_t nepoch;
	tg_node_id nid;
	/* its allocation in the kept topology of generation bgen (0:
	 * none): index and pod name id */
	uint64_t bgen;
	uint32_t baidx, bpod;
} kcrec;

/* A Node's parsed tree (tgk_cache_node()). */
typedef struct kcnode {
	uint64_t version, gen;	/* version 0: none */
	cJSON *tree;
} kcnode;

/* An object the cache holds (tg_k8s_cache_put()): its text, and its
 * namespace and name as the host gave them; the host's (lent: release
 * called when it goes) or the cache's copy (own: text, ns and name in one
 * allocation). */
typedef struct kcobj {
	const char *text, *ns, *name;
	size_t len;
	const char *kind, *api, *src;	/* in the cache's otab */
	uint64_t version;
	char *own;
	void (*release)(void *ud);
	void *ud;
	uint64_t filed;		/* the last tgk_cache_file_objects() */
	/* a pod's record id in the keys of epoch rep (0: not known) */
	uint32_t rid;
	uint64_t rep;
	bool live;
} kcobj;

struct tg_k8s_cache {
	tgi_strtab keys;	/* "namespace/name" -> index into recs */
	tgi_strtab strs;	/* node names and roles of the records */
	kcrec *recs;
	size_t caprecs, nlive;
	tgi_strtab nkeys;	/* Node name -> index into nodes */
	kcnode *nodes;
	size_t capnodes, nnodes;
	uint64_t gen, ctx;	/* gen: the snapshot being made */
	/* the node names, in id order, of the last topology built with
	 * the cache; nepoch counts the changes of that list, nvalid: the
	 * topology being built has this list (tgk_cache_nodes()) */
	char **nnames;
	size_t nnn;
	uint64_t nepoch;
	bool nvalid;
	size_t hits, misses;	/* of the snapshot being made */
	size_t lhits, lmisses;	/* of the last build */
	/* the last build's pod array, zeroed again for the next (a big
	 * cluster's is tens of MB: made afresh, every build would fault
	 * its pages in again) */
	kpod *pods;
	size_t cappods;
	/* the kept topology (tgk_keep_take()): bgen numbers its builds,
	 * bsig what its nodes were built from besides the Nodes (NULL:
	 * nothing kept), bnodes how many Nodes, bwarns the warnings they
	 * gave; nhits/nmisses: Node trees lent/parsed since the last
	 * build's end; reused: the last build updated it */
	tg_topology *base;
	uint64_t bgen;
	char *bsig;
	size_t bnodes;
	char **bwarns;
	size_t nbwarns;
	size_t nhits, nmisses;
	bool reused;
	/* the preset level keys of every Node (tgk_cache_preset()), of
	 * pnodes Nodes; pvalid: still those of the Nodes the cache holds */
	kpreset preset;
	size_t pnodes;
	bool pvalid;
	/* the objects themselves (tg_k8s_cache_put()): okeys
	 * "kind\x1fgroup\x1fnamespace\x1fname" -> index into objs;
	 * otab: their kinds, API versions and sources */
	tgi_strtab okeys, otab;
	kcobj *objs;
	size_t capobjs, nobjs;
	/* the ids of the objects in the last build's index order
	 * (tgk_cache_order()); fgen numbers the filings */
	uint32_t *ord;
	size_t nord;
	uint64_t fgen;
	uint64_t kep;		/* epoch of the records' keys (kcobj.rid) */
};

static void rec_free(kcrec *r)
{
	unsigned i;

	tgi_free(r->gname);
	tgi_free(r->pcn);
	for (i = 0; i < r->nres; i++)
		tgi_free(r->res[i].name);
	tgi_free(r->res);
	cJSON_Delete(r->labels);
	cJSON_Delete(r->anti);
	memset(r, 0, sizeof(*r));
}

tg_k8s_cache *tg_k8s_cache_create(void)
{
	tg_k8s_cache *c = tgi_calloc(1, sizeof(*c));

	if (c) {
		tgi_strtab_init(&c->keys);
		tgi_strtab_init(&c->strs);
		tgi_strtab_init(&c->nkeys);
		tgi_strtab_init(&c->okeys);
		tgi_strtab_init(&c->otab);
		c->kep = 1;
	}
	return c;
}

static void clear_pods(tg_k8s_cache *c);

/* Nothing kept: the next build builds its topology. */
static void keep_drop(tg_k8s_cache *c)
{
	size_t i;

	tg_topology_destroy(c->base);
	c->base = NULL;
	tgi_free(c->bsig);
	c->bsig = NULL;
	for (i = 0; i < c->nbwarns; i++)
		tgi_free(c->bwarns[i]);
	tgi_free(c->bwarns);
	c->bwarns = NULL;
	c->nbwarns = 0;
	c->bgen++;
}

/* The node names of the last topology; the records' node ids are then
 * not used again (a new epoch). */
static void forget_node_ids(tg_k8s_cache *c)
{
	size_t i;

	for (i = 0; i < c->nnn; i++)
		tgi_free(c->nnames[i]);
	tgi_free(c->nnames);
	c->nnames = NULL;
	c->nnn = 0;
	c->nepoch++;
	c->nvalid = false;
}

static void clear_nodes(tg_k8s_cache *c)
{
	size_t i;

	forget_node_ids(c);
	keep_drop(c);
	c->nhits = c->nmisses = 0;
	c->pvalid = false;
	for (i = 0; i < c->capnodes; i++)
		cJSON_Delete(c->nodes[i].tree);
	tgi_free(c->nodes);
	c->nodes = NULL;
	c->capnodes = c->nnodes = 0;
	tgi_strtab_free(&c->nkeys);
	tgi_strtab_init(&c->nkeys);
}

static void obj_drop(tg_k8s_cache *c, kcobj *e)
{
	if (!e->live)
		return;
	if (e->release)
		e->release(e->ud);
	tgi_free(e->own);
	memset(e, 0, sizeof(*e));
	c->nobjs--;
}

static void clear_objs(tg_k8s_cache *c)
{
	size_t i;

	for (i = 0; i < c->capobjs; i++)
		obj_drop(c, &c->objs[i]);
	tgi_free(c->objs);
	c->objs = NULL;
	c->capobjs = c->nobjs = 0;
	tgi_strtab_free(&c->okeys);
	tgi_strtab_init(&c->okeys);
	tgi_free(c->ord);
	c->ord = NULL;
	c->nord = 0;
}

void tg_k8s_cache_clear(tg_k8s_cache *c)
{
	if (!c)
		return;
	clear_nodes(c);
	clear_pods(c);
	clear_objs(c);
}

/* The pods' records (the Nodes' trees may be lent to a snapshot). */
static void clear_pods(tg_k8s_cache *c)
{
	size_t i;

	keep_drop(c);
	for (i = 0; i < c->caprecs; i++)
		rec_free(&c->recs[i]);
	tgi_free(c->recs);
	c->recs = NULL;
	c->caprecs = c->nlive = 0;
	tgi_strtab_free(&c->keys);
	tgi_strtab_init(&c->keys);
	tgi_strtab_free(&c->strs);
	tgi_strtab_init(&c->strs);
	c->kep++;		/* the objects' record ids are old */
}

void tg_k8s_cache_destroy(tg_k8s_cache *c)
{
	if (!c)
		return;
	tg_k8s_cache_clear(c);
	tgi_strtab_free(&c->otab);
	tgi_free(c->pods);
	tgi_free(c);
}

bool tg_k8s_cache_reused(const tg_k8s_cache *c)
{
	return c && c->reused;
}

size_t tg_k8s_cache_size(const tg_k8s_cache *c)
{
	return c ? c->nlive + c->nnodes : 0;
}

size_t tg_k8s_cache_nobjects(const tg_k8s_cache *c)
{
	return c ? c->nobjs : 0;
}

void tg_k8s_cache_stats(const tg_k8s_cache *c, size_t *hits, size_t *misses)
{
	if (hits)
		*hits = c ? c->lhits : 0;
	if (misses)
		*misses = c ? c->lmisses : 0;
}

tg_err tg_k8s_set_cache(tg_k8s *k, tg_k8s_cache *c)
{
	if (!k)
		return TG_EINVAL;
	if (k->built || k->spent)
		return TG_ESTATE;
	k->cache = c;
	return TG_OK;
}

/* The dialects, which records' groups depend on. */
static uint64_t context_of(const bctx *b)
{
	uint64_t h = TGI_HASH_SEED;

	h = tgi_hash_mix(h, &b->k->ndialects, sizeof(b->k->ndialects));
	h = tgi_hash_mix(h, b->k->dialects, sizeof(b->k->dialects[0]) *
		b->k->ndialects);
	return h;
}

void tgk_cache_begin(bctx *b)
{
	tg_k8s_cache *c = b->k->cache;
	uint64_t ctx;

	if (!c)
		return;
	c->reused = false;
	ctx = context_of(b);
	if (ctx != c->ctx)
		clear_pods(c);
	c->ctx = ctx;
}

/* "namespace/name" into \p buf; false when it does not fit. */
static bool key_of(const kobj *o, char *buf, size_t n)
{
	size_t a = strlen(o->ns), c = strlen(o->name);

	if (a + c + 2 > n)
		return false;
	memcpy(buf, o->ns, a);
	buf[a] = '/';
	memcpy(buf + a + 1, o->name, c + 1);
	return true;
}

static bool cacheable(const bctx *b, const kobj *o)
{
	return b->k->cache && o->version && o->text && !o->j &&
	       o->cls == C_POD;
}

/* The requests again: the extended names asked for in their order. */
static tg_err replay_shape(bctx *b, const kcrec *r, const tg_shape **out)
{
	struct kshmemo *mm = NULL;
	tg_shape sh;
	unsigned i, id;
	tg_err err;

	if (!r->nres) {
		mm = &b->shmemo[((uint64_t)r->std[0] * 31 +
				 (uint64_t)r->std[1] * 7 +
				 (uint64_t)r->std[2]) % 64];
		if (mm->sh && memcmp(mm->std, r->std, sizeof(r->std)) == 0) {
			*out = mm->sh;
			return TG_OK;
		}
	}
	memset(&sh, 0, sizeof(sh));
	memcpy(sh.v, r->std, sizeof(r->std));
	for (i = 0; i < r->nres; i++) {
		err = tgk_res_id(b, r->res[i].name, &id);
		if (err)
			return err;
		sh.v[id] = r->res[i].v;
	}
	err = tgk_shape_intern(b, &sh, out);
	if (!err && mm) {
		memcpy(mm->std, r->std, sizeof(r->std));
		mm->sh = *out;
	}
	return err;
}

/*
 * pod_priority() again from the record's fields and this build's classes;
 * false when the class it names is gone and it gives no priority (the
 * parse warns: a miss).
 */
static bool priority(const bctx *b, const kcrec *r, kpod *p)
{
	const pclass *pc = NULL;

	if (!r->prio_read)
		return true;
	if (r->pcn) {
		pc = tgk_find_pc(b, r->pcn);
		if (!pc && !r->present)
			return false;
	}
	if (!pc)
		pc = b->pcdef;
	p->prio = r->present ? r->spec : pc ? pc->value : 0;
	p->never = r->has_pol ? r->pol_never : (pc && pc->never);
	return true;
}

/* \p key: the record's "namespace/name" in the cache's keys, which stay
 * until tgk_cache_end() (the pod's id, lent) */
static tg_err fill(bctx *b, const kobj *o, kpod *p, const kcrec *r,
		   const char *key)
{
	uint32_t id;
	tg_err err;

	if (!priority(b, r, p))
		return TG_ENOENT;
	p->o = o;
	p->group = SIZE_MAX;
	p->index = r->index;
	p->state = r->state;
	p->terminating = r->terminating;
	p->created = r->created;
	p->id = (char *)key;
	p->id_lent = true;
	if (r->has_shape) {
		err = replay_shape(b, r, &p->shape);
		if (err)
			return err;
	}
	/* the cache's string: kept until tgk_cache_end(), after the
	 * allocations */
	p->node = r->node;
	if (r->has_role) {
		if (tgi_strtab_intern(&b->k->names, r->role, &id))
			return TG_ENOMEM;
		p->role = tgi_strtab_get(&b->k->names, id);
	}
	if (r->dialect != -2 &&
	    tgk_group_get(b, r->dialect, o->ns, r->gname, &p->group))
		return TG_ENOMEM;
	p->own_labels = r->labels;
	p->own_anti = r->anti;
	p->labels = p->own_labels;
	p->lent = true;
	return TG_OK;
}

/* The cached object of \p o (tg_k8s_use_cache_objects()); NULL when none. */
static kcobj *cobj_of(tg_k8s_cache *c, const kobj *o)
{
	return o->cached && o->cid < c->capobjs && c->objs[o->cid].live ?
	       &c->objs[o->cid] : NULL;
}

/* Pod \p o's record id as its cached object remembers it; 0 when not
 * known (looked up by its key then). */
static uint32_t rec_id(tg_k8s_cache *c, const kobj *o)
{
	const kcobj *e = cobj_of(c, o);

	return e && e->rep == c->kep ? e->rid : 0;
}

/* Pod \p o's record is \p id (kept on its cached object). */
static void set_rec_id(tg_k8s_cache *c, const kobj *o, uint32_t id)
{
	kcobj *e = cobj_of(c, o);

	if (e) {
		e->rid = id;
		e->rep = c->kep;
	}
}

tg_err tgk_cache_take(bctx *b, const kobj *o, kpod *p, bool *hit)
{
	tg_k8s_cache *c = b->k->cache;
	char key[2 * TG_MAX_NAME + 2];
	uint32_t id;
	kcrec *r;
	tg_err err;

	*hit = false;
	if (!cacheable(b, o))
		return TG_OK;
	id = rec_id(c, o);
	if (!id)
		id = key_of(o, key, sizeof(key)) ?
		     tgi_strtab_find(&c->keys, key) : 0;
	r = id && id < c->caprecs ? &c->recs[id] : NULL;
	if (!r || r->version != o->version) {
		c->misses++;
		return TG_OK;
	}
	err = fill(b, o, p, r, tgi_strtab_get(&c->keys, id));
	if (err == TG_ENOMEM)
		return tgi_errf(b->ei, err, "out of memory");
	if (err) {
		/* a bound the parse meets as well: read it as without a
		 * cache, from a clean slate */
		memset(p, 0, sizeof(*p));
		c->misses++;
		return TG_OK;
	}
	r->gen = c->gen;
	p->crec = id;
	set_rec_id(c, o, id);
	c->hits++;
	*hit = true;
	return TG_OK;
}

static char *dup_or_null(const char *s, bool *oom)
{
	char *d;

	if (!s)
		return NULL;
	d = tgi_strdup(s);
	if (!d)
		*oom = true;
	return d;
}

/* \p s in the cache's strings (NULL stays NULL). */
static const char *intern(tg_k8s_cache *c, const char *s, bool *oom)
{
	uint32_t id;

	if (!s)
		return NULL;
	if (tgi_strtab_intern(&c->strs, s, &id)) {
		*oom = true;
		return NULL;
	}
	return tgi_strtab_get(&c->strs, id);
}

/* The record's copy of what \p p holds; false when out of memory. */
static bool rec_fill(bctx *b, kcrec *r, const kpod *p)
{
	tg_k8s_cache *c = b->k->cache;
	bool oom = false;
	unsigned i;

	r->state = (int8_t)p->state;
	r->terminating = p->terminating;
	r->prio_read = b->pcap.read;
	r->present = b->pcap.present;
	r->spec = b->pcap.spec;
	r->has_pol = b->pcap.has_pol;
	r->pol_never = b->pcap.pol_never;
	r->pcn = *b->pcap.pcn ? dup_or_null(b->pcap.pcn, &oom) : NULL;
	r->created = p->created;
	r->index = p->index;
	r->node = intern(c, p->node, &oom);
	r->has_role = p->role != NULL;
	r->role = intern(c, p->role, &oom);
	r->dialect = -2;
	if (p->group != SIZE_MAX) {
		r->dialect = b->groups[p->group].dialect;
		r->gname = dup_or_null(b->groups[p->group].gname, &oom);
	}
	r->has_shape = p->shape != NULL;
	if (!p->shape || oom)
		return !oom;
	memcpy(r->std, p->shape->v, sizeof(r->std));
	if (!b->nrcap)
		return true;
	r->res = tgi_calloc(b->nrcap, sizeof(kcres));
	if (!r->res)
		return false;
	for (i = 0; i < b->nrcap; i++) {
		uint32_t s = tgi_strtab_find(&b->rnames, b->rcap[i]);

		r->res[i].name = tgi_strdup(b->rcap[i]);
		if (!r->res[i].name || !s)
			return false;
		r->res[i].v = p->shape->v[b->rid[s]];
		r->nres = i + 1;
	}
	return true;
}

void tgk_cache_put(bctx *b, const kobj *o, kpod *p)
{
	tg_k8s_cache *c = b->k->cache;
	char key[2 * TG_MAX_NAME + 2];
	uint32_t id;
	kcrec *r, nr;

	if (!cacheable(b, o) || p->state == S_PENDING || p->other ||
	    p->broken || p->lent || !key_of(o, key, sizeof(key)))
		return;
	if (p->group != SIZE_MAX && !b->groups[p->group].gname)
		return;
	id = tgi_strtab_find(&c->keys, key);
	if (!id && (c->nlive >= K8S_MAX_CACHED ||
		    tgi_strtab_intern(&c->keys, key, &id)))
		return;
	if (id >= c->caprecs) {
		size_t old = c->caprecs;

		if (tgi_grow(&c->recs, &c->caprecs, (size_t)id + 1,
			     sizeof(kcrec)))
			return;
		memset(c->recs + old, 0, (c->caprecs - old) * sizeof(kcrec));
	}
	memset(&nr, 0, sizeof(nr));
	if (!rec_fill(b, &nr, p)) {
		rec_free(&nr);
		return;
	}
	r = &c->recs[id];
	/* a second pod of the same key in one build (the key is ns/name,
	 * and a name may hold '/'): the first's labels are lent already */
	if (r->version && r->gen == c->gen) {
		rec_free(&nr);
		return;
	}
	if (r->version)
		c->nlive--;
	rec_free(r);
	*r = nr;
	r->version = o->version;
	r->gen = c->gen;
	r->labels = p->own_labels;
	r->anti = p->own_anti;
	p->lent = true;
	p->crec = id;
	set_rec_id(c, o, id);
	c->nlive++;
}

/* The records left, in fresh tables (keys and strings of gone pods
 * dropped); as they were when out of memory. */
static void compact(tg_k8s_cache *c)
{
	tg_k8s_cache n;
	size_t i;
	uint32_t id;
	bool oom = false;

	memset(&n, 0, sizeof(n));
	n.caprecs = c->nlive + 2;
	n.recs = tgi_calloc(n.caprecs, sizeof(kcrec));
	if (!n.recs)
		return;
	tgi_strtab_init(&n.keys);
	tgi_strtab_init(&n.strs);
	for (i = 1; i < c->caprecs && !oom; i++) {
		kcrec *r = &c->recs[i];

		if (!r->version)
			continue;
		if (tgi_strtab_intern(&n.keys, tgi_strtab_get(&c->keys,
							      (uint32_t)i),
				      &id) || id >= n.caprecs) {
			oom = true;
			break;
		}
		n.recs[id] = *r;
		n.recs[id].node = intern(&n, r->node, &oom);
		n.recs[id].role = intern(&n, r->role, &oom);
	}
	if (oom) {
		tgi_strtab_free(&n.keys);
		tgi_strtab_free(&n.strs);
		tgi_free(n.recs);
		return;
	}
	tgi_strtab_free(&c->keys);
	tgi_strtab_free(&c->strs);
	tgi_free(c->recs);
	c->keys = n.keys;
	c->strs = n.strs;
	c->recs = n.recs;
	c->caprecs = n.caprecs;
	c->kep++;
}

/* The Nodes' trees left, in a fresh table (names of gone ones
 * dropped); as they were when out of memory. */
static void compact_nodes(tg_k8s_cache *c)
{
	tgi_strtab keys;
	kcnode *nodes;
	size_t cap = c->nnodes + 2, i;
	uint32_t id;

	nodes = tgi_calloc(cap, sizeof(kcnode));
	if (!nodes)
		return;
	tgi_strtab_init(&keys);
	for (i = 1; i < c->capnodes; i++) {
		if (!c->nodes[i].version)
			continue;
		if (tgi_strtab_intern(&keys, tgi_strtab_get(&c->nkeys,
							    (uint32_t)i),
				      &id) || id >= cap) {
			tgi_strtab_free(&keys);
			tgi_free(nodes);
			return;
		}
		nodes[id] = c->nodes[i];
	}
	tgi_strtab_free(&c->nkeys);
	tgi_free(c->nodes);
	c->nkeys = keys;
	c->nodes = nodes;
	c->capnodes = cap;
}

/* Node \p name's entry (made when absent, *id set); NULL when out of
 * memory. */
static kcnode *node_slot(tg_k8s_cache *c, const char *name, uint32_t *id)
{
	if (!*id && tgi_strtab_intern(&c->nkeys, name, id))
		return NULL;
	if (*id >= c->capnodes) {
		size_t old = c->capnodes;

		if (tgi_grow(&c->nodes, &c->capnodes, (size_t)*id + 1,
			     sizeof(kcnode)))
			return NULL;
		memset(c->nodes + old, 0, (c->capnodes - old) *
		       sizeof(kcnode));
	}
	return &c->nodes[*id];
}

/* \p tree (taken) as Node \p name's at \p version (entry \p id, 0 when
 * none yet); false (not taken) when out of memory. */
static bool node_keep(tg_k8s_cache *c, const char *name, uint32_t id,
		      uint64_t version, cJSON *tree)
{
	kcnode *e = node_slot(c, name, &id);

	if (!e)
		return false;
	if (!e->version)
		c->nnodes++;
	cJSON_Delete(e->tree);
	e->tree = tree;
	e->version = version;
	e->gen = c->gen;
	return true;
}

tg_err tgk_cache_node(tg_k8s *k, const char *name, uint64_t version,
		      const char *json, size_t len, const char *source,
		      cJSON **out, bool *lent, tg_errinfo *ei)
{
	tg_k8s_cache *c = k->cache;
	uint32_t id = 0;
	kcnode *e = NULL;
	tg_err err;

	*lent = false;
	if (c && version) {
		id = tgi_strtab_find(&c->nkeys, name);
		e = id && id < c->capnodes ? &c->nodes[id] : NULL;
	}
	if (e && e->version == version) {
		e->gen = c->gen;
		c->hits++;
		c->nhits++;
		*out = e->tree;
		*lent = true;
		return TG_OK;
	}
	err = tgk_parse_one(json, len, source, out, ei);
	if (c)
		c->nmisses++;	/* the kept topology's nodes are not this */
	if (err || !c || !version)
		return err;
	c->misses++;
	/* a second copy in one snapshot keeps its own tree: the first's
	 * is lent already */
	if (e && e->version && e->gen == c->gen)
		return TG_OK;
	*lent = node_keep(c, name, id, version, *out);
	return TG_OK;
}

/* ---- the objects (tg_k8s_cache_put()) ---------------------------------- */

/* "kind\x1fgroup\x1fnamespace\x1fname" into \p buf (the group: the API
 * version's part before '/', "" for the core group); false when it does
 * not fit. */
static bool okey_of(const char *kind, const char *api, const char *ns,
		    const char *name, char *buf, size_t n)
{
	const char *slash = strchr(api, '/');
	int w = snprintf(buf, n, "%s\x1f%.*s\x1f%s\x1f%s", kind,
			 slash ? (int)(slash - api) : 0, api, ns, name);

	return w >= 0 && (size_t)w < n;
}

/*
 * The object read as tg_k8s_add_object() reads it now: a Node parsed
 * (its tree kept for the builds when \p version is not 0 and the cache
 * has no tree of that version), a pod not yet (the build reads it), any
 * other kind parsed and its tree dropped (the build parses it again).
 */
static tg_err obj_check(tg_k8s_cache *c, const char *json, size_t len,
			const char *kind, const char *api, const char *name,
			const char *source, uint64_t version, tg_errinfo *ei)
{
	bool node = strcmp(kind, "Node") == 0 && strcmp(api, "v1") == 0;
	uint32_t id = 0;
	cJSON *tree = NULL;
	tg_err err;

	if (strcmp(kind, "Pod") == 0 && strcmp(api, "v1") == 0)
		return TG_OK;
	if (node && version) {
		id = tgi_strtab_find(&c->nkeys, name);
		if (id && id < c->capnodes && c->nodes[id].version == version)
			return TG_OK;
	}
	err = tgk_parse_one(json, len, source, &tree, ei);
	if (err)
		return err;
	if (node) {
		c->nmisses++;	/* the kept topology's nodes are not this */
		if (version && node_keep(c, name, id, version, tree))
			return TG_OK;
	}
	cJSON_Delete(tree);
	return TG_OK;
}

/* Object \p key's entry (made when absent); NULL when out of memory or
 * past the bound (*err set). */
static kcobj *obj_slot(tg_k8s_cache *c, const char *key, tg_err *err)
{
	uint32_t id = tgi_strtab_find(&c->okeys, key);

	*err = TG_OK;
	if (id && id < c->capobjs && c->objs[id].live)
		return &c->objs[id];
	if (c->nobjs >= K8S_MAX_OBJECTS) {
		*err = TG_ELIMIT;
		return NULL;
	}
	if (!id && tgi_strtab_intern(&c->okeys, key, &id)) {
		*err = TG_ENOMEM;
		return NULL;
	}
	if (id >= c->capobjs) {
		size_t old = c->capobjs;

		if (tgi_grow(&c->objs, &c->capobjs, (size_t)id + 1,
			     sizeof(kcobj))) {
			*err = TG_ENOMEM;
			return NULL;
		}
		memset(c->objs + old, 0, (c->capobjs - old) * sizeof(kcobj));
	}
	return &c->objs[id];
}

/* \p e holds the new object: its strings interned or copied (the text
 * lent when \p release is set); false when out of memory. */
static bool obj_fill(tg_k8s_cache *c, kcobj *e, const char *json,
		     size_t len, const char *kind, const char *api,
		     const char *ns, const char *name, const char *source,
		     bool lent)
{
	uint32_t kid, aid, sid;
	size_t a = strlen(ns) + 1, b = strlen(name) + 1;

	if (tgi_strtab_intern(&c->otab, kind, &kid) ||
	    tgi_strtab_intern(&c->otab, api, &aid) ||
	    tgi_strtab_intern(&c->otab, source, &sid))
		return false;
	e->kind = tgi_strtab_get(&c->otab, kid);
	e->api = tgi_strtab_get(&c->otab, aid);
	e->src = tgi_strtab_get(&c->otab, sid);
	e->len = len;
	if (lent) {
		e->text = json;
		e->ns = ns;
		e->name = name;
		return true;
	}
	e->own = tgi_malloc(len + 1 + a + b);
	if (!e->own)
		return false;
	memcpy(e->own, json, len);
	e->own[len] = '\0';
	memcpy(e->own + len + 1, ns, a);
	memcpy(e->own + len + 1 + a, name, b);
	e->text = e->own;
	e->ns = e->own + len + 1;
	e->name = e->own + len + 1 + a;
	return true;
}

/* The object keys left, in a fresh table; as they were when out of
 * memory. */
static void compact_objs(tg_k8s_cache *c)
{
	tgi_strtab keys;
	kcobj *objs;
	size_t cap = c->nobjs + 2, i;
	uint32_t id;

	objs = tgi_calloc(cap, sizeof(kcobj));
	if (!objs)
		return;
	tgi_strtab_init(&keys);
	for (i = 1; i < c->capobjs; i++) {
		if (!c->objs[i].live)
			continue;
		if (tgi_strtab_intern(&keys, tgi_strtab_get(&c->okeys,
							    (uint32_t)i),
				      &id) || id >= cap) {
			tgi_strtab_free(&keys);
			tgi_free(objs);
			return;
		}
		objs[id] = c->objs[i];
	}
	tgi_strtab_free(&c->okeys);
	tgi_free(c->objs);
	c->okeys = keys;
	c->objs = objs;
	c->capobjs = cap;
	c->nord = 0;		/* the ids changed */
}

/* Drops object \p key; false when the cache does not hold it. */
static bool obj_remove(tg_k8s_cache *c, const char *key)
{
	uint32_t id = tgi_strtab_find(&c->okeys, key);

	if (!id || id >= c->capobjs || !c->objs[id].live)
		return false;
	obj_drop(c, &c->objs[id]);
	if (c->okeys.n > 1024 && c->okeys.n > 2 * (c->nobjs + 1))
		compact_objs(c);
	return true;
}

static tg_err put(tg_k8s_cache *c, const char *json, size_t len,
		  const char *kind, const char *api, const char *ns,
		  const char *name, const char *source, uint64_t version,
		  void (*release)(void *ud), void *ud, tg_errinfo *ei)
{
	char key[4 * TG_MAX_NAME + 8];
	kcobj *e, ne;
	tg_err err;

	if (!c || !json || !kind || !*kind || !api || !name) {
		err = tgi_errf(ei, TG_EINVAL, "tg_k8s_cache_put: bad "
			       "arguments");
		goto fail;
	}
	source = source && *source ? source : "input";
	ns = ns ? ns : "";
	if (strlen(ns) > TG_MAX_NAME || strlen(name) > TG_MAX_NAME ||
	    strlen(kind) > TG_MAX_NAME ||
	    !okey_of(kind, api, ns, name, key, sizeof(key))) {
		/* no such identity can be held: nothing to drop */
		err = tgi_errf(ei, TG_ELIMIT, "%s: %s %s/%s: larger than the "
			       "loader's bounds", source, kind, ns, name);
		goto fail;
	}
	/* from here on a failure leaves the object out: what the cache
	 * held of it is old */
	if (len > TG_MAX_FILE) {
		err = tgi_errf(ei, TG_ELIMIT, "%s: %s %s/%s: larger than the "
			       "loader's bounds", source, kind, ns, name);
		obj_remove(c, key);
		goto fail;
	}
	err = obj_check(c, json, len, kind, api, name, source, version, ei);
	if (err) {
		obj_remove(c, key);
		goto fail;
	}
	e = obj_slot(c, key, &err);
	if (!e) {
		err = err == TG_ELIMIT ?
		      tgi_errf(ei, err, "%s: %s %s/%s: more than %u objects "
			       "in the cache", source, kind, ns, name,
			       K8S_MAX_OBJECTS) :
		      tgi_errf(ei, err, "out of memory");
		goto fail;
	}
	memset(&ne, 0, sizeof(ne));
	if (!obj_fill(c, &ne, json, len, kind, api, ns, name, source,
		      release != NULL)) {
		tgi_free(ne.own);
		err = tgi_errf(ei, TG_ENOMEM, "out of memory");
		obj_remove(c, key);
		goto fail;
	}
	ne.version = version;
	ne.release = release;
	ne.ud = ud;
	ne.live = true;
	obj_drop(c, e);		/* the copy it replaces */
	*e = ne;
	c->nobjs++;
	return TG_OK;

fail:
	if (release)
		release(ud);
	return err;
}

tg_err tg_k8s_cache_put(tg_k8s_cache *c, const char *json, size_t len,
			const char *kind, const char *api_version,
			const char *ns, const char *name, const char *source,
			uint64_t version, tg_errinfo *ei)
{
	return put(c, json, len, kind, api_version, ns, name, source,
		   version, NULL, NULL, ei);
}

tg_err tg_k8s_cache_put_lent(tg_k8s_cache *c, const char *json, size_t len,
			     const char *kind, const char *api_version,
			     const char *ns, const char *name,
			     const char *source, uint64_t version,
			     void (*release)(void *ud), void *ud,
			     tg_errinfo *ei)
{
	if (!release)
		return tgi_errf(ei, TG_EINVAL, "tg_k8s_cache_put_lent: no "
				"release function");
	return put(c, json, len, kind, api_version, ns, name, source,
		   version, release, ud, ei);
}

tg_err tg_k8s_cache_remove(tg_k8s_cache *c, const char *kind,
			   const char *api_version, const char *ns,
			   const char *name)
{
	char key[4 * TG_MAX_NAME + 8];

	if (!c || !kind || !api_version || !name)
		return TG_EINVAL;
	if (!okey_of(kind, api_version, ns ? ns : "", name, key, sizeof(key)))
		return TG_ENOENT;
	return obj_remove(c, key) ? TG_OK : TG_ENOENT;
}

/* The kinds of one filing, by the cache's interned (kind, API version)
 * pointers: tgk_kind_of() once each (K8S_KIND_MEMO of them; past it,
 * per object, which changes nothing but the time). */
#define K8S_KIND_MEMO	32
typedef struct kmemo {
	const char *kind[K8S_KIND_MEMO], *api[K8S_KIND_MEMO];
	tgk_kind ki[K8S_KIND_MEMO];
	unsigned n;
} kmemo;

static const tgk_kind *memo_kind(tg_k8s *k, kmemo *m, const kcobj *e)
{
	unsigned i;

	for (i = 0; i < m->n; i++)
		if (m->kind[i] == e->kind && m->api[i] == e->api)
			return &m->ki[i];
	if (m->n == K8S_KIND_MEMO || tgk_kind_of(k, e->kind, e->api,
						 &m->ki[m->n]))
		return NULL;
	m->kind[m->n] = e->kind;
	m->api[m->n] = e->api;
	return &m->ki[m->n++];
}

static tg_err file_one(tg_k8s *k, kmemo *m, kcobj *e, size_t id,
		       tg_errinfo *ei)
{
	tg_err err = tgk_add_one(k, e->text, e->len, e->kind, e->api, e->ns,
				 e->name, e->src, e->version, true,
				 memo_kind(k, m, e), ei);

	if (!err)
		k->objs[k->nobjs - 1].cid = (uint32_t)id;
	e->filed = k->cache->fgen;
	return err;
}

tg_err tgk_cache_file_objects(tg_k8s *k, tg_errinfo *ei)
{
	tg_k8s_cache *c = k->cache;
	kmemo m;
	size_t i;
	tg_err err = TG_OK;

	m.n = 0;
	c->fgen++;
	/* those of the last build in its index order first: a sorted run
	 * (build_index() sorts only the rest and merges), then the new */
	k->sorted0 = k->nobjs;
	for (i = 0; i < c->nord && !err; i++) {
		kcobj *e = c->ord[i] < c->capobjs ? &c->objs[c->ord[i]] : NULL;

		if (e && e->live && e->filed != c->fgen)
			err = file_one(k, &m, e, c->ord[i], ei);
	}
	k->sorted1 = k->nobjs;
	for (i = 1; i < c->capobjs && !err; i++)
		if (c->objs[i].live && c->objs[i].filed != c->fgen)
			err = file_one(k, &m, &c->objs[i], i, ei);
	return err;
}

void tgk_cache_order(tg_k8s *k, kobj *const *idx, size_t n)
{
	tg_k8s_cache *c = k->cache;
	size_t i, m = 0;

	if (!c || !k->cache_objs)
		return;
	tgi_free(c->ord);
	c->nord = 0;
	c->ord = tgi_calloc(c->nobjs ? c->nobjs : 1, sizeof(uint32_t));
	if (!c->ord)
		return;		/* the next build sorts them all */
	for (i = 0; i < n && m < c->nobjs; i++)
		if (idx[i]->cached)
			c->ord[m++] = idx[i]->cid;
	c->nord = m;
}

void tgk_cache_end(bctx *b)
{
	tg_k8s_cache *c = b->k->cache;
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->caprecs; i++) {
		if (c->recs[i].version && c->recs[i].gen != c->gen) {
			rec_free(&c->recs[i]);
			c->nlive--;
		}
	}
	for (i = 0; i < c->capnodes; i++) {
		kcnode *e = &c->nodes[i];

		if (e->version && e->gen != c->gen) {
			cJSON_Delete(e->tree);
			memset(e, 0, sizeof(*e));
			c->nnodes--;
		}
	}
	/* keys of gone objects: fresh tables once they outnumber the rest */
	if (c->keys.n > 1024 && c->keys.n > 2 * (c->nlive + 1))
		compact(c);
	if (c->nkeys.n > 1024 && c->nkeys.n > 2 * (c->nnodes + 1))
		compact_nodes(c);
	c->lhits = c->hits;
	c->lmisses = c->misses;
	c->hits = c->misses = 0;
	/* a Node parsed (or one more or fewer): the preset scan is old */
	if (c->nmisses ||
	    c->nhits != b->first[C_NODE + 1] - b->first[C_NODE])
		c->pvalid = false;
	c->nhits = c->nmisses = 0;
	c->gen++;
}

void tgk_cache_nodes(bctx *b)
{
	tg_k8s_cache *c = b->k->cache;
	unsigned n, i;

	if (!c)
		return;
	n = tg_topology_nnodes(b->t);
	c->nvalid = false;
	if (c->nnames && n == c->nnn) {
		for (i = 0; i < n; i++)
			if (strcmp(c->nnames[i],
				   tg_topology_node_name(b->t, i)) != 0)
				break;
		if (i == n) {
			c->nvalid = true;
			return;
		}
	}
	forget_node_ids(c);
	c->nnames = tgi_calloc(n ? n : 1, sizeof(char *));
	if (!c->nnames)
		return;
	for (i = 0; i < n; i++) {
		c->nnames[i] = tgi_strdup(tg_topology_node_name(b->t, i));
		c->nnn = i + 1;
		if (!c->nnames[i]) {
			forget_node_ids(c);
			return;
		}
	}
	c->nnn = n;
	c->nvalid = true;
}

bool tgk_cache_nid(const bctx *b, const kpod *p, tg_node_id *n)
{
	const tg_k8s_cache *c = b->k->cache;
	const kcrec *r;

	if (!c || !c->nvalid || !p->crec || p->crec >= c->caprecs)
		return false;
	r = &c->recs[p->crec];
	if (r->nepoch != c->nepoch)
		return false;
	*n = r->nid;
	return true;
}

void tgk_cache_set_nid(bctx *b, const kpod *p, tg_node_id n)
{
	tg_k8s_cache *c = b->k->cache;

	if (!c || !c->nvalid || !p->crec || p->crec >= c->caprecs)
		return;
	c->recs[p->crec].nepoch = c->nepoch;
	c->recs[p->crec].nid = n;
}

kpod *tgk_cache_take_pods(bctx *b, size_t n)
{
	tg_k8s_cache *c = b->k->cache;
	kpod *p;

	if (!n)
		n = 1;
	b->capkpods = n;
	if (c && c->cappods > 2 * n + 1024) {
		/* a burst is over: give its array back */
		tgi_free(c->pods);
		c->pods = NULL;
		c->cappods = 0;
	}
	if (!c || c->cappods < n)
		return tgi_calloc(n, sizeof(kpod));
	p = c->pods;
	b->capkpods = c->cappods;
	c->pods = NULL;
	c->cappods = 0;
	memset(p, 0, n * sizeof(kpod));
	return p;
}

void tgk_cache_give_pods(bctx *b)
{
	tg_k8s_cache *c = b->k->cache;

	if (!c || !b->pods || b->capkpods <= c->cappods) {
		tgi_free(b->pods);
	} else {
		tgi_free(c->pods);
		c->pods = b->pods;
		c->cappods = b->capkpods;
	}
	b->pods = NULL;
}

/* Every Node of this snapshot a tree the cache lent, none parsed: the
 * Nodes the cache held at the end of the last build. */
static bool nodes_as_cached(const tg_k8s_cache *c, const bctx *b)
{
	return !c->nmisses &&
	       c->nhits == b->first[C_NODE + 1] - b->first[C_NODE];
}

/* ---- the kept topology ------------------------------------------------- */

/*
 * What the nodes' part of a topology is built from besides the Nodes, as
 * one string: the levels (name, every label key in order, the node
 * level), the resources the pods asked for before the nodes (their ids),
 * the nodes a bound pod that cannot be read closes, and the disruption
 * budgets (their names: their amounts are set again at every build).
 * NULL when out of memory.
 */
static char *keep_sig(bctx *b)
{
	tg_buf s;
	size_t i;

	tg_buf_init(&s, SIZE_MAX);
	tg_buf_addf(&s, "H%d", b->host_level);
	for (i = 0; i < b->nlevels; i++) {
		unsigned k;

		/* every key: a node's path is the first it carries */
		tg_buf_addf(&s, "\x1eL%s", b->levels[i].name);
		for (k = 0; k < b->levels[i].nkeys; k++)
			tg_buf_addf(&s, "\x1f%s", b->levels[i].keys[k]);
	}
	for (i = 0; i < tg_topology_nresources(b->t); i++)
		tg_buf_addf(&s, "\x1eR%s",
			    tg_topology_resource_name(b->t, (unsigned)i));
	for (i = 1; i < b->badnodes.n; i++)
		tg_buf_addf(&s, "\x1e" "B%s",
			    tgi_strtab_get(&b->badnodes, (uint32_t)i));
	for (i = b->first[C_PDB]; i < b->first[C_PDB + 1]; i++)
		tg_buf_addf(&s, "\x1eP%s/%s", b->idx[i]->ns, b->idx[i]->name);
	return tg_buf_take(&s);
}

bool tgk_keep_take(bctx *b, tg_err *err)
{
	tg_k8s_cache *c = b->k->cache;
	size_t nn = b->first[C_NODE + 1] - b->first[C_NODE], i;
	char *sig;

	*err = TG_OK;
	if (!c)
		return false;
	c->reused = false;
	sig = keep_sig(b);
	if (!c->base || !sig || !c->bsig || strcmp(sig, c->bsig) != 0 ||
	    !nodes_as_cached(c, b) || nn != c->bnodes) {
		/* this build's topology is kept instead (tgk_keep_give()) */
		keep_drop(c);
		c->bsig = sig;
		c->bnodes = nn;
		b->kw0 = b->k->nwarns;
		b->kdrop0 = b->k->ndropped;
		return false;
	}
	tgi_free(sig);
	for (i = 0; i < c->nbwarns && !*err; i++)
		*err = tgk_warnf(b->k, "%s", c->bwarns[i]);
	if (*err) {
		*err = tgi_errf(b->ei, *err, "out of memory");
		return false;
	}
	/* b->t's until tgk_keep_give(): a build that fails keeps none */
	tg_topology_destroy(b->t);
	b->t = c->base;
	c->base = NULL;
	c->reused = true;
	return true;
}

void tgk_keep_topology(bctx *b)
{
	tg_k8s_cache *c = b->k->cache;
	size_t i, n;

	if (!c || !c->bsig)
		return;
	n = b->k->nwarns - b->kw0;
	if (b->k->ndropped != b->kdrop0 ||
	    !(c->bwarns = tgi_calloc(n ? n : 1, sizeof(char *)))) {
		/* warnings past the bound are not all known: keep none */
		keep_drop(c);
		return;
	}
	for (i = 0; i < n; i++) {
		c->bwarns[i] = tgi_strdup(b->k->warns[b->kw0 + i]);
		c->nbwarns = i + 1;
		if (!c->bwarns[i]) {
			keep_drop(c);
			return;
		}
	}
}

tg_err tgk_keep_give(bctx *b, bool kept)
{
	tg_k8s_cache *c = b->k->cache;
	size_t n, live;

	if (!c)
		return TG_OK;
	if (!kept) {
		/* kept as built (NULL when out of memory: built again) */
		if (c->bsig)
			c->base = tgi_topology_clone(b->t);
		if (!c->base)
			keep_drop(c);
		return TG_OK;
	}
	c->base = b->t;
	b->t = tgi_topology_clone(c->base);
	if (!b->t) {
		b->t = c->base;
		c->base = NULL;
		keep_drop(c);
		return tgi_errf(b->ei, TG_ENOMEM, "out of memory");
	}
	/* removed allocations stay in it (their indices are the records'):
	 * once they outnumber the live ones, the next build starts afresh */
	n = tgi_alloc_count(c->base);
	live = tg_topology_nallocs(c->base);
	if (n - live > K8S_KEEP_DEAD && n - live > live)
		keep_drop(c);
	return TG_OK;
}

bool tgk_cache_alloc(const bctx *b, const kpod *p, size_t *at,
		     uint32_t *pod)
{
	const tg_k8s_cache *c = b->k->cache;
	const kcrec *r;

	if (!c || !p->crec || p->crec >= c->caprecs)
		return false;
	r = &c->recs[p->crec];
	if (!r->version || !r->bgen || r->bgen != c->bgen)
		return false;
	*at = r->baidx;
	*pod = r->bpod;
	return true;
}

void tgk_cache_set_alloc(bctx *b, const kpod *p, size_t at)
{
	tg_k8s_cache *c = b->k->cache;
	tgi_alloc_info ai;
	kcrec *r;

	if (!c || !c->bsig || !p->crec || p->crec >= c->caprecs ||
	    at >= UINT32_MAX)
		return;
	r = &c->recs[p->crec];
	tgi_alloc_get(b->t, at, &ai);
	r->bgen = c->bgen;
	r->baidx = (uint32_t)at;
	r->bpod = ai.pod;
}

bool tgk_cache_preset(const bctx *b, kpreset *ps)
{
	const tg_k8s_cache *c = b->k->cache;

	if (!c || !c->pvalid || !nodes_as_cached(c, b) ||
	    c->pnodes != c->nhits)
		return false;
	*ps = c->preset;
	return true;
}

void tgk_cache_set_preset(bctx *b, const kpreset *ps)
{
	tg_k8s_cache *c = b->k->cache;

	if (!c)
		return;
	c->preset = *ps;
	c->pnodes = c->nhits;
	c->pvalid = nodes_as_cached(c, b);
}
