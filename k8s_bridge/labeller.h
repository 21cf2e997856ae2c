/*
 * k8s_bridge/labeller.h - `topogang-bridge --label-nodes`: the node
 * labeller, one per node (a DaemonSet, config/k8s/40-labeller.yaml).
 *
 * Each pass discovers the node (the core's discovery: hwloc on this host,
 * or --xml FILE / --nvidia-smi FILE; optionally --topology-conf FILE for
 * the fabric layers), reads its own Node object, PATCHes the labels and
 * annotations that are missing (application/merge-patch+json, as
 * `kubectl label` does) and reports every label that disagrees with
 * discovery as one Warning Event on the Node (reason TopologyLabelDrift),
 * once per drift: the same disagreement is not reported again until it
 * has gone away.  With --drift correct the label is also overwritten.
 *
 * Exit status: 0 after SIGTERM/SIGINT, or after one good pass with
 * --once; 1 when a --once pass failed (Node missing, API error); 2 for bad
 * usage, configuration or discovery input at start (one line on stderr).
 * Without --once, API errors and a missing Node are logged (once per
 * distinct error) and retried every interval.
 */
#ifndef BR_LABELLER_H
#define BR_LABELLER_H

#include <stdbool.h>

/* Whether the command line asks for the labeller (--label-nodes). */
bool br_labeller_wanted(int argc, char **argv);

/* Runs the labeller; returns the exit status (see above). */
int br_labeller_main(int argc, char **argv);

#endif /* BR_LABELLER_H */
