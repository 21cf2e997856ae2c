/*
 * shared/src/load/fabric/netq.c - NVIDIA NetQ's topology graph (a switch
 * graph): one JSON object, a list of them or a stream of either, each
 *
 *   {"nodes": [{"id": "n1", "name": "leaf01", "device_type": "switch",
 *               "tier": 1}, {"compounded_nodes": [...]}, ...],
 *    "links": [{"src": "n1", "target": "n2"} or {"id": "n1-*-n2"}, ...]}
 *
 * A node is a switch when its device_type says "switch" (without one:
 * when its tier is 1 or more); the others are hosts, named by "name".
 * Also the JSON helpers the NetQ compute-node list (netq_nvl.c) shares.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "../k8s/k8s_internal.h"
#include "fabric_int.h"

const char *tgi_fab_json_str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_IsObject(o) ?
		cJSON_GetObjectItemCaseSensitive(o, key) : NULL;

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

unsigned tgi_fab_json_sniff(const char *buf, size_t len, const char *key)
{
	char quoted[64];
	size_t i = 0, kl;

	while (i < len && (tgi_fab_blank(buf[i]) || buf[i] == '\n'))
		i++;
	if (i == len || (buf[i] != '{' && buf[i] != '['))
		return 0;
	kl = (size_t)snprintf(quoted, sizeof(quoted), "\"%s\"", key);
	if (kl >= sizeof(quoted))
		return 0;
	for (; i + kl <= len; i++)
		if (memcmp(buf + i, quoted, kl) == 0)
			return 80;
	return 0;
}

static tg_err nq_node(tg_fabric *f, const cJSON *n, const char *where,
		      uint32_t src, const char *source, tg_errinfo *ei)
{
	const char *id = tgi_fab_json_str(n, "id"), *name = tgi_fab_json_str(n, "name");
	const char *type = tgi_fab_json_str(n, "device_type");
	const cJSON *tier = cJSON_GetObjectItemCaseSensitive(n, "tier");
	char show[FAB_SHOW + 4];
	bool sw;
	uint32_t d, sid;
	fdev *dv;
	tg_err err;

	if (!id || !*id || !name || !*name)
		return tgi_errf(ei, TG_EPARSE, "%s: %s: a node needs string "
				"\"id\" and \"name\"", source, where);
	if (strlen(id) > TG_MAX_NAME || strlen(name) > FAB_MAX_DESC)
		return tgi_errf(ei, TG_ELIMIT, "%s: %s: id or name too long",
				source, where);
	if (type)
		sw = strcmp(type, "switch") == 0;
	else
		sw = cJSON_IsNumber(tier) && tier->valuedouble >= 1;
	err = tgi_fab_dev_get(f, id, src, 0, &d);
	if (err == TG_ELIMIT)
		return tgi_errf(ei, err, "%s: more than %u devices", source,
				TG_MAX_FABRIC_DEVICES);
	if (err)
		return tgi_errf(ei, err, "%s: out of memory", source);
	dv = &f->devs[d];
	if (dv->defined)
		return tgi_errf(ei, TG_EEXIST, "%s: %s: node '%s' appears "
				"twice", source, where,
				tgi_fab_show(id, strlen(id), show, sizeof(show)));
	if (tgi_strtab_intern(&f->strs, name, &sid))
		return tgi_errf(ei, TG_ENOMEM, "%s: out of memory", source);
	dv->defined = true;
	dv->kind = sw ? DEV_SWITCH : DEV_HOST;
	dv->desc = sid;
	if (sw)
		f->sum.switches++;
	else
		f->sum.host_ports++;
	return TG_OK;
}

/* One link: {"src": A, "target": B}, or {"id": "A-*-B"}; both ends
 * are nodes of the graph. */
