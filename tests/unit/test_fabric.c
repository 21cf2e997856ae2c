/*
 * tests/unit/test_fabric.c - fabric discovery: ibnetdiscover, NetQ and CSV
 * inputs into a topology, host-map rules, malformed input, and format
 * detection (tg_fabric_detect()).
 *
 * Real inputs come from $TG_SRCDIR/tests/data/discover (see its README);
 * the expected trees of the real captures are checked in there under
 * expected/ (TG_REGEN=1 rewrites them).  Every loaded topology is built
 * and checked with tg_topology_check().
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topogang/topogang.h"
#include "tap.h"
#include "testdata.h"

static unsigned layer_domains(const tg_topology *t, unsigned layer)
{
	unsigned d, n = 0;

	for (d = 1; d < tg_topology_ndomains(t); d++)
		n += tg_topology_domain_layer(t, d) == layer;
	return n;
}

/* Loads one input with an optional host-map rule and builds it. */
static tg_topology *load(tg_fabric_format fmt, const char *name,
			 const char *rule, tg_fabric **keep)
{
	tg_fabric *f = tg_fabric_create();
	tg_topology *t = tg_topology_create();
	tg_errinfo ei = { "" };
	tg_err err;

	err = tg_fabric_set_hostmap(f, rule, &ei);
	if (!err)
		err = tg_fabric_add_file(f, fmt, td_path("discover", name),
					 &ei);
	if (!err)
		err = tg_fabric_build(f, t, &ei);
	is_int(err, TG_OK, "%s%s%s: loads", name, rule ? " with " : "",
	       rule ? rule : "");
	if (err)
		diag("%s", ei.msg);
	if (!err) {
		err = tg_topology_build(t, &ei);
		is_int(err, TG_OK, "%s: builds", name);
		err = tg_topology_check(t, &ei);
		is_int(err, TG_OK, "%s: invariants hold", name);
		if (err)
			diag("%s", ei.msg);
	}
	if (keep)
		*keep = f;
	else
		tg_fabric_destroy(f);
	return t;
}

static char *tree_of(const tg_topology *t)
{
	tg_errinfo ei = { "" };
	char *out = NULL;

	if (tg_export(t, TG_EXPORT_SLURM_TREE, NULL, &out, &ei))
		diag("export: %s", ei.msg);
	return out;
}

/* ---- ibnetdiscover ---- */

static void test_ibnetdiscover(void)
{
	const char *ib = "ibnetdiscover_dgx_h100_ndr_superpod.out";
	tg_fabric_summary s;
	tg_fabric *f = NULL;
	tg_topology *t;
	const char *name, *members;
	unsigned level, nm, i, leaves = 0, spines = 0;
	char *out;

	t = load(TG_FABRIC_IBNETDISCOVER, ib, NULL, &f);
	tg_fabric_summary_get(f, &s);
	is_int(s.switches, 40, "ib: 40 switches (31 leaves, 9 spines)");
	is_int(s.host_ports, 582, "ib: 582 CA ports");
	is_int(s.unnamed, 109, "ib: 69 default descriptions + 40 SHARP "
	       "aggregation nodes name no host");
	is_int(s.hosts, 122, "ib: 119 DGX + UFM, ubuntu, localhost");
	is_int(s.levels, 2, "ib: two switch levels");
	is_int(s.groups, 9, "ib: 8 rail groups (one per SU) + 1 spine "
	       "group");
	is_int(s.unlinked, 0, "ib: every switch reaches a host");
	for (i = 0; i < s.groups; i++) {
		if (tg_fabric_group(f, i, &level, &name, &members, &nm))
			continue;
		if (level == 0)
			leaves += nm;
		else
			spines += nm;
		if (level == 1) {
			is_str(name, "A10-P1-IBSPINE-01", "ib: the spine "
			       "group is named after its first member");
			is_str(members, "A10-P1-IBSPINE-[01-04],"
			       "B10-P1-IBSPINE-[05-09]", "ib: spine members");
		}
	}
	is_int(leaves, 31, "ib: the 31 leaves are in leaf groups");
	is_int(spines, 9, "ib: the 9 spines are one group");
	is_int(tg_fabric_group(f, 9, NULL, NULL, NULL, NULL), TG_ENOENT,
	       "ib: group past the end");
	is_int(tg_topology_nlayers(t), 2, "ib: 2 layers");
	is_str(tg_topology_layer_name(t, 0), "switch-l1", "ib: layer 0");
	is_str(tg_topology_layer_key(t, 1), "fabric.topograph.run/tier-0",
	       "ib: leaf layer key is topograph's tier-0");
	is_int(layer_domains(t, 1), 8, "ib: 8 leaf-group domains");
	is_str(path_of(t, "a05-p1-dgx-01-c01"),
	       "A10-P1-IBSPINE-01/A09-P1-IBLEAF-01-01",
	       "ib: SU 1 host under its rail group");
	is_str(path_of(t, "b08-p1-dgx-08-c18"),
	       "A10-P1-IBSPINE-01/B09-P1-IBLEAF-01-08", "ib: SU 8 host");
	is_str(path_of(t, "a06-p1-dgx-02-c06"), "(no node)",
	       "ib: a host whose HCAs all keep the default description is "
	       "unknown");
	is_int(tg_topology_nwarnings(t), 0, "ib: no build warnings");
	tg_fabric_destroy(f);
	tg_topology_destroy(t);

	/* the host-map rule keeps the DGX only */
	t = load(TG_FABRIC_IBNETDISCOVER, ib, "match=*-dgx-*", &f);
	tg_fabric_summary_get(f, &s);
	is_int(s.hosts, 119, "ib + match=*-dgx-*: 119 DGX hosts");
	is_int(s.dropped, 7, "ib + rule: 7 ports of non-DGX hosts dropped");
	is_int(tg_topology_nnodes(t), 119, "ib + rule: 119 nodes");
	is_str(path_of(t, "localhost"), "(no node)", "ib + rule: localhost "
	       "dropped");
	out = tree_of(t);
	td_golden(out, "discover", "ibnetdiscover.tree.conf", "ib tree");
	tg_free(out);
	tg_fabric_destroy(f);
	tg_topology_destroy(t);

	/* rewriting names */
	t = load(TG_FABRIC_IBNETDISCOVER, ib,
		 "match=a05-*,strip-prefix=a05-p1-,upper,suffix=.lab", NULL);
	is_int(tg_topology_nnodes(t), 10, "ib + rewrite: SU 1's 10 DGX");
	is_str(path_of(t, "DGX-01-C03.lab"),
	       "A10-P1-IBSPINE-01/A09-P1-IBLEAF-01-01",
	       "ib + rewrite: renamed host");
	tg_topology_destroy(t);
}

