/*
 * topogang/request.h - the topology request grammar every host reads and
 * writes: the CLI (--gather, --slice, --spread), topogang.conf
 * (DefaultGather=, Gather=), the SPANK plugin (--topo-gather,
 * --topo-slice, --topo-spread, and the job environment it hands
 * slurmctld) and the bridge's mixed mode (what it submits to Slurm).
 *
 *   gather   LAYER:must|prefer[,LAYER:must|prefer...]   or  none
 *   slice    LAYER:N[,...]             every N consecutive members share
 *                                      one domain of LAYER
 *   spread   LAYER[:SKEW][:hard|:soft][,...]   SKEW (default 1) and the
 *                                      mode (default soft) in any order
 *
 * Case rule: the keywords (must, prefer, hard, soft, none) are read
 * without regard to case ("spine:MUST" is "spine:must"; topogang.conf has
 * always accepted that); layer names are kept as written, since the
 * topology's layer names are matched exactly.  A layer given twice in one
 * request is an error, compared without regard to case (topogang.conf's
 * LayerName aliases are case-insensitive, so "spine" and "SPINE" may be
 * the same layer).  The formatter writes keywords in lower case and
 * every field of a spread ("rack:1:soft"), so a formatted request parses
 * back to the same request.
 *
 * Layer names: 1 to TG_REQUEST_MAX_LAYER bytes of letters, digits and
 * '-', '_', '.', '/' (Kubernetes label keys included).
 */
#ifndef TOPOGANG_REQUEST_H
#define TOPOGANG_REQUEST_H

#include <stdbool.h>
#include <stddef.h>

#include "topogang/common.h"
#include "topogang/gang.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bounds; hitting one is TG_ELIMIT with a message naming it. */
#define TG_REQUEST_MAX_LAYER	TG_MAX_NAME	/* bytes of a layer */
/* Items of one request: every request one gang can hold (TG_MAX_LAYERS
 * + 2 gathers; TG_MAX_LAYERS + 1 layer spreads and TG_MAX_SPREADS
 * label-selector spreads, which mixed mode writes out). */
#define TG_REQUEST_MAX_ITEMS	(TG_MAX_LAYERS + 1 + TG_MAX_SPREADS)
#define TG_REQUEST_MAX_SKEW	1000000u	/* a spread's SKEW */
#define TG_REQUEST_MAX_SLICE	TG_MAX_MEMBERS	/* a slice's N */
/* Bytes of the longest formatted request, NUL included: a buffer this
 * large never makes tg_request_format() fail. */
#define TG_REQUEST_MAX_TEXT \
	(TG_REQUEST_MAX_ITEMS * (TG_REQUEST_MAX_LAYER + 16) + 8)

typedef enum tg_request_kind {
	TG_REQUEST_GATHER = 1,	/* LAYER:must|prefer, or none */
	TG_REQUEST_SLICE,	/* LAYER:N */
	TG_REQUEST_SPREAD	/* LAYER[:SKEW][:hard|:soft] */
} tg_request_kind;

typedef struct tg_request_item {
	char layer[TG_REQUEST_MAX_LAYER + 1];
	tg_gather how;		/* gather: TG_GATHER_MUST or _PREFER */
	unsigned size;		/* slice: N */
	unsigned skew;		/* spread: SKEW, 1 by default */
	bool hard;		/* spread: hard (never exceed SKEW) */
} tg_request_item;

/* A parsed request: a plain value, no pointers, copied by assignment. */
typedef struct tg_request {
	tg_request_kind kind;
	bool none;		/* gather "none": no gathering, n == 0 */
	unsigned n;
	tg_request_item item[TG_REQUEST_MAX_ITEMS];
} tg_request;

/*
 * Makes \p r an empty request of \p kind (n == 0), for tg_request_add().
 */
void tg_request_init(tg_request *r, tg_request_kind kind);

/*
 * Parses \p text as a request of \p kind into \p r.  Errors name the
 * text and where in it: "'block:must,spine:maybe' at column 12: expected
 * LAYER:must or LAYER:prefer" (TG_EPARSE); TG_ELIMIT past
 * TG_REQUEST_MAX_ITEMS items, a layer longer than TG_REQUEST_MAX_LAYER,
 * a SKEW or N out of range; TG_EINVAL for a NULL argument or an unknown
 * kind.  On error \p r is an empty request of \p kind.
 * \note Nothing to free; \p r is the caller's.
 */
tg_err tg_request_parse(tg_request *r, tg_request_kind kind,
			const char *text, tg_errinfo *ei);

/*
 * Whether the \p n bytes at \p s make a layer name the grammar takes: 1
 * to TG_REQUEST_MAX_LAYER bytes of letters, digits, '-', '_', '.' and
 * '/' (topogang.conf's LayerName and Layer values are checked with it).
 */
bool tg_request_layer_ok(const char *s, size_t n);

/*
 * Appends a copy of \p it (its layer checked as the parser checks it,
 * not for repeats: a gang's label-selector spreads may share a layer).
 * TG_ELIMIT past TG_REQUEST_MAX_ITEMS, TG_EINVAL for a bad layer name or
 * a value the grammar cannot write (gather how not MUST or PREFER, size
 * or skew 0 or too large).
 */
tg_err tg_request_add(tg_request *r, const tg_request_item *it,
		      tg_errinfo *ei);

/*
 * Writes the canonical text of \p r into \p buf ("block:prefer,
 * spine:must", "none" for a gather with no items, "" for an empty slice
 * or spread).  TG_ELIMIT when it does not fit in \p len bytes (\p buf is
 * then "" if len > 0); TG_REQUEST_MAX_TEXT bytes always suffice.
 */
tg_err tg_request_format(const tg_request *r, char *buf, size_t len);

/*
 * Maps a request's layer name to the topology's (topogang.conf's
 * LayerName aliases, mixed mode's layer table); returns \p name itself
 * when it has no other name.  The result must live until the call that
 * passed the map returns.
 */
typedef const char *(*tg_request_layer_fn)(void *ctx, const char *name);

/*
 * Adds the request's items to \p g: tg_gang_set_gather(),
 * tg_gang_add_slice() or tg_gang_add_spread() for each, with the layer
 * through \p map when it is not NULL.  A failure names the item
 * ("slice block:3: invalid argument or value") and returns the gang's
 * error; the items before it stay added.
 */
tg_err tg_request_apply(const tg_request *r, tg_gang *g,
			tg_request_layer_fn map, void *ctx, tg_errinfo *ei);

#ifdef __cplusplus
}
#endif
#endif /* TOPOGANG_REQUEST_H */
