/*****************************************************************************\
 *  tgconf.c - topogang.conf and --topo-gather parsing (see tgconf.h).
 *
 *  topogang.conf is read like slurm.conf: one record per logical line,
 *  whitespace-separated Key=Value pairs, '#' starts a comment, a '\' at
 *  the end of a line joins the next one, keys are case-insensitive and
 *  values may be double-quoted.  A line whose first key is LayerName or
 *  PartitionName is a record of that kind; any other line sets global
 *  keys.  Every error names the file and line.
\*****************************************************************************/

#define _POSIX_C_SOURCE 200809L

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tgconf.h"

#define MAX_PAIRS 32

static int _err(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int _err(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (err && len) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static bool _name_ok(const char *s, size_t n)
{
	size_t i;

	if (!n || n > TGS_MAX_NAME)
		return false;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char) s[i];

		if (!isalnum(c) && c != '-' && c != '_' && c != '.' &&
		    c != '/')
			return false;
	}
	return true;
}

/*
 * The comma-separated items of a request, "LAYER[:REST]" each: checks what
 * every kind of request shares (layer names, the bound, repeats, trailing
 * commas), copies the layer into the item (every item type starts with its
 * layer) and hands the rest (NULL without a ':') to \p fn.
 */
typedef int (*_item_fn)(void *item, const char *txt, size_t n,
			const char *rest, size_t rn, char *err, size_t errlen);

static int _items(const char *spec, const char *what, void *items,
		  size_t stride, unsigned *count, _item_fn fn,
		  char *err, size_t errlen)
{
	const char *p = spec;

	if (!spec || !*spec)
		return _err(err, errlen, "empty %s request", what);
	while (*p) {
		const char *end = strchr(p, ','), *c;
		size_t n = end ? (size_t) (end - p) : strlen(p), ln;
		char *layer = (char *) items + *count * stride;
		unsigned i;

		c = memchr(p, ':', n);
		ln = c ? (size_t) (c - p) : n;
		if (!_name_ok(p, ln))
			return _err(err, errlen, "'%.*s': bad layer name",
				    (int) n, p);
		if (*count >= TGS_MAX_GATHER)
			return _err(err, errlen, "more than %d layers in "
				    "'%s'", TGS_MAX_GATHER, spec);
		memcpy(layer, p, ln);
		layer[ln] = '\0';
		if (fn(layer, p, n, c ? c + 1 : NULL,
		       c ? (size_t) (p + n - c - 1) : 0, err, errlen))
			return -1;
		for (i = 0; i < *count; i++)
			if (!strcasecmp((char *) items + i * stride, layer))
				return _err(err, errlen, "layer '%s' given "
					    "twice", layer);
		(*count)++;
		if (!end)
			break;
		p = end + 1;
		if (!*p)
			return _err(err, errlen, "'%s': trailing comma", spec);
	}
	return 0;
}

static int _gather_item(void *item, const char *txt, size_t n,
			const char *how, size_t hn, char *err, size_t errlen)
{
	tgs_gather_item *it = item;

	if (how && hn == 4 && !strncasecmp(how, "must", 4))
		it->how = TGS_MUST;
	else if (how && hn == 6 && !strncasecmp(how, "prefer", 6))
		it->how = TGS_PREFER;
	else
		return _err(err, errlen, "'%.*s': expected "
			    "LAYER:must or LAYER:prefer", (int) n, txt);
	return 0;
}

extern int tgs_gather_parse(const char *spec, tgs_gather *out,
			    char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (spec && !strcasecmp(spec, "none")) {
		out->none = true;
		return 0;
	}
	return _items(spec, "topology", out->item, sizeof(out->item[0]),
		      &out->n, _gather_item, err, errlen);
}

/* Writes one item (its text without the separator) into buf. */
typedef int (*_fmt_fn)(char *buf, size_t len, const void *item);

