/*
 * tests/unit/test_export.c - one fabric, every format: topology.conf (tree
 * and block), node labels, the KAI / Kueue / Koordinator resources, JSON;
 * and the round trips back through the loaders:
 *
 *   export --slurm-tree, tg_topoconf_load()           -> the same tree
 *   export --slurm-block, tg_topoconf_load()          -> the same blocks
 *   export labels, Node objects through tg_k8s_add()  -> the same tree
 *   export a CR + labelled Nodes through tg_k8s_add() -> the same tree
 *
 * "The same tree" is tg_topology_compare() finding no disagreement.
 * Inputs: $TG_SRCDIR/tests/data/discover and tests/data/topologies;
 * expected outputs in tests/data/discover/expected (TG_REGEN=1 rewrites).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "topogang/topogang.h"
#include "tap.h"
#include "oom.h"
#include "testdata.h"

enum { FAB_IB, FAB_NETQ, FAB_CRUX, CONF };

typedef struct input {
	const char *name;	/* for messages */
	int kind;
	const char *file;	/* under tests/data/discover or topologies */
	const char *rule;
} input;

static const input inputs[] = {
	{ "ib", FAB_IB, "ibnetdiscover_dgx_h100_ndr_superpod.out",
	  "match=*-dgx-*" },
	{ "ib-all", FAB_IB, "ibnetdiscover_dgx_h100_ndr_superpod.out", NULL },
	{ "netq", FAB_NETQ, "netq_topology_graph.json", NULL },
	{ "crux", FAB_CRUX, "alibaba_crux_2023_clos_topo.csv", NULL },
	{ "ci-tree", CONF, "slurm_tree_topograph_ci_expected.conf", NULL },
	{ "nstda", CONF, "slurm_tree_site_nstda_tara.conf", NULL },
	{ "ci-block", CONF, "slurm_block_topograph_ci_expected.conf", NULL },
};

static tg_topology *load(const input *in)
{
	tg_topology *t = tg_topology_create();
	tg_errinfo ei = { "" };
	tg_err err;

	if (in->kind == CONF) {
		err = tg_topoconf_load_file(t, td_path("topologies", in->file),
					    &ei);
	} else {
		tg_fabric *f = tg_fabric_create();
		tg_fabric_format fmt = in->kind == FAB_IB ?
			TG_FABRIC_IBNETDISCOVER : in->kind == FAB_NETQ ?
			TG_FABRIC_NETQ : TG_FABRIC_CSV;

		err = tg_fabric_set_hostmap(f, in->rule, &ei);
		if (!err)
			err = tg_fabric_add_file(f, fmt,
					td_path("discover", in->file), &ei);
		if (!err)
			err = tg_fabric_build(f, t, &ei);
		tg_fabric_destroy(f);
	}
	if (!err)
		err = tg_topology_build(t, &ei);
	if (err) {
		ok(0, "%s: loads", in->name);
		diag("%s", ei.msg);
		tg_topology_destroy(t);
		return NULL;
	}
	return t;
}

static char *export(const tg_topology *t, tg_export_format fmt,
		    const tg_export_opts *o, const char *what)
{
	tg_errinfo ei = { "" };
	char *out = NULL;
	tg_err err = tg_export(t, fmt, o, &out, &ei);

	if (err) {
		ok(0, "%s: exports", what);
		diag("%s", ei.msg);
	}
	return out;
}

/* Compares two built topologies; TAP-asserts no disagreement. */
static void same_tree(const tg_topology *a, const tg_topology *b,
		      const char *what)
{
	tg_errinfo ei = { "" };
	char *report = NULL;
	unsigned ndiff = 99;

	is_int(tg_topology_compare(a, "original", b, "reloaded", &report,
				   &ndiff, &ei), TG_OK, "%s: compares", what);
	is_int(ndiff, 0, "%s: the same tree", what);
	if (ndiff && report)
		diag("%.2000s", report);
	is_int(tg_topology_nnodes(a), tg_topology_nnodes(b),
	       "%s: the same node count", what);
	tg_free(report);
}

/* Checks a reloaded copy, where there is one, against the original
 * (with \p depth: and that it has as many layers), and frees it. */
