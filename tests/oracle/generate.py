#!/usr/bin/python3
"""Differential cases for osdkeeper, judged by the real cephadm code.

Usage: generate.py ORACLE_DIR OUT_DIR COUNT SEED [--mutate] [--release quincy|reef|squid|tentacle]
       generate.py ORACLE_DIR OUT_DIR --cases CASES_DIR --release quincy|reef|squid|tentacle

Writes OUT_DIR/<n>/{spec.yaml,inventory.json,expected.json} for COUNT random
(spec, inventory) pairs built with the oracle's own generators (gen.py,
gen_spec.py) and judged by its preview.run (Debian's python3-ceph-common),
all in one process so that the suite stays fast.

--mutate perturbs the generated specs (wrong types, odd strings, removed or
unknown keys) so that validation is compared too, not only selection.

--release judges the cases by that release's cephadm and ceph-volume (its
real code, as preview.py --release runs it), writes each inventory as that
release's ceph-volume would (19.2, 20.2: `ceph_device_lvm`, `being_replaced`,
a few disks being replaced) and gives the specs the keys that release added
(17.2 on: per-path and per-spec crush_device_class; 19.2 on: tpm2)
and some disks an OSD of the very spec (so that 18.2's `limit` and 20.2's
walk past it are exercised). --cases judges the hand-written cases instead
of random ones, their inventories rewritten so.

Each row carries the oracle's simulated `ceph-volume lvm batch --report`
(`osds`), with two changes that make it what ceph-volume itself would answer
to cephadm's command line (see `as_on_the_command_line`), and with
ceph-volume's own error message where it exits 1 (`message`).
"""
import copy
import json
import os
import random
import sys

import yaml


def mutate(rng, doc):
    """One random perturbation of a spec document (a dict)."""
    spec = doc.get('spec', doc)
    sel_keys = [k for k in ('data_devices', 'db_devices', 'wal_devices') if k in spec]
    choice = rng.randrange(14)
    values = [True, False, 0, 1, 2, -1, '0', '1', 'true', 'false', '', 'x', None, 2.5,
              [], {}, ['/dev/sdb'], '2tb:', '1.5TB:', '10TiB:', ':2TB', '500GB:', '4TB', 'OR', 'or', 'xor']
    if choice == 0 and sel_keys:
        sel = spec[rng.choice(sel_keys)]
        if isinstance(sel, dict):
            sel[rng.choice(['size', 'model', 'vendor', 'rotational', 'limit', 'all', 'paths', 'bogus'])] = rng.choice(values)
    elif choice == 1:
        spec[rng.choice(['encrypted', 'osds_per_device', 'objectstore', 'filter_logic', 'method',
                         'block_db_size', 'crush_device_class', 'unmanaged', 'data_allocate_fraction',
                         'db_slots', 'journal_size'])] = rng.choice(values + ['bluestore', 'blue', 'lvm', 'raw', 'filestore'])
    elif choice == 2:
        doc['placement'] = rng.choice([{}, None, {'host_pattern': ''}, {'label': ''}, {'hosts': 'r1-osd0000'},
                                       {'host_pattern': 5}, {'hosts': ['r1-osd0000'], 'label': 'hdd'},
                                       {'count': 2}, {'label': 'osd', 'host_pattern': 'r2*'},
                                       {'hosts': ['bad_name']}, {'hosts': ['r1-osd0000:10.0.0.0/8']}])
    elif choice == 3 and sel_keys:
        spec[rng.choice(sel_keys)] = rng.choice([{}, None, [], 'all', {'all': True}, {'limit': 3}])
    elif choice == 4:
        doc.pop(rng.choice(['service_type', 'service_id', 'placement']), None)
    elif choice == 5:
        doc[rng.choice(['config', 'networks', 'count', 'status', 'service_name', 'unknown'])] = rng.choice(
            ['osd.x', {'a': 'b'}, ['10.0.0.0/8'], 3, '', None])
    elif choice == 6:
        doc['service_id'] = rng.choice(['a b', 'ok_id', 12, '', None, 'x.y-z'])
    elif choice == 7 and 'spec' in doc:
        doc['spec'] = rng.choice([None, {}, [], doc['spec']])
    elif choice == 8:
        spec['db_devices'] = {'all': True}
    elif choice == 9 and sel_keys:
        sel = spec[rng.choice(sel_keys)]
        if isinstance(sel, dict):
            sel.clear()
            sel['paths'] = rng.choice([['/dev/sdb', '/dev/sdc'], '/dev/sdb', [], None, [5]])
            if rng.random() < 0.3:
                sel['rotational'] = 1
    elif choice == 10:
        spec['method'] = 'raw'
    elif choice == 11:
        spec['data_devices'] = {'rotational': 1, 'limit': rng.choice([1, 2, 0, '2', -1, 2.0, True])}
    elif choice == 12:
        spec['filter_logic'] = rng.choice(['OR', 'AND', 'or', 1])
        spec['data_devices'] = {'rotational': rng.choice([0, 1]), 'model': rng.choice(['ST', 'Samsung', 'INTEL'])}
    return doc


