#!/usr/bin/python3
"""Bounded fuzzing of the release binary with random and hostile inputs.

Usage: bench/fuzz_inputs.py [--mode cli|api|both] [--seconds 120] [--max-inputs N]
                            [--seed 1] [--binary target/release/osdkeeper]
                            [--timeout 10] [--keep target/fuzz]

--mode cli (offline, `osdkeeper preview`) and --mode api (the daemon of
`osdkeeper demo`); `both` gives each half of --seconds.

CLI mode:
Each round writes a spec and an inventory and runs the release binary on
them (`preview --format table` or `json`), with a 4 GiB address-space limit
so that a runaway input cannot take the machine down. Specs are valid specs
with random keys and values, byte-level perturbations of those, or known
attacks (nested aliases, a large scalar aliased many times or nested in
anchors, deep nesting, many keys, huge scalars, huge host patterns, a byte
order mark, invalid UTF-8, absurd counts). Inventories are
random realistic ones, perturbations of their JSON text, or hostile ones
(70 000-character paths and host names, paths listed twice, deep JSON).

Exit codes 0 (valid), 1 (invalid documents) and 2 (unreadable input) are
answers. Anything else is a finding: a panic (101, or "panicked" on
stderr), a crash (killed by a signal: an abort on a failed allocation, a
stack overflow), or a hang (no answer within --timeout). Findings are kept
under --keep with the command to rerun them. Prints a Markdown summary:
inputs tried, findings, and the peak memory (the child's ru_maxrss, from
os.wait4) and slowest run per kind of input. Exits 1 if anything was found.

API mode starts `osdkeeper demo --hosts 40` (a simulated cluster; no Ceph)
under the same address-space limit and sends it, one at a time, specs
(valid, perturbed, hostile) as dry-runs and now and then as applies, JSON
bodies for every POST route (random, perturbed, wrong types, huge), odd
query strings and path parameters, and raw requests hyper must refuse
(malformed lines, 70 KB URIs, 500 KB headers, bodies that end early) or
the router must (made-up methods).
Findings: a 5xx, an answer that is not JSON, no answer within --timeout
(a hang), the daemon gone (a crash). Every 20 requests /healthz is asked
while a large spec is being planned on another connection. Peak memory is
the daemon's VmHWM from /proc.
"""
import argparse
import http.client
import json
import os
import random
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ADDRESS_SPACE = 4 << 30

BASE = "service_type: osd\nservice_id: s\nplacement: {host_pattern: '*'}\n"
KEYS = ["service_id", "placement", "spec", "data_devices", "db_devices", "wal_devices", "journal_devices",
        "encrypted", "osds_per_device", "objectstore", "filter_logic", "method", "block_db_size",
        "crush_device_class", "unmanaged", "data_allocate_fraction", "db_slots", "preview_only",
        "extra_container_args", "host_pattern", "service_name", "status", "unknown"]
VALUES = ["osd", "fast", "'a b'", "12", "true", "'false'", "yes", "0", "1", "2", "-1", "64", "65",
          "2147483647", "18446744073709551617", "2.5", "''", "~", "[]", "{}", "bluestore", "blue", "lvm",
          "raw", "OR", "xor", "'2tb:'", "'1TB:2TB'", "10:20", "[/dev/sdb, /dev/sdc]", "/dev/sdb",
          "{rotational: 1}", "{rotational: '0'}", "{all: true}", "{all: true, limit: 2}",
          "{size: '500G:', limit: 18446744073709551617}", "{paths: [/dev/sdb]}", "{paths: [5]}",
          "{model: ST, vendor: ''}", "{bogus: 1}", "{host_pattern: '*'}", "{host_pattern: 'h[0-9]*'}",
          "{hosts: [h1, 'h2:10.0.0.0/8']}", "{hosts: h1}", "{label: osd}", "{label: ''}",
          "{data_devices: {all: true}}", "[--cpus=2]", "{<<: {rotational: 1}}"]
