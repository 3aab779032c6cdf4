#!/usr/bin/python3
"""How soon the removal worker acts once a gate opens, on the real sandbox
(issue 14, item 3): runs the sandbox removal test and, beside it, watches
the test's cluster from outside; then sets the moments each gate of the
osd.4 removal opened beside the moments the daemon issued the step it
gates (the test's `timeline` lines, times from the daemon's action log).

Usage: bench/removal_gates.py [--every 0.1] [--osd 4]

The test runs with TMPDIR set to a fresh directory, so that the one
sandbox appearing there is this run's (other sandboxes may run on the
machine). The watcher polls through one connection (Ceph's Python binding,
as the admin in the sandbox's ceph.conf), so its own cost is a few
milliseconds per poll: `osd dump`, `osd df`, plain `safe-to-destroy`
(rc 0: safe), and `blkid` on the OSD's loop device. Gates:

  (pgs0)     the OSD at CRUSH weight 0 holds 0 PGs (`osd df`; shown beside
             the daemon's own first sample of 0 PGs)
  drained    the OSD at CRUSH weight 0 holds 0 PGs and safe-to-destroy says yes
             -> stop-daemon
  down       the OSD is marked down                 -> purge
  gone       the OSD is no longer in the OSD map    -> zap
  (zap)      the zap finished (action log)          -> done (the removal's end)

A gap below the poll interval means the daemon saw it first.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def now_ms():
    return int(time.time() * 1000)


def watch(tmp, osd, every, seen, stop):
    """Records in `seen` the first moment (ms) each gate was seen open."""
    import rados

    conf = None
    while conf is None and not stop.is_set():
        found = glob.glob(os.path.join(tmp, "osdkeeper-sandbox*", "cluster", "run", "loops"))
        if found:
            conf = os.path.join(os.path.dirname(os.path.dirname(found[0])), "ceph.conf")
        time.sleep(0.5)
    if conf is None:
        return
    device = None
    for line in open(os.path.join(os.path.dirname(conf), "run", "loops")):
        parts = line.split()
        if parts and parts[0] == "osd.%d" % osd:
            device = parts[1]
    while not stop.is_set():
        try:
            cluster = rados.Rados(conffile=conf)
            cluster.connect(timeout=30)
            break
        except rados.Error:
            # The loop devices are attached before the monitor starts.
            time.sleep(0.5)
    else:
        return

    def mon(prefix, **kw):
        return cluster.mon_command(json.dumps(dict(prefix=prefix, format="json", **kw)), b"")

    def mgr(prefix, **kw):
        return cluster.mgr_command(json.dumps(dict(prefix=prefix, **kw)), b"")

    def first(gate, t):
        if gate not in seen:
            seen[gate] = t
            print("watch: %s at %d" % (gate, t), file=sys.stderr)

    while not stop.is_set():
        t = now_ms()
        rc, out, _ = mon("osd dump")
        me = [o for o in json.loads(out)["osds"] if o["osd"] == osd] if rc == 0 else None
        if me == [] and "weight0" in seen:
            first("gone", t)
        elif me:
            if me[0]["up"] == 0 and "drained" in seen:
                first("down", t)
            rc, out, _ = mgr("osd df", format="json")
            node = [n for n in json.loads(out)["nodes"] if n["id"] == osd] if rc == 0 else []
            if node and node[0]["crush_weight"] == 0:
                first("weight0", t)
                if node[0]["pgs"] == 0:
                    first("pgs0", t)
                if node[0]["pgs"] == 0 and mgr("osd safe-to-destroy", ids=[str(osd)])[0] == 0:
                    first("drained", t)
        if "gone" in seen and device:
            blkid = subprocess.run(["blkid", "-p", "-o", "value", "-s", "TYPE", device], capture_output=True)
            if not blkid.stdout.strip():
                first("wiped", t)
                return
        time.sleep(every)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--every", type=float, default=0.1)
    p.add_argument("--osd", type=int, default=4)
    args = p.parse_args()
    tmp = tempfile.mkdtemp(prefix="removal-gates-")
    seen, stop = {}, threading.Event()
    watcher = threading.Thread(target=watch, args=(tmp, args.osd, args.every, seen, stop), daemon=True)
    watcher.start()
    started = time.time()
    test = subprocess.run(
        ["cargo", "test", "--test", "sandbox_removal", "--", "--nocapture"],
        cwd=ROOT, env=dict(os.environ, TMPDIR=tmp), capture_output=True, text=True,
    )
    stop.set()
    output = test.stdout + test.stderr
    if test.returncode != 0:
        sys.exit("the test failed:\n" + output[-4000:])
    issued, ended, done, daemon_pgs0 = {}, {}, None, None
    for line in output.splitlines():
        m = re.search(r"timeline osd\.%d: sample 0 PGs \(at (\d+)\)" % args.osd, line)
        if m and daemon_pgs0 is None:
            daemon_pgs0 = int(m.group(1))
        m = re.search(r'timeline osd\.%d: "(.*)" issued .* took (-?\d+) ms \(at (\d+)\)' % args.osd, line)
        if m:
            effect = json.loads(m.group(1).replace('\\"', '"'))["effect"]
            issued[effect], ended[effect] = int(m.group(3)), int(m.group(3)) + int(m.group(2))
        m = re.search(r"timeline osd\.%d: done .*\(at (\d+)\)" % args.osd, line)
        if m:
            done = int(m.group(1))
    print("\n".join(l for l in output.splitlines() if "timeline osd.%d" % args.osd in l))
    load = open("/proc/loadavg").read().split()[:3]
    print("load average at the end: %s; test and build %.0f s" % (" ".join(load), time.time() - started))
    print("| gate | seen open (outside) | step | issued | gate -> step |")
    print("|---|---:|---|---:|---:|")
    rows = [("drained", seen.get("drained"), "stop-daemon", issued.get("stop-daemon")),
            ("down", seen.get("down"), "purge", issued.get("purge")),
            ("gone", seen.get("gone"), "zap", issued.get("zap")),
            ("zap finished", ended.get("zap"), "done", done)]
    t0 = seen.get("weight0") or min(v for v in issued.values())

    def rel(v):
        return "%.2f s" % ((v - t0) / 1000) if v else "?"

    for gate, opened, step, at in rows:
        gap = "%.2f s" % ((at - opened) / 1000) if opened and at else "?"
        print("| %s | %s | %s | %s | %s |" % (gate, rel(opened), step, rel(at), gap))
    print("(times from the drain's start: osd.%d seen at CRUSH weight 0; 0 PGs seen outside at %s,"
          " by the daemon at %s; wiped label seen at %s)"
          % (args.osd, rel(seen.get("pgs0")), rel(daemon_pgs0), rel(seen.get("wiped"))))


main()
