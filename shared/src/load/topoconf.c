/*
 * shared/src/load/topoconf.c - Slurm topology.conf loader.
 *
 * The text is read the way Slurm's parser reads it (src/common/
 * parse_config.c): '#' starts a comment unless escaped, a line ending in
 * an odd number of backslashes continues on the next one (joined without
 * a blank), "\x" stands for x, keys are case-insensitive, "Key=Value" or
 * "Key = Value", values may be quoted.  A SwitchName= or BlockName= starts
 * a record; Nodes=, Switches= and LinkSpeed= after it on the same line
 * belong to it.
 *
 * Everything is parsed and checked in local tables first; the topology is
 * only touched once the whole file passed, so an error leaves it empty.
 * (Running out of memory while the layers and nodes are being added is
 * the one exception: the topology then holds part of the file and the
 * caller must destroy it.)
 *
 * Node order: tree form, depth first over the switch tree (top switches
 * in file order, children in the order their Switches= lists them), each
 * leaf's nodes in hostlist order; block form, blocks in file order, each
 * block's nodes in hostlist order.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define TC_SHOW		80	/* bytes of a value quoted in errors */
#define TC_MAX_BSIZE	9	/* digits of one BlockSizes entry */
#define TC_KEY(n)	((int)TG_MIN((n), (size_t)TC_SHOW))	/* %.*s */

enum { TC_NONE, TC_TREE, TC_BLOCK };

/* One SwitchName= or BlockName= record. */
typedef struct tc_rec {
	uint32_t name;		/* id in recnames */
	unsigned line;
	uint32_t *nodes;	/* ids in nodenames, hostlist order */
	size_t nnodes, nodecap;
	uint32_t *kids;		/* ids in recnames, then record indices */
	size_t nkids, kidcap;
	bool has_nodes, has_switches, has_speed;
	uint32_t parent;	/* record index, TG_NONE for a top switch */
	unsigned level;		/* Slurm switch level, 0 = leaf */
} tc_rec;

typedef struct tc_ctx {
	const char *source;
	tg_errinfo *ei;
	int form;
	unsigned form_line;	/* first line that fixed the form */
	unsigned nlines;

	tc_rec *recs;
	size_t nrecs, reccap;

	/* switch or block names, defined or referenced by Switches= */
	tgi_strtab recnames;
	uint32_t *def;		/* id -> record index + 1; 0 = undefined */
	size_t ndef, defcap;
	uint32_t *parent_of;	/* id -> record index + 1 of its parent */
	size_t npar, parcap;

	tgi_strtab nodenames;
	uint32_t *owner;	/* id -> record index + 1 */
	size_t nnodeids, nodeidcap;

	unsigned bsizes[TG_MAX_LAYERS];
	unsigned nbsizes, bsizes_line;

	char *line;		/* the current logical line */
	size_t linecap;
} tc_ctx;

static tg_err tc_fail(tc_ctx *c, unsigned line, tg_err err,
		      const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static tg_err tc_fail(tc_ctx *c, unsigned line, tg_err err,
		      const char *fmt, ...)
{
	char why[448];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return tgi_errf(c->ei, err, "%s:%u: %s", c->source, line, why);
}

static const char *tc_kind(const tc_ctx *c)
{
	return c->form == TC_BLOCK ? "block" : "switch";
}

static const char *tc_recname(const tc_ctx *c, size_t r)
{
	return tgi_strtab_get(&c->recnames, c->recs[r].name);
}

static bool tc_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' ||
	       ch == '\f' || ch == '\n';
}

static bool tc_alnum(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9');
}

/* Case-insensitive match of the key [k, k + n) against \p want. */
static bool tc_key_is(const char *k, size_t n, const char *want)
{
	size_t i;

	if (strlen(want) != n)
		return false;
	for (i = 0; i < n; i++) {
		char a = k[i], b = want[i];

		if (a >= 'A' && a <= 'Z')
			a = (char)(a - 'A' + 'a');
		if (b >= 'A' && b <= 'Z')
			b = (char)(b - 'A' + 'a');
		if (a != b)
			return false;
	}
	return true;
}

