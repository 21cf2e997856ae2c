"""tests/scenarios/casefile.py - the placement cases of tests/scenarios/cases
(README.md there): reading and checking a case file, writing it back in
its one layout, and running it on the paths that need no lab:

  cli-conf     topogang place --topology-conf (fabric cases);
  cli-cluster  topogang place --cluster, on the dump a fabric case is
               rendered to or on the case's own cluster file.

Used by tests/scenarios/run-scenarios (those two paths, every case) and
tests/parity/run-parity (every path a case lists; it adds the Slurm labs
and the bridge).  A case file is one JSON object:

  {"description": "why the expected answer is right" (or a list of lines),
   "paths": ["cli-conf", "cli-cluster", "slurm", "slurm-24.11", "bridge"],
   "gaps": {"slurm": "why the case has no exact form there"},
   and its input, one of
     "fabric": "seed-12", "running": [...], "request": {...},
     "expect": {"status": ..., "nodes": [...], "victims": [...]}
   or
     "cluster": "NAME.yaml" (in tests/scenarios/clusters), "args": [...],
     "checks": ["exit=0", "default/web-a nodes=n1", ...]}

"paths" says where the case runs, "gaps" why not on a path it could run
on (reported as a TAP SKIP): a fabric case accounts for all five paths, a
cluster case for cli-cluster (always run: its checks are written from
`topogang place --output json`) and bridge (a Kubernetes dump has no
topology.conf or sbatch form).  On the bridge the checks read the
daemon's decision lines and the pods it bound; exit, warnings and gpus
checks are topogang place's alone (a SKIP there).  Anything else (an
unknown key, path, tier or layer) makes the case invalid: a failure, never
ignored.
"""

import json
import os
import re
import subprocess

SRC = os.environ.get("TG_SRCDIR") or os.path.abspath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BUILD = os.environ.get("TG_BUILDDIR") or SRC
TOPOGANG = os.environ.get("TOPOGANG") or os.path.join(BUILD, "cli",
                                                      "topogang")
CASES = os.path.join(SRC, "tests", "scenarios", "cases")
CLUSTERS = os.path.join(SRC, "tests", "scenarios", "clusters")
SCHED = "topogang"
PATHS = ("cli-conf", "cli-cluster", "slurm", "slurm-24.11", "bridge")
CLI_PATHS = ("cli-conf", "cli-cluster")
SLURM_PATHS = ("slurm", "slurm-24.11")
KEYS = ("description", "paths", "gaps", "fabric", "running", "request",
        "expect", "cluster", "args", "checks")

# ---------------------------------------------------------------------------
# the fabric cases: the seed's 12-node fabric
# seed-12: one file, tests/slurm/seed-topology.conf, which the Slurm labs
# (tests/slurm/lab.sh) use too; the blocks and spines below are read from
# it
SEED_TOPOLOGY = os.path.join(SRC, "tests", "slurm", "seed-topology.conf")


def _names(expr):
    """'node-[0-2]' / 'block-[0-1]' / 'block-4' -> the names, in order."""
    m = re.match(r"^([^\[]*)\[(\d+)-(\d+)\]$", expr)
    if not m:
        return [expr]
    return ["%s%d" % (m.group(1), i)
            for i in range(int(m.group(2)), int(m.group(3)) + 1)]


def _seed_fabric(path):
    """(BLOCKS, SPINE_OF): block -> node indices, block -> spine."""
    blocks, spine_of = {}, {}
    with open(path) as f:
        for line in f:
            kv = dict(w.split("=", 1) for w in line.split())
            if "Nodes" in kv:
                blocks[kv["SwitchName"]] = [node_key(n) for n in
                                            _names(kv["Nodes"])]
            elif kv.get("SwitchName", "").startswith("spine-"):
                for b in _names(kv["Switches"]):
                    spine_of[b] = kv["SwitchName"]
    return blocks, spine_of


# layer names on each side
CONF_LAYER = {"block": "switch-l0", "spine": "switch-l1"}
K8S_LAYER = {"block": "BlockLayer", "spine": "SpineLayer"}
K8S_KEY = {"block": "network.topology.nvidia.com/block",
           "spine": "network.topology.nvidia.com/spine"}
