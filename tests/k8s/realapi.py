#!/usr/bin/env python3
"""tests/k8s/realapi.py - a real Kubernetes control plane for the tests, as
tests/slurm/lab.sh is a real Slurm: etcd, kube-apiserver (TLS, client
certificates, ServiceAccount tokens, authorization Node,RBAC, an audit log),
kube-controller-manager (disruption, garbage collector, namespace,
serviceaccount, serviceaccount-token, node lifecycle and PersistentVolume
binder controllers) and KWOK's controller
(fake kubelets: bound pods run, deleted pods go), all on loopback ports it
claims itself, from the binaries tests/k8s/realapi/build put in its cache.

After start: the dialect CRDs (realapi/crds.yaml) are established, the
bridge's ServiceAccount and RBAC (config/k8s/00-serviceaccount.yaml,
10-rbac.yaml) are applied and a token for it (`kubectl create token`) is
in token_file.  Every process is stopped by its PID at exit (and killed by
the kernel if this process dies: PR_SET_PDEATHSIG).

The test side (bridgetest.py with TG_K8S_API=real) uses it through
RealApiServer, which offers what the tests use of the fake's interface:
url, tls (the CA), token/token_file, req/get/pods, restart, and request
counts read from the audit log (every request but system:masters', i.e.
the daemons', with its status) in place of the fake's /_test/stats.

As a command, for a look by hand or a benchmark:

    python3 tests/k8s/realapi.py [--dir D] [--no-kwok] [--scheduler]

starts a cluster, prints the admin kubeconfig and waits for ^C.
"""

import atexit
import ctypes
import datetime
import http.client
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("TG_SRCDIR") or os.path.abspath(
    os.path.join(HERE, "..", ".."))
BUILD_SCRIPT = os.path.join(HERE, "realapi", "build")
CRDS = os.path.join(HERE, "realapi", "crds.yaml")
KWOK_STAGES = os.path.join(HERE, "realapi", "kwok.yaml")
BRIDGE_SA = "system:serviceaccount:kube-system:topogang-bridge"
START_TIMEOUT = 180       # seconds for each component to come up (loaded CI)

# kube-controller-manager's controllers the tests need, nothing else (no
# pod GC: pods bound to nodes that do not exist yet stay).  The node
# lifecycle controller is what lifts the node.kubernetes.io/not-ready
# NoSchedule taint that admission (TaintNodesByCondition) puts on every
# new Node, once KWOK reports it Ready; KWOK renews each node's Lease every
# NODE_LEASE_S / 4 and the controller's grace period is longer than that,
# so a few thousand KWOK nodes cost few writes and never go NotReady.
# The PV controller (persistentvolume-binder-controller) binds claims to
# PersistentVolumes pre-bound to them, as an external provisioner's are
# (test-realapi-volumes: WaitForFirstConsumer provisioning).
KCM_CONTROLLERS = ("disruption-controller,garbage-collector-controller,"
                   "namespace-controller,serviceaccount-controller,"
                   "serviceaccount-token-controller,"
                   "node-lifecycle-controller,"
                   "persistentvolume-binder-controller")
NODE_LEASE_S = 600

# everything from system:masters (kubectl of the tests, the controller
# manager, KWOK) is left out; the daemons' requests (and unauthenticated
# ones: a 401 has no user) are logged with their status
AUDIT_POLICY = """\
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  userGroups: ["system:masters"]
- level: None
  nonResourceURLs: ["/healthz*", "/livez*", "/readyz*", "/version"]
- level: Metadata
"""

_procs = []