static void reloaded(const tg_topology *t, tg_topology *back, bool depth,
		     const char *what)
{
	if (back) {
		same_tree(t, back, what);
		if (depth)
			is_int(tg_topology_nlayers(back),
			       tg_topology_nlayers(t), "%s: same depth", what);
	}
	tg_topology_destroy(back);
}

/* For layer la of a and lb of b: the same partition of common nodes. */
static bool same_partition(const tg_topology *a, unsigned la,
			   const tg_topology *b, unsigned lb)
{
	unsigned na = tg_topology_ndomains(a), nb = tg_topology_ndomains(b);
	unsigned *ab = calloc(na + 1, sizeof(unsigned));
	unsigned *ba = calloc(nb + 1, sizeof(unsigned));
	unsigned n;
	bool same = ab && ba;

	for (n = 0; same && n < tg_topology_nnodes(a); n++) {
		tg_node_id m;
		tg_domain_id da = tg_topology_node_domain(a, n), db;

		if (tg_topology_node_find(b, tg_topology_node_name(a, n), &m))
			continue;
		db = tg_topology_node_domain(b, m);
		if (da == TG_NONE || db == TG_NONE) {
			same = da == db;
			continue;
		}
		while (tg_topology_domain_layer(a, da) > la)
			da = tg_topology_domain_parent(a, da);
		while (tg_topology_domain_layer(b, db) > lb)
			db = tg_topology_domain_parent(b, db);
		if (!ab[da])
			ab[da] = db + 1;
		if (!ba[db])
			ba[db] = da + 1;
		same = ab[da] == db + 1 && ba[db] == da + 1;
	}
	free(ab);
	free(ba);
	return same;
}

static tg_topology *load_conf_text(const char *text, const char *what)
{
	tg_topology *t = tg_topology_create();
	tg_errinfo ei = { "" };
	tg_err err = tg_topoconf_load(t, text, strlen(text), what, &ei);

	if (!err)
		err = tg_topology_build(t, &ei);
	is_int(err, TG_OK, "%s: topology.conf loads back", what);
	if (err) {
		diag("%s", ei.msg);
		tg_topology_destroy(t);
		return NULL;
	}
	return t;
}

/* Node objects carrying the labels of a merge-patch list. */
static char *nodes_from_patch(const char *patch)
{
	cJSON *list = cJSON_Parse(patch), *e, *out = cJSON_CreateArray();
	char *s = NULL;

	if (!list || !out)
		goto done;
	cJSON_ArrayForEach(e, list) {
		cJSON *n = cJSON_CreateObject(), *md, *st, *al, *lc;
		cJSON *labels = cJSON_GetObjectItem(cJSON_GetObjectItem(
			cJSON_GetObjectItem(e, "patch"), "metadata"),
			"labels");
		const char *name = cJSON_GetStringValue(
			cJSON_GetObjectItem(e, "name"));

		cJSON_AddItemToArray(out, n);
		cJSON_AddStringToObject(n, "apiVersion", "v1");
		cJSON_AddStringToObject(n, "kind", "Node");
		md = cJSON_AddObjectToObject(n, "metadata");
		cJSON_AddStringToObject(md, "name", name);
		/* the kubelet's own label, which a Topology whose last level
		 * is kubernetes.io/hostname needs on every node */
		lc = cJSON_Duplicate(labels, 1);
		cJSON_AddStringToObject(lc, "kubernetes.io/hostname", name);
		cJSON_AddItemToObject(md, "labels", lc);
		st = cJSON_AddObjectToObject(n, "status");
		al = cJSON_AddObjectToObject(st, "allocatable");
		cJSON_AddStringToObject(al, "cpu", "8");
		cJSON_AddStringToObject(al, "pods", "110");
	}
	s = cJSON_PrintUnformatted(out);
done:
	cJSON_Delete(list);
	cJSON_Delete(out);
	return s;
}

/* The k8s loader's topology from Node objects and an optional CR. */
static tg_topology *load_k8s(const char *nodes, const char *cr,
			     const char *what)
{
	tg_k8s *k = tg_k8s_create();
	tg_topology *t = NULL;
	tg_errinfo ei = { "" };
	tg_err err = TG_OK;

	if (cr)
		err = tg_k8s_add(k, cr, strlen(cr), "cr.yaml", &ei);
	if (!err)
		err = tg_k8s_add(k, nodes, strlen(nodes), "nodes.json", &ei);
	if (!err)
		err = tg_k8s_build(k, &t, &ei);
	is_int(err, TG_OK, "%s: the Kubernetes loader reads it", what);
	if (err)
		diag("%s", ei.msg);
	tg_k8s_destroy(k);
	return t;
}

