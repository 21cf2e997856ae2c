/*
 * cli/discover.c - "describe your fabric once".
 *
 *   topogang discover node [--xml FILE | --nvidia-smi FILE]
 *                          [--node-name NAME]
 *                          [--output json|labels|gres|patch]
 *   topogang discover fabric SOURCE... [--host-map RULE]
 *                          [--output text|json]
 *   topogang discover compare SOURCE SOURCE [--levels K1,K2,...]
 *   topogang check --topology-conf FILE --cluster FILE [--levels K,...]
 *                  (the same comparison, see cli_compare())
 *   topogang export FORMAT SOURCE... [--host-map RULE] [--levels K,...]
 *                   [--keys K1,K2,...] [--block-layer LAYER]
 *                   [--block-sizes N,N,...] [--no-pad] [--name NAME]
 *
 * SOURCE is --ibnetdiscover FILE, --netq FILE or --crux FILE (fabric
 * discovery output; fabric options may repeat), --netq-compute-nodes FILE
 * (NVLink domains; alone or with a fabric), --topology-conf FILE or
 * --cluster FILE (`kubectl get nodes -o json`).  FORMAT is one of
 * --slurm-tree, --slurm-block, --k8s-labels, --k8s-patch, --kai-topology,
 * --kueue-topology, --koordinator, --json.
 *
 * Exit status: 0 done (compare: the two agree), 1 compare found
 * disagreements, 2 bad usage or bad input (one line naming the file).
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define MAX_SOURCES	16
#define MAX_LIST	TG_MAX_LAYERS	/* entries of --keys, --levels */
#define SMI_MAX_OUT	(1u << 20)	/* bytes read from nvidia-smi */
#define MAX_WARN_SHOWN	5		/* warnings printed per source */

enum src_kind {
	SRC_IB = 0, SRC_NETQ, SRC_CRUX, SRC_TOPOCONF, SRC_CLUSTER, SRC_NVL
};

typedef struct source {
	enum src_kind kind;
	const char *path;
} source;

typedef struct dopts {
	source src[MAX_SOURCES];
	unsigned nsrc;
	const char *hostmap;
	const char *levels;
	const char *keys;
	const char *block_layer;
	const char *block_sizes;
	const char *name;
	const char *output;
	const char *xml;
	const char *smi;
	const char *node;
	bool no_pad;
	int format;		/* tg_export_format, -1 none */
} dopts;

/* The options of discover, export and check-compare: the sources (in
 * enum src_kind's order), the formats (format_of[]'s), the rest. */
static const cli_opt dopts_tab[] = {
	CLI_OPT_FILE("--ibnetdiscover"), CLI_OPT_FILE("--netq"),
	CLI_OPT_FILE("--crux"), CLI_OPT_FILE("--topology-conf"),
	CLI_OPT_FILE("--cluster"), CLI_OPT_FILE("--netq-compute-nodes"),
	CLI_OPT_FLAG("--slurm-tree"), CLI_OPT_FLAG("--slurm-block"),
	CLI_OPT_FLAG("--k8s-labels"), CLI_OPT_FLAG("--k8s-patch"),
	CLI_OPT_FLAG("--kai-topology"), CLI_OPT_FLAG("--kueue-topology"),
	CLI_OPT_FLAG("--koordinator"), CLI_OPT_FLAG("--json"),
	CLI_OPT_FLAG("--no-pad"),
	CLI_OPT_FIELD("--host-map", dopts, hostmap),
	CLI_OPT_FIELD("--levels", dopts, levels),
	CLI_OPT_FIELD("--keys", dopts, keys),
	CLI_OPT_FIELD("--block-layer", dopts, block_layer),
	CLI_OPT_FIELD("--block-sizes", dopts, block_sizes),
	CLI_OPT_FIELD("--name", dopts, name),
	{ "--output", "-o", CLI_VALUE, offsetof(dopts, output) },
	CLI_OPT_FIELD("--xml", dopts, xml),
	CLI_OPT_FIELD("--nvidia-smi", dopts, smi),
	CLI_OPT_FIELD("--node-name", dopts, node),
	CLI_OPT_END
};

#define NSRC_OPTS	(SRC_NVL + 1)	/* dopts_tab[0 .. NSRC_OPTS) */