K8S_MODE = {"must": "MustGather", "prefer": "PreferGather"}
# priorities (PriorityClass values and the CLI's), Slurm partitions
PRIO = {"low": 1, "mid": 5, "fixed": 1, "high": 1000, "normal": 0}
PARTITION = {"low": "low", "mid": "mid", "fixed": "batch", "high": "high",
             "normal": "batch"}
NODE_CPU = 8
MB_PER_CPU = 1000  # lab.sh's DefMemPerCPU
GANG_LABEL = "pod-group.scheduling.sigs.k8s.io"


def node_key(n):
    return int(n.rsplit("-", 1)[1])


BLOCKS, SPINE_OF = _seed_fabric(SEED_TOPOLOGY)


def norm(status, nodes, victims):
    return (status, sorted(set(nodes), key=node_key),
            sorted(set(victims), key=node_key))


def fmt(r):
    return "%s nodes=%s victims=%s" % (r[0], ",".join(r[1]) or "-",
                                       ",".join(r[2]) or "-")


# ---------------------------------------------------------------------------
# the scenario, normalized

def running(sc):
    """[(index, nodes, priority, cpu or None, gpus)]: None = whole node."""
    out = []
    for i, r in enumerate(sc.get("running", [])):
        nodes = r.get("nodes") or [r["node"]]
        whole = "cpu" not in r and "gpus" not in r
        out.append((i, nodes, r.get("priority", "low"),
                    None if whole else r.get("cpu", 1), r.get("gpus", 0)))
    return out


def podsets(sc):
    """The request's pod sets: [(members, cpu, gpus, whole)]."""
    rq = sc["request"]
    sets = [rq] + rq.get("podsets", [])
    out = []
    for p in sets:
        cpu = p.get("cpu", NODE_CPU)
        gpus = p.get("gpus", 0)
        out.append((p["members"], cpu, gpus, cpu >= NODE_CPU))
    return out


def gather_items(rq):
    g = rq.get("gather")
    return [x.split(":") for x in g.split(",")] if g else []


def spread_item(rq):
    """(layer, skew, hard) or None; soft unless said (as --topo-spread)."""
    sp = rq.get("spread")
    if not sp:
        return None
    w = sp.split(":")
    skew = next((int(x) for x in w[1:] if x.isdigit()), 1)
    return (w[0], skew, "hard" in w[1:])


def slice_item(rq):
    sl = rq.get("slice")
    if not sl:
        return None
    layer, size = sl.split(":")
    return (layer, int(size))


def victim_node(v):
    # "default/run3-node-5" or "run3-node-5" or "running-4/node-5"
    v = v.split("/")[-1]
    m = re.match(r"run\d+-(.*)$", v)
    return m.group(1) if m else v


# ---------------------------------------------------------------------------
# the Kubernetes dump (one JSON List: nodes, topology, priority classes,
# running pods, the gang)

