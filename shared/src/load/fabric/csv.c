/*
 * shared/src/load/fabric/csv.c - a host-to-switch CSV (the table shape)
 * such as Alibaba Crux's "ip,DSW,PSW,ASW": a header line naming the host
 * column and the switch levels, farthest first, then one row per host
 * with its switch on every level.  "quoted" fields, CRLF, a BOM, blank
 * and '#' lines are read; switch and level names use [A-Za-z0-9._-].
 */
#include "config.h"

#include <stdarg.h>
#include <string.h>

#include "fabric_int.h"

typedef struct csv_ctx {
	tg_fabric *f;
	const char *source;
	uint32_t src;
	tg_errinfo *ei;
	unsigned line;
	int ncols;		/* columns of the header; -1 before it */
	unsigned hdr_line;
} csv_ctx;

static tg_err csv_fail(csv_ctx *c, tg_err err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static tg_err csv_fail(csv_ctx *c, tg_err err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err = tgi_verrf_at(c->ei, err, c->source, c->line, fmt, ap);
	va_end(ap);
	return err;
}

/*
 * Splits one line (NUL-terminated, modified in place) into at most
 * \p max fields; "quoted" fields may hold commas and "" for a quote.
 * Returns the field count, or -1 with the error set.
 */
static int csv_split(csv_ctx *c, char *p, char **fld, int max, tg_err *err)
{
	int n = 0;

	for (;;) {
		char *w;

		if (n == max) {
			*err = csv_fail(c, TG_ELIMIT, "more than %d columns",
					max);
			return -1;
		}
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '"') {
			w = ++p;
			fld[n] = w;
			for (;;) {
				if (!*p) {
					*err = csv_fail(c, TG_EPARSE, "column "
							"%d: unterminated "
							"quote", n + 1);
					return -1;
				}
				if (*p == '"' && p[1] == '"') {
					*w++ = '"';
					p += 2;
				} else if (*p == '"') {
					p++;
					break;
				} else {
					*w++ = *p++;
				}
			}
			while (*p == ' ' || *p == '\t')
				p++;
			if (*p && *p != ',') {
				*w = '\0';
				*err = csv_fail(c, TG_EPARSE, "column %d: text "
						"after the closing quote",
						n + 1);
				return -1;
			}
			*w = '\0';
		} else {
			char *e;

			fld[n] = p;
			while (*p && *p != ',')
				p++;
			e = p;
			while (e > fld[n] && (e[-1] == ' ' || e[-1] == '\t'))
				e--;
			if (*p == ',') {
				*e = '\0';
				p++;
				n++;
				continue;
			}
			*e = '\0';
			n++;
			return n;
		}
		n++;
		if (!*p)
			return n;
		p++;	/* the comma */
	}
}

/*
 * A switch name that repeats under different parents (Crux's ToR names)
 * is written to topology.conf with its path, the names from the top level
 * down joined by '_': that must fit TG_MAX_NAME too, so a row whose joined
 * switch path is longer is refused here, naming the line, rather than
 * exported as a file the topology.conf loader refuses.
 */
static tg_err csv_path_len(csv_ctx *c, char **fld, int n)
{
	size_t len = 0;
	int k;

	for (k = 1; k < n; k++)
		len += strlen(fld[k]) + (k > 1);
	if (len <= TG_MAX_NAME)
		return TG_OK;
	return csv_fail(c, TG_ELIMIT, "the switch path %.40s_..._%.40s is %zu "
			"bytes; a repeated switch name is written to "
			"topology.conf with its path, and names there are at "
			"most %d bytes (TG_MAX_NAME)", fld[1], fld[n - 1], len,
			TG_MAX_NAME);
}
/* The header: the host column, then the level names; later inputs must
 * name the same levels. */
