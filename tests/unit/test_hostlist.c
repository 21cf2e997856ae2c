/*
 * tests/unit/test_hostlist.c - Slurm hostlist expansion and compression.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "topogang/topogang.h"
#include "tap.h"

/* Expands \p expr and joins the names with spaces ("" when none). */
static tg_err expand_join(const char *expr, char *out, size_t outlen,
			  unsigned *n, tg_errinfo *ei)
{
	char **names = NULL;
	unsigned i, cnt = 0;
	size_t len = 0;
	tg_err err;

	out[0] = '\0';
	err = tg_hostlist_expand(expr, &names, &cnt, ei);
	if (n)
		*n = cnt;
	if (err)
		return err;
	for (i = 0; i < cnt; i++) {
		size_t l = strlen(names[i]);

		if (len + l + 2 > outlen)
			break;
		if (i)
			out[len++] = ' ';
		memcpy(out + len, names[i], l);
		len += l;
		out[len] = '\0';
	}
	tg_hostlist_free(names, cnt);
	return TG_OK;
}

static void expands_to(const char *expr, const char *want, unsigned wantn)
{
	char got[4096];
	unsigned n = 0;
	tg_errinfo ei;
	tg_err err;

	ei.msg[0] = '\0';
	err = expand_join(expr, got, sizeof(got), &n, &ei);
	is_int(err, TG_OK, "expand '%s' succeeds", expr);
	if (err)
		diag("error: %s", ei.msg);
	is_int(n, wantn, "expand '%s' gives %u names", expr, wantn);
	is_str(got, want, "expand '%s' names", expr);
}

static void expand_fails(const char *expr, tg_err want, const char *msg)
{
	char **names = (char **)&names;	/* must be reset */
	unsigned n = 99;
	tg_errinfo ei;
	tg_err err;

	ei.msg[0] = '\0';
	err = tg_hostlist_expand(expr, &names, &n, &ei);
	is_int(err, want, "expand '%.40s' fails with %s", expr,
	       tg_strerror(want));
	like(ei.msg, msg, "expand '%.40s' message", expr);
	ok(names == NULL && n == 0, "expand '%.40s' returns nothing", expr);
	if (!err)
		tg_hostlist_free(names, n);
}

static void round_trip(const char *expr, const char *want)
{
	char **names = NULL;
	unsigned n = 0, n2 = 0, i;
	char **back = NULL;
	char *s;
	int same = 1;

	if (tg_hostlist_expand(expr, &names, &n, NULL) != TG_OK) {
		ok(0, "round trip '%s': expand", expr);
		return;
	}
	s = tg_hostlist_compress((const char *const *)names, n);
	is_str(s, want, "compress(expand('%s'))", expr);
	if (s && tg_hostlist_expand(s, &back, &n2, NULL) == TG_OK &&
	    n2 == n) {
		for (i = 0; i < n; i++)
			if (strcmp(names[i], back[i]))
				same = 0;
	} else {
		same = 0;
	}
	ok(same, "expand(compress(expand('%s'))) gives the same names",
	   expr);
	tg_hostlist_free(back, n2);
	tg_hostlist_free(names, n);
	tg_free(s);
}

static void compresses_to(const char *const *names, unsigned n,
			  const char *want)
{
	char *s = tg_hostlist_compress(names, n);

	is_str(s, want, "compress to '%s'", want);
	tg_free(s);
}

/* Random names from a few shapes; compress must round-trip exactly. */
static void random_round_trips(void)
{
	static const char *const pre[] = { "n", "node-", "gpu", "r1n", "" };
	static const char *const suf[] = { "", "", "-ib", "x" };
	char *names[64], **back = NULL;
	unsigned iter, i, n, n2, bad = 0;

	srand(12345);
	for (iter = 0; iter < 2000; iter++) {
		unsigned v = (unsigned)(rand() % 120);

		n = 1 + (unsigned)(rand() % 64);
		for (i = 0; i < n; i++) {
			char buf[64];
			int w = rand() % 4;	/* pad width 0..3 */

			if (rand() % 3)
				v++;	/* mostly runs */
			else
				v = (unsigned)(rand() % 1200);
			snprintf(buf, sizeof(buf), "%s%0*u%s",
				 pre[(rand() % 8) ? 0 : rand() % 5], w, v,
				 suf[(rand() % 8) ? 0 : rand() % 4]);
			names[i] = malloc(strlen(buf) + 1);
			if (!names[i])
				abort();
			memcpy(names[i], buf, strlen(buf) + 1);
		}
		{
			char *s = tg_hostlist_compress(
				(const char *const *)names, n);

			if (!s || tg_hostlist_expand(s, &back, &n2, NULL) ||
			    n2 != n) {
				bad++;
			} else {
				for (i = 0; i < n; i++)
					if (strcmp(names[i], back[i])) {
						bad++;
						diag("'%s' -> '%s' at %u",
						     names[i], back[i], i);
						break;
					}
			}
			tg_hostlist_free(back, n2);
			back = NULL;
			n2 = 0;
			tg_free(s);
		}
		for (i = 0; i < n; i++)
			free(names[i]);
	}
	is_int(bad, 0, "2000 random name lists round-trip exactly");
}

