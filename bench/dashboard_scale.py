#!/usr/bin/python3
"""Scale benchmark: the API calls the dashboard makes, on a simulated
cluster of 2000 hosts x 10 disks (20000 devices).

Usage: bench/dashboard_scale.py [--hosts 2000] [--devices-per-host 10] [--runs 10]

Starts `osdkeeper demo --hosts N`, waits until every host has an inventory,
then times each call (wall time of the HTTP request, median and max of the
runs) and the daemon's resident memory, and counts what the live stream
sends in 10 s. Prints a Markdown table.
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPEC = """service_type: osd
service_id: all_ssds
placement:
  host_pattern: 'sim-*'
encrypted: true
data_devices:
  rotational: 0
"""


def call(url, method='GET', body=None):
    req = urllib.request.Request(url, method=method, data=body.encode() if body else None,
                                 headers={'Content-Type': 'application/yaml'} if body else {})
    t0 = time.perf_counter()
    with urllib.request.urlopen(req, timeout=120) as r:
        data = r.read()
    return time.perf_counter() - t0, data


def stream_for(base, seconds):
    """Reads the live stream for `seconds`: (`hosts` messages, hosts named, bytes)."""
    messages = names = size = 0
    end = time.time() + seconds
    event = None
    with urllib.request.urlopen(base + '/api/v1/stream', timeout=seconds + 5) as r:
        while time.time() < end:
            line = r.readline()
            if not line:
                break
            size += len(line)
            line = line.decode().strip()
            if line.startswith('event:'):
                event = line[6:].strip()
            elif line.startswith('data:') and event == 'hosts':
                messages += 1
                names += len(json.loads(line[5:])['hosts'])
    return messages, names, size


def rss_mib(pid):
    with open('/proc/{}/status'.format(pid)) as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1]) / 1024.0
    return 0.0


def start_demo(binary, hosts, devices_per_host, db_name):
    """`osdkeeper demo` on a free loopback port, its database in a new
    temporary directory: (the process, its base URL)."""
    db = os.path.join(tempfile.mkdtemp(), db_name)
    proc = subprocess.Popen([binary, 'demo', '--listen', '127.0.0.1:0', '--db', db,
                             '--hosts', str(hosts), '--devices-per-host', str(devices_per_host)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for line in proc.stdout:
        if line.startswith('listening on '):
            return proc, 'http://' + line.split()[-1]
    proc.wait()
    raise SystemExit('the demo did not start')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--hosts', type=int, default=2000)
    ap.add_argument('--devices-per-host', type=int, default=10)
    ap.add_argument('--runs', type=int, default=10)
    ap.add_argument('--binary', default=os.path.join(ROOT, 'target', 'release', 'osdkeeper'))
    a = ap.parse_args()
    proc, base = start_demo(a.binary, a.hosts, a.devices_per_host, 'scale.db')
    try:
        t0 = time.time()
        while True:
            _, data = call(base + '/api/v1/devices?offset={}&limit=50'.format(a.hosts - 50))
            if all(h['inventory'] for h in json.loads(data)):
                break
            if time.time() - t0 > 600:
                raise SystemExit('inventories did not arrive')
            time.sleep(1)
        filled = time.time() - t0
        calls = [
            ('dashboard page', 'GET', '/', None),
            ('hosts + devices, first page of 50', 'GET', '/api/v1/devices?offset=0&limit=50', None),
            ('hosts + devices, last page of 50', 'GET', '/api/v1/devices?offset={}&limit=50'.format(a.hosts - 50), None),
            ('host search (q=sim-19)', 'GET', '/api/v1/devices?q=sim-19&limit=50', None),
            ('summary (page header)', 'GET', '/api/v1/summary', None),
            ('unreachable hosts, first 12', 'GET', '/api/v1/hosts?unreachable=true&limit=12', None),
            ('hosts (all)', 'GET', '/api/v1/hosts', None),
            ('OSDs, first page of 100 (picker)', 'GET', '/api/v1/osds?limit=100', None),
            ('OSD search (q=sim-0007)', 'GET', '/api/v1/osds?q=sim-0007&limit=100', None),
            ('OSDs (all)', 'GET', '/api/v1/osds', None),
            ('removal status', 'GET', '/api/v1/osds/removals', None),
            ('events (latest 100)', 'GET', '/api/v1/events?limit=100', None),
            ('dry-run of a spec matching every host', 'POST', '/api/v1/specs?dry_run=true', SPEC),
            ('metrics', 'GET', '/metrics', None),
        ]
        rows = []
        for name, method, path, body in calls:
            times = []
            size = 0
            for _ in range(a.runs):
                t, data = call(base + path, method, body)
                times.append(t)
                size = len(data)
            rows.append((name, statistics.median(times), max(times), size))
        print('{} hosts x {} devices ({} devices); all inventories stored {:.0f} s after start; daemon RSS {:.0f} MiB'.format(
            a.hosts, a.devices_per_host, a.hosts * a.devices_per_host, filled, rss_mib(proc.pid)))
        print()
        messages, names, size = stream_for(base, 10.0)
        print('live stream over 10 s: {} `hosts` messages naming {} hosts, {:.0f} KiB in all'.format(
            messages, names, size / 1024))
        print()
        print('| call | median ms | max ms | response KiB |')
        print('|---|---:|---:|---:|')
        for name, med, mx, size in rows:
            print('| {} | {:.1f} | {:.1f} | {:.0f} |'.format(name, med * 1000, mx * 1000, size / 1024))
    finally:
        proc.terminate()
        proc.wait()


if __name__ == '__main__':
    main()
