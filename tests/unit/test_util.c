/*
 * tests/unit/test_util.c - the natural name order, error strings,
 * tg_free(), and topogang/util.h (buffer, integer parses, file read).
 *
 * tg_name_cmp() orders every name and path the library prints and breaks
 * every placement tie, so it must be a total order: antisymmetric,
 * transitive, and 0 only for equal strings.  The fixed cases pin the
 * documented behaviour; a random sample checks the order laws.
 */
#define _POSIX_C_SOURCE 200809L	/* mkstemp */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "topogang/topogang.h"

static int sign(int v)
{
	return (v > 0) - (v < 0);
}

/* a < b, and the reverse comparison agrees */
static void lt(const char *a, const char *b)
{
	int ab = sign(tg_name_cmp(a, b)), ba = sign(tg_name_cmp(b, a));

	if (!ok(ab == -1 && ba == 1, "name_cmp: '%s' < '%s'", a, b))
		printf("#   cmp(a,b) = %d, cmp(b,a) = %d\n", ab, ba);
}

static void test_fixed(void)
{
	static const char *const sorted[] = {
		"", "0", "00", "1", "01", "2", "9", "10", "010", "99",
		"100", "a", "a0", "a00", "a1", "a01", "a001", "a1b", "a01c",
		"a2", "a10", "a10b", "b", "node", "node-1", "node-2",
		"node-9", "node-10", "node-11", "node-100", "node-a",
	};
	const size_t n = sizeof(sorted) / sizeof(sorted[0]);
	size_t i, j;
	bool all = true;

	lt("node-2", "node-10");
	lt("node-9", "node-10");
	lt("rack-1/node-10", "rack-2/node-1");
	lt("spine-2/block-9", "spine-2/block-10");
	lt("a1", "a01");
	lt("a01", "a001");
	lt("a01", "a2");
	lt("x0", "x00");
	/* a leading zero is only a tie-break: the first real difference
	 * after it still decides */
	lt("a01a", "a1b");
	lt("a1a", "a01b");
	lt("1.9", "1.10");
	lt("A", "a");
	lt("node", "node-0");
	lt("", "a");
	/* digit runs longer than any integer type compare by length */
	lt("n99999999999999999999999", "n100000000000000000000000");
	lt("n18446744073709551615", "n18446744073709551616");
	/* a digit against a non-digit is a byte comparison */
	lt("a-1", "a1");
	lt("a1", "a:");

	is_int(tg_name_cmp("node-7", "node-7"), 0, "name_cmp: equal is 0");
	is_int(tg_name_cmp("", ""), 0, "name_cmp: empty strings equal");
	ok(tg_name_cmp("a01", "a1") != 0,
	   "name_cmp: 'a01' and 'a1' are distinct");
	ok(tg_name_cmp("a0", "a00") != 0 && tg_name_cmp("a00", "a000") != 0,
	   "name_cmp: runs of zeros of different length are distinct");

	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++) {
			int want = i < j ? -1 : i > j ? 1 : 0;
			int got = sign(tg_name_cmp(sorted[i], sorted[j]));

			if (got != want && all) {
				diag("cmp('%s', '%s') = %d, want %d",
				     sorted[i], sorted[j], got, want);
				all = false;
			}
		}
	ok(all, "name_cmp: a %zu-name list is in order pairwise", n);
}

/* xorshift64*, fixed seed: the sample is the same on every run */
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ull;
}

#define NSAMPLE 96
#define MAXLEN 7

static void random_name(char *s)
{
	/* few letters, many digits and zeros, and bytes around '/' and '9'
	 * so that prefixes, zero runs and digit/non-digit meet often */
	static const char alpha[] = "0001239ab-/.:";
	size_t len = rnd() % (MAXLEN + 1), i;

	for (i = 0; i < len; i++)
		s[i] = alpha[rnd() % (sizeof(alpha) - 1)];
	s[len] = '\0';
}

static char sample[NSAMPLE][MAXLEN + 1];

static int sample_cmp(const void *a, const void *b)
{
	return tg_name_cmp((const char *)a, (const char *)b);
}

