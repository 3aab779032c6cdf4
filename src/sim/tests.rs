use futures::executor::block_on;

use super::{device_json, SimCluster};
use crate::agent_client::HostAgents;
use crate::store::ManagedHost;
use crate::wire::agent::{CephVolumeRequest, CommandResult};

fn host() -> ManagedHost {
    ManagedHost::unpolled("h1", "sim:1")
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
    let Ok(crate::agent_client::InventoryAnswer::Fresh(inv)) = block_on(sim.inventory(&host(), None)) else {
        panic!("reachable, and asked without an ETag")
    };
    let devices: Vec<serde_json::Value> = serde_json::from_str(inv.devices.get()).unwrap();
    let nvme = devices.iter().find(|d| d["path"] == "/dev/nvme0n1").expect("listed");
    assert_eq!(nvme["lvs"].as_array().map(Vec::len), Some(2), "{nvme}");
    // The same command again finds the disks used: ceph-volume makes nothing.
    assert_eq!(run(&sim, WITH_DB).exit_code, 0);
    assert_eq!(sim.osds().len(), 2);
}

mod health {
    use std::time::Duration;

    use futures::executor::block_on;

    use crate::ceph::CephCluster;

    fn field_report() -> crate::sim::SimCluster {
        crate::sim::field_report_cluster(20.0, 1.0, 1.0).manual_clock()
    }

    #[test]
    fn an_idle_cluster_is_ok_and_all_clean() {
        let h = block_on(field_report().status()).unwrap();
        assert_eq!(h.status, "HEALTH_OK");
        assert!(h.checks.is_empty());
        assert_eq!(h.pgs_not_clean(), 0);
        assert_eq!(h.pg_states, [("active+clean".to_string(), h.pgs)]);
        assert!(h.throughput.recovery_bytes_per_sec.is_none());
    }

    #[test]
    fn a_drain_backfills_misplaced_objects_and_stays_ok() {
        let sim = field_report();
        block_on(sim.reweight(8, 0.0)).unwrap();
        sim.advance(Duration::from_secs(5));
        let h = block_on(sim.status()).unwrap();
        assert_eq!(h.status, "HEALTH_OK", "misplaced objects raise no check since Mimic");
        let state = |name: &str| h.pg_states.iter().find(|(s, _)| s == name).map(|(_, n)| *n);
        assert_eq!(state("active+remapped+backfilling"), Some(1));
        assert_eq!(state("active+remapped+backfill_wait"), Some(14), "15 of osd.8's 20 PGs left after 5 s at 1 PG/s");
        // 10 OSDs of 20 PGs at size 2 are 100 PGs of 64 objects, 12800 copies; one copy of 15 PGs moves.
        assert_eq!(h.object_lines(), ["960/12800 objects misplaced (7.500%)"]);
        assert!(h.throughput.recovery_bytes_per_sec.is_some_and(|r| r > 0.0));
    }

    #[test]
    fn a_down_osd_with_data_is_a_warning_in_cephs_words() {
        let sim = field_report();
        sim.inner.lock().unwrap().osds.iter_mut().find(|o| o.id == 15).unwrap().up = false;
        let h = block_on(sim.status()).unwrap();
        assert_eq!(h.status, "HEALTH_WARN");
        let messages: Vec<&str> = h.checks.iter().map(|c| c.message.as_str()).collect();
        assert_eq!(messages[0], "1 osds down");
        assert!(
            messages[1].starts_with("Degraded data redundancy: 1280/12800 objects degraded (10.000%), 20 pgs degraded"),
            "{messages:?}"
        );
    }
}
