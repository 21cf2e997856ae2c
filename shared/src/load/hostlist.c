/*
 * shared/src/load/hostlist.c - Slurm hostlist expressions.
 *
 * Expands "node[001-012,20],gpu-[1-2]x,r[1-2]n[1-3]" into names and
 * compresses names back.  The syntax is Slurm's: elements are separated by
 * commas (or white space) outside brackets; a bracket holds a comma list
 * of numbers and "lo-hi" ranges; the width of a range is the number of
 * digits of its lower bound ("001-012" pads to 3, "8-10" does not pad);
 * several brackets in one element are a cartesian product, the first one
 * varying slowest; text after a bracket is a suffix.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define HL_MAX_DIGITS	18	/* digits of one range bound (fits uint64) */
#define HL_SHOW		120	/* bytes of the expression quoted in errors */

typedef struct hl_range {
	uint64_t lo, hi;
	unsigned width;
} hl_range;

/* One bracket of an element, with the literal text in front of it. */
typedef struct hl_group {
	const char *lit;
	size_t litlen;
	size_t r0, nr;		/* its ranges: ranges[r0 .. r0 + nr) */
	size_t cur;		/* odometer: current range and value */
	uint64_t val;
} hl_group;

typedef struct hl_state {
	const char *expr;
	tg_errinfo *ei;
	hl_range *ranges;
	size_t nranges, rcap;
	hl_group *groups;
	size_t ngroups, gcap;
	char **names;
	size_t n, cap;
} hl_state;

