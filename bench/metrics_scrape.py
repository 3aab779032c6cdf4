#!/usr/bin/python3
"""Scrape benchmark: `/metrics` on a simulated cluster of 2000 hosts x 24
disks, the daemon's CPU time per scrape as well as the wall time (the
machine may be shared: CPU time says more than wall time then).

Usage: bench/metrics_scrape.py [--hosts 2000] [--devices-per-host 24] [--scrapes 50]
                               [--binary target/release/osdkeeper]

Starts `osdkeeper demo --hosts N` (simulated agents in the process, no
token on loopback), waits until every host has an inventory, measures the
daemon's CPU time without scrapes (its own background: the poller, the
simulated cluster) over as long as the scrapes will take, then scrapes
`/metrics` one after another. Prints the median and max wall time, the
CPU time per scrape (the background taken off), the answer's size and the
load average.
"""
import argparse
import json
import os
import statistics
import time

from dashboard_scale import ROOT, call, start_demo
from fleet_scale import cpu_s, load


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--hosts', type=int, default=2000)
    ap.add_argument('--devices-per-host', type=int, default=24)
    ap.add_argument('--scrapes', type=int, default=50)
    ap.add_argument('--binary', default=os.path.join(ROOT, 'target', 'release', 'osdkeeper'))
    a = ap.parse_args()
    proc, base = start_demo(a.binary, a.hosts, a.devices_per_host, 'scrape.db')
    try:
        t0 = time.time()
        while json.loads(call(base + '/api/v1/summary')[1])['hosts_without_inventory'] > 0:
            if time.time() - t0 > 900:
                raise SystemExit('inventories did not arrive')
            time.sleep(1)
        time.sleep(5)
        # The first scrape may build what it reads from.
        first, _ = call(base + '/metrics')
        span = statistics.median(call(base + '/metrics')[0] for _ in range(3)) * a.scrapes
        c0 = cpu_s(proc.pid)
        time.sleep(span)
        background = (cpu_s(proc.pid) - c0) / span
        c1 = cpu_s(proc.pid)
        w1 = time.time()
        times = []
        for _ in range(a.scrapes):
            t, data = call(base + '/metrics')
            times.append(t)
        cpu = cpu_s(proc.pid) - c1 - background * (time.time() - w1)
        print('{} hosts x {} devices: /metrics ({:.0f} KiB, {} lines) first {:.1f} ms; of the next {}: median {:.1f} ms, '
              'max {:.1f} ms; daemon CPU {:.1f} ms per scrape (background {:.2f} s of CPU per s taken off); '
              'load {}'.format(a.hosts, a.devices_per_host, len(data) / 1024, data.count(b'\n'), first * 1000,
                               a.scrapes, statistics.median(times) * 1000, max(times) * 1000,
                               cpu / a.scrapes * 1000, background, load()))
    finally:
        proc.terminate()
        proc.wait()


if __name__ == '__main__':
    main()
