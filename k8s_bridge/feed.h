/*
 * k8s_bridge/feed.h - what else the daemon lists and watches for the
 * core's loader, beyond nodes, pods, PriorityClasses, budgets and the
 * upstream PodGroups (main.c): the gang dialects' group objects, the
 * topology objects, namespaces and the volume objects.
 */
#ifndef BR_FEED_H
#define BR_FEED_H

#include <stddef.h>

#include "informer.h"

/* Dialects with a group object, at most (one informer each). */
#define BR_MAX_DIALECT_FEEDS	12
/* The fixed feeds after them (feed.c's R_FEED_MORE). */
#define BR_FEED_NMORE		7
#define BR_MAX_FEED		(BR_MAX_DIALECT_FEEDS + BR_FEED_NMORE)

/*
 * Fills \p out (room for \p cap) with one resource per distinct group
 * object of the core's dialects (two dialects may share one: the first
 * wins), then the fixed ones; *n is how many.  More than \p max_dialect
 * dialect objects (the daemon passes BR_MAX_DIALECT_FEEDS), or a dialect
 * asking for more versions than an informer tries, is -1 with \p err (one
 * line naming the limit), not a dialect silently unwatched.
 * \note The strings are static or the core's dialect table's.
 */
int br_feed_init(br_resdef *out, unsigned cap, unsigned max_dialect,
		 unsigned *n, char *err, size_t errlen);

#endif /* BR_FEED_H */
