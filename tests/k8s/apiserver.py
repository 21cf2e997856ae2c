#!/usr/bin/env python3
"""tests/k8s/apiserver.py - a faithful fake Kubernetes API server for tests.

Python 3 standard library only.  Plain HTTP on 127.0.0.1, HTTP/1.1 keep-alive,
one thread per connection.  It implements the subset of kube-apiserver that
the topogang bridge daemon and kubectl (v1.32) use; see tests/k8s/README.md
and ../shared/research/k8s-api.md (sections 1 and 3) for the semantics.

    python3 tests/k8s/apiserver.py --port 0 --port-file FILE
        [--token TOKEN | --token-file FILE] [--history N] [--log FILE]
        [--disable-group GROUP[/VERSION]] [--pod-grace SECONDS] ...

Test control API (no auth): /_test/faults, /_test/reset, /_test/restart-watch,
/_test/stats and a few more, documented in tests/k8s/README.md.
"""

import argparse
import base64
import collections
import datetime
import json
import math
import os
import random
import re
import select
import signal
import socket
import ssl
import sys
import threading
import time
import traceback
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

VERSION_INFO = {
    "major": "1", "minor": "32", "gitVersion": "v1.32.0-topogang-fake",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean", "buildDate": "2025-01-01T00:00:00Z",
    "goVersion": "go1.23.4", "compiler": "gc", "platform": "linux/amd64",
}

# ---------------------------------------------------------------------------
# small helpers


_TS = [0, ""]


def now_ts():
    now = int(time.time())
    if _TS[0] != now:
        _TS[1] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
        _TS[0] = now
    return _TS[1]


def ts_after(seconds):
    t = datetime.datetime.now(datetime.timezone.utc) + \
        datetime.timedelta(seconds=seconds)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def jcopy(o):
    """Deep copy of a JSON value (much faster than copy.deepcopy)."""
    t = type(o)
    if t is dict:
        return {k: jcopy(v) for k, v in o.items()}
    if t is list:
        return [jcopy(v) for v in o]
    return o


def jdumps(o):
    return json.dumps(o, separators=(",", ":"), ensure_ascii=False).encode()


def qbool(v):
    return v is not None and v.lower() in ("1", "true", "yes")


REASONS = {
    400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound",
    405: "MethodNotAllowed", 406: "NotAcceptable", 409: "Conflict",
    410: "Expired", 413: "RequestEntityTooLarge", 415: "UnsupportedMediaType",
    422: "Invalid", 429: "TooManyRequests", 500: "InternalError",
    503: "ServiceUnavailable", 504: "Timeout",
}
PHRASES = {
    200: "OK", 201: "Created", 202: "Accepted", 400: "Bad Request",
    401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
    405: "Method Not Allowed", 406: "Not Acceptable", 409: "Conflict",
    410: "Gone", 413: "Request Entity Too Large",
    415: "Unsupported Media Type", 422: "Unprocessable Entity",
    429: "Too Many Requests", 500: "Internal Server Error",
    503: "Service Unavailable", 504: "Gateway Timeout",
}


def status_obj(code, reason, message, details=None):
    s = {"kind": "Status", "apiVersion": "v1", "metadata": {},
         "status": "Failure", "message": message, "reason": reason}
    if details is not None:
        s["details"] = details
    s["code"] = code
    return s


def too_large_details():
    return {"causes": [{"reason": "ResourceVersionTooLarge",
                        "message": "Too large resource version"}],
            "retryAfterSeconds": 1}


def success_status(code=201):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Success", "code": code}


class ApiError(Exception):
    def __init__(self, code, reason, message, details=None, headers=None,
                 metadata=None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.headers = headers or {}
        self.metadata = metadata

    def body(self):
        s = status_obj(self.code, self.reason, self.message, self.details)
        if self.metadata:
            s["metadata"] = self.metadata
        return s


def bad_request(msg):
    return ApiError(400, "BadRequest", msg)


def path_not_found():
    return ApiError(404, "NotFound",
                    "the server could not find the requested resource", {})


# ---------------------------------------------------------------------------
# resource catalog

CRUD = ["create", "delete", "deletecollection", "get", "list", "patch",
        "update", "watch"]

POD_FIELDS = {"metadata.name", "metadata.namespace", "spec.nodeName",
              "spec.restartPolicy", "spec.schedulerName",
              "spec.serviceAccountName", "spec.hostNetwork", "status.phase",
              "status.podIP", "status.podIPs", "status.nominatedNodeName"}
NODE_FIELDS = {"metadata.name", "spec.unschedulable"}
EVENT_FIELDS = {"metadata.name", "metadata.namespace", "involvedObject.kind",
                "involvedObject.namespace", "involvedObject.name",
                "involvedObject.uid", "involvedObject.apiVersion",
                "involvedObject.resourceVersion", "involvedObject.fieldPath",
                "reason", "reportingComponent", "source", "type"}
NS_FIELDS = {"metadata.name", "status.phase"}
DEFAULT_FIELDS = {"metadata.name", "metadata.namespace"}


class Res:
    def __init__(self, group, version, plural, kind, namespaced, short=(),
                 subs=("status",), builtin=True, cats=(), verbs=None,
                 skey=None, uncond=True, create_on_update=False,
                 fields=None, singular=None, status_on_create=False):
        self.group = group
        self.version = version
        self.plural = plural
        self.kind = kind
        self.namespaced = namespaced
        self.short = list(short)
        self.subs = tuple(subs)
        self.builtin = builtin
        self.cats = list(cats)
        self.verbs = verbs or CRUD
        self.skey = skey or (group, plural)
        self.uncond = uncond
        self.create_on_update = create_on_update
        self.fields = fields or DEFAULT_FIELDS
        self.singular = singular or kind.lower()
        self.status_on_create = status_on_create
        self.gv = version if group == "" else group + "/" + version
        self.qualified = plural if group == "" else plural + "." + group
        self.has_status = "status" in self.subs

    def __repr__(self):
        return "<Res %s/%s>" % (self.gv, self.plural)


def _catalog():
    R = Res
    crd = dict(builtin=False, uncond=False)
    return [
        # core/v1
        R("", "v1", "namespaces", "Namespace", False, ("ns",),
          subs=("status", "finalize"), fields=NS_FIELDS),
        R("", "v1", "nodes", "Node", False, ("no",), fields=NODE_FIELDS,
          status_on_create=True),
        R("", "v1", "pods", "Pod", True, ("po",),
          subs=("status", "binding", "eviction"), cats=("all",),
          fields=POD_FIELDS),
        R("", "v1", "bindings", "Binding", True, subs=(), verbs=["create"]),
        R("", "v1", "events", "Event", True, ("ev",), subs=(),
          fields=EVENT_FIELDS, create_on_update=True),
        R("", "v1", "configmaps", "ConfigMap", True, ("cm",), subs=()),
        R("", "v1", "secrets", "Secret", True, subs=()),
        R("", "v1", "serviceaccounts", "ServiceAccount", True, ("sa",),
          subs=()),
        R("", "v1", "services", "Service", True, ("svc",), cats=("all",)),
        R("", "v1", "endpoints", "Endpoints", True, ("ep",), subs=()),
        R("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True,
          ("pvc",)),
        R("", "v1", "persistentvolumes", "PersistentVolume", False, ("pv",)),
        R("", "v1", "resourcequotas", "ResourceQuota", True, ("quota",)),
        R("", "v1", "limitranges", "LimitRange", True, ("limits",), subs=()),
        # built-in groups
        R("apps", "v1", "deployments", "Deployment", True, ("deploy",),
          subs=("status", "scale"), cats=("all",)),
        R("apps", "v1", "replicasets", "ReplicaSet", True, ("rs",),
          subs=("status", "scale"), cats=("all",)),
        R("apps", "v1", "statefulsets", "StatefulSet", True, ("sts",),
          subs=("status", "scale"), cats=("all",)),
        R("apps", "v1", "daemonsets", "DaemonSet", True, ("ds",),
          cats=("all",)),
        R("batch", "v1", "jobs", "Job", True, cats=("all",)),
        R("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget",
          True, ("pdb",)),
        # older kubectl (Debian's kubernetes-client 1.20) still uses v1beta1
        R("policy", "v1beta1", "poddisruptionbudgets", "PodDisruptionBudget",
          True, ("pdb",), skey=("policy", "poddisruptionbudgets")),
        R("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass",
          False, ("pc",), subs=()),
        # unbound claims' classes (the bridge's WaitForFirstConsumer path)
        R("storage.k8s.io", "v1", "storageclasses", "StorageClass", False,
          ("sc",), subs=()),
        # the upstream gang API: v1alpha3 in Kubernetes 1.37, v1alpha2 in
        # 1.36 only (same fields); one storage, either version reads it
        R("scheduling.k8s.io", "v1alpha3", "podgroups", "PodGroup", True),
        R("scheduling.k8s.io", "v1alpha3", "workloads", "Workload", True),
        R("scheduling.k8s.io", "v1alpha2", "podgroups", "PodGroup", True,
          skey=("scheduling.k8s.io", "podgroups")),
        R("scheduling.k8s.io", "v1alpha2", "workloads", "Workload", True,
          skey=("scheduling.k8s.io", "workloads")),
        R("coordination.k8s.io", "v1", "leases", "Lease", True, subs=(),
          uncond=False, create_on_update=True),
        R("events.k8s.io", "v1", "events", "Event", True, ("ev",), subs=(),
          skey=("", "events"), fields=EVENT_FIELDS, create_on_update=True),
        R("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole",
          False, subs=()),
        R("rbac.authorization.k8s.io", "v1", "clusterrolebindings",
          "ClusterRoleBinding", False, subs=()),
        R("rbac.authorization.k8s.io", "v1", "roles", "Role", True, subs=()),
        R("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding",
          True, subs=()),
        R("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy",
          True, ("netpol",), subs=()),
        R("apiextensions.k8s.io", "v1", "customresourcedefinitions",
          "CustomResourceDefinition", False, ("crd", "crds"),
          singular="customresourcedefinition"),
        # dialect CRDs (custom resources: no strategic merge patch)
        R("scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup", True,
          ("pg", "pgs"), **crd),
        R("scheduling.x-k8s.io", "v1alpha1", "elasticquotas", "ElasticQuota",
          True, ("eq", "eqs"), **crd),
        R("scheduling.sigs.k8s.io", "v1alpha1", "podgroups", "PodGroup", True,
          ("pg", "pgs"), **crd),
        R("scheduling.koordinator.sh", "v1alpha1", "clusternetworktopologies",
          "ClusterNetworkTopology", False, ("cnt",), **crd),
        R("scheduling.run.ai", "v2alpha2", "podgroups", "PodGroup", True,
          ("pg", "pgs"), **crd),
        R("scheduling.run.ai", "v2", "queues", "Queue", False, ("q",), **crd),
        R("kai.scheduler", "v1alpha1", "topologies", "Topology", False, (),
          **crd),
        R("kueue.x-k8s.io", "v1beta2", "topologies", "Topology", False,
          ("topo",), **crd),
        R("kueue.x-k8s.io", "v1beta2", "resourceflavors", "ResourceFlavor",
          False, ("flavor", "flavors", "rf"), subs=(), **crd),
        R("kueue.x-k8s.io", "v1beta2", "workloads", "Workload", True,
          ("wl",), **crd),
        R("kueue.x-k8s.io", "v1beta2", "clusterqueues", "ClusterQueue",
          False, ("cq",), **crd),
        R("kueue.x-k8s.io", "v1beta2", "localqueues", "LocalQueue", True,
          ("lq", "queue", "queues"), **crd),
        R("kueue.x-k8s.io", "v1beta1", "topologies", "Topology", False,
          ("topo",), **crd),
        R("kueue.x-k8s.io", "v1beta1", "resourceflavors", "ResourceFlavor",
          False, ("flavor", "flavors", "rf"), subs=(), **crd),
        R("kueue.x-k8s.io", "v1beta1", "workloads", "Workload", True,
          ("wl",), **crd),
        R("kueue.x-k8s.io", "v1beta1", "clusterqueues", "ClusterQueue",
          False, ("cq",), **crd),
        R("kueue.x-k8s.io", "v1beta1", "localqueues", "LocalQueue", True,
          ("lq", "queue", "queues"), **crd),
        R("leaderworkerset.x-k8s.io", "v1", "leaderworkersets",
          "LeaderWorkerSet", True, ("lws",), subs=("status", "scale"), **crd),
        R("topology.volcano.sh", "v1alpha1", "hypernodes", "HyperNode", False,
          ("hn",), **crd),
        R("scheduling.volcano.sh", "v1beta1", "podgroups", "PodGroup", True,
          ("pg", "podgroup-v1beta1"), **crd),
        R("batch.volcano.sh", "v1alpha1", "jobs", "Job", True,
          ("vcjob", "vj"), **crd),
    ]


class Registry:
    def __init__(self, disabled):
        self.all = _catalog()
        self.by_gvr = {(r.group, r.version, r.plural): r for r in self.all}
        self.disabled = set(disabled)
        self.groups = []            # ordered group names
        self.versions = {}          # group -> [versions] (first = preferred)
        for r in self.all:
            if r.group not in self.versions:
                self.groups.append(r.group)
                self.versions[r.group] = []
            if r.version not in self.versions[r.group]:
                self.versions[r.group].append(r.version)

    def enabled(self, group, version=None):
        if group in self.disabled:
            return False
        if version is not None and group + "/" + version in self.disabled:
            return False
        return True

    def lookup(self, group, version, plural):
        r = self.by_gvr.get((group, version, plural))
        if r is None or not self.enabled(group, version):
            return None
        return r

    def for_kind(self, api_version, kind):
        if "/" in api_version:
            g, v = api_version.split("/", 1)
        else:
            g, v = "", api_version
        for r in self.all:
            if r.group == g and r.version == v and r.kind == kind:
                return r
        return None

    def gv_resources(self, group, version):
        return [r for r in self.all
                if r.group == group and r.version == version]

    def served_versions(self, group):
        return [v for v in self.versions.get(group, [])
                if self.enabled(group, v)]


# ---------------------------------------------------------------------------
# selectors

_LKEY = r"[A-Za-z0-9][-A-Za-z0-9_./]*"
_LVAL = r"[-A-Za-z0-9_.]*"
_RE_NOT = re.compile(r"^!\s*(%s)$" % _LKEY)
_RE_SET = re.compile(r"^(%s)\s+(in|notin)\s*\((.*)\)$" % _LKEY)
_RE_EQ = re.compile(r"^(%s)\s*(==|=|!=)\s*(%s)$" % (_LKEY, _LVAL))
_RE_CMP = re.compile(r"^(%s)\s*(<|>)\s*(-?\d+)$" % _LKEY)
_RE_EXISTS = re.compile(r"^(%s)$" % _LKEY)


def _split_top(s):
    out, depth, cur = [], 0, []
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return out


def parse_label_selector(s):
    reqs = []
    if s is None or s.strip() == "":
        return reqs
    for term in _split_top(s):
        t = term.strip()
        if not t:
            raise bad_request("unable to parse requirement: found '', "
                              "expected: identifier")
        m = _RE_NOT.match(t)
        if m:
            reqs.append((m.group(1), "!", None))
            continue
        m = _RE_SET.match(t)
        if m:
            vals = set(v.strip() for v in m.group(3).split(","))
            reqs.append((m.group(1), m.group(2), vals))
            continue
        m = _RE_EQ.match(t)
        if m:
            op = "!=" if m.group(2) == "!=" else "="
            reqs.append((m.group(1), op, m.group(3)))
            continue
        m = _RE_CMP.match(t)
        if m:
            reqs.append((m.group(1), m.group(2), int(m.group(3))))
            continue
        m = _RE_EXISTS.match(t)
        if m:
            reqs.append((m.group(1), "exists", None))
            continue
        raise bad_request("unable to parse requirement: invalid label "
                          "selector term %r" % t)
    return reqs


def labels_match(reqs, labels):
    labels = labels or {}
    for key, op, val in reqs:
        has = key in labels
        v = labels.get(key)
        if op == "=":
            if not has or v != val:
                return False
        elif op == "!=":
            if has and v == val:
                return False
        elif op == "in":
            if not has or v not in val:
                return False
        elif op == "notin":
            if has and v in val:
                return False
        elif op == "exists":
            if not has:
                return False
        elif op == "!":
            if has:
                return False
        elif op in ("<", ">"):
            if not has:
                return False
            try:
                n = int(v)
            except ValueError:
                return False
            if op == "<" and not n < val:
                return False
            if op == ">" and not n > val:
                return False
    return True


def selector_obj_match(sel, labels):
    """metav1.LabelSelector (matchLabels + matchExpressions)."""
    if sel is None:
        return False
    labels = labels or {}
    for k, v in (sel.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in sel.get("matchExpressions") or []:
        k, op, vals = e.get("key"), e.get("operator"), e.get("values") or []
        if op == "In" and labels.get(k) not in vals:
            return False
        if op == "NotIn" and k in labels and labels[k] in vals:
            return False
        if op == "Exists" and k not in labels:
            return False
        if op == "DoesNotExist" and k in labels:
            return False
    return True


def _unescape_field(v):
    return v.replace("\\,", ",").replace("\\=", "=").replace("\\\\", "\\")


def parse_field_selector(s, res):
    reqs = []
    if s is None or s.strip() == "":
        return reqs
    for term in re.split(r"(?<!\\),", s):
        t = term.strip()
        if not t:
            continue
        m = re.match(r"^([^=!]+?)\s*(==|=|!=)\s*(.*)$", t)
        if not m:
            raise bad_request("invalid selector: '%s'; can't understand '%s'"
                              % (s, t))
        field = m.group(1).strip()
        if res.group == "events.k8s.io":
            field = {"regarding.kind": "involvedObject.kind",
                     "regarding.namespace": "involvedObject.namespace",
                     "regarding.name": "involvedObject.name",
                     "regarding.uid": "involvedObject.uid",
                     "reportingController": "reportingComponent",
                     }.get(field, field)
        if field not in res.fields:
            raise bad_request('field label not supported: %s' % field)
        op = "!=" if m.group(2) == "!=" else "="
        reqs.append((field, op, _unescape_field(m.group(3))))
    return reqs


def field_value(obj, field):
    if field == "source":
        return (obj.get("source") or {}).get("component", "")
    if field == "spec.hostNetwork" or field == "spec.unschedulable":
        v = (obj.get("spec") or {}).get(field.split(".")[1])
        return "true" if v else "false"
    if field == "status.podIPs":
        ips = (obj.get("status") or {}).get("podIPs") or []
        return ips[0].get("ip", "") if ips else ""
    cur = obj
    for p in field.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(p)
    if cur is None:
        return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)


def fields_match(reqs, obj):
    for field, op, val in reqs:
        v = field_value(obj, field)
        if op == "=" and v != val:
            return False
        if op == "!=" and v == val:
            return False
    return True


# ---------------------------------------------------------------------------
# patches


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return jcopy(patch)
    if not isinstance(target, dict):
        target = {}
    else:
        target = dict(target)
    for k, v in patch.items():
        if v is None:
            target.pop(k, None)
        else:
            target[k] = merge_patch(target.get(k), v)
    return target


def _ptr(path):
    if path == "":
        return []
    if not path.startswith("/"):
        raise ApiError(422, "Invalid", "invalid JSON pointer %r" % path)
    return [p.replace("~1", "/").replace("~0", "~")
            for p in path[1:].split("/")]


def _ptr_parent(doc, parts):
    cur = doc
    for p in parts[:-1]:
        if isinstance(cur, list):
            try:
                cur = cur[int(p)]
            except (ValueError, IndexError):
                raise ApiError(422, "Invalid",
                               "jsonpatch: path segment %r not found" % p)
        elif isinstance(cur, dict):
            if p not in cur:
                raise ApiError(422, "Invalid",
                               "jsonpatch: path segment %r not found" % p)
            cur = cur[p]
        else:
            raise ApiError(422, "Invalid", "jsonpatch: bad path")
    return cur


def _ptr_get(doc, parts):
    if not parts:
        return doc
    parent = _ptr_parent(doc, parts)
    k = parts[-1]
    try:
        if isinstance(parent, list):
            return parent[int(k)]
        return parent[k]
    except (KeyError, ValueError, IndexError, TypeError):
        raise ApiError(422, "Invalid", "jsonpatch: path %r not found"
                       % "/".join(parts))


def _ptr_remove(doc, parts):
    parent = _ptr_parent(doc, parts)
    k = parts[-1]
    try:
        if isinstance(parent, list):
            return parent.pop(int(k))
        return parent.pop(k)
    except (KeyError, ValueError, IndexError, TypeError):
        raise ApiError(422, "Invalid",
                       "jsonpatch remove operation does not apply: doc is "
                       "missing path: /%s" % "/".join(parts))


def _ptr_add(doc, parts, value, replace=False):
    if not parts:
        return value
    parent = _ptr_parent(doc, parts)
    k = parts[-1]
    if isinstance(parent, list):
        if k == "-":
            parent.append(value)
            return doc
        try:
            i = int(k)
        except ValueError:
            raise ApiError(422, "Invalid", "jsonpatch: bad index %r" % k)
        if replace:
            if i >= len(parent):
                raise ApiError(422, "Invalid", "jsonpatch: index out of range")
            parent[i] = value
        else:
            if i > len(parent):
                raise ApiError(422, "Invalid", "jsonpatch: index out of range")
            parent.insert(i, value)
    elif isinstance(parent, dict):
        if replace and k not in parent:
            raise ApiError(422, "Invalid",
                           "jsonpatch replace operation does not apply: doc "
                           "is missing key: /%s" % "/".join(parts))
        parent[k] = value
    else:
        raise ApiError(422, "Invalid", "jsonpatch: bad path")
    return doc


def json_patch(doc, ops):
    if not isinstance(ops, list):
        raise bad_request("json patch must be a JSON array of operations")
    for op in ops:
        if not isinstance(op, dict) or "op" not in op:
            raise bad_request("invalid json patch operation")
        kind = op["op"]
        parts = _ptr(op.get("path", ""))
        if kind == "add":
            doc = _ptr_add(doc, parts, jcopy(op.get("value")))
        elif kind == "remove":
            _ptr_remove(doc, parts)
        elif kind == "replace":
            doc = _ptr_add(doc, parts, jcopy(op.get("value")), replace=True)
        elif kind == "move":
            v = _ptr_remove(doc, _ptr(op.get("from", "")))
            doc = _ptr_add(doc, parts, v)
        elif kind == "copy":
            v = jcopy(_ptr_get(doc, _ptr(op.get("from", ""))))
            doc = _ptr_add(doc, parts, v)
        elif kind == "test":
            if _ptr_get(doc, parts) != op.get("value"):
                raise ApiError(422, "Invalid",
                               "testing value %s failed" % op.get("path"))
        else:
            raise bad_request("unknown json patch operation %r" % kind)
    return doc


# strategic merge patch: patchMergeKey per field name, as in k8s.io/api tags
SMP_KEYS = {
    "conditions": "type", "containers": "name", "initContainers": "name",
    "ephemeralContainers": "name", "env": "name", "volumes": "name",
    "volumeMounts": "mountPath", "volumeDevices": "devicePath",
    "imagePullSecrets": "name", "addresses": "type",
    "ownerReferences": "uid", "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey", "schedulingGates": "name",
    "resourceClaims": "name", "podIPs": "ip", "hostIPs": "ip",
    "resizePolicy": "resourceName", "volumesAttached": "name",
}
SMP_PRIMITIVE_MERGE = {"finalizers"}
_DELETE = object()


def _strip_directives(v):
    if isinstance(v, dict):
        return {k: _strip_directives(x) for k, x in v.items()
                if not k.startswith("$")}
    if isinstance(v, list):
        return [_strip_directives(x) for x in v]
    return v


def _smp_key(field, orig, patch):
    if field == "ports":
        for x in list(patch) + list(orig):
            if isinstance(x, dict):
                return "containerPort" if "containerPort" in x else "port"
        return None
    return SMP_KEYS.get(field)


def strategic_merge(orig, patch):
    if not isinstance(patch, dict):
        return jcopy(patch)
    directive = patch.get("$patch")
    if directive == "replace":
        return _strip_directives(patch)
    if directive == "delete":
        return _DELETE
    result = dict(orig) if isinstance(orig, dict) else {}
    deletes = []
    for k, v in patch.items():
        if k.startswith("$setElementOrder/") or k in ("$patch",
                                                      "$retainKeys"):
            continue
        if k.startswith("$deleteFromPrimitiveList/"):
            deletes.append((k.split("/", 1)[1], v))
            continue
        if v is None:
            result.pop(k, None)
            continue
        ov = result.get(k)
        if isinstance(v, dict):
            r = strategic_merge(ov if isinstance(ov, dict) else None, v)
            if r is _DELETE:
                result.pop(k, None)
            else:
                result[k] = r
        elif isinstance(v, list):
            result[k] = _smp_list(k, ov if isinstance(ov, list) else [], v)
        else:
            result[k] = v
    for f, vals in deletes:
        if isinstance(result.get(f), list) and isinstance(vals, list):
            result[f] = [x for x in result[f] if x not in vals]
    retain = patch.get("$retainKeys")
    if isinstance(retain, list):
        result = {k: v for k, v in result.items() if k in retain}
    return result


def _smp_list(field, orig, patch):
    if field in SMP_PRIMITIVE_MERGE:
        out = list(orig)
        for x in patch:
            if x not in out:
                out.append(x)
        return out
    key = _smp_key(field, orig, patch)
    if key is None:
        return [_strip_directives(x) for x in patch
                if not (isinstance(x, dict) and "$patch" in x)]
    for x in patch:
        if isinstance(x, dict) and x.get("$patch") == "replace":
            return [_strip_directives(y) for y in patch
                    if not (isinstance(y, dict) and "$patch" in y)]
    result = list(orig)
    for item in patch:
        if not isinstance(item, dict):
            continue
        kv = item.get(key)
        idx = None
        for i, x in enumerate(result):
            if isinstance(x, dict) and x.get(key) == kv:
                idx = i
                break
        if item.get("$patch") == "delete":
            if idx is not None:
                del result[idx]
            continue
        if idx is None:
            result.append(_strip_directives(item))
        else:
            result[idx] = strategic_merge(result[idx], item)
    return result


# ---------------------------------------------------------------------------
# protobuf request bodies: kubectl's typed clients (kubectl create namespace,
# configmap, secret, serviceaccount, priorityclass, pdb, clusterrole, ...)
# send application/vnd.kubernetes.protobuf.  Field numbers follow k8s.io/api
# generated.proto; only the kinds below are decoded, others answer 415.


def _pb_varint(b, i):
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7F) << s
        s += 7
        if not c & 0x80:
            return r, i


