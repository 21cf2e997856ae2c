/*
 * tests/unit/test_topology.c - the topology model through its public API:
 * layers, nodes, resources, the domain tree and its warnings,
 * allocations, the bandwidth model and domain lookup.
 *
 * tg_topology_check() runs after every build and after every change to
 * the allocations, as hwloc's tests run hwloc_topology_check().
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "topogang/topogang.h"

#define CHECK(t, what) do {						\
	tg_errinfo ei_;							\
	tg_err e_;							\
									\
	ei_.msg[0] = '\0';						\
	e_ = tg_topology_check((t), &ei_);				\
	if (!ok(e_ == TG_OK, "%s: check() passes", (what)))		\
		diag("check: %s (%s)", tg_strerror(e_), ei_.msg);	\
} while (0)

/* Builds and checks the invariants at once. */
#define BUILD(t, what) do {						\
	is_int(tg_topology_build((t), NULL), TG_OK, "%s: build", (what)); \
	CHECK((t), (what));						\
} while (0)

static char *long_name(size_t len)
{
	char *s = malloc(len + 1);

	memset(s, 'x', len);
	s[len] = '\0';
	return s;
}

/* The bare value and path of the domain \p path, or fails. */
static tg_domain_id dom(const tg_topology *t, const char *path)
{
	tg_domain_id d = TG_NONE;

	if (tg_topology_domain_find(t, path, &d) != TG_OK)
		return TG_NONE;
	return d;
}

/* ---- layers ---- */

static void test_layers(void)
{
	tg_topology *t = tg_topology_create();
	char name[32], *big = long_name(TG_MAX_NAME + 1);
	char *max = long_name(TG_MAX_NAME);
	unsigned i;
	tg_err err = TG_OK;

	ok(t != NULL, "create");
	is_int(tg_topology_nlayers(t), 0, "a new topology has no layers");
	is_int(tg_topology_add_layer(NULL, "a", NULL), TG_EINVAL,
	       "add_layer: NULL topology");
	is_int(tg_topology_add_layer(t, NULL, NULL), TG_EINVAL,
	       "add_layer: NULL name");
	is_int(tg_topology_add_layer(t, "", NULL), TG_EINVAL,
	       "add_layer: empty name");
	is_int(tg_topology_add_layer(t, big, NULL), TG_EINVAL,
	       "add_layer: name longer than TG_MAX_NAME");
	is_int(tg_topology_add_layer(t, "a", ""), TG_EINVAL,
	       "add_layer: empty key");
	is_int(tg_topology_add_layer(t, "a", big), TG_EINVAL,
	       "add_layer: key longer than TG_MAX_NAME");
	is_int(tg_topology_nlayers(t), 0, "rejected layers are not added");

	is_int(tg_topology_add_layer(t, "zone", "topology.kubernetes.io/zone"),
	       TG_OK, "add_layer zone with a key");
	is_int(tg_topology_add_layer(t, max, NULL), TG_OK,
	       "add_layer: a name of exactly TG_MAX_NAME bytes");
	is_int(tg_topology_add_layer(t, "zone", NULL), TG_EEXIST,
	       "add_layer: duplicate name");
	is_int(tg_topology_add_layer(t, "z2", "topology.kubernetes.io/zone"),
	       TG_EEXIST, "add_layer: duplicate key");
	is_int(tg_topology_add_layer(t, "topology.kubernetes.io/zone", NULL),
	       TG_EEXIST, "add_layer: a name equal to another layer's key");
	is_int(tg_topology_add_layer(t, "z3", "zone"), TG_EEXIST,
	       "add_layer: a key equal to another layer's name");
	is_int(tg_topology_nlayers(t), 2, "two layers");
	is_str(tg_topology_layer_name(t, 0), "zone", "layer 0 name");
	is_str(tg_topology_layer_key(t, 0), "topology.kubernetes.io/zone",
	       "layer 0 key");
	ok(tg_topology_layer_key(t, 1) == NULL, "layer 1 has no key");
	ok(tg_topology_layer_name(t, 2) == NULL &&
	   tg_topology_layer_key(t, 2) == NULL,
	   "layer name/key out of range: NULL");
	is_int(tg_topology_layer_find(t, "zone"), 0, "find by name");
	is_int(tg_topology_layer_find(t, "topology.kubernetes.io/zone"), 0,
	       "find by key");
	is_int(tg_topology_layer_find(t, max), 1, "find the long name");
	ok(tg_topology_layer_find(t, "rack") == TG_NONE,
	   "find an unknown layer: TG_NONE");
	ok(tg_topology_layer_find(t, NULL) == TG_NONE,
	   "find NULL: TG_NONE");

	for (i = 2; i < TG_MAX_LAYERS && !err; i++) {
		snprintf(name, sizeof(name), "layer-%u", i);
		err = tg_topology_add_layer(t, name, NULL);
	}
	is_int(err, TG_OK, "layers up to TG_MAX_LAYERS");
	is_int(tg_topology_nlayers(t), TG_MAX_LAYERS, "TG_MAX_LAYERS layers");
	is_int(tg_topology_add_layer(t, "one-too-many", NULL), TG_ELIMIT,
	       "add_layer past TG_MAX_LAYERS: TG_ELIMIT");
	is_int(tg_topology_nlayers(t), TG_MAX_LAYERS,
	       "the limit leaves the layers as they were");
	tg_topology_destroy(t);

	/* layers only before the first node */
	t = tg_topology_create();
	tg_topology_add_layer(t, "spine", NULL);
	is_int(tg_topology_add_node(t, "n1", NULL, NULL), TG_OK, "add a node");
	is_int(tg_topology_add_layer(t, "block", NULL), TG_ESTATE,
	       "add_layer after add_node: TG_ESTATE");
	is_int(tg_topology_nlayers(t), 1, "still one layer");
	is_int(tg_topology_build(t, NULL), TG_OK, "build");
	is_int(tg_topology_add_layer(t, "block", NULL), TG_ESTATE,
	       "add_layer after build: TG_ESTATE");
	tg_topology_destroy(t);

	t = tg_topology_create();
	is_int(tg_topology_build(t, NULL), TG_OK,
	       "build with no layers and no nodes");
	is_int(tg_topology_add_layer(t, "spine", NULL), TG_ESTATE,
	       "add_layer after an empty build: TG_ESTATE");
	is_int(tg_topology_ndomains(t), 1, "an empty topology has the root");
	CHECK(t, "empty topology");
	tg_topology_destroy(t);
	free(big);
	free(max);
}

/* ---- nodes ---- */