/* Grows an id-indexed array to \p need entries, zeroing the new ones. */
static tg_err tc_ids(uint32_t **a, size_t *n, size_t *cap, size_t need)
{
	if (need <= *n)
		return TG_OK;
	if (tgi_grow(a, cap, need, sizeof(**a)))
		return TG_ENOMEM;
	memset(*a + *n, 0, (need - *n) * sizeof(**a));
	*n = need;
	return TG_OK;
}

static tg_err tc_recid(tc_ctx *c, unsigned line, const char *name,
		       uint32_t *id)
{
	size_t need;

	if (tgi_strtab_intern(&c->recnames, name, id))
		return tc_fail(c, line, TG_ENOMEM, "out of memory");
	if (c->recnames.n - 1 > TG_MAX_SWITCHES)
		return tc_fail(c, line, TG_ELIMIT,
			       "more than %u %s names", TG_MAX_SWITCHES,
			       tc_kind(c));
	need = (size_t)*id + 1;
	if (tc_ids(&c->def, &c->ndef, &c->defcap, need) ||
	    tc_ids(&c->parent_of, &c->npar, &c->parcap, need))
		return tc_fail(c, line, TG_ENOMEM, "out of memory");
	return TG_OK;
}

/* A switch or block name becomes a path element: keep it printable. */
static tg_err tc_check_name(tc_ctx *c, unsigned line, const char *what,
			    const char *v)
{
	size_t len = strlen(v), i;

	if (len == 0)
		return tc_fail(c, line, TG_EPARSE, "%s has an empty value",
			       what);
	if (len > TG_MAX_NAME)
		return tc_fail(c, line, TG_ELIMIT,
			       "%s '%.*s...' is longer than %d bytes", what,
			       TC_SHOW, v, TG_MAX_NAME);
	for (i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)v[i];

		if (ch == '/' || ch <= ' ' || ch == 0x7f)
			return tc_fail(c, line, TG_EPARSE,
				       "bad %s '%.*s': %s", what, TC_SHOW, v,
				       ch == '/' ? "contains '/'" :
				       "contains a blank or control byte");
	}
	return TG_OK;
}

static tg_err tc_set_form(tc_ctx *c, unsigned line, int form,
			  const char *key)
{
	if (c->form == TC_NONE) {
		c->form = form;
		c->form_line = line;
		return TG_OK;
	}
	if (c->form == form)
		return TG_OK;
	return tc_fail(c, line, TG_EPARSE,
		       "%s in a %s topology (%s at line %u): the tree and "
		       "block forms cannot be mixed", key,
		       c->form == TC_TREE ? "tree" : "block",
		       c->form == TC_TREE ? "SwitchName" : "BlockName",
		       c->form_line);
}

/* SwitchName=v or BlockName=v: a new record. */
static tg_err tc_new_rec(tc_ctx *c, unsigned line, int form,
			 const char *key, const char *v, size_t *cur)
{
	tc_rec *r;
	uint32_t id;
	tg_err err;

	err = tc_set_form(c, line, form, key);
	if (err)
		return err;
	err = tc_check_name(c, line, key, v);
	if (err)
		return err;
	err = tc_recid(c, line, v, &id);
	if (err)
		return err;
	if (c->def[id])
		return tc_fail(c, line, TG_EEXIST,
			       "%s '%s' is defined twice (first at line %u)",
			       tc_kind(c), v, c->recs[c->def[id] - 1].line);
	if (tgi_grow(&c->recs, &c->reccap, c->nrecs + 1, sizeof(*c->recs)))
		return tc_fail(c, line, TG_ENOMEM, "out of memory");
	r = &c->recs[c->nrecs];
	memset(r, 0, sizeof(*r));
	r->name = id;
	r->line = line;
	r->parent = TG_NONE;
	c->def[id] = (uint32_t)(c->nrecs + 1);
	*cur = c->nrecs++;
	return TG_OK;
}