def k8s_items(sc):
    items = []
    for b, idx in BLOCKS.items():
        for i in idx:
            items.append({
                "apiVersion": "v1", "kind": "Node",
                "metadata": {"name": "node-%d" % i, "labels": {
                    "kubernetes.io/hostname": "node-%d" % i,
                    K8S_KEY["spine"]: SPINE_OF[b],
                    K8S_KEY["block"]: b}},
                "status": {"allocatable": {"cpu": str(NODE_CPU),
                                           "memory": "32000Mi",
                                           "nvidia.com/gpu": "8",
                                           "pods": "110"}}})
    items.sort(key=lambda x: node_key(x["metadata"]["name"]))
    items.append({
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "ClusterNetworkTopology", "metadata": {"name": "default"},
        "spec": {"networkTopologySpec": [
            {"labelKey": [K8S_KEY["spine"]],
             "topologyLayer": "SpineLayer"},
            {"labelKey": [K8S_KEY["block"]],
             "parentTopologyLayer": "SpineLayer",
             "topologyLayer": "BlockLayer"},
            {"parentTopologyLayer": "BlockLayer",
             "topologyLayer": "NodeTopologyLayer"}]}})
    for p in ("low", "mid", "high"):
        items.append({"apiVersion": "scheduling.k8s.io/v1",
                      "kind": "PriorityClass",
                      "metadata": {"name": p + "-priority"},
                      "value": PRIO[p]})
    for i, nodes, prio, cpu, gpus in running(sc):
        group = "run%d" % i
        kai = prio == "fixed"
        if kai:
            # a lower priority that may not be preempted: KAI's flag
            items.append({
                "apiVersion": "scheduling.run.ai/v2alpha2",
                "kind": "PodGroup",
                "metadata": {"name": group, "namespace": "default"},
                "spec": {"minMember": len(nodes),
                         "preemptibility": "non-preemptible"}})
        elif len(nodes) > 1:
            items.append({
                "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
                "kind": "PodGroup",
                "metadata": {"name": group, "namespace": "default"},
                "spec": {"minMember": len(nodes)}})
        if cpu is None:
            req = {"cpu": str(NODE_CPU), "memory": "32000Mi"}
        else:
            req = {"cpu": str(cpu), "memory": "%dMi" % (cpu * MB_PER_CPU)}
        lim = {}
        if gpus:
            req["nvidia.com/gpu"] = lim["nvidia.com/gpu"] = str(gpus)
        for n in nodes:
            meta = {"name": "%s-%s" % (group, n), "namespace": "default"}
            if kai:
                meta["annotations"] = {"pod-group-name": group}
            elif len(nodes) > 1:
                meta["labels"] = {GANG_LABEL: group}
            res = {"requests": req}
            if lim:
                res["limits"] = lim
            items.append({
                "apiVersion": "v1", "kind": "Pod", "metadata": meta,
                "spec": {"schedulerName": SCHED,
                         "priorityClassName": ("low" if kai else prio) +
                         "-priority",
                         "nodeName": n,
                         "containers": [{"name": "c", "image": "busybox",
                                         "resources": res}]},
                "status": {"phase": "Running"}})
    rq = sc["request"]
    ann = {}
    gi = gather_items(rq)
    if gi:
        ann["gang.scheduling.koordinator.sh/network-topology-spec"] = \
            json.dumps({"gatherStrategy": [
                {"layer": K8S_LAYER[layer], "strategy": K8S_MODE[mode]}
                for layer, mode in gi]})
    total = sum(ps[0] for ps in podsets(sc))
    items.append({
        "apiVersion": "scheduling.sigs.k8s.io/v1alpha1", "kind": "PodGroup",
        "metadata": {"name": "gang", "namespace": "default",
                     "annotations": ann},
        "spec": {"minMember": total}})
    k = 0
    for si, (members, cpu, gpus, whole) in enumerate(podsets(sc)):
        req = {"cpu": str(cpu), "memory": "1Gi" if whole else
               "%dMi" % (cpu * MB_PER_CPU)}
        res = {"requests": req}
        if gpus:
            req["nvidia.com/gpu"] = str(gpus)
            res["limits"] = {"nvidia.com/gpu": str(gpus)}
        labels = {GANG_LABEL: "gang", "parity/set": str(si)}
        spec = {"schedulerName": SCHED,
                "containers": [{"name": "c", "image": "busybox",
                                "resources": res}]}
        if rq.get("priority", "normal") != "normal":
            spec["priorityClassName"] = rq["priority"] + "-priority"
        if not whole:
            # one member a node, as each node of a Slurm job
            spec["affinity"] = {"podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [{
                    "topologyKey": "kubernetes.io/hostname",
                    "labelSelector": {"matchLabels": {
                        GANG_LABEL: "gang", "parity/set": str(si)}}}]}}
        sp = spread_item(rq)
        if sp:
            spec["topologySpreadConstraints"] = [{
                "maxSkew": sp[1], "topologyKey": K8S_KEY[sp[0]],
                "whenUnsatisfiable": "DoNotSchedule" if sp[2] else
                "ScheduleAnyway",
                "labelSelector": {"matchLabels": {GANG_LABEL: "gang"}}}]
        annots = {"gang.scheduling.koordinator.sh/network-topology-index":
                  str(k)}
        sl = slice_item(rq)
        if sl:
            annots["kueue.x-k8s.io/podset-slice-required-topology"] = \
                K8S_KEY[sl[0]]
            annots["kueue.x-k8s.io/podset-slice-size"] = str(sl[1])
        for _ in range(members):
            items.append({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "gang-%d" % k, "namespace": "default",
                             "labels": labels, "annotations": dict(
                                 annots, **{"gang.scheduling.koordinator."
                                            "sh/network-topology-index":
                                            str(k)})},
                "spec": spec, "status": {"phase": "Pending"}})
            k += 1
    return items


