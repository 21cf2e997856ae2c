/*
 * tests/fuzz/fuzz_k8s.c - libFuzzer target for the Kubernetes snapshot
 * loader (JSON and YAML readers, quantities, every dialect).  See
 * README.md for how to build it.
 *
 * Each input goes to tg_k8s_add() as one text (JSON when it starts with
 * '{' or '[', else YAML) and, when it parses, to tg_k8s_build(); every
 * gang built is then placed.  Oracles beyond the sanitizers:
 *  - a failed add names the source first;
 *  - a failed build returns no topology and no gangs;
 *  - a built topology passes tg_topology_check(), every gang has members;
 *  - a gang that could not be read (tg_k8s_failed()) has a name, pods and
 *    a reason that names the source; one that waits for its group object
 *    (tg_k8s_failed_waits()) a reason naming that object as not found;
 *  - loading the same bytes twice gives the same outcome (error text, or
 *    the same gangs in the same order and the same warnings).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topogang/topogang.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SOURCE "fuzz.yaml"

static void fail(const char *what, const char *msg)
{
	fprintf(stderr, "fuzz_k8s: %s: %s\n", what, msg ? msg : "");
	abort();
}

typedef struct outcome {
	tg_err err;
	char msg[512];
	unsigned ngangs, nwarnings;
	unsigned long long digest;	/* FNV-1a over gang names, warnings */
} outcome;

static unsigned long long fnv(unsigned long long h, const char *s)
{
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h * 1099511628211ull;
}

static void run(const char *buf, size_t size, outcome *out, bool place)
{
	tg_k8s *k = tg_k8s_create();
	tg_topology *t = NULL;
	tg_errinfo ei;
	unsigned i;

	memset(out, 0, sizeof(*out));
	if (!k)
		return;
	ei.msg[0] = '\0';
	out->err = tg_k8s_add(k, buf, size, SOURCE, &ei);
	if (out->err) {
		if (strncmp(ei.msg, SOURCE, strlen(SOURCE)) != 0)
			fail("add error without the source", ei.msg);
		snprintf(out->msg, sizeof(out->msg), "%s", ei.msg);
		tg_k8s_destroy(k);
		return;
	}
	out->err = tg_k8s_build(k, &t, &ei);
	if (out->err) {
		if (t || tg_k8s_ngangs(k))
			fail("failed build left a result", ei.msg);
		snprintf(out->msg, sizeof(out->msg), "%s", ei.msg);
		tg_k8s_destroy(k);
		return;
	}
	if (!t)
		fail("build without a topology", "");
	if (tg_topology_check(t, &ei) != TG_OK)
		fail("check", ei.msg);
	out->ngangs = tg_k8s_ngangs(k);
	out->nwarnings = tg_k8s_nwarnings(k);
	out->digest = 14695981039346656037ull;
	for (i = 0; i < out->ngangs; i++) {
		const tg_gang *g = tg_k8s_gang(k, i);

		if (!g || tg_gang_nmembers(g) == 0)
			fail("empty gang", g ? tg_gang_name(g) : "(null)");
		out->digest = fnv(out->digest, tg_gang_name(g));
		if (place && i < 8) {
			tg_decision *d = NULL;

			if (tg_place(t, g, &d, &ei) == TG_OK)
				tg_decision_free(d);
		}
	}
	for (i = 0; i < out->nwarnings; i++)
		out->digest = fnv(out->digest, tg_k8s_warning(k, i));
	/* gangs that could not be read: named, with a reason and pods */
	for (i = 0; i < tg_k8s_nfailed(k); i++) {
		const char *why = NULL, *name = tg_k8s_failed(k, i, &why);
		unsigned j, np = tg_k8s_failed_npods(k, i);

		bool wait = tg_k8s_failed_waits(k, i);

		if (!name || !*name || !why ||
		    (!wait && strncmp(why, SOURCE, strlen(SOURCE)) != 0) ||
		    (wait && !strstr(why, ") not found; the gang waits")))
			fail("failed gang without a name or a reason naming "
			     "the source (or, waiting, its group object)",
			     why ? why : "(null)");
		if (!np)
			fail("failed gang without pods", name);
		out->digest = fnv(out->digest, name);
		out->digest = fnv(out->digest, why);
		for (j = 0; j < np; j++)
			out->digest = fnv(out->digest,
					  tg_k8s_failed_pod(k, i, j));
	}
	tg_topology_destroy(t);
	tg_k8s_destroy(k);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	outcome a, b;

	run((const char *)data, size, &a, true);
	run((const char *)data, size, &b, false);
	if (a.err != b.err || strcmp(a.msg, b.msg) != 0 ||
	    a.ngangs != b.ngangs || a.nwarnings != b.nwarnings ||
	    a.digest != b.digest)
		fail("two loads of the same bytes differ", a.msg);
	return 0;
}