static void test_nodes(void)
{
	tg_topology *t = tg_topology_create();
	const char *path[2] = { "s1", "b1" };
	const char *badpath[2] = { "s1", NULL };
	char *big = long_name(TG_MAX_NAME + 1);
	tg_node_id id = 77, id2;
	tg_errinfo ei;

	tg_topology_add_layer(t, "spine", NULL);
	tg_topology_add_layer(t, "block", NULL);
	is_int(tg_topology_add_node(NULL, "n", path, &id), TG_EINVAL,
	       "add_node: NULL topology");
	is_int(tg_topology_add_node(t, NULL, path, &id), TG_EINVAL,
	       "add_node: NULL name");
	is_int(tg_topology_add_node(t, "", path, &id), TG_EINVAL,
	       "add_node: empty name");
	is_int(tg_topology_add_node(t, big, path, &id), TG_EINVAL,
	       "add_node: name longer than TG_MAX_NAME");
	badpath[1] = big;
	is_int(tg_topology_add_node(t, "n", badpath, &id), TG_EINVAL,
	       "add_node: a label value longer than TG_MAX_NAME");
	is_int(id, 77, "a rejected node does not touch *id");
	is_int(tg_topology_nnodes(t), 0, "rejected nodes are not added");

	is_int(tg_topology_add_node(t, "node-1", path, &id), TG_OK,
	       "add node-1");
	is_int(id, 0, "the first node is id 0");
	is_int(tg_topology_add_node(t, "node-1", path, &id2), TG_EEXIST,
	       "add_node: duplicate name");
	is_int(tg_topology_add_node(t, "node-2", NULL, NULL), TG_OK,
	       "add_node: NULL path and NULL id");
	is_int(tg_topology_nnodes(t), 2, "two nodes");
	is_int(tg_topology_node_find(t, "node-2", &id2), TG_OK, "find node-2");
	is_int(id2, 1, "node-2 is id 1");
	is_int(tg_topology_node_find(t, "node-3", &id2), TG_ENOENT,
	       "find an unknown node: TG_ENOENT");
	is_int(tg_topology_node_find(t, NULL, &id2), TG_ENOENT,
	       "find NULL: TG_ENOENT");
	is_str(tg_topology_node_name(t, 0), "node-1", "node_name(0)");
	ok(tg_topology_node_name(t, 2) == NULL, "node_name out of range");

	is_int(tg_topology_node_set_resource(t, 5, TG_RES_CPU, 1), TG_EINVAL,
	       "set_resource: unknown node");
	is_int(tg_topology_node_set_resource(t, 0, TG_MAX_RESOURCES, 1),
	       TG_EINVAL, "set_resource: resource id out of range");
	is_int(tg_topology_node_set_resource(t, 0, 4, 1), TG_EINVAL,
	       "set_resource: a resource id not interned yet");
	is_int(tg_topology_node_set_resource(t, 0, TG_RES_CPU, -1), TG_EINVAL,
	       "set_resource: negative amount");
	is_int(tg_topology_node_set_resource(t, 0, TG_RES_CPU, 8000), TG_OK,
	       "set_resource cpu");
	is_int(tg_topology_node_allocatable(t, 0, TG_RES_CPU), 8000,
	       "allocatable cpu");
	is_int(tg_topology_node_free(t, 0, TG_RES_CPU), 8000,
	       "free cpu = allocatable");
	is_int(tg_topology_node_set_gpus(t, 0, TG_MAX_GPUS + 1, NULL),
	       TG_EINVAL, "set_gpus: more than TG_MAX_GPUS");
	is_int(tg_topology_node_set_gpus(t, 9, 1, NULL), TG_EINVAL,
	       "set_gpus: unknown node");
	is_int(tg_topology_node_set_gpus(t, 0, TG_MAX_GPUS, NULL), TG_OK,
	       "set_gpus: TG_MAX_GPUS");
	ok(tg_topology_node_free_gpus(t, 0) == ~0ull,
	   "64 GPUs: all 64 bits free");
	is_int(tg_topology_node_set_resource(t, 0, TG_RES_GPU, 4), TG_OK,
	       "set_resource gpu = set_gpus");
	is_int(tg_topology_node_ngpus(t, 0), 4, "4 GPUs");
	ok(tg_topology_node_free_gpus(t, 0) == 0xf, "GPU mask 0xf");
	is_int(tg_topology_node_free(t, 0, TG_RES_GPU), 4, "4 GPUs free");

	is_int(tg_topology_node_add_label(t, 0, NULL, "v"), TG_EINVAL,
	       "add_label: NULL key");
	is_int(tg_topology_node_add_label(t, 0, "k", NULL), TG_EINVAL,
	       "add_label: NULL value");
	is_int(tg_topology_node_add_label(t, 0, "k", big), TG_EINVAL,
	       "add_label: value too long");
	is_int(tg_topology_node_add_label(t, 3, "k", "v"), TG_EINVAL,
	       "add_label: unknown node");
	is_int(tg_topology_node_add_label(t, 0, "pool", "a"), TG_OK,
	       "add_label");
	is_int(tg_topology_node_add_label(t, 0, "empty", ""), TG_OK,
	       "add_label with an empty value");
	is_str(tg_topology_node_label(t, 0, "pool"), "a", "label lookup");
	is_str(tg_topology_node_label(t, 0, "empty"), "", "empty label value");
	ok(tg_topology_node_label(t, 1, "pool") == NULL,
	   "another node does not have the label");
	ok(tg_topology_node_label(t, 0, "nope") == NULL, "unknown key: NULL");
	is_int(tg_topology_node_add_taint(t, 0, "k", NULL, 7), TG_EINVAL,
	       "add_taint: bad effect");
	is_int(tg_topology_node_add_taint(t, 0, NULL, NULL,
					  TG_TAINT_NO_SCHEDULE), TG_EINVAL,
	       "add_taint: NULL key");
	is_int(tg_topology_node_add_taint(t, 0, "gpu", NULL,
					  TG_TAINT_NO_SCHEDULE), TG_OK,
	       "add_taint");
	is_int(tg_topology_node_set_unschedulable(t, 4, true), TG_EINVAL,
	       "set_unschedulable: unknown node");
	is_int(tg_topology_node_set_unschedulable(t, 1, true), TG_OK,
	       "cordon node-2");

	is_int(tg_topology_build(t, &ei), TG_OK, "build");
	is_int(tg_topology_build(t, &ei), TG_ESTATE, "build twice: TG_ESTATE");
	like(ei.msg, "already built", "build twice: says why");
	is_int(tg_topology_add_node(t, "node-3", path, NULL), TG_ESTATE,
	       "add_node after build: TG_ESTATE");
	is_int(tg_topology_nnodes(t), 2, "still two nodes");
	CHECK(t, "nodes");
	tg_topology_destroy(t);
	free(big);
}

/* ---- resources ---- */

