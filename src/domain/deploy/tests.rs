use super::*;
use crate::domain::operation::Outcome;

const FSID: &str = "cluster-1";

fn deployment(disks: &[&str]) -> Deployment {
    Deployment::new(
        "f5-422-01".into(),
        "osd.spares".into(),
        Some("spares".into()),
        1,
        "key".into(),
        None,
        disks
            .iter()
            .map(|d| (["raw", "prepare", "--bluestore", "--data", d].map(String::from).to_vec(), vec![d.to_string()]))
            .collect(),
    )
}

fn listed(id: u32, device: &str) -> Listed {
    Listed { id, osd_fsid: format!("uuid-{id}"), cluster_fsid: FSID.into(), kind: OsdKind::Raw, device: device.into() }
}

fn seen(listing: Vec<Listed>) -> DeployObservation {
    DeployObservation { listed: Some(listing), cluster_fsid: FSID.into(), now: 1_000, ..Default::default() }
}

fn healthy(id: u32) -> (u32, InCluster) {
    (
        id,
        InCluster {
            up: true,
            is_in: true,
            crush_host: Some("f5-422-01".into()),
            device_class: Some("hdd".into()),
            destroyed: false,
        },
    )
}

#[test]
fn prepares_each_empty_disk_once_then_activates_and_starts_what_it_finds() {
    let d = deployment(&["/dev/loop6", "/dev/loop9"]);
    let s = advance(&d, &seen(vec![]));
    assert_eq!(s.effect, Some(DeployEffect::Prepare { step: 0 }));
    assert!(s.next.steps[0].sent, "written as sent before it is sent");
    let mut d = s.next;
    d.steps[0].succeeded = true;
    let s = advance(&d, &seen(vec![listed(6, "/dev/loop6")]));
    assert_eq!(s.effect, Some(DeployEffect::Prepare { step: 1 }), "the next disk; loop6 is not prepared again");
    let mut d = s.next;
    d.steps[1].succeeded = true;
    let both = seen(vec![listed(6, "/dev/loop6"), listed(9, "/dev/loop9")]);
    let s = advance(&d, &both);
    assert_eq!((s.next.phase, s.effect.clone()), (DeployPhase::Activating, Some(DeployEffect::Activate { osd: 6 })));
    assert_eq!(s.next.osds.iter().map(|o| o.id).collect::<Vec<_>>(), [6, 9]);
    let mut d = s.next;
    for o in &mut d.osds {
        o.activated = true;
    }
    let s = advance(&d, &both);
    assert_eq!((s.next.phase, s.effect), (DeployPhase::Starting, Some(DeployEffect::Start { osd: 6 })));
}

#[test]
fn after_a_crash_the_listing_decides_never_a_second_prepare() {
    // Sent, then the daemon died before the answer was recorded: the OSD is there.
    let mut d = deployment(&["/dev/loop6"]);
    d.steps[0].sent = true;
    let s = advance(&d, &seen(vec![listed(6, "/dev/loop6")]));
    assert_eq!(s.effect, Some(DeployEffect::Activate { osd: 6 }));
    // Sent, and nothing on the disk (ceph-volume rolled back, or never ran): sent again.
    let s = advance(&d, &seen(vec![]));
    assert_eq!(s.effect, Some(DeployEffect::Prepare { step: 0 }));
    // Another cluster's OSD on the disk is not ours.
    let mut foreign = listed(2, "/dev/loop6");
    foreign.cluster_fsid = "other".into();
    assert_eq!(
        advance(&deployment(&["/dev/loop6"]), &seen(vec![foreign])).effect,
        Some(DeployEffect::Prepare { step: 0 })
    );
    // No listing at all: wait, do nothing.
    let blind = DeployObservation { listed: None, ..seen(vec![]) };
    let s = advance(&deployment(&["/dev/loop6"]), &blind);
    assert_eq!(s.effect, None);
    assert!(s.waiting_on.unwrap().contains("cannot list"));
}