static void test_round_trips(void)
{
	size_t i;

	for (i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		const input *in = &inputs[i];
		tg_topology *t = load(in), *back;
		char what[128], *out, *nodes;
		unsigned lb;

		if (!t)
			continue;
		/* tree */
		snprintf(what, sizeof(what), "%s tree", in->name);
		out = export(t, TG_EXPORT_SLURM_TREE, NULL, what);
		reloaded(t, out ? load_conf_text(out, what) : NULL, true,
			 what);
		tg_free(out);

		/* block: the lowest layer's blocks */
		snprintf(what, sizeof(what), "%s block", in->name);
		out = export(t, TG_EXPORT_SLURM_BLOCK, NULL, what);
		back = out ? load_conf_text(out, what) : NULL;
		if (back) {
			lb = tg_topology_layer_find(back, "block");
			ok(lb != TG_NONE && same_partition(t,
					tg_topology_nlayers(t) - 1, back, lb),
			   "%s: the same blocks", what);
		}
		tg_topology_destroy(back);
		tg_free(out);

		/* labels, read back by the Kubernetes loader */
		if (in->kind == CONF && !strcmp(in->name, "ci-block")) {
			tg_topology_destroy(t);
			continue;	/* only block aggregates: below */
		}
		snprintf(what, sizeof(what), "%s labels", in->name);
		out = export(t, TG_EXPORT_K8S_PATCH, NULL, what);
		nodes = out ? nodes_from_patch(out) : NULL;
		ok(nodes != NULL, "%s: the patch list is JSON", what);
		reloaded(t, nodes ? load_k8s(nodes, NULL, what) : NULL, true,
			 what);
		tg_free(out);

		/* each CR with the labelled Nodes */
		{
			static const struct {
				tg_export_format fmt;
				const char *name;
			} crs[] = {
				{ TG_EXPORT_KAI_TOPOLOGY, "KAI Topology" },
				{ TG_EXPORT_KUEUE_TOPOLOGY, "Kueue Topology" },
				{ TG_EXPORT_KOORDINATOR,
				  "ClusterNetworkTopology" },
			};
			size_t c;

			for (c = 0; nodes && c < 3; c++) {
				snprintf(what, sizeof(what), "%s %s",
					 in->name, crs[c].name);
				out = export(t, crs[c].fmt, NULL, what);
				reloaded(t, out ? load_k8s(nodes, out, what) :
					 NULL, false, what);
				tg_free(out);
			}
		}
		free(nodes);
		tg_topology_destroy(t);
	}
}

