#!/usr/bin/python3
"""What each way of changing a disk moves, by Ceph's own CRUSH (issue 23,
docs/design/swap.md): builds a CRUSH map of HOSTS hosts of K OSDs of
equal weight with crushtool, an osdmap with one replicated pool with
osdmaptool, and asks osdmaptool's `--test-map-pgs-dump-all` for every PG's
raw set in three maps: now (a new OSD under host0 at CRUSH weight 0), with
osd.0 drained (weight 0), and the final one (osd.0 at 0, the new OSD at
osd.0's weight). Then counts the copies each way writes:

  swap            now -> final, each copy once (the free-bay hand-over)
  drain then add  now -> drained -> final (cephadm: osd rm, then a spec)
  old -> new      osd.0's copies only (the hand-over that leaves pins)

and how many of osd.0's PGs CRUSH gives the new OSD in the final map
(the share the "fold the upmaps into weights" idea needs to be all of
them; theory for straw2: 2 / (K + 1)). Runs Ceph's tools on files only;
no cluster. Usage: bench/swap_moves.py [--hosts 4] [--k 10] [--size 3]
[--pg-bits 7]
"""
import argparse
import os
import re
import subprocess
import tempfile


def crush_text(hosts, k):
    new = hosts * k
    lines = [
        "tunable choose_local_tries 0", "tunable choose_local_fallback_tries 0",
        "tunable choose_total_tries 50", "tunable chooseleaf_descend_once 1",
        "tunable chooseleaf_vary_r 1", "tunable chooseleaf_stable 1",
        "tunable straw_calc_version 1", "tunable allowed_bucket_algs 54",
    ]
    lines += [f"device {i} osd.{i} class hdd" for i in range(new + 1)]
    lines += ["type 0 osd", "type 1 host", "type 10 root"]
    for h in range(hosts):
        items = [f"\titem osd.{i} weight 1.000" for i in range(h * k, (h + 1) * k)]
        if h == 0:
            items.append(f"\titem osd.{new} weight 0.000")
        lines.append(f"host host{h} {{\n\tid {-2 - h}\n\talg straw2\n\thash 0\n" + "\n".join(items) + "\n}")
    roots = "\n".join(f"\titem host{h} weight {k}.000" for h in range(hosts))
    lines.append(f"root default {{\n\tid -1\n\talg straw2\n\thash 0\n{roots}\n}}")
    lines.append("rule replicated_rule {\n\tid 0\n\ttype replicated\n\tmin_size 1\n\tmax_size 10\n"
                 "\tstep take default\n\tstep chooseleaf firstn 0 type host\n\tstep emit\n}")
    return "\n".join(lines) + "\n"


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def raw_sets(path):
    out = {}
    for line in run("osdmaptool", path, "--test-map-pgs-dump-all").splitlines():
        m = re.match(r"^(\d+\.[0-9a-f]+) raw \(\[([^\]]*)\]", line)
        if m:
            out[m.group(1)] = [int(x) for x in m.group(2).split(",") if x]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=4)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--size", type=int, default=3)
    ap.add_argument("--pg-bits", type=int, default=7)
    a = ap.parse_args()
    new = a.hosts * a.k
    with tempfile.TemporaryDirectory(prefix="swap-moves") as d:
        p = lambda name: os.path.join(d, name)
        with open(p("crush.txt"), "w") as f:
            f.write(crush_text(a.hosts, a.k))
        run("crushtool", "-c", p("crush.txt"), "-o", p("crush.bin"))
        run("osdmaptool", "--createsimple", str(new + 1), "--with-default-pool", "--pg-bits", str(a.pg_bits),
            f"--osd_pool_default_size={a.size}", "--clobber", p("om"))
        # Up and in first (it would lift a weight of 0 to 1), then the CRUSH map.
        run("osdmaptool", p("om"), "--mark-up-in", "--import-crush", p("crush.bin"))
        for name, adjust in [("drained", "0:0"), ("final", f"0:0,{new}:1")]:
            run("cp", p("om"), p(name))
            run("osdmaptool", p(name), "--adjust-crush-weight", adjust, "--save")
        now, drained, final = raw_sets(p("om")), raw_sets(p("drained")), raw_sets(p("final"))
    moved = lambda x, y: sum(len(set(y[pg]) - set(x[pg])) for pg in x)
    old = sum(1 for pg in now if 0 in now[pg])
    swap = moved(now, final)
    then_add = moved(now, drained) + moved(drained, final)
    cross = sum(1 for pg in now for o in set(final[pg]) - set(now[pg]) if o != new and o // a.k != 0)
    kept = sum(1 for pg in now if 0 in now[pg] and new in final[pg])
    print(f"{a.hosts} hosts x {a.k} OSDs, size {a.size}, {len(now)} PGs; osd.0 holds {old} copies")
    print(f"  swap (now -> final)        {swap:6d} copies  {swap / old:.2f} x  cross-host {cross}")
    print(f"  drain then add             {then_add:6d} copies  {then_add / old:.2f} x")
    print(f"  old -> new, pins kept      {old:6d} copies  1.00 x")
    print(f"  osd.0's PGs CRUSH gives the new OSD: {kept} ({kept / old:.2f}; 2/(K+1) = {2 / (a.k + 1):.2f})")


if __name__ == "__main__":
    main()