static void test_resources(void)
{
	tg_topology *t = tg_topology_create();
	const char *path[1] = { "r1" };
	unsigned id = 99, ib, huge, i;
	tg_node_id n0, n1;
	tg_shape sh;
	tg_alloc_spec a;
	char name[32];
	tg_err err = TG_OK;

	is_int(tg_topology_nresources(t), 4, "four built-in resources");
	is_str(tg_topology_resource_name(t, TG_RES_CPU), "cpu", "id 0: cpu");
	is_str(tg_topology_resource_name(t, TG_RES_MEMORY), "memory",
	       "id 1: memory");
	is_str(tg_topology_resource_name(t, TG_RES_GPU), "nvidia.com/gpu",
	       "id 2: nvidia.com/gpu");
	is_str(tg_topology_resource_name(t, TG_RES_PODS), "pods",
	       "id 3: pods");
	ok(tg_topology_resource_name(t, 4) == NULL, "id 4: none yet");
	tg_topology_resource(t, "memory", &id);
	is_int(id, TG_RES_MEMORY, "interning 'memory' gives its id");
	tg_topology_resource(t, "gpu", &id);
	is_int(id, TG_RES_GPU, "'gpu' is an alias of nvidia.com/gpu");
	is_int(tg_topology_resource(t, "", &id), TG_EINVAL,
	       "resource: empty name");
	is_int(tg_topology_resource(t, "x", NULL), TG_EINVAL,
	       "resource: NULL id");
	is_int(tg_topology_resource(t, "rdma/ib", &ib), TG_OK,
	       "intern rdma/ib");
	is_int(ib, 4, "rdma/ib gets id 4");
	tg_topology_resource(t, "rdma/ib", &id);
	is_int(id, ib, "interning twice gives the same id");
	is_int(tg_topology_nresources(t), 5, "five resources");

	tg_topology_add_layer(t, "rack", NULL);
	tg_topology_add_node(t, "n0", path, &n0);
	tg_topology_node_set_resource(t, n0, TG_RES_CPU, 4000);
	tg_topology_node_set_resource(t, n0, TG_RES_MEMORY, 1ll << 34);
	tg_topology_node_set_resource(t, n0, ib, 2);
	/* a resource interned after nodes exist: the per-node columns
	 * grow and keep what the nodes had */
	is_int(tg_topology_resource(t, "hugepages-2Mi", &huge), TG_OK,
	       "intern a resource after a node exists");
	is_int(huge, 5, "hugepages-2Mi gets id 5");
	is_int(tg_topology_node_allocatable(t, n0, huge), 0,
	       "a new resource is 0 on an existing node");
	is_int(tg_topology_node_set_resource(t, n0, huge, 1ll << 30), TG_OK,
	       "set the new resource on the existing node");
	is_int(tg_topology_node_allocatable(t, n0, TG_RES_CPU), 4000,
	       "cpu kept when the columns grow");
	is_int(tg_topology_node_allocatable(t, n0, TG_RES_MEMORY), 1ll << 34,
	       "memory kept when the columns grow");
	is_int(tg_topology_node_allocatable(t, n0, ib), 2,
	       "rdma/ib kept when the columns grow");
	is_int(tg_topology_node_free(t, n0, huge), 1ll << 30,
	       "hugepages free");
	tg_topology_add_node(t, "n1", path, &n1);
	tg_topology_node_set_resource(t, n1, TG_RES_CPU, 2000);
	is_int(tg_topology_node_allocatable(t, n1, huge), 0,
	       "a node added later starts at 0");
	is_int(tg_topology_build(t, NULL), TG_OK, "build");
	CHECK(t, "resources");

	/* allocations, then one more resource: the allocation shapes grow
	 * too, and removing an old allocation gives back the right amounts */
	memset(&sh, 0, sizeof(sh));
	sh.v[TG_RES_CPU] = 1000;
	sh.v[ib] = 1;
	memset(&a, 0, sizeof(a));
	a.pod = "old";
	a.node = n0;
	a.shape = &sh;
	is_int(tg_topology_add_alloc(t, &a), TG_OK, "allocation before the "
	       "next resource");
	is_int(tg_topology_resource(t, "example.com/fpga", &id), TG_OK,
	       "intern a resource after build and allocations");
	sh.v[id] = 1;
	a.pod = "new";
	a.node = n1;
	is_int(tg_topology_node_set_resource(t, n1, id, 2), TG_OK,
	       "set the late resource");
	is_int(tg_topology_add_alloc(t, &a), TG_OK,
	       "allocation using the late resource");
	is_int(tg_topology_node_free(t, n1, id), 1, "fpga: 2 - 1");
	is_int(tg_topology_node_free(t, n0, TG_RES_CPU), 3000,
	       "n0 cpu: 4000 - 1000");
	is_int(tg_topology_node_free(t, n0, ib), 1, "n0 rdma/ib: 2 - 1");
	CHECK(t, "late resource");
	is_int(tg_topology_remove_alloc(t, "old"), TG_OK, "remove old");
	is_int(tg_topology_node_free(t, n0, TG_RES_CPU), 4000,
	       "n0 cpu given back");
	is_int(tg_topology_node_free(t, n0, ib), 2, "n0 rdma/ib given back");
	is_int(tg_topology_node_free(t, n0, id), 0, "n0 fpga untouched");
	CHECK(t, "after removing an allocation older than a resource");

	for (i = tg_topology_nresources(t); i < TG_MAX_RESOURCES && !err;
	     i++) {
		snprintf(name, sizeof(name), "example.com/r%u", i);
		err = tg_topology_resource(t, name, &id);
	}
	is_int(err, TG_OK, "resources up to TG_MAX_RESOURCES");
	is_int(tg_topology_nresources(t), TG_MAX_RESOURCES,
	       "TG_MAX_RESOURCES resources");
	is_int(tg_topology_resource(t, "one-too-many", &id), TG_ELIMIT,
	       "one more: TG_ELIMIT");
	is_int(tg_topology_resource(t, "cpu", &id), TG_OK,
	       "an existing name still interns at the limit");
	/* the last resource can be set and allocated */
	is_int(tg_topology_node_set_resource(t, n0, TG_MAX_RESOURCES - 1, 5),
	       TG_OK, "set the last resource");
	memset(&sh, 0, sizeof(sh));
	sh.v[TG_MAX_RESOURCES - 1] = 2;
	a.pod = "last";
	a.node = n0;
	a.shape = &sh;
	is_int(tg_topology_add_alloc(t, &a), TG_OK, "allocate the last one");
	is_int(tg_topology_node_free(t, n0, TG_MAX_RESOURCES - 1), 3,
	       "last resource: 5 - 2");
	CHECK(t, "all resources");
	tg_topology_destroy(t);
}

/* ---- build: the domain tree ---- */

static const char *seed12[][3] = {
	{ "node-0", "spine-0", "block-0" }, { "node-1", "spine-0", "block-0" },
	{ "node-2", "spine-0", "block-0" }, { "node-3", "spine-0", "block-1" },
	{ "node-4", "spine-0", "block-1" }, { "node-5", "spine-1", "block-2" },
	{ "node-6", "spine-1", "block-2" }, { "node-7", "spine-1", "block-3" },
	{ "node-8", "spine-1", "block-3" }, { "node-9", "spine-2", "block-4" },
	{ "node-10", "spine-2", "block-4" },
	{ "node-11", "spine-2", "block-4" },
};

static tg_topology *mk2(const char *l0, const char *l1, const char *k1,
			const char *spec[][3], unsigned n)
{
	tg_topology *t = tg_topology_create();
	unsigned i;

	tg_topology_add_layer(t, l0, NULL);
	tg_topology_add_layer(t, l1, k1);
	for (i = 0; i < n; i++) {
		const char *path[2] = { spec[i][1], spec[i][2] };
		tg_node_id id;

		tg_topology_add_node(t, spec[i][0], path, &id);
		tg_topology_node_set_resource(t, id, TG_RES_CPU, 8000);
		tg_topology_node_set_resource(t, id, TG_RES_PODS, 110);
	}
	return t;
}

static void test_build(void)
{
	tg_topology *t = mk2("SpineLayer", "BlockLayer", NULL, seed12, 12);
	tg_domain_id d, b3;
	tg_node_id n;
	bool ok_layers = true;
	unsigned i;

	is_int(tg_topology_ndomains(t), 0, "no domains before build");
	ok(tg_topology_node_domain(t, 0) == TG_NONE,
	   "no node domain before build");
	is_int(tg_topology_build(t, NULL), TG_OK, "seed: build");
	CHECK(t, "seed");
	is_int(tg_topology_nwarnings(t), 0, "seed: no warnings");
	is_int(tg_topology_ndomains(t), 1 + 3 + 5,
	       "seed: root, 3 spines, 5 blocks");
	is_str(tg_topology_domain_path(t, 0), "", "root path is empty");
	is_str(tg_topology_domain_value(t, 0), "", "root value is empty");
	ok(tg_topology_domain_layer(t, 0) == TG_NONE, "root layer: TG_NONE");
	ok(tg_topology_domain_parent(t, 0) == TG_NONE,
	   "root parent: TG_NONE");
	b3 = dom(t, "spine-1/block-3");
	ok(b3 != TG_NONE, "spine-1/block-3 exists");
	is_str(tg_topology_domain_path(t, b3), "spine-1/block-3", "its path");
	is_str(tg_topology_domain_value(t, b3), "block-3", "its bare value");
	is_int(tg_topology_domain_layer(t, b3), 1, "its layer");
	d = tg_topology_domain_parent(t, b3);
	is_str(tg_topology_domain_path(t, d), "spine-1", "its parent");
	is_int(tg_topology_domain_layer(t, d), 0, "the parent's layer");
	is_int(tg_topology_domain_parent(t, d), 0, "spine-1's parent: root");
	tg_topology_node_find(t, "node-8", &n);
	is_int(tg_topology_node_domain(t, n), b3, "node-8 in block-3");
	for (d = 1; d < tg_topology_ndomains(t); d++) {
		tg_domain_id p = tg_topology_domain_parent(t, d);
		unsigned l = tg_topology_domain_layer(t, d);

		if (l == TG_NONE || l >= 2 ||
		    (l == 0 && p != 0) ||
		    (l == 1 && tg_topology_domain_layer(t, p) != 0))
			ok_layers = false;
	}
	ok(ok_layers, "seed: every domain's parent is one layer up");
	ok(tg_topology_domain_path(t, 100) == NULL &&
	   tg_topology_domain_value(t, 100) == NULL &&
	   tg_topology_domain_layer(t, 100) == TG_NONE &&
	   tg_topology_domain_parent(t, 100) == TG_NONE,
	   "domain accessors out of range");
	for (i = 0; i < 12; i++) {
		tg_domain_id leaf = tg_topology_node_domain(t, i);
		char want[64];

		snprintf(want, sizeof(want), "%s/%s", seed12[i][1],
			 seed12[i][2]);
		if (strcmp(tg_topology_domain_path(t, leaf), want))
			break;
	}
	is_int(i, 12, "every node's leaf domain is its full path");
	tg_topology_destroy(t);
}

