/*
 * topogang/fabric.h - switch trees from fabric discovery: the output of
 * InfiniBand `ibnetdiscover`, NVIDIA NetQ's topology graph, a host-to-
 * switch CSV such as Alibaba Crux's, and NetQ's NVLink domains become a
 * tg_topology with one layer per switch level, as the other loaders
 * produce.  topogang/export.h writes the result for Slurm and
 * Kubernetes.
 *
 * The loader shape.  Every fabric format is read the same way, and ends
 * the way tg_topoconf_load() ends: layers and nodes added to an empty
 * topology the caller created, no resources set, the caller then calls
 * tg_topology_build().  It takes two steps because one fabric is often
 * several inputs (one ibnetdiscover file per subnet, NVLink domains on
 * top of a switch fabric) read under one host-map rule, and because
 * warnings, a summary and the switch groups stay readable afterwards:
 *
 *   f = tg_fabric_create();
 *   tg_fabric_set_hostmap(f, rule, &ei);       optional, before inputs
 *   tg_fabric_add(f, fmt, buf, len, source, &ei);   any number
 *   tg_fabric_build(f, t, &ei);                into an empty topology
 *   tg_topology_build(t, &ei);
 *   tg_fabric_destroy(f);                      t lives on
 *
 * Inputs of one kind go together: switch graphs (ibnetdiscover, NetQ)
 * or host tables (CSV), not both; NVLink domains go with either, or
 * alone.  After a failed tg_fabric_add() the fabric accepts nothing but
 * tg_fabric_destroy() (TG_ESTATE).  (The Kubernetes loader, k8s.h,
 * differs: tg_k8s_build() creates the topology, since a cluster dump
 * also carries resources, allocations and gangs.)
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
 * Ownership: the fabric owns everything it hands out (warnings, group
 * names and members); nothing here takes ownership of the caller's
 * buffers, which may be freed as soon as a call returns.  The topology
 * given to tg_fabric_build() stays the caller's.
 *
 * Everything here is pure: no output, no exit; messages come back in a
 * tg_errinfo ("fabric.out:12: ...") or as warnings the caller reads.
 */
#ifndef TOPOGANG_FABRIC_H
#define TOPOGANG_FABRIC_H

#include "topogang/topology.h"
#include "topogang/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tg_fabric tg_fabric;

typedef enum tg_fabric_format {
	TG_FABRIC_IBNETDISCOVER = 0,	/* `ibnetdiscover` text */
	TG_FABRIC_NETQ,			/* NetQ topology-graph JSON */
	TG_FABRIC_CSV,			/* host,top,...,leaf (Crux) */
	TG_FABRIC_NETQ_NVL,		/* NetQ compute nodes: NVLink
					 * domains */
	/* a new format goes here (values are ABI: never renumber) */
} tg_fabric_format;

/* Bounds on fabric inputs, hitting one is TG_ELIMIT: switches and CA
 * ports over all inputs; bytes of a host-map rule. */
#define TG_MAX_FABRIC_DEVICES	(1u << 22)
#define TG_MAX_HOSTMAP		4096
/* Bytes of an input tg_fabric_detect() looks at (the rest is ignored). */
#define TG_FABRIC_SNIFF_BYTES	65536

/*
 * Creates an empty fabric.
 * \note The caller owns it: tg_fabric_destroy().  NULL when out of memory.
 */
tg_fabric *tg_fabric_create(void);

/*
 * Frees \p f and every string it handed out (warnings, groups).  The
 * topologies it built are the caller's and stay.  Accepts NULL.
 */
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
 * TG_EINVAL with a message naming the bad step; TG_ELIMIT past
 * TG_MAX_HOSTMAP bytes, 32 steps or 16 globs in one step; TG_ESTATE
 * after an input.
 * \note The fabric keeps a copy of what it needs; \p rule stays the
 * caller's.
 */
