/*
 * The example of libtopogang(3): build a two-layer fabric, ask for a gang
 * of 4 whole nodes that prefers one block, print where it goes and why.
 * Compiled and run by `make check`, so the man page's example works.
 */
#include <stdio.h>
#include <string.h>

#include <topogang/topogang.h>

int main(void)
{
	static const char *spine[] = { "s0", "s0", "s0", "s1", "s1", "s1" };
	static const char *block[] = { "b0", "b0", "b1", "b2", "b2", "b2" };
	tg_topology *t = tg_topology_create();
	tg_gang *g = tg_gang_create("default/train");
	tg_decision *d = NULL;
	const tg_decision *cd;
	tg_draw_opts pic;
	char *svg = NULL;
	tg_errinfo ei;
	tg_shape member;
	unsigned i, ps;
	char name[16];
	int rc = 1;

	if (!t || !g)
		goto out;
	tg_topology_add_layer(t, "spine", NULL);
	tg_topology_add_layer(t, "block", NULL);
	for (i = 0; i < 6; i++) {
		const char *path[2] = { spine[i], block[i] };
		tg_node_id n;

		snprintf(name, sizeof(name), "node-%u", i);
		if (tg_topology_add_node(t, name, path, &n) ||
		    tg_topology_node_set_gpus(t, n, 8, NULL))
			goto out;
	}
	if (tg_topology_build(t, &ei)) {
		fprintf(stderr, "%s\n", ei.msg);
		goto out;
	}

	memset(&member, 0, sizeof(member));
	member.v[TG_RES_GPU] = 8;
	tg_gang_add_podset(g, "worker", &member, 3, &ps);
	tg_gang_set_gather(g, "block", TG_GATHER_PREFER);
	tg_gang_set_gather(g, "spine", TG_GATHER_MUST);

	if (tg_place(t, g, &d, &ei)) {
		fprintf(stderr, "%s\n", ei.msg);
		goto out;
	}
	printf("%s: %s in %s\n", tg_decision_gang(d),
	       tg_status_name(tg_decision_status(d)), tg_decision_domain(d));
	for (i = 0; i < tg_decision_nplacements(d); i++) {
		const tg_placement *p = tg_decision_placement(d, i);

		printf("  rank %u -> %s\n", p->rank,
		       tg_topology_node_name(t, p->node));
	}
	printf("  %s\n", tg_decision_message(d));
	if (tg_decision_status(d) == TG_STATUS_PLACED &&
	    tg_decision_apply(t, g, d) == TG_OK)
		rc = 0;

	/* its picture (topogang/draw.h): SVG, HTML or JSON */
	memset(&pic, 0, sizeof(pic));
	cd = d;
	pic.decisions = &cd;
	pic.ndecisions = 1;
	if (tg_draw_render(t, TG_DRAW_SVG, &pic, &svg, &ei) == TG_OK)
		printf("  picture: %zu bytes of SVG\n", strlen(svg));
	tg_free(svg);
out:
	tg_decision_free(d);
	tg_gang_destroy(g);
	tg_topology_destroy(t);
	return rc;
}