static tg_err tc_expand(tc_ctx *c, unsigned line, const char *v,
			char ***names, unsigned *n)
{
	tg_errinfo lei;
	tg_err err;

	lei.msg[0] = '\0';
	err = tg_hostlist_expand(v, names, n, &lei);
	if (err)
		return tc_fail(c, line, err, "%s", lei.msg);
	return TG_OK;
}

/* Nodes=v of record \p cur. */
static tg_err tc_nodes(tc_ctx *c, unsigned line, size_t cur, const char *v)
{
	tc_rec *r = &c->recs[cur];
	char **names = NULL;
	unsigned n = 0, i;
	tg_err err;

	if (r->has_nodes)
		return tc_fail(c, line, TG_EPARSE,
			       "Nodes given twice for %s '%s'", tc_kind(c),
			       tc_recname(c, cur));
	if (r->has_switches)
		return tc_fail(c, line, TG_EPARSE,
			       "switch '%s' has both Switches and Nodes",
			       tc_recname(c, cur));
	r->has_nodes = true;
	err = tc_expand(c, line, v, &names, &n);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		uint32_t id;

		if (tgi_strtab_intern(&c->nodenames, names[i], &id)) {
			err = tc_fail(c, line, TG_ENOMEM, "out of memory");
			goto out;
		}
		if (c->nodenames.n - 1 > TG_MAX_NODES) {
			err = tc_fail(c, line, TG_ELIMIT,
				      "more than %u nodes", TG_MAX_NODES);
			goto out;
		}
		if (tc_ids(&c->owner, &c->nnodeids, &c->nodeidcap,
			   (size_t)id + 1)) {
			err = tc_fail(c, line, TG_ENOMEM, "out of memory");
			goto out;
		}
		if (c->owner[id] == cur + 1)
			continue;	/* listed twice in one hostlist */
		if (c->owner[id]) {
			size_t o = c->owner[id] - 1;

			err = tc_fail(c, line, TG_EEXIST,
				      c->form == TC_BLOCK ?
				      "node '%s' is in two blocks: '%s' "
				      "(line %u) and '%s'" :
				      "node '%s' is under two leaf switches: "
				      "'%s' (line %u) and '%s'",
				      names[i], tc_recname(c, o),
				      c->recs[o].line, tc_recname(c, cur));
			goto out;
		}
		if (tgi_grow(&r->nodes, &r->nodecap, r->nnodes + 1,
			     sizeof(*r->nodes))) {
			err = tc_fail(c, line, TG_ENOMEM, "out of memory");
			goto out;
		}
		c->owner[id] = (uint32_t)(cur + 1);
		r->nodes[r->nnodes++] = id;
	}
out:
	tg_hostlist_free(names, n);
	return err;
}

/* Switches=v of record \p cur. */
static tg_err tc_switches(tc_ctx *c, unsigned line, size_t cur,
			  const char *v)
{
	char **names = NULL;
	unsigned n = 0, i;
	tg_err err;

	if (c->recs[cur].has_switches)
		return tc_fail(c, line, TG_EPARSE,
			       "Switches given twice for switch '%s'",
			       tc_recname(c, cur));
	if (c->recs[cur].has_nodes)
		return tc_fail(c, line, TG_EPARSE,
			       "switch '%s' has both Nodes and Switches",
			       tc_recname(c, cur));
	c->recs[cur].has_switches = true;
	err = tc_expand(c, line, v, &names, &n);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		tc_rec *r;
		uint32_t id;

		err = tc_check_name(c, line, "switch name", names[i]);
		if (err)
			goto out;
		err = tc_recid(c, line, names[i], &id);
		if (err)
			goto out;
		r = &c->recs[cur];
		if (id == r->name) {
			err = tc_fail(c, line, TG_EINVAL,
				      "switch '%s' lists itself in Switches",
				      names[i]);
			goto out;
		}
		if (c->parent_of[id] == cur + 1)
			continue;	/* listed twice in one hostlist */
		if (c->parent_of[id]) {
			size_t o = c->parent_of[id] - 1;

			err = tc_fail(c, line, TG_EEXIST,
				      "switch '%s' has two parents: '%s' "
				      "(line %u) and '%s'", names[i],
				      tc_recname(c, o), c->recs[o].line,
				      tc_recname(c, cur));
			goto out;
		}
		if (tgi_grow(&r->kids, &r->kidcap, r->nkids + 1,
			     sizeof(*r->kids))) {
			err = tc_fail(c, line, TG_ENOMEM, "out of memory");
			goto out;
		}
		c->parent_of[id] = (uint32_t)(cur + 1);
		r->kids[r->nkids++] = id;
	}
