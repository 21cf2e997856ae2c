/*
 * topogang/export.h - one description of the fabric for Slurm's
 * topology.conf and for Kubernetes: any built tg_topology (from a fabric,
 * topology.conf or a Kubernetes snapshot) written as topology.conf (tree
 * or block form), Kubernetes node labels (kubectl commands or a
 * merge-patch list), the KAI / Kueue Topology and the Koordinator
 * ClusterNetworkTopology custom resources, or JSON; and the comparison of
 * two such descriptions of one cluster (tg_topology_compare()).
 *
 * Label keys (docs/fabric-discovery.md, step 3): fabric layers are
 * written as NVIDIA topograph v1.0 does, TG_LABEL_TIER_PREFIX<N> with
 * N = 0 for the switch closest to the nodes, and the accelerator
 * (NVLink) domain as TG_LABEL_ACCEL, so that the Kubernetes loader's
 * preset reads them back.
 * Values longer than 63 bytes or outside the label-value alphabet are
 * written as "x" + 16 lowercase hex digits of their 64-bit FNV-1a hash,
 * as topograph does (equality survives; the value does not).
 *
 * Ownership: text handed out (*out, *report) is the caller's, freed with
 * tg_free(); the topologies and options passed in stay the caller's and
 * are only read.
 *
 * Everything here is pure: no output, no exit; messages come back in a
 * tg_errinfo.
 */
#ifndef TOPOGANG_EXPORT_H
#define TOPOGANG_EXPORT_H

#include <stdbool.h>
#include "topogang/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Label keys of the fabric layers, as NVIDIA topograph writes them. */
#define TG_LABEL_TIER_PREFIX	"fabric.topograph.run/tier-"
#define TG_LABEL_ACCEL		"accelerator.topograph.run/domain"
#define TG_LABEL_HOSTNAME	"kubernetes.io/hostname"

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
 * \note Returns \p buf, an entry of opts->keys, the layer's own key
 * (valid until tg_topology_destroy()) or a static string; nothing to
 * free.
 */
const char *tg_export_label_key(const tg_topology *t, unsigned layer,
				const tg_export_opts *opts, char *buf,
				size_t len);

/*
 * The label value tg_export() writes for a domain value: \p value itself
 * when it is a valid label value, else "x" + 16 hex digits of its FNV-1a
 * hash.  \p buf holds at least 64 bytes.
 * \note Returns \p value or \p buf, both the caller's; nothing to free.
 */
const char *tg_export_label_value(const char *value, char *buf);

/* ---- comparing two descriptions ---------------------------------------- */

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

#ifdef __cplusplus
}
#endif
#endif /* TOPOGANG_EXPORT_H */
