/*
 * shared/src/load/fabric/ibnetdiscover.c - the `ibnetdiscover` format
 * (a switch graph), as `ibnetdiscover` (infiniband-diags) prints it:
 *
 *   vendid=0x2c9                       (and devid=, sysimgguid=, ...)
 *   Switch  65 "S-2c5e..."  # "MF0;A09-P1-IBLEAF-04-04:MQM9701/U1" ...
 *   [1]  "H-e09d..."[1](e09d...)  # "a08-p1-dgx-04-c01 mlx5_5" lid 647 ...
 *   (blank line)
 *   Ca  1 "H-e09d..."  # "a08-p1-dgx-04-c01 mlx5_5"
 *   [1](e09d...)  "S-2c5e..."[17]  # lid 657 lmc 0 "MF0;A09-..." lid 73 ...
 *
 * Every node reached has a block of its own and every link is listed by
 * both ends; a file cut short breaks one of the two, and that is reported
 * as truncated rather than silently giving a smaller fabric.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric_int.h"

typedef struct ib_ctx {
	tg_fabric *f;
	const char *source;
	uint32_t src;
	tg_errinfo *ei;
	unsigned line;
	bool cut;		/* the line is the last and has no newline */
	uint32_t cur;		/* device of the open block, TG_NONE */
	uint8_t *seen;		/* ports listed in the open block */
	size_t first_link;	/* links of this input start here */
} ib_ctx;

