#!/usr/bin/env python3
"""tests/browser.py - load a page in headless Chromium, report its console
errors, evaluate DOM checks and keep a screenshot.  Standard library only:
the DevTools protocol over --remote-debugging-pipe (fd 3 in, fd 4 out,
NUL-terminated JSON messages); nothing is downloaded.

    browser.py URL --eval JS --png FILE [--size 1600x1000] [--wait-js JS]

Prints one JSON object on stdout:
    {"errors": [...console errors and uncaught exceptions...],
     "result": <the value of JS, JSON-serialisable>}
Exit status 0 when the page loaded (errors are the caller's to judge),
3 when chromium cannot run here (the caller skips), 1 otherwise.

Chromium runs as the tests need it (root in a container): --headless
--no-sandbox --disable-gpu --disable-quic --no-first-run
--disable-background-networking --disable-component-update --disable-sync
and a fresh --user-data-dir, removed afterwards.
"""
import argparse
import base64
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync",
         "--remote-debugging-pipe", "--hide-scrollbars"]


def chromium():
    for c in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(c)
        if p:
            return p
    return None


class Cdp:
    def __init__(self, wfd, rfd):
        self.w = os.fdopen(wfd, "wb", buffering=0)
        self.r = os.fdopen(rfd, "rb", buffering=0)
        self.buf = b""
        self.n = 0
        self.events = []

    def send(self, method, params=None, session=None):
        self.n += 1
        msg = {"id": self.n, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        self.w.write(json.dumps(msg).encode() + b"\0")
        return self.n

    def read(self, deadline):
        while b"\0" not in self.buf:
            if time.time() > deadline:
                raise TimeoutError("no answer from chromium")
            chunk = self.r.read(65536)
            if not chunk:
                raise EOFError("chromium closed the pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=None, timeout=60):
        want = self.send(method, params, session)
        deadline = time.time() + timeout
        while True:
            m = self.read(deadline)
            if m.get("id") == want:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, name, timeout=60):
        deadline = time.time() + timeout
        for i, m in enumerate(self.events):
            if m.get("method") == name:
                del self.events[i]
                return m
        while True:
            m = self.read(deadline)
            if m.get("method") == name:
                return m
            self.events.append(m)


def errors_of(events):
    out = []
    for m in events:
        meth, p = m.get("method"), m.get("params", {})
        if meth == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            out.append("exception: %s %s" % (
                d.get("text", ""),
                d.get("exception", {}).get("description", "")))
        elif meth == "Runtime.consoleAPICalled" and \
                p.get("type") in ("error", "assert"):
            out.append("console.%s: %s" % (p.get("type"), " ".join(
                str(a.get("value", a.get("description", "")))
                for a in p.get("args", []))))
        elif meth == "Log.entryAdded" and \
                p.get("entry", {}).get("level") == "error":
            e = p["entry"]
            out.append("log: %s %s" % (e.get("text", ""), e.get("url", "")))
    return out


def high(fd):
    n = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return n


def run(a):
    exe = chromium()
    if not exe:
        print("no chromium (scripts/bootstrap installs it)", file=sys.stderr)
        return 3
    w, h = (int(x) for x in a.size.split("x"))
    prof = tempfile.mkdtemp(prefix="tg-chromium-")
    # fd 3: chromium reads commands; fd 4: it writes answers
    # the pipes away from 3 and 4, which the child gets
    cmd_r, cmd_w, ans_r, ans_w = (high(fd) for fd in os.pipe() + os.pipe())
    try:
        os.dup2(cmd_r, 3)
        os.dup2(ans_w, 4)
        proc = subprocess.Popen(
            [exe] + FLAGS + ["--user-data-dir=" + prof,
                             "--window-size=%d,%d" % (w, h), "about:blank"],
            pass_fds=(3, 4), stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(prof, "stderr.log"), "wb"))
    except OSError as e:
        print("cannot start chromium: %s" % e, file=sys.stderr)
        shutil.rmtree(prof, ignore_errors=True)
        return 3
    finally:
        os.close(3)
        os.close(4)
        os.close(cmd_r)
        os.close(ans_w)
    cdp = Cdp(cmd_w, ans_r)
    try:
        try:
            cdp.call("Browser.getVersion", timeout=30)
        except (EOFError, TimeoutError) as e:
            log = open(os.path.join(prof, "stderr.log"), "rb").read()
            print("chromium does not run here: %s\n%s" % (
                e, log.decode(errors="replace")[-2000:]), file=sys.stderr)
            return 3
        tid = cdp.call("Target.createTarget", {"url": "about:blank"})
        sid = cdp.call("Target.attachToTarget",
                       {"targetId": tid["targetId"], "flatten": True})
        s = sid["sessionId"]
        for m in ("Page.enable", "Runtime.enable", "Log.enable"):
            cdp.call(m, session=s)
        cdp.call("Emulation.setDeviceMetricsOverride",
                 {"width": w, "height": h, "deviceScaleFactor": 1,
                  "mobile": False}, session=s)
        cdp.call("Page.navigate", {"url": a.url}, session=s)
        cdp.wait_event("Page.loadEventFired", timeout=a.timeout)
        deadline = time.time() + a.timeout
        if a.wait_js:
            while time.time() < deadline:
                r = cdp.call("Runtime.evaluate",
                             {"expression": a.wait_js,
                              "returnByValue": True}, session=s)
                if r.get("result", {}).get("value"):
                    break
                time.sleep(0.2)
        time.sleep(a.settle)
        r = cdp.call("Runtime.evaluate",
                     {"expression": a.eval, "returnByValue": True,
                      "awaitPromise": True}, session=s)
        if "exceptionDetails" in r:
            result = {"eval_error": r["exceptionDetails"].get("text")}
        else:
            result = r.get("result", {}).get("value")
        if a.png:
            shot = cdp.call("Page.captureScreenshot", {"format": "png"},
                            session=s)
            with open(a.png, "wb") as f:
                f.write(base64.b64decode(shot["data"]))
        # drain what is queued (events arrive with the answers above)
        print(json.dumps({"errors": errors_of(cdp.events),
                          "result": result}))
        try:
            cdp.call("Browser.close", timeout=5)
        except Exception:
            pass
        return 0
    finally:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(prof, ignore_errors=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("url")
    p.add_argument("--eval", required=True)
    p.add_argument("--png")
    p.add_argument("--size", default="1600x1000")
    p.add_argument("--wait-js")
    p.add_argument("--settle", type=float, default=0.3)
    p.add_argument("--timeout", type=float, default=60)
    sys.exit(run(p.parse_args()))


if __name__ == "__main__":
    main()