def cli_result(out):
    try:
        g = [x for x in json.loads(out)["gangs"]][0]
    except Exception as e:  # noqa: BLE001
        return ("error: %s" % e, [], []), ""
    st = g["status"]
    nodes = [p["node"] for p in g.get("placements", []) if p.get("node")]
    vic = [v.get("node") or victim_node(v.get("pod", "?"))
           for v in g.get("victims", [])]
    if st == "unschedulable":
        nodes = []
    return norm(st, nodes, vic), g.get("message", "")


# ---------------------------------------------------------------------------
# path a1: --topology-conf

def conf_shape(cpu, gpus, whole):
    sh = "cpu=%d" % cpu
    if not whole:
        sh += ",memory=%dMi,max-per-node=1" % (cpu * MB_PER_CPU)
    if gpus:
        sh += ",nvidia.com/gpu=%d" % gpus
    return sh


def path_conf(sc):
    conf = SEED_TOPOLOGY
    rq = sc["request"]
    sets = podsets(sc)
    gang = "name=gang,members=%d,%s" % (sets[0][0], conf_shape(*sets[0][1:]))
    pr = PRIO[rq.get("priority", "normal")]
    if pr:
        gang += ",priority=%d" % pr
    cmd = [TOPOGANG, "place", "--topology-conf", conf, "--node",
           "cpu=%d,memory=32000Mi,nvidia.com/gpu=8" % NODE_CPU,
           "--gang", gang, "--output", "json"]
    for members, cpu, gpus, whole in sets[1:]:
        cmd += ["--podset", "members=%d,%s" % (members,
                                               conf_shape(cpu, gpus, whole))]
    gi = gather_items(rq)
    if gi:
        cmd += ["--gather", ",".join("%s:%s" % (CONF_LAYER[layer], mode)
                                     for layer, mode in gi)]
    sp = spread_item(rq)
    if sp:
        cmd += ["--spread", "%s:%d:%s" % (CONF_LAYER[sp[0]], sp[1],
                                          "hard" if sp[2] else "soft")]
    sl = slice_item(rq)
    if sl:
        cmd += ["--slice", "%s:%d" % (CONF_LAYER[sl[0]], sl[1])]
    for i, nodes, prio, cpu, gpus in running(sc):
        spec = "name=run%d,priority=%d" % (i, PRIO[prio])
        if prio == "fixed":
            spec += ",preemptible=no"
        if cpu is not None:
            spec += ",cpu=%d,memory=%dMi" % (cpu, cpu * MB_PER_CPU)
        if gpus:
            spec += ",nvidia.com/gpu=%d" % gpus
        cmd += ["--running", "%s:%s" % (",".join(nodes), spec)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    r, msg = cli_result(p.stdout)
    return r, "%s (rc %d) %s" % (" ".join(cmd[2:]), p.returncode,
                                 (p.stderr or msg).strip())


# ---------------------------------------------------------------------------
# path a2: --cluster

def path_cluster(sc, dump):
    cmd = [TOPOGANG, "place", "--cluster", dump, "--scheduler-name", SCHED,
           "--output", "json"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    r, msg = cli_result(p.stdout)
    return r, "rc %d %s" % (p.returncode, (p.stderr or msg).strip())


# ---------------------------------------------------------------------------
# case files: reading, checking, writing back

def check_case(sc):
    """What is wrong with a case ("" if nothing): a misspelt key would
    otherwise be ignored on every path alike."""
    def keys(d, allowed, where):
        if not isinstance(d, dict):
            return "%s: expected an object" % where
        bad = sorted(set(d) - set(allowed))
        return "%s: unknown key %s" % (where, ", ".join(bad)) if bad else ""
    why = keys(sc, KEYS, "case")
    if why:
        return why
    d = sc.get("description")
    if not d or not (isinstance(d, str) or (isinstance(d, list) and all(
            isinstance(x, str) for x in d))):
        return "no description (why the expected answer is right)"
    paths, gaps = sc.get("paths"), sc.get("gaps", {})
    if not isinstance(paths, list) or not paths or \
            len(set(paths)) != len(paths):
        return "paths: a list of the paths the case runs on"
    bad = sorted(set(paths) - set(PATHS))
    if bad:
        return "paths: unknown path %s (%s)" % (", ".join(bad),
                                                ", ".join(PATHS))
    why = keys(gaps, PATHS, "gaps")
    if why:
        return why
    if set(paths) & set(gaps):
        return "a path both in paths and gaps: %s" % ", ".join(
            sorted(set(paths) & set(gaps)))
    if ("fabric" in sc) == ("cluster" in sc):
        return "one input: \"fabric\" or \"cluster\""
    if "cluster" in sc:
        return check_cluster_case(sc)
    return check_fabric_case(sc)


def check_cluster_case(sc):
    for k in ("running", "request", "expect"):
        if k in sc:
            return "%s: only with \"fabric\"" % k
    bad = [p for p in sc["paths"] + list(sc.get("gaps", {}))
           if p not in ("cli-cluster", "bridge")]
    if bad:
        return ("paths: a cluster case runs on cli-cluster and the bridge, "
                "not %s (a Kubernetes dump has no topology.conf or sbatch "
                "form)" % ", ".join(bad))
    if "cli-cluster" not in sc["paths"]:
        return "paths: a cluster case runs on cli-cluster (its checks " \
            "are written from topogang place's output)"
    if "bridge" not in sc["paths"] and "bridge" not in sc.get("gaps", {}):
        return "bridge: in paths, or in gaps with the reason"
    f = sc["cluster"]
    if not isinstance(f, str) or "/" in f or \
            not os.path.isfile(os.path.join(CLUSTERS, f)):
        return "cluster: %r is not a file in tests/scenarios/clusters" % f
    args = sc.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str)
                                             for a in args):
        return "args: a list of strings"
    checks = sc.get("checks")
    if not isinstance(checks, list) or not checks:
        return "checks: a list of expectation lines"
    for c in checks:
        if not isinstance(c, str) or not CHECK_RE.match(c):
            return "checks: cannot read %r" % (c,)
    return ""


