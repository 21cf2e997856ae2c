/*
 * shared/src/core/request.c - the topology request grammar (see
 * topogang/request.h): one parser and one formatter for every host.
 *
 * Pure C with no dependency beyond core/util.c, so the SPANK plugin,
 * which carries no placement code, builds it too; tg_request_apply(),
 * which needs the gang, is in gang.c.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "internal.h"

/* What an item of each kind looks like, for messages. */
static const char *form(tg_request_kind kind)
{
	switch (kind) {
	case TG_REQUEST_GATHER:
		return "LAYER:must or LAYER:prefer";
	case TG_REQUEST_SLICE:
		return "LAYER:SIZE";
	case TG_REQUEST_SPREAD:
		return "LAYER[:SKEW][:hard|:soft]";
	}
	return "?";
}

/* An error about \p text at \p p: "'TEXT' at column C: WHY". */
static tg_err at(tg_errinfo *ei, tg_err err, const char *text, const char *p,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static tg_err at(tg_errinfo *ei, tg_err err, const char *text, const char *p,
		 const char *fmt, ...)
{
	char why[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return tgi_errf(ei, err, "'%.200s' at column %zu: %s", text,
			(size_t)(p - text) + 1, why);
}

/* ASCII, not the locale: the same text reads the same everywhere. */
static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool same_ci(const char *a, size_t n, const char *b)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!b[i] || lower(a[i]) != lower(b[i]))
			return false;
	return b[n] == '\0';
}

static bool layer_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
	       c == '/';
}

bool tg_request_layer_ok(const char *s, size_t n)
{
	size_t i;

	if (!n || n > TG_REQUEST_MAX_LAYER)
		return false;
	for (i = 0; i < n; i++)
		if (!layer_char(s[i]))
			return false;
	return true;
}

/* A field of digits only, 1 to max; 0 when it is not one. */
static unsigned number(const char *f, size_t n, unsigned max)
{
	char d[12];
	unsigned v;

	if (!n || n >= sizeof(d) || strspn(f, "0123456789") < n)
		return 0;
	memcpy(d, f, n);
	d[n] = '\0';
	if (!tg_u32_parse(d, &v) || v > max)
		return 0;
	return v;
}

static bool all_digits(const char *f, size_t n)
{
	return n && strspn(f, "0123456789") >= n;
}

/* The fields after the layer: \p rest (NULL without a ':'), \p rn bytes. */
typedef struct field_ctx {
	const char *text;	/* the whole request, for messages */
	const char *item;	/* this item */
	size_t n;		/* its length */
	tg_errinfo *ei;
} field_ctx;

static tg_err gather_fields(const field_ctx *c, const char *how, size_t hn,
			    tg_request_item *it)
{
	if (how && same_ci(how, hn, "must"))
		it->how = TG_GATHER_MUST;
	else if (how && same_ci(how, hn, "prefer"))
		it->how = TG_GATHER_PREFER;
	else
		return at(c->ei, TG_EPARSE, c->text, how ? how : c->item,
			  "'%.*s': expected %s", (int)c->n, c->item,
			  form(TG_REQUEST_GATHER));
	return TG_OK;
}

static tg_err slice_fields(const field_ctx *c, const char *sz, size_t sl,
			   tg_request_item *it)
{
	if (!sz || !all_digits(sz, sl))
		return at(c->ei, TG_EPARSE, c->text, sz ? sz : c->item,
			  "'%.*s': expected %s", (int)c->n, c->item,
			  form(TG_REQUEST_SLICE));
	it->size = number(sz, sl, TG_REQUEST_MAX_SLICE);
	if (!it->size)
		return at(c->ei, TG_ELIMIT, c->text, sz,
			  "'%.*s': size must be 1 to %u "
			  "(TG_REQUEST_MAX_SLICE)", (int)c->n, c->item,
			  TG_REQUEST_MAX_SLICE);
	return TG_OK;
}