/* Small hand-written fabrics: shapes and names. */
static tg_topology *load_text(tg_fabric_format fmt, const char *text,
			      const char *rule, tg_err want, const char *what,
			      char *msg, size_t msglen)
{
	tg_fabric *f = tg_fabric_create();
	tg_topology *t = tg_topology_create();
	tg_errinfo ei = { "" };
	tg_err err;

	err = tg_fabric_set_hostmap(f, rule, &ei);
	if (!err)
		err = tg_fabric_add(f, fmt, text, strlen(text), "in.txt",
				    &ei);
	if (!err)
		err = tg_fabric_build(f, t, &ei);
	is_int(err, want, "%s", what);
	if (err != want || err)
		diag("%s", ei.msg);
	if (msg)
		snprintf(msg, msglen, "%s", ei.msg);
	if (!err) {
		ok(tg_topology_build(t, &ei) == TG_OK &&
		   tg_topology_check(t, &ei) == TG_OK, "%s: builds, checks",
		   what);
	}
	tg_fabric_destroy(f);
	if (err) {
		tg_topology_destroy(t);
		return NULL;
	}
	return t;
}

/* Malformed input: load_text() fails with err and, where msg is given,
 * a message containing it. */
typedef struct bad_input {
	const char *what, *text;
	tg_err err;
	const char *msg;
} bad_input;

static void bad_inputs(tg_fabric_format fmt, const bad_input *b, size_t n)
{
	char msg[512];
	size_t i;

	for (i = 0; i < n; i++) {
		load_text(fmt, b[i].text, NULL, b[i].err, b[i].what, msg,
			  sizeof(msg));
		if (b[i].msg)
			like(msg, b[i].msg, "%s: message", b[i].what);
	}
}

#define BAD_INPUTS(fmt, b) bad_inputs(fmt, b, sizeof(b) / sizeof(b[0]))

#define SW(id, n, desc) "Switch\t" #n " \"" id "\"\t\t# \"" desc "\" lid 1\n"
#define PT(p, peer, pp, desc) \
	"[" #p "]\t\"" peer "\"[" #pp "]\t\t# \"" desc "\" lid 2 4xNDR\n"
#define CA(id, desc) "Ca\t1 \"" id "\"\t\t# \"" desc "\"\n"
#define CP(peer, pp, desc) \
	"[1](abc)\t\"" peer "\"[" #pp "]\t\t# lid 3 lmc 0 \"" desc "\"\n"

/* a 3-level fat tree: core c1; spines s1 s2; leaves l1 l2 (s1), l3 (s2);
 * hosts h1 h2 (l1), h3 (l2), h4 (l3); plus a switch with no host */
static const char fat_tree[] =
	"# ibnetdiscover\n\nvendid=0x2c9\ndevid=0xd2f2\n"
	SW("S-c1", 4, "MF0;core-1:MQM9700/U1")
	PT(1, "S-s1", 3, "MF0;spine-1:MQM9700/U1")
	PT(2, "S-s2", 3, "MF0;spine-2:MQM9700/U1")
	"\n"
	SW("S-s1", 4, "MF0;spine-1:MQM9700/U1")
	PT(1, "S-l1", 3, "MF0;leaf-1:X")
	PT(2, "S-l2", 3, "MF0;leaf-2:X")
	PT(3, "S-c1", 1, "MF0;core-1:MQM9700/U1")
	"\n"
	SW("S-s2", 4, "MF0;spine-2:MQM9700/U1")
	PT(1, "S-l3", 3, "MF0;leaf-3:X")
	PT(3, "S-c1", 2, "MF0;core-1:MQM9700/U1")
	"\n"
	SW("S-l1", 4, "MF0;leaf-1:X")
	PT(1, "H-1", 1, "h1 mlx5_0")
	PT(2, "H-2", 1, "h2 mlx5_0")
	PT(3, "S-s1", 1, "MF0;spine-1:MQM9700/U1")
	"\n"
	SW("S-l2", 4, "MF0;leaf-2:X")
	PT(1, "H-3", 1, "h3 mlx5_0")
	PT(3, "S-s1", 2, "MF0;spine-1:MQM9700/U1")
	"\n"
	SW("S-l3", 4, "MF0;leaf-3:X")
	PT(1, "H-4", 1, "h4 mlx5_0")
	PT(3, "S-s2", 1, "MF0;spine-2:MQM9700/U1")
	"\n"
	SW("S-lonely", 4, "MF0;lonely:X")
	"\n"
	CA("H-1", "h1 mlx5_0") CP("S-l1", 1, "MF0;leaf-1:X") "\n"
	CA("H-2", "h2 mlx5_0") CP("S-l1", 2, "MF0;leaf-1:X") "\n"
	CA("H-3", "h3 mlx5_0") CP("S-l2", 1, "MF0;leaf-2:X") "\n"
	CA("H-4", "h4 mlx5_0") CP("S-l3", 1, "MF0;leaf-3:X") "\n";

