/*
 * shared/src/core/util.c - allocation hook, error text, buffers, interning,
 * natural name order.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void *(*tg_malloc_fn)(size_t) = malloc;
static void *(*tg_realloc_fn)(void *, size_t) = realloc;
static void (*tg_free_fn)(void *) = free;

void tg_set_allocator(void *(*m)(size_t), void *(*r)(void *, size_t),
		      void (*f)(void *))
{
	tg_malloc_fn = m ? m : malloc;
	tg_realloc_fn = r ? r : realloc;
	tg_free_fn = f ? f : free;
}

void *tgi_malloc(size_t n)
{
	return tg_malloc_fn(n ? n : 1);
}

void *tgi_calloc(size_t n, size_t size)
{
	void *p;

	if (size && n > SIZE_MAX / size)
		return NULL;
	{
		size_t bytes = n * size;

		p = tgi_malloc(bytes);
		if (p)
			memset(p, 0, bytes ? bytes : 1);
	}
	return p;
}

void *tgi_realloc(void *p, size_t n)
{
	return tg_realloc_fn(p, n ? n : 1);
}

void tgi_free(void *p)
{
	if (p)
		tg_free_fn(p);
}

void tg_free(void *p)
{
	tgi_free(p);
}

tg_err tgi_grow(void *pp, size_t *cap, size_t need, size_t size)
{
	void **p = pp;
	size_t ncap;
	void *np;

	if (need <= *cap)
		return TG_OK;
	ncap = *cap ? *cap : 8;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return TG_ENOMEM;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / size)
		return TG_ENOMEM;
	np = tgi_realloc(*p, ncap * size);
	if (!np)
		return TG_ENOMEM;
	*p = np;
	*cap = ncap;
	return TG_OK;
}

char *tgi_strndup(const char *s, size_t n)
{
	char *d = tgi_malloc(n + 1);

	if (!d)
		return NULL;
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

char *tgi_strdup(const char *s)
{
	return tgi_strndup(s, strlen(s));
}

const char *tg_strerror(tg_err err)
{
	switch (err) {
	case TG_OK:
		return "success";
	case TG_ENOMEM:
		return "out of memory";
	case TG_EINVAL:
		return "invalid argument or value";
	case TG_EPARSE:
		return "malformed input";
	case TG_ELIMIT:
		return "limit exceeded";
	case TG_ENOENT:
		return "no such object";
	case TG_EEXIST:
		return "already exists";
	case TG_ESTATE:
		return "not allowed in this state";
	case TG_EIO:
		return "input/output error";
	}
	return "unknown error";
}

tg_err tgi_errf(tg_errinfo *ei, tg_err err, const char *fmt, ...)
{
	va_list ap;

	if (ei) {
		int n;

		va_start(ap, fmt);
		n = vsnprintf(ei->msg, sizeof(ei->msg), fmt, ap);
		va_end(ap);
		if (n >= (int)sizeof(ei->msg))	/* cut: say so */
			memcpy(ei->msg + sizeof(ei->msg) - 4, "...", 4);
	}
	return err;
}

tg_err tgi_verrf_at(tg_errinfo *ei, tg_err err, const char *source,
		    unsigned line, const char *fmt, va_list ap)
{
	char why[400];

	vsnprintf(why, sizeof(why), fmt, ap);
	return tgi_errf(ei, err, "%s:%u: %s", source, line, why);
}

tg_err tg_buf_add_json(tg_buf *b, const char *s)
{
	tg_buf_add(b, "\"", 1);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\') {
			tg_buf_add(b, "\\", 1);
			tg_buf_add(b, s, 1);
		} else if (ch == '\n') {
			tg_buf_add(b, "\\n", 2);
		} else if (ch == '\r') {
			tg_buf_add(b, "\\r", 2);
		} else if (ch == '\t') {
			tg_buf_add(b, "\\t", 2);
		} else if (ch < 0x20) {
			tg_buf_addf(b, "\\u%04x", ch);
		} else {
			tg_buf_add(b, s, 1);
		}
	}
	return tg_buf_add(b, "\"", 1);
}