class ErrorLog:
    """Stands in for ceph-volume's terminal logger: keeps what it logs as an
    error, which is the only explanation ceph-volume gives before `exit(1)`."""

    def __init__(self):
        self.errors = []

    def error(self, msg, *a, **k):
        self.errors.append(str(msg))

    def __getattr__(self, name):
        return lambda *a, **k: None


def as_on_the_command_line(preview):
    """Wraps the oracle's simulate_batch. ceph-volume reads cephadm's command
    line through argparse, so a quoted `osds_per_device: '2'` arrives as the
    number 2, and a block size that `Size.parse` cannot read ends the run
    with argparse's usage error (the oracle parses it outside its guard and
    would report the whole spec invalid instead)."""
    batch, disk = preview._load_batch()
    log = ErrorLog()
    batch.mlogger = log
    simulate = preview.simulate_batch

    def run(spec, ds, inv_by_path, osd_ids):
        if spec.method != 'raw':
            # cephadm puts --block-wal-size before --block-db-size; argparse reads them in that order.
            for flag, value in (('--block-wal-size', spec.block_wal_size), ('--block-db-size', spec.block_db_size)):
                if not value:
                    continue
                try:
                    disk.Size.parse(str(value))
                except Exception:
                    return {'error': 'ceph-volume batch would exit(2)',
                            'message': "argument {}: invalid parse value: '{}'".format(flag, value)}
            if isinstance(spec.osds_per_device, str):
                spec = copy.copy(spec)
                spec.osds_per_device = int(spec.osds_per_device)
        del log.errors[:]
        out = simulate(spec, ds, inv_by_path, osd_ids)
        if isinstance(out, dict) and log.errors:
            out['message'] = log.errors[-1]
        return out
    return run


def as_written_by(release, inv, rng):
    """The inventory as RELEASE's ceph-volume reports it (gen.py writes 16.2's)."""
    if release not in ('squid', 'tentacle'):
        return inv
    for devs in inv['hosts'].values():
        for d in devs:
            d['ceph_device_lvm'] = d.pop('ceph_device', False)
            d['being_replaced'] = False
            if rng is not None and rng.random() < 0.04:
                d['being_replaced'] = True
                d['available'] = False
                d['rejected_reasons'] = sorted(set(d['rejected_reasons']) | {'Is being replaced'})
    return inv


def with_release_keys(rng, docs, inv, release):
    """Keys RELEASE added to the spec, and disks with an OSD of the spec itself."""
    for d in docs:
        spec = d.get('spec', d) if isinstance(d, dict) else None
        if not isinstance(spec, dict):  # a perturbed document
            continue
        data = spec.get('data_devices')
        if isinstance(data, dict) and isinstance(data.get('paths'), list) and data['paths'] and rng.random() < 0.6:
            classes = ['hdd', 'ssd', 'nvme', 'fast']
            data['paths'] = [{'path': p, 'crush_device_class': rng.choice(classes)} if rng.random() < 0.7 else p
                             for p in data['paths']]
        elif rng.random() < 0.1:
            spec['crush_device_class'] = rng.choice(['hdd', 'ssd'])
        if release in ('squid', 'tentacle') and rng.random() < 0.1:
            spec['encrypted'] = True
            spec['tpm2'] = True
    ids = [d['service_id'] for d in docs if isinstance(d, dict) and isinstance(d.get('service_id'), str)]
    if ids and rng.random() < 0.6:
        sid = rng.choice(ids)
        per_host = inv.setdefault('existing_daemons', {}).setdefault(sid, {})
        for host, devs in inv['hosts'].items():
            for dev in devs:
                for lv in dev.get('lvs') or []:
                    if isinstance(lv, dict) and lv.get('type') == 'block' and rng.random() < 0.5:
                        lv['osdspec_affinity'] = sid
                        per_host[host] = per_host.get(host, 0) + 1