/* malformed ibnetdiscover output */
static const bad_input ib_bad[] = {
	{ "no node block", "vendid=0x2c9\n", TG_EPARSE,
	  "in.txt:1: no Switch or Ca block" },
	{ "port past the count", SW("S-a", 2, "x") "[3]\t\"H-1\"[1]\n",
	  TG_EPARSE, "in.txt:2: port 3 of a node with 2 ports" },
	{ "port listed twice",
	  SW("S-a", 2, "x") "[1]\t\"H-1\"[1]\n[1]\t\"H-2\"[1]\n", TG_EEXIST,
	  "in.txt:3: port 1 listed twice" },
	{ "node twice", SW("S-a", 2, "x") "\n" SW("S-a", 2, "x"), TG_EEXIST,
	  "in.txt:3: node S-a is defined twice (first at in.txt:1)" },
	{ "port outside a block", "[1]\t\"H-1\"[1]\n", TG_EPARSE,
	  "in.txt:1: a port line outside" },
	{ "unterminated quote", SW("S-a", 2, "x") "[1]\t\"H-1[1]\n",
	  TG_EPARSE, "in.txt:2: expected the peer's id in quotes" },
	{ "unquoted id", "Switch 65 S-a\n", TG_EPARSE,
	  "in.txt:1: expected the node id in quotes" },
	{ "garbage line", "hello world\n", TG_EPARSE,
	  "in.txt:1: unrecognised line 'hello world'" },
	{ "link to a node without a block",
	  SW("S-a", 2, "x") PT(1, "H-1", 1, "h1 x") "\n", TG_EPARSE,
	  "in.txt:2: S-a port 1 links to H-1, which has no block of its own: "
	  "the output is truncated" },
	{ "one-sided link",
	  SW("S-a", 2, "x") PT(1, "H-1", 1, "h1 x") "\n" CA("H-1", "h1 x")
	  CP("S-a", 2, "x"), TG_EPARSE, "does not list that link back" },
};

static void test_ib_shapes(void)
{
	char *text, *out;
	tg_topology *t;

	t = load_text(TG_FABRIC_IBNETDISCOVER, fat_tree, NULL, TG_OK,
		      "fat tree", NULL, 0);
	if (t) {
		is_int(tg_topology_nlayers(t), 3, "fat tree: 3 levels");
		is_str(path_of(t, "h1"), "core-1/spine-1/leaf-1",
		       "fat tree: h1");
		is_str(path_of(t, "h3"), "core-1/spine-1/leaf-2",
		       "fat tree: h3");
		is_str(path_of(t, "h4"), "core-1/spine-2/leaf-3",
		       "fat tree: h4");
		out = tree_of(t);
		is_str(out,
		       "# topology.conf (tree) written by topogang: 4 nodes, "
		       "3 switch levels\n"
		       "SwitchName=core-1 Switches=spine-[1-2]\n"
		       "SwitchName=spine-1 Switches=leaf-[1-2]\n"
		       "SwitchName=spine-2 Switches=leaf-3\n"
		       "SwitchName=leaf-1 Nodes=h[1-2]\n"
		       "SwitchName=leaf-2 Nodes=h3\n"
		       "SwitchName=leaf-3 Nodes=h4\n", "fat tree: topology.conf");
		tg_free(out);
		tg_topology_destroy(t);
	}

	/* a leaf without uplinks stands on every level up to the top */
	text = malloc(sizeof(fat_tree) + 512);
	snprintf(text, sizeof(fat_tree) + 512, "%s%s", fat_tree,
		 SW("S-l9", 2, "MF0;leaf-9:X") PT(1, "H-9", 1, "h9 mlx5_0")
		 "\n" CA("H-9", "h9 mlx5_0") CP("S-l9", 1, "MF0;leaf-9:X"));
	t = load_text(TG_FABRIC_IBNETDISCOVER, text, NULL, TG_OK,
		      "isolated leaf", NULL, 0);
	if (t) {
		is_str(path_of(t, "h9"), "leaf-9/leaf-9/leaf-9",
		       "isolated leaf repeats on the missing levels");
		out = tree_of(t);
		like(out, "\nSwitchName=leaf-9 Nodes=h9\n",
		     "isolated leaf: written once");
		tg_free(out);
		tg_topology_destroy(t);
	}
	free(text);

	/* two switches with one description fall back to their ids */
	t = load_text(TG_FABRIC_IBNETDISCOVER,
		      SW("S-a", 2, "MF0;same:X") PT(1, "H-1", 1, "h1 x") "\n"
		      SW("S-b", 2, "MF0;same:X") PT(1, "H-2", 1, "h2 x") "\n"
		      CA("H-1", "h1 x") CP("S-a", 1, "") "\n"
		      CA("H-2", "h2 x") CP("S-b", 1, ""), NULL, TG_OK,
		      "duplicate switch names", NULL, 0);
	if (t) {
		is_str(path_of(t, "h1"), "S-a", "duplicate names: ids used");
		is_str(path_of(t, "h2"), "S-b", "duplicate names: ids used");
		tg_topology_destroy(t);
	}

	/* errors: one line naming the file and line */
	BAD_INPUTS(TG_FABRIC_IBNETDISCOVER, ib_bad);
	{
		static const char nul[] = "Switch 2 \"S-a\"\0\n";

		tg_fabric *f = tg_fabric_create();
		tg_errinfo ei = { "" };

		is_int(tg_fabric_add(f, TG_FABRIC_IBNETDISCOVER, nul,
				     sizeof(nul) - 1, "nul.out", &ei),
		       TG_EPARSE, "NUL byte");
		like(ei.msg, "nul.out:1: NUL byte", "NUL: message");
		is_int(tg_fabric_add(f, TG_FABRIC_IBNETDISCOVER, fat_tree,
				     strlen(fat_tree), "x", &ei), TG_ESTATE,
		       "after a failure the fabric takes nothing");
		tg_fabric_destroy(f);
	}
}

