/*
 * tests/unit/test_draw.c - tg_draw_render(): the three forms of the
 * picture on a small fabric with a placed gang, a running gang, an
 * unschedulable node, a node outside the tree and names that need
 * escaping; bad arguments; the same bytes twice; the allocation-failure
 * sweep.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "topogang/topogang.h"
#include "tap.h"
#include "oom.h"

#define HOSTILE	"n<&>\"'"
#define BADUTF	"bad\xff"

static tg_topology *fabric(void)
{
	tg_topology *t = tg_topology_create();
	const char *p0[] = { "spine-0", "block-0" };
	const char *p1[] = { "spine-0", "block-1" };
	const char *names[] = { "node-0", HOSTILE, BADUTF, "node-3" };
	const char *const *paths[] = { p0, p0, p1, p1 };
	tg_node_id id;
	tg_shape half;
	tg_alloc_spec a;
	unsigned i;

	if (!t || tg_topology_add_layer(t, "spine", "net/spine") ||
	    tg_topology_add_layer(t, "block", "net/block"))
		goto fail;
	for (i = 0; i < 4; i++)
		if (tg_topology_add_node(t, names[i], paths[i], &id) ||
		    tg_topology_node_set_gpus(t, id, 8, NULL))
			goto fail;
	if (tg_topology_add_node(t, "loose", NULL, &id) ||
	    tg_topology_node_set_gpus(t, id, 8, NULL) ||
	    tg_topology_node_set_unschedulable(t, 3, true) ||
	    tg_topology_build(t, NULL))
		goto fail;
	memset(&half, 0, sizeof(half));
	half.v[TG_RES_GPU] = 4;
	memset(&a, 0, sizeof(a));
	a.pod = "etl-0";
	a.gang = "etl<1>";
	a.node = 2;
	a.shape = &half;
	a.gpus = 0x0f;
	if (tg_topology_add_alloc(t, &a))
		goto fail;
	return t;
fail:
	tg_topology_destroy(t);
	return NULL;
}

/* The whole run: fabric, a gang placed, the three forms rendered. */
typedef struct run {
	char *out[3];
	tg_errinfo ei;
	bool discard;	/* free the pictures (the allocation sweep) */
} run;

static tg_err render_all(void *ctx)
{
	run *r = ctx;
	tg_topology *t = fabric();
	tg_gang *g = NULL;
	tg_decision *d = NULL;
	tg_shape sh;
	tg_draw_opts o;
	tg_draw_gang hg;
	tg_draw_note note = { 1, "cable <7> & fan" };
	const tg_decision *ds[1];
	unsigned ps, f;
	tg_err e = TG_ENOMEM;

	memset(r->out, 0, sizeof(r->out));
	memset(&sh, 0, sizeof(sh));
	sh.v[TG_RES_GPU] = 8;
	if (!t || !(g = tg_gang_create("train")) ||
	    tg_gang_add_podset(g, "w", &sh, 2, &ps))
		goto out;
	if ((e = tg_place(t, g, &d, NULL)))
		goto out;
	if (tg_decision_status(d) != TG_STATUS_PLACED) {
		e = TG_ESTATE;
		goto out;
	}
	ds[0] = d;
	memset(&hg, 0, sizeof(hg));
	hg.name = "big<script>";
	hg.state = "pending";
	hg.reason = "no block can hold 9 members & more";
	memset(&o, 0, sizeof(o));
	o.title = "t<i>tle";
	o.decisions = ds;
	o.ndecisions = 1;
	o.gangs = &hg;
	o.ngangs = 1;
	o.notes = &note;
	o.nnotes = 1;
	for (f = 0; f < 3 && !e; f++)
		e = tg_draw_render(t, (tg_draw_format)f, &o, &r->out[f],
				   &r->ei);
out:
	if (e || r->discard)
		for (f = 0; f < 3; f++) {
			tg_free(r->out[f]);
			r->out[f] = NULL;
		}
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);
	return e;
}

static void free_run(run *r)
{
	unsigned f;

	for (f = 0; f < 3; f++)
		tg_free(r->out[f]);
}