void tg_buf_init(tg_buf *b, size_t max)
{
	memset(b, 0, sizeof(*b));
	b->max = max;
}

tg_err tg_buf_add(tg_buf *b, const void *p, size_t n)
{
	if (b->err)
		return b->err;
	if (n > b->max || b->len > b->max - n)
		return b->err = TG_ELIMIT;
	if (tgi_grow(&b->s, &b->cap, b->len + n + 1, 1))
		return b->err = TG_ENOMEM;
	if (n)
		memcpy(b->s + b->len, p, n);
	b->len += n;
	b->s[b->len] = '\0';
	return TG_OK;
}

tg_err tg_buf_adds(tg_buf *b, const char *s)
{
	return tg_buf_add(b, s, strlen(s));
}

tg_err tg_buf_addf(tg_buf *b, const char *fmt, ...)
{
	char small[256];
	va_list ap;
	int n;
	char *big;
	tg_err err;

	if (b->err)
		return b->err;
	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return b->err = TG_EINVAL;
	if ((size_t)n < sizeof(small))
		return tg_buf_add(b, small, (size_t)n);
	big = tgi_malloc((size_t)n + 1);
	if (!big)
		return b->err = TG_ENOMEM;
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	err = tg_buf_add(b, big, (size_t)n);
	tgi_free(big);
	return err;
}

void tg_buf_consume(tg_buf *b, size_t n)
{
	if (n >= b->len) {
		b->len = 0;
	} else {
		memmove(b->s, b->s + n, b->len - n);
		b->len -= n;
	}
	if (b->s)
		b->s[b->len] = '\0';
}

void tg_buf_reset(tg_buf *b)
{
	b->len = 0;
	b->err = TG_OK;
	if (b->s)
		b->s[0] = '\0';
}

char *tg_buf_take(tg_buf *b)
{
	char *s;

	if (b->err) {
		tg_buf_free(b);
		return NULL;
	}
	if (!b->s) {
		b->s = tgi_strdup("");
		if (!b->s)
			return NULL;
	}
	s = b->s;
	b->s = NULL;
	b->len = b->cap = 0;
	return s;
}

char *tg_buf_take_cut(tg_buf *b)
{
	char note[64];
	size_t max = b->max;

	if (b->err == TG_ELIMIT) {
		snprintf(note, sizeof(note), " [message cut at %zu bytes]",
			 max);
		b->err = TG_OK;
		b->max = max + sizeof(note);
		tg_buf_adds(b, note);
		b->max = max;
	}
	return tg_buf_take(b);
}

void tg_buf_free(tg_buf *b)
{
	if (!b)
		return;
	tgi_free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
	b->err = TG_OK;
}

uint64_t tgi_hash_mix(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= s[i];
		h *= 1099511628211ull;
	}
	return h;
}

uint64_t tgi_hash(const char *s, size_t n)
{
	return tgi_hash_mix(TGI_HASH_SEED, s, n);
}

void tgi_strtab_init(tgi_strtab *st)
{
	memset(st, 0, sizeof(*st));
}

void tgi_strtab_free(tgi_strtab *st)
{
	size_t i;

	for (i = st->narena ? st->narena : 1; i < st->n; i++)
		tgi_free(st->strs[i]);
	tgi_free(st->arena);
	tgi_free(st->strs);
	tgi_free(st->slots);
	memset(st, 0, sizeof(*st));
}