/* Golden outputs of the DGX SuperPOD capture and the Crux table. */
static void test_golden(void)
{
	static const struct {
		tg_export_format fmt;
		const char *file;
	} ib[] = {
		{ TG_EXPORT_SLURM_BLOCK, "ibnetdiscover.block.conf" },
		{ TG_EXPORT_K8S_LABELS, "ibnetdiscover.labels.sh" },
		{ TG_EXPORT_K8S_PATCH, "ibnetdiscover.patch.json" },
		{ TG_EXPORT_KAI_TOPOLOGY, "ibnetdiscover.kai.yaml" },
		{ TG_EXPORT_KUEUE_TOPOLOGY, "ibnetdiscover.kueue.yaml" },
		{ TG_EXPORT_KOORDINATOR, "ibnetdiscover.koordinator.yaml" },
	};
	tg_topology *t = load(&inputs[0]);
	char *out, *again;
	size_t i;

	for (i = 0; t && i < sizeof(ib) / sizeof(ib[0]); i++) {
		out = export(t, ib[i].fmt, NULL, ib[i].file);
		td_golden(out, "discover", ib[i].file, "ib");
		again = export(t, ib[i].fmt, NULL, ib[i].file);
		is_str(again, out, "%s: the same output twice", ib[i].file);
		tg_free(out);
		tg_free(again);
	}
	out = t ? export(t, TG_EXPORT_K8S_LABELS, NULL, "labels") : NULL;
	like(out, "\nkubectl label node a05-p1-dgx-01-c01 --overwrite "
	     "fabric.topograph.run/tier-1=A10-P1-IBSPINE-01 "
	     "fabric.topograph.run/tier-0=A09-P1-IBLEAF-01-01\n",
	     "ib: a kubectl label command per node");
	tg_free(out);
	tg_topology_destroy(t);

	t = load(&inputs[3]);
	out = t ? export(t, TG_EXPORT_SLURM_BLOCK, NULL, "crux block") : NULL;
	td_golden(out, "discover", "crux.block.conf", "crux");
	like(out, "# each PSW gets 64 consecutive blocks (empty ones added) "
	     "so that blocks of 128 nodes line up with it\n",
	     "crux block: padded to line up with the PSWs");
	like(out, "\nBlockSizes=2,4,8,16,32,64,128,256\n",
	     "crux block: BlockSizes from the smallest ToR (2 hosts)");
	tg_free(out);
	/* the aggregate of 64 blocks is exactly a PSW */
	out = t ? export(t, TG_EXPORT_SLURM_BLOCK, NULL, "crux block") : NULL;
	if (out) {
		tg_topology *back = load_conf_text(out, "crux block");

		if (back) {
			unsigned l = tg_topology_layer_find(back, "block128");

			ok(l != TG_NONE && same_partition(t, 1, back, l),
			   "crux block: block128 aggregates are the PSWs");
			tg_topology_destroy(back);
		}
	}
	tg_free(out);
	{
		tg_export_opts o;
		static const unsigned sizes[] = { 4, 8 };

		memset(&o, 0, sizeof(o));
		o.no_pad = true;
		o.block_sizes = sizes;
		o.nblock_sizes = 2;
		out = t ? export(t, TG_EXPORT_SLURM_BLOCK, &o, "no pad") :
			  NULL;
		ok(out && !strstr(out, "BlockName=pad"), "no_pad: no "
		   "placeholders");
		like(out, "\nBlockSizes=4,8\n", "given block sizes");
		tg_free(out);
		o.block_layer = 1;
		o.block_layer_set = true;
		o.block_sizes = NULL;
		o.nblock_sizes = 0;
		out = t ? export(t, TG_EXPORT_SLURM_BLOCK, &o, "PSW blocks") :
			  NULL;
		like(out, "BlockName=P8 Nodes=", "block_layer: PSW blocks");
		like(out, "\nBlockSizes=179,358\n", "block_layer: sizes from "
		     "the smallest PSW");
		tg_free(out);
	}
	tg_topology_destroy(t);
}

