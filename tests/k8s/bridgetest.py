"""tests/k8s/bridgetest.py - what the bridge daemon's end-to-end tests share:
TAP output, the fake API server (tests/k8s/apiserver.py) over TLS with a
bearer token, the real kubectl, and the real topogang-bridge binary.

With TG_K8S_API=real the same tests run against a real control plane
(tests/k8s/realapi.py: etcd, kube-apiserver, kube-controller-manager, KWOK,
built by tests/k8s/realapi/build): ApiServer() then hands out a
RealApiServer, one cluster per test process shared by its parts (reset
between them), kubectl is the one built with it, and the daemon runs with
its own ServiceAccount's token under config/k8s's RBAC.  What only the fake
can do (faults, /_test controls) is marked in the tests with `if bt.REAL`.

Every process a test starts is recorded and stopped by its PID when the
test exits (atexit), whatever happened.  Nothing is left running.

Env: TG_SRCDIR, TG_BUILDDIR (set by make check), KUBECTL (optional),
TG_E2E_KEEP=1 keeps the temporary directory (logs) for a look,
TG_K8S_API=real (above).
"""

import atexit
import hashlib
import http.client
import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time

import realapi

SRC = os.environ.get("TG_SRCDIR") or os.path.abspath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BUILD = os.environ.get("TG_BUILDDIR") or SRC
SERVER = os.path.join(SRC, "tests", "k8s", "apiserver.py")
BRIDGE = os.path.join(BUILD, "k8s_bridge", "topogang-bridge")
KUBECTL = os.environ.get("KUBECTL") or shutil.which("kubectl")
OPENSSL = shutil.which("openssl")
SEED_PREFER = os.path.join(SRC, "config", "examples",
                           "koordinator-12node.yaml")
SEED_PREEMPT = os.path.join(SRC, "tests", "scenarios", "clusters",
                            "seed-02-must-gather-preempt.yaml")
REAL = os.environ.get("TG_K8S_API") == "real"

_n = 0
_failed = 0
_procs = []
TMP = tempfile.mkdtemp(prefix="tg-bridge-e2e-")


# ---------------------------------------------------------------------------
# TAP

def ok(cond, desc, diag=None):
    global _n, _failed
    _n += 1
    if cond:
        print("ok %d - %s" % (_n, desc))
    else:
        _failed += 1
        print("not ok %d - %s" % (_n, desc))
        if diag is not None:
            for line in str(diag).splitlines()[-25:]:
                print("#   " + line)
    sys.stdout.flush()
    return bool(cond)


def is_eq(got, want, desc):
    return ok(got == want, desc, "got:      %r\nexpected: %r" % (got, want))


def skip(desc, why):
    global _n
    _n += 1
    print("ok %d - %s # SKIP %s" % (_n, desc, why))
    sys.stdout.flush()


def todo(cond, desc, why, diag=None):
    """A TAP TODO assertion: expected to fail for \\p why (not counted as
    a failure); automake reports it XPASS, a failure, once it holds: then
    make it a plain ok()."""
    global _n
    _n += 1
    print("%s %d - %s # TODO %s" % ("ok" if cond else "not ok", _n, desc,
                                     why))
    if not cond and diag is not None:
        for line in str(diag).splitlines()[-25:]:
            print("#   " + line)
    sys.stdout.flush()
    return bool(cond)


def note(msg):
    for line in str(msg).splitlines():
        print("# " + line)
    sys.stdout.flush()


def skip_all(why):
    print("1..0 # SKIP " + why)
    sys.exit(0)


def done():
    print("1..%d" % _n)
    sys.stdout.flush()
    return 1 if _failed else 0


def require():
    """Skips the whole script when a piece is missing."""
    if REAL:
        if not os.access(BRIDGE, os.X_OK):
            skip_all("%s not built (libcurl missing?)" % BRIDGE)
        if not OPENSSL:
            skip_all("openssl not installed (certificates for the real "
                     "API server)")
        bindir, why = realapi.binaries()
        if not bindir:
            skip_all(why)
        return
    if not os.path.exists(SERVER):
        skip_all("tests/k8s/apiserver.py not found")
    if not os.access(BRIDGE, os.X_OK):
        skip_all("%s not built (libcurl missing?)" % BRIDGE)
    if not KUBECTL:
        skip_all("kubectl not installed")
    if not OPENSSL:
        skip_all("openssl not installed (the fake serves TLS)")


