/*
 * topogang/discover.h - topology discovery and export: one description of
 * the fabric for Slurm's topology.conf and for Kubernetes node labels.
 *
 * Three parts:
 *
 *   fabrics   switch trees from fabric discovery (InfiniBand
 *             `ibnetdiscover`, NVIDIA NetQ's topology graph, a host-to-
 *             switch CSV such as Alibaba Crux's) become a tg_topology with
 *             one layer per switch level, as the other loaders produce;
 *   exports   any built tg_topology (from a fabric, topology.conf or a
 *             Kubernetes snapshot) is written as topology.conf (tree or
 *             block form), Kubernetes node labels (kubectl commands or a
 *             merge-patch list), or the KAI / Kueue Topology and the
 *             Koordinator ClusterNetworkTopology custom resources;
 *   nodes     what is inside one host: its GPUs, their PCI and NUMA
 *             locality, the NICs, and the NVLink islands, from
 *             `nvidia-smi topo -m` text, an hwloc XML export or the live
 *             host (hwloc), written as JSON, node labels or gres.conf.
 *
 * Label keys (research/k8s-api.md §2(h)): fabric layers are written as
 * NVIDIA topograph v1.0 does, TG_LABEL_TIER_PREFIX<N> with N = 0 for the
 * switch closest to the nodes, and the accelerator (NVLink) domain as
 * TG_LABEL_ACCEL, so that the Kubernetes loader's preset reads them back.
 * Values longer than 63 bytes or outside the label-value alphabet are
 * written as "x" + 16 lowercase hex digits of their 64-bit FNV-1a hash,
 * as topograph does (equality survives; the value does not).
 *
 * Everything here is pure: no output, no exit; messages come back in a
 * tg_errinfo ("fabric.out:12: ...") or as warnings the caller reads.
 */
#ifndef TOPOGANG_DISCOVER_H
#define TOPOGANG_DISCOVER_H

#include <stdbool.h>
#include "topogang/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TG_LABEL_TIER_PREFIX	"fabric.topograph.run/tier-"
#define TG_LABEL_ACCEL		"accelerator.topograph.run/domain"
#define TG_LABEL_HOSTNAME	"kubernetes.io/hostname"

/* Node-internal labels and annotation written by tg_nodeinfo_export(). */
#define TG_LABEL_GPU_COUNT	"topogang.io/gpu-count"
#define TG_LABEL_NVLINK_ISLANDS	"topogang.io/nvlink-islands"
#define TG_LABEL_ISLAND_SIZE	"topogang.io/nvlink-island-size"
#define TG_ANNOT_GPU_TOPOLOGY	"topogang.io/gpu-topology"

/* ---- fabrics ------------------------------------------------------------ */

/*
 * A fabric collects the output of one or more discovery runs and turns it
 * into layers and nodes.
 *
 * Switch graphs (ibnetdiscover, NetQ) become a tree this way: the switches
 * with hosts attached are the leaves (level 0); leaves that share a host
 * are one leaf group (the rails of a rail-optimised scalable unit: every
 * DGX has a port on each of its unit's leaves); a switch's level is one
 * more than the nearest leaf's; switches of one level that reach a common
 * group below are one group.  Each group is a domain of layer
 * "switch-l<level>" (key TG_LABEL_TIER_PREFIX<level>), named after its
 * member that sorts first (tg_name_cmp()); tg_fabric_group() lists the
 * members.  A group with no parent stands on the levels above it too (as
 * topology.conf's loader does), so every host has a full path.  Switches
 * that hosts hang off but whose hosts were all dropped by the host-map
 * rule are left out (they are other units' leaves, not parents), as are
 * switches no host reaches.
 *
 * Host names: an InfiniBand CA's node description "NAME mlx5_0" (one or
 * two words; anything longer is a default description such as "MT4129
 * ConnectX7 Mellanox Technologies" and names no host) gives NAME; NetQ
 * gives the device name; the CSV gives its first column.  The host-map
 * rule then rewrites or drops it; a name outside [A-Za-z0-9._-] is
 * skipped with a warning.  CSV switch names must use that alphabet too
 * (the first line names the levels; "quoted" fields, CRLF, a BOM, blank
 * and '#' lines are read).  Switch names: the part between ';' and
 * ':' of "MF0;A09-P1-IBLEAF-04-04:MQM9701/U1", else the description when
 * it is a valid label value, else the node id ("S-2c5eab0300b87b40").
 *
 * NVLink domains (TG_FABRIC_NETQ_NVL: the JSON list NetQ's NMX API
 * serves at nmx/v1/compute-nodes, [{"Name": "node1", "DomainUUID":
 * "3fbf...", ...}], as NVIDIA topograph reads it) may be added to either
 * kind of input, or alone.  They become one more layer below the
 * switches, "nvlink" with key TG_LABEL_ACCEL, whose domains are named
 * by DomainUUID (alone: the only layer, so the block form of topology.conf
 * has one block per NVLink domain).  Names go through the host-map rule
 * like the others.  A host of the switch fabric in no NVLink domain, or
 * a host of the list on no switch, misses a value (one warning each way,
 * naming them); a domain whose hosts hang off different switches is
 * split, with a warning.  A node listed in two domains is TG_EEXIST.
 *
 * Life cycle:
 *   tg_fabric_create(); [tg_fabric_set_hostmap();]
 *   tg_fabric_add() ... (any number of inputs of one kind: switch graphs
 *                        or tables, not both; NVLink domains with
 *                        either)
 *   tg_fabric_build(f, t) into an empty topology, then
 *   tg_topology_build(t) as after the other loaders;
 *   tg_fabric_destroy().
 * After a failed tg_fabric_add() the fabric accepts nothing but
 * tg_fabric_destroy() (TG_ESTATE).
 */