def check_fabric_case(sc):
    if sc["fabric"] != "seed-12":
        return "fabric: %r is not one this runner knows (seed-12)" % (
            sc["fabric"],)
    for k in ("args", "checks"):
        if k in sc:
            return "%s: only with \"cluster\"" % k
    missing = [p for p in PATHS if p not in sc["paths"] and
               p not in sc.get("gaps", {})]
    if missing:
        return ("a fabric case runs on every path or says why not: %s "
                "in neither paths nor gaps" % ", ".join(missing))
    if not all(isinstance(v, str) and v for v in sc.get("gaps",
                                                        {}).values()):
        return "gaps: each path with its reason"
    shape = ("members", "cpu", "gpus")
    why = ""
    for i, r in enumerate(sc.get("running", [])):
        why = why or _keys(r, ("node", "nodes", "priority", "cpu", "gpus"),
                           "running[%d]" % i)
        if not why and r.get("priority", "low") not in PARTITION:
            why = "running[%d]: unknown priority %r" % (i, r["priority"])
    rq = sc.get("request", {})
    why = why or _keys(rq, shape + ("gather", "spread", "slice", "podsets",
                                    "priority"), "request")
    for i, ps in enumerate(rq.get("podsets", [])):
        why = why or _keys(ps, shape, "request.podsets[%d]" % i)
    if not why and rq.get("priority", "normal") not in ("normal", "high"):
        why = "request: priority must be normal or high"
    for layer, mode in gather_items(rq):
        if not why and (layer not in CONF_LAYER or mode not in K8S_MODE):
            why = "request.gather: bad item %s:%s" % (layer, mode)
    for it in (spread_item(rq), slice_item(rq)):
        if not why and it and it[0] not in CONF_LAYER:
            why = "request: unknown layer %r" % it[0]
    return why or _keys(sc.get("expect", {}), ("status", "nodes",
                                                "victims"), "expect")