ROLES = ["data_devices", "db_devices", "wal_devices"]


def valid_spec(rng):
    docs = []
    for i in range(rng.randint(1, 4)):
        doc = "service_type: osd\nservice_id: s{}\nplacement: {{host_pattern: '*'}}\n".format(i)
        doc += "data_devices: {}\n".format(rng.choice(["{rotational: 1}", "{all: true}", "{size: '1TB:'}",
                                                       "{rotational: 1, limit: 3}", "{model: ST}"]))
        for _ in range(rng.randint(0, 8)):
            doc += "{}: {}\n".format(rng.choice(KEYS), rng.choice(VALUES))
        docs.append(doc)
    return "---\n".join(docs).encode()


def perturb(rng, data, rounds=None):
    data = bytearray(data)
    for _ in range(rounds or rng.randint(1, 8)):
        if not data:
            data.extend(b"x")
        i = rng.randrange(len(data))
        op = rng.randrange(5)
        if op == 0:
            data[i] = rng.randrange(256)
        elif op == 1:
            del data[i]
        elif op == 2:
            data.insert(i, rng.choice(b"[]{}:,-'\"&*!|>#\n \t\\"))
        elif op == 3:
            j = min(len(data), i + rng.randint(1, 40))
            data[i:i] = data[i:j] * rng.randint(1, 20)
        else:
            data[i:i] = rng.choice([b"\xff", b"\xc3", b"\xef\xbb\xbf", b"\x00", "é".encode(), b"\r\n"])
    return bytes(data)


def laughs(levels, fanout):
    lines = ["a0: &a0 [{}]".format(",".join(["x"] * fanout))]
    for i in range(1, levels):
        lines.append("a{}: &a{} [{}]".format(i, i, ",".join(["*a{}".format(i - 1)] * fanout)))
    return "\n".join(lines) + "\n"


def scalar_aliases(size, count):
    """One anchored scalar of `size` bytes, aliased `count` times: issue 35's
    shape (600 000 and 90 000: 1 MB asking for 54 GB)."""
    return "big: &a '{}'\nmany: [{}]\n".format("x" * size, ",".join(["*a"] * count))


def nested_anchors(size, levels):
    """A scalar of `size` bytes inside `levels` anchored lists, each anchor
    keeping its own copy of what it holds."""
    text = "'{}'".format("x" * size)
    for i in range(levels):
        text = "&a{} [{}]".format(i, text)
    return "v: " + text + "\n"


