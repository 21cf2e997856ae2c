/*
 * tests/unit/test_topoconf.c - the Slurm topology.conf loader.
 *
 * Real files come from $TG_SRCDIR/tests/data/topologies (see its README);
 * the Slurm test-suite and topograph anchors (A8-A11) and every error
 * case are inline.  Each loaded topology is built and checked.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topogang/topogang.h"
#include "tap.h"

static char datadir[1024];

/* The domain path of a node, "(no node)" / "(outside)" otherwise. */
static const char *path_of(const tg_topology *t, const char *node)
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

/* Builds and checks a loaded topology; TAP-asserts both. */
static void build_check(tg_topology *t, const char *what)
{
	tg_errinfo ei;
	tg_err err;

	ei.msg[0] = '\0';
	err = tg_topology_build(t, &ei);
	is_int(err, TG_OK, "%s: build", what);
	if (err)
		diag("%s", ei.msg);
	err = tg_topology_check(t, &ei);
	is_int(err, TG_OK, "%s: invariants hold", what);
	if (err)
		diag("%s", ei.msg);
	is_int(tg_topology_nwarnings(t), 0, "%s: no warnings", what);
}

/* Loads text; on success builds and checks it.  Caller destroys. */
static tg_topology *load(const char *text, const char *what)
{
	tg_topology *t = tg_topology_create();
	tg_errinfo ei;
	tg_err err;

	ei.msg[0] = '\0';
	err = tg_topoconf_load(t, text, strlen(text), "topology.conf", &ei);
	is_int(err, TG_OK, "%s: loads", what);
	if (err)
		diag("%s", ei.msg);
	else
		build_check(t, what);
	return t;
}

static tg_topology *load_file(const char *name)
{
	char path[1200];
	tg_topology *t = tg_topology_create();
	tg_errinfo ei;
	tg_err err;

	snprintf(path, sizeof(path), "%s/%s", datadir, name);
	ei.msg[0] = '\0';
	err = tg_topoconf_load_file(t, path, &ei);
	is_int(err, TG_OK, "%s: loads", name);
	if (err)
		diag("%s", ei.msg);
	else
		build_check(t, name);
	return t;
}

static void layers_are(const tg_topology *t, const char *const *want,
		       unsigned n, const char *what)
{
	unsigned l;

	is_int(tg_topology_nlayers(t), n, "%s: %u layers", what, n);
	for (l = 0; l < n && l < tg_topology_nlayers(t); l++) {
		is_str(tg_topology_layer_name(t, l), want[l],
		       "%s: layer %u", what, l);
		ok(tg_topology_layer_key(t, l) == NULL,
		   "%s: layer %u has no label key", what, l);
	}
}

/* Loading must fail with \p err and a message containing \p msg, and
 * leave the topology empty. */
static void fails(const char *text, size_t len, tg_err want,
		  const char *msg, const char *what)
{
	tg_topology *t = tg_topology_create();
	tg_errinfo ei;
	tg_err err;

	ei.msg[0] = '\0';
	err = tg_topoconf_load(t, text, len, "topology.conf", &ei);
	is_int(err, want, "%s: fails with %s", what, tg_strerror(want));
	like(ei.msg, msg, "%s: message", what);
	ok(tg_topology_nlayers(t) == 0 && tg_topology_nnodes(t) == 0,
	   "%s: nothing added", what);
	tg_topology_destroy(t);
}

#define FAILS(text, err, msg) fails(text, strlen(text), err, msg, msg)

