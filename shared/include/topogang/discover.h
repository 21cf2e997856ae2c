/*
 * topogang/discover.h - what is inside one host: its GPUs, their PCI and
 * NUMA locality, the NICs, and the NVLink islands, from `nvidia-smi topo
 * -m` text, an hwloc XML export or the live host (hwloc), written as
 * JSON, node labels or gres.conf, or declared on a topology node.
 *
 * (Switch fabrics are in topogang/fabric.h, the exporters and
 * tg_topology_compare() in topogang/export.h; this header used to hold
 * all three.  Include topogang/topogang.h for everything.)
 *
 * Ownership: a tg_nodeinfo is the caller's (tg_nodeinfo_destroy()); the
 * strings it hands out are valid until then; text written by
 * tg_nodeinfo_export() is the caller's (tg_free()).
 *
 * Everything here is pure: no output, no exit; messages come back in a
 * tg_errinfo ("topo.txt:3: ...").
 */
#ifndef TOPOGANG_DISCOVER_H
#define TOPOGANG_DISCOVER_H

#include <stdbool.h>
#include "topogang/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Node-internal labels and annotation written by tg_nodeinfo_export(). */
#define TG_LABEL_GPU_COUNT	"topogang.io/gpu-count"
#define TG_LABEL_NVLINK_ISLANDS	"topogang.io/nvlink-islands"
#define TG_LABEL_ISLAND_SIZE	"topogang.io/nvlink-island-size"
#define TG_ANNOT_GPU_TOPOLOGY	"topogang.io/gpu-topology"

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

/*
 * tg_nodeinfo_load_hwloc_xml() of the file at \p path, named by its
 * path in messages.
 * \note *out belongs to the caller: tg_nodeinfo_destroy().
 */
tg_err tg_nodeinfo_load_hwloc_file(const char *path, tg_nodeinfo **out,
				   tg_errinfo *ei);

/*
 * This host, through hwloc (with whatever backends the library has).
 * \note *out belongs to the caller: tg_nodeinfo_destroy().
 */
tg_err tg_nodeinfo_discover(tg_nodeinfo **out, tg_errinfo *ei);

/* Whether the library was built with hwloc: without it
 * tg_nodeinfo_load_hwloc_xml(), tg_nodeinfo_load_hwloc_file() and
 * tg_nodeinfo_discover() fail with TG_ENOENT. */
bool tg_nodeinfo_have_hwloc(void);

/* Frees \p ni and every string it handed out.  Accepts NULL. */
void tg_nodeinfo_destroy(tg_nodeinfo *ni);

/*
 * What read the node: "nvidia-smi", "hwloc-xml", "hwloc".
 * \note A static string; never free it.
 */
const char *tg_nodeinfo_source(const tg_nodeinfo *ni);

/* GPUs and NICs of the node: tg_nodeinfo_ngpus() and
 * tg_nodeinfo_nnics() count them (at most TG_MAX_GPUS and TG_MAX_NICS). */
unsigned tg_nodeinfo_ngpus(const tg_nodeinfo *ni);
unsigned tg_nodeinfo_nnics(const tg_nodeinfo *ni);

/*
 * tg_nodeinfo_gpu() fills *g with GPU \p i, tg_nodeinfo_nic() fills *n
 * with NIC \p i; TG_ENOENT past the end.
 * \note The strings in *g and *n belong to \p ni: valid until
 * tg_nodeinfo_destroy().
 */
tg_err tg_nodeinfo_gpu(const tg_nodeinfo *ni, unsigned i, tg_gpuinfo *g);
tg_err tg_nodeinfo_nic(const tg_nodeinfo *ni, unsigned i, tg_nicinfo *n);

/* NVLinks between GPUs i and j; 0 for i == j or out of range. */
unsigned tg_nodeinfo_links(const tg_nodeinfo *ni, unsigned i, unsigned j);

/* Whether the source said anything about NVLink (see above): false for
 * hwloc without its NVML backend. */
bool tg_nodeinfo_nvlink_known(const tg_nodeinfo *ni);

/* NVLink islands of the node (1 when NVLink is unknown). */
unsigned tg_nodeinfo_nislands(const tg_nodeinfo *ni);

/*
 * GPU i's island for i < ngpus, as tg_topology_node_set_gpus() takes it.
 * \note The array belongs to \p ni: valid until tg_nodeinfo_destroy().
 */
const uint8_t *tg_nodeinfo_islands(const tg_nodeinfo *ni);

/*
 * Takes the NVLink counts (and so the islands) of \p src, when \p dst
 * has none: hwloc without its NVML backend sees the GPUs and their
 * locality but no NVLink, `nvidia-smi topo -m` sees NVLink but no PCI
 * addresses.  Both number GPUs in PCI order.  TG_EINVAL when the GPU
 * counts differ or \p src knows no NVLink.
 * \note Copies; \p src stays the caller's and may be destroyed after.
 */
tg_err tg_nodeinfo_merge_nvlink(tg_nodeinfo *dst, const tg_nodeinfo *src,
				tg_errinfo *ei);

/* Declares the node's GPUs and islands on node \p n of \p t (before
 * tg_topology_build()).  \note Copies; \p ni may be destroyed after. */
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
