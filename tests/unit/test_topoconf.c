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
#include "testdata.h"

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

/* Loads text, or with text NULL the file tests/data/topologies/<what>;
 * on success builds and checks it.  Caller destroys. */
static tg_topology *load(const char *text, const char *what)
{
	tg_topology *t = tg_topology_create();
	tg_errinfo ei;
	tg_err err;

	ei.msg[0] = '\0';
	err = text ? tg_topoconf_load(t, text, strlen(text), "topology.conf",
				      &ei) :
		     tg_topoconf_load_file(t, td_path("topologies", what),
					   &ei);
	is_int(err, TG_OK, "%s: loads", what);
	if (err)
		diag("%s", ei.msg);
	else
		build_check(t, what);
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

/* What a loaded topology must look like; empty fields are not checked. */
typedef struct expect {
	const char *layers[4];		/* names, top first */
	unsigned nnodes, ndomains;
	struct {
		const char *node, *path;	/* the node's domain path */
	} at[5];
	struct {
		unsigned id;
		const char *name;		/* the node with that id */
	} order[2];
} expect;

static void expect_is(const tg_topology *t, const expect *e,
		      const char *what)
{
	unsigned i, n = 0;

	while (n < 4 && e->layers[n])
		n++;
	if (n)
		layers_are(t, e->layers, n, what);
	if (e->nnodes)
		is_int(tg_topology_nnodes(t), e->nnodes, "%s: %u nodes", what,
		       e->nnodes);
	if (e->ndomains)
		is_int(tg_topology_ndomains(t), e->ndomains,
		       "%s: %u domains, the root included", what, e->ndomains);
	for (i = 0; i < 5 && e->at[i].node; i++)
		is_str(path_of(t, e->at[i].node), e->at[i].path, "%s: %s",
		       what, e->at[i].node);
	for (i = 0; i < 2 && e->order[i].name; i++)
		is_str(tg_topology_node_name(t, e->order[i].id),
		       e->order[i].name, "%s: node %u is %s", what,
		       e->order[i].id, e->order[i].name);
}

/* An inline topology.conf and what it must load as. */
typedef struct conf_case {
	const char *what, *text;
	expect e;
} conf_case;

static void conf_cases(const conf_case *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		tg_topology *t = load(c[i].text, c[i].what);

		expect_is(t, &c[i].e, c[i].what);
		tg_topology_destroy(t);
	}
}

#define BLK3 { "block32", "block16", "block" }
#define BLK2 { "block120", "block" }
#define B16 { "block16", "block8", "block" }
#define B16B { "block16", "block" }
#define B8 { "block8", "block" }
#define SW3 { "switch-l2", "switch-l1", "switch-l0" }
#define SW2 { "switch-l1", "switch-l0" }

