/*
 * topogang/common.h - error codes, limits and the allocator hook.
 *
 * libtopogang is pure: it never exits, never prints and never logs.  Every
 * failing call returns a tg_err; calls that take a tg_errinfo fill it with
 * one line a person can act on ("topology.conf:12: bad hostlist ...").
 */
#ifndef TOPOGANG_COMMON_H
#define TOPOGANG_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tg_err {
	TG_OK = 0,
	TG_ENOMEM,	/* an allocation failed */
	TG_EINVAL,	/* a bad argument or a bad value in the input */
	TG_EPARSE,	/* malformed input text */
	TG_ELIMIT,	/* a named upper bound was hit */
	TG_ENOENT,	/* a named thing does not exist */
	TG_EEXIST,	/* a named thing exists already */
	TG_ESTATE,	/* the call is not allowed in this state */
	TG_EIO		/* a file could not be read */
} tg_err;

/* Upper bounds on everything filled from outside; hitting one is TG_ELIMIT. */
#define TG_MAX_LAYERS		16	/* topology layers, root excluded */
#define TG_MAX_RESOURCES	32	/* distinct resource names */
#define TG_MAX_GPUS		64	/* GPUs in one node */
#define TG_MAX_NAME		253	/* a node, pod, layer or label name */
#define TG_MAX_NODES		(4u << 20)
#define TG_MAX_MEMBERS		(1u << 20)	/* members of one gang */
#define TG_MAX_FILE		(256u << 20)	/* bytes of one input file */
#define TG_MAX_POD_LABELS	256	/* labels of one pod (allocation or
					 * gang member) */
#define TG_MAX_SPREADS		16	/* label-selector spreads of a gang */
/* Work of one placement that fills members one at a time over a hard
 * topology spread on a node label that is no layer: the gang's members
 * times the combinations of those spreads' values on the nodes.
 * Past it the gang is unschedulable, its message naming the bound (not
 * TG_ELIMIT: nothing was wrong with the input). */
#define TG_MAX_KEY_FILL		(1u << 24)

/* Sentinel for "no node", "no domain", "no layer". */
#define TG_NONE UINT32_MAX

/*
 * A one-line, human-readable explanation of the last error.  Functions that
 * take a tg_errinfo * accept NULL when the caller does not want it.  At
 * most 511 bytes: a longer explanation is cut and ends in "...".
 */
typedef struct tg_errinfo {
	char msg[512];
} tg_errinfo;

/*
 * Returns a static string for an error code; never NULL.
 */
const char *tg_strerror(tg_err err);

/*
 * Replaces the allocator used by the library (process-wide, like
 * curl_global_init_mem()).  Pass NULLs to restore malloc/realloc/free.
 * Call it before any other tg_ function; not thread-safe.
 */
void tg_set_allocator(void *(*m)(size_t), void *(*r)(void *, size_t),
		      void (*f)(void *));

/*
 * Frees memory the library handed to the caller: strings from tg_draw(),
 * tg_draw_render(), tg_export(), tg_topology_compare(),
 * tg_nodeinfo_export(), tg_hostlist_compress(), the names of
 * tg_hostlist_expand(), and whatever else a header's \note says to free
 * with tg_free().  Objects with a destroy function (tg_topology_destroy(),
 * tg_decision_free(), ...) are freed with it instead.  Accepts NULL.
 */
void tg_free(void *p);

#ifdef __cplusplus
}
#endif
#endif /* TOPOGANG_COMMON_H */