/* two block-1 under different spines are two domains */
static void test_same_value(void)
{
	static const char *n[][3] = {
		{ "a", "spine-1", "block-1" }, { "b", "spine-2", "block-1" },
		{ "c", "spine-1", "block-1" },
	};
	tg_topology *t = mk2("spine", "block", NULL, n, 3);
	tg_domain_id d1, d2;

	is_int(tg_topology_build(t, NULL), TG_OK, "same value: build");
	CHECK(t, "same value");
	is_int(tg_topology_ndomains(t), 5, "root, 2 spines, 2 blocks");
	d1 = dom(t, "spine-1/block-1");
	d2 = dom(t, "spine-2/block-1");
	ok(d1 != TG_NONE && d2 != TG_NONE && d1 != d2,
	   "spine-1/block-1 and spine-2/block-1 are two domains");
	is_str(tg_topology_domain_value(t, d1), "block-1", "value of one");
	is_str(tg_topology_domain_value(t, d2), "block-1", "value of other");
	is_int(tg_topology_node_domain(t, 0), d1, "a in spine-1/block-1");
	is_int(tg_topology_node_domain(t, 1), d2, "b in spine-2/block-1");
	is_int(tg_topology_node_domain(t, 2), d1, "c in spine-1/block-1");
	is_int(tg_topology_domain_find(t, "block-1", NULL), TG_ENOENT,
	       "a bare value is not a path");
	is_int(tg_topology_nwarnings(t), 1, "one hygiene warning");
	like(tg_topology_warning(t, 0), "value block-1 appears under "
	     "spine-1 and spine-2", "the warning names both parents");
	tg_topology_destroy(t);
}

/*
 * The same check past a layer of more than 4,096 domains: 5,000 racks
 * (rack-N under zone-N) above two block-x under two racks.  The old
 * pairwise look stopped after the first such layer and said nothing.
 */
static void test_same_value_big(void)
{
	tg_topology *t = tg_topology_create();
	char name[32], zone[32], rack[32];
	const char *path[3];
	unsigned i, dup = 0;

	tg_topology_add_layer(t, "zone", NULL);
	tg_topology_add_layer(t, "rack", NULL);
	tg_topology_add_layer(t, "block", NULL);
	for (i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "n%u", i);
		snprintf(zone, sizeof(zone), "zone-%u", i);
		snprintf(rack, sizeof(rack), "rack-%u", i);
		path[0] = zone;
		path[1] = rack;
		path[2] = i < 2 ? "block-x" : name;
		tg_topology_add_node(t, name, path, NULL);
	}
	is_int(tg_topology_build(t, NULL), TG_OK, "big layer: build");
	for (i = 0; i < tg_topology_nwarnings(t); i++)
		dup += strstr(tg_topology_warning(t, i), "value block-x appears "
			      "under zone-0/rack-0 and zone-1/rack-1") != NULL;
	is_int(dup, 1, "a value under two parents is found in a layer after "
	       "one of 5,000 domains");
	tg_topology_destroy(t);
}

/* Full paths compared label by label with tg_name_cmp(), farthest
 * first: the tree order. */
static int path_cmp(const char *a, const char *b)
{
	char x[256], y[256], *p, *q, *sp, *sq;
	int c;

	snprintf(x, sizeof(x), "%s", a);
	snprintf(y, sizeof(y), "%s", b);
	p = x;
	q = y;
	for (;;) {
		sp = strchr(p, '/');
		sq = strchr(q, '/');
		if (sp)
			*sp = '\0';
		if (sq)
			*sq = '\0';
		if ((c = tg_name_cmp(p, q)))
			return c;
		if (!sp || !sq)
			return sp ? 1 : sq ? -1 : 0;
		p = sp + 1;
		q = sq + 1;
	}
}

/* nodes and domains in natural path order, whatever the input order */
static void test_order(void)
{
	static const char *n[][3] = {
		{ "n-10", "s-10", "b-1" }, { "n-2", "s-2", "b-10" },
		{ "n-1", "s-2", "b-2" }, { "n-11", "s-2", "b-10" },
		{ "n-3", "s-10", "b-1" }, { "n-9", "s-2", "b-10" },
		{ "n-20", "s-1", "b-3" }, { "n-100", "s-2", "b-10" },
	};
	/* the same cluster in another input order */
	static const unsigned perm[] = { 7, 3, 0, 6, 1, 5, 2, 4 };
	const char *m[8][3];
	tg_topology *t = mk2("spine", "block", NULL, n, 8), *u;
	char *pic, *pic2;
	const char *p1, *p2, *p3, *p4;
	unsigned i, l;
	bool sorted = true;

	is_int(tg_topology_build(t, NULL), TG_OK, "order: build");
	CHECK(t, "order");
	for (l = 0; l < 2; l++) {
		tg_domain_id d, prev = TG_NONE;

		for (d = 1; d < tg_topology_ndomains(t); d++) {
			if (tg_topology_domain_layer(t, d) != l)
				continue;
			if (prev != TG_NONE &&
			    path_cmp(tg_topology_domain_path(t, prev),
				     tg_topology_domain_path(t, d)) >= 0) {
				sorted = false;
				diag("%s before %s",
				     tg_topology_domain_path(t, prev),
				     tg_topology_domain_path(t, d));
			}
			prev = d;
		}
	}
	ok(sorted, "order: domain ids of a layer follow natural path order");
	ok(dom(t, "s-1") < dom(t, "s-2") && dom(t, "s-2") < dom(t, "s-10"),
	   "order: s-1 < s-2 < s-10");
	ok(dom(t, "s-2/b-2") < dom(t, "s-2/b-10"), "order: b-2 < b-10");
	pic = tg_draw(t, NULL);
	p1 = strstr(pic, " n-2 ");
	p2 = strstr(pic, " n-9 ");
	p3 = strstr(pic, " n-11 ");
	p4 = strstr(pic, " n-100\n");
	ok(p1 && p2 && p3 && p4 && p1 < p2 && p2 < p3 && p3 < p4,
	   "order: nodes of a block drawn n-2 n-9 n-11 n-100");
	p1 = strstr(pic, "spine s-1:");
	p2 = strstr(pic, "spine s-2:");
	p3 = strstr(pic, "spine s-10:");
	ok(p1 && p2 && p3 && p1 < p2 && p2 < p3,
	   "order: spines drawn s-1 s-2 s-10");
	if (!p1 || !p2 || !p3)
		diag("%s", pic);

	for (i = 0; i < 8; i++) {
		m[i][0] = n[perm[i]][0];
		m[i][1] = n[perm[i]][1];
		m[i][2] = n[perm[i]][2];
	}
	u = mk2("spine", "block", NULL, m, 8);
	BUILD(u, "order, shuffled input");
	pic2 = tg_draw(u, NULL);
	is_str(pic2, pic, "order: the same tree drawn from shuffled input");
	for (i = 0; i < tg_topology_ndomains(t); i++)
		if (strcmp(tg_topology_domain_path(t, i),
			   tg_topology_domain_path(u, i)))
			break;
	is_int(i, tg_topology_ndomains(t),
	       "order: the same domain ids from shuffled input");
	tg_free(pic);
	tg_free(pic2);
	tg_topology_destroy(u);
	tg_topology_destroy(t);

	/*
	 * The order is label by label, not tg_name_cmp() on the joined
	 * path: that one can interleave subtrees ("a01/x" < "a1/y" <
	 * "a01/z"), and '-' sorts before '/' ("s-1/b" < "s/b").
	 */
	{
		static const char *v[][3] = {
			{ "n1", "s-1", "b" }, { "n2", "s", "b" },
			{ "n3", "a01", "x" }, { "n4", "a1", "y" },
			{ "n5", "a01", "z" },
		};

		t = mk2("spine", "block", NULL, v, 5);
		BUILD(t, "label by label");
		ok(dom(t, "s/b") < dom(t, "s-1/b") &&
		   tg_name_cmp("s-1/b", "s/b") < 0,
		   "order: s/b before s-1/b (the spine decides, 's' < 's-1')");
		ok(dom(t, "a1/y") < dom(t, "a01/x") &&
		   dom(t, "a01/x") < dom(t, "a01/z"),
		   "order: a1/y, a01/x, a01/z (a01's blocks stay together)");
		tg_topology_destroy(t);
	}
}