/* The items, comma-separated, as far as \p len allows. */
static void _format(const void *items, size_t stride, unsigned n,
		    _fmt_fn fn, char *buf, size_t len)
{
	size_t off = 0;
	unsigned i;

	if (!len)
		return;
	buf[0] = '\0';
	for (i = 0; i < n && off + 1 < len; i++) {
		int w;

		if (i) {
			buf[off++] = ',';
			buf[off] = '\0';
		}
		w = fn(buf + off, len - off, (const char *) items + i * stride);
		if (w < 0)
			break;
		off += (size_t) w;
	}
}

static int _gather_fmt(char *buf, size_t len, const void *item)
{
	const tgs_gather_item *it = item;

	return snprintf(buf, len, "%s:%s", it->layer,
			it->how == TGS_MUST ? "must" : "prefer");
}

extern void tgs_gather_format(const tgs_gather *g, char *buf, size_t len)
{
	if (g->none || !g->n) {
		if (len)
			snprintf(buf, len, "none");
		return;
	}
	_format(g->item, sizeof(g->item[0]), g->n, _gather_fmt, buf, len);
}

/* SKEW, hard or soft, in any order, each field once at most. */
static int _spread_item(void *item, const char *txt, size_t n,
			const char *rest, size_t rn, char *err, size_t errlen)
{
	tgs_spread_item *it = item;
	const char *f = rest, *stop = rest + rn;

	it->skew = 1;
	it->hard = false;
	while (f) {
		const char *fe = memchr(f, ':', (size_t) (stop - f));
		size_t fl = fe ? (size_t) (fe - f) : (size_t) (stop - f);

		if (fl == 4 && !strncasecmp(f, "hard", 4)) {
			it->hard = true;
		} else if (fl == 4 && !strncasecmp(f, "soft", 4)) {
			it->hard = false;
		} else if (fl && fl <= 6 && strspn(f, "0123456789") == fl) {
			unsigned long v = strtoul(f, NULL, 10);

			if (!v || v > TGS_MAX_SKEW)
				return _err(err, errlen, "'%.*s': skew must "
					    "be 1 to %d", (int) n, txt,
					    TGS_MAX_SKEW);
			it->skew = (unsigned) v;
		} else {
			return _err(err, errlen, "'%.*s': expected "
				    "LAYER[:SKEW][:hard|:soft]", (int) n, txt);
		}
		f = fe ? fe + 1 : NULL;
	}
	return 0;
}

extern int tgs_spread_parse(const char *spec, tgs_spread *out,
			    char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	return _items(spec, "spread", out->item, sizeof(out->item[0]),
		      &out->n, _spread_item, err, errlen);
}

static int _spread_fmt(char *buf, size_t len, const void *item)
{
	const tgs_spread_item *it = item;

	return snprintf(buf, len, "%s:%u:%s", it->layer, it->skew,
			it->hard ? "hard" : "soft");
}

extern void tgs_spread_format(const tgs_spread *s, char *buf, size_t len)
{
	_format(s->item, sizeof(s->item[0]), s->n, _spread_fmt, buf, len);
}

static int _slice_item(void *item, const char *txt, size_t n,
		       const char *sz, size_t sl, char *err, size_t errlen)
{
	tgs_slice_item *it = item;
	unsigned long v;

	if (!sz || !sl || sl > 6 || strspn(sz, "0123456789") != sl)
		return _err(err, errlen, "'%.*s': expected LAYER:SIZE",
			    (int) n, txt);
	v = strtoul(sz, NULL, 10);
	if (!v || v > TGS_MAX_SLICE)
		return _err(err, errlen, "'%.*s': size must be 1 to %d nodes",
			    (int) n, txt, TGS_MAX_SLICE);
	it->size = (unsigned) v;
	return 0;
}

extern int tgs_slice_parse(const char *spec, tgs_slice *out,
			   char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	return _items(spec, "slice", out->item, sizeof(out->item[0]),
		      &out->n, _slice_item, err, errlen);
}