/* The formats of dopts_tab[NSRC_OPTS ..), in its order. */
static const tg_export_format format_of[] = {
	TG_EXPORT_SLURM_TREE, TG_EXPORT_SLURM_BLOCK, TG_EXPORT_K8S_LABELS,
	TG_EXPORT_K8S_PATCH, TG_EXPORT_KAI_TOPOLOGY, TG_EXPORT_KUEUE_TOPOLOGY,
	TG_EXPORT_KOORDINATOR, TG_EXPORT_JSON
};
#define NFORMATS	(sizeof(format_of) / sizeof(format_of[0]))

static void usage(FILE *f)
{
	fputs("usage: topogang discover node [--xml FILE | --nvidia-smi FILE]"
	      " [--node-name NAME]\n"
	      "                              [--output json|labels|gres|"
	      "patch]\n"
	      "       topogang discover fabric SOURCE... [--host-map RULE] "
	      "[--output text|json]\n"
	      "       topogang discover compare SOURCE SOURCE "
	      "[--levels K1,K2,...]\n"
	      "       topogang export FORMAT SOURCE... [--host-map RULE] "
	      "[--levels K1,...]\n"
	      "                       [--keys K1,...] [--block-layer LAYER] "
	      "[--block-sizes N,...]\n"
	      "                       [--no-pad] [--name NAME]\n"
	      "\n"
	      "SOURCE: --ibnetdiscover FILE | --netq FILE | --crux FILE |\n"
	      "        --netq-compute-nodes FILE (NVLink domains; alone or "
	      "with a fabric) |\n"
	      "        --topology-conf FILE | --cluster FILE\n"
	      "FORMAT: --slurm-tree | --slurm-block | --k8s-labels | "
	      "--k8s-patch |\n"
	      "        --kai-topology | --kueue-topology | --koordinator | "
	      "--json\n"
	      "RULE:   e.g. 'match=*-dgx-*,strip-domain' (match= drop= lower "
	      "upper strip-domain\n"
	      "        strip-prefix= strip-suffix= prefix= suffix= "
	      "replace=FROM/TO)\n", f);
}

static int dopts_set(const cli_opts *co, unsigned k, const char *v)
{
	dopts *o = co->arg;
	int fmt;

	if (k < NSRC_OPTS) {
		if (o->nsrc == MAX_SOURCES) {
			cli_err("%s: more than %d sources", co->cmd,
				MAX_SOURCES);
			return 2;
		}
		o->src[o->nsrc].kind = (enum src_kind)k;
		o->src[o->nsrc++].path = v;
	} else if (k < NSRC_OPTS + NFORMATS) {
		fmt = (int)format_of[k - NSRC_OPTS];
		if (o->format >= 0 && o->format != fmt) {
			cli_err("%s: give one output format, not two",
				co->cmd);
			return 2;
		}
		o->format = fmt;
	} else if (!strcmp(dopts_tab[k].name, "--no-pad")) {
		o->no_pad = true;
	} else {
		cli_opt_store(o, &dopts_tab[k], v);
	}
	return 0;
}

/* argv[first ..) into \p o: 0 ok, 1 help printed, 2 bad usage
 * (reported; the messages name argv[0]). */
static int parse(int argc, char **argv, int first, dopts *o)
{
	const cli_opts co = { argv[0], dopts_tab, usage, dopts_set, o, true };

	memset(o, 0, sizeof(*o));
	o->format = -1;
	return cli_opts_parse(argc - first + 1, argv + first - 1, &co);
}

/* Splits "a,b,c" (a copy) into at most MAX_LIST pieces; -1 if more. */
static int split_list(const char *s, char **dup, char **out)
{
	char *p;
	int n = 0;

	*dup = strdup(s);
	if (!*dup)
		return -1;
	p = *dup;
	for (;;) {
		char *c = strchr(p, ',');

		if (c)
			*c = '\0';
		if (n == MAX_LIST || !*p)
			return -1;
		out[n++] = p;
		if (!c)
			return n;
		p = c + 1;
	}
}

/* ---- loading a topology from one kind of source ---- */

static bool is_fabric(enum src_kind k)
{
	return k == SRC_IB || k == SRC_NETQ || k == SRC_CRUX || k == SRC_NVL;
}