/* missing labels: warned, left out of the tree, never silently used */
static void test_warnings(void)
{
	static const char *n[][3] = {
		{ "ok-1", "s1", "b1" },
		{ "no-block", "s1", NULL },
		{ "no-spine", NULL, "b1" },
		{ "nothing", NULL, NULL },
		{ "ok-2", "s1", "b1" },
	};
	tg_topology *t = mk2("spine", "block", "example.com/block", n, 5);
	tg_node_id id;
	char *pic;

	tg_topology_add_node(t, "no-path", NULL, &id);
	is_int(tg_topology_build(t, NULL), TG_OK, "warnings: build");
	CHECK(t, "warnings");
	is_int(tg_topology_nwarnings(t), 4, "warnings: one per node left out");
	like(tg_topology_warning(t, 0), "node no-block: no example.com/block "
	     "label (layer block); left out",
	     "warnings: the label key and the layer are named");
	like(tg_topology_warning(t, 1), "node no-spine: no spine label",
	     "warnings: a value below a missing one names the missing one");
	like(tg_topology_warning(t, 2), "node nothing: no spine label",
	     "warnings: no labels at all names the first layer");
	like(tg_topology_warning(t, 3), "node no-path: no spine label",
	     "warnings: a NULL path");
	ok(tg_topology_warning(t, 4) == NULL, "warning out of range: NULL");
	tg_topology_node_find(t, "no-block", &id);
	ok(tg_topology_node_domain(t, id) == TG_NONE,
	   "warnings: a node left out has no domain");
	tg_topology_node_find(t, "ok-2", &id);
	ok(tg_topology_node_domain(t, id) == dom(t, "s1/b1"),
	   "warnings: complete nodes are in the tree");
	is_int(tg_topology_nnodes(t), 6, "warnings: nodes left out are kept");
	pic = tg_draw(t, NULL);
	like(pic, "outside the tree (missing labels): no-block no-path "
	     "no-spine nothing", "warnings: draw lists them in name order");
	tg_free(pic);
	tg_topology_destroy(t);

	/* a warning is never cut: names at their limit make it over the
	 * 511 bytes it was cut at */
	{
		char layer[254], key[254], node[254], want[300];

		memset(layer, 'l', 253);
		memset(key, 'k', 253);
		memset(node, 'n', 253);
		layer[253] = key[253] = node[253] = '\0';
		t = tg_topology_create();
		tg_topology_add_layer(t, layer, key);
		tg_topology_add_node(t, node, NULL, &id);
		is_int(tg_topology_build(t, NULL), TG_OK,
		       "long warning: build");
		ok(strlen(tg_topology_warning(t, 0)) > 770,
		   "long warning: whole (%zu bytes)",
		   strlen(tg_topology_warning(t, 0)));
		snprintf(want, sizeof(want), "(layer %s); left out of "
			 "topology-aware placement", layer);
		like(tg_topology_warning(t, 0), want,
		     "long warning: ends as it should");
		tg_topology_destroy(t);
	}
}

/* the accelerator-layer rule: a node missing only its accelerator label
 * (the last layer) is its own accelerator domain */
static void test_accel_rule(void)
{
	static const char *n[][3] = {
		{ "gpu-1", "b1", "nvl-a" }, { "gpu-2", "b1", NULL },
		{ "gpu-3", NULL, "nvl-a" }, { "gpu-4", NULL, NULL },
	};
	static const char *const accel[][2] = {
		{ "NVLinkDomain", NULL }, { "gpuset", "nvidia.com/gpu.clique" },
		{ "AcceleratorLayer", NULL }, { "nvl72", NULL },
		{ "rail", "example.com/IMEX-channel" },
	};
	tg_topology *t;
	tg_domain_id d;
	tg_node_id id;
	unsigned i;

	for (i = 0; i < sizeof(accel) / sizeof(accel[0]); i++) {
		t = mk2("block", accel[i][0], accel[i][1], n, 4);
		BUILD(t, accel[i][0]);
		d = dom(t, "b1/gpu-2");
		tg_topology_node_find(t, "gpu-2", &id);
		ok(d != TG_NONE && tg_topology_node_domain(t, id) == d,
		   "accel %s: gpu-2 is its own domain b1/gpu-2", accel[i][0]);
		is_int(tg_topology_nwarnings(t), 3, "accel %s: 3 warnings",
		       accel[i][0]);
		like(tg_topology_warning(t, 0), "node gpu-2: no ",
		     "accel %s: gpu-2 still warned about", accel[i][0]);
		like(tg_topology_warning(t, 0), "treated as its own",
		     "accel %s: ... as its own domain", accel[i][0]);
		like(tg_topology_warning(t, 1), "node gpu-3: no block label",
		     "accel %s: missing the block: left out", accel[i][0]);
		like(tg_topology_warning(t, 2), "node gpu-4: no block label",
		     "accel %s: missing both: left out", accel[i][0]);
		tg_topology_node_find(t, "gpu-4", &id);
		ok(tg_topology_node_domain(t, id) == TG_NONE,
		   "accel %s: gpu-4 outside the tree", accel[i][0]);
		tg_topology_destroy(t);
	}

	/* not an accelerator layer: no own domain */
	t = mk2("block", "rack", NULL, n, 4);
	BUILD(t, "rack layer");
	tg_topology_node_find(t, "gpu-2", &id);
	ok(tg_topology_node_domain(t, id) == TG_NONE,
	   "rack layer: gpu-2 left out");
	like(tg_topology_warning(t, 0), "left out", "rack layer: says so");
	tg_topology_destroy(t);

	/* the accelerator layer is not the last one: no own domain */
	t = tg_topology_create();
	tg_topology_add_layer(t, "nvlink", NULL);
	tg_topology_add_layer(t, "host-group", NULL);
	{
		const char *path[2] = { NULL, "h1" };

		tg_topology_add_node(t, "x", path, &id);
	}
	BUILD(t, "accelerator layer above another");
	ok(tg_topology_node_domain(t, id) == TG_NONE,
	   "accelerator layer above another: the rule does not apply");
	tg_topology_destroy(t);

	/* a single accelerator layer: the rule needs a layer above it */
	t = tg_topology_create();
	tg_topology_add_layer(t, "nvlink", NULL);
	tg_topology_add_node(t, "x", NULL, &id);
	BUILD(t, "single accelerator layer");
	ok(tg_topology_node_domain(t, id) == TG_NONE,
	   "single accelerator layer: node left out");
	is_int(tg_topology_nwarnings(t), 1, "single accelerator layer: warned");
	tg_topology_destroy(t);
}

/* ---- allocations ---- */

