#!/usr/bin/python3
"""Benchmark: `osdkeeper preview` against the cephadm oracle (preview.py --no-simulate).

Usage: bench/preview_vs_oracle.py [--runs N] [--oracle-runs M] [--sizes 2000x24,5000x24]

Both programs get the same files: an inventory from the oracle's gen.py (seed 42)
and bench/specs.yaml (two OSD specs with host_pattern '*', one simple, one with
size/model filters and a limit). Each run is the whole process, JSON to
/dev/null; wall time is measured around the process, peak memory is the
child's ru_maxrss and CPU time its ru_utime + ru_stime (os.wait4). Prints a
Markdown table (medians).
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ORACLE = os.environ.get('OSDKEEPER_ORACLE_DIR', os.path.join(ROOT, '..', 'shared', 'cephadm-oracle'))
OUT = os.path.join(ROOT, 'target', 'bench')


def run(cmd):
    t0 = time.perf_counter()
    with open(os.devnull, 'w') as devnull:
        p = subprocess.Popen(cmd, stdout=devnull, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        err = p.stderr.read().decode()
        p.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        sys.exit('{} failed ({}): {}'.format(cmd[0], code, err))
    return wall, usage.ru_maxrss / 1024.0, usage.ru_utime + usage.ru_stime


def measure(cmd, runs):
    walls, rss, cpus = [], [], []
    for _ in range(runs):
        w, r, c = run(cmd)
        walls.append(w)
        rss.append(r)
        cpus.append(c)
    return statistics.median(walls), max(rss), walls, statistics.median(cpus)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--runs', type=int, default=9)
    ap.add_argument('--oracle-runs', type=int, default=3)
    ap.add_argument('--sizes', default='2000x24,5000x24')
    ap.add_argument('--binary', default=os.path.join(ROOT, 'target', 'release', 'osdkeeper'))
    a = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    spec = os.path.join(HERE, 'specs.yaml')
    rows = []
    for size in a.sizes.split(','):
        hosts, devs = size.split('x')
        inv = os.path.join(OUT, 'inventory-{}.json'.format(size))
        if not os.path.exists(inv):
            with open(inv, 'w') as f:
                subprocess.run(['/usr/bin/python3', os.path.join(ORACLE, 'gen.py'), '42', hosts, devs], stdout=f, check=True)
        ours = measure([a.binary, 'preview', '--spec', spec, '--inventory', inv, '--format', 'json'], a.runs)
        theirs = measure(['/usr/bin/python3', os.path.join(ORACLE, 'preview.py'), spec, inv, '--no-simulate', '--compact'],
                         a.oracle_runs)
        mb = os.path.getsize(inv) / 1e6
        rows.append((size, mb, ours, theirs))
    print('| hosts x devices | inventory MB | osdkeeper median s | oracle median s | speed-up | osdkeeper CPU s | oracle CPU s | CPU ratio | osdkeeper peak MiB | oracle peak MiB | memory ratio |')
    print('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    for size, mb, ours, theirs in rows:
        print('| {} | {:.1f} | {:.3f} | {:.2f} | {:.1f}x | {:.3f} | {:.2f} | {:.1f}x | {:.1f} | {:.1f} | {:.2f} |'.format(
            size, mb, ours[0], theirs[0], theirs[0] / ours[0], ours[3], theirs[3], theirs[3] / ours[3],
            ours[1], theirs[1], ours[1] / theirs[1]))
    print()
    for size, _, ours, theirs in rows:
        print('- {}: osdkeeper runs {}; oracle runs {}'.format(
            size, ', '.join('{:.3f}'.format(w) for w in ours[2]), ', '.join('{:.2f}'.format(w) for w in theirs[2])))


if __name__ == '__main__':
    main()