static tg_fabric_format fabric_format(enum src_kind k)
{
	return k == SRC_IB ? TG_FABRIC_IBNETDISCOVER :
	       k == SRC_NETQ ? TG_FABRIC_NETQ :
	       k == SRC_NVL ? TG_FABRIC_NETQ_NVL : TG_FABRIC_CSV;
}

/* Prints warning \p i of \p n; past MAX_WARN_SHOWN, one line counts the
 * rest. */
static void warn_line(unsigned i, unsigned n, const char *w)
{
	if (i < MAX_WARN_SHOWN)
		fprintf(stderr, "warning: %s\n", w);
	else if (i == MAX_WARN_SHOWN)
		fprintf(stderr, "warning: ... and %u more like these\n",
			n - MAX_WARN_SHOWN);
}

/*
 * Builds the topology of sources [from, to) (one topology.conf, one
 * cluster, or fabric files), prints their warnings to stderr unless
 * quiet; *fab (when not NULL) keeps the fabric for its summary.
 */
static int load(const dopts *o, unsigned from, unsigned to, bool quiet,
		tg_topology **out, tg_fabric **fab)
{
	tg_errinfo ei = { "" };
	tg_topology *t = NULL;
	enum src_kind k = o->src[from].kind;
	unsigned i;

	*out = NULL;
	if (fab)
		*fab = NULL;
	if (k == SRC_CLUSTER) {
		tg_k8s *k8s = tg_k8s_create();
		char *dup = NULL, *keys[MAX_LIST];
		int n;

		if (!k8s) {
			cli_err("out of memory");
			return 2;
		}
		if (o->levels) {
			n = split_list(o->levels, &dup, keys);
			if (n < 1 || tg_k8s_set_levels(k8s,
					(const char *const *)keys,
					(unsigned)n)) {
				cli_err("--levels '%s': expected 1 to %d label "
					"keys", o->levels, MAX_LIST);
				free(dup);
				tg_k8s_destroy(k8s);
				return 2;
			}
			free(dup);
		}
		if (tg_k8s_add_file(k8s, o->src[from].path, &ei) ||
		    tg_k8s_build(k8s, &t, &ei)) {
			cli_err("%s", ei.msg);
			tg_k8s_destroy(k8s);
			return 2;
		}
		for (i = 0; !quiet && i < tg_k8s_nwarnings(k8s); i++)
			warn_line(i, tg_k8s_nwarnings(k8s),
				  tg_k8s_warning(k8s, i));
		tg_k8s_destroy(k8s);
		*out = t;
		return 0;
	}
	t = tg_topology_create();
	if (!t) {
		cli_err("out of memory");
		return 2;
	}
	if (k == SRC_TOPOCONF) {
		if (tg_topoconf_load_file(t, o->src[from].path, &ei)) {
			cli_err("%s", ei.msg);
			tg_topology_destroy(t);
			return 2;
		}
	} else {
		tg_fabric *f = tg_fabric_create();

		if (!f || tg_fabric_set_hostmap(f, o->hostmap, &ei)) {
			cli_err("%s", f ? ei.msg : "out of memory");
			tg_fabric_destroy(f);
			tg_topology_destroy(t);
			return 2;
		}
		for (i = from; i < to; i++)
			if (tg_fabric_add_file(f, fabric_format(o->src[i].kind),
					       o->src[i].path, &ei))
				break;
		if (i < to || tg_fabric_build(f, t, &ei)) {
			cli_err("%s", ei.msg);
			tg_fabric_destroy(f);
			tg_topology_destroy(t);
			return 2;
		}
		for (i = 0; !quiet && i < tg_fabric_nwarnings(f); i++)
			warn_line(i, tg_fabric_nwarnings(f),
				  tg_fabric_warning(f, i));
		if (fab)
			*fab = f;
		else
			tg_fabric_destroy(f);
	}
	if (tg_topology_build(t, &ei)) {
		cli_err("%s: %s", o->src[from].path, ei.msg);
		tg_topology_destroy(t);
		if (fab) {
			tg_fabric_destroy(*fab);
			*fab = NULL;
		}
		return 2;
	}
	for (i = 0; !quiet && i < tg_topology_nwarnings(t); i++)
		warn_line(i, tg_topology_nwarnings(t),
			  tg_topology_warning(t, i));
	*out = t;
	return 0;
}

