/*
 * tests/unit/test_request.c - the request grammar (topogang/request.h)
 * that the CLI, topogang.conf, the SPANK plugin and mixed mode share:
 * the three kinds, the case rule, errors naming text and column, the
 * bounds, the canonical form (format then parse gives the same request)
 * and applying a request to a gang through a layer map.
 */
#include <stdio.h>
#include <string.h>

#include "tap.h"
#include "topogang/topogang.h"

static tg_err parse(tg_request *r, tg_request_kind k, const char *txt,
		    tg_errinfo *ei)
{
	ei->msg[0] = '\0';
	return tg_request_parse(r, k, txt, ei);
}

/* Parses, formats, and checks the canonical text; then parses that
 * again and checks the same request comes back. */
static void round_trip(tg_request_kind k, const char *txt, const char *want)
{
	tg_request r, r2;
	tg_errinfo ei;
	char buf[TG_REQUEST_MAX_TEXT];

	is_int(parse(&r, k, txt, &ei), TG_OK, "parse '%s'", txt);
	is_int(tg_request_format(&r, buf, sizeof(buf)), TG_OK,
	       "format '%s'", txt);
	is_str(buf, want, "canonical form of '%s'", txt);
	is_int(parse(&r2, k, buf, &ei), TG_OK, "parse '%s' again", buf);
	ok(r2.n == r.n && r2.none == r.none &&
	   !memcmp(r2.item, r.item, r.n * sizeof(r.item[0])),
	   "'%s' reads back as the same request", buf);
}

static void test_gather(void)
{
	tg_request r;
	tg_errinfo ei;

	round_trip(TG_REQUEST_GATHER, "block:prefer,spine:must",
		   "block:prefer,spine:must");
	round_trip(TG_REQUEST_GATHER, "none", "none");
	round_trip(TG_REQUEST_GATHER, "NONE", "none");
	/* the case rule: keywords in any case, layers kept as written */
	round_trip(TG_REQUEST_GATHER, "SPINE:MUST,Block:Prefer",
		   "SPINE:must,Block:prefer");
	round_trip(TG_REQUEST_GATHER, "topology.kubernetes.io/zone:must",
		   "topology.kubernetes.io/zone:must");
	is_int(parse(&r, TG_REQUEST_GATHER, "block:prefer,spine:must", &ei),
	       TG_OK, "gather: two layers");
	ok(r.n == 2 && r.item[0].how == TG_GATHER_PREFER &&
	   r.item[1].how == TG_GATHER_MUST && !r.none,
	   "gather: strategies in order");
	is_int(parse(&r, TG_REQUEST_GATHER, "block", &ei), TG_EPARSE,
	       "gather: missing strategy refused");
	is_str(ei.msg, "'block' at column 1: 'block': expected LAYER:must "
	       "or LAYER:prefer", "gather: the message names text and column");
	ok(r.n == 0, "gather: a refused request is left empty");
	is_int(parse(&r, TG_REQUEST_GATHER, "block:must,spine:maybe", &ei),
	       TG_EPARSE, "gather: unknown strategy refused");
	is_str(ei.msg, "'block:must,spine:maybe' at column 18: "
	       "'spine:maybe': expected LAYER:must or LAYER:prefer",
	       "gather: the column is the bad field's");
	is_int(parse(&r, TG_REQUEST_GATHER, "block:must,", &ei), TG_EPARSE,
	       "gather: trailing comma refused");
	like(ei.msg, "at column 11: trailing comma", "gather: comma named");
	is_int(parse(&r, TG_REQUEST_GATHER, ":must", &ei), TG_EPARSE,
	       "gather: empty layer refused");
	is_int(parse(&r, TG_REQUEST_GATHER, "a b:must", &ei), TG_EPARSE,
	       "gather: space in a layer refused");
	like(ei.msg, "bad layer name", "gather: says the layer is bad");
	is_int(parse(&r, TG_REQUEST_GATHER, "block:must,BLOCK:prefer", &ei),
	       TG_EPARSE, "gather: a layer twice (any case) refused");
	like(ei.msg, "at column 12: layer 'BLOCK' given twice",
	     "gather: repeat named");
	is_int(parse(&r, TG_REQUEST_GATHER, "", &ei), TG_EPARSE,
	       "gather: empty text refused");
	like(ei.msg, "empty request", "gather: says it is empty");
	is_int(tg_request_parse(&r, TG_REQUEST_GATHER, NULL, NULL), TG_EINVAL,
	       "gather: NULL text refused");
	is_int(tg_request_parse(&r, (tg_request_kind)9, "a:must", NULL),
	       TG_EINVAL, "an unknown kind refused");
}

