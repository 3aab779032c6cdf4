#!/usr/bin/python3
"""Load benchmark: the routes dashboards and scripts poll, under wrk, on a
simulated cluster of 2000 hosts x 10 disks with 20 drains running.

Usage: bench/status_load.py [--hosts 2000] [--devices-per-host 10] [--drains 20]
                            [--seconds 10] [--rate 2000] [--binary target/release/osdkeeper]

Starts `osdkeeper demo --hosts N --max-draining <drains>` (no token: the
demo is open on loopback),
waits until every host has an inventory, asks for the removal of one OSD
on each of the first `--drains` hosts, waits until they drain, then runs
`wrk -t2 -c16 -d<seconds>s --latency` against each route in turn and prints
a Markdown table with the load average before each run (the machine may be
shared) and how many drains were running. Then the same routes again, paced
at about `--rate` requests/s (wrk's Lua `delay()`): the latency at that
rate, not at the most the machine can serve.
"""
import argparse
import json
import os
import re
import subprocess
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROUTES = [
    ('osd rm status', '/api/v1/osds/removals'),
    ('healthz', '/healthz'),
    ('summary', '/api/v1/summary'),
    ('OSDs, first page of 100', '/api/v1/osds?limit=100'),
]


def call(url, method='GET', body=None, timeout=120):
    req = urllib.request.Request(url, method=method, data=body.encode() if body else None,
                                 headers={'Content-Type': 'application/json'} if body else {})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def to_ms(text):
    m = re.match(r'([\d.]+)(us|ms|s|m)$', text)
    value, unit = float(m.group(1)), m.group(2)
    return value * {'us': 0.001, 'ms': 1.0, 's': 1000.0, 'm': 60000.0}[unit]


def wrk(url, seconds, script=None):
    extra = ['-s', script] if script else []
    out = subprocess.run(['wrk', '-t2', '-c16', '-d{}s'.format(seconds), '--latency'] + extra + [url],
                         capture_output=True, text=True, check=True).stdout
    row = {'rps': float(re.search(r'Requests/sec:\s+([\d.]+)', out).group(1))}
    for pct in ('50', '90', '99'):
        row['p' + pct] = to_ms(re.search(r'^\s+{}%\s+(\S+)'.format(pct), out, re.M).group(1))
    row['max'] = to_ms(re.search(r'^\s+Latency\s+\S+\s+\S+\s+(\S+)', out, re.M).group(1))
    bad = re.search(r'Non-2xx or 3xx responses: (\d+)', out)
    row['non2xx'] = int(bad.group(1)) if bad else 0
    errors = re.search(r'Socket errors: (.*)', out)
    row['errors'] = errors.group(1).strip() if errors else ''
    return row


def table(base, seconds, script=None):
    print('| route | requests/s | p50 ms | p90 ms | p99 ms | max ms | non-2xx | load before |')
    print('|---|---:|---:|---:|---:|---:|---:|---:|')
    rows = {}
    for name, path in ROUTES:
        before = load()
        r = wrk(base + path, seconds, script)
        rows[name] = r
        print('| {} `{}` | {:.0f} | {:.2f} | {:.2f} | {:.2f} | {:.1f} | {} | {} |'.format(
            name, path, r['rps'], r['p50'], r['p90'], r['p99'], r['max'], r['non2xx'], before), flush=True)
    return rows


def start_demo(binary, db, hosts, devices_per_host, max_draining):
    """`osdkeeper demo` on a free loopback port, once every host has an
    inventory: the process, its base URL and the seconds the inventories took."""
    proc = subprocess.Popen([binary, 'demo', '--listen', '127.0.0.1:0', '--db', db,
                             '--hosts', str(hosts), '--devices-per-host', str(devices_per_host),
                             '--max-draining', str(max_draining)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        addr = None
        for line in proc.stdout:
            if line.startswith('listening on '):
                addr = line.split()[-1]
                break
        base = 'http://' + addr
        t0 = time.time()
        while call(base + '/api/v1/summary')['hosts_without_inventory'] > 0:
            if time.time() - t0 > 600:
                raise SystemExit('inventories did not arrive')
            time.sleep(1)
        return proc, base, time.time() - t0
    except BaseException:
        proc.terminate()
        proc.wait()
        raise


def load():
    with open('/proc/loadavg') as f:
        return f.read().split()[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--hosts', type=int, default=2000)
    ap.add_argument('--devices-per-host', type=int, default=10)
    ap.add_argument('--drains', type=int, default=20)
    ap.add_argument('--seconds', type=int, default=10)
    ap.add_argument('--rate', type=int, default=2000,
                    help='requests/s of the second, paced round (0: none)')
    ap.add_argument('--binary', default=os.path.join(ROOT, 'target', 'release', 'osdkeeper'))
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    proc, base, filled = start_demo(a.binary, os.path.join(tmp, 'load.db'), a.hosts, a.devices_per_host, a.drains)
    try:
        hosts = ['sim-{:04d}'.format(i) for i in range(1, a.drains + 1)]
        ids = [call(base + '/api/v1/osds?host={}&limit=1'.format(h))[0]['id'] for h in hosts]
        t1 = time.time()
        call(base + '/api/v1/osds/removals', 'POST',
             json.dumps({'ids': ids, 'ignore_preview_blockers': True}), timeout=900)
        scheduled = time.time() - t1
        t2 = time.time()
        while True:
            states = [s['state'] for s in call(base + '/api/v1/osds/removals')]
            draining = states.count('draining')
            if draining >= len(ids) or time.time() - t2 > 120:
                break
            time.sleep(1)
        print('{} hosts x {} devices; all inventories stored {:.0f} s after start; `osd rm` of {} OSDs took {:.0f} s; '
              '{} of them draining; wrk -t2 -c16 -d{}s --latency'.format(
                  a.hosts, a.devices_per_host, filled, len(ids), scheduled, draining, a.seconds))
        print()
        rows = table(base, a.seconds)
        if a.rate:
            # wrk's delay() pauses each connection before each request:
            # 16 connections each waiting 16000/rate ms ask about `rate`
            # requests/s (a little less: the answer's own time adds up).
            script = os.path.join(tmp, 'paced.lua')
            with open(script, 'w') as f:
                f.write('function delay()\n  return {}\nend\n'.format(max(1, int(16000 / a.rate) - 1)))
            print()
            print('paced: each of the 16 connections waits {} ms before each request (about {} requests/s)'.format(
                max(1, int(16000 / a.rate) - 1), a.rate))
            print()
            table(base, a.seconds, script)
        states = [s['state'] for s in call(base + '/api/v1/osds/removals')]
        print()
        print('after the runs: {} removals draining; status at {:.0%} of /healthz\'s throughput'.format(
            states.count('draining'), rows['osd rm status']['rps'] / rows['healthz']['rps']))
    finally:
        proc.terminate()
        proc.wait()


if __name__ == '__main__':
    main()