/* Label keys, values and the JSON dump. */
static void test_keys_values(void)
{
	char buf[64], kb[300], long70[71];
	tg_topology *t;
	tg_export_opts o;
	const char *keys[3] = { "a/x", NULL, "a/z" };
	char *out;
	cJSON *j;

	is_str(tg_export_label_value("A09-P1-IBLEAF-01-02", buf),
	       "A09-P1-IBLEAF-01-02", "a valid value stays");
	memset(long70, 'a', 70);
	long70[70] = '\0';
	out = (char *)tg_export_label_value(long70, buf);
	ok(out == buf && buf[0] == 'x' && strlen(buf) == 17,
	   "a 70-byte value becomes x + 16 hex digits (%s)", buf);
	is_str(tg_export_label_value("S-2c5e/ab", buf),
	       tg_export_label_value("S-2c5e/ab", kb), "hashing is stable");
	ok(tg_export_label_value("-x", buf) == buf, "a value must start "
	   "with a letter or digit");
	is_str(tg_export_label_value("", buf), "", "the empty value is valid");

	t = load(&inputs[4]);	/* tree: switch-l2 > l1 > l0 */
	if (t) {
		is_str(tg_export_label_key(t, 0, NULL, kb, sizeof(kb)),
		       "fabric.topograph.run/tier-2", "tree: top is tier-2");
		is_str(tg_export_label_key(t, 2, NULL, kb, sizeof(kb)),
		       "fabric.topograph.run/tier-0", "tree: leaf is tier-0");
		memset(&o, 0, sizeof(o));
		o.keys = keys;
		o.nkeys = 3;
		is_str(tg_export_label_key(t, 0, &o, kb, sizeof(kb)), "a/x",
		       "keys given");
		ok(tg_export_label_key(t, 1, &o, kb, sizeof(kb)) == NULL,
		   "a NULL key leaves the layer out");
		out = export(t, TG_EXPORT_K8S_LABELS, &o, "given keys");
		like(out, "kubectl label node srv1101 --overwrite "
		     "a/x=switch.3.1 a/z=switch.1.1\n", "given keys: labels");
		tg_free(out);
		out = export(t, TG_EXPORT_KAI_TOPOLOGY, &o, "given keys");
		is_str(out, "apiVersion: kai.scheduler/v1alpha1\n"
		       "kind: Topology\nmetadata:\n  name: default\nspec:\n"
		       "  levels:\n  - nodeLabel: a/x\n  - nodeLabel: a/z\n"
		       "  - nodeLabel: kubernetes.io/hostname\n",
		       "KAI Topology: levels in order, hostname last");
		tg_free(out);
		o.name = "dgx";
		out = export(t, TG_EXPORT_KUEUE_TOPOLOGY, &o, "name");
		like(out, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\n"
		     "metadata:\n  name: dgx\n", "Kueue Topology: the name");
		tg_free(out);
		keys[1] = "a/x";
		{
			tg_errinfo ei = { "" };

			is_int(tg_export(t, TG_EXPORT_K8S_LABELS, &o, &out,
					 &ei), TG_EINVAL, "one key twice");
			like(ei.msg, "layers switch-l2 and switch-l1 would "
			     "both be written as label a/x",
			     "one key twice: message");
			o.nkeys = 2;
			is_int(tg_export(t, TG_EXPORT_K8S_LABELS, &o, &out,
					 &ei), TG_EINVAL, "wrong key count");
			like(ei.msg, "2 label keys for 3 layers",
			     "wrong key count: message");
		}
		out = export(t, TG_EXPORT_KOORDINATOR, NULL, "koordinator");
		like(out, "  - topologyLayer: SwitchL2Layer\n"
		     "    parentTopologyLayer: ClusterTopologyLayer\n"
		     "    labelKey:\n    - fabric.topograph.run/tier-2\n",
		     "Koordinator: CamelCase layer names");
		like(out, "  - topologyLayer: NodeTopologyLayer\n"
		     "    parentTopologyLayer: SwitchL0Layer\n",
		     "Koordinator: the node layer last");
		tg_free(out);
		out = export(t, TG_EXPORT_JSON, NULL, "json");
		j = out ? cJSON_Parse(out) : NULL;
		ok(j != NULL, "JSON: parses");
		is_int(cJSON_GetArraySize(cJSON_GetObjectItem(j, "layers")),
		       3, "JSON: 3 layers");
		is_int(cJSON_GetArraySize(cJSON_GetObjectItem(j, "nodes")),
		       96, "JSON: 96 nodes");
		is_str(cJSON_GetStringValue(cJSON_GetObjectItem(
			cJSON_GetArrayItem(cJSON_GetObjectItem(j, "nodes"),
					   0), "path")),
		       "switch.3.1/switch.2.1/switch.1.1", "JSON: a path");
		cJSON_Delete(j);
		tg_free(out);
		tg_topology_destroy(t);
	}

	t = load(&inputs[6]);	/* block32 > block16 > block */
	if (t) {
		is_str(tg_export_label_key(t, 2, NULL, kb, sizeof(kb)),
		       "accelerator.topograph.run/domain",
		       "blocks: the base block is the accelerator domain");
		ok(tg_export_label_key(t, 0, NULL, kb, sizeof(kb)) == NULL,
		   "blocks: Slurm's aggregates get no label");
		out = export(t, TG_EXPORT_SLURM_BLOCK, NULL, "ci block");
		like(out, "BlockName=rack11 Nodes=srv[1101-1108]\n"
		     "BlockName=rack12 Nodes=srv[1201-1208]\n",
		     "blocks: written back in order");
		like(out, "\nBlockSizes=8,16,32,64\n",
		     "blocks: sizes inferred like topograph");
		ok(out && !strstr(out, "pad"), "blocks: no padding under "
		   "aggregate layers");
		tg_free(out);
		tg_topology_destroy(t);
	}
}