static void test_svg(const char *s)
{
	like(s, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>", "SVG prolog");
	like(s, "data-node=\"n&lt;&amp;&gt;&quot;&#39;\"",
	     "a node name escaped in an attribute");
	like(s, "data-node=\"bad\xef\xbf\xbd\"",
	     "a byte that is not UTF-8 becomes U+FFFD");
	ok(!strstr(s, "<script") && !strstr(s, HOSTILE),
	   "no name reaches the SVG unescaped");
	like(s, "data-gang=\"train\" data-rank=\"0\"", "rank 0 marked");
	like(s, "data-gang=\"train\" data-rank=\"1\"", "rank 1 marked");
	like(s, "data-flag=\"no net/spine, net/block label: outside the "
	     "topology\"", "the node outside the tree flagged with why");
	like(s, "data-flag=\"unschedulable (cordoned, drained or down)\"",
	     "the unschedulable node flagged");
	like(s, "data-flag=\"cable &lt;7&gt; &amp; fan\"",
	     "the host's note, escaped");
	like(s, "data-gangs=\"etl&lt;1&gt;\"", "the running gang named");
	like(s, "class=\"n u2\"", "the half-used node coloured half used");
	like(s, "\xe2\x97\x80 train", "the domain holding the gang names it");
	like(s, "big&lt;script&gt;</tspan> pending",
	     "the host's gang listed, escaped");
	like(s, "no block can hold 9 members &amp; more",
	     "its reason listed");
	like(s, "class=\"t\">t&lt;i&gt;tle</text>", "the title escaped");
	like(s, "NVLink domain", "the legend");
}

static void test_json(const char *s)
{
	cJSON *j = cJSON_Parse(s), *n, *g;
	int i;
	bool flagged = false;

	ok(j != NULL, "the JSON parses");
	n = cJSON_GetObjectItem(j, "nodes");
	g = cJSON_GetObjectItem(j, "gangs");
	is_int(cJSON_GetArraySize(n), 5, "5 nodes");
	is_int(cJSON_GetArraySize(cJSON_GetObjectItem(j, "domains")), 3,
	       "3 domains (spine-0, two blocks)");
	is_int(cJSON_GetArraySize(g), 2, "2 gangs (the decision, the host's)");
	is_int(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(g,
							0), "members")), 2,
	       "the decision's 2 members");
	for (i = 0; i < cJSON_GetArraySize(n); i++) {
		cJSON *x = cJSON_GetArrayItem(n, i);

		if (!strcmp(cJSON_GetObjectItem(x, "name")->valuestring,
			    HOSTILE))
			flagged = cJSON_IsString(cJSON_GetObjectItem(x,
								     "flag"));
	}
	ok(flagged, "the hostile name survives the JSON as itself");
	like(s, "\"name\": \"bad\xef\xbf\xbd\"",
	     "a byte that is not UTF-8 is U+FFFD in the JSON too");
	cJSON_Delete(j);
}

static void test_html(const char *s)
{
	const char *a = strstr(s, "<script>");

	like(s, "<!DOCTYPE html>", "HTML doctype");
	ok(a && !strstr(a + 1, "<script"), "one script, the page's own");
	like(s, "data-state=\"\"", "no state URL: the page does not poll");
	like(s, "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"fabric\"",
	     "the SVG inline");
	like(s, "<li class=\"g\" data-gang=\"big&lt;script&gt;\"",
	     "the side panel lists the host's gang, escaped");
}