def _keys(d, allowed, where):
    bad = sorted(set(d) - set(allowed))
    return "%s: unknown key %s" % (where, ", ".join(bad)) if bad else ""


def load(only=None):
    """[(name, case, why)] of every case file, by name; \\p only: a regex
    the names must match.  \\p why says what is wrong ("" if nothing)."""
    out = []
    for f in sorted(os.listdir(CASES)):
        if not f.endswith(".json"):
            out.append((f, None, "not a case file (NAME.json)"))
            continue
        name = f[:-5]
        if only and not re.search(only, name):
            continue
        try:
            with open(os.path.join(CASES, f)) as fh:
                sc = json.load(fh)
            why = check_case(sc)
        except (ValueError, AttributeError, TypeError, KeyError) as e:
            sc, why = None, "%s" % e
        out.append((name, sc, why))
    return out


def dump_case(sc):
    """The one layout of a case file: a key a line, lists of objects or
    lines an item a line (so a regenerated case diffs line by line)."""
    def one(v):
        return json.dumps(v, ensure_ascii=False)
    parts = []
    for k in KEYS:
        if k not in sc:
            continue
        v = sc[k]
        if isinstance(v, list) and v and (k != "paths" and k != "args"):
            body = ",\n".join("    " + one(x) for x in v)
            parts.append('  "%s": [\n%s\n  ]' % (k, body))
        elif isinstance(v, dict) and k == "gaps":
            body = ",\n".join("    %s: %s" % (one(p), one(x))
                              for p, x in v.items())
            parts.append('  "%s": {\n%s\n  }' % (k, body))
        else:
            parts.append('  "%s": %s' % (k, one(v)))
    return "{\n" + ",\n".join(parts) + "\n}\n"


def write_case(name, sc):
    with open(os.path.join(CASES, name + ".json"), "w") as f:
        f.write(dump_case(sc))


# ---------------------------------------------------------------------------
# fabric cases on the CLI paths

def fabric_dump(sc, tmp):
    """Writes the case's Kubernetes dump into \\p tmp; its path."""
    dump = os.path.join(tmp, "cluster.json")
    with open(dump, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List",
                   "items": k8s_items(sc)}, f, indent=1)
    return dump


def want(sc):
    e = sc["expect"]
    return norm(e["status"], e.get("nodes", []), e.get("victims", []))


def run_cli(path, sc, tmp, dump):
    """(result, info) of a fabric case on cli-conf or cli-cluster."""
    if path == "cli-conf":
        return path_conf(sc)
    return path_cluster(sc, dump)


# ---------------------------------------------------------------------------
# cluster cases: checks on `topogang place --cluster --output json`
#
#   exit=N                        exit status (0 all placed, 1 some not)
#   GANG status=placed            placed | preempting | unschedulable
#   GANG domain=SpineLayer/spine-1
#   GANG nodes=node-5,node-6      nodes in rank order
#   GANG pods=ns/p@node,...       pod -> node, any order
#   GANG gpus=ns/p@0-3,...        pod -> GPU indices, any order
#   GANG victims=ns/p,...         victims, any order (empty: none)
#   GANG message~TEXT             the message contains TEXT
#   warnings~TEXT                 some warning contains TEXT

CHECK_RE = re.compile(r"^(exit=\d+|warnings~.+|\S+ (status|domain|nodes|"
                      r"pods|gpus|victims|message)[=~].*)$")
UNORDERED = ("pods", "victims", "gpus")


def gpu_text(ids):
    """[0, 1, 2, 3, 6] -> "0-3+6"."""
    out, start, prev = [], None, None
    for v in (int(x) for x in ids):
        if prev is not None and v == prev + 1:
            prev = v
            continue
        if start is not None:
            out.append("%d-%d" % (start, prev) if prev > start else
                       "%d" % start)
        start = prev = v
    if start is not None:
        out.append("%d-%d" % (start, prev) if prev > start else "%d" % start)
    return "+".join(out)