static void test_real_files(void)
{
	static const struct {
		const char *file, *what;
		expect e;
	} files[] = {
		/* topograph CI, block form: 12 racks x 8 nodes,
		 * BlockSizes=8,16,32; nodes in file order */
		{ "slurm_block_topograph_ci_expected.conf", "topograph block",
		  { .layers = BLK3, .nnodes = 96, .ndomains = 1 + 3 + 6 + 12,
		    .at = { { "srv1101", "block32-0/block16-0/rack11" },
		      { "srv2208", "block32-0/block16-1/rack22" },
		      { "srv3101", "block32-1/block16-2/rack31" },
		      { "srv6208", "block32-2/block16-5/rack62" } },
		    .order = { { 8, "srv1201" } } } },
		/* topograph CI, tree form: core, 6 spines, 12 leaves; nodes
		 * in tree order */
		{ "slurm_tree_topograph_ci_expected.conf", "topograph tree",
		  { .layers = SW3, .nnodes = 96, .ndomains = 1 + 1 + 6 + 12,
		    .at = { { "srv1101", "switch.3.1/switch.2.1/switch.1.1" },
		      { "srv4205", "switch.3.1/switch.2.4/switch.1.8" },
		      { "srv6208", "switch.3.1/switch.2.6/switch.1.12" } },
		    .order = { { 0, "srv1101" }, { 95, "srv6208" } } } },
		/* NSTDA TARA, a real site: 4 leaves under one root */
		{ "slurm_tree_site_nstda_tara.conf", "tara",
		  { .layers = SW2, .nnodes = 10,
		    .at = { { "tara-c-004", "s4/s0" }, { "tara-c-005", "s4/s1" },
		      { "tara-m-002", "s4/s2" },
		      { "tara-dgx1-002", "s4/s3" } } } },
	};
	/* the two halves of the man page file */
	static const expect man_tree = {
		.layers = SW2, .nnodes = 18,
		.at = { { "dev0", "s3/s0" }, { "dev11", "s3/s1" },
			{ "dev17", "s3/s2" } } };
	/* BlockSizes=30,120: 120 is 4 x 30, all 4 blocks in one */
	static const expect man_block = {
		.layers = BLK2, .nnodes = 128,
		.at = { { "node1", "block120-0/block1" },
			{ "node64", "block120-0/block2" },
			{ "node128", "block120-0/block4" } } };
	tg_topology *t;
	char *buf, *cut;
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		t = load(NULL, files[i].file);
		expect_is(t, &files[i].e, files[i].what);
		tg_topology_destroy(t);
	}

	/* Slurm man page: tree and block in one file is an error ... */
	{
		tg_errinfo ei;
		tg_err err;

		t = tg_topology_create();
		ei.msg[0] = '\0';
		err = tg_topoconf_load_file(t, td_path("topologies",
				"slurm_manpage_examples_tree_block.conf"), &ei);
		is_int(err, TG_EPARSE, "man page file: mixed forms refused");
		like(ei.msg, "slurm_manpage_examples_tree_block.conf:16: "
		     "BlockName in a tree topology (SwitchName at line 7)",
		     "man page file: message names file and line");
		is_int(tg_topology_nlayers(t) + tg_topology_nnodes(t), 0,
		       "man page file: nothing added");
		tg_topology_destroy(t);
	}
	/* ... so each half is loaded on its own. */
	buf = td_read("topologies", "slurm_manpage_examples_tree_block.conf",
		      NULL);
	ok(buf != NULL, "read the man page file");
	if (!buf)
		return;
	cut = strstr(buf, "BlockName=block1");
	ok(cut != NULL, "man page file has the block example");
	if (cut) {
		char save = *cut;

		*cut = '\0';
		t = load(buf, "man page tree");
		*cut = save;
		expect_is(t, &man_tree, "man page tree");
		tg_topology_destroy(t);
		t = load(cut, "man page block");
		expect_is(t, &man_block, "man page block");
		tg_topology_destroy(t);
	}
	free(buf);
}