static void test_random(void)
{
	size_t i, j, k, bad_eq = 0, bad_anti = 0, bad_trans = 0, bad_sort = 0;
	int c[NSAMPLE][NSAMPLE];

	for (i = 0; i < NSAMPLE; i++)
		random_name(sample[i]);
	for (i = 0; i < NSAMPLE; i++)
		for (j = 0; j < NSAMPLE; j++)
			c[i][j] = sign(tg_name_cmp(sample[i], sample[j]));
	for (i = 0; i < NSAMPLE; i++)
		for (j = 0; j < NSAMPLE; j++) {
			bool same = strcmp(sample[i], sample[j]) == 0;

			if ((c[i][j] == 0) != same && !bad_eq++)
				diag("cmp('%s', '%s') = %d", sample[i],
				     sample[j], c[i][j]);
			if (c[i][j] != -c[j][i] && !bad_anti++)
				diag("cmp('%s', '%s') = %d but reverse %d",
				     sample[i], sample[j], c[i][j], c[j][i]);
		}
	ok(!bad_eq, "name_cmp: 0 exactly for equal strings (%zu bad pairs)",
	   bad_eq);
	ok(!bad_anti, "name_cmp: antisymmetric (%zu bad pairs)", bad_anti);
	for (i = 0; i < NSAMPLE; i++)
		for (j = 0; j < NSAMPLE; j++) {
			if (c[i][j] > 0)
				continue;
			for (k = 0; k < NSAMPLE; k++)
				if (c[j][k] <= 0 && c[i][k] > 0 &&
				    !bad_trans++)
					diag("'%s' <= '%s' <= '%s' but "
					     "cmp(first, last) > 0",
					     sample[i], sample[j], sample[k]);
		}
	ok(!bad_trans, "name_cmp: transitive over %d^3 triples (%zu bad)",
	   NSAMPLE, bad_trans);
	qsort(sample, NSAMPLE, sizeof(sample[0]), sample_cmp);
	for (i = 0; i < NSAMPLE; i++)
		for (j = i + 1; j < NSAMPLE; j++)
			if (tg_name_cmp(sample[i], sample[j]) > 0)
				bad_sort++;
	ok(!bad_sort, "name_cmp: qsort gives a list ordered pairwise "
	   "(%zu bad pairs)", bad_sort);
}

static void test_strerror(void)
{
	static const struct {
		tg_err err;
		const char *text;
	} codes[] = {
		{ TG_OK, "success" },
		{ TG_ENOMEM, "out of memory" },
		{ TG_EINVAL, "invalid argument or value" },
		{ TG_EPARSE, "malformed input" },
		{ TG_ELIMIT, "limit exceeded" },
		{ TG_ENOENT, "no such object" },
		{ TG_EEXIST, "already exists" },
		{ TG_ESTATE, "not allowed in this state" },
		{ TG_EIO, "input/output error" },
	};
	const size_t n = sizeof(codes) / sizeof(codes[0]);
	size_t i, j;
	bool distinct = true;

	for (i = 0; i < n; i++)
		is_str(tg_strerror(codes[i].err), codes[i].text,
		       "strerror(%d)", (int)codes[i].err);
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (!strcmp(tg_strerror(codes[i].err),
				    tg_strerror(codes[j].err)))
				distinct = false;
	ok(distinct, "strerror: every code has its own text");
	/* a value past the last code still gets a string, never NULL */
	is_str(tg_strerror((tg_err)(TG_EIO + 1)), "unknown error",
	       "strerror: an unknown code");
}

static size_t nfree_calls;

static void counting_free(void *p)
{
	nfree_calls++;
	free(p);
}

static void test_free(void)
{
	tg_topology *t;
	char *pic;

	tg_free(NULL);
	ok(1, "tg_free(NULL) is a no-op");

	/* tg_free() goes through the allocator hook, like the library */
	tg_set_allocator(NULL, NULL, counting_free);
	t = tg_topology_create();
	tg_topology_build(t, NULL);
	pic = tg_draw(t, NULL);
	ok(pic != NULL, "draw of an empty topology");
	nfree_calls = 0;
	tg_free(pic);
	is_int(nfree_calls, 1, "tg_free() calls the hooked free");
	tg_free(NULL);
	is_int(nfree_calls, 1, "tg_free(NULL) does not call free");
	tg_topology_destroy(t);
	tg_topology_destroy(NULL);
	tg_gang_destroy(NULL);
	tg_decision_free(NULL);
	ok(1, "destroy functions accept NULL");
	tg_set_allocator(NULL, NULL, NULL);
}