static tg_topology *hand(const char *const *rows, unsigned n)
{
	tg_topology *t = tg_topology_create();
	unsigned i;

	tg_topology_add_layer(t, "spine", NULL);
	tg_topology_add_layer(t, "leaf", NULL);
	for (i = 0; i < n; i++) {
		const char *path[2] = { rows[3 * i + 1], rows[3 * i + 2] };

		tg_topology_add_node(t, rows[3 * i], path[0] ? path : NULL,
				     NULL);
	}
	tg_topology_build(t, NULL);
	return t;
}

static void test_compare_and_errors(void)
{
	static const char *const a_rows[] = {
		"n1", "s1", "l1", "n2", "s1", "l1", "n3", "s1", "l2",
		"n4", "s2", "l3", "n6", "s2", "l3",
	};
	static const char *const b_rows[] = {
		"n1", "x1", "a", "n2", "x1", "b", "n3", "x1", "b",
		"n5", "x2", "c", "n6", NULL, NULL,
	};
	tg_topology *a = hand(a_rows, 5), *b = hand(b_rows, 5), *e;
	tg_errinfo ei = { "" };
	char *report = NULL, *out = NULL;
	unsigned ndiff = 0;

	is_int(tg_topology_compare(a, "topology.conf", a, "itself", &report,
				   &ndiff, &ei), TG_OK, "compare to itself");
	is_int(ndiff, 0, "itself: no disagreement");
	is_str(report, "", "itself: empty report");
	tg_free(report);
	is_int(tg_topology_compare(a, "topology.conf", b, "cluster", &report,
				   &ndiff, &ei), TG_OK, "compare two");
	like(report, "1 node only in topology.conf: n4\n", "only in A");
	like(report, "1 node only in cluster: n5\n", "only in B");
	like(report, "1 node in topology.conf's tree is outside cluster's "
	     "tree: n6\n", "left out of one tree");
	like(report, "leaf: topology.conf s1/l1 holds nodes that cluster "
	     "puts in 2 leaf domains: x1/a (n1); x1/b (n2)\n", "a split");
	like(report, "leaf: cluster x1/b holds nodes that topology.conf puts "
	     "in 2 leaf domains: s1/l1 (n2); s1/l2 (n3)\n", "a merge");
	is_int(ndiff, 5, "five disagreements");
	tg_free(report);
	{
		/* every layer left out: the label writers have nothing */
		static const char *const none[2] = { NULL, NULL };
		static const tg_export_format f[] = {
			TG_EXPORT_K8S_LABELS, TG_EXPORT_K8S_PATCH,
			TG_EXPORT_KOORDINATOR,
		};
		tg_export_opts o;
		unsigned i;

		memset(&o, 0, sizeof(o));
		o.keys = none;
		o.nkeys = 2;
		for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
			out = NULL;
			is_int(tg_export(a, f[i], &o, &out, &ei), TG_EINVAL,
			       "format %u, no label key: refused", f[i]);
			like(ei.msg, "no layer has a label key",
			     "format %u: says why", f[i]);
			ok(!out, "format %u: nothing written", f[i]);
		}
	}

	e = tg_topology_create();
	is_int(tg_export(e, TG_EXPORT_SLURM_TREE, NULL, &out, &ei),
	       TG_ESTATE, "export before build");
	tg_topology_build(e, NULL);
	is_int(tg_export(e, TG_EXPORT_SLURM_TREE, NULL, &out, &ei),
	       TG_EINVAL, "export without layers");
	like(ei.msg, "no layers: nothing to write", "no layers: message");
	is_int(tg_topology_compare(e, NULL, NULL, NULL, &report, &ndiff, &ei),
	       TG_EINVAL, "compare with NULL");
	tg_topology_destroy(e);
	{
		static const char *const rows[] = { "n1", "s[1]", "l1" };
		static const unsigned bad[] = { 4, 6 };
		tg_export_opts o;

		e = hand(rows, 1);
		is_int(tg_export(e, TG_EXPORT_SLURM_TREE, NULL, &out, &ei),
		       TG_EINVAL, "a switch name topology.conf cannot hold");
		like(ei.msg, "switch 's[1]' (s[1]) cannot be written",
		     "bad name: message");
		out = NULL;
		is_int(tg_export(e, TG_EXPORT_K8S_LABELS, NULL, &out, &ei),
		       TG_OK, "labels hash it instead");
		like(out, "fabric.topograph.run/tier-1=x", "hashed value");
		tg_free(out);
		memset(&o, 0, sizeof(o));
		o.block_sizes = bad;
		o.nblock_sizes = 2;
		is_int(tg_export(a, TG_EXPORT_SLURM_BLOCK, &o, &out, &ei),
		       TG_EINVAL, "block sizes 4,6");
		like(ei.msg, "power-of-two multiples", "block sizes: message");
		o.nblock_sizes = 0;
		o.block_layer = 7;
		o.block_layer_set = true;
		is_int(tg_export(a, TG_EXPORT_SLURM_BLOCK, &o, &out, &ei),
		       TG_EINVAL, "block layer out of range");
		is_int(tg_export(a, (tg_export_format)99, NULL, &out, &ei),
		       TG_EINVAL, "unknown format");
		tg_topology_destroy(e);
	}
	tg_topology_destroy(a);
	tg_topology_destroy(b);
}