static tg_err nq_link(tg_fabric *f, const cJSON *e, const char *where,
		      uint32_t src, const char *source, tg_errinfo *ei)
{
	const char *a = tgi_fab_json_str(e, "src");
	const char *b = tgi_fab_json_str(e, "target");
	char ab[2][TG_MAX_NAME + 1], show[FAB_SHOW + 4];
	uint32_t sa, sb;
	tg_err err;

	if (!a || !b) {
		const char *id = tgi_fab_json_str(e, "id"), *sep;

		sep = id ? strstr(id, "-*-") : NULL;
		if (!sep || (size_t)(sep - id) > TG_MAX_NAME ||
		    strlen(sep + 3) > TG_MAX_NAME)
			return tgi_errf(ei, TG_EPARSE, "%s: %s: a link needs "
					"\"src\" and \"target\" (or an id "
					"\"A-*-B\")", source, where);
		memcpy(ab[0], id, (size_t)(sep - id));
		ab[0][sep - id] = '\0';
		memcpy(ab[1], sep + 3, strlen(sep + 3) + 1);
		a = ab[0];
		b = ab[1];
	}
	sa = tgi_strtab_find(&f->ids, a);
	sb = tgi_strtab_find(&f->ids, b);
	if (!sa || !sb || !f->dev_of[sa] || !f->dev_of[sb])
		return tgi_errf(ei, TG_EPARSE, "%s: %s: '%s' is not a node of "
				"the graph", source, where,
				tgi_fab_show(sa ? b : a, strlen(sa ? b : a),
					     show, sizeof(show)));
	if (sa == sb)
		return TG_OK;
	err = tgi_fab_link_add(f, f->dev_of[sa] - 1, 0, f->dev_of[sb] - 1, 0,
			       src, 0);
	if (err)
		return tgi_errf(ei, err, "%s: %s", source,
				err == TG_ELIMIT ? "too many links" :
				"out of memory");
	return TG_OK;
}

static tg_err nq_graph(tg_fabric *f, const cJSON *g, unsigned gi,
		       uint32_t src, const char *source, tg_errinfo *ei)
{
	const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(g, "nodes");
	const cJSON *links = cJSON_GetObjectItemCaseSensitive(g, "links");
	const cJSON *e, *c;
	char where[96];
	unsigned i = 0, j;
	tg_err err;

	if (!cJSON_IsArray(nodes) || !cJSON_IsArray(links))
		return tgi_errf(ei, TG_EPARSE, "%s: [%u]: expected \"nodes\" "
				"and \"links\" arrays (NetQ topology graph)",
				source, gi);
	cJSON_ArrayForEach(e, nodes) {
		const cJSON *cn = cJSON_GetObjectItemCaseSensitive(e,
							"compounded_nodes");

		if (!cJSON_IsObject(e))
			return tgi_errf(ei, TG_EPARSE, "%s: [%u].nodes[%u]: "
					"expected an object", source, gi, i);
		if (cJSON_IsArray(cn)) {
			j = 0;
			cJSON_ArrayForEach(c, cn) {
				snprintf(where, sizeof(where),
					 "[%u].nodes[%u].compounded_nodes[%u]",
					 gi, i, j++);
				err = nq_node(f, c, where, src, source, ei);
				if (err)
					return err;
			}
		} else {
			snprintf(where, sizeof(where), "[%u].nodes[%u]", gi,
				 i);
			err = nq_node(f, e, where, src, source, ei);
			if (err)
				return err;
		}
		i++;
	}
	i = 0;
	cJSON_ArrayForEach(e, links) {
		snprintf(where, sizeof(where), "[%u].links[%u]", gi, i++);
		err = nq_link(f, e, where, src, source, ei);
		if (err)
			return err;
	}
	return TG_OK;
}

static tg_err nq_parse(tg_fabric *f, const tgi_fab_in *in, tg_errinfo *ei)
{
	const char *source = in->source;
	cJSON *docs = NULL, *d, *e;
	unsigned gi = 0;
	tg_err err;

	err = tgi_json_parse_stream(in->buf, in->len, source, &docs, ei);
	if (err)
		return err;
	err = TG_OK;
	cJSON_ArrayForEach(d, docs) {
		if (cJSON_IsObject(d)) {
			err = nq_graph(f, d, gi++, in->src, source, ei);
		} else if (cJSON_IsArray(d)) {
			cJSON_ArrayForEach(e, d) {
				err = nq_graph(f, e, gi++, in->src, source,
					       ei);
				if (err)
					break;
			}
		} else {
			err = tgi_errf(ei, TG_EPARSE, "%s: expected a NetQ "
				       "topology graph (an object or a list "
				       "of objects)", source);
		}
		if (err)
			break;
	}
	if (!err && gi == 0)
		err = tgi_errf(ei, TG_EPARSE, "%s: no topology graph in the "
			       "input", source);
	cJSON_Delete(docs);
	return err;
}

/* JSON holding a "links" key (the compute-node list has none). */
static unsigned nq_sniff(const char *buf, size_t len)
{
	return tgi_fab_json_sniff(buf, len, "links");
}

const tgi_fabric_fmt tgi_fab_netq = {
	.fmt = TG_FABRIC_NETQ,
	.name = "netq",
	.shape = TGI_FAB_GRAPH,
	.copy_text = false,
	.sniff = nq_sniff,
	.parse = nq_parse,
};