/* Checks that sources [0, nsrc) are one topology: one non-fabric file or
 * fabric files of one kind (NetQ compute nodes go with any). */
static int one_topology(const dopts *o, const char *cmd)
{
	unsigned i, first = 0;

	if (!o->nsrc) {
		cli_err("%s: give a source (--ibnetdiscover, --netq, --crux, "
			"--netq-compute-nodes, --topology-conf or --cluster)",
			cmd);
		return -1;
	}
	while (first + 1 < o->nsrc && o->src[first].kind == SRC_NVL)
		first++;
	for (i = 0; i < o->nsrc; i++)
		if (i != first && (!is_fabric(o->src[first].kind) ||
				   (o->src[i].kind != o->src[first].kind &&
				    o->src[i].kind != SRC_NVL))) {
			cli_err("%s: %s and %s: give one topology.conf, one "
				"cluster, or fabric files of one kind (and "
				"NetQ compute nodes)", cmd,
				dopts_tab[o->src[first].kind].name,
				dopts_tab[o->src[i].kind].name);
			return -1;
		}
	return 0;
}

/* ---- discover node ---- */

/* Runs `nvidia-smi topo -m`; NULL when it is not there or fails. */
static tg_nodeinfo *run_nvidia_smi(void)
{
	FILE *p = popen("nvidia-smi topo -m 2>/dev/null", "r");
	char *buf;
	size_t len = 0, n;
	tg_nodeinfo *ni = NULL;
	tg_errinfo ei = { "" };

	if (!p)
		return NULL;
	buf = malloc(SMI_MAX_OUT + 1);
	if (!buf) {
		pclose(p);
		return NULL;
	}
	while (len < SMI_MAX_OUT &&
	       (n = fread(buf + len, 1, SMI_MAX_OUT - len, p)) > 0)
		len += n;
	if (pclose(p) == 0 && len < SMI_MAX_OUT &&
	    tg_nodeinfo_parse_nvidia_smi(buf, len, "nvidia-smi topo -m", &ni,
					 &ei))
		ni = NULL;
	free(buf);
	return ni;
}

static int cmd_node(const dopts *o)
{
	tg_errinfo ei = { "" };
	tg_nodeinfo *ni = NULL;
	tg_nodeinfo_format fmt = TG_NODEINFO_JSON;
	char host[256], *out = NULL;
	const char *node = o->node;
	int rc = 2;

	if (o->nsrc || o->format >= 0) {
		cli_err("discover node: sources and formats belong to "
			"'discover fabric' and 'export'");
		return 2;
	}
	if (o->xml && o->smi) {
		cli_err("discover node: give --xml or --nvidia-smi, not both");
		return 2;
	}
	if (o->output && !strcmp(o->output, "labels"))
		fmt = TG_NODEINFO_LABELS;
	else if (o->output && !strcmp(o->output, "gres"))
		fmt = TG_NODEINFO_GRES;
	else if (o->output && !strcmp(o->output, "patch"))
		fmt = TG_NODEINFO_PATCH;
	else if (o->output && strcmp(o->output, "json")) {
		cli_err("--output must be json, labels, gres or patch, not "
			"'%s'",
			o->output);
		return 2;
	}
	if (!node) {
		char *dot;

		if (gethostname(host, sizeof(host) - 1) != 0)
			snprintf(host, sizeof(host), "localhost");
		host[sizeof(host) - 1] = '\0';
		dot = strchr(host, '.');
		if (dot)
			*dot = '\0';
		node = host;
	}
	if (o->smi) {
		char *buf;
		size_t len;

		if (tg_file_read(o->smi, SMI_MAX_OUT, &buf, &len, &ei)) {
			cli_err("%s", ei.msg);
			return 2;
		}
		if (tg_nodeinfo_parse_nvidia_smi(buf, len, o->smi, &ni,
						 &ei)) {
			cli_err("%s", ei.msg);
			tg_free(buf);
			return 2;
		}
		tg_free(buf);
	} else if (o->xml) {
		if (tg_nodeinfo_load_hwloc_file(o->xml, &ni, &ei)) {
			cli_err("%s", ei.msg);
			return 2;
		}
	} else {
		/* this host: hwloc; NVLink from nvidia-smi when hwloc has
		 * none (no NVML backend); nvidia-smi alone when hwloc sees
		 * no GPU */
		tg_err err = tg_nodeinfo_discover(&ni, &ei);

		if (err || !tg_nodeinfo_ngpus(ni) ||
		    !tg_nodeinfo_nvlink_known(ni)) {
			tg_nodeinfo *smi = run_nvidia_smi();

			if (smi && ni && tg_nodeinfo_ngpus(ni) &&
			    tg_nodeinfo_merge_nvlink(ni, smi, NULL) == TG_OK) {
				tg_nodeinfo_destroy(smi);
			} else if (smi && (!ni || !tg_nodeinfo_ngpus(ni))) {
				tg_nodeinfo_destroy(ni);
				ni = smi;
			} else {
				tg_nodeinfo_destroy(smi);
			}
			if (!ni) {
				cli_err("%s", ei.msg);
				return 2;
			}
		}
	}
	if (tg_nodeinfo_export(ni, fmt, node, &out, &ei)) {
		cli_err("%s", ei.msg);
		goto out;
	}
	fputs(out, stdout);
	rc = 0;
out:
	tg_free(out);
	tg_nodeinfo_destroy(ni);
	return rc;
}

