/*
 * slurm_plugin/test_tgconf.c - unit tests of topogang.conf and
 * --topo-gather parsing (TAP; run by tests/slurm/test-topogang-conf).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "tgconf.h"

static int parse(tgs_conf *c, const char *text, char *err, size_t len)
{
	return tgs_conf_parse(c, text, strlen(text), "topogang.conf", err,
			      len);
}

static void test_gather(void)
{
	tgs_gather g;
	char err[TGS_ERRLEN], buf[256];

	is_int(tgs_gather_parse("block:prefer,spine:must", &g, err,
				sizeof(err)), 0, "gather: two layers parse");
	is_int(g.n, 2, "gather: two items");
	is_str(g.item[0].layer, "block", "gather: first layer");
	is_int(g.item[0].how, TGS_PREFER, "gather: first is prefer");
	is_int(g.item[1].how, TGS_MUST, "gather: second is must");
	tgs_gather_format(&g, buf, sizeof(buf));
	is_str(buf, "block:prefer,spine:must", "gather: canonical form");

	is_int(tgs_gather_parse("SPINE:MUST", &g, err, sizeof(err)), 0,
	       "gather: case-insensitive strategy");
	tgs_gather_format(&g, buf, sizeof(buf));
	is_str(buf, "SPINE:must", "gather: layer case kept");

	is_int(tgs_gather_parse("none", &g, err, sizeof(err)), 0,
	       "gather: none parses");
	ok(g.none && g.n == 0, "gather: none has no items");
	tgs_gather_format(&g, buf, sizeof(buf));
	is_str(buf, "none", "gather: none formats as none");

	ok(tgs_gather_parse("block", &g, err, sizeof(err)) == -1,
	   "gather: missing strategy refused");
	like(err, "expected LAYER:must or LAYER:prefer",
	     "gather: message says the syntax");
	ok(tgs_gather_parse("block:maybe", &g, err, sizeof(err)) == -1,
	   "gather: unknown strategy refused");
	ok(tgs_gather_parse("block:must,", &g, err, sizeof(err)) == -1,
	   "gather: trailing comma refused");
	ok(tgs_gather_parse(":must", &g, err, sizeof(err)) == -1,
	   "gather: empty layer refused");
	ok(tgs_gather_parse("a b:must", &g, err, sizeof(err)) == -1,
	   "gather: space in layer refused");
	ok(tgs_gather_parse("block:must,block:prefer", &g, err,
			    sizeof(err)) == -1,
	   "gather: repeated layer refused");
	like(err, "given twice", "gather: repeat named");
	ok(tgs_gather_parse("", &g, err, sizeof(err)) == -1,
	   "gather: empty refused");
	{
		char big[TGS_MAX_GATHER * 8 + 64];
		size_t off = 0;
		int i;

		for (i = 0; i <= TGS_MAX_GATHER; i++)
			off += (size_t) snprintf(big + off, sizeof(big) - off,
						 "%sl%d:must", i ? "," : "", i);
		ok(tgs_gather_parse(big, &g, err, sizeof(err)) == -1,
		   "gather: more than %d layers refused", TGS_MAX_GATHER);
		like(err, "more than", "gather: the bound is named");
	}
}

static void test_spread(void)
{
	tgs_spread sp;
	char err[TGS_ERRLEN], buf[256];

	is_int(tgs_spread_parse("rack", &sp, err, sizeof(err)), 0,
	       "spread: bare layer parses");
	ok(sp.n == 1 && sp.item[0].skew == 1 && !sp.item[0].hard,
	   "spread: default skew 1, soft");
	is_int(tgs_spread_parse("spine:2:hard,rack:soft", &sp, err,
				sizeof(err)), 0, "spread: two layers parse");
	tgs_spread_format(&sp, buf, sizeof(buf));
	is_str(buf, "spine:2:hard,rack:1:soft", "spread: canonical form");
	is_int(tgs_spread_parse("spine:HARD:3", &sp, err, sizeof(err)), 0,
	       "spread: fields in any order");
	ok(sp.item[0].hard && sp.item[0].skew == 3, "spread: hard, skew 3");
	ok(tgs_spread_parse("spine:0", &sp, err, sizeof(err)) == -1,
	   "spread: skew 0 refused");
	like(err, "skew must be 1 to", "spread: says the range");
	ok(tgs_spread_parse("spine:x", &sp, err, sizeof(err)) == -1,
	   "spread: junk field refused");
	ok(tgs_spread_parse("spine:1:hard:", &sp, err, sizeof(err)) == -1,
	   "spread: empty field refused");
	ok(tgs_spread_parse("spine,spine:2", &sp, err, sizeof(err)) == -1,
	   "spread: repeated layer refused");
	ok(tgs_spread_parse("", &sp, err, sizeof(err)) == -1,
	   "spread: empty refused");
}

static void test_slice(void)
{
	tgs_slice sl;
	char err[TGS_ERRLEN], buf[256];

	is_int(tgs_slice_parse("block:2,spine:4", &sl, err, sizeof(err)), 0,
	       "slice: two layers parse");
	ok(sl.n == 2 && sl.item[0].size == 2 && sl.item[1].size == 4,
	   "slice: sizes");
	tgs_slice_format(&sl, buf, sizeof(buf));
	is_str(buf, "block:2,spine:4", "slice: canonical form");
	ok(tgs_slice_parse("block", &sl, err, sizeof(err)) == -1,
	   "slice: a size is needed");
	like(err, "expected LAYER:SIZE", "slice: says the form");
	ok(tgs_slice_parse("block:0", &sl, err, sizeof(err)) == -1,
	   "slice: size 0 refused");
	like(err, "size must be 1 to", "slice: says the range");
	ok(tgs_slice_parse("block:2x", &sl, err, sizeof(err)) == -1,
	   "slice: junk size refused");
	ok(tgs_slice_parse("block:2,block:4", &sl, err, sizeof(err)) == -1,
	   "slice: repeated layer refused");
	ok(tgs_slice_parse("block:2,", &sl, err, sizeof(err)) == -1,
	   "slice: trailing comma refused");
	ok(tgs_slice_parse("", &sl, err, sizeof(err)) == -1,
	   "slice: empty refused");
}

static void test_conf(void)
{
	tgs_conf c;
	char err[TGS_ERRLEN] = "";
	const tgs_gather *g;

	tgs_conf_init(&c);
	is_int(parse(&c,
		     "# topogang.conf\n"
		     "TopologyFile=/etc/slurm/topology.conf\n"
		     "LayerName=spine Layer=switch-l1\n"
		     "layername=block layer=switch-l0   # leaf switches\n"
		     "DefaultGather=block:prefer\n"
		     "PartitionName=high Gather=spine:must\n"
		     "PartitionName=batch \\\n"
		     "   Gather=none\n"
		     "ReserveTime=300 Fallback=no Debug=yes\n", err,
		     sizeof(err)), 0, "conf: example parses");
	if (err[0])
		diag("%s", err);
	is_str(c.topology_file, "/etc/slurm/topology.conf",
	       "conf: TopologyFile");
	is_int(c.nalias, 2, "conf: two aliases");
	is_str(tgs_conf_layer(&c, "spine"), "switch-l1", "conf: spine alias");
	is_str(tgs_conf_layer(&c, "BLOCK"), "switch-l0",
	       "conf: aliases are case-insensitive");
	is_str(tgs_conf_layer(&c, "switch-l2"), "switch-l2",
	       "conf: other names pass through");
	is_int(c.npart, 2, "conf: two partitions");
	g = tgs_conf_part_gather(&c, "high");
	ok(g && g->n == 1 && g->item[0].how == TGS_MUST,
	   "conf: partition high gathers spine:must");
	g = tgs_conf_part_gather(&c, "batch");
	ok(g && g->none, "conf: continuation line joined (batch none)");
	g = tgs_conf_part_gather(&c, "other");
	ok(g && g->n == 1 && !strcmp(g->item[0].layer, "block"),
	   "conf: other partitions get DefaultGather");
	is_int(c.reserve_time, 300, "conf: ReserveTime");
	ok(!c.fallback && c.debug, "conf: Fallback and Debug");
	tgs_conf_free(&c);

	tgs_conf_init(&c);
	is_int(parse(&c, "", err, sizeof(err)), 0, "conf: empty file parses");
	is_int(c.reserve_time, 120, "conf: default ReserveTime 120");
	ok(c.fallback && !c.debug, "conf: default Fallback=yes Debug=no");
	ok(!tgs_conf_part_gather(&c, "x"), "conf: no default gather");
	tgs_conf_free(&c);
}

static void bad(const char *text, const char *want, const char *what)
{
	tgs_conf c;
	char err[TGS_ERRLEN] = "";

	tgs_conf_init(&c);
	c.reserve_time = 7;
	ok(parse(&c, text, err, sizeof(err)) == -1, "bad: %s refused", what);
	like(err, want, "bad: %s message", what);
	is_int(c.reserve_time, 7, "bad: %s leaves the old settings", what);
	tgs_conf_free(&c);
}

static void test_bad(void)
{
	bad("Foo=1\n", "topogang.conf:1: unknown key 'Foo'", "unknown key");
	bad("\n\nDefaultGather=block\n", "topogang.conf:3: DefaultGather",
	    "bad gather");
	bad("LayerName=spine\n", "topogang.conf:1: LayerName=spine needs "
	    "Layer=", "alias without layer");
	bad("LayerName=a Layer=x\nLayerName=A Layer=y\n",
	    "topogang.conf:2: LayerName=A defined twice", "duplicate alias");
	bad("PartitionName=p Gather=b:must\nPartitionName=p\n",
	    "topogang.conf:2: PartitionName=p defined twice",
	    "duplicate partition");
	bad("PartitionName=p Color=red\n", "unknown key 'Color' in a "
	    "PartitionName record", "unknown partition key");
	bad("ReserveTime=-1\n", "topogang.conf:1: ReserveTime", "negative");
	bad("ReserveTime=12x\n", "ReserveTime '12x'", "trailing junk");
	bad("ReserveTime=999999999999999999999\n", "ReserveTime",
	    "overflow");
	bad("Fallback=maybe\n", "Fallback 'maybe'", "bad boolean");
	bad("TopologyFile\n", "expected Key=Value", "missing =");
	bad("TopologyFile=\"/a b\n", "unterminated quote", "open quote");
	{
		char *big = malloc(TGS_MAX_LINE + 64);

		memset(big, 'a', TGS_MAX_LINE + 10);
		memcpy(big, "Debug=", 6);
		big[TGS_MAX_LINE + 10] = '\0';
		bad(big, "longer than", "overlong line");
		free(big);
	}
}

static void test_file(void)
{
	char path[] = "/tmp/tgconf-XXXXXX", err[TGS_ERRLEN];
	tgs_conf c;
	FILE *f;
	int fd = mkstemp(path);

	tgs_conf_init(&c);
	ok(fd >= 0, "file: temp file");
	if (fd < 0)
		return;
	f = fdopen(fd, "w");
	fputs("LayerName=spine Layer=switch-l1\r\nDebug=yes\r\n", f);
	fclose(f);
	is_int(tgs_conf_load(&c, path, false, err, sizeof(err)), 0,
	       "file: CRLF file loads");
	is_str(tgs_conf_layer(&c, "spine"), "switch-l1", "file: alias read");
	unlink(path);
	is_int(tgs_conf_load(&c, path, true, err, sizeof(err)), 0,
	       "file: missing file is fine when allowed");
	is_int(c.nalias, 0, "file: missing file gives defaults");
	ok(tgs_conf_load(&c, path, false, err, sizeof(err)) == -1,
	   "file: missing file is an error otherwise");
	like(err, path, "file: message names the file");
	tgs_conf_free(&c);
}

int main(void)
{
	test_gather();
	test_spread();
	test_slice();
	test_conf();
	test_bad();
	test_file();
	return done_testing();
}
