/*
 * topogang/topoconf.h - the Slurm topology.conf loader (hostlists, which
 * it reads, are in topogang/hostlist.h).
 *
 * Reads the two forms Slurm 22.05 and later sites use:
 *   tree:  SwitchName=s0 Nodes=node[0-2]   /  SwitchName=top Switches=s[0-1]
 *   block: BlockName=b1 Nodes=node[1-4]    /  BlockSizes=4,8,16
 * into an empty topology (no layers, no nodes yet): it adds the layers and
 * one node per node name, with no resources.  The caller sets resources,
 * then calls tg_topology_build().
 *
 * Tree form: layers are the switch levels, named "switch-l<K>" with K the
 * Slurm switch level (0 = leaf switch), farthest first.  A leaf reached
 * through fewer levels than the deepest one repeats its switch on the
 * missing levels, so every node has a full path.  Several top switches
 * without a common parent are several domains under the root.
 *
 * Block form: the base blocks are layer "block"; each BlockSizes entry
 * above the first is a layer "block<N>" (N nodes) grouping consecutive base
 * blocks in file order, as Slurm aggregates them.  Without BlockSizes only
 * "block" exists.
 *
 * Errors name the file and line: "topology.conf:7: bad hostlist
 * 'node[3-1]': range end before start".
 *
 * Ownership: the loader reads the caller's text and adds to the caller's
 * topology; it keeps no pointer to either and hands nothing out.
 */
#ifndef TOPOGANG_TOPOCONF_H
#define TOPOGANG_TOPOCONF_H

#include "topogang/topology.h"
/* Nodes= and Switches= are hostlists: TG_MAX_HOSTLIST bounds them. */
#include "topogang/hostlist.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Switch or block names of one file; past it TG_ELIMIT. */
#define TG_MAX_SWITCHES	65536

/*
 * Loads topology.conf text \p buf of \p len bytes; \p source names it in
 * messages.  On a parse or validation error nothing is added to \p t.
 * On TG_ENOMEM part of the file may have been added: destroy \p t.
 */
tg_err tg_topoconf_load(tg_topology *t, const char *buf, size_t len,
			const char *source, tg_errinfo *ei);
/* tg_topoconf_load() of the file at \p path (at most TG_MAX_FILE bytes),
 * named by its path in messages; TG_EIO when it cannot be read. */
tg_err tg_topoconf_load_file(tg_topology *t, const char *path,
			     tg_errinfo *ei);

#ifdef __cplusplus
}
#endif
#endif /* TOPOGANG_TOPOCONF_H */