static tg_err ib_fail(ib_ctx *c, tg_err err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static tg_err ib_fail(ib_ctx *c, tg_err err, const char *fmt, ...)
{
	char why[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return tgi_errf(c->ei, err, "%s:%u: %s%s", c->source, c->line, why,
			c->cut && err == TG_EPARSE ? " (the file ends inside "
			"this line: the output is truncated)" : "");
}

static tg_err ib_nomem(ib_ctx *c, tg_err err)
{
	if (err == TG_ELIMIT)
		return ib_fail(c, err, "more than %u devices or links",
			       TG_MAX_FABRIC_DEVICES);
	return ib_fail(c, TG_ENOMEM, "out of memory");
}

/* Reads a quoted string at *p (which must be '"'); NUL-terminates it in
 * place and moves *p past the closing quote.  NULL when unterminated. */
static char *ib_quoted(char **p)
{
	char *s = *p + 1, *e = strchr(s, '"');

	if (!e)
		return NULL;
	*e = '\0';
	*p = e + 1;
	return s;
}

/* Reads 1..3 digits as a port number. */
static bool ib_num(char **p, unsigned *out)
{
	unsigned v = 0, n = 0;

	while (tgi_fab_digit(**p) && n < 6) {
		v = v * 10 + (unsigned)(**p - '0');
		(*p)++;
		n++;
	}
	if (n == 0 || n > 5 || tgi_fab_digit(**p))
		return false;
	*out = v;
	return true;
}

/* Skips "(hexguid)" when present. */
static bool ib_guid(char **p)
{
	char *s = *p;

	if (*s != '(')
		return true;
	s++;
	while (tgi_fab_alnum(*s))
		s++;
	if (*s != ')')
		return false;
	*p = s + 1;
	return true;
}

static void ib_skip(char **p)
{
	while (tgi_fab_blank(**p))
		(*p)++;
}

/* The first quoted string of a comment ("# lid 1 \"desc\" ..."), or
 * NULL. */
static char *ib_comment_desc(char *p)
{
	char *q;

	ib_skip(&p);
	if (*p != '#')
		return NULL;
	q = strchr(p, '"');
	if (!q)
		return NULL;
	return ib_quoted(&q);
}

static tg_err ib_set_desc(ib_ctx *c, uint32_t d, const char *desc,
			  bool own)
{
	fdev *dv = &c->f->devs[d];
	uint32_t sid;

	if (strlen(desc) > FAB_MAX_DESC)
		return ib_fail(c, TG_ELIMIT, "node description longer than "
			       "%d bytes", FAB_MAX_DESC);
	/* the node's own block wins over what its neighbours say */
	if (dv->desc && !own)
		return TG_OK;
	if (tgi_strtab_intern(&c->f->strs, desc, &sid))
		return ib_nomem(c, TG_ENOMEM);
	dv->desc = sid;
	return TG_OK;
}

/* "Switch 65 "S-..." # "desc" ...", "Ca 1 ...", "Rt 1 ...". */
static tg_err ib_header(ib_ctx *c, char *p, int kind)
{
	char show[FAB_SHOW + 4], *id, *desc;
	unsigned nports;
	uint32_t d;
	fdev *dv;
	tg_err err;

	ib_skip(&p);
	if (!ib_num(&p, &nports) || nports == 0 || nports > FAB_MAX_PORT)
		return ib_fail(c, TG_EPARSE, "bad port count (1 to %d)",
			       FAB_MAX_PORT);
	ib_skip(&p);
	if (*p != '"' || !(id = ib_quoted(&p)) || !*id)
		return ib_fail(c, TG_EPARSE, "expected the node id in quotes "
			       "after the port count");
	if (strlen(id) > TG_MAX_NAME)
		return ib_fail(c, TG_ELIMIT, "node id longer than %d bytes",
			       TG_MAX_NAME);
	desc = ib_comment_desc(p);
	err = tgi_fab_dev_get(c->f, id, c->src, c->line, &d);
	if (err)
		return ib_nomem(c, err);
	dv = &c->f->devs[d];
	if (dv->defined)
		return ib_fail(c, TG_EEXIST, "node %s is defined twice (first "
			       "at %s:%u)", tgi_fab_show(id, strlen(id), show,
						     sizeof(show)),
			       tgi_fab_src(c->f, dv->src), dv->line);
	/* a peer's id prefix ("S-", "H-") said what it is; an unknown
	 * prefix says nothing */
	if (dv->kind && dv->kind != DEV_OTHER && dv->kind != kind)
		return ib_fail(c, TG_EPARSE, "node %s is a %s here but its "
			       "id says %s", tgi_fab_show(id, strlen(id), show,
						      sizeof(show)),
			       kind == DEV_SWITCH ? "switch" :
			       kind == DEV_HOST ? "CA" : "router",
			       dv->kind == DEV_SWITCH ? "switch" : "CA");
	dv->kind = (uint8_t)kind;
	dv->defined = true;
	dv->nports = nports;
	dv->line = c->line;
	dv->src = c->src;
	if (kind == DEV_SWITCH)
		c->f->sum.switches++;
	if (desc) {
		err = ib_set_desc(c, d, desc, true);
		if (err)
			return err;
	}
	c->cur = d;
	memset(c->seen, 0, FAB_MAX_PORT + 1);
	return TG_OK;
}

static int ib_kind_of_id(const char *id)
{
	if (id[0] == 'S' && id[1] == '-')
		return DEV_SWITCH;
	if (id[0] == 'H' && id[1] == '-')
		return DEV_HOST;
	return DEV_OTHER;
}

/* "[P](guid) "PEER"[PP](guid) # ..." inside a block. */
static tg_err ib_port(ib_ctx *c, char *p)
{
	char show[FAB_SHOW + 4], *peer, *desc;
	unsigned port, pport;
	uint32_t d;
	fdev *me = &c->f->devs[c->cur], *dv;
	int kind;
	tg_err err;

	p++;
	if (!ib_num(&p, &port) || *p != ']')
		return ib_fail(c, TG_EPARSE, "bad port number in '[...]'");
	p++;
	if (port == 0 || port > me->nports)
		return ib_fail(c, TG_EPARSE, "port %u of a node with %u "
			       "ports", port, me->nports);
	if (c->seen[port])
		return ib_fail(c, TG_EEXIST, "port %u listed twice", port);
	c->seen[port] = 1;
	if (!ib_guid(&p))
		return ib_fail(c, TG_EPARSE, "unterminated '(' after the "
			       "port number");
	ib_skip(&p);
	if (*p != '"' || !(peer = ib_quoted(&p)) || !*peer)
		return ib_fail(c, TG_EPARSE, "expected the peer's id in "
			       "quotes");
	if (strlen(peer) > TG_MAX_NAME)
		return ib_fail(c, TG_ELIMIT, "node id longer than %d bytes",
			       TG_MAX_NAME);
	if (*p != '[')
		return ib_fail(c, TG_EPARSE, "expected '[port]' after the "
			       "peer's id");
	p++;
	if (!ib_num(&p, &pport) || *p != ']' || pport == 0 ||
	    pport > FAB_MAX_PORT)
		return ib_fail(c, TG_EPARSE, "bad peer port number");
	p++;
	if (!ib_guid(&p))
		return ib_fail(c, TG_EPARSE, "unterminated '(' after the "
			       "peer's port");
	desc = ib_comment_desc(p);
	err = tgi_fab_dev_get(c->f, peer, c->src, c->line, &d);
	if (err)
		return ib_nomem(c, err);
	dv = &c->f->devs[d];
	kind = ib_kind_of_id(peer);
	if (!dv->kind)
		dv->kind = (uint8_t)kind;
	else if (!dv->defined && dv->kind != kind)
		return ib_fail(c, TG_EPARSE, "node %s: id prefix says one "
			       "kind of node, an earlier line another",
			       tgi_fab_show(peer, strlen(peer), show,
					sizeof(show)));
	if (desc) {
		err = ib_set_desc(c, d, desc, false);
		if (err)
			return err;
	}
	err = tgi_fab_link_add(c->f, c->cur, port, d, pport, c->src, c->line);
	if (err)
		return ib_nomem(c, err);
	me = &c->f->devs[c->cur];	/* tgi_fab_dev_get() may have moved it */
	if (me->kind == DEV_HOST)
		c->f->sum.host_ports++;
	return TG_OK;
}

static int link_cmp(const void *x, const void *y)
{
	const flink *a = x, *b = y;

	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	if (a->pa != b->pa)
		return a->pa < b->pa ? -1 : 1;
	return 0;
}

/* Every link of this input ends at a defined node that lists it back. */
static tg_err ib_crosscheck(ib_ctx *c)
{
	tg_fabric *f = c->f;
	size_t n = f->nlinks - c->first_link, i;
	char s1[FAB_SHOW + 4], s2[FAB_SHOW + 4];
	flink *l;

	if (!n)
		return TG_OK;
	l = f->links + c->first_link;
	qsort(l, n, sizeof(*l), link_cmp);
	for (i = 0; i < n; i++) {
		const fdev *b = &f->devs[l[i].b];
		const char *an = tgi_strtab_get(&f->ids, f->devs[l[i].a].id);
		const char *bn = tgi_strtab_get(&f->ids, b->id);
		flink key, *back;

		c->line = l[i].line;
		c->cut = false;
		if (!b->defined)
			return ib_fail(c, TG_EPARSE, "%s port %u links to %s, "
				       "which has no block of its own: the "
				       "output is truncated",
				       tgi_fab_show(an, strlen(an), s1,
						sizeof(s1)), l[i].pa,
				       tgi_fab_show(bn, strlen(bn), s2,
						sizeof(s2)));
		key.a = l[i].b;
		key.pa = l[i].pb;
		back = bsearch(&key, l, n, sizeof(*l), link_cmp);
		if (!back || back->b != l[i].a || back->pb != l[i].pa)
			return ib_fail(c, TG_EPARSE, "%s port %u links to %s "
				       "port %u, but %s's block does not list "
				       "that link back: the output is "
				       "truncated or inconsistent",
				       tgi_fab_show(an, strlen(an), s1,
						sizeof(s1)), l[i].pa,
				       tgi_fab_show(bn, strlen(bn), s2,
						sizeof(s2)), l[i].pb, s2);
	}
	return TG_OK;
}

/* One line, NUL-terminated, leading blanks skipped: a block header, a
 * port line of the open block, or a "key=value" header line. */
static tg_err ib_line(ib_ctx *c, char *s)
{
	char show[FAB_SHOW + 4], *e = s;

	if (strncmp(s, "Switch", 6) == 0 && tgi_fab_blank(s[6]))
		return ib_header(c, s + 6, DEV_SWITCH);
	if (strncmp(s, "Ca", 2) == 0 && tgi_fab_blank(s[2]))
		return ib_header(c, s + 2, DEV_HOST);
	if (strncmp(s, "Rt", 2) == 0 && tgi_fab_blank(s[2]))
		return ib_header(c, s + 2, DEV_OTHER);
	if (*s == '[') {
		if (c->cur == TG_NONE)
			return ib_fail(c, TG_EPARSE, "a port line outside a "
				       "Switch, Ca or Rt block");
		return ib_port(c, s);
	}
	while (tgi_fab_alnum(*e))
		e++;
	if (*e != '=' || e == s)
		return ib_fail(c, TG_EPARSE, "unrecognised line '%s'",
			       tgi_fab_show(s, strlen(s), show, sizeof(show)));
	return TG_OK;	/* vendid=, devid=, ...guid= */
}

static tg_err ib_parse(tg_fabric *f, const tgi_fab_in *in, tg_errinfo *ei)
{
	uint8_t seen[FAB_MAX_PORT + 1];
	char *buf = in->text;
	size_t pos = 0, len = in->len;
	bool any_node = false;
	ib_ctx c;
	tg_err err;

	memset(&c, 0, sizeof(c));
	c.f = f;
	c.source = in->source;
	c.src = in->src;
	c.ei = ei;
	c.cur = TG_NONE;
	c.seen = seen;
	c.first_link = f->nlinks;
	while (pos < len) {
		char *p = buf + pos, *nl = memchr(p, '\n', len - pos);
		size_t pl = nl ? (size_t)(nl - p) : len - pos;

		c.line++;
		pos += pl + (nl ? 1 : 0);
		c.cut = !nl;
		if (pl > FAB_MAX_LINE)
			return ib_fail(&c, TG_ELIMIT, "line longer than %d "
				       "bytes", FAB_MAX_LINE);
		if (memchr(p, '\0', pl))
			return ib_fail(&c, TG_EPARSE, "NUL byte in the text");
		p[pl] = '\0';
		ib_skip(&p);
		if (!*p) {
			c.cur = TG_NONE;
			continue;
		}
		if (*p == '#')
			continue;
		err = ib_line(&c, p);
		if (err)
			return err;
		any_node = any_node || c.cur != TG_NONE;
	}
	if (!any_node) {
		c.line = TG_MAX(c.line, 1u);
		return ib_fail(&c, TG_EPARSE, "no Switch or Ca block: not "
			       "ibnetdiscover output");
	}
	return ib_crosscheck(&c);
}

/*
 * ibnetdiscover output starts, after '#' comment lines, with the
 * "vendid=" header of its first node, or with a block header.
 */
static unsigned ib_sniff(const char *buf, size_t len)
{
	static const char *const starts[] = {
		"vendid=", "devid=", "sysimgguid=", "switchguid=", "caguid=",
		"Switch\t", "Switch ", "Ca\t", "Ca ", "Rt\t", "Rt "
	};
	size_t pos = 0, i;

	while (pos < len) {
		const char *p = buf + pos, *nl = memchr(p, '\n', len - pos);
		size_t pl = nl ? (size_t)(nl - p) : len - pos;

		pos += pl + 1;
		while (pl && tgi_fab_blank(*p)) {
			p++;
			pl--;
		}
		if (!pl || *p == '#')
			continue;
		for (i = 0; i < sizeof(starts) / sizeof(starts[0]); i++)
			if (pl >= strlen(starts[i]) &&
			    memcmp(p, starts[i], strlen(starts[i])) == 0)
				return 90;
		return 0;
	}
	return 0;
}

const tgi_fabric_fmt tgi_fab_ibnetdiscover = {
	.fmt = TG_FABRIC_IBNETDISCOVER,
	.name = "ibnetdiscover",
	.shape = TGI_FAB_GRAPH,
	.copy_text = true,
	.sniff = ib_sniff,
	.parse = ib_parse,
};