out:
	tg_hostlist_free(names, n);
	return err;
}

/* BlockSizes=4,8,16: increasing, power-of-two multiples of the first. */
static tg_err tc_blocksizes(tc_ctx *c, unsigned line, const char *v)
{
	const char *p = v;
	unsigned n = 0;

	if (c->bsizes_line)
		return tc_fail(c, line, TG_EPARSE,
			       "BlockSizes given twice (first at line %u)",
			       c->bsizes_line);
	for (;;) {
		char num[TC_MAX_BSIZE + 1];
		const char *e = p;
		unsigned s;

		while (*e && *e != ',')
			e++;
		if (e == p || e - p > TC_MAX_BSIZE ||
		    strspn(p, "0123456789") != (size_t)(e - p))
			return tc_fail(c, line, TG_EPARSE,
				       "bad BlockSizes '%.*s': '%.*s' is not "
				       "a number of nodes", TC_SHOW, v,
				       (int)TG_MIN(e - p, TC_SHOW), p);
		memcpy(num, p, (size_t)(e - p));
		num[e - p] = '\0';
		if (!tg_u32_parse(num, &s) || s == 0)
			return tc_fail(c, line, TG_EPARSE,
				       "bad BlockSizes '%.*s': '%s' is not "
				       "a number of nodes", TC_SHOW, v, num);
		if (n == TG_MAX_LAYERS)
			return tc_fail(c, line, TG_ELIMIT,
				       "bad BlockSizes '%.*s': more than %d "
				       "sizes", TC_SHOW, v, TG_MAX_LAYERS);
		if (n && s <= c->bsizes[n - 1])
			return tc_fail(c, line, TG_EINVAL,
				       "bad BlockSizes '%.*s': %u is not "
				       "larger than %u", TC_SHOW, v, s,
				       c->bsizes[n - 1]);
		if (n && (s % c->bsizes[0] ||
			  ((s / c->bsizes[0]) & (s / c->bsizes[0] - 1))))
			return tc_fail(c, line, TG_EINVAL,
				       "bad BlockSizes '%.*s': %u is not a "
				       "power-of-two multiple of %u", TC_SHOW,
				       v, s, c->bsizes[0]);
		c->bsizes[n++] = s;
		if (!*e)
			break;
		p = e + 1;
	}
	c->nbsizes = n;
	c->bsizes_line = line;
	return TG_OK;
}

/* One Key=Value pair; *cur is the record open on this line or TG_NONE. */
static tg_err tc_pair(tc_ctx *c, unsigned line, const char *k, size_t kn,
		      const char *v, size_t *cur)
{
	bool tree_key = false;

	if (tc_key_is(k, kn, "SwitchName"))
		return tc_new_rec(c, line, TC_TREE, "SwitchName", v, cur);
	if (tc_key_is(k, kn, "BlockName"))
		return tc_new_rec(c, line, TC_BLOCK, "BlockName", v, cur);
	if (tc_key_is(k, kn, "BlockSizes")) {
		tg_err err = tc_set_form(c, line, TC_BLOCK, "BlockSizes");

		*cur = TG_NONE;
		return err ? err : tc_blocksizes(c, line, v);
	}
	if (tc_key_is(k, kn, "Include"))
		return tc_fail(c, line, TG_EPARSE,
			       "Include is not supported in topology.conf");
	if (tc_key_is(k, kn, "Switches") || tc_key_is(k, kn, "LinkSpeed"))
		tree_key = true;
	else if (!tc_key_is(k, kn, "Nodes"))
		return tc_fail(c, line, TG_EPARSE, "unknown key '%.*s'",
			       TC_KEY(kn), k);
	if (*cur == TG_NONE)
		return tc_fail(c, line, TG_EPARSE,
			       "%.*s= without a SwitchName= or BlockName= "
			       "before it on its line", (int)kn, k);
	if (tree_key && c->form != TC_TREE)
		return tc_fail(c, line, TG_EPARSE,
			       "%.*s= is a SwitchName key, not a BlockName "
			       "key", (int)kn, k);
	if (tc_key_is(k, kn, "Nodes"))
		return tc_nodes(c, line, *cur, v);
	if (tc_key_is(k, kn, "Switches"))
		return tc_switches(c, line, *cur, v);

	/* LinkSpeed: checked like Slurm does, then ignored. */
	{
		unsigned speed;

		if (c->recs[*cur].has_speed)
			return tc_fail(c, line, TG_EPARSE,
				       "LinkSpeed given twice for switch '%s'",
				       tc_recname(c, *cur));
		c->recs[*cur].has_speed = true;
		if (strspn(v, "0123456789") != strlen(v) ||
		    !tg_u32_parse(v, &speed))
			return tc_fail(c, line, TG_EPARSE,
				       "bad LinkSpeed '%.*s'", TC_SHOW, v);
	}
	return TG_OK;
}