/* topogang/util.h: the buffer the library and the hosts share. */
static void test_buf(void)
{
	tg_buf b;
	char *s;

	tg_buf_init(&b, 8);
	is_int(tg_buf_adds(&b, "12345678"), TG_OK, "buf: fills to its bound");
	is_int(tg_buf_adds(&b, "9"), TG_ELIMIT,
	       "buf: one byte past the bound is TG_ELIMIT");
	is_str(b.s, "12345678", "buf: content kept after the error");
	is_int(tg_buf_adds(&b, ""), TG_ELIMIT, "buf: the error sticks");
	ok(tg_buf_take(&b) == NULL && !b.err && !b.s,
	   "buf: take after an error gives NULL and resets");
	tg_buf_init(&b, 4);
	tg_buf_adds(&b, "abcd");
	tg_buf_adds(&b, "e");
	s = tg_buf_take_cut(&b);
	is_str(s, "abcd [message cut at 4 bytes]", "buf: take_cut says so");
	tg_free(s);
	tg_buf_init(&b, 100);
	is_int(tg_buf_add(&b, NULL, 0), TG_OK, "buf: nothing from NULL");
	s = tg_buf_take(&b);
	is_str(s, "", "buf: an empty buffer gives \"\"");
	tg_free(s);
	tg_buf_add_json(&b, "a\"b\\c\n\r\t\x01");
	is_str(b.s, "\"a\\\"b\\\\c\\n\\r\\t\\u0001\"",
	       "buf: JSON string escaping");
	tg_buf_reset(&b);
	tg_buf_addf(&b, "%s-%d", "x", 42);
	tg_buf_consume(&b, 2);
	is_str(b.s, "42", "buf: addf, reset, consume");
	tg_buf_consume(&b, 10);
	ok(b.len == 0 && !b.s[0], "buf: consume past the end empties it");
	tg_buf_free(&b);
	tg_buf_free(NULL);
}

static void test_parse(void)
{
	int64_t v = 7;
	unsigned u = 7;
	uint64_t w = 7;

	ok(tg_i64_parse("-9223372036854775808", &v) && v == INT64_MIN,
	   "i64: the smallest");
	ok(!tg_i64_parse("9223372036854775808", &v), "i64: overflow refused");
	ok(!tg_i64_parse(" 1", &v) && !tg_i64_parse("1 ", &v) &&
	   !tg_i64_parse("", &v) && !tg_i64_parse(NULL, &v) &&
	   !tg_i64_parse("1x", &v), "i64: spaces, junk, empty refused");
	ok(tg_u32_parse("4294967295", &u) && u == 4294967295u &&
	   !tg_u32_parse("4294967296", &u) && !tg_u32_parse("-1", &u),
	   "u32: range");
	ok(tg_u64_parse("86400", 86400, &w) && w == 86400 &&
	   !tg_u64_parse("86401", 86400, &w) && !tg_u64_parse("+1", 9, &w) &&
	   !tg_u64_parse("-1", 9, &w), "u64: digits only, up to max");
	{
		double d = 7;

		ok(tg_f64_parse("2.5e1", 0, 100, &d) && d == 25,
		   "f64: a number in range");
		ok(!tg_f64_parse("101", 0, 100, &d) &&
		   !tg_f64_parse(" 1", 0, 100, &d) &&
		   !tg_f64_parse("1x", 0, 100, &d) &&
		   !tg_f64_parse("inf", -1e308, 1e308, &d) &&
		   !tg_f64_parse("1e999", -1e308, 1e308, &d) && d == 25,
		   "f64: range, space, junk, infinity, overflow refused");
	}
}

static void test_file(void)
{
	char path[] = "/tmp/tg-util-XXXXXX";
	tg_errinfo ei = { "" };
	char *buf = (char *)1;
	size_t len = 0;
	int fd = mkstemp(path);

	if (!ok(fd >= 0, "file: a temporary file"))
		return;
	if (write(fd, "hello\n", 6) != 6)
		diag("short write");
	close(fd);
	is_int(tg_file_read(path, 6, &buf, &len, &ei), TG_OK,
	       "file: reads up to its bound");
	ok(buf && len == 6 && !strcmp(buf, "hello\n"), "file: the content");
	tg_free(buf);
	is_int(tg_file_read(path, 5, &buf, &len, &ei), TG_ELIMIT,
	       "file: past the bound is TG_ELIMIT");
	like(ei.msg, "larger than 5 bytes", "file: the bound is named");
	ok(buf == NULL, "file: nothing handed over on error");
	unlink(path);
	errno = 0;
	is_int(tg_file_read(path, 6, &buf, &len, &ei), TG_EIO,
	       "file: a missing file is TG_EIO");
	ok(errno == ENOENT, "file: ... with errno ENOENT for the caller");
	like(ei.msg, path, "file: the message names the file");
}

int main(void)
{
	test_fixed();
	test_random();
	test_strerror();
	test_free();
	test_buf();
	test_parse();
	test_file();
	return done_testing();
}