static tg_topology *gpu_cluster(void)
{
	static const uint8_t isl[8] = { 0, 0, 0, 0, 1, 1, 1, 1 };
	tg_topology *t = tg_topology_create();
	unsigned i;
	char name[16];

	tg_topology_add_layer(t, "rack", NULL);
	for (i = 0; i < 4; i++) {
		const char *path[1] = { i < 2 ? "r1" : "r2" };
		tg_node_id id;

		snprintf(name, sizeof(name), "g%u", i);
		tg_topology_add_node(t, name, path, &id);
		tg_topology_node_set_resource(t, id, TG_RES_CPU, 64000);
		tg_topology_node_set_resource(t, id, TG_RES_MEMORY, 1ll << 40);
		tg_topology_node_set_resource(t, id, TG_RES_PODS, 8);
		tg_topology_node_set_gpus(t, id, 8, isl);
	}
	BUILD(t, "gpu cluster");
	return t;
}

static void test_allocs(void)
{
	tg_topology *t = tg_topology_create();
	tg_alloc_spec a;
	tg_shape sh;

	memset(&a, 0, sizeof(a));
	memset(&sh, 0, sizeof(sh));
	a.pod = "p";
	tg_topology_add_node(t, "n", NULL, NULL);
	is_int(tg_topology_add_alloc(t, &a), TG_ESTATE,
	       "add_alloc before build: TG_ESTATE");
	tg_topology_destroy(t);

	t = gpu_cluster();
	is_int(tg_topology_add_alloc(t, NULL), TG_EINVAL, "add_alloc: NULL");
	a.pod = NULL;
	is_int(tg_topology_add_alloc(t, &a), TG_EINVAL,
	       "add_alloc: NULL pod");
	a.pod = "p";
	a.node = 4;
	is_int(tg_topology_add_alloc(t, &a), TG_EINVAL,
	       "add_alloc: unknown node");
	a.node = 0;
	a.shape = &sh;
	sh.v[TG_RES_CPU] = -1;
	is_int(tg_topology_add_alloc(t, &a), TG_EINVAL,
	       "add_alloc: negative request");
	sh.v[TG_RES_CPU] = 0;
	sh.v[7] = 1;
	is_int(tg_topology_add_alloc(t, &a), TG_EINVAL,
	       "add_alloc: a resource id that was never interned");
	sh.v[7] = 0;
	is_int(tg_topology_nallocs(t), 0, "rejected allocations not added");

	/* the library picks GPUs: the tightest island, lowest first */
	sh.v[TG_RES_CPU] = 4000;
	sh.v[TG_RES_MEMORY] = 1ll << 30;
	sh.v[TG_RES_GPU] = 2;
	a.pod = "ns/a";
	a.gang = "ns/g";
	is_int(tg_topology_add_alloc(t, &a), TG_OK, "add ns/a");
	is_int(tg_topology_nallocs(t), 1, "one allocation");
	is_int(tg_topology_node_free(t, 0, TG_RES_CPU), 60000, "cpu taken");
	is_int(tg_topology_node_free(t, 0, TG_RES_MEMORY),
	       (1ll << 40) - (1ll << 30), "memory taken");
	is_int(tg_topology_node_free(t, 0, TG_RES_GPU), 6, "2 GPUs taken");
	is_int(tg_topology_node_free(t, 0, TG_RES_PODS), 7,
	       "one pod slot taken (by default)");
	ok(tg_topology_node_free_gpus(t, 0) == 0xfc,
	   "GPUs 0 and 1 taken: mask 0x%llx",
	   (unsigned long long)tg_topology_node_free_gpus(t, 0));
	CHECK(t, "one allocation");

	/* explicit GPU indices are honoured */
	a.pod = "ns/b";
	a.gang = NULL;
	a.gpus = 0x30;
	is_int(tg_topology_add_alloc(t, &a), TG_OK, "add ns/b on GPUs 4,5");
	ok(tg_topology_node_free_gpus(t, 0) == 0xcc,
	   "GPUs 4 and 5 taken: mask 0x%llx",
	   (unsigned long long)tg_topology_node_free_gpus(t, 0));
	/* some given, the rest picked: the tightest island left */
	a.pod = "ns/c";
	a.gpus = 0x40;
	sh.v[TG_RES_GPU] = 3;
	is_int(tg_topology_add_alloc(t, &a), TG_OK,
	       "add ns/c: GPU 6 given, 2 more picked");
	ok(tg_topology_node_free_gpus(t, 0) == 0x80,
	   "ns/c got 6, then 2,3 (the tightest island that holds two, "
	   "not 7): mask 0x%llx",
	   (unsigned long long)tg_topology_node_free_gpus(t, 0));
	is_int(tg_topology_node_free(t, 0, TG_RES_GPU), 1,
	       "GPU count: 8 - 2 - 2 - 3");
	CHECK(t, "three allocations");

	/* duplicates are refused and change nothing */
	a.pod = "ns/a";
	a.node = 1;
	a.gpus = 0;
	is_int(tg_topology_add_alloc(t, &a), TG_EEXIST, "duplicate pod");
	is_int(tg_topology_nallocs(t), 3, "still three allocations");
	is_int(tg_topology_node_free(t, 1, TG_RES_CPU), 64000,
	       "the duplicate took nothing");
	CHECK(t, "after a duplicate");

	is_int(tg_topology_remove_alloc(t, "ns/zzz"), TG_ENOENT,
	       "remove an unknown pod: TG_ENOENT");
	is_int(tg_topology_remove_alloc(t, NULL), TG_EINVAL,
	       "remove NULL: TG_EINVAL");
	is_int(tg_topology_remove_alloc(NULL, "ns/a"), TG_EINVAL,
	       "remove from NULL: TG_EINVAL");
	is_int(tg_topology_remove_alloc(t, "ns/b"), TG_OK, "remove ns/b");
	ok(tg_topology_node_free_gpus(t, 0) == 0xb0,
	   "GPUs 4,5 back, 7 still free: mask 0x%llx",
	   (unsigned long long)tg_topology_node_free_gpus(t, 0));
	is_int(tg_topology_remove_alloc(t, "ns/b"), TG_ENOENT,
	       "remove twice: TG_ENOENT");
	is_int(tg_topology_nallocs(t), 2, "two allocations");
	CHECK(t, "after a remove");

	/* set_gpus refuses to redefine GPUs that are handed out */
	is_int(tg_topology_node_set_gpus(t, 0, 4, NULL), TG_ESTATE,
	       "set_gpus with GPUs in use: TG_ESTATE");

	/* over-commit is recorded: free goes negative, check() agrees */
	sh.v[TG_RES_CPU] = 100000;
	sh.v[TG_RES_GPU] = 0;
	a.pod = "big";
	a.node = 2;
	is_int(tg_topology_add_alloc(t, &a), TG_OK, "an over-committing pod");
	is_int(tg_topology_node_free(t, 2, TG_RES_CPU), 64000 - 100000,
	       "free cpu below zero");
	CHECK(t, "over-commit");
	is_int(tg_topology_remove_alloc(t, "big"), TG_OK, "remove big");
	is_int(tg_topology_remove_alloc(t, "ns/a"), TG_OK, "remove ns/a");
	is_int(tg_topology_remove_alloc(t, "ns/c"), TG_OK, "remove ns/c");
	is_int(tg_topology_nallocs(t), 0, "no allocations");
	ok(tg_topology_node_free_gpus(t, 0) == 0xff &&
	   tg_topology_node_free(t, 0, TG_RES_CPU) == 64000 &&
	   tg_topology_node_free(t, 2, TG_RES_CPU) == 64000,
	   "everything given back");
	a.pod = "ns/a";
	a.node = 3;
	is_int(tg_topology_add_alloc(t, &a), TG_OK,
	       "a removed pod name can be added again");
	CHECK(t, "re-added");
	is_int(tg_topology_node_set_resource(t, 3, TG_RES_CPU, 200000), TG_OK,
	       "grow a node's cpu with work on it");
	is_int(tg_topology_node_free(t, 3, TG_RES_CPU), 100000,
	       "free follows: 200000 - 100000");
	CHECK(t, "resized node");
	tg_topology_destroy(t);
}

/* xorshift64*, for the random add/remove walk */
static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ull;
}

#define NPODS 64

/* Many adds and removes against a shadow model: the pod table must
 * find every live pod (linear probing with removals), free amounts
 * must match, and check() must pass after every step. */
