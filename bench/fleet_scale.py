#!/usr/bin/python3
"""Scale benchmark: the daemon (`osdkeeper serve`) polling a fleet of real
HTTP agents on loopback (examples/agent_fleet.rs: the agent's own router,
token check and inventory endpoint, one port per host, inventories from the
simulator, 2000 hosts x 24 devices by default).

Usage: bench/fleet_scale.py [--hosts 2000] [--devices-per-host 24] [--interval 5]
                            [--runs 10] [--steady-s 30] [--churn 0] [--binary PATH]
                            [--db ceph:POOL/NAMESPACE/NAME --ceph-conf FILE
                             --ceph-name client.X --ceph-keyring FILE]

With --db ceph:..., the store is kept in RADOS (libcephsqlite); the
--ceph-* options then say how to reach the cluster, for the daemon (its
`ceph:` section) and for the edits between phases. Given without --db,
they make the daemon talk to that cluster with its store in a local
file: the same daemon for both stores.

Build first: cargo build --release --bin osdkeeper --example agent_fleet

Phases, each measured from outside the daemon (its /metrics: each host's
inventory age, from the time the store last wrote it; /proc/PID for memory
and CPU time; wall time of HTTP calls). Between phases, with the daemon
stopped, the database is edited from here (sqlite3, through
libcephsqlite for a database in RADOS):
 1. the hosts are added through the API (POST /api/v1/hosts, no check),
    one request at a time; then again from one file of host specs, and
    again one request each but 32 at a time;
    then the daemon is stopped and the stored inventories deleted, so that
 2. a cold start finds 2000 hosts and no inventory: time until every host
    has one ("first full inventory after start");
 3. steady state at the poll interval for --steady-s seconds: polls per
    second, the oldest inventory's age, the CPU time the daemon and the
    fleet spent per poll;
 4. a warm restart (every inventory stored and unchanged, every host due
    at once): time until every host was polled again ("full cycle");
 5. the dry-run of a spec matching every host (the first one after the
    restart parses every inventory; then the cache serves), /metrics;
    RSS and its peak (VmRSS, VmHWM) after each phase.
Prints Markdown. The daemon's own log goes to TMP/daemon-*.log.
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from dashboard_scale import SPEC  # the same spec: every host, its SSDs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOKEN = 'fleet-bench-api-token'
AGENT_TOKEN = 'fleet-bench-agent-token'


def call(url, method='GET', body=None, content_type='application/yaml'):
    headers = {'Authorization': 'Bearer ' + TOKEN}
    if body is not None:
        headers['Content-Type'] = content_type
    req = urllib.request.Request(url, method=method, data=body.encode() if body else None, headers=headers)
    t0 = time.perf_counter()
    with urllib.request.urlopen(req, timeout=300) as r:
        data = r.read()
    return time.perf_counter() - t0, data


def proc_status(pid):
    out = {}
    with open('/proc/{}/status'.format(pid)) as f:
        for line in f:
            k, _, v = line.partition(':')
            if k in ('VmRSS', 'VmHWM', 'Threads'):
                out[k] = int(v.split()[0])
    return out


def cpu_s(pid):
    with open('/proc/{}/stat'.format(pid)) as f:
        fields = f.read().rsplit(')', 1)[1].split()
    tick = os.sysconf('SC_CLK_TCK')
    return (int(fields[11]) + int(fields[12])) / tick


def mem(pid):
    s = proc_status(pid)
    return 'RSS {:.0f} MiB (peak {:.0f} MiB), {} threads'.format(s['VmRSS'] / 1024, s['VmHWM'] / 1024, s['Threads'])


def load():
    return open('/proc/loadavg').read().split()[0]


class Daemon:
    def __init__(self, binary, config, db, log, env_extra, extra=()):
        env = dict(os.environ, OSDKEEPER_TOKEN=TOKEN, OSDKEEPER_AGENT_TOKEN=AGENT_TOKEN, **env_extra)
        self.started = time.time()
        self.logf = open(log, 'a')
        self.proc = subprocess.Popen([binary, 'serve', '--config', config, '--db', db, *extra],
                                     stdout=subprocess.PIPE, stderr=self.logf, text=True, env=env)
        for line in self.proc.stdout:
            if line.startswith('listening on '):
                self.base = 'http://' + line.split()[-1]
                break
        else:
            raise SystemExit('the daemon did not start; see ' + log)
        # Keeps reading stdout so that the daemon never blocks on it.
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()
        # It listens at once, as a standby (503) until it holds the store.
        while True:
            try:
                urllib.request.urlopen(self.base + '/healthz', timeout=10).read()
                break
            except urllib.error.HTTPError as e:
                if e.code != 503 or time.time() - self.started > 300:
                    raise SystemExit('the daemon did not lead: {}; see {}'.format(e, log))
                time.sleep(0.05)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=120)
        self.logf.close()


class Store:
    """The database, for the edits between phases (the daemon stopped)."""

    def __init__(self, db, ceph):
        self.db = db
        self.ceph = ceph

    def connect(self):
        if not self.db.startswith('ceph:'):
            return sqlite3.connect(self.db)
        pool, ns, name = self.db[len('ceph:'):].split('/', 2)
        # The VFS reads the cluster's address and the key from here.
        os.environ['CEPH_CONF'] = self.ceph['conf']
        os.environ['CEPH_ARGS'] = '--name {} --keyring {}'.format(self.ceph['name'], self.ceph['keyring'])
        loader = sqlite3.connect(':memory:')
        loader.enable_load_extension(True)
        loader.load_extension('libcephsqlite.so')
        loader.close()
        return sqlite3.connect('file:///{}:{}/{}?vfs=ceph'.format(pool, ns, name), uri=True)

    def edit(self, *statements):
        c = self.connect()
        try:
            c.execute('PRAGMA foreign_keys = ON')
            for sql in statements:
                c.execute(sql)
            c.commit()
        finally:
            c.close()


def write_times(base):
    """host -> when the store last wrote its inventory (ms), from /metrics."""
    now_ms = int(time.time() * 1000)
    _, data = call(base + '/metrics')
    out = {}
    for line in data.decode().splitlines():
        if line.startswith('osdkeeper_inventory_age_seconds{host="'):
            host = line.split('"', 2)[1]
            out[host] = now_ms - int(float(line.rsplit(' ', 1)[1]) * 1000)
    return out


def wait_all(base, hosts, since, newer_than_ms=None, limit=600):
    """Seconds from `since` until every host has an inventory (written
    after `newer_than_ms` when given)."""
    while True:
        times = write_times(base)
        got = sum(1 for at in times.values() if newer_than_ms is None or at >= newer_than_ms)
        if got == hosts:
            return time.time() - since
        if time.time() - since > limit:
            raise SystemExit('timed out waiting for {} inventories (have {})'.format(hosts, got))
        time.sleep(0.25)


def events_since(base, since_ms):
    """How many events the log holds from `since_ms` on (paged by id)."""
    # With `after`, the log answers oldest first; without, the newest.
    count, after = 0, 0
    while True:
        q = {'since': since_ms, 'limit': 1000, 'after': after}
        _, data = call(base + '/api/v1/events?' + urllib.parse.urlencode(q))
        page = json.loads(data)
        page = page['events'] if isinstance(page, dict) else page
        if not page:
            return count
        count += len(page)
        after = max(e['id'] for e in page)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--hosts', type=int, default=2000)
    ap.add_argument('--devices-per-host', type=int, default=24)
    ap.add_argument('--interval', type=int, default=5, help='poll interval, seconds')
    ap.add_argument('--concurrency', type=int, default=None, help='poll.concurrency (default: the daemon\'s)')
    ap.add_argument('--runs', type=int, default=10)
    ap.add_argument('--steady-s', type=float, default=30)
    ap.add_argument('--churn', type=int, default=0, help='hosts whose inventory changes every 5 s')
    ap.add_argument('--binary', default=os.path.join(ROOT, 'target', 'release', 'osdkeeper'))
    ap.add_argument('--fleet', default=os.path.join(ROOT, 'target', 'release', 'examples', 'agent_fleet'))
    ap.add_argument('--env', action='append', default=[], help='KEY=VALUE for the daemon (MALLOC_ARENA_MAX=2, ...)')
    ap.add_argument('--db', default=None, help='the store: a file (default: in the work dir) or ceph:POOL/NS/NAME')
    ap.add_argument('--ceph-conf', default=None)
    ap.add_argument('--ceph-name', default='client.admin')
    ap.add_argument('--ceph-keyring', default=None)
    a = ap.parse_args()
    if a.db and a.db.startswith('ceph:') and not (a.ceph_conf and a.ceph_keyring):
        raise SystemExit('--db ceph:... needs --ceph-conf and --ceph-keyring')
    ceph = {'conf': a.ceph_conf, 'name': a.ceph_name, 'keyring': a.ceph_keyring}
    env_extra = dict(e.split('=', 1) for e in a.env)
    tmp = tempfile.mkdtemp(prefix='fleet-bench-')
    print('load average at start: {}; working in {}'.format(load(), tmp))
    fleet = subprocess.Popen([a.fleet, '--hosts', str(a.hosts), '--devices-per-host', str(a.devices_per_host),
                              '--dir', os.path.join(tmp, 'fleet'), '--churn', str(a.churn)],
                             stdout=subprocess.PIPE, text=True, env=dict(os.environ, OSDKEEPER_AGENT_TOKEN=AGENT_TOKEN))
    daemon = None
    try:
        line = fleet.stdout.readline()
        if not line.startswith('ready'):
            raise SystemExit('the fleet did not start: ' + line)
        hosts = json.load(open(os.path.join(tmp, 'fleet', 'hosts.json')))
        config = os.path.join(tmp, 'osdkeeper.yaml')
        with open(config, 'w') as f:
            f.write('listen: 127.0.0.1:0\n')
            f.write('poll: {{interval_s: {}, timeout_s: 10{}}}\n'.format(
                a.interval, ', concurrency: {}'.format(a.concurrency) if a.concurrency else ''))
            if a.ceph_conf:
                f.write('ceph: {{conf: {}, name: {}, keyring: {}}}\n'.format(a.ceph_conf, a.ceph_name, a.ceph_keyring))
            else:
                # No cluster: the daemon plans without one (the dry-run says so).
                f.write('ceph: {bin: /bin/false}\n')
        db = a.db or os.path.join(tmp, 'fleet.db')
        store = Store(db, ceph)
        # The pool is made by the first start if it is not there.
        extra = ['--create-pool'] if db.startswith('ceph:') else []
        print('store: {}'.format(db))
        log = lambda name: os.path.join(tmp, 'daemon-{}.log'.format(name))

        def add_through_api(name, parallel):
            """Adds every host, one POST /api/v1/hosts each, `parallel` at a
            time; prints how long the requests and the inventories took."""
            d = Daemon(a.binary, config, db, log(name), env_extra, extra)
            try:
                t0 = time.time()
                add = lambda h: call(d.base + '/api/v1/hosts', 'POST', json.dumps(
                    {'name': h['name'], 'addr': h['addr'], 'no_check': True}), 'application/json')
                with concurrent.futures.ThreadPoolExecutor(max_workers=parallel) as pool:
                    list(pool.map(add, hosts))
                added = time.time() - t0
                wait_all(d.base, len(hosts), t0)
                print('{} hosts added through the API, {} request(s) at a time, in {:.2f} s '
                      '(all inventories in after {:.1f} s)'.format(len(hosts), parallel, added, time.time() - t0))
            finally:
                d.stop()

        # 1. Hosts added through the API, one request after another.
        add_through_api('add', 1)

        # 1b. The same hosts again from one file of host specs (`apply -i`,
        # cephadm's way for many hosts): one request, one transaction.
        store.edit('DELETE FROM hosts')
        daemon = Daemon(a.binary, config, db, log('specs'), env_extra, extra)
        file = ''.join('---\nservice_type: host\nhostname: {}\naddr: {}\n'.format(h['name'], h['addr']) for h in hosts)
        took, _ = call(daemon.base + '/api/v1/specs?no_check=true', 'POST', file)
        t0 = time.time() - took
        wait_all(daemon.base, len(hosts), t0)
        print('{} hosts added from one file of host specs in {:.2f} s (all inventories in after {:.1f} s)'.format(
            len(hosts), took, time.time() - t0))
        daemon.stop()
        daemon = None

        # 1c. The same hosts again, one request each but 32 at a time (a
        # script with `xargs -P 32`, Ansible's forks): requests that come
        # together share a commit (store/group_commit.rs).
        store.edit('DELETE FROM hosts')
        add_through_api('parallel', 32)
        store.edit('DELETE FROM inventories', 'UPDATE hosts SET next_poll_at = 0')

        # 2. Cold start: hosts, no inventories.
        daemon = Daemon(a.binary, config, db, log('cold'), env_extra, extra)
        first_full = wait_all(daemon.base, len(hosts), daemon.started)
        cold_mem = mem(daemon.proc.pid)
        print()
        print('| phase | figure |')
        print('|---|---|')
        print('| first full inventory after a cold start ({} hosts x {} devices) | {:.1f} s (load {}) |'.format(
            len(hosts), a.devices_per_host, first_full, load()))
        print('| daemon memory then | {} |'.format(cold_mem))

        # 3. Steady state at the poll interval (after one more interval, so
        # that the burst of the first round is over).
        time.sleep(a.interval + 1)
        d0, f0, t0 = cpu_s(daemon.proc.pid), cpu_s(fleet.pid), time.time()
        ages = []
        polls = 0
        # A poll counts when the time its host's inventory was written moved
        # (unchanged ones are written at the end of a round, with the time
        # of their poll). /metrics gives ages, from which the write time is
        # had against this clock: off by the request's own time, which
        # varies by some milliseconds; a poll moves it by the interval.
        seen = write_times(daemon.base)
        steady_from_ms = int(t0 * 1000)
        while time.time() - t0 < a.steady_s:
            time.sleep(0.5)
            now_ms = int(time.time() * 1000)
            times = write_times(daemon.base)
            ages.append(max(now_ms - at for at in times.values()) / 1000)
            polls += sum(1 for host, at in times.items() if at - seen.get(host, 0) > 500)
            seen = times
        span = time.time() - t0
        d_cpu, f_cpu = cpu_s(daemon.proc.pid) - d0, cpu_s(fleet.pid) - f0
        events = events_since(daemon.base, steady_from_ms)
        print('| steady state, poll interval {} s, {:.0f} s | {:.0f} polls/s; oldest inventory {:.1f} s (median of samples {:.1f} s); {} events |'.format(
            a.interval, span, polls / span, max(ages), statistics.median(ages), events))
        print('| CPU time per poll | daemon {:.0f} us ({:.0f} % of a core), fleet {:.0f} us ({:.0f} % of a core) (load {}) |'.format(
            d_cpu / max(polls, 1) * 1e6, d_cpu / span * 100, f_cpu / max(polls, 1) * 1e6, f_cpu / span * 100, load()))
        print('| daemon memory after steady state | {} |'.format(mem(daemon.proc.pid)))
        daemon.stop()
        daemon = None

        # 4. Warm restart: every inventory stored, none changed, every host
        # due at once (as after a long stop).
        store.edit('UPDATE hosts SET next_poll_at = 0')
        started_ms = int(time.time() * 1000)
        daemon = Daemon(a.binary, config, db, log('warm'), env_extra, extra)
        cycle = wait_all(daemon.base, len(hosts), started_ms / 1000, newer_than_ms=started_ms)
        print('| full cycle after a warm restart (all unchanged) | {:.1f} s (load {}) |'.format(cycle, load()))
        print('| daemon memory after the cycle | {} |'.format(mem(daemon.proc.pid)))

        # 5. Dry-run and /metrics.
        first, data = call(daemon.base + '/api/v1/specs?dry_run=true', 'POST', SPEC)
        rows = len(json.loads(data)['preview'])
        dry = [call(daemon.base + '/api/v1/specs?dry_run=true', 'POST', SPEC)[0] for _ in range(a.runs)]
        print('| dry-run over every host, first after the restart | {:.0f} ms ({} rows, {:.0f} KiB) |'.format(
            first * 1000, rows, len(data) / 1024))
        print('| dry-run, then (median / max of {}) | {:.0f} / {:.0f} ms (load {}) |'.format(
            a.runs, statistics.median(dry) * 1000, max(dry) * 1000, load()))
        print('| daemon memory after the dry-runs | {} |'.format(mem(daemon.proc.pid)))
        met = []
        for _ in range(a.runs):
            t, data = call(daemon.base + '/metrics')
            met.append(t)
        print('| /metrics (median / max of {}) | {:.1f} / {:.1f} ms ({:.0f} KiB) (load {}) |'.format(
            a.runs, statistics.median(met) * 1000, max(met) * 1000, len(data) / 1024, load()))
        print('| daemon memory at the end | {} |'.format(mem(daemon.proc.pid)))
        print('| fleet process memory | {} |'.format(mem(fleet.pid)))
    finally:
        if daemon:
            daemon.stop()
        fleet.send_signal(signal.SIGTERM)
        fleet.wait(timeout=60)
        if os.environ.get('KEEP') is None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    main()
