/*
 * shared/src/export/draw_svg.c - the fabric as a picture (SVG, a page with the
 * SVG inline, and the JSON behind them); see topogang/draw.h.
 *
 * Layout: nested boxes, one per domain, from the root down to the lowest
 * layer, whose box holds its nodes as a grid of cells.  Sizes are found
 * bottom-up (domains are numbered layer by layer, so children come after
 * their parent: a reverse walk of the ids sees every child first), then
 * positions top-down, packing each domain's children in rows (shelf
 * packing) towards a box about 1.6 times as wide as high.  Nodes outside
 * the tree get a box of their own below the tree, flagged.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "draw_page.h"
#include "model.h"

/* Geometry, in SVG user units (pixels). */
#define DR_PAD		6	/* inside a box */
#define DR_HEAD		16	/* a box's header band */
#define DR_GAP		6	/* between boxes */
#define DR_CHAR		6.2	/* width of one character at 11px */
#define DR_TOP		64	/* title and legend */
#define DR_LINE		15	/* one line of the text lists */
#define DR_WRAP		120	/* characters per line of a reason */
#define DR_NPALETTE	8
#define DR_MINW		880	/* the legend's width */
#define DR_LABEL_MAX	(2 * TG_MAX_NAME + 128)	/* bytes of a box's header:
				 * its value, GPUs and gang name (a longer
				 * host gang name is cut there; the list and
				 * the tooltips have it whole) */
#define DR_LABEL_GANGS	3	/* gangs named in a box's header; "and
				 * more" after them */
#define DR_ASPECT	1.6	/* width / height a box's packing aims at */
#define DR_PACK_TRIES	64	/* row widths tried per box */
#define DR_NDEPTH	5
#define DR_NODE_GANGS	16	/* running gangs named per node; the
				 * rest counted ("(N more)") */

static const char *const palette[DR_NPALETTE] = {
	"#1565c0", "#c2185b", "#6a1b9a", "#00838f",
	"#bf360c", "#283593", "#827717", "#37474f"
};

typedef struct dr_gang {
	const char *name, *state, *domain, *reason;
	const tg_draw_member *m;
	unsigned n;
	tg_draw_member *own;	/* converted from a decision */
} dr_gang;

typedef struct dr_ctx {
	const tg_topology *t;
	const tg_draw_opts *o;
	tg_errinfo *ei;
	tg_buf b;
	dr_gang *g;
	unsigned ng;
	/* marks: per node a chain of (gang, rank) */
	uint32_t *mhead;	/* per node: mark index + 1 */
	uint32_t *mnext, *mgang;
	unsigned *mrank;
	size_t nmarks;
	/* allocations: per node a chain of allocation indices + 1 */
	uint32_t *ahead, *anext;
	/* flags: per node, the reason or NULL */
	char **flag;
	unsigned nflagged;
	/* per domain */
	double *w, *h, *x, *y;
	double *tw;		/* the row width its children are packed to */
	uint32_t *dgang;	/* gang index + 1; UINT32_MAX = several */
	/* the box of nodes outside the tree */
	double ow, oh, ox, oy;
	bool named;
	double cw, ch, cgap;	/* a node cell and the gap between cells */
	double width, height;
} dr_ctx;

/* ---- escaping ------------------------------------------------------------ */