static void test_errors(void)
{
	tg_topology *t = tg_topology_create(), *b = fabric();
	tg_errinfo ei = { "" };
	tg_draw_member m = { 99, 0 };
	tg_draw_gang g = { "x", "bound", NULL, NULL, &m, 1 };
	tg_draw_note note = { 42, "x" };
	tg_draw_opts o;
	char *out = (char *)1;

	is_int(tg_draw_render(t, TG_DRAW_SVG, NULL, &out, &ei), TG_EINVAL,
	       "an unbuilt topology: TG_EINVAL");
	ok(out == NULL, "... and *out is NULL");
	like(ei.msg, "not built", "... saying so");
	is_int(tg_draw_render(b, (tg_draw_format)7, NULL, &out, &ei),
	       TG_EINVAL, "an unknown format: TG_EINVAL");
	memset(&o, 0, sizeof(o));
	o.gangs = &g;
	o.ngangs = 1;
	is_int(tg_draw_render(b, TG_DRAW_SVG, &o, &out, &ei), TG_EINVAL,
	       "a member on a node id out of range: TG_EINVAL");
	like(ei.msg, "gang x: member 0 on node id 99 of 5", "... naming it");
	memset(&o, 0, sizeof(o));
	o.notes = &note;
	o.nnotes = 1;
	is_int(tg_draw_render(b, TG_DRAW_JSON, &o, &out, &ei), TG_EINVAL,
	       "a note on a node id out of range: TG_EINVAL");
	is_int(tg_draw_render(b, TG_DRAW_SVG, NULL, NULL, &ei), TG_EINVAL,
	       "no output pointer: TG_EINVAL");
	is_int(tg_draw_render(b, TG_DRAW_SVG, NULL, &out, &ei), TG_OK,
	       "no options: the bare fabric");
	like(out, "class=\"t\">topogang: 5 nodes</text>", "a default title");
	tg_free(out);
	tg_topology_destroy(t);
	tg_topology_destroy(b);
}

/* A layer named like an NVLink domain is drawn as one (dashed, "nv"). */
static void test_nvlink(void)
{
	tg_topology *t = tg_topology_create();
	const char *p0[] = { "block-0", "clique-a" };
	static const uint8_t isl[8] = { 0, 0, 1, 1, 0, 0, 1, 1 };
	tg_node_id id;
	char *svg = NULL, *json = NULL;

	tg_topology_add_layer(t, "block", NULL);
	tg_topology_add_layer(t, "clique", "nvidia.com/gpu.clique");
	tg_topology_add_node(t, "gb-0", p0, &id);
	tg_topology_node_set_gpus(t, id, 4, NULL);
	tg_topology_add_node(t, "hgx-0", p0, &id);
	tg_topology_node_set_gpus(t, id, 8, isl);
	tg_topology_build(t, NULL);
	is_int(tg_draw_render(t, TG_DRAW_SVG, NULL, &svg, NULL), TG_OK,
	       "nvlink: SVG");
	is_int(tg_draw_render(t, TG_DRAW_JSON, NULL, &json, NULL), TG_OK,
	       "nvlink: JSON");
	like(svg, "<g class=\"d d2 nv\" data-path=\"block-0/clique-a\"",
	     "nvlink: the clique's box is an NVLink domain");
	like(svg, "<g class=\"d d1\" data-path=\"block-0\"",
	     "nvlink: the block's is not");
	like(json, "\"layer\": \"clique\", \"nvlink\": true",
	     "nvlink: the JSON says so");
	like(svg, "hgx-0: 0/8 GPUs used; NVLink islands 0-1,4-5|2-3,6-7",
	     "nvlink: a node's islands in its tooltip");
	like(json, "\"nvlink_islands\": \"0-1,4-5|2-3,6-7\"",
	     "nvlink: and in the JSON");
	like(json, "\"name\": \"gb-0\", \"domain\": \"block-0/clique-a\", "
	     "\"gpus\": 4, \"gpus_used\": 0, \"flag\": null, "
	     "\"nvlink_islands\": null", "nvlink: one island: none shown");
	tg_free(svg);
	tg_free(json);
	tg_topology_destroy(t);
}

int main(void)
{
	run r1, r2;
	unsigned f;

	memset(&r1, 0, sizeof(r1));
	memset(&r2, 0, sizeof(r2));
	is_int(render_all(&r1), TG_OK, "the three forms rendered: %s",
	       r1.ei.msg);
	if (r1.out[0] && r1.out[1] && r1.out[2]) {
		test_svg(r1.out[0]);
		test_html(r1.out[1]);
		test_json(r1.out[2]);
	}
	is_int(render_all(&r2), TG_OK, "rendered again");
	for (f = 0; f < 3; f++)
		ok(r1.out[f] && r2.out[f] && !strcmp(r1.out[f], r2.out[f]),
		   "form %u: the same bytes twice", f);
	free_run(&r1);
	free_run(&r2);
	test_errors();
	test_nvlink();
	{
		run r3;

		memset(&r3, 0, sizeof(r3));
		r3.discard = true;
		oom_sweep(render_all, &r3, "draw");
	}
	return done_testing();
}
