#!/usr/bin/env python3
"""tests/cli/gen-fabric.py - a synthetic fabric for the picture tests.

    gen-fabric.py conf ZONES SPINES BLOCKS NODES          > topology.conf
    gen-fabric.py k8s  ZONES SPINES BLOCKS NODES [GANG]   > cluster.json

The sim's spec "zone:Z,spine:S,block:B,node:N,gpu:8" (docs/simulator.md):
Z zones, S spines per zone, B blocks per spine, N nodes per block,
8 GPUs per node; domains "zone-K", "spine-K", "block-K" and nodes
"node-K", K counted across the whole fabric.  2 4 8 18 is the 1,152-node
fabric of the simulator's tests.

k8s form (`kubectl get nodes,pods,podgroups,... -o json`): Koordinator
layers ZoneLayer > SpineLayer > BlockLayer read from node labels, with

  - the last node without its spine and block labels (flagged unlabelled),
  - running work: every node of the first 3 blocks full (gang "etl", one
    8-GPU pod per node, bound by topogang-bridge: its topogang.io/gang,
    /domain and /rank annotations, rank K on node-K), every 5th other
    node half used (pod "dev-K"),
  - pending gang GANG (default "train"): 24 pods of 8 GPUs, MustGather
    in a spine, PreferGather in a block,
  - pending gang "huge": 400 pods of 8 GPUs that must share one block
    (unschedulable: the picture lists it with the core's reason).

Deterministic: the same arguments give the same bytes.
"""
import json
import sys

L_ZONE = "topology.kubernetes.io/zone"
L_SPINE = "network.topology.nvidia.com/spine"
L_BLOCK = "network.topology.nvidia.com/block"


def fabric(z, s, b, n):
    """(node, zone, spine, block) in order."""
    k = 0
    for zi in range(z):
        for si in range(zi * s, (zi + 1) * s):
            for bi in range(si * b, (si + 1) * b):
                for _ in range(n):
                    yield "node-%d" % k, "zone-%d" % zi, "spine-%d" % si, \
                        "block-%d" % bi
                    k += 1


def conf(z, s, b, n):
    out = []
    for zi in range(z):
        out.append("SwitchName=zone-%d Switches=spine-[%d-%d]"
                   % (zi, zi * s, (zi + 1) * s - 1))
    for si in range(z * s):
        out.append("SwitchName=spine-%d Switches=block-[%d-%d]"
                   % (si, si * b, (si + 1) * b - 1))
    for bi in range(z * s * b):
        out.append("SwitchName=block-%d Nodes=node-[%d-%d]"
                   % (bi, bi * n, (bi + 1) * n - 1))
    return "\n".join(out) + "\n"


def pod(name, gpus, node=None, group=None, ts="2026-01-01T00:00:00Z",
        bound=None):
    """\p bound: (domain, rank) as topogang-bridge annotates its bindings."""
    md = {"name": name, "namespace": "default", "creationTimestamp": ts,
          "uid": "uid-" + name}
    if group:
        md["labels"] = {"pod-group.scheduling.sigs.k8s.io": group}
    if bound:
        md["annotations"] = {"topogang.io/gang": "default/" + group,
                             "topogang.io/domain": bound[0],
                             "topogang.io/rank": str(bound[1])}
    spec = {"containers": [{"name": "c", "image": "busybox",
                            "resources": {"requests": {
                                "cpu": "8", "memory": "64Gi",
                                "nvidia.com/gpu": str(gpus)}}}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec,
            "status": {"phase": "Running" if node else "Pending"}}


def group(name, members, gather):
    spec = json.dumps({"gatherStrategy": [
        {"layer": l, "strategy": st} for l, st in gather]})
    return {"apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default",
                         "creationTimestamp": "2026-01-01T00:00:00Z",
                         "annotations": {
                             "gang.scheduling.koordinator.sh/"
                             "network-topology-spec": spec}},
            "spec": {"minMember": members}}


def k8s(z, s, b, n, gang):
    items = [{
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "ClusterNetworkTopology", "metadata": {"name": "default"},
        "spec": {"networkTopologySpec": [
            {"labelKey": [L_ZONE], "topologyLayer": "ZoneLayer"},
            {"labelKey": [L_SPINE], "parentTopologyLayer": "ZoneLayer",
             "topologyLayer": "SpineLayer"},
            {"labelKey": [L_BLOCK], "parentTopologyLayer": "SpineLayer",
             "topologyLayer": "BlockLayer"},
            {"parentTopologyLayer": "BlockLayer",
             "topologyLayer": "NodeTopologyLayer"}]}}]
    nodes = list(fabric(z, s, b, n))
    for i, (name, zn, sp, bl) in enumerate(nodes):
        labels = {"kubernetes.io/hostname": name, L_ZONE: zn}
        if i != len(nodes) - 1:
            labels[L_SPINE] = sp
            labels[L_BLOCK] = bl
        res = {"cpu": "128", "memory": "1Ti", "pods": "110",
               "nvidia.com/gpu": "8"}
        items.append({"apiVersion": "v1", "kind": "Node",
                      "metadata": {"name": name, "labels": labels},
                      "status": {"allocatable": res, "capacity": res}})
    for i, (name, _, _, _) in enumerate(nodes):
        if i < 3 * n:
            items.append(pod("etl-%d" % i, 8, name, "etl",
                             bound=("SpineLayer/zone-0/spine-0", i)))
        elif i % 5 == 0:
            items.append(pod("dev-%d" % i, 4, name))
    items.append(group("etl", 3 * n, []))
    items.append(group(gang, 24, [("SpineLayer", "MustGather"),
                                  ("BlockLayer", "PreferGather")]))
    for i in range(24):
        items.append(pod("%s-%d" % (gang, i), 8, group=gang))
    items.append(group("huge", 400, [("BlockLayer", "MustGather")]))
    for i in range(400):
        items.append(pod("huge-%d" % i, 8, group="huge",
                         ts="2026-01-01T00:01:00Z"))
    return json.dumps({"apiVersion": "v1", "kind": "List",
                       "metadata": {}, "items": items}, indent=1) + "\n"


def main():
    a = sys.argv[1:]
    if len(a) < 5 or a[0] not in ("conf", "k8s"):
        sys.exit(__doc__)
    z, s, b, n = (int(x) for x in a[1:5])
    if a[0] == "conf":
        sys.stdout.write(conf(z, s, b, n))
    else:
        sys.stdout.write(k8s(z, s, b, n, a[5] if len(a) > 5 else "train"))


if __name__ == "__main__":
    main()