static void test_slice_spread(void)
{
	tg_request r;
	tg_errinfo ei;

	round_trip(TG_REQUEST_SLICE, "block:2,spine:4", "block:2,spine:4");
	is_int(parse(&r, TG_REQUEST_SLICE, "block", &ei), TG_EPARSE,
	       "slice: a size is needed");
	like(ei.msg, "expected LAYER:SIZE", "slice: says the form");
	is_int(parse(&r, TG_REQUEST_SLICE, "block:0", &ei), TG_ELIMIT,
	       "slice: size 0 refused");
	like(ei.msg, "at column 7: 'block:0': size must be 1 to 1048576",
	     "slice: says the range");
	is_int(parse(&r, TG_REQUEST_SLICE, "block:1048577", &ei), TG_ELIMIT,
	       "slice: past TG_REQUEST_MAX_SLICE refused");
	is_int(parse(&r, TG_REQUEST_SLICE, "block:1048576", &ei), TG_OK,
	       "slice: TG_REQUEST_MAX_SLICE itself accepted");
	is_int(parse(&r, TG_REQUEST_SLICE, "block:2x", &ei), TG_EPARSE,
	       "slice: junk size refused");
	is_int(parse(&r, TG_REQUEST_SLICE, "block:+2", &ei), TG_EPARSE,
	       "slice: a sign refused");

	round_trip(TG_REQUEST_SPREAD, "rack", "rack:1:soft");
	round_trip(TG_REQUEST_SPREAD, "spine:2:hard,rack:soft",
		   "spine:2:hard,rack:1:soft");
	round_trip(TG_REQUEST_SPREAD, "spine:HARD:3", "spine:3:hard");
	is_int(parse(&r, TG_REQUEST_SPREAD, "spine:0", &ei), TG_ELIMIT,
	       "spread: skew 0 refused");
	like(ei.msg, "skew must be 1 to 1000000", "spread: says the range");
	is_int(parse(&r, TG_REQUEST_SPREAD, "spine:1000000", &ei), TG_OK,
	       "spread: TG_REQUEST_MAX_SKEW accepted");
	is_int(parse(&r, TG_REQUEST_SPREAD, "spine:99999999999", &ei),
	       TG_ELIMIT, "spread: an overflowing skew refused");
	is_int(parse(&r, TG_REQUEST_SPREAD, "spine:x", &ei), TG_EPARSE,
	       "spread: junk field refused");
	like(ei.msg, "at column 7: 'spine:x': expected LAYER[:SKEW][:hard|"
	     ":soft]", "spread: says the form");
	is_int(parse(&r, TG_REQUEST_SPREAD, "spine:1:hard:", &ei), TG_EPARSE,
	       "spread: empty field refused");
	is_int(parse(&r, TG_REQUEST_SPREAD, "spine,spine:2", &ei), TG_EPARSE,
	       "spread: repeated layer refused");
}