typedef struct tg_fabric tg_fabric;

typedef enum tg_fabric_format {
	TG_FABRIC_IBNETDISCOVER = 0,	/* `ibnetdiscover` text */
	TG_FABRIC_NETQ,			/* NetQ topology-graph JSON */
	TG_FABRIC_CSV,			/* host,top,...,leaf (Crux) */
	TG_FABRIC_NETQ_NVL		/* NetQ compute nodes: NVLink
					 * domains */
} tg_fabric_format;

/* Bounds on fabric inputs, hitting one is TG_ELIMIT: switches and CA
 * ports over all inputs; bytes of a host-map rule. */
#define TG_MAX_FABRIC_DEVICES	(1u << 22)
#define TG_MAX_HOSTMAP		4096

/* \note Destroy with tg_fabric_destroy().  NULL when out of memory. */
tg_fabric *tg_fabric_create(void);
void tg_fabric_destroy(tg_fabric *f);

/*
 * Sets the host-map rule, before the first tg_fabric_add().  A rule is a
 * comma-separated list of steps applied in order to each host name:
 *
 *   match=GLOB[|GLOB...]  keep only names matching one glob (* and ?)
 *   drop=GLOB[|GLOB...]   drop names matching one glob
 *   lower, upper          change case
 *   strip-domain          cut at the first '.'
 *   strip-prefix=S, strip-suffix=S, prefix=S, suffix=S
 *   replace=FROM/TO       replace the first FROM by TO
 *
 * e.g. "match=*-dgx-*,strip-domain".  NULL or "" is the identity.
 * TG_EINVAL with a message naming the bad step.
 */
tg_err tg_fabric_set_hostmap(tg_fabric *f, const char *rule, tg_errinfo *ei);

/*
 * Adds one input of \p len bytes; \p source names it in messages.
 * Malformed input is TG_EPARSE with "source:line: what"; a truncated
 * ibnetdiscover file (a port that links to a node whose own block is
 * missing, or a link one side does not list) is TG_EPARSE too.
 */
tg_err tg_fabric_add(tg_fabric *f, tg_fabric_format fmt, const char *buf,
		     size_t len, const char *source, tg_errinfo *ei);
/* Same, reading a file (at most TG_MAX_FILE bytes). */
tg_err tg_fabric_add_file(tg_fabric *f, tg_fabric_format fmt,
			  const char *path, tg_errinfo *ei);

/*
 * Adds the layers (farthest first) and one node per host, in natural name
 * order, to \p t, which must be empty; no resources are set.  The caller
 * then calls tg_topology_build().  TG_EINVAL when no host was found.  May
 * be called more than once (each time into a new topology).  On TG_ENOMEM
 * part may have been added: destroy \p t.
 */
tg_err tg_fabric_build(tg_fabric *f, tg_topology *t, tg_errinfo *ei);

/*
 * What the inputs held (after tg_fabric_build() for groups and levels).
 */