/* SKEW, hard or soft, in any order. */
static tg_err spread_fields(const field_ctx *c, const char *rest, size_t rn,
			    tg_request_item *it)
{
	const char *f = rest, *stop = rest + rn;

	it->skew = 1;
	it->hard = false;
	while (f) {
		const char *fe = memchr(f, ':', (size_t)(stop - f));
		size_t fl = fe ? (size_t)(fe - f) : (size_t)(stop - f);

		if (same_ci(f, fl, "hard")) {
			it->hard = true;
		} else if (same_ci(f, fl, "soft")) {
			it->hard = false;
		} else if (all_digits(f, fl)) {
			it->skew = number(f, fl, TG_REQUEST_MAX_SKEW);
			if (!it->skew)
				return at(c->ei, TG_ELIMIT, c->text, f,
					  "'%.*s': skew must be 1 to %u "
					  "(TG_REQUEST_MAX_SKEW)", (int)c->n,
					  c->item, TG_REQUEST_MAX_SKEW);
		} else {
			return at(c->ei, TG_EPARSE, c->text, f,
				  "'%.*s': expected %s", (int)c->n, c->item,
				  form(TG_REQUEST_SPREAD));
		}
		f = fe ? fe + 1 : NULL;
	}
	return TG_OK;
}

static tg_err fields(tg_request_kind kind, const field_ctx *c,
		     const char *rest, size_t rn, tg_request_item *it)
{
	switch (kind) {
	case TG_REQUEST_GATHER:
		return gather_fields(c, rest, rn, it);
	case TG_REQUEST_SLICE:
		return slice_fields(c, rest, rn, it);
	case TG_REQUEST_SPREAD:
		return spread_fields(c, rest, rn, it);
	}
	return TG_EINVAL;
}

/* One comma-separated item at \p p, \p n bytes: "LAYER[:REST]". */
static tg_err parse_item(tg_request *r, const char *text, const char *p,
			 size_t n, tg_errinfo *ei)
{
	const char *c = memchr(p, ':', n);
	size_t ln = c ? (size_t)(c - p) : n, i;
	tg_request_item *it = &r->item[r->n];
	field_ctx fc = { text, p, n, ei };
	tg_err err;

	if (ln > TG_REQUEST_MAX_LAYER)
		return at(ei, TG_ELIMIT, text, p, "layer name longer than %d "
			  "bytes (TG_REQUEST_MAX_LAYER)",
			  TG_REQUEST_MAX_LAYER);
	if (!tg_request_layer_ok(p, ln))
		return at(ei, TG_EPARSE, text, p, "'%.*s': bad layer name",
			  (int)n, p);
	if (r->n >= TG_REQUEST_MAX_ITEMS)
		return at(ei, TG_ELIMIT, text, p, "more than %d layers "
			  "(TG_REQUEST_MAX_ITEMS)", TG_REQUEST_MAX_ITEMS);
	memset(it, 0, sizeof(*it));
	memcpy(it->layer, p, ln);
	err = fields(r->kind, &fc, c ? c + 1 : NULL,
		     c ? (size_t)(p + n - c - 1) : 0, it);
	if (err)
		return err;
	for (i = 0; i < r->n; i++)
		if (same_ci(it->layer, ln, r->item[i].layer))
			return at(ei, TG_EPARSE, text, p, "layer '%s' given "
				  "twice", it->layer);
	r->n++;
	return TG_OK;
}

void tg_request_init(tg_request *r, tg_request_kind kind)
{
	if (!r)
		return;
	r->kind = kind;
	r->none = false;
	r->n = 0;
}

static tg_err parse_items(tg_request *r, const char *text, tg_errinfo *ei)
{
	const char *p = text;
	tg_err err;

	if (!*text)
		return tgi_errf(ei, TG_EPARSE, "empty request: expected %s",
				form(r->kind));
	for (;;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		err = parse_item(r, text, p, n, ei);
		if (err)
			return err;
		if (!end)
			return TG_OK;
		p = end + 1;
		if (!*p)
			return at(ei, TG_EPARSE, text, end, "trailing comma");
	}
}