def binaries():
    """(bindir, None) when the cache is complete, else (None, why)."""
    try:
        bindir = subprocess.run([BUILD_SCRIPT, "--bindir"], check=True,
                                capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as e:
        return None, "%s --bindir failed: %s" % (BUILD_SCRIPT, e)
    if os.path.exists(os.path.join(bindir, ".complete")):
        return bindir, None
    if not shutil.which("go"):
        return None, ("no Go toolchain: the real Kubernetes components "
                      "(tests/k8s/realapi/build) cannot be built here")
    return None, ("the real Kubernetes components are not built in %s: run "
                  "scripts/bootstrap or tests/k8s/realapi/build (Go and the "
                  "module proxy needed; see its output)" % bindir)


def free_port():
    """A port nothing listens on now (another run may take it before we
    do: starts that fail to bind are retried with a new one)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def _die_with_parent():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)        # PR_SET_PDEATHSIG


def spawn(cmd, log, env=None):
    f = open(log, "ab")
    p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL, env=env,
                         preexec_fn=_die_with_parent)
    f.close()
    _procs.append(p)
    return p


def stop_proc(p, sig=signal.SIGTERM, timeout=20):
    if p is None or p.poll() is not None:
        return
    p.send_signal(sig)
    try:
        p.wait(timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


@atexit.register
def _cleanup():
    for p in reversed(_procs):
        stop_proc(p, timeout=10)


def _on_signal(sig, frame):
    sys.exit(128 + sig)


for _s in (signal.SIGTERM, signal.SIGHUP):
    if signal.getsignal(_s) in (signal.SIG_DFL, None):
        signal.signal(_s, _on_signal)


def tail(path, n=3000):
    try:
        with open(path, errors="replace") as f:
            return f.read()[-n:]
    except OSError:
        return ""


def _ts(s):
    """An audit timestamp (RFC 3339, microseconds) as seconds."""
    return datetime.datetime.strptime(
        s.rstrip("Z")[:26], "%Y-%m-%dT%H:%M:%S.%f").replace(
        tzinfo=datetime.timezone.utc).timestamp()


VERB_METHOD = {"create": "POST", "update": "PUT", "patch": "PATCH",
               "delete": "DELETE", "deletecollection": "DELETE",
               "get": "GET", "list": "GET", "watch": "GET"}


class Cluster:
    """etcd + kube-apiserver + kube-controller-manager (+ KWOK) in \\p dir.
    \\p scheduler: also run kube-scheduler (default profile)."""

    def __init__(self, dir, kwok=True, scheduler=False,
                 apiserver_args=(), log=None):
        self.dir = dir
        os.makedirs(dir, exist_ok=True)
        self.bin, why = binaries()
        if not self.bin:
            raise RuntimeError(why)
        self.kubectl_bin = os.path.join(self.bin, "kubectl")
        self.log = log or (lambda msg: None)
        self.apiserver_args = list(apiserver_args)
        self.etcd = self.apiserver = self.kcm = self.kwok = None
        self.sched = None
        self.want_kwok, self.want_sched = kwok, scheduler
        self.port = None
        self.token = None
        self.token_file = os.path.join(dir, "bridge.token")
        self.audit_log = os.path.join(dir, "audit.log")
        t0 = time.time()
        self._certs()
        self._start_etcd()
        self._start_apiserver()
        self._start_kcm()
        if kwok:
            self._start_kwok()
        if scheduler:
            self._start_scheduler()
        self._setup()
        self.log("real control plane up in %.1f s (%s)" %
                 (time.time() - t0, self.url))

    # -- certificates -----------------------------------------------------

    def _openssl(self, *args):
        subprocess.run(["openssl"] + list(args), check=True,
                       capture_output=True, cwd=self.pki)

    def _signed(self, name, subj, ext):
        self._openssl("req", "-new", "-newkey", "ec", "-pkeyopt",
                      "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                      name + ".key", "-out", name + ".csr", "-subj", subj)
        with open(os.path.join(self.pki, name + ".ext"), "w") as f:
            f.write(ext)
        self._openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.crt",
                      "-CAkey", "ca.key", "-CAcreateserial", "-days", "3",
                      "-out", name + ".crt", "-extfile", name + ".ext")

    def _certs(self):
        self.pki = os.path.join(self.dir, "pki")
        os.makedirs(self.pki, exist_ok=True)
        self._openssl("req", "-x509", "-new", "-newkey", "ec", "-pkeyopt",
                      "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                      "ca.key", "-out", "ca.crt", "-days", "3", "-subj",
                      "/CN=topogang-test-ca", "-addext",
                      "basicConstraints=critical,CA:TRUE", "-addext",
                      "keyUsage=critical,keyCertSign,cRLSign")
        self._signed("apiserver", "/CN=kube-apiserver",
                     "subjectAltName=IP:127.0.0.1,DNS:localhost,"
                     "DNS:kubernetes,DNS:kubernetes.default,"
                     "DNS:kubernetes.default.svc,IP:10.0.0.1\n"
                     "extendedKeyUsage=serverAuth\n")
        self._signed("admin", "/O=system:masters/CN=kubernetes-admin",
                     "extendedKeyUsage=clientAuth\n")
        self._openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout",
                      "-out", "sa.key")
        self._openssl("ec", "-in", "sa.key", "-pubout", "-out", "sa.pub")
        self.ca = os.path.join(self.pki, "ca.crt")
        self.admin_cert = os.path.join(self.pki, "admin.crt")
        self.admin_key = os.path.join(self.pki, "admin.key")
        with open(os.path.join(self.dir, "audit-policy.yaml"), "w") as f:
            f.write(AUDIT_POLICY)

    # -- processes --------------------------------------------------------

    def _start_etcd(self):
        for attempt in range(5):
            self.etcd_port, peer = free_port(), free_port()
            url = "http://127.0.0.1:%d" % self.etcd_port
            purl = "http://127.0.0.1:%d" % peer
            data = os.path.join(self.dir, "etcd")
            shutil.rmtree(data, ignore_errors=True)
            self.etcd = spawn([
                os.path.join(self.bin, "etcd"), "--name", "tg",
                "--data-dir", data, "--listen-client-urls", url,
                "--advertise-client-urls", url, "--listen-peer-urls", purl,
                "--initial-advertise-peer-urls", purl,
                "--initial-cluster", "tg=" + purl, "--unsafe-no-fsync",
                "--log-level", "warn", "--quota-backend-bytes",
                str(4 << 30)], os.path.join(self.dir, "etcd.log"))
            if self._wait(lambda: self._etcd_ok(), self.etcd, 60):
                return
            stop_proc(self.etcd)
        raise RuntimeError("etcd did not start:\n" +
                           tail(os.path.join(self.dir, "etcd.log")))

    def etcd_call(self, path, body):
        """etcd's v3 JSON gateway (the gRPC API over HTTP/JSON)."""
        c = http.client.HTTPConnection("127.0.0.1", self.etcd_port,
                                       timeout=10)
        c.request("POST", path, json.dumps(body),
                  {"Content-Type": "application/json"})
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, json.loads(data or b"{}")

    def _etcd_ok(self):
        try:
            st, body = self.etcd_call("/v3/maintenance/status", {})
            return st == 200
        except (OSError, ValueError):
            return False

    def etcd_revision(self):
        st, body = self.etcd_call("/v3/kv/range", {"key": "AA=="})
        return int(body["header"]["revision"])

    def etcd_compact(self):
        """Compacts etcd's history up to now (physical): every older
        resourceVersion is gone from etcd.  Returns the revision."""
        rev = self.etcd_revision()
        st, body = self.etcd_call("/v3/kv/compaction",
                                  {"revision": rev, "physical": True})
        if st != 200:
            raise RuntimeError("etcd compaction: %s %s" % (st, body))
        return rev

    def _apiserver_cmd(self):
        p = self.pki
        return [
            os.path.join(self.bin, "kube-apiserver"),
            "--etcd-servers", "http://127.0.0.1:%d" % self.etcd_port,
            "--bind-address", "127.0.0.1", "--advertise-address",
            "127.0.0.1", "--secure-port", str(self.port),
            "--tls-cert-file", os.path.join(p, "apiserver.crt"),
            "--tls-private-key-file", os.path.join(p, "apiserver.key"),
            "--client-ca-file", self.ca,
            "--service-account-issuer",
            "https://kubernetes.default.svc.cluster.local",
            "--service-account-key-file", os.path.join(p, "sa.pub"),
            "--service-account-signing-key-file", os.path.join(p, "sa.key"),
            "--authorization-mode", "Node,RBAC",
            "--service-cluster-ip-range", "10.0.0.0/24",
            "--endpoint-reconciler-type", "none",
            "--audit-policy-file", os.path.join(self.dir,
                                                "audit-policy.yaml"),
            "--audit-log-path", self.audit_log, "--audit-log-maxsize", "0",
            "--feature-gates", "GenericWorkload=true",
            "--runtime-config", "scheduling.k8s.io/v1alpha3=true",
            "--profiling=false", "-v", "1"] + self.apiserver_args

    def start_apiserver(self, port=None):
        """Starts kube-apiserver (on \\p port, e.g. the same one after a
        stop: a restart) and waits for /readyz."""
        log = os.path.join(self.dir, "apiserver.log")
        for attempt in range(5):
            self.port = port or free_port()
            self.apiserver = spawn(self._apiserver_cmd(), log)
            if self._wait(lambda: self._status("/readyz") == 200,
                          self.apiserver, START_TIMEOUT):
                return
            stop_proc(self.apiserver)
            if port and "address already in use" not in tail(log, 20000):
                break
        raise RuntimeError("kube-apiserver did not start:\n" + tail(log))

    _start_apiserver = start_apiserver

    def stop_apiserver(self, sig=signal.SIGTERM):
        stop_proc(self.apiserver, sig)

    def restart_apiserver(self):
        self.stop_apiserver()
        self.start_apiserver(self.port)

    def write_kubeconfig(self, path, user_yaml, namespace="default"):
        with open(path, "w") as f:
            f.write("apiVersion: v1\nkind: Config\nclusters:\n"
                    "- name: real\n  cluster:\n    server: %s\n"
                    "    certificate-authority: %s\n"
                    "users:\n- name: u\n  user:\n%s"
                    "contexts:\n- name: real\n  context:\n"
                    "    cluster: real\n    user: u\n"
                    "    namespace: %s\ncurrent-context: real\n"
                    % (self.url, self.ca, user_yaml, namespace))
        return path

    def admin_user_yaml(self):
        return ("    client-certificate: %s\n    client-key: %s\n" %
                (self.admin_cert, self.admin_key))

    def _start_kcm(self):
        kc = self.write_kubeconfig(os.path.join(self.dir, "admin.kubeconfig"),
                                   self.admin_user_yaml())
        self.admin_kubeconfig = kc
        self.kcm = spawn([
            os.path.join(self.bin, "kube-controller-manager"),
            "--kubeconfig", kc, "--controllers", KCM_CONTROLLERS,
            "--service-account-private-key-file",
            os.path.join(self.pki, "sa.key"), "--root-ca-file", self.ca,
            "--leader-elect=false", "--secure-port", "0",
            "--node-monitor-grace-period", "%ds" % (NODE_LEASE_S * 2),
            "--node-startup-grace-period", "%ds" % (NODE_LEASE_S * 2),
            "--use-service-account-credentials=false",
            # the default 20 requests/s would lift the not-ready taint of
            # 5,000 new KWOK nodes in minutes
            "--kube-api-qps", "1000", "--kube-api-burst", "1000",
            "-v", "1"],
            os.path.join(self.dir, "kcm.log"))

    def _start_kwok(self):
        self.kwok = spawn([
            os.path.join(self.bin, "kwok"), "--config", KWOK_STAGES,
            "--kubeconfig", self.admin_kubeconfig, "--manage-all-nodes=true",
            "--server-address", "127.0.0.1:%d" % free_port(),
            "--node-lease-duration-seconds", str(NODE_LEASE_S),
            "-v", "INFO"],
            os.path.join(self.dir, "kwok.log"))

    def _start_scheduler(self):
        self.sched = spawn([
            os.path.join(self.bin, "kube-scheduler"), "--kubeconfig",
            self.admin_kubeconfig, "--leader-elect=false",
            "--secure-port", "0", "-v", "1"],
            os.path.join(self.dir, "scheduler.log"))

    def _wait(self, fn, proc, timeout):
        end = time.time() + timeout
        while time.time() < end:
            if proc.poll() is not None:
                return False
            try:
                if fn():
                    return True
            except (OSError, ValueError, http.client.HTTPException):
                pass
            time.sleep(0.2)
        return False

    # -- set-up -----------------------------------------------------------

    def _setup(self):
        # the namespace's "default" ServiceAccount (the admission plugin
        # wants it for every pod) proves the controller manager runs
        if not self._wait(lambda: self._status(
                "/api/v1/namespaces/default/serviceaccounts/default") == 200,
                self.kcm, START_TIMEOUT):
            raise RuntimeError("kube-controller-manager: no default "
                               "ServiceAccount:\n" +
                               tail(os.path.join(self.dir, "kcm.log")))
        rc, out, err = self.kubectl("apply", "-f", CRDS)
        if rc != 0:
            raise RuntimeError("CRDs: " + out + err)
        rc, out, err = self.kubectl("wait", "--for=condition=Established",
                                    "--timeout=120s", "-f", CRDS)
        if rc != 0:
            raise RuntimeError("CRDs not established: " + out + err)
        for m in ("00-serviceaccount.yaml", "10-rbac.yaml",
                  # the tests run preemption.mode: delete too
                  "optional/rbac-preemption-delete.yaml"):
            rc, out, err = self.kubectl(
                "apply", "-f", os.path.join(SRC, "config", "k8s", m))
            if rc != 0:
                raise RuntimeError("%s: %s" % (m, out + err))
        self.new_token()

    def new_token(self):
        """A fresh bound token of the bridge's ServiceAccount, written to
        token_file (the daemons read it from there)."""
        rc, out, err = self.kubectl("create", "token", "topogang-bridge",
                                    "-n", "kube-system", "--duration",
                                    "24h")
        if rc != 0:
            raise RuntimeError("kubectl create token: " + err)
        self.token = out.strip()
        tmp = self.token_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(self.token + "\n")
        os.replace(tmp, self.token_file)
        return self.token

    # -- requests ---------------------------------------------------------

    @property
    def url(self):
        return "https://127.0.0.1:%d" % self.port

    def conn(self, timeout=30):
        ctx = ssl.create_default_context(cafile=self.ca)
        ctx.load_cert_chain(self.admin_cert, self.admin_key)
        return http.client.HTTPSConnection("127.0.0.1", self.port,
                                           timeout=timeout, context=ctx)

    def req(self, method, path, body=None, ctype="application/json",
            token=None, timeout=30):
        """One request as the admin (or with a bearer \\p token):
        (status, parsed body)."""
        if token:
            ctx = ssl.create_default_context(cafile=self.ca)
            c = http.client.HTTPSConnection("127.0.0.1", self.port,
                                            timeout=timeout, context=ctx)
        else:
            c = self.conn(timeout)
        h = {"Authorization": "Bearer " + token} if token else {}
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

    def version(self):
        return (self.req("GET", "/version")[1] or {}).get("gitVersion")

    def _status(self, path):
        return self.req("GET", path)[0]

    def kubectl(self, *args, stdin=None, timeout=120, kubeconfig=None):
        env = dict(os.environ)
        env["KUBECONFIG"] = kubeconfig or self.admin_kubeconfig
        env["HOME"] = self.dir
        p = subprocess.run([self.kubectl_bin, "--cache-dir",
                            os.path.join(self.dir, "kcache")] + list(args),
                           input=stdin, capture_output=True, text=True,
                           env=env, timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    # -- the audit log ----------------------------------------------------

    def audit(self):
        """Every audited request so far, one dict per request (method,
        path, query, status, time, user, verb), in the order received."""
        if not hasattr(self, "_audit"):
            self._audit, self._audit_off, self._audit_ids = [], 0, {}
        try:
            f = open(self.audit_log, "rb")
        except OSError:
            return self._audit
        with f:
            f.seek(self._audit_off)
            data = f.read()
        end = data.rfind(b"\n") + 1
        self._audit_off += end
        for line in data[:end].splitlines():
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            uri = ev.get("requestURI", "")
            path, _, query = uri.partition("?")
            code = (ev.get("responseStatus") or {}).get("code")
            row = self._audit_ids.get(ev.get("auditID"))
            if row is None:
                row = {"method": VERB_METHOD.get(ev.get("verb"), "GET"),
                       "path": path, "query": query, "status": code,
                       "verb": ev.get("verb"),
                       "user": (ev.get("user") or {}).get("username"),
                       "time": _ts(ev.get("requestReceivedTimestamp") or
                                   ev.get("stageTimestamp"))}
                self._audit_ids[ev.get("auditID")] = row
                self._audit.append(row)
            elif code:
                row["status"] = code
        return self._audit

    def stop(self):
        for p in (self.sched, self.kwok, self.kcm, self.apiserver,
                  self.etcd):
            stop_proc(p)


def main():
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir")
    ap.add_argument("--no-kwok", action="store_true")
    ap.add_argument("--scheduler", action="store_true",
                    help="also run kube-scheduler (default profile)")
    a = ap.parse_args()
    d = a.dir or tempfile.mkdtemp(prefix="tg-realapi-")
    c = Cluster(d, kwok=not a.no_kwok, scheduler=a.scheduler,
                log=lambda m: print(m, flush=True))
    print("export KUBECONFIG=%s\n# bridge token: %s\n# kubectl: %s" %
          (c.admin_kubeconfig, c.token_file, c.kubectl_bin), flush=True)
    signal.signal(signal.SIGINT, _on_signal)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