class CliView:
    """What `topogang place --output json` said, as the checks read it."""
    def __init__(self, rc, out, err):
        try:
            self.root = json.loads(out)
        except ValueError:
            self.root = None
        self.rc, self.out, self.err = rc, out, err
        self.gangs = {g.get("name"): g for g in
                      (self.root or {}).get("gangs") or []}

    def broken(self):
        if self.root is None:
            return "rc %d\n%s%s" % (self.rc, self.out, self.err)
        return ""

    def exit(self):
        return str(self.rc)

    def warnings(self):
        return (self.root or {}).get("warnings") or []

    def has(self, gang):
        return gang in self.gangs

    def field(self, gang, field):
        g = self.gangs[gang]
        if field in ("status", "domain", "message"):
            return g.get(field) or ""
        if field == "victims":
            items = [v.get("pod", "") for v in g.get("victims") or []]
        else:
            items = [{"nodes": p.get("node", ""),
                      "pods": "%s@%s" % (p.get("pod"), p.get("node")),
                      "gpus": "%s@%s" % (p.get("pod"),
                                         gpu_text(p.get("gpus") or []))}[
                                             field]
                     for p in g.get("placements") or []]
        return ",".join(sorted(items) if field in UNORDERED else items)


def judge(name, checks, view, tag=""):
    """[(ok, description, diagnostics)] a check against \p view (a
    CliView or the bridge's view in run-parity: None from a view's
    exit()/warnings()/field() means the path does not report it, a SKIP:
    ok is then the reason, a string), and the checks regenerated from the
    view (TG_REGEN)."""
    res, regen = [], []
    if view.broken():
        res.append((False, "%s: output is readable%s" % (name, tag),
                    view.broken()))
    for c in checks:
        if c.startswith("exit="):
            got = view.exit()
            regen.append("exit=%s" % got if got is not None else c)
            res.append((got == c[5:] if got is not None else
                        "only topogang place has an exit status",
                        "%s: exit status%s" % (name, tag),
                        diag(got, c[5:], getattr(view, "err", ""))))
            continue
        if c.startswith("warnings~"):
            regen.append(c)
            ws = view.warnings()
            res.append((any(c[9:] in w for w in ws) if ws is not None else
                        "only topogang place prints warnings",
                        "%s: a warning says '%s'%s" % (name, c[9:], tag),
                        diag("(no such warning)", c[9:])))
            continue
        gang, rest = c.split(" ", 1)
        field, op, value = re.match(r"(\w+)([=~])(.*)$", rest).groups()
        if not view.has(gang):
            regen.append(c)
            res.append((False, "%s: gang %s decided%s" % (name, gang, tag),
                        diag("(no such gang)", gang,
                             getattr(view, "err", ""))))
            continue
        got = view.field(gang, field)
        if op == "~":
            regen.append(c)
            desc = "%s: %s %s mentions '%s'%s" % (name, gang, field, value,
                                                   tag)
        else:
            regen.append("%s %s=%s" % (gang, field, got) if got is not None
                         else c)
            desc = "%s: %s %s%s" % (name, gang, field, tag)
            if field in UNORDERED:
                value = ",".join(sorted(value.split(","))) if value else ""
        if got is None:
            res.append(("the bridge does not report %s" % field, desc, ""))
        else:
            res.append((value in got if op == "~" else got == value, desc,
                        diag(got, value)))
    return res, regen


def run_checks(name, sc, tag=""):
    """A cluster case on cli-cluster: judge()'s answer."""
    cmd = [TOPOGANG, "place", "--cluster", os.path.join(CLUSTERS,
                                                        sc["cluster"]),
           "--output", "json"] + sc.get("args", [])
    p = subprocess.run(cmd, capture_output=True, text=True)
    return judge(name, sc["checks"], CliView(p.returncode, p.stdout,
                                             p.stderr), tag)


def diag(got, want, more=""):
    return "got:      '%s'\nexpected: '%s'%s" % (
        got, want, "\n" + more.strip() if more.strip() else "")