tg_err tg_fabric_set_hostmap(tg_fabric *f, const char *rule, tg_errinfo *ei);

/*
 * Adds one input of \p len bytes in format \p fmt; \p source names it in
 * messages (NULL: the format's name, tg_fabric_format_name()).
 * Malformed input is TG_EPARSE with "source:line: what"; a truncated
 * ibnetdiscover file (a port that links to a node whose own block is
 * missing, or a link one side does not list) is TG_EPARSE too.  TG_ESTATE
 * for a host table added to switch graphs or the other way round, or
 * after a failed input.
 * \note \p buf stays the caller's (the fabric copies what it keeps).
 */
tg_err tg_fabric_add(tg_fabric *f, tg_fabric_format fmt, const char *buf,
		     size_t len, const char *source, tg_errinfo *ei);

/*
 * tg_fabric_add() of the file at \p path (at most TG_MAX_FILE bytes),
 * named by its path in messages; TG_EIO when it cannot be read.
 */
tg_err tg_fabric_add_file(tg_fabric *f, tg_fabric_format fmt,
			  const char *path, tg_errinfo *ei);

/*
 * Guesses the format of an input from its first TG_FABRIC_SNIFF_BYTES
 * bytes: ibnetdiscover's header lines ("vendid=", "Switch ", "Ca "), a
 * JSON document holding "DomainUUID" (NetQ compute nodes) or "links"
 * (a NetQ topology graph), or a comma-separated header line (CSV).  A
 * guess, not a check: tg_fabric_add() still validates everything.
 * TG_ENOENT when no format fits, TG_EINVAL for NULL arguments.
 * \note Reads \p buf only; *fmt is set on TG_OK only.
 */
tg_err tg_fabric_detect(const char *buf, size_t len, tg_fabric_format *fmt);

/*
 * The name of format \p fmt ("ibnetdiscover", "netq", "csv",
 * "compute-nodes"), the source name tg_fabric_add() uses when given
 * none; NULL for a value that is no format.
 * \note A static string; never free it.
 */
const char *tg_fabric_format_name(tg_fabric_format fmt);

/*
 * Adds the layers (farthest first) and one node per host, in natural name
 * order, to \p t, which must be empty (TG_ESTATE otherwise); no resources
 * are set.  The caller then calls tg_topology_build().  TG_EINVAL when no
 * host was found.  May be called more than once (each time into a new
 * topology).  On TG_ENOMEM part may have been added: destroy \p t.
 * \note \p t stays the caller's; the fabric keeps no pointer into it.
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

/*
 * Copies the counts of \p f into *s (all zero for a NULL fabric).
 * \note *s is the caller's; it holds no pointers.
 */
void tg_fabric_summary_get(const tg_fabric *f, tg_fabric_summary *s);

/*
 * Switch group \p i (0 .. summary.groups - 1, leaves first) of the last
 * tg_fabric_build(): its level, its name (the domain value) and its member
 * switches as a compressed hostlist.  TG_ENOENT past the end.  Any output
 * pointer may be NULL.
 * \note The strings belong to the fabric: valid until the next
 * tg_fabric_add(), tg_fabric_build() or tg_fabric_destroy().
 */
tg_err tg_fabric_group(const tg_fabric *f, unsigned i, unsigned *level,
		       const char **name, const char **members,
		       unsigned *nmembers);

/*
 * Warnings (hosts skipped, names rewritten, NVLink domains split):
 * tg_fabric_nwarnings() counts them, tg_fabric_warning() gives warning
 * \p i (NULL past the end).  Past 1000 warnings the last one says that
 * more were not kept.
 * \note The strings belong to the fabric: valid until tg_fabric_destroy().
 */
unsigned tg_fabric_nwarnings(const tg_fabric *f);
const char *tg_fabric_warning(const tg_fabric *f, unsigned i);

#ifdef __cplusplus
}
#endif
#endif /* TOPOGANG_FABRIC_H */