/* ---- discover fabric ---- */

/* Per domain: its nodes as a hostlist (public API only). */
static char **domain_hostlists(const tg_topology *t)
{
	unsigned nd = tg_topology_ndomains(t), nn = tg_topology_nnodes(t);
	unsigned *cnt = calloc(nd + 1, sizeof(unsigned)), i, d;
	const char ***names = calloc(nd + 1, sizeof(char **));
	char **out = calloc(nd + 1, sizeof(char *));
	bool ok = cnt && names && out;

	for (i = 0; ok && i < nn; i++) {
		d = tg_topology_node_domain(t, i);
		if (d != TG_NONE)
			cnt[d]++;
	}
	for (d = 0; ok && d < nd; d++) {
		names[d] = calloc(cnt[d] + 1, sizeof(char *));
		ok = names[d] != NULL;
		cnt[d] = 0;
	}
	/* nodes in natural order: the model's tree order is by path, then
	 * name, so sort each leaf's names */
	for (i = 0; ok && i < nn; i++) {
		d = tg_topology_node_domain(t, i);
		if (d != TG_NONE)
			names[d][cnt[d]++] = tg_topology_node_name(t, i);
	}
	for (d = 0; ok && d < nd; d++) {
		unsigned a, b;

		for (a = 1; a < cnt[d]; a++)	/* insertion sort */
			for (b = a; b > 0 && tg_name_cmp(names[d][b - 1],
							 names[d][b]) > 0;
			     b--) {
				const char *x = names[d][b];

				names[d][b] = names[d][b - 1];
				names[d][b - 1] = x;
			}
		out[d] = tg_hostlist_compress(names[d], cnt[d]);
		ok = out[d] != NULL;
	}
	for (d = 0; names && d < nd; d++)
		free(names[d]);
	free(names);
	free(cnt);
	if (!ok && out) {
		for (d = 0; d < nd; d++)
			tg_free(out[d]);
		free(out);
		out = NULL;
	}
	return out;
}

