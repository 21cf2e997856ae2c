/*
 * shared/src/load/fabric/netq_nvl.c - NetQ compute nodes: the NVLink
 * domains NetQ's NMX API serves at nmx/v1/compute-nodes (the overlay
 * shape: NVLink domains of hosts, added to a switch graph, a host table
 * or alone), as NVIDIA topograph reads them:
 *
 *   [{"Name": "node1", "DomainUUID": "3fbf...", "GpuIDList": [...]}, ...]
 *
 * Only Name and DomainUUID are read.
 */
#include "config.h"

#include <string.h>

#include "../k8s/k8s_internal.h"
#include "fabric_int.h"

/* A warning naming entry idx; TG_ENOMEM with the message set. */
static tg_err nvl_skip(tg_fabric *f, const char *source, unsigned idx,
		       const char *name, const char *why, tg_errinfo *ei)
{
	char show[FAB_SHOW + 4];

	if (tgi_fab_warn(f, "%s: [%u]: node '%s' %s; skipped", source, idx,
			 tgi_fab_show(name, strlen(name), show, sizeof(show)),
			 why))
		return tgi_errf(ei, TG_ENOMEM, "%s: out of memory", source);
	return TG_OK;
}

/* Records host nm (mapped) in domain dom. */
static tg_err nvl_record(tg_fabric *f, const char *nm, const char *dom,
			 unsigned idx, uint32_t src, const char *source,
			 tg_errinfo *ei)
{
	char show[FAB_SHOW + 4], show2[FAB_SHOW + 4];
	const fnvl *o = NULL;
	const char *od;
	uint32_t hid, did;
	tg_err err;

	if (tgi_strtab_intern(&f->strs, nm, &hid) ||
	    tgi_strtab_intern(&f->strs, dom, &did))
		return tgi_errf(ei, TG_ENOMEM, "%s: out of memory", source);
	err = tgi_fab_nvl_add(f, hid, did, idx, src, &o);
	if (err == TG_EEXIST) {
		od = tgi_strtab_get(&f->strs, o->domain);
		return tgi_errf(ei, TG_EEXIST, "%s: [%u]: node '%s' is "
				"already in NVLink domain '%s' (%s: [%u]), "
				"not '%s'", source, idx, nm,
				tgi_fab_show(od, strlen(od), show,
					     sizeof(show)),
				tgi_fab_src(f, o->src), o->idx,
				tgi_fab_show(dom, strlen(dom), show2,
					     sizeof(show2)));
	}
	if (err == TG_ELIMIT)
		return tgi_errf(ei, TG_ELIMIT, "%s: more than %u compute "
				"nodes", source, TG_MAX_NODES);
	if (err)
		return tgi_errf(ei, TG_ENOMEM, "%s: out of memory", source);
	return TG_OK;
}

/* One entry of NMX's compute-node list. */
static tg_err nvl_entry(tg_fabric *f, const cJSON *e, unsigned idx,
			uint32_t src, const char *source, tg_errinfo *ei)
{
	const char *name = tgi_fab_json_str(e, "Name");
	const char *dom = tgi_fab_json_str(e, "DomainUUID");
	char nm[TG_MAX_NAME + 1], show[FAB_SHOW + 4];
	int kept;

	if (!cJSON_IsObject(e) || !name || !*name || !dom)
		return tgi_errf(ei, TG_EPARSE, "%s: [%u]: expected a compute "
				"node with string \"Name\" and \"DomainUUID\" "
				"(NetQ nmx/v1/compute-nodes)", source, idx);
	if (!*dom)
		return nvl_skip(f, source, idx, name, "has no DomainUUID (no "
				"NVLink domain)", ei);
	if (strlen(dom) > TG_MAX_NAME || !tgi_fab_name_ok(dom))
		return tgi_errf(ei, TG_EPARSE, "%s: [%u]: DomainUUID '%s' is "
				"not a domain name (1 to %d of "
				"[A-Za-z0-9._-])", source, idx,
				tgi_fab_show(dom, strlen(dom), show,
					     sizeof(show)),
				TG_MAX_NAME);
	kept = tgi_fab_host_map(f, name, nm);
	if (kept < 0)
		return tgi_errf(ei, TG_ELIMIT, "%s: [%u]: node '%s': too long "
				"(at most %d bytes after the host-map rule)",
				source, idx, tgi_fab_show(name, strlen(name),
							  show, sizeof(show)),
				TG_MAX_NAME);
	if (kept == 0)
		return TG_OK;
	if (!tgi_fab_name_ok(nm))
		return nvl_skip(f, source, idx, nm, "is not a valid node name",
				ei);
	return nvl_record(f, nm, dom, idx, src, source, ei);
}

static tg_err nvl_parse(tg_fabric *f, const tgi_fab_in *in, tg_errinfo *ei)
{
	cJSON *docs = NULL, *d, *e;
	unsigned idx = 0;
	tg_err err;

	err = tgi_json_parse_stream(in->buf, in->len, in->source, &docs, ei);
	if (err)
		return err;
	cJSON_ArrayForEach(d, docs) {
		if (cJSON_IsArray(d)) {
			cJSON_ArrayForEach(e, d) {
				err = nvl_entry(f, e, idx++, in->src,
						in->source, ei);
				if (err)
					break;
			}
		} else {
			err = nvl_entry(f, d, idx++, in->src, in->source, ei);
		}
		if (err)
			break;
	}
	if (!err && idx == 0)
		err = tgi_errf(ei, TG_EPARSE, "%s: no compute node in the "
			       "input (expected NetQ's nmx/v1/compute-nodes "
			       "list)", in->source);
	cJSON_Delete(docs);
	return err;
}

/* JSON holding a "DomainUUID" member. */
static unsigned nvl_sniff(const char *buf, size_t len)
{
	return tgi_fab_json_sniff(buf, len, "DomainUUID") ? 85 : 0;
}

const tgi_fabric_fmt tgi_fab_netq_nvl = {
	.fmt = TG_FABRIC_NETQ_NVL,
	.name = "compute-nodes",
	.shape = TGI_FAB_OVERLAY,
	.copy_text = false,
	.sniff = nvl_sniff,
	.parse = nvl_parse,
};
