/*
 * tests/unit/test_dialect.c - docs/HACKING-dialect.md as a test: the toy
 * dialect of that page (extracted from it by the build into
 * unit/toy_dialect.c, compiled as written) registered on a handle, and
 * the clusters the page describes loaded through it; then the dialect
 * table's public face, tg_k8s_dialect_name() and tg_k8s_dialect_key().
 *
 * Links the library's private objects (shared/libtopogang_test.la):
 * tgk_dialect_register() and the dialect interface are not exported.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "topogang/topogang.h"
#include "gang.h"		/* the private layout: the gang's requests */
#include "load/k8s/k8s_dialect.h"

extern const tgk_dialect tgk_toy;	/* unit/toy_dialect.c */

#define ZONE	"topology.kubernetes.io/zone"

static const char nodes[] =
	"apiVersion: v1\n"
	"kind: Node\n"
	"metadata:\n"
	"  name: n1\n"
	"  labels: {" ZONE ": zone-a}\n"
	"status: {allocatable: {cpu: \"8\", memory: 32Gi, pods: \"110\"}}\n"
	"---\n"
	"apiVersion: v1\n"
	"kind: Node\n"
	"metadata:\n"
	"  name: n2\n"
	"  labels: {" ZONE ": zone-b}\n"
	"status: {allocatable: {cpu: \"8\", memory: 32Gi, pods: \"110\"}}\n"
	"---\n"
	"apiVersion: v1\n"
	"kind: Node\n"
	"metadata:\n"
	"  name: n3\n"
	"  labels: {" ZONE ": zone-b}\n"
	"status: {allocatable: {cpu: \"8\", memory: 32Gi, pods: \"110\"}}\n";

/* A pending pod of gang "train" with \p annots (YAML flow map entries). */
static void pod(char *buf, size_t n, const char *name, const char *annots)
{
	size_t len = strlen(buf);

	snprintf(buf + len, n - len,
		 "---\n"
		 "apiVersion: v1\n"
		 "kind: Pod\n"
		 "metadata:\n"
		 "  name: %s\n"
		 "  labels: {toy.example.com/gang: train}\n"
		 "  annotations: {%s}\n"
		 "spec:\n"
		 "  containers:\n"
		 "  - name: c\n"
		 "    resources: {requests: {cpu: \"6\"}}\n", name, annots);
}

typedef struct load {
	tg_k8s *k;
	tg_topology *t;
	tg_err err;
	tg_errinfo ei;
} load;

/* Loads \p text, with the toy dialect registered when \p toy. */
static load load_text(const char *text, bool toy)
{
	load l;

	memset(&l, 0, sizeof(l));
	l.k = tg_k8s_create();
	if (toy)
		is_int(tgk_dialect_register(l.k, &tgk_toy), TG_OK,
		       "the toy dialect registers");
	l.err = tg_k8s_add(l.k, text, strlen(text), "toy.yaml", &l.ei);
	if (!l.err)
		l.err = tg_k8s_build(l.k, &l.t, &l.ei);
	if (l.err)
		diag("%s", l.ei.msg);
	return l;
}

static void load_free(load *l)
{
	tg_k8s_destroy(l->k);
	tg_topology_destroy(l->t);
}

static const char *warning_like(const load *l, const char *needle)
{
	unsigned i;

	for (i = 0; i < tg_k8s_nwarnings(l->k); i++)
		if (strstr(tg_k8s_warning(l->k, i), needle))
			return tg_k8s_warning(l->k, i);
	return NULL;
}

static int gather_of(const tg_gang *g, const char *layer)
{
	unsigned i;

	for (i = 0; i < g->ngather; i++)
		if (strcmp(g->gather[i].layer, layer) == 0)
			return (int)g->gather[i].a;
	return -1;
}