static tg_err csv_header(csv_ctx *c, char **fld, int n)
{
	tg_fabric *f = c->f;
	char show[FAB_SHOW + 4];
	int k, j;

	if (n < 2)
		return csv_fail(c, TG_EPARSE, "the header needs a host column "
				"and at least one switch column (e.g. "
				"ip,DSW,PSW,ASW)");
	if (n - 1 > TG_MAX_LAYERS)
		return csv_fail(c, TG_ELIMIT, "more than %d switch levels",
				TG_MAX_LAYERS);
	if (f->nlayers && (unsigned)(n - 1) != f->nlayers)
		return csv_fail(c, TG_EPARSE, "%d switch columns; an earlier "
				"input had %u", n - 1, f->nlayers);
	for (k = 1; k < n; k++) {
		if (!tgi_fab_name_ok(fld[k]))
			return csv_fail(c, TG_EPARSE, "column %d: bad level "
					"name '%s'", k + 1,
					tgi_fab_show(fld[k], strlen(fld[k]),
						     show, sizeof(show)));
		for (j = 1; j < k; j++)
			if (strcmp(fld[j], fld[k]) == 0)
				return csv_fail(c, TG_EPARSE, "level '%s' "
						"named twice", fld[k]);
		if (f->nlayers && strcmp(f->layer_name[k - 1], fld[k]))
			return csv_fail(c, TG_EPARSE, "column %d is '%s'; an "
					"earlier input named it '%s'", k + 1,
					fld[k], f->layer_name[k - 1]);
	}
	if (!f->nlayers && tgi_fab_set_levels(f, fld + 1, (unsigned)(n - 1)))
		return csv_fail(c, TG_ENOMEM, "out of memory");
	c->ncols = n;
	c->hdr_line = c->line;
	return TG_OK;
}

/* Every column of a row is there, fits TG_MAX_NAME, and the switch
 * columns are valid names. */
static tg_err csv_row_check(csv_ctx *c, char **fld, int n)
{
	char show[FAB_SHOW + 4];
	int k;

	if (n != c->ncols)
		return csv_fail(c, TG_EPARSE, "%d columns; the header (line "
				"%u) has %d", n, c->hdr_line, c->ncols);
	for (k = 0; k < n; k++) {
		if (!*fld[k])
			return csv_fail(c, TG_EPARSE, "column %d is empty",
					k + 1);
		if (strlen(fld[k]) > TG_MAX_NAME)
			return csv_fail(c, TG_ELIMIT, "column %d is longer "
					"than %d bytes", k + 1, TG_MAX_NAME);
		if (k && !tgi_fab_name_ok(fld[k]))
			return csv_fail(c, TG_EPARSE, "column %d: switch "
					"'%s': expected letters, digits, '.', "
					"'_' or '-'", k + 1,
					tgi_fab_show(fld[k], strlen(fld[k]),
						     show, sizeof(show)));
	}
	return csv_path_len(c, fld, n);
}

/* One host row: the host through the host-map rule, then its row. */
static tg_err csv_row(csv_ctx *c, char **fld, int n)
{
	tg_fabric *f = c->f;
	char name[TG_MAX_NAME + 1], show[FAB_SHOW + 4];
	uint32_t hid, path[TG_MAX_LAYERS];
	const frow *o = NULL;
	int kept, k;
	tg_err err;

	err = csv_row_check(c, fld, n);
	if (err)
		return err;
	f->sum.host_ports++;
	kept = tgi_fab_host_map(f, fld[0], name);
	if (kept < 0)
		return csv_fail(c, TG_ELIMIT, "host '%s': the host-map rule "
				"makes it longer than %d bytes",
				tgi_fab_show(fld[0], strlen(fld[0]), show,
					     sizeof(show)), TG_MAX_NAME);
	if (kept == 0) {
		f->sum.dropped++;
		return TG_OK;
	}
	if (!tgi_fab_name_ok(name)) {
		f->sum.unnamed++;
		if (tgi_fab_warn(f, "%s:%u: host '%s' is not a valid node "
				 "name; skipped", c->source, c->line,
				 tgi_fab_show(name, strlen(name), show,
					      sizeof(show))))
			return csv_fail(c, TG_ENOMEM, "out of memory");
		return TG_OK;
	}
	if (tgi_strtab_intern(&f->strs, name, &hid))
		return csv_fail(c, TG_ENOMEM, "out of memory");
	memset(path, 0, sizeof(path));
	for (k = 1; k < n; k++)
		if (tgi_strtab_intern(&f->strs, fld[k], &path[k - 1]))
			return csv_fail(c, TG_ENOMEM, "out of memory");
	err = tgi_fab_row_add(f, hid, path, c->src, c->line, &o);
	if (err == TG_EEXIST)
		return csv_fail(c, TG_EEXIST, "host '%s' is already under "
				"other switches (%s:%u)", name,
				tgi_fab_src(f, o->src), o->line);
	if (err == TG_ELIMIT)
		return csv_fail(c, TG_ELIMIT, "more than %u hosts",
				TG_MAX_NODES);
	if (err)
		return csv_fail(c, TG_ENOMEM, "out of memory");
	return TG_OK;
}

