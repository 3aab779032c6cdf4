#!/usr/bin/python3
"""How long `osd rm` takes to schedule removals on a large simulated
cluster: the request runs the removal preview (CRUSH-like placement of
every PG, now and with the OSDs at weight 0) before it queues anything.

Usage: bench/schedule_removals.py [--hosts 2000] [--devices-per-host 10] [--ids 1 20]
                                  [--binary target/release/osdkeeper] [--perf FILE]

Starts `osdkeeper demo --hosts N` (no token: the demo is open on
loopback), waits until every host has an inventory, then for each count in
`--ids` asks `POST /api/v1/osds/removals/preview` and `POST
/api/v1/osds/removals` for the first OSD of that many hosts not asked for
yet (the same request as bench/status_load.py). Prints the wall time of
each request, the daemon's CPU time spent meanwhile (user + system, from
/proc: less sensitive to the machine's other load) and the load average
before it, and how long until the removal worker had started every drain
asked for so far (its pacing weighs the CRUSH tree for each queued OSD).
With `--perf FILE`, `perf record -g` samples the daemon during
the first `osd rm` request.
"""
import argparse
import json
import os
import signal
import subprocess
import tempfile
import time

from status_load import call, load, start_demo

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cpu_s(pid):
    with open('/proc/{}/stat'.format(pid)) as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def timed(pid, fn):
    before, cpu0, t0 = load(), cpu_s(pid), time.time()
    out = fn()
    return out, time.time() - t0, cpu_s(pid) - cpu0, before


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--hosts', type=int, default=2000)
    ap.add_argument('--devices-per-host', type=int, default=10)
    ap.add_argument('--ids', type=int, nargs='+', default=[1, 20],
                    help='how many OSDs each request removes (one request per count)')
    ap.add_argument('--binary', default=os.path.join(ROOT, 'target', 'release', 'osdkeeper'))
    ap.add_argument('--no-preview', action='store_true', help='only the osd rm requests')
    ap.add_argument('--perf', help='perf.data file for the first osd rm request')
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    proc, base, filled = start_demo(a.binary, os.path.join(tmp, 'rm.db'), a.hosts, a.devices_per_host, sum(a.ids))
    try:
        osds = call(base + '/api/v1/summary')['osds']
        print('{} hosts x {} devices, {} OSDs; inventories stored after {:.0f} s'.format(
            a.hosts, a.devices_per_host, osds, filled))
        print()
        print('| request | OSDs | wall s | daemon CPU s | load before | then s until all draining |')
        print('|---|---:|---:|---:|---:|---:|')
        next_host = 1
        perf = None
        for n in a.ids:
            hosts = ['sim-{:04d}'.format(i) for i in range(next_host, next_host + n)]
            next_host += n
            ids = [call(base + '/api/v1/osds?host={}&limit=1'.format(h))[0]['id'] for h in hosts]
            body = json.dumps({'ids': ids})
            blockers = False
            if not a.no_preview:
                p, wall, cpu, before = timed(
                    proc.pid, lambda: call(base + '/api/v1/osds/removals/preview', 'POST', body, timeout=1800))
                blockers = bool(p['blockers'])
                print('| preview `POST /api/v1/osds/removals/preview` | {} | {:.2f} | {:.2f} | {} | |'.format(
                    n, wall, cpu, before), flush=True)
            if a.perf and perf is None:
                perf = subprocess.Popen(['perf', 'record', '-g', '-o', a.perf, '-p', str(proc.pid)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(1)
            body = json.dumps({'ids': ids, 'ignore_preview_blockers': blockers})
            _, wall, cpu, before = timed(
                proc.pid, lambda: call(base + '/api/v1/osds/removals', 'POST', body, timeout=1800))
            if perf is not None and perf.poll() is None:
                perf.send_signal(signal.SIGINT)
                perf.wait()
            t1 = time.time()
            while True:
                states = [r['state'] for r in call(base + '/api/v1/osds/removals')]
                if states.count('draining') >= next_host - 1 or time.time() - t1 > 600:
                    break
                time.sleep(0.2)
            print('| osd rm `POST /api/v1/osds/removals` | {} | {:.2f} | {:.2f} | {} | {:.1f} |'.format(
                n, wall, cpu, before, time.time() - t1), flush=True)
    finally:
        proc.terminate()
        proc.wait()


if __name__ == '__main__':
    main()