/* The page's cluster: two pods, size 2, gathered in one zone. */
static void test_walkthrough(void)
{
	static const char an[] = "toy.example.com/size: \"2\", "
		"toy.example.com/gather-in: " ZONE;
	char text[8192];
	tg_decision *d = NULL;
	tg_gang *g;
	load l;

	snprintf(text, sizeof(text), "%s", nodes);
	pod(text, sizeof(text), "train-0", an);
	pod(text, sizeof(text), "train-1", an);

	/* without the dialect: two lone pods */
	l = load_text(text, false);
	is_int(l.err, TG_OK, "without the toy dialect: loads");
	is_int(tg_k8s_ngangs(l.k), 2, "without it: two gangs of one pod");
	load_free(&l);

	l = load_text(text, true);
	is_int(l.err, TG_OK, "with the toy dialect: loads");
	is_int(tg_k8s_ngangs(l.k), 1, "one gang");
	g = tg_k8s_gang(l.k, 0);
	if (!ok(g != NULL, "the gang is there"))
		goto out;
	is_str(tg_gang_name(g), "default/train", "named ns/gang");
	is_int(tg_gang_nmembers(g), 2, "of both pods");
	is_int(gather_of(g, ZONE), TG_GATHER_MUST,
	       "gather-in: must gather in one zone");
	ok(warning_like(&l, "ToyGang") == NULL && !tg_k8s_nfailed(l.k),
	   "no ToyGang: none needed (a bare key), no warning, no wait");
	if (ok(tg_place(l.t, g, &d, &l.ei) == TG_OK &&
	       tg_decision_status(d) == TG_STATUS_PLACED, "placed"))
		like(tg_decision_domain(d), "zone-b",
		     "in the one zone with room for both (a node each)");
	tg_decision_free(d);
out:
	load_free(&l);
}

/* toy.example.com/size larger than the pods: not ready. */
static void test_size(void)
{
	char text[8192];
	load l;

	snprintf(text, sizeof(text), "%s", nodes);
	pod(text, sizeof(text), "train-0", "toy.example.com/size: \"3\"");
	pod(text, sizeof(text), "train-1", "toy.example.com/size: \"3\"");
	l = load_text(text, true);
	is_int(l.err, TG_OK, "size 3: loads");
	is_int(tg_k8s_ngangs(l.k), 0, "size 3 with 2 pods: no gang yet");
	ok(tg_k8s_nfailed(l.k) == 1 && tg_k8s_failed_waits(l.k, 0),
	   "size 3 with 2 pods: waits for its members");
	load_free(&l);
}

/* A ToyGang object: its size and its gatherIn, not the annotations. */
static void test_object(void)
{
	static const char obj[] =
		"---\n"
		"apiVersion: toy.example.com/v1\n"
		"kind: ToyGang\n"
		"metadata: {name: train, namespace: default}\n"
		"spec: {minMember: 2, gatherIn: %s}\n";
	char text[8192];
	size_t len;
	tg_gang *g;
	load l;

	snprintf(text, sizeof(text), "%s", nodes);
	pod(text, sizeof(text), "train-0",
	    "toy.example.com/gather-in: kubernetes.io/hostname");
	pod(text, sizeof(text), "train-1", "");
	len = strlen(text);
	snprintf(text + len, sizeof(text) - len, obj, ZONE);
	l = load_text(text, true);
	is_int(l.err, TG_OK, "with a ToyGang: loads");
	g = tg_k8s_gang(l.k, 0);
	if (ok(tg_k8s_ngangs(l.k) == 1 && g, "one gang")) {
		is_int(gather_of(g, ZONE), TG_GATHER_MUST,
		       "the ToyGang's spec.gatherIn");
		is_int(gather_of(g, "kubernetes.io/hostname"), -1,
		       "the pods' gather-in is not read");
	}
	ok(warning_like(&l, "no ToyGang") == NULL, "no missing-object warning");
	load_free(&l);

	/* a bad field fails that gang only, naming the object and field */
	snprintf(text, sizeof(text), "%s", nodes);
	pod(text, sizeof(text), "train-0", "");
	len = strlen(text);
	snprintf(text + len, sizeof(text) - len, obj, "3");
	l = load_text(text, true);
	is_int(l.err, TG_OK, "a bad ToyGang: the snapshot still loads");
	is_int(tg_k8s_ngangs(l.k), 0, "no gang built");
	if (ok(tg_k8s_nfailed(l.k) == 1, "the gang is reported failed")) {
		const char *why = NULL;

		is_str(tg_k8s_failed(l.k, 0, &why), "default/train",
		       "the failed gang");
		like(why, "ToyGang default/train: spec.gatherIn: expected a "
		     "string", "the message names the object and the field");
	}
	load_free(&l);
}