/* Shapes the fuzzer found (tests/fuzz/README.md). */
static tg_topology *from_csv(const char *csv)
{
	tg_fabric *f = tg_fabric_create();
	tg_topology *t = tg_topology_create();
	tg_errinfo ei = { "" };
	tg_err err = tg_fabric_add(f, TG_FABRIC_CSV, csv, strlen(csv), "r.csv",
				   &ei);

	if (!err)
		err = tg_fabric_build(f, t, &ei);
	if (!err)
		err = tg_topology_build(t, &ei);
	tg_fabric_destroy(f);
	if (err) {
		diag("%s", ei.msg);
		tg_topology_destroy(t);
		return NULL;
	}
	return t;
}

static void test_fuzz_regressions(void)
{
	tg_topology *t;
	tg_fabric *f;
	tg_errinfo ei = { "" };
	char *out;

	/* a PSW named like its DSW is a switch of its own */
	t = from_csv("ip,DSW,PSW,ASW\nh0,G6,P10,S12\nh3,G6,G6,PS2\n"
		     "h4,G6,P8,S1\n");
	ok(t != NULL, "a PSW named like its DSW: loads");
	out = t ? export(t, TG_EXPORT_SLURM_TREE, NULL, "G6 under G6") : NULL;
	like(out, "SwitchName=G6 Switches=G6_G6,G6_P[8,10]\n",
	     "a PSW named like its DSW: written as G6_G6");
	reloaded(t, out ? load_conf_text(out, "G6 under G6") : NULL, false,
		 "G6 under G6");
	tg_free(out);
	out = t ? export(t, TG_EXPORT_SLURM_BLOCK, NULL, "G6 blocks") : NULL;
	ok(out != NULL, "a PSW named like its DSW: block form too");
	tg_free(out);
	tg_topology_destroy(t);

	/* one host under "1" under "1": one switch on two levels */
	t = from_csv("ip,DSW,ASW\nh,1,1\n");
	out = t ? export(t, TG_EXPORT_SLURM_TREE, NULL, "1 under 1") : NULL;
	like(out, "levels\nSwitchName=1 Nodes=h\n", "a switch whose only "
	     "child has its name is written once");
	tg_free(out);
	tg_topology_destroy(t);

	/* a repeated leaf name under two 250-byte spines: written with its
	 * path, it would pass TG_MAX_NAME and the loader would refuse the
	 * file (fuzz_fabric, issue 12) */
	{
		char s1[251], s2[251];
		const char *rows[] = { "n1", s1, "tor", "n2", s2, "tor" };
		tg_err err;

		memset(s1, 'a', 250);
		s1[250] = '\0';
		memcpy(s2, s1, sizeof(s2));
		s2[249] = 'b';
		t = hand(rows, 2);
		out = NULL;
		err = tg_export(t, TG_EXPORT_SLURM_TREE, NULL, &out, &ei);
		is_int(err, TG_ELIMIT, "a qualified switch name over "
		       "TG_MAX_NAME: refused at export");
		like(ei.msg, "is 254 bytes, longer than 253 (TG_MAX_NAME)",
		     "long qualified name: message names the limit");
		tg_free(out);
		tg_topology_destroy(t);
	}

	/* an ibnetdiscover file without a single link */
	f = tg_fabric_create();
	t = tg_topology_create();
	is_int(tg_fabric_add(f, TG_FABRIC_IBNETDISCOVER, "Switch 2 \"S-a\"\n",
			     15, "nolinks.out", &ei), TG_OK,
	       "a switch without links parses");
	is_int(tg_fabric_build(f, t, &ei), TG_EINVAL, "and has no host");
	like(ei.msg, "nolinks.out: no host is attached to a switch",
	     "no links: message");
	tg_fabric_destroy(f);
	tg_topology_destroy(t);
}

