//! The field report, end to end, on real-kernel hosts: three qemu VMs
//! (testbed/real-hosts) with LVM, dm-crypt, udev and systemd, Ceph 16.2
//! from Debian's packages, osdkeeper's agent on each and its daemon on the
//! first, installed by deploy/install.sh and run by their systemd units.
//!
//! 1. Each host has two "HDDs" and one "SSD"; a spec with `db_devices`
//!    makes two LVM OSDs per host with their DBs on the shared SSD.
//! 2. Data is written and `bench cluster` stores "before".
//! 3. `osd rm` of one HDD OSD per host with `--zap`: drained, purged, its
//!    block VG and only its DB LV removed, its `ceph-volume@` unit disabled.
//! 4. The zapped HDDs are pulled and new SSDs pushed in; the field report's
//!    spec (`rotational: 0`, `encrypted: true`) is dry-run, then applied:
//!    dm-crypt LVM OSDs, up and in under their hosts.
//! 5. One host reboots: its OSDs come back by themselves.
//! 6. `bench cluster` "after", and `bench compare` shows both.
//!
//! Every step is checked from outside osdkeeper (ceph, lsblk, dmsetup,
//! blkid, lvs, systemctl on the hosts), and timed (`timeline.txt`).

mod common;

use std::time::Duration;

use common::field::*;
use common::real_hosts::{RealCluster, Timeline};
use common::{repo, wait_for_or};

