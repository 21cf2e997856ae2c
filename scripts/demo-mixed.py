#!/usr/bin/env python3
"""scripts/demo-mixed.py - the side-by-side demo of mixed mode (run by
scripts/demo-mixed, which builds first).  Brings up the loopback Slurm
cluster with select/topogang and slurmrestd (tests/slurm/lab-serve), the
test Kubernetes API server with 12 nodes (tests/k8s/apiserver.py) and
topogang-bridge in mixed mode, then:

  1. one request, two front doors: `sbatch -N4 --topo-gather=spine:prefer`
     alone, then a 4-pod Kubernetes gang with PreferGather on SpineLayer
     alone; prints both placements side by side;
  2. both at once on the shared pool: the picture of the fabric with the
     nodes each side holds (S = the Slurm job, K = the Kubernetes gang).

Everything it starts is stopped by PID at the end.
"""

import os
import re
import subprocess
import sys
import time

sys.dont_write_bytecode = True
SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
os.environ.setdefault("TG_SRCDIR", SRC)
sys.path.insert(0, os.path.join(SRC, "tests", "k8s"))
import bridgetest as bt  # noqa: E402
import importlib.machinery  # noqa: E402
import importlib.util  # noqa: E402

_spec = importlib.util.spec_from_loader(
    "mixedmode", importlib.machinery.SourceFileLoader(
        "mixedmode", os.path.join(SRC, "tests", "slurm", "test-mixed-mode")))
mm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mm)

BLOCKS = [("spine-0", "block-0", range(0, 3)), ("spine-0", "block-1",
                                                 range(3, 5)),
          ("spine-1", "block-2", range(5, 7)), ("spine-1", "block-3",
                                                 range(7, 9)),
          ("spine-2", "block-4", range(9, 12))]


def say(msg):
    print(msg)
    sys.stdout.flush()


def wait(fn, secs):
    return bt.wait_until(fn, secs, 0.2)


def sbatch(*args):
    r = subprocess.run(["timeout", "10", "sbatch", "--parsable", "-o",
                        "/dev/null"] + list(args), capture_output=True,
                       text=True)
    if r.returncode:
        raise SystemExit("sbatch failed: " + r.stderr)
    return r.stdout.strip().split(";")[0]


def state(jid):
    return mm.sl("squeue", "-h", "-j", jid, "-o", "%T|%N").split("|") + [""]


def picture(marks):
    """The fabric, each node marked with who holds it."""
    out = ["core"]
    last = None
    for spine, block, nodes in BLOCKS:
        if spine != last:
            out.append("  %s" % spine)
            last = spine
        cells = []
        for i in nodes:
            n = "node-%d" % i
            cells.append("[%-7s %s]" % (n, marks.get(n, " ")))
        out.append("    %-8s %s" % (block, " ".join(cells)))
    return "\n".join(out)


def side_by_side(left, right, width=44):
    a, b = left.splitlines(), right.splitlines()
    n = max(len(a), len(b))
    a += [""] * (n - len(a))
    b += [""] * (n - len(b))
    return "\n".join("%-*s | %s" % (width, x, y) for x, y in zip(a, b))