/* The length of the valid UTF-8 sequence at \p s, 0 if none. */
static size_t dr_utf8(const unsigned char *s)
{
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	n = (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 :
	    (s[0] & 0xf8) == 0xf0 ? 4 : 0;
	if (!n || (n == 2 && s[0] < 0xc2) || (n == 4 && s[0] > 0xf4))
		return 0;
	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/*
 * \p s as XML text or attribute value: & < > " ' escaped, control
 * characters and bytes that are not UTF-8 as U+FFFD (XML 1.0 allows
 * neither).  At most \p max characters; a longer name ends with "...".
 */
static void dr_xml_n(tg_buf *b, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t chars = 0;

	while (*p) {
		size_t n = dr_utf8(p);

		if (chars++ == max) {
			tg_buf_adds(b, "...");
			return;
		}
		if (*p == '&')
			tg_buf_adds(b, "&amp;");
		else if (*p == '<')
			tg_buf_adds(b, "&lt;");
		else if (*p == '>')
			tg_buf_adds(b, "&gt;");
		else if (*p == '"')
			tg_buf_adds(b, "&quot;");
		else if (*p == '\'')
			tg_buf_adds(b, "&#39;");
		else if (!n || (*p < 0x20 && *p != '\t') || *p == 0x7f)
			tg_buf_adds(b, "\xef\xbf\xbd");
		else
			tg_buf_add(b, (const char *)p, n);
		p += n ? n : 1;
	}
}

static void dr_xml(tg_buf *b, const char *s)
{
	dr_xml_n(b, s, (size_t)-1);
}

/* \p s as a JSON string: quotes, backslashes and control characters
 * escaped, bytes that are not UTF-8 as U+FFFD (JSON text is UTF-8). */
static void dr_jsonstr(tg_buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	tg_buf_adds(b, "\"");
	while (*p) {
		size_t n = dr_utf8(p);

		if (!n)
			tg_buf_adds(b, "\xef\xbf\xbd");
		else if (*p == '"' || *p == '\\')
			tg_buf_addf(b, "\\%c", *p);
		else if (*p < 0x20)
			tg_buf_addf(b, "\\u%04x", *p);
		else
			tg_buf_add(b, (const char *)p, n);
		p += n ? n : 1;
	}
	tg_buf_adds(b, "\"");
}

/* ---- what is drawn ------------------------------------------------------- */

static const char *dr_name(const dr_ctx *c, uint32_t n)
{
	return tgi_strtab_get(&c->t->strs, c->t->name[n]);
}

/* GPUs of node n (CPU millicores when it has none): total and used. */
static void dr_use(const dr_ctx *c, uint32_t n, int64_t *total,
		   int64_t *used, bool *gpu)
{
	const tg_topology *t = c->t;
	unsigned r = TG_RES_GPU;

	*total = tg_topology_node_allocatable(t, n, r);
	*gpu = *total > 0;
	if (!*gpu) {
		r = TG_RES_CPU;
		*total = tg_topology_node_allocatable(t, n, r);
	}
	*used = *total - tg_topology_node_free(t, n, r);
	if (*used < 0)
		*used = 0;
}

/* 0 free, 1..3 partly used (thirds), 4 full. */
static unsigned dr_level(int64_t total, int64_t used)
{
	if (used <= 0)
		return 0;
	if (used >= total)
		return 4;
	return used * 3 < total ? 1 : used * 3 < total * 2 ? 2 : 3;
}

static bool dr_nvlink(const tg_topology *t, unsigned layer)
{
	static const char *const words[] = {
		"nvlink", "accelerator", "clique", "nvl", "imex"
	};
	const char *s[2] = { t->layer_name[layer], t->layer_key[layer] };
	unsigned i, k;

	for (k = 0; k < 2; k++)
		for (i = 0; s[k] && i < sizeof(words) / sizeof(words[0]); i++)
			if (strstr(s[k], words[i]))
				return true;
	return false;
}

/* Appends the pieces \p a, \p b, \p d (NULL = none) as one more reason
 * to node n's flag ("; " between reasons).  No length limit but the
 * picture's own. */
static tg_err dr_flag_add(dr_ctx *c, uint32_t n, const char *a,
			  const char *b, const char *d)
{
	tg_buf buf;

	tg_buf_init(&buf, TG_DRAW_MAX_OUT);
	if (c->flag[n]) {
		tg_buf_adds(&buf, c->flag[n]);
		tg_buf_adds(&buf, "; ");
	} else {
		c->nflagged++;
	}
	tg_buf_adds(&buf, a);
	if (b)
		tg_buf_adds(&buf, b);
	if (d)
		tg_buf_adds(&buf, d);
	if (buf.err) {
		tg_buf_free(&buf);
		return buf.err;
	}
	tgi_free(c->flag[n]);
	c->flag[n] = tg_buf_take(&buf);
	return c->flag[n] ? TG_OK : TG_ENOMEM;
}

/* "no K1, K2 label": the label keys node n's path misses (for a node
 * made its own accelerator domain, that layer's). */
static tg_err dr_missing(dr_ctx *c, uint32_t n, tg_buf *miss)
{
	const tg_topology *t = c->t;
	const uint32_t *p = &t->path[(size_t)n * t->nlayers];
	unsigned l;
	bool first = true;

	tg_buf_adds(miss, "no ");
	for (l = 0; l < t->nlayers; l++) {
		bool own = (t->flags[n] & TGI_NODE_OWN_ACCEL) &&
			   l == t->nlayers - 1;

		if (p[l] && !own)
			continue;
		if (!first)
			tg_buf_adds(miss, ", ");
		tg_buf_adds(miss, t->layer_key[l] ? t->layer_key[l] :
			     t->layer_name[l]);
		first = false;
	}
	tg_buf_adds(miss, " label");
	return miss->err;
}

/* The reasons placement cannot use a node (or uses it differently). */
static tg_err dr_flags(dr_ctx *c)
{
	const tg_topology *t = c->t;
	uint32_t n;
	unsigned i;
	tg_err e = TG_OK;

	for (i = 0; c->o && i < c->o->nnotes && !e; i++)
		e = dr_flag_add(c, c->o->notes[i].node,
				c->o->notes[i].reason ?
				c->o->notes[i].reason : "excluded", NULL,
				NULL);
	for (n = 0; n < t->nnodes && !e; n++) {
		bool out = !(t->flags[n] & TGI_NODE_IN_TREE);
		tg_buf miss;

		if (out || (t->flags[n] & TGI_NODE_OWN_ACCEL)) {
			tg_buf_init(&miss, TG_DRAW_MAX_OUT);
			e = dr_missing(c, n, &miss);
			if (!e)
				e = dr_flag_add(c, n, miss.s, out ?
						": outside the topology" :
						": a domain of its own on "
						"layer ", out ? NULL :
						t->layer_name[t->nlayers - 1]);
			tg_buf_free(&miss);
		}
		if (!e && (t->flags[n] & TGI_NODE_UNSCHED))
			e = dr_flag_add(c, n, "unschedulable (cordoned, "
					"drained or down)", NULL, NULL);
	}
	return e;
}

/* Gangs from the options: decisions first, then the host's. */
static tg_err dr_gangs(dr_ctx *c)
{
	const tg_draw_opts *o = c->o;
	unsigned nd = o ? o->ndecisions : 0, nh = o ? o->ngangs : 0, i, k;

	c->g = tgi_calloc(nd + nh + 1, sizeof(dr_gang));
	if (!c->g)
		return TG_ENOMEM;
	for (i = 0; i < nd; i++) {
		const tg_decision *d = o->decisions[i];
		dr_gang *g = &c->g[c->ng++];
		tg_status st = tg_decision_status(d);

		g->name = tg_decision_gang(d);
		g->state = tg_status_name(st);
		g->domain = *tg_decision_domain(d) ? tg_decision_domain(d) :
			    NULL;
		g->reason = st == TG_STATUS_PLACED ? NULL :
			    tg_decision_message(d);
		g->n = tg_decision_nplacements(d);
		g->own = tgi_calloc(g->n + 1, sizeof(tg_draw_member));
		if (!g->own)
			return TG_ENOMEM;
		for (k = 0; k < g->n; k++) {
			g->own[k].node = tg_decision_placement(d, k)->node;
			g->own[k].rank = tg_decision_placement(d, k)->rank;
		}
		g->m = g->own;
	}
	for (i = 0; i < nh; i++) {
		const tg_draw_gang *h = &o->gangs[i];
		dr_gang *g = &c->g[c->ng++];

		g->name = h->name ? h->name : "";
		g->state = h->state ? h->state : "";
		g->domain = h->domain && *h->domain ? h->domain : NULL;
		g->reason = h->reason && *h->reason ? h->reason : NULL;
		g->m = h->members;
		g->n = h->members ? h->nmembers : 0;
	}
	return TG_OK;
}

/* Chains the gangs' members and the allocations to their nodes. */
static tg_err dr_marks(dr_ctx *c)
{
	const tg_topology *t = c->t;
	size_t nm = 0, i, k;
	unsigned gi;

	for (gi = 0; gi < c->ng; gi++)
		nm += c->g[gi].n;
	c->mhead = tgi_calloc(t->nnodes + 1, sizeof(uint32_t));
	c->mnext = tgi_calloc(nm + 1, sizeof(uint32_t));
	c->mgang = tgi_calloc(nm + 1, sizeof(uint32_t));
	c->mrank = tgi_calloc(nm + 1, sizeof(unsigned));
	c->ahead = tgi_calloc(t->nnodes + 1, sizeof(uint32_t));
	c->anext = tgi_calloc(t->nallocs + 1, sizeof(uint32_t));
	c->dgang = tgi_calloc(t->ndom + 1, sizeof(uint32_t));
	if (!c->mhead || !c->mnext || !c->mgang || !c->mrank || !c->ahead ||
	    !c->anext || !c->dgang)
		return TG_ENOMEM;
	/* backwards, so that each chain comes out in order */
	for (gi = c->ng; gi-- > 0;)
		for (k = c->g[gi].n; k-- > 0;) {
			uint32_t n = c->g[gi].m[k].node;

			if (n >= t->nnodes)
				return tgi_errf(c->ei, TG_EINVAL, "draw: gang "
						"%s: member %zu on node id %u "
						"of %zu", c->g[gi].name, k, n,
						t->nnodes);
			c->mgang[c->nmarks] = gi;
			c->mrank[c->nmarks] = c->g[gi].m[k].rank;
			c->mnext[c->nmarks] = c->mhead[n];
			c->mhead[n] = (uint32_t)++c->nmarks;
		}
	for (i = t->nallocs; i-- > 0;) {
		if (!t->allocs[i].live)
			continue;
		c->anext[i] = c->ahead[t->allocs[i].node];
		c->ahead[t->allocs[i].node] = (uint32_t)(i + 1);
	}
	/* the gang each domain holds (one, or several) */
	for (i = 0; i < t->nnodes; i++) {
		uint32_t m, d;

		for (m = c->mhead[i]; m; m = c->mnext[m - 1])
			for (d = t->leaf[i]; d != TG_NONE;
			     d = t->dom[d].parent) {
				uint32_t want = c->mgang[m - 1] + 1;

				if (!c->dgang[d])
					c->dgang[d] = want;
				else if (c->dgang[d] != want)
					c->dgang[d] = UINT32_MAX;
			}
	}
	return TG_OK;
}

/* ---- layout ------------------------------------------------------------ */

static bool dr_leafdom(const dr_ctx *c, uint32_t d)
{
	return c->t->nlayers == 0 || (d && c->t->dom[d].layer ==
				       c->t->nlayers - 1);
}

/* GPUs (CPUs for GPU-less nodes are not summed) of nodes [lo, hi). */
static void dr_sum(const dr_ctx *c, uint32_t lo, uint32_t hi,
		   int64_t *total, int64_t *free_)
{
	uint32_t i;

	*total = *free_ = 0;
	for (i = lo; i < hi; i++) {
		uint32_t n = c->t->order[i];
		int64_t tt = tg_topology_node_allocatable(c->t, n, TG_RES_GPU);
		int64_t f = tg_topology_node_free(c->t, n, TG_RES_GPU);

		*total += tt;
		*free_ += f < 0 ? 0 : f > tt ? tt : f;
	}
}

/* The gangs with members in domain d (several): the first
 * DR_LABEL_GANGS by gang index, then how many more. */
static void dr_label_gangs(const dr_ctx *c, uint32_t d, char *buf,
			   size_t len)
{
	const tgi_domain *x = &c->t->dom[d];
	uint32_t seen[DR_LABEL_GANGS], i, m;
	unsigned n = 0, more = 0, k;
	size_t off;

	for (i = x->lo; i < x->hi; i++)
		for (m = c->mhead[c->t->order[i]]; m; m = c->mnext[m - 1]) {
			for (k = 0; k < n && seen[k] != c->mgang[m - 1]; k++)
				;
			if (k < n)
				continue;
			if (n < DR_LABEL_GANGS)
				seen[n++] = c->mgang[m - 1];
			else
				more++;	/* a gang counted once per member */
		}
	off = (size_t)snprintf(buf, len, "  \xe2\x97\x80 ");
	for (k = 0; k < n && off < len; k++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					k ? ", " : "", c->g[seen[k]].name);
	if (more && off < len)
		snprintf(buf + off, len - off, " and more");
}

/* A domain's header text (raw; escaped when written). */
static void dr_label(const dr_ctx *c, uint32_t d, char *buf, size_t len)
{
	const tg_topology *t = c->t;
	const tgi_domain *x = &t->dom[d];
	int64_t tot, fr;
	size_t off;

	if (d == 0)
		off = (size_t)snprintf(buf, len, "cluster");
	else
		off = (size_t)snprintf(buf, len, "%s",
				       tgi_strtab_get(&t->strs, x->value));
	if (off < len && !dr_leafdom(c, d)) {
		dr_sum(c, x->lo, x->hi, &tot, &fr);
		if (tot)
			off += (size_t)snprintf(buf + off, len - off,
						"  %lld/%lld GPUs free",
						(long long)fr, (long long)tot);
	}
	if (off < len && c->dgang[d] && c->dgang[d] != UINT32_MAX)
		snprintf(buf + off, len - off, "  \xe2\x97\x80 %s",
			 c->g[c->dgang[d] - 1].name);
	else if (off < len && c->dgang[d] == UINT32_MAX)
		dr_label_gangs(c, d, buf + off, len - off);
}

/* Characters of a UTF-8 string (for width estimates). */
static size_t dr_chars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

static double dr_labelw(const dr_ctx *c, uint32_t d)
{
	char lab[DR_LABEL_MAX];

	dr_label(c, d, lab, sizeof(lab));
	return (double)dr_chars(lab) * DR_CHAR + 2 * DR_PAD;
}

static unsigned dr_cols(const dr_ctx *c, uint32_t n)
{
	unsigned k;

	if (n == 0)
		return 1;
	if (c->named && n <= 4)
		return n;
	k = (unsigned)ceil(sqrt((double)n * (c->named ? 1.5 : 2.0)));
	return k > n ? n : k;
}

/* A grid of n cells: its size. */
static void dr_grid(const dr_ctx *c, uint32_t n, double *w, double *h)
{
	unsigned cols = dr_cols(c, n), rows = n ? (n + cols - 1) / cols : 1;

	*w = cols * c->cw + (cols - 1) * c->cgap;
	*h = rows * c->ch + (rows - 1) * c->cgap;
}

/* Shelf-packs the children of d in rows at most \p target wide (a row
 * holds one child at least): the content's size, and, with \p place, the
 * children's positions inside d. */
static void dr_shelf(dr_ctx *c, uint32_t d, double target, bool place,
		     double *w, double *h)
{
	const tgi_domain *x = &c->t->dom[d];
	double cx = 0, cy = 0, rowh = 0, bw = 0;
	uint32_t ch;

	for (ch = x->child0; ch < x->child0 + x->nchild; ch++) {
		if (cx > 0 && cx + c->w[ch] > target) {
			cy += rowh + DR_GAP;
			cx = rowh = 0;
		}
		if (place) {
			c->x[ch] = c->x[d] + DR_PAD + cx;
			c->y[ch] = c->y[d] + DR_HEAD + cy;
		}
		cx += c->w[ch] + DR_GAP;
		rowh = TG_MAX(rowh, c->h[ch]);
		bw = TG_MAX(bw, cx - DR_GAP);
	}
	*w = bw;
	*h = cy + rowh;
}

/*
 * Sizes d: of the row widths "the first k children side by side" (at
 * most DR_PACK_TRIES values of k, spread over 1..nchild) the one whose
 * box is closest to DR_ASPECT (width / height), the smaller box on a tie;
 * the width is kept in c->tw[d] for the placing pass.
 */
static void dr_pack(dr_ctx *c, uint32_t d)
{
	const tgi_domain *x = &c->t->dom[d];
	double best = -1, bestarea = 0, run = 0, w, h;
	uint32_t k, step = x->nchild / DR_PACK_TRIES + 1;

	c->tw[d] = 0;
	for (k = 0; k < x->nchild; k++) {
		double score;

		run += c->w[x->child0 + k] + (k ? DR_GAP : 0);
		if ((k + 1) % step && k + 1 != x->nchild)
			continue;
		dr_shelf(c, d, run, false, &w, &h);
		score = fabs(log((w + 2 * DR_PAD) /
				 (h + DR_HEAD + DR_PAD) / DR_ASPECT));
		if (best < 0 || score < best - 1e-9 ||
		    (score < best + 1e-9 && w * h < bestarea)) {
			best = score;
			bestarea = w * h;
			c->tw[d] = run;
		}
	}
	dr_shelf(c, d, c->tw[d], false, &w, &h);
	c->w[d] = TG_MAX(w + 2 * DR_PAD, dr_labelw(c, d));
	c->h[d] = DR_HEAD + h + DR_PAD;
}

static tg_err dr_layout(dr_ctx *c)
{
	const tg_topology *t = c->t;
	size_t nd = t->ndom, d;
	uint32_t nout = (uint32_t)(t->nnodes - t->ntree);
	double gw, gh;

	c->named = t->nnodes <= TG_DRAW_NAMED_MAX;
	c->cw = c->named ? 92 : 14;
	c->ch = c->named ? 34 : 14;
	c->cgap = c->named ? 4 : 2;
	c->w = tgi_calloc(nd + 1, sizeof(double));
	c->h = tgi_calloc(nd + 1, sizeof(double));
	c->x = tgi_calloc(nd + 1, sizeof(double));
	c->y = tgi_calloc(nd + 1, sizeof(double));
	c->tw = tgi_calloc(nd + 1, sizeof(double));
	if (!c->w || !c->h || !c->x || !c->y || !c->tw)
		return TG_ENOMEM;
	for (d = nd; d-- > 0;) {
		if (dr_leafdom(c, (uint32_t)d)) {
			dr_grid(c, t->dom[d].hi - t->dom[d].lo, &gw, &gh);
			c->w[d] = TG_MAX(gw + 2 * DR_PAD,
					 dr_labelw(c, (uint32_t)d));
			c->h[d] = DR_HEAD + gh + DR_PAD;
		} else {
			dr_pack(c, (uint32_t)d);
		}
	}
	c->x[0] = DR_GAP;
	c->y[0] = DR_TOP;
	for (d = 0; d < nd; d++)
		if (!dr_leafdom(c, (uint32_t)d))
			dr_shelf(c, (uint32_t)d, c->tw[d], true, &gw, &gh);
	c->width = (nd ? c->w[0] : 0) + 2 * DR_GAP;
	c->oy = DR_TOP + (nd ? c->h[0] + DR_GAP : 0);
	c->ox = DR_GAP;
	if (nout) {
		dr_grid(c, nout, &gw, &gh);
		c->ow = TG_MAX(gw + 2 * DR_PAD, 40 * DR_CHAR);
		c->oh = DR_HEAD + gh + DR_PAD;
		c->width = TG_MAX(c->width, c->ow + 2 * DR_GAP);
	}
	c->width = TG_MAX(c->width, DR_MINW);
	c->height = c->oy + (nout ? c->oh + DR_GAP : 0);
	return TG_OK;
}

/* ---- SVG --------------------------------------------------------------- */

/* The ranks on node n, as ranges in mark order: "0-3,7". */
static void dr_ranks(dr_ctx *c, tg_buf *b, uint32_t n)
{
	uint32_t m = c->mhead[n];
	bool first = true;

	while (m) {
		unsigned lo = c->mrank[m - 1], hi = lo;
		uint32_t nx = c->mnext[m - 1];

		while (nx && c->mgang[nx - 1] == c->mgang[m - 1] &&
		       c->mrank[nx - 1] == hi + 1) {
			hi++;
			nx = c->mnext[nx - 1];
		}
		tg_buf_addf(b, first ? "%u" : ",%u", lo);
		if (hi > lo)
			tg_buf_addf(b, "-%u", hi);
		first = false;
		m = nx;
	}
}

/* Distinct names of the gangs running on node n (allocations), each
 * written by \p esc, \p sep between them. */
static void dr_running(dr_ctx *c, tg_buf *b, uint32_t n, const char *sep,
		       void (*esc)(tg_buf *, const char *))
{
	const tg_topology *t = c->t;
	uint32_t a, p;
	unsigned shown = 0, more = 0;

	for (a = c->ahead[n]; a; a = c->anext[a - 1]) {
		const tgi_alloc *x = &t->allocs[a - 1];
		uint32_t id = x->gang ? x->gang : x->pod;
		bool seen = false;

		for (p = c->ahead[n]; p != a && !seen; p = c->anext[p - 1])
			seen = (t->allocs[p - 1].gang ? t->allocs[p - 1].gang
				: t->allocs[p - 1].pod) == id;
		if (seen)
			continue;
		if (shown == DR_NODE_GANGS && esc == dr_xml) {
			more++;
			continue;
		}
		if (shown++)
			tg_buf_adds(b, sep);
		esc(b, tgi_strtab_get(&t->strs, id));
	}
	if (more && esc == dr_xml)
		tg_buf_addf(b, "%s(%u more)", sep, more);
}

/* Node n's NVLink islands as "0-3|4-7" when it has more than one (one
 * island is all its GPUs on NVLink, or nothing known): false if not. */
static bool dr_islands(const dr_ctx *c, tg_buf *b, uint32_t n)
{
	const tg_topology *t = c->t;
	const uint8_t *lay;
	unsigned g, isl, ng = t->ngpus[n], k = 0;
	bool more = false;

	if (!ng || t->layout[n] >= t->nlayouts)
		return false;
	lay = t->layouts[t->layout[n]];
	for (g = 1; g < ng && !more; g++)
		more = lay[g] != lay[0];
	if (!more || !b)
		return more;
	for (isl = 0; isl < 256 && k < ng; isl++) {
		bool first = true;

		for (g = 0; g < ng; g++) {
			unsigned e = g;

			if (lay[g] != isl || (g && lay[g - 1] == isl))
				continue;
			while (e + 1 < ng && lay[e + 1] == isl)
				e++;
			tg_buf_addf(b, "%s%u", first ? (k ? "|" : "") : ",",
				     g);
			if (e > g)
				tg_buf_addf(b, "-%u", e);
			k += e - g + 1;
			first = false;
		}
	}
	return true;
}

static void dr_node(dr_ctx *c, uint32_t n, double x, double y)
{
	tg_buf *b = &c->b;
	int64_t tot, used;
	bool gpu, member = c->mhead[n] != 0;
	const dr_gang *g = member ? &c->g[c->mgang[c->mhead[n] - 1]] : NULL;
	const char *col = member ? palette[c->mgang[c->mhead[n] - 1] %
					   DR_NPALETTE] : NULL;
	uint32_t leaf = c->t->leaf[n];

	dr_use(c, n, &tot, &used, &gpu);
	tg_buf_addf(b, "<g class=\"n%s%s%s\" data-node=\"",
		     member ? " m" : "", c->flag[n] ? " f" : "",
		     member ? "" : (const char *[]){ " u0", " u1", " u2",
			" u3", " u4" }[dr_level(tot, used)]);
	dr_xml(b, dr_name(c, n));
	tg_buf_adds(b, "\" data-path=\"");
	if (leaf != TG_NONE)
		dr_xml(b, c->t->dom[leaf].path);
	tg_buf_addf(b, "\" data-use=\"%lld/%lld%s\"", (long long)used,
		     (long long)tot, gpu ? "" : "m");
	if (member) {
		tg_buf_adds(b, " data-gang=\"");
		dr_xml(b, g->name);
		tg_buf_adds(b, "\" data-rank=\"");
		dr_ranks(c, b, n);
		tg_buf_adds(b, "\"");
	}
	if (c->ahead[n]) {
		tg_buf_adds(b, " data-gangs=\"");
		dr_running(c, b, n, " ", dr_xml);
		tg_buf_adds(b, "\"");
	}
	if (c->flag[n]) {
		tg_buf_adds(b, " data-flag=\"");
		dr_xml(b, c->flag[n]);
		tg_buf_adds(b, "\"");
	}
	tg_buf_adds(b, "><title>");
	dr_xml(b, dr_name(c, n));
	tg_buf_addf(b, ": %g/%g %s used", gpu ? (double)used : used / 1e3,
		     gpu ? (double)tot : tot / 1e3, gpu ? "GPUs" : "CPUs");
	if (member) {
		tg_buf_adds(b, "; gang ");
		dr_xml(b, g->name);
		tg_buf_adds(b, " rank ");
		dr_ranks(c, b, n);
	}
	if (c->ahead[n]) {
		tg_buf_adds(b, "; running: ");
		dr_running(c, b, n, ", ", dr_xml);
	}
	if (dr_islands(c, NULL, n)) {
		tg_buf_adds(b, "; NVLink islands ");
		dr_islands(c, b, n);
	}
	if (c->flag[n]) {
		tg_buf_adds(b, "; flagged: ");
		dr_xml(b, c->flag[n]);
	}
	tg_buf_addf(b, "</title><rect x=\"%g\" y=\"%g\" width=\"%g\" "
		     "height=\"%g\" rx=\"2\"%s%s%s/>", x, y, c->cw, c->ch,
		     col ? " style=\"fill:" : "", col ? col : "",
		     col ? "\"" : "");
	if (c->named) {
		tg_buf_addf(b, "<text x=\"%g\" y=\"%g\"%s>", x + 4, y + 13,
			     member ? " class=\"w\"" : "");
		dr_xml_n(b, dr_name(c, n), 13);
		tg_buf_addf(b, "</text><text x=\"%g\" y=\"%g\" class=\"s%s\">",
			     x + 4, y + 27, member ? " w" : "");
		if (member) {
			tg_buf_adds(b, "r");
			dr_ranks(c, b, n);
			tg_buf_adds(b, " ");
		}
		tg_buf_addf(b, "%g/%g %s</text>",
			     gpu ? (double)used : used / 1e3,
			     gpu ? (double)tot : tot / 1e3, gpu ? "GPU" : "CPU");
	} else if (member) {
		tg_buf_addf(b, "<text x=\"%g\" y=\"%g\" class=\"rk\">%u</text>",
			     x + c->cw / 2, y + c->ch / 2 + 3,
			     c->mrank[c->mhead[n] - 1]);
	}
	if (c->flag[n])
		tg_buf_addf(b, "<path d=\"M%g %gh7l-7 7z\" class=\"fm\"/>",
			     x, y);
	tg_buf_adds(b, "</g>\n");
}

/* Nodes order[lo, hi) as a grid at (x, y). */
static void dr_cells(dr_ctx *c, uint32_t lo, uint32_t hi, double x,
		     double y)
{
	unsigned cols = dr_cols(c, hi - lo);
	uint32_t i;

	for (i = lo; i < hi; i++) {
		unsigned k = i - lo;

		dr_node(c, c->t->order[i], x + (k % cols) * (c->cw + c->cgap),
			y + (k / cols) * (c->ch + c->cgap));
	}
}

static void dr_dom(dr_ctx *c, uint32_t d, unsigned depth)
{
	const tg_topology *t = c->t;
	const tgi_domain *x = &t->dom[d];
	tg_buf *b = &c->b;
	char lab[DR_LABEL_MAX];
	int64_t tot, fr;
	uint32_t ch;
	bool nv = d && dr_nvlink(t, x->layer);
	uint32_t gi = c->dgang[d];
	const char *col = gi && gi != UINT32_MAX ?
			  palette[(gi - 1) % DR_NPALETTE] : NULL;

	dr_sum(c, x->lo, x->hi, &tot, &fr);
	tg_buf_addf(b, "<g class=\"d d%u%s%s\" data-path=\"",
		     depth % DR_NDEPTH, nv ? " nv" : "", gi ? " gh" : "");
	dr_xml(b, x->path);
	tg_buf_addf(b, "\" data-layer=\"");
	dr_xml(b, d ? t->layer_name[x->layer] : "cluster");
	tg_buf_adds(b, "\"><title>");
	dr_xml(b, d ? t->layer_name[x->layer] : "cluster");
	tg_buf_adds(b, " ");
	dr_xml(b, d ? x->path : "");
	tg_buf_addf(b, ": %u nodes, %lld/%lld GPUs free</title>",
		     x->hi - x->lo, (long long)fr, (long long)tot);
	tg_buf_addf(b, "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" "
		     "rx=\"4\"%s%s%s/>", c->x[d], c->y[d], c->w[d], c->h[d],
		     col ? " style=\"stroke:" : "", col ? col : "",
		     col ? "\"" : "");
	dr_label(c, d, lab, sizeof(lab));
	tg_buf_addf(b, "<text x=\"%g\" y=\"%g\" class=\"h\"%s%s%s>",
		     c->x[d] + DR_PAD, c->y[d] + 12,
		     col ? " style=\"fill:" : "", col ? col : "",
		     col ? "\"" : "");
	dr_xml(b, lab);
	tg_buf_adds(b, "</text>\n");
	if (dr_leafdom(c, d))
		dr_cells(c, x->lo, x->hi, c->x[d] + DR_PAD,
			 c->y[d] + DR_HEAD);
	else
		for (ch = x->child0; ch < x->child0 + x->nchild; ch++)
			dr_dom(c, ch, depth + 1);
	tg_buf_adds(b, "</g>\n");
}

static void dr_outside(dr_ctx *c)
{
	tg_buf *b = &c->b;
	uint32_t nout = (uint32_t)(c->t->nnodes - c->t->ntree);

	if (!nout)
		return;
	tg_buf_addf(b, "<g class=\"d out\" data-path=\"\"><title>nodes "
		     "outside the topology: %u</title><rect x=\"%g\" y=\"%g\" "
		     "width=\"%g\" height=\"%g\" rx=\"4\"/><text x=\"%g\" "
		     "y=\"%g\" class=\"h fl\">\xe2\x9a\xa0 not in the topology "
		     "(%u node%s): placement with a layer cannot use "
		     "them</text>\n", nout, c->ox, c->oy, c->ow, c->oh,
		     c->ox + DR_PAD, c->oy + 12, nout, nout == 1 ? "" : "s");
	dr_cells(c, (uint32_t)c->t->ntree, (uint32_t)c->t->nnodes,
		 c->ox + DR_PAD, c->oy + DR_HEAD);
	tg_buf_adds(b, "</g>\n");
}

static void dr_legend(dr_ctx *c)
{
	static const char *const items[][2] = {
		{ "u0", "free" }, { "u1", "< 1/3 used" },
		{ "u2", "< 2/3 used" }, { "u3", "mostly used" },
		{ "u4", "full" }, { "m", "gang member (rank)" },
		{ "f", "flagged (hover: why)" }
	};
	tg_buf *b = &c->b;
	double x = DR_GAP;
	unsigned i;

	tg_buf_adds(b, "<g class=\"legend\">");
	for (i = 0; i < sizeof(items) / sizeof(items[0]); i++) {
		tg_buf_addf(b, "<g class=\"n %s\"><rect x=\"%g\" y=\"38\" "
			     "width=\"12\" height=\"12\" rx=\"2\"%s/></g>"
			     "<text x=\"%g\" y=\"48\">", items[i][0],
			     x, items[i][0][0] == 'm' ?
			     " style=\"fill:#1565c0\"" : "", x + 16);
		dr_xml(b, items[i][1]);
		tg_buf_adds(b, "</text>");
		x += 16 + strlen(items[i][1]) * DR_CHAR + 14;
	}
	tg_buf_addf(b, "<g class=\"d nv\"><rect x=\"%g\" y=\"38\" "
		     "width=\"18\" height=\"12\" rx=\"3\" style=\"fill:none\"/>"
		     "</g><text x=\"%g\" y=\"48\">NVLink domain</text>", x,
		     x + 22);
	tg_buf_adds(b, "</g>\n");
}

/* \p s cut into lines of at most DR_WRAP characters at spaces, each one
 * a <text> at x; returns the lines written. */
static unsigned dr_wrap(tg_buf *b, const char *s, double x, double y,
			const char *cls)
{
	char seg[4 * DR_WRAP + 1];
	unsigned lines = 0;

	while (*s) {
		size_t len = strlen(s), cut = len;

		if (dr_chars(s) > DR_WRAP) {
			size_t i, chars = 0;

			for (i = 0; s[i] && chars < DR_WRAP; i++)
				chars += ((unsigned char)s[i] & 0xc0) != 0x80;
			while (s[i] && ((unsigned char)s[i] & 0xc0) == 0x80)
				i++;
			cut = i;
			while (cut > 0 && s[cut] != ' ')
				cut--;
			if (cut == 0)
				cut = i;
		}
		if (cut > sizeof(seg) - 1)
			cut = sizeof(seg) - 1;
		memcpy(seg, s, cut);
		seg[cut] = '\0';
		tg_buf_addf(b, "<text x=\"%g\" y=\"%g\" class=\"%s\">", x,
			     y + lines * DR_LINE, cls);
		dr_xml(b, seg);
		tg_buf_adds(b, "</text>\n");
		lines++;
		s += cut;
		while (*s == ' ')
			s++;
	}
	return lines;
}

/* One gang's line (and its reason's) in the SVG list; the lines used. */
static unsigned dr_gang_line(dr_ctx *c, tg_buf *b, unsigned gi, double y)
{
	const dr_gang *g = &c->g[gi];
	unsigned lines = 1;

	tg_buf_addf(b, "<g class=\"gl\" data-gang=\"");
	dr_xml(b, g->name);
	tg_buf_adds(b, "\">");
	if (g->n)
		tg_buf_addf(b, "<rect x=\"%d\" y=\"%g\" width=\"10\" "
			     "height=\"10\" style=\"fill:%s\"/>", DR_GAP + 4,
			     y - 9, palette[gi % DR_NPALETTE]);
	tg_buf_addf(b, "<text x=\"%d\" y=\"%g\"><tspan class=\"h\">",
		     DR_GAP + 20, y);
	dr_xml(b, g->name);
	tg_buf_adds(b, "</tspan> ");
	dr_xml(b, g->state);
	if (g->domain) {
		tg_buf_adds(b, " in ");
		dr_xml(b, g->domain);
	}
	if (g->n)
		tg_buf_addf(b, " \xe2\x80\x94 %u member%s", g->n,
			     g->n == 1 ? "" : "s");
	tg_buf_adds(b, "</text>\n");
	if (g->reason)
		lines += dr_wrap(b, g->reason, DR_GAP + 32, y + DR_LINE,
				 "why");
	tg_buf_adds(b, "</g>\n");
	return lines;
}

/* The text lists under the picture into \p b; returns their height. */
static double dr_lists(dr_ctx *c, tg_buf *b, double y0)
{
	double y = y0;
	unsigned i, shown = 0;
	uint32_t n;

	if (c->ng) {
		tg_buf_addf(b, "<text x=\"%d\" y=\"%g\" class=\"h\">Gangs "
			     "(%u)</text>\n", DR_GAP, y, c->ng);
		y += DR_LINE;
		for (i = 0; i < c->ng && i < TG_DRAW_LIST_MAX; i++)
			y += DR_LINE * dr_gang_line(c, b, i, y);
		if (c->ng > TG_DRAW_LIST_MAX) {
			tg_buf_addf(b, "<text x=\"%d\" y=\"%g\">... %u more "
				     "gangs (TG_DRAW_LIST_MAX %u; the HTML "
				     "page lists all)</text>\n", DR_GAP + 20,
				     y, c->ng - TG_DRAW_LIST_MAX,
				     TG_DRAW_LIST_MAX);
			y += DR_LINE;
		}
		y += DR_LINE / 2;
	}
	if (c->nflagged) {
		tg_buf_addf(b, "<text x=\"%d\" y=\"%g\" class=\"h fl\">"
			     "Flagged nodes (%u)</text>\n", DR_GAP, y,
			     c->nflagged);
		y += DR_LINE;
		for (n = 0; n < c->t->nnodes; n++) {
			uint32_t id = c->t->order[n];

			if (!c->flag[id] || shown++ >= TG_DRAW_LIST_MAX)
				continue;
			tg_buf_addf(b, "<text x=\"%d\" y=\"%g\" class=\"fli\""
				     " data-node=\"", DR_GAP + 20, y);
			dr_xml(b, dr_name(c, id));
			tg_buf_adds(b, "\"><tspan class=\"h\">");
			dr_xml(b, dr_name(c, id));
			tg_buf_adds(b, "</tspan>: ");
			dr_xml(b, c->flag[id]);
			tg_buf_adds(b, "</text>\n");
			y += DR_LINE;
		}
		if (c->nflagged > TG_DRAW_LIST_MAX) {
			tg_buf_addf(b, "<text x=\"%d\" y=\"%g\">... %u more "
				     "flagged nodes (TG_DRAW_LIST_MAX %u; "
				     "the HTML page lists all)</text>\n",
				     DR_GAP + 20, y,
				     c->nflagged - TG_DRAW_LIST_MAX,
				     TG_DRAW_LIST_MAX);
			y += DR_LINE;
		}
	}
	return y - y0;
}

static const char dr_svg_css[] =
	".d>rect{fill:#f4f6f8;stroke:#90a4ae;stroke-width:1}"
	".d1>rect{fill:#e9eef3}.d2>rect{fill:#dfe6ee}"
	".d3>rect{fill:#d5dee8}.d4>rect{fill:#cbd6e2}"
	".nv>rect{stroke:#7e57c2;stroke-width:1.5;stroke-dasharray:5 2}"
	".gh>rect{stroke-width:3}.out>rect{fill:#fdecea;stroke:#d32f2f}"
	".n>rect{stroke:#78909c;stroke-width:.6}"
	".u0>rect{fill:#d4edda}.u1>rect{fill:#fff3bf}.u2>rect{fill:#ffd76e}"
	".u3>rect{fill:#f4a340}.u4>rect{fill:#9aa5b1}"
	".m>rect{stroke:#0b1a2a;stroke-width:1.2}"
	".f>rect{stroke:#d32f2f;stroke-width:2.2;stroke-dasharray:3 1.5}"
	".fm,.fl{fill:#d32f2f}.h{font-weight:bold}.t{font-size:16px;"
	"font-weight:bold}.s{font-size:9px;fill:#37474f}.w{fill:#fff}"
	".rk{fill:#fff;font-size:8px;font-weight:bold;text-anchor:middle}"
	".why{fill:#5d4037}.dim{opacity:.12}.hit>rect{stroke:#000;"
	"stroke-width:2}";

static void dr_title(dr_ctx *c)
{
	const tg_topology *t = c->t;
	tg_buf *b = &c->b;
	int64_t tot = 0, fr = 0;
	unsigned l;

	dr_sum(c, 0, (uint32_t)t->nnodes, &tot, &fr);
	tg_buf_addf(b, "<text x=\"%d\" y=\"22\" class=\"t\">", DR_GAP);
	if (c->o && c->o->title)
		dr_xml(b, c->o->title);
	else
		tg_buf_addf(b, "topogang: %zu nodes", t->nnodes);
	tg_buf_addf(b, "</text>\n<text x=\"%d\" y=\"22\" "
		     "text-anchor=\"end\">%zu nodes", (int)c->width - DR_GAP,
		     t->nnodes);
	if (tot)
		tg_buf_addf(b, ", %lld/%lld GPUs free", (long long)fr,
			     (long long)tot);
	for (l = 0; l < t->nlayers; l++) {
		tg_buf_adds(b, l ? " &gt; " : "; layers ");
		dr_xml(b, t->layer_name[l]);
	}
	tg_buf_adds(b, "</text>\n");
}

/* The <svg> element (with the XML prolog when standalone). */
static void dr_svg(dr_ctx *c, bool standalone)
{
	tg_buf lists;
	double lh;

	tg_buf_init(&lists, TG_DRAW_MAX_OUT);
	lh = dr_lists(c, &lists, c->height + DR_LINE);
	if (lists.err)
		c->b.err = lists.err;
	if (standalone)
		tg_buf_adds(&c->b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
			     "\n");
	tg_buf_addf(&c->b, "<svg xmlns=\"http://www.w3.org/2000/svg\" "
		     "id=\"fabric\" width=\"%.0f\" height=\"%.0f\" "
		     "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" "
		     "font-size=\"11\">\n<style>%s</style>\n"
		     "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
		     c->width, c->height + lh + DR_LINE, c->width,
		     c->height + lh + DR_LINE, dr_svg_css);
	dr_title(c);
	dr_legend(c);
	if (c->t->ndom)
		dr_dom(c, 0, 0);
	dr_outside(c);
	if (lists.s)
		tg_buf_add(&c->b, lists.s, lists.len);
	tg_buf_free(&lists);
	tg_buf_adds(&c->b, "</svg>\n");
}

/* ---- JSON ---------------------------------------------------------------- */

static void dr_jstr(tg_buf *b, const char *s)
{
	if (s)
		dr_jsonstr(b, s);
	else
		tg_buf_adds(b, "null");
}

static void dr_json_nodes(dr_ctx *c)
{
	const tg_topology *t = c->t;
	tg_buf *b = &c->b;
	uint32_t i, m;

	tg_buf_adds(b, ",\n\"nodes\": [");
	for (i = 0; i < t->nnodes; i++) {
		uint32_t n = t->order[i];
		int64_t tot, used;
		bool gpu;

		dr_use(c, n, &tot, &used, &gpu);
		tg_buf_adds(b, i ? ",\n {\"name\": " : "\n {\"name\": ");
		dr_jsonstr(b, dr_name(c, n));
		tg_buf_adds(b, ", \"domain\": ");
		dr_jstr(b, t->leaf[n] != TG_NONE ? t->dom[t->leaf[n]].path :
			NULL);
		tg_buf_addf(b, ", \"%s\": %lld, \"%s_used\": %lld, "
			     "\"flag\": ", gpu ? "gpus" : "mcpu",
			     (long long)tot, gpu ? "gpus" : "mcpu",
			     (long long)used);
		dr_jstr(b, c->flag[n]);
		tg_buf_adds(b, ", \"nvlink_islands\": ");
		if (dr_islands(c, NULL, n)) {
			tg_buf_adds(b, "\"");
			dr_islands(c, b, n);
			tg_buf_adds(b, "\"");
		} else {
			tg_buf_adds(b, "null");
		}
		tg_buf_adds(b, ", \"running\": [");
		dr_running(c, b, n, ", ", dr_jsonstr);
		tg_buf_adds(b, "], \"ranks\": [");
		for (m = c->mhead[n]; m; m = c->mnext[m - 1]) {
			tg_buf_adds(b, m == c->mhead[n] ? "{\"gang\": " :
				     ", {\"gang\": ");
			dr_jsonstr(b, c->g[c->mgang[m - 1]].name);
			tg_buf_addf(b, ", \"rank\": %u}", c->mrank[m - 1]);
		}
		tg_buf_adds(b, "]}");
	}
	tg_buf_adds(b, "]");
}

static void dr_json(dr_ctx *c)
{
	const tg_topology *t = c->t;
	tg_buf *b = &c->b;
	size_t d;
	unsigned l, i, k;

	tg_buf_adds(b, "{\"version\": ");
	dr_jstr(b, c->o ? c->o->version : NULL);
	tg_buf_adds(b, ", \"title\": ");
	dr_jstr(b, c->o ? c->o->title : NULL);
	tg_buf_adds(b, ",\n\"layers\": [");
	for (l = 0; l < t->nlayers; l++) {
		tg_buf_adds(b, l ? ", " : "");
		dr_jsonstr(b, t->layer_name[l]);
	}
	tg_buf_adds(b, "],\n\"domains\": [");
	for (d = 1; d < t->ndom; d++) {
		const tgi_domain *x = &t->dom[d];
		int64_t tot, fr;

		dr_sum(c, x->lo, x->hi, &tot, &fr);
		tg_buf_adds(b, d > 1 ? ",\n {\"path\": " : "\n {\"path\": ");
		dr_jsonstr(b, x->path);
		tg_buf_adds(b, ", \"layer\": ");
		dr_jsonstr(b, t->layer_name[x->layer]);
		tg_buf_addf(b, ", \"nvlink\": %s, \"nodes\": %u, \"gpus\": "
			     "%lld, \"gpus_free\": %lld}",
			     dr_nvlink(t, x->layer) ? "true" : "false",
			     x->hi - x->lo, (long long)tot, (long long)fr);
	}
	tg_buf_adds(b, "]");
	dr_json_nodes(c);
	tg_buf_adds(b, ",\n\"gangs\": [");
	for (i = 0; i < c->ng; i++) {
		const dr_gang *g = &c->g[i];

		tg_buf_adds(b, i ? ",\n {\"name\": " : "\n {\"name\": ");
		dr_jsonstr(b, g->name);
		tg_buf_adds(b, ", \"state\": ");
		dr_jsonstr(b, g->state);
		tg_buf_adds(b, ", \"domain\": ");
		dr_jstr(b, g->domain);
		tg_buf_adds(b, ", \"reason\": ");
		dr_jstr(b, g->reason);
		tg_buf_addf(b, ", \"colour\": \"%s\", \"members\": [",
			     g->n ? palette[i % DR_NPALETTE] : "");
		for (k = 0; k < g->n; k++) {
			tg_buf_addf(b, "%s{\"rank\": %u, \"node\": ",
				     k ? ", " : "", g->m[k].rank);
			dr_jsonstr(b, dr_name(c, g->m[k].node));
			tg_buf_adds(b, "}");
		}
		tg_buf_adds(b, "]}");
	}
	tg_buf_adds(b, "]\n}\n");
}

/* ---- HTML ---------------------------------------------------------------- */

static void dr_html_aside(dr_ctx *c)
{
	tg_buf *b = &c->b;
	unsigned i;
	uint32_t n;

	tg_buf_addf(b, "<aside><h2>Gangs (%u)</h2><ul id=\"gangs\">", c->ng);
	for (i = 0; i < c->ng; i++) {
		const dr_gang *g = &c->g[i];

		tg_buf_adds(b, "<li class=\"g\" data-gang=\"");
		dr_xml(b, g->name);
		tg_buf_addf(b, "\"><span class=\"sw\" style=\"background:%s"
			     "\"></span><b>", g->n ?
			     palette[i % DR_NPALETTE] : "transparent");
		dr_xml(b, g->name);
		tg_buf_adds(b, "</b> ");
		dr_xml(b, g->state);
		if (g->domain) {
			tg_buf_adds(b, " in <code>");
			dr_xml(b, g->domain);
			tg_buf_adds(b, "</code>");
		}
		if (g->n)
			tg_buf_addf(b, ", %u member%s", g->n,
				     g->n == 1 ? "" : "s");
		if (g->reason) {
			tg_buf_adds(b, "<div class=\"why\">");
			dr_xml(b, g->reason);
			tg_buf_adds(b, "</div>");
		}
		tg_buf_adds(b, "</li>\n");
	}
	tg_buf_addf(b, "</ul><h2>Flagged nodes (%u)</h2><ul id=\"flags\">",
		     c->nflagged);
	for (n = 0; n < c->t->nnodes; n++) {
		uint32_t id = c->t->order[n];

		if (!c->flag[id])
			continue;
		tg_buf_adds(b, "<li class=\"fn\" data-node=\"");
		dr_xml(b, dr_name(c, id));
		tg_buf_adds(b, "\"><b>");
		dr_xml(b, dr_name(c, id));
		tg_buf_adds(b, "</b>: ");
		dr_xml(b, c->flag[id]);
		tg_buf_adds(b, "</li>\n");
	}
	tg_buf_adds(b, "</ul></aside>\n");
}

static void dr_html(dr_ctx *c)
{
	tg_buf *b = &c->b;
	const tg_draw_opts *o = c->o;
	char title[64];

	snprintf(title, sizeof(title), "topogang: %zu nodes", c->t->nnodes);
	tg_buf_adds(b, "<!DOCTYPE html>\n<html lang=\"en\"><head>"
		     "<meta charset=\"utf-8\"><meta name=\"viewport\" "
		     "content=\"width=device-width\"><link rel=\"icon\" "
		     "href=\"data:,\"><title>");
	dr_xml(b, o && o->title ? o->title : title);
	tg_buf_addf(b, "</title><style>%s</style></head>\n<body data-version"
		     "=\"", dr_page_css);
	dr_xml(b, o && o->version ? o->version : "");
	tg_buf_adds(b, "\" data-state=\"");
	dr_xml(b, o && o->state_url ? o->state_url : "");
	tg_buf_addf(b, "\" data-refresh=\"%u\">\n%s<main><div id=\"view\">",
		     o && o->refresh_s ? o->refresh_s : 5, dr_page_header);
	dr_svg(c, false);
	tg_buf_adds(b, "</div>\n");
	dr_html_aside(c);
	tg_buf_addf(b, "</main>\n<script>%s</script>\n</body></html>\n",
		     dr_page_js);
}

/* ---- entry --------------------------------------------------------------- */

static void dr_free(dr_ctx *c)
{
	size_t i;

	for (i = 0; c->g && i < c->ng; i++)
		tgi_free(c->g[i].own);
	tgi_free(c->g);
	for (i = 0; c->flag && i < c->t->nnodes; i++)
		tgi_free(c->flag[i]);
	tgi_free(c->flag);
	tgi_free(c->mhead);
	tgi_free(c->mnext);
	tgi_free(c->mgang);
	tgi_free(c->mrank);
	tgi_free(c->ahead);
	tgi_free(c->anext);
	tgi_free(c->dgang);
	tgi_free(c->w);
	tgi_free(c->h);
	tgi_free(c->x);
	tgi_free(c->y);
	tgi_free(c->tw);
	tg_buf_free(&c->b);
}

tg_err tg_draw_render(const tg_topology *t, tg_draw_format fmt,
		      const tg_draw_opts *opts, char **out, tg_errinfo *ei)
{
	dr_ctx c;
	tg_err e;
	unsigned i;

	if (out)
		*out = NULL;
	if (!t || !out || !t->built)
		return tgi_errf(ei, TG_EINVAL, "draw: %s", !t || !out ?
				"no topology or no output" :
				"the topology is not built");
	if (fmt != TG_DRAW_SVG && fmt != TG_DRAW_HTML && fmt != TG_DRAW_JSON)
		return tgi_errf(ei, TG_EINVAL, "draw: unknown format %d",
				(int)fmt);
	for (i = 0; opts && i < opts->nnotes; i++)
		if (opts->notes[i].node >= t->nnodes)
			return tgi_errf(ei, TG_EINVAL, "draw: note %u on node "
					"id %u of %zu", i,
					opts->notes[i].node, t->nnodes);
	memset(&c, 0, sizeof(c));
	c.t = t;
	c.o = opts;
	c.ei = ei;
	tg_buf_init(&c.b, TG_DRAW_MAX_OUT);
	c.flag = tgi_calloc(t->nnodes + 1, sizeof(char *));
	e = c.flag ? TG_OK : TG_ENOMEM;
	if (!e)
		e = dr_gangs(&c);
	if (!e)
		e = dr_marks(&c);
	if (!e)
		e = dr_flags(&c);
	if (!e)
		e = dr_layout(&c);
	if (e) {
		if (e == TG_ENOMEM)
			tgi_errf(ei, e, "draw: out of memory");
		dr_free(&c);
		return e;
	}
	if (fmt == TG_DRAW_SVG)
		dr_svg(&c, true);
	else if (fmt == TG_DRAW_HTML)
		dr_html(&c);
	else
		dr_json(&c);
	e = c.b.err;
	if (e == TG_ELIMIT)
		tgi_errf(ei, e, "draw: the picture is larger than "
			 "TG_DRAW_MAX_OUT (%u bytes)", TG_DRAW_MAX_OUT);
	else if (e)
		tgi_errf(ei, e, "draw: out of memory");
	else
		*out = tg_buf_take(&c.b);
	if (!e && !*out)
		e = tgi_errf(ei, TG_ENOMEM, "draw: out of memory");
	dr_free(&c);
	return e;
}