/* ---- allocation failures: every call from the Nth on fails ---- */

/* Fabrics (one with NVLink domains), build, every export, a comparison;
 * the first error. */
static tg_err oom_scenario(void *ctx)
{
	static const char csv[] =
		"host,spine,leaf\nn1,s1,l1\nn2,s1,l1\nn3,s1,l2\nn4,s2,l3\n";
	static const char ib[] =
		"Switch 2 \"S-1\" # \"MF0;leaf-1:X\"\n"
		"[1] \"H-1\"[1] # \"h1 mlx5_0\"\n"
		"[2] \"H-2\"[1] # \"h2 mlx5_0\"\n\n"
		"Ca 1 \"H-1\" # \"h1 mlx5_0\"\n[1](1) \"S-1\"[1]\n\n"
		"Ca 1 \"H-2\" # \"h2 mlx5_0\"\n[1](2) \"S-1\"[2]\n";
	static const char nvl[] =
		"[{\"Name\": \"h1\", \"DomainUUID\": \"D1\"}, "
		"{\"Name\": \"h2\", \"DomainUUID\": \"D1\"}, "
		"{\"Name\": \"h3\", \"DomainUUID\": \"D2\"}]";
	static const tg_export_format fmts[] = {
		TG_EXPORT_SLURM_TREE, TG_EXPORT_SLURM_BLOCK,
		TG_EXPORT_K8S_LABELS, TG_EXPORT_K8S_PATCH,
		TG_EXPORT_KAI_TOPOLOGY, TG_EXPORT_KOORDINATOR, TG_EXPORT_JSON
	};
	tg_fabric *f = NULL, *g = NULL;
	tg_topology *t = NULL, *u = NULL;
	tg_errinfo ei = { "" };
	char *out = NULL;
	unsigned nd;
	size_t i;
	tg_err err = TG_ENOMEM;

	(void)ctx;
	f = tg_fabric_create();
	g = tg_fabric_create();
	t = tg_topology_create();
	u = tg_topology_create();
	if (!f || !g || !t || !u)
		goto out;
	err = tg_fabric_set_hostmap(f, "drop=n9,upper", &ei);
	if (!err)
		err = tg_fabric_add(f, TG_FABRIC_CSV, csv, strlen(csv), "c",
				    &ei);
	if (!err)
		err = tg_fabric_build(f, t, &ei);
	if (!err)
		err = tg_topology_build(t, &ei);
	if (!err)
		err = tg_fabric_add(g, TG_FABRIC_IBNETDISCOVER, ib, strlen(ib),
				    "i", &ei);
	if (!err)	/* NVLink domains: h3 is on no switch (warned) */
		err = tg_fabric_add(g, TG_FABRIC_NETQ_NVL, nvl, strlen(nvl),
				    "n", &ei);
	if (!err)
		err = tg_fabric_build(g, u, &ei);
	if (!err)
		err = tg_topology_build(u, &ei);
	for (i = 0; !err && i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		err = tg_export(t, fmts[i], NULL, &out, &ei);
		tg_free(out);
		out = NULL;
	}
	if (!err)
		err = tg_topology_compare(t, "a", u, "b", &out, &nd, &ei);
out:
	tg_free(out);
	tg_fabric_destroy(f);
	tg_fabric_destroy(g);
	tg_topology_destroy(t);
	tg_topology_destroy(u);
	return err;
}

static void test_oom(void)
{
	oom_sweep(oom_scenario, NULL, "out of memory");
}

int main(void)
{
	test_round_trips();
	test_golden();
	test_keys_values();
	test_compare_and_errors();
	test_fuzz_regressions();
	test_oom();
	return done_testing();
}