static tg_err csv_parse(tg_fabric *f, const tgi_fab_in *in, tg_errinfo *ei)
{
	char *fld[TG_MAX_LAYERS + 2], *buf = in->text;
	size_t pos = 0, len = in->len;
	csv_ctx c;
	tg_err err = TG_OK;
	int n;

	memset(&c, 0, sizeof(c));
	c.f = f;
	c.source = in->source;
	c.src = in->src;
	c.ei = ei;
	c.ncols = -1;
	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		pos = 3;
	while (pos < len) {
		char *p = buf + pos, *nl = memchr(p, '\n', len - pos);
		size_t pl = nl ? (size_t)(nl - p) : len - pos;

		c.line++;
		pos += pl + (nl ? 1 : 0);
		if (pl > FAB_MAX_LINE)
			return csv_fail(&c, TG_ELIMIT, "line longer than %d "
					"bytes", FAB_MAX_LINE);
		if (memchr(p, '\0', pl))
			return csv_fail(&c, TG_EPARSE, "NUL byte in the text");
		if (pl && p[pl - 1] == '\r')
			pl--;
		p[pl] = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '#')
			continue;
		n = csv_split(&c, p, fld, TG_MAX_LAYERS + 2, &err);
		if (n < 0)
			return err;
		err = c.ncols < 0 ? csv_header(&c, fld, n) : csv_row(&c, fld, n);
		if (err)
			return err;
	}
	if (c.ncols < 0) {
		c.line = TG_MAX(c.line, 1u);
		return csv_fail(&c, TG_EPARSE, "no header line (host column "
				"then switch levels, e.g. ip,DSW,PSW,ASW)");
	}
	return TG_OK;
}

/*
 * A header line: two or more comma-separated names, the first line that
 * is not blank or a '#' comment, and no JSON or ibnetdiscover look.
 */
static unsigned csv_sniff(const char *buf, size_t len)
{
	size_t pos = 0, i;

	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		pos = 3;
	while (pos < len) {
		const char *p = buf + pos, *nl = memchr(p, '\n', len - pos);
		size_t pl = nl ? (size_t)(nl - p) : len - pos;
		bool comma = false;

		pos += pl + 1;
		while (pl && tgi_fab_blank(*p)) {
			p++;
			pl--;
		}
		if (!pl || *p == '#')
			continue;
		for (i = 0; i < pl; i++) {
			if (p[i] == ',')
				comma = true;
			else if (p[i] == '{' || p[i] == '[' || p[i] == '=')
				return 0;
		}
		return comma ? 60 : 0;
	}
	return 0;
}

const tgi_fabric_fmt tgi_fab_csv = {
	.fmt = TG_FABRIC_CSV,
	.name = "csv",
	.shape = TGI_FAB_TABLE,
	.copy_text = true,
	.sniff = csv_sniff,
	.parse = csv_parse,
};