def judge_cases(preview, cases_dir, out_dir, release):
    for name in sorted(os.listdir(cases_dir)):
        src = os.path.join(cases_dir, name)
        if not os.path.isdir(src):
            continue
        with open(os.path.join(src, 'spec.yaml')) as f:
            text = f.read()
        with open(os.path.join(src, 'inventory.json')) as f:
            inv = as_written_by(release, json.load(f), None)
        write_case(os.path.join(out_dir, name), text, inv, judge(preview, text, inv))


def judge(preview, text, inv):
    try:
        return preview.run(text, inv, simulate=True)
    except Exception as e:  # the oracle itself crashed: keep the case, mark it
        return {'oracle_crash': repr(e)}


def write_case(d, text, inv, expected):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, 'spec.yaml'), 'w') as f:
        f.write(text)
    with open(os.path.join(d, 'inventory.json'), 'w') as f:
        json.dump(inv, f)
    with open(os.path.join(d, 'expected.json'), 'w') as f:
        json.dump(expected, f)


def main():
    argv = sys.argv[1:]
    release = 'pacific'
    if '--release' in argv:
        release = argv[argv.index('--release') + 1]
    oracle_dir = argv[0]
    sys.path.insert(0, oracle_dir)
    import preview
    if release != 'pacific':
        preview.reexec_for_release(argv, script=os.path.abspath(__file__))
    preview.simulate_batch = as_on_the_command_line(preview)
    out_dir = argv[1]
    os.makedirs(out_dir, exist_ok=True)
    if '--cases' in argv:
        judge_cases(preview, argv[argv.index('--cases') + 1], out_dir, release)
        return 0
    count, seed = int(argv[2]), int(argv[3])
    do_mutate = '--mutate' in argv
    import gen
    import gen_spec
    rng = random.Random(seed)
    for n in range(count):
        s = rng.randrange(1 << 30)
        hosts = rng.choice([1, 2, 3, 5, 8, 13, 21])
        per = rng.choice([2, 4, 6, 12, 24, 30])
        inv = gen.gen(s, hosts, per)
        if rng.random() < 0.4:
            names = list(inv['hosts'])
            inv['existing_daemons'] = {
                'spec{}_{}'.format(i, j): {h: rng.randint(0, 4) for h in rng.sample(names, max(1, len(names) // 2))}
                for i in range(3) for j in range(0, 1000, 97)}
        if rng.random() < 0.3:
            names = list(inv['hosts'])
            inv['osd_id_claims'] = {h.split('.')[0]: [str(rng.randint(0, 99)) for _ in range(rng.randint(1, 3))]
                                    for h in rng.sample(names, max(1, len(names) // 3))}
        docs = []
        srng = random.Random(s)
        for i in range(rng.randint(1, 4)):
            d = gen_spec.one(srng, i)
            if do_mutate and rng.random() < 0.85:
                d = mutate(rng, d)
            docs.append(d)
        if release != 'pacific':
            # Its own stream: the 16.2 cases stay what they were.
            rrng = random.Random(s ^ 0x5eed)
            with_release_keys(rrng, docs, inv, release)
            as_written_by(release, inv, rrng)
        text = yaml.safe_dump_all(docs, sort_keys=False)
        write_case(os.path.join(out_dir, '{:04d}'.format(n)), text, inv, judge(preview, text, inv))
    return 0


if __name__ == '__main__':
    sys.exit(main())