static int _slice_fmt(char *buf, size_t len, const void *item)
{
	const tgs_slice_item *it = item;

	return snprintf(buf, len, "%s:%u", it->layer, it->size);
}

extern void tgs_slice_format(const tgs_slice *s, char *buf, size_t len)
{
	_format(s->item, sizeof(s->item[0]), s->n, _slice_fmt, buf, len);
}

extern void tgs_conf_init(tgs_conf *c)
{
	memset(c, 0, sizeof(*c));
	c->reserve_time = 120;
	c->fallback = true;
}

extern void tgs_conf_free(tgs_conf *c)
{
	if (!c)
		return;
	free(c->part);
	tgs_conf_init(c);
}

typedef struct pair {
	char *key;
	char *val;
} pair;

/* Splits a logical line in place into Key=Value pairs. */
static int _split(char *line, pair *pv, unsigned *np, const char *src,
		  unsigned lineno, char *err, size_t errlen)
{
	char *p = line;
	unsigned n = 0;

	for (;;) {
		char *k, *v;

		while (isspace((unsigned char) *p))
			p++;
		if (!*p || *p == '#')
			break;
		k = p;
		while (*p && *p != '=' && !isspace((unsigned char) *p))
			p++;
		if (*p != '=')
			return _err(err, errlen, "%s:%u: '%.*s': expected "
				    "Key=Value", src, lineno,
				    (int) (p - k), k);
		*p++ = '\0';
		if (*p == '"') {
			v = ++p;
			while (*p && *p != '"')
				p++;
			if (*p != '"')
				return _err(err, errlen, "%s:%u: unterminated "
					    "quote after %s=", src, lineno, k);
			*p++ = '\0';
		} else {
			v = p;
			while (*p && !isspace((unsigned char) *p) &&
			       *p != '#')
				p++;
			if (*p == '#') {
				*p = '\0';
			} else if (*p) {
				*p++ = '\0';
			}
		}
		if (!*k)
			return _err(err, errlen, "%s:%u: empty key", src,
				    lineno);
		if (n >= MAX_PAIRS)
			return _err(err, errlen, "%s:%u: more than %d "
				    "Key=Value pairs", src, lineno, MAX_PAIRS);
		pv[n].key = k;
		pv[n].val = v;
		n++;
		if (!*p)
			break;
	}
	*np = n;
	return 0;
}

static int _bool(const char *v, bool *out)
{
	if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") ||
	    !strcmp(v, "1")) {
		*out = true;
		return 0;
	}
	if (!strcasecmp(v, "no") || !strcasecmp(v, "false") ||
	    !strcmp(v, "0")) {
		*out = false;
		return 0;
	}
	return -1;
}

static int _gather_val(const char *v, tgs_gather *g, const char *src,
		       unsigned lineno, const char *key, char *err,
		       size_t errlen)
{
	char why[TGS_ERRLEN];

	if (tgs_gather_parse(v, g, why, sizeof(why)))
		return _err(err, errlen, "%s:%u: %s: %s", src, lineno, key,
			    why);
	return 0;
}

