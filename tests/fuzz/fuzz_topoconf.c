/*
 * tests/fuzz/fuzz_topoconf.c - libFuzzer target for the topology.conf
 * loader and the hostlist functions.  See README.md for how to build it.
 *
 * Oracles beyond the sanitizers: a file that loads always builds with no
 * warning (every node has a full path) and passes tg_topology_check();
 * an error message names the source; and a hostlist that expands
 * round-trips exactly through tg_hostlist_compress().
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topogang/topogang.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SOURCE "fuzz.conf"

static void fail(const char *what, const char *msg)
{
	fprintf(stderr, "fuzz_topoconf: %s: %s\n", what, msg ? msg : "");
	abort();
}

static void fuzz_load(const char *buf, size_t size)
{
	tg_topology *t = tg_topology_create();
	tg_errinfo ei;
	unsigned i, nl;

	if (!t)
		return;
	ei.msg[0] = '\0';
	if (tg_topoconf_load(t, buf, size, SOURCE, &ei) != TG_OK) {
		if (strncmp(ei.msg, SOURCE ":", strlen(SOURCE ":")) != 0)
			fail("error message without source", ei.msg);
		if (tg_topology_nlayers(t) || tg_topology_nnodes(t))
			fail("failed load added something", ei.msg);
		tg_topology_destroy(t);
		return;
	}
	if (tg_topology_build(t, &ei) != TG_OK)
		fail("build", ei.msg);
	if (tg_topology_check(t, &ei) != TG_OK)
		fail("check", ei.msg);
	if (tg_topology_nwarnings(t))
		fail("warning", tg_topology_warning(t, 0));
	nl = tg_topology_nlayers(t);
	for (i = 0; i < tg_topology_nnodes(t); i++) {
		tg_domain_id d = tg_topology_node_domain(t, i);
		const char *p;
		unsigned slashes = 0;

		if (d == TG_NONE)
			fail("node outside the tree",
			     tg_topology_node_name(t, i));
		for (p = tg_topology_domain_path(t, d); *p; p++)
			slashes += *p == '/';
		if (slashes + 1 != nl)
			fail("path depth", tg_topology_domain_path(t, d));
	}
	tg_topology_destroy(t);
}

static void fuzz_hostlist(const char *expr)
{
	char **names = NULL, **back = NULL;
	unsigned n = 0, n2 = 0, i;
	char *s;

	if (tg_hostlist_expand(expr, &names, &n, NULL) != TG_OK)
		return;
	s = tg_hostlist_compress((const char *const *)names, n);
	if (!s)
		fail("compress", expr);
	if (tg_hostlist_expand(s, &back, &n2, NULL) != TG_OK || n2 != n)
		fail("compressed list does not expand back", s);
	for (i = 0; i < n; i++)
		if (strcmp(names[i], back[i]))
			fail("round trip", s);
	tg_free(s);
	tg_hostlist_free(back, n2);
	tg_hostlist_free(names, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	fuzz_load((const char *)data, size);

	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	fuzz_hostlist(s);
	free(s);
	return 0;
}