static int cmd_fabric(const dopts *o)
{
	tg_topology *t = NULL;
	tg_fabric *f = NULL;
	tg_fabric_summary s;
	char **hl = NULL, *json = NULL;
	tg_errinfo ei = { "" };
	unsigned i, l, nd, *count = NULL;
	int rc;

	if (one_topology(o, "discover fabric"))
		return 2;
	if (!is_fabric(o->src[0].kind)) {
		cli_err("discover fabric: give --ibnetdiscover, --netq, "
			"--crux or --netq-compute-nodes");
		return 2;
	}
	if (o->output && strcmp(o->output, "text") &&
	    strcmp(o->output, "json")) {
		cli_err("--output must be text or json, not '%s'", o->output);
		return 2;
	}
	rc = load(o, 0, o->nsrc, false, &t, &f);
	if (rc)
		return rc;
	if (o->output && !strcmp(o->output, "json")) {
		if (tg_export(t, TG_EXPORT_JSON, NULL, &json, &ei)) {
			cli_err("%s", ei.msg);
			rc = 2;
			goto out;
		}
		fputs(json, stdout);
		goto out;
	}
	tg_fabric_summary_get(f, &s);
	for (i = 0; i < o->nsrc; i++)
		printf("%s%s", i ? ", " : "", o->src[i].path);
	printf(": %u switches, %u host ports, %u hosts", s.switches,
	       s.host_ports, s.hosts);
	if (s.unnamed || s.dropped)
		printf(" (%u ports without a usable host name, %u dropped by "
		       "the host-map rule)", s.unnamed, s.dropped);
	printf("\n");
	if (s.unlinked)
		printf("%u switches reach no host and are left out\n",
		       s.unlinked);
	if (s.nvl_hosts)
		printf("%u hosts in %u NVLink domain%s\n", s.nvl_hosts,
		       s.nvl_domains, s.nvl_domains == 1 ? "" : "s");
	printf("tree: %u level%s", tg_topology_nlayers(t),
	       tg_topology_nlayers(t) == 1 ? "" : "s");
	for (l = 0; l < tg_topology_nlayers(t); l++)
		printf("%s%s", l ? " > " : ": ",
		       tg_topology_layer_name(t, l));
	printf("\n");
	for (i = 0; i < s.groups; i++) {
		unsigned lv, nm;
		const char *name, *members;

		if (tg_fabric_group(f, i, &lv, &name, &members, &nm) ||
		    nm < 2)
			continue;
		printf("  group %s (level %u): %u switches %s\n", name, lv,
		       nm, members);
	}
	hl = domain_hostlists(t);
	nd = tg_topology_ndomains(t);
	count = calloc(nd + 1, sizeof(unsigned));
	if (!hl || !count) {
		cli_err("out of memory");
		rc = 2;
		goto out;
	}
	for (i = 0; i < tg_topology_nnodes(t); i++) {
		tg_domain_id d = tg_topology_node_domain(t, i);

		for (; d != TG_NONE && d != 0;
		     d = tg_topology_domain_parent(t, d))
			count[d]++;
	}
	for (l = 0; l < tg_topology_nlayers(t); l++) {
		const char *key = tg_topology_layer_key(t, l);

		printf("%s%s%s%s:\n", tg_topology_layer_name(t, l),
		       key ? " (" : "", key ? key : "", key ? ")" : "");
		for (i = 1; i < nd; i++) {
			if (tg_topology_domain_layer(t, i) != l)
				continue;
			printf("  %s: %u node%s", tg_topology_domain_path(t, i),
			       count[i], count[i] == 1 ? "" : "s");
			if (l + 1 == tg_topology_nlayers(t))
				printf(" %s", hl[i]);
			printf("\n");
		}
	}
out:
	if (hl) {
		for (i = 0; i < tg_topology_ndomains(t); i++)
			tg_free(hl[i]);
		free(hl);
	}
	free(count);
	tg_free(json);
	tg_fabric_destroy(f);
	tg_topology_destroy(t);
	return rc;
}

/* ---- discover compare ---- */

static int cmd_compare(const dopts *o)
{
	tg_topology *a = NULL, *b = NULL;
	tg_errinfo ei = { "" };
	char *report = NULL;
	unsigned ndiff = 0;
	int rc;

	if (o->nsrc != 2) {
		cli_err("discover compare: give two sources, e.g. "
			"--topology-conf topology.conf --cluster nodes.json");
		return 2;
	}
	rc = load(o, 0, 1, true, &a, NULL);
	if (!rc)
		rc = load(o, 1, 2, true, &b, NULL);
	if (rc)
		goto out;
	if (tg_topology_compare(a, o->src[0].path, b, o->src[1].path,
				&report, &ndiff, &ei)) {
		cli_err("%s", ei.msg);
		rc = 2;
		goto out;
	}
	fputs(report, stdout);
	printf("%s vs %s: %u node%s and %u node%s, %u disagreement%s\n",
	       o->src[0].path, o->src[1].path, tg_topology_nnodes(a),
	       tg_topology_nnodes(a) == 1 ? "" : "s", tg_topology_nnodes(b),
	       tg_topology_nnodes(b) == 1 ? "" : "s", ndiff,
	       ndiff == 1 ? "" : "s");
	rc = ndiff ? 1 : 0;
out:
	tg_free(report);
	tg_topology_destroy(a);
	tg_topology_destroy(b);
	return rc;
}