/* Every cut of the real capture is an error (or the whole file). */
static void test_truncated(void)
{
	size_t len = 0, cut, fails = 0, oks = 0, bad = 0;
	char *buf = td_read("discover",
			    "ibnetdiscover_dgx_h100_ndr_superpod.out", &len);
	char first[512] = "";

	if (!buf) {
		ok(0, "truncated: read the capture");
		return;
	}
	for (cut = 0; cut < len; cut += 4999) {
		tg_fabric *f = tg_fabric_create();
		tg_errinfo ei = { "" };
		tg_err err = tg_fabric_add(f, TG_FABRIC_IBNETDISCOVER, buf,
					   cut, "cut.out", &ei);

		if (err == TG_OK) {
			oks++;
		} else {
			fails++;
			if (strncmp(ei.msg, "cut.out:", 8) != 0)
				bad++;
			if (!first[0] && strstr(ei.msg, "truncated"))
				snprintf(first, sizeof(first), "%s", ei.msg);
		}
		tg_fabric_destroy(f);
	}
	is_int(oks, 0, "truncated capture: every cut is rejected");
	ok(fails > 50, "truncated capture: %zu cuts tried", fails);
	is_int(bad, 0, "truncated capture: every message names the file "
	       "and line");
	like(first, "the output is truncated", "truncated capture: says so");
	diag("%s", first);
	free(buf);
}

/* ---- host-map rules ---- */

static void test_hostmap(void)
{
	static const char csv[] =
		"host,spine,leaf\n"
		"node01.lab,s1,l1\nnode02.lab,s1,l1\ngpu-7,s1,l2\n"
		"login1,s2,l3\n";
	static const struct {
		const char *rule, *node;
		unsigned n;
	} cases[] = {
		{ NULL, "node01.lab", 4 },
		{ "strip-domain", "node01", 4 },
		{ "match=node*|gpu-?", "gpu-7", 3 },
		{ "drop=login*,strip-domain,upper", "NODE02", 3 },
		{ "replace=node/n,strip-suffix=.lab", "n02", 4 },
		{ "strip-prefix=gpu-,prefix=x", "x7", 4 },
		{ "match=*", "login1", 4 },
		{ "match=*1*", "login1", 2 },
	};
	static const struct {
		const char *rule, *msg;
	} bad[] = {
		{ "bogus", "unknown step 'bogus'" },
		{ "match", "needs a value" },
		{ "lower=x", "takes no value" },
		{ "match=a||b", "empty glob" },
		{ "lower,,upper", "empty step" },
		{ "replace=abc", "expected replace=FROM/TO" },
	};
	char msg[512];
	unsigned i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tg_topology *t = load_text(TG_FABRIC_CSV, csv, cases[i].rule,
					   TG_OK, cases[i].rule ?
					   cases[i].rule : "no rule", NULL,
					   0);

		if (!t)
			continue;
		is_int(tg_topology_nnodes(t), cases[i].n, "rule %s: %u hosts",
		       cases[i].rule ? cases[i].rule : "(none)", cases[i].n);
		ok(strcmp(path_of(t, cases[i].node), "(no node)") != 0,
		   "rule %s: node %s", cases[i].rule ? cases[i].rule :
		   "(none)", cases[i].node);
		tg_topology_destroy(t);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		tg_fabric *f = tg_fabric_create();
		tg_errinfo ei = { "" };

		ok(tg_fabric_set_hostmap(f, bad[i].rule, &ei) != TG_OK,
		   "bad rule '%s' is refused", bad[i].rule);
		like(ei.msg, bad[i].msg, "bad rule '%s': message",
		     bad[i].rule);
		tg_fabric_destroy(f);
	}
	load_text(TG_FABRIC_CSV, csv, "match=nothing*", TG_EINVAL,
		  "a rule that drops every host", msg, sizeof(msg));
	like(msg, "no host rows (4 rows: 4 dropped", "all dropped: message");
	{
		tg_topology *t = load_text(TG_FABRIC_CSV, csv,
					   "replace=node/a b", TG_OK,
					   "a name the rule makes invalid is "
					   "skipped", NULL, 0);

		is_int(tg_topology_nnodes(t), 2, "invalid names skipped: "
		       "gpu-7 and login1 stay");
		tg_topology_destroy(t);
	}
}

/* ---- NetQ ---- */

/* malformed NetQ graphs */
static const bad_input netq_bad[] = {
	{ "netq: malformed JSON", "[{\"nodes\": [], \"links\": [\n{]}]",
	  TG_EPARSE, "in.txt:2: malformed JSON" },
	{ "netq: nodes not an array", "[{\"nodes\": 3}]", TG_EPARSE,
	  "in.txt: [0]: expected \"nodes\" and \"links\"" },
	{ "netq: node without name",
	  "{\"nodes\": [{\"id\": \"a\"}], \"links\": []}", TG_EPARSE,
	  "[0].nodes[0]: a node needs" },
	{ "netq: link to nowhere",
	  "{\"nodes\": [{\"id\": \"a\", \"name\": \"x\"}], \"links\": "
	  "[{\"src\": \"a\", \"target\": \"zz\"}]}", TG_EPARSE,
	  "[0].links[0]: 'zz' is not a node" },
	{ "netq: switches but no host",
	  "{\"nodes\": [{\"id\": \"a\", \"name\": \"x\", \"device_type\": "
	  "\"switch\"}], \"links\": []}", TG_EINVAL, "no host is attached" },
};