tg_err tgi_strtab_clone(tgi_strtab *dst, const tgi_strtab *src)
{
	size_t i, len = 0, off = 0;

	tgi_strtab_init(dst);
	if (!src->n)
		return TG_OK;
	for (i = 1; i < src->n; i++)
		len += strlen(src->strs[i]) + 1;
	dst->strs = tgi_malloc(src->cap * sizeof(char *));
	dst->slots = tgi_malloc((src->nslots ? src->nslots : 1) *
				sizeof(uint32_t));
	dst->arena = tgi_malloc(len ? len : 1);
	if (!dst->strs || !dst->slots || !dst->arena) {
		tgi_free(dst->strs);
		tgi_free(dst->slots);
		tgi_free(dst->arena);
		tgi_strtab_init(dst);
		return TG_ENOMEM;
	}
	dst->strs[0] = NULL;
	for (i = 1; i < src->n; i++) {
		size_t l = strlen(src->strs[i]) + 1;

		memcpy(dst->arena + off, src->strs[i], l);
		dst->strs[i] = dst->arena + off;
		off += l;
	}
	if (src->nslots)
		memcpy(dst->slots, src->slots, src->nslots * sizeof(uint32_t));
	dst->n = dst->narena = src->n;
	dst->cap = src->cap;
	dst->nslots = src->nslots;
	return TG_OK;
}

static tg_err strtab_rehash(tgi_strtab *st, size_t nslots)
{
	uint32_t *slots = tgi_calloc(nslots, sizeof(*slots));
	size_t i, j;

	if (!slots)
		return TG_ENOMEM;
	for (i = 1; i < st->n; i++) {
		j = tgi_hash(st->strs[i], strlen(st->strs[i])) & (nslots - 1);
		while (slots[j])
			j = (j + 1) & (nslots - 1);
		slots[j] = (uint32_t)i;
	}
	tgi_free(st->slots);
	st->slots = slots;
	st->nslots = nslots;
	return TG_OK;
}

tg_err tgi_strtab_reserve(tgi_strtab *st, size_t n)
{
	size_t ns = st->nslots ? st->nslots : 64;

	if (n >= UINT32_MAX - 1)
		return TG_ELIMIT;
	while ((n + 1) * 3 > ns * 2)
		ns *= 2;
	if (ns > st->nslots && strtab_rehash(st, ns))
		return TG_ENOMEM;
	if (n + 1 > st->cap) {
		char **s = tgi_realloc(st->strs, (n + 1) * sizeof(char *));

		if (!s)
			return TG_ENOMEM;
		st->strs = s;
		st->cap = n + 1;
	}
	return TG_OK;
}

uint32_t tgi_strtab_find(const tgi_strtab *st, const char *s)
{
	size_t j;

	if (!s || !*s || !st->nslots)
		return 0;
	j = tgi_hash(s, strlen(s)) & (st->nslots - 1);
	while (st->slots[j]) {
		if (strcmp(st->strs[st->slots[j]], s) == 0)
			return st->slots[j];
		j = (j + 1) & (st->nslots - 1);
	}
	return 0;
}

tg_err tgi_strtab_intern(tgi_strtab *st, const char *s, uint32_t *id)
{
	uint32_t found;
	char *d;

	if (!s || !*s) {
		*id = 0;
		return TG_OK;
	}
	found = tgi_strtab_find(st, s);
	if (found) {
		*id = found;
		return TG_OK;
	}
	if (st->n == 0) {
		if (tgi_grow(&st->strs, &st->cap, 1, sizeof(char *)))
			return TG_ENOMEM;
		st->strs[0] = NULL;
		st->n = 1;
	}
	if (st->n >= UINT32_MAX - 1)
		return TG_ELIMIT;
	/* slots at most 2/3 full; the id array grows by half: a big
	 * cluster's node and pod names are most of the table */
	if ((st->n + 1) * 3 > st->nslots * 2 &&
	    strtab_rehash(st, st->nslots ? st->nslots * 2 : 64))
		return TG_ENOMEM;
	if (st->n + 1 > st->cap) {
		size_t ncap = st->cap < 64 ? 64 : st->cap + st->cap / 2;
		char **ns = tgi_realloc(st->strs, ncap * sizeof(char *));

		if (!ns)
			return TG_ENOMEM;
		st->strs = ns;
		st->cap = ncap;
	}
	d = tgi_strdup(s);
	if (!d)
		return TG_ENOMEM;
	st->strs[st->n] = d;
	{
		size_t j = tgi_hash(d, strlen(d)) & (st->nslots - 1);

		while (st->slots[j])
			j = (j + 1) & (st->nslots - 1);
		st->slots[j] = (uint32_t)st->n;
	}
	*id = (uint32_t)st->n++;
	return TG_OK;
}

