/*
 * shared/src/export/draw.c - a text picture of the fabric with a decision marked.
 *
 *   cluster: 12 nodes, 12 free
 *   ├─ SpineLayer spine-0: 5 nodes, 5 free
 *   │  ├─ BlockLayer block-0: node-0 node-1 node-2
 *   ...
 *   └─ SpineLayer spine-1: 4 nodes, 0 free  <== gang
 *      ├─ BlockLayer block-2: [node-5 r0] [node-6 r1]
 *
 * A node is "free" when nothing runs on it.  Nodes of the decision are
 * drawn [name r<ranks>].  Big fabrics (more than 64 nodes) show only the
 * domains the decision uses and one summary line for the rest.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "model.h"

#define DRAW_FULL_MAX	64
/* the longest picture; a longer one (a gang of ~60k nodes with names
 * near their limit) is cut and says so */
#define DRAW_MAX_BYTES	(16u << 20)

typedef struct draw_ctx {
	const tg_topology *t;
	const tg_decision *d;
	uint32_t *marked;	/* per domain: placements inside */
	bool full;
	tg_buf b;
} draw_ctx;

static bool node_idle(const tg_topology *t, uint32_t n)
{
	unsigned r;

	for (r = 0; r < t->stride; r++)
		if (t->freev[(size_t)n * t->stride + r] !=
		    t->alloc[(size_t)n * t->stride + r])
			return false;
	return true;
}

static void draw_node(draw_ctx *c, uint32_t n)
{
	const tg_topology *t = c->t;
	unsigned i, nr = 0;
	const char *name = tgi_strtab_get(&t->strs, t->name[n]);

	if (c->d)
		for (i = 0; i < tg_decision_nplacements(c->d); i++)
			if (tg_decision_placement(c->d, i)->node == n)
				nr++;
	if (!nr) {
		tg_buf_addf(&c->b, " %s%s", name, node_idle(t, n) ? "" : "~");
		return;
	}
	tg_buf_addf(&c->b, " [%s r", name);
	nr = 0;
	for (i = 0; i < tg_decision_nplacements(c->d); i++) {
		const tg_placement *p = tg_decision_placement(c->d, i);

		if (p->node == n)
			tg_buf_addf(&c->b, "%s%u", nr++ ? "," : "", p->rank);
	}
	tg_buf_adds(&c->b, "]");
}

static void draw_dom(draw_ctx *c, uint32_t dom, const char *prefix,
		     bool last)
{
	const tg_topology *t = c->t;
	const tgi_domain *x = &t->dom[dom];
	uint32_t i, idle = 0, ch, shown = 0, skipped = 0, skipped_nodes = 0;
	char sub[4 * TG_MAX_LAYERS + 8];

	for (i = x->lo; i < x->hi; i++)
		if (node_idle(t, t->order[i]))
			idle++;
	tg_buf_adds(&c->b, prefix);
	if (dom)
		tg_buf_adds(&c->b, last ? "`- " : "|- ");
	if (dom)
		tg_buf_addf(&c->b, "%s %s:", t->layer_name[x->layer],
			     tgi_strtab_get(&t->strs, x->value));
	else
		tg_buf_adds(&c->b, "cluster:");
	if (dom && x->layer == t->nlayers - 1 &&
	    (c->full || c->marked[dom])) {
		for (i = x->lo; i < x->hi; i++)
			draw_node(c, t->order[i]);
		tg_buf_adds(&c->b, "\n");
		return;
	}
	tg_buf_addf(&c->b, " %u node%s, %u idle%s\n", x->hi - x->lo,
		     x->hi - x->lo == 1 ? "" : "s", idle,
		     c->marked[dom] ? "  <== gang" : "");
	if (dom && x->layer == t->nlayers - 1)
		return;
	snprintf(sub, sizeof(sub), "%s%s", prefix,
		 dom ? (last ? "   " : "|  ") : "");
	for (ch = x->child0; ch < x->child0 + x->nchild; ch++) {
		if (!c->full && !c->marked[ch]) {
			skipped++;
			skipped_nodes += t->dom[ch].hi - t->dom[ch].lo;
			continue;
		}
		shown++;
	}
	for (ch = x->child0; ch < x->child0 + x->nchild; ch++) {
		if (!c->full && !c->marked[ch])
			continue;
		shown--;
		draw_dom(c, ch, sub, shown == 0 && !skipped);
	}
	if (skipped)
		tg_buf_addf(&c->b, "%s`- (%u more %s domain%s, %u nodes)\n",
			     sub, skipped, t->layer_name[t->dom[x->child0].layer],
			     skipped == 1 ? "" : "s", skipped_nodes);
}

char *tg_draw(const tg_topology *t, const tg_decision *d)
{
	draw_ctx c;
	unsigned i;
	uint32_t n;

	if (!t || !t->built)
		return NULL;
	memset(&c, 0, sizeof(c));
	c.t = t;
	c.d = d;
	c.full = t->ntree <= DRAW_FULL_MAX;
	c.marked = tgi_calloc(t->ndom ? t->ndom : 1, sizeof(uint32_t));
	if (!c.marked)
		return NULL;
	tg_buf_init(&c.b, DRAW_MAX_BYTES);
	for (i = 0; d && i < tg_decision_nplacements(d); i++) {
		uint32_t dom = t->leaf[tg_decision_placement(d, i)->node];

		while (dom != TG_NONE) {
			c.marked[dom]++;
			dom = t->dom[dom].parent;
		}
	}
	if (t->nlayers == 0) {
		tg_buf_addf(&c.b, "cluster: %zu nodes\n ", t->nnodes);
		for (n = 0; n < t->nnodes && (c.full || n < DRAW_FULL_MAX); n++)
			draw_node(&c, t->order[n]);
		tg_buf_adds(&c.b, "\n");
	} else {
		draw_dom(&c, 0, "", true);
	}
	if (t->ntree < t->nnodes) {
		tg_buf_addf(&c.b, "outside the tree (missing labels):");
		for (n = (uint32_t)t->ntree; n < t->nnodes; n++)
			draw_node(&c, t->order[n]);
		tg_buf_adds(&c.b, "\n");
	}
	tg_buf_adds(&c.b, "(~ = in use, [node rK] = rank K of the "
		     "gang)\n");
	tgi_free(c.marked);
	return tg_buf_take_cut(&c.b);
}
