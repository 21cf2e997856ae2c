/*
 * slurm_plugin/test_tgconf.c - unit tests of topogang.conf parsing (TAP;
 * run by tests/slurm/test-topogang-conf); the request grammar itself is
 * the core's, tested by tests/unit/test_request.c.
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

/* The requests are the core's grammar (tests/unit/test_request.c has its
 * cases); here: topogang.conf hands its values to it, keywords in any
 * case as topogang.conf has always accepted, and says where. */
static void test_requests(void)
{
	tgs_conf c;
	char err[TGS_ERRLEN] = "";
	const tg_request *g;

	tgs_conf_init(&c);
	is_int(parse(&c, "DefaultGather=SPINE:MUST,block:Prefer\n"
		     "PartitionName=p Gather=NONE\n", err, sizeof(err)), 0,
	       "requests: keywords in any case");
	g = tgs_conf_part_gather(&c, "q");
	ok(g && g->n == 2 && g->item[0].how == TG_GATHER_MUST &&
	   !strcmp(g->item[0].layer, "SPINE") &&
	   g->item[1].how == TG_GATHER_PREFER,
	   "requests: DefaultGather read by the core's grammar");
	g = tgs_conf_part_gather(&c, "p");
	ok(g && g->none && !g->n, "requests: Gather=NONE is none");
	tgs_conf_free(&c);
}

static void test_conf(void)
{
	tgs_conf c;
	char err[TGS_ERRLEN] = "";
	const tg_request *g;

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
	ok(g && g->n == 1 && g->item[0].how == TG_GATHER_MUST,
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
	bad("\n\nDefaultGather=block\n", "topogang.conf:3: DefaultGather: "
	    "'block' at column 1: 'block': expected LAYER:must or "
	    "LAYER:prefer", "bad gather");
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
	test_requests();
	test_conf();
	test_bad();
	test_file();
	return done_testing();
}