static char *slurp(const char *name, size_t *len)
{
	char path[1200];
	FILE *f;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "%s/%s", datadir, name);
	f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static void test_real_files(void)
{
	static const char *const blk3[] = { "block32", "block16", "block" };
	static const char *const sw3[] = { "switch-l2", "switch-l1",
					   "switch-l0" };
	static const char *const sw2[] = { "switch-l1", "switch-l0" };
	static const char *const blk2[] = { "block120", "block" };
	tg_topology *t;
	char *buf, *cut;
	size_t len;

	/* topograph CI, block form: 12 racks x 8 nodes, BlockSizes=8,16,32 */
	t = load_file("slurm_block_topograph_ci_expected.conf");
	layers_are(t, blk3, 3, "topograph block");
	is_int(tg_topology_nnodes(t), 96, "topograph block: 96 nodes");
	is_int(tg_topology_ndomains(t), 1 + 3 + 6 + 12,
	       "topograph block: 3 + 6 + 12 domains under the root");
	is_str(path_of(t, "srv1101"), "block32-0/block16-0/rack11",
	       "srv1101");
	is_str(path_of(t, "srv2208"), "block32-0/block16-1/rack22",
	       "srv2208");
	is_str(path_of(t, "srv3101"), "block32-1/block16-2/rack31",
	       "srv3101");
	is_str(path_of(t, "srv6208"), "block32-2/block16-5/rack62",
	       "srv6208");
	is_str(tg_topology_node_name(t, 8), "srv1201",
	       "block file order: node 8 is srv1201");
	tg_topology_destroy(t);

	/* topograph CI, tree form: core, 6 spines, 12 leaves */
	t = load_file("slurm_tree_topograph_ci_expected.conf");
	layers_are(t, sw3, 3, "topograph tree");
	is_int(tg_topology_nnodes(t), 96, "topograph tree: 96 nodes");
	is_int(tg_topology_ndomains(t), 1 + 1 + 6 + 12,
	       "topograph tree: 1 + 6 + 12 domains under the root");
	is_str(path_of(t, "srv1101"), "switch.3.1/switch.2.1/switch.1.1",
	       "srv1101");
	is_str(path_of(t, "srv4205"), "switch.3.1/switch.2.4/switch.1.8",
	       "srv4205");
	is_str(path_of(t, "srv6208"), "switch.3.1/switch.2.6/switch.1.12",
	       "srv6208");
	is_str(tg_topology_node_name(t, 0), "srv1101", "tree order: first");
	is_str(tg_topology_node_name(t, 95), "srv6208", "tree order: last");
	tg_topology_destroy(t);

	/* NSTDA TARA, a real site: 4 leaves under one root */
	t = load_file("slurm_tree_site_nstda_tara.conf");
	layers_are(t, sw2, 2, "tara");
	is_int(tg_topology_nnodes(t), 10, "tara: 10 nodes");
	is_str(path_of(t, "tara-c-004"), "s4/s0", "tara-c-004");
	is_str(path_of(t, "tara-c-005"), "s4/s1", "tara-c-005");
	is_str(path_of(t, "tara-m-002"), "s4/s2", "tara-m-002");
	is_str(path_of(t, "tara-dgx1-002"), "s4/s3", "tara-dgx1-002");
	tg_topology_destroy(t);

	/* Slurm man page: tree and block in one file is an error ... */
	{
		char path[1200];
		tg_errinfo ei;
		tg_err err;

		t = tg_topology_create();
		snprintf(path, sizeof(path), "%s/%s", datadir,
			 "slurm_manpage_examples_tree_block.conf");
		ei.msg[0] = '\0';
		err = tg_topoconf_load_file(t, path, &ei);
		is_int(err, TG_EPARSE, "man page file: mixed forms refused");
		like(ei.msg, "slurm_manpage_examples_tree_block.conf:16: "
		     "BlockName in a tree topology (SwitchName at line 7)",
		     "man page file: message names file and line");
		is_int(tg_topology_nlayers(t) + tg_topology_nnodes(t), 0,
		       "man page file: nothing added");
		tg_topology_destroy(t);
	}
	/* ... so each half is loaded on its own. */
	buf = slurp("slurm_manpage_examples_tree_block.conf", &len);
	ok(buf != NULL, "read the man page file");
	if (!buf)
		return;
	cut = strstr(buf, "BlockName=block1");
	ok(cut != NULL, "man page file has the block example");
	if (cut) {
		char save = *cut;

		*cut = '\0';
		t = load(buf, "man page tree example");
		*cut = save;
		layers_are(t, sw2, 2, "man page tree");
		is_int(tg_topology_nnodes(t), 18, "man page tree: 18 nodes");
		is_str(path_of(t, "dev0"), "s3/s0", "dev0");
		is_str(path_of(t, "dev11"), "s3/s1", "dev11");
		is_str(path_of(t, "dev17"), "s3/s2", "dev17");
		tg_topology_destroy(t);

		/* BlockSizes=30,120: 120 is 4 x 30, all 4 blocks in one */
		t = load(cut, "man page block example");
		layers_are(t, blk2, 2, "man page block");
		is_int(tg_topology_nnodes(t), 128, "man page block: 128 nodes");
		is_str(path_of(t, "node1"), "block120-0/block1", "node1");
		is_str(path_of(t, "node64"), "block120-0/block2", "node64");
		is_str(path_of(t, "node128"), "block120-0/block4",
		       "node128");
		tg_topology_destroy(t);
	}
	free(buf);
}