static void test_netq(void)
{
	tg_fabric *f = NULL;
	tg_fabric_summary s;
	tg_topology *t;
	char *out;

	t = load(TG_FABRIC_NETQ, "netq_topology_graph.json", NULL, &f);
	tg_fabric_summary_get(f, &s);
	is_int(s.switches, 3, "netq: 2 leaves and a spine");
	is_int(s.hosts, 8, "netq: 8 DGX");
	is_int(tg_topology_nlayers(t), 2, "netq: 2 levels");
	is_str(path_of(t, "dgx-01"), "net-unit-s1/net-unit-l1",
	       "netq: dgx-01");
	is_str(path_of(t, "dgx-05"), "net-unit-s1/net-unit-l2",
	       "netq: dgx-05");
	out = tree_of(t);
	td_golden(out, "discover", "netq.tree.conf", "netq tree");
	tg_free(out);
	tg_fabric_destroy(f);
	tg_topology_destroy(t);

	t = load_text(TG_FABRIC_NETQ,
		      "{\"nodes\": [{\"id\": \"a\", \"name\": \"sw1\", "
		      "\"device_type\": \"switch\"}, {\"id\": \"b\", "
		      "\"name\": \"host1\", \"tier\": -1}],"
		      " \"links\": [{\"id\": \"a-*-b\"}]}", NULL, TG_OK,
		      "netq: flat nodes, links by id", NULL, 0);
	if (t) {
		is_str(path_of(t, "host1"), "sw1", "netq: flat graph");
		tg_topology_destroy(t);
	}
	BAD_INPUTS(TG_FABRIC_NETQ, netq_bad);
}

/* ---- NetQ compute nodes (NVLink domains) ---- */

/* The switch graph (optional) plus a compute-node list, built. */
static tg_topology *load_nvl(const char *graph, const char *nodes,
			     tg_fabric **keep)
{
	tg_fabric *f = tg_fabric_create();
	tg_topology *t = tg_topology_create();
	tg_errinfo ei = { "" };
	tg_err err = TG_OK;

	if (graph)
		err = tg_fabric_add_file(f, TG_FABRIC_NETQ,
					 td_path("discover", graph), &ei);
	if (!err)
		err = tg_fabric_add_file(f, TG_FABRIC_NETQ_NVL,
					 td_path("discover", nodes), &ei);
	if (!err)
		err = tg_fabric_build(f, t, &ei);
	if (!err)
		err = tg_topology_build(t, &ei);
	if (!err)
		err = tg_topology_check(t, &ei);
	is_int(err, TG_OK, "%s%s%s: loads, builds, checks",
	       graph ? graph : "", graph ? " + " : "", nodes);
	if (err)
		diag("%s", ei.msg);
	*keep = f;
	return t;
}

static const char split_g[] =
	"{\"nodes\": [{\"id\": \"a\", \"name\": \"l1\", \"device_type\": "
	"\"switch\"}, {\"id\": \"b\", \"name\": \"l2\", \"device_type\": "
	"\"switch\"}, {\"id\": \"c\", \"name\": \"h1\"}, {\"id\": \"d\", "
	"\"name\": \"h2\"}], \"links\": [{\"id\": \"a-*-c\"}, "
	"{\"id\": \"b-*-d\"}]}";
static const char split_n[] =
	"[{\"Name\": \"h1\", \"DomainUUID\": \"D\"}, {\"Name\": \"h2\", "
	"\"DomainUUID\": \"D\"}]";

/* malformed compute-node lists */
static const bad_input nvl_bad[] = {
	{ "compute nodes: truncated",
	  "[{\"Name\": \"n1\", \"DomainUUID\": \"D\"},\n{", TG_EPARSE,
	  "in.txt:" },
	{ "compute nodes: no DomainUUID", "[{\"Name\": \"n1\"}]", TG_EPARSE,
	  "in.txt: [0]: expected a compute node with string \"Name\" and "
	  "\"DomainUUID\"" },
	{ "compute nodes: bad domain",
	  "[{\"Name\": \"n1\", \"DomainUUID\": \"a b\"}]", TG_EPARSE,
	  "[0]: DomainUUID 'a b' is not a domain name" },
	{ "compute nodes: a node in two domains",
	  "[{\"Name\": \"n1\", \"DomainUUID\": \"A\"}, "
	  "{\"Name\": \"n1\", \"DomainUUID\": \"B\"}]", TG_EEXIST,
	  "in.txt: [1]: node 'n1' is already in NVLink domain 'A' "
	  "(in.txt: [0]), not 'B'" },
	{ "compute nodes: empty list", "[]", TG_EPARSE,
	  "in.txt: no compute node" },
	{ "compute nodes: none in a domain",
	  "[{\"Name\": \"n1\", \"DomainUUID\": \"\"}]", TG_EINVAL,
	  "no compute node with an NVLink domain" },
	/* the graph file given as a compute-node list */
	{ "compute nodes: a topology graph instead",
	  "[{\"nodes\": [], \"links\": []}]", TG_EPARSE,
	  "expected a compute node" },
};

