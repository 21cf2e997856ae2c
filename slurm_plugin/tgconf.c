/*****************************************************************************\
 *  tgconf.c - topogang.conf parsing (see tgconf.h); its requests are
 *  read by the core's grammar (topogang/request.h).
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
#include "topogang/util.h"

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

/* A layer or partition name: the request grammar's layer names, at most
 * TGS_MAX_NAME bytes (what the records hold). */
static bool _name_ok(const char *s, size_t n)
{
	return n <= TGS_MAX_NAME && tg_request_layer_ok(s, n);
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

static int _gather_val(const char *v, tg_request *g, const char *src,
		       unsigned lineno, const char *key, char *err,
		       size_t errlen)
{
	tg_errinfo ei = { "" };

	if (tg_request_parse(g, TG_REQUEST_GATHER, v, &ei))
		return _err(err, errlen, "%s:%u: %s: %s", src, lineno, key,
			    ei.msg);
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
			uint64_t t;

			if (!tg_u64_parse(v, 86400, &t))
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
	tg_errinfo ei = { "" };
	char *buf;
	size_t n;
	int rc;

	if (tg_file_read(path, TGS_MAX_FILE, &buf, &n, &ei)) {
		if (missing_ok && errno == ENOENT) {
			tgs_conf_free(c);
			return 0;
		}
		return _err(err, errlen, "%s", ei.msg);
	}
	rc = tgs_conf_parse(c, buf, n, path, err, errlen);
	tg_free(buf);
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

extern const tg_request *tgs_conf_part_gather(const tgs_conf *c,
					      const char *partition)
{
	unsigned i;

	for (i = 0; partition && i < c->npart; i++)
		if (!strcmp(c->part[i].name, partition) &&
		    c->part[i].has_gather)
			return &c->part[i].gather;
	return c->has_default_gather ? &c->default_gather : NULL;
}
