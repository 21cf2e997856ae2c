/*
 * k8s_bridge/ui.c - /ui and /ui/state (see ui.h): the core draws, this
 * file only gathers what the bridge already holds.
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "map.h"
#include "ui.h"

/* The rank annotation as the pods cache keeps it (compact JSON text,
 * store.h): "topogang.io/rank":"3". */
#define UI_RANK_KEY	"\"" BR_ANN_RANK "\":\""
#define UI_VERSION0	"0000000000000000"	/* patched with the hash */

struct br_ui {
	char *html;		/* the last cycle's page, NULL = none yet */
	char *json;		/* and its state */
	br_map reasons;		/* gang -> why it waited last time */
};

typedef struct ui_gang {
	tg_draw_member *m;
	unsigned n, cap;
	const char *domain;	/* a member pod's BR_ANN_DOMAIN (borrowed) */
} ui_gang;

br_ui *br_ui_create(void)
{
	br_ui *u = br_xcalloc(1, sizeof(*u));

	br_map_init(&u->reasons, free);
	return u;
}

void br_ui_destroy(br_ui *u)
{
	if (!u)
		return;
	free(u->html);
	free(u->json);
	br_map_free(&u->reasons);
	free(u);
}

void br_ui_reset(br_ui *u)
{
	if (!u)
		return;
	free(u->html);
	free(u->json);
	u->html = u->json = NULL;
}

static void free_gang(void *p)
{
	ui_gang *g = p;

	free(g->m);
	free(g);
}