/*
 * Natural order: runs of digits compare by value (leading zeros ignored,
 * then fewer leading zeros first), everything else bytewise.  A total
 * order: equal only when the strings are equal.
 */
int tg_name_cmp(const char *a, const char *b)
{
	const unsigned char *p = (const unsigned char *)a;
	const unsigned char *q = (const unsigned char *)b;
	int zdiff = 0;

	while (*p && *q) {
		if (isdigit(*p) && isdigit(*q)) {
			const unsigned char *ps, *qs;
			size_t lp, lq, zp = 0, zq = 0;

			while (p[zp] == '0' && isdigit(p[zp + 1]))
				zp++;
			while (q[zq] == '0' && isdigit(q[zq + 1]))
				zq++;
			ps = p + zp;
			qs = q + zq;
			for (lp = 0; isdigit(ps[lp]); lp++)
				;
			for (lq = 0; isdigit(qs[lq]); lq++)
				;
			if (lp != lq)
				return lp < lq ? -1 : 1;
			{
				int c = memcmp(ps, qs, lp);

				if (c)
					return c < 0 ? -1 : 1;
			}
			if (!zdiff && zp != zq)
				zdiff = zp < zq ? -1 : 1;
			p = ps + lp;
			q = qs + lq;
			continue;
		}
		if (*p != *q)
			return *p < *q ? -1 : 1;
		p++;
		q++;
	}
	if (*p || *q)
		return *p ? 1 : -1;
	return zdiff;
}