static tg_err hl_fail(hl_state *st, tg_err err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static tg_err hl_fail(hl_state *st, tg_err err, const char *fmt, ...)
{
	char why[256];
	size_t len = strlen(st->expr);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return tgi_errf(st->ei, err, "bad hostlist '%.*s%s': %s",
			(int)TG_MIN(len, (size_t)HL_SHOW), st->expr,
			len > HL_SHOW ? "..." : "", why);
}

static bool is_sep(char c)
{
	return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Parses a run of 1..HL_MAX_DIGITS digits filling [s, e) exactly. */
static bool hl_number(const char *s, const char *e, uint64_t *v)
{
	uint64_t x = 0;

	if (s == e || e - s > HL_MAX_DIGITS)
		return false;
	for (; s < e; s++) {
		if (!is_digit(*s))
			return false;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*v = x;
	return true;
}

/* Parses the inside of one bracket, [s, e), into st->ranges. */
static tg_err hl_parse_ranges(hl_state *st, const char *s, const char *e,
			      hl_group *g)
{
	const char *p = s;

	g->r0 = st->nranges;
	g->nr = 0;
	for (;;) {
		const char *ie = p, *dash = NULL;
		hl_range r;

		while (ie < e && *ie != ',') {
			if (*ie == '-' && !dash)
				dash = ie;
			ie++;
		}
		if (ie == p)
			return hl_fail(st, TG_EPARSE, "empty range in '[%.*s]'",
				       (int)TG_MIN(e - s, 64), s);
		if (!dash)
			dash = ie;
		if ((dash - p) > HL_MAX_DIGITS ||
		    (dash < ie && (ie - dash - 1) > HL_MAX_DIGITS))
			return hl_fail(st, TG_ELIMIT,
				       "number longer than %d digits",
				       HL_MAX_DIGITS);
		if (!hl_number(p, dash, &r.lo) ||
		    (dash < ie && !hl_number(dash + 1, ie, &r.hi)))
			return hl_fail(st, TG_EPARSE, "bad range '%.*s'",
				       (int)TG_MIN(ie - p, 64), p);
		if (dash == ie)
			r.hi = r.lo;
		if (r.hi < r.lo)
			return hl_fail(st, TG_EPARSE,
				       "range end before start");
		r.width = (unsigned)(dash - p);
		if (tgi_grow(&st->ranges, &st->rcap, st->nranges + 1,
			     sizeof(*st->ranges)))
			return hl_fail(st, TG_ENOMEM, "out of memory");
		st->ranges[st->nranges++] = r;
		g->nr++;
		if (ie == e)
			break;
		p = ie + 1;
	}
	return TG_OK;
}

/* Writes \p v zero-padded to \p width digits at \p out; returns length. */
static size_t hl_format(char *out, uint64_t v, unsigned width)
{
	char tmp[24];
	size_t n = 0, i = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n + i < width)
		out[i++] = '0';
	while (n)
		out[i++] = tmp[--n];
	return i;
}

static size_t hl_ndigits(uint64_t v, unsigned width)
{
	size_t n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return TG_MAX(n, (size_t)width);
}

static tg_err hl_push(hl_state *st, const char *name, size_t len)
{
	char *d;

	if (st->n >= TG_MAX_HOSTLIST)
		return hl_fail(st, TG_ELIMIT, "more than %u names",
			       TG_MAX_HOSTLIST);
	if (tgi_grow(&st->names, &st->cap, st->n + 1, sizeof(*st->names)))
		return hl_fail(st, TG_ENOMEM, "out of memory");
	d = tgi_strndup(name, len);
	if (!d)
		return hl_fail(st, TG_ENOMEM, "out of memory");
	st->names[st->n++] = d;
	return TG_OK;
}

/* Expands one element, [s, e), appending its names. */
static tg_err hl_element(hl_state *st, const char *s, const char *e)
{
	char name[TG_MAX_NAME + 1];
	const char *p, *lit = s, *open = NULL;
	uint64_t count = 1;
	size_t i;
	tg_err err;

	st->ngroups = 0;
	st->nranges = 0;
	for (p = s; p < e; p++) {
		if (*p == '[') {
			if (open)
				return hl_fail(st, TG_EPARSE, "nested '['");
			open = p;
		} else if (*p == ']') {
			hl_group *g;

			if (!open)
				return hl_fail(st, TG_EPARSE,
					       "']' without '['");
			if (tgi_grow(&st->groups, &st->gcap, st->ngroups + 1,
				     sizeof(*st->groups)))
				return hl_fail(st, TG_ENOMEM,
					       "out of memory");
			g = &st->groups[st->ngroups++];
			g->lit = lit;
			g->litlen = (size_t)(open - lit);
			err = hl_parse_ranges(st, open + 1, p, g);
			if (err)
				return err;
			lit = p + 1;
			open = NULL;
		}
	}
	if (open)
		return hl_fail(st, TG_EPARSE, "'[' without ']'");

	/* Count first, so that a huge product fails before any work. */
	for (i = 0; i < st->ngroups; i++) {
		hl_group *g = &st->groups[i];
		uint64_t gc = 0;
		size_t r;

		for (r = g->r0; r < g->r0 + g->nr; r++) {
			gc += st->ranges[r].hi - st->ranges[r].lo + 1;
			if (gc > TG_MAX_HOSTLIST)
				break;
		}
		count *= gc;
		if (gc > TG_MAX_HOSTLIST || count > TG_MAX_HOSTLIST ||
		    st->n + count > TG_MAX_HOSTLIST)
			return hl_fail(st, TG_ELIMIT, "more than %u names",
				       TG_MAX_HOSTLIST);
		g->cur = g->r0;
		g->val = st->ranges[g->r0].lo;
	}

	for (;;) {
		size_t len = 0, need;

		for (i = 0; i < st->ngroups; i++) {
			hl_group *g = &st->groups[i];
			unsigned w = st->ranges[g->cur].width;

			need = g->litlen + hl_ndigits(g->val, w);
			if (need > TG_MAX_NAME - len)
				goto too_long;
			memcpy(name + len, g->lit, g->litlen);
			len += g->litlen;
			len += hl_format(name + len, g->val, w);
		}
		need = (size_t)(e - lit);
		if (need > TG_MAX_NAME - len)
			goto too_long;
		memcpy(name + len, lit, need);
		len += need;
		err = hl_push(st, name, len);
		if (err)
			return err;

		/* Next combination: the last bracket varies fastest. */
		for (i = st->ngroups; i > 0; i--) {
			hl_group *g = &st->groups[i - 1];

			if (g->val < st->ranges[g->cur].hi) {
				g->val++;
				break;
			}
			if (++g->cur < g->r0 + g->nr) {
				g->val = st->ranges[g->cur].lo;
				break;
			}
			g->cur = g->r0;
			g->val = st->ranges[g->cur].lo;
		}
		if (i == 0)
			return TG_OK;
	}

too_long:
	return hl_fail(st, TG_ELIMIT, "a name is longer than %d bytes",
		       TG_MAX_NAME);
}

void tg_hostlist_free(char **names, unsigned n)
{
	unsigned i;

	if (!names)
		return;
	for (i = 0; i < n; i++)
		tgi_free(names[i]);
	tgi_free(names);
}

tg_err tg_hostlist_expand(const char *expr, char ***names, unsigned *n,
			  tg_errinfo *ei)
{
	hl_state st;
	const char *p, *s;
	tg_err err = TG_OK;

	if (!names || !n)
		return tgi_errf(ei, TG_EINVAL, "tg_hostlist_expand: NULL");
	*names = NULL;
	*n = 0;
	if (!expr)
		return tgi_errf(ei, TG_EINVAL, "tg_hostlist_expand: NULL");
	memset(&st, 0, sizeof(st));
	st.expr = expr;
	st.ei = ei;

	p = expr;
	for (;;) {
		bool in = false;

		while (*p && is_sep(*p))
			p++;
		if (!*p)
			break;
		/* An element ends at a separator outside brackets. */
		for (s = p; *p && (in || !is_sep(*p)); p++) {
			if (*p == '[')
				in = true;
			else if (*p == ']')
				in = false;
		}
		err = hl_element(&st, s, p);
		if (err)
			goto fail;
	}
	tgi_free(st.ranges);
	tgi_free(st.groups);
	*names = st.names;
	*n = (unsigned)st.n;
	return TG_OK;

fail:
	tg_hostlist_free(st.names, (unsigned)st.n);
	tgi_free(st.groups);
	tgi_free(st.ranges);
	return err;
}

/*
 * Compression.  A name splits at its last digit run into prefix, number
 * and suffix; consecutive names (in the order given) with the same prefix
 * and suffix share one bracket, and inside it consecutive values that the
 * lower bound's width prints exactly become "lo-hi".  Names without
 * digits are copied as they are.  expand(compress(x)) == x.
 */
typedef struct hl_split {
	size_t plen;		/* prefix length; SIZE_MAX = no number */
	size_t dlen;		/* digits */
	uint64_t val;
} hl_split;

static hl_split hl_split_name(const char *s)
{
	hl_split sp = { SIZE_MAX, 0, 0 };
	size_t len = strlen(s), e = len, b;

	while (e > 0 && !is_digit(s[e - 1]))
		e--;
	if (e == 0)
		return sp;
	b = e;
	while (b > 0 && is_digit(s[b - 1]))
		b--;
	if (!hl_number(s + b, s + e, &sp.val))
		return sp;
	sp.plen = b;
	sp.dlen = e - b;
	return sp;
}

static bool hl_same_frame(const char *a, hl_split sa, const char *b,
			  hl_split sb)
{
	if (sa.plen == SIZE_MAX || sb.plen == SIZE_MAX || sa.plen != sb.plen)
		return false;
	if (memcmp(a, b, sa.plen) != 0)
		return false;
	return strcmp(a + sa.plen + sa.dlen, b + sb.plen + sb.dlen) == 0;
}

char *tg_hostlist_compress(const char *const *names, unsigned n)
{
	tg_buf b;
	unsigned i = 0, j, k;

	if (!names && n)
		return NULL;
	tg_buf_init(&b, TG_MAX_FILE);
	while (i < n) {
		hl_split si;

		if (!names[i]) {
			tg_buf_free(&b);
			return NULL;
		}
		si = hl_split_name(names[i]);
		j = i + 1;
		while (j < n && names[j] &&
		       hl_same_frame(names[i], si, names[j],
				     hl_split_name(names[j])))
			j++;
		if (i)
			tg_buf_add(&b, ",", 1);
		if (j == i + 1) {
			tg_buf_adds(&b, names[i]);
			i = j;
			continue;
		}
		tg_buf_add(&b, names[i], si.plen);
		tg_buf_add(&b, "[", 1);
		for (k = i; k < j;) {
			hl_split sk = hl_split_name(names[k]);
			unsigned width = (unsigned)sk.dlen, m = k + 1;
			hl_split sm = sk;

			/* Extend while the next value prints the same. */
			while (m < j) {
				hl_split sn = hl_split_name(names[m]);
				char d[24];
				size_t dl;

				if (sn.val != sm.val + 1)
					break;
				dl = hl_format(d, sn.val, width);
				if (dl != sn.dlen ||
				    memcmp(d, names[m] + sn.plen, dl))
					break;
				sm = sn;
				m++;
			}
			if (k > i)
				tg_buf_add(&b, ",", 1);
			tg_buf_add(&b, names[k] + sk.plen, sk.dlen);
			if (m > k + 1) {
				tg_buf_add(&b, "-", 1);
				tg_buf_add(&b, names[m - 1] + sm.plen,
					    sm.dlen);
			}
			k = m;
		}
		tg_buf_add(&b, "]", 1);
		tg_buf_adds(&b, names[i] + si.plen + si.dlen);
		i = j;
	}
	return tg_buf_take(&b);
}
