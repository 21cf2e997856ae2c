/*
 * tests/fuzz/fuzz_fabric.c - libFuzzer target for fabric discovery
 * (ibnetdiscover, NetQ JSON, host CSV, host-map rules), the exporters and
 * the `nvidia-smi topo -m` parser.  See README.md for how to build it.
 *
 * Input: the first byte picks what the rest is (bits 0-1: ibnetdiscover,
 * NetQ, CSV, nvidia-smi; bit 2: the rest starts with a host-map rule
 * line; bit 3: a NetQ compute-node list (NVLink domains) follows the
 * first NUL byte, or is the whole rest when there is none).
 *
 * Oracles beyond the sanitizers: every error message names its source;
 * a fabric that loads builds and passes tg_topology_check(); every
 * export succeeds; the topology.conf written reads back as the same tree
 * (tg_topology_compare() finds nothing); a parsed node's islands and
 * links agree and its writers succeed.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topogang/topogang.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SOURCE "fuzz"

static void fail(const char *what, const char *msg)
{
	fprintf(stderr, "fuzz_fabric: %s: %s\n", what, msg ? msg : "");
	abort();
}

static void source_named(const tg_errinfo *ei, const char *what)
{
	if (strncmp(ei->msg, SOURCE, strlen(SOURCE)) != 0 &&
	    strncmp(ei->msg, "host-map rule", 13) != 0)
		fail(what, ei->msg);
}

/*
 * A domain whose only child has its value is taken for one switch on two
 * levels (that is how topology.conf's loader and the fabric builder write
 * a switch that skips a level); a table may also mean two switches with
 * one name.  Such a tree reads back one level shorter: no round trip.
 */
static bool ambiguous(const tg_topology *t)
{
	unsigned nd = tg_topology_ndomains(t), d, *kids, *last;
	bool amb = false;

	kids = calloc(nd + 1, sizeof(unsigned));
	last = calloc(nd + 1, sizeof(unsigned));
	if (!kids || !last)
		fail("calloc", "out of memory");
	for (d = 1; d < nd; d++) {
		tg_domain_id p = tg_topology_domain_parent(t, d);

		if (p && p != TG_NONE) {
			kids[p]++;
			last[p] = d;
		}
	}
	for (d = 1; d < nd && !amb; d++)
		amb = kids[d] == 1 &&
		      strcmp(tg_topology_domain_value(t, d),
			     tg_topology_domain_value(t, last[d])) == 0;
	free(kids);
	free(last);
	return amb;
}

/*
 * A node outside the tree (a host of the NVLink list on no switch: its
 * path misses values) is left out of topology.conf, which cannot say
 * "no switch": no round trip either.
 */
static bool outside(const tg_topology *t)
{
	unsigned i;

	for (i = 0; i < tg_topology_nnodes(t); i++)
		if (tg_topology_node_domain(t, i) == TG_NONE)
			return true;
	return false;
}

/*
 * A repeated switch name is written with its path, which may pass
 * TG_MAX_NAME although each name fits (ibnetdiscover, NetQ; a CSV row is
 * refused at input instead): the export refuses it, naming the limit.
 */
static bool long_name(tg_err err, const tg_errinfo *ei)
{
	return err == TG_ELIMIT && strstr(ei->msg, "(TG_MAX_NAME)") != NULL;
}

static void fuzz_exports(const tg_topology *t)
{
	static const tg_export_format fmts[] = {
		TG_EXPORT_SLURM_BLOCK, TG_EXPORT_K8S_LABELS,
		TG_EXPORT_K8S_PATCH, TG_EXPORT_KAI_TOPOLOGY,
		TG_EXPORT_KUEUE_TOPOLOGY, TG_EXPORT_KOORDINATOR,
		TG_EXPORT_JSON
	};
	tg_topology *back;
	tg_errinfo ei = { "" };
	char *out = NULL, *report = NULL;
	unsigned ndiff = 0, i;
	tg_err err;

	for (i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		err = tg_export(t, fmts[i], NULL, &out, &ei);
		if (err == TG_EEXIST && fmts[i] == TG_EXPORT_SLURM_BLOCK)
			continue;	/* qualified names collide: said so */
		if (long_name(err, &ei) && fmts[i] == TG_EXPORT_SLURM_BLOCK)
			continue;	/* a qualified name is too long: said so */
		if (err)
			fail("export", ei.msg);
		tg_free(out);
		out = NULL;
	}
	err = tg_export(t, TG_EXPORT_SLURM_TREE, NULL, &out, &ei);
	if (err == TG_EEXIST || long_name(err, &ei))
		return;		/* names collide or one is too long: said so */
	if (err)
		fail("tree export", ei.msg);
	if (ambiguous(t) || outside(t)) {
		tg_free(out);
		return;
	}
	back = tg_topology_create();
	if (!back)
		fail("create", "out of memory");
	if (tg_topoconf_load(back, out, strlen(out), "back.conf", &ei) ||
	    tg_topology_build(back, &ei))
		fail("the written topology.conf does not load", ei.msg);
	if (tg_topology_compare(t, "fabric", back, "conf", &report, &ndiff,
				&ei))
		fail("compare", ei.msg);
	if (ndiff)
		fail("topology.conf round trip", report);
	if (tg_topology_nlayers(back) != tg_topology_nlayers(t))
		fail("topology.conf round trip", "depth");
	tg_free(report);
	tg_free(out);
	tg_topology_destroy(back);
}

