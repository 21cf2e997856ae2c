/*
 * cli/cli_json.c - a decision as JSON (the schema in docs/cli.md).
 */
#include "config.h"

#include <cjson/cJSON.h>

#include "cli.h"

int cli_json_decision(void *gangs, const tg_topology *t,
		      const tg_decision *d)
{
	cJSON *g = cJSON_CreateObject(), *pl, *vic;
	unsigned i, b;

	if (!g)
		return -1;
	cJSON_AddItemToArray(gangs, g);
	cJSON_AddStringToObject(g, "name", tg_decision_gang(d));
	cJSON_AddStringToObject(g, "status",
				tg_status_name(tg_decision_status(d)));
	cJSON_AddStringToObject(g, "domain", tg_decision_domain(d));
	pl = cJSON_AddArrayToObject(g, "placements");
	for (i = 0; pl && i < tg_decision_nplacements(d); i++) {
		const tg_placement *p = tg_decision_placement(d, i);
		cJSON *o = cJSON_CreateObject(), *gp;

		if (!o)
			return -1;
		cJSON_AddItemToArray(pl, o);
		cJSON_AddStringToObject(o, "pod", p->pod);
		cJSON_AddStringToObject(o, "node",
					tg_topology_node_name(t, p->node));
		gp = cJSON_AddArrayToObject(o, "gpus");
		for (b = 0; gp && b < 64; b++)
			if (p->gpus >> b & 1)
				cJSON_AddItemToArray(gp,
						     cJSON_CreateNumber(b));
		cJSON_AddNumberToObject(o, "rank", p->rank);
	}
	vic = cJSON_AddArrayToObject(g, "victims");
	for (i = 0; vic && i < tg_decision_nvictims(d); i++) {
		const tg_victim *v = tg_decision_victim(d, i);
		cJSON *o = cJSON_CreateObject();

		if (!o)
			return -1;
		cJSON_AddItemToArray(vic, o);
		cJSON_AddStringToObject(o, "pod", v->pod);
		cJSON_AddStringToObject(o, "node",
					tg_topology_node_name(t, v->node));
		if (v->reservation)
			cJSON_AddBoolToObject(o, "reservation", true);
	}
	cJSON_AddNumberToObject(g, "bandwidth_gbps",
				tg_decision_bandwidth_gbps(d));
	cJSON_AddStringToObject(g, "message", tg_decision_message(d));
	return 0;
}