static void test_anchors(void)
{
	static const char *const sw2[] = { "switch-l1", "switch-l0" };
	static const char *const b8[] = { "block8", "block" };
	static const char *const b16[] = { "block16", "block8", "block" };
	static const char *const b16b[] = { "block16", "block" };
	tg_topology *t;

	/* A8: SchedMD test_143_1 */
	t = load("SwitchName=s01 Nodes=node1\n"
		 "SwitchName=s02 Nodes=node2\n"
		 "SwitchName=root Switches=s01,s02\n", "A8");
	layers_are(t, sw2, 2, "A8");
	is_int(tg_topology_nnodes(t), 2, "A8: 2 nodes");
	is_str(path_of(t, "node1"), "root/s01", "A8 node1");
	is_str(path_of(t, "node2"), "root/s02", "A8 node2");
	tg_topology_destroy(t);

	/* A9: SchedMD test_150_2 */
	t = load("BlockName=b1 Nodes=node[1-4]\n"
		 "BlockName=b2 Nodes=node[5-8]\n"
		 "BlockSizes=4,8\n", "A9");
	layers_are(t, b8, 2, "A9");
	is_int(tg_topology_nnodes(t), 8, "A9: 8 nodes");
	is_str(path_of(t, "node4"), "block8-0/b1", "A9 node4");
	is_str(path_of(t, "node5"), "block8-0/b2", "A9 node5");
	tg_topology_destroy(t);

	/* A10: SchedMD test_150_3, blocks interleave node names */
	t = load("BlockName=b1 Nodes=node[1,3,5,7]\n"
		 "BlockName=b2 Nodes=node[2,4,6,8]\n"
		 "BlockSizes=4,8\n", "A10");
	layers_are(t, b8, 2, "A10");
	is_str(path_of(t, "node7"), "block8-0/b1", "A10 node7");
	is_str(path_of(t, "node2"), "block8-0/b2", "A10 node2");
	is_str(tg_topology_node_name(t, 3), "node7", "A10: node 3 is node7");
	is_str(tg_topology_node_name(t, 4), "node2", "A10: node 4 is node2");
	tg_topology_destroy(t);

	/* A11: topograph block complement, empty placeholder block004 */
	t = load("BlockName=block001 Nodes=Node[104-106]\n"
		 "BlockName=block002 Nodes=Node[304-306]\n"
		 "BlockName=block003 Nodes=Node[401-403]\n"
		 "BlockName=block004\n"
		 "BlockSizes=4,8,16\n", "A11");
	layers_are(t, b16, 3, "A11");
	is_int(tg_topology_nnodes(t), 9, "A11: 9 nodes");
	is_int(tg_topology_ndomains(t), 1 + 1 + 2 + 3,
	       "A11: the placeholder has no domain");
	is_str(path_of(t, "Node104"), "block16-0/block8-0/block001",
	       "A11 Node104");
	is_str(path_of(t, "Node306"), "block16-0/block8-0/block002",
	       "A11 Node306");
	is_str(path_of(t, "Node403"), "block16-0/block8-1/block003",
	       "A11 Node403");
	tg_topology_destroy(t);

	/* The topology.yaml man page example (topo1, topo2) as .conf */
	t = load("SwitchName=sw_root Nodes=node[01-04]\n", "yaml topo1");
	is_int(tg_topology_nlayers(t), 1, "yaml topo1: one layer");
	is_str(path_of(t, "node04"), "sw_root", "yaml topo1 node04");
	tg_topology_destroy(t);
	t = load("BlockName=b1 Nodes=node[01-04]\n"
		 "BlockName=b2 Nodes=node[05-08]\n"
		 "BlockName=b3 Nodes=node[09-12]\n"
		 "BlockName=b4 Nodes=node[13-16]\n"
		 "BlockSizes=4,16\n", "yaml topo2");
	layers_are(t, b16b, 2, "yaml topo2");
	is_str(path_of(t, "node16"), "block16-0/b4", "yaml topo2 node16");
	tg_topology_destroy(t);

	/* The Slurm lab cluster (slurm-lab.md section 3) */
	t = load("SwitchName=block-0 Nodes=node-[0-2]\n"
		 "SwitchName=block-1 Nodes=node-[3-4]\n"
		 "SwitchName=block-2 Nodes=node-[5-6]\n"
		 "SwitchName=block-3 Nodes=node-[7-8]\n"
		 "SwitchName=block-4 Nodes=node-[9-11]\n"
		 "SwitchName=spine-0 Switches=block-[0-1]\n"
		 "SwitchName=spine-1 Switches=block-[2-3]\n"
		 "SwitchName=spine-2 Switches=block-4\n"
		 "# optional root\n"
		 "SwitchName=core Switches=spine-[0-2]\n", "lab");
	is_int(tg_topology_nlayers(t), 3, "lab: 3 layers");
	is_int(tg_topology_nnodes(t), 12, "lab: 12 nodes");
	is_str(path_of(t, "node-4"), "core/spine-0/block-1", "lab node-4");
	is_str(path_of(t, "node-11"), "core/spine-2/block-4", "lab node-11");
	tg_topology_destroy(t);
}

