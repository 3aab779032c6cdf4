#!/usr/bin/python3
"""Adding hosts one by one through the API, as a script onboarding a fleet
does: `osdkeeper serve` on an empty database (no cluster, agents never
polled: the poll interval is an hour), N times `POST /api/v1/hosts` with
`no_check`, the time at each quarter, then the summary's host count.

Usage: bench/host_add.py BINARY N      e.g. bench/host_add.py target/release/osdkeeper 2000
"""
import json, os, subprocess, sys, tempfile, time, urllib.request
binary, n = sys.argv[1], int(sys.argv[2])
d = tempfile.mkdtemp(dir='/tmp/ha')
open(d + '/c.yaml', 'w').write('listen: 127.0.0.1:18760\npoll: {interval_s: 3600, timeout_s: 10}\nceph: {bin: /bin/false}\n')
env = dict(os.environ, OSDKEEPER_TOKEN='t0k3n-for-host-add-bench', OSDKEEPER_AGENT_TOKEN='agent-t0k3n-bench')
p = subprocess.Popen([binary, 'serve', '--config', d + '/c.yaml', '--db', d + '/db.sqlite'], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
while 'listening' not in p.stdout.readline():
    pass
def post(i):
    body = json.dumps({'name': 'h-%04d' % i, 'addr': '127.0.0.1:%d' % (20000 + i), 'no_check': True}).encode()
    req = urllib.request.Request('http://127.0.0.1:18760/api/v1/hosts', method='POST', data=body, headers={'Authorization': 'Bearer t0k3n-for-host-add-bench', 'Content-Type': 'application/json'})
    urllib.request.urlopen(req).read()
t = time.perf_counter(); marks = []
for i in range(n):
    post(i)
    if (i + 1) % (n // 4) == 0:
        marks.append('%d: %.1f s' % (i + 1, time.perf_counter() - t))
req = urllib.request.Request('http://127.0.0.1:18760/api/v1/summary', headers={'Authorization': 'Bearer t0k3n-for-host-add-bench'})
hosts = json.loads(urllib.request.urlopen(req).read())['hosts']
print(binary, '; '.join(marks), '; summary hosts', hosts, '; load', open('/proc/loadavg').read().split()[0])
p.terminate(); p.wait()