static void test_register(void)
{
	tg_k8s *k = tg_k8s_create();
	static const tgk_key nokeys[] = { { .key = NULL } };
	tgk_dialect bad = { .name = "bad", .keys = nokeys };
	static const char one[] = "apiVersion: v1\nkind: Namespace\n"
		"metadata: {name: x}\n";
	tg_errinfo ei;

	is_int(tgk_dialect_register(k, NULL), TG_EINVAL, "NULL: EINVAL");
	is_int(tgk_dialect_register(k, &bad), TG_EINVAL,
	       "a dialect without keys: EINVAL");
	is_int(tg_k8s_add(k, one, strlen(one), "one.yaml", &ei), TG_OK,
	       "an object added");
	is_int(tgk_dialect_register(k, &tgk_toy), TG_ESTATE,
	       "registering after objects were added: ESTATE");
	tg_k8s_destroy(k);
}

/* The table through the public accessors the bridge uses. */
static void test_keys(void)
{
	static const char *const all[] = {
		"pod-group.scheduling.sigs.k8s.io",
		"pod-group.scheduling.sigs.k8s.io/name",
		"scheduling.x-k8s.io/pod-group",
		"gang.scheduling.koordinator.sh/name",
		"pod-group-name",
		"kueue.x-k8s.io/pod-group-name",
		"leaderworkerset.sigs.k8s.io/name",
	};
	static const bool annot[] = { false, false, false, true, true, false,
				      false };
	unsigned i, n = sizeof(all) / sizeof(all[0]);
	bool a;

	is_str(tg_k8s_dialect_name(0), "koordinator", "dialect 0");
	is_str(tg_k8s_dialect_name(4), "leaderworkerset", "dialect 4");
	ok(tg_k8s_dialect_name(5) == NULL, "five dialects");
	for (i = 0; i < n; i++) {
		a = !annot[i];
		is_str(tg_k8s_dialect_key(NULL, i, &a), all[i],
		       "key %u in the order the loader tries them", i);
		is_int(a, annot[i], "key %u: %s", i,
		       annot[i] ? "an annotation" : "a label");
	}
	ok(tg_k8s_dialect_key(NULL, n, NULL) == NULL, "%u keys in all", n);
	is_str(tg_k8s_dialect_key("koordinator", 2, NULL),
	       "gang.scheduling.koordinator.sh/name", "a dialect's own keys");
	ok(tg_k8s_dialect_key("koordinator", 3, NULL) == NULL,
	   "koordinator has three");
	ok(tg_k8s_dialect_key("volcano", 0, NULL) == NULL,
	   "an unknown dialect has none");
}

/* The group objects a host watches, per dialect. */
static void test_groups(void)
{
	static const struct {
		const char *dialect, *api, *version;
	} want[] = {
		{ "koordinator", "scheduling.sigs.k8s.io", "v1alpha1" },
		{ "scheduler-plugins", "scheduling.x-k8s.io", "v1alpha1" },
		{ "kai", "scheduling.run.ai", "v2alpha2" },
	};
	const char *kind, *api, *res;
	const char *const *vers;
	unsigned i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		kind = api = res = NULL;
		vers = NULL;
		if (!ok(tg_k8s_dialect_group(want[i].dialect, &kind, &api,
					     &res, &vers) == TG_OK,
			"%s has a group object", want[i].dialect))
			continue;
		is_str(kind, "PodGroup", "%s: kind", want[i].dialect);
		is_str(api, want[i].api, "%s: API group", want[i].dialect);
		is_str(res, "podgroups", "%s: resource", want[i].dialect);
		is_str(vers ? vers[0] : NULL, want[i].version,
		       "%s: version", want[i].dialect);
		ok(vers && !vers[1], "%s: one version", want[i].dialect);
	}
	is_int(tg_k8s_dialect_group("kueue", &kind, NULL, NULL, NULL),
	       TG_EINVAL, "kueue's gangs have no object");
	is_int(tg_k8s_dialect_group("volcano", NULL, NULL, NULL, NULL),
	       TG_EINVAL, "an unknown dialect: EINVAL");
	is_int(tg_k8s_dialect_group(NULL, NULL, NULL, NULL, NULL),
	       TG_EINVAL, "NULL: EINVAL");
}

int main(void)
{
	test_walkthrough();
	test_size();
	test_object();
	test_register();
	test_keys();
	test_groups();
	return done_testing();
}
