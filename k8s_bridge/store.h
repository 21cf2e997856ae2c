/*
 * k8s_bridge/store.h - the informers' object caches.
 *
 * An object is kept as compact JSON text (what the core's loader reads),
 * with kind and apiVersion filled in (list items lack them) and the
 * bulky fields nobody reads removed (metadata.managedFields, kubectl's
 * last-applied-configuration annotation).  Text costs a fraction of a
 * parsed tree; the scheduler parses the few objects it acts on.
 *
 * Pods also carry the handful of fields the scheduling loop reads for
 * every pod, extracted once when the object arrives, and are slimmed to
 * what placement reads (metadata, the scheduling fields of spec,
 * container resources, status.phase): a real pod's env, volumes and
 * images are most of its bytes.
 *
 * Nodes are slimmed too, to what placement reads (metadata with labels
 * and annotations, spec.taints and .unschedulable, status.allocatable and
 * .capacity) and the Ready condition's type, status and reason: a real
 * Node's status.images, nodeInfo, other conditions and heartbeat times
 * are 10-50 KB of it.  A Node's sig covers its status as well, so that a
 * Node update placement cannot see (a kubelet heartbeat, new images)
 * leaves it unchanged and starts no scheduling cycle (sched.c).
 */
#ifndef BR_STORE_H
#define BR_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

/* Annotations the bridge stamps on the pods it binds (through Binding). */
#define BR_ANN_GANG	"topogang.io/gang"
#define BR_ANN_DOMAIN	"topogang.io/domain"
#define BR_ANN_RANK	"topogang.io/rank"

typedef struct br_obj {
	/* key, ns, name, uid, rv, node and sched share key's allocation */
	char *key;		/* "namespace/name", or "name" */
	char *ns, *name;
	char *uid;
	char *rv;
	char *text;		/* compact JSON */
	size_t len;
	/* pods only */
	char *node;		/* spec.nodeName, NULL when pending */
	char *sched;		/* spec.schedulerName ("default-scheduler") */
	char *nominated;	/* status.nominatedNodeName */
	char *ann_gang;		/* BR_ANN_GANG */
	char *ann_domain;	/* BR_ANN_DOMAIN */
	char *cond_msg;		/* PodScheduled=False message */
	int64_t created_us;
	bool deleting;		/* metadata.deletionTimestamp set */
	bool gated;		/* spec.schedulingGates not empty */
	bool terminal;		/* Succeeded or Failed */
	bool running;		/* status.phase Running */
	bool disruption;	/* DisruptionTarget=True */
	uint64_t serial;	/* this copy's number, unique in the
				 * process: the core's cache knows a text
				 * by it (tg_k8s_add_object_version) */
	uint64_t sig;		/* hash of metadata and spec (not the
				 * resourceVersion): a pod change that
				 * matters to placement changes it, a write
				 * to status alone does not; a Node's covers
				 * its slim status too */
	uint64_t since;		/* the serial of the first copy of the run
				 * of copies with this sig that ends here
				 * (br_store_put): a Node's copies of one
				 * run differ in nothing the slim text
				 * holds but resourceVersion, so the core's
				 * cache keeps its topology across kubelet
				 * heartbeats (sched.c gives Nodes under
				 * it) */
	/* store */
	struct br_obj *chain;
	size_t idx;
	unsigned refs;		/* references (atomic): the store's, and a
				 * scheduling cycle's while its worker reads
				 * the text (sched.c); the object is freed
				 * when the last goes */
} br_obj;

/* The change log's bound: past this many keys more than the store's
 * objects (br_store_track()), the log is dropped and the consumer told
 * to take every object again (overflow). */
#define BR_STORE_MAX_CHANGES	65536

struct br_map;

typedef struct br_store {
	br_obj **slots;		/* hash chains */
	size_t nslots;
	br_obj **all;		/* dense, in no particular order */
	size_t n, cap;
	size_t bytes;		/* text bytes held */
	struct br_map *chg;	/* keys put or taken since the last
				 * br_store_changes() (br_store_track());
				 * NULL: not tracked */
	bool overflow;		/* the log was dropped past its bound */
} br_store;

/*
 * An object never changes once made: an update replaces it in the store.
 * So a scheduling cycle's worker thread reads the objects it took a
 * reference on (br_obj_ref) while the I/O thread goes on applying watch
 * events; br_obj_free() drops a reference (thread-safe) and frees the
 * object with the last.  The chain and idx fields are the store's: only
 * the I/O thread reads them.
 *
 * Makes an object from a parsed item.  Trims \p j in place.  \p kind and
 * \p api_version are set when the item lacks them.  With \p translate,
 * pods of the upstream gang API (spec.schedulingGroup.podGroupName) get
 * the label of a Koordinator PodGroup of the same name, which the
 * snapshot then supplies (see sched.c).
 * \note Free with br_obj_free(); NULL when the item has no name.
 */
br_obj *br_obj_from_json(cJSON *j, const char *kind, const char *api_version,
			 bool is_pod);
void br_obj_free(br_obj *o);
/* Another reference to \p o (NULL-safe); dropped with br_obj_free(). */
br_obj *br_obj_ref(br_obj *o);
/* The object's text parsed again; caller deletes. */
cJSON *br_obj_parse(const br_obj *o);

void br_store_init(br_store *s);
/* Frees every object. */
void br_store_free(br_store *s);
br_obj *br_store_get(const br_store *s, const char *key);
/* Inserts \p o; returns the object it replaced (caller frees) or NULL. */
br_obj *br_store_put(br_store *s, br_obj *o);
/* Removes by key; returns the object (caller frees) or NULL. */
br_obj *br_store_take(br_store *s, const char *key);

/*
 * The change log, for a consumer that keeps a model of the store (the
 * core's cache, sched.c): once tracked, every put and take notes its key
 * (once until the next br_store_changes()).  br_store_changes() hands the
 * keys over (the caller frees each and the array; *n their count) and
 * empties the log; it returns false when the log overflowed
 * (BR_STORE_MAX_CHANGES more keys than objects): the keys are then none
 * and the consumer must take every object again.  Not tracked: always
 * false, no keys.
 */
void br_store_track(br_store *s);
bool br_store_changes(br_store *s, char ***keys, size_t *n);

#endif /* BR_STORE_H */