/* `topogang check --topology-conf F --cluster DUMP` (argv[0] "check"). */
int cli_compare(int argc, char **argv)
{
	dopts o;
	int rc;

	if ((rc = parse(argc, argv, 1, &o)))
		return rc == 1 ? 0 : rc;
	if (o.nsrc != 2 || o.src[0].kind == o.src[1].kind ||
	    is_fabric(o.src[0].kind) != is_fabric(o.src[1].kind) ||
	    is_fabric(o.src[0].kind) || o.format >= 0 || o.output ||
	    o.xml || o.smi || o.node || o.hostmap || o.keys) {
		cli_err("%s: compare with --topology-conf FILE --cluster FILE "
			"[--levels K1,...]", argv[0]);
		return 2;
	}
	return cmd_compare(&o);
}

int cli_discover(int argc, char **argv)
{
	dopts o;
	int rc;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if ((rc = parse(argc, argv, 2, &o)))
		return rc == 1 ? 0 : rc;
	if (!strcmp(argv[1], "node"))
		return cmd_node(&o);
	if (!strcmp(argv[1], "fabric"))
		return cmd_fabric(&o);
	if (!strcmp(argv[1], "compare"))
		return cmd_compare(&o);
	cli_err("discover: unknown mode '%s' (node, fabric, compare)",
		argv[1]);
	return 2;
}

/* ---- export ---- */

int cli_export(int argc, char **argv)
{
	tg_export_opts eo;
	tg_topology *t = NULL;
	tg_errinfo ei = { "" };
	char *out = NULL, *kdup = NULL, *bdup = NULL, *keys[MAX_LIST];
	char *sz[MAX_LIST];
	unsigned sizes[MAX_LIST];
	dopts o;
	int rc, n, i;

	if ((rc = parse(argc, argv, 1, &o)))
		return rc == 1 ? 0 : rc;
	if (o.format < 0) {
		cli_err("export: give a format (--slurm-tree, --slurm-block, "
			"--k8s-labels, --k8s-patch, --kai-topology, "
			"--kueue-topology, --koordinator, --json)");
		return 2;
	}
	if (one_topology(&o, "export") || o.output || o.xml || o.smi) {
		if (o.output || o.xml || o.smi)
			cli_err("export: --output, --xml and --nvidia-smi "
				"belong to 'discover'");
		return 2;
	}
	memset(&eo, 0, sizeof(eo));
	eo.no_pad = o.no_pad;
	eo.name = o.name;
	if ((rc = load(&o, 0, o.nsrc, false, &t, NULL)))
		return rc;
	rc = 2;
	if (o.keys) {
		n = split_list(o.keys, &kdup, keys);
		if (n < 0 || (unsigned)n != tg_topology_nlayers(t)) {
			cli_err("--keys '%s': expected %u label keys, one per "
				"layer (farthest first; '-' leaves one out)",
				o.keys, tg_topology_nlayers(t));
			goto out;
		}
		for (i = 0; i < n; i++)
			if (!strcmp(keys[i], "-"))
				keys[i] = NULL;
		eo.keys = (const char *const *)keys;
		eo.nkeys = (unsigned)n;
	}
	if (o.block_layer) {
		eo.block_layer = tg_topology_layer_find(t, o.block_layer);
		if (eo.block_layer == TG_NONE) {
			cli_err("--block-layer: no layer '%s'", o.block_layer);
			goto out;
		}
		eo.block_layer_set = true;
	}
	if (o.block_sizes) {
		n = split_list(o.block_sizes, &bdup, sz);
		for (i = 0; n > 0 && i < n; i++) {
			char *end;
			long v = strtol(sz[i], &end, 10);

			if (*end || v < 1 || v > 1000000)
				n = -1;
			else
				sizes[i] = (unsigned)v;
		}
		if (n < 1) {
			cli_err("--block-sizes '%s': expected node counts, "
				"e.g. 8,16,32", o.block_sizes);
			goto out;
		}
		eo.block_sizes = sizes;
		eo.nblock_sizes = (unsigned)n;
	}
	if (tg_export(t, (tg_export_format)o.format, &eo, &out, &ei)) {
		cli_err("%s", ei.msg);
		goto out;
	}
	fputs(out, stdout);
	rc = 0;
out:
	tg_free(out);
	free(kdup);
	free(bdup);
	tg_topology_destroy(t);
	return rc;
}