/* Splits the logical line c->line (NUL-terminated) into Key=Value. */
static tg_err tc_parse_line(tc_ctx *c, unsigned line)
{
	char *s = c->line;
	size_t cur = TG_NONE;
	tg_err err;

	for (;;) {
		char *k, *v;
		size_t kn;

		while (tc_space(*s))
			s++;
		if (!*s)
			return TG_OK;
		for (k = s; tc_alnum(*s); s++)
			;
		kn = (size_t)(s - k);
		while (tc_space(*s))
			s++;
		if (*s != '=' && tc_key_is(k, kn, "Include"))
			return tc_fail(c, line, TG_EPARSE,
				       "Include is not supported in "
				       "topology.conf");
		if (kn == 0 || *s != '=') {
			size_t n = strcspn(k, " \t\r\v\f");

			return tc_fail(c, line, TG_EPARSE,
				       "expected Key=Value, got '%.*s'",
				       TC_KEY(n), k);
		}
		s++;
		while (tc_space(*s))
			s++;
		if (*s == '"') {
			v = ++s;
			s = strchr(s, '"');
			if (!s)
				return tc_fail(c, line, TG_EPARSE,
					       "value of %.*s has no closing "
					       "quote", TC_KEY(kn), k);
			*s++ = '\0';
			if (*s && !tc_space(*s))
				return tc_fail(c, line, TG_EPARSE,
					       "text right after the closing "
					       "quote of %.*s", TC_KEY(kn), k);
		} else {
			v = s;
			while (*s && !tc_space(*s))
				s++;
			if (*s)
				*s++ = '\0';
			if (strchr(v, '='))
				return tc_fail(c, line, TG_EPARSE,
					       "%.*s has no value before "
					       "'%.*s'", TC_KEY(kn), k, TC_SHOW,
					       v);
		}
		if (!*v)
			return tc_fail(c, line, TG_EPARSE,
				       "%.*s has an empty value", TC_KEY(kn),
				       k);
		err = tc_pair(c, line, k, kn, v, &cur);
		if (err)
			return err;
	}
}

/*
 * Reads the logical line starting at *pos into c->line: comments cut,
 * continuations joined, escapes resolved.  *first gets its first
 * physical line.  Returns TG_ENOENT at the end of the text.
 */
