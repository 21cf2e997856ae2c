/*
 * shared/src/load/k8s/k8s_dialect.h - a Kubernetes gang dialect: how a
 * scheduler's pods say which gang they belong to, how big it is and where
 * it wants to be.  One file per dialect under dialect/, one row in the
 * table of k8s_dialect.c (docs/HACKING-dialect.md walks through a toy
 * one).
 *
 * What the loader does with a dialect, in tg_k8s_build() order:
 *
 *  1. membership: a pending or bound pod carrying one of keys[] is a
 *     member of the group that key's value names (in the pod's
 *     namespace); over all dialects, the key of lowest rank wins;
 *  2. the group object: when group_kind is set, the object of that kind
 *     and API group with the group's name and namespace (any version);
 *     the loader reads metadata, spec.minMember (the gang's size),
 *     metadata.creationTimestamp and spec.priorityClassName, then the
 *     group() hook what is the dialect's own.  A group whose object is
 *     not in the snapshot waits for it (tg_k8s_failed_waits(): listed,
 *     not built), as the schedulers with group objects make such pods
 *     wait, unless a "bare" key named it (the gang is then defined on the
 *     pods alone);
 *  3. the size, when there is no group object: the annotation size_key of
 *     the group's first pending pod; then, when still unknown, the size
 *     keys of the dialects that lend theirs (size_use), those of the
 *     pod's own controller (TGK_SIZE_MEMBER) first;
 *  4. topology requests: the pod() hook of every dialect, in table order,
 *     on every pending member of every gang (a pod may carry another
 *     scheduler's annotations);
 *  5. link(): groups of the dialect that form one gang together;
 *  6. preemptible(): whether a bound pod of the dialect may be a victim.
 *
 * Every hook is optional.  Hooks report a bad field with tgk_oerr() (the
 * gang then fails, the rest of the snapshot is built) and return TG_OK
 * or the error; warnings go through tgk_gwarn() / tgk_gwarn_once().
 */
#ifndef TG_K8S_DIALECT_H
#define TG_K8S_DIALECT_H

#include "k8s_load.h"

/* A label or annotation key that makes a pod a member of a group. */
typedef struct tgk_key {
	const char *key;	/* NULL ends a dialect's keys[] */
	bool annotation;	/* an annotation key, else a label key */
	/*
	 * A pod carrying keys of several dialects belongs to the one whose
	 * key has the lowest rank (ties: table order).  The table's ranks
	 * are 10 to 60; a new dialect takes 100 unless its keys must win.
	 */
	unsigned rank;
	/*
	 * A second label the pod must carry too; the group is then named
	 * "<key's value>-<with's value>" (LeaderWorkerSet: one gang per
	 * replica).  NULL: the key's value names the group.
	 */
	const char *with;
	/* A group named by this key needs no group object: its pods form
	 * the gang (Koordinator's gang annotations).  Without it, a group
	 * of a dialect with a group_kind waits for its object. */
	bool bare;
} tgk_key;

/* Whose gangs a dialect's size_key may size (step 3 above). */
enum {
	TGK_SIZE_OWN = 0,	/* only its own groups' */
	TGK_SIZE_MEMBER,	/* also others', on pods with its first key */
	TGK_SIZE_ANY,		/* also others', on any pod */
};

typedef struct tgk_dialect {
	const char *name;	/* "koordinator"; tg_k8s_dialect_key() */
	const tgk_key *keys;	/* membership keys, ended by { NULL } */
	/* its group object: kind, API group, resource and the versions a
	 * host should watch (preferred first, NULL-ended); NULL group_kind
	 * when it has none */
	const char *group_kind;
	const char *group_api;
	const char *group_resource;
	const char *const *group_versions;
	/* the gang's size without a group object (an annotation), or NULL */
	const char *size_key;
	int size_use;		/* TGK_SIZE_* */

	/*
	 * The dialect's own fields of the group object \p o (its spec and
	 * annotations, already checked to be an object and a map of
	 * strings; either may be NULL).  *min holds spec.minMember (-1 when
	 * absent) and may be changed.  Set g->cr_reqs when the object
	 * carries the topology requests the dialect's pod annotations
	 * would otherwise give.
	 */
	tg_err (*group)(bctx *b, kgroup *g, const kobj *o, const cJSON *spec,
			const cJSON *annots, int64_t *min);
	/*
	 * Topology requests (tgk_req_gather(), tgk_req_slice()) from the
	 * annotations of pending member \p p of \p g, whatever the gang's
	 * dialect.  \p group_reqs: \p g is of this dialect and its group
	 * object set g->cr_reqs.
	 */
	tg_err (*pod)(bctx *b, kgroup *g, const kpod *p, bool group_reqs);
	/* Group b->groups[gi] (of this dialect, with pending pods) joins
	 * others into one gang: tgk_group_join(). */
	tg_err (*link)(bctx *b, size_t gi);
	/* Whether bound pod \p p of group \p g may be a victim (default:
	 * yes, by priority). */
	bool (*preemptible)(const kgroup *g, const kpod *p);
} tgk_dialect;

/* ---- the table (k8s_dialect.c) ---------------------------------------- */

/* The table's dialects, in order; tgk_ndialects of them. */
extern const tgk_dialect *const tgk_dialects[];
extern const unsigned tgk_ndialects;

/*
 * Adds a dialect outside the table to one handle, after the table's (for
 * tests and experiments; the loader's own dialects are table rows).
 * TG_EINVAL without a name or keys, TG_ESTATE once objects were added,
 * TG_ELIMIT past K8S_MAX_DIALECTS.
 * \note \p d is borrowed: it must outlive \p k.
 */
tg_err tgk_dialect_register(tg_k8s *k, const tgk_dialect *d);

/* The dialect of group \p g, NULL for a lone pod. */
const tgk_dialect *tgk_dialect_of(const bctx *b, const kgroup *g);

/* ---- helpers for dialect files (k8s_group.c) --------------------------- */

/* tgk_req_gather(), tgk_req_slice(), tgk_gwarn(), tgk_gwarn_once() and the
 * field readers are in k8s_load.h. */

/*
 * Joins group b->groups[gi] and the group of the same dialect named
 * \p nsname ("namespace/name") into one gang.  *found false when no pod
 * of the snapshot names that group.
 */
tg_err tgk_group_join(bctx *b, size_t gi, const char *nsname, bool *found);

#endif /* TG_K8S_DIALECT_H */