def _pb_fields(b):
    i = 0
    while i < len(b):
        key, i = _pb_varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _pb_varint(b, i)
            if v >= 1 << 63:
                v -= 1 << 64
        elif wt == 2:
            n, i = _pb_varint(b, i)
            v = b[i:i + n]
            i += n
        elif wt == 1:
            v = int.from_bytes(b[i:i + 8], "little")
            i += 8
        elif wt == 5:
            v = int.from_bytes(b[i:i + 4], "little")
            i += 4
        else:
            raise ValueError("unsupported protobuf wire type %d" % wt)
        yield f, v


def _pb_value(t, v):
    if t == "s":
        return v.decode("utf-8")
    if t == "b":
        return base64.b64encode(v).decode()
    if t in ("i", "i!"):
        return v
    if t == "bool":
        return bool(v)
    if t == "time":
        secs = dict(_pb_fields(v)).get(1, 0)
        if not secs:
            return None
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(secs))
    if t == "ios":
        d = dict(_pb_fields(v))
        if d.get(1, 0) == 1:
            return d.get(3, b"").decode()
        return d.get(2, 0)
    if isinstance(t, tuple) and t[0] == "map":
        d = dict(_pb_fields(v))
        return (d.get(1, b"").decode(), _pb_value(t[1], d.get(2, b"")))
    return pb_decode(v, t)


def _pb_empty(v):
    return v is None or v == "" or v == 0 or v is False or v == {} or \
        v == []


def pb_decode(b, schema):
    out = {}
    for f, v in _pb_fields(b):
        spec = schema.get(f)
        if spec is None:
            continue
        name, t = spec[0], spec[1]
        rep = len(spec) > 2 and spec[2] == "rep"
        val = _pb_value(t, v)
        if isinstance(t, tuple) and t[0] == "map":
            out.setdefault(name, {})[val[0]] = val[1]
        elif rep:
            out.setdefault(name, []).append(val)
        elif not _pb_empty(val) or t in ("i!", "ios"):
            out[name] = val
    return out


PB_OWNER = {5: ("apiVersion", "s"), 1: ("kind", "s"), 3: ("name", "s"),
            4: ("uid", "s"), 6: ("controller", "bool"),
            7: ("blockOwnerDeletion", "bool")}
PB_META = {1: ("name", "s"), 2: ("generateName", "s"),
           3: ("namespace", "s"), 5: ("uid", "s"),
           6: ("resourceVersion", "s"), 7: ("generation", "i"),
           8: ("creationTimestamp", "time"),
           9: ("deletionTimestamp", "time"),
           10: ("deletionGracePeriodSeconds", "i"),
           11: ("labels", ("map", "s")), 12: ("annotations", ("map", "s")),
           13: ("ownerReferences", PB_OWNER, "rep"),
           14: ("finalizers", "s", "rep")}
PB_SELECTOR = {1: ("matchLabels", ("map", "s")),
               2: ("matchExpressions", {1: ("key", "s"),
                                        2: ("operator", "s"),
                                        3: ("values", "s", "rep")}, "rep")}
PB_OBJREF = {1: ("kind", "s"), 2: ("namespace", "s"), 3: ("name", "s"),
             4: ("uid", "s"), 5: ("apiVersion", "s"),
             6: ("resourceVersion", "s"), 7: ("fieldPath", "s")}
PB_DELETE_OPTIONS = {1: ("gracePeriodSeconds", "i!"),
                     2: ("preconditions", {1: ("uid", "s"),
                                           2: ("resourceVersion", "s")}),
                     3: ("orphanDependents", "bool"),
                     4: ("propagationPolicy", "s"),
                     5: ("dryRun", "s", "rep")}
PB_RULE = {1: ("verbs", "s", "rep"), 2: ("apiGroups", "s", "rep"),
           3: ("resources", "s", "rep"), 4: ("resourceNames", "s", "rep"),
           5: ("nonResourceURLs", "s", "rep")}
PB_ROLE = {1: ("metadata", PB_META), 2: ("rules", PB_RULE, "rep"),
           3: ("aggregationRule", {1: ("clusterRoleSelectors", PB_SELECTOR,
                                       "rep")})}
PB_BINDING = {1: ("metadata", PB_META),
              2: ("subjects", {1: ("kind", "s"), 2: ("apiGroup", "s"),
                               3: ("name", "s"), 4: ("namespace", "s")},
                  "rep"),
              3: ("roleRef", {1: ("apiGroup", "s"), 2: ("kind", "s"),
                              3: ("name", "s")})}
PB_KINDS = {
    "Namespace": {1: ("metadata", PB_META),
                  2: ("spec", {1: ("finalizers", "s", "rep")})},
    "ConfigMap": {1: ("metadata", PB_META), 2: ("data", ("map", "s")),
                  3: ("binaryData", ("map", "b")),
                  4: ("immutable", "bool")},
    "Secret": {1: ("metadata", PB_META), 2: ("data", ("map", "b")),
               3: ("type", "s"), 4: ("stringData", ("map", "s")),
               5: ("immutable", "bool")},
    "ServiceAccount": {1: ("metadata", PB_META),
                       2: ("secrets", PB_OBJREF, "rep"),
                       3: ("imagePullSecrets", {1: ("name", "s")}, "rep"),
                       4: ("automountServiceAccountToken", "bool")},
    "PriorityClass": {1: ("metadata", PB_META), 2: ("value", "i!"),
                      3: ("globalDefault", "bool"),
                      4: ("description", "s"),
                      5: ("preemptionPolicy", "s")},
    "PodDisruptionBudget": {1: ("metadata", PB_META),
                            2: ("spec", {1: ("minAvailable", "ios"),
                                         2: ("selector", PB_SELECTOR),
                                         3: ("maxUnavailable", "ios"),
                                         4: ("unhealthyPodEvictionPolicy",
                                             "s")})},
    "Eviction": {1: ("metadata", PB_META),
                 2: ("deleteOptions", PB_DELETE_OPTIONS)},
    "DeleteOptions": PB_DELETE_OPTIONS,
    "ClusterRole": PB_ROLE, "Role": PB_ROLE,
    "ClusterRoleBinding": PB_BINDING, "RoleBinding": PB_BINDING,
}


def decode_k8s_protobuf(body):
    """k8s protobuf envelope (magic + runtime.Unknown) -> JSON object."""
    env = {}
    for f, v in _pb_fields(body[4:]):
        env[f] = v
    tm = dict(_pb_fields(env.get(1, b"")))
    api_version = tm.get(1, b"").decode()
    kind = tm.get(2, b"").decode()
    schema = PB_KINDS.get(kind)
    if schema is None:
        raise ApiError(415, "UnsupportedMediaType", "this test API server "
                       "cannot decode protobuf bodies of kind %r; send JSON "
                       "(kubectl create -f / apply -f do)" % kind)
    obj = pb_decode(env.get(2, b""), schema)
    if kind != "DeleteOptions":
        obj = dict({"apiVersion": api_version, "kind": kind}, **obj)
    return obj


# ---------------------------------------------------------------------------
# store: one global resourceVersion counter, per-resource bounded history


class Event:
    __slots__ = ("rv", "type", "obj", "old", "cache")

    def __init__(self, rv, etype, obj, old):
        self.rv = rv
        self.type = etype
        self.obj = obj
        self.old = old
        self.cache = None


