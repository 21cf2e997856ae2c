/*
 * k8s_bridge/ui.h - the live picture of the fabric at /ui (off by
 * default: --ui, or server.ui in the config file; same listener as
 * /metrics).
 *
 *   GET /ui        one self-contained page (the core's TG_DRAW_HTML: the
 *                  SVG inline, no external script or font) that polls
 *                  ui/state (relative: also behind `kubectl proxy`'s
 *                  service path) every BR_UI_REFRESH_S seconds and
 *                  reloads itself when the state's version changes;
 *                  /ui#TEXT opens it filtered on TEXT.
 *   GET /ui/state  the JSON behind it (TG_DRAW_JSON): layers, domains,
 *                  nodes (GPUs used, flag, running gangs, ranks), gangs
 *                  (bound ones with their ranks and domain, this cycle's
 *                  decisions, pending ones and why they wait).
 *
 * Built from the bridge's own state only, never from an extra API-server
 * call: after each scheduling cycle the scheduler hands over its model
 * (the snapshot of the caches, the decisions applied) and the pods cache
 * (ranks of bound members, from the topogang.io/rank annotation the
 * bridge stamped); both pictures are rendered then and kept until the
 * next cycle.  "version" is the FNV-1a hash of the state, so the page
 * reloads only when something changed.  A replica that has run no cycle
 * (standby, caches not synced) or has lost the lead serves a short page
 * saying so, and 503 on /ui/state.
 */
#ifndef BR_UI_H
#define BR_UI_H

#include <stddef.h>
#include <stdint.h>

#include <topogang/topogang.h>

#include "store.h"
#include "util.h"

#define BR_UI_REFRESH_S	5	/* the page's poll period */

typedef struct br_ui br_ui;

/* \note Destroy with br_ui_destroy(). */
br_ui *br_ui_create(void);
void br_ui_destroy(br_ui *u);

/*
 * A cycle's model: \p t with the decisions \p d (\p nd of them) applied,
 * \p k its loader (the pending gangs), \p pods the pods cache.  Renders
 * the page and the state; logs and keeps the previous ones on error.
 */
void br_ui_update(br_ui *u, const tg_topology *t, const tg_k8s *k,
		  const tg_decision *const *d, size_t nd,
		  const br_store *pods);

/* Leadership lost: the picture is dropped (a standby's would go stale);
 * /ui says so until the next cycle. */
void br_ui_reset(br_ui *u);

/* Serves /ui and /ui/state: the HTTP status; 404 for other paths. */
int br_ui_serve(br_ui *u, const char *path, tg_buf *body,
		const char **ctype);

#endif /* BR_UI_H */