static tg_err tc_next_line(tc_ctx *c, const char *buf, size_t len,
			   size_t *pos, unsigned *first)
{
	size_t n = 0, i, j;

	if (*pos >= len)
		return TG_ENOENT;
	*first = c->nlines + 1;
	while (*pos < len) {
		const char *p = buf + *pos;
		const char *nl = memchr(p, '\n', len - *pos);
		size_t pl = nl ? (size_t)(nl - p) : len - *pos;
		size_t cut, e, bs = 0;
		bool cont;

		c->nlines++;
		*pos += pl + (nl ? 1 : 0);
		if (memchr(p, '\0', pl))
			return tc_fail(c, c->nlines, TG_EPARSE,
				       "NUL byte in the text");
		/* '#' after an even number of backslashes starts a comment */
		for (cut = 0; cut < pl; cut++) {
			if (p[cut] == '#' && bs % 2 == 0)
				break;
			bs = p[cut] == '\\' ? bs + 1 : 0;
		}
		/* an odd run of backslashes, then only blanks: continued */
		for (e = cut; e > 0 && tc_space(p[e - 1]); e--)
			;
		for (bs = 0; bs < e && p[e - 1 - bs] == '\\'; bs++)
			;
		cont = bs % 2 == 1;
		if (cont)
			cut = e - 1;
		if (tgi_grow(&c->line, &c->linecap, n + cut + 1, 1))
			return tc_fail(c, c->nlines, TG_ENOMEM,
				       "out of memory");
		memcpy(c->line + n, p, cut);
		n += cut;
		if (!cont)
			break;
	}
	if (tgi_grow(&c->line, &c->linecap, n + 1, 1))
		return tc_fail(c, c->nlines, TG_ENOMEM, "out of memory");
	/* "\x" stands for x */
	for (i = 0, j = 0; i < n; i++, j++) {
		if (c->line[i] == '\\' && i + 1 < n)
			i++;
		c->line[j] = c->line[i];
	}
	c->line[j] = '\0';
	return TG_OK;
}

static tg_err tc_parse(tc_ctx *c, const char *buf, size_t len)
{
	size_t pos = 0;
	unsigned first;
	tg_err err;

	while ((err = tc_next_line(c, buf, len, &pos, &first)) == TG_OK) {
		err = tc_parse_line(c, first);
		if (err)
			return err;
	}
	if (err != TG_ENOENT)
		return err;
	if (c->nrecs == 0 && c->nbsizes)
		return tc_fail(c, c->bsizes_line, TG_EINVAL,
			       "BlockSizes but no BlockName");
	if (c->nrecs == 0)
		return tc_fail(c, TG_MAX(c->nlines, 1u), TG_EINVAL,
			       "no SwitchName or BlockName: the topology "
			       "is empty");
	return TG_OK;
}

/*
 * Tree checks: every child defined, no cycle; levels as Slurm counts
 * them (a leaf is 0, a switch is 1 + its highest child).
 */
static tg_err tc_check_tree(tc_ctx *c, unsigned *nlevels)
{
	uint32_t *pending = NULL, *queue = NULL;
	size_t r, k, qh = 0, qt = 0;
	unsigned top = 0;
	tg_err err = TG_OK;

	for (r = 0; r < c->nrecs; r++) {
		tc_rec *rec = &c->recs[r];

		for (k = 0; k < rec->nkids; k++) {
			uint32_t id = rec->kids[k];

			if (!c->def[id])
				return tc_fail(c, rec->line, TG_ENOENT,
					       "switch '%s' lists undefined "
					       "switch '%s'",
					       tc_recname(c, r),
					       tgi_strtab_get(&c->recnames,
							      id));
			rec->kids[k] = c->def[id] - 1;
			c->recs[rec->kids[k]].parent = (uint32_t)r;
		}
	}

	pending = tgi_calloc(c->nrecs, sizeof(*pending));
	queue = tgi_calloc(c->nrecs, sizeof(*queue));
	if (!pending || !queue) {
		err = tc_fail(c, c->recs[0].line, TG_ENOMEM, "out of memory");
		goto out;
	}
	for (r = 0; r < c->nrecs; r++) {
		pending[r] = (uint32_t)c->recs[r].nkids;
		c->recs[r].level = 0;
		if (!pending[r])
			queue[qt++] = (uint32_t)r;
	}
	while (qh < qt) {
		tc_rec *rec = &c->recs[queue[qh++]];
		tc_rec *p;

		if (rec->level > top)
			top = rec->level;
		if (rec->parent == TG_NONE)
			continue;
		p = &c->recs[rec->parent];
		if (p->level < rec->level + 1)
			p->level = rec->level + 1;
		if (--pending[rec->parent] == 0)
			queue[qt++] = rec->parent;
	}
	if (qt < c->nrecs) {
		/* Every switch left over is on a cycle: show it. */
		char cyc[300];
		size_t start, at, len = 0, hops;

		for (start = 0; pending[start] == 0; start++)
			;
		cyc[0] = '\0';
		at = start;
		for (hops = 0; hops <= 8; hops++) {
			int w = snprintf(cyc + len, sizeof(cyc) - len,
					 "%s'%.24s'", hops ? " under " : "",
					 tc_recname(c, at));

			if (w < 0 || (size_t)w >= sizeof(cyc) - len)
				break;
			len += (size_t)w;
			if (hops && at == start)
				break;
			at = c->recs[at].parent;
		}
		err = tc_fail(c, c->recs[start].line, TG_EINVAL,
			      "switches form a cycle: %s%s", cyc,
			      hops > 8 ? " ..." : "");
		goto out;
	}
	if (top + 1 > TG_MAX_LAYERS) {
		for (r = 0; c->recs[r].level != top; r++)
			;
		err = tc_fail(c, c->recs[r].line, TG_ELIMIT,
			      "switch '%s' is at level %u: at most %d switch "
			      "levels", tc_recname(c, r), top, TG_MAX_LAYERS);
		goto out;
	}
	*nlevels = top + 1;
out:
	tgi_free(queue);
	tgi_free(pending);
	return err;
}