class Store:
    def __init__(self, history):
        self.lock = threading.Lock()
        self.conds = {}
        self.rv = 0
        self.data = {}
        self.hist = {}
        self.floor = {}
        self.base_floor = 0
        self.history = max(1, history)

    def cond(self, skey):
        c = self.conds.get(skey)
        if c is None:
            c = self.conds[skey] = threading.Condition(self.lock)
        return c

    def bucket(self, skey):
        b = self.data.get(skey)
        if b is None:
            b = self.data[skey] = {}
        return b

    def get(self, skey, ns, name):
        return self.data.get(skey, {}).get((ns or "", name))

    def commit(self, skey, etype, obj, old):
        """Store obj (already a private copy), bump RV, record the event."""
        self.rv += 1
        rvs = str(self.rv)
        md = obj["metadata"]
        key = (md.get("namespace") or "", md["name"])
        if etype == "DELETED":
            obj = dict(obj)
            obj["metadata"] = dict(md, resourceVersion=rvs)
            self.bucket(skey).pop(key, None)
        else:
            md["resourceVersion"] = rvs
            self.bucket(skey)[key] = obj
        h = self.hist.get(skey)
        if h is None:
            h = self.hist[skey] = collections.deque()
        h.append(Event(self.rv, etype, obj, old))
        while len(h) > self.history:
            self.floor[skey] = h.popleft().rv
        self.cond(skey).notify_all()
        return obj

    def floor_of(self, skey):
        return max(self.floor.get(skey, 0), self.base_floor)

    def events_since(self, skey, rv):
        """Events of skey with RV > rv, or (None, floor) if rv is too old."""
        fl = self.floor_of(skey)
        if rv < fl:
            return None, fl
        out = []
        h = self.hist.get(skey)
        if h:
            for e in reversed(h):
                if e.rv <= rv:
                    break
                out.append(e)
            out.reverse()
        return out, None

    def state_at(self, skey, rv):
        """{(ns,name): obj} as it was at rv, or None if history is gone."""
        if rv < self.floor_of(skey) or rv > self.rv:
            return None
        cur = dict(self.data.get(skey, {}))
        h = self.hist.get(skey)
        if h:
            for e in reversed(h):
                if e.rv <= rv:
                    break
                md = e.obj["metadata"]
                key = (md.get("namespace") or "", md["name"])
                if e.type == "ADDED":
                    cur.pop(key, None)
                else:
                    cur[key] = e.old
        return cur

    def compact(self):
        """Forget all history: every RV and continue token handed out so far
        is expired (the counter moves on by one so that even the latest list
        RV is older than the new floor)."""
        self.rv += 1
        self.hist = {}
        self.floor = {}
        self.base_floor = self.rv

    def kick_all(self):
        for c in self.conds.values():
            c.notify_all()


# ---------------------------------------------------------------------------
# faults and stats


class Faults:
    def __init__(self):
        self.lock = threading.Lock()
        self.items = []
        self.next_id = 1

    def add(self, spec):
        if not isinstance(spec, dict):
            raise bad_request("a fault is a JSON object")
        f = dict(spec)
        try:
            f["_re"] = re.compile(f.get("path_regex") or "")
            f["_qre"] = re.compile(f.get("query_regex") or "")
        except re.error as e:
            raise bad_request("bad regex: %s" % e)
        if "status" in f and f["status"] is not None:
            f["status"] = int(f["status"])
        f["count"] = int(f.get("count", 1))
        with self.lock:
            f["id"] = self.next_id
            self.next_id += 1
            f["hits"] = 0
            self.items.append(f)
        return f["id"]

    def clear(self):
        with self.lock:
            self.items = []

    def match(self, method, path, query, is_watch):
        with self.lock:
            for f in self.items:
                if f["count"] == 0:
                    continue
                m = f.get("method")
                if m and m != "*" and m.upper() != method:
                    continue
                if "watch" in f and f["watch"] is not None and \
                        bool(f["watch"]) != is_watch:
                    continue
                if not f["_re"].search(path) or not f["_qre"].search(query):
                    continue
                if f["count"] > 0:
                    f["count"] -= 1
                f["hits"] += 1
                return f
        return None

    def describe(self):
        with self.lock:
            return [{k: v for k, v in f.items() if not k.startswith("_")}
                    for f in self.items]


class Apf:
    """API Priority and Fairness as a client sees it under load: one
    priority level with a token bucket of \\p burst seats refilled at
    \\p qps per second; a request that finds it empty is rejected at once
    with 429 TooManyRequests, "Too many requests, please try again
    later.", a Retry-After header and details.retryAfterSeconds (what
    kube-apiserver's APF filter answers when a priority level's queues are
    full).  Off (qps 0) unless --apf-qps or POST /_test/apf turns it on.
    Health probes are exempt, as kube-apiserver's `probes` FlowSchema makes
    them; \\p path_regex / \\p agent_regex (User-Agent) narrow which
    requests it limits (a test's own requests can pass untouched);
    \\p watch false exempts watch starts (APF limits them otherwise)."""

    EXEMPT = ("/healthz", "/livez", "/readyz")

    def __init__(self, qps=0.0, burst=0, retry_after=1):
        self.lock = threading.Lock()
        self.rejected = 0
        self.admitted = 0
        self.configure({"qps": qps, "burst": burst,
                        "retry_after": retry_after})

    def configure(self, c):
        try:
            qps = float(c.get("qps") or 0)
            burst = int(c.get("burst") or max(1, int(math.ceil(qps))))
            ra = int(c.get("retry_after", 1))
            prx = re.compile(c.get("path_regex") or "")
            arx = re.compile(c.get("agent_regex") or "")
        except (TypeError, ValueError, re.error) as e:
            raise bad_request("bad APF settings: %s" % e)
        if qps < 0 or burst < 1 or ra < 0:
            raise bad_request("bad APF settings: qps >= 0, burst >= 1, "
                              "retry_after >= 0")
        with self.lock:
            self.qps, self.burst, self.retry_after = qps, burst, ra
            self.path_re, self.agent_re = prx, arx
            self.watch = c.get("watch", True)
            self.conf = {"qps": qps, "burst": burst, "retry_after": ra,
                         "path_regex": c.get("path_regex") or "",
                         "agent_regex": c.get("agent_regex") or "",
                         "watch": bool(self.watch)}
            self.tokens = float(burst)
            self.last = time.monotonic()

    def admit(self, path, agent, is_watch):
        """None when the request may go on, else the 429 ApiError."""
        with self.lock:
            if self.qps <= 0 or path in self.EXEMPT or \
                    (is_watch and not self.watch) or \
                    not self.path_re.search(path) or \
                    not self.agent_re.search(agent or ""):
                return None
            now = time.monotonic()
            self.tokens = min(float(self.burst), self.tokens +
                              (now - self.last) * self.qps)
            self.last = now
            if self.tokens >= 1.0:
                self.tokens -= 1.0
                self.admitted += 1
                return None
            self.rejected += 1
            ra = self.retry_after
        return ApiError(429, "TooManyRequests",
                        "Too many requests, please try again later.",
                        {"retryAfterSeconds": ra},
                        headers={"Retry-After": str(ra),
                                 "X-Kubernetes-PF-FlowSchema-UID": APF_FS_UID,
                                 "X-Kubernetes-PF-PriorityLevel-UID":
                                     APF_PL_UID})

    def describe(self):
        with self.lock:
            return dict(self.conf, rejected=self.rejected,
                        admitted=self.admitted)


APF_FS_UID = "9b1e3c4d-0000-4000-8000-00000000f10a"
APF_PL_UID = "9b1e3c4d-0000-4000-8000-00000000f10b"


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = collections.Counter()
        self.recent = collections.deque(maxlen=1000)
        self.total = 0
        self.watch_events = 0
        self.watches_cut_slow = 0

    def record(self, method, path, query, status):
        with self.lock:
            self.counts[(method, path, status)] += 1
            self.total += 1
            self.recent.append({"method": method, "path": path,
                                "query": query, "status": status,
                                "time": time.time()})

    def reset(self):
        with self.lock:
            self.counts = collections.Counter()
            self.recent.clear()
            self.total = 0
            self.watch_events = 0
            self.watches_cut_slow = 0


# ---------------------------------------------------------------------------
# object semantics

DNS1123_SUB = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?"
                         r"(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
PROTECTED_NS = {"default", "kube-system", "kube-public"}

EV_RENAMES = [("note", "message"), ("regarding", "involvedObject"),
              ("reportingController", "reportingComponent"),
              ("deprecatedSource", "source"),
              ("deprecatedFirstTimestamp", "firstTimestamp"),
              ("deprecatedLastTimestamp", "lastTimestamp"),
              ("deprecatedCount", "count")]


def ev_to_core(o):
    o = dict(o)
    for new, old in EV_RENAMES:
        if new in o:
            o[old] = o.pop(new)
    o["apiVersion"] = "v1"
    return o


def ev_from_core(o):
    o = dict(o)
    for new, old in EV_RENAMES:
        if old in o:
            o[new] = o.pop(old)
    o["apiVersion"] = "events.k8s.io/v1"
    return o


def invalid(kind, name, causes):
    """causes: [(field, reason, message)] -> 422 Invalid."""
    msg = "; ".join("%s: %s" % (f, m) for f, _, m in causes)
    return ApiError(422, "Invalid", '%s "%s" is invalid: %s' % (kind, name,
                                                                 msg),
                    {"name": name, "kind": kind,
                     "causes": [{"reason": r, "message": m, "field": f}
                                for f, r, m in causes]})


def conflict(res, name, msg):
    d = {"name": name, "kind": res.plural}
    if res.group:
        d["group"] = res.group
    return ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s '
                    '"%s": %s' % (res.qualified, name, msg), d)


def not_found(res, name):
    d = {"name": name, "kind": res.plural}
    if res.group:
        d["group"] = res.group
    return ApiError(404, "NotFound", '%s "%s" not found' % (res.qualified,
                                                           name), d)


OPTIMISTIC = ("the object has been modified; please apply your changes to "
              "the latest version and try again")


def quantity_str(v):
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v == int(v):
            return str(int(v))
        return "%dm" % round(v * 1000)
    return v


def normalize_quantities(m):
    if isinstance(m, dict):
        for k in list(m):
            m[k] = quantity_str(m[k])


def default_pod_spec(spec):
    spec.setdefault("schedulerName", "default-scheduler")
    if spec.get("schedulerName") == "":
        spec["schedulerName"] = "default-scheduler"
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("securityContext", {})
    spec.setdefault("enableServiceLinks", True)
    if spec.get("serviceAccountName") is None:
        spec["serviceAccountName"] = spec.get("serviceAccount") or "default"
    spec["serviceAccount"] = spec["serviceAccountName"]
    for lst in ("containers", "initContainers"):
        for c in spec.get(lst) or []:
            if not isinstance(c, dict):
                continue
            img = c.get("image") or ""
            c.setdefault("imagePullPolicy",
                         "Always" if img.endswith(":latest") or
                         ":" not in img.rsplit("/", 1)[-1] else
                         "IfNotPresent")
            c.setdefault("terminationMessagePath", "/dev/termination-log")
            c.setdefault("terminationMessagePolicy", "File")
            r = c.get("resources")
            if isinstance(r, dict):
                normalize_quantities(r.get("requests"))
                normalize_quantities(r.get("limits"))
                lim = r.get("limits")
                if isinstance(lim, dict) and lim:
                    req = r.setdefault("requests", {})
                    for k, v in lim.items():
                        req.setdefault(k, v)
            else:
                c["resources"] = {}
    tol = spec.setdefault("tolerations", [])
    for key in ("node.kubernetes.io/not-ready",
                "node.kubernetes.io/unreachable"):
        if not any(isinstance(t, dict) and t.get("key") == key and
                   t.get("effect") in ("NoExecute", None, "")
                   for t in tol):
            tol.append({"key": key, "operator": "Exists",
                        "effect": "NoExecute", "tolerationSeconds": 300})
    normalize_quantities(spec.get("overhead"))


def qos_class(spec):
    any_set, guaranteed = False, True
    for c in spec.get("containers") or []:
        r = (c.get("resources") or {})
        rq, lm = r.get("requests") or {}, r.get("limits") or {}
        if rq or lm:
            any_set = True
        for k in ("cpu", "memory"):
            if k not in lm or rq.get(k, lm.get(k)) != lm.get(k):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def pod_ready(pod):
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return False


def set_condition(status, cond):
    conds = status.setdefault("conditions", [])
    for i, c in enumerate(conds):
        if c.get("type") == cond["type"]:
            if c.get("status") == cond.get("status"):
                cond["lastTransitionTime"] = c.get("lastTransitionTime",
                                                   cond.get(
                                                       "lastTransitionTime"))
            conds[i] = cond
            return
    conds.append(cond)


def _without(d, keys):
    return {k: v for k, v in d.items() if k not in keys}


def _same_ignoring_rv(a, b):
    if a.keys() != b.keys():
        return False
    for k in a:
        if k == "metadata":
            ma, mb = a[k], b[k]
            if _without(ma, ("resourceVersion", "managedFields")) != \
                    _without(mb, ("resourceVersion", "managedFields")):
                return False
        elif a[k] != b[k]:
            return False
    return True


# ---------------------------------------------------------------------------
# server-side printing (meta.k8s.io/v1 Table), as kubectl get asks for it


def _parse_ts(ts):
    try:
        return datetime.datetime.strptime(ts[:19], "%Y-%m-%dT%H:%M:%S") \
            .replace(tzinfo=datetime.timezone.utc)
    except (TypeError, ValueError):
        return None