typedef struct tg_fabric_summary {
	unsigned switches;	/* switch devices seen */
	unsigned host_ports;	/* CA ports / host rows seen */
	unsigned hosts;		/* distinct hosts kept */
	unsigned unnamed;	/* host ports without a host name */
	unsigned dropped;	/* host names the host-map rule dropped */
	unsigned unlinked;	/* switches no host can reach (ignored) */
	unsigned levels;	/* switch levels of the tree */
	unsigned groups;	/* switch groups (see tg_fabric_group()) */
	unsigned nvl_hosts;	/* hosts with an NVLink domain */
	unsigned nvl_domains;	/* distinct NVLink domains */
} tg_fabric_summary;

void tg_fabric_summary_get(const tg_fabric *f, tg_fabric_summary *s);

/*
 * Switch group \p i (0 .. summary.groups - 1, leaves first) of the last
 * tg_fabric_build(): its level, its name (the domain value) and its member
 * switches as a compressed hostlist.  TG_ENOENT past the end.
 * \note The strings are valid until the next build or tg_fabric_destroy().
 */
tg_err tg_fabric_group(const tg_fabric *f, unsigned i, unsigned *level,
		       const char **name, const char **members,
		       unsigned *nmembers);

/* Warnings (hosts skipped, names rewritten); valid until destroy. */
unsigned tg_fabric_nwarnings(const tg_fabric *f);
const char *tg_fabric_warning(const tg_fabric *f, unsigned i);

/* ---- exports ------------------------------------------------------------ */

typedef enum tg_export_format {
	TG_EXPORT_SLURM_TREE = 0,	/* topology.conf: SwitchName= */
	TG_EXPORT_SLURM_BLOCK,		/* topology.conf: BlockName= */
	TG_EXPORT_K8S_LABELS,		/* `kubectl label node` lines */
	TG_EXPORT_K8S_PATCH,		/* JSON list of merge patches */
	TG_EXPORT_KAI_TOPOLOGY,		/* kai.scheduler/v1alpha1 */
	TG_EXPORT_KUEUE_TOPOLOGY,	/* kueue.x-k8s.io/v1beta2 */
	TG_EXPORT_KOORDINATOR,		/* ClusterNetworkTopology */
	TG_EXPORT_JSON			/* layers, domains, node paths */
} tg_export_format;

/*
 * Options; a zeroed struct (or NULL) gives the defaults.
 *
 * keys: the label key of each layer, farthest first (nkeys must then be
 * the topology's layer count); a NULL entry leaves that layer out of the
 * labels and CRs.  Without keys each layer uses its own key when it has
 * one, else: a layer named "block" or named like an NVLink domain
 * (nvlink, accelerator, clique, nvl, imex), when it is the lowest layer,
 * TG_LABEL_ACCEL; a Slurm block aggregate ("block16") none; any other
 * TG_LABEL_TIER_PREFIX<N>, N counting the switch layers from the nodes up.
 *
 * Block form: blocks are the domains of layer block_layer (the lowest
 * layer when block_layer is 0 and block_layer_set is false).  BlockSizes
 * are block_sizes when given, else topograph's inference: the smallest
 * block's node count, doubled while the doubled count of blocks is at
 * most the number of blocks.  Unless no_pad, each domain of the layer
 * above gets empty placeholder blocks up to the next power of two of the
 * largest child count, so that Slurm's power-of-two aggregation of
 * consecutive blocks lines up with that layer (topograph's block
 * complement).
 *
 * name: metadata.name of the CRs ("default" when NULL).
 */
typedef struct tg_export_opts {
	const char *const *keys;
	unsigned nkeys;
	unsigned block_layer;
	bool block_layer_set;
	const unsigned *block_sizes;
	unsigned nblock_sizes;
	bool no_pad;
	const char *name;
} tg_export_opts;

/*
 * Writes the built topology \p t in format \p fmt.  Domain names that are
 * not unique (Crux's ToR names repeat under each aggregation switch) are
 * written as their full path with '_' between the values in topology.conf
 * (labels keep bare values: the label set is itself a path).
 * \note *out belongs to the caller: tg_free().
 */
tg_err tg_export(const tg_topology *t, tg_export_format fmt,
		 const tg_export_opts *opts, char **out, tg_errinfo *ei);

/*
 * The label key tg_export() writes for \p layer (see tg_export_opts), in
 * \p buf of \p len bytes; NULL when the layer is left out.
 */
const char *tg_export_label_key(const tg_topology *t, unsigned layer,
				const tg_export_opts *opts, char *buf,
				size_t len);

/*
 * The label value tg_export() writes for a domain value: \p value itself
 * when it is a valid label value, else "x" + 16 hex digits of its FNV-1a
 * hash.  \p buf holds at least 64 bytes.
 */