bool tg_i64_parse(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (!s || !*s || isspace((unsigned char)*s))
		return false;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

bool tg_u32_parse(const char *s, unsigned *out)
{
	int64_t v;

	if (!tg_i64_parse(s, &v) || v < 0 || v > UINT_MAX)
		return false;
	*out = (unsigned)v;
	return true;
}

bool tg_u64_parse(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

bool tg_f64_parse(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	if (!s || !*s || isspace((unsigned char)*s))
		return false;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

tg_err tg_file_read(const char *path, size_t max, char **buf, size_t *len,
		    tg_errinfo *ei)
{
	FILE *f;
	tg_buf b;
	char chunk[65536];
	size_t n;

	*buf = NULL;
	f = fopen(path, "rb");
	if (!f) {
		int e = errno;

		tgi_errf(ei, TG_EIO, "%s: %s", path, strerror(e));
		errno = e;	/* the caller may tell ENOENT apart */
		return TG_EIO;
	}
	tg_buf_init(&b, max);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (tg_buf_add(&b, chunk, n)) {
			tg_err err = b.err;

			fclose(f);
			tg_buf_free(&b);
			if (err == TG_ELIMIT)
				return tgi_errf(ei, err,
						"%s: larger than %zu bytes",
						path, max);
			return tgi_errf(ei, err, "%s: out of memory", path);
		}
	}
	if (ferror(f)) {
		fclose(f);
		tg_buf_free(&b);
		return tgi_errf(ei, TG_EIO, "%s: read error", path);
	}
	fclose(f);
	if (len)
		*len = b.len;
	*buf = tg_buf_take(&b);
	if (!*buf)
		return tgi_errf(ei, TG_ENOMEM, "%s: out of memory", path);
	return TG_OK;
}

/* ---- a stable sort with a context ---- */

/*
 * tgi_sort() is a bottom-up merge sort: insertion sort of blocks of
 * SORT_BLOCK elements, then blocks merged pairwise, doubling.  A merge
 * whose shorter run fits SORT_BUF bytes (on the stack) copies that run
 * out and merges back in one pass; a longer one is split by SymMerge
 * (Kim and Kutzner, "Stable Minimum Storage Merging by Symmetric
 * Comparisons", 2004: one rotation, two smaller merges) until its pieces
 * fit (Go's sort.Stable is the same without the buffer).  No heap
 * buffer, so nothing to allocate and nothing to fail; O(n log n)
 * comparisons.  qsort_r() is not used: its argument order differs
 * between glibc and the BSDs, musl lacked it, and it is not stable.
 */
#define SORT_BLOCK	20
#define SORT_BUF	4096

typedef struct sorter {
	char *base;
	size_t size;
	tgi_cmp_fn cmp;
	void *ctx;
	char *buf;		/* SORT_BUF bytes */
} sorter;

static inline char *sort_at(const sorter *s, size_t i)
{
	return s->base + i * s->size;
}

static inline bool sort_less(const sorter *s, size_t i, size_t j)
{
	return s->cmp(sort_at(s, i), sort_at(s, j), s->ctx) < 0;
}

static inline void sort_swap(const sorter *s, size_t i, size_t j)
{
	char *a = sort_at(s, i), *b = sort_at(s, j);
	size_t k;

	if (s->size == sizeof(uint32_t)) {
		uint32_t x;

		memcpy(&x, a, sizeof(x));
		memcpy(a, b, sizeof(x));
		memcpy(b, &x, sizeof(x));
		return;
	}
	if (s->size == sizeof(uint64_t)) {
		uint64_t x;

		memcpy(&x, a, sizeof(x));
		memcpy(a, b, sizeof(x));
		memcpy(b, &x, sizeof(x));
		return;
	}
	for (k = 0; k < s->size; k++) {
		char c = a[k];

		a[k] = b[k];
		b[k] = c;
	}
}

/* Insertion sort of [a, b): each element held in the buffer while the
 * greater ones before it shift up by one (one memmove). */
static void sort_insertion(const sorter *s, size_t a, size_t b)
{
	const size_t z = s->size;
	size_t i, j;

	if (z > SORT_BUF) {
		for (i = a + 1; i < b; i++)
			for (j = i; j > a && sort_less(s, j, j - 1); j--)
				sort_swap(s, j, j - 1);
		return;
	}
	for (i = a + 1; i < b; i++) {
		if (!sort_less(s, i, i - 1))
			continue;
		memcpy(s->buf, sort_at(s, i), z);
		for (j = i - 1; j > a &&
		     s->cmp(s->buf, sort_at(s, j - 1), s->ctx) < 0; j--)
			;
		memmove(sort_at(s, j + 1), sort_at(s, j), (i - j) * z);
		memcpy(sort_at(s, j), s->buf, z);
	}
}

/* Swaps the n elements at a with the n elements at b. */
static void sort_swap_range(const sorter *s, size_t a, size_t b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		sort_swap(s, a + i, b + i);
}

/* [a, m) [m, b) -> [m, b) [a, m), by block swaps. */
static void sort_rotate(const sorter *s, size_t a, size_t m, size_t b)
{
	size_t i = m - a, j = b - m;

	while (i != j) {
		if (i > j) {
			sort_swap_range(s, m - i, m, j);
			i -= j;
		} else {
			sort_swap_range(s, m - i, m + j - i, i);
			j -= i;
		}
	}
	sort_swap_range(s, m - i, m, i);
}

/* Merges through the buffer, which holds the left run [a, m). */
static void sort_merge_left(const sorter *s, size_t a, size_t m, size_t b)
{
	const size_t z = s->size, n1 = m - a;
	size_t i = 0, j = m, k = a;

	memcpy(s->buf, sort_at(s, a), n1 * z);
	while (i < n1 && j < b) {
		/* the right one only when strictly less: stable */
		if (s->cmp(sort_at(s, j), s->buf + i * z, s->ctx) < 0)
			memcpy(sort_at(s, k++), sort_at(s, j++), z);
		else
			memcpy(sort_at(s, k++), s->buf + i++ * z, z);
	}
	memcpy(sort_at(s, k), s->buf + i * z, (n1 - i) * z);
}

/* Merges through the buffer, which holds the right run [m, b), from the
 * end. */
static void sort_merge_right(const sorter *s, size_t a, size_t m, size_t b)
{
	const size_t z = s->size, n2 = b - m;
	size_t i = m, j = n2, k = b;

	memcpy(s->buf, sort_at(s, m), n2 * z);
	while (i > a && j > 0) {
		/* the left one only when the right is strictly less */
		if (s->cmp(s->buf + (j - 1) * z, sort_at(s, i - 1), s->ctx) < 0)
			memcpy(sort_at(s, --k), sort_at(s, --i), z);
		else
			memcpy(sort_at(s, --k), s->buf + --j * z, z);
	}
	memcpy(sort_at(s, a), s->buf, j * z);
}

/* Merges the sorted runs [a, m) and [m, b) in place, stably. */
static void sort_merge(const sorter *s, size_t a, size_t m, size_t b)
{
	size_t mid, n, start, r, end;

	if (a >= m || m >= b || !sort_less(s, m, m - 1))
		return;		/* already in order */
	if ((m - a) * s->size <= SORT_BUF) {
		sort_merge_left(s, a, m, b);
		return;
	}
	if ((b - m) * s->size <= SORT_BUF) {
		sort_merge_right(s, a, m, b);
		return;
	}
	/* SymMerge: the longest prefix/suffix pair to exchange */
	mid = a + (b - a) / 2;
	n = mid + m;
	if (m > mid) {
		start = n - b;
		r = mid;
	} else {
		start = a;
		r = m;
	}
	while (start < r) {
		size_t c = start + (r - start) / 2;

		if (!sort_less(s, n - 1 - c, c))
			start = c + 1;
		else
			r = c;
	}
	end = n - start;
	if (start < m && m < end)
		sort_rotate(s, start, m, end);
	if (a < start && start < mid)
		sort_merge(s, a, start, mid);
	if (mid < end && end < b)
		sort_merge(s, mid, end, b);
}

void tgi_sort(void *base, size_t n, size_t size, tgi_cmp_fn cmp, void *ctx)
{
	union {
		char c[SORT_BUF];
		uint64_t align;
	} buf;
	const sorter s = { base, size, cmp, ctx, buf.c };
	size_t a, b, block = SORT_BLOCK;

	if (n < 2 || !size)
		return;
	for (a = 0, b = block; b <= n; a = b, b += block)
		sort_insertion(&s, a, b);
	sort_insertion(&s, a, n);
	for (; block < n; block *= 2) {
		for (a = 0, b = 2 * block; b <= n; a = b, b += 2 * block)
			sort_merge(&s, a, a + block, b);
		if (a + block < n)
			sort_merge(&s, a, a + block, n);
	}
}

void tgi_buf_shell(tg_buf *b, const char *plain, const char *s)
{
	const char *p;
	bool ok = *s != '\0';

	for (p = s; *p && ok; p++)
		ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		     (*p >= '0' && *p <= '9') || strchr(plain, *p);
	if (ok) {
		tg_buf_adds(b, s);
		return;
	}
	tg_buf_add(b, "'", 1);
	for (p = s; *p; p++) {
		if (*p == '\'')
			tg_buf_adds(b, "'\\''");
		else
			tg_buf_add(b, p, 1);
	}
	tg_buf_add(b, "'", 1);
}
