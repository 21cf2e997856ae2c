/*
 * tests/testdata.h - what the loader tests share: the data files under
 * $TG_SRCDIR/tests/data (TG_SRCDIR "." when unset), their paths, reading
 * them whole, comparing an output with an expected file there
 * (TG_REGEN=1 rewrites the expected file instead), and where a loaded
 * node ended up.  Include after tap.h.
 */
#ifndef TG_TEST_TESTDATA_H
#define TG_TEST_TESTDATA_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "topogang/topogang.h"

/* $TG_SRCDIR/tests/data/<dir>/<name>, in one of four static buffers used
 * in turn: four paths can be live at once. */
static inline const char *td_path(const char *dir, const char *name)
{
	static char buf[4][1200];
	static unsigned next;
	const char *src = getenv("TG_SRCDIR");
	char *p = buf[next++ % 4];

	snprintf(p, sizeof(buf[0]), "%s/tests/data/%s/%s",
		 src && *src ? src : ".", dir, name);
	return p;
}

/* Reads tests/data/<dir>/<name> whole, NUL-terminated; NULL (and a diag
 * naming the path) on any error.  The caller frees it. */
static inline char *td_read(const char *dir, const char *name, size_t *len)
{
	const char *path = td_path(dir, name);
	size_t n = 0;
	char *buf = tap_slurp(path, len ? len : &n);

	if (!buf)
		diag("cannot read %s", path);
	return buf;
}

/* One assertion: \p got is the text of tests/data/<dir>/expected/<name>;
 * on a difference a diag shows the first one.  With TG_REGEN set (and an
 * output to write) the file is rewritten instead. */
static inline void td_golden(const char *got, const char *dir,
			     const char *name, const char *what)
{
	char rel[600];
	const char *path;
	char *want;

	snprintf(rel, sizeof(rel), "expected/%s", name);
	path = td_path(dir, rel);
	if (getenv("TG_REGEN") && got) {
		FILE *f = fopen(path, "wb");

		ok(f && fputs(got, f) >= 0, "%s: regenerated %s", what, name);
		if (f)
			fclose(f);
		return;
	}
	want = tap_slurp(path, &(size_t){ 0 });
	if (!ok(want && got && strcmp(got, want) == 0, "%s: matches %s", what,
		name)) {
		const char *a = got ? got : "", *b = want ? want : "";
		size_t i = 0;

		while (a[i] && a[i] == b[i])
			i++;
		diag("first difference at byte %zu: got '%.60s' want '%.60s'",
		     i, a + i, b + i);
	}
	free(want);
}

/* The domain path of a node; "(no node)" or "(outside)" where it has
 * none. */
static inline const char *path_of(const tg_topology *t, const char *node)
{
	tg_node_id id;
	tg_domain_id d;

	if (tg_topology_node_find(t, node, &id) != TG_OK)
		return "(no node)";
	d = tg_topology_node_domain(t, id);
	if (d == TG_NONE)
		return "(outside)";
	return tg_topology_domain_path(t, d);
}

#endif /* TG_TEST_TESTDATA_H */