static void test_tree_shapes(void)
{
	static const char *const sw3[] = { "switch-l2", "switch-l1",
					   "switch-l0" };
	tg_topology *t;

	/* A leaf hung straight from the core repeats on the spine level. */
	t = load("SwitchName=leafA Nodes=a[1-2]\n"
		 "SwitchName=leafB Nodes=b[1-2]\n"
		 "SwitchName=spine Switches=leafA\n"
		 "SwitchName=core Switches=spine,leafB\n", "uneven tree");
	layers_are(t, sw3, 3, "uneven tree");
	is_str(path_of(t, "a1"), "core/spine/leafA", "uneven a1");
	is_str(path_of(t, "b2"), "core/leafB/leafB", "uneven b2");
	tg_topology_destroy(t);

	/* Several tops: each is a domain under the root; a shallow top
	 * repeats upwards; children may come after their parent. */
	t = load("SwitchName=s0 Nodes=x[1-2]\n"
		 "SwitchName=top Switches=s1\n"
		 "SwitchName=s1 Nodes=y1\n"
		 "SwitchName=lonely Nodes=z1\n"
		 "SwitchName=empty\n", "forest");
	is_int(tg_topology_nlayers(t), 2, "forest: 2 layers");
	is_int(tg_topology_nnodes(t), 4, "forest: 4 nodes");
	is_int(tg_topology_ndomains(t), 1 + 3 + 3, "forest: 7 domains");
	is_str(path_of(t, "x1"), "s0/s0", "forest x1");
	is_str(path_of(t, "y1"), "top/s1", "forest y1");
	is_str(path_of(t, "z1"), "lonely/lonely", "forest z1");
	is_str(tg_topology_node_name(t, 2), "y1", "forest order: y1 third");
	tg_topology_destroy(t);

	/* Children in the order their parent lists them. */
	t = load("SwitchName=top Switches=b,a\n"
		 "SwitchName=a Nodes=n1\n"
		 "SwitchName=b Nodes=n2\n", "child order");
	is_str(tg_topology_node_name(t, 0), "n2", "child order: b first");
	tg_topology_destroy(t);

	/* 16 levels is the most a topology holds. */
	{
		char text[4096];
		size_t len = 0;
		int i;

		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"SwitchName=s0 Nodes=n1\n");
		for (i = 1; i < 16; i++)
			len += (size_t)snprintf(text + len,
						sizeof(text) - len,
						"SwitchName=s%d Switches=s%d\n",
						i, i - 1);
		t = load(text, "16 levels");
		is_int(tg_topology_nlayers(t), 16, "16 levels: 16 layers");
		is_str(tg_topology_layer_name(t, 0), "switch-l15",
		       "16 levels: top layer name");
		tg_topology_destroy(t);
		snprintf(text + len, sizeof(text) - len,
			 "SwitchName=s16 Switches=s15\n");
		FAILS(text, TG_ELIMIT, "topology.conf:17: switch 's16' is "
		      "at level 16: at most 16 switch levels");
	}
}