const char *tg_export_label_value(const char *value, char *buf);

/*
 * Compares two built topologies of the same nodes (topology.conf against
 * Kubernetes labels, say): layers are matched from the nodes up, and for
 * every matched layer each domain of one side must hold the same common
 * nodes as one domain of the other.  Every disagreement is one line of
 * *report: nodes on one side only, nodes left out of one tree, a domain
 * split or merged ("switch-l0: A09-P1-IBLEAF-01-02 holds nodes that the
 * other side puts in leaf-3 (a05-p1-dgx-01-c01) and leaf-4 (...)"), and
 * a layer count that differs.  *ndiff counts them (0: same tree).
 * \p what_a and \p what_b name the sides ("topology.conf", "cluster").
 * \note *report belongs to the caller: tg_free(); "" when they agree.
 */
tg_err tg_topology_compare(const tg_topology *a, const char *what_a,
			   const tg_topology *b, const char *what_b,
			   char **report, unsigned *ndiff, tg_errinfo *ei);

/* ---- one node ----------------------------------------------------------- */

/*
 * What is inside one host.  GPUs are numbered in PCI bus order (as
 * nvidia-smi and NVML number them); links[i][j] is the number of NVLinks
 * between GPUs i and j (through NVSwitches: the smaller of the two GPUs'
 * switch link counts, as `nvidia-smi topo -m` reports NV18 on an HGX
 * H100); an NVLink island is a connected set of GPUs.  When the source
 * says nothing about NVLink (hwloc without its NVML backend) the islands
 * are unknown: tg_nodeinfo_nvlink_known() is false, no island labels are
 * written and tg_nodeinfo_apply() declares one island (the core's
 * default).
 *
 * hwloc XML: exports of hwloc 2.x and 3.x (3.x files are read by the
 * hwloc 2 library after their version and OS-device types are
 * translated).  NVLink comes from the "NVLinkBandwidth" distances matrix
 * (MB/s; a link is 25000, or 20000 on NVLink 1.0 systems); NVSwitches
 * are the PCI devices of subtype "NVSwitch".  NVSwitch-to-NVSwitch trunks
 * are not in that matrix, so a DGX-2's two baseboards show up as two
 * islands of eight.
 */
typedef struct tg_nodeinfo tg_nodeinfo;

#define TG_MAX_NICS	64	/* NICs kept per node */

/* PCIe affinity between a GPU and a NIC, nvidia-smi's legend. */
typedef enum tg_pci_path {
	TG_PATH_UNKNOWN = 0,
	TG_PATH_PIX,	/* at most one PCIe bridge */
	TG_PATH_PXB,	/* several PCIe bridges, no host bridge */
	TG_PATH_PHB,	/* through a PCIe host bridge */
	TG_PATH_NODE,	/* host bridges of one NUMA node */
	TG_PATH_SYS	/* across NUMA nodes */
} tg_pci_path;

typedef struct tg_gpuinfo {
	const char *name;	/* "GPU0": its index in PCI order */
	const char *model;	/* "Tesla V100-SXM3-32GB-H"; "" unknown */
	const char *pci;	/* "0000:34:00.0"; "" unknown */
	const char *cpus;	/* local CPUs, "0-55,112-167"; "" unknown */
	const char *cores;	/* local cores (hwloc logical indexes) */
	int numa;		/* local NUMA node, -1 unknown */
	unsigned island;	/* NVLink island, numbered from 0 */
	int nic;		/* closest NIC, -1 none */
	tg_pci_path nic_path;	/* and how close */
} tg_gpuinfo;

typedef struct tg_nicinfo {
	const char *name;	/* "mlx5_0", "NIC0" */
	const char *pci;	/* "" unknown */
	int numa;		/* -1 unknown */
} tg_nicinfo;

/*
 * Parses `nvidia-smi topo -m` output (its GPU rows; NIC rows and the
 * legend are optional; the legend's "NICk: mlx5_k" lines name the NICs).
 * \note *out belongs to the caller: tg_nodeinfo_destroy().
 */
tg_err tg_nodeinfo_parse_nvidia_smi(const char *buf, size_t len,
				    const char *source, tg_nodeinfo **out,
				    tg_errinfo *ei);

/*
 * Reads an hwloc XML export (a buffer, or a file).  TG_ENOENT with "built
 * without hwloc" when the library was built without it
 * (tg_nodeinfo_have_hwloc()); TG_EPARSE when hwloc rejects the XML.
 * \note *out belongs to the caller: tg_nodeinfo_destroy().
 */