def hostile_spec(rng):
    big = "x" * rng.choice([70000, 300000])
    kind = rng.randrange(14)
    if kind == 0:
        return "laughs", laughs(rng.randint(6, 12), rng.randint(6, 12)).encode()
    if kind == 1:
        return "deep", ("- " * rng.choice([100, 10000, 300000]) + "x\n").encode()
    if kind == 2:
        return "deep", ("v: " + "[" * 250 + "]" * 250 + "\n").encode()
    if kind == 3:
        keys = "".join("  k{}: v\n".format(i) for i in range(rng.choice([2000, 40000])))
        return "keys", (BASE + "data_devices: {all: true}\nspec:\n" + keys).encode()
    if kind == 4:
        return "huge value", (BASE + "data_devices: {all: true}\nobjectstore: " + big + "\n").encode()
    if kind == 5:
        pattern = rng.choice(["[" * 300000, "[" + "z-y-" * 100000 + "a]", "*a" * 150000, "?" * 300000])
        return "host_pattern", ("service_type: osd\nservice_id: s\nplacement: {host_pattern: '" + pattern
                                + "'}\ndata_devices: {all: true}\n").encode()
    if kind == 6:
        return "bom", b"\xef\xbb\xbf" + valid_spec(rng)
    if kind == 7:
        data = bytearray(valid_spec(rng))
        data.insert(rng.randrange(len(data)), rng.choice([0xff, 0xc3, 0x80]))
        return "invalid utf-8", bytes(data)
    if kind == 8:
        n = rng.choice([65, 1000, 2147483647, 10 ** 30])
        return "counts", (BASE + "data_devices: {{all: true, limit: {}}}\nosds_per_device: {}\n".format(n, n)).encode()
    if kind == 9:
        return "huge value", (BASE + "data_devices: {paths: ['/dev/" + big + "']}\n").encode()
    if kind == 10:
        items = ", ".join(["1"] * rng.choice([50000, 150000]))
        return "nodes", (BASE + "data_devices: {all: true}\nextra_container_args: [" + items + "]\n").encode()
    if kind == 11:
        return "huge value", ("service_type: osd\nservice_id: " + big[:200000] + "\nplacement: {hosts: ['h:" + big
                              + "']}\ndata_devices: {all: true}\n").encode()
    if kind == 12:
        size = rng.choice([1000, 50000, 600000])
        if rng.random() < 0.3:
            return "scalar aliases", nested_anchors(size, rng.randint(2, 60)).encode()
        count = min(90000, ((1 << 20) - size - 32) // 3)
        return "scalar aliases", scalar_aliases(size, rng.randint(count // 2, count)).encode()
    return "huge file", (BASE + "data_devices: {all: true}\n# " + "y" * (2 << 20) + "\n").encode()


def some_spec(rng):
    """A valid spec, a perturbed one or a hostile one, with its kind."""
    roll = rng.random()
    if roll < 0.3:
        return "valid spec", valid_spec(rng)
    if roll < 0.65:
        return "perturbed spec", perturb(rng, valid_spec(rng))
    return hostile_spec(rng)


def device(rng, i, path=None, odd=True):
    rot = rng.random() < 0.6
    size = rng.choice([0.5e12, 1e12, 4e12, 16e12, 2e15])
    d = {
        "path": path or "/dev/sd{}".format(chr(ord('b') + i % 24)) + ("" if i < 24 else str(i)),
        "available": rng.random() < 0.8,
        "ceph_device": rng.random() < 0.2,
        "rejected_reasons": [] if rng.random() < 0.8 else ["locked", "Has a FileSystem"],
        "device_id": "D{}".format(rng.randrange(10 ** 6)),
        "sys_api": {"rotational": "1" if rot else "0", "size": size,
                    "human_readable_size": "{:.2f} TB".format(size / 1024 ** 4),
                    "model": rng.choice(["ST4000", "Samsung SSD", "INTEL", ""]), "vendor": "ATA",
                    "partitions": {}},
        "lvs": [] if rng.random() < 0.8 else [{"osdspec_affinity": rng.choice(["s0", "other", ""]), "osd_id": "3"}],
        "lsm_data": {},
    }
    for _ in range(rng.choice([0, 0, 0, 1, 2]) if odd else 0):
        key = rng.choice(["path", "sys_api", "lvs", "available", "rejected_reasons", "model", "size"])
        d[key] = rng.choice([None, 5, "x", [], {}, {"model": 7}, True, [1, [2]]])
    return d


def valid_inventory(rng):
    hosts = {}
    for h in range(rng.choice([1, 2, 5, 20, 200])):
        hosts["h{}".format(h)] = [device(rng, i) for i in range(rng.choice([1, 4, 12, 24]))]
    inv = {"hosts": hosts}
    if rng.random() < 0.3:
        inv["existing_daemons"] = {"s0": {"h0": rng.choice([0, 2, 2 ** 64 - 1])}}
    if rng.random() < 0.3:
        inv["labels"] = {"h0": rng.choice([["_no_schedule"], None, "x", 5])}
    if rng.random() < 0.2:
        inv["osd_id_claims"] = {"h0": [rng.randrange(100) for _ in range(rng.randint(1, 200))]}
    return inv


def hostile_inventory(rng):
    big = "x" * 70000
    kind = rng.randrange(5)
    if kind == 0:
        return "long path", {"hosts": {"h1": [device(rng, 0, "/dev/" + big, odd=False), device(rng, 1, odd=False)]}}
    if kind == 1:
        return "long host", {"hosts": {"h" + big: [device(rng, 0, odd=False)]}}
    if kind == 2:
        first = device(rng, 0, odd=False)
        twin = dict(first) if rng.random() < 0.5 else device(rng, 0, odd=False)
        return "duplicate path", {"hosts": {"h1": [first, device(rng, 1, odd=False), twin]}}
    if kind == 3:
        n = rng.choice([100, 100000])
        deep = "[" * n + "]" * n
        text = json.dumps({"hosts": {"h1": [device(rng, 0, odd=False)]}})
        text = text.replace('"lsm_data": {}', '"lsm_data": ' + deep)
        return "deep json", text.encode()
    d = device(rng, 0, odd=False)
    d["sys_api"]["human_readable_size"] = big
    return "huge value", {"hosts": {"h1": [d]}}


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    os.setsid()


def run(binary, spec, inventory, fmt, timeout):
    cmd = [binary, "preview", "--spec", spec, "--inventory", inventory, "--format", fmt]
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=limit_memory)
    hung = False
    while True:
        pid, status, usage = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() - t0 > timeout:
            hung = True
            os.killpg(p.pid, signal.SIGKILL)
            pid, status, usage = os.wait4(p.pid, 0)
            break
        time.sleep(0.005)
    wall = time.perf_counter() - t0
    err = p.stderr.read(4096).decode(errors="replace")
    p.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if hung:
        verdict = "hang"
    elif code == 101 or "panicked" in err:
        verdict = "panic"
    elif code < 0:
        verdict = "crash ({})".format(signal.Signals(-code).name)
    elif code in (0, 1, 2):
        verdict = None
    else:
        verdict = "exit {}".format(code)
    return verdict, wall, usage.ru_maxrss, cmd, err


def fuzz_cli(args, rng, seconds):
    work = tempfile.mkdtemp(prefix="osdkeeper-fuzz-")
    spec_path, inv_path = os.path.join(work, "spec.yaml"), os.path.join(work, "inventory.json")
    stats = {}
    findings = []
    tried = 0
    started = time.perf_counter()
    inventories = [valid_inventory(rng) for _ in range(8)]
    while tried < args.max_inputs and time.perf_counter() - started < seconds:
        tried += 1
        spec_kind, spec = some_spec(rng)
        roll = rng.random()
        if roll < 0.55:
            inv_kind, inv_text = "inventory", json.dumps(rng.choice(inventories)).encode()
        elif roll < 0.8:
            inv_kind = "perturbed inventory"
            inv_text = perturb(rng, json.dumps(rng.choice(inventories[:4])).encode(), rng.randint(1, 4))
        else:
            inv_kind, inv = hostile_inventory(rng)
            inv_text = inv if isinstance(inv, bytes) else json.dumps(inv, indent=rng.choice([None, 1])).encode()
        with open(spec_path, "wb") as f:
            f.write(spec)
        with open(inv_path, "wb") as f:
            f.write(inv_text)
        fmt = rng.choice(["table", "json"])
        verdict, wall, rss_kb, cmd, err = run(args.binary, spec_path, inv_path, fmt, args.timeout)
        for kind in (spec_kind, inv_kind):
            s = stats.setdefault(kind, {"runs": 0, "rss_kb": 0, "wall": 0.0, "findings": 0})
            s["runs"] += 1
            s["rss_kb"] = max(s["rss_kb"], rss_kb)
            s["wall"] = max(s["wall"], wall)
            s["findings"] += verdict is not None
        if verdict:
            keep = os.path.join(args.keep, "{:05d}".format(tried))
            os.makedirs(keep, exist_ok=True)
            shutil.copy(spec_path, os.path.join(keep, "spec.yaml"))
            shutil.copy(inv_path, os.path.join(keep, "inventory.json"))
            with open(os.path.join(keep, "finding.txt"), "w") as f:
                f.write("{}\n{} --spec spec.yaml --inventory inventory.json --format {}\n\n{}".format(
                    verdict, args.binary, fmt, err))
            findings.append((verdict, spec_kind, inv_kind, fmt, keep, err.strip().splitlines()[:1]))
    shutil.rmtree(work)
    elapsed = time.perf_counter() - started
    print("## CLI: `osdkeeper preview`\n")
    print("{} inputs in {:.0f} s (seed {}, timeout {} s, address space {} GiB)\n".format(
        tried, elapsed, args.seed, args.timeout, ADDRESS_SPACE >> 30))
    print("| input | runs | findings | peak RSS (MB) | slowest (s) |")
    print("|---|---:|---:|---:|---:|")
    for kind in sorted(stats):
        s = stats[kind]
        print("| {} | {} | {} | {:.1f} | {:.2f} |".format(
            kind, s["runs"], s["findings"], s["rss_kb"] / 1024, s["wall"]))
    by_verdict = {}
    for v, *_ in findings:
        by_verdict[v] = by_verdict.get(v, 0) + 1
    print("\nfindings: {}".format(", ".join("{} {}".format(n, v) for v, n in sorted(by_verdict.items())) or "none"))
    seen = set()
    for verdict, spec_kind, inv_kind, fmt, keep, first in findings:
        key = (verdict, spec_kind, inv_kind, fmt, tuple(first))
        if key not in seen:
            seen.add(key)
            print("  {}: {} + {} (--format {}): {} [{}]".format(verdict, spec_kind, inv_kind, fmt,
                                                             first[0] if first else "", keep))
    return 1 if findings else 0


# --- API mode -------------------------------------------------------------

POST_ROUTES = ["/api/v1/hosts", "/api/v1/hosts/f5-422-01/labels", "/api/v1/hosts/nohost/labels",
               "/api/v1/devices/release", "/api/v1/devices/zap", "/api/v1/osds/removals",
               "/api/v1/osds/removals/stop"]
GET_ROUTES = ["/api/v1/hosts", "/api/v1/devices", "/api/v1/devices/held", "/api/v1/osds", "/api/v1/osds/removals",
              "/api/v1/events", "/api/v1/deployments", "/api/v1/summary", "/api/v1/specs", "/api/v1/workers"]
BODY_KEYS = ["name", "addr", "labels", "label", "host", "path", "force", "ids", "replace", "zap", "extra"]


def json_value(rng, depth=0):
    roll = rng.randrange(10 if depth < 3 else 6)
    if roll == 0:
        return None
    if roll == 1:
        return rng.choice([True, False])
    if roll == 2:
        return rng.choice([0, 1, 3, 7, -1, 2 ** 31, 2 ** 64, 1e308, 0.5])
    if roll in (3, 4, 5):
        return rng.choice(["f5-422-01", "f5-422-02", "/dev/sdb", "/dev/sdc", "h1:8741", "bad host;x", "", "osd",
                           "x" * rng.choice([1, 300, 70000]), "https://h:1", "../../etc", "\u0000", "é"])
    if roll in (6, 7):
        return [json_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice(BODY_KEYS): json_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def json_body(rng):
    roll = rng.random()
    if roll < 0.15:
        return "valid-ish body", json.dumps(rng.choice([
            {"name": "h{}".format(rng.randrange(1000)), "addr": "127.0.0.1:{}".format(rng.randrange(1, 65536))},
            {"label": rng.choice(["osd", "mon", "_no_schedule"])},
            {"host": rng.choice(["f5-422-01", "f5-422-02"]), "path": rng.choice(["/dev/sdb", "/dev/sdc", "/dev/sdz"]),
             "force": rng.choice([True, False])},
            {"ids": [rng.randrange(40) for _ in range(rng.randint(0, 3))], "replace": rng.choice([True, False])},
        ])).encode()
    body = json.dumps({rng.choice(BODY_KEYS): json_value(rng) for _ in range(rng.randint(0, 5))}).encode()
    if roll < 0.7:
        return "random body", body
    if roll < 0.9:
        return "perturbed body", perturb(rng, body, rng.randint(1, 4))
    n = rng.choice([1000, 100000])
    return "hostile body", rng.choice([b"[" * n + b"]" * n, b'{"ids": [' + b"1," * n + b'1]}',
                                      b'{"name": "' + b"x" * (2 << 20) + b'"}', b"\xff\xfe{}"])


def odd_query(rng):
    keys = ["limit", "offset", "host", "state", "q", "unreachable", "dry_run", "refresh", "after", "kind"]
    values = ["abc", "-1", "18446744073709551616", "%ff", "%", "true", "1", "0", "", "x" * 5000, "a&b", "%00"]
    return "&".join("{}={}".format(rng.choice(keys), rng.choice(values)) for _ in range(rng.randint(0, 4)))


def raw_request(rng, port):
    host = "127.0.0.1:{}".format(port)
    kind = rng.randrange(7)
    if kind == 6:
        method = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ-_!") for _ in range(rng.randint(1, 20)))
        path = rng.choice(GET_ROUTES + POST_ROUTES + ["/metrics", "/healthz", "/nowhere/{}".format(rng.randrange(10 ** 6))])
        return "raw: made-up method", "{} {} HTTP/1.1\r\nHost: {}\r\nconnection: close\r\n\r\n".format(
            method, path, host).encode()
    if kind == 0:
        return "raw: long URI", "GET /api/v1/hosts?{} HTTP/1.1\r\nHost: {}\r\nconnection: close\r\n\r\n".format("a" * 70000, host).encode()
    if kind == 1:
        return "raw: huge header", "GET /healthz HTTP/1.1\r\nHost: {}\r\nconnection: close\r\nx: {}\r\n\r\n".format(host, "b" * 500000).encode()
    if kind == 2:
        return "raw: bad header", "GET /healthz HTTP/1.1\r\nHost: {}\r\nconnection: close\r\nno colon\r\n\r\n".format(host).encode()
    if kind == 3:
        return "raw: not HTTP", bytes(rng.randrange(256) for _ in range(rng.randint(1, 200))) + b"\r\n\r\n"
    if kind == 4:
        return "raw: short body", ("POST /api/v1/hosts HTTP/1.1\r\nHost: {}\r\ncontent-type: application/json\r\n"
                                   "content-length: 100\r\nconnection: close\r\n\r\n{{\"name\"").format(host).encode()
    return "raw: bad chunks", ("POST /api/v1/hosts HTTP/1.1\r\nHost: {}\r\ncontent-type: application/json\r\n"
                               "transfer-encoding: chunked\r\nconnection: close\r\n\r\nzz\r\n{{}}\r\n0\r\n\r\n").format(host).encode()


def send_raw(port, data, timeout, half_close=False):
    """The status and body of the answer to raw bytes (None: no answer in
    time; "reset": the daemon closed the connection on input it had not
    read, and the kernel's reset may have discarded its answer)."""
    reset = False
    answer = b""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        # Half-close only where the request must end early: hyper drops a
        # connection whose peer shut its writing side before the request
        # head was read, without an answer.
        try:
            s.sendall(data)
            if half_close:
                s.shutdown(socket.SHUT_WR)
        except (ConnectionResetError, BrokenPipeError, OSError) as e:
            reset = not isinstance(e, socket.timeout)
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                answer += chunk
        except socket.timeout:
            pass
        except OSError:
            reset = True
    if not answer:
        return ("reset" if reset else None), b""
    head, _, body = answer.partition(b"\r\n\r\n")
    try:
        return int(head.split(b" ")[1]), body
    except (IndexError, ValueError):
        return -1, answer


def send(port, method, path, ctype, body, timeout):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        headers = {"content-type": ctype} if ctype else {}
        c.request(method, path, body=body, headers=headers)
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def api_verdict(status, body):
    if status is None:
        return "no answer"
    if status == "reset":
        return None
    if status >= 500 or status < 0:
        return "status {}".format(status)
    try:
        v = json.loads(body)
    except ValueError:
        return "not JSON ({})".format(status)
    if status >= 400 and not (isinstance(v, dict) and isinstance(v.get("error"), str)):
        return "error without a message ({})".format(status)
    if status >= 400 and len(body) > 8000:
        return "{}-byte error ({})".format(len(body), status)
    return None


def vm_hwm_kb(pid):
    try:
        with open("/proc/{}/status".format(pid)) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def big_legal_spec():
    """A spec of many documents that every host matches: legal, and long to plan."""
    docs = []
    for i in range(400):
        docs.append("service_type: osd\nservice_id: big{}\nplacement: {{host_pattern: '*'}}\n"
                    "data_devices: {{rotational: 1}}\ndb_devices: {{rotational: 0}}\nosds_per_device: 2\n".format(i))
    return "---\n".join(docs).encode()


def fuzz_api(args, rng, seconds):
    log = tempfile.NamedTemporaryFile(prefix="osdkeeper-fuzz-daemon-", suffix=".log", delete=False)
    daemon = subprocess.Popen([args.binary, "demo", "--listen", "127.0.0.1:0", "--hosts", "40", "--pace", "50"],
                              stdout=subprocess.PIPE, stderr=log, preexec_fn=limit_memory, text=True)
    port = None
    for line in daemon.stdout:
        if line.startswith("listening on "):
            port = int(line.rsplit(":", 1)[1])
            break
    if port is None:
        sys.exit("the demo daemon did not start; see {}".format(log.name))
    # Keep reading its stdout, so that a full pipe never stalls it.
    threading.Thread(target=lambda: [None for _ in daemon.stdout], daemon=True).start()
    stats = {}
    findings = []
    tried = 0
    healthz_during_plan = [0, 0]  # asked, answered 200
    big = big_legal_spec()
    started = time.perf_counter()
    while tried < args.max_inputs and time.perf_counter() - started < seconds:
        tried += 1
        roll = rng.random()
        if roll < 0.35:
            kind, body = some_spec(rng)
            kind = "spec: " + kind
            query = "dry_run=true" if rng.random() < 0.9 else ""
            req = ("POST", "/api/v1/specs?" + query, rng.choice(["application/yaml", "application/json"]), body)
        elif roll < 0.7:
            kind, body = json_body(rng)
            req = ("POST", rng.choice(POST_ROUTES), "application/json", body)
        elif roll < 0.85:
            kind = "query"
            req = ("GET", rng.choice(GET_ROUTES) + "?" + odd_query(rng), None, None)
        elif roll < 0.93:
            kind = "path parameter"
            tail = rng.choice(["abc", "-1", "18446744073709551616", "%ff", "%2e%2e", "x" * 3000, "1", "osd.all"])
            req = (rng.choice(["GET", "DELETE", "POST"]),
                   rng.choice(["/api/v1/osds/removals/", "/api/v1/deployments/", "/api/v1/specs/",
                               "/api/v1/hosts/", "/assets/"]) + tail, "application/json", b"{}")
        else:
            kind, data = raw_request(rng, port)
            req = None
        t0 = time.perf_counter()
        try:
            if req is None:
                status, answer = send_raw(port, data, args.timeout, half_close=kind == "raw: short body")
            else:
                status, answer = send(port, *req, timeout=args.timeout)
        except socket.timeout:
            status, answer = None, b""
        except (ConnectionError, http.client.HTTPException, OSError) as e:
            status, answer = (None, str(e).encode()) if daemon.poll() is not None else (-2, str(e).encode())
        wall = time.perf_counter() - t0
        verdict = api_verdict(status, answer)
        if status == -2:
            verdict = None if kind.startswith("hostile body") else "connection error: {}".format(answer[:100])
        if daemon.poll() is not None:
            verdict = "daemon gone (exit {})".format(daemon.returncode)
        s = stats.setdefault(kind, {"runs": 0, "findings": 0, "wall": 0.0, "statuses": {}})
        s["runs"] += 1
        s["wall"] = max(s["wall"], wall)
        s["statuses"][status] = s["statuses"].get(status, 0) + 1
        if verdict:
            s["findings"] += 1
            keep = os.path.join(args.keep, "api-{:05d}".format(tried))
            os.makedirs(keep, exist_ok=True)
            with open(os.path.join(keep, "request.bin"), "wb") as f:
                f.write(data if req is None else (req[3] or b""))
            with open(os.path.join(keep, "finding.txt"), "w") as f:
                f.write("{}\n{}\n\n{}".format(verdict, req[:3] if req else kind, answer[:4000].decode(errors="replace")))
            findings.append((verdict, kind, keep))
            if daemon.poll() is not None:
                break
        if tried % 20 == 0:
            # /healthz while a large legal spec is planned on another connection.
            result = {}
            def plan():
                try:
                    result["plan"] = send(port, "POST", "/api/v1/specs?dry_run=true", "application/yaml", big,
                                          timeout=60)[0]
                except OSError as e:
                    result["plan"] = str(e)
            t = threading.Thread(target=plan)
            t.start()
            time.sleep(0.05)
            try:
                code = send(port, "GET", "/healthz", None, None, timeout=args.timeout)[0]
            except OSError:
                code = None
            healthz_during_plan[0] += 1
            healthz_during_plan[1] += code == 200
            t.join()
    hwm = vm_hwm_kb(daemon.pid)
    elapsed = time.perf_counter() - started
    daemon.send_signal(signal.SIGTERM)
    try:
        daemon.wait(timeout=30)
    except subprocess.TimeoutExpired:
        daemon.kill()
        findings.append(("no clean shutdown", "-", "-"))
    print("## API: the daemon of `osdkeeper demo --hosts 40`\n")
    print("{} requests in {:.0f} s (seed {}, timeout {} s); daemon peak RSS (VmHWM) {:.1f} MB; "
          "/healthz during a 400-document plan: {} of {} answered 200\n".format(
              tried, elapsed, args.seed, args.timeout, hwm / 1024, healthz_during_plan[1], healthz_during_plan[0]))
    print("| input | requests | findings | slowest (s) | statuses |")
    print("|---|---:|---:|---:|---|")
    for kind in sorted(stats):
        s = stats[kind]
        codes = ", ".join("{}: {}".format(k, v) for k, v in sorted(s["statuses"].items(), key=lambda kv: str(kv[0])))
        codes = codes.replace("None", "no answer")
        print("| {} | {} | {} | {:.2f} | {} |".format(kind, s["runs"], s["findings"], s["wall"], codes))
    print("\nfindings: {}".format(len(findings) or "none"))
    seen = set()
    for verdict, kind, keep in findings:
        if (verdict, kind) not in seen:
            seen.add((verdict, kind))
            print("  {}: {} [{}]".format(verdict, kind, keep))
    print("daemon log: {}".format(log.name))
    return 1 if findings or healthz_during_plan[1] < healthz_during_plan[0] else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=["cli", "api", "both"], default="both")
    ap.add_argument("--seconds", type=float, default=120)
    ap.add_argument("--max-inputs", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "osdkeeper"))
    ap.add_argument("--timeout", type=float, default=10)
    ap.add_argument("--keep", default=os.path.join(ROOT, "target", "fuzz"))
    args = ap.parse_args()
    if not os.access(args.binary, os.X_OK):
        sys.exit("no binary at {} (cargo build --release)".format(args.binary))
    rng = random.Random(args.seed)
    share = args.seconds / 2 if args.mode == "both" else args.seconds
    failed = 0
    if args.mode in ("cli", "both"):
        failed |= fuzz_cli(args, rng, share)
        print()
    if args.mode in ("api", "both"):
        failed |= fuzz_api(args, rng, share)
    return failed


if __name__ == "__main__":
    sys.exit(main())