static void test_anchors(void)
{
	static const conf_case cases[] = {
		{ "A8", /* SchedMD test_143_1 */
		  "SwitchName=s01 Nodes=node1\n"
		  "SwitchName=s02 Nodes=node2\n"
		  "SwitchName=root Switches=s01,s02\n",
		  { .layers = SW2, .nnodes = 2,
		    .at = { { "node1", "root/s01" }, { "node2", "root/s02" } } } },
		{ "A9", /* SchedMD test_150_2 */
		  "BlockName=b1 Nodes=node[1-4]\n"
		  "BlockName=b2 Nodes=node[5-8]\n"
		  "BlockSizes=4,8\n",
		  { .layers = B8, .nnodes = 8,
		    .at = { { "node4", "block8-0/b1" },
		      { "node5", "block8-0/b2" } } } },
		{ "A10", /* SchedMD test_150_3, blocks interleave node names */
		  "BlockName=b1 Nodes=node[1,3,5,7]\n"
		  "BlockName=b2 Nodes=node[2,4,6,8]\n"
		  "BlockSizes=4,8\n",
		  { .layers = B8,
		    .at = { { "node7", "block8-0/b1" },
		      { "node2", "block8-0/b2" } },
		    .order = { { 3, "node7" }, { 4, "node2" } } } },
		{ "A11", /* topograph block complement, empty placeholder
			  * block004: it has no domain */
		  "BlockName=block001 Nodes=Node[104-106]\n"
		  "BlockName=block002 Nodes=Node[304-306]\n"
		  "BlockName=block003 Nodes=Node[401-403]\n"
		  "BlockName=block004\n"
		  "BlockSizes=4,8,16\n",
		  { .layers = B16, .nnodes = 9, .ndomains = 1 + 1 + 2 + 3,
		    .at = { { "Node104", "block16-0/block8-0/block001" },
		      { "Node306", "block16-0/block8-0/block002" },
		      { "Node403", "block16-0/block8-1/block003" } } } },
		/* The topology.yaml man page example (topo1, topo2) as .conf */
		{ "yaml topo1",
		  "SwitchName=sw_root Nodes=node[01-04]\n",
		  { .layers = { "switch-l0" },
		    .at = { { "node04", "sw_root" } } } },
		{ "yaml topo2",
		  "BlockName=b1 Nodes=node[01-04]\n"
		  "BlockName=b2 Nodes=node[05-08]\n"
		  "BlockName=b3 Nodes=node[09-12]\n"
		  "BlockName=b4 Nodes=node[13-16]\n"
		  "BlockSizes=4,16\n",
		  { .layers = B16B, .at = { { "node16", "block16-0/b4" } } } },
		/* the Slurm lab cluster (slurm-lab.md section 3): the text of
		 * tests/slurm/seed-topology.conf plus a comment line, kept
		 * here as every case of this table is: the parser's input
		 * beside what it must give, not a copy for other tests */
		{ "lab",
		  "SwitchName=block-0 Nodes=node-[0-2]\n"
		  "SwitchName=block-1 Nodes=node-[3-4]\n"
		  "SwitchName=block-2 Nodes=node-[5-6]\n"
		  "SwitchName=block-3 Nodes=node-[7-8]\n"
		  "SwitchName=block-4 Nodes=node-[9-11]\n"
		  "SwitchName=spine-0 Switches=block-[0-1]\n"
		  "SwitchName=spine-1 Switches=block-[2-3]\n"
		  "SwitchName=spine-2 Switches=block-4\n"
		  "# optional root\n"
		  "SwitchName=core Switches=spine-[0-2]\n",
		  { .layers = SW3, .nnodes = 12,
		    .at = { { "node-4", "core/spine-0/block-1" },
		      { "node-11", "core/spine-2/block-4" } } } },
	};

	conf_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_tree_shapes(void)
{
	static const conf_case cases[] = {
		/* A leaf hung straight from the core repeats on the spine
		 * level. */
		{ "uneven tree",
		  "SwitchName=leafA Nodes=a[1-2]\n"
		  "SwitchName=leafB Nodes=b[1-2]\n"
		  "SwitchName=spine Switches=leafA\n"
		  "SwitchName=core Switches=spine,leafB\n",
		  { .layers = SW3,
		    .at = { { "a1", "core/spine/leafA" },
		      { "b2", "core/leafB/leafB" } } } },
		/* Several tops: each is a domain under the root; a shallow
		 * top repeats upwards; children may come after their
		 * parent. */
		{ "forest",
		  "SwitchName=s0 Nodes=x[1-2]\n"
		  "SwitchName=top Switches=s1\n"
		  "SwitchName=s1 Nodes=y1\n"
		  "SwitchName=lonely Nodes=z1\n"
		  "SwitchName=empty\n",
		  { .layers = SW2, .nnodes = 4, .ndomains = 1 + 3 + 3,
		    .at = { { "x1", "s0/s0" }, { "y1", "top/s1" },
		      { "z1", "lonely/lonely" } },
		    .order = { { 2, "y1" } } } },
		/* Children in the order their parent lists them. */
		{ "child order",
		  "SwitchName=top Switches=b,a\n"
		  "SwitchName=a Nodes=n1\n"
		  "SwitchName=b Nodes=n2\n",
		  { .order = { { 0, "n2" } } } },
	};
	tg_topology *t;

	conf_cases(cases, sizeof(cases) / sizeof(cases[0]));

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
	static const conf_case blocks[] = {
		/* Block form without BlockSizes: only "block". */
		{ "no BlockSizes",
		  "BlockName=b1 Nodes=n[1-2]\nBlockName=b2 Nodes=n3\n",
		  { .layers = { "block" }, .at = { { "n3", "b2" } } } },
		/* A single BlockSizes entry is the base size only. */
		{ "BlockSizes=4", "BlockSizes=4\nBlockName=b1 Nodes=n[1-4]\n",
		  { .layers = { "block" } } },
	};
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

	conf_cases(blocks, sizeof(blocks) / sizeof(blocks[0]));

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
	is_int(tg_topoconf_load_file(t, td_path("topologies",
				"no-such-topology.conf"), &ei), TG_EIO,
	       "missing file");
	like(ei.msg, "no-such-topology.conf", "EIO message names the file");
	is_int(tg_topoconf_load_file(t, NULL, &ei), TG_EINVAL, "NULL path");
	tg_topology_destroy(t);
}

int main(void)
{
	test_real_files();
	test_anchors();
	test_tree_shapes();
	test_syntax();
	test_api();
	return done_testing();
}