static int _line(tgs_conf *c, char *line, const char *src, unsigned lineno,
		 char *err, size_t errlen)
{
	pair pv[MAX_PAIRS];
	unsigned n = 0, i;

	if (_split(line, pv, &n, src, lineno, err, errlen))
		return -1;
	if (!n)
		return 0;
	if (!strcasecmp(pv[0].key, "LayerName")) {
		tgs_alias *a;

		if (c->nalias >= TGS_MAX_ALIASES)
			return _err(err, errlen, "%s:%u: more than %d "
				    "LayerName records", src, lineno,
				    TGS_MAX_ALIASES);
		if (!_name_ok(pv[0].val, strlen(pv[0].val)))
			return _err(err, errlen, "%s:%u: bad LayerName '%s'",
				    src, lineno, pv[0].val);
		a = &c->alias[c->nalias];
		memset(a, 0, sizeof(*a));
		snprintf(a->name, sizeof(a->name), "%s", pv[0].val);
		for (i = 1; i < n; i++) {
			if (strcasecmp(pv[i].key, "Layer"))
				return _err(err, errlen, "%s:%u: unknown key "
					    "'%s' in a LayerName record", src,
					    lineno, pv[i].key);
			if (!_name_ok(pv[i].val, strlen(pv[i].val)))
				return _err(err, errlen, "%s:%u: bad Layer "
					    "'%s'", src, lineno, pv[i].val);
			snprintf(a->layer, sizeof(a->layer), "%s",
				 pv[i].val);
		}
		if (!a->layer[0])
			return _err(err, errlen, "%s:%u: LayerName=%s needs "
				    "Layer=", src, lineno, a->name);
		for (i = 0; i < c->nalias; i++)
			if (!strcasecmp(c->alias[i].name, a->name))
				return _err(err, errlen, "%s:%u: LayerName=%s "
					    "defined twice", src, lineno,
					    a->name);
		c->nalias++;
		return 0;
	}
	if (!strcasecmp(pv[0].key, "PartitionName")) {
		tgs_part *p, *np;

		if (!_name_ok(pv[0].val, strlen(pv[0].val)))
			return _err(err, errlen, "%s:%u: bad PartitionName "
				    "'%s'", src, lineno, pv[0].val);
		for (i = 0; i < c->npart; i++)
			if (!strcmp(c->part[i].name, pv[0].val))
				return _err(err, errlen, "%s:%u: "
					    "PartitionName=%s defined twice",
					    src, lineno, pv[0].val);
		if (c->npart >= TGS_MAX_PARTITIONS)
			return _err(err, errlen, "%s:%u: more than %d "
				    "PartitionName records", src, lineno,
				    TGS_MAX_PARTITIONS);
		np = realloc(c->part, (c->npart + 1) * sizeof(*np));
		if (!np)
			return _err(err, errlen, "%s:%u: out of memory", src,
				    lineno);
		c->part = np;
		p = &c->part[c->npart];
		memset(p, 0, sizeof(*p));
		snprintf(p->name, sizeof(p->name), "%s", pv[0].val);
		for (i = 1; i < n; i++) {
			if (strcasecmp(pv[i].key, "Gather"))
				return _err(err, errlen, "%s:%u: unknown key "
					    "'%s' in a PartitionName record",
					    src, lineno, pv[i].key);
			if (_gather_val(pv[i].val, &p->gather, src, lineno,
					"Gather", err, errlen))
				return -1;
			p->has_gather = true;
		}
		c->npart++;
		return 0;
	}
	for (i = 0; i < n; i++) {
		const char *k = pv[i].key, *v = pv[i].val;

		if (!strcasecmp(k, "TopologyFile")) {
			if (!*v || strlen(v) >= sizeof(c->topology_file))
				return _err(err, errlen, "%s:%u: bad "
					    "TopologyFile", src, lineno);
			snprintf(c->topology_file,
				 sizeof(c->topology_file), "%s", v);
		} else if (!strcasecmp(k, "DefaultGather")) {
			if (_gather_val(v, &c->default_gather, src, lineno,
					k, err, errlen))
				return -1;
			c->has_default_gather = true;
		} else if (!strcasecmp(k, "ReserveTime")) {
			char *end;
			unsigned long t;

			errno = 0;
			t = strtoul(v, &end, 10);
			if (errno || end == v || *end || t > 86400)
				return _err(err, errlen, "%s:%u: ReserveTime "
					    "'%s': expected 0 to 86400 "
					    "seconds", src, lineno, v);
			c->reserve_time = (uint32_t) t;
		} else if (!strcasecmp(k, "Fallback")) {
			if (_bool(v, &c->fallback))
				return _err(err, errlen, "%s:%u: Fallback "
					    "'%s': expected yes or no", src,
					    lineno, v);
		} else if (!strcasecmp(k, "Debug")) {
			if (_bool(v, &c->debug))
				return _err(err, errlen, "%s:%u: Debug '%s': "
					    "expected yes or no", src, lineno,
					    v);
		} else {
			return _err(err, errlen, "%s:%u: unknown key '%s'",
				    src, lineno, k);
		}
	}
	return 0;
}