static tg_err tc_add_fail(tc_ctx *c, tg_err err, const char *what,
			  const char *name)
{
	return tgi_errf(c->ei, err, "%s: cannot add %s '%s': %s", c->source,
			what, name, tg_strerror(err));
}

/* Adds the nodes of switch \p r, whose path is on at[] (level order). */
static tg_err tc_add_leaf(tc_ctx *c, tg_topology *t, uint32_t r,
			  const uint32_t *at, unsigned nlevels)
{
	const char *path[TG_MAX_LAYERS];
	tc_rec *rec = &c->recs[r];
	size_t i;
	unsigned k;
	tg_err err;

	if (!rec->nnodes)
		return TG_OK;
	for (k = 0; k < nlevels; k++)
		path[k] = tc_recname(c, at[nlevels - 1 - k]);
	for (i = 0; i < rec->nnodes; i++) {
		const char *nn = tgi_strtab_get(&c->nodenames, rec->nodes[i]);

		err = tg_topology_add_node(t, nn, path, NULL);
		if (err)
			return tc_add_fail(c, err, "node", nn);
	}
	return TG_OK;
}

/*
 * Adds the layers and nodes of a checked tree, depth first.  A switch
 * stands on its own level and on the missing levels up to its parent's
 * (up to the top level for a top switch), so every node has a full path.
 */
static tg_err tc_add_tree(tc_ctx *c, tg_topology *t, unsigned nlevels)
{
	uint32_t at[TG_MAX_LAYERS];	/* the switch on each level */
	uint32_t stk[TG_MAX_LAYERS], next[TG_MAX_LAYERS];
	unsigned depth, k;
	size_t r;
	tg_err err;

	for (k = nlevels; k > 0; k--) {
		char name[32];

		snprintf(name, sizeof(name), "switch-l%u", k - 1);
		err = tg_topology_add_layer(t, name, NULL);
		if (err)
			return tc_add_fail(c, err, "layer", name);
	}
	for (r = 0; r < c->nrecs; r++) {
		if (c->recs[r].parent != TG_NONE)
			continue;
		for (k = c->recs[r].level; k < nlevels; k++)
			at[k] = (uint32_t)r;
		err = tc_add_leaf(c, t, (uint32_t)r, at, nlevels);
		if (err)
			return err;
		/* Levels fall by at least one per step down: depth fits. */
		stk[0] = (uint32_t)r;
		next[0] = 0;
		depth = 1;
		while (depth) {
			tc_rec *rec = &c->recs[stk[depth - 1]];
			uint32_t ki;

			if (next[depth - 1] >= rec->nkids) {
				depth--;
				continue;
			}
			ki = rec->kids[next[depth - 1]++];
			for (k = c->recs[ki].level; k < rec->level; k++)
				at[k] = ki;
			err = tc_add_leaf(c, t, ki, at, nlevels);
			if (err)
				return err;
			stk[depth] = ki;
			next[depth++] = 0;
		}
	}
	return TG_OK;
}