def wait_until(fn, timeout=15.0, step=0.05):
    end = time.time() + timeout
    while True:
        v = fn()
        if v or time.time() > end:
            return v
        time.sleep(step)


@atexit.register
def _cleanup():
    for p in reversed(_procs):
        if p.poll() is None:
            try:
                p.kill()
                p.wait(5)
            except (OSError, subprocess.TimeoutExpired):
                pass
    if _CLUSTER is not None:
        _CLUSTER.stop()
    if os.environ.get("TG_E2E_KEEP"):
        sys.stderr.write("kept %s\n" % TMP)
    else:
        shutil.rmtree(TMP, ignore_errors=True)


# ---------------------------------------------------------------------------
# TLS

_TLS = None


def tls_pair():
    """A self-signed certificate for 127.0.0.1 (made once per test)."""
    global _TLS
    if _TLS:
        return _TLS
    d = os.path.join(TMP, "tls")
    os.makedirs(d, exist_ok=True)
    cert, key = os.path.join(d, "cert.pem"), os.path.join(d, "key.pem")
    subprocess.run([OPENSSL, "req", "-x509", "-newkey", "rsa:2048",
                    "-nodes", "-keyout", key, "-out", cert, "-days", "2",
                    "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    _TLS = (cert, key)
    return _TLS


# ---------------------------------------------------------------------------
# the fake API server

class FakeApiServer:
    kubectl_bin = KUBECTL

    def __init__(self, name, *args, token="tg-e2e-token", tls=True,
                 port=0):
        self.dir = os.path.join(TMP, name)
        os.makedirs(self.dir, exist_ok=True)
        self.port_file = os.path.join(self.dir, "port")
        self.token_file = os.path.join(self.dir, "token")
        self.state_file = os.path.join(self.dir, "state.json")
        self.token = token
        if token:
            with open(self.token_file, "w") as f:
                f.write(token + "\n")
        self.tls = tls_pair() if tls else None
        self.args = list(args)
        self.port = port
        self.proc = None
        self.start()

    @property
    def url(self):
        return "%s://127.0.0.1:%d" % ("https" if self.tls else "http",
                                      self.port)

    def kubectl_user_yaml(self):
        """The user block of a kubeconfig for the tests' kubectl."""
        return "    token: %s\n" % self.token if self.token else "    {}\n"

    def start(self):
        if os.path.exists(self.port_file):
            os.unlink(self.port_file)
        cmd = [sys.executable, SERVER, "--port", str(self.port),
               "--port-file", self.port_file, "--state-file",
               self.state_file,
               "--log", os.path.join(self.dir, "server.log")] + self.args
        if self.token:
            cmd += ["--token-file", self.token_file]
        if self.tls:
            cmd += ["--tls-cert", self.tls[0], "--tls-key", self.tls[1]]
        self.proc = subprocess.Popen(
            cmd, stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(self.dir, "stderr"), "a"))
        _procs.append(self.proc)
        end = time.time() + 20
        while time.time() < end:
            if os.path.exists(self.port_file):
                txt = open(self.port_file).read().strip()
                if txt:
                    self.port = int(txt)
                    return
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        raise RuntimeError("the fake API server did not start: %s" %
                           open(os.path.join(self.dir, "stderr")).read())

    def stop(self, sig=signal.SIGTERM):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def restart(self):
        """Stops (saving its objects) and starts again on the same port."""
        self.stop()
        self.start()

    def conn(self, timeout=15):
        if self.tls:
            ctx = ssl.create_default_context(cafile=self.tls[0])
            return http.client.HTTPSConnection("127.0.0.1", self.port,
                                               timeout=timeout, context=ctx)
        return http.client.HTTPConnection("127.0.0.1", self.port,
                                          timeout=timeout)

    def req(self, method, path, body=None, ctype="application/json"):
        c = self.conn()
        h = {}
        if self.token and not path.startswith("/_test"):
            h["Authorization"] = "Bearer " + self.token
        data = None
        if body is not None:
            data = body if isinstance(body, (bytes, str)) else \
                json.dumps(body)
            h["Content-Type"] = ctype
        c.request(method, path, data, h)
        r = c.getresponse()
        raw = r.read()
        c.close()
        try:
            return r.status, json.loads(raw) if raw else None
        except ValueError:
            return r.status, raw.decode(errors="replace")

    def get(self, path):
        return self.req("GET", path)[1]

    def control(self, what, body=None, method="POST"):
        return self.req(method, "/_test/" + what, body)[1]

    def fault(self, **spec):
        return self.control("faults", spec)

    def clear_faults(self):
        return self.control("faults", None, method="DELETE")

    def stats(self):
        return self.control("stats", method="GET")

    def pods(self, ns="default"):
        lst = self.get("/api/v1/namespaces/%s/pods" % ns)
        return {p["metadata"]["name"]: p for p in lst.get("items", [])}

    def requests(self, method=None, path_re=None, status=None):
        """(method, path, status, count) rows of the server's counters."""
        out = []
        for r in self.stats()["requests"]:
            if method and r["method"] != method:
                continue
            if path_re and not re.search(path_re, r["path"]):
                continue
            if status is not None and r["status"] != status:
                continue
            out.append(r)
        return out

    def count(self, method=None, path_re=None, status=None):
        return sum(r["count"] for r in self.requests(method, path_re,
                                                     status))

    def rotate_token(self, token):
        """Writes a new token to the file the server and daemons read."""
        self.token = token
        self.control("token", {"token": token})


# ---------------------------------------------------------------------------
# a real API server (TG_K8S_API=real)

_CLUSTER = None
# the dialect CRDs' groups (realapi/crds.yaml), for --disable-group
CRD_GROUPS = {
    "scheduling.sigs.k8s.io": ["podgroups.scheduling.sigs.k8s.io"],
    "scheduling.x-k8s.io": ["podgroups.scheduling.x-k8s.io"],
    "scheduling.run.ai": ["podgroups.scheduling.run.ai",
                          "queues.scheduling.run.ai"],
    "kai.scheduler": ["topologies.kai.scheduler"],
    "kueue.x-k8s.io": ["topologies.kueue.x-k8s.io"],
    "scheduling.koordinator.sh":
        ["clusternetworktopologies.scheduling.koordinator.sh"],
    "leaderworkerset.x-k8s.io": ["leaderworkersets.leaderworkerset.x-k8s.io"],
}
# what a part leaves behind and the next one must not see
RESET_NAMESPACED = [
    "/api/v1/namespaces/default/pods",
    "/api/v1/namespaces/default/events",
    "/apis/events.k8s.io/v1/namespaces/default/events",
    "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
    "/apis/scheduling.sigs.k8s.io/v1alpha1/namespaces/default/podgroups",
    "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups",
    "/apis/scheduling.run.ai/v2alpha2/namespaces/default/podgroups",
    "/apis/scheduling.k8s.io/v1alpha3/namespaces/default/podgroups",
    "/apis/leaderworkerset.x-k8s.io/v1/namespaces/default/leaderworkersets",
]
RESET_CLUSTER = [
    "/api/v1/nodes",
    "/apis/kai.scheduler/v1alpha1/topologies",
    "/apis/kueue.x-k8s.io/v1beta2/topologies",
    "/apis/scheduling.koordinator.sh/v1alpha1/clusternetworktopologies",
    "/apis/scheduling.run.ai/v2/queues",
]


def real_cluster():
    """The test process's one real control plane, started on first use."""
    global _CLUSTER
    if _CLUSTER is None:
        t0 = time.time()
        _CLUSTER = realapi.Cluster(os.path.join(TMP, "real"))
        note("real control plane (Kubernetes %s) up in %.1f s" %
             (_CLUSTER.version(), time.time() - t0))
    return _CLUSTER


class RealApiServer:
    """The fake's interface over a real control plane (realapi.Cluster):
    what a test reads through it (objects, request counts from the audit
    log) is the real server's.  One cluster per test process: creating
    one resets the cluster to its start (the previous part's objects
    deleted) and starts counting requests afresh."""

    def __init__(self, name, *args, **kw):
        self.c = real_cluster()
        self.dir = os.path.join(TMP, name)
        os.makedirs(self.dir, exist_ok=True)
        self.kubectl_bin = self.c.kubectl_bin
        self.tls = (self.c.ca, None)
        self.token_file = self.c.token_file
        disable = []
        a = list(args)
        while a:
            f = a.pop(0)
            if f == "--disable-group":
                disable += a.pop(0).split(",")
            elif f in ("--pod-grace", "--bookmark-interval"):
                # a terminating pod goes when KWOK (its kubelet) deletes
                # it; bookmarks come at the real server's own pace
                a.pop(0)
            else:
                raise ValueError("RealApiServer: %s is the fake's only" % f)
        self.reset(disable)

    token = property(lambda self: self.c.token)
    port = property(lambda self: self.c.port)
    url = property(lambda self: self.c.url)

    def kubectl_user_yaml(self):
        return self.c.admin_user_yaml()

    def reset(self, disable=()):
        c = self.c
        pods = "/api/v1/namespaces/default/pods"

        def no_pods():
            st, body = c.req("GET", pods)
            return st == 200 and isinstance(body, dict) and \
                not body.get("items")
        # Pods first, gracefully, while their nodes still exist: a bound
        # pod goes when KWOK (its kubelet) deletes it.  Never a force
        # delete of a pod KWOK has seen: a gracePeriodSeconds=0 delete
        # still passes through a state with a deletionTimestamp, KWOK's
        # pod-delete stage fires TERMINATING_MS later and deletes by name
        # -- by then the next part's pod of the same name (seen: the
        # "mode delete" scenario of test-realapi-config lost two of its
        # gang's pods that way).  A pod KWOK never finalizes (its node
        # gone) is forced after the wait.
        c.req("DELETE", pods + "?gracePeriodSeconds=1")
        if not wait_until(no_pods, 90):
            note("reset: KWOK left pods terminating for 90 s; forcing "
                 "their deletion (a part reusing their names may lose "
                 "pods to KWOK's late delete)")
            c.req("DELETE", pods + "?gracePeriodSeconds=0")
            if not wait_until(no_pods, 30):
                raise RuntimeError("reset: pods of the previous part "
                                   "still there after 120 s")
        self.kwok_quiet()
        for path in RESET_NAMESPACED + RESET_CLUSTER:
            if path != pods:
                c.req("DELETE", path + "?gracePeriodSeconds=0")
        pcs = c.req("GET", "/apis/scheduling.k8s.io/v1/priorityclasses")[1]
        for pc in (pcs or {}).get("items", []):
            if not pc["metadata"]["name"].startswith("system-"):
                c.req("DELETE", "/apis/scheduling.k8s.io/v1/priorityclasses/"
                      + pc["metadata"]["name"])
        c.req("DELETE", "/apis/coordination.k8s.io/v1/namespaces/"
              "kube-system/leases/topogang-bridge")
        self.groups(disable, False)
        gone = [g for g in CRD_GROUPS if g not in disable]
        self.groups(gone, True)
        self.mark = len(c.audit())

    def kwok_quiet(self, still=3.0, most=20.0):
        """Waits until KWOK has logged no pod delete for \p still seconds
        (at most \p most): KWOK can act twice on one terminating pod, the
        second delete landing seconds later, by name, on whatever pod has
        that name by then (test-realapi-config's delete-mode scenario lost
        hp-training-pod-1 so, with the graceful reset above).  Its
        pod-delete stage waits TERMINATING_MS (2 s) first."""
        log = os.path.join(self.c.dir, "kwok.log")

        def deletes():
            try:
                with open(log, "rb") as f:
                    return f.read().count(b'"Delete pod"')
            except OSError:
                return 0
        end = time.time() + most
        n, since = deletes(), time.time()
        while time.time() < end and time.time() - since < still:
            time.sleep(0.2)
            m = deletes()
            if m != n:
                n, since = m, time.time()

    def groups(self, groups, enabled):
        """Installs (\p enabled) or deletes the CRDs of \p groups."""
        names = [n for g in groups for n in CRD_GROUPS[g]]
        if not names:
            return
        have = {x["metadata"]["name"] for x in self.c.req(
            "GET", "/apis/apiextensions.k8s.io/v1/"
            "customresourcedefinitions")[1]["items"]}
        if enabled and set(names) - have:
            rc, out, err = self.c.kubectl("apply", "-f", realapi.CRDS)
            rc2, out2, err2 = self.c.kubectl(
                "wait", "--for=condition=Established", "--timeout=60s",
                "-f", realapi.CRDS)
            if rc or rc2:
                raise RuntimeError("CRDs: " + out + err + out2 + err2)
        elif not enabled and set(names) & have:
            rc, out, err = self.c.kubectl("delete", "crd", "--wait=true",
                                          *sorted(set(names) & have))
            if rc:
                raise RuntimeError("CRDs: " + out + err)

    def restart(self):
        """kube-apiserver stopped and started again on the same port (etcd
        keeps the objects; the watch cache starts empty)."""
        self.c.restart_apiserver()

    def stop(self, sig=signal.SIGTERM):
        pass    # the cluster goes when the test process does

    def conn(self, timeout=15):
        return self.c.conn(timeout)

    def req(self, method, path, body=None, ctype="application/json"):
        return self.c.req(method, path, body, ctype)

    def get(self, path):
        return self.req("GET", path)[1]

    def control(self, what, body=None, method="POST"):
        if what == "reset":
            time.sleep(0.3)
            self.mark = len(self.c.audit())
            return {}
        if what == "groups":
            self.groups([body["group"]], body.get("enabled", True))
            return {}
        if what == "compact":
            return {"revision": self.c.etcd_compact()}
        raise NotImplementedError("/_test/%s is the fake's only" % what)

    def fault(self, **spec):
        raise NotImplementedError("faults are the fake's only")

    def clear_faults(self):
        return None

    def rows(self):
        """The audited requests (the daemons', not the tests' kubectl)
        since this part began or the last control("reset")."""
        time.sleep(0.2)   # the audit line may trail the response a little
        return self.c.audit()[self.mark:]

    def stats(self):
        rows = self.rows()
        agg, by = {}, {}
        for r in rows:
            key = (r["method"], r["path"], r["status"])
            agg[key] = agg.get(key, 0) + 1
            by[str(r["status"])] = by.get(str(r["status"]), 0) + 1
        return {"total": len(rows), "by_status": by, "recent": rows,
                "requests": [{"method": m, "path": p, "status": s,
                              "count": n} for (m, p, s), n in agg.items()]}

    pods = FakeApiServer.pods
    requests = FakeApiServer.requests
    count = FakeApiServer.count

    def rotate_token(self, token=None):
        """The real way to revoke a bound token: the ServiceAccount is
        deleted and created again (new UID), then a new token is written
        to the file the daemons read."""
        sa = os.path.join(SRC, "config", "k8s", "00-serviceaccount.yaml")
        rc, out, err = self.c.kubectl("delete", "-f", sa, "--wait=true")
        rc2, out2, err2 = self.c.kubectl("apply", "-f", sa)
        if rc or rc2:
            raise RuntimeError("rotate: " + out + err + out2 + err2)
        self.c.new_token()


def ApiServer(name, *args, **kw):
    """The fake API server, or with TG_K8S_API=real the shared real one."""
    if REAL:
        return RealApiServer(name, *args, **kw)
    return FakeApiServer(name, *args, **kw)


# ---------------------------------------------------------------------------
# kubectl

class Kubectl:
    def __init__(self, srv, name="kubectl"):
        self.srv = srv
        self.cfg = os.path.join(srv.dir, name + ".kubeconfig")
        self.cache = os.path.join(srv.dir, name + "-cache")
        self.write()

    def write(self):
        ca = "    certificate-authority: %s\n" % self.srv.tls[0] \
            if self.srv.tls else ""
        user = self.srv.kubectl_user_yaml()
        with open(self.cfg, "w") as f:
            f.write("apiVersion: v1\nkind: Config\nclusters:\n"
                    "- name: fake\n  cluster:\n    server: %s\n%s"
                    "users:\n- name: tester\n  user:\n%s"
                    "contexts:\n- name: fake\n  context:\n"
                    "    cluster: fake\n    user: tester\n"
                    "    namespace: default\n"
                    "current-context: fake\n" % (self.srv.url, ca, user))

    def run(self, *args, stdin=None, timeout=60):
        self.write()
        env = dict(os.environ)
        env["KUBECONFIG"] = self.cfg
        env["HOME"] = self.srv.dir
        p = subprocess.run([self.srv.kubectl_bin, "--cache-dir",
                            self.cache] +
                           list(args), input=stdin, capture_output=True,
                           text=True, env=env, timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    def apply(self, path_or_text):
        """kubectl apply -f FILE (or YAML text through stdin)."""
        if os.path.exists(path_or_text):
            return self.run("apply", "--validate=false", "-f", path_or_text)
        return self.run("apply", "--validate=false", "-f", "-",
                        stdin=path_or_text)

    def json(self, *args):
        rc, out, err = self.run(*(list(args) + ["-o", "json"]))
        if rc != 0:
            return None
        return json.loads(out)


# ---------------------------------------------------------------------------
# the daemon

FAST_CONFIG = """\
schedulerName: %(sched)s
leaderElection:
  leaseDurationSeconds: %(lease)s
  renewDeadlineSeconds: %(renew)s
  retryPeriodSeconds: %(retry)s
queue:
  initialBackoffSeconds: 0.2
  maxBackoffSeconds: 2
  unschedulableFlushSeconds: 5
informers:
  reprobeSeconds: 1
binding:
  repairGraceSeconds: %(repair)s
preemption:
  nominationTimeoutSeconds: 60
"""


class Daemon:
    def __init__(self, srv, name="bridge", sched="topogang", args=(),
                 lease=4, renew=3, retry=0.5, repair=3, config=None,
                 start=True, labeller=False, wrap=None):
        """\p labeller: run `topogang-bridge --label-nodes` (no
        --config, no --listen; \p args carry its flags).  \p wrap: a
        function from the command line to the one run (the bridge of an
        image's root filesystem: test-bridge-image)."""
        self.wrap = wrap
        self.srv = srv
        self.labeller = labeller
        self.name = name
        self.dir = os.path.join(srv.dir, name)
        os.makedirs(self.dir, exist_ok=True)
        self.log_path = os.path.join(self.dir, "log")
        self.kubeconfig = os.path.join(self.dir, "kubeconfig")
        self.config = os.path.join(self.dir, "bridge.yaml")
        with open(self.config, "w") as f:
            f.write(config if config is not None else FAST_CONFIG % {
                "sched": sched, "lease": lease, "renew": renew,
                "retry": retry, "repair": repair})
        self.args = list(args)
        self.proc = None
        self.port = None
        self.runs = 0
        if start:
            self.start()

    def write_kubeconfig(self):
        ca = "    certificate-authority: %s\n" % self.srv.tls[0] \
            if self.srv.tls else ""
        user = "    tokenFile: %s\n" % self.srv.token_file \
            if self.srv.token else "    {}\n"
        with open(self.kubeconfig, "w") as f:
            f.write("apiVersion: v1\nkind: Config\n"
                    "current-context: e2e\nclusters:\n"
                    "- name: fake\n  cluster:\n    server: %s\n%s"
                    "users:\n- name: bridge\n  user:\n%s"
                    "contexts:\n- name: e2e\n  context: {cluster: fake, "
                    "user: bridge, namespace: kube-system}\n"
                    % (self.srv.url, ca, user))

    def start(self, extra=()):
        self.write_kubeconfig()
        self.runs += 1
        self.log = open(self.log_path, "a")
        self.log.write("# ---- run %d\n" % self.runs)
        self.log.flush()
        self.mark = os.path.getsize(self.log_path)
        env = dict(os.environ)
        env.setdefault("ASAN_OPTIONS", "detect_leaks=1")
        if self.labeller:
            cmd = [BRIDGE, "--label-nodes", "--kubeconfig", self.kubeconfig]
        else:
            cmd = [BRIDGE, "--kubeconfig", self.kubeconfig, "--config",
                   self.config, "--listen", "127.0.0.1:0"]
        cmd = cmd + self.args + list(extra)
        if self.wrap:
            cmd = self.wrap(cmd)
        self.proc = subprocess.Popen(
            cmd, stdout=self.log,
            stderr=self.log, env=env)
        _procs.append(self.proc)
        if self.labeller:
            wait_until(lambda: "starting node labeller" in self.text() or
                       self.proc.poll() is not None, 15)
            return
        m = wait_until(lambda: re.search(r"msg=starting .*listen_port=(\d+)",
                                         self.text()), 15)
        if m:
            self.port = int(m.group(1))

    def text(self):
        """The log of the current run."""
        try:
            with open(self.log_path, errors="replace") as f:
                f.seek(self.mark)
                return f.read()
        except OSError:
            return ""

    def all_text(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def lines(self, msg):
        """Parsed logfmt lines with msg=MSG of the current run."""
        out = []
        for line in self.text().splitlines():
            kv = parse_logfmt(line)
            if kv.get("msg") == msg:
                out.append(kv)
        return out

    def wait_log(self, pattern, timeout=15):
        return wait_until(lambda: re.search(pattern, self.text()), timeout)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, sig=signal.SIGTERM, timeout=15):
        """Stops the daemon; returns its exit status (None if killed)."""
        if not self.alive():
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None
        return self.proc.returncode

    def kill9(self):
        if self.alive():
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def http(self, path):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
        c.request("GET", path)
        r = c.getresponse()
        body = r.read().decode()
        c.close()
        return r.status, body

    def metric(self, name, labels=None):
        """A sample of /metrics, None when absent."""
        st, body = self.http("/metrics")
        want = name + ("{%s}" % labels if labels else "")
        for line in body.splitlines():
            if line.startswith(want + " "):
                return float(line.split()[-1])
        return None

    def sanitizer_report(self):
        t = self.all_text()
        i = t.find("Sanitizer")
        return t[max(0, i - 200):i + 3000] if i >= 0 else ""


def parse_logfmt(line):
    out = {}
    for m in re.finditer(r'(\w+)=("(?:[^"\\]|\\.)*"|\S*)', line):
        v = m.group(2)
        if v.startswith('"'):
            try:
                v = json.loads(v)
            except ValueError:
                v = v[1:-1]
        out[m.group(1)] = v
    return out


# ---------------------------------------------------------------------------
# RBAC: which rule of a (Cluster)Role allows a request

def parse_req(method, path):
    """(group, resource, subresource, namespace, name, verbs) or None."""
    p = path.strip("/").split("/")
    if p[0] == "api" and len(p) >= 2:
        group, rest = "", p[2:]
    elif p[0] == "apis" and len(p) >= 3:
        group, rest = p[1], p[3:]
    else:
        return None
    ns = None
    if len(rest) >= 2 and rest[0] == "namespaces" and len(rest) > 2:
        ns, rest = rest[1], rest[2:]
    if not rest:
        return None
    res = rest[0]
    name = rest[1] if len(rest) > 1 else None
    sub = rest[2] if len(rest) > 2 else None
    verbs = {"GET": ["get"] if name else ["list", "watch"],
             "POST": ["create"], "PUT": ["update"], "PATCH": ["patch"],
             "DELETE": ["delete"]}[method]
    if method == "POST" and sub:
        verbs = ["create"]
    return group, res, sub, ns, name, verbs


def allowed(rules, group, res, sub, name, verb):
    """The first rule that allows the request, or None."""
    full = res + ("/" + sub if sub else "")
    for r in rules:
        if group not in r["apiGroups"] or full not in r["resources"]:
            continue
        if verb not in r["verbs"]:
            continue
        if r.get("resourceNames") and name not in r["resourceNames"]:
            continue
        return r
    return None


# ---------------------------------------------------------------------------
# manifests

def seed_text(path, sched=None):
    with open(path) as f:
        t = f.read()
    if sched:
        t = t.replace("schedulerName: koord-scheduler",
                      "schedulerName: " + sched)
    return t


def gang_yaml(name, n, cpu="1", group="scheduling.sigs.k8s.io",
              extra_ann="", priority=None, spec="", sched="topogang",
              gather=None):
    """A PodGroup of \\p group and n member pods (YAML for kubectl).
    \\p gather: [(layer, "MustGather"|"PreferGather"), ...] (Koordinator's
    network-topology-spec on the PodGroup)."""
    label = {"scheduling.sigs.k8s.io": "pod-group.scheduling.sigs.k8s.io",
             "scheduling.x-k8s.io": "scheduling.x-k8s.io/pod-group"}[group]
    if gather:
        spec_json = json.dumps({"gatherStrategy": [
            {"layer": layer, "strategy": how} for layer, how in gather]})
        extra_ann += ("  annotations:\n    gang.scheduling.koordinator.sh/"
                      "network-topology-spec: '%s'\n" % spec_json)
    t = """apiVersion: %s/v1alpha1
kind: PodGroup
metadata:
  name: %s
  namespace: default
%sspec: {minMember: %d}
""" % (group, name, extra_ann, n)
    for i in range(n):
        t += """---
apiVersion: v1
kind: Pod
metadata:
  name: %s-%d
  namespace: default
  labels: {%s: %s}
spec:
  schedulerName: %s
%s%s  containers:
  - name: c
    image: busybox
    resources: {requests: {cpu: "%s", memory: 1Gi}}
""" % (name, i, label, name, sched,
       "  priorityClassName: %s\n" % priority if priority else "", spec,
       cpu)
    return t


def members(name, n):
    return ["%s-%d" % (name, i) for i in range(n)]


def pod_nodes(srv, names, ns="default"):
    pods = srv.pods(ns)
    return [pods.get(n, {}).get("spec", {}).get("nodeName") for n in names]


def all_bound(srv, names, ns="default"):
    return all(pod_nodes(srv, names, ns))


def condition(pod, ctype):
    for c in pod.get("status", {}).get("conditions", []) or []:
        if c.get("type") == ctype:
            return c
    return None


def node_load(srv, resource="cpu"):
    """Requested cpu (cores) per node over all non-terminal bound pods."""
    load = {}
    lst = srv.get("/api/v1/pods")
    for p in lst.get("items", []):
        node = p.get("spec", {}).get("nodeName")
        if not node or p.get("status", {}).get("phase") in ("Succeeded",
                                                             "Failed"):
            continue
        tot = 0.0
        for c in p["spec"].get("containers", []):
            q = str(c.get("resources", {}).get("requests", {})
                    .get(resource, "0"))
            tot += float(q[:-1]) / 1000 if q.endswith("m") else float(q)
        load[node] = load.get(node, 0) + tot
    return load


def real_node(name, labels=None, allocatable=None, images=50, beat=0):
    """A Node as a real kubelet writes it (about 20 KB with 50 images):
    status.images, five conditions with heartbeat times, nodeInfo,
    addresses, daemonEndpoints, the usual annotations.  \\p beat makes
    the heartbeat times (what a kubelet heartbeat changes)."""
    alloc = allocatable or {"cpu": "64", "memory": "512Gi", "pods": "110",
                            "nvidia.com/gpu": "8",
                            "ephemeral-storage": "1800Gi"}
    hb = "2026-01-01T%02d:%02d:%02dZ" % (beat // 3600 % 24, beat // 60 % 60,
                                         beat % 60)
    conds = []
    for t, st, why in (("MemoryPressure", "False", "KubeletHasSufficientMemory"),
                       ("DiskPressure", "False", "KubeletHasNoDiskPressure"),
                       ("PIDPressure", "False", "KubeletHasSufficientPID"),
                       ("NetworkUnavailable", "False", "RouteCreated"),
                       ("Ready", "True", "KubeletReady")):
        conds.append({"type": t, "status": st, "reason": why,
                      "message": "kubelet has %s" % why,
                      "lastHeartbeatTime": hb,
                      "lastTransitionTime": "2025-12-01T00:00:00Z"})
    imgs = []
    for i in range(images):
        repo = ("123456789012.dkr.ecr.us-east-1.amazonaws.com/platform/"
                "team-%02d/training-runtime-image-%03d" % (i % 7, i))
        digest = hashlib.sha256(("%s/%d" % (name, i)).encode()).hexdigest()
        imgs.append({"names": ["%s@sha256:%s" % (repo, digest),
                               "%s:v1.%d.%d-cuda12.4.1-cudnn9-devel-ubuntu22.04" % (
                                   repo, i % 9, i % 17)],
                     "sizeBytes": 100000000 + i * 7919})
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {
            "name": name,
            "labels": dict({"kubernetes.io/hostname": name,
                            "kubernetes.io/os": "linux",
                            "kubernetes.io/arch": "amd64",
                            "node.kubernetes.io/instance-type": "gpu-8x"},
                           **(labels or {})),
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach":
                    "true",
                "csi.volume.kubernetes.io/nodeid":
                    '{"ebs.csi.aws.com":"i-0%s"}' % name[-8:]}},
        "spec": {"podCIDR": "10.0.0.0/24", "podCIDRs": ["10.0.0.0/24"],
                 "providerID": "aws:///us-east-1a/i-0%s" % name[-8:]},
        "status": {
            "capacity": dict(alloc), "allocatable": dict(alloc),
            "conditions": conds,
            "addresses": [{"type": "InternalIP", "address": "10.1.2.3"},
                          {"type": "Hostname", "address": name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "machineID": hashlib.md5(name.encode()).hexdigest(),
                "systemUUID": "ec2b-%s" % name, "bootID": "b-%s" % name,
                "kernelVersion": "6.1.0-18-cloud-amd64",
                "osImage": "Debian GNU/Linux 12 (bookworm)",
                "containerRuntimeVersion": "containerd://1.7.13",
                "kubeletVersion": "v1.30.2", "kubeProxyVersion": "v1.30.2",
                "operatingSystem": "linux", "architecture": "amd64"},
            "images": imgs}}