def human_age(ts):
    t = _parse_ts(ts)
    if t is None:
        return "<unknown>"
    sec = int((datetime.datetime.now(datetime.timezone.utc) -
               t).total_seconds())
    sec = max(sec, 0)
    if sec < 120:
        return "%ds" % sec
    m = sec // 60
    if m < 10:
        return "%dm%ds" % (m, sec % 60) if sec % 60 else "%dm" % m
    if m < 180:
        return "%dm" % m
    h = sec // 3600
    if h < 8:
        return "%dh%dm" % (h, m % 60) if m % 60 else "%dh" % h
    if h < 48:
        return "%dh" % h
    if h < 192:
        return "%dd%dh" % (h // 24, h % 24) if h % 24 else "%dd" % (h // 24)
    return "%dd" % (h // 24)


def _col(name, typ="string", fmt="", prio=0, desc=""):
    return {"name": name, "type": typ, "format": fmt,
            "description": desc or name, "priority": prio}


def table_columns(res):
    if res.skey == ("", "pods"):
        return [_col("Name", fmt="name"), _col("Ready"), _col("Status"),
                _col("Restarts", "string"), _col("Age"),
                _col("IP", prio=1), _col("Node", prio=1),
                _col("Nominated Node", prio=1),
                _col("Readiness Gates", prio=1)]
    if res.skey == ("", "nodes"):
        return [_col("Name", fmt="name"), _col("Status"), _col("Roles"),
                _col("Age"), _col("Version"), _col("Internal-IP", prio=1),
                _col("External-IP", prio=1), _col("OS-Image", prio=1),
                _col("Kernel-Version", prio=1),
                _col("Container-Runtime", prio=1)]
    if res.skey == ("", "namespaces"):
        return [_col("Name", fmt="name"), _col("Status"), _col("Age")]
    if res.skey == ("policy", "poddisruptionbudgets"):
        return [_col("Name", fmt="name"), _col("Min Available"),
                _col("Max Unavailable"), _col("Allowed Disruptions",
                                              "integer"), _col("Age")]
    if res.skey == ("coordination.k8s.io", "leases"):
        return [_col("Name", fmt="name"), _col("Holder"), _col("Age")]
    if res.skey == ("scheduling.k8s.io", "priorityclasses"):
        return [_col("Name", fmt="name"), _col("Value", "integer"),
                _col("Global-Default", "boolean"), _col("Age"),
                _col("Preemption-Policy", prio=1)]
    return [_col("Name", fmt="name"), _col("Age")]


def table_cells(res, o):
    md = o.get("metadata") or {}
    spec, st = o.get("spec") or {}, o.get("status") or {}
    age = human_age(md.get("creationTimestamp"))
    if res.skey == ("", "pods"):
        cs = st.get("containerStatuses") or []
        ready = sum(1 for c in cs if c.get("ready"))
        total = len(spec.get("containers") or [])
        phase = st.get("reason") or st.get("phase") or "Unknown"
        if spec.get("schedulingGates") and not spec.get("nodeName"):
            phase = "SchedulingGated"
        if md.get("deletionTimestamp"):
            phase = "Terminating"
        restarts = sum(int(c.get("restartCount", 0)) for c in cs)
        return [md.get("name"), "%d/%d" % (ready, total), phase,
                str(restarts), age, st.get("podIP") or "<none>",
                spec.get("nodeName") or "<none>",
                st.get("nominatedNodeName") or "<none>", "<none>"]
    if res.skey == ("", "nodes"):
        ready = "Unknown"
        for c in st.get("conditions") or []:
            if c.get("type") == "Ready":
                ready = "Ready" if c.get("status") == "True" else "NotReady"
        if spec.get("unschedulable"):
            ready += ",SchedulingDisabled"
        roles = sorted(k.split("/", 1)[1] for k in (md.get("labels") or {})
                       if k.startswith("node-role.kubernetes.io/"))
        addr = {a.get("type"): a.get("address")
                for a in st.get("addresses") or []}
        ni = st.get("nodeInfo") or {}
        return [md.get("name"), ready, ",".join(roles) or "<none>", age,
                ni.get("kubeletVersion", ""),
                addr.get("InternalIP", "<none>"),
                addr.get("ExternalIP", "<none>"), ni.get("osImage", ""),
                ni.get("kernelVersion", ""),
                ni.get("containerRuntimeVersion", "")]
    if res.skey == ("", "namespaces"):
        return [md.get("name"), st.get("phase", ""), age]
    if res.skey == ("policy", "poddisruptionbudgets"):
        return [md.get("name"), str(spec.get("minAvailable", "N/A")),
                str(spec.get("maxUnavailable", "N/A")),
                st.get("disruptionsAllowed", 0), age]
    if res.skey == ("coordination.k8s.io", "leases"):
        return [md.get("name"), spec.get("holderIdentity", ""), age]
    if res.skey == ("scheduling.k8s.io", "priorityclasses"):
        return [md.get("name"), o.get("value", 0),
                bool(o.get("globalDefault")), age,
                o.get("preemptionPolicy", "")]
    return [md.get("name"), age]


def wants_table(accept):
    return accept is not None and "as=Table" in accept and \
        "g=meta.k8s.io" in accept


def table_of(res, objs, include, list_md=None, headers=True):
    rows = []
    for o in objs:
        row = {"cells": table_cells(res, o)}
        if include == "Object":
            row["object"] = o
        elif include != "None":
            row["object"] = {"kind": "PartialObjectMetadata",
                             "apiVersion": "meta.k8s.io/v1",
                             "metadata": o.get("metadata") or {}}
        rows.append(row)
    t = {"kind": "Table", "apiVersion": "meta.k8s.io/v1",
         "metadata": list_md or {}}
    if headers:
        t["columnDefinitions"] = table_columns(res)
    t["rows"] = rows
    return t


# ---------------------------------------------------------------------------
# the application


class App:
    def __init__(self, args):
        self.args = args
        self.store = Store(args.history)
        self.reg = Registry(g for s in args.disable_group
                            for g in s.split(",") if g)
        self.faults = Faults()
        self.apf = Apf(args.apf_qps, args.apf_burst, args.apf_retry_after)
        self.stats = Stats()
        self.token = args.token
        self.token_file = args.token_file
        # shutdown: no write is answered that the state file misses
        self.gate = threading.Condition()
        self.stopping = False
        self.writes_in_flight = 0
        self.watch_lock = threading.Lock()
        self.watches = {}
        self.watch_seq = 0
        self.watch_epoch = 0
        self.abrupt_epoch = False
        self.error_epoch = False
        self.waiting_for_node = {}
        self.bookmark_epoch = 0
        self.port = 0
        self.log_fp = None
        if args.log:
            self.log_fp = open(args.log, "a", buffering=1)
        self.bootstrap()
        if args.state_file and os.path.exists(args.state_file):
            self.load_state(args.state_file)
        for path in args.seed:
            self.load_file(path)

    # -- logging / auth -----------------------------------------------------

    def log(self, line):
        if self.log_fp:
            try:
                self.log_fp.write("%s %s\n" % (
                    datetime.datetime.now().strftime("%H:%M:%S.%f")[:-3],
                    line))
            except (OSError, ValueError):
                pass

    def current_token(self):
        if self.token_file:
            try:
                with open(self.token_file) as f:
                    return f.read().strip()
            except OSError:
                return None
        return self.token

    def auth_ok(self, header):
        if not self.token and not self.token_file:
            return True
        tok = self.current_token()
        if not tok or not header:
            return False
        parts = header.split(None, 1)
        return len(parts) == 2 and parts[0].lower() == "bearer" and \
            parts[1].strip() == tok

    # -- bootstrap / persistence ---------------------------------------------

    def bootstrap(self):
        ns_res = self.reg.by_gvr[("", "v1", "namespaces")]
        for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
            self.internal_create(ns_res, None, {"metadata": {"name": ns}})
        pc = self.reg.by_gvr[("scheduling.k8s.io", "v1", "priorityclasses")]
        for name, value in (("system-cluster-critical", 2000000000),
                            ("system-node-critical", 2000001000)):
            self.internal_create(pc, None, {
                "metadata": {"name": name}, "value": value,
                "description": "Used for system critical pods that must "
                "run in the cluster, but can be moved to another node if "
                "necessary."})

    def internal_create(self, res, ns, obj):
        with self.store.lock:
            return self.create_locked(res, ns, jcopy(obj), dry=False)

    def dump_state(self):
        with self.store.lock:
            objs = []
            for skey, b in self.store.data.items():
                for o in b.values():
                    objs.append({"skey": list(skey), "obj": o})
            return {"resourceVersion": self.store.rv, "objects": objs}

    def save_state(self, path):
        st = self.dump_state()
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(st, f)
        os.replace(tmp, path)

    def load_state(self, path):
        with open(path) as f:
            st = json.load(f)
        with self.store.lock:
            self.store.data = {}
            for ent in st.get("objects", []):
                skey = tuple(ent["skey"])
                o = ent["obj"]
                md = o["metadata"]
                self.store.bucket(skey)[(md.get("namespace") or "",
                                         md["name"])] = o
            self.store.rv = max(self.store.rv, int(st.get("resourceVersion",
                                                          0)))
            self.store.compact()

    def load_docs(self, docs, auto_ns=True):
        """Create objects from decoded JSON documents (List/array/object)."""
        created = 0
        stack = list(docs)
        items = []
        while stack:
            d = stack.pop(0)
            if isinstance(d, list):
                stack[0:0] = d
            elif isinstance(d, dict) and d.get("kind", "").endswith("List") \
                    and isinstance(d.get("items"), list):
                stack[0:0] = d["items"]
            elif isinstance(d, dict):
                items.append(d)
        ns_res = self.reg.by_gvr[("", "v1", "namespaces")]
        for o in items:
            res = self.reg.for_kind(o.get("apiVersion", ""), o.get("kind", ""))
            if res is None:
                raise bad_request("unknown kind %s %s" % (o.get("apiVersion"),
                                                          o.get("kind")))
            ns = None
            if res.namespaced:
                ns = (o.get("metadata") or {}).get("namespace") or "default"
                with self.store.lock:
                    have = self.store.get(ns_res.skey, None, ns)
                if have is None and auto_ns:
                    self.internal_create(ns_res, None,
                                         {"metadata": {"name": ns}})
            o = jcopy(o)
            (o.get("metadata") or {}).pop("resourceVersion", None)
            with self.store.lock:
                self.create_locked(res, ns, o, dry=False, keep_status=True)
            created += 1
        return created

    def load_file(self, path):
        with open(path) as f:
            text = f.read()
        dec = json.JSONDecoder()
        docs, i = [], 0
        while True:
            while i < len(text) and text[i].isspace():
                i += 1
            if i >= len(text):
                break
            d, i = dec.raw_decode(text, i)
            docs.append(d)
        return self.load_docs(docs)

    # -- conversion -----------------------------------------------------------

    def out(self, res, obj):
        """Stored object -> wire form for the requested group/version."""
        if res.group == "events.k8s.io":
            return ev_from_core(obj)
        if obj.get("apiVersion") != res.gv or obj.get("kind") != res.kind:
            obj = dict(obj)
            obj["apiVersion"] = res.gv
            obj["kind"] = res.kind
        return obj

    def into(self, res, obj):
        if res.group == "events.k8s.io":
            return ev_to_core(obj)
        return obj

    # -- admission / defaulting -----------------------------------------------

    def ns_exists(self, ns):
        return self.store.get(("", "namespaces"), None, ns) is not None

    def validate_name(self, res, name):
        if not name:
            raise invalid(res.kind, "", [(
                "metadata.name", "FieldValueRequired",
                "Required value: name or generateName is required")])
        rx = DNS1123_LABEL if res.plural == "namespaces" else DNS1123_SUB
        limit = 63 if res.plural == "namespaces" else 253
        if res.plural == "events":
            rx = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.:]*[A-Za-z0-9])?$")
        if len(name) > limit or not rx.match(name):
            raise invalid(res.kind, name, [(
                "metadata.name", "FieldValueInvalid",
                "Invalid value: %r: a lowercase RFC 1123 subdomain must "
                "consist of lower case alphanumeric characters, '-' or '.', "
                "and must start and end with an alphanumeric character"
                % name)])

    # StorageClass as the real server's validation and defaults
    # (pkg/apis/storage/validation, pkg/apis/storage/v1/defaults.go):
    # provisioner required, reclaimPolicy Delete and volumeBindingMode
    # Immediate by default, both modes the only ones; provisioner,
    # parameters, reclaimPolicy and volumeBindingMode immutable.
    SC_IMMUTABLE = ("provisioner", "parameters", "reclaimPolicy",
                    "volumeBindingMode")

    def admit_storageclass(self, sc, name):
        if not isinstance(sc.get("provisioner"), str) or \
                not sc["provisioner"]:
            raise invalid("StorageClass", name, [(
                "provisioner", "FieldValueRequired", "Required value")])
        sc.setdefault("reclaimPolicy", "Delete")
        sc.setdefault("volumeBindingMode", "Immediate")
        if sc["volumeBindingMode"] not in ("Immediate",
                                           "WaitForFirstConsumer"):
            raise invalid("StorageClass", name, [(
                "volumeBindingMode", "FieldValueNotSupported",
                'Unsupported value: "%s": supported values: "Immediate", '
                '"WaitForFirstConsumer"' % sc["volumeBindingMode"])])

    def check_storageclass_update(self, old, new):
        name = old["metadata"]["name"]
        for f in self.SC_IMMUTABLE:
            if old.get(f) != new.get(f):
                raise invalid("StorageClass", name, [(
                    f, "FieldValueForbidden",
                    "Forbidden: updates to %s are forbidden." % f)])

    def admit_pod_create(self, pod):
        md, spec = pod["metadata"], pod.setdefault("spec", {})
        name = md["name"]
        if not spec.get("containers"):
            raise invalid("Pod", name, [("spec.containers",
                                         "FieldValueRequired",
                                         "Required value")])
        for c in spec["containers"]:
            if not isinstance(c, dict) or not c.get("name"):
                raise invalid("Pod", name, [("spec.containers[0].name",
                                             "FieldValueRequired",
                                             "Required value")])
        default_pod_spec(spec)
        # Priority admission plugin
        pcs = self.store.data.get(("scheduling.k8s.io", "priorityclasses"),
                                  {})
        pcn = spec.get("priorityClassName")
        pc = None
        if pcn:
            pc = pcs.get(("", pcn))
            if pc is None:
                raise ApiError(403, "Forbidden", 'pods "%s" is forbidden: no '
                               'PriorityClass with name %s was found'
                               % (name, pcn),
                               {"name": name, "kind": "pods"})
        else:
            for c in pcs.values():
                if c.get("globalDefault"):
                    pc = c
                    break
        prio = int(pc.get("value", 0)) if pc else 0
        if spec.get("priority") is not None and spec["priority"] != prio:
            raise ApiError(403, "Forbidden", 'pods "%s" is forbidden: the '
                           'integer value of priority (%s) must not be '
                           'provided in pod spec; priority admission '
                           'controller computed %d from the given '
                           'PriorityClass name' % (name, spec["priority"],
                                                   prio),
                           {"name": name, "kind": "pods"})
        spec["priority"] = prio
        if pc:
            spec["priorityClassName"] = pc["metadata"]["name"]
            spec.setdefault("preemptionPolicy",
                            pc.get("preemptionPolicy", "PreemptLowerPriority"))
        else:
            spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
        pod["status"] = {"phase": "Pending", "qosClass": qos_class(spec)}

    def check_pod_update(self, old, new):
        name = old["metadata"]["name"]
        o, n = jcopy(old.get("spec") or {}), jcopy(new.get("spec") or {})
        default_pod_spec(n)
        new["spec"] = jcopy(n)
        og = [g.get("name") for g in o.get("schedulingGates") or []]
        ng = [g.get("name") for g in n.get("schedulingGates") or []]
        for g in ng:
            if g not in og:
                raise invalid("Pod", name, [(
                    "spec.schedulingGates", "FieldValueForbidden",
                    "Forbidden: only deletion is allowed, but found new "
                    "scheduling gate '%s'" % g)])
        for spec in (o, n):
            for lst in ("containers", "initContainers"):
                for c in spec.get(lst) or []:
                    if isinstance(c, dict):
                        c.pop("image", None)
            for k in ("activeDeadlineSeconds", "tolerations",
                      "schedulingGates", "terminationGracePeriodSeconds"):
                spec.pop(k, None)
            if og:
                spec.pop("nodeSelector", None)
                spec.pop("affinity", None)
        if o != n:
            raise invalid("Pod", name, [(
                "spec", "FieldValueForbidden",
                "Forbidden: pod updates may not change fields other than "
                "`spec.containers[*].image`,`spec.initContainers[*].image`,"
                "`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
                "additions to existing tolerations),"
                "`spec.terminationGracePeriodSeconds` (allow it to be set to "
                "1 if it was previously negative)")])

    def validate_event(self, res, ev, ns):
        name = ev["metadata"]["name"]
        causes = []
        if res.group == "events.k8s.io":
            if not ev.get("eventTime"):
                causes.append(("eventTime", "FieldValueRequired",
                               "Required value"))
            if ev.get("type") not in ("Normal", "Warning"):
                causes.append(("type", "FieldValueNotSupported",
                               "Unsupported value: %r: supported values: "
                               "\"Normal\", \"Warning\"" % ev.get("type")))
            for f in ("deprecatedFirstTimestamp", "deprecatedLastTimestamp",
                      "deprecatedSource"):
                if ev.get(f):
                    causes.append((f, "FieldValueInvalid",
                                   "Invalid value: needs to be unset"))
            if ev.get("deprecatedCount"):
                causes.append(("deprecatedCount", "FieldValueInvalid",
                               "Invalid value: needs to be unset"))
            for f in ("reportingController", "reportingInstance", "action",
                      "reason"):
                if not ev.get(f):
                    causes.append((f, "FieldValueRequired", "Required value"))
            for f in ("reportingInstance", "action", "reason"):
                if len(ev.get(f) or "") > 128:
                    causes.append((f, "FieldValueTooLong",
                                   "Too long: may not be more than 128 "
                                   "bytes"))
            if len(ev.get("note") or "") > 1024:
                causes.append(("note", "FieldValueTooLong",
                               "Too long: may not be more than 1024 bytes"))
            inv = ev.get("regarding") or {}
            field = "regarding.namespace"
        else:
            inv = ev.get("involvedObject") or {}
            field = "involvedObject.namespace"
        ins = inv.get("namespace") or ""
        if ins == "":
            if ns not in ("", "default"):
                causes.append((field, "FieldValueInvalid",
                               "Invalid value: %r: does not match "
                               "event.namespace" % ins))
        elif ins != ns:
            causes.append((field, "FieldValueInvalid",
                           "Invalid value: %r: does not match event.namespace"
                           % ins))
        if causes:
            raise invalid("Event", name, causes)

    def validate_event_update(self, res, ev, old):
        """events.k8s.io/v1 updates (kubernetes pkg/apis/core/validation/
        events.go ValidateEventUpdate): a changed series needs count >= 2
        and lastObservedTime; what identifies the event is immutable."""
        name = ev["metadata"]["name"]
        causes = []
        ser = ev.get("series")
        if ser != old.get("series") and ser is not None:
            if not isinstance(ser, dict) or \
                    not isinstance(ser.get("count"), int) or \
                    ser["count"] < 2:
                causes.append(("series.count", "FieldValueInvalid",
                               "Invalid value: \"\": should be at least 2"))
            if not isinstance(ser, dict) or not ser.get("lastObservedTime"):
                causes.append(("series.lastObservedTime",
                               "FieldValueRequired", "Required value"))
        for f in ("regarding", "related", "reason", "type", "action",
                  "reportingController", "reportingInstance", "eventTime"):
            if ev.get(f) != old.get(f):
                causes.append((f, "FieldValueInvalid", "Invalid value: "
                               "field is immutable"))
        if causes:
            raise invalid("Event", name, causes)

    # -- controllers (run under the store lock) -------------------------------

    def on_change(self, res, old, new):
        if res.skey == ("", "pods"):
            if new is not None and self.args.kubelet:
                self.kubelet_sync(new)
            ns = (new or old)["metadata"].get("namespace")
            if self.args.controllers:
                self.pdb_sync(ns)
        elif res.skey == ("policy", "poddisruptionbudgets"):
            if self.args.controllers:
                self.pdb_sync((new or old)["metadata"].get("namespace"))
        elif res.skey == ("", "nodes") and new is not None and old is None \
                and self.args.kubelet:
            # pods bound to a node that just appeared start now
            pods = self.store.data.get(("", "pods"), {})
            for key in self.waiting_for_node.pop(new["metadata"]["name"], ()):
                p = pods.get(key)
                if p is not None:
                    self.kubelet_sync(p)

    def kubelet_sync(self, pod):
        spec, st = pod.get("spec") or {}, pod.get("status") or {}
        node = spec.get("nodeName")
        if not node or st.get("phase") != "Pending" or \
                pod["metadata"].get("deletionTimestamp"):
            return
        n = self.store.get(("", "nodes"), None, node)
        if n is None:
            md = pod["metadata"]
            self.waiting_for_node.setdefault(node, set()).add(
                (md.get("namespace") or "", md["name"]))
            return
        p = dict(pod)
        p["metadata"] = dict(pod["metadata"])
        s = p["status"] = dict(st)
        s["conditions"] = list(st.get("conditions") or [])
        now = now_ts()
        s["phase"] = "Running"
        s["startTime"] = s.get("startTime") or now
        host_ip = ""
        for a in (n.get("status") or {}).get("addresses") or []:
            if a.get("type") == "InternalIP":
                host_ip = a.get("address", "")
                break
        if not host_ip:
            host_ip = "10.0.%d.%d" % (hash(node) % 250, 1 + hash(node) % 200)
        s["hostIP"] = host_ip
        s["hostIPs"] = [{"ip": host_ip}]
        if not s.get("podIP"):
            ip = "10.244.%d.%d" % (random.randint(0, 255),
                                   random.randint(2, 254))
            s["podIP"] = ip
            s["podIPs"] = [{"ip": ip}]
        for t in ("Initialized", "Ready", "ContainersReady"):
            set_condition(s, {"type": t, "status": "True",
                              "lastProbeTime": None,
                              "lastTransitionTime": now})
        if not any(c.get("type") == "PodScheduled"
                   for c in s.get("conditions") or []):
            set_condition(s, {"type": "PodScheduled", "status": "True",
                              "lastProbeTime": None,
                              "lastTransitionTime": now})
        s["containerStatuses"] = [
            {"name": c.get("name"), "image": c.get("image", ""),
             "imageID": "", "ready": True, "started": True,
             "restartCount": 0,
             "state": {"running": {"startedAt": now}}}
            for c in spec.get("containers") or [] if isinstance(c, dict)]
        self.store.commit(("", "pods"), "MODIFIED", p, pod)

    def pdb_sync(self, ns):
        skey = ("policy", "poddisruptionbudgets")
        pdbs = [p for (pns, _), p in self.store.data.get(skey, {}).items()
                if pns == ns]
        if not pdbs:
            return
        pods = [p for (pns, _), p in self.store.data.get(("", "pods"),
                                                         {}).items()
                if pns == ns]
        for pdb in pdbs:
            spec = pdb.get("spec") or {}
            sel = spec.get("selector")
            matched = [p for p in pods
                       if selector_obj_match(sel, p["metadata"].get("labels"))]
            st_old = pdb.get("status") or {}
            disrupted = dict(st_old.get("disruptedPods") or {})
            live = {p["metadata"]["name"]: p for p in matched}
            for pn in list(disrupted):
                p = live.get(pn)
                if p is None or p["metadata"].get("deletionTimestamp"):
                    disrupted.pop(pn)
            expected = len(matched)
            healthy = sum(1 for p in matched
                          if not p["metadata"].get("deletionTimestamp") and
                          p["metadata"]["name"] not in disrupted and
                          pod_ready(p))

            def amount(v, total, up):
                if isinstance(v, str) and v.endswith("%"):
                    x = float(v[:-1]) * total / 100.0
                    return int(math.ceil(x)) if up else int(math.floor(x))
                return int(v)
            if spec.get("minAvailable") is not None:
                desired = amount(spec["minAvailable"], expected, True)
            elif spec.get("maxUnavailable") is not None:
                desired = max(0, expected - amount(spec["maxUnavailable"],
                                                   expected, True))
            else:
                desired = expected
            allowed = max(0, healthy - desired)
            gen = pdb["metadata"].get("generation", 1)
            st = {"observedGeneration": gen, "disruptionsAllowed": allowed,
                  "currentHealthy": healthy, "desiredHealthy": desired,
                  "expectedPods": expected}
            if disrupted:
                st["disruptedPods"] = disrupted
            ok = allowed > 0
            cond = {"type": "DisruptionAllowed",
                    "status": "True" if ok else "False",
                    "reason": "SufficientPods" if ok else "InsufficientPods",
                    "message": "", "observedGeneration": gen,
                    "lastTransitionTime": now_ts()}
            for c in st_old.get("conditions") or []:
                if c.get("type") == "DisruptionAllowed" and \
                        c.get("status") == cond["status"]:
                    cond["lastTransitionTime"] = c.get("lastTransitionTime")
            st["conditions"] = [cond]
            if st != st_old:
                np = jcopy(pdb)
                np["status"] = st
                self.store.commit(skey, "MODIFIED", np, pdb)

    # -- write operations (caller holds store.lock) ---------------------------

    def create_locked(self, res, ns, obj, dry, keep_status=False):
        if not isinstance(obj, dict):
            raise bad_request("the body of the request must be a JSON object")
        obj = self.into(res, obj)
        md = obj.get("metadata")
        if not isinstance(md, dict):
            md = obj["metadata"] = {}
        if res.namespaced:
            if md.get("namespace") and md["namespace"] != ns:
                raise bad_request("the namespace of the provided object does "
                                  "not match the namespace sent on the "
                                  "request")
            md["namespace"] = ns
        else:
            md.pop("namespace", None)
        if md.get("resourceVersion"):
            raise ApiError(500, "InternalError", "Internal error occurred: "
                           "resourceVersion should not be set on objects to "
                           "be created", {"causes": [{"message": "resource"
                                                      "Version should not be "
                                                      "set on objects to be "
                                                      "created"}]})
        bucket = self.store.bucket(res.skey)
        if not md.get("name") and md.get("generateName"):
            for _ in range(100):
                cand = md["generateName"] + "".join(
                    random.choice("bcdfghjklmnpqrstvwxz2456789")
                    for _ in range(5))
                if (ns or "", cand) not in bucket:
                    md["name"] = cand
                    break
        name = md.get("name") or ""
        self.validate_name(res, name)
        if res.namespaced and not self.ns_exists(ns):
            raise ApiError(404, "NotFound", 'namespaces "%s" not found' % ns,
                           {"name": ns, "kind": "namespaces"})
        if (ns or "", name) in bucket:
            d = {"name": name, "kind": res.plural}
            if res.group:
                d["group"] = res.group
            raise ApiError(409, "AlreadyExists", '%s "%s" already exists'
                           % (res.qualified, name), d)
        ns_res = self.reg.by_gvr[("", "v1", "namespaces")]
        if res.namespaced:
            nso = self.store.get(ns_res.skey, None, ns)
            if (nso.get("status") or {}).get("phase") == "Terminating":
                raise ApiError(403, "Forbidden", '%s "%s" is forbidden: '
                               'unable to create new content in namespace %s '
                               'because it is being terminated'
                               % (res.qualified, name, ns))
        obj["apiVersion"] = "v1" if res.skey == ("", "events") else res.gv
        obj["kind"] = res.kind
        for f in ("uid", "creationTimestamp", "deletionTimestamp",
                  "deletionGracePeriodSeconds", "selfLink", "managedFields"):
            md.pop(f, None)
        md["uid"] = str(uuid.uuid4())
        md["creationTimestamp"] = now_ts()
        md["generation"] = 1
        if res.has_status and not res.status_on_create and not keep_status:
            obj.pop("status", None)
        kind = res.skey
        if kind == ("", "pods"):
            if keep_status:
                st = obj.get("status")
                self.admit_pod_create(obj)
                if isinstance(st, dict) and st:
                    obj["status"] = dict(obj["status"], **st)
            else:
                self.admit_pod_create(obj)
        elif kind == ("", "nodes"):
            st = obj.get("status")
            if isinstance(st, dict):
                normalize_quantities(st.get("capacity"))
                normalize_quantities(st.get("allocatable"))
        elif kind == ("", "namespaces"):
            obj["spec"] = {"finalizers": ["kubernetes"]}
            obj["status"] = {"phase": "Active"}
            md.setdefault("labels", {})["kubernetes.io/metadata.name"] = name
        elif kind == ("", "events"):
            self.validate_event(res, self.out(res, obj), ns)
        elif kind == ("storage.k8s.io", "storageclasses"):
            self.admit_storageclass(obj, name)
        elif kind == ("scheduling.k8s.io", "priorityclasses"):
            if not isinstance(obj.get("value"), int):
                raise invalid("PriorityClass", name, [(
                    "value", "FieldValueRequired", "Required value")])
            obj.setdefault("preemptionPolicy", "PreemptLowerPriority")
        if dry:
            return obj
        stored = self.store.commit(res.skey, "ADDED", obj, None)
        if kind == ("", "namespaces"):
            sa = self.reg.by_gvr[("", "v1", "serviceaccounts")]
            if self.store.get(sa.skey, name, "default") is None:
                self.create_locked(sa, name, {"metadata": {"name": "default"}},
                                   dry=False)
        self.on_change(res, None, stored)
        return stored

    def prepare_update(self, res, old, new, sub):
        if not isinstance(new, dict):
            raise bad_request("the body of the request must be a JSON object")
        md = new.get("metadata")
        if not isinstance(md, dict):
            md = new["metadata"] = {}
        omd = old["metadata"]
        if md.get("uid") and md["uid"] != omd["uid"]:
            raise conflict(res, omd["name"], "Precondition failed: UID in "
                           "precondition: %s, UID in object meta: %s"
                           % (md["uid"], omd["uid"]))
        for f in ("uid", "creationTimestamp", "deletionTimestamp",
                  "deletionGracePeriodSeconds", "generation", "name",
                  "namespace"):
            if f in omd:
                md[f] = omd[f]
            else:
                md.pop(f, None)
        new["apiVersion"] = old.get("apiVersion")
        new["kind"] = old.get("kind")
        if sub == "status":
            out = jcopy(old)
            if "status" in new:
                out["status"] = new["status"]
            else:
                out.pop("status", None)
            if res.skey == ("", "pods") and isinstance(out.get("status"),
                                                       dict):
                out["status"].setdefault("phase", "Pending")
            if res.skey == ("", "nodes"):
                st = out.get("status") or {}
                normalize_quantities(st.get("capacity"))
                normalize_quantities(st.get("allocatable"))
            return out
        if res.has_status:
            if "status" in old:
                new["status"] = old["status"]
            else:
                new.pop("status", None)
        if res.skey == ("", "pods"):
            self.check_pod_update(old, new)
        elif res.skey == ("", "namespaces"):
            new["spec"] = old.get("spec")
        elif res.skey == ("storage.k8s.io", "storageclasses"):
            self.check_storageclass_update(old, new)
        elif res.skey == ("", "events") and res.group == "events.k8s.io":
            self.validate_event_update(res, self.out(res, new),
                                       self.out(res, old))
        changed = any(old.get(k) != new.get(k)
                      for k in set(old) | set(new)
                      if k not in ("metadata", "status", "apiVersion",
                                   "kind"))
        if changed:
            md["generation"] = omd.get("generation", 1) + 1
        return new

    def commit_update(self, res, old, new, dry):
        if _same_ignoring_rv(old, new):
            return old
        if dry:
            return new
        md = new["metadata"]
        if md.get("deletionTimestamp") and not md.get("finalizers") and \
                old["metadata"].get("finalizers"):
            gone = self.store.commit(res.skey, "DELETED", new, old)
            self.on_change(res, old, None)
            return gone
        stored = self.store.commit(res.skey, "MODIFIED", new, old)
        self.on_change(res, old, stored)
        return stored

    def delete_locked(self, res, old, opts, dry):
        md = old["metadata"]
        pre = opts.get("preconditions") or {}
        if pre.get("uid") and pre["uid"] != md["uid"]:
            raise conflict(res, md["name"], "Precondition failed: UID in "
                           "precondition: %s, UID in object meta: %s"
                           % (pre["uid"], md["uid"]))
        if pre.get("resourceVersion") and \
                pre["resourceVersion"] != md["resourceVersion"]:
            raise conflict(res, md["name"], "Precondition failed: "
                           "ResourceVersion in precondition: %s, "
                           "ResourceVersion in object meta: %s"
                           % (pre["resourceVersion"], md["resourceVersion"]))
        if res.skey == ("", "namespaces"):
            if md["name"] in PROTECTED_NS:
                raise ApiError(403, "Forbidden", 'namespaces "%s" is '
                               'forbidden: this namespace may not be deleted'
                               % md["name"], {"name": md["name"],
                                             "kind": "namespaces"})
            if dry:
                return old
            self.delete_namespace_contents(md["name"])
        if dry:
            return old
        if md.get("finalizers"):
            if md.get("deletionTimestamp"):
                return old
            new = jcopy(old)
            new["metadata"]["deletionTimestamp"] = now_ts()
            new["metadata"]["deletionGracePeriodSeconds"] = 0
            stored = self.store.commit(res.skey, "MODIFIED", new, old)
            self.on_change(res, old, stored)
            return stored
        if res.skey == ("", "pods"):
            spec, st = old.get("spec") or {}, old.get("status") or {}
            grace = opts.get("gracePeriodSeconds")
            if grace is None:
                grace = md.get("deletionGracePeriodSeconds",
                               spec.get("terminationGracePeriodSeconds", 30))
            graceful = (self.args.pod_grace > 0 and grace and grace > 0 and
                        spec.get("nodeName") and
                        st.get("phase") not in ("Succeeded", "Failed"))
            if graceful:
                if md.get("deletionTimestamp") and \
                        md.get("deletionGracePeriodSeconds", 0) <= grace:
                    return old
                new = jcopy(old)
                new["metadata"]["deletionTimestamp"] = ts_after(grace)
                new["metadata"]["deletionGracePeriodSeconds"] = int(grace)
                new["metadata"]["generation"] = md.get("generation", 1) + 1
                stored = self.store.commit(res.skey, "MODIFIED", new, old)
                self.on_change(res, old, stored)
                wait = min(float(grace), self.args.pod_grace)
                t = threading.Timer(wait, self.finish_graceful,
                                    (res, md.get("namespace"), md["name"],
                                     md["uid"]))
                t.daemon = True
                t.start()
                return stored
        gone = self.store.commit(res.skey, "DELETED", jcopy(old), old)
        self.on_change(res, old, None)
        return gone

    def finish_graceful(self, res, ns, name, uid):
        with self.store.lock:
            cur = self.store.get(res.skey, ns, name)
            if cur is None or cur["metadata"]["uid"] != uid or \
                    not cur["metadata"].get("deletionTimestamp"):
                return
            self.store.commit(res.skey, "DELETED", jcopy(cur), cur)
            self.on_change(res, cur, None)

    def delete_namespace_contents(self, ns):
        seen = set()
        for r in self.reg.all:
            if not r.namespaced or r.skey in seen or r.group != r.skey[0]:
                continue
            seen.add(r.skey)
            b = self.store.data.get(r.skey, {})
            for (ons, _), o in list(b.items()):
                if ons == ns:
                    self.store.commit(r.skey, "DELETED", jcopy(o), o)
                    self.on_change(r, o, None)

    # -- subresources: binding and eviction -----------------------------------

    def bind_locked(self, ns, name, b):
        pods = self.reg.by_gvr[("", "v1", "pods")]
        bres = Res("", "v1", "pods/binding", "Binding", True)
        bres.qualified = "pods/binding"
        bres.plural = "pods/binding"
        bmd = b.get("metadata") or {}
        target = b.get("target") or {}
        if target.get("kind") not in (None, "", "Node"):
            raise invalid("Binding", name, [("target.kind",
                                             "FieldValueNotSupported",
                                             'Unsupported value: "%s": '
                                             'supported values: "Node"'
                                             % target.get("kind"))])
        if not target.get("name"):
            raise invalid("Binding", name, [("target.name",
                                             "FieldValueRequired",
                                             "Required value")])
        pod = self.store.get(pods.skey, ns, name)
        if pod is None:
            raise not_found(pods, name)
        pmd = pod["metadata"]
        if bmd.get("uid") and bmd["uid"] != pmd["uid"]:
            raise conflict(pods, name, "Precondition failed: UID in "
                           "precondition: %s, UID in object meta: %s"
                           % (bmd["uid"], pmd["uid"]))
        if bmd.get("resourceVersion") and \
                bmd["resourceVersion"] != pmd["resourceVersion"]:
            raise conflict(pods, name, OPTIMISTIC)
        spec = pod.get("spec") or {}
        if pmd.get("deletionTimestamp"):
            raise conflict(bres, name, "pod %s is being deleted, cannot be "
                           "assigned to a host" % name)
        if spec.get("nodeName"):
            raise conflict(bres, name, 'pod %s is already assigned to node '
                           '"%s"' % (name, spec["nodeName"]))
        if spec.get("schedulingGates"):
            raise conflict(bres, name, "pod %s has non-empty "
                           ".spec.schedulingGates" % name)
        # copy-on-write along the changed paths (stored objects are never
        # mutated in place, so untouched subtrees can be shared)
        new = dict(pod)
        new["spec"] = dict(spec, nodeName=target["name"])
        new["metadata"] = dict(pmd)
        ann = bmd.get("annotations")
        if isinstance(ann, dict) and ann:
            new["metadata"]["annotations"] = dict(
                pmd.get("annotations") or {}, **ann)
        st = new["status"] = dict(pod.get("status") or {})
        st["conditions"] = list(st.get("conditions") or [])
        set_condition(st, {"type": "PodScheduled", "status": "True",
                           "lastProbeTime": None,
                           "lastTransitionTime": now_ts()})
        st.pop("nominatedNodeName", None)
        stored = self.store.commit(pods.skey, "MODIFIED", new, pod)
        self.on_change(pods, pod, stored)

    def evict_locked(self, ns, name, ev):
        pods = self.reg.by_gvr[("", "v1", "pods")]
        pod = self.store.get(pods.skey, ns, name)
        if pod is None:
            raise not_found(pods, name)
        opts = ev.get("deleteOptions") or {}
        pre = opts.get("preconditions") or {}
        pmd = pod["metadata"]
        if pre.get("uid") and pre["uid"] != pmd["uid"]:
            raise conflict(pods, name, "Precondition failed: UID in "
                           "precondition: %s, UID in object meta: %s"
                           % (pre["uid"], pmd["uid"]))
        if pre.get("resourceVersion") and \
                pre["resourceVersion"] != pmd["resourceVersion"]:
            raise conflict(pods, name, OPTIMISTIC)
        phase = (pod.get("status") or {}).get("phase")
        if pmd.get("deletionTimestamp") or phase in ("Pending", "Succeeded",
                                                     "Failed"):
            self.delete_locked(pods, pod, opts, dry=False)
            return
        skey = ("policy", "poddisruptionbudgets")
        matching = [p for (pns, _), p in self.store.data.get(skey, {}).items()
                    if pns == ns and selector_obj_match(
                        (p.get("spec") or {}).get("selector"),
                        pmd.get("labels"))]
        if len(matching) > 1:
            raise ApiError(500, "InternalError", "This pod has more than one "
                           "PodDisruptionBudget, which the eviction "
                           "subresource does not support.")
        if matching:
            pdb = matching[0]
            pname = pdb["metadata"]["name"]
            st = pdb.get("status") or {}
            if st.get("observedGeneration", 0) < \
                    pdb["metadata"].get("generation", 1):
                raise ApiError(429, "TooManyRequests", "Cannot evict pod as "
                               "it would violate the pod's disruption "
                               "budget.", {"causes": [{
                                   "reason": "DisruptionBudget",
                                   "message": "The disruption budget %s is "
                                   "still being processed by the server."
                                   % pname}], "retryAfterSeconds": 10},
                               headers={"Retry-After": "10"})
            allowed = st.get("disruptionsAllowed", 0)
            if allowed < 0:
                raise ApiError(403, "Forbidden", "pdb disruptions allowed is "
                               "negative")
            if allowed == 0:
                raise ApiError(429, "TooManyRequests", "Cannot evict pod as "
                               "it would violate the pod's disruption "
                               "budget.", {"causes": [{
                                   "reason": "DisruptionBudget",
                                   "message": "The disruption budget %s needs "
                                   "%d healthy pods and has %d currently"
                                   % (pname, st.get("desiredHealthy", 0),
                                      st.get("currentHealthy", 0))}]})
            np = jcopy(pdb)
            nst = np.setdefault("status", {})
            nst["disruptionsAllowed"] = allowed - 1
            nst.setdefault("disruptedPods", {})[name] = now_ts()
            self.store.commit(skey, "MODIFIED", np, pdb)
        self.delete_locked(pods, pod, opts, dry=False)