/* Adds the layers and nodes of a block topology. */
static tg_err tc_add_blocks(tc_ctx *c, tg_topology *t)
{
	char agg[TG_MAX_LAYERS][48];
	const char *path[TG_MAX_LAYERS];
	unsigned nb = c->nbsizes ? c->nbsizes : 1, j;
	size_t r, i;
	tg_err err;

	for (j = nb - 1; j > 0; j--) {
		char name[32];

		snprintf(name, sizeof(name), "block%u", c->bsizes[j]);
		err = tg_topology_add_layer(t, name, NULL);
		if (err)
			return tc_add_fail(c, err, "layer", name);
	}
	err = tg_topology_add_layer(t, "block", NULL);
	if (err)
		return tc_add_fail(c, err, "layer", "block");
	for (r = 0; r < c->nrecs; r++) {
		tc_rec *rec = &c->recs[r];

		for (j = nb - 1; j > 0; j--) {
			unsigned per = c->bsizes[j] / c->bsizes[0];

			snprintf(agg[j], sizeof(agg[j]), "block%u-%zu",
				 c->bsizes[j], r / per);
			path[nb - 1 - j] = agg[j];
		}
		path[nb - 1] = tc_recname(c, r);
		for (i = 0; i < rec->nnodes; i++) {
			const char *nn = tgi_strtab_get(&c->nodenames,
							rec->nodes[i]);

			err = tg_topology_add_node(t, nn, path, NULL);
			if (err)
				return tc_add_fail(c, err, "node", nn);
		}
	}
	return TG_OK;
}

static void tc_free(tc_ctx *c)
{
	size_t r;

	for (r = 0; r < c->nrecs; r++) {
		tgi_free(c->recs[r].nodes);
		tgi_free(c->recs[r].kids);
	}
	tgi_free(c->recs);
	tgi_free(c->def);
	tgi_free(c->parent_of);
	tgi_free(c->owner);
	tgi_free(c->line);
	tgi_strtab_free(&c->nodenames);
	tgi_strtab_free(&c->recnames);
}

tg_err tg_topoconf_load(tg_topology *t, const char *buf, size_t len,
			const char *source, tg_errinfo *ei)
{
	tc_ctx c;
	unsigned nlevels = 0;
	tg_err err;

	if (!source)
		source = "topology.conf";
	if (!t || (!buf && len))
		return tgi_errf(ei, TG_EINVAL, "%s: no topology or no text",
				source);
	if (tg_topology_nlayers(t) || tg_topology_nnodes(t))
		return tgi_errf(ei, TG_ESTATE,
				"%s: the topology already has layers or nodes",
				source);
	if (len > TG_MAX_FILE)
		return tgi_errf(ei, TG_ELIMIT, "%s: larger than %u bytes",
				source, TG_MAX_FILE);
	memset(&c, 0, sizeof(c));
	c.source = source;
	c.ei = ei;
	tgi_strtab_init(&c.recnames);
	tgi_strtab_init(&c.nodenames);

	err = tc_parse(&c, buf ? buf : "", len);
	if (err)
		goto out;
	if (c.form == TC_TREE) {
		err = tc_check_tree(&c, &nlevels);
		if (!err)
			err = tc_add_tree(&c, t, nlevels);
	} else {
		err = tc_add_blocks(&c, t);
	}
out:
	tc_free(&c);
	return err;
}

tg_err tg_topoconf_load_file(tg_topology *t, const char *path,
			     tg_errinfo *ei)
{
	char *buf = NULL;
	size_t len = 0;
	tg_err err;

	if (!path)
		return tgi_errf(ei, TG_EINVAL, "tg_topoconf_load_file: NULL");
	err = tgi_read_file(path, &buf, &len, ei);
	if (err)
		return err;
	err = tg_topoconf_load(t, buf, len, path, ei);
	tgi_free(buf);
	return err;
}