#[test]
fn the_field_report_on_real_hosts() {
    let run = run_dir("field-report");
    let mut time = Timeline::new(&run);
    let cluster = RealCluster::up(&run);
    time.step("3 hosts loaded from their prepared states, the mon and mgr up");

    let pki = install_agents(&cluster);
    let _daemon = start_daemon(&cluster, &run, &pki);
    let op = Operator { cluster: &cluster };
    time.step("agents installed by deploy/install.sh and started by their units; the daemon up");

    add_hosts(&op);
    let disks = wait_disks(&op, &["HDD1", "HDD2", "SSD1"]);
    eprintln!("{}", op.ok(&["device", "ls"]));
    time.step("3 hosts added, their inventories in");

    // 1. The "before" cluster: two HDD OSDs per host, DBs on the shared SSD.
    let hdd_spec = run.join("hdd-with-db.yaml");
    write(
        &hdd_spec,
        "service_type: osd\nservice_id: hdd_with_db\nplacement:\n  host_pattern: 'f5-422-*'\n\
         spec:\n  data_devices:\n    rotational: 1\n  db_devices:\n    rotational: 0\n",
    );
    let dry = op.json(&["apply", "-i", hdd_spec.to_str().unwrap(), "--dry-run"]);
    for host in HOSTS {
        let row = preview_row(&dry, host);
        let d = &disks[host];
        let mut hdds = vec![d["HDD1"].clone(), d["HDD2"].clone()];
        hdds.sort();
        assert_eq!(row["data"], serde_json::json!(hdds), "{row}");
        assert_eq!(row["db"], serde_json::json!([d["SSD1"]]), "{row}");
    }
    time.step("dry-run of the HDD spec: both HDDs of each host with their DBs on its SSD");
    op.ok(&["apply", "-i", hdd_spec.to_str().unwrap()]);
    let tree = wait_osds(&cluster, &op, 6, Duration::from_secs(1500));
    for host in HOSTS {
        assert_eq!(osds_under(&tree, host).len(), 2, "two OSDs under {host}: {tree}");
    }
    time.step("6 LVM OSDs up and in, two per host, DBs on the shared SSD");
    for host in HOSTS {
        let lsblk = cluster.sh_ok(host, "lsblk -o NAME,SIZE,TYPE,FSTYPE,ROTA");
        eprintln!("{host} before:\n{lsblk}");
        std::fs::write(run.join(format!("lsblk-{host}-before.txt")), &lsblk).unwrap();
        let db_lvs = cluster.sh_ok(host, "lvs --noheadings -o lv_name,devices | grep osd-db | wc -l");
        assert_eq!(db_lvs.trim(), "2", "two DB LVs on {host}'s SSD:\n{lsblk}");
    }
    for id in osd_ids(&tree) {
        let meta = cluster.admin_ceph(&["osd", "metadata", &id.to_string()]);
        assert_eq!(meta["bluefs_dedicated_db"], "1", "osd.{id} has its DB apart: {meta}");
        let host = meta["hostname"].as_str().unwrap();
        let ssd = disks[host]["SSD1"].trim_start_matches("/dev/");
        assert_eq!(meta["bluefs_db_devices"], ssd, "osd.{id}'s DB is on the SSD: {meta}");
        assert_eq!(meta["bluestore_bdev_type"], "hdd", "osd.{id}: {meta}");
    }
    for host in HOSTS {
        let units = lvm_units(&cluster, host, "*");
        assert_eq!(units.len(), 2, "two enabled ceph-volume@lvm units on {host}: {units:?}");
    }

    // 2. Data, and the "before" benchmark.
    admin(
        &cluster,
        "ceph osd pool create data 32 && ceph osd pool application enable data rados && \
         rados -p data bench 20 write -b 1048576 -t 4 --no-cleanup >/dev/null",
    );
    wait_health_ok(&cluster, Duration::from_secs(600));
    time.step("data written (rados bench 20 s into pool data), HEALTH_OK");
    let before = bench(&op, "before");
    time.step("bench cluster \"before\"");

    // 3. One HDD OSD per host out, zapped: the one on HDD1. The last
    // host's is destroyed for a replacement (`--replace`): its id waits
    // for the SSD that comes in its place.
    let victims: Vec<u64> = HOSTS.iter().map(|h| osd_on(&cluster, &tree, h, &disks[*h]["HDD1"])).collect();
    let keepers: Vec<u64> = HOSTS.iter().map(|h| osd_on(&cluster, &tree, h, &disks[*h]["HDD2"])).collect();
    let replaced = HOSTS.len() - 1;
    let ids: Vec<String> = victims.iter().map(u64::to_string).collect();
    let mut rm: Vec<&str> = vec!["osd", "rm"];
    rm.extend(ids[..replaced].iter().map(String::as_str));
    rm.push("--zap");
    let rm_replace = ["osd", "rm", ids[replaced].as_str(), "--zap", "--replace"];
    let mut preview = String::new();
    for command in [&rm[..], &rm_replace[..]] {
        let mut dry = command.to_vec();
        dry.push("--dry-run");
        preview.push_str(&op.ok(&dry));
    }
    eprintln!("{preview}");
    for (i, host) in HOSTS.iter().enumerate() {
        let ssd = &disks[*host]["SSD1"];
        let says = format!("zaps osd.{}'s DB LV on {ssd}; osd.{}'s DB stays", victims[i], keepers[i]);
        assert!(preview.contains(&says), "the removal preview says \"{says}\":\n{preview}");
    }
    let units_before: Vec<String> = HOSTS
        .iter()
        .zip(&victims)
        .map(|(h, id)| {
            let mut units = lvm_units(&cluster, h, &id.to_string());
            assert_eq!(units.len(), 1, "one ceph-volume@ unit of osd.{id} on {h}: {units:?}");
            units.remove(0)
        })
        .collect();
    op.ok(&rm);
    op.ok(&rm_replace);
    wait_for_or(
        "the three removals to finish",
        Duration::from_secs(3600),
        || op.ok(&["osd", "rm", "status"]).contains("No OSD remove/replace operations reported").then_some(()),
        || format!("{}\n{}", op.ok(&["osd", "rm", "status"]), op.ok(&["events", "--since", "30m"])),
    );
    let finished = op.json(&["osd", "rm", "status", "--finished"]);
    for id in &victims {
        let r = finished.as_array().unwrap().iter().find(|r| r["osd_id"].as_u64() == Some(*id)).unwrap();
        assert_eq!(r["state"], "done", "osd.{id}'s removal ended done: {r}");
    }
    time.step("osd rm of one HDD OSD per host with --zap (one --replace): drained, purged or destroyed, zapped");
    let tree = cluster.admin_ceph(&["osd", "tree"]);
    for (i, host) in HOSTS.iter().enumerate() {
        if i == replaced {
            let mut left = osds_under(&tree, host);
            left.sort_unstable();
            let mut want = vec![keepers[i], victims[i]];
            want.sort_unstable();
            assert_eq!(left, want, "osd.{} and the destroyed osd.{} under {host}: {tree}", keepers[i], victims[i]);
            let node = tree["nodes"].as_array().unwrap().iter().find(|n| n["id"].as_u64() == Some(victims[i]));
            assert_eq!(node.unwrap()["status"], "destroyed", "osd.{} is destroyed: {tree}", victims[i]);
        } else {
            assert_eq!(
                osds_under(&tree, host),
                vec![keepers[i]],
                "only osd.{} is left under {host}: {tree}",
                keepers[i]
            );
        }
        let hdd1 = &disks[*host]["HDD1"];
        let ssd = &disks[*host]["SSD1"];
        let lvs = cluster.sh_ok(host, "lvs --noheadings -o lv_name,vg_name,devices,lv_tags");
        // By the LV's name: the block LV's tags name its DB LV too (ceph.db_device=...).
        let db_lvs: Vec<&str> = lvs.lines().filter(|l| l.trim_start().starts_with("osd-db-")).collect();
        assert_eq!(db_lvs.len(), 1, "one DB LV left on {host}'s SSD:\n{lvs}");
        assert!(
            db_lvs[0].contains(&format!("ceph.osd_id={},", keepers[i])),
            "the DB LV left is osd.{}'s:\n{lvs}",
            keepers[i]
        );
        let on_hdd1 =
            |l: &str| l.split_whitespace().nth(2).is_some_and(|devices| devices.starts_with(&format!("{hdd1}(")));
        assert!(!lvs.lines().any(on_hdd1), "no LV on {hdd1}:\n{lvs}");
        let sig = cluster.sh(host, &format!("wipefs --no-act {hdd1}"));
        assert!(sig.stdout.trim().is_empty(), "{hdd1} on {host} carries no signature: {}", sig.stdout);
        let pvs = cluster.sh_ok(host, "pvs --noheadings -o pv_name");
        assert!(pvs.contains(ssd.as_str()) && !pvs.contains(hdd1.as_str()), "{host}'s PVs: {pvs}");
        let unit = &units_before[i];
        let state = cluster.sh(host, &format!("systemctl is-enabled {unit}"));
        assert_ne!(state.stdout.trim(), "enabled", "{unit} is disabled after the zap");
    }
    let lsblk = cluster.sh_ok(HOSTS[0], "lsblk -o NAME,SIZE,TYPE,FSTYPE,ROTA");
    eprintln!("{} after the zap:\n{lsblk}", HOSTS[0]);

    // 4. The HDDs out of their bays, new SSDs in; the field report's spec.
    for host in HOSTS {
        cluster.unplug(host, "hdd1");
        cluster.plug(host, "ssd2", "ssd", "20G", 4);
    }
    time.step("HDD1 pulled and SSD2 pushed in on each host");
    let disks = wait_disks(&op, &["HDD2", "SSD1", "SSD2"]);
    let spec = repo().join("specs/field-report-ssds.yaml");
    let dry = op.json(&["apply", "-i", spec.to_str().unwrap(), "--dry-run"]);
    for host in HOSTS {
        let row = preview_row(&dry, host);
        assert_eq!(row["data"], serde_json::json!([disks[host]["SSD2"]]), "only the new SSD on {host}: {row}");
        let skipped = row["skipped"].to_string();
        assert!(skipped.contains(disks[host]["SSD1"].as_str()), "the DB SSD is named as passed over: {row}");
    }
    eprintln!("{}", op.ok(&["apply", "-i", spec.to_str().unwrap(), "--dry-run"]));
    time.step("dry-run of the field report's spec: the new SSD of each host");
    op.ok(&["apply", "-i", spec.to_str().unwrap()]);
    let tree = wait_osds(&cluster, &op, 6, Duration::from_secs(1800));
    time.step("3 dm-crypt LVM OSDs on the new SSDs, up and in");
    for (i, host) in HOSTS.iter().enumerate() {
        let under = osds_under(&tree, host);
        assert_eq!(under.len(), 2, "{host} has its HDD OSD and its new SSD OSD: {tree}");
        if i == replaced {
            assert!(under.contains(&victims[i]), "the new SSD OSD on {host} took osd.{}'s id: {tree}", victims[i]);
        }
        let ssd2 = &disks[*host]["SSD2"];
        let lsblk = cluster.sh_ok(host, &format!("lsblk -nr -o TYPE,FSTYPE {ssd2}"));
        assert!(
            lsblk.contains("crypt") && lsblk.contains("crypto_LUKS"),
            "{ssd2} holds LUKS and its mapping:\n{lsblk}"
        );
        let crypt = cluster.sh_ok(host, "dmsetup table --target crypt");
        assert!(crypt.contains("aes-xts-plain64"), "a dm-crypt mapping on {host}: {crypt}");
        let inner = cluster.sh_ok(
            host,
            &format!("for m in $(lsblk -nr -o NAME,TYPE {ssd2} | awk '$2==\"crypt\"{{print $1}}'); do blkid -p -o value -s TYPE /dev/mapper/$m; done"),
        );
        assert_eq!(inner.trim(), "ceph_bluestore", "BlueStore inside the mapping on {host}");
    }
    for node in tree["nodes"].as_array().unwrap().iter().filter(|n| n["type"] == "osd") {
        let id = node["id"].as_u64().unwrap();
        if !keepers.contains(&id) {
            assert_eq!(node["device_class"], "ssd", "new osd.{id} is an SSD OSD: {node}");
        }
    }
    let lsblk_after = cluster.sh_ok(HOSTS[0], "lsblk -o NAME,SIZE,TYPE,FSTYPE,ROTA");
    eprintln!("{} after:\n{lsblk_after}", HOSTS[0]);
    std::fs::write(run.join(format!("lsblk-{}-after.txt", HOSTS[0])), &lsblk_after).unwrap();
    wait_health_ok(&cluster, Duration::from_secs(1200));
    time.step("HEALTH_OK with the new OSDs");

    // 5. A reboot: the OSDs come back by themselves. LVM's event activation
    // at boot can leave a VG inactive (Debian 12 under load: run 14 in
    // BENCHMARKS.md), which the agent repairs; here one LV is kept from
    // autoactivation so that the repair is seen on every run, not only
    // when the race is lost.
    let rebooted = HOSTS[1];
    let on_it = osds_under(&tree, rebooted);
    let keeper = keepers[1];
    let block_lv = cluster
        .sh_ok(rebooted, "lvs --noheadings --separator ';' -o lv_path,lv_tags")
        .lines()
        .find(|l| l.contains(&format!("ceph.osd_id={keeper},")) && l.contains("ceph.type=block"))
        .and_then(|l| l.trim().split(';').next().map(String::from))
        .unwrap_or_else(|| panic!("osd.{keeper}'s block LV on {rebooted}"));
    cluster.sh_ok(rebooted, &format!("lvchange --setautoactivation n {block_lv}"));
    cluster.reboot(rebooted);
    time.step(&format!("{rebooted} rebooted (ssh answers)"));
    wait_for_or(
        &format!("osd.{on_it:?} back up after {rebooted}'s reboot"),
        Duration::from_secs(900),
        || {
            let tree = cluster.admin_ceph(&["osd", "tree"]);
            let up = tree["nodes"].as_array()?.iter().filter(|n| {
                n["type"] == "osd" && on_it.contains(&n["id"].as_u64().unwrap_or(u64::MAX)) && n["status"] == "up"
            });
            (up.count() == on_it.len()).then_some(())
        },
        || {
            // What a stuck activation needs to be understood: the LVs and
            // whether LVM activated them at boot, ceph-volume's words and
            // what the agent did about them.
            let lvm = "lvs -o lv_name,vg_name,lv_attr,devices; journalctl -b --no-pager | grep -E 'lvm\\[|pvscan' | tail -30; \
                       tail -20 /var/log/ceph/ceph-volume-systemd.log; journalctl -b -u osdkeeper-agent --no-pager -o cat | tail -20";
            format!(
                "{}\n{}\n{}",
                cluster.sh(rebooted, "systemctl list-units 'ceph-*' --no-pager").stdout,
                cluster.sh(rebooted, lvm).stdout,
                cluster.console(rebooted)
            )
        },
    );
    let stuck = cluster.sh_ok(rebooted, "systemctl list-units 'ceph-volume@*' --state=activating,failed --no-legend");
    assert!(stuck.trim().is_empty(), "no ceph-volume unit of a zapped OSD left waiting: {stuck}");
    let agent_log =
        cluster.sh_ok(rebooted, "journalctl -b -u osdkeeper-agent --no-pager -o cat | grep -F 'LV' || true");
    eprintln!("the agent after the boot:\n{agent_log}");
    assert!(
        agent_log.contains(&format!("activated osd.{keeper}'s LV {block_lv}")),
        "the agent activated osd.{keeper}'s block LV, which LVM did not: {agent_log}"
    );
    cluster.sh_ok(rebooted, &format!("lvchange --setautoactivation y {block_lv}"));
    wait_health_ok(&cluster, Duration::from_secs(1200));
    time.step(&format!("{rebooted}'s OSDs back up by themselves, HEALTH_OK"));

    // 6. The "after" benchmark, and the comparison.
    let after = bench(&op, "after");
    let compare = op.ok(&["bench", "compare", &before.to_string(), &after.to_string()]);
    eprintln!("{compare}");
    assert!(compare.contains("write") && compare.contains("seq"), "{compare}");
    time.step("bench cluster \"after\", and bench compare");
    eprintln!("timeline:\n{}", std::fs::read_to_string(run.join("timeline.txt")).unwrap());
}