tg_err tg_nodeinfo_load_hwloc_xml(const char *buf, size_t len,
				  const char *source, tg_nodeinfo **out,
				  tg_errinfo *ei);
tg_err tg_nodeinfo_load_hwloc_file(const char *path, tg_nodeinfo **out,
				   tg_errinfo *ei);
/* This host, through hwloc (with whatever backends the library has). */
tg_err tg_nodeinfo_discover(tg_nodeinfo **out, tg_errinfo *ei);
bool tg_nodeinfo_have_hwloc(void);

void tg_nodeinfo_destroy(tg_nodeinfo *ni);

/* "nvidia-smi", "hwloc-xml", "hwloc". */
const char *tg_nodeinfo_source(const tg_nodeinfo *ni);
unsigned tg_nodeinfo_ngpus(const tg_nodeinfo *ni);
unsigned tg_nodeinfo_nnics(const tg_nodeinfo *ni);
/* \note Strings in *g and *n are valid until tg_nodeinfo_destroy(). */
tg_err tg_nodeinfo_gpu(const tg_nodeinfo *ni, unsigned i, tg_gpuinfo *g);
tg_err tg_nodeinfo_nic(const tg_nodeinfo *ni, unsigned i, tg_nicinfo *n);
/* NVLinks between GPUs i and j; 0 for i == j or out of range. */
unsigned tg_nodeinfo_links(const tg_nodeinfo *ni, unsigned i, unsigned j);
bool tg_nodeinfo_nvlink_known(const tg_nodeinfo *ni);
unsigned tg_nodeinfo_nislands(const tg_nodeinfo *ni);
/* GPU i's island for i < ngpus, as tg_topology_node_set_gpus() takes it;
 * valid until tg_nodeinfo_destroy(). */
const uint8_t *tg_nodeinfo_islands(const tg_nodeinfo *ni);

/*
 * Takes the NVLink counts (and so the islands) of \p src, when \p dst
 * has none: hwloc without its NVML backend sees the GPUs and their
 * locality but no NVLink, `nvidia-smi topo -m` sees NVLink but no PCI
 * addresses.  Both number GPUs in PCI order.  TG_EINVAL when the GPU
 * counts differ or \p src knows no NVLink.
 */
tg_err tg_nodeinfo_merge_nvlink(tg_nodeinfo *dst, const tg_nodeinfo *src,
				tg_errinfo *ei);

/* Declares the node's GPUs and islands on node \p n of \p t (before
 * tg_topology_build()). */
tg_err tg_nodeinfo_apply(const tg_nodeinfo *ni, tg_topology *t,
			 tg_node_id n);

typedef enum tg_nodeinfo_format {
	TG_NODEINFO_JSON = 0,	/* GPUs, NICs, links, islands */
	TG_NODEINFO_LABELS,	/* kubectl label + annotate commands */
	TG_NODEINFO_GRES,	/* gres.conf, one line per GPU with Links= */
	TG_NODEINFO_PATCH	/* the labels as a Node merge patch */
} tg_nodeinfo_format;

/*
 * Writes the node as \p fmt; \p node is its Slurm / Kubernetes name.
 * Labels: TG_LABEL_GPU_COUNT, TG_LABEL_NVLINK_ISLANDS ("0-3.4-7": each
 * island's GPUs as ranges, '_' between the ranges of one island ("0_2"),
 * '.' between islands; left out when longer than 63 bytes or when NVLink
 * is unknown), TG_LABEL_ISLAND_SIZE (GPUs in the largest island) and the
 * annotation TG_ANNOT_GPU_TOPOLOGY (the JSON form, compact).  gres.conf:
 * "NodeName=N Name=gpu [Type=T] File=/dev/nvidiaI [Cores=C] Links=...",
 * Links as Slurm reads them (-1 for the GPU itself, else NVLink counts;
 * /dev/nvidiaI assumes device minors follow PCI order).  Patch: the same
 * labels and annotation as one JSON merge patch of the Node object,
 * {"metadata": {"labels": {...}, "annotations": {...}}} (what
 * `topogang-bridge --label-nodes` applies).
 * \note *out belongs to the caller: tg_free().
 */
tg_err tg_nodeinfo_export(const tg_nodeinfo *ni, tg_nodeinfo_format fmt,
			  const char *node, char **out, tg_errinfo *ei);

#ifdef __cplusplus
}
#endif
#endif /* TOPOGANG_DISCOVER_H */
