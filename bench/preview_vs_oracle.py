#!/usr/bin/python3
"""Benchmark: `osdkeeper preview` against the cephadm oracle (preview.py --no-simulate).

Usage: bench/preview_vs_oracle.py [--runs N] [--oracle-runs M] [--sizes 2000x24,5000x24]

Both programs get the same files: an inventory from the oracle's gen.py (seed 42)
and bench/specs.yaml (two OSD specs with host_pattern '*', one simple, one with
size/model filters and a limit). Each run is the whole process, JSON to
/dev/null; wall time is measured around the process, peak memory is the
child's ru_maxrss and CPU time its ru_utime + ru_stime (os.wait4). The two
programs take turns (a share of osdkeeper's runs before each oracle run), so
both see the same load from whatever else runs on the machine; the 1-minute
load average is noted before every run. Prints a Markdown table (medians).
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ORACLE = os.environ.get('OSDKEEPER_ORACLE_DIR', os.path.join(ROOT, 'testbed', 'cephadm-oracle'))
OUT = os.path.join(ROOT, 'target', 'bench')


def run(cmd):
    """One run: (wall s, peak MiB, CPU s, load average before it)."""
    load = os.getloadavg()[0]
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
    return wall, usage.ru_maxrss / 1024.0, usage.ru_utime + usage.ru_stime, load


def summary(runs):
    return {
        'wall': statistics.median(r[0] for r in runs),
        'rss': max(r[1] for r in runs),
        'cpu': statistics.median(r[2] for r in runs),
        'runs': runs,
    }


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
        ours_cmd = [a.binary, 'preview', '--spec', spec, '--inventory', inv, '--format', 'json']
        theirs_cmd = ['/usr/bin/python3', os.path.join(ORACLE, 'preview.py'), spec, inv, '--no-simulate', '--compact']
        run(ours_cmd)  # warm the page cache and the binary
        ours, theirs = [], []
        turns = max(a.oracle_runs, 1)
        for turn in range(turns):
            share = a.runs * (turn + 1) // turns - a.runs * turn // turns
            ours.extend(run(ours_cmd) for _ in range(share))
            if turn < a.oracle_runs:
                theirs.append(run(theirs_cmd))
        mb = os.path.getsize(inv) / 1e6
        rows.append((size, mb, summary(ours), summary(theirs)))
    print('| hosts x devices | inventory MB | osdkeeper median s | oracle median s | speed-up | '
          'osdkeeper CPU s | oracle CPU s | CPU ratio | osdkeeper peak MiB | oracle peak MiB | memory ratio |')
    print('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    for size, mb, ours, theirs in rows:
        print('| {} | {:.1f} | {:.3f} | {:.2f} | {:.1f}x | {:.3f} | {:.2f} | {:.1f}x | {:.1f} | {:.1f} | {:.2f} |'.format(
            size, mb, ours['wall'], theirs['wall'], theirs['wall'] / ours['wall'], ours['cpu'], theirs['cpu'],
            theirs['cpu'] / ours['cpu'], ours['rss'], theirs['rss'], ours['rss'] / theirs['rss']))
    print()
    print('Each run as wall s / CPU s (1-minute load average before it):')
    print()
    for size, _, ours, theirs in rows:
        for who, s, fmt in (('osdkeeper', ours, '{:.3f}'), ('oracle', theirs, '{:.2f}')):
            print('- {} {}: {}'.format(size, who, ', '.join(
                '{} / {} ({:.1f})'.format(fmt.format(w), fmt.format(c), load) for w, _, c, load in s['runs'])))


if __name__ == '__main__':
    main()