#[test]
fn a_running_daemon_needs_no_activation_nor_start() {
    let mut d = deployment(&["/dev/loop6"]);
    d.steps[0].succeeded = true;
    let mut obs = seen(vec![listed(6, "/dev/loop6")]);
    obs.running = vec![6];
    obs.cluster = vec![healthy(6)];
    let s = advance(&d, &obs);
    assert_eq!((s.next.phase, s.effect), (DeployPhase::Done, None));
    assert!(s.next.osds[0].verified);
}

#[test]
fn verifying_waits_for_up_in_host_and_class_then_times_out() {
    let mut d = deployment(&["/dev/loop6"]);
    d.crush_device_class = Some("ssd".into());
    d.phase = DeployPhase::Verifying;
    d.verifying_since = Some(0);
    d.osds = vec![NewOsd {
        id: 6,
        osd_fsid: "uuid-6".into(),
        kind: OsdKind::Raw,
        device: "/dev/loop6".into(),
        activated: true,
        started: true,
        verified: false,
    }];
    let mut obs = seen(vec![listed(6, "/dev/loop6")]);
    obs.cluster =
        vec![(6, InCluster { up: false, is_in: true, crush_host: None, device_class: None, destroyed: false })];
    assert_eq!(advance(&d, &obs).waiting_on.as_deref(), Some("verify: osd.6 down"));
    obs.cluster = vec![healthy(6)];
    obs.cluster[0].1.crush_host = Some("f5-422-02".into());
    assert_eq!(advance(&d, &obs).waiting_on.as_deref(), Some("verify: osd.6 under CRUSH host f5-422-02"));
    obs.cluster = vec![healthy(6)];
    assert_eq!(advance(&d, &obs).waiting_on.as_deref(), Some("verify: osd.6 device class hdd, not ssd"));
    obs.cluster[0].1.device_class = Some("ssd".into());
    assert_eq!(advance(&d, &obs).next.phase, DeployPhase::Done);
    // Still down after the timeout: this attempt fails, the next starts it again.
    obs.cluster =
        vec![(6, InCluster { up: false, is_in: true, crush_host: None, device_class: None, destroyed: false })];
    obs.now = VERIFY_TIMEOUT_MS + 1;
    let s = advance(&d, &obs);
    assert_eq!(s.next.phase, DeployPhase::Failed);
    assert!(s.next.failure.unwrap().contains("not up and in after 10 min: osd.6 down"));
    assert!(!s.next.osds[0].started, "the retry starts it again");
}

#[test]
fn failures_back_off_then_give_up_and_hold_the_disks() {
    let mut d = deployment(&["/dev/loop6"]);
    d.steps[0].sent = true;
    d.steps[0].failure = Some("exit 1: Device /dev/loop6 has a filesystem".into());
    let s = advance(&d, &seen(vec![]));
    assert_eq!(s.next.phase, DeployPhase::Failed);
    assert_eq!(s.next.retry_at, Some(1_000 + 60_000));
    assert!(s.next.failure.as_deref().unwrap().contains("has a filesystem"));
    let failed = s.next;
    // Not before the backoff.
    let early = advance(&failed, &seen(vec![]));
    assert_eq!((early.effect, early.next.attempt), (None, 1));
    // Then a new attempt, with the step unsent again.
    let mut later = seen(vec![]);
    later.now = 70_000;
    let s = advance(&failed, &later);
    assert_eq!((s.next.phase, s.next.attempt), (DeployPhase::Preparing, 2));
    assert!(!s.next.steps[0].sent && s.next.steps[0].failure.is_none());
    // The last attempt's failure gives up and holds the disks.
    let mut last = failed.clone();
    last.attempt = ATTEMPTS;
    last.phase = DeployPhase::Preparing;
    let s = advance(&last, &seen(vec![]));
    assert_eq!((s.next.phase, s.effect), (DeployPhase::GaveUp, Some(DeployEffect::HoldDisks)));
    assert!(s.next.phase.is_finished());
}