static void test_netq_nvl(void)
{
	tg_fabric *f = NULL;
	tg_fabric_summary s;
	tg_topology *t;
	char msg[512], *out = NULL;
	tg_errinfo ei = { "" };
	unsigned i;
	bool warned = false;

	/* the real list alone: one layer, one block */
	t = load_nvl(NULL, "netq_compute_nodes.json", &f);
	tg_fabric_summary_get(f, &s);
	is_int(s.nvl_hosts, 2, "compute nodes: node1 and node2");
	is_int(s.nvl_domains, 1, "compute nodes: one NVLink domain");
	is_int(tg_topology_nlayers(t), 1, "compute nodes alone: one layer");
	is_str(tg_topology_layer_key(t, 0), TG_LABEL_ACCEL,
	       "compute nodes: the accelerator label key");
	is_str(path_of(t, "node2"), "3fbfc98b-7f95-4749-ab11-bd351a2aab3e",
	       "compute nodes: node2 in the DomainUUID");
	is_int(tg_export(t, TG_EXPORT_SLURM_BLOCK, NULL, &out, &ei), TG_OK,
	       "compute nodes: block export");
	td_golden(out, "discover", "netq_nvl.block.conf", "compute nodes block");
	tg_free(out);
	tg_fabric_destroy(f);
	tg_topology_destroy(t);

	/* with the real graph: their hosts do not meet, and that is said */
	t = load_nvl("netq_topology_graph.json", "netq_compute_nodes.json",
		     &f);
	is_int(tg_topology_nlayers(t), 3, "graph + list: 2 switch levels "
	       "and nvlink");
	for (i = 0; i < tg_fabric_nwarnings(f); i++)
		warned |= strstr(tg_fabric_warning(f, i), "2 hosts of the "
				 "compute-node list are on no switch of the "
				 "fabric: node[1-2]") != NULL;
	ok(warned, "graph + list: hosts on no switch, named");
	is_str(path_of(t, "node1"), "(outside)", "graph + list: node1 "
	       "outside the tree");
	out = tree_of(t);
	td_golden(out, "discover", "netq_nvl.tree.conf", "graph + list tree");
	tg_free(out);
	tg_fabric_destroy(f);
	tg_topology_destroy(t);

	/* the graph with a list of its own hosts: a domain under each leaf */
	t = load_nvl("netq_topology_graph.json", "netq_compute_nodes_dgx.json",
		     &f);
	tg_fabric_summary_get(f, &s);
	is_int(s.hosts, 8, "graph + own list: 8 hosts");
	is_int(tg_fabric_nwarnings(f), 0, "graph + own list: no warning");
	is_str(path_of(t, "dgx-05"), "net-unit-s1/net-unit-l2/"
	       "0b3a5f1e-6c2d-4f7a-9e21-5d8c7b6a4e02",
	       "graph + own list: dgx-05 in the second domain");
	is_int(layer_domains(t, 2), 2, "graph + own list: 2 NVLink domains");
	out = tree_of(t);
	td_golden(out, "discover", "netq_dgx_nvl.tree.conf", "graph + own list tree");
	tg_free(out);
	tg_fabric_destroy(f);
	tg_topology_destroy(t);

	/* a domain across two leaves: split, with a warning */
	f = tg_fabric_create();
	t = tg_topology_create();
	msg[0] = '\0';
	if (!tg_fabric_add(f, TG_FABRIC_NETQ, split_g, strlen(split_g),
			   "g.json", &ei) &&
	    !tg_fabric_add(f, TG_FABRIC_NETQ_NVL, split_n, strlen(split_n),
			   "n.json", &ei) &&
	    !tg_fabric_build(f, t, &ei) && tg_fabric_nwarnings(f))
		snprintf(msg, sizeof(msg), "%s", tg_fabric_warning(f, 0));
	if (!msg[0])
		diag("%s", ei.msg);
	like(msg, "NVLink domain 'D' spans switches: h1 is under l1, h2 "
	     "under l2",
	     "a domain across two leaves: warned");
	tg_fabric_destroy(f);
	tg_topology_destroy(t);

	/* malformed lists: one error naming the input and the entry */
	BAD_INPUTS(TG_FABRIC_NETQ_NVL, nvl_bad);
	t = load_text(TG_FABRIC_NETQ_NVL, "[{\"Name\": \"gpu-1.example\", "
		      "\"DomainUUID\": \"D\"}]", "strip-domain", TG_OK,
		      "compute nodes: the host-map rule applies", NULL, 0);
	if (t) {
		is_str(path_of(t, "gpu-1"), "D", "host-map: gpu-1 in D");
		tg_topology_destroy(t);
	}
}

/* ---- CSV (Crux) ---- */

