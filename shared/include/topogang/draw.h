/*
 * topogang/draw.h - pictures of the fabric: its domains as nested boxes,
 * each node coloured by how much of it is used, the members of chosen
 * gangs marked with their ranks, nodes that placement cannot use flagged
 * with the reason, and a legend.
 *
 * Three forms of one picture, all from the same walk of the built tree:
 *   TG_DRAW_SVG   a standalone SVG 1.1 document (no script, no external
 *                 reference): for files, docs and mail.
 *   TG_DRAW_HTML  one self-contained page: the same SVG inline, a side
 *                 panel (gangs, why pending gangs wait, flagged nodes)
 *                 and a small inline script to zoom, pan and filter (by
 *                 node, gang or domain name).  No external script, style
 *                 or font.  With opts.state_url the page polls that JSON
 *                 every opts.refresh_s seconds and reloads itself (keeping
 *                 zoom and filter) when its "version" changes.
 *   TG_DRAW_JSON  the data behind the picture: layers, domains (with
 *                 their GPU counts), nodes (path, GPUs, flag, NVLink
 *                 islands when more than one, gangs), gangs (state,
 *                 domain, reason, members by rank).
 *
 * NVLink: a layer named like an NVLink domain (nvlink, accelerator,
 * clique, nvl, imex in its name or key) is drawn dashed as one; a node
 * whose GPUs form several islands (tg_topology_node_set_gpus()) shows
 * them in its tooltip ("0-3|4-7").
 *
 * Every name (nodes, domains, gangs, reasons: they come from users) is
 * escaped for its context (XML text and attributes, JSON strings).
 *
 * Marks: every gang given (opts.gangs) or decided (opts.decisions) is
 * listed; its members, when it has any, mark their nodes with the gang's
 * colour and rank, and the domains holding them carry the gang's name.
 * Nodes running other work (allocations in the topology) are coloured
 * by use: GPUs when the node has any, CPU otherwise.
 *
 * Flags: a node outside the tree is flagged "no <label> label" (the
 * layers its path misses), an unschedulable node "unschedulable
 * (cordoned, drained or down)", and opts.notes add the host's own
 * reasons (Slurm's DRAIN reason, say).
 *
 * Determinism: output depends only on the topology, the options and
 * their order; domains and nodes come in the tree's order.
 *
 * tg_draw() draws the same tree as plain text for a terminal.
 *
 * Ownership: every picture is the caller's (tg_free()); the topology,
 * decisions and options passed in are only read, and nothing keeps a
 * pointer to them after the call.
 */
#ifndef TOPOGANG_DRAW_H
#define TOPOGANG_DRAW_H

#include "topogang/place.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of one picture; past it tg_draw_render() fails with TG_ELIMIT. */
#define TG_DRAW_MAX_OUT		(64u << 20)
/* Gangs written out in the SVG's text list (the HTML lists them all);
 * the rest are counted on one line naming this limit. */
#define TG_DRAW_LIST_MAX	24
/* Fabrics of at most this many nodes get named node boxes; larger ones
 * get small squares (names in tooltips and in the HTML's filter). */
#define TG_DRAW_NAMED_MAX	96

typedef enum tg_draw_format {
	TG_DRAW_SVG = 0,
	TG_DRAW_HTML,
	TG_DRAW_JSON
} tg_draw_format;

typedef struct tg_draw_member {
	tg_node_id node;
	unsigned rank;
} tg_draw_member;

/* A gang as the host knows it (bound, running, pending ...). */
typedef struct tg_draw_gang {
	const char *name;
	const char *state;	/* shown as is: "bound", "pending" ... */
	const char *domain;	/* where it sits; NULL = none */
	const char *reason;	/* why it waits; NULL = none */
	const tg_draw_member *members;
	unsigned nmembers;
} tg_draw_gang;

/* A host's reason to flag a node (drained, excluded ...). */
typedef struct tg_draw_note {
	tg_node_id node;
	const char *reason;
} tg_draw_note;

/* A zeroed struct (or NULL) draws the bare fabric. */
typedef struct tg_draw_opts {
	const char *title;	/* NULL: "topogang: N nodes" */
	const tg_decision *const *decisions;	/* state from the decision */
	unsigned ndecisions;
	const tg_draw_gang *gangs;
	unsigned ngangs;
	const tg_draw_note *notes;
	unsigned nnotes;
	const char *state_url;	/* HTML: poll this JSON (live page) */
	unsigned refresh_s;	/* its period; 0 = 5 s */
	const char *version;	/* HTML, JSON: changes with the state */
} tg_draw_opts;

/*
 * Draws the built topology \p t with the marks of \p opts in form \p fmt.
 * TG_EINVAL for an unbuilt topology, a node id out of range or an
 * unknown format; TG_ELIMIT when the picture passes TG_DRAW_MAX_OUT;
 * TG_ENOMEM.  \p ei says which.
 * \note *out belongs to the caller: tg_free().  NUL-terminated.
 */
tg_err tg_draw_render(const tg_topology *t, tg_draw_format fmt,
		      const tg_draw_opts *opts, char **out, tg_errinfo *ei);

/*
 * Draws the tree (domains with free/total slots) with the decision's
 * nodes marked, as plain text (the terminal's picture; tg_draw_render()
 * draws SVG, HTML or JSON).  \p d may be NULL.  At most 16 MiB: a
 * longer picture is cut and ends in " [message cut at 16777216 bytes]".
 * \note The caller frees the string with tg_free(); NULL on ENOMEM.
 */
char *tg_draw(const tg_topology *t, const tg_decision *d);

#ifdef __cplusplus
}
#endif
#endif /* TOPOGANG_DRAW_H */