#[test]
fn a_success_that_made_nothing_is_a_failure_not_a_loop() {
    let mut d = deployment(&["/dev/loop6"]);
    d.steps[0].sent = true;
    d.steps[0].succeeded = true;
    let s = advance(&d, &seen(vec![]));
    assert_eq!(s.effect, None);
    assert_eq!(s.next.phase, DeployPhase::Failed);
    assert!(s.next.failure.unwrap().contains("succeeded, but lists no OSD of this cluster on /dev/loop6"));
}

#[test]
fn phases_round_trip_by_name() {
    for p in DeployPhase::ALL {
        assert_eq!(DeployPhase::parse(p.as_str()), Some(p));
    }
}

fn claiming(ids: &str, class: Option<&str>) -> Deployment {
    let mut command: Vec<String> =
        "lvm batch --no-auto /dev/sdb --dmcrypt --yes --no-systemd".split(' ').map(String::from).collect();
    command.push("--osd-ids".into());
    command.extend(ids.split(' ').map(String::from));
    let mut d = deployment(&[]);
    d.crush_device_class = class.map(String::from);
    d.steps =
        vec![PrepareStep { command, disks: vec!["/dev/sdb".into()], sent: false, succeeded: false, failure: None }];
    d
}

fn destroyed(id: u32, class: Option<&str>) -> (u32, InCluster) {
    let (id, mut c) = healthy(id);
    (c.up, c.is_in, c.destroyed, c.device_class) = (false, false, true, class.map(String::from));
    (id, c)
}

#[test]
fn claimed_ids_are_read_from_either_flag() {
    assert_eq!(claiming("3 12", None).steps[0].claimed_ids(), [3, 12]);
    let raw = PrepareStep {
        command: "raw prepare --bluestore --data /dev/sdb --osd-id 7 --crush-device-class ssd"
            .split(' ')
            .map(String::from)
            .collect(),
        disks: vec!["/dev/sdb".into()],
        sent: false,
        succeeded: false,
        failure: None,
    };
    assert_eq!(raw.claimed_ids(), [7]);
    assert!(deployment(&["/dev/sdb"]).steps[0].claimed_ids().is_empty());
}

#[test]
fn a_claimed_id_loses_its_old_class_before_the_prepare() {
    // osd.3 was an HDD, destroyed for a replacement; the new disk is an SSD.
    let d = claiming("3", None);
    let mut obs = seen(vec![]);
    obs.cluster = vec![destroyed(3, Some("hdd"))];
    let s = advance(&d, &obs);
    assert_eq!(s.effect, Some(DeployEffect::ClearDeviceClass { osd: 3 }));
    assert!(!s.next.steps[0].sent, "the prepare is not sent yet");
    // Gone: the prepare follows.
    obs.cluster = vec![destroyed(3, None)];
    assert_eq!(advance(&d, &obs).effect, Some(DeployEffect::Prepare { step: 0 }));
    // The spec gives the class it has: nothing to remove.
    obs.cluster = vec![destroyed(3, Some("ssd"))];
    assert_eq!(advance(&claiming("3", Some("ssd")), &obs).effect, Some(DeployEffect::Prepare { step: 0 }));
    // Another class than the spec's goes.
    let s = advance(&claiming("3", Some("fast")), &obs);
    assert_eq!(s.effect, Some(DeployEffect::ClearDeviceClass { osd: 3 }));
    // An OSD that is not destroyed (the new one, booted with its class) keeps it.
    obs.cluster = vec![healthy(3)];
    assert_eq!(advance(&d, &obs).effect, Some(DeployEffect::Prepare { step: 0 }));
}

#[test]
fn a_failed_class_removal_ends_the_attempt() {
    let d = claiming("3", None);
    let e = DeployEffect::ClearDeviceClass { osd: 3 };
    let next = apply(&d, &e, &Outcome::<String>::Failed("EACCES".into()), 5_000);
    assert_eq!(next.phase, DeployPhase::Failed);
    assert_eq!(next.failure.as_deref(), Some("cannot clear-device-class osd.3: EACCES"));
    assert_eq!(apply(&d, &e, &Outcome::<String>::Done("ok".into()), 5_000), d, "done: the next look decides");
}