/* \p nvl (nvllen bytes, may be NULL): a compute-node list added after
 * \p buf; \p buf NULL: the list alone. */
static void fuzz_fabric(tg_fabric_format fmt, const char *rule,
			const char *buf, size_t len, const char *nvl,
			size_t nvllen)
{
	tg_fabric *f = tg_fabric_create();
	tg_topology *t = tg_topology_create();
	tg_errinfo ei = { "" };
	tg_err err;

	if (!f || !t)
		fail("create", "out of memory");
	err = tg_fabric_set_hostmap(f, rule, &ei);
	if (err) {
		source_named(&ei, "host-map rule error");
		goto out;
	}
	if (buf)
		err = tg_fabric_add(f, fmt, buf, len, SOURCE, &ei);
	if (!err && nvl)
		err = tg_fabric_add(f, TG_FABRIC_NETQ_NVL, nvl, nvllen,
				    SOURCE, &ei);
	if (err) {
		source_named(&ei, "error without the source");
		goto out;
	}
	err = tg_fabric_build(f, t, &ei);
	if (err) {
		if (err != TG_EINVAL && err != TG_ELIMIT)
			fail("fabric build", ei.msg);
		goto out;
	}
	if (tg_topology_build(t, &ei) != TG_OK)
		fail("build", ei.msg);
	if (tg_topology_check(t, &ei) != TG_OK)
		fail("check", ei.msg);
	fuzz_exports(t);
out:
	tg_topology_destroy(t);
	tg_fabric_destroy(f);
}

static void fuzz_smi(const char *buf, size_t len)
{
	static const tg_nodeinfo_format fmts[] = {
		TG_NODEINFO_JSON, TG_NODEINFO_LABELS, TG_NODEINFO_GRES,
		TG_NODEINFO_PATCH
	};
	tg_nodeinfo *ni = NULL;
	tg_errinfo ei = { "" };
	const uint8_t *isl;
	unsigned i, j, n;
	char *out;

	if (tg_nodeinfo_parse_nvidia_smi(buf, len, SOURCE, &ni, &ei)) {
		source_named(&ei, "nvidia-smi error without the source");
		return;
	}
	n = tg_nodeinfo_ngpus(ni);
	isl = tg_nodeinfo_islands(ni);
	if (!n || n > TG_MAX_GPUS)
		fail("nvidia-smi", "GPU count");
	for (i = 0; i < n; i++) {
		if (isl[i] >= tg_nodeinfo_nislands(ni))
			fail("nvidia-smi", "island out of range");
		for (j = 0; j < n; j++)
			if (tg_nodeinfo_links(ni, i, j) &&
			    isl[i] != isl[j])
				fail("nvidia-smi", "linked GPUs in two "
				     "islands");
	}
	for (i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		if (tg_nodeinfo_export(ni, fmts[i], "n1", &out, &ei))
			fail("node export", ei.msg);
		tg_free(out);
	}
	tg_nodeinfo_destroy(ni);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf, *rule = NULL, *text;
	size_t len;
	unsigned sel;

	if (size < 1)
		return 0;
	sel = data[0];
	buf = malloc(size);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, size - 1);
	buf[size - 1] = '\0';
	text = buf;
	len = size - 1;
	if (sel & 4) {
		char *nl = memchr(buf, '\n', len);

		if (!nl) {
			free(buf);
			return 0;
		}
		*nl = '\0';
		rule = buf;
		if (strlen(rule) != (size_t)(nl - buf)) {
			free(buf);
			return 0;	/* a NUL inside the rule */
		}
		text = nl + 1;
		len -= (size_t)(nl - buf) + 1;
	}
	if (sel & 8) {
		char *nul = memchr(text, '\0', len);

		if (!nul || (sel & 3) == 3) {
			fuzz_fabric(TG_FABRIC_NETQ_NVL, rule, NULL, 0, text,
				    len);
		} else {
			size_t n = (size_t)(nul - text);
			static const tg_fabric_format fmt[] = {
				TG_FABRIC_IBNETDISCOVER, TG_FABRIC_NETQ,
				TG_FABRIC_CSV
			};

			fuzz_fabric(fmt[sel & 3], rule, text, n, nul + 1,
				    len - n - 1);
		}
		free(buf);
		return 0;
	}
	switch (sel & 3) {
	case 0:
		fuzz_fabric(TG_FABRIC_IBNETDISCOVER, rule, text, len, NULL, 0);
		break;
	case 1:
		fuzz_fabric(TG_FABRIC_NETQ, rule, text, len, NULL, 0);
		break;
	case 2:
		fuzz_fabric(TG_FABRIC_CSV, rule, text, len, NULL, 0);
		break;
	default:
		fuzz_smi(text, len);
		break;
	}
	free(buf);
	return 0;
}