# ---------------------------------------------------------------------------
# HTTP


class WatchClosed(Exception):
    pass


class Headers(dict):
    """Request headers, keys lower-cased (http.client's parser is slow)."""

    def get(self, key, default=None):
        return dict.get(self, key.lower(), default)

    def __getitem__(self, key):
        return dict.get(self, key.lower())

    def __contains__(self, key):
        return dict.__contains__(self, key.lower())


_DATE = [0, ""]


def http_date():
    now = int(time.time())
    if _DATE[0] != now:
        _DATE[1] = time.strftime("%a, %d %b %Y %H:%M:%S GMT",
                                 time.gmtime(now))
        _DATE[0] = now
    return _DATE[1]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "topogang-fake-apiserver/1"
    sys_version = ""
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):
        pass

    def parse_request(self):
        line = self.raw_requestline.decode("iso-8859-1").rstrip("\r\n")
        self.requestline = line
        self.request_version = "HTTP/1.1"
        self.command = ""
        parts = line.split()
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            self.close_connection = True
            self.send_error(400, "Bad request line %r" % line)
            return False
        self.command, self.path, self.request_version = parts
        h = Headers()
        n = 0
        while True:
            raw = self.rfile.readline(65537)
            if raw in (b"\r\n", b"\n", b""):
                break
            n += 1
            if n > 200 or len(raw) > 65536:
                self.close_connection = True
                self.send_error(431, "Too many or too long headers")
                return False
            k, _, v = raw.decode("iso-8859-1").partition(":")
            k = k.strip().lower()
            v = v.strip()
            if k in h:
                v = dict.get(h, k) + ", " + v
            h[k] = v
        self.headers = h
        conn = (h.get("connection") or "").lower()
        if self.request_version == "HTTP/1.0":
            self.close_connection = conn != "keep-alive"
        else:
            self.close_connection = conn == "close"
        if (h.get("expect") or "").lower() == "100-continue" and \
                self.request_version != "HTTP/1.0":
            self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        return True

    def do_GET(self):
        self.dispatch("GET")

    def do_POST(self):
        self.dispatch("POST")

    def do_PUT(self):
        self.dispatch("PUT")

    def do_PATCH(self):
        self.dispatch("PATCH")

    def do_DELETE(self):
        self.dispatch("DELETE")

    # -- plumbing -------------------------------------------------------------

    def read_body(self):
        te = (self.headers.get("Transfer-Encoding") or "").lower()
        if "chunked" in te:
            out = []
            while True:
                line = self.rfile.readline()
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                out.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(out)
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    def send_raw(self, code, data, ctype="application/json", headers=None):
        fault = self.fault
        hdr = ["HTTP/1.1 %d %s" % (code, PHRASES.get(code, "Status")),
               "Content-Type: " + ctype,
               "Cache-Control: no-cache, private",
               "Date: " + http_date(),
               "Content-Length: %d" % len(data)]
        for k, v in (headers or {}).items():
            hdr.append("%s: %s" % (k, v))
        if self.close_connection:
            hdr.append("Connection: close")
        head = ("\r\n".join(hdr) + "\r\n\r\n").encode()
        self.status_sent = code
        if fault and fault.get("truncate_chunk"):
            self.wfile.write(head + data[:len(data) // 2])
            self.abort_connection()
            return
        self.wfile.write(head + data)

    def send_json(self, code, obj, headers=None):
        self.send_raw(code, jdumps(obj), headers=headers)

    def abort_connection(self):
        self.close_connection = True
        try:
            self.wfile.flush()
        except OSError:
            pass
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def client_gone(self):
        conn = self.connection
        try:
            r, _, _ = select.select([conn], [], [], 0)
            if not r:
                return False
            if isinstance(conn, ssl.SSLSocket):
                # no MSG_PEEK on TLS; a watching client sends nothing, so
                # reading here only ever sees close_notify or EOF
                prev = conn.gettimeout()
                conn.setblocking(False)
                try:
                    return conn.recv(1) == b""
                except (ssl.SSLWantReadError, BlockingIOError):
                    return False
                finally:
                    conn.settimeout(prev)
            return conn.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def dispatch(self, method):
        app = self.server.app
        t0 = time.monotonic()
        self.fault = None
        self.status_sent = 0
        u = urllib.parse.urlsplit(self.path)
        path, query = u.path, u.query
        q = {k: v[0] for k, v in urllib.parse.parse_qs(
            query, keep_blank_values=True).items()} if query else {}
        try:
            body = self.read_body()
        except (OSError, ValueError):
            self.close_connection = True
            return
        counted = False
        try:
            if path.startswith("/_test/") or path == "/_test":
                self.control(app, method, path, q, body)
            else:
                with app.gate:
                    if app.stopping:
                        # kube-apiserver's WithWaitGroup once shutdown
                        # began
                        self.close_connection = True
                        raise ApiError(503, "ServiceUnavailable",
                                       "apiserver is shutting down",
                                       headers={"Retry-After": "1"})
                    if method != "GET":
                        app.writes_in_flight += 1
                        counted = True
                if not app.auth_ok(self.headers.get("Authorization")):
                    raise ApiError(401, "Unauthorized", "Unauthorized")
                is_watch = method == "GET" and qbool(q.get("watch"))
                e = app.apf.admit(path, self.headers.get("User-Agent"),
                                  is_watch)
                if e is not None:
                    raise e
                f = app.faults.match(method, path, query, is_watch)
                if f is not None:
                    self.fault = f
                    if f.get("delay_ms"):
                        time.sleep(float(f["delay_ms"]) / 1000.0)
                    if f.get("status"):
                        self.fault_status(f, is_watch)
                        return
                self.route(app, method, path, q, body)
        except ApiError as e:
            try:
                self.send_json(e.code, e.body(), e.headers)
            except OSError:
                self.close_connection = True
        except (BrokenPipeError, ConnectionResetError, WatchClosed):
            self.close_connection = True
        except Exception as e:   # noqa: BLE001 - report as a 500
            app.log("ERROR %s %s: %s" % (method, self.path,
                                         traceback.format_exc()))
            if self.status_sent:
                # the response (a watch stream) has begun: just cut it
                self.abort_connection()
            else:
                try:
                    self.send_json(500, status_obj(
                        500, "InternalError",
                        "Internal error occurred: %s" % e))
                except OSError:
                    self.close_connection = True
        finally:
            if counted:
                with app.gate:
                    app.writes_in_flight -= 1
                    app.gate.notify_all()
            if not path.startswith("/_test"):
                app.stats.record(method, path, query, self.status_sent)
            if app.log_fp:
                app.log("%s %s %s %.1fms" % (
                    method, self.path, self.status_sent,
                    (time.monotonic() - t0) * 1000))

    def fault_status(self, f, is_watch):
        code = f["status"]
        reason = f.get("reason") or REASONS.get(code, "Unknown")
        msg = f.get("message") or {
            410: "too old resource version: 1 (2)",
            409: "Operation cannot be fulfilled: " + OPTIMISTIC,
            429: "Too many requests, please try again later.",
            500: "Internal error occurred: injected fault",
            401: "Unauthorized",
        }.get(code, "injected fault")
        details = None
        headers = {}
        if code == 429:
            ra = int(f.get("retry_after", 1))
            details = {"retryAfterSeconds": ra}
            if not f.get("no_retry_after_header"):
                headers["Retry-After"] = str(ra)
        if code == 504 and not f.get("message"):
            # kube-apiserver's storage.NewTooLargeResourceVersionError
            rv = self.server.app.store.rv
            msg = "Timeout: Too large resource version: %d, current: %d" \
                % (rv + 100, rv)
            details = too_large_details()
        if f.get("details") is not None:
            details = f["details"]
        body = status_obj(code, reason, msg, details)
        if is_watch and (code == 410 and f.get("watch_error", True) or
                         code == 504 and f.get("watch_error")):
            self.start_chunked()
            self.write_chunks([jdumps({"type": "ERROR", "object": body}) +
                               b"\n"])
            self.end_chunked()
            return
        self.send_json(code, body, headers)

    # -- routing --------------------------------------------------------------

    def route(self, app, method, path, q, body):
        reg = app.reg
        if path.rstrip("/") == "/version":
            return self.send_json(200, VERSION_INFO)
        if path in ("/healthz", "/livez", "/readyz"):
            return self.send_raw(200, b"ok", "text/plain; charset=utf-8")
        if path.rstrip("/") == "/openapi/v3":
            return self.send_json(200, self.openapi_root(reg))
        if path.startswith("/openapi/v3/"):
            return self.send_json(200, self.openapi_gv(reg, path[12:]))
        if path.rstrip("/") == "/openapi/v2":
            # an empty document: kubectl's client-side validation (used for
            # kind: List) then finds no schema and accepts every object
            if "protobuf" in (self.headers.get("Accept") or ""):
                return self.send_raw(200, b"", "application/octet-stream")
            return self.send_json(200, {
                "swagger": "2.0", "info": {"title": "Kubernetes",
                                           "version": VERSION_INFO[
                                               "gitVersion"]},
                "paths": {}, "definitions": {}})
        if path.startswith("/openapi/"):
            raise path_not_found()
        if path.rstrip("/") == "/api":
            return self.send_json(200, {
                "kind": "APIVersions", "versions": ["v1"],
                "serverAddressByClientCIDRs": [{
                    "clientCIDR": "0.0.0.0/0",
                    "serverAddress": "127.0.0.1:%d" % app.port}]})
        if path.rstrip("/") == "/apis":
            groups = []
            for g in reg.groups:
                if g == "":
                    continue
                vs = reg.served_versions(g)
                if vs:
                    groups.append(self.group_doc(g, vs))
            return self.send_json(200, {"kind": "APIGroupList",
                                        "apiVersion": "v1", "groups": groups})
        parts = [p for p in path.split("/") if p]
        if not parts:
            return self.send_json(200, {"paths": ["/api", "/api/v1", "/apis",
                                                  "/version", "/_test"]})
        if parts[0] == "api":
            if len(parts) < 2 or parts[1] != "v1":
                raise path_not_found()
            group, version, rest = "", "v1", parts[2:]
        elif parts[0] == "apis":
            if len(parts) < 2:
                raise path_not_found()
            group = parts[1]
            vs = reg.served_versions(group)
            if not vs:
                raise path_not_found()
            if len(parts) == 2:
                d = self.group_doc(group, vs)
                d["kind"], d["apiVersion"] = "APIGroup", "v1"
                return self.send_json(200, d)
            version, rest = parts[2], parts[3:]
            if version not in vs:
                raise path_not_found()
        else:
            raise path_not_found()
        if not rest:
            if method != "GET":
                raise ApiError(405, "MethodNotAllowed",
                               "the server does not allow this method on the "
                               "requested resource")
            return self.send_json(200, self.resource_list(reg, group,
                                                          version))
        ns = None
        if rest[0] == "namespaces" and len(rest) >= 3:
            r3 = reg.lookup(group, version, rest[2])
            if r3 is not None and r3.namespaced:
                ns = rest[1]
                rest = rest[2:]
        if len(rest) > 3:
            raise path_not_found()
        res = reg.lookup(group, version, rest[0])
        if res is None:
            raise path_not_found()
        name = urllib.parse.unquote(rest[1]) if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else None
        if res.namespaced and name is not None and ns is None:
            raise path_not_found()
        if not res.namespaced and ns is not None:
            raise path_not_found()
        if sub is not None and sub not in res.subs:
            raise path_not_found()
        return self.serve_resource(app, method, res, ns, name, sub, q, body)

    def openapi_root(self, reg):
        paths = {"api/v1": {"serverRelativeURL": "/openapi/v3/api/v1"}}
        for g in reg.groups:
            if g:
                for v in reg.served_versions(g):
                    k = "apis/%s/%s" % (g, v)
                    paths[k] = {"serverRelativeURL": "/openapi/v3/" + k}
        return {"paths": paths}

    def openapi_gv(self, reg, gvpath):
        """A skeleton OpenAPI v3 document: one PATCH operation per kind that
        declares the fieldValidation query parameter, which is what kubectl
        looks for to choose server-side field validation.  No schemas."""
        parts = gvpath.strip("/").split("/")
        if parts[:2] == ["api", "v1"] and len(parts) == 2:
            group, version = "", "v1"
        elif len(parts) == 3 and parts[0] == "apis":
            group, version = parts[1], parts[2]
        else:
            raise path_not_found()
        if version not in (reg.served_versions(group) if group else ["v1"]):
            raise path_not_found()
        paths = {}
        prefix = "/api/v1" if not group else "/apis/%s/%s" % (group, version)
        for r in reg.gv_resources(group, version):
            if "patch" not in r.verbs:
                continue
            gvk = {"group": group, "version": version, "kind": r.kind}
            op = {"x-kubernetes-group-version-kind": gvk,
                  "x-kubernetes-action": "patch",
                  "parameters": [
                      {"name": "fieldValidation", "in": "query",
                       "schema": {"type": "string"}},
                      {"name": "fieldManager", "in": "query",
                       "schema": {"type": "string"}},
                      {"name": "dryRun", "in": "query",
                       "schema": {"type": "string"}}],
                  "responses": {"200": {"description": "OK"}}}
            if r.namespaced:
                p = "%s/namespaces/{namespace}/%s/{name}" % (prefix, r.plural)
            else:
                p = "%s/%s/{name}" % (prefix, r.plural)
            paths[p] = {"patch": op}
        return {"openapi": "3.0.0",
                "info": {"title": "Kubernetes (topogang fake)",
                         "version": VERSION_INFO["gitVersion"]},
                "paths": paths, "components": {"schemas": {}}}

    def group_doc(self, g, vs):
        return {"name": g,
                "versions": [{"groupVersion": g + "/" + v, "version": v}
                             for v in vs],
                "preferredVersion": {"groupVersion": g + "/" + vs[0],
                                     "version": vs[0]}}

    def resource_list(self, reg, group, version):
        out = []
        for r in reg.gv_resources(group, version):
            d = {"name": r.plural, "singularName": r.singular,
                 "namespaced": r.namespaced, "kind": r.kind,
                 "verbs": list(r.verbs)}
            if r.short:
                d["shortNames"] = r.short
            if r.cats:
                d["categories"] = r.cats
            out.append(d)
            for s in r.subs:
                sd = {"name": r.plural + "/" + s, "singularName": "",
                      "namespaced": r.namespaced, "kind": r.kind,
                      "verbs": ["get", "patch", "update"]}
                if s == "binding":
                    sd.update(kind="Binding", verbs=["create"])
                elif s == "eviction":
                    sd.update(group="policy", version="v1", kind="Eviction",
                              verbs=["create"])
                elif s == "scale":
                    sd.update(group="autoscaling", version="v1",
                              kind="Scale")
                elif s == "finalize":
                    sd.update(verbs=["update"])
                out.append(sd)
        gv = version if group == "" else group + "/" + version
        return {"kind": "APIResourceList", "apiVersion": "v1",
                "groupVersion": gv, "resources": out}

    def parse_json(self, body):
        if not body:
            raise bad_request("the request body is empty")
        if body[:4] == b"k8s\x00":
            try:
                return decode_k8s_protobuf(body)
            except (ValueError, IndexError, UnicodeDecodeError) as e:
                raise bad_request("cannot decode protobuf body: %s" % e)
        try:
            return json.loads(body)
        except ValueError as e:
            raise bad_request("couldn't get version/kind; json parse error: "
                              "%s" % e)

    def serve_resource(self, app, method, res, ns, name, sub, q, body):
        store = app.store
        dry = q.get("dryRun") == "All"
        if method == "GET":
            if name is None:
                if qbool(q.get("watch")):
                    return self.serve_watch(app, res, ns, None, q)
                return self.serve_list(app, res, ns, q)
            if sub not in (None, "status"):
                raise ApiError(405, "MethodNotAllowed", "the server does not "
                               "allow this method on the requested resource")
            if qbool(q.get("watch")):
                return self.serve_watch(app, res, ns, name, q)
            with store.lock:
                o = store.get(res.skey, ns, name)
            if o is None:
                raise not_found(res, name)
            if sub is None and wants_table(self.headers.get("Accept")):
                return self.send_json(200, table_of(
                    res, [app.out(res, o)], q.get("includeObject") or
                    "Metadata", {"resourceVersion":
                                 o["metadata"]["resourceVersion"]}))
            return self.send_json(200, app.out(res, o))
        if method == "POST":
            if res.plural == "bindings" or sub == "binding":
                b = self.parse_json(body)
                bname = (b.get("metadata") or {}).get("name")
                if sub == "binding":
                    if bname and bname != name:
                        raise bad_request("name in URL does not match name "
                                          "in Binding object")
                else:
                    name = bname
                    if not name:
                        raise bad_request("name is required")
                if not dry:
                    with store.lock:
                        app.bind_locked(ns, name, b)
                return self.send_json(201, success_status(201))
            if sub == "eviction":
                ev = self.parse_json(body)
                ename = (ev.get("metadata") or {}).get("name")
                if ename and ename != name:
                    raise bad_request("name in URL does not match name in "
                                      "Eviction object")
                if not dry:
                    with store.lock:
                        app.evict_locked(ns, name, ev)
                return self.send_json(201, success_status(201))
            if name is not None:
                raise ApiError(405, "MethodNotAllowed", "the server does not "
                               "allow this method on the requested resource")
            obj = self.parse_json(body)
            with store.lock:
                o = app.create_locked(res, ns, obj, dry)
            return self.send_json(201, app.out(res, o))
        if name is None and method != "DELETE":
            raise ApiError(405, "MethodNotAllowed", "the server does not "
                           "allow this method on the requested resource")
        if method == "PUT":
            obj = self.parse_json(body)
            if not isinstance(obj, dict):
                raise bad_request("the body of the request must be an object")
            obj = app.into(res, obj)
            md = obj.get("metadata") or {}
            if md.get("name") and md["name"] != name:
                raise bad_request("the name of the object (%s) does not "
                                  "match the name on the URL (%s)"
                                  % (md["name"], name))
            if res.namespaced and md.get("namespace") and \
                    md["namespace"] != ns:
                raise bad_request("the namespace of the provided object does "
                                  "not match the namespace sent on the "
                                  "request")
            with store.lock:
                old = store.get(res.skey, ns, name)
                if old is None:
                    if res.create_on_update and sub is None and \
                            not md.get("resourceVersion"):
                        obj.setdefault("metadata", {})["name"] = name
                        o = app.create_locked(res, ns, obj, dry)
                        return self.send_json(201, app.out(res, o))
                    raise not_found(res, name)
                rv = md.get("resourceVersion")
                if not rv:
                    if not res.uncond:
                        raise invalid(res.kind, name, [(
                            "metadata.resourceVersion", "FieldValueInvalid",
                            "Invalid value: 0x0: must be specified for an "
                            "update")])
                elif rv != old["metadata"]["resourceVersion"]:
                    raise conflict(res, name, OPTIMISTIC)
                new = app.prepare_update(res, old, obj, sub)
                o = app.commit_update(res, old, new, dry)
            return self.send_json(200, app.out(res, o))
        if method == "PATCH":
            return self.serve_patch(app, res, ns, name, sub, q, body, dry)
        if method == "DELETE":
            opts = {}
            if body:
                try:
                    opts = self.parse_json(body) or {}
                except ApiError:
                    raise bad_request("invalid DeleteOptions")
            if "gracePeriodSeconds" in q:
                opts["gracePeriodSeconds"] = int(q["gracePeriodSeconds"])
            if q.get("dryRun") == "All" or opts.get("dryRun") == ["All"]:
                dry = True
            if name is None:
                return self.serve_deletecollection(app, res, ns, q, opts, dry)
            if sub is not None:
                raise ApiError(405, "MethodNotAllowed", "the server does not "
                               "allow this method on the requested resource")
            with store.lock:
                old = store.get(res.skey, ns, name)
                if old is None:
                    raise not_found(res, name)
                o = app.delete_locked(res, old, opts, dry)
            return self.send_json(200, app.out(res, o))
        raise ApiError(405, "MethodNotAllowed", "the server does not allow "
                       "this method on the requested resource")

    def serve_patch(self, app, res, ns, name, sub, q, body, dry):
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        store = app.store
        try:
            patch = json.loads(body) if body else None
        except ValueError as e:
            raise bad_request("error decoding patch: %s" % e)
        if ctype not in ("application/merge-patch+json",
                         "application/json-patch+json",
                         "application/strategic-merge-patch+json",
                         "application/apply-patch+yaml"):
            raise ApiError(415, "UnsupportedMediaType", "the body of the "
                           "request was in an unknown format - accepted "
                           "media types include: application/json-patch+json,"
                           " application/merge-patch+json, "
                           "application/apply-patch+yaml")
        if ctype == "application/strategic-merge-patch+json" and \
                not res.builtin:
            raise ApiError(415, "UnsupportedMediaType", "the body of the "
                           "request was in an unknown format - accepted "
                           "media types include: application/json-patch+json,"
                           " application/merge-patch+json, "
                           "application/apply-patch+yaml")
        if ctype == "application/apply-patch+yaml":
            if not q.get("fieldManager"):
                raise invalid("PatchOptions", "", [(
                    "fieldManager", "FieldValueRequired",
                    "Required value: is required for apply patch")])
            if not isinstance(patch, dict):
                raise bad_request("apply patches must be JSON objects in "
                                  "this test server")
        elif ctype != "application/json-patch+json" and \
                not isinstance(patch, dict):
            raise bad_request("patch body must be a JSON object")
        with store.lock:
            old = store.get(res.skey, ns, name)
            if old is None:
                if ctype == "application/apply-patch+yaml" and sub is None:
                    obj = jcopy(patch)
                    obj.setdefault("metadata", {})["name"] = name
                    o = app.create_locked(res, ns, obj, dry)
                    return self.send_json(201, app.out(res, o))
                raise not_found(res, name)
            cur = jcopy(app.out(res, old))
            if ctype == "application/merge-patch+json":
                patched = merge_patch(cur, patch)
            elif ctype == "application/json-patch+json":
                patched = json_patch(cur, patch)
            else:
                patched = strategic_merge(cur, patch) if res.builtin else \
                    merge_patch(cur, patch)
            if not isinstance(patched, dict):
                raise bad_request("patch produced a non-object")
            patched = jcopy(app.into(res, patched))
            prv = (patched.get("metadata") or {}).get("resourceVersion")
            if prv and prv != old["metadata"]["resourceVersion"]:
                raise conflict(res, name, OPTIMISTIC)
            new = app.prepare_update(res, old, patched, sub)
            o = app.commit_update(res, old, new, dry)
        return self.send_json(200, app.out(res, o))

    def serve_deletecollection(self, app, res, ns, q, opts, dry):
        lsel = parse_label_selector(q.get("labelSelector"))
        fsel = parse_field_selector(q.get("fieldSelector"), res)
        out = []
        with app.store.lock:
            for (ons, _), o in sorted(app.store.data.get(res.skey,
                                                         {}).items()):
                if res.namespaced and ns is not None and ons != ns:
                    continue
                view = app.out(res, o)
                if not labels_match(lsel, o["metadata"].get("labels")) or \
                        not fields_match(fsel, view):
                    continue
                out.append(app.out(res, app.delete_locked(res, o, opts,
                                                          dry)))
            rv = app.store.rv
        return self.send_json(200, {"kind": res.kind + "List",
                                    "apiVersion": res.gv,
                                    "metadata": {"resourceVersion": str(rv)},
                                    "items": out})

    # -- list -----------------------------------------------------------------

    def serve_list(self, app, res, ns, q):
        store = app.store
        lsel = parse_label_selector(q.get("labelSelector"))
        fsel = parse_field_selector(q.get("fieldSelector"), res)
        try:
            limit = int(q.get("limit") or 0)
        except ValueError:
            raise bad_request("invalid limit")
        cont = q.get("continue")
        start = None
        with store.lock:
            if cont:
                try:
                    tok = json.loads(base64.b64decode(cont + "=" *
                                                      (-len(cont) % 4)))
                    list_rv = int(tok["rv"])
                    start = tok["start"]
                except (ValueError, KeyError, TypeError):
                    raise bad_request("continue key is not valid: "
                                      "incorrect encoded start "
                                      "resourceVersion (version "
                                      "meta.k8s.io/v1)")
                state = store.state_at(res.skey, list_rv)
                if state is None:
                    raise ApiError(
                        410, "Expired", "The provided continue parameter is "
                        "too old to display a consistent list result. You "
                        "can start a new list without the continue "
                        "parameter, or use the continue token in this "
                        "response to retrieve the remainder of the results. "
                        "Continuing with the provided token results in an "
                        "inconsistent list - objects that were created, "
                        "modified, or deleted between the time the first "
                        "chunk was returned and now may show up in the "
                        "list.", metadata={"continue": self.encode_cont(
                            store.rv, start)})
            elif q.get("resourceVersion") and \
                    q.get("resourceVersionMatch") == "Exact":
                try:
                    list_rv = int(q["resourceVersion"])
                except ValueError:
                    raise bad_request("invalid resourceVersion")
                state = store.state_at(res.skey, list_rv)
                if state is None:
                    raise ApiError(410, "Expired", "too old resource "
                                   "version: %d (%d)"
                                   % (list_rv, store.floor_of(res.skey)))
            else:
                rvq = q.get("resourceVersion")
                if rvq and rvq != "0":
                    try:
                        int(rvq)
                    except ValueError:
                        raise bad_request("invalid resourceVersion")
                list_rv = store.rv
                state = store.data.get(res.skey, {})
            keys = sorted(k for k in state
                          if not (res.namespaced and ns is not None and
                                  k[0] != ns))
            objs = [state[k] for k in keys]
        items = []
        last_key = None
        remaining = 0
        more = False
        filt = bool(lsel or fsel)
        startk = tuple(start) if start else None
        for k, o in zip(keys, objs):
            if startk is not None and k <= startk:
                continue
            if more:
                remaining += 1
                if filt:
                    break
                continue
            view = app.out(res, o)
            if lsel and not labels_match(lsel, o["metadata"].get("labels")):
                continue
            if fsel and not fields_match(fsel, view):
                continue
            if limit and len(items) >= limit:
                more = True
                remaining = 1
                if filt:
                    break
                continue
            items.append(view)
            last_key = k
        md = {"resourceVersion": str(list_rv)}
        if more:
            md["continue"] = self.encode_cont(list_rv, last_key)
            if not filt:
                md["remainingItemCount"] = remaining
        if wants_table(self.headers.get("Accept")):
            return self.send_json(200, table_of(
                res, items, q.get("includeObject") or "Metadata", md))
        if res.builtin:
            items = [{k: v for k, v in i.items()
                      if k not in ("apiVersion", "kind")} for i in items]
        self.send_json(200, {"kind": res.kind + "List", "apiVersion": res.gv,
                             "metadata": md, "items": items})

    @staticmethod
    def encode_cont(rv, key):
        tok = {"v": "meta.k8s.io/v1", "rv": rv,
               "start": list(key) if key else None}
        return base64.b64encode(jdumps(tok)).decode().rstrip("=")

    # -- watch ----------------------------------------------------------------

    def start_chunked(self):
        head = ("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                "Cache-Control: no-cache, private\r\n"
                "Date: %s\r\nTransfer-Encoding: chunked\r\n\r\n"
                % http_date()).encode()
        self.status_sent = 200
        self.wfile.write(head)

    def write_chunks(self, datas):
        buf = b"".join(b"%x\r\n%s\r\n" % (len(d), d) for d in datas if d)
        if buf:
            self.wfile.write(buf)

    def end_chunked(self):
        self.wfile.write(b"0\r\n\r\n")

    def serve_watch(self, app, res, ns, name, q):
        store = app.store
        lsel = parse_label_selector(q.get("labelSelector"))
        fsel = parse_field_selector(q.get("fieldSelector"), res)
        if name is not None:
            fsel.append(("metadata.name", "=", name))
        bookmarks = qbool(q.get("allowWatchBookmarks"))
        initial = q.get("sendInitialEvents")
        rvq = q.get("resourceVersion") or ""
        try:
            timeout = float(q.get("timeoutSeconds")) if q.get(
                "timeoutSeconds") else app.args.watch_timeout
        except ValueError:
            raise bad_request("invalid timeoutSeconds")
        send_initial = rvq in ("", "0")
        if initial is not None:
            if qbool(initial):
                if q.get("resourceVersionMatch") != "NotOlderThan" or \
                        not bookmarks:
                    raise invalid("ListOptions", "", [(
                        "sendInitialEvents", "FieldValueForbidden",
                        "Forbidden: sendInitialEvents requires setting "
                        "resourceVersionMatch to NotOlderThan and "
                        "allowWatchBookmarks")])
                send_initial = True
            else:
                send_initial = False
        if rvq not in ("", "0"):
            try:
                cursor = int(rvq)
            except ValueError:
                raise bad_request("invalid resourceVersion %r" % rvq)
        else:
            cursor = None

        def matches(o):
            md = o["metadata"]
            if res.namespaced and ns is not None and md.get("namespace") != ns:
                return False
            if lsel and not labels_match(lsel, md.get("labels")):
                return False
            if fsel and not fields_match(fsel, app.out(res, o)):
                return False
            return True
        plain = not lsel and not fsel and not (res.namespaced and
                                               ns is not None)

        as_table = wants_table(self.headers.get("Accept"))
        include = q.get("includeObject") or "Metadata"

        def encode(etype, o, ev=None):
            if as_table:
                v = app.out(res, o)
                data = jdumps(table_of(res, [v], include, {
                    "resourceVersion": v["metadata"].get("resourceVersion",
                                                         "")}))
            elif ev is not None and etype == ev.type:
                if ev.cache is None or ev.cache[0] is not res:
                    ev.cache = (res, jdumps(app.out(res, ev.obj)))
                data = ev.cache[1]
            else:
                data = jdumps(app.out(res, o))
            return b'{"type":"' + etype.encode() + b'","object":' + data + \
                b'}\n'

        def bookmark(rv, end=False):
            md = {"resourceVersion": str(rv)}
            if end:
                md["annotations"] = {"k8s.io/initial-events-end": "true"}
            return jdumps({"type": "BOOKMARK", "object": {
                "kind": res.kind, "apiVersion": res.gv,
                "metadata": md}}) + b"\n"

        fault = self.fault
        drop_after = None
        truncate = False
        split = False
        if fault:
            if fault.get("drop_watch_after_events") is not None:
                drop_after = int(fault["drop_watch_after_events"])
            truncate = bool(fault.get("truncate_chunk"))
            split = bool(fault.get("split_chunks"))
            if truncate and drop_after is None:
                drop_after = 0
        bad_event = fault.get("bad_event") if fault else None

        too_large = None
        with app.watch_lock:
            app.watch_seq += 1
            wid = app.watch_seq
            epoch = app.watch_epoch
            bm_epoch = app.bookmark_epoch
            info = {"id": wid, "path": self.path, "events": 0,
                    "since": time.time()}
            app.watches[wid] = info
        slow_s = app.args.slow_watch_timeout
        try:
            # a client that takes nothing for this long is cut off
            self.connection.settimeout(slow_s if slow_s > 0 else None)
        except OSError:
            pass

        def backlog(cur):
            """Events past \\p cur this watcher would be sent: what
            kube-apiserver's cacher holds in the watcher's buffer."""
            with store.lock:
                evs, gone = store.events_since(res.skey, cur)
            if gone is not None:
                return 1 << 30
            return sum(1 for e in evs if plain or matches(e.obj) or
                       (e.old is not None and matches(e.old)))
        try:
            first = []
            with store.lock:
                if cursor is not None and cursor > store.rv:
                    # kube-apiserver's watch cache waits up to 3 s for a
                    # version it has not seen, then answers 504 "Too
                    # large resource version" as an ERROR event
                    end = time.monotonic() + app.args.too_large_wait
                    while cursor > store.rv and time.monotonic() < end:
                        store.cond(res.skey).wait(0.1)
                    if cursor > store.rv:
                        too_large = store.rv
                if cursor is None:
                    cursor = store.rv
                    too_old = None
                else:
                    evs, too_old = store.events_since(res.skey, cursor)
                init_rv = store.rv
                if send_initial:
                    snap = [o for k, o in sorted(
                        store.data.get(res.skey, {}).items())]
                    if rvq not in ("", "0"):
                        cursor = store.rv
                        too_old = None
                else:
                    snap = []
            self.start_chunked()
            if too_large is not None:
                self.write_chunks([jdumps({"type": "ERROR", "object":
                                           status_obj(504, "Timeout",
                                                      "Timeout: Too large "
                                                      "resource version: "
                                                      "%d, current: %d"
                                                      % (cursor, too_large),
                                                      too_large_details())})
                                   + b"\n"])
                self.end_chunked()
                return
            if bad_event is not None:
                # an event that does not decode, then the stream goes on
                first.append(bad_event.encode() + b"\n")
            if too_old is not None:
                self.write_chunks([jdumps({"type": "ERROR", "object":
                                           status_obj(410, "Expired",
                                                      "too old resource "
                                                      "version: %d (%d)"
                                                      % (cursor, too_old))})
                                   + b"\n"])
                self.end_chunked()
                return
            for o in snap:
                if matches(o):
                    first.append(encode("ADDED", o))
            if send_initial and initial is not None and qbool(initial):
                first.append(bookmark(init_rv, end=True))
            sent = 0
            deadline = time.monotonic() + timeout
            bm_iv = app.args.bookmark_interval
            next_bm = time.monotonic() + bm_iv
            pending = first
            while True:
                if info.get("stall_until"):
                    if info.get("hold") is None:
                        if self.stall(app, info, cursor, backlog):
                            break
                    elif time.monotonic() >= info["stall_until"] and \
                            self.end_stall(info, cursor):
                        break
                if pending:
                    sent = self.emit(app, info, pending, sent, drop_after,
                                     truncate, split)
                    pending = []
                now = time.monotonic()
                if app.watch_epoch != epoch:
                    if app.abrupt_epoch:
                        self.abort_connection()
                        raise WatchClosed()
                    if app.error_epoch:
                        self.write_chunks([jdumps({
                            "type": "ERROR", "object": status_obj(
                                410, "Expired", "too old resource version: "
                                "%d (%d)" % (cursor, cursor + 1))}) + b"\n"])
                    break
                if now >= deadline:
                    if bookmarks:
                        self.write_chunks([bookmark(cursor)])
                    break
                if bookmarks and (now >= next_bm or
                                  app.bookmark_epoch != bm_epoch):
                    bm_epoch = app.bookmark_epoch
                    next_bm = now + bm_iv
                    pending = [bookmark(cursor)]
                    continue
                if self.client_gone():
                    raise WatchClosed()
                with store.lock:
                    evs, too_old = store.events_since(res.skey, cursor)
                    if not evs and too_old is None:
                        wait = min(deadline - now, 0.5)
                        if bookmarks:
                            wait = min(wait, max(0.0, next_bm - now))
                        store.cond(res.skey).wait(max(0.005, wait))
                        evs, too_old = store.events_since(res.skey, cursor)
                    head_rv = store.rv
                if too_old is not None:
                    pending = [jdumps({"type": "ERROR", "object": status_obj(
                        410, "Expired", "too old resource version: %d (%d)"
                        % (cursor, too_old))}) + b"\n"]
                    self.emit(app, info, pending, sent, None, False, split)
                    break
                hold = info.get("hold") if info.get("stall_until") else None
                for e in evs:
                    cursor = e.rv
                    if hold is not None and hold.search(
                            e.obj["metadata"].get("name", "")):
                        continue    # withheld (stall-watches hold_regex)
                    if plain:
                        pending.append(encode(e.type, e.obj, e))
                        continue
                    if e.type == "ADDED":
                        if matches(e.obj):
                            pending.append(encode("ADDED", e.obj, e))
                    elif e.type == "MODIFIED":
                        nm, om = matches(e.obj), matches(e.old)
                        if nm and om:
                            pending.append(encode("MODIFIED", e.obj, e))
                        elif nm:
                            pending.append(encode("ADDED", e.obj))
                        elif om:
                            pending.append(encode("DELETED", e.obj))
                    elif matches(e.obj):
                        pending.append(encode("DELETED", e.obj, e))
                cursor = max(cursor, head_rv)
            self.end_chunked()
        except TimeoutError:
            # kube-apiserver's cacher: "Forcing watcher close due to
            # unresponsiveness" -- the buffer stays full, the watch goes
            self.cut_slow(app, info, "the client took nothing for %g s"
                          % slow_s)
            self.abort_connection()
            raise WatchClosed()
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.close_connection = True
            raise WatchClosed()
        finally:
            with app.watch_lock:
                app.watches.pop(wid, None)
            try:
                self.connection.settimeout(None)
            except OSError:
                pass

    def cut_slow(self, app, info, why):
        with app.stats.lock:
            app.stats.watches_cut_slow += 1
        app.log("slow watcher cut off: watch %d %s (%d events sent): %s"
                % (info["id"], info["path"], info["events"], why))

    def stall(self, app, info, cursor, backlog):
        """A stalled watch (POST /_test/stall-watches): nothing at all is
        written (no event, no bookmark), as on a half-open connection,
        until the stall ends or the client goes.  Then "then": "resume"
        goes on where it was, "expired" ends with a 410 ERROR event.
        Meanwhile, once more events wait for it than the watcher's buffer
        holds (--watch-buffer, or the stall's "buffer"), it is cut off as
        kube-apiserver cuts a watcher that does not keep up: the stream
        ends (terminating chunk) without them, and the client must watch
        again from the last version it saw.  True when the watch must
        end."""
        limit = info.get("stall_buffer", app.args.watch_buffer)
        while time.monotonic() < info["stall_until"]:
            if self.client_gone():
                raise WatchClosed()
            if limit > 0:
                n = backlog(cursor)
                if n > limit:
                    self.cut_slow(app, info, "%d events waiting, buffer %d"
                                  % (n, limit))
                    for k in ("stall_until", "stall_then", "hold",
                              "stall_buffer"):
                        info.pop(k, None)
                    self.close_connection = True
                    return True
            time.sleep(0.1)
        return self.end_stall(info, cursor)

    def end_stall(self, info, cursor):
        then = info.pop("stall_then", "resume")
        info.pop("stall_until", None)
        info.pop("hold", None)
        if then == "expired":
            self.write_chunks([jdumps({"type": "ERROR", "object": status_obj(
                410, "Expired", "too old resource version: %d (%d)"
                % (cursor, cursor + 1))}) + b"\n"])
            return True
        return False

    def emit(self, app, info, pending, sent, drop_after, truncate, split):
        out = []
        for data in pending:
            if drop_after is not None and sent >= drop_after:
                self.write_chunks(out)
                if truncate:
                    half = max(1, len(data) // 2)
                    self.wfile.write(b"%x\r\n" % len(data) + data[:half])
                self.abort_connection()
                raise WatchClosed()
            out.append(data)
            sent += 1
        if split and out:
            blob = b"".join(out)
            pieces, i = [], 0
            while i < len(blob):
                n = random.randint(1, 40)
                pieces.append(blob[i:i + n])
                i += n
            self.write_chunks(pieces)
        else:
            self.write_chunks(out)
        info["events"] += len(out)
        with app.stats.lock:
            app.stats.watch_events += len(out)
        return sent

    # -- control API ----------------------------------------------------------

    def control(self, app, method, path, q, body):
        def parsed():
            if not body:
                return {}
            try:
                return json.loads(body)
            except ValueError as e:
                raise bad_request("bad JSON: %s" % e)
        p = path.rstrip("/")
        if p == "/_test/faults":
            if method == "POST":
                spec = parsed()
                specs = spec if isinstance(spec, list) else [spec]
                ids = [app.faults.add(s) for s in specs]
                return self.send_json(201, {"ids": ids, "id": ids[0]
                                            if ids else None})
            if method == "GET":
                return self.send_json(200, {"faults": app.faults.describe()})
            if method == "DELETE":
                app.faults.clear()
                return self.send_json(200, {"ok": True})
        elif p == "/_test/reset" and method == "POST":
            opts = parsed() or {}
            app.faults.clear()
            if opts.get("stats"):
                app.stats.reset()
            if opts.get("objects"):
                with app.store.lock:
                    for skey, b in list(app.store.data.items()):
                        for k, o in list(b.items()):
                            if skey == ("", "namespaces") and \
                                    k[1] in PROTECTED_NS | {"kube-node-lease"}:
                                continue
                            if skey == ("scheduling.k8s.io",
                                        "priorityclasses") and \
                                    k[1].startswith("system-"):
                                continue
                            if skey == ("", "serviceaccounts") and \
                                    k[1] == "default" and \
                                    k[0] in PROTECTED_NS | {"kube-node-lease"}:
                                continue
                            app.store.commit(skey, "DELETED", jcopy(o), o)
            return self.send_json(200, {"ok": True})
        elif p == "/_test/restart-watch" and method == "POST":
            opts = parsed() or {}
            with app.watch_lock:
                n = len(app.watches)
                app.abrupt_epoch = bool(opts.get("abrupt"))
                app.error_epoch = bool(opts.get("send_error"))
                app.watch_epoch += 1
            with app.store.lock:
                if app.error_epoch:
                    # the 410 must also hold for the re-watch
                    app.store.compact()
                app.store.kick_all()
            return self.send_json(200, {"closed": n})
        elif p == "/_test/stats" and method == "GET":
            with app.stats.lock:
                reqs = [{"method": m, "path": pa, "status": s, "count": c}
                        for (m, pa, s), c in sorted(app.stats.counts.items(),
                                                    key=lambda x: (x[0][1],
                                                                   x[0][0],
                                                                   x[0][2]))]
                by_status = collections.Counter()
                for (m, pa, s), c in app.stats.counts.items():
                    by_status[str(s)] += c
                recent = list(app.stats.recent)
                total = app.stats.total
                wev = app.stats.watch_events
                cut = app.stats.watches_cut_slow
            with app.watch_lock:
                watches = [{k: v for k, v in w.items() if k != "hold"}
                           for w in app.watches.values()]
            with app.store.lock:
                rv = app.store.rv
            return self.send_json(200, {
                "total": total, "requests": reqs, "by_status": by_status,
                "watches_open": len(watches), "watches": watches,
                "watch_events_sent": wev, "watches_cut_slow": cut,
                "apf": app.apf.describe(), "recent": recent,
                "resourceVersion": str(rv), "faults": app.faults.describe()})
        elif p == "/_test/apf":
            if method == "POST":
                app.apf.configure(parsed() or {})
            return self.send_json(200, app.apf.describe())
        elif p == "/_test/compact" and method == "POST":
            with app.store.lock:
                app.store.compact()
                rv = app.store.rv
                app.store.kick_all()
            return self.send_json(200, {"resourceVersion": str(rv)})
        elif p == "/_test/bookmark" and method == "POST":
            with app.watch_lock:
                app.bookmark_epoch += 1
            with app.store.lock:
                app.store.kick_all()
            return self.send_json(200, {"ok": True})
        elif p == "/_test/groups":
            if method == "POST":
                opts = parsed()
                g = opts.get("group")
                if not g:
                    raise bad_request("group is required")
                if opts.get("enabled", False):
                    app.reg.disabled.discard(g)
                else:
                    app.reg.disabled.add(g)
            return self.send_json(200, {"disabled": sorted(app.reg.disabled)})
        elif p == "/_test/token" and method == "POST":
            tok = (parsed() or {}).get("token", "")
            if app.token_file:
                tmp = app.token_file + ".tmp"
                with open(tmp, "w") as f:
                    f.write(tok + "\n")
                os.replace(tmp, app.token_file)
            else:
                app.token = tok
            return self.send_json(200, {"ok": True})
        elif p == "/_test/load" and method == "POST":
            doc = parsed()
            n = app.load_docs([doc])
            with app.store.lock:
                rv = app.store.rv
            return self.send_json(200, {"created": n,
                                        "resourceVersion": str(rv)})
        elif p == "/_test/save" and method == "POST":
            if not app.args.state_file:
                raise bad_request("no --state-file")
            app.save_state(app.args.state_file)
            return self.send_json(200, {"ok": True})
        elif p == "/_test/stall-watches" and method == "POST":
            opts = parsed() or {}
            rx = re.compile(opts.get("path_regex") or "")
            until = time.monotonic() + float(opts.get("seconds", 60))
            n = 0
            with app.watch_lock:
                for w in app.watches.values():
                    if rx.search(w["path"]):
                        w["stall_until"] = until
                        w["stall_then"] = opts.get("then", "resume")
                        if opts.get("hold_regex"):
                            w["hold"] = re.compile(opts["hold_regex"])
                        if opts.get("buffer") is not None:
                            w["stall_buffer"] = int(opts["buffer"])
                        n += 1
            with app.store.lock:
                app.store.kick_all()
            return self.send_json(200, {"stalled": n})
        elif p == "/_test/watches" and method == "GET":
            with app.watch_lock:
                return self.send_json(200, {"watches": [
                    {k: v for k, v in w.items() if k != "hold"}
                    for w in app.watches.values()],
                    "cut_slow": app.stats.watches_cut_slow})
        elif p == "/_test/shutdown" and method == "POST":
            self.send_json(200, {"ok": True})
            threading.Thread(target=self.server.app_shutdown,
                             daemon=True).start()
            return
        raise path_not_found()


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256
    tls = None

    def get_request(self):
        sock, addr = self.socket.accept()
        if self.tls is not None:
            # the handshake happens on first use, in the connection's thread
            sock = self.tls.wrap_socket(sock, server_side=True,
                                        do_handshake_on_connect=False)
        return sock, addr

    def app_shutdown(self):
        """Stops as kube-apiserver does: new requests get 503 "apiserver
        is shutting down", the writes in flight finish, then the state is
        saved -- a write answered is a write kept (etcd loses none)."""
        app = self.app
        with app.gate:
            app.stopping = True
            app.gate.wait_for(lambda: app.writes_in_flight == 0, 10)
        if app.args.state_file:
            try:
                app.save_state(app.args.state_file)
            except OSError:
                pass
        self.shutdown()

    def handle_error(self, request, client_address):
        self.app.log("connection error: %s" % traceback.format_exc())


def main(argv=None):
    ap = argparse.ArgumentParser(description="fake Kubernetes API server "
                                 "for tests (see tests/k8s/README.md)")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--token")
    g.add_argument("--token-file")
    ap.add_argument("--history", type=int, default=1000,
                    help="watch events kept per resource (default 1000)")
    ap.add_argument("--log")
    ap.add_argument("--disable-group", action="append", default=[],
                    metavar="GROUP[/VERSION]",
                    help="do not serve this API group (404, as if its CRD "
                    "were not installed); repeatable")
    ap.add_argument("--pod-grace", type=float, default=0.0,
                    help="seconds a bound pod stays terminating after a "
                    "graceful delete (default 0: removed at once)")
    ap.add_argument("--bookmark-interval", type=float, default=60.0,
                    help="seconds between BOOKMARKs on a watch that asked "
                    "for them (default 60: kube-apiserver sends about one "
                    "a minute)")
    ap.add_argument("--apf-qps", type=float, default=0.0,
                    help="API Priority and Fairness: requests admitted per "
                    "second, the rest 429 with Retry-After (default 0: "
                    "off; POST /_test/apf sets it at run time)")
    ap.add_argument("--apf-burst", type=int, default=0,
                    help="APF bucket size (default: qps rounded up)")
    ap.add_argument("--apf-retry-after", type=int, default=1,
                    help="Retry-After seconds of an APF 429 (default 1)")
    ap.add_argument("--slow-watch-timeout", type=float, default=10.0,
                    help="a watch whose client takes no bytes for this "
                    "long is cut off (default 10; 0: never)")
    ap.add_argument("--watch-buffer", type=int, default=100,
                    help="events a stalled watch may have waiting before "
                    "it is cut off (default 100; 0: unlimited)")
    ap.add_argument("--too-large-wait", type=float, default=3.0,
                    help="seconds a watch from a resourceVersion newer "
                    "than the server's waits before its 504 \"Too large "
                    "resource version\" ERROR event (kube-apiserver: 3)")
    ap.add_argument("--watch-timeout", type=float, default=1800.0,
                    help="watch length when the client gives no "
                    "timeoutSeconds")
    ap.add_argument("--no-kubelet", dest="kubelet", action="store_false",
                    help="bound pods stay Pending (default: a fake kubelet "
                    "marks them Running and Ready at once)")
    ap.add_argument("--no-controllers", dest="controllers",
                    action="store_false",
                    help="no PodDisruptionBudget status controller")
    ap.add_argument("--state-file",
                    help="load objects from it at start if present; save on "
                    "SIGTERM/SIGINT and POST /_test/save")
    ap.add_argument("--seed", action="append", default=[],
                    help="JSON file(s) of objects to create at start")
    ap.add_argument("--tls-cert", help="serve HTTPS with this PEM "
                    "certificate (default: plain HTTP)")
    ap.add_argument("--tls-key", help="PEM private key for --tls-cert")
    args = ap.parse_args(argv)
    if bool(args.tls_cert) != bool(args.tls_key):
        ap.error("--tls-cert and --tls-key go together")

    app = App(args)
    srv = Server(("127.0.0.1", args.port), Handler)
    srv.app = app
    if args.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.tls_cert, args.tls_key)
        srv.tls = ctx
    app.port = srv.server_address[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % app.port)
        os.replace(tmp, args.port_file)
    app.log("listening on 127.0.0.1:%d" % app.port)

    def on_signal(signum, frame):
        threading.Thread(target=srv.app_shutdown, daemon=True).start()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        srv.serve_forever(poll_interval=0.2)
    finally:
        srv.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