static void test_alloc_churn(void)
{
	tg_topology *t = gpu_cluster();
	bool live[NPODS] = { false };
	unsigned node[NPODS], gpus[NPODS];
	int64_t cpu[NPODS];
	unsigned step, i, nlive = 0, bad_ret = 0, bad_free = 0, bad_check = 0;
	char pod[32];
	tg_errinfo ei;

	for (step = 0; step < 3000; step++) {
		unsigned p = (unsigned)(rnd() % NPODS);
		tg_err err, want;

		snprintf(pod, sizeof(pod), "ns/pod-%u", p);
		if (rnd() % 2) {
			tg_shape sh;
			tg_alloc_spec a;

			memset(&sh, 0, sizeof(sh));
			memset(&a, 0, sizeof(a));
			sh.v[TG_RES_CPU] = (int64_t)(rnd() % 8) * 1000;
			sh.v[TG_RES_GPU] = (int64_t)(rnd() % 3);
			a.pod = pod;
			a.gang = p % 3 ? "ns/gang" : NULL;
			a.node = (tg_node_id)(rnd() % 4);
			a.shape = &sh;
			want = live[p] ? TG_EEXIST : TG_OK;
			/* no GPU left: the pod still counts them */
			err = tg_topology_add_alloc(t, &a);
			if (err == TG_OK && !live[p]) {
				live[p] = true;
				node[p] = a.node;
				cpu[p] = sh.v[TG_RES_CPU];
				gpus[p] = (unsigned)sh.v[TG_RES_GPU];
				nlive++;
			}
		} else {
			want = live[p] ? TG_OK : TG_ENOENT;
			err = tg_topology_remove_alloc(t, pod);
			if (err == TG_OK && live[p]) {
				live[p] = false;
				nlive--;
			}
		}
		if (err != want && !bad_ret++)
			diag("step %u: %s: got %s, want %s", step, pod,
			     tg_strerror(err), tg_strerror(want));
		if (tg_topology_check(t, &ei) != TG_OK && !bad_check++)
			diag("step %u: check: %s", step, ei.msg);
		if (tg_topology_nallocs(t) != nlive && !bad_free++)
			diag("step %u: nallocs %u, want %u", step,
			     tg_topology_nallocs(t), nlive);
		if (step % 97 == 0 || step == 2999) {
			int64_t want_cpu[4] = { 64000, 64000, 64000, 64000 };
			int64_t want_gpu[4] = { 8, 8, 8, 8 };

			for (i = 0; i < NPODS; i++)
				if (live[i]) {
					want_cpu[node[i]] -= cpu[i];
					want_gpu[node[i]] -= gpus[i];
				}
			for (i = 0; i < 4; i++)
				if ((tg_topology_node_free(t, i, TG_RES_CPU) !=
				     want_cpu[i] ||
				     tg_topology_node_free(t, i, TG_RES_GPU) !=
				     want_gpu[i]) && !bad_free++)
					diag("step %u: node %u free differs",
					     step, i);
		}
	}
	ok(!bad_ret, "churn: 3000 adds/removes return what the shadow "
	   "model expects (%u bad)", bad_ret);
	ok(!bad_check, "churn: check() passes after every step (%u bad)",
	   bad_check);
	ok(!bad_free, "churn: allocation count and free amounts match the "
	   "shadow model (%u bad)", bad_free);
	for (i = 0; i < NPODS; i++)
		if (live[i]) {
			snprintf(pod, sizeof(pod), "ns/pod-%u", i);
			if (tg_topology_remove_alloc(t, pod) != TG_OK)
				break;
		}
	is_int(i, NPODS, "churn: every live pod can be removed");
	is_int(tg_topology_nallocs(t), 0, "churn: none left");
	for (i = 0; i < 4; i++)
		if (tg_topology_node_free(t, i, TG_RES_CPU) != 64000 ||
		    tg_topology_node_free(t, i, TG_RES_PODS) != 8 ||
		    tg_topology_node_free_gpus(t, i) != 0xff)
			break;
	is_int(i, 4, "churn: every node back to empty");
	CHECK(t, "churn end");
	tg_topology_destroy(t);
}

/*
 * Allocation classes (shape, priority, expiry, budget, preemptible are
 * interned): many distinct classes, a resource added after allocations
 * exist (wider rows), compaction of removed allocations and of the
 * classes only they used; amounts and priorities survive all of it.
 */
static void test_alloc_classes(void)
{
	tg_topology *t = gpu_cluster();
	tg_alloc_spec a;
	tg_shape sh;
	tg_gang *g;
	tg_decision *d = NULL;
	unsigned i, fpga, bad = 0, nv;
	char pod[32];

	memset(&a, 0, sizeof(a));
	memset(&sh, 0, sizeof(sh));
	a.shape = &sh;
	a.pod = pod;
	a.preemptible = true;
	for (i = 0; i < 2000; i++) {
		snprintf(pod, sizeof(pod), "c-%u", i);
		sh.v[TG_RES_CPU] = 1 + i % 7;
		a.priority = (int64_t)i;	/* 2000 classes */
		a.node = i % 4;
		if (tg_topology_add_alloc(t, &a) != TG_OK)
			bad++;
	}
	ok(!bad, "classes: 2000 allocations of distinct classes added");
	CHECK(t, "classes: distinct");
	ok(tg_topology_resource(t, "example.com/fpga", &fpga) == TG_OK &&
	   tg_topology_node_set_resource(t, 1, fpga, 4) == TG_OK,
	   "classes: a resource added after allocations");
	sh.v[TG_RES_CPU] = 1000;
	sh.v[fpga] = 3;
	snprintf(pod, sizeof(pod), "fpga-user");
	a.node = 1;
	a.priority = 7;
	ok(tg_topology_add_alloc(t, &a) == TG_OK, "classes: an allocation "
	   "with the new resource (wider rows)");
	is_int(tg_topology_node_free(t, 1, fpga), 1, "classes: 1 FPGA left");
	sh.v[fpga] = 0;
	sh.v[TG_RES_CPU] = 3;
	snprintf(pod, sizeof(pod), "old-shape");
	a.priority = 3;		/* c-3's class; rows widened since */
	ok(tg_topology_add_alloc(t, &a) == TG_OK, "classes: an old class "
	   "again");
	CHECK(t, "classes: after widening");
	for (i = 0; i < 2000; i++) {
		snprintf(pod, sizeof(pod), "c-%u", i);
		if (tg_topology_remove_alloc(t, pod) != TG_OK)
			bad++;
	}
	ok(!bad, "classes: all 2000 removed");
	/* a decision compacts the 2000 removed allocations and their
	 * classes; then fill node g0's GPUs with priority-5 work and
	 * preempt it */
	sh.v[TG_RES_CPU] = 1000;
	sh.v[TG_RES_GPU] = 8;
	g = tg_gang_create("hi");
	tg_gang_add_podset(g, "w", &sh, 4, &i);
	tg_gang_set_priority(g, 100);
	tg_gang_set_can_preempt(g, true);
	ok(tg_place(t, g, &d, NULL) == TG_OK &&
	   tg_decision_status(d) == TG_STATUS_PLACED,
	   "classes: a decision (compacts)");
	tg_decision_free(d);
	d = NULL;
	CHECK(t, "classes: after compaction");
	is_int(tg_topology_nallocs(t), 2, "classes: 2 allocations left");
	is_int(tg_topology_node_free(t, 1, fpga), 1,
	       "classes: the FPGA still taken");
	sh.v[TG_RES_GPU] = 2;
	sh.v[TG_RES_CPU] = 1000;
	for (i = 0; i < 16; i++) {
		snprintf(pod, sizeof(pod), "low-%u", i);
		a.node = i / 4;
		a.priority = 5 + i % 2;
		a.gang = "low";
		if (tg_topology_add_alloc(t, &a) != TG_OK)
			bad++;
	}
	a.gang = NULL;
	ok(!bad, "classes: 16 low-priority allocations");
	ok(tg_place(t, g, &d, NULL) == TG_OK &&
	   tg_decision_status(d) == TG_STATUS_PREEMPTING,
	   "classes: the high-priority gang preempts");
	nv = d ? tg_decision_nvictims(d) : 0;
	for (i = 0; i < nv; i++) {
		const tg_victim *v = tg_decision_victim(d, i);
		unsigned k = (unsigned)atoi(v->pod + 4);

		if (v->priority != 5 + (int64_t)(k % 2))
			bad++;
	}
	ok(nv == 16 && !bad, "classes: 16 victims with their own priorities "
	   "(%u, %u wrong)", nv, bad);
	tg_decision_free(d);
	tg_gang_destroy(g);
	CHECK(t, "classes: end");
	tg_topology_destroy(t);
}