int main(void)
{
	char big[512];
	char **names = NULL;
	unsigned n = 0;
	tg_errinfo ei;

	/* Slurm syntax */
	expands_to("node[0-3,7],gpu-[01-02]x",
		   "node0 node1 node2 node3 node7 gpu-01x gpu-02x", 7);
	expands_to("node[001-012,20]",
		   "node001 node002 node003 node004 node005 node006 "
		   "node007 node008 node009 node010 node011 node012 "
		   "node20", 13);
	expands_to("node[8-10]", "node8 node9 node10", 3);
	expands_to("node[08-10]", "node08 node09 node10", 3);
	expands_to("r[1-2]n[1-3]", "r1n1 r1n2 r1n3 r2n1 r2n2 r2n3", 6);
	expands_to("rack[0-1]_blade[0-1]-ib",
		   "rack0_blade0-ib rack0_blade1-ib rack1_blade0-ib "
		   "rack1_blade1-ib", 4);
	expands_to("[1-3]", "1 2 3", 3);
	expands_to("srv[1101-1103]", "srv1101 srv1102 srv1103", 3);
	expands_to("node[1,3,5,7]", "node1 node3 node5 node7", 4);
	expands_to("switch.2.[1-2]", "switch.2.1 switch.2.2", 2);
	expands_to("tara-c-[001-002]", "tara-c-001 tara-c-002", 2);
	expands_to("login", "login", 1);
	expands_to("a,,b c\td", "a b c d", 4);
	expands_to("", "", 0);
	expands_to(" , ", "", 0);
	expands_to("n[999999999999999998-999999999999999999]",
		   "n999999999999999998 n999999999999999999", 2);

	/* errors */
	expand_fails("node[3-1]", TG_EPARSE,
		     "bad hostlist 'node[3-1]': range end before start");
	expand_fails("node[1-2", TG_EPARSE, "'[' without ']'");
	expand_fails("node1-2]", TG_EPARSE, "']' without '['");
	expand_fails("node[[1]]", TG_EPARSE, "nested '['");
	expand_fails("node[]", TG_EPARSE, "empty range");
	expand_fails("node[1,]", TG_EPARSE, "empty range");
	expand_fails("node[a-b]", TG_EPARSE, "bad range 'a-b'");
	expand_fails("node[1-2-3]", TG_EPARSE, "bad range '1-2-3'");
	expand_fails("node[-3]", TG_EPARSE, "bad range '-3'");
	expand_fails("node[1 - 3]", TG_EPARSE, "bad range");
	expand_fails("ok1,node[1234567890123456789]", TG_ELIMIT,
		     "longer than 18 digits");
	expand_fails("x[0-1048576]", TG_ELIMIT, "more than 1048576 names");
	expand_fails("x[0-1023]y[0-1024]", TG_ELIMIT,
		     "more than 1048576 names");
	expand_fails("x[0-524287],y[0-524288]", TG_ELIMIT,
		     "more than 1048576 names");
	memset(big, 'a', 254);
	big[254] = '\0';
	expand_fails(big, TG_ELIMIT, "longer than 253 bytes");
	memcpy(big + 250, "[1-9]bbbb", 10);
	expand_fails(big, TG_ELIMIT, "longer than 253 bytes");
	big[253] = '\0';
	memset(big, 'a', 253);
	{
		unsigned cnt = 0;

		is_int(tg_hostlist_expand(big, &names, &cnt, NULL), TG_OK,
		       "a 253-byte name is fine");
		is_int(cnt, 1, "one name");
		tg_hostlist_free(names, cnt);
		names = NULL;
	}
	is_int(tg_hostlist_expand(NULL, &names, &n, &ei), TG_EINVAL,
	       "NULL expression");
	is_int(tg_hostlist_expand("a", NULL, &n, &ei), TG_EINVAL,
	       "NULL output");
	tg_hostlist_free(NULL, 0);
	ok(1, "tg_hostlist_free(NULL, 0)");

	/* the bound itself is allowed */
	is_int(tg_hostlist_expand("x[1-1048576]", &names, &n, &ei), TG_OK,
	       "exactly TG_MAX_HOSTLIST names");
	is_int(n, TG_MAX_HOSTLIST, "1048576 names");
	if (n == TG_MAX_HOSTLIST) {
		is_str(names[0], "x1", "first");
		is_str(names[n - 1], "x1048576", "last");
	}
	tg_hostlist_free(names, n);

	/* compression */
	round_trip("node[0-3,7]", "node[0-3,7]");
	round_trip("node[001-012,20]", "node[001-012,20]");
	round_trip("node[8-10]", "node[8-10]");
	round_trip("node[098-100]", "node[098-100]");
	round_trip("gpu-[01-02]x", "gpu-[01-02]x");
	round_trip("node[3,1-2]", "node[3,1-2]");
	round_trip("a1,b[1-2],a2", "a1,b[1-2],a2");
	round_trip("r[1-2]n[1-3]", "r1n[1-3],r2n[1-3]");
	round_trip("login,node[1-2]", "login,node[1-2]");
	round_trip("node7", "node7");
	round_trip("node[0,00,000]", "node[0,00,000]");
	round_trip("node[9-10],node[09-10]", "node[9-10,09-10]");
	round_trip("n1234567890123456789,n1234567890123456790",
		   "n1234567890123456789,n1234567890123456790");
	{
		static const char *const a[] = { "srv1101", "srv1102",
						 "srv1103", "srv1201" };
		static const char *const b[] = { "x" };

		compresses_to(a, 4, "srv[1101-1103,1201]");
		compresses_to(b, 1, "x");
		compresses_to(a, 0, "");
		ok(tg_hostlist_compress(NULL, 3) == NULL,
		   "compress(NULL, 3) is NULL");
	}
	random_round_trips();
	return done_testing();
}