def main():
    if os.geteuid() != 0:
        raise SystemExit("demo-mixed: run as root (slurmd runs as root)")
    lab = mm.Lab("demo-mixed", 17800)
    try:
        if not lab.line.startswith("READY"):
            raise SystemExit("demo-mixed: the Slurm lab did not start: " +
                             lab.line)
        say("Slurm: slurmctld + 12 slurmd + slurmrestd (JWT) on loopback, "
            "select/topogang\n  lab: %s" % lab.env["LAB"])
        srv = bt.ApiServer("demo")
        k = bt.Kubectl(srv)
        k.apply(mm.nodes_yaml())
        cfg = bt.FAST_CONFIG % {"sched": "topogang", "lease": 4,
                                "renew": 3, "retry": 0.5, "repair": 3}
        cfg += """mixed:
  slurmrestd: %s
  jwtTokenFile: %s
  partition: batch
  layerMap: {SpineLayer: spine, BlockLayer: block}
  pollSeconds: 0.5
""" % (lab.env["RESTD"], lab.env["TOKEN"])
        d = bt.Daemon(srv, config=cfg)
        if not wait(lambda: d.http("/readyz")[0] == 200, 20):
            raise SystemExit("demo-mixed: the bridge is not ready:\n" +
                             d.text())
        say("Kubernetes: test API server (%s), topogang-bridge in mixed "
            "mode\n" % srv.url)

        # 1: the same request through each door, alone
        say("== 1. the same request, each door alone: 4 whole nodes, "
            "gathered in one spine if possible ==")
        sj = sbatch("-N4", "--exclusive", "--topo-gather=spine:prefer",
                    "-J", "slurm-demo", "--wrap", "sleep 600")
        wait(lambda: state(sj)[0] == "RUNNING", 20)
        s_nodes = state(sj)[1]
        mm.sl("scancel", sj)
        lab.cmd("drain")
        k.apply(bt.gang_yaml("demo", 4, cpu="8",
                             gather=[("SpineLayer", "PreferGather")]))
        pods = bt.members("demo", 4)
        wait(lambda: bt.all_bound(srv, pods), 30)
        kj = mm.live("default/demo")
        k_nodes = bt.pod_nodes(srv, pods)
        left = ("Slurm: sbatch -N4 --exclusive\n"
                "       --topo-gather=spine:prefer\n"
                "job %s -> %s\n  %s" % (sj, s_nodes,
                                        ", ".join(mm.hostnames(s_nodes))))
        right = ("Kubernetes: PodGroup demo, 4 pods,\n"
                 "       PreferGather SpineLayer\n"
                 "Slurm job %s (%s) -> pods on\n  %s" % (
                     kj[0][0] if kj else "?", "default/demo",
                     ", ".join(str(n) for n in k_nodes)))
        say(side_by_side(left, right))
        same = mm.hostnames(s_nodes) == k_nodes
        say("\n%s\n" % ("same answer from both doors" if same else
                        "DIFFERENT answers"))
        k.run("delete", "pod", "--wait=false", *pods)
        wait(lambda: not mm.live("default/demo"), 20)
        lab.cmd("drain")

        # 2: both at once on the shared pool
        say("== 2. both at once, one pool: nobody gets a node the other "
            "holds ==")
        sj = sbatch("-N4", "--exclusive", "--topo-gather=spine:prefer",
                    "-J", "slurm-demo", "--wrap", "sleep 600")
        wait(lambda: state(sj)[0] == "RUNNING", 20)
        k.apply(bt.gang_yaml("demo2", 4, cpu="8",
                             gather=[("SpineLayer", "PreferGather")]))
        pods = bt.members("demo2", 4)
        wait(lambda: bt.all_bound(srv, pods), 30)
        marks = {}
        for n in mm.hostnames(state(sj)[1]):
            marks[n] = "S"
        for n in bt.pod_nodes(srv, pods):
            if n:
                marks[n] = "K" if n not in marks else "!"
        kj = mm.live("default/demo2")
        say(picture(marks))
        say("S = Slurm job %s (sbatch), K = Kubernetes gang default/demo2 "
            "(Slurm job %s via slurmrestd)" % (sj, kj[0][0] if kj else "?"))
        rc, out, err = k.run("describe", "pod", "demo2-0")
        for line in out.splitlines():
            if re.search(r"slurm-job|topogang.io/domain|Node:", line):
                say("  kubectl describe pod demo2-0: " + line.strip())
        for line in mm.sl("squeue", "-o", "%.6i %.14j %.9P %.8T %N"
                          ).splitlines():
            say("  squeue: " + line)
        if "!" in marks.values():
            say("ERROR: a node held by both sides")
            return 1
        d.stop()
        return 0
    finally:
        lab.stop()


if __name__ == "__main__":
    sys.exit(main())