static void test_bounds(void)
{
	char big[TG_REQUEST_MAX_ITEMS * 8 + 64], lay[TG_REQUEST_MAX_LAYER + 8];
	char small[12];
	size_t off = 0;
	tg_request r;
	tg_request_item it;
	tg_errinfo ei;
	int i;

	for (i = 0; i <= TG_REQUEST_MAX_ITEMS; i++)
		off += (size_t)snprintf(big + off, sizeof(big) - off,
					"%sl%d:must", i ? "," : "", i);
	is_int(parse(&r, TG_REQUEST_GATHER, big, &ei), TG_ELIMIT,
	       "more than TG_REQUEST_MAX_ITEMS layers refused");
	like(ei.msg, "TG_REQUEST_MAX_ITEMS", "the bound is named");
	memset(lay, 'a', sizeof(lay));
	memcpy(lay + TG_REQUEST_MAX_LAYER + 1, ":must", 6);
	is_int(parse(&r, TG_REQUEST_GATHER, lay, &ei), TG_ELIMIT,
	       "a layer past TG_REQUEST_MAX_LAYER refused");
	like(ei.msg, "TG_REQUEST_MAX_LAYER", "the layer bound is named");

	tg_request_init(&r, TG_REQUEST_GATHER);
	memset(&it, 0, sizeof(it));
	snprintf(it.layer, sizeof(it.layer), "spine");
	it.how = TG_GATHER_NONE;
	is_int(tg_request_add(&r, &it, &ei), TG_EINVAL,
	       "add: a gather that is neither must nor prefer refused");
	it.how = TG_GATHER_MUST;
	is_int(tg_request_add(&r, &it, &ei), TG_OK, "add: spine:must");
	snprintf(it.layer, sizeof(it.layer), "block");
	is_int(tg_request_add(&r, &it, &ei), TG_OK, "add: block:must");
	is_int(tg_request_format(&r, small, sizeof(small)), TG_ELIMIT,
	       "format: a short buffer is TG_ELIMIT");
	is_str(small, "", "format: ... and leaves it empty");
	snprintf(it.layer, sizeof(it.layer), "bad layer");
	is_int(tg_request_add(&r, &it, &ei), TG_EINVAL,
	       "add: a layer the grammar cannot write refused");
	for (i = (int)r.n; i < TG_REQUEST_MAX_ITEMS; i++) {
		snprintf(it.layer, sizeof(it.layer), "l%d", i);
		tg_request_add(&r, &it, NULL);
	}
	is_int(tg_request_add(&r, &it, &ei), TG_ELIMIT,
	       "add: past TG_REQUEST_MAX_ITEMS refused");
}

static const char *alias(void *ctx, const char *name)
{
	return !strcmp(name, "spine") ? (const char *)ctx : name;
}

static void test_apply(void)
{
	tg_gang *g = tg_gang_create("g");
	tg_request r;
	tg_errinfo ei;
	tg_gather how = TG_GATHER_NONE;
	unsigned skew = 0;
	bool hard = false;

	tg_request_parse(&r, TG_REQUEST_GATHER, "spine:must,block:prefer",
			 NULL);
	is_int(tg_request_apply(&r, g, alias, "switch-l1", &ei), TG_OK,
	       "apply: gather");
	is_int(tg_gang_ngathers(g), 2, "apply: two gathers");
	is_str(tg_gang_gather_at(g, 0, &how), "switch-l1",
	       "apply: the layer went through the map");
	is_int(how, TG_GATHER_MUST, "apply: must");
	tg_request_parse(&r, TG_REQUEST_SPREAD, "rack:2:hard", NULL);
	is_int(tg_request_apply(&r, g, NULL, NULL, &ei), TG_OK,
	       "apply: spread");
	is_str(tg_gang_spread_at(g, 0, &skew, &hard), "rack",
	       "apply: spread layer");
	ok(skew == 2 && hard, "apply: skew 2, hard");
	tg_request_parse(&r, TG_REQUEST_SLICE, "block:4", NULL);
	is_int(tg_request_apply(&r, g, NULL, NULL, &ei), TG_OK,
	       "apply: slice");
	is_int(tg_request_apply(&r, NULL, NULL, NULL, &ei), TG_EINVAL,
	       "apply: no gang refused");
	tg_gang_destroy(g);
}

int main(void)
{
	test_gather();
	test_slice_spread();
	test_bounds();
	test_apply();
	return done_testing();
}