/* ---- bandwidth ---- */

static void bw_is(const tg_topology *t, unsigned layer, double want,
		  const char *what)
{
	double got = tg_topology_layer_bandwidth(t, layer);

	if (!ok(got == want, "bandwidth %s", what))
		diag("got %g, want %g", got, want);
}

static tg_topology *layered(const char *const names[][2], unsigned n)
{
	tg_topology *t = tg_topology_create();
	unsigned i;

	for (i = 0; i < n; i++)
		tg_topology_add_layer(t, names[i][0], names[i][1]);
	tg_topology_add_node(t, "n", NULL, NULL);
	return t;
}

static void test_bandwidth(void)
{
	static const char *const plain[][2] = {
		{ "region", NULL }, { "zone", NULL }, { "spine", NULL },
		{ "block", NULL }, { "rack", NULL },
	};
	static const char *const gpu[][2] = {
		{ "spine", NULL }, { "block", NULL }, { "NVLinkDomain", NULL },
	};
	static const char *const keyed[][2] = {
		{ "block", NULL }, { "gpuset", "nvidia.com/gpu.clique" },
	};
	static const char *const acc[][2] = {
		{ "spine", NULL }, { "accelerator", NULL },
	};
	tg_topology *t;

	t = layered(plain, 0);
	BUILD(t, "bandwidth, no layers");
	bw_is(t, 0, 7200, "no layers: inside a node");
	bw_is(t, TG_NONE, 400, "no layers: across the cluster");
	tg_topology_destroy(t);

	t = layered(plain, 5);
	bw_is(t, 4, 0, "before build: not computed");
	BUILD(t, "bandwidth, 5 layers");
	bw_is(t, 5, 7200, "inside a node");
	bw_is(t, 4, 400, "rack (closest to the nodes): 400");
	bw_is(t, 3, 200, "block: 200");
	bw_is(t, 2, 100, "spine: 100");
	bw_is(t, 1, 50, "zone: 50");
	bw_is(t, 0, 50, "region: 50 (the floor tier)");
	bw_is(t, TG_NONE, 25, "across the root: half the top layer");
	bw_is(t, 6, 0, "past the node level: 0");
	tg_topology_destroy(t);

	t = layered(gpu, 3);
	BUILD(t, "bandwidth, NVLink");
	bw_is(t, 2, 7200, "NVLinkDomain: 7200");
	bw_is(t, 1, 400, "block below no switch layer: 400");
	bw_is(t, 0, 200, "spine: 200");
	bw_is(t, TG_NONE, 100, "root: 100");
	tg_topology_destroy(t);

	t = layered(keyed, 2);
	BUILD(t, "bandwidth, clique key");
	bw_is(t, 1, 7200, "a key with 'clique': 7200");
	bw_is(t, 0, 400, "block above it: 400");
	tg_topology_destroy(t);

	t = layered(acc, 2);
	BUILD(t, "bandwidth, accelerator");
	bw_is(t, 1, 7200, "accelerator: 7200");
	tg_topology_destroy(t);

	/* setters: before build they survive the defaults, after build
	 * they apply at once and the root follows the top layer */
	t = layered(plain, 3);
	is_int(tg_topology_set_layer_bandwidth(t, 1, 800), TG_OK,
	       "set layer 1 before build");
	BUILD(t, "bandwidth setters");
	bw_is(t, 1, 800, "a set value survives build");
	bw_is(t, 2, 400, "the others keep their default");
	is_int(tg_topology_set_layer_bandwidth(t, 0, 300), TG_OK,
	       "set layer 0 after build");
	bw_is(t, 0, 300, "layer 0 set");
	bw_is(t, TG_NONE, 150, "the root follows layer 0");
	is_int(tg_topology_set_node_bandwidth(t, 3600), TG_OK,
	       "set the node bandwidth");
	bw_is(t, 3, 3600, "inside a node");
	is_int(tg_topology_set_layer_bandwidth(t, 3, 10), TG_EINVAL,
	       "set_layer_bandwidth: the node level is not a layer");
	is_int(tg_topology_set_layer_bandwidth(t, 0, 0), TG_EINVAL,
	       "set_layer_bandwidth: 0");
	is_int(tg_topology_set_layer_bandwidth(t, 0, -5), TG_EINVAL,
	       "set_layer_bandwidth: negative");
	is_int(tg_topology_set_layer_bandwidth(t, 0, NAN), TG_EINVAL,
	       "set_layer_bandwidth: NaN");
	is_int(tg_topology_set_node_bandwidth(t, 0), TG_EINVAL,
	       "set_node_bandwidth: 0");
	bw_is(t, 0, 300, "rejected values change nothing");
	tg_topology_destroy(t);

	/* the node bandwidth set before the layers exist stays the node's */
	t = tg_topology_create();
	is_int(tg_topology_set_node_bandwidth(t, 1000), TG_OK,
	       "set the node bandwidth first");
	tg_topology_add_layer(t, "spine", NULL);
	tg_topology_add_layer(t, "rack", NULL);
	BUILD(t, "bandwidth, node first");
	bw_is(t, 2, 1000, "node bandwidth set before the layers");
	bw_is(t, 0, 200, "spine keeps its default");
	tg_topology_destroy(t);
}

/* ---- domain_find ---- */

static void test_domain_find(void)
{
	tg_topology *t = mk2("SpineLayer", "BlockLayer", NULL, seed12, 12);
	tg_domain_id d = 1234;

	BUILD(t, "domain_find");
	is_int(tg_topology_domain_find(t, "spine-1/block-3", &d), TG_OK,
	       "find spine-1/block-3");
	is_str(tg_topology_domain_path(t, d), "spine-1/block-3",
	       "found the right one");
	is_int(tg_topology_domain_find(t, "spine-2", &d), TG_OK,
	       "find a layer-0 domain");
	is_int(tg_topology_domain_layer(t, d), 0, "on layer 0");
	is_int(tg_topology_domain_find(t, "", &d), TG_OK, "find the root");
	is_int(d, 0, "the root is domain 0");
	d = 1234;
	is_int(tg_topology_domain_find(t, "spine-1/block-0", &d), TG_ENOENT,
	       "block-0 is not under spine-1");
	is_int(d, 1234, "*id untouched when not found");
	is_int(tg_topology_domain_find(t, "block-3", &d), TG_ENOENT,
	       "a bare value is not found");
	is_int(tg_topology_domain_find(t, "spine-1/block-3/node-7", &d),
	       TG_ENOENT, "nodes are not domains");
	is_int(tg_topology_domain_find(t, NULL, &d), TG_EINVAL, "NULL path");
	is_int(tg_topology_domain_find(NULL, "", &d), TG_EINVAL,
	       "NULL topology");
	is_int(tg_topology_domain_find(t, "spine-0", NULL), TG_OK,
	       "NULL id is allowed");
	tg_topology_destroy(t);
}

int main(void)
{
	test_layers();
	test_nodes();
	test_resources();
	test_build();
	test_same_value();
	test_same_value_big();
	test_order();
	test_warnings();
	test_accel_rule();
	test_allocs();
	test_alloc_churn();
	test_alloc_classes();
	test_bandwidth();
	test_domain_find();
	return done_testing();
}