static void test_syntax(void)
{
	static const char nul[] = "SwitchName=s0 Nodes=n1\nSwitchName=s1\0x\n";
	tg_topology *t;

	t = load("# comment line\n"
		 "   \n"
		 "SwitchName=s0 \\\n"
		 "    Nodes=n[1-2,\\\n"
		 "3-4] # trailing comment\n"
		 "switchname=s1 NODES=m1 linkspeed=100\n"
		 "SwitchName = s2  Nodes = \"k[1-2]\"\r\n"
		 "SwitchName=s\\#3 Nodes=n1\\#x\n"
		 "SwitchName=s4 Nodes=d1,d1,d2\n"
		 "SwitchName=top Switches=s[0-2],s\\#3,s4,s0 LinkSpeed=1\n"
		 "SwitchName=s5 Nodes=x1 SwitchName=s6 Nodes=x2\n"
		 "SwitchName=s7 Nodes=last # no newline at the end",
		 "syntax");
	is_int(tg_topology_nnodes(t), 13, "syntax: 13 nodes");
	is_str(path_of(t, "n4"), "top/s0", "continuation inside a hostlist");
	is_str(path_of(t, "m1"), "top/s1", "case-insensitive keys");
	is_str(path_of(t, "k2"), "top/s2", "blanks around '=', quotes, CRLF");
	is_str(path_of(t, "n1#x"), "top/s#3", "escaped '#'");
	is_str(path_of(t, "d2"), "top/s4", "a node twice in one hostlist");
	is_str(path_of(t, "x2"), "s6/s6", "two records on one line");
	is_str(path_of(t, "last"), "s7/s7", "last line without newline");
	tg_topology_destroy(t);

	/* Block form without BlockSizes: only "block". */
	t = load("BlockName=b1 Nodes=n[1-2]\nBlockName=b2 Nodes=n3\n",
		 "no BlockSizes");
	is_int(tg_topology_nlayers(t), 1, "no BlockSizes: one layer");
	is_str(tg_topology_layer_name(t, 0), "block", "layer 'block'");
	is_str(path_of(t, "n3"), "b2", "n3 in b2");
	tg_topology_destroy(t);

	/* A single BlockSizes entry is the base size only. */
	t = load("BlockSizes=4\nBlockName=b1 Nodes=n[1-4]\n", "BlockSizes=4");
	is_int(tg_topology_nlayers(t), 1, "BlockSizes=4: one layer");
	tg_topology_destroy(t);

	/* Errors: each names the source and line, nothing is added. */
	FAILS("", TG_EINVAL, "topology.conf:1: no SwitchName or BlockName");
	FAILS("# nothing\n\n# here\n", TG_EINVAL,
	      "topology.conf:3: no SwitchName or BlockName");
	FAILS("SwitchName=s0 Nodes=n1\nSwitchName=s1 Foo=bar\n", TG_EPARSE,
	      "topology.conf:2: unknown key 'Foo'");
	FAILS("SwitchName=a Nodes=n1\nSwitchName=p1 Switches=a\n"
	      "SwitchName=p2 Switches=a\n", TG_EEXIST,
	      "topology.conf:3: switch 'a' has two parents: 'p1' (line 2) "
	      "and 'p2'");
	FAILS("SwitchName=s0 Nodes=n[1-2]\nSwitchName=s1 Nodes=n[2-3]\n",
	      TG_EEXIST, "topology.conf:2: node 'n2' is under two leaf "
	      "switches: 's0' (line 1) and 's1'");
	FAILS("SwitchName=top Switches=s[0-1]\nSwitchName=s0 Nodes=n1\n",
	      TG_ENOENT,
	      "topology.conf:1: switch 'top' lists undefined switch 's1'");
	FAILS("SwitchName=s0 Nodes=n1\n\nBlockName=b1 Nodes=n2\n", TG_EPARSE,
	      "topology.conf:3: BlockName in a tree topology (SwitchName "
	      "at line 1): the tree and block forms cannot be mixed");
	FAILS("BlockName=b1 Nodes=n2\nSwitchName=s0 Nodes=n1\n", TG_EPARSE,
	      "topology.conf:2: SwitchName in a block topology (BlockName "
	      "at line 1)");
	FAILS("SwitchName=s0 Nodes=n1\nBlockSizes=4,8\n", TG_EPARSE,
	      "topology.conf:2: BlockSizes in a tree topology");
	FAILS("SwitchName=a Switches=b\nSwitchName=b Switches=c\n"
	      "SwitchName=c Switches=a\nSwitchName=d Nodes=n1\n", TG_EINVAL,
	      "topology.conf:1: switches form a cycle: 'a' under 'c' under "
	      "'b' under 'a'");
	FAILS("SwitchName=d Nodes=n1\nSwitchName=top Switches=d\n"
	      "SwitchName=a Switches=b\nSwitchName=b Switches=a\n",
	      TG_EINVAL, "topology.conf:3: switches form a cycle: 'a' under "
	      "'b' under 'a'");
	{
		char text[512];
		size_t len = 0;
		int i;

		for (i = 0; i < 10; i++)
			len += (size_t)snprintf(text + len,
						sizeof(text) - len,
						"SwitchName=c%d Switches=c%d\n",
						i, (i + 1) % 10);
		FAILS(text, TG_EINVAL, "topology.conf:1: switches form a "
		      "cycle: 'c0' under 'c9' under 'c8' under 'c7' under "
		      "'c6' under 'c5' under 'c4' under 'c3' under 'c2' ...");
	}
	FAILS("SwitchName=a Switches=a\n", TG_EINVAL,
	      "topology.conf:1: switch 'a' lists itself in Switches");
	FAILS("SwitchName=s0 Nodes=n1\n# c\n\n\n\n"
	      "SwitchName=s1 Nodes=node[3-1]\n", TG_EPARSE,
	      "topology.conf:6: bad hostlist 'node[3-1]': range end before "
	      "start");
	FAILS("SwitchName=s0 \\\n  Nodes=node[1-2\n", TG_EPARSE,
	      "topology.conf:1: bad hostlist 'node[1-2': '[' without ']'");
	FAILS("SwitchName=s0 Nodes=x[0-1048576]\n", TG_ELIMIT,
	      "topology.conf:1: bad hostlist 'x[0-1048576]': more than "
	      "1048576 names");
	FAILS("SwitchName=s0 Nodes=n1\nSwitchName=s0 Nodes=n2\n", TG_EEXIST,
	      "topology.conf:2: switch 's0' is defined twice (first at "
	      "line 1)");
	FAILS("BlockName=b Nodes=n1\nBlockName=b Nodes=n2\n", TG_EEXIST,
	      "topology.conf:2: block 'b' is defined twice");
	FAILS("BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[4-8]\n",
	      TG_EEXIST, "topology.conf:2: node 'n4' is in two blocks: 'b1' "
	      "(line 1) and 'b2'");
	FAILS("SwitchName=s0 Nodes=n1 Switches=s1\nSwitchName=s1\n",
	      TG_EPARSE, "topology.conf:1: switch 's0' has both Nodes and "
	      "Switches");
	FAILS("SwitchName=s0 Nodes=n1 Nodes=n2\n", TG_EPARSE,
	      "topology.conf:1: Nodes given twice for switch 's0'");
	FAILS("SwitchName=s0\nNodes=n1\n", TG_EPARSE,
	      "topology.conf:2: Nodes= without a SwitchName= or BlockName=");
	FAILS("BlockName=b1 Switches=x\n", TG_EPARSE,
	      "topology.conf:1: Switches= is a SwitchName key");
	FAILS("BlockName=b1 LinkSpeed=5\n", TG_EPARSE,
	      "topology.conf:1: LinkSpeed= is a SwitchName key");
	FAILS("SwitchName=s0 LinkSpeed=fast\n", TG_EPARSE,
	      "topology.conf:1: bad LinkSpeed 'fast'");
	FAILS("SwitchName=\n", TG_EPARSE,
	      "topology.conf:1: SwitchName has an empty value");
	FAILS("SwitchName=s0 Nodes=\"\"\n", TG_EPARSE,
	      "topology.conf:1: Nodes has an empty value");
	FAILS("SwitchName=s0 Nodes= Switches=x\n", TG_EPARSE,
	      "topology.conf:1: Nodes has no value before 'Switches=x'");
	FAILS("SwitchName s0\n", TG_EPARSE,
	      "topology.conf:1: expected Key=Value, got 'SwitchName'");
	FAILS("SwitchName=s0 Nodes=\"n1\n", TG_EPARSE,
	      "topology.conf:1: value of Nodes has no closing quote");
	FAILS("SwitchName=a/b Nodes=n1\n", TG_EPARSE,
	      "topology.conf:1: bad SwitchName 'a/b': contains '/'");
	FAILS("SwitchName=\"a b\" Nodes=n1\n", TG_EPARSE,
	      "topology.conf:1: bad SwitchName 'a b': contains a blank");
	FAILS("Include /etc/slurm/more.conf\n", TG_EPARSE,
	      "topology.conf:1: Include is not supported");
	FAILS("include=/etc/slurm/more.conf\n", TG_EPARSE,
	      "topology.conf:1: Include is not supported");
	FAILS("BlockSizes=4,8\n", TG_EINVAL,
	      "topology.conf:1: BlockSizes but no BlockName");
	FAILS("BlockName=b1 Nodes=n1\nBlockSizes=8,4\n", TG_EINVAL,
	      "topology.conf:2: bad BlockSizes '8,4': 4 is not larger "
	      "than 8");
	FAILS("BlockName=b1 Nodes=n1\nBlockSizes=4,6\n", TG_EINVAL,
	      "bad BlockSizes '4,6': 6 is not a power-of-two multiple of 4");
	FAILS("BlockName=b1 Nodes=n1\nBlockSizes=4,12\n", TG_EINVAL,
	      "bad BlockSizes '4,12': 12 is not a power-of-two multiple of "
	      "4");
	FAILS("BlockName=b1 Nodes=n1\nBlockSizes=0,4\n", TG_EPARSE,
	      "bad BlockSizes '0,4': '0' is not a number of nodes");
	FAILS("BlockName=b1 Nodes=n1\nBlockSizes=4,,8\n", TG_EPARSE,
	      "bad BlockSizes '4,,8': '' is not a number of nodes");
	FAILS("BlockName=b1 Nodes=n1\nBlockSizes=4,x\n", TG_EPARSE,
	      "bad BlockSizes '4,x': 'x' is not a number of nodes");
	FAILS("BlockName=b1 Nodes=n1\nBlockSizes=-4\n", TG_EPARSE,
	      "bad BlockSizes '-4'");
	FAILS("BlockName=b1 Nodes=n1\nBlockSizes=4\nBlockSizes=4\n",
	      TG_EPARSE, "topology.conf:3: BlockSizes given twice (first "
	      "at line 2)");
	FAILS("BlockName=b1 Nodes=n1\nBlockSizes=1,2,4,8,16,32,64,128,256,"
	      "512,1024,2048,4096,8192,16384,32768,65536\n", TG_ELIMIT,
	      "topology.conf:2: bad BlockSizes '1,2,4,8,16,32,64,128,256,"
	      "512,1024,2048,4096,8192,16384,32768,65536': more than 16");
	fails(nul, sizeof(nul) - 1, TG_EPARSE,
	      "topology.conf:2: NUL byte in the text", "NUL byte");

	/* TG_MAX_SWITCHES */
	{
		size_t cap = 20u * (TG_MAX_SWITCHES + 2), len = 0;
		char *text = malloc(cap);
		unsigned i;

		for (i = 0; text && i <= TG_MAX_SWITCHES; i++)
			len += (size_t)snprintf(text + len, cap - len,
						"SwitchName=s%u\n", i);
		if (text)
			fails(text, len, TG_ELIMIT,
			      "topology.conf:65537: more than 65536 switch "
			      "names", "TG_MAX_SWITCHES");
		free(text);
	}
}