/* malformed CSV tables */
static const bad_input csv_bad[] = {
	{ "csv: header without levels", "host\n", TG_EPARSE,
	  "in.txt:1: the header needs" },
	{ "csv: short row", "h,a,b\nx,1\n", TG_EPARSE,
	  "in.txt:2: 2 columns; the header (line 1) has 3" },
	{ "csv: empty field", "h,a\nx,\n", TG_EPARSE,
	  "in.txt:2: column 2 is empty" },
	{ "csv: host under two switches", "h,a\nx,s1\nx,s2\n", TG_EEXIST,
	  "in.txt:3: host 'x' is already under other switches (in.txt:2)" },
	{ "csv: unterminated quote", "h,a\nx,\"s1\n", TG_EPARSE,
	  "unterminated quote" },
	{ "csv: bad switch name", "h,a\nx,s/1\n", TG_EPARSE,
	  "in.txt:2: column 2: switch 's/1'" },
	{ "csv: level named twice", "h,a,a\n", TG_EPARSE, NULL },
	/* 200 + 1 + 60 bytes: a repeated ToR name is written with its
	 * path, which topology.conf must be able to read back */
	{ "csv: switch path over TG_MAX_NAME", "h,DSW,ASW\nx,"
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa,"
	  "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\n",
	  TG_ELIMIT, "in.txt:2: the switch path aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "aaaaaaaaa_..._bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb is 261 bytes" },
	{ "csv: empty input", "", TG_EPARSE, "in.txt:1: no header line" },
};

static void test_csv(void)
{
	tg_topology *t;
	tg_fabric *f = NULL;
	tg_fabric_summary s;
	char *out;

	t = load(TG_FABRIC_CSV, "alibaba_crux_2023_clos_topo.csv", NULL, &f);
	tg_fabric_summary_get(f, &s);
	is_int(s.hosts, 847, "crux: 847 hosts");
	is_int(tg_topology_nlayers(t), 3, "crux: DSW > PSW > ASW");
	is_str(tg_topology_layer_name(t, 1), "PSW", "crux: layer names from "
	       "the header");
	is_str(tg_topology_layer_key(t, 0), "fabric.topograph.run/tier-2",
	       "crux: DSW is tier-2");
	is_int(layer_domains(t, 1), 3, "crux: 3 PSWs");
	is_int(layer_domains(t, 2), 119, "crux: 119 ToR groups, (PSW, ASW) "
	       "pairs");
	is_str(path_of(t, "0c9d9de1b19e7f39b08f49ddfa26744ae26d3adf8bd59af1"
		       "b16e203b6fa5fe4b"), "G6/P10/S14", "crux: first row");
	ok(tg_topology_nwarnings(t) > 0, "crux: the core warns that ASW "
	   "names repeat under several PSWs");
	out = tree_of(t);
	td_golden(out, "discover", "crux.tree.conf", "crux tree");
	like(out, "SwitchName=P10 Switches=G6_P10_S[1-48]\n",
	     "crux: repeated ToR names are written as full paths");
	tg_free(out);
	tg_fabric_destroy(f);
	tg_topology_destroy(t);

	t = load_text(TG_FABRIC_CSV, "\xef\xbb\xbfhost, top ,leaf\r\n"
		      "# a comment\n\n\"h1\",t1,l1\r\nh2,\"t1\",l2\n"
		      "h1,t1,l1\n", NULL, TG_OK,
		      "csv: BOM, CRLF, quotes, blanks, a repeated row", NULL,
		      0);
	if (t) {
		is_int(tg_topology_nnodes(t), 2, "csv: 2 hosts");
		is_str(path_of(t, "h2"), "t1/l2", "csv: quoted switch");
		tg_topology_destroy(t);
	}
	BAD_INPUTS(TG_FABRIC_CSV, csv_bad);
}

/* ---- API ---- */

static void test_api(void)
{
	tg_fabric *f = tg_fabric_create();
	tg_topology *t = tg_topology_create();
	tg_errinfo ei = { "" };
	static const char csv[] = "h,a\nx,s\n";

	is_int(tg_fabric_build(f, t, &ei), TG_EINVAL, "build without input");
	is_int(tg_fabric_add(f, TG_FABRIC_CSV, csv, strlen(csv), NULL, &ei),
	       TG_OK, "csv");
	is_int(tg_fabric_set_hostmap(f, "lower", &ei), TG_ESTATE,
	       "host map after an input");
	is_int(tg_fabric_add(f, TG_FABRIC_NETQ, "{}", 2, "g.json", &ei),
	       TG_ESTATE, "a graph after a table");
	like(ei.msg, "g.json: a switch graph cannot be added to a fabric "
	     "read from host tables", "mixing: message");
	is_int(tg_fabric_add(f, TG_FABRIC_CSV, "h,a,b\n", 6, "b.csv", &ei),
	       TG_EPARSE, "a table with other levels");
	tg_fabric_destroy(f);

	f = tg_fabric_create();
	is_int(tg_fabric_add(f, TG_FABRIC_CSV, csv, strlen(csv), NULL, &ei),
	       TG_OK, "csv again");
	is_int(tg_fabric_add(f, TG_FABRIC_CSV, "h,a\ny,s\n", 8, "two.csv",
			     &ei), TG_OK, "a second table with the same "
	       "levels");
	is_int(tg_fabric_build(f, t, &ei), TG_OK, "build");
	is_int(tg_topology_nnodes(t), 2, "both tables' hosts");
	is_int(tg_fabric_build(f, t, &ei), TG_ESTATE, "into a used topology");
	tg_topology_destroy(t);
	t = tg_topology_create();
	is_int(tg_fabric_build(f, t, &ei), TG_OK, "built twice");
	is_int(tg_fabric_add_file(f, TG_FABRIC_CSV, "/no/such/file", &ei),
	       TG_EIO, "missing file");
	like(ei.msg, "/no/such/file", "missing file: message");
	is_int(tg_fabric_nwarnings(NULL), 0, "NULL fabric: no warnings");
	ok(tg_fabric_warning(f, 1000) == NULL, "warning past the end");
	tg_fabric_destroy(f);
	tg_fabric_destroy(NULL);
	tg_topology_destroy(t);
}

/* A host listed twice the same way is one host; listed another way, an
 * error naming both places (the builder's row and NVLink records). */
static void test_repeats(void)
{
	static const char csv[] = "h,a,b\nx,s,t\ny,s,u\nx,s,t\n";
	static const char csv2[] = "h,a,b\nx,s,u\n";
	static const char nvl[] = "[{\"Name\": \"x\", \"DomainUUID\": \"D1\"},"
		"{\"Name\": \"y\", \"DomainUUID\": \"D1\"},"
		"{\"Name\": \"x\", \"DomainUUID\": \"D1\"}]";
	static const char nvl2[] = "[{\"Name\": \"y\", \"DomainUUID\": \"D2\"}]";
	tg_fabric *f = tg_fabric_create();
	tg_topology *t = tg_topology_create();
	tg_fabric_summary sum;
	tg_errinfo ei = { "" };

	is_int(tg_fabric_add(f, TG_FABRIC_CSV, csv, strlen(csv), "a.csv",
			     &ei), TG_OK, "a row repeated as it was");
	is_int(tg_fabric_add(f, TG_FABRIC_NETQ_NVL, nvl, strlen(nvl),
			     "n.json", &ei), TG_OK, "an entry repeated");
	is_int(tg_fabric_build(f, t, &ei), TG_OK, "repeats: build");
	is_int(tg_topology_nnodes(t), 2, "repeats: two hosts");
	tg_fabric_summary_get(f, &sum);
	is_int(sum.host_ports, 3, "repeats: three rows read");
	is_int(sum.nvl_hosts, 2, "repeats: two NVLink hosts");
	is_int(sum.nvl_domains, 1, "repeats: one NVLink domain");
	tg_topology_destroy(t);
	is_int(tg_fabric_add(f, TG_FABRIC_CSV, csv2, strlen(csv2), "b.csv",
			     &ei), TG_EEXIST, "a host under other switches in "
	       "a second table");
	is_str(ei.msg, "b.csv:2: host 'x' is already under other switches "
	       "(a.csv:2)", "the message names both tables");
	tg_fabric_destroy(f);
	f = tg_fabric_create();
	is_int(tg_fabric_add(f, TG_FABRIC_NETQ_NVL, nvl, strlen(nvl),
			     "n.json", &ei), TG_OK, "compute nodes");
	is_int(tg_fabric_add(f, TG_FABRIC_NETQ_NVL, nvl2, strlen(nvl2),
			     "m.json", &ei), TG_EEXIST, "a host in another "
	       "domain in a second list");
	is_str(ei.msg, "m.json: [0]: node 'y' is already in NVLink domain "
	       "'D1' (n.json: [1]), not 'D2'", "the message names both "
	       "lists");
	tg_fabric_destroy(f);
}

/* ---- format detection ---- */

static void test_detect(void)
{
	static const struct {
		const char *file;
		tg_fabric_format fmt;
	} files[] = {
		{ "ibnetdiscover_dgx_h100_ndr_superpod.out",
		  TG_FABRIC_IBNETDISCOVER },
		{ "netq_topology_graph.json", TG_FABRIC_NETQ },
		{ "netq_compute_nodes.json", TG_FABRIC_NETQ_NVL },
		{ "netq_compute_nodes_dgx.json", TG_FABRIC_NETQ_NVL },
		{ "alibaba_crux_2023_clos_topo.csv", TG_FABRIC_CSV },
	};
	static const struct {
		const char *text;
		tg_fabric_format fmt;
	} texts[] = {
		{ "#\n# Topology file\n#\n\nvendid=0x2c9\n", TG_FABRIC_IBNETDISCOVER },
		{ "Switch\t36 \"S-1\"\n", TG_FABRIC_IBNETDISCOVER },
		{ "Ca 2 \"H-1\" # \"n1 mlx5_0\"\n", TG_FABRIC_IBNETDISCOVER },
		{ "  {\"nodes\": [], \"links\": []}", TG_FABRIC_NETQ },
		{ "[{\"Name\": \"n1\", \"DomainUUID\": \"d\"}]",
		  TG_FABRIC_NETQ_NVL },
		{ "\xef\xbb\xbf# hosts\nip,DSW,PSW\n", TG_FABRIC_CSV },
	};
	static const char *const none[] = {
		"", "\n\n# only comments\n", "hello world\n", "{\"kind\": 1}",
		"SwitchName=s0 Nodes=n[0-3]\n",
	};
	tg_fabric_format fmt;
	size_t i, len;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *buf = td_read("discover", files[i].file, &len);

		fmt = (tg_fabric_format)99;
		is_int(buf ? tg_fabric_detect(buf, len, &fmt) : TG_EIO, TG_OK,
		       "detect %s", files[i].file);
		is_int(fmt, files[i].fmt, "%s is %s", files[i].file,
		       tg_fabric_format_name(files[i].fmt));
		free(buf);
	}
	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		fmt = (tg_fabric_format)99;
		is_int(tg_fabric_detect(texts[i].text, strlen(texts[i].text),
					&fmt), TG_OK, "detect text %zu", i);
		is_int(fmt, texts[i].fmt, "text %zu is %s", i,
		       tg_fabric_format_name(texts[i].fmt));
	}
	for (i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		fmt = (tg_fabric_format)99;
		is_int(tg_fabric_detect(none[i], strlen(none[i]), &fmt),
		       TG_ENOENT, "no format: '%s'", none[i]);
		is_int(fmt, 99, "no format: *fmt untouched");
	}
	is_int(tg_fabric_detect(NULL, 0, &fmt), TG_EINVAL, "detect NULL");
	is_str(tg_fabric_format_name(TG_FABRIC_IBNETDISCOVER), "ibnetdiscover",
	       "name: ibnetdiscover");
	is_str(tg_fabric_format_name(TG_FABRIC_NETQ), "netq", "name: netq");
	is_str(tg_fabric_format_name(TG_FABRIC_CSV), "csv", "name: csv");
	is_str(tg_fabric_format_name(TG_FABRIC_NETQ_NVL), "compute-nodes",
	       "name: compute-nodes");
	ok(tg_fabric_format_name((tg_fabric_format)99) == NULL,
	   "name of no format: NULL");
}

