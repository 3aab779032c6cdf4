use futures::executor::block_on;

use super::{device_json, SimCluster};
use crate::agent_client::HostAgents;
use crate::wire::agent::{CephVolumeRequest, CommandResult};
use crate::wire::api::hosts::Host;

fn host() -> Host {
    Host::unpolled("h1", "sim:1")
}

fn cluster() -> SimCluster {
    let devices = vec![
        device_json("/dev/nvme0n1", "0", 375083606016.0, "INTEL SSDPED1K375GA", "nvme0"),
        device_json("/dev/sdb", "1", 4000787030016.0, "ST4000NM0025", "hdd-b"),
        device_json("/dev/sdc", "1", 4000787030016.0, "ST4000NM0025", "hdd-c"),
    ];
    SimCluster::new(vec![], vec![("h1".into(), devices)], 1.0, 1.0)
}

fn run(sim: &SimCluster, command: &str) -> CommandResult {
    let request = CephVolumeRequest {
        args: command.split(' ').map(str::to_string).collect(),
        osdspec_affinity: Some("a".into()),
    };
    block_on(sim.ceph_volume(&host(), &request)).expect("reachable")
}

const WITH_DB: &str = "lvm batch --no-auto /dev/sdb /dev/sdc --db-devices /dev/nvme0n1 --yes --no-systemd";

#[test]
fn a_batch_ceph_volume_refuses_fails_and_makes_nothing() {
    let sim = cluster();
    let r = run(&sim, &WITH_DB.replace(" --yes", " --block-db-size 500G --yes"));
    assert_eq!(r.exit_code, 1, "{r:?}");
    assert!(
        r.stderr.contains("500.00 GB was requested for block_db_size, but only 174.66 GB can be fulfilled"),
        "{r:?}"
    );
    assert!(sim.osds().is_empty());
    let r = run(&sim, "lvm batch --no-auto /dev/sdb /dev/nvme0n1 --db-devices /dev/nvme0n1 --yes --no-systemd");
    assert!(r.exit_code == 1 && r.stderr.contains("Device lists are not disjoint"), "{r:?}");
}

#[test]
fn a_batch_makes_the_planned_osds_and_its_db_volumes_show() {
    let sim = cluster();
    let r = run(&sim, WITH_DB);
    assert_eq!(r.exit_code, 0, "{r:?}");
    let mut made: Vec<String> = sim.osds().into_iter().map(|o| o.device).collect();
    made.sort();
    assert_eq!(made, ["/dev/sdb", "/dev/sdc"]);
    let inv = block_on(sim.inventory(&host())).expect("reachable");
    let nvme = inv.devices.iter().find(|d| d["path"] == "/dev/nvme0n1").expect("listed");
    assert_eq!(nvme["lvs"].as_array().map(Vec::len), Some(2), "{nvme}");
    // The same command again finds the disks used: ceph-volume makes nothing.
    assert_eq!(run(&sim, WITH_DB).exit_code, 0);
    assert_eq!(sim.osds().len(), 2);
}
