/*
 * k8s_bridge/informer.h - list + watch caches (client-go's Reflector).
 *
 *  1. List with paging (limit/continue); every page carries the list's
 *     resourceVersion.  An expired continue token (410) restarts the list.
 *  2. Watch from the list's resourceVersion with allowWatchBookmarks and
 *     a timeoutSeconds; events are framed by br_jframe (chunk boundaries
 *     are not event boundaries).  BOOKMARKs only move the version.
 *  3. A stream that ends is watched again from the last version seen
 *     (object or bookmark).  A 410 (reason Expired or Gone, as an HTTP
 *     status or an ERROR event) re-lists, then re-watches from the new
 *     list's version; the cache is diffed against the new list, so
 *     every change still reaches the callback exactly as an event.
 *     As client-go's reflector, a watch that cannot go on from its
 *     version re-lists too (1 s, doubling to 30 s while it repeats): a
 *     504 "Too large resource version" (status or ERROR event), any
 *     other ERROR event, an event or a stream that does not decode.
 *     A watch asks for timeoutSeconds x [1, 2) at random, so that the
 *     watches do not end together, and one that delivers nothing for
 *     watchIdleSeconds (a half-open connection: a real server sends a
 *     bookmark about once a minute) is cut (curl's low-speed limit) and
 *     watched again from the last version.
 *  4. resourceVersions are opaque: compared only for equality.
 *  5. An optional resource (a dialect CRD) answering 404 is "not
 *     installed": the informer counts as synced with nothing in it, and
 *     probes again every reprobe seconds.  Other failures back off
 *     (1 s doubling to 30 s).
 */
#ifndef BR_INFORMER_H
#define BR_INFORMER_H

#include <stdbool.h>
#include <stdint.h>

#include "bconfig.h"
#include "http.h"
#include "jframe.h"
#include "store.h"

typedef struct br_resdef {
	const char *resource;	/* "pods" */
	const char *group;	/* "" = core */
	const char *versions[3];	/* tried in order on 404 */
	const char *kind;	/* "Pod" */
	const char *field_selector;	/* unescaped, or NULL */
	bool optional;		/* 404 = not installed */
	bool is_pod;
} br_resdef;

enum { BR_EV_ADDED = 0, BR_EV_MODIFIED, BR_EV_DELETED };

typedef struct br_informer br_informer;

/*
 * A change: \p old is the previous object (NULL when added), \p cur the
 * new one (NULL when deleted).  Both are valid during the call only.
 */
typedef void (*br_informer_fn)(void *ud, br_informer *inf, int type,
			       const br_obj *old, const br_obj *cur);

/* \note Destroy with br_informer_destroy(); \p def, \p cfg and \p h must
 * outlive it. */
br_informer *br_informer_create(br_http *h, const br_config *cfg,
				const br_resdef *def, br_informer_fn fn,
				void *ud);
void br_informer_destroy(br_informer *inf);

/* Starts what is due (first list, retries, re-probes). */
void br_informer_tick(br_informer *inf, int64_t now_ms);

const br_resdef *br_informer_def(const br_informer *inf);
const br_store *br_informer_store(const br_informer *inf);
/* The store itself, for tests that apply events by hand (the daemon
 * changes its objects only through the informer; the scheduler reads
 * and empties its change log: br_store_track(), br_store_changes()). */
br_store *br_informer_store_mut(br_informer *inf);
/* Listed once at least (or found not installed). */
bool br_informer_synced(const br_informer *inf);
bool br_informer_installed(const br_informer *inf);
/* "v1", "scheduling.sigs.k8s.io/v1alpha1": the version in use. */
const char *br_informer_api_version(const br_informer *inf);

typedef struct br_informer_stats {
	uint64_t lists;		/* complete lists */
	uint64_t relists;	/* lists after a 410 */
	uint64_t watch_restarts;
	uint64_t events;
	uint64_t errors;
} br_informer_stats;

const br_informer_stats *br_informer_get_stats(const br_informer *inf);

#endif /* BR_INFORMER_H */