/* The default source name is the format's name; an unknown format is
 * refused. */
static void test_source_names(void)
{
	tg_fabric *f = tg_fabric_create();
	tg_errinfo ei = { "" };

	is_int(tg_fabric_add(f, TG_FABRIC_CSV, "h\n", 2, NULL, &ei),
	       TG_EPARSE, "csv without levels");
	like(ei.msg, "csv:1: ", "csv: default source name");
	tg_fabric_destroy(f);
	f = tg_fabric_create();
	is_int(tg_fabric_add(f, TG_FABRIC_IBNETDISCOVER, "x\n", 2, NULL, &ei),
	       TG_EPARSE, "ibnetdiscover garbage");
	like(ei.msg, "ibnetdiscover:1: ", "ib: default source name");
	tg_fabric_destroy(f);
	f = tg_fabric_create();
	is_int(tg_fabric_add(f, TG_FABRIC_NETQ_NVL, "[]", 2, NULL, &ei),
	       TG_EPARSE, "empty compute-node list");
	like(ei.msg, "compute-nodes: ", "nvl: default source name");
	tg_fabric_destroy(f);
	f = tg_fabric_create();
	is_int(tg_fabric_add(f, (tg_fabric_format)99, "", 0, NULL, &ei),
	       TG_EINVAL, "unknown format");
	like(ei.msg, "bad arguments", "unknown format: message");
	tg_fabric_destroy(f);
}

int main(void)
{
	test_ibnetdiscover();
	test_ib_shapes();
	test_truncated();
	test_hostmap();
	test_netq();
	test_netq_nvl();
	test_csv();
	test_api();
	test_repeats();
	test_detect();
	test_source_names();
	return done_testing();
}