tg_err tg_request_parse(tg_request *r, tg_request_kind kind,
			const char *text, tg_errinfo *ei)
{
	tg_err err;

	if (!r)
		return tgi_errf(ei, TG_EINVAL, "no request to fill");
	tg_request_init(r, kind);
	if (kind < TG_REQUEST_GATHER || kind > TG_REQUEST_SPREAD)
		return tgi_errf(ei, TG_EINVAL, "unknown request kind %d",
				(int)kind);
	if (!text)
		return tgi_errf(ei, TG_EINVAL, "no request text");
	if (kind == TG_REQUEST_GATHER && same_ci(text, strlen(text), "none")) {
		r->none = true;
		return TG_OK;
	}
	err = parse_items(r, text, ei);
	if (err)
		tg_request_init(r, kind);
	return err;
}

tg_err tg_request_add(tg_request *r, const tg_request_item *it,
		      tg_errinfo *ei)
{
	const char *z;
	size_t ln;
	bool bad;

	if (!r || !it)
		return tgi_errf(ei, TG_EINVAL, "no request or item");
	z = memchr(it->layer, '\0', sizeof(it->layer));
	ln = z ? (size_t)(z - it->layer) : sizeof(it->layer);
	if (!tg_request_layer_ok(it->layer, ln))
		return tgi_errf(ei, TG_EINVAL, "'%.*s': bad layer name",
				(int)TG_MIN(ln, 200), it->layer);
	switch (r->kind) {
	case TG_REQUEST_GATHER:
		bad = it->how != TG_GATHER_MUST && it->how != TG_GATHER_PREFER;
		break;
	case TG_REQUEST_SLICE:
		bad = !it->size || it->size > TG_REQUEST_MAX_SLICE;
		break;
	case TG_REQUEST_SPREAD:
		bad = !it->skew || it->skew > TG_REQUEST_MAX_SKEW;
		break;
	default:
		bad = true;
	}
	if (bad)
		return tgi_errf(ei, TG_EINVAL, "%s: a value the request "
				"grammar (%s) cannot write", it->layer,
				form(r->kind));
	if (r->n >= TG_REQUEST_MAX_ITEMS)
		return tgi_errf(ei, TG_ELIMIT, "%s: more than %d layers "
				"(TG_REQUEST_MAX_ITEMS)", it->layer,
				TG_REQUEST_MAX_ITEMS);
	r->item[r->n++] = *it;
	r->none = false;
	return TG_OK;
}

/* One item's text (no separator); snprintf's result. */
static int format_item(const tg_request *r, const tg_request_item *it,
		       char *buf, size_t len)
{
	switch (r->kind) {
	case TG_REQUEST_GATHER:
		return snprintf(buf, len, "%s:%s", it->layer,
				it->how == TG_GATHER_MUST ? "must" : "prefer");
	case TG_REQUEST_SLICE:
		return snprintf(buf, len, "%s:%u", it->layer, it->size);
	case TG_REQUEST_SPREAD:
		return snprintf(buf, len, "%s:%u:%s", it->layer, it->skew,
				it->hard ? "hard" : "soft");
	}
	return -1;
}

tg_err tg_request_format(const tg_request *r, char *buf, size_t len)
{
	size_t off = 0;
	unsigned i;

	if (!buf || !len)
		return TG_ELIMIT;
	buf[0] = '\0';
	if (!r)
		return TG_EINVAL;
	if (r->kind == TG_REQUEST_GATHER && (r->none || !r->n)) {
		if (len < 5)
			return TG_ELIMIT;
		memcpy(buf, "none", 5);
		return TG_OK;
	}
	for (i = 0; i < r->n; i++) {
		int w;

		if (i) {
			if (off + 1 >= len)
				goto full;
			buf[off++] = ',';
		}
		w = format_item(r, &r->item[i], buf + off, len - off);
		if (w < 0)
			goto full;
		if ((size_t)w >= len - off)
			goto full;
		off += (size_t)w;
	}
	buf[off] = '\0';
	return TG_OK;
full:
	buf[0] = '\0';
	return TG_ELIMIT;
}