static int by_rank(const void *a, const void *b)
{
	const tg_draw_member *x = a, *y = b;

	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The rank the bridge stamped on a bound pod; \p dflt when none. */
static unsigned pod_rank(const br_obj *o, unsigned dflt)
{
	const char *p = strstr(o->text, UI_RANK_KEY);
	char *end;
	unsigned long r;

	if (!p)
		return dflt;
	r = strtoul(p + strlen(UI_RANK_KEY), &end, 10);
	return *end == '"' && r <= TG_MAX_MEMBERS ? (unsigned)r : dflt;
}

/* Bound members by gang, from the pods cache (not the gangs decided in
 * this cycle: their decisions say more). */
static void bound_gangs(br_map *bound, const tg_topology *t,
			const br_store *pods, const br_map *decided)
{
	size_t i;

	for (i = 0; pods && i < pods->n; i++) {
		const br_obj *o = pods->all[i];
		tg_node_id id;
		ui_gang *g;

		if (!o->node || !o->ann_gang || o->deleting ||
		    br_map_get(decided, o->ann_gang) ||
		    tg_topology_node_find(t, o->node, &id))
			continue;
		g = br_map_get(bound, o->ann_gang);
		if (!g) {
			g = br_xcalloc(1, sizeof(*g));
			br_map_put(bound, o->ann_gang, g);
		}
		if (g->n == g->cap) {
			g->cap = g->cap ? 2 * g->cap : 8;
			g->m = br_xrealloc(g->m, g->cap * sizeof(*g->m));
		}
		g->m[g->n].node = id;
		g->m[g->n].rank = pod_rank(o, g->n);
		g->n++;
		if (o->ann_domain && *o->ann_domain)
			g->domain = o->ann_domain;
	}
}

/* Renders \p fmt into *out (replacing it); false (logged) on error. */
static bool render(const tg_topology *t, tg_draw_format fmt,
		   const tg_draw_opts *o, char **out)
{
	tg_errinfo ei = { "" };
	char *s = NULL;

	if (tg_draw_render(t, fmt, o, &s, &ei)) {
		br_log(BR_LOG_WARN, "ui: cannot draw the fabric; the previous "
		       "picture stays", "error", ei.msg, NULL);
		return false;
	}
	free(*out);
	*out = br_xstrdup(s);
	tg_free(s);
	return true;
}

/* JSON first with a placeholder version, patched with its own hash; the
 * page then carries the same version. */
static void draw_both(br_ui *u, const tg_topology *t, tg_draw_opts *o)
{
	char *json = NULL, ver[32];
	uint64_t h = 1469598103934665603ULL;
	const char *p;

	o->version = UI_VERSION0;
	if (!render(t, TG_DRAW_JSON, o, &json))
		return;
	for (p = json; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	snprintf(ver, sizeof(ver), "%016llx", (unsigned long long)h);
	p = strstr(json, UI_VERSION0);
	if (p)
		memcpy((char *)p, ver, 16);
	o->version = ver;
	/* relative: works behind `kubectl proxy`'s service path too */
	o->state_url = "ui/state";
	o->refresh_s = BR_UI_REFRESH_S;
	if (render(t, TG_DRAW_HTML, o, &u->html)) {
		free(u->json);
		u->json = json;
	} else {
		free(json);
	}
}

void br_ui_update(br_ui *u, const tg_topology *t, const tg_k8s *k,
		  const tg_decision *const *d, size_t nd,
		  const br_store *pods)
{
	br_map bound, decided, reasons;
	br_map_ent *e;
	size_t slot, i, nb = 0, ng = 0;
	const char **names;
	tg_draw_gang *g;
	tg_draw_opts o;
	unsigned nk = k ? tg_k8s_ngangs(k) : 0;

	br_map_init(&bound, free_gang);
	br_map_init(&decided, NULL);
	br_map_init(&reasons, free);
	for (i = 0; i < nd; i++) {
		br_map_put(&decided, tg_decision_gang(d[i]), (void *)d[i]);
		if (tg_decision_status(d[i]) != TG_STATUS_PLACED)
			br_map_put(&reasons, tg_decision_gang(d[i]),
				   br_xstrdup(tg_decision_message(d[i])));
	}
	bound_gangs(&bound, t, pods, &decided);
	names = br_xcalloc(bound.n + 1, sizeof(char *));
	for (e = br_map_first(&bound, &slot); e;
	     e = br_map_next(&bound, &slot, e))
		names[nb++] = e->key;
	qsort(names, nb, sizeof(char *), by_name);
	g = br_xcalloc(nb + nk + 1, sizeof(*g));
	for (i = 0; i < nb; i++) {
		ui_gang *b = br_map_get(&bound, names[i]);

		qsort(b->m, b->n, sizeof(*b->m), by_rank);
		g[ng].name = names[i];
		g[ng].state = "bound";
		g[ng].domain = b->domain;
		g[ng].members = b->m;
		g[ng++].nmembers = b->n;
	}
	for (i = 0; i < nk; i++) {
		const char *name = tg_gang_name(tg_k8s_gang(k, (unsigned)i));
		const char *old = br_map_get(&u->reasons, name);

		if (br_map_get(&decided, name) || br_map_get(&bound, name))
			continue;
		g[ng].name = name;
		g[ng].state = "waiting";
		g[ng++].reason = old ? old : "not decided in this cycle "
					     "(backing off)";
		if (old)
			br_map_put(&reasons, name, br_xstrdup(old));
	}
	memset(&o, 0, sizeof(o));
	o.title = "topogang-bridge";
	o.decisions = d;
	o.ndecisions = (unsigned)nd;
	o.gangs = g;
	o.ngangs = (unsigned)ng;
	draw_both(u, t, &o);
	br_map_free(&u->reasons);
	u->reasons = reasons;
	free(g);
	free(names);
	br_map_free(&decided);
	br_map_free(&bound);
}

int br_ui_serve(br_ui *u, const char *path, tg_buf *body, const char **ctype)
{
	if (strcmp(path, "/ui/state") == 0) {
		*ctype = "application/json";
		if (!u->json) {
			tg_buf_adds(body, "{\"error\": \"no picture: this "
				    "replica does not lead, or has run no "
				    "scheduling cycle yet\"}\n");
			return 503;
		}
		tg_buf_adds(body, u->json);
		return 200;
	}
	if (strcmp(path, "/ui") != 0)
		return 404;
	*ctype = "text/html; charset=utf-8";
	if (!u->html) {
		tg_buf_addf(body, "<!DOCTYPE html>\n<html lang=\"en\"><head>"
			    "<meta charset=\"utf-8\"><meta http-equiv=\""
			    "refresh\" content=\"%d\"><title>topogang-bridge"
			    "</title></head><body><p>topogang-bridge: no "
			    "picture: this replica does not lead (standby), "
			    "or has run no scheduling cycle yet (caches not "
			    "synced); this page retries every %d s.</p>"
			    "</body></html>\n",
			    BR_UI_REFRESH_S, BR_UI_REFRESH_S);
		return 200;
	}
	tg_buf_adds(body, u->html);
	return 200;
}