static void test_api(void)
{
	tg_topology *t = tg_topology_create();
	tg_errinfo ei;
	char path[1200];

	ei.msg[0] = '\0';
	is_int(tg_topoconf_load(NULL, "x", 1, NULL, &ei), TG_EINVAL,
	       "NULL topology");
	is_int(tg_topoconf_load(t, NULL, 3, NULL, &ei), TG_EINVAL,
	       "NULL text with a length");
	is_int(tg_topoconf_load(t, NULL, 0, NULL, &ei), TG_EINVAL,
	       "empty text is an empty topology");
	like(ei.msg, "topology.conf:1: no SwitchName",
	     "the default source name is topology.conf");
	is_int(tg_topoconf_load(t, "SwitchName=s0 Nodes=n1", 13, "x.conf",
				&ei), TG_OK, "only the first len bytes count");
	is_int(tg_topology_nnodes(t), 0, "a switch without its Nodes");
	is_int(tg_topoconf_load(t, "SwitchName=s0 Nodes=n1", 22, "x.conf",
				&ei), TG_ESTATE, "a second load is refused");
	like(ei.msg, "x.conf: the topology already has layers",
	     "ESTATE message");
	tg_topology_destroy(t);

	t = tg_topology_create();
	snprintf(path, sizeof(path), "%s/no-such-topology.conf", datadir);
	is_int(tg_topoconf_load_file(t, path, &ei), TG_EIO, "missing file");
	like(ei.msg, "no-such-topology.conf", "EIO message names the file");
	is_int(tg_topoconf_load_file(t, NULL, &ei), TG_EINVAL, "NULL path");
	tg_topology_destroy(t);
}

int main(void)
{
	const char *src = getenv("TG_SRCDIR");

	snprintf(datadir, sizeof(datadir), "%s/tests/data/topologies",
		 src && *src ? src : ".");
	test_real_files();
	test_anchors();
	test_tree_shapes();
	test_syntax();
	test_api();
	return done_testing();
}