extern int tgs_conf_parse(tgs_conf *c, const char *text, size_t len,
			  const char *source, char *err, size_t errlen)
{
	char line[TGS_MAX_LINE + 1];
	size_t pos = 0, ll = 0;
	unsigned lineno = 0, first = 1;
	tgs_conf tmp;

	tgs_conf_init(&tmp);
	if (len > TGS_MAX_FILE) {
		_err(err, errlen, "%s: larger than %u bytes", source,
		     TGS_MAX_FILE);
		return -1;
	}
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t) (nl - (text + pos)) : len - pos;
		bool cont;

		lineno++;
		if (!ll)
			first = lineno;
		if (n && text[pos + n - 1] == '\r')
			n--;
		cont = n && text[pos + n - 1] == '\\';
		if (cont)
			n--;
		if (memchr(text + pos, '\0', n)) {
			_err(err, errlen, "%s:%u: NUL byte", source, lineno);
			goto fail;
		}
		if (ll + n > TGS_MAX_LINE) {
			_err(err, errlen, "%s:%u: line longer than %d bytes",
			     source, lineno, TGS_MAX_LINE);
			goto fail;
		}
		memcpy(line + ll, text + pos, n);
		ll += n;
		line[ll] = '\0';
		pos += n + (cont ? 1 : 0);
		if (pos < len && text[pos] == '\r')
			pos++;
		if (pos < len && text[pos] == '\n')
			pos++;
		if (cont && pos < len) {
			line[ll++] = ' ';
			continue;
		}
		if (_line(&tmp, line, source, first, err, errlen))
			goto fail;
		ll = 0;
	}
	tgs_conf_free(c);
	*c = tmp;
	return 0;
fail:
	tgs_conf_free(&tmp);
	return -1;
}

extern int tgs_conf_load(tgs_conf *c, const char *path, bool missing_ok,
			 char *err, size_t errlen)
{
	FILE *f;
	char *buf;
	size_t n;
	int rc;

	f = fopen(path, "r");
	if (!f) {
		if (missing_ok && errno == ENOENT) {
			tgs_conf_free(c);
			return 0;
		}
		return _err(err, errlen, "%s: %s", path, strerror(errno));
	}
	buf = malloc(TGS_MAX_FILE + 1);
	if (!buf) {
		fclose(f);
		return _err(err, errlen, "%s: out of memory", path);
	}
	n = fread(buf, 1, TGS_MAX_FILE + 1, f);
	if (ferror(f)) {
		fclose(f);
		free(buf);
		return _err(err, errlen, "%s: read error", path);
	}
	fclose(f);
	rc = tgs_conf_parse(c, buf, n, path, err, errlen);
	free(buf);
	return rc;
}

extern const char *tgs_conf_layer(const tgs_conf *c, const char *name)
{
	unsigned i;

	for (i = 0; c && i < c->nalias; i++)
		if (!strcasecmp(c->alias[i].name, name))
			return c->alias[i].layer;
	return name;
}

extern const tgs_gather *tgs_conf_part_gather(const tgs_conf *c,
					      const char *partition)
{
	unsigned i;

	for (i = 0; partition && i < c->npart; i++)
		if (!strcmp(c->part[i].name, partition) &&
		    c->part[i].has_gather)
			return &c->part[i].gather;
	return c->has_default_gather ? &c->default_gather : NULL;
}
